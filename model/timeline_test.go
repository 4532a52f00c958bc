package model

import (
	"testing"
	"time"
)

func progressWith(current Phase, st map[Phase]PhaseStatus, since map[Phase]time.Time) Progress {
	p := Progress{Current: current}
	for _, ph := range Phases {
		s, ok := st[ph]
		if !ok {
			s = PhasePending
		}
		p.Phases = append(p.Phases, PhaseProgress{Phase: ph, Status: s, Since: since[ph]})
	}
	return p
}

func TestTimelineElapsedPerPhase(t *testing.T) {
	var tl Timeline
	// Joined mid-etcd: the start comes from the snapshot, marked estimated.
	tl = tl.Observe(progressWith(PhaseEtcd, map[Phase]PhaseStatus{PhaseComponents: PhaseOK, PhaseEtcd: PhaseActive},
		map[Phase]time.Time{PhaseEtcd: t0.Add(-4 * time.Minute)}), t0)
	e, _ := tl.Entry(PhaseEtcd)
	if !e.Estimated || e.Elapsed(t0) != 4*time.Minute {
		t.Fatalf("etcd entry = %+v", e)
	}
	old := tl
	tl = tl.Observe(progressWith(PhaseControlPlane, map[Phase]PhaseStatus{PhaseComponents: PhaseOK, PhaseEtcd: PhaseOK, PhaseControlPlane: PhaseActive}, nil), t0.Add(6*time.Minute))
	if e, _ := old.Entry(PhaseEtcd); !e.Finished.IsZero() {
		t.Fatal("Observe changed the receiver")
	}
	e, _ = tl.Entry(PhaseEtcd)
	if e.Elapsed(t0.Add(time.Hour)) != 10*time.Minute || e.Status != PhaseOK {
		t.Errorf("etcd after done = %+v", e)
	}
	cp, _ := tl.Entry(PhaseControlPlane)
	if cp.Estimated || cp.Elapsed(t0.Add(9*time.Minute)) != 3*time.Minute {
		t.Errorf("cp = %+v", cp)
	}
	if c, _ := tl.Entry(PhaseComponents); !c.Started.IsZero() || c.Elapsed(t0) != 0 {
		t.Errorf("components never seen active: %+v", c)
	}
	all := map[Phase]PhaseStatus{}
	for _, ph := range Phases {
		all[ph] = PhaseOK
	}
	tl = tl.Observe(progressWith(PhaseDone, all, nil), t0.Add(20*time.Minute))
	if tl.Started != t0.Add(-4*time.Minute) || tl.Finished != t0.Add(20*time.Minute) {
		t.Errorf("overall = %s → %s", tl.Started, tl.Finished)
	}
	// A phase that starts over clears its end.
	all[PhaseWorkers] = PhaseActive
	tl = tl.Observe(progressWith(PhaseWorkers, all, nil), t0.Add(21*time.Minute))
	if w, _ := tl.Entry(PhaseWorkers); !w.Finished.IsZero() || w.Started != t0.Add(21*time.Minute) || !tl.Finished.IsZero() {
		t.Errorf("restarted workers = %+v finished=%s", w, tl.Finished)
	}
}

func TestTimelineNeverStartsBeforeTheSpecChanged(t *testing.T) {
	// Joined mid-etcd: the etcd phase's only time hint is a condition from
	// 40 days before the upgrade, whose spec changed 5 minutes ago.
	p := progressWith(PhaseEtcd, map[Phase]PhaseStatus{PhaseComponents: PhaseOK, PhaseEtcd: PhaseActive},
		map[Phase]time.Time{PhaseEtcd: t0.Add(-40 * 24 * time.Hour)})
	p.SpecChangedAt = t0.Add(-5 * time.Minute)
	tl := Timeline{}.Observe(p, t0)
	e, _ := tl.Entry(PhaseEtcd)
	if !e.Started.Equal(p.SpecChangedAt) || e.Elapsed(t0) != 5*time.Minute {
		t.Fatalf("etcd entry = %+v, want started at the spec change", e)
	}
	if !tl.Started.Equal(p.SpecChangedAt) {
		t.Errorf("upgrade started %v, want the spec change %v", tl.Started, p.SpecChangedAt)
	}
}

func TestTimelineForgetsPhasesOfEarlierChanges(t *testing.T) {
	floor := t0.Add(-time.Minute)
	tl := Timeline{Started: t0.Add(-time.Hour), Entries: []TimelineEntry{
		{Phase: PhaseComponents, Status: PhaseOK, Started: t0.Add(-time.Hour), Finished: t0.Add(-50 * time.Minute)},
		{Phase: PhaseEtcd, Status: PhaseActive, Started: t0.Add(-30 * time.Minute)},
		{Phase: PhaseControlPlane, Status: PhasePending},
		{Phase: PhaseCNI, Status: PhasePending},
		{Phase: PhaseWorkers, Status: PhaseOK, Started: t0.Add(-40 * time.Minute), Finished: t0.Add(-35 * time.Minute)},
	}}
	p := progressWith(PhaseEtcd, map[Phase]PhaseStatus{PhaseComponents: PhaseOK, PhaseEtcd: PhaseActive, PhaseWorkers: PhaseOK}, nil)
	p.SpecChangedAt = floor
	got := tl.Observe(p, t0)
	if e, _ := got.Entry(PhaseComponents); !e.Started.Equal(t0.Add(-time.Hour)) {
		t.Error("the components phase precedes the spec change and must be kept")
	}
	if e, _ := got.Entry(PhaseEtcd); !e.Started.Equal(floor) {
		t.Errorf("etcd started %v, want the spec change", e.Started)
	}
	if e, _ := got.Entry(PhaseWorkers); !e.Started.IsZero() || !e.Finished.IsZero() {
		t.Errorf("workers phase of an earlier change kept: %+v", e)
	}
	if !got.Started.Equal(floor) {
		t.Errorf("upgrade started %v, want the spec change", got.Started)
	}
	if e, _ := tl.Entry(PhaseEtcd); !e.Started.Equal(t0.Add(-30 * time.Minute)) {
		t.Error("Observe changed the receiver's entries")
	}
}

// TestTimelineStartSurvivesMetadataWrites follows one upgrade (generation 2)
// through the writes that move SpecChangedAt without changing the spec: the
// elapsed time must count on from the spec change, never restart or leap.
func TestTimelineStartSurvivesMetadataWrites(t *testing.T) {
	applied := t0
	obs := func(tl Timeline, at, specChangedAt time.Time, gen int64, st map[Phase]PhaseStatus, since map[Phase]time.Time) Timeline {
		p := progressWith(PhaseEtcd, st, since)
		p.SpecChangedAt, p.Generation = specChangedAt, gen
		return tl.Observe(p, at)
	}
	elapsed := func(tl Timeline, now time.Time) time.Duration { return now.Sub(tl.Started) }

	// At rest before the apply: nothing under way.
	tl := obs(Timeline{}, applied.Add(-time.Minute), applied.Add(-40*24*time.Hour), 1,
		map[Phase]PhaseStatus{PhaseComponents: PhaseOK, PhaseEtcd: PhaseOK, PhaseControlPlane: PhaseOK, PhaseCNI: PhaseOK, PhaseWorkers: PhaseOK}, nil)
	// The apply (generation 2): the management components upgrade first.
	tl = obs(tl, applied.Add(time.Second), applied, 2, map[Phase]PhaseStatus{PhaseComponents: PhaseActive}, nil)
	if got := elapsed(tl, applied.Add(time.Second)); got != time.Second {
		t.Errorf("elapsed just after the apply = %s, want 1s", got)
	}
	// EKS-A writes the management-components annotation as that phase
	// ends (a metadata write: SpecChangedAt moves, the generation not).
	tl = obs(tl, applied.Add(14*time.Second), applied.Add(8*time.Second), 2,
		map[Phase]PhaseStatus{PhaseComponents: PhaseOK, PhaseEtcd: PhaseActive}, nil)
	if got := elapsed(tl, applied.Add(14*time.Second)); got != 14*time.Second {
		t.Errorf("elapsed after the components annotation = %s, want 14s (it restarted at the annotation)", got)
	}
	// The console's etcd rollback annotates the Cluster (paused).
	tl = obs(tl, applied.Add(5*time.Minute), applied.Add(5*time.Minute-time.Second), 2,
		map[Phase]PhaseStatus{PhaseComponents: PhaseOK, PhaseEtcd: PhaseRolledBack}, nil)
	if got := elapsed(tl, applied.Add(5*time.Minute)); got != 5*time.Minute {
		t.Errorf("elapsed after the rollback annotations = %s, want 5m", got)
	}
	if e, _ := tl.Entry(PhaseEtcd); e.Started != applied.Add(14*time.Second) || e.Finished != applied.Add(5*time.Minute) {
		t.Errorf("etcd entry after the rollback = %+v, want the one started at 14s, stopped at the rollback", e)
	}
	// The annotations go: the newest write is older again, and the control
	// plane phase shows up with a condition time from before the rollback.
	tl = obs(tl, applied.Add(6*time.Minute), applied, 2,
		map[Phase]PhaseStatus{PhaseComponents: PhaseOK, PhaseEtcd: PhaseOK, PhaseControlPlane: PhaseActive},
		map[Phase]time.Time{PhaseControlPlane: applied.Add(-2 * time.Minute)})
	if got := elapsed(tl, applied.Add(6*time.Minute)); got != 6*time.Minute {
		t.Errorf("elapsed after the annotations went = %s, want 6m (it leapt)", got)
	}
	// A new spec change is a new upgrade: the clock starts over there.
	tl = obs(tl, applied.Add(31*time.Minute), applied.Add(30*time.Minute), 3,
		map[Phase]PhaseStatus{PhaseComponents: PhaseOK, PhaseEtcd: PhaseActive}, nil)
	if got := elapsed(tl, applied.Add(31*time.Minute)); got != time.Minute {
		t.Errorf("elapsed of the next upgrade = %s, want 1m from its spec change", got)
	}
}

func TestTimelinePhaseRunAgainAfterTheSpecChangeStartsAnew(t *testing.T) {
	// The console starts while its lists sync (the components phase shows
	// active for a moment, then done); the upgrade applied a minute later
	// runs the management components again.
	tl := Timeline{}
	p := progressWith(PhaseComponents, map[Phase]PhaseStatus{PhaseComponents: PhaseActive}, nil)
	p.Generation, p.SpecChangedAt = 1, t0.Add(-40*24*time.Hour)
	tl = tl.Observe(p, t0)
	all := map[Phase]PhaseStatus{}
	for _, ph := range Phases {
		all[ph] = PhaseOK
	}
	p = progressWith(PhaseDone, all, nil)
	p.Generation, p.SpecChangedAt = 1, t0.Add(-40*24*time.Hour)
	tl = tl.Observe(p, t0.Add(time.Second))
	applied := t0.Add(time.Minute)
	p = progressWith(PhaseComponents, map[Phase]PhaseStatus{PhaseComponents: PhaseActive}, nil)
	p.Generation, p.SpecChangedAt = 2, applied
	tl = tl.Observe(p, applied.Add(time.Second))
	now := applied.Add(10 * time.Second)
	tl = tl.Observe(p, now)
	if e, _ := tl.Entry(PhaseComponents); e.Elapsed(now) > now.Sub(tl.Started) {
		t.Errorf("components phase %s, longer than the upgrade's %s: it counts from before the spec change", e.Elapsed(now), now.Sub(tl.Started))
	}
}

func TestTimelineFollowedPhaseStartsWhenSeen(t *testing.T) {
	// Following an upgrade from its spec change, the control plane phase
	// comes after etcd; its condition turned False when etcd began, which
	// must not be taken for its start.
	applied := t0
	p := progressWith(PhaseEtcd, map[Phase]PhaseStatus{PhaseComponents: PhaseOK, PhaseEtcd: PhaseActive}, nil)
	p.Generation, p.SpecChangedAt = 2, applied
	tl := Timeline{Generation: 1}.Observe(p, applied.Add(time.Second))
	p = progressWith(PhaseControlPlane, map[Phase]PhaseStatus{PhaseComponents: PhaseOK, PhaseEtcd: PhaseOK, PhaseControlPlane: PhaseActive},
		map[Phase]time.Time{PhaseControlPlane: applied.Add(time.Second)})
	p.Generation, p.SpecChangedAt = 2, applied
	cpSeen := applied.Add(2 * time.Minute)
	tl = tl.Observe(p, cpSeen)
	now := cpSeen.Add(30 * time.Second)
	etcd, _ := tl.Entry(PhaseEtcd)
	cp, _ := tl.Entry(PhaseControlPlane)
	if cp.Started != cpSeen || cp.Estimated {
		t.Errorf("control plane started %v (estimated %v), want when seen %v", cp.Started, cp.Estimated, cpSeen)
	}
	if sum, total := etcd.Elapsed(now)+cp.Elapsed(now), now.Sub(tl.Started); sum > total {
		t.Errorf("etcd %s + control plane %s exceed the upgrade's %s", etcd.Elapsed(now), cp.Elapsed(now), total)
	}
}

// Joined in the middle of an upgrade whose earlier phases ran unseen: the
// upgrade began with its spec change, which the API tells, not with the
// phase under way (elapsed 0:05 of an upgrade 22 s in); the phases that
// finished before the console looked show no time.
func TestTimelineJoinedStartsAtTheSpecChange(t *testing.T) {
	applied := t0.Add(-22 * time.Second)
	p := progressWith(PhaseWorkers, map[Phase]PhaseStatus{PhaseComponents: PhaseOK, PhaseEtcd: PhaseOK, PhaseControlPlane: PhaseOK, PhaseCNI: PhaseOK, PhaseWorkers: PhaseActive},
		map[Phase]time.Time{PhaseWorkers: t0.Add(-5 * time.Second)})
	p.Generation, p.SpecChangedAt = 2, applied
	tl := Timeline{}.Observe(p, t0)
	if !tl.Started.Equal(applied) {
		t.Errorf("upgrade started %v, want its spec change %v", tl.Started, applied)
	}
	if w, _ := tl.Entry(PhaseWorkers); w.Elapsed(t0) != 5*time.Second || !w.Estimated {
		t.Errorf("workers entry = %+v, want estimated from its condition", w)
	}
	for _, ph := range []Phase{PhaseComponents, PhaseEtcd, PhaseControlPlane} {
		if e, _ := tl.Entry(ph); e.Elapsed(t0.Add(time.Minute)) != 0 {
			t.Errorf("%s finished before the console looked, yet timed %s", ph, e.Elapsed(t0.Add(time.Minute)))
		}
	}
}

// While the lists sync, a phase whose objects are not seen yet looks under
// way: timed from that and done a moment later, it showed "✓ 0:00".
func TestTimelineDoesNotTimeWhatIsStillSyncing(t *testing.T) {
	p := progressWith(PhaseComponents, map[Phase]PhaseStatus{PhaseComponents: PhaseActive}, nil)
	p.Syncing = true
	tl := Timeline{}.Observe(p, t0)
	all := map[Phase]PhaseStatus{}
	for _, ph := range Phases {
		all[ph] = PhaseOK
	}
	p = progressWith(PhaseDone, all, nil)
	p.Generation, p.SpecChangedAt = 1, t0.Add(-40*24*time.Hour)
	tl = tl.Observe(p, t0.Add(300*time.Millisecond))
	if e, _ := tl.Entry(PhaseComponents); !e.Started.IsZero() || e.Elapsed(t0.Add(time.Hour)) != 0 {
		t.Errorf("components entry = %+v, want no time", e)
	}
	if !tl.Started.IsZero() {
		t.Errorf("a cluster at rest has no upgrade under way: started %v", tl.Started)
	}
}

// A second upgrade that changes a machine config alone moves no generation
// of the Cluster nor its spec's write time: seen done and then rolling
// again, the console left open must time it from when it began, not from
// the first upgrade's spec change, and not add the first run's phases; it
// is a re-rollout of the upgrade, whose own time is kept beside it.
func TestTimelineConfigOnlyChangeAfterDoneStartsAnew(t *testing.T) {
	applied := t0
	all := func(st PhaseStatus, over map[Phase]PhaseStatus) map[Phase]PhaseStatus {
		m := map[Phase]PhaseStatus{}
		for _, ph := range Phases {
			m[ph] = st
		}
		for ph, s := range over {
			m[ph] = s
		}
		return m
	}
	obs := func(tl Timeline, at time.Time, cur Phase, st map[Phase]PhaseStatus) Timeline {
		p := progressWith(cur, st, nil)
		p.Generation, p.SpecChangedAt = 2, applied
		for i := range p.Phases {
			// A phase under way has machines to roll.
			if underWay(p.Phases[i].Status) {
				p.Phases[i].Done, p.Phases[i].Total = 1, 3
			}
		}
		return tl.Observe(p, at)
	}
	tl := Timeline{Generation: 1}
	tl = obs(tl, applied.Add(time.Second), PhaseEtcd, all(PhasePending, map[Phase]PhaseStatus{PhaseComponents: PhaseOK, PhaseEtcd: PhaseActive}))
	tl = obs(tl, applied.Add(40*time.Second), PhaseWorkers, all(PhaseOK, map[Phase]PhaseStatus{PhaseWorkers: PhaseActive}))
	tl = obs(tl, applied.Add(50*time.Second), PhaseDone, all(PhaseOK, nil))
	if got := tl.Finished.Sub(tl.Started); got != 50*time.Second {
		t.Fatalf("first upgrade took %s, want 50s", got)
	}
	// An hour later, a machine config of md-1 changes: the workers roll.
	second := applied.Add(time.Hour)
	tl = obs(tl, second, PhaseWorkers, all(PhaseOK, map[Phase]PhaseStatus{PhaseWorkers: PhaseActive}))
	tl = obs(tl, second.Add(16*time.Second), PhaseDone, all(PhaseOK, nil))
	if got := tl.Finished.Sub(tl.Started); got != 16*time.Second {
		t.Errorf("second upgrade's elapsed = %s, want 16s (timed from the first upgrade's spec change)", got)
	}
	if w, _ := tl.Entry(PhaseWorkers); w.Elapsed(second.Add(time.Hour)) != 16*time.Second {
		t.Errorf("workers phase of the second upgrade = %s, want 16s", w.Elapsed(second.Add(time.Hour)))
	}
	if e, _ := tl.Entry(PhaseEtcd); e.Elapsed(second.Add(time.Hour)) != 0 {
		t.Errorf("etcd phase shows %s: the first upgrade's run, not this one's", e.Elapsed(second.Add(time.Hour)))
	}
	if !tl.Rerun.Equal(second) || tl.UpgradeTook != 50*time.Second {
		t.Errorf("re-rollout %v, upgrade took %s; want a re-rollout at %v of an upgrade of 50s", tl.Rerun, tl.UpgradeTook, second)
	}
	// A third change starts another; its failure, and the recovery that
	// puts it under way again, is the same upgrade going on: only a done
	// upgrade followed by work is a new one.
	tl = obs(tl, second.Add(time.Minute), PhaseWorkers, all(PhaseOK, map[Phase]PhaseStatus{PhaseWorkers: PhaseActive}))
	tl = obs(tl, second.Add(2*time.Minute), PhaseFailed, all(PhaseOK, map[Phase]PhaseStatus{PhaseWorkers: PhaseBroken}))
	tl = obs(tl, second.Add(3*time.Minute), PhaseWorkers, all(PhaseOK, map[Phase]PhaseStatus{PhaseWorkers: PhaseActive}))
	if !tl.Started.Equal(second.Add(time.Minute)) {
		t.Errorf("a failure it recovers from restarted the clock: started %v, want %v", tl.Started, second.Add(time.Minute))
	}
}

// A console stopped (a laptop asleep) while the control plane finished and
// then the whole upgrade: on resume each ends at its condition's time in the
// stop, estimated, not at the resume; the elapsed time stops there too. An
// end outside the stop, or none, is when seen.
func TestTimelineResumedEndsPhasesWhenTheyEndedUnseen(t *testing.T) {
	applied := t0
	st := map[Phase]PhaseStatus{PhaseComponents: PhaseOK, PhaseEtcd: PhaseOK, PhaseControlPlane: PhaseActive}
	p := progressWith(PhaseControlPlane, st, nil)
	p.Generation, p.SpecChangedAt = 2, applied
	tl := Timeline{Generation: 1}.Observe(p, applied.Add(time.Second))
	seenAt := applied.Add(5 * time.Minute)
	tl = tl.Observe(p, seenAt)

	// Eight hours later: the control plane ended 10 minutes into the stop,
	// the workers are under way.
	cpEnd := seenAt.Add(10 * time.Minute)
	st[PhaseControlPlane], st[PhaseCNI], st[PhaseWorkers] = PhaseOK, PhaseOK, PhaseActive
	p = progressWith(PhaseWorkers, st, map[Phase]time.Time{PhaseControlPlane: cpEnd})
	p.Generation, p.SpecChangedAt = 2, applied
	now := seenAt.Add(8 * time.Hour)
	resumed := tl.ObserveResumed(p, now, seenAt)
	if cp, _ := resumed.Entry(PhaseControlPlane); cp.Finished != cpEnd || !cp.Estimated {
		t.Errorf("control plane ended %v (estimated %v), want %v, estimated", cp.Finished, cp.Estimated, cpEnd)
	}
	// Observe alone knows of no stop: when seen.
	if cp, _ := tl.Observe(p, now).Entry(PhaseControlPlane); cp.Finished != now || cp.Estimated {
		t.Errorf("not resumed: control plane ended %v (estimated %v), want %v", cp.Finished, cp.Estimated, now)
	}
	// An end before the last look is no end in the stop: when seen.
	early := progressWith(PhaseWorkers, st, map[Phase]time.Time{PhaseControlPlane: seenAt.Add(-time.Minute)})
	early.Generation, early.SpecChangedAt = 2, applied
	if cp, _ := tl.ObserveResumed(early, now, seenAt).Entry(PhaseControlPlane); cp.Finished != now {
		t.Errorf("end before the stop: control plane ended %v, want %v", cp.Finished, now)
	}

	// Stopped again; the workers ended an hour in, and the upgrade with them.
	seenAt2 := now.Add(time.Minute)
	tl = resumed.Observe(p, seenAt2)
	wEnd := seenAt2.Add(time.Hour)
	for _, ph := range Phases {
		st[ph] = PhaseOK
	}
	p = progressWith(PhaseDone, st, map[Phase]time.Time{PhaseWorkers: wEnd})
	p.Generation, p.SpecChangedAt = 2, applied
	tl = tl.ObserveResumed(p, seenAt2.Add(9*time.Hour), seenAt2)
	if w, _ := tl.Entry(PhaseWorkers); w.Finished != wEnd || tl.Finished != wEnd {
		t.Errorf("workers ended %v, the upgrade %v; want both %v", w.Finished, tl.Finished, wEnd)
	}
}

// After the upgrade is done, the EKS-A controller turns ControlPlaneReady
// False for a reconcile over machines all up to date: the upgrade stays
// done, its times kept, where each such flip started a new run of a few
// seconds. Machines that then roll, in the same generation, are a
// re-rollout timed from when the phase was first seen under way again.
func TestTimelineConditionFlipAfterDoneKeepsTheUpgrade(t *testing.T) {
	applied := t0
	obs := func(tl Timeline, at time.Time, cur Phase, st map[Phase]PhaseStatus, done, total int) Timeline {
		p := progressWith(cur, st, nil)
		p.Generation, p.SpecChangedAt = 2, applied
		for i := range p.Phases {
			if p.Phases[i].Phase == PhaseControlPlane {
				p.Phases[i].Done, p.Phases[i].Total = done, total
			}
		}
		return tl.Observe(p, at)
	}
	ok := map[Phase]PhaseStatus{}
	cpActive := map[Phase]PhaseStatus{PhaseControlPlane: PhaseActive}
	for _, ph := range Phases {
		ok[ph] = PhaseOK
		if ph != PhaseControlPlane {
			cpActive[ph] = PhaseOK
		}
	}
	tl := Timeline{Generation: 1}
	tl = obs(tl, applied.Add(time.Second), PhaseControlPlane, cpActive, 1, 3)
	tl = obs(tl, applied.Add(5*time.Minute), PhaseDone, ok, 3, 3)
	done := tl
	cp, _ := done.Entry(PhaseControlPlane)
	later := applied.Add(time.Hour)
	for _, at := range []time.Time{later, later.Add(5 * time.Second)} {
		tl = obs(tl, at, PhaseControlPlane, cpActive, 3, 3)
		if !tl.Started.Equal(done.Started) || !tl.Finished.Equal(done.Finished) || !tl.Rerun.IsZero() {
			t.Fatalf("a flip over machines up to date restarted the upgrade: started %v finished %v rerun %v, want %v %v",
				tl.Started, tl.Finished, tl.Rerun, done.Started, done.Finished)
		}
		if e, _ := tl.Entry(PhaseControlPlane); e.Elapsed(at) != cp.Elapsed(at) {
			t.Fatalf("the control plane's time went from %s to %s", cp.Elapsed(at), e.Elapsed(at))
		}
	}
	tl = obs(tl, later.Add(10*time.Second), PhaseDone, ok, 3, 3)
	if !tl.Started.Equal(done.Started) || !tl.Finished.Equal(done.Finished) || !tl.Reopened.IsZero() {
		t.Errorf("done again: elapsed %s, reopened %v; want the upgrade's 5:00 and nothing pending", tl.Finished.Sub(tl.Started), tl.Reopened)
	}
	// A flip that turns into machines rolling: the re-rollout began when
	// the phase was first seen under way.
	again := later.Add(time.Hour)
	tl = obs(tl, again, PhaseControlPlane, cpActive, 3, 3)
	tl = obs(tl, again.Add(20*time.Second), PhaseControlPlane, cpActive, 2, 3)
	if !tl.Rerun.Equal(again) || !tl.Started.Equal(again) || !tl.Finished.IsZero() || tl.UpgradeTook != 5*time.Minute {
		t.Errorf("re-rollout %v started %v finished %v, upgrade took %s; want a re-rollout from %v, running, of an upgrade of 5:00",
			tl.Rerun, tl.Started, tl.Finished, tl.UpgradeTook, again)
	}
	// A new generation is a new upgrade, no re-rollout.
	p := progressWith(PhaseControlPlane, cpActive, nil)
	p.Generation, p.SpecChangedAt = 3, again.Add(time.Hour)
	if tl = tl.Observe(p, again.Add(time.Hour+time.Second)); !tl.Rerun.IsZero() || tl.UpgradeTook != 0 {
		t.Errorf("a new generation kept the re-rollout: %v, %s", tl.Rerun, tl.UpgradeTook)
	}
}
