package upgrade

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/demo/release"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/demo/seed"
)

// The seed applies the Cluster as eks-a-cli does (server-side, manager
// "eks-a-cli"), so the fields the upgrade changes belong to another manager.
func TestDryRunShowsChangesAndConflicts(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	clusters := w.client.Dynamic.Resource(GVREKSACluster).Namespace(w.ns)
	before, err := clusters.Get(ctx, "mgmt", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A GitOps controller also owns a field the spec sets: the control
	// plane count, edited with an update (not an apply).
	gitops := before.DeepCopy()
	if err := unstructured.SetNestedField(gitops.Object, int64(5), "spec", "controlPlaneConfiguration", "count"); err != nil {
		t.Fatal(err)
	}
	if before, err = clusters.Update(ctx, gitops, metav1.UpdateOptions{FieldManager: "flux"}); err != nil {
		t.Fatal(err)
	}

	a := &Applier{Client: w.client, Cluster: "mgmt"}
	res, err := a.DryRun(ctx, w.spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Objects) != 1 || res.Objects[0].Object != "Cluster "+w.ns+"/mgmt" || res.Objects[0].Error != "" {
		t.Fatalf("objects %+v", res.Objects)
	}
	fields := map[string]FieldChange{}
	for _, f := range res.Objects[0].Fields {
		fields[f.Path] = f
	}
	for path, want := range map[string][2]string{
		"spec.kubernetesVersion":               {"1.30", "1.31"},
		"spec.eksaVersion":                     {release.Current.Version, release.Target.Version},
		"spec.controlPlaneConfiguration.count": {"5", "3"},
	} {
		f, ok := fields[path]
		if !ok || f.Old != want[0] || f.New != want[1] || f.Op != "change" {
			t.Errorf("%s: %+v, want %s → %s (all changes: %+v)", path, f, want[0], want[1], res.Objects[0].Fields)
		}
	}
	if len(fields) != 3 {
		t.Errorf("want exactly 3 changed fields, got %+v", res.Objects[0].Fields)
	}
	owners := map[string]string{}
	for _, c := range res.Conflicts {
		owners[c.Field] = c.Manager
	}
	want := map[string]string{".spec.kubernetesVersion": seed.ManagerCLI, ".spec.eksaVersion": seed.ManagerCLI, ".spec.controlPlaneConfiguration.count": "flux"}
	for f, m := range want {
		if owners[f] != m {
			t.Errorf("conflict on %s: owner %q, want %q (all: %+v)", f, owners[f], m, res.Conflicts)
		}
	}
	after, err := clusters.Get(ctx, "mgmt", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.GetResourceVersion() != before.GetResourceVersion() {
		t.Fatal("the dry-run changed the cluster")
	}

	// Not forced: refused, nothing written, the refusal recorded.
	audit := &memAudit{}
	a.Audit = audit
	applied, err := a.Apply(ctx, w.spec, ApplyOptions{Changes: res})
	var ce *ConflictsError
	if !errors.As(err, &ce) || len(applied) != 0 || len(ce.Conflicts) != 3 || !strings.Contains(err.Error(), "--force-conflicts") {
		t.Fatalf("unforced apply: %v, applied %v", err, applied)
	}
	if got := audit.actions(); len(got) != 1 || got[0] != "apply:failed" || audit.entries[0].Forced {
		t.Errorf("audit of the refused apply: %v", got)
	}

	// Forced on the operator's choice: applied and recorded as forced.
	applied, err = a.Apply(ctx, w.spec, ApplyOptions{ForceConflicts: true, Changes: res, Skipped: []string{CheckNodesReady}})
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != 1 || applied[0].Generation != before.GetGeneration()+1 {
		t.Errorf("applied %+v, generation before %d", applied, before.GetGeneration())
	}
	e := audit.entries[1]
	if !e.Forced || e.Result != AuditOK || len(e.Skipped) != 1 || e.After == nil {
		t.Errorf("audit of the forced apply: %+v", e)
	}
	after, err = clusters.Get(ctx, "mgmt", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(after.Object, "spec", "kubernetesVersion"); v != "1.31" {
		t.Errorf("kubernetesVersion after apply %q", v)
	}
	// Now upgrade-console owns the fields: a second dry-run has no conflict
	// and no change.
	res2, err := a.DryRun(ctx, w.spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(res2.Conflicts) != 0 || res2.Changes() != 0 {
		t.Errorf("second dry-run: %+v", res2)
	}
}

func TestDryRunReportsRefusalsAndUnknownKinds(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	spec := w.spec.Cluster.DeepCopy()
	// kubernetesVersion is a string in the CRD schema: the server refuses.
	if err := unstructured.SetNestedField(spec.Object, int64(131), "spec", "kubernetesVersion"); err != nil {
		t.Fatal(err)
	}
	machineConfig := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "anywhere.eks.amazonaws.com/v1alpha1", "kind": "VSphereMachineConfig",
		"metadata": map[string]any{"name": "mgmt-cp", "namespace": w.ns},
	}}
	sf := &SpecFile{Path: "bad.yaml", Docs: []*unstructured.Unstructured{machineConfig, spec}, Cluster: spec}
	res, err := (&Applier{Client: w.client}).DryRun(ctx, sf)
	if err != nil {
		t.Fatal(err)
	}
	rej := res.Rejected()
	if len(rej) != 2 {
		t.Fatalf("want both documents refused, got %+v", res.Objects)
	}
	if !strings.Contains(rej[0].Error, "does not serve") || !strings.Contains(rej[0].Error, "CRD") {
		t.Errorf("unknown kind: %q", rej[0].Error)
	}
	if !strings.Contains(rej[1].Error, "kubernetesVersion") {
		t.Errorf("invalid field: %q", rej[1].Error)
	}
}

func TestDiffObjectsMatchesNamedLists(t *testing.T) {
	before := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"workerNodeGroupConfigurations": []any{
			map[string]any{"name": "md-0", "count": int64(3)},
			map[string]any{"name": "md-1", "count": int64(2)},
		},
	}}}
	after := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"team": "infra"}},
		"spec": map[string]any{
			"workerNodeGroupConfigurations": []any{
				map[string]any{"name": "md-1", "count": int64(4)},
			},
		}}}
	got := DiffObjects(before, after)
	want := []FieldChange{
		{Path: "metadata.labels.team", New: "infra", Op: "add"},
		{Path: "spec.workerNodeGroupConfigurations[name=md-0].count", Old: "3", Op: "remove"},
		{Path: "spec.workerNodeGroupConfigurations[name=md-0].name", Old: "md-0", Op: "remove"},
		{Path: "spec.workerNodeGroupConfigurations[name=md-1].count", Old: "2", New: "4", Op: "change"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("change %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
