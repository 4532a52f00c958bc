package upgrade

import (
	"errors"
	"fmt"
	"math"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/model"
)

// eksaRefuses ends a problem that is one of EKS-A's own validation rules:
// the operator is to know it is not the console's preference.
const eksaRefuses = " (EKS-A refuses it)"

// checkNodeGroups refuses the node counts and worker groups EKS-A's own
// validation refuses (aws/eks-anywhere pkg/api/v1alpha1/cluster.go,
// ValidateClusterConfigContent: run by `eksctl anywhere upgrade cluster` on
// the file and by the Cluster webhook's ValidateUpdate after its defaulting).
// Offline no webhook judges the file at all; live, the webhook's refusal
// names neither the file nor the field, and an API server without it (the
// demo's) takes the spec and the apply writes it.
//
// Only what the file sets is judged. Under server-side apply a field the
// file leaves out keeps the value of the manager that owns it, which the
// file cannot tell: an absent controlPlaneConfiguration.count, an absent
// workerNodeGroupConfigurations, or externalEtcdConfiguration left out
// (which decides whether an even control-plane count is refused) are left to
// the dry run. workerNodeGroupConfigurations is an atomic list in the CRD
// (no x-kubernetes-list-type), so the file's list lands whole, and within it
// an absent count or first name is EKS-A's default
// (cluster_defaults.go setWorkerNodeGroupDefaults), judged as such.
//
// An explicit null is set, not left out. EKS-A decodes it as the zero
// value (a nil pointer, a zero struct, a nil list) and judges that. Under
// server-side apply it is a value the applier owns, never a removal: the
// demo's kube-apiserver, with EKS-A's CRD (no field of it nullable), refuses
// "externalEtcdConfiguration: null" as not of type object where the console
// alone owned the etcd fields or none were set, and keeps the fields where
// another manager (eks-a-cli) owns them, so a file that says "no external
// etcd" would be applied as if it said nothing. A null count or list never
// gets here: the schema check refuses it (schemaWalker.value), as the API
// server does; a null mapping does.
func checkNodeGroups(source string, cluster *unstructured.Unstructured, conn model.ConnFlags) error {
	spec, _ := cluster.Object["spec"].(map[string]any)
	if spec == nil {
		return nil
	}
	at := "Cluster " + cluster.GetName() + ": spec."
	var errs []error
	refuse := func(field, problem, fix string) {
		errs = append(errs, &model.InputError{Source: source, Field: at + field, Problem: problem + eksaRefuses, Fix: fix})
	}

	cp, _ := spec["controlPlaneConfiguration"].(map[string]any)
	// validateControlPlaneReplicas: "control plane node count must be
	// positive". A null controlPlaneConfiguration is EKS-A's zero struct,
	// count 0.
	const cpFix = "set count to the number of control plane nodes the cluster runs (3 or 5, as EKS-A recommends; an odd number with stacked etcd)"
	if v, set := spec["controlPlaneConfiguration"]; set && v == nil {
		refuse("controlPlaneConfiguration", "null: EKS-A reads it as a control plane of 0 nodes: control plane node count must be positive",
			"leave controlPlaneConfiguration out to keep the cluster's, or write it as the cluster has it; "+cpFix)
	}
	if n, ok := intValue(cp, "count"); ok && n <= 0 {
		refuse("controlPlaneConfiguration.count",
			fmt.Sprintf("%d: the cluster needs a control plane node: control plane node count must be positive", n), cpFix)
	}

	// A null is no value the Cluster takes here, whatever its etcd: EKS-A
	// reads it as no external etcd, which on a cluster with external etcd
	// is a change its upgrade refuses, "adding or removing external etcd
	// during upgrade is not supported" (aws/eks-anywhere
	// pkg/validations/upgradevalidations/immutable_fields.go,
	// ValidateImmutableFields), and server-side apply does not make it
	// (above). The file is read before the cluster is, so the fix names
	// both cases.
	if v, set := spec["externalEtcdConfiguration"]; set && v == nil {
		errs = append(errs, &model.InputError{Source: source, Field: at + "externalEtcdConfiguration",
			Problem: "null is not a value EKS-A takes here: the API server refuses it as not an object, or keeps the etcd fields another field manager owns, so it does not say \"no external etcd\"; and on a cluster with external etcd, EKS-A refuses removing it: adding or removing external etcd during upgrade is not supported" + eksaRefuses,
			Fix: fmt.Sprintf("leave externalEtcdConfiguration out on a cluster with stacked etcd; on one with external etcd, write it as the cluster has it (count and machineGroupRef, as `kubectl%s get clusters.anywhere.eks.amazonaws.com %s -n %s -o yaml` shows them)",
				conn, cluster.GetName(), cluster.GetNamespace())})
	}

	// validateEtcdReplicas, for an external etcd the file sets.
	if etcd, _ := spec["externalEtcdConfiguration"].(map[string]any); etcd != nil {
		if n, ok := intValue(etcd, "count"); ok {
			var why string
			switch {
			case n == 0:
				why = "no value set for etcd replicas"
			case n < 0:
				why = "etcd replicas cannot be a negative number"
			case n%2 == 0:
				why = "external etcd count cannot be an even number"
			}
			if why != "" {
				refuse("externalEtcdConfiguration.count", fmt.Sprintf("%d: %s", n, why),
					"set count to the number of etcd members the cluster runs: an odd number, 3 or 5 as EKS-A recommends")
			}
		}
	}

	// validateWorkerNodeGroups: only a Bare Metal (Tinkerbell) cluster may
	// run without worker groups. An empty list the file sets replaces the
	// cluster's; a datacenterRef the file leaves out is the cluster's,
	// unknown here.
	groups, listed := spec["workerNodeGroupConfigurations"].([]any)
	kind, _, _ := unstructured.NestedString(spec, "datacenterRef", "kind")
	if listed && len(groups) == 0 && kind != "" && kind != "TinkerbellDatacenterConfig" {
		refuse("workerNodeGroupConfigurations",
			fmt.Sprintf("is empty: WorkerNodeGroupConfigs cannot be empty for %s (only a Bare Metal cluster, TinkerbellDatacenterConfig, may run its workloads on the control plane)", kind),
			"keep the cluster's worker groups in the list (name, count, machineGroupRef each), as `kubectl get cluster "+cluster.GetName()+" -o yaml` shows them")
	}
	first := map[string]int{}
	for i, g := range groups {
		m, ok := g.(map[string]any)
		if !ok {
			continue // the schema check names it
		}
		field := fmt.Sprintf("workerNodeGroupConfigurations[%d].", i)
		name, _ := m["name"].(string)
		if name == "" && i == 0 {
			// setWorkerNodeGroupDefaults names the first group only.
			name = "md-0"
		}
		if name == "" {
			given := "missing"
			if _, set := m["name"]; set {
				given = `""`
			}
			refuse(field+"name", given+": EKS-A names only the first worker group when it has no name: must specify name for worker nodes",
				fmt.Sprintf("give the group a name no other group has, e.g. name: md-%d", i))
		}
		if problem, f, fix := workerCountProblem(m); problem != "" {
			refuse(field+f, problem, fix)
		}
		if name == "" {
			continue
		}
		if j, twice := first[name]; twice {
			also := fmt.Sprintf("workerNodeGroupConfigurations[%d]", j)
			if j == 0 && m0Unnamed(groups) {
				also += " (unnamed, which EKS-A names md-0)"
			}
			refuse(field+"name", fmt.Sprintf("%q is also the name of %s: worker node group names must be unique", name, also),
				"give each worker group a name of its own: each is a MachineDeployment named after it, <cluster>-<name>")
			continue
		}
		first[name] = i
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// m0Unnamed reports whether the first worker group has no name of its own.
func m0Unnamed(groups []any) bool {
	m, _ := groups[0].(map[string]any)
	name, _ := m["name"].(string)
	return name == ""
}

// workerCountProblem is validateAutoscalingConfig's refusal of a worker
// group's counts (with setWorkerNodeGroupDefaults' count: autoscaling's
// minCount, else 1), in its order, the field to fix and the fix; "" when
// none.
func workerCountProblem(g map[string]any) (problem, field, fix string) {
	count, countSet := intValue(g, "count")
	as, _ := g["autoscalingConfiguration"].(map[string]any)
	if as == nil {
		if countSet && count < 0 {
			return fmt.Sprintf("%d: worker node count must be zero or greater if autoscaling is not enabled", count), "count",
				"set count to the group's number of nodes, 0 or more (left out, EKS-A takes 1)"
		}
		return "", "", ""
	}
	const withinFix = "set count between the group's autoscalingConfiguration minCount and maxCount, or leave it out (EKS-A then takes minCount)"
	const boundsFix = "set 0 ≤ minCount ≤ maxCount in the group's autoscalingConfiguration (a bound left out is 0)"
	// Absent, EKS-A's ints are 0.
	minCount, _ := intValue(as, "minCount")
	maxCount, _ := intValue(as, "maxCount")
	if !countSet {
		count = minCount
	}
	switch {
	case minCount < 0:
		return fmt.Sprintf("%d: min count must be non negative", minCount), "autoscalingConfiguration.minCount", boundsFix
	case minCount > maxCount:
		return fmt.Sprintf("%d is more than maxCount %d: min count must be no greater than max count", minCount, maxCount), "autoscalingConfiguration.minCount", boundsFix
	case minCount > count:
		return fmt.Sprintf("%d is less than autoscalingConfiguration.minCount %d: min count must be less than or equal to count", count, minCount), "count", withinFix
	case maxCount < count:
		return fmt.Sprintf("%d is more than autoscalingConfiguration.maxCount %d: max count must be greater than or equal to count", count, maxCount), "count", withinFix
	}
	return "", "", ""
}

// intValue is an integer field of m, as decoded from YAML or JSON (a
// float64 with no fraction); false when absent or not an integer, which
// the schema check names.
func intValue(m map[string]any, key string) (int64, bool) {
	switch n := m[key].(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n), true
		}
	}
	return 0, false
}
