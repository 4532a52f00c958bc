package tui

import (
	"slices"
	"time"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/report"
)

// failedStrip is the progress and timeline the header's phase strip shows
// once the judge has declared the upgrade failed, at declared. A
// failureMessage marks its phase failed in the derivation already; a failed
// in-place step that stayed failed past the grace does not (nothing in the
// objects changes when the grace runs out), and the strip went on showing
// the phase active, its clock running, ten minutes after the upgrade had
// failed. Here the phase under way is marked failed, as is the end of the
// strip, and its clock, and the elapsed time, stop when a failed step was
// declared the upgrade's failure (stopped at the step's own failure, an
// upgrade that had run ten minutes read "elapsed 0:03"), or when a
// failureMessage was first seen, where the timeline stopped already.
//
// p and tl are left as they are: the next derivation and Observe start
// from them, and a retried step takes the upgrade on from where it was.
func failedStrip(p model.Progress, tl model.Timeline, j report.Judge, declared time.Time) (model.Progress, model.Timeline) {
	if j.Reason() == "" || declared.IsZero() {
		return p, tl
	}
	_, stalled := j.FailedOn()
	if !stalled && !p.Failed {
		// An etcd rollback: the strip shows it rolled back already.
		return p, tl
	}
	at := declared
	if !stalled && !tl.Finished.IsZero() {
		// A failureMessage: the timeline stopped when it was first seen.
		at = tl.Finished
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
