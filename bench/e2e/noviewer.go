package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// NoViewer is the write load with no viewer attached, run before any viewer
// starts: the API server's own write path, the floor under every
// write → screen figure (a viewer's latency counts from the write's send,
// so it includes this).
type NoViewer struct {
	Rate     *Unviewed `json:"rate,omitempty"`
	Saturate *Unviewed `json:"saturate,omitempty"`
}

// Unviewed is one write window with no viewer.
type Unviewed struct {
	// RatePerSec is the asked rate (fixed-rate window); Writers the
	// concurrent writers (saturation window).
	RatePerSec float64 `json:"rate_per_s,omitempty"`
	Writers    int     `json:"writers,omitempty"`
	Seconds    float64 `json:"seconds"`
	APIWrite   dist    `json:"api_write"`
	// WritesPerSec counts what the driver really made, as the viewers'
	// rate_achieved_per_s (fixed rate: every write sent) and
	// saturate_writes_per_s (saturation: the writes that succeeded) do.
	WritesPerSec float64 `json:"writes_per_s"`
	// NotSent counts the fixed rate's ticks that sent nothing: every
	// machine of the pool had a write under way.
	NotSent            int     `json:"not_sent,omitempty"`
	Failed             int     `json:"failed"`
	ControlPlaneCPUPct float64 `json:"control_plane_cpu_pct"`
	// P99By5s is the write p99 of each 5 s of the window (by send time):
	// flat when the API server keeps up, rising when writes queue, in which
	// case the window's p99 depends on its length.
	P99By5s []float64 `json:"api_write_p99_ms_by_5s,omitempty"`
	// APIServerGC is kube-apiserver's collector in the window
	// (--apiserver-gctrace), filled in by gcWindows.
	APIServerGC *APIServerGC `json:"apiserver_gc,omitempty"`

	from, to time.Time
}

// gcWindows fills in each window's APIServerGC. Called once the run is
// over: a collection is known when it ends, so one still marking when a
// window closed would be missed if asked then.
func (nv *NoViewer) gcWindows(g *gcTrace) {
	if nv == nil {
		return
	}
	for _, u := range []*Unviewed{nv.Rate, nv.Saturate} {
		if u != nil {
			u.APIServerGC = g.window(u.from, u.to)
		}
	}
}

// noViewer runs the fixed rate and then saturation with no viewer, and
// lets the world settle before a viewer starts.
func (b *bench) noViewer(ctx context.Context) (*NoViewer, error) {
	o := b.o
	nv := &NoViewer{}
	logf("API server with no viewer: %g writes/s for %s", o.rate, o.noViewerDur)
	cp := startCPU(b.apiPid, b.etcdPid)
	from := time.Now()
	ws, notSent := b.drv.atRate(ctx, o.rate, o.noViewerDur, &b.next)
	r := &Unviewed{RatePerSec: o.rate, Seconds: o.noViewerDur.Seconds(), NotSent: notSent, ControlPlaneCPUPct: cp.percent(),
		from: from, to: time.Now()}
	r.APIWrite, r.Failed = apiLatency(ws)
	r.WritesPerSec = float64(len(ws)) / r.Seconds
	r.P99By5s = p99By(ws, 5*time.Second)
	nv.Rate = r
	if err := b.checkWrites(ctx, "no viewer", ws); err != nil {
		return nil, err
	}
	if err := sleep(ctx, 2*time.Second); err != nil {
		return nil, err
	}

	dur := min(o.satDur, o.noViewerDur)
	logf("API server with no viewer: saturating with %d writers for %s", o.satWorkers, dur)
	cp = startCPU(b.apiPid, b.etcdPid)
	began := time.Now()
	ws = b.drv.saturate(ctx, o.satWorkers, dur)
	s := &Unviewed{Writers: o.satWorkers, Seconds: time.Since(began).Seconds(), ControlPlaneCPUPct: cp.percent(),
		from: began, to: time.Now()}
	s.APIWrite, s.Failed = apiLatency(ws)
	s.WritesPerSec = float64(len(okWrites(ws))) / s.Seconds
	s.P99By5s = p99By(ws, 5*time.Second)
	nv.Saturate = s
	if err := b.checkWrites(ctx, "no viewer", ws); err != nil {
		return nil, err
	}
	logf("API server with no viewer: settling for %s", o.settle)
	return nv, sleep(ctx, o.settle)
}

// checkWrites logs a window's failed writes and, when there are any, reads
// the machines' phases back: a write that failed (a timeout) may still have
// been applied, and the driver would then set a phase a machine already
// has, a write no viewer shows as a change.
func (b *bench) checkWrites(ctx context.Context, name string, ws []write) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	_, failed := apiLatency(ws)
	if failed == 0 {
		return nil
	}
	logf("%s: %d of %d writes failed, e.g. %v", name, failed, len(ws), firstErr(ws))
	if err := b.drv.resync(ctx); err != nil {
		return fmt.Errorf("reading the machines' phases back after failed writes: %w", err)
	}
	return nil
}

// p99By is the API write p99 of each slice of the window, by send time;
// a slice with no successful write reads 0.
func p99By(ws []write, slice time.Duration) []float64 {
	ok := okWrites(ws)
	if len(ok) == 0 {
		return nil
	}
	t0 := ok[0].sent
	for _, w := range ok {
		if w.sent.Before(t0) {
			t0 = w.sent
		}
	}
	var by [][]time.Duration
	for _, w := range ok {
		i := int(w.sent.Sub(t0) / slice)
		for len(by) <= i {
			by = append(by, nil)
		}
		by[i] = append(by[i], w.returned.Sub(w.sent))
	}
	out := make([]float64, len(by))
	for i, ds := range by {
		out[i] = distribution(ds).P99
	}
	return out
}

// writeToScreenLimitMs is the write → screen p99 target at the
// fixed rate.
const writeToScreenLimitMs = 150

// noViewerNotes says what the no-viewer window means for the write → screen
// target, and only what its figures show.
func (r *Results) noViewerNotes() []string {
	nv := r.NoViewer
	if nv == nil || nv.Rate == nil || nv.Rate.APIWrite.N == 0 {
		return nil
	}
	nr := nv.Rate
	var notes []string
	if nr.Failed > 0 {
		notes = append(notes, fmt.Sprintf("with no viewer, %d of the writes at %g writes/s failed: its latencies count only the others", nr.Failed, nr.RatePerSec))
	}
	switch {
	case nr.NotSent > 0:
		notes = append(notes, fmt.Sprintf("with no viewer the driver made only %.1f of the %g writes/s asked: %d times every machine of its pool had a write under way (replies lagged more than the pool takes to come round)",
			nr.WritesPerSec, nr.RatePerSec, nr.NotSent))
	case nr.WritesPerSec < 0.95*nr.RatePerSec:
		notes = append(notes, fmt.Sprintf("with no viewer the driver made only %.1f of the %g writes/s asked: the machine could not keep the rate", nr.WritesPerSec, nr.RatePerSec))
	}
	p99 := nr.APIWrite.P99
	if p99 > writeToScreenLimitMs {
		notes = append(notes, fmt.Sprintf("with no viewer at %g writes/s the API server's own write p99 is %.0f ms (p50 %.0f ms), above the %d ms write → screen target, which counts from the write's send: on this machine the API server alone takes longer than the target to reply to 1 %% of the writes, with no viewer to serve",
			nr.RatePerSec, p99, nr.APIWrite.P50, writeToScreenLimitMs))
		if gc := nr.APIServerGC; gc != nil {
			notes = append(notes, fmt.Sprintf("in that window kube-apiserver's collector was marking for %.0f %% of the time (%d cycles, the longest %.1f s; a heap of up to %d MB left live): while it marks, every request that allocates is made to help it",
				gc.MarkPct, gc.Cycles, gc.MarkMaxMs/1000, gc.LiveHeapMB))
		}
	} else {
		notes = append(notes, fmt.Sprintf("with no viewer at %g writes/s the API server's own write p99 is %.0f ms (p50 %.0f ms), within the %d ms write → screen target: the API server alone can meet it",
			nr.RatePerSec, p99, nr.APIWrite.P50, writeToScreenLimitMs))
	}
	if s := nv.Saturate; s != nil && s.WritesPerSec > 0 {
		n := fmt.Sprintf("with no viewer, %d writers back to back made %.1f writes/s: the fixed %g writes/s is %.0f %% of it",
			s.Writers, s.WritesPerSec, nr.RatePerSec, 100*nr.RatePerSec/s.WritesPerSec)
		if s.WritesPerSec < nr.RatePerSec {
			n += ", more than the API server took at saturation, so its writes wait behind each other"
		}
		if len(nr.P99By5s) > 0 {
			n += fmt.Sprintf(" (p99 per 5 s at the fixed rate with no viewer: %s ms)", joinMs(nr.P99By5s))
		}
		notes = append(notes, n)
	}
	// What attaching a viewer does to the same writes. The windows differ
	// in length, which matters when the writes queue.
	with := fmt.Sprintf("API write p99 at %g writes/s: %.0f ms with no viewer (%.0f s)", nr.RatePerSec, p99, nr.Seconds)
	attached := false
	if c := r.Console.APIWriteRate; c.N > 0 {
		with += fmt.Sprintf(", %.0f ms with the console watching (%.0f s)", c.P99, r.Load.RateSeconds)
		attached = true
	}
	if k := r.Kubectl; k != nil && k.APIWriteRate.N > 0 {
		with += fmt.Sprintf(", %.0f ms with kubectl --watch (%.0f s)", k.APIWriteRate.P99, r.Load.RateSeconds)
		attached = true
	}
	if attached {
		notes = append(notes, with)
	}
	return notes
}

func (u *Unviewed) summary() string {
	notSent := ""
	if u.NotSent > 0 {
		notSent = fmt.Sprintf(" (%d not sent: every machine busy)", u.NotSent)
	}
	return fmt.Sprintf("API write p50 %.1f / p99 %.1f / max %.1f ms, %.1f writes/s%s, %d failed, API server + etcd CPU %.0f %%; p99 per 5 s: %s ms",
		u.APIWrite.P50, u.APIWrite.P99, u.APIWrite.Max, u.WritesPerSec, notSent, u.Failed, u.ControlPlaneCPUPct, joinMs(u.P99By5s)) +
		u.APIServerGC.summary()
}

func joinMs(vs []float64) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strings.Join(out, " ")
}
