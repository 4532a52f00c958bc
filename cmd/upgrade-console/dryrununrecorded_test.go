package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/upgrade/recovery"
)

// fullAuditLog makes the audit log under state refuse every entry: a full
// disk (/dev/full), or a directory where the file goes (refused at open).
func fullAuditLog(t *testing.T, state string, atOpen bool) {
	t.Helper()
	dir := filepath.Join(state, "upgrade-console")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "audit.log")
	os.RemoveAll(path)
	if atOpen {
		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := os.Symlink("/dev/full", path); err != nil {
		t.Fatal(err)
	}
}

// A run that changes nothing (apply --dry-run, a lock clear's dry run, a
// lock clear with nothing to clear) did its work when the audit log
// refuses its entry: it exits 74 with the entry printed, as the README's
// table has it, where it exited 1, bad input. A run that would write is
// still refused its start, exit 1, nothing written.
func TestARunThatChangesNothingExitsUnrecordedWhenTheLogRefuses(t *testing.T) {
	w := startDemo(t, scenario.Rolling)
	for _, tc := range []struct {
		name   string
		args   []string
		atOpen bool
		said   string
	}{
		{"apply dry run", liveArgs(w, "apply", "--dry-run", "--force-conflicts"), false, "--dry-run: nothing was changed; the dry run is NOT recorded in the audit log"},
		{"lock clear dry run", []string{"lock", "clear", "lease", "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName, "--dry-run"}, false, "the dry run is NOT recorded in the audit log"},
		{"lock clear nothing to do", []string{"lock", "clear", "lease", "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName, "--yes"}, false, "Nothing to do: every step is already done; nothing was changed (the dry run is NOT recorded"},
		{"lock clear nothing to do, log refused at open", []string{"lock", "clear", "lease", "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName, "--yes"}, true, "is a directory"},
		{"apply dry run, log refused at open", liveArgs(w, "apply", "--dry-run", "--force-conflicts"), true, "is a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := t.TempDir()
			fullAuditLog(t, state, tc.atOpen)
			opened.take()
			out, errOut, code := runCapturedIn(t, state, tc.args...)
			if code != ExitUnrecorded {
				t.Errorf("exit %d, want %d\n%s\n%s", code, ExitUnrecorded, out, errOut)
			}
			if !strings.Contains(out, tc.said) {
				t.Errorf("the run says, want %q:\n%s", tc.said, out)
			}
			if !strings.Contains(errOut, "the audit log did not take 1 entry of this run") || !strings.Contains(errOut, `"dryRun":true`) {
				t.Errorf("the entry is not printed at exit:\n%s", errOut)
			}
		})
	}
}

// A lock clear with a stale Lease to delete must not write it unrecorded:
// refused its start, exit 1, and the Lease is still there.
func TestALockClearWithWorkToDoIsRefusedWhenTheLogRefuses(t *testing.T) {
	w := startDemo(t, scenario.StaleLock)
	for _, atOpen := range []bool{false, true} {
		state := t.TempDir()
		fullAuditLog(t, state, atOpen)
		opened.take()
		args := []string{"lock", "clear", "lease", "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName, "--yes"}
		out, errOut, code := runCapturedIn(t, state, args...)
		if code != ExitBadInput || strings.Contains(out, "Running:") {
			t.Fatalf("log refused (at open %v): exit %d, want %d and nothing run\n%s\n%s", atOpen, code, ExitBadInput, out, errOut)
		}
	}
	out, errOut, code := runCaptured(t, "lock", "status", "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName)
	if code != ExitOK || !strings.Contains(out, "stale") {
		t.Errorf("lock status after the refused clears: exit %d\n%s\n%s", code, out, errOut)
	}
}

// A node retry with nothing to retry changed nothing: a log that refuses
// its already-done entry makes it 74 with the entry printed, as a lock
// clear with nothing to clear; it returned the refusal, exit 1.
func TestNothingToRetryExitsUnrecordedWhenTheLogRefuses(t *testing.T) {
	p := &recovery.Plan{Action: recovery.ActionNodeRetry, Cluster: "mgmt", ConfirmObject: "Node mgmt-a", Confirm: "mgmt-a",
		Title: "Nothing to retry on node mgmt-a: NodeUpgrade eksa-system/mgmt-a-node-upgrader completed."}
	for _, atOpen := range []bool{false, true} {
		state := t.TempDir()
		t.Setenv("XDG_STATE_HOME", state)
		fullAuditLog(t, state, atOpen)
		opened.take()
		var out, end bytes.Buffer
		err := nothingToRetry(context.Background(), &out, p, &recoveryOptions{}, auditTarget{context: "ctx"})
		code := ExitOK
		if err != nil {
			code = exitCode(err)
		}
		code = endRun(&end, code, opened.take())
		if code != ExitUnrecorded || !strings.Contains(out.String(), "NOT recorded in the audit log") || !strings.Contains(end.String(), `"result":"already-done"`) {
			t.Errorf("log refusing (at open %v): exit %d (%v), want %d\n%s\n%s", atOpen, code, err, ExitUnrecorded, out.String(), end.String())
		}
	}
}

// A step the dry run refuses keeps its 3 when the log refuses the entries
// too: joined with the log's refusal, it read as the log's alone, exit 1.
func TestADryRunStepRefusedKeepsItsCodeWhenTheLogRefuses(t *testing.T) {
	w := startDemo(t, scenario.StaleLock)
	p := startFaultProxy(t, w.Config)
	p.refuse(func(r *http.Request) bool {
		// A delete's dry run is in its body: every delete of the Lease is
		// refused, and the run stops at the dry run.
		return r.Method == http.MethodDelete && strings.Contains(r.URL.Path, "/leases/")
	}, http.StatusForbidden)
	kc := p.kubeconfig(t, w.ClusterNamespace)
	state := t.TempDir()
	fullAuditLog(t, state, false)
	opened.take()
	out, errOut, code := runCapturedIn(t, state, "lock", "clear", "lease", "--kubeconfig", kc, "--cluster", w.ClusterName, "--yes")
	if code != ExitPreflight || !strings.Contains(errOut, "the dry run failed, nothing was changed") {
		t.Fatalf("exit %d, want %d (the dry run refused)\n%s\n%s", code, ExitPreflight, out, errOut)
	}
}
