package sim

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/upgrade-console/upgrade-console/demo/kinds"
	"github.com/upgrade-console/upgrade-console/model"
)

// loop is one controller: a work queue of "namespace/name" keys and the
// reconcile that handles them.
type loop struct {
	name      string
	queue     workqueue.TypedRateLimitingInterface[string]
	reconcile func(ctx context.Context, key string) (time.Duration, error)
	// settle is how long to wait for the cache to show own writes.
	settle time.Duration
	s      *Simulator
}

func (s *Simulator) newLoop(name string, reconcile func(context.Context, string) (time.Duration, error)) *loop {
	rl := workqueue.NewTypedItemExponentialFailureRateLimiter[string](10*time.Millisecond, 2*time.Second)
	l := &loop{
		name:      name,
		queue:     workqueue.NewTypedRateLimitingQueueWithConfig(rl, workqueue.TypedRateLimitingQueueConfig[string]{Name: name, Clock: s.clock}),
		reconcile: reconcile,
		settle:    20 * time.Millisecond,
		s:         s,
	}
	s.loops = append(s.loops, l)
	return l
}

func (l *loop) add(key string) { l.queue.Add(key) }

func (l *loop) run(ctx context.Context, workers int) {
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for l.next(ctx) {
			}
		}()
	}
	wg.Wait()
}

func (l *loop) next(ctx context.Context) bool {
	key, quit := l.queue.Get()
	if quit {
		return false
	}
	defer l.queue.Done(key)
	owner := l.name + "/" + key
	if !l.s.settled(owner) {
		l.queue.AddAfter(key, l.settle)
		return true
	}
	after, err := l.reconcileContained(ctx, key)
	switch {
	case ctx.Err() != nil:
		return false
	case err != nil:
		// Conflicts and the like are normal between several writers:
		// retry with backoff, as controller-runtime does.
		klog.V(2).InfoS("simulated controller retrying", "controller", l.name, "key", key, "err", err)
		l.queue.AddRateLimited(key)
	default:
		l.queue.Forget(key)
		if after > 0 {
			l.queue.AddAfter(key, after)
		}
	}
	return true
}

// reconcileContained turns a panic of the reconcile (a bug of the demo's)
// into an error, retried with backoff like any other, as controller-runtime
// does (RecoverPanic): the demo runs in the dashboard's process, and a
// panic there would end it with the terminal left in the dashboard's mode.
func (l *loop) reconcileContained(ctx context.Context, key string) (after time.Duration, err error) {
	defer func() {
		if r := recover(); r != nil {
			klog.ErrorS(nil, "simulated controller panicked", "controller", l.name, "key", key, "panic", r, "stack", string(debug.Stack()))
			after, err = 0, fmt.Errorf("panic in the simulated %s controller: %v", l.name, r)
		}
	}()
	return l.reconcile(ctx, key)
}

// handler enqueues keys computed from an object on every change.
func handler(keys func(u *unstructured.Unstructured) []func()) cache.ResourceEventHandler {
	fire := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		for _, f := range keys(u) {
			f()
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    fire,
		UpdateFunc: func(_, n any) { fire(n) },
		DeleteFunc: fire,
	}
}

func key(ns, name string) string { return ns + "/" + name }

func splitKey(k string) (string, string) {
	ns, name, _ := cache.SplitMetaNamespaceKey(k)
	return ns, name
}

// loops of the simulator, wired in setup.
type loops struct {
	eksa, etcd, kcp, md, machine, cpu, mdu, nu, capi *loop
}

// setup creates the controllers and wires the informers to their queues.
func (s *Simulator) setup() {
	l := &loops{}
	l.eksa = s.newLoop(compEKSA, s.reconcileEKSA)
	l.etcd = s.newLoop(compEtcdadm, s.reconcileEtcd)
	l.kcp = s.newLoop(compKCP, s.reconcileKCP)
	l.md = s.newLoop(compMD, s.reconcileMD)
	l.machine = s.newLoop(compMachine, s.reconcileMachine)
	l.cpu = s.newLoop(compCPUpgrade, s.reconcileCPUpgrade)
	l.mdu = s.newLoop(compMDUpgrade, s.reconcileMDUpgrade)
	l.nu = s.newLoop(compNodeUpg, s.reconcileNodeUpgrade)
	l.capi = s.newLoop(compCAPICluster, s.reconcileCAPICluster)
	s.l = l

	sys := s.sc.SystemNamespace
	clusterKey := key(s.sc.ClusterNamespace, s.sc.ClusterName)
	eksa := func() { l.eksa.add(clusterKey) }
	capi := func() { l.capi.add(key(sys, s.sc.ClusterName)) }
	mine := func(u *unstructured.Unstructured) bool {
		return u.GetLabels()[model.LabelClusterName] == s.sc.ClusterName
	}

	s.informer(kinds.EKSACluster).AddEventHandler(handler(func(u *unstructured.Unstructured) []func() {
		if u.GetName() != s.sc.ClusterName {
			return nil
		}
		return []func(){eksa}
	}))
	// EKS-A watches the provider objects a Cluster refers to: a change of
	// its datacenter config or of one of its machine configs alone (the
	// Cluster's generation unchanged) reconciles the Cluster.
	for _, gvr := range []schema.GroupVersionResource{kinds.VSphereDatacenterConfig, kinds.VSphereMachineConfig} {
		s.informer(gvr).AddEventHandler(handler(func(u *unstructured.Unstructured) []func() {
			if !refersTo(s.get(kinds.EKSACluster, s.sc.ClusterNamespace, s.sc.ClusterName), gvr, u) {
				return nil
			}
			return []func(){eksa}
		}))
	}
	s.informer(kinds.CAPICluster)
	s.informer(kinds.EKSARelease)
	s.informer(kinds.Bundles)
	s.informer(kinds.EtcdadmCluster).AddEventHandler(handler(func(u *unstructured.Unstructured) []func() {
		if !mine(u) {
			return nil
		}
		k := key(u.GetNamespace(), u.GetName())
		return []func(){eksa, func() { l.etcd.add(k) }, func() { l.kcp.add(key(sys, s.sc.ClusterName)) }}
	}))
	s.informer(kinds.KCP).AddEventHandler(handler(func(u *unstructured.Unstructured) []func() {
		if !mine(u) {
			return nil
		}
		k := key(u.GetNamespace(), u.GetName())
		return []func(){eksa, capi, func() { l.kcp.add(k) }, func() { l.cpu.add(key(sys, u.GetName()+"-cp-upgrade")) }}
	}))
	s.informer(kinds.MachineDeployment).AddEventHandler(handler(func(u *unstructured.Unstructured) []func() {
		if !mine(u) {
			return nil
		}
		k := key(u.GetNamespace(), u.GetName())
		return []func(){eksa, capi, func() { l.md.add(k) }}
	}))
	s.informer(kinds.MachineSet).AddEventHandler(handler(func(u *unstructured.Unstructured) []func() {
		if md := u.GetLabels()[model.LabelDeploymentName]; md != "" && mine(u) {
			return []func(){func() { l.md.add(key(u.GetNamespace(), md)) }}
		}
		return nil
	}))
	s.informer(kinds.Machine).AddEventHandler(handler(func(u *unstructured.Unstructured) []func() {
		if !mine(u) {
			return nil
		}
		lb := u.GetLabels()
		ns := u.GetNamespace()
		out := []func(){func() { l.machine.add(key(ns, u.GetName())) }}
		switch {
		case lb[model.LabelEtcdCluster] != "":
			out = append(out, func() { l.etcd.add(key(ns, lb[model.LabelEtcdCluster])) })
		case lb[model.LabelControlPlaneName] != "":
			out = append(out, func() { l.kcp.add(key(ns, lb[model.LabelControlPlaneName])) },
				func() { l.cpu.add(key(ns, lb[model.LabelControlPlaneName]+"-cp-upgrade")) })
		case lb[model.LabelDeploymentName] != "":
			md := lb[model.LabelDeploymentName]
			out = append(out, func() { l.md.add(key(ns, md)) }, func() { l.mdu.add(key(ns, md+"-md-upgrade")) })
		}
		return out
	}))
	s.informer(kinds.ControlPlaneUpgrade).AddEventHandler(handler(func(u *unstructured.Unstructured) []func() {
		k := key(u.GetNamespace(), u.GetName())
		return []func(){eksa, func() { l.cpu.add(k) }, func() { l.kcp.add(key(sys, s.sc.ClusterName)) }}
	}))
	s.informer(kinds.MachineDeploymentUpgrade).AddEventHandler(handler(func(u *unstructured.Unstructured) []func() {
		k := key(u.GetNamespace(), u.GetName())
		md, _, _ := unstructured.NestedString(u.Object, "spec", "machineDeployment", "name")
		return []func(){eksa, func() { l.mdu.add(k) }, func() { l.md.add(key(sys, md)) }}
	}))
	s.informer(kinds.NodeUpgrade).AddEventHandler(handler(func(u *unstructured.Unstructured) []func() {
		k := key(u.GetNamespace(), u.GetName())
		out := []func(){func() { l.nu.add(k) }}
		for _, o := range u.GetOwnerReferences() {
			switch o.Kind {
			case "ControlPlaneUpgrade":
				out = append(out, func() { l.cpu.add(key(u.GetNamespace(), o.Name)) })
			case "MachineDeploymentUpgrade":
				out = append(out, func() { l.mdu.add(key(u.GetNamespace(), o.Name)) })
			}
		}
		return out
	}))
	// The upgrader pods: deleting one is EKS-A's documented retry of a
	// failed node upgrade.
	s.podFactory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) {
			if p, ok := obj.(interface {
				GetName() string
				GetDeletionTimestamp() *metav1.Time
			}); ok && p.GetDeletionTimestamp() != nil {
				l.nu.add(key(sys, nodeUpgradeForPod(p.GetName())))
			}
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if p, ok := obj.(interface{ GetName() string }); ok {
				l.nu.add(key(sys, nodeUpgradeForPod(p.GetName())))
			}
		},
	})
}

// enqueueAll reconciles every object of the world once.
func (s *Simulator) enqueueAll() {
	for gvr, l := range map[schema.GroupVersionResource]*loop{kinds.EtcdadmCluster: s.l.etcd, kinds.KCP: s.l.kcp, kinds.MachineDeployment: s.l.md, kinds.Machine: s.l.machine,
		kinds.ControlPlaneUpgrade: s.l.cpu, kinds.MachineDeploymentUpgrade: s.l.mdu, kinds.NodeUpgrade: s.l.nu} {
		for _, o := range s.informers[gvr].GetStore().List() {
			u := o.(*unstructured.Unstructured)
			l.add(key(u.GetNamespace(), u.GetName()))
		}
	}
	s.l.eksa.add(key(s.sc.ClusterNamespace, s.sc.ClusterName))
	s.l.capi.add(key(s.sc.SystemNamespace, s.sc.ClusterName))
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }

func isAlreadyExists(err error) bool { return apierrors.IsAlreadyExists(err) }
