package recovery

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/upgrade-console/upgrade-console/demo/controlplane"
	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

var cp *controlplane.Env

func TestMain(m *testing.M) { cptest.Main(m, &cp) }

// world is one management cluster with external etcd, written the way EKS-A,
// CAPI and etcdadm write it, in eksa-system under a cluster name of its own.
// The test plays the controllers: no controller runs on the test API server.
type world struct {
	t       *testing.T
	ctx     context.Context
	cfg     *rest.Config
	client  *upgrade.Client
	env     *Env
	cluster string
	ns      string
	sys     string
	now     time.Time
	audit   *upgrade.Auditor
	// writes counts the requests that are not reads (see countingConfig).
	writes *atomic.Int64
	// v1beta1: the API server serves Cluster API at v1beta1 alone (CAPI
	// before v1.11), so the world writes its CAPI objects in that shape.
	v1beta1 bool
}

const (
	oldEtcdVersion  = "3.5.15"
	newEtcdVersion  = "3.5.21"
	oldEtcdTemplate = "etcd-template-old"
	newEtcdTemplate = "etcd-template-new"
)

func newWorld(t *testing.T) *world {
	t.Helper()
	return newWorldOn(t, cp, false)
}

// newWorldOn is newWorld on a control plane of the test's, which serves
// Cluster API at v1beta1 alone when v1beta1 is set.
func newWorldOn(t *testing.T, cp *controlplane.Env, v1beta1 bool) *world {
	t.Helper()
	cfg, writes := countingConfig(cp.Config)
	client, err := upgrade.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{
		t: t, ctx: context.Background(), cfg: cfg, client: client, writes: writes,
		cluster: "c" + rand.String(6), ns: cptest.Namespace(t, cp.Config), sys: model.SystemNamespace,
		now: time.Now().Add(time.Hour), v1beta1: v1beta1,
	}
	w.env = &Env{Client: client, Cluster: w.cluster, ClusterNamespace: w.ns,
		Now: func() time.Time { return w.now }, PollInterval: 20 * time.Millisecond, PauseSettle: 20 * time.Millisecond}
	w.audit, err = upgrade.NewAuditor(filepath.Join(t.TempDir(), "audit.log"), upgrade.WithAuditIdentity("ops", "bastion"))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// countingConfig wraps the transport so the test can count every request
// that is not a read (GET, LIST, WATCH all use GET).
func countingConfig(base *rest.Config) (*rest.Config, *atomic.Int64) {
	cfg := rest.CopyConfig(base)
	n := &atomic.Int64{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				n.Add(1)
			}
			return rt.RoundTrip(r)
		})
	})
	return cfg, n
}

// envAnswered is the world's Env on a client that calls answered with each
// request the API server answered, after it did: an error it returns is the
// client's instead of the answer (an answer lost), and a write it makes
// lands before the console reads again.
func (w *world) envAnswered(answered func(*http.Request) error) *Env {
	w.t.Helper()
	cfg := rest.CopyConfig(w.cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err != nil {
				return resp, err
			}
			if herr := answered(r); herr != nil {
				resp.Body.Close()
				return nil, herr
			}
			return resp, nil
		})
	})
	client, err := upgrade.NewClient(cfg)
	if err != nil {
		w.t.Fatal(err)
	}
	env := *w.env
	env.Client = client
	return &env
}

// capi is a Cluster API resource at the version the world writes.
func (w *world) capi(gvr schema.GroupVersionResource) schema.GroupVersionResource {
	if w.v1beta1 {
		gvr.Version = "v1beta1"
	}
	return gvr
}

// capiRef is a reference to an object of group: by apiGroup (v1beta2) or by
// apiVersion (v1beta1).
func (w *world) capiRef(group, kind, name string) map[string]any {
	if w.v1beta1 {
		return map[string]any{"apiVersion": group + "/v1beta1", "kind": kind, "name": name}
	}
	return map[string]any{"apiGroup": group, "kind": kind, "name": name}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (w *world) res(gvr schema.GroupVersionResource, ns string) interface {
	Get(context.Context, string, metav1.GetOptions, ...string) (*unstructured.Unstructured, error)
} {
	return w.client.Dynamic.Resource(gvr).Namespace(ns)
}

func (w *world) create(gvr schema.GroupVersionResource, u *unstructured.Unstructured) *unstructured.Unstructured {
	w.t.Helper()
	got, err := w.client.Dynamic.Resource(gvr).Namespace(u.GetNamespace()).Create(w.ctx, u, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return got
}

func (w *world) setStatus(gvr schema.GroupVersionResource, ns, name string, status map[string]any) {
	w.t.Helper()
	u, err := w.client.Dynamic.Resource(gvr).Namespace(ns).Get(w.ctx, name, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	u.Object["status"] = status
	if _, err := w.client.Dynamic.Resource(gvr).Namespace(ns).UpdateStatus(w.ctx, u, metav1.UpdateOptions{}); err != nil {
		w.t.Fatalf("status of %s: %v", name, err)
	}
}

func obj(apiVersion, kind, ns, name string, labels, annotations map[string]any, spec map[string]any) *unstructured.Unstructured {
	md := map[string]any{"name": name, "namespace": ns}
	if labels != nil {
		md["labels"] = labels
	}
	if annotations != nil {
		md["annotations"] = annotations
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": md, "spec": spec}}
}

func etcdSpec(version, template string) map[string]any {
	return map[string]any{
		"replicas": int64(3),
		"infrastructureTemplate": map[string]any{
			"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "VSphereMachineTemplate", "name": template,
		},
		"etcdadmConfigSpec": map[string]any{
			"format":          "cloud-config",
			"cloudInitConfig": map[string]any{"version": version, "installDir": "/usr/bin"},
		},
	}
}

// seedEtcdRollout builds the state of etcd-first-member-fails: a snapshot of
// the old spec, the EtcdadmCluster on the new spec and marked upgrading, the
// KCP paused by EKS-A for the rollout, three old members and one new machine
// that never became ready.
func (w *world) seedEtcdRollout(kcpPaused bool) {
	w.t.Helper()
	w.create(upgrade.GVREKSACluster, obj("anywhere.eks.amazonaws.com/v1alpha1", "Cluster", w.ns, w.cluster, nil, nil,
		map[string]any{"kubernetesVersion": "1.31", "externalEtcdConfiguration": map[string]any{"count": int64(3)}}))
	oldEtcd := obj("etcdcluster.cluster.x-k8s.io/v1beta1", "EtcdadmCluster", w.sys, w.cluster+"-etcd",
		map[string]any{model.LabelClusterName: w.cluster}, nil, etcdSpec(oldEtcdVersion, oldEtcdTemplate))
	kcpAnn := map[string]any{model.AnnotationSkipPauseCPManagedEtcd: "true"}
	if kcpPaused {
		kcpAnn[model.AnnotationCAPIPaused] = "true"
	}
	kcpSpec := map[string]any{"replicas": int64(3), "version": "v1.30.14-eks-1-30-58",
		"machineTemplate": map[string]any{"spec": map[string]any{
			"infrastructureRef": w.capiRef("infrastructure.cluster.x-k8s.io", "VSphereMachineTemplate", "cp-template")}}}
	if w.v1beta1 {
		kcpSpec["machineTemplate"] = map[string]any{
			"infrastructureRef": w.capiRef("infrastructure.cluster.x-k8s.io", "VSphereMachineTemplate", "cp-template")}
		kcpSpec["kubeadmConfigSpec"] = map[string]any{}
	}
	kcpRes := w.capi(upgrade.GVRKCP)
	kcp := obj("controlplane.cluster.x-k8s.io/"+kcpRes.Version, "KubeadmControlPlane", w.sys, w.cluster,
		map[string]any{model.LabelClusterName: w.cluster}, kcpAnn, kcpSpec)
	w.create(kcpRes, kcp)

	// EKS-A applied the new spec and marked the rollout.
	newEtcd := oldEtcd.DeepCopy()
	newEtcd.Object["spec"] = etcdSpec(newEtcdVersion, newEtcdTemplate)
	newEtcd.SetAnnotations(map[string]string{model.AnnotationEtcdUpgrading: "true"})
	etcd := w.create(upgrade.GVREtcdadmCluster, newEtcd)
	w.setStatus(upgrade.GVREtcdadmCluster, w.sys, etcd.GetName(), map[string]any{
		"ready": false, "replicas": int64(3), "observedGeneration": etcd.GetGeneration(), "initialized": true, "creationComplete": true,
	})
	owner := map[string]any{"apiVersion": etcd.GetAPIVersion(), "kind": "EtcdadmCluster", "name": etcd.GetName(), "uid": string(etcd.GetUID()), "controller": true}
	// Names sort in creation order: the test creates them within one second.
	member := func(suffix string) {
		template := oldEtcdTemplate
		if suffix == "z" {
			template = newEtcdTemplate
		}
		m := obj("cluster.x-k8s.io/"+w.capi(gvrMachine).Version, "Machine", w.sys, w.cluster+"-etcd-"+suffix,
			map[string]any{model.LabelClusterName: w.cluster, model.LabelEtcdCluster: etcd.GetName()},
			map[string]any{clusterv1.TemplateClonedFromNameAnnotation: template},
			map[string]any{"clusterName": w.cluster,
				"bootstrap":         map[string]any{"configRef": w.capiRef("bootstrap.cluster.x-k8s.io", "EtcdadmConfig", "x-"+suffix)},
				"infrastructureRef": w.capiRef("infrastructure.cluster.x-k8s.io", "VSphereMachine", "x-"+suffix)})
		m.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: owner["apiVersion"].(string), Kind: "EtcdadmCluster", Name: etcd.GetName(), UID: etcd.GetUID(), Controller: ptr.To(true)}})
		phase := "Provisioning"
		if suffix != "z" {
			m.SetLabels(map[string]string{model.LabelClusterName: w.cluster, model.LabelEtcdCluster: etcd.GetName(), model.LabelEtcdReady: "true"})
			phase = "Running"
		}
		w.create(w.capi(gvrMachine), m)
		w.setStatus(w.capi(gvrMachine), w.sys, m.GetName(), map[string]any{"phase": phase})
	}
	for _, suffix := range []string{"a", "b", "c"} {
		member(suffix)
	}
	// The snapshot the console took before applying the new spec: after
	// the old members were built, before the new one.
	snap := upgrade.Snapshot{Format: upgrade.SnapshotFormat, Cluster: w.cluster, ClusterNamespace: w.ns,
		TakenAt: time.Now().UTC().Truncate(time.Second), TakenBy: "ops@bastion",
		Objects: []upgrade.SnapshotObject{{APIVersion: oldEtcd.GetAPIVersion(), Kind: "EtcdadmCluster", Namespace: w.sys,
			Name: oldEtcd.GetName(), Spec: etcdSpec(oldEtcdVersion, oldEtcdTemplate)}}}
	data, _ := json.Marshal(snap)
	_, err := w.client.Kube.CoreV1().ConfigMaps(w.sys).Create(w.ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: upgrade.SnapshotName(w.cluster, snap.TakenAt), Namespace: w.sys,
			Labels:      map[string]string{upgrade.LabelSnapshot: "true", upgrade.LabelCluster: w.cluster, upgrade.LabelManagedBy: upgrade.ManagerName},
			Annotations: map[string]string{"upgrade-console/taken-at": snap.TakenAt.Format(time.RFC3339)}},
		Data: map[string]string{upgrade.SnapshotDataKey: string(data)},
	}, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatal(err)
	}

	member("z")
	// 20 minutes later, the new member is still not ready.
	w.now = time.Now().Add(20 * time.Minute)
}

// playEtcdadm plays the etcdadm controller until the test ends: once the
// spec is back on the old version and the new machine is gone, etcd reports
// ready on the observed generation (what the real controller does when no
// machine needs a rollout).
func (w *world) playEtcdadm() {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	w.t.Cleanup(func() { cancel(); wg.Wait() })
	go func() {
		defer wg.Done()
		_ = wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			r := w.client.Dynamic.Resource(upgrade.GVREtcdadmCluster).Namespace(w.sys)
			u, err := r.Get(ctx, w.cluster+"-etcd", metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			v, _, _ := unstructured.NestedString(u.Object, "spec", "etcdadmConfigSpec", "cloudInitConfig", "version")
			if _, err := w.client.Dynamic.Resource(w.capi(gvrMachine)).Namespace(w.sys).Get(ctx, w.cluster+"-etcd-z", metav1.GetOptions{}); err == nil || v != oldEtcdVersion {
				return false, nil
			}
			ready, _, _ := unstructured.NestedBool(u.Object, "status", "ready")
			og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
			if ready && og == u.GetGeneration() {
				return false, nil
			}
			u.Object["status"] = map[string]any{"ready": true, "replicas": int64(3), "observedGeneration": u.GetGeneration(), "initialized": true, "creationComplete": true}
			_, _ = r.UpdateStatus(ctx, u, metav1.UpdateOptions{})
			return false, nil
		})
	}()
}

// state is what the rollback must leave: compared between runs.
type rollbackState struct {
	Version, Template     string
	Upgrading, EtcdReady  bool
	KCPPaused, EKSAPaused bool
	Record                string
	Machines              string
	KCPSpec               string
}

// rolledBack is the state a finished rollback of seedEtcdRollout leaves,
// the KCP's spec as it was before (kcpSpec).
func (w *world) rolledBack(kcpSpec string) rollbackState {
	return rollbackState{Version: oldEtcdVersion, Template: oldEtcdTemplate, EtcdReady: true, EKSAPaused: true,
		Record:   "done " + w.cluster + "-etcd-z " + w.cluster + "-etcd-a," + w.cluster + "-etcd-b," + w.cluster + "-etcd-c",
		Machines: w.cluster + "-etcd-a " + w.cluster + "-etcd-b " + w.cluster + "-etcd-c ", KCPSpec: kcpSpec}
}

func (w *world) rollbackState() rollbackState {
	w.t.Helper()
	var s rollbackState
	etcd, err := w.res(upgrade.GVREtcdadmCluster, w.sys).Get(w.ctx, w.cluster+"-etcd", metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	s.Version, _, _ = unstructured.NestedString(etcd.Object, "spec", "etcdadmConfigSpec", "cloudInitConfig", "version")
	s.Template, _, _ = unstructured.NestedString(etcd.Object, "spec", "infrastructureTemplate", "name")
	_, s.Upgrading = etcd.GetAnnotations()[model.AnnotationEtcdUpgrading]
	s.EtcdReady = readEtcdStatus(etcd).settled()
	kcp, err := w.res(w.capi(upgrade.GVRKCP), w.sys).Get(w.ctx, w.cluster, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	_, s.KCPPaused = kcp.GetAnnotations()[model.AnnotationCAPIPaused]
	spec, _ := json.Marshal(kcp.Object["spec"])
	s.KCPSpec = string(spec)
	c, err := w.res(upgrade.GVREKSACluster, w.ns).Get(w.ctx, w.cluster, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	s.EKSAPaused = c.GetAnnotations()[model.AnnotationEKSAPaused] == "true"
	if r, _ := readRollbackRecord(c, w.env); r != nil {
		s.Record = r.Phase + " " + r.NewMachine + " " + strings.Join(r.OldMachines, ",")
	}
	ms, err := w.env.etcdMachines(w.ctx)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, m := range ms {
		s.Machines += m.Name + " "
	}
	return s
}

func (w *world) lease(holder string, renewed time.Time) {
	w.t.Helper()
	_, err := w.client.Kube.CoordinationV1().Leases(w.sys).Create(w.ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: upgrade.LockName(w.cluster), Namespace: w.sys},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To(int32(60)),
			AcquireTime: &metav1.MicroTime{Time: renewed.Add(-time.Hour)}, RenewTime: &metav1.MicroTime{Time: renewed}},
	}, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	// Judged by its renewTime, on the world's clock: the API server's time
	// of this write (now, by the wall clock) would call it live.
	cptest.ForgetLeaseWrites(w.t, w.client.Kube, w.sys, upgrade.LockName(w.cluster))
}

func (w *world) auditEntries() []upgrade.AuditEntry {
	w.t.Helper()
	res, err := upgrade.ReadAudit(w.audit.Path(), upgrade.AuditFilter{})
	if err != nil || len(res.BadLines) > 0 {
		w.t.Fatalf("audit log: %v, bad lines %v", err, res.BadLines)
	}
	return res.Entries
}

func describeSteps(r Report) string {
	var b strings.Builder
	for _, s := range r.Steps {
		fmt.Fprintf(&b, "%d %s: %s (%s) %v\n", s.Index+1, s.Step, s.Status, s.Detail, s.Err)
	}
	return b.String()
}
