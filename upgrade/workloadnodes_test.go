package upgrade

import (
	"context"
	"strings"
	"testing"

	"github.com/upgrade-console/upgrade-console/model"
)

// workloadState is a workload cluster seen from its management cluster: its
// Machines, and the management cluster's own Nodes (all Ready) as they were
// published for it before the watchers held them back.
func workloadState(machines ...*model.Machine) *model.ClusterState {
	return &model.ClusterState{
		Sources: map[model.Kind]model.SourceStatus{
			model.KindMachine: {Installed: true, Synced: true},
			model.KindNode:    {Installed: true, Synced: true},
		},
		Cluster:  &model.EKSACluster{Meta: model.Meta{Name: "w1"}, ManagementCluster: "mgmt"},
		Machines: model.ListOf(machines...),
		Nodes: model.ListOf(&model.Node{Meta: model.Meta{Name: "mgmt-cp-a", Labels: map[string]string{model.LabelUpgradeInProgress: "true"}}, Ready: true},
			&model.Node{Meta: model.Meta{Name: "mgmt-md-0-a"}, Ready: true}),
	}
}

func workloadMachine(name, node string, conds ...model.Condition) *model.Machine {
	return &model.Machine{Meta: model.Meta{Name: name}, Role: model.RoleWorker, NodeName: node, Phase: "Running", Conditions: conds}
}

// nodes-ready of a workload cluster reads its Machines' node conditions:
// the Nodes of this API server are the management cluster's, and read all
// Ready while the workload cluster's were not.
func TestNodesReadyOfAWorkloadClusterReadsItsMachines(t *testing.T) {
	notReady := model.Condition{Type: model.MachineConditionNodeReady, Status: "False", Reason: "KubeletNotReady"}
	ready := model.Condition{Type: model.MachineConditionNodeReady, Status: "True"}
	healthy := model.Condition{Type: model.MachineConditionNodeHealthy, Status: "True"}
	for _, tc := range []struct {
		name     string
		machines []*model.Machine
		status   model.CheckStatus
		want     string
	}{
		{"one not ready", []*model.Machine{workloadMachine("w1-md-0-a", "w1-md-0-a", ready), workloadMachine("w1-md-0-b", "w1-md-0-b", notReady)},
			model.CheckFail, "1 of 2 nodes not Ready by their Machines' NodeReady/NodeHealthy conditions: w1-md-0-b"},
		{"all ready", []*model.Machine{workloadMachine("w1-md-0-a", "w1-md-0-a", ready), workloadMachine("w1-md-0-b", "w1-md-0-b", healthy)},
			model.CheckPass, "all 2 nodes Ready by their Machines' NodeReady/NodeHealthy conditions"},
		{"no condition", []*model.Machine{workloadMachine("w1-md-0-a", "w1-md-0-a")},
			model.CheckWarn, "health is unknown: w1-md-0-a"},
		{"no machine", nil, model.CheckWarn, "no Machine of the cluster is visible: node health unknown"},
		// A Machine provisioning has no node to be Ready (D7: it failed
		// the check as "w1-md-0-b (no node yet)" not Ready).
		{"no node yet", []*model.Machine{workloadMachine("w1-md-0-a", "w1-md-0-a", ready), workloadMachine("w1-md-0-b", "")},
			model.CheckPass, "all 1 nodes Ready by their Machines' NodeReady/NodeHealthy conditions"},
		{"all provisioning", []*model.Machine{workloadMachine("w1-md-0-a", ""), workloadMachine("w1-md-0-b", "")},
			model.CheckWarn, "none of the cluster's 2 Machines has a node yet (all provisioning)"},
	} {
		r := checkNodes(context.Background(), &Inputs{State: workloadState(tc.machines...)})
		if r.Status != tc.status || !strings.Contains(r.Message, tc.want) || !strings.Contains(r.Message, "its Nodes are on its own API server") {
			t.Errorf("%s: nodes-ready = %+v, want %s with %q", tc.name, r, tc.status, tc.want)
		}
		if strings.Contains(r.Message, "mgmt-cp-a") || strings.Contains(r.Message, "mgmt-md-0-a") {
			t.Errorf("%s: nodes-ready names the management cluster's Nodes: %+v", tc.name, r)
		}
	}
}

// The upgrade-in-progress label of a workload cluster's node is on its own
// API server: the management cluster's labelled Node failed the check as
// the workload cluster's leftover.
func TestNodeLabelCheckOfAWorkloadClusterSaysItIsNotChecked(t *testing.T) {
	r := checkNodeLabel(context.Background(), &Inputs{State: workloadState()})
	if r.Status != model.CheckWarn || r.Blocking || !strings.Contains(r.Message, "not checked") || strings.Contains(r.Message, "mgmt-cp-a") {
		t.Errorf("node-upgrade-label of a workload cluster = %+v", r)
	}
}
