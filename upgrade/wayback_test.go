package upgrade

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
)

// A start the API server refuses at the Cluster, after the machine configs
// landed, leaves them on the new template; the way back it prints is
// commands that, pasted, put each applied document's spec back as the
// snapshot has it and touch nothing else, and that refuse to run a second
// time over an object no longer as this apply left it. Before, the
// operator was told the documents were applied and the lock kept, and no
// more: the snapshot held their old spec and nothing restored it.
func TestStartAppliedInPartSaysTheWayBack(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		kubectl = filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
		if _, serr := os.Stat(kubectl); serr != nil {
			t.Skip("no kubectl on PATH or in KUBEBUILDER_ASSETS to paste the way back into")
		}
	}
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	audit := &memAudit{}
	d := &Driver{Client: w.client, Audit: audit, Holder: w.planner.Self, Planner: w.planner, SnapshotDir: t.TempDir(),
		Conn: model.ConnFlags{{Name: "kubeconfig", Value: env.KubeconfigPath}}}
	p := w.plan(t)
	once := false
	s, err := d.Start(ctx, p, StartOptions{ForceConflicts: true, OnApplied: func(AppliedObject) {
		if !once {
			once = true
			p.Target.Spec.Cluster.SetResourceVersion("1") // the Cluster's write is refused
		}
	}})
	if s == nil || err == nil || len(s.Applied) != len(p.Target.Spec.Docs)-1 {
		t.Fatalf("start: %v, %v; want every document but the Cluster applied", s, err)
	}
	way := s.WayBack()
	for _, a := range s.Applied {
		if !strings.Contains(way, "  "+a.Object+": ") {
			t.Errorf("the way back does not name %s:\n%s", a.Object, way)
		}
	}
	if !strings.Contains(way, "upgrade-console lock clear lease --cluster mgmt -n "+w.ns+" --kubeconfig "+env.KubeconfigPath) {
		t.Errorf("the way back does not say how to release the lock:\n%s", way)
	}
	var cmds []string
	for _, l := range strings.Split(way, "\n") {
		if c, ok := strings.CutPrefix(l, "  kubectl "); ok {
			cmds = append(cmds, kubectl+" "+c)
		}
	}
	snap, err := LoadSnapshot(ctx, w.client.Kube, s.Snapshot.Namespace, s.Snapshot.Name)
	if err != nil {
		t.Fatal(err)
	}
	specs := func() map[string]any {
		out := map[string]any{}
		for _, doc := range p.Target.Spec.Docs {
			live, err := w.client.get(ctx, doc)
			if err != nil {
				t.Fatal(err)
			}
			out[docRef(live)] = asJSON(t, live.Object["spec"])
		}
		return out
	}
	changed := 0
	before := specs()
	for ref, spec := range before {
		kind, name, _ := strings.Cut(ref, " ")
		old := snap.Object(kind, name[strings.Index(name, "/")+1:])
		if old == nil {
			t.Fatalf("the snapshot lacks %s", ref)
		}
		if asJSON(t, old.Spec) != spec {
			changed++
		}
	}
	if changed == 0 || len(cmds) != changed {
		t.Fatalf("%d document(s) changed by the apply, %d command(s) printed:\n%s", changed, len(cmds), way)
	}
	paste := func(extra string) error {
		for _, c := range cmds {
			if out, err := exec.Command("sh", "-c", c+extra).CombinedOutput(); err != nil {
				return &exec.Error{Name: c + extra + ": " + string(out), Err: err}
			}
		}
		return nil
	}
	if err := paste(" --dry-run=server"); err != nil {
		t.Fatalf("the way back's dry run: %v", err)
	}
	if got := specs(); !reflect.DeepEqual(got, before) {
		t.Fatalf("the dry run changed the objects")
	}
	if err := paste(""); err != nil {
		t.Fatalf("pasted: %v", err)
	}
	for ref, spec := range specs() {
		kind, name, _ := strings.Cut(ref, " ")
		if old := snap.Object(kind, name[strings.Index(name, "/")+1:]); asJSON(t, old.Spec) != spec {
			t.Errorf("%s after the way back: %v, want the snapshot's %v", ref, spec, old.Spec)
		}
	}
	// Pasted again (or after someone else changed them), the tests no
	// longer hold: refused, nothing written.
	after := specs()
	if err := paste(""); err == nil {
		t.Errorf("a second paste was not refused")
	}
	if !reflect.DeepEqual(specs(), after) {
		t.Errorf("a second paste changed the objects")
	}
}

// asJSON compares specs read from the API server (int64) with a
// snapshot's decoded from its ConfigMap (float64) by their JSON.
func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A field the apply added is removed, one it removed is added back, and a
// key with "/" or "~" is escaped as JSON pointers want it.
func TestRestorePatchAddsRemovesAndEscapes(t *testing.T) {
	snap := map[string]any{"template": "kube-1.30", "a/b~c": "x", "same": int64(1)}
	stored := map[string]any{"template": "kube-1.31", "storagePolicyName": "gold", "same": int64(1)}
	got, _ := json.Marshal(restorePatch(snap, stored))
	want := `[{"op":"add","path":"/spec/a~1b~0c","value":"x"},` +
		`{"op":"test","path":"/spec/storagePolicyName","value":"gold"},{"op":"remove","path":"/spec/storagePolicyName"},` +
		`{"op":"test","path":"/spec/template","value":"kube-1.31"},{"op":"replace","path":"/spec/template","value":"kube-1.30"}]`
	if string(got) != want {
		t.Errorf("patch\n%s\nwant\n%s", got, want)
	}
	if got, _ := json.Marshal(restorePatch(map[string]any{"x": nil}, map[string]any{"x": "v"})); string(got) != `[{"op":"test","path":"/spec/x","value":"v"},{"op":"replace","path":"/spec/x","value":null}]` {
		t.Errorf("a null put back: %s", got)
	}
	if ops := restorePatch(snap, snap); ops != nil {
		t.Errorf("an unchanged spec has a patch: %v", ops)
	}
}

// The way back's patch of an object whose spec anyone changed since the
// apply, even in a field the apply did not touch, is refused: each patch
// tests first the generation the apply left. The tests of the values
// alone let a field the apply removed be added back over a value set
// since (an add on a member that exists replaces it), and a spec changed
// elsewhere was written over regardless.
func TestWayBackPatchIsRefusedOnceTheSpecChanged(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		kubectl = filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
		if _, serr := os.Stat(kubectl); serr != nil {
			t.Skip("no kubectl on PATH or in KUBEBUILDER_ASSETS to paste the way back into")
		}
	}
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	d := &Driver{Client: w.client, Audit: &memAudit{}, Holder: w.planner.Self, Planner: w.planner, SnapshotDir: t.TempDir(),
		Conn: model.ConnFlags{{Name: "kubeconfig", Value: env.KubeconfigPath}}}
	p := w.plan(t)
	once := false
	s, err := d.Start(ctx, p, StartOptions{ForceConflicts: true, OnApplied: func(AppliedObject) {
		if !once {
			once = true
			p.Target.Spec.Cluster.SetResourceVersion("1")
		}
	}})
	if s == nil || err == nil {
		t.Fatalf("start: %v, %v; want it refused part way", s, err)
	}
	var cmds []string
	for _, l := range strings.Split(s.WayBack(), "\n") {
		if c, ok := strings.CutPrefix(l, "  kubectl "); ok {
			if !strings.Contains(c, `'[{"op":"test","path":"/metadata/generation","value":`) {
				t.Errorf("a patch not guarded by the generation first: %s", c)
			}
			cmds = append(cmds, kubectl+" "+c)
		}
	}
	var target *AppliedObject
	for i := range s.Applied {
		if a := &s.Applied[i]; a.stored != nil && a.stored.GetKind() == "VSphereMachineConfig" && target == nil {
			for _, c := range cmds {
				if strings.Contains(c, " "+a.stored.GetName()+" --type=json") {
					target = a
				}
			}
		}
	}
	if target == nil {
		t.Fatalf("no machine config patch in the way back:\n%s", s.WayBack())
	}
	ri, err := w.client.ResourceOf(target.stored)
	if err != nil {
		t.Fatal(err)
	}
	cpus, _, _ := unstructured.NestedInt64(target.stored.Object, "spec", "numCPUs")
	if _, err := ri.Patch(ctx, target.stored.GetName(), types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"numCPUs":%d}}`, cpus+2)), metav1.PatchOptions{FieldManager: "flux"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range cmds {
		if !strings.Contains(c, " "+target.stored.GetName()+" --type=json") {
			continue
		}
		out, err := exec.Command("sh", "-c", c+" --dry-run=server").CombinedOutput()
		if err == nil {
			t.Errorf("pasted over a spec changed since, it was not refused: %s\n%s", c, out)
		}
	}
}
