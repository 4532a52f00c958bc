package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

type planOptions struct {
	// Offline mode: two Bundles manifests and the cluster's Kubernetes version.
	fromBundles, toBundles         string
	kubeVersion, targetKubeVersion string

	all    bool
	output string

	// Live mode (--cluster): the cluster against a spec file.
	live liveOptions

	// specChecks are the checks an offline plan with -f makes of the spec
	// file alone (its references to provider objects).
	specChecks []model.CheckResult
}

// planSource produces what a plan is computed from. Offline mode reads two
// Bundles files; a live mode (--cluster) adds a second source that reads the
// cluster, and planOptions.source picks one from the flags.
type planSource func(ctx context.Context) (model.PlanInput, error)

func newPlanCmd(g *globalOptions) *cobra.Command {
	o := &planOptions{}
	cmd := &cobra.Command{
		Use:   "plan --from-bundles FILE --to-bundles FILE --kubernetes-version X.Y",
		Short: "Show what an upgrade changes: component versions and preflight checks",
		Long: `Show what upgrading a cluster from one EKS Anywhere release to another changes: the
component versions that differ between the two releases' Bundles manifests, and the
version rules (preflight checks) the upgrade must pass.

Offline mode compares two Bundles manifests for a cluster on --kubernetes-version; no
cluster is contacted. With -f cluster.yaml the spec is checked too (its fields and
their types, against the console's copies of the EKS-A CRDs), and its kubernetesVersion
is the target. Get a manifest with
  kubectl get bundles -n eksa-system NAME -o yaml
As EKS-A does, management components (EKS-A, Flux, cert-manager, cluster-api, providers,
etcdadm) are read from the first versions bundle, and kubernetes and cilium from the
bundle of the cluster's Kubernetes version.

CHANGE is major, minor or patch (the leading X.Y.Z goes up in that field), downgrade,
rebuild (same X.Y.Z, new build: v1.8.5+205ebc5 -> v1.8.5+65d2d66; EKS-A rolls it out
all the same; a build number or a pre-release stage going down, eksa.10 -> eksa.9 or
rc -> beta, is a downgrade), changed (not a version, e.g. "deprecated"), added, removed,
unknown (the target Bundles have no versions bundle for the target Kubernetes version,
so the per-Kubernetes rows cannot be told), skipped (cilium, when the spec sets
skipUpgrade: EKS-A leaves it as it is), unused (with a spec: what the cluster does not
run, which EKS-A does not upgrade: the other infrastructure providers, Flux without
gitOpsRef, the CNI it does not choose, the in-place upgrader without an InPlace rollout,
the Bottlerocket images when no machine config is Bottlerocket; left out of the table,
as none is) or none.

Live mode (--cluster NAME -f cluster.yaml) reads the running cluster instead: the current
release from the Cluster's eksaVersion (its EKSARelease and Bundles in eksa-system), the
target from the spec file and the Bundles of its eksaVersion (or --to-bundles FILE), and
adds the live preflight checks: objects ready, no failureMessage, generation observed,
reconcile not paused, no other upgrade lock, no leftover upgrade markers. Skippable checks
may be skipped by name with --skip (repeatable).

Exit codes: 0 the upgrade may start, 1 bad input (a spec value the API server refuses
included), 2 wrong command line, 3 a blocking preflight check failed (the plan is still
printed; -o json and yaml say the same in mayStart and blocked), 5 interrupted (ctrl-c,
SIGTERM, SIGHUP) before the API server answered (nothing is changed), 70 a bug of the
console's own (a panic caught; the stack goes to the log file). Exit 0 speaks of the checks:
with fields another manager owns (conflicts, needsForceConflicts in -o json), apply also
needs --force-conflicts.`,
		Example: `  # What moving a Kubernetes 1.30 cluster to the new release changes
  upgrade-console plan --from-bundles bundles-71.yaml --to-bundles bundles-86.yaml --kubernetes-version 1.30

  # ... upgrading Kubernetes to 1.31 at the same time, as JSON for a script
  upgrade-console plan --from-bundles bundles-71.yaml --to-bundles bundles-86.yaml \
    --kubernetes-version 1.30 --target-kubernetes-version 1.31 -o json

  # Live: the running cluster mgmt against the spec to upgrade it to
  upgrade-console plan --cluster mgmt -f mgmt-v0.21.yaml`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.live.cluster != "" {
				ctx, stop := interruptible(cmdContext(cmd))
				defer stop()
				return signalled(ctx, runLivePlan(ctx, cmd.OutOrStdout(), g, o))
			}
			source, err := o.source()
			if err != nil {
				return err
			}
			in, err := source(cmd.Context())
			if err != nil {
				return err
			}
			return runPlan(cmd.OutOrStdout(), o, in)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.fromBundles, "from-bundles", "", "Bundles manifest the cluster runs now (offline mode)")
	f.StringVar(&o.toBundles, "to-bundles", "", "Bundles manifest of the release to upgrade to (offline mode)")
	f.StringVar(&o.kubeVersion, "kubernetes-version", "", "the cluster's Kubernetes version, as in its spec (e.g. 1.30)")
	f.StringVar(&o.targetKubeVersion, "target-kubernetes-version", "", "Kubernetes version to upgrade to (default: --kubernetes-version, no Kubernetes upgrade)")
	f.BoolVar(&o.all, "all", false, "list unchanged components in the table too (json and yaml always list every one)")
	f.StringVarP(&o.output, "output", "o", "table", outputHelp("table"))
	o.live.addFlags(f, false)
	for _, name := range []string{"from-bundles", "to-bundles"} {
		_ = cmd.MarkFlagFilename(name, "yaml", "yml", "json")
	}
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(outputs("table"), cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// source validates the flags as a whole and chooses where current and target
// come from. The live mode (--cluster, -f) becomes a second case here.
func (o *planOptions) source() (planSource, error) {
	switch {
	case o.live.file != "" && o.fromBundles == "":
		// A spec file is the live plan's: what is missing is the cluster.
		return nil, usageError{errors.New("a live plan of -f " + o.live.file + " needs --cluster NAME, the EKS-A Cluster to upgrade; see 'upgrade-console plan --help'")}
	case o.fromBundles == "" && o.toBundles == "":
		return nil, usageError{errors.New("plan needs --from-bundles and --to-bundles (the Bundles manifests of the current and the target release); see 'upgrade-console plan --help'")}
	case o.fromBundles == "" || o.toBundles == "":
		return nil, usageError{errors.New("offline plan needs both --from-bundles and --to-bundles")}
	case o.kubeVersion == "":
		return nil, usageError{errors.New("offline plan needs --kubernetes-version: the cluster's Kubernetes version, e.g. 1.30")}
	}
	if err := checkOutput(o.output, "table"); err != nil {
		return nil, err
	}
	for _, f := range []struct{ flag, v string }{{"--kubernetes-version", o.kubeVersion}, {"--target-kubernetes-version", o.targetKubeVersion}} {
		// As the spec's kubernetesVersion is written: 1.31.2 was read as
		// 1.31 by one check and as missing from the Bundles by another
		// (exit 3), and "abc" blamed the Bundles file.
		if f.v != "" && !kubeMinorVersion.MatchString(f.v) {
			return nil, badFlag(f.flag, fmt.Errorf("%q is not a Kubernetes minor version", f.v),
				"give MAJOR.MINOR as the cluster spec's kubernetesVersion is written, e.g. 1.31")
		}
	}
	return o.offline, nil
}

// kubeMinorVersion is EKS-A's spec.kubernetesVersion form: "1.31".
var kubeMinorVersion = regexp.MustCompile(`^[1-9][0-9]*\.(0|[1-9][0-9]*)$`)

func (o *planOptions) offline(context.Context) (model.PlanInput, error) {
	current, err := readBundles(o.fromBundles, "--from-bundles")
	if err != nil {
		return model.PlanInput{}, err
	}
	target, err := readBundles(o.toBundles, "--to-bundles")
	if err != nil {
		return model.PlanInput{}, err
	}
	targetKube := o.targetKubeVersion
	skipCilium := false
	var uses *model.ClusterUses
	var targetEKSA string
	var workers []model.WorkerGroup
	if o.live.file != "" {
		// The spec is checked as the live plan checks it before any
		// cluster is asked (against the console's copies of the CRDs),
		// and says the Kubernetes version it upgrades to.
		spec, err := upgrade.ReadSpecFile(o.live.file, "default")
		if err != nil {
			return model.PlanInput{}, err
		}
		o.specChecks = upgrade.SpecFileChecks(spec)
		skipCilium, uses = spec.CiliumSkipUpgrade(), spec.Uses()
		// What EKS-A checks of the spec: its eksaVersion one minor at a
		// time from the current release (it was ignored, and a spec of
		// v0.25.0 passed against a cluster on v0.21), and its worker
		// groups' skew from the control plane.
		targetEKSA, workers = spec.EksaVersion(), spec.WorkerGroups()
		switch kube := spec.KubernetesVersion(); {
		case targetKube == "":
			targetKube = kube
		case kube != targetKube:
			return model.PlanInput{}, &model.InputError{Source: "--target-kubernetes-version",
				Problem: fmt.Sprintf("%s, but %s asks for Kubernetes %s (spec.kubernetesVersion)", targetKube, o.live.file, kube),
				Fix:     "leave --target-kubernetes-version out: the spec's kubernetesVersion is the target"}
		}
	}
	if targetKube == "" {
		targetKube = o.kubeVersion
	}
	return model.PlanInput{Current: current, Target: target, CurrentKube: o.kubeVersion, TargetKube: targetKube,
		TargetEKSA: targetEKSA, WorkerGroups: workers, CiliumSkipUpgrade: skipCilium, Uses: uses}, nil
}

func readBundles(path, flag string) (*model.Bundles, error) {
	data, err := upgrade.ReadInputFile(path, upgrade.MaxBundlesBytes)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is already the error's source
		}
		return nil, &model.InputError{Source: path, Problem: "cannot be read: " + err.Error(), Fix: "check the file given to " + flag}
	}
	return model.ParseBundles(data, path)
}

// runPlan computes the plan, prints it and turns a blocking preflight failure
// into exit code 3 (after printing, so the operator sees the whole plan).
func runPlan(out io.Writer, o *planOptions, in model.PlanInput) error {
	if err := upgrade.ValidateSkips(o.live.skips); err != nil {
		return err
	}
	p, err := model.BuildPlan(in)
	if err != nil {
		return err
	}
	p.Preflight = append(p.Preflight, o.specChecks...)
	upgrade.SkipResults(p.Preflight, o.live.skips)
	for _, name := range o.live.skips {
		if !slices.ContainsFunc(p.Preflight, func(r model.CheckResult) bool { return r.Name == name }) {
			// Silently ignored, the skip read as if it had been made.
			p.Preflight = append(p.Preflight, model.CheckResult{Name: name, Status: model.CheckWarn,
				Message:     "--skip " + name + " skips nothing: an offline plan does not make this check (it reads no cluster)",
				Remediation: "plan against the cluster (--cluster, -f) to have it made, and skipped"})
		}
	}
	if err := writePlan(out, o.output, offlineDoc(p), func() { writePlanTable(out, p, o.all) }); err != nil {
		return err
	}
	if p.Blocked() {
		return withCode(ExitPreflight, blockedError(p.Preflight))
	}
	return nil
}

// writePlan prints a plan (offline or live) as JSON, YAML or, with table,
// as the table.
func writePlan(out io.Writer, format string, p any, table func()) error {
	if format == "table" {
		table()
		return nil
	}
	if err := writeDoc(out, format, p); err != nil {
		return fmt.Errorf("write the plan: %w", err)
	}
	return nil
}

// writeSpecNote says, before a live plan whose cluster has not reached its
// Cluster's spec, that the plan's current side is that spec and not what
// the cluster runs: mid-upgrade, or after an etcd rollback, the plan of the
// target read "v0.21.2 → v0.21.2", "all components are up to date", and the
// operator concluded the upgrade was done.
func writeSpecNote(out io.Writer, p *upgrade.Plan) {
	s := p.CurrentSpec
	if !s.NotReached() {
		return
	}
	fmt.Fprintf(out, "the cluster has not reached its Cluster's spec (EKS-A %s, Kubernetes %s): %s\n", dash(p.Versions.CurrentEKSA), dash(p.Versions.CurrentKubernetes), s.Message)
	fmt.Fprintln(out, "  the plan below compares the target with that spec (CURRENT), not with what the cluster runs")
	fmt.Fprintf(out, "  next: %s\n\n", s.Next)
}

func writePlanTable(out io.Writer, p *model.Plan, all bool) {
	writePlanTableFor(out, p, all, nil)
}

// writePlanTableFor is writePlanTable for a live plan, whose current side
// is the Cluster's spec: spec says whether the cluster has reached it (nil:
// unknown, or an offline plan), which the summary under the table words.
func writePlanTableFor(out io.Writer, p *model.Plan, all bool, spec *model.SpecStatus) {
	rows := p.Changed()
	if all {
		rows = p.Components
	}
	if len(rows) > 0 {
		tw := tabwriter.NewWriter(out, 0, 4, 3, ' ', 0)
		fmt.Fprintln(tw, "NAME\tCURRENT\tTARGET\tCHANGE")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, dash(r.OldVersion), dash(r.NewVersion), r.Change)
		}
		_ = tw.Flush()
		fmt.Fprintln(out)
	}
	fmt.Fprintln(out, model.SummarizeChangesFor(p.Components, spec))

	fmt.Fprintln(out, "\npreflight:")
	tw := tabwriter.NewWriter(out, 0, 4, 3, ' ', 0)
	for _, r := range p.Preflight {
		// One line each: a message carries cluster text (a failureMessage),
		// whose own lines read as the console's (-o json has them whole).
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", r.Status, r.Name, model.CheckLine(r.Message))
		if r.Remediation != "" && r.Status != model.CheckPass {
			fmt.Fprintf(tw, "  \t\tfix: %s\n", model.CheckLine(r.Remediation))
		}
	}
	_ = tw.Flush()
}

// blockedExit is the end of a live plan the checks block: exit 3, or exit 1
// when spec-accepted's dry run found the spec file's content refused (a
// field the CRD's schema refuses), as apply's own dry run and the
// console's schema check end that bad input. Both were exit 3 here and 1
// there for the same file. The other checks that block are named after it.
func blockedExit(p *upgrade.Plan) error {
	bad := invalidSpec(p)
	if bad == nil {
		return withCode(ExitPreflight, blockedError(p.Preflight))
	}
	var others []string
	for _, r := range p.Preflight {
		if r.Blocking && r.Name != upgrade.CheckSpecAccepted {
			others = append(others, r.Name)
		}
	}
	if len(others) > 0 {
		return fmt.Errorf("%w; other preflight checks block the upgrade too: %s (see the plan's preflight results)", bad, strings.Join(others, ", "))
	}
	return bad
}

// invalidSpec is the plan's dry run's refusal of the spec's content, nil
// when there is none (or the check was not made).
func invalidSpec(p *upgrade.Plan) *model.InputError {
	t := p.Target
	if t == nil || t.Spec == nil || t.SpecDryRun == nil || !slices.ContainsFunc(p.Preflight, func(r model.CheckResult) bool {
		return r.Name == upgrade.CheckSpecAccepted && r.Blocking
	}) {
		return nil
	}
	return t.SpecDryRun.InvalidSpec(t.Spec)
}

func blockedError(results []model.CheckResult) error {
	var names []string
	var first model.CheckResult
	for _, r := range results {
		if r.Blocking {
			if names == nil {
				first = r
			}
			names = append(names, r.Name)
		}
	}
	if len(names) == 1 {
		return fmt.Errorf("preflight check %s blocks the upgrade: %s (fix: %s)", first.Name, model.CheckLine(first.Message), model.CheckLine(first.Remediation))
	}
	return fmt.Errorf("%d preflight checks block the upgrade: %s; see the plan's preflight results", len(names), strings.Join(names, ", "))
}
