package main

import (
	"strings"
	"testing"
	"time"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
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

// --nodes sizes the large world only: given with another scenario it was
// ignored without a word. And --speed's fix says what 1 is (the demo's own
// pace), not "real time".
func TestDemoFlagsSayWhatTheyDo(t *testing.T) {
	_, errOut, code := runCaptured(t, "demo", "--scenario", "rolling", "--nodes", "50")
	if code != ExitUsage || !strings.Contains(errOut, "--nodes sets the size of the large scenario only") {
		t.Errorf("--nodes with rolling: exit %d: %s", code, errOut)
	}
	_, errOut, code = runCaptured(t, "demo", "--speed", "0")
	if code != ExitBadInput || strings.Contains(errOut, "real time") || !strings.Contains(errOut, "the demo's own pace") {
		t.Errorf("--speed 0: exit %d: %s", code, errOut)
	}
}

// apply --dry-run's audit entry carries the --skip list, as the apply's do:
// "dry runs too … with the dry-run/forced/skipped flags".
func TestDryRunEntryRecordsTheSkips(t *testing.T) {
	p := &upgrade.Plan{Cluster: "mgmt", Namespace: "default", Skipped: []string{"nodes-ready"}}
	e := dryRunEntry(p, &upgrade.SpecFile{Path: "spec.yaml"}, &upgrade.DryRunResult{}, true)
	if len(e.Skipped) != 1 || e.Skipped[0] != "nodes-ready" || !e.Forced || !e.DryRun {
		t.Errorf("dry run entry %+v", e)
	}
}
