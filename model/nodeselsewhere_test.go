package model

import (
	"strings"
	"testing"
	"time"
)

func TestNodesElsewhereOnlyForAClusterAnotherManages(t *testing.T) {
	for _, tc := range []struct {
		mgr  string
		want bool
	}{
		{"", false},
		{"mgmt", false}, // readyCluster's own name
		{"other-mgmt", true},
	} {
		s := readyCluster()
		s.Cluster.ManagementCluster = tc.mgr
		if got := s.NodesElsewhere(); got != tc.want {
			t.Errorf("managementCluster %q: NodesElsewhere = %v, want %v", tc.mgr, got, tc.want)
		}
	}
	if (&ClusterState{}).NodesElsewhere() {
		t.Error("a snapshot without the Cluster: its Nodes were said to be elsewhere")
	}
}

func TestMachineNodeReadyReadsTheMachinesNodeConditions(t *testing.T) {
	at := time.Unix(0, 0)
	for _, tc := range []struct {
		name         string
		node         string
		conds        Conditions
		ready, known bool
	}{
		{"no nodeRef yet", "", nil, false, true},
		{"v1beta2 NodeReady True", "n", Conditions{cond("NodeReady", "True", "", "", at), cond("NodeHealthy", "False", "X", "", at)}, true, true},
		{"v1beta2 NodeReady False", "n", Conditions{cond("NodeReady", "False", "KubeletNotReady", "", at)}, false, true},
		{"v1beta1 NodeHealthy only", "n", Conditions{cond("NodeHealthy", "True", "", "", at)}, true, true},
		{"NodeReady Unknown falls to NodeHealthy", "n", Conditions{cond("NodeReady", "Unknown", "", "", at), cond("NodeHealthy", "False", "NodeConditionsFailed", "", at)}, false, true},
		{"neither", "n", Conditions{cond("Ready", "True", "", "", at)}, false, false},
	} {
		ready, known := MachineNodeReady(&Machine{NodeName: tc.node, Conditions: tc.conds})
		if ready != tc.ready || known != tc.known {
			t.Errorf("%s: MachineNodeReady = %v, %v, want %v, %v", tc.name, ready, known, tc.ready, tc.known)
		}
	}
}

// A workload cluster's Node is on its own API server: one not in the
// snapshot was never looked for, and "not found" claimed a look.
func TestStallOfAWorkloadClustersMachineDoesNotSayItsNodeIsNotFound(t *testing.T) {
	s := readyCluster()
	s.Cluster.ManagementCluster = "other-mgmt"
	s.Machines = appended(s.Machines, &Machine{
		Meta: Meta{Name: "mgmt-cp-new", CreationTimestamp: t0.Add(-20 * time.Minute)},
		Role: RoleControlPlane, Owned: true, Phase: "Provisioned", NodeName: "mgmt-cp-new",
	})
	var got []string
	for _, st := range Stalls(s, ProgressOptions{}, t0) {
		if st.Name == "mgmt-cp-new" {
			got = append(got, st.Sentence)
		}
	}
	if len(got) != 1 || strings.Contains(got[0], "not found") || !strings.Contains(got[0], "Machine phase Provisioned") {
		t.Errorf("stall sentences of a workload cluster's machine = %q", got)
	}
}
