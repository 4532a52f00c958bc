package sim_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/demo/kinds"
	"github.com/upgrade-console/upgrade-console/demo/objects"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
)

// A worker group's count changed (the second most common change after a
// version: scale a group out, later back in) is reconciled as EKS-A does:
// the MachineDeployment's replicas follow the count, CAPI creates or deletes
// machines, and the Cluster is complete again. The simulated EKS-A reported
// "Scaling up worker nodes, 5 expected (4 actual)" and never scaled, so the
// demo's cluster stayed not Ready for good and `apply --wait` timed out.
func TestWorkerCountChangeScalesItsGroup(t *testing.T) {
	w := startWorld(t, scenario.Rolling, "scale")
	w.waitFor("the seeded cluster to be complete", func() bool { return complete(w.cluster()) })
	w.settle()
	group := w.sc.Workers[0]
	mdName := w.sc.ClusterName + "-" + group.Name
	others := w.sc.Workers[1]
	otherMD := w.sc.ClusterName + "-" + others.Name
	before := names(w.machines(model.LabelDeploymentName + "=" + otherMD))

	setCount := func(n int) {
		w.applyCurrentSpecWith(func(doc *unstructured.Unstructured) {
			if doc.GetKind() != "Cluster" {
				return
			}
			groups, _, _ := unstructured.NestedSlice(doc.Object, "spec", "workerNodeGroupConfigurations")
			for _, g := range groups {
				if m := g.(map[string]any); m["name"] == group.Name {
					m["count"] = int64(n)
				}
			}
			_ = unstructured.SetNestedSlice(doc.Object, groups, "spec", "workerNodeGroupConfigurations")
		})
	}
	running := func(n int) func() bool {
		return func() bool {
			if !complete(w.cluster()) {
				return false
			}
			ms := w.machines(model.LabelDeploymentName + "=" + mdName)
			for _, m := range ms {
				if str(&m, "status", "phase") != objects.PhaseRunning {
					return false
				}
			}
			md := w.get(kinds.MachineDeployment, mdName)
			return len(ms) == n && i64(md, "spec", "replicas") == int64(n)
		}
	}

	setCount(group.Count + 1)
	w.waitFor("the group to scale out and the Cluster to be complete", running(group.Count+1))
	setCount(group.Count)
	w.waitFor("the group to scale back in and the Cluster to be complete", running(group.Count))
	if after := names(w.machines(model.LabelDeploymentName + "=" + otherMD)); len(after) != len(before) {
		t.Errorf("group %s changed machines %v → %v: its count did not change", others.Name, before, after)
	}
}
