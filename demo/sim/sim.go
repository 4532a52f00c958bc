// Package sim runs simulated EKS Anywhere, Cluster API, etcdadm and
// infrastructure controllers against a real API server. They react to the
// cluster spec an operator (or the console) applies the way the real
// controllers do, with the same objects, annotations, conditions, reasons and
// events, at a pace scaled by Speed, so an upgrade can be watched, tested and
// broken on purpose without a data centre.
//
// Each controller is a plain client-go controller: dynamic shared informers
// feed a rate-limited work queue; a reconcile reads the informer cache, writes
// with JSON merge patches and does not act again until the cache shows its
// own writes (see writes), as controller-runtime's expectations do.
package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/upgrade-console/upgrade-console/demo/kinds"
	"github.com/upgrade-console/upgrade-console/demo/objects"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
)

// Action is one thing a simulated controller did: what the plain demo
// prints, and what it records as a Kubernetes Event.
type Action struct {
	At        time.Time
	Component string // "eksa-controller", "etcdadm-controller", …
	Kind      string
	Namespace string
	Name      string
	Warning   bool
	Reason    string
	Message   string
}

func (a Action) String() string {
	level := "Normal "
	if a.Warning {
		level = "Warning"
	}
	return fmt.Sprintf("%s %-35s %s %s/%s %s: %s", a.At.Format("15:04:05.000"), a.Component, level, a.Kind, a.Name, a.Reason, a.Message)
}

// Config configures a Simulator.
type Config struct {
	Scenario scenario.Config
	// Speed scales every timing: 10 runs ten times faster than the demo's
	// default pace. Zero means 1.
	Speed float64
	// Timings overrides the unscaled timings; zero value: DefaultTimings.
	Timings *Timings
	// Clock drives every delay; nil means the real clock.
	Clock clock.WithTicker
	// Names must be the generator the world was seeded with.
	Names *objects.Names
	// OnAction, when set, receives every action (from several goroutines,
	// one at a time).
	OnAction func(Action)
	// Workers is the number of parallel reconciles per controller (1 when
	// zero; the large fleet benefits from more).
	Workers int
	// Logf reports what an operator of the demo should know (slow start).
	Logf func(format string, args ...any)
}

// Timings are the durations of the simulated steps at speed 1. A real
// upgrade takes minutes per machine; the defaults make the rolling demo take
// about two minutes.
type Timings struct {
	// CNI is the Cilium upgrade.
	CNI time.Duration
	// Boot, Provision and Join take a machine from Pending to Provisioning,
	// Provisioned (VM cloned, IP) and Running (node joined).
	Boot, Provision, Join time.Duration
	// EtcdHealth is how long a new etcd member must be up before it passes
	// etcdadm's health check (the real controller waits at least 60s).
	EtcdHealth time.Duration
	// Drain is how long deleting an old machine takes (cordon, drain, VM
	// deletion).
	Drain time.Duration
	// Step is one in-place upgrade step of one node.
	Step time.Duration
	// Requeue is the EKS-A controller's resync while not Ready (10s real).
	Requeue time.Duration
	// CrashBackOff is the kubelet's first back-off: it runs a failed
	// container again at once, and after each later failure waits
	// CrashBackOff, doubled at each rerun, at most CrashBackOffMax. The
	// defaults are the kubelet's own (10s, 5 minutes), not compressed as
	// the steps are: a back-off holds nothing of a scenario up (the
	// operator's retry ends it), and compressed 30 times it would be over
	// within a step at --speed 10, the CrashLoopBackOff it names gone
	// before the console could show it.
	CrashBackOff, CrashBackOffMax time.Duration
	// HealthCheck is how long kubeadm's upgrade health check waits for its
	// Job before it fails: a failing kubeadm step's run lasts at least
	// this, and its message names it. The default is kubeadm's own, not
	// compressed, as the back-off is not: the run's startedAt and
	// finishedAt must bear out the "did not complete in" of its message.
	HealthCheck time.Duration
}

// DefaultTimings are the demo's pace at speed 1.
func DefaultTimings() Timings {
	return Timings{
		CNI:        4 * time.Second,
		Boot:       1 * time.Second,
		Provision:  5 * time.Second,
		Join:       3500 * time.Millisecond,
		EtcdHealth: 3 * time.Second,
		Drain:      1500 * time.Millisecond,
		Step:       1200 * time.Millisecond,
		Requeue:    2 * time.Second,

		CrashBackOff:    10 * time.Second,
		CrashBackOffMax: 5 * time.Minute,
		HealthCheck:     15 * time.Second,
	}
}

func (t Timings) scale(speed float64) Timings {
	f := func(d time.Duration) time.Duration { return time.Duration(float64(d) / speed) }
	return Timings{
		CNI: f(t.CNI), Boot: f(t.Boot), Provision: f(t.Provision),
		Join: f(t.Join), EtcdHealth: f(t.EtcdHealth), Drain: f(t.Drain), Step: f(t.Step), Requeue: f(t.Requeue),
		CrashBackOff: f(t.CrashBackOff), CrashBackOffMax: f(t.CrashBackOffMax), HealthCheck: f(t.HealthCheck),
	}
}

// Components, as the events' source and the field managers.
const (
	compEKSA        = "eksa-controller"
	compEtcdadm     = "etcdadm-controller"
	compKCP         = "kubeadm-control-plane-controller"
	compMD          = "machinedeployment-controller"
	compMS          = "machineset-controller"
	compMachine     = "machine-controller"
	compProvider    = "vsphere-controller"
	compNodeUpg     = "nodeupgrade-controller"
	compCPUpgrade   = "controlplaneupgrade-controller"
	compMDUpgrade   = "machinedeploymentupgrade-controller"
	compKubelet     = "kubelet"
	compCAPICluster = "cluster-controller"
	resyncInterval  = 10 * time.Minute
)

// Simulator runs the simulated controllers of one demo world.
type Simulator struct {
	cfg   Config
	sc    scenario.Config
	t     Timings
	clock clock.WithTicker
	dyn   dynamic.Interface
	kube  kubernetes.Interface

	sysFactory     dynamicinformer.DynamicSharedInformerFactory
	clusterFactory dynamicinformer.DynamicSharedInformerFactory
	podFactory     informers.SharedInformerFactory
	informers      map[schema.GroupVersionResource]cache.SharedIndexInformer

	broadcaster record.EventBroadcaster
	recorders   map[corev1.EventSource]record.EventRecorder

	pace   *pacer
	writes *writes
	loops  []*loop
	l      *loops

	mu sync.Mutex
	// stuck names machines the scenario keeps in Provisioning forever.
	stuck map[string]bool
	// etcdRollouts counts etcd machines created by rollouts.
	etcdRollouts int
	// nodeUpgrades counts NodeUpgrades created; failNU names the one whose
	// kubeadm step fails once, failedNU those that did fail.
	nodeUpgrades int
	failNU       map[string]bool
	nuState      map[string]*nuProgress
	// cni is the Cilium version running per cluster.
	cni map[string]string
	// once holds events already emitted for a one-time occurrence.
	once map[string]bool
	// templates holds the spec each machine template EKS-A generated was
	// made from, by template name (see templates.go); seeded those of the
	// templates the world was seeded with, by machine group.
	templates  map[string]string
	seeded     map[string]string
	seededOnce sync.Once
}

// New builds a Simulator for the world of cfg.Scenario in the API server of
// restCfg. Run starts it.
func New(restCfg *rest.Config, cfg Config) (*Simulator, error) {
	if cfg.Speed <= 0 {
		cfg.Speed = 1
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Names == nil {
		cfg.Names = objects.NewNames(time.Now().UnixNano())
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 1
	}
	t := DefaultTimings()
	if cfg.Timings != nil {
		t = *cfg.Timings
	}
	rc := rest.CopyConfig(restCfg)
	// Many small writes at high speed: the default 5 QPS would throttle
	// the simulation, not simulate anything.
	rc.QPS, rc.Burst = 500, 1000
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	s := &Simulator{
		cfg: cfg, sc: cfg.Scenario, t: t.scale(cfg.Speed), clock: cfg.Clock, dyn: dyn, kube: kube,
		informers: map[schema.GroupVersionResource]cache.SharedIndexInformer{},
		recorders: map[corev1.EventSource]record.EventRecorder{},
		stuck:     map[string]bool{}, failNU: map[string]bool{}, nuState: map[string]*nuProgress{},
		cni: map[string]string{}, once: map[string]bool{}, templates: map[string]string{},
	}
	s.pace = &pacer{clock: cfg.Clock, due: map[string]time.Time{}}
	s.writes = &writes{pending: map[string][]write{}, clock: cfg.Clock}
	s.sysFactory = dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, resyncInterval, s.sc.SystemNamespace, nil)
	s.clusterFactory = s.sysFactory
	if s.sc.ClusterNamespace != s.sc.SystemNamespace {
		s.clusterFactory = dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, resyncInterval, s.sc.ClusterNamespace, nil)
	}
	s.podFactory = informers.NewSharedInformerFactoryWithOptions(kube, resyncInterval, informers.WithNamespace(s.sc.SystemNamespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = upgraderPodLabel + "=true" }))

	s.broadcaster = record.NewBroadcaster()
	s.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
	s.setup()
	return s, nil
}

// informer returns the shared informer of a resource, registering it.
func (s *Simulator) informer(gvr schema.GroupVersionResource) cache.SharedIndexInformer {
	if inf, ok := s.informers[gvr]; ok {
		return inf
	}
	f := s.sysFactory
	switch gvr {
	case kinds.EKSACluster, kinds.VSphereDatacenterConfig, kinds.VSphereMachineConfig:
		// The Cluster and its provider objects live in the cluster's
		// namespace.
		f = s.clusterFactory
	}
	inf := f.ForResource(gvr).Informer()
	s.informers[gvr] = inf
	return inf
}

// Run starts the informers and controllers and blocks until ctx is done.
func (s *Simulator) Run(ctx context.Context) error {
	s.sysFactory.Start(ctx.Done())
	s.clusterFactory.Start(ctx.Done())
	s.podFactory.Start(ctx.Done())
	if !s.waitForCaches(ctx) {
		// Stopped before the caches filled: nothing ran, nothing to undo.
		s.shutdown()
		return nil
	}
	var wg sync.WaitGroup
	for _, l := range s.loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.run(ctx, s.cfg.Workers)
		}()
	}
	// Everything starts from the world as it is: reconcile it all once.
	s.enqueueAll()
	<-ctx.Done()
	for _, l := range s.loops {
		l.queue.ShutDown()
	}
	wg.Wait()
	s.shutdown()
	return nil
}

func (s *Simulator) shutdown() {
	s.broadcaster.Shutdown()
	s.sysFactory.Shutdown()
	if s.clusterFactory != s.sysFactory {
		s.clusterFactory.Shutdown()
	}
	s.podFactory.Shutdown()
}

// waitForCaches waits until every informer has listed, saying every 10s
// which ones it still waits for. It reports false when ctx ends first.
func (s *Simulator) waitForCaches(ctx context.Context) bool {
	began := s.clock.Now()
	tick := s.clock.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	lastReport := began
	for {
		var pending []string
		for gvr, inf := range s.informers {
			if !inf.HasSynced() {
				pending = append(pending, gvr.Resource)
			}
		}
		if !s.podFactory.Core().V1().Pods().Informer().HasSynced() {
			pending = append(pending, "pods")
		}
		if len(pending) == 0 {
			return true
		}
		if now := s.clock.Now(); now.Sub(lastReport) >= 10*time.Second {
			lastReport = now
			s.logf("simulated controllers still waiting for the caches of %s (%s)", strings.Join(pending, ", "), now.Sub(began).Round(time.Second))
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C():
		}
	}
}

func (s *Simulator) logf(format string, args ...any) {
	if s.cfg.Logf != nil {
		s.cfg.Logf(format, args...)
	}
}

// ---- reading the cache ----

func (s *Simulator) get(gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	obj, exists, err := s.informer(gvr).GetStore().GetByKey(ns + "/" + name)
	if err != nil || !exists {
		return nil
	}
	return obj.(*unstructured.Unstructured)
}

func (s *Simulator) list(gvr schema.GroupVersionResource, ns string, sel map[string]string) []*unstructured.Unstructured {
	selector := labels.SelectorFromSet(sel)
	var out []*unstructured.Unstructured
	for _, o := range s.informer(gvr).GetStore().List() {
		u := o.(*unstructured.Unstructured)
		if u.GetNamespace() == ns && selector.Matches(labels.Set(u.GetLabels())) {
			out = append(out, u)
		}
	}
	return out
}

// ---- writing ----

// patch sends a JSON merge patch (to a subresource when given) and records
// the write so the caller's next reconcile waits until the cache has it.
func (s *Simulator) patch(ctx context.Context, owner string, comp string, gvr schema.GroupVersionResource, ns, name string, p map[string]any, sub ...string) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	got, err := s.dyn.Resource(gvr).Namespace(ns).Patch(ctx, name, types.MergePatchType, data, metav1.PatchOptions{FieldManager: comp}, sub...)
	if err != nil {
		return nil, fmt.Errorf("patch %s %s/%s: %w", gvr.Resource, ns, name, err)
	}
	s.writes.record(owner, gvr, ns, name, got.GetResourceVersion())
	return got, nil
}

func (s *Simulator) create(ctx context.Context, owner string, comp string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	got, err := s.dyn.Resource(gvr).Namespace(obj.GetNamespace()).Create(ctx, obj, metav1.CreateOptions{FieldManager: comp})
	if err != nil {
		return nil, fmt.Errorf("create %s %s/%s: %w", gvr.Resource, obj.GetNamespace(), obj.GetName(), err)
	}
	s.writes.record(owner, gvr, got.GetNamespace(), got.GetName(), got.GetResourceVersion())
	return got, nil
}

func (s *Simulator) delete(ctx context.Context, owner string, gvr schema.GroupVersionResource, ns, name string) error {
	err := s.dyn.Resource(gvr).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("delete %s %s/%s: %w", gvr.Resource, ns, name, err)
	}
	s.writes.record(owner, gvr, ns, name, "")
	return nil
}

// setStatus writes status when it differs from the cached one (a write of
// an equal status would only wake every watcher for nothing).
func (s *Simulator) setStatus(ctx context.Context, owner, comp string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, status map[string]any) error {
	if sameJSON(obj.Object["status"], status) {
		return nil
	}
	_, err := s.patch(ctx, owner, comp, gvr, obj.GetNamespace(), obj.GetName(), map[string]any{"status": status}, "status")
	return err
}

func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// ---- events ----

func (s *Simulator) recorder(src corev1.EventSource) record.EventRecorder {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.recorders[src]
	if !ok {
		r = s.broadcaster.NewRecorder(scheme.Scheme, src)
		s.recorders[src] = r
	}
	return r
}

// emit records an event on obj and reports the action.
func (s *Simulator) emit(comp string, obj runtime.Object, warning bool, reason, format string, args ...any) {
	a := Action{Component: comp}
	if m, err := metaOf(obj); err == nil {
		a.Kind, a.Namespace, a.Name = obj.GetObjectKind().GroupVersionKind().Kind, m.GetNamespace(), m.GetName()
		if a.Kind == "" {
			a.Kind = "Node"
		}
	}
	s.record(corev1.EventSource{Component: comp}, obj, a, warning, reason, fmt.Sprintf(format, args...))
}

// emitContainer records an event of a node's kubelet about a container of
// pod as the kubelet does: on the pod, the container named by the
// reference's fieldPath, the node as the source's host.
func (s *Simulator) emitContainer(pod *corev1.Pod, container string, warning bool, reason, format string, args ...any) {
	field := "spec.containers{" + container + "}"
	for _, c := range pod.Spec.InitContainers {
		if c.Name == container {
			field = "spec.initContainers{" + container + "}"
		}
	}
	ref := &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID, FieldPath: field}
	a := Action{Component: compKubelet, Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name}
	s.record(corev1.EventSource{Component: compKubelet, Host: pod.Spec.NodeName}, ref, a, warning, reason, fmt.Sprintf(format, args...))
}

// record records an event of src on obj and reports it as the action a.
func (s *Simulator) record(src corev1.EventSource, obj runtime.Object, a Action, warning bool, reason, msg string) {
	typ := corev1.EventTypeNormal
	if warning {
		typ = corev1.EventTypeWarning
	}
	s.recorder(src).Event(obj, typ, reason, msg)
	if s.cfg.OnAction == nil {
		return
	}
	a.At, a.Warning, a.Reason, a.Message = s.clock.Now(), warning, reason, msg
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.OnAction(a)
}

// emitOnce emits an event only the first time key is seen.
func (s *Simulator) emitOnce(key, comp string, obj runtime.Object, warning bool, reason, format string, args ...any) {
	s.mu.Lock()
	seen := s.once[key]
	s.once[key] = true
	s.mu.Unlock()
	if !seen {
		s.emit(comp, obj, warning, reason, format, args...)
	}
}

// ---- pacing ----

// pacer makes steps take time: wait reports whether the step's delay has
// passed since the step was first asked for, and how long is left.
type pacer struct {
	mu    sync.Mutex
	clock clock.Clock
	due   map[string]time.Time
}

func (p *pacer) wait(step string, d time.Duration) (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock.Now()
	due, ok := p.due[step]
	if !ok {
		due = now.Add(d)
		p.due[step] = due
	}
	if now.Before(due) {
		return due.Sub(now), false
	}
	return 0, true
}

// ---- own writes ----

// writes remembers, per reconcile key, the objects a reconcile wrote and the
// resourceVersion the API server returned ("" for a delete). A reconcile
// acts only once its informers show those writes; otherwise a stale cache
// would make it create a second machine for the same slot.
type writes struct {
	mu      sync.Mutex
	clock   clock.Clock
	pending map[string][]write
}

type write struct {
	gvr      schema.GroupVersionResource
	ns, name string
	rv       string
	at       time.Time
}

func (w *writes) record(owner string, gvr schema.GroupVersionResource, ns, name, rv string) {
	if owner == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending[owner] = append(w.pending[owner], write{gvr: gvr, ns: ns, name: name, rv: rv, at: w.clock.Now()})
}

// settled reports whether every write of owner is visible in the caches.
func (s *Simulator) settled(owner string) bool {
	s.writes.mu.Lock()
	defer s.writes.mu.Unlock()
	var left []write
	for _, w := range s.writes.pending[owner] {
		if !s.visible(w) && s.writes.clock.Since(w.at) < 30*time.Second {
			left = append(left, w)
		}
	}
	if len(left) == 0 {
		delete(s.writes.pending, owner)
		return true
	}
	s.writes.pending[owner] = left
	return false
}

func (s *Simulator) visible(w write) bool {
	inf, ok := s.informers[w.gvr]
	if !ok {
		return true
	}
	obj, exists, _ := inf.GetStore().GetByKey(w.ns + "/" + w.name)
	if w.rv == "" {
		return !exists
	}
	if !exists {
		return false
	}
	have, err1 := strconv.ParseUint(obj.(*unstructured.Unstructured).GetResourceVersion(), 10, 64)
	want, err2 := strconv.ParseUint(w.rv, 10, 64)
	if err1 != nil || err2 != nil {
		return true
	}
	return have >= want
}

func metaOf(obj runtime.Object) (metav1.Object, error) {
	if m, ok := obj.(metav1.Object); ok {
		return m, nil
	}
	return nil, fmt.Errorf("%T has no metadata", obj)
}
