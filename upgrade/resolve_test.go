package upgrade

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/upgrade-console/upgrade-console/demo/release"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
)

func TestResolveCurrentAndTarget(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	r := &Resolver{Client: w.client}
	cur, err := r.Current(ctx, w.ns, "mgmt")
	if err != nil {
		t.Fatal(err)
	}
	if cur.EksaVersion != release.Current.Version || cur.KubernetesVersion != "1.30" || cur.ManagementVersion != release.Target.Version {
		t.Errorf("current %+v", cur)
	}
	if cur.Bundles.Name != release.Current.BundlesName() || cur.BundlesVia != "EKSARelease "+w.ns+"/"+model.EKSAReleaseName(release.Current.Version) {
		t.Errorf("current bundles %s via %s", cur.Bundles.Name, cur.BundlesVia)
	}
	tgt, err := r.Target(ctx, w.spec, "")
	if err != nil {
		t.Fatal(err)
	}
	if tgt.Bundles.Name != release.Target.BundlesName() || tgt.Release == nil || tgt.KubernetesVersion != "1.31" {
		t.Errorf("target %+v", tgt)
	}

	// The deprecated bundlesRef wins over eksaVersion.
	w.cluster(t, false, func(u *unstructured.Unstructured) {
		setNested(u, map[string]any{"apiVersion": "anywhere.eks.amazonaws.com/v1alpha1", "name": release.Target.BundlesName(), "namespace": w.ns}, "spec", "bundlesRef")
	})
	cur, err = r.Current(ctx, w.ns, "mgmt")
	if err != nil {
		t.Fatal(err)
	}
	if cur.Bundles.Name != release.Target.BundlesName() || !strings.Contains(cur.BundlesVia, "bundlesRef") {
		t.Errorf("with bundlesRef: bundles %s via %s", cur.Bundles.Name, cur.BundlesVia)
	}

	// In the target spec too: a spec exported from an old cluster keeps
	// its bundlesRef beside the new eksaVersion, and EKS-A reads the
	// Bundles it names. The plan showed the release's.
	spec := w.spec.Cluster.DeepCopy()
	setNested(spec, map[string]any{"apiVersion": "anywhere.eks.amazonaws.com/v1alpha1", "name": release.Current.BundlesName(), "namespace": w.ns}, "spec", "bundlesRef")
	tgt, err = r.Target(ctx, &SpecFile{Path: "up.yaml", Docs: []*unstructured.Unstructured{spec}, Cluster: spec}, "")
	if err != nil {
		t.Fatal(err)
	}
	if tgt.Bundles.Name != release.Current.BundlesName() || tgt.BundlesVia != BundlesViaRef {
		t.Errorf("target with bundlesRef: bundles %s via %s", tgt.Bundles.Name, tgt.BundlesVia)
	}
	if r := checkTargetRelease(ctx, &Inputs{Target: tgt}); r.Status != model.CheckWarn || !strings.Contains(r.Message, "bundlesRef") || r.Remediation == "" {
		t.Errorf("target-release with bundlesRef: %+v", r)
	}
}

// Every failing lookup names the missing object and what to do.
func TestResolveErrors(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	r := &Resolver{Client: w.client}
	expect := func(t *testing.T, err error, parts ...string) {
		t.Helper()
		var ie *model.InputError
		if !errors.As(err, &ie) {
			t.Fatalf("want an *InputError, got %T %v", err, err)
		}
		for _, p := range parts {
			if !strings.Contains(err.Error(), p) {
				t.Errorf("error %q lacks %q", err, p)
			}
		}
	}

	_, err := r.Current(ctx, w.ns, "nope")
	expect(t, err, "Cluster "+w.ns+"/nope", "not found", "--cluster")
	// The dashboard learns it from its watch, and says it in these words.
	if want := ClusterNotFound(w.ns, "nope", nil).Error(); err.Error() != want {
		t.Errorf("read: %q\nwatch: %q", err, want)
	}

	// The cluster's EKSARelease is gone.
	rel := model.EKSAReleaseName(release.Current.Version)
	releases := w.client.Dynamic.Resource(GVREKSARelease).Namespace(w.ns)
	saved, err := releases.Get(ctx, rel, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := releases.Delete(ctx, rel, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = r.Current(ctx, w.ns, "mgmt")
	expect(t, err, "EKSARelease "+w.ns+"/"+rel, "not found", "spec.eksaVersion", "management components")

	// Back, but pointing at a Bundles that does not exist.
	saved.SetResourceVersion("")
	if err := unstructured.SetNestedField(saved.Object, "bundles-999", "spec", "bundlesRef", "name"); err != nil {
		t.Fatal(err)
	}
	if _, err := releases.Create(ctx, saved, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = r.Current(ctx, w.ns, "mgmt")
	expect(t, err, "Bundles "+w.ns+"/bundles-999", "not found", "EKSARelease")

	// A target release the cluster does not have, and no --to-bundles.
	spec := w.spec.Cluster.DeepCopy()
	setNested(spec, "v0.21.9", "spec", "eksaVersion")
	_, err = r.Target(ctx, &SpecFile{Path: "up.yaml", Docs: []*unstructured.Unstructured{spec}, Cluster: spec}, "")
	expect(t, err, "EKSARelease "+w.ns+"/eksa-v0-21-9", "up.yaml", "--to-bundles")

	// A --to-bundles file that is not there.
	_, err = r.Target(ctx, w.spec, "/nonexistent/bundles.yaml")
	expect(t, err, "/nonexistent/bundles.yaml: cannot read: no such file or directory")

	// One far larger than a Bundles manifest is refused once the limit is
	// read, as the spec file is (-f /dev/zero grew the console to 3 GB): it
	// was read whole, then parsed.
	huge := filepath.Join(t.TempDir(), "huge.yaml")
	if err := os.WriteFile(huge, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, MaxBundlesBytes+1); err != nil {
		t.Fatal(err)
	}
	_, err = r.Target(ctx, w.spec, huge)
	expect(t, err, huge+": cannot read: it is larger than 64 MiB", "--to-bundles")

	// A spec for another cluster, or another namespace.
	_, err = w.planner.Plan(ctx, PlanRequest{Cluster: "other", Namespace: w.ns, Spec: w.spec})
	expect(t, err, "target.yaml", `the spec is for cluster "mgmt", not "other"`)
	_, err = w.planner.Plan(ctx, PlanRequest{Cluster: "mgmt", Namespace: "elsewhere", Spec: w.spec})
	expect(t, err, "metadata.namespace", "give -n "+w.ns+" if the Cluster is there")

	// No eksaVersion in the spec and no --to-bundles.
	unstructured.RemoveNestedField(spec.Object, "spec", "eksaVersion")
	_, err = r.Target(ctx, &SpecFile{Path: "up.yaml", Docs: []*unstructured.Unstructured{spec}, Cluster: spec}, "")
	expect(t, err, "spec.eksaVersion", "is not set")
}

func TestParseSpec(t *testing.T) {
	good := `# the cluster
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: Cluster
metadata:
  name: mgmt
  resourceVersion: "42"
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: "{}"
spec:
  kubernetesVersion: "1.31"
status:
  observedGeneration: 3
---
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: VSphereMachineConfig
metadata:
  name: mgmt-cp
`
	s, err := ParseSpec("c.yaml", []byte(good), "default")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Docs) != 2 || s.Cluster != s.Docs[0] || s.Cluster.GetNamespace() != "default" || s.Docs[1].GetNamespace() != "default" {
		t.Errorf("docs %v", s.Names())
	}
	if s.Cluster.GetResourceVersion() != "" || s.Cluster.Object["status"] != nil || s.Cluster.GetAnnotations() != nil {
		t.Errorf("server fields kept: %v", s.Cluster.Object)
	}
	for _, c := range []struct{ name, doc, want string }{
		{"no cluster", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "no EKS-A Cluster"},
		{"two clusters", "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: a}\nspec: {kubernetesVersion: '1.30'}\n---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: b}\n", "a second EKS-A Cluster (b)"},
		{"no kind", "apiVersion: v1\nmetadata: {name: x}\n", "document 1: kind: missing"},
		{"no name", "apiVersion: v1\nkind: ConfigMap\n", "document 1 (ConfigMap): metadata.name: missing"},
		{"no kubernetesVersion", "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: a}\n", "spec.kubernetesVersion: missing"},
		{"not yaml", "kind: [", "document 1: not valid YAML"},
		{"a foreign object", "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: a}\nspec: {kubernetesVersion: '1.30'}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: sneaky}\n", "ConfigMap default/sneaky: not an EKS Anywhere object"},
		{"a provider object in another namespace", "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: a}\nspec: {kubernetesVersion: '1.30'}\n---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: VSphereMachineConfig\nmetadata: {name: a-etcd, namespace: kube-system}\n",
			"document 2 (VSphereMachineConfig kube-system/a-etcd): metadata.namespace: kube-system is not the Cluster's namespace (default)"},
		// The Cluster alone in a mistyped namespace is the one out of
		// step, not its first provider object.
		{"a Cluster in another namespace than its provider objects", "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: VSphereDatacenterConfig\nmetadata: {name: a}\n---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: a, namespace: defualt}\nspec: {kubernetesVersion: '1.30'}\n---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: VSphereMachineConfig\nmetadata: {name: a-cp}\n",
			"document 2 (Cluster defualt/a): metadata.namespace: defualt is not the namespace of 2 of the spec's 3 documents (default): EKS-A looks for the Cluster's provider objects in the Cluster's own namespace only (fix: set metadata.namespace: default on it, or leave it out on every document)"},
		{"two provider objects in another namespace", "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: a}\nspec: {kubernetesVersion: '1.30'}\n---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: VSphereMachineConfig\nmetadata: {name: a-cp}\n---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: VSphereMachineConfig\nmetadata: {name: a-etcd, namespace: kube-system}\n---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: VSphereMachineConfig\nmetadata: {name: a-md, namespace: kube-system}\n",
			"document 3 (VSphereMachineConfig kube-system/a-etcd): metadata.namespace: kube-system is not the Cluster's namespace (default): EKS-A looks for the Cluster's provider objects in its own namespace only; out of step too: document 4 (VSphereMachineConfig kube-system/a-md) (fix: set metadata.namespace: default on each of them"},
		{"unquoted kubernetesVersion", "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: a}\nspec: {kubernetesVersion: 1.30}\n", "spec.kubernetesVersion: must be a string, got 1.3"},
		{"a patch version", "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: a}\nspec: {kubernetesVersion: '1.31.2'}\n", `spec.kubernetesVersion: "1.31.2" is not a Kubernetes minor version`},
		{"unquoted eksaVersion", "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: a}\nspec: {kubernetesVersion: '1.30', eksaVersion: 21}\n", "spec.eksaVersion: must be a string, got 21"},
		{"eksaVersion without its v", "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: a}\nspec: {kubernetesVersion: '1.30', eksaVersion: '0.21.2'}\n",
			`spec.eksaVersion: "0.21.2" has no leading v: EKS-A looks the release up as EKSARelease eksa-0-21-2, and releases are named from their version with the v (eksa-v0-21-2) (fix: write eksaVersion: "v0.21.2")`},
		{"eksaVersion not a version", "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: a}\nspec: {kubernetesVersion: '1.30', eksaVersion: 'v0.21'}\n", `spec.eksaVersion: "v0.21" is not an EKS-A release version`},
	} {
		_, err := ParseSpec("c.yaml", []byte(c.doc), "default")
		var ie *model.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) || ie.Source != "c.yaml" {
			t.Errorf("%s: %v, want an InputError on c.yaml containing %q", c.name, err, c.want)
		}
	}
}

// Management components at a release whose EKSARelease is gone: the plan
// still computes, and the check says what it could not read.
func TestManagementReleaseMissing(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	w.cluster(t, false, func(u *unstructured.Unstructured) {
		u.SetAnnotations(merge(u.GetAnnotations(), model.AnnotationManagementComponentsVersion, "v0.20.5"))
	})
	p := w.plan(t)
	r := result(p, CheckManagementComponents)
	if r.Status != model.CheckWarn || !strings.Contains(r.Message, "eksa-v0-20-5") || !strings.Contains(r.Message, "not found") {
		t.Errorf("check %+v", r)
	}
	if len(p.Components) == 0 {
		t.Error("no component diff")
	}
}

// The live plan reads what the spec runs: the demo's vSphere cluster with
// Cilium and no gitOpsRef does not run Docker, Flux or kindnetd, and EKS-A
// upgrades none of them.
func TestLivePlanMarksWhatTheClusterDoesNotRun(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	p := w.plan(t)
	got := map[string]model.ChangeKind{}
	for _, c := range p.Components {
		got[c.Key] = c.Change
	}
	for key, unused := range map[string]bool{"docker": true, "flux": true, "kindnetd": true, "vSphere": false, "cilium": false, "clusterAPI": false,
		// Ubuntu machines, rolling upgrades.
		"upgrader.upgrader": true, "bottlerocketHostContainers.admin": true, "bottlerocketHostContainers.control": true} {
		if c, ok := got[key]; !ok || (c == model.ChangeUnused) != unused {
			t.Errorf("%s: %q, unused should be %v", key, c, unused)
		}
	}
	// An in-place upgrade runs the upgrader on every node.
	for _, c := range newWorld(t, scenario.InPlace).plan(t).Components {
		if c.Key == "upgrader.upgrader" && c.Change == model.ChangeUnused {
			t.Errorf("in place: the upgrader is %q", c.Change)
		}
	}
}

// A request the client's own bound cut (--request-timeout 1ms) reads as a
// server that cannot be reached: the fix names that bound too, not only
// --kubeconfig and --context.
func TestLookupErrorOfARequestTimedOut(t *testing.T) {
	timedOut := &url.Error{Op: "Get", URL: "https://10.0.0.1:6443/apis/anywhere.eks.amazonaws.com/v1alpha1/namespaces/default/clusters/mgmt", Err: context.DeadlineExceeded}
	var ie *model.InputError
	if err := (&Resolver{}).lookupError(timedOut, "Cluster default/mgmt", "", ""); !errors.As(err, &ie) || !strings.Contains(ie.Fix, "--request-timeout") || ie.Source != "API server https://10.0.0.1:6443" {
		t.Errorf("timed out: %#v", err)
	}
	refused := &url.Error{Op: "Get", URL: "https://10.0.0.1:6443/api", Err: errors.New("dial tcp 10.0.0.1:6443: connect: connection refused")}
	if err := (&Resolver{}).lookupError(refused, "Cluster default/mgmt", "", ""); !errors.As(err, &ie) || strings.Contains(ie.Fix, "--request-timeout") {
		t.Errorf("refused: %#v", err)
	}
}

// A server whose certificate the client refuses answered: "cannot be
// reached … that the API server is up" sent the operator to a server that
// was up. It says the certificate, and for a name the certificate lacks,
// how to connect by one it lists.
func TestLookupErrorOfAnUntrustedCertificate(t *testing.T) {
	tlsErr := func(err error) error {
		return &url.Error{Op: "Get", URL: "https://10.0.0.1:6443/api", Err: &tls.CertificateVerificationError{Err: err}}
	}
	var ie *model.InputError
	err := (&Resolver{}).lookupError(tlsErr(x509.HostnameError{Certificate: &x509.Certificate{}, Host: "10.0.0.1"}), "Cluster default/mgmt", "", "")
	if !errors.As(err, &ie) || !strings.Contains(ie.Problem, "answered, but its certificate is not trusted") || !strings.Contains(ie.Fix, "--tls-server-name") || strings.Contains(ie.Fix, " is up") {
		t.Errorf("a name the certificate lacks: %v", err)
	}
	err = (&Resolver{}).lookupError(tlsErr(x509.UnknownAuthorityError{}), "Cluster default/mgmt", "", "")
	if !errors.As(err, &ie) || !strings.Contains(ie.Problem, "not trusted") || !strings.Contains(ie.Fix, "certificate-authority") {
		t.Errorf("another CA: %v", err)
	}
}

// Access denied names the identity as the console connects, --as included,
// and the kubectl command that asks for it, with the console's connection
// flags: "use a kubeconfig whose user may read" missed an --as identity,
// and a bare can-i, pasted, asked the shell's current context.
func TestLookupErrorOfAccessDeniedNamesTheIdentityAndTheCheck(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "anywhere.eks.amazonaws.com", Resource: "clusters"}, "mgmt", errors.New("no RBAC policy matched"))
	var ie *model.InputError
	r := &Resolver{Conn: model.ConnFlags{{Name: "context", Value: "prod"}, {Name: "as", Value: "bob"}}}
	if err := r.lookupError(forbidden, "Cluster default/mgmt", "the EKS-A Cluster", ""); !errors.As(err, &ie) ||
		!strings.Contains(ie.Fix, "or --as when given") ||
		!strings.Contains(ie.Fix, "`kubectl auth can-i get clusters.anywhere.eks.amazonaws.com/mgmt -n default --context prod --as bob` says whether it may") {
		t.Errorf("forbidden: %v", err)
	}
}
