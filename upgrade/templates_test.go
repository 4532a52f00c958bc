package upgrade

import (
	"context"
	"strings"
	"testing"

	"github.com/upgrade-console/upgrade-console/model"
)

const templatesSpec = `apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: Cluster
metadata: {name: mgmt}
spec:
  kubernetesVersion: "1.31"
  controlPlaneConfiguration:
    machineGroupRef: {kind: VSphereMachineConfig, name: mgmt-cp}
  externalEtcdConfiguration:
    machineGroupRef: {kind: VSphereMachineConfig, name: mgmt-etcd}
  workerNodeGroupConfigurations:
  - name: md-0
    machineGroupRef: {kind: VSphereMachineConfig, name: mgmt-md}
  - name: md-1
    kubernetesVersion: "1.30"
    machineGroupRef: {kind: VSphereMachineConfig, name: mgmt-md-old}
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: VSphereMachineConfig
metadata: {name: mgmt-cp}
spec: {template: /SDDC-Datacenter/vm/Templates/ubuntu-2204-kube-CP}
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: VSphereMachineConfig
metadata: {name: mgmt-etcd}
spec: {template: /SDDC-Datacenter/vm/Templates/ubuntu-2204-kube-ETCD}
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: VSphereMachineConfig
metadata: {name: mgmt-md}
spec: {template: /SDDC-Datacenter/vm/Templates/bottlerocket-kube-v1-31}
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: VSphereMachineConfig
metadata: {name: mgmt-md-old}
spec: {template: /SDDC-Datacenter/vm/Templates/ubuntu-2204-kube-v1.30.5}
`

// A machine config whose image is named for another Kubernetes version than
// its machines will run passed the plan, and EKS-A refused it after the apply.
func TestCheckMachineTemplates(t *testing.T) {
	run := func(t *testing.T, cp, etcd string) model.CheckResult {
		t.Helper()
		yaml := strings.Replace(strings.Replace(templatesSpec, "kube-CP", cp, 1), "kube-ETCD", etcd, 1)
		spec, err := ParseSpec("cluster.yaml", []byte(yaml), "default")
		if err != nil {
			t.Fatal(err)
		}
		return checkMachineTemplates(context.Background(), &Inputs{Target: &Target{Spec: spec, KubernetesVersion: "1.31"}})
	}
	t.Run("all named for what their machines run", func(t *testing.T) {
		r := run(t, "kube-1.31", "kube-v1.31.2")
		if r.Status != model.CheckPass || !strings.Contains(r.Message, "4 machine config(s)") {
			t.Errorf("%s %q, want pass over 4 machine configs (md-1 keeps 1.30)", r.Status, r.Message)
		}
	})
	t.Run("the control plane's and etcd's images left at the old version", func(t *testing.T) {
		r := run(t, "kube-1.30", "kube-1.30")
		if r.Status != model.CheckWarn || r.Blocking {
			t.Fatalf("%s (blocking %v), want a warning: the console cannot read vCenter's tags", r.Status, r.Blocking)
		}
		const want = "VSphereMachineConfig mgmt-cp, VSphereMachineConfig mgmt-etcd: image ubuntu-2204-kube-1.30 named for Kubernetes 1.30, and the machines run 1.31"
		if r.Message != want {
			t.Errorf("message %q, want %q (the workers' images are right)", r.Message, want)
		}
		if !strings.Contains(r.Remediation, "images built for 1.31") {
			t.Errorf("fix %q does not name the version to build for", r.Remediation)
		}
	})
	t.Run("images not named for a version", func(t *testing.T) {
		r := run(t, "golden", "golden")
		if r.Status != model.CheckPass {
			t.Errorf("%s %q, want pass", r.Status, r.Message)
		}
	})
	// Bottlerocket names its images "k8s-1.30"; 1.3 is not 1.31, though
	// one begins the other.
	for _, c := range []struct{ name, cp, want string }{
		{"a Bottlerocket image", "vmware-k8s-1.30-x86_64-v1.26.2", "named for Kubernetes 1.30"},
		{"a prefix of the version", "kube-1.3", "named for Kubernetes 1.3,"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if r := run(t, c.cp, "kube-1.31"); r.Status != model.CheckWarn || !strings.Contains(r.Message, c.want) {
				t.Errorf("%s: %s %q, want a warning %q", c.cp, r.Status, r.Message, c.want)
			}
		})
	}
}
