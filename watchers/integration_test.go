package watchers

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upgrade-console/upgrade-console/demo/controlplane"
	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/model"
)

var env *controlplane.Env

// TestMain starts the shared control plane, except for a benchmark-only run
// (-run '^$'), which needs none.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() == "^$" {
		os.Exit(m.Run())
	}
	cptest.Main(m, &env)
}

var (
	gvrEKSACluster = schema.GroupVersionResource{Group: eksaGroup, Version: "v1alpha1", Resource: "clusters"}
	gvrMachine     = schema.GroupVersionResource{Group: capiGroup, Version: "v1beta2", Resource: "machines"}
	gvrNodeUpgrade = schema.GroupVersionResource{Group: eksaGroup, Version: "v1alpha1", Resource: "nodeupgrades"}
)

const testCluster = "mgmt"

func run(t *testing.T, cfg *rest.Config, ns string, tune ...func(*Options)) *Watcher {
	t.Helper()
	opts := Options{Config: cfg, ClusterName: testCluster, ClusterNamespace: ns, SystemNamespace: ns, Context: "test"}
	for _, f := range tune {
		f(&opts)
	}
	w, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return w
}

// waitState polls the latest snapshot until cond holds, with a deadline.
func waitState(t *testing.T, w *Watcher, what string, cond func(*model.ClusterState) bool) *model.ClusterState {
	t.Helper()
	var last *model.ClusterState
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 90*time.Second, true, func(context.Context) (bool, error) {
		last = w.Latest()
		return last != nil && cond(last), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v\nlast snapshot: %s", what, err, describe(last))
	}
	return last
}

func describe(s *model.ClusterState) string {
	if s == nil {
		return "none"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "v%d %s machines=%d nodes=%d nodeUpgrades=%d events=%d cluster=%v", s.Version, s.Connection,
		s.Machines.Len(), s.Nodes.Len(), s.NodeUpgrades.Len(), len(s.Events), s.Cluster != nil)
	for k, src := range s.Sources {
		fmt.Fprintf(&b, "\n  %s: %+v", k, src)
	}
	return b.String()
}

func allSynced(s *model.ClusterState) bool {
	if len(s.Sources) < len(kindSpecs) {
		return false
	}
	for _, src := range s.Sources {
		if !src.Synced && src.Forbidden == "" {
			return false
		}
	}
	return true
}

func create(t *testing.T, dc dynamic.Interface, gvr schema.GroupVersionResource, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	got, err := dc.Resource(gvr).Namespace(u.GetNamespace()).Create(context.Background(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating %s %s: %v", gvr.Resource, u.GetName(), err)
	}
	return got
}

func updateStatus(t *testing.T, dc dynamic.Interface, gvr schema.GroupVersionResource, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	got, err := dc.Resource(gvr).Namespace(u.GetNamespace()).UpdateStatus(context.Background(), u, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("updating status of %s %s: %v", gvr.Resource, u.GetName(), err)
	}
	return got
}

func eksaCluster(ns string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": eksaGroup + "/v1alpha1", "kind": "Cluster",
		"metadata": map[string]any{"name": testCluster, "namespace": ns},
		"spec": map[string]any{
			"kubernetesVersion": "1.30",
			"eksaVersion":       "v0.21.1",
			"controlPlaneConfiguration": map[string]any{
				"count": int64(3), "endpoint": map[string]any{"host": "10.0.0.1"},
			},
			"workerNodeGroupConfigurations": []any{map[string]any{"name": "md-0", "count": int64(2)}},
			"clusterNetwork":                map[string]any{"cniConfig": map[string]any{"cilium": map[string]any{}}},
		},
	}}
}

func v1beta1Cond(typ, status, severity, reason string, at time.Time) map[string]any {
	c := map[string]any{"type": typ, "status": status, "lastTransitionTime": at.UTC().Format(time.RFC3339)}
	if severity != "" {
		c["severity"] = severity
	}
	if reason != "" {
		c["reason"] = reason
	}
	return c
}

func machine(ns, name string, role model.MachineRole) *unstructured.Unstructured {
	labels := map[string]any{model.LabelClusterName: testCluster}
	switch role {
	case model.RoleEtcd:
		labels[model.LabelEtcdCluster] = testCluster + "-etcd"
	case model.RoleControlPlane:
		labels[model.LabelControlPlane] = ""
		labels[model.LabelControlPlaneName] = testCluster
	default:
		labels[model.LabelDeploymentName] = testCluster + "-md-0"
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": capiGroup + "/v1beta2", "kind": "Machine",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": labels},
		"spec": map[string]any{
			"clusterName": testCluster,
			"version":     "v1.30.14-eks-1-30-58",
			"bootstrap": map[string]any{"configRef": map[string]any{
				"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfig", "name": name}},
			"infrastructureRef": map[string]any{"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "VSphereMachine", "name": name},
		},
	}}
}

// TestSnapshotTranslatesBothConditionDialects checks the whole data path on
// a real API server: discovery, informers, translation of the EKS-A Cluster
// (v1beta1 conditions with severity), a Machine written at v1beta2
// (metav1.Condition) and read back, the other cluster's objects left out.
func TestSnapshotTranslatesBothConditionDialects(t *testing.T) {
	cfg := env.Config
	ns := cptest.Namespace(t, cfg)
	dc := cptest.Dynamic(t, cfg)
	at := time.Now().Add(-time.Minute).Truncate(time.Second)

	c := create(t, dc, gvrEKSACluster, eksaCluster(ns))
	c.Object["status"] = map[string]any{
		"observedGeneration": c.GetGeneration(),
		"conditions": []any{
			v1beta1Cond("ControlPlaneReady", "False", "Info", "RollingUpgradeInProgress", at),
			v1beta1Cond("Ready", "False", "Info", "RollingUpgradeInProgress", at),
		},
	}
	updateStatus(t, dc, gvrEKSACluster, c)

	m := create(t, dc, gvrMachine, machine(ns, testCluster+"-cp-a", model.RoleControlPlane))
	m.Object["status"] = map[string]any{
		"phase":   "Running",
		"nodeRef": map[string]any{"name": "node-a"},
		"conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "reason": "Ready", "message": "", "observedGeneration": int64(1),
			"lastTransitionTime": at.UTC().Format(time.RFC3339)}},
	}
	updateStatus(t, dc, gvrMachine, m)
	other := machine(ns, "other-cp-a", model.RoleControlPlane)
	other.SetLabels(map[string]string{model.LabelClusterName: "other", model.LabelControlPlane: ""})
	create(t, dc, gvrMachine, other)

	w := run(t, cfg, ns)
	s := waitState(t, w, "cluster and machine", func(s *model.ClusterState) bool {
		return s.Cluster != nil && s.Machines.Len() == 1 && s.Machines.At(0).Phase == "Running" && allSynced(s)
	})
	if s.Connection != model.Live || s.Context != "test" || s.ClusterName != testCluster {
		t.Errorf("snapshot header: %s %q %q", s.Connection, s.Context, s.ClusterName)
	}
	cond, ok := s.Cluster.Conditions.Get("ControlPlaneReady")
	if !ok || cond.Severity != model.SeverityInfo || cond.Reason != "RollingUpgradeInProgress" || !cond.LastTransitionTime.Equal(at) {
		t.Errorf("EKS-A condition = %+v", cond)
	}
	if !s.Cluster.CNIManaged() || s.Cluster.ControlPlaneCount != 3 || len(s.Cluster.WorkerGroups) != 1 || s.Cluster.SpecChangedAt.IsZero() {
		t.Errorf("EKS-A spec = %+v", s.Cluster)
	}
	got := s.Machines.At(0)
	mc, ok := got.Conditions.Get("Ready")
	if got.Role != model.RoleControlPlane || got.NodeName != "node-a" || got.Owner != testCluster || !ok || mc.ObservedGeneration != 1 || mc.Severity != "" {
		t.Errorf("machine = %+v", got)
	}
	for _, k := range []model.Kind{model.KindMachine, model.KindKubeadmControlPlane} {
		if src := s.Source(k); src.Version != "v1beta2" || !src.Installed {
			t.Errorf("%s source = %+v, want v1beta2", k, src)
		}
	}
	// Translation happened once, in the informer: the cache holds entries.
	for _, in := range w.insts {
		for _, o := range in.informer.GetStore().List() {
			if _, ok := o.(*entry); !ok {
				t.Fatalf("%s cache holds %T, want *entry", in.spec.kind, o)
			}
		}
	}
	if p := model.DeriveProgress(s, model.ProgressOptions{}, time.Now()); p.Complete || p.Stale {
		t.Errorf("progress = %+v", p)
	}
}

// TestDiscoveryMissingKindIsStackedEtcd removes the EtcdadmCluster CRD: the
// kind shows as not installed (and synced: nothing to wait for), and the etcd
// phase is skipped. Installed again while the watcher runs, the kind gets its
// informer without a restart; removed again, it goes back to not installed.
func TestDiscoveryMissingKindIsStackedEtcd(t *testing.T) {
	cfg := env.Config
	ns := cptest.Namespace(t, cfg)
	ax := apiextensionsclient.NewForConfigOrDie(cfg)
	ctx := context.Background()
	const name = "etcdadmclusters.etcdcluster.cluster.x-k8s.io"
	crd, err := ax.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deleteCRD(t, ax, name)
	installed := false
	t.Cleanup(func() {
		if !installed {
			restoreCRD(t, ax, crd)
		}
	})

	dyn := cptest.Dynamic(t, cfg)
	create(t, dyn, gvrEKSACluster, eksaCluster(ns))
	w := run(t, cfg, ns)
	s := waitState(t, w, "all sources synced", allSynced)
	if src := s.Source(model.KindEtcdadmCluster); src.Installed || !src.Synced || src.Version != "" {
		t.Errorf("EtcdadmCluster source = %+v, want not installed", src)
	}
	if src := s.Source(model.KindMachine); !src.Installed {
		t.Errorf("Machine source = %+v", src)
	}
	p := model.DeriveProgress(s, model.ProgressOptions{}, time.Now())
	for _, ph := range p.Phases {
		if ph.Phase == model.PhaseEtcd && (ph.Status != model.PhaseSkipped || ph.Detail != "stacked etcd") {
			t.Errorf("etcd phase = %+v", ph)
		}
	}

	restoreCRD(t, ax, crd)
	installed = true
	gvrEtcd := schema.GroupVersionResource{Group: etcdGroup, Version: "v1beta1", Resource: "etcdadmclusters"}
	create(t, dyn, gvrEtcd, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": etcdGroup + "/v1beta1", "kind": "EtcdadmCluster",
		"metadata": map[string]any{"name": testCluster + "-etcd", "namespace": ns},
		"spec":     map[string]any{"replicas": int64(3), "infrastructureTemplate": map[string]any{"kind": "VSphereMachineTemplate", "name": "etcd-tmpl"}},
	}})
	s = waitState(t, w, "EtcdadmCluster installed and watched", func(s *model.ClusterState) bool {
		src := s.Source(model.KindEtcdadmCluster)
		return src.Installed && src.Synced && s.Etcd != nil
	})
	if s.Etcd.Replicas != 3 || s.Etcd.InfrastructureTemplate != "etcd-tmpl" {
		t.Errorf("etcd = %+v", s.Etcd)
	}

	deleteCRD(t, ax, name)
	installed = false
	waitState(t, w, "EtcdadmCluster uninstalled", func(s *model.ClusterState) bool {
		return !s.Source(model.KindEtcdadmCluster).Installed && s.Etcd == nil
	})
}

// deleteCRD deletes a CRD and waits until discovery no longer lists it.
func deleteCRD(t *testing.T, ax apiextensionsclient.Interface, name string) {
	t.Helper()
	ctx := context.Background()
	if err := ax.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	dc := kubernetes.NewForConfigOrDie(env.Config).Discovery()
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		served, err := discover(dc)
		return err == nil && !served[schema.GroupVersionResource{Group: etcdGroup, Version: "v1beta1", Resource: "etcdadmclusters"}], nil
	}); err != nil {
		t.Fatalf("%s still served: %v", name, err)
	}
}

// restoreCRD installs the deleted CRD again (once its deletion finished) and
// waits until it is served, so the tests that follow see the full set.
func restoreCRD(t *testing.T, ax apiextensionsclient.Interface, crd *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	ctx := context.Background()
	fresh := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: crd.Name, Labels: crd.Labels, Annotations: crd.Annotations},
		Spec:       crd.Spec,
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := ax.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, fresh, metav1.CreateOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("restoring CRD %s: %v", crd.Name, err)
	}
	dc := kubernetes.NewForConfigOrDie(env.Config).Discovery()
	gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: crd.Spec.Versions[0].Name, Resource: crd.Spec.Names.Plural}
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			gvr.Version = v.Name
		}
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		served, err := discover(dc)
		return err == nil && served[gvr], nil
	})
	if err != nil {
		t.Fatalf("CRD %s not served again: %v", crd.Name, err)
	}
}

// TestForbiddenKindNamesVerbAndResource runs the watcher as a user who may
// read everything but Machines and Leases: those sources say which
// permission is missing, the others sync, and the upgrade lock (there is
// one) is simply not in the snapshot.
func TestForbiddenKindNamesVerbAndResource(t *testing.T) {
	cfg := env.Config
	ns := cptest.Namespace(t, cfg)
	const user = "restricted-operator"
	grantAllBut(t, cfg, user, ns, model.KindMachine, model.KindLease)
	create(t, cptest.Dynamic(t, cfg), gvrEKSACluster, eksaCluster(ns))
	createLease(t, cfg, lease(ns, model.LockName(testCluster), "alice@laptop/1", time.Now(), time.Now()))

	w := run(t, cptest.Impersonate(cfg, user), ns)
	s := waitState(t, w, "all sources synced or forbidden", allSynced)
	forbidden := map[model.Kind]string{
		model.KindMachine: "list machines.cluster.x-k8s.io in " + ns,
		model.KindLease:   "list leases.coordination.k8s.io in " + ns,
	}
	for k, src := range s.Sources {
		if src.Forbidden != forbidden[k] || (src.Synced && forbidden[k] != "") {
			t.Errorf("%s source = %+v, want forbidden %q", k, src, forbidden[k])
		}
	}
	if s.Cluster == nil || s.Connection != model.Live || s.Lock != nil {
		t.Errorf("restricted user sees cluster=%v connection=%s lock=%v", s.Cluster != nil, s.Connection, s.Lock)
	}
}

// TestStaleStatusIsNotDone bumps the EKS-A Cluster's generation while its
// status (all conditions True) still describes the previous one.
func TestStaleStatusIsNotDone(t *testing.T) {
	cfg := env.Config
	ns := cptest.Namespace(t, cfg)
	dc := cptest.Dynamic(t, cfg)
	now := time.Now().Truncate(time.Second)
	c := create(t, dc, gvrEKSACluster, eksaCluster(ns))
	var conds []any
	for _, typ := range []string{"ControlPlaneReady", "DefaultCNIConfigured", "WorkersReady", "Ready"} {
		conds = append(conds, v1beta1Cond(typ, "True", "", "", now))
	}
	c.Object["status"] = map[string]any{"observedGeneration": c.GetGeneration(), "conditions": conds}
	c = updateStatus(t, dc, gvrEKSACluster, c)

	w := run(t, cfg, ns)
	waitState(t, w, "cluster ready", func(s *model.ClusterState) bool {
		return s.Cluster != nil && model.DeriveProgress(s, model.ProgressOptions{}, now).Complete
	})

	if err := unstructured.SetNestedField(c.Object, "1.31", "spec", "kubernetesVersion"); err != nil {
		t.Fatal(err)
	}
	c, err := dc.Resource(gvrEKSACluster).Namespace(ns).Update(context.Background(), c, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := waitState(t, w, "new generation", func(s *model.ClusterState) bool {
		return s.Cluster != nil && s.Cluster.Generation == c.GetGeneration()
	})
	p := model.DeriveProgress(s, model.ProgressOptions{}, now)
	if !p.Stale || p.Complete || p.Current == model.PhaseDone {
		t.Fatalf("after a spec change: stale=%v complete=%v current=%s", p.Stale, p.Complete, p.Current)
	}
	if !strings.Contains(p.Summary, "status not yet observed") {
		t.Errorf("summary = %q", p.Summary)
	}
}

// TestCoalescesBurstOfWrites writes 200 status changes as fast as the API
// server takes them: far fewer snapshots are published (at most one per
// MinInterval), and the last one shows the last write.
func TestCoalescesBurstOfWrites(t *testing.T) {
	cfg := env.Config
	ns := cptest.Namespace(t, cfg)
	dc := cptest.Dynamic(t, cfg)
	m := create(t, dc, gvrMachine, machine(ns, testCluster+"-md-0-a", model.RoleWorker))
	const interval = 200 * time.Millisecond
	w := run(t, cfg, ns, func(o *Options) { o.MinInterval = interval })
	before := waitState(t, w, "machine synced", func(s *model.ClusterState) bool { return s.Machines.Len() == 1 && allSynced(s) })

	const writes = 200
	began := time.Now()
	for i := 1; i <= writes; i++ {
		m.Object["status"] = map[string]any{"nodeRef": map[string]any{"name": fmt.Sprintf("node-%03d", i)}}
		m = updateStatus(t, dc, gvrMachine, m)
	}
	last := fmt.Sprintf("node-%03d", writes)
	after := waitState(t, w, "last write", func(s *model.ClusterState) bool { return s.Machines.At(0).NodeName == last })
	elapsed := time.Since(began)
	published := int(after.Version - before.Version)
	// One snapshot per interval at most, plus the first one after the quiet
	// period and one for a write that lands just after a publish.
	limit := int(elapsed/interval) + 2
	t.Logf("%d writes in %s → %d snapshots (limit %d)", writes, elapsed.Round(time.Millisecond), published, limit)
	if published > limit || published >= writes/2 {
		t.Errorf("%d writes produced %d snapshots in %s, want at most %d", writes, published, elapsed, limit)
	}
}

// TestReconnectsAfterAPIServerRestart stops the API server: the connection
// goes reconnecting, comes back live when it returns, and new writes show.
func TestReconnectsAfterAPIServerRestart(t *testing.T) {
	cfg := env.Config
	ns := cptest.Namespace(t, cfg)
	dc := cptest.Dynamic(t, cfg)
	create(t, dc, gvrMachine, machine(ns, testCluster+"-md-0-a", model.RoleWorker))
	w := run(t, cfg, ns)
	waitState(t, w, "live and synced", func(s *model.ClusterState) bool {
		return s.Connection == model.Live && s.Machines.Len() == 1 && allSynced(s)
	})

	if err := env.StopAPIServer(); err != nil {
		// kube-apiserver's graceful shutdown waits for open watch streams
		// (ours) and envtest kills it after its stop timeout, reporting an
		// error; the process is gone all the same, and a second call
		// records that.
		t.Logf("stopping the API server: %v", err)
		if err := env.StopAPIServer(); err != nil {
			t.Fatal(err)
		}
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = env.StartAPIServer(context.Background())
		}
	})
	down := waitState(t, w, "reconnecting", func(s *model.ClusterState) bool { return s.Connection == model.Reconnecting })
	if down.Machines.Len() != 1 {
		t.Errorf("cache lost while disconnected: %d machines", down.Machines.Len())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := env.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	restarted = true
	up := time.Now()
	back := waitState(t, w, "live again", func(s *model.ClusterState) bool { return s.Connection == model.Live })
	t.Logf("live again %s after the API server served again", time.Since(up).Round(time.Millisecond))
	if !back.ConnectionSince.After(down.ConnectionSince) {
		t.Errorf("connection since %s not after %s", back.ConnectionSince, down.ConnectionSince)
	}
	create(t, dc, gvrMachine, machine(ns, testCluster+"-md-0-b", model.RoleWorker))
	waitState(t, w, "write after reconnect", func(s *model.ClusterState) bool { return s.Machines.Len() == 2 })
}

// TestNodesEventsAndNodeUpgrades covers the typed (protobuf) informers and
// the membership filter of in-place upgrade objects.
func TestNodesEventsAndNodeUpgrades(t *testing.T) {
	cfg := env.Config
	ns := cptest.Namespace(t, cfg)
	dc := cptest.Dynamic(t, cfg)
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	nodeName := ns + "-node"
	_, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:   nodeName,
		Labels: map[string]string{"node-role.kubernetes.io/control-plane": "", "topology.kubernetes.io/zone": "a", model.LabelUpgradeInProgress: "true"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), nodeName, metav1.DeleteOptions{}) })
	create(t, dc, gvrMachine, machine(ns, testCluster+"-cp-a", model.RoleControlPlane))
	for _, mach := range []string{testCluster + "-cp-a", "other-cp-a"} {
		create(t, dc, gvrNodeUpgrade, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": eksaGroup + "/v1alpha1", "kind": "NodeUpgrade",
			"metadata": map[string]any{"name": mach + "-node-upgrader", "namespace": ns},
			"spec":     map[string]any{"machine": map[string]any{"name": mach, "namespace": ns}, "kubernetesVersion": "v1.31.9"},
		}})
	}
	for i, name := range []string{testCluster + "-cp-a", "unrelated"} {
		_, err := cs.CoreV1().Events(ns).Create(ctx, &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("ev-%d", i), Namespace: ns},
			InvolvedObject: corev1.ObjectReference{Kind: "Machine", Name: name, Namespace: ns},
			Type:           corev1.EventTypeWarning, Reason: "Stuck", Message: "waiting",
			LastTimestamp: metav1.Now(),
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	w := run(t, cfg, ns)
	s := waitState(t, w, "node, node upgrade and event", func(s *model.ClusterState) bool {
		return allSynced(s) && s.NodeUpgrades.Len() == 1 && len(s.Events) == 1 && hasNode(s, nodeName)
	})
	if s.NodeUpgrades.At(0).MachineName != testCluster+"-cp-a" || s.NodeUpgrades.At(0).Kind != model.KindNodeUpgrade {
		t.Errorf("node upgrade = %+v", s.NodeUpgrades.At(0))
	}
	if e := s.Events[0]; e.ObjectName != testCluster+"-cp-a" || e.Reason != "Stuck" {
		t.Errorf("event = %+v", e)
	}
	for _, n := range s.Nodes.All() {
		if n.Name == nodeName {
			if _, ok := n.Labels["topology.kubernetes.io/zone"]; ok || n.Labels[model.LabelUpgradeInProgress] != "true" || len(n.Labels) != 2 {
				t.Errorf("node labels = %v", n.Labels)
			}
		}
	}
}

func hasNode(s *model.ClusterState, name string) bool {
	for _, n := range s.Nodes.All() {
		if n.Name == name {
			return true
		}
	}
	return false
}

// lockedBuffer is an io.Writer safe for the informers' concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestTraceNamesEachAppliedEvent: the benchmark's trace has one line per
// applied watch event, with the resource and the version the write got.
func TestTraceNamesEachAppliedEvent(t *testing.T) {
	cfg := env.Config
	ns := cptest.Namespace(t, cfg)
	dc := cptest.Dynamic(t, cfg)
	var trace lockedBuffer
	w := run(t, cfg, ns, func(o *Options) { o.Trace = &trace })
	waitState(t, w, "synced", allSynced)
	m := create(t, dc, gvrMachine, machine(ns, testCluster+"-md-0-t", model.RoleWorker))
	m.Object["status"] = map[string]any{"nodeRef": map[string]any{"name": "node-t"}}
	m = updateStatus(t, dc, gvrMachine, m)
	waitState(t, w, "status write", func(s *model.ClusterState) bool {
		return s.Machines.Len() == 1 && s.Machines.At(0).NodeName == "node-t"
	})
	want := " machines.cluster.x-k8s.io " + m.GetResourceVersion()
	var found bool
	for _, l := range strings.Split(trace.String(), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 {
			t.Fatalf("trace line %q: want <unix ns> <resource> <resourceVersion>", l)
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || time.Since(time.Unix(0, ns)) > time.Minute {
			t.Errorf("trace line %q: first field is not a recent time in unix ns", l)
		}
		if strings.HasSuffix(l, want) {
			found = true
		}
	}
	if !found {
		t.Errorf("no trace line ends with %q in:\n%s", want, trace.String())
	}
}

// countingTransport counts the requests a client makes.
type countingTransport struct {
	next http.RoundTripper
	n    *atomic.Int64
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// TestBeginHoldsTheWatchBack: with Options.Begin, the first snapshot comes
// at once and no request reaches the API server until Begin is closed (the
// dashboard's first frame); then every kind syncs.
func TestBeginHoldsTheWatchBack(t *testing.T) {
	cfg := rest.CopyConfig(env.Config)
	var requests atomic.Int64
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingTransport{rt, &requests} })
	ns := cptest.Namespace(t, env.Config)
	begin := make(chan struct{})
	w := run(t, cfg, ns, func(o *Options) { o.Begin = begin })
	first := waitState(t, w, "the first snapshot", func(*model.ClusterState) bool { return true })
	if len(first.Sources) != 0 || first.Connection != model.Connecting {
		t.Fatalf("first snapshot before Begin: %s", describe(first))
	}
	// Without the hold, discovery is the first thing Run does.
	time.Sleep(200 * time.Millisecond)
	if n := requests.Load(); n != 0 {
		t.Fatalf("%d requests before Begin was closed, want none", n)
	}
	close(begin)
	// Closed, it lets the watch go at once, not at beginWithin (800 ms on).
	if err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 500*time.Millisecond, true, func(context.Context) (bool, error) {
		return requests.Load() > 0, nil
	}); err != nil {
		t.Fatal("no request within 500 ms of Begin's closing")
	}
	waitState(t, w, "synced after Begin", allSynced)
}

// TestBeginHoldsForAtMostBeginWithin: a Begin never closed (a terminal that
// never shows the first frame) holds the watch back for beginWithin only.
func TestBeginHoldsForAtMostBeginWithin(t *testing.T) {
	ns := cptest.Namespace(t, env.Config)
	began := time.Now()
	w := run(t, env.Config, ns, func(o *Options) { o.Begin = make(chan struct{}) })
	waitState(t, w, "synced with Begin never closed", allSynced)
	if took := time.Since(began); took < beginWithin {
		t.Fatalf("synced after %s, before beginWithin (%s)", took, beginWithin)
	}
}
