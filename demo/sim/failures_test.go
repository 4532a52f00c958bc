package sim_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upgrade-console/upgrade-console/demo/kinds"
	"github.com/upgrade-console/upgrade-console/demo/objects"
	"github.com/upgrade-console/upgrade-console/demo/release"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/demo/seed"
	"github.com/upgrade-console/upgrade-console/model"
)

func TestEtcdFirstMemberFailsThenRecovers(t *testing.T) {
	w := startWorld(t, scenario.EtcdFirstMemberFails, "etcdfail")
	w.waitFor("the seeded cluster to be complete", func() bool { return complete(w.cluster()) })
	oldKCP := str(w.get(kinds.KCP, w.sc.ClusterName), "spec", "version")
	w.applyTarget()
	ecName := w.sc.ClusterName + "-etcd"
	var stuck string
	newMembers := func() []string {
		ec := w.get(kinds.EtcdadmCluster, ecName)
		var out []string
		for _, m := range w.machines(model.LabelEtcdCluster + "=" + ecName) {
			if m.GetAnnotations()[objects.AnnotationSimTemplate] == str(ec, "spec", "infrastructureTemplate", "name") {
				out = append(out, m.GetName())
			}
		}
		return out
	}
	w.waitFor("the first new etcd machine to be stuck in Provisioning", func() bool {
		ms := newMembers()
		if len(ms) != 1 {
			return false
		}
		m := w.get(kinds.Machine, ms[0])
		c := cond(m, "InfrastructureReady")
		if str(m, "status", "phase") == objects.PhaseProvisioning && c != nil && strings.Contains(c["message"].(string), "IP address") {
			stuck = ms[0]
			return true
		}
		return false
	})

	// It fails exactly there: the member never becomes ready, no second
	// one is created, the control plane stays paused at its old version.
	w.holds("the stuck etcd rollout", 2*time.Second, func() bool {
		ms := newMembers()
		m := w.get(kinds.Machine, stuck)
		kcp := w.get(kinds.KCP, w.sc.ClusterName)
		ec := w.get(kinds.EtcdadmCluster, ecName)
		cl := w.cluster()
		cp := cond(cl, "ControlPlaneReady")
		ready, _, _ := unstructuredBool(ec, "status", "ready")
		return len(ms) == 1 && ms[0] == stuck &&
			str(m, "status", "phase") == objects.PhaseProvisioning && m.GetLabels()[model.LabelEtcdReady] == "" &&
			kcp.GetAnnotations()[model.AnnotationCAPIPaused] == "true" && str(kcp, "spec", "version") == oldKCP &&
			!ready && ec.GetAnnotations()[model.AnnotationEtcdUpgrading] == "true" &&
			cp["reason"] == "RollingUpgradeInProgress" && cp["message"] == "Etcd is not ready" &&
			i64(cl, "status", "observedGeneration") == 2
	})
	ec := w.get(kinds.EtcdadmCluster, ecName)
	if c := cond(ec, "EtcdMachinesSpecUpToDate"); c["reason"] != "EtcdRollingUpdateInProgress" || c["message"] != "Rolling 3 replicas with outdated spec (1 replicas up to date)" {
		t.Errorf("EtcdMachinesSpecUpToDate = %v", c)
	}

	// Recovery: delete the stuck machine; etcdadm replaces it and the
	// upgrade goes through.
	if err := w.dyn.Resource(kinds.Machine).Namespace(w.sc.SystemNamespace).Delete(w.ctx, stuck, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.waitFor("the upgrade to complete after the stuck member was deleted", func() bool {
		cl := w.cluster()
		return cl.GetGeneration() == 2 && complete(cl) && len(w.machines(model.LabelEtcdCluster+"="+ecName)) == 3
	})
}

func TestStaleLockPausedClusterIsNotReconciled(t *testing.T) {
	w := startWorld(t, scenario.StaleLock, "stale")
	w.waitFor("the seeded world", func() bool { return w.cluster() != nil })
	lease, err := w.kube.CoordinationV1().Leases(w.sc.SystemNamespace).Get(w.ctx, "upgrade-console-"+w.sc.ClusterName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("stale lock lease: %v", err)
	}
	if time.Since(lease.Spec.RenewTime.Time) < time.Hour || *lease.Spec.LeaseDurationSeconds > 300 {
		t.Errorf("lease renewed %s ago with duration %ds is not an expired lock", time.Since(lease.Spec.RenewTime.Time), *lease.Spec.LeaseDurationSeconds)
	}
	if w.cluster().GetAnnotations()[model.AnnotationEKSAPaused] != "true" {
		t.Fatal("cluster lacks the leftover paused annotation")
	}
	oldKCP := str(w.get(kinds.KCP, w.sc.ClusterName), "spec", "version")
	w.applyTarget()
	w.holds("the paused cluster", 2*time.Second, func() bool {
		cl := w.cluster()
		kcp := w.get(kinds.KCP, w.sc.ClusterName)
		ec := w.get(kinds.EtcdadmCluster, w.sc.ClusterName+"-etcd")
		return cl.GetGeneration() == 2 && i64(cl, "status", "observedGeneration") == 1 &&
			str(kcp, "spec", "version") == oldKCP && ec.GetAnnotations()[model.AnnotationEtcdUpgrading] == ""
	})
	w.mu.Lock()
	paused := false
	for _, a := range w.actions {
		paused = paused || a.Reason == "ReconcilePaused"
	}
	w.mu.Unlock()
	if !paused {
		t.Error("no ReconcilePaused event for the skipped generation")
	}

	// Removing the leftover annotation lets EKS-A reconcile again.
	patch := []byte(`{"metadata":{"annotations":{"` + model.AnnotationEKSAPaused + `":null}}}`)
	if _, err := w.dyn.Resource(kinds.EKSACluster).Namespace(w.sc.ClusterNamespace).Patch(w.ctx, w.sc.ClusterName, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	w.waitFor("the upgrade to complete once unpaused", func() bool {
		cl := w.cluster()
		return cl.GetGeneration() == 2 && complete(cl)
	})
}

func TestLargeFleetUpgradeCompletes(t *testing.T) {
	w := startWorld(t, scenario.Large, "large")
	w.waitFor("the seeded cluster to be complete", func() bool { return complete(w.cluster()) })
	if n := len(w.machines(model.LabelDeploymentName)); n != 24 {
		t.Fatalf("%d workers, want 24", n)
	}
	w.applyTarget()
	want := target().KubeadmVersion()
	w.waitFor("the fleet to be upgraded", func() bool {
		cl := w.cluster()
		if cl.GetGeneration() != 2 || !complete(cl) {
			return false
		}
		ws := w.machines(model.LabelDeploymentName)
		for _, m := range ws {
			if str(&m, "spec", "version") != want {
				return false
			}
		}
		return len(ws) == 24
	})
}

// A spec the release cannot serve is reported as EKS-A reports it (status
// failureReason/failureMessage for the observed generation) and cleared by
// the next valid spec.
func TestUnsupportedVersionReportsFailure(t *testing.T) {
	w := startWorld(t, scenario.Rolling, "badver")
	w.waitFor("the seeded cluster to be complete", func() bool { return complete(w.cluster()) })
	spec := seed.ClusterSpec(w.sc, release.Target.Version, "1.32")
	if _, err := w.dyn.Resource(kinds.EKSACluster).Namespace(w.sc.ClusterNamespace).Apply(w.ctx, spec.GetName(), spec,
		metav1.ApplyOptions{FieldManager: "test", Force: true}); err != nil {
		t.Fatal(err)
	}
	w.waitFor("the failure to be reported", func() bool {
		cl := w.cluster()
		return i64(cl, "status", "observedGeneration") == cl.GetGeneration() && str(cl, "status", "failureReason") != ""
	})
	cl := w.cluster()
	if r, m := str(cl, "status", "failureReason"), str(cl, "status", "failureMessage"); r != "BundleNotFoundForCluster" || !strings.Contains(m, "1.32") {
		t.Errorf("failure %s: %s", r, m)
	}
	if kcp := w.get(kinds.KCP, w.sc.ClusterName); str(kcp, "spec", "version") == target().KubeadmVersion() {
		t.Error("the control plane was upgraded for an unsupported version")
	}
	w.applyTarget()
	w.waitFor("the valid spec to clear the failure and complete", func() bool {
		cl := w.cluster()
		return complete(cl) && str(cl, "status", "failureMessage") == "" && str(cl, "status", "failureReason") == ""
	})
}
