package tui

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
)

// crowdedHeaderDashboard is a dashboard whose header's badges crowd its
// first line: this console's lock kept after a failure, EKS-A reconcile
// paused (after an etcd rollback), and, with stale, a status the EKS-A
// controller has not observed yet.
func crowdedHeaderDashboard(t *testing.T, th themes.Name, context string, stale bool, w int) *Dashboard {
	t.Helper()
	s := fixturePausedAfterRollback()
	s.Context = context
	if stale {
		s.Cluster.Generation++
	}
	kept := func() LockInfo {
		return LockInfo{Holder: "alice@laptop (console 3f2a9c1e)", Renewed: ago(3 * time.Minute), Kept: true}
	}
	d := NewDashboard(Options{Theme: th, Clock: clocktesting.NewFakePassiveClock(t0), ClusterName: "mgmt", Lock: kept})
	d.SetSize(w, 40)
	d.Update(SnapshotMsg{State: s})
	return d
}

var headerIdent = regexp.MustCompile(`^ mgmt @ (\S+)  `)

// TestHeaderKeepsTheContext: the badges the operator must act on (a kept
// lock, a pause) took the line's room from the context first: at 120
// columns "mgmt @ upgrade-console-demo  EKS-A …" became "mgmt  EKS-A …",
// when which cluster this is matters most. The context stays, shortened in
// its middle to no less than minContext cells when it must, and every
// badge stays, in its short form when it must.
func TestHeaderKeepsTheContext(t *testing.T) {
	for _, tc := range []struct {
		context string
		stale   bool
	}{
		{"upgrade-console-demo", false},
		{"upgrade-console-demo", true},
		{"arn:aws:eks:us-west-2:123456789012:cluster/mgmt-prod", false},
		{"arn:aws:eks:us-west-2:123456789012:cluster/mgmt-prod", true},
	} {
		for _, w := range []int{80, 120} {
			t.Run(fmt.Sprintf("%s/stale=%t/%d", tc.context, tc.stale, w), func(t *testing.T) {
				d := crowdedHeaderDashboard(t, themes.Mono, tc.context, tc.stale, w)
				var b strings.Builder
				d.header.render(&b, d.st, w, d.now)
				requireShape(t, b.String(), w, 2)
				first, _, _ := strings.Cut(ansi.Strip(b.String()), "\n")
				m := headerIdent.FindStringSubmatch(first)
				if m == nil {
					t.Fatalf("the header's first line lost the context:\n%s", first)
				}
				if got := m[1]; got != tc.context {
					head, tail, cut := strings.Cut(got, "…")
					if !cut || width(got) < minContext || !strings.HasPrefix(tc.context, head) || !strings.HasSuffix(tc.context, tail) {
						t.Errorf("context %q shown as %q, want it whole or cut in its middle to at least %d cells:\n%s", tc.context, got, minContext, first)
					}
				}
				if w >= 120 && len(tc.context) <= 20 && m[1] != tc.context {
					t.Errorf("at %d columns a context of %d cells is cut:\n%s", w, len(tc.context), first)
				}
				// Every badge, in one of its forms.
				want := []*regexp.Regexp{regexp.MustCompile(`⚠ lock(: kept by this console| kept)  `),
					regexp.MustCompile(markHeld + " paused  "), regexp.MustCompile("● live $")}
				if tc.stale {
					want = append(want, regexp.MustCompile(`◌ (status not yet|not) observed  `))
				}
				for _, re := range want {
					if !re.MatchString(first) {
						t.Errorf("the header's first line lacks %s:\n%s", re, first)
					}
				}
				if w >= 120 && !k8sTarget.MatchString(first) {
					t.Errorf("at %d columns the Kubernetes version is gone:\n%s", w, first)
				}
			})
		}
	}
}

// TestHeaderContextGoldens pins the crowded header's first line at 80 and
// 120 columns: what gives way, in which order (headerModel.line1).
func TestHeaderContextGoldens(t *testing.T) {
	for _, ctx := range []string{"upgrade-console-demo", "arn:aws:eks:us-west-2:123456789012:cluster/mgmt-prod"} {
		name := "demo"
		if strings.HasPrefix(ctx, "arn:") {
			name = "arn"
		}
		for _, w := range []int{80, 120} {
			t.Run(fmt.Sprintf("%s/%d", name, w), func(t *testing.T) {
				d := crowdedHeaderDashboard(t, themes.Mono, ctx, true, w)
				var b strings.Builder
				d.header.render(&b, d.st, w, d.now)
				requireShape(t, b.String(), w, 2)
				golden.RequireEqual(t, b.String())
			})
		}
	}
}

// TestHeaderTargetVersionsWhenShort: with no room for both sides of the
// versions, the targets stay, after their arrows, and the context whole;
// shorter still, the EKS-A version goes before the context shortens, and
// the Kubernetes one, which operators read first, stays.
func TestHeaderTargetVersionsWhenShort(t *testing.T) {
	st := newStyles(initialTheme(Options{Theme: themes.Mono}))
	s := fixtureMidEtcd()
	s.Context = "upgrade-console-demo"
	s.Cluster.Annotations[model.AnnotationManagementComponentsVersion] = "v0.20.9"
	h := buildHeader(st, s, "", model.Progress{Paused: true}, model.Timeline{}, Options{Lock: func() LockInfo {
		return LockInfo{Holder: "alice@laptop (console 3f2a9c1e)", Renewed: t0, Kept: true}
	}}, t0)
	for _, tc := range []struct {
		w    int
		want string
	}{
		{140, " mgmt @ upgrade-console-demo  EKS-A v0.20.9 → v0.21.1   k8s 1.30 → 1.31 "},
		{110, " mgmt @ upgrade-console-demo  EKS-A → v0.21.1  k8s → 1.31 "},
		{80, " mgmt @ upgrade-console-demo  k8s → 1.31 "},
	} {
		var b strings.Builder
		h.render(&b, st, tc.w, t0)
		requireShape(t, b.String(), tc.w, 2)
		if first, _, _ := strings.Cut(ansi.Strip(b.String()), "\n"); !strings.HasPrefix(first, tc.want) {
			t.Errorf("at %d columns, want the line to start %q:\n%s", tc.w, tc.want, first)
		}
	}
}

// TestCrowdedHeaderFitsEveryWidth: whatever gives way, the header is two
// lines of exactly the width, and the name is never lost.
func TestCrowdedHeaderFitsEveryWidth(t *testing.T) {
	for _, ctx := range []string{"", "upgrade-console-demo", "arn:aws:eks:us-west-2:123456789012:cluster/mgmt-prod"} {
		d := crowdedHeaderDashboard(t, themes.Mono, ctx, true, 120)
		for w := 20; w <= 200; w++ {
			var b strings.Builder
			d.header.render(&b, d.st, w, d.now)
			requireShape(t, b.String(), w, 2)
			if !strings.HasPrefix(ansi.Strip(b.String()), " mgmt") {
				t.Fatalf("%q at %d: the name is gone:\n%s", ctx, w, ansi.Strip(b.String()))
			}
		}
	}
}

// A kept lock cleared, then found gone by the release on completion, is
// said as while the upgrade ran, not as a red "lock lost".
func TestHeaderKeptLockLostOnRelease(t *testing.T) {
	st := newStyles(initialTheme(Options{Theme: themes.Mono}))
	h := buildHeader(st, fixtureHealthy(), "", model.Progress{}, model.Timeline{}, Options{Lock: func() LockInfo {
		return LockInfo{Holder: "alice@laptop (console 3f2a9c1e)", Kept: true, Lost: true}
	}}, t0)
	var b strings.Builder
	h.render(&b, st, 160, t0)
	if out := ansi.Strip(b.String()); !strings.Contains(out, "lock: this console's kept lock was cleared") || strings.Contains(out, "lock lost") {
		t.Errorf("header:\n%s", out)
	}
	// Once the upgrade completed, the lock kept for its failure has
	// served: no warning beside "upgrade complete".
	h = buildHeader(st, fixtureHealthy(), "", model.Progress{Complete: true}, model.Timeline{}, Options{Lock: func() LockInfo {
		return LockInfo{Holder: "alice@laptop (console 3f2a9c1e)", Kept: true, Lost: true}
	}}, t0)
	b.Reset()
	h.render(&b, st, 160, t0)
	if out := ansi.Strip(b.String()); strings.Contains(out, "lock") {
		t.Errorf("header after completion:\n%s", out)
	}
}

// The quit prompt does not say the upgrade "goes on" while a failed step
// holds it.
func TestQuitPromptWhenAFailedStepHoldsTheUpgrade(t *testing.T) {
	for _, w := range []int{200, 90, 75} {
		held := quitPromptText(w, true, false)
		if strings.Contains(held, "goes on") || !strings.Contains(held, "fail") {
			t.Errorf("%d columns, held up: %q", w, held)
		}
		if free := quitPromptText(w, false, false); !strings.Contains(free, "goes on") {
			t.Errorf("%d columns: %q", w, free)
		}
		// The demo's world stops with the console: nothing goes on.
		for _, held := range []bool{false, true} {
			if demo := quitPromptText(w, held, true); strings.Contains(demo, "goes on") || strings.Contains(demo, "lock") || !strings.Contains(demo, "demo") {
				t.Errorf("%d columns, demo: %q", w, demo)
			}
		}
	}
}

// Management components ahead of the Cluster's release (upgraded first, as
// EKS-A's CLI does) are no "from": the header read "EKS-A v0.21.2 →
// v0.20.9", a downgrade, at rest before every upgrade.
func TestHeaderManagementComponentsAhead(t *testing.T) {
	st := newStyles(initialTheme(Options{Theme: themes.Mono}))
	s := fixtureMidEtcd()
	s.Context = "upgrade-console-demo"
	s.Cluster.EksaVersion = "v0.20.9"
	s.Cluster.Annotations[model.AnnotationManagementComponentsVersion] = "v0.21.1"
	h := buildHeader(st, s, "", model.Progress{}, model.Timeline{}, Options{}, t0)
	var b strings.Builder
	h.render(&b, st, 140, t0)
	if first, _, _ := strings.Cut(ansi.Strip(b.String()), "\n"); !strings.HasPrefix(first, " mgmt @ upgrade-console-demo   EKS-A v0.20.9   k8s ") {
		t.Errorf("header %q", first)
	}
}

// A phase held up by a stall (an etcd member not ready past --stall-after,
// the rollback offered) is marked ⚠, not ● as if it moved; the Cluster's
// own stall (its spec not yet observed) marks no phase.
func TestPhaseHeldByAStallIsMarked(t *testing.T) {
	st := newStyles(initialTheme(Options{Theme: themes.Mono}))
	render := func(p model.Progress) string {
		h := buildHeader(st, fixtureHealthy(), "", p, model.Timeline{}, Options{}, t0)
		var b strings.Builder
		h.render(&b, st, 160, t0)
		return ansi.Strip(b.String())
	}
	p := model.Progress{Phases: []model.PhaseProgress{{Phase: model.PhaseComponents, Status: model.PhaseOK}, {Phase: model.PhaseEtcd, Status: model.PhaseActive}}}
	if out := render(p); !strings.Contains(out, "etcd ●") {
		t.Fatalf("moving:\n%s", out)
	}
	p.Stalls = []model.Stall{{Kind: model.KindEKSACluster, Name: "mgmt"}}
	if out := render(p); !strings.Contains(out, "etcd ●") {
		t.Errorf("the Cluster's stall marked the phase:\n%s", out)
	}
	p.Stalls = []model.Stall{{Kind: model.KindMachine, Name: "mgmt-etcd-z"}}
	if out := render(p); !strings.Contains(out, "etcd ⚠") {
		t.Errorf("a stalled member:\n%s", out)
	}
}

// At 60 columns a finished upgrade's phase strip keeps the phases' names:
// it fell from the short form, with six times, to six bare ✓.
func TestFinishedPhaseStripKeepsItsNamesAt60(t *testing.T) {
	st := newStyles(initialTheme(Options{Theme: themes.Mono}))
	var p model.Progress
	var tl model.Timeline
	for _, ph := range []model.Phase{model.PhaseComponents, model.PhaseEtcd, model.PhaseControlPlane, model.PhaseCNI, model.PhaseWorkers} {
		p.Phases = append(p.Phases, model.PhaseProgress{Phase: ph, Status: model.PhaseOK})
	}
	// Each phase under way a minute, then done.
	at := t0
	for i := range p.Phases {
		running := p
		running.Phases = slices.Clone(p.Phases)
		for j := i; j < len(running.Phases); j++ {
			running.Phases[j].Status = model.PhasePending
		}
		running.Phases[i].Status = model.PhaseActive
		tl = tl.Observe(running, at)
		at = at.Add(time.Minute)
	}
	p.Complete = true
	tl = tl.Observe(p, at)
	h := buildHeader(st, fixtureHealthy(), "", p, tl, Options{}, at)
	var b strings.Builder
	h.render(&b, st, 60, at)
	if out := ansi.Strip(b.String()); !strings.Contains(out, "comp ✓ etcd ✓ cp ✓ cni ✓ wrk ✓ ready ✓") {
		t.Errorf("the finished strip at 60 columns:\n%s", out)
	}
}

// A re-rollout in the same generation (a machine config changed alone,
// after the upgrade was done) is said as one, timed on its own with the
// upgrade's time beside it: it read "elapsed 0:16", a new upgrade.
func TestHeaderSaysAReRollout(t *testing.T) {
	st := newStyles(initialTheme(Options{Theme: themes.Mono}))
	var p model.Progress
	for _, ph := range model.Phases {
		p.Phases = append(p.Phases, model.PhaseProgress{Phase: ph, Status: model.PhaseOK})
	}
	p.Generation, p.SpecChangedAt = 2, t0
	run := func(status model.PhaseStatus, done int) model.Progress {
		r := p
		r.Phases = slices.Clone(p.Phases)
		r.Phases[len(r.Phases)-1].Status, r.Phases[len(r.Phases)-1].Done, r.Phases[len(r.Phases)-1].Total = status, done, 3
		r.Current = model.PhaseWorkers
		return r
	}
	var tl model.Timeline
	tl = tl.Observe(run(model.PhaseActive, 1), t0.Add(time.Second))
	finished := p
	finished.Current, finished.Complete = model.PhaseDone, true
	tl = tl.Observe(finished, t0.Add(5*time.Minute))
	tl = tl.Observe(run(model.PhaseActive, 2), t0.Add(time.Hour))
	now := t0.Add(time.Hour + 16*time.Second)
	h := buildHeader(st, fixtureHealthy(), "", run(model.PhaseActive, 2), tl, Options{}, now)
	for w, want := range map[int]string{160: "re-rollout 0:16 (upgrade 5:00)", 80: "re-rollout 0:16", 40: "rerun 0:16"} {
		var b strings.Builder
		h.render(&b, st, w, now)
		out := ansi.Strip(b.String())
		for l := range strings.Lines(out) {
			if ansi.StringWidth(strings.TrimRight(l, "\n")) > w {
				t.Errorf("at %d columns, a line is wider: %q", w, l)
			}
		}
		if !strings.Contains(out, want) || strings.Contains(out, "elapsed") {
			t.Errorf("at %d columns, want %q:\n%s", w, want, out)
		}
	}
}

// A dashboard that follows this console's apply of machine configs alone
// (no generation moved) times the rollout from the apply, where the
// Cluster's last spec change, the earlier upgrade's, made it "elapsed
// 1:00:00" of a rollout of seconds (D11).
func TestDashboardTimesAConfigOnlyApplyFromIt(t *testing.T) {
	for _, tc := range []struct {
		applied time.Time
		want    string
	}{{ago(16 * time.Second), "elapsed 0:16"}, {time.Time{}, "elapsed 1:00:00"}} {
		s := fixtureMidEtcd()
		s.Cluster.SpecChangedAt = ago(time.Hour)
		d := NewDashboard(Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0), AppliedAt: tc.applied})
		d.SetSize(160, 40)
		d.Update(SnapshotMsg{State: s})
		if v := screenOf(d); !strings.Contains(v, tc.want) {
			t.Errorf("applied at %v: the header lacks %q:\n%.600s", tc.applied, tc.want, v)
		}
	}
}

// At 40 and 50 columns a lock beside a pause left the badges less than
// render needs, and both went, the pause the operator must act on with the
// lock. The lock gives way first, and the pause stays.
func TestHeaderKeepsThePauseWhereALockDoesNotFit(t *testing.T) {
	for _, l := range []struct {
		name string
		lock func() *model.Lock
	}{{"stale", staleLock}, {"foreign", foreignLock}} {
		for _, w := range []int{40, 50} {
			t.Run(fmt.Sprintf("%s/%d", l.name, w), func(t *testing.T) {
				d := newTestDashboard(t, withLock(fixtureHeld(), l.lock()), themes.Mono, w, 12)
				var b strings.Builder
				d.header.render(&b, d.st, w, d.now)
				requireShape(t, b.String(), w, 2)
				first, _, _ := strings.Cut(ansi.Strip(b.String()), "\n")
				for _, want := range []string{markHeld + " paused", " mgmt"} {
					if !strings.Contains(first, want) {
						t.Errorf("the header lacks %q:\n%s", want, first)
					}
				}
			})
		}
	}
}
