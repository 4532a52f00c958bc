package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
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
}

func newEtcdCmd(g *globalOptions) *cobra.Command {
	return groupCmd("etcd", "Recovery actions for external etcd (EtcdadmCluster)", newEtcdRollbackCmd(g))
}

func newEtcdRollbackCmd(g *globalOptions) *cobra.Command {
	o := &etcdRollbackOptions{}
	cmd := &cobra.Command{
		Use:   "rollback --cluster NAME",
		Short: "Undo an etcd rollout whose first new member never came up",
		Long: `Undo an etcd rollout whose first new member did not come up, leaving the cluster as it
was before the upgrade (the rollback of the kindless-upgrade design).

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

EKS-A reconcile stays paused afterwards: resumed with the new spec, the controller would
start the same rollout again. Fix the cause, then resume with
'upgrade-console lock clear paused --cluster NAME'.

Exit codes: 0 done, 1 bad input or not confirmed, 3 refused (a precondition does not hold)
or the dry run failed, 4 a step failed, 5 the wait for etcd timed out (rerun to continue).`,
		Example: `  # What would be done, with the server's dry run; nothing changes
  upgrade-console etcd rollback --cluster mgmt --dry-run

  # Headless, for a runbook
  upgrade-console etcd rollback --cluster mgmt --yes`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmdContext(cmd), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runEtcdRollback(ctx, cmd.InOrStdin(), cmd.OutOrStdout(), g, o)
		},
	}
	f := cmd.Flags()
	o.addFlags(f)
	f.DurationVar(&o.threshold, "threshold", recovery.DefaultEtcdRollbackThreshold, "how long the new etcd member must have been not ready")
	f.DurationVar(&o.waitTimeout, "wait-timeout", recovery.DefaultEtcdWaitTimeout, "how long to wait for etcd to be ready again")
	f.StringVar(&o.snapshot, "snapshot", "", "snapshot ConfigMap (in eksa-system) to restore from (default: the cluster's newest)")
	return cmd
}

func runEtcdRollback(ctx context.Context, in io.Reader, out io.Writer, g *globalOptions, o *etcdRollbackOptions) error {
	env, kubeContext, err := recoveryEnv(g, o.cluster)
	if err != nil {
		return err
	}
	user, host := upgrade.CurrentOperator()
	p, err := recovery.PlanEtcdRollback(ctx, env, recovery.EtcdRollbackOptions{
		Threshold: o.threshold, WaitTimeout: o.waitTimeout, Snapshot: o.snapshot, By: user + "@" + host,
	})
	if err != nil {
		return refused(out, err)
	}
	return runRecoveryPlan(ctx, in, out, p, &o.recoveryOptions, kubeContext)
}
