package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/upgrade-console/upgrade-console/demo"
	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/report"
	"github.com/upgrade-console/upgrade-console/themes"
	"github.com/upgrade-console/upgrade-console/tui"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// runPlanTUI opens the plan screen for a connected cluster; the operator
// starts the upgrade from it, then the dashboard follows. The watcher and the
// upgrade driver (with its lock renew loop) belong to this command; the UI
// only gets commands that call them.
//
// Quit on a plan the checks block, with no start, it exits 3, except in the
// demo, whose scenarios block on purpose (demoWorld).
func runPlanTUI(ctx context.Context, out io.Writer, lv *live, l *liveOptions, display *watchOptions, theme themes.Name, demoWorld bool) (report.Outcome, error) {
	// Once the UI has given the terminal back, its own signal handler is
	// gone: a ctrl-c while a start under way finishes must not kill the
	// process between two writes. It cancels the start instead, which stops
	// before the first write or runs the rest to its end.
	ctx, stop := interruptible(ctx)
	defer stop()
	// The screen's work (the start, the follow) runs under sctx: the
	// follow is stopped once the screen is gone, and waited for.
	sctx, stopScreen := context.WithCancel(ctx)
	defer stopScreen()
	app, screen, err := newPlanApp(sctx, lv, l, display, theme, demoWorld)
	if err != nil {
		return report.Running, err
	}
	outcome, err := tui.RunApp(ctx, app)
	if demoWorld {
		// The demo's scenarios are there to be left half done: a recovery
		// confirmation it ended at is said, not an exit code.
		err = sayNotConfirmed(out, err)
	}
	// Quit while the spec was being applied: the writes run to their end
	// first, never cut in the middle by the process exiting.
	if screen.StartUnderWay() {
		fmt.Fprintln(out, "finishing the start under way (the lock, the snapshot, the spec's documents): its writes are never cut in the middle…")
	}
	screen.WaitStart()
	quitAtConfirmation := screen.Confirming()
	err = errors.Join(err, screen.RecordQuitAtConfirmation(context.WithoutCancel(ctx)))
	if quitAtConfirmation && err == nil && !demoWorld {
		// As apply without --tui: a typed confirmation not given is exit
		// 1, not the 0 of a plan looked at and left.
		err = errors.New("confirmation: the console quit at the typed confirmation: nothing was changed (recorded as not-confirmed)")
	}
	s := screen.Session()
	if s != nil && s.ClusterGeneration == 0 {
		// The apply failed part way: the lock stays, as apply without
		// --tui leaves it, so that nobody starts on a spec half applied.
		fmt.Fprintf(out, "%s; %s\n", s.AppliedInPart(), s.LockKeptMessage())
		if wb := s.WayBack(); wb != "" {
			fmt.Fprintln(out, wb)
		}
		if err == nil && !demoWorld {
			// 4, as apply without --tui: it exited 0 here, the
			// dashboard never pushed and the outcome still running.
			err = withCode(ExitUpgradeFail, errors.New("the start failed part way (above): the upgrade lock is kept"))
		}
		return outcome, err
	}
	var detachErr error
	if s != nil {
		// The follow first: stopped, it takes a last look, and a failure
		// the dashboard showed as the operator quit (q as an etcd
		// rollback's result appeared) ends the session as failed, the
		// lock kept. Then, quitting while the upgrade rolls, the console
		// stops following, and with nobody to renew it the lock is
		// released (a no-op when the follow already ended the session).
		stopScreen()
		screen.WaitFollow(10 * time.Second)
		detachErr = s.Detach(context.WithoutCancel(ctx))
	}
	if err == nil || s != nil {
		if demoWorld {
			sayDemoEnd(out, demoSessionEnd(s, lv.watcher.Latest()))
		} else {
			sayPlanTUIEnd(out, s, display.readOnly, lv.watcher.Latest())
		}
	}
	if serr := screen.StartErr(); s == nil && serr != nil && !display.readOnly {
		// A start that applied nothing may still have left its lock (a
		// release the API server did not answer): said from the cluster.
		fmt.Fprintf(out, "the start failed: %s\n%s\n", strings.SplitN(serr.Error(), "\n", 2)[0], lockAfterStart(ctx, lv, l.cluster, serr))
		switch {
		case err != nil || demoWorld:
		case errors.Is(serr, context.Canceled):
			err = withCode(ExitTimeout, errors.New("stopped before the upgrade started (interrupted): the cluster's spec is unchanged, no upgrade is running"))
		default:
			// As `apply` exits on the same failure: quit with 0, the run
			// ended as 74 once the log held the refused start's entries,
			// "the run did its work", though nothing was applied (D10).
			code := exitCode(serr)
			if startRefused(serr) {
				code = ExitPreflight
			}
			err = withCode(code, errors.New("the upgrade did not start (the start failed, above): no document of the spec was applied"))
		}
	}
	if err == nil && !demoWorld {
		err = unstartedExit(s, screen.Plan())
	}
	if err == nil && !demoWorld && s != nil && s.Detached() {
		// As apply --wait interrupted: exit 5, the upgrade goes on, whatever
		// became of the lock (said above, and in detachErr).
		return outcome, withCode(ExitTimeout, errors.Join(errors.New("stopped following before the upgrade completed (quit): the upgrade goes on in the cluster"), detachErr))
	}
	return outcome, errors.Join(err, detachErr)
}

// sayNotConfirmed writes a recovery confirmation that the program ended at
// to out, and returns err without it.
func sayNotConfirmed(out io.Writer, err error) error {
	var nc *tui.RecoveryNotConfirmedError
	if !errors.As(err, &nc) {
		return err
	}
	fmt.Fprintln(out, nc.Error())
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var rest []error
		for _, e := range j.Unwrap() {
			rest = append(rest, sayNotConfirmed(io.Discard, e))
		}
		return errors.Join(rest...)
	}
	return nil
}

// unstartedExit is the exit of a console quit before any start on a plan
// the checks block: exit 3, as `apply` without --tui and `plan` say it, not
// 0 as if the upgrade could have started.
func unstartedExit(s *upgrade.Session, plan *upgrade.Plan) error {
	if s != nil || plan == nil || !plan.Blocked() {
		return nil
	}
	return blockedExit(plan)
}

// sayPlanTUIEnd says, on the normal screen once the UI is gone, what the
// console left in the cluster: the dashboard took the screen at once, and a
// quit (ctrl-c, say) as the operator confirmed must not leave them guessing
// whether the cluster was touched, nor whether the upgrade is done.
//
// latest is the cluster as last seen: an upgrade the console stops following
// while a step of it has failed does not simply "go on" (nothing in EKS-A
// retries a failed in-place step), and the operator leaving is told what
// holds it and what gets it past.
func sayPlanTUIEnd(out io.Writer, s *upgrade.Session, readOnly bool, latest *model.ClusterState) {
	if s == nil {
		if !readOnly {
			fmt.Fprintln(out, "no upgrade was started: no document of the spec was applied")
		}
		return
	}
	fmt.Fprintf(out, "snapshot saved: %s\n", s.Snapshot.Where())
	recorded := "recorded in the audit log"
	if err := s.EndUnrecorded(); err != nil {
		recorded = "NOT recorded in the audit log: " + err.Error()
	}
	endedAs, why := s.Failure()
	switch {
	case s.CompletedAfterFailure():
		fmt.Fprintf(out, "the upgrade completed after the failure the console had declared (%s)\n", recorded)
	case s.Completed():
		fmt.Fprintf(out, "the upgrade completed (%s)\n", recorded)
	case endedAs != "":
		// The lock line below said the lock is kept, and nothing of why
		// nor of what holds the cluster (EKS-A paused by a rollback).
		verb := "failed"
		if endedAs == "timeout" {
			verb = "timed out"
		}
		fmt.Fprintf(out, "the upgrade %s (%s): %s\n", verb, recorded, model.Printable(why))
		if st := model.SpecStatusOf(latest, time.Now()); st.NotReached() && st.Next != "" {
			fmt.Fprintf(out, "  next: %s\n", model.Printable(st.Next))
		}
	case s.Detached():
		failed := failedSteps(latest)
		if len(failed) == 0 {
			fmt.Fprintf(out, "the console stopped following before the upgrade completed: the spec is applied and the upgrade goes on in the cluster; follow it with\n  upgrade-console watch %s\n", s.ClusterFlags())
			break
		}
		fmt.Fprintf(out, "the console stopped following before the upgrade completed: the spec is applied, and %s", failedStepsText(failed))
		fmt.Fprintf(out, "follow it with\n  upgrade-console watch %s\n", s.ClusterFlags())
	}
	switch _, _, lost := s.Lock(); {
	case lost && s.WasKept():
		// Cleared on purpose once the cluster was checked, often from
		// this console's own R menu: not something taken away.
		fmt.Fprintln(out, "the upgrade lock this console kept after the failure was cleared (`lock clear lease`, from the R menu or a shell): nothing blocks a new upgrade now")
	case lost:
		fmt.Fprintln(out, "the upgrade lock was taken away while the console followed (cleared by an operator?)")
	case s.LockReleased():
		fmt.Fprintln(out, "the upgrade lock is released")
	default:
		fmt.Fprintln(out, s.LockKeptMessage())
	}
}

// sayDemoEnd is sayPlanTUIEnd for the demo: its world stops with the
// console, so nothing goes on in it, and no command reaches it any more
// (they were printed, and failed on a control plane gone, a kubeconfig
// removed with its directory).
func sayDemoEnd(out io.Writer, what string) {
	fmt.Fprintf(out, "%s; the demo's world (its control plane and simulated controllers) stops with the console, so nothing goes on in it and no command reaches it now (`upgrade-console demo --serve --dir DIR` keeps a world running)\n", what)
}

// demoSessionEnd is how the upgrade the demo's plan screen started stood
// when the console quit ("no upgrade was started" when none was).
func demoSessionEnd(s *upgrade.Session, latest *model.ClusterState) string {
	if s == nil {
		return "no upgrade was started"
	}
	switch endedAs, why := s.Failure(); {
	case s.Completed():
		return "the upgrade completed"
	case endedAs == "failure":
		// Its first clause: the rest names commands (`lock clear
		// paused …` resumes it) that reach nothing once the world stops.
		what, _, _ := strings.Cut(why, ": ")
		return "the upgrade failed (" + model.Printable(what) + ")"
	}
	return "the upgrade was under way" + heldUpBy(latest)
}

// demoEndOf is how the upgrade stood when the dashboard of a demo it did
// not start (--auto-start) quit. A Cluster deleted since is said as the
// dashboard says it outside the demo (dashboardGone): "the upgrade
// completed", or "the console quit before it saw the cluster", was the
// deleted Cluster's, or none. A failure it saw stands.
func demoEndOf(outcome report.Outcome, latest *model.ClusterState) string {
	switch {
	case outcome == report.Failed:
		return "the upgrade failed"
	case report.ClusterGone(latest):
		return "the console quit" + report.GoneWords(latest)
	case outcome == report.Done:
		return "the upgrade completed"
	case latest == nil || latest.Cluster == nil:
		return "the console quit before it saw the cluster"
	}
	if _, complete := model.Completion(latest.Cluster); complete {
		return "no upgrade was under way"
	}
	return "the upgrade was under way" + heldUpBy(latest)
}

// newPlanApp builds the App with the plan screen first.
func newPlanApp(ctx context.Context, lv *live, l *liveOptions, display *watchOptions, theme themes.Name, demoWorld bool) (*tui.App, *tui.PlanScreen, error) {
	plan, err := lv.plan(ctx, l)
	if err != nil {
		return nil, nil, err
	}
	opts := tui.Options{
		ClusterName:       l.cluster,
		Context:           lv.context,
		Source:            lv.watcher,
		Pacer:             lv.pacer,
		Theme:             theme,
		ColorOff:          themes.ColorOff(os.Getenv, true),
		ReadOnly:          display.readOnly,
		StallAfter:        display.stallAfter,
		EtcdRollbackAfter: display.rollbackThreshold,
		Confirm:           upgrade.ConfirmCluster(lv.client, lv.namespace, l.cluster),
		ForceConflicts:    display.forceConflicts,
		SelfHolder:        lv.holder.String(),
		Demo:              demoWorld,
		NoSuspend:         suspendUnavailable(),
		EventHistory:      lv.watcher.EventHistory,
		AuditHeld:         opened.held,
	}
	var actions tui.PlanActions
	actions.Recheck = lv.planner.Rechecked
	applier := &upgrade.Applier{Client: lv.client, Cluster: l.cluster}
	actions.DryRun = func(ctx context.Context) (*upgrade.DryRunResult, error) { return applier.DryRun(ctx, lv.spec) }
	if !display.readOnly {
		// The audit log is opened before the screen, so an unwritable one
		// stops the console before the operator can start anything.
		audit, err := openAuditor(lv.auditTarget())
		if err != nil {
			return nil, nil, err
		}
		opts.Background = authenticateCmd(audit)
		driver := &upgrade.Driver{Client: lv.client, Audit: audit, Holder: lv.holder, Planner: lv.planner, Conn: lv.conn, StopsWithConsole: demoWorld}
		opts.Actions = planRecoveryActions(lv, l, audit, display)
		actions.Start = driver.Start
		actions.NotConfirmed = func(ctx context.Context, p *upgrade.Plan, why string) error {
			return audit.Record(ctx, upgrade.AuditEntry{Cluster: p.Cluster, Action: "apply",
				Object: "Cluster " + p.Namespace + "/" + p.Cluster, Result: upgrade.AuditNotConfirmed,
				Message: "not applied, nothing changed: " + why})
		}
		actions.RecordDryRun = func(ctx context.Context, p *upgrade.Plan, dry *upgrade.DryRunResult) error {
			return audit.Record(ctx, dryRunEntry(p, lv.spec, dry, false))
		}
		actions.Track = func(ctx context.Context, s *upgrade.Session) (upgrade.Outcome, error) {
			return s.Track(ctx, lv.watcher, upgrade.TrackOptions{Progress: progressOptions(display)})
		}
		actions.FollowAfterFailure = func(ctx context.Context, s *upgrade.Session) (upgrade.Outcome, error) {
			return s.FollowAfterFailure(ctx, lv.watcher, upgrade.TrackOptions{Progress: progressOptions(display)})
		}
	}
	screen := tui.NewPlanScreen(ctx, opts, plan, actions)
	return tui.NewApp(opts, screen), screen, nil
}

func progressOptions(display *watchOptions) model.ProgressOptions {
	return model.ProgressOptions{StallAfter: display.stallAfter}
}

// planDemo opens the demo world on the plan screen of its cluster and its
// target spec: the operator starts the upgrade from the console, as on a
// real cluster.
func planDemo(ctx context.Context, out io.Writer, w *demo.World, display *watchOptions, theme themes.Name) error {
	kubeContext := "demo"
	if kc, err := clientcmd.LoadFromFile(w.KubeconfigPath); err == nil && kc.CurrentContext != "" {
		kubeContext = kc.CurrentContext
	}
	l := &liveOptions{cluster: w.ClusterName, file: w.TargetSpecPath, nodeLabel: display.nodeLabel, syncTimeout: time.Minute}
	lv, err := connectConfig(ctx, w.Config, kubeContext, demoConn(w), w.ClusterNamespace, l)
	if err != nil {
		return err
	}
	defer lv.close()
	_, err = runPlanTUI(ctx, out, lv, l, display, theme, true)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// failedSteps are the failed stalls of the cluster as last seen (none when
// it was not seen).
// heldUpBy is what the demo's farewell adds to "the upgrade was under
// way" when a failed step held it: a node step failing for a minute read
// as an upgrade going fine.
func heldUpBy(latest *model.ClusterState) string {
	failed := failedSteps(latest)
	if len(failed) == 0 {
		return ""
	}
	s := ", held up by a failed step that nothing retries on its own (" + model.Printable(failed[0].Sentence)
	if len(failed) > 1 {
		s += fmt.Sprintf(", and %d more", len(failed)-1)
	}
	return s + ")"
}

// failedStepsText says the failed steps that hold an upgrade, a line each
// with its next step, after "the upgrade is held up by …"; "" when none.
func failedStepsText(failed []model.Stall) string {
	if len(failed) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("the upgrade is held up by a failed step that nothing retries on its own:\n")
	for _, st := range failed {
		fmt.Fprintf(&b, "  ! %s\n", model.Printable(st.Sentence))
		if st.Resume != "" {
			fmt.Fprintf(&b, "    next: %s\n", model.Printable(st.Resume))
		}
	}
	return b.String()
}

func failedSteps(latest *model.ClusterState) []model.Stall {
	if latest == nil || latest.Cluster == nil {
		return nil
	}
	return model.DeriveProgress(latest, model.ProgressOptions{}, time.Now()).FailedStalls()
}
