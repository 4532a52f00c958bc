package tui

import (
	"os"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"
)

// Bubble Tea only treats its output as a terminal (raw mode, size) when it
// is a term.File; the paced output must stay one.
var _ term.File = pacedOutput{}

func TestPacerNext(t *testing.T) {
	ms := time.Millisecond
	base := time.Unix(1_000, 0)
	at := func(d time.Duration) time.Time { return base.Add(d) }
	p := newPacer(50*ms, 15*ms)

	if got := p.Next(at(7 * ms)); !got.Equal(at(7 * ms)) {
		t.Errorf("before any write Next = %s, want its argument", got.Sub(base))
	}

	// Ticks at base + 50k ms; the renderer wrote at three of them, one
	// 20 ms late (a busy process): the phase is the on-time writes'.
	p.wrote(at(0))
	p.wrote(at(70 * ms))
	p.wrote(at(100 * ms))
	for _, c := range []struct{ t, want time.Duration }{
		{100 * ms, 135 * ms}, // the tick at 150, less the lead
		{135 * ms, 135 * ms}, // already on a paced time
		{136 * ms, 136 * ms}, // within the lead of 150: at once, as unpaced
		{148 * ms, 148 * ms}, // 150 can still be made
		{149 * ms, 185 * ms}, // 150 cannot (the margin): the next tick's time
		{-80 * ms, -65 * ms}, // before the writes: the same grid
		{-65 * ms, -65 * ms},
	} {
		if got := p.Next(at(c.t)).Sub(base); got != c.want {
			t.Errorf("Next(%s) = %s, want %s", c.t, got, c.want)
		}
	}

	// The renderer restarted at a new phase (+20 ms): once the writes
	// before the restart have left the ring, the new phase wins.
	for i := range 8 {
		p.wrote(at(1000*ms + time.Duration(i)*50*ms + 20*ms))
	}
	if got, want := p.Next(at(1500*ms)).Sub(base), 1520*ms-15*ms; got != want {
		t.Errorf("after a restart Next = %s, want %s", got, want)
	}
}

func TestPacedOutputRecordsWrites(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := newPacer(50*time.Millisecond, 15*time.Millisecond)
	before := time.Now()
	if _, err := p.output(f).Write([]byte("frame")); err != nil {
		t.Fatal(err)
	}
	tick, ok := p.tick()
	if !ok || tick < before.UnixNano() || tick > time.Now().UnixNano() {
		t.Errorf("tick = %d (known %v), want the write's time, after %d", tick, ok, before.UnixNano())
	}
	data, _ := os.ReadFile(f.Name())
	if string(data) != "frame" {
		t.Errorf("file holds %q", data)
	}
}

// FirstFrame closes at the first write after the App learnt the terminal's
// size (Bubble Tea's first write can be its queries to the terminal alone),
// and not before.
func TestFirstFrameAfterTheSize(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := NewPacer()
	out := p.output(f)
	closed := func() bool {
		select {
		case <-p.FirstFrame():
			return true
		default:
			return false
		}
	}
	if _, err := out.Write([]byte("\x1b[?u\x1b[c")); err != nil {
		t.Fatal(err)
	}
	if closed() {
		t.Fatal("FirstFrame closed by a write before the size was known")
	}
	a := NewApp(Options{Pacer: p}, NewDashboard(Options{}))
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if closed() {
		t.Fatal("FirstFrame closed before any write of the frame")
	}
	for range 2 {
		if _, err := out.Write([]byte("frame")); err != nil {
			t.Fatal(err)
		}
		if !closed() {
			t.Fatal("FirstFrame open after the frame's write")
		}
	}
}
