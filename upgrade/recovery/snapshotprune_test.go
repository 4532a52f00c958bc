package recovery

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// snapshotCM saves a snapshot ConfigMap of the world's cluster name, taken
// at, of the Cluster in namespace ns; data replaces the snapshot when set.
func (w *world) snapshotCM(at time.Time, ns, data string) string {
	w.t.Helper()
	if data == "" {
		snap := upgrade.Snapshot{Format: upgrade.SnapshotFormat, Cluster: w.cluster, ClusterNamespace: ns,
			TakenAt: at, TakenBy: "ops@bastion",
			Objects: []upgrade.SnapshotObject{{APIVersion: "anywhere.eks.amazonaws.com/v1alpha1", Kind: "Cluster", Namespace: ns, Name: w.cluster,
				Spec: map[string]any{"kubernetesVersion": "1.31"}}}}
		b, _ := json.Marshal(snap)
		data = string(b)
	}
	name := upgrade.SnapshotName(w.cluster, at)
	if ns != w.ns {
		name += "-other"
	}
	_, err := w.client.Kube.CoreV1().ConfigMaps(w.sys).Create(w.ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.sys,
			Labels:      map[string]string{upgrade.LabelSnapshot: "true", upgrade.LabelCluster: w.cluster, upgrade.LabelManagedBy: upgrade.ManagerName},
			Annotations: map[string]string{"upgrade-console/taken-at": at.Format(time.RFC3339)}},
		Data: map[string]string{upgrade.SnapshotDataKey: data},
	}, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return name
}

func (w *world) configMapExists(name string) bool {
	w.t.Helper()
	_, err := w.client.Kube.CoreV1().ConfigMaps(w.sys).Get(w.ctx, name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		w.t.Fatal(err)
	}
	return err == nil
}

// Prune deletes the snapshots no rollback restores, and keeps the newest,
// the one an etcd rollback recorded on the Cluster restores, one that does
// not read as a snapshot, and leaves alone those of a Cluster of the same
// name in another namespace. Its dry run deletes nothing; a second run
// finds nothing to prune.
func TestSnapshotPruneKeepsWhatARollbackRestores(t *testing.T) {
	w := newWorld(t)
	base := time.Now().UTC().Truncate(time.Second).Add(-10 * time.Hour)
	oldest := w.snapshotCM(base, w.ns, "")
	recorded := w.snapshotCM(base.Add(time.Hour), w.ns, "")
	middle := w.snapshotCM(base.Add(2*time.Hour), w.ns, "")
	broken := w.snapshotCM(base.Add(3*time.Hour), w.ns, "{not json")
	newest := w.snapshotCM(base.Add(4*time.Hour), w.ns, "")
	other := w.snapshotCM(base.Add(5*time.Hour), "elsewhere", "")
	rec := rollbackRecord{Phase: "done", NewMachine: w.cluster + "-etcd-z", Snapshot: recorded}
	w.create(upgrade.GVREKSACluster, obj("anywhere.eks.amazonaws.com/v1alpha1", "Cluster", w.ns, w.cluster, nil,
		map[string]any{AnnotationEtcdRollback: rec.encode()}, map[string]any{"kubernetesVersion": "1.31"}))

	entries, err := ListSnapshots(w.ctx, w.env, 1)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	kept := map[string]string{}
	for _, e := range entries {
		listed = append(listed, e.Name)
		kept[e.Name] = e.Kept
	}
	if want := []string{newest, broken, middle, recorded, oldest}; !slices.Equal(listed, want) {
		t.Fatalf("listed %v, want %v (newest first, not %s)", listed, want, other)
	}
	if kept[newest] != keptNewest || kept[recorded] != keptRollback || kept[broken] == "" || kept[middle] != "" || kept[oldest] != "" {
		t.Fatalf("kept %v", kept)
	}

	p, _, err := PlanSnapshotPrune(w.ctx, w.env, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Steps) != 2 || p.Steps[0].Object != "ConfigMap "+w.sys+"/"+middle || p.Steps[1].Object != "ConfigMap "+w.sys+"/"+oldest {
		t.Fatalf("steps %+v, want the middle and the oldest", p.Steps)
	}
	x := &Executor{Audit: w.audit}
	if rep, err := x.DryRun(w.ctx, p); err != nil || rep.Steps[0].Status != StepDryRunOK {
		t.Fatalf("dry run: %v\n%s", err, describeSteps(rep))
	}
	if !w.configMapExists(middle) || !w.configMapExists(oldest) {
		t.Fatal("the dry run deleted a snapshot")
	}
	if rep, err := x.Run(w.ctx, p); err != nil {
		t.Fatalf("run: %v\n%s", err, describeSteps(rep))
	}
	for _, name := range []string{middle, oldest} {
		if w.configMapExists(name) {
			t.Errorf("%s not deleted", name)
		}
	}
	for _, name := range []string{newest, recorded, broken, other} {
		if !w.configMapExists(name) {
			t.Errorf("%s deleted", name)
		}
	}
	if rep, err := x.Run(w.ctx, p); err != nil || !rep.AllAlreadyDone() {
		t.Fatalf("the same plan again: %v\n%s", err, describeSteps(rep))
	}
	if p, _, err := PlanSnapshotPrune(w.ctx, w.env, 1); err != nil || len(p.Steps) != 0 {
		t.Fatalf("planned again: %v, %d steps; want nothing to prune", err, len(p.Steps))
	}
	var results []string
	for _, e := range w.auditEntries() {
		if e.Action == ActionSnapshotPrune && !e.DryRun {
			results = append(results, e.Result)
		}
	}
	if want := []string{"started", "ok", "ok", "finished", "started", "already-done", "already-done", "finished"}; !slices.Equal(results, want) {
		t.Errorf("audit results %v, want %v", results, want)
	}
}

// A snapshot changed since it was listed is not deleted: the step fails
// as a concurrent change, and the run stops there.
func TestSnapshotPruneLeavesASnapshotChangedSinceListed(t *testing.T) {
	w := newWorld(t)
	base := time.Now().UTC().Truncate(time.Second).Add(-3 * time.Hour)
	old := w.snapshotCM(base, w.ns, "")
	w.snapshotCM(base.Add(time.Hour), w.ns, "")
	p, _, err := PlanSnapshotPrune(w.ctx, w.env, 1)
	if err != nil || len(p.Steps) != 1 {
		t.Fatalf("plan: %v", err)
	}
	cms := w.client.Kube.CoreV1().ConfigMaps(w.sys)
	cm, err := cms.Get(w.ctx, old, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Annotations["note"] = "keep: under investigation"
	if _, err := cms.Update(w.ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = (&Executor{Audit: w.audit}).Run(w.ctx, p)
	var cc *ConcurrentChangeError
	if !errors.As(err, &cc) || !w.configMapExists(old) {
		t.Fatalf("run: %v, still there %t; want a concurrent change, and the snapshot kept", err, w.configMapExists(old))
	}
	if _, err := ListSnapshots(w.ctx, w.env, 0); err == nil {
		t.Error("keep 0 taken: it would delete the snapshot a rollback restores")
	}
}

// An etcd rollback planned on an older snapshot (--snapshot) records it on
// the Cluster while the prune's confirmation waits: its ConfigMap is
// unchanged, and the prune deleted what a resume of the rollback reads.
func TestSnapshotPruneLeavesASnapshotARollbackRecordedSinceListed(t *testing.T) {
	w := newWorld(t)
	base := time.Now().UTC().Truncate(time.Second).Add(-3 * time.Hour)
	old := w.snapshotCM(base, w.ns, "")
	w.snapshotCM(base.Add(time.Hour), w.ns, "")
	w.create(upgrade.GVREKSACluster, obj("anywhere.eks.amazonaws.com/v1alpha1", "Cluster", w.ns, w.cluster, nil, nil, map[string]any{"kubernetesVersion": "1.31"}))
	p, _, err := PlanSnapshotPrune(w.ctx, w.env, 1)
	if err != nil || len(p.Steps) != 1 {
		t.Fatalf("plan: %v", err)
	}
	rec := rollbackRecord{Phase: "running", NewMachine: w.cluster + "-etcd-z", Snapshot: old}
	enc, err := json.Marshal(rec.encode())
	if err != nil {
		t.Fatal(err)
	}
	w.patch(upgrade.GVREKSACluster, w.ns, w.cluster, `{"metadata":{"annotations":{"`+AnnotationEtcdRollback+`":`+string(enc)+`}}}`)
	rep, err := (&Executor{Audit: w.audit}).Run(w.ctx, p)
	var cc *ConcurrentChangeError
	if !errors.As(err, &cc) || !rep.Refused(err) || !w.configMapExists(old) {
		t.Fatalf("run: %v, still there %t; want refused, and the recorded snapshot kept\n%s", err, w.configMapExists(old), describeSteps(rep))
	}
}

// A --cluster or -n that names no Cluster read "no snapshot of mgmt" (exit
// 0), as if no rollback were possible, where every other command says the
// Cluster is not found. A Cluster deleted after its upgrades still has its
// snapshots listed.
func TestSnapshotListOfNoClusterSaysNotFound(t *testing.T) {
	w := newWorld(t)
	w.snapshotCM(time.Now().UTC().Truncate(time.Second).Add(-time.Hour), w.ns, "")
	if got, err := ListSnapshots(w.ctx, w.env, 1); err != nil || len(got) != 1 {
		t.Fatalf("the snapshots of a deleted Cluster: %v, %d listed", err, len(got))
	}
	for name, env := range map[string]Env{"another namespace": {ClusterNamespace: "elsewhere"}, "another name": {Cluster: "nope"}} {
		e := *w.env
		if env.ClusterNamespace != "" {
			e.ClusterNamespace = env.ClusterNamespace
		}
		if env.Cluster != "" {
			e.Cluster = env.Cluster
		}
		_, err := ListSnapshots(w.ctx, &e, 1)
		var ie *model.InputError
		if !errors.As(err, &ie) || !strings.Contains(ie.Problem, "not found") || !strings.Contains(ie.Fix, "-n") {
			t.Errorf("%s: %v, want the Cluster not found, with the fix", name, err)
		}
		if _, _, err := PlanSnapshotPrune(w.ctx, &e, 1); !errors.As(err, &ie) {
			t.Errorf("%s: prune planned (%v), want the Cluster not found", name, err)
		}
	}
}
