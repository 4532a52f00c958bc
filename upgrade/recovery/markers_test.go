package recovery

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/utils/ptr"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// seedStaleLock is the state an interrupted upgrade leaves: an expired lease,
// EKS-A reconcile paused, the KCP paused and etcd marked upgrading although
// etcd is settled, and two nodes still labelled as upgrading.
func (w *world) seedStaleLock() (nodeLabel string) {
	w.t.Helper()
	w.seedEtcdRollout(true)
	w.patch(upgrade.GVREKSACluster, w.ns, w.cluster, `{"metadata":{"annotations":{"`+model.AnnotationEKSAPaused+`":"true"}}}`)
	etcd, err := w.client.Dynamic.Resource(upgrade.GVREtcdadmCluster).Namespace(w.sys).Get(w.ctx, w.cluster+"-etcd", metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	w.setStatus(upgrade.GVREtcdadmCluster, w.sys, etcd.GetName(), map[string]any{"ready": true, "replicas": int64(3), "observedGeneration": etcd.GetGeneration()})
	w.lease("bob@old-laptop/77aa", w.now.Add(-2*time.Hour))
	nodeLabel = "test.upgrade-console.io/in-progress-" + w.cluster
	for _, n := range []string{"n1", "n2"} {
		_, err := w.client.Kube.CoreV1().Nodes().Create(w.ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name: w.cluster + "-" + n, Labels: map[string]string{nodeLabel: "true"}}}, metav1.CreateOptions{FieldManager: "kubeone"})
		if err != nil {
			w.t.Fatal(err)
		}
	}
	return nodeLabel
}

func markerStates(ms []Marker) map[string]MarkerState {
	out := map[string]MarkerState{}
	for _, m := range ms {
		out[m.ID] = m.State
	}
	return out
}

func TestLockStatusListsEveryMarkerWithHolderAndAge(t *testing.T) {
	w := newWorld(t)
	label := w.seedStaleLock()
	writes := w.writes.Load()
	ms, err := ListMarkers(w.ctx, w.env, MarkerOptions{NodeLabel: label})
	if err != nil {
		t.Fatal(err)
	}
	if n := w.writes.Load() - writes; n != 0 {
		t.Errorf("lock status sent %d writes", n)
	}
	n1, n2 := MarkerNodeLabel+"/"+w.cluster+"-n1", MarkerNodeLabel+"/"+w.cluster+"-n2"
	want := map[string]MarkerState{MarkerLease: MarkerStale, MarkerPaused: MarkerStale, MarkerKCPPaused: MarkerStale,
		MarkerEtcdUpgrading: MarkerStale, n1: MarkerStale, n2: MarkerStale, MarkerManagedByCLI: MarkerNotSet}
	got := markerStates(ms)
	for id, st := range want {
		if got[id] != st {
			t.Errorf("%s = %q, want %q", id, got[id], st)
		}
	}
	for _, m := range ms {
		if m.State == MarkerNotSet {
			continue
		}
		if m.Holder == "" || m.Since.IsZero() || m.Reason == "" || m.Object == "" {
			t.Errorf("marker %s lacks holder, age or reason: %+v", m.ID, m)
		}
		if m.ID == MarkerLease && m.Holder != "bob@old-laptop (console 77aa)" {
			t.Errorf("lease holder = %q", m.Holder)
		}
		if m.ID == n1 && m.Holder != "kubeone" {
			t.Errorf("node label holder = %q, want the field manager kubeone", m.Holder)
		}
		// Paused by another manager than an upgrade's (this test's
		// client): it may be a pause made on purpose, and the reason says
		// whose it is instead of calling it a leftover outright.
		if m.ID == MarkerPaused && (!strings.Contains(m.Reason, "set by "+m.Holder) || !strings.Contains(m.Reason, "ask whoever set it")) {
			t.Errorf("paused by %s: reason %q", m.Holder, m.Reason)
		}
	}
}

func TestLockClearAllClearsStaleMarkersThenAnUpgradeCanTakeTheLock(t *testing.T) {
	w := newWorld(t)
	label := w.seedStaleLock()
	p, _, err := PlanClear(w.ctx, w.env, ClearOptions{All: true, MarkerOptions: MarkerOptions{NodeLabel: label}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Steps) != 6 || p.Confirm != w.cluster {
		t.Fatalf("plan: %d steps, confirm %q", len(p.Steps), p.Confirm)
	}
	x := &Executor{Audit: w.audit}
	if rep, err := x.DryRun(w.ctx, p); err != nil {
		t.Fatalf("dry run: %v\n%s", err, describeSteps(rep))
	}
	rep, err := x.Run(w.ctx, p)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, describeSteps(rep))
	}
	ms, err := ListMarkers(w.ctx, w.env, MarkerOptions{NodeLabel: label})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.State != MarkerNotSet {
			t.Errorf("%s still %s", m.ID, m.State)
		}
	}
	if len(rep.Closing) != 1 || !strings.Contains(rep.Closing[0], "a new upgrade can start") {
		t.Errorf("closing = %v", rep.Closing)
	}
	// The started entry, written before any step, holds every write the
	// run is to make and what it replaces: a console killed while the
	// Lease's delete landed, before its own entry, left no trace of the
	// delete or of the holder it removed.
	var started *upgrade.AuditEntry
	for _, e := range w.auditEntries() {
		if e.Action == ActionLockClear && e.Result == upgrade.AuditStarted {
			started = &e
		}
	}
	if started == nil {
		t.Fatal("no started entry")
	}
	before, _ := started.Before.(map[string]any)
	lease, _ := before["clear-lease"].(map[string]any)
	value, _ := lease["value"].(map[string]any)
	if len(before) != len(p.Steps) || value["holder"] == nil || lease["object"] != "Lease "+w.sys+"/"+upgrade.LockName(w.cluster) {
		t.Errorf("started entry's plan: %#v", started.Before)
	}
	// The upgrade lock can now be taken.
	l := &upgrade.Locker{Kube: w.client.Kube, Cluster: w.cluster, Holder: upgrade.Holder{User: "ops", Host: "bastion", Instance: "1"}, Audit: w.audit}
	if _, err := l.Acquire(w.ctx); err != nil {
		t.Fatalf("acquire after clear: %v", err)
	}

	// A second clear finds nothing stale (the new lock is live).
	w.now = time.Now()
	p2, _, err := PlanClear(w.ctx, w.env, ClearOptions{All: true, MarkerOptions: MarkerOptions{NodeLabel: label}})
	if err != nil || len(p2.Steps) != 0 {
		t.Fatalf("second --all: %v, %d steps: %+v", err, len(p2.Steps), p2.Steps)
	}
}

// planAllKeeping plans `lock clear --all` and checks that it reads marker
// as kept and plans no step that clears it.
func (w *world) planAllKeeping(nodeLabel, marker string) *Plan {
	w.t.Helper()
	p, ms, err := PlanClear(w.ctx, w.env, ClearOptions{All: true, MarkerOptions: MarkerOptions{NodeLabel: nodeLabel}})
	if err != nil {
		w.t.Fatal(err)
	}
	if got := markerStates(ms)[marker]; got != MarkerKept {
		w.t.Fatalf("%s = %s, want kept", marker, got)
	}
	for _, s := range p.Steps {
		if s.Name == "clear-"+marker {
			w.t.Errorf("--all clears the kept %s", marker)
		}
	}
	return p
}

func TestLockClearLeavesKeptAndLiveMarkersAlone(t *testing.T) {
	w := newWorld(t)
	label := w.seedStaleLock()
	rec := rollbackRecord{Phase: "done", NewMachine: "m", By: "ops@bastion", StartedAt: w.now}
	w.patch(upgrade.GVREKSACluster, w.ns, w.cluster, `{"metadata":{"annotations":{"`+AnnotationEtcdRollback+`":`+strconv.Quote(rec.encode())+`}}}`)
	p := w.planAllKeeping(label, MarkerPaused)
	if len(p.Notes) == 0 {
		t.Error("the plan does not say why paused is left")
	}
	// By name it is cleared, with the rollback record.
	p, _, err := PlanClear(w.ctx, w.env, ClearOptions{IDs: []string{MarkerPaused}, MarkerOptions: MarkerOptions{NodeLabel: label}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Confirm != w.cluster {
		t.Errorf("confirm = %q", p.Confirm)
	}
	if !strings.Contains(strings.Join(p.Notes, " "), "kept on purpose") {
		t.Errorf("clearing the kept pause by name does not warn: %q", p.Notes)
	}
	if _, err := (&Executor{Audit: w.audit}).Run(w.ctx, p); err != nil {
		t.Fatal(err)
	}
	c, err := w.client.Dynamic.Resource(upgrade.GVREKSACluster).Namespace(w.ns).Get(w.ctx, w.cluster, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.GetAnnotations()[AnnotationEtcdRollback]; ok || c.GetAnnotations()[model.AnnotationEKSAPaused] != "" {
		t.Errorf("annotations left: %v", c.GetAnnotations())
	}
	// Running the same clear again is a no-op.
	p, _, err = PlanClear(w.ctx, w.env, ClearOptions{IDs: []string{MarkerPaused}, MarkerOptions: MarkerOptions{NodeLabel: label}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := (&Executor{Audit: w.audit}).Run(w.ctx, p)
	if err != nil || rep.Steps[0].Status != StepAlreadyDone {
		t.Fatalf("second clear: %v %+v", err, rep.Steps)
	}
}

// The EKS-A CLI pauses the controller and sets managed-by-cli while it
// drives an operation. Neither is a leftover the console may call stale: it
// cannot tell whether that CLI still runs.
func TestLockClearLeavesTheEKSACLIsMarkersAlone(t *testing.T) {
	w := newWorld(t)
	label := w.seedStaleLock()
	w.patch(upgrade.GVREKSACluster, w.ns, w.cluster, `{"metadata":{"annotations":{"`+model.AnnotationManagedByCLI+`":"true"}}}`)
	p, ms, err := PlanClear(w.ctx, w.env, ClearOptions{All: true, MarkerOptions: MarkerOptions{NodeLabel: label}})
	if err != nil {
		t.Fatal(err)
	}
	st := markerStates(ms)
	if st[MarkerManagedByCLI] != MarkerLive || st[MarkerPaused] != MarkerLive {
		t.Fatalf("managed-by-cli %s, paused %s; want both live", st[MarkerManagedByCLI], st[MarkerPaused])
	}
	for _, s := range p.Steps {
		if s.Name == "clear-paused" || s.Name == "clear-managed-by-cli" {
			t.Errorf("--all plans %s", s.Name)
		}
	}
	_, _, err = PlanClear(w.ctx, w.env, ClearOptions{IDs: []string{MarkerPaused}, MarkerOptions: MarkerOptions{NodeLabel: label}})
	var refused *RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("clearing the CLI's pause without --force: %v, want a refusal", err)
	}
	if want := "Cluster " + w.ns + "/" + w.cluster; refused.Object != want {
		t.Errorf("refusal object = %q, want %q", refused.Object, want)
	}
	p, _, err = PlanClear(w.ctx, w.env, ClearOptions{IDs: []string{MarkerManagedByCLI, MarkerPaused}, Force: true, MarkerOptions: MarkerOptions{NodeLabel: label}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&Executor{Audit: w.audit}).Run(w.ctx, p); err != nil {
		t.Fatal(err)
	}
	c, err := w.client.Dynamic.Resource(upgrade.GVREKSACluster).Namespace(w.ns).Get(w.ctx, w.cluster, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a := c.GetAnnotations(); a[model.AnnotationManagedByCLI] != "" || a[model.AnnotationEKSAPaused] != "" {
		t.Errorf("annotations left after the forced clear: %v", a)
	}

	// Any other value does not stop the controller: a stale leftover.
	w.patch(upgrade.GVREKSACluster, w.ns, w.cluster, `{"metadata":{"annotations":{"`+model.AnnotationManagedByCLI+`":"false"}}}`)
	ms, err = ListMarkers(w.ctx, w.env, MarkerOptions{NodeLabel: label})
	if err != nil {
		t.Fatal(err)
	}
	if got := markerStates(ms)[MarkerManagedByCLI]; got != MarkerStale {
		t.Errorf("managed-by-cli \"false\" = %s, want stale", got)
	}
}

// raceDynamic runs before ahead of the first real (not dry-run) patch: a
// second `lock clear` that gets there between this one's read and write.
type raceDynamic struct {
	dynamic.Interface
	before func()
}

func (r raceDynamic) Resource(g schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return raceNamespaceable{r.Interface.Resource(g), r.before}
}

type raceNamespaceable struct {
	dynamic.NamespaceableResourceInterface
	before func()
}

func (r raceNamespaceable) Namespace(ns string) dynamic.ResourceInterface {
	return raceResource{r.NamespaceableResourceInterface.Namespace(ns), r.before}
}

type raceResource struct {
	dynamic.ResourceInterface
	before func()
}

func (r raceResource) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, o metav1.PatchOptions, sub ...string) (*unstructured.Unstructured, error) {
	if len(o.DryRun) == 0 {
		r.before()
	}
	return r.ResourceInterface.Patch(ctx, name, pt, data, o, sub...)
}

// Two `lock clear` runs at once: the one that finds its marker removed
// between its read and its write has nothing left to do, and says so
// (already done), instead of failing on a change it would have made.
func TestLockClearRacingAnotherClearIsAlreadyDone(t *testing.T) {
	w := newWorld(t)
	w.seedStaleLock()
	var once sync.Once
	client := *w.client
	client.Dynamic = raceDynamic{w.client.Dynamic, func() {
		once.Do(func() {
			w.patch(upgrade.GVREKSACluster, w.ns, w.cluster, `{"metadata":{"annotations":{"`+model.AnnotationEKSAPaused+`":null}}}`)
		})
	}}
	env := *w.env
	env.Client = &client
	p, _, err := PlanClear(w.ctx, &env, ClearOptions{IDs: []string{MarkerPaused}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := (&Executor{Audit: w.audit}).Run(w.ctx, p)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, describeSteps(rep))
	}
	if s := rep.Steps[0]; s.Status != StepAlreadyDone || !strings.Contains(s.Detail, "removed meanwhile") {
		t.Errorf("step = %+v, want already done, removed meanwhile", s)
	}
}

// EKS-A pauses the KCP, then marks etcd upgrading. Between the two writes the
// KCP pause is EKS-A's own, not a leftover to clear.
func TestKCPPauseOfARunningEKSAIsLiveForAWhile(t *testing.T) {
	w := newWorld(t)
	w.seedEtcdRollout(true)
	w.patch(upgrade.GVREtcdadmCluster, w.sys, w.cluster+"-etcd", `{"metadata":{"annotations":{"`+model.AnnotationEtcdUpgrading+`":null}}}`)
	etcd, err := w.client.Dynamic.Resource(upgrade.GVREtcdadmCluster).Namespace(w.sys).Get(w.ctx, w.cluster+"-etcd", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.setStatus(upgrade.GVREtcdadmCluster, w.sys, etcd.GetName(), map[string]any{"ready": true, "replicas": int64(3), "observedGeneration": etcd.GetGeneration()})
	state := func() MarkerState {
		t.Helper()
		ms, err := ListMarkers(w.ctx, w.env, MarkerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return markerStates(ms)[MarkerKCPPaused]
	}
	w.now = time.Now()
	if got := state(); got != MarkerLive {
		t.Errorf("KCP paused just now with EKS-A reconciling: %s, want live", got)
	}
	w.now = time.Now().Add(kcpPauseGrace + time.Minute)
	if got := state(); got != MarkerStale {
		t.Errorf("KCP paused %s ago, etcd not rolling: %s, want stale", kcpPauseGrace+time.Minute, got)
	}
	w.now = time.Now()
	w.patch(upgrade.GVREKSACluster, w.ns, w.cluster, `{"metadata":{"annotations":{"`+model.AnnotationEKSAPaused+`":"true"}}}`)
	if got := state(); got != MarkerStale {
		t.Errorf("KCP paused just now with EKS-A paused: %s, want stale", got)
	}
}

func TestLockClearLiveLeaseNeedsForceAndIsRecorded(t *testing.T) {
	w := newWorld(t)
	w.create(upgrade.GVREKSACluster, obj("anywhere.eks.amazonaws.com/v1alpha1", "Cluster", w.ns, w.cluster, nil, nil, map[string]any{"kubernetesVersion": "1.31"}))
	w.lease("alice@laptop/1", w.now)
	_, _, err := PlanClear(w.ctx, w.env, ClearOptions{IDs: []string{MarkerLease}})
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(refused.Error(), "--force") {
		t.Fatalf("clear of a live lease: %v, want a refusal naming --force", err)
	}
	if want := "Lease " + w.sys + "/" + upgrade.LockName(w.cluster); refused.Object != want {
		t.Errorf("refusal object = %q, want %q", refused.Object, want)
	}
	p, _, err := PlanClear(w.ctx, w.env, ClearOptions{IDs: []string{MarkerLease}, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Confirm != upgrade.LockName(w.cluster) {
		t.Errorf("confirm = %q, want the lease's name", p.Confirm)
	}
	// The live holder renews while the operator types the name (every 20 s,
	// typing takes longer): the forced clear failed on the plan's
	// resourceVersion, every time. The same holder's lease is deleted.
	renew := func(holder string) {
		l, err := w.client.Kube.CoordinationV1().Leases(w.sys).Get(w.ctx, upgrade.LockName(w.cluster), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		l.Spec.HolderIdentity = &holder
		l.Spec.RenewTime = &metav1.MicroTime{Time: l.Spec.RenewTime.Add(time.Second)} // a new resourceVersion
		if _, err := w.client.Kube.CoordinationV1().Leases(w.sys).Update(w.ctx, l, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	renew("alice@laptop/1")
	if _, err := (&Executor{Audit: w.audit}).Run(w.ctx, p); err != nil {
		t.Fatal(err)
	}
	if st, err := upgrade.ReadLock(w.ctx, w.client.Kube, w.sys, w.cluster); err != nil || st != nil {
		t.Fatalf("lease after forced clear: %+v %v", st, err)
	}
	for _, e := range w.auditEntries() {
		if !e.Forced {
			t.Errorf("entry not marked forced: %+v", e)
		}
	}

	// Taken by another holder meanwhile: not theirs to clear by this plan.
	w.lease("alice@laptop/1", w.now)
	p, _, err = PlanClear(w.ctx, w.env, ClearOptions{IDs: []string{MarkerLease}, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	renew("bob@desk/2")
	var cc *ConcurrentChangeError
	if _, err := (&Executor{Audit: w.audit}).Run(w.ctx, p); !errors.As(err, &cc) || !strings.Contains(cc.What, "taken by bob@desk/2") {
		t.Fatalf("forced clear of a lease taken meanwhile: %v, want a concurrent change", err)
	}
	if st, err := upgrade.ReadLock(w.ctx, w.client.Kube, w.sys, w.cluster); err != nil || st == nil {
		t.Errorf("bob's lease was deleted: %+v %v", st, err)
	}
}

// A forced clear of a live lease that was deleted and taken again by the
// same holder (a console restarted) after the plan never deletes the new
// lease, and says it is another lease. Without the UID check the operator
// was told the lease the plan read was renewed by a live holder, when the
// lock it meant to clear is gone and a new one was taken.
func TestLockClearForcedOfALeaseMadeAnewIsRefused(t *testing.T) {
	w := newWorld(t)
	w.create(upgrade.GVREKSACluster, obj("anywhere.eks.amazonaws.com/v1alpha1", "Cluster", w.ns, w.cluster, nil, nil, map[string]any{"kubernetesVersion": "1.31"}))
	w.lease("alice@laptop/1", w.now)
	leases := w.client.Kube.CoordinationV1().Leases(w.sys)
	remake := func() types.UID {
		t.Helper()
		if err := leases.Delete(w.ctx, upgrade.LockName(w.cluster), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		w.lease("alice@laptop/1", w.now)
		l, err := leases.Get(w.ctx, upgrade.LockName(w.cluster), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return l.UID
	}
	stays := func(uid types.UID) {
		t.Helper()
		st, err := upgrade.ReadLock(w.ctx, w.client.Kube, w.sys, w.cluster)
		if err != nil || st == nil || st.UID != string(uid) || st.HolderIdentity != "alice@laptop/1" {
			t.Fatalf("the lease made anew (uid %s): %+v %v, want it untouched", uid, st, err)
		}
	}

	// Made anew before the run: the lease the plan read is gone, and the
	// step says so without touching the new one.
	p, _, err := PlanClear(w.ctx, w.env, ClearOptions{IDs: []string{MarkerLease}, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	uid := remake()
	rep, err := (&Executor{Audit: w.audit}).Run(w.ctx, p)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, describeSteps(rep))
	}
	if s := rep.Steps[0]; s.Status != StepAlreadyDone || !strings.Contains(s.Detail, "another lease") {
		t.Errorf("step = %+v, want already done, another lease not touched", s)
	}
	stays(uid)

	// Made anew between the step's check and its delete.
	var armed atomic.Bool
	client := *w.client
	client.Kube = raceKube{w.client.Kube, func() {
		if armed.CompareAndSwap(true, false) {
			uid = remake()
		}
	}}
	env := *w.env
	env.Client = &client
	p, _, err = PlanClear(w.ctx, &env, ClearOptions{IDs: []string{MarkerLease}, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	var cc *ConcurrentChangeError
	if rep, err := (&Executor{Audit: w.audit}).Run(w.ctx, p); !errors.As(err, &cc) || !strings.Contains(cc.What, "another lease") {
		t.Fatalf("forced clear of a lease made anew meanwhile: %v, want a concurrent change, another lease\n%s", err, describeSteps(rep))
	}
	stays(uid)
}

// raceKube runs after behind every lease read: a lease that changes between
// a step's check and its write.
type raceKube struct {
	kubernetes.Interface
	after func()
}

func (r raceKube) CoordinationV1() coordinationv1client.CoordinationV1Interface {
	return raceCoordination{r.Interface.CoordinationV1(), r.after}
}

type raceCoordination struct {
	coordinationv1client.CoordinationV1Interface
	after func()
}

func (r raceCoordination) Leases(ns string) coordinationv1client.LeaseInterface {
	return raceLeases{r.CoordinationV1Interface.Leases(ns), r.after}
}

type raceLeases struct {
	coordinationv1client.LeaseInterface
	after func()
}

func (r raceLeases) Get(ctx context.Context, name string, o metav1.GetOptions) (*coordinationv1.Lease, error) {
	l, err := r.LeaseInterface.Get(ctx, name, o)
	r.after()
	return l, err
}

func TestLockClearNeverDeletesARenewedLease(t *testing.T) {
	w := newWorld(t)
	w.create(upgrade.GVREKSACluster, obj("anywhere.eks.amazonaws.com/v1alpha1", "Cluster", w.ns, w.cluster, nil, nil, map[string]any{"kubernetesVersion": "1.31"}))
	w.lease("alice@laptop/1", w.now.Add(-time.Hour))
	p, _, err := PlanClear(w.ctx, w.env, ClearOptions{IDs: []string{MarkerLease}})
	if err != nil {
		t.Fatal(err)
	}
	// The holder comes back to life and renews between plan and run.
	leases := w.client.Kube.CoordinationV1().Leases(w.sys)
	l, err := leases.Get(w.ctx, upgrade.LockName(w.cluster), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l.Spec.RenewTime = &metav1.MicroTime{Time: w.now}
	l.Spec.LeaseDurationSeconds = ptr.To(int32(60))
	if _, err := leases.Update(w.ctx, l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = (&Executor{Audit: w.audit}).Run(w.ctx, p)
	var cc *ConcurrentChangeError
	if !errors.As(err, &cc) {
		t.Fatalf("err = %v, want ConcurrentChangeError", err)
	}
	if st, _ := upgrade.ReadLock(w.ctx, w.client.Kube, w.sys, w.cluster); st == nil {
		t.Fatal("the renewed lease was deleted")
	}
}

func TestLockClearBadInput(t *testing.T) {
	w := newWorld(t)
	w.create(upgrade.GVREKSACluster, obj("anywhere.eks.amazonaws.com/v1alpha1", "Cluster", w.ns, w.cluster, nil, nil, map[string]any{"kubernetesVersion": "1.31"}))
	for _, o := range []ClearOptions{{}, {IDs: []string{"everything"}}, {IDs: []string{MarkerEtcdUpgrading}}, {IDs: []string{MarkerNodeLabel + "/no-such-node"}}} {
		var ie *model.InputError
		if _, _, err := PlanClear(w.ctx, w.env, o); !errors.As(err, &ie) {
			t.Errorf("%+v: %v, want an InputError", o, err)
		}
	}
}

func TestLockClearResumesAfterAnInterruptionAtEveryStep(t *testing.T) {
	for k := range 6 {
		t.Run(fmt.Sprint(k+1), func(t *testing.T) {
			w := newWorld(t)
			label := w.seedStaleLock()
			o := ClearOptions{All: true, MarkerOptions: MarkerOptions{NodeLabel: label}}
			p, _, err := PlanClear(w.ctx, w.env, o)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Steps) != 6 {
				t.Fatalf("%d steps, want 6", len(p.Steps))
			}
			ctx, cancel := context.WithCancel(w.ctx)
			x := &Executor{Audit: w.audit, afterStep: func(i int) {
				if i == k {
					cancel()
				}
			}}
			_, _ = x.Run(ctx, p)
			cancel()
			again, _, err := PlanClear(w.ctx, w.env, o)
			if err != nil {
				t.Fatal(err)
			}
			if k < 5 && len(again.Steps) != 5-k {
				t.Errorf("replanned %d steps after %d done, want %d", len(again.Steps), k+1, 5-k)
			}
			if len(again.Steps) > 0 {
				if _, err := (&Executor{Audit: w.audit}).Run(w.ctx, again); err != nil {
					t.Fatal(err)
				}
			}
			ms, err := ListMarkers(w.ctx, w.env, MarkerOptions{NodeLabel: label})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range ms {
				if m.State != MarkerNotSet {
					t.Errorf("%s still %s after the resumed clear", m.ID, m.State)
				}
			}
		})
	}
}

// The lease of an upgrade that failed is kept on purpose: it reads as kept at
// once (not live until it runs out), `--all` leaves it, and clearing it by
// name needs no --force.
func TestLockClearLeavesAKeptLeaseToBeClearedByName(t *testing.T) {
	w := newWorld(t)
	w.seedEtcdRollout(false)
	w.lease("bob@desk/b0b", w.now)
	leases := w.client.Kube.CoordinationV1().Leases(w.sys)
	l, err := leases.Get(w.ctx, upgrade.LockName(w.cluster), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l.Annotations = map[string]string{model.AnnotationLockKept: "upgrade failed: boom"}
	if _, err := leases.Update(w.ctx, l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Kept, nobody renews it: an etcd rollback takes it over (its
	// no-live-lock precondition passes), so lock status does not say the
	// lease blocks one.
	ms, err := ListMarkers(w.ctx, w.env, MarkerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b := ms[0].Blocks; ms[0].ID != MarkerLease || strings.Contains(b, "any etcd rollback") || !strings.Contains(b, "an etcd rollback takes it over") {
		t.Errorf("%s blocks %q", ms[0].ID, b)
	}
	p := w.planAllKeeping("", MarkerLease)
	// A console still following releases it: told only to clear it, the
	// operator cleared it for nothing.
	if n := strings.Join(p.Notes, " "); !strings.Contains(n, "lease left as it is (kept)") ||
		!strings.Contains(n, "a console still following the upgrade releases it when the upgrade completes; otherwise, once the cluster is checked, "+
			"clear it by name: `upgrade-console lock clear lease --cluster "+w.cluster+" -n "+w.ns+"`") {
		t.Errorf("--all: notes %q, want the kept lease and the command that clears it", p.Notes)
	}
	p, _, err = PlanClear(w.ctx, w.env, ClearOptions{IDs: []string{MarkerLease}})
	if err != nil {
		t.Fatalf("clearing the kept lease by name without --force: %v", err)
	}
	if p.Forced || !strings.Contains(strings.Join(p.Notes, " "), "lets a new upgrade start") {
		t.Errorf("forced %t, notes %q", p.Forced, p.Notes)
	}
	if _, err := (&Executor{Audit: w.audit}).Run(w.ctx, p); err != nil {
		t.Fatal(err)
	}
	if st, err := upgrade.ReadLock(w.ctx, w.client.Kube, w.sys, w.cluster); err != nil || st.Held() {
		t.Errorf("lease after the clear: %v %+v", err, st)
	}
	// Again: nothing to delete, said as clear paused says it.
	p, _, err = PlanClear(w.ctx, w.env, ClearOptions{IDs: []string{MarkerLease}})
	if err != nil || len(p.Steps) != 1 || p.Steps[0].Change != "none: there is no upgrade lock Lease" {
		t.Fatalf("clear lease again: %v, steps %+v", err, p.Steps)
	}
	if rep, err := (&Executor{Audit: w.audit}).Run(w.ctx, p); err != nil || rep.Steps[0].Status != StepAlreadyDone {
		t.Errorf("clear lease again: %v\n%s", err, describeSteps(rep))
	}
}

// A name `lock clear` does not know is told apart without a cluster: the
// command line refuses it (exit 2) before anything is read.
func TestKnownMarkerID(t *testing.T) {
	for id, want := range map[string]bool{
		MarkerLease: true, MarkerManagedByCLI: true, MarkerPaused: true, MarkerKCPPaused: true, MarkerEtcdUpgrading: true,
		MarkerNodeLabel: true, MarkerNodeLabel + "/mgmt-md-0-abc": true,
		"bogus": false, "": false, "Lease": false, MarkerNodeLabel + "/": false, MarkerNodeLabel + "/a/b": false, "node-labels/x": false,
	} {
		if got := KnownMarkerID(id); got != want {
			t.Errorf("KnownMarkerID(%q) = %t, want %t", id, got, want)
		}
	}
}

// With every lock and marker cleared, lock clear said "a new upgrade can
// start" of a cluster EKS-A was still upgrading (a lock cleared under a
// running upgrade): the closing line says it has not reached its spec, by
// the rule the plan and the dashboard use.
func TestSpecNotReached(t *testing.T) {
	cond := func(typ, status, msg string) any {
		return map[string]any{"type": typ, "status": status, "message": msg}
	}
	atRest := []any{cond("ControlPlaneReady", "True", ""), cond("WorkersReady", "True", ""), cond("Ready", "True", "")}
	cluster := func(gen, observed int64, failure string, conds []any) *unstructured.Unstructured {
		status := map[string]any{"observedGeneration": observed, "conditions": conds}
		if failure != "" {
			status["failureMessage"] = failure
		}
		return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "mgmt", "namespace": "default", "generation": gen}, "status": status}}
	}
	if st := specNotReached(cluster(2, 2, "", atRest), nil); st != nil {
		t.Errorf("at rest: %+v", st)
	}
	if st := specNotReached(&unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "mgmt", "generation": int64(1)}}}, nil); st != nil {
		t.Errorf("a status never written: %+v", st)
	}
	for _, c := range []struct {
		name string
		u    *unstructured.Unstructured
		want string
	}{
		{"not observed", cluster(3, 2, "", atRest), "EKS-A has not observed it yet (generation 3, observed 2)"},
		{"failed", cluster(2, 2, "template is missing tag", atRest), "template is missing tag"},
		{"rolling", cluster(2, 2, "", []any{cond("ControlPlaneReady", "True", ""), cond("WorkersReady", "False", "Workers not ready yet"), cond("Ready", "False", "")}), "Workers not ready yet"},
	} {
		st := specNotReached(c.u, nil)
		if st == nil || !strings.Contains(st.Message, c.want) || !strings.Contains(st.Next, "upgrade-console watch") {
			t.Errorf("%s: %+v, want a message with %q and watch as the next step", c.name, st, c.want)
		}
	}
}

// A paused Cluster whose spec was changed meanwhile (kubectl apply, GitOps):
// clearing paused makes EKS-A start that change at once, and nothing said
// so; lock status called the marker a leftover, the plan had the step alone.
func TestLockClearPausedSaysItStartsAPendingSpec(t *testing.T) {
	w := newWorld(t)
	label := w.seedStaleLock()
	cl, err := w.client.Dynamic.Resource(upgrade.GVREKSACluster).Namespace(w.ns).Get(w.ctx, w.cluster, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.setStatus(upgrade.GVREKSACluster, w.ns, w.cluster, map[string]any{"observedGeneration": cl.GetGeneration()})
	const says = "clearing paused makes EKS-A start that change at once"
	plan := func() (*Plan, Marker) {
		t.Helper()
		p, ms, err := PlanClear(w.ctx, w.env, ClearOptions{IDs: []string{MarkerPaused}, MarkerOptions: MarkerOptions{NodeLabel: label}})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if m.ID == MarkerPaused {
				return p, m
			}
		}
		t.Fatal("no paused marker")
		return nil, Marker{}
	}
	if p, m := plan(); strings.Contains(strings.Join(p.Notes, " "), says) || strings.Contains(m.Reason, says) {
		t.Errorf("a reconciled spec: notes %q, reason %q", p.Notes, m.Reason)
	}
	w.patch(upgrade.GVREKSACluster, w.ns, w.cluster, `{"spec":{"eksaVersion":"v9.9.9"}}`)
	p, m := plan()
	if !strings.Contains(strings.Join(p.Notes, " "), says) || !strings.Contains(m.Reason, says) {
		t.Errorf("a spec changed while paused: notes %q, reason %q", p.Notes, m.Reason)
	}
	all, ms, err := PlanClear(w.ctx, w.env, ClearOptions{All: true, MarkerOptions: MarkerOptions{NodeLabel: label}})
	if err != nil || !strings.Contains(strings.Join(all.Notes, " "), says) {
		t.Errorf("--all: %v, notes %q %+v", err, all.Notes, markerStates(ms))
	}
	// Cleared, its end says that EKS-A now upgrades the cluster with
	// nobody following: "Still set: kcp-paused (live)" did not.
	rep, err := (&Executor{Audit: w.audit}).Run(w.ctx, p)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, describeSteps(rep))
	}
	// The stale lease is still set: "no upgrade lock" was said of it.
	if got := strings.Join(rep.Closing, "\n"); !strings.Contains(got, "is resumed and works on its spec now") || !strings.Contains(got, "`upgrade-console watch --cluster "+w.cluster) ||
		!strings.Contains(got, "its upgrade lock is still set (stale, ") || strings.Contains(got, "no upgrade lock") {
		t.Errorf("closing = %q", got)
	}
}

// The resumed line names who follows the upgrade by its lock: it said "no
// console following it and no upgrade lock" whatever the lock, also to the
// dashboard that held it and released it at completion.
func TestResumedFollowerNamesTheLock(t *testing.T) {
	self := upgrade.Holder{User: "ops", Host: "bastion", Instance: "1a2b"}
	env := &Env{Cluster: "mgmt", Holder: self}
	lease := func(state MarkerState, holder string) *Marker {
		return &Marker{ID: MarkerLease, State: state, Holder: holder, lease: &upgrade.LockStatus{Lock: model.Lock{HolderIdentity: holder}}}
	}
	for _, c := range []struct {
		name  string
		lease *Marker
		want  string
	}{
		{"released", &Marker{ID: MarkerLease, State: MarkerNotSet}, ", and no console holds its upgrade lock: follow it with `upgrade-console watch --cluster mgmt`."},
		{"this console's, kept", lease(MarkerKept, self.String()), "; this console holds its upgrade lock and follows it: it releases the lock when the upgrade completes."},
		{"another's, live", lease(MarkerLive, "ann@laptop/9f"), "; the console holding its upgrade lock (ann@laptop/9f) follows it. To follow it here too: `upgrade-console watch --cluster mgmt`."},
		{"another's, kept", lease(MarkerKept, "ann@laptop/9f"), "; its upgrade lock is still set (kept, ann@laptop/9f): a console still following the upgrade releases it when the upgrade completes. To follow it: `upgrade-console watch --cluster mgmt`."},
		{"another's, stale", lease(MarkerStale, "ann@laptop/9f"), "; its upgrade lock is still set (stale, ann@laptop/9f) and no console renews it. To follow the upgrade: `upgrade-console watch --cluster mgmt`."},
	} {
		if got := resumedFollower(env, c.lease); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// What a partial clear leaves set is shown with a `lock status` that names
// the cluster: without --cluster the command only printed a usage error.
func TestLockClearClosingLockStatusNamesTheCluster(t *testing.T) {
	w := newWorld(t)
	label := w.seedStaleLock()
	w.env.Conn = model.ConnFlags{{Name: "context", Value: "prod"}}
	p, _, err := PlanClear(w.ctx, w.env, ClearOptions{IDs: []string{MarkerLease}, MarkerOptions: MarkerOptions{NodeLabel: label}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := (&Executor{Audit: w.audit}).Run(w.ctx, p)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, describeSteps(rep))
	}
	want := "`upgrade-console lock status --cluster " + w.cluster + " -n " + w.ns + " --context prod`"
	if got := strings.Join(rep.Closing, "\n"); !strings.Contains(got, "Still set") || !strings.Contains(got, want) {
		t.Errorf("closing = %q, want it to name %s", got, want)
	}
}

// lock clear's closing names the Cluster's namespace: without -n, the
// pasted lock status read the default namespace's Cluster of that name.
func TestLockClearClosingNamesTheClusterNamespace(t *testing.T) {
	env := &Env{Cluster: "mgmt", ClusterNamespace: "clusters", Conn: model.ConnFlags{{Name: "context", Value: "prod"}}}
	if got, want := env.clusterFlags(), "--cluster mgmt -n clusters --context prod"; got != want {
		t.Errorf("clusterFlags = %q, want %q", got, want)
	}
	env.ClusterNamespace = "default"
	if got, want := env.clusterFlags(), "--cluster mgmt --context prod"; got != want {
		t.Errorf("clusterFlags = %q, want %q", got, want)
	}
}

// A stale pause planned for clearing turns live while the confirmation
// waits (the EKS-A CLI starts an operation: managed-by-cli and paused set
// again, the same value the patch tests): the clear is refused, nothing
// written; under --force it goes on, and says the marker was live.
func TestClearRefusesAMarkerThatTurnedLiveSinceThePlan(t *testing.T) {
	for _, force := range []bool{false, true} {
		t.Run(fmt.Sprintf("force=%v", force), func(t *testing.T) {
			w := newWorld(t)
			label := w.seedStaleLock()
			o := ClearOptions{IDs: []string{MarkerPaused}, Force: force, MarkerOptions: MarkerOptions{NodeLabel: label}}
			p, _, err := PlanClear(w.ctx, w.env, o)
			if err != nil {
				t.Fatal(err)
			}
			w.patch(upgrade.GVREKSACluster, w.ns, w.cluster, `{"metadata":{"annotations":{"`+model.AnnotationManagedByCLI+`":"true"}}}`)
			rep, err := (&Executor{Audit: w.audit}).Run(w.ctx, p)
			c, gerr := w.res(upgrade.GVREKSACluster, w.ns).Get(w.ctx, w.cluster, metav1.GetOptions{})
			if gerr != nil {
				t.Fatal(gerr)
			}
			_, stillPaused := c.GetAnnotations()[model.AnnotationEKSAPaused]
			if !force {
				var cc *ConcurrentChangeError
				if !errors.As(err, &cc) || !rep.Refused(err) || !strings.Contains(cc.What, "--force") || !stillPaused {
					t.Fatalf("run: %v (paused still set: %v), want refused naming --force, nothing written\n%s", err, stillPaused, describeSteps(rep))
				}
				return
			}
			if err != nil || stillPaused || !strings.Contains(rep.Steps[0].Detail, "live since the plan") {
				t.Fatalf("forced run: %v (paused still set: %v)\n%s", err, stillPaused, describeSteps(rep))
			}
		})
	}
}

// A node label planned stale turns live when a console takes the lock
// while the confirmation waits: the clear reads the lock alone (not every
// marker, a LIST of the labelled nodes per node) and refuses.
func TestClearRefusesANodeLabelOnceALockIsLive(t *testing.T) {
	w := newWorld(t)
	label := w.seedStaleLock()
	id := MarkerNodeLabel + "/" + w.cluster + "-n1"
	p, _, err := PlanClear(w.ctx, w.env, ClearOptions{IDs: []string{id}, MarkerOptions: MarkerOptions{NodeLabel: label}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.client.Kube.CoordinationV1().Leases(w.sys).Delete(w.ctx, upgrade.LockName(w.cluster), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.lease("carol@desk/c4r0", w.now)
	rep, err := (&Executor{Audit: w.audit}).Run(w.ctx, p)
	var cc *ConcurrentChangeError
	if !errors.As(err, &cc) || !rep.Refused(err) || !strings.Contains(cc.What, "a console holds a live upgrade lock (carol@desk") {
		t.Fatalf("run: %v, want refused naming the live lock\n%s", err, describeSteps(rep))
	}
}

// A clear whose write landed but whose answer was lost (a timeout): read
// again, the marker is gone, and the step is this write's, recorded with
// what it removed; it read as another writer's change, with no values.
func TestClearWhoseAnswerWasLostIsItsOwnWrite(t *testing.T) {
	w := newWorld(t)
	label := w.seedStaleLock()
	var lost atomic.Bool
	env := w.envAnswered(func(r *http.Request) error {
		if r.Method == http.MethodPatch && r.URL.Query().Get("dryRun") == "" && lost.CompareAndSwap(false, true) {
			return errors.New("net/http: request canceled (Client.Timeout exceeded while awaiting headers)")
		}
		return nil
	})
	p, _, err := PlanClear(w.ctx, env, ClearOptions{IDs: []string{MarkerPaused}, MarkerOptions: MarkerOptions{NodeLabel: label}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := (&Executor{Audit: w.audit}).Run(w.ctx, p)
	if err != nil || !lost.Load() || rep.Steps[0].Status != StepDone || !strings.Contains(rep.Steps[0].Detail, "answer was lost") {
		t.Fatalf("run: %v (answer lost: %v)\n%s", err, lost.Load(), describeSteps(rep))
	}

	// An answer (the object not found, its test refused) says the write
	// did not land: another writer's removal, recorded as no write.
	w2 := newWorld(t)
	label = w2.seedStaleLock()
	var answered atomic.Bool
	env = w2.envAnswered(func(r *http.Request) error {
		if r.Method == http.MethodPatch && r.URL.Query().Get("dryRun") == "" && answered.CompareAndSwap(false, true) {
			return apierrors.NewNotFound(schema.GroupResource{Group: "anywhere.eks.amazonaws.com", Resource: "clusters"}, w2.cluster)
		}
		return nil
	})
	p, _, err = PlanClear(w2.ctx, env, ClearOptions{IDs: []string{MarkerPaused}, MarkerOptions: MarkerOptions{NodeLabel: label}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err = (&Executor{Audit: w2.audit}).Run(w2.ctx, p)
	if err != nil || rep.Steps[0].Status != StepAlreadyDone || !strings.Contains(rep.Steps[0].Detail, "removed meanwhile by another writer") {
		t.Fatalf("an answer: %v\n%s", err, describeSteps(rep))
	}
}

// After a clear that resumed EKS-A, the markers the controllers set for the
// rollout it started are said as theirs: "Still set: kcp-paused (live)"
// read as more to clear. Any other marker left is still "Still set".
func TestMarkersLeftAfterAResume(t *testing.T) {
	env := &Env{Cluster: "mgmt"}
	kcp := Marker{ID: MarkerKCPPaused, State: MarkerLive}
	if got := markersLeft(context.Background(), env, []Marker{kcp, {ID: MarkerPaused, State: MarkerNotSet}}, true); len(got) != 1 || !strings.HasPrefix(got[0], "Set by the controllers for the rollout now under way") {
		t.Errorf("controllers' markers: %q", got)
	}
	for name, ms := range map[string][]Marker{
		"a live lease":      {kcp, {ID: MarkerLease, State: MarkerLive}},
		"a stale KCP pause": {{ID: MarkerKCPPaused, State: MarkerStale}},
	} {
		if got := markersLeft(context.Background(), env, ms, true); len(got) != 1 || !strings.HasPrefix(got[0], "Still set: ") {
			t.Errorf("%s: %q", name, got)
		}
	}
	if got := markersLeft(context.Background(), env, []Marker{kcp}, false); len(got) != 1 || !strings.HasPrefix(got[0], "Still set: ") {
		t.Errorf("no resume: %q", got)
	}
}

// A marker whose value changed since the plan (another writer) is not
// removed: the step clears it only "if it is still" what the plan showed.
func TestClearLeavesAMarkerWhoseValueChangedSinceThePlan(t *testing.T) {
	w := newWorld(t)
	label := w.seedStaleLock()
	p, _, err := PlanClear(w.ctx, w.env, ClearOptions{IDs: []string{MarkerPaused}, MarkerOptions: MarkerOptions{NodeLabel: label}})
	if err != nil {
		t.Fatal(err)
	}
	w.patch(upgrade.GVREKSACluster, w.ns, w.cluster, `{"metadata":{"annotations":{"`+model.AnnotationEKSAPaused+`":"paused-by-ops"}}}`)
	rep, err := (&Executor{Audit: w.audit}).Run(w.ctx, p)
	c, gerr := w.res(upgrade.GVREKSACluster, w.ns).Get(w.ctx, w.cluster, metav1.GetOptions{})
	if gerr != nil {
		t.Fatal(gerr)
	}
	if err == nil || c.GetAnnotations()[model.AnnotationEKSAPaused] != "paused-by-ops" {
		t.Errorf("run: %v; paused = %q, want the changed value kept\n%s", err, c.GetAnnotations()[model.AnnotationEKSAPaused], describeSteps(rep))
	}
}

// This console's own live lock is not another console's upgrade: the
// leftovers beside it stay stale, as `lock clear --all` from its own R menu
// clears them (read as live, --all left them and a clear by name needed
// --force).
func TestOwnLiveLockLeavesTheLeftoversStale(t *testing.T) {
	w := newWorld(t)
	label := w.seedStaleLock()
	if err := w.client.Kube.CoordinationV1().Leases(w.sys).Delete(w.ctx, upgrade.LockName(w.cluster), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.lease(w.env.Holder.String(), w.now)
	ms, err := ListMarkers(w.ctx, w.env, MarkerOptions{NodeLabel: label})
	if err != nil {
		t.Fatal(err)
	}
	got := markerStates(ms)
	if got[MarkerLease] != MarkerLive || got[MarkerPaused] != MarkerStale || got[MarkerEtcdUpgrading] != MarkerStale {
		t.Errorf("markers beside this console's own live lock: %v, want the lease live and the rest stale", got)
	}
}

// A node label on a node whose in-place upgrade has not completed is that
// upgrade's own marker, live with or without a console's lock: listed
// stale, `lock clear --all` took it off a node mid-step, with no --force.
func TestNodeLabelOfANodeUpgradingInPlaceIsLive(t *testing.T) {
	w := newWorld(t)
	label := w.seedStaleLock()
	n1, n2 := w.cluster+"-n1", w.cluster+"-n2"
	for _, n := range []string{n1, n2} {
		w.create(gvrNodeUpgrade, obj("anywhere.eks.amazonaws.com/v1alpha1", "NodeUpgrade", w.sys, n+"-node-upgrader", nil, nil,
			map[string]any{"kubernetesVersion": targetKubeadm, "machine": map[string]any{"kind": "Machine", "name": n, "namespace": w.sys}}))
	}
	// n2's is done: its label is a leftover.
	w.setStatus(gvrNodeUpgrade, w.sys, n2+"-node-upgrader", map[string]any{"completed": true})
	ms, err := ListMarkers(w.ctx, w.env, MarkerOptions{NodeLabel: label})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Marker{}
	for _, m := range ms {
		byID[m.ID] = m
	}
	if m := byID[MarkerNodeLabel+"/"+n1]; m.State != MarkerLive || !strings.Contains(m.Reason, "NodeUpgrade "+n1+"-node-upgrader upgrades this node in place") {
		t.Errorf("the label of the node upgrading in place: %+v", m)
	}
	if m := byID[MarkerNodeLabel+"/"+n2]; m.State != MarkerStale {
		t.Errorf("the label of the node whose upgrade completed: %+v", m)
	}
}

// A Cluster another one manages (a workload cluster) has its Nodes on its own
// API server: the labelled Nodes of this one are the management cluster's,
// and were listed, and cleared by `lock clear --all`, as its markers.
func TestNodeLabelsAreNotAWorkloadClustersMarkers(t *testing.T) {
	w := newWorld(t)
	label := w.seedStaleLock()
	w.patch(upgrade.GVREKSACluster, w.ns, w.cluster, `{"spec":{"managementCluster":{"name":"mgmt-of-`+w.cluster+`"}}}`)
	ms, err := ListMarkers(w.ctx, w.env, MarkerOptions{NodeLabel: label})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if strings.HasPrefix(m.ID, MarkerNodeLabel) {
			t.Errorf("a workload cluster's marker: %+v", m)
		}
	}
}

// A node-label marker named for a workload cluster is refused, the Node left
// as it was: node-label/NODE read this API server's Node, the management
// cluster's, and cleared its label as the workload cluster's (D7).
func TestNodeLabelOfAWorkloadClusterIsNotCleared(t *testing.T) {
	w := newWorld(t)
	label := w.seedStaleLock()
	w.patch(upgrade.GVREKSACluster, w.ns, w.cluster, `{"spec":{"managementCluster":{"name":"mgmt-of-`+w.cluster+`"}}}`)
	nodes, err := w.client.Kube.CoreV1().Nodes().List(w.ctx, metav1.ListOptions{LabelSelector: label})
	if err != nil || len(nodes.Items) == 0 {
		t.Fatalf("the seeded labelled nodes: %v, %v", nodes, err)
	}
	node := nodes.Items[0].Name
	for _, id := range []string{MarkerNodeLabel + "/" + node, MarkerNodeLabel} {
		p, _, err := PlanClear(w.ctx, w.env, ClearOptions{IDs: []string{id}, Force: true, MarkerOptions: MarkerOptions{NodeLabel: label}})
		var in *model.InputError
		if !errors.As(err, &in) || !strings.Contains(err.Error(), "on its own API server") || !strings.Contains(err.Error(), "label node "+map[bool]string{true: node, false: "NODE"}[id != MarkerNodeLabel]+" "+label+"-") {
			t.Errorf("lock clear %s: plan %+v, error %v; want it refused as bad input, with the kubectl command for that cluster", id, p, err)
		}
	}
	n, err := w.client.Kube.CoreV1().Nodes().Get(w.ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := n.Labels[label]; !ok {
		t.Errorf("the management cluster's Node %s lost its label", node)
	}
}

// The lease of a workload cluster said "a node retry is not blocked",
// though node retry of its failed step is refused whatever the lease: its
// upgrader pod is on the workload cluster's own API server.
func TestLeaseOfAWorkloadClusterPromisesNoNodeRetry(t *testing.T) {
	w := newWorld(t)
	w.seedEtcdRollout(false)
	lease := func() Marker {
		t.Helper()
		ms, err := ListMarkers(w.ctx, w.env, MarkerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return ms[0]
	}
	if m := lease(); m.ID != MarkerLease || !strings.Contains(m.Blocks, "a node retry is not blocked") {
		t.Errorf("the management cluster's lease: %+v, want node retry not blocked", m)
	}
	w.patch(upgrade.GVREKSACluster, w.ns, w.cluster, `{"spec":{"managementCluster":{"name":"mgmt-of-`+w.cluster+`"}}}`)
	refused := "a node retry of a failed step is refused for " + w.cluster + " whatever the lease: mgmt-of-" + w.cluster + " manages it"
	check := func(state MarkerState, blocks string) {
		t.Helper()
		m := lease()
		if m.State != state || !strings.HasPrefix(m.Blocks, blocks) || !strings.Contains(m.Blocks, refused) || strings.Contains(m.Blocks, "not blocked") {
			t.Errorf("a workload cluster's %s lease: %s, blocks %q; want it to say %q", state, m.State, m.Blocks, refused)
		}
	}
	check(MarkerNotSet, "any new upgrade, and any etcd rollback, from another console")
	w.lease("bob@laptop/77aa", w.now)
	check(MarkerLive, "any new upgrade, and any etcd rollback, from another console")
	if err := w.client.Kube.CoordinationV1().Leases(w.sys).Delete(w.ctx, upgrade.LockName(w.cluster), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.lease("bob@old-laptop/77aa", w.now.Add(-2*time.Hour))
	check(MarkerStale, "any new upgrade until it is cleared (an etcd rollback takes it over; ")
}
