package model

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseBundles: whatever the bytes, ParseBundles returns either an
// *InputError naming the source and a fix, or a Bundles every later step can
// use without checking again (non-empty, unique Kubernetes versions, complete
// EKS-D).
func FuzzParseBundles(f *testing.F) {
	for _, s := range []string{
		minimalBundles,
		"",
		"{}",
		"null",
		"- a",
		"kind: Bundles\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\n",
		"kind: Bundles\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nspec: {number: 1, versionsBundles: [null]}\n",
		"kind: Bundles\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nspec: {number: 1, versionsBundles: [{kubeVersion: 1.30}]}\n",
		`{"apiVersion":"anywhere.eks.amazonaws.com/v1alpha1","kind":"Bundles","spec":{"number":1,"versionsBundles":[{"kubeVersion":"1.31","eksD":{"name":"k-1","channel":"1-31","kubeVersion":"v1.31.0"},"x":{"version":7}}]}}`,
		"a: &a [*a, *a]\nb: *a\n",
		minimalBundles + "---\n" + minimalBundles,
		strings.Replace(minimalBundles, "version: v1.16.1+abcdef1", "version: null", 1),
		minimalBundles + `    cilium: {version: v1.15.14-eksa.1, operator: {uri: x}}
    cloudStack: {version: deprecated}
    haproxy: {image: {uri: x}}
    upgrader: {upgrader: {uri: "r.example/upgrader:v1-31-16-eks-a-1"}}
    bottlerocketHostContainers: {admin: {uri: "r.example/admin:v0.11.13"}, control: {}}
    eksa: {version: "v0.0.0-dev+build.0+abcdef1"}
  - kubeVersion: "1.31"
    endOfStandardSupport: "2025-12-31"
    eksD: {name: kubernetes-1-31-eks-16, channel: 1-31, kubeVersion: v1.31.6}
    bootstrap: {version: v1.9.4+abcdef1}
    upgrader: {upgrader: {uri: "r.example/upgrader:v1-31-16-eks-a-1"}}
`,
	} {
		f.Add([]byte(s))
	}
	// Small seeds on purpose: the fuzzer minimizes every new interesting
	// input, and mutations of a full 40 KB manifest spend the time there
	// instead of exploring. The full fixtures are parsed by the unit tests.
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseBundles(data, "fuzz.yaml")
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) || ie.Source != "fuzz.yaml" || ie.Problem == "" || ie.Fix == "" {
				t.Fatalf("error %#v is not an InputError naming the source and a fix", err)
			}
			if b != nil {
				t.Fatal("non-nil Bundles with an error")
			}
			return
		}
		if len(b.VersionsBundles) == 0 {
			t.Fatal("parsed Bundles without versions bundles")
		}
		for i, vb := range b.VersionsBundles {
			if vb.KubeVersion == "" || vb.EksD.Name == "" || vb.EksD.Channel == "" || vb.EksD.KubeVersion == "" {
				t.Fatalf("versions bundle %d incomplete: %+v", i, vb)
			}
			if got, err := b.ForKubernetes(vb.KubeVersion); err != nil || got != &b.VersionsBundles[i] {
				t.Fatalf("ForKubernetes(%q) does not find bundle %d", vb.KubeVersion, i)
			}
			if !strings.HasPrefix(vb.EksD.Version(), vb.EksD.KubeVersion+"-eks-"+vb.EksD.Channel+"-") || strings.HasSuffix(vb.EksD.Version(), "-") {
				t.Fatalf("EksD.Version() = %q from %+v", vb.EksD.Version(), vb.EksD)
			}
			for k, v := range vb.Components {
				if v == "" || notComponents[k] {
					t.Fatalf("component %q = %q", k, v)
				}
			}
			for k, v := range vb.Images {
				if v == "" || !LookupComponent(k).Image {
					t.Fatalf("image %q = %q", k, v)
				}
			}
		}
		k := b.VersionsBundles[len(b.VersionsBundles)-1].KubeVersion
		rows, err := DiffBundles(b, b, k, k)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.Change != ChangeNone {
				t.Fatalf("self diff row %+v", r)
			}
		}
	})
}

var validKinds = func() map[ChangeKind]bool {
	m := map[ChangeKind]bool{}
	for _, k := range ChangeKinds {
		m[k] = true
	}
	return m
}()

// FuzzClassify: Classify is total and consistent with its reverse.
func FuzzClassify(f *testing.F) {
	for _, p := range [][2]string{
		{"v1.8.5+205ebc5", "v1.8.5+65d2d66"},
		{"v1.19.4-1", "v1.19.4-2"},
		{"v1.14.12-eksa.10", "v1.14.12-eksa.9"},
		{"v1.2.3-eksa.2", "v1.2.3-eksa.2.1"},
		{"v1.30.14-eks-1-30-58", "v1.30.14-eks-1-30-60"},
		{"v0.0.0-dev+build.0+abcdef1", "v0.0.0-dev+build.7+65d2d66"},
		{"v0.5.0+abcdef1", "deprecated"},
		{"v1.16.4+abcdef1", "v2.0.0"},
		{"v1.8.5", "v1.9.4"},
		{"v1.2.9", "v1.2.10"},
		{"v2.5.1", "v2.4.0"},
		{"", "v1.0.0"},
		{"v1.0.0", ""},
		{"v18446744073709551616.0.0", "v1.0.0"},
		{"v1.2.3.4", "v1.2.3"},
		{"v01.2.3", "v1.2.3"},
	} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ab, ba := Classify(a, b), Classify(b, a)
		if !validKinds[ab] {
			t.Fatalf("Classify(%q, %q) = %q, not a change kind", a, b, ab)
		}
		if (ab == ChangeNone) != (a == b) {
			t.Fatalf("Classify(%q, %q) = %s", a, b, ab)
		}
		want := map[ChangeKind]ChangeKind{
			ChangeNone: ChangeNone, ChangeAdded: ChangeRemoved, ChangeRemoved: ChangeAdded,
			ChangeChanged: ChangeChanged, ChangeMajor: ChangeDowngrade, ChangeMinor: ChangeDowngrade, ChangePatch: ChangeDowngrade,
		}
		if w, ok := want[ab]; ok && ba != w {
			t.Fatalf("Classify(%q, %q) = %s but reverse = %s, want %s", a, b, ab, ba, w)
		}
		// Same X.Y.Z: a build number going up is a rebuild, going down a
		// downgrade; one without order is a rebuild both ways.
		if ab == ChangeRebuild && ba != ChangeRebuild && ba != ChangeDowngrade {
			t.Fatalf("Classify(%q, %q) = rebuild but reverse = %s", a, b, ba)
		}
		if ab == ChangeDowngrade && ba != ChangeMajor && ba != ChangeMinor && ba != ChangePatch && ba != ChangeRebuild {
			t.Fatalf("Classify(%q, %q) = downgrade but reverse = %s", a, b, ba)
		}
	})
}
