package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/tui"
	"github.com/upgrade-console/upgrade-console/upgrade"
	"github.com/upgrade-console/upgrade-console/upgrade/recovery"
)

// recoveryOptions are the flags every recovery command shares.
type recoveryOptions struct {
	cluster  string
	dryRun   bool
	yes      bool
	readOnly bool
}

func (o *recoveryOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.cluster, "cluster", "", "name of the EKS-A Cluster (its namespace: -n, default from the kubeconfig context)")
	f.BoolVar(&o.dryRun, "dry-run", false, "show the plan and the server-side dry run of its writes; change nothing")
	f.BoolVarP(&o.yes, "yes", "y", false, "do not ask for the typed confirmation")
	f.BoolVar(&o.readOnly, "read-only", false, "show the plan only: send no write, not even a dry run")
}

// validate refuses flags that contradict each other, before connecting:
// --read-only sends nothing, so a --yes (run without asking) or a --dry-run
// beside it read as a run or a dry run the command never did, with exit 0.
func (o *recoveryOptions) validate() error {
	switch {
	case o.readOnly && o.yes:
		return usageError{errors.New("--yes runs the action without asking, and --read-only runs nothing: leave one out")}
	case o.readOnly && o.dryRun:
		return usageError{errors.New("--dry-run sends a server-side dry run, and --read-only sends nothing, not even that: leave one out")}
	}
	return nil
}

// recoveryEnv connects to the cluster for a recovery command.
func recoveryEnv(g *globalOptions, cluster string) (*recovery.Env, auditTarget, error) {
	if cluster == "" {
		return nil, auditTarget{}, usageError{errors.New("--cluster is required: the name of the EKS-A Cluster")}
	}
	if err := checkClusterName(cluster); err != nil {
		return nil, auditTarget{}, err
	}
	loader := g.kube.ToRawKubeConfigLoader()
	ns, _, err := loader.Namespace()
	if err != nil || ns == "" {
		ns = "default"
	}
	cfg, err := restConfig(g.kube)
	if err != nil {
		return nil, auditTarget{}, err
	}
	client, err := upgrade.NewClient(cfg)
	if err != nil {
		return nil, auditTarget{}, err
	}
	kubeContext := g.reach(loader)
	return &recovery.Env{Client: client, Cluster: cluster, ClusterNamespace: ns, Holder: upgrade.LocalHolder(), Conn: g.conn}, auditTarget{kubeContext, client.Kube}, nil
}

// unreachable says a recovery command's failed read the way plan and watch
// do when the transport failed: it reads the EKS-A Cluster as they do, whose
// error names the API server and what to check. Any other error, or one the
// Cluster read does not explain, is kept. It reads only after a failure, so
// what a command checks before the cluster (a --snapshot-file) stays first.
func unreachable(ctx context.Context, env *recovery.Env, err error) error {
	var ue *url.Error
	if err == nil || !errors.As(err, &ue) || ctx.Err() != nil {
		return err
	}
	_, cerr := (&upgrade.Resolver{Client: env.Client, Conn: env.Conn}).Cluster(ctx, env.ClusterNamespace, env.Cluster)
	var ie *model.InputError
	if errors.As(cerr, &ie) {
		return cerr
	}
	return err
}

// runRecoveryPlan shows a plan, dry-runs it, asks for the typed confirmation and runs
// it, printing each step's result: the headless twin of the TUI's recovery
// dialogs.
func runRecoveryPlan(ctx context.Context, in io.Reader, out io.Writer, p *recovery.Plan, o *recoveryOptions, at auditTarget) error {
	writeRecoveryPlan(out, p)
	if o.readOnly {
		fmt.Fprintln(out, "\n--read-only: nothing was sent to the API server (not even a dry run)")
		return nil
	}
	// A log that refuses to open, or refuses the dry run's entries, does
	// not stop the dry run: it changes nothing, and where the run ends
	// there (--dry-run, every step done) it ends as a run the log did not
	// take all of (74, the entries printed at exit). A run that goes on to
	// write stops before it, exit 1.
	audit, openErr := holdingAuditor(ctx, at)
	x := &recovery.Executor{Audit: audit}
	fmt.Fprintln(out, "\nServer-side dry run:")
	dry, err := x.DryRun(ctx, p)
	writeRecoveryReport(out, dry)
	var unrecorded *recovery.DryRunUnrecordedError
	if err != nil && !errors.As(err, &unrecorded) {
		if onlyAuditRefused(err) {
			// The environment, not a check of the cluster's: exit 1, as
			// for apply.
			return fmt.Errorf("nothing was changed: %w", err)
		}
		// A step the dry run refused keeps its 3 whatever the log did:
		// joined with the log's refusal, it read as the log's alone (1).
		return dryRunFailed(ctx, audit, p, err)
	}
	recorded := fmt.Sprintf("dry run recorded in %s", audit.Path())
	switch {
	case unrecorded != nil:
		recorded = fmt.Sprintf("the dry run is NOT recorded in the audit log: %v", unrecorded)
	case openErr != nil:
		// A dry run of wait steps alone wrote no entry for the log to
		// refuse: "recorded in" named a log that was never opened.
		recorded = fmt.Sprintf("it had nothing to record, and the audit log cannot be opened: %v", openErr)
	}
	if dry.AllAlreadyDone() {
		// A rerun of a recovery that finished: the plan's title still says
		// what it did ("… and delete the new member"), and a run would
		// take the lock and record a start for nothing.
		fmt.Fprintf(out, "\nNothing to do: every step is already done; nothing was changed (%s)\n", recorded)
		return nil
	}
	if o.dryRun {
		fmt.Fprintf(out, "\n--dry-run: nothing was changed (%s)\n", recorded)
		return nil
	}
	if unrecorded != nil {
		return fmt.Errorf("nothing was changed: %w", unrecorded)
	}
	if openErr != nil {
		// The dry run wrote no entry to find it refused (wait steps
		// only): the run's would be.
		return fmt.Errorf("nothing was changed: %w", openErr)
	}
	if !o.yes {
		if err := confirmTyped(ctx, in, out, p); err != nil {
			return errors.Join(err, recovery.RecordNotConfirmed(ctx, audit, p, err))
		}
	}
	x.Progress = runProgress(out, len(p.Steps))
	rep, err := x.Run(ctx, p)
	if err != nil && !unrecordedEnd(rep, p, err) {
		fmt.Fprintf(out, "\naudit log: %s\n", audit.Path())
		return runError(rep, err)
	}
	if len(rep.Closing) > 0 {
		fmt.Fprintln(out)
		for _, l := range rep.Closing {
			fmt.Fprintln(out, l)
		}
	}
	if err != nil {
		// Every step done: only the run's end is not on record. The
		// log holds it, printed at exit, and the exit is 74.
		fmt.Fprintf(out, "\nthe run's end is NOT recorded in the audit log: %v\n", err)
	}
	fmt.Fprintf(out, "\naudit log: %s\n", audit.Path())
	return nil
}

// unrecordedEnd reports whether a run whose every step is done failed only
// to record its end (the audit log refused it): the action is done, and
// "resumable", exit 4, sent the operator to run a finished rollback again.
func unrecordedEnd(rep recovery.Report, p *recovery.Plan, err error) bool {
	if len(rep.Steps) != len(p.Steps) || !errors.As(err, new(*upgrade.AuditWriteError)) {
		return false
	}
	for _, s := range rep.Steps {
		if s.Status != recovery.StepDone && s.Status != recovery.StepAlreadyDone {
			return false
		}
	}
	return true
}

// runProgress prints a recovery run's steps as they start and end.
// "Running:" comes with the first step: a run the lock turns away (another
// console's rollback) ran nothing, and the heading read as a start.
func runProgress(out io.Writer, n int) func(recovery.StepResult) {
	said := false
	return func(r recovery.StepResult) {
		if !said {
			said = true
			fmt.Fprintln(out, "\nRunning:")
		}
		if r.Status == recovery.StepRunning {
			fmt.Fprintf(out, "  [%d/%d] %s …\n", r.Index+1, n, r.Title)
			return
		}
		status := string(r.Status)
		if r.Status == recovery.StepFailed && errors.Is(r.Err, context.Canceled) {
			// A clean stop that running again continues: "failed"
			// alarmed, beside exit 5 and how to resume.
			status = "stopped"
		}
		fmt.Fprintf(out, "        %s%s (%s)\n", status, detailSuffix(r), tookText(r.Took))
	}
}

// runError gives a recovery run that did not finish its exit code.
func runError(rep recovery.Report, err error) error {
	var cc *recovery.ConcurrentChangeError
	var wt *recovery.WaitTimeoutError
	var held *upgrade.LockHeldError
	var ns *recovery.NotStartedError
	switch {
	case errors.As(err, &ns):
		// The log refused the run's start (a disk filled at the
		// prompt): no step ran. The environment's fault, exit 1 as in
		// the dry run, not an action that failed part way. A refusal
		// after a write (a lock taken over, a step) is not this.
		return withCode(ExitBadInput, fmt.Errorf("nothing was changed: %w", err))
	case errors.As(err, &held):
		return withCode(ExitPreflight, err) // refused: another console's action runs
	case errors.As(err, &wt):
		return withCode(ExitTimeout, err)
	case errors.Is(err, context.Canceled):
		// Stopped, not failed: the code of a wait that timed out, and the
		// same way on.
		return withCode(ExitTimeout, fmt.Errorf("%w\nstopped before the action completed (interrupted); it is resumable: run the same command again to continue from where the cluster is", err))
	case rep.Refused(err):
		// The plan went stale before the run's first write: refused, as
		// a plan the checks block (3), not an action that failed part way.
		return withCode(ExitPreflight, err)
	case errors.As(err, &cc), errors.As(err, new(*recovery.RolledForwardError)), errors.Is(err, upgrade.ErrLockLost):
		// Each says what to do next; "resumable" would add a second,
		// other, next step.
		return withCode(ExitUpgradeFail, err)
	}
	return withCode(ExitUpgradeFail, fmt.Errorf("%w\nthe action is resumable: run the same command again to continue from where the cluster is", err))
}

func detailSuffix(r recovery.StepResult) string {
	switch {
	case r.Err != nil:
		return ": " + r.Err.Error()
	case r.Detail != "":
		return ": " + r.Detail
	}
	return ""
}

func writeRecoveryPlan(out io.Writer, p *recovery.Plan) {
	fmt.Fprintln(out, p.Title)
	if len(p.Preconditions) > 0 {
		fmt.Fprintln(out, "\nPreconditions:")
		writePreconditions(out, p.Preconditions)
	}
	fmt.Fprintln(out, "\nPlan:")
	for i, s := range p.Steps {
		fmt.Fprintf(out, "  %d. %s\n     %s: %s\n", i+1, s.Title, s.Object, s.Change)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(out, "  note: %s\n", n)
	}
}

// Names are padded to the longest in the list, so the details line up
// whatever the names ("not-live:etcd-upgrading").
func writePreconditions(out io.Writer, pre []recovery.Precondition) {
	w := 0
	for _, c := range pre {
		w = max(w, len(c.Name))
	}
	for _, c := range pre {
		mark := "✓"
		if !c.OK {
			mark = "✗"
		}
		fmt.Fprintf(out, "  %s %-*s  %s\n", mark, w, c.Name, c.Detail)
	}
}

func writeRecoveryReport(out io.Writer, r recovery.Report) {
	w := 0
	for _, s := range r.Steps {
		w = max(w, len(s.Step))
	}
	for _, s := range r.Steps {
		fmt.Fprintf(out, "  %d. %-*s  %s%s\n", s.Index+1, w, s.Step, s.Status, detailSuffix(s))
	}
}

// refused prints why an action is not offered and maps it to the exit code of
// a blocking check.
func refused(out io.Writer, err error) error {
	var r *recovery.RefusedError
	if !errors.As(err, &r) {
		return err
	}
	if r.Input != nil {
		// The flag is at fault, not the cluster: bad input (exit 1), with
		// the lines of what else holds as the refusal had them.
		fmt.Fprintf(out, "%s was not run for %s: %s names no snapshot of it to restore:\n", r.Action, r.Cluster, r.Input.Source)
		writePreconditions(out, r.Preconditions)
		return err
	}
	fmt.Fprintf(out, "%s is not offered for %s:\n", r.Action, r.Cluster)
	writePreconditions(out, r.Preconditions)
	return withCode(ExitPreflight, err)
}

// refusal is refused for a command that may write: the refusal is recorded
// in the audit log first (in read-only mode, which opens no audit log, it is
// only printed). A refusal changes nothing: a log that cannot be opened
// holds its entry, printed at exit, and the refusal keeps its code (3); the
// entry was lost with the process.
func refusal(ctx context.Context, out io.Writer, o *recoveryOptions, at auditTarget, err error) error {
	var r *recovery.RefusedError
	if !o.readOnly && errors.As(err, &r) {
		audit, _ := holdingAuditor(ctx, at)
		if aerr := recovery.RecordRefusal(ctx, audit, err); aerr != nil {
			return errors.Join(refused(out, err), aerr)
		}
	}
	return refused(out, err)
}

// confirmTyped asks the operator to type the name of the object the action
// changes (k9s's dangerous-action pattern: a "y" typed by habit does nothing).
func confirmTyped(ctx context.Context, in io.Reader, out io.Writer, p *recovery.Plan) error {
	return confirmName(ctx, in, out, fmt.Sprintf("\nType %q (%s) to confirm: ", p.Confirm, p.ConfirmObject), p.Confirm)
}

// recoveryActions is the dashboard's recovery menu (R) for the followed
// cluster. In read-only mode there is none: no key that changes the cluster
// is bound, and not even the audit log is opened. Where none can be made
// otherwise, why is returned (tui.Options.NoRecovery), for R to say.
func recoveryActions(t followTarget, holder upgrade.Holder, readOnly bool, nodeLabel string, threshold time.Duration) ([]tui.Action, tea.Cmd, []string) {
	if readOnly {
		return nil, nil, nil
	}
	client, err := upgrade.NewClient(t.config)
	if err != nil {
		klog.Errorf("recovery menu disabled: %v", err)
		return nil, nil, []string{err.Error(), "no client for the cluster"}
	}
	audit, err := openAuditor(auditTarget{t.context, client.Kube})
	if err != nil {
		// Without an audit log no action may run: the menu is not offered.
		klog.Errorf("recovery menu disabled: %v", err)
		return nil, nil, noAuditLog(err)
	}
	env := &recovery.Env{Client: client, Cluster: t.cluster, ClusterNamespace: t.namespace, Holder: holder, Conn: t.conn}
	return []tui.Action{tui.RecoveryAction(tui.RecoveryOptions{Env: env, Audit: audit, NodeLabel: nodeLabel, Threshold: threshold})}, authenticateCmd(audit), nil
}

// noAuditLog is why R offers nothing when the audit log cannot be opened,
// longest form first: the path, what is wrong and its fix while they fit,
// then the fix every cause shares (another XDG_STATE_HOME), then less.
func noAuditLog(err error) []string {
	var sd *upgrade.StateDirError
	if errors.As(err, &sd) {
		// No state directory: no path to name, and the forms below read
		// "audit log : <the whole error> (set XDG_STATE_HOME elsewhere)",
		// longer than the first, so that R at 140-180 columns said only
		// "no audit log".
		return []string{
			err.Error(),
			"no audit log: no state directory: " + sd.Problem + " (set XDG_STATE_HOME or HOME)",
			"no audit log: no state directory (set XDG_STATE_HOME or HOME)",
			"no audit log: set XDG_STATE_HOME or HOME",
			"no audit log",
		}
	}
	var aw *upgrade.AuditWriteError
	if !errors.As(err, &aw) {
		// The directory could not be made: its message names the path
		// and the fix already.
		return []string{err.Error(), "no audit log (see upgrade-console.log)", "no audit log"}
	}
	cause := aw.Err.Error()
	var pe *os.PathError
	if errors.As(aw.Err, &pe) {
		// "open PATH: is a directory" repeated the path.
		cause = pe.Err.Error()
	}
	return []string{
		err.Error(),
		fmt.Sprintf("audit log %s: %s (set XDG_STATE_HOME to another directory)", aw.Path, cause),
		fmt.Sprintf("audit log %s: %s (set XDG_STATE_HOME elsewhere)", aw.Path, cause),
		fmt.Sprintf("audit log %s: %s", aw.Path, cause),
		fmt.Sprintf("audit log: %s (set XDG_STATE_HOME elsewhere)", cause),
		"audit log: " + cause,
		"no audit log",
	}
}

// planRecoveryActions is the recovery menu of the dashboard that follows an
// upgrade this console started: the console's own lock does not block it.
func planRecoveryActions(lv *live, l *liveOptions, audit *upgrade.Auditor, display *watchOptions) []tui.Action {
	env := &recovery.Env{Client: lv.client, Cluster: l.cluster, ClusterNamespace: lv.namespace, Holder: lv.holder, Conn: lv.conn}
	return []tui.Action{tui.RecoveryAction(tui.RecoveryOptions{Env: env, Audit: audit, NodeLabel: l.nodeLabel, Threshold: display.rollbackThreshold})}
}

// groupCmd is a command that only holds subcommands (etcd, lock, node,
// snapshot). Run without one, or with a name it does not hold, it is a wrong
// command line (exit 2): cobra printed the help and exited 0, so a
// runbook's `etcd rolback --kubeconfig …` passed having done nothing.
func groupCmd(use, short string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Args: cobra.ArbitraryArgs, RunE: func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usageError{fmt.Errorf("%q needs a subcommand: %s; see %q", cmd.CommandPath(), strings.Join(commandNames(cmd), ", "), cmd.CommandPath()+" --help")}
		}
		return unknownCommand(cmd, args[0])
	}}
	cmd.AddCommand(subs...)
	return cmd
}

func cmdContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// signalled is a command's error once SIGINT or SIGTERM cancelled ctx: a
// read the signal cut short is a stop (exit 5) that says so, not bad input
// in client-go's words ("…: terminated signal received", exit 1). An error
// that already has its code (a run stopped, a refusal) keeps it.
func signalled(ctx context.Context, err error) error {
	var coded codedError
	if err == nil || ctx.Err() == nil || errors.As(err, &coded) {
		return err
	}
	var usage usageError
	var input *model.InputError
	if errors.As(err, &usage) || (errors.As(err, &input) && !errors.Is(err, context.Canceled)) {
		return err
	}
	if cancelledOnly(err) {
		// client-go's words for the cancellation itself ("client rate
		// limiter Wait returned an error: context canceled") add nothing
		// to "interrupted"; the log keeps them.
		klog.InfoS("stopped by a signal", "err", err)
		return withCode(ExitTimeout, errors.New("stopped (interrupted) before it finished; it changed nothing"))
	}
	return withCode(ExitTimeout, fmt.Errorf("stopped (interrupted) before it finished; it changed nothing: %w", err))
}

// cancelledOnly is upgrade.CancelledOnly: the start and the recovery
// commands tell the cancellation by the same rule.
func cancelledOnly(err error) bool { return upgrade.CancelledOnly(err) }

// survivesClosedOutput keeps a command that writes to the cluster alive when
// its standard output closes (a pipe whose reader went with the SSH session):
// the write to it fails instead of killing the process between two writes to
// the cluster, or between a write and its audit record. Read-only commands
// keep the default, ending with the reader (`plan -o json | head`).
func survivesClosedOutput() { signal.Ignore(syscall.SIGPIPE) }

// onlyAuditRefused: every error err joins is the audit log's refusal,
// none a step's or the cluster's.
func onlyAuditRefused(err error) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if e != nil && !onlyAuditRefused(e) {
				return false
			}
		}
		return true
	}
	var aw *upgrade.AuditWriteError
	return errors.As(err, &aw)
}

// dryRunFailed is a recovery's dry run that failed: refused by the cluster
// (exit 3, recorded refused), or interrupted (a stop that changed nothing,
// exit 5, recorded not run): read as a refusal, Ctrl-C during the dry run
// exited 3 and recorded "refused: … context canceled".
func dryRunFailed(ctx context.Context, audit upgrade.Recorder, p *recovery.Plan, err error) error {
	if ctx.Err() != nil {
		return errors.Join(signalled(ctx, err),
			recovery.RecordNotConfirmed(context.WithoutCancel(ctx), audit, p, errors.New("interrupted during the dry run")))
	}
	return errors.Join(withCode(ExitPreflight, fmt.Errorf("the dry run failed, nothing was changed: %w", err)),
		recovery.RecordDryRunRefused(ctx, audit, p, err))
}

// interruptible is the context a command that may change the cluster runs
// under from its typed confirmation on: Ctrl-C, SIGTERM or SIGHUP (the SSH
// session to the bastion dropped) cancels it instead of killing the
// process. At the prompt, confirmName then says it was
// interrupted and that nothing was changed, the caller records the action
// not-confirmed, and the command exits 1 (not confirmed); once confirmed, the
// run stops cleanly (exit 5). The recovery commands run under it from the
// start, apply from its confirmation.
func interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = context.Background()
	}
	// The same signals as the UI's, a SIGINT the console was started
	// ignoring left ignored: a shell starts a script's background jobs so
	// (no job control), and asking for it would hand them the Ctrl-C meant
	// for the job in front.
	return signal.NotifyContext(ctx, tui.StopSignals()...)
}

// tookText is how long a step took, to 10 ms: "(0s)" read as a step that
// did nothing.
func tookText(d time.Duration) string {
	if d < 10*time.Millisecond {
		return "<10ms"
	}
	return d.Round(10 * time.Millisecond).String()
}
