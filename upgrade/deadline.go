package upgrade

import (
	"context"
	"errors"
	"fmt"
	"strings"
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

// stoppedPast is how long past ctx's deadline the process came to see a
// request it cut end, by the monotonic clock; 0 when within stoppedSlack or
// ctx has no deadline. A process that runs ends such a request within
// milliseconds of the deadline: seconds or minutes later, it did not run
// meanwhile (SIGSTOP, ctrl+z, a starved host), and an API server that
// answered in time was read as silent (R19 #7).
func stoppedPast(ctx context.Context) time.Duration {
	dl, ok := ctx.Deadline()
	if !ok {
		return 0
	}
	// Since reads the monotonic clock, which a wall clock set (NTP, an
	// operator) does not move: only time the process spent not running
	// is counted.
	if late := time.Since(dl); late > stoppedSlack {
		return late.Round(time.Second)
	}
	return 0
}

// noAnswer says a write that got no answer within its bound: the API
// server's silence, unless the process itself did not run for stopped of
// it, and then nobody can tell whether an answer came.
func noAnswer(within, stopped time.Duration) string {
	if stopped > 0 {
		return fmt.Sprintf("no answer read within %s: this process did not run for at least %s past that bound (stopped: ctrl+z, SIGSTOP?), so the API server may have answered while nothing read it", within, stopped)
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
