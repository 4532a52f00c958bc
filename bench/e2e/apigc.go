package main

import (
	"bytes"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// APIServerGC is what kube-apiserver's garbage collector did in a window,
// from its GODEBUG=gctrace=1 lines (--apiserver-gctrace). On a small machine
// the API server's heap of custom resources is what bounds its write
// latency: this says how much of the window it spent marking.
type APIServerGC struct {
	// Cycles counts the collections whose mark overlapped the window.
	Cycles int `json:"cycles"`
	// MarkPct is the share of the window's wall time in which a mark was
	// under way: goroutines that allocate (every request) assist it then.
	MarkPct float64 `json:"mark_pct"`
	// MarkMaxMs is the longest of those marks, wall time.
	MarkMaxMs float64 `json:"mark_max_ms"`
	// AssistCPUSeconds is the CPU those cycles took from request
	// goroutines made to help the mark.
	AssistCPUSeconds float64 `json:"assist_cpu_s"`
	// LiveHeapMB is the largest heap left live after one of them.
	LiveHeapMB int `json:"live_heap_mb"`
}

// gcCycle is one collection: its wall-clock span (the line is printed when
// it ends), the CPU request goroutines gave it, and the heap left live.
type gcCycle struct {
	start, end time.Time
	assistMs   float64
	liveMB     int
}

// gcTrace reads the control plane's output for kube-apiserver's gctrace
// lines, passing everything on to next. etcd writes to the same output but
// never a gctrace line (the variable is set for kube-apiserver alone).
type gcTrace struct {
	next io.Writer
	now  func() time.Time

	mu      sync.Mutex
	partial []byte
	cycles  []gcCycle
}

func newGCTrace(next io.Writer) *gcTrace {
	if next == nil {
		next = io.Discard
	}
	return &gcTrace{next: next, now: time.Now}
}

func (g *gcTrace) Write(p []byte) (int, error) {
	at := g.now()
	g.mu.Lock()
	g.partial = append(g.partial, p...)
	for {
		i := bytes.IndexByte(g.partial, '\n')
		if i < 0 {
			break
		}
		if c, ok := parseGCLine(string(g.partial[:i]), at); ok {
			g.cycles = append(g.cycles, c)
		}
		g.partial = g.partial[i+1:]
	}
	// Keep what is left of a line, not the whole buffer.
	g.partial = append([]byte(nil), g.partial...)
	g.mu.Unlock()
	return g.next.Write(p)
}

// gcLine matches the runtime's gctrace format, e.g.
//
//	gc 70 @223.339s 14%: 0.26+4243+0.041 ms clock, 0.52+1289/2122/2.8+0.082 ms cpu, 2809->3310->1685 MB, 3300 MB goal, ...
//
// (sweep termination + concurrent mark + mark termination wall time; CPU of
// the same phases with the mark's split assist/background/idle; heap at the
// start, at the end, and live).
var gcLine = regexp.MustCompile(`gc \d+ @[0-9.]+s \d+%: ([0-9.]+)\+([0-9.]+)\+([0-9.]+) ms clock, [0-9.]+\+([0-9.]+)/[0-9.]+/[0-9.]+\+[0-9.]+ ms cpu, \d+->\d+->(\d+) MB`)

// parseGCLine reads one gctrace line printed at at.
func parseGCLine(line string, at time.Time) (gcCycle, bool) {
	if !strings.Contains(line, "gc ") {
		return gcCycle{}, false
	}
	m := gcLine.FindStringSubmatch(line)
	if m == nil {
		return gcCycle{}, false
	}
	var wall float64
	for _, s := range m[1:4] {
		v, _ := strconv.ParseFloat(s, 64)
		wall += v
	}
	assist, _ := strconv.ParseFloat(m[4], 64)
	live, _ := strconv.Atoi(m[5])
	return gcCycle{start: at.Add(-time.Duration(wall * float64(time.Millisecond))), end: at, assistMs: assist, liveMB: live}, true
}

// window sums the cycles that overlap [from, to).
func (g *gcTrace) window(from, to time.Time) *APIServerGC {
	if g == nil || !to.After(from) {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	out := &APIServerGC{}
	var marked time.Duration
	covered := from // marks do not overlap each other; guard anyway
	for _, c := range g.cycles {
		if !c.end.After(from) || !c.start.Before(to) {
			continue
		}
		out.Cycles++
		out.MarkMaxMs = max(out.MarkMaxMs, float64(c.end.Sub(c.start))/float64(time.Millisecond))
		out.AssistCPUSeconds += c.assistMs / 1000
		out.LiveHeapMB = max(out.LiveHeapMB, c.liveMB)
		s, e := c.start, c.end
		if s.Before(covered) {
			s = covered
		}
		if e.After(to) {
			e = to
		}
		if e.After(s) {
			marked += e.Sub(s)
			covered = e
		}
	}
	out.MarkPct = 100 * float64(marked) / float64(to.Sub(from))
	return out
}

func (a *APIServerGC) summary() string {
	if a == nil {
		return ""
	}
	return "; kube-apiserver GC: " + strconv.Itoa(a.Cycles) + " cycles, marking " +
		strconv.FormatFloat(a.MarkPct, 'f', 0, 64) + " % of the window (longest " +
		strconv.FormatFloat(a.MarkMaxMs/1000, 'f', 1, 64) + " s), assists " +
		strconv.FormatFloat(a.AssistCPUSeconds, 'f', 1, 64) + " CPU s, live heap up to " +
		strconv.Itoa(a.LiveHeapMB) + " MB"
}
