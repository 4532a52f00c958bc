package model

import "time"

// Timeline remembers, across snapshots, when each phase became active and
// when it finished, so the header can show the time spent per phase. It is a
// value: Observe returns an updated copy and never changes the receiver, so a
// renderer may keep the old one.
type Timeline struct {
	Entries []TimelineEntry // in Phases order
	// Started is when the first phase was seen active; Finished when the
	// upgrade was first seen done or failed (zero while it runs).
	Started, Finished time.Time
	// Generation and SpecChangedAt are the EKS-A Cluster generation the
	// timeline follows and the spec change that started it, which is the
	// upgrade's start whether the timeline saw the change or joined after
	// it: the API tells it (Progress.SpecChangedAt). A start taken from the
	// earliest phase under way measured that phase only (elapsed 0:05 of
	// an upgrade 22 s in). It is taken once per generation: only a spec
	// change moves the generation, and should the time move with a write
	// that is not one (an older API server's managedFields, a manager that
	// owns spec and annotations), following it would restart the clock in
	// the middle of an upgrade, or make it leap when it fell back.
	Generation    int64
	SpecChangedAt time.Time
	// Reopened is when a phase was first seen under way again after the
	// upgrade was seen done, in the same generation, while no phase shows
	// a unit to roll (rerolling): the EKS-A controller turns a condition
	// False for a reconcile now and then. The done upgrade stays as it was
	// meanwhile; zero when nothing is under way, or a re-rollout began.
	Reopened time.Time
	// Rerun is when a re-rollout of the same generation began (a machine
	// or datacenter config changed alone, which moves no generation), the
	// first time a phase was seen under way again after the upgrade was
	// done; Started and Finished then time it, and UpgradeTook keeps the
	// upgrade's own time. Zero for an upgrade that has not rolled again.
	Rerun       time.Time
	UpgradeTook time.Duration
}

// TimelineEntry is one phase of the timeline.
type TimelineEntry struct {
	Phase  Phase
	Status PhaseStatus
	// Started is when the phase was first seen active. When the console
	// joins an upgrade already under way it is taken from the snapshot's own
	// timestamps (PhaseProgress.Since) and Estimated is true.
	Started   time.Time
	Estimated bool
	// Finished is when the phase was first seen done after being active;
	// zero while it runs. A phase that goes back to active (a rollout that
	// starts over) clears it.
	Finished time.Time
}

// Elapsed is the time spent in the phase: up to now while it runs, up to its
// end once finished, zero when it never started.
func (e TimelineEntry) Elapsed(now time.Time) time.Duration {
	switch {
	case e.Started.IsZero():
		return 0
	case !e.Finished.IsZero():
		return e.Finished.Sub(e.Started)
	default:
		return max(now.Sub(e.Started), 0)
	}
}

// Entry returns the entry of a phase.
func (t Timeline) Entry(ph Phase) (TimelineEntry, bool) {
	for _, e := range t.Entries {
		if e.Phase == ph {
			return e, true
		}
	}
	return TimelineEntry{}, false
}

// Observe folds one derived Progress into the timeline.
func (t Timeline) Observe(p Progress, now time.Time) Timeline {
	return t.ObserveResumed(p, now, time.Time{})
}

// ObserveResumed is Observe for a console that did not run from seenAt
// until a moment before now (ctrl+z, a laptop asleep) and is catching up: a
// phase first seen done then ended while nobody looked, and its end is the
// snapshot's time for it (PhaseProgress.Since, its condition's transition)
// when that falls in the stop, marked Estimated. Timed at now, a control
// plane done ten minutes into a night's sleep read as a phase of 8:10, and
// the upgrade's elapsed time ran on to the morning. A zero seenAt is
// Observe.
func (t Timeline) ObserveResumed(p Progress, now, seenAt time.Time) Timeline {
	if p.Syncing {
		// A phase may look under way only because its objects are not
		// listed yet: timed from that, a phase done before the console
		// started showed "✓ 0:00", which measures nothing.
		return t
	}
	next := Timeline{Entries: make([]TimelineEntry, len(Phases)), Started: t.Started, Finished: t.Finished,
		Generation: p.Generation, SpecChangedAt: p.SpecChangedAt}
	// sameUpgrade: the generation the timeline follows, whose start is
	// kept as it was (a generation of 0 is unknown and proves nothing).
	sameUpgrade := p.Generation != 0 && p.Generation == t.Generation
	if sameUpgrade && !t.SpecChangedAt.IsZero() {
		next.SpecChangedAt = t.SpecChangedAt
	}
	if sameUpgrade {
		next.Rerun, next.UpgradeTook = t.Rerun, t.UpgradeTook
	}
	following := sameUpgrade && !t.Started.IsZero()
	if sameUpgrade && t.doneAt() && progressUnderWay(p) {
		if !rerolling(p) {
			// A condition turned False for a reconcile, no unit to roll:
			// the upgrade stays done, its times as they were. Taken for a
			// new run, each such flip threw the upgrade's times away and
			// showed a fresh one of a few seconds.
			next := t
			if next.Reopened.IsZero() {
				next.Reopened = now
			}
			return next
		}
		// Seen done, and rolling again in the same generation: a change
		// to a machine or datacenter config alone, which moves no
		// generation of the Cluster (nor its spec's write time). It is a
		// re-rollout of this upgrade, timed from when it was first seen
		// under way; kept as the run it followed, an open console timed it
		// from the first upgrade's spec change (elapsed 1:48 of a 16 s
		// rollout, hours on a console left open between two upgrades) and
		// added the earlier run to its phases.
		start := now
		if !t.Reopened.IsZero() {
			start = t.Reopened
		}
		if next.Rerun.IsZero() {
			next.UpgradeTook = t.Finished.Sub(t.Started)
		}
		next.SpecChangedAt, next.Rerun = start, start
		following = false
	}
	underway := false
	for i, ph := range Phases {
		var e TimelineEntry
		if i < len(t.Entries) {
			e = t.Entries[i]
		}
		e.Phase = ph
		pp, ok := phaseOf(p, ph)
		if !ok {
			next.Entries[i] = e
			continue
		}
		switch pp.Status {
		case PhaseActive, PhaseBroken, PhaseHeld:
			if !e.Finished.IsZero() && e.Finished.Before(next.SpecChangedAt) {
				// Finished before this upgrade's spec change: this is a
				// new run of the phase, not the old one going on (the
				// components phase, which clampTo leaves alone, would
				// otherwise count the time since the console started).
				e.Started, e.Estimated = time.Time{}, false
			}
			if e.Started.IsZero() {
				e.Started = now
				// Condition times stand in for starts the timeline did not
				// see, when it joins an upgrade. Once it follows one, a
				// phase starts when seen: the control plane's condition
				// turned False when etcd began ("Etcd is not ready"), and
				// as its start it doubled the etcd phase's time.
				if !following && !pp.Since.IsZero() && pp.Since.Before(now) {
					e.Started, e.Estimated = pp.Since, true
				}
			}
			if pp.Status != PhaseBroken {
				e.Finished = time.Time{}
			}
		case PhaseRolledBack:
			// The upgrade's work on the phase ended when the rollback
			// began: its time stops there, not when the rollback ends or
			// the pause goes. First seen rolled back, it has no time this
			// console measured.
			if !e.Started.IsZero() && e.Finished.IsZero() {
				e.Finished = now
				if r := p.EtcdRollback; r != nil && r.StartedAt.After(e.Started) && r.StartedAt.Before(now) {
					e.Finished = r.StartedAt
				}
			}
		case PhaseOK:
			if !e.Started.IsZero() && e.Finished.IsZero() {
				e.Finished = now
				if !seenAt.IsZero() && pp.Since.After(seenAt) && pp.Since.After(e.Started) && pp.Since.Before(now) {
					e.Finished, e.Estimated = pp.Since, true
				}
			}
		}
		e.Status = pp.Status
		next.Entries[i] = e
		if underWay(pp.Status) {
			underway = true
			if !e.Started.IsZero() && (next.Started.IsZero() || e.Started.Before(next.Started)) {
				next.Started = e.Started
			}
		}
	}
	switch {
	case p.Current == PhaseDone || p.Current == PhaseFailed:
		if next.Finished.IsZero() && !next.Started.IsZero() {
			next.Finished = now
			if !seenAt.IsZero() && p.Current == PhaseDone {
				// Done while nobody looked: when its last phase ended,
				// if that is known to fall in the stop.
				if end := next.lastFinished(); end.After(seenAt) && end.Before(now) {
					next.Finished = end
				}
			}
		}
	default:
		next.Finished = time.Time{}
	}
	next.clampTo(next.SpecChangedAt)
	switch {
	case following:
		// Once the upgrade's start is known it stays: a later estimate
		// (a phase first seen with an older condition time) would make
		// the elapsed time leap.
		next.Started = t.Started
	case underway && !next.SpecChangedAt.IsZero():
		// The upgrade began with the spec change: a moment before its
		// first phase was seen under way, or, joined, before phases that
		// finished unseen.
		next.Started = next.SpecChangedAt
	}
	return next
}

// lastFinished is the latest end of a phase, zero when none ended.
func (t Timeline) lastFinished() time.Time {
	var end time.Time
	for _, e := range t.Entries {
		if e.Finished.After(end) {
			end = e.Finished
		}
	}
	return end
}

// doneAt reports whether the timeline last saw the upgrade done: finished,
// with no phase under way (a failed one keeps its phase under way).
func (t Timeline) doneAt() bool {
	if t.Finished.IsZero() {
		return false
	}
	for _, e := range t.Entries {
		if underWay(e.Status) {
			return false
		}
	}
	return true
}

// rerolling reports whether a phase under way has units not up to date
// (machines, members, nodes to roll): what tells a re-rollout from a
// condition EKS-A turns False for a reconcile over machines all up to date.
func rerolling(p Progress) bool {
	for _, pp := range p.Phases {
		if underWay(pp.Status) && pp.Done < pp.Total {
			return true
		}
	}
	return false
}

// progressUnderWay reports whether a phase of p is under way.
func progressUnderWay(p Progress) bool {
	for _, pp := range p.Phases {
		if underWay(pp.Status) {
			return true
		}
	}
	return false
}

// underWay reports whether a phase status means the upgrade has reached the
// phase and not finished it.
func underWay(s PhaseStatus) bool {
	return s == PhaseActive || s == PhaseBroken || s == PhaseHeld || s == PhaseRolledBack
}

// clampTo keeps the phases EKS-A runs after the spec change from starting
// before it. Two cases put them earlier: joining an upgrade under way, where
// starts are estimated from condition times (a condition that last changed 40
// days ago would read as a 40-day phase), and a phase seen active before this
// upgrade (machines coming up after a scale-out), whose old start would
// otherwise be kept. The management components are upgraded before the spec is
// applied, so their phase is left alone.
func (t *Timeline) clampTo(specChangedAt time.Time) {
	if specChangedAt.IsZero() {
		return
	}
	for i := range t.Entries {
		e := &t.Entries[i]
		if e.Phase == PhaseComponents || e.Started.IsZero() || !e.Started.Before(specChangedAt) {
			continue
		}
		if !e.Finished.IsZero() && e.Finished.Before(specChangedAt) {
			// Work of an earlier change, not of this upgrade.
			e.Started, e.Finished, e.Estimated = time.Time{}, time.Time{}, false
			continue
		}
		e.Started = specChangedAt
	}
	if !t.Started.IsZero() && t.Started.Before(specChangedAt) {
		t.Started = specChangedAt
	}
}

func phaseOf(p Progress, ph Phase) (PhaseProgress, bool) {
	for _, pp := range p.Phases {
		if pp.Phase == ph {
			return pp, true
		}
	}
	return PhaseProgress{}, false
}
