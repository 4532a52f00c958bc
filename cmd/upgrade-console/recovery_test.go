package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
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
	if err := runRecoveryPlan(context.Background(), strings.NewReader(""), &out, p, &recoveryOptions{readOnly: true}, auditTarget{}); err != nil {
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
	if err := refusal(context.Background(), &out, &recoveryOptions{readOnly: true}, auditTarget{context: "ctx"}, refusedErr); exitCode(err) != ExitPreflight {
		t.Fatalf("read-only refusal: exit %d (%v)", exitCode(err), err)
	}
	path := filepath.Join(state, "upgrade-console", "audit.log")
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("read-only mode touched the audit log: %v", err)
	}
	if err := refusal(context.Background(), &out, &recoveryOptions{}, auditTarget{context: "ctx"}, refusedErr); exitCode(err) != ExitPreflight {
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

// A marker lock clear does not know is a wrong command line (exit 2) too,
// said with the markers it knows before the cluster is read: the API server
// here cannot be reached, and is never contacted.
func TestLockClearUnknownMarkerIsUsage(t *testing.T) {
	kubeconfig := unreachableKubeconfig(t)
	for _, marker := range []string{"bogus", "node-label/"} {
		_, errOut, code := runCaptured(t, "lock", "clear", marker, "paused", "--cluster", "mgmt", "--yes", "--kubeconfig", kubeconfig)
		if code != ExitUsage || !strings.Contains(errOut, "unknown marker \""+marker+"\"") ||
			!strings.Contains(errOut, "lease, managed-by-cli, paused, kcp-paused, etcd-upgrading, node-label, node-label/NODE") {
			t.Errorf("%s: exit %d (want %d), stderr %q", marker, code, ExitUsage, errOut)
		}
		if strings.Contains(errOut, "127.0.0.1:1") {
			t.Errorf("%s: the API server was contacted:\n%s", marker, errOut)
		}
	}
}

// completion for a shell it has no script for is a wrong command line, not
// its help and exit 0 (a script that redirected it got the help as its
// completion script).
func TestCompletionOfAnUnsupportedShellIsUsage(t *testing.T) {
	out, errOut, code := runCaptured(t, "completion", "tcsh")
	if code != ExitUsage || !strings.Contains(errOut, `unsupported shell "tcsh"`) || !strings.Contains(errOut, "bash, fish, powershell, zsh") || out != "" {
		t.Errorf("exit %d (want %d), stdout %q, stderr %q", code, ExitUsage, out, errOut)
	}
	out, errOut, code = runCaptured(t, "completion", "bash")
	if code != ExitOK || !strings.Contains(out, "bash completion") {
		t.Errorf("bash: exit %d, stderr %q", code, errOut)
	}
}

// A recovery run stopped by an interrupt exits 5, as a wait that timed out
// does: it did not fail, and running it again continues it. One that found
// the cluster changed before its first write was refused (3).
func TestRecoveryRunErrorCodes(t *testing.T) {
	failed := func(i int) recovery.StepResult { return recovery.StepResult{Index: i, Status: recovery.StepFailed} }
	done := func(i int) recovery.StepResult { return recovery.StepResult{Index: i, Status: recovery.StepDone} }
	inPlace := func(i int) recovery.StepResult {
		return recovery.StepResult{Index: i, Status: recovery.StepAlreadyDone}
	}
	for _, c := range []struct {
		steps []recovery.StepResult
		err   error
		code  int
		want  string
	}{
		{[]recovery.StepResult{done(0), failed(1)}, fmt.Errorf("interrupted during step 2 (Wait for the NodeUpgrade controller to recreate the pod): %w", context.Canceled), ExitTimeout, "run the same command again"},
		{[]recovery.StepResult{done(0), failed(1)}, fmt.Errorf("step 2 failed: %w", &recovery.WaitTimeoutError{What: "pod not recreated", After: time.Minute}), ExitTimeout, "pod not recreated"},
		// A plan gone stale before the run's first write is refused (3),
		// as a plan the checks block: it exited 4, "ran and failed".
		{[]recovery.StepResult{failed(0)}, fmt.Errorf("step 1 failed: %w", &recovery.ConcurrentChangeError{Object: "Pod eksa-system/x"}), ExitPreflight, "Pod eksa-system/x"},
		{[]recovery.StepResult{inPlace(0), failed(1)}, fmt.Errorf("step 2 failed: %w", &recovery.ConcurrentChangeError{Object: "Machine eksa-system/x"}), ExitPreflight, "Machine eksa-system/x"},
		// After a write, the same is an action stopped part way.
		{[]recovery.StepResult{done(0), failed(1)}, fmt.Errorf("step 2 failed: %w", &recovery.ConcurrentChangeError{Object: "Machine eksa-system/x"}), ExitUpgradeFail, "Machine eksa-system/x"},
		{[]recovery.StepResult{failed(0)}, errors.New("step 1 failed: forbidden"), ExitUpgradeFail, "resumable"},
		{[]recovery.StepResult{done(0), done(1), failed(2)}, fmt.Errorf("step 3 failed: %w", &recovery.RolledForwardError{What: "the etcd spec is no longer the snapshot's", Next: "run it again"}), ExitUpgradeFail, "does not hold"},
		// The log refused the run's start (a disk filled at the prompt):
		// no step ran, the environment's fault, as in the dry run (1).
		{nil, &recovery.NotStartedError{Err: &upgrade.AuditWriteError{Path: "audit.log", Err: syscall.ENOSPC}}, ExitBadInput, "nothing was changed"},
		// Refused after a write (the lock taken over, before any step):
		// not "nothing was changed".
		{nil, fmt.Errorf("taking the upgrade lock: %w", &upgrade.AuditWriteError{Path: "audit.log", Err: syscall.ENOSPC}), ExitUpgradeFail, "resumable"},
		{[]recovery.StepResult{done(0)}, fmt.Errorf("step 2: %w", &upgrade.AuditWriteError{Path: "audit.log", Err: syscall.ENOSPC}), ExitUpgradeFail, "resumable"},
	} {
		err := runError(recovery.Report{Steps: c.steps}, c.err)
		var rf *recovery.RolledForwardError
		if exitCode(err) != c.code || !strings.Contains(err.Error(), c.want) || (errors.As(c.err, &rf) && strings.Contains(err.Error(), "resumable")) {
			t.Errorf("%v: exit %d (want %d), %q", c.err, exitCode(err), c.code, err)
		}
	}
}

// A node retry with nothing to retry succeeds, and is recorded as
// already-done (a recovery step whose effect was in place); read-only
// opens no audit log.
func TestNothingToRetryIsRecordedAsAlreadyDone(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	p := &recovery.Plan{Action: recovery.ActionNodeRetry, Cluster: "mgmt", ConfirmObject: "Node mgmt-a", Confirm: "mgmt-a",
		Title: "Nothing to retry on node mgmt-a: NodeUpgrade eksa-system/mgmt-a-node-upgrader completed.", Notes: []string{"Follow the upgrade."}}
	var out bytes.Buffer
	if err := nothingToRetry(context.Background(), &out, p, &recoveryOptions{readOnly: true}, auditTarget{context: "ctx"}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(state, "upgrade-console", "audit.log")
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("read-only mode touched the audit log: %v", err)
	}
	if err := nothingToRetry(context.Background(), &out, p, &recoveryOptions{}, auditTarget{context: "ctx"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Nothing to retry on node mgmt-a") || !strings.Contains(out.String(), "Follow the upgrade.") {
		t.Errorf("output:\n%s", out.String())
	}
	res, err := upgrade.ReadAudit(path, upgrade.AuditFilter{})
	if err != nil || len(res.Entries) != 1 {
		t.Fatalf("audit log: %v, %+v", err, res)
	}
	if e := res.Entries[0]; e.Result != upgrade.AuditAlreadyDone || e.Action != recovery.ActionNodeRetry || e.Object != "Node mgmt-a" || !strings.Contains(e.Message, "completed") {
		t.Errorf("entry = %+v", e)
	}
}

// A recovery run again once it has finished stops after its dry run, which
// found every step done: the plan's title still said what the first run did
// ("… and delete the new member"), and the run took the lock and recorded a
// start for nothing.
func TestRecoveryWithEveryStepDoneStopsAfterTheDryRun(t *testing.T) {
	w := startDemo(t, scenario.StaleLock)
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	args := []string{"lock", "clear", "paused", "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName, "--yes"}
	if out, errOut, code := runCaptured(t, args...); code != ExitOK || !strings.Contains(out, "done: annotation anywhere.eks.amazonaws.com/paused removed") {
		t.Fatalf("first run: exit %d, %s\n%s", code, errOut, out)
	}
	path := filepath.Join(state, "upgrade-console", "audit.log")
	before, err := upgrade.ReadAudit(path, upgrade.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCaptured(t, args...)
	if code != ExitOK || !strings.Contains(out, "Nothing to do: every step is already done; nothing was changed") || strings.Contains(out, "Running:") {
		t.Fatalf("second run: exit %d, %s\n%s", code, errOut, out)
	}
	after, err := upgrade.ReadAudit(path, upgrade.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range after.Entries[len(before.Entries):] {
		if !e.DryRun {
			t.Errorf("the second run recorded more than its dry run: %+v", e)
		}
	}
}

// --read-only sends nothing: beside --yes or --dry-run it read as a run or a
// dry run the command never did, and exited 0. Refused before connecting
// (no kubeconfig is needed to be told).
func TestRecoveryReadOnlyRefusesYesAndDryRun(t *testing.T) {
	for _, args := range [][]string{
		{"lock", "clear", "--all", "--cluster", "mgmt", "--read-only", "--yes"},
		{"lock", "clear", "--all", "--cluster", "mgmt", "--read-only", "--dry-run"},
		{"etcd", "rollback", "--cluster", "mgmt", "--read-only", "--yes"},
		{"node", "retry", "n1", "--cluster", "mgmt", "--read-only", "--dry-run"},
	} {
		_, errOut, code := runCaptured(t, append(args, "--kubeconfig", "/nonexistent")...)
		if code != ExitUsage || !strings.Contains(errOut, "--read-only") || !strings.Contains(errOut, "leave one out") {
			t.Errorf("%v: exit %d (want %d): %s", args, code, ExitUsage, errOut)
		}
	}
}

// A read that SIGINT or SIGTERM cut short was bad input (exit 1) in
// client-go's words; it is a stop, exit 5, saying so. An error that already
// has its code keeps it, and without a signal nothing changes.
func TestSignalledReadIsAStop(t *testing.T) {
	cut := errors.New(`read Cluster default/mgmt: Get "https://127.0.0.1:1/apis": terminated signal received`)
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	if err := signalled(stopped, cut); exitCode(err) != ExitTimeout || !strings.Contains(err.Error(), "stopped (interrupted) before it finished; it changed nothing") {
		t.Errorf("signalled read: exit %d: %v", exitCode(err), err)
	}
	// client-go's words for the cancellation itself add nothing to
	// "interrupted" (seen after an interrupted plan).
	limiter := fmt.Errorf("read Cluster default/mgmt: %w", errors.New("client rate limiter Wait returned an error: context canceled"))
	if err := signalled(stopped, limiter); exitCode(err) != ExitTimeout || err.Error() != "stopped (interrupted) before it finished; it changed nothing" {
		t.Errorf("signalled, client-go's cancellation: exit %d: %v", exitCode(err), err)
	}
	if err := signalled(stopped, withCode(ExitUpgradeFail, cut)); exitCode(err) != ExitUpgradeFail {
		t.Errorf("a coded error lost its code: %d", exitCode(err))
	}
	if err := signalled(stopped, usageError{errors.New("x")}); exitCode(err) != ExitUsage {
		t.Errorf("a usage error lost its code: %d", exitCode(err))
	}
	if err := signalled(context.Background(), cut); exitCode(err) != ExitBadInput || err != cut {
		t.Errorf("no signal: %v", err)
	}
}

// A recovery's dry run interrupted (Ctrl-C, SIGTERM) is a stop that changed
// nothing: exit 5, recorded not run. It exited 3 and was recorded "refused:
// the dry run failed: context canceled". A dry run the cluster refused stays
// exit 3, recorded refused.
func TestRecoveryDryRunInterruptedIsAStop(t *testing.T) {
	p := &recovery.Plan{Action: recovery.ActionLockClear, Cluster: "mgmt", ConfirmObject: "Cluster default/mgmt", Confirm: "mgmt"}
	audit, err := upgrade.NewAuditor(filepath.Join(t.TempDir(), "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	err = dryRunFailed(stopped, audit, p, fmt.Errorf("step 1 clear-paused: %w", context.Canceled))
	if exitCode(err) != ExitTimeout || !strings.Contains(err.Error(), "stopped (interrupted)") {
		t.Errorf("interrupted dry run: exit %d: %v", exitCode(err), err)
	}
	err = dryRunFailed(context.Background(), audit, p, errors.New("step 1 clear-paused: admission webhook denied the request"))
	if exitCode(err) != ExitPreflight {
		t.Errorf("refused dry run: exit %d: %v", exitCode(err), err)
	}
	res, err := upgrade.ReadAudit(audit.Path(), upgrade.AuditFilter{})
	if err != nil || len(res.Entries) != 2 {
		t.Fatalf("audit: %+v %v", res.Entries, err)
	}
	if e := res.Entries[0]; e.Result != upgrade.AuditNotConfirmed || !strings.Contains(e.Message, "interrupted during the dry run") {
		t.Errorf("interrupted dry run recorded %+v", e)
	}
	if e := res.Entries[1]; e.Result != upgrade.AuditRefused {
		t.Errorf("refused dry run recorded %+v", e)
	}
}

// A node label flag given a key=value or no key at all: the blocking
// node-upgrade-label check looked for a node labelled with that string,
// found none and passed, while lock status read it as a selector. Both are
// bad input, naming the flag, before connecting.
func TestNodeLabelFlagsTakeAKey(t *testing.T) {
	for _, args := range [][]string{
		{"plan", "--cluster", "mgmt", "-f", "spec.yaml", "--node-upgrade-label", "kubeone.io/upgrade-in-progress=true"},
		{"apply", "--cluster", "mgmt", "-f", "spec.yaml", "--dry-run", "--node-upgrade-label", "bad label!"},
		{"watch", "--cluster", "mgmt", "--plain", "--node-upgrade-label", "a,b"},
		{"lock", "status", "--cluster", "mgmt", "--node-label", "kubeone.io/upgrade-in-progress=true"},
		{"lock", "clear", "--all", "--cluster", "mgmt", "--node-label", "bad label!"},
	} {
		flag := args[len(args)-2]
		_, errOut, code := runCaptured(t, append(args, "--kubeconfig", "/nonexistent")...)
		if code != ExitBadInput || !strings.Contains(errOut, flag) || !strings.Contains(errOut, "is not a label key") ||
			!strings.Contains(errOut, "give the label's key alone") {
			t.Errorf("%v: exit %d (want %d): %s", args, code, ExitBadInput, errOut)
		}
	}
}

// A step that took under 10 ms says so: "(0s)" read as one that did nothing.
func TestTookText(t *testing.T) {
	for d, want := range map[time.Duration]string{3 * time.Millisecond: "<10ms", 1234 * time.Millisecond: "1.23s"} {
		if got := tookText(d); got != want {
			t.Errorf("tookText(%s) = %q, want %q", d, got, want)
		}
	}
}

// "Running:" comes with the first step, not before a run the lock turns
// away; a step an interrupt stopped reads "stopped", not "failed".
func TestRunProgress(t *testing.T) {
	var out bytes.Buffer
	progress := runProgress(&out, 2)
	if out.Len() != 0 {
		t.Fatalf("said before any step: %q", out.String())
	}
	progress(recovery.StepResult{Index: 0, Title: "Pause", Status: recovery.StepRunning})
	progress(recovery.StepResult{Index: 0, Title: "Pause", Status: recovery.StepFailed, Err: fmt.Errorf("interrupted: %w", context.Canceled)})
	got := out.String()
	if !strings.HasPrefix(got, "\nRunning:\n  [1/2] Pause …\n") || !strings.Contains(got, "        stopped: interrupted") || strings.Count(got, "Running:") != 1 {
		t.Errorf("progress:\n%s", got)
	}
}

// A run whose every step is done, only its end refused by the audit log,
// is a done action, not a failed one to run again (D11); a step not done,
// or another error, is still the run's failure.
func TestUnrecordedEndIsADoneRun(t *testing.T) {
	p := &recovery.Plan{Steps: []recovery.Step{{Name: "a"}, {Name: "b"}}}
	refused := fmt.Errorf("record: %w", &upgrade.AuditWriteError{Path: "audit.log", Err: errors.New("no space left on device")})
	done := recovery.Report{Steps: []recovery.StepResult{{Status: recovery.StepDone}, {Status: recovery.StepAlreadyDone}}}
	if !unrecordedEnd(done, p, refused) {
		t.Error("every step done, the end refused: read as a failure")
	}
	if unrecordedEnd(recovery.Report{Steps: done.Steps[:1]}, p, refused) {
		t.Error("a step not reached read as done")
	}
	if unrecordedEnd(recovery.Report{Steps: []recovery.StepResult{{Status: recovery.StepDone}, {Status: recovery.StepFailed}}}, p, refused) {
		t.Error("a failed step read as done")
	}
	if unrecordedEnd(done, p, errors.New("the API server went away")) {
		t.Error("an error of the cluster read as the record's")
	}
}
