package watchers

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/upgrade-console/upgrade-console/model"
)

// The counts the phases rest on, each from the field that holds it.
func TestTranslateTheCountsThePhasesRestOn(t *testing.T) {
	// etcdadm's status.replicas holds the ready members (ReadyReplicas in
	// its Go type), not a total.
	e := translateEtcdadmCluster(map[string]any{
		"metadata": map[string]any{"name": "mgmt-etcd"},
		"spec":     map[string]any{"replicas": int64(3)},
		"status":   map[string]any{"replicas": int64(2), "ready": false},
	}, "v1beta1").(*model.EtcdCluster)
	if e.Replicas != 3 || e.ReadyReplicas != 2 {
		t.Errorf("etcd = %d ready of %d, want 2 of 3", e.ReadyReplicas, e.Replicas)
	}

	// A MachineDeployment written by a CAPI before v1.9 (no status.v1beta2):
	// its up-to-date count is updatedReplicas.
	md := translateMachineDeployment(map[string]any{
		"metadata": map[string]any{"name": "mgmt-md-0"},
		"spec":     map[string]any{"replicas": int64(3)},
		"status":   map[string]any{"replicas": int64(4), "updatedReplicas": int64(1), "readyReplicas": int64(3)},
	}, "v1beta1").(*model.MachineDeployment)
	if md.Replicas.UpToDate == nil || *md.Replicas.UpToDate != 1 || md.Replicas.Ready == nil || *md.Replicas.Ready != 3 {
		t.Errorf("md replicas = %s, want 1 up to date, 3 ready", fmtReplicas(md.Replicas))
	}

	// The Cluster's own counts stand in while the machines are not seen.
	c := EKSACluster(map[string]any{
		"metadata": map[string]any{"name": "mgmt"},
		"spec": map[string]any{
			"controlPlaneConfiguration":     map[string]any{"count": int64(3)},
			"workerNodeGroupConfigurations": []any{map[string]any{"name": "md-0", "count": int64(4)}},
		},
	})
	if c.ControlPlaneCount != 3 || len(c.WorkerGroups) != 1 || c.WorkerGroups[0].Count != 4 {
		t.Errorf("cluster counts = cp %d, groups %+v; want 3 and md-0 of 4", c.ControlPlaneCount, c.WorkerGroups)
	}
}

func fmtReplicas(r model.ReplicaCounts) string {
	n := func(p *int32) any {
		if p == nil {
			return "nil"
		}
		return *p
	}
	return fmt.Sprint(n(r.Desired), " desired ", n(r.UpToDate), " up to date ", n(r.Ready), " ready")
}

// A node whose kubelet stopped reporting (Ready Unknown) is not ready.
func TestTranslateNodeReadyOnlyWhenTrue(t *testing.T) {
	n := benchNode(1)
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			n.Status.Conditions[i].Status = corev1.ConditionUnknown
		}
	}
	if got := translateNode(n, ""); got.Ready {
		t.Error("a node with Ready Unknown translated as ready")
	}
}

// An etcd member the EtcdadmCluster let go is disowned, whatever other owner
// it has (CAPI gives an ownerless Machine its Cluster as owner): counted as a
// member, it was one member too many in the etcd phase.
func TestTranslateEtcdMachineOwnedOnlyByItsEtcdadmCluster(t *testing.T) {
	m := translateMachine(map[string]any{
		"metadata": map[string]any{"name": "mgmt-etcd-a",
			"labels":          map[string]any{model.LabelEtcdCluster: "mgmt-etcd", model.LabelEtcdReady: "true"},
			"ownerReferences": []any{map[string]any{"kind": "Cluster", "name": "mgmt"}}},
	}, "v1beta2").(*model.Machine)
	if m.Owned {
		t.Errorf("an etcd machine owned by the CAPI Cluster only reads as owned by its EtcdadmCluster: %+v", m)
	}
}
