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
// value is read (read nil: as it is; presence: whether it is set at all).
type immutableField struct {
	path     []string
	read     func(spec map[string]any) (any, bool)
	presence bool
	why      string
}

var immutableFields = []immutableField{
	{path: []string{"controlPlaneConfiguration", "endpoint", "host"}, why: "the control plane's address: every node and kubeconfig uses it"},
	{path: []string{"clusterNetwork", "pods"}, why: "the pod network"},
	{path: []string{"clusterNetwork", "services"}, why: "the service network"},
	{path: []string{"clusterNetwork", "dns"}, why: "the cluster DNS settings"},
	{path: []string{"clusterNetwork", "cniConfig"}, read: cniPlugin, why: "the CNI plugin: EKS-A does not move a cluster from one to another"},
	{path: []string{"proxyConfiguration"}, why: "the proxy settings"},
	{path: []string{"externalEtcdConfiguration"}, presence: true, why: "external etcd: EKS-A does not add it in an upgrade"},
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

func checkImmutable(_ context.Context, in *Inputs) model.CheckResult {
	if in.Current == nil || in.Current.Cluster == nil || in.Target == nil || in.Target.Spec == nil || in.Target.Spec.Cluster == nil {
		return pass("not asked (no cluster)")
	}
	live, _, _ := unstructured.NestedMap(in.Current.Cluster.Object, "spec")
	file, _, _ := unstructured.NestedMap(in.Target.Spec.Cluster.Object, "spec")
	var changed []string
	for _, f := range immutableFields {
		now, has := valueAt(file, f)
		if !has {
			// Left out of the file: server-side apply keeps what the
			// cluster has (another manager's fields are not removed).
			continue
		}
		was, had := valueAt(live, f)
		if had && reflect.DeepEqual(was, now) {
			continue
		}
		changed = append(changed, fmt.Sprintf("spec.%s %s → %s (%s)", strings.Join(f.path, "."), short(was, had), short(now, has), f.why))
	}
	if len(changed) == 0 {
		return pass("no field that EKS-A keeps for the cluster's life changes")
	}
	return failed(strings.Join(changed, "; "),
		fmt.Sprintf("keep these fields in %s as the cluster has them (`kubectl%s get clusters.anywhere.eks.amazonaws.com %s -n %s -o yaml`): EKS-A's CLI refuses to upgrade a cluster they change, and its controller does not move a running cluster to new ones",
			in.Target.Spec.Path, in.conn(), in.Current.Cluster.GetName(), in.Current.Cluster.GetNamespace()))
}

func valueAt(spec map[string]any, f immutableField) (any, bool) {
	if f.read != nil {
		return f.read(spec)
	}
	v, ok, _ := unstructured.NestedFieldNoCopy(spec, f.path...)
	if f.presence {
		return ok, ok
	}
	return v, ok
}

func short(v any, ok bool) string {
	switch {
	case !ok || v == nil:
		return "(none)"
	case v == true:
		return "(set)"
	}
	s := fmt.Sprint(v)
	if len(s) > 60 {
		s = s[:57] + "…"
	}
	return s
}
