package model

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// ChangeKind says how a component's version changes between two bundles.
type ChangeKind string

const (
	ChangeNone    ChangeKind = "none"    // the version strings are equal
	ChangeAdded   ChangeKind = "added"   // only the target has the component
	ChangeRemoved ChangeKind = "removed" // only the current bundle has it
	// ChangeChanged: the strings differ and at least one is not a vX.Y.Z…
	// version (e.g. "deprecated"), so no direction can be told.
	ChangeChanged   ChangeKind = "changed"
	ChangeMajor     ChangeKind = "major"
	ChangeMinor     ChangeKind = "minor"
	ChangePatch     ChangeKind = "patch"
	ChangeDowngrade ChangeKind = "downgrade"
	// ChangeRebuild: same X.Y.Z, different suffix or build metadata, and not
	// a clear step back (v1.8.5+205ebc5 → v1.8.5+65d2d66, v1.19.4-1 →
	// v1.19.4-2, v1.15.14-eksa.9 → v1.15.14-eksa.10). Semver ignores build
	// metadata and would call this unchanged; EKS-A still rolls the component
	// out, so the console must show it. A suffix whose build number goes
	// down (v1.14.12-eksa.10 → v1.14.12-eksa.9) is a ChangeDowngrade instead;
	// build metadata (after '+') has no order and is always a rebuild.
	ChangeRebuild ChangeKind = "rebuild"
	// ChangeUnknown: the target Bundles have no versions bundle for the
	// target Kubernetes version, so what a per-Kubernetes component (the
	// kubernetes release itself, cilium, …) becomes cannot be told. The row is
	// kept so that a plan never reads as if those components stayed put.
	ChangeUnknown ChangeKind = "unknown"
	// ChangeSkipped: the spec asks EKS-A to leave the component as it is
	// (clusterNetwork.cniConfig.cilium.skipUpgrade: true); EKS-A's own plan
	// shows "Upgrade skipped". NewVersion stays what the target Bundles
	// offer, which the cluster does not get.
	ChangeSkipped ChangeKind = "skipped"
	// ChangeUnused: the cluster does not run the component, so EKS-A does
	// not upgrade it: another infrastructure provider's, Flux without
	// spec.gitOpsRef, the CNI the spec does not choose, the in-place
	// upgrader without an InPlace rollout, the Bottlerocket host containers
	// on machines of another OS. Only a plan that knows the spec
	// (PlanInput.Uses) marks rows so; the versions stay what the Bundles
	// hold.
	ChangeUnused ChangeKind = "unused"
)

// ChangeKinds lists every kind, in the order summaries count them.
var ChangeKinds = []ChangeKind{
	ChangeMajor, ChangeMinor, ChangePatch, ChangeRebuild, ChangeDowngrade,
	ChangeChanged, ChangeAdded, ChangeRemoved, ChangeUnknown, ChangeSkipped, ChangeUnused, ChangeNone,
}

// leadingVersion matches vX.Y.Z at the start of a version, followed by the end
// or a suffix ("-…" or "+…"). Bundle versions can carry two '+'
// (v0.0.0-dev+build.0+abcdef1), which no semver parser accepts, so only the
// X.Y.Z is ever handed to one.
var leadingVersion = regexp.MustCompile(`^v((?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*))(?:[-+]|$)`)

// coreVersion returns the leading X.Y.Z of a vX.Y.Z… string, or nil.
func coreVersion(s string) *semver.Version {
	m := leadingVersion.FindStringSubmatch(s)
	if m == nil {
		return nil
	}
	v, err := semver.StrictNewVersion(m[1])
	if err != nil { // a field too large for uint64
		return nil
	}
	return v
}

// Classify says how a component changes from oldVersion to newVersion; an
// empty string means the bundle lacks the component.
func Classify(oldVersion, newVersion string) ChangeKind {
	switch {
	case oldVersion == newVersion:
		return ChangeNone
	case oldVersion == "":
		return ChangeAdded
	case newVersion == "":
		return ChangeRemoved
	}
	o, n := coreVersion(oldVersion), coreVersion(newVersion)
	if o == nil || n == nil {
		return ChangeChanged
	}
	switch {
	case n.Equal(o) && prereleaseGoesDown(oldVersion, newVersion):
		return ChangeDowngrade
	case n.Equal(o):
		return ChangeRebuild
	case n.LessThan(o):
		return ChangeDowngrade
	case n.Major() != o.Major():
		return ChangeMajor
	case n.Minor() != o.Minor():
		return ChangeMinor
	default:
		return ChangePatch
	}
}

// prerelease returns the pre-release part of a vX.Y.Z… version: what follows
// "-" after the X.Y.Z, up to the first '+'; ok is false when there is none.
func prerelease(v string) (pre string, ok bool) {
	m := leadingVersion.FindStringSubmatchIndex(v)
	if m == nil {
		return "", false
	}
	rest := v[m[3]:] // after X.Y.Z
	if !strings.HasPrefix(rest, "-") {
		return "", false
	}
	rest = rest[1:]
	if i := strings.IndexByte(rest, '+'); i >= 0 {
		rest = rest[:i]
	}
	return rest, true
}

// prereleaseGoesDown reports whether, between two versions with the same
// X.Y.Z, the build number in the pre-release goes down: both carry a
// pre-release, and the first identifier pair that differs (identifiers are
// split on '.' and '-', as in eksa.10 and eks-1-30-20) is numeric on both
// sides with the new one smaller. EKS-A numbers its builds of one upstream
// version there (cilium v1.14.12-eksa.9, then eksa.10; EKS-D
// v1.30.4-eks-1-30-20), so a smaller number is an older build; so is an
// earlier stage (rc → beta → alpha), and so is a stage where the old version
// had none (v2.5.1 → v2.5.1-rc.1). Anything less clear (another word, a word
// against a number, a build tag where the old version had none: EKS-A tags
// its builds of an upstream version so, one list a prefix of the other) is
// not called a step back.
func prereleaseGoesDown(oldVersion, newVersion string) bool {
	op, ok1 := prerelease(oldVersion)
	np, ok2 := prerelease(newVersion)
	// Empty identifiers are kept ("eksa..9" is not read as eksa.9).
	split := func(s string) []string { return strings.Split(strings.ReplaceAll(s, "-", "."), ".") }
	switch {
	case !ok2:
		return false
	case !ok1:
		// A release, then a pre-release stage of it (v2.5.1 → v2.5.1-rc.1)
		// is a step back; an EKS-A build tag (v1.14.12-eksa.1) is not.
		return stageRank[split(np)[0]] > 0
	}
	oi, ni := split(op), split(np)
	for i := 0; i < len(oi) && i < len(ni); i++ {
		if oi[i] == ni[i] {
			continue
		}
		os, ns := stageRank[oi[i]], stageRank[ni[i]]
		switch {
		case os > 0 && ns > 0:
			return ns < os
		case ns > 0:
			// A stage where the old version has a build tag: a
			// pre-release of the build (v1.2.3-eksa.1 → v1.2.3-rc.1-eksa.1).
			return true
		}
		return isDigits(oi[i]) && isDigits(ni[i]) && numericLess(ni[i], oi[i])
	}
	return false
}

// stageRank orders the pre-release stages every release process uses
// (v1.2.3-beta.1 → v1.2.3-alpha.2 is a step back); other words have no
// order the console can trust, EKS-A's build tags among them.
var stageRank = map[string]int{"alpha": 1, "beta": 2, "rc": 3}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// numericLess compares two digit strings as numbers of any length, so that
// no build number overflows (and 9 < 10, which string order denies).
func numericLess(a, b string) bool {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// ComponentDiff is one row of the bundle diff. Its JSON form is part of the
// `plan -o json` contract.
type ComponentDiff struct {
	Key        string     `json:"key"`
	Name       string     `json:"name"`
	OldVersion string     `json:"oldVersion"`
	NewVersion string     `json:"newVersion"`
	Change     ChangeKind `json:"change"`
	// OldImage and NewImage are the image references of an image-only
	// component (Component.Image), whose versions are the images' tags; empty
	// on the other rows and for a side that lacks the image. A tag alone
	// does not say which image a node pulls: mirrors need the whole
	// reference.
	OldImage string `json:"oldImage,omitempty"`
	NewImage string `json:"newImage,omitempty"`
	// WorkerGroups, on a kubernetes row, are the worker groups the row is
	// of: groups pinned to their own Kubernetes version run the EKS-D of
	// that version's bundle, not the control plane's (the row without
	// WorkerGroups).
	WorkerGroups []string `json:"workerGroups,omitempty"`
}

// Changed reports whether the row changes anything on the cluster.
func (d ComponentDiff) Changed() bool { return d.Change != ChangeNone && d.Change != ChangeUnused }

// DiffBundles compares every component of two Bundles manifests, as EKS-A
// resolves them for one cluster: management components from versionsBundles[0]
// of each side, the others (kubernetes, cilium, …) from the versions bundle of
// the cluster's Kubernetes version (currentKube on the current side,
// targetKube on the target side). Rows are in catalog order and include
// unchanged components. An unknown Kubernetes version is an *InputError naming
// the manifest and the versions it contains.
func DiffBundles(current, target *Bundles, currentKube, targetKube string) ([]ComponentDiff, error) {
	cur, err := resolveBundle(current, currentKube)
	if err != nil {
		return nil, err
	}
	tgt, err := resolveBundle(target, targetKube)
	if err != nil {
		return nil, err
	}
	return diffResolved(cur, tgt), nil
}

// resolvedBundle is what one side of a diff reads components from.
type resolvedBundle struct {
	management *VersionsBundle // versionsBundles[0]
	cluster    *VersionsBundle // the cluster's Kubernetes version; nil if unknown
}

// image returns the uri of an image-only component, from the cluster's
// versions bundle (the images the plan shows are per Kubernetes version).
func (r resolvedBundle) image(c Component) string {
	if r.cluster == nil {
		return ""
	}
	return r.cluster.Image(c.Key)
}

func (r resolvedBundle) version(c Component) string {
	vb := r.cluster
	if c.Management {
		vb = r.management
	}
	if vb == nil {
		return ""
	}
	return vb.Version(c.Key)
}

func resolveBundle(b *Bundles, kube string) (resolvedBundle, error) {
	if b == nil || len(b.VersionsBundles) == 0 {
		source := "Bundles"
		if b != nil {
			source = b.describe()
		}
		return resolvedBundle{}, &InputError{Source: source, Field: "spec.versionsBundles", Problem: "has no versions bundles", Fix: bundlesFix}
	}
	vb, err := b.ForKubernetes(kube)
	if err != nil {
		return resolvedBundle{}, err
	}
	return resolvedBundle{management: &b.VersionsBundles[0], cluster: vb}, nil
}

// diffResolved builds the rows: the versioned components in catalog order,
// then the image-only ones (imageCatalog) in theirs, so that the rows
// operators know keep their place. A target whose cluster bundle is nil (the
// target Kubernetes version is not in the target manifest) gives every
// per-Kubernetes row of the current side the change "unknown".
func diffResolved(cur, tgt resolvedBundle) []ComponentDiff {
	keys := map[string]bool{}
	for _, r := range []resolvedBundle{cur, tgt} {
		for _, vb := range []*VersionsBundle{r.management, r.cluster} {
			if vb == nil {
				continue
			}
			for k := range vb.Components {
				keys[k] = true
			}
		}
	}
	if cur.cluster != nil {
		keys[KeyKubernetes] = true
	}
	ordered := make([]string, 0, len(keys))
	for k := range keys {
		ordered = append(ordered, k)
	}
	SortComponentKeys(ordered)
	out := make([]ComponentDiff, 0, len(ordered))
	for _, k := range ordered {
		c := LookupComponent(k)
		o, n := cur.version(c), tgt.version(c)
		if o == "" && n == "" {
			continue
		}
		change := Classify(o, n)
		if !c.Management && tgt.cluster == nil {
			change = ChangeUnknown
		}
		out = append(out, ComponentDiff{Key: k, Name: c.Name, OldVersion: o, NewVersion: n, Change: change})
	}
	for _, c := range imageCatalog {
		o, n := cur.image(c), tgt.image(c)
		if o == "" && n == "" {
			continue
		}
		d := diffImage(c, o, n)
		if tgt.cluster == nil {
			d.Change = ChangeUnknown
		}
		out = append(out, d)
	}
	return out
}

// diffImage is the row of an image-only component from its two uris: the
// tags as versions, classified as versions when they are (bottlerocket-admin
// v0.11.13 → v0.11.16 is a patch) and "changed" when not (the upgrader's
// v1-30-17-eks-a-84). Where the tags are equal but the references are not (a
// new registry or repository), the whole references are the versions, so the
// row shows what changed.
func diffImage(c Component, oldURI, newURI string) ComponentDiff {
	d := ComponentDiff{Key: c.Key, Name: c.Name, OldImage: oldURI, NewImage: newURI,
		OldVersion: imageVersion(oldURI), NewVersion: imageVersion(newURI)}
	switch {
	case oldURI == newURI:
		d.Change = ChangeNone
	case d.OldVersion == d.NewVersion:
		d.OldVersion, d.NewVersion, d.Change = oldURI, newURI, ChangeChanged
	default:
		d.Change = Classify(d.OldVersion, d.NewVersion)
	}
	return d
}

// imageVersion is what an image's row shows as its version: the tag of the
// reference (after the last ':' of its last path element, without any
// @digest), or the whole reference when it has no tag, as a reference by
// digest alone.
func imageVersion(ref string) string {
	name := ref
	if i := strings.IndexByte(name, '@'); i >= 0 {
		name = name[:i]
	}
	if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') && i < len(name)-1 {
		return name[i+1:]
	}
	return ref
}

// ChangeCounts counts rows per change kind.
func ChangeCounts(diffs []ComponentDiff) map[ChangeKind]int {
	m := map[ChangeKind]int{}
	for _, d := range diffs {
		m[d.Change]++
	}
	return m
}

// SummarizeChanges is the one-line summary under the plan table, e.g.
// "12 of 18 components change: 10 minor, 2 patch; 6 unchanged", or "all
// components are up to date".
//
// The kubernetes rows of worker groups pinned to their own version are not
// components: they are counted as groups, after the components.
func SummarizeChanges(diffs []ComponentDiff) string {
	comps, workers := splitWorkerRows(diffs)
	return summarizeComponents(comps) + summarizeWorkerRows(workers)
}

// splitWorkerRows parts diffs into the components' rows and the worker
// groups' kubernetes rows.
func splitWorkerRows(diffs []ComponentDiff) (comps, workers []ComponentDiff) {
	for _, d := range diffs {
		if d.WorkerGroups != nil {
			workers = append(workers, d)
			continue
		}
		comps = append(comps, d)
	}
	return comps, workers
}

// summarizeWorkerRows is the summary's clause on the worker groups pinned to
// their own Kubernetes version, counted as groups by change kind (the
// table names them): "; the kubernetes of 2 worker groups on their own
// version: 1 patch, 1 unchanged".
func summarizeWorkerRows(rows []ComponentDiff) string {
	if len(rows) == 0 {
		return ""
	}
	groups := map[ChangeKind]int{}
	n := 0
	for _, r := range rows {
		groups[r.Change] += len(r.WorkerGroups)
		n += len(r.WorkerGroups)
	}
	var parts []string
	for _, k := range ChangeKinds {
		switch {
		case groups[k] == 0:
		case k == ChangeNone:
			parts = append(parts, fmt.Sprintf("%d unchanged", groups[k]))
		default:
			parts = append(parts, fmt.Sprintf("%d %s", groups[k], k))
		}
	}
	noun := "worker groups on their own version"
	if n == 1 {
		noun = "worker group on its own version"
	}
	return fmt.Sprintf("; the kubernetes of %d %s: %s", n, noun, strings.Join(parts, ", "))
}

func summarizeComponents(diffs []ComponentDiff) string {
	counts := ChangeCounts(diffs)
	changed := changedCount(diffs, counts)
	unused := ""
	if n := counts[ChangeUnused]; n > 0 {
		// Named with the kind, so that a reader of a table without them
		// knows what --all (or a) lists.
		unused = fmt.Sprintf("; %d %s (not run by this cluster)", n, ChangeUnused)
	}
	if changed == 0 && counts[ChangeUnknown] == 0 && counts[ChangeSkipped] == 0 {
		return "all components are up to date" + unused
	}
	var parts []string
	for _, k := range ChangeKinds {
		if k != ChangeNone && k != ChangeUnknown && k != ChangeSkipped && k != ChangeUnused && counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
		}
	}
	runs := len(diffs) - counts[ChangeUnused]
	noun := "components change"
	if runs == 1 {
		noun = "component changes"
	}
	s := fmt.Sprintf("%d of %d %s", changed, runs, noun)
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, ", ")
	}
	if n := counts[ChangeUnknown]; n > 0 {
		s += fmt.Sprintf("; %d unknown (the target Bundles lack the Kubernetes version they are for)", n)
	}
	if n := counts[ChangeSkipped]; n > 0 {
		s += fmt.Sprintf("; %d skipped (the spec's skipUpgrade)", n)
	}
	if n := counts[ChangeNone]; n > 0 {
		s += fmt.Sprintf("; %d unchanged", n)
	}
	return s + unused
}

// changedCount counts the rows whose component the upgrade moves to a known
// new version: neither unchanged, nor unknown, skipped or unused.
func changedCount(diffs []ComponentDiff, counts map[ChangeKind]int) int {
	return len(diffs) - counts[ChangeNone] - counts[ChangeUnknown] - counts[ChangeSkipped] - counts[ChangeUnused]
}

// WorkerKubernetesRows are the kubernetes rows of the worker groups whose
// EKS-D the control plane's row does not describe: a group pinned to its
// own Kubernetes version gets the EKS-D of that version's bundle (a new
// release's build of 1.30 under a control plane going to 1.31 replaces
// those nodes too), and a group that leaves a pin goes from its own
// version. Groups going the same way share a row. A group's version before
// the upgrade is its Was or, unknown (an offline plan), its pin.
func WorkerKubernetesRows(current, target *Bundles, currentKube, targetKube string, groups []WorkerGroup) []ComponentDiff {
	type way struct{ from, to string }
	var order []way
	names := map[way][]string{}
	for _, g := range groups {
		to := cmp.Or(g.KubernetesVersion, targetKube)
		w := way{cmp.Or(g.Was, g.KubernetesVersion, currentKube), to}
		if w == (way{currentKube, targetKube}) {
			continue
		}
		if _, ok := names[w]; !ok {
			order = append(order, w)
		}
		names[w] = append(names[w], g.Name)
	}
	eksd := func(b *Bundles, kube string) (string, bool) {
		if b == nil {
			return "", false
		}
		vb, err := b.ForKubernetes(kube)
		if err != nil {
			return "", false
		}
		return vb.Version(KeyKubernetes), true
	}
	var out []ComponentDiff
	for _, w := range order {
		o, _ := eksd(current, w.from)
		n, known := eksd(target, w.to)
		if o == "" && n == "" {
			continue
		}
		d := ComponentDiff{Key: KeyKubernetes, Name: LookupComponent(KeyKubernetes).Name + " for " + strings.Join(names[w], ", "),
			OldVersion: o, NewVersion: n, Change: Classify(o, n), WorkerGroups: names[w]}
		if !known {
			d.Change = ChangeUnknown
		}
		out = append(out, d)
	}
	return out
}

// withWorkerRows puts the worker groups' kubernetes rows after the control
// plane's, where an operator reads the Kubernetes change.
func withWorkerRows(rows, workers []ComponentDiff) []ComponentDiff {
	if len(workers) == 0 {
		return rows
	}
	at := len(rows)
	for i, r := range rows {
		if r.Key == KeyKubernetes {
			at = i + 1
			break
		}
	}
	return slices.Insert(rows, at, workers...)
}
