package upgrade

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
)

func TestSnapshotContents(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	audit := &memAudit{}
	dir := t.TempDir()
	live, err := w.client.Dynamic.Resource(GVREKSACluster).Namespace(w.ns).Get(ctx, "mgmt", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 21, 23, 5, 9, 0, time.UTC)
	s := &Snapshotter{Client: w.client, Audit: audit, Dir: dir}
	snap, ref, err := s.Take(ctx, w.spec.Cluster, w.spec.Docs, "alice@laptop/1", at)
	if err != nil {
		t.Fatal(err)
	}
	if ref.Name != "upgrade-console-snapshot-mgmt-20261121-230509" || ref.Namespace != w.ns {
		t.Errorf("ConfigMap %s/%s", ref.Namespace, ref.Name)
	}
	if !strings.HasPrefix(ref.File, dir) || !strings.Contains(ref.Where(), ref.File) || !strings.Contains(ref.Where(), "ConfigMap "+w.ns+"/"+ref.Name) {
		t.Errorf("where: %q", ref.Where())
	}

	// What a rollback needs, in restore order: etcd, control plane, workers,
	// the spec's provider documents, the EKS-A Cluster last.
	var kinds []string
	for _, o := range snap.Objects {
		kinds = append(kinds, o.Kind+"/"+o.Name)
	}
	want := []string{"EtcdadmCluster/mgmt-etcd", "KubeadmControlPlane/mgmt", "MachineDeployment/mgmt-md-0", "MachineDeployment/mgmt-md-1",
		"VSphereDatacenterConfig/mgmt", "VSphereMachineConfig/mgmt-cp", "VSphereMachineConfig/mgmt-etcd", "VSphereMachineConfig/mgmt-md-0", "VSphereMachineConfig/mgmt-md-1",
		"Cluster/mgmt"}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("objects %v, want %v", kinds, want)
	}
	cl := snap.Object("Cluster", "mgmt")
	if cl.Spec["kubernetesVersion"] != "1.30" || cl.ResourceVersion != live.GetResourceVersion() || cl.Generation != live.GetGeneration() {
		t.Errorf("Cluster saved as %v rv %s gen %d; live rv %s gen %d", cl.Spec["kubernetesVersion"], cl.ResourceVersion, cl.Generation, live.GetResourceVersion(), live.GetGeneration())
	}
	for _, name := range []string{"mgmt-md-0", "mgmt-md-1"} {
		md := snap.Object("MachineDeployment", name)
		roles := map[string]string{}
		for _, r := range md.Templates {
			roles[r.Role] = r.Kind + "/" + r.Name
		}
		if !strings.HasPrefix(roles["infrastructure"], "VSphereMachineTemplate/"+name) || !strings.HasPrefix(roles["bootstrap"], "KubeadmConfigTemplate/") {
			t.Errorf("%s templates %v", name, roles)
		}
	}
	if kcp := snap.Object("KubeadmControlPlane", "mgmt"); len(kcp.Templates) != 1 || kcp.Templates[0].Kind != "VSphereMachineTemplate" {
		t.Errorf("KCP templates %+v", kcp.Templates)
	}
	if e := snap.Object("EtcdadmCluster", "mgmt-etcd"); len(e.Templates) != 1 || e.Spec["etcdadmConfigSpec"] == nil {
		t.Errorf("etcd saved as %+v", e)
	}

	// Both copies read back the same, and the cluster lists it.
	fromCM, err := LoadSnapshot(ctx, w.client.Kube, ref.Namespace, ref.Name)
	if err != nil {
		t.Fatal(err)
	}
	fromFile, err := LoadSnapshotFile(ref.File)
	if err != nil {
		t.Fatal(err)
	}
	// The ConfigMap's has its creation by the API server's clock, the
	// time it is compared with the cluster's objects by; the file's has
	// none and falls back to TakenAt, this machine's clock.
	if fromCM.Created.IsZero() || !fromFile.Created.IsZero() || !fromCM.When().Equal(fromCM.Created) || !fromFile.When().Equal(at) {
		t.Errorf("created: ConfigMap %s, file %s", fromCM.Created, fromFile.Created)
	}
	stripped := *fromCM
	stripped.Created = time.Time{}
	if !reflect.DeepEqual(&stripped, fromFile) || fromCM.Cluster != "mgmt" || !fromCM.TakenAt.Equal(at) || fromCM.TakenBy != "alice@laptop/1" {
		t.Errorf("read back differs: %+v vs %+v", fromCM, fromFile)
	}
	// A copy edited since (an etcd version changed by hand) is refused:
	// it passed every check, and only the plan's change line showed it.
	if fromFile.Checksum == "" {
		t.Error("the snapshot carries no checksum")
	}
	data, err := os.ReadFile(ref.File)
	if err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(t.TempDir(), "edited.json")
	if err := os.WriteFile(edited, bytes.Replace(data, []byte(`"mgmt-etcd"`), []byte(`"mgmt-etcd-x"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	var ie *model.InputError
	if _, err := LoadSnapshotFile(edited); !errors.As(err, &ie) || ie.Field != "checksum" {
		t.Errorf("an edited copy: %v", err)
	}
	cms, err := SnapshotConfigMaps(ctx, w.client.Kube, w.ns, "mgmt")
	if err != nil || len(cms) != 1 || cms[0].Name != ref.Name || !SnapshotTakenAt(&cms[0]).Equal(cms[0].CreationTimestamp.Time) {
		t.Errorf("list: %d %v", len(cms), err)
	}
	cm, err := w.client.Kube.CoreV1().ConfigMaps(w.ns).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Labels[LabelCluster] != "mgmt" || cm.Labels[LabelSnapshot] != "true" || cm.Labels[LabelManagedBy] != ManagerName {
		t.Errorf("labels %v", cm.Labels)
	}
	if got := audit.actions(); len(got) != 1 || got[0] != "snapshot:ok" || !strings.Contains(audit.entries[0].Message, ref.File) {
		t.Errorf("audit %v %+v", got, audit.entries)
	}
	// The restorable document carries no server-managed fields.
	u := cl.Unstructured()
	if u.GetResourceVersion() != "" || u.Object["status"] != nil || u.GetName() != "mgmt" {
		t.Errorf("restorable Cluster: %v", u.Object)
	}
}

func TestLoadSnapshotErrors(t *testing.T) {
	ctx := context.Background()
	c := newTestClient(t)
	_, err := LoadSnapshot(ctx, c.Kube, "eksa-system", "no-such-snapshot")
	if err == nil || !strings.Contains(err.Error(), "no such snapshot") {
		t.Errorf("missing snapshot: %v", err)
	}
	f := t.TempDir() + "/bad.json"
	if err := os.WriteFile(f, []byte(`{"format": 7, "cluster": "x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSnapshotFile(f); err == nil || !strings.Contains(err.Error(), "format 7") {
		t.Errorf("wrong format: %v", err)
	}
	// JSON with nothing of a snapshot is not one of another version's.
	if err := os.WriteFile(f, []byte(`{"hello": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSnapshotFile(f); err == nil || !strings.Contains(err.Error(), "not an upgrade-console snapshot") || strings.Contains(err.Error(), "format 0") {
		t.Errorf("not a snapshot: %v", err)
	}
}

// A damaged copy is bad input naming the field: read as it was, a spec of
// null gave made-up refusal reasons, and a field of the wrong type the API
// server's schema error at the dry run.
func TestLoadSnapshotFileRefusesADamagedEtcdSpec(t *testing.T) {
	good := `{"apiVersion":"etcdcluster.cluster.x-k8s.io/v1beta1","kind":"EtcdadmCluster","namespace":"eksa-system","name":"mgmt-etcd","uid":"u1",
"spec":{"replicas":3,"etcdadmConfigSpec":{"cloudInitConfig":{"version":"3.5.15"}},"infrastructureTemplate":{"kind":"VSphereMachineTemplate","name":"t1"}}}`
	for _, tc := range []struct{ name, object, field string }{
		{"whole", good, ""},
		{"null spec", strings.Replace(good, `"spec":{"replicas":3,"etcdadmConfigSpec":{"cloudInitConfig":{"version":"3.5.15"}},"infrastructureTemplate":{"kind":"VSphereMachineTemplate","name":"t1"}}`, `"spec":null`, 1), "objects[0].spec"},
		{"garbled config", strings.Replace(good, `"etcdadmConfigSpec":{"cloudInitConfig":{"version":"3.5.15"}}`, `"etcdadmConfigSpec":"3.5.15"`, 1), "objects[0].spec.etcdadmConfigSpec"},
		{"no template", strings.Replace(good, `,"infrastructureTemplate":{"kind":"VSphereMachineTemplate","name":"t1"}`, ``, 1), "objects[0].spec.infrastructureTemplate"},
		{"replicas of text", strings.Replace(good, `"replicas":3`, `"replicas":"3"`, 1), "objects[0].spec.replicas"},
		{"no kind", strings.Replace(good, `"kind":"EtcdadmCluster",`, ``, 1), "objects[0]"},
	} {
		f := filepath.Join(t.TempDir(), "snap.json")
		if err := os.WriteFile(f, []byte(`{"format":`+strconv.Itoa(SnapshotFormat)+`,"cluster":"mgmt","objects":[`+tc.object+`]}`), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := LoadSnapshotFile(f)
		var ie *model.InputError
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.field != "" && (!errors.As(err, &ie) || ie.Field != tc.field || ie.Source != f || !strings.Contains(ie.Fix, "damaged")):
			t.Errorf("%s: %#v, want bad input on %s", tc.name, err, tc.field)
		}
	}
}

// The copies are the cluster's own, newest first: another cluster whose name
// starts with this one's, and files of other shapes, are left out.
func TestLocalSnapshotCopies(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	if got, err := LocalSnapshotCopies("mgmt"); err != nil || len(got) != 0 {
		t.Fatalf("no snapshots directory: %v, %v", got, err)
	}
	dir := filepath.Join(state, "upgrade-console", "snapshots")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 21, 22, 47, 58, 0, time.UTC)
	names := []string{
		SnapshotName("mgmt", t0) + ".json",
		SnapshotName("mgmt", t0.Add(24*time.Hour)) + ".json",
		SnapshotName("mgmt-2", t0.Add(48*time.Hour)) + ".json",
		SnapshotName("mgmt", t0) + ".json.tmp",
		"upgrade-console-snapshot-mgmt-latest.json",
		// A second copy of one second (another cluster named mgmt).
		SnapshotName("mgmt", t0) + "-2.json",
		SnapshotName("mgmt", t0) + "-x.json",
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := LocalSnapshotCopies("mgmt")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, names[1]), filepath.Join(dir, names[5]), filepath.Join(dir, names[0])}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("copies = %v, want %v", got, want)
	}
}

// A snapshot the cluster refuses (here its ConfigMap's name is taken; for an
// operator, a ConfigMap create forbidden) leaves no local copy behind: it
// would be offered to a later rollback as the snapshot of an upgrade that
// never started.
func TestSnapshotRefusedLeavesNoLocalCopy(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	dir := t.TempDir()
	at := time.Date(2026, 11, 21, 23, 6, 0, 0, time.UTC)
	taken := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: SnapshotName("mgmt", at), Namespace: w.ns}}
	if _, err := w.client.Kube.CoreV1().ConfigMaps(w.ns).Create(ctx, taken, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s := &Snapshotter{Client: w.client, Audit: &memAudit{}, Dir: dir}
	if _, _, err := s.Take(ctx, w.spec.Cluster, w.spec.Docs, "alice@laptop/1", at); err == nil {
		t.Fatal("a snapshot whose ConfigMap could not be created was taken")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(left) != 0 {
		t.Errorf("local copies left: %v", left)
	}
}

// A local snapshot copy is never replaced: two clusters with the same name
// snapshotted in the same second (two management clusters upgraded from one
// machine) each keep their own file.
func TestLocalSnapshotCopyIsNeverReplaced(t *testing.T) {
	base := filepath.Join(t.TempDir(), "snapshots", "upgrade-console-snapshot-mgmt-20261123-075339")
	first, err := writeNewFile(base, ".json", []byte(`{"first":true}`))
	if err != nil || first != base+".json" {
		t.Fatalf("first copy: %q, %v", first, err)
	}
	second, err := writeNewFile(base, ".json", []byte(`{"second":true}`))
	if err != nil || second != base+"-2.json" {
		t.Fatalf("second copy: %q, %v; want %s-2.json", second, err, base)
	}
	for path, want := range map[string]string{first: `{"first":true}`, second: `{"second":true}`} {
		if got, err := os.ReadFile(path); err != nil || string(got) != want {
			t.Errorf("%s holds %q (%v), want %q", path, got, err, want)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(base), ".tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// The control plane's inline files can carry a registry mirror's login:
// the snapshot, a ConfigMap, keeps their paths, not them.
func TestSnapshotLeavesOutControlPlaneFileContents(t *testing.T) {
	kcp := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlane",
		"metadata": map[string]any{"name": "mgmt", "namespace": "eksa-system"},
		"spec": map[string]any{"version": "v1.30.5-eks-1-30-22", "kubeadmConfigSpec": map[string]any{"files": []any{
			map[string]any{"path": "/etc/containerd/config_append.toml", "content": `password = "hunter2"`},
			map[string]any{"path": "/etc/kubernetes/manifests/kube-vip.yaml", "contentFrom": map[string]any{"secret": map[string]any{"name": "s", "key": "k"}}},
		}}},
	}}
	o := snapshotObject(kcp)
	files, _, _ := unstructured.NestedSlice(o.Spec, "kubeadmConfigSpec", "files")
	b, _ := json.Marshal(o)
	if len(files) != 2 || strings.Contains(string(b), "hunter2") ||
		files[0].(map[string]any)["content"] != "(left out of the snapshot)" ||
		files[1].(map[string]any)["contentFrom"] == nil || o.Spec["version"] != "v1.30.5-eks-1-30-22" {
		t.Errorf("snapshot of the control plane: %s", b)
	}
	if c, _, _ := unstructured.NestedSlice(kcp.Object, "spec", "kubeadmConfigSpec", "files"); c[0].(map[string]any)["content"] != `password = "hunter2"` {
		t.Errorf("the object read was changed: %v", c)
	}
}

// Newest is by the API server's clock: a snapshot taken a day before by a
// machine whose clock ran a day ahead read as newest by its taken-at, and
// prune deleted the snapshot of the upgrade under way, which the etcd
// rollback then could not restore.
func TestSnapshotConfigMapsNewestByTheAPIServersClock(t *testing.T) {
	c := newTestClient(t)
	ns := cptest.Namespace(t, env.Config)
	ctx := context.Background()
	create := func(name string, takenAt time.Time) {
		t.Helper()
		_, err := c.Kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
			Labels:      map[string]string{LabelSnapshot: "true", LabelCluster: "mgmt", LabelManagedBy: ManagerName},
			Annotations: map[string]string{annotationTakenAt: takenAt.Format(time.RFC3339)}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	create("skewed", time.Now().Add(24*time.Hour))
	time.Sleep(1100 * time.Millisecond) // the API server keeps whole seconds
	create("current", time.Now())
	cms, err := SnapshotConfigMaps(ctx, c.Kube, ns, "mgmt")
	if err != nil || len(cms) != 2 || cms[0].Name != "current" {
		var names []string
		for _, cm := range cms {
			names = append(names, cm.Name)
		}
		t.Errorf("newest first: %v, %v; want current first", names, err)
	}
}

// A snapshot too large for its ConfigMap names its largest objects and what
// to look for: it said its size alone, no object and no fix.
func TestLargestObjectsNamesWhatToLookAt(t *testing.T) {
	big := strings.Repeat("x", 300<<10)
	objs := []SnapshotObject{
		{Kind: "Cluster", Namespace: "default", Name: "mgmt", Spec: map[string]any{"a": "b"}},
		{Kind: "KubeadmControlPlane", Namespace: "eksa-system", Name: "mgmt", Annotations: map[string]string{"huge": big}},
		{Kind: "EtcdadmCluster", Namespace: "eksa-system", Name: "mgmt-etcd", Annotations: map[string]string{"huge": big[:100<<10]}},
	}
	got := largestObjects(objs)
	if !strings.HasPrefix(got, "the largest are KubeadmControlPlane eksa-system/mgmt (300 KiB), EtcdadmCluster eksa-system/mgmt-etcd (100 KiB), ") || !strings.Contains(got, "fix: ") {
		t.Errorf("got %q", got)
	}
}
