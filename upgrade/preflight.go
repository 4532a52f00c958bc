package upgrade

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/model"
)

// Preflight checks are data, as in EKS-A (pkg/validations/upgradevalidations):
// a list of named checks, each a function of the gathered Inputs. Gathering
// does the I/O; running the checks is pure, so the TUI re-runs them on every
// snapshot and the headless plan runs them once, with the same results.

// Stable names of the live checks (the version rules are named in model).
const (
	CheckManagementComponents = "management-components"
	CheckTargetRelease        = model.CheckNameTargetRelease
	CheckSpecAccepted         = "spec-accepted"
	CheckControlPlaneReady    = "control-plane-ready"
	CheckEtcdReady            = "etcd-ready"
	CheckWorkersReady         = "workers-ready"
	CheckNodesReady           = "nodes-ready"
	CheckNoFailureMessage     = "no-failure-message"
	CheckGenerationObserved   = "generation-observed"
	CheckReconcileNotPaused   = "eksa-reconcile-not-paused"
	CheckUpgradeLock          = "upgrade-lock"
	CheckEtcdUpgradingMarker  = "etcd-upgrading-annotation"
	CheckNodeUpgradeLabel     = "node-upgrade-label"
)

// Inputs is everything the checks read.
type Inputs struct {
	Now     time.Time
	Current *Current
	Target  *Target
	// State is the live snapshot of the cluster's objects (from the watchers).
	State *model.ClusterState
	// Lock is the upgrade lock as read; nil when no lease exists.
	Lock *LockStatus
	// LockErr is why the lock could not be read (the identity may not get
	// the Lease): nil when it was.
	LockErr *LockForbiddenError
	// CurrentSpec is whether the cluster has reached its Cluster's spec
	// (model.SpecStatusOf State at Now; nil without the Cluster).
	CurrentSpec *model.SpecStatus
	// Access is whether the identity may make the apply's own writes (the
	// lock, the snapshot); nil when not asked.
	Access *ApplyAccess
	// System is the namespace of the lock and the snapshot (eksa-system).
	System string
	// Self is this console: its own lock does not block it.
	Self Holder
	// NodeLabel is the label that marks a node whose upgrade is in progress
	// (model.LabelUpgradeInProgress when empty).
	NodeLabel string
	// ForceConflicts: the apply takes over fields another manager owns.
	ForceConflicts bool
}

// Check is one named preflight check.
type Check struct {
	Name string
	// Title is the check as a row of the preflight list reads.
	Title string
	// Skippable checks may be skipped by name with --skip: the operator knows
	// better (a NotReady node the upgrade will replace). The others guard
	// against a refused or harmful apply.
	Skippable bool
	Run       func(ctx context.Context, in *Inputs) model.CheckResult
}

// Checks is the preflight list, in the order it is shown.
var Checks = []Check{
	{Name: model.CheckNameEKSAVersionSkew, Title: "EKS-A version skew", Run: checkEKSASkew},
	{Name: model.CheckNameKubernetesVersionSkew, Title: "Kubernetes version skew", Run: checkKubeSkew},
	{Name: model.CheckNameWorkerVersionSkew, Title: "Worker group version skew", Run: checkWorkerSkew},
	{Name: model.CheckNameTargetKubernetesKnown, Title: "Target Kubernetes in the bundles", Run: checkTargetKnown},
	{Name: CheckTargetRelease, Title: "Target EKSARelease present", Run: checkTargetRelease},
	{Name: CheckExtendedSupport, Title: "Extended Kubernetes support licensed", Run: checkExtendedSupport},
	{Name: CheckSpecAccepted, Title: "Spec accepted by the API server", Run: checkSpecAccepted},
	{Name: CheckImmutableFields, Title: "No field EKS-A keeps for the cluster's life changes", Run: checkImmutable},
	// Skippable: a provider newer than the console (a kind it does not
	// know) must not leave the operator without a way forward.
	{Name: CheckProviderRefs, Title: "Datacenter and machine configs referred to are there", Skippable: true, Run: checkProviderRefs},
	{Name: CheckMachineTemplates, Title: "Machine config images named for the target", Run: checkMachineTemplates},
	{Name: CheckManagementComponents, Title: "Management components new enough", Run: checkManagement},
	{Name: CheckUpgradeLock, Title: "No other upgrade running", Run: checkLock},
	{Name: CheckApplyAccess, Title: "May take the lock and save the snapshot", Run: checkApplyAccess},
	{Name: CheckReconcileNotPaused, Title: "EKS-A reconcile not paused", Run: checkPaused},
	{Name: CheckGenerationObserved, Title: "Generation observed", Run: checkGeneration},
	{Name: CheckNoFailureMessage, Title: "No failureMessage", Skippable: true, Run: checkFailure},
	{Name: CheckEtcdReady, Title: "etcd ready", Run: checkEtcd},
	{Name: CheckEtcdUpgradingMarker, Title: "No leftover etcd upgrading marker", Skippable: true, Run: checkEtcdMarker},
	{Name: CheckControlPlaneReady, Title: "Control plane ready", Run: checkControlPlane},
	{Name: CheckWorkersReady, Title: "Worker groups ready", Skippable: true, Run: checkWorkers},
	{Name: CheckNodesReady, Title: "Nodes ready", Skippable: true, Run: checkNodes},
	{Name: CheckNodeUpgradeLabel, Title: "No node marked upgrade-in-progress", Skippable: true, Run: checkNodeLabel},
}

// CheckByName returns the check of that name.
func CheckByName(name string) (Check, bool) {
	for _, c := range Checks {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}

// ValidateSkips checks --skip values: every name must be a check, and a
// skippable one. The error lists what may be skipped.
func ValidateSkips(skips []string) error {
	var skippable []string
	for _, c := range Checks {
		if c.Skippable {
			skippable = append(skippable, c.Name)
		}
	}
	for _, s := range skips {
		c, ok := CheckByName(s)
		switch {
		case !ok:
			return &model.InputError{Source: "--skip", Problem: fmt.Sprintf("no preflight check is named %q", s),
				Fix: "skippable checks: " + strings.Join(skippable, ", ")}
		case !c.Skippable:
			return &model.InputError{Source: "--skip", Problem: fmt.Sprintf("check %q cannot be skipped: it guards against an apply the API server refuses or that harms the cluster", s),
				Fix: "fix what it reports; skippable checks: " + strings.Join(skippable, ", ")}
		}
	}
	return nil
}

// RunChecks runs the checks in order. A skipped check still runs, so the
// operator sees what was skipped; its failure does not block.
func RunChecks(ctx context.Context, checks []Check, in *Inputs, skips []string) []model.CheckResult {
	skip := map[string]bool{}
	for _, s := range skips {
		skip[s] = true
	}
	if in.State == nil {
		// No snapshot: every live check reports the cluster as not visible.
		cp := *in
		cp.State = &model.ClusterState{}
		in = &cp
	}
	out := make([]model.CheckResult, 0, len(checks))
	for _, c := range checks {
		r := c.Run(ctx, in)
		r.Name = c.Name
		r.Skippable = c.Skippable
		if r.Status == model.CheckFail {
			r.Blocking = true
		}
		if skip[c.Name] && c.Skippable {
			skipResult(&r)
		}
		out = append(out, r)
	}
	return out
}

// SkipResults applies --skip to results computed elsewhere (the offline
// plan's checks), as RunChecks does to its own; skips must have passed
// ValidateSkips.
func SkipResults(results []model.CheckResult, skips []string) {
	for i := range results {
		r := &results[i]
		if c, ok := CheckByName(r.Name); ok && c.Skippable && slices.Contains(skips, r.Name) {
			r.Skippable = true
			skipResult(r)
		}
	}
}

func skipResult(r *model.CheckResult) {
	r.Message = "skipped by the operator (--skip " + r.Name + "): " + r.Message
	r.Status = model.CheckSkipped
	r.Blocking = false
}

func pass(msg string) model.CheckResult {
	return model.CheckResult{Status: model.CheckPass, Message: msg}
}

func failed(msg, fix string) model.CheckResult {
	return model.CheckResult{Status: model.CheckFail, Message: msg, Remediation: fix, Blocking: true}
}

func warn(msg, fix string) model.CheckResult {
	return model.CheckResult{Status: model.CheckWarn, Message: msg, Remediation: fix}
}

// eksaVersions are the current and target EKS-A versions, taken from the
// Bundles' eksa component when the spec does not name them.
func (in *Inputs) eksaVersions() (cur, tgt string) {
	cur, tgt = in.Current.EksaVersion, in.Target.EksaVersion
	if cur == "" && in.Current.Bundles != nil && len(in.Current.Bundles.VersionsBundles) > 0 {
		cur = in.Current.Bundles.VersionsBundles[0].Components["eksa"]
	}
	if tgt == "" && in.Target.Bundles != nil && len(in.Target.Bundles.VersionsBundles) > 0 {
		tgt = in.Target.Bundles.VersionsBundles[0].Components["eksa"]
	}
	return cur, tgt
}

func checkEKSASkew(_ context.Context, in *Inputs) model.CheckResult {
	cur, tgt := in.eksaVersions()
	if cur == "" || tgt == "" {
		return warn("the current or target EKS-A version is unknown", "set spec.eksaVersion in the spec file")
	}
	var applied *unstructured.Unstructured
	if in.Target.Spec != nil {
		applied = in.Target.Spec.Cluster
	}
	return eksaSkew(in.Current.Cluster, applied, cur, tgt)
}

// eksaSkew judges an EKS-A version change cur → tgt of the Cluster c as
// EKS-A's webhook does.
func eksaSkew(c, applied *unstructured.Unstructured, cur, tgt string) model.CheckResult {
	reason, _, _ := unstructured.NestedString(c.Object, "status", "failureReason")
	r := model.CheckEKSAVersionSkewFrom(cur, tgt, reason == model.FailureReasonEksaVersionInvalid)
	if !r.Failed() {
		return r
	}
	// EKS-A's webhook reads the annotation on the object being applied.
	v, where := afterApply(c, applied, "metadata", "annotations", "anywhere.eks.amazonaws.com/skip-eksa-version-skew-check")
	if v == "true" {
		return warn(r.Message+" ("+where+" skip-eksa-version-skew-check annotation lets it through)", r.Remediation)
	}
	return r
}

// afterApply is a string field as the Cluster will have it once the spec
// file is applied: the file's value where it sets the field, else the
// Cluster's (server-side apply keeps another manager's fields); where says
// whose it is.
func afterApply(live, applied *unstructured.Unstructured, fields ...string) (v, where string) {
	if applied != nil {
		if s, ok, _ := unstructured.NestedString(applied.Object, fields...); ok {
			return s, "the spec file's"
		}
	}
	if live != nil {
		s, _, _ := unstructured.NestedString(live.Object, fields...)
		return s, "the Cluster's"
	}
	return "", ""
}

// targetVersionFirst is the error of a target that could not be resolved
// from the cluster (its EKSARelease missing), unless the spec's eksaVersion
// is one EKS-A refuses for this cluster (not a version, a downgrade, minors
// skipped): then that is the error. No release of such a version is to be
// installed, and the missing release's fix (install its management
// components first) would downgrade them or skip minors.
func targetVersionFirst(cur *Current, spec *SpecFile, err error) error {
	v := spec.EksaVersion()
	if v == "" || cur == nil || cur.Cluster == nil {
		return err
	}
	field := "Cluster " + spec.Cluster.GetName() + ": spec.eksaVersion"
	if r := eksaSkew(cur.Cluster, spec.Cluster, cur.EksaVersion, v); r.Failed() {
		return &model.InputError{Source: spec.Path, Field: field, Problem: r.Message + " (" + r.Name + ")", Fix: r.Remediation}
	}
	// Below the management components (a patch down, which EKS-A's
	// skew rule lets through): installing that release's components, the
	// missing release's fix, would downgrade them.
	if model.ManagementBehind(v, cur.ManagementVersion) {
		return &model.InputError{Source: spec.Path, Field: field,
			Problem: fmt.Sprintf("%s is older than the management components (%s), and the cluster holds no EKSARelease of it: EKS-A installs no release below the components it runs", v, cur.ManagementVersion),
			Fix:     fmt.Sprintf("set spec.eksaVersion to %s (the management components' release) or newer", cur.ManagementVersion)}
	}
	return err
}

func checkKubeSkew(_ context.Context, in *Inputs) model.CheckResult {
	return model.CheckKubernetesVersionSkewIn(in.Target.Bundles, in.Current.KubernetesVersion, in.Target.KubernetesVersion)
}

func checkWorkerSkew(_ context.Context, in *Inputs) model.CheckResult {
	return model.CheckWorkerVersionSkew(in.Target.KubernetesVersion, workerGroupsFrom(in.Current, in.Target.WorkerGroups))
}

// workerGroupsFrom are the target's worker groups with what each runs now
// (c's), so that a lower target reads as the downgrade it is and a plan
// row goes from the version the group is on.
func workerGroupsFrom(c *Current, groups []model.WorkerGroup) []model.WorkerGroup {
	if c == nil {
		return groups
	}
	was := map[string]model.WorkerGroup{}
	for _, g := range c.WorkerGroups {
		was[g.Name] = g
	}
	groups = slices.Clone(groups)
	for i := range groups {
		g, ok := was[groups[i].Name]
		if !ok {
			continue // a new group: only its skew from the control plane counts
		}
		groups[i].Was = cmp.Or(g.KubernetesVersion, c.KubernetesVersion)
		groups[i].WasPinned = g.KubernetesVersion != ""
		groups[i].WasControlPlane = c.KubernetesVersion
	}
	return groups
}

func checkTargetKnown(_ context.Context, in *Inputs) model.CheckResult {
	current := ""
	if in.Current != nil {
		current = in.Current.KubernetesVersion
	}
	return model.CheckTargetKubernetesKnownFor(in.Target.Bundles, in.Target.KubernetesVersion, current, in.Target.WorkerGroups)
}

func checkTargetRelease(_ context.Context, in *Inputs) model.CheckResult {
	t := in.Target
	if t.BundlesVia == BundlesViaRef && t.BundlesFile == "" {
		return warn(fmt.Sprintf("the spec sets the deprecated spec.bundlesRef (%s), which EKS-A reads before spec.eksaVersion: the plan shows that Bundles' components", t.Bundles.Source),
			"remove spec.bundlesRef from the spec file so that EKS-A reads the Bundles of the release spec.eksaVersion names")
	}
	if t.EksaVersion == "" {
		return warn("the spec file sets no spec.eksaVersion; the cluster keeps its release", "")
	}
	if t.Release == nil {
		msg := fmt.Sprintf("EKSARelease %s for EKS-A %s is not in the cluster", model.EKSAReleaseName(t.EksaVersion), t.EksaVersion)
		fix := fmt.Sprintf("install the %s management components first (eksctl anywhere upgrade management-components -f <cluster.yaml> with the %s CLI); the EKS-A controller cannot reconcile a release it does not know", t.EksaVersion, t.EksaVersion)
		var ie *model.InputError
		switch {
		case errors.As(t.ReleaseErr, &ie):
			// Its problem alone: its fix, said as the check's, read twice.
			msg = ie.Source + ": " + ie.Problem
			if !strings.HasPrefix(ie.Problem, "not found") {
				fix = ie.Fix
			}
		case t.ReleaseErr != nil:
			msg = t.ReleaseErr.Error()
		}
		return failed(msg, fix)
	}
	if t.BundlesFile != "" && t.Bundles != nil {
		if r := checkBundlesFile(t, in.conn()); r.Status != model.CheckPass {
			return r
		}
	}
	return pass(fmt.Sprintf("EKSARelease %s → Bundles %s/%s", t.Release.Name, t.Release.BundlesRefNamespace, t.Release.BundlesRefName))
}

// checkSpecAccepted reads the API server's answer to a server-side dry run
// of the spec: the CRDs' schemas and the webhooks judge every field, where
// the plan's own parsing reads only those it needs (a `count: three` passed
// it, and only the apply was refused).
func checkSpecAccepted(_ context.Context, in *Inputs) model.CheckResult {
	t := in.Target
	switch {
	case t == nil || t.Spec == nil || (t.SpecDryRun == nil && t.SpecDryRunErr == nil):
		return pass("not asked (no cluster)")
	case t.SpecDryRunErr != nil:
		return warn("the API server could not be asked to validate the spec: "+t.SpecDryRunErr.Error(),
			"`upgrade-console apply -f "+t.Spec.Path+" "+in.clusterFlags()+" --dry-run` shows its answer")
	}
	if rej := t.SpecDryRun.Rejected(); len(rej) > 0 {
		msgs := make([]string, 0, len(rej))
		forbidden, notServed, denied := true, true, true
		// The can-i the fix gives is of the first refused object: a
		// refused VSphereMachineConfig was sent to check clusters.
		resource, ns := GVREKSACluster.Resource+"."+GVREKSACluster.Group, t.Spec.Cluster.GetNamespace()
		for i, o := range rej {
			msgs = append(msgs, o.Object+": "+model.JoinLines(strings.TrimPrefix(o.Error, o.Object+": ")))
			forbidden = forbidden && o.Forbidden
			notServed = notServed && o.NotServed
			denied = denied && o.Denied
			if i == 0 && o.resource != "" {
				resource, ns = o.resource, o.namespace
			}
		}
		fix := "fix " + t.Spec.Path + " where the API server says (a field of the wrong type or outside its allowed values), then plan again"
		switch {
		case denied:
			fix = "the cluster's admission control (EKS-A's webhook, or a policy of the cluster) does not allow this change, in its words above: a Kubernetes or EKS-A version more than one minor ahead, a downgrade or an immutable field changed take another path (an intermediate release, a new cluster); no other value of the same field is the fix"
		case notServed:
			fix = "check the kind and apiVersion of those documents against what the cluster serves (`kubectl" + in.conn().String() + " api-resources --api-group " + GVREKSACluster.Group + "`): a misspelt kind, or a provider's kind that is not installed in this cluster, is never applied"
		case forbidden:
			fix = "the identity the console connects as may not write these objects: use a kubeconfig, --context or --as with the rights to patch them (`kubectl" + in.conn().String() + " auth can-i patch " + resource + nsFlag(ns) + "`)"
		}
		return failed("the API server refuses "+strings.Join(msgs, "; "), fix)
	}
	msg := fmt.Sprintf("a server-side dry run of the %d object(s) in %s was accepted", len(t.SpecDryRun.Objects), t.Spec.Path)
	if c := t.SpecDryRun.Conflicts; len(c) > 0 {
		// Without --force-conflicts the apply refuses them (exit 3): a
		// plan that passed with exit 0 was followed by an apply refused.
		var managers []string
		for _, f := range c {
			if m := cmp.Or(f.Manager, "another manager"); !slices.Contains(managers, m) {
				managers = append(managers, m)
			}
		}
		msg += fmt.Sprintf("; %d field(s) it changes are owned by %s", len(c), strings.Join(managers, ", "))
		if !in.ForceConflicts {
			how := "`apply --force-conflicts`, or the take-over box of the plan screen's confirmation (tab); it is recorded in the audit log"
			fix := "take them over only if their manager (a GitOps controller, say) will not put them back: " + how + "; or change them where it reads them"
			if SoleManager(c) == eksaCLIManager {
				fix = "take them over: " + how + ". " + eksaCLIManager + " is the EKS-A CLI, which owns the spec's fields on a cluster it created and itself applies with forced ownership"
			}
			return warn(msg+": an apply without --force-conflicts refuses them", fix)
		}
		msg += ", taken over (--force-conflicts)"
	}
	if t.SpecDryRun.Changes() == 0 {
		if s := in.CurrentSpec; s.NotReached() {
			// The Cluster's spec is this spec, but the cluster is not
			// there: "already runs" read as the upgrade being done.
			msg += "; it changes nothing: the Cluster's spec is already this spec, but the cluster has not reached it (" + s.Message + ")"
		} else {
			msg += "; it changes nothing: the cluster already runs this spec"
		}
	}
	return pass(msg)
}

// checkBundlesFile checks that a --to-bundles file is the Bundles the spec's
// EKSARelease names: the plan shows the file's components, while the
// controller installs the release's. Another release's file showed a real
// upgrade as "all components are up to date" (or as a downgrade).
// conn are the console's connection flags, which its kubectl carries.
func checkBundlesFile(t *Target, conn model.ConnFlags) model.CheckResult {
	if t.Release.BundlesRefName == "" {
		return pass("")
	}
	if t.Bundles.Name == t.Release.BundlesRefName {
		if t.ClusterBundles == nil {
			return pass("")
		}
		// Same name, other contents: an edited copy would plan versions
		// the controller never installs.
		diff := t.Bundles.Differences(t.ClusterBundles)
		if len(diff) == 0 {
			return pass("")
		}
		const most = 3
		more := ""
		if len(diff) > most {
			more = fmt.Sprintf(" and %d more", len(diff)-most)
			diff = diff[:most]
		}
		return failed(fmt.Sprintf("--to-bundles %s differs from the cluster's Bundles %s/%s, which the controller installs (here: the file; there: the cluster): %s%s",
			t.BundlesFile, cmp.Or(t.Release.BundlesRefNamespace, "eksa-system"), t.Release.BundlesRefName, strings.Join(diff, "; "), more),
			"leave --to-bundles out (the plan then reads the cluster's), or give it the cluster's copy (`kubectl"+conn.String()+" -n "+cmp.Or(t.Release.BundlesRefNamespace, "eksa-system")+" get bundles "+t.Release.BundlesRefName+" -o yaml`)")
	}
	return failed(fmt.Sprintf("--to-bundles %s is Bundles %s, but EKSARelease %s (spec.eksaVersion %s) names Bundles %s: the plan would not show what the controller installs",
		t.BundlesFile, cmp.Or(t.Bundles.Name, "(unnamed)"), t.Release.Name, t.EksaVersion, t.Release.BundlesRefName),
		fmt.Sprintf("give --to-bundles the Bundles %s (`kubectl%s -n %s get bundles %s -o yaml`), or leave --to-bundles out", t.Release.BundlesRefName, conn, cmp.Or(t.Release.BundlesRefNamespace, "eksa-system"), t.Release.BundlesRefName))
}

func checkManagement(_ context.Context, in *Inputs) model.CheckResult {
	installed := in.Current.ManagementVersion
	_, tgt := in.eksaVersions()
	if mgr := in.Current.ManagedBy; mgr != "" {
		return checkManagementOf(in, mgr, installed, tgt)
	}
	if installed == "" || tgt == "" {
		return warn("the management components' version is unknown (no "+model.AnnotationManagementComponentsVersion+" annotation and no spec.eksaVersion)",
			"check the EKS-A controller's version: `kubectl"+in.conn().String()+" -n eksa-system get deploy eksa-controller-manager -o wide`")
	}
	if err := in.Current.ManagementErr; err != nil {
		// The diff's management rows then come from the cluster's release.
		return warn(fmt.Sprintf("the management components' release %s cannot be read: %v", installed, err),
			"check the EKSARelease named by the Cluster's "+model.AnnotationManagementComponentsVersion+" annotation; the component diff uses the cluster's own release meanwhile")
	}
	old, err := model.EKSAVersionLess(installed, tgt)
	if err != nil {
		return warn(fmt.Sprintf("cannot compare the management components' version %s with the target %s: %v", installed, tgt, err), "")
	}
	if old {
		// EKS-A upgrades a management cluster's components with its CLI
		// alone, never from a spec applied through the API, and runs no
		// cluster components newer than its management components: the
		// older controller would be left to reconcile a release it
		// predates.
		return failed(fmt.Sprintf("the management components are at %s, older than the target release %s: EKS-A upgrades a management cluster's components only with its CLI, never from an applied spec, and runs no cluster components newer than them", installed, tgt),
			fmt.Sprintf("upgrade them first: `eksctl anywhere upgrade management-components -f <cluster.yaml>` with the %s CLI, then plan again", tgt))
	}
	return pass(fmt.Sprintf("management components at %s", installed))
}

// checkManagementOf judges a workload cluster's upgrade against the
// components of the management cluster mgr, which reconciles it: EKS-A
// upgrades them with the management cluster (its CLI's upgrade
// management-components refuses a cluster that is not self-managed), never
// with a workload cluster, and runs no cluster components newer than them.
func checkManagementOf(in *Inputs, mgr, installed, tgt string) model.CheckResult {
	mgmtRef := "Cluster " + in.Current.ManagementNamespace + "/" + mgr
	if installed == "" {
		if err := in.Current.ManagementErr; err != nil {
			fix := "check it: `kubectl" + in.conn().String() + " -n " + in.Current.Namespace + " get clusters.anywhere.eks.amazonaws.com " + mgr + " -o yaml`"
			if !isAPIStatus(err) {
				// None or several found: EKS-A looks in every namespace
				// when the workload cluster's has none of that name.
				fix = "`kubectl" + in.conn().String() + " get clusters.anywhere.eks.amazonaws.com -A --field-selector metadata.name=" + mgr + "` lists the Clusters of that name; " +
					"spec.managementCluster.name of Cluster " + in.Current.Namespace + "/" + in.Current.Name + " must name exactly one, in its own namespace or in one other"
			}
			return warn(fmt.Sprintf("the version of the components of management cluster %s is unknown: %v", mgr, err), fix)
		}
		return warn(fmt.Sprintf("the version of the components of management cluster %s is unknown: %s has no %s annotation and no spec.eksaVersion", mgr, mgmtRef, model.AnnotationManagementComponentsVersion),
			"check the EKS-A controller's version: `kubectl"+in.conn().String()+" -n eksa-system get deploy eksa-controller-manager -o wide`")
	}
	if tgt == "" {
		return pass(fmt.Sprintf("management components of %s at %s", mgr, installed))
	}
	old, err := model.EKSAVersionLess(installed, tgt)
	if err != nil {
		return warn(fmt.Sprintf("cannot compare the version %s of management cluster %s's components with the target %s: %v", installed, mgr, tgt, err), "")
	}
	if old {
		return failed(fmt.Sprintf("the components of management cluster %s are at %s, older than the target release %s: EKS-A runs no cluster components newer than the management cluster's, and upgrades those only with the management cluster", mgr, installed, tgt),
			fmt.Sprintf("upgrade management cluster %s first (`eksctl anywhere upgrade management-components -f <%s's cluster.yaml>` with the %s CLI, or its cluster upgrade), then plan again", mgr, mgr, tgt))
	}
	return pass(fmt.Sprintf("management components of %s at %s", mgr, installed))
}

func checkLock(_ context.Context, in *Inputs) model.CheckResult {
	l := in.Lock
	switch {
	case in.LockErr != nil:
		// Nothing tells whether another console holds it: an apply could
		// run beside another upgrade.
		e := in.LockErr
		return failed(fmt.Sprintf("cannot tell whether another console holds the upgrade lock: the console may not read Lease %s/%s (%s)", e.Namespace, e.Name, e.Refusal()),
			e.Fix(in.conn()))
	case !l.Held():
		return pass("no console holds the upgrade lock")
	case l.Kept != "":
		// Kept so that nobody, this console included, starts again before
		// the cluster is looked at.
		return failed(fmt.Sprintf("upgrade lock kept: Lease %s/%s %s", l.Namespace, l.Name, l.Describe(in.Now)),
			fmt.Sprintf("find out why that upgrade ended (`upgrade-console watch %s`, `upgrade-console audit --cluster %s`), then `upgrade-console lock clear lease %s`", in.clusterFlags(), in.clusterName(), in.clusterFlags()))
	case l.HolderIdentity == in.Self.String():
		return pass("this console holds the upgrade lock")
	case l.Expired(in.Now):
		return failed(fmt.Sprintf("stale upgrade lock: Lease %s/%s %s", l.Namespace, l.Name, l.Describe(in.Now)),
			fmt.Sprintf("make sure no upgrade is running (the holder's console is gone or its upgrade failed), then `upgrade-console lock clear lease %s`", in.clusterFlags()))
	default:
		return failed(fmt.Sprintf("another console holds the upgrade lock (an upgrade or a recovery action of its own under way): Lease %s/%s %s", l.Namespace, l.Name, l.Describe(in.Now)),
			fmt.Sprintf("wait for %s to finish, or ask them", l.Holder.Display()))
	}
}

// clusterName names the cluster in a fix the operator pastes.
func (in *Inputs) clusterName() string {
	if in.State != nil && in.State.Cluster != nil {
		return in.State.Cluster.Name
	}
	return "<cluster>"
}

// clusterFlags name the cluster and the console's connection in a command
// the operator pastes (not audit's: it reads a local file).
func (in *Inputs) clusterFlags() string {
	ns := ""
	if in.State != nil && in.State.Cluster != nil {
		ns = in.State.Cluster.Namespace
	}
	return model.ClusterArgs(in.clusterName(), ns, in.conn())
}

// conn are the console's connection flags, for the commands a fix names.
func (in *Inputs) conn() model.ConnFlags {
	if in.State == nil {
		return nil
	}
	return in.State.Conn
}

// cluster returns the live EKS-A Cluster, or a failed result when the
// watchers have not seen it.
func (in *Inputs) cluster() (*model.EKSACluster, *model.CheckResult) {
	if in.State == nil || in.State.Cluster == nil {
		r := failed("the EKS-A Cluster is not visible to the console", "check --cluster, --namespace and the kubeconfig's permissions")
		if in.State != nil {
			if f := in.State.Source(model.KindEKSACluster).Forbidden; f != "" {
				r.Message = "cannot read the EKS-A Cluster: forbidden to " + f
				if fix := model.GrantFor(f, in.conn()); fix != "" {
					r.Remediation = fix
				}
			}
		}
		return nil, &r
	}
	return in.State.Cluster, nil
}

func checkPaused(_ context.Context, in *Inputs) model.CheckResult {
	c, bad := in.cluster()
	if bad != nil {
		return *bad
	}
	if r, ok := pausedBySpec(in.Target); ok {
		return r
	}
	if c.ManagedByCLI() {
		return failed(fmt.Sprintf("%s=true on Cluster %s: the EKS-A CLI (eksctl anywhere) is driving an operation and the controller takes no action, so the new spec would not be reconciled", model.AnnotationManagedByCLI, c.Name),
			fmt.Sprintf("wait for that eksctl anywhere run to end; if none runs (an interrupted one leaves it behind), clear it with `upgrade-console lock clear managed-by-cli paused %s --force` (recorded)", in.clusterFlags()))
	}
	if r, ok := c.EtcdRollback(); ok {
		// The pause is the rollback's, on purpose: resumed, EKS-A applies
		// the new etcd spec again, and the member that did not come up
		// fails the same way.
		if r.Running() {
			return failed(fmt.Sprintf("%s=true on Cluster %s: upgrade-console's etcd rollback%s is not finished, and EKS-A stays paused after it", model.AnnotationEKSAPaused, c.Name, rollbackOf(r)),
				fmt.Sprintf("finish it: run `upgrade-console etcd rollback %s` again; then find and fix why the new etcd member did not come up before resuming EKS-A", c.ClusterFlags(in.conn())))
		}
		return failed(fmt.Sprintf("%s=true on Cluster %s: kept by the etcd rollback%s until the cause of the failed etcd member is fixed; resuming EKS-A reconcile makes it apply the new etcd spec again", model.AnnotationEKSAPaused, c.Name, rollbackOf(r)),
			fmt.Sprintf("first find and fix why the new etcd member%s did not come up (etcdadm-controller logs, the machine's infrastructure status, the %s-etcd-init Secret); then `upgrade-console lock clear paused %s` (recorded), which starts the same etcd rollout again. A spec to change first (an etcd machine config) is applied while paused with kubectl, not this console", machineOf(r), c.Name, c.ClusterFlags(in.conn())))
	}
	if c.Paused() {
		return failed(fmt.Sprintf("%s=true on Cluster %s: the EKS-A controller ignores the cluster, the new spec would never be reconciled", model.AnnotationEKSAPaused, c.Name),
			fmt.Sprintf("if no other tool is working on the cluster (a failed eksctl upgrade leaves it behind), see `upgrade-console lock status %s`, then clear it with `upgrade-console lock clear paused %s` (recorded)", in.clusterFlags(), in.clusterFlags()))
	}
	// EKS-A's etcd restore procedure pauses the Cluster API Cluster, and
	// so do backups and moves of CAPI objects; left paused, EKS-A writes
	// the new spec to the KubeadmControlPlane and the MachineDeployments and
	// Cluster API acts on none of it.
	if cc := in.State.CAPICluster; cc != nil && cc.Paused {
		return failed(fmt.Sprintf("spec.paused is true on the Cluster API Cluster %s/%s: Cluster API reconciles none of the cluster's objects, so no machine would be upgraded", cc.Namespace, cc.Name),
			fmt.Sprintf("find who paused it (an etcd restore, a backup, `clusterctl move`) and let that finish; if nothing is working on the cluster, resume it: `%s`", cc.ResumeCommand(in.conn())))
	}
	return pass("the EKS-A controller reconciles the cluster")
}

// pausedBySpec fails the check when the spec file itself sets an annotation
// that stops EKS-A: a `kubectl get -o yaml` of a cluster a failed eksctl run
// left paused carries it, and applied, the console paused EKS-A itself, then
// watched an upgrade that could not move.
func pausedBySpec(t *Target) (model.CheckResult, bool) {
	if t == nil || t.Spec == nil || t.Spec.Cluster == nil {
		return model.CheckResult{}, false
	}
	a := t.Spec.Cluster.GetAnnotations()
	for _, k := range []string{model.AnnotationEKSAPaused, model.AnnotationManagedByCLI} {
		if v, ok := a[k]; ok && v == "true" {
			return failed(fmt.Sprintf("%s: Cluster %s: metadata.annotations sets %s=%q: applied, it stops the EKS-A controller, so the new spec would never be reconciled", t.Spec.Path, t.Spec.Cluster.GetName(), k, v),
				fmt.Sprintf("remove the annotation %s from the spec file (an exported paused cluster carries it); to pause EKS-A on purpose, annotate the cluster with kubectl instead", k)), true
		}
	}
	return model.CheckResult{}, false
}

// rollbackOf is " of <when> by <who>" for an etcd rollback record, as much
// as it says.
func rollbackOf(r model.EtcdRollbackRecord) string {
	s := ""
	if !r.StartedAt.IsZero() {
		s += " of " + r.StartedAt.UTC().Format(time.RFC3339)
	}
	if r.By != "" {
		s += " by " + r.By
	}
	return s
}

// machineOf names the etcd member that did not come up, when recorded.
func machineOf(r model.EtcdRollbackRecord) string {
	if r.NewMachine == "" {
		return ""
	}
	return " (Machine " + r.NewMachine + ")"
}

// waitFix is the fix of a check that waits for EKS-A to report something:
// while its reconcile is paused (or the EKS-A CLI holds the cluster) EKS-A
// reports nothing, so waiting would never end; nor while the upgrade has
// failed (spec, the plan's currentSpec: a failureMessage, or an in-place
// step failed past the waiters' grace), which only what gets past the
// failure ends.
func waitFix(c *model.EKSACluster, conn model.ConnFlags, spec *model.SpecStatus, what string) string {
	switch {
	case c.ManagedByCLI():
		return fmt.Sprintf("EKS-A will not report %s while the EKS-A CLI holds the cluster (%s): the controller takes no action; see eksa-reconcile-not-paused", what, model.AnnotationManagedByCLI)
	case spec.Failure() != "":
		return failedFix(spec, what)
	case spec.HeldBy() != "":
		return fmt.Sprintf("EKS-A will not report %s while a failed step holds the upgrade (%s): %s", what, spec.HeldBy(), spec.Next)
	case !c.Paused():
		return "wait for EKS-A to report " + what
	}
	if r, ok := c.EtcdRollback(); ok && !r.Running() {
		return fmt.Sprintf("EKS-A will not report %s while its reconcile is paused, and the etcd rollback keeps it paused: find and fix why the new etcd member did not come up, then `upgrade-console lock clear paused %s` (see eksa-reconcile-not-paused)", what, c.ClusterFlags(conn))
	} else if ok {
		return fmt.Sprintf("EKS-A will not report %s while its reconcile is paused by the etcd rollback under way: see eksa-reconcile-not-paused", what)
	}
	return fmt.Sprintf("EKS-A will not report %s while its reconcile is paused (%s): see eksa-reconcile-not-paused for whose pause it is and how to resume", what, model.AnnotationEKSAPaused)
}

// failedFix is the fix of a check that waits for EKS-A to report what,
// while the upgrade has failed (spec.Failure): waiting does not end it;
// what the failure needs does.
func failedFix(spec *model.SpecStatus, what string) string {
	return fmt.Sprintf("EKS-A will not report %s while the upgrade stays failed (%s): %s", what, spec.Failure(), spec.Next)
}

func checkGeneration(_ context.Context, in *Inputs) model.CheckResult {
	c, bad := in.cluster()
	if bad != nil {
		return *bad
	}
	var stale []string
	if c.Stale() {
		stale = append(stale, fmt.Sprintf("Cluster %s (generation %d, observed %d)", c.Name, c.Generation, c.ObservedGeneration))
	}
	s := in.State
	if s.ControlPlane != nil && s.ControlPlane.Stale() {
		stale = append(stale, fmt.Sprintf("KubeadmControlPlane %s (generation %d, observed %d)", s.ControlPlane.Name, s.ControlPlane.Generation, s.ControlPlane.ObservedGeneration))
	}
	if s.Etcd != nil && s.Etcd.Stale() {
		stale = append(stale, fmt.Sprintf("EtcdadmCluster %s (generation %d, observed %d)", s.Etcd.Name, s.Etcd.Generation, s.Etcd.ObservedGeneration))
	}
	for i := range s.MachineDeployments {
		md := &s.MachineDeployments[i]
		if md.Stale() {
			stale = append(stale, fmt.Sprintf("MachineDeployment %s (generation %d, observed %d)", md.Name, md.Generation, md.ObservedGeneration))
		}
	}
	if len(stale) > 0 {
		fix := "wait for the running reconcile to finish (a previous change is still being applied); if it never does, check the eksa-controller-manager and CAPI controller logs"
		if c.Paused() || c.ManagedByCLI() {
			// Waiting never ends while nothing reconciles: the pause is
			// the fix, as for the checks that wait on EKS-A's reports.
			fix = waitFix(c, in.conn(), in.CurrentSpec, "the last change observed")
		}
		return failed("the controllers have not caught up with the last change: "+strings.Join(stale, "; "), fix)
	}
	return pass(fmt.Sprintf("every object's status describes its current spec (Cluster generation %d)", c.Generation))
}

func checkFailure(_ context.Context, in *Inputs) model.CheckResult {
	c, bad := in.cluster()
	if bad != nil {
		return *bad
	}
	if c.FailureMessage != "" {
		reason := ""
		if c.FailureReason != "" {
			reason = " (" + c.FailureReason + ")"
		}
		return failed(fmt.Sprintf("Cluster %s reports a failure%s: %s", c.Name, reason, c.FailureMessage),
			"fix what it says first; skip this check only if the new spec is the fix (e.g. it corrects the invalid field)")
	}
	if cp := in.State.ControlPlane; cp != nil && cp.FailureMessage != "" {
		return failed(fmt.Sprintf("KubeadmControlPlane %s reports a failure: %s", cp.Name, cp.FailureMessage),
			"fix the control plane first (`kubectl"+in.conn().String()+" -n eksa-system describe kubeadmcontrolplane "+cp.Name+"`)")
	}
	return pass("no failureMessage on the Cluster or the control plane")
}

func checkEtcd(_ context.Context, in *Inputs) model.CheckResult {
	c, bad := in.cluster()
	if bad != nil {
		return *bad
	}
	e := in.State.Etcd
	if e == nil {
		if c.ExternalEtcdCount > 0 {
			return failed(fmt.Sprintf("the cluster has external etcd (%d members) but EtcdadmCluster %s-etcd is not visible%s", c.ExternalEtcdCount, c.Name, notVisible(in.State, model.KindEtcdadmCluster)),
				"check that the etcdadm controller is installed and the kubeconfig may read etcdadmclusters")
		}
		return pass("stacked etcd: checked with the control plane")
	}
	// As EKS-A: status.ready and an observed generation, not the Ready
	// condition (pkg/controller/clusters/controlplane.go).
	if !e.Ready || e.Stale() {
		return failed(fmt.Sprintf("EtcdadmCluster %s is not ready (%d/%d members healthy, ready=%t, generation %d, observed %d)", e.Name, e.ReadyReplicas, e.Replicas, e.Ready, e.Generation, e.ObservedGeneration),
			"wait for etcd to become healthy; if it does not, see the etcdadm-controller logs and `upgrade-console watch "+in.clusterFlags()+"` for the member that is not ready")
	}
	return pass(fmt.Sprintf("EtcdadmCluster %s ready, %d/%d members healthy", e.Name, e.ReadyReplicas, e.Replicas))
}

func checkEtcdMarker(_ context.Context, in *Inputs) model.CheckResult {
	e := in.State.Etcd
	if e == nil || !e.Upgrading() {
		return pass("no " + model.AnnotationEtcdUpgrading + " annotation")
	}
	return failed(fmt.Sprintf("EtcdadmCluster %s still carries %s: an etcd rollout is under way, or an earlier one did not finish", e.Name, model.AnnotationEtcdUpgrading),
		fmt.Sprintf("check that no etcd rollout is running (`upgrade-console watch %s`); if none is, see `upgrade-console lock status %s` and clear it with `upgrade-console lock clear etcd-upgrading %s` (recorded)", in.clusterFlags(), in.clusterFlags(), in.clusterFlags()))
}

func checkControlPlane(_ context.Context, in *Inputs) model.CheckResult {
	c, bad := in.cluster()
	if bad != nil {
		return *bad
	}
	cp := in.State.ControlPlane
	if cp == nil {
		return failed("KubeadmControlPlane "+c.Name+" is not visible"+notVisible(in.State, model.KindKubeadmControlPlane),
			"check that CAPI is installed and the EKS-A controller generated the control plane (the Cluster's status)")
	}
	desired := deref(cp.Replicas.Desired, int32(c.ControlPlaneCount))
	ready := deref(cp.Replicas.Ready, 0)
	if ready < desired {
		fix := "wait for the control plane to be ready; `upgrade-console watch " + in.clusterFlags() + "` shows which machine is not"
		if s := in.CurrentSpec; s.Failure() != "" {
			fix = failedFix(s, "the control plane ready")
		}
		return failed(fmt.Sprintf("KubeadmControlPlane %s: %d of %d replicas ready", cp.Name, ready, desired), fix)
	}
	if cond, ok := c.Conditions.Get(model.ConditionControlPlaneReady); ok && !cond.IsTrue() {
		return failed(fmt.Sprintf("Cluster %s condition ControlPlaneReady is %s: %s %s", c.Name, cond.Status, cond.Reason, cond.Message),
			waitFix(c, in.conn(), in.CurrentSpec, "the control plane ready"))
	}
	return pass(fmt.Sprintf("KubeadmControlPlane %s: %d/%d ready", cp.Name, ready, desired))
}

func checkWorkers(_ context.Context, in *Inputs) model.CheckResult {
	c, bad := in.cluster()
	if bad != nil {
		return *bad
	}
	var notReady []string
	total := 0
	for _, md := range in.State.MachineDeployments {
		total++
		desired := deref(md.Replicas.Desired, 0)
		ready := deref(md.Replicas.Ready, 0)
		if ready < desired {
			notReady = append(notReady, fmt.Sprintf("%s %d/%d ready", md.Name, ready, desired))
		}
	}
	if len(notReady) > 0 {
		fix := "wait for the workers to be ready, or skip this check if the upgrade is meant to replace the broken machines"
		if s := in.CurrentSpec; s.Failure() != "" {
			fix = failedFix(s, "the workers ready") + "; or skip this check if the upgrade is meant to replace the broken machines"
		}
		return failed("worker groups not ready: "+strings.Join(notReady, ", "), fix)
	}
	if cond, ok := c.Conditions.Get(model.ConditionWorkersReady); ok && !cond.IsTrue() {
		return failed(fmt.Sprintf("Cluster %s condition WorkersReady is %s: %s %s", c.Name, cond.Status, cond.Reason, cond.Message),
			waitFix(c, in.conn(), in.CurrentSpec, "the workers ready"))
	}
	if total == 0 && len(c.WorkerGroups) > 0 {
		fix := "check the kubeconfig may list machinedeployments in eksa-system"
		if g := model.GrantFor(in.State.Source(model.KindMachineDeployment).Forbidden, in.conn()); g != "" {
			fix = g
		}
		return failed(fmt.Sprintf("the cluster has %d worker group(s) but no MachineDeployment is visible%s", len(c.WorkerGroups), notVisible(in.State, model.KindMachineDeployment)),
			fix)
	}
	return pass(fmt.Sprintf("%d worker group(s) ready", total))
}

func checkNodes(_ context.Context, in *Inputs) model.CheckResult {
	if in.State == nil {
		return failed("the nodes are not visible", "")
	}
	if in.State.NodesElsewhere() {
		return checkNodesByMachines(in)
	}
	if f := in.State.Source(model.KindNode).Forbidden; f != "" {
		fix := "use a kubeconfig that may list nodes"
		if g := model.GrantFor(f, in.conn()); g != "" {
			fix = g
		}
		return failed("cannot read the nodes: forbidden to "+f, fix+"; or skip this check (--skip nodes-ready) and follow the workers by their Machines")
	}
	var notReady []string
	for _, n := range in.State.Nodes.All() {
		if !n.Ready {
			notReady = append(notReady, n.Name)
		}
	}
	sort.Strings(notReady)
	if len(notReady) > 0 {
		return failed(fmt.Sprintf("%d of %d nodes not Ready: %s", len(notReady), in.State.Nodes.Len(), strings.Join(notReady, ", ")),
			"bring the nodes back (`kubectl"+in.conn().String()+" describe node`), or skip this check if the upgrade replaces them")
	}
	if in.State.Nodes.Len() == 0 {
		return warn("no Node objects visible", "check the kubeconfig points at the management cluster itself")
	}
	return pass(fmt.Sprintf("all %d nodes Ready", in.State.Nodes.Len()))
}

// checkNodesByMachines is nodes-ready for a workload cluster, whose Nodes
// are on its own API server: CAPI reads them from there into each Machine's
// NodeReady (v1beta2) or NodeHealthy condition, which are on this one.
func checkNodesByMachines(in *Inputs) model.CheckResult {
	s := in.State
	elsewhere := fmt.Sprintf("cluster %s is managed by %s: its Nodes are on its own API server, not this one", s.Cluster.Name, s.Cluster.ManagementCluster)
	src := s.Source(model.KindMachine)
	if src.Forbidden != "" || !src.Synced {
		fix := "check the nodes with the workload cluster's own kubeconfig, then skip this check (--skip nodes-ready)"
		if g := model.GrantFor(src.Forbidden, in.conn()); g != "" {
			fix = g + "; or " + fix
		}
		return warn(elsewhere+", and its Machines, which say how they are, are not visible: node health unknown", fix)
	}
	var notReady, unknown []string
	total, noNode := 0, 0
	for _, m := range s.Machines.All() {
		if m.Role == model.RoleEtcd || m.Deleting() {
			continue
		}
		if m.NodeName == "" {
			// No node yet (a Machine provisioning): nothing to be
			// Ready, as a self-managed cluster's check counts its Nodes.
			noNode++
			continue
		}
		total++
		name := m.NodeName
		switch ready, known := model.MachineNodeReady(m); {
		case !known:
			unknown = append(unknown, name)
		case !ready:
			notReady = append(notReady, name)
		}
	}
	sort.Strings(notReady)
	sort.Strings(unknown)
	check := "check them with the workload cluster's own kubeconfig (`kubectl --kubeconfig <" + s.Cluster.Name + "'s kubeconfig> describe node`)"
	if len(notReady) > 0 {
		return failed(fmt.Sprintf("%d of %d nodes not Ready by their Machines' NodeReady/NodeHealthy conditions: %s (%s)", len(notReady), total, strings.Join(notReady, ", "), elsewhere),
			"bring the nodes back: "+check+"; or skip this check if the upgrade replaces them")
	}
	if len(unknown) > 0 {
		return warn(fmt.Sprintf("%d of %d nodes have no NodeReady or NodeHealthy condition on their Machine, so their health is unknown: %s (%s)", len(unknown), total, strings.Join(unknown, ", "), elsewhere),
			check)
	}
	if total == 0 && noNode > 0 {
		return warn(fmt.Sprintf("none of the cluster's %d Machines has a node yet (all provisioning): node health unknown (%s)", noNode, elsewhere), check)
	}
	if total == 0 {
		return warn("no Machine of the cluster is visible: node health unknown ("+elsewhere+")", check)
	}
	return pass(fmt.Sprintf("all %d nodes Ready by their Machines' NodeReady/NodeHealthy conditions (%s)", total, elsewhere))
}

func checkNodeLabel(_ context.Context, in *Inputs) model.CheckResult {
	key := in.NodeLabel
	if key == "" {
		key = model.LabelUpgradeInProgress
	}
	if in.State.NodesElsewhere() {
		c := in.State.Cluster
		return warn(fmt.Sprintf("not checked: cluster %s is managed by %s, and its Nodes, which would carry %s, are on its own API server, not this one", c.Name, c.ManagementCluster, key),
			"check with the workload cluster's own kubeconfig: `kubectl --kubeconfig <"+c.Name+"'s kubeconfig> get nodes -l "+key+"`")
	}
	var marked []string
	for _, n := range in.State.Nodes.All() {
		if _, ok := n.Labels[key]; ok {
			marked = append(marked, n.Name)
		}
	}
	if len(marked) > 0 {
		sort.Strings(marked)
		return failed(fmt.Sprintf("node(s) labelled %s: %s; an earlier upgrade of them did not finish", key, strings.Join(marked, ", ")),
			nodeLabelClear(marked, key, in))
	}
	return pass("no node labelled " + key)
}

// nodeLabelClear is the node-upgrade-label check's fix: the recorded
// command (a `kubectl label` left the removal out of the audit log).
func nodeLabelClear(marked []string, key string, in *Inputs) string {
	ids := make([]string, len(marked))
	for i, n := range marked {
		ids[i] = "node-label/" + n
	}
	flag := ""
	if key != model.LabelUpgradeInProgress {
		flag = " --node-label " + key
	}
	return fmt.Sprintf("check those nodes are healthy and on the expected version, then remove the label with `upgrade-console lock clear %s %s%s` (recorded)",
		strings.Join(ids, " "), in.clusterFlags(), flag)
}

func notVisible(s *model.ClusterState, k model.Kind) string {
	src := s.Source(k)
	switch {
	case src.Forbidden != "":
		return " (forbidden to " + src.Forbidden + ")"
	case src.Err != "":
		return " (" + src.Err + ")"
	}
	return ""
}

func deref(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

// nsFlag is the -n of a command the operator pastes, none for a
// cluster-scoped object.
func nsFlag(ns string) string {
	if ns == "" {
		return ""
	}
	return " -n " + ns
}
