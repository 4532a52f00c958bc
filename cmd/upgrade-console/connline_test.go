package main

import (
	"strings"
	"testing"
	"time"

	"github.com/upgrade-console/upgrade-console/model"
)

// apply --wait says a lost connection with its cause, as watch --plain
// does: it printed a bare "connection: reconnecting".
func TestApplyWaitSaysWhyTheConnectionWasLost(t *testing.T) {
	for _, c := range []struct {
		st   model.ClusterState
		want string
	}{
		{model.ClusterState{Connection: model.Reconnecting, ConnectionErr: "10.0.0.5:6443: net/http: TLS handshake timeout"},
			"connection: reconnecting: 10.0.0.5:6443: net/http: TLS handshake timeout"},
		{model.ClusterState{Connection: model.Live}, "connection: live"},
		{model.ClusterState{Connection: model.Reconnecting}, "connection: reconnecting"},
	} {
		if got := connectionLine(&c.st); got != c.want {
			t.Errorf("%s: %q, want %q", c.st.Connection, got, c.want)
		}
	}
}

// apply --wait names what the workers' count counts: to an identity that
// may not list Nodes it is Machines, ready by their own Ready condition.
func TestApplyWaitWorkersCountNamesItsUnit(t *testing.T) {
	state := func(nodesForbidden bool) *model.ClusterState {
		s := &model.ClusterState{ClusterName: "mgmt", Namespace: "default", Connection: model.Live, Sources: map[model.Kind]model.SourceStatus{}}
		for _, k := range []model.Kind{model.KindEKSACluster, model.KindKubeadmControlPlane, model.KindMachineDeployment, model.KindMachine, model.KindNode} {
			s.Sources[k] = model.SourceStatus{Installed: true, Synced: true}
		}
		s.Cluster = &model.EKSACluster{Meta: model.Meta{Name: "mgmt", Namespace: "default", Generation: 2}, ObservedGeneration: 2,
			KubernetesVersion: "1.31", Conditions: model.Conditions{{Type: model.ConditionControlPlaneReady, Status: "True"},
				{Type: model.ConditionWorkersReady, Status: "False", Reason: "RollingUpgradeInProgress"}}}
		n := int32(2)
		const k131 = "v1.31.3-eks-1-31-11"
		s.ControlPlane = &model.ControlPlane{Meta: model.Meta{Name: "mgmt"}, Version: k131} // its machines are not what is tested
		s.MachineDeployments = []model.MachineDeployment{{Meta: model.Meta{Name: "mgmt-md-0"}, Version: k131,
			Replicas: model.ReplicaCounts{Desired: &n}}}
		var ms []*model.Machine
		var ns []*model.Node
		for i, v := range []string{k131, "v1.30.14-eks-1-30-40"} {
			name := []string{"mgmt-md-0-a", "mgmt-md-0-b"}[i]
			ms = append(ms, &model.Machine{Meta: model.Meta{Name: name}, Role: model.RoleWorker, Owner: "mgmt-md-0", Owned: true,
				Phase: model.MachinePhaseRunning, Version: v, NodeName: name,
				Conditions: model.Conditions{{Type: model.ConditionReady, Status: "True"}}})
			ns = append(ns, &model.Node{Meta: model.Meta{Name: name}, Ready: true, KubeletVersion: v})
		}
		s.Machines, s.Nodes = model.ListOf(ms...), model.ListOf(ns...)
		if nodesForbidden {
			s.Sources[model.KindNode] = model.SourceStatus{Installed: true, Forbidden: "list nodes (cluster-wide)"}
			s.Nodes = model.List[model.Node]{}
		}
		return s
	}
	for _, c := range []struct {
		forbidden bool
		want      string
	}{
		{false, "workers: 1/2 nodes upgraded and ready, 2 ready in all"},
		{true, "workers: 1/2 machines upgraded and ready, 2 ready in all"},
	} {
		var out strings.Builder
		f := &followPrinter{out: &out}
		f.onProgress(model.DeriveProgress(state(c.forbidden), model.ProgressOptions{}, time.Now()))
		if !strings.Contains(out.String(), c.want) {
			t.Errorf("nodes forbidden %v: printed %q, want %q in it", c.forbidden, out.String(), c.want)
		}
	}
}

// apply --wait's lines say the time alone (UTC, as its header says, with
// the day it began): a line printed on a new day says the date first, once.
func TestApplyWaitSaysANewDay(t *testing.T) {
	var out strings.Builder
	f := &followPrinter{out: &out, day: "2000-01-01"}
	f.onProgress(model.Progress{Summary: "etcd: upgrading"})
	f.onProgress(model.Progress{Summary: "etcd: still upgrading"})
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	today := time.Now().UTC().Format(time.DateOnly)
	if len(lines) != 3 || strings.TrimSpace(lines[0]) != today && strings.TrimSpace(lines[0]) != time.Now().UTC().Add(-time.Minute).Format(time.DateOnly) {
		t.Fatalf("printed %q, want the new day's date, then two lines", out.String())
	}
	if !strings.HasSuffix(lines[1], "etcd: upgrading") || !strings.HasSuffix(lines[2], "etcd: still upgrading") {
		t.Errorf("printed %q", out.String())
	}
}
