package tui

import (
	"testing"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
)

// TestConditionMarksOfARollout: the conditions a rollout sets False as a
// matter of course are marked as work in progress, not failed: the etcdadm
// controller's (severity Warning, reason EtcdRollingUpdateInProgress),
// EKS-A's (Info), a v1beta2 KubeadmControlPlane's MachinesUpToDate while
// RollingOut is True. Severity Error and a reason naming a failure keep
// the failure mark, another Warning is a warning, and a v1beta2 condition
// False outside a rollout is still marked failed.
func TestConditionMarksOfARollout(t *testing.T) {
	th := themes.NewMono()
	st := newStyles(&th)
	sym := th.Sym
	for _, c := range []struct {
		name    string
		c       model.Condition
		rolling bool
		want    string
	}{
		{"etcd rollout, Ready", cond("Ready", "False", model.SeverityWarning, "EtcdRollingUpdateInProgress", "Rolling 2 replicas", t0), false, sym.Active},
		{"etcd rollout, spec", cond("EtcdMachinesSpecUpToDate", "False", model.SeverityWarning, "EtcdRollingUpdateInProgress", "", t0), false, sym.Active},
		{"EKS-A, Info", cond("ControlPlaneReady", "False", model.SeverityInfo, "InPlaceUpgradeInProgress", "", t0), false, sym.Active},
		{"KCP rolling out", cond("MachinesUpToDate", "False", "", "NotUpToDate", "", t0), true, sym.Active},
		{"KCP not rolling out", cond("MachinesUpToDate", "False", "", "NotUpToDate", "", t0), false, sym.Fail},
		{"v1beta2 unavailable", cond("Available", "False", "", "NotAvailable", "", t0), true, sym.Fail},
		{"severity Error", cond("Ready", "False", model.SeverityError, "EtcdRollingUpdateInProgress", "", t0), false, sym.Fail},
		{"failure reason", cond("ControlPlaneReady", "False", model.SeverityInfo, "InPlaceUpgradeFailed", "", t0), false, sym.Fail},
		{"warning", cond("EtcdMachinesSpecUpToDate", "False", model.SeverityWarning, "MaxNumberOfEtcdMachinesReached", "", t0), false, sym.Warn},
		{"healthy", cond("Ready", "True", "", "", "", t0), true, sym.OK},
		{"rolling out, negative polarity", cond("RollingOut", "True", "", "RollingOut", "", t0), true, sym.Active},
	} {
		if got := conditionMark(st, c.c, c.rolling); got.text != c.want {
			t.Errorf("%s: mark %q, want %q", c.name, got.text, c.want)
		}
	}
	// A KubeadmControlPlane's rollout is its RollingOut condition.
	lines := conditionLines(st, model.Conditions{
		cond("MachinesUpToDate", "False", "", "NotUpToDate", "* Machine m: Version v1.30, v1.31 required", t0),
		cond("RollingOut", "True", "", "RollingOut", "Rolling out 2 not up-to-date replicas", t0),
	}, false)
	if got := lines[0].segs[0].text; got != " "+sym.Active+" " {
		t.Errorf("MachinesUpToDate during a rollout marked %q", got)
	}
}
