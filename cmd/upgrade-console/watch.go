package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/upgrade-console/upgrade-console/demo"
	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/report"
	"github.com/upgrade-console/upgrade-console/themes"
	"github.com/upgrade-console/upgrade-console/tui"
	"github.com/upgrade-console/upgrade-console/upgrade"
	"github.com/upgrade-console/upgrade-console/upgrade/recovery"
	"github.com/upgrade-console/upgrade-console/watchers"
)

type watchOptions struct {
	plain      bool
	cluster    string
	exitOnDone bool
	timeout    time.Duration
	theme      string
	stallAfter time.Duration
	nodeLabel  string
	readOnly   bool
	// rollbackThreshold is when the recovery menu offers the etcd rollback.
	rollbackThreshold time.Duration
	// forceConflicts is apply's --force-conflicts, for apply --tui's
	// confirmation (tui.Options.ForceConflicts).
	forceConflicts bool
}

func (o *watchOptions) addDisplayFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&o.plain, "plain", false, "print one timestamped line per change instead of the dashboard (the default when stdout is not a terminal)")
	f.StringVar(&o.theme, "theme", string(themes.Auto), "colours: "+themeNames()+" (auto follows the terminal background; NO_COLOR means mono)")
	f.DurationVar(&o.stallAfter, "stall-after", model.DefaultStallAfter, "how long a machine or step may make no progress before it is reported as stalled")
	f.DurationVar(&o.rollbackThreshold, "etcd-rollback-threshold", recovery.DefaultEtcdRollbackThreshold, "how long a new etcd member may stay not ready before the recovery menu (R) offers the etcd rollback")
}

// check refuses display flag values that would make the screen lie: a stall
// reported at once, or a rollback offered at once.
func (o *watchOptions) check() error {
	if err := checkLabelKey("--node-upgrade-label", o.nodeLabel); err != nil {
		return err
	}
	switch {
	case o.stallAfter <= 0:
		return badFlag("--stall-after", fmt.Errorf("must be positive, got %s", o.stallAfter), "give how long a machine may make no progress, e.g. 10m")
	case o.rollbackThreshold <= 0:
		return badFlag("--etcd-rollback-threshold", fmt.Errorf("must be positive, got %s", o.rollbackThreshold), "e.g. 15m")
	}
	return nil
}

func themeNames() string {
	ns := make([]string, len(themes.Names))
	for i, n := range themes.Names {
		ns[i] = string(n)
	}
	return strings.Join(ns, ", ")
}

// parseTheme reads --theme; a name it does not know is bad input that lists
// the themes once, in the fix.
func parseTheme(name string) (themes.Name, error) {
	theme, err := themes.ParseName(name)
	if err != nil {
		return "", badFlag("--theme", fmt.Errorf("unknown theme %q", name), "use one of "+themeNames())
	}
	return theme, nil
}

func newWatchCmd(g *globalOptions) *cobra.Command {
	o := &watchOptions{}
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Follow an upgrade live: the dashboard, or plain lines for CI",
		Long: `watch follows an EKS Anywhere management cluster upgrade as the controllers carry it out.

On a terminal it shows the dashboard: the phase timeline, the EKS-A Cluster's conditions, etcd,
the control plane, every node with its in-place upgrade steps, events, and a line naming what is
stalled and since when. With --plain, or when stdout is not a terminal, it prints one timestamped
line per meaningful change instead. A --cluster (or -n) that names no EKS-A Cluster ends
either with 1, saying so: the dashboard once its watch of the Cluster has listed. So do
credentials the API server refuses (401) from the start: the dashboard once quit.

With --exit-on-done it exits 0 once EKS-A's completion rule holds, 4 when the upgrade fails and
5 when it stops before that: --timeout passes first, or it is interrupted (the upgrade may
still be running). Without --exit-on-done, --timeout gives up with 5 all the same, and a
stop (q, a signal) exits 0, but both exit 4 once the watch called the upgrade failed (the
plain watch's "outcome: failed" line: a failure that stayed 10 minutes, or an etcd
rollback; a "failed:" line before it is not yet that verdict), and the timeout exits 0
after an upgrade the plain watch saw complete. A cluster at
rest meets the rule once it has held for 5 s and the API server has confirmed it (so a
--timeout under that ends with 5): the plain outcome line then says that no upgrade was
under way. When the audit log (a full disk) did not take all of the record of a recovery
action run from R, it exits 74 where it would exit 0, and prints the entries to append to it.`,
		Example: `  upgrade-console watch --cluster mgmt
  upgrade-console watch --cluster mgmt --plain --exit-on-done --timeout 2h`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error { return runWatch(cmd, g, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.cluster, "cluster", "", "name of the EKS-A Cluster to follow (its namespace: -n, default from the kubeconfig context)")
	f.BoolVar(&o.exitOnDone, "exit-on-done", false, "exit when the upgrade is done (0) or has failed (4)")
	f.DurationVar(&o.timeout, "timeout", 0, "give up after this long (exit 5); 0 waits for ever")
	f.StringVar(&o.nodeLabel, "node-upgrade-label", model.LabelUpgradeInProgress, "node label that marks a node whose upgrade is in progress")
	f.BoolVar(&o.readOnly, "read-only", false, "bind no key that changes the cluster")
	o.addDisplayFlags(cmd)
	return cmd
}

func runWatch(cmd *cobra.Command, g *globalOptions, o *watchOptions) error {
	if o.cluster == "" {
		return usageError{errors.New("--cluster is required: the name of the EKS-A Cluster to follow")}
	}
	if err := checkClusterName(o.cluster); err != nil {
		return err
	}
	if err := o.check(); err != nil {
		return err
	}
	if o.timeout < 0 {
		return badFlag("--timeout", fmt.Errorf("must not be negative, got %s", o.timeout), "give a duration such as 2h; 0 waits for ever")
	}
	theme, err := parseTheme(o.theme)
	if err != nil {
		return err
	}
	loader := g.kube.ToRawKubeConfigLoader()
	ns, _, err := loader.Namespace()
	if err != nil || ns == "" {
		ns = "default"
	}
	cfg, err := restConfig(g.kube)
	if err != nil {
		return err
	}
	kubeContext := g.reach(loader)
	// As the other commands: SIGHUP too (the dashboard's recovery actions
	// write to the cluster), and a SIGINT the console was started ignoring
	// (a script's background `watch --plain`) stays ignored.
	ctx, stop := interruptible(cmd.Context())
	defer stop()
	// --timeout bounds the whole watch, the first read of the Cluster
	// included: an API server that does not answer must not hold a script
	// past it.
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	var confirm func(context.Context, *model.ClusterState) error
	if o.plain || !isTerminal(cmd.OutOrStdout()) {
		// A script must not follow a cluster that is not there (a typo in
		// --cluster or -n) until its timeout, or for ever without one. The
		// dashboard does not wait for this read: its first frame comes
		// before any request, and it ends with the same error once its
		// watch of the Cluster has listed none (tui.App.judgeCluster).
		client, err := upgrade.NewClient(cfg)
		if err != nil {
			return err
		}
		if err := firstRead(ctx, cmd.OutOrStdout(), &upgrade.Resolver{Client: client, Conn: g.conn}, ns, o.cluster); err != nil {
			if upgrade.DeadlineCut(ctx, err) {
				return withCode(ExitTimeout, fmt.Errorf("--timeout %s passed before the API server answered the read of Cluster %s/%s: %w", o.timeout, ns, o.cluster, err))
			}
			if ctx.Err() != nil {
				// SIGINT/SIGTERM while the API server had not answered:
				// a stop, as q is (0; 5 with --exit-on-done), not bad
				// input with client-go's words.
				// An outcome line as every other end of a plain watch
				// has: a script reads the last one.
				fmt.Fprintln(cmd.OutOrStdout(), report.Line{At: time.Now(), Subject: "outcome",
					Text: fmt.Sprintf("stopped (interrupted) before the API server answered the read of Cluster %s/%s", ns, o.cluster)})
				if o.exitOnDone {
					return withCode(ExitTimeout, errors.New("stopped before the upgrade was seen to end"))
				}
				return nil
			}
			return err
		}
		confirm = upgrade.ConfirmCluster(client, ns, o.cluster)
	}
	res, err := follow(ctx, cmd.OutOrStdout(), followTarget{
		config: cfg, cluster: o.cluster, namespace: ns, context: kubeContext, conn: g.conn, confirm: confirm,
	}, o, theme)
	return outcomeError(res, err, o)
}

// firstRead reads the Cluster once before the plain watch follows it. An
// API server that takes the connection and does not answer in time (a TLS
// handshake or a reply that times out: a frozen process, a control-plane
// endpoint moving mid-rollout) is waited for, with one line saying so, until
// it answers or ctx ends (--timeout: exit 5); it ended the watch with exit 1
// after client-go's 10 s, as bad input. One that refuses the connection, or
// a name that does not resolve, is a wrong --kubeconfig or --context, said
// at once.
func firstRead(ctx context.Context, out io.Writer, r *upgrade.Resolver, ns, cluster string) error {
	said := false
	for {
		_, err := r.Cluster(ctx, ns, cluster)
		var ue *url.Error
		if err == nil || ctx.Err() != nil || !errors.As(err, &ue) || !ue.Timeout() {
			return err
		}
		if !said {
			fmt.Fprintln(out, report.Line{At: time.Now(), Subject: "connection",
				Text: fmt.Sprintf("the API server does not answer (%s); waiting for it (--timeout bounds the wait)", ue.Err)})
			said = true
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(2 * time.Second):
		}
	}
}

// followTarget is the cluster to follow.
type followTarget struct {
	config    *rest.Config
	cluster   string
	namespace string
	context   string
	// conn are the connection flags the commands the console prints carry.
	conn model.ConnFlags
	// confirm, when set, confirms with the API server that the upgrade is
	// done before the plain watch says so (report.WatchOptions.Confirm).
	confirm func(context.Context, *model.ClusterState) error
	// demo: the cluster is the demo's, which stops with the console.
	demo bool
}

// follow runs a watcher on the cluster and shows its snapshots, in the
// dashboard or as plain lines, until ctx ends, the operator quits or (with
// exitOnDone) the upgrade ends. The watcher's goroutine lives here, in the
// command, never inside the UI's models.
func follow(ctx context.Context, out io.Writer, t followTarget, o *watchOptions, theme themes.Name) (report.Result, error) {
	wo := watchers.Options{
		Config: t.config, ClusterName: t.cluster, ClusterNamespace: t.namespace,
		Context: t.context, Conn: t.conn, NodeUpgradeLabel: o.nodeLabel,
	}
	if f := openEventLog(); f != nil {
		defer f.Close()
		wo.Trace = f
	}
	tty := isTerminal(out)
	dashboard := tty && !o.plain
	var pacer *tui.Pacer
	if dashboard {
		pacer = tui.NewPacer()
		wo.Pace = pacer.Next
		// The dashboard's first frame goes out before the initial lists
		// (see watchers.Options.Begin).
		wo.Begin = pacer.FirstFrame()
	}
	w, err := watchers.New(wo)
	if err != nil {
		return report.Result{}, err
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	defer func() {
		cancel()
		awaitStop(done, stopWithin)
	}()

	if !dashboard {
		res, err := report.WatchResult(ctx, w.Updates(), report.WatchOptions{Out: out, StallAfter: o.stallAfter, ExitOnDone: o.exitOnDone, Confirm: t.confirm})
		if werr := w.Err(); werr != nil {
			// The watch ended on a bug of its own: that, not the outcome.
			return res, werr
		}
		return res, err
	}
	self := upgrade.LocalHolder()
	actions, authenticate, noRecovery := recoveryActions(t, self, o.readOnly, o.nodeLabel, o.rollbackThreshold)
	topts := tui.Options{
		SelfHolder:        self.String(),
		ClusterName:       t.cluster,
		Context:           t.context,
		Source:            w,
		Pacer:             pacer,
		Theme:             theme,
		ColorOff:          themes.ColorOff(os.Getenv, tty),
		ReadOnly:          o.readOnly,
		NoRecovery:        noRecovery,
		StallAfter:        o.stallAfter,
		EtcdRollbackAfter: o.rollbackThreshold,
		QuitOnDone:        o.exitOnDone,
		Actions:           actions,
		Background:        authenticate,
		Confirm:           lazyConfirm(t),
		EventHistory:      w.EventHistory,
		NoSuspend:         suspendUnavailable(),
		Demo:              t.demo,
		AuditHeld:         opened.held,
	}
	// The App is kept: RunApp returns no outcome with the deadline's
	// error, and a timeout must not hide a failure the dashboard showed.
	app := tui.NewApp(topts, tui.NewDashboard(topts))
	_, err = tui.RunApp(ctx, app)
	if res, line, ok := dashboardGone(app.Outcome(), w.Latest()); ok && !t.demo && err == nil {
		fmt.Fprintln(out, line)
		return res, nil
	}
	if !t.demo && app.Outcome() == report.Done && err == nil {
		// The dashboard closed on the outcome (--exit-on-done), or was
		// quit after it: the alternate screen took the outcome with it,
		// and the terminal showed nothing of it.
		fmt.Fprintln(out, dashboardDoneLine(t, app.OutcomeAtRest()))
	}
	if !t.demo && app.Outcome() == report.Failed {
		// The alternate screen took the failure with it: "see the
		// failure above" pointed at nothing, and after a recovery from
		// the R menu let the upgrade complete, the dashboard's last
		// word had been "upgrade complete".
		fmt.Fprintln(out, dashboardFailedLine(t, w.Latest(), app.OutcomeReason(), time.Now()))
	}
	if t.demo {
		// --auto-start's world stopped with a single q and without a
		// word, in the middle of the upgrade.
		sayDemoEnd(out, demoEndOf(app.Outcome(), w.Latest()))
	}
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		if rerr := refusedFromStart(t, w.Latest()); rerr != nil {
			// The plain watch's first read ends on this at once (exit 1,
			// the 401 and its fix): the dashboard, quit or timed out
			// while it said so, exited 0 and printed nothing.
			return report.Result{Outcome: app.Outcome()}, rerr
		}
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		return report.Result{Outcome: app.Outcome()}, err
	}
	return dashboardDeadline(app.Outcome(), w.Latest(), time.Now()), nil
}

// dashboardDoneLine is the outcome line of a dashboard that called the
// upgrade done. For a cluster at rest it is the plain watch's: "every
// completion milestone … met" read as an upgrade seen through.
func dashboardDoneLine(t followTarget, atRest bool) string {
	if atRest {
		return "outcome: " + report.Done.String() + report.AtRestDone
	}
	return fmt.Sprintf("outcome: done: every completion milestone of Cluster %s/%s met and confirmed by the API server", t.namespace, t.cluster)
}

// dashboardGone is how a dashboard quit after the EKS-A Cluster it watched
// was deleted ends (ok), as the plain watch stopped then ends: its line and
// its result (the exit code's). It printed the verdict it had before,
// "outcome: done: every completion milestone … met and confirmed by the
// API server", of a Cluster no longer there. A failure it saw stands.
func dashboardGone(recorded report.Outcome, latest *model.ClusterState) (res report.Result, line string, ok bool) {
	if recorded == report.Failed || !report.ClusterGone(latest) {
		return report.Result{}, "", false
	}
	res = report.Result{Outcome: recorded, Words: report.GoneWords(latest)}
	return res, "outcome: " + res.Cut("stopped"), true
}

// refusedFromStart is the plain watch's error for credentials the API
// server refused (firstRead) when the dashboard's watch was refused them
// and never live: the same words, from main's explain, and exit 1. Refused
// only after it was live (a token revoked mid-watch), the plain watch
// carries on too, and a stop is not this error. nil for the demo, whose
// credentials are its own.
func refusedFromStart(t followTarget, latest *model.ClusterState) error {
	if t.demo || latest == nil || latest.Connection != model.Connecting ||
		!strings.HasPrefix(latest.ConnectionErr, model.CredentialsRefused) {
		return nil
	}
	// The server's word, as the plain watch's read has it: a watch's list
	// reads client-go's "the server has asked for the client to provide
	// credentials" for the same 401, which the cause says better.
	return fmt.Errorf("read Cluster %s/%s: %w", t.namespace, t.cluster, apierrors.NewUnauthorized("Unauthorized"))
}

// dashboardFailedLine is the outcome line a dashboard that called the
// upgrade failed leaves on the terminal: the failure as it judged it
// (reason), and whether the upgrade completed since: EKS-A's rule met with
// its reconcile not paused (a cluster whose etcd was rolled back is paused,
// and meets the rule Ready on its old version). The failure stands (exit
// 4) either way.
func dashboardFailedLine(t followTarget, latest *model.ClusterState, reason string, now time.Time) string {
	again := fmt.Sprintf("`upgrade-console watch %s --plain` prints where it stands", model.ClusterArgs(t.cluster, t.namespace, t.conn))
	if reason == "" {
		reason = "the dashboard called the upgrade of Cluster " + t.namespace + "/" + t.cluster + " failed"
	}
	reason = model.FoldLines(reason)
	if latest != nil && latest.Cluster != nil && !latest.Cluster.Paused() &&
		model.DeriveProgress(latest, model.ProgressOptions{}, now).Complete {
		return fmt.Sprintf("outcome: failed, then completed: %s; every completion milestone is met since (a recovery let it complete); the exit code (4) says the failure the dashboard saw", reason)
	}
	return fmt.Sprintf("outcome: failed: %s; %s", reason, again)
}

// dashboardDeadline is how a dashboard that its --timeout ended left the
// upgrade, by the rule of the plain watch (report.Result): a failure it
// recorded stands. The other outcome it records, done, is its first one,
// and a cluster at rest is done too: it cannot tell that from an upgrade it
// saw complete, nor from one that began since, so it is no verdict to exit
// 0 on. The newest snapshot says whether the completion rule held, or that
// the API server could not be reached.
func dashboardDeadline(recorded report.Outcome, latest *model.ClusterState, now time.Time) report.Result {
	res := report.Result{Outcome: report.TimedOut, Deadline: true}
	switch {
	case recorded == report.Failed:
		res.Outcome = report.Failed
	case latest == nil:
	case latest.Connection == model.Reconnecting:
		res.Words = report.ReconnectingWords(latest.ConnectionSince, "", now)
	case report.ClusterGone(latest):
		res.Words = report.GoneWords(latest)
	case latest.Cluster != nil:
		if _, complete := model.Completion(latest.Cluster); complete {
			res.Words = " with every completion milestone met"
		}
	}
	return res
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// outcomeError maps how the watch ended to the exit code contract, one rule
// for the plain watch and the dashboard: 4 for a failed upgrade the watch
// showed, however it ended (--exit-on-done, --timeout, q, SIGTERM: no end
// hides a failure; a CI job cancelled after it went green), 5 when
// --timeout passed before an outcome, or with the cluster at rest (with or
// without --exit-on-done), 0 when it passed after an upgrade the watch saw
// complete. Any other stop (q, SIGTERM) is 0, or 5 with --exit-on-done. The
// words say whether an upgrade was under way at all, and whether the API
// server could still be reached.
func outcomeError(res report.Result, err error, o *watchOptions) error {
	timedOut := res.Deadline || res.Outcome == report.TimedOut || errors.Is(err, context.DeadlineExceeded)
	switch {
	case err != nil && !errors.Is(err, context.DeadlineExceeded):
		// The watch ended on a bug of its own, or the source's, or at a
		// recovery action's typed confirmation (1): a failure the watch
		// showed still comes first.
		var nc *tui.RecoveryNotConfirmedError
		if errors.As(err, &nc) && res.Outcome == report.Failed {
			return withCode(ExitUpgradeFail, errors.Join(errors.New("the upgrade failed (see the failure above)"), err))
		}
		return err
	case res.Outcome == report.Failed:
		return withCode(ExitUpgradeFail, errors.New("the upgrade failed (see the failure above)"))
	case res.Outcome == report.Done && res.Deadline:
		// Seen complete, and confirmed, before --timeout passed.
		return nil
	case timedOut:
		return withCode(ExitTimeout, errors.New(res.Cut(fmt.Sprintf("--timeout %s passed", o.timeout))))
	case o.exitOnDone && res.Outcome != report.Done:
		// The operator quit, or the watch was interrupted, before the end.
		return withCode(ExitTimeout, errors.New(res.Cut("stopped")))
	}
	return nil
}

// followDemo shows the demo world like any cluster: the same watcher and
// dashboard (or plain lines) as `watch`.
func followDemo(ctx context.Context, out io.Writer, w *demo.World, o *watchOptions, theme themes.Name) error {
	kubeContext := "demo"
	if kc, err := clientcmd.LoadFromFile(w.KubeconfigPath); err == nil && kc.CurrentContext != "" {
		kubeContext = kc.CurrentContext
	}
	_, err := follow(ctx, out, followTarget{config: w.Config, cluster: w.ClusterName, namespace: w.ClusterNamespace, context: kubeContext, conn: demoConn(w), demo: true}, o, theme)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// lazyConfirm confirms completion with the API server for the dashboard
// (tui.Options.Confirm), building its client on the first question: the
// dashboard's first frame does not wait for clients it may never use.
func lazyConfirm(t followTarget) func(context.Context, *model.ClusterState) error {
	if t.confirm != nil {
		return t.confirm
	}
	get := sync.OnceValues(func() (*upgrade.Client, error) { return upgrade.NewClient(t.config) })
	return func(ctx context.Context, s *model.ClusterState) error {
		c, err := get()
		if err != nil {
			return err
		}
		return upgrade.ConfirmCluster(c, t.namespace, t.cluster)(ctx, s)
	}
}
