package scenario

import (
	"strings"
	"testing"
)

func TestFor(t *testing.T) {
	c, err := For("", Options{})
	if err != nil || c.Name != Rolling || c.ClusterName != "mgmt" || c.SystemNamespace != "eksa-system" || c.ClusterNamespace != "default" {
		t.Fatalf("default scenario %+v %v", c, err)
	}
	if !c.ExternalEtcd() || c.EtcdCount != 3 || c.ControlPlaneCount != 3 || len(c.Workers) != 2 {
		t.Errorf("rolling world %+v", c)
	}
	if _, err := For("nope", Options{}); err == nil || !strings.Contains(err.Error(), "rolling") {
		t.Errorf("unknown scenario error %v does not list the scenarios", err)
	}
	for _, n := range []Name{InPlace, InPlaceNodeStepFails} {
		c, _ := For(n, Options{})
		if !c.InPlace() || c.ExternalEtcd() {
			t.Errorf("%s must be in place on stacked etcd: %+v", n, c)
		}
	}
	if c, _ := For(InPlaceNodeStepFails, Options{}); c.FailNodeUpgrade != 2 {
		t.Errorf("FailNodeUpgrade %d", c.FailNodeUpgrade)
	}
	if c, _ := For(EtcdFirstMemberFails, Options{}); !c.FailFirstEtcdMember {
		t.Error("etcd failure not set")
	}
	if c, _ := For(StaleLock, Options{}); !c.StaleLock {
		t.Error("stale lock not set")
	}
}

func TestLarge(t *testing.T) {
	c, _ := For(Large, Options{Nodes: 1001})
	if c.WorkerCount() != 1001 {
		t.Errorf("%d workers", c.WorkerCount())
	}
	if c.Workers[0].MaxSurge != 25 {
		t.Errorf("maxSurge %d", c.Workers[0].MaxSurge)
	}
	if c, _ := For(Large, Options{}); c.WorkerCount() != DefaultNodes {
		t.Errorf("default fleet %d", c.WorkerCount())
	}
	if c, _ := For(Large, Options{Nodes: 1}); c.WorkerCount() != 1 || c.Workers[0].MaxSurge < 1 {
		t.Errorf("tiny fleet %+v", c.Workers)
	}
}
