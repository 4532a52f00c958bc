package upgrade

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/upgrade-console/upgrade-console/model"
)

// Resolving follows EKS-A's own lookups (pkg/cluster/fetch.go): a cluster's
// spec.eksaVersion names an EKSARelease "eksa-<version>" in eksa-system whose
// spec.bundlesRef names the Bundles; the deprecated spec.bundlesRef, when set,
// wins; the management components (CAPI, providers, the EKS-A controller)
// are the first versions bundle of the release named by the Cluster's
// management-components-version annotation. Every failed lookup is an
// *InputError naming the missing object and what to do.

// Current is the cluster as it runs.
type Current struct {
	Cluster           *unstructured.Unstructured
	Name, Namespace   string
	KubernetesVersion string
	EksaVersion       string // spec.eksaVersion; empty on clusters that use bundlesRef
	WorkerGroups      []model.WorkerGroup
	Bundles           *model.Bundles
	// BundlesVia says how the Bundles were found ("EKSARelease
	// eksa-system/eksa-v0-20-4", "spec.bundlesRef").
	BundlesVia string
	// ManagementVersion is the EKS-A release of the installed management
	// components (the annotation, else spec.eksaVersion), of the
	// management cluster's Cluster when ManagedBy names one.
	ManagementVersion string
	// ManagedBy is the management cluster when it is another one
	// (spec.managementCluster.name): the components are that cluster's,
	// and its Cluster says their version.
	ManagedBy string
	// ManagementNamespace is the namespace that Cluster was found in: the
	// workload cluster's, else the one other namespace that has it (as
	// EKS-A looks for it); empty when it was not found.
	ManagementNamespace string
	// ManagementBundles are that release's Bundles, nil when they could not be
	// read (ManagementErr says why).
	ManagementBundles *model.Bundles
	ManagementErr     error
}

// Target is what the cluster is upgraded to.
type Target struct {
	Spec              *SpecFile
	KubernetesVersion string
	EksaVersion       string
	WorkerGroups      []model.WorkerGroup
	Bundles           *model.Bundles
	BundlesVia        string
	// BundlesFile is the --to-bundles file the Bundles were read from;
	// empty when they are the cluster's (through the EKSARelease).
	BundlesFile string
	// ClusterMachineConfigs are the cluster's copies of the machine configs
	// the Cluster refers to and the spec file leaves out.
	ClusterMachineConfigs []*unstructured.Unstructured
	// refLookups are what the cluster holds of the provider objects the
	// Cluster refers to and the spec file leaves out (provider-refs), by
	// kind and name; nil when no cluster was asked.
	refLookups map[string]*refLookup
	// ClusterBundles are the Bundles the EKSARelease names, read from the
	// cluster, when a --to-bundles file stands in for them: the file must
	// carry the same versions.
	ClusterBundles *model.Bundles
	// SpecDryRun is the API server's answer to a server-side dry run of the
	// spec (nothing persisted); SpecDryRunErr says why it could not be asked.
	SpecDryRun    *DryRunResult
	SpecDryRunErr error
	// Release is the target's EKSARelease in the cluster; nil when absent
	// (ReleaseErr says why), which only a --to-bundles file makes survivable.
	Release    *model.EKSARelease
	ReleaseErr error
}

// Resolver reads the cluster.
type Resolver struct {
	Client *Client
	// Conn are the console's connection flags, for the kubectl commands
	// its errors name.
	Conn model.ConnFlags
}

// Cluster reads the named EKS-A Cluster; a missing one, a missing kind or a
// refusal is an InputError that says what to check.
func (r *Resolver) Cluster(ctx context.Context, namespace, name string) (*unstructured.Unstructured, error) {
	u, err := r.Client.Dynamic.Resource(GVREKSACluster).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, r.lookupError(err, clusterSource(namespace, name), clusterWhat, clusterFix(r.Conn))
	}
	return u, nil
}

// ClusterNotFound is the error Resolver.Cluster returns for a Cluster that
// is not there, for the dashboard, which learns it from its watch rather
// than from a read: a mistyped --cluster is said in the same words, with
// the same fix, whichever way the console was run.
func ClusterNotFound(namespace, name string, conn model.ConnFlags) error {
	return notFoundError(clusterSource(namespace, name), clusterWhat, clusterFix(conn))
}

const clusterWhat = "the EKS-A Cluster"

func clusterSource(namespace, name string) string {
	return fmt.Sprintf("Cluster %s/%s", namespace, name)
}

func clusterFix(conn model.ConnFlags) string {
	return fmt.Sprintf("check --cluster, and give the Cluster's namespace with -n (default: the kubeconfig context's; EKS-A's Cluster is usually in %q); `kubectl get clusters.anywhere.eks.amazonaws.com -A%s` lists them", "default", conn)
}

func notFoundError(src, what, fix string) error {
	return &model.InputError{Source: src, Problem: "not found (" + what + ")", Fix: fix}
}

// Current resolves the named EKS-A Cluster's versions and Bundles.
func (r *Resolver) Current(ctx context.Context, namespace, name string) (*Current, error) {
	src := fmt.Sprintf("Cluster %s/%s", namespace, name)
	u, err := r.Cluster(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	c := &Current{Cluster: u, Name: name, Namespace: namespace}
	// Printed in the plan's header, rows and checks; whoever may update
	// the Cluster writes them.
	c.KubernetesVersion, _, _ = unstructured.NestedString(u.Object, "spec", "kubernetesVersion")
	c.KubernetesVersion = model.PrintableLine(c.KubernetesVersion)
	c.EksaVersion, _, _ = unstructured.NestedString(u.Object, "spec", "eksaVersion")
	c.EksaVersion = model.PrintableLine(c.EksaVersion)
	c.WorkerGroups = workerGroups(u)
	if c.KubernetesVersion == "" {
		return nil, &model.InputError{Source: src, Field: "spec.kubernetesVersion", Problem: "is empty", Fix: "the cluster object is incomplete; check it with kubectl get -o yaml"}
	}

	refName, _, _ := unstructured.NestedString(u.Object, "spec", "bundlesRef", "name")
	refNS, _, _ := unstructured.NestedString(u.Object, "spec", "bundlesRef", "namespace")
	switch {
	case refName != "":
		if refNS == "" {
			refNS = namespace
		}
		c.Bundles, err = r.bundles(ctx, refNS, refName, fmt.Sprintf("named by %s spec.bundlesRef", src))
		c.BundlesVia = BundlesViaRef
	case c.EksaVersion != "":
		var rel *model.EKSARelease
		rel, c.Bundles, err = r.release(ctx, c.EksaVersion, src+" spec.eksaVersion")
		if rel != nil {
			c.BundlesVia = "EKSARelease " + r.Client.Sys() + "/" + rel.Name
		}
	default:
		// Clusters older than eksaVersion and bundlesRef: Bundles named
		// like the cluster, in its namespace.
		c.Bundles, err = r.bundles(ctx, namespace, name, src+" has neither spec.eksaVersion nor spec.bundlesRef; EKS-A then uses the Bundles named like the cluster")
		c.BundlesVia = "Bundles named like the cluster"
	}
	if err != nil {
		return nil, err
	}

	mgmt, mgmtSrc := u, src
	if m, _, _ := unstructured.NestedString(u.Object, "spec", "managementCluster", "name"); m != "" && m != name {
		// A workload cluster has no management components of its own:
		// its Cluster carries no annotation, and its spec.eksaVersion,
		// read as theirs, blocked its upgrade ahead of them as if they
		// were behind it.
		c.ManagedBy = model.PrintableLine(m)
		mgmt, err = r.managementCluster(ctx, namespace, m)
		if err != nil {
			c.ManagementErr = err
			return c, nil
		}
		c.ManagementNamespace = mgmt.GetNamespace()
		mgmtSrc = fmt.Sprintf("Cluster %s/%s", mgmt.GetNamespace(), m)
	}
	c.ManagementVersion = model.PrintableLine(mgmt.GetAnnotations()[model.AnnotationManagementComponentsVersion])
	if c.ManagementVersion == "" {
		c.ManagementVersion, _, _ = unstructured.NestedString(mgmt.Object, "spec", "eksaVersion")
		c.ManagementVersion = model.PrintableLine(c.ManagementVersion)
	}
	switch {
	case c.ManagementVersion == "" && c.ManagedBy != "":
		// Unknown: no management rows rather than the cluster's own.
	case c.ManagementVersion == "":
		c.ManagementBundles = c.Bundles
	case c.ManagementVersion == c.EksaVersion && refName == "":
		c.ManagementBundles = c.Bundles
	default:
		_, c.ManagementBundles, c.ManagementErr = r.release(ctx, c.ManagementVersion,
			mgmtSrc+" annotation "+model.AnnotationManagementComponentsVersion)
	}
	return c, nil
}

// managementCluster reads the EKS-A Cluster a workload cluster's
// spec.managementCluster.name names, where EKS-A looks for it
// (FetchManagementEksaCluster): in the workload cluster's namespace, else
// the one Cluster of that name in any namespace. A management cluster in
// another namespace read as missing, and its components' version as
// unknown. Names are unique per namespace only: two or more of that name
// elsewhere leave it unknown which one manages the cluster, and EKS-A
// refuses to pick one too.
func (r *Resolver) managementCluster(ctx context.Context, namespace, name string) (*unstructured.Unstructured, error) {
	clusters := r.Client.Dynamic.Resource(GVREKSACluster)
	u, err := clusters.Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err == nil {
		return u, nil
	}
	if !apierrors.IsNotFound(err) || isKindMissing(err) {
		return nil, fmt.Errorf("read the management cluster's Cluster %s/%s: %w", namespace, name, err)
	}
	l, err := clusters.List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		return nil, fmt.Errorf("the management cluster's Cluster %s is not in namespace %s (the workload cluster's), and the Clusters of all namespaces, where EKS-A looks next, could not be listed: %w", name, namespace, err)
	}
	switch len(l.Items) {
	case 0:
		return nil, fmt.Errorf("the management cluster's Cluster %s is neither in namespace %s (the workload cluster's) nor in any other namespace", name, namespace)
	case 1:
		return &l.Items[0], nil
	}
	nss := make([]string, 0, len(l.Items))
	for i := range l.Items {
		nss = append(nss, l.Items[i].GetNamespace())
	}
	slices.Sort(nss)
	return nil, fmt.Errorf("the management cluster's Cluster %s is not in namespace %s (the workload cluster's) but in %d others (%s): names are unique per namespace only, so which one manages it is not known (EKS-A refuses to pick one too)",
		name, namespace, len(nss), strings.Join(nss, ", "))
}

// isAPIStatus reports whether err carries the API server's answer, rather
// than one of the console's own.
func isAPIStatus(err error) bool {
	var st apierrors.APIStatus
	return asStatus(err, &st)
}

// BundlesViaRef is Current's and Target's BundlesVia when the Cluster's
// deprecated spec.bundlesRef names the Bundles.
const BundlesViaRef = "spec.bundlesRef (deprecated)"

// Target resolves the target of an upgrade from a spec file: its Bundles come
// from toBundles (a file) when given, else from the EKSARelease of the spec's
// eksaVersion in the cluster.
func (r *Resolver) Target(ctx context.Context, spec *SpecFile, toBundles string) (*Target, error) {
	t := &Target{
		Spec:              spec,
		KubernetesVersion: spec.KubernetesVersion(),
		EksaVersion:       spec.EksaVersion(),
		WorkerGroups:      workerGroups(spec.Cluster),
	}
	// The file first: bad input is said before the cluster is asked.
	var fileBundles *model.Bundles
	if toBundles != "" {
		// Bounded as the spec file is: --to-bundles /dev/zero grew the
		// console without end, reading.
		data, err := ReadInputFile(toBundles, MaxBundlesBytes)
		if err != nil {
			return nil, &model.InputError{Source: toBundles, Problem: "cannot read: " + unwrapPathErr(err),
				Fix: "give the target release's Bundles manifest with --to-bundles (`kubectl -n eksa-system get bundles NAME -o yaml`; a few hundred KB)"}
		}
		if fileBundles, err = model.ParseBundles(data, toBundles); err != nil {
			return nil, err
		}
	}
	t.refLookups, t.ClusterMachineConfigs = r.lookupProviderRefs(ctx, spec)
	src := spec.Path + " (Cluster " + spec.Cluster.GetName() + ")"
	if t.EksaVersion != "" {
		var bundles *model.Bundles
		t.Release, bundles, t.ReleaseErr = r.release(ctx, t.EksaVersion, src+" spec.eksaVersion")
		if t.ReleaseErr == nil {
			t.Bundles = bundles
			t.BundlesVia = "EKSARelease " + r.Client.Sys() + "/" + t.Release.Name
		}
	}
	// EKS-A reads the deprecated spec.bundlesRef first, as Current does: a
	// spec exported from an old cluster keeps it beside a new eksaVersion,
	// and the plan showed the release's components where EKS-A would keep
	// the Bundles it names.
	if refName, _, _ := unstructured.NestedString(spec.Cluster.Object, "spec", "bundlesRef", "name"); refName != "" {
		refNS, _, _ := unstructured.NestedString(spec.Cluster.Object, "spec", "bundlesRef", "namespace")
		if refNS == "" {
			refNS = spec.Cluster.GetNamespace()
		}
		if refNS == "" {
			refNS = "default"
		}
		bundles, err := r.bundles(ctx, refNS, refName, "named by "+src+" spec.bundlesRef")
		if err != nil && fileBundles == nil {
			return nil, err
		}
		t.Bundles, t.BundlesVia, t.ReleaseErr = bundles, BundlesViaRef, nil
	}
	if fileBundles != nil {
		t.ClusterBundles = t.Bundles
		t.Bundles, t.BundlesVia, t.BundlesFile = fileBundles, toBundles, toBundles
		return t, nil
	}
	if t.BundlesVia == BundlesViaRef {
		return t, nil
	}
	if t.EksaVersion == "" {
		return nil, &model.InputError{Source: spec.Path, Field: "Cluster " + spec.Cluster.GetName() + ": spec.eksaVersion",
			Problem: "is not set, so the target release is unknown",
			Fix:     "set spec.eksaVersion to the EKS-A release to upgrade to, or give its Bundles manifest with --to-bundles"}
	}
	if t.ReleaseErr != nil {
		return nil, t.ReleaseErr
	}
	return t, nil
}

// release reads the EKSARelease of an EKS-A version and the Bundles it names.
func (r *Resolver) release(ctx context.Context, version, from string) (*model.EKSARelease, *model.Bundles, error) {
	name := model.EKSAReleaseName(version)
	src := fmt.Sprintf("EKSARelease %s/%s", r.Client.Sys(), name)
	u, err := r.Client.Dynamic.Resource(GVREKSARelease).Namespace(r.Client.Sys()).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, r.lookupError(err, src, fmt.Sprintf("the EKSARelease of EKS-A %s (from %s)", version, from),
			fmt.Sprintf("EKS-A creates it when it installs the %s management components: install them first "+
				"(eksctl anywhere upgrade management-components -f <cluster.yaml> with the %s CLI), "+
				"or give the release's Bundles manifest with --to-bundles", version, version))
	}
	data, err := json.Marshal(u.Object)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", src, err)
	}
	rel, err := model.ParseEKSARelease(data, src)
	if err != nil {
		return nil, nil, err
	}
	if rel.Name == "" {
		rel.Name = name
	}
	ns := rel.BundlesRefNamespace
	if ns == "" {
		ns = r.Client.Sys()
	}
	b, err := r.bundles(ctx, ns, rel.BundlesRefName, "named by "+src+" spec.bundlesRef")
	if err != nil {
		return rel, nil, err
	}
	return rel, b, nil
}

func (r *Resolver) bundles(ctx context.Context, namespace, name, from string) (*model.Bundles, error) {
	src := fmt.Sprintf("Bundles %s/%s", namespace, name)
	u, err := r.Client.Dynamic.Resource(GVRBundles).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, r.lookupError(err, src, "the Bundles "+from,
			"the release's Bundles object is missing from the cluster: reinstall the release's management components, which bring it; "+
				"for the target release alone, --to-bundles FILE gives its manifest; without --cluster, `plan --from-bundles FILE --to-bundles FILE --kubernetes-version X.Y` plans from two manifests")
	}
	data, err := json.Marshal(u.Object)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	return model.ParseBundles(data, src)
}

// lookupError turns a failed GET into an error that names the object, why it
// was looked up, and what to do.
func (r *Resolver) lookupError(err error, src, what, fix string) error {
	switch {
	case apierrors.IsNotFound(err) && isKindMissing(err):
		return &model.InputError{Source: src, Problem: "the API server does not serve this kind: is this an EKS Anywhere management cluster?",
			Fix: "check --kubeconfig and --context"}
	case apierrors.IsNotFound(err):
		return notFoundError(src, what, fix)
	case apierrors.IsForbidden(err):
		// The identity may be --as's, not the kubeconfig's user: "use
		// another kubeconfig" missed it.
		return &model.InputError{Source: src, Problem: "access denied: " + refusal(err),
			Fix: "the identity the console connects as (the kubeconfig's user, or --as when given) may not read it: " +
				canI(err, src, r.Conn) + "use one that may read the EKS-A objects (the cluster's admin kubeconfig, or grant get on them)"}
	case meta.IsNoMatchError(err):
		return &model.InputError{Source: src, Problem: "the API server does not serve this kind", Fix: "check --kubeconfig and --context"}
	}
	var ue *url.Error
	if errors.As(err, &ue) && !errors.Is(err, context.Canceled) {
		server := ue.URL
		if u, perr := url.Parse(ue.URL); perr == nil {
			server = u.Scheme + "://" + u.Host
		}
		// The server answered, with a certificate the client refused:
		// "cannot be reached … is the API server up" sent the operator
		// to a server that was up.
		var verr *tls.CertificateVerificationError
		if errors.As(err, &verr) {
			fix := "check that --kubeconfig and --context name this cluster, and that its certificate-authority-data (or --certificate-authority) is the CA of this API server"
			var host x509.HostnameError
			if errors.As(err, &host) {
				fix = "connect by a name or address the certificate lists (--server, or --tls-server-name with one of its names), as the cluster's own kubeconfig does"
			}
			return &model.InputError{Source: "API server " + server, Problem: "answered, but its certificate is not trusted (reading " + src + "): " + verr.Err.Error(), Fix: fix, Cause: ue}
		}
		fix := "check --kubeconfig and --context (the server they name), and that the management cluster's API server is up"
		if slices.ContainsFunc(r.Conn, func(f model.ConnFlag) bool { return f.Name == "server" }) {
			fix = "check --server (the address given), and that the management cluster's API server is up"
		}
		if ue.Timeout() {
			// A client-side bound that cut the request (--request-timeout
			// too short for the server) reads as the same error.
			fix += ", and that --request-timeout (or the kubeconfig's timeout) gives it long enough to answer"
		}
		return &model.InputError{Source: "API server " + server, Problem: "cannot be reached (reading " + src + "): " + ue.Err.Error(), Fix: fix, Cause: ue}
	}
	return fmt.Errorf("read %s: %w", src, err)
}

// isKindMissing tells a missing resource type (404 with no object name in the
// details) from a missing object of a served type.
func isKindMissing(err error) bool {
	var se apierrors.APIStatus
	if !asStatus(err, &se) {
		return false
	}
	d := se.Status().Details
	return d == nil || d.Name == ""
}

// workerGroups reads spec.workerNodeGroupConfigurations.
func workerGroups(cluster *unstructured.Unstructured) []model.WorkerGroup {
	groups, _, _ := unstructured.NestedSlice(cluster.Object, "spec", "workerNodeGroupConfigurations")
	out := make([]model.WorkerGroup, 0, len(groups))
	for _, g := range groups {
		m, ok := g.(map[string]any)
		if !ok {
			continue
		}
		// Names and versions are printed (the plan's worker rows); a
		// live Cluster's are whoever may update it's.
		wg := model.WorkerGroup{}
		name, _ := m["name"].(string)
		version, _ := m["kubernetesVersion"].(string)
		wg.Name, wg.KubernetesVersion = model.PrintableLine(name), model.PrintableLine(version)
		if n, ok, _ := unstructured.NestedInt64(m, "count"); ok {
			wg.Count = int(n)
		}
		wg.RolloutStrategy, _, _ = unstructured.NestedString(m, "upgradeRolloutStrategy", "type")
		out = append(out, wg)
	}
	return out
}

// canI is the kubectl command that asks whether the identity may read what
// the API server refused (err, a Forbidden, of src, "Kind namespace/name"),
// with the console's connection flags, or "" when err does not say.
func canI(err error, src string, conn model.ConnFlags) string {
	var st apierrors.APIStatus
	if !errors.As(err, &st) || st.Status().Details == nil {
		return ""
	}
	d := st.Status().Details
	res := d.Kind // the resource, in a Forbidden's details
	if d.Group != "" {
		res += "." + d.Group
	}
	if d.Name != "" {
		res += "/" + d.Name
	}
	if _, obj, ok := strings.Cut(src, " "); ok {
		if ns, _, ok := strings.Cut(obj, "/"); ok {
			res += " -n " + ns
		}
	}
	return "`kubectl auth can-i get " + res + conn.String() + "` says whether it may; "
}
