package model

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		old, new string
		want     ChangeKind
	}{
		// none: equal strings, whatever they hold
		{"v1.8.5+abcdef1", "v1.8.5+abcdef1", ChangeNone},
		{"deprecated", "deprecated", ChangeNone},
		{"", "", ChangeNone},
		{"v0.0.0-dev+build.0+abcdef1", "v0.0.0-dev+build.0+abcdef1", ChangeNone},
		// added / removed
		{"", "v1.2.3+abcdef1", ChangeAdded},
		{"", "deprecated", ChangeAdded},
		{"v1.2.3+abcdef1", "", ChangeRemoved},
		// changed: either side is not vX.Y.Z…
		{"v0.5.0+abcdef1", "deprecated", ChangeChanged},
		{"deprecated", "v0.5.0+abcdef1", ChangeChanged},
		{"1.2.3", "1.2.4", ChangeChanged},       // no leading v
		{"v1.2", "v1.3", ChangeChanged},         // no patch
		{"v1.2.3.4", "v1.2.3.5", ChangeChanged}, // a fourth field is not a suffix
		{"v01.2.3", "v1.2.3", ChangeChanged},    // leading zero
		{"v1.2.3", "V1.2.4", ChangeChanged},
		{"v99999999999999999999.0.0", "v1.0.0", ChangeChanged}, // overflows
		{"vX.Y.Z", "v1.0.0", ChangeChanged},
		// major / minor / patch: the leading X.Y.Z goes up in that field
		{"v1.16.4+abcdef1", "v2.0.0+65d2d66", ChangeMajor},
		{"v1.9.9", "v2.0.0", ChangeMajor},
		{"v1.8.5+abcdef1", "v1.9.4+abcdef1", ChangeMinor},
		{"v1.14.12-eksa.2", "v1.15.14-eksa.1", ChangeMinor},
		{"v1.30.5-eks-1-30-17", "v1.31.6-eks-1-31-16", ChangeMinor},
		{"v1.16.1+abcdef1", "v1.16.4+abcdef1", ChangePatch},
		{"v1.30.14-eks-1-30-58", "v1.30.15-eks-1-30-40", ChangePatch}, // the release number going down does not matter
		{"v0.9.0", "v0.10.0", ChangeMinor},                            // numeric, not string, order
		{"v1.2.9", "v1.2.10", ChangePatch},
		// downgrade: the leading X.Y.Z goes down, in any field
		{"v2.5.1+abcdef1", "v2.4.0+65d2d66", ChangeDowngrade},
		{"v2.0.0", "v1.99.99", ChangeDowngrade},
		{"v1.2.10", "v1.2.9", ChangeDowngrade},
		{"v1.9.4-rc.1", "v1.9.3", ChangeDowngrade},
		// downgrade with the same X.Y.Z: the build number of the
		// pre-release goes down, compared as a number
		{"v1.14.12-eksa.10", "v1.14.12-eksa.9", ChangeDowngrade},
		{"v1.14.12-eksa.2", "v1.14.12-eksa.1", ChangeDowngrade},
		{"v1.30.4-eks-1-30-20", "v1.30.4-eks-1-30-9", ChangeDowngrade},
		{"v1.19.4-10", "v1.19.4-9", ChangeDowngrade},
		{"v1.14.12-eksa.10+abcdef1", "v1.14.12-eksa.9+abcdef1", ChangeDowngrade},               // build metadata is not part of the pre-release
		{"v1.14.12-eksa.10+abcdef1", "v1.14.12-eksa.9+zzzzzzz", ChangeDowngrade},               // nor does it order anything
		{"v1.30.4-eks-1-30-020", "v1.30.4-eks-1-30-9", ChangeDowngrade},                        // numbers, not digit strings
		{"v1.2.3-rc.100000000000000000000", "v1.2.3-rc.99999999999999999999", ChangeDowngrade}, // past uint64
		// an earlier pre-release stage: rc → beta → alpha
		{"v1.2.3-rc.2", "v1.2.3-beta.1", ChangeDowngrade},
		{"v1.2.3-beta", "v1.2.3-alpha", ChangeDowngrade},
		{"v1.2.3-rc.1", "v1.2.3-alpha.9", ChangeDowngrade},
		// a release, then a pre-release stage of it (semver's order): it
		// read as a rebuild
		{"v2.5.1+abcdef1", "v2.5.1-rc.1+abcdef1", ChangeDowngrade},
		{"v1.2.3-eksa.1", "v1.2.3-rc.1-eksa.1", ChangeDowngrade},
		// rebuild: same X.Y.Z, different suffix or build metadata, not a
		// clear step back
		{"v1.8.5+205ebc5", "v1.8.5+65d2d66", ChangeRebuild},
		{"v1.8.5+65d2d66", "v1.8.5+205ebc5", ChangeRebuild}, // build metadata has no order
		{"v0.0.0-dev+build.7+65d2d66", "v0.0.0-dev+build.0+abcdef1", ChangeRebuild},
		{"v1.19.4-1", "v1.19.4-2", ChangeRebuild},
		{"v1.19.4-9", "v1.19.4-10", ChangeRebuild}, // numeric order: 9 < 10, which string order denies
		{"v1.14.12-eksa.9", "v1.14.12-eksa.10", ChangeRebuild},
		{"v1.30.4-eks-1-30-9", "v1.30.4-eks-1-30-20", ChangeRebuild},
		{"v1.30.14-eks-1-30-58", "v1.30.14-eks-1-30-60", ChangeRebuild},
		{"v1.15.14-eksa.1", "v1.15.14-eksa.2", ChangeRebuild},
		{"v0.0.0-dev+build.0+abcdef1", "v0.0.0-dev+build.7+65d2d66", ChangeRebuild}, // two '+'
		{"v1.2.3", "v1.2.3+abcdef1", ChangeRebuild},
		{"v1.2.3-rc.1", "v1.2.3", ChangeRebuild},               // the release of the candidate
		{"v1.2.3-rc.1-eksa.1", "v1.2.3-eksa.1", ChangeRebuild}, // (an EKS-A build of each)
		{"v1.2.3", "v1.2.3-eksa.1", ChangeRebuild},             // an EKS-A build tag where there was none
		{"v1.2.3-eksa.2", "v1.2.3-eks.3", ChangeRebuild},       // other words: no order the console trusts
		{"v1.2.3-beta.1", "v1.2.3-rc.2", ChangeRebuild},        // a later stage, same X.Y.Z
		{"v1.2.3-eksa.2", "v1.2.3-1", ChangeRebuild},           // a word against a number
		{"v1.2.3-1", "v1.2.3-eksa.0", ChangeRebuild},
		{"v1.2.3-eksa.2.1", "v1.2.3-eksa.2", ChangeRebuild}, // one a prefix of the other
		{"v1.2.3-eksa.2", "v1.2.3-eksa.2.1", ChangeRebuild},
		{"v1.2.3-eksa.10", "v1.2.3-eksa..9", ChangeRebuild},  // an empty identifier is not a number
		{"v1.2.3-eksa.10", "v1.2.3-eksa.9a", ChangeRebuild},  // nor is 9a
		{"v1.2.3-eksa.010", "v1.2.3-eksa.10", ChangeRebuild}, // the same number, written otherwise
		{"v1.2.3-10", "v1.2.3+9", ChangeRebuild},             // '+9' is build metadata, not a pre-release
	} {
		if got := Classify(tc.old, tc.new); got != tc.want {
			t.Errorf("Classify(%q, %q) = %s, want %s", tc.old, tc.new, got, tc.want)
		}
	}
}

// realDiff is the versioned rows of the diff of the two release-tooling
// manifests (2024-11-11 → 2025-03-25) for a cluster going from Kubernetes
// 1.30 to 1.31; the fixtures carry the same versions. Their images are the
// fixtures' own (fixtureImage).
var realDiff = []ComponentDiff{
	row("eksa", "EKS-A management", "v0.0.0-dev+build.0+abcdef1", "v0.0.0-dev+build.0+abcdef1", ChangeNone),
	row("flux", "Flux", "v2.4.0+abcdef1", "v2.5.1+abcdef1", ChangeMinor),
	row("certManager", "cert-manager", "v1.16.1+abcdef1", "v1.16.4+abcdef1", ChangePatch),
	row("clusterAPI", "cluster-api", "v1.8.5+abcdef1", "v1.9.4+abcdef1", ChangeMinor),
	row("controlPlane", "kubeadm control plane", "v1.8.5+abcdef1", "v1.9.4+abcdef1", ChangeMinor),
	row("vSphere", "vsphere", "v1.11.2+abcdef1", "v1.12.0+abcdef1", ChangeMinor),
	row("docker", "docker", "v1.8.5+abcdef1", "v1.9.4+abcdef1", ChangeMinor),
	row("tinkerbell", "tinkerbell", "v0.5.3+abcdef1", "v0.6.4+abcdef1", ChangeMinor),
	row("nutanix", "nutanix", "v1.4.0+abcdef1", "v1.5.3+abcdef1", ChangeMinor),
	row("snow", "snow", "v0.1.27+abcdef1", "v0.2.1+abcdef1", ChangeMinor),
	row("cloudStack", "cloudstack", "v0.5.0+abcdef1", "v0.5.0+abcdef1", ChangeNone),
	row("bootstrap", "kubeadm bootstrap", "v1.8.5+abcdef1", "v1.9.4+abcdef1", ChangeMinor),
	row("etcdadmBootstrap", "etcdadm-bootstrap", "v1.0.15+abcdef1", "v1.0.15+abcdef1", ChangeNone),
	row("etcdadmController", "etcdadm-controller", "v1.0.24+abcdef1", "v1.0.24+abcdef1", ChangeNone),
	row("cilium", "cilium", "v1.14.12-eksa.2", "v1.15.14-eksa.1", ChangeMinor),
	row("eksD", "kubernetes (EKS-D)", "v1.30.5-eks-1-30-17", "v1.31.6-eks-1-31-16", ChangeMinor),
	row("kindnetd", "kindnetd", "v0.25.0+abcdef1", "v0.26.0+abcdef1", ChangeMinor),
	row("packageController", "package controller", "v0.4.4+abcdef1", "v0.4.6+abcdef1", ChangePatch),
}

// imageRow is an image-only component's row as the fixtures' registry
// (registry.example/eks-anywhere) names its images.
func imageRow(key, name, image, oldTag, newTag string, change ChangeKind) ComponentDiff {
	d := ComponentDiff{Key: key, Name: name, OldVersion: oldTag, NewVersion: newTag, Change: change}
	if oldTag != "" {
		d.OldImage = "registry.example/eks-anywhere/" + image + ":" + oldTag
	}
	if newTag != "" {
		d.NewImage = "registry.example/eks-anywhere/" + image + ":" + newTag
	}
	return d
}

// fixtureImages are the image rows of bundles-2024-11 (Kubernetes 1.30) →
// bundles-2025-03 (1.31), after the versioned rows.
var fixtureImages = []ComponentDiff{
	imageRow("upgrader.upgrader", "in-place upgrader image", "upgrader", "v1-30-17-eks-a-1", "v1-31-16-eks-a-1", ChangeChanged),
	imageRow("bottlerocketHostContainers.admin", "bottlerocket admin image", "bottlerocket-admin", "v0.11.13", "v0.11.13", ChangeNone),
}

func TestDiffBundlesFixtures(t *testing.T) {
	a, b := parseFixture(t, "bundles-2024-11.yaml"), parseFixture(t, "bundles-2025-03.yaml")
	got, err := DiffBundles(a, b, "1.30", "1.31")
	if err != nil {
		t.Fatal(err)
	}
	diffRows(t, got, append(slices.Clone(realDiff), fixtureImages...))
	if s := SummarizeChanges(got); s != "15 of 20 components change: 12 minor, 2 patch, 1 changed; 5 unchanged" {
		t.Errorf("summary = %q", s)
	}

	// Same Kubernetes version: only the per-Kubernetes rows that differ
	// between the two releases' 1.30 bundles change their expectation.
	got, err = DiffBundles(a, b, "1.30", "1.30")
	if err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(realDiff), fixtureImages...)
	want[15] = row("eksD", "kubernetes (EKS-D)", "v1.30.5-eks-1-30-17", "v1.30.10-eks-1-30-27", ChangePatch)
	want[18] = imageRow("upgrader.upgrader", "in-place upgrader image", "upgrader", "v1-30-17-eks-a-1", "v1-30-27-eks-a-1", ChangeChanged)
	diffRows(t, got, want)

	// Against itself nothing changes.
	got, _ = DiffBundles(b, b, "1.31", "1.31")
	for _, d := range got {
		if d.Change != ChangeNone || d.OldVersion != d.NewVersion {
			t.Errorf("self diff row %+v", d)
		}
	}
	if s := SummarizeChanges(got); s != "all components are up to date" {
		t.Errorf("self summary = %q", s)
	}
}

func TestDiffBundlesEveryKind(t *testing.T) {
	b, c := parseFixture(t, "bundles-2025-03.yaml"), parseFixture(t, "bundles-synthetic-next.yaml")
	got, err := DiffBundles(b, c, "1.31", "1.31")
	if err != nil {
		t.Fatal(err)
	}
	want := []ComponentDiff{
		row("eksa", "EKS-A management", "v0.0.0-dev+build.0+abcdef1", "v0.0.0-dev+build.7+65d2d66", ChangeRebuild),
		row("flux", "Flux", "v2.5.1+abcdef1", "v2.4.0+65d2d66", ChangeDowngrade),
		row("certManager", "cert-manager", "v1.16.4+abcdef1", "v2.0.0+65d2d66", ChangeMajor),
		row("clusterAPI", "cluster-api", "v1.9.4+abcdef1", "v1.9.4+65d2d66", ChangeRebuild),
		row("controlPlane", "kubeadm control plane", "v1.9.4+abcdef1", "v1.9.4+65d2d66", ChangeRebuild),
		row("vSphere", "vsphere", "v1.12.0+abcdef1", "v1.12.0+abcdef1", ChangeNone),
		row("docker", "docker", "v1.9.4+abcdef1", "v1.9.4+65d2d66", ChangeRebuild),
		row("tinkerbell", "tinkerbell", "v0.6.4+abcdef1", "v0.6.6+65d2d66", ChangePatch),
		row("nutanix", "nutanix", "v1.5.3+abcdef1", "v1.5.3+abcdef1", ChangeNone),
		row("snow", "snow", "v0.2.1+abcdef1", "", ChangeRemoved),
		row("cloudStack", "cloudstack", "v0.5.0+abcdef1", "deprecated", ChangeChanged),
		row("bootstrap", "kubeadm bootstrap", "v1.9.4+abcdef1", "v1.9.4+65d2d66", ChangeRebuild),
		row("etcdadmBootstrap", "etcdadm-bootstrap", "v1.0.15+abcdef1", "v1.0.15+abcdef1", ChangeNone),
		row("etcdadmController", "etcdadm-controller", "v1.0.24+abcdef1", "v1.0.24+abcdef1", ChangeNone),
		row("cilium", "cilium", "v1.15.14-eksa.1", "v1.15.14-eksa.2", ChangeRebuild),
		row("eksD", "kubernetes (EKS-D)", "v1.31.6-eks-1-31-16", "v1.31.6-eks-1-31-18", ChangeRebuild),
		row("kindnetd", "kindnetd", "v0.26.0+abcdef1", "v0.26.0+abcdef1", ChangeNone),
		row("packageController", "package controller", "v0.4.6+abcdef1", "v0.4.7+65d2d66", ChangePatch),
		row("kubeVip", "kubeVip", "", "v0.9.1+65d2d66", ChangeAdded), // unknown to the catalog: shown, by key, after the known ones
		// the images follow every versioned row
		imageRow("upgrader.upgrader", "in-place upgrader image", "upgrader", "v1-31-16-eks-a-1", "v1-31-18-eks-a-1", ChangeChanged),
		imageRow("bottlerocketHostContainers.admin", "bottlerocket admin image", "bottlerocket-admin", "v0.11.13", "v0.11.13", ChangeNone),
	}
	diffRows(t, got, want)
	if s := SummarizeChanges(got); s != "15 of 21 components change: 1 major, 2 patch, 7 rebuild, 1 downgrade, 2 changed, 1 added, 1 removed; 6 unchanged" {
		t.Errorf("summary = %q", s)
	}
}

// Management components come from versionsBundles[0] even when the cluster's
// own bundle differs; per-Kubernetes ones from the cluster's bundle.
func TestDiffBundlesReadsManagementFromFirstBundle(t *testing.T) {
	mk := func(first, second string) *Bundles {
		return &Bundles{Source: "x.yaml", VersionsBundles: []VersionsBundle{
			{KubeVersion: "1.30", EksD: EksD{Name: "k-1", Channel: "1-30", KubeVersion: "v1.30.0"}, Components: map[string]string{"clusterAPI": first, "cilium": first}},
			{KubeVersion: "1.31", EksD: EksD{Name: "k-2", Channel: "1-31", KubeVersion: "v1.31.0"}, Components: map[string]string{"clusterAPI": second, "cilium": second}},
		}}
	}
	got, err := DiffBundles(mk("v1.0.0", "v9.0.0"), mk("v1.1.0", "v9.9.0"), "1.31", "1.31")
	if err != nil {
		t.Fatal(err)
	}
	want := []ComponentDiff{
		row("clusterAPI", "cluster-api", "v1.0.0", "v1.1.0", ChangeMinor),
		row("cilium", "cilium", "v9.0.0", "v9.9.0", ChangeMinor),
		row("eksD", "kubernetes (EKS-D)", "v1.31.0-eks-1-31-2", "v1.31.0-eks-1-31-2", ChangeNone),
	}
	diffRows(t, got, want)
}

func TestDiffBundlesUnknownKubernetes(t *testing.T) {
	a, b := parseFixture(t, "bundles-2024-11.yaml"), parseFixture(t, "bundles-2025-03.yaml")
	for _, tc := range []struct{ cur, tgt, file, versions string }{
		{"1.28", "1.30", "bundles-2024-11.yaml", "1.29, 1.30, 1.31"},
		{"1.30", "1.29", "bundles-2025-03.yaml", "1.30, 1.31, 1.32"},
	} {
		_, err := DiffBundles(a, b, tc.cur, tc.tgt)
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.file) || !strings.Contains(err.Error(), tc.versions) {
			t.Errorf("DiffBundles(%s, %s) error = %v; want an InputError naming %s and %s", tc.cur, tc.tgt, err, tc.file, tc.versions)
		}
	}
}

// Image-only components: their rows show the image tags, classified as
// versions where the tags are versions, and follow the versioned rows in
// the image catalog's order.
func TestDiffBundlesImages(t *testing.T) {
	const (
		up    = "upgrader.upgrader"
		admin = "bottlerocketHostContainers.admin"
		ctl   = "bottlerocketHostContainers.control"
	)
	mk := func(images map[string]string) *Bundles {
		return &Bundles{Source: "x.yaml", VersionsBundles: []VersionsBundle{{
			KubeVersion: "1.31", EksD: EksD{Name: "k-1", Channel: "1-31", KubeVersion: "v1.31.0"},
			Components: map[string]string{"zzzNewComponent": "v1.0.0", "cilium": "v1.15.14-eksa.1"},
			Images:     images,
		}}}
	}
	ecr := func(repo, tag string) string { return "public.ecr.aws/" + repo + ":" + tag }
	for _, tc := range []struct {
		name     string
		old, new string // uris of the upgrader image
		want     ComponentDiff
	}{
		{"tags that are not versions", ecr("aws/upgrader", "v1-30-17-eks-a-84"), ecr("aws/upgrader", "v1-31-11-eks-a-84"),
			ComponentDiff{OldVersion: "v1-30-17-eks-a-84", NewVersion: "v1-31-11-eks-a-84", Change: ChangeChanged}},
		{"tags that are versions", ecr("aws/upgrader", "v0.11.13"), ecr("aws/upgrader", "v0.11.16"),
			ComponentDiff{OldVersion: "v0.11.13", NewVersion: "v0.11.16", Change: ChangePatch}},
		{"a build number going down", ecr("aws/upgrader", "v0.25.0-eks-a-10"), ecr("aws/upgrader", "v0.25.0-eks-a-9"),
			ComponentDiff{OldVersion: "v0.25.0-eks-a-10", NewVersion: "v0.25.0-eks-a-9", Change: ChangeDowngrade}},
		{"equal", ecr("aws/upgrader", "v1-31-11-eks-a-84"), ecr("aws/upgrader", "v1-31-11-eks-a-84"),
			ComponentDiff{OldVersion: "v1-31-11-eks-a-84", NewVersion: "v1-31-11-eks-a-84", Change: ChangeNone}},
		// The tag alone would read "v1-31-11-eks-a-84 → v1-31-11-eks-a-84
		// changed": the references say what changed.
		{"same tag, another repository", ecr("aws/upgrader", "v1-31-11-eks-a-84"), "mirror.example:5000/aws/upgrader:v1-31-11-eks-a-84",
			ComponentDiff{OldVersion: ecr("aws/upgrader", "v1-31-11-eks-a-84"), NewVersion: "mirror.example:5000/aws/upgrader:v1-31-11-eks-a-84", Change: ChangeChanged}},
		{"same tag, another digest", ecr("aws/upgrader", "v1@sha256:aa"), ecr("aws/upgrader", "v1@sha256:bb"),
			ComponentDiff{OldVersion: ecr("aws/upgrader", "v1@sha256:aa"), NewVersion: ecr("aws/upgrader", "v1@sha256:bb"), Change: ChangeChanged}},
		{"a digest is not the tag", ecr("aws/upgrader", "v0.1.0@sha256:aa"), ecr("aws/upgrader", "v0.2.0@sha256:bb"),
			ComponentDiff{OldVersion: "v0.1.0", NewVersion: "v0.2.0", Change: ChangeMinor}},
		{"no tag: the reference", "mirror.example:5000/aws/upgrader", "mirror.example:5000/aws/upgrader@sha256:bb",
			ComponentDiff{OldVersion: "mirror.example:5000/aws/upgrader", NewVersion: "mirror.example:5000/aws/upgrader@sha256:bb", Change: ChangeChanged}},
		// The registry's port is no tag: the ':' is before the last '/'.
		{"no tag, a registry port", "mirror.example:5000/aws/upgrader", ecr("aws/upgrader", "v0.2.0"),
			ComponentDiff{OldVersion: "mirror.example:5000/aws/upgrader", NewVersion: "v0.2.0", Change: ChangeChanged}},
		{"added", "", ecr("aws/upgrader", "v1-31-11-eks-a-84"),
			ComponentDiff{NewVersion: "v1-31-11-eks-a-84", Change: ChangeAdded}},
		{"removed", ecr("aws/upgrader", "v1-31-11-eks-a-84"), "",
			ComponentDiff{OldVersion: "v1-31-11-eks-a-84", Change: ChangeRemoved}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DiffBundles(mk(map[string]string{up: tc.old}), mk(map[string]string{up: tc.new}), "1.31", "1.31")
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			want.Key, want.Name, want.OldImage, want.NewImage = up, "in-place upgrader image", tc.old, tc.new
			diffRows(t, got, []ComponentDiff{
				row("cilium", "cilium", "v1.15.14-eksa.1", "v1.15.14-eksa.1", ChangeNone),
				row("eksD", "kubernetes (EKS-D)", "v1.31.0-eks-1-31-1", "v1.31.0-eks-1-31-1", ChangeNone),
				row("zzzNewComponent", "zzzNewComponent", "v1.0.0", "v1.0.0", ChangeNone),
				want,
			})
		})
	}

	// Every image the catalog shows, in its order whatever the map's; one
	// that neither side has makes no row.
	got, err := DiffBundles(mk(map[string]string{ctl: ecr("bottlerocket/bottlerocket-control", "v0.7.17"), up: ecr("aws/upgrader", "v1-30-17-eks-a-84")}),
		mk(map[string]string{ctl: ecr("bottlerocket/bottlerocket-control", "v0.7.20"), up: ecr("aws/upgrader", "v1-31-11-eks-a-84")}), "1.31", "1.31")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, d := range got {
		keys = append(keys, d.Key)
	}
	if want := []string{"cilium", KeyKubernetes, "zzzNewComponent", up, ctl}; !reflect.DeepEqual(keys, want) {
		t.Errorf("row keys = %v, want %v", keys, want)
	}
	if d := got[len(got)-1]; d.Name != "bottlerocket ctrl image" || d.Change != ChangePatch {
		t.Errorf("control row = %+v", d)
	}

	// Images are read from the cluster's versions bundle, not the first.
	two := mk(map[string]string{up: ecr("aws/upgrader", "v1-31-11-eks-a-84")})
	two.VersionsBundles = append([]VersionsBundle{{KubeVersion: "1.30", EksD: EksD{Name: "k-1", Channel: "1-30", KubeVersion: "v1.30.0"},
		Images: map[string]string{up: ecr("aws/upgrader", "v1-30-17-eks-a-84")}}}, two.VersionsBundles...)
	got, err = DiffBundles(two, two, "1.30", "1.31")
	if err != nil {
		t.Fatal(err)
	}
	if d := got[len(got)-1]; d.Key != up || d.OldVersion != "v1-30-17-eks-a-84" || d.NewVersion != "v1-31-11-eks-a-84" {
		t.Errorf("upgrader row = %+v, want 1.30's image → 1.31's", d)
	}
}

func TestCatalog(t *testing.T) {
	names := map[string]string{}
	for _, c := range Catalog() {
		if prev, dup := names[c.Name]; dup {
			t.Errorf("name %q used by %s and %s", c.Name, prev, c.Key)
		}
		names[c.Name] = c.Key
	}
	if LookupComponent("controlPlane").Name == LookupComponent("bootstrap").Name {
		t.Error("control-plane and bootstrap providers share a name")
	}
	if c := LookupComponent("somethingNew"); c != (Component{Key: "somethingNew", Name: "somethingNew"}) {
		t.Errorf("unknown key = %+v", c)
	}
	// An image row says it is an image: its "version" is a tag.
	for _, k := range []string{"upgrader.upgrader", "bottlerocketHostContainers.admin", "bottlerocketHostContainers.control"} {
		if c := LookupComponent(k); !c.Image || c.Management || !strings.HasSuffix(c.Name, " image") {
			t.Errorf("LookupComponent(%s) = %+v, want an image read per Kubernetes version", k, c)
		}
	}
	// Wider, the name column pushes CHANGE off an 80-column plan screen.
	for _, c := range Catalog() {
		if c.Image && len(c.Name) > 24 {
			t.Errorf("image name %q is %d columns, more than 24", c.Name, len(c.Name))
		}
	}
	if c := LookupComponent("upgrader"); c.Image {
		t.Errorf("the upgrader's bundle key is not its image: %+v", c)
	}
	keys := []string{"zeta", "eksD", "alpha", "eksa", "cilium"}
	SortComponentKeys(keys)
	if want := []string{"eksa", "cilium", "eksD", "alpha", "zeta"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("SortComponentKeys = %v, want %v", keys, want)
	}
}

// row is a versioned component's row: no image references.
func row(key, name, oldVersion, newVersion string, change ChangeKind) ComponentDiff {
	return ComponentDiff{Key: key, Name: name, OldVersion: oldVersion, NewVersion: newVersion, Change: change}
}

func diffRows(t *testing.T, got, want []ComponentDiff) {
	t.Helper()
	for i := 0; i < len(got) || i < len(want); i++ {
		var g, w ComponentDiff
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}
