package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/upgrade-console/upgrade-console/demo"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
)

type demoOptions struct {
	scenario  string
	speed     float64
	nodes     int
	assets    string
	serve     bool
	autoStart bool
	dir       string
	// display holds the dashboard's flags (--plain, --theme, --stall-after).
	display watchOptions
}

func newDemoCmd() *cobra.Command {
	o := &demoOptions{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a simulated EKS Anywhere management cluster to upgrade",
		Long: `demo starts a local Kubernetes control plane (kube-apiserver and etcd), seeds it with an
EKS Anywhere management cluster (external etcd, 3 control-plane nodes, two worker groups) and
runs simulated EKS-A, Cluster API and etcdadm controllers that upgrade it when its spec changes.

With --serve it runs without the UI until interrupted and prints, once ready:
  KUBECONFIG=<path>  CLUSTER=<name>  CURRENT_SPEC=<path>  TARGET_SPEC=<path>
so kubectl or the console can be pointed at it. Without --serve it opens the plan screen on
the world's upgrade (apply --tui's): enter applies it, then the dashboard follows it (with
--plain, or when stdout is not a terminal, the world is watched as watch --plain does, one
line per change).

Scenarios: ` + strings.Join(scenario.Names(), ", "),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDemo(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.scenario, "scenario", string(scenario.Rolling), "world to run: "+strings.Join(scenario.Names(), ", "))
	f.Float64Var(&o.speed, "speed", 1, "time scale of the simulation (10 = ten times faster)")
	f.IntVar(&o.nodes, "nodes", scenario.DefaultNodes, "worker nodes of the large scenario")
	f.StringVar(&o.assets, "assets", "", "directory holding kube-apiserver and etcd (default: $KUBEBUILDER_ASSETS, ./bin, next to the executable, the user cache)")
	f.BoolVar(&o.serve, "serve", false, "run the world without UI until interrupted and print how to reach it")
	f.BoolVar(&o.autoStart, "auto-start", false, "apply the target spec a few seconds after start, as a scripted operator")
	o.display.addDisplayFlags(cmd)
	// The defaults shown are a real cluster's; the demo scales them to its
	// clock unless given (scaleForDemo), and the help said 10m and 15m.
	for _, name := range []string{"stall-after", "etcd-rollback-threshold"} {
		if fl := f.Lookup(name); fl != nil {
			fl.Usage += fmt.Sprintf("; unless given, the demo divides the default by %d×--speed (at least %s)", demoTimeScale, demoMinThreshold)
		}
	}
	f.StringVar(&o.dir, "dir", "", "directory for the kubeconfig and the cluster spec files (default: a temporary directory)")
	return cmd
}

func runDemo(cmd *cobra.Command, o *demoOptions) error {
	if o.speed <= 0 {
		return badFlag("--speed", fmt.Errorf("must be positive, got %g", o.speed), "1 is the demo's own pace (about 30 times a real upgrade's), 10 ten times faster than that")
	}
	if o.nodes <= 0 {
		return badFlag("--nodes", fmt.Errorf("must be positive, got %d", o.nodes), "the number of worker nodes of the large scenario, e.g. 10000")
	}
	if cmd.Flags().Changed("nodes") && o.scenario != string(scenario.Large) {
		// The other worlds have their own size: the flag was ignored.
		return usageError{fmt.Errorf("--nodes sets the size of the large scenario only, not of %q: add --scenario large, or leave --nodes out", o.scenario)}
	}
	if _, err := scenario.For(scenario.Name(o.scenario), scenario.Options{}); err != nil {
		return badFlag("--scenario", err, "see `upgrade-console demo --help` for the scenarios")
	}
	if err := checkDemoDir(o.dir); err != nil {
		return err
	}
	theme, err := parseTheme(o.display.theme)
	if err != nil {
		return err
	}
	if err := o.display.check(); err != nil {
		return err
	}
	o.display.scaleForDemo(o.speed, cmd.Flags().Changed)
	// Once the dashboard owns the terminal, progress lines go to the log.
	var uiRunning atomic.Bool
	ctx, stop := interruptible(cmd.Context())
	defer stop()
	// Its output piped to a reader that left (`| head`, `| less` quit):
	// the write's SIGPIPE killed the process with its control plane's
	// directory, keys and all, left behind. Ignored, the write fails
	// instead, and the failure stops the demo as an interrupt does, the
	// world taken down. (Caught with signal.Notify, any socket's broken
	// pipe would have stopped it too.)
	survivesClosedOutput()
	ctx, readerLeft := context.WithCancel(ctx)
	defer readerLeft()
	out := cmd.OutOrStdout()
	if !isTerminal(out) {
		out = stopOnClosedOutput{out, readerLeft}
	}
	errOut := io.Writer(stopOnClosedOutput{cmd.ErrOrStderr(), readerLeft})

	cfg := demo.Config{
		Scenario:  scenario.Name(o.scenario),
		Nodes:     o.nodes,
		Speed:     o.speed,
		AssetsDir: o.assets,
		Dir:       o.dir,
		AutoStart: o.autoStart,
		Logf: func(format string, args ...any) {
			if uiRunning.Load() {
				log.Printf("demo: "+format, args...)
				return
			}
			fmt.Fprintf(errOut, "%s demo: %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
		},
	}
	w, err := demo.Run(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		if err := w.Stop(); err != nil {
			fmt.Fprintf(errOut, "demo: stopping: %v\n", err)
		}
	}()
	// On a terminal the demo opens on the plan screen: the operator
	// starts the upgrade from the console (enter), and scripted runs
	// (--auto-start, --plain, no terminal) follow the dashboard or plain
	// lines. The plan screen gets neither the kubectl hint nor the paths,
	// unless --dir keeps them: its directory goes with it, and both were
	// left on the terminal, contradicted by the farewell below them.
	planScreen := !o.serve && !o.autoStart && !o.display.plain && isTerminal(out)
	if !planScreen || o.dir != "" {
		fmt.Fprintf(out, "KUBECONFIG=%s\nCLUSTER=%s\nCURRENT_SPEC=%s\nTARGET_SPEC=%s\n", w.KubeconfigPath, w.ClusterName, w.CurrentSpecPath, w.TargetSpecPath)
	}
	if planScreen {
		uiRunning.Store(true)
		defer uiRunning.Store(false)
		return planDemo(ctx, out, w, &o.display, theme)
	}
	if !o.serve && o.autoStart {
		fmt.Fprintf(errOut, "demo: --auto-start applies %s in a few seconds; Ctrl-C stops\n", w.TargetSpecPath)
	} else if !o.serve {
		fmt.Fprintf(errOut, "demo: apply %s to start the upgrade, e.g. kubectl --kubeconfig %s apply --server-side --force-conflicts -f %s (the fields belong to eks-a-cli, as on a real cluster); Ctrl-C stops\n",
			w.TargetSpecPath, w.KubeconfigPath, w.TargetSpecPath)
	}
	if !o.serve {
		uiRunning.Store(true)
		defer uiRunning.Store(false)
		return followDemo(ctx, out, w, &o.display, theme)
	}
	select {
	case <-ctx.Done():
	case <-w.Done():
	}
	return nil
}

// demoTimeScale is how much faster than real controllers the simulated
// ones run at --speed 1: a VM provisions in 5 s, not minutes, and the rolling
// upgrade takes two minutes, not an hour.
const demoTimeScale = 30

// demoMinThreshold keeps a scaled threshold above the simulation's own
// jitter on busy cores.
const demoMinThreshold = 5 * time.Second

// scaleForDemo scales the thresholds meant for real clusters (a stall after
// 10 minutes, the etcd rollback offered after 15) to the demo's clock,
// unless given on the command line: at --speed 10 the rollback was offered
// after 15 real minutes, longer than the whole demo, and R did nothing
// meanwhile.
func (o *watchOptions) scaleForDemo(speed float64, given func(flag string) bool) {
	scale := func(flag string, d *time.Duration) {
		if !given(flag) {
			*d = max(time.Duration(float64(*d)/(demoTimeScale*speed)), demoMinThreshold)
		}
	}
	scale("stall-after", &o.stallAfter)
	scale("etcd-rollback-threshold", &o.rollbackThreshold)
}

// demoConn are the connection flags of the demo's commands: the console
// reaches the demo through its own kubeconfig file, which the operator's
// shell does not name, so a pasted command names it (absolute: --dir may
// be relative to a directory the shell has left).
func demoConn(w *demo.World) model.ConnFlags {
	path := w.KubeconfigPath
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return model.ConnFlags{{Name: "kubeconfig", Value: path}}
}

// stopOnClosedOutput is an output whose reader leaving (a write failing
// with EPIPE) calls stop.
type stopOnClosedOutput struct {
	w    io.Writer
	stop func()
}

func (o stopOnClosedOutput) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		o.stop()
	}
	return n, err
}

// checkDemoDir makes --dir, as the demo would once its control plane is
// found, and says what to give where it cannot: "mkdir …: not a
// directory" of a file given as --dir named no fix.
func checkDemoDir(dir string) error {
	if dir == "" {
		return nil
	}
	err := os.MkdirAll(dir, 0o700)
	if err == nil {
		return nil
	}
	fix := "give a directory this user may write (made if missing), or leave --dir out for a temporary one"
	if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, fs.ErrExist) {
		fix = "it, or a directory above it, is a file: give a directory (made if missing), or leave --dir out for a temporary one"
	}
	return badFlag("--dir", fmt.Errorf("%s: %s", dir, pathErr(err)), fix)
}
