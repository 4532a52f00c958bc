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
	// A template blanked in the spec was not counted, and the check
	// passed naming the other three.
	t.Run("a blank template", func(t *testing.T) {
		yaml := strings.Replace(strings.Replace(templatesSpec, "/SDDC-Datacenter/vm/Templates/ubuntu-2204-kube-CP", `""`, 1), "kube-ETCD", "kube-1.31", 1)
		spec, err := ParseSpec("cluster.yaml", []byte(yaml), "default")
		if err != nil {
			t.Fatal(err)
		}
		r := checkMachineTemplates(context.Background(), &Inputs{Target: &Target{Spec: spec, KubernetesVersion: "1.31"}})
		if r.Status != model.CheckWarn || !strings.Contains(r.Message, "VSphereMachineConfig mgmt-cp: spec.template is empty") || !strings.Contains(r.Remediation, "Kubernetes 1.31") {
			t.Errorf("%s %q fix %q, want a warning naming mgmt-cp", r.Status, r.Message, r.Remediation)
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

// With a target version a version rule refuses (1.30 → 1.32 skips a minor),
// machine-templates sent the operator to build images for 1.32, a version
// the apply can never reach.
func TestCheckMachineTemplatesOfARefusedVersion(t *testing.T) {
	yaml := strings.NewReplacer(`kubernetesVersion: "1.31"`, `kubernetesVersion: "1.32"`,
		"kube-CP", "kube-1.30", "kube-ETCD", "kube-1.30", "bottlerocket-kube-v1-31", "bottlerocket-kube-v1-30").Replace(templatesSpec)
	spec, err := ParseSpec("cluster.yaml", []byte(yaml), "default")
	if err != nil {
		t.Fatal(err)
	}
	bundles := &model.Bundles{Name: "bundles-86", VersionsBundles: []model.VersionsBundle{{KubeVersion: "1.30"}, {KubeVersion: "1.31"}, {KubeVersion: "1.32"}}}
	in := func(current string, b *model.Bundles) *Inputs {
		return &Inputs{Current: &Current{KubernetesVersion: current}, Target: &Target{Spec: spec, KubernetesVersion: "1.32", Bundles: b}}
	}
	t.Run("skips a minor", func(t *testing.T) {
		r := checkMachineTemplates(context.Background(), in("1.30", bundles))
		if r.Status != model.CheckWarn || !strings.Contains(r.Message, "the machines would run 1.32, which kubernetes-version-skew refuses") {
			t.Errorf("%s %q, want a warning that names the refusal", r.Status, r.Message)
		}
		if strings.Contains(r.Remediation, "images built for 1.32") || !strings.Contains(r.Remediation, "set a Kubernetes version EKS-A accepts first (kubernetes-version-skew refuses 1.32)") {
			t.Errorf("fix %q: want the version fixed first, no images for 1.32", r.Remediation)
		}
		// md-1 keeps its own 1.30, which stands; only its image's name is judged.
		if strings.Contains(r.Message, "mgmt-md-old") {
			t.Errorf("message %q names md-1, whose 1.30 image is right", r.Message)
		}
	})
	t.Run("not in the target Bundles", func(t *testing.T) {
		old := &model.Bundles{Name: "bundles-70", VersionsBundles: []model.VersionsBundle{{KubeVersion: "1.30"}, {KubeVersion: "1.31"}}}
		r := checkMachineTemplates(context.Background(), in("1.31", old))
		if strings.Contains(r.Remediation, "images built for 1.32") || !strings.Contains(r.Remediation, "(target-kubernetes-known refuses 1.32)") {
			t.Errorf("fix %q: want the version fixed first, no images for 1.32", r.Remediation)
		}
	})
	t.Run("a version that stands", func(t *testing.T) {
		r := checkMachineTemplates(context.Background(), in("1.31", bundles))
		if r.Status != model.CheckWarn || !strings.Contains(r.Remediation, "point them to the images built for 1.32") || strings.Contains(r.Remediation, "first") {
			t.Errorf("%s, fix %q: want the images for 1.32", r.Status, r.Remediation)
		}
	})
}
