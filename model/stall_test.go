package model

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestStallEtcdMachineNotReady(t *testing.T) {
	s := readyCluster()
	s.Machines = appended(s.Machines, &Machine{
		Meta: Meta{Name: "mgmt-etcd-x7k2p", CreationTimestamp: t0.Add(-11*time.Minute - 20*time.Second)},
		Role: RoleEtcd, Owned: true, Phase: "Provisioning",
	})
	got := Stalls(s, ProgressOptions{}, t0)
	if len(got) != 1 {
		t.Fatalf("stalls = %+v", got)
	}
	want := "etcd machine mgmt-etcd-x7k2p not ready for 11m: no etcd-ready label, Machine phase Provisioning"
	if got[0].Sentence != want || got[0].Kind != KindMachine || got[0].Name != "mgmt-etcd-x7k2p" || got[0].Failed {
		t.Errorf("stall = %+v\nwant sentence %q", got[0], want)
	}
	// Below the threshold nothing is stalled; the threshold is configurable.
	if got := Stalls(s, ProgressOptions{StallAfter: 15 * time.Minute}, t0); len(got) != 0 {
		t.Errorf("stalls under a 15m threshold = %+v", got)
	}
	if got := Stalls(s, ProgressOptions{StallAfter: time.Minute}, t0.Add(-10*time.Minute)); len(got) != 1 {
		t.Errorf("stalls under a 1m threshold = %+v", got)
	}
}

func TestStallNodeUpgradeStepFailedAtOnce(t *testing.T) {
	s := readyCluster()
	s.Machines.At(6).NodeName = "mgmt-md-0-abc"
	created := t0.Add(-6 * time.Minute)
	failedAt := t0.Add(-3 * time.Minute)
	s.NodeUpgrades = ListOf(&NodeUpgrade{
		Meta: Meta{Name: "mgmt-md-0-a-node-upgrader", CreationTimestamp: created}, Kind: KindNodeUpgrade,
		MachineName: "mgmt-md-0-a",
		Conditions: Conditions{
			cond("UpgraderPodCreated", "True", "", "", created),
			cond("BinariesCopied", "True", "", "", created.Add(time.Minute)),
			cond("ContainerdUpgraded", "True", "", "", created.Add(time.Minute)),
			cond("CNIPluginsUpgraded", "True", "", "", created.Add(2*time.Minute)),
			{Type: "KubeadmUpgraded", Status: "False", Severity: SeverityError, Reason: "Container exited with a non-zero exit code, reason: Error", LastTransitionTime: failedAt},
			{Type: "KubeletUpgraded", Status: "False", Severity: SeverityInfo, Reason: "Container is waiting to be initialized", LastTransitionTime: created},
		},
	})
	got := Stalls(s, ProgressOptions{}, t0)
	if len(got) != 1 {
		t.Fatalf("stalls = %+v", got)
	}
	want := "node mgmt-md-0-abc in-place step KubeadmUpgraded failed 3m ago: Container exited with a non-zero exit code, reason: Error"
	if got[0].Sentence != want || !got[0].Failed || got[0].Kind != KindNodeUpgrade {
		t.Errorf("stall = %+v\nwant %q", got[0], want)
	}
	// Nothing in EKS-A retries the step: the stall says what does.
	if want := "`upgrade-console node retry mgmt-md-0-abc --cluster mgmt` runs its steps again once the cause is fixed"; got[0].Resume != want {
		t.Errorf("resume = %q\nwant     %q", got[0].Resume, want)
	}
	// Pasted in a shell on another context, the retry reaches this cluster.
	s.Conn = ConnFlags{{"context", "prod"}}
	if got := Stalls(s, ProgressOptions{}, t0); len(got) != 1 || got[0].Resume != "`upgrade-console node retry mgmt-md-0-abc --cluster mgmt --context prod` runs its steps again once the cause is fixed" {
		t.Errorf("with --context prod: %+v", got)
	}
	// A workload cluster's upgrader pod is on its own API server, where
	// node retry does not reach (it refuses, naming this command).
	s.Cluster.ManagementCluster = "mgmt-other"
	want = "`kubectl --kubeconfig <mgmt's kubeconfig> -n eksa-system delete pod mgmt-md-0-abc-node-upgrader`, on mgmt's own API server, runs its steps again once the cause is fixed"
	if got := Stalls(s, ProgressOptions{}, t0); len(got) != 1 || got[0].Resume != want {
		t.Errorf("workload cluster: %+v\nwant resume %q", got, want)
	}
}

func TestStallNodeUpgradeStepWaiting(t *testing.T) {
	s := readyCluster()
	created := t0.Add(-20 * time.Minute)
	s.NodeUpgrades = ListOf(&NodeUpgrade{
		Meta: Meta{Name: "mgmt-md-0-b-node-upgrader", CreationTimestamp: created}, Kind: KindNodeUpgrade,
		MachineName: "mgmt-md-0-b",
		Conditions: Conditions{
			cond("UpgraderPodCreated", "True", "", "", created),
			cond("BinariesCopied", "True", "", "", t0.Add(-12*time.Minute)),
			{Type: "ContainerdUpgraded", Status: "False", Severity: SeverityInfo, Reason: "Container is still running", LastTransitionTime: created},
		},
	})
	got := Stalls(s, ProgressOptions{}, t0)
	want := "node mgmt-md-0-b in-place step ContainerdUpgraded waiting for 12m: Container is still running"
	if len(got) != 1 || got[0].Sentence != want {
		t.Fatalf("stalls = %+v\nwant %q", got, want)
	}
}

func TestStallGenerationNotObserved(t *testing.T) {
	s := readyCluster()
	s.Cluster.Generation = 5
	s.Cluster.SpecChangedAt = t0.Add(-4 * time.Minute)
	s.Cluster.Annotations = map[string]string{AnnotationEKSAPaused: "true"}
	got := Stalls(s, ProgressOptions{}, t0)
	want := "EKS-A Cluster mgmt generation 5 not observed for 4m (observed 4): reconcile is paused (anywhere.eks.amazonaws.com/paused)"
	if len(got) != 1 || got[0].Sentence != want {
		t.Fatalf("stalls = %+v\nwant %q", got, want)
	}
	if got := Stalls(s, ProgressOptions{StaleAfter: 5 * time.Minute}, t0); len(got) != 0 {
		t.Errorf("stalls under a 5m StaleAfter = %+v", got)
	}
}

func TestStallControlPlaneRolloutWaitingWithWarningEvent(t *testing.T) {
	s := readyCluster()
	s.ControlPlane.Version = "v1.31.9-eks-1-31-40"
	s.ControlPlane.Conditions = Conditions{cond("RollingOut", "True", "RollingOut", "", t0.Add(-30*time.Minute))}
	for _, m := range s.Machines.All() {
		if m.Role == RoleControlPlane {
			m.Conditions[1].Status = "False"
		}
	}
	s.Cluster.Conditions[0].Status = "False"
	s.Events = []Event{
		{Type: "Warning", Reason: "ScaleUpFailed", Message: "cannot create machine: quota\nmore", ObjectKind: "KubeadmControlPlane", ObjectName: "mgmt"},
		{Type: "Warning", Reason: "Older", ObjectKind: "KubeadmControlPlane", ObjectName: "mgmt"},
	}
	got := Stalls(s, ProgressOptions{}, t0)
	if len(got) != 1 {
		t.Fatalf("stalls = %+v", got)
	}
	want := "control plane mgmt rollout waiting for 30m: 0/3 machines upgraded and ready, 3 ready in all; last warning: ScaleUpFailed: cannot create machine: quota …"
	if got[0].Sentence != want {
		t.Errorf("sentence = %q\nwant       %q", got[0].Sentence, want)
	}
}

// At the start of the control-plane phase (before RollingOut turns True)
// the machines' own times, days old on a real cluster, read as a stall the
// moment the phase began. Nothing waits since before the KubeadmControlPlane
// got its new spec.
func TestStallControlPlaneNotBeforeItsNewSpec(t *testing.T) {
	s := readyCluster()
	s.ControlPlane.Version = "v1.31.9-eks-1-31-40"
	s.ControlPlane.Conditions = nil
	for _, m := range s.Machines.All() {
		m.CreationTimestamp = t0.Add(-72 * time.Hour)
		if m.Role == RoleControlPlane {
			m.Conditions[1].Status = "False"
		}
	}
	s.Cluster.Conditions[0].Status = "False"
	s.ControlPlane.ChangedAt = t0.Add(-time.Minute)
	if got := Stalls(s, ProgressOptions{}, t0); len(got) != 0 {
		t.Errorf("a phase a minute old stalls: %+v", got)
	}
	s.ControlPlane.ChangedAt = t0.Add(-11 * time.Minute)
	if got := Stalls(s, ProgressOptions{}, t0); len(got) != 1 || !strings.Contains(got[0].Sentence, "rollout waiting for 11m") {
		t.Errorf("a phase 11 minutes without progress: %+v", got)
	}
}

// The same at the start of a worker group's rollout.
func TestStallWorkerGroupNotBeforeItsNewSpec(t *testing.T) {
	s := readyCluster()
	md := &s.MachineDeployments[0]
	md.Version = "v1.31.9-eks-1-31-40"
	md.Replicas.UpToDate = i32(0)
	md.Conditions = nil
	for _, m := range s.Machines.All() {
		m.CreationTimestamp = t0.Add(-72 * time.Hour)
	}
	md.SpecChangedAt = t0.Add(-time.Minute)
	for _, st := range Stalls(s, ProgressOptions{}, t0) {
		if st.Kind == KindMachineDeployment {
			t.Errorf("a rollout a minute old stalls: %+v", st)
		}
	}
	md.SpecChangedAt = t0.Add(-11 * time.Minute)
	found := false
	for _, st := range Stalls(s, ProgressOptions{}, t0) {
		found = found || (st.Kind == KindMachineDeployment && strings.Contains(st.Sentence, "rollout waiting for 11m"))
	}
	if !found {
		t.Errorf("a rollout 11 minutes without progress: %+v", Stalls(s, ProgressOptions{}, t0))
	}
}

func TestStallPauseLeftBehind(t *testing.T) {
	s := readyCluster()
	s.ControlPlane.Annotations = map[string]string{AnnotationCAPIPaused: "true"}
	s.Etcd.Conditions = Conditions{cond(ConditionReady, "True", "", "", t0.Add(-15*time.Minute))}
	got := Stalls(s, ProgressOptions{}, t0)
	if len(got) != 1 || !strings.Contains(got[0].Sentence, "paused for 15m although etcd is ready") {
		t.Fatalf("stalls = %+v", got)
	}
	// Paused a moment ago (etcd not yet marked upgrading, or the pause
	// just set by hand): not left behind yet, however long etcd was ready.
	s.ControlPlane.ChangedAt = t0.Add(-time.Second)
	if got := Stalls(s, ProgressOptions{}, t0); len(got) != 0 {
		t.Fatalf("a pause set 1s ago is a stall: %+v", got)
	}
	s.ControlPlane.ChangedAt = t0.Add(-12 * time.Minute)
	if got := Stalls(s, ProgressOptions{}, t0); len(got) != 1 || !strings.Contains(got[0].Sentence, "paused for 12m although etcd is ready") {
		t.Fatalf("stalls = %+v", got)
	}
}

func TestStallDeletingMachine(t *testing.T) {
	s := readyCluster()
	m := s.Machines.At(6)
	m.DeletionTimestamp = t0.Add(-14 * time.Minute)
	m.Conditions = append(m.Conditions, cond(MachineConditionDeleting, "True", "DrainingNode", "Drain not completed yet: pod default/db blocked by PodDisruptionBudget", t0))
	got := Stalls(s, ProgressOptions{}, t0)
	want := "worker machine mgmt-md-0-a deleting for 14m: DrainingNode: Drain not completed yet: pod default/db blocked by PodDisruptionBudget"
	if len(got) != 1 || got[0].Sentence != want {
		t.Fatalf("stalls = %+v\nwant %q", got, want)
	}
}

func TestStallsOrderFailuresFirst(t *testing.T) {
	s := readyCluster()
	s.Machines = appended(s.Machines, &Machine{Meta: Meta{Name: "mgmt-etcd-old", CreationTimestamp: t0.Add(-50 * time.Minute)}, Role: RoleEtcd, Owned: true, Phase: "Provisioning"})
	s.NodeUpgrades = ListOf(&NodeUpgrade{Meta: Meta{Name: "n", CreationTimestamp: t0.Add(-time.Minute)}, Kind: KindNodeUpgrade, MachineName: "mgmt-md-0-a",
		Conditions: Conditions{{Type: "UpgraderPodCreated", Status: "False", Reason: "Container exited with a non-zero exit code, reason: Error", LastTransitionTime: t0}}})
	got := Stalls(s, ProgressOptions{}, t0)
	if len(got) != 2 || !got[0].Failed || got[1].Name != "mgmt-etcd-old" {
		t.Fatalf("stalls = %+v", got)
	}
}

// After the failures, the longest stall comes first, whatever order the
// objects were looked at in: the dashboard shows only the first few stalls,
// and newer, less telling waits pushed the one that has held the upgrade for
// nearly an hour off the screen.
func TestStallsOrderLongestFirstAfterFailures(t *testing.T) {
	s := readyCluster()
	// Looked at first: an etcd machine, 14 minutes not ready.
	s.Machines = appended(s.Machines, &Machine{Meta: Meta{Name: "mgmt-etcd-new", CreationTimestamp: t0.Add(-14 * time.Minute)}, Role: RoleEtcd, Owned: true, Phase: "Provisioning"})
	// Looked at later: a worker deleting for 50 minutes.
	s.Machines.At(6).DeletionTimestamp = t0.Add(-50 * time.Minute)
	s.NodeUpgrades = ListOf(&NodeUpgrade{Meta: Meta{Name: "n", CreationTimestamp: t0.Add(-time.Minute)}, Kind: KindNodeUpgrade, MachineName: "mgmt-md-0-b",
		Conditions: Conditions{{Type: "UpgraderPodCreated", Status: "False", Reason: "Container exited with a non-zero exit code, reason: Error", LastTransitionTime: t0}}})
	var got []string
	for _, st := range Stalls(s, ProgressOptions{}, t0) {
		got = append(got, st.Name)
	}
	if want := []string{"n", "mgmt-md-0-a", "mgmt-etcd-new"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("stalls in order %v, want %v", got, want)
	}
}

// A failed in-place step is counted as failed, at once and later, never as
// stalled: "· 1 stalled" a second after the failure read as stuck for
// minutes (the threshold, --stall-after, is 10 minutes).
func TestSummaryCountsAFailedStepAsFailedNotStalled(t *testing.T) {
	s := readyCluster()
	failedAt := t0.Add(-time.Second)
	s.NodeUpgrades = ListOf(&NodeUpgrade{Meta: Meta{Name: "mgmt-md-0-a-node-upgrader", CreationTimestamp: t0.Add(-time.Minute)}, Kind: KindNodeUpgrade,
		MachineName: "mgmt-md-0-a", Conditions: Conditions{
			{Type: "UpgraderPodCreated", Status: "False", Severity: SeverityError, Reason: "Container exited with a non-zero exit code, reason: Error", LastTransitionTime: failedAt}}})
	for _, tc := range []struct {
		opts             ProgressOptions
		at               time.Time
		failed, notStuck string
	}{
		{ProgressOptions{}, t0, " · 1 failed", "stalled"},
		{ProgressOptions{}, failedAt.Add(11 * time.Minute), " · 1 failed", "stalled"},
		{ProgressOptions{StallAfter: time.Minute}, failedAt.Add(2 * time.Minute), " · 1 failed", "stalled"},
	} {
		p := DeriveProgress(s, tc.opts, tc.at)
		if !strings.HasSuffix(p.Summary, tc.failed) || (tc.notStuck != "" && strings.Contains(p.Summary, tc.notStuck)) {
			t.Errorf("%s after the failure (stall after %s): summary %q, want it to end %q", tc.at.Sub(failedAt), tc.opts.stallAfter(), p.Summary, tc.failed)
		}
	}
	// A step that is slow, not failed, is stalled past the threshold.
	s.NodeUpgrades.At(0).Conditions[0].Severity, s.NodeUpgrades.At(0).Conditions[0].Reason = SeverityInfo, "Container is still running"
	if p := DeriveProgress(s, ProgressOptions{}, failedAt.Add(11*time.Minute)); !strings.HasSuffix(p.Summary, " · 1 stalled") || strings.Contains(p.Summary, "failed") {
		t.Errorf("a step waiting 11m: summary %q", p.Summary)
	}
}

// FailedStalls keeps the stalls that hold the upgrade until an operator
// acts, and no slow ones.
func TestFailedStalls(t *testing.T) {
	p := Progress{Stalls: []Stall{{Name: "slow"}, {Name: "failed", Failed: true}}}
	if got := p.FailedStalls(); len(got) != 1 || got[0].Name != "failed" {
		t.Errorf("failed stalls: %+v", got)
	}
	if got := (Progress{Stalls: []Stall{{Name: "slow"}}}).FailedStalls(); len(got) != 0 {
		t.Errorf("a slow stall is failed: %+v", got)
	}
}

// Right after a node retry deletes the upgrader pod, EKS-A marks every step
// False with severity Error and reason "Upgrader pod does not exist" until
// its next reconcile creates the pod again: a wait, not a failed step. A
// container that exited non-zero is a failure whatever the severity.
func TestStepFailedTellsAMissingPodFromAFailedContainer(t *testing.T) {
	missing := Conditions{}
	for _, step := range NodeUpgradeSteps[:6] {
		missing = append(missing, Condition{Type: step, Status: "False", Severity: SeverityError, Reason: "Upgrader pod does not exist", LastTransitionTime: t0})
	}
	for _, c := range missing {
		if StepFailed(missing, c) {
			t.Errorf("%s with the upgrader pod missing is failed", c.Type)
		}
	}
	failed := Conditions{
		{Type: "UpgraderPodCreated", Status: "True"},
		{Type: "BinariesCopied", Status: "True"},
		{Type: "ContainerdUpgraded", Status: "False", Severity: SeverityError, Reason: "Container exited with a non-zero exit code, reason: Error"},
		{Type: "CNIPluginsUpgraded", Status: "False", Severity: SeverityInfo, Reason: "Container is waiting to be initialized"},
	}
	for _, c := range failed {
		if got, want := StepFailed(failed, c), c.Type == "ContainerdUpgraded"; got != want {
			t.Errorf("%s: failed %t, want %t", c.Type, got, want)
		}
	}
	if c := (Condition{Type: "KubeadmUpgraded", Status: "False", Reason: "Container exited with a non-zero exit code, reason: OOMKilled"}); !StepFailed(missing, c) {
		t.Error("a container that exited non-zero is not failed")
	}

	s := readyCluster()
	s.NodeUpgrades = ListOf(&NodeUpgrade{Meta: Meta{Name: "mgmt-md-0-a-node-upgrader", CreationTimestamp: t0.Add(-time.Minute)}, Kind: KindNodeUpgrade,
		MachineName: "mgmt-md-0-a", Conditions: missing})
	if got := Stalls(s, ProgressOptions{}, t0.Add(5*time.Second)); len(got) != 0 {
		t.Errorf("the upgrader pod missing for 5s: stalls %+v", got)
	}
	if got := Stalls(s, ProgressOptions{}, t0.Add(11*time.Minute)); len(got) != 1 || got[0].Failed || !strings.Contains(got[0].Sentence, "Upgrader pod does not exist") {
		t.Errorf("the upgrader pod missing for 11m: stalls %+v, want a stall, not a failure", got)
	}
}

// In place, machines are neither made nor deleted: a control plane whose
// nodes upgrade one after another, each NodeUpgrade completing, read as
// stalled from its rollout's start. Each step of a node's upgrade is
// progress; a step waiting past the limit still stalls.
func TestStallInPlaceProgressIsTheNodeUpgradesSteps(t *testing.T) {
	s := readyCluster()
	s.ControlPlane.Version = "v1.31.9-eks-1-31-40"
	s.ControlPlane.Conditions = Conditions{cond("RollingOut", "True", "RollingOut", "", t0.Add(-30*time.Minute))}
	s.ControlPlane.ChangedAt = t0.Add(-30 * time.Minute)
	var cps []string
	for _, m := range s.Machines.All() {
		m.CreationTimestamp = t0.Add(-72 * time.Hour)
		if m.Role == RoleControlPlane {
			m.Conditions[1].Status = "False"
			cps = append(cps, m.Name)
		}
	}
	s.Cluster.Conditions[0].Status = "False"
	step := func(at time.Time) Conditions {
		return Conditions{cond("UpgraderPodCreated", "True", "", "", at)}
	}
	s.NodeUpgrades = ListOf(
		&NodeUpgrade{Meta: Meta{Name: cps[0] + "-node-upgrader", CreationTimestamp: t0.Add(-25 * time.Minute)}, Kind: KindNodeUpgrade,
			MachineName: cps[0], Completed: true, Conditions: step(t0.Add(-12 * time.Minute))},
		&NodeUpgrade{Meta: Meta{Name: cps[1] + "-node-upgrader", CreationTimestamp: t0.Add(-11 * time.Minute)}, Kind: KindNodeUpgrade,
			MachineName: cps[1], Conditions: step(t0.Add(-2 * time.Minute))},
	)
	for _, st := range Stalls(s, ProgressOptions{}, t0) {
		if st.Kind == KindKubeadmControlPlane {
			t.Errorf("a node's step 2 minutes ago, and the control plane stalls: %+v", st)
		}
	}
	s.NodeUpgrades.At(1).Conditions = step(t0.Add(-11 * time.Minute))
	found := false
	for _, st := range Stalls(s, ProgressOptions{}, t0) {
		found = found || (st.Kind == KindKubeadmControlPlane && strings.Contains(st.Sentence, "rollout waiting for 11m"))
	}
	if !found {
		t.Errorf("no step for 11 minutes: %+v", Stalls(s, ProgressOptions{}, t0))
	}
}

// An etcd rollout that replaced no member for longer than the threshold is
// a stall, and one whose last member changed a moment ago is not. Without
// it, an etcdadm rollout that stopped between members (every member ready,
// the controller not moving on) showed no stall at all: no machine reads as
// stuck, so nothing said that etcd had made no progress for half an hour.
func TestStallEtcdRolloutWaiting(t *testing.T) {
	upgrading := func(lastMember time.Time) *ClusterState {
		s := readyCluster()
		s.Etcd.Annotations = map[string]string{AnnotationEtcdUpgrading: "true"}
		s.Etcd.Ready = false
		s.Etcd.Conditions = Conditions{{Type: EtcdConditionMachinesSpecUpToDate, Status: "False", Severity: SeverityWarning,
			Reason: "EtcdRollingUpdateInProgress", LastTransitionTime: t0.Add(-30 * time.Minute)}}
		s.Machines.At(0).CreationTimestamp = lastMember
		return s
	}
	for _, tc := range []struct {
		name       string
		lastMember time.Time
		want       string // "" for no etcd stall
	}{
		{"no member replaced since the rollout began", t0.Add(-time.Hour),
			"etcd cluster mgmt-etcd rollout waiting for 30m: 0/3 members upgraded and ready, 3 ready in all, upgrading; EtcdMachinesSpecUpToDate EtcdRollingUpdateInProgress"},
		{"a member replaced 25m ago", t0.Add(-25 * time.Minute),
			"etcd cluster mgmt-etcd rollout waiting for 25m: 1/3 members upgraded and ready, 3 ready in all, upgrading; EtcdMachinesSpecUpToDate EtcdRollingUpdateInProgress"},
		{"a member replaced 2m ago", t0.Add(-2 * time.Minute), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, st := range Stalls(upgrading(tc.lastMember), ProgressOptions{}, t0) {
				if st.Kind == KindEtcdadmCluster {
					got = append(got, st.Sentence)
				} else {
					t.Errorf("another stall: %+v", st)
				}
			}
			switch {
			case tc.want == "" && len(got) != 0:
				t.Errorf("etcd stalls = %q, want none", got)
			case tc.want != "" && (len(got) != 1 || got[0] != tc.want):
				t.Errorf("etcd stalls = %q\nwant %q", got, tc.want)
			}
		})
	}
}

// A machine under an in-place upgrade is not ready while its kubelet is
// upgraded: the NodeUpgrade's step says what it waits for, and the machine
// is not said stalled beside it (one cause counted twice, "2 stalled", with
// the less useful sentence first when its Ready went False earlier). Once
// the NodeUpgrade has completed, the machine speaks for itself again.
func TestStallMachineUnderANodeUpgradeIsTheNodeUpgrades(t *testing.T) {
	for _, tc := range []struct {
		name      string
		completed bool
		want      []Kind
	}{
		{"in flight", false, []Kind{KindNodeUpgrade}},
		{"completed", true, []Kind{KindMachine}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := readyCluster()
			m := s.Machines.At(6) // mgmt-md-0-a
			m.Conditions[0] = cond(ConditionReady, "False", "NodeNotReady", "", t0.Add(-15*time.Minute))
			created := t0.Add(-20 * time.Minute)
			kubelet := Condition{Type: "KubeletUpgraded", Status: "False", Severity: SeverityInfo, Reason: "Container is still running", LastTransitionTime: created}
			if tc.completed {
				kubelet = cond("KubeletUpgraded", "True", "", "", t0.Add(-11*time.Minute))
			}
			s.NodeUpgrades = ListOf(&NodeUpgrade{
				Meta: Meta{Name: "mgmt-md-0-a-node-upgrader", CreationTimestamp: created}, Kind: KindNodeUpgrade,
				MachineName: m.Name, Completed: tc.completed,
				Conditions: Conditions{
					cond("UpgraderPodCreated", "True", "", "", created),
					cond("BinariesCopied", "True", "", "", t0.Add(-15*time.Minute)),
					cond("ContainerdUpgraded", "True", "", "", t0.Add(-14*time.Minute)),
					cond("CNIPluginsUpgraded", "True", "", "", t0.Add(-13*time.Minute)),
					cond("KubeadmUpgraded", "True", "", "", t0.Add(-12*time.Minute)),
					kubelet,
				},
			})
			var got []Kind
			for _, st := range Stalls(s, ProgressOptions{}, t0) {
				got = append(got, st.Kind)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("stalls of kinds %v, want %v: %+v", got, tc.want, Stalls(s, ProgressOptions{}, t0))
			}
		})
	}
}

// A machine whose Node is not in the snapshot: not found when Nodes are
// listed, not readable when this identity may not list them (not found
// claimed a look the console never had).
func TestStallMachineNodeMissingOrUnreadable(t *testing.T) {
	for _, tc := range []struct {
		name   string
		forbid bool
		want   string
	}{
		{"nodes listed", false, "node mgmt-cp-new not found"},
		{"nodes forbidden", true, "node mgmt-cp-new not readable (Nodes forbidden)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := readyCluster()
			s.Machines = appended(s.Machines, &Machine{
				Meta: Meta{Name: "mgmt-cp-new", CreationTimestamp: t0.Add(-20 * time.Minute)},
				Role: RoleControlPlane, Owned: true, Phase: "Provisioned", NodeName: "mgmt-cp-new",
			})
			if tc.forbid {
				forbid(s, KindNode)
			}
			var got []string
			for _, st := range Stalls(s, ProgressOptions{}, t0) {
				if st.Name == "mgmt-cp-new" {
					got = append(got, st.Sentence)
				}
			}
			if len(got) != 1 || !strings.Contains(got[0], tc.want) {
				t.Errorf("stall sentences of mgmt-cp-new = %q, want one with %q", got, tc.want)
			}
		})
	}
}

// Through the kubelet's restarts of a failed container (restartPolicy
// OnFailure), EKS-A's NodeUpgrade reads "Container is waiting to be
// initialized" (Info) in each back-off and "Container is still running" in
// each run, and the condition's time restarts at each: read from the
// NodeUpgrade alone, the node was never failed, and the step's wait
// started over at every run. The upgrader pod says it failed, and the
// step's start is the time that holds.
func TestAStepWhosePodCrashLoopsIsFailed(t *testing.T) {
	s := readyCluster()
	var node string
	for _, m := range s.Machines.All() {
		if m.Name == "mgmt-md-0-a" {
			node = m.NodeName
		}
	}
	began := t0.Add(-4 * time.Minute)
	nu := &NodeUpgrade{Meta: Meta{Name: "mgmt-md-0-a-node-upgrader", CreationTimestamp: t0.Add(-5 * time.Minute)}, Kind: KindNodeUpgrade,
		MachineName: "mgmt-md-0-a", Conditions: Conditions{
			{Type: "UpgraderPodCreated", Status: "True", LastTransitionTime: t0.Add(-5 * time.Minute)},
			{Type: "BinariesCopied", Status: "True", LastTransitionTime: t0.Add(-5 * time.Minute)},
			{Type: "ContainerdUpgraded", Status: "True", LastTransitionTime: t0.Add(-5 * time.Minute)},
			{Type: "CNIPluginsUpgraded", Status: "True", LastTransitionTime: began},
			{Type: "KubeadmUpgraded", Status: "False", Severity: SeverityInfo, Reason: "Container is waiting to be initialized", LastTransitionTime: t0.Add(-2 * time.Second)},
		}}
	s.NodeUpgrades = ListOf(nu)
	exited := &ContainerState{Terminated: true, ExitCode: 1, Reason: "Error"}
	kubeadm := UpgraderContainer{Name: "kubeadm-upgrader", Init: true, State: ContainerState{Waiting: true, Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container"},
		Last: exited, RestartCount: 3}
	s.UpgraderPods = []UpgraderPod{{Meta: Meta{Name: node + "-node-upgrader", CreationTimestamp: t0.Add(-5 * time.Minute)}, NodeName: node,
		Containers: []UpgraderContainer{
			{Name: "components-copier", Init: true, State: ContainerState{Terminated: true}},
			{Name: "containerd-upgrader", Init: true, State: ContainerState{Terminated: true}},
			{Name: "cni-plugins-upgrader", Init: true, State: ContainerState{Terminated: true}},
			kubeadm,
			{Name: "kubelet-kubectl-upgrader", Init: true, State: ContainerState{Waiting: true, Reason: "PodInitializing"}},
			{Name: "post-upgrade-status", State: ContainerState{Waiting: true, Reason: "PodInitializing"}},
		}}}
	check := func(what string) {
		t.Helper()
		phrase := "step KubeadmUpgraded failed (the step began 4m ago): container kubeadm-upgrader"
		if what == "running again" {
			phrase = "step KubeadmUpgraded failed and runs again (the step began 4m ago): container kubeadm-upgrader running again"
		}
		got := Stalls(s, ProgressOptions{}, t0)
		if len(got) != 1 || !got[0].Failed || !got[0].SinceStep || !got[0].Since.Equal(began) || !strings.Contains(got[0].Sentence, phrase) ||
			(what == "running again") != strings.HasPrefix(got[0].Resume, "if it fails again, `upgrade-console node retry ") ||
			(what != "running again") != strings.HasPrefix(got[0].Resume, "`upgrade-console node retry ") ||
			!strings.Contains(got[0].Sentence, "exit code 1 (Error)") || !strings.Contains(got[0].Sentence, "(3 restarts)") {
			t.Errorf("%s: stalls %+v, want KubeadmUpgraded failed since the step began", what, got)
		}
		if f, ok := s.NodeStepFailure(nu, node); !ok || f.Step != "KubeadmUpgraded" {
			t.Errorf("%s: NodeStepFailure %+v %v", what, f, ok)
		}
	}
	check("backed off")
	s.UpgraderPods[0].Containers[3].State = ContainerState{Running: true}
	nu.Conditions[4].Reason = "Container is still running"
	check("running again")
	s.UpgraderPods[0].Containers[3].State = *exited
	s.UpgraderPods[0].Containers[3].Last = nil
	check("exited")
	if !strings.Contains(Stalls(s, ProgressOptions{}, t0)[0].Sentence, "container kubeadm-upgrader terminated: exit code 1 (Error)") {
		t.Errorf("exited: %q", Stalls(s, ProgressOptions{}, t0)[0].Sentence)
	}

	// With the pod's times, the failure is timed from its record: the
	// step's start plus the failed run's length.
	s.UpgraderPods[0].Containers[3] = UpgraderContainer{Name: "kubeadm-upgrader", Init: true, State: ContainerState{Running: true, Started: t0},
		Last: &ContainerState{Terminated: true, ExitCode: 1, Started: t0.Add(-time.Minute), Finished: t0.Add(-time.Minute + 15*time.Second)}, RestartCount: 5}
	if got := Stalls(s, ProgressOptions{}, t0); len(got) != 1 || !got[0].FailedAt.Equal(began.Add(15*time.Second)) {
		t.Errorf("with the pod's times: %+v, want FailedAt %v", got, began.Add(15*time.Second))
	}

	// Its run after the failures succeeded: the step is done, not failed.
	s.UpgraderPods[0].Containers[3] = UpgraderContainer{Name: "kubeadm-upgrader", Init: true, State: ContainerState{Terminated: true}, Last: exited, RestartCount: 4}
	if f, ok := s.NodeStepFailure(nu, node); ok {
		t.Errorf("a container that succeeded on its rerun: failure %+v", f)
	}
	// Another upgrade's pod (older than the NodeUpgrade), or one being
	// deleted (a retry), says nothing of this one.
	s.UpgraderPods[0].Containers[3] = kubeadm
	for name, mutate := range map[string]func(p *UpgraderPod){
		"older":    func(p *UpgraderPod) { p.CreationTimestamp = nu.CreationTimestamp.Add(-time.Hour) },
		"deleting": func(p *UpgraderPod) { p.DeletionTimestamp = t0 },
	} {
		p := s.UpgraderPods[0]
		mutate(&p)
		if f, ok := StepFailureOf(nu, &p); ok {
			t.Errorf("%s pod: failure %+v", name, f)
		}
	}
}

// A failure read from an upgrader pod that reports no run times (no
// FailedAt; Since is the step's start): the judge times it from when it
// first saw it, through the kubelet's reruns. A step that began 11 minutes
// ago and failed once was judged failed at the first look, while its
// container ran again.
func TestJudgeTimesAPodFailureFromWhenItSawIt(t *testing.T) {
	st := func(rerun bool) Progress {
		s := Stall{Kind: KindNodeUpgrade, Name: "n", Since: t0.Add(-11 * time.Minute), Failed: true, SinceStep: true}
		if rerun {
			s.Sentence = "runs again"
		}
		return Progress{Generation: 2, Stalls: []Stall{s}}
	}
	j := NewJudge()
	var o Outcome
	for i := 0; i <= 9; i++ {
		if j, o = j.Observe(st(i%2 == 0), t0.Add(time.Duration(i)*time.Minute)); o == OutcomeFailed {
			t.Fatalf("failed after %dm of a failure first seen at t0", i)
		}
	}
	if _, o = j.Observe(st(false), t0.Add(10*time.Minute)); o != OutcomeFailed {
		t.Errorf("a failure seen for 10m: %v, want failed", o)
	}
	// Gone for one look (the step succeeded, or the pod was retried):
	// seen again, it is timed anew.
	j, _ = j.Observe(Progress{Generation: 2}, t0.Add(11*time.Minute))
	if _, o = j.Observe(st(false), t0.Add(12*time.Minute)); o == OutcomeFailed {
		t.Error("a failure seen again was timed from its first sighting before it cleared")
	}
}

// Right after a retry the NodeUpgrade still shows the old pod's failure
// until EKS-A's next reconcile: a pod made after the condition failed
// runs the step again, and is not failed until it says so. A wait the
// pod cannot get past by a rerun (an image it cannot pull) is a stall, not
// a failed step, and says why.
func TestANewerPodAndAStuckWaitAreNotFailedSteps(t *testing.T) {
	failedAt := t0.Add(-5 * time.Minute)
	nu := &NodeUpgrade{Meta: Meta{Name: "n-node-upgrader", CreationTimestamp: t0.Add(-time.Hour)}, Kind: KindNodeUpgrade, MachineName: "n",
		Conditions: Conditions{{Type: "UpgraderPodCreated", Status: "True", LastTransitionTime: t0.Add(-time.Hour)},
			{Type: "BinariesCopied", Status: "True", LastTransitionTime: t0.Add(-time.Hour)},
			{Type: "ContainerdUpgraded", Status: "True", LastTransitionTime: t0.Add(-time.Hour)},
			{Type: "CNIPluginsUpgraded", Status: "True", LastTransitionTime: t0.Add(-time.Hour)},
			{Type: "KubeadmUpgraded", Status: "False", Severity: SeverityError, Reason: "Container exited with a non-zero exit code, reason: Error", LastTransitionTime: failedAt}}}
	pod := &UpgraderPod{Meta: Meta{Name: "n-node-upgrader", CreationTimestamp: t0.Add(-5 * time.Second)}, NodeName: "n",
		Containers: []UpgraderContainer{{Name: "kubeadm-upgrader", Init: true, State: ContainerState{Waiting: true, Reason: "PodInitializing"}}}}
	if f, ok := StepFailureOf(nu, pod); ok {
		t.Errorf("a pod made after the failure, not failed itself: %+v", f)
	}
	if _, ok := StepFailureOf(nu, nil); !ok {
		t.Error("without a pod the condition's failure is lost")
	}
	old := *pod
	old.CreationTimestamp = failedAt.Add(-time.Minute)
	if _, ok := StepFailureOf(nu, &old); !ok {
		t.Error("the failed pod's own condition is not a failure")
	}
	nu.Conditions[4] = Condition{Type: "KubeadmUpgraded", Status: "False", Severity: SeverityInfo, Reason: "Container is waiting to be initialized", LastTransitionTime: failedAt}
	pod.Containers[0].State = ContainerState{Waiting: true, Reason: "ImagePullBackOff", Message: "Back-off pulling image"}
	if f, ok := StepFailureOf(nu, pod); ok {
		t.Errorf("an image it cannot pull is a failed step: %+v", f)
	}
	s := readyCluster()
	var node string
	for _, m := range s.Machines.All() {
		if m.Name == "mgmt-md-0-a" {
			node = m.NodeName
		}
	}
	nu.MachineName, pod.NodeName = "mgmt-md-0-a", node
	s.NodeUpgrades, s.UpgraderPods = ListOf(nu), []UpgraderPod{*pod}
	got := Stalls(s, ProgressOptions{StallAfter: time.Minute}, t0)
	if len(got) != 1 || got[0].Failed || !strings.Contains(got[0].Sentence, "waiting for 5m: container kubeadm-upgrader waiting: ImagePullBackOff") {
		t.Errorf("stalls %+v, want a wait naming the image pull", got)
	}
}

// The failure's time is the pod's: a first run that ended is its own
// finishedAt; after reruns the step's start plus one run's length, never
// after the last run's end; none without times.
func TestFirstFailureIsThePodsRecord(t *testing.T) {
	start := t0.Add(-10 * time.Minute)
	run := func(began, took time.Duration) ContainerState {
		return ContainerState{Terminated: true, ExitCode: 1, Started: start.Add(began), Finished: start.Add(began + took)}
	}
	last := run(5*time.Minute, 20*time.Second)
	for name, tc := range map[string]struct {
		c    UpgraderContainer
		want time.Time
	}{
		"first run ended": {UpgraderContainer{State: run(time.Second, 3*time.Minute)}, start.Add(time.Second + 3*time.Minute)},
		"backed off":      {UpgraderContainer{State: ContainerState{Waiting: true, Reason: "CrashLoopBackOff"}, Last: &last, RestartCount: 3}, start.Add(20 * time.Second)},
		"running again":   {UpgraderContainer{State: ContainerState{Running: true, Started: t0}, Last: &last, RestartCount: 4}, start.Add(20 * time.Second)},
		"rerun ended":     {UpgraderContainer{State: last, RestartCount: 2}, start.Add(20 * time.Second)},
		"no times":        {UpgraderContainer{State: ContainerState{Waiting: true}, Last: &ContainerState{Terminated: true, ExitCode: 1}, RestartCount: 1}, time.Time{}},
		"never after the run's end": {UpgraderContainer{State: ContainerState{Terminated: true, ExitCode: 1, Started: start.Add(-30 * time.Second), Finished: start.Add(10 * time.Second)}, RestartCount: 1},
			start.Add(10 * time.Second)},
	} {
		if got := tc.c.FirstFailure(start); !got.Equal(tc.want) {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}
