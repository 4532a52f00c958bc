package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestParseThreadStat(t *testing.T) {
	// A command name may hold spaces and parentheses.
	line := []byte("4242 (upgrade (con) sole) R 1 4242 4242 0 -1 4194560 100 0 0 0 37 12 0 0 20 0 9 0 870533 0 0")
	ts, ok := parseThreadStat(line)
	if !ok || !ts.runnable || ts.cpu != 49 {
		t.Fatalf("parseThreadStat = %+v, %v; want runnable with 49 ticks", ts, ok)
	}
	ts, ok = parseThreadStat([]byte("7 (x) S 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 5"))
	if !ok || ts.runnable || ts.cpu != 7 {
		t.Fatalf("sleeping thread = %+v, %v", ts, ok)
	}
	if _, ok := parseThreadStat([]byte("7 (x) S 1")); ok {
		t.Fatal("a short line parsed")
	}
}

func TestWaitTracker(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	var w waitTracker
	steps := []struct {
		ms       int
		runnable bool
		cpu      uint64
		closed   bool
		from, to int
	}{
		{0, false, 5, false, 0, 0},
		{10, true, 5, false, 0, 0},   // a wait may begin
		{20, true, 5, false, 0, 0},   // no CPU given
		{70, true, 5, false, 0, 0},   // still none: 60 ms so far
		{80, true, 6, true, 10, 70},  // it ran: the wait was 10..70
		{90, true, 6, false, 0, 0},   // runnable again, from 80
		{100, false, 6, false, 0, 0}, // 80..90 is too short to count
		{110, true, 7, false, 0, 0},
		{170, true, 7, false, 0, 0},
		{180, false, 7, true, 110, 170}, // it slept: the wait was 110..170
	}
	for _, s := range steps {
		sp, ok := w.observe(threadSample{runnable: s.runnable, cpu: s.cpu}, at(s.ms))
		if ok != s.closed {
			t.Fatalf("at %d ms: closed = %v, want %v", s.ms, ok, s.closed)
		}
		if ok && (!sp.from.Equal(at(s.from)) || !sp.to.Equal(at(s.to))) {
			t.Fatalf("at %d ms: wait %v..%v, want %d..%d ms", s.ms, sp.from.Sub(t0), sp.to.Sub(t0), s.from, s.to)
		}
	}
	w.observe(threadSample{runnable: true, cpu: 8}, at(200))
	w.observe(threadSample{runnable: true, cpu: 8}, at(260))
	if sp, ok := w.close(); !ok || sp.len() != 60*time.Millisecond {
		t.Fatalf("close = %v, %v; want a 60 ms wait", sp, ok)
	}
	if _, ok := w.close(); ok {
		t.Fatal("a closed wait closed twice")
	}
}

func TestSummarizeWaits(t *testing.T) {
	t0 := time.Unix(1000, 0)
	sp := func(a, b int) span {
		return span{t0.Add(time.Duration(a) * time.Millisecond), t0.Add(time.Duration(b) * time.Millisecond)}
	}
	waits := mergeSpans([]span{sp(500, 700), sp(100, 200), sp(150, 300), sp(2000, 2600)})
	if len(waits) != 3 || waits[0] != sp(100, 300) {
		t.Fatalf("merged = %v", waits)
	}
	shares := []span{
		sp(90, 400),    // slow, during the first wait
		sp(800, 1000),  // slow, no wait
		sp(600, 650),   // fast
		sp(2400, 2700), // slow, during the last wait
	}
	deliveries := []span{
		sp(0, 120),     // on time, during the first wait
		sp(1000, 1900), // late, no wait
		sp(1800, 2100), // late, into the last wait
	}
	got := summarizeWaits(waits, sp(0, 2500), shares, deliveries)
	want := Waits{N: 3, TotalMs: 200 + 200 + 500, LongestMs: 500, SlowWrites: 3, SlowWritesWaited: 2,
		LateEvents: 2, LateEventsWaited: 1}
	if *got != want {
		t.Fatalf("summarizeWaits = %+v, want %+v", *got, want)
	}
	if d := waitedWithin(waits, sp(250, 600)); d != 150*time.Millisecond {
		t.Fatalf("waitedWithin = %v, want 150ms", d)
	}
}

func TestDiskTracker(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	every := 10 * time.Millisecond
	var d diskTracker
	if _, ok := d.observe(false, at(0), every); ok {
		t.Fatal("closed a sleep that never began")
	}
	d.observe(true, at(10), every)
	d.observe(true, at(20), every)
	sp, ok := d.observe(false, at(30), every)
	// Two samples in D: 0..20 ms, each counting for one period.
	if !ok || !sp.from.Equal(at(0)) || !sp.to.Equal(at(20)) {
		t.Fatalf("sleep = %v..%v, %v; want 0..20 ms", sp.from.Sub(t0), sp.to.Sub(t0), ok)
	}
	d.observe(true, at(50), every)
	if sp, ok := d.close(); !ok || sp.len() != every {
		t.Fatalf("close = %v, %v; want one period", sp, ok)
	}
}

func TestMajorFaultsAndReads(t *testing.T) {
	line := []byte("4242 (a b) S 1 4242 4242 0 -1 4194560 2159 0 25 0 3 4 0 0 20 0 9 0 870533")
	if n, ok := majorFaults(statFields(line)); !ok || n != 25 {
		t.Fatalf("majorFaults = %d, %v; want 25", n, ok)
	}
	io := []byte("rchar: 4000\nwchar: 12\nsyscr: 9\nsyscw: 2\nread_bytes: 80121856\nwrite_bytes: 4096\ncancelled_write_bytes: 0\n")
	if n, ok := parseReadBytes(io); !ok || n != 80121856 {
		t.Fatalf("parseReadBytes = %d, %v; want 80121856", n, ok)
	}
	if _, ok := parseReadBytes([]byte("rchar: 4000\n")); ok {
		t.Fatal("read_bytes found where there is none")
	}
	t0 := time.Unix(1000, 0)
	sm := sampled{io: []ioSample{{t0, 3, 8 << 20}, {t0.Add(10 * time.Millisecond), 9, 40 << 20}, {t0.Add(20 * time.Millisecond), 30, 76 << 20}}}
	for _, c := range []struct {
		ms           int
		majflt, read uint64
	}{{-1, 0, 0}, {0, 3, 8 << 20}, {15, 9, 40 << 20}, {25, 30, 76 << 20}} {
		if got := sm.ioBy(t0.Add(time.Duration(c.ms) * time.Millisecond)); got.majflt != c.majflt || got.readBytes != c.read {
			t.Errorf("ioBy(%d ms) = %d faults, %d bytes; want %d, %d", c.ms, got.majflt, got.readBytes, c.majflt, c.read)
		}
	}
}

func TestReadAheadKB(t *testing.T) {
	sysfs := t.TempDir()
	file := filepath.Join(t.TempDir(), "binary")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(file, &st); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(sysfs, "dev", "block", fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev)))
	if _, ok := readAheadKB(sysfs, file); ok {
		t.Fatal("a read-ahead found with no device in sysfs")
	}
	// The file's device as a partition: sysfs links it to a directory
	// inside its disk's, and the disk's queue holds the setting.
	disk := filepath.Join(sysfs, "devices", "virtual", "vda")
	for _, d := range []string{filepath.Join(disk, "queue"), filepath.Join(disk, "vda1"), filepath.Dir(link)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(disk, "queue", "read_ahead_kb"), []byte("8192\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(disk, "vda1"), link); err != nil {
		t.Fatal(err)
	}
	if kb, ok := readAheadKB(sysfs, file); !ok || kb != 8192 {
		t.Fatalf("partition: readAheadKB = %d, %v; want 8192", kb, ok)
	}
	// The whole disk: its own queue.
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(disk, link); err != nil {
		t.Fatal(err)
	}
	if kb, ok := readAheadKB(sysfs, file); !ok || kb != 8192 {
		t.Fatalf("disk: readAheadKB = %d, %v; want 8192", kb, ok)
	}
}

// BenchmarkWaitSample is one round of --wait-sample on this process (its
// threads, as the console's): the benchmark's own cost per sample.
func BenchmarkWaitSample(b *testing.B) {
	s := &threadSampler{pid: os.Getpid(), every: 10 * time.Millisecond}
	threads := map[string]*sampledThread{}
	b.ReportAllocs()
	for b.Loop() {
		s.sample(threads, time.Now())
	}
	b.ReportMetric(float64(len(threads)), "threads")
}

func TestLoadedMB(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(exe)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := loadedMB(exe)
	if err != nil {
		t.Fatal(err)
	}
	// The test binary maps its code and data, well over a megabyte, and not
	// its symbol table and debug sections, which are in the file too.
	if mb < 1 || mb*1e6 >= float64(st.Size()) {
		t.Fatalf("loadedMB = %.1f MB of a %d-byte file", mb, st.Size())
	}
	notELF := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := loadedMB(notELF); err == nil {
		t.Fatal("loadedMB of a shell script: no error")
	}
}

func TestParseMachineCPU(t *testing.T) {
	// user nice system idle iowait irq softirq steal guest guest_nice: the
	// guest times are already in user and nice and must not count twice.
	stat := []byte("cpu  100 5 50 800 40 3 2 1 70 7\ncpu0 50 2 25 400 20 1 1 0 35 3\nintr 1\n")
	busy, total, ok := parseMachineCPU(stat)
	if !ok || busy != 100+5+50+3+2+1 || total != 100+5+50+800+40+3+2+1 {
		t.Fatalf("parseMachineCPU = %d, %d, %v", busy, total, ok)
	}
	if _, _, ok := parseMachineCPU([]byte("intr 1\n")); ok {
		t.Fatal("parseMachineCPU of a file without a cpu line: ok")
	}
}

func TestStartCPU(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	sm := sampled{start: []cpuSample{
		{at: at(10), proc: 1, busy: 1000, all: 2000},
		{at: at(20), proc: 2, busy: 1001, all: 2002},
		{at: at(30), proc: 4, busy: 1004, all: 2006},
		{at: at(40), proc: 5, busy: 1005, all: 2008},
	}}
	if _, _, ok := sm.startCPU(at(15)); ok {
		t.Fatal("startCPU with one sample by then: ok")
	}
	procMs, busy, ok := sm.startCPU(at(35))
	if !ok || procMs != 40 || math.Abs(busy-400.0/6) > 1e-9 {
		t.Fatalf("startCPU(35 ms) = %v ms, %v %%, %v; want 40 ms, 66.7 %%", procMs, busy, ok)
	}
}

func TestCachedPct(t *testing.T) {
	path := filepath.Join(t.TempDir(), "binary")
	if err := os.WriteFile(path, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	// Just written: every page is in the page cache.
	if pct, err := cachedPct(path); err != nil || pct != 100 {
		t.Fatalf("cachedPct of a file just written = %v, %v; want 100", pct, err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var fs unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &fs); err != nil {
		t.Fatal(err)
	}
	if fs.Type != unix.TMPFS_MAGIC {
		// Written back and dropped: none of it is (tmpfs pages cannot be).
		if err := unix.Fsync(int(f.Fd())); err != nil {
			t.Fatal(err)
		}
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			t.Fatal(err)
		}
		if pct, err := cachedPct(path); err != nil || pct != 0 {
			t.Fatalf("cachedPct after dropping the file's pages = %v, %v; want 0", pct, err)
		}
	}
	if _, err := cachedPct(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("a missing file must be an error")
	}
}

func TestDamonPageoutAfter(t *testing.T) {
	sysfs := t.TempDir()
	write := func(rel, v string) {
		t.Helper()
		p := filepath.Join(sysfs, "kernel", "mm", "damon", "admin", "kdamonds", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := damonPageoutAfter(sysfs); ok {
		t.Fatal("no kdamond: no pageout")
	}
	// A running kdamond whose only scheme only counts: no pageout.
	write("0/state", "on")
	write("0/contexts/0/monitoring_attrs/intervals/aggr_us", "5000000")
	write("0/contexts/0/schemes/0/action", "stat")
	write("0/contexts/0/schemes/0/access_pattern/age/min", "1")
	if _, ok := damonPageoutAfter(sysfs); ok {
		t.Fatal("a stat scheme is not a pageout")
	}
	// The reclaim of the machines here: pageout after 6 intervals of 5 s.
	write("0/contexts/0/schemes/1/action", "pageout")
	write("0/contexts/0/schemes/1/access_pattern/age/min", "6")
	// A stopped kdamond with a quicker pageout does not count.
	write("1/state", "off")
	write("1/contexts/0/monitoring_attrs/intervals/aggr_us", "100000")
	write("1/contexts/0/schemes/0/action", "pageout")
	write("1/contexts/0/schemes/0/access_pattern/age/min", "1")
	if d, ok := damonPageoutAfter(sysfs); !ok || d != 30*time.Second {
		t.Fatalf("damonPageoutAfter = %v, %v; want 30s", d, ok)
	}
}
