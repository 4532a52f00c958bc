package model

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// referenceBundles finds the real Bundles manifests that CI keeps beside the
// repository (../shared/reference/bundles from the repository root). They are
// not part of the project; the tests that use them are an opt-in
// compatibility check and skip when they are absent.
func referenceBundles(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("compatibility check skipped: repository root (go.mod) not found")
		}
		dir = parent
	}
	ref := filepath.Join(dir, "..", "shared", "reference", "bundles")
	if _, err := os.Stat(ref); err != nil {
		t.Skipf("compatibility check skipped: the real Bundles manifests are not beside the repository (../shared/reference/bundles: %v)", err)
	}
	return ref
}

// TestCompatReferenceBundles parses the release tooling's real manifests and
// checks every diff row against what the files say (read by hand from them).
func TestCompatReferenceBundles(t *testing.T) {
	ref := referenceBundles(t)
	parse := func(name string) *Bundles {
		data, err := os.ReadFile(filepath.Join(ref, name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := ParseBundles(data, name)
		if err != nil {
			t.Fatalf("ParseBundles(%s): %v", name, err)
		}
		return b
	}
	old, cur := parse("bundles-2024-11-11.yaml"), parse("bundles-2025-03-25.yaml")

	if got, want := old.KubernetesVersions(), []string{"1.27", "1.28", "1.29", "1.30", "1.31"}; !reflect.DeepEqual(got, want) {
		t.Errorf("old KubernetesVersions = %v, want %v", got, want)
	}
	if got, want := cur.KubernetesVersions(), []string{"1.28", "1.29", "1.30", "1.31", "1.32"}; !reflect.DeepEqual(got, want) {
		t.Errorf("new KubernetesVersions = %v, want %v", got, want)
	}
	// Every versions bundle of a manifest ships the same components; the
	// fixtures carry exactly these versions.
	fixA, fixB := parseFixture(t, "bundles-2024-11.yaml"), parseFixture(t, "bundles-2025-03.yaml")
	for _, pair := range []struct{ real, fixture *Bundles }{{old, fixA}, {cur, fixB}} {
		for _, vb := range pair.real.VersionsBundles {
			if !reflect.DeepEqual(vb.Components, pair.fixture.VersionsBundles[0].Components) {
				t.Errorf("%s %s components differ from the fixture's:\n%v\n%v", pair.real.Source, vb.KubeVersion, vb.Components, pair.fixture.VersionsBundles[0].Components)
			}
		}
	}

	rows, err := DiffBundles(old, cur, "1.30", "1.31")
	if err != nil {
		t.Fatal(err)
	}
	ecr := "public.ecr.aws/"
	diffRows(t, rows, append(slices.Clone(realDiff),
		ComponentDiff{"upgrader.upgrader", "in-place upgrader image", "v1-30-17-eks-a-v0.0.0-dev-build.1", "v1-31-16-eks-a-v0.0.0-dev-build.1", ChangeChanged,
			ecr + "release-container-registry/aws/upgrader:v1-30-17-eks-a-v0.0.0-dev-build.1", ecr + "release-container-registry/aws/upgrader:v1-31-16-eks-a-v0.0.0-dev-build.1", nil},
		ComponentDiff{"bottlerocketHostContainers.admin", "bottlerocket admin image", "v0.11.13", "v0.11.16", ChangePatch,
			ecr + "bottlerocket/bottlerocket-admin:v0.11.13", ecr + "bottlerocket/bottlerocket-admin:v0.11.16", nil},
		ComponentDiff{"bottlerocketHostContainers.control", "bottlerocket ctrl image", "v0.7.17", "v0.7.20", ChangePatch,
			ecr + "bottlerocket/bottlerocket-control:v0.7.17", ecr + "bottlerocket/bottlerocket-control:v0.7.20", nil},
	))

	// The kubernetes row for every upgrade the two manifests allow.
	oldEksD := map[string]string{"1.28": "v1.28.14-eks-1-28-35", "1.29": "v1.29.9-eks-1-29-24", "1.30": "v1.30.5-eks-1-30-17", "1.31": "v1.31.1-eks-1-31-6"}
	newEksD := map[string]string{"1.28": "v1.28.15-eks-1-28-45", "1.29": "v1.29.14-eks-1-29-34", "1.30": "v1.30.10-eks-1-30-27", "1.31": "v1.31.6-eks-1-31-16", "1.32": "v1.32.2-eks-1-32-8"}
	for _, tc := range []struct {
		from, to string
		want     ChangeKind
	}{
		{"1.28", "1.28", ChangePatch}, {"1.28", "1.29", ChangeMinor},
		{"1.29", "1.29", ChangePatch}, {"1.29", "1.30", ChangeMinor},
		{"1.30", "1.30", ChangePatch}, {"1.30", "1.31", ChangeMinor},
		{"1.31", "1.31", ChangePatch}, {"1.31", "1.32", ChangeMinor},
	} {
		rows, err := DiffBundles(old, cur, tc.from, tc.to)
		if err != nil {
			t.Fatal(err)
		}
		want := row(KeyKubernetes, "kubernetes (EKS-D)", oldEksD[tc.from], newEksD[tc.to], tc.want)
		var got ComponentDiff
		for _, r := range rows {
			if r.Key == KeyKubernetes {
				got = r
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s → %s kubernetes row = %+v, want %+v", tc.from, tc.to, got, want)
		}
	}

	// 1.27 left the newer manifest: the error names the file and what it has.
	if _, err := DiffBundles(old, cur, "1.27", "1.27"); err == nil || !strings.Contains(err.Error(), "bundles-2025-03-25.yaml") || !strings.Contains(err.Error(), "1.28, 1.29, 1.30, 1.31, 1.32") {
		t.Errorf("1.27 on the new manifest: err = %v", err)
	}
}
