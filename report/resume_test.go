package report

import (
	"testing"
	"time"
)

// A gap of StoppedAfter or more between looks is a stop: catching up lasts
// CatchUpFor, and SeenAt is the look before the gap while it lasts.
func TestResumeLooks(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 22, 0, 0, 0, time.UTC)
	var r Resume
	if _, stopped := r.Look(t0); stopped {
		t.Fatal("the first look is no stop")
	}
	if gap, stopped := r.Look(t0.Add(StoppedAfter - time.Second)); stopped || gap != 0 {
		t.Fatalf("a gap under StoppedAfter: %s %v", gap, stopped)
	}
	last := t0.Add(StoppedAfter - time.Second)
	now := last.Add(8 * time.Hour)
	if gap, stopped := r.Look(now); !stopped || gap != 8*time.Hour {
		t.Fatalf("eight hours asleep: %s %v", gap, stopped)
	}
	if !r.CatchingUp(now) || !r.SeenAt(now.Add(time.Second)).Equal(last) {
		t.Errorf("catching up %v, seen at %v; want true, %v", r.CatchingUp(now), r.SeenAt(now), last)
	}
	if after := now.Add(CatchUpFor); r.CatchingUp(after) || !r.SeenAt(after).IsZero() {
		t.Errorf("after the catch-up: catching up %v, seen at %v", r.CatchingUp(after), r.SeenAt(after))
	}
}
