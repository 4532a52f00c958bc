package sim

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestPacer(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := &pacer{clock: clk, due: map[string]time.Time{}}
	if left, ok := p.wait("a", 3*time.Second); ok || left != 3*time.Second {
		t.Fatalf("first ask: %s %v", left, ok)
	}
	clk.Step(time.Second)
	// Asking again does not restart the delay.
	if left, ok := p.wait("a", 3*time.Second); ok || left != 2*time.Second {
		t.Fatalf("second ask: %s %v", left, ok)
	}
	clk.Step(2 * time.Second)
	if _, ok := p.wait("a", 3*time.Second); !ok {
		t.Fatal("not done after the delay")
	}
	if _, ok := p.wait("b", time.Second); ok {
		t.Fatal("steps share a delay")
	}
}

func TestTimingsScale(t *testing.T) {
	d := DefaultTimings()
	s := d.scale(10)
	if s.Provision != d.Provision/10 || s.CNI != d.CNI/10 {
		t.Errorf("scaled %+v", s)
	}
	// The rolling demo: three etcd members, three control plane
	// machines, CNI, then two machines per worker group in parallel.
	machine := d.Boot + d.Provision + d.Join
	total := 3*(machine+d.EtcdHealth) + 3*(machine+d.Drain) + d.CNI + 2*(machine+d.Drain)
	if total < time.Minute || total > 150*time.Second {
		t.Errorf("the default demo would take %s, not about two minutes", total)
	}
}

// The kubelet's back-off doubles from 10s at each rerun and stops at 5
// minutes; at another speed, scaled as every timing is, and said to the
// millisecond.
func TestCrashBackOff(t *testing.T) {
	for _, c := range []struct {
		speed float64
		want  []time.Duration
	}{
		{1, []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 5 * time.Minute, 5 * time.Minute}},
		{3, []time.Duration{3333 * time.Millisecond, 6667 * time.Millisecond, 13333 * time.Millisecond, 26667 * time.Millisecond, 53333 * time.Millisecond, 100 * time.Second, 100 * time.Second}},
	} {
		tm := DefaultTimings().scale(c.speed)
		for i, want := range c.want {
			if got := tm.crashBackOff(int32(i + 1)); got != want {
				t.Errorf("speed %g, %d restarts: back-off %s, want %s", c.speed, i+1, got, want)
			}
		}
	}
}
