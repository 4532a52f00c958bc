package model

import (
	"strings"
	"testing"
	"time"
)

// A failed step waited out through the grace is said again once a minute,
// with when it fails the upgrade: apply --wait and watch --plain printed
// nothing for the 10 minutes between the failure and the verdict.
func TestHoldNoticeSaysAFailureWaitedOutEachMinute(t *testing.T) {
	failedAt := t0.Add(-5 * time.Second)
	stall := Stall{Kind: KindNodeUpgrade, Name: "mgmt-md-0-a", Since: failedAt, Failed: true,
		Sentence: "node mgmt-md-0-a in-place step KubeadmUpgraded failed 5s ago: exit 1", Resume: "`upgrade-console node retry mgmt-md-0-a` runs its steps again"}
	p := Progress{Generation: 2, Stalls: []Stall{stall}}
	j := NewJudge()
	var n HoldNotice
	var said []string
	for now := t0; now.Before(t0.Add(12 * time.Minute)); now = now.Add(time.Second) {
		var out Outcome
		j, out = j.Observe(p, now)
		if line, _, ok := n.Next(j, p, now); ok {
			said = append(said, now.Sub(t0).String()+" "+line)
		}
		if out == OutcomeFailed {
			break
		}
	}
	// From 1m after the failure (55s after the first look), each minute,
	// up to the verdict at 10m: 9 lines.
	if len(said) != 9 {
		t.Fatalf("said %d times, want 9:\n%s", len(said), strings.Join(said, "\n"))
	}
	if want := "55s still failing after 1m: node mgmt-md-0-a in-place step KubeadmUpgraded failed 5s ago: exit 1; the upgrade fails at 10:09:55 UTC (in 9m) unless it clears first; `upgrade-console node retry mgmt-md-0-a` runs its steps again"; said[0] != want {
		t.Errorf("first line:\n%s\nwant\n%s", said[0], want)
	}
	if !strings.HasPrefix(said[8], "8m55s still failing after 9m:") || !strings.Contains(said[8], "(in 1m)") {
		t.Errorf("last line: %s", said[8])
	}
}

// Nothing failing, nothing said; a failure that clears starts over, and a
// failureMessage is said as the Cluster's.
func TestHoldNoticeStartsOverWhenTheFailureClears(t *testing.T) {
	j := NewJudge()
	var n HoldNotice
	look := func(p Progress, now time.Time) (string, bool) {
		j, _ = j.Observe(p, now)
		line, _, said := n.Next(j, p, now)
		return line, said
	}
	ok := Progress{Generation: 2}
	if line, said := look(ok, t0.Add(time.Hour)); said {
		t.Fatalf("nothing failing, said %q", line)
	}
	failing := Progress{Generation: 2, Failed: true, FailureMessage: "boom"}
	look(failing, t0)
	if line, said := look(failing, t0.Add(59*time.Second)); said {
		t.Errorf("within the first minute, said %q", line)
	}
	line, said := look(failing, t0.Add(time.Minute))
	if !said || !strings.Contains(line, "the Cluster reports a failure: boom; the upgrade fails at 10:10:00 UTC (in 9m)") {
		t.Errorf("at 1m: %v %q", said, line)
	}
	look(ok, t0.Add(90*time.Second))
	look(failing, t0.Add(2*time.Minute))
	if line, said := look(failing, t0.Add(2*time.Minute+30*time.Second)); said {
		t.Errorf("a new failure 30s old, said %q", line)
	}
	if line, said := look(failing, t0.Add(3*time.Minute)); !said || !strings.Contains(line, "still failing after 1m:") {
		t.Errorf("the new failure at 1m: %v %q", said, line)
	}
}

// The time left is rounded up, so that the two ages add up to the grace:
// looked at 1m1s after the failure, rounded down they read "after 1m …
// (in 8m)" of a 10-minute grace.
func TestHoldNoticeRoundsTheTimeLeftUp(t *testing.T) {
	p := Progress{Generation: 2, Failed: true, FailureMessage: "boom"}
	j, _ := NewJudge().Observe(p, t0)
	var n HoldNotice
	j, _ = j.Observe(p, t0.Add(61*time.Second))
	line, h, said := n.Next(j, p, t0.Add(61*time.Second))
	if !said || !strings.Contains(line, "still failing after 1m: the Cluster reports a failure: boom; the upgrade fails at 10:10:00 UTC (in 9m)") || !h.Until.Equal(t0.Add(10*time.Minute)) {
		t.Errorf("%v %q, until %s", said, line, h.Until)
	}
}

// Holding and the verdict share one rule: the failure it names is the one
// that fails the upgrade when its time comes.
func TestHoldingIsTheVerdictsFailure(t *testing.T) {
	late := Stall{Kind: KindNodeUpgrade, Name: "b", Since: t0, Failed: true, Sentence: "node b failed"}
	early := Stall{Kind: KindNodeUpgrade, Name: "a", Since: t0.Add(-3 * time.Minute), Failed: true, Sentence: "node a failed", Resume: "retry a"}
	p := Progress{Generation: 2, Stalls: []Stall{late, early}}
	j, out := NewJudge().Observe(p, t0)
	h, ok := j.Holding(p)
	if out != OutcomeRunning || !ok || h.What != "node a failed" || !h.Until.Equal(t0.Add(7*time.Minute)) {
		t.Fatalf("outcome %v, holding %v %+v", out, ok, h)
	}
	if j, out = j.Observe(p, h.Until.Add(-time.Second)); out != OutcomeRunning {
		t.Errorf("a second before the hold's end: %v", out)
	}
	if j, out = j.Observe(p, h.Until); out != OutcomeFailed || j.Reason() != "node a failed; retry a" {
		t.Errorf("at the hold's end: %v %q", out, j.Reason())
	}
	if _, ok := j.Holding(p); ok {
		t.Error("a decided outcome still holds a failure")
	}
}

// A CI job's rerun after apply --wait exited 4 on a failed step started its
// hold again from its own first look: "(the step began 10m ago)" and exit 5
// at a 20s --timeout, where the run before had called the same state
// failed. Timed from the pod's own record of the failure, a judge started
// at any time gives the same verdict on the same state, and its notice
// counts from that failure.
func TestAPodFailureIsTimedFromThePodsRecordWhoeverLooks(t *testing.T) {
	failedAt := t0.Add(-9*time.Minute - 30*time.Second)
	p := Progress{Generation: 2, Stalls: []Stall{{Kind: KindNodeUpgrade, Name: "n", Since: failedAt.Add(-2 * time.Second),
		Failed: true, SinceStep: true, FailedAt: failedAt, Sentence: "node n in-place step KubeadmUpgraded failed and runs again (the step began 9m32s ago): exit 1"}}}
	j, o := NewJudge().Observe(p, t0)
	if o != OutcomeRunning {
		t.Fatalf("9m30s after the failure: %v, want running", o)
	}
	var n HoldNotice
	if line, _, ok := n.Next(j, p, t0); !ok || !strings.HasPrefix(line, "still failing after 9m: ") || !strings.Contains(line, "fails at 10:00:30 UTC (in 30s)") {
		t.Errorf("a late judge's notice: %q %v, want it timed from the failure", line, ok)
	}
	if _, o = j.Observe(p, t0.Add(31*time.Second)); o != OutcomeFailed {
		t.Errorf("10m after the failure, to a judge that saw it 31s: %v, want failed", o)
	}
	if _, o = NewJudge().Observe(p, t0.Add(time.Minute)); o != OutcomeFailed {
		t.Errorf("a new judge's first look, 10m30s after the failure: %v, want failed", o)
	}
}

// The pod's times are to the second, and its runs' lengths vary: the
// estimate of a step's first failure moves by a second between looks.
// The notice said the same failure again at once ("still failing after
// 1m" at 13:29:37 and 13:29:49) as a new one.
func TestHoldNoticeSaysAFailureOnceAMinuteThoughItsTimeMoves(t *testing.T) {
	at := func(failedAt time.Time) Progress {
		return Progress{Generation: 2, Stalls: []Stall{{Kind: KindNodeUpgrade, Name: "n", Since: t0, Failed: true, SinceStep: true, FailedAt: failedAt, Sentence: "failed"}}}
	}
	j := NewJudge()
	var n HoldNotice
	said := 0
	for i := 0; i <= 120; i++ {
		now := t0.Add(time.Duration(i) * time.Second)
		p := at(t0.Add(time.Duration(i%2) * time.Second))
		j, _ = j.Observe(p, now)
		if _, _, ok := n.Next(j, p, now); ok {
			said++
		}
	}
	if said != 2 {
		t.Errorf("said %d times in 2 minutes, want 2 (at 1m and 2m)", said)
	}
}
