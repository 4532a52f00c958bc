package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/tui"
	"github.com/upgrade-console/upgrade-console/upgrade"
	"github.com/upgrade-console/upgrade-console/watchers"
)

// liveOptions are the flags of the commands that read a live cluster against
// a spec file (plan --cluster, apply).
type liveOptions struct {
	cluster     string
	file        string
	toBundles   string
	skips       []string
	nodeLabel   string
	syncTimeout time.Duration
	// forceConflicts is apply's --force-conflicts: the plan's spec-accepted
	// then says the fields another manager owns are taken over, where it
	// warns that the apply refuses them.
	forceConflicts bool
}

func (l *liveOptions) addFlags(f *pflag.FlagSet, withToBundles bool) {
	f.StringVar(&l.cluster, "cluster", "", "name of the EKS-A Cluster to upgrade (its namespace: -n, default from the kubeconfig context)")
	f.StringVarP(&l.file, "filename", "f", "", "the cluster spec to upgrade to: the EKS-A Cluster and its provider objects (multi-document YAML)")
	if withToBundles {
		f.StringVar(&l.toBundles, "to-bundles", "", "target Bundles manifest (default: the Bundles of the spec's eksaVersion, from its EKSARelease in the cluster)")
	}
	f.StringArrayVar(&l.skips, "skip", nil, "skip a skippable preflight check by name (repeatable; recorded in the audit log)")
	f.StringVar(&l.nodeLabel, "node-upgrade-label", model.LabelUpgradeInProgress, "node label that marks a node whose upgrade is in progress")
	f.DurationVar(&l.syncTimeout, "sync-timeout", 30*time.Second, "how long to wait for the cluster's objects to load")
}

// live is a connection to a cluster: the clients, a running watcher whose
// snapshots the checks and the tracker read, and the spec file.
type live struct {
	client    *upgrade.Client
	watcher   *watchers.Watcher
	pacer     *tui.Pacer
	stop      context.CancelFunc
	done      chan struct{}
	namespace string
	context   string
	spec      *upgrade.SpecFile
	planner   *upgrade.Planner
	holder    upgrade.Holder
	// conn are the connection flags the commands the console prints carry.
	conn model.ConnFlags
}

func (lv *live) auditTarget() auditTarget { return auditTarget{lv.context, lv.client.Kube} }

// clusterFlags name the cluster and the connection in a command the
// operator pastes.
func (lv *live) clusterFlags(cluster string) string {
	return model.ClusterArgs(cluster, lv.namespace, lv.conn)
}

// connect reads the spec, connects with the kubeconfig flags and waits for
// the first complete snapshot.
func connect(ctx context.Context, g *globalOptions, l *liveOptions) (*live, error) {
	if l.cluster == "" {
		return nil, usageError{errors.New("--cluster is required: the name of the EKS-A Cluster to upgrade")}
	}
	if err := checkClusterName(l.cluster); err != nil {
		return nil, err
	}
	if l.file == "" {
		return nil, usageError{errors.New("-f/--filename is required: the cluster spec to upgrade to")}
	}
	if err := checkLabelKey("--node-upgrade-label", l.nodeLabel); err != nil {
		return nil, err
	}
	// A wrong flag is said before the kubeconfig is looked for: it is
	// wrong whichever cluster the command would reach.
	if err := checkLiveFlags(l); err != nil {
		return nil, err
	}
	loader := g.kube.ToRawKubeConfigLoader()
	ns, _, err := loader.Namespace()
	if err != nil || ns == "" {
		ns = "default"
	}
	cfg, err := restConfig(g.kube)
	if err != nil {
		return nil, err
	}
	kubeContext := g.reach(loader)
	return connectConfig(ctx, cfg, kubeContext, g.conn, ns, l)
}

func checkLiveFlags(l *liveOptions) error {
	if err := upgrade.ValidateSkips(l.skips); err != nil {
		return err
	}
	if l.syncTimeout <= 0 {
		return badFlag("--sync-timeout", fmt.Errorf("must be positive, got %s", l.syncTimeout), "how long to wait for the cluster's objects to load, e.g. 30s")
	}
	return nil
}

// connectConfig is connect with the connection already resolved (the demo
// world hands over its own).
func connectConfig(ctx context.Context, cfg *rest.Config, kubeContext string, conn model.ConnFlags, ns string, l *liveOptions) (*live, error) {
	if err := checkLiveFlags(l); err != nil {
		return nil, err
	}
	client, err := upgrade.NewClient(cfg)
	if err != nil {
		return nil, err
	}
	// The spec is checked against the cluster's own CRDs where they can be
	// read (an EKS-A newer than the console has fields its copies lack);
	// an API server that does not answer leaves the copies, and is said
	// by the read of the Cluster below.
	// The CRDs are read as the spec's kinds are checked: the context lasts
	// through the read of the file.
	// --sync-timeout bounds both reads together: the Cluster's read had the
	// whole of it after the CRDs' 5 s, and a silent API server took 5 s
	// longer than the flag said.
	deadline := time.Now().Add(l.syncTimeout)
	sctx, scancel := context.WithDeadline(ctx, time.Now().Add(min(l.syncTimeout, 5*time.Second)))
	schemas, err := upgrade.ClusterSchemas(sctx, client)
	if err != nil {
		scancel()
		return nil, err
	}
	spec, err := upgrade.ReadSpecFileWith(l.file, ns, schemas.WithConn(conn))
	scancel()
	if err != nil {
		return nil, err
	}
	if err := spec.For(l.cluster, ns); err != nil {
		return nil, err
	}
	// One read first: an API server that cannot be reached, or a Cluster
	// that is not there, is said at once, not after --sync-timeout.
	rctx, rcancel := context.WithDeadline(ctx, deadline)
	_, err = (&upgrade.Resolver{Client: client, Conn: conn}).Cluster(rctx, ns, l.cluster)
	expired := errors.Is(rctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	rcancel()
	if err != nil && expired {
		// client-go's own words ("client rate limiter Wait returned an
		// error: context deadline exceeded") named neither the flag nor
		// what to do.
		return nil, badFlag("--sync-timeout", fmt.Errorf("%s passed before the API server answered the read of Cluster %s/%s", l.syncTimeout, ns, l.cluster),
			"check that the API server answers (--kubeconfig, --context), or give it longer, e.g. --sync-timeout 1m")
	}
	if err != nil {
		return nil, err
	}
	// Paced for the plan screen's dashboard; until a terminal is written
	// (headless commands) the pacer leaves every snapshot at its time.
	pacer := tui.NewPacer()
	w, err := watchers.New(watchers.Options{
		Config: cfg, ClusterName: l.cluster, ClusterNamespace: ns,
		Context: kubeContext, Conn: conn, NodeUpgradeLabel: l.nodeLabel, Pace: pacer.Next,
	})
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	lv := &live{client: client, watcher: w, pacer: pacer, stop: cancel, done: make(chan struct{}), namespace: ns,
		context: kubeContext, spec: spec, holder: upgrade.LocalHolder(), conn: conn}
	go func() {
		defer close(lv.done)
		_ = w.Run(wctx)
	}()
	if _, err := upgrade.WaitSynced(ctx, w, 50*time.Millisecond, l.syncTimeout); err != nil {
		lv.close()
		var slow *upgrade.SyncTimeoutError
		if errors.As(err, &slow) {
			// The bound that passed is --sync-timeout: naming
			// --request-timeout sent the operator to a flag that
			// changes nothing here.
			return nil, badFlag("--sync-timeout", err, "check that the API server answers (--kubeconfig, --context), or give it longer, e.g. --sync-timeout 1m")
		}
		return nil, err
	}
	lv.planner = &upgrade.Planner{Client: client, State: w, Self: lv.holder, NodeLabel: l.nodeLabel, Conn: conn}
	return lv, nil
}

func (lv *live) close() {
	lv.stop()
	awaitStop(lv.done, stopWithin)
}

// stopWithin bounds how long a command waits for its watch to stop once it
// is ending. Against an API server that is gone, client-go's reflectors sleep
// out their retry backoff (up to a minute, jittered) without heeding the
// cancel (Reflector.watchList in client-go v0.36): waited for, they held a
// `watch --timeout 60s` 30s past its outcome line and an `apply --wait` 50s
// past its deadline, in silence. The process is ending: the watch writes
// nothing and holds nothing the cluster needs, so what is left of it ends
// with the process. A watch on a live API server stops in milliseconds,
// well within.
const stopWithin = 3 * time.Second

// awaitStop waits until done delivers or closes, at most within, and
// reports whether it did.
func awaitStop[T any](done <-chan T, within time.Duration) bool {
	t := time.NewTimer(within)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		klog.InfoS("the watch did not stop in time; ending without waiting for it", "within", within)
		return false
	}
}

func (lv *live) plan(ctx context.Context, l *liveOptions) (*upgrade.Plan, error) {
	return lv.planner.Plan(ctx, upgrade.PlanRequest{
		Cluster: l.cluster, Namespace: lv.namespace, Spec: lv.spec, ToBundles: l.toBundles, Skips: l.skips,
		ForceConflicts: l.forceConflicts,
	})
}

// writeLivePlan prints the versions header, then the same table as the
// offline plan.
func writeLivePlan(out io.Writer, p *upgrade.Plan, all bool) {
	v := p.Versions
	writeSpecNote(out, p)
	// The left side is the Cluster's spec; where the cluster has not
	// reached it, each line says so, for a reader who skips the note.
	notReached := ""
	if p.CurrentSpec.NotReached() {
		notReached = "   (left: the Cluster's spec, not reached)"
	}
	fmt.Fprintf(out, "cluster %s/%s\n", p.Namespace, p.Cluster)
	fmt.Fprintf(out, "  EKS-A       %s → %s%s\n", dash(v.CurrentEKSA), dash(v.TargetEKSA), notReached)
	fmt.Fprintf(out, "  Kubernetes  %s → %s%s\n", dash(v.CurrentKubernetes), dash(v.TargetKubernetes), notReached)
	if v.Management != "" && v.Management != v.CurrentEKSA {
		fmt.Fprintf(out, "  management components at %s\n", v.Management)
	}
	fmt.Fprintf(out, "  bundles     %s → %s\n\n", v.CurrentBundles, v.TargetBundles)
	writePlanTableFor(out, &model.Plan{Components: p.Components, Preflight: p.Preflight}, all, p.CurrentSpec)
}

// writeDryRun prints what the apply changes and who else owns fields it sets.
func writeDryRun(out io.Writer, r *upgrade.DryRunResult) {
	fmt.Fprintln(out, "\nserver-side dry-run (field manager "+upgrade.ManagerName+"):")
	for _, o := range r.Objects {
		switch {
		case o.Error != "":
			fmt.Fprintf(out, "  ✗ %s: refused: %s\n", o.Object, o.Error)
		case o.Create:
			fmt.Fprintf(out, "  + %s: created\n", o.Object)
		case len(o.Fields) == 0:
			fmt.Fprintf(out, "  = %s: unchanged\n", o.Object)
		default:
			fmt.Fprintf(out, "  ~ %s: %d field(s)\n", o.Object, len(o.Fields))
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			for _, f := range o.Fields {
				switch f.Op {
				case "add":
					fmt.Fprintf(tw, "      %s\t+ %s\n", f.Path, f.New)
				case "remove":
					fmt.Fprintf(tw, "      %s\t- %s\n", f.Path, f.Old)
				default:
					fmt.Fprintf(tw, "      %s\t%s → %s\n", f.Path, f.Old, f.New)
				}
			}
			_ = tw.Flush()
		}
	}
	if len(r.Conflicts) > 0 {
		fmt.Fprintf(out, "\n  %d field conflict(s): another manager owns fields this apply changes:\n", len(r.Conflicts))
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		for _, c := range r.Conflicts {
			fmt.Fprintf(tw, "    %s\t%s\towned by %s\n", c.Object, c.Field, c.Manager)
		}
		_ = tw.Flush()
	}
}

func skippedNote(skips []string) string {
	if len(skips) == 0 {
		return ""
	}
	return " (skipped: " + strings.Join(skips, ", ") + ")"
}

// runLivePlan is `plan --cluster`: the plan of the running cluster against a
// spec file, with the live preflight checks.
func runLivePlan(ctx context.Context, out io.Writer, g *globalOptions, o *planOptions) error {
	if err := checkOutput(o.output, "table"); err != nil {
		return err
	}
	if o.fromBundles != "" || o.kubeVersion != "" || o.targetKubeVersion != "" {
		return usageError{errors.New("--cluster reads the current release and versions from the cluster: drop --from-bundles, --kubernetes-version and --target-kubernetes-version")}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	o.live.toBundles = o.toBundles
	lv, err := connect(ctx, g, &o.live)
	if err != nil {
		return err
	}
	defer lv.close()
	p, err := lv.plan(ctx, &o.live)
	if err != nil {
		return err
	}
	if err := writePlan(out, o.output, liveDoc(p), func() { writeLivePlan(out, p, o.all) }); err != nil {
		return err
	}
	if p.Blocked() {
		return blockedExit(p)
	}
	return nil
}
