package sim_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/demo/kinds"
	"github.com/upgrade-console/upgrade-console/demo/objects"
	"github.com/upgrade-console/upgrade-console/demo/release"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/demo/seed"
	"github.com/upgrade-console/upgrade-console/model"
)

func target() release.Kube {
	k, _ := release.Target.Kube(seed.TargetKube)
	return k
}

func TestRollingUpgrade(t *testing.T) {
	w := startWorld(t, scenario.Rolling, "roll")
	w.waitFor("the seeded cluster to be complete", func() bool { return complete(w.cluster()) })
	w.applyTarget()
	w.waitFor("the upgrade to complete", func() bool {
		cl := w.cluster()
		return cl.GetGeneration() == 2 && complete(cl) &&
			len(w.machines(model.LabelEtcdCluster)) == 3 && len(w.machines(model.LabelDeploymentName)) == 4
	})
	h := w.snapshot()
	want := target().KubeadmVersion()

	t.Run("final state", func(t *testing.T) {
		cl := w.cluster()
		if got := cl.GetAnnotations()[model.AnnotationManagementComponentsVersion]; got != release.Target.Version {
			t.Errorf("management-components-version %q, want %q", got, release.Target.Version)
		}
		for _, m := range w.machines(model.LabelControlPlaneName + "," + model.LabelClusterName + "=" + w.sc.ClusterName) {
			if v := str(&m, "spec", "version"); v != want {
				t.Errorf("CP machine %s at %s, want %s", m.GetName(), v, want)
			}
		}
		ws := w.machines(model.LabelDeploymentName)
		for _, m := range ws {
			if v := str(&m, "spec", "version"); v != want {
				t.Errorf("worker %s at %s", m.GetName(), v)
			}
			node, err := w.kube.CoreV1().Nodes().Get(w.ctx, str(&m, "status", "nodeRef", "name"), metaGet)
			if err != nil {
				t.Fatal(err)
			}
			if node.Status.NodeInfo.KubeletVersion != target().KubeletVersion() {
				t.Errorf("node %s kubelet %s, want %s", node.Name, node.Status.NodeInfo.KubeletVersion, target().KubeletVersion())
			}
		}
		ec := w.get(kindsEtcd, w.sc.ClusterName+"-etcd")
		if ec.GetAnnotations()[model.AnnotationEtcdUpgrading] != "" || ec.GetAnnotations()[model.AnnotationEtcdUpgradeComplete] != "" {
			t.Errorf("etcd annotations left behind: %v", ec.GetAnnotations())
		}
		if str(ec, "spec", "etcdadmConfigSpec", "cloudInitConfig", "version") != target().EtcdVersion {
			t.Errorf("etcd version %s", str(ec, "spec", "etcdadmConfigSpec", "cloudInitConfig", "version"))
		}
		for _, m := range w.machines(model.LabelEtcdCluster) {
			if objects.AnnotationSimTemplate == "" || m.GetAnnotations()[objects.AnnotationSimTemplate] != str(ec, "spec", "infrastructureTemplate", "name") {
				t.Errorf("etcd machine %s from template %s", m.GetName(), m.GetAnnotations()[objects.AnnotationSimTemplate])
			}
		}
		kcp := w.get(kindsKCP, w.sc.ClusterName)
		if kcp.GetAnnotations()[model.AnnotationCAPIPaused] != "" {
			t.Error("KCP still paused")
		}
		capi := w.get(kinds.CAPICluster, w.sc.ClusterName)
		for part, n := range map[string]int64{"controlPlane": 3, "workers": 4} {
			vs, _, _ := unstructured.NestedSlice(capi.Object, "status", part, "versions")
			if len(vs) != 1 || vs[0].(map[string]any)["version"] != want || i64(capi, "status", part, "upToDateReplicas") != n {
				t.Errorf("CAPI Cluster status.%s = %v", part, nested(capi, "status", part))
			}
		}
	})

	t.Run("observedGeneration only after the generation was seen", func(t *testing.T) {
		staleSeen := false
		firstObserved := -1
		for _, o := range h {
			if o.res != "clusters" || o.obj.GetGeneration() != 2 {
				continue
			}
			og := i64(o.obj, "status", "observedGeneration")
			if og > o.obj.GetGeneration() {
				t.Fatalf("observedGeneration %d ahead of generation %d", og, o.obj.GetGeneration())
			}
			if og == 1 {
				staleSeen = true
				if firstObserved >= 0 {
					t.Errorf("observedGeneration went back to 1 at #%d", o.seq)
				}
			}
			if og == 2 && firstObserved < 0 {
				firstObserved = o.seq
				// The first status for generation 2 describes generation 2:
				// the etcd upgrade has begun, the cluster is not Ready.
				if isTrue(o.obj, "Ready") || isTrue(o.obj, "ControlPlaneReady") {
					t.Errorf("first status of generation 2 claims readiness: %v", o.obj.Object["status"])
				}
			}
		}
		if !staleSeen {
			t.Error("never saw generation 2 with observedGeneration 1 (management components phase)")
		}
		if firstObserved < 0 {
			t.Error("generation 2 never observed")
		}
	})

	t.Run("one etcd member at a time, control plane paused meanwhile", func(t *testing.T) {
		etcdTemplate := map[string]string{}
		labels := map[string]map[string]string{}
		owned := map[string]bool{}
		gone := map[string]bool{}
		var kcp *unstructured.Unstructured
		oldTemplate := ""
		lastEtcdReady, firstNewCP := -1, -1
		for _, o := range h {
			switch o.res {
			case "kubeadmcontrolplanes":
				kcp = o.obj
			case "machines":
				name := o.obj.GetName()
				if o.obj.GetLabels()[model.LabelEtcdCluster] == "" {
					if o.obj.GetLabels()[model.LabelControlPlaneName] != "" && str(o.obj, "spec", "version") == want && firstNewCP < 0 {
						firstNewCP = o.seq
					}
					continue
				}
				if o.deleted {
					gone[name] = true
					continue
				}
				etcdTemplate[name] = o.obj.GetAnnotations()[objects.AnnotationSimTemplate]
				if oldTemplate == "" {
					oldTemplate = etcdTemplate[name]
				}
				labels[name] = o.obj.GetLabels()
				owned[name] = len(o.obj.GetOwnerReferences()) > 0
				if etcdTemplate[name] != oldTemplate && labels[name][model.LabelEtcdReady] == "true" {
					lastEtcdReady = o.seq
				}
			default:
				continue
			}
			var ownedN, newNotReady int
			for n := range etcdTemplate {
				if gone[n] {
					continue
				}
				if owned[n] {
					ownedN++
				}
				if etcdTemplate[n] != oldTemplate && labels[n][model.LabelEtcdReady] != "true" {
					newNotReady++
				}
			}
			if ownedN > 4 {
				t.Fatalf("#%d: %d owned etcd machines, more than replicas+1", o.seq, ownedN)
			}
			if newNotReady > 1 {
				for _, x := range h[:o.seq+1] {
					if x.res == "machines" && x.obj.GetLabels()[model.LabelEtcdCluster] != "" {
						t.Logf("#%d %s rv=%s deleted=%v owners=%d tmpl=%s labels=%v phase=%s", x.seq, x.obj.GetName(), x.obj.GetResourceVersion(), x.deleted, len(x.obj.GetOwnerReferences()), x.obj.GetAnnotations()[objects.AnnotationSimTemplate], x.obj.GetLabels(), str(x.obj, "status", "phase"))
					}
				}
				t.Fatalf("#%d: %d new etcd members not ready at once", o.seq, newNotReady)
			}
			if newNotReady > 0 && (kcp == nil || kcp.GetAnnotations()[model.AnnotationCAPIPaused] != "true") {
				t.Fatalf("#%d: a new etcd member is joining while the KCP is not paused", o.seq)
			}
		}
		if lastEtcdReady < 0 || firstNewCP < 0 || firstNewCP < lastEtcdReady {
			t.Errorf("control plane rollout (first new machine #%d) must follow the etcd rollout (last member ready #%d)", firstNewCP, lastEtcdReady)
		}
	})

	t.Run("conditions become True in the documented order", func(t *testing.T) {
		order := []string{"ControlPlaneReady", "DefaultCNIConfigured", "WorkersReady", "Ready"}
		wentFalse := map[string]bool{}
		becameTrue := map[string]int{}
		prev := map[string]bool{}
		for _, o := range h {
			if o.res != "clusters" || o.obj.GetGeneration() != 2 || i64(o.obj, "status", "observedGeneration") != 2 {
				continue
			}
			for _, c := range order {
				now := isTrue(o.obj, c)
				if !now {
					wentFalse[c] = true
				}
				if now && !prev[c] && wentFalse[c] {
					becameTrue[c] = o.seq
				}
				prev[c] = now
			}
		}
		for i, c := range order {
			if !wentFalse[c] {
				t.Errorf("%s never went False during the upgrade", c)
			}
			if _, ok := becameTrue[c]; !ok {
				t.Errorf("%s never became True", c)
				continue
			}
			if i > 0 {
				p := order[i-1]
				strict := c != "Ready" // Ready is summarised in the same write as WorkersReady
				if becameTrue[c] < becameTrue[p] || (strict && becameTrue[c] == becameTrue[p]) {
					t.Errorf("%s became True at #%d, before %s at #%d", c, becameTrue[c], p, becameTrue[p])
				}
			}
		}
	})

	t.Run("documented reasons and messages", func(t *testing.T) {
		seen := map[string]bool{}
		for _, o := range h {
			if o.res != "clusters" {
				continue
			}
			for _, typ := range []string{"ControlPlaneReady", "WorkersReady"} {
				if c := cond(o.obj, typ); c != nil && c["status"] == "False" {
					seen[typ+"/"+c["reason"].(string)+"/"+msgShape(c["message"])] = true
				}
			}
		}
		for _, want := range []string{
			"ControlPlaneReady/RollingUpgradeInProgress/Etcd is not ready",
			"ControlPlaneReady/RollingUpgradeInProgress/Control plane nodes not up-to-date yet, N upgrading (N up to date)",
			"WorkersReady/RollingUpgradeInProgress/Worker nodes not up-to-date yet, N upgrading (N up to date)",
		} {
			if !seen[want] {
				t.Errorf("never saw %s; saw %v", want, keys(seen))
			}
		}
	})
}

// msgShape replaces digits with N.
func msgShape(m any) string {
	s, _ := m.(string)
	var b strings.Builder
	digit := false
	for _, r := range s {
		if r >= '0' && r <= '9' {
			if !digit {
				b.WriteByte('N')
			}
			digit = true
			continue
		}
		digit = false
		b.WriteRune(r)
	}
	return b.String()
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
