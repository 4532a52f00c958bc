package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/upgrade-console/upgrade-console/upgrade"
	"github.com/upgrade-console/upgrade-console/upgrade/recovery"
)

type etcdRollbackOptions struct {
	recoveryOptions
	threshold   time.Duration
	waitTimeout time.Duration
	snapshot    string
	snapFile    string
}

func newEtcdCmd(g *globalOptions) *cobra.Command {
	return groupCmd("etcd", "Recovery actions for external etcd (EtcdadmCluster)", newEtcdRollbackCmd(g))
}

func newEtcdRollbackCmd(g *globalOptions) *cobra.Command {
	o := &etcdRollbackOptions{}
	cmd := &cobra.Command{
		Use:   "rollback --cluster NAME",
		Short: "Undo an etcd rollout whose first new member never came up",
		Long: `Undo an etcd rollout whose first new member did not come up, leaving etcd as it
was before the upgrade.

Offered only while it is safe: an etcd rollout is in progress (the EtcdadmCluster spec
differs from the pre-upgrade snapshot), the newest etcd machine (the only one with the new
spec) has not become ready within --threshold, and no old member has been removed yet.
Otherwise it is refused, with the reason.

Steps, each checked before it writes (a rerun after an interruption continues from where
the cluster is):
  1. pause EKS-A reconcile of the Cluster (so its controller does not re-apply the new spec)
  2. restore the EtcdadmCluster spec (etcd version or image, infrastructure template)
     from the snapshot
  3. delete the new etcd Machine
  4. wait until etcd is ready again with all its old members
  5. clear the etcdcluster.cluster.x-k8s.io/upgrading annotation if it remains
  6. unpause the KubeadmControlPlane, only if EKS-A paused it for the etcd rollout
  7. record the rollback as finished

The snapshot is the one the console took before the upgrade: by default the cluster's
newest snapshot ConfigMap in eksa-system, or the one --snapshot names. When that ConfigMap is
gone (deleted, or eksa-system cleaned up), restore from the local copy the console wrote at
the same time with --snapshot-file: upgrade-console-snapshot-<cluster>-<time>.json in
$XDG_STATE_HOME/upgrade-console/snapshots (~/.local/state/upgrade-console/snapshots when
XDG_STATE_HOME is unset) on the machine that ran the upgrade, or a copy of it. It must be a
snapshot of the same cluster; --snapshot and --snapshot-file do not go together. The
rollback is otherwise the same.

A resumed rollback restores the snapshot it started with, and no other: run it again with no
snapshot flag and it reads the recorded ConfigMap or file again (checking that it still holds
the same snapshot); --snapshot-file is accepted on resume only for a file holding that same
snapshot (a copy on another machine, or the local copy of a ConfigMap deleted meanwhile).

EKS-A reconcile stays paused afterwards: resumed with the new spec, the controller would
start the same rollout again. Fix the cause, then resume with
'upgrade-console lock clear paused --cluster NAME'.

Exit codes: 0 done, 1 bad input (a --snapshot that names no snapshot ConfigMap, or another
cluster's: 'upgrade-console snapshot list --cluster NAME' lists the cluster's; a
--snapshot-file that cannot be read, is not a snapshot, is another cluster's or, on
resume, not the snapshot the rollback started with) or not confirmed, 2 wrong command line
(both --snapshot and --snapshot-file, or no terminal for the typed confirmation and no
--yes), 3 refused (a precondition does not hold) or the dry run failed, 4 a step failed, 5
the wait for etcd timed out, or the rollback was interrupted (rerun to continue), 74 done,
but the audit log (a full disk) did not take all of its record: the entries are printed to
append to it.`,
		Example: `  # What would be done, with the server's dry run; nothing changes
  upgrade-console etcd rollback --cluster mgmt --dry-run

  # Headless, for a runbook
  upgrade-console etcd rollback --cluster mgmt --yes

  # The snapshot ConfigMap is gone: restore from the local copy taken before the upgrade
  upgrade-console etcd rollback --cluster mgmt --dry-run \
    --snapshot-file ~/.local/state/upgrade-console/snapshots/upgrade-console-snapshot-mgmt-20261121-224758.json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			survivesClosedOutput()
			ctx, stop := interruptible(cmdContext(cmd))
			defer stop()
			return signalled(ctx, runEtcdRollback(ctx, cmd.InOrStdin(), cmd.OutOrStdout(), g, o))
		},
	}
	f := cmd.Flags()
	o.addFlags(f)
	f.DurationVar(&o.threshold, "threshold", recovery.DefaultEtcdRollbackThreshold, "how long the new etcd member must have been not ready")
	f.DurationVar(&o.waitTimeout, "wait-timeout", recovery.DefaultEtcdWaitTimeout, "how long to wait for etcd to be ready again")
	f.StringVar(&o.snapshot, "snapshot", "", "snapshot ConfigMap (in eksa-system) to restore from (default: the cluster's newest)")
	f.StringVar(&o.snapFile, "snapshot-file", "", "local copy of a snapshot to restore from when its ConfigMap is gone (in $XDG_STATE_HOME/upgrade-console/snapshots on the machine that ran the upgrade); not with --snapshot")
	return cmd
}

func runEtcdRollback(ctx context.Context, in io.Reader, out io.Writer, g *globalOptions, o *etcdRollbackOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	// A negative duration read as none: every new member counted as not
	// ready for too long, as soon as it existed.
	if o.threshold <= 0 {
		return badFlag("--threshold", fmt.Errorf("must be positive, got %s", o.threshold), "give how long the new etcd member must have been not ready, e.g. 15m")
	}
	if o.waitTimeout <= 0 {
		return badFlag("--wait-timeout", fmt.Errorf("must be positive, got %s", o.waitTimeout), "give how long to wait for etcd to be ready again, e.g. 10m")
	}
	user, host := upgrade.CurrentOperator()
	ro := recovery.EtcdRollbackOptions{
		Threshold: o.threshold, WaitTimeout: o.waitTimeout, Snapshot: o.snapshot, SnapshotFile: o.snapFile, By: user + "@" + host,
	}
	// Both snapshot flags: flags that do not go together are a wrong command
	// line (exit 2, as --timeout without --wait is for apply), said before
	// connecting to anything.
	if err := ro.Validate(); err != nil {
		return usageError{err}
	}
	env, at, err := recoveryEnv(g, o.cluster)
	if err != nil {
		return err
	}
	p, err := recovery.PlanEtcdRollback(ctx, env, ro)
	if err != nil {
		return refusal(ctx, out, &o.recoveryOptions, at, unreachable(ctx, env, err))
	}
	return runRecoveryPlan(ctx, in, out, p, &o.recoveryOptions, at)
}
