package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upgrade-console/upgrade-console/upgrade"
	"github.com/upgrade-console/upgrade-console/upgrade/recovery"
)

func TestRecoveryReadOnlyShowsThePlanAndSendsNothing(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	// Steps without their functions: reaching the API (even a dry run)
	// would panic.
	p := &recovery.Plan{Action: recovery.ActionLockClear, Cluster: "mgmt", Title: "Clear upgrade lock markers of mgmt: paused",
		Confirm: "mgmt", Steps: []recovery.Step{{Name: "clear-paused", Title: "Clear paused", Object: "Cluster default/mgmt",
			Change: "remove annotation anywhere.eks.amazonaws.com/paused"}}}
	var out bytes.Buffer
	if err := runRecoveryPlan(context.Background(), strings.NewReader(""), &out, p, &recoveryOptions{readOnly: true}, ""); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"1. Clear paused", "Cluster default/mgmt: remove annotation anywhere.eks.amazonaws.com/paused", "--read-only: nothing was sent"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if _, err := os.Stat(filepath.Join(state, "upgrade-console", "audit.log")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("read-only mode touched the audit log: %v", err)
	}
}

func TestRecoveryRefusalExitCode(t *testing.T) {
	var out bytes.Buffer
	err := refused(&out, &recovery.RefusedError{Action: recovery.ActionEtcdRollback, Cluster: "mgmt",
		Preconditions: []recovery.Precondition{{Name: "snapshot", Detail: "no snapshot"}, {Name: "external-etcd", OK: true, Detail: "EtcdadmCluster eksa-system/mgmt-etcd"}}})
	if exitCode(err) != ExitPreflight {
		t.Errorf("exit code %d, want %d", exitCode(err), ExitPreflight)
	}
	if !strings.Contains(out.String(), "✗ snapshot") || !strings.Contains(out.String(), "✓ external-etcd") {
		t.Errorf("refusal output:\n%s", out.String())
	}
}

// A refused action is recorded: nothing changed, but the attempt is part of
// the incident's record. In read-only mode the audit log is not opened.
func TestRecoveryRefusalIsAudited(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	refusedErr := &recovery.RefusedError{Action: recovery.ActionNodeRetry, Cluster: "mgmt", Object: "Node mgmt-md-0-abc",
		Preconditions: []recovery.Precondition{{Name: "failed", Detail: "the node's upgrade has not failed"}, {Name: "node", OK: true}}}
	var out bytes.Buffer
	if err := refusal(context.Background(), &out, &recoveryOptions{readOnly: true}, "ctx", refusedErr); exitCode(err) != ExitPreflight {
		t.Fatalf("read-only refusal: exit %d (%v)", exitCode(err), err)
	}
	path := filepath.Join(state, "upgrade-console", "audit.log")
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("read-only mode touched the audit log: %v", err)
	}
	if err := refusal(context.Background(), &out, &recoveryOptions{}, "ctx", refusedErr); exitCode(err) != ExitPreflight {
		t.Fatalf("refusal: exit %d (%v)", exitCode(err), err)
	}
	res, err := upgrade.ReadAudit(path, upgrade.AuditFilter{})
	if err != nil || len(res.Entries) != 1 {
		t.Fatalf("audit log: %v, %+v", err, res)
	}
	e := res.Entries[0]
	if e.Result != upgrade.AuditRefused || e.Action != recovery.ActionNodeRetry || e.Cluster != "mgmt" || e.Object != "Node mgmt-md-0-abc" || e.Context != "ctx" ||
		!strings.Contains(e.Message, "failed: the node's upgrade has not failed") || strings.Contains(e.Message, "node:") {
		t.Errorf("refusal entry = %+v", e)
	}
}

// lock clear with neither a marker nor --all is a wrong command line (exit
// 2), said before anything is read from the cluster.
func TestLockClearWithoutMarkersIsUsage(t *testing.T) {
	_, errOut, code := runCaptured(t, "lock", "clear", "--cluster", "mgmt")
	if code != ExitUsage || !strings.Contains(errOut, "lock clear needs the markers to clear") {
		t.Errorf("exit %d, stderr %q; want exit %d naming the markers", code, errOut, ExitUsage)
	}
}
