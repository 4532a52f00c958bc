package upgrade

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/model"
)

// CheckMachineTemplates warns when a machine config's OS image is named for
// another Kubernetes version than the machines it makes will run. That the
// machine configs are there at all is provider-refs' to say.
const CheckMachineTemplates = "machine-templates"

// templateKube finds the Kubernetes version in an OS image's name, the way
// EKS-A's image builder and its documentation name them
// ("ubuntu-2204-kube-1.30", "bottlerocket-kube-v1-31", "…-kube-v1.29.3",
// "bottlerocket-vmware-k8s-1.30-x86_64-v1.26.2").
var templateKube = regexp.MustCompile(`(?:kube|k8s)-v?(\d+)[.-](\d+)(?:\D|$)`)

// machineImage is where each provider's machine config names the OS image
// its machines boot: vSphere's template path, CloudStack's template name,
// Nutanix's image name, Tinkerbell's image URL.
var machineImage = [][]string{{"spec", "template"}, {"spec", "template", "name"}, {"spec", "image", "name"}, {"spec", "osImageURL"}}

// checkMachineTemplates reads the OS image names of the spec's machine
// configs. EKS-A itself refuses a vSphere template that lacks the
// eksdRelease tag of the target's EKS-D release (MachineConfigInvalid),
// after the apply; the console cannot see vCenter's tags, only the name, so a
// name that says otherwise is a warning, never a block. A reference to a
// machine config that is not there fails provider-refs; here it has no image
// to read.
func checkMachineTemplates(ctx context.Context, in *Inputs) model.CheckResult {
	t := in.Target
	if t.Spec == nil || t.Spec.Cluster == nil {
		return pass("no cluster spec to read")
	}
	want := machineConfigKube(t.Spec.Cluster, t.KubernetesVersion)
	// Mismatches grouped by (image's version, machines' version): a spec
	// whose every template was left behind reads as one sentence.
	type mismatch struct {
		got, want      string
		configs, names []string
	}
	var wrong []*mismatch
	var blank []string
	named := 0
	for i, d := range append(slices.Clone(t.Spec.Docs), t.ClusterMachineConfigs...) {
		if !strings.HasSuffix(d.GetKind(), "MachineConfig") {
			continue
		}
		label := d.GetKind() + " " + d.GetName()
		if i >= len(t.Spec.Docs) {
			label += " (the cluster's: the spec file leaves it out)"
		}
		uses, ok := want[d.GetName()]
		if !ok {
			continue
		}
		image := ""
		for _, p := range machineImage {
			if s, ok, _ := unstructured.NestedString(d.Object, p...); ok && s != "" {
				image = s
				break
			}
		}
		if tmpl, set, _ := unstructured.NestedString(d.Object, "spec", "template"); image == "" && set && tmpl == "" && d.GetKind() == "VSphereMachineConfig" {
			// Blanked in the spec: it was not counted, and the check
			// passed naming the others.
			blank = append(blank, label)
			continue
		}
		m := templateKube.FindStringSubmatch(path.Base(image))
		if m == nil {
			continue
		}
		named++
		got := m[1] + "." + m[2]
		i := slices.IndexFunc(uses, func(u machineUse) bool { return u.kube != got })
		if i < 0 {
			continue
		}
		j := slices.IndexFunc(wrong, func(w *mismatch) bool { return w.got == got && w.want == uses[i].kube })
		if j < 0 {
			wrong = append(wrong, &mismatch{got: got, want: uses[i].kube})
			j = len(wrong) - 1
		}
		w := wrong[j]
		w.configs = append(w.configs, label)
		if b := path.Base(image); !slices.Contains(w.names, b) {
			w.names = append(w.names, b)
		}
	}
	if len(blank) > 0 && len(wrong) == 0 {
		return warn(fmt.Sprintf("%s: spec.template is empty, so the machines name no OS image", strings.Join(blank, ", ")),
			"set spec.template to the vSphere template built for Kubernetes "+t.KubernetesVersion+" (the cluster's own value: `kubectl get vspheremachineconfigs -A -o yaml`)")
	}
	if len(wrong) > 0 {
		refused := refusedKube(ctx, in)
		var msgs, wants, fixes []string
		for _, w := range wrong {
			if by, ok := refused[w.want]; ok {
				msgs = append(msgs, fmt.Sprintf("%s: image %s named for Kubernetes %s, and the machines would run %s, which %s refuses",
					strings.Join(w.configs, ", "), strings.Join(w.names, ", "), w.got, w.want, by))
				fix := fmt.Sprintf("set a Kubernetes version EKS-A accepts first (%s refuses %s), then name images for it", by, w.want)
				if !slices.Contains(fixes, fix) {
					fixes = append(fixes, fix)
				}
				continue
			}
			msgs = append(msgs, fmt.Sprintf("%s: image %s named for Kubernetes %s, and the machines run %s",
				strings.Join(w.configs, ", "), strings.Join(w.names, ", "), w.got, w.want))
			wants = append(wants, w.want)
		}
		if len(wants) > 0 {
			// Images built for a refused version would be built for
			// nothing: the fix names only the versions that stand.
			fixes = append([]string{"point them to the images built for " + strings.Join(slices.Compact(wants), ", ") + ", unless the images carry its eksdRelease tag: EKS-A refuses a vSphere template without the eksdRelease tag of the target's EKS-D release (MachineConfigInvalid), after the apply"}, fixes...)
		}
		return warn(strings.Join(msgs, "; "), strings.Join(fixes, "; "))
	}
	if named == 0 {
		return pass("no machine config names its image after a Kubernetes version")
	}
	return pass(fmt.Sprintf("%d machine config(s) name their image for the Kubernetes version their machines run", named))
}

// refusedKube maps the target Kubernetes version, when a version rule
// refuses it, to that rule's name: the apply cannot go there, so no image is
// to be built for it.
func refusedKube(ctx context.Context, in *Inputs) map[string]string {
	t := in.Target
	out := map[string]string{}
	if in.Current != nil && in.Current.KubernetesVersion != "" {
		if r := checkKubeSkew(ctx, in); r.Failed() {
			out[t.KubernetesVersion] = model.CheckNameKubernetesVersionSkew
			return out
		}
	}
	if t.Bundles != nil && len(t.Bundles.VersionsBundles) > 0 {
		if r := checkTargetKnown(ctx, in); r.Failed() {
			out[t.KubernetesVersion] = model.CheckNameTargetKubernetesKnown
		}
	}
	return out
}

type machineUse struct{ group, kube string }

// machineConfigKube maps each machine config the Cluster refers to, to the
// groups that use it and the version each runs.
func machineConfigKube(cluster *unstructured.Unstructured, kube string) map[string][]machineUse {
	out := map[string][]machineUse{}
	for _, r := range providerRefs(cluster, kube) {
		if !r.datacenter && r.name != "" {
			out[r.name] = append(out[r.name], machineUse{r.what, r.kube})
		}
	}
	return out
}

// CheckProviderRefs fails when the Cluster spec refers to a provider object
// (spec.datacenterRef, a machine group's machineGroupRef) that EKS-A would
// not find: a kind that is no provider's, of the wrong family (a datacenter
// config for a machine group) or of another provider than the datacenter's,
// or a name that neither the spec file nor the cluster holds. The API server
// takes any string for a reference's kind and name, and the demo's EKS-A
// does not look: a typo of either passed the plan and was applied; a real
// EKS-A refuses the spec or fails its reconcile after the apply.
const CheckProviderRefs = "provider-refs"

// providerKinds are an EKS-A infrastructure provider's kinds, as
// pkg/api/v1alpha1 names them, and its component key in the Bundles.
type providerKinds struct{ name, datacenter, machine, bundleKey string }

var providerTable = []providerKinds{
	{"vSphere", "VSphereDatacenterConfig", "VSphereMachineConfig", "vSphere"},
	{"CloudStack", "CloudStackDatacenterConfig", "CloudStackMachineConfig", "cloudStack"},
	{"Nutanix", "NutanixDatacenterConfig", "NutanixMachineConfig", "nutanix"},
	{"Tinkerbell", "TinkerbellDatacenterConfig", "TinkerbellMachineConfig", "tinkerbell"},
	{"Snow", "SnowDatacenterConfig", "SnowMachineConfig", "snow"},
	// Docker (test clusters) has no machine configs: EKS-A asks a Docker
	// cluster for no machineGroupRef (validateMachineGroupRefs).
	{"Docker", "DockerDatacenterConfig", "", "docker"},
}

// providerOf finds the provider of a kind, and whether the kind is its
// datacenter config (else its machine config); nil for no provider's.
func providerOf(kind string) (*providerKinds, bool) {
	for i := range providerTable {
		p := &providerTable[i]
		switch kind {
		case p.datacenter:
			return p, true
		case p.machine:
			if p.machine != "" {
				return p, false
			}
		}
	}
	return nil, false
}

// providerKindsOf lists the datacenter config kinds, or the machine config
// kinds.
func providerKindsOf(datacenter bool) []string {
	var out []string
	for i := range providerTable {
		if k := providerTable[i].kind(datacenter); k != "" {
			out = append(out, k)
		}
	}
	return out
}

func (p *providerKinds) kind(datacenter bool) string {
	if datacenter {
		return p.datacenter
	}
	return p.machine
}

// providerRef is a reference of the Cluster spec to a provider object.
type providerRef struct {
	// field is where it is written: spec.datacenterRef,
	// spec.workerNodeGroupConfigurations[1].machineGroupRef, …
	field string
	// what refers: "the datacenter", "the control plane", "the external
	// etcd", "the worker group md-0".
	what       string
	datacenter bool
	// set: the reference is written at all.
	set        bool
	kind, name string
	// kube is the Kubernetes version a machine group's machines run after
	// the upgrade: the Cluster's, or a worker group's own.
	kube string
}

func (r providerRef) family() string {
	if r.datacenter {
		return "datacenter config"
	}
	return "machine config"
}

// providerRefs lists the references of the Cluster spec to provider
// objects: its datacenterRef first, then the machineGroupRef of the control
// plane, of the external etcd (when it has one) and of each worker group,
// written or not.
func providerRefs(cluster *unstructured.Unstructured, kube string) []providerRef {
	spec, _ := cluster.Object["spec"].(map[string]any)
	var out []providerRef
	add := func(parent map[string]any, key, field, what string, datacenter bool, v string) {
		r := providerRef{field: field, what: what, datacenter: datacenter, kube: v}
		if m, ok := parent[key].(map[string]any); ok {
			r.set = true
			r.kind, _ = m["kind"].(string)
			r.name, _ = m["name"].(string)
		}
		out = append(out, r)
	}
	add(spec, "datacenterRef", "spec.datacenterRef", "the datacenter", true, "")
	cp, _ := spec["controlPlaneConfiguration"].(map[string]any)
	add(cp, "machineGroupRef", "spec.controlPlaneConfiguration.machineGroupRef", "the control plane", false, kube)
	if etcd, ok := spec["externalEtcdConfiguration"].(map[string]any); ok {
		add(etcd, "machineGroupRef", "spec.externalEtcdConfiguration.machineGroupRef", "the external etcd", false, kube)
	}
	groups, _ := spec["workerNodeGroupConfigurations"].([]any)
	for i, g := range groups {
		m, ok := g.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		v, _ := m["kubernetesVersion"].(string)
		add(m, "machineGroupRef", fmt.Sprintf("spec.workerNodeGroupConfigurations[%d].machineGroupRef", i),
			"the worker group "+cmp.Or(name, strconv.Itoa(i)), false, cmp.Or(v, kube))
	}
	return out
}

// refLookup is what the cluster holds of a provider object the Cluster
// refers to and the spec file leaves out.
type refLookup struct {
	found bool
	// missing: the cluster does not hold it (why, when it is more than
	// "not found": the kind not served).
	missing bool
	// why the lookup could not tell, when neither found nor missing.
	why string
	// names are those of the cluster's objects of that kind in the
	// Cluster's namespace, for a did-you-mean.
	names []string
}

func refKey(kind, name string) string { return kind + "/" + name }

// lookupProviderRefs reads from the cluster the provider objects the
// Cluster refers to by a provider's kind of the right family and the spec
// file leaves out: EKS-A uses the cluster's. found are the machine configs
// among them, whose images machine-templates reads.
func (r *Resolver) lookupProviderRefs(ctx context.Context, spec *SpecFile) (map[string]*refLookup, []*unstructured.Unstructured) {
	out := map[string]*refLookup{}
	var found []*unstructured.Unstructured
	for _, ref := range providerRefs(spec.Cluster, "") {
		key := refKey(ref.kind, ref.name)
		p, datacenter := providerOf(ref.kind)
		if ref.name == "" || p == nil || datacenter != ref.datacenter || out[key] != nil || spec.Has(ref.kind, ref.name) {
			continue
		}
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(GVREKSACluster.GroupVersion().String())
		u.SetKind(ref.kind)
		u.SetNamespace(spec.Cluster.GetNamespace())
		u.SetName(ref.name)
		l := &refLookup{}
		live, err := r.Client.get(ctx, u)
		switch {
		case err == nil:
			l.found = true
			if !ref.datacenter {
				found = append(found, live)
			}
		case errors.Is(err, errNotServed), apierrors.IsNotFound(err) && isKindMissing(err):
			l.missing = true
			l.why = "the cluster does not serve " + ref.kind + ": the " + p.name + " provider's CRDs are not installed"
		case apierrors.IsNotFound(err):
			l.missing = true
			l.names = r.namesOf(ctx, u)
		case apierrors.IsForbidden(err):
			l.why = "forbidden: " + refusal(err)
		default:
			l.why = err.Error()
		}
		out[key] = l
	}
	return out, found
}

// namesOf lists the names of the objects of u's kind in its namespace
// (nil when they cannot be listed).
func (r *Resolver) namesOf(ctx context.Context, u *unstructured.Unstructured) []string {
	ri, _, err := r.Client.resource(u)
	if err != nil {
		return nil
	}
	list, err := ri.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(list.Items))
	for _, o := range list.Items {
		names = append(names, o.GetName())
	}
	return names
}

func checkProviderRefs(_ context.Context, in *Inputs) model.CheckResult {
	t := in.Target
	if t == nil || t.Spec == nil || t.Spec.Cluster == nil {
		return pass("no cluster spec to read")
	}
	var cur *unstructured.Unstructured
	if in.Current != nil {
		cur = in.Current.Cluster
	}
	return providerRefsResult(t.Spec, cur, t.refLookups)
}

// SpecFileChecks are the checks a spec file allows without a cluster (an
// offline `plan -f`): provider-refs, of what the file alone tells — the
// kinds, their families and providers, the names of the objects it holds.
// Whether the cluster holds the objects the file leaves out is for the
// live plan.
func SpecFileChecks(spec *SpecFile) []model.CheckResult {
	r := providerRefsResult(spec, nil, nil)
	r.Name = CheckProviderRefs
	return []model.CheckResult{r}
}

// refProblem is one reference that does not resolve: where, what is
// wrong, and the fix.
type refProblem struct{ field, problem, fix string }

// maxRefProblems caps the problems one result names.
const maxRefProblems = 5

// providerRefsResult judges the Cluster spec's references to provider
// objects: the kinds (known, of the right family, of the datacenter's
// provider), the names (held by the spec file, or by the cluster as
// lookups found; nil lookups: no cluster, those are not judged), and
// against cur, the Cluster in the cluster (nil: none), that datacenterRef
// does not change.
func providerRefsResult(spec *SpecFile, cur *unstructured.Unstructured, lookups map[string]*refLookup) model.CheckResult {
	refs := providerRefs(spec.Cluster, "")
	dc := refs[0]
	var dcProvider *providerKinds
	if p, isDC := providerOf(dc.kind); p != nil && isDC {
		dcProvider = p
	}
	// The machine configs' provider, when all known ones agree: what a
	// datacenterRef of no known kind most likely meant.
	var machineProvider *providerKinds
	for _, r := range refs[1:] {
		p, isDC := providerOf(r.kind)
		if p == nil || isDC {
			continue
		}
		if machineProvider != nil && machineProvider != p {
			machineProvider = nil
			break
		}
		machineProvider = p
	}

	var problems []refProblem
	var unsure []string
	inFile, inCluster, notChecked, machines := 0, 0, 0, 0
	for _, r := range refs {
		if !r.datacenter && dcProvider != nil && dcProvider.machine == "" {
			continue // Docker: EKS-A reads no machine config
		}
		hint := dcProvider
		if r.datacenter {
			hint = machineProvider
		}
		if p := refKindProblem(r, dcProvider, hint); p != nil {
			if kind, name := currentDatacenter(cur); r.datacenter && !r.set && kind != "" {
				p.fix = fmt.Sprintf("add spec.datacenterRef: {kind: %s, name: %s}, as Cluster %s in the cluster has it (it cannot change)", kind, name, cur.GetName())
			}
			problems = append(problems, *p)
			continue
		}
		if !r.set {
			continue
		}
		if !r.datacenter {
			machines++
		}
		if r.name == "" {
			problems = append(problems, refProblem{r.field + ".name", "missing: the reference names no " + r.kind,
				"set " + r.field + ".name to the metadata.name of " + r.what + "'s " + r.kind})
			continue
		}
		l := lookups[refKey(r.kind, r.name)]
		held := spec.Has(r.kind, r.name)
		missing := !held && l != nil && l.missing
		if r.datacenter && cur != nil {
			if p := datacenterChange(r, cur, missing); p != nil {
				problems = append(problems, *p)
				continue
			}
		}
		switch {
		case held:
			inFile++
		case lookups == nil:
			notChecked++
		case l == nil:
			unsure = append(unsure, r.kind+" "+r.name)
		case l.found:
			inCluster++
		case l.missing:
			problems = append(problems, missingRef(r, spec, l))
		default:
			unsure = append(unsure, fmt.Sprintf("%s %s (%s)", r.kind, r.name, l.why))
		}
	}

	if len(problems) > 0 {
		var msgs, fixes []string
		for i, p := range problems {
			if i == maxRefProblems {
				msgs = append(msgs, fmt.Sprintf("and %d more", len(problems)-i))
				break
			}
			msgs = append(msgs, p.field+": "+p.problem)
			if !slices.Contains(fixes, p.fix) {
				fixes = append(fixes, p.fix)
			}
		}
		return failed(specDoc(spec)+": "+strings.Join(msgs, "; "), strings.Join(fixes, "; ")+" in "+spec.Path)
	}
	what := "datacenterRef names"
	if machines > 0 {
		what = fmt.Sprintf("datacenterRef and %d machineGroupRef(s) name", machines)
	}
	prov := "provider"
	if dcProvider != nil {
		prov = dcProvider.name
	}
	if len(unsure) > 0 {
		return warn("could not check that the cluster holds "+strings.Join(unsure, ", ")+", which the Cluster refers to and "+spec.Path+" leaves out",
			"add them to "+spec.Path+", or use a kubeconfig that may read them; EKS-A fails its reconcile on a reference to an object that is not there")
	}
	if extra := unreferencedProviderDocs(spec, refs); len(extra) > 0 {
		return warn(fmt.Sprintf("%s holds %s, which the Cluster does not refer to: the apply would create or change it, and EKS-A never reads it", spec.Path, strings.Join(extra, ", ")),
			"refer to it from the machine group or datacenterRef it was meant for (a copied document renamed, its reference left as it was?), or remove it from "+spec.Path)
	}
	switch {
	case notChecked > 0:
		return pass(fmt.Sprintf("%s %s kinds; %d of the objects are not in %s: `plan --cluster` checks that the cluster holds them", what, prov, notChecked, spec.Path))
	case inCluster > 0 && inFile == 0:
		return pass(fmt.Sprintf("%s %s objects that the cluster holds (%s leaves them out)", what, prov, spec.Path))
	case inCluster > 0:
		return pass(fmt.Sprintf("%s %s objects that %s (%d) or the cluster (%d) holds", what, prov, spec.Path, inFile, inCluster))
	}
	return pass(fmt.Sprintf("%s %s objects that %s holds", what, prov, spec.Path))
}

// unreferencedProviderDocs are the spec file's datacenter and machine
// configs no reference of the Cluster names ("VSphereMachineConfig
// mgmt-extra"): the apply writes them all the same.
func unreferencedProviderDocs(spec *SpecFile, refs []providerRef) []string {
	named := make(map[string]bool, len(refs))
	for _, r := range refs {
		if r.set {
			named[refKey(r.kind, r.name)] = true
		}
	}
	var out []string
	for _, d := range spec.Docs {
		if p, _ := providerOf(d.GetKind()); p == nil || named[refKey(d.GetKind(), d.GetName())] {
			continue
		}
		out = append(out, d.GetKind()+" "+d.GetName())
	}
	return out
}

// refKindProblem judges a reference's kind: written, a provider's, of the
// family its place takes (a machine config for a machine group), of the
// datacenter's provider (dc, nil when unknown). hint is the provider the
// fix names when the kind is no provider's.
func refKindProblem(r providerRef, dc, hint *providerKinds) *refProblem {
	want := ""
	if hint != nil {
		want = hint.kind(r.datacenter)
	}
	setKind := func(kind string) string {
		if kind == "" {
			return "set " + r.field + ".kind to one of " + strings.Join(providerKindsOf(r.datacenter), ", ")
		}
		return "set " + r.field + ".kind: " + kind
	}
	field := r.field + ".kind"
	switch {
	case !r.set && r.datacenter:
		return &refProblem{r.field, "missing: the Cluster names no datacenter config, which EKS-A requires",
			fmt.Sprintf("add spec.datacenterRef: {kind: %s, name: …} naming the cluster's datacenter config, as the Cluster in the cluster has it (it cannot change)", cmp.Or(want, "<kind>"))}
	case !r.set:
		if dc == nil {
			return nil // the datacenterRef's own problem says what is wrong
		}
		return &refProblem{r.field, fmt.Sprintf("missing: %s names no machine config, which EKS-A requires of a %s cluster", r.what, dc.name),
			fmt.Sprintf("add %s: {kind: %s, name: …} naming %s's machine config", r.field, dc.machine, r.what)}
	case r.kind == "":
		return &refProblem{field, "missing: the reference names no kind", setKind(want)}
	}
	p, isDC := providerOf(r.kind)
	switch {
	case p != nil && isDC == r.datacenter:
		if !r.datacenter && dc != nil && p != dc {
			return &refProblem{field, fmt.Sprintf("%s is the %s provider's, but spec.datacenterRef names a %s datacenter (%s): EKS-A reads only the datacenter's provider's machine configs",
				r.kind, p.name, dc.name, dc.datacenter), setKind(dc.machine)}
		}
		return nil
	case p != nil:
		other := "a machine config"
		if isDC {
			other = "a datacenter config"
		}
		return &refProblem{field, fmt.Sprintf("%s is %s kind, not a %s kind", r.kind, other, r.family()),
			setKind(cmp.Or(want, p.kind(r.datacenter)))}
	}
	suggest := closest(r.kind, providerKindsOf(r.datacenter))
	problem := fmt.Sprintf("%s is not a %s kind the console knows", r.kind, r.family())
	if suggest != "" {
		problem += " (did you mean " + suggest + "?)"
	}
	return &refProblem{field, problem, setKind(cmp.Or(suggest, want))}
}

// datacenterChange is the problem of a datacenterRef that differs from the
// Cluster's in the cluster: EKS-A's webhook refuses to change it (immutable).
// missing adds that the new one is not there either.
func datacenterChange(r providerRef, cur *unstructured.Unstructured, missing bool) *refProblem {
	kind, name := currentDatacenter(cur)
	if (kind == "" && name == "") || (kind == r.kind && name == r.name) {
		return nil
	}
	field := r.field
	switch {
	case kind == r.kind:
		field += ".name"
	case name == r.name:
		field += ".kind"
	}
	problem := fmt.Sprintf("%s %s, but Cluster %s in the cluster has %s %s, and EKS-A refuses to change datacenterRef (immutable)", r.kind, r.name, cur.GetName(), kind, name)
	if missing {
		problem += "; nor does the spec file or the cluster hold a " + r.kind + " " + r.name
	}
	return &refProblem{field, problem, fmt.Sprintf("set %s back to kind: %s, name: %s (change the datacenter's settings in that object's own document)", r.field, kind, name)}
}

// currentDatacenter is the datacenterRef of the Cluster in the cluster
// (empty without one).
func currentDatacenter(cur *unstructured.Unstructured) (kind, name string) {
	if cur == nil {
		return "", ""
	}
	kind, _, _ = unstructured.NestedString(cur.Object, "spec", "datacenterRef", "kind")
	name, _, _ = unstructured.NestedString(cur.Object, "spec", "datacenterRef", "name")
	return kind, name
}

// missingRef is the problem of a reference to an object that neither the
// spec file nor the cluster holds, with a near name of that kind when
// either holds one.
func missingRef(r providerRef, spec *SpecFile, l *refLookup) refProblem {
	problem := fmt.Sprintf("%s refers to %s %s, which neither the spec file nor the cluster holds", r.what, r.kind, r.name)
	if l.why != "" {
		problem += " (" + l.why + ")"
	}
	// The names of that kind the file and the cluster hold, those nothing
	// refers to first: of two near names, the one left over is the likelier.
	var names []string
	for _, d := range spec.Docs {
		if d.GetKind() == r.kind {
			names = append(names, d.GetName())
		}
	}
	names = append(names, l.names...)
	referred := map[string]bool{}
	for _, o := range providerRefs(spec.Cluster, "") {
		if o.kind == r.kind {
			referred[o.name] = true
		}
	}
	slices.SortStableFunc(names, func(a, b string) int {
		return cmp.Compare(b2i(referred[a]), b2i(referred[b]))
	})
	fix := fmt.Sprintf("add the %s %s to the spec file, or correct %s.name", r.kind, r.name, r.field)
	if near := closest(r.name, slices.Compact(names)); near != "" {
		problem += " (did you mean " + near + "?)"
		fix = fmt.Sprintf("set %s.name: %s, or add the %s %s to the spec file", r.field, near, r.kind, r.name)
	}
	return refProblem{r.field + ".name", problem, fix}
}

// specDoc names the spec's Cluster document as the schema checks do:
// "target.yaml document 1 (Cluster mgmt)".
func specDoc(spec *SpecFile) string {
	if i := slices.Index(spec.Docs, spec.Cluster); i >= 0 {
		return spec.Path + " " + docLabel(i+1, spec.Cluster.Object)
	}
	return spec.Path + " (Cluster " + spec.Cluster.GetName() + ")"
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
