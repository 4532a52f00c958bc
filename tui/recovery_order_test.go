package tui

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/upgrade-console/upgrade-console/upgrade/recovery"
)

// burstRecovery runs every step but the last at once (each sends its
// running and its done result), then waits in the last one until the run is
// stopped: a plan of quick writes followed by a wait for the cluster.
type burstRecovery struct {
	fakeRecovery
	waiting chan struct{} // closed once the last step has begun
}

func (b *burstRecovery) run(ctx context.Context, p *recovery.Plan, progress func(recovery.StepResult)) (recovery.Report, error) {
	var rep recovery.Report
	for i, s := range p.Steps {
		progress(recovery.StepResult{Index: i, Step: s.Name, Title: s.Title, Status: recovery.StepRunning})
		if i == len(p.Steps)-1 {
			close(b.waiting)
			<-ctx.Done()
			return rep, ctx.Err()
		}
		r := recovery.StepResult{Index: i, Step: s.Name, Title: s.Title, Status: recovery.StepDone}
		progress(r)
		rep.Steps = append(rep.Steps, r)
	}
	return rep, nil
}

// stepsProbe asks the dialog, in the program's own goroutine, what it
// shows of each step.
type stepsProbe struct {
	out chan map[int]recovery.StepStatus
}

// probedDialog runs a recovery dialog as the App does, its commands
// guarded, and answers stepsProbe.
type probedDialog struct{ d *recoveryDialog }

func (m probedDialog) Init() tea.Cmd {
	return guard(m.d.runCmd())
}

func (m probedDialog) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if p, ok := msg.(stepsProbe); ok {
		shown := map[int]recovery.StepStatus{}
		for i, r := range m.d.steps {
			shown[i] = r.Status
		}
		p.out <- shown
		return m, nil
	}
	_, cmd := m.d.Update(msg)
	return m, guard(cmd)
}

func (m probedDialog) View() tea.View { return tea.NewView("") }

// The steps' progress reaches the dialog in the order the run reported it,
// in the real Bubble Tea runtime: a step's "done" overtaken by its "running"
// showed a finished write as still running (and since when) for as long as
// the wait step after it took, minutes.
func TestRecoveryStepProgressKeepsItsOrder(t *testing.T) {
	const steps = 12
	for round := range 60 {
		p := &recovery.Plan{Action: recovery.ActionEtcdRollback, Cluster: "mgmt", Title: "burst"}
		for i := range steps {
			p.Steps = append(p.Steps, recovery.Step{Name: fmt.Sprintf("s%d", i), Title: fmt.Sprintf("step %d", i)})
		}
		b := &burstRecovery{waiting: make(chan struct{})}
		d := newRecoveryDialog(RecoveryOptions{backend: b}, []recovery.Offer{{Action: recovery.ActionEtcdRollback}})
		d.plan, d.stage = p, recRunning
		prog := tea.NewProgram(probedDialog{d}, tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithoutSignalHandler())
		done := make(chan error, 1)
		go func() { _, err := prog.Run(); done <- err }()
		<-b.waiting
		var shown map[int]recovery.StepStatus
		deadline := time.Now().Add(5 * time.Second)
		for {
			out := make(chan map[int]recovery.StepStatus, 1)
			prog.Send(stepsProbe{out})
			shown = <-out
			if len(shown) == steps || time.Now().After(deadline) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		// Let anything still in flight land.
		time.Sleep(20 * time.Millisecond)
		out := make(chan map[int]recovery.StepStatus, 1)
		prog.Send(stepsProbe{out})
		shown = <-out
		prog.Quit()
		<-done
		d.cancel()
		for i := range steps - 1 {
			if shown[i] != recovery.StepDone {
				t.Fatalf("round %d: step %d shows %q while the run waits in the last step; want %q (every step before it is done): %v", round, i+1, shown[i], recovery.StepDone, shown)
			}
		}
		if shown[steps-1] != recovery.StepRunning {
			t.Fatalf("round %d: the last step shows %q, want %q", round, shown[steps-1], recovery.StepRunning)
		}
	}
}
