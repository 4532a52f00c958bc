package watchers

import (
	"testing"

	"github.com/upgrade-console/upgrade-console/model"
)

// Another cluster's NodeUpgrade (its machine is not one of this cluster's)
// is never kept: before the Machines are synced no NodeUpgrade is (it
// cannot be told whose it is: to an identity that may not list Machines, a
// workload cluster's failed step failed this upgrade, and at start the
// plain watch said it FAILED, then "deleted"), and once they are, this
// cluster's alone, even when the snapshot before the sync saw the same
// NodeUpgrades and machines (the filter was computed again only when either
// list changed).
func TestOtherClustersNodeUpgradeDroppedOnceMachinesSync(t *testing.T) {
	w, insts := benchWatcher(t)
	w.mu.Lock()
	insts[model.KindMachine].status.Synced = false
	w.mu.Unlock()
	ingest(t, insts[model.KindMachine], benchMachine(0, "Running"))
	ours := benchNodeUpgrade(0)
	other := benchNodeUpgrade(1)
	other.Object["metadata"].(map[string]any)["name"] = "w1-md-0-abc-node-upgrader"
	other.Object["spec"].(map[string]any)["machine"] = map[string]any{"name": "w1-md-0-abc", "namespace": "eksa-system"}
	ingest(t, insts[model.KindNodeUpgrade], ours)
	ingest(t, insts[model.KindNodeUpgrade], other)

	w.mu.Lock()
	before := w.snapshotLocked()
	insts[model.KindMachine].status.Synced = true
	after := w.snapshotLocked()
	w.mu.Unlock()
	if got := before.NodeUpgrades.Len(); got != 0 {
		t.Fatalf("before the Machines synced: %d NodeUpgrades, want none (whose they are is not known yet)", got)
	}
	if got := after.NodeUpgrades.Len(); got != 1 || after.NodeUpgrades.At(0).MachineName != "mgmt-md-0-000000" {
		var names []string
		for _, nu := range after.NodeUpgrades.All() {
			names = append(names, nu.Name)
		}
		t.Errorf("once the Machines synced: NodeUpgrades %v, want this cluster's alone", names)
	}
}

// Events of a workload cluster whose name begins with this cluster's
// (mgmt-w1, managed by mgmt, its CAPI objects in the same namespace) are
// not this cluster's: a drain failure of mgmt-w1's machine read as mgmt's.
func TestEventsOfAClusterWithTheSamePrefixAreDropped(t *testing.T) {
	mds := []model.MachineDeployment{{Meta: model.Meta{Namespace: "eksa-system", Name: "mgmt-md-0"}}}
	for _, c := range []struct {
		kind, name string
		want       bool
	}{
		{"Cluster", "mgmt", true},
		{"Cluster", "mgmt-w1", false},
		{"KubeadmControlPlane", "mgmt", true},
		{"KubeadmControlPlane", "mgmt-w1", false},
		{"EtcdadmCluster", "mgmt-etcd", true},
		{"EtcdadmCluster", "mgmt-w1-etcd", false},
		{"Machine", "mgmt-x2k4q", true},      // the control plane's
		{"Machine", "mgmt-etcd-4f5pw", true}, // etcd's
		{"Machine", "mgmt-md-0-7d9f8c-x2k4q", true},
		{"Machine", "mgmt-w1-x2k4q", false},
		{"Machine", "mgmt-w1-etcd-4f5pw", false},
		{"Machine", "mgmt-w1-md-0-abcde-x2k4q", false},
		{"MachineSet", "mgmt-md-0-7d9f8c", true},
		{"MachineSet", "mgmt-w1-md-0-7d9f8c", false},
		{"MachineDeployment", "mgmt-md-0", true},
		{"MachineDeployment", "mgmt-md-00", false},
		{"MachineDeployment", "mgmt-w1-md-0", false},
		{"NodeUpgrade", "mgmt-x2k4q-node-upgrader", true},
		{"NodeUpgrade", "mgmt-md-0-7d9f8c-x2k4q-node-upgrader", true},
		{"NodeUpgrade", "mgmt-w1-x2k4q-node-upgrader", false},
		{"Pod", "mgmt-x2k4q-node-upgrader", true}, // a control-plane node's upgrader
		{"Pod", "mgmt-md-0-7d9f8c-x2k4q-node-upgrader", true},
		{"Pod", "mgmt-w1-x2k4q-node-upgrader", false},
		{"ControlPlaneUpgrade", "mgmt-cp-upgrade", true},
		{"ControlPlaneUpgrade", "mgmt-w1-cp-upgrade", false},
		{"MachineDeploymentUpgrade", "mgmt-md-0-md-upgrade", true},
		{"MachineDeploymentUpgrade", "mgmt-w1-md-0-md-upgrade", false},
		{"Node", "w1-node-7", true}, // a node of this API server is this cluster's
	} {
		e := &model.Event{ObjectKind: c.kind, ObjectName: c.name}
		if got := eventOfCluster(e, "mgmt", mds, true, nil); got != c.want {
			t.Errorf("%s %s: kept %v, want %v", c.kind, c.name, got, c.want)
		}
	}
	// A Machine listed by the cluster's label is the cluster's, however
	// it is named.
	listed := func(ns, name string) bool { return ns == "eksa-system" && name == "mgmt-cp-custom-1" }
	if !eventOfCluster(&model.Event{Namespace: "eksa-system", ObjectKind: "Machine", ObjectName: "mgmt-cp-custom-1"}, "mgmt", mds, true, listed) {
		t.Error("a listed machine's event dropped")
	}
	// Before the MachineDeployments are synced, the cluster's prefix keeps
	// one: a worker group's events are not lost meanwhile.
	if !eventOfCluster(&model.Event{ObjectKind: "Machine", ObjectName: "mgmt-md-0-7d9f8c-x2k4q"}, "mgmt", nil, false, nil) {
		t.Error("a worker machine's event dropped before the MachineDeployments synced")
	}
}
