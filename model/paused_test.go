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
	// The Lease is seen and nobody holds it: the rollback was stopped
	// (ctrl+c, a crash), and "in progress … until it ends" waited for
	// nothing; it says how to finish it.
	s := afterEtcdRollback("running")
	s.Sources[KindLease] = SourceStatus{Installed: true, Synced: true}
	p = DeriveProgress(s, ProgressOptions{}, t0)
	if !strings.HasPrefix(p.Summary, "etcd rollback stopped before its end") || !strings.Contains(p.Summary, "`upgrade-console etcd rollback --cluster mgmt`") {
		t.Errorf("stopped rollback summary = %q", p.Summary)
	}
	s.Lock = &Lock{HolderIdentity: "ops@bastion/1", RenewTime: t0, Duration: time.Minute}
	if p = DeriveProgress(s, ProgressOptions{}, t0); !strings.HasPrefix(p.Summary, "etcd rollback in progress") {
		t.Errorf("a rollback under a live lock: %q", p.Summary)
	}
	// A Lease the watchers may not read says nothing of who holds it.
	s.Lock = nil
	s.Sources[KindLease] = SourceStatus{Installed: true, Synced: true, Forbidden: "get leases in eksa-system"}
	if p = DeriveProgress(s, ProgressOptions{}, t0); !strings.HasPrefix(p.Summary, "etcd rollback in progress") {
		t.Errorf("a rollback with the Lease forbidden: %q", p.Summary)
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
	if cp.Status != PhaseHeld || !strings.HasPrefix(cp.Detail, "EKS-A reconcile paused; 1/3 machines upgraded and ready") {
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

func TestDeriveProgressPausedAtRestIsStillDoneAndSaysPaused(t *testing.T) {
	// A pause left on a finished cluster holds nothing back now, but the
	// next upgrade would not start: it is shown.
	s := readyCluster()
	s.Cluster.Annotations = map[string]string{AnnotationEKSAPaused: "true"}
	p := DeriveProgress(s, ProgressOptions{}, t0)
	if p.Current != PhaseDone || !p.Complete || !p.Paused {
		t.Fatalf("current = %s complete=%v paused=%v (%s), want done and paused", p.Current, p.Complete, p.Paused, p.Summary)
	}
	want := "EKS-A reconcile paused (anywhere.eks.amazonaws.com/paused): EKS-A acts on no change until it is removed: see `upgrade-console lock status --cluster mgmt`"
	if p.Pause != want || p.Summary != "every completion milestone met" {
		t.Errorf("pause = %q\nwant    %q\nsummary = %q", p.Pause, want, p.Summary)
	}
	for _, ph := range p.Phases {
		if ph.Status == PhaseHeld {
			t.Errorf("phase %s held on a cluster at rest", ph.Phase)
		}
	}
	// A failure keeps its summary; the pause is said beside it.
	s.Cluster.FailureMessage = "boom"
	p = DeriveProgress(s, ProgressOptions{}, t0)
	if p.Current != PhaseFailed || !p.Paused || p.Pause != want || p.Summary != "failed: boom" {
		t.Errorf("failed: current = %s paused=%v pause=%q summary=%q", p.Current, p.Paused, p.Pause, p.Summary)
	}
}

// The etcd phase's time stops at the rollback (it counted on, 0:43 → 0:46 →
// 0:54, after the rollback had ended); the upgrade's, paused, counts on.
func TestTimelineFreezesARolledBackPhase(t *testing.T) {
	s := upgradingTo131()
	s.Etcd.Ready, s.Etcd.ReadyReplicas = false, 2 // a new member on its way
	var tl Timeline
	tl = tl.Observe(DeriveProgress(s, ProgressOptions{}, t0), t0)
	etcd, _ := tl.Entry(PhaseEtcd)
	if etcd.Status != PhaseActive || etcd.Started.IsZero() {
		t.Fatalf("etcd entry before the rollback = %+v, want under way", etcd)
	}
	rollbackAt := t0.Add(2 * time.Minute)
	for _, phase := range []string{"running", "done"} {
		rb := afterEtcdRollback(phase)
		rb.Cluster.Annotations[AnnotationEtcdRollbackRecord] = `{"phase":"` + phase + `","startedAt":"` + rollbackAt.Format(time.RFC3339) + `"}`
		for _, at := range []time.Duration{3 * time.Minute, 9 * time.Minute} {
			now := t0.Add(at)
			tl = tl.Observe(DeriveProgress(rb, ProgressOptions{}, now), now)
			e, _ := tl.Entry(PhaseEtcd)
			if e.Status != PhaseRolledBack || e.Elapsed(now) != rollbackAt.Sub(etcd.Started) {
				t.Errorf("rollback %s, at +%s: etcd %s for %s, want its time stopped at the rollback (%s)", phase, at, e.Status, e.Elapsed(now), rollbackAt.Sub(etcd.Started))
			}
			if tl.Started.IsZero() || !tl.Finished.IsZero() {
				t.Errorf("a paused upgrade is under way: started %v finished %v", tl.Started, tl.Finished)
			}
		}
	}
	// Joined after the rollback: nothing this console measured to show.
	joined := Timeline{}.Observe(DeriveProgress(afterEtcdRollback("done"), ProgressOptions{}, t0), t0)
	if e, _ := joined.Entry(PhaseEtcd); e.Status != PhaseRolledBack || e.Elapsed(t0.Add(time.Hour)) != 0 {
		t.Errorf("joined etcd entry = %+v, want no time", e)
	}
	if !joined.Started.Equal(upgradingTo131().Cluster.SpecChangedAt) {
		t.Errorf("joined upgrade started %v, want its spec change", joined.Started)
	}
}
