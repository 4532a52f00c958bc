package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade/recovery"
)

// noStateDir leaves the console no state directory: HOME and
// XDG_STATE_HOME unset, as in CI containers, cron jobs and systemd units.
func noStateDir(t *testing.T) {
	t.Helper()
	t.Setenv("HOME", "")
	t.Setenv("XDG_STATE_HOME", "")
}

// unprefixed is the lines of stderr that are neither the
// "upgrade-console:" lines of the console nor the audit entries it prints
// at exit (JSON).
func unprefixed(stderr string) []string {
	var bad []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if l != "" && !strings.HasPrefix(l, "upgrade-console: ") && !strings.HasPrefix(l, "{") {
			bad = append(bad, l)
		}
	}
	return bad
}

// A state directory that cannot be found is an audit log that cannot be
// opened: a dry run runs, prints its entries and exits 74, a run that
// would write is refused its start (exit 1, nothing written, the fix
// naming XDG_STATE_HOME and HOME), and a refused run keeps its 3 and
// prints its refused entry. The dry run exited 1 after the plan, the
// refusal's entry was lost, and its last error line had no prefix.
func TestNoStateDirIsALogThatCannotBeOpened(t *testing.T) {
	w := startDemo(t, scenario.StaleLock)
	kc := []string{"--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName}
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string
		err  []string
	}{
		{"lock clear dry run", append([]string{"lock", "clear", "--all", "--dry-run"}, kc...), ExitUnrecorded,
			"the dry run is NOT recorded in the audit log", []string{"the audit log did not take 2 entries of this run", "once XDG_STATE_HOME or HOME is set", `"dryRun":true`}},
		{"lock clear", append([]string{"lock", "clear", "--all", "--yes"}, kc...), ExitBadInput,
			"Server-side dry run:", []string{"nothing was changed", "or HOME)"}},
		{"etcd rollback refused", append([]string{"etcd", "rollback", "--dry-run"}, kc...), ExitPreflight,
			"etcd-rollback is not offered", []string{"not possible", "the audit log did not take 1 entry of this run", `"result":"refused"`}},
		{"apply refused", liveArgs(w, "apply", "--yes"), ExitPreflight,
			"", []string{"the audit log did not take 1 entry of this run", `"action":"apply"`, `"result":"refused"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			noStateDir(t)
			opened.take()
			out, errOut, code := runCapturedTo(t, t.TempDir(), tc.args...)
			if code != tc.code || !strings.Contains(out, tc.out) || strings.Contains(out, "Running:") {
				t.Errorf("exit %d, want %d, saying %q and running nothing\n%s\n%s", code, tc.code, tc.out, out, errOut)
			}
			for _, want := range tc.err {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr does not say %q:\n%s", want, errOut)
				}
			}
			if bad := unprefixed(errOut); len(bad) > 0 {
				t.Errorf("stderr lines without the upgrade-console: prefix: %q", bad)
			}
		})
	}
	out, errOut, code := runCaptured(t, "lock", "status", "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName)
	if code != ExitOK || !strings.Contains(out, "stale") {
		t.Errorf("lock status after the refused clear: exit %d\n%s\n%s", code, out, errOut)
	}
}

// A node retry with nothing to retry and no state directory prints its
// already-done entry and exits 74, as with a log that cannot be opened; it
// exited 1 with the state directory's error alone.
func TestNothingToRetryWithNoStateDirExitsUnrecorded(t *testing.T) {
	p := &recovery.Plan{Action: recovery.ActionNodeRetry, Cluster: "mgmt", ConfirmObject: "Node mgmt-a", Confirm: "mgmt-a",
		Title: "Nothing to retry on node mgmt-a: NodeUpgrade eksa-system/mgmt-a-node-upgrader completed."}
	noStateDir(t)
	opened.take()
	var out, end bytes.Buffer
	err := nothingToRetry(context.Background(), &out, p, &recoveryOptions{}, auditTarget{context: "ctx"})
	code := ExitOK
	if err != nil {
		code = exitCode(err)
	}
	code = endRun(&end, code, opened.take())
	if code != ExitUnrecorded || !strings.Contains(out.String(), "NOT recorded in the audit log") || !strings.Contains(end.String(), `"result":"already-done"`) ||
		!strings.Contains(end.String(), "or HOME") {
		t.Errorf("exit %d (%v), want %d with the entry and the fix\n%s\n%s", code, err, ExitUnrecorded, out.String(), end.String())
	}
}

// Each error of a join is a line of its own with the prefix: a refusal
// joined with the audit log's printed the second bare.
func TestErrorLinePrefixesEachJoinedError(t *testing.T) {
	got := errorLine(errors.Join(errors.New("refused"), nil, errors.New("audit log: full\nsecond line")))
	want := "upgrade-console: refused\nupgrade-console: audit log: full\nsecond line\n"
	if got != want {
		t.Errorf("error line %q, want %q", got, want)
	}
}

// audit with no state directory names --audit-log beside XDG_STATE_HOME
// and HOME: a log copied from elsewhere is read with no state directory
// at all, and the fix said only the state directory's.
func TestAuditWithNoStateDirNamesAuditLog(t *testing.T) {
	noStateDir(t)
	var out bytes.Buffer
	err := runAudit(&out, &out, &auditOptions{output: "table"}, time.Now())
	var ie *model.InputError
	if !errors.As(err, &ie) || !strings.Contains(ie.Fix, "--audit-log") || !strings.Contains(ie.Fix, "or HOME") {
		t.Errorf("audit: %v, want bad input whose fix names --audit-log and HOME", err)
	}
}
