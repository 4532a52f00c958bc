package main

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

func at(msec int) time.Time { return t0.Add(time.Duration(msec) * time.Millisecond) }

// A write is shown by the first point whose resourceVersion reaches its own,
// even when a later point carries a lower one (another kind's frame).
func TestShownByFirstPointReachingTheVersion(t *testing.T) {
	shown := shownBy([]time.Time{at(10), at(20), at(30), at(40)}, []uint64{5, 9, 7, 12})
	cases := []struct {
		rv   uint64
		want time.Time
		ok   bool
	}{{3, at(10), true}, {5, at(10), true}, {6, at(20), true}, {8, at(20), true}, {10, at(40), true}, {13, time.Time{}, false}}
	for _, c := range cases {
		got, ok := shown(c.rv)
		if ok != c.ok || !got.Equal(c.want) {
			t.Errorf("rv %d: got %v %v, want %v %v", c.rv, got, ok, c.want, c.ok)
		}
	}
}

func TestLatenciesCountMissedWrites(t *testing.T) {
	ws := []write{{sent: at(0), rv: 5}, {sent: at(5), rv: 9}, {sent: at(6), rv: 20}}
	d, missed := latencies(ws, func(w write) (time.Time, bool) {
		return shownBy([]time.Time{at(50), at(100)}, []uint64{5, 10})(w.rv)
	})
	if missed != 1 || d.N != 2 || d.P50 != 50 || d.Max != 95 {
		t.Fatalf("got %+v missed %d, want 2 shown (50 ms, 95 ms) and 1 missed", d, missed)
	}
}

func TestDistributionNearestRank(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 200; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	d := distribution(ds)
	if d.N != 200 || d.P50 != 100 || d.P99 != 198 || d.Max != 200 {
		t.Fatalf("got %+v", d)
	}
	if (distribution(nil) != dist{}) {
		t.Fatal("an empty distribution must be zero")
	}
}

func TestFrameLogLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "frames")
	data := "1000000000 first 0 0 0 0\n" +
		"1500000000 synced 3 42 1 1400000000\n" +
		"garbage\n" +
		"1610000000 write 3000\n" +
		"1600000000 frame 4 57 1 1550000000\n" +
		"1605000000 write 12\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	fl, writes, err := readFrameLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(fl) != 3 {
		t.Fatalf("got %d lines, want 3 (the malformed one skipped)", len(fl))
	}
	if len(writes) != 2 || writes[0].UnixNano() != 1605000000 || writes[1].UnixNano() != 1610000000 {
		t.Fatalf("writes read as %v, want 1.605 s and 1.610 s, in time order", writes)
	}
	if w, ok := firstAtOrAfter(writes, fl[2].at); !ok || w.UnixNano() != 1605000000 {
		t.Fatalf("first write after the frame: %v %v, want 1.605 s", w, ok)
	}
	if _, ok := firstAtOrAfter(writes, time.Unix(0, 1610000001)); ok {
		t.Fatal("no write follows the last one")
	}
	s, ok := findEvent(fl, "synced")
	if !ok || s.version != 3 || s.rv != 42 || !s.synced || s.taken.UnixNano() != 1400000000 || s.at.UnixNano() != 1500000000 {
		t.Fatalf("synced line read as %+v", s)
	}
}

func TestGoBenchKeepsTenThousandNodes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gobench.txt")
	out := "BenchmarkDashboardView/nodes=1000/80x24-2   100  50000 ns/op  10 B/op  1 allocs/op\n" +
		"BenchmarkDashboardView/nodes=10000/80x24-2  100  107359 ns/op  24696 B/op  181 allocs/op\n" +
		"BenchmarkSnapshot/update/10000-2  360  3835912 ns/op  3870108 cpu-ns/op\n"
	if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	gb, err := readGoBench(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(gb) != 1 || gb["BenchmarkDashboardView/nodes=10000/80x24"] != 107359 {
		t.Fatalf("got %v", gb)
	}
}

// With GOMAXPROCS=1 go test appends no -N: the names stay whole, and the
// rebuild's two cases stay two.
func TestGoBenchWithoutProcsSuffix(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gobench.txt")
	out := "BenchmarkDashboardSnapshot/nodes=10000/machines-changed  652  1851751 ns/op\n" +
		"BenchmarkDashboardSnapshot/nodes=10000/machines-same  937  1307631 ns/op\n" +
		"BenchmarkDashboardView/nodes=10000/200x60-16  100  86851 ns/op\n"
	if err := os.WriteFile(path, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	gb, err := readGoBench(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"BenchmarkDashboardSnapshot/nodes=10000/machines-changed": 1851751,
		"BenchmarkDashboardSnapshot/nodes=10000/machines-same":    1307631,
		"BenchmarkDashboardView/nodes=10000/200x60":               86851,
	}
	if !maps.Equal(gb, want) {
		t.Fatalf("got %v, want %v", gb, want)
	}
}

// The table names the cores and nodes of the run it prints, not those of
// the machine.
func TestTableNamesTheRunsMachine(t *testing.T) {
	r := &Results{Machine: Machine{Cores: 8}, World: World{Nodes: 200}, Load: Load{Rate: 100}}
	r.judge()
	var out strings.Builder
	r.printTable(&out)
	if !strings.Contains(out.String(), "targets (8 cores, 200 nodes):") {
		t.Errorf("the targets' heading does not name the run's 8 cores and 200 nodes:\n%s", out.String())
	}
}

// Every target is judged from the figures, and a missing kubectl run says
// so instead of passing the synced target.
func TestJudge(t *testing.T) {
	r := &Results{Load: Load{Rate: 100}, Console: Viewer{
		FirstFrameMs: 120, SyncedMs: 1300, PeakRSSMiB: 150, CPUIdlePct: 0.5,
		RateAchieved:     99.5,
		Rate:             dist{N: 10, P99: 140},
		Saturate:         dist{N: 10, P99: 900},
		APIWriteSaturate: dist{N: 10, P99: 800},
	}, GoBench: map[string]float64{"BenchmarkDashboardView/nodes=10000/200x60": 2.5e6, "BenchmarkDashboardSnapshot/nodes=10000/machines-changed": 1.9e6}}
	r.Kubectl = &Viewer{SyncedMs: 1000}
	r.judge()
	want := map[string]bool{"first frame": true, "all panes synced": false, writeShown + ", p99 at 99.5 writes/s of 100 asked": true,
		writeShown + ", p99 at saturation": true, "peak RSS": true, "idle CPU": true, "no polling while idle": true,
		"View() per frame at 10,000 nodes (worst size)": false, "frame that shows a change at 10,000 nodes (rebuild + View, 200×60)": false}
	for _, tg := range r.Targets {
		if w, ok := want[tg.Name]; !ok || w != tg.Pass {
			t.Errorf("%s: pass %v, want %v", tg.Name, tg.Pass, w)
		}
		delete(want, tg.Name)
	}
	if len(want) > 0 {
		t.Errorf("targets not judged: %v", want)
	}
	r = &Results{Load: Load{Rate: 100}, Console: Viewer{RateAchieved: 100}}
	r.judge()
	if len(r.Notes) != 2 {
		t.Fatalf("without kubectl and Go benchmarks the notes must say what was not judged, got %q", r.Notes)
	}
}

// A frame within View()'s 2 ms that follows a rebuild of 1.9 ms is not a
// frame within 2 ms: the frame that shows a change is judged on both.
func TestJudgeFrameThatShowsAChange(t *testing.T) {
	r := &Results{Load: Load{Rate: 100}, GoBench: map[string]float64{
		"BenchmarkDashboardView/nodes=10000/200x60":               0.12e6,
		"BenchmarkDashboardView/nodes=10000/80x24":                0.05e6,
		"BenchmarkDashboardSnapshot/nodes=10000/machines-changed": 1.9e6,
		"BenchmarkDashboardSnapshot/nodes=10000/machines-same":    1.3e6,
	}}
	r.judge()
	got := map[string]Target{}
	for _, tg := range r.Targets {
		got[tg.Name] = tg
	}
	if v := got["View() per frame at 10,000 nodes (worst size)"]; !v.Pass {
		t.Errorf("View() alone: %+v, want a pass", v)
	}
	c, ok := got["frame that shows a change at 10,000 nodes (rebuild + View, 200×60)"]
	if !ok || c.Pass || c.Value != 2.02 {
		t.Errorf("rebuild + View: %+v (judged %v), want 2.02 ms, a fail", c, ok)
	}
}

// A write → screen verdict is one at the rate asked, with every write
// answered: a run that fell short of the rate, or whose slowest writes
// failed and so left the latencies, fails and says why.
func TestJudgeNeedsTheRateAndEveryWrite(t *testing.T) {
	run := func(achieved float64, failedRate, failedSat int) map[string]bool {
		r := &Results{Load: Load{Rate: 100}, Console: Viewer{
			RateAchieved: achieved, NotSentRate: 1000,
			Rate:             dist{N: 10, P99: 140},
			Saturate:         dist{N: 10, P99: 900},
			APIWriteSaturate: dist{N: 10, P99: 800},
			FailedWritesRate: failedRate, FailedWritesSaturate: failedSat,
		}}
		r.judge()
		got := map[string]bool{}
		for _, tg := range r.Targets {
			got[tg.Name] = tg.Pass
		}
		return got
	}
	if got := run(80.7, 0, 0); got[writeShown+", p99 at 80.7 writes/s of 100 asked"] {
		t.Errorf("80.7 of 100 writes/s passed the rate target: %v", got)
	}
	if got := run(96, 0, 0); !got[writeShown+", p99 at 96.0 writes/s of 100 asked"] {
		t.Errorf("96 of 100 writes/s failed the rate target: %v", got)
	}
	if got := run(100, 3, 0); got[writeShown+", p99 at 100.0 writes/s of 100 asked"] {
		t.Errorf("failed writes at the rate passed: %v", got)
	}
	if got := run(100, 0, 3); got[writeShown+", p99 at saturation"] {
		t.Errorf("failed writes at saturation passed: %v", got)
	}
}

// The no-viewer note says the API server alone misses the target only when
// its own write p99 does, and compares with the viewers' runs only when
// they wrote.
func TestNoViewerNotes(t *testing.T) {
	unviewed := func(p99 float64, failed int, perSec float64) *NoViewer {
		return &NoViewer{Rate: &Unviewed{RatePerSec: 100, Seconds: 30, APIWrite: dist{N: 3000, P50: 40, P99: p99}, Failed: failed, WritesPerSec: perSec}}
	}
	cases := []struct {
		name string
		r    Results
		want []string
	}{
		{"no window", Results{}, nil},
		{"no write succeeded", Results{NoViewer: &NoViewer{Rate: &Unviewed{RatePerSec: 100, Failed: 5}}}, nil},
		{"above the target", Results{NoViewer: unviewed(3600, 0, 100)},
			[]string{"write p99 is 3600 ms (p50 40 ms), above the 150 ms"}},
		{"within the target, viewers compared", Results{Load: Load{RateSeconds: 60}, NoViewer: unviewed(90, 0, 99.7), Console: Viewer{APIWriteRate: dist{N: 6000, P99: 4200}}, Kubectl: &Viewer{APIWriteRate: dist{N: 6000, P99: 3900}}},
			[]string{"write p99 is 90 ms (p50 40 ms), within the 150 ms", "90 ms with no viewer (30 s), 4200 ms with the console watching (60 s), 3900 ms with kubectl --watch (60 s)"}},
		{"saturation below the rate: the writes queue", Results{NoViewer: func() *NoViewer {
			nv := unviewed(3000, 0, 100)
			nv.Rate.P99By5s = []float64{270, 1500, 3000}
			nv.Saturate = &Unviewed{Writers: 20, APIWrite: dist{N: 300, P99: 800}, WritesPerSec: 67.4}
			return nv
		}()}, []string{"above the 150 ms", "20 writers back to back made 67.4 writes/s: the fixed 100 writes/s is 148 % of it, more than the API server took at saturation, so its writes wait behind each other (p99 per 5 s at the fixed rate with no viewer: 270 1500 3000 ms)"}},
		{"saturation above the rate: only the ratio", Results{NoViewer: func() *NoViewer {
			nv := unviewed(90, 0, 100)
			nv.Saturate = &Unviewed{Writers: 20, APIWrite: dist{N: 3000, P99: 200}, WritesPerSec: 400}
			return nv
		}()}, []string{"within the 150 ms", "with no viewer, 20 writers back to back made 400.0 writes/s: the fixed 100 writes/s is 25 % of it"}},
		{"every machine busy: said so, not a starved machine", Results{NoViewer: func() *NoViewer {
			nv := unviewed(9000, 0, 71.4)
			nv.Rate.NotSent = 849
			return nv
		}()}, []string{"made only 71.4 of the 100 writes/s asked: 849 times every machine of its pool had a write under way", "above the 150 ms"}},
		{"failures and a starved rate said", Results{NoViewer: unviewed(150, 7, 80)},
			[]string{"7 of the writes at 100 writes/s failed", "only 80.0 of the 100 writes/s", "within the 150 ms"}},
	}
	for _, c := range cases {
		got := c.r.noViewerNotes()
		if len(got) != len(c.want) {
			t.Errorf("%s: got %q, want %d notes", c.name, got, len(c.want))
			continue
		}
		for i, w := range c.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: note %d is %q, want it to say %q", c.name, i, got[i], w)
			}
			if strings.Contains(w, "% of it") && !strings.Contains(w, "wait behind") && strings.Contains(got[i], "wait behind") {
				t.Errorf("%s: note %d is %q: a rate below saturation's must not be said to queue", c.name, i, got[i])
			}
		}
	}
}

// Each slice's p99 counts the writes sent in it, failed ones left out, and
// an empty slice in the middle reads 0.
func TestP99BySlice(t *testing.T) {
	w := func(sent, took int, err error) write {
		return write{sent: at(sent), returned: at(sent + took), err: err}
	}
	ws := []write{w(100, 10, nil), w(0, 30, nil), w(4900, 20, nil), w(5100, 900, errors.New("timeout")), w(10100, 70, nil)}
	got := p99By(ws, 5*time.Second)
	if want := []float64{30, 0, 70}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if p99By([]write{w(0, 5, errors.New("refused"))}, time.Second) != nil {
		t.Fatal("no successful write: no timeline")
	}
}

// The event log is read for one resource and put in time order (informers
// write concurrently), and a stage counts only writes both ends know.
func TestEventLogStages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events")
	ns := func(msec int) string { return strconv.FormatInt(at(msec).UnixNano(), 10) }
	log := strings.Join([]string{
		ns(30) + " " + machinesResource + " 9",
		ns(10) + " " + machinesResource + " 5",
		ns(20) + " nodes 7",
		"garbage",
		ns(40) + " " + machinesResource + " 12",
	}, "\n") + "\n"
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	ts, rvs, err := readEventLog(path, machinesResource)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rvs, []uint64{5, 9, 12}) || !ts[0].Equal(at(10)) || !ts[2].Equal(at(40)) {
		t.Fatalf("read %v %v, want versions 5, 9, 12 at 10, 30, 40 ms", ts, rvs)
	}
	applied := shownBy(ts, rvs)
	ws := []write{{sent: at(0), rv: 5}, {sent: at(1), rv: 8}, {sent: at(2), rv: 13}}
	d := stage(ws, sentAt, func(w write) (time.Time, bool) { return applied(w.rv) })
	if d.N != 2 || d.P50 != 10 || d.Max != 29 {
		t.Fatalf("write → applied %+v, want 2 writes (10 ms, 29 ms); the third was never applied", d)
	}
	if _, _, err := readEventLog(filepath.Join(t.TempDir(), "missing"), machinesResource); err == nil {
		t.Error("a missing event log must be an error, not an empty stage")
	}
}

// A "same" frame drew nothing new: the write it first holds is on the
// screen within a renderer tick, not at the next write (another frame's).
func TestSameFrameIsOnScreenWithinATick(t *testing.T) {
	same := frameLine{at: at(100), event: "same"}
	if got, ok := sameBound(same, at(900), true); !ok || !got.Equal(at(150)) {
		t.Errorf("same frame, next write 800 ms later: got %v %v, want built + one tick", got, ok)
	}
	if got, ok := sameBound(same, time.Time{}, false); !ok || !got.Equal(at(150)) {
		t.Errorf("same frame, no write after it: got %v %v, want built + one tick", got, ok)
	}
	if got, ok := sameBound(same, at(120), true); !ok || !got.Equal(at(120)) {
		t.Errorf("same frame, write within the tick: got %v %v, want that write", got, ok)
	}
	frame := frameLine{at: at(100), event: "frame"}
	if got, ok := sameBound(frame, at(900), true); !ok || !got.Equal(at(900)) {
		t.Errorf("a frame that drew something waits for its write: got %v %v", got, ok)
	}
	if _, ok := sameBound(frame, time.Time{}, false); ok {
		t.Error("a frame never written is not on the screen")
	}
}

// The alternate-screen switch marks the first frame even when a read splits
// it, and only its first arrival counts.
func TestMarkerFoundAcrossReads(t *testing.T) {
	p := &termProc{marker: []byte(altScreen)}
	p.seekMarker([]byte("\x1b[?2026$p\x1b[?2027$p"), at(10))
	p.seekMarker([]byte("\x1b[?10"), at(20))
	if !p.markerArrived().IsZero() {
		t.Fatal("marker seen before it was complete")
	}
	p.seekMarker([]byte("49hframe"), at(30))
	p.seekMarker([]byte(altScreen), at(40))
	if got := p.markerArrived(); !got.Equal(at(30)) {
		t.Fatalf("marker at %v, want the read that completed it (30 ms)", got)
	}
	none := &termProc{}
	none.seekMarker([]byte(altScreen), at(10))
	if !none.markerArrived().IsZero() {
		t.Fatal("no marker asked for, none noted")
	}
}
