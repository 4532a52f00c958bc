package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
)

var (
	keyUp       = tea.KeyPressMsg{Code: tea.KeyUp}
	keyDown     = tea.KeyPressMsg{Code: tea.KeyDown}
	keyShiftTab = tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
)

// focusEtcd moves the focus from the nodes pane back to the etcd pane
// (the tab order is cluster, etcd, control plane, nodes, events).
func focusEtcd(t *testing.T, d *Dashboard, send func(tea.KeyPressMsg)) {
	t.Helper()
	// Back from the nodes table: which panes lie between depends on the
	// height and on the phase (etcdUnderWay).
	for range paneCount {
		if d.Focus() == "ETCD" {
			break
		}
		send(keyShiftTab)
	}
	if d.Focus() != "ETCD" {
		t.Fatalf("focus %s, the test wants the etcd pane", d.Focus())
	}
}

// etcdMemberAtCursor is the member under the etcd pane's cursor.
func etcdMemberAtCursor(d *Dashboard) string { return d.etcd.selectedMachine() }

// TestDescribeEtcdMember: the external etcd members are not in the nodes
// table, so the node detail could not be opened on the machines an operator
// must reach when etcd's rollout fails. On the focused etcd pane ↓ moves a
// cursor over the members and d describes the one under it, as a machine
// without a Node, with its etcd-ready label; the detail follows it as the
// rollback deletes it.
func TestDescribeEtcdMember(t *testing.T) {
	s := fixtureMidEtcd()
	s.Machines = withChanged(s.Machines, 2, func(m *model.Machine) {
		m.Addresses = []model.MachineAddress{{Type: "InternalIP", Address: "10.0.0.14"}}
	})
	app := detailApp(t, s, 120, 40)
	d := dashboardOf(t, app)
	focusEtcd(t, d, func(k tea.KeyPressMsg) { pressApp(t, app, k) })
	screen := func() string { return ansi.Strip(app.View().Content) }
	if sc := screen(); !strings.Contains(sc, "d describe member") {
		t.Fatalf("the footer does not offer d on the etcd pane:\n%s", sc)
	}
	// The stuck new member sorts first: the cursor opens on it.
	if got := etcdMemberAtCursor(d); got != "mgmt-etcd-h2v8d" {
		t.Fatalf("cursor on %q, want the new member mgmt-etcd-h2v8d, first", got)
	}
	pressRun(t, app, keyD)
	v := topDetail(t, app)
	if v.machine != "mgmt-etcd-h2v8d" {
		t.Fatalf("d opened %q, want mgmt-etcd-h2v8d", v.machine)
	}
	sc := screen()
	for _, want := range []string{"Machine mgmt-etcd-h2v8d", "EtcdadmCluster mgmt-etcd", "Provisioning",
		"none: an external etcd member runs no Kubernetes Node", "etcd       not ready (no cluster.x-k8s.io/etcd-ready=true label)",
		"InternalIP 10.0.0.14"} {
		if !strings.Contains(sc, want) {
			t.Errorf("the detail lacks %q:\n%s", want, sc)
		}
	}
	for _, unwanted := range []string{"node ready", "kubelet", "none yet (no nodeRef)"} {
		if strings.Contains(sc, unwanted) {
			t.Errorf("the detail of a machine without a Node says %q:\n%s", unwanted, sc)
		}
	}

	// Rolled back: etcdadm deletes the new member. The detail stays, says
	// so, and shows it as last seen.
	gone := *s
	gone.Version++
	var ms []*model.Machine
	for _, m := range s.Machines.All() {
		if m.Name != "mgmt-etcd-h2v8d" {
			ms = append(ms, m)
		}
	}
	gone.Machines = model.ListOf(ms...)
	app.Update(SnapshotMsg{State: &gone})
	app.Update(frameMsg{})
	sc = screen()
	for _, want := range []string{"Machine gone: not in the newest snapshot", "Machine mgmt-etcd-h2v8d", "InternalIP 10.0.0.14"} {
		if !strings.Contains(sc, want) {
			t.Errorf("with the member deleted, the detail lacks %q:\n%s", want, sc)
		}
	}
	if topDetail(t, app) != v {
		t.Fatal("the detail closed when its member went")
	}
	pressRun(t, app, tea.KeyPressMsg{Code: tea.KeyEscape})

	// The cursor moves to a ready member, which says so.
	pressApp(t, app, keyDown)
	if got := etcdMemberAtCursor(d); got != "mgmt-etcd-9pq7w" {
		t.Fatalf("↓ put the cursor on %q, want the second member left, mgmt-etcd-9pq7w", got)
	}
	pressRun(t, app, keyD)
	if v := topDetail(t, app); v.machine != "mgmt-etcd-9pq7w" {
		t.Fatalf("d opened %q, want mgmt-etcd-9pq7w", v.machine)
	}
	if sc := screen(); !strings.Contains(sc, "etcd       ready (cluster.x-k8s.io/etcd-ready=true)") {
		t.Errorf("the detail of a ready member lacks its label:\n%s", sc)
	}
	pressRun(t, app, tea.KeyPressMsg{Code: tea.KeyEscape})

	// Past the members, on the pane's conditions, d has nothing to open
	// and the footer does not offer it.
	pressApp(t, app, keyDown, keyDown)
	if got := etcdMemberAtCursor(d); got != "" {
		t.Fatalf("the cursor is still on member %q, the test wants it on a condition", got)
	}
	if _, cmd := app.Update(keyD); cmd != nil {
		t.Fatal("d on a condition line returned a command")
	}
	if sc := screen(); strings.Contains(sc, "describe") {
		t.Errorf("the footer offers d on a condition line:\n%s", sc)
	}
}

// TestEtcdCursorStaysOnItsMember: members reorder as they fail (a failed
// one sorts first); the cursor stays on the member it was moved to, on its
// screen row, and a cursor left on the first row follows the first row.
func TestEtcdCursorStaysOnItsMember(t *testing.T) {
	s := fixtureMidEtcd()
	d := newTestDashboard(t, s, themes.Mono, 120, 40)
	send := func(k tea.KeyPressMsg) { d.Update(k) }
	focusEtcd(t, d, send)
	send(keyDown)
	if got := etcdMemberAtCursor(d); got != "mgmt-etcd-4xk2q" {
		t.Fatalf("cursor on %q, the test wants it on mgmt-etcd-4xk2q, the second member", got)
	}
	publish := func(s *model.ClusterState) {
		d.Update(SnapshotMsg{State: s})
		d.Update(frameMsg{})
	}
	fail := func(s *model.ClusterState, name string) *model.ClusterState {
		next := *s
		next.Version++
		for i, m := range s.Machines.All() {
			if m.Name == name {
				next.Machines = withChanged(s.Machines, i, func(m *model.Machine) {
					m.FailureReason, m.FailureMessage = "CreateError", "VM creation failed"
				})
			}
		}
		return &next
	}
	// The third member fails and rises to the top: the second moves to
	// the third row, and the cursor with it.
	failed := fail(s, "mgmt-etcd-9pq7w")
	publish(failed)
	if got := d.etcd.rows[0].machine; got != "mgmt-etcd-9pq7w" {
		t.Fatalf("first member %q, the test wants the failed mgmt-etcd-9pq7w first", got)
	}
	if got := etcdMemberAtCursor(d); got != "mgmt-etcd-4xk2q" {
		t.Errorf("after the members reordered the cursor is on %q, want it kept on mgmt-etcd-4xk2q", got)
	}

	// Back on the first row, the cursor follows whichever member sorts
	// first: the one that failed last rises above it.
	send(keyUp)
	send(keyUp)
	if got := etcdMemberAtCursor(d); got != "mgmt-etcd-9pq7w" {
		t.Fatalf("cursor on %q, the test wants it on the first row", got)
	}
	publish(fail(failed, "mgmt-etcd-4xk2q"))
	if got, first := etcdMemberAtCursor(d), d.etcd.rows[0].machine; got != first {
		t.Errorf("the cursor left on the first row is on %q, want the first member %q", got, first)
	}
}

// TestEtcdPaneCursorGoldens pins the screen with the etcd pane focused and
// its cursor on the second member; unfocused, the pane shows no cursor
// (the other goldens).
func TestEtcdPaneCursorGoldens(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("mid-etcd/%dx%d", sz[0], sz[1]), func(t *testing.T) {
			d := newTestDashboard(t, fixtureMidEtcd(), themes.Mono, sz[0], sz[1])
			focusEtcd(t, d, func(k tea.KeyPressMsg) { d.Update(k) })
			d.Update(keyDown)
			out := d.View()
			requireLines(t, out, sz[0], sz[1])
			golden.RequireEqual(t, out)
		})
	}
}
