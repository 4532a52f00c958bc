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
