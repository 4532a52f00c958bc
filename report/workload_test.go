package report

import (
	"strings"
	"testing"

	"github.com/upgrade-console/upgrade-console/model"
)

// workload is etcdRollout as a workload cluster: managed by another, so the
// watchers publish no Nodes, and its Machines say how its nodes are.
func workload() *model.ClusterState {
	s := etcdRollout(2)
	s.Cluster.ManagementCluster = "admin-cluster"
	s.Nodes = model.List[model.Node]{}
	for _, m := range s.Machines.All() {
		if m.Role != model.RoleEtcd {
			m.Conditions = model.Conditions{cond(model.MachineConditionNodeReady, "True", "", "", "")}
		}
	}
	return s
}

// watch --plain of a workload cluster says its nodes by their Machines,
// where it read "nodes: 0, 0 ready" (the Nodes here are not its own), and
// a node going NotReady as its machine's line.
func TestChangesSayAWorkloadClustersNodesByItsMachines(t *testing.T) {
	a := workload()
	out := texts(Changes(nil, a, nil, derive(a), t0))
	requireAll(t, out, "nodes: 2, 2 ready by their Machines' NodeReady/NodeHealthy conditions; cluster mgmt is managed by admin-cluster: its Nodes are on its own API server")
	if strings.Contains(out, "nodes: 0") {
		t.Errorf("the first lines count this API server's Nodes:\n%s", out)
	}
	b := clone(a)
	b.Machines.At(4).Conditions = model.Conditions{cond(model.MachineConditionNodeReady, "False", "", "KubeletNotReady", "")}
	out = texts(Changes(a, b, derive(a), derive(b), t0))
	requireAll(t, out, "worker machine mgmt-md-0-0001: node mgmt-md-0-0001 ready=false (its Machine's node condition)")
	if strings.Contains(out, "nodes:") {
		t.Errorf("the summary said again:\n%s", out)
	}
}
