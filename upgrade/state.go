package upgrade

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/upgrade-console/upgrade-console/model"
)

// Synced reports whether a snapshot is complete enough to run the preflight
// checks on: the watchers are live and every kind has had its first list (or
// is known to be absent or forbidden, which the checks report themselves).
func Synced(s *model.ClusterState) bool {
	return len(unsynced(s)) == 0
}

func unsynced(s *model.ClusterState) []string {
	if s == nil {
		return []string{"no snapshot yet"}
	}
	if s.Connection != model.Live {
		if s.ConnectionErr != "" {
			return []string{"connection " + string(s.Connection) + ": " + s.ConnectionErr}
		}
		return []string{"connection " + string(s.Connection)}
	}
	if len(s.Sources) == 0 {
		return []string{"discovery"}
	}
	var out []string
	for k, src := range s.Sources {
		if !src.Synced && src.Forbidden == "" {
			out = append(out, string(k))
		}
	}
	sort.Strings(out)
	return out
}

// WaitSynced waits until the source's latest snapshot is Synced, checking
// every poll (an in-memory read), and returns it. On timeout the error is a
// *SyncTimeoutError naming the kinds still syncing; when ctx ends first (a
// signal), it is ctx's error: "did not finish loading within 30s" sent an
// operator who pressed Ctrl-C after the connection.
func WaitSynced(ctx context.Context, src StateSource, poll, timeout time.Duration) (*model.ClusterState, error) {
	var s *model.ClusterState
	failed, _ := src.(interface{ Err() error })
	err := wait.PollUntilContextTimeout(ctx, poll, timeout, true, func(context.Context) (bool, error) {
		if failed != nil {
			// A watcher that stopped on an internal error never syncs.
			if err := failed.Err(); err != nil {
				return false, err
			}
		}
		s = src.Latest()
		return Synced(s), nil
	})
	switch {
	case err == nil:
		return s, nil
	case !wait.Interrupted(err):
		return s, err // the watcher's own failure, not a timeout
	case ctx.Err() != nil:
		return s, fmt.Errorf("loading the cluster's objects: %w", ctx.Err())
	}
	return s, &SyncTimeoutError{Timeout: timeout, Waiting: unsynced(s)}
}

// SyncTimeoutError is WaitSynced's timeout: the kinds whose first list had
// not arrived (or the connection's state) when it passed.
type SyncTimeoutError struct {
	Timeout time.Duration
	Waiting []string
}

func (e *SyncTimeoutError) Error() string {
	return fmt.Sprintf("the cluster's objects did not finish loading within %s (still waiting for: %s)", e.Timeout, strings.Join(e.Waiting, ", "))
}
