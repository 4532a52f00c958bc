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
