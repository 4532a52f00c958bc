package tui

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
	"github.com/upgrade-console/upgrade-console/upgrade/recovery"
)

var keyY = tea.KeyPressMsg{Code: 'y', Text: "y"}

// clipboardOf runs cmd and reports whether its message is tea.SetClipboard's
// of want (Bubble Tea does not export its type: compared whole).
func clipboardOf(cmd tea.Cmd, want string) (got tea.Msg, ok bool) {
	if cmd == nil {
		return nil, false
	}
	got = cmd()
	return got, reflect.TypeOf(got) == reflect.TypeOf(tea.SetClipboard("")()) && got == tea.SetClipboard(want)()
}

// The commands of a line are its backquoted spans, whole, taken from the
// text before it wraps: wrapWords breaks a span wider than the rows.
func TestBackquotedCommandsAreWholeWhereTheRowsWrap(t *testing.T) {
	lease := "upgrade-console lock clear lease --cluster mgmt --kubeconfig '/etc/eksa/mgmt/mgmt-eks-a-cluster.kubeconfig' --context prod"
	text := "make sure no upgrade is running, then `" + lease + "`; see `upgrade-console lock status --cluster mgmt` and again `" + lease + "`"
	rows := wrapWords(text, 60)
	if slices.ContainsFunc(rows, func(r string) bool { return strings.Contains(r, lease) }) {
		t.Fatalf("the test wants the command split over rows at 60 columns: %q", rows)
	}
	want := []string{lease, "upgrade-console lock status --cluster mgmt"}
	if got := backquoted(text); !slices.Equal(got, want) {
		t.Errorf("backquoted = %q, want %q", got, want)
	}
	for _, c := range []struct{ text, want string }{
		{"no command here", ""},
		{"an open `kubectl get pods", ""},
		{"a `kubectl get\n  pods` across lines", "kubectl get pods"},
		{"empty `` and `  `", ""},
		// Instructions and partial commands are not offered: pasted, the
		// shell reads <its as a redirection, and plan is no program.
		{"then `etcdctl member remove <its id>` on a member", ""},
		{"`plan --cluster` checks it, as `--snapshot-file <path>` does", ""},
		{"`kubectl get pods --token '<token>'`", "kubectl get pods --token '<token>'"},
	} {
		if got := strings.Join(backquoted(c.text), "|"); got != c.want {
			t.Errorf("backquoted(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

// y in the node detail puts the stall's retry, then the failing container's
// logs command, on the clipboard whole, with the connection flags, though
// the dialog wraps it over rows at 80 columns; the last line says what was
// sent, and how.
func TestYCopiesTheNodeDetailsLogsCommand(t *testing.T) {
	s := fixtureDetail()
	s.Conn = model.ConnFlags{{Name: "kubeconfig", Value: "/etc/eksa/mgmt/mgmt-eks-a-cluster.kubeconfig"}, {Name: "context", Value: "prod"}}
	logs := s.UpgraderPodOf("mgmt-cp-b8k4m").LogsCommand("kubeadm-upgrader", s.Conn)
	// Without the pod's BackOff events, listed last, G leaves the logs
	// command in view.
	s.Events = slices.DeleteFunc(slices.Clone(s.Events), func(e model.Event) bool { return e.ObjectKind == "Pod" })
	app := detailApp(t, s, 80, 24)
	filterTo(t, app, "b8k4m")
	pressRun(t, app, keyD)
	pressApp(t, app, tea.KeyPressMsg{Code: 'G', Text: "G"})
	screen := ansi.Strip(app.View().Content)
	if !strings.Contains(screen, "logs kubectl --kubeconfig") || strings.Contains(screen, logs) {
		t.Fatalf("the test wants the logs command shown wrapped at 80 columns:\n%s", screen)
	}
	if !strings.Contains(screen, "y copy") {
		t.Errorf("the detail's keys do not name y:\n%s", screen)
	}
	// Scrolled to the bottom, y starts at the logs command the screen
	// shows, not at the stall's retry scrolled out above it; y again goes
	// on to the retry. The notice numbers them in the detail's order.
	retry := "upgrade-console node retry mgmt-cp-b8k4m --cluster mgmt" + s.Conn.String()
	if strings.Contains(strings.Join(strings.Fields(screen), " "), "node retry") {
		t.Fatalf("the test wants the retry scrolled out of view:\n%s", screen)
	}
	for i, want := range []string{logs, retry} {
		_, cmd := app.Update(keyY)
		if got, ok := clipboardOf(cmd, want); !ok {
			t.Fatalf("y #%d gave %#v, want the clipboard set to %q", i+1, got, want)
		}
		if i == 0 {
			// At 80 columns the notice keeps the command's start and
			// its end: two commands that differ past the width read
			// apart.
			if last := lastRow(app); !strings.Contains(last, "copied 2/2 (OSC 52): kubectl --kubeconfig") || !strings.HasSuffix(strings.TrimSpace(last), "kubeadm-upgrader") {
				t.Errorf("the last line says %q", last)
			}
		}
	}
	// Back at the top, after another key, a run starts at the retry.
	pressApp(t, app, tea.KeyPressMsg{Code: 'g', Text: "g"})
	app.View() // as Bubble Tea draws after each message
	if _, cmd := app.Update(keyY); func() bool { _, ok := clipboardOf(cmd, retry); return !ok }() {
		t.Errorf("at the top y did not start at the retry")
	}
	topDetail(t, app) // y left the detail open
	pressApp(t, app, tea.KeyPressMsg{Code: 'k', Text: "k"})
	if last := lastRow(app); strings.Contains(last, "copied") {
		t.Errorf("the notice outlives the next key: %q", last)
	}
}

func lastRow(app *App) string {
	rows := strings.Split(ansi.Strip(app.View().Content), "\n")
	return rows[len(rows)-1]
}

// On the dashboard y copies the commands of the status lines shown, the
// next one on each press: the pause's (backquoted) and the Cluster API
// resume (in parentheses). The help names y
// only while there is one; with none, y says so and sends nothing; while
// the filter is typed, y is a letter of it.
func TestYCopiesTheDashboardsStatusCommandsInTurn(t *testing.T) {
	s := fixturePausedAfterRollback()
	s.Conn = model.ConnFlags{{Name: "context", Value: "prod"}}
	s.CAPICluster = &model.CAPICluster{Meta: model.Meta{Name: "mgmt", Namespace: "eksa-system"}, Paused: true}
	resume := s.CAPICluster.ResumeCommand(s.Conn)
	opts := Options{Theme: themes.Mono, ClusterName: "mgmt"}
	app := newTestApp(opts)
	app.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	app.Update(SnapshotMsg{State: s})
	if !strings.Contains(ansi.Strip(app.View().Content), "y copy command") {
		t.Errorf("the help does not name y:\n%s", ansi.Strip(app.View().Content))
	}
	d := app.screens[0].(*Dashboard)
	cmds, _ := d.shownCommands()
	if len(cmds) != 2 || !strings.HasPrefix(cmds[0], "upgrade-console lock clear paused") || cmds[1] != resume {
		t.Fatalf("commands shown: %q", cmds)
	}
	for i, want := range []string{cmds[0], resume, cmds[0]} {
		_, cmd := app.Update(keyY)
		if got, ok := clipboardOf(cmd, want); !ok {
			t.Fatalf("y #%d gave %#v, want %q", i+1, got, want)
		}
	}
	if last := lastRow(app); !strings.Contains(last, "copied 1/2 (OSC 52): ") {
		t.Errorf("the last line says %q", last)
	}

	pressApp(t, app, tea.KeyPressMsg{Code: '/', Text: "/"}, keyY)
	if d.filter.Value() != "y" || app.said != "" {
		t.Errorf("the filter reads %q, want the y typed; the App says %q", d.filter.Value(), app.said)
	}

	healthy := newTestApp(opts)
	healthy.Update(SnapshotMsg{State: fixtureHealthy()})
	if out := ansi.Strip(healthy.View().Content); strings.Contains(out, "copy command") {
		t.Errorf("the help names y with no command shown:\n%s", out)
	}
	if _, cmd := healthy.Update(keyY); cmd != nil {
		t.Errorf("y with no command shown gave %#v", cmd())
	}
	if last := lastRow(healthy); !strings.Contains(last, "no command shown to copy") {
		t.Errorf("the last line says %q", last)
	}
}

// In the recovery dialog the typed confirmation takes y as a letter; done,
// y copies the closing message's command.
func TestYInTheRecoveryDialog(t *testing.T) {
	f := &fakeRecovery{p: planFixture()}
	d := testDialog(RecoveryOptions{}, f)
	press(t, d, enter, enter)
	if d.Stage() != "confirm" {
		t.Fatalf("stage %s, want confirm", d.Stage())
	}
	app := newTestApp(Options{Theme: themes.Mono})
	app.Update(OpenDialogMsg{Dialog: d})
	pressApp(t, app, keyY)
	if d.input.Value() != "y" || app.said != "" {
		t.Fatalf("the confirmation reads %q, want the y typed; the App says %q", d.input.Value(), app.said)
	}

	resume := "upgrade-console lock clear paused --cluster mgmt --context prod"
	d.leaveInput(recDone)
	d.done = recovery.Report{Closing: []string{"etcd ready on the old version", "then resume EKS-A reconcile with: `" + resume + "`"}}
	d.relayout() // as the run's last message leaves it
	if v := ansi.Strip(d.View()); !strings.Contains(v, "y copy command") {
		t.Errorf("the done view's keys do not name y:\n%s", v)
	}
	_, cmd := app.Update(keyY)
	if got, ok := clipboardOf(cmd, resume); !ok {
		t.Fatalf("y gave %#v, want %q", got, resume)
	}
}

// The plan screen's commands are its fixes', whole: y copies the stale
// lock's clear, and its help names y.
func TestPlanScreenShowsItsFixesCommands(t *testing.T) {
	p := newTestPlanScreen(t, fixtureStaleLockPlan(), Options{}, PlanActions{}, 80, 24)
	cmds, ok := p.shownCommands()
	if !ok || !slices.Contains(cmds, "upgrade-console lock clear lease --cluster mgmt") {
		t.Errorf("commands shown: %q", cmds)
	}
	if v := ansi.Strip(p.View()); !strings.Contains(v, "y copy command") {
		t.Errorf("the help does not name y:\n%s", v)
	}
}

func TestCutMiddleKeepsTheStartAndTheEnd(t *testing.T) {
	const cmd = "upgrade-console lock clear paused --cluster mgmt --kubeconfig /etc/eksa/mgmt.kubeconfig"
	for _, c := range []struct {
		w    int
		want string
	}{
		{200, cmd},
		{40, "upgrade-console lock clear…mt.kubeconfig"},
		{5, "upgr…"},
	} {
		got := cutMiddle(cmd, c.w)
		if got != c.want || width(got) > c.w {
			t.Errorf("cutMiddle(%d) = %q (%d cells), want %q", c.w, got, width(got), c.want)
		}
	}
}

// Where the width would cut the recovery dialog's footer, y's key is said
// shorter, or not at all: q quit stays in view (at 80 columns a scrolled
// plan read "… · y copy co…" and lost it).
func TestRecoveryFooterKeepsQuitBeforeY(t *testing.T) {
	f := &fakeRecovery{p: planFixture()}
	d := testDialog(RecoveryOptions{}, f)
	d.leaveInput(recDone)
	closing := []string{"then resume EKS-A reconcile with: `upgrade-console lock clear paused --cluster mgmt --context prod`"}
	for range 30 {
		closing = append(closing, "a line of the report")
	}
	d.done = recovery.Report{Closing: closing}
	for _, c := range []struct {
		w    int
		want string
	}{
		{120, "· y copy command · ? help · q quit"},
		{74, "· y copy · q quit"},
		{64, "below) · q quit"},
	} {
		d.SetSize(c.w, 16)
		rows := strings.Split(ansi.Strip(d.View()), "\n")
		footer := ""
		for _, r := range rows {
			if strings.Contains(r, "enter/esc close") {
				footer = r
			}
		}
		if !strings.Contains(footer, c.want) {
			t.Errorf("at %d columns the footer reads %q, want it to hold %q", c.w, footer, c.want)
		}
	}
}

// firstInView reads the frame's rows and borders as spaces: a command
// wrapped over a dialog's rows is whole again; one whose rows are cut at
// the bottom counts by its start; none on screen is the first.
func TestFirstInView(t *testing.T) {
	cmds := []string{"upgrade-console lock clear lease --cluster mgmt", "upgrade-console lock clear paused --cluster mgmt --context prod"}
	for _, c := range []struct {
		name, screen string
		want         int
	}{
		{"wrapped in a dialog", "│ then `upgrade-console lock clear   │\n│ paused --cluster mgmt --context prod` │", 1},
		{"cut at the bottom", "│ lease first                         │\n│ `upgrade-console lock clear paused   │", 1},
		{"both whole", "`upgrade-console lock clear lease --cluster mgmt` and `upgrade-console lock clear paused --cluster mgmt --context prod`", 0},
		{"neither", "nothing here", 0},
	} {
		if got := firstInView(cmds, c.screen); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// At 40 columns, R recover offered beside a pause whose command the status
// line points at ("the command y copies"), the footer dropped y: "y copy
// command" did not fit beside R, ? and q, and y went whole. It says "copy"
// there, the pane keys gone before it.
func TestDashboardFooterKeepsYAt40Columns(t *testing.T) {
	s := fixtureHealthy()
	s.Cluster.Annotations[model.AnnotationEKSAPaused] = "true"
	rec := RecoveryAction(RecoveryOptions{backend: &fakeRecovery{p: planFixture()}, Now: func() time.Time { return t0 }})
	app := newTestApp(Options{Theme: themes.Mono, ClusterName: "mgmt", Actions: []Action{rec}})
	app.Update(tea.WindowSizeMsg{Width: 40, Height: 12})
	app.Update(SnapshotMsg{State: s})
	out := ansi.Strip(app.View().Content)
	if !strings.Contains(out, yPointer) {
		t.Fatalf("the status line does not point at y:\n%s", out)
	}
	if last, want := strings.TrimSpace(lastRow(app)), "R recover • y copy • ? help • q quit"; last != want {
		t.Errorf("the footer reads %q, want %q:\n%s", last, want, out)
	}
}

// At 40 columns, R recover offered and a node filter applied, "esc clear
// filter" was in no drop step: the footer, every pane key gone, still did
// not fit and was cut at its end, losing ? and q ("esc clear filter • R
// recover • ? help …"). esc says "clear" before y goes (the status line
// names y itself, nothing else names esc), and ? and q stay.
func TestDashboardFooterWithFilterAt40Columns(t *testing.T) {
	s := fixtureHealthy()
	s.Cluster.Annotations[model.AnnotationEKSAPaused] = "true"
	rec := RecoveryAction(RecoveryOptions{backend: &fakeRecovery{p: planFixture()}, Now: func() time.Time { return t0 }})
	for _, h := range []int{10, 24} {
		t.Run(fmt.Sprintf("40x%d", h), func(t *testing.T) {
			app := newTestApp(Options{Theme: themes.Mono, ClusterName: "mgmt", Actions: []Action{rec}})
			app.Update(tea.WindowSizeMsg{Width: 40, Height: h})
			app.Update(SnapshotMsg{State: s})
			for _, k := range []tea.KeyPressMsg{{Code: '/', Text: "/"}, {Code: 'c', Text: "c"}, {Code: 'p', Text: "p"}, {Code: tea.KeyEnter}} {
				_, cmd := app.Update(k)
				runCmds(cmd, func(m tea.Msg) { app.Update(m) })
			}
			out := ansi.Strip(app.View().Content)
			if !strings.Contains(out, `filter "cp"`) {
				t.Fatalf("no filter applied:\n%s", out)
			}
			if last, want := strings.TrimSpace(lastRow(app)), "esc clear • R recover • ? help • q quit"; last != want {
				t.Errorf("the footer reads %q, want %q:\n%s", last, want, out)
			}
			golden.RequireEqual(t, out)
		})
	}
}
