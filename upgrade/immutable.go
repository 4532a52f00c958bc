package upgrade

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/model"
)

// CheckImmutableFields fails on a change of a Cluster field that EKS-A's CLI
// refuses to upgrade (pkg/validations/upgradevalidations/immutable_fields.go).
// Its webhook refuses most of them too, and the dry run says so; not the CNI
// plugin, which an apply through the API changed unchecked (cilium to
// kindnetd planned "cilium unused" and exit 0), and not in the demo, which
// runs no webhook.
const CheckImmutableFields = "immutable-fields"

// immutableField is one of those fields: where it is in spec, and how its
// value is read (read nil: as it is). The etcd topology is judged apart
// (etcdTopology), for its own wording and fix.
type immutableField struct {
	path []string
	read func(spec map[string]any) (any, bool)
	why  string
}

var immutableFields = []immutableField{
	{path: []string{"controlPlaneConfiguration", "endpoint", "host"}, why: "the control plane's address: every node and kubeconfig uses it"},
	{path: []string{"clusterNetwork", "pods"}, why: "the pod network"},
	{path: []string{"clusterNetwork", "services"}, why: "the service network"},
	{path: []string{"clusterNetwork", "dns"}, why: "the cluster DNS settings"},
	{path: []string{"clusterNetwork", "cniConfig"}, read: cniPlugin, why: "the CNI plugin: EKS-A does not move a cluster from one to another"},
	{path: []string{"proxyConfiguration"}, why: "the proxy settings"},
	{path: []string{"managementCluster", "name"}, why: "the management cluster the cluster belongs to"},
}

// cniPlugin is which CNI the spec chooses (cniConfig's one key, or the
// deprecated spec.clusterNetwork.cni).
func cniPlugin(spec map[string]any) (any, bool) {
	if cfg, ok, _ := unstructured.NestedMap(spec, "clusterNetwork", "cniConfig"); ok {
		for _, k := range []string{"cilium", "kindnetd"} {
			if _, set := cfg[k]; set {
				return k, true
			}
		}
	}
	if cni, ok, _ := unstructured.NestedString(spec, "clusterNetwork", "cni"); ok && cni != "" {
		return cni, true
	}
	return nil, false
}

// checkImmutable judges every field on the file, as it is written, and on
// the server-side dry run's result where there is one: a file that leaves
// a field out keeps the cluster's only while another field manager owns
// it, and where the console's own does alone (an earlier apply took
// eks-a-cli's ownership with --force-conflicts), server-side apply removes
// it. The file is still read for what it sets: a result may keep another
// manager's value beside the file's (cniConfig with cilium and kindnetd),
// which reads as the plugin kept. Without a result (the dry run refused the
// Cluster, or could not be asked) a field the file leaves out keeps the
// cluster's, and so does a null mapping (it keeps another manager's fields
// or the API server refuses it: schemaWalker.value).
func checkImmutable(_ context.Context, in *Inputs) model.CheckResult {
	if in.Current == nil || in.Current.Cluster == nil || in.Target == nil || in.Target.Spec == nil || in.Target.Spec.Cluster == nil {
		return pass("not asked (no cluster)")
	}
	live, _, _ := unstructured.NestedMap(in.Current.Cluster.Object, "spec")
	file, _, _ := unstructured.NestedMap(in.Target.Spec.Cluster.Object, "spec")
	before, after, judged := live, file, false
	if d := in.Target.SpecDryRun; d != nil && d.clusterResult != nil {
		before, _, _ = unstructured.NestedMap(d.clusterLive.Object, "spec")
		after, _, _ = unstructured.NestedMap(d.clusterResult.Object, "spec")
		judged = true
	}
	var changed []string
	for _, f := range immutableFields {
		if c := fieldChange(live, file, f, ""); c != "" {
			changed = append(changed, c)
			continue
		}
		if !judged {
			continue
		}
		var why string
		if v, ok := valueAt(file, f); !ok || v == nil {
			why = "; " + removedAsSoleOwner(in.Target.Spec.Path)
		}
		if c := fieldChange(before, after, f, why); c != "" {
			changed = append(changed, c)
		}
	}
	etcd, etcdFix := etcdTopology(in, before, after, file, judged)
	if len(changed) == 0 && etcd == "" {
		return pass("no field that EKS-A keeps for the cluster's life changes")
	}
	var fixes []string
	if len(changed) > 0 {
		fixes = append(fixes, fmt.Sprintf("keep these fields in %s as the cluster has them (`kubectl%s get clusters.anywhere.eks.amazonaws.com %s -n %s -o yaml`): EKS-A's CLI refuses to upgrade a cluster they change, and its controller does not move a running cluster to new ones",
			in.Target.Spec.Path, in.conn(), in.Current.Cluster.GetName(), in.Current.Cluster.GetNamespace()))
	}
	if etcd != "" {
		changed = append(changed, etcd)
		fixes = append(fixes, etcdFix)
	}
	return failed(strings.Join(changed, "; "), strings.Join(fixes, "; "))
}

// removedAsSoleOwner is why the apply removes a field the spec file at path
// leaves out: the console's field manager alone owns it on the Cluster.
func removedAsSoleOwner(path string) string {
	return fmt.Sprintf("%s leaves it out, and no field manager but %s owns it on the Cluster, so server-side apply removes it", path, ManagerName)
}

// etcdEKSARule is EKS-A's refusal of a change of etcd topology, as its CLI
// words it (ValidateImmutableFields); its Cluster webhook refuses the adding
// ("cannot switch from local to external etcd topology") but lets a removal
// through.
const etcdEKSARule = `EKS-A's CLI refuses "adding or removing external etcd during upgrade is not supported" (pkg/validations/upgradevalidations/immutable_fields.go); its controller moves no running cluster between stacked and external etcd`

// etcdTopology is the change between external and stacked etcd that the
// apply makes, and its fix; "" when it makes none. live and after are the
// spec before and after the apply, as checkImmutable reads them (judged:
// from the dry run's result; otherwise after is the file, where a field
// left out keeps the cluster's).
func etcdTopology(in *Inputs, live, after, file map[string]any, judged bool) (change, fix string) {
	if _, set := after["externalEtcdConfiguration"]; !set && !judged {
		return "", ""
	}
	was, _, _ := unstructured.NestedMap(live, "externalEtcdConfiguration")
	now, _, _ := unstructured.NestedMap(after, "externalEtcdConfiguration")
	path, name := in.Target.Spec.Path, in.Target.Spec.Cluster.GetName()
	switch {
	case was != nil && now == nil:
		why := ""
		if _, inFile := file["externalEtcdConfiguration"]; !inFile {
			why = ": " + removedAsSoleOwner(path)
		}
		return "spec.externalEtcdConfiguration (set) → (none): the apply removes external etcd, to run etcd stacked on the control plane" + why,
			fmt.Sprintf("keep externalEtcdConfiguration as the cluster has it: add it back to %s, in Cluster %s's spec, as `externalEtcdConfiguration: %s`; %s",
				path, name, etcdYAML(was), etcdEKSARule)
	case was == nil && now != nil:
		return "spec.externalEtcdConfiguration (none) → (set): the apply adds external etcd to a cluster that runs etcd stacked on the control plane",
			fmt.Sprintf("keep externalEtcdConfiguration as the cluster has it: remove it from %s, in Cluster %s's spec (the cluster has none); %s; its webhook refuses \"cannot switch from local to external etcd topology\"",
				path, name, etcdEKSARule)
	}
	return "", ""
}

// etcdYAML is an externalEtcdConfiguration written as a flow mapping the
// operator can paste into the spec file.
func etcdYAML(etcd map[string]any) string {
	var parts []string
	if n, ok := etcd["count"]; ok {
		parts = append(parts, fmt.Sprintf("count: %v", n))
	}
	if ref, ok := etcd["machineGroupRef"].(map[string]any); ok {
		var r []string
		for _, k := range []string{"kind", "name"} {
			if v, ok := ref[k]; ok {
				r = append(r, fmt.Sprintf("%s: %v", k, v))
			}
		}
		parts = append(parts, "machineGroupRef: {"+strings.Join(r, ", ")+"}")
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// fieldChange is f's change from was to now, "" when there is none; a
// field now has not (left out, or null) is no change, and removed says why
// the apply would remove it instead.
func fieldChange(was, now map[string]any, f immutableField, removed string) string {
	after, has := valueAt(now, f)
	has = has && after != nil
	if !has && removed == "" {
		return ""
	}
	before, had := valueAt(was, f)
	had = had && before != nil
	if had == has && (!had || reflect.DeepEqual(before, after)) {
		return ""
	}
	return fmt.Sprintf("spec.%s %s → %s (%s%s)", strings.Join(f.path, "."), short(before, had), short(after, has), f.why, removed)
}

func valueAt(spec map[string]any, f immutableField) (any, bool) {
	if f.read != nil {
		return f.read(spec)
	}
	v, ok, _ := unstructured.NestedFieldNoCopy(spec, f.path...)
	return v, ok
}

func short(v any, ok bool) string {
	switch {
	case !ok || v == nil:
		return "(none)"
	}
	s := fmt.Sprint(v)
	if len(s) > 60 {
		s = s[:57] + "…"
	}
	return s
}
