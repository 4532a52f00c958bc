package watchers

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/demo/objects"
	"github.com/upgrade-console/upgrade-console/demo/release"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
)

// When a KubeadmControlPlane's or a MachineDeployment's spec last changed
// (managedFields) survives their watch events: a lean watch dropped
// managedFields, every event after the initial list zeroed it, and the stall
// clock of a healthy rollout then ran from the machines' creation ("rollout
// waiting for 40d" at each phase start) or from RollingOut turning True
// (in-place groups "stalled" while their nodes upgraded one by one).
func TestSpecChangeTimesSurviveWatchEvents(t *testing.T) {
	cfg := env.Config
	ns := cptest.Namespace(t, cfg)
	dc := cptest.Dynamic(t, cfg)
	sc, err := scenario.For(scenario.Rolling, scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sc.ClusterName, sc.ClusterNamespace, sc.SystemNamespace = testCluster, ns, ns
	gvrKCP := schema.GroupVersionResource{Group: kcpGroup, Version: "v1beta2", Resource: "kubeadmcontrolplanes"}
	gvrMD := schema.GroupVersionResource{Group: capiGroup, Version: "v1beta2", Resource: "machinedeployments"}
	k, _ := release.Current.Kube("1.30")
	kcp := create(t, dc, gvrKCP, objects.KCP(sc, nil, "cp-template", "v1.30.5", k))
	md := create(t, dc, gvrMD, objects.MachineDeployment(sc, sc.Workers[0], "v1.30.5", "md-template"))

	w := run(t, cfg, ns)
	waitState(t, w, "the KCP and the MachineDeployment", func(s *model.ClusterState) bool {
		return s.ControlPlane != nil && len(s.MachineDeployments) == 1
	})
	// A status write: a watch event, and no spec change.
	kcp.Object["status"] = map[string]any{"replicas": int64(3)}
	updateStatus(t, dc, gvrKCP, kcp)
	md.Object["status"] = map[string]any{"replicas": int64(2)}
	updateStatus(t, dc, gvrMD, md)
	s := waitState(t, w, "the status writes", func(s *model.ClusterState) bool {
		return s.ControlPlane != nil && s.ControlPlane.Replicas.Current != nil && *s.ControlPlane.Replicas.Current == 3 &&
			len(s.MachineDeployments) == 1 && s.MachineDeployments[0].Replicas.Current != nil
	})
	if s.ControlPlane.ChangedAt.IsZero() || s.MachineDeployments[0].SpecChangedAt.IsZero() {
		t.Errorf("after a watch event: KCP ChangedAt %v, MachineDeployment SpecChangedAt %v; want the spec's write time",
			s.ControlPlane.ChangedAt, s.MachineDeployments[0].SpecChangedAt)
	}
}
