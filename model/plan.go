package model

// PlanInput is everything a plan is computed from. The offline plan fills it
// from two Bundles files and flags; the live plan from the cluster (the
// current EKSARelease's Bundles, the cluster spec) and the target release.
type PlanInput struct {
	Current, Target *Bundles
	// CurrentKube is the cluster's Kubernetes version ("1.30"); TargetKube
	// the one it upgrades to (equal to CurrentKube when it does not change).
	CurrentKube, TargetKube string
	// CurrentEKSA and TargetEKSA are the EKS-A versions; when empty they are
	// read from the Bundles' eksa component (the version of the EKS-A release
	// that ships them).
	CurrentEKSA, TargetEKSA string
	// WorkerGroups are the cluster's worker groups; nil when unknown (the
	// offline plan), which leaves the worker skew check out.
	WorkerGroups []WorkerGroup
}

// Plan is what an upgrade changes and whether it may start. Its JSON form is
// the `plan -o json` contract.
type Plan struct {
	// Components lists every component of either side, unchanged ones
	// included, in catalog order: the versioned ones, then the images
	// (Component.Image).
	Components []ComponentDiff `json:"components"`
	Preflight  []CheckResult   `json:"preflight"`
}

// Blocked reports whether a preflight failure blocks the upgrade.
func (p *Plan) Blocked() bool { return Blocked(p.Preflight) }

// Changed returns the rows that change something.
func (p *Plan) Changed() []ComponentDiff {
	var out []ComponentDiff
	for _, c := range p.Components {
		if c.Changed() {
			out = append(out, c)
		}
	}
	return out
}

// BuildPlan diffs the components and runs the version rules that need no
// cluster. A current Kubernetes version the current Bundles do not contain is
// an *InputError (the input is inconsistent); a target Kubernetes version the
// target Bundles do not contain is a blocking preflight failure (the upgrade
// is not possible), and the per-Kubernetes rows are then left out.
func BuildPlan(in PlanInput) (*Plan, error) {
	cur, err := resolveBundle(in.Current, in.CurrentKube)
	if err != nil {
		return nil, err
	}
	if in.Target == nil || len(in.Target.VersionsBundles) == 0 {
		source := "target Bundles"
		if in.Target != nil {
			source = in.Target.describe()
		}
		return nil, &InputError{Source: source, Field: "spec.versionsBundles", Problem: "has no versions bundles", Fix: bundlesFix}
	}
	tgt := resolvedBundle{management: &in.Target.VersionsBundles[0]}
	known := CheckTargetKubernetesKnown(in.Target, in.TargetKube)
	if !known.Failed() {
		tgt.cluster, _ = in.Target.ForKubernetes(in.TargetKube)
	}
	p := &Plan{
		Components: diffResolved(cur, tgt),
		Preflight:  []CheckResult{known, CheckKubernetesVersionSkew(in.CurrentKube, in.TargetKube)},
	}
	curEKSA, tgtEKSA := in.CurrentEKSA, in.TargetEKSA
	if curEKSA == "" {
		curEKSA = cur.management.Components["eksa"]
	}
	if tgtEKSA == "" {
		tgtEKSA = tgt.management.Components["eksa"]
	}
	if curEKSA != "" && tgtEKSA != "" {
		p.Preflight = append(p.Preflight, CheckEKSAVersionSkew(curEKSA, tgtEKSA))
	}
	if in.WorkerGroups != nil {
		p.Preflight = append(p.Preflight, CheckWorkerVersionSkew(in.TargetKube, in.WorkerGroups))
	}
	return p, nil
}
