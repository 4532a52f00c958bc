package watchers

import (
	"context"
	"sync"
	"testing"
	"time"
)

// A change after a quiet spell is published at once; with Pace set, a
// held-back snapshot is taken no earlier than the time Pace gives, and the
// next one's earliest time is MinInterval after that schedule, not after
// the moment the timer happened to fire: measured from the timer, a paced
// publisher would drift a tick late whenever its timer fired late.
func TestPaceMovesHeldBackSnapshotsAndKeepsTheSchedule(t *testing.T) {
	w, _ := benchWatcher(t)
	const interval = time.Second
	w.opts.MinInterval = interval
	const delay = 30 * time.Millisecond
	var mu sync.Mutex
	var asked, gave []time.Time
	w.opts.Pace = func(earliest time.Time) time.Time {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, earliest)
		at := earliest.Add(delay)
		gave = append(gave, at)
		return at
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.publishLoop(ctx)
	}()
	defer func() { cancel(); <-done }()

	w.changed()
	first := <-w.Updates()
	mu.Lock()
	if len(asked) != 0 {
		t.Errorf("Pace asked about a change after a quiet spell (earliest %s)", asked[0])
	}
	mu.Unlock()
	w.changed()
	second := <-w.Updates()
	w.changed()
	third := <-w.Updates()

	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 {
		t.Fatalf("Pace asked %d times, want 2 (the held-back snapshots)", len(asked))
	}
	if asked[0].Before(first.At.Add(interval)) {
		t.Errorf("second earliest %s is less than MinInterval after the first snapshot (%s)", asked[0], first.At)
	}
	if second.At.Before(gave[0]) {
		t.Errorf("second snapshot taken at %s, before the paced time %s", second.At, gave[0])
	}
	if want := gave[0].Add(interval); !asked[1].Equal(want) {
		t.Errorf("third earliest = %s, want the second's paced time + MinInterval = %s", asked[1], want)
	}
	if third.At.Before(gave[1]) {
		t.Errorf("third snapshot taken at %s, before the paced time %s", third.At, gave[1])
	}
}
