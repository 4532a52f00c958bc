package model

import (
	"strings"
	"testing"
	"time"
)

// The permissions the watchers name when a list is refused, as they word
// them (watchers/sources.go).
var forbiddenPerm = map[Kind]string{
	KindCAPICluster:         "list clusters.cluster.x-k8s.io in eksa-system",
	KindEtcdadmCluster:      "list etcdadmclusters.etcdcluster.cluster.x-k8s.io in eksa-system",
	KindKubeadmControlPlane: "list kubeadmcontrolplanes.controlplane.cluster.x-k8s.io in eksa-system",
	KindMachineDeployment:   "list machinedeployments.cluster.x-k8s.io in eksa-system",
	KindMachine:             "list machines.cluster.x-k8s.io in eksa-system",
	KindNode:                "list nodes (cluster-wide)",
	KindEvent:               "list events in eksa-system",
}

// forbid makes kinds forbidden to the watcher: the source says so and the
// snapshot holds none of their objects, as the watchers publish it.
func forbid(s *ClusterState, kinds ...Kind) {
	if s.Sources == nil {
		s.Sources = map[Kind]SourceStatus{}
	}
	for _, k := range kinds {
		s.Sources[k] = SourceStatus{Installed: true, Version: "v1beta2", Forbidden: forbiddenPerm[k]}
		switch k {
		case KindEtcdadmCluster:
			s.Etcd = nil
		case KindKubeadmControlPlane:
			s.ControlPlane = nil
		case KindMachineDeployment:
			s.MachineDeployments = nil
		case KindMachine:
			s.Machines = List[Machine]{}
		case KindNode:
			s.Nodes = List[Node]{}
		case KindCAPICluster:
			s.CAPICluster = nil
		}
	}
}

// eksaOnly is readyCluster seen by a user who may read the EKS-A API group
// only: the reviewer's bob (--as-group eksaonly).
func eksaOnly() *ClusterState {
	s := readyCluster()
	s.Cluster.EksaVersion = "v0.20.9"
	s.Sources = map[Kind]SourceStatus{
		KindEKSACluster:              {Installed: true, Version: "v1alpha1", Synced: true},
		KindNodeUpgrade:              {Installed: true, Version: "v1alpha1", Synced: true},
		KindControlPlaneUpgrade:      {Installed: true, Version: "v1alpha1", Synced: true},
		KindMachineDeploymentUpgrade: {Installed: true, Version: "v1alpha1", Synced: true},
		KindLease:                    {Installed: true, Forbidden: "list leases.coordination.k8s.io in eksa-system"},
	}
	forbid(s, KindCAPICluster, KindEtcdadmCluster, KindKubeadmControlPlane, KindMachineDeployment, KindMachine, KindNode, KindEvent)
	return s
}

// noCountOfUnseen fails when a phase whose objects are not visible is
// counted, or called under way with nothing under it.
func noCountOfUnseen(t *testing.T, p Progress) {
	t.Helper()
	for _, ph := range p.Phases {
		if ph.Unseen == "" {
			continue
		}
		if ph.Done != 0 {
			t.Errorf("%s: %d done counted of objects not visible (%s)", ph.Phase, ph.Done, ph.Detail)
		}
		if !strings.HasPrefix(ph.Detail, ph.Unseen) {
			t.Errorf("%s: detail %q does not begin with why it is not seen (%q)", ph.Phase, ph.Detail, ph.Unseen)
		}
		for _, bad := range []string{"0 ready", "ready in all", "upgraded and ready", "0/"} {
			if strings.Contains(ph.Detail, bad) {
				t.Errorf("%s: detail %q counts what is not visible (%q)", ph.Phase, ph.Detail, bad)
			}
		}
		if ph.Status == PhaseActive && !strings.Contains(ph.Detail, clusterSays) {
			t.Errorf("%s: active with nothing seen and no word of the Cluster: %q", ph.Phase, ph.Detail)
		}
	}
}

// agrees fails when the phases contradict the completion rule: met, the
// upgrade is done and no phase is under way or unknown.
func agrees(t *testing.T, p Progress) {
	t.Helper()
	if !p.Complete {
		return
	}
	if p.Current != PhaseDone {
		t.Errorf("completion rule met but current = %s (%s)", p.Current, p.Summary)
	}
	for _, ph := range p.Phases {
		if ph.Status != PhaseOK && ph.Status != PhaseSkipped {
			t.Errorf("completion rule met but %s = %s: %s", ph.Phase, ph.Status, ph.Detail)
		}
	}
}

// The reviewer's case: bob may read the EKS-A API group only, the cluster is
// at rest. Read as empty lists, etcd and the workers were "active" ("0/4
// nodes upgraded and ready, 0 ready in all") and the current phase etcd, on
// the very snapshot whose Cluster meets the completion rule.
func TestDeriveProgressForbiddenAtRestFollowsTheCluster(t *testing.T) {
	s := eksaOnly()
	p := DeriveProgress(s, ProgressOptions{}, t0)
	if !p.Complete || p.Syncing {
		t.Fatalf("complete=%v syncing=%v: the Cluster alone decides completion", p.Complete, p.Syncing)
	}
	if p.Current != PhaseDone || p.Summary != "every completion milestone met" {
		t.Errorf("current = %s, summary %q; want done, as the completion rule says", p.Current, p.Summary)
	}
	want := map[Phase]string{
		PhaseEtcd: "EtcdadmCluster not visible (forbidden: list etcdadmclusters.etcdcluster.cluster.x-k8s.io in eksa-system); " +
			"per the EKS-A Cluster: ControlPlaneReady True",
		PhaseControlPlane: "KubeadmControlPlane and Machines not visible (forbidden: list kubeadmcontrolplanes.controlplane.cluster.x-k8s.io in eksa-system, " +
			"list machines.cluster.x-k8s.io in eksa-system); per the EKS-A Cluster: ControlPlaneReady True",
		PhaseWorkers: "MachineDeployments and Machines not visible (forbidden: list machinedeployments.cluster.x-k8s.io in eksa-system, " +
			"list machines.cluster.x-k8s.io in eksa-system); per the EKS-A Cluster: WorkersReady True",
	}
	for ph, detail := range want {
		got := phase(p, ph)
		if got.Status != PhaseOK || got.Detail != detail || got.Unseen == "" {
			t.Errorf("%s = %s %q (unseen %q)\nwant done %q", ph, got.Status, got.Detail, got.Unseen, detail)
		}
		if got.Total != 0 || got.Ready != 0 {
			t.Errorf("%s counts %d/%d ready %d of nothing seen", ph, got.Done, got.Total, got.Ready)
		}
	}
	if got := phase(p, PhaseCNI); got.Status != PhaseOK || got.Unseen != "" {
		t.Errorf("CNI = %+v: its condition is the Cluster's own, seen", got)
	}
	noCountOfUnseen(t, p)
	agrees(t, p)

	var d Deriver
	if q := d.Derive(s, ProgressOptions{}, t0); q.Current != p.Current || q.Summary != p.Summary || len(q.Phases) != len(p.Phases) {
		t.Errorf("Deriver: %s %q, DeriveProgress: %s %q", q.Current, q.Summary, p.Current, p.Summary)
	}
}

// During an upgrade the phases follow the Cluster's conditions, which EKS-A
// computes from the objects bob may not see: the current phase moves from
// etcd to the workers as they do, instead of staying on etcd to the end.
func TestDeriveProgressForbiddenUpgradeFollowsTheConditions(t *testing.T) {
	cpRolling := cond(ConditionControlPlaneReady, "False", "RollingUpgradeInProgress", "Control plane nodes not up-to-date yet, 4 upgrading (1 up to date)", t0.Add(-4*time.Minute))
	cases := []struct {
		name    string
		set     func(c *EKSACluster)
		current Phase
		status  map[Phase]PhaseStatus
		detail  map[Phase]string // substring
	}{{
		name: "management components first, status not observed",
		set: func(c *EKSACluster) {
			c.Generation = 5
			c.SpecChangedAt = t0.Add(-time.Minute)
			c.Annotations = map[string]string{AnnotationManagementComponentsVersion: "v0.20.9"}
			c.EksaVersion = "v0.21.2"
		},
		current: PhaseComponents,
		status:  map[Phase]PhaseStatus{PhaseComponents: PhaseActive, PhaseEtcd: PhaseUnknown, PhaseControlPlane: PhaseUnknown, PhaseCNI: PhasePending, PhaseWorkers: PhaseUnknown},
		detail:  map[Phase]string{PhaseEtcd: "EtcdadmCluster not visible (forbidden: list etcdadmclusters.etcdcluster.cluster.x-k8s.io in eksa-system); EKS-A Cluster status not yet observed"},
	}, {
		name: "status not observed: unknown, not active",
		set: func(c *EKSACluster) {
			c.Generation = 5
			c.SpecChangedAt = t0.Add(-time.Minute)
		},
		current: PhaseEtcd,
		status:  map[Phase]PhaseStatus{PhaseEtcd: PhaseUnknown, PhaseControlPlane: PhaseUnknown, PhaseCNI: PhasePending, PhaseWorkers: PhaseUnknown},
	}, {
		name: "etcd rolling",
		set: func(c *EKSACluster) {
			c.Conditions[0] = cond(ConditionControlPlaneReady, "False", "RollingUpgradeInProgress", "Etcd is not ready", t0.Add(-2*time.Minute))
			c.Conditions[3] = cond(ConditionReady, "False", "RollingUpgradeInProgress", "Etcd is not ready", t0.Add(-2*time.Minute))
		},
		current: PhaseEtcd,
		status:  map[Phase]PhaseStatus{PhaseEtcd: PhaseActive, PhaseControlPlane: PhasePending, PhaseCNI: PhasePending, PhaseWorkers: PhasePending},
		detail: map[Phase]string{
			PhaseEtcd:         "per the EKS-A Cluster: ControlPlaneReady False: RollingUpgradeInProgress: Etcd is not ready",
			PhaseControlPlane: "per the EKS-A Cluster: ControlPlaneReady False: RollingUpgradeInProgress: Etcd is not ready",
			PhaseWorkers:      "MachineDeployments and Machines not visible (forbidden: list machinedeployments.cluster.x-k8s.io in eksa-system, list machines.cluster.x-k8s.io in eksa-system); waiting for etcd",
		},
	}, {
		name: "control plane rolling",
		set: func(c *EKSACluster) {
			c.Conditions[0] = cpRolling
			c.Conditions[3] = cond(ConditionReady, "False", "RollingUpgradeInProgress", cpRolling.Message, t0.Add(-2*time.Minute))
		},
		current: PhaseControlPlane,
		status:  map[Phase]PhaseStatus{PhaseEtcd: PhaseOK, PhaseControlPlane: PhaseActive, PhaseCNI: PhasePending, PhaseWorkers: PhasePending},
		detail: map[Phase]string{
			PhaseEtcd:         "per the EKS-A Cluster: ControlPlaneReady no longer waits for etcd",
			PhaseControlPlane: "per the EKS-A Cluster: ControlPlaneReady False: RollingUpgradeInProgress: Control plane nodes not up-to-date yet, 4 upgrading (1 up to date)",
		},
	}, {
		name: "CNI",
		set: func(c *EKSACluster) {
			c.Conditions[1] = cond(ConditionDefaultCNIConfigured, "False", "DefaultCNIUpgradeInProgressReason", "Cilium upgrade in progress", t0.Add(-time.Minute))
			c.Conditions[3] = cond(ConditionReady, "False", "DefaultCNIUpgradeInProgressReason", "Cilium upgrade in progress", t0.Add(-time.Minute))
		},
		current: PhaseCNI,
		status:  map[Phase]PhaseStatus{PhaseEtcd: PhaseOK, PhaseControlPlane: PhaseOK, PhaseCNI: PhaseActive, PhaseWorkers: PhasePending},
	}, {
		name: "workers rolling",
		set: func(c *EKSACluster) {
			c.Conditions[2] = cond(ConditionWorkersReady, "False", "RollingUpgradeInProgress", "Worker nodes not up-to-date yet, 5 upgrading (1 up to date)", t0.Add(-time.Minute))
			c.Conditions[3] = cond(ConditionReady, "False", "RollingUpgradeInProgress", "Worker nodes not up-to-date yet, 5 upgrading (1 up to date)", t0.Add(-time.Minute))
		},
		current: PhaseWorkers,
		status:  map[Phase]PhaseStatus{PhaseEtcd: PhaseOK, PhaseControlPlane: PhaseOK, PhaseCNI: PhaseOK, PhaseWorkers: PhaseActive},
		detail:  map[Phase]string{PhaseWorkers: "per the EKS-A Cluster: WorkersReady False: RollingUpgradeInProgress: Worker nodes not up-to-date yet, 5 upgrading (1 up to date)"},
	}, {
		name: "workers ready, Ready not yet",
		set: func(c *EKSACluster) {
			c.Conditions[3] = cond(ConditionReady, "False", "Waiting", "one more look", t0)
		},
		current: PhaseWorkers,
		status:  map[Phase]PhaseStatus{PhaseEtcd: PhaseOK, PhaseControlPlane: PhaseOK, PhaseCNI: PhaseOK, PhaseWorkers: PhaseActive},
		detail:  map[Phase]string{PhaseWorkers: "list machines.cluster.x-k8s.io in eksa-system); per the EKS-A Cluster: one more look"},
	}, {
		name: "WorkersReady not reported",
		set: func(c *EKSACluster) {
			c.Conditions = Conditions{c.Conditions[0], c.Conditions[1]}
		},
		current: PhaseWorkers,
		status:  map[Phase]PhaseStatus{PhaseEtcd: PhaseOK, PhaseControlPlane: PhaseOK, PhaseCNI: PhaseOK, PhaseWorkers: PhaseUnknown},
		detail:  map[Phase]string{PhaseWorkers: "per the EKS-A Cluster: WorkersReady not reported yet"},
	}, {
		name:    "done",
		set:     func(*EKSACluster) {},
		current: PhaseDone,
		status:  map[Phase]PhaseStatus{PhaseEtcd: PhaseOK, PhaseControlPlane: PhaseOK, PhaseCNI: PhaseOK, PhaseWorkers: PhaseOK},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := eksaOnly()
			tc.set(s.Cluster)
			p := DeriveProgress(s, ProgressOptions{}, t0)
			if p.Current != tc.current {
				t.Errorf("current = %s, want %s (%s)", p.Current, tc.current, p.Summary)
			}
			for ph, want := range tc.status {
				if got := phase(p, ph); got.Status != want {
					t.Errorf("%s = %s (%s), want %s", ph, got.Status, got.Detail, want)
				}
			}
			for ph, want := range tc.detail {
				if got := phase(p, ph).Detail; !strings.Contains(got, want) {
					t.Errorf("%s detail = %q, want it to contain %q", ph, got, want)
				}
			}
			if p.Current != PhaseDone && !strings.HasPrefix(p.Summary, string(p.Current)+": ") {
				t.Errorf("summary %q does not say the current phase", p.Summary)
			}
			noCountOfUnseen(t, p)
			agrees(t, p)
		})
	}
}

// A phase none of whose objects the console may see stands where the
// Cluster's word puts it, and that word alone moves no other phase: a
// control plane the Cluster says waits for etcd is not begun (it read as
// under way while EKS-A had not touched it), and workers the Cluster says
// are rolling do not make the etcd phase it says nothing of past (the
// upgrade read two phases further on than anything the console could see).
func TestDeriveProgressTheClustersWordAloneMovesNoPhase(t *testing.T) {
	for _, tc := range []struct {
		name    string
		state   func() *ClusterState
		current Phase
		status  map[Phase]PhaseStatus
	}{{
		name: "control plane not visible, waiting for etcd by the Cluster's word",
		state: func() *ClusterState {
			s := readyCluster()
			forbid(s, KindKubeadmControlPlane, KindMachine)
			// Etcd is seen ready; EKS-A has not reconciled since.
			s.Cluster.Conditions[0] = cond(ConditionControlPlaneReady, "False", reasonExternalEtcdNotAvailable, messageEtcdNotReady, t0.Add(-time.Minute))
			s.Cluster.Conditions[3] = cond(ConditionReady, "False", reasonExternalEtcdNotAvailable, messageEtcdNotReady, t0.Add(-time.Minute))
			return s
		},
		current: PhaseControlPlane,
		status:  map[Phase]PhaseStatus{PhaseEtcd: PhaseOK, PhaseControlPlane: PhasePending, PhaseCNI: PhasePending, PhaseWorkers: PhasePending},
	}, {
		name: "workers rolling by the Cluster's word, ControlPlaneReady not reported",
		state: func() *ClusterState {
			s := eksaOnly()
			s.Cluster.Conditions = Conditions{
				s.Cluster.Conditions[1], // DefaultCNIConfigured True
				cond(ConditionWorkersReady, "False", "RollingUpgradeInProgress", "Worker nodes not up-to-date yet, 5 upgrading (1 up to date)", t0.Add(-time.Minute)),
				cond(ConditionReady, "False", "RollingUpgradeInProgress", "Worker nodes not up-to-date yet, 5 upgrading (1 up to date)", t0.Add(-time.Minute)),
			}
			return s
		},
		current: PhaseEtcd,
		status:  map[Phase]PhaseStatus{PhaseEtcd: PhaseUnknown, PhaseControlPlane: PhaseUnknown, PhaseWorkers: PhaseActive},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			p := DeriveProgress(tc.state(), ProgressOptions{}, t0)
			if p.Current != tc.current {
				t.Errorf("current = %s (%s), want %s", p.Current, p.Summary, tc.current)
			}
			for ph, want := range tc.status {
				if got := phase(p, ph); got.Status != want {
					t.Errorf("%s = %s (%s), want %s", ph, got.Status, got.Detail, want)
				}
			}
			noCountOfUnseen(t, p)
		})
	}
}

// Whatever subset of the phases' kinds is forbidden, a cluster at rest reads
// done, and nothing the console cannot see is counted.
func TestDeriveProgressForbiddenSubsetsAtRest(t *testing.T) {
	kinds := []Kind{KindEtcdadmCluster, KindKubeadmControlPlane, KindMachineDeployment, KindMachine, KindNode}
	for mask := 1; mask < 1<<len(kinds); mask++ {
		var names []string
		s := readyCluster()
		for i, k := range kinds {
			if mask&(1<<i) != 0 {
				forbid(s, k)
				names = append(names, string(k))
			}
		}
		p := DeriveProgress(s, ProgressOptions{}, t0)
		if p.Current != PhaseDone {
			t.Errorf("%v forbidden: current = %s (%s)", names, p.Current, p.Summary)
		}
		agrees(t, p)
		noCountOfUnseen(t, p)
	}
}

// The phase before one that visibly moves is past, even when neither its
// objects nor the Cluster say so.
func TestDeriveProgressUnknownPhaseBeforeAVisibleRollout(t *testing.T) {
	s := readyCluster()
	forbid(s, KindEtcdadmCluster)
	s.Cluster.Generation = 5 // status not observed: the Cluster says nothing
	s.ControlPlane.Version = "v1.31.9-eks-1-31-40"
	s.Cluster.KubernetesVersion = "1.31"
	s.ControlPlane.Replicas.UpToDate = i32(1)
	s.Machines = appended(s.Machines, machine("mgmt-cp-d", RoleControlPlane, "mgmt", "v1.31.9-eks-1-31-40", true))
	p := DeriveProgress(s, ProgressOptions{}, t0)
	if p.Current != PhaseControlPlane {
		t.Errorf("current = %s (%s), want control plane: it visibly rolls", p.Current, p.Summary)
	}
	if e := phase(p, PhaseEtcd); e.Status != PhaseUnknown {
		t.Errorf("etcd = %s %q, want unknown", e.Status, e.Detail)
	}
	noCountOfUnseen(t, p)

	// Nothing later moves: the unknown phase is where the upgrade stands.
	s = readyCluster()
	forbid(s, KindEtcdadmCluster)
	s.Cluster.Generation = 5
	p = DeriveProgress(s, ProgressOptions{}, t0)
	if p.Current != PhaseEtcd || phase(p, PhaseEtcd).Status != PhaseUnknown {
		t.Errorf("current = %s, etcd %s; want etcd, unknown", p.Current, phase(p, PhaseEtcd).Status)
	}
	if cp := phase(p, PhaseControlPlane); cp.Status != PhasePending || cp.Detail != "waiting for etcd" {
		t.Errorf("control plane = %s %q", cp.Status, cp.Detail)
	}
}

// Etcd seen, its members not: the EtcdadmCluster's own status says how the
// rollout goes, but which members are upgraded only the machines tell.
func TestDeriveProgressEtcdMembersForbidden(t *testing.T) {
	s := readyCluster()
	forbid(s, KindMachine)
	s.Etcd.Annotations = map[string]string{AnnotationEtcdUpgrading: "true"}
	s.Etcd.Ready = false
	s.Etcd.ReadyReplicas = 2
	s.Cluster.Conditions[0] = cond(ConditionControlPlaneReady, "False", "RollingUpgradeInProgress", "Etcd is not ready", t0)
	s.Cluster.Conditions[3] = cond(ConditionReady, "False", "RollingUpgradeInProgress", "Etcd is not ready", t0)
	p := DeriveProgress(s, ProgressOptions{}, t0)
	e := phase(p, PhaseEtcd)
	want := "Machines not visible (forbidden: list machines.cluster.x-k8s.io in eksa-system): upgraded members not counted, 2/3 members ready by the EtcdadmCluster's count, upgrading"
	if p.Current != PhaseEtcd || e.Status != PhaseActive || e.Detail != want {
		t.Errorf("current %s, etcd %s %q\nwant active %q", p.Current, e.Status, e.Detail, want)
	}
	if e.Done != 0 || e.Ready != 2 || e.Total != 3 || e.Unseen == "" {
		t.Errorf("etcd = %+v", e)
	}
}

// An etcd rollback with etcd not visible counts no members either.
func TestDeriveProgressRolledBackEtcdForbidden(t *testing.T) {
	s := eksaOnly()
	s.Cluster.Annotations = map[string]string{AnnotationEKSAPaused: "true",
		AnnotationEtcdRollbackRecord: `{"phase":"done","newMachine":"mgmt-etcd-x","by":"ops"}`}
	p := DeriveProgress(s, ProgressOptions{}, t0)
	e := phase(p, PhaseEtcd)
	if e.Status != PhaseRolledBack || strings.Contains(e.Detail, "0/0") || !strings.Contains(e.Detail, "EtcdadmCluster not visible (forbidden: ") {
		t.Errorf("etcd = %s %q", e.Status, e.Detail)
	}
}
