package sim_test

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
)

// The objects the simulated controllers write while they upgrade (the
// Cluster status of every phase, the EtcdadmCluster mid-rollout, the in-place
// requests, NodeUpgrades with a failed step) are accepted unchanged by the
// real upstream EKS-A and etcdadm CRDs (opt-in: make compat).
func TestSimulatedObjectsUpstreamCompatibility(t *testing.T) {
	roundTripSimulated(t, cptest.UpstreamEnv(t).Config)
}

// The project's own CRDs store them unchanged too: nothing the console
// reads is pruned.
func TestSimulatedObjectsStoredUnchanged(t *testing.T) {
	roundTripSimulated(t, env.Config)
}

func roundTripSimulated(t *testing.T, cfg *rest.Config) {
	var objs []*unstructured.Unstructured
	collect := func(w *world) {
		seen := map[string]bool{}
		for _, o := range w.snapshot() {
			if o.deleted || o.res == "machines" {
				continue
			}
			// One object per resource and distinct condition state.
			k := o.res + "/" + conditionState(o.obj)
			if seen[k] {
				continue
			}
			seen[k] = true
			u := o.obj.DeepCopy()
			for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "deletionTimestamp", "deletionGracePeriodSeconds"} {
				unstructured.RemoveNestedField(u.Object, "metadata", f)
			}
			u.SetName(fmt.Sprintf("%s-%d", u.GetName(), len(objs)))
			objs = append(objs, u)
		}
	}

	w := startWorldIn(t, cfg, scenario.Rolling, "uproll")
	w.waitFor("the seeded cluster", func() bool { return complete(w.cluster()) })
	w.applyTarget()
	w.waitFor("the upgrade to complete", func() bool { c := w.cluster(); return c.GetGeneration() == 2 && complete(c) })
	collect(w)

	w = startWorldIn(t, cfg, scenario.InPlaceNodeStepFails, "upinpl")
	w.waitFor("the seeded cluster", func() bool { return complete(w.cluster()) })
	w.applyTarget()
	w.waitFor("a failed kubeadm step", func() bool {
		for _, o := range w.snapshot() {
			if o.res == "nodeupgrades" {
				if c := cond(o.obj, "KubeadmUpgraded"); c != nil && c["severity"] == "Error" {
					return true
				}
			}
		}
		return false
	})
	collect(w)

	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
	}
	for _, k := range []string{"Cluster", "EtcdadmCluster", "KubeadmControlPlane", "MachineDeployment", "NodeUpgrade", "ControlPlaneUpgrade"} {
		if kinds[k] == 0 {
			t.Fatalf("no %s collected: %v", k, kinds)
		}
	}
	ns := cptest.Namespace(t, cfg)
	for _, o := range objs {
		o.SetNamespace(ns)
	}
	t.Logf("round-tripping %d objects: %v", len(objs), kinds)
	cptest.RoundTrip(t, cfg, objs)
}

// conditionState summarises an object's conditions and in-place steps.
func conditionState(u *unstructured.Unstructured) string {
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	s := ""
	for _, c := range list {
		m, _ := c.(map[string]any)
		s += fmt.Sprintf("%v=%v/%v;", m["type"], m["status"], m["reason"])
	}
	if u.GetAnnotations()[model.AnnotationEtcdUpgrading] != "" {
		s += "upgrading"
	}
	return s
}
