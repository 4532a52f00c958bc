package model

import (
	"fmt"
	"time"
)

// Outcome is where a watched upgrade ended.
type Outcome int

const (
	// OutcomeRunning: the upgrade has neither completed nor failed yet.
	OutcomeRunning Outcome = iota
	// OutcomeDone: EKS-A's completion rule held long enough (CompletionGate).
	OutcomeDone
	// OutcomeFailed: the cluster reported a failure that stayed past the
	// grace (a status.failureMessage, or an in-place step that failed).
	OutcomeFailed
	// OutcomeTimedOut: the time allowed passed first.
	OutcomeTimedOut
)

func (o Outcome) String() string {
	switch o {
	case OutcomeDone:
		return "done"
	case OutcomeFailed:
		return "failed"
	case OutcomeTimedOut:
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
// with severity Error, timed from its condition's transition, or read from
// its upgrader pod, timed from its first failure as the pod's times tell
// (Stall.FailedAt; when they tell none, from when the judge first saw it);
// nothing in EKS-A retries the step: only `node retry` gets the upgrade past
// it.
type Judge struct {
	gate  CompletionGate
	grace time.Duration
	// failingSince is when the failureMessage was first seen.
	failingSince time.Time
	// seen: a progress with the EKS-A Cluster was observed; moved: one of
	// them did not meet the rule. Seen and not moved, the cluster has been
	// at rest since the judge began.
	seen, moved bool
	outcome     Outcome
	reason      string
	// failedOn is the failed step whose staying failed is the outcome's
	// reason; its Name is empty otherwise.
	failedOn Stall
	// stepFailureSeen is when the judge first saw each failed stall that
	// carries no time of its failure (Stall.SinceStep without FailedAt),
	// by kind and name.
	// Replaced, never changed in place: a Judge is a value.
	stepFailureSeen map[string]time.Time
	// unconfirmed is what the last completion the API server did not
	// confirm said (NotConfirmed), while the rule goes on holding: said
	// once, where a refusal that does not pass (403) was said again, with
	// "confirming it holds", every few seconds until the timeout.
	unconfirmed string
}

// JudgeOptions tune a Judge; the zero value is EKS-A's rule.
type JudgeOptions struct {
	// Gate is the completion gate (DefaultCompletionGate when zero).
	Gate CompletionGate
	// FailureGrace is how long a failure may stay (DefaultFailureGrace
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
	if j.gate == (CompletionGate{}) {
		j.gate = DefaultCompletionGate()
	}
	if j.grace <= 0 {
		j.grace = DefaultFailureGrace
	}
	return j
}

// Observe folds one progress in and returns the outcome so far.
func (j Judge) Observe(p Progress, now time.Time) (Judge, Outcome) {
	if p.Generation != 0 { // without the Cluster, nothing is known either way
		j.seen = true
		j.moved = j.moved || !p.Complete
	}
	var done bool
	j.gate, done = j.gate.Observe(p, now)
	if !p.Complete && !p.Blind {
		j.unconfirmed = "" // the rule stopped holding: a new completion
	}
	j.stepFailureSeen = stepFailuresSeen(j.stepFailureSeen, p.Stalls, now)
	j.outcome, j.reason, j.failedOn = OutcomeRunning, "", Stall{}
	if p.Failed {
		if j.failingSince.IsZero() {
			j.failingSince = now
		}
	} else {
		j.failingSince = time.Time{}
	}
	switch {
	case p.EtcdRollback != nil && !p.EtcdRollback.Running():
		// An operator's decision, not a state that may clear: EKS-A stays
		// paused until someone resumes it, so the upgrade will not go on.
		// Judged before done: the cluster is Ready on its old version and
		// meets the rule, and read as done 5 s after it read as failed.
		j.outcome = OutcomeFailed
		j.reason = "etcd was rolled back by upgrade-console"
		if r := p.EtcdRollback; r.By != "" {
			j.reason += " (" + r.By + ")"
		}
		resume := "upgrade-console lock clear paused"
		if p.ClusterFlags != "" {
			resume += " " + p.ClusterFlags
		}
		j.reason += ": EKS-A reconcile stays paused and the upgrade does not go on; fix the cause, then `" + resume + "` resumes it"
	case done:
		j.outcome = OutcomeDone
	default:
		for _, h := range j.holds(p) {
			if now.Before(h.Until) {
				continue
			}
			j.outcome = OutcomeFailed
			if h.step == nil {
				j.reason = fmt.Sprintf("the Cluster reports a failure (for %s): %s", ShortDuration(now.Sub(h.Since)), p.FailureMessage)
				break
			}
			j.reason, j.failedOn = h.step.Sentence, *h.step
			if h.Resume != "" {
				j.reason += "; " + h.Resume
			}
			break
		}
	}
	return j, j.outcome
}

// ConfirmWithin bounds one read that confirms a completion with the API
// server: one that has not answered by then is not one to call an upgrade
// done on.
const ConfirmWithin = 10 * time.Second

// NotConfirmed is the summary of a completion the API server did not
// confirm (err says how), while the rule holds its time again.
func NotConfirmed(err error) string {
	return "every completion milestone met, but the API server did not confirm it (" + err.Error() + "); confirming it holds again"
}

// Unconfirmed is the judge after the API server did not confirm (err) the
// completion it judged on p: observed as through a lost connection, the
// rule holds its time again before it is done. Its summary says why until
// the rule stops holding or a confirmation goes through.
func (j Judge) Unconfirmed(p Progress, now time.Time, err error) Judge {
	p.Blind = true
	j, _ = j.Observe(p, now)
	j.unconfirmed = NotConfirmed(err)
	return j
}

// UnconfirmedText is what the last unconfirmed completion said, "" when
// the rule stopped holding since, or none went unconfirmed.
func (j Judge) UnconfirmedText() string { return j.unconfirmed }

// Reason says why the upgrade failed (empty unless the outcome is Failed).
func (j Judge) Reason() string { return j.reason }

// FailedOn is the failed step the upgrade failed on, when that is the
// reason (not a failureMessage, nor an etcd rollback).
func (j Judge) FailedOn() (Stall, bool) { return j.failedOn, j.failedOn.Name != "" }

// AtRest reports whether every progress observed with the Cluster met the
// completion rule: the cluster has been at rest since the judge began, and
// no upgrade was under way to be done with.
func (j Judge) AtRest() bool { return j.seen && !j.moved }

// Confirming returns when the completion rule began holding, while the gate
// has yet to pass it (zero otherwise).
func (j Judge) Confirming() time.Time {
	if j.outcome == OutcomeDone || j.outcome == OutcomeFailed {
		return time.Time{}
	}
	return j.gate.Since()
}

// Summary is the progress's summary as the judge sees it: of p, the
// progress it last observed. Milestones met are "done" only once the gate
// has passed them; a cluster at rest has no upgrade to be done with.
func (j Judge) Summary(p Progress) string {
	switch {
	case j.outcome == OutcomeFailed && (!p.Complete || p.EtcdRollback != nil):
		// A cluster whose etcd was rolled back meets the rule on its
		// old version: it read "confirming it holds for 5s" for ever.
		return "failed: " + j.reason
	case !p.Complete, p.Blind:
		return p.Summary
	case j.AtRest():
		return atRestSummary(p)
	case j.outcome == OutcomeDone:
		return "done: every completion milestone met"
	case j.unconfirmed != "":
		return j.unconfirmed
	default:
		return "every completion milestone met; confirming it holds for " + ShortDuration(j.gate.Hold)
	}
}

func atRestSummary(p Progress) string {
	if p.Target == "" {
		return "no upgrade under way"
	}
	return "no upgrade under way: cluster at " + p.Target
}

// Unfinished says how a wait that ended before an outcome (cause: "timed
// out", "stopped") left the upgrade, p being the progress last observed.
func (j Judge) Unfinished(cause string, p Progress, now time.Time) string {
	since := j.Confirming()
	switch {
	case j.AtRest():
		return cause + RestNote
	case !since.IsZero():
		return cause + " while confirming completion: every milestone was met " + ShortDuration(now.Sub(since)) + " ago"
	case p.Summary == "":
		return cause + " before the upgrade completed"
	case p.Failed:
		// "timed out at failed: …" read oddly, and as a failure the
		// waiters had called: EKS-A clears transient ones itself.
		return cause + " while the cluster reported a failure not yet held long enough to fail the upgrade: " + p.FailureMessage
	default:
		return cause + " at " + j.Summary(p)
	}
}

// RestNote ends a line on a wait that ended with nothing to wait for.
const RestNote = " with the cluster at rest: no upgrade was under way"

// Remaining is how long the completion rule must still hold before Observe
// can report Done (so a waiter knows when to look again without a new
// snapshot).
func (j Judge) Remaining(now time.Time) time.Duration { return j.gate.Remaining(now) }

// stepFailuresSeen is seen for the failed stalls of stalls that carry no
// time of their failure: the time each was first seen (now for a new one),
// the others dropped. seen itself is not changed.
func stepFailuresSeen(seen map[string]time.Time, stalls []Stall, now time.Time) map[string]time.Time {
	var out map[string]time.Time
	for _, st := range stalls {
		if !st.Failed || !st.SinceStep || !st.FailedAt.IsZero() {
			continue
		}
		if out == nil {
			out = make(map[string]time.Time, len(seen)+1)
		}
		k := string(st.Kind) + "/" + st.Name
		if t, ok := seen[k]; ok {
			out[k] = t
		} else {
			out[k] = now
		}
	}
	return out
}
