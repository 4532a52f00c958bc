package model

import (
	"strings"
	"testing"
)

// TestClusterSpecStatus: the live plan's current side is the Cluster's spec;
// whether the cluster has reached it is EKS-A's completion rule, and an etcd
// rollback (its record with the pause) means it has not, whatever the
// conditions say.
func TestClusterSpecStatus(t *testing.T) {
	if s := ClusterSpecStatus(nil); s != nil || s.NotReached() {
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
			s := ClusterSpecStatus(c.state().Cluster)
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
	s := ClusterSpecStatus(afterEtcdRollback("done").Cluster)
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
