package model

import (
	"fmt"
	"time"
)

// A failure the judge waits out (DefaultFailureGrace: 10 minutes) was said
// once, when it was first seen, and then nothing was printed until the
// upgrade was called failed: apply --wait and watch --plain sat silent for
// the whole grace, and an operator who came back to the terminal could not
// tell a console waiting on a failure from one that had hung. HoldNotice
// says, once a minute, that it still fails and when it fails the upgrade.

// Hold is a failure the judge waits out before it calls the upgrade failed.
type Hold struct {
	// What fails: the failed step's sentence, or the Cluster's
	// failureMessage.
	What string
	// Since is when the judge times it from; Until when, still failing,
	// it fails the upgrade.
	Since, Until time.Time
	// Resume is the command that gets past it, where one does.
	Resume string
	// step is the failed step's stall; nil for the failureMessage.
	step *Stall
}

// key tells one failure from another, whatever its times: a step's
// Until moves by a second or two as the pod's runs (timed to the second)
// change the estimate of its first failure (FirstFailure), and a notice
// told failures apart by Until said the same one again at each rerun.
func (h Hold) key() string {
	if h.step == nil {
		return "failureMessage"
	}
	return string(h.step.Kind) + "/" + h.step.Name
}

// holds are the failures of p the judge waits out, in the order Observe
// gives them as the reason: the Cluster's failureMessage (timed from when
// the judge first saw it), then each failed step (from its condition's
// transition, or for a failure read from the upgrader pod, from its first
// failure as the pod's times tell, so that a console started later judges
// it as the one that saw it fail; from when the judge first saw it only
// when the pod tells no time). The one rule of Observe's verdict and of the
// notice that says when it comes.
func (j Judge) holds(p Progress) []Hold {
	var out []Hold
	if p.Failed {
		out = append(out, Hold{What: "the Cluster reports a failure: " + p.FailureMessage, Since: j.failingSince, Until: j.failingSince.Add(j.grace)})
	}
	for i, st := range p.Stalls {
		if !st.Failed {
			continue
		}
		since := st.Since
		if st.SinceStep {
			since = st.FailedAt
			if since.IsZero() {
				since = j.stepFailureSeen[string(st.Kind)+"/"+st.Name]
			}
		}
		out = append(out, Hold{What: st.Sentence, Since: since, Until: since.Add(j.grace), Resume: st.Resume, step: &p.Stalls[i]})
	}
	return out
}

// Holding is the failure whose grace runs out first, of p, the progress the
// judge last observed; false when nothing fails, or the outcome is already
// decided.
func (j Judge) Holding(p Progress) (Hold, bool) {
	if j.outcome != OutcomeRunning {
		return Hold{}, false
	}
	var first Hold
	for _, h := range j.holds(p) {
		if first.Until.IsZero() || h.Until.Before(first.Until) {
			first = h
		}
	}
	return first, !first.Until.IsZero()
}

// HoldEvery is how often a failure waited out is said again.
const HoldEvery = time.Minute

// HoldNotice tells when to say again that a failure is waited out. Its
// zero value is ready; keep it across observations.
type HoldNotice struct {
	said time.Time
	// failure tells the failure said last from another (Hold.key): its
	// sentence carries ages ("the step began 3m ago") that change every
	// minute.
	failure string
}

// Due reports whether Next has a line at now, without saying it: a
// caller that would word it from an older progress derives a fresh one
// first.
func (n *HoldNotice) Due(j Judge, p Progress, now time.Time) bool {
	h, ok := j.Holding(p)
	return ok && !now.Before(n.due(h))
}

func (n *HoldNotice) due(h Hold) time.Time {
	if n.failure == h.key() && !n.said.IsZero() {
		return n.said.Add(HoldEvery)
	}
	return h.Since.Add(HoldEvery)
}

// Next is the line to print at now, if one is due: a minute after the
// failure was first seen, and each minute after, a new failure first; with
// the failure it says.
func (n *HoldNotice) Next(j Judge, p Progress, now time.Time) (string, Hold, bool) {
	h, ok := j.Holding(p)
	if !ok {
		*n = HoldNotice{}
		return "", Hold{}, false
	}
	if now.Before(n.due(h)) {
		return "", Hold{}, false
	}
	n.said, n.failure = now, h.key()
	line := fmt.Sprintf("still failing after %s: %s; the upgrade fails at %s UTC (in %s) unless it clears first",
		ShortDuration(now.Sub(h.Since)), h.What, h.Until.UTC().Format("15:04:05"), ShortDuration(roundUp(h.Until.Sub(now))))
	if h.Resume != "" {
		line += "; " + h.Resume
	}
	return line, h, true
}

// roundUp rounds d up to the unit ShortDuration shows it in, so that "after
// 1m … (in 9m)" adds up to the grace: rounded down, the two read 1m and 8m
// of a 10-minute grace.
func roundUp(d time.Duration) time.Duration {
	unit := time.Second
	if d > time.Minute {
		unit = time.Minute
	}
	if r := d % unit; r != 0 {
		d += unit - r
	}
	return d
}
