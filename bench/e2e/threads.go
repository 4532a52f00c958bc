package main

import (
	"bytes"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"
)

// minRunnableWait is the shortest wait counted. The kernel accounts CPU time in
// 10 ms ticks, so a thread that stays runnable for five samples without
// one had the CPU for at most a fifth of that time.
const minRunnableWait = 50 * time.Millisecond

// span is a stretch of time.
type span struct{ from, to time.Time }

func (s span) len() time.Duration { return s.to.Sub(s.from) }

// threadSampler watches a process's threads for runnable waits (a thread
// in state R whose CPU time does not move across samples has work and is
// not being run) and disk waits (state D), and counts its major faults and
// the bytes it read from disk.
// Under full load on a small machine the kernel can leave a whole process
// waiting like that for hundreds of milliseconds while others run; those
// waits are the machine's, not the process's own.
type threadSampler struct {
	pid   int
	every time.Duration
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once

	mu    sync.Mutex
	spans []span // closed waits of at least minRunnableWait, any thread
	disk  []span // closed uninterruptible sleeps, any thread
	io    []ioSample
	start []cpuSample // every sample of the first startWindow
	first time.Time   // the first sample
}

// startWindow is how long after the first sample the sampler keeps every
// CPU sample: long enough for any first frame.
const startWindow = 3 * time.Second

// cpuSample is the process's CPU time and the machine's at one sample, for
// what the start of the process competed with.
type cpuSample struct {
	at   time.Time
	proc uint64 // the process's utime + stime, in ticks
	busy uint64 // all CPUs' time not idle or waiting for I/O, in ticks
	all  uint64 // all CPUs' time, in ticks
}

// ioSample is the process's major page faults and the bytes it has read
// from disk so far, at the sample where those counts were first seen. The
// two differ by the read-ahead: each major fault reads the pages around the
// one it needs, up to the device's read_ahead_kb.
type ioSample struct {
	at        time.Time
	majflt    uint64
	readBytes uint64
}

// threadSample is one thread at one sample.
type threadSample struct {
	runnable bool
	disk     bool   // state D: uninterruptible, mostly a page or block read
	cpu      uint64 // utime + stime, in ticks
}

// diskTracker follows one thread's uninterruptible sleeps (state D), as
// when a page of its binary is read back from disk. Each sample in D counts
// for one sampling period.
type diskTracker struct {
	open     bool
	from, to time.Time
}

func (d *diskTracker) observe(inD bool, now time.Time, every time.Duration) (span, bool) {
	if inD {
		if !d.open {
			d.open, d.from = true, now.Add(-every)
		}
		d.to = now
		return span{}, false
	}
	return d.close()
}

func (d *diskTracker) close() (span, bool) {
	ok := d.open
	d.open = false
	return span{d.from, d.to}, ok
}

// waitTracker follows one thread's runnable wait between samples.
type waitTracker struct {
	open     bool
	from     time.Time // first sample of the wait
	last     time.Time // latest sample still in it
	cpu      uint64
	lastSeen time.Time
}

// observe moves t to sample s taken at now, and returns the wait it closed,
// if any.
func (t *waitTracker) observe(s threadSample, now time.Time) (span, bool) {
	t.lastSeen = now
	if t.open && s.runnable && s.cpu == t.cpu {
		t.last = now
		return span{}, false
	}
	closed, ok := span{t.from, t.last}, t.open && t.last.Sub(t.from) >= minRunnableWait
	t.open = s.runnable
	t.from, t.last, t.cpu = now, now, s.cpu
	return closed, ok
}

// close ends an open wait (the thread is gone, or sampling stopped).
func (t *waitTracker) close() (span, bool) {
	s, ok := span{t.from, t.last}, t.open && t.last.Sub(t.from) >= minRunnableWait
	t.open = false
	return s, ok
}

func startThreadSampler(pid int, every time.Duration) *threadSampler {
	s := &threadSampler{pid: pid, every: every, stop: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	return s
}

// sampledThread is what a threadSampler follows of one thread.
type sampledThread struct {
	wait waitTracker
	disk diskTracker
}

func (s *threadSampler) run() {
	defer close(s.done)
	tick := time.NewTicker(s.every)
	defer tick.Stop()
	threads := map[string]*sampledThread{}
	for {
		select {
		case <-s.stop:
			for _, t := range threads {
				s.addWait(t.wait.close())
				s.addDisk(t.disk.close())
			}
			return
		case <-tick.C:
		}
		s.sample(threads, time.Now())
	}
}

func (s *threadSampler) addWait(sp span, ok bool) { s.add(&s.spans, sp, ok) }
func (s *threadSampler) addDisk(sp span, ok bool) { s.add(&s.disk, sp, ok) }

func (s *threadSampler) add(to *[]span, sp span, ok bool) {
	if ok {
		s.mu.Lock()
		*to = append(*to, sp)
		s.mu.Unlock()
	}
}

// sample reads the process's faults, its reads from disk and every
// thread's state once. A process that has exited leaves its threads' waits
// open until stop.
func (s *threadSampler) sample(threads map[string]*sampledThread, now time.Time) {
	proc := "/proc/" + strconv.Itoa(s.pid)
	if data, err := os.ReadFile(proc + "/stat"); err == nil {
		f := statFields(data)
		s.sampleStart(f, now)
		if n, ok := majorFaults(f); ok {
			cur := ioSample{at: now, majflt: n}
			if data, err := os.ReadFile(proc + "/io"); err == nil {
				cur.readBytes, _ = parseReadBytes(data)
			}
			// Kept only when a count moved: ioBy needs no more, and after
			// start they rarely move.
			s.mu.Lock()
			if k := len(s.io); k == 0 || s.io[k-1].majflt != cur.majflt || s.io[k-1].readBytes != cur.readBytes {
				s.io = append(s.io, cur)
			}
			s.mu.Unlock()
		}
	}
	dir := proc + "/task/"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		data, err := os.ReadFile(dir + e.Name() + "/stat")
		if err != nil {
			continue
		}
		ts, ok := parseThreadStat(data)
		if !ok {
			continue
		}
		t := threads[e.Name()]
		if t == nil {
			t = &sampledThread{}
			threads[e.Name()] = t
		}
		s.addWait(t.wait.observe(ts, now))
		s.addDisk(t.disk.observe(ts.disk, now, s.every))
	}
	for name, t := range threads {
		if t.wait.lastSeen != now {
			s.addWait(t.wait.close())
			s.addDisk(t.disk.close())
			delete(threads, name)
		}
	}
}

// sampleStart keeps the process's CPU time (from its statFields) and the
// machine's, during the first startWindow.
func (s *threadSampler) sampleStart(f []string, now time.Time) {
	if s.first.IsZero() {
		s.first = now
	}
	if now.Sub(s.first) > startWindow || f == nil {
		return
	}
	proc, err := cpuTicks(f)
	if err != nil {
		return
	}
	all, err := os.ReadFile("/proc/stat")
	if err != nil {
		return
	}
	busy, total, ok := parseMachineCPU(all)
	if !ok {
		return
	}
	s.mu.Lock()
	s.start = append(s.start, cpuSample{at: now, proc: proc, busy: busy, all: total})
	s.mu.Unlock()
}

// parseMachineCPU reads the "cpu" line of /proc/stat: all CPUs' busy time
// (everything but idle and iowait) and their total, in ticks.
func parseMachineCPU(data []byte) (busy, total uint64, ok bool) {
	line, _, _ := bytes.Cut(data, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 6 || string(f[0]) != "cpu" {
		return 0, 0, false
	}
	var idle uint64
	for i, v := range f[1:] {
		n, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil {
			return 0, 0, false
		}
		// guest and guest_nice (fields 9 and 10) are already in user and
		// nice.
		if i >= 8 {
			break
		}
		total += n
		if i == 3 || i == 4 { // idle, iowait
			idle += n
		}
	}
	return total - idle, total, true
}

// majorFaults reads majflt from the statFields of /proc/<pid>/stat.
func majorFaults(f []string) (uint64, bool) {
	if f == nil {
		return 0, false
	}
	n, err := strconv.ParseUint(f[9], 10, 64)
	return n, err == nil
}

// parseReadBytes reads read_bytes from /proc/<pid>/io: what the process
// had the block layer fetch, page faults' read-ahead included.
func parseReadBytes(data []byte) (uint64, bool) {
	for line := range bytes.Lines(data) {
		if v, ok := bytes.CutPrefix(line, []byte("read_bytes:")); ok {
			n, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// parseThreadStat reads the state and CPU ticks from /proc/<pid>/task/<tid>/stat.
func parseThreadStat(data []byte) (threadSample, bool) {
	f := statFields(data)
	if f == nil {
		return threadSample{}, false
	}
	cpu, err := cpuTicks(f)
	if err != nil {
		return threadSample{}, false
	}
	return threadSample{runnable: f[0] == "R", disk: f[0] == "D", cpu: cpu}, true
}

// sampled is what a threadSampler saw, each kind of wait merged across
// threads: the stretches in which at least one of the process's threads
// waited so.
type sampled struct {
	runnable, disk []span
	io             []ioSample
	start          []cpuSample
}

// finish stops sampling and returns what it saw.
func (s *threadSampler) finish() sampled {
	s.once.Do(func() { close(s.stop) })
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return sampled{runnable: mergeSpans(s.spans), disk: mergeSpans(s.disk), io: s.io, start: s.start}
}

// ioBy is the faults and reads as last sampled by t.
func (sm sampled) ioBy(t time.Time) ioSample {
	i := sort.Search(len(sm.io), func(i int) bool { return sm.io[i].at.After(t) })
	if i == 0 {
		return ioSample{}
	}
	return sm.io[i-1]
}

// startCPU is the process's CPU time by t, and how busy the machine's CPUs
// were from the first sample to t (0-100, all CPUs together), from the
// samples of the first startWindow; false without two samples by t.
func (sm sampled) startCPU(t time.Time) (procMs, busyPct float64, ok bool) {
	i := sort.Search(len(sm.start), func(i int) bool { return sm.start[i].at.After(t) })
	if i < 2 {
		return 0, 0, false
	}
	a, b := sm.start[0], sm.start[i-1]
	procMs = float64(b.proc) * 1000 / clockTicks
	if b.all > a.all {
		busyPct = float64(b.busy-a.busy) / float64(b.all-a.all) * 100
	}
	return procMs, busyPct, true
}

func mergeSpans(in []span) []span {
	ss := append([]span(nil), in...)
	sort.Slice(ss, func(i, j int) bool { return ss[i].from.Before(ss[j].from) })
	var out []span
	for _, sp := range ss {
		if n := len(out); n > 0 && !sp.from.After(out[n-1].to) {
			if sp.to.After(out[n-1].to) {
				out[n-1].to = sp.to
			}
			continue
		}
		out = append(out, sp)
	}
	return out
}

// Waits is a window's runnable waits of the console (every thread's,
// merged), and how many of its slow writes they explain.
type Waits struct {
	N         int     `json:"n"`
	TotalMs   float64 `json:"total_ms"`
	LongestMs float64 `json:"longest_ms"`
	// SlowWrites are writes whose console share (event applied → the
	// console's write) exceeded slowShare; SlowWritesWaited those among them
	// during which the console waited (a wait overlapped the share).
	SlowWrites       int `json:"slow_writes"`
	SlowWritesWaited int `json:"slow_writes_waited"`
	// LateEvents are writes whose watch event the console applied more than
	// slowShare after the API server replied to the write; LateEventsWaited
	// those among them during which the console waited (a wait overlapped
	// reply → applied). The API server can be late to send an event; a
	// console kept off the CPU is late to read and decode it, and then the
	// delay falls outside its own share.
	LateEvents       int `json:"late_events"`
	LateEventsWaited int `json:"late_events_waited"`
}

// slowShare is the console's share above which a write is slow: on its own
// it would break the 150 ms target even with an instant API server.
const slowShare = 150 * time.Millisecond

// summarizeWaits sums the waits (merged, sorted) within win, and
// attributes the console shares in shares (each applied → written) and the
// deliveries (each API reply → applied).
func summarizeWaits(waits []span, win span, shares, deliveries []span) *Waits {
	st := &Waits{}
	var total, longest time.Duration
	for _, w := range waits {
		if d := clip(w, win).len(); d > 0 {
			st.N++
			total += d
			longest = max(longest, d)
		}
	}
	st.TotalMs, st.LongestMs = ms(total), ms(longest)
	st.SlowWrites, st.SlowWritesWaited = longerThan(slowShare, shares, waits)
	st.LateEvents, st.LateEventsWaited = longerThan(slowShare, deliveries, waits)
	return st
}

// longerThan counts the spans longer than d, and those among them that
// overlap one of the sorted, disjoint waits.
func longerThan(d time.Duration, spans, waits []span) (n, waited int) {
	for _, sp := range spans {
		if sp.len() <= d {
			continue
		}
		n++
		if overlaps(waits, sp) {
			waited++
		}
	}
	return n, waited
}

// clip is sp within win (empty, from after to, when they do not meet).
func clip(sp, win span) span {
	if sp.from.Before(win.from) {
		sp.from = win.from
	}
	if sp.to.After(win.to) {
		sp.to = win.to
	}
	return sp
}

// waitedWithin is the total wait within win.
func waitedWithin(waits []span, win span) time.Duration {
	var d time.Duration
	for _, w := range waits {
		if l := clip(w, win).len(); l > 0 {
			d += l
		}
	}
	return d
}

// overlaps reports whether any of the sorted, disjoint waits overlaps sp.
func overlaps(waits []span, sp span) bool {
	i := sort.Search(len(waits), func(i int) bool { return waits[i].to.After(sp.from) })
	return i < len(waits) && waits[i].from.Before(sp.to)
}
