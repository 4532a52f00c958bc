package recovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/upgrade-console/upgrade-console/demo"
	"github.com/upgrade-console/upgrade-console/demo/objects"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/demo/seed"
	"github.com/upgrade-console/upgrade-console/demo/sim"
	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// The demo scenarios of the recovery issue, run against the simulated
// controllers: the same world `upgrade-console demo --scenario X` serves.

const demoSpeed = 40

// startDemo seeds a scenario in a namespace of its own (the EKS-A Cluster
// and everything EKS-A generates) and runs the simulated controllers until
// the test ends.
func startDemo(t *testing.T, name scenario.Name) (*world, scenario.Config) {
	t.Helper()
	w := newWorld(t)
	w.sys = w.ns
	w.env.SystemNamespace = w.ns
	w.now = time.Now()
	w.env.Now = time.Now
	sc, err := scenario.For(name, scenario.Options{ClusterName: w.cluster, ClusterNamespace: w.ns, SystemNamespace: w.ns})
	if err != nil {
		t.Fatal(err)
	}
	names := objects.NewNames(time.Now().UnixNano())
	if err := demo.Seed(w.ctx, cp.Config, sc, names); err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(cp.Config, sim.Config{Scenario: sc, Speed: demoSpeed, Names: names})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := s.Run(ctx); err != nil && ctx.Err() == nil {
			t.Errorf("simulator: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return w, sc
}

// applyTarget applies the scenario's target spec, as the operator does.
func (w *world) applyTarget(sc scenario.Config) {
	w.t.Helper()
	spec, err := seed.TargetSpec(sc)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := demo.ApplySpec(w.ctx, cp.Config, spec); err != nil {
		w.t.Fatal(err)
	}
}

// snapshotEtcd saves the pre-upgrade snapshot of the EtcdadmCluster the way
// the console does before it applies (in the world's namespace).
func (w *world) snapshotEtcd() {
	w.t.Helper()
	u, err := w.client.Dynamic.Resource(upgrade.GVREtcdadmCluster).Namespace(w.sys).Get(w.ctx, w.cluster+"-etcd", metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	spec, _ := u.Object["spec"].(map[string]any)
	snap := upgrade.Snapshot{Format: upgrade.SnapshotFormat, Cluster: w.cluster, ClusterNamespace: w.ns, TakenAt: time.Now().UTC(), TakenBy: "test",
		Objects: []upgrade.SnapshotObject{{APIVersion: u.GetAPIVersion(), Kind: "EtcdadmCluster", Namespace: w.sys, Name: u.GetName(), Spec: spec}}}
	data, _ := json.Marshal(snap)
	if _, err := w.client.Kube.CoreV1().ConfigMaps(w.sys).Create(w.ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: upgrade.SnapshotName(w.cluster, snap.TakenAt), Namespace: w.sys,
			Labels: map[string]string{upgrade.LabelSnapshot: "true", upgrade.LabelCluster: w.cluster}},
		Data: map[string]string{upgrade.SnapshotDataKey: string(data)},
	}, metav1.CreateOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) eventually(what string, timeout time.Duration, cond func(ctx context.Context) (bool, string)) {
	w.t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(w.ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ok, detail := cond(ctx)
		last = detail
		return ok, nil
	})
	if err != nil {
		w.t.Fatalf("%s: not reached in %s (last: %s)", what, timeout, last)
	}
}

func (w *world) getObj(gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	w.t.Helper()
	u, err := w.client.Dynamic.Resource(gvr).Namespace(ns).Get(w.ctx, name, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return u
}

func (w *world) getEtcd() *unstructured.Unstructured {
	return w.getObj(upgrade.GVREtcdadmCluster, w.sys, w.cluster+"-etcd")
}
func (w *world) getKCP() *unstructured.Unstructured {
	return w.getObj(upgrade.GVRKCP, w.sys, w.cluster)
}
func (w *world) getCluster() *unstructured.Unstructured {
	return w.getObj(upgrade.GVREKSACluster, w.ns, w.cluster)
}

func TestDemoEtcdFirstMemberFailsIsRolledBack(t *testing.T) {
	w, sc := startDemo(t, scenario.EtcdFirstMemberFails)
	w.eventually("etcd seeded ready", time.Minute, func(ctx context.Context) (bool, string) {
		st := readEtcdStatus(w.getEtcd())
		return st.settled(), st.String()
	})
	before := w.getEtcd()
	kcpBefore := w.getKCP()
	w.snapshotEtcd()
	w.applyTarget(sc)
	w.eventually("a new etcd machine", time.Minute, func(ctx context.Context) (bool, string) {
		ms, err := w.env.etcdMachines(ctx)
		if err != nil {
			return false, err.Error()
		}
		return len(ms) == sc.EtcdCount+1, fmt.Sprintf("%d machines", len(ms))
	})

	p, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{Threshold: time.Millisecond, WaitTimeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := (&Executor{Audit: w.audit}).Run(w.ctx, p)
	if err != nil {
		t.Fatalf("rollback: %v\n%s", err, describeSteps(rep))
	}

	etcd := w.getEtcd()
	if !reflect.DeepEqual(etcd.Object["spec"], before.Object["spec"]) {
		t.Errorf("etcd spec not the old one:\n got %v\nwant %v", etcd.Object["spec"], before.Object["spec"])
	}
	if st := readEtcdStatus(etcd); !st.settled() {
		t.Errorf("etcd not ready: %s", st)
	}
	ms, err := w.env.etcdMachines(w.ctx)
	if err != nil || len(ms) != sc.EtcdCount {
		t.Errorf("etcd machines = %v (%v), want the %d old ones", ms, err, sc.EtcdCount)
	}
	kcp := w.getKCP()
	if !reflect.DeepEqual(kcp.Object["spec"], kcpBefore.Object["spec"]) {
		t.Errorf("the KCP spec changed")
	}
	if _, paused := kcp.GetAnnotations()[model.AnnotationCAPIPaused]; paused {
		t.Errorf("the KCP is left paused")
	}
	c := w.getCluster()
	if c.GetAnnotations()[model.AnnotationEKSAPaused] != "true" {
		t.Errorf("EKS-A reconcile not kept paused")
	}
}

func TestDemoStaleLockIsClearedThenAnUpgradeSucceeds(t *testing.T) {
	w, sc := startDemo(t, scenario.StaleLock)
	ms, err := ListMarkers(w.ctx, w.env, MarkerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st := markerStates(ms); st[MarkerLease] != MarkerStale || st[MarkerPaused] != MarkerStale {
		t.Fatalf("stale-lock markers = %v, want lease and paused stale", st)
	}
	p, _, err := PlanClear(w.ctx, w.env, ClearOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&Executor{Audit: w.audit}).Run(w.ctx, p); err != nil {
		t.Fatal(err)
	}
	l := &upgrade.Locker{Kube: w.client.Kube, Namespace: w.sys, Cluster: w.cluster, Holder: upgrade.Holder{User: "ops", Host: "bastion", Instance: "t"}, Audit: w.audit}
	if _, err := l.Acquire(w.ctx); err != nil {
		t.Fatalf("the lock cannot be taken after the clear: %v", err)
	}
	w.applyTarget(sc)
	w.eventually("the upgrade completes", 3*time.Minute, func(ctx context.Context) (bool, string) {
		c := w.getCluster()
		og, _, _ := unstructured.NestedInt64(c.Object, "status", "observedGeneration")
		conds, _, _ := unstructured.NestedSlice(c.Object, "status", "conditions")
		ready := false
		for _, x := range conds {
			if m, ok := x.(map[string]any); ok && m["type"] == "Ready" && m["status"] == "True" {
				ready = true
			}
		}
		v, _, _ := unstructured.NestedString(c.Object, "spec", "kubernetesVersion")
		return ready && og == c.GetGeneration() && v == seed.TargetKube, fmt.Sprintf("ready=%t generation %d observed %d", ready, c.GetGeneration(), og)
	})
}

func TestDemoInPlaceNodeStepFailsIsRetried(t *testing.T) {
	w, sc := startDemo(t, scenario.InPlaceNodeStepFails)
	w.applyTarget(sc)
	var node string
	w.eventually("a failed node step", 2*time.Minute, func(ctx context.Context) (bool, string) {
		list, err := w.client.Dynamic.Resource(gvrNodeUpgrade).Namespace(w.sys).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, nu := range list.Items {
			m, _, _ := unstructured.NestedString(nu.Object, "spec", "machine", "name")
			f, err := InspectNode(ctx, w.env, m, 5)
			if err == nil && f.Step != "" {
				node = f.Node
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d NodeUpgrades, none failed", len(list.Items))
	})
	// The kubelet runs the failed container again (at once the first
	// time, then after each back-off): no retry is offered while it runs.
	var p *Plan
	var f *NodeFailure
	w.eventually("a retry offered (the container backed off)", time.Minute, func(ctx context.Context) (bool, string) {
		var err error
		p, f, err = PlanNodeRetry(ctx, w.env, node, NodeRetryOptions{WaitTimeout: time.Minute})
		if err != nil {
			return false, err.Error()
		}
		return len(p.Steps) > 0, p.Title
	})
	if f.Step != "KubeadmUpgraded" || f.Container != "kubeadm-upgrader" {
		t.Errorf("failure = %+v", f)
	}
	// The demo has no kubelet: its simulated kubelet leaves the failed
	// container's log on the pod, and the console must show it as simulated.
	if len(f.Log) == 0 || !strings.HasPrefix(f.LogSource, "simulated") || !strings.Contains(strings.Join(f.Log, "\n"), "kubeadm-upgrader failed") {
		t.Errorf("log = %q from %q (%s), want the simulated kubeadm-upgrader log", f.Log, f.LogSource, f.LogError)
	}
	w.playKubelet(node + "-node-upgrader")
	// A rerun that began since the plan refuses the run (it would kill
	// the container): planned again in the next back-off.
	w.eventually("the retry run", time.Minute, func(ctx context.Context) (bool, string) {
		rep, err := (&Executor{Audit: w.audit}).Run(ctx, p)
		var cc *ConcurrentChangeError
		if errors.As(err, &cc) && rep.Refused(err) {
			if again, _, perr := PlanNodeRetry(ctx, w.env, node, NodeRetryOptions{WaitTimeout: time.Minute}); perr == nil && len(again.Steps) > 0 {
				p = again
			}
			return false, err.Error()
		}
		if err != nil {
			t.Fatalf("retry: %v\n%s", err, describeSteps(rep))
		}
		return true, ""
	})
	w.eventually("the node's upgrade completes", 2*time.Minute, func(ctx context.Context) (bool, string) {
		g, err := InspectNode(ctx, w.env, node, 1)
		if err != nil {
			return false, err.Error()
		}
		return g.Completed, fmt.Sprintf("step %q", g.Step)
	})
}

// playKubelet finishes the deletion of a pod: the demo's API server has no
// kubelet to confirm that a pod bound to a node has stopped.
func (w *world) playKubelet(pod string) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	w.t.Cleanup(func() { cancel(); wg.Wait() })
	go func() {
		defer wg.Done()
		_ = wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			p, err := w.client.Kube.CoreV1().Pods(w.sys).Get(ctx, pod, metav1.GetOptions{})
			if err == nil && p.DeletionTimestamp != nil {
				_ = w.client.Kube.CoreV1().Pods(w.sys).Delete(ctx, pod, metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0)),
					Preconditions: &metav1.Preconditions{UID: &p.UID}})
			}
			return false, nil
		})
	}()
}
