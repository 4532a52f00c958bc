package model

import (
	"fmt"
	"strings"
	"time"
)

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
	// CiliumSkipUpgrade is the spec's clusterNetwork.cniConfig.cilium.
	// skipUpgrade: EKS-A leaves Cilium as it is, and the row says so.
	CiliumSkipUpgrade bool
	// Uses says which of the optional components the cluster runs, read
	// from its spec; nil when no spec is known (an offline plan without
	// -f), which leaves every row as the Bundles have it.
	Uses *ClusterUses
}

// ClusterUses is what a cluster's spec chooses among the components a
// release ships: one infrastructure provider, Flux or not, one CNI. EKS-A
// upgrades only what the cluster runs ("GitOps controllers (Flux) … will be
// upgraded only if specified"), so a plan that lists the others as changes
// overstates the upgrade.
type ClusterUses struct {
	// Provider is the catalog key of the provider of spec.datacenterRef
	// (vSphere, docker, …); empty when its kind is no known provider's.
	Provider string
	// GitOps: spec.gitOpsRef is set, so EKS-A runs Flux.
	GitOps bool
	// CNI is "cilium" or "kindnetd" (spec.clusterNetwork.cniConfig, or the
	// older clusterNetwork.cni); empty when the spec names neither.
	CNI string
	// NoInPlace: neither the control plane nor a worker group upgrades in
	// place, so no node runs the in-place upgrader image.
	NoInPlace bool
	// NoBottlerocket: every machine config the Cluster refers to names an
	// osFamily, and none is Bottlerocket, so no node runs its host
	// containers. False when any is unknown.
	NoBottlerocket bool
}

// unused says whether the cluster does not run the component of key.
func (u *ClusterUses) unused(key string) bool {
	switch {
	case u == nil:
		return false
	case LookupComponent(key).Provider:
		return u.Provider != "" && key != u.Provider
	case key == "flux":
		return !u.GitOps
	case key == "cilium", key == "kindnetd":
		return u.CNI != "" && key != u.CNI
	case key == "upgrader.upgrader":
		return u.NoInPlace
	case strings.HasPrefix(key, "bottlerocketHostContainers."):
		return u.NoBottlerocket
	}
	return false
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
	known := CheckTargetKubernetesKnownFor(in.Target, in.TargetKube, in.CurrentKube, in.WorkerGroups)
	// The control plane's rows are planned wherever its version's bundle
	// is there, a worker group pinned to a version the Bundles lack
	// blocking the upgrade all the same.
	tgt.cluster, _ = in.Target.ForKubernetes(in.TargetKube)
	rows := diffResolved(cur, tgt)
	for i := range rows {
		switch {
		case in.Uses.unused(rows[i].Key):
			rows[i].Change = ChangeUnused
		case in.CiliumSkipUpgrade && rows[i].Key == "cilium" && rows[i].Change != ChangeUnknown:
			rows[i].Change = ChangeSkipped
		}
	}
	rows = withWorkerRows(rows, WorkerKubernetesRows(in.Current, in.Target, in.CurrentKube, in.TargetKube, in.WorkerGroups))
	p := &Plan{
		Components: rows,
		Preflight:  []CheckResult{known, CheckKubernetesVersionSkewIn(in.Target, in.CurrentKube, in.TargetKube)},
	}
	curEKSA, tgtEKSA := in.CurrentEKSA, in.TargetEKSA
	if curEKSA == "" {
		curEKSA = cur.management.Components["eksa"]
	}
	if tgtEKSA == "" {
		tgtEKSA = tgt.management.Components["eksa"]
	}
	switch {
	case curEKSA != "" && tgtEKSA != "":
		p.Preflight = append(p.Preflight, CheckEKSAVersionSkew(curEKSA, tgtEKSA))
	default:
		// The check vanished from the list, and the plan passed: say it
		// could not be made.
		side := "target"
		switch {
		case curEKSA == "" && tgtEKSA == "":
			side = "current and target"
		case curEKSA == "":
			side = "current"
		}
		p.Preflight = append(p.Preflight, CheckResult{Name: CheckNameEKSAVersionSkew, Status: CheckWarn,
			Message:     "the " + side + " EKS-A version is not known (the Bundles carry no eksa component in versionsBundles[0]), so its skew cannot be checked",
			Remediation: "check that the Bundles manifest is a whole EKS-A release's, or give the cluster spec's eksaVersion (-f)"})
	}
	if in.WorkerGroups != nil {
		p.Preflight = append(p.Preflight, CheckWorkerVersionSkew(in.TargetKube, in.WorkerGroups))
	}
	if r, ok := targetBundlesOfSpec(in.TargetEKSA, tgt.management.Components["eksa"]); ok {
		p.Preflight = append(p.Preflight, r)
	}
	WarnDowngrades(p.Preflight, p.Components, false)
	WarnUnversioned(p.Preflight, p.Components, false)
	WarnRemoved(p.Preflight, p.Components, false)
	return p, nil
}

// targetBundlesOfSpec checks, offline, that the target Bundles are the
// release the spec's eksaVersion names (their EKS-A component, without build
// metadata): another release's file showed components the spec never
// installs, and the plan passed. Not made without a spec, nor for a
// development build, whose version names no release.
func targetBundlesOfSpec(specEKSA, bundlesEKSA string) (CheckResult, bool) {
	sv, ok1 := eksaSemver(specEKSA)
	bv, ok2 := eksaSemver(bundlesEKSA)
	if !ok1 || !ok2 || devBuild(bv) {
		return CheckResult{}, false
	}
	r := CheckResult{Name: CheckNameTargetRelease, Status: CheckPass, Message: "the target Bundles are EKS-A " + bundlesEKSA + ", the spec's eksaVersion " + specEKSA}
	if !sv.Equal(bv) {
		r.Status, r.Blocking = CheckFail, true
		r.Message = "the spec's eksaVersion is " + specEKSA + ", but the target Bundles are EKS-A " + bundlesEKSA + ": the plan would show components the spec does not install"
		r.Remediation = "give --to-bundles the Bundles of " + specEKSA + "'s release (`kubectl -n eksa-system get bundles` on a cluster that has it, or the release's bundle manifest), or set spec.eksaVersion to " + bv.Original()
	}
	return r, true
}

// WarnDowngrades makes a passed or skipped eksa-version-skew check of
// checks a warning when components go down: between development builds
// (whose versions EKS-A does not check) the Bundles given the wrong way
// round planned every component down, and the plan said the upgrade may
// start without a word. EKS-A never downgrades a component.
//
// Components of the Kubernetes version (kubernetes, cilium, …) that go down
// with a Kubernetes version kubernetes-version-skew already fails are that
// check's finding, not a second one, and so are worker groups' kubernetes
// rows going to a lower minor under a failed worker-version-skew; the remediation names the spec in a
// live plan (live), the two files in an offline one.
func WarnDowngrades(checks []CheckResult, rows []ComponentDiff, live bool) {
	kubeDown, workersDown := false, false
	for _, c := range checks {
		kubeDown = kubeDown || c.Name == CheckNameKubernetesVersionSkew && c.Status == CheckFail
		workersDown = workersDown || c.Name == CheckNameWorkerVersionSkew && c.Status == CheckFail
	}
	var down []string
	for _, r := range rows {
		owned := kubeDown && !LookupComponent(r.Key).Management && r.WorkerGroups == nil ||
			workersDown && r.WorkerGroups != nil && minorDown(r.OldVersion, r.NewVersion)
		if r.Change == ChangeDowngrade && !owned {
			down = append(down, r.Name+" "+r.OldVersion+" → "+r.NewVersion)
		}
	}
	fix := "EKS-A never downgrades a component: check that the target Bundles is the newer release's (not the two files the wrong way round)"
	if live {
		fix = "EKS-A never downgrades a component: check spec.eksaVersion, and --to-bundles when given: the target release's Bundles carry older versions than the cluster runs"
	}
	warnSkew(checks, "go down", down, fix)
}

// minorDown reports whether a version goes to a lower minor: a worker
// group's EKS-D that does is worker-version-skew's finding ("would go down
// from 1.31 to 1.30"); one that keeps its minor on an older build is the
// target Bundles', which that check does not see.
func minorDown(from, to string) bool {
	o, n := coreVersion(from), coreVersion(to)
	return o != nil && n != nil && (n.Major() < o.Major() || n.Major() == o.Major() && n.Minor() < o.Minor())
}

// warnSkew makes the eksa-version-skew check of checks (passed, skipped,
// or a warning already) a warning: its message adds that comps (the first
// three named) <finding>, its remediation fix.
func warnSkew(checks []CheckResult, finding string, comps []string, fix string) {
	if len(comps) == 0 {
		return
	}
	what := strings.Join(comps, ", ")
	if len(comps) > 3 {
		what = strings.Join(comps[:3], ", ") + fmt.Sprintf(" and %d more", len(comps)-3)
	}
	for i := range checks {
		c := &checks[i]
		if c.Name != CheckNameEKSAVersionSkew || (c.Status != CheckPass && c.Status != CheckSkipped && c.Status != CheckWarn) {
			continue
		}
		c.Status = CheckWarn
		c.Message = fmt.Sprintf("%s; but %d component(s) %s: %s", c.Message, len(comps), finding, what)
		c.Remediation = strings.TrimPrefix(c.Remediation+"; "+fix, "; ")
	}
}

// WarnUnversioned makes a passed or skipped eksa-version-skew check a
// warning when a component's target version is not a version where its
// current one is (v1.8.5+abcdef1 → banana): a Bundles manifest edited or
// broken, which the plan showed as "changed" with exit 0. Components
// whose two sides are both not versions (image URIs) are not flagged.
func WarnUnversioned(checks []CheckResult, rows []ComponentDiff, live bool) {
	var bad []string
	for _, r := range rows {
		if r.Change == ChangeChanged && coreVersion(r.OldVersion) != nil && coreVersion(r.NewVersion) == nil {
			bad = append(bad, fmt.Sprintf("%s %s → %q", r.Name, r.OldVersion, Printable(r.NewVersion)))
		}
	}
	fix := "check the target Bundles file: each component's version is a vX.Y.Z… in a release's Bundles"
	if live {
		fix = "check the target release's Bundles (--to-bundles when given): each component's version is a vX.Y.Z… in a release's Bundles"
	}
	warnSkew(checks, "have a target version that is not a version", bad, fix)
}

// WarnRemoved makes a passed or skipped eksa-version-skew check a warning
// when the target Bundles lack a component the current ones carry: a
// Bundles manifest cut short or edited by hand (cilium deleted from it),
// which the plan showed as a "removed" row with exit 0. EKS-A reads each
// component it upgrades from the target Bundles, and stops at the one they
// lack. A component the plan knows the cluster does not run is "unused",
// not "removed", and is not named.
func WarnRemoved(checks []CheckResult, rows []ComponentDiff, live bool) {
	var gone []string
	for _, r := range rows {
		if r.Change == ChangeRemoved {
			gone = append(gone, r.Name+" "+r.OldVersion)
		}
	}
	fix := "check the target Bundles file: a release's Bundles carry every component the current ones do"
	if live {
		fix = "check the target release's Bundles (--to-bundles when given): a release's Bundles carry every component the current ones do"
	}
	warnSkew(checks, "are missing from the target Bundles", gone, fix)
}

// SpecReason says why a cluster has not reached its EKS-A Cluster's spec.
type SpecReason string

const (
	// SpecUnderWay: EKS-A is still reconciling the spec (the completion
	// rule's first unmet milestone says where).
	SpecUnderWay SpecReason = "under-way"
	// SpecFailed: the upgrade to the spec failed: EKS-A reports a
	// failureMessage on a status of the spec, or a failure stayed as long
	// as the waiters' rule (Judge) takes to call the upgrade failed (an
	// in-place step that failed DefaultFailureGrace ago).
	SpecFailed SpecReason = "failed"
	// SpecPaused: EKS-A reconcile is paused, so nothing moves towards it.
	SpecPaused SpecReason = "paused"
	// SpecEtcdRollback: upgrade-console's etcd rollback put etcd back on
	// its previous spec and keeps EKS-A reconcile paused.
	SpecEtcdRollback SpecReason = "etcd-rollback"
)

// SpecStatus says whether a cluster has reached its EKS-A Cluster's spec,
// by EKS-A's completion rule (Completion). The live plan's current side is
// read from that spec: while the cluster has not reached it (an upgrade
// under way, failed, or paused by an etcd rollback), the spec is not what
// the cluster runs, and "already runs this spec" or "up to date" would be
// false. Its JSON form is the live plan's `currentSpec`.
type SpecStatus struct {
	// Reached is true when the completion rule holds on the Cluster (and
	// no etcd rollback is recorded on it).
	Reached bool `json:"reached"`
	// Reason, Message and Next are set when the spec is not reached: why
	// (Reason a stable word, Message a sentence that ends "the cluster has
	// not reached it: …"), and what to do ("follow it with `upgrade-console
	// watch --cluster mgmt`").
	Reason  SpecReason `json:"reason,omitempty"`
	Message string     `json:"message,omitempty"`
	Next    string     `json:"next,omitempty"`
	// heldBy is the failed step that holds an upgrade under way (HeldBy):
	// said in Message, not a field of the plan's JSON contract.
	heldBy string
}

// NotReached reports whether the cluster is known not to have reached its
// spec (false for a nil status: unknown).
func (s *SpecStatus) NotReached() bool { return s != nil && !s.Reached }

// ClusterSpecStatus evaluates whether the cluster has reached its Cluster's
// spec: EKS-A's completion rule (generation observed, no failureMessage,
// the conditions) holds, and no etcd rollback of upgrade-console's holds
// etcd on the previous spec. Nil when the Cluster is not seen.
func ClusterSpecStatus(c *EKSACluster, conn ConnFlags) *SpecStatus {
	if c == nil {
		return nil
	}
	milestones, complete := Completion(c)
	cluster := c.ClusterFlags(conn)
	if r, ok := c.EtcdRollback(); ok {
		// After the rollback the etcd objects look settled, on the previous
		// spec: whatever the conditions say, the spec is not reached.
		if r.Running() {
			return &SpecStatus{Reason: SpecEtcdRollback,
				Message: "upgrade-console's etcd rollback is putting etcd back on its previous spec, with EKS-A reconcile paused",
				Next:    "let the rollback finish (`upgrade-console etcd rollback " + cluster + "` again finishes one that was interrupted)"}
		}
		return &SpecStatus{Reason: SpecEtcdRollback,
			Message: "upgrade-console's etcd rollback put etcd back on its previous spec and keeps EKS-A reconcile paused",
			Next:    "find and fix why the new etcd member did not come up, then `upgrade-console lock clear paused " + cluster + "`"}
	}
	if complete {
		return &SpecStatus{Reached: true}
	}
	if c.Paused() {
		return &SpecStatus{Reason: SpecPaused,
			Message: "EKS-A reconcile is paused (" + AnnotationEKSAPaused + "), so nothing moves towards it",
			Next:    "see who paused it with `upgrade-console lock status " + cluster + "`"}
	}
	m := firstUnmet(milestones)
	switch m.Name {
	case MilestoneNoFailure:
		why := "EKS-A reports a failure"
		if m.Reason != "" {
			why += " (" + m.Reason + ")"
		}
		return &SpecStatus{Reason: SpecFailed, Message: why + ": " + m.Message,
			Next: "see the failure with `upgrade-console watch " + cluster + "` and fix what it says"}
	case MilestoneGenerationObserved:
		return &SpecStatus{Reason: SpecUnderWay,
			Message: fmt.Sprintf("the upgrade to it is still under way: EKS-A has not observed it yet (generation %d, observed %d)", c.Generation, c.ObservedGeneration),
			Next:    "follow it with `upgrade-console watch " + cluster + "`"}
	}
	detail := m.Message
	if !strings.Contains(detail, m.Name) {
		detail = m.Name + ": " + detail
	}
	return &SpecStatus{Reason: SpecUnderWay, Message: "the upgrade to it is still under way: " + detail,
		Next: "follow it with `upgrade-console watch " + cluster + "`"}
}

// SpecStatusOf is ClusterSpecStatus with the rest of the snapshot, at now:
// where the Cluster alone reads as an upgrade under way, the upgrade may
// have failed by the rule every waiter (watch, apply --wait) judges it by
// (Judge): an in-place step that failed and stayed failed for
// DefaultFailureGrace, which nothing in EKS-A retries. The status is then
// SpecFailed, naming the step, with what gets the upgrade past it (the
// watch's own words: `upgrade-console node retry …`), not "still under
// way". Nil when the Cluster is not seen.
func SpecStatusOf(s *ClusterState, now time.Time) *SpecStatus {
	if s == nil {
		return nil
	}
	st := ClusterSpecStatus(s.Cluster, s.Conn)
	if st == nil || st.Reached || st.Reason != SpecUnderWay {
		return st
	}
	// One observation: a failureMessage is timed from when a waiter first
	// sees it (ClusterSpecStatus reports it at once), an etcd rollback is
	// reported above; what the judge can fail on here is a failed step,
	// timed from its own condition.
	p := DeriveProgress(s, ProgressOptions{}, now)
	j, outcome := NewJudge().Observe(p, now)
	failed, ok := j.FailedOn()
	if outcome != OutcomeFailed || !ok {
		if fs := p.FailedStalls(); len(fs) > 0 {
			// Within the grace the upgrade is not yet called failed,
			// but nothing in EKS-A retries the step: "still under way,
			// follow it" sent the operator to wait for a control plane
			// that would never be ready without the retry.
			next := fs[0].Resume
			if next == "" {
				next = st.Next
			}
			return &SpecStatus{Reason: SpecUnderWay, Message: specHeldPrefix + fs[0].Sentence, Next: next, heldBy: fs[0].Sentence}
		}
		return st
	}
	next := failed.Resume
	if next == "" {
		next = "see the failure with `upgrade-console watch " + s.Cluster.ClusterFlags(s.Conn) + "` and fix what it says"
	}
	return &SpecStatus{Reason: SpecFailed, Message: specFailedPrefix + failed.Sentence, Next: next}
}

// specFailedPrefix begins the message of an upgrade failed by the waiters'
// rule (SpecStatusOf), as opposed to EKS-A's failureMessage.
const specFailedPrefix = "the upgrade to it failed: "

// specHeldPrefix begins the message of an upgrade under way that a failed
// step holds, within the waiters' grace (SpecStatusOf).
const specHeldPrefix = "the upgrade to it is held up by a failed step, which nothing retries on its own: "

// HeldBy is the failed step that holds an upgrade under way (within the
// waiters' grace, before they call it failed), "" for any other status.
func (s *SpecStatus) HeldBy() string {
	if !s.NotReached() {
		return ""
	}
	return s.heldBy
}

// Failure is what failed, for a status whose upgrade failed (SpecFailed):
// the message without its "the upgrade to it failed: " ("node mgmt-lvn8n
// in-place step KubeadmUpgraded failed 11m ago: …", "EKS-A reports a
// failure (…): …"); "" for any other status.
func (s *SpecStatus) Failure() string {
	if !s.NotReached() || s.Reason != SpecFailed {
		return ""
	}
	return strings.TrimPrefix(s.Message, specFailedPrefix)
}

// NothingToApply is what a spec that changes nothing says: the cluster
// already runs it, or, while the cluster has not reached its Cluster's spec,
// that the spec is already the Cluster's and the cluster is not there yet.
func (s *SpecStatus) NothingToApply() string {
	if !s.NotReached() {
		return "the cluster already runs this spec: nothing to apply"
	}
	return "the Cluster's spec is already this spec: nothing to apply; the cluster has not reached it (" + s.Message + "): " + s.Next
}

// NothingToApplyBrief is NothingToApply with why in a few words, where the
// room is short and the plan says why in full elsewhere (the plan screen).
func (s *SpecStatus) NothingToApplyBrief() string {
	if !s.NotReached() {
		return s.NothingToApply()
	}
	return "the Cluster's spec is already this spec: nothing to apply; the cluster has not reached it (" + s.Brief() + "): " + s.Next
}

// Brief is why the cluster has not reached its spec, in a few words.
func (s *SpecStatus) Brief() string {
	switch {
	case !s.NotReached():
		return ""
	case s.Reason == SpecFailed && strings.HasPrefix(s.Message, specFailedPrefix):
		return "the upgrade failed"
	case s.Reason == SpecFailed:
		return "EKS-A reports a failure"
	case s.Reason == SpecPaused:
		return "EKS-A reconcile is paused"
	case s.Reason == SpecEtcdRollback:
		return "EKS-A reconcile is paused by the etcd rollback"
	case s.HeldBy() != "":
		return "a failed step holds the upgrade"
	}
	return "the upgrade is still under way"
}

// Note is the plan's sentence on its current side when the cluster has
// not reached its spec ("" when it has, or when that is unknown): the
// current versions are the Cluster's spec, not what the cluster runs.
func (s *SpecStatus) Note() string {
	if !s.NotReached() {
		return ""
	}
	return "CURRENT is the Cluster's spec, which the cluster has not reached: " + s.Message
}

// SummarizeChangesFor is SummarizeChanges for a live plan whose current side
// is the Cluster's spec: while the cluster has not reached it, no component
// change means the target is that spec, not that the cluster is up to date.
func SummarizeChangesFor(diffs []ComponentDiff, s *SpecStatus) string {
	sum := SummarizeChanges(diffs)
	if !s.NotReached() {
		return sum
	}
	counts := ChangeCounts(diffs)
	if changedCount(diffs, counts) == 0 && counts[ChangeUnknown] == 0 {
		return "no component changes from the Cluster's spec, which the cluster has not reached"
	}
	return sum
}
