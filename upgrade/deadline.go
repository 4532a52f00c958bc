package upgrade

import (
	"context"
	"errors"
	"strings"
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
