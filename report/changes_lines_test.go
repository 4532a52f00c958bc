package report

import (
	"strings"
	"testing"
	"time"

	"github.com/upgrade-console/upgrade-console/model"
)

// withPhase is p with one phase's counts changed, on a copy of its phases.
func withPhase(p *model.Progress, ph model.Phase, change func(*model.PhaseProgress)) *model.Progress {
	c := *p
	c.Phases = append([]model.PhaseProgress{}, p.Phases...)
	for i := range c.Phases {
		if c.Phases[i].Phase == ph {
			change(&c.Phases[i])
		}
	}
	return &c
}

// A phase line is printed whenever one of its counts moves: an etcd member
// upgraded, or one more ready, is the progress the plain watch is run for.
func TestChangesSayEveryPhaseCountThatMoves(t *testing.T) {
	a := etcdRollout(2)
	p := derive(a)
	for name, change := range map[string]func(*model.PhaseProgress){
		"one more upgraded": func(ph *model.PhaseProgress) { ph.Done++ },
		"one more ready":    func(ph *model.PhaseProgress) { ph.Ready++ },
	} {
		out := texts(Changes(a, a, p, withPhase(p, model.PhaseEtcd, change), t0))
		if !strings.Contains(out, "phase etcd: ") {
			t.Errorf("%s: no etcd phase line:\n%s", name, out)
		}
	}
}

// Each version the upgrade moves is said as it moves: the Cluster's target
// Kubernetes version alone (EKS-A's version unchanged: the common Kubernetes
// upgrade), a worker group handed its new version, a node's kubelet, and
// etcd's own ready flag.
func TestChangesSayEachVersionThatMoves(t *testing.T) {
	a := etcdRollout(2)
	a.MachineDeployments = []model.MachineDeployment{{Meta: meta("mgmt-md-0"), Version: "v1.30.14-eks-1-30-40",
		Replicas: model.ReplicaCounts{Desired: i32(2), Ready: i32(2), UpToDate: i32(2), Available: i32(2)}}}
	b := clone(a)
	b.Cluster.KubernetesVersion = "1.32"
	b.MachineDeployments = []model.MachineDeployment{a.MachineDeployments[0]}
	b.MachineDeployments[0].Version = "v1.31.14-eks-1-31-47"
	b.Nodes.At(0).KubeletVersion = "v1.31.14-eks-1-31-47"
	b.Etcd.Ready = true
	out := texts(Changes(a, b, derive(a), derive(b), t0))
	requireAll(t, out,
		"Cluster mgmt: target EKS-A v0.21.1, Kubernetes 1.32",
		"MachineDeployment mgmt-md-0: version v1.31.14-eks-1-31-47",
		"Node mgmt-md-0-0000: kubelet v1.30.14-eks-1-30-40 → v1.31.14-eks-1-31-47",
		"EtcdadmCluster mgmt-etcd: 2/3 members ready, ready=true",
	)
}

// The verdict lines: a new failure message is a new failure; the completion
// rule holding is said once, not on every snapshot that keeps it; and the
// first look at a Cluster is no spec change.
func TestChangesVerdictLinesSaidOnce(t *testing.T) {
	a := etcdRollout(2)
	a.Cluster.FailureMessage = "first cause"
	b := clone(a)
	b.Cluster.FailureMessage = "second cause"
	if out := texts(Changes(a, b, derive(a), derive(b), t0)); !strings.Contains(out, "upgrade: failed: second cause") {
		t.Errorf("a changed failure message not said as the upgrade's failure:\n%s", out)
	}

	done := &model.Progress{Complete: true, Generation: 7}
	if out := texts(Changes(a, a, done, done, t0)); strings.Contains(out, "completion milestone") {
		t.Errorf("the completion rule said again while it keeps holding:\n%s", out)
	}

	c := etcdRollout(2)
	if out := texts(Changes(nil, c, nil, derive(c), t0)); strings.Contains(out, "spec changed") {
		t.Errorf("the first look at the Cluster said as a spec change:\n%s", out)
	}
}

// A Warning event that arrives after others were seen is printed.
func TestChangesSayANewWarningEvent(t *testing.T) {
	a := etcdRollout(2)
	a.Events = []model.Event{{Type: "Warning", Reason: "BackOff", Message: "first", ObjectKind: "Machine", ObjectName: "mgmt-etcd-new", Count: 1, LastTimestamp: t0.Add(-time.Minute)}}
	b := clone(a)
	b.Events = append([]model.Event{{Type: "Warning", Reason: "FailedDrain", Message: "second", ObjectKind: "Machine", ObjectName: "mgmt-etcd-a", Count: 1, LastTimestamp: t0}}, a.Events...)
	out := texts(Changes(a, b, derive(a), derive(b), t0))
	if !strings.Contains(out, "warning Machine mgmt-etcd-a: FailedDrain: second") {
		t.Errorf("a new warning event not printed:\n%s", out)
	}
	if strings.Contains(out, "first") {
		t.Errorf("an event already seen printed again:\n%s", out)
	}
}

// What an in-place upgrade reports as it goes: a step's reason moving while
// it stays False ("waiting" → "still running") and the request turning
// ready; a machine's deletion is said once, not again on its next change.
func TestChangesFollowInPlaceStepsAndDeletionOnce(t *testing.T) {
	a := etcdRollout(2)
	a.NodeUpgrades = model.ListOf(&model.NodeUpgrade{Meta: meta("mgmt-md-0-0000-node-upgrader"), Kind: model.KindNodeUpgrade, MachineName: "mgmt-md-0-0000",
		Conditions: model.Conditions{cond("BinariesCopied", "False", model.SeverityInfo, "Container is waiting to be initialized", "")}})
	a.UpgradeRequests = []model.UpgradeRequest{{Meta: meta("mgmt-md-0-upgrade"), Kind: model.KindMachineDeploymentUpgrade, Target: "mgmt-md-0", RequireUpgrade: 0, Upgraded: 2}}
	b := clone(a)
	b.NodeUpgrades.At(0).Conditions = model.Conditions{cond("BinariesCopied", "False", model.SeverityInfo, "Container is still running", "")}
	b.UpgradeRequests = []model.UpgradeRequest{a.UpgradeRequests[0]}
	b.UpgradeRequests[0].Ready = true
	b.Machines.At(3).DeletionTimestamp = t0
	out := texts(Changes(a, b, derive(a), derive(b), t0))
	requireAll(t, out,
		"NodeUpgrade mgmt-md-0-0000-node-upgrader: step BinariesCopied: Container is still running",
		"MachineDeploymentUpgrade mgmt-md-0-upgrade: 2 upgraded, 0 to go, ready=true",
		"deleting",
	)
	c := clone(b)
	c.Machines.At(3).Phase = "Deleting"
	if out := texts(Changes(b, c, derive(b), derive(c), t0)); strings.Contains(out, ": deleting") {
		t.Errorf("a deletion said again:\n%s", out)
	}
}
