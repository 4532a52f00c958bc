package upgrade

import (
	"context"
	"errors"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/upgrade-console/upgrade-console/config/crd"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/demo/seed"
	"github.com/upgrade-console/upgrade-console/model"
)

// specCluster is a Cluster as an operator writes it, with a field to edit.
const specCluster = `apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: Cluster
metadata:
  name: mgmt
spec:
  kubernetesVersion: "1.31"
  eksaVersion: v0.21.2
  controlPlaneConfiguration:
    count: 3
    endpoint:
      host: 10.20.0.10
    machineGroupRef:
      kind: VSphereMachineConfig
      name: mgmt-cp
  workerNodeGroupConfigurations:
  - name: md-0
    count: 3
    machineGroupRef:
      kind: VSphereMachineConfig
      name: mgmt-md-0
`

const specMachines = `apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: VSphereMachineConfig
metadata:
  name: mgmt-cp
spec:
  datastore: /dc/datastore/ds
  folder: /dc/vm/mgmt
  memoryMiB: 8192
  numCPUs: 4
  osFamily: ubuntu
  resourcePool: /dc/host/c/Resources
  template: /dc/vm/Templates/ubuntu-2204-kube-1.31
`

// inputErrors are the InputErrors of err, one per problem reported.
func inputErrors(t *testing.T, err error) []*model.InputError {
	t.Helper()
	var out []*model.InputError
	var walk func(error)
	walk = func(e error) {
		var ie *model.InputError
		if errors.As(e, &ie) && e == error(ie) {
			out = append(out, ie)
			return
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
		}
	}
	walk(err)
	if len(out) == 0 {
		t.Fatalf("got %v, want an InputError", err)
	}
	return out
}

func TestSpecSchemaProblems(t *testing.T) {
	for _, c := range []struct {
		name, from, to      string
		field, problem, fix string
	}{
		// A misspelt field is named, not the field it was meant to be.
		{"typo", `  kubernetesVersion: "1.31"`, `  kubernetesVersio: "1.31"`,
			"document 1 (Cluster mgmt): spec.kubernetesVersio", "unknown field", "did you mean kubernetesVersion?"},
		{"case", `  kubernetesVersion: "1.31"`, "  kubernetesVersion: \"1.31\"\n  EksaVersion: v0.21.2",
			"document 1 (Cluster mgmt): spec.EksaVersion", "unknown field", "did you mean eksaVersion?"},
		{"typo in a list item", "      name: mgmt-md-0", "      nmae: mgmt-md-0",
			"document 1 (Cluster mgmt): spec.workerNodeGroupConfigurations[0].machineGroupRef.nmae", "unknown field", "did you mean name?"},
		{"nothing close", "    count: 3\n    endpoint:", "    count: 3\n    frobnicate: true\n    endpoint:",
			"document 1 (Cluster mgmt): spec.controlPlaneConfiguration.frobnicate", "unknown field", "remove it, or name one of the fields that can be here: apiServerExtraArgs, auditPolicyContent"},
		{"top level", "spec:\n", "sepc: {}\nspec:\n",
			"document 1 (Cluster mgmt): sepc", "unknown field", "did you mean spec?"},
		{"metadata typo", "  name: mgmt\n", "  name: mgmt\n  namespce: eksa-system\n",
			"document 1 (Cluster mgmt): metadata.namespce", "unknown field", "did you mean namespace?"},
		// Values of the wrong type are bad input, found without a cluster.
		{"string for an integer", "    count: 3\n    endpoint:", "    count: three\n    endpoint:",
			"document 1 (Cluster mgmt): spec.controlPlaneConfiguration.count", `must be an integer, got "three" (a string)`, "e.g. count: 3"},
		{"quoted integer", "    count: 3\n    endpoint:", "    count: \"3\"\n    endpoint:",
			"spec.controlPlaneConfiguration.count", `must be an integer, got "3" (a string)`, "without quotes"},
		{"fraction for an integer", "    count: 3\n    endpoint:", "    count: 2.5\n    endpoint:",
			"spec.controlPlaneConfiguration.count", "must be an integer, got 2.5 (a number)", "e.g. count: 3"},
		{"mapping for a list", "  workerNodeGroupConfigurations:\n  - name: md-0\n    count: 3\n    machineGroupRef:\n      kind: VSphereMachineConfig\n      name: mgmt-md-0\n",
			"  workerNodeGroupConfigurations:\n    name: md-0\n    count: 3\n",
			"document 1 (Cluster mgmt): spec.workerNodeGroupConfigurations", "must be a list, got a mapping", `start each item with "- ", e.g. workerNodeGroupConfigurations: then "- name: …"`},
		{"list for a mapping", "    endpoint:\n      host: 10.20.0.10", "    endpoint:\n    - host: 10.20.0.10",
			"spec.controlPlaneConfiguration.endpoint", "must be a mapping of fields, got a list", `remove the "- " in front of its fields`},
		{"scalar for a mapping", "    endpoint:\n      host: 10.20.0.10", "    endpoint: 10.20.0.10",
			"spec.controlPlaneConfiguration.endpoint", `must be a mapping of fields, got "10.20.0.10" (a string)`, "(its fields: host)"},
		{"unquoted kubernetesVersion", `  kubernetesVersion: "1.31"`, `  kubernetesVersion: 1.30`,
			"document 1 (Cluster mgmt): spec.kubernetesVersion", "must be a string, got 1.3 (a number)", `quote the value, e.g. kubernetesVersion: "1.31" (unquoted, YAML reads 1.30 as the number 1.3)`},
		{"label value", "  name: mgmt\n", "  name: mgmt\n  labels:\n    tier: 1\n",
			`metadata.labels.tier`, "must be a string, got 1 (a number)", `quote the value, e.g. tier: "1"`},
		{"list item", "  workerNodeGroupConfigurations:\n", "  clusterNetwork:\n    pods:\n      cidrBlocks: [10]\n  workerNodeGroupConfigurations:\n",
			"spec.clusterNetwork.pods.cidrBlocks[0]", "must be a string, got 10 (a number)", `quote the value, e.g. - "10"`},
		{"a provider document", "  numCPUs: 4", "  numCPUs: four",
			"document 2 (VSphereMachineConfig mgmt-cp): spec.numCPUs", `must be an integer, got "four" (a string)`, "numCPUs: 3"},
		// A key with nothing after it: the API server refuses a null list
		// or scalar, and the plan said so only as a failed dry run (exit 3).
		{"null list", "  workerNodeGroupConfigurations:\n  - name: md-0\n    count: 3\n    machineGroupRef:\n      kind: VSphereMachineConfig\n      name: mgmt-md-0\n",
			"  workerNodeGroupConfigurations:\n",
			"document 1 (Cluster mgmt): spec.workerNodeGroupConfigurations", "is empty (null), and must be a list", `give it its items (workerNodeGroupConfigurations: […], or one "- " line each below it)`},
		{"null integer", "    count: 3\n    endpoint:", "    count:\n    endpoint:",
			"spec.controlPlaneConfiguration.count", "is empty (null), and must be an integer", "give it a value (count: 3), or remove the line"},
		// A misspelt kind: it read as "no EKS-A Cluster in the file".
		{"kind typo", "kind: Cluster\n", "kind: Clustr\n",
			"document 1 (Clustr mgmt): kind", "Clustr is not an EKS Anywhere kind (did you mean Cluster?)", "set kind: Cluster"},
		// A known kind at a version nobody serves: the document went
		// unchecked offline, and live the dry run's refusal (exit 3) named
		// no file or field.
		{"version typo", "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\n", "apiVersion: anywhere.eks.amazonaws.com/v1beta1\nkind: Cluster\n",
			"document 1 (Cluster mgmt): apiVersion", "anywhere.eks.amazonaws.com/v1beta1 is not a version of Cluster that EKS Anywhere serves (anywhere.eks.amazonaws.com/v1alpha1)", "set apiVersion: anywhere.eks.amazonaws.com/v1alpha1"},
		{"no version", "apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: VSphereMachineConfig\n", "apiVersion: anywhere.eks.amazonaws.com\nkind: VSphereMachineConfig\n",
			"document 2 (VSphereMachineConfig mgmt-cp): apiVersion", "anywhere.eks.amazonaws.com is not a version of VSphereMachineConfig", "set apiVersion: anywhere.eks.amazonaws.com/v1alpha1"},
		{"list for a string", "  numCPUs: 4", "  numCPUs: 4\n  cloneMode: [fullClone]",
			"document 2 (VSphereMachineConfig mgmt-cp): spec.cloneMode", "must be a string, got a list", "give a single value"},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := specCluster + "---\n" + specMachines
			if !strings.Contains(data, c.from) {
				t.Fatalf("%q is not in the spec", c.from)
			}
			data = strings.Replace(data, c.from, c.to, 1)
			_, err := ParseSpec("c.yaml", []byte(data), "default")
			ies := inputErrors(t, err)
			ie := ies[0]
			if len(ies) != 1 || ie.Source != "c.yaml" || !strings.HasSuffix(ie.Field, c.field) ||
				!strings.Contains(ie.Problem, c.problem) || !strings.Contains(ie.Fix, c.fix) {
				t.Errorf("got %v\nwant field %q, problem %q, fix %q", err, c.field, c.problem, c.fix)
			}
		})
	}
}

// Every problem of a document is reported at once, each an InputError.
func TestSpecSchemaReportsEveryProblem(t *testing.T) {
	data := strings.NewReplacer(`kubernetesVersion: "1.31"`, `kubernetesVersio: "1.31"`,
		"    count: 3\n    endpoint:", "    count: three\n    endpoint:").Replace(specCluster)
	_, err := ParseSpec("c.yaml", []byte(data), "default")
	ies := inputErrors(t, err)
	var fields []string
	for _, ie := range ies {
		fields = append(fields, ie.Field)
	}
	want := []string{"document 1 (Cluster mgmt): spec.controlPlaneConfiguration.count", "document 1 (Cluster mgmt): spec.kubernetesVersio"}
	if strings.Join(fields, "\n") != strings.Join(want, "\n") {
		t.Errorf("fields %q, want %q", fields, want)
	}
	if !strings.Contains(err.Error(), "\nc.yaml: document 1") {
		t.Errorf("not one problem per line:\n%v", err)
	}
}

// What the schema leaves open, and what the console cannot judge, passes.
func TestSpecSchemaAccepts(t *testing.T) {
	for _, c := range []struct{ name, from, to string }{
		{"standard metadata", "  name: mgmt\n", "  name: mgmt\n  namespace: default\n  labels: {a: b}\n  annotations: {anywhere.eks.amazonaws.com/paused: \"false\"}\n" +
			"  finalizers: [clusters.anywhere.eks.amazonaws.com/finalizer]\n  ownerReferences: [{apiVersion: v1, kind: X, name: y, uid: z}]\n" +
			"  uid: 1d6b\n  generation: 3\n  resourceVersion: \"42\"\n  creationTimestamp: null\n  managedFields: []\n"},
		{"fields the schema keeps whatever they hold", "  workerNodeGroupConfigurations:\n",
			"  clusterNetwork:\n    cniConfig:\n      cilium:\n        helmValues: {anything: [1, 2]}\n        notInTheSchema: true\n" +
				"  machineHealthCheck: {whatever: 5m}\n  packages: {controller: {disable: true}}\n  workerNodeGroupConfigurations:\n"},
		{"a map of any keys", "      host: 10.20.0.10\n", "      host: 10.20.0.10\n    apiServerExtraArgs:\n      oidc-issuer-url: https://x\n"},
		// Server-side apply drops a null mapping; metadata reads a null
		// as the empty value.
		{"a null mapping", "    endpoint:\n      host: 10.20.0.10\n", "    endpoint:\n      host: 10.20.0.10\n    upgradeRolloutStrategy:\n"},
		{"null metadata", "  name: mgmt\n", "  name: mgmt\n  namespace:\n  labels:\n    tier:\n  finalizers:\n"},
		{"status, which the spec drops", "spec:\n", "status: {anything: 1}\nspec:\n"},
		{"a kind the console has no CRD for", "spec:\n", "spec:\n  gitOpsRef: {kind: FluxConfig, name: f}\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := specCluster + "---\n" + specMachines
			if !strings.Contains(data, c.from) {
				t.Fatalf("%q is not in the spec", c.from)
			}
			data = strings.Replace(data, c.from, c.to, 1)
			if c.name == "a kind the console has no CRD for" {
				data += "---\napiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: FluxConfig\nmetadata: {name: f}\nspec: {branch: main, anyField: [1]}\n"
			}
			if _, err := ParseSpec("c.yaml", []byte(data), "default"); err != nil {
				t.Error(err)
			}
		})
	}
}

// An object of another group is refused as such, whatever its fields.
func TestSpecSchemaForeignObject(t *testing.T) {
	data := specCluster + "---\napiVersion: etcdcluster.cluster.x-k8s.io/v1beta1\nkind: EtcdadmCluster\nmetadata: {name: e}\nspec: {replicaz: 3}\n"
	_, err := ParseSpec("c.yaml", []byte(data), "default")
	if err == nil || !strings.Contains(err.Error(), "not an EKS Anywhere object") {
		t.Errorf("got %v", err)
	}
}

// The spec files of the demo, and a realistic object of every kind the
// console has a CRD for (status included), are what EKS-A writes: nothing in
// them may be reported.
func TestSpecSchemaAcceptsRealObjects(t *testing.T) {
	for _, name := range scenario.Names() {
		cfg, err := scenario.For(scenario.Name(name), scenario.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range []func(scenario.Config) ([]byte, error){seed.CurrentSpec, seed.TargetSpec} {
			data, err := spec(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ParseSpec(name+".yaml", data, "default"); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
	objs, err := crd.SampleObjects()
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := embeddedSchemas()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		s := schemas.byKind[o.GroupVersionKind()]
		if s == nil {
			t.Errorf("no schema for the sample %s", o.GroupVersionKind())
			continue
		}
		w := &schemaWalker{kind: o.GetKind()}
		w.value(place{}, o.Object, s)
		for _, p := range w.problems {
			t.Errorf("sample %s %s: %s: %s", o.GetKind(), o.GetName(), p.path, p.problem)
		}
	}
}

// The kinds of schema no embedded CRD has yet: int-or-string, number,
// embedded resources.
func TestSchemaWalkerTypes(t *testing.T) {
	props := map[string]apiextensionsv1.JSONSchemaProps{
		"surge":    {XIntOrString: true},
		"ratio":    {Type: "number"},
		"enabled":  {Type: "boolean"},
		"template": {Type: "object", XEmbeddedResource: true, Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object"}}},
	}
	s := &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props}
	for _, c := range []struct {
		obj  map[string]any
		want string // "" when it passes
	}{
		{map[string]any{"surge": float64(1)}, ""},
		{map[string]any{"surge": "25%"}, ""},
		{map[string]any{"surge": 1.5}, "surge: must be a whole number or a string, got 1.5 (a number)"},
		{map[string]any{"surge": true}, "surge: must be a whole number or a string"},
		{map[string]any{"ratio": float64(2)}, ""},
		{map[string]any{"ratio": int64(2)}, ""},
		{map[string]any{"ratio": 0.5}, ""},
		{map[string]any{"ratio": "0.5"}, `ratio: must be a number, got "0.5" (a string)`},
		{map[string]any{"enabled": "true"}, `enabled: must be true or false, got "true" (a string)`},
		{map[string]any{"template": map[string]any{"apiVersion": "v1", "kind": "X", "metadata": map[string]any{}, "spec": map[string]any{}}}, ""},
		{map[string]any{"template": map[string]any{"spek": map[string]any{}}}, "template.spek: unknown field"},
	} {
		w := &schemaWalker{kind: "Test"}
		w.value(place{}, c.obj, s)
		var got []string
		for _, p := range w.problems {
			got = append(got, p.path+": "+p.problem)
		}
		switch {
		case c.want == "" && len(got) > 0:
			t.Errorf("%v: %q", c.obj, got)
		case c.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], c.want)):
			t.Errorf("%v: %q, want %q", c.obj, got, c.want)
		}
	}
}

func TestClosest(t *testing.T) {
	known := []string{"count", "endpoint", "kubernetesVersion", "machineGroupRef", "name", "taints"}
	for k, want := range map[string]string{
		"kubernetesVersio":   "kubernetesVersion",
		"kubernetesVresion":  "kubernetesVersion", // two letters swapped
		"KubernetesVersion":  "kubernetesVersion",
		"machinegroupref":    "machineGroupRef",
		"machineGroupRefs":   "machineGroupRef",
		"nmae":               "name",
		"cnt":                "",
		"endpont":            "endpoint",
		"kubernetes":         "",
		"somethingElseEntir": "",
	} {
		if got := closest(k, known); got != want {
			t.Errorf("closest(%q) = %q, want %q", k, got, want)
		}
	}
}

func TestParseSpecYAML(t *testing.T) {
	for _, c := range []struct {
		name, data          string
		field, problem, fix string
	}{
		{"prose", "This is not a cluster spec.\n",
			"document 1", `not a Kubernetes object (a mapping with apiVersion, kind, metadata and spec): YAML reads the document as "This is not a cluster spec." (a string)`, "give the cluster spec file"},
		{"prose with a colon", "Plan: bump to 1.31, then watch.\n",
			"document 1", "not a Kubernetes object: it has neither apiVersion nor kind", "if not, give the cluster spec file"},
		{"a list", "- a\n- b\n", "document 1", "YAML reads the document as a list", "give the cluster spec file"},
		{"a syntax error", "kind: [", "document 1", "not valid YAML: line 1: did not find expected node content",
			"correct the YAML at line 1; if this is not the cluster spec, give the cluster spec file"},
		{"a shell script", "#!/bin/sh\nset -e\nkubectl apply -f cluster.yaml\necho \"done: $?\"\n", "document 1",
			"not valid YAML: line 4: mapping values are not allowed in this context", `correct the YAML at line 4 (quote a value that holds ": "`},
		{"binary", "\x00\x01\x7fELF", "document 1", "not valid YAML: control characters are not allowed", "remove the control characters"},
		{"binary after a document", specCluster + "---\n\x00\x01\x7fELF", "document 2", "not valid YAML: control characters are not allowed (in the document that starts at line 22)", "remove the control characters"},
		// The line is the file's, not the document's.
		{"an error in the second document", specCluster + "---\n# machines\napiVersion: v1\nkind: X\nmetadata:\n\tname: x\n",
			"document 2", "not valid YAML: line 26: found character that cannot start any token", "correct the YAML at line 26 (indent with spaces: YAML does not allow tabs)"},
		{"a key given twice", specCluster + "---\n" + strings.Replace(specMachines, "  numCPUs: 4\n", "  numCPUs: 4\n  numCPUs: 8\n", 1),
			"document 2 (VSphereMachineConfig mgmt-cp)", `a key given twice in one mapping: line 31: key "numCPUs" already set in map`, "keep one of the two"},
		{"a bad separator", specCluster + "--- spec: {}\n", "line 21", `a document separator with "spec: {}" after it`, "put --- on a line of its own"},
		{"bad JSON", "{\"apiVersion\": \"anywhere.eks.amazonaws.com/v1alpha1\",\n \"kind\" \"Cluster\"}", "document 1", "not valid JSON", "correct the JSON at line 2"},
		// A List with no items went on as an object of kind List, refused
		// for its missing name with "`kubectl get list -A` lists them".
		{"a List with no items", "apiVersion: v1\nkind: List\n", "document 1 (List): items", "a List with no items: nothing to apply", "as the List's items, or one per document"},
		{"a List whose items are a string", "apiVersion: v1\nkind: List\nitems: cluster.yaml\n", "document 1 (List): items", `a List whose items YAML reads as "cluster.yaml" (a string)`, "as the List's items"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseSpec("c.yaml", []byte(c.data), "default")
			ies := inputErrors(t, err)
			ie := ies[0]
			if len(ies) != 1 || ie.Source != "c.yaml" || ie.Field != c.field || !strings.Contains(ie.Problem, c.problem) || !strings.Contains(ie.Fix, c.fix) {
				t.Errorf("got %v\nwant field %q, problem %q, fix %q", err, c.field, c.problem, c.fix)
			}
		})
	}
}

func TestParseSpecYAMLAccepts(t *testing.T) {
	for _, c := range []struct{ name, data string }{
		// A key that overrides one merged from an anchor is no duplicate.
		{"merge keys", strings.Replace(specCluster, "  workerNodeGroupConfigurations:\n  - name: md-0\n    count: 3\n",
			"  workerNodeGroupConfigurations:\n  - &md {name: md-0, count: 3}\n  - <<: *md\n    name: md-1\n    count: 3\n", 1)},
		{"comments and empty documents", "# header\n---\n---\n" + specCluster + "--- # machines\n" + specMachines + "---\n"},
		{"JSON", `{"apiVersion": "anywhere.eks.amazonaws.com/v1alpha1", "kind": "Cluster", "metadata": {"name": "mgmt"}, "spec": {"kubernetesVersion": "1.31"}}`},
		{"CRLF", strings.ReplaceAll(specCluster+"---\n"+specMachines, "\n", "\r\n")},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := ParseSpec("c.yaml", []byte(c.data), "default")
			if err != nil {
				t.Fatal(err)
			}
			if s.Cluster == nil || s.KubernetesVersion() != "1.31" {
				t.Errorf("cluster %v", s.Cluster)
			}
		})
	}
}

// An EKS-A newer than the console has fields the console's copy of its CRD
// lacks: checked against the cluster's own CRD, a spec that uses them is
// accepted; checked against the copy (offline, or the CRD unreadable), the
// refusal says which schema refused it. A CRD the cluster does not let the
// console read leaves the copy.
func TestSpecSchemaPrefersTheClustersCRD(t *testing.T) {
	own, err := crd.Objects()
	if err != nil {
		t.Fatal(err)
	}
	var newer *apiextensionsv1.CustomResourceDefinition
	for _, c := range own {
		if c.Spec.Names.Kind == "Cluster" && c.Spec.Group == GVREKSACluster.Group {
			newer = c.DeepCopy()
		}
	}
	if newer == nil {
		t.Fatal("no Cluster CRD among the console's copies")
	}
	spec := newer.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	spec.Properties["nodeRepairPolicy"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
	newer.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(newer)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion("apiextensions.k8s.io/v1")
	u.SetKind("CustomResourceDefinition")
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{gvrCRD: "CustomResourceDefinitionList"}, u)
	schemas, err := ClusterSchemas(context.Background(), &Client{Dynamic: dyn})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(dyn.Actions()); n != 0 {
		t.Errorf("%d requests before any spec was checked", n)
	}
	data := strings.Replace(specCluster, `  eksaVersion: v0.21.2`, "  eksaVersion: v0.21.2\n  nodeRepairPolicy: abc", 1)
	if _, err := ParseSpecWith("spec.yaml", []byte(data), "default", schemas); err != nil {
		t.Errorf("against the cluster's CRD: %v", err)
	}
	// Only the CRD of the kind the spec holds is read, once.
	if _, err := ParseSpecWith("spec.yaml", []byte(data), "default", schemas); err != nil {
		t.Fatal(err)
	}
	if a := dyn.Actions(); len(a) != 1 || a[0].(clienttesting.GetAction).GetName() != "clusters.anywhere.eks.amazonaws.com" {
		t.Errorf("requests %v, want the Cluster CRD read once", a)
	}
	_, err = ParseSpec("spec.yaml", []byte(data), "default")
	var in *model.InputError
	if !errors.As(err, &in) || !strings.Contains(in.Field, "spec.nodeRepairPolicy") || !strings.Contains(in.Fix, "the console's copy of the Cluster CRD") {
		t.Errorf("against the console's copy: %v", err)
	}
	// The machine config's CRD was not in the cluster: its copy still
	// checks it.
	bad := strings.Replace(specMachines, "kind: VSphereMachineConfig", "kind: VSphereMachineConfig\nspek: {}", 1)
	if _, err := ParseSpecWith("spec.yaml", []byte(specCluster+"---\n"+bad), "default", schemas); err == nil || !strings.Contains(err.Error(), "spek") {
		t.Errorf("a kind the cluster's CRD was not read of: %v", err)
	}
}

// A live plan whose console may not read the cluster's CRDs checks with its
// copies, but a field they do not know and no known field is near is left to
// the API server's dry run (it may be a newer EKS-A's); a near miss is still
// a typo, and the refusal says why the cluster's CRD was not used.
func TestSpecSchemaForbiddenCRDs(t *testing.T) {
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{gvrCRD: "CustomResourceDefinitionList"})
	dyn.PrependReactor("get", "customresourcedefinitions", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}, "x", errors.New("no"))
	})
	schemas, err := ClusterSchemas(context.Background(), &Client{Dynamic: dyn})
	if err != nil {
		t.Fatal(err)
	}
	newer := strings.Replace(specCluster, `  eksaVersion: v0.21.2`, "  eksaVersion: v0.21.2\n  nodeRepairPolicy: abc", 1)
	if _, err := ParseSpecWith("spec.yaml", []byte(newer), "default", schemas); err != nil {
		t.Errorf("a field the copy lacks, no known field near: %v", err)
	}
	typo := strings.Replace(specCluster, "kubernetesVersion:", "kubernetesVersio:", 1)
	_, err = ParseSpecWith("spec.yaml", []byte(typo), "default", schemas)
	var in *model.InputError
	if !errors.As(err, &in) || !strings.Contains(in.Fix, "did you mean kubernetesVersion?") || !strings.Contains(in.Fix, "may not read CustomResourceDefinition clusters.anywhere.eks.amazonaws.com (forbidden)") {
		t.Errorf("a near miss: %v", err)
	}
	// Offline, the copy is all there is: a field it lacks is refused.
	if _, err := ParseSpec("spec.yaml", []byte(newer), "default"); err == nil {
		t.Error("offline, a field the copy lacks passed")
	}
}

// The same object twice in a spec would be applied twice, the last copy
// winning; a key given twice in JSON would be settled for the last without a
// word; a List (kubectl get -o yaml of several objects) is its items.
func TestParseSpecDuplicatesAndLists(t *testing.T) {
	_, err := ParseSpec("spec.yaml", []byte(specCluster+"---\n"+specMachines+"---\n"+strings.Replace(specMachines, "numCPUs: 4", "numCPUs: 64", 1)), "default")
	var in *model.InputError
	if !errors.As(err, &in) || in.Field != "document 3" || !strings.Contains(in.Problem, "VSphereMachineConfig default/mgmt-cp again (first in document 2)") {
		t.Errorf("the same object twice: %v", err)
	}
	js := `{"apiVersion": "anywhere.eks.amazonaws.com/v1alpha1", "kind": "Cluster", "metadata": {"name": "mgmt"},
 "spec": {"kubernetesVersion": "1.31", "eksaVersion": "v0.21.2", "eksaVersion": "v0.20.9"}}`
	if _, err := ParseSpec("spec.json", []byte(js), "default"); !errors.As(err, &in) || !strings.Contains(in.Problem, "a key given twice") || !strings.Contains(in.Problem, "eksaVersion") {
		t.Errorf("a JSON key given twice: %v", err)
	}
	list := "apiVersion: v1\nkind: List\nitems:\n" + indentItem(specCluster) + indentItem(specMachines)
	spec, err := ParseSpec("spec.yaml", []byte(list), "default")
	if err != nil || len(spec.Docs) != 2 || spec.Cluster == nil {
		t.Errorf("a List: %v", err)
	}
}

// indentItem makes a YAML document an item of a list under items:.
func indentItem(doc string) string {
	lines := strings.Split(strings.TrimSuffix(doc, "\n"), "\n")
	for i, l := range lines {
		if i == 0 {
			lines[i] = "- " + l
		} else {
			lines[i] = "  " + l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// A document without metadata.name says how to find the name.
func TestSpecMissingNameHasAFix(t *testing.T) {
	data := strings.Replace(specCluster, "  name: mgmt\n", "", 1)
	_, err := ParseSpec("c.yaml", []byte(data), "default")
	ies := inputErrors(t, err)
	if !strings.HasSuffix(ies[0].Field, "(Cluster): metadata.name") || ies[0].Fix != "name the object as the cluster names it (`kubectl get cluster.anywhere.eks.amazonaws.com -A` lists them)" {
		t.Errorf("missing name: %+v", ies[0])
	}
}
