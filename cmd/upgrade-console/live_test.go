package main

import (
	"testing"
	"time"
)

// A command that ends does not wait for ever for a watch that will not stop
// (client-go's reflectors sleeping out their backoff against an API server
// that is gone): it waits stopWithin, then ends.
func TestCloseDoesNotWaitForAWatchThatWillNotStop(t *testing.T) {
	stopped := false
	lv := &live{stop: func() { stopped = true }, done: make(chan struct{})}
	closed := make(chan time.Duration, 1)
	start := time.Now()
	go func() {
		lv.close()
		closed <- time.Since(start)
	}()
	select {
	case took := <-closed:
		if !stopped || took < stopWithin || took > stopWithin+time.Second {
			t.Errorf("close took %s (stopped %t), want the watch told to stop and %s waited", took, stopped, stopWithin)
		}
	case <-time.After(stopWithin + 10*time.Second):
		t.Fatal("close still waits for a watch that does not stop")
	}

	// One that stops is waited for, and no longer.
	done := make(chan struct{})
	lv = &live{stop: func() { close(done) }, done: done}
	start = time.Now()
	lv.close()
	if took := time.Since(start); took > time.Second {
		t.Errorf("close of a watch that stops at once took %s", took)
	}
}
