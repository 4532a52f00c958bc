package upgrade

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DeadlineCut tells whether err is ctx's deadline cutting a request short.
// client-go's rate limiter refuses a wait that would outlast the deadline
// before the deadline passes, with an error that does not wrap it
// (golang.org/x/time/rate: "would exceed context deadline"): tested on
// ctx.Err() alone, such a refusal reads as a failed request (a --timeout of
// a millisecond got exit 1 from it instead of 5). A request that succeeded
// was not cut, whatever its context says now.
func DeadlineCut(ctx context.Context, err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return true
	}
	_, bounded := ctx.Deadline()
	return bounded && strings.Contains(err.Error(), "would exceed context deadline")
}

// stoppedSlack is how late past its deadline a request the deadline cut may
// end in a process that runs: the deadline's timer cancels it at once.
const stoppedSlack = 5 * time.Second

// stoppedPast is how long past ctx's deadline, a context whose requests
// began within before it (a landing context's writeLimit, a lock request's
// bound), the process came to see a request it cut end, when the process
// was stopped and continued meanwhile (SIGSTOP, ctrl+z, then SIGCONT:
// continuedSince); 0 otherwise. Lateness alone is no proof: a request can
// block past its deadline in a process that runs (an exec credential
// plugin that hangs, run before the request with no context), and it was
// said stopped while it ran.
func stoppedPast(ctx context.Context, within time.Duration) time.Duration {
	dl, ok := ctx.Deadline()
	if !ok {
		return 0
	}
	// Since reads the monotonic clock, which a wall clock set (NTP, an
	// operator) does not move.
	if late := time.Since(dl); late > stoppedSlack && continuedWithin(dl.Add(-within), continuedWait) {
		return late.Round(time.Second)
	}
	return 0
}

// continuedWait is how long a write seen ending late waits for the SIGCONT
// that ended its stop to be recorded: at fg the overdue deadline and the
// signal wake two goroutines at once, and the write's read first in 6 of 8
// runs (D8), saying the API server did not answer.
const continuedWait = 500 * time.Millisecond

// continuedWithin is continuedSince(t), waiting up to wait for it.
func continuedWithin(t time.Time, wait time.Duration) bool {
	for end := time.Now().Add(wait); ; time.Sleep(10 * time.Millisecond) {
		if continuedSince(t) {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}

// continued is when the process was last continued after a stop (unix
// nanoseconds; 0: not since WatchContinued).
var continued atomic.Int64

// WatchContinued records each SIGCONT the process gets from now on: a
// write whose bound passed meanwhile was not the API server's silence
// alone (stoppedPast). A no-op where there is no SIGCONT.
func WatchContinued() { watchContinuedOnce.Do(watchContinued) }

var watchContinuedOnce sync.Once

// continuedSince says whether the process was continued at t or after.
func continuedSince(t time.Time) bool {
	n := continued.Load()
	return n != 0 && n >= t.UnixNano()
}

// noAnswer says a write that got no answer within its bound: the API
// server's silence, unless the process itself did not run for stopped of
// it, and then nobody can tell whether an answer came.
func noAnswer(within, stopped time.Duration) string {
	if stopped > 0 {
		return fmt.Sprintf("no answer read within %s: this process was stopped (ctrl+z, SIGSTOP) and continued %s past that bound, so the API server may have answered while nothing read it", within, stopped)
	}
	return fmt.Sprintf("no answer from the API server within %s", within)
}

// ProcessStoppedError is a write's bound that passed while the process did
// not run: what reaches the operator must not add a fix that blames the API
// server (main's explain), which may have answered in time.
type ProcessStoppedError struct {
	Within, Stopped time.Duration
}

func (e *ProcessStoppedError) Error() string { return noAnswer(e.Within, e.Stopped) }
