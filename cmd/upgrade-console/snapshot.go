package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade/recovery"
)

type snapshotOptions struct {
	recoveryOptions
	keep   int
	output string
}

func (o *snapshotOptions) addKeep(f *pflag.FlagSet) {
	f.IntVar(&o.keep, "keep", 1, "how many of the newest snapshots to keep (at least 1: the newest is the one an etcd rollback restores)")
}

func (o *snapshotOptions) checkKeep() error {
	if o.keep < 1 {
		return badFlag("--keep", fmt.Errorf("must be at least 1, got %d", o.keep), "keep the newest snapshot at least: it is the one an etcd rollback restores")
	}
	return nil
}

func newSnapshotCmd(g *globalOptions) *cobra.Command {
	return groupCmd("snapshot", "List, prune and restore from the pre-upgrade snapshots kept in the cluster",
		newSnapshotListCmd(g), newSnapshotPruneCmd(g), newSnapshotRestoreCmd(g))
}

func newSnapshotListCmd(g *globalOptions) *cobra.Command {
	o := &snapshotOptions{}
	cmd := &cobra.Command{
		Use:   "list --cluster NAME",
		Short: "List the cluster's snapshot ConfigMaps, newest first, and which a prune keeps",
		Long: `List the snapshots apply took of the cluster (ConfigMaps upgrade-console-snapshot-<cluster>-<time>
in eksa-system), newest first, with who took them, their size, and whether 'snapshot prune'
keeps them: the --keep newest, the one an etcd rollback recorded on the Cluster restores, and
any that does not read as a snapshot. Snapshots of a Cluster of the same name in another
namespace are not listed.`,
		Example: `  upgrade-console snapshot list --cluster mgmt
  upgrade-console snapshot list --cluster mgmt -o json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := interruptible(cmdContext(cmd))
			defer stop()
			return signalled(ctx, runSnapshotList(ctx, cmd.OutOrStdout(), g, o))
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.cluster, "cluster", "", "name of the EKS-A Cluster (its namespace: -n, default from the kubeconfig context)")
	f.StringVarP(&o.output, "output", "o", "table", outputHelp("table"))
	o.addKeep(f)
	return cmd
}

func newSnapshotPruneCmd(g *globalOptions) *cobra.Command {
	o := &snapshotOptions{}
	cmd := &cobra.Command{
		Use:   "prune --cluster NAME",
		Short: "Delete the snapshot ConfigMaps no rollback restores, keeping the newest",
		Long: `Delete the cluster's snapshot ConfigMaps that no rollback restores: an etcd rollback restores
the newest snapshot of an upgrade and refuses an earlier one's, so all but the newest serve
none. Kept: the --keep newest (1 by default), the one an etcd rollback recorded on the Cluster
restores, and any ConfigMap that does not read as a snapshot. Each delete is guarded by the
ConfigMap's UID and resourceVersion: one changed since it was listed is not deleted. The local
copies on this machine ($XDG_STATE_HOME/upgrade-console/snapshots) are not touched.

The plan and the server's dry run are shown, then the operator types the cluster's name
unless --yes; every delete is recorded in the audit log.

Exit codes: 0 pruned (or nothing to prune), 1 bad input or not confirmed, 2 wrong command line
(or no terminal for the typed confirmation and no --yes), 3 the dry run failed or a snapshot
changed since it was listed before anything was deleted, 4 a delete failed or met such a change
after others, 5 interrupted (run it again to continue), 74 done, but the audit log (a full disk) did not take all of its record: the entries are printed to append to it.`,
		Example: `  upgrade-console snapshot prune --cluster mgmt
  upgrade-console snapshot prune --cluster mgmt --keep 2 --dry-run`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			survivesClosedOutput()
			ctx, stop := interruptible(cmdContext(cmd))
			defer stop()
			return signalled(ctx, runSnapshotPrune(ctx, cmd.InOrStdin(), cmd.OutOrStdout(), g, o))
		},
	}
	o.addFlags(cmd.Flags())
	o.addKeep(cmd.Flags())
	return cmd
}

func runSnapshotList(ctx context.Context, out io.Writer, g *globalOptions, o *snapshotOptions) error {
	if err := checkOutput(o.output, "table"); err != nil {
		return err
	}
	if err := o.checkKeep(); err != nil {
		return err
	}
	env, _, err := recoveryEnv(g, o.cluster)
	if err != nil {
		return err
	}
	entries, err := recovery.ListSnapshots(ctx, env, o.keep)
	if err != nil {
		return unreachable(ctx, env, err)
	}
	if o.output != "table" {
		if entries == nil {
			entries = []recovery.SnapshotEntry{}
		}
		return writeDoc(out, o.output, entries)
	}
	if len(entries) == 0 {
		fmt.Fprintf(out, "No snapshot of %s in the cluster.\n", o.cluster)
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SNAPSHOT\tTAKEN\tBY\tSIZE\tPRUNE")
	prunable := 0
	for _, e := range entries {
		prune := "deletes"
		if e.Kept != "" {
			prune = "keeps: " + e.Kept
		} else {
			prunable++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Name, e.TakenAt.UTC().Format("2006-01-02 15:04:05Z"), dash(e.TakenBy),
			kib(e.Bytes), model.Printable(prune))
	}
	tw.Flush()
	if prunable > 0 {
		keep := ""
		if o.keep != 1 {
			keep = fmt.Sprintf(" --keep %d", o.keep)
		}
		which := fmt.Sprintf("%d of them serve", prunable)
		if prunable == 1 {
			which = "1 of them serves"
		}
		fmt.Fprintf(out, "\n%s no rollback: delete them with\n  upgrade-console snapshot prune%s %s\n",
			which, keep, model.ClusterArgs(o.cluster, env.ClusterNamespace, g.conn))
	}
	return nil
}

// kib is a size as the table shows it.
func kib(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%d KiB", (n+1023)/1024)
}

func runSnapshotPrune(ctx context.Context, in io.Reader, out io.Writer, g *globalOptions, o *snapshotOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	if err := o.checkKeep(); err != nil {
		return err
	}
	env, at, err := recoveryEnv(g, o.cluster)
	if err != nil {
		return err
	}
	p, entries, err := recovery.PlanSnapshotPrune(ctx, env, o.keep)
	if err != nil {
		return unreachable(ctx, env, err)
	}
	if len(p.Steps) == 0 {
		switch len(entries) {
		case 0:
			fmt.Fprintf(out, "Nothing to prune: %s has no snapshot in the cluster.\n", o.cluster)
		case 1:
			fmt.Fprintf(out, "Nothing to prune: %s has 1 snapshot in the cluster, kept (--keep %d).\n", o.cluster, o.keep)
		default:
			fmt.Fprintf(out, "Nothing to prune: %s has %d snapshots in the cluster, all kept (--keep %d).\n", o.cluster, len(entries), o.keep)
		}
		return nil
	}
	return runRecoveryPlan(ctx, in, out, p, &o.recoveryOptions, at)
}

type snapshotRestoreOptions struct {
	recoveryOptions
	snapshot string
	objects  []string
	older    bool
}

func newSnapshotRestoreCmd(g *globalOptions) *cobra.Command {
	o := &snapshotRestoreOptions{}
	cmd := &cobra.Command{
		Use:   "restore --cluster NAME --snapshot SNAPSHOT --object KIND/NAME...",
		Short: "Put back, as a snapshot has it, the spec of the documents an apply refused part way applied",
		Long: `When the API server refuses one of the spec's writes after the dry run passed (an admission
policy or webhook on real writes alone), apply stops with the documents before it applied and
the upgrade lock kept, and prints this command with the snapshot it took and each document it
applied. It restores the spec of those objects (in the Cluster's namespace), and of no other,
as the snapshot has it: for each, a JSON patch of the fields that differ and that the console's
field manager alone owns (a field another writer changed after the apply is named in the plan
and left), guarded by a test of the generation and of each value read when the plan was made,
so that an object changed since is not overwritten. The snapshot must be the cluster's newest
(the failed apply's) unless --older-snapshot.

The plan and the server's dry run are shown, then the operator types the cluster's name unless
--yes; every write is recorded in the audit log, and a second run finds every step done. The
upgrade lock the apply kept is left: once the cluster reads as before, clear it with
'upgrade-console lock clear lease'. A live lock of another console's upgrade refuses the restore.

Exit codes: 0 restored (or nothing to restore), 1 bad input (a snapshot or object it cannot
restore, named with the fix) or not confirmed, 2 wrong command line (or no terminal for the
typed confirmation and no --yes), 3 refused, nothing written (another console's upgrade under
way, an object gone, the dry run failed, an object changed since the plan), 4 a write failed or
met such a change after others, 5 interrupted
(run it again to continue), 74 done, but the audit log did not take all of its record.`,
		Example: `  upgrade-console snapshot restore --cluster mgmt --snapshot upgrade-console-snapshot-mgmt-20261126-102810 \
      --object VSphereMachineConfig/mgmt-cp --object VSphereMachineConfig/mgmt-etcd --dry-run`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			survivesClosedOutput()
			ctx, stop := interruptible(cmdContext(cmd))
			defer stop()
			return signalled(ctx, runSnapshotRestore(ctx, cmd.InOrStdin(), cmd.OutOrStdout(), g, o))
		},
	}
	o.addFlags(cmd.Flags())
	cmd.Flags().StringVar(&o.snapshot, "snapshot", "", "the snapshot ConfigMap (in eksa-system) the failed apply took and named")
	cmd.Flags().StringArrayVar(&o.objects, "object", nil, "a document the failed apply applied, KIND/NAME as it printed it, in the Cluster's namespace (repeat for each)")
	cmd.Flags().BoolVar(&o.older, "older-snapshot", false, "restore from a snapshot older than the cluster's newest (by default refused: the newest is the one the failed apply took)")
	return cmd
}

func runSnapshotRestore(ctx context.Context, in io.Reader, out io.Writer, g *globalOptions, o *snapshotRestoreOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	if o.snapshot == "" || len(o.objects) == 0 {
		return usageError{recovery.ErrRestoreArgs}
	}
	env, at, err := recoveryEnv(g, o.cluster)
	if err != nil {
		return err
	}
	p, err := recovery.PlanSnapshotRestore(ctx, env, o.snapshot, o.objects, o.older)
	if err != nil {
		if errors.As(err, new(*recovery.RefusedError)) {
			return refusal(ctx, out, &o.recoveryOptions, at, err)
		}
		return unreachable(ctx, env, err)
	}
	return runRecoveryPlan(ctx, in, out, p, &o.recoveryOptions, at)
}
