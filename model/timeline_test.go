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
