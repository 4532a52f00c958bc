package tui

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/report"
	"github.com/upgrade-console/upgrade-console/themes"
)

// chanSource is a watcher stand-in: the test publishes on its channel.
type chanSource struct{ ch chan *model.ClusterState }

func newChanSource(t *testing.T) *chanSource {
	s := &chanSource{ch: make(chan *model.ClusterState, 1)}
	t.Cleanup(func() { close(s.ch) })
	return s
}

func (s *chanSource) Updates() <-chan *model.ClusterState { return s.ch }

// startApp runs the App in a teatest program at 80×24, publishes the first
// snapshot and waits until the screen shows it. Keys sent afterwards reach
// the program in order, before the Quit of finish, so tests read the result
// from the final model instead of waiting on the (diffed) output stream.
func startApp(t *testing.T, first *model.ClusterState, opts Options) (*teatest.TestModel, *chanSource) {
	t.Helper()
	src := newChanSource(t)
	opts.Source = src
	opts.Theme = themes.Mono
	if opts.Clock == nil {
		opts.Clock = clocktesting.NewFakePassiveClock(t0)
	}
	app := NewApp(opts, NewDashboard(opts))
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(80, 24),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ASCII)))
	src.ch <- first
	waitForText(t, tm, "gen ")
	return tm, src
}

func waitForText(t *testing.T, tm *teatest.TestModel, text string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte(text))
	}, teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
}

// finish quits and returns the final App and its screen as plain text.
func finish(t *testing.T, tm *teatest.TestModel) (*App, string) {
	t.Helper()
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	app := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*App)
	return app, ansi.Strip(app.View().Content)
}

// clockedApp runs an App whose clock the test moves from inside the
// program: a stepMsg steps clk and ticks, in order with every other message.
// Stepped from the test's goroutine, the clock ran ahead of the messages
// still queued, and the program read its ten minutes at once.
type clockedApp struct {
	*App
	clk *clocktesting.FakeClock
}

type stepMsg time.Duration

func (c clockedApp) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if d, ok := msg.(stepMsg); ok {
		c.clk.Step(time.Duration(d))
		msg = clockMsg{}
	}
	_, cmd := c.App.Update(msg)
	return c, cmd
}

// advance moves the clock by d as a running console sees it: in steps
// shorter than report.StoppedAfter, each answered by a clock tick. One step
// of minutes read as a process that had stopped whenever the program's own
// one-second tick (real time, not clk's) had looked at the clock before it:
// the judge then waited for a catch-up that the fake clock never ended, and
// the test timed out waiting for the quit (TestFlowQuitOnFailure, about one
// run in thirty).
func advance(tm *teatest.TestModel, d time.Duration) {
	step := report.StoppedAfter / 2
	for d > 0 {
		s := min(step, d)
		tm.Send(stepMsg(s))
		d -= s
	}
}

func dashboardOf(t *testing.T, a *App) *Dashboard {
	t.Helper()
	d, ok := a.screens[0].(*Dashboard)
	if !ok {
		t.Fatalf("first screen is %T", a.screens[0])
	}
	return d
}

func TestFlowStartShowsSnapshot(t *testing.T) {
	tm, _ := startApp(t, fixtureMidEtcd(), Options{})
	app, screen := finish(t, tm)
	for _, want := range []string{"EKS-A v0.21.1", "k8s 1.30 → 1.31", "● live", "ETCD", "upgrading", "provisioning", "NODES", "12 md-0 workers not started"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
	if got := dashboardOf(t, app).State().Version; got != 42 {
		t.Errorf("dashboard holds snapshot %d, want 42", got)
	}
}

func TestFlowFollowsNewSnapshots(t *testing.T) {
	tm, src := startApp(t, fixtureMidEtcd(), Options{})
	next := fixtureInPlaceFailed()
	src.ch <- next
	waitForText(t, tm, "stacked etcd")
	app, screen := finish(t, tm)
	if got := dashboardOf(t, app).State().Version; got != next.Version {
		t.Fatalf("dashboard holds snapshot %d, want %d", got, next.Version)
	}
	if !strings.Contains(screen, "mgmt-cp-b8k4m") || !strings.Contains(screen, "kubeadm") {
		t.Fatalf("failed node and step not on screen:\n%s", screen)
	}
}

func TestFlowPaneSwitching(t *testing.T) {
	tm, _ := startApp(t, fixtureMidEtcd(), Options{})
	// Focus starts on the nodes table; tab goes to events, then wraps to
	// the cluster pane; shift+tab comes back.
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift})
	app, _ := finish(t, tm)
	if got := dashboardOf(t, app).Focus(); got != "CLUSTER" {
		t.Fatalf("focus = %s, want CLUSTER", got)
	}
}

func TestFlowZoom(t *testing.T) {
	tm, _ := startApp(t, fixtureMidEtcd(), Options{})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab}) // events
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	app, screen := finish(t, tm)
	d := dashboardOf(t, app)
	if !d.Zoomed() || d.Focus() != "EVENTS" {
		t.Fatalf("zoomed=%v focus=%s, want the events pane zoomed", d.Zoomed(), d.Focus())
	}
	if strings.Contains(screen, "NODES") || !strings.Contains(screen, "spec applied by upgrade-console") {
		t.Fatalf("zoomed screen should show only events:\n%s", screen)
	}
}

// filterFlow types a node filter on a dashboard of n nodes and applies it.
func filterFlow(t *testing.T, n int, filter string) (*App, string) {
	t.Helper()
	tm, _ := startApp(t, fixtureLarge(n), Options{})
	tm.Type("/")
	tm.Type(filter)
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	return finish(t, tm)
}

func TestFlowFilter(t *testing.T) {
	app, screen := filterFlow(t, 1000, "md-7-00042")
	d := dashboardOf(t, app)
	if d.Filter() != "md-7-00042" || d.filtering {
		t.Fatalf("filter = %q (typing=%v), want md-7-00042 applied", d.Filter(), d.filtering)
	}
	if !strings.Contains(screen, "mgmt-md-7-00042") || !strings.Contains(screen, "1 shown") {
		t.Fatalf("filtered table wrong:\n%s", screen)
	}
	if strings.Contains(screen, "workers up to date (e to expand)") {
		t.Fatalf("a filtered table must not fold rows into groups:\n%s", screen)
	}
}

// A filter that matches nothing says so, not "no machines".
func TestFlowFilterMatchingNothing(t *testing.T) {
	_, screen := filterFlow(t, 100, "no-such-node")
	if !strings.Contains(screen, "0 shown") || !strings.Contains(screen, "no machine matches the filter") || strings.Contains(screen, "no machines") {
		t.Fatalf("empty filter result:\n%s", screen)
	}
}

func TestFlowResize(t *testing.T) {
	tm, _ := startApp(t, fixtureMidEtcd(), Options{})
	tm.Send(tea.WindowSizeMsg{Width: 120, Height: 40})
	tm.Send(tea.WindowSizeMsg{Width: 50, Height: 12})
	app, screen := finish(t, tm)
	lines := strings.Split(screen, "\n")
	if len(lines) != 12 {
		t.Fatalf("%d lines after resize to 50×12, want 12:\n%s", len(lines), screen)
	}
	for i, l := range lines {
		if w := ansi.StringWidth(l); w > 50 {
			t.Fatalf("line %d is %d wide after resize to 50:\n%s", i, w, screen)
		}
	}
	if app.width != 50 || app.height != 12 {
		t.Fatalf("app size %dx%d", app.width, app.height)
	}
}

func TestFlowQuitOnDone(t *testing.T) {
	src := newChanSource(t)
	clk := clocktesting.NewFakeClock(t0)
	opts := Options{Source: src, Theme: themes.Mono, Clock: clk, QuitOnDone: true}
	app := clockedApp{NewApp(opts, NewDashboard(opts)), clk}
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(80, 24))
	src.ch <- fixtureHealthy()
	waitForText(t, tm, "upgrade complete")
	// The completion rule must hold for the gate's hold time: advance the
	// clock past it and let the next clock tick judge.
	advance(tm, model.DefaultCompletionGate().Hold+time.Second)
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(clockedApp)
	if final.Outcome() != report.Done {
		t.Fatalf("outcome = %s, want done", final.Outcome())
	}
	if !final.OutcomeAtRest() {
		t.Error("a cluster healthy from the first snapshot is not recorded at rest")
	}
}

// Done after an upgrade the dashboard saw under way is not a cluster at
// rest: the console's last line says the upgrade completed.
func TestFlowQuitOnDoneAfterAnUpgrade(t *testing.T) {
	src := newChanSource(t)
	clk := clocktesting.NewFakeClock(t0)
	opts := Options{Source: src, Theme: themes.Mono, Clock: clk, QuitOnDone: true}
	app := clockedApp{NewApp(opts, NewDashboard(opts)), clk}
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(80, 24))
	src.ch <- fixtureMidEtcd()
	waitForText(t, tm, "ETCD")
	done := fixtureHealthy()
	done.Version = 100
	src.ch <- done
	waitForText(t, tm, "confirming")
	advance(tm, model.DefaultCompletionGate().Hold+time.Second)
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(clockedApp)
	if final.Outcome() != report.Done || final.OutcomeAtRest() {
		t.Fatalf("outcome = %s, at rest %v: want done, not at rest", final.Outcome(), final.OutcomeAtRest())
	}
}

// A failureMessage ends the dashboard as failed once it has stayed the
// grace, as for apply --wait and watch --plain: one rule for every waiter.
func TestFlowQuitOnFailure(t *testing.T) {
	src := newChanSource(t)
	clk := clocktesting.NewFakeClock(t0)
	opts := Options{Source: src, Theme: themes.Mono, Clock: clk, QuitOnDone: true}
	app := clockedApp{NewApp(opts, NewDashboard(opts)), clk}
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(80, 24))
	s := fixtureMidEtcd()
	s.Cluster.FailureMessage = "failed to apply etcd spec: admission webhook denied"
	s.Cluster.FailureReason = "ClusterInvalid"
	src.ch <- s
	waitForText(t, tm, "admission webhook denied")
	advance(tm, model.DefaultFailureGrace)
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(clockedApp)
	if final.Outcome() != report.Failed {
		t.Fatalf("outcome = %s, want failed", final.Outcome())
	}
}

func TestFlowQuitKey(t *testing.T) {
	tm, _ := startApp(t, fixtureHealthy(), Options{})
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}
