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
	st := &clusterStatus{s: s, cl: cl, now: now}

	w, reason, err := s.resolve(sys, eksaVersion, kube)
	if err != nil {
		s.emitOnce(fmt.Sprintf("invalid/%s/%d", k, gen), compEKSA, cl, true, reason, "%v", err)
		return 0, st.write(ctx, owner, nil, reason, err.Error())
	}

	// Management components: the new controllers roll out before anything
	// else, and it is the new controller that observes the new spec.
	if mcv := annotation(cl, model.AnnotationManagementComponentsVersion); mcv != eksaVersion && s.selfManaged(cl) {
		from := mcv
		if left, ok := s.pace.wait("components/"+k+"/"+eksaVersion, s.t.Components); !ok {
			s.emitOnce("components/"+k+"/"+eksaVersion, compEKSA, cl, false, "UpgradingManagementComponents",
				"Upgrading management components from %s to %s: cert-manager, cluster-api, kubeadm, vsphere, etcdadm and the EKS-A controller", from, eksaVersion)
			return left, nil
		}
		if _, err := s.patch(ctx, owner, compEKSA, kinds.EKSACluster, ns, name, map[string]any{
			"metadata": map[string]any{"annotations": map[string]any{model.AnnotationManagementComponentsVersion: eksaVersion}},
		}); err != nil {
			return 0, err
		}
		s.emit(compEKSA, cl, false, "ManagementComponentsUpgraded", "Management components upgraded to %s", eksaVersion)
		return 0, nil
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
		if str(ec, "spec", "etcdadmConfigSpec", "cloudInitConfig", "version") != w.etcdVersion {
			if annotation(kcp, model.AnnotationCAPIPaused) != "true" {
				if _, err := s.patch(ctx, owner, compEKSA, kinds.KCP, sys, name, map[string]any{
					"metadata": map[string]any{"annotations": map[string]any{model.AnnotationCAPIPaused: "true"}},
				}); err != nil {
					return 0, err
				}
				s.emit(compEKSA, kcp, false, "Paused", "Paused KubeadmControlPlane %s while external etcd is upgraded", name)
			}
			tmpl := objects.TemplateName(objects.EtcdTemplatePrefix(name), now)
			if _, err := s.patch(ctx, owner, compEKSA, kinds.EtcdadmCluster, sys, ec.GetName(), map[string]any{
				"metadata": map[string]any{"annotations": map[string]any{model.AnnotationEtcdUpgrading: "true"}},
				"spec": map[string]any{
					"infrastructureTemplate": objects.EtcdTemplateRef(tmpl, sys),
					"etcdadmConfigSpec":      objects.EtcdadmConfigSpec(w.etcdVersion),
				},
			}); err != nil {
				return 0, err
			}
			s.emit(compEKSA, ec, false, "EtcdUpgradeStarted", "Upgrading external etcd to %s (template %s)", w.etcdVersion, tmpl)
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

	// Control plane: new version and template, and the pause lifted.
	if str(kcp, "spec", "version") != w.kubeadm || annotation(kcp, model.AnnotationCAPIPaused) == "true" {
		p := map[string]any{"metadata": map[string]any{"annotations": map[string]any{model.AnnotationCAPIPaused: nil}}}
		if str(kcp, "spec", "version") != w.kubeadm {
			etcd := map[string]any{}
			if s.sc.ExternalEtcd() {
				etcd["external"] = map[string]any{"endpoints": toAny(st.kcpEndpoints)}
			} else {
				etcd["local"] = map[string]any{"imageTag": objects.EtcdImageTag(w.kube)}
			}
			p["spec"] = map[string]any{
				"version": w.kubeadm,
				"machineTemplate": map[string]any{"spec": map[string]any{"infrastructureRef": map[string]any{
					"name": objects.TemplateName(objects.ControlPlaneTemplatePrefix(name), now),
				}}},
				"kubeadmConfigSpec": map[string]any{"clusterConfiguration": map[string]any{"etcd": etcd}},
			}
			s.emit(compEKSA, kcp, false, "ControlPlaneUpgradeStarted", "Upgrading the control plane %s from %s to %s", name, str(kcp, "spec", "version"), w.kubeadm)
		} else {
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
	for _, wg := range workerGroups(cl) {
		mdName := name + "-" + wg.name
		md := s.get(kinds.MachineDeployment, sys, mdName)
		if md == nil {
			continue
		}
		want := w
		if wg.kube != "" && wg.kube != kube {
			if ww, _, err := s.resolve(sys, eksaVersion, wg.kube); err == nil {
				want = ww
			}
		}
		if str(md, "spec", "template", "spec", "version") == want.kubeadm {
			continue
		}
		tmpl := objects.TemplateName(objects.WorkerTemplatePrefix(mdName), now)
		if _, err := s.patch(ctx, owner, compEKSA, kinds.MachineDeployment, sys, mdName, map[string]any{
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"version":           want.kubeadm,
				"infrastructureRef": map[string]any{"name": tmpl},
				"bootstrap":         map[string]any{"configRef": map[string]any{"name": mdName + "-template-" + unix(now)}},
			}}},
		}); err != nil {
			return 0, err
		}
		s.emit(compEKSA, md, false, "WorkersUpgradeStarted", "Upgrading worker node group %s to %s", wg.name, want.kubeadm)
		st.outdatedWorkers(mdName)
	}
	if err := st.write(ctx, owner, &w, "", ""); err != nil {
		return 0, err
	}
	if !st.allTrue() {
		return s.t.Requeue, nil
	}
	s.emitOnce(fmt.Sprintf("ready/%s/%d", k, gen), compEKSA, cl, false, "Ready",
		"Cluster %s is ready: Kubernetes %s, EKS-A %s (generation %d)", name, kube, eksaVersion, gen)
	return 0, nil
}

func (s *Simulator) selfManaged(cl *unstructured.Unstructured) bool {
	m := str(cl, "spec", "managementCluster", "name")
	return m == "" || m == cl.GetName()
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

type workerGroup struct{ name, kube string }

func workerGroups(cl *unstructured.Unstructured) []workerGroup {
	list, _, _ := unstructured.NestedSlice(cl.Object, "spec", "workerNodeGroupConfigurations")
	var out []workerGroup
	for _, w := range list {
		m, _ := w.(map[string]any)
		n, _ := m["name"].(string)
		k, _ := m["kubernetesVersion"].(string)
		out = append(out, workerGroup{n, k})
	}
	return out
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
