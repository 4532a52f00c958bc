package tui

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
	"github.com/upgrade-console/upgrade-console/upgrade"
	"github.com/upgrade-console/upgrade-console/upgrade/recovery"
)

// fakeRecovery stands for the cluster: the plans, dry runs and runs are
// exercised against a real API server in package recovery.
type fakeRecovery struct {
	p        *recovery.Plan
	planErr  error
	dryRuns  int
	runs     int
	failStep int   // 1-based; 0: none
	failErr  error // the failed step's error (errors.New("boom") when nil)
	// planFor, when set, answers the plan instead of p and planErr.
	planFor func(recovery.Offer) (*recovery.Plan, error)
	offers  []recovery.Offer // the offers planned, in order
	copies  []string
	passed  []recovery.PassedCopy
	// notConfirmedN counts the plans recorded as not confirmed, the last
	// one for notConfirmedWhy.
	notConfirmedN   int
	notConfirmedWhy string
	// dryStatus, when set, is every step's dry-run status.
	dryStatus recovery.StepStatus
	// failure is the node failure a node retry's plan shows.
	failure *recovery.NodeFailure
	// hold, when set, makes the run wait in its first step until its
	// context ends (a wait step), as the real one does.
	hold bool
	// returned is set as run returns: read after the run's end is known
	// (the dialog's settle), not raced with it.
	returned atomic.Bool
}

func (f *fakeRecovery) plan(_ context.Context, o recovery.Offer) (*recovery.Plan, *recovery.NodeFailure, error) {
	f.offers = append(f.offers, o)
	if f.planFor != nil {
		p, err := f.planFor(o)
		return p, f.failure, err
	}
	return f.p, f.failure, f.planErr
}

func (f *fakeRecovery) snapshotCopies(context.Context) (recovery.LocalCopies, error) {
	return recovery.LocalCopies{Paths: f.copies, Passed: f.passed}, nil
}

func (f *fakeRecovery) notConfirmed(_ context.Context, _ *recovery.Plan, why string) error {
	f.notConfirmedN++
	f.notConfirmedWhy = why
	return nil
}

func (f *fakeRecovery) dryRun(_ context.Context, p *recovery.Plan) (recovery.Report, error) {
	f.dryRuns++
	rep := recovery.Report{DryRun: true}
	for i, s := range p.Steps {
		st := recovery.StepDryRunOK
		if f.dryStatus != "" {
			st = f.dryStatus
		}
		rep.Steps = append(rep.Steps, recovery.StepResult{Index: i, Step: s.Name, Object: s.Object, Status: st})
	}
	return rep, nil
}

func (f *fakeRecovery) run(ctx context.Context, p *recovery.Plan, progress func(recovery.StepResult)) (recovery.Report, error) {
	f.runs++
	var rep recovery.Report
	for i, s := range p.Steps {
		progress(recovery.StepResult{Index: i, Step: s.Name, Title: s.Title, Status: recovery.StepRunning})
		if f.hold {
			<-ctx.Done()
			r := recovery.StepResult{Index: i, Step: s.Name, Title: s.Title, Status: recovery.StepFailed, Err: fmt.Errorf("interrupted: %w", ctx.Err())}
			f.returned.Store(true)
			return recovery.Report{Steps: []recovery.StepResult{r}}, r.Err
		}
		r := recovery.StepResult{Index: i, Step: s.Name, Title: s.Title, Status: recovery.StepDone, Detail: "ok " + s.Name}
		if i+1 == f.failStep {
			r.Status, r.Err = recovery.StepFailed, f.failErr
			if r.Err == nil {
				r.Err = errors.New("boom")
			}
		}
		progress(r)
		rep.Steps = append(rep.Steps, r)
		if r.Err != nil {
			return rep, r.Err
		}
	}
	rep.Closing = []string{"etcd ready on the old version", "resume with: upgrade-console lock clear paused --cluster mgmt"}
	return rep, nil
}

func stuckEtcdState(now time.Time) *model.ClusterState {
	m := func(name string, age time.Duration, ready bool) *model.Machine {
		return &model.Machine{Meta: model.Meta{Name: name, CreationTimestamp: now.Add(-age)}, Role: model.RoleEtcd, Owned: true, EtcdReady: ready}
	}
	return &model.ClusterState{
		Cluster: &model.EKSACluster{Meta: model.Meta{Name: "mgmt"}},
		Etcd: &model.EtcdCluster{Meta: model.Meta{Name: "mgmt-etcd", Annotations: map[string]string{model.AnnotationEtcdUpgrading: "true"}},
			Replicas: 3},
		Machines: model.ListOf(m("e-a", time.Hour, true), m("e-b", time.Hour, true), m("e-c", time.Hour, true), m("e-new", 20*time.Minute, false)),
	}
}

// drive runs a command and feeds every message it yields back to the screen
// (a dialog, the plan screen), the way the Bubble Tea runtime would, depth
// first (sequentially here).
func drive(t *testing.T, s interface {
	Update(tea.Msg) (Screen, tea.Cmd)
}, cmd tea.Cmd) {
	t.Helper()
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			drive(t, s, c)
		}
	default:
		_, next := s.Update(msg)
		drive(t, s, next)
	}
}

func press(t *testing.T, d *recoveryDialog, keys ...tea.KeyPressMsg) {
	t.Helper()
	for _, k := range keys {
		_, cmd := d.Update(k)
		drive(t, d, cmd)
	}
}

func typeText(s string) []tea.KeyPressMsg {
	var out []tea.KeyPressMsg
	for _, r := range s {
		out = append(out, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	return out
}

var enter = tea.KeyPressMsg{Code: tea.KeyEnter}

// testDialog is a dialog on a fake backend; its cursor does not blink, so no
// command waits on a timer.
func testDialog(o RecoveryOptions, f *fakeRecovery) *recoveryDialog {
	d := newRecoveryDialog(o, []recovery.Offer{{Action: recovery.ActionEtcdRollback, Title: "Roll back the etcd rollout"}})
	d.backend = f
	noBlink(d)
	d.SetSize(100, 40)
	return d
}

// setMono gives d the monochrome theme, its input's cursor still not
// blinking: a theme set anew makes it blink, and each key's commands then
// waited on the blink's timer (30 s for one test of 28 keys at 4 sizes).
func setMono(d *recoveryDialog) {
	d.setTheme(ptrTheme(themes.NewMono()))
	noBlink(d)
}

func noBlink(d *recoveryDialog) {
	ts := d.input.Styles()
	ts.Cursor.Blink = false
	d.input.SetStyles(ts)
}

func planFixture() *recovery.Plan {
	return &recovery.Plan{
		Action: recovery.ActionEtcdRollback, Cluster: "mgmt", Title: "Roll back the etcd rollout of mgmt",
		Confirm: "mgmt-etcd", ConfirmObject: "EtcdadmCluster eksa-system/mgmt-etcd",
		Preconditions: []recovery.Precondition{{Name: "new-member-not-ready", OK: true, Detail: "e-new not ready for 20m"}},
		Steps: []recovery.Step{
			{Name: "pause-eksa-reconcile", Title: "Pause EKS-A reconcile", Object: "Cluster default/mgmt", Change: `add annotation anywhere.eks.amazonaws.com/paused="true"`},
			{Name: "restore-etcd-spec", Title: "Restore the EtcdadmCluster spec", Object: "EtcdadmCluster eksa-system/mgmt-etcd", Change: "spec.etcdadmConfigSpec.cloudInitConfig.version: 3.5.16 → 3.5.15"},
		},
	}
}

func TestRecoveryActionOnlyWhenOffered(t *testing.T) {
	now := time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC)
	a := RecoveryAction(RecoveryOptions{Now: func() time.Time { return now }})
	if !a.Dangerous {
		t.Fatal("the recovery action must be dangerous (unbound in read-only mode)")
	}
	healthy := stuckEtcdState(now)
	healthy.Machines = model.ListOf(healthy.Machines.Slice()[:3]...)
	healthy.Etcd.Ready = true
	healthy.Etcd.Annotations = nil
	if cmd := a.Run(healthy); cmd != nil {
		t.Fatal("R opens a menu although nothing is offered")
	}
	cmd := a.Run(stuckEtcdState(now))
	if cmd == nil {
		t.Fatal("R does nothing although the etcd rollback is offered")
	}
	open, ok := cmd().(OpenDialogMsg)
	if !ok {
		t.Fatalf("R yields %T, want OpenDialogMsg", cmd())
	}
	d := open.Dialog.(*recoveryDialog)
	d.SetSize(100, 40)
	if v := ansi.Strip(d.View()); !strings.Contains(v, "Roll back the etcd rollout") || !strings.Contains(v, "e-new not ready since its creation at "+now.Add(-20*time.Minute).UTC().Format("15:04:05 UTC")) {
		t.Errorf("menu:\n%s", v)
	}
}

// ctrl+c during a run quit the App at once: the run's goroutine died with
// the process, with no end in the audit log and the lock held. It now stops
// the run, which records where it stopped, and keeps the dialog open.
func TestCtrlCStopsARecoveryRunInsteadOfQuitting(t *testing.T) {
	f := &fakeRecovery{p: planFixture(), hold: true}
	d := testDialog(RecoveryOptions{}, f)
	press(t, d, enter)
	press(t, d, enter)
	press(t, d, typeText("mgmt-etcd")...)
	_, cmd := d.Update(enter)
	if d.Stage() != "running" {
		t.Fatalf("stage %s, want running", d.Stage())
	}
	batch, ok := cmd().(tea.BatchMsg)
	if !ok || len(batch) != 2 {
		t.Fatalf("the run's command yields %T, want the run and its progress", cmd())
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- batch[0]() }()
	if step, ok := batch[1]().(recStepMsg); ok {
		d.Update(step)
	}
	if v := ansi.Strip(d.View()); !strings.Contains(v, "ctrl+c stop") || !strings.Contains(v, "running since ") {
		t.Errorf("the running dialog does not say how to stop, or since when its step runs:\n%s", v)
	}

	a := newTestApp(Options{Theme: themes.Mono})
	a.Update(OpenDialogMsg{Dialog: d})
	_, quit := a.Update(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	if quit != nil {
		if _, isQuit := quit().(tea.QuitMsg); isQuit {
			t.Fatal("ctrl+c quit under a running recovery action")
		}
	}
	select {
	case msg := <-done:
		d.Update(msg)
	case <-time.After(10 * time.Second):
		t.Fatal("ctrl+c did not stop the run")
	}
	v := ansi.Strip(d.View())
	if d.Stage() != "done" || !strings.Contains(v, "Stopped by ctrl+c") || !strings.Contains(v, "resumable") {
		t.Errorf("stage %s after the stop:\n%s", d.Stage(), v)
	}
	// Nothing under way any more: ctrl+c quits.
	if _, quit := a.Update(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}); quit == nil {
		t.Error("ctrl+c does not quit once the run has stopped")
	}
}

// runningDialog is a dialog whose run (held in its first step until its
// context ends) has started in a goroutine; done receives the run's message.
func runningDialog(t *testing.T, f *fakeRecovery) (*recoveryDialog, <-chan tea.Msg) {
	t.Helper()
	d := testDialog(RecoveryOptions{}, f)
	press(t, d, enter)
	press(t, d, enter)
	press(t, d, typeText("mgmt-etcd")...)
	_, cmd := d.Update(enter)
	batch, ok := cmd().(tea.BatchMsg)
	if d.Stage() != "running" || !ok || len(batch) != 2 {
		t.Fatalf("stage %s, command %T: want a run under way", d.Stage(), cmd())
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- batch[0]() }()
	if step, ok := batch[1]().(recStepMsg); ok {
		d.Update(step) // the first step's start
	}
	return d, done
}

// The program ended by a signal, --timeout or --exit-on-done with a run under
// way: the process exited under it, its write and its end unrecorded and the
// lock held. The App now stops the run and waits for it once the program has
// ended; and a typed confirmation left open is recorded not confirmed.
func TestProgramEndSettlesTheRecoveryDialog(t *testing.T) {
	f := &fakeRecovery{p: planFixture(), hold: true}
	d, done := runningDialog(t, f)
	a := newTestApp(Options{Theme: themes.Mono})
	a.Update(OpenDialogMsg{Dialog: d})
	waited := false
	notes, err := a.settle(context.Background(), func() { waited = true })
	var cut *RecoveryCutError
	if !errors.As(err, &cut) || cut.Action != "etcd-rollback" || !waited || len(notes) != 0 || !strings.Contains(err.Error(), "etcd-rollback was stopped as the console ended") {
		t.Fatalf("settle with a run under way: notes %q, err %v, waited %v", notes, err, waited)
	}
	// The run has returned: its message reaches done a moment after it,
	// on the test's goroutine, so done itself would race settle.
	if !f.returned.Load() {
		t.Fatal("settle returned before the run did")
	}
	<-done

	// A run that ended on its own before the program did, its message not
	// yet delivered: said finished, not stopped.
	d, done = runningDialog(t, &fakeRecovery{p: planFixture()})
	<-done
	a = newTestApp(Options{Theme: themes.Mono})
	a.Update(OpenDialogMsg{Dialog: d})
	if notes, err := a.settle(context.Background(), nil); err != nil || len(notes) != 1 || !strings.Contains(notes[0], "etcd-rollback finished as the console ended") {
		t.Errorf("settle after the run's own end: notes %q, err %v", notes, err)
	}

	f = &fakeRecovery{p: planFixture()}
	d = testDialog(RecoveryOptions{}, f)
	press(t, d, enter)
	press(t, d, enter)
	if d.Stage() != "confirm" {
		t.Fatalf("stage %s, want confirm", d.Stage())
	}
	a = newTestApp(Options{Theme: themes.Mono})
	a.Update(OpenDialogMsg{Dialog: d})
	// Recorded, and said as an error: the command exited 0 where the
	// headless command not confirmed exits 1.
	var nc *RecoveryNotConfirmedError
	if notes, err := a.settle(context.Background(), nil); !errors.As(err, &nc) || nc.Action != "etcd-rollback" || len(notes) != 0 ||
		f.notConfirmedN != 1 || f.notConfirmedWhy != "the console ended at the typed confirmation" {
		t.Errorf("settle at the confirmation: notes %q, err %v, recorded %d %q", notes, err, f.notConfirmedN, f.notConfirmedWhy)
	}
}

// --exit-on-done's quit waits for a recovery run under way (a node retry
// that completed the upgrade still has its steps to record), then quits.
func TestQuitOnDoneWaitsForARecoveryRun(t *testing.T) {
	f := &fakeRecovery{p: planFixture(), hold: true}
	d, done := runningDialog(t, f)
	a := newTestApp(Options{Theme: themes.Mono})
	a.Update(OpenDialogMsg{Dialog: d})
	if _, cmd := a.Update(quitWhenIdleMsg{}); cmd != nil && isQuit(cmd) {
		t.Fatal("quit under a running recovery action")
	}
	d.cancel()
	_, cmd := a.Update(<-done)
	if cmd == nil || !isQuit(cmd) {
		t.Fatal("no quit once the run ended")
	}
}

// A wait step can take fifteen minutes under a dialog that covers the panes:
// esc sets the dialog aside while the run goes on (the last line says so), R
// brings it back, and the run's end brings it back by itself.
func TestARunningRecoveryDialogCanBeSetAside(t *testing.T) {
	a, d, done := runningInApp(t)
	esc := tea.KeyPressMsg{Code: tea.KeyEscape}
	_, cmd := a.Update(esc)
	if cmd == nil {
		t.Fatal("esc does nothing while the run waits")
	}
	a.Update(cmd())
	if len(a.dialogs) != 0 || a.hidden != d {
		t.Fatalf("esc did not set the dialog aside: %d dialogs, hidden %v", len(a.dialogs), a.hidden)
	}
	v := ansi.Strip(a.View().Content)
	lines := strings.Split(v, "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "etcd-rollback running: step 1 of 2") || !strings.Contains(last, "R show") {
		t.Errorf("last line %q does not say what runs and how to show it", last)
	}
	if !a.busy() {
		t.Error("a hidden run is not under way for the quit and the program's end")
	}
	a.Update(tea.KeyPressMsg{Code: 'R', Text: "R"})
	if len(a.dialogs) != 1 || a.hidden != nil {
		t.Fatal("R did not bring the dialog back")
	}
	a.Update(cmdMsg(t, a, esc))
	// q shows it too: the run is stopped by ctrl+c, not forgotten by a quit.
	if _, cmd := a.Update(tea.KeyPressMsg{Code: 'q', Text: "q"}); cmd != nil || len(a.dialogs) != 1 {
		t.Fatal("q with a run set aside did not bring it back")
	}
	a.Update(cmdMsg(t, a, esc))
	d.cancel()
	a.Update(<-done)
	if len(a.dialogs) != 1 || a.hidden != nil || d.Stage() != "done" {
		t.Errorf("the run's end did not bring its dialog back: %d dialogs, stage %s", len(a.dialogs), d.Stage())
	}
}

// While the node filter is typed, R and q are letters of it (CAPI's machine
// names hold q), not the keys that bring a run set aside back.
func TestARunSetAsideLeavesTheFilterItsLetters(t *testing.T) {
	a, d, done := runningInApp(t)
	a.Update(cmdMsg(t, a, tea.KeyPressMsg{Code: tea.KeyEscape}))
	if a.hidden != d {
		t.Fatal("esc did not set the dialog aside")
	}
	for _, k := range []rune{'/', 'q', 'R'} {
		a.Update(tea.KeyPressMsg{Code: k, Text: string(k)})
	}
	dash := a.screens[0].(*Dashboard)
	if len(a.dialogs) != 0 || a.hidden != d || !dash.filtering || dash.filter.Value() != "qR" {
		t.Errorf("filter %q (filtering %v), %d dialogs, hidden %v: want the letters typed into the filter", dash.filter.Value(), dash.filtering, len(a.dialogs), a.hidden != nil)
	}
	d.cancel()
	a.Update(<-done)
}

// runningInApp opens a dialog whose run waits, in an App at 100×30.
func runningInApp(t *testing.T) (*App, *recoveryDialog, <-chan tea.Msg) {
	t.Helper()
	d, done := runningDialog(t, &fakeRecovery{p: planFixture(), hold: true})
	a := newTestApp(Options{Theme: themes.Mono})
	a.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	a.Update(OpenDialogMsg{Dialog: d})
	return a, d, done
}

// cmdMsg sends msg to a and returns the message its command yields.
func cmdMsg(t *testing.T, a *App, msg tea.Msg) tea.Msg {
	t.Helper()
	_, cmd := a.Update(msg)
	if cmd == nil {
		t.Fatalf("%v yields no command", msg)
	}
	return cmd()
}

// isQuit says whether cmd, or a command of its batch, quits.
func isQuit(cmd tea.Cmd) bool {
	switch m := cmd().(type) {
	case tea.QuitMsg:
		return true
	case tea.BatchMsg:
		for _, c := range m {
			if c != nil && isQuit(c) {
				return true
			}
		}
	}
	return false
}

// The recovery's typed confirmation on a short terminal (40×12, 40×8): the
// name being typed and the keys stay on the screen; the dialog's top goes.
func TestRecoveryConfirmationOnAShortTerminal(t *testing.T) {
	for _, size := range [][2]int{{40, 12}, {40, 8}, {60, 10}} {
		f := &fakeRecovery{p: planFixture()}
		d := testDialog(RecoveryOptions{}, f)
		press(t, d, enter)
		press(t, d, enter)
		if d.Stage() != "confirm" {
			t.Fatalf("stage %s, want confirm", d.Stage())
		}
		press(t, d, typeText("mgmt-e")...)
		a := newTestApp(Options{Theme: themes.Mono})
		a.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		a.Update(OpenDialogMsg{Dialog: d})
		out := ansi.Strip(a.View().Content)
		if n := len(strings.Split(out, "\n")); n != size[1] {
			t.Fatalf("%dx%d: %d lines:\n%s", size[0], size[1], n, out)
		}
		if !strings.Contains(out, "> mgmt-e") || !strings.Contains(out, "esc back") {
			t.Errorf("%dx%d: the input or the keys are off the screen:\n%s", size[0], size[1], out)
		}
	}
}

// The typed confirmation's prompt wraps: cut at the width, it lost the very
// name to type, a Lease's of a cluster with a long name (79 cells) at 80
// columns.
func TestRecoveryConfirmationPromptWraps(t *testing.T) {
	long := "upgrade-console-cluster-" + strings.Repeat("c", 50) + "-long"
	p := planFixture()
	p.Confirm, p.ConfirmObject = long, "Lease eksa-system/"+long
	f := &fakeRecovery{p: p}
	d := testDialog(RecoveryOptions{}, f)
	d.SetSize(76, 24)
	press(t, d, enter)
	press(t, d, enter)
	if d.Stage() != "confirm" {
		t.Fatalf("stage %s, want confirm", d.Stage())
	}
	var joined strings.Builder
	for _, l := range strings.Split(ansi.Strip(d.View()), "\n") {
		joined.WriteString(strings.TrimSpace(strings.Trim(strings.TrimSpace(l), "│")))
	}
	// Rows joined as written: the name breaks at a hyphen, at no space.
	if !strings.Contains(joined.String(), `Type "`+long+`"`) {
		t.Errorf("the name to type is not whole in the dialog:\n%s", ansi.Strip(d.View()))
	}
	if !strings.Contains(joined.String(), "to run it:") {
		t.Errorf("the prompt's end is cut:\n%s", ansi.Strip(d.View()))
	}
}

// On a terminal just tall enough for the confirmation and one row of the
// plan, the dialog keeps its title: a floor of three plan rows pushed it
// past the screen, and the App cut its top, the title with it.
func TestRecoveryConfirmationKeepsItsTitleWhereItFits(t *testing.T) {
	f := &fakeRecovery{p: planFixture()}
	d := testDialog(RecoveryOptions{}, f)
	press(t, d, enter)
	press(t, d, enter)
	a := newTestApp(Options{Theme: themes.Mono})
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 12})
	a.Update(OpenDialogMsg{Dialog: d})
	out := ansi.Strip(a.View().Content)
	if !strings.Contains(out, "Recovery") || !strings.Contains(out, "esc back") {
		t.Errorf("the title or the keys are off the screen:\n%s", out)
	}
}

func TestRecoveryDialogPlanDryRunTypedConfirmationAndSteps(t *testing.T) {
	f := &fakeRecovery{p: planFixture()}
	d := testDialog(RecoveryOptions{}, f)

	press(t, d, enter)
	if d.Stage() != "plan" {
		t.Fatalf("stage %s after choosing, want plan", d.Stage())
	}
	v := ansi.Strip(d.View())
	for _, want := range []string{"1. Pause EKS-A reconcile", `Cluster default/mgmt: add annotation anywhere.eks.amazonaws.com/paused="true"`, "→ 3.5.15", "enter dry run"} {
		if !strings.Contains(v, want) {
			t.Errorf("plan view lacks %q:\n%s", want, v)
		}
	}

	press(t, d, enter)
	if d.Stage() != "confirm" || f.dryRuns != 1 {
		t.Fatalf("stage %s, %d dry runs; want confirm after one dry run", d.Stage(), f.dryRuns)
	}
	if v := ansi.Strip(d.View()); !strings.Contains(v, `Type "mgmt-etcd"`) || !strings.Contains(v, "[dry run ok]") {
		t.Errorf("confirm view:\n%s", v)
	}

	// Going back from the confirmation is recorded (not-confirmed), as on
	// the command line; entering it again dry-runs again.
	press(t, d, tea.KeyPressMsg{Code: tea.KeyEscape})
	if d.Stage() != "plan" || f.notConfirmedN != 1 {
		t.Fatalf("stage %s, %d not-confirmed records after esc; want plan and one", d.Stage(), f.notConfirmedN)
	}
	press(t, d, enter)
	if d.Stage() != "confirm" {
		t.Fatalf("stage %s, want confirm again", d.Stage())
	}
	// A reflexive enter or the wrong name runs nothing.
	press(t, d, enter)
	press(t, d, typeText("mgmt")...)
	press(t, d, enter)
	if f.runs != 0 || d.Stage() != "confirm" || !strings.Contains(ansi.Strip(d.View()), `type "mgmt-etcd" exactly`) {
		t.Fatalf("ran without the typed name (runs %d, stage %s)", f.runs, d.Stage())
	}
	press(t, d, typeText("-etcd")...)
	press(t, d, enter)
	if f.runs != 1 || d.Stage() != "done" {
		t.Fatalf("runs %d, stage %s; want one run, done", f.runs, d.Stage())
	}
	v = ansi.Strip(d.View())
	for _, want := range []string{"1. Pause EKS-A reconcile", "done: ok restore-etcd-spec", "lock clear paused --cluster mgmt"} {
		if !strings.Contains(v, want) {
			t.Errorf("done view lacks %q:\n%s", want, v)
		}
	}
	_, cmd := d.Update(enter)
	if cmd == nil || cmd() != (CloseDialogMsg{}) {
		t.Error("enter does not close the finished dialog")
	}
}

func TestRecoveryDialogShowsRefusalAndFailure(t *testing.T) {
	f := &fakeRecovery{planErr: &recovery.RefusedError{Action: recovery.ActionEtcdRollback, Cluster: "mgmt",
		Preconditions: []recovery.Precondition{{Name: "no-old-member-removed", Detail: "e-a already released"}}}}
	d := testDialog(RecoveryOptions{}, f)
	press(t, d, enter)
	v := ansi.Strip(d.View())
	if !strings.Contains(v, "Not possible now") || !strings.Contains(v, "no-old-member-removed: e-a already released") {
		t.Errorf("refusal view:\n%s", v)
	}
	press(t, d, enter)
	if f.dryRuns != 0 {
		t.Error("a refused action was dry-run")
	}

	// A run that fails at step failStep with err, as the dialog ends it.
	ran := func(failStep int, err error) string {
		d := testDialog(RecoveryOptions{}, &fakeRecovery{p: planFixture(), failStep: failStep, failErr: err})
		press(t, d, enter, enter)
		press(t, d, typeText("mgmt-etcd")...)
		press(t, d, enter)
		return ansi.Strip(d.View())
	}
	for _, c := range []struct {
		name     string
		failStep int
		err      error
		want     string
		resume   bool
	}{
		{"failure", 2, nil, "failed: boom", true},
		// The cluster changed since the plan, before any write: refused,
		// not a run to resume.
		{"refused run", 1, &recovery.ConcurrentChangeError{Object: "EtcdadmCluster eksa-system/mgmt-etcd", What: "its spec changed"}, "Refused, nothing was written", false},
		// The audit log refused the run's start: nothing ran, and it is
		// the log to fix, not an action to resume.
		{"audit refused", 1, &recovery.NotStartedError{Err: &upgrade.AuditWriteError{Path: "audit.log", Err: syscall.ENOSPC}}, "Nothing was written: the audit log refused", false},
	} {
		if v := ran(c.failStep, c.err); !strings.Contains(v, c.want) || strings.Contains(v, "resumable") != c.resume {
			t.Errorf("%s view:\n%s", c.name, v)
		}
	}
}

// The API server's refusal reached the dialog in its own words alone ("pods
// \"…\" is forbidden: User \"ro\" cannot delete resource …"), where the
// command line adds what to do about it: the dialog says the same fix.
func TestRecoveryDialogSaysTheFixOfARefusal(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "mgmt-md-0-0000-node-upgrader", errors.New(`User "ro" cannot delete resource "pods"`))
	f := &fakeRecovery{planErr: fmt.Errorf("read the upgrader pod: %w", forbidden)}
	d := testDialog(RecoveryOptions{}, f)
	press(t, d, enter)
	if v := ansi.Strip(d.View()); !strings.Contains(strings.Join(strings.Fields(v), " "), "fix: the identity the API server names lacks that right") {
		t.Errorf("the refusal's fix is not shown:\n%s", v)
	}
}

// With the snapshot ConfigMap gone, the dialog takes a local copy, as
// `etcd rollback --snapshot-file` does: f opens the file stage with the
// newest copy filled in, a file the planner rejects can be given again, and
// the accepted one goes on to the dry run. k and j are letters of the path.
func TestRecoveryDialogRestoresFromASnapshotFile(t *testing.T) {
	noSnapshot := &recovery.RefusedError{Action: recovery.ActionEtcdRollback, Cluster: "mgmt",
		Preconditions: []recovery.Precondition{{Name: "external-etcd", OK: true}, {Name: "snapshot", Detail: "no snapshot ConfigMap of cluster mgmt"}}}
	f := &fakeRecovery{copies: []string{"/state/snapshots/upgrade-console-snapshot-mgmt-20261122-101500.json", "/state/snapshots/upgrade-console-snapshot-mgmt-20261121-224758.json"}}
	f.planFor = func(o recovery.Offer) (*recovery.Plan, error) {
		switch o.SnapshotFile {
		case "":
			return nil, noSnapshot
		case f.copies[0]:
			return nil, &model.InputError{Source: o.SnapshotFile, Problem: "a snapshot of cluster other, not mgmt"}
		case "saved/jk.json":
			return planFixture(), nil
		}
		return nil, fmt.Errorf("unexpected file %q", o.SnapshotFile)
	}
	d := testDialog(RecoveryOptions{}, f)
	press(t, d, enter)
	v := ansi.Strip(d.View())
	if !strings.Contains(v, "Press f to restore from a local copy") || !strings.Contains(v, "f snapshot file") {
		t.Fatalf("refusal on the snapshot does not offer a file:\n%s", v)
	}
	press(t, d, typeText("f")...)
	if d.Stage() != "file" || d.input.Value() != f.copies[0] {
		t.Fatalf("stage %s, input %q; want the file stage with the newest copy", d.Stage(), d.input.Value())
	}
	v = ansi.Strip(d.View())
	for _, want := range []string{"--snapshot-file", "Local copies on this machine", "20261121-224758.json"} {
		if !strings.Contains(v, want) {
			t.Errorf("file stage lacks %q:\n%s", want, v)
		}
	}
	press(t, d, enter)
	v = ansi.Strip(d.View())
	if d.Stage() != "plan" || !strings.Contains(v, "other, not mgmt") || !strings.Contains(v, "Press f to give another snapshot file") {
		t.Fatalf("stage %s; a rejected file must be shown and another offered:\n%s", d.Stage(), v)
	}
	press(t, d, typeText("f")...)
	if d.input.Value() != f.copies[0] {
		t.Errorf("the file stage again holds %q, want the file given before", d.input.Value())
	}
	d.input.SetValue("")
	press(t, d, typeText("saved/jk.json")...)
	if d.input.Value() != "saved/jk.json" {
		t.Fatalf("typed %q: k and j must be letters here", d.input.Value())
	}
	press(t, d, enter, enter)
	if d.Stage() != "confirm" || f.dryRuns != 1 || d.input.Value() != "" {
		t.Fatalf("stage %s after %d dry runs, input %q; want the confirmation, empty", d.Stage(), f.dryRuns, d.input.Value())
	}
	if n := len(f.offers); n != 3 || f.offers[n-1].SnapshotFile != "saved/jk.json" {
		t.Errorf("planned offers = %+v", f.offers)
	}

	// Not offered when the refusal is for something else, nor read-only.
	other := &fakeRecovery{planErr: &recovery.RefusedError{Action: recovery.ActionEtcdRollback, Cluster: "mgmt",
		Preconditions: []recovery.Precondition{{Name: "no-old-member-removed", Detail: "e-a already released"}}}}
	for _, o := range []struct {
		name string
		f    *fakeRecovery
		ro   bool
	}{{"other refusal", other, false}, {"read-only", &fakeRecovery{planErr: noSnapshot}, true}} {
		d := testDialog(RecoveryOptions{ReadOnly: o.ro}, o.f)
		press(t, d, enter)
		press(t, d, typeText("f")...)
		if d.Stage() != "plan" || strings.Contains(ansi.Strip(d.View()), "Press f") {
			t.Errorf("%s: stage %s; the file must not be offered:\n%s", o.name, d.Stage(), ansi.Strip(d.View()))
		}
	}
}

func TestRecoveryDialogReadOnlyShowsThePlanOnly(t *testing.T) {
	f := &fakeRecovery{p: planFixture()}
	d := testDialog(RecoveryOptions{ReadOnly: true}, f)
	press(t, d, enter, enter)
	if f.dryRuns != 0 || d.Stage() != "plan" {
		t.Fatalf("read-only: %d dry runs, stage %s", f.dryRuns, d.Stage())
	}
}

// TestRecoveryDialogGoldens pins the dialog's stages at 40, 80, 120 and 250
// columns (the App gives dialogs the window less a margin of 4), in
// monochrome: wrapped at 40, no wider than dialogMaxWidth at 250.
func TestRecoveryDialogGoldens(t *testing.T) {
	for _, w := range []int{40, 80, 120, 250} {
		f := &fakeRecovery{p: planFixture()}
		d := testDialog(RecoveryOptions{}, f)
		setMono(d)
		noBlink(d)
		d.SetSize(w-4, 36)
		shot := func(stage string) { dialogGolden(t, d, stage, w) }
		shot("menu")
		press(t, d, enter)
		shot("plan")
		press(t, d, enter)
		press(t, d, typeText("mgmt")...)
		shot("confirm")
		press(t, d, typeText("-etcd")...)
		press(t, d, enter)
		shot("done")
	}
}

// TestRecoveryDialogFileGoldens pins the refusal for want of a snapshot and
// the file stage that follows it.
func TestRecoveryDialogFileGoldens(t *testing.T) {
	noSnapshot := &recovery.RefusedError{Action: recovery.ActionEtcdRollback, Cluster: "mgmt",
		Preconditions: []recovery.Precondition{{Name: "external-etcd", OK: true, Detail: "EtcdadmCluster eksa-system/mgmt-etcd"},
			{Name: "snapshot", Detail: "no snapshot ConfigMap of cluster mgmt in eksa-system; if its local copy is kept, restore from it with --snapshot-file"}}}
	for _, w := range []int{40, 80, 120, 250} {
		f := &fakeRecovery{planErr: noSnapshot, copies: []string{
			"/home/ops/.local/state/upgrade-console/snapshots/upgrade-console-snapshot-mgmt-20261122-101500.json",
			"/home/ops/.local/state/upgrade-console/snapshots/upgrade-console-snapshot-mgmt-20261121-224758.json"}}
		d := testDialog(RecoveryOptions{}, f)
		setMono(d)
		noBlink(d)
		d.SetSize(w-4, 36)
		shot := func(stage string) { dialogGolden(t, d, stage, w) }
		press(t, d, enter)
		shot("no-snapshot")
		press(t, d, typeText("f")...)
		shot("file")

		// Copies named for mgmt, all of other clusters (a management
		// cluster made again, another namespace's): the stage said "No
		// local copy" and nothing of them.
		dir := "/home/ops/.local/state/upgrade-console/snapshots/"
		again := "of another cluster named mgmt, whose EtcdadmCluster had UID 0a0a0a0a-9c1e-4d5f-8b2a-3c4d5e6f7a8b (this one's: 1b1b1b1b-2c3d-4e5f-8a9b-0c1d2e3f4a5b)"
		f = &fakeRecovery{planErr: noSnapshot, passed: []recovery.PassedCopy{
			{Path: dir + "upgrade-console-snapshot-mgmt-20261120-093000.json", Of: again, TakenAt: time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)},
			{Path: dir + "upgrade-console-snapshot-mgmt-20261119-180000.json", Of: "of Cluster ops/mgmt", TakenAt: time.Date(2026, 11, 19, 18, 0, 0, 0, time.UTC)},
			{Path: dir + "upgrade-console-snapshot-mgmt-20261118-120000.json", Of: again, TakenAt: time.Date(2026, 11, 18, 12, 0, 0, 0, time.UTC)}}}
		d = testDialog(RecoveryOptions{}, f)
		setMono(d)
		noBlink(d)
		d.SetSize(w-4, 36)
		press(t, d, enter)
		press(t, d, typeText("f")...)
		shot("file-another-cluster")
	}
}

// dialogGolden pins the dialog's view as a sub-test stage/width: no line is
// wider than the dialog's share of a w-column window, nor than
// dialogMaxWidth on a wide one.
func dialogGolden(t *testing.T, d *recoveryDialog, stage string, w int) {
	t.Run(fmt.Sprintf("%s/%d", stage, w), func(t *testing.T) {
		out := ansi.Strip(d.View())
		limit := min(w-4, dialogMaxWidth)
		for _, l := range strings.Split(out, "\n") {
			if ansi.StringWidth(l) > limit {
				t.Fatalf("line wider than %d: %q", limit, l)
			}
		}
		golden.RequireEqual(t, out)
	})
}

func ptrTheme(t themes.Theme) *themes.Theme { return &t }

// TestFlowRecoveryFromTheDashboard runs the App: R on the dashboard opens the
// menu only because the snapshot shows a stuck etcd member, and the typed
// confirmation gates the run.
func TestFlowRecoveryFromTheDashboard(t *testing.T) {
	f := &fakeRecovery{p: planFixture()}
	state := stuckEtcdState(t0)
	state.Cluster.Generation, state.Cluster.ObservedGeneration = 2, 2
	opts := Options{Actions: []Action{RecoveryAction(RecoveryOptions{backend: f, Now: func() time.Time { return t0 }})}}
	tm, _ := startApp(t, state, opts)
	tm.Send(tea.KeyPressMsg{Code: 'R', Text: "R"})
	waitForText(t, tm, "Roll back the etcd rollout")
	tm.Send(enter)
	waitForText(t, tm, "enter dry run")
	tm.Send(enter)
	waitForText(t, tm, "to run it")
	tm.Type("mgmt-etcd")
	tm.Send(enter)
	waitForText(t, tm, "/esc close") // the renderer may leave "enter" where it was
	_, screen := finish(t, tm)
	if f.dryRuns != 1 || f.runs != 1 {
		t.Errorf("dry runs %d, runs %d; want one of each", f.dryRuns, f.runs)
	}
	if !strings.Contains(screen, "lock clear paused --cluster mgmt") {
		t.Errorf("closing message not shown:\n%s", screen)
	}
}

// The help offers R only while there is something to recover; the key
// stays bound (a stale lock is not in the snapshot).
func TestRecoveryKeyShownOnlyWhenOffered(t *testing.T) {
	a := RecoveryAction(RecoveryOptions{backend: &fakeRecovery{p: planFixture()}, Now: func() time.Time { return t0 }})
	d := NewDashboard(Options{Theme: themes.Mono, Actions: []Action{a}})
	d.SetSize(160, 40)
	shown := func() bool {
		for _, b := range d.ShortHelp() {
			if b.Help().Key == "R" {
				return true
			}
		}
		return false
	}
	if shown() {
		t.Error("R shown before any snapshot")
	}
	d.Update(SnapshotMsg{State: stuckEtcdState(t0)})
	if !shown() || !strings.Contains(d.View(), "recover") {
		t.Error("R not shown although the etcd rollback is offered")
	}
	healthy := fixtureHealthy()
	healthy.Version = 99
	d.Update(SnapshotMsg{State: healthy})
	d.Update(frameMsg{})
	if shown() || strings.Contains(d.View(), "R recover") {
		t.Error("R shown although nothing is offered")
	}
}

func TestRecoveryNotBoundInReadOnly(t *testing.T) {
	for _, readOnly := range []bool{false, true} {
		a := RecoveryAction(RecoveryOptions{backend: &fakeRecovery{p: planFixture()}, Now: func() time.Time { return t0 }})
		d := NewDashboard(Options{Theme: themes.Mono, ReadOnly: readOnly, Actions: []Action{a}})
		d.SetSize(120, 40)
		d.Update(SnapshotMsg{State: stuckEtcdState(t0)})
		_, cmd := d.Update(tea.KeyPressMsg{Code: 'R', Text: "R"})
		var opened bool
		if cmd != nil {
			_, opened = cmd().(OpenDialogMsg)
		}
		if opened == readOnly {
			t.Errorf("read-only=%t: R opened the recovery menu: %t", readOnly, opened)
		}
	}
}

func TestRecoveryDialogScrollsATallPlan(t *testing.T) {
	p := planFixture()
	for i := range 8 {
		p.Steps = append(p.Steps, recovery.Step{Name: fmt.Sprintf("extra-%d", i), Title: fmt.Sprintf("Extra step %d", i), Object: "Node n", Change: "remove label"})
	}
	f := &fakeRecovery{p: p}
	d := testDialog(RecoveryOptions{}, f)
	setMono(d)
	noBlink(d)
	d.SetSize(76, 20) // an 80×24 terminal
	press(t, d, enter)
	top := ansi.Strip(d.View())
	if lines := strings.Count(top, "\n") + 1; lines > 20 {
		t.Fatalf("dialog is %d lines for 20 rows:\n%s", lines, top)
	}
	if !strings.Contains(top, "Roll back the etcd rollout of mgmt") || !strings.Contains(top, "↑/↓/pgup/pgdn (0 above") {
		t.Fatalf("top of a tall plan:\n%s", top)
	}
	press(t, d, tea.KeyPressMsg{Code: tea.KeyPgDown}, tea.KeyPressMsg{Code: tea.KeyPgDown}, tea.KeyPressMsg{Code: tea.KeyPgDown})
	bottom := ansi.Strip(d.View())
	if !strings.Contains(bottom, "Extra step 7") || !strings.Contains(bottom, "0 below") {
		t.Fatalf("bottom of a tall plan:\n%s", bottom)
	}
	golden.RequireEqual(t, bottom)

	// In the confirmation, j and k are letters of the name, not scrolling.
	press(t, d, enter)
	press(t, d, typeText("jk")...)
	if d.input.Value() != "jk" {
		t.Errorf("typed %q, want jk", d.input.Value())
	}
}

// g/G (home/end) did nothing in the recovery dialog, where the dashboard,
// the node detail and the plan screen take them to the top and the
// bottom. They do so in the plan, the run's view and its end, and the full
// help cut by a short dialog; in the typed confirmation g is a letter.
func TestRecoveryDialogTopAndBottomKeys(t *testing.T) {
	g, G := tea.KeyPressMsg{Code: 'g', Text: "g"}, tea.KeyPressMsg{Code: 'G', Text: "G"}
	home, end := tea.KeyPressMsg{Code: tea.KeyHome}, tea.KeyPressMsg{Code: tea.KeyEnd}
	p := planFixture()
	for i := range 8 {
		p.Steps = append(p.Steps, recovery.Step{Name: fmt.Sprintf("extra-%d", i), Title: fmt.Sprintf("Extra step %d", i), Object: "Node n", Change: "remove label"})
	}
	f := &fakeRecovery{p: p}
	d := testDialog(RecoveryOptions{}, f)
	setMono(d)
	d.SetSize(40, 10)
	topBottom := func(stage string) {
		t.Helper()
		if d.Stage() != stage || d.maxOffset == 0 {
			t.Fatalf("stage %s, max offset %d: want %s, scrolled", d.Stage(), d.maxOffset, stage)
		}
		for _, k := range []struct {
			key  tea.KeyPressMsg
			want int
		}{{G, d.maxOffset}, {g, 0}, {end, d.maxOffset}, {home, 0}} {
			press(t, d, k.key)
			if d.offset != k.want {
				t.Errorf("%s: %s left the offset at %d, want %d", stage, k.key, d.offset, k.want)
			}
		}
	}
	press(t, d, enter)
	topBottom("plan")

	press(t, d, tea.KeyPressMsg{Code: '?', Text: "?"})
	max := d.helpMaxOffset()
	if max == 0 {
		t.Fatal("the full help fits at 40x10: nothing to scroll")
	}
	press(t, d, G)
	if d.helpOffset != max {
		t.Errorf("G in the full help: offset %d, want %d", d.helpOffset, max)
	}
	press(t, d, g)
	if d.helpOffset != 0 {
		t.Errorf("g in the full help: offset %d, want 0", d.helpOffset)
	}
	press(t, d, tea.KeyPressMsg{Code: tea.KeyEscape})

	press(t, d, enter)
	press(t, d, typeText("gG")...)
	if d.input.Value() != "gG" {
		t.Fatalf("the confirmation reads %q: g and G are letters there", d.input.Value())
	}
	press(t, d, tea.KeyPressMsg{Code: tea.KeyBackspace}, tea.KeyPressMsg{Code: tea.KeyBackspace})
	press(t, d, typeText("mgmt-etcd")...)
	press(t, d, enter)
	topBottom("done")

	// The run's view while it runs, held in its first step.
	rd, done := runningDialog(t, &fakeRecovery{p: p, hold: true})
	setMono(rd)
	rd.SetSize(40, 10)
	d = rd
	topBottom("running")
	d.interrupt()
	<-done
}

// TestPlanScreenOffersRecovery: a stale marker blocks the upgrade on the plan
// screen; its help shows R, and R opens the recovery menu (not in read-only
// mode).
func TestPlanScreenOffersRecovery(t *testing.T) {
	state := stuckEtcdState(t0)
	state.Machines = model.ListOf(state.Machines.Slice()[:3]...)
	state.Etcd.Ready, state.Etcd.Annotations = true, nil
	state.Cluster.Annotations = map[string]string{model.AnnotationEKSAPaused: "true"}
	for _, readOnly := range []bool{false, true} {
		a := RecoveryAction(RecoveryOptions{backend: &fakeRecovery{p: planFixture()}, Now: func() time.Time { return t0 }})
		p := newTestPlanScreen(t, fixturePlan(true), Options{ReadOnly: readOnly, Actions: []Action{a}}, PlanActions{}, 100, 30)
		p.Update(SnapshotMsg{State: state})
		if shown := strings.Contains(ansi.Strip(p.View()), "R recover"); shown == readOnly {
			t.Errorf("read-only %v: R recover in the plan screen's help = %v", readOnly, shown)
		}
		_, cmd := p.Update(tea.KeyPressMsg{Code: 'R', Text: "R"})
		var open OpenDialogMsg
		if cmd != nil {
			open, _ = cmd().(OpenDialogMsg)
		}
		switch {
		case readOnly && open.Dialog != nil:
			t.Error("read-only plan screen opened the recovery menu")
		case !readOnly && open.Dialog == nil:
			t.Error("R on the plan screen did not open the recovery menu for a leftover pause")
		case !readOnly:
			open.Dialog.SetSize(96, 30)
			if v := ansi.Strip(open.Dialog.View()); !strings.Contains(v, "Clear upgrade lock markers") || !strings.Contains(v, "stale: paused") {
				t.Errorf("menu:\n%s", v)
			}
		}
	}
}

// TestPlanScreenShowsRecoveryWhenALeaseGoesStale: nothing to recover, then
// the lock Lease expires with no write (so no snapshot): the periodic tick
// brings R recover into the plan screen's help.
func TestPlanScreenShowsRecoveryWhenALeaseGoesStale(t *testing.T) {
	now := t0
	state := stuckEtcdState(t0)
	state.Machines = model.ListOf(state.Machines.Slice()[:3]...)
	state.Etcd.Ready, state.Etcd.Annotations = true, nil
	state.Lock = &model.Lock{HolderIdentity: "ops@bastion-1/1", AcquireTime: t0.Add(-time.Minute), RenewTime: t0.Add(-10 * time.Second), Duration: time.Minute}
	a := RecoveryAction(RecoveryOptions{backend: &fakeRecovery{p: planFixture()}, Now: func() time.Time { return now }})
	p := newTestPlanScreen(t, fixturePlan(true), Options{Actions: []Action{a}}, PlanActions{}, 100, 30)
	p.Update(SnapshotMsg{State: state})
	if strings.Contains(ansi.Strip(p.View()), "R recover") {
		t.Fatalf("R recover shown with a live lease and nothing else to recover:\n%s", ansi.Strip(p.View()))
	}
	now = t0.Add(2 * time.Minute)
	p.Update(periodicMsg{})
	if !strings.Contains(ansi.Strip(p.View()), "R recover") {
		t.Errorf("R recover not shown once the lease went stale:\n%s", ansi.Strip(p.View()))
	}
}

// etcdRollbackPlan is the etcd rollback's plan as upgrade/recovery words it
// (the README's `etcd rollback` transcript): long titles, and a restore whose
// change names three fields.
func etcdRollbackPlan() *recovery.Plan {
	p := planFixture()
	p.Title = "Roll back the etcd rollout of mgmt: restore the etcd spec of snapshot upgrade-console-snapshot-mgmt-20261121-224758 and delete the new member mgmt-etcd-7kpxq"
	p.Steps = []recovery.Step{
		{Name: "pause-eksa-reconcile", Title: "Pause EKS-A reconcile of the Cluster, so its controller does not apply the new etcd spec again",
			Object: "Cluster default/mgmt", Change: `add annotation anywhere.eks.amazonaws.com/paused="true" and the rollback record upgrade-console/etcd-rollback`},
		{Name: "restore-etcd-spec", Title: "Restore the EtcdadmCluster spec (etcd version or image, infrastructure template) from the snapshot",
			Object: "EtcdadmCluster eksa-system/mgmt-etcd", Change: "spec.etcdadmConfigSpec.cloudInitConfig.installImage: public.ecr.aws/eks-anywhere/etcd:v3.5.16-eks-1-31-11 → public.ecr.aws/eks-anywhere/etcd:v3.5.15-eks-1-30-22; " +
				"spec.etcdadmConfigSpec.cloudInitConfig.version: 3.5.16 → 3.5.15; spec.infrastructureTemplate.name: mgmt-etcd-template-1795301278 → mgmt-etcd-template-1791758857"},
		{Name: "delete-new-machine", Title: "Delete the new etcd Machine that did not become ready",
			Object: "Machine eksa-system/mgmt-etcd-7kpxq", Change: "delete (only the Machine with UID b07c1b6c-8937-4d74-8eff-59cbca71efb8)"},
		{Name: "wait-etcd-ready", Title: "Wait until etcd is ready again with all its old members",
			Object: "EtcdadmCluster eksa-system/mgmt-etcd", Change: "none (waits up to 15m0s for status.ready on an observed generation, members mgmt-etcd-7kfgd, mgmt-etcd-jhvld, mgmt-etcd-vvg6g, and no machine mgmt-etcd-7kpxq)"},
		{Name: "clear-etcd-upgrading", Title: "Clear the etcd upgrading annotation if it remains",
			Object: "EtcdadmCluster eksa-system/mgmt-etcd", Change: `remove annotation etcdcluster.cluster.x-k8s.io/upgrading (if it is still "true")`},
		{Name: "unpause-kcp", Title: "Unpause the KubeadmControlPlane (EKS-A paused it for the etcd rollout)",
			Object: "KubeadmControlPlane eksa-system/mgmt", Change: `remove annotation cluster.x-k8s.io/paused (if it is still "true")`},
		{Name: "record-finished", Title: "Record the rollback as finished (EKS-A reconcile stays paused)",
			Object: "Cluster default/mgmt", Change: `set upgrade-console/etcd-rollback phase to "done"; anywhere.eks.amazonaws.com/paused stays "true"`},
	}
	return p
}

// TestRecoveryDialogShowsEveryDryRunResult: a step's title and change wrap
// rather than being cut, so every step's dry-run result and every field of
// its change show (at 100 wide it cut steps 1 and 2 before their "[dry run
// ok]", and step 2's change before its template). On a wide terminal the
// dialog is dialogMaxWidth wide, where it took all 196 columns; at 80
// columns they wrap too.
func TestRecoveryDialogShowsEveryDryRunResult(t *testing.T) {
	for _, tc := range []struct{ w, h int }{{200, 60}, {80, 60}} {
		t.Run(fmt.Sprint(tc.w), func(t *testing.T) {
			p := etcdRollbackPlan()
			d := testDialog(RecoveryOptions{}, &fakeRecovery{p: p})
			setMono(d)
			noBlink(d)
			d.SetSize(tc.w-4, tc.h-4) // as the App sizes dialogs
			press(t, d, enter, enter)
			if d.Stage() != "confirm" {
				t.Fatalf("stage %s, want confirm", d.Stage())
			}
			out := ansi.Strip(d.View())
			lines := strings.Split(out, "\n")
			if got := ansi.StringWidth(lines[0]); tc.w == 200 && got != dialogMaxWidth {
				t.Errorf("dialog is %d cells wide at %d columns, want %d", got, tc.w, dialogMaxWidth)
			}
			for _, l := range lines {
				if ansi.StringWidth(l) > tc.w-4 {
					t.Fatalf("line wider than %d: %q", tc.w-4, l)
				}
				if strings.Contains(l, "…") {
					t.Errorf("cut line: %q", l)
				}
			}
			if n := strings.Count(out, "[dry run ok]"); n != len(p.Steps) {
				t.Errorf("%d dry-run results shown, want %d:\n%s", n, len(p.Steps), out)
			}
			flat := strings.Join(strings.Fields(strings.NewReplacer("│", " ").Replace(out)), " ")
			for _, want := range []string{"mgmt-etcd-template-1795301278 → mgmt-etcd-template-1791758857", "etcd spec again [dry run ok]"} {
				if !strings.Contains(flat, want) {
					t.Errorf("dialog lacks %q:\n%s", want, out)
				}
			}
			if tc.w == 200 {
				golden.RequireEqual(t, out)
			}
		})
	}
}

// TestRecoveryConfirmPlaceholderIsNotTheAnswer: the empty confirmation
// input shows what kind of name to type, never the name: in monochrome
// (NO_COLOR) a placeholder is not dimmed, and "> mgmt-etcd" read as typed
// already, so enter was pressed on an empty input.
func TestRecoveryConfirmPlaceholderIsNotTheAnswer(t *testing.T) {
	for _, c := range []struct{ object, want string }{
		{"EtcdadmCluster eksa-system/mgmt-etcd", "> etcdadmcluster name"},
		{"Node mgmt-md-0-x2k4p", "> node name"},
		{"Lease eksa-system/upgrade-console-mgmt", "> lease name"},
		{"", "> name"},
	} {
		p := planFixture()
		p.ConfirmObject = c.object
		d := testDialog(RecoveryOptions{}, &fakeRecovery{p: p})
		setMono(d)
		noBlink(d)
		press(t, d, enter, enter)
		v := ansi.Strip(d.View())
		if d.Stage() != "confirm" || !strings.Contains(v, c.want) || strings.Contains(v, "> mgmt-etcd") {
			t.Errorf("%q: stage %s, want the input to show %q, not the name:\n%s", c.object, d.Stage(), c.want, v)
		}
	}
}

// entries is a Recorder that keeps what it is given.
type entries []upgrade.AuditEntry

func (e *entries) Record(_ context.Context, x upgrade.AuditEntry) error {
	*e = append(*e, x)
	return nil
}

// A node retry the dashboard finds nothing to retry for is recorded as
// already-done, as `node retry` records it; a refusal as refused; a read-only
// console records nothing.
func TestRecoveryPlanningIsRecorded(t *testing.T) {
	nothing := &recovery.Plan{Action: recovery.ActionNodeRetry, Cluster: "mgmt", ConfirmObject: "Node mgmt-a",
		Title: "Nothing to retry on node mgmt-a: NodeUpgrade eksa-system/mgmt-a-node-upgrader completed and the node runs v1.31.3."}
	var got entries
	if err := recordPlanned(context.Background(), RecoveryOptions{Audit: &got}, nothing, nil); err != nil {
		t.Fatal(err)
	}
	refused := &recovery.RefusedError{Action: recovery.ActionNodeRetry, Cluster: "mgmt", Object: "Node mgmt-b"}
	if err := recordPlanned(context.Background(), RecoveryOptions{Audit: &got}, nil, refused); !errors.Is(err, refused) {
		t.Errorf("the refusal is not returned: %v", err)
	}
	if len(got) != 2 || got[0].Result != upgrade.AuditAlreadyDone || got[0].Object != "Node mgmt-a" || got[1].Result != upgrade.AuditRefused {
		t.Errorf("recorded %+v", got)
	}
	got = nil
	_ = recordPlanned(context.Background(), RecoveryOptions{Audit: &got, ReadOnly: true}, nothing, nil)
	if len(got) != 0 {
		t.Errorf("read-only recorded %+v", got)
	}
}

// A plan the cluster has moved past (another console ran it, the
// controller did it) dry-runs as every step already done: the dialog plans
// again, which says there is nothing to do, instead of asking for the typed
// confirmation of a run of no-ops.
func TestRecoveryDialogPlansAgainWhenEveryStepIsDone(t *testing.T) {
	f := &fakeRecovery{dryStatus: recovery.StepAlreadyDone}
	f.planFor = func(recovery.Offer) (*recovery.Plan, error) {
		if len(f.offers) == 1 {
			return planFixture(), nil
		}
		return &recovery.Plan{Action: recovery.ActionEtcdRollback, Cluster: "mgmt", Title: "etcd is already rolled back."}, nil
	}
	d := testDialog(RecoveryOptions{}, f)
	press(t, d, enter) // plan
	press(t, d, enter) // dry run
	if d.Stage() != "plan" || f.dryRuns != 1 || len(f.offers) != 2 {
		t.Fatalf("stage %s, %d dry runs, %d plans; want the plan again after one dry run", d.Stage(), f.dryRuns, len(f.offers))
	}
	if v := ansi.Strip(d.View()); !strings.Contains(v, "Nothing to do.") || strings.Contains(v, "Type ") {
		t.Errorf("view:\n%s", v)
	}
}

// TestRecoveryDialogQuitsWhereTheFooterSaysSo: the dashboard's footer,
// beneath the dialog, says "q quit", and so does the dialog's wherever q is
// not a letter being typed nor a key that stops work under way.
func TestRecoveryDialogQuitsWhereTheFooterSaysSo(t *testing.T) {
	q := tea.KeyPressMsg{Code: 'q', Text: "q"}
	quits := func(d *recoveryDialog) bool {
		_, cmd := d.Update(q)
		if cmd == nil {
			return false
		}
		// The App answers it as the screen beneath would its own q.
		_, ok := cmd().(quitRequestMsg)
		return ok
	}
	f := &fakeRecovery{p: planFixture()}
	d := testDialog(RecoveryOptions{}, f)
	for _, stage := range []string{"menu", "plan"} {
		if d.Stage() != stage {
			t.Fatalf("stage %s, want %s", d.Stage(), stage)
		}
		if !strings.Contains(ansi.Strip(d.View()), "q quit") {
			t.Errorf("%s: the footer does not say q quits:\n%s", stage, ansi.Strip(d.View()))
		}
		if !quits(d) {
			t.Errorf("%s: q does not quit", stage)
		}
		press(t, d, enter)
	}
	// The typed confirmation: q is a letter of the name.
	if d.Stage() != "confirm" {
		t.Fatalf("stage %s, want confirm", d.Stage())
	}
	if quits(d) || strings.Contains(ansi.Strip(d.View()), "q quit") {
		t.Error("q quits at the typed confirmation, or the footer says it does")
	}
	if got := d.input.Value(); got != "q" {
		t.Errorf("q typed at the confirmation reads %q, want it typed", got)
	}
}

// This console's own lock, while its renewals fail (the API server not
// answering), reads stale in the snapshot; R offered to clear it, and the
// planner refused once the operator had chosen it. It is not offered; the
// lock of another console is, and so is this console's own once kept.
func TestRecoveryDoesNotOfferThisConsolesOwnLiveLock(t *testing.T) {
	me := upgrade.Holder{User: "alice", Host: "laptop", Instance: "3f2a9c1e"}
	other := upgrade.Holder{User: "bob", Host: "desk", Instance: "77aa"}
	a := RecoveryAction(RecoveryOptions{Env: &recovery.Env{Holder: me}, Now: func() time.Time { return t0 }})
	for _, c := range []struct {
		name   string
		holder upgrade.Holder
		kept   string
		want   bool
	}{
		{"own, renewals failing", me, "", false},
		{"another console's, stale", other, "", true},
		{"own, kept after a failed upgrade", me, "upgrade failed: etcd", true},
	} {
		s := fixtureHealthy()
		s.Lock = &model.Lock{Namespace: "eksa-system", Name: upgrade.LockName("mgmt"), HolderIdentity: c.holder.String(),
			AcquireTime: t0.Add(-10 * time.Minute), RenewTime: t0.Add(-5 * time.Minute), Duration: time.Minute, Kept: c.kept}
		if got := a.Offered(s); got != c.want {
			t.Errorf("%s: offered %t, want %t", c.name, got, c.want)
		}
	}
}

// nodeRetryFixture is the demo's inplace-node-step-fails scenario as
// `node retry` plans it: the kubeadm step failed, and the container's last
// lines (the simulator's, as kubeadm prints them) end with the error.
func nodeRetryFixture() (*recovery.Plan, *recovery.NodeFailure) {
	p := &recovery.Plan{
		Action: recovery.ActionNodeRetry, Cluster: "mgmt",
		Title:   "Retry the in-place upgrade of node mgmt-snpws: delete its upgrader pod so the NodeUpgrade controller recreates it",
		Confirm: "mgmt-snpws", ConfirmObject: "Node mgmt-snpws",
		Preconditions: []recovery.Precondition{{Name: "not-completed", OK: true}, {Name: "step-failed", OK: true}, {Name: "upgrader-pod", OK: true}},
		Steps: []recovery.Step{
			{Name: "delete-upgrader-pod", Title: "Delete the upgrader pod (EKS-A's documented retry)", Object: "Pod eksa-system/mgmt-snpws-node-upgrader", Change: "delete (only the pod with UID 118deb58-8403-40da-8af5-6fdf075b3d00)"},
			{Name: "wait-recreated", Title: "Wait for the NodeUpgrade controller to recreate the pod", Object: "Pod eksa-system/mgmt-snpws-node-upgrader", Change: "none (waits up to 2m0s)"},
		},
		Notes: []string{"Fix what made kubeadm-upgrader fail first (see its log): the recreated pod runs every step again from the first."},
	}
	f := &recovery.NodeFailure{
		Node: "mgmt-snpws", Machine: "mgmt-snpws", NodeUpgrade: "eksa-system/mgmt-snpws-node-upgrader",
		Step: "KubeadmUpgraded", Container: "kubeadm-upgrader",
		Reason:         "Container exited with a non-zero exit code, reason: Error",
		ContainerState: "terminated: exit code 1, reason Error, restarts 0",
		Pod:            "eksa-system/mgmt-snpws-node-upgrader",
		LogSource:      "simulated log (demo: no kubelet; written by the simulated NodeUpgrade controller)",
		Log: []string{
			"I1121 22:50:44.000000 upgrader: upgrading node mgmt-snpws in place (attempt 1)",
			`[upgrade/config] Reading configuration from the "kubeadm-config" ConfigMap in namespace "kube-system"...`,
			"[preflight] Running pre-flight checks.",
			"[upgrade] Running cluster health checks",
			"[upgrade/health] FATAL: [preflight] Some fatal errors occurred:",
			"\t[ERROR CreateJob]: Job \"upgrade-health-check-4711\" in the namespace \"kube-system\" did not complete in 15s: no condition of type Complete",
			"To see the stack trace of this error execute with --v=5 or higher",
			"E1121 22:50:46.000000 upgrader: kubeadm-upgrader failed: exit status 1",
		},
	}
	return p, f
}

// TestRecoveryDialogWrapsTheNodeFailure: the node retry's failure, the
// container's state and its log were cut at the dialog's width (at 80
// columns the cause at "…in the namespace…", the heading at "failed
// (container kubeadm-upgrade…"): they wrap, and a log taller than the room
// the dialog has for it keeps its last lines, which hold the error, saying
// how many it left out. The failure is in view whole when the plan opens.
func TestRecoveryDialogWrapsTheNodeFailure(t *testing.T) {
	const crashLoop = "waiting: CrashLoopBackOff back-off 10s restarting failed container=kubeadm-upgrader pod=mgmt-snpws-node-upgrader_eksa-system(118deb58-8403-40da-8af5-6fdf075b3d00)"
	for _, tc := range []struct {
		name  string
		state string
		w, h  int
		// leftOut is how many of the log's first lines the dialog leaves
		// out: at 80×24 kubeadm's error stays, and the lines after it.
		leftOut int
		golden  bool
	}{
		{"terminated", "", 80, 24, 4, true},
		{"terminated", "", 120, 40, 0, true},
		{"crash-loop", crashLoop, 80, 24, 6, false},
		{"crash-loop", crashLoop, 120, 40, 0, false},
	} {
		t.Run(fmt.Sprintf("%s/%dx%d", tc.name, tc.w, tc.h), func(t *testing.T) {
			p, nf := nodeRetryFixture()
			if tc.state != "" {
				nf.ContainerState = tc.state
			}
			f := &fakeRecovery{p: p, failure: nf}
			d := newRecoveryDialog(RecoveryOptions{}, []recovery.Offer{{Action: recovery.ActionNodeRetry, Node: "mgmt-snpws", Title: "Retry the in-place upgrade of node mgmt-snpws"}})
			d.backend = f
			setMono(d)
			noBlink(d)
			d.SetSize(tc.w-4, tc.h-4) // as the App sizes dialogs
			press(t, d, enter)
			out := ansi.Strip(d.View())
			if n := strings.Count(out, "\n") + 1; n > tc.h-4 {
				t.Errorf("the dialog is %d lines for %d rows:\n%s", n, tc.h-4, out)
			}
			for _, l := range strings.Split(out, "\n") {
				if ansi.StringWidth(l) > tc.w-4 {
					t.Fatalf("line wider than %d: %q", tc.w-4, l)
				}
			}
			// Each piece of text whole, once the dialog's rows are joined
			// (a word wider than the dialog breaks where it must, at a
			// hyphen: compared without spaces).
			joined := strings.NewReplacer("│", "", " ", "", "\n", "").Replace(out)
			want := []string{
				"Node mgmt-snpws: step KubeadmUpgraded failed (container kubeadm-upgrader)",
				nf.ContainerState,
				"E1121 22:50:46.000000 upgrader: kubeadm-upgrader failed: exit status 1",
			}
			for _, l := range nf.Log[tc.leftOut:] {
				want = append(want, strings.TrimSpace(l))
			}
			for _, w := range want {
				if !strings.Contains(joined, strings.ReplaceAll(w, " ", "")) {
					t.Errorf("the dialog lacks %q whole:\n%s", w, out)
				}
			}
			if strings.Contains(out, "…") && !strings.Contains(out, "left out") {
				t.Errorf("text cut:\n%s", out)
			}
			switch note := fmt.Sprintf("│ … %d earlier lines left out", tc.leftOut); {
			case tc.leftOut > 0 && !strings.Contains(out, note):
				t.Errorf("the dialog does not say %q:\n%s", note, out)
			case tc.leftOut == 0 && strings.Contains(out, "left out"):
				t.Errorf("the whole log fits, yet lines are left out:\n%s", out)
			}
			if tc.golden {
				golden.RequireEqual(t, out)
			}
		})
	}
}

func TestLogTailKeepsTheLastRows(t *testing.T) {
	log := []string{"one", "two", "three four five six seven eight nine ten"}
	rows, note := logTail(log, 10, 4)
	if want := []string{"three four", "five six", "seven", "eight nine", "ten"}; len(rows) != 3 || note == "" {
		t.Fatalf("rows %q note %q; the last line alone wraps to %q, more than 4 rows with the note", rows, note, want)
	}
	if rows[2] != "ten" || !strings.Contains(note, "2 earlier lines and the start of the last") {
		t.Errorf("rows %q note %q", rows, note)
	}
	rows, note = logTail(log[:2], 10, 4)
	if len(rows) != 2 || note != "" {
		t.Errorf("a log that fits: rows %q note %q", rows, note)
	}
	rows, note = logTail([]string{"a", "b", "c", "d", "e"}, 10, 3)
	if strings.Join(rows, ",") != "d,e" || note != "… 3 earlier lines left out" {
		t.Errorf("rows %q note %q", rows, note)
	}
	// A narrow dialog left kubeadm's error out: the note quotes it, cut
	// to the row.
	kubeadm := []string{"[preflight] Running checks", "[upgrade/health] FATAL: [preflight] Some fatal errors occurred", "  job failed", "E1125 upgrader: kubeadm-upgrader failed: exit status 1"}
	rows, note = logTail(kubeadm, 60, 3)
	if want := "… [upgrade/health] FATAL: [preflight] Some fatal errors"; !strings.HasPrefix(note, want) || width(note) > 60 || len(rows) != 2 {
		t.Errorf("rows %q note %q, want it to start %q within 60 cells", rows, note, want)
	}
	if _, note = logTail(kubeadm, 60, 10); note != "" {
		t.Errorf("a log that fits: note %q", note)
	}
	if rows := strings.Join(wrapLogLine("\t\x1b[31m[ERROR] a b\x1b[0m", 10), "|"); rows != "  [ERROR]|  a b" {
		t.Errorf("indented, coloured line wrapped as %q", rows)
	}
}

// R was offered for a lease the snapshot showed stale; the one read R makes
// finds it renewed or removed since. The press opened nothing, and read as a
// key that does not work; it opens the menu saying there is nothing to
// recover, whose enter does nothing and whose esc closes it.
func TestRecoveryAfterRefreshWithNothingLeftSaysSo(t *testing.T) {
	other := upgrade.Holder{User: "bob", Host: "desk", Instance: "77aa"}
	env := &recovery.Env{Client: &upgrade.Client{Kube: kubefake.NewClientset()}, Cluster: "mgmt",
		Holder: upgrade.Holder{User: "alice", Host: "laptop", Instance: "3f2a9c1e"}, Now: func() time.Time { return t0 }}
	a := RecoveryAction(RecoveryOptions{Env: env, Now: func() time.Time { return t0 }})
	s := fixtureHealthy()
	s.Lock = &model.Lock{Namespace: "eksa-system", Name: upgrade.LockName("mgmt"), HolderIdentity: other.String(),
		AcquireTime: t0.Add(-10 * time.Minute), RenewTime: t0.Add(-5 * time.Minute), Duration: time.Minute}
	if !a.Offered(s) {
		t.Fatal("the stale lease is not offered")
	}
	msg := a.Run(s)()
	open, ok := msg.(OpenDialogMsg)
	if !ok {
		t.Fatalf("R after the refresh returned %T, want the menu", msg)
	}
	d := open.Dialog.(*recoveryDialog)
	d.SetSize(100, 30)
	if v := ansi.Strip(d.View()); !strings.Contains(v, "Nothing to recover") || !strings.Contains(v, "esc close") || strings.Contains(v, "enter plan") {
		t.Errorf("menu with nothing left:\n%s", v)
	}
	if cmd := d.handleKey(tea.KeyPressMsg{Code: tea.KeyEnter}); cmd != nil || d.Stage() != "menu" {
		t.Errorf("enter on nothing: stage %s, cmd %v", d.Stage(), cmd)
	}
	if cmd := d.handleKey(tea.KeyPressMsg{Code: tea.KeyEscape}); cmd == nil {
		t.Error("esc does not close the menu")
	} else if _, ok := cmd().(CloseDialogMsg); !ok {
		t.Error("esc does not close the menu")
	}
}

// An action not offered is not in the footer or the help, and its key does
// nothing: R opened "Nothing to recover" on a cluster that never showed
// anything to recover.
func TestActionKeyDoesNothingWhenNotOffered(t *testing.T) {
	ran := 0
	offered := false
	a := Action{Binding: key.NewBinding(key.WithKeys("R")), Offered: func(*model.ClusterState) bool { return offered },
		Run: func(*model.ClusterState) tea.Cmd { ran++; return func() tea.Msg { return nil } }}
	opts := Options{Actions: []Action{a}}
	r := tea.KeyPressMsg{Code: 'R', Text: "R"}
	if cmd := matchAction(opts, r, fixtureHealthy()); cmd != nil || ran != 0 {
		t.Errorf("R not offered ran the action")
	}
	offered = true
	if cmd := matchAction(opts, r, fixtureHealthy()); cmd == nil || ran != 1 {
		t.Errorf("R offered did not run the action")
	}
}

// R pressed with nothing offered opened nothing and said nothing: the key
// the README names read as one that does not work. The last line, where y
// says what it copied, says there is nothing to recover and what R looks
// for, in a form that fits the width, until the next key; with a live
// lock it names no marker (Offers does not look for them then).
func TestRecoveryKeyNotOfferedSaysWhy(t *testing.T) {
	a := RecoveryAction(RecoveryOptions{backend: &fakeRecovery{p: planFixture()}, Now: func() time.Time { return t0 }})
	r := tea.KeyPressMsg{Code: 'R', Text: "R"}
	liveLocked := fixtureHealthy()
	liveLocked.Lock = &model.Lock{HolderIdentity: "bob@desk/b0b", AcquireTime: t0.Add(-time.Minute), RenewTime: t0.Add(-5 * time.Second), Duration: time.Minute}
	for _, c := range []struct {
		name  string
		w     int
		state *model.ClusterState
		want  string
	}{
		{"80 columns", 80, fixtureHealthy(), "R: nothing to recover: no stale lock/marker, stuck etcd member, node to retry"},
		{"40 columns", 40, fixtureHealthy(), "R: nothing to recover now"},
		{"160 columns", 160, fixtureHealthy(), "R: nothing to recover now: no stale upgrade lock or leftover marker, no new etcd member unready past 15m, no in-place node to retry"},
		{"live lock", 80, liveLocked, "R: nothing to recover: no stuck etcd member, node to retry; the lock is live"},
	} {
		t.Run(c.name, func(t *testing.T) {
			app := newTestApp(Options{Theme: themes.Mono, ClusterName: "mgmt", Actions: []Action{a}})
			app.Update(tea.WindowSizeMsg{Width: c.w, Height: 24})
			app.Update(SnapshotMsg{State: c.state})
			if a.Offered(c.state) {
				t.Fatal("the fixture offers an action")
			}
			_, cmd := app.Update(r)
			runCmds(cmd, func(m tea.Msg) { app.Update(m) })
			if len(app.dialogs) != 0 {
				t.Fatal("R opened a dialog with nothing offered")
			}
			if last := strings.TrimSpace(lastRow(app)); !strings.HasSuffix(last, c.want) {
				t.Errorf("the last line says %q, want %q", last, c.want)
			}
			app.Update(tea.KeyPressMsg{Code: 'e', Text: "e"})
			if last := lastRow(app); strings.Contains(last, "nothing to recover") {
				t.Errorf("the next key left %q", last)
			}
		})
	}
}

// Every local copy filtered out (another cluster's) reads as none, not as a
// heading over an empty list.
func TestFileStageWithNoCopySaysSo(t *testing.T) {
	d := newRecoveryDialog(RecoveryOptions{backend: &fakeRecovery{}}, []recovery.Offer{{Action: recovery.ActionEtcdRollback, Title: "Roll back"}})
	d.SetSize(100, 30)
	d.stage, d.copies = recFile, recovery.LocalCopies{}
	d.relayout()
	if v := ansi.Strip(d.View()); !strings.Contains(v, "No local copy of") || strings.Contains(v, "newest first") {
		t.Errorf("file stage with no copy:\n%s", v)
	}
}

// The menu wraps each offer's reason: cut at 80 columns, "kept when it
// sto…" lost why the lock was kept. On a short terminal the offer the
// cursor is on stays in view.
func TestRecoveryMenuWrapsReasonsAndFollowsTheCursor(t *testing.T) {
	offers := []recovery.Offer{
		{Action: recovery.ActionEtcdRollback, Title: "Roll back the etcd rollout",
			Why: "new etcd member mgmt-etcd-4f5pw not ready since its creation at 01:02:03 UTC"},
		{Action: recovery.ActionLockClear, Title: "Clear the upgrade lock",
			Why: "kept upgrade lock: this console's, taken 1m0s ago; kept when it stopped following: interrupted by SIGTERM"},
		{Action: recovery.ActionLockClear, Title: "Remove the paused annotation", Why: "EKS-A skips every reconcile of mgmt"},
		{Action: recovery.ActionNodeRetry, Title: "Retry the failed in-place node", Why: "node mgmt-cp-2 step KubeadmUpgraded failed"},
	}
	d := newRecoveryDialog(RecoveryOptions{}, offers)
	d.backend = &fakeRecovery{p: planFixture()}
	setMono(d)
	noBlink(d)
	d.SetSize(76, 40)
	v := ansi.Strip(d.View())
	for _, want := range []string{"01:02:03 UTC", "interrupted by SIGTERM"} {
		if !strings.Contains(strings.Join(strings.Fields(v), " "), want) {
			t.Errorf("the menu at 80 columns lost %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "…") {
		t.Errorf("a reason is cut:\n%s", v)
	}
	d.SetSize(56, 14)
	for i := range offers {
		v := ansi.Strip(d.View())
		if !strings.Contains(v, "› "+offers[i].Title) {
			t.Fatalf("offer %d chosen is out of view:\n%s", i, v)
		}
		press(t, d, tea.KeyPressMsg{Code: tea.KeyDown})
	}
	// Offers are counted, not lines: the first is wholly above, the
	// second in part; the dialog keeps to its 14 rows.
	v = ansi.Strip(d.View())
	if !strings.Contains(v, "(1↑) · q quit") || strings.Contains(v, "pgup") || strings.Contains(v, offers[0].Title) {
		t.Errorf("the footer should count the offers above, without scroll keys the menu does not take:\n%s", v)
	}
	if rows := strings.Count(v, "\n") + 1; rows > 14 {
		t.Errorf("the menu takes %d rows of 14:\n%s", rows, v)
	}
	d.SetSize(120, 12)
	if v := ansi.Strip(d.View()); !strings.Contains(v, "(1 offer above) · ? help · q quit") {
		t.Errorf("a wide menu says what is above in words:\n%s", v)
	}
	press(t, d, tea.KeyPressMsg{Code: tea.KeyUp}, tea.KeyPressMsg{Code: tea.KeyUp}, tea.KeyPressMsg{Code: tea.KeyUp})
	if v := ansi.Strip(d.View()); !strings.Contains(v, "(1 offer below) · ? help · q quit") {
		t.Errorf("the menu back at its first offer:\n%s", v)
	}
}

// A rollback another console finished since the menu opened: the dry run
// finds every step done, and the plan made again still lists them (the
// finished record keeps them). The dialog says there is nothing to do, as
// the command line does; enter ran the same dry run again, silently, each
// press writing its entries to the audit log.
func TestRecoveryWithEveryStepDoneSaysNothingToDo(t *testing.T) {
	f := &fakeRecovery{p: planFixture(), dryStatus: recovery.StepAlreadyDone}
	d := testDialog(RecoveryOptions{}, f)
	press(t, d, enter, enter) // plan, dry run
	v := ansi.Strip(d.View())
	if f.dryRuns != 1 || d.Stage() != "plan" || !strings.Contains(strings.Join(strings.Fields(v), " "), "Nothing to do: the dry run found every step already done") {
		t.Fatalf("dry runs %d, stage %s:\n%s", f.dryRuns, d.Stage(), v)
	}
	if strings.Contains(v, "enter dry run") {
		t.Errorf("the footer offers another dry run:\n%s", v)
	}
	press(t, d, enter, enter)
	if f.dryRuns != 1 || f.runs != 0 {
		t.Errorf("enter ran %d dry runs and %d runs, want none more", f.dryRuns-1, f.runs)
	}
	press(t, d, tea.KeyPressMsg{Code: tea.KeyEscape})
	if d.Stage() != "menu" {
		t.Errorf("esc: stage %s, want the menu", d.Stage())
	}
}

// Planned again after a dry run that found every step done, the action has
// other steps (the cluster moved on: a new rollout): the new plan is shown
// to run, not as nothing to do.
func TestRecoveryReplannedWithOtherStepsRuns(t *testing.T) {
	calls := 0
	other := planFixture()
	other.Steps = append(other.Steps[:1:1], recovery.Step{Name: "delete-new-machine", Title: "Delete the new machine", Object: "Machine eksa-system/e-newer", Change: "delete"})
	f := &fakeRecovery{dryStatus: recovery.StepAlreadyDone, planFor: func(recovery.Offer) (*recovery.Plan, error) {
		calls++
		if calls == 1 {
			return planFixture(), nil
		}
		return other, nil
	}}
	d := testDialog(RecoveryOptions{}, f)
	press(t, d, enter, enter) // plan, dry run (all done), planned again
	if v := ansi.Strip(d.View()); calls != 2 || strings.Contains(v, "Nothing to do") || !strings.Contains(v, "enter dry run") {
		t.Errorf("planned %d times; the new plan should run:\n%s", calls, v)
	}
}

// TestRecoveryDialogQuestionMarkShowsTheFullHelp: ? shows the full help
// in the dialog as on every screen, where it did nothing, in place of the
// keys' line, wrapped at 40 columns and no taller than the dialog. esc
// closes the help first, then goes back as before; a stage change closes
// it, and where a name is typed ? is a character.
func TestRecoveryDialogQuestionMarkShowsTheFullHelp(t *testing.T) {
	question := tea.KeyPressMsg{Code: '?', Text: "?"}
	esc := tea.KeyPressMsg{Code: tea.KeyEscape}
	for _, sz := range [][2]int{{80, 24}, {40, 12}} {
		d := testDialog(RecoveryOptions{}, &fakeRecovery{p: planFixture()})
		setMono(d)
		noBlink(d)
		d.SetSize(sz[0]-4, sz[1]-4)
		press(t, d, enter)
		if strings.Contains(ansi.Strip(d.View()), "close help") {
			t.Fatalf("the full help is shown before ?:\n%s", ansi.Strip(d.View()))
		}
		press(t, d, question)
		t.Run(fmt.Sprintf("plan/%dx%d", sz[0], sz[1]), func(t *testing.T) {
			out := ansi.Strip(d.View())
			if rows := strings.Count(out, "\n") + 1; rows > sz[1]-4 {
				t.Errorf("%d rows, more than the %d the App gives the dialog:\n%s", rows, sz[1]-4, out)
			}
			for _, want := range []string{"Recovery", "close help"} {
				if !strings.Contains(out, want) {
					t.Errorf("lacks %q:\n%s", want, out)
				}
			}
		})
		dialogGolden(t, d, fmt.Sprintf("plan-help-%d", sz[1]), sz[0])
		if _, cmd := d.Update(esc); cmd != nil || d.Stage() != "plan" || strings.Contains(ansi.Strip(d.View()), "close help") {
			t.Fatalf("esc under the help: stage %s, command %v; want the help closed, the plan kept:\n%s", d.Stage(), cmd != nil, ansi.Strip(d.View()))
		}
		press(t, d, question, esc, esc)
		if d.Stage() != "menu" {
			t.Fatalf("esc, the help closed: stage %s, want menu", d.Stage())
		}
		press(t, d, question, enter)
		if d.Stage() != "plan" || strings.Contains(ansi.Strip(d.View()), "close help") {
			t.Fatalf("enter from the menu under its help: stage %s; the help of the stage before still shown:\n%s", d.Stage(), ansi.Strip(d.View()))
		}
		press(t, d, enter)
		press(t, d, question)
		if d.Stage() != "confirm" || d.input.Value() != "?" || strings.Contains(ansi.Strip(d.View()), "close help") {
			t.Fatalf("? while a name is typed: stage %s, input %q; want it typed", d.Stage(), d.input.Value())
		}
	}
}

// The full help says the keys of the stage shown: in the menu, no "f
// restore" (a plan's key) nor page keys; while a run writes, the ctrl+c
// that stops it and esc that hides the dialog, and no "q quit" nor "enter
// continue", which do nothing then.
func TestRecoveryDialogFullHelpIsTheStages(t *testing.T) {
	d := testDialog(RecoveryOptions{}, &fakeRecovery{p: planFixture()})
	helpOf := func() string {
		var b strings.Builder
		for _, col := range d.FullHelp() {
			for _, k := range col {
				if !k.Enabled() {
					continue // the help leaves it out
				}
				b.WriteString(k.Help().Key + " " + k.Help().Desc + "\n")
			}
		}
		return b.String()
	}
	if h := helpOf(); strings.Contains(h, "f restore") || strings.Contains(h, "pgup") || !strings.Contains(h, "enter plan") || !strings.Contains(h, "esc close") {
		t.Errorf("menu:\n%s", h)
	}
	d.stage = recRunning
	if h := helpOf(); !strings.Contains(h, "ctrl+c stop") || !strings.Contains(h, "esc hide") || strings.Contains(h, "q quit") ||
		strings.Contains(h, "enter") || strings.Contains(h, "ctrl+z") {
		t.Errorf("running:\n%s", h)
	}
	d.stage = recDone
	if h := helpOf(); !strings.Contains(h, "enter close") || strings.Contains(h, "f restore") || strings.Contains(h, "y copy") {
		t.Errorf("done, no command shown:\n%s", h)
	}
	d.cmds = []string{"upgrade-console lock clear lease --cluster mgmt"}
	if h := helpOf(); !strings.Contains(h, "y copy") {
		t.Errorf("done, a command shown:\n%s", h)
	}
}

// With the full help open in a menu whose chosen offer is taller than the
// lines left, the offer's first line (the action enter plans) stays in
// view, where its end did and the title scrolled away.
func TestRecoveryMenuKeepsTheChosenOffersTitleUnderTheHelp(t *testing.T) {
	long := strings.Repeat("step KubeadmUpgraded failed: container kubeadm-upgrader waiting: CrashLoopBackOff ", 6)
	d := newRecoveryDialog(RecoveryOptions{}, []recovery.Offer{{Action: recovery.ActionNodeRetry, Node: "mgmt-l7nhn",
		Title: "Retry the in-place upgrade of node mgmt-l7nhn", Why: long}})
	setMono(d)
	noBlink(d)
	d.SetSize(76, 20)
	press(t, d, tea.KeyPressMsg{Code: '?', Text: "?"})
	if out := ansi.Strip(d.View()); !strings.Contains(out, "Retry the in-place upgrade of node mgmt-l7nhn") || !strings.Contains(out, "close help") {
		t.Errorf("the chosen offer's title is out of view under the help:\n%s", out)
	}
}

// The footer keeps every key of the stage whole, and q quit where the
// stage quits, at each width the goldens cover and on a short screen
// that scrolls: on one row at 40 columns the dialog's edge cut "esc
// close" and "q quit", and at 80 a run under way lost the end of its
// ctrl+c key. The dialog still keeps to its rows.
func TestRecoveryDialogFooterKeepsItsKeysAtEveryWidth(t *testing.T) {
	for _, w := range []int{40, 80, 120, 250} {
		for _, h := range []int{36, 20} {
			f := &fakeRecovery{p: planFixture()}
			d := testDialog(RecoveryOptions{}, f)
			setMono(d)
			d.SetSize(w-4, h)
			check := func(stage string) {
				t.Helper()
				v := ansi.Strip(d.View())
				if rows := strings.Count(v, "\n") + 1; rows > h {
					t.Errorf("%d columns, %d rows, %s: the dialog takes %d rows:\n%s", w, h, stage, rows, v)
				}
				flat := strings.Join(strings.Fields(strings.NewReplacer("│", " ").Replace(v)), " ")
				keys := strings.Split(d.footer(), " · ")
				if d.quits() {
					keys = append(keys, "q quit")
				}
				for _, k := range keys {
					if !strings.Contains(flat, k) {
						t.Errorf("%d columns, %d rows, %s: the footer lost %q:\n%s", w, h, stage, k, v)
					}
				}
			}
			check("menu")
			press(t, d, enter)
			check("plan")
			press(t, d, enter)
			check("confirm")
			d.stage = recRunning
			d.relayout()
			check("running")
			d.stopping = true
			d.relayout()
			check("stopping")
		}
	}
}

// TestRecoveryDialogFitsAShortTerminal: at 40x14 (the App gives the dialog
// 36x10) the typed confirmation's prompt took seven fixed rows and pushed
// the dialog past the screen, whose top the App then cut. At every stage the
// dialog fits; in the typed confirmation the prompt's text scrolls with the
// plan, opens scrolled to the name to type, and the input and the keys stay,
// a hint under the input too. Shorter than 14 rows the dialog's fixed rows
// (title, input, hint, keys) alone can be more than the screen, and the App
// cuts its top, as before.
func TestRecoveryDialogFitsAShortTerminal(t *testing.T) {
	for _, sz := range [][2]int{{40, 14}, {40, 16}, {60, 14}, {80, 14}} {
		w, h := sz[0]-4, sz[1]-4 // App.dialogSize
		f := &fakeRecovery{p: planFixture()}
		d := testDialog(RecoveryOptions{}, f)
		setMono(d)
		d.SetSize(w, h)
		check := func(stage string, want ...string) {
			t.Helper()
			v := ansi.Strip(d.View())
			rows := strings.Split(v, "\n")
			if len(rows) > h {
				t.Errorf("%dx%d, %s: the dialog takes %d rows, more than %d:\n%s", sz[0], sz[1], stage, len(rows), h, v)
			}
			for i, r := range rows {
				if ansi.StringWidth(r) > w {
					t.Errorf("%dx%d, %s: row %d is wider than %d: %q", sz[0], sz[1], stage, i, w, r)
				}
			}
			flat := strings.Join(strings.Fields(strings.NewReplacer("│", " ").Replace(v)), " ")
			for _, s := range want {
				if !strings.Contains(flat, s) {
					t.Errorf("%dx%d, %s: the dialog lacks %q:\n%s", sz[0], sz[1], stage, s, v)
				}
			}
		}
		check("menu", "Recovery", "esc close")
		press(t, d, enter)
		check("plan", "Recovery", "esc back")
		press(t, d, enter)
		press(t, d, typeText("mg")...)
		check("confirm", "Recovery", `Type "mgmt-etcd"`, "> mg", "enter run", "esc back")
		press(t, d, enter) // not the name: the hint under the input
		check("confirm, refused", "Recovery", `Type "mgmt-etcd"`, "> mg", "exactly to run it", "enter run", "esc back")
		for range 3 {
			press(t, d, tea.KeyPressMsg{Code: tea.KeyUp})
		}
		check("confirm, scrolled up", "Recovery", "> mg", "enter run", "esc back")
		press(t, d, tea.KeyPressMsg{Code: tea.KeyBackspace}, tea.KeyPressMsg{Code: tea.KeyBackspace})
		press(t, d, typeText("mgmt-etcd")...)
		press(t, d, enter)
		check("done", "Recovery", "enter/esc close")
	}
}

// A typed confirmation with steps out of view says so at 40 columns, down
// to the bare counts: beside "enter run · esc back" the counts with their
// "↑/↓" did not fit once one had two digits, and the steps below the
// prompt were hidden with no sign (D10).
func TestRecoveryConfirmSaysWhatIsOutOfViewAt40Columns(t *testing.T) {
	for _, h := range []int{14, 16, 20} {
		d := testDialog(RecoveryOptions{}, &fakeRecovery{p: planFixture()})
		setMono(d)
		d.SetSize(36, h-4) // App.dialogSize at 40 columns
		press(t, d, enter, enter)
		if d.stage != recConfirm {
			t.Fatalf("height %d: stage %v, want the confirmation", h, d.stage)
		}
		if d.maxOffset == 0 {
			continue // all of it in view
		}
		above, below := d.offset, d.maxOffset-d.offset
		v := ansi.Strip(d.View())
		if want := fmt.Sprintf("%d↑ %d↓", above, below); !strings.Contains(v, want) {
			t.Errorf("height %d: %d rows above and %d below, the dialog does not say %q:\n%s", h, above, below, want, v)
		}
	}
}

// At 40x10 the App gives the menu one body row: the chosen offer's title
// showed, its reason under it was cut with no sign, and no key reached it
// (↑/↓ chose among offers, and pgup/pgdn were not the menu's). The footer
// counts the offer's rows out of view as the plan counts its own, ↓ and
// pgdn go through them, ↑ and pgup back; at the offer's last row ↓ chooses
// the next, whose title shows, as ↑ back shows the first's.
func TestRecoveryMenuScrollsACutOffer(t *testing.T) {
	why := "new etcd member mgmt-etcd-4f5pw not ready since its creation at 01:02:03 UTC, the rollout waiting on it"
	rollback := recovery.Offer{Action: recovery.ActionEtcdRollback, Title: "Roll back the etcd rollout", Why: why}
	lock := recovery.Offer{Action: recovery.ActionLockClear, Title: "Clear the upgrade lock", Why: "stale upgrade lock"}
	t.Run("one offer", func(t *testing.T) { scrollCutOffer(t, why, []recovery.Offer{rollback}) })
	t.Run("two offers", func(t *testing.T) { scrollCutOffer(t, why, []recovery.Offer{rollback, lock}) })

	// Wide, both counts fit: the offers beside esc close, the cut offer's
	// rows after it, each in words.
	rollback.Why = strings.Repeat(why+"; ", 3)
	d := newRecoveryDialog(RecoveryOptions{backend: &fakeRecovery{}}, []recovery.Offer{rollback, lock})
	a := recoveryOverDashboard(120, 10, d)
	if screen := ansi.Strip(a.View().Content); !strings.Contains(screen, "↑/↓ scroll · enter plan · esc close (1 offer below) · ↑/↓/pgup/pgdn (0 above, 2 below) · ? help · q quit") {
		t.Errorf("at 120x10 the footer should count the offer below and the cut offer's rows:\n%s", screen)
	}
}

// At 40x10 the menu's count was the chosen offer's rows alone ("↑/↓ 0↑ 5↓"):
// the two offers below it, which ↓ reaches next, had no sign, as their
// own count ("(2↓)") does not fit beside esc close at 40 columns. The one
// count there is of the menu's rows out of view, theirs with them, above
// and below, as the operator moves from offer to offer.
func TestRecoveryMenuAt40x10CountsTheOffersOutOfView(t *testing.T) {
	why := "new etcd member mgmt-etcd-4f5pw not ready since its creation at 01:02:03 UTC, the rollout waiting on it"
	offers := []recovery.Offer{
		{Action: recovery.ActionEtcdRollback, Title: "Roll back the etcd rollout", Why: why},
		{Action: recovery.ActionLockClear, Title: "Clear the upgrade lock", Why: "stale upgrade lock"},
		{Action: recovery.ActionLockClear, Title: "Clear upgrade lock markers", Why: "stale: paused"},
	}
	d := newRecoveryDialog(RecoveryOptions{backend: &fakeRecovery{}}, offers)
	a := recoveryOverDashboard(40, 10, d)
	check := func(what string, cursor, above, below int) {
		t.Helper()
		screen := ansi.Strip(a.View().Content)
		requireFits(t, what, a.View().Content, 40, 10)
		if want := fmt.Sprintf("↑/↓ %d↑ %d↓", above, below); d.cursor != cursor || !strings.Contains(screen, want) {
			t.Errorf("%s: offer %d chosen, want %d, and the count %q:\n%s", what, d.cursor, cursor, want, screen)
		}
	}
	// The first offer: its title and its reason's 5 rows, each of the
	// others a title and a row.
	if len(d.body) != 10 || d.visible != 1 {
		t.Fatalf("the menu has %d rows, %d in view: want 10, 1", len(d.body), d.visible)
	}
	check("opened", 0, 0, 9)
	down := tea.KeyPressMsg{Code: tea.KeyDown}
	for range 6 {
		pressApp(t, a, down)
	}
	check("the second offer chosen", 1, 6, 3)
	pressApp(t, a, down, down, down)
	check("the last offer's reason", 2, 9, 0)
}

func scrollCutOffer(t *testing.T, why string, offers []recovery.Offer) {
	f := &fakeRecovery{p: planFixture()}
	d := newRecoveryDialog(RecoveryOptions{backend: f}, offers)
	a := recoveryOverDashboard(40, 10, d)
	counts := regexp.MustCompile(`(\d+)↑ (\d+)↓`)
	// view checks the screen and the dialog fit, and returns the screen
	// and the rows of the chosen offer above and below the view, as the
	// footer counts them (-1 each where it counts none).
	view := func(what string) (string, int, int) {
		t.Helper()
		screen := ansi.Strip(a.View().Content)
		requireFits(t, what, a.View().Content, 40, 10)
		dw, dh := a.dialogSize()
		requireFits(t, what+" (the dialog alone)", d.View(), dw, dh)
		m := counts.FindStringSubmatch(screen)
		if m == nil {
			return screen, -1, -1
		}
		above, _ := strconv.Atoi(m[1])
		below, _ := strconv.Atoi(m[2])
		return screen, above, below
	}
	down, up := tea.KeyPressMsg{Code: tea.KeyDown}, tea.KeyPressMsg{Code: tea.KeyUp}

	screen, above, below := view("the menu opened")
	if d.selTo-d.selFrom <= d.visible {
		t.Fatalf("the first offer fits at 40x10: the test wants it cut\n%s", screen)
	}
	// At 40 columns the offers below are not counted beside esc close:
	// the count is of the menu's rows out of view, those of the offers
	// after the chosen one (rest) with them.
	rest := len(d.body) - d.selTo
	if !strings.Contains(screen, "› Roll back the etcd rollout") || above != 0 || below != d.maxOffset || below-rest < 1 {
		t.Fatalf("the menu opens on the offer's title, the menu's rows below counted (%d↑ %d↓, %d rows below):\n%s", above, below, d.maxOffset, screen)
	}
	// ↓ through the reason: every word of it seen, the count going down.
	var seen strings.Builder
	for n := below; n > rest; n-- {
		pressApp(t, a, down)
		screen, above, below = view("the menu scrolled down")
		seen.WriteString(screen)
		if below != n-1 || d.cursor != 0 {
			t.Fatalf("↓ with %d rows below: %d↑ %d↓, offer %d chosen:\n%s", n, above, below, d.cursor, screen)
		}
	}
	for _, w := range strings.Fields(why) {
		if !strings.Contains(seen.String(), w) {
			t.Errorf("%q of the offer's reason never came into view", w)
		}
	}
	// pgup back to its title, pgdn to its end, a page at a time: within
	// the offer.
	for n := above; n > 0; {
		pressApp(t, a, tea.KeyPressMsg{Code: tea.KeyPgUp})
		if screen, above, _ = view("the menu paged up"); above < 0 || above >= n {
			t.Fatalf("pgup with %d rows above: %d above:\n%s", n, above, screen)
		}
		n = above
	}
	if !strings.Contains(screen, "› Roll back the etcd rollout") {
		t.Errorf("pgup to the top: the offer's title is not in view:\n%s", screen)
	}
	_, _, below = view("the menu paged up")
	for n := below; n > rest; {
		pressApp(t, a, tea.KeyPressMsg{Code: tea.KeyPgDown})
		if screen, _, below = view("the menu paged down"); below < rest || below >= n || d.cursor != 0 {
			t.Fatalf("pgdn with %d rows below: %d below, offer %d chosen:\n%s", n, below, d.cursor, screen)
		}
		n = below
	}
	if !strings.Contains(screen, "waiting on it") {
		t.Errorf("pgdn to the end: the reason's end is not in view:\n%s", screen)
	}
	if len(offers) == 1 {
		pressApp(t, a, down)
		if screen, _, below = view("↓ at the one offer's end"); below != 0 || d.cursor != 0 {
			t.Errorf("↓ at the one offer's end: %d below, offer %d chosen:\n%s", below, d.cursor, screen)
		}
		press(t, d, enter)
		if d.Stage() != "plan" || len(f.offers) != 1 || f.offers[0].Action != recovery.ActionEtcdRollback {
			t.Errorf("enter, the offer scrolled: stage %s, planned %+v; want the etcd rollback planned", d.Stage(), f.offers)
		}
		return
	}
	// ↓ at its end chooses the next offer, whose title shows.
	pressApp(t, a, down)
	if screen, _, _ = view("the next offer chosen"); d.cursor != 1 || !strings.Contains(screen, "› Clear the upgrade lock") {
		t.Errorf("↓ at the offer's end: offer %d chosen:\n%s", d.cursor, screen)
	}
	// ↑ chooses the first again, from its title (the action enter
	// plans), not its last row.
	pressApp(t, a, up)
	if screen, above, _ = view("the first offer chosen again"); d.cursor != 0 || above != 0 || !strings.Contains(screen, "› Roll back the etcd rollout") {
		t.Errorf("↑ back to the first offer: offer %d, %d above:\n%s", d.cursor, above, screen)
	}
	pressApp(t, a, down, down)
	press(t, d, enter)
	if d.Stage() != "plan" || len(f.offers) != 1 || f.offers[0].Action != recovery.ActionEtcdRollback {
		t.Errorf("enter, the offer scrolled: stage %s, planned %+v; want the etcd rollback planned", d.Stage(), f.offers)
	}
}

// At 40x10 the one offer's reason is out of view, below its title: no
// offer is wholly above or below, and the count beside esc close was
// empty, "esc close ()".
func TestRecoveryMenuCountsNoOffersWhereNoneIsOutOfView(t *testing.T) {
	d := newRecoveryDialog(RecoveryOptions{}, []recovery.Offer{{Action: recovery.ActionEtcdRollback,
		Title: "Roll back the etcd rollout", Why: "the new member mgmt-etcd-x7k2p has not been ready for 20m"}})
	setMono(d)
	noBlink(d)
	d.SetSize(36, 6)
	if d.maxOffset == 0 {
		t.Fatal("the menu fits: the test wants the offer's reason out of view")
	}
	v := ansi.Strip(d.View())
	if strings.Contains(v, "()") || !strings.Contains(v, "esc close") {
		t.Errorf("the footer should say esc close, with no empty count:\n%s", v)
	}
}

// The dialog's full help at 40x10 has room for one row of its ten, and
// a row that counts the rest: ↑/↓ reach them, where it showed "?
// help" and "esc close help" alone and no key reached the others.
func TestRecoveryHelpAt40x10ScrollsToItsLastRow(t *testing.T) {
	d := testDialog(RecoveryOptions{}, &fakeRecovery{p: planFixture()})
	a := recoveryOverDashboard(40, 10, d)
	press(t, d, enter)
	press(t, d, tea.KeyPressMsg{Code: '?', Text: "?"})
	rows := strings.Split(ansi.Strip(fullHelpFitting(d.help, d.FullHelp(), d.innerWidth())), "\n")
	last := strings.TrimSpace(rows[len(rows)-1])
	for range len(rows) {
		press(t, d, tea.KeyPressMsg{Code: tea.KeyDown})
	}
	screen := ansi.Strip(a.View().Content)
	requireFits(t, "the help at 40x10", a.View().Content, 40, 10)
	if d.Stage() != "plan" || !d.help.ShowAll || !strings.Contains(screen, last) || !outOfView.MatchString(screen) {
		t.Errorf("the help at 40x10, ↓ %d times: its last row %q or the count is not in view:\n%s", len(rows), last, screen)
	}
}

// Once the operator scrolled a run's view, it stopped following the step
// under way for good, even scrolled back to it: the next step began out of
// view. Scrolled back to where following puts it, it follows again (as
// less +F or a log viewer does); scrolled elsewhere (the body's end, G), it
// stays where the operator took it.
func TestRecoveryRunFollowsAgainOnceScrolledBack(t *testing.T) {
	p := planFixture()
	for i := range 6 {
		p.Steps = append(p.Steps, recovery.Step{Name: fmt.Sprintf("wait-%d", i), Title: fmt.Sprintf("Wait for the etcd member number %d to be ready again", i), Object: "Machine eksa-system/e-a"})
	}
	d := testDialog(RecoveryOptions{}, &fakeRecovery{p: p})
	a := recoveryOverDashboard(40, 10, d)
	press(t, d, enter, enter)
	press(t, d, typeText(p.Confirm)...)
	d.Update(enter) // its steps come as the messages below
	step := func(i int, st recovery.StepStatus) {
		d.Update(recStepMsg{r: recovery.StepResult{Index: i, Step: p.Steps[i].Name, Title: p.Steps[i].Title, Status: st, Detail: "ok"}})
	}
	begin := func(i int) {
		if i > 0 {
			step(i-1, recovery.StepDone)
		}
		step(i, recovery.StepRunning)
	}
	for i := range 4 {
		begin(i)
	}
	inView := func(n int) bool {
		return strings.Contains(ansi.Strip(a.View().Content), fmt.Sprintf("%d. Wait for the", n))
	}
	if !inView(4) || d.offset == 0 {
		t.Fatalf("step 4 under way is not in view, or nothing is above it (offset %d):\n%s", d.offset, ansi.Strip(a.View().Content))
	}
	up, down := tea.KeyPressMsg{Code: tea.KeyUp}, tea.KeyPressMsg{Code: tea.KeyDown}
	press(t, d, up, up, down, down)
	begin(4)
	if !inView(5) {
		t.Errorf("scrolled up and back down to the step under way, the view no longer follows: step 5 is out of view:\n%s", ansi.Strip(a.View().Content))
	}
	press(t, d, tea.KeyPressMsg{Code: tea.KeyPgUp}, tea.KeyPressMsg{Code: tea.KeyPgDown})
	begin(5)
	if !inView(6) {
		t.Errorf("paged up and back down, the view no longer follows: step 6 is out of view:\n%s", ansi.Strip(a.View().Content))
	}
	press(t, d, up)
	held := d.offset
	begin(6)
	if d.offset != held {
		t.Errorf("scrolled away, the view moved from %d to %d as the next step began", held, d.offset)
	}
}

// At 40x10, while a run goes on, the view follows the step under way: it
// showed the body's end, the wrapped title of the last step, not yet
// begun, and none of the step that was; at the end it opens at the
// result's first line, where it showed the closing message's last two
// rows, its first out of view. Scrolled down from there, it stays where
// the operator took it.
func TestRecoveryRunAt40x10FollowsTheStepUnderWayAndOpensTheResultAtItsStart(t *testing.T) {
	p := planFixture()
	for i := range 5 {
		p.Steps = append(p.Steps, recovery.Step{Name: fmt.Sprintf("wait-%d", i), Title: fmt.Sprintf("Wait for the etcd member number %d to be ready again", i), Object: "Machine eksa-system/e-a"})
	}
	d := testDialog(RecoveryOptions{}, &fakeRecovery{p: p})
	a := recoveryOverDashboard(40, 10, d)
	press(t, d, enter, enter)
	press(t, d, typeText(p.Confirm)...)
	// The run's command is not run: its steps come as the messages below.
	d.Update(enter)
	if d.stage != recRunning {
		t.Fatalf("stage %v, want running", d.Stage())
	}
	for i := range 3 {
		r := recovery.StepResult{Index: i, Step: p.Steps[i].Name, Title: p.Steps[i].Title, Status: recovery.StepRunning}
		d.Update(recStepMsg{r: r})
		if i < 2 {
			r.Status, r.Detail = recovery.StepDone, "ok"
			d.Update(recStepMsg{r: r})
		}
	}
	screen := ansi.Strip(a.View().Content)
	requireFits(t, "the run at 40x10", a.View().Content, 40, 10)
	if !strings.Contains(screen, "3. Wait for the etcd") || !outOfView.MatchString(screen) {
		t.Errorf("the run at 40x10: the step under way (3.) or the count of the rows out of view is not in view:\n%s", screen)
	}

	d = testDialog(RecoveryOptions{}, &fakeRecovery{p: planFixture()})
	a = recoveryOverDashboard(40, 10, d)
	press(t, d, enter, enter)
	press(t, d, typeText("mgmt-etcd")...)
	press(t, d, enter)
	if d.stage != recDone {
		t.Fatalf("stage %v, want done", d.Stage())
	}
	screen = ansi.Strip(a.View().Content)
	if !strings.Contains(screen, "etcd ready on the old version") || !outOfView.MatchString(screen) {
		t.Errorf("the run's end at 40x10: the result's first line or the count is not in view:\n%s", screen)
	}
	press(t, d, tea.KeyPressMsg{Code: tea.KeyDown})
	if screen = ansi.Strip(a.View().Content); !strings.Contains(screen, "resume with: upgrade-console") {
		t.Errorf("the run's end at 40x10, ↓: the result's next line is not in view:\n%s", screen)
	}
}

// The menu's offer titles were cut at the dialog's edge: at 40x10 a node
// retry read "Retry the in-place upgrade of…", at 60x15 a worker's long
// name lost its end, and two failed nodes' offers read the same. Each
// title keeps its node, whose end tells two machines of a group apart.
func TestRecoveryMenuTitlesKeepTheNode(t *testing.T) {
	nodes := []string{"mgmt-md-0-5c9f7b8d4-k2x7q", "mgmt-md-0-5c9f7b8d4-p9z3m"}
	var offers []recovery.Offer
	for _, n := range nodes {
		offers = append(offers, recovery.Offer{Action: recovery.ActionNodeRetry, Node: n,
			Title: "Retry the in-place upgrade of node " + n, Why: "step KubeadmUpgraded failed: container kubeadm-upgrader exited 1"})
	}
	offers = append(offers, recovery.Offer{Action: recovery.ActionLockClear, Title: "Clear upgrade lock markers", Why: "stale: paused"})
	for _, sz := range [][2]int{{40, 10}, {60, 15}, {120, 30}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			d := newRecoveryDialog(RecoveryOptions{}, append([]recovery.Offer(nil), offers...))
			d.backend = &fakeRecovery{p: planFixture()}
			noBlink(d)
			app := newTestApp(Options{Theme: themes.Mono, ClusterName: "mgmt"})
			app.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
			app.Update(OpenDialogMsg{Dialog: d})
			setMono(d)
			for i, n := range nodes {
				d.cursor, d.offset = i, 0
				d.relayout()
				out := ansi.Strip(app.View().Content)
				if !strings.Contains(out, "› Retry") || !strings.Contains(out, n[len(n)-5:]) {
					t.Errorf("offer %d's title does not name its node %s:\n%s", i, n, out)
				}
			}
			d.cursor, d.offset = 0, 0
			d.relayout()
			golden.RequireEqual(t, ansi.Strip(app.View().Content))
		})
	}
}

// g/G (home/end) go to the top and the bottom of every list and pane, but
// the recovery menu took neither: a menu of a failed node each was gone
// through one ↓ at a time. They choose the first and the last offer, the
// chosen one in view from its title (40x10: the title alone), and ? names
// them.
func TestRecoveryMenuGoesToTheFirstAndLastOffer(t *testing.T) {
	var offers []recovery.Offer
	for _, n := range []string{"mgmt-cp-a", "mgmt-md-0-b", "mgmt-md-0-c", "mgmt-md-1-d"} {
		offers = append(offers, recovery.Offer{Action: recovery.ActionNodeRetry, Node: n,
			Title: "Retry the in-place upgrade of node " + n, Why: "step KubeadmUpgraded failed: container kubeadm-upgrader exited 1"})
	}
	G := tea.KeyPressMsg{Code: 'G', Text: "G"}
	g := tea.KeyPressMsg{Code: 'g', Text: "g"}
	for _, sz := range [][2]int{{36, 8}, {76, 20}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			d := newRecoveryDialog(RecoveryOptions{}, append([]recovery.Offer(nil), offers...))
			d.backend = &fakeRecovery{p: planFixture()}
			setMono(d)
			d.SetSize(sz[0], sz[1])
			for _, c := range []struct {
				k    tea.KeyPressMsg
				want int
			}{{G, 3}, {g, 0}, {tea.KeyPressMsg{Code: tea.KeyEnd}, 3}, {tea.KeyPressMsg{Code: tea.KeyHome}, 0}} {
				press(t, d, c.k)
				out := ansi.Strip(d.View())
				if d.cursor != c.want || !strings.Contains(out, "› Retry") || !strings.Contains(out, offers[c.want].Node) {
					t.Errorf("%s: cursor %d, want %d, its title in view:\n%s", c.k, d.cursor, c.want, out)
				}
			}
			press(t, d, tea.KeyPressMsg{Code: '?', Text: "?"})
			help := strings.Join(d.fullHelpRows(), "\n")
			for _, want := range []string{"home/g", "first offer", "end/G", "last offer"} {
				if !strings.Contains(help, want) {
					t.Errorf("the full help lacks %q:\n%s", want, help)
				}
			}
		})
	}
}

// R in read-only mode (watch --read-only, apply --tui --read-only) did
// nothing at all: the command line binds no recovery action then, and
// matchAction skipped the dangerous one a test gives it. It says why on
// the last line, in the form that fits, and opens nothing, whatever the
// cluster shows (here a stuck etcd member R would offer to roll back).
func TestRecoveryKeyReadOnlySaysWhy(t *testing.T) {
	rec := RecoveryAction(RecoveryOptions{backend: &fakeRecovery{p: planFixture()}, Now: func() time.Time { return t0 }})
	state := stuckEtcdState(t0)
	if !rec.Offered(state) {
		t.Fatal("the fixture offers nothing")
	}
	r := tea.KeyPressMsg{Code: 'R', Text: "R"}
	for _, c := range []struct {
		name    string
		w       int
		actions []Action
		want    string
	}{
		{"watch --read-only, 80 columns", 80, nil, readOnlyRecovery[1]},
		{"an action given, 120 columns", 120, []Action{rec}, readOnlyRecovery[0]},
		{"40 columns", 40, nil, readOnlyRecovery[2]},
	} {
		t.Run(c.name, func(t *testing.T) {
			app := newTestApp(Options{Theme: themes.Mono, ClusterName: "mgmt", ReadOnly: true, Actions: c.actions})
			app.Update(tea.WindowSizeMsg{Width: c.w, Height: 24})
			app.Update(SnapshotMsg{State: state})
			_, cmd := app.Update(r)
			runCmds(cmd, func(m tea.Msg) { app.Update(m) })
			if len(app.dialogs) != 0 {
				t.Fatal("R opened a dialog in read-only mode")
			}
			if last := strings.TrimSpace(lastRow(app)); !strings.HasSuffix(last, c.want) {
				t.Errorf("the last line says %q, want %q", last, c.want)
			}
		})
	}
}

// R where the command line could make no recovery action though the
// console is not read-only (the audit log cannot be opened: watch gives
// NoRecovery) did nothing at all, the reason in the log file alone. It
// says why on the last line, the longest form that fits, and opens nothing.
func TestRecoveryKeyWithoutActionSaysWhy(t *testing.T) {
	why := []string{
		"audit log /home/op/.local/state/upgrade-console/audit.log: is a directory (set XDG_STATE_HOME elsewhere)",
		"audit log: is a directory",
		"no audit log",
	}
	r := tea.KeyPressMsg{Code: 'R', Text: "R"}
	for _, c := range []struct {
		w    int
		want string
	}{{140, "R: no recovery: " + why[0]}, {60, "R: no recovery: " + why[1]}, {40, "R: no recovery: " + why[2]}} {
		t.Run(fmt.Sprint(c.w), func(t *testing.T) {
			app := newTestApp(Options{Theme: themes.Mono, ClusterName: "mgmt", NoRecovery: why})
			app.Update(tea.WindowSizeMsg{Width: c.w, Height: 24})
			app.Update(SnapshotMsg{State: stuckEtcdState(t0)})
			_, cmd := app.Update(r)
			runCmds(cmd, func(m tea.Msg) { app.Update(m) })
			if len(app.dialogs) != 0 {
				t.Fatal("R opened a dialog with no recovery action")
			}
			if last := strings.TrimSpace(lastRow(app)); !strings.HasSuffix(last, c.want) {
				t.Errorf("the last line says %q, want %q", last, c.want)
			}
		})
	}
}
