package main

import (
	"testing"
	"time"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade/recovery"
)

// The demo's thresholds follow its clock unless given: with the real-cluster
// defaults the etcd rollback was offered 15 real minutes into a demo that
// ends in a few.
func TestDemoScalesThresholdsToItsClock(t *testing.T) {
	o := watchOptions{stallAfter: model.DefaultStallAfter, rollbackThreshold: recovery.DefaultEtcdRollbackThreshold}
	o.scaleForDemo(1, func(string) bool { return false })
	if o.rollbackThreshold != recovery.DefaultEtcdRollbackThreshold/demoTimeScale || o.stallAfter != model.DefaultStallAfter/demoTimeScale {
		t.Errorf("speed 1: rollback %s, stall %s", o.rollbackThreshold, o.stallAfter)
	}
	o = watchOptions{stallAfter: model.DefaultStallAfter, rollbackThreshold: recovery.DefaultEtcdRollbackThreshold}
	o.scaleForDemo(100, func(string) bool { return false })
	if o.rollbackThreshold != demoMinThreshold || o.stallAfter != demoMinThreshold {
		t.Errorf("speed 100: rollback %s, stall %s, want the floor", o.rollbackThreshold, o.stallAfter)
	}
	o = watchOptions{stallAfter: time.Hour, rollbackThreshold: 20 * time.Second}
	o.scaleForDemo(10, func(flag string) bool { return true })
	if o.rollbackThreshold != 20*time.Second || o.stallAfter != time.Hour {
		t.Errorf("given flags were scaled: rollback %s, stall %s", o.rollbackThreshold, o.stallAfter)
	}
}
