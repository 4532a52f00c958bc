package model

import (
	"testing"
	"time"
)

// What makes a machine count as "upgraded and ready": each part of the rule,
// on a machine that passes every other part. Counted wrongly, the dashboard
// and the plain watch say a group is done while a machine is still on the old
// version, not running, or on its way out.
func TestMachineUpToDateNeedsEveryPart(t *testing.T) {
	target := MachineTarget{Version: "v1.30.14-eks-1-30-58", Kubernetes: "1.30"}
	good := func() *Machine {
		return machine("mgmt-md-0-a", RoleWorker, "mgmt-md-0", "v1.30.14-eks-1-30-58", true)
	}
	readyNode := &Node{Meta: Meta{Name: "mgmt-md-0-a"}, Ready: true}
	if !MachineUpToDate(good(), readyNode, nil, target) {
		t.Fatal("a ready, running machine on the target version is not up to date")
	}
	for _, tc := range []struct {
		name   string
		change func(m *Machine) *Node
	}{
		{"deleting", func(m *Machine) *Node { m.DeletionTimestamp = t0; return readyNode }},
		{"not running", func(m *Machine) *Node { m.Phase = "Provisioning"; return readyNode }},
		{"UpToDate False", func(m *Machine) *Node { m.Conditions[1].Status = "False"; return readyNode }},
		// Same minor, another build: a patch upgrade (1.30.14-58 → -60)
		// must not read as done on machines of the old build.
		{"older build of the same minor", func(m *Machine) *Node { m.Version = "v1.30.14-eks-1-30-50"; return readyNode }},
		// No Ready condition on the machine: the node decides.
		{"no Ready condition, node not ready", func(m *Machine) *Node {
			m.Conditions = m.Conditions[1:]
			return &Node{Meta: Meta{Name: "mgmt-md-0-a"}, Ready: false}
		}},
	} {
		m := good()
		n := tc.change(m)
		if MachineUpToDate(m, n, nil, target) {
			t.Errorf("%s: counted as upgraded and ready", tc.name)
		}
	}
}

// The phases' status follows every sign of movement, not only the counts:
// each case is a cluster otherwise at rest, whose phase must read active (or,
// for etcd, not done).
func TestDerivePhaseActiveOnEverySignOfMovement(t *testing.T) {
	for _, tc := range []struct {
		name   string
		phase  Phase
		change func(s *ClusterState)
	}{
		{"control plane status not yet observed", PhaseControlPlane, func(s *ClusterState) { s.ControlPlane.Generation = 4 }},
		{"control plane surge machine", PhaseControlPlane, func(s *ClusterState) {
			s.Machines = appended(s.Machines, machine("mgmt-cp-d", RoleControlPlane, "mgmt", "v1.30.14-eks-1-30-58", true))
		}},
		{"control plane in-place upgrade not ready", PhaseControlPlane, func(s *ClusterState) {
			s.UpgradeRequests = []UpgradeRequest{{Meta: Meta{Name: "mgmt-cp-upgrade"}, Kind: KindControlPlaneUpgrade, Target: "mgmt", RequireUpgrade: 3}}
		}},
		{"workers status not yet observed", PhaseWorkers, func(s *ClusterState) { s.MachineDeployments[0].Generation = 3 }},
		{"workers surge machine", PhaseWorkers, func(s *ClusterState) {
			s.Machines = appended(s.Machines, machine("mgmt-md-0-c", RoleWorker, "mgmt-md-0", "v1.30.14-eks-1-30-58", true))
		}},
		{"etcd status not yet observed", PhaseEtcd, func(s *ClusterState) { s.Etcd.Generation = 3 }},
		{"etcd upgrading annotation", PhaseEtcd, func(s *ClusterState) {
			s.Etcd.Annotations = map[string]string{AnnotationEtcdUpgrading: "true"}
		}},
	} {
		s := readyCluster()
		tc.change(s)
		p := DeriveProgress(s, ProgressOptions{}, t0)
		if got := phase(p, tc.phase); got.Status == PhaseOK {
			t.Errorf("%s: %s phase = %s (%s), want it under way", tc.name, tc.phase, got.Status, got.Detail)
		}
	}
}

// Machines on their way out are not counted: a group of three with one old
// machine deleting reads 3/3, not 4 of 3.
func TestDerivePhaseCountsSkipDeletingMachines(t *testing.T) {
	s := readyCluster()
	old := []*Machine{
		{Meta: Meta{Name: "mgmt-etcd-old", CreationTimestamp: t0.Add(-2 * time.Hour), DeletionTimestamp: t0.Add(-time.Minute)},
			Role: RoleEtcd, Owner: "mgmt-etcd", Owned: true, EtcdReady: true, Phase: "Deleting"},
		machine("mgmt-cp-old", RoleControlPlane, "mgmt", "v1.30.14-eks-1-30-58", true),
		machine("mgmt-md-0-old", RoleWorker, "mgmt-md-0", "v1.30.14-eks-1-30-58", true),
	}
	old[1].DeletionTimestamp, old[2].DeletionTimestamp = t0.Add(-time.Minute), t0.Add(-time.Minute)
	s.Machines = appended(s.Machines, old...)
	p := DeriveProgress(s, ProgressOptions{}, t0)
	for _, want := range []struct {
		ph                 Phase
		done, total, ready int
	}{{PhaseEtcd, 3, 3, 3}, {PhaseControlPlane, 3, 3, 3}, {PhaseWorkers, 2, 2, 2}} {
		if got := phase(p, want.ph); got.Done != want.done || got.Total != want.total || got.Ready != want.ready {
			t.Errorf("%s = %d/%d, %d ready, want %d/%d, %d ready (a deleting machine counted)", want.ph, got.Done, got.Total, got.Ready, want.done, want.total, want.ready)
		}
	}
}

// With the machines not visible, the counts are the owners' counters: a
// control plane or worker group EKS-A has not yet given the new Kubernetes
// version counts none up to date, whatever its counter says of its old spec;
// and the workers phase waits for EKS-A only when every group is behind.
func TestDerivePhaseCountersOfOwnersNotYetMoved(t *testing.T) {
	s := readyCluster()
	s.Cluster.KubernetesVersion = "1.31"
	s.Machines = ListOf[Machine]()
	p := DeriveProgress(s, ProgressOptions{}, t0)
	if got := phase(p, PhaseControlPlane); got.Done != 0 {
		t.Errorf("control plane = %d/%d by its counter before EKS-A moved it (%s), want 0", got.Done, got.Total, got.Detail)
	}
	if got := phase(p, PhaseWorkers); got.Done != 0 {
		t.Errorf("workers = %d/%d by their counter before EKS-A moved them (%s), want 0", got.Done, got.Total, got.Detail)
	}

	s = readyCluster()
	s.Cluster.KubernetesVersion = "1.31"
	s.Cluster.WorkerGroups = append(s.Cluster.WorkerGroups, WorkerGroup{Name: "md-1", Count: 1})
	s.ControlPlane.Version = "v1.31.9-eks-1-31-40"
	md1 := s.MachineDeployments[0]
	md1.Meta.Name, md1.Version = "mgmt-md-1", "v1.31.9-eks-1-31-40"
	s.MachineDeployments = append(s.MachineDeployments, md1)
	p = DeriveProgress(s, ProgressOptions{}, t0)
	if got := phase(p, PhaseWorkers); got.Status != PhaseActive {
		t.Errorf("workers with one group moved and one not = %s (%s), want active", got.Status, got.Detail)
	}
}
