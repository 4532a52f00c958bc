package model

import (
	"strings"
	"testing"
	"time"
)

func stallSentences(s *ClusterState, kind Kind) []string {
	var out []string
	for _, st := range Stalls(s, ProgressOptions{}, t0) {
		if st.Kind == kind {
			out = append(out, st.Sentence)
		}
	}
	return out
}

// A machine days old that went NotReady two minutes ago has waited two
// minutes, not since it was created.
func TestStallMachineTimedFromItsReadyTransition(t *testing.T) {
	s := readyCluster()
	m := s.Machines.At(6)
	m.CreationTimestamp = t0.Add(-72 * time.Hour)
	m.Conditions[0] = cond(ConditionReady, "False", "NodeNotReady", "", t0.Add(-2*time.Minute))
	if got := stallSentences(s, KindMachine); len(got) != 0 {
		t.Errorf("NotReady for 2m reads as stalled: %q", got)
	}
	m.Conditions[0].LastTransitionTime = t0.Add(-12 * time.Minute)
	if got := stallSentences(s, KindMachine); len(got) != 1 || !strings.Contains(got[0], "not ready for 12m") {
		t.Errorf("stalls = %q, want one not ready for 12m", got)
	}
}

// An EtcdadmCluster whose new spec its controller has not observed is not at
// rest, however ready its old status says it is. Under upgrade-console's
// etcd rollback the members match the spec put back: the stall said "3/3
// members upgraded" of a rollout undone.
func TestStallEtcdSpecNotObserved(t *testing.T) {
	for _, rollback := range []bool{false, true} {
		s := readyCluster()
		s.Etcd.Generation = 3 // observed 2
		etcdCreatedAt(s, t0.Add(-20*time.Minute))
		if rollback {
			s.Cluster.Annotations = map[string]string{AnnotationEKSAPaused: "true", AnnotationEtcdRollbackRecord: `{"phase":"running","newMachine":"x"}`}
		}
		got := stallSentences(s, KindEtcdadmCluster)
		if len(got) != 1 || !strings.Contains(got[0], "rollout waiting for 20m") ||
			strings.Contains(got[0], "rollback to the previous spec by upgrade-console in progress") != rollback || (rollback && strings.Contains(got[0], "upgraded")) {
			t.Errorf("rollback %v: etcd stalls = %q", rollback, got)
		}
	}
}

// etcdCreatedAt dates every etcd member's creation.
func etcdCreatedAt(s *ClusterState, at time.Time) {
	for _, m := range s.Machines.All() {
		if m.Role == RoleEtcd {
			m.CreationTimestamp = at
		}
	}
}

// A RollingOut condition left True from an earlier rollout does not date
// this one: a control plane handed its new spec a minute ago has not stalled.
func TestStallControlPlaneIgnoresAnOlderRollingOut(t *testing.T) {
	s := readyCluster()
	s.ControlPlane.Version = "v1.31.9-eks-1-31-40"
	s.ControlPlane.Conditions = Conditions{cond("RollingOut", "True", "RollingOut", "", t0.Add(-30*time.Minute))}
	for _, m := range s.Machines.All() {
		m.CreationTimestamp = t0.Add(-72 * time.Hour)
		if m.Role == RoleControlPlane {
			m.Conditions[1].Status = "False"
		}
	}
	s.Cluster.Conditions[0].Status = "False"
	s.ControlPlane.ChangedAt = t0.Add(-time.Minute)
	if got := stallSentences(s, KindKubeadmControlPlane); len(got) != 0 {
		t.Errorf("a rollout a minute old stalls: %q", got)
	}
}

// One worker group's stall is timed and counted on its own machines: another
// group's recent change neither hides it nor adds to its count.
func TestStallWorkerGroupCountsItsOwnMachines(t *testing.T) {
	s := readyCluster()
	s.Cluster.KubernetesVersion = "1.31"
	s.Cluster.WorkerGroups = append(s.Cluster.WorkerGroups, WorkerGroup{Name: "md-1", Count: 1})
	md0 := &s.MachineDeployments[0]
	md0.Version = "v1.31.9-eks-1-31-40"
	md0.Replicas.UpToDate = i32(0)
	md0.SpecChangedAt = t0.Add(-11 * time.Minute)
	s.MachineDeployments = append(s.MachineDeployments, MachineDeployment{
		Meta:    Meta{Name: "mgmt-md-1", Generation: 2},
		Version: "v1.31.9-eks-1-31-40", ObservedGeneration: 2, // already rolled
		Replicas: ReplicaCounts{Desired: i32(1), Ready: i32(1), UpToDate: i32(1)},
	})
	fresh := machine("mgmt-md-1-a", RoleWorker, "mgmt-md-1", "v1.31.9-eks-1-31-40", true)
	fresh.CreationTimestamp = t0.Add(-time.Minute)
	fresh.Conditions[0].LastTransitionTime = t0.Add(-30 * time.Second)
	s.Machines = appended(s.Machines, fresh)
	want := "worker group mgmt-md-0 rollout waiting for 11m: 0/2 nodes upgraded and ready"
	if got := stallSentences(s, KindMachineDeployment); len(got) != 1 || got[0] != want {
		t.Errorf("worker stalls = %q\nwant [%q]", got, want)
	}

	// Counters that say done do not hide a spec not yet observed.
	s = readyCluster()
	s.MachineDeployments[0].Generation = 3 // observed 2
	s.MachineDeployments[0].SpecChangedAt = t0.Add(-11 * time.Minute)
	if got := stallSentences(s, KindMachineDeployment); len(got) != 1 || !strings.Contains(got[0], "rollout waiting for 11m") {
		t.Errorf("worker stalls of an unobserved spec = %q, want one waiting for 11m", got)
	}
}
