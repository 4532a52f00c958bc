package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
)

// Golden files of every pane's output at 80 and 120 columns, in monochrome
// and in the dark theme, for each fixture. Update with: go test ./tui -update

var goldenFixtures = []struct {
	name  string
	state func() *model.ClusterState
}{
	{"healthy", fixtureHealthy},
	{"mid-etcd", fixtureMidEtcd},
	{"inplace-failed", fixtureInPlaceFailed},
	{"no-snapshot", func() *model.ClusterState { return nil }},
}

var goldenThemes = []themes.Name{themes.Mono, themes.Dark}

func TestPaneGoldens(t *testing.T) {
	for _, f := range goldenFixtures {
		for _, th := range goldenThemes {
			for _, w := range []int{80, 120} {
				d := newTestDashboard(t, f.state(), th, w, 40)
				for id := paneID(0); id < paneCount; id++ {
					name := fmt.Sprintf("%s/%s/%s/%d", f.name, strings.ReplaceAll(strings.ToLower(id.String()), " ", "-"), th, w)
					t.Run(name, func(t *testing.T) {
						h := min(d.paneWant(id), 16)
						out := d.paneView(id, w, h)
						requireShape(t, out, w, h)
						golden.RequireEqual(t, out)
					})
				}
				t.Run(fmt.Sprintf("%s/header/%s/%d", f.name, th, w), func(t *testing.T) {
					var b strings.Builder
					d.header.render(&b, d.st, w, d.now)
					requireShape(t, b.String(), w, 2)
					golden.RequireEqual(t, b.String())
				})
			}
		}
	}
}

// TestDashboardGoldens pins the whole screen at the sizes operators use and
// at sizes where panes must drop out cleanly.
func TestDashboardGoldens(t *testing.T) {
	sizes := [][2]int{{80, 24}, {120, 40}, {60, 16}, {40, 10}, {100, 8}}
	for _, f := range goldenFixtures[:3] {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s/%dx%d", f.name, sz[0], sz[1]), func(t *testing.T) {
				d := newTestDashboard(t, f.state(), themes.Mono, sz[0], sz[1])
				out := d.View()
				requireLines(t, out, sz[0], sz[1])
				golden.RequireEqual(t, out)
			})
		}
	}
}

// requireShape checks that a pane's output is exactly h lines of exactly w
// cells: the invariant that lets panes sit side by side without garbling.
func requireShape(t *testing.T, out string, w, h int) {
	t.Helper()
	lines := strings.Split(out, "\n")
	if len(lines) != h {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), h, ansi.Strip(out))
	}
	for i, l := range lines {
		if got := ansi.StringWidth(l); got != w {
			t.Fatalf("line %d is %d cells wide, want %d: %q", i, got, w, ansi.Strip(l))
		}
	}
}

// requireLines checks that a screen has h lines none wider than w.
func requireLines(t *testing.T, out string, w, h int) {
	t.Helper()
	lines := strings.Split(out, "\n")
	if len(lines) != h {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), h, ansi.Strip(out))
	}
	for i, l := range lines {
		if got := ansi.StringWidth(l); got > w {
			t.Fatalf("line %d is %d cells wide, more than %d: %q", i, got, w, ansi.Strip(l))
		}
	}
}

// TestDashboardPausedGoldens pins the screen after upgrade-console's etcd
// rollback: EKS-A reconcile left paused, the etcd phase rolled back (↺), and
// the pause in the header's badges and first on the status line, wrapped
// whole to the command that resumes the upgrade.
func TestDashboardPausedGoldens(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("paused-after-rollback/%dx%d", sz[0], sz[1]), func(t *testing.T) {
			d := newTestDashboard(t, fixturePausedAfterRollback(), themes.Mono, sz[0], sz[1])
			out := d.View()
			requireLines(t, out, sz[0], sz[1])
			plain := ansi.Strip(out)
			for _, want := range []string{markHeld + " paused   ● live", "etcd " + markRolledBack, " " + markHeld + " etcd rolled back; EKS-A reconcile paused",
				"`upgrade-console lock clear paused --cluster mgmt` after fixing"} {
				if !strings.Contains(plain, want) {
					t.Errorf("screen lacks %q:\n%s", want, plain)
				}
			}
			golden.RequireEqual(t, out)
		})
	}
}

// TestHeaderPausedGoldens pins the held and rolled-back marks in colour: a
// phase held by someone else's pause (mid-etcd, then paused), and etcd
// after upgrade-console's rollback.
func TestHeaderPausedGoldens(t *testing.T) {
	for _, f := range []struct {
		name  string
		state func() *model.ClusterState
	}{{"held", fixtureHeld}, {"rolled-back", fixturePausedAfterRollback}} {
		for _, w := range []int{80, 120} {
			t.Run(fmt.Sprintf("%s/dark/%d", f.name, w), func(t *testing.T) {
				d := newTestDashboard(t, f.state(), themes.Dark, w, 40)
				var b strings.Builder
				d.header.render(&b, d.st, w, d.now)
				requireShape(t, b.String(), w, 2)
				golden.RequireEqual(t, b.String())
			})
		}
	}
}
