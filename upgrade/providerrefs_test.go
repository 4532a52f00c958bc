package upgrade

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
)

// refsSpec is a vSphere cluster spec whose every reference resolves within
// the file.
const refsSpec = `apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: Cluster
metadata: {name: mgmt}
spec:
  kubernetesVersion: "1.31"
  datacenterRef: {kind: VSphereDatacenterConfig, name: mgmt}
  controlPlaneConfiguration:
    machineGroupRef: {kind: VSphereMachineConfig, name: mgmt-cp}
  externalEtcdConfiguration:
    machineGroupRef: {kind: VSphereMachineConfig, name: mgmt-etcd}
  workerNodeGroupConfigurations:
  - name: md-0
    machineGroupRef: {kind: VSphereMachineConfig, name: mgmt-md-0}
  - name: md-1
    machineGroupRef: {kind: VSphereMachineConfig, name: mgmt-md-1}
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: VSphereDatacenterConfig
metadata: {name: mgmt}
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: VSphereMachineConfig
metadata: {name: mgmt-cp}
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: VSphereMachineConfig
metadata: {name: mgmt-etcd}
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: VSphereMachineConfig
metadata: {name: mgmt-md-0}
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: VSphereMachineConfig
metadata: {name: mgmt-md-1}
`

func parseRefsSpec(t *testing.T, yaml string) *SpecFile {
	t.Helper()
	spec, err := ParseSpec("cluster.yaml", []byte(yaml), "default")
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// A reference to a provider object by a kind EKS-A has no objects of passed
// the plan ("4 machine config(s) name their image …") and was applied: each
// is now a blocking failure naming the document, the field, what is wrong
// and the fix, from the file alone.
func TestProviderRefsFromTheFile(t *testing.T) {
	for _, c := range []struct {
		name          string
		from, to      string
		message, fix  string
		notInMessages []string
	}{
		{"a misspelt machine config kind", "{kind: VSphereMachineConfig, name: mgmt-md-1}", "{kind: VSphereMachinConfig, name: mgmt-md-1}",
			"cluster.yaml document 1 (Cluster mgmt): spec.workerNodeGroupConfigurations[1].machineGroupRef.kind: VSphereMachinConfig is not a machine config kind the console knows (did you mean VSphereMachineConfig?)",
			"set spec.workerNodeGroupConfigurations[1].machineGroupRef.kind: VSphereMachineConfig in cluster.yaml", nil},
		{"a misspelt datacenter config kind", "{kind: VSphereDatacenterConfig, name: mgmt}", "{kind: VSphereDatacenterConfigg, name: mgmt}",
			"spec.datacenterRef.kind: VSphereDatacenterConfigg is not a datacenter config kind the console knows (did you mean VSphereDatacenterConfig?)",
			"set spec.datacenterRef.kind: VSphereDatacenterConfig", []string{"machineGroupRef"}},
		{"a kind of the wrong case", "{kind: VSphereMachineConfig, name: mgmt-cp}", "{kind: vsphereMachineConfig, name: mgmt-cp}",
			"spec.controlPlaneConfiguration.machineGroupRef.kind: vsphereMachineConfig is not a machine config kind the console knows (did you mean VSphereMachineConfig?)",
			"set spec.controlPlaneConfiguration.machineGroupRef.kind: VSphereMachineConfig", nil},
		{"a machine config for the datacenter", "{kind: VSphereDatacenterConfig, name: mgmt}", "{kind: VSphereMachineConfig, name: mgmt}",
			"spec.datacenterRef.kind: VSphereMachineConfig is a machine config kind, not a datacenter config kind",
			"set spec.datacenterRef.kind: VSphereDatacenterConfig", nil},
		{"a datacenter config for a machine group", "{kind: VSphereMachineConfig, name: mgmt-etcd}", "{kind: VSphereDatacenterConfig, name: mgmt-etcd}",
			"spec.externalEtcdConfiguration.machineGroupRef.kind: VSphereDatacenterConfig is a datacenter config kind, not a machine config kind",
			"set spec.externalEtcdConfiguration.machineGroupRef.kind: VSphereMachineConfig", nil},
		{"another provider's machine config", "{kind: VSphereMachineConfig, name: mgmt-md-0}", "{kind: CloudStackMachineConfig, name: mgmt-md-0}",
			"spec.workerNodeGroupConfigurations[0].machineGroupRef.kind: CloudStackMachineConfig is the CloudStack provider's, but spec.datacenterRef names a vSphere datacenter (VSphereDatacenterConfig)",
			"set spec.workerNodeGroupConfigurations[0].machineGroupRef.kind: VSphereMachineConfig", nil},
		{"no kind", "{kind: VSphereMachineConfig, name: mgmt-md-0}", "{name: mgmt-md-0}",
			"spec.workerNodeGroupConfigurations[0].machineGroupRef.kind: missing: the reference names no kind",
			"set spec.workerNodeGroupConfigurations[0].machineGroupRef.kind: VSphereMachineConfig", nil},
		{"no name", "{kind: VSphereMachineConfig, name: mgmt-md-0}", "{kind: VSphereMachineConfig}",
			"spec.workerNodeGroupConfigurations[0].machineGroupRef.name: missing: the reference names no VSphereMachineConfig",
			"set spec.workerNodeGroupConfigurations[0].machineGroupRef.name to the metadata.name of the worker group md-0's VSphereMachineConfig", nil},
		{"a worker group without a machine config", "    machineGroupRef: {kind: VSphereMachineConfig, name: mgmt-md-0}\n", "",
			"spec.workerNodeGroupConfigurations[0].machineGroupRef: missing: the worker group md-0 names no machine config, which EKS-A requires of a vSphere cluster",
			"add spec.workerNodeGroupConfigurations[0].machineGroupRef: {kind: VSphereMachineConfig, name: …}", nil},
		{"no datacenter", "  datacenterRef: {kind: VSphereDatacenterConfig, name: mgmt}\n", "",
			"spec.datacenterRef: missing: the Cluster names no datacenter config, which EKS-A requires",
			"add spec.datacenterRef: {kind: VSphereDatacenterConfig, name: …}", nil},
		// The datacenter's kind is no provider's and no near miss: the
		// machine configs say which provider it is.
		{"a datacenter kind far from any", "{kind: VSphereDatacenterConfig, name: mgmt}", "{kind: Datacenter, name: mgmt}",
			"spec.datacenterRef.kind: Datacenter is not a datacenter config kind the console knows",
			"set spec.datacenterRef.kind: VSphereDatacenterConfig", []string{"did you mean"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(refsSpec, c.from) {
				t.Fatalf("the spec has no %q", c.from)
			}
			r := SpecFileChecks(parseRefsSpec(t, strings.Replace(refsSpec, c.from, c.to, 1)))[0]
			if r.Name != CheckProviderRefs || r.Status != model.CheckFail || !r.Blocking {
				t.Fatalf("%s %s (blocking %t) %q, want a blocking failure", r.Name, r.Status, r.Blocking, r.Message)
			}
			if !strings.Contains(r.Message, c.message) {
				t.Errorf("message %q\nwant it to contain %q", r.Message, c.message)
			}
			if !strings.Contains(r.Remediation, c.fix) {
				t.Errorf("fix %q\nwant it to contain %q", r.Remediation, c.fix)
			}
			for _, not := range c.notInMessages {
				if strings.Contains(r.Message, not) {
					t.Errorf("message %q names %q", r.Message, not)
				}
			}
		})
	}

	t.Run("every reference held by the file", func(t *testing.T) {
		r := SpecFileChecks(parseRefsSpec(t, refsSpec))[0]
		if r.Status != model.CheckPass || r.Message != "datacenterRef and 4 machineGroupRef(s) name vSphere objects that cluster.yaml holds" {
			t.Errorf("%s %q", r.Status, r.Message)
		}
	})
	// Offline, an object the file leaves out may be the cluster's: not
	// judged, and said so.
	t.Run("objects the file leaves out", func(t *testing.T) {
		yaml := strings.Replace(refsSpec, "name: mgmt-md-1}", "name: mgmt-md-2}", 1)
		yaml = strings.TrimSuffix(yaml, "---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: VSphereMachineConfig\nmetadata: {name: mgmt-md-1}\n")
		r := SpecFileChecks(parseRefsSpec(t, yaml))[0]
		if r.Status != model.CheckPass || !strings.Contains(r.Message, "1 of the objects are not in cluster.yaml: `plan --cluster` checks that the cluster holds them") {
			t.Errorf("%s %q", r.Status, r.Message)
		}
	})
	// A document the Cluster refers to nowhere (a copy renamed, its
	// reference left as it was): the apply writes it, EKS-A never reads it.
	t.Run("a document nothing refers to", func(t *testing.T) {
		yaml := refsSpec + "---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: VSphereMachineConfig\nmetadata: {name: mgmt-extra}\n"
		r := SpecFileChecks(parseRefsSpec(t, yaml))[0]
		if r.Status != model.CheckWarn || !strings.Contains(r.Message, "cluster.yaml holds VSphereMachineConfig mgmt-extra, which the Cluster does not refer to") ||
			!strings.Contains(r.Remediation, "or remove it from cluster.yaml") {
			t.Errorf("%s %q (%q)", r.Status, r.Message, r.Remediation)
		}
	})
	// EKS-A asks a Docker cluster for no machine config.
	t.Run("a Docker cluster", func(t *testing.T) {
		yaml := `apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: Cluster
metadata: {name: dev}
spec:
  kubernetesVersion: "1.31"
  datacenterRef: {kind: DockerDatacenterConfig, name: dev}
  workerNodeGroupConfigurations:
  - name: md-0
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: DockerDatacenterConfig
metadata: {name: dev}
`
		if r := SpecFileChecks(parseRefsSpec(t, yaml))[0]; r.Status != model.CheckPass {
			t.Errorf("%s %q", r.Status, r.Message)
		}
	})
}

// What the cluster holds decides, live: an object neither the file nor the
// cluster holds fails (with the nearest name either holds), one the cluster
// could not be asked about warns, and datacenterRef may not change.
func TestProviderRefsWithTheCluster(t *testing.T) {
	yaml := strings.Replace(refsSpec, "name: mgmt-md-1}", "name: mgmt-md-9}", 1)
	spec := parseRefsSpec(t, yaml)
	cur := spec.Cluster.DeepCopy()
	run := func(l *refLookup, cur *unstructured.Unstructured) model.CheckResult {
		return providerRefsResult(spec, cur, map[string]*refLookup{refKey("VSphereMachineConfig", "mgmt-md-9"): l})
	}
	r := run(&refLookup{missing: true, names: []string{"mgmt-md-1"}}, cur)
	const want = "spec.workerNodeGroupConfigurations[1].machineGroupRef.name: the worker group md-1 refers to VSphereMachineConfig mgmt-md-9, which neither the spec file nor the cluster holds (did you mean mgmt-md-1?)"
	if r.Status != model.CheckFail || !strings.Contains(r.Message, want) {
		t.Errorf("%s %q, want a failure %q", r.Status, r.Message, want)
	}
	if !strings.Contains(r.Remediation, "set spec.workerNodeGroupConfigurations[1].machineGroupRef.name: mgmt-md-1, or add the VSphereMachineConfig mgmt-md-9 to the spec file") {
		t.Errorf("fix %q", r.Remediation)
	}
	// Held by the cluster, the reference resolves; the file's mgmt-md-1 is
	// then referenced by nothing, and the apply would write it all the same.
	if r := run(&refLookup{found: true}, cur); r.Status != model.CheckWarn || r.Message != "cluster.yaml holds VSphereMachineConfig mgmt-md-1, which the Cluster does not refer to: the apply would create or change it, and EKS-A never reads it" {
		t.Errorf("held by the cluster: %s %q", r.Status, r.Message)
	}
	if r := run(&refLookup{why: "forbidden: no"}, cur); r.Status != model.CheckWarn || !strings.Contains(r.Message, "could not check that the cluster holds VSphereMachineConfig mgmt-md-9 (forbidden: no)") {
		t.Errorf("not asked: %s %q", r.Status, r.Message)
	}

	// The Cluster in the cluster names another datacenter config: EKS-A's
	// webhook refuses the change.
	setNested(cur, "mgmt-old", "spec", "datacenterRef", "name")
	r = run(&refLookup{found: true}, cur)
	if r.Status != model.CheckFail || !strings.Contains(r.Message, "spec.datacenterRef.name: VSphereDatacenterConfig mgmt, but Cluster mgmt in the cluster has VSphereDatacenterConfig mgmt-old, and EKS-A refuses to change datacenterRef (immutable)") ||
		!strings.Contains(r.Remediation, "set spec.datacenterRef back to kind: VSphereDatacenterConfig, name: mgmt-old") {
		t.Errorf("datacenterRef changed: %s %q, fix %q", r.Status, r.Message, r.Remediation)
	}
	// Left out, it is to be written back as the cluster has it.
	unstructured.RemoveNestedField(spec.Cluster.Object, "spec", "datacenterRef")
	r = run(&refLookup{found: true}, cur)
	if r.Status != model.CheckFail || !strings.Contains(r.Message, "spec.datacenterRef: missing") ||
		!strings.Contains(r.Remediation, "add spec.datacenterRef: {kind: VSphereDatacenterConfig, name: mgmt-old}, as Cluster mgmt in the cluster has it (it cannot change)") {
		t.Errorf("datacenterRef left out: %s %q, fix %q", r.Status, r.Message, r.Remediation)
	}
}

// Against a real API server: the reviewer's three references that passed the
// plan (a misspelt machine config kind, a misspelt datacenter config kind,
// a datacenter config that is nowhere) block it, and the target spec, or a
// spec that leaves its provider objects to the cluster, passes.
func TestProviderRefsLive(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	planWith := func(t *testing.T, docs []*unstructured.Unstructured, edit func(spec map[string]any)) *Plan {
		t.Helper()
		cluster := w.spec.Cluster.DeepCopy()
		edit(cluster.Object["spec"].(map[string]any))
		all := []*unstructured.Unstructured{cluster}
		for _, d := range docs {
			if d != w.spec.Cluster {
				all = append(all, d)
			}
		}
		p, err := w.planner.Plan(ctx, PlanRequest{Cluster: w.cfg.ClusterName, Namespace: w.ns, Spec: &SpecFile{Path: "edited.yaml", Docs: all, Cluster: cluster}})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	expect := func(t *testing.T, p *Plan, status model.CheckStatus, inMessage, inFix string) {
		t.Helper()
		r := result(p, CheckProviderRefs)
		if r.Status != status || !strings.Contains(r.Message, inMessage) || !strings.Contains(r.Remediation, inFix) {
			t.Errorf("%s %q (fix %q), want %s with %q (fix %q)", r.Status, r.Message, r.Remediation, status, inMessage, inFix)
		}
		if status == model.CheckFail && !p.Blocked() {
			t.Error("the plan is not blocked")
		}
	}
	worker := func(i int, key, v string) func(map[string]any) {
		return func(s map[string]any) {
			s["workerNodeGroupConfigurations"].([]any)[i].(map[string]any)["machineGroupRef"].(map[string]any)[key] = v
		}
	}
	datacenter := func(key, v string) func(map[string]any) {
		return func(s map[string]any) { s["datacenterRef"].(map[string]any)[key] = v }
	}

	t.Run("the target spec", func(t *testing.T) {
		expect(t, w.plan(t), model.CheckPass, "datacenterRef and 4 machineGroupRef(s) name vSphere objects that target.yaml holds", "")
	})
	t.Run("the Cluster alone: its provider objects are the cluster's", func(t *testing.T) {
		expect(t, planWith(t, nil, func(map[string]any) {}), model.CheckPass, "datacenterRef and 4 machineGroupRef(s) name vSphere objects that the cluster holds (edited.yaml leaves them out)", "")
	})
	t.Run("a misspelt machine config kind", func(t *testing.T) {
		p := planWith(t, w.spec.Docs, worker(1, "kind", "VSphereMachinConfig"))
		expect(t, p, model.CheckFail, "edited.yaml document 1 (Cluster mgmt): spec.workerNodeGroupConfigurations[1].machineGroupRef.kind: VSphereMachinConfig is not a machine config kind the console knows (did you mean VSphereMachineConfig?)",
			"set spec.workerNodeGroupConfigurations[1].machineGroupRef.kind: VSphereMachineConfig in edited.yaml")
	})
	t.Run("a misspelt datacenter config kind", func(t *testing.T) {
		expect(t, planWith(t, w.spec.Docs, datacenter("kind", "VSphereDatacenterConfigg")), model.CheckFail,
			"spec.datacenterRef.kind: VSphereDatacenterConfigg is not a datacenter config kind the console knows (did you mean VSphereDatacenterConfig?)",
			"set spec.datacenterRef.kind: VSphereDatacenterConfig")
	})
	t.Run("a datacenter config that is nowhere", func(t *testing.T) {
		expect(t, planWith(t, w.spec.Docs, datacenter("name", "mgmtt")), model.CheckFail,
			"spec.datacenterRef.name: VSphereDatacenterConfig mgmtt, but Cluster mgmt in the cluster has VSphereDatacenterConfig mgmt, and EKS-A refuses to change datacenterRef (immutable); nor does the spec file or the cluster hold a VSphereDatacenterConfig mgmtt",
			"set spec.datacenterRef back to kind: VSphereDatacenterConfig, name: mgmt")
	})
	t.Run("a machine config that is nowhere", func(t *testing.T) {
		p := planWith(t, w.spec.Docs, worker(0, "name", "mgmt-md-9"))
		expect(t, p, model.CheckFail,
			"spec.workerNodeGroupConfigurations[0].machineGroupRef.name: the worker group md-0 refers to VSphereMachineConfig mgmt-md-9, which neither the spec file nor the cluster holds (did you mean mgmt-md-0?)",
			"set spec.workerNodeGroupConfigurations[0].machineGroupRef.name: mgmt-md-0")
		// machine-templates reads the images of the configs that are there.
		if r := result(p, CheckMachineTemplates); r.Status != model.CheckPass {
			t.Errorf("machine-templates %s %q", r.Status, r.Message)
		}
	})
}
