package tui

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/report"
	"github.com/upgrade-console/upgrade-console/themes"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// fixturePlan is a plan as upgrade.Plan makes it, its checks passed through
// model.WarnDowngrades as there: a component going down beside a passed
// eksa-version-skew check (and "✓ ready") is a screen the product never
// shows, and the goldens showed it.
func fixturePlan(blocked bool) *upgrade.Plan {
	p := &upgrade.Plan{Cluster: "mgmt", Namespace: "default"}
	p.Versions.CurrentEKSA, p.Versions.TargetEKSA = "v0.20.9", "v0.21.2"
	p.Versions.CurrentKubernetes, p.Versions.TargetKubernetes = "1.30", "1.31"
	p.Components = []model.ComponentDiff{
		// The management components upgraded first, as EKS-A's CLI does:
		// older, management-components blocks.
		{Key: "eksa", Name: "EKS-A management", OldVersion: "v0.21.2+d05f3a8", NewVersion: "v0.21.2+d05f3a8", Change: model.ChangeNone},
		{Key: "clusterAPI", Name: "cluster-api", OldVersion: "v1.8.4+b91e6c3", NewVersion: "v1.8.4+b91e6c3", Change: model.ChangeNone},
		{Key: "etcdadmController", Name: "etcdadm-controller", OldVersion: "v1.0.22+6b3f0d8", NewVersion: "v1.0.22+0badc0d", Change: model.ChangeRebuild},
		{Key: "snow", Name: "snow", OldVersion: "v0.1.27+abcdef1", NewVersion: "v0.1.27+abcdef1", Change: model.ChangeNone},
		{Key: model.KeyKubernetes, Name: "kubernetes (EKS-D)", OldVersion: "v1.30.5-eks-1-30-22", NewVersion: "v1.31.3-eks-1-31-11", Change: model.ChangeMinor},
		{Key: "cilium", Name: "cilium", OldVersion: "v1.15.14-eksa.9", NewVersion: "v1.15.14-eksa.10", Change: model.ChangeRebuild},
		{Key: "upgrader.upgrader", Name: "in-place upgrader image", OldVersion: "v1-30-17-eks-a-1", NewVersion: "v1-31-16-eks-a-1", Change: model.ChangeChanged},
	}
	p.Preflight = []model.CheckResult{
		{Name: "eksa-version-skew", Status: model.CheckPass, Message: "EKS-A v0.20.9 → v0.21.2 is one minor up"},
		{Name: "machine-templates", Status: model.CheckWarn, Message: "VSphereMachineConfig mgmt-cp (the cluster's: the spec file leaves it out): image ubuntu-2204-kube-1.30 named for Kubernetes 1.30, and the machines run 1.31",
			Remediation: "point it to the image built for 1.31, unless the image carries its eksdRelease tag"},
		{Name: "management-components", Status: model.CheckPass, Message: "management components at v0.21.2"},
		{Name: "nodes-ready", Status: model.CheckPass, Message: "all 7 nodes Ready", Skippable: true},
	}
	if blocked {
		p.Preflight = append(p.Preflight, model.CheckResult{Name: "eksa-reconcile-not-paused", Status: model.CheckFail, Blocking: true,
			Message:     "anywhere.eks.amazonaws.com/paused=true on Cluster mgmt",
			Remediation: "kubectl -n default annotate clusters.anywhere.eks.amazonaws.com mgmt anywhere.eks.amazonaws.com/paused-"})
	}
	model.WarnDowngrades(p.Preflight, p.Components, true)
	return p
}

func fixtureDryRun() *upgrade.DryRunResult {
	return &upgrade.DryRunResult{
		Objects: []upgrade.ObjectChange{
			{Object: "VSphereMachineConfig default/mgmt-cp", Fields: []upgrade.FieldChange{
				{Path: "spec.template", Old: "/SDDC-Datacenter/vm/Templates/ubuntu-2204-kube-1.30", New: "/SDDC-Datacenter/vm/Templates/ubuntu-2204-kube-1.31", Op: "change"},
			}},
			{Object: "Cluster default/mgmt", Fields: []upgrade.FieldChange{
				{Path: "spec.eksaVersion", Old: "v0.20.9", New: "v0.21.2", Op: "change"},
				{Path: "spec.kubernetesVersion", Old: "1.30", New: "1.31", Op: "change"},
			}},
		},
		Conflicts: []upgrade.FieldConflict{
			{Object: "VSphereMachineConfig default/mgmt-cp", Field: ".spec.template", Manager: "eks-a-cli"},
			{Object: "Cluster default/mgmt", Field: ".spec.eksaVersion", Manager: "eks-a-cli"},
			{Object: "Cluster default/mgmt", Field: ".spec.kubernetesVersion", Manager: "eks-a-cli"},
		},
	}
}

func newTestPlanScreen(t *testing.T, plan *upgrade.Plan, opts Options, actions PlanActions, w, h int) *PlanScreen {
	t.Helper()
	opts.Theme = themes.Mono
	opts.Clock = clocktesting.NewFakePassiveClock(t0)
	p := NewPlanScreen(context.Background(), opts, plan, actions)
	p.SetSize(w, h)
	return p
}

func TestPlanScreenGoldens(t *testing.T) {
	for _, c := range []struct {
		name    string
		blocked bool
		opts    Options
		dry     bool
		all     bool
		plan    func() *upgrade.Plan
	}{
		{name: "ready", dry: true},
		{name: "blocked", blocked: true},
		{name: "all-components", all: true},
		{name: "read-only", opts: Options{ReadOnly: true, Context: "admin@mgmt"}},
		{name: "spec-not-reached", plan: fixtureSpecNotReachedPlan},
	} {
		for _, sz := range [][2]int{{80, 30}, {120, 40}, {60, 16}, {40, 24}} {
			t.Run(fmt.Sprintf("%s/%dx%d", c.name, sz[0], sz[1]), func(t *testing.T) {
				pl := fixturePlan(c.blocked)
				if c.plan != nil {
					pl = c.plan()
				}
				p := newTestPlanScreen(t, pl, c.opts, PlanActions{}, sz[0], sz[1])
				if c.dry {
					p.Update(dryRunMsg{res: fixtureDryRun()})
				}
				if c.all {
					p.Update(tea.KeyPressMsg{Code: 'a', Text: "a"})
				}
				out := p.View()
				requireLines(t, out, sz[0], sz[1])
				golden.RequireEqual(t, out)
			})
		}
	}
}

func TestConfirmDialogGolden(t *testing.T) {
	d := newConfirmDialog(Options{Theme: themes.Mono}, fixturePlan(false), fixtureDryRun())
	d.SetSize(96, 36)
	out := ansi.Strip(d.View())
	for _, want := range []string{"Apply the new spec to cluster mgmt", "spec.kubernetesVersion", "owned by another field manager, eks-a-cli:", "…Templates/ubuntu-2204-kube-1.30 → …Templates/ubuntu-2204-kube-1.31", "[ ] take over", "type the cluster name (mgmt)"} {
		if !strings.Contains(out, want) {
			t.Errorf("dialog lacks %q:\n%s", want, out)
		}
	}
	golden.RequireEqual(t, d.View())
}

// On a wide screen the dialog widens, so that more of a changed template
// path is read than its last element (all the 84 columns it had allowed).
func TestConfirmDialogWidensOnAWideScreen(t *testing.T) {
	d := newConfirmDialog(Options{Theme: themes.Mono}, fixturePlan(false), fixtureDryRun())
	d.SetSize(200, 60)
	out := ansi.Strip(d.View())
	if want := "…vm/Templates/ubuntu-2204-kube-1.30 → …vm/Templates/ubuntu-2204-kube-1.31"; !strings.Contains(out, want) {
		t.Errorf("dialog at 200 columns lacks %q:\n%s", want, out)
	}
	for _, l := range strings.Split(out, "\n") {
		if w := width(l); w > dialogMaxWidth {
			t.Fatalf("dialog line is %d columns wide, want at most %d:\n%s", w, dialogMaxWidth, l)
		}
	}
}

func TestChangedValueKeepsWhatChanges(t *testing.T) {
	const tmpl = "/SDDC-Datacenter/vm/Templates/ubuntu-2204-kube-"
	for _, c := range []struct {
		name, old, new string
		avail          int
		want           string
	}{
		{"fits", "1.30", "1.31", 20, "1.30 → 1.31"},
		{"shared path cut after a slash", tmpl + "1.30", tmpl + "1.31", 60, "…ubuntu-2204-kube-1.30 → …ubuntu-2204-kube-1.31"},
		{"as little as fits without a slash", "aaaaaaaaaaaaaaaaaaaa-1", "aaaaaaaaaaaaaaaaaaaa-2", 30, "…aaaaaaaaaa-1 → …aaaaaaaaaa-2"},
		{"nothing shared: left whole, cut at the end later", "x" + tmpl, "y" + tmpl, 30, "x" + tmpl + " → y" + tmpl},
		{"one a prefix of the other", "abcdefghijklmnop", "abcdefghijklmnopq", 5, "… → …q"},
		{"never inside a character", "ééééééééé1", "ééééééééé2", 14, "…ééé1 → …ééé2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := changedValue(c.old, c.new, "→", c.avail)
			if got != c.want {
				t.Errorf("changedValue(%q, %q, %d) = %q, want %q", c.old, c.new, c.avail, got, c.want)
			}
		})
	}
}

func TestDryRunLinesNameEachManagerWhenMixed(t *testing.T) {
	th := themes.NewDark()
	st := newStyles(&th)
	dry := fixtureDryRun()
	dry.Conflicts[0].Manager = "kubectl-edit"
	var b strings.Builder
	for _, l := range dryRunLines(st, dry, 0, 100) {
		st.paintSegs(&b, l.segs, 100)
		b.WriteByte('\n')
	}
	out := ansi.Strip(b.String())
	for _, want := range []string{
		"3 field(s) owned by another field manager: ",
		".spec.template           VSphereMachineConfig default/mgmt-cp  (owned by kubectl-edit)",
		".spec.eksaVersion        Cluster default/mgmt  (owned by eks-a-cli)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	// At 80 columns the object, which tells the rows apart, stays whole;
	// the manager is what a cut takes.
	b.Reset()
	for _, l := range dryRunLines(st, dry, 0, 60) {
		st.paintSegs(&b, l.segs, 60)
		b.WriteByte('\n')
	}
	if out := ansi.Strip(b.String()); !strings.Contains(out, "VSphereMachineConfig default/mgmt-cp") {
		t.Errorf("a narrow row lost its object:\n%s", out)
	}
}

// fakeActions records what the screen asked for.
type fakeActions struct {
	mu       sync.Mutex
	started  []upgrade.StartOptions
	dryRuns  int
	rechecks int
	recheck  func(p *upgrade.Plan) *upgrade.Plan
}

func (f *fakeActions) actions() PlanActions {
	return PlanActions{
		Recheck: func(_ context.Context, p *upgrade.Plan) (*upgrade.Plan, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.rechecks++
			if f.recheck != nil {
				return f.recheck(p), nil
			}
			cp := *p
			return &cp, nil
		},
		DryRun: func(context.Context) (*upgrade.DryRunResult, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.dryRuns++
			return fixtureDryRun(), nil
		},
		Start: func(_ context.Context, p *upgrade.Plan, o upgrade.StartOptions) (*upgrade.Session, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.started = append(f.started, o)
			return &upgrade.Session{Plan: p, Snapshot: upgrade.SnapshotRef{Namespace: "eksa-system", Name: "upgrade-console-snapshot-mgmt-20261121-120000"}}, nil
		},
	}
}

func startPlanApp(t *testing.T, plan *upgrade.Plan, opts Options, f *fakeActions) (*teatest.TestModel, *chanSource) {
	t.Helper()
	src := newChanSource(t)
	opts.Source = src
	opts.Theme = themes.Mono
	opts.Clock = clocktesting.NewFakePassiveClock(t0)
	app := NewApp(opts, NewPlanScreen(context.Background(), opts, plan, f.actions()))
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(100, 40),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ASCII)))
	waitForText(t, tm, "PREFLIGHT")
	return tm, src
}

func TestPlanFlowApplyBehindTypedConfirmation(t *testing.T) {
	f := &fakeActions{}
	tm, src := startPlanApp(t, fixturePlan(false), Options{}, f)
	src.ch <- fixtureHealthy()
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter}) // runs the dry-run, then asks
	waitForText(t, tm, "type the cluster name")
	tm.Type("mgm")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitForText(t, tm, "exactly to apply")
	tm.Type("t")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitForText(t, tm, "tab takes them over")
	f.mu.Lock()
	if len(f.started) != 0 {
		t.Fatalf("started before the conflicts were accepted: %+v", f.started)
	}
	f.mu.Unlock()
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	app, screen := finishWhen(t, tm, func(a *App) bool { return len(a.screens) == 2 })
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.started) != 1 || !f.started[0].ForceConflicts || f.started[0].DryRun == nil || f.dryRuns != 1 {
		t.Fatalf("start calls %+v, dry-runs %d", f.started, f.dryRuns)
	}
	if _, ok := app.screens[1].(*Dashboard); !ok {
		t.Fatalf("top screen after the apply is %T, want the dashboard:\n%s", app.screens[1], screen)
	}
	plan := app.screens[0].(*PlanScreen)
	if plan.Session() == nil {
		t.Error("plan screen holds no session")
	}
}

func TestPlanFlowBlockedAndReadOnly(t *testing.T) {
	t.Run("blocked", func(t *testing.T) {
		f := &fakeActions{}
		tm, _ := startPlanApp(t, fixturePlan(true), Options{}, f)
		tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
		app, screen := finish(t, tm)
		if !strings.Contains(screen, "apply is blocked by eksa-reconcile-not-paused") {
			t.Errorf("no blocked message:\n%s", screen)
		}
		if len(f.started) != 0 || f.dryRuns != 0 || len(app.dialogs) != 0 {
			t.Errorf("blocked plan went on: started %v, dry-runs %d, dialogs %d", f.started, f.dryRuns, len(app.dialogs))
		}
		if !strings.Contains(screen, "fix: kubectl -n default annotate") {
			t.Errorf("remediation not shown:\n%s", screen)
		}
	})
	t.Run("read-only", func(t *testing.T) {
		f := &fakeActions{}
		tm, _ := startPlanApp(t, fixturePlan(false), Options{ReadOnly: true}, f)
		tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
		tm.Type("d") // the dry-run writes nothing: allowed
		waitForText(t, tm, "3 conflict(s)")
		app, screen := finish(t, tm)
		if len(f.started) != 0 || len(app.dialogs) != 0 {
			t.Errorf("read-only applied: %v", f.started)
		}
		if strings.Contains(screen, "enter apply") || !strings.Contains(screen, "read-only") {
			t.Errorf("read-only screen offers the apply:\n%s", screen)
		}
	})
}

func TestPlanFlowRechecksOnSnapshots(t *testing.T) {
	f := &fakeActions{recheck: func(p *upgrade.Plan) *upgrade.Plan {
		cp := *p
		cp.Preflight = append(append([]model.CheckResult(nil), p.Preflight...), model.CheckResult{
			Name: "nodes-ready", Status: model.CheckFail, Blocking: true, Message: "1 of 7 nodes not Ready: mgmt-md-0-x2k4p",
			Remediation: "bring the nodes back"})
		return &cp
	}}
	tm, src := startPlanApp(t, fixturePlan(false), Options{}, f)
	src.ch <- fixtureHealthy()
	waitForText(t, tm, "mgmt-md-0-x2k4p")
	app, _ := finish(t, tm)
	if p := app.screens[0].(*PlanScreen).Plan(); !p.Blocked() {
		t.Error("the rechecked plan does not block")
	}
}

// finishWhen waits until the dashboard shows the snapshot (it is on top
// after the apply), then quits and checks cond on the final App.
func finishWhen(t *testing.T, tm *teatest.TestModel, cond func(*App) bool) (*App, string) {
	t.Helper()
	waitForText(t, tm, "gen ")
	app, screen := finish(t, tm)
	if !cond(app) {
		t.Fatalf("condition not met at the end:\n%s", screen)
	}
	return app, screen
}

func TestHeaderShowsTheLock(t *testing.T) {
	st := newStyles(initialTheme(Options{Theme: themes.Mono}))
	s := fixtureHealthy()
	h := buildHeader(st, s, "", model.Progress{}, model.Timeline{}, Options{Lock: func() LockInfo {
		return LockInfo{Holder: "alice@laptop (console 3f2a9c1e)", Renewed: t0.Add(-3 * time.Second)}
	}}, t0)
	var b strings.Builder
	h.render(&b, st, 160, t0)
	// The lock is this console's own: said so, not named after its holder
	// as another console's is.
	if out := ansi.Strip(b.String()); !strings.Contains(out, "lock: held by this console (renewed 3s ago)") || strings.Contains(out, "alice@laptop") {
		t.Errorf("header lacks the lock, or names this console's lock after its holder:\n%s", out)
	}
	// At 80 columns, mid-upgrade, the lock's age gives way, not the versions.
	h = buildHeader(st, fixtureMidEtcd(), "", model.Progress{}, model.Timeline{}, Options{Lock: func() LockInfo {
		return LockInfo{Holder: "alice@laptop (console 3f2a9c1e)", Renewed: t0.Add(-3 * time.Second)}
	}}, t0)
	b.Reset()
	h.render(&b, st, 80, t0)
	first, _, _ := strings.Cut(ansi.Strip(b.String()), "\n")
	if !strings.Contains(first, "k8s 1.30 → 1.31") || !strings.Contains(first, "lock: this console") || strings.Contains(first, "…") {
		t.Errorf("at 80 columns the header's first line cuts the versions or drops the lock:\n%s", first)
	}
	h = buildHeader(st, s, "", model.Progress{}, model.Timeline{}, Options{Lock: func() LockInfo {
		return LockInfo{Holder: "alice@laptop (console 3f2a9c1e)", Renewed: t0.Add(-40 * time.Second), RenewErr: "leases.coordination.k8s.io is forbidden"}
	}}, t0)
	b.Reset()
	h.render(&b, st, 200, t0)
	if out := ansi.Strip(b.String()); !strings.Contains(out, "(renewed 40s ago) ⚠ renewal failing: leases.coordination.k8s.io is forbidden") {
		t.Errorf("header lacks the failing renewal:\n%s", out)
	}
	// Kept after a failure, it is no longer renewed: not "held".
	h = buildHeader(st, s, "", model.Progress{}, model.Timeline{}, Options{Lock: func() LockInfo {
		return LockInfo{Holder: "alice@laptop (console 3f2a9c1e)", Renewed: t0.Add(-3 * time.Minute), Kept: true}
	}}, t0)
	b.Reset()
	h.render(&b, st, 160, t0)
	if out := ansi.Strip(b.String()); !strings.Contains(out, "lock: kept by this console (the upgrade failed)") || strings.Contains(out, "held by") {
		t.Errorf("header does not say the lock is kept:\n%s", out)
	}
	// Cleared since (R, `lock clear lease`), as the watched Lease shows:
	// the header said "kept by this console" while the resumed upgrade ran
	// with no lock. Not watched, it cannot tell, and says kept.
	kept := func() LockInfo {
		return LockInfo{Holder: "alice@laptop (console 3f2a9c1e)", Renewed: t0.Add(-3 * time.Minute), Kept: true}
	}
	cleared := *s
	cleared.Lock = nil
	cleared.Sources = map[model.Kind]model.SourceStatus{model.KindLease: {Installed: true, Synced: true}}
	h = buildHeader(st, &cleared, "", model.Progress{}, model.Timeline{}, Options{Lock: kept}, t0)
	b.Reset()
	h.render(&b, st, 160, t0)
	if out := ansi.Strip(b.String()); !strings.Contains(out, "lock: this console's kept lock was cleared") || strings.Contains(out, "kept by this console") {
		t.Errorf("header does not say the kept lock was cleared:\n%s", out)
	}
	taken := cleared
	taken.Lock = &model.Lock{Namespace: "eksa-system", Name: "upgrade-console-mgmt", HolderIdentity: "bob@desk/b0b", AcquireTime: t0, RenewTime: t0, Duration: time.Minute}
	h = buildHeader(st, &taken, "", model.Progress{}, model.Timeline{}, Options{Lock: kept}, t0)
	b.Reset()
	h.render(&b, st, 160, t0)
	if out := ansi.Strip(b.String()); !strings.Contains(out, "kept lock was cleared") || !strings.Contains(out, "lock: bob@desk") {
		t.Errorf("header does not say the kept lock was cleared and who holds the lock now:\n%s", out)
	}
	unwatched := cleared
	unwatched.Sources = map[model.Kind]model.SourceStatus{model.KindLease: {Installed: true, Synced: true, Forbidden: "list leases in eksa-system"}}
	h = buildHeader(st, &unwatched, "", model.Progress{}, model.Timeline{}, Options{Lock: kept}, t0)
	b.Reset()
	h.render(&b, st, 160, t0)
	if out := ansi.Strip(b.String()); !strings.Contains(out, "lock: kept by this console") {
		t.Errorf("a lease not watched reads as cleared:\n%s", out)
	}
	h = buildHeader(st, s, "", model.Progress{}, model.Timeline{}, Options{Lock: func() LockInfo { return LockInfo{Lost: true} }}, t0)
	b.Reset()
	h.render(&b, st, 160, t0)
	if out := ansi.Strip(b.String()); !strings.Contains(out, "lock lost") {
		t.Errorf("header lacks the lost lock:\n%s", out)
	}
}

// TestPlanStatusFollowsTheChecks: the "apply is blocked" message names the
// checks that block now, and goes once a run of the checks blocks nothing
// (a recovery action cleared the stale lock, then r).
func TestPlanStatusFollowsTheChecks(t *testing.T) {
	blocked := fixturePlan(true)
	blocked.Preflight = append(blocked.Preflight, model.CheckResult{Name: "upgrade-lock", Status: model.CheckFail, Blocking: true,
		Message: "the upgrade lock is held by ops@bastion-1, not renewed for 3h", Remediation: "upgrade-console lock clear lease"})
	next := blocked
	f := &fakeActions{recheck: func(*upgrade.Plan) *upgrade.Plan { return next }}
	p := newTestPlanScreen(t, blocked, Options{}, f.actions(), 80, 30)
	screen := func() string { return strings.Join(strings.Fields(ansi.Strip(p.View())), " ") }

	_, cmd := p.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if cmd != nil {
		t.Fatal("enter on a blocked plan returned a command")
	}
	if s := screen(); !strings.Contains(s, "apply is blocked by eksa-reconcile-not-paused, upgrade-lock") {
		t.Fatalf("no blocked message:\n%s", ansi.Strip(p.View()))
	} else if !strings.Contains(s, "fix what the checks say (r re-runs them)") {
		t.Errorf("what to do is cut from the blocked message:\n%s", ansi.Strip(p.View()))
	}

	// The run of the checks fails: what they said last still holds.
	_, cmd = p.Update(recheckedMsg{err: fmt.Errorf("connection refused")})
	drive(t, p, cmd)
	if s := screen(); !strings.Contains(s, "apply is blocked by eksa-reconcile-not-paused, upgrade-lock") {
		t.Errorf("a failed run of the checks dropped the blocked message:\n%s", ansi.Strip(p.View()))
	}

	// The stale lock is cleared; the pause is still there.
	next = fixturePlan(true)
	_, cmd = p.Update(tea.KeyPressMsg{Code: 'r', Text: "r"})
	drive(t, p, cmd)
	if s := screen(); !strings.Contains(s, "apply is blocked by eksa-reconcile-not-paused:") || strings.Contains(s, "upgrade-lock:") {
		t.Errorf("the blocked message does not follow the checks:\n%s", ansi.Strip(p.View()))
	}

	// Both cleared: nothing blocks, and the screen says so.
	next = fixturePlan(false)
	_, cmd = p.Update(tea.KeyPressMsg{Code: 'r', Text: "r"})
	drive(t, p, cmd)
	s := screen()
	if strings.Contains(s, "blocked") || !strings.Contains(s, "ready: enter applies the spec") {
		t.Errorf("the status still says blocked although no check blocks:\n%s", ansi.Strip(p.View()))
	}
	if f.rechecks != 2 {
		t.Errorf("%d runs of the checks, want 2", f.rechecks)
	}
}

// TestPlanStatusFollowsTheDryRun: the dry-run's refusal goes with the next
// dry-run that succeeds.
func TestPlanStatusFollowsTheDryRun(t *testing.T) {
	p := newTestPlanScreen(t, fixturePlan(false), Options{}, (&fakeActions{}).actions(), 100, 30)
	p.Update(dryRunMsg{err: fmt.Errorf("the server could not find the requested resource")})
	p.Update(tea.KeyPressMsg{Code: tea.KeyEnter}) // a failed dry-run is run again first
	p.Update(dryRunMsg{err: fmt.Errorf("the server could not find the requested resource")})
	if s := ansi.Strip(p.View()); !strings.Contains(s, "dry-run failed") {
		t.Fatalf("no dry-run failure:\n%s", s)
	}
	p.Update(dryRunMsg{res: fixtureDryRun()})
	if s := ansi.Strip(p.View()); strings.Contains(s, "dry-run failed") || !strings.Contains(s, "ready: enter applies") {
		t.Errorf("the dry-run failure outlived a dry-run that succeeded:\n%s", s)
	}
}

// fixtureManyConflicts is the dry-run of a cluster the EKS-A CLI created
// with a machine config per node group: a field changes on each, and the
// CLI owns every one of them.
func fixtureManyConflicts() *upgrade.DryRunResult {
	dry := &upgrade.DryRunResult{Objects: []upgrade.ObjectChange{{Object: "VSphereDatacenterConfig default/mgmt"}}}
	const tmpl = "/SDDC-Datacenter/vm/Templates/ubuntu-2204-kube-"
	for _, mc := range []string{"mgmt-cp", "mgmt-etcd", "mgmt-md-0", "mgmt-md-1", "mgmt-md-2", "mgmt-md-3"} {
		obj := "VSphereMachineConfig default/" + mc
		dry.Objects = append(dry.Objects, upgrade.ObjectChange{Object: obj, Fields: []upgrade.FieldChange{
			{Path: "spec.template", Old: tmpl + "1.30", New: tmpl + "1.31", Op: "change"}}})
		dry.Conflicts = append(dry.Conflicts, upgrade.FieldConflict{Object: obj, Field: ".spec.template", Manager: "eks-a-cli"})
	}
	dry.Objects = append(dry.Objects, upgrade.ObjectChange{Object: "Cluster default/mgmt", Fields: []upgrade.FieldChange{
		{Path: "spec.eksaVersion", Old: "v0.20.9", New: "v0.21.2", Op: "change"},
		{Path: "spec.kubernetesVersion", Old: "1.30", New: "1.31", Op: "change"},
	}})
	dry.Conflicts = append(dry.Conflicts,
		upgrade.FieldConflict{Object: "Cluster default/mgmt", Field: ".spec.eksaVersion", Manager: "eks-a-cli"},
		upgrade.FieldConflict{Object: "Cluster default/mgmt", Field: ".spec.kubernetesVersion", Manager: "eks-a-cli"})
	return dry
}

// confirmOnApp opens the confirmation dialog over the plan screen of an App
// on a w×h terminal, as enter does once the dry-run is back.
func confirmOnApp(t *testing.T, dry *upgrade.DryRunResult, w, h int) (*App, *confirmDialog) {
	t.Helper()
	opts := Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0)}
	a := NewApp(opts, NewPlanScreen(context.Background(), opts, fixturePlan(false), PlanActions{}))
	a.Update(tea.WindowSizeMsg{Width: w, Height: h})
	d := newConfirmDialog(opts, fixturePlan(false), dry)
	ts := d.input.Styles()
	ts.Cursor.Blink = false
	d.input.SetStyles(ts)
	a.Update(OpenDialogMsg{Dialog: d})
	return a, d
}

// appKeys sends keys to the App, which routes them to the open dialog.
func appKeys(a *App, keys ...tea.KeyPressMsg) {
	for _, k := range keys {
		a.Update(k)
	}
}

// At 40 columns the title and the versions are wider than the dialog: cut
// at its edge, it read "Apply the new spec to cluster m…", the dialog that
// confirms the apply without the name of its cluster. The name and the
// Kubernetes versions take rows of their own.
func TestConfirmDialogAt40ColumnsNamesTheCluster(t *testing.T) {
	_, d := confirmOnApp(t, fixtureDryRun(), 40, 24)
	rows := strings.Split(ansi.Strip(d.View()), "\n")
	trim := func(r string) string { return strings.TrimSpace(strings.Trim(r, "│")) }
	want := []string{"Apply the new spec to cluster", "mgmt", "EKS-A v0.20.9 → v0.21.2", "Kubernetes 1.30 → 1.31"}
	if len(rows) < 1+len(want) {
		t.Fatalf("%d rows:\n%s", len(rows), strings.Join(rows, "\n"))
	}
	for i, w := range want {
		if got := trim(rows[1+i]); got != w {
			t.Errorf("row %d is %q, want %q:\n%s", 1+i, got, w, strings.Join(rows, "\n"))
		}
	}
}

// At 40x14 (the App gives the dialog 36x10) the box, the prompt and the
// keys wrap to seven rows: fixed, they pushed the dialog to 12 rows, and the
// App cut its top. They scroll at the list's end instead, opened at the box,
// whose tick tab shows; the input and the keys stay.
func TestConfirmDialogAt40x14ScrollsItsBoxAndPrompt(t *testing.T) {
	a, d := confirmOnApp(t, fixtureManyConflicts(), 40, 14)
	_, dh := a.dialogSize()
	shows := func(step string, want ...string) {
		t.Helper()
		out := ansi.Strip(d.View())
		if rows := strings.Count(out, "\n") + 1; rows > dh {
			t.Errorf("%s: the dialog takes %d rows, more than %d:\n%s", step, rows, dh, out)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: the dialog lacks %q:\n%s", step, w, out)
			}
		}
	}
	shows("opened", "[ ] take over the 8 field(s)", "> cluster name", "esc cancel")
	appKeys(a, typeText("mg")...)
	appKeys(a, enter)
	shows("a name refused", "[ ] take over the 8 field(s)", "> mg", `type "mgmt" exactly`, "esc cancel")
	appKeys(a, tea.KeyPressMsg{Code: tea.KeyTab})
	shows("ticked", "[x] take over the 8 field(s)", "> mg", "esc cancel")
}

// At 40x10 (the App gives the dialog 36x6) the keys wrap to two rows and
// the list had none: the dialog showed what to type, the input and the
// keys, with no box, no sign of the rows out of view, and ↑/pgup scrolled
// nothing seen. One row of the list, opened at the box, scrolls with ↑/↓ and
// pgup/pgdn, its counts beside the keys; the empty input says what to type.
func TestConfirmDialogAt40x10ScrollsItsBoxAndPrompt(t *testing.T) {
	a, d := confirmOnApp(t, fixtureManyConflicts(), 40, 10)
	_, dh := a.dialogSize()
	counts := regexp.MustCompile(`(\d+)↑ (\d+)↓`)
	view := func(step string, want ...string) (string, []string) {
		t.Helper()
		out := ansi.Strip(d.View())
		if rows := strings.Count(out, "\n") + 1; rows > dh {
			t.Errorf("%s: the dialog takes %d rows, more than %d:\n%s", step, rows, dh, out)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: the dialog lacks %q:\n%s", step, w, out)
			}
		}
		m := counts.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("%s: no counts of the rows out of view:\n%s", step, out)
		}
		return out, m[1:]
	}
	opened, at := view("opened", "[ ] take over the 8 field(s)", `> type "mgmt" to confirm`, "esc cancel")
	appKeys(a, tea.KeyPressMsg{Code: tea.KeyUp})
	up, atUp := view("↑", `> type "mgmt" to confirm`, "esc cancel")
	if up == opened || atUp[0] == at[0] {
		t.Errorf("↑ scrolled nothing:\n%s", up)
	}
	appKeys(a, tea.KeyPressMsg{Code: tea.KeyPgUp}, tea.KeyPressMsg{Code: tea.KeyPgUp})
	if _, atPg := view("pgup"); atPg[0] == atUp[0] {
		t.Errorf("pgup scrolled nothing: %v", atPg)
	}
	appKeys(a, tea.KeyPressMsg{Code: tea.KeyPgDown}, tea.KeyPressMsg{Code: tea.KeyPgDown}, tea.KeyPressMsg{Code: tea.KeyDown})
	if back, _ := view("back down"); back != opened {
		t.Errorf("pgdn and ↓ did not come back to the box:\n%s", back)
	}
	appKeys(a, tea.KeyPressMsg{Code: tea.KeyTab})
	view("ticked", "[x] take over the 8 field(s)", "tab leave")
	appKeys(a, typeText("mg")...)
	appKeys(a, enter)
	if out := ansi.Strip(d.View()); !strings.Contains(out, "> mg") || !strings.Contains(out, `type "mgmt" exactly`) {
		t.Errorf("a name refused: the input or what to type is not in view:\n%s", out)
	}
}

// A resize opens the list at the box again: scrolled up at 40x10 and made
// 40x12, the dialog kept the offset and opened on the conflict rows, the
// box and the prompt below them out of view.
func TestConfirmDialogResizedOpensAtTheBox(t *testing.T) {
	a, d := confirmOnApp(t, fixtureManyConflicts(), 40, 10)
	appKeys(a, tea.KeyPressMsg{Code: tea.KeyUp}, tea.KeyPressMsg{Code: tea.KeyPgUp})
	for _, sz := range [][2]int{{40, 12}, {40, 10}, {40, 14}} {
		a.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		if out := ansi.Strip(d.View()); !strings.Contains(out, "[ ] take over the 8 field(s)") {
			t.Errorf("resized to %dx%d, the box is out of view:\n%s", sz[0], sz[1], out)
		}
		appKeys(a, tea.KeyPressMsg{Code: tea.KeyUp}, tea.KeyPressMsg{Code: tea.KeyUp})
	}
}

// On a terminal too short for the dialog's fixed rows (a small split pane,
// 40×8), the input being typed and the keys stay on the screen: the canvas
// cut the dialog's bottom, and the operator typed the cluster name blind,
// with no way to see what enter was about to apply.
func TestConfirmDialogOnAShortTerminalKeepsTheInput(t *testing.T) {
	for _, size := range [][2]int{{40, 8}, {40, 10}, {60, 8}, {30, 12}} {
		a, _ := confirmOnApp(t, fixtureManyConflicts(), size[0], size[1])
		appKeys(a, typeText("mg")...)
		out := ansi.Strip(a.View().Content)
		lines := strings.Split(out, "\n")
		if len(lines) != size[1] {
			t.Fatalf("%dx%d: %d lines:\n%s", size[0], size[1], len(lines), out)
		}
		if !strings.Contains(out, "> mg") || !strings.Contains(out, "esc") {
			t.Errorf("%dx%d: the input or the keys are off the screen:\n%s", size[0], size[1], out)
		}
	}
}

// TestConfirmDialogAt80x24: on an 80×24 terminal the list of changes and
// conflicts is longer than the dialog; it scrolls, and the box, the prompt,
// the input, the error and the keys stay on the screen.
func TestConfirmDialogAt80x24(t *testing.T) {
	a, d := confirmOnApp(t, fixtureManyConflicts(), 80, 24)
	screen := func() string { return ansi.Strip(a.View().Content) }
	requireInView := func(t *testing.T, out string, wants ...string) {
		t.Helper()
		lines := strings.Split(out, "\n")
		if len(lines) != 24 {
			t.Fatalf("%d lines, want 24:\n%s", len(lines), out)
		}
		for _, want := range wants {
			if !strings.Contains(out, want) {
				t.Errorf("screen lacks %q:\n%s", want, out)
			}
		}
		// The dialog is whole: its bottom border is on the screen.
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "└──") }) {
			t.Errorf("the dialog's bottom edge is off the screen:\n%s", out)
		}
	}
	top := screen()
	requireInView(t, top, "Apply the new spec to cluster mgmt", "↓ ", "more · ↑/↓ pgup/pgdn scroll",
		"[ ] take over the 8 field(s) eks-a-cli owns", "type the cluster name (mgmt) to confirm:", "> cluster name",
		"enter apply · tab take over fields · esc cancel")
	t.Run("top", func(t *testing.T) { golden.RequireEqual(t, top) })

	// The end of the list is reached with the keys; letters are typed.
	appKeys(a, tea.KeyPressMsg{Code: tea.KeyPgDown}, tea.KeyPressMsg{Code: tea.KeyPgDown}, tea.KeyPressMsg{Code: tea.KeyPgDown}, tea.KeyPressMsg{Code: tea.KeyDown})
	appKeys(a, typeText("mgmt")...)
	appKeys(a, enter)
	bottom := screen()
	// At the end of the list, which stays there when the error takes a
	// row from it.
	requireInView(t, bottom, ".spec.kubernetesVersion  Cluster default/mgmt", "above · ↑/↓ pgup/pgdn scroll", "> mgmt",
		"8 field(s) belong to another manager: tab takes them over, or esc and", "resolve them")
	if d.Typed() != "mgmt" {
		t.Errorf("typed %q, want mgmt", d.Typed())
	}
	t.Run("end-with-error", func(t *testing.T) { golden.RequireEqual(t, bottom) })

	for range 5 {
		appKeys(a, tea.KeyPressMsg{Code: tea.KeyPgUp})
	}
	requireInView(t, screen(), "The upgrade lock is taken", "more · ↑/↓ pgup/pgdn scroll")
	if strings.Contains(screen(), "above · ↑/↓") {
		t.Errorf("not at the top after paging up:\n%s", screen())
	}
}

// dialogText is the text inside the dialog's border on a screen, its lines
// joined by spaces: what a message says once wrapped.
func dialogText(screen string) string {
	var parts []string
	for _, l := range strings.Split(screen, "\n") {
		i, j := strings.Index(l, "│"), strings.LastIndex(l, "│")
		if i >= 0 && j > i {
			if s := strings.TrimSpace(l[i+len("│") : j]); s != "" {
				parts = append(parts, s)
			}
		}
	}
	return strings.Join(parts, " ")
}

// TestConfirmDialogWrapsWhatToDo: what the operator is told to do (the
// errors, the box, the prompt, the keys) wraps in the dialog instead of
// being cut, at every size, and stays on the screen with the input.
func TestConfirmDialogWrapsWhatToDo(t *testing.T) {
	for _, sz := range [][2]int{{60, 16}, {80, 24}, {100, 30}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			a, _ := confirmOnApp(t, fixtureManyConflicts(), sz[0], sz[1])
			check := func(wants ...string) {
				t.Helper()
				screen := ansi.Strip(a.View().Content)
				if !strings.Contains(screen, "└") || strings.Count(screen, "\n")+1 != sz[1] {
					t.Fatalf("the dialog does not fit:\n%s", screen)
				}
				text := dialogText(screen)
				for _, want := range wants {
					if !strings.Contains(text, want) {
						t.Errorf("dialog lacks %q:\n%s", want, screen)
					}
				}
			}
			appKeys(a, typeText("mgm")...)
			appKeys(a, enter)
			check(`type "mgmt" exactly to apply, or esc to cancel`, "> mgm", "type the cluster name (mgmt) to confirm:",
				"[ ] take over the 8 field(s) eks-a-cli owns (recorded in the audit log)", "enter apply · tab take over fields · esc cancel")
			appKeys(a, typeText("t")...)
			appKeys(a, enter)
			check("8 field(s) belong to another manager: tab takes them over, or esc and resolve them", "> mgmt")
			// Ticked, tab unticks it, and the keys say so.
			appKeys(a, tea.KeyPressMsg{Code: tea.KeyTab})
			check("[x] take over the 8 field(s) eks-a-cli owns", "enter apply · tab leave the fields · esc cancel")
		})
	}
}

// fixtureStaleLockPlan is the plan of the demo's stale-lock world: checks
// whose messages and fixes run over several rows, with commands to copy.
func fixtureStaleLockPlan() *upgrade.Plan {
	p := fixturePlan(false)
	p.Preflight = []model.CheckResult{
		{Name: "eksa-version-skew", Status: model.CheckPass, Message: "EKS-A v0.20.9 → v0.21.2 is one minor up"},
		{Name: "target-release-present", Status: model.CheckPass, Message: "EKSARelease eksa-v0-21-2 → Bundles eksa-system/bundles-84"},
		{Name: "spec-accepted", Status: model.CheckWarn,
			Message:     "the API server could not be asked to validate the spec: the server was unable to return a response in the time allotted, but may still be processing the request",
			Remediation: "`upgrade-console apply -f mgmt-v0.21.2-k8s-1.31.yaml --cluster mgmt --dry-run` shows its answer"},
		{Name: "upgrade-lock", Status: model.CheckFail, Blocking: true,
			Message:     "stale upgrade lock: Lease eksa-system/upgrade-console-mgmt held by ops@bastion-1 (console 5d0c9e1a) since 2026-11-22T21:03:36Z (3h20m ago); stale: not renewed for 3h0m",
			Remediation: "make sure no upgrade is running (the holder's console is gone or its upgrade failed), then `upgrade-console lock clear lease --cluster mgmt`"},
		{Name: "eksa-reconcile-not-paused", Status: model.CheckFail, Blocking: true,
			Message:     "anywhere.eks.amazonaws.com/paused=true on Cluster mgmt: the EKS-A controller ignores the cluster, the new spec would never be reconciled",
			Remediation: "if no other tool is working on the cluster (a failed eksctl upgrade leaves it behind), see `upgrade-console lock status --cluster mgmt`, then clear it with `upgrade-console lock clear paused --cluster mgmt` (recorded)"},
	}
	return p
}

// TestPlanScreenKeepsEveryFixWhole: a check's message and fix wrap within
// the width, nothing of them is cut or split mid-word, and each `command`
// stays on one row, so what the operator copies runs what the check says.
// The fix's continuation rows are indented under its text; they once got
// the indent on top of rows already as wide as the screen, which cut them.
func TestPlanScreenKeepsEveryFixWhole(t *testing.T) {
	pl := fixtureStaleLockPlan()
	for _, w := range []int{60, 80, 100, 120, 160} {
		t.Run(strconv.Itoa(w), func(t *testing.T) {
			p := newTestPlanScreen(t, pl, Options{}, PlanActions{}, w, 200)
			out := ansi.Strip(p.View())
			rows := strings.Split(out, "\n")
			start := slices.IndexFunc(rows, func(r string) bool { return strings.HasPrefix(r, " PREFLIGHT") })
			end := slices.IndexFunc(rows, func(r string) bool { return strings.HasPrefix(r, " DRY-RUN") })
			checks := rows[start:end]
			for _, r := range checks {
				if ansi.StringWidth(r) > w || strings.Contains(r, "…") {
					t.Errorf("row cut or too wide (%d cells): %q", ansi.StringWidth(r), r)
				}
			}
			text := strings.Join(strings.Fields(strings.Join(checks, " ")), " ")
			for _, c := range pl.Preflight {
				if !strings.Contains(text, c.Message) {
					t.Errorf("%s: message not whole in %q", c.Name, text)
				}
				if c.Remediation != "" && !strings.Contains(text, "fix: "+c.Remediation) {
					t.Errorf("%s: fix not whole in %q", c.Name, text)
				}
				for _, cmd := range regexp.MustCompile("`[^`]*`").FindAllString(c.Remediation, -1) {
					if width(cmd) <= w-11 && !slices.ContainsFunc(checks, func(r string) bool { return strings.Contains(r, cmd) }) {
						t.Errorf("%s: %s split across rows:\n%s", c.Name, cmd, strings.Join(checks, "\n"))
					}
				}
			}
		})
	}
}

// TestPlanScreenAt80x24 is the stale-lock plan on an 80×24 terminal: the
// key help keeps ? and q (the less needed keys give way), the rule under
// the list says how much is below it, and the blocked status names R
// recover, offered for the stale lock and the leftover pause.
func TestPlanScreenAt80x24(t *testing.T) {
	state := fixtureHealthy()
	state.Cluster.Annotations[model.AnnotationEKSAPaused] = "true"
	a := RecoveryAction(RecoveryOptions{backend: &fakeRecovery{p: planFixture()}, Now: func() time.Time { return t0 }})
	p := newTestPlanScreen(t, fixtureStaleLockPlan(), Options{Actions: []Action{a}}, (&fakeActions{}).actions(), 80, 24)
	p.Update(SnapshotMsg{State: state})
	p.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	out := ansi.Strip(p.View())
	requireLines(t, out, 80, 24)
	rows := strings.Split(out, "\n")
	help := rows[len(rows)-1]
	for _, want := range []string{"enter apply", "R recover", "? help", "q quit"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q: %q", want, help)
		}
	}
	if strings.Contains(help, "…") {
		t.Errorf("help cut: %q", help)
	}
	rule := lastRule(rows)
	if !regexp.MustCompile(`─ ↓ \d+ more ─$`).MatchString(rows[rule]) {
		t.Errorf("the rule under the list does not say it scrolls: %q", rows[rule])
	}
	flat := strings.Join(strings.Fields(strings.Join(rows[rule+1:len(rows)-1], " ")), " ")
	if want := "apply is blocked by upgrade-lock, eksa-reconcile-not-paused: fix what the checks say, or R recover (r re-runs them)"; !strings.Contains(flat, want) {
		t.Errorf("status lacks %q:\n%s", want, out)
	}
	golden.RequireEqual(t, out)

	// At the end of the list the rule says what is above, and no more
	// below.
	for range 10 {
		p.Update(tea.KeyPressMsg{Code: tea.KeyPgDown})
	}
	rows = strings.Split(ansi.Strip(p.View()), "\n")
	if rule := rows[lastRule(rows)]; !regexp.MustCompile(`─ ↑ \d+ above ─$`).MatchString(rule) {
		t.Errorf("the rule at the end of the list: %q", rule)
	}
}

// TestPlanScreenFooterAt40Columns: at 40 columns, R recover offered, the
// keys kept (enter apply, R recover, ? help, q quit) do not fit on one row;
// they fold onto a second, where the one row cut "q quit" at the edge. y,
// while the plan shows a command, folds with them: dropped to fit the one
// row they never had, it went unsaid.
func TestPlanScreenFooterAt40Columns(t *testing.T) {
	for _, sz := range [][2]int{{40, 24}, {40, 14}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			state := fixtureHealthy()
			state.Cluster.Annotations[model.AnnotationEKSAPaused] = "true"
			a := RecoveryAction(RecoveryOptions{backend: &fakeRecovery{p: planFixture()}, Now: func() time.Time { return t0 }})
			p := newTestPlanScreen(t, fixtureStaleLockPlan(), Options{Actions: []Action{a}}, (&fakeActions{}).actions(), sz[0], sz[1])
			p.Update(SnapshotMsg{State: state})
			if !p.keys.Copy.Enabled() {
				t.Fatal("the plan shows no command to copy")
			}
			out := p.View()
			requireLines(t, out, sz[0], sz[1])
			rows := strings.Split(ansi.Strip(out), "\n")
			help := rows[len(rows)-len(p.helpOut):]
			flat := strings.Join(help, " ")
			for _, want := range []string{"enter apply", "R recover", "y copy", "? help", "q quit"} {
				if !strings.Contains(flat, want) {
					t.Errorf("help lacks %q: %q", want, help)
				}
			}
			if strings.Contains(flat, "…") {
				t.Errorf("help cut: %q", help)
			}
			golden.RequireEqual(t, out)
		})
	}
}

// Under a dialog (R's menu) the App blanks the screen's last row, the key
// help's; folded onto two rows at 40 columns, its first row stayed beside
// the dialog, offering enter apply under a dialog that takes every key.
func TestPlanScreenFooterUnderADialogAt40Columns(t *testing.T) {
	state := fixtureHealthy()
	state.Cluster.Annotations[model.AnnotationEKSAPaused] = "true"
	rec := RecoveryAction(RecoveryOptions{backend: &fakeRecovery{p: planFixture()}, Now: func() time.Time { return t0 }})
	opts := Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0), ClusterName: "mgmt", Actions: []Action{rec}}
	a := NewApp(opts, NewPlanScreen(context.Background(), opts, fixtureStaleLockPlan(), (&fakeActions{}).actions()))
	a.Update(tea.WindowSizeMsg{Width: 40, Height: 14})
	a.Update(firstThemeMsg{})
	a.Update(SnapshotMsg{State: state})
	if out := ansi.Strip(a.View().Content); !strings.Contains(out, "enter apply") {
		t.Fatalf("the plan does not say enter apply:\n%s", out)
	}
	pressRun(t, a, tea.KeyPressMsg{Code: 'R', Text: "R"})
	if len(a.dialogs) == 0 {
		t.Fatal("R opened no dialog")
	}
	if out := ansi.Strip(a.View().Content); strings.Contains(out, "enter apply") || strings.Contains(out, "R recover") {
		t.Errorf("the plan's keys show under the dialog:\n%s", out)
	}
}

// lastRule is the index of the rule under the plan's list.
func lastRule(rows []string) int {
	for i, r := range slices.Backward(rows) {
		if strings.HasPrefix(r, "─") {
			return i
		}
	}
	return -1
}

// TestPlanStartRefusedByPreflight: the driver re-runs the checks under the
// lock and refuses the start; the status names the checks that refused it,
// as when enter finds them blocking, and the list shows them with their
// fixes (the error's text puts them on lines of their own, and the status
// showed only "blocked by preflight:").
func TestPlanStartRefusedByPreflight(t *testing.T) {
	paused := fixtureStaleLockPlan().Preflight[4]
	actions := (&fakeActions{}).actions()
	actions.Start = func(context.Context, *upgrade.Plan, upgrade.StartOptions) (*upgrade.Session, error) {
		return nil, &upgrade.PreflightError{Checks: []model.CheckResult{paused}}
	}
	p := newTestPlanScreen(t, fixturePlan(false), Options{}, actions, 120, 40)
	p.Update(dryRunMsg{res: fixtureDryRun()})
	_, cmd := p.Update(applyConfirmedMsg{force: true})
	drive(t, p, cmd)
	out := ansi.Strip(p.View())
	text := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"✗ apply is blocked by eksa-reconcile-not-paused: fix what the checks say (r re-runs them)",
		"✗ eksa-reconcile-not-paused anywhere.eks.amazonaws.com/paused=true", "fix: " + paused.Remediation} {
		if !strings.Contains(text, want) {
			t.Errorf("screen lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "blocked by preflight") {
		t.Errorf("status shows the error's first line:\n%s", out)
	}
}

// TestConfirmDialogFollowsTheChecks: while the confirmation is open the
// checks re-run (the cluster changed: someone paused it again); once they
// block, the dialog no longer offers the apply, and offers it again once
// they pass.
func TestConfirmDialogFollowsTheChecks(t *testing.T) {
	a, d := confirmOnApp(t, fixtureDryRun(), 100, 40)
	screen := func() string { return dialogText(ansi.Strip(a.View().Content)) }
	if !strings.Contains(screen(), "enter apply") {
		t.Fatalf("dialog does not offer the apply:\n%s", ansi.Strip(a.View().Content))
	}
	versions := func(s string) string {
		i := strings.Index(s, "EKS-A ")
		j := strings.Index(s, "The upgrade lock")
		if i < 0 || j < i {
			t.Fatalf("no versions line:\n%s", s)
		}
		return s[i:j]
	}
	head := versions(screen())
	moved := fixturePlan(true)
	moved.Versions.CurrentEKSA, moved.Versions.CurrentKubernetes = moved.Versions.TargetEKSA, moved.Versions.TargetKubernetes
	a.Update(recheckedMsg{plan: moved})
	s := screen()
	if strings.Contains(s, "enter apply") || !strings.Contains(s, "✗ apply is blocked by eksa-reconcile-not-paused: esc, then fix what the checks say") {
		t.Errorf("dialog still offers the apply the checks block:\n%s", ansi.Strip(a.View().Content))
	}
	// The versions stay those of the dry run the dialog confirms (another
	// console applied meanwhile: "v0.21.2 → v0.21.2" above it).
	if got := versions(s); got != head {
		t.Errorf("the dialog's versions moved with the re-run checks:\n%q\nwas\n%q", got, head)
	}
	appKeys(a, typeText("mgmt")...)
	appKeys(a, tea.KeyPressMsg{Code: tea.KeyTab})
	_, cmd := d.Update(enter)
	if cmd != nil {
		if msg := cmd(); msg != nil {
			t.Errorf("enter on a blocked confirmation yields %T", msg)
		}
	}
	a.Update(recheckedMsg{plan: fixturePlan(false)})
	if s := screen(); !strings.Contains(s, "enter apply") || strings.Contains(s, "blocked") {
		t.Errorf("dialog does not offer the apply again:\n%s", ansi.Strip(a.View().Content))
	}
	// What was typed and ticked while blocked did not arm it: the name
	// and the takeover are for after the checks pass.
	if d.input.Value() != "" || d.force {
		t.Errorf("typed %q, take-over %t while blocked", d.input.Value(), d.force)
	}
}

// TestPlanScreenWrapsErrors: the errors the plan screen shows in its list
// (the checks that could not re-run, the dry-run that failed, an object the
// API server refuses) wrap whole instead of being cut at the width.
func TestPlanScreenWrapsErrors(t *testing.T) {
	const apiErr = `admission webhook "validation.cluster.anywhere.amazonaws.com" denied the request: spec.kubernetesVersion: Invalid value: "1.31": only +1 minor version upgrade is supported, and the worker node groups must follow`
	p := newTestPlanScreen(t, fixturePlan(false), Options{}, PlanActions{}, 80, 200)
	p.Update(recheckedMsg{err: fmt.Errorf("listing machines: %s", apiErr)})
	p.Update(dryRunMsg{err: fmt.Errorf("dry-run: %s", apiErr)})
	dry := &upgrade.DryRunResult{Objects: []upgrade.ObjectChange{{Object: "Cluster default/mgmt", Error: apiErr}}}
	lines := dryRunLines(p.st, dry, 0, 80)
	var b strings.Builder
	for _, l := range lines {
		p.st.paintSegs(&b, l.segs, 80)
		b.WriteByte('\n')
	}
	for name, out := range map[string]string{"screen": ansi.Strip(p.View()), "dry-run list": ansi.Strip(b.String())} {
		if strings.Contains(out, "…") {
			t.Errorf("%s: a line is cut:\n%s", name, out)
		}
		text := strings.Join(strings.Fields(out), " ")
		wants := []string{"Cluster default/mgmt: refused: " + apiErr}
		if name == "screen" {
			wants = []string{"could not re-run the checks: listing machines: " + apiErr, "DRY-RUN ✗ dry-run: " + apiErr}
		}
		for _, want := range wants {
			if !strings.Contains(text, want) {
				t.Errorf("%s lacks %q:\n%s", name, want, out)
			}
		}
	}
}

// The plan's own dry run (spec-accepted) found nothing to change: the
// status says so at once, instead of "ready: enter applies the spec".
func TestPlanScreenSaysNothingToApply(t *testing.T) {
	pl := fixturePlan(false)
	pl.Target = &upgrade.Target{SpecDryRun: &upgrade.DryRunResult{Objects: []upgrade.ObjectChange{{Object: "Cluster default/mgmt"}}}}
	p := newTestPlanScreen(t, pl, Options{}, PlanActions{}, 120, 40)
	if s := ansi.Strip(p.View()); !strings.Contains(s, "the cluster already runs this spec: nothing to apply") || strings.Contains(s, "ready: enter applies") {
		t.Errorf("an unchanged spec reads as ready to apply:\n%s", s)
	}
	pl.Target.SpecDryRun = fixtureDryRun()
	p = newTestPlanScreen(t, pl, Options{}, PlanActions{}, 120, 40)
	if s := ansi.Strip(p.View()); !strings.Contains(s, "ready: enter applies") {
		t.Errorf("a changed spec does not read as ready:\n%s", s)
	}
}

// The plan's dry run is made once; the objects it compares with change
// under it. A newer answer (d, or r which asks again) replaces it: the
// screen went on saying "nothing to apply" while d showed a change.
func TestPlanScreenFollowsANewerDryRunOfTheSpec(t *testing.T) {
	pl := fixturePlan(false)
	pl.Target = &upgrade.Target{SpecDryRun: &upgrade.DryRunResult{Objects: []upgrade.ObjectChange{{Object: "Cluster default/mgmt"}}}}
	rechecks := 0
	actions := PlanActions{
		DryRun: func(context.Context) (*upgrade.DryRunResult, error) { return fixtureDryRun(), nil },
		Recheck: func(_ context.Context, p *upgrade.Plan) (*upgrade.Plan, error) {
			rechecks++
			cp := *p
			return &cp, nil
		},
	}
	for _, key := range []tea.KeyPressMsg{{Code: 'd', Text: "d"}, {Code: 'r', Text: "r"}} {
		p := newTestPlanScreen(t, pl, Options{}, actions, 120, 40)
		before := rechecks
		drive(t, p, p.handleKey(key))
		if s := ansi.Strip(p.View()); strings.Contains(s, "nothing to apply") || !strings.Contains(s, "ready: enter applies") || rechecks == before {
			t.Errorf("%s: %d rechecks; the screen keeps the older dry run:\n%s", key.Text, rechecks-before, s)
		}
	}
}

// Rechecked read the current side again (the cluster moved: someone else
// applied the spec): the screen asks the API server for a new dry run of
// the spec, as r does; it went on saying "ready: enter applies the spec"
// beside "all components are up to date".
func TestPlanScreenAsksANewDryRunWhenTheClusterMoved(t *testing.T) {
	pl := fixturePlan(false)
	pl.Target = &upgrade.Target{SpecDryRun: fixtureDryRun()}
	dryRuns := 0
	actions := PlanActions{
		DryRun: func(context.Context) (*upgrade.DryRunResult, error) {
			dryRuns++
			return &upgrade.DryRunResult{Objects: []upgrade.ObjectChange{{Object: "Cluster default/mgmt"}}}, nil
		},
		Recheck: func(_ context.Context, p *upgrade.Plan) (*upgrade.Plan, error) {
			cp := *p
			cp.Current = &upgrade.Current{} // read again
			return &cp, nil
		},
	}
	p := newTestPlanScreen(t, pl, Options{}, actions, 120, 40)
	if s := ansi.Strip(p.View()); !strings.Contains(s, "ready: enter applies") {
		t.Fatalf("before:\n%s", s)
	}
	drive(t, p, p.recheck())
	if s := ansi.Strip(p.View()); dryRuns != 1 || !strings.Contains(s, "nothing to apply") {
		t.Errorf("%d dry runs after the cluster moved; the screen keeps the older one:\n%s", dryRuns, s)
	}
}

// The dry run d asks for is recorded, as apply --dry-run's is (it was not);
// the one enter runs before the confirmation is not (the confirmation's
// answer is).
func TestPlanScreenRecordsTheDryRunAskedFor(t *testing.T) {
	recorded := 0
	actions := PlanActions{
		DryRun:       func(context.Context) (*upgrade.DryRunResult, error) { return fixtureDryRun(), nil },
		RecordDryRun: func(context.Context, *upgrade.Plan, *upgrade.DryRunResult) error { recorded++; return nil },
	}
	p := newTestPlanScreen(t, fixturePlan(false), Options{}, actions, 120, 40)
	drive(t, p, p.handleKey(tea.KeyPressMsg{Code: 'd', Text: "d"}))
	if recorded != 1 {
		t.Errorf("d: %d dry runs recorded, want 1", recorded)
	}
	drive(t, p, p.handleKey(tea.KeyPressMsg{Code: tea.KeyEnter}))
	if recorded != 1 {
		t.Errorf("enter: %d dry runs recorded, want still 1", recorded)
	}
}

// An upgrade the tracker declared failed, then completed after the
// operator's recovery: the plan screen follows it past the failure, says so,
// and the exit code follows the completion (apply --tui exited 4 with the
// dashboard showing "upgrade complete").
func TestPlanScreenFollowsPastAFailure(t *testing.T) {
	followed := 0
	actions := PlanActions{FollowAfterFailure: func(context.Context, *upgrade.Session) (upgrade.Outcome, error) {
		followed++
		return upgrade.Outcome{Complete: true}, nil
	}}
	p := newTestPlanScreen(t, fixturePlan(false), Options{}, actions, 120, 40)
	_, cmd := p.Update(trackedMsg{out: upgrade.Outcome{Failed: true, Reason: "node mgmt-6d6mj in-place step KubeadmUpgraded failed"}})
	if cmd == nil {
		t.Fatal("a failed upgrade is not followed further")
	}
	if out := ansi.Strip(p.View()); !strings.Contains(out, "KubeadmUpgraded failed") {
		t.Errorf("the failure is not shown:\n%s", out)
	}
	late, ok := cmd().(trackedMsg)
	if !ok || !late.late || followed != 1 {
		t.Fatalf("follow command gave %#v (followed %d times)", late, followed)
	}
	_, cmd = p.Update(late)
	if cmd == nil {
		t.Fatal("the completion after the failure records no outcome")
	}
	if msg, ok := cmd().(OutcomeMsg); !ok || msg.Outcome != report.Done {
		t.Errorf("outcome message %#v, want done", msg)
	}
	if out := ansi.Strip(p.View()); !strings.Contains(out, "upgrade complete after its failure") {
		t.Errorf("the late completion is not shown:\n%s", out)
	}
	// Quit first: the failure stands, nothing more is said or recorded.
	p = newTestPlanScreen(t, fixturePlan(false), Options{}, actions, 120, 40)
	if _, cmd := p.Update(trackedMsg{late: true, err: context.Canceled}); cmd != nil {
		t.Error("an ended follow records an outcome")
	}
}

// A console quit while the spec is being applied must not exit in the middle
// of the writes: WaitStart waits for the start under way, and the session it
// made is there to end, though its message never reaches Update.
func TestPlanScreenQuitDuringTheStartWaitsForIt(t *testing.T) {
	release := make(chan struct{})
	session := &upgrade.Session{}
	actions := PlanActions{Start: func(context.Context, *upgrade.Plan, upgrade.StartOptions) (*upgrade.Session, error) {
		<-release
		return session, nil
	}}
	p := newTestPlanScreen(t, fixturePlan(false), Options{}, actions, 120, 40)
	cmd := p.start(false)
	if cmd == nil {
		t.Fatal("no start command")
	}
	go cmd() // the program quits: its message is never read
	waited := make(chan struct{})
	go func() { p.WaitStart(); close(waited) }()
	select {
	case <-waited:
		t.Fatal("WaitStart returned while the start was under way")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatal("WaitStart did not return once the start ended")
	}
	if p.Session() != session {
		t.Error("the session the start made is lost")
	}
}

// The header's current Kubernetes is the oldest a node runs: from the
// control plane alone it read "k8s 1.31" while workers were still on 1.30.
func TestHeaderKubernetesIsTheOldestNodes(t *testing.T) {
	st := newStyles(initialTheme(Options{Theme: themes.Mono}))
	s := fixtureHealthy()
	if s.Nodes.Len() == 0 {
		t.Fatal("the fixture has no nodes")
	}
	s.Nodes.At(0).KubeletVersion = "v1.30.5-eks-1-30-22"
	h := buildHeader(st, s, oldestKubelet(s), model.Progress{}, model.Timeline{}, Options{}, t0)
	var b strings.Builder
	h.render(&b, st, 160, t0)
	if out := ansi.Strip(b.String()); !strings.Contains(out, "k8s 1.30 → 1.31") {
		t.Errorf("header with a node on 1.30:\n%s", out)
	}
}

// The enter that confirms the apply and a key pressed right after it: the
// start is under way once the enter is taken, so q quits the plan screen
// (runPlanTUI waits for the start), and is not typed into a dialog that was
// about to close; ctrl-c likewise finds the start already made.
func TestConfirmThenAKeyAtOnce(t *testing.T) {
	for _, k := range []tea.KeyPressMsg{{Code: 'q', Text: "q"}, {Code: 'c', Mod: tea.ModCtrl}} {
		f := &fakeActions{}
		opts := Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0)}
		p := NewPlanScreen(context.Background(), opts, fixturePlan(false), f.actions())
		a := NewApp(opts, p)
		a.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
		d := newConfirmDialog(opts, fixturePlan(false), fixtureDryRun())
		a.Update(OpenDialogMsg{Dialog: d})
		for _, r := range "mgmt" {
			a.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
		}
		a.Update(tea.KeyPressMsg{Code: tea.KeyTab})
		a.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
		_, cmd := a.Update(k)
		if d.Typed() != "mgmt" || len(a.dialogs) != 0 {
			t.Errorf("%s: typed %q into the dialog, %d dialog(s) open", k, d.Typed(), len(a.dialogs))
		}
		if !p.starting {
			t.Errorf("%s: the start was not under way once the enter was taken", k)
		}
		if cmd == nil {
			t.Fatalf("%s: no command", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Errorf("%s did not quit", k)
		}
	}
}

// Going back from the typed confirmation (esc), or quitting while it is
// open, is an apply not confirmed, and recorded as the command line records
// one.
func TestConfirmationNotGivenIsRecorded(t *testing.T) {
	var why []string
	actions := (&fakeActions{}).actions()
	actions.NotConfirmed = func(_ context.Context, _ *upgrade.Plan, w string) error {
		why = append(why, w)
		return nil
	}
	opts := Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0)}
	p := NewPlanScreen(context.Background(), opts, fixturePlan(false), actions)
	a := NewApp(opts, p)
	a.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	p.Update(dryRunMsg{res: fixtureDryRun()})
	a.Update(p.confirm()())
	if !p.Confirming() || len(a.dialogs) != 1 {
		t.Fatalf("the confirmation is not open (%d dialogs)", len(a.dialogs))
	}
	_, cmd := a.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	if len(a.dialogs) != 0 || p.Confirming() || cmd == nil {
		t.Fatalf("esc left %d dialog(s), confirming %t, command %v", len(a.dialogs), p.Confirming(), cmd != nil)
	}
	runCmds(cmd, func(m tea.Msg) { p.Update(m) })
	a.Update(p.confirm()())
	if err := p.RecordQuitAtConfirmation(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(why) != 2 || !strings.Contains(why[0], "went back") || !strings.Contains(why[1], "quit") {
		t.Errorf("recorded %q", why)
	}
}

// runCmds runs a command and the commands it batches, handing each message
// to take.
func runCmds(cmd tea.Cmd, take func(tea.Msg)) {
	if cmd == nil {
		return
	}
	switch m := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range m {
			runCmds(c, take)
		}
	default:
		take(m)
	}
}

// A start that made no session keeps its error for the console to say once
// the screen is gone (a lock it could not release, say).
func TestPlanScreenKeepsTheFailedStartsError(t *testing.T) {
	boom := errors.New("interrupted before any document was applied")
	actions := PlanActions{Start: func(context.Context, *upgrade.Plan, upgrade.StartOptions) (*upgrade.Session, error) { return nil, boom }}
	p := newTestPlanScreen(t, fixturePlan(false), Options{Theme: themes.Mono}, actions, 100, 40)
	if p.StartErr() != nil {
		t.Fatal("an error before any start")
	}
	cmd := p.start(false)
	if !p.StartUnderWay() {
		t.Error("the start is not said to be under way before its command ran")
	}
	p.Update(cmd())
	if !errors.Is(p.StartErr(), boom) || p.StartUnderWay() {
		t.Errorf("start error %v, under way %t", p.StartErr(), p.StartUnderWay())
	}
}

// fixtureSpecNotReachedPlan is the plan of the target spec in the middle of
// the upgrade to it: the Cluster's spec is already the target (nothing
// changes), but the cluster has not reached it.
func fixtureSpecNotReachedPlan() *upgrade.Plan {
	p := fixturePlan(false)
	p.Versions.CurrentEKSA, p.Versions.CurrentKubernetes = "v0.21.2", "1.31"
	for i := range p.Components {
		c := &p.Components[i]
		c.OldVersion, c.Change = c.NewVersion, model.ChangeNone
	}
	p.CurrentSpec = &model.SpecStatus{Reason: model.SpecUnderWay,
		Message: "the upgrade to it is still under way: ControlPlaneReady: Control plane nodes not up-to-date yet, 4 upgrading (2 up to date)",
		Next:    "follow it with `upgrade-console watch --cluster mgmt`"}
	p.Target = &upgrade.Target{SpecDryRun: &upgrade.DryRunResult{Objects: []upgrade.ObjectChange{{Object: "Cluster default/mgmt"}}}}
	return p
}

// TestPlanScreenSaysTheSpecIsNotReached: where the cluster has not reached
// its Cluster's spec, the plan screen says its current side is that spec
// (the header marks it, the body says why and what next), and no longer
// says the cluster runs this spec or that the components are up to date.
func TestPlanScreenSaysTheSpecIsNotReached(t *testing.T) {
	pl := fixtureSpecNotReachedPlan()
	for _, sz := range [][2]int{{80, 30}, {120, 40}, {60, 16}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			p := newTestPlanScreen(t, pl, Options{}, PlanActions{}, sz[0], 200)
			out := ansi.Strip(p.View())
			flat := strings.Join(strings.Fields(out), " ")
			for _, want := range []string{
				"CURRENT is the Cluster's spec, which the cluster has not reached: " + pl.CurrentSpec.Message,
				"next: " + pl.CurrentSpec.Next,
				"no component changes from the Cluster's spec, which the cluster has not reached",
			} {
				if !strings.Contains(flat, want) {
					t.Errorf("lacks %q:\n%s", want, out)
				}
			}
			for _, bad := range []string{"already runs this spec", "components are up to date", "✓ the Cluster's spec"} {
				if strings.Contains(out, bad) {
					t.Errorf("says %q:\n%s", bad, out)
				}
			}
			if header := strings.Split(out, "\n")[0]; sz[0] >= 80 && !strings.Contains(header, "spec not reached: EKS-A v0.21.2 → v0.21.2") {
				t.Errorf("header does not mark the current side: %q", header)
			}
			// The status says it in brief (the lines above say why in
			// full), and what to do.
			status := "the Cluster's spec is already this spec: nothing to apply; the cluster has not reached it (the upgrade is still under way): " + pl.CurrentSpec.Next
			if sz[0] >= 80 && !strings.Contains(flat, status) {
				t.Errorf("status lacks %q:\n%s", status, out)
			}
			// enter finds nothing to apply and says the same.
			pl := *pl
			pl.Target = nil
			p = newTestPlanScreen(t, &pl, Options{}, PlanActions{
				DryRun: func(context.Context) (*upgrade.DryRunResult, error) {
					return &upgrade.DryRunResult{Objects: []upgrade.ObjectChange{{Object: "Cluster default/mgmt"}}}, nil
				},
				Start: func(context.Context, *upgrade.Plan, upgrade.StartOptions) (*upgrade.Session, error) {
					t.Error("started")
					return nil, nil
				}}, sz[0], 200)
			if _, cmd := p.Update(tea.KeyPressMsg{Code: tea.KeyEnter}); cmd != nil {
				p.Update(cmd())
			}
			if flat := strings.Join(strings.Fields(ansi.Strip(p.View())), " "); !strings.Contains(flat, "the Cluster's spec is already this spec: nothing to apply; the cluster has not reached it") {
				t.Errorf("enter on nothing to apply:\n%s", flat)
			}
		})
	}
}

// TestPlanScreenBlockedNamesTheChecks: the status of a blocked plan names
// the checks that block it (at 80x24 they are pages below), as many as fit
// on its line, and how many more.
func TestPlanScreenBlockedNamesTheChecks(t *testing.T) {
	p := newTestPlanScreen(t, fixtureStaleLockPlan(), Options{}, PlanActions{}, 80, 24)
	rows := strings.Split(ansi.Strip(p.View()), "\n")
	status := strings.TrimSpace(rows[lastRule(rows)+1])
	if status != "✗ apply blocked by upgrade-lock, eksa-reconcile-not-paused" {
		t.Errorf("status at 80x24: %q", status)
	}
	pl := fixtureStaleLockPlan()
	for _, n := range []string{"control-plane-ready", "workers-ready", "nodes-ready"} {
		pl.Preflight = append(pl.Preflight, model.CheckResult{Name: n, Status: model.CheckFail, Blocking: true, Message: "not ready"})
	}
	for _, c := range []struct {
		w    int
		want string
	}{
		{120, "✗ apply blocked by upgrade-lock, eksa-reconcile-not-paused, control-plane-ready, workers-ready, nodes-ready"},
		{80, "✗ apply blocked by upgrade-lock, eksa-reconcile-not-paused and 3 more"},
		{50, "✗ apply blocked by upgrade-lock and 4 more"},
		{34, "✗ apply blocked by 5 checks"},
	} {
		p := newTestPlanScreen(t, pl, Options{}, PlanActions{}, c.w, 24)
		rows := strings.Split(ansi.Strip(p.View()), "\n")
		if status := strings.TrimSpace(rows[lastRule(rows)+1]); status != c.want {
			t.Errorf("at %d columns: %q, want %q", c.w, status, c.want)
		}
		if next := rows[lastRule(rows)+2]; !strings.Contains(next, "q quit") && !strings.Contains(next, "? help") {
			t.Errorf("at %d columns the status takes more than a line: %q", c.w, next)
		}
	}
}

// TestPlanScreenEscClosesTheHelp: esc did nothing to the full help (?),
// which stayed on screen, and under the apply's confirmation too, listing
// keys that do nothing there. esc and ? close it, before anything else
// either does, and the confirmation opens without it.
func TestPlanScreenEscClosesTheHelp(t *testing.T) {
	f := &fakeActions{}
	opts := Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0)}
	p := NewPlanScreen(context.Background(), opts, fixturePlan(false), f.actions())
	a := NewApp(opts, p)
	a.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	down := regexp.MustCompile(`↓/j +down`) // a row of the full help only
	fullHelp := func() bool { return down.MatchString(ansi.Strip(a.View().Content)) }
	question := tea.KeyPressMsg{Code: '?', Text: "?"}
	esc := tea.KeyPressMsg{Code: tea.KeyEscape}
	if fullHelp() {
		t.Fatal("the full help is open from the start")
	}
	for _, close := range []tea.KeyPressMsg{esc, question} {
		a.Update(question)
		if !fullHelp() {
			t.Fatalf("? did not open the full help:\n%s", ansi.Strip(a.View().Content))
		}
		a.Update(close)
		if fullHelp() || p.help.ShowAll {
			t.Errorf("%s left the full help open:\n%s", close, ansi.Strip(a.View().Content))
		}
	}

	// Open, then enter: the dry run, then the typed confirmation.
	a.Update(question)
	_, cmd := a.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	runCmds(cmd, func(m tea.Msg) {
		if _, ok := m.(dryRunMsg); !ok {
			return
		}
		_, next := a.Update(m)
		runCmds(next, func(m tea.Msg) {
			if o, ok := m.(OpenDialogMsg); ok {
				a.Update(o)
			}
		})
	})
	if !p.Confirming() || len(a.dialogs) != 1 {
		t.Fatalf("the confirmation is not open (%d dialogs)", len(a.dialogs))
	}
	if fullHelp() || p.help.ShowAll {
		t.Errorf("the plan's full help stays open under the confirmation:\n%s", ansi.Strip(a.View().Content))
	}
}

// A dry run from an earlier d may be minutes old: enter runs it again, so
// the confirmation lists what the apply does now. A start the driver
// refused because the dry run under the lock no longer agreed shows the new
// dry run and says enter confirms it.
func TestApplyConfirmsAFreshDryRun(t *testing.T) {
	f := &fakeActions{}
	p := newTestPlanScreen(t, fixturePlan(false), Options{}, f.actions(), 120, 40)
	_, cmd := p.Update(tea.KeyPressMsg{Code: 'd', Text: "d"})
	drive(t, p, cmd)
	_, cmd = p.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if cmd == nil {
		t.Fatal("enter returned no command")
	}
	msg := cmd()
	if f.dryRuns != 2 {
		t.Errorf("%d dry runs, want 2: enter confirmed d's", f.dryRuns)
	}
	if _, cmd = p.Update(msg); cmd == nil {
		t.Fatal("no confirmation after the dry run")
	} else if _, ok := cmd().(OpenDialogMsg); !ok {
		t.Error("the fresh dry run did not open the confirmation")
	}
	fresh := fixtureDryRun()
	fresh.Conflicts = append(fresh.Conflicts, upgrade.FieldConflict{Object: "VSphereMachineConfig default/mgmt-md-0", Field: ".spec.memoryMiB", Manager: "gitops-controller"})
	p.Update(startedMsg{err: &upgrade.DryRunChangedError{Now: fresh, Differences: []string{"VSphereMachineConfig default/mgmt-md-0 .spec.memoryMiB is now owned by another field manager, gitops-controller"}}})
	flat := strings.Join(strings.Fields(ansi.Strip(p.View())), " ")
	for _, want := range []string{"nothing was applied: the cluster changed since the dry run that was confirmed; enter to review and confirm the new dry run"} {
		if !strings.Contains(flat, want) {
			t.Errorf("lacks %q:\n%s", want, flat)
		}
	}
	if p.DryRun() != fresh {
		t.Error("the plan does not show the dry run under the lock")
	}
}

// TestPlanScreenHomeAndEnd: the dashboard goes to the top and the bottom of
// a list with g/G (home/end), the plan screen took neither: at 80×24 the
// dry-run that d asks for lands three pages under the checks, and G did
// nothing. Both screens take the same keys, and the help lists them.
func TestPlanScreenHomeAndEnd(t *testing.T) {
	p := newTestPlanScreen(t, fixturePlan(false), Options{}, (&fakeActions{}).actions(), 80, 24)
	p.Update(dryRunMsg{res: fixtureDryRun()}) // scrolls the answer into view
	p.Update(tea.KeyPressMsg{Code: tea.KeyHome})
	rule := func() string {
		rows := strings.Split(ansi.Strip(p.View()), "\n")
		return rows[lastRule(rows)]
	}
	if !regexp.MustCompile(`─ ↓ \d+ more ─$`).MatchString(rule()) {
		t.Fatalf("the test wants a list longer than the screen: %q", rule())
	}
	for _, k := range []tea.KeyPressMsg{{Code: 'G', Text: "G"}, {Code: tea.KeyEnd}} {
		p.Update(tea.KeyPressMsg{Code: 'g', Text: "g"})
		p.Update(k)
		if r := rule(); !regexp.MustCompile(`─ ↑ \d+ above ─$`).MatchString(r) {
			t.Errorf("%s: the rule says %q, want the end of the list", k, r)
		}
		if !strings.Contains(ansi.Strip(p.View()), "DRY-RUN") {
			t.Errorf("%s: the dry-run is not in view:\n%s", k, ansi.Strip(p.View()))
		}
	}
	for _, k := range []tea.KeyPressMsg{{Code: 'g', Text: "g"}, {Code: tea.KeyHome}} {
		p.Update(tea.KeyPressMsg{Code: 'G', Text: "G"})
		p.Update(k)
		if r := rule(); strings.Contains(r, "↑") {
			t.Errorf("%s: the rule says %q, want the top of the list", k, r)
		}
	}
	p.Update(tea.KeyPressMsg{Code: '?', Text: "?"})
	out := ansi.Strip(p.View())
	for _, want := range []string{"home/g", "end/G"} {
		if !strings.Contains(out, want) {
			t.Errorf("the full help lacks %q:\n%s", want, out)
		}
	}
}

// TestPlanScreenShowsTheDryRunAsked: d's answer ends the list; at 80×24 it
// came back three pages under the window and nothing on the screen changed
// (the status line read as before), as if d had done nothing. The answer
// d asked for is scrolled into view.
func TestPlanScreenShowsTheDryRunAsked(t *testing.T) {
	p := newTestPlanScreen(t, fixturePlan(false), Options{}, (&fakeActions{}).actions(), 80, 24)
	if out := ansi.Strip(p.View()); strings.Contains(out, "DRY-RUN") {
		t.Fatalf("the test wants the dry-run section below the window:\n%s", out)
	}
	p.Update(dryRunMsg{res: fixtureDryRun()})
	out := ansi.Strip(p.View())
	if !strings.Contains(out, "DRY-RUN") || !strings.Contains(out, "object(s) change") {
		t.Errorf("the dry-run is not in view after its answer:\n%s", out)
	}
	// Where the whole plan fits, nothing moves.
	p = newTestPlanScreen(t, fixturePlan(false), Options{}, (&fakeActions{}).actions(), 120, 60)
	p.Update(dryRunMsg{res: fixtureDryRun()})
	if p.offset != 0 {
		t.Errorf("at 120×60 the list scrolled to %d", p.offset)
	}
}

// narrowPlan is fixturePlan with the rows a narrow table finds hardest: a
// component added, one removed, and versions too long for one row beside
// each other.
func narrowPlan() *upgrade.Plan {
	p := fixturePlan(false)
	p.Components = append(p.Components,
		model.ComponentDiff{Key: "bottlerocket.admin", Name: "bottlerocket admin container", NewVersion: "v0.11.13-eks-a-v0.21.2-build.1", Change: model.ChangeAdded},
		model.ComponentDiff{Key: "snow.kubeVip", Name: "kube-vip", OldVersion: "v0.8.0-eks-a-v0.20.9-build.3", Change: model.ChangeRemoved},
		model.ComponentDiff{Key: "eksd.etcdImage", Name: "etcd image", OldVersion: "v3.5.15-eks-1-30-22-eks-a-v0.20.9-build.1",
			NewVersion: "v3.5.16-eks-1-31-11-eks-a-v0.21.2-build.1", Change: model.ChangePatch},
	)
	return p
}

// TestPlanComponentsNarrowGoldens: in a split tmux pane (60 to 79 columns)
// the components table cut every name and version to its first cells
// ("kubernetes …", "in-place up…", "v1.30.5-…1-30-22"). Each component now
// takes two rows there, and every name and version is shown whole.
func TestPlanComponentsNarrowGoldens(t *testing.T) {
	for _, w := range []int{60, 70} {
		t.Run(fmt.Sprintf("%dx40", w), func(t *testing.T) {
			pl := narrowPlan()
			p := newTestPlanScreen(t, pl, Options{}, PlanActions{}, w, 40)
			p.Update(tea.KeyPressMsg{Code: 'a', Text: "a"})
			out := p.View()
			requireLines(t, out, w, 40)
			plain := ansi.Strip(out)
			for _, c := range pl.Components {
				for _, want := range []string{c.Name, c.OldVersion, c.NewVersion, string(c.Change)} {
					if want != "" && !strings.Contains(plain, want) {
						t.Errorf("at %d columns the table lacks %q whole:\n%s", w, want, plain)
					}
				}
			}
			golden.RequireEqual(t, out)
		})
	}
}

// TestPlanComponentsTooNarrow: narrower than a name at its minimum beside
// the widest change, the table says in one row how wide it needs the
// screen; at that width it lists the rows.
func TestPlanComponentsTooNarrow(t *testing.T) {
	rows := narrowPlan().Components
	need := 3 + minPlanName + 2 + width(string(model.ChangeRemoved))
	ls := componentLines("→", rows, need-1)
	if len(ls) != 1 || !strings.Contains(ls[0].segs[0].text, fmt.Sprintf("%d columns needed", need)) || segsWidth(ls[0].segs) > need-1 {
		t.Errorf("at %d columns: %+v, want one row of at most %d cells naming %d columns", need-1, ls, need-1, need)
	}
	if ls := componentLines("→", rows, need); len(ls) < 2*len(rows) {
		t.Errorf("at %d columns: %d rows for %d components", need, len(ls), len(rows))
	}
}

// TestPlanHeaderShortensTheContext: in a split pane (60 to 79 columns) the
// kubeconfig context, which tells apart two clusters both named mgmt, is
// shortened in its middle where the versions leave room for it, as the
// dashboard's header does, rather than dropped with the room left blank.
func TestPlanHeaderShortensTheContext(t *testing.T) {
	const ctx = "arn:aws:eks:us-west-2:123456789012:cluster/prod-mgmt"
	for _, w := range []int{64, 66, 70, 76} {
		p := newTestPlanScreen(t, fixturePlan(false), Options{Context: ctx}, PlanActions{}, w, 30)
		head := strings.SplitN(ansi.Strip(p.View()), "\n", 2)[0]
		if !strings.Contains(head, " @ arn:") || !strings.Contains(head, "-mgmt  EKS-A") || !strings.Contains(head, "…") {
			t.Errorf("at %d columns the header is %q, want the context shortened in its middle (%q)", w, head, ctx)
		}
		if !strings.Contains(head, "k8s 1.30 → 1.31") {
			t.Errorf("at %d columns the header is %q, want the versions whole", w, head)
		}
		if width(head) > w {
			t.Errorf("at %d columns the header is %d wide: %q", w, width(head), head)
		}
	}
}

// Under a dialog the plan screen's status takes one row from its start:
// the dialog's margin left its last row in view, "   typed confirmation)".
func TestPlanStatusUnderADialogIsOneRowFromItsStart(t *testing.T) {
	p := newTestPlanScreen(t, fixturePlan(true), Options{}, PlanActions{}, 60, 20)
	p.setStatus(statusEvent, seg{" " + strings.Repeat("a long status that wraps ", 8), rText})
	p.restatus()
	if len(p.statusOut) < 2 {
		t.Fatalf("the status takes %d rows at 60 columns: the test shows nothing", len(p.statusOut))
	}
	first := p.statusOut[0]
	p.setOverlaid(true)
	if len(p.statusOut) != 1 || !strings.HasPrefix(p.statusOut[0].segs[0].text, first.segs[0].text) {
		t.Errorf("under a dialog: %+v", p.statusOut)
	}
	p.setOverlaid(false)
	if len(p.statusOut) < 2 {
		t.Errorf("the dialog closed: %d rows", len(p.statusOut))
	}
}

// The plan header keeps the target versions: a long cluster name is
// shortened in its middle, and the current side goes, before they do. A
// 63-character name pushed both versions off the line at 80 and 100
// columns, and at 40 columns the target Kubernetes version went first.
func TestPlanHeaderKeepsTheTargetVersions(t *testing.T) {
	long := "cluster-" + strings.Repeat("c", 50) + "-long"
	for _, c := range []struct {
		cluster  string
		w        int
		readOnly bool
	}{{long, 80, true}, {long, 100, true}, {long, 60, false}, {long, 40, false}, {"mgmt", 40, false}, {"mgmt", 34, false}} {
		pl := fixturePlan(false)
		pl.Cluster = c.cluster
		p := newTestPlanScreen(t, pl, Options{ReadOnly: c.readOnly}, PlanActions{}, c.w, 24)
		header := strings.SplitN(ansi.Strip(p.View()), "\n", 2)[0]
		if !strings.Contains(header, "v0.21.2") || !strings.Contains(header, "1.31") {
			t.Errorf("%s at %d: the header lost a target version: %q", c.cluster, c.w, header)
		}
		if c.readOnly && !strings.Contains(header, "read-only") {
			t.Errorf("%s at %d: the header lost the read-only mark: %q", c.cluster, c.w, header)
		}
		if c.cluster == long && !strings.Contains(header, "  EKS-A") {
			t.Errorf("%s at %d: no room between the name and the versions: %q", c.cluster, c.w, header)
		}
		if w := ansi.StringWidth(header); w > c.w {
			t.Errorf("%s at %d: the header is %d cells wide", c.cluster, c.w, w)
		}
	}
}

// The full help (?) on a short terminal stays within the screen and its last
// row says how many rows it leaves out: it ran past the bottom, and the
// terminal cut ↓, pgdn, home and end without a word.
func TestPlanHelpFitsAShortTerminal(t *testing.T) {
	for _, size := range [][2]int{{60, 15}, {40, 10}, {120, 40}} {
		p := newTestPlanScreen(t, fixturePlan(false), Options{}, PlanActions{}, size[0], size[1])
		p.Update(tea.KeyPressMsg{Code: '?', Text: "?"})
		out := ansi.Strip(p.View())
		if n := strings.Count(out, "\n") + 1; n != size[1] {
			t.Errorf("%dx%d: the screen is %d rows:\n%s", size[0], size[1], n, out)
		}
		if cut := strings.Contains(out, "more rows of help"); cut != (size[1] < 20) {
			t.Errorf("%dx%d: says rows are left out: %t\n%s", size[0], size[1], cut, out)
		}
	}
}

// The dashboard finds the oldest kubelet once per list of nodes: a
// snapshot whose nodes changed (the last one on 1.30 upgraded) moves the
// header, one whose nodes did not (a Machine changed) keeps it.
func TestHeaderKubernetesFollowsTheNodes(t *testing.T) {
	s := fixtureHealthy()
	old := *s.Nodes.At(0)
	old.KubeletVersion = "v1.30.5-eks-1-30-22"
	s.Nodes = s.Nodes.With(map[int]*model.Node{0: &old})
	d := newTestDashboard(t, s, themes.Mono, 160, 40)
	header := func() string {
		var b strings.Builder
		d.header.render(&b, d.st, 160, t0)
		return ansi.Strip(b.String())
	}
	if h := header(); !strings.Contains(h, "k8s 1.30 → 1.31") {
		t.Fatalf("a node on 1.30:\n%s", h)
	}
	next := *s
	next.Version++
	m := *next.Machines.At(0)
	m.Phase = "Provisioned"
	next.Machines = next.Machines.With(map[int]*model.Machine{0: &m})
	d.Update(SnapshotMsg{State: &next})
	d.Update(frameMsg{})
	if h := header(); !strings.Contains(h, "k8s 1.30 → 1.31") {
		t.Fatalf("a Machine changed, the node still on 1.30:\n%s", h)
	}
	up := old
	up.KubeletVersion = newK8s
	after := next
	after.Version++
	after.Nodes = next.Nodes.With(map[int]*model.Node{0: &up})
	d.Update(SnapshotMsg{State: &after})
	d.Update(frameMsg{})
	if d.shown != &after {
		t.Fatal("the frame did not show the last snapshot")
	}
	if h := header(); strings.Contains(h, "1.30") {
		t.Fatalf("every node on 1.31, the header still says 1.30:\n%s", h)
	}
}

// At 40x10, fields to take over, a name refused took the list's one row
// for the error: the box left the view, with its counts, until tab or a
// resize. The keys take their short form instead, and the box stays.
func TestConfirmDialogAt40x10KeepsTheBoxWhenANameIsRefused(t *testing.T) {
	a, d := confirmOnApp(t, fixtureManyConflicts(), 40, 10)
	_, dh := a.dialogSize()
	shows := func(step string, want ...string) {
		t.Helper()
		out := ansi.Strip(d.View())
		if rows := strings.Count(out, "\n") + 1; rows > dh {
			t.Errorf("%s: the dialog takes %d rows, more than %d:\n%s", step, rows, dh, out)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: the dialog lacks %q:\n%s", step, w, out)
			}
		}
		if !regexp.MustCompile(`\d+↑ \d+↓`).MatchString(out) {
			t.Errorf("%s: no counts of the rows out of view:\n%s", step, out)
		}
	}
	appKeys(a, typeText("mg")...)
	appKeys(a, enter)
	shows("a name refused", "[ ] take over the 8 field(s)", "> mg", `type "mgmt" exactly`, "esc cancel")
	appKeys(a, tea.KeyPressMsg{Code: tea.KeyBackspace}, tea.KeyPressMsg{Code: tea.KeyBackspace})
	appKeys(a, typeText("mgmt")...)
	appKeys(a, enter)
	shows("the fields not taken over", "[ ] take over the 8 field(s)", "> mgmt", "tab takes the 8 field(s) over", "esc cancel")
}

// Scrolled away from the box where it scrolls with the list (40x10 to
// 40x14), tab ticked it out of view: what the apply takes over changed
// unseen. Tab brings the box into view as it ticks it, and again as it
// leaves the fields.
func TestConfirmDialogTabShowsTheBoxItTicks(t *testing.T) {
	for _, h := range []int{10, 12, 14} {
		t.Run(fmt.Sprintf("40x%d", h), func(t *testing.T) {
			a, d := confirmOnApp(t, fixtureManyConflicts(), 40, h)
			for _, box := range []string{"[x] take over the 8 field(s)", "[ ] take over the 8 field(s)"} {
				appKeys(a, tea.KeyPressMsg{Code: tea.KeyPgUp}, tea.KeyPressMsg{Code: tea.KeyUp})
				if out := ansi.Strip(d.View()); strings.Contains(out, "take over the 8 field(s)") {
					t.Fatalf("scrolled up, the box is still in view:\n%s", out)
				}
				appKeys(a, tea.KeyPressMsg{Code: tea.KeyTab})
				if out := ansi.Strip(d.View()); !strings.Contains(out, box) {
					t.Errorf("tab: %q not in view:\n%s", box, out)
				}
			}
		})
	}
}

// At 40 columns the scroll row was cut ("↑ 35 ↓ 4 · ↑/↓ pgup/pgdn scr…")
// and took a row of the list, where the counts fit beside the keys on
// their last row: they go there, and the list has the row. At 80x24 the
// row is whole and stays (TestConfirmDialogAt80x24).
func TestConfirmDialogCountsBesideTheKeysAt40Columns(t *testing.T) {
	for _, h := range []int{12, 14} {
		t.Run(fmt.Sprintf("40x%d", h), func(t *testing.T) {
			a, d := confirmOnApp(t, fixtureManyConflicts(), 40, h)
			_, dh := a.dialogSize()
			out := ansi.Strip(d.View())
			rows := strings.Split(out, "\n")
			if len(rows) > dh {
				t.Errorf("the dialog takes %d rows, more than %d:\n%s", len(rows), dh, out)
			}
			if strings.Contains(out, "pgup/pgdn") {
				t.Errorf("the scroll row takes a row of the list:\n%s", out)
			}
			if !regexp.MustCompile(`esc cancel · \d+↑ \d+↓`).MatchString(out) {
				t.Errorf("no counts beside the keys:\n%s", out)
			}
			golden.RequireEqual(t, out)
		})
	}
}
