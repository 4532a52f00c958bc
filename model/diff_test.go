package model

import (
	"errors"
	"reflect"
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
		// rebuild: same X.Y.Z, different suffix or build metadata
		{"v1.8.5+205ebc5", "v1.8.5+65d2d66", ChangeRebuild},
		{"v1.19.4-1", "v1.19.4-2", ChangeRebuild},
		{"v1.19.4-10", "v1.19.4-9", ChangeRebuild}, // prerelease numbers are never compared
		{"v1.30.14-eks-1-30-58", "v1.30.14-eks-1-30-60", ChangeRebuild},
		{"v1.15.14-eksa.1", "v1.15.14-eksa.2", ChangeRebuild},
		{"v0.0.0-dev+build.0+abcdef1", "v0.0.0-dev+build.7+65d2d66", ChangeRebuild}, // two '+'
		{"v1.2.3", "v1.2.3+abcdef1", ChangeRebuild},
		{"v1.2.3-rc.1", "v1.2.3", ChangeRebuild},
	} {
		if got := Classify(tc.old, tc.new); got != tc.want {
			t.Errorf("Classify(%q, %q) = %s, want %s", tc.old, tc.new, got, tc.want)
		}
	}
}

// realDiff is the diff of the two release-tooling manifests (2024-11-11 →
// 2025-03-25) for a cluster going from Kubernetes 1.30 to 1.31; the fixtures
// carry the same versions.
var realDiff = []ComponentDiff{
	{"eksa", "EKS-A management", "v0.0.0-dev+build.0+abcdef1", "v0.0.0-dev+build.0+abcdef1", ChangeNone},
	{"flux", "Flux", "v2.4.0+abcdef1", "v2.5.1+abcdef1", ChangeMinor},
	{"certManager", "cert-manager", "v1.16.1+abcdef1", "v1.16.4+abcdef1", ChangePatch},
	{"clusterAPI", "cluster-api", "v1.8.5+abcdef1", "v1.9.4+abcdef1", ChangeMinor},
	{"controlPlane", "kubeadm control plane", "v1.8.5+abcdef1", "v1.9.4+abcdef1", ChangeMinor},
	{"vSphere", "vsphere", "v1.11.2+abcdef1", "v1.12.0+abcdef1", ChangeMinor},
	{"docker", "docker", "v1.8.5+abcdef1", "v1.9.4+abcdef1", ChangeMinor},
	{"tinkerbell", "tinkerbell", "v0.5.3+abcdef1", "v0.6.4+abcdef1", ChangeMinor},
	{"nutanix", "nutanix", "v1.4.0+abcdef1", "v1.5.3+abcdef1", ChangeMinor},
	{"snow", "snow", "v0.1.27+abcdef1", "v0.2.1+abcdef1", ChangeMinor},
	{"cloudStack", "cloudstack", "v0.5.0+abcdef1", "v0.5.0+abcdef1", ChangeNone},
	{"bootstrap", "kubeadm bootstrap", "v1.8.5+abcdef1", "v1.9.4+abcdef1", ChangeMinor},
	{"etcdadmBootstrap", "etcdadm-bootstrap", "v1.0.15+abcdef1", "v1.0.15+abcdef1", ChangeNone},
	{"etcdadmController", "etcdadm-controller", "v1.0.24+abcdef1", "v1.0.24+abcdef1", ChangeNone},
	{"cilium", "cilium", "v1.14.12-eksa.2", "v1.15.14-eksa.1", ChangeMinor},
	{"eksD", "kubernetes (EKS-D)", "v1.30.5-eks-1-30-17", "v1.31.6-eks-1-31-16", ChangeMinor},
	{"kindnetd", "kindnetd", "v0.25.0+abcdef1", "v0.26.0+abcdef1", ChangeMinor},
	{"packageController", "package controller", "v0.4.4+abcdef1", "v0.4.6+abcdef1", ChangePatch},
}

func TestDiffBundlesFixtures(t *testing.T) {
	a, b := parseFixture(t, "bundles-2024-11.yaml"), parseFixture(t, "bundles-2025-03.yaml")
	got, err := DiffBundles(a, b, "1.30", "1.31")
	if err != nil {
		t.Fatal(err)
	}
	diffRows(t, got, realDiff)
	if s := SummarizeChanges(got); s != "14 of 18 components change: 12 minor, 2 patch; 4 unchanged" {
		t.Errorf("summary = %q", s)
	}

	// Same Kubernetes version: only the kubernetes row changes its expectation.
	got, err = DiffBundles(a, b, "1.30", "1.30")
	if err != nil {
		t.Fatal(err)
	}
	want := append([]ComponentDiff(nil), realDiff...)
	want[15] = ComponentDiff{"eksD", "kubernetes (EKS-D)", "v1.30.5-eks-1-30-17", "v1.30.10-eks-1-30-27", ChangePatch}
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
		{"eksa", "EKS-A management", "v0.0.0-dev+build.0+abcdef1", "v0.0.0-dev+build.7+65d2d66", ChangeRebuild},
		{"flux", "Flux", "v2.5.1+abcdef1", "v2.4.0+65d2d66", ChangeDowngrade},
		{"certManager", "cert-manager", "v1.16.4+abcdef1", "v2.0.0+65d2d66", ChangeMajor},
		{"clusterAPI", "cluster-api", "v1.9.4+abcdef1", "v1.9.4+65d2d66", ChangeRebuild},
		{"controlPlane", "kubeadm control plane", "v1.9.4+abcdef1", "v1.9.4+65d2d66", ChangeRebuild},
		{"vSphere", "vsphere", "v1.12.0+abcdef1", "v1.12.0+abcdef1", ChangeNone},
		{"docker", "docker", "v1.9.4+abcdef1", "v1.9.4+65d2d66", ChangeRebuild},
		{"tinkerbell", "tinkerbell", "v0.6.4+abcdef1", "v0.6.6+65d2d66", ChangePatch},
		{"nutanix", "nutanix", "v1.5.3+abcdef1", "v1.5.3+abcdef1", ChangeNone},
		{"snow", "snow", "v0.2.1+abcdef1", "", ChangeRemoved},
		{"cloudStack", "cloudstack", "v0.5.0+abcdef1", "deprecated", ChangeChanged},
		{"bootstrap", "kubeadm bootstrap", "v1.9.4+abcdef1", "v1.9.4+65d2d66", ChangeRebuild},
		{"etcdadmBootstrap", "etcdadm-bootstrap", "v1.0.15+abcdef1", "v1.0.15+abcdef1", ChangeNone},
		{"etcdadmController", "etcdadm-controller", "v1.0.24+abcdef1", "v1.0.24+abcdef1", ChangeNone},
		{"cilium", "cilium", "v1.15.14-eksa.1", "v1.15.14-eksa.2", ChangeRebuild},
		{"eksD", "kubernetes (EKS-D)", "v1.31.6-eks-1-31-16", "v1.31.6-eks-1-31-18", ChangeRebuild},
		{"kindnetd", "kindnetd", "v0.26.0+abcdef1", "v0.26.0+abcdef1", ChangeNone},
		{"packageController", "package controller", "v0.4.6+abcdef1", "v0.4.7+65d2d66", ChangePatch},
		{"kubeVip", "kubeVip", "", "v0.9.1+65d2d66", ChangeAdded}, // unknown to the catalog: shown, by key, last
	}
	diffRows(t, got, want)
	if s := SummarizeChanges(got); s != "14 of 19 components change: 1 major, 2 patch, 7 rebuild, 1 downgrade, 1 changed, 1 added, 1 removed; 5 unchanged" {
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
		{"clusterAPI", "cluster-api", "v1.0.0", "v1.1.0", ChangeMinor},
		{"cilium", "cilium", "v9.0.0", "v9.9.0", ChangeMinor},
		{"eksD", "kubernetes (EKS-D)", "v1.31.0-eks-1-31-2", "v1.31.0-eks-1-31-2", ChangeNone},
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
	keys := []string{"zeta", "eksD", "alpha", "eksa", "cilium"}
	SortComponentKeys(keys)
	if want := []string{"eksa", "cilium", "eksD", "alpha", "zeta"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("SortComponentKeys = %v, want %v", keys, want)
	}
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
		if g != w {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}
