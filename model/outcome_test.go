package model

import (
	"strings"
	"testing"
	"time"
)

// A wait that ends while the cluster reports a failure the grace has not yet
// made an outcome says so ("timed out at failed: boom" read oddly, and as a
// failure already called).
func TestUnfinishedWithAFailureWithinTheGrace(t *testing.T) {
	p := Progress{Failed: true, FailureMessage: "boom", Summary: "failed: boom", Current: PhaseFailed}
	want := "timed out while the cluster reported a failure not yet held long enough to fail the upgrade: boom"
	if got := (Judge{}).Unfinished("timed out", p, t0); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// The outcome of a finished etcd rollback names the command that resumes
// EKS-A as it can be pasted: without --cluster it was a wrong command line
// (exit 2).
func TestRolledBackOutcomeNamesTheClusterToResume(t *testing.T) {
	for _, tc := range []struct {
		flags, want string
	}{
		{"--cluster mgmt -n fleet", "`upgrade-console lock clear paused --cluster mgmt -n fleet` resumes it"},
		{"", "`upgrade-console lock clear paused` resumes it"},
	} {
		p := Progress{Generation: 2, ClusterFlags: tc.flags, EtcdRollback: &EtcdRollbackRecord{Phase: "done", By: "ops"}}
		j, out := NewJudge().Observe(p, t0)
		if out != OutcomeFailed || !strings.HasSuffix(j.Reason(), tc.want) {
			t.Errorf("flags %q: outcome %v %q, want failed ending %q", tc.flags, out, j.Reason(), tc.want)
		}
	}
}

// A cluster whose etcd was rolled back is Ready on its old version and meets
// EKS-A's rule: it stays failed, where it read as done once the rule had
// held its 5 s.
func TestRolledBackClusterMeetingTheRuleStaysFailed(t *testing.T) {
	s := &ClusterState{Cluster: &EKSACluster{Meta: Meta{Name: "mgmt", Namespace: "default", Generation: 2, Annotations: map[string]string{AnnotationEKSAPaused: "true",
		AnnotationEtcdRollbackRecord: `{"phase":"done","newMachine":"mgmt-etcd-x","by":"ops"}`}}, ObservedGeneration: 2,
		Conditions: Conditions{{Type: ConditionControlPlaneReady, Status: "True"}, {Type: "DefaultCNIConfigured", Status: "True"},
			{Type: "WorkersReady", Status: "True"}, {Type: ConditionReady, Status: "True"}}}}
	j := NewJudge()
	now := t0
	for i := 0; i < 4; i++ {
		p := DeriveProgress(s, ProgressOptions{}, now)
		if i == 0 && !p.Complete {
			t.Fatal("the fixture does not meet the rule")
		}
		var out Outcome
		if j, out = j.Observe(p, now); out != OutcomeFailed {
			t.Fatalf("after %s: outcome %v, want failed", now.Sub(t0), out)
		}
		// Its summary and its confirmation say the same, where they read
		// "confirming it holds for 5s" for ever beside the failure.
		if sum := j.Summary(p); !strings.HasPrefix(sum, "failed: etcd was rolled back") || !j.Confirming().IsZero() {
			t.Fatalf("after %s: summary %q, confirming since %s", now.Sub(t0), sum, j.Confirming())
		}
		now = now.Add(3 * time.Second)
	}
}
