package upgrade

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

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

	a := &Applier{Client: w.client, Cluster: "mgmt", Audit: &memAudit{}}
	res, err := a.DryRun(ctx, w.spec)
	if err != nil {
		t.Fatal(err)
	}
	// The provider documents first, the Cluster last; of the provider
	// documents, the upgrade changes the machine configs' template only.
	n := len(w.spec.Docs)
	if len(res.Objects) != n || n < 2 || res.Objects[n-1].Object != "Cluster "+w.ns+"/mgmt" {
		t.Fatalf("objects %+v", res.Objects)
	}
	for _, o := range res.Objects {
		if o.Error != "" {
			t.Errorf("%s refused: %s", o.Object, o.Error)
		}
	}
	for _, o := range res.Objects[:n-1] {
		switch {
		case strings.HasPrefix(o.Object, "VSphereDatacenterConfig "):
			if len(o.Fields) != 0 {
				t.Errorf("%s: changes %+v, want none", o.Object, o.Fields)
			}
		case strings.HasPrefix(o.Object, "VSphereMachineConfig "):
			if len(o.Fields) != 1 || o.Fields[0].Path != "spec.template" || !strings.HasSuffix(o.Fields[0].Old, "kube-1.30") || !strings.HasSuffix(o.Fields[0].New, "kube-1.31") {
				t.Errorf("%s: changes %+v, want the template 1.30 → 1.31", o.Object, o.Fields)
			}
		default:
			t.Errorf("unexpected object %s before the Cluster", o.Object)
		}
	}
	cluster := res.Objects[n-1]
	fields := map[string]FieldChange{}
	for _, f := range cluster.Fields {
		fields[f.Path] = f
	}
	for path, want := range map[string][2]string{
		"spec.kubernetesVersion":               {"1.30", "1.31"},
		"spec.eksaVersion":                     {release.Current.Version, release.Target.Version},
		"spec.controlPlaneConfiguration.count": {"5", "3"},
	} {
		f, ok := fields[path]
		if !ok || f.Old != want[0] || f.New != want[1] || f.Op != "change" {
			t.Errorf("%s: %+v, want %s → %s (all changes: %+v)", path, f, want[0], want[1], cluster.Fields)
		}
	}
	if len(fields) != 3 {
		t.Errorf("want exactly 3 changed fields, got %+v", cluster.Fields)
	}
	owners := map[string]string{}
	for _, c := range res.Conflicts {
		owners[c.Field] = c.Manager
	}
	want := map[string]string{".spec.kubernetesVersion": seed.ManagerCLI, ".spec.eksaVersion": seed.ManagerCLI, ".spec.controlPlaneConfiguration.count": "flux"}
	// The templates the EKS-A CLI set when it created the cluster conflict
	// too: one per machine config.
	templates := 0
	for _, c := range res.Conflicts {
		if c.Field == ".spec.template" && c.Manager == seed.ManagerCLI {
			templates++
		}
	}
	if templates != n-2 {
		t.Errorf("%d conflicts on a machine config's template, want %d (all: %+v)", templates, n-2, res.Conflicts)
	}
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
	rvs := map[string]string{}
	for _, d := range w.spec.Docs {
		got, err := w.client.get(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		rvs[docRef(d)] = got.GetResourceVersion()
	}
	audit := &memAudit{}
	a.Audit = audit
	applied, err := a.Apply(ctx, w.spec, ApplyOptions{Changes: res})
	var ce *ConflictsError
	if !errors.As(err, &ce) || len(applied) != 0 || len(ce.Conflicts) != len(res.Conflicts) || !strings.Contains(err.Error(), "--force-conflicts") {
		t.Fatalf("unforced apply: %v, applied %v", err, applied)
	}
	if got := audit.actions(); len(got) != 1 || got[0] != "apply:failed" || audit.entries[0].Forced {
		t.Errorf("audit of the refused apply: %v", got)
	}
	// Nothing was written, not even the documents without a conflict.
	for _, d := range w.spec.Docs {
		got, err := w.client.get(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		if got.GetResourceVersion() != rvs[docRef(d)] {
			t.Errorf("%s written by the refused apply", docRef(d))
		}
	}

	// Forced on the operator's choice: applied and recorded as forced.
	applied, err = a.Apply(ctx, w.spec, ApplyOptions{ForceConflicts: true, Changes: res, Skipped: []string{CheckNodesReady}})
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != n || applied[n-1].Object != "Cluster "+w.ns+"/mgmt" || applied[n-1].Generation != before.GetGeneration()+1 {
		t.Errorf("applied %+v, generation before %d", applied, before.GetGeneration())
	}
	if got := audit.actions(); len(got) != 1+n {
		t.Errorf("audit after the forced apply: %v, want the refusal and %d writes", got, n)
	}
	e := audit.entries[len(audit.entries)-1]
	if e.Object != "Cluster "+w.ns+"/mgmt" || !e.Forced || e.Result != AuditOK || len(e.Skipped) != 1 || e.After == nil {
		t.Errorf("audit of the forced apply of the Cluster: %+v", e)
	}
	// Forced only where the dry run found a conflict: the audit marked
	// every write FORCED.
	conflicted := map[string]bool{}
	for _, c := range res.Conflicts {
		conflicted[c.Object] = true
	}
	for _, e := range audit.entries[1:] {
		if e.Forced != conflicted[e.Object] {
			t.Errorf("%s recorded forced %t, its dry run had conflicts %t", e.Object, e.Forced, conflicted[e.Object])
		}
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
	// A provider kind the local control plane does not serve.
	machineConfig := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "anywhere.eks.amazonaws.com/v1alpha1", "kind": "TinkerbellMachineConfig",
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

	// A spec whose machine config is good and whose Cluster (applied last)
	// is refused: even forced, the apply writes nothing, since the refusal
	// is known before the first write, and records it.
	var good *unstructured.Unstructured
	for _, d := range w.spec.Docs {
		if d.GetKind() == "VSphereMachineConfig" {
			good = d
			break
		}
	}
	if good == nil {
		t.Fatal("the demo spec has no VSphereMachineConfig")
	}
	live, err := w.client.get(ctx, good)
	if err != nil {
		t.Fatal(err)
	}
	audit := &memAudit{}
	half := &SpecFile{Path: "half.yaml", Docs: []*unstructured.Unstructured{good, spec}, Cluster: spec}
	applied, err := (&Applier{Client: w.client, Audit: audit}).Apply(ctx, half, ApplyOptions{ForceConflicts: true})
	if err == nil || len(applied) != 0 || !strings.Contains(err.Error(), "kubernetesVersion") {
		t.Fatalf("apply of a refused spec: %v, applied %v", err, applied)
	}
	if got := audit.actions(); len(got) != 1 || got[0] != "apply:failed" {
		t.Errorf("audit: %v", got)
	}
	if after, err := w.client.get(ctx, good); err != nil || after.GetResourceVersion() != live.GetResourceVersion() {
		t.Errorf("%s was written before the Cluster's refusal (%v)", docRef(good), err)
	}
	// An unknown kind is named once.
	if _, err := (&Applier{Client: w.client, Audit: &memAudit{}}).Apply(ctx, sf, ApplyOptions{ForceConflicts: true}); err == nil || strings.Count(err.Error(), "TinkerbellMachineConfig "+w.ns+"/mgmt-cp") != 1 {
		t.Errorf("apply with an unknown kind: %v", err)
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

// A long value is cut in the middle, by runes: two release URLs differ at
// their end, which a cut at the end hid on both sides of the arrow.
func TestRenderCutsLongValuesInTheMiddle(t *testing.T) {
	url := func(v string) string {
		return "https://anywhere-assets.eks.amazonaws.com/releases/eks-a/etcd/" + v + "/etcd-linux-amd64-" + v + ".tar.gz"
	}
	before, after := render(url("v3.5.15")), render(url("v3.5.16"))
	if before == after || !strings.HasSuffix(after, "v3.5.16.tar.gz") || utf8.RuneCountInString(after) != 80 {
		t.Errorf("before %q\nafter %q", before, after)
	}
	if s := render(strings.Repeat("é", 100)); !utf8.ValidString(s) {
		t.Errorf("cut inside a rune: %q", s)
	}
	// The live side is whatever wrote the object chose.
	if s, want := render("/tmpl\x1b[2K\r\nok"), `/tmpl\x1b[2K\r\nok`; s != want {
		t.Errorf("render = %q, want %q", s, want)
	}
}

// The refusal names the EKS-A CLI only where it owns every conflicting
// field; another manager's (a GitOps controller's) may be put back.
func TestConflictsErrorNamesTheEKSACLIOnlyWhereItOwnsThemAll(t *testing.T) {
	cli := FieldConflict{Object: "Cluster default/mgmt", Field: ".spec.kubernetesVersion", Manager: "eks-a-cli"}
	flux := FieldConflict{Object: "Cluster default/mgmt", Field: ".spec.eksaVersion", Manager: "kustomize-controller"}
	const note = "eks-a-cli is the EKS-A CLI, which itself applies with forced ownership"
	if got := (&ConflictsError{Conflicts: []FieldConflict{cli, cli}}).Error(); !strings.Contains(got, note) {
		t.Errorf("the CLI's alone: %q", got)
	}
	if got := (&ConflictsError{Conflicts: []FieldConflict{cli, flux}}).Error(); strings.Contains(got, note) {
		t.Errorf("the CLI's and another's: %q", got)
	}
	if got := SoleManager(nil); got != "" {
		t.Errorf("no conflicts: sole manager %q", got)
	}
}
