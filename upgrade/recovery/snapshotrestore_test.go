package recovery

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

var gvrVSphereMachineConfig = schema.GroupVersionResource{Group: "anywhere.eks.amazonaws.com", Version: "v1alpha1", Resource: "vspheremachineconfigs"}

func machineConfigSpec(template string) map[string]any {
	return map[string]any{"datastore": "ds", "folder": "f", "memoryMiB": int64(8192), "numCPUs": int64(2), "osFamily": "ubuntu",
		"resourcePool": "rp", "template": template}
}

// restoreWorld is a machine config an apply moved to the 1.31 template,
// its Cluster, and the snapshot taken before: the spec on 1.30.
func (w *world) restoreWorld() (snapshot, mc string) {
	w.t.Helper()
	mc = w.cluster + "-cp"
	w.create(upgrade.GVREKSACluster, obj("anywhere.eks.amazonaws.com/v1alpha1", "Cluster", w.ns, w.cluster, nil, nil, map[string]any{"kubernetesVersion": "1.30"}))
	w.create(gvrVSphereMachineConfig, obj("anywhere.eks.amazonaws.com/v1alpha1", "VSphereMachineConfig", w.ns, mc, nil, nil, machineConfigSpec("kube-1.30")))
	// The snapshot in a later second than the object's creation: a write
	// in its second may have come after it, and the restore says so.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	at := time.Now().UTC().Truncate(time.Second)
	snap := upgrade.Snapshot{Format: upgrade.SnapshotFormat, Cluster: w.cluster, ClusterNamespace: w.ns, TakenAt: at, TakenBy: "ops@bastion",
		Objects: []upgrade.SnapshotObject{
			{APIVersion: "anywhere.eks.amazonaws.com/v1alpha1", Kind: "VSphereMachineConfig", Namespace: w.ns, Name: mc, Spec: machineConfigSpec("kube-1.30")},
			{APIVersion: "anywhere.eks.amazonaws.com/v1alpha1", Kind: "Cluster", Namespace: w.ns, Name: w.cluster, Spec: map[string]any{"kubernetesVersion": "1.30"}}}}
	b, _ := json.Marshal(snap)
	snapshot = w.snapshotCM(at, w.ns, string(b))
	w.applyAsConsole(mc, machineConfigSpec("kube-1.31"))
	return snapshot, mc
}

// applyAsConsole plays the failed apply: a forced server-side apply of the
// machine config's spec under the console's field manager.
func (w *world) applyAsConsole(name string, spec map[string]any) {
	w.t.Helper()
	u := obj("anywhere.eks.amazonaws.com/v1alpha1", "VSphereMachineConfig", w.ns, name, nil, nil, spec)
	if _, err := w.client.Dynamic.Resource(gvrVSphereMachineConfig).Namespace(w.ns).Apply(w.ctx, name, u, metav1.ApplyOptions{FieldManager: upgrade.ManagerName, Force: true}); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) template(name string) string {
	w.t.Helper()
	u, err := w.client.Dynamic.Resource(gvrVSphereMachineConfig).Namespace(w.ns).Get(w.ctx, name, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	t, _, _ := unstructured.NestedString(u.Object, "spec", "template")
	return t
}

// A live lock of another console is an upgrade under way: the restore is
// refused, nothing written. A lock kept by the failed apply is the one it
// is for: it runs under it and leaves it.
func TestSnapshotRestoreRefusesALiveLockAndLeavesAKeptOne(t *testing.T) {
	w := newWorld(t)
	snapshot, mc := w.restoreWorld()
	w.lease("alice@laptop/1a2b3c4d", w.now)
	_, err := PlanSnapshotRestore(w.ctx, w.env, snapshot, []string{"VSphereMachineConfig/" + mc}, false)
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "an upgrade is under way") {
		t.Fatalf("restore under another console's live lock: %v; want it refused", err)
	}
	if got := w.template(mc); got != "kube-1.31" {
		t.Fatalf("template %s: the refused restore wrote", got)
	}
	lease, err := w.client.Kube.CoordinationV1().Leases(w.sys).Get(w.ctx, upgrade.LockName(w.cluster), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lease.Annotations = map[string]string{model.AnnotationLockKept: "upgrade failed: the spec was applied in part"}
	if _, err := w.client.Kube.CoordinationV1().Leases(w.sys).Update(w.ctx, lease, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err := PlanSnapshotRestore(w.ctx, w.env, snapshot, []string{"VSphereMachineConfig/" + mc}, false)
	if err != nil {
		t.Fatalf("restore under the lock the failed apply kept: %v", err)
	}
	if rep, err := (&Executor{Audit: w.audit}).Run(w.ctx, p); err != nil {
		t.Fatalf("run: %v\n%s", err, describeSteps(rep))
	}
	if got := w.template(mc); got != "kube-1.30" {
		t.Errorf("template %s after the restore, want the snapshot's kube-1.30", got)
	}
	if l, err := w.client.Kube.CoordinationV1().Leases(w.sys).Get(w.ctx, upgrade.LockName(w.cluster), metav1.GetOptions{}); err != nil || l.Annotations[model.AnnotationLockKept] == "" {
		t.Errorf("the kept lock after the restore: %+v, %v; want it left as it was", l, err)
	}
}

// A machine config changed after the plan was made (another writer) is not
// overwritten: the step stops as a concurrent change, and the other
// writer's value stays. An object not in the snapshot, and one EKS-A
// generates, are bad input naming --object.
func TestSnapshotRestoreLeavesAChangeMadeSinceThePlan(t *testing.T) {
	w := newWorld(t)
	snapshot, mc := w.restoreWorld()
	p, err := PlanSnapshotRestore(w.ctx, w.env, snapshot, []string{"VSphereMachineConfig/" + mc}, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.client.Dynamic.Resource(gvrVSphereMachineConfig).Namespace(w.ns).Patch(w.ctx, mc, types.MergePatchType,
		[]byte(`{"spec":{"template":"kube-1.31-patched"}}`), metav1.PatchOptions{FieldManager: "gitops"}); err != nil {
		t.Fatal(err)
	}
	_, err = (&Executor{Audit: w.audit}).Run(w.ctx, p)
	var cc *ConcurrentChangeError
	if !errors.As(err, &cc) {
		t.Fatalf("run over a change made since the plan: %v; want a concurrent change", err)
	}
	if got := w.template(mc); got != "kube-1.31-patched" {
		t.Errorf("template %s: the other writer's change was overwritten", got)
	}
	for _, arg := range []string{"VSphereMachineConfig/" + w.cluster + "-nope", "KubeadmControlPlane/" + w.cluster, "no-kind"} {
		_, err := PlanSnapshotRestore(w.ctx, w.env, snapshot, []string{arg}, false)
		var ie *model.InputError
		if !errors.As(err, &ie) || ie.Source != "--object" || ie.Fix == "" {
			t.Errorf("--object %s: %v; want bad input naming --object with a fix", arg, err)
		}
	}
}

// A field another writer changed after the failed apply (GitOps raising
// numCPUs) is theirs: the restore puts back only what the console's apply
// changed, and its plan names the field it leaves and who changed it.
// Before, it reverted every field that differed from the snapshot.
func TestSnapshotRestoreLeavesAFieldAnotherWriterChangedSince(t *testing.T) {
	w := newWorld(t)
	snapshot, mc := w.restoreWorld()
	r := w.client.Dynamic.Resource(gvrVSphereMachineConfig).Namespace(w.ns)
	applied, err := r.Get(w.ctx, mc, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	flux, err := r.Patch(w.ctx, mc, types.MergePatchType, []byte(`{"spec":{"numCPUs":8}}`), metav1.PatchOptions{FieldManager: "flux"})
	if err != nil {
		t.Fatal(err)
	}
	// The generation guard the way back relies on: a spec write by
	// anyone moves it, on this CRD with its status subresource.
	if flux.GetGeneration() == applied.GetGeneration() {
		t.Fatalf("generation %d after another writer's spec change: unmoved", flux.GetGeneration())
	}
	p, err := PlanSnapshotRestore(w.ctx, w.env, snapshot, []string{"VSphereMachineConfig/" + mc}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Steps) != 1 || !strings.Contains(p.Steps[0].Change, "spec.numCPUs: changed since by flux") || !strings.Contains(p.Steps[0].Change, "left as it is") ||
		!strings.Contains(p.Steps[0].Change, `spec.template "kube-1.31" → "kube-1.30"`) {
		t.Fatalf("plan: %+v; want the template restored and numCPUs named as left", p.Steps)
	}
	if rep, err := (&Executor{Audit: w.audit}).Run(w.ctx, p); err != nil {
		t.Fatalf("run: %v\n%s", err, describeSteps(rep))
	}
	u, err := r.Get(w.ctx, mc, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cpus, _, _ := unstructured.NestedInt64(u.Object, "spec", "numCPUs"); cpus != 8 || w.template(mc) != "kube-1.30" {
		t.Errorf("after the restore: numCPUs %d, template %s; want flux's 8 left and the snapshot's kube-1.30", cpus, w.template(mc))
	}
	p, err = PlanSnapshotRestore(w.ctx, w.env, snapshot, []string{"VSphereMachineConfig/" + mc}, false)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := (&Executor{Audit: w.audit}).Run(w.ctx, p); err != nil || len(rep.Steps) != 1 || rep.Steps[0].Status != StepAlreadyDone {
		t.Errorf("a second run: %v\n%s; want its step done", err, describeSteps(rep))
	}
}

// A field the apply removed has no value to test: put back with a bare
// add, it overwrote a value someone set after the plan. The generation
// test refuses the write instead.
func TestSnapshotRestoreDoesNotOverwriteARemovedFieldSetSince(t *testing.T) {
	w := newWorld(t)
	snapshot, mc := w.restoreWorld()
	withPolicy := func(template string) map[string]any {
		s := machineConfigSpec(template)
		s["storagePolicyName"] = "gold"
		return s
	}
	r := w.client.Dynamic.Resource(gvrVSphereMachineConfig).Namespace(w.ns)
	// The snapshot had a storage policy the apply dropped.
	cm, err := w.client.Kube.CoreV1().ConfigMaps(w.sys).Get(w.ctx, snapshot, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := upgrade.SnapshotOf(cm)
	if err != nil {
		t.Fatal(err)
	}
	snap.Objects[0].Spec = withPolicy("kube-1.30")
	snap.Checksum = ""
	b, _ := json.Marshal(snap)
	for k := range cm.Data {
		cm.Data[k] = string(b)
	}
	if _, err := w.client.Kube.CoreV1().ConfigMaps(w.sys).Update(w.ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err := PlanSnapshotRestore(w.ctx, w.env, snapshot, []string{"VSphereMachineConfig/" + mc}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Steps[0].Change, `spec.storagePolicyName (absent) → "gold"`) {
		t.Fatalf("plan: %s; want the dropped storage policy put back", p.Steps[0].Change)
	}
	if _, err := r.Patch(w.ctx, mc, types.MergePatchType, []byte(`{"spec":{"storagePolicyName":"silver"}}`), metav1.PatchOptions{FieldManager: "gitops"}); err != nil {
		t.Fatal(err)
	}
	_, err = (&Executor{Audit: w.audit}).Run(w.ctx, p)
	var cc *ConcurrentChangeError
	if !errors.As(err, &cc) {
		t.Fatalf("run over a field set since the plan: %v; want a concurrent change", err)
	}
	u, err := r.Get(w.ctx, mc, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(u.Object, "spec", "storagePolicyName"); got != "silver" || w.template(mc) != "kube-1.31" {
		t.Errorf("storage policy %q, template %s: the refused restore wrote", got, w.template(mc))
	}
}

// --snapshot is checked before anything is read for a step: a missing one
// names the flag and the command that lists them; one older than the
// cluster's newest is not the failed apply's (every start takes one, and
// the kept lock keeps later starts out) and would undo the upgrades since,
// so it is refused unless --older-snapshot.
func TestSnapshotRestoreNamesABadSnapshot(t *testing.T) {
	w := newWorld(t)
	snapshot, mc := w.restoreWorld()
	objects := []string{"VSphereMachineConfig/" + mc}
	var ie *model.InputError
	_, err := PlanSnapshotRestore(w.ctx, w.env, snapshot+"-nope", objects, false)
	if !errors.As(err, &ie) || ie.Source != "--snapshot" || !strings.Contains(ie.Fix, "upgrade-console snapshot list --cluster "+w.cluster) {
		t.Errorf("a missing snapshot: %#v; want bad input naming --snapshot and snapshot list", err)
	}
	// A namesake cluster's in another namespace is no newer snapshot of this one.
	w.snapshotCM(time.Now().Add(2*time.Hour), "elsewhere", "")
	if _, err := PlanSnapshotRestore(w.ctx, w.env, snapshot, objects, false); err != nil {
		t.Errorf("with a newer snapshot of a namesake in another namespace: %v", err)
	}
	newer := w.snapshotCM(time.Now().Add(time.Hour), w.ns, "")
	_, err = PlanSnapshotRestore(w.ctx, w.env, snapshot, objects, false)
	if !errors.As(err, &ie) || ie.Source != "--snapshot" || !strings.Contains(ie.Problem, newer) || !strings.Contains(ie.Fix, "--older-snapshot") {
		t.Errorf("a snapshot older than %s: %v; want bad input naming --snapshot, the newest and --older-snapshot", newer, err)
	}
	if _, err := PlanSnapshotRestore(w.ctx, w.env, snapshot, objects, true); err != nil {
		t.Errorf("an older snapshot with --older-snapshot: %v", err)
	}
	// An object the snapshot does not hold: the fallback applies the old
	// spec file in the Cluster's namespace, which a spec file's documents
	// leave out; the shell's context namespace would have taken them.
	_, err = PlanSnapshotRestore(w.ctx, w.env, newer, []string{"VSphereMachineConfig/not-there"}, false)
	if !errors.As(err, &ie) || ie.Source != "--object" || !strings.Contains(ie.Fix, " -n "+w.ns+" apply --server-side") {
		t.Errorf("an object not in the snapshot: %v; want bad input naming --object, the fallback in namespace %s", err, w.ns)
	}
}

// The spec's documents are in the Cluster's namespace: a snapshot's
// namesake in another namespace is not the object --object names.
func TestSnapshotRestoreTakesNoNamesakeFromAnotherNamespace(t *testing.T) {
	w := newWorld(t)
	w.restoreWorld()
	mc := w.cluster + "-cp"
	at := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	snap := upgrade.Snapshot{Format: upgrade.SnapshotFormat, Cluster: w.cluster, ClusterNamespace: w.ns, TakenAt: at, TakenBy: "ops@bastion",
		Objects: []upgrade.SnapshotObject{
			{APIVersion: "anywhere.eks.amazonaws.com/v1alpha1", Kind: "VSphereMachineConfig", Namespace: "elsewhere", Name: mc, Spec: machineConfigSpec("kube-1.29")},
			{APIVersion: "anywhere.eks.amazonaws.com/v1alpha1", Kind: "Cluster", Namespace: w.ns, Name: w.cluster, Spec: map[string]any{"kubernetesVersion": "1.30"}}}}
	b, _ := json.Marshal(snap)
	snapshot := w.snapshotCM(at, w.ns, string(b))
	_, err := PlanSnapshotRestore(w.ctx, w.env, snapshot, []string{"VSphereMachineConfig/" + mc}, false)
	var ie *model.InputError
	if !errors.As(err, &ie) || ie.Source != "--object" || !strings.Contains(ie.Problem, w.ns) {
		t.Errorf("--object whose namesake is in another namespace: %v; want bad input naming --object and %s", err, w.ns)
	}
	if got := w.template(mc); got != "kube-1.31" {
		t.Errorf("template %s", got)
	}
}

// A field absent now has no owner to tell who removed it: the apply, or
// a writer since. When another manager wrote the object after the snapshot
// was taken, the field is left and the plan says why.
func TestSnapshotRestoreLeavesAnAbsentFieldOnceAnotherWriterWroteTheSpec(t *testing.T) {
	w := newWorld(t)
	snapshot, mc := w.restoreWorld()
	cm, err := w.client.Kube.CoreV1().ConfigMaps(w.sys).Get(w.ctx, snapshot, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := upgrade.SnapshotOf(cm)
	if err != nil {
		t.Fatal(err)
	}
	snap.Objects[0].Spec["storagePolicyName"] = "gold"
	snap.Checksum = ""
	b, _ := json.Marshal(snap)
	for k := range cm.Data {
		cm.Data[k] = string(b)
	}
	if _, err := w.client.Kube.CoreV1().ConfigMaps(w.sys).Update(w.ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.client.Dynamic.Resource(gvrVSphereMachineConfig).Namespace(w.ns).Patch(w.ctx, mc, types.MergePatchType,
		[]byte(`{"spec":{"numCPUs":8}}`), metav1.PatchOptions{FieldManager: "gitops"}); err != nil {
		t.Fatal(err)
	}
	p, err := PlanSnapshotRestore(w.ctx, w.env, snapshot, []string{"VSphereMachineConfig/" + mc}, false)
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Steps[0].Change; !strings.Contains(c, "spec.storagePolicyName: absent, and gitops (Update) wrote the object after the snapshot") ||
		!strings.Contains(c, `spec.template "kube-1.31" → "kube-1.30"`) {
		t.Fatalf("plan: %s; want the template restored and the absent storage policy left, said why", c)
	}
}
