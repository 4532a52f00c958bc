package sim

import (
	"context"
	"testing"
	"time"

	"k8s.io/utils/clock"
)

// A panic in a simulated controller is retried like an error: the demo runs
// in the dashboard's process, so it must not end it.
func TestAPanickingReconcileIsRetried(t *testing.T) {
	s := &Simulator{writes: &writes{pending: map[string][]write{}, clock: clock.RealClock{}}}
	calls := 0
	l := s.newLoop("test", func(context.Context, string) (time.Duration, error) {
		calls++
		if calls == 1 {
			panic("a bug in a simulated controller")
		}
		return 0, nil
	})
	defer l.queue.ShutDown()
	ctx := context.Background()
	l.add("eksa-system/mgmt")
	if !l.next(ctx) {
		t.Fatal("the loop stopped after a panic")
	}
	if n := l.queue.NumRequeues("eksa-system/mgmt"); n != 1 {
		t.Fatalf("requeues after the panic = %d, want 1 (retried with backoff)", n)
	}
	// The retry comes after the rate limiter's first delay (10 ms).
	if !l.next(ctx) || calls != 2 {
		t.Fatalf("reconcile ran %d times, want 2", calls)
	}
	if n := l.queue.NumRequeues("eksa-system/mgmt"); n != 0 {
		t.Fatalf("requeues after the success = %d, want 0 (forgotten)", n)
	}
}
