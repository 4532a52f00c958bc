package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
)

// fixtureWorkload is fixtureHealthy as a workload cluster: managed by
// another, so the watchers publish no Nodes (theirs are the management
// cluster's), and its Machines carry what CAPI read from its own: Ready,
// but for one worker whose kubelet stopped.
func fixtureWorkload() *model.ClusterState {
	s := fixtureHealthy()
	s.Cluster.ManagementCluster = "admin-cluster"
	s.Nodes = model.List[model.Node]{}
	at := ago(time.Hour)
	for _, m := range s.Machines.All() {
		if m.Role == model.RoleEtcd {
			continue
		}
		m.Conditions = model.Conditions{cond("Ready", "True", "", "", "", at), cond(model.MachineConditionNodeReady, "True", "", "", "", at)}
		if m.Name == "mgmt-md-0-00003" {
			m.Conditions = model.Conditions{cond("Ready", "False", "", "NodeNotReady", "", at),
				cond(model.MachineConditionNodeReady, "False", "", "KubeletNotReady", "kubelet stopped posting node status", at)}
		}
	}
	return s
}

// The dashboard of a workload cluster: node health from its Machines, said
// in the nodes pane's title; the worker whose Node is NotReady reads so.
// Before, with no Node joined, every machine row read as in progress.
func TestDashboardWorkloadGoldens(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("workload/%dx%d", sz[0], sz[1]), func(t *testing.T) {
			d := newTestDashboard(t, fixtureWorkload(), themes.Mono, sz[0], sz[1])
			out := d.View()
			requireLines(t, out, sz[0], sz[1])
			golden.RequireEqual(t, out)
		})
	}
}

func TestNodeRowsOfAWorkloadClusterReadTheMachines(t *testing.T) {
	th := themes.NewDark()
	st := newStyles(&th)
	rows := buildNodeRows(st, fixtureWorkload(), stallSet{})
	var sick *nodeRow
	for i := range rows {
		if rows[i].role == roleNodeOnly {
			t.Errorf("a node row without a machine: %+v", rows[i])
		}
		if rows[i].machine == "mgmt-md-0-00003" {
			sick = &rows[i]
		} else if !rows[i].settled {
			t.Errorf("machine %s, its Node Ready by its Machine, is not up to date: %+v", rows[i].machine, rows[i])
		}
	}
	if sick == nil || sick.phase != "NotReady" || sick.settled {
		t.Errorf("the worker whose Machine says its Node is NotReady: %+v", sick)
	}
	var p nodesPane
	p.set(st, fixtureWorkload(), stallSet{})
	var title strings.Builder
	for _, sg := range p.title {
		title.WriteString(sg.text)
	}
	if !strings.Contains(title.String(), "node health from the Machines") {
		t.Errorf("nodes pane title = %q", title.String())
	}
}
