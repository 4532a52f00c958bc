package model

import (
	"fmt"
	"time"
)

// Milestone names, in the order EKS-A's CLI waits for them
// (pkg/clustermanager/applier.go).
const (
	MilestoneGenerationObserved = "generation observed"
	MilestoneNoFailure          = "no failureMessage"
	MilestoneControlPlaneReady  = "ControlPlaneReady"
	MilestoneDefaultCNI         = "DefaultCNIConfigured"
	MilestoneWorkersReady       = "WorkersReady"
	MilestoneReady              = "Ready"
)

// EKS-A Cluster condition types the completion rule reads.
const (
	ConditionReady                   = "Ready"
	ConditionControlPlaneInitialized = "ControlPlaneInitialized"
	ConditionControlPlaneReady       = "ControlPlaneReady"
	ConditionDefaultCNIConfigured    = "DefaultCNIConfigured"
	ConditionWorkersReady            = "WorkersReady"
)

// Completion evaluates EKS-A's rule for "the upgrade is finished" on one
// snapshot of the EKS-A Cluster, exactly in the CLI's order:
//
//  1. metadata.generation == status.observedGeneration (otherwise the status
//     describes an older spec and says nothing about the current one);
//  2. status.failureMessage is empty;
//  3. ControlPlaneReady, 4. DefaultCNIConfigured (only when EKS-A manages the
//     CNI), 5. WorkersReady, 6. Ready are True.
//
// The milestones are evaluated in order and the first unmet one stops the
// evaluation: every later milestone is reported unmet, with the message
// "waiting for <earlier milestone>", even if its condition happens to be True.
// A condition that is True on a status from before the upgrade must never read
// as progress.
//
// The CLI additionally requires each condition to be seen True on 20
// consecutive polls one second apart. That guards a poller against reading a
// status the controller is about to overwrite; it is not part of the state of
// the cluster, so this pure rule does not model it. The console watches
// instead of polling: the headless waiter uses CompletionGate to require the
// rule to hold over several consecutive snapshots and a short hold time before
// it declares the upgrade done.
func Completion(c *EKSACluster) (milestones []Milestone, complete bool) {
	names := []string{MilestoneGenerationObserved, MilestoneNoFailure, MilestoneControlPlaneReady}
	if c == nil || c.CNIManaged() {
		names = append(names, MilestoneDefaultCNI)
	}
	names = append(names, MilestoneWorkersReady, MilestoneReady)
	milestones = make([]Milestone, len(names))
	for i, n := range names {
		milestones[i].Name = n
	}
	if c == nil {
		milestones[0].Message = "EKS-A Cluster not seen yet"
		blockRest(milestones, 1)
		return milestones, false
	}
	for i := range milestones {
		m := &milestones[i]
		switch m.Name {
		case MilestoneGenerationObserved:
			if c.Stale() {
				m.Reason = "StatusNotObserved"
				m.Message = fmt.Sprintf("status not yet observed (generation %d, observed %d)", c.Generation, c.ObservedGeneration)
				m.Since = c.SpecChangedAt
			} else {
				m.Met = true
			}
		case MilestoneNoFailure:
			if c.FailureMessage != "" {
				m.Reason = c.FailureReason
				m.Message = c.FailureMessage
			} else {
				m.Met = true
			}
		default:
			cond, ok := c.Conditions.Get(m.Name)
			switch {
			case !ok:
				m.Message = "condition " + m.Name + " not reported yet"
			case cond.IsTrue():
				m.Met = true
				m.Reason = cond.Reason
				m.Since = cond.LastTransitionTime
			default:
				m.Reason = cond.Reason
				m.Message = cond.Message
				if m.Message == "" {
					m.Message = m.Name + " is " + cond.Status
				}
				m.Since = cond.LastTransitionTime
			}
		}
		if !m.Met {
			blockRest(milestones, i+1)
			return milestones, false
		}
	}
	return milestones, true
}

// blockRest marks the milestones from index i on as waiting for the one
// before them.
func blockRest(ms []Milestone, i int) {
	for j := i; j < len(ms); j++ {
		ms[j] = Milestone{Name: ms[j].Name, Message: "waiting for " + ms[i-1].Name}
	}
}

// CompletionGate is the waiter's side of the completion rule: the rule must
// hold on at least Snapshots consecutive snapshots and keep holding for Hold
// before the upgrade counts as done. Any snapshot on which it does not hold
// resets the gate, as any miss resets the CLI's count of 20 polls.
//
// A watch publishes nothing while nothing changes, so after the last write of
// an upgrade no further snapshot may arrive: the waiter re-observes the latest
// Progress once Remaining has passed (a timer, not a poll of the API server).
type CompletionGate struct {
	// Snapshots is how many consecutive observations must satisfy the rule.
	Snapshots int
	// Hold is how long the rule must keep holding.
	Hold time.Duration

	count int
	since time.Time
}

// DefaultCompletionGate holds for five seconds: long enough to see a
// controller flip a condition back right after writing it, short enough not
// to keep the operator waiting.
func DefaultCompletionGate() CompletionGate {
	return CompletionGate{Snapshots: 1, Hold: 5 * time.Second}
}

// Observe feeds one derived Progress and reports whether the upgrade is done.
// The gate is a value: keep the returned one.
func (g CompletionGate) Observe(p Progress, now time.Time) (CompletionGate, bool) {
	// Seen through a lost connection, the rule holding is only what the
	// cluster said before: the hold starts again once it is seen live.
	if !p.Complete || p.Blind {
		g.count, g.since = 0, time.Time{}
		return g, false
	}
	if g.count == 0 {
		g.since = now
	}
	g.count++
	return g, g.count >= max(g.Snapshots, 1) && now.Sub(g.since) >= g.Hold
}

// Remaining is how long the rule must still hold before Observe can report
// done; zero when it is not holding or the hold has passed.
func (g CompletionGate) Remaining(now time.Time) time.Duration {
	if g.count == 0 {
		return 0
	}
	return max(g.Hold-now.Sub(g.since), 0)
}

// Since is when the rule began holding on the consecutive snapshots the gate
// counts; zero when it does not hold.
func (g CompletionGate) Since() time.Time {
	if g.count == 0 {
		return time.Time{}
	}
	return g.since
}
