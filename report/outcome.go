// Package report turns a stream of cluster snapshots into what a headless
// operator needs: one timestamped line per meaningful change (for CI logs) and
// the outcome of the upgrade (done, failed, timed out) for the exit code.
//
// It is the dashboard's twin: both read the same model.ClusterState and
// model.Progress, so the plain output and the screen never disagree.
package report

import (
	"time"

	"github.com/upgrade-console/upgrade-console/model"
)

// Outcome is where a watched upgrade ended.
type Outcome int

const (
	// Running: the upgrade has neither completed nor failed yet.
	Running Outcome = iota
	// Done: EKS-A's completion rule held long enough (model.CompletionGate).
	Done
	// Failed: the cluster reports a failure (status.failureMessage, or a
	// step that failed for good).
	Failed
	// TimedOut: the time allowed passed first.
	TimedOut
)

func (o Outcome) String() string {
	switch o {
	case Done:
		return "done"
	case Failed:
		return "failed"
	case TimedOut:
		return "timed out"
	default:
		return "running"
	}
}

// Judge decides the outcome from successive progress values. It is a value
// type; keep the one Observe returns.
type Judge struct {
	gate model.CompletionGate
}

// NewJudge uses EKS-A's completion rule with the default gate.
func NewJudge() Judge { return Judge{gate: model.DefaultCompletionGate()} }

// Observe folds one progress in and returns the outcome so far.
func (j Judge) Observe(p model.Progress, now time.Time) (Judge, Outcome) {
	if p.Failed {
		return j, Failed
	}
	var done bool
	j.gate, done = j.gate.Observe(p, now)
	if done {
		return j, Done
	}
	return j, Running
}

// Remaining is how long the completion rule must still hold before Observe
// can report Done (so a waiter knows when to look again without a new
// snapshot).
func (j Judge) Remaining(now time.Time) time.Duration { return j.gate.Remaining(now) }
