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
}

// Holding is the failure whose grace runs out first, of p, the progress the
// judge last observed; false when nothing fails, or the outcome is already
// decided.
func (j Judge) Holding(p Progress) (Hold, bool) {
	if j.outcome != OutcomeRunning {
		return Hold{}, false
	}
	var h Hold
	if p.Failed && !j.failingSince.IsZero() {
		h = Hold{What: "the Cluster reports a failure: " + p.FailureMessage, Since: j.failingSince, Until: j.failingSince.Add(j.grace)}
	}
	for _, st := range p.Stalls {
		if !st.Failed {
			continue
		}
		since := st.Since
		if st.SinceStep {
			since = j.stepFailureSeen[string(st.Kind)+"/"+st.Name]
		}
		if since.IsZero() {
			continue
		}
		if until := since.Add(j.grace); h.Until.IsZero() || until.Before(h.Until) {
			h = Hold{What: st.Sentence, Since: since, Until: until, Resume: st.Resume}
		}
	}
	return h, !h.Until.IsZero()
}

// HoldEvery is how often a failure waited out is said again.
const HoldEvery = time.Minute

// HoldNotice tells when to say again that a failure is waited out. Its
// zero value is ready; keep it across observations.
type HoldNotice struct {
	said time.Time
	// until tells the failure said last from another: its sentence
	// carries ages ("the step began 3m ago") that change every minute.
	until time.Time
}

// Next is the line to print at now, if one is due: a minute after the
// failure was first seen, and each minute after, a new failure first.
func (n *HoldNotice) Next(j Judge, p Progress, now time.Time) (string, bool) {
	h, ok := j.Holding(p)
	if !ok {
		*n = HoldNotice{}
		return "", false
	}
	due := h.Since.Add(HoldEvery)
	if n.until.Equal(h.Until) && !n.said.IsZero() {
		due = n.said.Add(HoldEvery)
	}
	if now.Before(due) {
		return "", false
	}
	n.said, n.until = now, h.Until
	line := fmt.Sprintf("still failing after %s: %s; the upgrade fails at %s UTC (in %s) unless it clears first",
		ShortDuration(now.Sub(h.Since)), h.What, h.Until.UTC().Format("15:04:05"), ShortDuration(h.Until.Sub(now)))
	if h.Resume != "" {
		line += "; " + h.Resume
	}
	return line, true
}
