package upgrade

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The client rate limiter refuses a wait the deadline would cut before the
// deadline passes, in words that do not wrap it: still the deadline, not a
// failed request. Without a deadline the same words are not one.
func TestDeadlineCutByTheRateLimiter(t *testing.T) {
	limiter := fmt.Errorf("client rate limiter Wait returned an error: %w", errors.New("rate: Wait(n=1) would exceed context deadline"))
	bounded, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if !DeadlineCut(bounded, limiter) {
		t.Error("the limiter's refusal under a deadline is not the deadline")
	}
	if DeadlineCut(context.Background(), limiter) || DeadlineCut(bounded, errors.New("connection refused")) || DeadlineCut(bounded, nil) {
		t.Error("a deadline where there is none")
	}
	passed, cancel2 := context.WithTimeout(context.Background(), -time.Second)
	defer cancel2()
	if !DeadlineCut(passed, errors.New("connection refused")) {
		t.Error("a passed deadline is not the deadline")
	}
	if DeadlineCut(passed, nil) {
		t.Error("a request that succeeded was cut")
	}
	if !DeadlineCut(context.Background(), fmt.Errorf("get: %w", context.DeadlineExceeded)) {
		t.Error("the deadline's own error is not the deadline")
	}
}

// Each bounded request says the API server did not answer in time when the
// rate limiter refused to wait past its bound, as when the bound passed.
func TestBoundedRequestsNameTheLimiterRefusal(t *testing.T) {
	limiter := errors.New("client rate limiter Wait returned an error: rate: Wait(n=1) would exceed context deadline")
	bounded, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if err := unanswered(bounded, time.Second, limiter); !strings.Contains(fmt.Sprint(err), "no answer from the API server within 1s") {
		t.Errorf("unanswered: %v", err)
	}
	l := &Locker{Cluster: "mgmt"}
	if err := l.mayHaveLanded(bounded, limiter); !strings.Contains(fmt.Sprint(err), "no answer from the API server within") {
		t.Errorf("mayHaveLanded: %v", err)
	}
	if err := unanswered(bounded, time.Second, errors.New("forbidden")); fmt.Sprint(err) != "forbidden" {
		t.Errorf("unanswered changed another error: %v", err)
	}
}

// A write its deadline cut, seen ending minutes after the deadline, was
// not left unanswered by the API server: the process did not run (SIGSTOP,
// ctrl+z) and may have missed an answer that came in time. It is said so,
// not blamed on the server (R19 #7); one that ended on time still is.
func TestAWriteCutWhileTheProcessWasStoppedDoesNotBlameTheServer(t *testing.T) {
	cut := fmt.Errorf("patch: %w", context.DeadlineExceeded)
	onTime, cancel := context.WithTimeout(context.Background(), -time.Millisecond)
	defer cancel()
	resumed, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-4*time.Minute))
	defer cancel2()
	if got := stoppedPast(onTime, writeLimit); got != 0 {
		t.Errorf("a write cut on time: stopped %s", got)
	}
	if got := stoppedPast(context.Background(), writeLimit); got != 0 {
		t.Errorf("no deadline: stopped %s", got)
	}
	defer func(n int64) { continued.Store(n) }(continued.Load())
	continued.Store(0)
	if got := stoppedPast(resumed, writeLimit); got != 0 {
		// Late and never stopped: an exec credential plugin that hung
		// (D7), in a process that ran all along.
		t.Errorf("4m past the deadline, no SIGCONT since the write began: stopped %s", got)
	}
	// The SIGCONT recorded a moment after the write saw its deadline: at
	// fg both wake at once (D8).
	go func() {
		time.Sleep(100 * time.Millisecond)
		continued.Store(time.Now().UnixNano())
	}()
	if got := stoppedPast(resumed, writeLimit); got < 4*time.Minute || got > 5*time.Minute {
		t.Errorf("resumed 4m past the deadline, the SIGCONT recorded 100 ms later: stopped %s", got)
	}

	l := &Locker{Cluster: "mgmt"}
	if err := fmt.Sprint(l.mayHaveLanded(resumed, cut)); strings.Contains(err, "no answer from the API server") ||
		!strings.Contains(err, "no answer read within 30s: this process was stopped (ctrl+z, SIGSTOP) and continued 4m") || !strings.Contains(err, "may have landed") {
		t.Errorf("lock write cut while stopped: %s", err)
	}
	if err := fmt.Sprint(l.mayHaveLanded(onTime, cut)); !strings.Contains(err, "no answer from the API server within 30s") {
		t.Errorf("lock write cut on time: %s", err)
	}

	stopped := &UnansweredWriteError{Object: "Cluster default/mgmt", Err: cut, Stopped: stoppedPast(resumed, writeLimit)}
	if msg := stopped.Error(); strings.Contains(msg, "no answer from the API server") ||
		!strings.Contains(msg, "apply Cluster default/mgmt: no answer read within 30s: this process was stopped (ctrl+z, SIGSTOP) and continued 4m") ||
		!strings.Contains(msg, "the write may have landed all the same") {
		t.Errorf("spec write cut while stopped: %s", msg)
	}
	if msg := (&UnansweredWriteError{Object: "Cluster default/mgmt", Err: cut}).Error(); !strings.Contains(msg, "no answer from the API server") {
		t.Errorf("spec write cut on time: %s", msg)
	}
}
