package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
	"github.com/upgrade-console/upgrade-console/upgrade/recovery"
)

type lockOptions struct {
	recoveryOptions
	all       bool
	force     bool
	nodeLabel string
	output    string
}

func newLockCmd(g *globalOptions) *cobra.Command {
	return groupCmd("lock", "Show and clear the markers that block an upgrade (lock Lease, paused annotations, node labels)",
		newLockStatusCmd(g), newLockClearCmd(g))
}

func newLockStatusCmd(g *globalOptions) *cobra.Command {
	o := &lockOptions{}
	cmd := &cobra.Command{
		Use:   "status --cluster NAME",
		Short: "List every marker that blocks or may block an upgrade, with holder and age",
		Long: `List every marker that blocks or may block an upgrade of the cluster, with who set it and
how long ago, and whether it is stale:

  lease           the console's upgrade lock (Lease upgrade-console-<cluster> in eksa-system)
  managed-by-cli  anywhere.eks.amazonaws.com/managed-by-cli on the EKS-A Cluster (the EKS-A CLI's
                  claim while it drives an operation: live while "true", cleared only with --force)
  paused          anywhere.eks.amazonaws.com/paused on the EKS-A Cluster
  kcp-paused      cluster.x-k8s.io/paused on the KubeadmControlPlane
  etcd-upgrading  etcdcluster.cluster.x-k8s.io/upgrading on the EtcdadmCluster
  node-label/N    the upgrade-in-progress label on node N (--node-label)

States: "stale" (nothing alive holds it: 'lock clear --all' clears it), "live" (held by
something running: clearing it needs --force), "kept" (left on purpose: EKS-A
reconcile paused by an etcd rollback until its cause is fixed, or the lease of an upgrade
that failed or timed out until the cluster is checked: cleared only by name),
"not set". The holder of an annotation or label is the field manager that wrote it.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := interruptible(cmdContext(cmd))
			defer stop()
			return signalled(ctx, runLockStatus(ctx, cmd.OutOrStdout(), g, o))
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.cluster, "cluster", "", "name of the EKS-A Cluster (its namespace: -n, default from the kubeconfig context)")
	f.StringVar(&o.nodeLabel, "node-label", model.LabelUpgradeInProgress, "node label that marks a node whose upgrade is in progress")
	f.StringVarP(&o.output, "output", "o", "table", outputHelp("table"))
	return cmd
}

func newLockClearCmd(g *globalOptions) *cobra.Command {
	o := &lockOptions{}
	cmd := &cobra.Command{
		Use:   "clear [MARKER...] --cluster NAME",
		Short: "Clear upgrade lock markers: by name, or every stale one with --all",
		Long: `Clear upgrade lock markers (see 'lock status'): name them (lease, managed-by-cli, paused,
kcp-paused, etcd-upgrading, node-label for every labelled node, node-label/NODE for one), or clear
every stale one with --all.

A live marker (a lease still renewed, an etcd rollout in progress) is refused unless
--force is given; forcing is recorded in the audit log. Every clear is guarded: the lease
is deleted only if it was not renewed or taken since it was read, an annotation or label
is removed only if it still has the value that was read, so a concurrent change is never
clobbered. The plan and the server's dry run are shown, then the operator types the name
of the object (the cluster name for several markers) unless --yes.

Exit codes: 0 cleared (or nothing to clear), 1 bad input (a marker whose object the cluster
lacks, a node that does not exist) or not confirmed, 2 wrong command line (no marker named and
no --all, a marker it does not know, or no terminal for the typed confirmation and no --yes),
3 refused (a live marker without --force) or the dry run failed, 4 a clear failed,
5 interrupted (run it again to continue), 74 done, but the audit log (a full disk) did not take all of its record: the entries are printed to append to it.`,
		Example: `  upgrade-console lock clear --all --cluster mgmt
  upgrade-console lock clear paused --cluster mgmt --yes
  upgrade-console lock clear lease --force --cluster mgmt`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && !o.all {
				return usageError{errors.New("lock clear needs the markers to clear (" + markerNames + ") or --all; `" + lockStatusCommand(g, o) + "` lists them")}
			}
			for _, id := range args {
				if !recovery.KnownMarkerID(id) {
					return usageError{fmt.Errorf("lock clear: unknown marker %q: name one of %s, or use --all for every stale one; `%s` lists them", id, markerNames, lockStatusCommand(g, o))}
				}
			}
			survivesClosedOutput()
			ctx, stop := interruptible(cmdContext(cmd))
			defer stop()
			return signalled(ctx, runLockClear(ctx, cmd.InOrStdin(), cmd.OutOrStdout(), g, o, args))
		},
	}
	f := cmd.Flags()
	o.addFlags(f)
	f.BoolVar(&o.all, "all", false, "clear every stale marker")
	f.BoolVar(&o.force, "force", false, "clear named markers even when live (recorded in the audit log)")
	f.StringVar(&o.nodeLabel, "node-label", model.LabelUpgradeInProgress, "node label that marks a node whose upgrade is in progress")
	return cmd
}

// lockStatusCommand is the lock status of the cluster and connection a
// lock clear was given, to paste: "--cluster NAME" when none was.
func lockStatusCommand(g *globalOptions, o *lockOptions) string {
	cluster := cmp.Or(o.cluster, "NAME")
	ns := ""
	if g.kube.Namespace != nil {
		ns = *g.kube.Namespace
	}
	return "upgrade-console lock status " + model.ClusterArgs(model.ShellQuote(cluster), ns, g.conn)
}

// markerNames are the markers `lock clear` takes, as its messages list them.
var markerNames = strings.Join(recovery.MarkerIDs, ", ") + ", node-label/NODE"

func runLockStatus(ctx context.Context, out io.Writer, g *globalOptions, o *lockOptions) error {
	if err := checkOutput(o.output, "table"); err != nil {
		return err
	}
	if err := checkLabelKey("--node-label", o.nodeLabel); err != nil {
		return err
	}
	env, _, err := recoveryEnv(g, o.cluster)
	if err != nil {
		return err
	}
	ms, err := recovery.ListMarkers(ctx, env, recovery.MarkerOptions{NodeLabel: o.nodeLabel})
	if err != nil {
		return lockUnreadable(unreachable(ctx, env, err), env.Conn)
	}
	now := time.Now()
	if o.output != "table" {
		type row struct {
			ID     string `json:"id"`
			Object string `json:"object"`
			Key    string `json:"key,omitempty"`
			Value  string `json:"value,omitempty"`
			Holder string `json:"holder,omitempty"`
			// AuthenticatedAs is who the API server authenticated the
			// lease's holder as (the lease only, when its console wrote
			// it): holder is user@host, root@bastion for every operator
			// of a shared bastion.
			AuthenticatedAs string    `json:"authenticatedAs,omitempty"`
			Since           time.Time `json:"since,omitzero"`
			// Renewed is the lease's last renewal (the lease only).
			Renewed time.Time `json:"renewed,omitzero"`
			State   string    `json:"state"`
			// Blocks is what the marker holds back while set; a marker
			// not set blocks nothing, and has none.
			Blocks string `json:"blocks,omitempty"`
			Reason string `json:"reason,omitempty"`
		}
		rows := make([]row, 0, len(ms))
		for _, m := range ms {
			blocks := m.Blocks
			if m.State == recovery.MarkerNotSet {
				blocks = ""
			}
			rows = append(rows, row{m.ID, m.Object, m.Key, m.Value, m.Holder, m.AuthenticatedAs, m.Since, m.Renewed, string(m.State), blocks, m.Reason})
		}
		return writeDoc(out, o.output, rows)
	}
	writeMarkers(out, ms, now, model.ClusterArgs(o.cluster, env.ClusterNamespace, g.conn))
	return nil
}

// writeMarkers is lock status's table, each set marker's state and what it
// blocks, and how to clear the stale ones (flags: the cluster's and the
// connection's, as the clear command takes them).
func writeMarkers(out io.Writer, ms []recovery.Marker, now time.Time, flags string) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MARKER\tSTATE\tHOLDER\tAGE\tOBJECT")
	stale := 0
	var others, kept []string
	for _, m := range ms {
		if m.State == recovery.MarkerKept {
			kept = append(kept, m.ID)
		}
		holder, age := dash(m.Holder), "-"
		if m.State != recovery.MarkerNotSet {
			age = m.Age(now)
		}
		if m.State == recovery.MarkerStale {
			stale++
			if m.SetByOther() {
				others = append(others, m.ID+" ("+m.Holder+")")
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.ID, m.State, holder, age, m.Object)
	}
	tw.Flush()
	for _, m := range ms {
		if m.State != recovery.MarkerNotSet {
			fmt.Fprintf(out, "\n%s (%s): %s\n  blocks: %s\n", m.ID, m.State, m.Reason, m.Blocks)
		}
	}
	switch {
	case len(others) > 0:
		// Set by a person or another tool, perhaps on purpose: "clear them
		// with --all" contradicted "ask whoever set it" above.
		fmt.Fprintf(out, "\n%d stale marker(s), %d set by another manager: %s; ask whoever set those before clearing them, then\n  upgrade-console lock clear --all %s\n",
			stale, len(others), strings.Join(others, ", "), flags)
	case stale > 0:
		fmt.Fprintf(out, "\n%d stale marker(s): clear them with\n  upgrade-console lock clear --all %s\n", stale, flags)
	}
	if len(kept) > 0 {
		// --all leaves them: the command that clears them was nowhere
		// on the lock commands' path.
		fmt.Fprintf(out, "\n%d kept marker(s), left by --all: once the cluster is checked, clear them by name with\n  upgrade-console lock clear %s %s\n",
			len(kept), strings.Join(kept, " "), flags)
	}
}

func runLockClear(ctx context.Context, in io.Reader, out io.Writer, g *globalOptions, o *lockOptions, ids []string) error {
	if err := o.validate(); err != nil {
		return err
	}
	if err := checkLabelKey("--node-label", o.nodeLabel); err != nil {
		return err
	}
	env, at, err := recoveryEnv(g, o.cluster)
	if err != nil {
		return err
	}
	p, markers, err := recovery.PlanClear(ctx, env, recovery.ClearOptions{IDs: ids, All: o.all, Force: o.force,
		MarkerOptions: recovery.MarkerOptions{NodeLabel: o.nodeLabel}})
	if err != nil {
		return refusal(ctx, out, &o.recoveryOptions, at, lockUnreadable(unreachable(ctx, env, err), env.Conn))
	}
	if len(p.Steps) == 0 {
		if o.all {
			fmt.Fprintf(out, "No stale marker on %s: nothing to clear.\n", o.cluster)
		} else {
			// "No stale marker" read as "nothing stale" while the
			// lease and paused were: name what was asked, and what else is.
			fmt.Fprintf(out, "No stale %s marker on %s: nothing to clear.\n", strings.Join(ids, ", "), o.cluster)
			var others []string
			for _, m := range markers {
				if m.State == recovery.MarkerStale {
					others = append(others, m.ID)
				}
			}
			if len(others) > 0 {
				fmt.Fprintf(out, "  stale: %s; clear them with `upgrade-console lock clear %s %s` (or --all)\n",
					strings.Join(others, ", "), strings.Join(others, " "), model.ClusterArgs(o.cluster, env.ClusterNamespace, g.conn))
			}
		}
		for _, n := range p.Notes {
			fmt.Fprintf(out, "  note: %s\n", n)
		}
		return nil
	}
	return runRecoveryPlan(ctx, in, out, p, &o.recoveryOptions, at)
}

// lockUnreadable says a refused read of the upgrade lock Lease as the bad
// input it is (exit 1), with the rights to check and grant: the API
// server's "forbidden" alone left the operator to find them.
func lockUnreadable(err error, conn model.ConnFlags) error {
	var fe *upgrade.LockForbiddenError
	if !errors.As(err, &fe) {
		return err
	}
	return &model.InputError{Source: "Lease " + fe.Namespace + "/" + fe.Name,
		Problem: "the console may not read the upgrade lock: " + fe.Refusal(), Fix: fe.Fix(conn)}
}
