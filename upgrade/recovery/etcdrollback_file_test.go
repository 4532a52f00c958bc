package recovery

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// The local copy of the pre-upgrade snapshot (--snapshot-file): what the
// operator holds when the snapshot ConfigMap is gone.

// snapshotConfigMap returns the world's snapshot and the name of its
// ConfigMap.
func (w *world) snapshotConfigMap() (upgrade.Snapshot, string) {
	w.t.Helper()
	list, err := w.client.Kube.CoreV1().ConfigMaps(w.sys).List(w.ctx, metav1.ListOptions{
		LabelSelector: upgrade.LabelSnapshot + "=true," + upgrade.LabelCluster + "=" + w.cluster})
	if err != nil || len(list.Items) != 1 {
		w.t.Fatalf("snapshot ConfigMaps: %v (%d)", err, len(list.Items))
	}
	var snap upgrade.Snapshot
	if err := json.Unmarshal([]byte(list.Items[0].Data[upgrade.SnapshotDataKey]), &snap); err != nil {
		w.t.Fatal(err)
	}
	return snap, list.Items[0].Name
}

// localCopy writes the world's snapshot, changed by edit if given, as
// Snapshotter.save writes its local copy (indented JSON named after the
// ConfigMap) into dir, and returns the file's path.
func (w *world) localCopy(dir string, edit func(*upgrade.Snapshot)) string {
	w.t.Helper()
	snap, name := w.snapshotConfigMap()
	if edit != nil {
		edit(&snap)
	}
	return writeSnapshotFile(w.t, filepath.Join(dir, name+".json"), snap)
}

func writeSnapshotFile(t *testing.T, path string, snap upgrade.Snapshot) string {
	t.Helper()
	data, err := json.MarshalIndent(snap, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// deleteSnapshots is someone cleaning eksa-system: the snapshot ConfigMap
// is gone, the local copy is all that is left.
func (w *world) deleteSnapshots() {
	w.t.Helper()
	if err := w.client.Kube.CoreV1().ConfigMaps(w.sys).DeleteCollection(w.ctx, metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: upgrade.LabelCluster + "=" + w.cluster}); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) record() *rollbackRecord {
	w.t.Helper()
	c, err := w.res(upgrade.GVREKSACluster, w.ns).Get(w.ctx, w.cluster, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	r, err := readRollbackRecord(c, w.env)
	if err != nil {
		w.t.Fatal(err)
	}
	return r
}

// The snapshot ConfigMap was deleted: the rollback used to be refused with
// "the previous etcd spec is unknown". From the local copy it runs end to
// end and leaves the cluster exactly as a rollback from the ConfigMap does.
func TestEtcdRollbackFromTheLocalCopyWhenTheConfigMapIsGone(t *testing.T) {
	// The reference: the same rollback from the ConfigMap.
	ref, rp, want := referenceRollback(t)

	w := newWorld(t)
	w.seedEtcdRollout(true)
	file := w.localCopy(t.TempDir(), nil)
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	// Without the file: refused, and the refusal says where the local copy
	// is; it names the copy when this machine keeps one.
	refusal := func() string {
		t.Helper()
		_, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
		var refused *RefusedError
		if !errors.As(err, &refused) || refused.Failed()[0].Name != "snapshot" {
			t.Fatalf("err = %v, want a refusal on the snapshot", err)
		}
		return refused.Failed()[0].Detail
	}
	w.deleteSnapshots()
	detail := refusal()
	for _, part := range []string{"--snapshot-file", "$XDG_STATE_HOME/upgrade-console/snapshots", "~/.local/state/upgrade-console/snapshots",
		"upgrade-console-snapshot-" + w.cluster + "-<time>.json"} {
		if !strings.Contains(detail, part) {
			t.Errorf("refusal %q does not mention %q", detail, part)
		}
	}
	if strings.Contains(detail, "This machine keeps") {
		t.Errorf("refusal %q names a local copy; there is none", detail)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(state, "upgrade-console", "snapshots")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// A newer copy of another management cluster with the same names (its
	// EtcdadmCluster another object): it was counted, named as the newest
	// and pre-filled by the TUI, and only the rollback's check refused it.
	var other upgrade.Snapshot
	if err := json.Unmarshal(data, &other); err != nil {
		t.Fatal(err)
	}
	// Edited, its checksum no longer holds and the copy would be turned
	// away for that alone: without one, it is read as an older console's.
	other.Checksum = ""
	stacked := other
	stacked.Objects = []upgrade.SnapshotObject{{APIVersion: "controlplane.cluster.x-k8s.io/v1beta1", Kind: "KubeadmControlPlane",
		Namespace: w.sys, Name: w.cluster, UID: "0b0b0b0b-stacked", Spec: map[string]any{"version": "v1.30.5-eks-1-30-22"}}}
	for i := range other.Objects {
		if other.Objects[i].Kind == "EtcdadmCluster" {
			other.Objects[i].UID = "0a0a0a0a-another-cluster"
		}
	}
	// And a newer copy of a stacked-etcd cluster of the same name: no
	// EtcdadmCluster to restore, it was offered too.
	for name, snap := range map[string]upgrade.Snapshot{"20991231-235959": other, "20991231-235958": stacked} {
		b, err := json.Marshal(snap)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "upgrade-console-snapshot-"+w.cluster+"-"+name+".json"), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Those alone: the refusal said nothing of them, as the dialog said
	// "no local copy" beside them. Both are named, as another's.
	etcd, err := w.res(upgrade.GVREtcdadmCluster, w.sys).Get(w.ctx, w.cluster+"-etcd", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	etcdUID := string(etcd.GetUID())
	passed := "2 local copies named for " + w.cluster + " in " + dir + " are not offered: " +
		"1 of another cluster named " + w.cluster + ", whose EtcdadmCluster had UID 0a0a0a0a-another-cluster (this one's: " + etcdUID + "), taken " + other.TakenAt.UTC().Format(time.RFC3339) + "; " +
		"1 of a cluster named " + w.cluster + " with no EtcdadmCluster " + w.cluster + "-etcd (stacked etcd), taken " + other.TakenAt.UTC().Format(time.RFC3339)
	if detail := refusal(); !strings.Contains(detail, "This machine keeps no local copy of "+w.cluster+"'s snapshots; "+passed) {
		t.Errorf("refusal with only other clusters' copies:\n%s\nwant it to end with\n%s", detail, passed)
	}
	// The copy put where the console that took the snapshot keeps it.
	file = filepath.Join(dir, filepath.Base(file))
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if detail := refusal(); !strings.Contains(detail, "This machine keeps 1 local copy of "+w.cluster+"'s snapshots; the newest: `--snapshot-file "+file+"`. "+passed) {
		t.Errorf("refusal %q does not name the local copy %s, then the others", detail, file)
	}
	if copies, err := w.env.SnapshotCopies(w.ctx); err != nil || len(copies.Paths) != 1 || copies.Paths[0] != file || len(copies.Passed) != 2 {
		t.Errorf("copies %+v %v, want only %s offered, 2 passed", copies, err, file)
	}
	_, err = PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{Snapshot: strings.TrimSuffix(filepath.Base(file), ".json")})
	// Named by the flag, the deleted ConfigMap is bad input, whose fix
	// names the local copy.
	var named *model.InputError
	if !errors.As(err, &named) || named.Source != "--snapshot" || !strings.Contains(named.Fix, "This machine keeps it: `--snapshot-file "+file+"`") {
		t.Errorf("--snapshot of the deleted ConfigMap: %v, want bad input naming its local copy %s", err, file)
	}

	w.playEtcdadm()
	before := w.rollbackState()
	p, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{SnapshotFile: file, By: "ops@bastion"})
	if err != nil {
		t.Fatalf("plan from the local copy: %v", err)
	}
	if !strings.Contains(p.Title, "snapshot file "+file) {
		t.Errorf("title %q does not name the file", p.Title)
	}
	var snapPre *Precondition
	for i := range p.Preconditions {
		if p.Preconditions[i].Name == "snapshot" {
			snapPre = &p.Preconditions[i]
		}
	}
	if snapPre == nil || !snapPre.OK || !strings.Contains(snapPre.Detail, "file "+file) || !strings.Contains(snapPre.Detail, "by ops@bastion") {
		t.Errorf("snapshot precondition = %+v, want the file named", snapPre)
	}
	// The plan is the ConfigMap rollback's, step for step.
	if len(p.Steps) != len(rp.Steps) {
		t.Fatalf("%d steps, want %d", len(p.Steps), len(rp.Steps))
	}
	for i := range p.Steps {
		if p.Steps[i].Name == "delete-new-machine" {
			continue // the change names the machine's UID
		}
		if p.Steps[i].Name != rp.Steps[i].Name || strings.ReplaceAll(p.Steps[i].Change, w.cluster, "C") != strings.ReplaceAll(rp.Steps[i].Change, ref.cluster, "C") {
			t.Errorf("step %d: %s %q, want %s %q", i, p.Steps[i].Name, p.Steps[i].Change, rp.Steps[i].Name, rp.Steps[i].Change)
		}
	}

	x := &Executor{Audit: w.audit}
	if rep, err := x.DryRun(w.ctx, p); err != nil {
		t.Fatalf("dry run: %v\n%s", err, describeSteps(rep))
	}
	if got := w.rollbackState(); got != before {
		t.Fatalf("the dry run changed the cluster:\n%+v\n%+v", before, got)
	}
	rep, err := x.Run(w.ctx, p)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, describeSteps(rep))
	}
	if got := normalise(w, w.rollbackState()); got != want {
		t.Fatalf("final state from the file\n got %+v\nwant %+v (from the ConfigMap)", got, want)
	}
	snap, err := upgrade.LoadSnapshotFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if r := w.record(); r.Snapshot != "file:"+file || r.SnapshotDigest == "" || r.SnapshotDigest != snapshotDigest(snap) {
		t.Errorf("record snapshot = %q digest %q, want file:%s and the snapshot's digest", r.Snapshot, r.SnapshotDigest, file)
	}
	var started bool
	var steps int
	for _, e := range w.auditEntries() {
		if e.Action != ActionEtcdRollback || e.DryRun {
			continue
		}
		if e.Result == upgrade.AuditStarted {
			started = strings.Contains(e.Message, file)
		} else if e.Step != "" {
			steps++
		}
	}
	if !started || steps != len(p.Steps) {
		t.Errorf("audit: started entry names the file %v, %d step entries (want %d)", started, steps, len(p.Steps))
	}

	// Run again with no flag: the recorded file is read again, everything is in place.
	requireNothingLeft(t, w, x)
}

// The file's snapshot is what the preconditions compare with, as the
// ConfigMap's is: its etcd spec, its member count, its time. The ConfigMap
// is left in place: the file given is used, not it.
func TestEtcdRollbackFromAFileChecksTheSamePreconditions(t *testing.T) {
	cases := []struct {
		name string
		edit func(s *upgrade.Snapshot)
		want string
	}{
		{"taken after the new machine", func(s *upgrade.Snapshot) { s.TakenAt = time.Now().Add(time.Hour).UTC() }, "single-new-member"},
		{"taken after the new spec was applied", func(s *upgrade.Snapshot) {
			s.Objects[0].Spec = etcdSpec(newEtcdVersion, newEtcdTemplate)
		}, "rollout-in-progress"},
		{"of another member count", func(s *upgrade.Snapshot) { s.Objects[0].Spec["replicas"] = 5 }, "same-member-count"},
		{"without the EtcdadmCluster", func(s *upgrade.Snapshot) { s.Objects[0].Name = "someone-else-etcd" }, "snapshot"},
		// Another management cluster's, with the same names: refused on
		// the snapshot, not as "an older spec" of these members.
		{"of another cluster's EtcdadmCluster", func(s *upgrade.Snapshot) { s.Objects[0].UID = "0b4a9c2e-another-cluster" }, "snapshot"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.seedEtcdRollout(true)
			file := w.localCopy(t.TempDir(), tc.edit)
			_, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{SnapshotFile: file})
			var refused *RefusedError
			if !errors.As(err, &refused) {
				t.Fatalf("err = %v, want a refusal", err)
			}
			if f := refused.Failed(); f[0].Name != tc.want {
				t.Fatalf("failed preconditions = %+v, want %s first", f, tc.want)
			}
		})
	}
}

// A file that is not a snapshot of this cluster is bad input, named with
// the fix, and nothing is written.
func TestEtcdRollbackRefusesABadSnapshotFile(t *testing.T) {
	cases := []struct {
		name  string
		file  func(w *world, dir string) string
		wants []string
	}{
		{"another cluster's", func(w *world, dir string) string {
			return w.localCopy(dir, func(s *upgrade.Snapshot) { s.Cluster = "other" })
		}, []string{"Cluster NS/other", "not of Cluster NS/C", "--cluster"}},
		{"another namespace's cluster", func(w *world, dir string) string {
			return w.localCopy(dir, func(s *upgrade.Snapshot) { s.ClusterNamespace = "elsewhere" })
		}, []string{"Cluster elsewhere/C", "not of Cluster NS/C"}},
		{"missing", func(w *world, dir string) string { return filepath.Join(dir, "nope.json") }, []string{"no such file"}},
		{"not JSON", func(w *world, dir string) string {
			p := filepath.Join(dir, "x.json")
			if err := os.WriteFile(p, []byte("apiVersion: v1\nkind: ConfigMap\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}, []string{"not a snapshot"}},
		{"another format", func(w *world, dir string) string {
			return w.localCopy(dir, func(s *upgrade.Snapshot) { s.Format = 99 })
		}, []string{"format 99"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.seedEtcdRollout(true)
			file := tc.file(w, t.TempDir())
			w.deleteSnapshots()
			before := w.rollbackState()
			writes := w.writes.Load()
			p, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{SnapshotFile: file})
			var in *model.InputError
			if !errors.As(err, &in) || p != nil {
				t.Fatalf("plan %v, err = %v, want an input error", p, err)
			}
			msg := strings.ReplaceAll(strings.ReplaceAll(in.Error(), w.cluster, "C"), w.ns, "NS")
			for _, want := range append(tc.wants, "--snapshot-file "+strings.ReplaceAll(file, w.cluster, "C")) {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q lacks %q", msg, want)
				}
			}
			if in.Fix == "" || !strings.Contains(in.Fix, "upgrade-console/snapshots") {
				t.Errorf("fix %q does not say where the local copies are", in.Fix)
			}
			if n := w.writes.Load() - writes; n != 0 {
				t.Errorf("%d writes", n)
			}
			if after := w.rollbackState(); after != before {
				t.Errorf("the cluster changed:\n%+v\n%+v", before, after)
			}
		})
	}
}

func TestEtcdRollbackRefusesBothSnapshotFlags(t *testing.T) {
	w := newWorld(t)
	w.seedEtcdRollout(true)
	_, name := w.snapshotConfigMap()
	file := w.localCopy(t.TempDir(), nil)
	writes := w.writes.Load()
	_, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{Snapshot: name, SnapshotFile: file})
	var in *model.InputError
	if !errors.As(err, &in) {
		t.Fatalf("err = %v, want an input error", err)
	}
	for _, want := range []string{"--snapshot " + name, "--snapshot-file " + file, "not both"} {
		if !strings.Contains(in.Error(), want) {
			t.Errorf("error %q lacks %q", in.Error(), want)
		}
	}
	if n := w.writes.Load() - writes; n != 0 {
		t.Errorf("%d writes", n)
	}
}

// A rollback from a file, killed after any step, resumed with no snapshot
// flag: it reads the recorded file again and ends as an uninterrupted one.
// The file was given relative to a working directory the resumed run is
// not in: the record keeps its absolute path.
func TestEtcdRollbackFromAFileResumesAfterAnInterruptionAtEveryStep(t *testing.T) {
	var file string
	resumeAtEveryStep(t, resumeCase{
		start: func(t *testing.T, w *world) EtcdRollbackOptions {
			dir := t.TempDir()
			file = w.localCopy(dir, nil)
			w.deleteSnapshots()
			t.Chdir(dir) // a relative path, recorded absolute
			return EtcdRollbackOptions{SnapshotFile: filepath.Base(file)}
		},
		stopped: func(t *testing.T, w *world) {
			if r := w.record(); r == nil || r.Snapshot != "file:"+file {
				t.Fatalf("record %+v, want the file's absolute path", r)
			}
			t.Chdir(t.TempDir()) // resumed from elsewhere
		},
		resumed: func(t *testing.T, again *Plan) {
			if !strings.Contains(again.Title, "snapshot file "+file) {
				t.Errorf("resumed title %q does not name the file", again.Title)
			}
		},
	})
}

// interruptedFromAFile is a rollback from a local copy (the ConfigMap gone)
// killed right after its first step: EKS-A paused, the rollback recorded.
func interruptedFromAFile(t *testing.T) (*world, string) {
	t.Helper()
	w := newWorld(t)
	w.seedEtcdRollout(true)
	file := w.localCopy(t.TempDir(), nil)
	w.deleteSnapshots()
	w.interruptAfterFirstStep(EtcdRollbackOptions{SnapshotFile: file})
	return w, file
}

// A resumed rollback restores the snapshot it started with: from the same
// file, or a copy of it elsewhere, never from another snapshot.
func TestEtcdRollbackFromAFileResumesOnlyFromThatSnapshot(t *testing.T) {
	t.Run("the file was moved: the copy is accepted", func(t *testing.T) {
		w, file := interruptedFromAFile(t)
		w.playEtcdadm()
		moved := filepath.Join(t.TempDir(), "copy.json")
		if err := os.Rename(file, moved); err != nil {
			t.Fatal(err)
		}
		before := w.rollbackState()
		_, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
		var in *model.InputError
		if !errors.As(err, &in) || !strings.Contains(in.Error(), file) || !strings.Contains(in.Fix, "--snapshot-file") {
			t.Fatalf("err = %v, want an input error naming the recorded file and --snapshot-file", err)
		}
		if after := w.rollbackState(); after != before {
			t.Fatalf("the refused resume changed the cluster")
		}
		p, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{SnapshotFile: moved})
		if err != nil {
			t.Fatalf("resume with a copy: %v", err)
		}
		if !strings.Contains(p.Title, moved) || !strings.Contains(p.Title, "a copy of "+file) {
			t.Errorf("title %q", p.Title)
		}
		if rep, err := (&Executor{Audit: w.audit}).Run(w.ctx, p); err != nil {
			t.Fatalf("resumed run: %v\n%s", err, describeSteps(rep))
		}
		got := w.rollbackState()
		if got.Version != oldEtcdVersion || got.Template != oldEtcdTemplate || !got.EtcdReady || !strings.HasPrefix(got.Record, "done ") {
			t.Fatalf("final state: %+v", got)
		}
		if r := w.record(); r.Snapshot != "file:"+file {
			t.Errorf("the record's source changed to %q", r.Snapshot)
		}
	})

	t.Run("another snapshot file", func(t *testing.T) {
		w, file := interruptedFromAFile(t)
		// Same cluster, same name, other content.
		snap, err := upgrade.LoadSnapshotFile(file)
		if err != nil {
			t.Fatal(err)
		}
		snap.TakenBy = "someone@else"
		other := writeSnapshotFile(t, filepath.Join(t.TempDir(), filepath.Base(file)), *snap)
		writes := w.writes.Load()
		_, err = PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{SnapshotFile: other})
		var in *model.InputError
		if !errors.As(err, &in) || !strings.Contains(in.Error(), "not the snapshot the rollback started with") {
			t.Fatalf("err = %v, want an input error", err)
		}
		if n := w.writes.Load() - writes; n != 0 {
			t.Errorf("%d writes", n)
		}
	})

	t.Run("the recorded file changed", func(t *testing.T) {
		w, file := interruptedFromAFile(t)
		snap, err := upgrade.LoadSnapshotFile(file)
		if err != nil {
			t.Fatal(err)
		}
		snap.Objects[0].Spec = etcdSpec("3.5.9", oldEtcdTemplate)
		writeSnapshotFile(t, file, *snap)
		_, err = PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
		var in *model.InputError
		if !errors.As(err, &in) || !strings.Contains(in.Error(), "no longer holds the snapshot") {
			t.Fatalf("err = %v, want an input error", err)
		}
	})

	t.Run("a ConfigMap named", func(t *testing.T) {
		w, file := interruptedFromAFile(t)
		_, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{Snapshot: "upgrade-console-snapshot-" + w.cluster + "-20260101-000000"})
		var in *model.InputError
		if !errors.As(err, &in) || !strings.Contains(in.Error(), "without --snapshot") || !strings.Contains(in.Error(), file) {
			t.Fatalf("err = %v, want an input error naming the recorded file", err)
		}
	})
}

// A rollback from the ConfigMap, interrupted, and the ConfigMap deleted
// meanwhile: the resume is refused with the way out, and the local copy of
// that same snapshot finishes it.
func TestEtcdRollbackResumesFromTheLocalCopyOfItsConfigMap(t *testing.T) {
	w := newWorld(t)
	w.seedEtcdRollout(true)
	_, name := w.snapshotConfigMap()
	file := w.localCopy(t.TempDir(), nil)
	other := w.localCopy(t.TempDir(), func(s *upgrade.Snapshot) { s.TakenAt = s.TakenAt.Add(-time.Minute) })
	p, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(w.ctx)
	x := &Executor{Audit: w.audit, afterStep: func(int) { cancel() }}
	if _, err := x.Run(ctx, p); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v", err)
	}
	cancel()
	w.deleteSnapshots()
	w.playEtcdadm()

	_, err = PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
	var refused *RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("err = %v, want a refusal", err)
	}
	if f := refused.Failed(); f[0].Name != "snapshot" || !strings.Contains(f[0].Detail, "--snapshot-file") || !strings.Contains(f[0].Detail, name+".json") {
		t.Fatalf("failed preconditions = %+v, want the snapshot, naming its local copy", f)
	}
	_, err = PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{SnapshotFile: other})
	var in *model.InputError
	if !errors.As(err, &in) || !strings.Contains(in.Error(), "not the snapshot the rollback started with") {
		t.Fatalf("another snapshot's file: err = %v, want an input error", err)
	}

	again, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{SnapshotFile: file})
	if err != nil {
		t.Fatalf("resume from the local copy: %v", err)
	}
	if !strings.Contains(again.Title, "snapshot "+name+" (its local copy "+file+")") {
		t.Errorf("title %q", again.Title)
	}
	if rep, err := (&Executor{Audit: w.audit}).Run(w.ctx, again); err != nil {
		t.Fatalf("resumed run: %v\n%s", err, describeSteps(rep))
	}
	got := w.rollbackState()
	if got.Version != oldEtcdVersion || got.Template != oldEtcdTemplate || !got.EtcdReady || !strings.HasPrefix(got.Record, "done ") {
		t.Fatalf("final state: %+v", got)
	}
	if r := w.record(); r.Snapshot != name {
		t.Errorf("the record's source changed to %q", r.Snapshot)
	}
}
