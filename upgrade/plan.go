package upgrade

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/utils/clock"

	"github.com/upgrade-console/upgrade-console/model"
)

// Plan is the live plan: the versions, the component diff and the preflight
// list. Its JSON form extends the offline `plan -o json` contract
// (components, preflight) with the cluster and its versions.
type Plan struct {
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	Versions  struct {
		CurrentEKSA       string `json:"currentEksaVersion"`
		TargetEKSA        string `json:"targetEksaVersion"`
		CurrentKubernetes string `json:"currentKubernetesVersion"`
		TargetKubernetes  string `json:"targetKubernetesVersion"`
		Management        string `json:"managementComponentsVersion,omitempty"`
		CurrentBundles    string `json:"currentBundles"`
		TargetBundles     string `json:"targetBundles"`
	} `json:"versions"`
	// CurrentSpec says whether the cluster has reached its Cluster's spec,
	// which the current side (Versions.Current*, the components'
	// oldVersion) is read from; while it has not (an upgrade under way,
	// failed, or paused by an etcd rollback) that side is not what the
	// cluster runs. Re-evaluated with the checks; nil when the Cluster is
	// not visible.
	CurrentSpec *model.SpecStatus     `json:"currentSpec,omitempty"`
	Components  []model.ComponentDiff `json:"components"`
	Preflight   []model.CheckResult   `json:"preflight"`
	// Skipped are the checks the operator skipped by name. Not omitempty,
	// nor Conflicts: plan -o json gives them as [] when there are none
	// (cmd's liveDoc), which scripts count.
	Skipped []string `json:"skipped"`
	// Conflicts are the fields the spec changes that another field
	// manager owns (eks-a-cli, on a cluster the EKS-A CLI made), from
	// the plan's server-side dry run: an apply takes them over only with
	// --force-conflicts, and refuses without (exit 3).
	Conflicts []FieldConflict `json:"conflicts"`
	// forceConflicts is the request's ForceConflicts.
	forceConflicts bool

	Current *Current    `json:"-"`
	Target  *Target     `json:"-"`
	Lock    *LockStatus `json:"-"`
	// LockErr is set when the identity may not read the lock's Lease:
	// upgrade-lock then fails, saying which right is missing.
	LockErr *LockForbiddenError `json:"-"`
	// Access is whether the identity may take the lock and save the
	// snapshot, asked once per plan (rights do not change as the plan
	// screen re-runs the checks).
	Access *ApplyAccess `json:"-"`
	// At is when the checks last ran.
	At time.Time `json:"-"`
}

// Blocked reports whether a preflight failure blocks the upgrade.
func (p *Plan) Blocked() bool { return model.Blocked(p.Preflight) }

// Blocking returns the checks that block.
func (p *Plan) Blocking() []model.CheckResult {
	var out []model.CheckResult
	for _, r := range p.Preflight {
		if r.Blocking {
			out = append(out, r)
		}
	}
	return out
}

// Changed returns the component rows that change.
func (p *Plan) Changed() []model.ComponentDiff {
	var out []model.ComponentDiff
	for _, c := range p.Components {
		if c.Changed() {
			out = append(out, c)
		}
	}
	return out
}

// PlanRequest is what the operator asked for.
type PlanRequest struct {
	Cluster   string
	Namespace string // of the EKS-A Cluster
	Spec      *SpecFile
	// ToBundles is a target Bundles file (--to-bundles); empty: the target
	// release's Bundles in the cluster.
	ToBundles string
	Skips     []string
	// ForceConflicts: the apply takes over the fields another manager
	// owns (--force-conflicts), which spec-accepted says instead of
	// warning that the apply refuses them.
	ForceConflicts bool
}

// For checks that the spec is the named cluster's (its Cluster's name and
// namespace).
func (s *SpecFile) For(cluster, namespace string) error {
	if s.Cluster.GetName() != cluster {
		return &model.InputError{Source: s.Path, Field: "Cluster metadata.name",
			Problem: fmt.Sprintf("the spec is for cluster %q, not %q", s.Cluster.GetName(), cluster),
			Fix:     "give the spec file of the cluster named by --cluster"}
	}
	if ns := s.Cluster.GetNamespace(); ns != namespace {
		return &model.InputError{Source: s.Path, Field: "Cluster metadata.namespace",
			Problem: fmt.Sprintf("the spec's Cluster is in namespace %q, and the console looks for the Cluster in %q (-n, default: the kubeconfig context's namespace)", ns, namespace),
			Fix:     fmt.Sprintf("give -n %s if the Cluster is there, or set metadata.namespace in the spec to the Cluster's namespace", model.ShellQuote(ns))}
	}
	return nil
}

// Planner computes live plans.
type Planner struct {
	Client *Client
	// State is the live snapshot source (the watchers).
	State StateSource
	// Self is this console (its own lock does not block it).
	Self Holder
	// NodeLabel is the upgrade-in-progress node label key.
	NodeLabel string
	Clock     clock.PassiveClock
	// Conn are the console's connection flags, for the commands the
	// plan's errors name.
	Conn model.ConnFlags
}

func (pl *Planner) now() time.Time {
	if pl.Clock == nil {
		return time.Now()
	}
	return pl.Clock.Now()
}

// uniqueSkips is the --skip list without repeats, in first-seen order: a
// check given twice is skipped once, and listed once in the plan and the
// audit log.
func uniqueSkips(skips []string) []string {
	if len(skips) == 0 {
		return nil
	}
	seen := make(map[string]bool, len(skips))
	out := make([]string, 0, len(skips))
	for _, s := range skips {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// Plan resolves both sides, diffs them and runs the preflight checks.
func (pl *Planner) Plan(ctx context.Context, req PlanRequest) (*Plan, error) {
	if err := ValidateSkips(req.Skips); err != nil {
		return nil, err
	}
	if err := req.Spec.For(req.Cluster, req.Namespace); err != nil {
		return nil, err
	}
	r := &Resolver{Client: pl.Client, Conn: pl.Conn}
	cur, err := r.Current(ctx, req.Namespace, req.Cluster)
	if err != nil {
		return nil, err
	}
	tgt, err := r.Target(ctx, req.Spec, req.ToBundles)
	if err != nil {
		return nil, targetVersionFirst(cur, req.Spec, err)
	}
	// Validated once: the spec file does not change while the plan is shown.
	tgt.SpecDryRun, tgt.SpecDryRunErr = (&Applier{Client: pl.Client}).DryRun(ctx, req.Spec)
	p := &Plan{Cluster: req.Cluster, Namespace: req.Namespace, Current: cur, Target: tgt, Skipped: uniqueSkips(req.Skips),
		forceConflicts: req.ForceConflicts}
	if tgt.SpecDryRun != nil {
		p.Conflicts = tgt.SpecDryRun.Conflicts
	}
	p.Components, err = components(cur, tgt)
	if err != nil {
		return nil, err
	}
	p.Access = ReadApplyAccess(ctx, pl.Client.Kube, pl.Client.Sys(), req.Cluster)
	if err := pl.Recheck(ctx, p); err != nil {
		return nil, err
	}
	p.setVersions(pl)
	return p, nil
}

func (p *Plan) setVersions(pl *Planner) {
	in := p.inputs(pl)
	curE, tgtE := in.eksaVersions()
	p.Versions.CurrentEKSA, p.Versions.TargetEKSA = curE, tgtE
	p.Versions.CurrentKubernetes, p.Versions.TargetKubernetes = p.Current.KubernetesVersion, p.Target.KubernetesVersion
	p.Versions.Management = p.Current.ManagementVersion
	p.Versions.CurrentBundles = p.Current.Bundles.Source
	p.Versions.TargetBundles = p.Target.Bundles.Source
}

// currentMoved says whether the cluster moved since cur was read: its spec
// (a new generation: an upgrade applied by someone else, eksctl or
// kubectl) or its management components (an annotation, which moves no
// generation). The current side of the plan is read from both.
func currentMoved(cur *Current, s *model.ClusterState) bool {
	if cur == nil || cur.Cluster == nil || s == nil || s.Cluster == nil {
		return false
	}
	if cur.ManagedBy != "" {
		// Its management cluster's components are not in s: the
		// cluster's own spec.eksaVersion, read as theirs, differed
		// from them on every change.
		return s.Cluster.Generation != cur.Cluster.GetGeneration()
	}
	mgmt := s.Cluster.Annotations[model.AnnotationManagementComponentsVersion]
	if mgmt == "" {
		mgmt = s.Cluster.EksaVersion
	}
	return s.Cluster.Generation != cur.Cluster.GetGeneration() || mgmt != cur.ManagementVersion
}

// Recheck re-reads the lock and the latest snapshot and re-runs the checks:
// the plan screen calls it whenever the cluster changes, the driver right
// after taking the lock.
func (pl *Planner) Recheck(ctx context.Context, p *Plan) error {
	lock, err := ReadLock(ctx, pl.Client.Kube, pl.Client.Sys(), p.Cluster)
	// An identity that may not read the Lease still gets the plan: the
	// upgrade-lock check fails, naming the right, and blocks the apply.
	var forbidden *LockForbiddenError
	switch {
	case errors.As(err, &forbidden):
	case err != nil:
		return err
	}
	p.Lock, p.LockErr = lock, forbidden
	p.At = pl.now()
	in := p.inputs(pl)
	p.Preflight = RunChecks(ctx, Checks, in, p.Skipped)
	model.WarnDowngrades(p.Preflight, p.Components, true)
	model.WarnUnversioned(p.Preflight, p.Components, true)
	model.WarnRemoved(p.Preflight, p.Components, true)
	p.CurrentSpec = in.CurrentSpec
	return nil
}

// Rechecked is Recheck on a copy: the plan a screen is drawing is never
// written from the command that re-runs the checks.
//
// The current side is read again when the cluster moved since it was read
// (currentMoved): after an upgrade applied by someone else the screen kept
// "11 of 11 components change" from the old release beside "nothing to
// apply", and warned of management components already upgraded.
func (pl *Planner) Rechecked(ctx context.Context, p *Plan) (*Plan, error) {
	cp := *p
	if pl.State != nil && currentMoved(cp.Current, pl.State.Latest()) {
		cur, err := (&Resolver{Client: pl.Client, Conn: pl.Conn}).Current(ctx, cp.Namespace, cp.Cluster)
		if err != nil {
			return nil, err
		}
		rows, err := components(cur, cp.Target)
		if err != nil {
			return nil, err
		}
		cp.Current, cp.Components = cur, rows
	}
	if err := pl.Recheck(ctx, &cp); err != nil {
		return nil, err
	}
	cp.setVersions(pl)
	return &cp, nil
}

func (p *Plan) inputs(pl *Planner) *Inputs {
	in := &Inputs{Now: p.At, Current: p.Current, Target: p.Target, Lock: p.Lock, LockErr: p.LockErr, Access: p.Access, System: pl.Client.Sys(),
		Self: pl.Self, NodeLabel: pl.NodeLabel, ForceConflicts: p.forceConflicts}
	if pl.State != nil {
		in.State = pl.State.Latest()
	}
	if in.State != nil {
		// The whole snapshot, not the Cluster alone: an upgrade failed by
		// the waiters' rule (a failed in-place step) is not "under way".
		in.CurrentSpec = model.SpecStatusOf(in.State, in.Now)
	}
	return in
}

// components diffs the bundles the way EKS-A's plan does: management rows
// from the installed management components' release, the others from the
// cluster's release, each against the target.
func components(cur *Current, tgt *Target) ([]model.ComponentDiff, error) {
	var uses *model.ClusterUses
	if tgt.Spec != nil {
		uses = tgt.Spec.Uses()
	}
	plan, err := model.BuildPlan(model.PlanInput{
		Current: cur.Bundles, Target: tgt.Bundles,
		CurrentKube: cur.KubernetesVersion, TargetKube: tgt.KubernetesVersion,
		CiliumSkipUpgrade: tgt.Spec != nil && tgt.Spec.CiliumSkipUpgrade(),
		Uses:              uses,
		WorkerGroups:      workerGroupsFrom(cur, tgt.WorkerGroups),
	})
	if err != nil {
		return nil, err
	}
	rows := plan.Components
	if cur.ManagedBy != "" {
		// A workload cluster's upgrade installs no management components
		// (they are its management cluster's), as EKS-A's plan leaves
		// them out of a cluster that is not self-managed.
		own := rows[:0:0]
		for _, r := range rows {
			if !model.LookupComponent(r.Key).Management {
				own = append(own, r)
			}
		}
		return own, nil
	}
	if cur.ManagementBundles == nil || cur.ManagementBundles == cur.Bundles {
		return rows, nil
	}
	mgmt, err := model.BuildPlan(model.PlanInput{
		Current: cur.ManagementBundles, Target: tgt.Bundles,
		CurrentKube: cur.ManagementBundles.VersionsBundles[0].KubeVersion, TargetKube: tgt.KubernetesVersion,
		Uses: uses,
	})
	if err != nil {
		return rows, nil
	}
	byKey := map[string]model.ComponentDiff{}
	for _, r := range mgmt.Components {
		if model.LookupComponent(r.Key).Management {
			byKey[r.Key] = r
		}
	}
	for i, r := range rows {
		if m, ok := byKey[r.Key]; ok {
			rows[i] = m
		}
	}
	return rows, nil
}
