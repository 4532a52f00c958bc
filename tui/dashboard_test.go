package tui

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/report"
	"github.com/upgrade-console/upgrade-console/themes"
)

func screenOf(d *Dashboard) string { return ansi.Strip(d.View()) }

func TestPanesSayWhatIsMissing(t *testing.T) {
	s := fixtureMidEtcd()
	s.Sources[model.KindMachine] = model.SourceStatus{Installed: true, Forbidden: "list machines.cluster.x-k8s.io in eksa-system"}
	s.Sources[model.KindEvent] = model.SourceStatus{Installed: true} // not synced yet
	d := newTestDashboard(t, s, themes.Mono, 120, 40)
	out := screenOf(d)
	for _, want := range []string{
		"forbidden: list machines.cluster.x-k8s.io in eksa-system", // nodes and etcd panes
		// and the fix, which the pane named nowhere
		"forbidden: list machines.cluster.x-k8s.io in eksa-system; grant a Role in eksa-system with",
		"EVENTS",
		"syncing…",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("screen lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "12 md-0 workers") {
		t.Errorf("nodes shown although machines are forbidden:\n%s", out)
	}
}

// Events are read in two namespaces. An identity that may read those of
// eksa-system, where the upgrade's own are, but not those of the Cluster's
// namespace saw an empty pane: "forbidden: list events in default".
func TestEventsPaneShowsTheNamespacesItMayRead(t *testing.T) {
	s := fixtureMidEtcd()
	s.Sources[model.KindEvent] = model.SourceStatus{Installed: true, Synced: true, Forbidden: "list events in default"}
	if len(s.Events) == 0 {
		t.Fatal("fixture has no events")
	}
	out := screenOf(newTestDashboard(t, s, themes.Mono, 160, 50))
	for _, want := range []string{"forbidden: list events in default (those are not shown)", s.Events[0].Reason} {
		if !strings.Contains(out, want) {
			t.Errorf("screen lacks %q:\n%s", want, out)
		}
	}
}

// With one namespace's events denied, the line over the others said only
// "forbidden: list events in default": the fix the other panes give, and y
// copies, was nowhere. The line carries it, zoomed wraps it whole, and y
// copies its check.
func TestEventsPanePartlyDeniedFixIsCopied(t *testing.T) {
	s := fixtureMidEtcd()
	s.Conn = model.ConnFlags{{Name: "kubeconfig", Value: "/home/ops/.kube/mgmt-admin.kubeconfig"}, {Name: "context", Value: "admin@mgmt"}}
	s.Sources[model.KindEvent] = model.SourceStatus{Installed: true, Synced: true, Forbidden: "list events in default"}
	check := backquoted(model.GrantFor("list events in default", s.Conn))
	if len(check) != 1 {
		t.Fatalf("the fix quotes %d commands, want 1", len(check))
	}
	d := newTestDashboard(t, s, themes.Mono, 80, 40)
	if cmds, _ := d.shownCommands(); !slices.Contains(cmds, check[0]) {
		t.Errorf("y copies %q, want %q among them", cmds, check[0])
	}
	d.focus = paneEvents
	d.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if !d.Zoomed() {
		t.Fatal("enter did not zoom the events pane")
	}
	flat := strings.Join(strings.Fields(screenOf(d)), " ")
	for _, want := range []string{"(those are not shown)", "verbs: [list, watch]", strings.Join(strings.Fields(check[0]), " ")} {
		if !strings.Contains(flat, want) {
			t.Errorf("zoomed, the pane lacks %q:\n%s", want, screenOf(d))
		}
	}
	if cmds, _ := d.shownCommands(); !slices.Contains(cmds, check[0]) {
		t.Errorf("zoomed: y copies %q, want %q among them", cmds, check[0])
	}
}

func TestStackedEtcdWhenKindNotInstalled(t *testing.T) {
	d := newTestDashboard(t, fixtureInPlaceFailed(), themes.Mono, 120, 40)
	if out := screenOf(d); !strings.Contains(out, "stacked etcd") {
		t.Fatalf("no stacked etcd note:\n%s", out)
	}
}

func TestHeaderConnectionAndStaleness(t *testing.T) {
	s := fixtureMidEtcd()
	s.Connection = model.Reconnecting
	s.ConnectionSince = t0.Add(-12 * time.Second)
	s.Cluster.Generation = 8
	d := newTestDashboard(t, s, themes.Mono, 120, 40)
	out := screenOf(d)
	for _, want := range []string{"↻ reconnecting 12s", "status not yet observed", "gen 8 / observed 7"} {
		if !strings.Contains(out, want) {
			t.Errorf("screen lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "● live") {
		t.Errorf("shows live while reconnecting:\n%s", out)
	}
}

// Credentials the API server refuses (401) are not a server that cannot be
// reached: the line said "API server not reached yet (check --kubeconfig
// and --context; retrying): the server has asked for the client to provide
// credentials", for ever.
func TestDashboardSaysTheCredentialsAreRefused(t *testing.T) {
	s := &model.ClusterState{Connection: model.Connecting, ConnectionErr: model.CredentialsRefused + ": the server has asked for the client to provide credentials"}
	out := screenOf(newTestDashboard(t, s, themes.Mono, 200, 30))
	if !strings.Contains(out, "◌ the API server refused the credentials (401 Unauthorized): refresh them") || strings.Contains(out, "not reached yet") {
		t.Errorf("screen:\n%s", out)
	}
}

// Credentials refused after the first sync (a token revoked mid-watch):
// every relist failed while the header said "● live". The header says the
// credentials are refused, the status line how to mend them, and both go
// once the connection is live again.
func TestDashboardSaysTheCredentialsAreRefusedMidWatch(t *testing.T) {
	s := fixtureMidEtcd()
	s.Connection, s.ConnectionSince = model.Reconnecting, t0.Add(-12*time.Second)
	s.ConnectionErr = model.CredentialsRefused + ": Unauthorized"
	d := newTestDashboard(t, s, themes.Mono, 160, 40)
	out := screenOf(d)
	for _, want := range []string{"credentials refused 12s", "◌ the API server refused the credentials (401 Unauthorized): refresh them"} {
		if !strings.Contains(out, want) {
			t.Errorf("screen lacks %q:\n%s", want, out)
		}
	}
	for _, not := range []string{"● live", "↻ reconnecting"} {
		if strings.Contains(out, not) {
			t.Errorf("screen says %q:\n%s", not, out)
		}
	}
	back := fixtureMidEtcd()
	back.Version = s.Version + 1
	back.Connection = model.Live
	d.Update(SnapshotMsg{State: back})
	d.Update(frameMsg{})
	if out := screenOf(d); strings.Contains(out, "credentials") || !strings.Contains(out, "● live") {
		t.Errorf("live again:\n%s", out)
	}
}

// A dashboard that never reached the API server says why on its status
// line: it showed "connecting" and "syncing…" for as long as one waited,
// where the plain watch says the server cannot be reached at once.
func TestDashboardSaysWhyItCannotConnect(t *testing.T) {
	s := &model.ClusterState{Connection: model.Connecting, ConnectionErr: "127.0.0.1:6443: connect: connection refused"}
	d := newTestDashboard(t, s, themes.Mono, 120, 30)
	want := "◌ API server not reached yet (check --kubeconfig and --context; retrying): 127.0.0.1:6443: connect: connection refused"
	if out := screenOf(d); !strings.Contains(out, want) {
		t.Errorf("screen lacks %q:\n%s", want, out)
	}
	// Once live, and while reconnecting (the header says it, with how
	// long), the line goes.
	for _, c := range []model.ConnectionState{model.Live, model.Reconnecting} {
		s := fixtureMidEtcd()
		s.Connection, s.ConnectionErr = c, "x"
		if out := screenOf(newTestDashboard(t, s, themes.Mono, 160, 30)); strings.Contains(out, "API server not reached yet") {
			t.Errorf("%s: the line stays:\n%s", c, out)
		}
	}
}

// A Cluster API Cluster left paused is said on the status line: CAPI rolls
// no machine, and the stalls said only that nothing moved.
func TestDashboardSaysTheClusterAPIPause(t *testing.T) {
	s := fixtureMidEtcd()
	s.CAPICluster = &model.CAPICluster{Meta: model.Meta{Name: "mgmt", Namespace: "eksa-system"}, Paused: true}
	want := "Cluster API paused: spec.paused is true on Cluster eksa-system/mgmt; it rolls no machine until resumed"
	if out := screenOf(newTestDashboard(t, s, themes.Mono, 200, 40)); !strings.Contains(out, want) {
		t.Errorf("screen lacks %q:\n%s", want, out)
	}
	s.CAPICluster.Paused = false
	if out := screenOf(newTestDashboard(t, s, themes.Mono, 200, 40)); strings.Contains(out, "Cluster API paused") {
		t.Errorf("an unpaused CAPI Cluster is said paused:\n%s", out)
	}
}

func TestFailureMessageShown(t *testing.T) {
	s := fixtureMidEtcd()
	s.Cluster.FailureMessage = "failed to reconcile etcd: webhook denied"
	s.Cluster.FailureReason = "ClusterInvalid"
	d := newTestDashboard(t, s, themes.Dark, 120, 40)
	raw := d.View()
	// The failure line is painted with the theme's failure ink (red, bold).
	want := d.st.th.Failure.S(" " + d.st.th.Sym.Fail + " failure ClusterInvalid")
	if !strings.Contains(raw, want) {
		t.Fatalf("failure not painted as a failure:\n%s", ansi.Strip(raw))
	}
	if !strings.Contains(ansi.Strip(raw), "upgrade failed: failed to reconcile etcd") {
		t.Fatalf("no failure on the stall line:\n%s", ansi.Strip(raw))
	}
}

func TestSinceFollowsInjectedClock(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(t0)
	opts := Options{Theme: themes.Mono, Clock: clk}
	d := NewDashboard(opts)
	d.SetSize(120, 40)
	d.Update(SnapshotMsg{State: fixtureMidEtcd()})
	member := func() string {
		for _, l := range strings.Split(screenOf(d), "\n") {
			if i := strings.Index(l, "mgmt-etcd-h2v8d"); i >= 0 {
				return strings.TrimSpace(l[i:])
			}
		}
		return ""
	}
	if m := member(); !strings.HasSuffix(m, " 4m") {
		t.Fatalf("new etcd member at t0 = %q, want created 4m ago", m)
	}
	clk.SetTime(t0.Add(3 * time.Minute))
	d.Update(clockMsg{})
	if m := member(); !strings.HasSuffix(m, " 7m") {
		t.Fatalf("new etcd member 3 minutes later = %q, want 7m", m)
	}
}

func TestReadOnlyLeavesDangerousActionsUnbound(t *testing.T) {
	ran := 0
	actions := []Action{{
		Binding:   key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "recover")),
		Dangerous: true,
		Run:       func(*model.ClusterState) tea.Cmd { ran++; return nil },
	}}
	for _, readOnly := range []bool{false, true} {
		ran = 0
		d := NewDashboard(Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0), ReadOnly: readOnly, Actions: actions})
		d.SetSize(120, 40)
		d.Update(SnapshotMsg{State: fixtureMidEtcd()})
		d.Update(tea.KeyPressMsg{Code: 'R', Text: "R"})
		help := screenOf(d)
		switch {
		case readOnly && (ran != 0 || strings.Contains(help, "recover")):
			t.Errorf("read-only: action ran %d times / shown in help", ran)
		case !readOnly && (ran != 1 || !strings.Contains(help, "R recover")):
			t.Errorf("read-write: action ran %d times, help:\n%s", ran, help)
		}
	}
}

func TestExpandShowsEveryNode(t *testing.T) {
	d := newTestDashboard(t, fixtureMidEtcd(), themes.Mono, 120, 40)
	d.Update(tea.KeyPressMsg{Code: 'e', Text: "e"})
	out := screenOf(d)
	if strings.Contains(out, "workers up to date (e to expand)") || !strings.Contains(out, "mgmt-md-0-00000") {
		t.Fatalf("expanded table still grouped:\n%s", out)
	}
}

func TestSnapshotsCoalesce(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(t0)
	d := NewDashboard(Options{Theme: themes.Mono, Clock: clk})
	d.SetSize(80, 24)
	if _, cmd := d.Update(SnapshotMsg{State: fixtureMidEtcd()}); cmd != nil && d.dirty {
		t.Fatal("the first snapshot must be built at once")
	}
	// A second snapshot within the frame interval waits for the frame tick.
	next := fixtureInPlaceFailed()
	_, cmd := d.Update(SnapshotMsg{State: next})
	if cmd == nil || !d.dirty || d.built == next.Version {
		t.Fatal("a snapshot inside the frame interval must be deferred to a frame tick")
	}
	third := fixtureHealthy()
	if _, cmd := d.Update(SnapshotMsg{State: third}); cmd != nil {
		t.Fatal("a second tick was scheduled while one is pending")
	}
	d.Update(frameMsg{})
	if d.built != third.Version || d.dirty {
		t.Fatalf("after the tick the newest snapshot (%d) must be built, built %d", third.Version, d.built)
	}
}

// Snapshots the watchers took a frame interval apart are built when they
// arrive, however soon after the last rebuild: the watchers already space
// them, and a second wait here would only add latency.
func TestSpacedSnapshotsAreNotHeldBack(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(t0) // wall time stands still
	d := NewDashboard(Options{Theme: themes.Mono, Clock: clk})
	d.SetSize(80, 24)
	first := fixtureMidEtcd()
	first.At = t0
	d.Update(SnapshotMsg{State: first})
	near := fixtureInPlaceFailed()
	near.At = t0.Add(frameInterval / 2)
	d.Update(SnapshotMsg{State: near})
	if !d.dirty || d.built == near.Version {
		t.Fatal("a snapshot taken inside the frame interval must wait for the frame tick")
	}
	d.Update(frameMsg{})
	spaced := fixtureHealthy()
	spaced.At = near.At.Add(frameInterval)
	d.Update(SnapshotMsg{State: spaced})
	if d.dirty || d.built != spaced.Version {
		t.Fatal("a snapshot taken a frame interval after the last one built must be built at once")
	}
}

func TestTimelineNeverStartsBeforeTheSpecChanged(t *testing.T) {
	// Just applied, not yet observed: the etcd phase's only time hint is a
	// condition from two hours before the upgrade.
	s := fixtureHealthy()
	s.Cluster.Generation = 8
	s.Cluster.SpecChangedAt = t0.Add(-5 * time.Minute)
	d := newTestDashboard(t, s, themes.Mono, 120, 40)
	e, ok := d.timeline.Entry(model.PhaseEtcd)
	if !ok || !e.Started.Equal(s.Cluster.SpecChangedAt) {
		t.Fatalf("etcd phase started %v, want the spec change %v", e.Started, s.Cluster.SpecChangedAt)
	}
	if out := screenOf(d); !strings.Contains(out, "etcd ● 5:00") || !strings.Contains(out, "elapsed 5:00") {
		t.Fatalf("header elapsed times wrong:\n%s", out)
	}
}

func TestRowsRebuiltOnlyWhenTheirListsChange(t *testing.T) {
	s := fixtureLarge(1000)
	d := newTestDashboard(t, s, themes.Mono, 120, 40)
	gen := d.nodes.gen
	// A new snapshot that shares the machine, node and upgrade lists (only
	// an event changed) keeps the rows.
	next := *s
	next.Version++
	next.Events = append([]model.Event{{Type: "Normal", Reason: "X", ObjectKind: "Cluster", ObjectName: "mgmt"}}, s.Events...)
	d.state = &next
	d.rebuild()
	if d.nodes.gen != gen {
		t.Fatal("rows rebuilt although no list they read changed")
	}
	changed := next
	changed.Version++
	changed.Machines = withChanged(s.Machines, 5, func(m *model.Machine) { m.Phase = "Deleting" })
	d.state = &changed
	d.rebuild()
	if d.nodes.gen == gen {
		t.Fatal("rows not rebuilt after a machine changed")
	}
}

func TestWaitingSiblingsFoldLikeHealthyOnes(t *testing.T) {
	d := newTestDashboard(t, fixtureLarge(1000), themes.Mono, 120, 60)
	out := screenOf(d)
	// Each group has 100 workers: 10 outdated (one of them provisioning,
	// so shown alone) and the rest up to date.
	for _, want := range []string{"9 md-0 workers to be replaced (e to expand)", "md-0 workers up to date (e to expand)"} {
		if !strings.Contains(out, want) {
			t.Errorf("screen lacks %q:\n%s", want, out)
		}
	}
}

func TestStalledMachinesAreMarked(t *testing.T) {
	s := fixtureMidEtcd()
	// The new etcd member has been provisioning for 4 minutes: stalled at a
	// 2-minute threshold.
	d := NewDashboard(Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0), StallAfter: 2 * time.Minute})
	d.SetSize(120, 40)
	d.Update(SnapshotMsg{State: s})
	var member string
	for _, l := range strings.Split(screenOf(d), "\n") {
		if i := strings.Index(l, "mgmt-etcd-h2v8d  provisioning"); i >= 0 {
			member = l[strings.LastIndex(l[:i], "│")+len("│"):]
		}
	}
	if !strings.HasPrefix(member, " ⚠ mgmt-etcd-h2v8d") || !strings.Contains(member, "stalled") {
		t.Fatalf("stalled member not marked: %q\n%s", member, screenOf(d))
	}
}

// The stall line of a new etcd member says when R offers the etcd rollback:
// pressed before then, R did nothing, and nothing said why. Past the
// threshold it says the rollback is offered; with a threshold under the
// stall threshold a line of its own says it; read-only (R unbound), or on a
// rollout the menu does not offer to roll back, nothing is said. "Offered"
// is the recovery menu's own rule (recovery.Offers).
func TestEtcdStallSaysWhenTheRollbackIsOffered(t *testing.T) {
	for _, tc := range []struct {
		name         string
		state        func() *model.ClusterState
		stall, after time.Duration
		readOnly     bool
		want         string
	}{
		{"before the threshold", func() *model.ClusterState { return stuckEtcdState(t0) }, 2 * time.Minute, 30 * time.Minute, false, "(R offers rollback at 30m)"},
		{"past it", func() *model.ClusterState { return stuckEtcdState(t0) }, 2 * time.Minute, 15 * time.Minute, false, "(R: roll back)"},
		{"past it, no stall yet", func() *model.ClusterState { return stuckEtcdState(t0) }, time.Hour, 15 * time.Minute, false,
			"etcd machine e-new not ready 20m after its creation (R: roll back)"},
		{"read-only", func() *model.ClusterState { return stuckEtcdState(t0) }, 2 * time.Minute, 15 * time.Minute, true, ""},
		{"not offered: an old member released", func() *model.ClusterState {
			s := stuckEtcdState(t0)
			s.Machines.At(0).Owned = false
			return s
		}, 2 * time.Minute, 15 * time.Minute, false, ""},
		{"not offered: no member more than the spec", fixtureMidEtcd, 2 * time.Minute, 3 * time.Minute, false, ""},
		// Its rollback recorded, not finished: "offered" read as one yet
		// to start while it ran.
		{"its rollback under way", func() *model.ClusterState {
			s := stuckEtcdState(t0)
			s.Cluster.Annotations = map[string]string{model.AnnotationEKSAPaused: "true", model.AnnotationEtcdRollbackRecord: `{"phase":"running","newMachine":"e-new"}`}
			return s
		}, 2 * time.Minute, 15 * time.Minute, false, "(its etcd rollback is under way, or was cut short: R shows it)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := NewDashboard(Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0), StallAfter: tc.stall,
				EtcdRollbackAfter: tc.after, ReadOnly: tc.readOnly})
			d.SetSize(200, 40)
			d.Update(SnapshotMsg{State: tc.state()})
			rows := statusRows(d)
			if got := strings.Contains(rows, "roll back") || strings.Contains(rows, "rollback"); got != (tc.want != "") || (tc.want != "" && !strings.Contains(rows, tc.want)) {
				t.Errorf("want %q:\n%s", tc.want, rows)
			}
		})
	}
}

// The phase strip flags etcd held when R offers the rollback, which its own
// threshold may do before --stall-after: "etcd ●" read as moving for
// seconds beside "R: roll back".
func TestPhaseStripHeldWhenTheEtcdRollbackIsOffered(t *testing.T) {
	for _, tc := range []struct {
		after time.Duration
		want  string
	}{{15 * time.Minute, "etcd ⚠"}, {30 * time.Minute, "etcd ●"}} {
		d := NewDashboard(Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0), StallAfter: time.Hour, EtcdRollbackAfter: tc.after})
		d.SetSize(200, 40)
		d.Update(SnapshotMsg{State: stuckEtcdState(t0)})
		if strip := strings.SplitN(ansi.Strip(d.View()), "\n", 3)[1]; !strings.Contains(strip, tc.want) {
			t.Errorf("rollback offered after %s: want %q in the strip %q", tc.after, tc.want, strip)
		}
	}
}

// TestManyStallsDrawTheFirstAndCountTheRest: with hundreds of machines
// stuck, the dashboard draws the few stall lines it has room for and says
// how many more there are, building no line for the others.
func TestManyStallsDrawTheFirstAndCountTheRest(t *testing.T) {
	d := newTestDashboard(t, fixtureLarge(1000), themes.Mono, 120, 40)
	n := len(d.progress.Stalls)
	if d.progress.Failed {
		n++
	}
	if n <= maxStallLines {
		t.Fatalf("the fixture has %d stalls; the test needs more than %d", n, maxStallLines)
	}
	if len(d.stalls) != maxStallLines || d.stallCount != n {
		t.Errorf("built %d stall lines, count %d; want %d built, count %d", len(d.stalls), d.stallCount, maxStallLines, n)
	}
	if want := "(+" + strconv.Itoa(n-maxStallLines) + " more)"; !strings.Contains(screenOf(d), want) {
		t.Errorf("the screen does not say %q:\n%s", want, screenOf(d))
	}
}

// Below 30 rows the layout keeps one status line, "(+N more)" saying how
// many it hid; zoomed, one pane has the body and the status lines get their
// rows, so zoom shows them.
func TestZoomShowsTheStatusLinesTheLayoutHid(t *testing.T) {
	d := newTestDashboard(t, fixtureLarge(1000), themes.Mono, 80, 24)
	if n := d.plan.stallLines; n != 1 {
		t.Fatalf("80×24: %d status lines, want 1", n)
	}
	d.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if !d.zoom || d.plan.stallLines != maxStallLines {
		t.Errorf("zoomed at 80×24: zoom %v, %d status lines, want %d:\n%s", d.zoom, d.plan.stallLines, maxStallLines, screenOf(d))
	}
}

// TestPausedLineShowsTheResumeCommand: the paused status line ends in the
// command that resumes the upgrade (or finds out whose pause it is), so at
// the sizes operators use it is wrapped, whole, under its mark, never cut;
// and the panes still fit, each at least its minimum height.
func TestPausedLineShowsTheResumeCommand(t *testing.T) {
	for _, f := range []struct {
		name    string
		state   func() *model.ClusterState
		command string
	}{
		{"rolled-back", fixturePausedAfterRollback, "`upgrade-console lock clear paused --cluster mgmt`"},
		// Held by someone else's pause, with stalls to count after it.
		{"held", fixtureHeld, "`upgrade-console lock status --cluster mgmt`"},
	} {
		for _, sz := range [][2]int{{80, 24}, {120, 40}} {
			t.Run(fmt.Sprintf("%s/%dx%d", f.name, sz[0], sz[1]), func(t *testing.T) {
				d := NewDashboard(Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0), StallAfter: 2 * time.Minute})
				d.SetSize(sz[0], sz[1])
				d.Update(SnapshotMsg{State: f.state()})
				if !d.progress.Paused {
					t.Fatal("the fixture is not paused")
				}
				out := screenOf(d)
				requireLines(t, out, sz[0], sz[1])
				lines := strings.Split(out, "\n")
				start := -1
				for i, l := range lines {
					if strings.HasPrefix(l, pausePrefix) {
						start = i
						break
					}
				}
				if start < 0 {
					t.Fatalf("no pause line:\n%s", out)
				}
				// Its rows: the first behind the mark, the others indented
				// to the text after it.
				indent := spaces(width(pausePrefix))
				rows := []string{strings.TrimPrefix(lines[start], pausePrefix)}
				for _, l := range lines[start+1:] {
					if !strings.HasPrefix(l, indent) || strings.HasPrefix(l, indent+" ") {
						break
					}
					rows = append(rows, strings.TrimPrefix(l, indent))
				}
				if len(rows) < 2 {
					t.Errorf("the pause is not wrapped:\n%s", out)
				}
				got := strings.Join(strings.Fields(strings.Join(rows, " ")), " ")
				got = strings.TrimSpace(regexpMore.ReplaceAllString(got, ""))
				if want := d.progress.Summary; got != want {
					t.Errorf("pause reads\n%q\nwant the whole sentence\n%q\n%s", got, want, out)
				}
				oneRow := false
				for _, r := range rows {
					oneRow = oneRow || strings.Contains(r, f.command)
				}
				if !oneRow {
					t.Errorf("the command %s is not whole on one row:\n%s", f.command, out)
				}
				requirePaneMinimums(t, d)
			})
		}
	}
}

var regexpMore = regexp.MustCompile(`\(\+\d+ more\)$`)

// requirePaneMinimums checks that the layout gives every pane it shows at
// least its minimum height (the nodes table always shown) and that the
// screen's parts add up to its height.
func requirePaneMinimums(t *testing.T, d *Dashboard) {
	t.Helper()
	p := &d.plan
	if !p.visible[paneNodes] {
		t.Errorf("the nodes table is not shown: %+v", p.height)
	}
	mins := [paneCount]int{paneCluster: 3, paneEtcd: min(2, d.etcd.want()), paneControlPlane: 2, paneNodes: 3, paneEvents: 2}
	for id := paneID(0); id < paneCount; id++ {
		if p.visible[id] && p.height[id] < mins[id] {
			t.Errorf("%s pane is %d rows, below its minimum %d", id, p.height[id], mins[id])
		}
	}
	total := p.headerLines + p.stallLines + p.helpLines
	for _, s := range p.sections {
		total += s.h
	}
	if total != d.h {
		t.Errorf("header %d + panes + status %d + help %d = %d rows, want %d", p.headerLines, p.stallLines, p.helpLines, total, d.h)
	}
}

// TestPauseComesFirstAndWhole: the wrapped pause takes the status rows it
// needs ahead of the stalls, which keep the rows left of the budget and are
// counted when they have none, the count never cutting the pause.
func TestPauseComesFirstAndWhole(t *testing.T) {
	const pause = "etcd rolled back; EKS-A reconcile paused (upgrade-console etcd rollback): resume with `upgrade-console lock clear paused --cluster mgmt` after fixing the cause"
	p := model.Progress{Current: model.PhasePaused, Paused: true, Summary: pause, Pause: pause,
		Stalls: []model.Stall{{Sentence: "etcd machine mgmt-etcd-a not ready for 11m"}, {Sentence: "etcd machine mgmt-etcd-b not ready for 12m"},
			{Sentence: "etcd machine mgmt-etcd-c not ready for 13m"}}}
	for _, c := range []struct {
		w, h          int
		pause, stalls int // rows of each
	}{
		{120, 40, 2, 2}, // two rows of pause and two stalls: three lines of the budget
		{80, 24, 3, 0},  // the pause alone, over the one-line budget
		{80, 40, 3, 2},  // the pause wraps to three rows; the budget counts lines
	} {
		t.Run(fmt.Sprintf("%dx%d", c.w, c.h), func(t *testing.T) {
			d := newTestDashboard(t, nil, themes.Mono, c.w, c.h)
			d.stalls, d.stallCount, d.pauseLine = buildStallLines(d.st, &model.ClusterState{}, p)
			d.relayout()
			var pause, stalls int
			for _, r := range d.plan.stalls {
				switch {
				case len(r.segs) > 0 && r.segs[0].r == rPaused:
					pause++
				case len(r.segs) > 0:
					stalls++
				}
			}
			if pause != c.pause || stalls != c.stalls || d.plan.stallLines != len(d.plan.stalls) {
				t.Errorf("%d pause rows and %d stall rows of %d, want %d and %d", pause, stalls, d.plan.stallLines, c.pause, c.stalls)
			}
			out := screenOf(d)
			requireLines(t, out, c.w, c.h)
			status := strings.Join(strings.Split(out, "\n")[c.h-1-d.plan.stallLines:c.h-1], "\n")
			if !strings.HasPrefix(status, pausePrefix+"etcd rolled back") {
				t.Errorf("the pause is not first:\n%s", status)
			}
			for _, want := range []string{"`upgrade-console lock clear paused --cluster mgmt`", "after fixing", "the cause", fmt.Sprintf("(+%d more)", 3-c.stalls)} {
				if !strings.Contains(status, want) {
					t.Errorf("status lines lack %q:\n%s", want, status)
				}
			}
			requirePaneMinimums(t, d)
		})
	}
}

// A cluster at rest is not an upgrade complete: the status says none is
// under way, and EKS-A's pause, which holds back the next one, is shown.
func TestAtRestSaysNoUpgradeAndShowsThePause(t *testing.T) {
	s := fixtureHealthy()
	s.Cluster.Annotations[model.AnnotationEKSAPaused] = "true"
	d := newTestDashboard(t, s, themes.Mono, 120, 40)
	out := screenOf(d)
	if !strings.Contains(out, "‖ paused") ||
		!strings.Contains(out, " ‖ EKS-A reconcile paused (anywhere.eks.amazonaws.com/paused): EKS-A acts on no change until it is removed") ||
		!strings.Contains(out, " no upgrade under way: cluster at EKS-A v0.21.1, Kubernetes 1.31") {
		t.Errorf("want the pause badge and line, and no upgrade under way:\n%s", out)
	}
	if strings.Contains(out, "✓ upgrade complete") {
		t.Errorf("a cluster at rest shown as an upgrade complete:\n%s", out)
	}
}

// Milestones met are confirming until the gate's hold has passed, then
// complete, as apply --wait and the plain watch say.
func TestCompletionIsConfirmedBeforeItIsComplete(t *testing.T) {
	d, clk := clockedDashboard(120, 40)
	d.Update(SnapshotMsg{State: fixtureMidEtcd()})
	done := fixtureHealthy()
	done.Version = 100
	clk.SetTime(t0.Add(frameInterval))
	d.Update(SnapshotMsg{State: done})
	out := screenOf(d)
	if !strings.Contains(out, " every completion milestone met; confirming it holds for 5s") || strings.Contains(out, "✓ upgrade complete") {
		t.Fatalf("within the hold:\n%s", out)
	}
	clk.SetTime(t0.Add(frameInterval + model.DefaultCompletionGate().Hold))
	d.Update(clockMsg{})
	if out := screenOf(d); !strings.Contains(out, " ✓ upgrade complete: every completion milestone met") {
		t.Fatalf("after the hold:\n%s", out)
	}
}

// A step that stays failed past the grace fails the upgrade: the dashboard
// says so, and what resumes it, as the plain watch's outcome does.
func TestStepFailedForGoodIsTheUpgradeFailed(t *testing.T) {
	d, clk := clockedDashboard(160, 40)
	d.Update(SnapshotMsg{State: fixtureInPlaceFailed()})
	if out := screenOf(d); strings.Contains(out, "upgrade failed") || d.outcome != report.Running {
		t.Fatalf("failed within the grace (the step failed 4m40s ago):\n%s", out)
	}
	clk.SetTime(t0.Add(model.DefaultFailureGrace))
	d.Update(clockMsg{})
	out := screenOf(d)
	if d.outcome != report.Failed || !strings.Contains(out, "✗ upgrade failed: node mgmt-cp-b8k4m in-place step KubeadmUpgraded failed") {
		t.Fatalf("outcome %s:\n%s", d.outcome, out)
	}
	if !strings.Contains(d.judge.Reason(), "`upgrade-console node retry mgmt-cp-b8k4m --cluster mgmt`") {
		t.Errorf("reason %q names no retry", d.judge.Reason())
	}
}

// Joined mid-upgrade, the elapsed time counts from the spec change (the API
// tells it), not from the phase under way; a phase seen only while its list
// synced has no time.
func TestJoinedUpgradeElapsedFromTheSpecChange(t *testing.T) {
	d, clk := clockedDashboard(120, 40)
	syncing := fixtureMidEtcd()
	syncing.Cluster = nil
	syncing.Sources[model.KindEKSACluster] = model.SourceStatus{Installed: true, Version: "v1alpha1"}
	d.Update(SnapshotMsg{State: syncing})
	clk.SetTime(t0.Add(400 * time.Millisecond))
	s := fixtureMidEtcd()
	s.Version++
	s.Cluster.SpecChangedAt = t0.Add(-6*time.Minute - 52*time.Second)
	d.Update(SnapshotMsg{State: s})
	out := screenOf(d)
	if !strings.Contains(out, "elapsed 6:52") || !strings.Contains(out, "etcd ● 6:00") {
		t.Errorf("header times wrong:\n%s", out)
	}
	if strings.Contains(out, "components ✓ 0:00") {
		t.Errorf("the components phase, done before the console looked, is timed:\n%s", out)
	}
}

// clockedDashboard is an empty dashboard whose clock the test sets.
func clockedDashboard(w, h int) (*Dashboard, *clocktesting.FakePassiveClock) {
	clk := clocktesting.NewFakePassiveClock(t0)
	d := NewDashboard(Options{Theme: themes.Mono, Clock: clk})
	d.SetSize(w, h)
	return d, clk
}

// fixtureStepFailedAt is fixtureInPlaceFailed with the failed step's
// condition turned False at the given time.
func fixtureStepFailedAt(at time.Time) *model.ClusterState {
	s := fixtureInPlaceFailed()
	s.NodeUpgrades = withChanged(s.NodeUpgrades, 1, func(nu *model.NodeUpgrade) {
		nu.Conditions = slices.Clone(nu.Conditions)
		for i := range nu.Conditions {
			if c := &nu.Conditions[i]; c.Type == "KubeadmUpgraded" {
				c.LastTransitionTime = at
			}
		}
	})
	return s
}

// statusRows is the screen's rows from the first status line on.
func statusRows(d *Dashboard) string {
	rows := strings.Split(screenOf(d), "\n")
	return strings.Join(rows[len(rows)-d.plan.helpLines-d.plan.stallLines:], "\n")
}

// The failed step's age on the status line moves on every clock tick, as
// the nodes and events rows do: it was written when progress was last
// derived, which a quiet cluster does every rederiveEvery, and lagged by up
// to six seconds.
func TestStatusLineAgeFollowsTheClock(t *testing.T) {
	d, clk := clockedDashboard(160, 40)
	d.Update(SnapshotMsg{State: fixtureStepFailedAt(t0.Add(-5 * time.Second))})
	for s := 0; s <= 12; s++ {
		clk.SetTime(t0.Add(time.Duration(s) * time.Second))
		d.Update(clockMsg{})
		want := fmt.Sprintf("✗ node mgmt-cp-b8k4m in-place step KubeadmUpgraded failed %ds ago:", 5+s)
		if out := statusRows(d); !strings.Contains(out, want) {
			t.Fatalf("at t0+%ds, status lacks %q:\n%s", s, want, out)
		}
	}
	// Declared failed, the reason's age moves with the clock too. The
	// clock ticks on as it does on a console that runs: a jump of minutes
	// reads as one that was stopped, and holds the judge.
	for at := 12 * time.Second; at < 10*time.Minute+54*time.Second; at += 10 * time.Second {
		clk.SetTime(t0.Add(at))
		d.Update(clockMsg{})
	}
	clk.SetTime(t0.Add(10*time.Minute + 54*time.Second))
	d.Update(clockMsg{})
	clk.SetTime(t0.Add(10*time.Minute + 55*time.Second))
	d.Update(clockMsg{})
	want := "✗ upgrade failed: node mgmt-cp-b8k4m in-place step KubeadmUpgraded failed 11m ago:"
	if out := statusRows(d); d.outcome != report.Failed || !strings.Contains(out, want) {
		t.Fatalf("outcome %s, status lacks %q:\n%s", d.outcome, want, out)
	}
	// Said once: the step's own line repeated the failure line.
	if out := statusRows(d); strings.Count(out, "in-place step KubeadmUpgraded failed") != 1 {
		t.Errorf("the failure is said more than once:\n%s", out)
	}
}

// Once the judge declares the upgrade failed (a step failed and stayed
// failed past the grace), the phase strip marks the phase failed, not
// held up, and its clock stops at the declaration (at the step's own
// failure, it jumped back ten minutes); a retried step takes the phase on
// again.
func TestDeclaredFailureMarksThePhaseFailed(t *testing.T) {
	d, clk := clockedDashboard(160, 40)
	d.Update(SnapshotMsg{State: fixtureInPlaceFailed()}) // the step failed at t0-4m40s
	header := func() string { return strings.SplitN(screenOf(d), "\n", 3)[1] }
	// Within the grace the phase is held up, not moving: ⚠, not ●.
	if h := header(); !strings.Contains(h, "control plane ⚠ 12:00") {
		t.Fatalf("within the grace:\n%s", h)
	}
	for _, at := range []time.Duration{model.DefaultFailureGrace, model.DefaultFailureGrace + 3*time.Minute} {
		clk.SetTime(t0.Add(at))
		d.Update(clockMsg{})
		h := header()
		if d.outcome != report.Failed || !strings.Contains(h, "control plane ✗ 22:00") || !strings.Contains(h, "ready ✗") || !strings.Contains(h, "elapsed 22:00") {
			t.Fatalf("at t0+%s, outcome %s:\n%s", at, d.outcome, h)
		}
	}
	if e, _ := d.timeline.Entry(model.PhaseControlPlane); !e.Finished.IsZero() {
		t.Errorf("the dashboard's own timeline was changed: %+v", e)
	}
	retried := fixtureInPlaceFailed()
	retried.Version++
	retried.NodeUpgrades = withChanged(retried.NodeUpgrades, 1, func(nu *model.NodeUpgrade) {
		nu.Conditions = nil
	})
	clk.SetTime(t0.Add(model.DefaultFailureGrace + 4*time.Minute))
	d.Update(SnapshotMsg{State: retried})
	// Taken on again, not failed: held (⚠) as its retried step has not
	// reported for the twenty minutes the clock moved, past --stall-after.
	if h := header(); !strings.Contains(h, "control plane ⚠ 26:00") || strings.Contains(h, "✗") {
		t.Errorf("after the retry:\n%s", h)
	}
}

// A failureMessage that stays past the grace fails the upgrade too: its
// phase, marked failed by the derivation, stops its clock when the failure
// was first seen, as the elapsed time does.
func TestDeclaredFailureMessageStopsThePhaseClock(t *testing.T) {
	d, clk := clockedDashboard(160, 40)
	d.Update(SnapshotMsg{State: fixtureMidEtcd()})
	clk.SetTime(t0.Add(time.Minute))
	s := fixtureMidEtcd()
	s.Version++
	s.Cluster.FailureMessage = "failed to reconcile etcd: webhook denied"
	d.Update(SnapshotMsg{State: s})
	header := func() string { return strings.SplitN(screenOf(d), "\n", 3)[1] }
	start := header()
	for _, at := range []time.Duration{model.DefaultFailureGrace + time.Minute, model.DefaultFailureGrace + 5*time.Minute} {
		clk.SetTime(t0.Add(at))
		d.Update(clockMsg{})
		if h := header(); d.outcome != report.Failed || h != start {
			t.Fatalf("at t0+%s, outcome %s:\n%s\nwant, as when first seen:\n%s", at, d.outcome, h, start)
		}
	}
	if !strings.Contains(start, "etcd ✗ ") || !strings.Contains(start, "ready ✗") {
		t.Errorf("failure not in the strip:\n%s", start)
	}
}

// With a confirmation to ask (apply --tui, the live watch), "upgrade
// complete" waits for the API server: a frozen or dead one kept the watch
// silent while the hold passed on what it had delivered. A refusal is said,
// the rule holds its time again, and the next answer that confirms it
// completes the upgrade, which is recorded only then.
// confirmingDashboard is a dashboard with a confirmation to ask, that has
// seen an upgrade reach done and held it through the completion gate: it
// is asking the API server.
func confirmingDashboard() (*Dashboard, *clocktesting.FakePassiveClock) {
	clk := clocktesting.NewFakePassiveClock(t0)
	d := NewDashboard(Options{Theme: themes.Mono, Clock: clk,
		Confirm: func(context.Context, *model.ClusterState) error { return nil }})
	d.SetSize(120, 40)
	d.Update(SnapshotMsg{State: fixtureMidEtcd()})
	done := fixtureHealthy()
	done.Version = 100
	clk.SetTime(t0.Add(frameInterval))
	d.Update(SnapshotMsg{State: done})
	clk.SetTime(t0.Add(frameInterval + model.DefaultCompletionGate().Hold))
	d.Update(clockMsg{})
	return d, clk
}

func TestCompletionWaitsForTheAPIServer(t *testing.T) {
	d, clk := confirmingDashboard()
	if out := screenOf(d); !d.confirm.asking || !strings.Contains(out, " every completion milestone met; confirming with the API server…") || strings.Contains(out, "✓ upgrade complete") || d.outcome != report.Running {
		t.Fatalf("asking %t, outcome %s:\n%s", d.confirm.asking, d.outcome, out)
	}
	// The API server does not answer.
	d.Update(confirmedMsg{asked: d.confirm.asked, err: errors.New("reading Cluster default/mgmt: no answer within 10s")})
	if out := screenOf(d); !strings.Contains(out, "every completion milestone met, not confirmed by the API server (reading Cluster default/mgmt: no answer") || strings.Contains(out, "✓ upgrade complete") || d.outcome != report.Running {
		t.Fatalf("refused, outcome %s:\n%s", d.outcome, out)
	}
	// The rule holds its time again, is asked again, and is confirmed.
	clk.SetTime(clk.Now().Add(model.DefaultCompletionGate().Hold))
	d.Update(clockMsg{})
	if !d.confirm.asking {
		t.Fatal("not asked again after the hold")
	}
	d.Update(confirmedMsg{asked: d.confirm.asked})
	if out := screenOf(d); !strings.Contains(out, " ✓ upgrade complete: every completion milestone met") || d.outcome != report.Done {
		t.Fatalf("confirmed, outcome %s:\n%s", d.outcome, out)
	}
}

// An answer to an earlier question (asked before the judge stopped saying
// done, then done again) is not the answer to the one under way: a late
// "confirmed" recorded the upgrade complete on a check of a state that had
// since stopped being done, and a late refusal cancelled a question still
// to be answered.
func TestCompletionIgnoresAnAnswerToAnEarlierQuestion(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"confirmed", nil},
		{"refused", errors.New("reading Cluster default/mgmt: no answer within 10s")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, clk := confirmingDashboard()
			if !d.confirm.asking {
				t.Fatal("first question not asked")
			}
			first := d.confirm.asked
			// The judge no longer says done, then says it again: a
			// second question is asked.
			again := fixtureMidEtcd()
			again.Version = 101
			clk.SetTime(clk.Now().Add(frameInterval))
			d.Update(SnapshotMsg{State: again})
			if d.confirm.asking {
				t.Fatal("still asking once the judge no longer says done")
			}
			done := fixtureHealthy()
			done.Version = 102
			clk.SetTime(clk.Now().Add(frameInterval))
			d.Update(SnapshotMsg{State: done})
			clk.SetTime(clk.Now().Add(model.DefaultCompletionGate().Hold))
			d.Update(clockMsg{})
			if !d.confirm.asking || d.confirm.asked == first {
				t.Fatalf("second question not asked: asking %t, asked %d", d.confirm.asking, d.confirm.asked)
			}
			d.Update(confirmedMsg{asked: first, err: tc.err})
			if out := screenOf(d); !d.confirm.asking || d.outcome != report.Running || strings.Contains(out, "✓ upgrade complete") ||
				!strings.Contains(out, "confirming with the API server…") {
				t.Fatalf("after the answer to the first question: asking %t, outcome %s:\n%s", d.confirm.asking, d.outcome, out)
			}
		})
	}
}

// The status line names what the workers' count counts: to an identity that
// may not list Nodes it is Machines (ready by their own Ready condition),
// and "11/12 nodes" claimed a look at Nodes the console never had.
func TestStatusLineWorkersCountNamesItsUnit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		forbid bool
		want   string
	}{
		{"nodes listed", false, "workers: 11/12 nodes upgraded and ready, 12 ready in all"},
		{"nodes forbidden", true, "workers: 11/12 machines upgraded and ready, 12 ready in all"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fixtureHealthy()
			s.Cluster.Conditions = slices.Clone(s.Cluster.Conditions)
			for i := range s.Cluster.Conditions {
				if c := &s.Cluster.Conditions[i]; c.Type == "WorkersReady" || c.Type == "Ready" {
					c.Status, c.Reason = "False", "RollingUpgradeInProgress"
				}
			}
			var ms []*model.Machine
			for _, m := range s.Machines.All() {
				c := *m
				if c.Role != model.RoleEtcd {
					c.Conditions = model.Conditions{cond(model.ConditionReady, "True", "", "", "", ago(time.Hour))}
				}
				if c.Role == model.RoleWorker {
					if c.Name == "mgmt-md-0-00011" {
						c.Version = oldK8s
					}
				}
				ms = append(ms, &c)
			}
			s.Machines = model.ListOf(ms...)
			if tc.forbid {
				s.Sources[model.KindNode] = model.SourceStatus{Installed: true, Forbidden: "list nodes (cluster-wide)"}
				s.Nodes = model.List[model.Node]{}
			}
			d := newTestDashboard(t, s, themes.Mono, 160, 40)
			if out := statusRows(d); !strings.Contains(out, tc.want) {
				t.Errorf("status lacks %q:\n%s", tc.want, out)
			}
		})
	}
}

// A console that did not run (ctrl+z, a laptop asleep) judges its old cache
// against the time now when it runs again: a step seen failed for a moment
// before the stop read as failed for the whole stop, and the dashboard
// declared the upgrade failed (an outcome it records once) before its
// informers caught up. It says it resumed, and the judge waits report's
// catch-up; what still holds after it is judged with its real age.
func TestDashboardAfterAStopCatchesUpBeforeJudging(t *testing.T) {
	for _, recovered := range []bool{false, true} {
		d, clk := clockedDashboard(160, 40)
		d.Update(SnapshotMsg{State: fixtureStepFailedAt(t0.Add(-5 * time.Second))})
		d.Update(clockMsg{})
		if d.outcome != report.Running {
			t.Fatalf("outcome %s before the stop, want running", d.outcome)
		}
		resumedAt := t0.Add(15 * time.Minute)
		clk.SetTime(resumedAt)
		d.Update(clockMsg{})
		if out := statusRows(d); d.outcome != report.Running || !strings.Contains(out, "resumed after 15m stopped; catching up") {
			t.Fatalf("just after the stop: outcome %s, want running, and the resumed line:\n%s", d.outcome, out)
		}
		if recovered {
			// The informers catch up: the step was retried meanwhile.
			d.Update(SnapshotMsg{State: fixtureMidWorkers()})
		}
		for at := time.Second; at <= report.CatchUpFor+time.Second; at += time.Second {
			clk.SetTime(resumedAt.Add(at))
			d.Update(clockMsg{})
			if at < report.CatchUpFor && d.outcome != report.Running {
				t.Fatalf("recovered=%v: outcome %s %s into the catch-up, want running", recovered, d.outcome, at)
			}
		}
		out := statusRows(d)
		if strings.Contains(out, "catching up") {
			t.Errorf("recovered=%v: still catching up after %s:\n%s", recovered, report.CatchUpFor, out)
		}
		want := report.Failed
		if recovered {
			want = report.Running
		}
		if d.outcome != want {
			t.Errorf("recovered=%v: outcome %s once caught up, want %s:\n%s", recovered, d.outcome, want, out)
		}
	}
}

// A control plane that finished while the console was stopped (a laptop
// asleep overnight) is timed to its ControlPlaneReady condition, not to the
// resume: "cp 8:10" of a ten-minute phase.
func TestDashboardAfterAStopTimesPhasesThatEndedUnseen(t *testing.T) {
	d, clk := clockedDashboard(160, 40)
	d.Update(SnapshotMsg{State: fixtureMidControlPlane()})
	d.Update(clockMsg{})
	if cp, _ := d.timeline.Entry(model.PhaseControlPlane); cp.Started.IsZero() {
		t.Fatalf("control plane not timed before the stop: %+v", cp)
	}
	cpEnd := t0.Add(10 * time.Minute)
	s := fixtureMidWorkers()
	s.Cluster.Generation = fixtureMidControlPlane().Cluster.Generation
	s.Cluster.Conditions = slices.Clone(s.Cluster.Conditions)
	for i := range s.Cluster.Conditions {
		if c := &s.Cluster.Conditions[i]; c.Type == model.ConditionControlPlaneReady {
			c.LastTransitionTime = cpEnd
		}
	}
	clk.SetTime(t0.Add(8 * time.Hour))
	d.Update(clockMsg{})
	d.Update(SnapshotMsg{State: s})
	d.Update(clockMsg{})
	if cp, _ := d.timeline.Entry(model.PhaseControlPlane); cp.Status != model.PhaseOK || cp.Finished != cpEnd {
		t.Errorf("control plane after the stop: %s, ended %v; want done, ended %v", cp.Status, cp.Finished, cpEnd)
	}
}

// A renewal of this console's lock that fails says why on the status
// lines, wrapped as a failure is: the header's badge has room for
// "renewal failing" alone, and the cause (a full disk under the audit log)
// showed only at 400 columns.
func TestDashboardSaysWhyItsLockIsNotRenewed(t *testing.T) {
	const why = "the audit log refuses entries: audit log /var/lib/state/upgrade-console/audit.log: write: no space left on device (free space on its disk)"
	d := NewDashboard(Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0),
		Lock: func() LockInfo { return LockInfo{Holder: "ops@bastion", Renewed: t0.Add(-time.Minute), RenewErr: why} }})
	d.SetSize(100, 30)
	d.Update(SnapshotMsg{State: fixtureMidWorkers()})
	d.Update(clockMsg{})
	out := strings.Join(strings.Fields(statusRows(d)), " ")
	if !strings.Contains(out, "this console's upgrade lock is not renewed: "+why) {
		t.Errorf("the status lines do not say why the lock is not renewed:\n%s", statusRows(d))
	}
}

// Another console's live lock: the menu does not offer the rollback (the
// plan refuses it), and the hint said "R: roll back" all the same.
func TestEtcdHintUnderAnotherConsolesLock(t *testing.T) {
	s := stuckEtcdState(t0)
	now := t0
	o := etcdOfferOf(s, time.Second, now, "alice@laptop/1")
	if o.newest == nil || !o.offered {
		t.Fatalf("the fixture's new member is not due: %+v", o)
	}
	s.Lock = &model.Lock{HolderIdentity: "bob@desk/2", Duration: time.Minute, RenewTime: now.Add(-5 * time.Second)}
	o = etcdOfferOf(s, time.Second, now, "alice@laptop/1")
	sl := model.Stall{Kind: model.KindMachine, Name: o.newest.Name}
	if o.offered || !strings.Contains(o.when(sl, time.Second), "another console holds the upgrade lock") {
		t.Errorf("under bob's live lock: %+v, %q", o, o.when(sl, time.Second))
	}
	if o := etcdOfferOf(s, time.Second, now, "bob@desk/2"); !o.offered || o.when(sl, time.Second) != "R: roll back" {
		t.Errorf("under this console's own lock: %+v", o)
	}
	// Bob's rollback of it under way: R offers nothing, and the hint
	// said "R shows it".
	s.Cluster.Annotations = map[string]string{model.AnnotationEKSAPaused: "true"}
	s.Cluster.Annotations[model.AnnotationEtcdRollbackRecord] = `{"newMachine":"` + o.newest.Name + `","startedAt":"2026-11-21T12:00:00Z"}`
	if rec, ok := s.Cluster.EtcdRollback(); !ok || !rec.Running() {
		t.Fatalf("the fixture's rollback record does not read as running: %+v %v", rec, ok)
	}
	o = etcdOfferOf(s, time.Second, now, "alice@laptop/1")
	if w := o.when(sl, time.Second); strings.Contains(w, "R shows it") || !strings.Contains(w, "another console") {
		t.Errorf("bob's rollback under way: %q", w)
	}
}

// Scrolled to its end, then zoomed, the events pane kept the offset of its
// one-row clamp: ten events at the top of a blank screen, and one k
// jumped 27 rows.
func TestZoomedEventsFillThePaneAtTheirEnd(t *testing.T) {
	s := fixtureLarge(1000)
	for i := range 120 {
		s.Events = append(s.Events, model.Event{Name: fmt.Sprintf("e%d", i), Type: "Normal", Reason: "Scaled", Message: fmt.Sprintf("event %d", i),
			ObjectKind: "MachineDeployment", ObjectName: "mgmt-md-0", LastTimestamp: t0.Add(-time.Duration(i) * time.Second)})
	}
	d := newTestDashboard(t, s, themes.Mono, 120, 40)
	d.focus = paneEvents
	d.Update(tea.KeyPressMsg{Code: 'G', Text: "G"})
	d.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	h := d.plan.height[paneEvents]
	if !d.zoom || h < 30 || len(d.events.rows) < 2*h {
		t.Fatalf("zoom %v, height %d, %d rows", d.zoom, h, len(d.events.rows))
	}
	if want := len(d.events.rows) - (h - 1); d.events.offset != want {
		t.Errorf("zoomed at the end: offset %d, want %d (the pane full):\n%s", d.events.offset, want, screenOf(d))
	}
}

// At 40x12 the pause after an etcd rollback has four rows, and its last
// was cut in the command that resumes the upgrade ("resume with
// `upgrade-console lock clear paused -…"), which pasted runs something
// else. Where the command does not fit whole, the sentence points at y,
// which copies it whole.
func TestPauseNeverCutsItsCommand(t *testing.T) {
	for _, sz := range [][2]int{{40, 10}, {40, 12}, {50, 12}, {60, 10}} {
		d := newTestDashboard(t, fixturePausedAfterRollback(), themes.Mono, sz[0], sz[1])
		out := ansi.Strip(d.View())
		requireLines(t, d.View(), sz[0], sz[1])
		for _, row := range strings.Split(out, "\n") {
			// Wrapped onto the next row is whole; cut, it ends in "…".
			if strings.Count(row, "`")%2 != 0 && strings.HasSuffix(strings.TrimRight(row, " "), "…") {
				t.Errorf("%dx%d: a command is cut on row %q:\n%s", sz[0], sz[1], row, out)
			}
		}
	}
	d := newTestDashboard(t, fixturePausedAfterRollback(), themes.Mono, 40, 12)
	out := ansi.Strip(d.View())
	if !strings.Contains(out, "the command y") || !strings.Contains(out, "after fixing the cause") {
		t.Errorf("the pause does not point at y whole:\n%s", out)
	}
	if cmds, _ := d.shownCommands(); !slices.Contains(cmds, "upgrade-console lock clear paused --cluster mgmt") {
		t.Errorf("y copies %q, not the command that resumes", cmds)
	}
	// Cut in its words, the pause keeps the pointer whole on its last
	// row: "removed: see the command …" at 40x12 said not where.
	for _, sz := range [][2]int{{40, 10}, {40, 12}} {
		d := newTestDashboard(t, fixtureHeld(), themes.Mono, sz[0], sz[1])
		if out := ansi.Strip(d.View()); !strings.Contains(out, "the command y copies") {
			t.Errorf("%dx%d: the pointer at y is cut:\n%s", sz[0], sz[1], out)
		}
	}
	// Where it fits whole, the command stays (80x24).
	d = newTestDashboard(t, fixturePausedAfterRollback(), themes.Mono, 80, 24)
	if out := ansi.Strip(d.View()); !strings.Contains(out, "`upgrade-console lock clear paused --cluster mgmt`") {
		t.Errorf("at 80x24 the command is not whole:\n%s", out)
	}
}

// Machines forbidden, the Nodes pane's title said "7 machines so far" above
// "forbidden: list machines…", as if the list were still loading.
func TestNodesTitleSaysNoCountWhileForbidden(t *testing.T) {
	s := noMachines(fixtureMidEtcd)()
	if s.Nodes.Len() == 0 {
		t.Fatal("the fixture lists no Node: the pane has no row to count")
	}
	d := newTestDashboard(t, s, themes.Mono, 150, 40)
	if title := segsText(d.nodes.title); strings.Contains(title, "so far") {
		t.Errorf("nodes title %q while machines are forbidden", title)
	}
	if out := screenOf(d); !strings.Contains(out, "forbidden: list machines.cluster.x-k8s.io") {
		t.Errorf("the pane does not say machines are forbidden:\n%s", out)
	}
}

// The access fix ran to some 300 columns on one row: zoomed at 150 the
// pane cut it at "resources: [machines], …", its verbs and the `kubectl
// auth can-i` that checks it unseen. It is wrapped in the pane, and y
// copies the command, whole with the connection flags.
func TestNodesPaneAccessFixIsReadableAndCopied(t *testing.T) {
	s := noMachines(fixtureMidEtcd)()
	s.Conn = model.ConnFlags{{Name: "kubeconfig", Value: "/home/ops/.kube/mgmt-admin.kubeconfig"}, {Name: "context", Value: "admin@mgmt"}}
	fix := model.GrantFor("list machines.cluster.x-k8s.io in eksa-system", s.Conn)
	check := backquoted(fix)
	if len(check) != 1 {
		t.Fatalf("the fix %q quotes %d commands, want 1", fix, len(check))
	}
	for _, w := range []int{80, 150} {
		d := newTestDashboard(t, s, themes.Mono, w, 40)
		d.focus = paneNodes
		d.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
		if !d.Zoomed() {
			t.Fatal("enter did not zoom the nodes pane")
		}
		flat := strings.Join(strings.Fields(screenOf(d)), " ")
		for _, want := range []string{"verbs: [list, watch]", strings.Join(strings.Fields(check[0]), " ")} {
			if !strings.Contains(flat, want) {
				t.Errorf("%d columns, zoomed: the pane lacks %q:\n%s", w, want, screenOf(d))
			}
		}
		if cmds, _ := d.shownCommands(); !slices.Contains(cmds, check[0]) {
			t.Errorf("%d columns: y copies %q, want %q among them", w, cmds, check[0])
		}
	}
}
