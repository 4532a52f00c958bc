package model

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// CheckStatus is the outcome of one preflight check.
type CheckStatus string

const (
	CheckPass    CheckStatus = "pass"
	CheckFail    CheckStatus = "fail"
	CheckWarn    CheckStatus = "warn"
	CheckSkipped CheckStatus = "skipped"
)

// Stable check names: `--skip NAME` and scripts reading `plan -o json` use them.
const (
	CheckNameEKSAVersionSkew       = "eksa-version-skew"
	CheckNameKubernetesVersionSkew = "kubernetes-version-skew"
	CheckNameWorkerVersionSkew     = "worker-version-skew"
	CheckNameTargetKubernetesKnown = "target-kubernetes-known"
	// CheckNameTargetRelease: the target Bundles are the spec's release.
	CheckNameTargetRelease = "target-release-present"
)

// CheckResult is the outcome of one preflight check. Its JSON form (name,
// status, message, remediation) is part of the `plan -o json` contract.
type CheckResult struct {
	Name        string      `json:"name"`
	Status      CheckStatus `json:"status"`
	Message     string      `json:"message"`
	Remediation string      `json:"remediation"`
	// Blocking is true for a failure that stops the upgrade.
	Blocking bool `json:"blocking,omitempty"`
	// Skippable says whether --skip may override a blocking failure. The
	// version-skew rules are not: EKS-A's admission webhook enforces them, so
	// skipping here would only move the refusal to the API server.
	Skippable bool `json:"skippable,omitempty"`
}

// Failed reports whether the check failed (blocking or not).
func (r CheckResult) Failed() bool { return r.Status == CheckFail }

// Blocked reports whether any result blocks the upgrade.
func Blocked(results []CheckResult) bool {
	for _, r := range results {
		if r.Blocking {
			return true
		}
	}
	return false
}

func pass(name, msg string) CheckResult {
	return CheckResult{Name: name, Status: CheckPass, Message: msg}
}

func fail(name, msg, fix string) CheckResult {
	return CheckResult{Name: name, Status: CheckFail, Message: msg, Remediation: fix, Blocking: true}
}

// minorVersion parses a Kubernetes version as EKS-A writes it ("1.30"), also
// accepting "v1.30" and full versions ("v1.30.14-eks-1-30-58").
func minorVersion(s string) (*semver.Version, bool) {
	v, err := semver.NewVersion(strings.TrimSpace(s))
	if err != nil || s == "" {
		return nil, false
	}
	return v, true
}

func minorString(v *semver.Version) string { return fmt.Sprintf("%d.%d", v.Major(), v.Minor()) }

// minorStep is how a version moves in the rules EKS-A applies to both the
// Kubernetes and the EKS-A version: by minor, never by major.
type minorStep int

const (
	stepSame minorStep = iota
	stepNext
	stepMajor
	stepDown
	stepSkip
)

func stepOf(cur, tgt *semver.Version) minorStep {
	switch {
	case tgt.Major() != cur.Major():
		return stepMajor
	case tgt.Minor() < cur.Minor():
		return stepDown
	case tgt.Minor() > cur.Minor()+1:
		return stepSkip
	case tgt.Minor() == cur.Minor():
		return stepSame
	default:
		return stepNext
	}
}

// CheckKubernetesVersionSkew applies EKS-A's webhook rule to a control-plane
// Kubernetes change: never down, at most one minor up.
func CheckKubernetesVersionSkew(current, target string) CheckResult {
	return CheckKubernetesVersionSkewIn(nil, current, target)
}

// CheckKubernetesVersionSkewIn is CheckKubernetesVersionSkew whose fix names
// only versions the target Bundles ship (nil: unknown, any version is
// named): the next minor was suggested as a step when the Bundles stopped
// before it, a version no apply with them can reach.
func CheckKubernetesVersionSkewIn(bundles *Bundles, current, target string) CheckResult {
	const name = CheckNameKubernetesVersionSkew
	cur, ok := minorVersion(current)
	if !ok {
		return fail(name, fmt.Sprintf("cannot read the current Kubernetes version %q", current),
			"give Kubernetes versions as EKS-A writes them, e.g. 1.30")
	}
	tgt, ok := minorVersion(target)
	if !ok {
		return fail(name, fmt.Sprintf("cannot read the target Kubernetes version %q", target),
			"give Kubernetes versions as EKS-A writes them, e.g. 1.31")
	}
	c, t := minorString(cur), minorString(tgt)
	next := fmt.Sprintf("%d.%d", cur.Major(), cur.Minor()+1)
	switch stepOf(cur, tgt) {
	case stepMajor:
		return fail(name, fmt.Sprintf("Kubernetes %s → %s changes the major version", c, t),
			stayOrNext(bundles, cur, ""))
	case stepDown:
		return fail(name, fmt.Sprintf("Kubernetes %s → %s is a downgrade; EKS-A never downgrades Kubernetes", c, t),
			stayOrNext(bundles, cur, "; going back needs a restore from backup"))
	case stepSkip:
		fix := fmt.Sprintf("upgrade to %s first, then on from there one minor at a time", next)
		if bundles != nil && len(bundles.VersionsBundles) > 0 {
			if v, ok := shippedMinor(bundles, cur.Major(), cur.Minor()+1); ok {
				fix = fmt.Sprintf("upgrade to %s first, then on from there one minor at a time", v)
			} else {
				fix = fmt.Sprintf("%s ships no Kubernetes %s, the next minor after %s (it ships %s): upgrade to %s first with the Bundles of %s EKS-A release that ships it, then on from there one minor at a time",
					bundles.describe(), next, c, strings.Join(bundles.KubernetesVersions(), ", "), next, whichRelease(bundles, cur.Major(), cur.Minor()+1))
			}
		}
		return fail(name, fmt.Sprintf("Kubernetes %s → %s skips %d minor version(s); EKS-A upgrades one minor at a time", c, t, tgt.Minor()-cur.Minor()-1), fix)
	case stepSame:
		return pass(name, fmt.Sprintf("Kubernetes stays at %s", c))
	default:
		return pass(name, fmt.Sprintf("Kubernetes %s → %s is one minor up", c, t))
	}
}

// stayOrNext is the fix of a refused direction: the current minor or the
// next, of those the Bundles ship (all when bundles is nil), and which
// Bundles to use when they ship neither.
func stayOrNext(bundles *Bundles, cur *semver.Version, tail string) string {
	c, next := minorString(cur), fmt.Sprintf("%d.%d", cur.Major(), cur.Minor()+1)
	if bundles == nil || len(bundles.VersionsBundles) == 0 {
		return fmt.Sprintf("choose %s (no change) or %s (one minor up)%s", c, next, tail)
	}
	same, sameOK := shippedMinor(bundles, cur.Major(), cur.Minor())
	up, upOK := shippedMinor(bundles, cur.Major(), cur.Minor()+1)
	switch {
	case sameOK && upOK:
		return fmt.Sprintf("choose %s (no change) or %s (one minor up)%s", same, up, tail)
	case sameOK:
		return fmt.Sprintf("choose %s (no change; %s ships no %s)%s", same, bundles.describe(), next, tail)
	case upOK:
		return fmt.Sprintf("choose %s (one minor up; %s ships no %s)%s", up, bundles.describe(), c, tail)
	}
	return fmt.Sprintf("%s ships neither %s (no change) nor %s (one minor up), only %s: use the Bundles of an EKS-A release that ships one of them%s",
		bundles.describe(), c, next, strings.Join(bundles.KubernetesVersions(), ", "), tail)
}

// shippedMinor finds the Bundles' kubeVersion for major.minor, spelled as
// they spell it (the spec must name it so: ForKubernetes matches exactly).
func shippedMinor(bundles *Bundles, major, minor uint64) (string, bool) {
	for _, k := range bundles.KubernetesVersions() {
		if v, ok := minorVersion(k); ok && v.Major() == major && v.Minor() == minor {
			return k, true
		}
	}
	return "", false
}

// whichRelease says which way to look for a release that ships major.minor:
// a newer one when it is past everything the Bundles ship, an older one when
// before, else just another.
func whichRelease(bundles *Bundles, major, minor uint64) string {
	above, below := true, true
	for _, k := range bundles.KubernetesVersions() {
		v, ok := minorVersion(k)
		if !ok || v.Major() != major {
			continue
		}
		if v.Minor() > minor {
			above = false
		}
		if v.Minor() < minor {
			below = false
		}
	}
	switch {
	case above:
		return "a newer"
	case below:
		return "an older"
	}
	return "an"
}

// eksaSemver parses an EKS-A version, dropping build metadata: EKS-A's own
// versions can carry two '+' (v0.0.0-dev+build.0+abcdef1).
func eksaSemver(s string) (*semver.Version, bool) {
	if i := strings.IndexByte(s, '+'); i >= 0 {
		s = s[:i]
	}
	v, err := semver.NewVersion(s)
	if err != nil || s == "" {
		return nil, false
	}
	return v, true
}

// ManagementBehind reports whether a management cluster's components
// (installed, its management-components-version annotation) are older than
// the release its Cluster asks for: nothing in the cluster upgrades them
// (EKS-A's CLI does), and EKS-A runs no cluster components newer than
// them. Ahead is the normal state once they were upgraded for the next
// release; a version that does not parse is not called behind.
func ManagementBehind(installed, eksaVersion string) bool {
	less, err := EKSAVersionLess(installed, eksaVersion)
	return err == nil && less
}

// EKSAVersionLess reports whether EKS-A version a is older than b, build
// metadata aside; an error names a version that does not parse.
func EKSAVersionLess(a, b string) (bool, error) {
	av, ok := eksaSemver(a)
	if !ok {
		return false, fmt.Errorf("%q is not a version", a)
	}
	bv, ok := eksaSemver(b)
	if !ok {
		return false, fmt.Errorf("%q is not a version", b)
	}
	return av.LessThan(bv), nil
}

// devBuild reports whether an EKS-A version is a development build's
// (v0.0.0-dev…).
func devBuild(v *semver.Version) bool { return v.Major() == 0 && v.Minor() == 0 && v.Patch() == 0 }

// CheckEKSAVersionSkew applies EKS-A's rule to an eksaVersion change: the
// major must match, the minor may go up by at most one and never down; any
// patch within a minor is allowed. As EKS-A does, a development build target
// (v0.0.0…) is exempt and an unreadable current version is not held against
// the operator.
func CheckEKSAVersionSkew(current, target string) CheckResult {
	return CheckEKSAVersionSkewFrom(current, target, false)
}

// FailureReasonEksaVersionInvalid is the Cluster's status.failureReason when
// EKS-A refused its eksaVersion (newer than the management cluster's, say).
const FailureReasonEksaVersionInvalid = "EksaVersionInvalid"

// CheckEKSAVersionSkewFrom is CheckEKSAVersionSkew for a cluster whose
// current eksaVersion EKS-A may have refused: with currentInvalid (its
// status.failureReason is EksaVersionInvalid) the webhook lets the minor go
// down, the way back from a version set too far ahead
// (ValidateEksaVersionSkew), and so does the check.
func CheckEKSAVersionSkewFrom(current, target string, currentInvalid bool) CheckResult {
	const name = CheckNameEKSAVersionSkew
	tgt, ok := eksaSemver(target)
	if !ok {
		return fail(name, fmt.Sprintf("cannot read the target EKS-A version %q", target),
			"give the EKS-A version as a release names it, e.g. v0.21.1")
	}
	if devBuild(tgt) {
		return CheckResult{Name: name, Status: CheckSkipped,
			Message: fmt.Sprintf("target %s is a development build; EKS-A does not check its version skew", target)}
	}
	cur, ok := eksaSemver(current)
	if ok && devBuild(cur) {
		// A development build on the cluster: EKS-A's webhook cannot read
		// it as a version (v0.0.0-dev+build.0+abcdef1) and lets any
		// target through; blocked here, the offline plan of a dev build's
		// Bundles to a release failed with "skips 20 minor versions".
		return CheckResult{Name: name, Status: CheckSkipped,
			Message: fmt.Sprintf("current %s is a development build; EKS-A does not check its version skew", current)}
	}
	if !ok {
		return CheckResult{Name: name, Status: CheckWarn,
			Message:     fmt.Sprintf("cannot read the current EKS-A version %q; EKS-A lets the upgrade through, so the console cannot vouch for the skew", current),
			Remediation: "check the cluster's spec.eksaVersion"}
	}
	c := fmt.Sprintf("v%d.%d", cur.Major(), cur.Minor())
	t := fmt.Sprintf("v%d.%d", tgt.Major(), tgt.Minor())
	next := fmt.Sprintf("v%d.%d", cur.Major(), cur.Minor()+1)
	switch step := stepOf(cur, tgt); {
	case step == stepMajor:
		return fail(name, fmt.Sprintf("EKS-A %s → %s changes the major version", current, target),
			fmt.Sprintf("stay on major v%d: upgrade to the newest %s.x or %s.x release", cur.Major(), c, next))
	case step == stepDown && currentInvalid:
		return CheckResult{Name: name, Status: CheckWarn,
			Message: fmt.Sprintf("EKS-A %s → %s goes down a minor version, which EKS-A allows only because it refused %s (status.failureReason %s)",
				current, target, current, FailureReasonEksaVersionInvalid),
			Remediation: "make sure the older release is the one the cluster ran before the refused eksaVersion"}
	case step == stepDown:
		return fail(name, fmt.Sprintf("EKS-A %s → %s is a downgrade; EKS-A never goes down a minor version", current, target),
			fmt.Sprintf("choose a %s.x or %s.x release", c, next))
	case step == stepSkip:
		return fail(name, fmt.Sprintf("EKS-A %s → %s skips %d minor version(s); EKS-A upgrades one minor at a time", c, t, tgt.Minor()-cur.Minor()-1),
			fmt.Sprintf("upgrade to the newest %s.x release first, then on one minor at a time", next))
	case step == stepSame && tgt.LessThan(cur):
		return CheckResult{Name: name, Status: CheckWarn,
			Message:     fmt.Sprintf("EKS-A %s → %s goes down a patch release within %s; EKS-A allows it", current, target, c),
			Remediation: "make sure the older patch release is intended"}
	case step == stepSame:
		return pass(name, fmt.Sprintf("EKS-A %s → %s stays within %s", current, target, c))
	default:
		return pass(name, fmt.Sprintf("EKS-A %s → %s is one minor up", current, target))
	}
}

// MaxWorkerSkew is how many minors EKS-A's webhook lets a worker group trail
// the control plane (pkg/api/v1alpha1/cluster_webhook.go; its docs say 3 as of
// Kubernetes 1.28, the code says 2, and the code is what rejects).
const MaxWorkerSkew = 2

// CheckWorkerVersionSkew checks each worker group that pins its own
// Kubernetes version against the control plane's (target) version: a group
// may not be newer, nor trail by more than MaxWorkerSkew minors. Trailing by
// exactly MaxWorkerSkew is allowed with a warning: the next control-plane
// upgrade will need the group upgraded first.
func CheckWorkerVersionSkew(controlPlane string, groups []WorkerGroup) CheckResult {
	const name = CheckNameWorkerVersionSkew
	cp, ok := minorVersion(controlPlane)
	if !ok {
		return fail(name, fmt.Sprintf("cannot read the control-plane Kubernetes version %q", controlPlane),
			"give Kubernetes versions as EKS-A writes them, e.g. 1.31")
	}
	cps := minorString(cp)
	floor := int64(cp.Minor()) - MaxWorkerSkew
	var failures, warnings, fixes []string
	pinned := 0
	sorted := append([]WorkerGroup(nil), groups...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, g := range sorted {
		if g.KubernetesVersion == "" {
			// Follows the control plane; dropping a pin is judged apart.
			if f, fix := unpinned(g, cp); f != "" {
				failures, fixes = append(failures, f), append(fixes, fix)
			}
			continue
		}
		pinned++
		w, ok := minorVersion(g.KubernetesVersion)
		if !ok {
			failures = append(failures, fmt.Sprintf("worker group %s has an unreadable Kubernetes version %q", g.Name, g.KubernetesVersion))
			fixes = append(fixes, fmt.Sprintf("set %s's kubernetesVersion like 1.30", g.Name))
			continue
		}
		ws := minorString(w)
		behind := int64(cp.Minor()) - int64(w.Minor())
		was, known := minorVersion(g.Was)
		switch {
		case known && w.LessThan(was):
			// EKS-A's ValidateWorkerKubernetesVersionSkew refuses it.
			failures = append(failures, fmt.Sprintf("worker group %s would go down from %s to %s; EKS-A never downgrades Kubernetes", g.Name, minorString(was), ws))
			fixes = append(fixes, fmt.Sprintf("set %s's kubernetesVersion to %s or higher", g.Name, minorString(was)))
		case known && w.Major() == was.Major() && w.Minor() > was.Minor()+1:
			// Each group's own step is one minor, as the cluster's is
			// (validateKubeVersionSkew of the group's old and new version).
			failures = append(failures, fmt.Sprintf("worker group %s would go from %s to %s, skipping %d minor version(s); EKS-A upgrades a worker group one minor at a time",
				g.Name, minorString(was), ws, w.Minor()-was.Minor()-1))
			fixes = append(fixes, fmt.Sprintf("set %s's kubernetesVersion to %d.%d first", g.Name, was.Major(), was.Minor()+1))
		case w.Major() != cp.Major() || behind < 0:
			failures = append(failures, fmt.Sprintf("worker group %s (%s) would be newer than the control plane (%s)", g.Name, ws, cps))
			fixes = append(fixes, fmt.Sprintf("set %s's kubernetesVersion to %s or lower", g.Name, cps))
		case behind > MaxWorkerSkew:
			failures = append(failures, fmt.Sprintf("worker group %s (%s) would be %d minors behind the control plane (%s); EKS-A allows %d", g.Name, ws, behind, cps, MaxWorkerSkew))
			fixes = append(fixes, fmt.Sprintf("upgrade %s to at least %d.%d first (one minor at a time)", g.Name, cp.Major(), floor))
		case behind == MaxWorkerSkew:
			warnings = append(warnings, fmt.Sprintf("worker group %s (%s) will be %d minors behind the control plane (%s), the most EKS-A allows", g.Name, ws, behind, cps))
		}
	}
	switch {
	case len(failures) > 0:
		return fail(name, strings.Join(append(failures, warnings...), "; "), strings.Join(fixes, "; "))
	case len(warnings) > 0:
		return CheckResult{Name: name, Status: CheckWarn, Message: strings.Join(warnings, "; "),
			Remediation: "upgrade these worker groups before the next control-plane upgrade, which would otherwise be refused"}
	case pinned == 0:
		return pass(name, "all worker groups follow the control plane's Kubernetes version")
	default:
		return pass(name, fmt.Sprintf("every pinned worker group is within %d minors of the control plane (%s)", MaxWorkerSkew, cps))
	}
}

// unpinned judges a worker group that drops its own kubernetesVersion, as
// EKS-A's webhook does (validateRemoveWorkerKubernetesVersion): not in the
// same change as a control-plane upgrade, and the group then goes from its
// old version to the control plane's, one minor at most. Empty when it may.
func unpinned(g WorkerGroup, cp *semver.Version) (failure, fix string) {
	if !g.WasPinned {
		return "", ""
	}
	was, ok := minorVersion(g.Was)
	if !ok {
		return "", ""
	}
	cps := minorString(cp)
	if oldCP, ok := minorVersion(g.WasControlPlane); ok && oldCP.LessThan(cp) {
		return fmt.Sprintf("worker group %s drops its kubernetesVersion (%s) while the control plane goes %s → %s; EKS-A refuses both in one change", g.Name, minorString(was), minorString(oldCP), cps),
			fmt.Sprintf("keep %s's kubernetesVersion for this upgrade and drop it in a later one", g.Name)
	}
	if was.Major() == cp.Major() && cp.Minor() > was.Minor()+1 {
		return fmt.Sprintf("worker group %s drops its kubernetesVersion: it would go from %s to the control plane's %s, skipping %d minor version(s)", g.Name, minorString(was), cps, cp.Minor()-was.Minor()-1),
			fmt.Sprintf("raise %s's kubernetesVersion one minor at a time to %s first, then drop it", g.Name, cps)
	}
	return "", ""
}

// CheckTargetKubernetesKnownFrom checks that the target Bundles carry the
// target Kubernetes version; a version newer than any they know is refused,
// as EKS-A would ("kubernetes version … is not supported by bundles
// manifest"). For a cluster on current (empty: unknown) the fix offers only
// the versions one minor at a time allows from there (it offered 1.28 …
// 1.32 to a cluster on 1.27, of which kubernetes-version-skew then blocked
// all but 1.28).
func CheckTargetKubernetesKnownFrom(target *Bundles, kube, current string) CheckResult {
	const name = CheckNameTargetKubernetesKnown
	if vb, err := target.ForKubernetes(kube); err == nil {
		return pass(name, fmt.Sprintf("%s carries Kubernetes %s (%s)", target.describe(), kube, vb.EksD.Version()))
	}
	known := strings.Join(target.KubernetesVersions(), ", ")
	newest := target.NewestKubernetesVersion()
	choices := reachableFrom(target.KubernetesVersions(), current)
	k, kok := minorVersion(kube)
	n, nok := minorVersion(newest)
	if kok && nok && k.GreaterThan(n) {
		other := "target " + newest
		if len(choices) > 0 && !slices.Contains(choices, newest) {
			other = "target one of " + strings.Join(choices, ", ") + " (from " + current + ", one minor at a time)"
		}
		return fail(name,
			fmt.Sprintf("Kubernetes %s is newer than anything %s knows (newest: %s); kubernetes and per-Kubernetes components cannot be planned", kube, target.describe(), newest),
			fmt.Sprintf("use the Bundles of a newer EKS-A release that supports %s, or %s", kube, other))
	}
	fix := fmt.Sprintf("target one of %s (upgrading Kubernetes one minor at a time)", known)
	if len(choices) > 0 {
		fix = fmt.Sprintf("target one of %s (from %s, Kubernetes goes one minor at a time)", strings.Join(choices, ", "), current)
	}
	return fail(name,
		fmt.Sprintf("%s has no bundle for Kubernetes %s (it has %s); kubernetes and per-Kubernetes components cannot be planned", target.describe(), kube, known),
		fix)
}

// CheckTargetKubernetesKnownFor is CheckTargetKubernetesKnownFrom for the
// control plane, then for the worker groups that pin their own version:
// EKS-A builds each group from the bundle of its own version, and fails the
// upgrade after the apply ("kubernetes version 1.27 is not supported by
// bundles manifest") when the target Bundles lack it.
func CheckTargetKubernetesKnownFor(target *Bundles, kube, current string, groups []WorkerGroup) CheckResult {
	r := CheckTargetKubernetesKnownFrom(target, kube, current)
	if w := workerKubernetesKnown(target, groups); w != nil && !r.Failed() {
		return *w
	}
	return r
}

// workerKubernetesKnown is target-kubernetes-known's failure for the worker
// groups pinned to a version the target Bundles have no bundle for; nil
// when every pinned version is there.
func workerKubernetesKnown(target *Bundles, groups []WorkerGroup) *CheckResult {
	if target == nil {
		return nil
	}
	var missing, names []string
	for _, g := range groups {
		if g.KubernetesVersion == "" {
			continue
		}
		if _, err := target.ForKubernetes(g.KubernetesVersion); err == nil {
			continue
		}
		missing = append(missing, fmt.Sprintf("worker group %s is pinned to Kubernetes %s", g.Name, g.KubernetesVersion))
		names = append(names, g.Name)
	}
	if len(missing) == 0 {
		return nil
	}
	r := fail(CheckNameTargetKubernetesKnown,
		fmt.Sprintf("%s, which %s has no bundle for (it has %s): EKS-A builds each worker group from the bundle of its own version, and would fail the upgrade after the apply",
			strings.Join(missing, "; "), target.describe(), strings.Join(target.KubernetesVersions(), ", ")),
		fmt.Sprintf("set the kubernetesVersion of %s to one of %s within two minors of the control plane, or remove it to follow the control plane", strings.Join(names, ", "), strings.Join(target.KubernetesVersions(), ", ")))
	return &r
}

// reachableFrom keeps the versions an upgrade from current may target: the
// same minor or the next. Nil when current is unknown or unreadable.
func reachableFrom(versions []string, current string) []string {
	cur, ok := minorVersion(current)
	if current == "" || !ok {
		return nil
	}
	out := []string{}
	for _, v := range versions {
		if w, ok := minorVersion(v); ok && w.Major() == cur.Major() && (w.Minor() == cur.Minor() || w.Minor() == cur.Minor()+1) {
			out = append(out, v)
		}
	}
	return out
}
