package report

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/upgrade-console/upgrade-console/model"
)

// failedStep is the rollout with a worker's in-place step failed at t0
// (container exited non-zero), as EKS-A leaves it: nothing retries it.
func failedStep() *model.ClusterState {
	s := etcdRollout(2)
	failed := cond("BinariesCopied", "False", model.SeverityError, "Container exited with a non-zero exit code, reason: Error", "")
	failed.LastTransitionTime = t0
	s.NodeUpgrades = model.ListOf(&model.NodeUpgrade{Meta: meta("mgmt-md-0-0000-node-upgrader"), Kind: model.KindNodeUpgrade,
		MachineName: "mgmt-md-0-0000", KubernetesVersion: "v1.31.14-eks-1-31-47",
		Conditions: model.Conditions{cond("UpgraderPodCreated", "True", "", "", ""), failed}})
	return s
}

// watching runs Watch on a fake clock; the test sends snapshots and moves
// the clock, then ends it with stop.
type watching struct {
	ch   chan *model.ClusterState
	out  *syncBuffer
	clk  *clocktesting.FakeClock
	stop context.CancelFunc
	done chan Result
	// returned closes when Watch returns: a send after it has no taker, and
	// blocked the test until the package's timeout instead of failing it.
	returned chan struct{}
}

func startWatch(t *testing.T, opts WatchOptions) *watching {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &watching{ch: make(chan *model.ClusterState), out: &syncBuffer{}, clk: clocktesting.NewFakeClock(t0), stop: cancel, done: make(chan Result, 1), returned: make(chan struct{})}
	opts.Out, opts.Clock = w.out, w.clk
	go func() {
		r, _ := WatchResult(ctx, w.ch, opts)
		w.done <- r
		close(w.returned)
	}()
	t.Cleanup(cancel)
	return w
}

// send hands a snapshot over and waits until Watch has taken it in; once
// Watch has returned it sends nothing (the test's result says how it
// ended).
func (w *watching) send(s *model.ClusterState) {
	for range 2 { // the second receive proves the first was processed
		select {
		case w.ch <- s:
		case <-w.returned:
			return
		}
	}
}

// advance moves the clock a second at a time, each tick judged.
func (w *watching) advance(t *testing.T, d time.Duration) {
	t.Helper()
	for end := w.clk.Now().Add(d); w.clk.Now().Before(end); {
		w.clk.Step(time.Second)
		w.send(nil) // a nil snapshot is ignored, and proves the tick was judged
	}
}

func (w *watching) result(t *testing.T) Result {
	t.Helper()
	select {
	case r := <-w.done:
		return r
	case <-time.After(10 * time.Second):
		t.Fatalf("Watch did not return:\n%s", w.out.String())
		return Result{}
	}
}

// untilEnded moves the clock a second at a time until Watch returns, or
// the clock reaches limit.
func (w *watching) untilEnded(t *testing.T, limit time.Time) Result {
	t.Helper()
	for !w.ended() && w.clk.Now().Before(limit) {
		w.clk.Step(time.Second)
		select {
		case w.ch <- nil:
		case r := <-w.done:
			w.done <- r
		}
	}
	return w.result(t)
}

func (w *watching) ended() bool {
	select {
	case r := <-w.done:
		w.done <- r
		return true
	default:
		return false
	}
}

// An in-place step that failed and stays failed fails the upgrade once the
// grace has passed (it was only a stall line, and the watch ran for ever),
// and the outcome says what gets the upgrade past it.
func TestWatchFailsOnAStepThatStaysFailed(t *testing.T) {
	w := startWatch(t, WatchOptions{ExitOnDone: true, FailureGrace: time.Minute})
	w.send(failedStep())
	w.advance(t, 50*time.Second)
	if w.ended() {
		t.Fatalf("failed before the grace passed:\n%s", w.out.String())
	}
	r := w.untilEnded(t, t0.Add(2*time.Minute))
	out := w.out.String()
	if r.Outcome != Failed || w.clk.Now().Before(t0.Add(time.Minute)) {
		t.Fatalf("outcome %s at %s, want failed once the step stayed failed a minute:\n%s", r.Outcome, w.clk.Now().Sub(t0), out)
	}
	requireAll(t, out, "outcome: failed: node mgmt-md-0-0000 in-place step BinariesCopied failed 1m ago: ",
		"`upgrade-console node retry mgmt-md-0-0000 --cluster mgmt` runs its steps again once the cause is fixed")
}

func requireAll(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// A failureMessage fails the watch only once it has stayed for the grace,
// as it fails apply --wait: a transient one (EKS-A clears it on the next
// good reconcile) no longer fails a CI watch at once.
func TestWatchFailureMessageMustStay(t *testing.T) {
	failing := etcdRollout(2)
	failing.Cluster.FailureMessage, failing.Cluster.FailureReason = "boom", "MachineConfigInvalid"
	cleared := clone(failing)
	cleared.Cluster.FailureMessage, cleared.Cluster.FailureReason = "", ""
	w := startWatch(t, WatchOptions{ExitOnDone: true, FailureGrace: time.Minute})
	w.send(failing)
	w.advance(t, 40*time.Second)
	w.send(cleared)
	w.advance(t, 40*time.Second)
	again := clone(failing)
	w.send(again)
	w.advance(t, 40*time.Second)
	if w.ended() {
		t.Fatalf("a failureMessage that did not stay a minute failed the watch:\n%s", w.out.String())
	}
	r := w.untilEnded(t, t0.Add(5*time.Minute))
	if r.Outcome != Failed || !strings.Contains(w.out.String(), "outcome: failed: the Cluster reports a failure (for 1m): boom") {
		t.Fatalf("outcome %s:\n%s", r.Outcome, w.out.String())
	}
	if at := w.clk.Now().Sub(t0); at < 140*time.Second {
		t.Errorf("failed %s in, before the second failureMessage stayed a minute", at)
	}
}

// Stopped or timed out on a cluster at rest, the watch says no upgrade was
// under way (not "before the upgrade completed").
func TestWatchEndedAtRestSaysSo(t *testing.T) {
	w := startWatch(t, WatchOptions{ExitOnDone: true})
	w.send(healthy())
	w.advance(t, 2*time.Second) // inside the completion gate's hold
	w.stop()
	r := w.result(t)
	const rest = "with the cluster at rest: no upgrade was under way"
	if r.Outcome != Running || !r.AtRest || !strings.Contains(w.out.String(), "outcome: stopped "+rest) {
		t.Errorf("stopped at rest: %+v\n%s", r, w.out.String())
	}
	if got := w.out.String(); !strings.Contains(got, "upgrade: none under way") || strings.Contains(got, "upgrade: every completion milestone met;") {
		t.Errorf("the first look at a cluster at rest reads as a completion:\n%s", got)
	}
	if got := r.Cut("--timeout 3s passed"); got != "--timeout 3s passed "+rest {
		t.Errorf("cut at rest = %q", got)
	}

	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(300*time.Millisecond))
	defer cancel()
	out := &syncBuffer{}
	ch := make(chan *model.ClusterState, 1)
	ch <- healthy()
	r, err := WatchResult(ctx, ch, WatchOptions{Out: out, Clock: clocktesting.NewFakeClock(t0)})
	if err != nil || r.Outcome != TimedOut || !r.AtRest || !strings.Contains(out.String(), "outcome: timed out "+rest) {
		t.Errorf("timed out at rest: %+v %v\n%s", r, err, out.String())
	}

	// Under way, it is cut short, and says where it stood.
	w = startWatch(t, WatchOptions{ExitOnDone: true})
	w.send(etcdRollout(1))
	w.stop()
	r = w.result(t)
	if r.AtRest || !strings.Contains(w.out.String(), "outcome: stopped at etcd: ") || r.Cut("stopped") != "stopped before the upgrade completed" {
		t.Errorf("stopped mid-upgrade: %+v\n%s", r, w.out.String())
	}
}

// While the gate holds, the milestones are met, not done; ended there, the
// wait says it was confirming.
func TestJudgeWordsTheHold(t *testing.T) {
	j := NewJudge()
	var o Outcome
	j, _ = j.Observe(*derive(etcdRollout(1)), t0)
	p := *derive(healthy())
	j, o = j.Observe(p, t0.Add(time.Second))
	if o != Running || j.AtRest() {
		t.Fatalf("outcome %s, at rest %v", o, j.AtRest())
	}
	if got := j.Summary(p); got != "every completion milestone met; confirming it holds for 5s" {
		t.Errorf("holding: %q", got)
	}
	if got := j.Unfinished("timed out", p, t0.Add(3*time.Second)); got != "timed out while confirming completion: every milestone was met 2s ago" {
		t.Errorf("timed out holding: %q", got)
	}
	j, o = j.Observe(p, t0.Add(6*time.Second))
	if o != Done || j.Summary(p) != "done: every completion milestone met" || !j.Confirming().IsZero() {
		t.Errorf("after the hold: %s %q", o, j.Summary(p))
	}

	// A cluster at rest has no upgrade to be done with.
	j, _ = NewJudge().Observe(p, t0)
	if got := j.Summary(p); !j.AtRest() || got != "no upgrade under way: cluster at EKS-A v0.21.1, Kubernetes 1.31" {
		t.Errorf("at rest: %v %q", j.AtRest(), got)
	}
	// A progress without the Cluster (lists syncing) says nothing either way.
	j, _ = NewJudge().Observe(model.DeriveProgress(&model.ClusterState{}, model.ProgressOptions{}, t0), t0)
	j, _ = j.Observe(p, t0)
	if !j.AtRest() {
		t.Error("a progress without the Cluster counted as a move")
	}
}

// An etcd rollback is the operator ending the upgrade: EKS-A stays paused and
// nothing goes on, so a waiter ends failed at once instead of following
// until its timeout.
func TestJudgeEndsOnAFinishedEtcdRollback(t *testing.T) {
	p := *derive(etcdRollout(1))
	rec := model.EtcdRollbackRecord{Phase: "running", By: "ops@bastion", StartedAt: t0}
	p.EtcdRollback = &rec
	j, o := NewJudge().Observe(p, t0)
	if o != Running {
		t.Fatalf("rollback running: %s, want running", o)
	}
	rec.Phase = "done"
	j, o = j.Observe(p, t0.Add(time.Second))
	if o != Failed || !strings.Contains(j.Reason(), "rolled back by upgrade-console (ops@bastion)") || !strings.Contains(j.Reason(), "lock clear paused") {
		t.Errorf("rollback done: %s %q, want failed naming the rollback and the way to resume", o, j.Reason())
	}
}

// A watch that goes on after its outcome (no --exit-on-done) reports the
// next one: done at rest, then an upgrade, then done again. It said nothing
// when the upgrade completed.
func TestWatchReportsEachOutcome(t *testing.T) {
	w := startWatch(t, WatchOptions{})
	w.send(healthy())
	w.advance(t, 6*time.Second)
	w.send(etcdRollout(1))
	w.advance(t, 2*time.Second)
	w.send(healthy())
	w.advance(t, 6*time.Second)
	w.stop()
	w.result(t)
	got := w.out.String()
	if n := strings.Count(got, "outcome: done"); n != 2 || !strings.Contains(got, "outcome: done (the cluster was at rest") {
		t.Errorf("%d done outcomes, want the one at rest and the upgrade's:\n%s", n, got)
	}
}

// A watch on an API server that stopped answering sees nothing change and
// hears no error: done is reported only once the API server confirms the
// snapshot, and the hold starts again each time it does not.
func TestWatchDoneWaitsForTheAPIServer(t *testing.T) {
	var mu sync.Mutex
	frozen, asked := true, 0
	confirm := func(ctx context.Context, s *model.ClusterState) error {
		mu.Lock()
		defer mu.Unlock()
		asked++
		if frozen {
			return errors.New("no answer within 10s")
		}
		return nil
	}
	w := startWatch(t, WatchOptions{ExitOnDone: true, Confirm: confirm})
	w.send(etcdRollout(2))
	w.send(healthy())
	for end := w.clk.Now().Add(20 * time.Second); w.clk.Now().Before(end) && !w.ended(); {
		w.clk.Step(time.Second)
		select {
		case w.ch <- nil:
		case r := <-w.done:
			w.done <- r
		}
	}
	if w.ended() {
		t.Fatalf("ended with the API server not answering:\n%s", w.out.String())
	}
	mu.Lock()
	n := asked
	frozen = false
	mu.Unlock()
	if n < 2 {
		t.Errorf("asked %d times in 20s of the rule holding, want one after each 5s hold", n)
	}
	if got := w.out.String(); strings.Contains(got, "outcome: ") || !strings.Contains(got, "upgrade: every completion milestone met, but the API server did not confirm it (no answer within 10s)") {
		t.Errorf("with the API server not answering:\n%s", got)
	}
	// Said once: the same refusal (a 403 does not pass) was said again
	// after every 5 s hold until the timeout.
	if got := w.out.String(); strings.Count(got, "did not confirm it") != 1 {
		t.Errorf("the unconfirmed completion said %d times in %d tries, want once:\n%s", strings.Count(got, "did not confirm it"), n, got)
	}
	if o := w.untilEnded(t, w.clk.Now().Add(10*time.Second)); o.Outcome != Done {
		t.Errorf("outcome %s once confirmed:\n%s", o.Outcome, w.out.String())
	}
}

// The outcome line is stamped when the outcome is decided: after the API
// server confirmed it, which may take seconds. It was stamped with the time
// the look began ("05:12:13Z outcome: done", printed at 05:12:21).
func TestWatchStampsTheOutcomeWhenConfirmed(t *testing.T) {
	var mu sync.Mutex
	var confirmedAt time.Time
	var w *watching
	confirm := func(ctx context.Context, s *model.ClusterState) error {
		w.clk.Step(8 * time.Second) // the API server takes its time
		mu.Lock()
		confirmedAt = w.clk.Now()
		mu.Unlock()
		return nil
	}
	w = startWatch(t, WatchOptions{ExitOnDone: true, Confirm: confirm})
	w.send(etcdRollout(2))
	w.send(healthy())
	if o := w.untilEnded(t, w.clk.Now().Add(time.Minute)); o.Outcome != Done {
		t.Fatalf("outcome %s:\n%s", o.Outcome, w.out.String())
	}
	mu.Lock()
	at := confirmedAt
	mu.Unlock()
	var stamp time.Time
	for _, l := range strings.Split(w.out.String(), "\n") {
		if ts, rest, ok := strings.Cut(l, " "); ok && strings.HasPrefix(rest, "outcome: done") {
			var err error
			if stamp, err = time.Parse(time.RFC3339, ts); err != nil {
				t.Fatal(err)
			}
		}
	}
	if stamp.IsZero() || stamp.Before(at.Truncate(time.Second)) {
		t.Errorf("outcome stamped %s, before the API server confirmed it at %s:\n%s", stamp.Format(time.RFC3339), at.Format(time.RFC3339), w.out.String())
	}
}

// A failed step waited out through the grace is said again each minute,
// with when it fails the upgrade: the watch printed nothing between the
// failure and the verdict 10 minutes later.
func TestWatchSaysAFailureWaitedOutEachMinute(t *testing.T) {
	w := startWatch(t, WatchOptions{})
	w.send(failedStep())
	w.advance(t, 3*time.Minute+30*time.Second)
	w.stop()
	w.result(t)
	var held []string
	for _, l := range strings.Split(w.out.String(), "\n") {
		if strings.Contains(l, "upgrade: still failing") {
			held = append(held, l)
		}
	}
	if len(held) != 3 || !strings.Contains(held[0], "still failing after 1m: node mgmt-md-0-0000 in-place step BinariesCopied failed") ||
		!strings.Contains(held[0], "the upgrade fails at 12:10:00 UTC (in 9m) unless it clears first; `upgrade-console node retry") ||
		!strings.Contains(held[2], "still failing after 3m:") {
		t.Errorf("the failure said again %d times, want 3 (at 1m, 2m, 3m):\n%s", len(held), w.out.String())
	}
}

// The notice is worded from a fresh derivation: between two, the step's
// age is up to 5 s old, and the line read "still failing after 1m: … failed
// 55s ago".
func TestWatchHoldNoticeIsWordedFresh(t *testing.T) {
	s := failedStep()
	s.NodeUpgrades.At(0).Conditions[1].LastTransitionTime = t0.Add(-2 * time.Second)
	w := startWatch(t, WatchOptions{})
	w.send(s)
	w.advance(t, 70*time.Second)
	w.stop()
	w.result(t)
	var held string
	for _, l := range strings.Split(w.out.String(), "\n") {
		if strings.Contains(l, "upgrade: still failing") {
			held = l
			break
		}
	}
	// Said when due, a minute after the failure, not at the next
	// derivation.
	if !strings.Contains(held, "12:00:58Z upgrade: still failing after 1m: node mgmt-md-0-0000 in-place step BinariesCopied failed 1m ago") {
		t.Errorf("notice %q:\n%s", held, w.out.String())
	}
}
