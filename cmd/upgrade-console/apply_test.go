package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/upgrade-console/upgrade-console/demo"
	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/demo/seed"
	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// startDemo runs a demo world at high speed for one test.
func startDemo(t *testing.T, sc scenario.Name) *demo.World {
	t.Helper()
	w, err := demo.Run(context.Background(), demo.Config{Scenario: sc, Speed: 50, AssetsDir: cptest.AssetsDir(), Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := w.Stop(); err != nil {
			t.Errorf("stopping the demo: %v", err)
		}
	})
	return w
}

func liveArgs(w *demo.World, cmd string, extra ...string) []string {
	return append([]string{cmd, "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName, "-f", w.TargetSpecPath}, extra...)
}

// The refusals come before any change: a lock held by another console, a
// preflight failure, no terminal to confirm on, read-only, unforced
// conflicts; then the upgrade runs to completion.
func TestApplyDemoRolling(t *testing.T) {
	w := startDemo(t, scenario.Rolling)
	ctx := context.Background()
	kube := kubernetes.NewForConfigOrDie(w.Config)

	t.Run("live plan", func(t *testing.T) {
		out, errOut, code := runCaptured(t, liveArgs(w, "plan", "-o", "json")...)
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var p struct {
			Versions struct {
				CurrentKubernetes string `json:"currentKubernetesVersion"`
				TargetKubernetes  string `json:"targetKubernetesVersion"`
			} `json:"versions"`
			Components []struct{ Key, Change string }  `json:"components"`
			Preflight  []struct{ Name, Status string } `json:"preflight"`
		}
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if p.Versions.CurrentKubernetes != "1.30" || p.Versions.TargetKubernetes != "1.31" || len(p.Components) == 0 || len(p.Preflight) != len(upgrade.Checks) {
			t.Errorf("plan %+v", p)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		for _, c := range []struct {
			args []string
			code int
			want string
		}{
			{[]string{"plan", "--kubeconfig", w.KubeconfigPath, "--cluster", "nope", "-f", w.TargetSpecPath}, ExitBadInput, `the spec is for cluster "mgmt", not "nope"`},
			{[]string{"plan", "--kubeconfig", w.KubeconfigPath, "--cluster", "mgmt", "-f", "/nonexistent.yaml"}, ExitBadInput, "/nonexistent.yaml: cannot read the cluster spec"},
			{liveArgs(w, "plan", "--skip", "upgrade-lock"), ExitBadInput, `check "upgrade-lock" cannot be skipped`},
			{[]string{"plan", "--kubeconfig", w.KubeconfigPath, "--cluster", "mgmt"}, ExitUsage, "-f/--filename is required"},
			{liveArgs(w, "plan", "--from-bundles", "x.yaml"), ExitUsage, "drop --from-bundles"},
		} {
			_, errOut, code := runCaptured(t, c.args...)
			if code != c.code || !strings.Contains(errOut, c.want) {
				t.Errorf("%v: exit %d (want %d), stderr %q (want %q)", c.args[3:], code, c.code, errOut, c.want)
			}
		}
	})

	t.Run("another console holds the lock", func(t *testing.T) {
		now := metav1.NewMicroTime(time.Now())
		_, err := kube.CoordinationV1().Leases("eksa-system").Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: upgrade.LockName(w.ClusterName), Namespace: "eksa-system"},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("alice@laptop/0a1b2c3d"), LeaseDurationSeconds: ptr.To(int32(600)),
				AcquireTime: &now, RenewTime: &now},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out, errOut, code := runCaptured(t, liveArgs(w, "apply", "--yes", "--force-conflicts")...)
		if code != ExitPreflight || !strings.Contains(out+errOut, "alice@laptop (console 0a1b2c3d)") {
			t.Errorf("exit %d, want %d naming the holder:\n%s\n%s", code, ExitPreflight, out, errOut)
		}
		// The spec the cluster runs starts no upgrade: the lock that
		// would block one does not make its apply a refusal (exit 3,
		// recorded), it has nothing to apply.
		state := t.TempDir()
		out, errOut, code = runCapturedIn(t, state, "apply", "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName, "-f", w.CurrentSpecPath, "--yes")
		if code != ExitOK || !strings.Contains(out, "the cluster already runs this spec: nothing to apply") || !strings.Contains(out, "this spec starts none, and nothing was changed") {
			t.Errorf("the current spec: exit %d, want %d, nothing to apply:\n%s\n%s", code, ExitOK, out, errOut)
		}
		if res, err := upgrade.ReadAudit(filepath.Join(state, "upgrade-console", upgrade.AuditFileName), upgrade.AuditFilter{}); err == nil && len(res.Entries) > 0 {
			t.Errorf("the current spec: recorded %+v", res.Entries)
		}
		if err := kube.CoordinationV1().Leases("eksa-system").Delete(ctx, upgrade.LockName(w.ClusterName), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("preflight failure blocks and says how to fix it", func(t *testing.T) {
		patch := func(v string) { patchPaused(t, w, v) }
		patch(`"true"`)
		state := t.TempDir()
		out, errOut, code := runCapturedIn(t, state, liveArgs(w, "apply", "--yes", "--force-conflicts")...)
		patch(`null`)
		// Turned away, and recorded: the attempt is part of the record.
		res, err := upgrade.ReadAudit(filepath.Join(state, "upgrade-console", upgrade.AuditFileName), upgrade.AuditFilter{})
		if err != nil || len(res.Entries) != 1 || res.Entries[0].Result != upgrade.AuditRefused || res.Entries[0].Action != "apply" ||
			!strings.Contains(res.Entries[0].Error, "eksa-reconcile-not-paused") {
			t.Errorf("audit of the blocked apply: %v %+v", err, res.Entries)
		}
		if code != ExitPreflight || !strings.Contains(errOut, "eksa-reconcile-not-paused") || !strings.Contains(errOut, "lock clear paused --cluster "+w.ClusterName) {
			t.Errorf("exit %d, want %d with the check and its fix:\n%s\n%s", code, ExitPreflight, out, errOut)
		}
		if !strings.Contains(out, "fail   eksa-reconcile-not-paused") {
			t.Errorf("plan output lacks the failed check:\n%s", out)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		notConfirmed := t.TempDir()
		// A run that cannot be confirmed is a wrong command line.
		if _, errOut, code := runCapturedIn(t, notConfirmed, liveArgs(w, "apply", "--force-conflicts")...); code != ExitUsage || !strings.Contains(errOut, "pass --yes") {
			t.Errorf("without a terminal and --yes: exit %d (want %d) %s", code, ExitUsage, errOut)
		}
		// Not confirmed is recorded, as for the recovery actions.
		if res, err := upgrade.ReadAudit(filepath.Join(notConfirmed, "upgrade-console", upgrade.AuditFileName), upgrade.AuditFilter{}); err != nil ||
			len(res.Entries) != 1 || res.Entries[0].Result != upgrade.AuditNotConfirmed || res.Entries[0].Action != "apply" {
			t.Errorf("audit of the apply not confirmed: %v %+v", err, res.Entries)
		}
		if _, errOut, code := runCaptured(t, liveArgs(w, "apply", "--yes", "--read-only")...); code != ExitUsage || !strings.Contains(errOut, "--read-only") {
			t.Errorf("read-only: exit %d %s", code, errOut)
		}
		unforced := t.TempDir()
		out, errOut, code := runCapturedIn(t, unforced, liveArgs(w, "apply", "--yes")...)
		if code != ExitPreflight || !strings.Contains(out, "owned by eks-a-cli") || !strings.Contains(errOut, "--force-conflicts") {
			t.Errorf("unforced conflicts: exit %d\n%s\n%s", code, out, errOut)
		}
		if res, err := upgrade.ReadAudit(filepath.Join(unforced, "upgrade-console", upgrade.AuditFileName), upgrade.AuditFilter{}); err != nil ||
			len(res.Entries) != 1 || res.Entries[0].Result != upgrade.AuditRefused || !strings.Contains(res.Entries[0].Error, "owned by another manager") {
			t.Errorf("audit of the unforced conflicts: %v %+v", err, res.Entries)
		}
		state := t.TempDir()
		out, errOut, code = runCapturedIn(t, state, liveArgs(w, "apply", "--dry-run", "--force-conflicts")...)
		if code != ExitOK || !strings.Contains(out, "spec.kubernetesVersion  1.30 → 1.31") || !strings.Contains(out, "nothing was changed") {
			t.Errorf("dry-run: exit %d\n%s\n%s", code, out, errOut)
		}
		// The dry run is in the audit log, as the recovery actions' are, with
		// the spec's absolute path.
		res, err := upgrade.ReadAudit(filepath.Join(state, "upgrade-console", upgrade.AuditFileName), upgrade.AuditFilter{})
		if err != nil || len(res.Entries) != 1 || res.Entries[0].Result != upgrade.AuditDryRun || !res.Entries[0].Forced ||
			!strings.Contains(res.Entries[0].Message, "spec "+w.TargetSpecPath) {
			t.Errorf("audit of the dry run: %v %+v", err, res.Entries)
		}
	})

	t.Run("upgrade to completion", func(t *testing.T) {
		applyToCompletion(t, w)
	})
}

func TestApplyDemoInPlace(t *testing.T) {
	w := startDemo(t, scenario.InPlace)
	applyToCompletion(t, w)
}

func applyToCompletion(t *testing.T, w *demo.World) {
	t.Helper()
	state := t.TempDir()
	out, errOut, code := runCapturedIn(t, state, liveArgs(w, "apply", "--yes", "--wait", "--force-conflicts", "--timeout", "10m")...)
	if code != ExitOK || !strings.Contains(out, "upgrade complete") || !strings.Contains(out, "lock is released") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "snapshot saved: ConfigMap eksa-system/upgrade-console-snapshot-mgmt-") {
		t.Errorf("snapshot location not shown:\n%s", out)
	}
	// Forcing is shown on the objects whose fields it took over: the
	// machine configs and the Cluster, not the unchanged datacenter config.
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "applied ") {
			continue
		}
		if forced := strings.HasSuffix(l, ", conflicts forced"); forced == strings.Contains(l, "VSphereDatacenterConfig") {
			t.Errorf("%q: forced %v", l, forced)
		}
	}
	st, err := upgrade.ReadLock(context.Background(), kubernetes.NewForConfigOrDie(w.Config), "eksa-system", w.ClusterName)
	if err != nil || st != nil {
		t.Errorf("lock after completion: %+v %v", st, err)
	}
	res, err := upgrade.ReadAudit(filepath.Join(state, "upgrade-console", upgrade.AuditFileName), upgrade.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range res.Entries {
		actions = append(actions, e.Action+":"+e.Result)
	}
	got := strings.Join(actions, " ")
	for _, want := range []string{"upgrade:started", "lock-acquire:ok", "snapshot:ok", "apply:ok", "lock-release:ok", "upgrade:finished"} {
		if !strings.Contains(got, want) {
			t.Errorf("audit log lacks %s: %s", want, got)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(state, "upgrade-console", "snapshots", "*.json")); len(files) != 1 {
		t.Errorf("local snapshot files: %v", files)
	}
	if _, err := os.Stat(w.TargetSpecPath); err != nil {
		t.Error(err)
	}
}

// A timeout while an in-place step has failed names the failed node and
// its `node retry` in the last lines: they said only that the upgrade may
// still be running and how to clear the lock, and the retry had been said
// once, minutes before.
func TestApplyTimeoutNamesTheFailedStep(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	w := startDemo(t, scenario.InPlaceNodeStepFails)
	out, errOut, code := runCaptured(t, liveArgs(w, "apply", "--yes", "--wait", "--force-conflicts", "--timeout", "20s")...)
	if code != ExitTimeout || !strings.Contains(errOut, "held up by a failed step that nothing retries on its own:\n  ! ") ||
		!strings.Contains(errOut, "KubeadmUpgraded") || !strings.Contains(errOut, "    next: ") || !strings.Contains(errOut, "upgrade-console node retry ") {
		t.Fatalf("exit %d, want %d naming the failed step and its retry:\n%s\n%s", code, ExitTimeout, out, errOut)
	}
}

func kubeDynamic(t *testing.T, w *demo.World) dynamic.Interface {
	t.Helper()
	return dynamic.NewForConfigOrDie(w.Config)
}

// A first etcd member that never becomes ready: the upgrade neither
// completes nor reports a failure, so --timeout ends the wait (exit 5) and
// the lock is kept for whoever investigates.
func TestApplyDemoTimeoutKeepsLock(t *testing.T) {
	w := startDemo(t, scenario.EtcdFirstMemberFails)
	out, errOut, code := runCaptured(t, liveArgs(w, "apply", "--yes", "--wait", "--force-conflicts", "--timeout", "3s")...)
	if code != ExitTimeout || !strings.Contains(errOut, "is kept") || !strings.Contains(errOut, "lock clear lease") ||
		!strings.Contains(errOut, "stopped following before the upgrade completed: --timeout 3s passed") || !strings.Contains(errOut, "may still be running") {
		t.Fatalf("exit %d, want %d saying why it stopped and that the lock is kept:\n%s\n%s", code, ExitTimeout, out, errOut)
	}
	st, err := upgrade.ReadLock(context.Background(), kubernetes.NewForConfigOrDie(w.Config), "eksa-system", w.ClusterName)
	if err != nil || !st.Held() {
		t.Fatalf("lock after the timeout: %+v %v", st, err)
	}
	// A second console is refused while the lock is there.
	out, errOut, code = runCaptured(t, liveArgs(w, "plan")...)
	if code != ExitPreflight || !strings.Contains(out, "fail   upgrade-lock") {
		t.Errorf("plan with the lock kept: exit %d\n%s\n%s", code, out, errOut)
	}
}

// The stale-lock world: an expired lease and a paused annotation left by an
// earlier, dead upgrade block the plan, each with its fix.
func TestPlanDemoStaleLock(t *testing.T) {
	w := startDemo(t, scenario.StaleLock)
	out, errOut, code := runCaptured(t, liveArgs(w, "plan")...)
	if code != ExitPreflight {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitPreflight, out, errOut)
	}
	for _, want := range []string{"fail   upgrade-lock", "stale upgrade lock", "upgrade-console lock clear lease", "fail   eksa-reconcile-not-paused"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	// lock status -o json: a marker set says what it blocks; one not set
	// blocks nothing, and has no "blocks" (a script read it as blocking).
	out, errOut, code = runCaptured(t, "lock", "status", "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName, "-o", "json")
	if code != ExitOK {
		t.Fatalf("lock status: exit %d\n%s", code, errOut)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("lock status -o json: %v\n%s", err, out)
	}
	notSet := 0
	for _, r := range rows {
		if r["id"] == "lease" && r["renewed"] == nil {
			t.Errorf("the lease says not when it was last renewed: %v", r)
		}
		_, has := r["blocks"]
		switch {
		case r["state"] == "not set" && has:
			t.Errorf("a marker not set says what it blocks: %v", r)
		case r["state"] == "not set":
			notSet++
		case !has:
			t.Errorf("a marker set does not say what it blocks: %v", r)
		}
	}
	if notSet == 0 {
		t.Errorf("no marker not set in the stale-lock world:\n%s", out)
	}
	// Clearing a marker that is not set said "No stale marker", with the
	// lease and paused stale beside it.
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	out, errOut, code = runCaptured(t, "lock", "clear", "node-label", "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName, "--yes")
	if code != ExitOK || !strings.Contains(out, "No stale node-label marker on "+w.ClusterName) || !strings.Contains(out, "stale: lease, paused") {
		t.Errorf("lock clear node-label: exit %d, %s\n%s", code, errOut, out)
	}
}

// A timeout that has already passed is refused before anything is read or
// written: no kubeconfig is needed to see it.
func TestApplyRefusesANegativeTimeoutBeforeConnecting(t *testing.T) {
	out, errOut, code := runCaptured(t, "apply", "--cluster", "mgmt", "-f", "no-such.yaml", "--kubeconfig", "no-such-kubeconfig",
		"--yes", "--wait", "--timeout", "-5m")
	if code != ExitBadInput || !strings.Contains(errOut, "--timeout: must not be negative") {
		t.Fatalf("exit %d, want %d naming the timeout\n%s\n%s", code, ExitBadInput, out, errOut)
	}
}

// apply --tui ignored --dry-run, --yes, --wait and --timeout: with --dry-run
// its enter applied the spec. They are a wrong command line with --tui,
// said before connecting.
func TestApplyTUIRefusesTheFlagsItWouldIgnore(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--dry-run"}, "--dry-run (press d on the plan screen)"},
		{[]string{"--yes"}, "--yes"},
		{[]string{"--wait", "--timeout", "5m"}, "--wait, --timeout"},
		// --timeout alone said "add --wait", which --tui then refused too.
		{[]string{"--timeout", "5m"}, "--timeout"},
	} {
		args := append([]string{"apply", "--tui", "--cluster", "mgmt", "-f", "no-such.yaml", "--kubeconfig", "no-such-kubeconfig"}, tc.flags...)
		_, errOut, code := runCaptured(t, args...)
		if code != ExitUsage || !strings.Contains(errOut, "--tui asks for the typed confirmation and follows the upgrade itself: leave out "+tc.want) {
			t.Errorf("%v: exit %d (want %d): %s", tc.flags, code, ExitUsage, errOut)
		}
	}
}

// Without --tui, --theme and --etcd-rollback-threshold were accepted and
// ignored (exit 0): nothing headless shows colours or the recovery menu.
// --stall-after tunes the follow, and without --wait nothing follows. Each
// is a wrong command line, said before connecting.
func TestApplyRefusesTheScreenFlagsWithoutTUI(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--wait", "--theme", "dark"}, "--theme only tunes the screens of --tui (their colours, the recovery menu), and nothing without --tui reads it: add --tui, or leave it out"},
		{[]string{"--wait", "--etcd-rollback-threshold", "1m", "--theme", "mono"}, "--theme and --etcd-rollback-threshold only tune the screens of --tui (their colours, the recovery menu), and nothing without --tui reads them: add --tui, or leave them out"},
		{[]string{"--dry-run", "--stall-after", "1m"}, "without --wait or --tui nothing follows: add --wait, or leave --stall-after out"},
	} {
		args := append([]string{"apply", "--cluster", "mgmt", "-f", "no-such.yaml", "--kubeconfig", "no-such-kubeconfig", "--yes"}, tc.flags...)
		_, errOut, code := runCaptured(t, args...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d (want %d): %s", tc.flags, code, ExitUsage, errOut)
		}
	}
}

// apply --wait said a stalled machine after a fixed 10 minutes whatever
// --stall-after said: the etcd member that never becomes ready went unsaid
// until the timeout.
func TestApplyWaitSaysAStallByStallAfter(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	w := startDemo(t, scenario.EtcdFirstMemberFails)
	out, errOut, code := runCaptured(t, liveArgs(w, "apply", "--yes", "--wait", "--force-conflicts", "--timeout", "8s", "--stall-after", "1s")...)
	if code != ExitTimeout || !strings.Contains(out, "! etcd machine ") || !strings.Contains(out, " not ready for ") {
		t.Fatalf("exit %d, want %d with the etcd machine said stalled:\n%s\n%s", code, ExitTimeout, out, errOut)
	}
}

// Interrupted while following, apply exits 5 as for --timeout, in the words
// the README gives exit 5: the console stopped before the upgrade
// completed, and the upgrade goes on.
func TestApplyDemoInterruptedWhileFollowing(t *testing.T) {
	w := startDemo(t, scenario.EtcdFirstMemberFails)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	root := newRootCmd()
	root.SetArgs(liveArgs(w, "apply", "--yes", "--wait", "--force-conflicts", "--timeout", "10m"))
	root.SetOut(&out)
	root.SetErr(&out)
	// The interrupt comes once the console follows: the spec is applied.
	go func() {
		for ctx.Err() == nil && !strings.Contains(out.String(), "following the upgrade") {
			time.Sleep(50 * time.Millisecond)
		}
		cancel()
	}()
	err := root.ExecuteContext(ctx)
	if code := exitCode(err); code != ExitTimeout || !strings.Contains(fmt.Sprint(err), "stopped following before the upgrade completed (interrupted)") ||
		!strings.Contains(fmt.Sprint(err), "the upgrade goes on in the cluster") {
		t.Fatalf("exit %d (%v), want %d saying it stopped following\n%s", code, err, ExitTimeout, out.String())
	}
	if !strings.Contains(out.String(), "the upgrade goes on in the cluster; the upgrade lock is released; follow it with") {
		t.Errorf("output lacks what became of the upgrade and the lock:\n%s", out.String())
	}
}

// Ctrl-C, SIGTERM or SIGHUP at apply's typed confirmation ends it as it ends a recovery
// command's (lock clear paused here): said, recorded not-confirmed, exit 1,
// nothing changed. It killed the process (status 130) with nothing said and
// nothing recorded: apply's prompt was not under the signal handling the
// recovery commands run under.
func TestApplyDemoInterruptedAtTheConfirmation(t *testing.T) {
	w := startDemo(t, scenario.Rolling)
	ctx := context.Background()
	// The signal is SIGTERM, which the commands take as they take Ctrl-C's
	// SIGINT (interruptible): a SIGINT sent to the test binary also reaches
	// the listener each teatest program leaves behind (teatest.NewTestModel
	// never stops it), which logs into its finished test and panics the
	// binary. Without the command's own handling, the SIGTERM would kill
	// the test binary: registered here too, it only reaches this channel
	// then, and the prompt is seen to ignore it.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	type ended struct {
		code   int
		stderr string
		audit  []upgrade.AuditEntry
	}
	// interruptAtPrompt runs the command on a terminal and sends the
	// process sig (SIGTERM, as a kill does; Ctrl-C's SIGINT goes the same
	// way; SIGHUP, as an SSH session that dropped) once the typed
	// confirmation asks for the name.
	interruptAtPrompt := func(t *testing.T, sig syscall.Signal, args ...string) ended {
		t.Helper()
		state := t.TempDir()
		r := startInTerminal(t, state, args...)
		r.waitScreen(t, "to confirm: ")
		if err := syscall.Kill(os.Getpid(), sig); err != nil {
			t.Fatal(err)
		}
		select {
		case <-r.done:
		case <-time.After(30 * time.Second):
			r.press(t, "no\n") // a wrong name ends the run
			r.wait(t, time.Minute)
			t.Fatalf("%v: %v at the typed confirmation was ignored (then exit %d, stderr %q)", args, sig, r.code, r.stderr)
		}
		res, err := upgrade.ReadAudit(filepath.Join(state, "upgrade-console", upgrade.AuditFileName), upgrade.AuditFilter{})
		if err != nil {
			t.Fatal(err)
		}
		return ended{code: r.code, stderr: r.stderr, audit: res.Entries}
	}
	const said = "upgrade-console: confirmation: interrupted at the prompt: nothing was changed"

	var recoveryCode int
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run("lock clear paused, "+sig.String(), func(t *testing.T) {
			patch := func(v string) { patchPaused(t, w, v) }
			patch(`"true"`)
			defer patch(`null`)
			e := interruptAtPrompt(t, sig, "lock", "clear", "paused", "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName)
			recoveryCode = e.code
			if e.code != ExitBadInput || !strings.Contains(e.stderr, said) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", e.code, ExitBadInput, e.stderr, said)
			}
			if n := len(e.audit); n == 0 || e.audit[n-1].Result != upgrade.AuditNotConfirmed {
				t.Errorf("audit log does not end with not-confirmed: %+v", e.audit)
			}
		})
	}

	t.Run("apply", func(t *testing.T) {
		e := interruptAtPrompt(t, syscall.SIGHUP, liveArgs(w, "apply", "--force-conflicts")...)
		if e.code != ExitBadInput || e.code != recoveryCode || !strings.Contains(e.stderr, said) {
			t.Errorf("exit %d (want %d, as lock clear's %d), stderr %q (want %q)", e.code, ExitBadInput, recoveryCode, e.stderr, said)
		}
		if len(e.audit) != 1 || e.audit[0].Result != upgrade.AuditNotConfirmed || e.audit[0].Action != "apply" ||
			!strings.Contains(e.audit[0].Message, "interrupted at the prompt") {
			t.Errorf("audit of the apply interrupted at the prompt: %+v", e.audit)
		}
		// Nothing was changed: no lock taken, the spec not applied.
		if st, err := upgrade.ReadLock(ctx, kubernetes.NewForConfigOrDie(w.Config), "eksa-system", w.ClusterName); err != nil || st != nil {
			t.Errorf("lock after the interrupted confirmation: %+v %v", st, err)
		}
	})
}

// syncBuffer is a bytes.Buffer the command writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// patchPaused sets the EKS-A Cluster's paused annotation to v, a JSON value
// (`"true"`, or `null` to remove it).
func patchPaused(t *testing.T, w *demo.World, v string) {
	t.Helper()
	body := `{"metadata":{"annotations":{"anywhere.eks.amazonaws.com/paused":` + v + `}}}`
	if _, err := kubeDynamic(t, w).Resource(upgrade.GVREKSACluster).Namespace(w.ClusterNamespace).Patch(context.Background(), w.ClusterName, types.MergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// An interrupt before the first write stops the apply with nothing changed,
// exit 5 and a line: a SIGTERM while the checks ran killed it unsaid (143),
// and a cancelled read was reported as bad input (1).
func TestApplyInterruptedBeforeTheStart(t *testing.T) {
	w := startDemo(t, scenario.Rolling)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out syncBuffer
	root := newRootCmd()
	root.SetArgs(liveArgs(w, "apply", "--yes", "--wait", "--force-conflicts"))
	root.SetOut(&out)
	root.SetErr(&out)
	err := root.ExecuteContext(ctx)
	if code := exitCode(err); code != ExitTimeout || !strings.Contains(fmt.Sprint(err), "stopped before the upgrade started (interrupted): nothing was changed") {
		t.Fatalf("exit %d (%v), want %d saying nothing was changed\n%s", code, err, ExitTimeout, out.String())
	}
	if st, err := upgrade.ReadLock(context.Background(), kubernetes.NewForConfigOrDie(w.Config), "eksa-system", w.ClusterName); err != nil || st != nil {
		t.Errorf("the interrupted apply left a lock: %+v %v", st, err)
	}
	if _, errOut, code := runCaptured(t, liveArgs(w, "apply", "--dry-run", "--wait")...); code != ExitUsage || !strings.Contains(errOut, "--dry-run starts none") {
		t.Errorf("--dry-run --wait: exit %d, want %d\n%s", code, ExitUsage, errOut)
	}
}

// An apply interrupted while the API server does not answer stops at once,
// with exit 5 and nothing changed: its connection ran outside the interrupt,
// and a CI job's SIGTERM waited for the reads' own timeouts (32 s against a
// server that never replies), past the grace most CI runners give before
// SIGKILL. The old code ended with the same exit, only that late: the test
// allows 10 s.
func TestApplyInterruptedWhileTheAPIServerIsSilent(t *testing.T) {
	kubeconfig, specPath := silentAPIServer(t)
	// Registered here too, so that the SIGTERM never kills the test
	// binary (as TestApplyDemoInterruptedAtTheConfirmation).
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		time.Sleep(time.Second)
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
	}()
	start := time.Now()
	_, errOut, code := runCaptured(t, "apply", "--kubeconfig", kubeconfig, "--cluster", "mgmt", "-f", specPath, "--yes", "--wait")
	took := time.Since(start)
	if code != ExitTimeout || !strings.Contains(errOut, "nothing was changed") || took > 10*time.Second {
		t.Fatalf("exit %d after %s (want %d soon after the SIGTERM at 1s), stderr %q", code, took.Round(time.Millisecond), ExitTimeout, errOut)
	}
}

// The apply that failed kept its lock; the cause fixed (a node retry, say),
// apply --wait run again follows the upgrade to its completion, applies
// nothing and holds no lock. It went green saying nothing of the kept lock,
// which blocks the next upgrade: it now says so, and leaves it.
func TestApplyWaitRerunSaysTheLockKeptForTheUpgrade(t *testing.T) {
	w := startDemo(t, scenario.Rolling)
	ctx := context.Background()
	kube := kubernetes.NewForConfigOrDie(w.Config)
	if out, errOut, code := runCaptured(t, liveArgs(w, "apply", "--yes", "--force-conflicts")...); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	then := metav1.NewMicroTime(time.Now().Add(-time.Minute))
	_, err := kube.CoordinationV1().Leases("eksa-system").Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: upgrade.LockName(w.ClusterName), Namespace: "eksa-system",
			Annotations: map[string]string{model.AnnotationLockKept: "the upgrade failed: node mgmt-md-0-a in-place step KubeadmUpgraded failed"}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("ops@bastion-1/0a1b2c3d"), LeaseDurationSeconds: ptr.To(int32(60)),
			AcquireTime: &then, RenewTime: &then},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCaptured(t, liveArgs(w, "apply", "--yes", "--wait", "--timeout", "3m")...)
	if code != ExitOK || !strings.Contains(out, "upgrade complete (followed for") ||
		!strings.Contains(out, "the upgrade lock is still kept (held by ops@bastion-1") ||
		!strings.Contains(out, "`upgrade-console lock clear lease --cluster "+w.ClusterName+" --kubeconfig "+model.ShellQuote(w.KubeconfigPath)+"` clears it") {
		t.Fatalf("exit %d, want 0 naming the kept lock:\n%s\n%s", code, out, errOut)
	}
	if st, err := upgrade.ReadLock(ctx, kube, "eksa-system", w.ClusterName); err != nil || !st.Held() || st.Kept == "" {
		t.Errorf("the kept lock after the rerun: %+v %v; want it left as it was", st, err)
	}
}

// silentAPIServer is an API server that takes every request and never
// replies, a kubeconfig for it and a spec file (the demo's rolling target).
func silentAPIServer(t *testing.T) (kubeconfig, specPath string) {
	t.Helper()
	hang := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // a server that takes the request and never replies
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(hang) })
	dir := t.TempDir()
	kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: s, cluster: {server: "%s", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: s, context: {cluster: s, user: u}}]
current-context: s
`, srv.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := scenario.For(scenario.Rolling, scenario.Options{ClusterName: "mgmt"})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := seed.TargetSpec(cfg)
	if err != nil {
		t.Fatal(err)
	}
	specPath = filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(specPath, spec, 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig, specPath
}

// A --sync-timeout that passes before the API server answers the first read
// names the flag and what to do; it said client-go's "client rate limiter
// Wait returned an error: context deadline exceeded".
func TestSyncTimeoutPassedBeforeTheFirstReadNamesTheFlag(t *testing.T) {
	kubeconfig, specPath := silentAPIServer(t)
	_, errOut, code := runCaptured(t, "plan", "--kubeconfig", kubeconfig, "--cluster", "mgmt", "-f", specPath, "--sync-timeout", "1s")
	if code != ExitBadInput || !strings.Contains(errOut, "--sync-timeout: 1s passed before the API server answered the read of Cluster default/mgmt") ||
		strings.Contains(errOut, "rate limiter") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// A first list that has not arrived when --sync-timeout passes names that
// flag: the message sent the operator to --request-timeout, which bounds
// each request and changes nothing here.
func TestSyncTimeoutWhileListingNamesTheFlag(t *testing.T) {
	w := startDemo(t, scenario.Rolling)
	p := startFaultProxy(t, w.Config)
	p.refuse(func(r *http.Request) bool { return r.URL.Path == "/api/v1/nodes" }, http.StatusServiceUnavailable)
	_, errOut, code := runCaptured(t, "plan", "--kubeconfig", p.kubeconfig(t, w.ClusterNamespace), "--cluster", w.ClusterName,
		"-f", w.TargetSpecPath, "--sync-timeout", "3s")
	if code != ExitBadInput || !strings.Contains(errOut, "--sync-timeout: the cluster's objects did not finish loading within 3s (still waiting for: ") ||
		!strings.Contains(errOut, "e.g. --sync-timeout 1m") || strings.Contains(errOut, "--request-timeout") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// Bad input said before anything is read: a --cluster no object can be
// named, a spec from standard input.
func TestClusterNameAndSpecFromStdinAreBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"plan", "--cluster", "default/mgmt", "-f", "x.yaml"},
		{"watch", "--cluster", "default/mgmt", "--plain"},
		{"lock", "status", "--cluster", "default/mgmt"},
		{"etcd", "rollback", "--cluster", "Mgmt", "--dry-run"},
	} {
		_, errOut, code := runCaptured(t, append(args, "--kubeconfig", "no-such-kubeconfig")...)
		if code != ExitBadInput || !strings.Contains(errOut, "--cluster: ") || !strings.Contains(errOut, "is not an object name") || !strings.Contains(errOut, "goes to -n") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
	kubeconfig, _ := silentAPIServer(t)
	_, errOut, code := runCaptured(t, "plan", "--kubeconfig", kubeconfig, "--cluster", "mgmt", "-f", "-", "--sync-timeout", "2s")
	if code != ExitBadInput || !strings.Contains(errOut, "-f -: the cluster spec is read from a file, not from standard input") {
		t.Errorf("-f -: exit %d, stderr %q", code, errOut)
	}
}
