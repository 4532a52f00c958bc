package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/upgrade-console/upgrade-console/upgrade/recovery"
)

type nodeRetryOptions struct {
	recoveryOptions
	tail int
}

func newNodeCmd(g *globalOptions) *cobra.Command {
	return groupCmd("node", "Recovery actions for in-place node upgrades (NodeUpgrade)", newNodeRetryCmd(g))
}

func newNodeRetryCmd(g *globalOptions) *cobra.Command {
	o := &nodeRetryOptions{}
	cmd := &cobra.Command{
		Use:   "retry NODE --cluster NAME",
		Short: "Show why a node's in-place upgrade failed and retry it",
		Long: `Show why a node's in-place upgrade failed: the failing step of its NodeUpgrade, the
state of the container that runs the step in the upgrader pod <node>-node-upgrader, the
last lines of that container's log and the latest events. Then offer EKS-A's documented
retry: delete the upgrader pod, so that the NodeUpgrade controller recreates it and runs
the steps again.

Fix the cause first: the recreated pod runs every step again from the first.

A node whose upgrade is where a retry brings it has nothing to retry, and that is
success: its NodeUpgrade completed, or runs its steps with none failed (as after a retry
that worked), or is gone with the node on the Kubernetes version its machine group is to
run. Rerunning the command after a retry is safe. A node that is not upgraded in place
at all (its machine group's upgradeRolloutStrategy is not InPlace, or it is no Machine's),
or that no NodeUpgrade upgrades while it still runs an older version, is refused.

Exit codes: 0 done, or nothing to retry (recorded in the audit log as already-done),
1 bad input (no such node, a node of another cluster) or not confirmed, 2 wrong command
line (no terminal for the typed confirmation and no --yes), 3 refused or the dry run
failed, 4 the delete failed, 5 the pod was not recreated in time, or the command was
interrupted (run it again to continue), 74 done, but the audit log (a full disk) did not take all of its record: the entries are printed to append to it.`,
		Example: `  upgrade-console node retry mgmt-cp-7x2kq --cluster mgmt --dry-run
  upgrade-console node retry mgmt-cp-7x2kq --cluster mgmt --yes`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			survivesClosedOutput()
			ctx, stop := interruptible(cmdContext(cmd))
			defer stop()
			return signalled(ctx, runNodeRetry(ctx, cmd.InOrStdin(), cmd.OutOrStdout(), g, o, args[0]))
		},
	}
	f := cmd.Flags()
	o.addFlags(f)
	f.IntVar(&o.tail, "tail", recovery.DefaultLogLines, "how many log lines of the failing container to show")
	return cmd
}

func runNodeRetry(ctx context.Context, in io.Reader, out io.Writer, g *globalOptions, o *nodeRetryOptions, node string) error {
	if err := o.validate(); err != nil {
		return err
	}
	if err := checkNodeName(node); err != nil {
		return err
	}
	if o.tail < 1 {
		return badFlag("--tail", fmt.Errorf("must be at least 1, got %d", o.tail), fmt.Sprintf("give how many log lines to show, e.g. %d", recovery.DefaultLogLines))
	}
	env, at, err := recoveryEnv(g, o.cluster)
	if err != nil {
		return err
	}
	p, f, err := recovery.PlanNodeRetry(ctx, env, node, recovery.NodeRetryOptions{Tail: o.tail})
	if f != nil {
		writeNodeFailure(out, f)
	}
	if err != nil {
		var r *recovery.RefusedError
		if errors.As(err, &r) {
			return refusal(ctx, out, &o.recoveryOptions, at, err)
		}
		return unreachable(ctx, env, err)
	}
	if len(p.Steps) == 0 {
		return nothingToRetry(ctx, out, p, &o.recoveryOptions, at)
	}
	return runRecoveryPlan(ctx, in, out, p, &o.recoveryOptions, at)
}

// nothingToRetry ends a retry whose node is already where a retry brings it:
// a success, recorded as already-done like a recovery step found in place,
// so that a rerun after a retry that worked reads as one in the audit log.
func nothingToRetry(ctx context.Context, out io.Writer, p *recovery.Plan, o *recoveryOptions, at auditTarget) error {
	fmt.Fprintln(out, p.Title)
	for _, n := range p.Notes {
		fmt.Fprintf(out, "  %s\n", n)
	}
	if o.readOnly {
		return nil
	}
	// Nothing was changed: a log that refuses the entry (or to open) is
	// said, the entry printed at exit, and the exit is 74 (endRun), not
	// the 1 of a run refused its start.
	audit, _ := holdingAuditor(ctx, at)
	if err := recovery.RecordNothingToRetry(ctx, audit, p, o.dryRun); err != nil {
		fmt.Fprintf(out, "\nnothing was changed; this is NOT recorded in the audit log: %v\n", err)
		return nil
	}
	fmt.Fprintf(out, "\naudit log: %s\n", audit.Path())
	return nil
}

func writeNodeFailure(out io.Writer, f *recovery.NodeFailure) {
	switch {
	case f.NodeUpgrade != "":
		fmt.Fprintf(out, "Node %s (Machine %s), NodeUpgrade %s\n", f.Node, f.Machine, f.NodeUpgrade)
	case f.Machine != "":
		fmt.Fprintf(out, "Node %s (Machine %s), no NodeUpgrade\n", f.Node, f.Machine)
	default:
		fmt.Fprintf(out, "Node %s, no Machine, no NodeUpgrade\n", f.Node)
	}
	if f.KubeletVersion != "" || f.TargetVersion != "" {
		fmt.Fprintf(out, "  kubelet:     %s", dash(f.KubeletVersion))
		if f.TargetVersion != "" {
			fmt.Fprintf(out, " (%s asks for %s)", f.TargetSource, f.TargetVersion)
		}
		fmt.Fprintln(out)
	}
	switch {
	case f.NodeUpgrade == "":
		if f.Group != "" {
			fmt.Fprintf(out, "  group:       %s, upgradeRolloutStrategy %s\n", f.Group, f.Strategy)
		}
	case f.Completed:
		fmt.Fprintln(out, "  upgrade completed")
	case f.Step == "":
		fmt.Fprintln(out, "  no step failed")
	default:
		fmt.Fprintf(out, "  failed step: %s (container %s)\n  reason:      %s\n", f.Step, f.Container, f.Reason)
		if f.ContainerState != "" {
			fmt.Fprintf(out, "  container:   %s\n", f.ContainerState)
		}
		if f.PodUID != "" {
			fmt.Fprintf(out, "  pod:         %s\n", f.Pod)
		}
		switch {
		case len(f.Log) > 0:
			fmt.Fprintf(out, "\n  last %d lines of %s (%s):\n", len(f.Log), f.Container, f.LogSource)
			for _, l := range f.Log {
				fmt.Fprintf(out, "    | %s\n", l)
			}
		case f.LogError != "":
			fmt.Fprintf(out, "  %s\n", f.LogError)
		}
	}
	if len(f.Events) > 0 {
		fmt.Fprintln(out, "\n  latest events:")
		for _, e := range f.Events {
			fmt.Fprintf(out, "    %s\n", e)
		}
	}
	fmt.Fprintln(out)
}
