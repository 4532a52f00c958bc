package seed_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/upgrade-console/upgrade-console/config/crd"
	"github.com/upgrade-console/upgrade-console/demo/controlplane"
	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/demo/kinds"
	"github.com/upgrade-console/upgrade-console/demo/objects"
	"github.com/upgrade-console/upgrade-console/demo/release"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/demo/seed"
	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade/recovery"
	"github.com/upgrade-console/upgrade-console/watchers"
)

var env *controlplane.Env

func TestMain(m *testing.M) { cptest.Main(m, &env) }

// world seeds a scenario into a namespace of its own.
func world(t *testing.T, name scenario.Name, cluster string) (scenario.Config, seed.Clients) {
	t.Helper()
	ns := cptest.Namespace(t, env.Config)
	cfg, err := scenario.For(name, scenario.Options{ClusterName: cluster, ClusterNamespace: ns, SystemNamespace: ns, Nodes: 40})
	if err != nil {
		t.Fatal(err)
	}
	c := seed.Clients{Dynamic: cptest.Dynamic(t, env.Config), Kube: kubernetes.NewForConfigOrDie(env.Config)}
	if err := seed.Seed(context.Background(), c, cfg, objects.NewNames(time.Now().UnixNano()), time.Now()); err != nil {
		t.Fatal(err)
	}
	return cfg, c
}

func TestSeedRollingWorld(t *testing.T) {
	cfg, c := world(t, scenario.Rolling, "seed-rolling")
	ctx := context.Background()
	ns := cfg.SystemNamespace

	cl, err := c.Dynamic.Resource(kinds.EKSACluster).Namespace(cfg.ClusterNamespace).Get(ctx, cfg.ClusterName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Upgraded for the target release, as EKS-A's CLI does before the
	// spec is applied.
	if got := cl.GetAnnotations()[model.AnnotationManagementComponentsVersion]; got != release.Target.Version {
		t.Errorf("management-components-version = %q, want %q", got, release.Target.Version)
	}
	og, _, _ := unstructured.NestedInt64(cl.Object, "status", "observedGeneration")
	if og != cl.GetGeneration() {
		t.Errorf("observedGeneration %d != generation %d", og, cl.GetGeneration())
	}
	for _, typ := range []string{"Ready", "ControlPlaneInitialized", "ControlPlaneReady", "DefaultCNIConfigured", "WorkersReady"} {
		if !objects.IsTrue(cl.Object, typ) {
			t.Errorf("condition %s not True", typ)
		}
	}
	if cnt, _, _ := unstructured.NestedInt64(cl.Object, "spec", "externalEtcdConfiguration", "count"); cnt != 3 {
		t.Errorf("external etcd count %d, want 3", cnt)
	}

	for _, r := range release.All {
		er, err := c.Dynamic.Resource(kinds.EKSARelease).Namespace(ns).Get(ctx, release.Name(r.Version), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ref, _, _ := unstructured.NestedString(er.Object, "spec", "bundlesRef", "name")
		b, err := c.Dynamic.Resource(kinds.Bundles).Namespace(ns).Get(ctx, ref, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("EKSARelease %s names Bundles %q: %v", er.GetName(), ref, err)
		}
		data, _ := b.MarshalJSON()
		parsed, err := model.ParseBundles(data, b.GetName())
		if err != nil {
			t.Fatalf("Bundles %s does not parse: %v", b.GetName(), err)
		}
		if len(parsed.VersionsBundles) != len(r.Kubes) {
			t.Errorf("Bundles %s has %d versions bundles, want %d", b.GetName(), len(parsed.VersionsBundles), len(r.Kubes))
		}
	}

	etcd, err := c.Dynamic.Resource(kinds.EtcdadmCluster).Namespace(ns).Get(ctx, cfg.ClusterName+"-etcd", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sec, err := c.Kube.CoreV1().Secrets(ns).Get(ctx, cfg.ClusterName+"-etcd-init", metav1.GetOptions{}); err != nil || len(sec.Data["address"]) == 0 {
		t.Errorf("etcd init Secret: %v", err)
	}
	if ready, _, _ := unstructured.NestedBool(etcd.Object, "status", "ready"); !ready {
		t.Errorf("EtcdadmCluster not ready: %v", etcd.Object["status"])
	}
	kcp, err := c.Dynamic.Resource(kinds.KCP).Namespace(ns).Get(ctx, cfg.ClusterName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if kcp.GetAnnotations()[model.AnnotationSkipPauseCPManagedEtcd] != "true" {
		t.Errorf("KCP lacks %s", model.AnnotationSkipPauseCPManagedEtcd)
	}
	eps, _, _ := unstructured.NestedStringSlice(kcp.Object, "spec", "kubeadmConfigSpec", "clusterConfiguration", "etcd", "external", "endpoints")
	if len(eps) != 3 {
		t.Errorf("KCP etcd endpoints %v, want 3", eps)
	}

	ms, err := c.Dynamic.Resource(kinds.Machine).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	roles := map[string]int{}
	for _, m := range ms.Items {
		l := m.GetLabels()
		phase, _, _ := unstructured.NestedString(m.Object, "status", "phase")
		if phase != "Running" {
			t.Errorf("machine %s phase %q", m.GetName(), phase)
		}
		switch {
		case l[model.LabelEtcdCluster] != "":
			roles["etcd"]++
			if l[model.LabelEtcdReady] != "true" {
				t.Errorf("etcd machine %s lacks etcd-ready", m.GetName())
			}
		case l[model.LabelControlPlaneName] != "":
			roles["cp"]++
		case l[model.LabelDeploymentName] != "":
			roles["worker"]++
			node, _, _ := unstructured.NestedString(m.Object, "status", "nodeRef", "name")
			n, err := c.Kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("node of %s: %v", m.GetName(), err)
			}
			if n.Status.NodeInfo.KubeletVersion == "" || len(n.Status.Conditions) == 0 {
				t.Errorf("node %s has no status", n.Name)
			}
		}
	}
	if roles["etcd"] != 3 || roles["cp"] != 3 || roles["worker"] != 4 {
		t.Errorf("machines by role %v, want 3 etcd, 3 cp, 4 workers", roles)
	}
}

func TestSeedStaleLock(t *testing.T) {
	cfg, c := world(t, scenario.StaleLock, "seed-stale")
	ctx := context.Background()
	lease, err := c.Kube.CoordinationV1().Leases(cfg.SystemNamespace).Get(ctx, "upgrade-console-"+cfg.ClusterName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != seed.StaleLockHolder {
		t.Errorf("holder %v", lease.Spec.HolderIdentity)
	}
	renewed := lease.Spec.RenewTime.Time
	dur := time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second
	if !time.Now().After(renewed.Add(dur)) || time.Since(renewed) < time.Hour {
		t.Errorf("lease renewed %s with duration %s is not long expired", renewed, dur)
	}
	cl, err := c.Dynamic.Resource(kinds.EKSACluster).Namespace(cfg.ClusterNamespace).Get(ctx, cfg.ClusterName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cl.GetAnnotations()[model.AnnotationEKSAPaused] != "true" {
		t.Errorf("cluster lacks the leftover paused annotation: %v", cl.GetAnnotations())
	}

	// The console sees the stale lock without reading it on purpose: it is
	// in the watchers' snapshot, and offered for clearing with the paused
	// annotation.
	w, err := watchers.New(watchers.Options{Config: env.Config, ClusterName: cfg.ClusterName,
		ClusterNamespace: cfg.ClusterNamespace, SystemNamespace: cfg.SystemNamespace})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	defer func() { cancel(); <-done }()
	var s *model.ClusterState
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		s = w.Latest()
		return s != nil && s.Cluster != nil && s.Lock != nil, nil
	}); err != nil {
		t.Fatalf("no lock in the snapshot: %v", err)
	}
	if s.Lock.HolderIdentity != seed.StaleLockHolder || !s.Lock.Expired(time.Now()) {
		t.Errorf("snapshot lock = %+v, want the stale one", s.Lock)
	}
	offers := recovery.Offers(s, time.Now(), 0, "")
	if len(offers) != 1 || strings.Join(offers[0].Markers, ",") != "lease,paused" {
		t.Errorf("offers = %+v, want the lease and the paused annotation cleared together", offers)
	}
}

func TestSeedInPlaceIsStacked(t *testing.T) {
	cfg, c := world(t, scenario.InPlace, "seed-inplace")
	ctx := context.Background()
	_, err := c.Dynamic.Resource(kinds.EtcdadmCluster).Namespace(cfg.SystemNamespace).Get(ctx, cfg.ClusterName+"-etcd", metav1.GetOptions{})
	if err == nil {
		t.Error("in-place world has an EtcdadmCluster; it must use stacked etcd")
	}
	kcp, err := c.Dynamic.Resource(kinds.KCP).Namespace(cfg.SystemNamespace).Get(ctx, cfg.ClusterName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tag, _, _ := unstructured.NestedString(kcp.Object, "spec", "kubeadmConfigSpec", "clusterConfiguration", "etcd", "local", "imageTag")
	if tag == "" {
		t.Error("stacked etcd KCP lacks etcd.local.imageTag")
	}
}

func TestSeedLargeFleet(t *testing.T) {
	cfg, c := world(t, scenario.Large, "seed-large")
	ms, err := c.Dynamic.Resource(kinds.Machine).Namespace(cfg.SystemNamespace).List(context.Background(), metav1.ListOptions{
		LabelSelector: model.LabelDeploymentName,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms.Items) != 40 {
		t.Errorf("%d worker machines, want 40", len(ms.Items))
	}
}

// collect seeds a scenario and returns every custom resource as the seed
// sent it, moved to a fresh namespace, for a round trip elsewhere.
func collect(t *testing.T, name scenario.Name, cluster string) []*unstructured.Unstructured {
	t.Helper()
	ns := cptest.Namespace(t, env.Config)
	cfg, err := scenario.For(name, scenario.Options{ClusterName: cluster, ClusterNamespace: ns, SystemNamespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	c := seed.Clients{Dynamic: cptest.Dynamic(t, env.Config), Kube: kubernetes.NewForConfigOrDie(env.Config),
		Record: func(u *unstructured.Unstructured) { objs = append(objs, u) }}
	if err := seed.Seed(context.Background(), c, cfg, objects.NewNames(time.Now().UnixNano()), time.Now()); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, o := range objs {
		kinds[o.GetKind()] = true
	}
	for _, k := range []string{"Cluster", "Bundles", "EKSARelease", "KubeadmControlPlane", "MachineDeployment", "MachineSet", "Machine", "MachineHealthCheck"} {
		if !kinds[k] {
			t.Fatalf("the seed recorded no %s", k)
		}
	}
	return objs
}

func roundTripScenarios(t *testing.T, cfgFor func(t *testing.T) (string, func([]*unstructured.Unstructured))) {
	for _, sc := range []scenario.Name{scenario.Rolling, scenario.InPlace, scenario.StaleLock} {
		t.Run(string(sc), func(t *testing.T) {
			objs := collect(t, sc, "rt-"+string(sc))
			ns, run := cfgFor(t)
			for _, o := range objs {
				o.SetNamespace(ns)
			}
			run(objs)
		})
	}
}

// Every object of every world is stored as sent by the project's CRDs and
// the CAPI ones: nothing the console reads is pruned.
func TestSeedObjectsStoredUnchanged(t *testing.T) {
	roundTripScenarios(t, func(t *testing.T) (string, func([]*unstructured.Unstructured)) {
		return cptest.Namespace(t, env.Config), func(objs []*unstructured.Unstructured) { cptest.RoundTrip(t, env.Config, objs) }
	})
}

// The real upstream EKS-A and etcdadm CRDs accept every seeded object
// unchanged (opt-in: make compat).
func TestSeedObjectsUpstreamCompatibility(t *testing.T) {
	up := cptest.UpstreamEnv(t)
	roundTripScenarios(t, func(t *testing.T) (string, func([]*unstructured.Unstructured)) {
		return cptest.Namespace(t, up.Config), func(objs []*unstructured.Unstructured) { cptest.RoundTrip(t, up.Config, objs) }
	})
}

func TestSpecFiles(t *testing.T) {
	cfg, _ := scenario.For(scenario.Rolling, scenario.Options{})
	cur, err := seed.CurrentSpec(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tgt, err := seed.TargetSpec(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The Cluster first, then every provider document it names.
	for name, data := range map[string][]byte{"current": cur, "target": tgt} {
		docs, err := crd.DecodeObjects(data)
		if err != nil {
			t.Fatalf("%s spec: %v", name, err)
		}
		if len(docs) == 0 || docs[0].GetKind() != "Cluster" || docs[0].GetName() != "mgmt" {
			t.Fatalf("%s spec does not start with the Cluster:\n%s", name, data)
		}
		have := map[string]bool{}
		for _, d := range docs {
			if d.Object["status"] != nil {
				t.Errorf("%s spec: %s %s carries a status", name, d.GetKind(), d.GetName())
			}
			have[d.GetKind()+"/"+d.GetName()] = true
		}
		cl := docs[0]
		refs := []string{"VSphereDatacenterConfig/" + mustString(t, cl, "spec", "datacenterRef", "name"),
			"VSphereMachineConfig/" + mustString(t, cl, "spec", "controlPlaneConfiguration", "machineGroupRef", "name"),
			"VSphereMachineConfig/" + mustString(t, cl, "spec", "externalEtcdConfiguration", "machineGroupRef", "name")}
		workers, _, _ := unstructured.NestedSlice(cl.Object, "spec", "workerNodeGroupConfigurations")
		for _, w := range workers {
			refs = append(refs, "VSphereMachineConfig/"+mustString(t, &unstructured.Unstructured{Object: w.(map[string]any)}, "machineGroupRef", "name"))
		}
		for _, r := range refs {
			if !have[r] {
				t.Errorf("%s spec: the Cluster refers to %s, which the file does not carry", name, r)
			}
		}
		if len(docs) != len(refs)+1 {
			t.Errorf("%s spec: %d documents, want the Cluster and %d provider documents", name, len(docs), len(refs))
		}
	}
	for _, want := range []string{"eksaVersion: " + release.Target.Version, `kubernetesVersion: "1.31"`, "count: 3", "template: /SDDC-Datacenter/vm/Templates/ubuntu-2204-kube-1.31"} {
		if !strings.Contains(string(tgt), want) {
			t.Errorf("target spec lacks %q:\n%s", want, tgt)
		}
	}
	if !strings.Contains(string(cur), `kubernetesVersion: "1.30"`) || strings.Contains(string(cur), "kube-1.31") {
		t.Errorf("current spec:\n%s", cur)
	}
}

func mustString(t *testing.T, u *unstructured.Unstructured, path ...string) string {
	t.Helper()
	v, ok, _ := unstructured.NestedString(u.Object, path...)
	if !ok {
		t.Fatalf("%s %s: no %v", u.GetKind(), u.GetName(), path)
	}
	return v
}
