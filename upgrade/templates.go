package upgrade

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/model"
)

// CheckMachineTemplates warns when a machine config's OS image is named for
// another Kubernetes version than the machines it makes will run.
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
// name that says otherwise is a warning, never a block.
func checkMachineTemplates(_ context.Context, in *Inputs) model.CheckResult {
	t := in.Target
	if t.Spec == nil || t.Spec.Cluster == nil {
		return pass("no cluster spec to read")
	}
	if len(t.MissingMachineConfigs) > 0 {
		return failed(strings.Join(t.MissingMachineConfigs, "; ")+", which neither the spec file nor the cluster holds: EKS-A would fail its reconcile after the apply",
			"add the machine config to "+t.Spec.Path+", or correct machineGroupRef.name")
	}
	want := machineConfigKube(t.Spec.Cluster, t.KubernetesVersion)
	// Mismatches grouped by (image's version, machines' version): a spec
	// whose every template was left behind reads as one sentence.
	type mismatch struct {
		got, want      string
		configs, names []string
	}
	var wrong []*mismatch
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
	if len(wrong) > 0 {
		var msgs, wants []string
		for _, w := range wrong {
			msgs = append(msgs, fmt.Sprintf("%s: image %s named for Kubernetes %s, and the machines run %s",
				strings.Join(w.configs, ", "), strings.Join(w.names, ", "), w.got, w.want))
			wants = append(wants, w.want)
		}
		return warn(strings.Join(msgs, "; "),
			"point them to the images built for "+strings.Join(slices.Compact(wants), ", ")+", unless the images carry its eksdRelease tag: EKS-A refuses a vSphere template without the eksdRelease tag of the target's EKS-D release (MachineConfigInvalid), after the apply")
	}
	if named == 0 {
		return pass("no machine config names its image after a Kubernetes version")
	}
	return pass(fmt.Sprintf("%d machine config(s) name their image for the Kubernetes version their machines run", named))
}

type machineUse struct{ group, kube string }

// machineRef is a machine group's reference to its machine config.
type machineRef struct {
	group, kind, name, kube string
}

// machineRefs lists the machine groups the Cluster spec names and the
// machine config each refers to, with the Kubernetes version each runs
// after the upgrade: the control plane and etcd the Cluster's, a worker
// group its own or the Cluster's.
func machineRefs(cluster *unstructured.Unstructured, kube string) []machineRef {
	var out []machineRef
	ref := func(m map[string]any, group, v string) {
		name, _, _ := unstructured.NestedString(m, "machineGroupRef", "name")
		kind, _, _ := unstructured.NestedString(m, "machineGroupRef", "kind")
		if name != "" {
			out = append(out, machineRef{group: group, kind: kind, name: name, kube: v})
		}
	}
	if cp, ok, _ := unstructured.NestedMap(cluster.Object, "spec", "controlPlaneConfiguration"); ok {
		ref(cp, "control plane", kube)
	}
	if etcd, ok, _ := unstructured.NestedMap(cluster.Object, "spec", "externalEtcdConfiguration"); ok {
		ref(etcd, "external etcd", kube)
	}
	groups, _, _ := unstructured.NestedSlice(cluster.Object, "spec", "workerNodeGroupConfigurations")
	for _, g := range groups {
		m, ok := g.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		v, _ := m["kubernetesVersion"].(string)
		ref(m, "worker group "+name, cmp.Or(v, kube))
	}
	return out
}

// machineConfigKube maps each machine config the Cluster refers to, to the
// groups that use it and the version each runs.
func machineConfigKube(cluster *unstructured.Unstructured, kube string) map[string][]machineUse {
	out := map[string][]machineUse{}
	for _, r := range machineRefs(cluster, kube) {
		out[r.name] = append(out[r.name], machineUse{r.group, r.kube})
	}
	return out
}

// missingMachineConfigs names the machine configs the Cluster refers to that
// neither the spec file nor the cluster holds: EKS-A would fail its
// reconcile on them after the apply. A lookup that cannot tell (no such
// kind served, a refusal) names nothing. found are the cluster's copies of
// those the file leaves out.
func (r *Resolver) missingMachineConfigs(ctx context.Context, spec *SpecFile) (missing []string, found []*unstructured.Unstructured) {
	for _, ref := range machineRefs(spec.Cluster, "") {
		if ref.kind == "" || spec.Has(ref.kind, ref.name) {
			continue
		}
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(GVREKSACluster.GroupVersion().String())
		u.SetKind(ref.kind)
		u.SetNamespace(spec.Cluster.GetNamespace())
		u.SetName(ref.name)
		live, err := r.Client.get(ctx, u)
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, fmt.Sprintf("the %s refers to %s %s", ref.group, ref.kind, ref.name))
		case err == nil:
			// The spec file leaves it out: EKS-A uses the cluster's, whose
			// image the check reads too.
			found = append(found, live)
		}
	}
	return missing, found
}
