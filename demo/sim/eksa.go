package sim

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/demo/kinds"
	"github.com/upgrade-console/upgrade-console/demo/objects"
	"github.com/upgrade-console/upgrade-console/demo/release"
	"github.com/upgrade-console/upgrade-console/model"
)

// Reasons of the EKS-A Cluster conditions (facts §1.4).
const (
	reasonRolling     = "RollingUpgradeInProgress"
	reasonInPlace     = "InPlaceUpgradeInProgress"
	reasonOutdated    = "OutdatedInformation"
	reasonScalingUp   = "ScalingUp"
	reasonScalingDown = "ScalingDown"
	reasonNotReady    = "NodesNotReady"
	reasonCNIUpgrade  = "DefaultCNIUpgradeInProgressReason"
	reasonCPUnhealthy = "ControlPlaneComponentsUnhealthy"
)

// wanted is what the cluster spec resolves to through its EKSARelease and
// Bundles, as EKS-A reads them (facts §2.2).
type wanted struct {
	eksD        string // EKS-D release name
	kubeadm     string // KCP/Machine version, v1.31.3-eks-1-31-11
	etcdVersion string
	cilium      string
	kube        release.Kube
}

// reconcileEKSA is the EKS-A cluster controller for the management cluster:
// management components first, then external etcd (with the control plane
// paused), the control plane, the CNI and the workers, writing the Cluster
// conditions as it goes. observedGeneration is written with the conditions
// computed for that generation, never before.
func (s *Simulator) reconcileEKSA(ctx context.Context, k string) (time.Duration, error) {
	ns, name := splitKey(k)
	cl := s.get(kinds.EKSACluster, ns, name)
	if cl == nil {
		return 0, nil
	}
	gen := cl.GetGeneration()
	if annotation(cl, model.AnnotationEKSAPaused) == "true" {
		s.emitOnce(fmt.Sprintf("paused/%s/%d", k, gen), compEKSA, cl, true, "ReconcilePaused",
			"Reconcile of generation %d skipped: %s is \"true\"", gen, model.AnnotationEKSAPaused)
		return 0, nil
	}
	owner := compEKSA + "/" + k
	sys := s.sc.SystemNamespace
	now := s.clock.Now()
	eksaVersion := str(cl, "spec", "eksaVersion")
	kube := str(cl, "spec", "kubernetesVersion")
	kids := s.children(cl)
	st := &clusterStatus{s: s, cl: cl, now: now, kids: kids}

	w, reason, err := s.resolve(sys, eksaVersion, kube)
	if err != nil {
		s.emitOnce(fmt.Sprintf("invalid/%s/%d", k, gen), compEKSA, cl, true, reason, "%v", err)
		return 0, st.write(ctx, owner, nil, reason, err.Error())
	}

	// The provider: the datacenter config's status (its reconciler runs in
	// the same manager), then the context-aware validation of the machine
	// configs, before any CAPI object is touched.
	if err := s.datacenterStatus(ctx, owner, cl); err != nil {
		return 0, err
	}
	groups := s.groupWants(cl, w)
	for _, g := range groups {
		msg := kids.invalidTemplate(g.key, g.kube, g.want)
		if msg == "" {
			continue
		}
		// Nothing is rolled on a template that fails the validation. EKS-A
		// reports the failure at once; the demo reports it once it has
		// outlasted the apply of a spec: a client applies the machine
		// configs (a new OVA template) before the Cluster (its new
		// version), and a failure shown in between would end a
		// `watch --exit-on-done` for an upgrade that is fine.
		step := fmt.Sprintf("mcinvalid/%s/%d/%s", k, gen, msg)
		if left, ok := s.pace.wait(step, validationGrace); !ok {
			return left, nil
		}
		s.emitOnce(step, compEKSA, cl, true, reasonMachineConfigInvalid, "%s", msg)
		return 0, st.write(ctx, owner, nil, reasonMachineConfigInvalid, msg)
	}

	kcp := s.get(kinds.KCP, sys, name)
	if kcp == nil {
		return s.t.Requeue, nil
	}
	st.controlPlane(kcp)
	st.workers(s.list(kinds.MachineDeployment, sys, map[string]string{model.LabelClusterName: name}))
	st.cni(true)

	// External etcd first, with the control plane paused (facts §6.5).
	if s.sc.ExternalEtcd() {
		ec := s.get(kinds.EtcdadmCluster, sys, name+"-etcd")
		if ec == nil {
			return s.t.Requeue, nil
		}
		// A new etcd release, or a new machine template for a changed etcd
		// machine config: either rolls the members.
		cur := str(ec, "spec", "infrastructureTemplate", "name")
		spec, _ := kids.template(groupEtcd)
		upgrade := str(ec, "spec", "etcdadmConfigSpec", "cloudInitConfig", "version") != w.etcdVersion
		if upgrade || s.templateOutdated(cur, groupEtcd, spec) {
			if annotation(kcp, model.AnnotationCAPIPaused) != "true" {
				if _, err := s.patch(ctx, owner, compEKSA, kinds.KCP, sys, name, map[string]any{
					"metadata": map[string]any{"annotations": map[string]any{model.AnnotationCAPIPaused: "true"}},
				}); err != nil {
					return 0, err
				}
				s.emit(compEKSA, kcp, false, "Paused", "Paused KubeadmControlPlane %s while external etcd is upgraded", name)
			}
			tmpl := s.newTemplate(objects.EtcdTemplatePrefix(name), cur, spec, now)
			if _, err := s.patch(ctx, owner, compEKSA, kinds.EtcdadmCluster, sys, ec.GetName(), map[string]any{
				"metadata": map[string]any{"annotations": map[string]any{model.AnnotationEtcdUpgrading: "true"}},
				"spec": map[string]any{
					"infrastructureTemplate": objects.EtcdTemplateRef(tmpl, sys),
					"etcdadmConfigSpec":      objects.EtcdadmConfigSpec(w.etcdVersion),
				},
			}); err != nil {
				return 0, err
			}
			if upgrade {
				s.emit(compEKSA, ec, false, "EtcdUpgradeStarted", "Upgrading external etcd to %s (template %s)", w.etcdVersion, tmpl)
			} else {
				s.emit(compEKSA, ec, false, "EtcdRolloutStarted", "Rolling out external etcd on template %s: VSphereMachineConfig %s changed", tmpl, groupConfig(cl, groupEtcd))
			}
			st.etcdNotReady()
			return s.t.Requeue, st.write(ctx, owner, &w, "", "")
		}
		// "It's important to use status.Ready and not the Ready condition."
		if num(ec, "status", "observedGeneration") != ec.GetGeneration() || !flag(ec, "status", "ready") {
			st.etcdNotReady()
			return s.t.Requeue, st.write(ctx, owner, &w, "", "")
		}
		if v := str(kcp, "spec", "version"); v != w.kubeadm || annotation(kcp, model.AnnotationCAPIPaused) == "true" {
			st.kcpEndpoints = strings.Split(str(ec, "status", "endpoints"), ",")
		}
	}

	// Control plane: new version and template (a new template alone for a
	// changed control plane machine config), and the pause lifted.
	cpCur := str(kcp, "spec", "machineTemplate", "spec", "infrastructureRef", "name")
	cpSpec, _ := kids.template(groupControlPlane)
	cpUpgrade := str(kcp, "spec", "version") != w.kubeadm
	cpRoll := cpUpgrade || s.templateOutdated(cpCur, groupControlPlane, cpSpec)
	if cpRoll || annotation(kcp, model.AnnotationCAPIPaused) == "true" {
		p := map[string]any{"metadata": map[string]any{"annotations": map[string]any{model.AnnotationCAPIPaused: nil}}}
		var tmpl map[string]any
		if cpRoll {
			tmpl = map[string]any{"machineTemplate": map[string]any{"spec": map[string]any{"infrastructureRef": map[string]any{
				"name": s.newTemplate(objects.ControlPlaneTemplatePrefix(name), cpCur, cpSpec, now),
			}}}}
		}
		switch {
		case cpUpgrade:
			etcd := map[string]any{}
			if s.sc.ExternalEtcd() {
				etcd["external"] = map[string]any{"endpoints": toAny(st.kcpEndpoints)}
			} else {
				etcd["local"] = map[string]any{"imageTag": objects.EtcdImageTag(w.kube)}
			}
			tmpl["version"] = w.kubeadm
			tmpl["kubeadmConfigSpec"] = map[string]any{"clusterConfiguration": map[string]any{"etcd": etcd}}
			p["spec"] = tmpl
			s.emit(compEKSA, kcp, false, "ControlPlaneUpgradeStarted", "Upgrading the control plane %s from %s to %s", name, str(kcp, "spec", "version"), w.kubeadm)
		case cpRoll:
			p["spec"] = tmpl
			s.emit(compEKSA, kcp, false, "ControlPlaneRolloutStarted", "Rolling out the control plane %s on template %s: VSphereMachineConfig %s changed",
				name, nestedName(tmpl), groupConfig(cl, groupControlPlane))
		default:
			s.emit(compEKSA, kcp, false, "Resumed", "Resumed KubeadmControlPlane %s", name)
		}
		if _, err := s.patch(ctx, owner, compEKSA, kinds.KCP, sys, name, p); err != nil {
			return 0, err
		}
		st.outdatedCP()
		return s.t.Requeue, st.write(ctx, owner, &w, "", "")
	}
	if !st.isTrue("ControlPlaneReady") || str(kcp, "status", "version") != w.kubeadm {
		return s.t.Requeue, st.write(ctx, owner, &w, "", "")
	}

	// CNI: Cilium is upgraded once the control plane is ready.
	if cur := s.ciliumVersion(k); cur != w.cilium {
		s.emitOnce("cni/"+k+"/"+w.cilium, compEKSA, cl, false, "UpgradingCilium", "Upgrading Cilium from %s to %s", cur, w.cilium)
		if left, ok := s.pace.wait("cni/"+k+"/"+w.cilium, s.t.CNI); !ok {
			st.cni(false)
			if err := st.write(ctx, owner, &w, "", ""); err != nil {
				return 0, err
			}
			return left, nil
		}
		s.mu.Lock()
		s.cni[k] = w.cilium
		s.mu.Unlock()
		s.emit(compEKSA, cl, false, "CiliumUpgraded", "Cilium %s is running on every node", w.cilium)
	}

	// Workers.
	for _, g := range groups {
		if g.worker == "" {
			continue
		}
		mdName := name + "-" + g.worker
		md := s.get(kinds.MachineDeployment, sys, mdName)
		if md == nil {
			continue
		}
		// The group's count is the MachineDeployment's replicas, which
		// CAPI scales the machines to.
		if n, ok := workerCount(cl, g.worker); ok && num(md, "spec", "replicas") != n {
			if _, err := s.patch(ctx, owner, compEKSA, kinds.MachineDeployment, sys, mdName, map[string]any{
				"spec": map[string]any{"replicas": n},
			}); err != nil {
				return 0, err
			}
			st.outdatedWorkers(mdName)
		}
		cur := str(md, "spec", "template", "spec", "infrastructureRef", "name")
		spec, _ := kids.template(g.key)
		upgrade := str(md, "spec", "template", "spec", "version") != g.want.kubeadm
		if !upgrade && !s.templateOutdated(cur, g.key, spec) {
			continue
		}
		tmpl := s.newTemplate(objects.WorkerTemplatePrefix(mdName), cur, spec, now)
		ts := map[string]any{"infrastructureRef": map[string]any{"name": tmpl}}
		if upgrade {
			// A new Kubernetes version needs a new KubeadmConfigTemplate
			// too; a machine config change needs only the machine template.
			ts["version"] = g.want.kubeadm
			ts["bootstrap"] = map[string]any{"configRef": map[string]any{"name": mdName + "-template-" + unix(now)}}
		}
		if _, err := s.patch(ctx, owner, compEKSA, kinds.MachineDeployment, sys, mdName, map[string]any{
			"spec": map[string]any{"template": map[string]any{"spec": ts}},
		}); err != nil {
			return 0, err
		}
		if upgrade {
			s.emit(compEKSA, md, false, "WorkersUpgradeStarted", "Upgrading worker node group %s to %s", g.worker, g.want.kubeadm)
		} else {
			s.emit(compEKSA, md, false, "WorkersRolloutStarted", "Rolling out worker node group %s on template %s: VSphereMachineConfig %s changed", g.worker, tmpl, groupConfig(cl, g.key))
		}
		st.outdatedWorkers(mdName)
	}
	if err := st.write(ctx, owner, &w, "", ""); err != nil {
		return 0, err
	}
	if !st.allTrue() {
		return s.t.Requeue, nil
	}
	s.emitOnce(fmt.Sprintf("ready/%s/%d/%d", k, gen, st.children), compEKSA, cl, false, "Ready",
		"Cluster %s is ready: Kubernetes %s, EKS-A %s (generation %d, children generation %d)", name, kube, eksaVersion, gen, st.children)
	return 0, nil
}

func (s *Simulator) ciliumVersion(k string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.cni[k]; ok {
		return v
	}
	// The world is seeded healthy on the current release.
	v := release.Current.Components["cilium"]
	s.cni[k] = v
	return v
}

// resolve maps eksaVersion and a Kubernetes version to component versions
// through the EKSARelease and Bundles objects in the cache. The reason names
// the failure when it fails.
func (s *Simulator) resolve(sys, eksaVersion, kube string) (wanted, string, error) {
	er := s.get(kinds.EKSARelease, sys, release.Name(eksaVersion))
	if er == nil {
		return wanted{}, "EksaVersionInvalid", fmt.Errorf("eksarelease %s for eksaVersion %s not found in %s", release.Name(eksaVersion), eksaVersion, sys)
	}
	b := s.get(kinds.Bundles, str(er, "spec", "bundlesRef", "namespace"), str(er, "spec", "bundlesRef", "name"))
	if b == nil {
		return wanted{}, "BundleNotFoundForCluster", fmt.Errorf("bundles %s referenced by %s not found", str(er, "spec", "bundlesRef", "name"), er.GetName())
	}
	vbs, _, _ := unstructured.NestedSlice(b.Object, "spec", "versionsBundles")
	for _, v := range vbs {
		vb, _ := v.(map[string]any)
		if vb["kubeVersion"] != kube {
			continue
		}
		u := &unstructured.Unstructured{Object: vb}
		eksD := str(u, "eksD", "name")
		w := wanted{
			eksD:    eksD,
			kubeadm: str(u, "eksD", "kubeVersion") + "-eks-" + str(u, "eksD", "channel") + "-" + eksD[strings.LastIndexByte(eksD, '-')+1:],
			cilium:  str(u, "cilium", "version"),
		}
		if r, ok := release.ByVersion(eksaVersion); ok {
			if k, ok := r.Kube(kube); ok {
				w.kube, w.etcdVersion = k, k.EtcdVersion
			}
		}
		return w, "", nil
	}
	return wanted{}, "BundleNotFoundForCluster", fmt.Errorf("kubernetes version %s is not supported by bundles manifest %d", kube, num(b, "spec", "number"))
}

// workerGroup is a worker node group: its name, its own Kubernetes version
// (when it differs from the cluster's) and its machine config.
type workerGroup struct{ name, kube, config string }

func workerGroups(cl *unstructured.Unstructured) []workerGroup {
	list, _, _ := unstructured.NestedSlice(cl.Object, "spec", "workerNodeGroupConfigurations")
	var out []workerGroup
	for _, w := range list {
		m, _ := w.(map[string]any)
		n, _ := m["name"].(string)
		k, _ := m["kubernetesVersion"].(string)
		c, _, _ := unstructured.NestedString(m, "machineGroupRef", "name")
		out = append(out, workerGroup{n, k, c})
	}
	return out
}

// workerCount is the count of the worker node group named name.
func workerCount(cl *unstructured.Unstructured, name string) (int64, bool) {
	list, _, _ := unstructured.NestedSlice(cl.Object, "spec", "workerNodeGroupConfigurations")
	for _, w := range list {
		m, _ := w.(map[string]any)
		if n, _ := m["name"].(string); n == name {
			c, ok, _ := unstructured.NestedInt64(m, "count")
			return c, ok
		}
	}
	return 0, false
}

// groupWant is a machine group of the Cluster with what it runs.
type groupWant struct {
	key    string // machine group key (templates.go)
	worker string // the worker node group's name; "" for etcd and the control plane
	kube   string // the group's Kubernetes version ("1.31")
	want   wanted
}

// groupWants lists the Cluster's machine groups: external etcd, the control
// plane (both on the cluster's version, w) and each worker node group on its
// own version when it has one.
func (s *Simulator) groupWants(cl *unstructured.Unstructured, w wanted) []groupWant {
	kube := str(cl, "spec", "kubernetesVersion")
	var out []groupWant
	if s.sc.ExternalEtcd() {
		out = append(out, groupWant{key: groupEtcd, kube: kube, want: w})
	}
	out = append(out, groupWant{key: groupControlPlane, kube: kube, want: w})
	for _, wg := range workerGroups(cl) {
		g := groupWant{key: groupWorkerPrefix + wg.name, worker: wg.name, kube: kube, want: w}
		if wg.kube != "" && wg.kube != kube {
			if ww, _, err := s.resolve(s.sc.SystemNamespace, str(cl, "spec", "eksaVersion"), wg.kube); err == nil {
				g.kube, g.want = wg.kube, ww
			}
		}
		out = append(out, g)
	}
	return out
}

// datacenterStatus is EKS-A's VSphereDatacenterConfig reconciler as far as
// the demo goes: the spec is valid, and the status says for which generation.
func (s *Simulator) datacenterStatus(ctx context.Context, owner string, cl *unstructured.Unstructured) error {
	dc := s.get(kinds.VSphereDatacenterConfig, cl.GetNamespace(), str(cl, "spec", "datacenterRef", "name"))
	if dc == nil {
		return nil
	}
	st := copyStatus(statusMap(dc))
	st["specValid"], st["observedGeneration"] = true, dc.GetGeneration()
	return s.setStatus(ctx, owner, compEKSA, kinds.VSphereDatacenterConfig, dc, st)
}

// nestedName is the infrastructureRef name of a KCP spec patch.
func nestedName(spec map[string]any) string {
	n, _, _ := unstructured.NestedString(spec, "machineTemplate", "spec", "infrastructureRef", "name")
	return n
}

func toAny(ss []string) []any {
	out := make([]any, 0, len(ss))
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
