package recovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// Kinds read here beyond those of package upgrade.
var (
	gvrMachine     = upgrade.GVRMachine
	gvrNodeUpgrade = schema.GroupVersionResource{Group: "anywhere.eks.amazonaws.com", Version: "v1alpha1", Resource: "nodeupgrades"}
)

// Env is what every planner needs: the clients and where the cluster's
// objects live.
type Env struct {
	Client *upgrade.Client
	// Cluster is the EKS-A Cluster's name.
	Cluster string
	// ClusterNamespace holds the EKS-A Cluster ("default" when empty).
	ClusterNamespace string
	// SystemNamespace holds what EKS-A generates and the console's Lease and
	// snapshots (eksa-system when empty).
	SystemNamespace string
	// Holder is this console, as its upgrade lock names it: its own lock
	// does not block its own recovery actions, and an etcd rollback takes
	// the lock in this name (a fresh upgrade.LocalHolder when unset).
	Holder upgrade.Holder
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// PollInterval is how often wait steps read the cluster (2s when zero).
	PollInterval time.Duration
	// PauseSettle is how long an etcd rollback lets EKS-A's controller see
	// its pause before it restores the etcd spec (3s when zero): a
	// reconcile on a cache without the pause writes the new spec again.
	PauseSettle time.Duration
	// Conn are the console's connection flags: the commands an action's
	// notes and fixes suggest carry them, so that, pasted, they reach this
	// cluster.
	Conn model.ConnFlags
}

// clusterFlags name the cluster and the connection in a command the
// operator pastes.
func (e *Env) clusterFlags() string { return model.ClusterArgs(e.Cluster, e.ClusterNamespace, e.Conn) }

func (e *Env) holder() upgrade.Holder {
	if e.Holder == (upgrade.Holder{}) {
		e.Holder = upgrade.LocalHolder()
	}
	return e.Holder
}

// runLock takes the upgrade lock for the run of an action that must not run
// twice at once (an etcd rollback): two consoles rolling back together would
// race each other's optimistic writes. A Lease left stale (by an upgrade that
// failed and kept it) is taken over; one this console's own upgrade holds is
// left to that upgrade, which renews and releases it.
func (e *Env) runLock(ctx context.Context, audit upgrade.Recorder) (release, held func(context.Context) error, err error) {
	locker := &upgrade.Locker{Kube: e.Client.Kube, Namespace: e.systemNS(), Cluster: e.Cluster, ClusterNamespace: e.ClusterNamespace, Holder: e.holder(), Audit: audit, Conn: e.Conn}
	st, err := locker.Status(ctx)
	if err != nil {
		return nil, nil, err
	}
	// held reads the Lease: a renewal finds a lock cleared only at its
	// next tick, up to a third of the lease away, and a run resumed from
	// a stop would write first.
	held = func(ctx context.Context) error {
		st, err := locker.Status(ctx)
		// A read the API server did not answer (one backed by the etcd
		// being rolled back blips right after a wait) is tried again
		// for a few seconds before the run stops on it.
		for i := 0; err != nil && i < 5; i++ {
			select {
			case <-ctx.Done():
				return fmt.Errorf("reading the upgrade lock: %w", err)
			case <-time.After(time.Second):
			}
			st, err = locker.Status(ctx)
		}
		switch {
		case err != nil:
			return fmt.Errorf("reading the upgrade lock: %w", err)
		case !st.Held() || st.HolderIdentity != e.holder().String():
			who := "nobody holds it now"
			if st.Held() {
				who = "it is " + st.Holder.Display() + "'s now"
			}
			return fmt.Errorf("%w: the Lease %s/%s was cleared or taken by someone else (%s); check with `upgrade-console lock status %s` before running the action again",
				upgrade.ErrLockLost, e.systemNS(), upgrade.LockName(e.Cluster), who, e.clusterFlags())
		}
		return nil
	}
	if st.Held() && st.HolderIdentity == e.holder().String() {
		return func(context.Context) error { return nil }, held, nil
	}
	h, err := locker.TakeOver(ctx, nil)
	if err != nil {
		return nil, nil, err
	}
	return func(ctx context.Context) error {
		// Cleared or taken meanwhile: nothing of this run's to give back.
		err := h.Release(ctx)
		if err == nil || errors.Is(err, upgrade.ErrLockLost) {
			return nil
		}
		if errors.As(err, new(*upgrade.ReleaseUnrecordedError)) {
			// Released: only its entry is missing, which the log holds
			// and the console prints at exit (exit 74). Returned, it
			// made a finished run read as failed, "resumable" (D11).
			return nil
		}
		// "Run the same command again" was then refused as another
		// console's live lock: say so, and when it lapses.
		return fmt.Errorf("%w\nthe upgrade lock Lease %s/%s could not be released, so a rerun is refused until it turns stale (within %s), "+
			"or clear it at once with `upgrade-console lock clear lease --force %s` once no other console is running",
			err, e.systemNS(), upgrade.LockName(e.Cluster), upgrade.DefaultLeaseDuration, e.clusterFlags())
	}, held, nil
}

// lockAccess says why the identity may not take, renew or give back the
// upgrade lock that runLock takes for a run; nil when it may, when the lock
// is this console's own (runLock takes nothing then), or when the API server
// cannot be asked (the run's own write of the lock then tells).
func (e *Env) lockAccess(ctx context.Context) error {
	if st, err := upgrade.ReadLock(ctx, e.Client.Kube, e.systemNS(), e.Cluster); err == nil && st.Held() && st.HolderIdentity == e.holder().String() {
		return nil
	}
	a := upgrade.ReadLockAccess(ctx, e.Client.Kube, e.systemNS(), e.Cluster)
	if a.Err != nil || len(a.Denied) == 0 {
		return nil
	}
	name := upgrade.LockName(e.Cluster)
	return fmt.Errorf("the console may not %s: the run holds the lock from before its first step to after its last\n"+
		"fix: grant them to this identity (a Role in %s with the rules {apiGroups: [coordination.k8s.io], resources: [leases], verbs: [create]} and "+
		"{apiGroups: [coordination.k8s.io], resources: [leases], resourceNames: [%s], verbs: [get, list, watch, update, delete]}, and a RoleBinding), or run as one that has them (--as)",
		strings.Join(a.Denied, "; "), e.systemNS(), name)
}

func (e *Env) lockObjectRef() string { return e.systemNS() + "/" + upgrade.LockName(e.Cluster) }

func (e *Env) now() time.Time {
	if e.Now == nil {
		return time.Now()
	}
	return e.Now()
}

func (e *Env) clusterNS() string {
	if e.ClusterNamespace == "" {
		return "default"
	}
	return e.ClusterNamespace
}

func (e *Env) systemNS() string {
	if e.SystemNamespace == "" {
		return model.SystemNamespace
	}
	return e.SystemNamespace
}

func (e *Env) poll() time.Duration {
	if e.PollInterval <= 0 {
		return 2 * time.Second
	}
	return e.PollInterval
}

func (e *Env) pauseSettle() time.Duration {
	if e.PauseSettle <= 0 {
		return 3 * time.Second
	}
	return e.PauseSettle
}

func (e *Env) etcdName() string { return e.Cluster + "-etcd" }

func (e *Env) res(gvr schema.GroupVersionResource, ns string) dynamic.ResourceInterface {
	return e.Client.Dynamic.Resource(gvr).Namespace(ns)
}

// capi is res for a Cluster API resource, at the version the API server
// serves (upgrade.Client.CAPIResource).
func (e *Env) capi(gvr schema.GroupVersionResource, ns string) (dynamic.ResourceInterface, error) {
	served, err := e.Client.CAPIResource(gvr)
	if err != nil {
		return nil, err
	}
	return e.res(served, ns), nil
}

func (e *Env) eksaCluster() dynamic.ResourceInterface {
	return e.res(upgrade.GVREKSACluster, e.clusterNS())
}

// readCluster reads the EKS-A Cluster; a missing one is bad input (a wrong
// --cluster or namespace).
func (e *Env) readCluster(ctx context.Context) (*unstructured.Unstructured, error) {
	cluster, err := getOpt(ctx, e.eksaCluster(), e.Cluster)
	if err != nil {
		return nil, fmt.Errorf("read Cluster %s/%s: %w", e.clusterNS(), e.Cluster, err)
	}
	if cluster == nil {
		return nil, &model.InputError{Source: ref("Cluster", e.clusterNS(), e.Cluster), Problem: "not found",
			Fix: "check --cluster, and give the Cluster's namespace with -n (default: the kubeconfig context's)"}
	}
	return cluster, nil
}

// getOpt reads an object, nil (and no error) when it does not exist.
func getOpt(ctx context.Context, r dynamic.ResourceInterface, name string) (*unstructured.Unstructured, error) {
	u, err := r.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return u, err
}

func ref(kind, ns, name string) string {
	if ns == "" {
		return kind + " " + name
	}
	return kind + " " + ns + "/" + name
}

// dryRunOpt is the DryRun option value for a (dry) write.
func dryRunOpt(dry bool) []string {
	if dry {
		return []string{metav1.DryRunAll}
	}
	return nil
}

// pointerEscape escapes a map key for a JSON pointer (RFC 6901).
func pointerEscape(key string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}

// patchOp is one RFC 6902 operation.
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

func jsonPatch(ops ...patchOp) []byte {
	b, _ := json.Marshal(ops)
	return b
}

// removeMetaKey removes metadata.<field>[key] (field: annotations or labels)
// only if it still has the value the plan saw: the test operation makes the
// server refuse the patch when someone changed the value since.
func removeMetaKey(ctx context.Context, r dynamic.ResourceInterface, name, field, key, want string, dry bool) error {
	path := "/metadata/" + field + "/" + pointerEscape(key)
	_, err := r.Patch(ctx, name, types.JSONPatchType, jsonPatch(
		patchOp{Op: "test", Path: path, Value: want},
		patchOp{Op: "remove", Path: path},
	), metav1.PatchOptions{FieldManager: upgrade.ManagerName, DryRun: dryRunOpt(dry)})
	return err
}

// metaKeyIs returns a check that metadata.<field>[key] still equals want.
func metaKeyIs(r dynamic.ResourceInterface, name, field, key, want string) func(context.Context) bool {
	return func(ctx context.Context) bool {
		u, err := r.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return true // cannot tell: keep the server's error
		}
		m := u.GetAnnotations()
		if field == "labels" {
			m = u.GetLabels()
		}
		v, ok := m[key]
		return ok && v == want
	}
}

// setAnnotations adds or replaces annotations (a merge patch only touches the
// keys it names, so nothing else can be clobbered).
func setAnnotations(ctx context.Context, r dynamic.ResourceInterface, name string, kv map[string]string, dry bool) error {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": kv}})
	_, err := r.Patch(ctx, name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: upgrade.ManagerName, DryRun: dryRunOpt(dry)})
	return err
}

// ConcurrentChangeError says an object changed between the plan and the write.
type ConcurrentChangeError struct {
	Object string
	What   string
}

func (e *ConcurrentChangeError) Error() string {
	// "Nothing was written" was untrue of a run whose earlier steps had
	// written; the step that met the change wrote nothing.
	return fmt.Sprintf("%s changed since the plan was made (%s); this step wrote nothing: plan the action again to see the new state", e.Object, e.What)
}

// guarded interprets the error of a guarded write. A Conflict is a failed
// UID/resourceVersion precondition. A JSON patch whose test operation fails
// comes back as 422 Invalid without saying which operation failed, so the
// object is read again: if the tested value changed, it is a concurrent
// change; if not, the server refused the change itself and that error stands.
func guarded(ctx context.Context, err error, object, what string, same func(context.Context) bool) error {
	switch {
	case err == nil:
		return nil
	case apierrors.IsConflict(err):
		return &ConcurrentChangeError{Object: object, What: what}
	case apierrors.IsInvalid(err) && same != nil && !same(ctx):
		return &ConcurrentChangeError{Object: object, What: what}
	}
	return err
}

// Writer is who last wrote a field, read from metadata.managedFields: the
// field manager and when it wrote. The time is the manager's latest write to
// the object, an upper bound of when that field was set.
type Writer struct {
	Manager string
	Time    time.Time
}

// fieldWriter finds the manager owning metadata.<field>[key].
func fieldWriter(u *unstructured.Unstructured, field, key string) Writer {
	var best Writer
	for _, mf := range u.GetManagedFields() {
		tree := fieldsTree(mf)
		if tree == nil {
			continue
		}
		md, _ := tree["f:metadata"].(map[string]any)
		fm, _ := md["f:"+field].(map[string]any)
		if _, ok := fm["f:"+key]; !ok {
			continue
		}
		w := Writer{Manager: mf.Manager}
		if mf.Time != nil {
			w.Time = mf.Time.Time
		}
		if best.Manager == "" || w.Time.After(best.Time) {
			best = w
		}
	}
	return best
}

// fieldsTree is the fields a managedFields entry of the object itself
// (not of a subresource: status is not the spec's writer) owns, as the
// tree of "f:" keys; nil when it has none that reads.
func fieldsTree(mf metav1.ManagedFieldsEntry) map[string]any {
	if mf.FieldsV1 == nil || mf.Subresource != "" {
		return nil
	}
	var tree map[string]any
	if json.Unmarshal(mf.FieldsV1.GetRawBytes(), &tree) != nil {
		return nil
	}
	return tree
}

// machine is the part of a CAPI Machine the planners use.
type machine struct {
	Name      string
	UID       string
	Created   time.Time
	Deleting  bool
	Owned     bool // has an ownerReference to the EtcdadmCluster
	EtcdReady bool // cluster.x-k8s.io/etcd-ready=true
	Phase     string
	NodeName  string
	// Template is the infrastructure template the machine was cloned from:
	// CAPI's cloned-from-name annotation, which CAPI and etcdadm-controller
	// set on the infrastructure machine (Env.readTemplates), read from the
	// Machine where it was copied there; empty when neither says.
	Template string
	// infra is spec.infrastructureRef: the infrastructure machine.
	infra     schema.GroupKind
	infraName string
}

func (m machine) String() string { return m.Name }

// etcdMachines lists the machines of the etcd cluster, oldest first.
func (e *Env) etcdMachines(ctx context.Context) ([]machine, error) {
	machines, err := e.capi(gvrMachine, e.systemNS())
	if err != nil {
		return nil, err
	}
	list, err := machines.List(ctx, metav1.ListOptions{
		LabelSelector: model.LabelEtcdCluster + "=" + e.etcdName(),
	})
	if err != nil {
		return nil, fmt.Errorf("list etcd Machines of %s in %s: %w", e.etcdName(), e.systemNS(), err)
	}
	out := make([]machine, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, toMachine(&list.Items[i], "EtcdadmCluster", e.etcdName()))
	}
	sort.Slice(out, func(i, j int) bool {
		return olderMember(out[i].Created, out[j].Created, out[i].EtcdReady, out[j].EtcdReady, out[i].Name, out[j].Name)
	})
	return out, nil
}

// olderMember orders etcd members oldest first, by creation time. Those
// are whole seconds: a member made in the second of an old one (a cluster
// made and upgraded at once) is told by not being ready yet, not by its
// random name, which made the rollback take a ready old member for the
// new one.
func olderMember(a, b time.Time, aReady, bReady bool, aName, bName string) bool {
	switch {
	case !a.Equal(b):
		return a.Before(b)
	case aReady != bReady:
		return aReady
	}
	return aName < bName
}

func toMachine(u *unstructured.Unstructured, ownerKind, ownerName string) machine {
	m := machine{
		Name:      u.GetName(),
		UID:       string(u.GetUID()),
		Created:   u.GetCreationTimestamp().Time,
		Deleting:  u.GetDeletionTimestamp() != nil,
		EtcdReady: u.GetLabels()[model.LabelEtcdReady] == "true",
		Template:  u.GetAnnotations()[clusterv1.TemplateClonedFromNameAnnotation],
	}
	m.Phase, _, _ = unstructured.NestedString(u.Object, "status", "phase")
	m.NodeName, _, _ = unstructured.NestedString(u.Object, "status", "nodeRef", "name")
	m.infra.Group, _, _ = unstructured.NestedString(u.Object, "spec", "infrastructureRef", "apiGroup")
	if m.infra.Group == "" {
		// v1beta1 names the reference's apiVersion.
		av, _, _ := unstructured.NestedString(u.Object, "spec", "infrastructureRef", "apiVersion")
		if gv, err := schema.ParseGroupVersion(av); err == nil {
			m.infra.Group = gv.Group
		}
	}
	m.infra.Kind, _, _ = unstructured.NestedString(u.Object, "spec", "infrastructureRef", "kind")
	m.infraName, _, _ = unstructured.NestedString(u.Object, "spec", "infrastructureRef", "name")
	for _, o := range u.GetOwnerReferences() {
		if o.Kind == ownerKind && o.Name == ownerName {
			m.Owned = true
		}
	}
	return m
}

// readTemplates fills in each machine's Template from its infrastructure
// machine, where CAPI's cloned-from-name annotation is (the Machine itself
// carries none on a real cluster). It is best effort: a kind the API server
// does not know, or a read refused, leaves Template empty, and the checks
// that use it fall back to creation times, as without it.
func (e *Env) readTemplates(ctx context.Context, ms []machine) {
	for i := range ms {
		m := &ms[i]
		if m.Template != "" || m.infra.Kind == "" || m.infraName == "" || e.Client.Mapper == nil {
			continue
		}
		mapping, err := e.Client.Mapper.RESTMapping(m.infra)
		if err != nil {
			continue
		}
		if u, err := getOpt(ctx, e.res(mapping.Resource, e.systemNS()), m.infraName); err == nil && u != nil {
			m.Template = u.GetAnnotations()[clusterv1.TemplateClonedFromNameAnnotation]
		}
	}
}

// etcdStatus is the part of the EtcdadmCluster status that says "ready".
type etcdStatus struct {
	Ready              bool
	ReadyReplicas      int64
	Replicas           int64
	Generation         int64
	ObservedGeneration int64
}

func readEtcdStatus(u *unstructured.Unstructured) etcdStatus {
	s := etcdStatus{Generation: u.GetGeneration()}
	s.Ready, _, _ = unstructured.NestedBool(u.Object, "status", "ready")
	s.ReadyReplicas, _, _ = unstructured.NestedInt64(u.Object, "status", "replicas")
	s.ObservedGeneration, _, _ = unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	s.Replicas, _, _ = unstructured.NestedInt64(u.Object, "spec", "replicas")
	return s
}

// settled is EKS-A's "etcd ready": status.ready on an observed generation (the
// Ready condition is not used, as in EKS-A's own controller).
func (s etcdStatus) settled() bool {
	return s.Ready && s.Generation == s.ObservedGeneration
}

func (s etcdStatus) String() string {
	return fmt.Sprintf("status.ready=%t, %d/%d members ready, generation %d observed %d",
		s.Ready, s.ReadyReplicas, s.Replicas, s.Generation, s.ObservedGeneration)
}

func ago(now, t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	d := now.Sub(t)
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < 48*time.Hour:
		return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
	default:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
}
