// Package seed creates the demo world in an API server: a healthy, self-managed
// EKS Anywhere management cluster on vSphere as EKS-A, Cluster API and etcdadm
// leave it, plus the release objects of the current and the target EKS-A
// release, and the leftovers a scenario starts from.
package seed

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/upgrade-console/upgrade-console/demo/kinds"
	"github.com/upgrade-console/upgrade-console/demo/objects"
	"github.com/upgrade-console/upgrade-console/demo/release"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
)

// Clients are the API clients the seed writes with. Seeding a large fleet
// issues thousands of requests: give them a raised QPS and Burst.
type Clients struct {
	Dynamic dynamic.Interface
	Kube    kubernetes.Interface
	// Record, when set, receives every custom resource as the seed sent
	// it, status included: the compatibility check replays them against
	// other CRDs.
	Record func(*unstructured.Unstructured)
}

// record hands a copy of obj with its status to Clients.Record.
func (s *seeder) record(obj *unstructured.Unstructured, status map[string]any) {
	if s.c.Record == nil {
		return
	}
	u := obj.DeepCopy()
	for _, k := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields"} {
		unstructured.RemoveNestedField(u.Object, "metadata", k)
	}
	if status != nil {
		u.Object["status"] = runtimeDeepCopy(status)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.c.Record(u)
}

func runtimeDeepCopy(m map[string]any) map[string]any {
	return (&unstructured.Unstructured{Object: map[string]any{"x": m}}).DeepCopy().Object["x"].(map[string]any)
}

// Field managers of the objects' writers, so managedFields read as on a real
// cluster.
const (
	ManagerCLI        = "eks-a-cli"
	ManagerController = "manager"
)

// Lock lease of the stale-lock scenario: what a console that died an hour
// into an upgrade leaves behind.
const (
	StaleLockHolder   = "ops@bastion-1/5d0c9e1a"
	StaleLockAge      = 3 * time.Hour
	StaleLockDuration = 60
)

// Seed creates the world of cfg. names is shared with the simulated
// controllers so names and addresses never collide; now is the seed's clock.
func Seed(ctx context.Context, c Clients, cfg scenario.Config, names *objects.Names, now time.Time) error {
	s := &seeder{c: c, cfg: cfg, names: names, now: now, sys: cfg.SystemNamespace}
	steps := []struct {
		what string
		fn   func(context.Context) error
	}{
		{"namespaces", s.namespaces},
		{"releases", s.releases},
		{"provider objects", s.providerObjects},
		{"EKS-A Cluster", s.eksaCluster},
		{"CAPI Cluster", s.capiCluster},
		{"etcd", s.etcd},
		{"control plane", s.controlPlane},
		{"workers", s.workers},
		{"health checks", s.healthChecks},
		{"leftovers", s.leftovers},
	}
	for _, st := range steps {
		if err := st.fn(ctx); err != nil {
			return fmt.Errorf("seeding %s: %w", st.what, err)
		}
	}
	return nil
}

type seeder struct {
	c     Clients
	cfg   scenario.Config
	names *objects.Names
	now   time.Time
	sys   string

	capiObj     *unstructured.Unstructured
	etcdCluster *unstructured.Unstructured
	mu          sync.Mutex
}

// built is when the cluster was created: templates carry that time.
func (s *seeder) built() time.Time { return s.now.Add(-41 * 24 * time.Hour) }

func (s *seeder) kube() release.Kube {
	k, _ := release.Current.Kube(CurrentKube)
	return k
}

func (s *seeder) namespaces(ctx context.Context) error {
	for _, ns := range []string{s.sys, s.cfg.ClusterNamespace} {
		_, err := s.c.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	// The in-place upgrader pods run in eksa-system; a bare API server has
	// no controller that creates the default ServiceAccount pods need.
	_, err := s.c.Kube.CoreV1().ServiceAccounts(s.sys).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

func (s *seeder) releases(ctx context.Context) error {
	for _, r := range release.All {
		if _, err := s.create(ctx, kinds.Bundles, r.Bundles(s.sys), nil); err != nil {
			return err
		}
		if _, err := s.create(ctx, kinds.EKSARelease, r.EKSARelease(s.sys), nil); err != nil {
			return err
		}
	}
	return nil
}

// create creates obj and then writes status (when given) through the status
// subresource, which a create ignores.
func (s *seeder) create(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, status map[string]any) (*unstructured.Unstructured, error) {
	ri := s.c.Dynamic.Resource(gvr).Namespace(obj.GetNamespace())
	got, err := ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: ManagerController})
	if err != nil {
		return nil, fmt.Errorf("create %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	if status == nil {
		s.record(obj, nil)
		return got, nil
	}
	fixGeneration(status, got.GetGeneration())
	s.record(obj, status)
	got.Object["status"] = status
	got, err = ri.UpdateStatus(ctx, got, metav1.UpdateOptions{FieldManager: ManagerController})
	if err != nil {
		return nil, fmt.Errorf("status of %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return got, nil
}

// fixGeneration sets observedGeneration (-1 placeholders) to the object's
// generation, known only after create.
func fixGeneration(status map[string]any, gen int64) {
	if v, ok := status["observedGeneration"].(int64); ok && v < 0 {
		status["observedGeneration"] = gen
	}
	conds, _ := status["conditions"].([]any)
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok {
			if v, ok := m["observedGeneration"].(int64); ok && v < 0 {
				m["observedGeneration"] = gen
			}
		}
	}
}

// eksaLabels are the labels EKS-A puts on every CAPI object it generates.
func (s *seeder) eksaLabels() map[string]any {
	return map[string]any{
		model.LabelClusterName:     s.cfg.ClusterName,
		model.LabelEKSAClusterName: s.cfg.ClusterName,
		model.LabelEKSAClusterNS:   s.cfg.ClusterNamespace,
	}
}

// providerObjects creates the VSphereDatacenterConfig and the
// VSphereMachineConfigs the Cluster refers to, as the EKS-A CLI applied them
// when it created the cluster; the datacenter's status is the controller's.
func (s *seeder) providerObjects(ctx context.Context) error {
	for _, doc := range ProviderSpecs(s.cfg, CurrentKube) {
		gvr := kinds.SpecKinds[doc.GetKind()]
		ri := s.c.Dynamic.Resource(gvr).Namespace(doc.GetNamespace())
		got, err := ri.Apply(ctx, doc.GetName(), doc, metav1.ApplyOptions{FieldManager: ManagerCLI, Force: true})
		if err != nil {
			return err
		}
		if gvr != kinds.VSphereDatacenterConfig {
			s.record(got, nil)
			continue
		}
		got.Object["status"] = map[string]any{"specValid": true, "observedGeneration": got.GetGeneration()}
		s.record(got, got.Object["status"].(map[string]any))
		if _, err := ri.UpdateStatus(ctx, got, metav1.UpdateOptions{FieldManager: ManagerController}); err != nil {
			return err
		}
	}
	return nil
}

func (s *seeder) eksaCluster(ctx context.Context) error {
	cl := ClusterSpec(s.cfg, release.Current.Version, CurrentKube)
	ri := s.c.Dynamic.Resource(kinds.EKSACluster).Namespace(s.cfg.ClusterNamespace)
	if _, err := ri.Apply(ctx, cl.GetName(), cl, metav1.ApplyOptions{FieldManager: ManagerCLI, Force: true}); err != nil {
		return err
	}
	// The management components are the target release's: the operator
	// ran `eksctl anywhere upgrade management-components` first, as EKS-A
	// documents (nothing upgrades them from an applied spec), and that
	// installed the target's EKSARelease.
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, model.AnnotationManagementComponentsVersion, release.Target.Version)
	got, err := ri.Patch(ctx, cl.GetName(), types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: ManagerController})
	if err != nil {
		return err
	}
	at := s.now.Add(-40 * 24 * time.Hour)
	gen := got.GetGeneration()
	var conds []any
	for _, t := range []string{"Ready", "ControlPlaneInitialized", "ControlPlaneReady", "DefaultCNIConfigured", "WorkersReady"} {
		conds = append(conds, objects.V1beta1(t, true, "", "", "", at))
	}
	got.Object["status"] = map[string]any{
		"conditions":                   objects.SortV1beta1(conds),
		"observedGeneration":           gen,
		"reconciledGeneration":         gen,
		"childrenReconciledGeneration": int64(3 + len(s.cfg.Workers)),
		"eksdReleaseRef": map[string]any{
			"apiVersion": "distro.eks.amazonaws.com/v1alpha1",
			"kind":       "Release",
			"name":       s.kube().EksDName(),
			"namespace":  s.sys,
		},
	}
	s.record(got, got.Object["status"].(map[string]any))
	_, err = ri.UpdateStatus(ctx, got, metav1.UpdateOptions{FieldManager: ManagerController})
	return err
}

func (s *seeder) capiCluster(ctx context.Context) error {
	name := s.cfg.ClusterName
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kinds.CAPIVersion,
		"kind":       "Cluster",
		"metadata":   map[string]any{"name": name, "namespace": s.sys, "labels": s.eksaLabels()},
		"spec": map[string]any{
			"clusterNetwork": map[string]any{
				"pods":     map[string]any{"cidrBlocks": []any{"192.168.0.0/16"}},
				"services": map[string]any{"cidrBlocks": []any{"10.96.0.0/12"}},
			},
			"controlPlaneEndpoint": map[string]any{"host": ControlPlaneEndpoint, "port": int64(6443)},
			"controlPlaneRef":      map[string]any{"apiGroup": kinds.KCPGroup, "kind": "KubeadmControlPlane", "name": name},
			"infrastructureRef":    map[string]any{"apiGroup": kinds.InfraGroup, "kind": "VSphereCluster", "name": name},
		},
	}}
	cp := int64(s.cfg.ControlPlaneCount)
	w := int64(s.cfg.WorkerCount())
	version := s.kube().KubeadmVersion()
	at := s.built()
	var conds []any
	for _, c := range []struct{ t, r string }{
		{"Available", "Available"}, {"InfrastructureReady", "Ready"}, {"ControlPlaneInitialized", "Initialized"},
		{"ControlPlaneAvailable", "Available"}, {"WorkersAvailable", "Available"},
		{"ControlPlaneMachinesReady", "Ready"}, {"WorkerMachinesReady", "Ready"},
		{"ControlPlaneMachinesUpToDate", "UpToDate"}, {"WorkerMachinesUpToDate", "UpToDate"},
		{"RemoteConnectionProbe", "ProbeSucceeded"},
	} {
		conds = append(conds, objects.V1beta2(c.t, true, c.r, "", -1, at))
	}
	for _, c := range []struct{ t, r string }{
		{"RollingOut", "NotRollingOut"}, {"ScalingUp", "NotScalingUp"}, {"ScalingDown", "NotScalingDown"},
		{"Remediating", "NotRemediating"}, {"Deleting", "NotDeleting"}, {"Paused", "NotPaused"},
	} {
		conds = append(conds, objects.V1beta2(c.t, false, c.r, "", -1, at))
	}
	replicas := func(n int64) map[string]any {
		m := map[string]any{"desiredReplicas": n, "replicas": n, "readyReplicas": n, "availableReplicas": n, "upToDateReplicas": n}
		if n > 0 {
			m["versions"] = []any{map[string]any{"version": version, "replicas": n}}
		}
		return m
	}
	status := map[string]any{
		"phase":              "Provisioned",
		"observedGeneration": int64(-1),
		"initialization":     map[string]any{"infrastructureProvisioned": true, "controlPlaneInitialized": true},
		"controlPlane":       replicas(cp),
		"workers":            replicas(w),
		"conditions":         conds,
	}
	got, err := s.create(ctx, kinds.CAPICluster, obj, status)
	s.capiObj = got
	return err
}

// machineSet runs fn for n items with bounded parallelism: a large fleet is
// thousands of requests.
func parallel(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(64)
	for i := 0; i < n; i++ {
		g.Go(func() error { return fn(ctx, i) })
	}
	return g.Wait()
}

// machine creates a Running Machine and, except for etcd, its Ready Node.
func (s *seeder) machine(ctx context.Context, spec objects.MachineSpec, subnet string) (string, error) {
	m := objects.Machine(spec)
	uuid := s.names.UUID()
	_ = unstructured.SetNestedField(m.Object, objects.ProviderID(uuid), "spec", "providerID")
	if spec.Role == model.RoleEtcd {
		labels := m.GetLabels()
		labels[model.LabelEtcdReady] = "true"
		m.SetLabels(labels)
	}
	ip := s.names.IP(subnet)
	kubelet := s.kube().KubeletVersion()
	state := objects.MachineState{Phase: objects.PhaseRunning, Address: ip, UpToDate: true, Generation: -1}
	if spec.Role != model.RoleEtcd {
		state.NodeName = spec.Name
		state.KubeletVersion = kubelet
	}
	if _, err := s.create(ctx, kinds.Machine, m, objects.MachineStatus(nil, state, s.now)); err != nil {
		return "", err
	}
	if spec.Role == model.RoleEtcd {
		return ip, nil
	}
	return ip, CreateNode(ctx, s.c.Kube, objects.Node(spec.Name, spec.Role, kubelet, ip, objects.ProviderID(uuid), s.now))
}

// CreateNode creates a node with its status, as a kubelet registers one (the
// API server keeps a Node's status on create), and writes the status again
// only when the create dropped it.
func CreateNode(ctx context.Context, kube kubernetes.Interface, n *corev1.Node) error {
	status := n.Status
	got, err := kube.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{FieldManager: ManagerController})
	if err != nil {
		return fmt.Errorf("create Node %s: %w", n.Name, err)
	}
	if len(got.Status.Conditions) == len(status.Conditions) && got.Status.NodeInfo.KubeletVersion == status.NodeInfo.KubeletVersion {
		return nil
	}
	got.Status = status
	if _, err := kube.CoreV1().Nodes().UpdateStatus(ctx, got, metav1.UpdateOptions{FieldManager: ManagerController}); err != nil {
		return fmt.Errorf("status of Node %s: %w", n.Name, err)
	}
	return nil
}

func (s *seeder) etcd(ctx context.Context) error {
	if !s.cfg.ExternalEtcd() {
		return nil
	}
	name := s.cfg.ClusterName + "-etcd"
	template := objects.TemplateName(objects.EtcdTemplatePrefix(s.cfg.ClusterName), s.built())
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kinds.EtcdVersion,
		"kind":       "EtcdadmCluster",
		"metadata": map[string]any{
			"name":            name,
			"namespace":       s.sys,
			"labels":          s.eksaLabels(),
			"ownerReferences": []any{objects.OwnerOf(s.capiObj).Ref()},
		},
		"spec": map[string]any{
			"replicas":               int64(s.cfg.EtcdCount),
			"infrastructureTemplate": objects.EtcdTemplateRef(template, s.sys),
			"etcdadmConfigSpec":      objects.EtcdadmConfigSpec(s.kube().EtcdVersion),
		},
	}}
	got, err := s.c.Dynamic.Resource(kinds.EtcdadmCluster).Namespace(s.sys).Create(ctx, obj, metav1.CreateOptions{FieldManager: ManagerController})
	if err != nil {
		return fmt.Errorf("create EtcdadmCluster %s: %w", name, err)
	}
	s.etcdCluster = got
	owner := objects.OwnerOf(got)
	ips := make([]string, s.cfg.EtcdCount)
	err = parallel(ctx, s.cfg.EtcdCount, func(ctx context.Context, i int) error {
		ip, err := s.machine(ctx, objects.MachineSpec{
			Name: s.names.Generate(name), Namespace: s.sys, Cluster: s.cfg.ClusterName,
			Role: model.RoleEtcd, Owner: owner, InfraTemplate: template, EtcdCluster: name,
		}, objects.SubnetEtcd)
		ips[i] = ip
		return err
	})
	if err != nil {
		return err
	}
	// The init member's address, which the troubleshooting guide edits when
	// a new member cannot find its peers (status.initMachineAddress names it).
	initSecret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: s.cfg.ClusterName + "-etcd-init", Namespace: s.sys,
			Labels: map[string]string{model.LabelClusterName: s.cfg.ClusterName},
		},
		Type: corev1.SecretTypeOpaque,
		StringData: map[string]string{
			"address":    "https://" + ips[0] + ":2379",
			"clientUrls": "https://" + ips[0] + ":2379",
		},
	}
	if _, err := s.c.Kube.CoreV1().Secrets(s.sys).Create(ctx, initSecret, metav1.CreateOptions{FieldManager: ManagerController}); err != nil {
		return fmt.Errorf("create Secret %s: %w", initSecret.Name, err)
	}
	got.Object["status"] = objects.EtcdStatus(nil, objects.EtcdState{
		Ready: true, Replicas: int64(s.cfg.EtcdCount), Generation: got.GetGeneration(),
		Endpoints: ips, Cluster: s.cfg.ClusterName,
	}, s.built())
	s.record(got, got.Object["status"].(map[string]any))
	s.etcdCluster, err = s.c.Dynamic.Resource(kinds.EtcdadmCluster).Namespace(s.sys).UpdateStatus(ctx, got, metav1.UpdateOptions{FieldManager: ManagerController})
	return err
}

func (s *seeder) controlPlane(ctx context.Context) error {
	name := s.cfg.ClusterName
	template := objects.TemplateName(objects.ControlPlaneTemplatePrefix(name), s.built())
	version := s.kube().KubeadmVersion()
	obj := objects.KCP(s.cfg, s.etcdEndpoints(), template, version, s.kube())
	obj.Object["metadata"].(map[string]any)["labels"] = s.eksaLabels()
	obj.SetOwnerReferences(nil)
	_ = unstructured.SetNestedSlice(obj.Object, []any{objects.OwnerOf(s.capiObj).Ref()}, "metadata", "ownerReferences")
	n := int64(s.cfg.ControlPlaneCount)
	got, err := s.create(ctx, kinds.KCP, obj, objects.KCPStatus(nil, objects.KCPState{
		Replicas: n, Ready: n, Available: n, UpToDate: n, Generation: -1,
		Versions: map[string]int64{version: n}, Cluster: name,
	}, s.built()))
	if err != nil {
		return err
	}
	owner := objects.OwnerOf(got)
	return parallel(ctx, s.cfg.ControlPlaneCount, func(ctx context.Context, i int) error {
		_, err := s.machine(ctx, objects.MachineSpec{
			Name: s.names.Generate(name), Namespace: s.sys, Cluster: name, Role: model.RoleControlPlane,
			Owner: owner, Version: version, InfraTemplate: template, ControlPlaneName: name,
		}, objects.SubnetControlPlane)
		return err
	})
}

func (s *seeder) etcdEndpoints() []string {
	if s.etcdCluster == nil {
		return nil
	}
	eps, _, _ := unstructured.NestedString(s.etcdCluster.Object, "status", "endpoints")
	if eps == "" {
		return nil
	}
	return splitComma(eps)
}

func (s *seeder) workers(ctx context.Context) error {
	version := s.kube().KubeadmVersion()
	for _, w := range s.cfg.Workers {
		mdName := s.cfg.ClusterName + "-" + w.Name
		template := objects.TemplateName(objects.WorkerTemplatePrefix(mdName), s.built())
		md := objects.MachineDeployment(s.cfg, w, version, template)
		for k, v := range s.eksaLabels() {
			md.Object["metadata"].(map[string]any)["labels"].(map[string]any)[k] = v
		}
		_ = unstructured.SetNestedSlice(md.Object, []any{objects.OwnerOf(s.capiObj).Ref()}, "metadata", "ownerReferences")
		n := int64(w.Count)
		gotMD, err := s.create(ctx, kinds.MachineDeployment, md, objects.MDStatus(nil, objects.MDState{
			Replicas: n, Ready: n, Available: n, UpToDate: n, Generation: -1,
			Versions: map[string]int64{version: n}, Cluster: s.cfg.ClusterName, Name: mdName,
		}, s.built()))
		if err != nil {
			return err
		}
		hash := s.names.Suffix(10)
		ms := objects.MachineSet(gotMD, mdName+"-"+hash, hash, n, 1)
		gotMS, err := s.create(ctx, kinds.MachineSet, ms, objects.MSStatus(n, n, n, -1, s.cfg.ClusterName, mdName, hash))
		if err != nil {
			return err
		}
		owner := objects.OwnerOf(gotMS)
		err = parallel(ctx, w.Count, func(ctx context.Context, i int) error {
			_, err := s.machine(ctx, objects.MachineSpec{
				Name: s.names.Generate(gotMS.GetName()), Namespace: s.sys, Cluster: s.cfg.ClusterName,
				Role: model.RoleWorker, Owner: owner, Version: version, InfraTemplate: template,
				Deployment: mdName, MachineSet: gotMS.GetName(), TemplateHash: hash,
			}, objects.SubnetWorkers)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *seeder) healthChecks(ctx context.Context) error {
	name := s.cfg.ClusterName
	mhcs := []*unstructured.Unstructured{objects.MachineHealthCheck(s.cfg, objects.KCPHealthCheckName(name),
		map[string]any{model.LabelClusterName: name, model.LabelControlPlane: ""})}
	for _, w := range s.cfg.Workers {
		md := name + "-" + w.Name
		mhcs = append(mhcs, objects.MachineHealthCheck(s.cfg, objects.WorkerHealthCheckName(md),
			map[string]any{model.LabelClusterName: name, model.LabelDeploymentName: md}))
	}
	for _, m := range mhcs {
		_ = unstructured.SetNestedSlice(m.Object, []any{objects.OwnerOf(s.capiObj).Ref()}, "metadata", "ownerReferences")
		if _, err := s.create(ctx, kinds.MachineHealthCheck, m, nil); err != nil {
			return err
		}
	}
	return nil
}

func (s *seeder) leftovers(ctx context.Context) error {
	if !s.cfg.StaleLock {
		return nil
	}
	acquired := metav1.NewMicroTime(s.now.Add(-StaleLockAge - 20*time.Minute))
	renewed := metav1.NewMicroTime(s.now.Add(-StaleLockAge))
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name:      model.LockName(s.cfg.ClusterName),
			Namespace: s.sys,
			Labels: map[string]string{
				"app.kubernetes.io/managed-by": "upgrade-console",
				"upgrade-console/cluster":      s.cfg.ClusterName,
			},
		},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(StaleLockHolder),
			LeaseDurationSeconds: ptr.To(int32(StaleLockDuration)),
			AcquireTime:          &acquired,
			RenewTime:            &renewed,
		},
	}
	leases := s.c.Kube.CoordinationV1().Leases(s.sys)
	lease, err := leases.Create(ctx, lease, metav1.CreateOptions{FieldManager: "upgrade-console"})
	if err != nil {
		return fmt.Errorf("create stale lock Lease: %w", err)
	}
	// The console judges the lock by the API server's time of its last
	// write (managedFields), which the create just set to now: a lease
	// written a moment ago is live whatever its renewTime. The API server
	// takes managedFields as an update sends them, so the console's entry
	// is set back to the renewal, by a write of the seed's own (the
	// lease's transitions, which the console leaves alone on a Lease it
	// does not hold) that does not set it anew.
	written := metav1.NewTime(renewed.Time)
	for i := range lease.ManagedFields {
		if lease.ManagedFields[i].Manager == model.FieldManager {
			lease.ManagedFields[i].Time = &written
		}
	}
	lease.Spec.LeaseTransitions = ptr.To(int32(0))
	if _, err := leases.Update(ctx, lease, metav1.UpdateOptions{FieldManager: "demo-seed"}); err != nil {
		return fmt.Errorf("date the stale lock Lease back: %w", err)
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"true"}}}`, model.AnnotationEKSAPaused)
	_, err = s.c.Dynamic.Resource(kinds.EKSACluster).Namespace(s.cfg.ClusterNamespace).Patch(ctx, s.cfg.ClusterName,
		types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "upgrade-console"})
	return err
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}
