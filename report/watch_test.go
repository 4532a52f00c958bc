package report

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/upgrade-console/upgrade-console/model"
)

// expiringCtx is a context that ends by its deadline when the test says
// so (watch --timeout passing), whatever the clocks read.
type expiringCtx struct {
	context.Context
	done chan struct{}
	once sync.Once
}

func newExpiringCtx() *expiringCtx {
	return &expiringCtx{Context: context.Background(), done: make(chan struct{})}
}

func (c *expiringCtx) expire()                     { c.once.Do(func() { close(c.done) }) }
func (c *expiringCtx) Done() <-chan struct{}       { return c.done }
func (c *expiringCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *expiringCtx) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// startTimedWatch is startWatch whose stop is the deadline passing.
func startTimedWatch(t *testing.T, opts WatchOptions) *watching {
	t.Helper()
	ctx := newExpiringCtx()
	w := &watching{ch: make(chan *model.ClusterState), out: &syncBuffer{}, clk: clocktesting.NewFakeClock(t0), stop: ctx.expire, done: make(chan Result, 1)}
	opts.Out, opts.Clock = w.out, w.clk
	go func() {
		r, _ := WatchResult(ctx, w.ch, opts)
		w.done <- r
	}()
	t.Cleanup(ctx.expire)
	return w
}

// lastLine is the last line a watch printed.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}

// --timeout passing ends a watch without --exit-on-done as it ends one with
// it: 5 unless the outcome was reached first. A cluster at rest is judged
// done within seconds, and the watch went on: at the timeout it returned
// that done, and the command exited 0, printing nothing more; a failure the
// watch had printed was returned as an outcome the command read only with
// --exit-on-done (exit 0 too). Now a timeout at rest says so and times out
// (5), a failure stays failed (4), and an upgrade the watch saw complete
// stays done (0).
func TestWatchTimeoutWithoutExitOnDone(t *testing.T) {
	const rest = "outcome: timed out with the cluster at rest: no upgrade was under way"
	t.Run("at rest", func(t *testing.T) {
		w := startTimedWatch(t, WatchOptions{})
		w.send(healthy())
		w.advance(t, 8*time.Second)
		if got := w.out.String(); !strings.Contains(got, "outcome: done (the cluster was at rest") {
			t.Fatalf("no outcome at rest yet:\n%s", got)
		}
		w.stop()
		r := w.result(t)
		if r.Outcome != TimedOut || !r.Deadline || !r.AtRest {
			t.Errorf("result %+v, want timed out at rest", r)
		}
		if got := lastLine(w.out.String()); !strings.HasSuffix(got, rest) {
			t.Errorf("last line %q, want %q:\n%s", got, rest, w.out.String())
		}
		if got := r.Cut("--timeout 8s passed"); got != "--timeout 8s passed with the cluster at rest: no upgrade was under way" {
			t.Errorf("cut %q", got)
		}
	})
	t.Run("failed", func(t *testing.T) {
		w := startTimedWatch(t, WatchOptions{FailureGrace: time.Minute})
		w.send(failedStep())
		w.advance(t, 70*time.Second)
		if got := w.out.String(); !strings.Contains(got, "outcome: failed: ") {
			t.Fatalf("not failed yet:\n%s", got)
		}
		w.stop()
		r := w.result(t)
		if r.Outcome != Failed || !r.Deadline {
			t.Errorf("result %+v, want the failure kept, and the deadline said", r)
		}
		if got := lastLine(w.out.String()); !strings.Contains(got, "outcome: failed: ") {
			t.Errorf("the failure is not the last word: %q", got)
		}
	})
	t.Run("upgraded", func(t *testing.T) {
		w := startTimedWatch(t, WatchOptions{})
		w.send(etcdRollout(2))
		w.send(healthy())
		w.advance(t, 8*time.Second)
		w.stop()
		r := w.result(t)
		if r.Outcome != Done || !r.Deadline || r.AtRest {
			t.Errorf("result %+v, want done, as seen before the deadline", r)
		}
		if got := lastLine(w.out.String()); !strings.HasSuffix(got, "outcome: done") {
			t.Errorf("last line %q, want the done outcome:\n%s", got, w.out.String())
		}
	})
	t.Run("under way", func(t *testing.T) {
		w := startTimedWatch(t, WatchOptions{})
		w.send(etcdRollout(2))
		w.advance(t, 3*time.Second)
		w.stop()
		r := w.result(t)
		if r.Outcome != TimedOut || !r.Deadline || r.AtRest || !strings.Contains(lastLine(w.out.String()), "outcome: timed out at etcd: ") {
			t.Errorf("result %+v:\n%s", r, w.out.String())
		}
	})
}

// A stop on a cluster at rest says so last, after the done at rest, as
// the README says of "a timeout or a stop"; the stop's result is unchanged.
func TestWatchStopAtRestSaysSoLast(t *testing.T) {
	w := startWatch(t, WatchOptions{})
	w.send(healthy())
	w.advance(t, 8*time.Second)
	w.stop()
	r := w.result(t)
	if r.Outcome != Done || r.Deadline || !r.AtRest {
		t.Errorf("result %+v", r)
	}
	if got := lastLine(w.out.String()); !strings.HasSuffix(got, "outcome: stopped with the cluster at rest: no upgrade was under way") {
		t.Errorf("last line %q:\n%s", got, w.out.String())
	}
}

// lost is s as the watcher delivers it once the API server is gone: the
// same objects, the connection reconnecting since lostAt.
func lost(s *model.ClusterState, lostAt time.Time) *model.ClusterState {
	s = withSources(s, model.Reconnecting, "127.0.0.1:6443: dial tcp 127.0.0.1:6443: connect: connection refused", nil)
	s.ConnectionSince = lostAt
	return s
}

// A watch that ends with the API server gone said "stopped with the
// cluster at rest: no upgrade was under way" of a cluster it had not seen
// for 76 s. It says the connection is lost, and when the cluster was last
// seen and how.
func TestWatchEndedWhileReconnectingSaysSo(t *testing.T) {
	const refused = "connection: reconnecting: 127.0.0.1:6443"
	lostAt := t0.Add(9 * time.Second)
	t.Run("stopped at rest", func(t *testing.T) {
		w := startWatch(t, WatchOptions{})
		w.send(withSources(healthy(), model.Live, "", nil))
		w.advance(t, 9*time.Second)
		w.send(lost(healthy(), lostAt))
		w.advance(t, 76*time.Second)
		w.stop()
		r := w.result(t)
		out := w.out.String()
		const want = "outcome: stopped while reconnecting to the API server; the connection was found lost at 12:00:09Z, the cluster then last known at rest"
		if got := lastLine(out); !strings.HasSuffix(got, want) || !strings.Contains(out, refused) {
			t.Errorf("last line %q, want %q:\n%s", got, want, out)
		}
		if strings.Contains(out, "stopped with the cluster at rest") {
			t.Errorf("states the cluster at rest, not seen since the connection was lost:\n%s", out)
		}
		if got := r.Cut("stopped"); got != "stopped while reconnecting to the API server; the connection was found lost at 12:00:09Z, the cluster then last known at rest" {
			t.Errorf("cut %q", got)
		}
		// Not a completion: --exit-on-done reads it as cut short (5).
		if r.Outcome == Done {
			t.Errorf("outcome done through a lost connection: %+v", r)
		}
	})
	t.Run("timed out under way", func(t *testing.T) {
		w := startTimedWatch(t, WatchOptions{ExitOnDone: true})
		w.send(withSources(etcdRollout(2), model.Live, "", nil))
		w.advance(t, 9*time.Second)
		w.send(lost(etcdRollout(2), lostAt))
		w.advance(t, 30*time.Second)
		w.stop()
		r := w.result(t)
		out := w.out.String()
		const want = "outcome: timed out while reconnecting to the API server; the connection was found lost at 12:00:09Z, the cluster then last known: etcd: "
		if got := lastLine(out); !strings.Contains(got, want) || strings.Contains(got, "connection lost: this is what") {
			t.Errorf("last line %q, want %q:\n%s", got, want, out)
		}
		if r.Outcome != TimedOut || !strings.HasPrefix(r.Cut("--timeout 40s passed"), "--timeout 40s passed while reconnecting to the API server; the connection was found lost at 12:00:09Z, the cluster then last known: etcd: ") {
			t.Errorf("result %+v, cut %q", r, r.Cut("--timeout 40s passed"))
		}
	})
	t.Run("back before the end", func(t *testing.T) {
		w := startWatch(t, WatchOptions{ExitOnDone: true})
		w.send(withSources(healthy(), model.Live, "", nil))
		w.advance(t, 2*time.Second)
		w.send(lost(healthy(), t0.Add(2*time.Second)))
		w.advance(t, 2*time.Second)
		w.send(withSources(healthy(), model.Live, "", nil))
		w.advance(t, 2*time.Second)
		w.stop()
		w.result(t)
		if got := lastLine(w.out.String()); !strings.HasSuffix(got, "outcome: stopped with the cluster at rest: no upgrade was under way") {
			t.Errorf("last line %q:\n%s", got, w.out.String())
		}
	})
}

// The words of a watch ended while reconnecting, as the dashboard uses them
// too: the time gets its date when it is not today's.
func TestReconnectingWords(t *testing.T) {
	for _, tc := range []struct {
		at   time.Time
		seen string
		want string
	}{
		{t0, seenAtRest, " while reconnecting to the API server; the connection was found lost at 12:00:00Z, the cluster then last known at rest"},
		{t0, "etcd: 1/3 members upgraded", " while reconnecting to the API server; the connection was found lost at 12:00:00Z, the cluster then last known: etcd: 1/3 members upgraded"},
		{t0, "", " while reconnecting to the API server; the connection was found lost at 12:00:00Z"},
		{t0.Add(-24 * time.Hour), "", " while reconnecting to the API server; the connection was found lost at 2026-11-20T12:00:00Z"},
		{time.Time{}, "", " while reconnecting to the API server"},
		{time.Time{}, seenAtRest, " while reconnecting to the API server; the cluster was last known at rest"},
	} {
		if got := ReconnectingWords(tc.at, tc.seen, t0.Add(time.Minute)); got != tc.want {
			t.Errorf("ReconnectingWords(%s, %q) = %q, want %q", tc.at, tc.seen, got, tc.want)
		}
	}
}

// A watch that did not run for 40 minutes (Ctrl-Z, SIGSTOP, a laptop asleep)
// derived its old cache at the new time on its first tick: "stalled: … for
// 40m" and a stale lock, taken back a second later when the informers
// caught up. It says it resumed, and stalls, the lock's staleness and the
// outcome wait until it has caught up.
func TestWatchResumedAfterAStop(t *testing.T) {
	const stop = 40 * time.Minute
	// The new etcd member appeared 30 s before, the lock was renewed at t0:
	// both fine when the watch stopped.
	before := func() *model.ClusterState {
		s := etcdRollout(1)
		s.Machines.At(2).CreationTimestamp = t0.Add(-30 * time.Second)
		s.Lock = &model.Lock{HolderIdentity: "alice@laptop/1", AcquireTime: t0.Add(-time.Minute), RenewTime: t0, Duration: time.Minute}
		return s
	}
	// resume stops the watch for stop, lets it look once, and returns what
	// it printed from then on.
	resume := func(t *testing.T, w *watching) func() string {
		t.Helper()
		said := len(w.out.String())
		w.clk.Step(stop)
		w.send(nil)
		return func() string { return w.out.String()[said:] }
	}
	t.Run("caught up: nothing was stalled", func(t *testing.T) {
		w := startWatch(t, WatchOptions{})
		w.send(before())
		w.advance(t, 2*time.Second)
		since := resume(t, w)
		first, _, _ := strings.Cut(since(), "\n")
		if !strings.HasSuffix(first, " watch: resumed after 40m stopped; catching up") {
			t.Fatalf("first line after the stop %q, want that it resumed:\n%s", first, since())
		}
		// The informers catch up: the rollout went on while the watch
		// was stopped, and the lock was renewed.
		s := healthy()
		s.Lock = &model.Lock{HolderIdentity: "alice@laptop/1", AcquireTime: t0.Add(-time.Minute), RenewTime: w.clk.Now(), Duration: time.Minute}
		w.advance(t, time.Second)
		w.send(s)
		w.advance(t, CatchUpFor+5*time.Second)
		for _, taken := range []string{"stalled", "stale", "no longer stalled", "renewed again"} {
			if got := since(); strings.Contains(got, taken) {
				t.Errorf("%q said of the cache it did not see age:\n%s", taken, got)
			}
		}
	})
	t.Run("still stalled once caught up", func(t *testing.T) {
		w := startWatch(t, WatchOptions{})
		w.send(before())
		w.advance(t, 2*time.Second)
		since := resume(t, w)
		w.advance(t, CatchUpFor-2*time.Second)
		if got := since(); strings.Contains(got, "stalled") || strings.Contains(got, "stale") {
			t.Fatalf("said before it caught up:\n%s", got)
		}
		w.advance(t, 5*time.Second)
		got := since()
		if !strings.Contains(got, "stalled: etcd machine mgmt-etcd-new not ready for 40m") {
			t.Errorf("the stall that holds is not said once caught up:\n%s", got)
		}
		if !strings.Contains(got, "lock: held by alice@laptop/1, stale: not renewed for 40m") {
			t.Errorf("the lease not renewed is not said once caught up:\n%s", got)
		}
	})
	t.Run("a failure waits too", func(t *testing.T) {
		w := startWatch(t, WatchOptions{FailureGrace: time.Minute})
		w.send(failedStep())
		w.advance(t, 2*time.Second)
		since := resume(t, w)
		if got := since(); strings.Contains(got, "outcome") {
			t.Fatalf("an outcome from the cache it had not caught up with:\n%s", got)
		}
		w.advance(t, CatchUpFor+time.Second)
		if got := since(); !strings.Contains(got, "outcome: failed: ") {
			t.Errorf("no failure once caught up with the step still failed:\n%s", got)
		}
	})
	t.Run("a slow tick is no stop", func(t *testing.T) {
		w := startWatch(t, WatchOptions{})
		w.send(before())
		w.clk.Step(StoppedAfter - time.Second)
		w.send(nil)
		if got := w.out.String(); strings.Contains(got, "resumed") {
			t.Errorf("a gap under %s called a stop:\n%s", StoppedAfter, got)
		}
	})
}

// goneCluster is a snapshot whose watch of the EKS-A Cluster has listed
// and finds it no more: deleted while it was watched.
func goneCluster() *model.ClusterState {
	return &model.ClusterState{ClusterName: "mgmt", Namespace: "default", Connection: model.Live,
		Sources: map[model.Kind]model.SourceStatus{model.KindEKSACluster: {Installed: true, Synced: true}}}
}

// A watch stopped after the EKS-A Cluster it followed was deleted said how
// the deleted Cluster had stood ("stopped with the cluster at rest", "at
// etcd: …"), after its own "Cluster mgmt: gone": it says the Cluster was
// deleted, stopped or timed out, and the cut says it too.
func TestWatchStoppedAfterTheClusterWasDeleted(t *testing.T) {
	const gone = " after the EKS-A Cluster default/mgmt was deleted: there is no upgrade left to follow"
	for _, c := range []struct {
		name  string
		first *model.ClusterState
		timed bool
		want  string
	}{
		{"at rest, stopped", healthy(), false, "outcome: stopped" + gone},
		{"under way, stopped", etcdRollout(1), false, "outcome: stopped" + gone},
		{"at rest, timed out", healthy(), true, "outcome: timed out" + gone},
	} {
		t.Run(c.name, func(t *testing.T) {
			var w *watching
			if c.timed {
				w = startTimedWatch(t, WatchOptions{})
			} else {
				w = startWatch(t, WatchOptions{})
			}
			w.send(c.first)
			w.advance(t, 8*time.Second)
			w.send(goneCluster())
			w.stop()
			r := w.result(t)
			if got := lastLine(w.out.String()); !strings.HasSuffix(got, c.want) {
				t.Errorf("last line %q, want %q:\n%s", got, c.want, w.out.String())
			}
			if got := r.Cut("stopped"); got != "stopped"+gone {
				t.Errorf("cut %q", got)
			}
		})
	}
}
