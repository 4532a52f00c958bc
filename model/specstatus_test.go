package model

import (
	"strings"
	"testing"
	"time"
)

// TestClusterSpecStatus: the live plan's current side is the Cluster's spec;
// whether the cluster has reached it is EKS-A's completion rule, and an etcd
// rollback (its record with the pause) means it has not, whatever the
// conditions say.
func TestClusterSpecStatus(t *testing.T) {
	if s := ClusterSpecStatus(nil, nil); s != nil || s.NotReached() {
		t.Errorf("no Cluster: %+v, want nil (unknown)", s)
	}
	for _, c := range []struct {
		name   string
		state  func() *ClusterState
		reason SpecReason
		msg    string // in Message
		next   string // in Next
	}{
		{name: "at rest", state: readyCluster},
		{name: "under way", state: upgradingTo131, reason: SpecUnderWay,
			msg: "the upgrade to it is still under way: ControlPlaneReady: Etcd is not ready", next: "follow it with `upgrade-console watch --cluster mgmt`"},
		{name: "not observed", state: func() *ClusterState {
			s := upgradingTo131()
			s.Cluster.Generation = 6
			return s
		}, reason: SpecUnderWay, msg: "EKS-A has not observed it yet (generation 6, observed 5)", next: "upgrade-console watch --cluster mgmt"},
		{name: "condition not reported", state: func() *ClusterState {
			s := readyCluster()
			s.Cluster.Conditions = s.Cluster.Conditions[:2]
			return s
		}, reason: SpecUnderWay, msg: "still under way: condition WorkersReady not reported yet"},
		{name: "failed", state: func() *ClusterState {
			s := upgradingTo131()
			s.Cluster.FailureReason, s.Cluster.FailureMessage = "UpgradeFailed", "etcd member did not join"
			return s
		}, reason: SpecFailed, msg: "EKS-A reports a failure (UpgradeFailed): etcd member did not join", next: "see the failure with `upgrade-console watch --cluster mgmt` and fix what it says"},
		{name: "paused by someone", state: func() *ClusterState {
			s := upgradingTo131()
			s.Cluster.Annotations = map[string]string{AnnotationEKSAPaused: "true"}
			return s
		}, reason: SpecPaused, msg: "EKS-A reconcile is paused", next: "`upgrade-console lock status --cluster mgmt`"},
		{name: "etcd rolled back", state: func() *ClusterState { return afterEtcdRollback("done") }, reason: SpecEtcdRollback,
			msg:  "etcd rollback put etcd back on its previous spec and keeps EKS-A reconcile paused",
			next: "find and fix why the new etcd member did not come up, then `upgrade-console lock clear paused --cluster mgmt`"},
		{name: "etcd rolled back, conditions all True", state: func() *ClusterState {
			s := afterEtcdRollback("done")
			s.Cluster.Conditions = readyCluster().Cluster.Conditions
			return s
		}, reason: SpecEtcdRollback, next: "lock clear paused --cluster mgmt"},
		{name: "etcd rollback running", state: func() *ClusterState { return afterEtcdRollback("running") }, reason: SpecEtcdRollback,
			msg: "is putting etcd back on its previous spec", next: "`upgrade-console etcd rollback --cluster mgmt`"},
		{name: "other namespace", state: func() *ClusterState {
			s := upgradingTo131()
			s.Cluster.Namespace = "ops"
			return s
		}, reason: SpecUnderWay, next: "`upgrade-console watch --cluster mgmt -n ops`"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := ClusterSpecStatus(c.state().Cluster, nil)
			if s == nil {
				t.Fatal("nil status")
			}
			if c.reason == "" {
				if !s.Reached || s.NotReached() || s.Reason != "" || s.Note() != "" {
					t.Errorf("%+v, want reached", s)
				}
				return
			}
			if s.Reached || !s.NotReached() || s.Reason != c.reason || !strings.Contains(s.Message, c.msg) || !strings.Contains(s.Next, c.next) {
				t.Errorf("%+v\nwant reason %s, message with %q, next with %q", s, c.reason, c.msg, c.next)
			}
		})
	}
}

// TestSpecStatusWordings: where the cluster has not reached its spec, the
// plan no longer says it runs it or is up to date; at rest (or unknown) it
// says what it said.
func TestSpecStatusWordings(t *testing.T) {
	none := []ComponentDiff{{Key: "eksa", Name: "EKS-A", OldVersion: "v0.21.2", NewVersion: "v0.21.2", Change: ChangeNone}}
	some := []ComponentDiff{{Key: "eksa", Name: "EKS-A", OldVersion: "v0.20.9", NewVersion: "v0.21.2", Change: ChangeMinor}}
	for _, s := range []*SpecStatus{nil, {Reached: true}} {
		if got := s.NothingToApply(); got != "the cluster already runs this spec: nothing to apply" {
			t.Errorf("%+v: %q", s, got)
		}
		if got := SummarizeChangesFor(none, s); got != "all components are up to date" {
			t.Errorf("%+v: %q", s, got)
		}
		if s.Note() != "" {
			t.Errorf("%+v: note %q", s, s.Note())
		}
	}
	s := ClusterSpecStatus(afterEtcdRollback("done").Cluster, nil)
	want := "the Cluster's spec is already this spec: nothing to apply; the cluster has not reached it (upgrade-console's etcd rollback put etcd back on its previous spec and keeps EKS-A reconcile paused): find and fix why the new etcd member did not come up, then `upgrade-console lock clear paused --cluster mgmt`"
	if got := s.NothingToApply(); got != want {
		t.Errorf("nothing to apply:\n got %q\nwant %q", got, want)
	}
	if got := SummarizeChangesFor(none, s); got != "no component changes from the Cluster's spec, which the cluster has not reached" {
		t.Errorf("summary %q", got)
	}
	if got, want := SummarizeChangesFor(some, s), SummarizeChanges(some); got != want {
		t.Errorf("summary of a change %q, want %q", got, want)
	}
	if got := s.Note(); got != "CURRENT is the Cluster's spec, which the cluster has not reached: "+s.Message {
		t.Errorf("note %q", got)
	}
}

// inPlaceStepFailed is an in-place upgrade to 1.31 whose second
// control-plane node's kubeadm step failed at failedAt (the demo's
// inplace-node-step-fails): EKS-A's Cluster reads as an upgrade under way
// (ControlPlaneReady False, InPlaceUpgradeInProgress), and nothing in EKS-A
// retries the step.
func inPlaceStepFailed(failedAt time.Time) *ClusterState {
	s := upgradingTo131()
	c := s.Cluster
	for i := range c.Conditions {
		if typ := c.Conditions[i].Type; typ == ConditionControlPlaneReady || typ == ConditionReady {
			c.Conditions[i] = Condition{Type: typ, Status: "False", Severity: SeverityInfo,
				Reason: "InPlaceUpgradeInProgress", Message: "Control plane nodes not up-to-date yet", LastTransitionTime: t0.Add(-19 * time.Minute)}
		}
	}
	s.Machines.At(4).NodeName = "mgmt-lvn8n"
	created := failedAt.Add(-2 * time.Minute)
	s.NodeUpgrades = ListOf(&NodeUpgrade{
		Meta: Meta{Name: "mgmt-cp-b-node-upgrader", CreationTimestamp: created}, Kind: KindNodeUpgrade,
		MachineName: "mgmt-cp-b",
		Conditions: Conditions{
			cond("UpgraderPodCreated", "True", "", "", created),
			cond("BinariesCopied", "True", "", "", created.Add(time.Minute)),
			cond("ContainerdUpgraded", "True", "", "", created.Add(time.Minute)),
			cond("CNIPluginsUpgraded", "True", "", "", created.Add(time.Minute)),
			{Type: "KubeadmUpgraded", Status: "False", Severity: SeverityError, Reason: "Container exited with a non-zero exit code, reason: Error", LastTransitionTime: failedAt},
			{Type: "KubeletUpgraded", Status: "False", Severity: SeverityInfo, Reason: "Container is waiting to be initialized", LastTransitionTime: created},
		},
	})
	return s
}

// TestSpecStatusOfAFailedInPlaceStep: the plan judges a failed in-place step
// by the waiters' rule (Judge, as watch and apply --wait do): once it has
// stayed failed for the grace, the upgrade has failed, and the plan says
// so with the step and `node retry`, not "still under way … follow it with
// watch" while the watch ends "failed" on the same cluster.
func TestSpecStatusOfAFailedInPlaceStep(t *testing.T) {
	if s := SpecStatusOf(nil, t0); s != nil {
		t.Errorf("no state: %+v, want nil", s)
	}
	if s := SpecStatusOf(&ClusterState{}, t0); s != nil {
		t.Errorf("no Cluster: %+v, want nil", s)
	}
	judged := func(s *ClusterState) Outcome {
		_, o := NewJudge().Observe(DeriveProgress(s, ProgressOptions{}, t0), t0)
		return o
	}

	// Failed 11 minutes ago: past the grace, the watch's outcome is failed.
	s := inPlaceStepFailed(t0.Add(-11 * time.Minute))
	if o := judged(s); o != OutcomeFailed {
		t.Fatalf("the fixture: the judge says %s, want failed", o)
	}
	if st := ClusterSpecStatus(s.Cluster, nil); st.Reason != SpecUnderWay {
		t.Fatalf("the fixture: the Cluster alone reads %+v, want under way", st)
	}
	st := SpecStatusOf(s, t0)
	if st == nil || st.Reached || !st.NotReached() || st.Reason != SpecFailed {
		t.Fatalf("%+v, want reason failed", st)
	}
	if want := "the upgrade to it failed: node mgmt-lvn8n in-place step KubeadmUpgraded failed 11m ago: Container exited with a non-zero exit code, reason: Error"; st.Message != want {
		t.Errorf("message %q\nwant    %q", st.Message, want)
	}
	if want := "`upgrade-console node retry mgmt-lvn8n --cluster mgmt` runs its steps again once the cause is fixed"; st.Next != want {
		t.Errorf("next %q\nwant %q", st.Next, want)
	}
	if strings.Contains(st.Message+st.Next, "under way") || strings.Contains(st.Next, "follow it") {
		t.Errorf("a failed upgrade read as one under way: %+v", st)
	}
	if want := "node mgmt-lvn8n in-place step KubeadmUpgraded failed 11m ago: Container exited with a non-zero exit code, reason: Error"; st.Failure() != want {
		t.Errorf("failure %q\nwant    %q", st.Failure(), want)
	}
	if got := st.Brief(); got != "the upgrade failed" {
		t.Errorf("brief %q", got)
	}
	if got := st.NothingToApply(); !strings.Contains(got, "the cluster has not reached it (the upgrade to it failed: node mgmt-lvn8n in-place step KubeadmUpgraded failed") ||
		!strings.HasSuffix(got, "): "+st.Next) {
		t.Errorf("nothing to apply %q", got)
	}

	// Failed 3 minutes ago: within the grace the watch has not called the
	// upgrade failed either; the plan says it is under way, held up by the
	// failed step, and names the retry (it said to follow it, as if it
	// would end without one).
	s = inPlaceStepFailed(t0.Add(-3 * time.Minute))
	if o := judged(s); o != OutcomeRunning {
		t.Fatalf("within the grace: the judge says %s, want running", o)
	}
	if st := SpecStatusOf(s, t0); st.Reason != SpecUnderWay || !strings.Contains(st.Next, "upgrade-console node retry mgmt-lvn8n --cluster mgmt") ||
		st.Failure() != "" || !strings.HasPrefix(st.HeldBy(), "node mgmt-lvn8n in-place step KubeadmUpgraded failed 3m ago") {
		t.Errorf("within the grace: %+v, want under way, held by the step, with its retry", st)
	}

	// What the Cluster says first stays first: EKS-A's failureMessage, a
	// pause, an etcd rollback; at rest, reached.
	s = inPlaceStepFailed(t0.Add(-11 * time.Minute))
	s.Cluster.FailureReason, s.Cluster.FailureMessage = "UpgradeFailed", "kubeadm upgrade failed"
	if st := SpecStatusOf(s, t0); st.Reason != SpecFailed || !strings.HasPrefix(st.Message, "EKS-A reports a failure (UpgradeFailed)") || st.Brief() != "EKS-A reports a failure" || st.Failure() != st.Message {
		t.Errorf("with a failureMessage: %+v", st)
	}
	s = inPlaceStepFailed(t0.Add(-11 * time.Minute))
	s.Cluster.Annotations = map[string]string{AnnotationEKSAPaused: "true"}
	if st := SpecStatusOf(s, t0); st.Reason != SpecPaused {
		t.Errorf("paused: %+v", st)
	}
	if st := SpecStatusOf(readyCluster(), t0); !st.Reached {
		t.Errorf("at rest: %+v", st)
	}
}
