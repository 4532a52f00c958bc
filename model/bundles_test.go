package model

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func parseFixture(t testing.TB, name string) *Bundles {
	t.Helper()
	b, err := ParseBundles(readFixture(t, name), name)
	if err != nil {
		t.Fatalf("ParseBundles(%s): %v", name, err)
	}
	return b
}

func TestParseBundlesFixture(t *testing.T) {
	b := parseFixture(t, "bundles-2025-03.yaml")
	if b.Name != "bundles-86" || b.Number != 86 || b.CLIMinVersion != "v0.22.0" || b.CLIMaxVersion != "v0.22.0" {
		t.Errorf("header = %q %d %q %q", b.Name, b.Number, b.CLIMinVersion, b.CLIMaxVersion)
	}
	if got, want := b.KubernetesVersions(), []string{"1.30", "1.31", "1.32"}; !reflect.DeepEqual(got, want) {
		t.Errorf("KubernetesVersions = %v, want %v", got, want)
	}
	vb, err := b.ForKubernetes("1.31")
	if err != nil {
		t.Fatal(err)
	}
	if vb.EndOfStandardSupport != "2025-12-31" {
		t.Errorf("EndOfStandardSupport = %q", vb.EndOfStandardSupport)
	}
	if want := (EksD{Name: "kubernetes-1-31-eks-16", Channel: "1-31", KubeVersion: "v1.31.6"}); vb.EksD != want {
		t.Errorf("EksD = %+v, want %+v", vb.EksD, want)
	}
	if got := vb.EksD.Version(); got != "v1.31.6-eks-1-31-16" {
		t.Errorf("EksD.Version = %q", got)
	}
	want := map[string]string{
		"bootstrap": "v1.9.4+abcdef1", "certManager": "v1.16.4+abcdef1", "cilium": "v1.15.14-eksa.1",
		"cloudStack": "v0.5.0+abcdef1", "clusterAPI": "v1.9.4+abcdef1", "controlPlane": "v1.9.4+abcdef1",
		"docker": "v1.9.4+abcdef1", "eksa": "v0.0.0-dev+build.0+abcdef1", "etcdadmBootstrap": "v1.0.15+abcdef1",
		"etcdadmController": "v1.0.24+abcdef1", "flux": "v2.5.1+abcdef1", "kindnetd": "v0.26.0+abcdef1",
		"nutanix": "v1.5.3+abcdef1", "packageController": "v0.4.6+abcdef1", "snow": "v0.2.1+abcdef1",
		"tinkerbell": "v0.6.4+abcdef1", "vSphere": "v1.12.0+abcdef1",
	}
	// bottlerocketHostContainers, haproxy and upgrader carry no version and
	// must not appear as components.
	if !reflect.DeepEqual(vb.Components, want) {
		t.Errorf("Components =\n%v\nwant\n%v", vb.Components, want)
	}
	if got := vb.Version(KeyKubernetes); got != "v1.31.6-eks-1-31-16" {
		t.Errorf("Version(eksD) = %q", got)
	}
	// The image-only components the plan shows, by uri; the fixture has no
	// control container, and haproxy is not shown.
	wantImages := map[string]string{
		"upgrader.upgrader":                "registry.example/eks-anywhere/upgrader:v1-31-16-eks-a-1",
		"bottlerocketHostContainers.admin": "registry.example/eks-anywhere/bottlerocket-admin:v0.11.13",
	}
	if !reflect.DeepEqual(vb.Images, wantImages) {
		t.Errorf("Images =\n%v\nwant\n%v", vb.Images, wantImages)
	}
}

// An image the release does not build is written as an empty mapping, or
// left out: it is absent, not an error.
func TestParseBundlesAbsentImages(t *testing.T) {
	for name, doc := range map[string]string{
		"left out":          "",
		"null":              "    upgrader: null\n",
		"image null":        "    upgrader: {upgrader: null}\n",
		"empty image":       "    upgrader: {upgrader: {}}\n    bottlerocketHostContainers: {admin: {}, control: {name: bottlerocket-control}}\n",
		"empty uri":         "    upgrader: {upgrader: {uri: \"\"}}\n",
		"other images only": "    bottlerocketHostContainers: {kubeadmBootstrap: {uri: x:v1}}\n    haproxy: {image: {uri: y:v2}}\n",
	} {
		b, err := ParseBundles([]byte(minimalBundles+doc), "in.yaml")
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := b.VersionsBundles[0].Images; len(got) != 0 {
			t.Errorf("%s: Images = %v, want none", name, got)
		}
	}
	b, err := ParseBundles([]byte(minimalBundles+"    upgrader:\n      upgrader: {name: upgrader, uri: \"r.example/upgrader:v1-30-58-eks-a-84\"}\n"+
		"    bottlerocketHostContainers:\n      control: {uri: r.example/bottlerocket-control:v0.7.20}\n"), "in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"upgrader.upgrader": "r.example/upgrader:v1-30-58-eks-a-84", "bottlerocketHostContainers.control": "r.example/bottlerocket-control:v0.7.20"}
	if got := b.VersionsBundles[0].Images; !reflect.DeepEqual(got, want) {
		t.Errorf("Images = %v, want %v", got, want)
	}
}

func TestForKubernetesUnknownListsVersions(t *testing.T) {
	b := parseFixture(t, "bundles-2024-11.yaml")
	for _, tc := range []struct{ kube, fix string }{
		{"1.32", "EKS-A release that supports 1.32"},
		{"v1.30", "e.g. 1.30"},
		{"1.30.5", "e.g. 1.30"},
	} {
		_, err := b.ForKubernetes(tc.kube)
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Fatalf("ForKubernetes(%s) error = %v, want *InputError", tc.kube, err)
		}
		msg := err.Error()
		for _, s := range []string{"bundles-2024-11.yaml", "bundles-71", `"` + tc.kube + `"`, "1.29, 1.30, 1.31", tc.fix} {
			if !strings.Contains(msg, s) {
				t.Errorf("ForKubernetes(%s) error %q does not mention %q", tc.kube, msg, s)
			}
		}
	}
}

func TestNewestKubernetesVersion(t *testing.T) {
	// Version order, not string or manifest order: 1.9 < 1.10.
	b := &Bundles{VersionsBundles: []VersionsBundle{{KubeVersion: "1.10"}, {KubeVersion: "1.9"}}}
	if got := b.NewestKubernetesVersion(); got != "1.10" {
		t.Errorf("NewestKubernetesVersion = %q, want 1.10", got)
	}
}

func TestEksDVersion(t *testing.T) {
	for _, tc := range []struct {
		e    EksD
		want string
	}{
		{EksD{Name: "kubernetes-1-30-eks-58", Channel: "1-30", KubeVersion: "v1.30.14"}, "v1.30.14-eks-1-30-58"},
		{EksD{Name: "kubernetes-1-31-eks-6", Channel: "1-31", KubeVersion: "v1.31.1"}, "v1.31.1-eks-1-31-6"},
	} {
		if got := tc.e.Version(); got != tc.want {
			t.Errorf("%+v.Version() = %q, want %q", tc.e, got, tc.want)
		}
	}
}

const minimalBundles = `apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: Bundles
metadata:
  name: bundles-1
spec:
  number: 1
  versionsBundles:
  - kubeVersion: "1.30"
    eksD:
      name: kubernetes-1-30-eks-58
      channel: 1-30
      kubeVersion: v1.30.14
    certManager:
      version: v1.16.1+abcdef1
`

func TestParseBundlesMinimalAndUnknownFields(t *testing.T) {
	doc := strings.Replace(minimalBundles, "spec:\n", "status: {}\nspec:\n  futureField: [1, 2]\n", 1) +
		"    futureComponent:\n      image: {uri: x}\n      version: v0.1.0\n    futureList: [a]\n    futureScalar: 3\n"
	b, err := ParseBundles([]byte(doc), "min.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"certManager": "v1.16.1+abcdef1", "futureComponent": "v0.1.0"}
	if got := b.VersionsBundles[0].Components; !reflect.DeepEqual(got, want) {
		t.Errorf("Components = %v, want %v", got, want)
	}
	// JSON is YAML too.
	if _, err := ParseBundles([]byte(`{"apiVersion":"anywhere.eks.amazonaws.com/v1alpha1","kind":"Bundles","spec":{"number":2,"versionsBundles":[{"kubeVersion":"1.31","eksD":{"name":"k-1","channel":"1-31","kubeVersion":"v1.31.0"}}]}}`), "b.json"); err != nil {
		t.Errorf("JSON manifest: %v", err)
	}
	// A leading separator and a trailing empty document are one document.
	if _, err := ParseBundles([]byte("---\n"+minimalBundles+"---\n# end\n"), "sep.yaml"); err != nil {
		t.Errorf("separators: %v", err)
	}
}

func TestParseBundlesErrors(t *testing.T) {
	edit := func(old, new string) string {
		if !strings.Contains(minimalBundles, old) {
			t.Fatalf("fixture lacks %q", old)
		}
		return strings.Replace(minimalBundles, old, new, 1)
	}
	// A field error means the file is not as EKS-A wrote it: its fix says
	// where the release's own manifest is.
	const release = "`kubectl get bundles NAME -n eksa-system -o yaml`"
	// The errors about the whole file keep their own, more precise, fix.
	fixes := map[string]string{
		"empty": "pass a Bundles manifest", "not yaml": "correct the YAML", "scalar": "pass a Bundles manifest",
		"list document": "pass a Bundles manifest", "wrong kind": "kubectl get bundles NAME -n eksa-system -o yaml",
		"wrong group": "kubectl get bundles NAME -n eksa-system -o yaml", "wrong version": "set apiVersion: anywhere.eks.amazonaws.com/v1alpha1", "missing kind": "kubectl get bundles NAME -n eksa-system -o yaml",
		"kind list": "pass a single Bundles manifest", "two documents": "keep only the Bundles object",
		"unquoted kubeVersion": "quote the value", "not yaml at a line": "correct the YAML (line 3)",
		"key given twice": "keep one of the two", "uri a number": "give the image reference as a string",
	}
	for _, tc := range []struct {
		name, doc, field, problem string
	}{
		{"empty", " \n", "", "is empty"},
		{"not yaml", "a: [", "", "not valid YAML"},
		{"not yaml at a line", "a: 1\nb: 2\nc: [\n", "", "not valid YAML"},
		{"key given twice", edit("  number: 1\n", "  number: 1\n  number: 2\n"), "", "a key given twice"},
		{"uri a number", minimalBundles + "    upgrader: {upgrader: {uri: 42}}\n", "spec.versionsBundles[0].upgrader.upgrader.uri", "must be a string"},
		{"scalar", "just a string", "", "not a Kubernetes object"},
		{"list document", "- a\n- b", "", "not a Kubernetes object"},
		{"wrong kind", edit("kind: Bundles", "kind: Cluster"), "kind", "a Cluster object (anywhere.eks.amazonaws.com/v1alpha1), not an EKS-A Bundles"},
		{"wrong group", edit("anywhere.eks.amazonaws.com/v1alpha1", "cluster.x-k8s.io/v1beta1"), "apiVersion", "not an EKS-A Bundles"},
		{"wrong version", edit("anywhere.eks.amazonaws.com/v1alpha1", "anywhere.eks.amazonaws.com/v9"), "apiVersion", "a Bundles object (anywhere.eks.amazonaws.com/v9), not an EKS-A Bundles"},
		{"missing kind", edit("kind: Bundles\n", ""), "kind", "<missing>"},
		{"kind list", edit("kind: Bundles", "kind: List"), "kind", "a list of objects"},
		{"kind not string", edit("kind: Bundles", "kind: [Bundles]"), "kind", "must be a string"},
		{"two documents", minimalBundles + "---\n" + minimalBundles, "", "more than one YAML document"},
		{"missing number", edit("  number: 1\n", ""), "spec.number", "is missing"},
		{"number not int", edit("number: 1", "number: one"), "spec.number", "must be an integer"},
		{"no versions bundles", edit("  versionsBundles:", "  other:"), "spec.versionsBundles", "missing or empty"},
		{"versions bundles not list", strings.SplitAfter(minimalBundles, "number: 1\n")[0] + "  versionsBundles: 3\n", "spec.versionsBundles", "must be a list"},
		{"missing kubeVersion", edit(`  - kubeVersion: "1.30"`+"\n    eksD:", "  - eksD:"), "spec.versionsBundles[0].kubeVersion", "is missing"},
		{"unquoted kubeVersion", edit(`"1.30"`, "1.30"), "spec.versionsBundles[0].kubeVersion", "must be a string, got 1.3"},
		{"missing eksD", edit("    eksD:\n      name: kubernetes-1-30-eks-58\n      channel: 1-30\n      kubeVersion: v1.30.14\n", ""), "spec.versionsBundles[0].eksD", "is missing"},
		{"eksD not mapping", edit("    eksD:\n      name: kubernetes-1-30-eks-58\n      channel: 1-30\n      kubeVersion: v1.30.14\n", "    eksD: 12\n"), "spec.versionsBundles[0].eksD", "must be a mapping"},
		{"missing eksD name", edit("      name: kubernetes-1-30-eks-58\n", ""), "spec.versionsBundles[0].eksD.name", "is missing"},
		{"eksD name without number", edit("kubernetes-1-30-eks-58", "kubernetes-1-30-eks"), "spec.versionsBundles[0].eksD.name", "release number"},
		{"missing eksD channel", edit("      channel: 1-30\n", ""), "spec.versionsBundles[0].eksD.channel", "is missing"},
		{"missing eksD kubeVersion", edit("      kubeVersion: v1.30.14\n", ""), "spec.versionsBundles[0].eksD.kubeVersion", "is missing"},
		{"version not string", edit("version: v1.16.1+abcdef1", "version: {a: 1}"), "spec.versionsBundles[0].certManager.version", "must be a string"},
		// A known component that is broken is an error, not an absent one
		// (the diff would call it added or removed).
		{"known component null", edit("    certManager:\n      version: v1.16.1+abcdef1\n", "    certManager: null\n"), "spec.versionsBundles[0].certManager", "must be a mapping"},
		{"known component list", edit("    certManager:\n      version: v1.16.1+abcdef1\n", "    certManager: [1]\n"), "spec.versionsBundles[0].certManager", "must be a mapping"},
		{"known component without version", edit("      version: v1.16.1+abcdef1\n", "      image: x\n"), "spec.versionsBundles[0].certManager", "has no version"},
		// The version-skew check reads it: unreadable, the plan failed
		// that check (exit 3) with a fix for a spec file.
		{"eksa version not a version", edit("    eksD:\n", "    eksa:\n      version: banana\n    eksD:\n"), "spec.versionsBundles[0].eksa.version", `"banana" is not a version`},
		{"duplicate kubeVersion", minimalBundles + strings.SplitAfterN(minimalBundles, "versionsBundles:\n", 2)[1], "spec.versionsBundles[1].kubeVersion", "appears twice"},
		{"apiVersion not string", edit("apiVersion: anywhere.eks.amazonaws.com/v1alpha1", "apiVersion: {a: 1}"), "apiVersion", "must be a string"},
		{"metadata not mapping", edit("metadata:\n  name: bundles-1\n", "metadata: [a]\n"), "metadata", "must be a mapping"},
		{"name not string", edit("name: bundles-1", "name: [bundles-1]"), "metadata.name", "must be a string"},
		{"spec not mapping", strings.SplitAfter(minimalBundles, "  name: bundles-1\n")[0] + "spec: 3\n", "spec", "must be a mapping"},
		{"cliMinVersion not string", edit("  number: 1\n", "  number: 1\n  cliMinVersion: [v0.22.0]\n"), "spec.cliMinVersion", "must be a string"},
		{"versions bundle not mapping", strings.SplitAfter(minimalBundles, "number: 1\n")[0] + "  versionsBundles: [3]\n", "spec.versionsBundles", "must be a mapping"},
		{"endOfStandardSupport not string", edit("    eksD:\n", "    endOfStandardSupport: [2025]\n    eksD:\n"), "spec.versionsBundles[0].endOfStandardSupport", "must be a string"},
		{"eksD channel not string", edit("channel: 1-30", "channel: [1-30]"), "spec.versionsBundles[0].eksD.channel", "must be a string"},
		// The images the plan shows: absent is allowed (an older release),
		// damaged is not.
		{"upgrader not mapping", minimalBundles + "    upgrader: 3\n", "spec.versionsBundles[0].upgrader", "must be a mapping"},
		{"upgrader image not mapping", minimalBundles + "    upgrader: {upgrader: public.ecr.aws/aws/upgrader:v1}\n", "spec.versionsBundles[0].upgrader.upgrader", "must be a mapping with the image's uri"},
		{"upgrader uri not string", minimalBundles + "    upgrader: {upgrader: {uri: [x]}}\n", "spec.versionsBundles[0].upgrader.upgrader.uri", "must be a string"},
		{"host containers not mapping", minimalBundles + "    bottlerocketHostContainers: [admin]\n", "spec.versionsBundles[0].bottlerocketHostContainers", "must be a mapping"},
		{"admin not mapping", minimalBundles + "    bottlerocketHostContainers: {admin: [x]}\n", "spec.versionsBundles[0].bottlerocketHostContainers.admin", "must be a mapping with the image's uri"},
		{"control uri not string", minimalBundles + "    bottlerocketHostContainers: {control: {uri: {a: 1}}}\n", "spec.versionsBundles[0].bottlerocketHostContainers.control.uri", "must be a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := ParseBundles([]byte(tc.doc), "in.yaml")
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("ParseBundles = %+v, %v; want *InputError", b, err)
			}
			if ie.Source != "in.yaml" || ie.Field != tc.field || !strings.Contains(ie.Problem, tc.problem) {
				t.Errorf("error = %#v\nwant source in.yaml, field %q, problem containing %q", ie, tc.field, tc.problem)
			}
			fix, ok := fixes[tc.name]
			if !ok {
				fix = release
			}
			if !strings.Contains(ie.Fix, fix) {
				t.Errorf("fix = %q, want one containing %q", ie.Fix, fix)
			}
			if msg := err.Error(); !strings.Contains(msg, "in.yaml") || (tc.field != "" && !strings.Contains(msg, tc.field)) || !strings.Contains(msg, "(fix: ") {
				t.Errorf("message %q does not name the file, the field and the fix", msg)
			}
		})
	}
}

func TestExtraDocument(t *testing.T) {
	for doc, want := range map[string]bool{
		"a: 1\n":                   false,
		"---\na: 1\n":              false,
		"a: 1\n---\n":              false,
		"a: 1\n---\n# c\n...\n":    false,
		"a: |\n  ---\n  b\n":       false, // indented: inside a block scalar
		"a: 1\n---\nb: 2\n":        true,
		"a: 1\n--- \nb: 2\n":       true,
		"# c\n---\na: 1\n---\nb\n": true,
	} {
		if got := extraDocument([]byte(doc)); got != want {
			t.Errorf("extraDocument(%q) = %v, want %v", doc, got, want)
		}
	}
}

// Two copies of one Bundles: the differences name the component, and the
// Kubernetes version only for the components read per Kubernetes version.
func TestBundlesDifferences(t *testing.T) {
	a := parseFixture(t, "bundles-2025-03.yaml")
	if d := a.Differences(parseFixture(t, "bundles-2025-03.yaml")); len(d) != 0 {
		t.Fatalf("a copy differs: %v", d)
	}
	b := parseFixture(t, "bundles-2025-03.yaml")
	for i := range b.VersionsBundles {
		b.VersionsBundles[i].Components["certManager"] = "v9.9.9"
	}
	b.VersionsBundles[1].Components["cilium"] = "v9.9.9"
	d := a.Differences(b)
	if len(d) != 2 || !strings.HasPrefix(d[0], "cert-manager: ") || !strings.HasPrefix(d[1], b.VersionsBundles[1].KubeVersion+" cilium: ") || !strings.HasSuffix(d[1], "here, v9.9.9 there") {
		t.Errorf("differences %q, want cert-manager once and cilium of %s", d, b.VersionsBundles[1].KubeVersion)
	}
}

// An edited image reference is another release too: the upgrader a node
// would pull is not the one the controller installs.
func TestBundlesDifferencesInImages(t *testing.T) {
	a := parseFixture(t, "bundles-2025-03.yaml")
	b := parseFixture(t, "bundles-2025-03.yaml")
	vb := &b.VersionsBundles[0]
	if vb.Image("upgrader.upgrader") == "" {
		t.Fatal("the fixture's first versions bundle has no upgrader image")
	}
	images := map[string]string{}
	for k, v := range vb.Images {
		images[k] = v
	}
	vb.Images = images
	vb.Images["upgrader.upgrader"] = "evil.example/upgrader:v1"
	d := a.Differences(b)
	if len(d) != 1 || !strings.HasPrefix(d[0], vb.KubeVersion+" in-place upgrader image: ") || !strings.HasSuffix(d[0], "here, evil.example/upgrader:v1 there") {
		t.Errorf("differences %q", d)
	}
}

// A cluster spec given for the Bundles (--to-bundles spec.yaml) is said as
// such: "holds more than one YAML document (fix: keep only the Bundles
// object)" sent the operator looking for a Bundles in it.
func TestParseBundlesOfAClusterSpec(t *testing.T) {
	spec := []byte("apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata:\n  name: mgmt\n---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: VSphereDatacenterConfig\nmetadata:\n  name: mgmt\n")
	_, err := ParseBundles(spec, "spec.yaml")
	var in *InputError
	if !errors.As(err, &in) || !strings.Contains(in.Problem, "is a cluster spec") || !strings.Contains(in.Fix, "get bundles NAME -o yaml") {
		t.Errorf("err = %v", err)
	}
}

// A Bundles manifest's strings reach tables and checks: a version that
// carried an escape sequence cleared the line of a downgrade's warning
// and wrote a row of its choosing in its place.
func TestParseBundlesEscapesItsStrings(t *testing.T) {
	data := strings.Replace(string(readFixture(t, "bundles-2025-03.yaml")), "version: v1.15.14-eksa.1",
		`version: "v1.12.0-eksa.1\e[2K\rcilium  v1.14.12  v1.15.14  minor\nfail forged"`, 1)
	b, err := ParseBundles([]byte(data), "evil.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := `v1.12.0-eksa.1\x1b[2K\rcilium  v1.14.12  v1.15.14  minor\nfail forged`
	var got []string
	for _, vb := range b.VersionsBundles {
		got = append(got, vb.Version("cilium"))
	}
	if !slices.Contains(got, want) {
		t.Errorf("cilium versions = %q, want one %q", got, want)
	}
	// A key is a row's name where the catalog does not know it.
	data = strings.Replace(string(readFixture(t, "bundles-2025-03.yaml")), "    cilium:\n", "    \"zz\\e[2K\\rforged\":\n      version: v1.0.0\n    cilium:\n", 1)
	var ie *InputError
	if _, err := ParseBundles([]byte(data), "evil.yaml"); !errors.As(err, &ie) || !strings.Contains(err.Error(), `zz\x1b[2K\rforged`) {
		t.Errorf("a key with control characters: %v", err)
	}
}
