package model

import (
	"strings"
	"testing"
	"time"
)

func metNames(ms []Milestone) (names []string, met []bool) {
	for _, m := range ms {
		names = append(names, m.Name)
		met = append(met, m.Met)
	}
	return names, met
}

func TestCompletionOrderAndMilestones(t *testing.T) {
	tests := []struct {
		name     string
		mutate   func(c *EKSACluster)
		wantMet  []bool
		complete bool
		// wantMsg is the message of the first unmet milestone.
		wantMsg string
	}{
		{name: "all true", mutate: func(*EKSACluster) {}, wantMet: []bool{true, true, true, true, true, true}, complete: true},
		{name: "stale hides every later condition", mutate: func(c *EKSACluster) { c.Generation = 9 },
			wantMet: []bool{false, false, false, false, false, false}, wantMsg: "status not yet observed (generation 9, observed 4)"},
		{name: "failureMessage", mutate: func(c *EKSACluster) { c.FailureMessage = "boom" },
			wantMet: []bool{true, false, false, false, false, false}, wantMsg: "boom"},
		{name: "later milestone not met before an earlier one", mutate: func(c *EKSACluster) {
			c.Conditions[0] = Condition{Type: ConditionControlPlaneReady, Status: "False", Reason: "RollingUpgradeInProgress", Message: "Control plane nodes not up-to-date yet"}
		}, wantMet: []bool{true, true, false, false, false, false}, wantMsg: "Control plane nodes not up-to-date yet"},
		{name: "CNI", mutate: func(c *EKSACluster) {
			c.Conditions[1] = Condition{Type: ConditionDefaultCNIConfigured, Status: "False", Reason: "DefaultCNIUpgradeInProgressReason"}
		}, wantMet: []bool{true, true, true, false, false, false}, wantMsg: "DefaultCNIConfigured is False"},
		{name: "missing condition", mutate: func(c *EKSACluster) { c.Conditions = c.Conditions[:2] },
			wantMet: []bool{true, true, true, true, false, false}, wantMsg: "condition WorkersReady not reported yet"},
		{name: "Ready last", mutate: func(c *EKSACluster) { c.Conditions[3].Status = "Unknown" },
			wantMet: []bool{true, true, true, true, true, false}, wantMsg: "Ready is Unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := readyCluster().Cluster
			tt.mutate(c)
			ms, complete := Completion(c)
			names, met := metNames(ms)
			wantNames := []string{MilestoneGenerationObserved, MilestoneNoFailure, MilestoneControlPlaneReady, MilestoneDefaultCNI, MilestoneWorkersReady, MilestoneReady}
			if len(names) != len(wantNames) {
				t.Fatalf("milestones = %v", names)
			}
			for i := range wantNames {
				if names[i] != wantNames[i] || met[i] != tt.wantMet[i] {
					t.Errorf("milestone %d = %s met=%v, want %s met=%v", i, names[i], met[i], wantNames[i], tt.wantMet[i])
				}
			}
			if complete != tt.complete {
				t.Errorf("complete = %v", complete)
			}
			if !complete && firstUnmet(ms).Message != tt.wantMsg {
				t.Errorf("first unmet message = %q, want %q", firstUnmet(ms).Message, tt.wantMsg)
			}
		})
	}
}

func TestCompletionCNIUnmanagedDropsMilestone(t *testing.T) {
	c := readyCluster().Cluster
	c.CiliumManaged = false
	c.Conditions[1].Status = "False" // ignored: not managed
	ms, complete := Completion(c)
	if !complete || len(ms) != 5 {
		t.Fatalf("complete=%v milestones=%v", complete, ms)
	}
}

// kindnetd is managed by EKS-A as Cilium is (CNIConfig.IsManaged): the
// rule waited for no DefaultCNIConfigured on a kindnetd cluster.
func TestCompletionKindnetdKeepsTheCNIMilestone(t *testing.T) {
	c := readyCluster().Cluster
	c.CiliumManaged, c.Kindnetd = false, true
	c.Conditions[1].Status = "False"
	ms, complete := Completion(c)
	if complete || len(ms) != 6 {
		t.Fatalf("complete=%v milestones=%v", complete, ms)
	}
}

func TestCompletionNilCluster(t *testing.T) {
	ms, complete := Completion(nil)
	if complete || ms[0].Met || ms[len(ms)-1].Message != "waiting for "+MilestoneGenerationObserved {
		t.Fatalf("nil cluster: %+v", ms)
	}
}

func TestCompletionGate(t *testing.T) {
	done := Progress{Complete: true}
	g := CompletionGate{Snapshots: 2, Hold: 5 * time.Second}
	g, ok := g.Observe(done, t0)
	if ok || g.Remaining(t0) != 5*time.Second {
		t.Fatalf("first snapshot: ok=%v remaining=%s", ok, g.Remaining(t0))
	}
	g, ok = g.Observe(done, t0.Add(2*time.Second))
	if ok {
		t.Fatal("done before the hold passed")
	}
	// A miss resets the gate.
	g, _ = g.Observe(Progress{}, t0.Add(3*time.Second))
	if g.Remaining(t0.Add(3*time.Second)) != 0 {
		t.Fatal("miss did not reset")
	}
	g, _ = g.Observe(done, t0.Add(4*time.Second))
	if _, ok = g.Observe(done, t0.Add(8*time.Second)); ok {
		t.Fatal("done 4s into a 5s hold")
	}
	if _, ok = g.Observe(done, t0.Add(9*time.Second)); !ok {
		t.Fatal("not done after the hold")
	}
	// The default gate re-observing one snapshot after the hold is enough.
	d := DefaultCompletionGate()
	d, _ = d.Observe(done, t0)
	if _, ok := d.Observe(done, t0.Add(d.Remaining(t0))); !ok {
		t.Fatal("default gate not done after Remaining")
	}
}

// The count of snapshots holds on its own, with no hold time: a gate asked
// for three consecutive snapshots (the CLI counts polls so) said done on the
// first one that met the rule, before any controller could flip it back. A
// miss starts the count again.
func TestCompletionGateCountsSnapshots(t *testing.T) {
	done := Progress{Complete: true}
	g := CompletionGate{Snapshots: 3}
	for i, tc := range []struct {
		p    Progress
		want bool
	}{
		{done, false},
		{done, false},
		{Progress{}, false}, // a miss
		{done, false},
		{done, false},
		{done, true},
		{done, true},
	} {
		var ok bool
		g, ok = g.Observe(tc.p, t0.Add(time.Duration(i)*time.Second))
		if ok != tc.want {
			t.Fatalf("snapshot %d (complete %t): done %t, want %t", i+1, tc.p.Complete, ok, tc.want)
		}
	}
}

// apply --wait said "done" 5 s after the connection to the API server was
// lost: the hold counted a time the console could see nothing. Seen blind,
// the rule does not hold; the hold starts again once it is seen live.
func TestJudgeDoesNotConfirmCompletionThroughALostConnection(t *testing.T) {
	done := Progress{Generation: 2, Complete: true}
	blind := done
	blind.Blind = true
	j := NewJudgeWith(JudgeOptions{Applied: true})
	var o Outcome
	j, _ = j.Observe(done, t0)
	for s := 1; s <= 20; s++ {
		if j, o = j.Observe(blind, t0.Add(time.Duration(s)*time.Second)); o != OutcomeRunning {
			t.Fatalf("%ds into a lost connection: outcome %s, want running", s, o)
		}
	}
	if got := j.Summary(blind); strings.HasPrefix(got, "done") || strings.Contains(got, "confirming") {
		t.Errorf("summary while blind %q", got)
	}
	back := t0.Add(21 * time.Second)
	if j, o = j.Observe(done, back); o != OutcomeRunning {
		t.Fatalf("outcome %s as soon as the connection is back, want the hold first", o)
	}
	if _, o = j.Observe(done, back.Add(DefaultCompletionGate().Hold)); o != OutcomeDone {
		t.Errorf("outcome %s after the hold seen live, want done", o)
	}
}

// The snapshot of a lost connection says so.
func TestDeriveProgressIsBlindWhileReconnecting(t *testing.T) {
	s := readyCluster()
	s.Connection = Reconnecting
	p := DeriveProgress(s, ProgressOptions{}, t0)
	if !p.Blind || !strings.Contains(p.Summary, "connection lost") {
		t.Errorf("progress blind %t, summary %q", p.Blind, p.Summary)
	}
	s.Connection = Live
	if p := DeriveProgress(s, ProgressOptions{}, t0); p.Blind {
		t.Error("blind while live")
	}
}
