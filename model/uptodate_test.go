package model

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

const (
	k130 = "v1.30.14-eks-1-30-58"
	k131 = "v1.31.9-eks-1-31-40"
)

// workerRollout is the workers phase of an upgrade to 1.31 as CAPI shows it
// a moment after EKS-A gave the MachineDeployment the new version: four old
// machines, three of which the machine controller has not yet marked
// UpToDate=False; two new machines still Provisioning (CAPI counts them in
// upToDateReplicas and marks them UpToDate) and one new running node.
func workerRollout() *ClusterState {
	s := upgradingTo131()
	c := s.Cluster
	c.Conditions[0] = cond(ConditionControlPlaneReady, "True", "", "", t0.Add(-5*time.Minute))
	c.Conditions[2] = Condition{Type: ConditionWorkersReady, Status: "False", Severity: SeverityInfo, Reason: "RollingUpgradeInProgress", Message: "Worker nodes not up-to-date yet, 7 upgrading (3 up to date)", LastTransitionTime: t0.Add(-4 * time.Minute)}
	c.Conditions[3].Message = c.Conditions[2].Message
	c.WorkerGroups[0].Count = 4
	s.ControlPlane.Version = k131
	md := &s.MachineDeployments[0]
	md.Version = k131
	md.Replicas = ReplicaCounts{Desired: i32(4), Current: i32(7), Ready: i32(5), UpToDate: i32(3)}
	var ms []*Machine
	for _, m := range s.Machines.All() {
		switch m.Role {
		case RoleEtcd:
			ms = append(ms, m)
		case RoleControlPlane:
			ms = append(ms, machine(m.Name, RoleControlPlane, "mgmt", k131, true))
		}
	}
	for i := range 4 {
		m := machine(fmt.Sprintf("mgmt-md-0-old%d", i), RoleWorker, "mgmt-md-0", k130, true)
		if i == 0 {
			m.Conditions[1].Status = "False"
		}
		ms = append(ms, m)
	}
	for i := range 2 {
		m := machine(fmt.Sprintf("mgmt-md-0-prov%d", i), RoleWorker, "mgmt-md-0", k131, false)
		m.Phase, m.NodeName = "Provisioning", ""
		m.CreationTimestamp = t0.Add(-30 * time.Second)
		ms = append(ms, m)
	}
	ms = append(ms, machine("mgmt-md-0-run0", RoleWorker, "mgmt-md-0", k131, true))
	s.Machines = ListOf(ms...)
	return s
}

func TestDeriveProgressWorkersUpToDateMeansRunningOnTheTarget(t *testing.T) {
	s := workerRollout()
	p := DeriveProgress(s, ProgressOptions{}, t0)
	w := phase(p, PhaseWorkers)
	if p.Current != PhaseWorkers || w.Status != PhaseActive {
		t.Fatalf("current = %s, workers = %s (%s)", p.Current, w.Status, p.Summary)
	}
	if w.Done != 1 || w.Total != 4 {
		t.Errorf("workers = %d/%d up to date, want 1/4: only the running node on 1.31 (not old machines still marked UpToDate, nor provisioning ones)", w.Done, w.Total)
	}
	if !strings.HasPrefix(p.Summary, "workers: 1/4 nodes upgraded and ready, 5 ready in all") {
		t.Errorf("summary = %q", p.Summary)
	}
	// The nodes pane's figure is MachineUpToDate over the same machines: it
	// must be the same number.
	targets := MachineTargets(s)
	n := 0
	for _, m := range s.Machines.All() {
		if m.Role == RoleWorker && MachineUpToDate(m, nil, nil, targets[m.Owner]) {
			n++
		}
	}
	if n != w.Done {
		t.Errorf("MachineUpToDate counts %d workers, the phase %d", n, w.Done)
	}
	// The stall sentence counts the same way.
	p = DeriveProgress(s, ProgressOptions{StallAfter: time.Second}, t0)
	found := false
	for _, st := range p.Stalls {
		if st.Kind == KindMachineDeployment {
			found = true
			if !strings.HasSuffix(st.Sentence, ": 1/4 nodes upgraded and ready") {
				t.Errorf("stall = %q, want the phase's count", st.Sentence)
			}
		}
	}
	if !found {
		t.Errorf("no MachineDeployment stall in %+v", p.Stalls)
	}
}

func TestDeriveProgressWorkerCountNeverGoesBackAsOldMachinesAreMarked(t *testing.T) {
	// The machine controller marks the old machines UpToDate=False one by
	// one: what counts must not move while it does.
	s := workerRollout()
	var d Deriver
	before := phase(d.Derive(s, ProgressOptions{}, t0), PhaseWorkers).Done
	var ms []*Machine
	for _, m := range s.Machines.All() {
		if m.Role == RoleWorker && m.Version == k130 {
			c := *m
			c.Conditions = Conditions{c.Conditions[0], cond(MachineConditionUpToDate, "False", "NotUpToDate", "", t0)}
			m = &c
		}
		ms = append(ms, m)
	}
	s.Machines = ListOf(ms...)
	if after := phase(d.Derive(s, ProgressOptions{}, t0), PhaseWorkers).Done; after != before {
		t.Errorf("up to date went %d → %d while old machines were marked outdated", before, after)
	}
}

func TestDeriveProgressCountersAreLabelledAsSuch(t *testing.T) {
	// Machines still listing: only the deployment's counter is there, which
	// counts provisioning machines; it must not read as the nodes count.
	s := workerRollout()
	s.Sources = map[Kind]SourceStatus{KindMachine: {Installed: true}}
	p := DeriveProgress(s, ProgressOptions{}, t0)
	w := phase(p, PhaseWorkers)
	if w.Done != 3 || !strings.HasPrefix(w.Detail, "3/4 up to date by the MachineDeployments' count") {
		t.Errorf("workers from counters = %d: %q", w.Done, w.Detail)
	}
	if cp := phase(p, PhaseControlPlane); !strings.Contains(cp.Detail, "up to date by the KubeadmControlPlane's count") {
		t.Errorf("control plane from counters: %q", cp.Detail)
	}
}

func TestDeriveProgressMachinesOnTheOldKubernetesAreNotUpToDate(t *testing.T) {
	// Etcd upgrades; EKS-A has not yet given the control plane or the
	// workers 1.31, so their machines match their owners' specs, and CAPI
	// says UpToDate, but none runs what the upgrade asks for.
	s := upgradingTo131()
	s.Etcd.Annotations = map[string]string{AnnotationEtcdUpgrading: "true"}
	s.Etcd.Ready = false
	s.ControlPlane.Annotations = map[string]string{AnnotationCAPIPaused: "true"}
	p := DeriveProgress(s, ProgressOptions{}, t0)
	if p.Current != PhaseEtcd {
		t.Fatalf("current = %s (%s)", p.Current, p.Summary)
	}
	cp := phase(p, PhaseControlPlane)
	if cp.Done != 0 || cp.Status != PhasePending {
		t.Errorf("control plane = %s %d/%d (%s), want pending 0/3", cp.Status, cp.Done, cp.Total, cp.Detail)
	}
	w := phase(p, PhaseWorkers)
	if w.Done != 0 || w.Total != 2 || w.Status != PhasePending {
		t.Errorf("workers = %s %d/%d (%s), want pending 0/2", w.Status, w.Done, w.Total, w.Detail)
	}
	targets := MachineTargets(s)
	for _, m := range s.Machines.All() {
		if m.Role != RoleEtcd && MachineUpToDate(m, nil, nil, targets[m.Owner]) {
			t.Errorf("%s on %s up to date during the upgrade to 1.31", m.Name, m.Version)
		}
	}

	// When the upgrade reaches the control plane before EKS-A moved it, the
	// phase is where the upgrade stands, and says what it waits for. Etcd
	// is done: its members were replaced after the spec change.
	s.Etcd.Annotations, s.Etcd.Ready = nil, true
	s.Etcd.Conditions = Conditions{cond(EtcdConditionMachinesSpecUpToDate, "True", "", "", t0.Add(-2*time.Minute))}
	s.ControlPlane.Annotations = nil
	p = DeriveProgress(s, ProgressOptions{}, t0)
	cp = phase(p, PhaseControlPlane)
	if p.Current != PhaseControlPlane || cp.Status != PhaseActive || !strings.Contains(cp.Detail, "not started: EKS-A has yet to move it to Kubernetes 1.31") {
		t.Errorf("current = %s, control plane = %s %q", p.Current, cp.Status, cp.Detail)
	}
	if w := phase(p, PhaseWorkers); w.Status != PhasePending || w.Done != 0 {
		t.Errorf("workers = %s %d/%d", w.Status, w.Done, w.Total)
	}
}

func TestMachineTargetsFollowTheWorkerGroupsOwnVersion(t *testing.T) {
	// A group may stay behind the control plane (EKS-A allows two minors):
	// its machines on 1.30 are up to date when the group asks for 1.30.
	s := upgradingTo131()
	s.Cluster.WorkerGroups = []WorkerGroup{{Name: "md-0", Count: 2, KubernetesVersion: "1.30"}}
	if got := MachineTargets(s)["mgmt-md-0"]; got.Kubernetes != "1.30" || got.Version != k130 || got.OwnerBehind() {
		t.Errorf("md-0 target = %+v", got)
	}
	if got := MachineTargets(s)["mgmt"]; got.Kubernetes != "1.31" || !got.OwnerBehind() {
		t.Errorf("control plane target = %+v", got)
	}
	// A deployment that matches no group: its version is unknown when some
	// group overrides the cluster's, the cluster's otherwise.
	md := MachineDeployment{Meta: Meta{Name: "other"}, Version: k130}
	if got := workerTarget(s.Cluster, &md); got.Kubernetes != "" {
		t.Errorf("unmatched deployment with overrides = %+v", got)
	}
	s.Cluster.WorkerGroups[0].KubernetesVersion = ""
	if got := workerTarget(s.Cluster, &md); got.Kubernetes != "1.31" {
		t.Errorf("unmatched deployment without overrides = %+v", got)
	}
}

func TestMachineTargetBehind(t *testing.T) {
	for _, tc := range []struct {
		want, version string
		behind        bool
	}{
		{"1.31", k130, true},
		{"1.31", k131, false},
		{"1.31", "v1.32.0", false}, // newer: the Cluster seen is behind, not the machine
		{"2.0", "v1.99.1", true},
		{"1.31", "", false},
		{"", k130, false},
		{"1.31", "latest", false},
	} {
		if got := (MachineTarget{Kubernetes: tc.want}).Behind(tc.version); got != tc.behind {
			t.Errorf("target %q, version %q: behind = %v, want %v", tc.want, tc.version, got, tc.behind)
		}
	}
}

// externalEtcdSteps are the snapshots of an upgrade to 1.31 with external
// etcd, in EKS-A's order: management components, then etcd with the control
// plane paused, then the control plane. Each step builds on the one before.
func externalEtcdSteps() []func(*ClusterState) {
	specChanged := t0.Add(-5 * time.Minute)
	return []func(*ClusterState){
		func(s *ClusterState) { // applied: the new controller rolls out
			c := s.Cluster
			c.EksaVersion, c.Generation, c.SpecChangedAt = "v0.21.2", 6, specChanged
			c.Annotations = map[string]string{AnnotationManagementComponentsVersion: "v0.20.9"}
		},
		func(s *ClusterState) { // components done; EKS-A has not written etcd yet
			s.Cluster.Annotations[AnnotationManagementComponentsVersion] = "v0.21.2"
			s.Cluster.SpecChangedAt = specChanged.Add(time.Minute) // the annotation write
		},
		func(s *ClusterState) { // the new etcd spec, the control plane paused
			s.Cluster.ObservedGeneration = 6
			s.ControlPlane.Annotations = map[string]string{AnnotationCAPIPaused: "true"}
			s.Etcd.Generation, s.Etcd.Ready, s.Etcd.InfrastructureTemplate = 3, false, "mgmt-etcd-template-2"
			s.Etcd.Annotations = map[string]string{AnnotationEtcdUpgrading: "true"}
		},
		func(s *ClusterState) { // the rollout begins: one new member
			s.Etcd.ObservedGeneration = 3
			s.Etcd.Conditions = Conditions{cond(EtcdConditionMachinesSpecUpToDate, "False", "EtcdRollingUpdateInProgress", "", t0.Add(-3*time.Minute))}
			s.Machines = appended(s.Machines, &Machine{Meta: Meta{Name: "mgmt-etcd-d", CreationTimestamp: t0.Add(-3 * time.Minute)},
				Role: RoleEtcd, Owner: "mgmt-etcd", Owned: true, Phase: "Provisioning", InfrastructureTemplate: "mgmt-etcd-template-2"})
		},
		func(s *ClusterState) { // etcd done; EKS-A has yet to move the control plane
			s.Etcd.Ready, s.Etcd.Annotations = true, nil
			s.Etcd.Conditions = Conditions{cond(EtcdConditionMachinesSpecUpToDate, "True", "", "", t0.Add(-time.Minute))}
			s.Machines.At(s.Machines.Len() - 1).EtcdReady = true
			for _, m := range s.Machines.All() { // the old members, disowned
				if m.Role == RoleEtcd && m.InfrastructureTemplate != s.Etcd.InfrastructureTemplate {
					m.Owned = false
				}
			}
		},
		func(s *ClusterState) { // the control plane gets 1.31
			s.ControlPlane.Annotations = nil
			s.ControlPlane.Version = k131
		},
	}
}

// EKS-A writes the new etcd spec only after the management components:
// until then the EtcdadmCluster is ready on its old spec, and etcd must not
// read done (the upgrade then seemed to move on to the control plane, and
// back to etcd once EKS-A moved it).
func TestDeriveProgressEtcdIsNotDoneBeforeEKSAMovesIt(t *testing.T) {
	s := upgradingTo131()
	s.Cluster.Conditions = readyCluster().Cluster.Conditions // the status of before the upgrade
	s.Cluster.ObservedGeneration = 5
	s.Etcd.InfrastructureTemplate = "mgmt-etcd-template-1"
	for _, m := range s.Machines.All() {
		if m.Role == RoleEtcd {
			m.InfrastructureTemplate = s.Etcd.InfrastructureTemplate
		}
	}
	want := []Phase{PhaseComponents, PhaseEtcd, PhaseEtcd, PhaseEtcd, PhaseControlPlane, PhaseControlPlane}
	var got []Phase
	for i, step := range externalEtcdSteps() {
		step(s)
		p := DeriveProgress(s, ProgressOptions{}, t0)
		got = append(got, p.Current)
		e := phase(p, PhaseEtcd)
		if i < 4 && (e.Status == PhaseOK || e.Done != 0) {
			t.Errorf("step %d: etcd = %s %d/%d (%s) before its rollout ended", i, e.Status, e.Done, e.Total, e.Detail)
		}
		if i == 1 && !strings.Contains(e.Detail, "not started: EKS-A has yet to roll it for Kubernetes 1.31") {
			t.Errorf("step %d: etcd detail = %q, want what it waits for", i, e.Detail)
		}
		if i >= 4 && e.Status != PhaseOK {
			t.Errorf("step %d: etcd = %s (%s) after its rollout", i, e.Status, e.Detail)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("phases = %v, want %v", got, want)
	}
}

// To an identity that may not list Nodes the workers' counts are of
// Machines (ready by their Ready condition), and say so: "1/4 nodes" claimed
// a look at Nodes the console never had. With Nodes listed, the operator's
// word stays.
func TestDeriveProgressWorkersCountMachinesWhenNodesAreForbidden(t *testing.T) {
	for _, tc := range []struct {
		name   string
		forbid bool
		unit   string
	}{
		{"nodes listed", false, "nodes"},
		{"nodes forbidden", true, "machines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := workerRollout()
			if tc.forbid {
				forbid(s, KindNode)
			}
			p := DeriveProgress(s, ProgressOptions{StallAfter: time.Second}, t0)
			want := "1/4 " + tc.unit + " upgraded and ready, 5 ready in all"
			if w := phase(p, PhaseWorkers); !strings.HasPrefix(w.Detail, want) {
				t.Errorf("workers detail = %q, want it to begin %q", w.Detail, want)
			}
			if !strings.HasPrefix(p.Summary, "workers: "+want) {
				t.Errorf("summary = %q, want it to begin %q", p.Summary, "workers: "+want)
			}
			found := false
			for _, st := range p.Stalls {
				if st.Kind == KindMachineDeployment {
					found = true
					if !strings.HasSuffix(st.Sentence, ": 1/4 "+tc.unit+" upgraded and ready") {
						t.Errorf("stall = %q, want the phase's count in %s", st.Sentence, tc.unit)
					}
				}
			}
			if !found {
				t.Errorf("no MachineDeployment stall in %+v", p.Stalls)
			}
		})
	}
}

// MachineDeploymentReplicas says each MachineDeployment's machines the
// workers phase counts up to date, not CAPI's upToDateReplicas (3 here: two
// new machines still provisioning and one running). A group whose name
// prefixes another's ("mgmt-md", "mgmt-md-0") has machines that interleave
// with the other's in name order: each is still counted once, under its
// own owner.
func TestMachineDeploymentReplicasCountsByTheWorkersPhase(t *testing.T) {
	s := workerRollout()
	other := s.MachineDeployments[0]
	other.Name = "mgmt-md"
	other.Replicas = ReplicaCounts{Desired: i32(2), UpToDate: i32(2)}
	s.MachineDeployments = append(s.MachineDeployments, other)
	ms := s.Machines.Slice()
	for _, name := range []string{"mgmt-md-0-old0z", "mgmt-md-0-run0z"} {
		ms = append(ms, machine(name, RoleWorker, "mgmt-md", k131, true))
	}
	slices.SortStableFunc(ms, func(a, b *Machine) int { return strings.Compare(a.Name, b.Name) })
	s.Machines = ListOf(ms...)
	w := phase(DeriveProgress(s, ProgressOptions{}, t0), PhaseWorkers)
	for i, want := range []int32{1, 2} {
		md := &s.MachineDeployments[i]
		if r := MachineDeploymentReplicas(s.Cluster, md, w); r.UpToDate == nil || *r.UpToDate != want || *r.Desired != *md.Replicas.Desired {
			t.Errorf("%s: %+v (up to date %v), want %d up to date; workers phase %+v", md.Name, r, r.UpToDate, want, w.Owners)
		}
	}
	if w.Done != 3 {
		t.Errorf("workers phase counts %d up to date, want 3", w.Done)
	}

	// Machines not visible: the MachineDeployment's own count, none while
	// EKS-A has yet to give it the new version.
	md := s.MachineDeployments[0]
	if r := MachineDeploymentReplicas(s.Cluster, &md, PhaseProgress{}); *r.UpToDate != 3 {
		t.Errorf("no machine counted: %d up to date, want the MachineDeployment's 3", *r.UpToDate)
	}
	md.Version = k130
	if r := MachineDeploymentReplicas(s.Cluster, &md, PhaseProgress{}); *r.UpToDate != 0 {
		t.Errorf("no machine counted, before the new version: %d up to date, want 0", *r.UpToDate)
	}
}
