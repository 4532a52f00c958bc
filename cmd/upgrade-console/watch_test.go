package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/upgrade-console/upgrade-console/demo"
	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/report"
	"github.com/upgrade-console/upgrade-console/themes"
	"github.com/upgrade-console/upgrade-console/tui"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

func TestWatchUsage(t *testing.T) {
	cases := []struct {
		args []string
		want string
		code int
	}{
		{[]string{"watch"}, "--cluster is required", ExitUsage},
		{[]string{"watch", "--cluster", "mgmt", "extra"}, "takes 0 argument", ExitUsage},
		// A flag's value that is wrong is bad input, as the README's table says.
		{[]string{"watch", "--cluster", "mgmt", "--theme", "solarized"}, "--theme: unknown theme", ExitBadInput},
		{[]string{"watch", "--cluster", "mgmt", "--timeout", "-1s"}, "--timeout: must not be negative", ExitBadInput},
		{[]string{"watch", "--cluster", "mgmt", "--timeout", "abc"}, `--timeout: invalid argument "abc"`, ExitBadInput},
		{[]string{"apply", "--cluster", "mgmt", "-f", "x.yaml", "--yes", "--timeout", "5m"}, "add --wait", ExitUsage},
		{[]string{"demo", "--scenario", "happy"}, "--scenario: ", ExitBadInput},
		{[]string{"demo", "--speed", "0"}, "--speed: must be positive", ExitBadInput},
		{[]string{"watch", "--cluster", "mgmt", "--stall-after", "-1s"}, "--stall-after: must be positive", ExitBadInput},
		// apply --tui offers the etcd rollback from the same dashboard.
		{[]string{"apply", "--cluster", "mgmt", "-f", "x.yaml", "--tui", "--etcd-rollback-threshold", "0"}, "--etcd-rollback-threshold: must be positive", ExitBadInput},
		{[]string{"plan", "--cluster", "mgmt", "-f", "x.yaml", "--sync-timeout", "0"}, "--sync-timeout: must be positive", ExitBadInput},
	}
	for _, c := range cases {
		_, errOut, code := runCaptured(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, code, errOut, c.code, c.want)
		}
	}
}

// The headless twin against the demo world: plain lines (stdout is a file,
// not a terminal), exit 5 when the timeout passes first, exit 0 once the
// rolling upgrade completes.
func TestWatchPlainFollowsDemoUpgrade(t *testing.T) {
	w, err := demo.Run(context.Background(), demo.Config{Scenario: scenario.Rolling, Speed: 20,
		AssetsDir: cptest.AssetsDir(), Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := w.Stop(); err != nil {
			t.Errorf("stopping the demo: %v", err)
		}
	})
	args := func(extra ...string) []string {
		return append([]string{"watch", "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName, "--exit-on-done"}, extra...)
	}

	// A script that names a cluster that is not there is told at once, not
	// after its timeout (or never, without one).
	t.Run("no such cluster", func(t *testing.T) {
		for _, a := range [][]string{{"--cluster", "nope"}, {"-n", "nope"}} {
			out, errOut, code := runCaptured(t, append(args("--plain"), a...)...)
			if code != ExitBadInput || !strings.Contains(errOut, "not found") || !strings.Contains(errOut, "check --cluster, and give the Cluster's namespace with -n") {
				t.Errorf("%v: exit %d, want %d naming the missing Cluster\n%s\n%s", a, code, ExitBadInput, out, errOut)
			}
		}
	})

	t.Run("timeout", func(t *testing.T) {
		out, errOut, code := runCaptured(t, args("--timeout", "1ms")...)
		if code != ExitTimeout || !strings.Contains(errOut, "--timeout 1ms passed") {
			t.Fatalf("exit %d, stderr %q; want %d\n%s", code, errOut, ExitTimeout, out)
		}
	})

	t.Run("done", func(t *testing.T) {
		// The upgrade starts only once the watch has printed its baseline,
		// so every step of it must appear as a change.
		dir := t.TempDir()
		type result struct {
			out, errOut string
			code        int
		}
		done := make(chan result, 1)
		go func() {
			out, errOut, code := runCapturedIn(t, dir, args("--plain", "--timeout", "3m")...)
			done <- result{out, errOut, code}
		}()
		ctx := context.Background()
		err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			b, _ := os.ReadFile(filepath.Join(dir, "stdout"))
			return strings.Contains(string(b), "phase: "), nil
		})
		if err != nil {
			t.Fatalf("the watch printed no baseline: %v", err)
		}
		spec, err := os.ReadFile(w.TargetSpecPath)
		if err != nil {
			t.Fatal(err)
		}
		if err := demo.ApplySpec(ctx, w.Config, spec); err != nil {
			t.Fatal(err)
		}
		r := <-done
		out, errOut, code := r.out, r.errOut, r.code
		if code != ExitOK {
			t.Fatalf("exit %d, stderr %q\n%s", code, errOut, out)
		}
		for _, want := range []string{
			"watch: cluster default/" + w.ClusterName,
			"phase etcd:",
			"EtcdadmCluster " + w.ClusterName + "-etcd: upgrading annotation cleared (rollout finished)",
			"upgrade: every completion milestone met; confirming it holds (the outcome line follows)",
			"outcome: done",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("plain output lacks %q:\n%s", want, out)
			}
		}
		for i, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if len(l) < 21 || l[4] != '-' || l[10] != 'T' || l[19] != 'Z' {
				t.Fatalf("line %d is not timestamped: %q", i, l)
			}
		}
	})
}

// How a watch ended is said truthfully: a timeout or a stop on a cluster
// at rest did not cut an upgrade short.
func TestWatchOutcomeWordsTheClusterAtRest(t *testing.T) {
	o := &watchOptions{timeout: 3 * time.Second, exitOnDone: true}
	for _, tc := range []struct {
		res  report.Result
		err  error
		want string
		code int
	}{
		{report.Result{Outcome: report.TimedOut, AtRest: true}, nil, "--timeout 3s passed with the cluster at rest: no upgrade was under way", ExitTimeout},
		{report.Result{Outcome: report.TimedOut}, nil, "--timeout 3s passed before the upgrade completed", ExitTimeout},
		{report.Result{Outcome: report.Running, AtRest: true}, nil, "stopped with the cluster at rest: no upgrade was under way", ExitTimeout},
		{report.Result{Outcome: report.Running}, nil, "stopped before the upgrade completed", ExitTimeout},
		{report.Result{Outcome: report.Failed}, nil, "the upgrade failed", ExitUpgradeFail},
		{report.Result{Outcome: report.Running, AtRest: true, Words: report.ReconnectingWords(time.Date(2026, 11, 23, 12, 19, 19, 0, time.UTC), "", time.Date(2026, 11, 23, 12, 20, 35, 0, time.UTC))},
			nil, "stopped while reconnecting to the API server; the connection was found lost at 12:19:19Z", ExitTimeout},
	} {
		err := outcomeError(tc.res, tc.err, o)
		if err == nil || err.Error() != tc.want && !strings.HasPrefix(err.Error(), tc.want) || exitCode(err) != tc.code {
			t.Errorf("%+v: %v (exit %d), want %q (exit %d)", tc.res, err, exitCode(err), tc.want, tc.code)
		}
	}
}

// --timeout without --exit-on-done: "give up after this long (exit 5)",
// the README's 5 when --timeout passes, by one rule for the plain watch and
// the dashboard. A failure the watch showed is not hidden behind it (4, as
// --exit-on-done gives); an upgrade the plain watch saw complete, and the
// API server confirmed, stays done (0). It exited 0 whenever the plain
// watch had reached an outcome: on a cluster at rest (judged done within
// seconds), and after printing "outcome: failed: …".
func TestWatchTimeoutExitCodeWithoutExitOnDone(t *testing.T) {
	o := &watchOptions{timeout: 8 * time.Second}
	lostAt := time.Date(2026, 11, 23, 12, 19, 19, 0, time.UTC)
	now := lostAt.Add(76 * time.Second)
	reconnecting := &model.ClusterState{Connection: model.Reconnecting, ConnectionSince: lostAt}
	for _, tc := range []struct {
		name string
		res  report.Result
		err  error
		want string
		code int
	}{
		{"plain at rest", report.Result{Outcome: report.TimedOut, AtRest: true, Deadline: true}, nil, "--timeout 8s passed with the cluster at rest: no upgrade was under way", ExitTimeout},
		{"plain under way", report.Result{Outcome: report.TimedOut, Deadline: true}, nil, "--timeout 8s passed before the upgrade completed", ExitTimeout},
		{"plain failed", report.Result{Outcome: report.Failed, Deadline: true}, nil, "the upgrade failed (see the failure above)", ExitUpgradeFail},
		{"plain upgraded", report.Result{Outcome: report.Done, Deadline: true}, nil, "", ExitOK},
		{"dashboard failed", dashboardDeadline(report.Failed, nil, now), nil, "the upgrade failed (see the failure above)", ExitUpgradeFail},
		{"dashboard done", dashboardDeadline(report.Done, nil, now), nil, "--timeout 8s passed before the upgrade completed", ExitTimeout},
		{"dashboard reconnecting", dashboardDeadline(report.Done, reconnecting, now), nil,
			"--timeout 8s passed while reconnecting to the API server; the connection was found lost at 12:19:19Z", ExitTimeout},
		{"dashboard running", dashboardDeadline(report.Running, nil, now), nil, "--timeout 8s passed before the upgrade completed", ExitTimeout},
		// A stop (q, SIGTERM) without --exit-on-done is 0, as the README
		// says, but for a failure the watch showed: a CI job cancelled
		// after "outcome: failed" went green.
		{"stopped failed", report.Result{Outcome: report.Failed}, nil, "the upgrade failed (see the failure above)", ExitUpgradeFail},
		{"stopped reconnecting", report.Result{Outcome: report.Running, Words: report.ReconnectingWords(lostAt, "", now)}, nil, "", ExitOK},
		// The watch's own bug, not the outcome.
		{"bug", report.Result{Outcome: report.TimedOut, Deadline: true}, &model.InternalError{Where: "the watch", Panic: "x"}, "internal error", ExitInternal},
		// Ended at a recovery action's typed confirmation: 1, as the
		// headless command not confirmed (it was 0); a failure shown
		// still comes first.
		{"not confirmed", report.Result{Outcome: report.Running}, errors.Join(nil, &tui.RecoveryNotConfirmedError{Action: "etcd-rollback"}),
			"the typed confirmation of etcd-rollback: nothing was changed", ExitBadInput},
		{"not confirmed after a failure", report.Result{Outcome: report.Failed}, &tui.RecoveryNotConfirmedError{Action: "node-retry"},
			"the upgrade failed (see the failure above)\nconfirmation: the console ended at the typed confirmation of node-retry", ExitUpgradeFail},
	} {
		err := outcomeError(tc.res, tc.err, o)
		code := ExitOK
		if err != nil {
			code = exitCode(err)
		}
		if code != tc.code || tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %+v: %v (exit %d), want %q (exit %d)", tc.name, tc.res, err, code, tc.want, tc.code)
		}
	}
}

// The same against a demo world, plain and dashboard: at rest, then with
// the upgrade failed (etcd rolled back by upgrade-console: a failure the
// judge calls at once).
func TestWatchTimeoutAgainstTheDemo(t *testing.T) {
	w := startDemo(t, scenario.Rolling)
	args := func(extra ...string) []string {
		return append([]string{"watch", "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName}, extra...)
	}
	lastLine := func(out string) string {
		lines := strings.Split(strings.TrimSpace(out), "\n")
		return lines[len(lines)-1]
	}

	// At rest: judged done (at rest) after the 5 s hold, then the timeout.
	out, errOut, code := runCaptured(t, args("--plain", "--timeout", "10s")...)
	if code != ExitTimeout || !strings.Contains(errOut, "--timeout 10s passed with the cluster at rest: no upgrade was under way") {
		t.Errorf("plain at rest: exit %d, stderr %q, want %d\n%s", code, errOut, ExitTimeout, out)
	}
	if !strings.Contains(out, "outcome: done (the cluster was at rest") || !strings.HasSuffix(lastLine(out), "outcome: timed out with the cluster at rest: no upgrade was under way") {
		t.Errorf("plain at rest: want the done at rest, then the timeout at rest, last:\n%s", out)
	}
	r := startInTerminal(t, t.TempDir(), args("--timeout", "10s")...)
	r.wait(t, time.Minute)
	if r.code != ExitTimeout || !strings.Contains(r.stderr, "--timeout 10s passed with every completion milestone met") {
		t.Errorf("dashboard at rest: exit %d, stderr %q, want %d", r.code, r.stderr, ExitTimeout)
	}

	record := `{"phase":"done","by":"ops@bastion","startedAt":"2026-11-23T12:00:00Z"}`
	body := fmt.Sprintf(`{"metadata":{"annotations":{%q:"true",%q:%q}}}`, model.AnnotationEKSAPaused, model.AnnotationEtcdRollbackRecord, record)
	if _, err := kubeDynamic(t, w).Resource(upgrade.GVREKSACluster).Namespace(w.ClusterNamespace).Patch(context.Background(), w.ClusterName, types.MergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// Within the completion rule's hold: the failure is the outcome.
	out, errOut, code = runCaptured(t, args("--plain", "--timeout", "3s")...)
	if code != ExitUpgradeFail || !strings.Contains(out, "outcome: failed: etcd was rolled back by upgrade-console") || !strings.Contains(errOut, "the upgrade failed") {
		t.Errorf("plain failed: exit %d, stderr %q, want %d\n%s", code, errOut, ExitUpgradeFail, out)
	}
	r = startInTerminal(t, t.TempDir(), args("--timeout", "3s")...)
	r.wait(t, time.Minute)
	if r.code != ExitUpgradeFail {
		t.Errorf("dashboard failed: exit %d, stderr %q, want %d", r.code, r.stderr, ExitUpgradeFail)
	}
}

// cutProxy forwards TCP to an API server until cut, which closes every
// connection and refuses new ones: to a client, the API server is gone, as
// when its process is killed.
type cutProxy struct {
	ln     net.Listener
	mu     sync.Mutex
	conns  []net.Conn
	isCut  bool
	target string
}

func startCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			if !p.track(c, u) {
				continue
			}
			go func() { _, _ = io.Copy(u, c); _ = u.Close() }()
			go func() { _, _ = io.Copy(c, u); _ = c.Close() }()
		}
	}()
	t.Cleanup(p.cut)
	return p
}

func (p *cutProxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.isCut {
		for _, c := range cs {
			_ = c.Close()
		}
		return false
	}
	p.conns = append(p.conns, cs...)
	return true
}

func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.isCut = true
	_ = p.ln.Close()
	for _, c := range p.conns {
		_ = c.Close()
	}
}

// With the API server gone, the plain watch ends when its --timeout passes,
// not when client-go's reflectors have slept out their retry backoff (it
// printed its outcome at 60s and exited at 90s), and it says the lost
// connection once, not one raw error line per kind and retry.
func TestWatchEndsOnTimeWithTheAPIServerGone(t *testing.T) {
	w := startDemo(t, scenario.Rolling)
	u, err := url.Parse(w.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	proxy := startCutProxy(t, u.Host)
	cfg := rest.CopyConfig(w.Config)
	cfg.Host = "https://" + proxy.ln.Addr().String()

	const timeout = 25 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	deadline, _ := ctx.Deadline()
	out := &syncBuffer{}
	ended := make(chan error, 1)
	go func() {
		_, err := follow(ctx, out, followTarget{config: cfg, cluster: w.ClusterName, namespace: w.ClusterNamespace, context: "test"},
			&watchOptions{plain: true, stallAfter: time.Hour, nodeLabel: "x"}, themes.Mono)
		ended <- err
	}()
	if err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		return strings.Contains(out.String(), "phase: "), nil
	}); err != nil {
		t.Fatalf("the watch printed no baseline:\n%s", out.String())
	}
	proxy.cut()
	select {
	case err := <-ended:
		if late := time.Since(deadline); late > stopWithin+2*time.Second {
			t.Errorf("the watch ended %s after its timeout", late.Round(100*time.Millisecond))
		}
		if !errors.Is(err, context.DeadlineExceeded) && err != nil {
			t.Errorf("follow: %v", err)
		}
	case <-time.After(timeout + time.Minute):
		t.Fatal("the watch did not end")
	}
	got := out.String()
	if n := strings.Count(got, " connection: reconnecting: "); n != 1 || strings.Contains(got, " watch ") {
		t.Errorf("want one line for the lost connection (with its error) and none per kind, got %d:\n%s", n, got)
	}
	// It had not seen the cluster since the connection was lost: it says
	// so, not "timed out with the cluster at rest".
	if !strings.Contains(got, "outcome: timed out while reconnecting to the API server; the connection was found lost at ") ||
		!strings.Contains(got, ", the cluster then last known at rest") {
		t.Errorf("no outcome line saying the connection was lost:\n%s", got)
	}
}

// --timeout bounds the plain watch's first read of the Cluster too: against
// an API server that accepts connections and never answers (a frozen
// process), the read waited for client-go's own timeouts, past --timeout.
func TestWatchTimeoutBoundsTheFirstRead(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // accepted, never answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			_ = c.Close()
		}
	})
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters:
- name: frozen
  cluster: {server: "https://`+ln.Addr().String()+`", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: t}
contexts:
- name: frozen
  context: {cluster: frozen, user: u, namespace: default}
current-context: frozen
`), 0o600); err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	root := newRootCmd()
	root.SetArgs([]string{"watch", "--plain", "--cluster", "mgmt", "--timeout", "1s", "--kubeconfig", kc})
	root.SetOut(&out)
	root.SetErr(&out)
	start := time.Now()
	err = root.ExecuteContext(context.Background())
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the watch ended %s after its start, with --timeout 1s", took.Round(100*time.Millisecond))
	}
	if code := exitCode(err); code != ExitTimeout || !strings.Contains(fmt.Sprint(err), "--timeout 1s passed before the API server answered the read of Cluster default/mgmt") {
		t.Errorf("exit %d (%v), want %d saying --timeout passed before the first read was answered", code, err, ExitTimeout)
	}
}

// An API server that takes the connection and never answers (a frozen
// process): the plain watch waited client-go's TLS handshake timeout, then
// ended with exit 1 as if the kubeconfig were wrong. It waits, says so once,
// and --timeout ends it (5), as the README has it.
func TestPlainWatchWaitsForAnAPIServerThatDoesNotAnswer(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := strings.Replace(`apiVersion: v1
kind: Config
clusters:
- name: frozen
  cluster:
    server: https://ADDR
    insecure-skip-tls-verify: true
contexts:
- name: frozen
  context:
    cluster: frozen
    user: nobody
current-context: frozen
users:
- name: nobody
  user:
    token: x
`, "ADDR", cptest.Frozen(t), 1)
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCaptured(t, "watch", "--plain", "--exit-on-done", "--cluster", "mgmt", "--kubeconfig", kubeconfig, "--timeout", "14s")
	if code != ExitTimeout || !strings.Contains(out, "connection: the API server does not answer (net/http: TLS handshake timeout); waiting for it") ||
		!strings.Contains(errOut, "--timeout 14s passed before the API server answered") {
		t.Errorf("exit %d (want %d)\nstdout %q\nstderr %q", code, ExitTimeout, out, errOut)
	}
}

// A dashboard that called the upgrade failed leaves an outcome line on the
// terminal (the alternate screen took the failure with it, and "see the
// failure above" pointed at nothing): the failure as it judged it, and,
// after a recovery let the upgrade complete, that it did, by the watch's own
// rule: a cluster whose etcd was rolled back is Ready on its old version,
// paused, and not complete.
func TestDashboardFailedLineSaysARecoveredUpgrade(t *testing.T) {
	tg := followTarget{cluster: "mgmt", namespace: "default", conn: model.ConnFlags{{Name: "context", Value: "prod"}}}
	ready := func(annotations map[string]string) *model.ClusterState {
		return &model.ClusterState{Cluster: &model.EKSACluster{Meta: model.Meta{Name: "mgmt", Namespace: "default", Generation: 2, Annotations: annotations}, ObservedGeneration: 2,
			Conditions: model.Conditions{{Type: "ControlPlaneReady", Status: "True"}, {Type: "DefaultCNIConfigured", Status: "True"},
				{Type: "WorkersReady", Status: "True"}, {Type: "Ready", Status: "True"}}}}
	}
	now := time.Now()
	const why = "node mgmt-cp-1 in-place step KubeadmUpgraded failed"
	if got := dashboardFailedLine(tg, ready(nil), why, now); got != "outcome: failed, then completed: "+why+"; every completion milestone is met since (a recovery let it complete); the exit code (4) says the failure the dashboard saw" {
		t.Errorf("recovered: %q", got)
	}
	rolledBack := ready(map[string]string{model.AnnotationEKSAPaused: "true",
		model.AnnotationEtcdRollbackRecord: `{"phase":"done","newMachine":"mgmt-etcd-x","by":"ops"}`})
	const rb = "etcd was rolled back by upgrade-console (ops): …"
	if got := dashboardFailedLine(tg, rolledBack, rb, now); got != "outcome: failed: "+rb+"; `upgrade-console watch --cluster mgmt --context prod --plain` prints where it stands" {
		t.Errorf("rolled back: %q", got)
	}
	if got := dashboardFailedLine(tg, nil, "", now); got != "outcome: failed: the dashboard called the upgrade of Cluster default/mgmt failed; `upgrade-console watch --cluster mgmt --context prod --plain` prints where it stands" {
		t.Errorf("no reason: %q", got)
	}
}

// watch whose audit log cannot be opened (a directory at its path) makes
// no recovery action, as no action may run unrecorded, and said why in
// the log file alone: R on the dashboard did nothing. It returns why, for
// R to say: the log's path, what is wrong and the fix, then shorter forms
// down to one that fits 40 columns.
func TestRecoveryActionsSayWhyTheAuditLogRefused(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	path := filepath.Join(state, "upgrade-console", upgrade.AuditFileName)
	if err := os.MkdirAll(path, 0o700); err != nil {
		t.Fatal(err)
	}
	tg := followTarget{config: &rest.Config{Host: "https://127.0.0.1:1"}, cluster: "mgmt", namespace: "default", context: "test"}
	actions, _, why := recoveryActions(tg, upgrade.LocalHolder(), false, "", time.Minute)
	if len(actions) != 0 {
		t.Fatalf("%d recovery actions without an audit log", len(actions))
	}
	if len(why) == 0 {
		t.Fatal("no reason given for the missing recovery menu")
	}
	for _, want := range []string{path, "is a directory", "XDG_STATE_HOME"} {
		if !strings.Contains(why[0], want) {
			t.Errorf("the longest reason %q lacks %q", why[0], want)
		}
	}
	if last := why[len(why)-1]; len("R: no recovery: "+last) > 37 {
		t.Errorf("the shortest reason %q does not fit 40 columns", last)
	}
	if _, _, why := recoveryActions(tg, upgrade.LocalHolder(), true, "", time.Minute); why != nil {
		t.Errorf("read-only, a reason of its own: %q", why)
	}
}

// With no state directory (HOME and XDG_STATE_HOME unset, as in a CI
// container) the log has no path: the forms after the first read "audit
// log : <the whole error with its fix> (set XDG_STATE_HOME elsewhere)",
// longer than the first, so that R at 140-180 columns said only "no audit
// log". Each form is shorter than the one before, and the short ones name
// the cause and the fix.
func TestRecoveryActionsSayNoStateDirectory(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "")
	tg := followTarget{config: &rest.Config{Host: "https://127.0.0.1:1"}, cluster: "mgmt", namespace: "default", context: "test"}
	actions, _, why := recoveryActions(tg, upgrade.LocalHolder(), false, "", time.Minute)
	if len(actions) != 0 || len(why) == 0 {
		t.Fatalf("%d recovery actions, reasons %q", len(actions), why)
	}
	for i := 1; i < len(why); i++ {
		if len(why[i]) >= len(why[i-1]) {
			t.Errorf("form %d %q is not shorter than the one before %q", i, why[i], why[i-1])
		}
	}
	var fits string
	for _, f := range why {
		if len("R: no recovery: "+f) <= 140 {
			fits = f
			break
		}
	}
	if !strings.Contains(fits, "no state directory") || !strings.Contains(fits, "XDG_STATE_HOME or HOME") {
		t.Errorf("the form R shows at 140 columns is %q: want the cause and the fix", fits)
	}
	if !slices.Contains(why, "no audit log: set XDG_STATE_HOME or HOME") {
		t.Errorf("forms %q lack a short one naming the fix", why)
	}
}

// A dashboard quit (or timed out) after the EKS-A Cluster it watched was
// deleted printed its earlier verdict, "outcome: done: every completion
// milestone … confirmed by the API server", of a Cluster no longer there.
// It ends as the plain watch stopped then ends: the same line, and the
// same result for the exit code. A failure it saw stands.
func TestDashboardSaysTheClusterWasDeleted(t *testing.T) {
	gone := &model.ClusterState{ClusterName: "mgmt", Namespace: "default", Connection: model.Live,
		Sources: map[model.Kind]model.SourceStatus{model.KindEKSACluster: {Installed: true, Synced: true}}}
	const want = "outcome: stopped after the EKS-A Cluster default/mgmt was deleted: there is no upgrade left to follow"
	for _, o := range []report.Outcome{report.Done, report.Running} {
		res, line, ok := dashboardGone(o, gone)
		if !ok || line != want || res.Outcome != o {
			t.Errorf("%s: %v %q %+v, want %q", o, ok, line, res, want)
		}
		if err := outcomeError(res, nil, &watchOptions{}); err != nil {
			t.Errorf("%s: exit %v, want 0 as the plain watch stopped", o, err)
		}
	}
	if _, _, ok := dashboardGone(report.Failed, gone); ok {
		t.Error("a failure the dashboard saw is replaced by the deletion")
	}
	if _, _, ok := dashboardGone(report.Done, &model.ClusterState{Cluster: &model.EKSACluster{}, Sources: gone.Sources}); ok {
		t.Error("a Cluster still there reads as deleted")
	}
	res := dashboardDeadline(report.Done, gone, time.Now())
	if got := res.Cut("--timeout 1m passed"); got != "--timeout 1m passed after the EKS-A Cluster default/mgmt was deleted: there is no upgrade left to follow" {
		t.Errorf("timed out: %q", got)
	}
}

// Quit on a cluster at rest, the dashboard printed "outcome: done: every
// completion milestone of Cluster … met and confirmed by the API server",
// read as an upgrade seen through, where watch --plain says none was under
// way. It says the plain watch's words; an upgrade it saw complete keeps
// its own.
func TestDashboardDoneAtRestSaysThePlainWatchsWords(t *testing.T) {
	tgt := followTarget{cluster: "mgmt", namespace: "default"}
	if got, want := dashboardDoneLine(tgt, true), "outcome: done (the cluster was at rest when the watch began: no upgrade was under way)"; got != want {
		t.Errorf("at rest: %q, want %q", got, want)
	}
	if got := dashboardDoneLine(tgt, false); got != "outcome: done: every completion milestone of Cluster default/mgmt met and confirmed by the API server" {
		t.Errorf("an upgrade seen complete: %q", got)
	}
}
