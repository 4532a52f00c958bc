package upgrade

import (
	"context"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/upgrade-console/upgrade-console/model"
)

// swapSource is a StateSource whose state the test replaces, and which
// counts the looks.
type swapSource struct {
	mu    sync.Mutex
	s     *model.ClusterState
	looks int
}

func (f *swapSource) Latest() *model.ClusterState {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.looks++
	return f.s
}

func (f *swapSource) set(s *model.ClusterState) {
	f.mu.Lock()
	f.s = s
	f.mu.Unlock()
}

func (f *swapSource) looked() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.looks
}

// failingCluster is a Cluster whose status describes its spec and carries
// a failureMessage, as EKS-A sets it on a transient problem and clears on
// the next good reconcile.
func failingCluster(failure string) *model.ClusterState {
	c := &model.EKSACluster{ObservedGeneration: 2, FailureMessage: failure}
	c.Name, c.Namespace, c.Generation = "mgmt", "default", 2
	return &model.ClusterState{Cluster: c, Connection: model.Live}
}

// An apply --wait that did not run for longer than the failure grace
// (Ctrl-Z, SIGSTOP, a laptop asleep) judged its old cache at the new time on
// its first look: a failureMessage seen for a second before the stop, and
// cleared since, read as one that stayed the whole grace, and it ended
// "upgrade failed" (exit 4, the lock kept) on an upgrade that went on. As
// watch --plain and the dashboard do, it waits until it has caught up; a
// failure that still holds then fails it.
func TestTrackCatchesUpAfterAStop(t *testing.T) {
	run := func(t *testing.T, after *model.ClusterState) (*swapSource, *clocktesting.FakeClock, chan Outcome) {
		t.Helper()
		clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		src := &swapSource{s: failingCluster("VSphereMachine: transient error")}
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		done := make(chan Outcome, 1)
		go func() {
			out, _ := Track(ctx, src, clk, TrackOptions{AppliedGeneration: 2, FailureGrace: time.Minute})
			done <- out
		}()
		step := func(d time.Duration) {
			n := src.looked()
			clk.Step(d)
			deadline := time.Now().Add(10 * time.Second)
			// Or Track ended on its last look, before the caller saw it.
			for src.looked() == n && len(done) == 0 {
				if time.Now().After(deadline) {
					t.Fatal("Track stopped looking")
				}
				time.Sleep(time.Millisecond)
			}
		}
		for src.looked() == 0 {
			time.Sleep(time.Millisecond)
		}
		step(time.Second)
		// Stopped for 10 minutes; the cache is as it was.
		step(10 * time.Minute)
		select {
		case out := <-done:
			t.Fatalf("judged on the cache it had not caught up with: %+v", out)
		case <-time.After(50 * time.Millisecond):
		}
		// The informers catch up.
		src.set(after)
		for range 25 {
			select {
			case out := <-done:
				return src, clk, func() chan Outcome { c := make(chan Outcome, 1); c <- out; return c }()
			default:
			}
			step(time.Second)
		}
		return src, clk, done
	}
	t.Run("the failure cleared meanwhile", func(t *testing.T) {
		_, _, done := run(t, failingCluster(""))
		select {
		case out := <-done:
			if out.Failed {
				t.Fatalf("failed on a failureMessage cleared while it was stopped: %+v", out)
			}
		case <-time.After(50 * time.Millisecond):
		}
	})
	t.Run("the failure still holds", func(t *testing.T) {
		_, _, done := run(t, failingCluster("VSphereMachine: transient error"))
		select {
		case out := <-done:
			if !out.Failed {
				t.Fatalf("outcome %+v, want failed", out)
			}
		case <-time.After(time.Second):
			t.Fatal("a failure that held past the catch-up did not fail the upgrade")
		}
	})
}
