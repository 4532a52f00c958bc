package tui

import (
	"slices"
	"strings"
	"time"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/report"
)

// judgedStall is the failed stall whose staying failed the judge declared
// the upgrade's failure: the judge's reason is its sentence, and what
// resumes it. The judge keeps no more than the reason, and the stalls it
// looked at are p's.
func judgedStall(p model.Progress, j report.Judge) (model.Stall, bool) {
	reason := j.Reason()
	if reason == "" {
		return model.Stall{}, false
	}
	for _, sl := range p.Stalls {
		if sl.Failed && strings.HasPrefix(reason, sl.Sentence) {
			return sl, true
		}
	}
	return model.Stall{}, false
}

// failedStrip is the progress and timeline the header's phase strip shows
// once the judge has declared the upgrade failed. A failureMessage marks
// its phase failed in the derivation already; a failed in-place step that
// stayed failed past the grace does not (nothing in the objects changes
// when the grace runs out), and the strip went on showing the phase active,
// its clock running, ten minutes after the upgrade had failed. Here the
// phase under way is marked failed, as is the end of the strip, and its
// clock, and the elapsed time, stop at the failure: the step's failure for
// a step, when the failureMessage was first seen for one.
//
// p and tl are left as they are: the next derivation and Observe start
// from them, and a retried step takes the upgrade on from where it was.
func failedStrip(p model.Progress, tl model.Timeline, j report.Judge) (model.Progress, model.Timeline) {
	if j.Reason() == "" {
		return p, tl
	}
	var at time.Time
	if sl, ok := judgedStall(p, j); ok {
		at = sl.Since
	} else if p.Failed {
		at = tl.Finished
	}
	if at.IsZero() {
		// An etcd rollback: the strip shows it rolled back already.
		return p, tl
	}
	i := slices.IndexFunc(p.Phases, func(pp model.PhaseProgress) bool {
		return pp.Status == model.PhaseActive || pp.Status == model.PhaseBroken
	})
	if i < 0 {
		return p, tl
	}
	p.Phases = slices.Clone(p.Phases)
	p.Phases[i].Status = model.PhaseBroken
	p.Failed = true
	tl.Entries = slices.Clone(tl.Entries)
	for k := range tl.Entries {
		if e := &tl.Entries[k]; e.Phase == p.Phases[i].Phase && !e.Started.IsZero() && e.Finished.IsZero() {
			e.Finished = laterOf(at, e.Started)
		}
	}
	if tl.Finished.IsZero() && !tl.Started.IsZero() {
		tl.Finished = laterOf(at, tl.Started)
	}
	return p, tl
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
