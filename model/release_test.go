package model

import (
	"errors"
	"strings"
	"testing"
)

func TestEKSAReleaseName(t *testing.T) {
	for in, want := range map[string]string{
		"v0.19.0":                    "eksa-v0-19-0",
		"v0.19.0-dev+latest":         "eksa-v0-19-0-dev-plus-latest",
		"v0.0.0-dev+build.0+abcdef1": "eksa-v0-0-0-dev-plus-build-0-plus-abcdef1",
	} {
		if got := EKSAReleaseName(in); got != want {
			t.Errorf("EKSAReleaseName(%q) = %q, want %q", in, got, want)
		}
	}
}

const eksaRelease = `apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: EKSARelease
metadata:
  name: eksa-v0-21-1
  namespace: eksa-system
spec:
  bundleManifestUrl: https://artifacts.example/releases/bundles/73/manifest.yaml
  bundlesRef:
    apiVersion: anywhere.eks.amazonaws.com/v1alpha1
    name: bundles-73
    namespace: eksa-system
  gitCommit: 0123456789abcdef0123456789abcdef01234567
  releaseDate: "2024-11-04 18:03:29"
  version: v0.21.1
  futureField: true
`

func TestParseEKSARelease(t *testing.T) {
	r, err := ParseEKSARelease([]byte(eksaRelease), "rel.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := EKSARelease{Name: "eksa-v0-21-1", Version: "v0.21.1", BundlesRefName: "bundles-73", BundlesRefNamespace: "eksa-system",
		ReleaseDate: "2024-11-04 18:03:29", GitCommit: "0123456789abcdef0123456789abcdef01234567",
		BundleManifestURL: "https://artifacts.example/releases/bundles/73/manifest.yaml"}
	if *r != want {
		t.Errorf("got %+v\nwant %+v", *r, want)
	}
	if EKSAReleaseName(r.Version) != r.Name {
		t.Errorf("name rule disagrees with the object: %s vs %s", EKSAReleaseName(r.Version), r.Name)
	}
}

func TestParseEKSAReleaseErrors(t *testing.T) {
	for _, tc := range []struct{ name, old, new, field, problem string }{
		{"wrong kind", "kind: EKSARelease", "kind: Bundles", "kind", "not an EKS-A EKSARelease"},
		{"missing version", "  version: v0.21.1\n", "", "spec.version", "is missing"},
		{"missing bundlesRef", "  bundlesRef:\n    apiVersion: anywhere.eks.amazonaws.com/v1alpha1\n    name: bundles-73\n    namespace: eksa-system\n", "", "spec.bundlesRef", "is missing"},
		{"bundlesRef not mapping", "  bundlesRef:\n    apiVersion: anywhere.eks.amazonaws.com/v1alpha1\n    name: bundles-73\n    namespace: eksa-system\n", "  bundlesRef: bundles-73\n", "spec.bundlesRef", "must be a mapping"},
		{"missing ref name", "    name: bundles-73\n", "", "spec.bundlesRef.name", "is missing"},
		{"missing ref namespace", "    namespace: eksa-system\n  gitCommit", "  gitCommit", "spec.bundlesRef.namespace", "is missing"},
		{"date not string", `releaseDate: "2024-11-04 18:03:29"`, "releaseDate: [1]", "spec.releaseDate", "must be a string"},
		{"no spec", "spec:", "notspec:", "spec", "is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(eksaRelease, tc.old) {
				t.Fatalf("fixture lacks %q", tc.old)
			}
			_, err := ParseEKSARelease([]byte(strings.Replace(eksaRelease, tc.old, tc.new, 1)), "rel.yaml")
			var ie *InputError
			if !errors.As(err, &ie) || ie.Source != "rel.yaml" || ie.Field != tc.field || !strings.Contains(ie.Problem, tc.problem) {
				t.Errorf("error = %#v, want field %q problem containing %q", err, tc.field, tc.problem)
			}
		})
	}
}
