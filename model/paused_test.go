package model

import (
	"strings"
	"testing"
	"time"
)

// upgradingTo131 is readyCluster after the spec asked for Kubernetes 1.31
// (generation 5, observed) with etcd as the phase under way: EKS-A reports
// "Etcd is not ready", the control plane and workers are still on 1.30.
func upgradingTo131() *ClusterState {
	s := readyCluster()
	c := s.Cluster
	c.KubernetesVersion = "1.31"
	c.Generation, c.ObservedGeneration = 5, 5
	c.SpecChangedAt = t0.Add(-20 * time.Minute)
	c.Conditions[0] = Condition{Type: ConditionControlPlaneReady, Status: "False", Severity: SeverityInfo, Reason: "RollingUpgradeInProgress", Message: "Etcd is not ready", LastTransitionTime: t0.Add(-19 * time.Minute)}
	c.Conditions[3] = Condition{Type: ConditionReady, Status: "False", Severity: SeverityInfo, Reason: "RollingUpgradeInProgress", Message: "Etcd is not ready", LastTransitionTime: t0.Add(-19 * time.Minute)}
	return s
}

// afterEtcdRollback is the cluster as upgrade-console's etcd rollback leaves
// it: the EtcdadmCluster spec is the previous one again (ready, no rollout
// marker, its three old members), the new member is gone, and EKS-A
// reconcile is paused with the rollback record.
func afterEtcdRollback(phase string) *ClusterState {
	s := upgradingTo131()
	s.Cluster.Annotations = map[string]string{
		AnnotationEKSAPaused:         "true",
		AnnotationEtcdRollbackRecord: `{"phase":"` + phase + `","newMachine":"mgmt-etcd-x7k2p","oldMachines":["mgmt-etcd-a","mgmt-etcd-b","mgmt-etcd-c"],"by":"ops@bastion-1"}`,
	}
	s.Etcd.Generation, s.Etcd.ObservedGeneration = 4, 4
	s.Etcd.Conditions = Conditions{cond(ConditionReady, "True", "", "", t0.Add(-time.Minute)), cond(EtcdConditionMachinesSpecUpToDate, "True", "", "", t0.Add(-time.Minute))}
	return s
}

func TestDeriveProgressAfterEtcdRollbackIsPausedNotMovingOn(t *testing.T) {
	p := DeriveProgress(afterEtcdRollback("done"), ProgressOptions{}, t0)
	if p.Current != PhasePaused || !p.Paused || p.Complete || p.Failed {
		t.Fatalf("current=%s paused=%v complete=%v failed=%v (%s), want paused", p.Current, p.Paused, p.Complete, p.Failed, p.Summary)
	}
	if p.EtcdRollback == nil || p.EtcdRollback.Running() || p.EtcdRollback.NewMachine != "mgmt-etcd-x7k2p" {
		t.Errorf("rollback record = %+v", p.EtcdRollback)
	}
	e := phase(p, PhaseEtcd)
	if e.Status != PhaseRolledBack || e.Done != 0 {
		t.Errorf("etcd = %s %d/%d (%s), want rolled back with no member up to date", e.Status, e.Done, e.Total, e.Detail)
	}
	if !strings.Contains(e.Detail, "rolled back to the previous spec") {
		t.Errorf("etcd detail = %q", e.Detail)
	}
	for _, ph := range p.Phases {
		if ph.Status == PhaseActive {
			t.Errorf("phase %s active (%s) while EKS-A is paused", ph.Phase, ph.Detail)
		}
		if ph.Phase != PhaseComponents && ph.Phase != PhaseEtcd && ph.Status != PhasePending {
			t.Errorf("phase %s = %s (%s), want pending behind the rolled-back etcd", ph.Phase, ph.Status, ph.Detail)
		}
	}
	want := "etcd rolled back; EKS-A reconcile paused (upgrade-console etcd rollback): resume with `upgrade-console lock clear paused --cluster mgmt` after fixing the cause"
	if p.Summary != want {
		t.Errorf("summary = %q\nwant      %q", p.Summary, want)
	}

	// While the rollback still runs, the summary must not invite a resume.
	p = DeriveProgress(afterEtcdRollback("running"), ProgressOptions{}, t0)
	if p.Current != PhasePaused || phase(p, PhaseEtcd).Status != PhaseRolledBack {
		t.Fatalf("running rollback: current=%s etcd=%s", p.Current, phase(p, PhaseEtcd).Status)
	}
	if !strings.HasPrefix(p.Summary, "etcd rollback in progress") || strings.Contains(p.Summary, "lock clear") {
		t.Errorf("running rollback summary = %q", p.Summary)
	}
}

func TestDeriveProgressRollbackRecordWithoutPauseIsALeftover(t *testing.T) {
	// The recovery treats a record without the pause as a leftover (the
	// pause was removed by hand, EKS-A runs again): so does the progress.
	s := afterEtcdRollback("done")
	delete(s.Cluster.Annotations, AnnotationEKSAPaused)
	p := DeriveProgress(s, ProgressOptions{}, t0)
	if p.Paused || p.EtcdRollback != nil || p.Current == PhasePaused {
		t.Fatalf("current=%s paused=%v record=%v, want the upgrade going on", p.Current, p.Paused, p.EtcdRollback)
	}
	if e := phase(p, PhaseEtcd); e.Status == PhaseRolledBack {
		t.Errorf("etcd = %s", e.Status)
	}
}

func TestDeriveProgressPausedMidRolloutHoldsEveryPhase(t *testing.T) {
	// The control plane rolls to 1.31 when someone pauses EKS-A.
	s := upgradingTo131()
	s.Cluster.Annotations = map[string]string{AnnotationEKSAPaused: "true"}
	s.Cluster.Conditions[0].Message = "Control plane nodes not up-to-date yet, 4 upgrading (1 up to date)"
	s.ControlPlane.Version = "v1.31.9-eks-1-31-40"
	s.Machines = appended(s.Machines, machine("mgmt-cp-d", RoleControlPlane, "mgmt", "v1.31.9-eks-1-31-40", true))
	p := DeriveProgress(s, ProgressOptions{}, t0)
	if p.Current != PhasePaused || !p.Paused {
		t.Fatalf("current = %s (%s), want paused", p.Current, p.Summary)
	}
	cp := phase(p, PhaseControlPlane)
	if cp.Status != PhaseHeld || !strings.HasPrefix(cp.Detail, "EKS-A reconcile paused; 1/3 machines up to date") {
		t.Errorf("control plane = %s %q, want held with its counts", cp.Status, cp.Detail)
	}
	for _, ph := range p.Phases {
		if ph.Status == PhaseActive {
			t.Errorf("phase %s active while EKS-A is paused", ph.Phase)
		}
	}
	want := "upgrade paused at control plane: EKS-A reconcile paused (anywhere.eks.amazonaws.com/paused); nothing moves until it is removed: see `upgrade-console lock status --cluster mgmt`"
	if !strings.HasPrefix(p.Summary, want) {
		t.Errorf("summary = %q\nwant      %q", p.Summary, want)
	}
}

func TestDeriveProgressPausedAtRestIsStillDone(t *testing.T) {
	// A pause left on a finished cluster holds nothing back.
	s := readyCluster()
	s.Cluster.Annotations = map[string]string{AnnotationEKSAPaused: "true"}
	p := DeriveProgress(s, ProgressOptions{}, t0)
	if p.Current != PhaseDone || p.Paused {
		t.Errorf("current = %s paused=%v (%s), want done", p.Current, p.Paused, p.Summary)
	}
}

func TestTimelineCountsOnWhilePaused(t *testing.T) {
	s := afterEtcdRollback("done")
	var tl Timeline
	tl = tl.Observe(DeriveProgress(s, ProgressOptions{}, t0), t0)
	tl = tl.Observe(DeriveProgress(s, ProgressOptions{}, t0.Add(time.Minute)), t0.Add(time.Minute))
	if tl.Started.IsZero() || !tl.Finished.IsZero() {
		t.Fatalf("a paused upgrade is under way: started %v finished %v", tl.Started, tl.Finished)
	}
	if e, _ := tl.Entry(PhaseEtcd); e.Status != PhaseRolledBack || e.Started.IsZero() || !e.Finished.IsZero() {
		t.Errorf("etcd entry = %+v, want started, not finished", e)
	}
}
