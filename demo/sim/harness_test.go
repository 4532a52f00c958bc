package sim_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/upgrade-console/upgrade-console/demo"
	"github.com/upgrade-console/upgrade-console/demo/controlplane"
	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/demo/kinds"
	"github.com/upgrade-console/upgrade-console/demo/objects"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/demo/seed"
	"github.com/upgrade-console/upgrade-console/demo/sim"
)

var env *controlplane.Env

func TestMain(m *testing.M) { cptest.Main(m, &env) }

// testSpeed runs the simulation fast while leaving every phase long enough
// (milliseconds) for the recorder to see it.
const testSpeed = 40

// obs is one change the recorder saw, in the order the API server's watch
// delivered it.
type obs struct {
	seq     int
	res     string
	obj     *unstructured.Unstructured
	deleted bool
}

// world is a seeded scenario with its simulator running and every change
// of its objects recorded.
type world struct {
	t    *testing.T
	sc   scenario.Config
	cfg  *rest.Config
	dyn  dynamic.Interface
	kube kubernetes.Interface
	ctx  context.Context

	mu      sync.Mutex
	history []obs
	actions []sim.Action
	// eksaReconciles counts the simulated EKS-A's finished reconciles.
	eksaReconciles *atomic.Int64
}

func startWorld(t *testing.T, name scenario.Name, cluster string) *world {
	t.Helper()
	return startWorldIn(t, env.Config, name, cluster)
}

// startWorldIn is startWorld on the API server of cfg.
func startWorldIn(t *testing.T, cfg *rest.Config, name scenario.Name, cluster string) *world {
	t.Helper()
	ns := cptest.Namespace(t, cfg)
	sc, err := scenario.For(name, scenario.Options{ClusterName: cluster, ClusterNamespace: ns, SystemNamespace: ns, Nodes: 24})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &world{t: t, sc: sc, cfg: cfg, dyn: cptest.Dynamic(t, cfg), kube: kubernetes.NewForConfigOrDie(cfg), ctx: ctx}
	names := objects.NewNames(time.Now().UnixNano())
	if err := demo.Seed(ctx, cfg, sc, names); err != nil {
		t.Fatal(err)
	}
	w.record(ctx)
	s, err := sim.New(cfg, sim.Config{Scenario: sc, Speed: testSpeed, Names: names, OnAction: func(a sim.Action) {
		w.mu.Lock()
		w.actions = append(w.actions, a)
		w.mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	w.eksaReconciles = sim.CountReconciles(s, sim.ComponentEKSA)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := s.Run(ctx); err != nil {
			t.Errorf("simulator: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		if t.Failed() {
			w.mu.Lock()
			for _, a := range w.actions {
				t.Log(a.String())
			}
			w.mu.Unlock()
		}
	})
	return w
}

// record watches every kind of the world and keeps each change.
func (w *world) record(ctx context.Context) {
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(w.dyn, 0, w.sc.SystemNamespace, nil)
	add := func(res string, obj any, deleted bool) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		w.mu.Lock()
		w.history = append(w.history, obs{seq: len(w.history), res: res, obj: u.DeepCopy(), deleted: deleted})
		w.mu.Unlock()
	}
	var infs []cache.SharedIndexInformer
	for _, gvr := range []schema.GroupVersionResource{kinds.EKSACluster, kinds.EtcdadmCluster, kinds.KCP, kinds.Machine, kinds.MachineDeployment, kinds.NodeUpgrade, kinds.ControlPlaneUpgrade, kinds.MachineDeploymentUpgrade, kinds.MachineHealthCheck} {
		res := gvr.Resource
		inf := f.ForResource(gvr).Informer()
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { add(res, o, false) },
			UpdateFunc: func(_, o any) { add(res, o, false) },
			DeleteFunc: func(o any) { add(res, o, true) },
		})
		infs = append(infs, inf)
	}
	f.Start(ctx.Done())
	for _, inf := range infs {
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			w.t.Fatal("recorder did not sync")
		}
	}
}

// settle waits until the simulated EKS-A has reconciled the world as it
// found it and has stopped, so that a change a test makes next is reconciled
// because of that change, as an operator's change of a quiet cluster is.
func (w *world) settle() {
	w.t.Helper()
	w.waitFor("the simulated EKS-A to reconcile the world", func() bool { return w.eksaReconciles.Load() > 0 })
	last, since := w.eksaReconciles.Load(), time.Now()
	for time.Since(since) < 300*time.Millisecond {
		time.Sleep(20 * time.Millisecond)
		if n := w.eksaReconciles.Load(); n != last {
			last, since = n, time.Now()
		}
	}
}

func (w *world) snapshot() []obs {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]obs{}, w.history...)
}

func (w *world) applyTarget() {
	w.t.Helper()
	spec, err := seed.TargetSpec(w.sc)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := demo.ApplySpec(w.ctx, w.cfg, spec); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) get(gvr schema.GroupVersionResource, name string) *unstructured.Unstructured {
	w.t.Helper()
	ns := w.sc.SystemNamespace
	if gvr == kinds.EKSACluster {
		ns = w.sc.ClusterNamespace
	}
	u, err := w.dyn.Resource(gvr).Namespace(ns).Get(w.ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return u
}

func (w *world) cluster() *unstructured.Unstructured {
	return w.get(kinds.EKSACluster, w.sc.ClusterName)
}

func (w *world) machines(selector string) []unstructured.Unstructured {
	w.t.Helper()
	l, err := w.dyn.Resource(kinds.Machine).Namespace(w.sc.SystemNamespace).List(w.ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		w.t.Fatal(err)
	}
	return l.Items
}

// waitFor polls until cond holds; what says what is awaited.
func (w *world) waitFor(what string, cond func() bool) {
	w.t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(w.ctx, 20*time.Millisecond, 90*time.Second, true, func(context.Context) (bool, error) {
		ok := cond()
		if !ok {
			last = w.describe()
		}
		return ok, nil
	})
	if err != nil {
		w.t.Fatalf("waiting for %s: %v\nlast state: %s", what, err, last)
	}
}

// holds checks that cond keeps holding while the simulation has time to do
// anything it still would: d is many times the longest simulated step.
func (w *world) holds(what string, d time.Duration, cond func() bool) {
	w.t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !cond() {
			w.t.Fatalf("%s stopped holding\nstate: %s", what, w.describe())
		}
		select {
		case <-w.ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (w *world) describe() string {
	cl := w.cluster()
	if cl == nil {
		return "no cluster"
	}
	s := fmt.Sprintf("generation %d observed %v;", cl.GetGeneration(), nested(cl, "status", "observedGeneration"))
	list, _, _ := unstructured.NestedSlice(cl.Object, "status", "conditions")
	for _, c := range list {
		m := c.(map[string]any)
		s += fmt.Sprintf(" %v=%v(%v %v)", m["type"], m["status"], m["reason"], m["message"])
	}
	return s
}

func nested(u *unstructured.Unstructured, path ...string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
	return v
}

func str(u *unstructured.Unstructured, path ...string) string {
	v, _, _ := unstructured.NestedString(u.Object, path...)
	return v
}

func i64(u *unstructured.Unstructured, path ...string) int64 {
	v, _, _ := unstructured.NestedInt64(u.Object, path...)
	return v
}

func cond(u *unstructured.Unstructured, typ string) map[string]any {
	c, _ := objects.Condition(u.Object, typ)
	return c
}

func isTrue(u *unstructured.Unstructured, typ string) bool { return objects.IsTrue(u.Object, typ) }

// complete is EKS-A's completion rule on the current object.
func complete(cl *unstructured.Unstructured) bool {
	if cl == nil || i64(cl, "status", "observedGeneration") != cl.GetGeneration() {
		return false
	}
	for _, t := range []string{"ControlPlaneReady", "DefaultCNIConfigured", "WorkersReady", "Ready"} {
		if !isTrue(cl, t) {
			return false
		}
	}
	return true
}

var (
	metaGet   = metav1.GetOptions{}
	kindsEtcd = kinds.EtcdadmCluster
	kindsKCP  = kinds.KCP
)

func unstructuredBool(u *unstructured.Unstructured, path ...string) (bool, bool, error) {
	return unstructured.NestedBool(u.Object, path...)
}
