package upgrade

import (
	"errors"
	"strings"
	"testing"

	"github.com/upgrade-console/upgrade-console/model"
)

// nodesSpec is a Cluster document whose spec ends with the given lines
// (indented two spaces, under spec:).
func nodesSpec(spec string) string {
	return "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: mgmt}\nspec:\n  kubernetesVersion: '1.31'\n" + spec
}

const vsphereRef = "  datacenterRef: {kind: VSphereDatacenterConfig, name: mgmt}\n"

// What EKS-A's ValidateClusterConfigContent refuses of node counts and
// worker groups (aws/eks-anywhere pkg/api/v1alpha1/cluster.go) is bad
// input naming the file, the field and the fix.
func TestParseSpecRefusesWhatEKSAValidationRefuses(t *testing.T) {
	for _, c := range []struct{ name, spec, field, want string }{
		{"no control plane node", "  controlPlaneConfiguration: {count: 0}\n",
			"Cluster mgmt: spec.controlPlaneConfiguration.count", "0: the cluster needs a control plane node: control plane node count must be positive (EKS-A refuses it)"},
		{"a negative control plane", "  controlPlaneConfiguration: {count: -1}\n",
			"Cluster mgmt: spec.controlPlaneConfiguration.count", "control plane node count must be positive"},
		{"no external etcd member", "  externalEtcdConfiguration: {count: 0}\n",
			"Cluster mgmt: spec.externalEtcdConfiguration.count", "0: no value set for etcd replicas"},
		{"a negative external etcd", "  externalEtcdConfiguration: {count: -3}\n",
			"Cluster mgmt: spec.externalEtcdConfiguration.count", "-3: etcd replicas cannot be a negative number"},
		{"an even external etcd", "  externalEtcdConfiguration: {count: 4}\n",
			"Cluster mgmt: spec.externalEtcdConfiguration.count", "4: external etcd count cannot be an even number"},
		// An explicit null mapping is EKS-A's zero value, not a field left
		// out (a null count or list the schema check refuses).
		{"a null control plane", "  controlPlaneConfiguration: null\n",
			"Cluster mgmt: spec.controlPlaneConfiguration", "null: EKS-A reads it as a control plane of 0 nodes: control plane node count must be positive (EKS-A refuses it)"},
		{"external etcd null", "  externalEtcdConfiguration: null\n",
			"Cluster mgmt: spec.externalEtcdConfiguration", "null is not a value EKS-A takes here"},
		{"no worker group on vSphere", vsphereRef + "  workerNodeGroupConfigurations: []\n",
			"Cluster mgmt: spec.workerNodeGroupConfigurations", "is empty: WorkerNodeGroupConfigs cannot be empty for VSphereDatacenterConfig"},
		{"a negative worker count", "  workerNodeGroupConfigurations:\n  - {name: md-0, count: -2}\n",
			"Cluster mgmt: spec.workerNodeGroupConfigurations[0].count", "-2: worker node count must be zero or greater if autoscaling is not enabled (EKS-A refuses it)"},
		{"two groups of one name", "  workerNodeGroupConfigurations:\n  - {name: md-0, count: 2}\n  - {name: md-0, count: 2}\n",
			"Cluster mgmt: spec.workerNodeGroupConfigurations[1].name", `"md-0" is also the name of workerNodeGroupConfigurations[0]: worker node group names must be unique (EKS-A refuses it)`},
		// setWorkerNodeGroupDefaults names an unnamed first group md-0.
		{"an unnamed first group and md-0", "  workerNodeGroupConfigurations:\n  - {count: 2}\n  - {name: md-0}\n",
			"Cluster mgmt: spec.workerNodeGroupConfigurations[1].name", `"md-0" is also the name of workerNodeGroupConfigurations[0] (unnamed, which EKS-A names md-0)`},
		{"an unnamed second group", "  workerNodeGroupConfigurations:\n  - {name: md-0}\n  - {count: 1}\n",
			"Cluster mgmt: spec.workerNodeGroupConfigurations[1].name", "missing: EKS-A names only the first worker group when it has no name: must specify name for worker nodes"},
		{"a second group named empty", "  workerNodeGroupConfigurations:\n  - {name: md-0}\n  - {name: ''}\n",
			"Cluster mgmt: spec.workerNodeGroupConfigurations[1].name", `"": EKS-A names only`},
		{"a negative minCount", "  workerNodeGroupConfigurations:\n  - {name: md-0, autoscalingConfiguration: {minCount: -1, maxCount: 3}}\n",
			"Cluster mgmt: spec.workerNodeGroupConfigurations[0].autoscalingConfiguration.minCount", "-1: min count must be non negative"},
		{"minCount over maxCount", "  workerNodeGroupConfigurations:\n  - {name: md-0, autoscalingConfiguration: {minCount: 4, maxCount: 3}}\n",
			"Cluster mgmt: spec.workerNodeGroupConfigurations[0].autoscalingConfiguration.minCount", "4 is more than maxCount 3: min count must be no greater than max count"},
		{"count under minCount", "  workerNodeGroupConfigurations:\n  - {name: md-0, count: 1, autoscalingConfiguration: {minCount: 2, maxCount: 3}}\n",
			"Cluster mgmt: spec.workerNodeGroupConfigurations[0].count", "1 is less than autoscalingConfiguration.minCount 2"},
		{"count over maxCount", "  workerNodeGroupConfigurations:\n  - {name: md-0, count: 5, autoscalingConfiguration: {minCount: 2, maxCount: 3}}\n",
			"Cluster mgmt: spec.workerNodeGroupConfigurations[0].count", "5 is more than autoscalingConfiguration.maxCount 3: max count must be greater than or equal to count"},
		// An absent maxCount is EKS-A's 0.
		{"autoscaling without maxCount", "  workerNodeGroupConfigurations:\n  - {name: md-0, autoscalingConfiguration: {minCount: 1}}\n",
			"Cluster mgmt: spec.workerNodeGroupConfigurations[0].autoscalingConfiguration.minCount", "1 is more than maxCount 0"},
		// Negative with autoscaling too, in EKS-A's words for it.
		{"a negative count with autoscaling", "  workerNodeGroupConfigurations:\n  - {name: md-0, count: -1, autoscalingConfiguration: {minCount: 0, maxCount: 3}}\n",
			"Cluster mgmt: spec.workerNodeGroupConfigurations[0].count", "min count must be less than or equal to count"},
	} {
		_, err := ParseSpec("x.yaml", []byte(nodesSpec(c.spec)), "default")
		var ie *model.InputError
		if !errors.As(err, &ie) || ie.Source != "x.yaml" || ie.Field != c.field || !strings.Contains(ie.Problem, c.want) || ie.Fix == "" {
			t.Errorf("%s: %v, want an InputError on x.yaml, %s, containing %q, with a fix", c.name, err, c.field, c.want)
		}
	}
}

// Every problem is said at once, as the schema check says them.
func TestParseSpecNamesEveryNodeProblem(t *testing.T) {
	_, err := ParseSpec("x.yaml", []byte(nodesSpec("  controlPlaneConfiguration: {count: 0}\n  workerNodeGroupConfigurations:\n  - {name: md-0, count: -1}\n  - {name: md-0}\n")), "default")
	for _, want := range []string{"controlPlaneConfiguration.count: 0", "workerNodeGroupConfigurations[0].count: -1", "workerNodeGroupConfigurations[1].name: \"md-0\" is also"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v, want %q", err, want)
		}
	}
}

// What EKS-A accepts, defaults, or what the file does not decide (a field
// it leaves out keeps the cluster's value under server-side apply) passes.
func TestParseSpecAcceptsWhatEKSAValidationAccepts(t *testing.T) {
	for _, c := range []struct{ name, spec string }{
		{"counts left out", "  controlPlaneConfiguration: {endpoint: {host: 10.0.0.1}}\n  workerNodeGroupConfigurations:\n  - {name: md-0}\n"},
		{"a group scaled to none", "  workerNodeGroupConfigurations:\n  - {name: md-0, count: 0}\n"},
		{"an unnamed first group", "  workerNodeGroupConfigurations:\n  - {count: 2}\n  - {name: md-1}\n"},
		{"autoscaling, count left out", "  workerNodeGroupConfigurations:\n  - {name: md-0, autoscalingConfiguration: {minCount: 2, maxCount: 5}}\n"},
		{"autoscaling, count within", "  workerNodeGroupConfigurations:\n  - {name: md-0, count: 3, autoscalingConfiguration: {minCount: 2, maxCount: 5}}\n"},
		{"autoscaling, all zero", "  workerNodeGroupConfigurations:\n  - {name: md-0, autoscalingConfiguration: {}}\n"},
		{"no worker group on Bare Metal", "  datacenterRef: {kind: TinkerbellDatacenterConfig, name: mgmt}\n  workerNodeGroupConfigurations: []\n"},
		{"no worker group, datacenterRef left out", "  workerNodeGroupConfigurations: []\n"},
		{"worker groups left out", vsphereRef},
		// Stacked or external: externalEtcdConfiguration left out may be
		// the cluster's, kept by server-side apply.
		{"an even control plane, etcd left out", "  controlPlaneConfiguration: {count: 2}\n"},
		{"an even control plane, external etcd", "  controlPlaneConfiguration: {count: 2}\n  externalEtcdConfiguration: {count: 3}\n"},
		{"one external etcd member", "  externalEtcdConfiguration: {count: 1}\n"},
		{"external etcd, count left out", "  externalEtcdConfiguration: {machineGroupRef: {kind: VSphereMachineConfig, name: mgmt-etcd}}\n"},
	} {
		if _, err := ParseSpec("x.yaml", []byte(nodesSpec(c.spec)), "default"); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// externalEtcdConfiguration: null is refused before the cluster is read,
// so its problem and fix hold for a cluster with stacked etcd as for one
// with external etcd: they said "adding or removing external etcd" alone,
// with a fix to write count and machineGroupRef, which a stacked cluster
// has none of, and a kubectl command that reached neither the Cluster kind
// (`get cluster` is CAPI's) nor the console's cluster.
func TestParseSpecExternalEtcdNullSaysBothTopologies(t *testing.T) {
	conn := model.ConnFlags{{Name: "kubeconfig", Value: "/k/config"}}
	_, err := ParseSpecWith("x.yaml", []byte(nodesSpec("  externalEtcdConfiguration: null\n")), "eksa", Schemas{}.WithConn(conn))
	var ie *model.InputError
	if !errors.As(err, &ie) {
		t.Fatalf("%v, want an InputError", err)
	}
	for _, want := range []string{"null is not a value EKS-A takes here", "on a cluster with external etcd, EKS-A refuses removing it"} {
		if !strings.Contains(ie.Problem, want) {
			t.Errorf("problem %q lacks %q", ie.Problem, want)
		}
	}
	for _, want := range []string{"leave externalEtcdConfiguration out on a cluster with stacked etcd", "on one with external etcd, write it as the cluster has it",
		"`kubectl --kubeconfig /k/config get clusters.anywhere.eks.amazonaws.com mgmt -n eksa -o yaml`"} {
		if !strings.Contains(ie.Fix, want) {
			t.Errorf("fix %q lacks %q", ie.Fix, want)
		}
	}
}
