package tui

import (
	"testing"

	"github.com/charmbracelet/x/ansi"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
)

// newTestDashboard builds a dashboard at a fixed time and size, showing s.
func newTestDashboard(tb testing.TB, s *model.ClusterState, theme themes.Name, w, h int) *Dashboard {
	tb.Helper()
	opts := Options{Theme: theme, Clock: clocktesting.NewFakePassiveClock(t0), ClusterName: "mgmt"}
	d := NewDashboard(opts)
	d.SetSize(w, h)
	if s != nil {
		d.Update(SnapshotMsg{State: s})
	}
	return d
}

func TestPrintForHumans(t *testing.T) {
	if !testing.Verbose() {
		t.Skip()
	}
	for _, f := range []func() *model.ClusterState{fixtureHealthy, fixtureMidEtcd, fixtureInPlaceFailed} {
		for _, sz := range [][2]int{{80, 24}, {120, 40}} {
			d := newTestDashboard(t, f(), themes.Mono, sz[0], sz[1])
			t.Logf("\n%s", ansi.Strip(d.View()))
		}
	}
}

// TestPhaseMarksOfAPause: a held and a rolled-back phase each have a mark
// of their own, one cell wide, unlike every other status's, and a style of
// their own; the symbols-only timeline names them, as it does the active
// phase.
func TestPhaseMarksOfAPause(t *testing.T) {
	for _, name := range []themes.Name{themes.Dark, themes.Mono} {
		th := themes.ForName(name, true)
		seen := map[string]model.PhaseStatus{}
		for _, s := range []model.PhaseStatus{model.PhasePending, model.PhaseActive, model.PhaseOK, model.PhaseBroken,
			model.PhaseSkipped, model.PhaseHeld, model.PhaseRolledBack} {
			mark, r := phaseMark(th.Sym, s)
			if prev, ok := seen[mark]; ok {
				t.Errorf("%s: %s and %s share the mark %q", name, prev, s, mark)
			}
			seen[mark] = s
			if w := ansi.StringWidth(mark); w != 1 {
				t.Errorf("%s: mark %q of %s is %d cells", name, mark, s, w)
			}
			if s == model.PhaseHeld || s == model.PhaseRolledBack {
				if r == rPhasePending || nameRole(s) == rMuted || !named(s) {
					t.Errorf("%s: %s drawn as a pending phase (role %d, name role %d, named %t)", name, s, r, nameRole(s), named(s))
				}
			}
		}
	}
}

// TestStatusLineLeadsWithThePause: while EKS-A is paused the status line
// says so first, the stalls after it (nothing moves until the pause goes).
func TestStatusLineLeadsWithThePause(t *testing.T) {
	th := themes.NewMono()
	st := newStyles(&th)
	p := model.Progress{Current: model.PhasePaused, Paused: true, Summary: "upgrade paused at etcd: EKS-A reconcile paused",
		Stalls: []model.Stall{{Sentence: "etcd machine mgmt-etcd-x not ready for 11m"}}}
	lines, total, pause := buildStallLines(st, &model.ClusterState{}, p)
	if total != 2 || len(lines) != 2 {
		t.Fatalf("%d lines of %d, want 2 of 2", len(lines), total)
	}
	if got := lines[0].segs[0]; got.text != " "+markHeld+" "+p.Summary || got.r != rPaused || pause != 0 {
		t.Errorf("first line %q (role %d, pause at %d), want the pause", got.text, got.r, pause)
	}
}
