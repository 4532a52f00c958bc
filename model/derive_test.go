package model

import (
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)

func i32(v int32) *int32 { return &v }

func cond(t, status, reason, msg string, at time.Time) Condition {
	return Condition{Type: t, Status: status, Reason: reason, Message: msg, LastTransitionTime: at}
}

// readyCluster is a management cluster at rest: external etcd, 3 CP, 2
// workers, Cilium managed, everything up to date.
func readyCluster() *ClusterState {
	s := &ClusterState{
		ClusterName: "mgmt",
		Sources:     map[Kind]SourceStatus{KindMachine: {Installed: true, Version: "v1beta2", Synced: true}},
		Cluster: &EKSACluster{
			Meta:               Meta{Name: "mgmt", Generation: 4},
			ObservedGeneration: 4,
			KubernetesVersion:  "1.30",
			ControlPlaneCount:  3,
			ExternalEtcdCount:  3,
			CiliumManaged:      true,
			WorkerGroups:       []WorkerGroup{{Name: "md-0", Count: 2}},
			Conditions: Conditions{
				cond(ConditionControlPlaneReady, "True", "", "", t0),
				cond(ConditionDefaultCNIConfigured, "True", "", "", t0),
				cond(ConditionWorkersReady, "True", "", "", t0),
				cond(ConditionReady, "True", "", "", t0),
			},
		},
		Etcd: &EtcdCluster{
			Meta:     Meta{Name: "mgmt-etcd", Generation: 2},
			Replicas: 3, ReadyReplicas: 3, Ready: true, ObservedGeneration: 2,
		},
		ControlPlane: &ControlPlane{
			Meta:               Meta{Name: "mgmt", Generation: 3},
			Version:            "v1.30.14-eks-1-30-58",
			Replicas:           ReplicaCounts{Desired: i32(3), Ready: i32(3), UpToDate: i32(3)},
			ObservedGeneration: 3,
		},
		MachineDeployments: []MachineDeployment{{
			Meta:               Meta{Name: "mgmt-md-0", Generation: 2},
			Version:            "v1.30.14-eks-1-30-58",
			Replicas:           ReplicaCounts{Desired: i32(2), Ready: i32(2), UpToDate: i32(2)},
			ObservedGeneration: 2,
		}},
	}
	var ms []*Machine
	for _, n := range []string{"mgmt-etcd-a", "mgmt-etcd-b", "mgmt-etcd-c"} {
		ms = append(ms, &Machine{Meta: Meta{Name: n, CreationTimestamp: t0.Add(-time.Hour)}, Role: RoleEtcd, Owner: "mgmt-etcd", Owned: true, EtcdReady: true, Phase: "Running"})
	}
	for _, n := range []string{"mgmt-cp-a", "mgmt-cp-b", "mgmt-cp-c"} {
		ms = append(ms, machine(n, RoleControlPlane, "mgmt", "v1.30.14-eks-1-30-58", true))
	}
	for _, n := range []string{"mgmt-md-0-a", "mgmt-md-0-b"} {
		ms = append(ms, machine(n, RoleWorker, "mgmt-md-0", "v1.30.14-eks-1-30-58", true))
	}
	s.Machines = ListOf(ms...)
	return s
}

// appended is l with items added at its end, as a new list: what the
// watchers publish when objects were added (never Same as l).
func appended[T any](l List[T], items ...*T) List[T] {
	return ListOf(append(l.Slice(), items...)...)
}

func machine(name string, role MachineRole, owner, version string, ready bool) *Machine {
	st := "True"
	if !ready {
		st = "False"
	}
	return &Machine{
		Meta: Meta{Name: name, CreationTimestamp: t0.Add(-time.Hour)},
		Role: role, Owner: owner, Owned: true, Version: version, NodeName: name, Phase: "Running",
		Conditions: Conditions{cond(ConditionReady, st, "", "", t0.Add(-time.Hour)), cond(MachineConditionUpToDate, "True", "", "", t0.Add(-time.Hour))},
	}
}

func phase(p Progress, ph Phase) PhaseProgress {
	pp, _ := phaseOf(p, ph)
	return pp
}

func TestDeriveProgressAtRestIsDone(t *testing.T) {
	p := DeriveProgress(readyCluster(), ProgressOptions{}, t0)
	if p.Current != PhaseDone || !p.Complete || p.Stale || p.Failed {
		t.Fatalf("at rest: current=%s complete=%v stale=%v failed=%v summary=%q", p.Current, p.Complete, p.Stale, p.Failed, p.Summary)
	}
	for _, ph := range p.Phases {
		if ph.Status != PhaseOK {
			t.Errorf("phase %s = %s (%s), want done", ph.Phase, ph.Status, ph.Detail)
		}
	}
	if got := phase(p, PhaseEtcd); got.Done != 3 || got.Total != 3 || got.Ready != 3 {
		t.Errorf("etcd counts = %d/%d ready %d", got.Done, got.Total, got.Ready)
	}
	if got := phase(p, PhaseWorkers); got.Done != 2 || got.Total != 2 {
		t.Errorf("worker counts = %d/%d", got.Done, got.Total)
	}
}

func TestDeriveProgressStackedEtcdAndUnmanagedCNISkipped(t *testing.T) {
	s := readyCluster()
	s.Etcd = nil
	s.Cluster.ExternalEtcdCount = 0
	s.Machines = ListOf(s.Machines.Slice()[3:]...)
	s.Cluster.CiliumSkipUpgrade = true
	p := DeriveProgress(s, ProgressOptions{}, t0)
	if got := phase(p, PhaseEtcd).Status; got != PhaseSkipped {
		t.Errorf("etcd = %s, want skipped", got)
	}
	if got := phase(p, PhaseCNI).Status; got != PhaseSkipped {
		t.Errorf("CNI = %s, want skipped", got)
	}
	for _, m := range p.Milestones {
		if m.Name == MilestoneDefaultCNI {
			t.Errorf("DefaultCNIConfigured must not be a milestone when cilium skipUpgrade is set")
		}
	}
	if p.Current != PhaseDone {
		t.Errorf("current = %s, want done", p.Current)
	}
}

func TestDeriveProgressEtcdRollout(t *testing.T) {
	s := readyCluster()
	start := t0.Add(-5 * time.Minute)
	s.Etcd.Annotations = map[string]string{AnnotationEtcdUpgrading: "true"}
	s.Etcd.Ready = false
	s.Etcd.ReadyReplicas = 3
	s.Etcd.Conditions = Conditions{{Type: EtcdConditionMachinesSpecUpToDate, Status: "False", Severity: SeverityWarning, Reason: "EtcdRollingUpdateInProgress", LastTransitionTime: start}}
	// One new member joined, one still provisioning.
	s.Machines = appended(s.Machines,
		&Machine{Meta: Meta{Name: "mgmt-etcd-d", CreationTimestamp: start.Add(time.Minute)}, Role: RoleEtcd, Owned: true, EtcdReady: true, Phase: "Running"},
		&Machine{Meta: Meta{Name: "mgmt-etcd-e", CreationTimestamp: start.Add(3 * time.Minute)}, Role: RoleEtcd, Owned: true, Phase: "Provisioning"},
	)
	s.ControlPlane.Annotations = map[string]string{AnnotationCAPIPaused: "true"}
	p := DeriveProgress(s, ProgressOptions{}, t0)
	if p.Current != PhaseEtcd {
		t.Fatalf("current = %s, want etcd (%s)", p.Current, p.Summary)
	}
	e := phase(p, PhaseEtcd)
	if e.Done != 1 || e.Total != 3 || e.Status != PhaseActive || !e.Since.Equal(start) {
		t.Errorf("etcd = %+v", e)
	}
	if !strings.Contains(e.Detail, "upgrading") {
		t.Errorf("etcd detail %q should say upgrading", e.Detail)
	}
	// The control plane is at rest (conditions True) but must not read done
	// before etcd is.
	if cp := phase(p, PhaseControlPlane); cp.Status != PhasePending {
		t.Errorf("control plane = %s (%s), want pending", cp.Status, cp.Detail)
	}
	if w := phase(p, PhaseWorkers); w.Status != PhasePending || w.Detail != "waiting for etcd" {
		t.Errorf("workers = %s %q", w.Status, w.Detail)
	}
}

func TestDeriveProgressControlPlaneRollingCounts(t *testing.T) {
	s := readyCluster()
	s.ControlPlane.Version = "v1.31.9-eks-1-31-40"
	s.ControlPlane.Replicas.UpToDate = i32(1)
	s.Cluster.Conditions[0] = Condition{Type: ConditionControlPlaneReady, Status: "False", Severity: SeverityInfo, Reason: "RollingUpgradeInProgress", Message: "Control plane nodes not up-to-date yet, 4 upgrading (1 up to date)", LastTransitionTime: t0.Add(-3 * time.Minute)}
	s.Cluster.Conditions[3].Status = "False"
	for _, m := range s.Machines.All() {
		if m.Role == RoleControlPlane {
			m.Conditions[1].Status = "False"
		}
	}
	s.Machines = appended(s.Machines, machine("mgmt-cp-d", RoleControlPlane, "mgmt", "v1.31.9-eks-1-31-40", true))
	p := DeriveProgress(s, ProgressOptions{}, t0)
	if p.Current != PhaseControlPlane || p.Complete {
		t.Fatalf("current = %s complete=%v", p.Current, p.Complete)
	}
	cp := phase(p, PhaseControlPlane)
	if cp.Done != 1 || cp.Total != 3 || cp.Ready != 4 {
		t.Errorf("cp counts = %d/%d ready %d", cp.Done, cp.Total, cp.Ready)
	}
	if !strings.Contains(cp.Detail, "RollingUpgradeInProgress") {
		t.Errorf("cp detail %q lacks the EKS-A reason", cp.Detail)
	}
	if !strings.HasPrefix(p.Summary, "control plane: 1/3 machines upgraded and ready, 4 ready in all") {
		t.Errorf("summary = %q", p.Summary)
	}
}

func TestDeriveProgressInPlaceWorkersCountCompletedNodeUpgrades(t *testing.T) {
	s := readyCluster()
	target := "v1.31.9-eks-1-31-40"
	s.MachineDeployments[0].Version = target
	s.MachineDeployments[0].Replicas.UpToDate = i32(0)
	s.Cluster.Conditions[2] = cond(ConditionWorkersReady, "False", "InPlaceUpgradeInProgress", "Worker nodes not up-to-date yet", t0)
	s.Cluster.Conditions[3].Status = "False"
	var nodes []*Node
	for _, m := range s.Machines.All() {
		m.Conditions = nil // in-place: no UpToDate condition from CAPI
		if m.Role == RoleControlPlane {
			m.Version = s.ControlPlane.Version
		}
		if m.NodeName != "" {
			// Without a Ready condition, readiness comes from the node:
			// only a running node counts as up to date.
			nodes = append(nodes, &Node{Meta: Meta{Name: m.NodeName}, Ready: true})
		}
	}
	s.Nodes = ListOf(nodes...)
	s.NodeUpgrades = ListOf(
		&NodeUpgrade{Meta: Meta{Name: "mgmt-md-0-a-node-upgrader"}, MachineName: "mgmt-md-0-a", KubernetesVersion: target, Completed: true},
		&NodeUpgrade{Meta: Meta{Name: "mgmt-md-0-b-node-upgrader"}, MachineName: "mgmt-md-0-b", KubernetesVersion: target},
	)
	s.UpgradeRequests = []UpgradeRequest{{Meta: Meta{Name: "mgmt-md-0-md-upgrade"}, Kind: KindMachineDeploymentUpgrade, Target: "mgmt-md-0", RequireUpgrade: 1, Upgraded: 1}}
	p := DeriveProgress(s, ProgressOptions{}, t0)
	if p.Current != PhaseWorkers {
		t.Fatalf("current = %s (%s)", p.Current, p.Summary)
	}
	w := phase(p, PhaseWorkers)
	if w.Done != 1 || w.Total != 2 {
		t.Errorf("workers = %d/%d, want 1/2 (one NodeUpgrade completed)", w.Done, w.Total)
	}
	if !strings.Contains(w.Detail, "mgmt-md-0 in-place 1/2 upgraded") {
		t.Errorf("workers detail = %q", w.Detail)
	}
}

func TestDeriveProgressStaleIsNeverDone(t *testing.T) {
	s := readyCluster()
	s.Cluster.Generation = 5 // spec bumped, status still from generation 4
	s.Cluster.SpecChangedAt = t0.Add(-30 * time.Second)
	p := DeriveProgress(s, ProgressOptions{}, t0)
	if !p.Stale || p.Complete || p.Current == PhaseDone {
		t.Fatalf("stale: stale=%v complete=%v current=%s", p.Stale, p.Complete, p.Current)
	}
	if p.Current != PhaseEtcd {
		t.Errorf("current = %s, want etcd (the upgrade starts there)", p.Current)
	}
	want := "status not yet observed (generation 5, observed 4)"
	if got := phase(p, PhaseEtcd).Detail; got != want {
		t.Errorf("detail = %q, want %q", got, want)
	}
	for _, ph := range []Phase{PhaseControlPlane, PhaseCNI, PhaseWorkers} {
		if got := phase(p, ph); got.Status != PhasePending || got.Detail != "waiting for etcd" {
			t.Errorf("%s = %s %q while the status is stale, want pending", ph, got.Status, got.Detail)
		}
	}
	// Once: the phase's detail is the milestone's message.
	if !strings.Contains(p.Summary, want+" for 30s") || strings.Count(p.Summary, want) != 1 {
		t.Errorf("summary = %q", p.Summary)
	}
	for _, m := range p.Milestones[1:] {
		if m.Met {
			t.Errorf("milestone %s met while the status is stale", m.Name)
		}
	}
}

func TestDeriveProgressFailed(t *testing.T) {
	s := readyCluster()
	s.Cluster.FailureMessage = "bundle not found"
	s.Cluster.FailureReason = "BundleNotFoundForCluster"
	p := DeriveProgress(s, ProgressOptions{}, t0)
	if p.Current != PhaseFailed || !p.Failed || p.FailureMessage != "bundle not found" {
		t.Fatalf("failed: %+v", p)
	}
	if p.Summary != "failed: bundle not found" {
		t.Errorf("summary = %q", p.Summary)
	}
	// Every phase was done: the failure is the Cluster's, no phase's. It
	// was put on the last one ("phase workers: failed: bundle not found").
	for _, ph := range p.Phases {
		if ph.Status == PhaseBroken {
			t.Errorf("phase %s marked with the Cluster's failure", ph.Phase)
		}
	}
	// A failure on a stale status belongs to the previous spec.
	s.Cluster.Generation++
	if p := DeriveProgress(s, ProgressOptions{}, t0); p.Failed {
		t.Errorf("failure on a stale status reported as failed")
	}
}

func TestDeriveProgressNilAndEmpty(t *testing.T) {
	for _, s := range []*ClusterState{nil, {}} {
		p := DeriveProgress(s, ProgressOptions{}, t0)
		if p.Complete || p.Current == PhaseDone {
			t.Errorf("empty snapshot reads as done: %+v", p)
		}
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second:                 "0s",
		45 * time.Second:             "45s",
		11*time.Minute + time.Second: "11m",
		65 * time.Minute:             "1h05m",
		51 * time.Hour:               "2d3h",
	} {
		if got := ShortDuration(d); got != want {
			t.Errorf("ShortDuration(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestDeriveProgressAtRestWhileMachinesSync(t *testing.T) {
	s := readyCluster()
	// The Machine informer has not synced yet: a few machines arrived.
	s.Sources = map[Kind]SourceStatus{KindMachine: {Installed: true}}
	s.Machines = ListOf(s.Machines.At(6))
	p := DeriveProgress(s, ProgressOptions{}, t0)
	if p.Current != PhaseDone || !p.Complete {
		t.Fatalf("current = %s complete=%v (%s)", p.Current, p.Complete, p.Summary)
	}
	if e := phase(p, PhaseEtcd); e.Done != 3 || e.Total != 3 {
		t.Errorf("etcd without machines = %d/%d", e.Done, e.Total)
	}
	if cp := phase(p, PhaseControlPlane); cp.Done != 3 || cp.Ready != 3 {
		t.Errorf("control plane from KCP counters = %d ready %d", cp.Done, cp.Ready)
	}
	if w := phase(p, PhaseWorkers); w.Done != 2 || w.Total != 2 || w.Status != PhaseOK {
		t.Errorf("workers from MD counters = %+v", w)
	}
}

// A list still on its way makes its phase look under way (its objects are
// not seen): the progress says so, so nothing times it; a forbidden list
// never comes and is not waited for.
func TestDeriveProgressSaysWhileListsSync(t *testing.T) {
	s := readyCluster()
	s.Cluster.EksaVersion = "v0.20.9"
	if p := DeriveProgress(s, ProgressOptions{}, t0); p.Syncing || p.Target != "EKS-A v0.20.9, Kubernetes 1.30" {
		t.Errorf("synced: syncing=%v target=%q", p.Syncing, p.Target)
	}
	s.Sources[KindEtcdadmCluster] = SourceStatus{Installed: true}
	if p := DeriveProgress(s, ProgressOptions{}, t0); !p.Syncing {
		t.Error("the EtcdadmCluster list is on its way: not syncing")
	}
	s.Sources[KindEtcdadmCluster] = SourceStatus{Installed: true, Forbidden: "list etcdadmclusters"}
	if p := DeriveProgress(s, ProgressOptions{}, t0); p.Syncing {
		t.Error("a forbidden list counts as syncing for ever")
	}
}

// An upgrade that took 1m50s said "complete in 1m".
func TestTotalDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		42 * time.Second:                "42s",
		110 * time.Second:               "1m50s",
		61 * time.Minute:                "1h01m",
		59*time.Minute + 59*time.Second: "59m59s",
		-time.Second:                    "0s",
	} {
		if got := TotalDuration(d); got != want {
			t.Errorf("TotalDuration(%s) = %s, want %s", d, got, want)
		}
	}
}

// Management components ahead of the Cluster's release are the normal state
// before an upgrade (EKS-A's CLI upgrades them first): the phase is done and
// the cluster at rest. Behind it, nothing in the cluster upgrades them.
func TestDeriveProgressManagementComponents(t *testing.T) {
	for _, c := range []struct {
		installed string
		want      PhaseStatus
		complete  bool
	}{
		{"v0.21.2", PhaseOK, true},
		{"v0.20.9", PhaseOK, true},
		// Said, though EKS-A's completion rule (its conditions) holds.
		{"v0.20.8", PhaseActive, true},
		{"not a version", PhaseOK, true},
	} {
		s := readyCluster()
		s.Cluster.EksaVersion = "v0.20.9"
		s.Cluster.Annotations = map[string]string{AnnotationManagementComponentsVersion: c.installed}
		p := DeriveProgress(s, ProgressOptions{}, t0)
		if got := phase(p, PhaseComponents); got.Status != c.want || p.Complete != c.complete {
			t.Errorf("components at %s: %s (%s), complete %v", c.installed, got.Status, got.Detail, p.Complete)
		}
	}
	if !ManagementBehind("v0.20.9+abc", "v0.21.0") || ManagementBehind("v0.21.2", "v0.21.2+build") || ManagementBehind("", "v0.21.0") {
		t.Error("ManagementBehind")
	}
}

// Before the EKS-A Cluster is seen (the API server not reached, every list
// syncing) no phase is where the upgrade stands: the strip read
// "components ●", as if the management components were being upgraded.
func TestDeriveProgressBeforeTheClusterIsSeenMovesNoPhase(t *testing.T) {
	p := DeriveProgress(&ClusterState{}, ProgressOptions{}, t0)
	for _, ph := range p.Phases {
		if ph.Status == PhaseActive {
			t.Errorf("phase %s active (%s) with nothing seen", ph.Phase, ph.Detail)
		}
	}
}

// The snapshot watch --plain printed a second before an in-place upgrade of
// the workers completed (demo inplace-node-step-fails): both NodeUpgrades of
// mgmt-md-0 completed, the second node ready on the new kubelet, its Machine
// not yet moved to the new version, and the MachineDeploymentUpgrade's status
// still 1 upgraded, 1 to go: EKS-A's controller counts completed
// NodeUpgrades only at its next reconcile. The line read "2/2 nodes upgraded
// and ready, mgmt-md-0 in-place 1/2 upgraded": the in-place count follows
// the NodeUpgrades the phase counts from, and the status only while they are
// not in view.
func TestDeriveProgressInPlaceCountFollowsTheNodeUpgrades(t *testing.T) {
	const target = "v1.31.9-eks-1-31-40"
	snapshot := func() *ClusterState {
		s := readyCluster()
		s.Sources[KindNodeUpgrade] = SourceStatus{Installed: true, Version: "v1alpha1", Synced: true}
		s.MachineDeployments[0].Version = target
		s.Cluster.Conditions[2] = cond(ConditionWorkersReady, "False", "InPlaceUpgradeInProgress", "Worker nodes not up-to-date yet, 2 upgrading (1 up to date)", t0)
		s.Cluster.Conditions[3].Status = "False"
		for _, m := range s.Machines.All() {
			if m.Name == "mgmt-md-0-a" {
				m.Version = target
			}
		}
		s.NodeUpgrades = ListOf(
			&NodeUpgrade{Meta: Meta{Name: "mgmt-md-0-a-node-upgrader"}, MachineName: "mgmt-md-0-a", KubernetesVersion: target, Completed: true},
			&NodeUpgrade{Meta: Meta{Name: "mgmt-md-0-b-node-upgrader"}, MachineName: "mgmt-md-0-b", KubernetesVersion: target, Completed: true},
		)
		s.UpgradeRequests = []UpgradeRequest{{Meta: Meta{Name: "mgmt-md-0-md-upgrade"}, Kind: KindMachineDeploymentUpgrade, Target: "mgmt-md-0",
			Machines: []string{"mgmt-md-0-a", "mgmt-md-0-b"}, KubernetesVersion: target, RequireUpgrade: 1, Upgraded: 1}}
		return s
	}

	s := snapshot()
	w := phase(DeriveProgress(s, ProgressOptions{}, t0), PhaseWorkers)
	if w.Done != 2 || w.Total != 2 {
		t.Fatalf("workers = %d/%d, want 2/2 (both NodeUpgrades completed, both ready)", w.Done, w.Total)
	}
	if !strings.Contains(w.Detail, "mgmt-md-0 in-place 2/2 upgraded") {
		t.Errorf("workers detail = %q, want the in-place count of the same NodeUpgrades: 2/2", w.Detail)
	}
	// The Deriver keeps per-machine work between snapshots: same answer.
	var d Deriver
	if got := phase(d.Derive(s, ProgressOptions{}, t0), PhaseWorkers); got.Detail != w.Detail {
		t.Errorf("Deriver detail = %q, DeriveProgress = %q", got.Detail, w.Detail)
	}

	// The control plane's request is counted by the same rule.
	s = snapshot()
	s.UpgradeRequests = []UpgradeRequest{{Meta: Meta{Name: "mgmt-cp-upgrade"}, Kind: KindControlPlaneUpgrade, Target: "mgmt",
		Machines: []string{"mgmt-cp-a", "mgmt-cp-b", "mgmt-cp-c"}, RequireUpgrade: 3}}
	s.NodeUpgrades = ListOf(&NodeUpgrade{Meta: Meta{Name: "mgmt-cp-a-node-upgrader"}, MachineName: "mgmt-cp-a", KubernetesVersion: s.ControlPlane.Version, Completed: true})
	if cp := phase(DeriveProgress(s, ProgressOptions{}, t0), PhaseControlPlane); !strings.Contains(cp.Detail, "in-place 1/3 upgraded") {
		t.Errorf("control plane detail = %q, want in-place 1/3 upgraded", cp.Detail)
	}

	// NodeUpgrades not in view: the request's own status is all there is.
	for _, src := range []SourceStatus{
		{Installed: true, Version: "v1alpha1"}, // not synced yet
		{Installed: true, Forbidden: "list nodeupgrades.anywhere.eks.amazonaws.com in eksa-system", Synced: true},
	} {
		s = snapshot()
		s.Sources[KindNodeUpgrade] = src
		s.NodeUpgrades = List[NodeUpgrade]{}
		if w := phase(DeriveProgress(s, ProgressOptions{}, t0), PhaseWorkers); !strings.Contains(w.Detail, "mgmt-md-0 in-place 1/2 upgraded") {
			t.Errorf("NodeUpgrades %+v: workers detail = %q, want the request's status 1/2", src, w.Detail)
		}
	}
}
