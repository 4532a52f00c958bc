package upgrade

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
)

const etcdRule = "adding or removing external etcd during upgrade is not supported"

// planEdited plans a copy of the world's target spec, edited, named
// edited.yaml, and returns its immutable-fields result.
func planEdited(t *testing.T, w *world, edit func(spec map[string]any)) model.CheckResult {
	t.Helper()
	spec := w.spec.Cluster.DeepCopy()
	edit(spec.Object["spec"].(map[string]any))
	sf := &SpecFile{Path: "edited.yaml", Docs: []*unstructured.Unstructured{spec}, Cluster: spec}
	p, err := w.planner.Plan(context.Background(), PlanRequest{Cluster: w.cfg.ClusterName, Namespace: w.ns, Spec: sf})
	if err != nil {
		t.Fatal(err)
	}
	r := result(p, CheckImmutableFields)
	if r.Failed() && !p.Blocked() {
		t.Errorf("a failed %s does not block the plan", CheckImmutableFields)
	}
	return r
}

// ownAlone gives the console's field manager every field eks-a-cli owned
// on the world's Cluster, as a forced apply of changed values does one
// field at a time.
func ownAlone(t *testing.T, w *world) {
	t.Helper()
	ctx := context.Background()
	clusters := w.client.Dynamic.Resource(GVREKSACluster).Namespace(w.ns)
	c, err := clusters.Get(ctx, w.cfg.ClusterName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mf := c.GetManagedFields()
	for i := range mf {
		if mf[i].Manager == eksaCLIManager {
			mf[i].Manager = ManagerName
		}
	}
	c.SetManagedFields(mf)
	if _, err := clusters.Update(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Every immutable field, not the etcd topology alone, is judged on what
// the apply leaves: a file that leaves managementCluster or
// clusterNetwork.pods out keeps the cluster's while eks-a-cli co-owns them,
// and where the console's manager alone owns them server-side apply removes
// them. The plan skipped every field the file left out and passed.
func TestImmutableFieldsJudgedOnWhatTheApplyLeaves(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	leaveOut := func(s map[string]any) {
		delete(s, "managementCluster")
		delete(s["clusterNetwork"].(map[string]any), "pods")
	}
	if r := planEdited(t, w, leaveOut); r.Status != model.CheckPass {
		t.Fatalf("left out while eks-a-cli owns them: %+v", r)
	}
	ownAlone(t, w)
	r := planEdited(t, w, leaveOut)
	for _, want := range []string{"spec.managementCluster.name mgmt → (none)", "spec.clusterNetwork.pods map[cidrBlocks:[192.168.0.0/16]] → (none)",
		"edited.yaml leaves it out, and no field manager but " + ManagerName + " owns it on the Cluster"} {
		if r.Status != model.CheckFail || !strings.Contains(r.Message, want) {
			t.Errorf("left out, the console's alone: %+v\nwant a failure saying %q", r, want)
		}
	}
	if !strings.Contains(r.Remediation, "keep these fields in edited.yaml as the cluster has them") {
		t.Errorf("fix %q", r.Remediation)
	}
	if r := planEdited(t, w, func(map[string]any) {}); r.Status != model.CheckPass {
		t.Errorf("the target spec, its fields kept: %+v", r)
	}
}

// A file that leaves externalEtcdConfiguration out keeps the cluster's
// external etcd while eks-a-cli co-owns it; where the console's field
// manager alone owns it (an earlier apply took it over), server-side apply
// removes it. The plan judged the file alone and passed, and apply wrote
// the Cluster over to stacked etcd: only the dry run's diff showed it.
func TestEtcdTopologyJudgedOnWhatTheApplyLeaves(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	leaveOut := func(s map[string]any) { delete(s, "externalEtcdConfiguration") }
	if r := planEdited(t, w, leaveOut); r.Status != model.CheckPass {
		t.Fatalf("left out while eks-a-cli owns it: %+v", r)
	}

	ownAlone(t, w)

	r := planEdited(t, w, leaveOut)
	for _, want := range []string{"spec.externalEtcdConfiguration (set) → (none)", "edited.yaml leaves it out"} {
		if r.Status != model.CheckFail || !strings.Contains(r.Message, want) {
			t.Errorf("left out, the console's alone: %+v\nwant a failure saying %q", r, want)
		}
	}
	for _, want := range []string{"add it back to edited.yaml", "`externalEtcdConfiguration: {count: 3, machineGroupRef: {kind: VSphereMachineConfig, name: mgmt-etcd}}`", etcdRule} {
		if !strings.Contains(r.Remediation, want) {
			t.Errorf("fix %q lacks %q", r.Remediation, want)
		}
	}
	if r := planEdited(t, w, func(map[string]any) {}); r.Status != model.CheckPass {
		t.Errorf("the target spec, its etcd kept: %+v", r)
	}

	t.Run("added to stacked etcd", func(t *testing.T) {
		w := newWorld(t, scenario.InPlace)
		r := planEdited(t, w, func(s map[string]any) {
			s["externalEtcdConfiguration"] = map[string]any{"count": int64(3), "machineGroupRef": map[string]any{"kind": "VSphereMachineConfig", "name": "mgmt-cp"}}
		})
		if r.Status != model.CheckFail || !strings.Contains(r.Message, "spec.externalEtcdConfiguration (none) → (set)") ||
			!strings.Contains(r.Remediation, "remove it from edited.yaml") || !strings.Contains(r.Remediation, etcdRule) {
			t.Errorf("%+v", r)
		}
	})
}

// The etcd topology is the dry run's result's where there is one, and the
// file's without it (the Cluster refused, the API server not asked), where
// a field left out keeps the cluster's.
func TestEtcdTopologyJudgement(t *testing.T) {
	etcd := map[string]any{"count": int64(3), "machineGroupRef": map[string]any{"kind": "VSphereMachineConfig", "name": "mgmt-etcd"}}
	obj := func(spec map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
		u.SetName("mgmt")
		u.SetNamespace("default")
		return u
	}
	in := func(live, file, result map[string]any) *Inputs {
		t := &Target{Spec: &SpecFile{Path: "cluster.yaml", Cluster: obj(file)}}
		if result != nil {
			t.SpecDryRun = &DryRunResult{clusterLive: obj(live), clusterResult: obj(result)}
		}
		return &Inputs{Current: &Current{Cluster: obj(live)}, Target: t}
	}
	external := map[string]any{"externalEtcdConfiguration": etcd}
	stacked := map[string]any{}
	for _, tc := range []struct {
		name               string
		live, file, result map[string]any
		want               string
	}{
		{"left out, no dry run", external, stacked, nil, ""},
		{"left out, kept by the dry run", external, stacked, external, ""},
		{"left out, removed by the dry run", external, stacked, stacked, "(set) → (none)"},
		{"added, no dry run", stacked, external, nil, "(none) → (set)"},
		{"added, by the dry run", stacked, external, external, "(none) → (set)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := checkImmutable(context.Background(), in(tc.live, tc.file, tc.result))
			switch {
			case tc.want == "" && r.Status != model.CheckPass:
				t.Errorf("%+v", r)
			case tc.want != "" && (r.Status != model.CheckFail || !strings.Contains(r.Message, tc.want) || !strings.Contains(r.Remediation, etcdRule)):
				t.Errorf("%+v, want a failure saying %q", r, tc.want)
			}
		})
	}
}
