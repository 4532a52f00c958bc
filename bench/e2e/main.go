// Command e2e is the end-to-end benchmark of issue 7: the demo world's large
// scenario on a real local kube-apiserver, the console running as a separate
// process in a pseudo-terminal, a load driver writing Machine status changes,
// and the same measurements for `kubectl get --watch` (the floor) on the same
// objects, so the results read as ratios. See bench/README.md.
//
//	go run ./bench/e2e --nodes 10000 --out bench/results.json
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/upgrade-console/upgrade-console/model"
)

type options struct {
	nodes           int
	assets          string
	console         string
	kubectl         string
	out             string
	goBench         string
	cols, rows      int
	rate            float64
	rateDur         time.Duration
	satDur          time.Duration
	satWorkers      int
	idle            time.Duration
	settle          time.Duration
	syncTimeout     time.Duration
	pool            int
	nodeUpgrades    bool
	skipKubectl     bool
	apiProfile      string
	apiRateProfile  string
	apiHeap         string
	consoleStderr   string
	controlPlaneLog string
	apiServerEnv    envList
	apiServerArgs   envList
	consoleEnv      envList
	apiServerGC     bool
	lowRate         float64
	lowRateDur      time.Duration
	noViewerDur     time.Duration
	waitSample      time.Duration
	restartAPI      bool
}

func main() {
	o := &options{}
	flag.IntVar(&o.nodes, "nodes", 10000, "worker nodes of the large scenario")
	flag.StringVar(&o.assets, "assets", "bin", "directory holding kube-apiserver and etcd")
	flag.StringVar(&o.console, "console", "bin/upgrade-console", "the console binary")
	flag.StringVar(&o.kubectl, "kubectl", "bin/kubectl", "the kubectl binary (make kubectl builds it)")
	flag.StringVar(&o.out, "out", "bench/results.json", "where to write the results as JSON (empty: nowhere)")
	flag.StringVar(&o.goBench, "go-bench", "", "output of the Go render benchmarks, to judge the View() target")
	flag.IntVar(&o.cols, "cols", 200, "terminal columns")
	flag.IntVar(&o.rows, "rows", 60, "terminal rows")
	flag.Float64Var(&o.rate, "rate", 100, "writes a second in the fixed-rate window")
	flag.DurationVar(&o.rateDur, "rate-duration", 60*time.Second, "length of the fixed-rate window")
	flag.Float64Var(&o.lowRate, "low-rate", 20, "writes a second of an extra window before the fixed rate, below the API server's capacity (0: none)")
	flag.DurationVar(&o.lowRateDur, "low-rate-duration", 30*time.Second, "length of the low-rate window")
	flag.DurationVar(&o.noViewerDur, "noviewer-rate-duration", 60*time.Second, "length of the fixed-rate window with no viewer, before any viewer starts, as long as the viewers' by default so their p99s compare (saturation with no viewer: at most as long; 0: neither)")
	flag.DurationVar(&o.satDur, "saturate-duration", 30*time.Second, "length of the saturation window")
	flag.IntVar(&o.satWorkers, "saturate-writers", 20, "concurrent writers in the saturation window")
	flag.DurationVar(&o.idle, "idle", 20*time.Second, "length of the idle windows (CPU with no writes)")
	// A console at rest reads the Cluster once when the completion rule
	// has held its time (the confirmation of "done"): an idle window that
	// began before it counted that one read as polling.
	flag.DurationVar(&o.settle, "settle", model.DefaultCompletionGate().Hold+5*time.Second, "pause after a viewer synced before its idle window (past the console's one confirmation read of a cluster at rest)")
	flag.DurationVar(&o.syncTimeout, "sync-timeout", 3*time.Minute, "how long a viewer may take to sync")
	flag.IntVar(&o.pool, "pool", 1000, "worker machines the driver writes to")
	flag.BoolVar(&o.nodeUpgrades, "node-upgrades", true, "give every worker a completed NodeUpgrade")
	flag.BoolVar(&o.skipKubectl, "skip-kubectl", false, "measure the console only")
	flag.StringVar(&o.apiProfile, "apiserver-profile", "", "write a CPU profile of kube-apiserver during the console's saturation window to this file")
	flag.StringVar(&o.apiRateProfile, "apiserver-rate-profile", "", "write a CPU profile of kube-apiserver during each viewer's fixed-rate window to this path plus .console or .kubectl")
	flag.StringVar(&o.apiHeap, "apiserver-heap", "", "write a heap profile of kube-apiserver, taken right after the no-viewer windows, to this file")
	flag.StringVar(&o.consoleStderr, "console-stderr", "", "write the console's standard error to this file instead of its terminal (for GODEBUG=gctrace=1, say)")
	flag.StringVar(&o.controlPlaneLog, "control-plane-log", "", "write the output of kube-apiserver and etcd to this file")
	flag.Var(&o.apiServerEnv, "apiserver-env", "NAME=value for kube-apiserver's environment alone, repeatable (GODEBUG=gctrace=1 with --control-plane-log, say)")
	flag.Var(&o.apiServerArgs, "apiserver-arg", "name=value, an extra kube-apiserver flag, repeatable (watch-cache-sizes=machines.cluster.x-k8s.io#0, say)")
	flag.Var(&o.consoleEnv, "console-env", "NAME=value for the console's environment alone, repeatable (GOMAXPROCS=1, or GODEBUG=gctrace=1 with --console-stderr, say)")
	flag.DurationVar(&o.waitSample, "wait-sample", 10*time.Millisecond, "how often to sample the console's threads for runnable waits, a thread ready to run that the kernel does not run (0: never)")
	flag.BoolVar(&o.restartAPI, "restart-apiserver", false, "restart kube-apiserver once the world is seeded, so its watch cache starts from the objects rather than holding the seeding's writes as history")
	flag.BoolVar(&o.apiServerGC, "apiserver-gctrace", false, "run kube-apiserver with GODEBUG=gctrace=1 and report its collector's share of each no-viewer window")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench/e2e:", err)
		os.Exit(1)
	}
}

// envList is a repeatable NAME=value flag.
type envList []string

func (l *envList) String() string { return strings.Join(*l, " ") }

func (l *envList) Set(v string) error {
	if name, _, ok := strings.Cut(v, "="); !ok || name == "" {
		return fmt.Errorf("%q: want NAME=value", v)
	}
	*l = append(*l, v)
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

func run(ctx context.Context, o *options) error {
	for _, p := range []*string{&o.assets, &o.console, &o.kubectl} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = abs
	}
	if _, err := os.Stat(o.console); err != nil {
		return fmt.Errorf("console binary: %w (make build)", err)
	}
	if !o.skipKubectl {
		if _, err := os.Stat(o.kubectl); err != nil {
			return fmt.Errorf("kubectl binary: %w (make kubectl, or --skip-kubectl)", err)
		}
	}
	res := &Results{Schema: 1, Date: time.Now().UTC().Truncate(time.Second), Machine: machineInfo()}
	res.Machine.LoadAvg["start"] = loadAvg()
	res.Machine.ReadAheadKB, _ = readAheadKB("/sys", o.console)
	if mb, err := loadedMB(o.console); err == nil {
		res.Machine.ConsoleLoadedMB = mb
	} else {
		logf("console binary: %v (console_loaded_mb left out)", err)
	}
	res.Load = Load{LowRate: o.lowRate, LowRateSeconds: o.lowRateDur.Seconds(), Rate: o.rate, RateSeconds: o.rateDur.Seconds(), SaturateWorkers: o.satWorkers, SaturateSeconds: o.satDur.Seconds(), IdleSeconds: o.idle.Seconds()}
	if o.goBench != "" {
		gb, err := readGoBench(o.goBench)
		if err != nil {
			return err
		}
		res.GoBench = gb
	}

	began := time.Now()
	w, err := startWorld(ctx, o, logf)
	if err != nil {
		return err
	}
	defer func() {
		if err := w.env.Stop(); err != nil {
			logf("stopping the control plane: %v", err)
		}
	}()
	res.World = World{Scenario: "large", Nodes: o.nodes, Objects: w.counts, SeedSeconds: time.Since(began).Seconds(), TerminalSize: fmt.Sprintf("%dx%d", o.cols, o.rows)}
	apiPid, err := descendant("kube-apiserver")
	if err != nil {
		return err
	}
	etcdPid, err := descendant("etcd")
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(fast(w.env.Config))
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(fast(w.env.Config))
	if err != nil {
		return err
	}
	pool := w.workers
	// Each saturating writer owns the machines i ≡ k (mod writers), so no
	// machine is ever written by two writers at once.
	if n := min(o.pool, len(pool)) / o.satWorkers * o.satWorkers; n > 0 {
		pool = pool[:n]
	} else {
		return fmt.Errorf("need at least %d worker machines for %d writers", o.satWorkers, o.satWorkers)
	}
	b := &bench{o: o, w: w, apiPid: apiPid, etcdPid: etcdPid, drv: newDriver(dyn, w.sc.SystemNamespace, pool), metrics: kube.Discovery().RESTClient()}

	// The API server alone, for reference: what it costs with no viewer.
	logf("API server with no viewer: measuring %s", o.idle)
	cpu := startCPU(apiPid)
	reqs, err := b.requestsOver(ctx, o.idle)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		res.Notes = append(res.Notes, fmt.Sprintf("API server with no viewer: %.2f %% of a core; its request count could not be read: %v", cpu.percent(), err))
	default:
		res.Notes = append(res.Notes, fmt.Sprintf("API server with no viewer: %.2f %% of a core, %d requests in %s that the idle target would count",
			cpu.percent(), reqs, o.idle))
	}
	// The same writes with no viewer: the API server's own write path, which
	// every viewer's write → screen latency includes.
	if o.noViewerDur > 0 {
		nv, err := b.noViewer(ctx)
		if err != nil {
			return fmt.Errorf("no viewer: %w", err)
		}
		res.NoViewer = nv
	}
	if o.apiHeap != "" {
		b.heapAPIServer(ctx)
	}

	tmp, err := os.MkdirTemp("", "upgrade-console-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	c, err := b.console(ctx, tmp)
	if err != nil {
		return fmt.Errorf("console: %w", err)
	}
	res.Console = *c
	res.Machine.LoadAvg["after_console"] = loadAvg()
	if !o.skipKubectl {
		k, err := b.kubectlRun(ctx)
		if err != nil {
			return fmt.Errorf("kubectl: %w", err)
		}
		res.Kubectl = k
	}
	res.Machine.LoadAvg["end"] = loadAvg()
	api, errA := peakRSS(apiPid)
	etcd, errE := peakRSS(etcdPid)
	if errA == nil && errE == nil {
		res.Notes = append(res.Notes, fmt.Sprintf("control plane peak RSS: kube-apiserver %d MiB, etcd %d MiB", api>>20, etcd>>20))
	}
	res.NoViewer.gcWindows(w.gc)
	res.judge()
	res.printTable(os.Stdout)
	if o.out != "" {
		data, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.out, append(data, '\n'), 0o644); err != nil {
			return err
		}
		logf("results written to %s", o.out)
	}
	return nil
}

// withoutProcs is a benchmark's name without the -N that go test appends
// when GOMAXPROCS is not 1. Only digits go: with GOMAXPROCS=1 there is no
// suffix, and cutting at the last '-' would make machines-changed and
// machines-same one benchmark.
func withoutProcs(name string) string {
	j := strings.LastIndexByte(name, '-')
	if j <= 0 || j == len(name)-1 {
		return name
	}
	for _, c := range name[j+1:] {
		if c < '0' || c > '9' {
			return name
		}
	}
	return name[:j]
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// readGoBench picks the ns/op of every benchmark at 10,000 nodes from `go
// test -bench` output.
func readGoBench(path string) (map[string]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 4 || !strings.HasPrefix(fs[0], "Benchmark") || !strings.Contains(fs[0], "nodes=10000") {
			continue
		}
		for i := 2; i+1 < len(fs); i++ {
			if fs[i+1] == "ns/op" {
				v, err := strconv.ParseFloat(fs[i], 64)
				if err == nil {
					out[withoutProcs(fs[0])] = v
				}
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New(path + ": no benchmark at nodes=10000")
	}
	return out, sc.Err()
}
