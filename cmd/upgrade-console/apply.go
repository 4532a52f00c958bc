package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/report"
	"github.com/upgrade-console/upgrade-console/upgrade"
	"github.com/upgrade-console/upgrade-console/upgrade/recovery"
)

type applyOptions struct {
	live       liveOptions
	dryRun     bool
	yes        bool
	wait       bool
	timeout    time.Duration
	timeoutSet bool // --timeout was given
	// stallAfterSet: --stall-after was given; screenOnly, the flags that
	// only the screens read, given.
	stallAfterSet  bool
	screenOnly     []string
	forceConflicts bool
	readOnly       bool
	tui            bool
	display        watchOptions
}

func newApplyCmd(g *globalOptions) *cobra.Command {
	o := &applyOptions{}
	cmd := &cobra.Command{
		Use:   "apply --cluster NAME -f cluster.yaml",
		Short: "Start an upgrade: preflight, lock, snapshot, server-side apply of the new spec, then follow it",
		Long: `Start an upgrade of an EKS Anywhere management cluster the way 'eksctl anywhere upgrade
cluster' does without a bootstrap cluster: apply the new cluster spec to the management
cluster and let its EKS-A controller reconcile, while the console follows.

Steps: the plan and its preflight checks (as 'plan --cluster'); a server-side dry-run that
shows what changes and which fields another manager owns; a typed confirmation (the cluster
name) unless --yes; the upgrade lock (Lease upgrade-console-<cluster> in eksa-system); a
snapshot of the specs a rollback needs (a ConfigMap in eksa-system and a local file); the
server-side apply (field manager upgrade-console); with --wait, the EKS-A completion rule.

Field conflicts are never forced silently: when another manager (eks-a-cli, kubectl, a
GitOps controller) owns a field the spec changes, the apply stops unless --force-conflicts
is given, and forcing is recorded in the audit log like every write. The dry-run runs again
under the lock: when another manager changed a field meanwhile, nothing is written (exit 3).

The lock is released when the upgrade completes, and kept when it fails or times out: it
then blocks further upgrades until cleared with 'upgrade-console lock clear lease'.
Without --wait (or on ctrl-c while following) the console stops following and releases the
lock; the upgrade goes on in the cluster ('upgrade-console watch' follows it).

With --tui the same steps run on the terminal: the plan screen (versions, components,
preflight re-run live, the dry-run), the typed confirmation, then the dashboard.

Exit codes: 0 done (or applied, without --wait), 1 bad input or not confirmed (ctrl-c at
the typed confirmation included), 2 wrong command line (no terminal for the typed
confirmation and no --yes included), 3 a blocking preflight check failed or unforced
field conflicts, 4 the upgrade failed,
5 the console stopped before the upgrade completed: --timeout passed, or it was
interrupted (ctrl-c, SIGTERM, SIGHUP; before the first write nothing is changed); the upgrade may
still be running (the message says whether it started), and 'upgrade-console watch'
follows it. With --wait on a spec the Cluster already has and the cluster has not
reached, the console applies nothing and follows that upgrade, with the same codes,
even when checks fail that would block a new upgrade (a rerun mid-rollout). 70 is a bug of
the console's own (a panic caught; the stack goes to the log file). 74 done, but the audit log (a full disk) did not take all of its record: the entries are printed to append to it.`,
		Example: `  # See what would change, without changing anything. On a cluster the EKS-A CLI made,
  # its field manager eks-a-cli owns spec.eksaVersion and the versions: --force-conflicts
  # takes them over, as its own upgrade does (without it, exit 3 naming them)
  upgrade-console apply --cluster mgmt -f mgmt-v0.21.yaml --dry-run --force-conflicts

  # Upgrade and follow to the end, for CI
  upgrade-console apply --cluster mgmt -f mgmt-v0.21.yaml --force-conflicts --yes --wait --timeout 90m

  # The same from the plan screen
  upgrade-console apply --cluster mgmt -f mgmt-v0.21.yaml --tui`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.timeoutSet = cmd.Flags().Changed("timeout")
			o.stallAfterSet = cmd.Flags().Changed("stall-after")
			for _, name := range []string{"theme", "etcd-rollback-threshold"} {
				if cmd.Flags().Changed(name) {
					o.screenOnly = append(o.screenOnly, "--"+name)
				}
			}
			return runApply(cmd.Context(), cmd.InOrStdin(), cmd.OutOrStdout(), g, o)
		},
	}
	f := cmd.Flags()
	o.live.addFlags(f, true)
	f.BoolVar(&o.dryRun, "dry-run", false, "stop after the server-side dry-run; change nothing")
	f.BoolVarP(&o.yes, "yes", "y", false, "do not ask for the typed confirmation")
	f.BoolVar(&o.wait, "wait", false, "follow the upgrade until the EKS-A completion rule holds")
	f.DurationVar(&o.timeout, "timeout", time.Hour, "with --wait: give up following after this long (the upgrade goes on; 0: no limit)")
	f.BoolVar(&o.forceConflicts, "force-conflicts", false, "take over fields other field managers own (recorded in the audit log)")
	f.BoolVar(&o.readOnly, "read-only", false, "refuse every change: only --dry-run runs (with --tui: the plan screen without the apply)")
	f.BoolVar(&o.tui, "tui", false, "open the plan screen on the terminal and start the upgrade from it (the dashboard then follows; not with --dry-run, --yes, --wait or --timeout: the screen has its own dry run, confirmation and follow)")
	f.StringVar(&o.display.theme, "theme", "auto", "with --tui only: colours: "+themeNames())
	f.DurationVar(&o.display.stallAfter, "stall-after", model.DefaultStallAfter, "with --wait or --tui: when a machine or step counts as stalled, and is said")
	f.DurationVar(&o.display.rollbackThreshold, "etcd-rollback-threshold", recovery.DefaultEtcdRollbackThreshold, "with --tui only: how long a new etcd member may stay not ready before the recovery menu (R) offers the etcd rollback")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml")
	_ = cmd.MarkFlagFilename("to-bundles", "yaml", "yml", "json")
	return cmd
}

func runApply(ctx context.Context, in io.Reader, out io.Writer, g *globalOptions, o *applyOptions) error {
	if o.readOnly && !o.dryRun && !o.tui {
		return usageError{errors.New("apply changes the cluster and --read-only forbids it; use --dry-run or 'plan' to look")}
	}
	// Checked before anything is written: a timeout that has already passed
	// would apply the spec and then keep the lock of an upgrade not followed.
	if o.display.stallAfter <= 0 {
		return badFlag("--stall-after", fmt.Errorf("must be positive, got %s", o.display.stallAfter), "give how long a machine may make no progress, e.g. 10m")
	}
	if o.display.rollbackThreshold <= 0 {
		return badFlag("--etcd-rollback-threshold", fmt.Errorf("must be positive, got %s", o.display.rollbackThreshold), "e.g. 15m")
	}
	if o.timeout < 0 {
		return badFlag("--timeout", fmt.Errorf("must not be negative, got %s", o.timeout), "give a duration such as 90m; 0 follows until the upgrade ends")
	}
	if o.timeoutSet && !o.wait && !o.tui {
		// Silently ignored, it read as a limit the upgrade was held to.
		return usageError{errors.New("--timeout limits how long --wait follows the upgrade: add --wait, or leave --timeout out")}
	}
	if !o.tui && len(o.screenOnly) > 0 {
		// Accepted and ignored, they read as settings the follow used.
		verb, them := "tunes", "it"
		if len(o.screenOnly) > 1 {
			verb, them = "tune", "them"
		}
		return usageError{fmt.Errorf("%s only %s the screens of --tui (their colours, the recovery menu), and nothing without --tui reads %s: add --tui, or leave %s out", strings.Join(o.screenOnly, " and "), verb, them, them)}
	}
	if o.stallAfterSet && !o.wait && !o.tui {
		return usageError{errors.New("--stall-after says when the follow reports a machine or step stalled, and without --wait or --tui nothing follows: add --wait, or leave --stall-after out")}
	}
	if o.dryRun && o.wait {
		return usageError{errors.New("--wait follows the upgrade an apply starts, and --dry-run starts none: leave one out")}
	}
	if o.tui {
		// The plan screen has its own dry run (d), asks for the typed
		// confirmation itself and follows the upgrade it starts: these
		// flags were ignored, and with --dry-run enter applied the spec.
		var ignored []string
		for _, f := range []struct {
			set  bool
			name string
		}{{o.dryRun, "--dry-run (press d on the plan screen)"}, {o.yes, "--yes"}, {o.wait, "--wait"}, {o.timeoutSet, "--timeout"}} {
			if f.set {
				ignored = append(ignored, f.name)
			}
		}
		if len(ignored) > 0 {
			return usageError{fmt.Errorf("--tui asks for the typed confirmation and follows the upgrade itself: leave out %s", strings.Join(ignored, ", "))}
		}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	// A Ctrl-C, a SIGTERM or a SIGHUP never kills the process outright, from the
	// start (a CI job cancelled while the checks run gets a line and exit 5,
	// not a silent 143): before the first write it stops the apply with
	// nothing changed; at the prompt it ends it not confirmed (said, and
	// recorded); once a document is applied the rest are applied too, and
	// the console then stops as when it stops following. The plan screen
	// handles its own (runPlanTUI).
	survivesClosedOutput()
	sctx, stop := interruptible(ctx)
	defer stop()
	o.live.forceConflicts = o.forceConflicts
	// Connected under the interrupt too: against an API server that does
	// not answer, the schema and Cluster reads held a SIGTERM 12 to 32 s.
	lv, err := connect(sctx, g, &o.live)
	if err != nil {
		return interruptedOr(sctx, err)
	}
	defer lv.close()
	if o.tui {
		return runApplyTUI(ctx, out, lv, o)
	}
	if sctx.Err() != nil {
		return errStoppedBeforeStart
	}
	p, err := lv.plan(sctx, &o.live)
	if err != nil {
		return interruptedOr(sctx, err)
	}
	writeLivePlan(out, p, false)
	if p.Blocked() {
		if specUnchanged(p) {
			// A rerun mid-rollout: the checks that fail (the control plane
			// or etcd not ready) block starting an upgrade, and this one
			// starts none, it is the upgrade under way; --wait follows it.
			// Without --wait, or once the cluster runs the spec (a rerun
			// after a timed-out --wait whose lock is kept), it ends as
			// any apply of a spec the Cluster has: nothing to apply.
			// Refused, it was recorded as an attempt at a blocked
			// upgrade, and its exit code hung on whether the rollout had
			// finished.
			fmt.Fprintln(out, "\n"+p.CurrentSpec.NothingToApply())
			if !o.wait || !p.CurrentSpec.NotReached() {
				fmt.Fprintln(out, "the failed checks would block a new upgrade; this spec starts none, and nothing was changed")
				return nil
			}
			fmt.Fprintln(out, "the failed checks would block a new upgrade; this spec starts none, so --wait follows the one under way")
			return followUnapplied(sctx, out, lv, p, o)
		}
		if invalidSpec(p) != nil {
			bad := blockedExit(p)
			return errors.Join(bad, recordRefusedApply(sctx, lv, p, o.dryRun, bad))
		}
		return refusedApply(sctx, lv, p, o.dryRun, blockedError(p.Preflight))
	}

	applier := &upgrade.Applier{Client: lv.client, Cluster: p.Cluster}
	dry, err := applier.DryRun(sctx, lv.spec)
	if err != nil {
		return interruptedOr(sctx, err)
	}
	writeDryRun(out, dry)
	if rej := dry.Rejected(); len(rej) > 0 {
		// A refusal of the file's content is bad input (exit 1), as the
		// plan's spec-accepted ends it; one by RBAC or of a kind not
		// served is the cluster's (exit 3), as that check's. Either is
		// an attempt the audit log keeps, as it keeps the refusals for
		// conflicts and by the checks.
		if bad := dry.InvalidSpec(lv.spec); bad != nil {
			return errors.Join(bad, recordRefusedApply(sctx, lv, p, o.dryRun, bad))
		}
		return refusedApply(sctx, lv, p, o.dryRun, fmt.Errorf("the API server refuses %s: %s; nothing was changed", rej[0].Object, model.JoinLines(rej[0].Error)))
	}
	if len(dry.Conflicts) > 0 && !o.forceConflicts {
		return refusedApply(sctx, lv, p, o.dryRun, &upgrade.ConflictsError{Conflicts: dry.Conflicts})
	}
	if dry.Changes() == 0 {
		fmt.Fprintln(out, "\n"+p.CurrentSpec.NothingToApply())
		if !o.wait || !p.CurrentSpec.NotReached() {
			return nil
		}
		// --wait promises the completion rule held at exit 0: a rerun
		// after a cancelled job must not go green mid-upgrade.
		return followUnapplied(sctx, out, lv, p, o)
	}
	if o.dryRun {
		// A snapshot directory the apply would refuse (below) is the dry
		// run's refusal too, with the same exit 1: a CI gate running
		// --dry-run passed, and the apply then exited 1. Without a state
		// directory at all the dry run's entries are printed and the exit
		// is 74 (holdingAuditor), which says it already.
		if _, noState := upgrade.StateDir(); noState == nil {
			if bad := upgrade.CheckSnapshotDir(""); bad != nil {
				return errors.Join(bad, recordRefusedApply(sctx, lv, p, true, bad))
			}
		}
		// The dry run is done whatever the log does: an entry it refuses
		// is held, printed at exit, and the exit is 74 (endRun), as the
		// README's table has it; returned, the refusal made it exit 1.
		audit, _ := holdingAuditor(ctx, lv.auditTarget())
		if err := audit.Record(ctx, dryRunEntry(p, lv.spec, dry, o.forceConflicts)); err != nil {
			fmt.Fprintf(out, "\n--dry-run: nothing was changed; the dry run is NOT recorded in the audit log: %v\n", err)
			return nil
		}
		fmt.Fprintf(out, "\n--dry-run: nothing was changed (dry run recorded in %s)\n", audit.Path())
		return nil
	}
	// Opened before the prompt: an unwritable log stops the apply before
	// the operator confirms, and an apply not confirmed is recorded.
	audit, err := newAuditor(ctx, lv.auditTarget())
	if err != nil {
		return err
	}
	// So does a snapshot directory the local copy cannot be written to
	// (Driver.Start refuses it too): found when the copy was written, the
	// lock had been taken and released for nothing.
	if bad := upgrade.CheckSnapshotDir(""); bad != nil {
		return errors.Join(bad, audit.Record(context.WithoutCancel(ctx), upgrade.RefusedApplyEntry(p, false, bad)))
	}
	if sctx.Err() != nil {
		return errStoppedBeforeStart
	}
	if !o.yes {
		if err := confirm(sctx, in, out, p.Cluster); err != nil {
			return errors.Join(err, audit.Record(context.WithoutCancel(ctx), upgrade.AuditEntry{Cluster: p.Cluster, Action: "apply",
				Object: "Cluster " + p.Namespace + "/" + p.Cluster, Result: upgrade.AuditNotConfirmed,
				Message: "not applied, nothing changed: " + err.Error()}))
		}
	}
	d := &upgrade.Driver{Client: lv.client, Audit: audit, Holder: lv.holder, Planner: lv.planner, Conn: lv.conn}
	conflicted := map[string]bool{}
	for _, c := range dry.Conflicts {
		conflicted[c.Object] = true
	}
	fmt.Fprintf(out, "\ntaking the upgrade lock as %s…\n", lv.holder.Display())
	s, err := d.Start(sctx, p, upgrade.StartOptions{DryRun: dry, ForceConflicts: o.forceConflicts,
		OnSnapshot: func(ref upgrade.SnapshotRef) { fmt.Fprintf(out, "snapshot saved: %s\n", ref.Where()) },
		OnApplied: func(a upgrade.AppliedObject) {
			fmt.Fprintf(out, "applied %s (generation %d)%s\n", a.Object, a.Generation, forcedNote(o.forceConflicts && conflicted[a.Object]))
			if a.Unrecorded != nil {
				// On record in the started entry; the rest of the spec
				// is written, not left half applied.
				fmt.Fprintf(out, "  its audit entry is not confirmed in the log (%v): the upgrade's started entry lists the write; an entry the log refused is held, written with the next one it takes or printed at exit\n", a.Unrecorded)
			}
		},
	})
	if err != nil {
		var aw *upgrade.AuditWriteError
		switch {
		case s == nil && errors.As(err, &aw) && sctx.Err() == nil:
			// No write goes unrecorded: the start stopped before the spec.
			// The lock it took may stay: its release is a write the
			// refusing log did not take either. A start refused anyway
			// keeps its 3, as apply --tui's does.
			err = fmt.Errorf("nothing was applied: %w%s", err, lockNote(ctx, lv, p.Cluster, err, "\n"))
			if startRefused(err) {
				return withCode(ExitPreflight, err)
			}
			return err
		case s != nil:
			// Some of the spec was applied: the upgrade ran and failed,
			// whatever refused the rest. A field conflict with a writer
			// that took the field after the dry run is one: first, it
			// read as startRefused's refusal before any write (exit 3)
			// and the way back went unsaid.
			if wb := s.WayBack(); wb != "" {
				err = fmt.Errorf("%w\n%s", err, wb)
			}
			return withCode(ExitUpgradeFail, err)
		case startRefused(err):
			return withCode(ExitPreflight, err)
		case sctx.Err() != nil:
			return withCode(ExitTimeout, fmt.Errorf("%w\nstopped before the upgrade started (interrupted): the cluster's spec is unchanged, no upgrade is running%s", err, lockNote(ctx, lv, p.Cluster, err, "; ")))
		}
		return err
	}
	fmt.Fprintf(out, "audit log: %s%s\n", audit.Path(), skippedNote(p.Skipped))
	if sctx.Err() != nil {
		// Interrupted during the writes, which ran to their end.
		derr := s.Detach(ctx)
		fmt.Fprintf(out, "\ninterrupted during the apply: every document was applied (a spec is never left half applied), and the upgrade goes on in the cluster; %s; follow it with\n  upgrade-console watch %s\n", s.LockReleasedMessage(nil), lv.clusterFlags(p.Cluster))
		sayDetachUnrecorded(out, derr)
		return withCode(ExitTimeout, errStoppedFollowing)
	}

	if !o.wait {
		// The spec is applied whatever the end's writes did. A release
		// refused (by the API server, or by the audit log that must take
		// its announcement first) is said in the lock's note, as the
		// completion says it; the entries the log refused make the exit
		// 74 at the end (endRun). Returned, the error made it exit 1, bad
		// input: a script read that nothing had started.
		derr := s.Detach(ctx)
		fmt.Fprintf(out, "\nnot waiting (--wait not given): %s; follow the upgrade with\n  upgrade-console watch %s\n", s.LockReleasedMessage(nil), lv.clusterFlags(p.Cluster))
		sayDetachUnrecorded(out, derr)
		return nil
	}
	tctx, limit, cancel := o.followLimit(sctx)
	defer cancel()
	start := time.Now().UTC()
	fmt.Fprintf(out, "\nfollowing the upgrade from %s (times UTC; %s; ctrl-c stops following, the upgrade goes on)…\n", start.Format(time.DateOnly), limit)
	pr := &followPrinter{out: out, day: start.Format(time.DateOnly), lock: func() (error, bool) { _, rerr, lost := s.Lock(); return rerr, lost }, self: lv.holder.String(),
		renewNow: func() { s.RenewLockNow(tctx) }}
	pr.stopAt = o.stopAt(tctx)
	outcome, err := s.Track(tctx, lv.watcher, upgrade.TrackOptions{Progress: progressOptions(&o.display), OnPoll: pr.onPoll, OnProgress: pr.onProgress, OnHold: pr.onHold})
	switch {
	case outcome.Complete:
		// The upgrade is done whatever became of the lock: a release the
		// API server refused is said, not turned into a failed exit. The
		// lock's own error is the hold's; err also holds the completion's
		// entry, which the audit log may have refused, said apart.
		fmt.Fprintf(out, "\nupgrade complete in %s; %s\n", model.TotalDuration(outcome.Elapsed), s.LockReleasedMessage(nil))
		if uerr := s.EndUnrecorded(); uerr != nil {
			fmt.Fprintf(out, "the completion is NOT recorded in the audit log: %v\n", uerr)
		}
		return nil
	case outcome.TimedOut:
		// The failed in-place step and its `node retry` were said once,
		// minutes before; the last lines steered to the lock alone.
		return withCode(ExitTimeout, fmt.Errorf("stopped following before the upgrade completed: --timeout %s passed (%s) at: %s\n%sthe upgrade may still be running in the cluster (`upgrade-console watch %s` follows it); %s",
			o.timeout, upgrade.ErrTrackTimeout, outcome.Progress.Summary, failedStepsText(failedSteps(lv.watcher.Latest())), lv.clusterFlags(p.Cluster), s.LockKeptMessage()))
	case outcome.Failed:
		return withCode(ExitUpgradeFail, fmt.Errorf("upgrade failed: %s\n%s", outcome.Reason, s.LockKeptMessage()))
	case errors.Is(err, context.Canceled):
		// The lock's words are the completion's: why a release failed,
		// and when the lock turns stale (it said neither, and then the
		// whole joined error after "context canceled").
		fmt.Fprintf(out, "\nstopped following at: %s\n%s%s; follow it with\n  upgrade-console watch %s\n",
			outcome.Progress.Summary, goesOn(lv.watcher.Latest()), s.LockReleasedMessage(nil), lv.clusterFlags(p.Cluster))
		if uerr := s.EndUnrecorded(); uerr != nil {
			fmt.Fprintf(out, "the stop is NOT recorded in the audit log: %v\n", uerr)
		}
		return withCode(ExitTimeout, errStoppedFollowing)
	}
	return err
}

// goesOn is what a console that stops following says of the upgrade: that
// it goes on in the cluster, or what holds it (a failed in-place step,
// which nothing retries on its own, with its next step).
func goesOn(latest *model.ClusterState) string {
	if held := failedStepsText(failedSteps(latest)); held != "" {
		return held
	}
	return "the upgrade goes on in the cluster; "
}

// errStoppedBeforeStart ends an apply interrupted before it wrote anything.
var errStoppedBeforeStart = withCode(ExitTimeout, errors.New("stopped before the upgrade started (interrupted): nothing was changed, no upgrade is running"))

// interruptedOr is err, or errStoppedBeforeStart when an interrupt cut the
// request short (a cancelled read says "context canceled").
func interruptedOr(sctx context.Context, err error) error {
	if sctx.Err() != nil {
		return errStoppedBeforeStart
	}
	return err
}

// stopAt is when --timeout ends the follow run under tctx; zero without
// one.
func (o *applyOptions) stopAt(tctx context.Context) time.Time {
	if dl, ok := tctx.Deadline(); ok && o.timeout != 0 {
		return dl
	}
	return time.Time{}
}

// followLimit is the context a follow runs under (--timeout, 0: none) and
// its limit in words.
func (o *applyOptions) followLimit(sctx context.Context) (context.Context, string, context.CancelFunc) {
	if o.timeout == 0 {
		return sctx, "no timeout", func() {}
	}
	tctx, cancel := context.WithTimeout(sctx, o.timeout)
	return tctx, "timeout " + o.timeout.String(), cancel
}

// refusedApply records an apply the checks or unforced field conflicts
// turned away (exit 3), as a recovery action's refusal is: the attempt is
// part of the incident's record, and a start the lock turns away is.
func refusedApply(ctx context.Context, lv *live, p *upgrade.Plan, dryRun bool, cause error) error {
	return errors.Join(withCode(ExitPreflight, cause), recordRefusedApply(ctx, lv, p, dryRun, cause))
}

// recordRefusedApply records an apply refused before any write. The
// refusal changes nothing: a log that cannot be opened holds the entry,
// printed at exit, as a dry run's.
func recordRefusedApply(ctx context.Context, lv *live, p *upgrade.Plan, dryRun bool, cause error) error {
	audit, _ := holdingAuditor(ctx, lv.auditTarget())
	return audit.Record(context.WithoutCancel(ctx), upgrade.RefusedApplyEntry(p, dryRun, cause))
}

// specUnchanged reports whether the plan's server-side dry run of the spec
// was accepted and changes nothing: applying it would start no upgrade.
func specUnchanged(p *upgrade.Plan) bool {
	t := p.Target
	if t == nil || t.SpecDryRun == nil || t.SpecDryRunErr != nil {
		return false
	}
	d := t.SpecDryRun
	return len(d.Objects) > 0 && len(d.Rejected()) == 0 && len(d.Conflicts) == 0 && d.Changes() == 0
}

// followUnapplied is apply --wait on a spec the Cluster already has and the
// cluster has not reached (a rerun after a cancelled job, say): it follows
// the upgrade under way by the same rule as after an apply, and exits by
// how it ends. It applied nothing, so it takes no upgrade lock.
func followUnapplied(sctx context.Context, out io.Writer, lv *live, p *upgrade.Plan, o *applyOptions) error {
	tctx, limit, cancel := o.followLimit(sctx)
	defer cancel()
	start := time.Now().UTC()
	fmt.Fprintf(out, "\nfollowing the upgrade to it from %s (--wait; times UTC; %s; this console applied nothing and takes no upgrade lock; ctrl-c stops following)…\n", start.Format(time.DateOnly), limit)
	var gen int64
	if p.Current != nil && p.Current.Cluster != nil {
		gen = p.Current.Cluster.GetGeneration()
	}
	pr := &followPrinter{out: out, day: start.Format(time.DateOnly)}
	pr.stopAt = o.stopAt(tctx)
	outcome, err := upgrade.Track(tctx, lv.watcher, nil, upgrade.TrackOptions{AppliedGeneration: gen,
		Confirm: upgrade.ConfirmCluster(lv.client, p.Namespace, p.Cluster), Progress: progressOptions(&o.display), OnPoll: pr.onPoll, OnProgress: pr.onProgress, OnHold: pr.onHold})
	watch := fmt.Sprintf("`upgrade-console watch %s` follows it", lv.clusterFlags(p.Cluster))
	switch {
	case outcome.Complete:
		fmt.Fprintf(out, "\nupgrade complete (followed for %s)\n", model.TotalDuration(outcome.Elapsed))
		if note := keptLockNote(sctx, lv, p.Cluster); note != "" {
			fmt.Fprintln(out, note)
		}
		return nil
	case outcome.TimedOut:
		return withCode(ExitTimeout, fmt.Errorf("stopped following before the upgrade completed: --timeout %s passed (%s) at: %s\n%sthe upgrade may still be running in the cluster (%s)",
			o.timeout, upgrade.ErrTrackTimeout, outcome.Progress.Summary, failedStepsText(failedSteps(lv.watcher.Latest())), watch))
	case outcome.Failed:
		// The reason says the next step as the failure stands; the
		// plan's, made before the follow, spoke of the cluster then.
		return withCode(ExitUpgradeFail, fmt.Errorf("upgrade failed: %s\n%s", outcome.Reason, watch))
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(out, "\nstopped following at: %s\n%s%s\n", outcome.Progress.Summary, goesOn(lv.watcher.Latest()), watch)
		return withCode(ExitTimeout, errStoppedFollowing)
	}
	return err
}

// followPrinter is what a headless follow prints: each new progress
// summary and stall, and the link and the lock when they change, so a
// silent follow never hides a lost API server or a lock no longer renewed.
type followPrinter struct {
	out io.Writer
	// lock, when set, is the lock's last renewal error and whether it was
	// lost; nil when this console holds no lock.
	lock func() (renewErr error, lost bool)
	// renewNow, when set, renews the lock at once (Session.RenewLockNow):
	// asked when the connection comes back after a renewal failed. An
	// outage longer than the Lease leaves it expired, and the next tick is
	// up to 20 s away: meanwhile every other console calls it stale, and
	// `lock clear --all` takes it for a leftover.
	renewNow func()
	// self is this console's holder identity: a watched Lease that no
	// longer names it (cleared with --force, taken) asks renewNow, which
	// finds the lock lost at once rather than at the next tick, 20 s away.
	self          string
	leaseGoneSaid bool
	told          map[string]bool // stall sentences already printed
	lastConn      model.ConnectionState
	lastRenew     string
	// day is the date of the lines printed last: the lines say the time
	// alone, and an upgrade followed past midnight says the new date.
	day string
	// stopAt is when --timeout ends the follow; zero without one.
	stopAt time.Time
	// phase is the phase under way said last, phaseSaid its line, for
	// endOfPhase; empty once its end is said.
	phase     model.Phase
	phaseSaid string
}

// phaseLine is the phase of pr under way and its line, without the
// summary's stall counts; "" when none is (done, failed, paused).
func phaseLine(pr model.Progress) (model.Phase, string) {
	for _, ph := range pr.Phases {
		if ph.Phase == pr.Current {
			return ph.Phase, string(ph.Phase) + ": " + ph.Detail
		}
	}
	return "", ""
}

// endOfPhase is the line that says how the phase the follow said last
// ended, once another phase is under way or the completion rule holds, when
// it is not the line said (then ""). The follow looks once a second and
// says a summary that changed: a phase that ended between two looks went
// from "workers: 2/4 nodes" straight to "every completion milestone met",
// where watch --plain says "phase workers: done: 4/4 nodes …" first, and a
// CI log showed no end state.
func (f *followPrinter) endOfPhase(pr model.Progress) string {
	cur, line := phaseLine(pr)
	if cur == "" && pr.Current != model.PhaseDone {
		return "" // failed or paused: the phase has not ended
	}
	last, said := f.phase, f.phaseSaid
	f.phase, f.phaseSaid = cur, line
	if last == "" || last == cur {
		return ""
	}
	for _, ph := range pr.Phases {
		if end := string(ph.Phase) + ": " + ph.Detail; ph.Phase == last && ph.Status == model.PhaseOK && ph.Detail != "" && end != said {
			return end
		}
	}
	return ""
}

// stamp is the time a line is printed with, after a line that says the
// date when it is a new day.
func (f *followPrinter) stamp() string {
	now := time.Now().UTC()
	if d := now.Format(time.DateOnly); d != f.day {
		fmt.Fprintf(f.out, "  %s\n", d)
		f.day = d
	}
	return now.Format("15:04:05")
}

func (f *followPrinter) onPoll(st *model.ClusterState) {
	at := f.stamp()
	back := false
	if st != nil && st.Connection != "" && st.Connection != f.lastConn {
		if f.lastConn != "" || st.Connection != model.Live {
			fmt.Fprintf(f.out, "  %s  %s\n", at, connectionLine(st))
		}
		back = f.lastConn != "" && st.Connection == model.Live
		f.lastConn = st.Connection
	}
	if f.lock == nil {
		return
	}
	if back && f.renewNow != nil {
		if rerr, lost := f.lock(); rerr != nil && !lost {
			f.renewNow()
		}
	}
	gone := st.LockNotHeldBy(f.self)
	if gone && !f.leaseGoneSaid && f.renewNow != nil {
		if _, lost := f.lock(); !lost {
			f.renewNow()
		}
	}
	f.leaseGoneSaid = gone
	renew := ""
	if rerr, lost := f.lock(); lost {
		renew = "the upgrade lock was cleared or taken by someone else"
	} else if aw := (*upgrade.AuditWriteError)(nil); errors.As(rerr, &aw) {
		// The write that met the refusal may have landed (it is recorded
		// late); the next ones are not made until the log takes entries.
		renew = "the audit log refuses entries, so the upgrade lock is not renewed until it takes them again: " + aw.Error()
	} else if rerr != nil {
		renew = "renewing the upgrade lock failed: " + rerr.Error()
	}
	if renew != f.lastRenew {
		if renew == "" {
			fmt.Fprintf(f.out, "  %s  the upgrade lock is renewed again\n", at)
		} else {
			fmt.Fprintf(f.out, "  %s  ! %s\n", at, renew)
		}
		f.lastRenew = renew
	}
}

func (f *followPrinter) onProgress(pr model.Progress) {
	at := f.stamp()
	if line := f.endOfPhase(pr); line != "" {
		fmt.Fprintf(f.out, "  %s  %s\n", at, line)
	}
	fmt.Fprintf(f.out, "  %s  %s\n", at, pr.Summary)
	if f.told == nil {
		f.told = map[string]bool{}
	}
	for _, st := range pr.Stalls {
		if !f.told[st.Sentence] {
			f.told[st.Sentence] = true
			fmt.Fprintf(f.out, "  %s  ! %s\n", at, st.Sentence)
			if st.Resume != "" {
				fmt.Fprintf(f.out, "  %s    next: %s\n", at, st.Resume)
			}
		}
	}
}

// onHold says again a failure waited out before it fails the upgrade, and,
// when --timeout ends the follow first, that this console stops before
// then: "fails at 07:06 UTC" read as a verdict the command would give.
func (f *followPrinter) onHold(line string, h model.Hold) {
	if !f.stopAt.IsZero() && f.stopAt.Before(h.Until) {
		line += fmt.Sprintf("; this console stops following at %s UTC (--timeout), before then", f.stopAt.UTC().Format("15:04:05"))
	}
	fmt.Fprintf(f.out, "  %s  ! %s\n", f.stamp(), line)
}

// dryRunEntry is the audit entry of a dry run of the apply the operator
// asked for (apply --dry-run, d on the plan screen).
func dryRunEntry(p *upgrade.Plan, spec *upgrade.SpecFile, dry *upgrade.DryRunResult, forced bool) upgrade.AuditEntry {
	return upgrade.AuditEntry{Cluster: p.Cluster, Action: "apply", Result: upgrade.AuditDryRun, DryRun: true,
		Object: "Cluster " + p.Namespace + "/" + p.Cluster, Forced: forced, Skipped: p.Skipped,
		Message: fmt.Sprintf("spec %s: %d change(s), %d conflict(s)", upgrade.SpecPathForLog(spec.Path), dry.Changes(), len(dry.Conflicts))}
}

// errStoppedFollowing ends an apply interrupted once the spec was applied:
// exit 5 as for --timeout, the README's "stopped before the upgrade
// completed", whose words it repeats.
var errStoppedFollowing = errors.New("stopped following before the upgrade completed (interrupted): the upgrade goes on in the cluster")

// forcedNote marks an object whose fields the apply took over from
// another manager.
func forcedNote(forced bool) string {
	if forced {
		return ", conflicts forced"
	}
	return ""
}

// confirm asks the operator to type the cluster name, as dangerous actions in
// k9s do: a "y" typed by habit does not start an upgrade.
func confirm(ctx context.Context, in io.Reader, out io.Writer, cluster string) error {
	return confirmName(ctx, in, out, fmt.Sprintf("\nthis applies the spec to cluster %s and starts the upgrade.\ntype the cluster name to confirm: ", cluster), cluster)
}

// confirmName prints prompt and reads the name the operator types. Without a
// terminal to type on, the command line is wrong (exit 2): a run that cannot
// be confirmed needs --yes. Ctrl-c at the prompt ends it at once when ctx is
// interruptible (the signal cancels it; otherwise the signal kills the
// process, unsaid and unrecorded): the read is not tied to the signal, so it
// runs aside and is abandoned (the process exits soon after).
func confirmName(ctx context.Context, in io.Reader, out io.Writer, prompt, want string) error {
	f, ok := in.(*os.File)
	if !ok || !term.IsTerminal(f.Fd()) {
		return usageError{&model.InputError{Source: "confirmation", Problem: "not confirmed: there is no terminal to type the name on",
			Fix: "pass --yes to go on without the typed confirmation, or run it in a terminal"}}
	}
	if !isTerminal(out) {
		// Output redirected to a log (apply > upgrade.log): the prompt
		// went into the file, and the command waited for an answer to a
		// question the operator never saw. It is asked on the terminal the
		// answer is typed on; the log keeps the question.
		fmt.Fprintln(out, strings.TrimSpace(prompt)+" (asked on the terminal)")
		out = terminalOf(f)
	}
	fmt.Fprint(out, prompt)
	type answer struct {
		line string
		err  error
	}
	read := make(chan answer, 1)
	go func() {
		line, err := bufio.NewReader(in).ReadString('\n')
		read <- answer{line, err}
	}()
	var a answer
	select {
	case <-ctx.Done():
		fmt.Fprintln(out)
		return &model.InputError{Source: "confirmation", Problem: "interrupted at the prompt: nothing was changed"}
	case a = <-read:
	}
	if a.err != nil && a.line == "" {
		return &model.InputError{Source: "confirmation", Problem: "no answer: nothing was changed", Fix: "type " + want + ", or pass --yes"}
	}
	if typed := strings.TrimSpace(a.line); typed != want {
		return &model.InputError{Source: "confirmation", Problem: fmt.Sprintf("%q is not %q: nothing was changed", typed, want),
			Fix: "run it again and type " + want + " exactly, or pass --yes in a script"}
	}
	return nil
}

// terminalOf writes to the terminal in reads from: in itself, where the
// terminal was opened read-write (as shells and ptys open it), else the
// process's controlling terminal.
func terminalOf(in *os.File) io.Writer { return ttyWriter{in} }

type ttyWriter struct{ in *os.File }

func (w ttyWriter) Write(p []byte) (int, error) {
	n, err := w.in.Write(p)
	if err == nil {
		return n, nil
	}
	tty, terr := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if terr != nil {
		return n, err
	}
	defer tty.Close()
	return tty.Write(p)
}

// runApplyTUI is apply --tui: the plan screen, from which the operator
// confirms; the exit code follows how the upgrade ended, as for watch.
func runApplyTUI(ctx context.Context, out io.Writer, lv *live, o *applyOptions) error {
	if !isTerminal(out) {
		return usageError{errors.New("--tui needs a terminal; without one use the plain apply")}
	}
	theme, err := parseTheme(o.display.theme)
	if err != nil {
		return err
	}
	o.display.readOnly = o.readOnly
	o.display.nodeLabel = o.live.nodeLabel
	o.display.forceConflicts = o.forceConflicts
	outcome, err := runPlanTUI(ctx, out, lv, &o.live, &o.display, theme, false)
	switch {
	case err != nil:
		return err
	case outcome == report.Failed:
		return withCode(ExitUpgradeFail, errors.New("the upgrade failed (see the dashboard); the upgrade lock is kept"))
	}
	return nil
}

// lockNote is lockAfterStart after sep, or nothing when the start's error
// says it already (a release that failed).
func lockNote(ctx context.Context, lv *live, cluster string, startErr error, sep string) string {
	if errors.As(startErr, new(*upgrade.LockNotReleasedError)) {
		return ""
	}
	return sep + lockAfterStart(ctx, lv, cluster, startErr)
}

// lockAfterStart says what a start that applied nothing left of the lock,
// as the cluster has it: the start released it, unless the release itself
// failed (an API server that stopped answering), which the operator must
// hear of, since the Lease blocks the next upgrade until it turns stale.
// startErr is why the start stopped: an audit log that refused an entry
// refuses the release too (no write goes unrecorded), which is said.
func lockAfterStart(ctx context.Context, lv *live, cluster string, startErr error) string {
	if nr := new(upgrade.LockNotReleasedError); errors.As(startErr, &nr) {
		return nr.Message // from the release that failed
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	st, err := upgrade.ReadLock(rctx, lv.client.Kube, lv.client.Sys(), cluster)
	switch {
	case err != nil:
		return fmt.Sprintf("what became of the upgrade lock could not be read (%v): `upgrade-console lock status %s` shows it", err, lv.clusterFlags(cluster))
	case st != nil && st.Held() && st.HolderIdentity == lv.holder.String():
		why := ""
		var aw *upgrade.AuditWriteError
		if errors.As(startErr, &aw) {
			why = " (its release is a write too, and the console makes none the audit log does not take: free the log's disk, then clear it)"
		}
		return fmt.Sprintf("the upgrade lock Lease %s/%s could NOT be released (%s)%s: it blocks further upgrades until it turns stale; `upgrade-console lock clear lease %s` clears it then",
			lv.client.Sys(), upgrade.LockName(cluster), st.Describe(time.Now()), why, lv.clusterFlags(cluster))
	}
	// Released, or never taken (interrupted before the lock): "released"
	// told of a lock the console never had.
	return "this console holds no upgrade lock"
}

// keptLockNote is what a follow that took no lock says, once the upgrade
// completed, of a lock kept for it: the console that applied the spec kept
// it when the upgrade failed or it stopped following, and it blocks the next
// upgrade until someone clears it; nothing else said so after the rerun
// went green. Empty when no lock is kept.
func keptLockNote(ctx context.Context, lv *live, cluster string) string {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	st, err := upgrade.ReadLock(rctx, lv.client.Kube, lv.client.Sys(), cluster)
	if err != nil || st == nil || !st.Held() || st.Kept == "" {
		return ""
	}
	return fmt.Sprintf("the upgrade lock is still kept (%s): it blocks the next upgrade; this run applied nothing and holds no lock, so it leaves it: once the cluster is checked, `upgrade-console lock clear lease %s` clears it (recorded)",
		st.Describe(time.Now()), lv.clusterFlags(cluster))
}

// connectionLine says the link to the API server as the plain watch does: a
// lost one with the server and the error that lost it, not a bare
// "reconnecting".
func connectionLine(st *model.ClusterState) string {
	if st.Connection != model.Live && st.ConnectionErr != "" {
		return fmt.Sprintf("connection: %s: %s", st.Connection, st.ConnectionErr)
	}
	return "connection: " + string(st.Connection)
}

// sayDetachUnrecorded says that the end of a session the console leaves
// running is not in the audit log, when the log refused its entry; the
// lock's own fate is in LockReleasedMessage.
func sayDetachUnrecorded(out io.Writer, derr error) {
	var aw *upgrade.AuditWriteError
	if errors.As(derr, &aw) {
		fmt.Fprintf(out, "this run's end is NOT recorded in the audit log: %v\n", aw)
	}
}

// startRefused reports whether a start was refused before any write: by the
// checks run again under the lock, another console's lock, field conflicts
// or a dry run that changed since the plan. Exit 3, as a plan the checks
// block.
func startRefused(err error) bool {
	var pe *upgrade.PreflightError
	var held *upgrade.LockHeldError
	var ce *upgrade.ConflictsError
	var changed *upgrade.DryRunChangedError
	return errors.As(err, &pe) || errors.As(err, &held) || errors.As(err, &ce) || errors.As(err, &changed)
}
