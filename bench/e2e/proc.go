package main

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat:
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// statFields splits a /proc/<pid>/stat (or task stat) line after the
// command name, which may hold spaces and parentheses: f[0] is the state,
// f[9] majflt, f[11] and f[12] utime and stime. nil when it is shorter.
func statFields(data []byte) []string {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return nil
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return nil
	}
	return f
}

// cpuTicks is utime + stime from statFields, in clock ticks.
func cpuTicks(f []string) (uint64, error) {
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	return ut + st, errors.Join(err1, err2)
}

// cpuSeconds is a process's user plus system CPU time so far.
func cpuSeconds(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	f := statFields(data)
	if f == nil {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	t, err := cpuTicks(f)
	if err != nil {
		return 0, err
	}
	return float64(t) / clockTicks, nil
}

// peakRSS is VmHWM, the process's resident set high-water mark, in bytes.
func peakRSS(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmHWM", pid)
}

// descendant finds a process started (directly or through a shim) by this
// one whose command name is comm: the control plane's kube-apiserver and
// etcd.
func descendant(comm string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	parent := map[int]int{}
	name := map[int]string{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		open, close := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
		if open < 0 || close < open {
			continue
		}
		f := strings.Fields(string(data[close+1:]))
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		parent[pid], name[pid] = ppid, string(data[open+1:close])
	}
	self := os.Getpid()
	for pid, n := range name {
		if n != comm {
			continue
		}
		for p := parent[pid]; p > 1; p = parent[p] {
			if p == self {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("no %s process started by this benchmark", comm)
}

// cpuMeter measures the share of one core processes used over a window.
type cpuMeter struct {
	pids  []int
	start float64
	at    time.Time
}

func startCPU(pids ...int) *cpuMeter {
	m := &cpuMeter{pids: pids, at: time.Now()}
	m.start = m.total()
	return m
}

func (m *cpuMeter) total() float64 {
	var sum float64
	for _, p := range m.pids {
		s, _ := cpuSeconds(p)
		sum += s
	}
	return sum
}

// percent is the CPU used since start, in percent of one core.
func (m *cpuMeter) percent() float64 {
	wall := time.Since(m.at).Seconds()
	if wall <= 0 {
		return 0
	}
	return 100 * (m.total() - m.start) / wall
}

// termProc is a process running in a pseudo-terminal of a fixed size, as an
// operator's terminal runs it. Everything it writes is read at once (a
// terminal that stops reading would stall the process) and timestamped.
type termProc struct {
	name  string
	cmd   *exec.Cmd
	pty   *os.File
	start time.Time
	done  chan struct{}

	mu        sync.Mutex
	chunks    []time.Time // arrival of each read
	lines     []termLine  // complete lines, when line-oriented (kubectl)
	partial   []byte
	keepLines bool
	rss       int64 // peak RSS seen so far, bytes
	// marker is a byte sequence whose first arrival is noted in markerAt
	// (tail holds the end of the output before the latest read, for a
	// marker split across reads).
	marker   []byte
	markerAt time.Time
	tail     []byte
}

type termLine struct {
	at   time.Time
	text string
}

// startTerm starts path in a pseudo-terminal of cols×rows; keepLines keeps
// its output as lines, and the first arrival of marker (if any) is noted.
func startTerm(name string, cols, rows int, keepLines bool, marker []byte, stderr *os.File, env []string, path string, args ...string) (*termProc, error) {
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), env...)
	if stderr != nil {
		// Diagnostics such as GODEBUG=gctrace=1 go to stderr: kept off the
		// terminal, where they would count as frames.
		cmd.Stderr = stderr
	}
	p := &termProc{name: name, cmd: cmd, done: make(chan struct{}), keepLines: keepLines, marker: marker}
	p.start = time.Now()
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p.pty = f
	go p.read()
	p.watchRSS()
	return p, nil
}

func (p *termProc) read() {
	defer close(p.done)
	buf := make([]byte, 64<<10)
	for {
		n, err := p.pty.Read(buf)
		if n > 0 {
			now := time.Now()
			p.mu.Lock()
			p.chunks = append(p.chunks, now)
			p.seekMarker(buf[:n], now)
			if p.keepLines {
				p.partial = append(p.partial, buf[:n]...)
				for {
					i := bytes.IndexByte(p.partial, '\n')
					if i < 0 {
						break
					}
					p.lines = append(p.lines, termLine{at: now, text: strings.TrimRight(string(p.partial[:i]), "\r")})
					p.partial = p.partial[i+1:]
				}
			}
			p.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

func (p *termProc) pid() int { return p.cmd.Process.Pid }

// watchRSS samples the peak RSS every half second, so the figure survives
// the process ending early (a zombie has no VmHWM).
func (p *termProc) watchRSS() {
	go func() {
		for {
			if v, err := peakRSS(p.pid()); err == nil {
				p.mu.Lock()
				p.rss = max(p.rss, v)
				p.mu.Unlock()
			}
			select {
			case <-p.done:
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
}

// peakRSS is the process's peak resident set in bytes, and whether it is
// still running.
func (p *termProc) peakRSS() (int64, bool) {
	v, err := peakRSS(p.pid())
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil {
		p.rss = max(p.rss, v)
	}
	return p.rss, err == nil
}

// exited reports whether the process ended, with the last lines it wrote.
func (p *termProc) exited() (bool, string) {
	select {
	case <-p.done:
	default:
		return false, ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	tail := p.lines[max(len(p.lines)-3, 0):]
	var out []string
	for _, l := range tail {
		out = append(out, l.text)
	}
	return true, strings.Join(out, " | ") + string(p.partial)
}

// seekMarker notes when the marker first arrived; p.mu is held.
func (p *termProc) seekMarker(b []byte, now time.Time) {
	if len(p.marker) == 0 || !p.markerAt.IsZero() {
		return
	}
	p.tail = append(p.tail, b...)
	if bytes.Contains(p.tail, p.marker) {
		p.markerAt, p.tail = now, nil
		return
	}
	if keep := len(p.marker) - 1; len(p.tail) > keep {
		p.tail = append(p.tail[:0], p.tail[len(p.tail)-keep:]...)
	}
}

// markerArrived is when the marker first arrived (zero if it has not).
func (p *termProc) markerArrived() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.markerAt
}

// firstOutputAfter is when the terminal first received bytes at or after t
// (zero if it has not yet).
func (p *termProc) firstOutputAfter(t time.Time) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	lo, hi := 0, len(p.chunks)
	for lo < hi {
		mid := (lo + hi) / 2
		if p.chunks[mid].Before(t) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == len(p.chunks) {
		return time.Time{}
	}
	return p.chunks[lo]
}

func (p *termProc) snapshotLines() []termLine {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]termLine(nil), p.lines...)
}

// stop asks the process to end (quit key, then SIGTERM, then SIGKILL) and
// waits for it.
func (p *termProc) stop(quitKey string) {
	exited := make(chan struct{})
	go func() {
		_ = p.cmd.Wait()
		close(exited)
	}()
	if quitKey != "" {
		_, _ = p.pty.Write([]byte(quitKey))
	} else {
		_ = p.cmd.Process.Signal(syscall.SIGINT)
	}
	for _, next := range []func(){
		func() { _ = p.cmd.Process.Signal(syscall.SIGTERM) },
		func() { _ = p.cmd.Process.Kill() },
	} {
		select {
		case <-exited:
			_ = p.pty.Close()
			return
		case <-time.After(5 * time.Second):
			next()
		}
	}
	<-exited
	_ = p.pty.Close()
}

// readAheadKB is read_ahead_kb of the block device that holds path, found
// under sysfs (normally /sys): dev/block/MAJ:MIN is the disk or, for a
// partition, a directory inside the disk's, whose queue holds the setting.
// false when path is on no block device (tmpfs, overlay, …).
func readAheadKB(sysfs, path string) (int, bool) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, false
	}
	dev, err := filepath.EvalSymlinks(filepath.Join(sysfs, "dev", "block", fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))))
	if err != nil {
		return 0, false
	}
	for _, dir := range []string{dev, filepath.Dir(dev)} {
		if data, err := os.ReadFile(filepath.Join(dir, "queue", "read_ahead_kb")); err == nil {
			kb, err := strconv.Atoi(strings.TrimSpace(string(data)))
			return kb, err == nil
		}
	}
	return 0, false
}

// loadedMB is the size of what the kernel maps of the ELF binary at path
// from its file (its PT_LOAD segments' file sizes, in MB): the most a start
// from a cold page cache has to read of it.
func loadedMB(path string) (float64, error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var n uint64
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			n += p.Filesz
		}
	}
	return float64(n) / 1e6, nil
}

// cachedPct is how much of the file at path is in the page cache, in
// percent (mincore of a read-only mapping): taken just before the console
// starts, it says whether its first frame had its binary in memory or had
// to read it from disk.
func cachedPct(path string) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if st.Size() == 0 {
		return 0, fmt.Errorf("%s is empty", path)
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return 0, err
	}
	defer func() { _ = unix.Munmap(data) }()
	pages := make([]byte, (len(data)+os.Getpagesize()-1)/os.Getpagesize())
	// x/sys/unix has no Mincore for Linux.
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&data[0])), uintptr(len(data)), uintptr(unsafe.Pointer(&pages[0]))); errno != 0 {
		return 0, errno
	}
	in := 0
	for _, p := range pages {
		in += int(p & 1)
	}
	return 100 * float64(in) / float64(len(pages)), nil
}

// damonPageoutAfter is how long a page must go unused before the kernel's
// DAMON reclaim pages it out, when a running kdamond under sysfs (normally
// /sys) has a pageout scheme: its minimum age (in aggregation intervals)
// times its aggregation interval. Virtual machines use it to hand idle page
// cache back to the host; it is why a binary not run for a minute is read
// from disk again. false when no such scheme runs.
func damonPageoutAfter(sysfs string) (time.Duration, bool) {
	kd := filepath.Join(sysfs, "kernel", "mm", "damon", "admin", "kdamonds")
	states, _ := filepath.Glob(filepath.Join(kd, "*", "state"))
	var best time.Duration
	found := false
	for _, state := range states {
		if v, err := os.ReadFile(state); err != nil || strings.TrimSpace(string(v)) != "on" {
			continue
		}
		ctxs, _ := filepath.Glob(filepath.Join(filepath.Dir(state), "contexts", "*"))
		for _, ctx := range ctxs {
			aggrUs, ok := readInt(filepath.Join(ctx, "monitoring_attrs", "intervals", "aggr_us"))
			if !ok {
				continue
			}
			schemes, _ := filepath.Glob(filepath.Join(ctx, "schemes", "*"))
			for _, sc := range schemes {
				if v, err := os.ReadFile(filepath.Join(sc, "action")); err != nil || strings.TrimSpace(string(v)) != "pageout" {
					continue
				}
				age, ok := readInt(filepath.Join(sc, "access_pattern", "age", "min"))
				if !ok {
					continue
				}
				d := time.Duration(age*aggrUs) * time.Microsecond
				if !found || d < best {
					best, found = d, true
				}
			}
		}
	}
	return best, found
}

func readInt(path string) (int64, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	return n, err == nil
}
