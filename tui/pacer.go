package tui

import (
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Pacer tells the watchers when to take a snapshot they are holding back so
// that it is drawn just before Bubble Tea's renderer writes the terminal.
//
// The renderer writes on a fixed ticker (rendererFPS), so a frame built just
// after a write waits a whole tick to be seen. Under load the watchers
// publish every 100 ms; taken at an arbitrary phase, each snapshot then also
// waits up to 50 ms for the write, and the changes that arrive during that
// wait miss it. Paced, a held-back snapshot is taken lead before the write
// it would make anyway, and holds every change until then. A change after a
// quiet spell is not held back: it is published at once, as before.
//
// The Pacer learns the ticker's phase from the writes themselves (RunApp
// wraps the terminal when Options.Pacer is set): a write comes at a tick or a little after it, when
// the process was busy, never before, so the earliest phase among the
// latest writes is the tick's.
type Pacer struct {
	period time.Duration
	lead   time.Duration

	mu     sync.Mutex
	writes [8]int64 // unix ns of the latest writes, a ring
	n      int      // writes seen

	// sized is set once the UI knows the terminal's size: from then on the
	// renderer's writes carry frames with content. drawn is closed after
	// the first such write.
	sized     atomic.Bool
	drawn     chan struct{}
	drawnOnce sync.Once
}

// NewPacer returns a Pacer for the renderer of RunApp.
func NewPacer() *Pacer {
	return newPacer(time.Second/rendererFPS, pacerLead)
}

// pacerLead is how long before the renderer's write a paced snapshot is
// taken: enough for the snapshot to reach the dashboard and for its rebuild
// and View at 10,000 nodes (about 2 ms, bench_test.go), with room for a
// busy machine. A frame that misses the write waits a tick, so the lead errs
// long.
const pacerLead = 15 * time.Millisecond

func newPacer(period, lead time.Duration) *Pacer {
	return &Pacer{period: period, lead: lead, drawn: make(chan struct{})}
}

// FirstFrame is closed once the renderer has written the first frame drawn
// at the terminal's size: the dashboard is on the screen. It is for
// watchers.Options.Begin.
func (p *Pacer) FirstFrame() <-chan struct{} { return p.drawn }

// setSized tells the Pacer that the UI has the terminal's size.
func (p *Pacer) setSized() { p.sized.Store(true) }

// wrote records a write to the terminal at t.
func (p *Pacer) wrote(t time.Time) {
	p.mu.Lock()
	p.writes[p.n%len(p.writes)] = t.UnixNano()
	p.n++
	p.mu.Unlock()
}

// tick is the time of a renderer tick learnt from the writes, false before
// the first.
func (p *Pacer) tick() (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == 0 {
		return 0, false
	}
	newest := p.writes[(p.n-1)%len(p.writes)]
	period := int64(p.period)
	earliest := int64(0)
	for i := range min(p.n, len(p.writes)) {
		// Offset of this write's phase from the newest's, in
		// (-period/2, period/2].
		off := ((p.writes[i]-newest)%period + period) % period
		if off > period/2 {
			off -= period
		}
		earliest = min(earliest, off)
	}
	return newest + earliest, true
}

// Next is when to take a snapshot held back until t: at the renderer's
// first write that a snapshot taken at t could still make (one at least
// pacerMargin after t), less lead, and never before t. Taken at t, the
// snapshot would be drawn by that write too; taken as late as this, it also
// holds the changes until then. t itself before the Pacer has seen a write.
// It is watchers.Options.Pace.
func (p *Pacer) Next(t time.Time) time.Time {
	tick, ok := p.tick()
	if !ok {
		return t
	}
	period := int64(p.period)
	// The first tick at or after t+margin.
	d := t.UnixNano() + int64(pacerMargin) - tick
	k := d / period // rounded toward zero: up when d < 0
	if d > 0 && d%period != 0 {
		k++
	}
	if at := time.Unix(0, tick+k*period-int64(p.lead)); at.After(t) {
		return at
	}
	return t
}

// pacerMargin is the least time a snapshot takes to reach the screen's
// next write (watchers to dashboard, rebuild, View): a write closer than
// that after t is out of reach whenever the snapshot is taken.
const pacerMargin = 2 * time.Millisecond

// pacedOutput is the terminal with every write recorded. It is still an
// *os.File to Bubble Tea (Fd, Read, Close), which needs that to see a
// terminal.
type pacedOutput struct {
	*os.File
	p   *Pacer
	log *writeLog // nil unless the frame log is on
}

func (o pacedOutput) Write(b []byte) (int, error) {
	now := time.Now()
	o.p.wrote(now)
	n, err := o.File.Write(b)
	o.log.wrote(now, n)
	if o.p.sized.Load() {
		o.p.drawnOnce.Do(func() { close(o.p.drawn) })
	}
	return n, err
}

// output wraps the terminal f so that the Pacer sees the renderer's writes.
func (p *Pacer) output(f *os.File) pacedOutput {
	return pacedOutput{File: f, p: p, log: openWriteLog()}
}
