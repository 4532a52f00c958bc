// Package report turns a stream of cluster snapshots into what a headless
// operator needs: one timestamped line per meaningful change (for CI logs) and
// the outcome of the upgrade (done, failed, timed out) for the exit code.
//
// It is the dashboard's twin: both read the same model.ClusterState and
// model.Progress, so the plain output and the screen never disagree.
package report

import (
	"fmt"
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
	// Failed: the cluster reported a failure that stayed past the grace
	// (a status.failureMessage, or an in-place step that failed).
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

// Judge decides the outcome from successive progress values: the one rule
// of every waiter (the plain watch, the dashboard, apply --wait), so that
// they never disagree on how the same upgrade ended. It is a value type;
// keep the one Observe returns.
//
// Done is EKS-A's completion rule holding through the gate. Failed is a
// failure that stays for the grace, as EKS-A's CLI gives a failureMessage
// 10 minutes to clear: a status.failureMessage, timed from when the judge
// first saw it (it carries no time of its own), or an in-place step failed
// with severity Error, timed from its condition's transition (nothing in
// EKS-A retries the step: only `node retry` gets the upgrade past it).
type Judge struct {
	gate  model.CompletionGate
	grace time.Duration
	// failingSince is when the failureMessage was first seen.
	failingSince time.Time
	// seen: a progress with the EKS-A Cluster was observed; moved: one of
	// them did not meet the rule. Seen and not moved, the cluster has been
	// at rest since the judge began.
	seen, moved bool
	outcome     Outcome
	reason      string
}

// JudgeOptions tune a Judge; the zero value is EKS-A's rule.
type JudgeOptions struct {
	// Gate is the completion gate (model.DefaultCompletionGate when zero).
	Gate model.CompletionGate
	// FailureGrace is how long a failure may stay (model.DefaultFailureGrace
	// when zero or negative).
	FailureGrace time.Duration
	// Applied: the waiter follows a change it made, so the cluster is not
	// at rest even if the first progress meets the rule (a change EKS-A
	// reconciles at once).
	Applied bool
}

// NewJudge uses EKS-A's completion rule with the default gate and grace.
func NewJudge() Judge { return NewJudgeWith(JudgeOptions{}) }

// NewJudgeWith is NewJudge with options.
func NewJudgeWith(o JudgeOptions) Judge {
	j := Judge{gate: o.Gate, grace: o.FailureGrace, moved: o.Applied}
	if j.gate == (model.CompletionGate{}) {
		j.gate = model.DefaultCompletionGate()
	}
	if j.grace <= 0 {
		j.grace = model.DefaultFailureGrace
	}
	return j
}

// Observe folds one progress in and returns the outcome so far.
func (j Judge) Observe(p model.Progress, now time.Time) (Judge, Outcome) {
	if p.Generation != 0 { // without the Cluster, nothing is known either way
		j.seen = true
		j.moved = j.moved || !p.Complete
	}
	var done bool
	j.gate, done = j.gate.Observe(p, now)
	j.outcome, j.reason = Running, ""
	if p.Failed {
		if j.failingSince.IsZero() {
			j.failingSince = now
		}
	} else {
		j.failingSince = time.Time{}
	}
	switch {
	case done:
		j.outcome = Done
	case p.EtcdRollback != nil && !p.EtcdRollback.Running():
		// An operator's decision, not a state that may clear: EKS-A stays
		// paused until someone resumes it, so the upgrade will not go on.
		j.outcome = Failed
		j.reason = "etcd was rolled back by upgrade-console"
		if r := p.EtcdRollback; r.By != "" {
			j.reason += " (" + r.By + ")"
		}
		j.reason += ": EKS-A reconcile stays paused and the upgrade does not go on; fix the cause, then `upgrade-console lock clear paused` resumes it"
	case p.Failed && now.Sub(j.failingSince) >= j.grace:
		j.outcome = Failed
		j.reason = fmt.Sprintf("the Cluster reports a failure (for %s): %s", model.ShortDuration(now.Sub(j.failingSince)), p.FailureMessage)
	default:
		for _, st := range p.Stalls {
			if st.Failed && now.Sub(st.Since) >= j.grace {
				j.outcome, j.reason = Failed, st.Sentence
				if st.Resume != "" {
					j.reason += "; " + st.Resume
				}
				break
			}
		}
	}
	return j, j.outcome
}

// Reason says why the upgrade failed (empty unless the outcome is Failed).
func (j Judge) Reason() string { return j.reason }

// AtRest reports whether every progress observed with the Cluster met the
// completion rule: the cluster has been at rest since the judge began, and
// no upgrade was under way to be done with.
func (j Judge) AtRest() bool { return j.seen && !j.moved }

// Confirming returns when the completion rule began holding, while the gate
// has yet to pass it (zero otherwise).
func (j Judge) Confirming() time.Time {
	if j.outcome == Done {
		return time.Time{}
	}
	return j.gate.Since()
}

// Summary is the progress's summary as the judge sees it: of p, the
// progress it last observed. Milestones met are "done" only once the gate
// has passed them; a cluster at rest has no upgrade to be done with.
func (j Judge) Summary(p model.Progress) string {
	switch {
	case !p.Complete && j.outcome == Failed:
		return "failed: " + j.reason
	case !p.Complete:
		return p.Summary
	case j.AtRest():
		return atRest(p)
	case j.outcome == Done:
		return "done: every completion milestone met"
	default:
		return "every completion milestone met; confirming it holds for " + model.ShortDuration(j.gate.Hold)
	}
}

func atRest(p model.Progress) string {
	if p.Target == "" {
		return "no upgrade under way"
	}
	return "no upgrade under way: cluster at " + p.Target
}

// Unfinished says how a wait that ended before an outcome (cause: "timed
// out", "stopped") left the upgrade, p being the progress last observed.
func (j Judge) Unfinished(cause string, p model.Progress, now time.Time) string {
	since := j.Confirming()
	switch {
	case j.AtRest():
		return cause + restNote
	case !since.IsZero():
		return cause + " while confirming completion: every milestone was met " + model.ShortDuration(now.Sub(since)) + " ago"
	case p.Summary == "":
		return cause + " before the upgrade completed"
	default:
		return cause + " at " + j.Summary(p)
	}
}

// restNote ends a line on a wait that ended with nothing to wait for.
const restNote = " with the cluster at rest: no upgrade was under way"

// Remaining is how long the completion rule must still hold before Observe
// can report Done (so a waiter knows when to look again without a new
// snapshot).
func (j Judge) Remaining(now time.Time) time.Duration { return j.gate.Remaining(now) }
