package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
)

// TestEtcdTitleSaysTheTargetWhileItRollsOut: the title's version is the
// EtcdadmCluster spec's. During a rollout it read "3/3 ready  3.5.16
// upgrading" while the three ready members ran 3.5.15 and the only one on
// 3.5.16 was stuck provisioning: there it is the target, and only at rest
// the version the members run.
func TestEtcdTitleSaysTheTargetWhileItRollsOut(t *testing.T) {
	st := newStyles(initialTheme(Options{Theme: themes.Mono}))
	etcdTitle := func(s *model.ClusterState, ready int32, upgrading, observed bool) string {
		e := s.Etcd
		e.ReadyReplicas = ready
		if upgrading {
			e.Annotations[model.AnnotationEtcdUpgrading] = "true"
		} else {
			delete(e.Annotations, model.AnnotationEtcdUpgrading)
		}
		if !observed {
			e.Generation = e.ObservedGeneration + 1
		}
		segs, _, _ := buildEtcdPane(st, s, false, stallSet{})
		var b strings.Builder
		for _, sg := range segs {
			b.WriteString(sg.text)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name      string
		got       string
		want, not string
	}{
		{"stuck rollout, the old members ready", etcdTitle(fixtureMidEtcd(), 3, true, true), "mgmt-etcd  3/3 ready  upgrading to v3.5.24", "ready  v3.5.24"},
		{"rollout", etcdTitle(fixtureMidEtcd(), 2, true, true), "mgmt-etcd  2/3 ready  upgrading to v3.5.24", "ready  v3.5.24"},
		{"spec not yet observed", etcdTitle(fixtureHealthy(), 3, false, false), "mgmt-etcd  3/3 ready  target v3.5.24", "ready  v3.5.24"},
		{"at rest", etcdTitle(fixtureHealthy(), 3, false, true), "mgmt-etcd  3/3 ready  v3.5.24  ready", "target"},
	} {
		if !strings.Contains(tc.got, tc.want) || strings.Contains(tc.got, tc.not) {
			t.Errorf("%s: title %q, want %q and no %q", tc.name, tc.got, tc.want, tc.not)
		}
	}
}

// During upgrade-console's etcd rollback the spec is the previous one
// again: "upgrading to 3.5.15" and the old members marked "new spec" read
// as new members having joined.
func TestEtcdPaneDuringARollback(t *testing.T) {
	st := newStyles(initialTheme(Options{Theme: themes.Mono}))
	pane := func(newMachine string) string {
		s := fixtureMidEtcd()
		s.Cluster.Annotations[model.AnnotationEKSAPaused] = "true"
		s.Cluster.Annotations[model.AnnotationEtcdRollbackRecord] = `{"phase":"running","newMachine":"` + newMachine + `","by":"ops@bastion"}`
		title, _, lines := buildEtcdPane(st, s, false, stallSet{})
		var b strings.Builder
		for _, sg := range title {
			b.WriteString(sg.text)
		}
		for _, l := range lines {
			b.WriteString("\n")
			for _, sg := range l.segs {
				b.WriteString(sg.text)
			}
		}
		return b.String()
	}
	// The spec restored: the new member (deleted, or on another spec now)
	// is not the one on it.
	if got := pane("mgmt-etcd-x"); !strings.Contains(got, "rolling back to") || strings.Contains(got, "upgrading") || strings.Contains(got, "new spec") ||
		strings.Contains(got, "old spec") || !strings.Contains(got, "restored spec") {
		t.Errorf("etcd pane during a rollback:\n%s", got)
	}
	// Paused, the spec not yet put back: the new member is still on the
	// rollout's spec, and it read as the "restored" one.
	if got := pane("mgmt-etcd-h2v8d"); strings.Contains(got, "rolling back") || strings.Contains(got, "restored spec") || !strings.Contains(got, "upgrading to") {
		t.Errorf("etcd pane before the restore:\n%s", got)
	}
}

// TestEtcdMemberCAPIFailure: an etcd member whose Machine CAPI reports
// failed reads as failed, and first, in the etcd pane, as in the nodes
// pane, though its phase and etcd-ready label still say it runs.
func TestEtcdMemberCAPIFailure(t *testing.T) {
	st := newStyles(initialTheme(Options{Theme: themes.Mono}))
	m := etcdMachine("mgmt-etcd-4xk2q", ago(time.Hour), true, true, "Running")
	m.FailureReason, m.FailureMessage = "UpdateError", "etcd member failed to join"
	l := etcdMemberLine(st, m, &model.EtcdCluster{}, false, false)
	if l.segs[0].r != rSevError || !strings.Contains(l.segs[0].text, st.th.Sym.Fail) || !strings.Contains(l.segs[2].text, "failed") {
		t.Errorf("member line %+v, want it marked and said failed", l.segs)
	}
	if r := etcdMemberRank(m, true); r != 0 {
		t.Errorf("rank %d, want 0 (failed, listed first)", r)
	}
}

// At 40x12, etcd stuck, the etcd pane went first of the three panes above
// the nodes table, and nothing on the screen named the member that held
// the upgrade. While the etcd phase is under way it goes after the control
// plane and the cluster panes.
func TestShortTerminalKeepsTheEtcdPaneWhileEtcdHolds(t *testing.T) {
	for _, sz := range [][2]int{{40, 10}, {40, 12}, {80, 12}, {120, 10}} {
		d := newTestDashboard(t, stuckEtcdState(t0), themes.Mono, sz[0], sz[1])
		out := ansi.Strip(d.View())
		requireLines(t, d.View(), sz[0], sz[1])
		if !d.plan.visible[paneEtcd] || !strings.Contains(out, "ETCD") || !strings.Contains(out, "e-new") {
			t.Errorf("%dx%d: the etcd pane, stuck, is not shown:\n%s", sz[0], sz[1], out)
		}
	}
	// Past etcd, it gives way first, as before.
	d := newTestDashboard(t, fixtureHealthy(), themes.Mono, 40, 12)
	if d.plan.visible[paneEtcd] {
		t.Errorf("at 40x12, etcd done, the etcd pane is shown:\n%s", ansi.Strip(d.View()))
	}
}
