package upgrade

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/upgrade-console/upgrade-console/model"
)

// A snapshot is what a rollback needs, taken before the console changes
// anything: the specs of the EKS-A Cluster, the KubeadmControlPlane, the
// EtcdadmCluster, the MachineDeployments (with the names of the templates they
// point at, because a rollback restores references, and the old templates
// stay in the cluster) and of every other object the new spec file changes.
// It is kept twice: in a ConfigMap in eksa-system, where a colleague on
// another machine finds it, and in a local file, which survives a cluster
// whose API server is gone.

// SnapshotFormat is the version of the snapshot document.
const SnapshotFormat = 1

// SnapshotDataKey is the ConfigMap key holding the snapshot JSON.
const SnapshotDataKey = "snapshot.json"

// maxConfigMapData keeps well under the API server's 1 MiB object limit (the
// ConfigMap's own metadata and the encoding take the rest).
const maxConfigMapData = 900 * 1024

// Snapshot is the saved state.
type Snapshot struct {
	Format int `json:"format"`
	// Cluster and ClusterNamespace name the EKS-A Cluster.
	Cluster          string    `json:"cluster"`
	ClusterNamespace string    `json:"clusterNamespace"`
	TakenAt          time.Time `json:"takenAt"`
	TakenBy          string    `json:"takenBy"`
	// Objects are in the order a rollback restores them (the EKS-A Cluster last).
	Objects []SnapshotObject `json:"objects"`
	// Checksum is "sha256:<hex>" of Objects as compact JSON, written with
	// the snapshot: a copy edited since (a version changed by hand) is
	// refused rather than restored. Empty in snapshots of older consoles.
	Checksum string `json:"checksum,omitempty"`
	// Created is the API server's creation time of the snapshot's
	// ConfigMap, when it was read from one (SnapshotOf); zero for a file.
	Created time.Time `json:"-"`
}

// When is the time the snapshot is compared with the cluster's objects by:
// its ConfigMap's creation, by the API server's clock like theirs, when it
// has one; else TakenAt, the clock of the machine that took it, which may
// run ahead or behind.
func (s *Snapshot) When() time.Time {
	if !s.Created.IsZero() {
		return s.Created
	}
	return s.TakenAt
}

// ContentDigest is "sha256:<hex>" of b: a snapshot's Checksum (of its
// objects as compact JSON), and the etcd rollback's record of the snapshot
// it restores.
func ContentDigest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// SnapshotObject is one object as it was.
type SnapshotObject struct {
	APIVersion      string            `json:"apiVersion"`
	Kind            string            `json:"kind"`
	Namespace       string            `json:"namespace,omitempty"`
	Name            string            `json:"name"`
	UID             string            `json:"uid"`
	ResourceVersion string            `json:"resourceVersion"`
	Generation      int64             `json:"generation"`
	Labels          map[string]string `json:"labels,omitempty"`
	Annotations     map[string]string `json:"annotations,omitempty"`
	Spec            map[string]any    `json:"spec,omitempty"`
	// Templates are the infrastructure and bootstrap templates the spec
	// refers to (MachineDeployment, KubeadmControlPlane, EtcdadmCluster).
	Templates []TemplateRef `json:"templates,omitempty"`
}

// TemplateRef names a template an object points at.
type TemplateRef struct {
	Role     string `json:"role"` // "infrastructure" or "bootstrap"
	APIGroup string `json:"apiGroup,omitempty"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
}

// Ref is "Kind namespace/name".
func (o SnapshotObject) Ref() string { return objectRef(o.Kind, o.Namespace, o.Name) }

// Object returns the saved object of that kind and name, nil when absent.
func (s *Snapshot) Object(kind, name string) *SnapshotObject {
	return s.ObjectIn(kind, "", name)
}

// ObjectIn is Object in namespace alone (any namespace when empty): an
// object named by the operator must not be taken for its namesake in
// another namespace.
func (s *Snapshot) ObjectIn(kind, namespace, name string) *SnapshotObject {
	for i := range s.Objects {
		if s.Objects[i].Kind == kind && s.Objects[i].Name == name && (namespace == "" || s.Objects[i].Namespace == namespace) {
			return &s.Objects[i]
		}
	}
	return nil
}

// Unstructured returns the saved object as an apply-able document (no status,
// no server-managed metadata).
func (o SnapshotObject) Unstructured() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(o.APIVersion)
	u.SetKind(o.Kind)
	u.SetNamespace(o.Namespace)
	u.SetName(o.Name)
	u.SetLabels(o.Labels)
	u.SetAnnotations(o.Annotations)
	if o.Spec != nil {
		u.Object["spec"] = runtime.DeepCopyJSON(o.Spec)
	}
	return u
}

// SnapshotRef says where a snapshot was saved.
type SnapshotRef struct {
	Namespace string    // of the ConfigMap (eksa-system)
	Name      string    // of the ConfigMap
	File      string    // local copy; empty when it could not be written
	TakenAt   time.Time // from the ConfigMap's label/data
	Objects   int
}

// Where is one line for the operator.
func (r SnapshotRef) Where() string {
	s := fmt.Sprintf("ConfigMap %s/%s", r.Namespace, r.Name)
	if r.File != "" {
		s += " and " + r.File
	}
	return s
}

// SnapshotName is the ConfigMap name for a snapshot taken at t.
func SnapshotName(cluster string, t time.Time) string {
	return snapshotNamePrefix(cluster) + t.UTC().Format(snapshotStamp)
}

const snapshotStamp = "20060102-150405"

func snapshotNamePrefix(cluster string) string { return "upgrade-console-snapshot-" + cluster + "-" }

// Snapshotter takes snapshots.
type Snapshotter struct {
	Client *Client
	// Audit records the snapshot. Required: Take is ErrNoAudit without it.
	Audit Recorder
	// Dir receives the local copy (StateDir()/snapshots when empty).
	Dir string
}

// Take reads the objects a rollback needs and saves them. extra are further
// objects the upgrade will change (the provider objects of the spec file);
// those that exist are saved too. Nothing is written to the cluster if a read
// fails.
func (s *Snapshotter) Take(ctx context.Context, cluster *unstructured.Unstructured, extra []*unstructured.Unstructured, by string, now time.Time) (*Snapshot, SnapshotRef, error) {
	if err := requireAudit(s.Audit); err != nil {
		return nil, SnapshotRef{}, err
	}
	snap, err := s.collect(ctx, cluster, extra, by, now)
	if err != nil {
		return nil, SnapshotRef{}, err
	}
	ref, err := s.save(ctx, snap)
	return snap, ref, err
}

func (s *Snapshotter) collect(ctx context.Context, cluster *unstructured.Unstructured, extra []*unstructured.Unstructured, by string, now time.Time) (*Snapshot, error) {
	name := cluster.GetName()
	snap := &Snapshot{
		Format:           SnapshotFormat,
		Cluster:          name,
		ClusterNamespace: cluster.GetNamespace(),
		TakenAt:          now.UTC(),
		TakenBy:          by,
	}
	seen := map[string]bool{}
	add := func(u *unstructured.Unstructured) {
		o := snapshotObject(u)
		if seen[o.Ref()] {
			return
		}
		seen[o.Ref()] = true
		snap.Objects = append(snap.Objects, o)
	}
	dyn := s.Client.Dynamic
	// etcd first, then the control plane, then the workers: the order a
	// rollback restores them in.
	etcd, err := dyn.Resource(GVREtcdadmCluster).Namespace(s.Client.Sys()).Get(ctx, name+"-etcd", metav1.GetOptions{})
	switch {
	case err == nil:
		add(etcd)
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		// stacked etcd, or etcdadm not installed
	default:
		return nil, fmt.Errorf("snapshot: read EtcdadmCluster %s/%s-etcd: %w", s.Client.Sys(), name, err)
	}
	kcpRes, err := s.Client.CAPIResource(GVRKCP)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	mdRes, err := s.Client.CAPIResource(GVRMachineDeploy)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	kcp, err := dyn.Resource(kcpRes).Namespace(s.Client.Sys()).Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		add(kcp)
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("snapshot: KubeadmControlPlane %s/%s not found: the EKS-A controller has not generated it (check the Cluster's status.failureMessage and the eksa-controller-manager logs)", s.Client.Sys(), name)
	default:
		return nil, fmt.Errorf("snapshot: read KubeadmControlPlane %s/%s: %w", s.Client.Sys(), name, err)
	}
	mds, err := dyn.Resource(mdRes).Namespace(s.Client.Sys()).List(ctx, metav1.ListOptions{
		LabelSelector: model.LabelClusterName + "=" + name,
	})
	if err != nil {
		return nil, fmt.Errorf("snapshot: list MachineDeployments of %s in %s: %w", name, s.Client.Sys(), err)
	}
	sort.Slice(mds.Items, func(i, j int) bool { return mds.Items[i].GetName() < mds.Items[j].GetName() })
	for i := range mds.Items {
		add(&mds.Items[i])
	}
	// The provider objects the spec file changes, as they are now.
	for _, doc := range extra {
		if isEKSACluster(doc) {
			continue
		}
		live, err := s.Client.get(ctx, doc)
		if apierrors.IsNotFound(err) {
			continue // created by the upgrade; a rollback need not restore it
		}
		if err != nil {
			return nil, fmt.Errorf("snapshot: read %s: %w", docRef(doc), err)
		}
		add(live)
	}
	live, err := dyn.Resource(GVREKSACluster).Namespace(cluster.GetNamespace()).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("snapshot: read Cluster %s/%s: %w", cluster.GetNamespace(), name, err)
	}
	add(live)
	return snap, nil
}

func snapshotObject(u *unstructured.Unstructured) SnapshotObject {
	o := SnapshotObject{
		APIVersion:      u.GetAPIVersion(),
		Kind:            u.GetKind(),
		Namespace:       u.GetNamespace(),
		Name:            u.GetName(),
		UID:             string(u.GetUID()),
		ResourceVersion: u.GetResourceVersion(),
		Generation:      u.GetGeneration(),
		Labels:          u.GetLabels(),
		Annotations:     u.GetAnnotations(),
	}
	delete(o.Annotations, "kubectl.kubernetes.io/last-applied-configuration")
	if spec, ok := u.Object["spec"].(map[string]any); ok {
		o.Spec = runtime.DeepCopyJSON(spec)
	}
	if o.Kind == "KubeadmControlPlane" {
		leaveOutFileContents(o.Spec)
	}
	o.Templates = templateRefs(u)
	return o
}

// leaveOutFileContents leaves out each inline file the control plane's
// nodes are given (kubeadmConfigSpec.files[].content), its path and the
// rest kept. Those files can carry credentials (a registry mirror's login
// in containerd's config), and the snapshot is a ConfigMap, which more
// identities may read than may read the control plane. No rollback
// restores the control plane from a snapshot. Neither a digest nor a size
// is kept: a templated file with a password in it is guessed from either.
func leaveOutFileContents(spec map[string]any) {
	files, _, _ := unstructured.NestedSlice(spec, "kubeadmConfigSpec", "files")
	if len(files) == 0 {
		return
	}
	for _, f := range files {
		m, ok := f.(map[string]any)
		if !ok {
			continue
		}
		if _, ok := m["content"].(string); ok {
			m["content"] = "(left out of the snapshot)"
		}
	}
	_ = unstructured.SetNestedSlice(spec, files, "kubeadmConfigSpec", "files")
}

// templateRefs reads the template references of the kinds that have them, in
// both the v1beta2 (apiGroup) and v1beta1 (apiVersion) reference shapes.
func templateRefs(u *unstructured.Unstructured) []TemplateRef {
	type refPath struct {
		role string
		path []string
	}
	var paths []refPath
	switch u.GetKind() {
	case "MachineDeployment":
		paths = []refPath{
			{"infrastructure", []string{"spec", "template", "spec", "infrastructureRef"}},
			{"bootstrap", []string{"spec", "template", "spec", "bootstrap", "configRef"}},
		}
	case "KubeadmControlPlane":
		paths = []refPath{
			{"infrastructure", []string{"spec", "machineTemplate", "spec", "infrastructureRef"}}, // v1beta2
			{"infrastructure", []string{"spec", "machineTemplate", "infrastructureRef"}},         // v1beta1
		}
	case "EtcdadmCluster":
		paths = []refPath{{"infrastructure", []string{"spec", "infrastructureTemplate"}}}
	}
	var refs []TemplateRef
	for _, p := range paths {
		m, found, _ := unstructured.NestedMap(u.Object, p.path...)
		if !found {
			continue
		}
		r := TemplateRef{Role: p.role}
		r.Kind, _ = m["kind"].(string)
		r.Name, _ = m["name"].(string)
		r.APIGroup, _ = m["apiGroup"].(string)
		if r.APIGroup == "" {
			if av, ok := m["apiVersion"].(string); ok {
				r.APIGroup, _, _ = strings.Cut(av, "/")
			}
		}
		if r.Name != "" {
			refs = append(refs, r)
		}
	}
	return refs
}

func (s *Snapshotter) save(ctx context.Context, snap *Snapshot) (SnapshotRef, error) {
	objects, err := json.Marshal(snap.Objects)
	if err != nil {
		return SnapshotRef{}, fmt.Errorf("snapshot: encode: %w", err)
	}
	snap.Checksum = ContentDigest(objects)
	data, err := json.MarshalIndent(snap, "", "  ")
	if err != nil {
		return SnapshotRef{}, fmt.Errorf("snapshot: encode: %w", err)
	}
	ref := SnapshotRef{
		Namespace: s.Client.Sys(),
		Name:      SnapshotName(snap.Cluster, snap.TakenAt),
		TakenAt:   snap.TakenAt,
		Objects:   len(snap.Objects),
	}
	if len(data) > maxConfigMapData {
		return ref, fmt.Errorf("snapshot of %d objects is %d KiB, more than a ConfigMap holds (%d KiB); nothing was changed, and the upgrade did not start: %s",
			len(snap.Objects), len(data)/1024, maxConfigMapData/1024, largestObjects(snap.Objects))
	}
	// The local copy first: it is the one that survives a broken cluster, and
	// writing it cannot change the cluster.
	dir := s.Dir
	if dir == "" {
		sd, err := StateDir()
		if err != nil {
			return ref, err
		}
		dir = filepath.Join(sd, "snapshots")
	}
	file, err := writeNewFile(filepath.Join(dir, ref.Name), ".json", data)
	if err != nil {
		return ref, fmt.Errorf("snapshot: write local copy: %w (fix: set XDG_STATE_HOME to a directory this user can write; nothing was changed, and the upgrade did not start)", err)
	}
	ref.File = file

	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      ref.Name,
			Namespace: ref.Namespace,
			Labels: map[string]string{
				LabelManagedBy: ManagerName,
				LabelCluster:   snap.Cluster,
				LabelSnapshot:  "true",
			},
			Annotations: map[string]string{
				"upgrade-console/taken-by": snap.TakenBy,
				annotationTakenAt:          snap.TakenAt.Format(time.RFC3339),
			},
		},
		Data: map[string]string{SnapshotDataKey: string(data)},
	}
	wctx, cancel := landing(ctx)
	_, err = s.Client.Kube.CoreV1().ConfigMaps(ref.Namespace).Create(wctx, cm, metav1.CreateOptions{FieldManager: ManagerName})
	cancel()
	result, msg := resultOf(err)
	objs := make([]string, 0, len(snap.Objects))
	for _, o := range snap.Objects {
		objs = append(objs, o.Ref())
	}
	aerr := audit(ctx, s.Audit, AuditEntry{
		Time:    snap.TakenAt,
		Cluster: snap.Cluster,
		Action:  "snapshot",
		Object:  "ConfigMap " + ref.Namespace + "/" + ref.Name,
		After:   map[string]any{"objects": objs, "file": file},
		Result:  result,
		Error:   msg,
		Message: "pre-upgrade snapshot, local copy " + file,
	})
	if err != nil {
		// The upgrade does not start without its snapshot in the cluster:
		// a local copy left behind would be offered to a later rollback
		// (LocalSnapshotCopies) as the snapshot of an upgrade that never
		// was.
		if rerr := os.Remove(file); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			aerr = errors.Join(aerr, fmt.Errorf("snapshot: remove the local copy %s of a snapshot the cluster refused: %w", file, rerr))
		}
		if mayHaveLanded(wctx, err) {
			// Made all the same, it is a snapshot of an upgrade that
			// never was, offered to a later rollback and to prune.
			err = fmt.Errorf("%w; the ConfigMap may have been created all the same: delete it (kubectl -n %s delete configmap %s), as the upgrade did not start", err, ref.Namespace, ref.Name)
		}
		return ref, errors.Join(fmt.Errorf("snapshot: create ConfigMap %s/%s: %w", ref.Namespace, ref.Name, err), aerr)
	}
	return ref, aerr
}

// LoadSnapshot reads a snapshot back from its ConfigMap.
func LoadSnapshot(ctx context.Context, kube kubernetes.Interface, namespace, name string) (*Snapshot, error) {
	cm, err := kube.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, &model.InputError{Source: "ConfigMap " + namespace + "/" + name, Problem: "no such snapshot",
			Fix: "list the snapshots with `kubectl -n " + namespace + " get configmaps -l " + LabelSnapshot + "=true`"}
	}
	if err != nil {
		return nil, fmt.Errorf("read snapshot ConfigMap %s/%s: %w", namespace, name, err)
	}
	return SnapshotOf(cm)
}

// largestObjects names the largest objects of a snapshot too large for its
// ConfigMap, and what to do: a cluster's objects are a few KiB each, so one
// that weighs hundreds carries something that does not belong (a large
// annotation, say).
func largestObjects(objs []SnapshotObject) string {
	type sized struct {
		ref  string
		size int
	}
	var all []sized
	for _, o := range objs {
		b, _ := json.Marshal(o)
		all = append(all, sized{o.Ref(), len(b)})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].size > all[j].size })
	var parts []string
	for _, s := range all[:min(3, len(all))] {
		parts = append(parts, fmt.Sprintf("%s (%d KiB)", s.ref, s.size/1024))
	}
	return "the largest are " + strings.Join(parts, ", ") + "; fix: look for what makes them that large (`kubectl get … -o yaml`: a large annotation or label, say) and remove what does not belong"
}

// SnapshotOf decodes the snapshot a ConfigMap holds.
func SnapshotOf(cm *corev1.ConfigMap) (*Snapshot, error) {
	source := "ConfigMap " + cm.Namespace + "/" + cm.Name
	data, ok := cm.Data[SnapshotDataKey]
	if !ok {
		return nil, &model.InputError{Source: source, Field: "data." + SnapshotDataKey,
			Problem: "missing: this ConfigMap is not an upgrade-console snapshot"}
	}
	snap, err := decodeSnapshot(source, []byte(data))
	if err != nil {
		return nil, err
	}
	snap.Created = cm.CreationTimestamp.Time
	return snap, nil
}

// LocalSnapshotCopies lists the local copies of a cluster's snapshots that
// this machine keeps (StateDir()/snapshots), newest first. Only names of the
// form SnapshotName writes count, so cluster "mgmt" does not pick up the
// copies of "mgmt-2". A missing directory is no copies.
func LocalSnapshotCopies(cluster string) ([]string, error) {
	sd, err := StateDir()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(sd, "snapshots")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list the local snapshot copies in %s: %w", dir, err)
	}
	prefix := snapshotNamePrefix(cluster)
	type copyFile struct {
		path, stamp string
		n           int
	}
	var found []copyFile
	for _, e := range entries {
		stamp, ok := strings.CutPrefix(strings.TrimSuffix(e.Name(), ".json"), prefix)
		if !ok || e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		// A second copy of the same second carries a number (writeNewFile).
		n := 1
		if len(stamp) > len(snapshotStamp) {
			num, ok := strings.CutPrefix(stamp[len(snapshotStamp):], "-")
			v, err := strconv.Atoi(num)
			if !ok || err != nil || v < 2 || strconv.Itoa(v) != num {
				continue
			}
			stamp, n = stamp[:len(snapshotStamp)], v
		}
		if _, err := time.Parse(snapshotStamp, stamp); err != nil {
			continue
		}
		found = append(found, copyFile{filepath.Join(dir, e.Name()), stamp, n})
	}
	// Newest first: the stamp sorts as the time it names, and of one
	// second the copy written last has the highest number.
	sort.Slice(found, func(i, j int) bool {
		if found[i].stamp != found[j].stamp {
			return found[i].stamp > found[j].stamp
		}
		return found[i].n > found[j].n
	})
	out := make([]string, len(found))
	for i, f := range found {
		out[i] = f.path
	}
	return out, nil
}

// LoadSnapshotFile reads a snapshot from its local copy.
func LoadSnapshotFile(path string) (*Snapshot, error) {
	data, err := ReadInputFile(path, MaxSnapshotBytes)
	if err != nil {
		return nil, &model.InputError{Source: path, Problem: "cannot read the snapshot: " + unwrapPathErr(err), Fix: "give the path of a snapshot file written by upgrade-console"}
	}
	return decodeSnapshot(path, data)
}

func decodeSnapshot(source string, data []byte) (*Snapshot, error) {
	var s Snapshot
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, &model.InputError{Source: source, Problem: "not a snapshot: " + err.Error()}
	}
	if s.Format == 0 && s.Cluster == "" && len(s.Objects) == 0 {
		// JSON, but nothing of a snapshot: "format 0, use the version
		// that took it" sent the operator after a console that never did.
		return nil, &model.InputError{Source: source, Problem: "not an upgrade-console snapshot: it has no format, cluster or objects",
			Fix: "give a snapshot file the console wrote (upgrade-console-snapshot-<cluster>-<time>.json)"}
	}
	if s.Format != SnapshotFormat {
		return nil, &model.InputError{Source: source, Field: "format",
			Problem: fmt.Sprintf("snapshot format %d, this console reads format %d", s.Format, SnapshotFormat),
			Fix:     "use the upgrade-console version that took the snapshot"}
	}
	if s.Cluster == "" || len(s.Objects) == 0 {
		return nil, &model.InputError{Source: source, Problem: "snapshot names no cluster or holds no objects"}
	}
	if s.Checksum != "" {
		// Over the objects as written (compacted: the file is indented),
		// not as decoded, whose numbers are float64.
		var raw struct {
			Objects json.RawMessage `json:"objects"`
		}
		var compact bytes.Buffer
		if json.Unmarshal(data, &raw) != nil || json.Compact(&compact, raw.Objects) != nil || ContentDigest(compact.Bytes()) != s.Checksum {
			return nil, &model.InputError{Source: source, Field: "checksum",
				Problem: "the objects are not the ones the console wrote: the snapshot was changed since",
				Fix:     "use an unedited copy, or the snapshot ConfigMap it was copied from (--snapshot NAME)"}
		}
	}
	for i, o := range s.Objects {
		if err := checkSnapshotObject(source, i, o); err != nil {
			return nil, err
		}
	}
	return &s, nil
}

// checkSnapshotObject refuses an object a restore could not use as it
// stands: read as it was, a damaged local copy (a spec of null, a field of
// the wrong type) gave refusal reasons that were not so ("the snapshot's 0
// replicas", "4 new etcd machines") or the API server's schema error at the
// dry run, in place of "this file is damaged".
func checkSnapshotObject(source string, i int, o SnapshotObject) error {
	field := fmt.Sprintf("objects[%d]", i)
	bad := func(f, problem string) error {
		return &model.InputError{Source: source, Field: f, Problem: problem,
			Fix: "the snapshot is damaged: use another copy of it, or the snapshot ConfigMap it was copied from (--snapshot NAME)"}
	}
	if o.Kind == "" || o.Name == "" {
		return bad(field, "has no kind or no name")
	}
	if o.Kind != "EtcdadmCluster" {
		return nil
	}
	field += ".spec"
	if o.Spec == nil {
		return bad(field, "EtcdadmCluster "+o.Name+" has no spec")
	}
	if _, ok := o.Spec["etcdadmConfigSpec"].(map[string]any); !ok {
		return bad(field+".etcdadmConfigSpec", "is not an object")
	}
	tmpl, ok := o.Spec["infrastructureTemplate"].(map[string]any)
	if name, _ := tmpl["name"].(string); !ok || name == "" {
		return bad(field+".infrastructureTemplate", "is not an object with a name")
	}
	if r, ok := o.Spec["replicas"]; ok {
		if n, isNum := r.(float64); !isNum || n < 1 || n != float64(int64(n)) {
			return bad(field+".replicas", fmt.Sprintf("is %v, not a number of members", r))
		}
	}
	return nil
}

// SnapshotConfigMaps lists the snapshot ConfigMaps labelled for cluster in
// namespace, newest first (SnapshotTakenAt): the etcd rollback restores the
// first, and a prune keeps it, so both must read "newest" alike. Newest is
// by the API server's clock: by the taken-at of the console's, a snapshot
// taken a day before from a machine whose clock ran a day ahead was newest,
// and prune deleted the one of the upgrade under way. The error
// is the API server's, as it came (a Forbidden the callers tell apart).
func SnapshotConfigMaps(ctx context.Context, kube kubernetes.Interface, namespace, cluster string) ([]corev1.ConfigMap, error) {
	list, err := kube.CoreV1().ConfigMaps(namespace).List(ctx, metav1.ListOptions{
		LabelSelector: LabelSnapshot + "=true," + LabelCluster + "=" + cluster,
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(list.Items, func(i, j int) bool {
		a, b := &list.Items[i], &list.Items[j]
		if ta, tb := SnapshotTakenAt(a), SnapshotTakenAt(b); !ta.Equal(tb) {
			return ta.After(tb)
		}
		// The same second by the API server's clock: its console's.
		return annotatedTakenAt(a).After(annotatedTakenAt(b))
	})
	return list.Items, nil
}

// SnapshotTakenAt is when the snapshot a ConfigMap holds was taken, by the
// API server's clock: the ConfigMap's creation, else (an object that has
// none, in tests) its taken-at annotation, the console machine's clock.
func SnapshotTakenAt(cm *corev1.ConfigMap) time.Time {
	if !cm.CreationTimestamp.IsZero() {
		return cm.CreationTimestamp.Time
	}
	return annotatedTakenAt(cm)
}

// annotatedTakenAt is a snapshot ConfigMap's taken-at annotation (zero
// when it has none that parses).
func annotatedTakenAt(cm *corev1.ConfigMap) time.Time {
	t, _ := time.Parse(time.RFC3339, cm.Annotations[annotationTakenAt])
	return t
}

// annotationTakenAt on a snapshot ConfigMap is when it was taken (RFC 3339).
const annotationTakenAt = "upgrade-console/taken-at"

// writeNewFile writes data to base+ext, or, when a file has that name
// already, to base-2+ext, base-3+ext…, and returns the path it wrote: a
// local snapshot copy is never replaced. Two management clusters with the
// same name upgraded from one machine in the same second had one file, the
// second's, and the first operator's fallback named it.
func writeNewFile(base, ext string, data []byte) (string, error) {
	dir := filepath.Dir(base)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(base))
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	for i := 1; i <= 100; i++ {
		path := base + ext
		if i > 1 {
			path = fmt.Sprintf("%s-%d%s", base, i, ext)
		}
		// A hard link fails where the name exists: no check-then-write race.
		err := os.Link(tmp.Name(), path)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		syncDir(dir)
		return path, nil
	}
	return "", fmt.Errorf("%s%s and 99 numbered copies exist already", base, ext)
}

func objectRef(kind, ns, name string) string {
	if ns == "" {
		return kind + " " + name
	}
	return kind + " " + ns + "/" + name
}

func docRef(u *unstructured.Unstructured) string {
	return objectRef(u.GetKind(), u.GetNamespace(), u.GetName())
}

func isEKSACluster(u *unstructured.Unstructured) bool {
	gv, _ := schema.ParseGroupVersion(u.GetAPIVersion())
	return gv.Group == GVREKSACluster.Group && u.GetKind() == "Cluster"
}
