package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

type bench struct {
	o       *options
	w       *world
	apiPid  int
	etcdPid int
	drv     *driver
	next    int // the fixed-rate writer's position in the machine pool
	metrics rest.Interface
}

// requests counts the API server's requests so far: what is left once
// watches and the API server's own housekeeping are set aside comes from
// clients listing, getting or writing objects, or reading discovery — a
// viewer that polls shows here.
func (b *bench) requests(ctx context.Context) (int, error) {
	data, err := b.metrics.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, err
	}
	return countRequests(data), nil
}

// requestsOver counts the requests the API server serves over d. A count
// it cannot read is an error, never a difference of two failures.
func (b *bench) requestsOver(ctx context.Context, d time.Duration) (int, error) {
	before, err := b.requests(ctx)
	if err != nil {
		return 0, err
	}
	if err := sleep(ctx, d); err != nil {
		return 0, err
	}
	after, err := b.requests(ctx)
	if err != nil {
		return 0, err
	}
	return after - before, nil
}

// countRequests sums apiserver_request_total in a /metrics page, less:
//   - watches, held open rather than polled;
//   - leases, endpoints and endpointslices: kube-apiserver renews its
//     identity Lease and reconciles the kubernetes Service's endpoints
//     every ten seconds or so. The metric has no namespace, so a viewer
//     that polled these would be hidden too; the console only lists and
//     watches its lock's Lease;
//   - non-resource paths other than discovery: /metrics (this benchmark's
//     own reads), /healthz, /livez, /readyz. Discovery (/api, /apis and
//     below) counts: a client that polls for new kinds polls there;
//   - the driver's own writes, PATCHes on machines/status.
func countRequests(data []byte) int {
	total := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, "apiserver_request_total{") {
			continue
		}
		labels, value, _ := strings.Cut(strings.TrimPrefix(l, "apiserver_request_total{"), "} ")
		lb := parseLabels(labels)
		switch resource := lb["resource"]; {
		case lb["verb"] == "WATCH", resource == "leases", resource == "endpoints", resource == "endpointslices":
			continue
		case resource == "" && !discovery(lb["subresource"]):
			continue
		case resource == "machines" && lb["verb"] == "PATCH":
			continue
		}
		v, _ := strconv.ParseFloat(strings.TrimSpace(value), 64)
		total += int(v)
	}
	return total
}

// parseLabels reads a metric's name="value" pairs. Matching on substrings
// instead would take subresource="" for resource="".
func parseLabels(s string) map[string]string {
	out := map[string]string{}
	for s != "" {
		name, rest, ok := strings.Cut(s, `="`)
		if !ok {
			break
		}
		value, rest, _ := strings.Cut(rest, `"`)
		out[strings.TrimSpace(name)] = value
		s = strings.TrimPrefix(rest, ",")
	}
	return out
}

// discovery says whether a non-resource request's path, which the API
// server records as its subresource, is discovery's. kube-apiserver v1.36
// records "api" and "apis", without the leading slash (read off its
// /metrics after `kubectl api-resources`); a path with one is taken too.
func discovery(path string) bool {
	path = strings.TrimPrefix(path, "/")
	return path == "api" || path == "apis" || strings.HasPrefix(path, "api/") || strings.HasPrefix(path, "apis/")
}

// windows are the measurements every viewer goes through once it synced:
// idle, a fixed write rate, saturation.
type windows struct {
	cpuIdle, apiIdle float64
	reqsIdle         int
	rate, sat        []write
	cpuRate, cpuSat  float64
	satSeconds       float64
	rateSeconds      float64
	// rssAt is the peak RSS (MiB) at the end of each window.
	rssAt map[string]float64
	// notSentRate and notSentLow count the ticks that sent nothing.
	notSentRate, notSentLow int
	// low is the optional window at a rate the API server sustains.
	low []write
	// cpAPIRate and cpAPISat are kube-apiserver + etcd CPU in the windows.
	cpRate, cpSat float64
}

func (b *bench) exercise(ctx context.Context, name string, rss func() float64, pids ...int) (*windows, error) {
	o := b.o
	ws := &windows{rssAt: map[string]float64{}}
	defer func() { ws.rssAt["end"] = rss() }()
	if err := sleep(ctx, o.settle); err != nil {
		return nil, err
	}
	ws.rssAt["synced"] = rss()
	logf("%s: idle for %s (peak RSS so far %.1f MiB)", name, o.idle, ws.rssAt["synced"])
	cpu, api := startCPU(pids...), startCPU(b.apiPid)
	reqs, err := b.requestsOver(ctx, o.idle)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		logf("%s: the API server's request count: %v", name, err)
		reqs = -1
	}
	ws.cpuIdle, ws.apiIdle, ws.reqsIdle = cpu.percent(), api.percent(), reqs
	ws.rssAt["idle"] = rss()
	if o.lowRate > 0 {
		logf("%s: %g writes/s for %s", name, o.lowRate, o.lowRateDur)
		ws.low, ws.notSentLow = b.drv.atRate(ctx, o.lowRate, o.lowRateDur, &b.next)
		if err := b.checkWrites(ctx, name, ws.low); err != nil {
			return nil, err
		}
		if err := sleep(ctx, 2*time.Second); err != nil {
			return nil, err
		}
	}
	logf("%s: %g writes/s for %s", name, o.rate, o.rateDur)
	cpu, cp := startCPU(pids...), startCPU(b.apiPid, b.etcdPid)
	if o.apiRateProfile != "" {
		go b.profileAPIServer(ctx, o.rateDur, o.apiRateProfile+"."+name, "the fixed rate with the "+name+" watching")
	}
	ws.rate, ws.notSentRate = b.drv.atRate(ctx, o.rate, o.rateDur, &b.next)
	ws.rateSeconds = o.rateDur.Seconds()
	ws.cpuRate, ws.cpRate = cpu.percent(), cp.percent()
	ws.rssAt["rate"] = rss()
	if err := b.checkWrites(ctx, name, ws.rate); err != nil {
		return nil, err
	}
	if err := sleep(ctx, 2*time.Second); err != nil {
		return nil, err
	}
	logf("%s: saturating with %d writers for %s", name, o.satWorkers, o.satDur)
	cpu, cp = startCPU(pids...), startCPU(b.apiPid, b.etcdPid)
	began := time.Now()
	if o.apiProfile != "" && name == "console" {
		go b.profileAPIServer(ctx, o.satDur, o.apiProfile, "saturation")
	}
	ws.sat = b.drv.saturate(ctx, o.satWorkers, o.satDur)
	ws.satSeconds = time.Since(began).Seconds()
	ws.cpuSat, ws.cpSat = cpu.percent(), cp.percent()
	if err := b.checkWrites(ctx, name, ws.sat); err != nil {
		return nil, err
	}
	// Let the viewer show the last writes before it is judged.
	return ws, sleep(ctx, 5*time.Second)
}

func (ws *windows) fill(b *bench, v *Viewer, shown func(write) (time.Time, bool)) {
	v.CPUIdlePct, v.APIServerIdlePct, v.APIServerRequestsIdle = ws.cpuIdle, ws.apiIdle, ws.reqsIdle
	v.CPURatePct, v.CPUSaturatePct = ws.cpuRate, ws.cpuSat
	v.APIWriteRate, v.FailedWritesRate = apiLatency(ws.rate)
	v.APIWriteSaturate, v.FailedWritesSaturate = apiLatency(ws.sat)
	v.WritesPerSecSat = float64(len(okWrites(ws.sat))) / ws.satSeconds
	v.RateAchieved, v.NotSentRate = float64(len(ws.rate))/ws.rateSeconds, ws.notSentRate
	v.Rate, v.MissedRate = latencies(okWrites(ws.rate), shown)
	v.ReplyRate, _ = latencies(okWrites(ws.rate), func(w write) (time.Time, bool) {
		at, ok := shown(w)
		return at.Add(-w.returned.Sub(w.sent)), ok
	})
	v.Saturate, v.MissedSaturate = latencies(okWrites(ws.sat), shown)
	v.ControlPlaneCPURatePct, v.ControlPlaneCPUSaturatePct = ws.cpRate, ws.cpSat
	v.PeakRSSAtMiB = ws.rssAt
	if len(ws.low) > 0 {
		low := &LowRate{Rate: b.o.lowRate, Seconds: b.o.lowRateDur.Seconds(), NotSent: ws.notSentLow}
		low.WriteToScreen, low.Missed = latencies(okWrites(ws.low), shown)
		low.APIWrite, low.Failed = apiLatency(ws.low)
		v.Low = low
	}
}

func latencies(ws []write, shown func(write) (time.Time, bool)) (dist, int) {
	var ds []time.Duration
	missed := 0
	for _, w := range ws {
		at, ok := shown(w)
		if !ok {
			missed++
			continue
		}
		ds = append(ds, at.Sub(w.sent))
	}
	return distribution(ds), missed
}

// shownBy returns, for points (time, resourceVersion) in time order, the
// first time a version at least rv was shown.
func shownBy(ts []time.Time, rvs []uint64) func(rv uint64) (time.Time, bool) {
	reach := reachedBy(rvs)
	return func(rv uint64) (time.Time, bool) {
		i := reach(rv)
		if i < 0 {
			return time.Time{}, false
		}
		return ts[i], true
	}
}

// reachedBy returns, for resourceVersions in time order, the index of the
// first point whose version, or an earlier point's, is at least rv (-1 if
// none).
func reachedBy(rvs []uint64) func(rv uint64) int {
	top := make([]uint64, len(rvs))
	var m uint64
	for i, rv := range rvs {
		m = max(m, rv)
		top[i] = m
	}
	return func(rv uint64) int {
		i := sort.Search(len(top), func(i int) bool { return top[i] >= rv })
		if i == len(top) {
			return -1
		}
		return i
	}
}

// rendererTick is the console's renderer period (tui.rendererFPS = 20): a
// frame handed to it is flushed within one tick, or was nothing new.
const rendererTick = 50 * time.Millisecond

// sameBound caps when a "same" frame (one that draws exactly what the frame
// before it drew) is on the screen: the renderer writes nothing for it, so
// the next write is another frame's. The screen holds its content at the
// latest after the write of the frame before it, which the renderer makes
// within a tick of the frame built: at or before built + rendererTick.
func sameBound(l frameLine, next time.Time, ok bool) (time.Time, bool) {
	if l.event != "same" {
		return next, ok
	}
	if limit := l.at.Add(rendererTick); !ok || next.After(limit) {
		return limit, true
	}
	return next, ok
}

// frameLine is one line of the console's frame log (tui.FrameLogEnv).
type frameLine struct {
	at      time.Time
	event   string
	version uint64
	rv      uint64
	synced  bool
	taken   time.Time // when the watcher took the snapshot
}

// readFrameLog reads the frames and, in time order, the renderer's writes
// to the terminal ("<unix ns> write <bytes>" lines).
func readFrameLog(path string) ([]frameLine, []time.Time, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var out []frameLine
	var writes []time.Time
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) == 3 && f[1] == "write" {
			if ns, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				writes = append(writes, time.Unix(0, ns))
			}
			continue
		}
		if len(f) != 6 {
			continue
		}
		ns, _ := strconv.ParseInt(f[0], 10, 64)
		v, _ := strconv.ParseUint(f[2], 10, 64)
		rv, _ := strconv.ParseUint(f[3], 10, 64)
		taken, _ := strconv.ParseInt(f[5], 10, 64)
		out = append(out, frameLine{at: time.Unix(0, ns), event: f[1], version: v, rv: rv, synced: f[4] == "1", taken: time.Unix(0, taken)})
	}
	slices.SortFunc(writes, time.Time.Compare)
	return out, writes, nil
}

// firstAtOrAfter is the first of ts (sorted) at or after t.
func firstAtOrAfter(ts []time.Time, t time.Time) (time.Time, bool) {
	i := sort.Search(len(ts), func(i int) bool { return !ts[i].Before(t) })
	if i == len(ts) {
		return time.Time{}, false
	}
	return ts[i], true
}

func findEvent(fl []frameLine, event string) (frameLine, bool) {
	for _, l := range fl {
		if l.event == event {
			return l, true
		}
	}
	return frameLine{}, false
}

// console runs `upgrade-console watch` in a terminal and measures it.
func (b *bench) console(ctx context.Context, tmp string) (*Viewer, error) {
	o := b.o
	flog := filepath.Join(tmp, "frames")
	args := []string{"watch", "--cluster", b.w.sc.ClusterName, "--kubeconfig", b.w.env.KubeconfigPath,
		"--read-only", "--log-file", filepath.Join(tmp, "console.log")}
	elog := filepath.Join(tmp, "events")
	env := append([]string{"TERM=xterm-256color", "UPGRADE_CONSOLE_FRAMELOG=" + flog, "UPGRADE_CONSOLE_EVENTLOG=" + elog}, o.consoleEnv...)
	logf("console: starting %s %s", o.console, strings.Join(args, " "))
	var stderr *os.File
	if o.consoleStderr != "" {
		f, err := os.Create(o.consoleStderr)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		stderr = f
	}
	// Taken before the start, so that the start itself is not counted.
	cached, cachedErr := cachedPct(o.console)
	p, err := startTerm("console", o.cols, o.rows, false, []byte(altScreen), stderr, env, o.console, args...)
	if err != nil {
		return nil, err
	}
	var sampler *threadSampler
	if o.waitSample > 0 {
		sampler = startThreadSampler(p.pid(), o.waitSample)
	}
	defer func() {
		if sampler != nil {
			sampler.finish()
		}
		p.stop("q")
		// The console's log and traces outlive the run: they explain what
		// the numbers do not (relists, watch errors, when a stage lagged).
		for _, name := range []string{"console.log", "frames", "events"} {
			if data, err := os.ReadFile(filepath.Join(tmp, name)); err == nil {
				kept := filepath.Join(os.TempDir(), "upgrade-console-bench-"+name)
				if os.WriteFile(kept, data, 0o644) == nil {
					logf("console %s kept in %s", name, kept)
				}
			}
		}
	}()
	v := &Viewer{Command: consoleCommand(args)}
	deadline := time.Now().Add(o.syncTimeout)
	var fl []frameLine
	for {
		fl, _, _ = readFrameLog(flog)
		if _, ok := findEvent(fl, "synced"); ok {
			break
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("the console exited before it synced (log in %s)", filepath.Join(tmp, "console.log"))
		default:
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("not synced after %s", o.syncTimeout)
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return nil, err
		}
	}
	onScreen := func(t time.Time) (time.Time, bool) {
		at := p.firstOutputAfter(t)
		return at, !at.IsZero()
	}
	first, _ := findEvent(fl, "first")
	synced, _ := findEvent(fl, "synced")
	logf("console: first frame built after %.0f ms, synced after %.0f ms", ms(first.at.Sub(p.start)), ms(synced.at.Sub(p.start)))

	ws, err := b.exercise(ctx, "console", func() float64 { r, _ := p.peakRSS(); return float64(r) / (1 << 20) }, p.pid())
	if err != nil {
		return nil, err
	}
	rss, alive := p.peakRSS()
	v.PeakRSSMiB = float64(rss) / (1 << 20)
	if !alive {
		_, tail := p.exited()
		return nil, fmt.Errorf("the console exited during the run: %s", tail)
	}
	fl, termWrites, err := readFrameLog(flog)
	if err != nil {
		return nil, err
	}
	var seen sampled
	if sampler != nil {
		seen = sampler.finish()
	}
	// On the terminal: the renderer's first write after the frame was
	// built, and not before the switch to the alternate screen, which
	// comes with the first frame (Bubble Tea's first write may be only
	// its queries to the terminal).
	if at, ok := onScreen(first.at); ok {
		onTerm := maxTime(at, p.markerArrived())
		v.FirstFrameMs = ms(onTerm.Sub(p.start))
		if sampler != nil {
			upTo := span{p.start, onTerm}
			read := seen.ioBy(onTerm)
			v.FirstFrameWaits = &FirstFrameWaits{
				RunnableMs:  ms(waitedWithin(seen.runnable, upTo)),
				DiskMs:      ms(waitedWithin(seen.disk, upTo)),
				MajorFaults: read.majflt,
				ReadMB:      float64(read.readBytes) / 1e6,
			}
			v.FirstFrameWaits.CPUMs, v.FirstFrameWaits.MachineBusyPct, _ = seen.startCPU(onTerm)
			if cachedErr == nil {
				v.FirstFrameWaits.BinaryCachedPct = &cached
			}
		}
	}
	if at, ok := onScreen(synced.at); ok {
		v.SyncedMs = ms(at.Sub(p.start))
	}
	rvs := make([]uint64, len(fl))
	for i, l := range fl {
		rvs[i] = l.rv
	}
	// reach(rv) is the first frame built from a snapshot holding the write
	// that got rv: the frame log gives the snapshot, not what was drawn.
	reach := reachedBy(rvs)
	frameTime := func(at func(frameLine) time.Time) func(write) (time.Time, bool) {
		return func(w write) (time.Time, bool) {
			i := reach(w.rv)
			if i < 0 {
				return time.Time{}, false
			}
			return at(fl[i]), true
		}
	}
	drawn := frameTime(func(l frameLine) time.Time { return l.at })
	snapshotTaken := frameTime(func(l frameLine) time.Time { return l.taken })
	// A write whose first frame is "same" changed nothing on the screen
	// (the machine is off the visible rows and the counts netted out): it
	// is on the screen once that content is, not at the next write, which
	// shows some later change.
	screenAt := func(w write) (time.Time, bool) {
		i := reach(w.rv)
		if i < 0 {
			return time.Time{}, false
		}
		at, ok := onScreen(fl[i].at)
		return sameBound(fl[i], at, ok)
	}
	ws.fill(b, v, screenAt)
	built, _ := latencies(okWrites(ws.rate), drawn)
	taken, _ := latencies(okWrites(ws.rate), snapshotTaken)
	v.DrawnRate, v.SnapshotRate = &built, &taken
	builtSat, _ := latencies(okWrites(ws.sat), drawn)
	takenSat, _ := latencies(okWrites(ws.sat), snapshotTaken)
	v.DrawnSaturate, v.SnapshotSaturate = &builtSat, &takenSat

	// The API server's share ends when the console applies the watch event;
	// the rest (coalescing, drawing, flushing) is the console's own.
	ets, erv, err := readEventLog(elog, machinesResource)
	if err != nil {
		return nil, err
	}
	applied := shownBy(ets, erv)
	appliedAt := func(w write) (time.Time, bool) { return applied(w.rv) }
	// The renderer's write of the frame: when the console drew it, by its
	// own clock; from there to screenAt is the terminal and this process's
	// reader of it.
	writtenAt := func(w write) (time.Time, bool) {
		i := reach(w.rv)
		if i < 0 {
			return time.Time{}, false
		}
		at, ok := firstAtOrAfter(termWrites, fl[i].at)
		return sameBound(fl[i], at, ok)
	}
	offScreen := func(ws []write) int {
		n := 0
		for _, w := range ws {
			if i := reach(w.rv); i >= 0 && fl[i].event == "same" {
				n++
			}
		}
		return n
	}
	v.OffScreenRate, v.OffScreenSaturate = offScreen(okWrites(ws.rate)), offScreen(okWrites(ws.sat))
	stages := func(ws []write) *Stages {
		st := &Stages{
			WriteToApplied:  stage(ws, sentAt, appliedAt),
			AppliedToScreen: stage(ws, appliedAt, screenAt),
		}
		if len(termWrites) > 0 {
			written, read := stage(ws, appliedAt, writtenAt), stage(ws, writtenAt, screenAt)
			st.AppliedToWritten, st.WrittenToRead = &written, &read
		}
		if sampler != nil && len(ws) > 0 && len(termWrites) > 0 {
			var shares, deliveries []span
			first, last := ws[0].sent, ws[0].sent
			for _, w := range ws {
				a, ok1 := appliedAt(w)
				b, ok2 := writtenAt(w)
				if ok1 && ok2 {
					shares = append(shares, span{a, b})
				}
				if ok1 {
					deliveries = append(deliveries, span{w.returned, a})
				}
				if w.sent.Before(first) {
					first = w.sent
				}
				last = maxTime(last, w.sent)
			}
			// The window runs until its last write could be on screen.
			st.RunnableWaits = summarizeWaits(seen.runnable, span{first, last.Add(time.Second)}, shares, deliveries)
		}
		return st
	}
	v.StagesRate, v.StagesSaturate = stages(okWrites(ws.rate)), stages(okWrites(ws.sat))
	if v.Low != nil {
		v.Low.Stages = stages(okWrites(ws.low))
	}
	return v, nil
}

// consoleCommand is the console's command as the results name it: every
// flag it ran with (--read-only is why it takes no lock), less the run's
// temporary files.
func consoleCommand(args []string) []string {
	return append([]string{"upgrade-console"}, withoutFlag(withoutFlag(args, "--kubeconfig"), "--log-file")...)
}

// altScreen is the sequence by which Bubble Tea enters the alternate screen
// (DECSET 1049), written with the first frame.
const altScreen = "\x1b[?1049h"

// machinesResource is how the console's event log names Machines.
const machinesResource = "machines.cluster.x-k8s.io"

func sentAt(w write) (time.Time, bool) { return w.sent, true }

// stage is the distribution of to(w) − from(w) over the writes both know.
func stage(ws []write, from, to func(write) (time.Time, bool)) dist {
	var ds []time.Duration
	for _, w := range ws {
		a, ok1 := from(w)
		b, ok2 := to(w)
		if ok1 && ok2 {
			ds = append(ds, b.Sub(a))
		}
	}
	return distribution(ds)
}

// readEventLog reads the console's trace of applied watch events
// (watchers.Options.Trace) for one resource, in time order: the informers
// write concurrently, so lines of different kinds may interleave.
func readEventLog(path, resource string) ([]time.Time, []uint64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("the console's event log: %w", err)
	}
	type point struct {
		at time.Time
		rv uint64
	}
	var ps []point
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) != 3 || f[1] != resource {
			continue
		}
		ns, err1 := strconv.ParseInt(f[0], 10, 64)
		rv, err2 := strconv.ParseUint(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		ps = append(ps, point{time.Unix(0, ns), rv})
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].at.Before(ps[j].at) })
	ts, rvs := make([]time.Time, len(ps)), make([]uint64, len(ps))
	for i, p := range ps {
		ts[i], rvs[i] = p.at, p.rv
	}
	return ts, rvs, nil
}

// kubectlRun runs one `kubectl get --watch` per kind the world holds at
// fleet size (kubectl watches one kind at a time): together they list and
// follow the objects the console lists and follows. Their RSS and CPU are
// summed; they count as synced once each has printed every object.
func (b *bench) kubectlRun(ctx context.Context) (*Viewer, error) {
	o := b.o
	ns := b.w.sc.SystemNamespace
	kc := b.w.env.KubeconfigPath
	type kind struct {
		name string
		args []string
	}
	kinds := []kind{
		{"machines", []string{"get", "machines.cluster.x-k8s.io", "-n", ns, "--watch", "--kubeconfig", kc,
			"-o", "custom-columns=NAME:.metadata.name,PHASE:.status.phase,RV:.metadata.resourceVersion,UPDATED:.status.lastUpdated"}},
		{"nodes", []string{"get", "nodes", "--watch", "--kubeconfig", kc}},
	}
	if b.w.counts["nodeupgrades"] > 0 {
		kinds = append(kinds, kind{"nodeupgrades", []string{"get", "nodeupgrades.anywhere.eks.amazonaws.com", "-n", ns, "--watch", "--kubeconfig", kc}})
	}
	var procs []*termProc
	defer func() {
		for _, p := range procs {
			p.stop("")
		}
	}()
	v := &Viewer{}
	for _, k := range kinds {
		logf("kubectl: starting kubectl %s", strings.Join(k.args, " "))
		p, err := startTerm("kubectl "+k.name, o.cols, o.rows, true, nil, nil, []string{"TERM=xterm-256color"}, o.kubectl, k.args...)
		if err != nil {
			return nil, err
		}
		procs = append(procs, p)
		v.Command = append(v.Command, "kubectl "+strings.Join(withoutFlag(k.args, "--kubeconfig"), " "))
	}
	start := procs[0].start
	deadline := time.Now().Add(o.syncTimeout)
	var first, synced time.Time
	for i, p := range procs {
		want := b.w.counts[kinds[i].name] + 1 // the header
		for {
			ls := p.snapshotLines()
			if len(ls) > 0 && (first.IsZero() || ls[0].at.Before(first)) {
				first = ls[0].at
			}
			if len(ls) >= want {
				synced = maxTime(synced, ls[want-1].at)
				break
			}
			select {
			case <-p.done:
				return nil, fmt.Errorf("%s exited before it listed everything (%d of %d lines)", p.name, len(ls), want)
			default:
			}
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("%s: %d of %d lines after %s", p.name, len(ls), want, o.syncTimeout)
			}
			if err := sleep(ctx, 50*time.Millisecond); err != nil {
				return nil, err
			}
		}
	}
	v.FirstFrameMs, v.SyncedMs = ms(first.Sub(start)), ms(synced.Sub(start))
	logf("kubectl: first line %.0f ms, everything listed %.0f ms", v.FirstFrameMs, v.SyncedMs)
	pids := make([]int, len(procs))
	for i, p := range procs {
		pids[i] = p.pid()
	}
	ws, err := b.exercise(ctx, "kubectl", func() float64 {
		var sum int64
		for _, p := range procs {
			r, _ := p.peakRSS()
			sum += r
		}
		return float64(sum) / (1 << 20)
	}, pids...)
	if err != nil {
		return nil, err
	}
	for _, p := range procs {
		rss, alive := p.peakRSS()
		v.PeakRSSMiB += float64(rss) / (1 << 20)
		if !alive {
			_, tail := p.exited()
			logf("kubectl: %s ended during the run: %s", p.name, tail)
			v.Exited = append(v.Exited, p.name+": "+tail)
		}
	}
	// The machines watch prints one line per change with the Machine's
	// resourceVersion in the third column.
	var ts []time.Time
	var rvs []uint64
	for _, l := range procs[0].snapshotLines() {
		f := strings.Fields(l.text)
		if len(f) < 3 {
			continue
		}
		rv, err := strconv.ParseUint(f[2], 10, 64)
		if err != nil {
			continue
		}
		ts, rvs = append(ts, l.at), append(rvs, rv)
	}
	printed := shownBy(ts, rvs)
	ws.fill(b, v, func(w write) (time.Time, bool) { return printed(w.rv) })
	return v, nil
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// profileAPIServer writes a CPU profile of kube-apiserver over d to path
// (--apiserver-profile, --apiserver-rate-profile): where the API server's
// time goes under the load.
func (b *bench) profileAPIServer(ctx context.Context, d time.Duration, path, what string) {
	secs := max(int(d.Seconds())-1, 1)
	data, err := b.metrics.Get().AbsPath("/debug/pprof/profile").Param("seconds", strconv.Itoa(secs)).Timeout(d + time.Minute).DoRaw(ctx)
	if err == nil {
		err = os.WriteFile(path, data, 0o644)
	}
	if err != nil {
		logf("API server profile: %v", err)
		return
	}
	logf("API server CPU profile (%ds of %s) in %s", secs, what, path)
}

// heapAPIServer saves what kube-apiserver holds live (and has allocated
// since it started): the profile that says what its collector marks.
func (b *bench) heapAPIServer(ctx context.Context) {
	data, err := b.metrics.Get().AbsPath("/debug/pprof/heap").Param("gc", "1").Timeout(time.Minute).DoRaw(ctx)
	if err == nil {
		err = os.WriteFile(b.o.apiHeap, data, 0o644)
	}
	if err != nil {
		logf("API server heap profile: %v", err)
		return
	}
	logf("API server heap profile in %s", b.o.apiHeap)
}

// withoutFlag is args without flag and its value: the results name the
// command, not the run's temporary files (the kubeconfig's path).
func withoutFlag(args []string, flag string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		if args[i] == flag {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}
