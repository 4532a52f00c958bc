package watchers

import (
	"context"
	"errors"
	"net/url"
	"reflect"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/serverdate"
)

// kindSpec describes how to watch one kind.
type kindSpec struct {
	kind     model.Kind
	group    string
	resource string
	// versions in order of preference; the first one served is used.
	versions []string
	// typed kinds (core/v1 Nodes and Events) are read through the typed
	// client with protobuf, which decodes several times faster than JSON
	// into unstructured maps: they are the largest lists at fleet scale.
	typed bool
	// clusterScoped kinds have no namespace.
	clusterScoped bool
	// inClusterNamespace kinds live beside the EKS-A Cluster, the others in
	// the system namespace.
	inClusterNamespace bool
	// selectors scope the watch to the cluster being upgraded.
	selectors func(o *Options) (field, label string)
	translate func(u map[string]any, version string) any
	// lean decodes the kind's watch events into structs (leantyped.go);
	// nil for the kinds decoded into maps and translated by translate.
	lean func(version string) leanDecode
	// managedFields: translate reads managedFields (when the spec last
	// changed, which the stall clock starts from), which a lean watch
	// drops: the kind keeps the dynamic client's watch.
	managedFields bool
}

func nameIs(name func(o *Options) string) func(o *Options) (string, string) {
	return func(o *Options) (string, string) {
		return fields.OneTermEqualSelector("metadata.name", name(o)).String(), ""
	}
}

func clusterLabel(o *Options) (string, string) {
	return "", labels.Set{model.LabelClusterName: o.ClusterName}.String()
}

const (
	eksaGroup = "anywhere.eks.amazonaws.com"
	capiGroup = "cluster.x-k8s.io"
	kcpGroup  = "controlplane.cluster.x-k8s.io"
	etcdGroup = "etcdcluster.cluster.x-k8s.io"
)

var capiVersions = []string{"v1beta2", "v1beta1"}

// kindSpecs lists every kind the console watches. The singletons are watched
// by name (EKS-A names them after the cluster), Machines and
// MachineDeployments by the cluster-name label, the in-place upgrade kinds by
// namespace (they carry no cluster label; other clusters' are dropped when
// the snapshot is built).
var kindSpecs = []kindSpec{
	{kind: model.KindEKSACluster, group: eksaGroup, resource: "clusters", versions: []string{"v1alpha1"}, inClusterNamespace: true,
		selectors: nameIs(func(o *Options) string { return o.ClusterName }), translate: translateEKSACluster, managedFields: true},
	{kind: model.KindCAPICluster, group: capiGroup, resource: "clusters", versions: capiVersions,
		selectors: nameIs(func(o *Options) string { return o.ClusterName }), translate: translateCAPICluster},
	{kind: model.KindKubeadmControlPlane, group: kcpGroup, resource: "kubeadmcontrolplanes", versions: capiVersions,
		selectors: nameIs(func(o *Options) string { return o.ClusterName }), translate: translateKCP, managedFields: true},
	{kind: model.KindEtcdadmCluster, group: etcdGroup, resource: "etcdadmclusters", versions: []string{"v1beta1"},
		selectors: nameIs(func(o *Options) string { return o.ClusterName + "-etcd" }), translate: translateEtcdadmCluster},
	{kind: model.KindMachineDeployment, group: capiGroup, resource: "machinedeployments", versions: capiVersions,
		selectors: clusterLabel, translate: translateMachineDeployment, managedFields: true},
	{kind: model.KindMachine, group: capiGroup, resource: "machines", versions: capiVersions,
		selectors: clusterLabel, translate: translateMachine, lean: machineDecoder},
	{kind: model.KindNodeUpgrade, group: eksaGroup, resource: "nodeupgrades", versions: []string{"v1alpha1"},
		translate: translateNodeUpgrade(model.KindNodeUpgrade), lean: nodeUpgradeDecoder(model.KindNodeUpgrade)},
	{kind: model.KindNodeKubeadmUpgrade, group: eksaGroup, resource: "nodekubeadmupgrades", versions: []string{"v1alpha1"},
		translate: translateNodeUpgrade(model.KindNodeKubeadmUpgrade), lean: nodeUpgradeDecoder(model.KindNodeKubeadmUpgrade)},
	{kind: model.KindControlPlaneUpgrade, group: eksaGroup, resource: "controlplaneupgrades", versions: []string{"v1alpha1"},
		translate: translateUpgradeRequest(model.KindControlPlaneUpgrade, "controlPlane")},
	{kind: model.KindMachineDeploymentUpgrade, group: eksaGroup, resource: "machinedeploymentupgrades", versions: []string{"v1alpha1"},
		translate: translateUpgradeRequest(model.KindMachineDeploymentUpgrade, "machineDeployment")},
	{kind: model.KindNode, resource: "nodes", versions: []string{"v1"}, typed: true, clusterScoped: true},
	{kind: model.KindEvent, resource: "events", versions: []string{"v1"}, typed: true},
	leaseSpec,
	upgraderPodSpec,
}

// qualified is "machines.cluster.x-k8s.io" (or "nodes" for the core group).
func (k *kindSpec) qualified() string {
	if k.group == "" {
		return k.resource
	}
	return k.resource + "." + k.group
}

// instance is one informer: a kind in one namespace.
type instance struct {
	w         *Watcher
	spec      *kindSpec
	namespace string
	version   string
	fieldSel  string
	labelSel  string
	informer  cache.SharedIndexInformer
	cancel    context.CancelFunc

	// Guarded by w.mu.
	status model.SourceStatus
	// failing is set while list/watch calls fail for lack of a connection
	// (or of credentials the API server accepts);
	// contacted once one succeeded.
	failing, contacted bool

	// date is the API server's Date of the Lease informer's last
	// response; nil for other kinds.
	date *serverdate.Recorder
}

func (in *instance) where() string {
	if in.spec.clusterScoped {
		return "(cluster-wide)"
	}
	return "in " + in.namespace
}

// discoveryWithin bounds one discovery of the API groups.
const discoveryWithin = 30 * time.Second

// discoverWithin is discover, returned from at once when ctx ends.
func discoverWithin(ctx context.Context, dc discovery.DiscoveryInterface) (map[schema.GroupVersionResource]bool, error) {
	type result struct {
		served map[schema.GroupVersionResource]bool
		err    error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := discover(dc)
		ch <- result{s, err}
	}()
	select {
	case r := <-ch:
		return r.served, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// start runs discovery (retrying until the API server answers), the access
// checks and the informers.
func (w *Watcher) start(ctx context.Context) error {
	// Discovery's calls take no context: each is bounded, and a cancel
	// stops the wait for one (the call ends within its bound, unheeded),
	// so that an API server that never answers does not hold Run.
	dcfg := rest.CopyConfig(w.cfg)
	if dcfg.Timeout == 0 || dcfg.Timeout > discoveryWithin {
		dcfg.Timeout = discoveryWithin
	}
	dc, err := discovery.NewDiscoveryClientForConfig(dcfg)
	if err != nil {
		return err
	}
	var served map[schema.GroupVersionResource]bool
	backoff := wait.Backoff{Duration: 500 * time.Millisecond, Factor: 2, Jitter: 0.2, Steps: 1 << 30, Cap: 15 * time.Second}
	err = wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		served, err = discoverWithin(ctx, dc)
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		w.mu.Lock()
		w.discovery = err
		w.mu.Unlock()
		if err != nil {
			klog.V(2).InfoS("discovery failed, retrying", "err", err)
			w.changed()
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return err
	}

	insts, sources := w.plan(served)
	w.mu.Lock()
	w.insts, w.sources = insts, sources
	w.mu.Unlock()
	w.changed()

	cs, err := kubernetes.NewForConfig(w.cfg)
	if err != nil {
		return err
	}
	protoCfg := rest.CopyConfig(w.cfg)
	protoCfg.ContentType = runtime.ContentTypeProtobuf
	protoCfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	typed, err := kubernetes.NewForConfig(protoCfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(w.cfg)
	if err != nil {
		return err
	}
	lean, err := rest.UnversionedRESTClientFor(dynamic.ConfigFor(w.cfg))
	if err != nil {
		return err
	}
	w.mu.Lock()
	// Under mu: EventHistory reads it from the UI's commands.
	w.clients = clients{cs: cs, dyn: dyn, typed: typed, lean: lean}
	w.mu.Unlock()
	for _, in := range insts {
		w.launch(ctx, in)
	}
	w.launchCRDWatch(ctx)
	w.wg.Wait()
	return nil
}

// clients reach the API server once discovery is done.
type clients struct {
	cs, typed kubernetes.Interface
	dyn       dynamic.Interface
	lean      rest.Interface // the custom resources' watches (leanwatch.go)
}

// accessRecheck is how often a kind the identity may not list or watch is
// asked about again.
var accessRecheck = 30 * time.Second

// launch checks access to an instance's kind and runs its informer until ctx
// is done or the instance is cancelled (its kind was uninstalled).
func (w *Watcher) launch(ctx context.Context, in *instance) {
	ictx, cancel := context.WithCancel(ctx)
	in.cancel = cancel
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer cancel()
		defer w.contain("the watch of", in.spec)
		// Denied, the kind is asked about again every accessRecheck: the
		// pane names the missing permission, and a RoleBinding granted
		// meanwhile started nothing until the console was restarted.
		for {
			denied, err := in.checkAccess(ictx, w.clients.cs)
			w.mu.Lock()
			if err != nil && in.status.Forbidden != "" {
				// A review that failed (the API server lost) is no
				// grant: the informer it started met the same denial
				// once the server was back.
				denied = in.status.Forbidden
			}
			changed := in.status.Forbidden != denied
			in.status.Forbidden = denied
			w.mu.Unlock()
			if changed {
				w.changed()
			}
			if denied == "" {
				break
			}
			t := time.NewTimer(accessRecheck)
			select {
			case <-ictx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		in.run(ictx, w.clients.dyn, w.clients.typed, w.clients.lean)
	}()
}

// plan decides what to watch from what the API server serves: for each kind
// the first served version in order of preference (CAPI v1beta2, else
// v1beta1) and one informer per namespace; a kind served in no known version
// is not installed, which is final (nothing to wait for: no EtcdadmCluster
// kind means stacked etcd).
func (w *Watcher) plan(served map[schema.GroupVersionResource]bool) ([]*instance, map[model.Kind]model.SourceStatus) {
	var insts []*instance
	sources := map[model.Kind]model.SourceStatus{}
	for i := range kindSpecs {
		k := &kindSpecs[i]
		version := ""
		for _, v := range k.versions {
			if served[schema.GroupVersionResource{Group: k.group, Version: v, Resource: k.resource}] {
				version = v
				break
			}
		}
		if version == "" {
			sources[k.kind] = model.SourceStatus{Installed: false, Synced: true}
			continue
		}
		insts = append(insts, w.instancesOf(k, version)...)
	}
	return insts, sources
}

// instancesOf builds the informers of a kind at a version, one per namespace.
func (w *Watcher) instancesOf(k *kindSpec, version string) []*instance {
	var insts []*instance
	for _, ns := range w.namespacesOf(k) {
		in := &instance{w: w, spec: k, namespace: ns, version: version}
		if k.selectors != nil {
			in.fieldSel, in.labelSel = k.selectors(&w.opts)
		}
		in.status = model.SourceStatus{Installed: true, Version: version}
		insts = append(insts, in)
	}
	return insts
}

func (w *Watcher) namespacesOf(k *kindSpec) []string {
	switch {
	case k.clusterScoped:
		return []string{metav1.NamespaceAll}
	case k.inClusterNamespace:
		return []string{w.opts.ClusterNamespace}
	case k.kind == model.KindEvent && w.opts.ClusterNamespace != w.opts.SystemNamespace:
		return []string{w.opts.SystemNamespace, w.opts.ClusterNamespace}
	default:
		return []string{w.opts.SystemNamespace}
	}
}

// discover lists what the API server serves, in one aggregated-discovery
// round trip on current servers. A group that fails discovery (an aggregated
// API that is down) does not hide the others.
func discover(dc discovery.DiscoveryInterface) (map[schema.GroupVersionResource]bool, error) {
	_, lists, err := dc.ServerGroupsAndResources()
	if err != nil && len(lists) == 0 {
		return nil, err
	}
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, err
	}
	served := map[schema.GroupVersionResource]bool{}
	for _, l := range lists {
		gv, perr := schema.ParseGroupVersion(l.GroupVersion)
		if perr != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			served[gv.WithResource(r.Name)] = true
		}
	}
	return served, nil
}

// checkAccess asks the API server whether this user may list and watch the
// kind, and returns the missing permission ("list machines.cluster.x-k8s.io
// in eksa-system"), or "" when access is allowed. A failed review (its
// error returned) is not a denial: at start the informer will report what
// really happens.
//
// A watch by name is asked about that name: the API server authorizes a list
// or watch whose field selector is metadata.name=<name> as a request for that
// object, so a Role that grants only it (resourceNames) is enough.
func (in *instance) checkAccess(ctx context.Context, cs kubernetes.Interface) (string, error) {
	name := ""
	if sel, err := fields.ParseSelector(in.fieldSel); err == nil {
		name, _ = sel.RequiresExactMatch("metadata.name")
	}
	for _, verb := range []string{"list", "watch"} {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: in.namespace, Verb: verb, Group: in.spec.group, Version: in.version, Resource: in.spec.resource,
				Name: name,
			},
		}}
		res, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			klog.V(2).InfoS("access review failed", "resource", in.spec.qualified(), "verb", verb, "err", err)
			return "", err
		}
		if !res.Status.Allowed {
			return verb + " " + in.spec.qualified() + " " + in.where(), nil
		}
	}
	return "", nil
}

// run builds the informer (translating transform, handlers, error tracking)
// and runs it until ctx is done.
func (in *instance) run(ctx context.Context, dyn dynamic.Interface, typed kubernetes.Interface, lean rest.Interface) {
	var list func(context.Context, metav1.ListOptions) (runtime.Object, error)
	var watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error)
	var example runtime.Object
	switch in.spec.kind {
	case model.KindNode:
		example = &corev1.Node{}
		list = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return typed.CoreV1().Nodes().List(ctx, o)
		}
		watchFn = typed.CoreV1().Nodes().Watch
	case model.KindEvent:
		example = &corev1.Event{}
		ev := typed.CoreV1().Events(in.namespace)
		list = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return ev.List(ctx, o) }
		watchFn = ev.Watch
	case model.KindLease:
		in.date = &serverdate.Recorder{}
		example, list, watchFn = leaseListWatch(typed, in.namespace, in.date)
	case model.KindUpgraderPod:
		example, list, watchFn = podListWatch(typed, in.namespace)
	default:
		example = &unstructured.Unstructured{}
		gvr := schema.GroupVersionResource{Group: in.spec.group, Version: in.version, Resource: in.spec.resource}
		ri := dyn.Resource(gvr).Namespace(in.namespace)
		list = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return ri.List(ctx, o) }
		watchFn = ri.Watch
		if lean != nil && !in.spec.managedFields {
			lw := &leanWatcher{client: lean, gvr: gvr, namespace: in.namespace, w: in.w, spec: in.spec,
				decode: mapDecoder(func(u map[string]any) any { return in.spec.translate(u, in.version) })}
			if in.spec.lean != nil {
				lw.decode = in.spec.lean(in.version)
			}
			example, watchFn = &entry{}, lw.watch
		}
	}
	scope := func(o *metav1.ListOptions) {
		if in.fieldSel != "" {
			o.FieldSelector = in.fieldSel
		}
		if in.labelSel != "" {
			o.LabelSelector = in.labelSel
		}
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			scope(&o)
			obj, err := list(ctx, o)
			in.observe(ctx, "list", err)
			return obj, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			scope(&o)
			wi, err := watchFn(ctx, o)
			in.observe(ctx, "watch", err)
			return wi, err
		},
	}
	inf := cache.NewSharedIndexInformerWithOptions(lw, example, cache.SharedIndexInformerOptions{
		// No resync: the console reacts to changes only, and a resync
		// would replay every object through the handlers for nothing.
		ResyncPeriod:      0,
		ObjectDescription: in.spec.qualified(),
	})
	in.informer = inf
	_ = inf.SetTransform(in.w.containTransform("translating", in.spec, in.transform))
	_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		cache.DefaultWatchErrorHandler(ctx, r, err)
		in.observe(ctx, "watch", err)
	})
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, initial bool) { in.applyAs(obj, false, !initial) },
		UpdateFunc: func(_, obj any) { in.apply(obj, false) },
		DeleteFunc: func(obj any) { in.apply(obj, true) },
	})
	if err != nil {
		klog.ErrorS(err, "adding event handler", "resource", in.spec.qualified())
		return
	}
	go func() {
		select {
		case <-ctx.Done():
		case <-reg.HasSyncedChecker().Done():
			in.w.mu.Lock()
			in.status.Synced = true
			in.w.mu.Unlock()
			in.w.changed()
		}
	}()
	inf.RunWithContext(ctx)
}

// observe records the outcome of a list or watch call: a failure to reach
// the API server, or credentials it refuses, makes the source (and the
// connection) reconnecting, a 403 names the missing permission, success
// clears both.
func (in *instance) observe(ctx context.Context, verb string, err error) {
	if ctx.Err() != nil {
		return
	}
	w := in.w
	w.mu.Lock()
	defer w.mu.Unlock()
	before := in.status
	wasFailing := in.failing
	switch {
	case err == nil:
		in.failing, in.contacted = false, true
		in.status.Err = ""
		in.status.Forbidden = ""
	case apierrors.IsForbidden(err):
		// A refusal is an answer: the API server is reached. Left
		// failing from a call cut by an outage, a kind the identity may
		// not read held the connection at reconnecting for good.
		in.failing, in.contacted = false, true
		// Said once: the reflector's list and watch are refused in
		// turn, and each new verb was a new "access: forbidden" block
		// on every retry. The API server's text (client-go's log has
		// it) repeats the permission as "watch Machine: … is
		// forbidden: User … cannot watch …" lines.
		if in.status.Forbidden == "" {
			in.status.Forbidden = verb + " " + in.spec.qualified() + " " + in.where()
		}
		in.status.Err = ""
	case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
		// The watch fell behind the API server's history: the reflector
		// relists. Routine, not a connection problem.
		return
	case connectionError(err) || apierrors.IsUnauthorized(err):
		// A 401 is an answer, but none that lets the console see: a token
		// expired or revoked mid-watch failed every relist while the
		// header said live. It is lost until the credentials work again.
		in.failing = true
		in.status.Err = connectionMessage(err)
	default:
		// An API server's text: printable, as all text in a snapshot.
		in.status.Err = model.Printable(err.Error())
	}
	if in.status != before || in.failing != wasFailing {
		w.changed()
	}
}

// connectionMessage is a lost connection's error as the operator reads it:
// the server and the cause. client-go's puts the request's URL first, a
// watch's with every query parameter, some 250 characters before "TLS
// handshake timeout".
func connectionMessage(err error) string {
	// An API server's or a proxy's text: printable, as all text in a
	// snapshot.
	return model.Printable(connectionCause(err))
}

func connectionCause(err error) string {
	if apierrors.IsUnauthorized(err) {
		return model.CredentialsRefused + ": " + err.Error()
	}
	var uerr *url.Error
	if !errors.As(err, &uerr) {
		return err.Error()
	}
	if u, perr := url.Parse(uerr.URL); perr == nil && u.Host != "" {
		// "dial tcp <host>: " said the host a second time, and the line
		// is cut at the width of a terminal.
		return u.Host + ": " + strings.TrimPrefix(uerr.Err.Error(), "dial tcp "+u.Host+": ")
	}
	return uerr.Err.Error()
}

// connectionError tells a lost connection from an answer: anything that is
// not an API status (refused, reset, EOF, timeout) or a status saying the
// API server is not able to serve (5xx, 429 while it starts).
func connectionError(err error) bool {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code := status.Status().Code
		return code >= 500 || code == 429
	}
	return true
}

// transform translates an object once, as it enters the informer. It must
// accept objects it already transformed (client-go may hand them back on a
// relist).
func (in *instance) transform(obj any) (any, error) {
	switch o := obj.(type) {
	case *entry:
		return o, nil
	case *unstructured.Unstructured:
		return newEntry(o.GetNamespace(), o.GetName(), o.GetResourceVersion(), in.spec.translate(o.Object, in.version)), nil
	case *corev1.Node:
		return newEntry("", o.Name, o.ResourceVersion, translateNode(o, in.w.opts.NodeUpgradeLabel)), nil
	case *corev1.Event:
		var v any
		if e := translateEvent(o, in.w.opts.ClusterName); e != nil {
			v = e
		}
		return newEntry(o.Namespace, o.Name, o.ResourceVersion, v), nil
	case *coordinationv1.Lease:
		lock := model.LockOf(o)
		// Whether this is a renewal seen arriving, putLock tells.
		lock.Seen = in.w.opts.Clock()
		lock.ServerAtSeen = in.date.At(lock.Seen)
		return newEntry(o.Namespace, o.Name, o.ResourceVersion, &lock), nil
	case *corev1.Pod:
		return newEntry(o.Namespace, o.Name, o.ResourceVersion, translateUpgraderPod(o)), nil
	}
	return obj, nil
}

// apply moves a translated object into its store.
func (in *instance) apply(obj any, deleted bool) { in.applyAs(obj, deleted, false) }

// applyAs is apply; arrived says the object came on the watch, not in the
// informer's initial list (the lock Lease created while the console
// watched: putLock).
func (in *instance) applyAs(obj any, deleted, arrived bool) {
	defer in.w.contain("applying a change of", in.spec)
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj, deleted = t.Obj, true
	}
	e, ok := obj.(*entry)
	if !ok || e.value == nil {
		return
	}
	w := in.w
	w.mu.Lock()
	moved := applyEntryAs(w.st, e, deleted, arrived)
	w.mu.Unlock()
	if w.opts.Trace != nil {
		w.trace(in.spec.qualified(), e.resourceVersion)
	}
	if moved {
		w.changed()
	}
}

// applyEntry puts or removes an entry's value in the store of its type and
// reports whether anything the console shows changed.
func applyEntry(st *stores, e *entry, deleted bool) bool { return applyEntryAs(st, e, deleted, false) }

// applyEntryAs is applyEntry; arrived as for applyAs.
func applyEntryAs(st *stores, e *entry, deleted, arrived bool) bool {
	k := key(e.namespace, e.name)
	switch v := e.value.(type) {
	case *model.EKSACluster:
		return putOrRemove(st.clusters, k, v, deleted)
	case *model.CAPICluster:
		return putOrRemove(st.capi, k, v, deleted)
	case *model.ControlPlane:
		return putOrRemove(st.kcp, k, v, deleted)
	case *model.EtcdCluster:
		return putOrRemove(st.etcd, k, v, deleted)
	case *model.MachineDeployment:
		return putOrRemove(st.mds, k, v, deleted)
	case *model.Machine:
		return putOrRemove(st.machines, k, v, deleted)
	case *model.Node:
		return putOrRemove(st.nodes, k, v, deleted)
	case *model.NodeUpgrade:
		return putOrRemove(st.nodeUpgrades, string(v.Kind)+"/"+k, v, deleted)
	case *model.UpgradeRequest:
		return putOrRemove(st.requests, string(v.Kind)+"/"+k, v, deleted)
	case *model.Event:
		return putOrRemove(st.events, k, v, deleted)
	case *model.Lock:
		return putLock(st.locks, k, v, deleted, arrived)
	case *model.UpgraderPod:
		return putOrRemove(st.pods, k, v, deleted)
	}
	return false
}

// putLock is putOrRemove for the lock Lease, which tells a renewal that
// arrived while it was watched (renewTime, or the holder, changed) from a
// Lease first seen or listed again (on a reconnection) with the renewal
// already seen: that keeps when it was seen, so a relist neither makes an
// old renewal new nor publishes a snapshot for nothing.
//
// A Lease the watch delivers that was not in the initial list (arrived) was
// created while the console watched: its renewal arrived then. Judged as a
// first sight, by its renewTime alone, the Lease of a holder whose clock
// runs behind read "stale 3m" from its creation to its first renewal.
func putLock(s *store[model.Lock], k string, v *model.Lock, deleted, arrived bool) bool {
	old := s.get(k)
	if deleted || (old == nil && !arrived) {
		return putOrRemove(s, k, v, deleted)
	}
	// A copy: v is also the informer's cached value.
	cp := *v
	if old != nil && old.HolderIdentity == cp.HolderIdentity && old.LastRenewed().Equal(cp.LastRenewed()) {
		cp.Seen, cp.Arrived, cp.ServerAtSeen = old.Seen, old.Arrived, old.ServerAtSeen
	} else {
		cp.Arrived = true
	}
	return putOrRemove(s, k, &cp, deleted)
}

func putOrRemove[T any](s *store[T], k string, v *T, deleted bool) bool {
	if deleted {
		return s.remove(k)
	}
	if old := s.get(k); old != nil && unchanged(old, v) {
		// A write the console cannot see (a node heartbeat, a field it
		// does not keep): no snapshot. The stored value keeps the older
		// resourceVersion, which nothing reads from a snapshot.
		return false
	}
	s.put(k, v)
	return true
}

// unchanged reports whether v equals old but for the resourceVersion.
func unchanged[T any](old, v *T) bool {
	cp := *v
	if m, om := metaOf(&cp), metaOf(old); m != nil && om != nil {
		m.ResourceVersion = om.ResourceVersion
	}
	// An event rewritten with nothing new keeps its place among the events
	// of its second, which its resourceVersion orders.
	if e, oe := any(&cp).(*model.Event); oe {
		e.ResourceVersion = any(old).(*model.Event).ResourceVersion
	}
	return reflect.DeepEqual(&cp, old)
}

func metaOf(v any) *model.Meta {
	switch x := v.(type) {
	case *model.EKSACluster:
		return &x.Meta
	case *model.CAPICluster:
		return &x.Meta
	case *model.ControlPlane:
		return &x.Meta
	case *model.EtcdCluster:
		return &x.Meta
	case *model.MachineDeployment:
		return &x.Meta
	case *model.Machine:
		return &x.Meta
	case *model.Node:
		return &x.Meta
	case *model.NodeUpgrade:
		return &x.Meta
	case *model.UpgradeRequest:
		return &x.Meta
	case *model.UpgraderPod:
		return &x.Meta
	}
	return nil
}
