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
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/upgrade-console/upgrade-console/demo"
	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/report"
	"github.com/upgrade-console/upgrade-console/themes"
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
			if code != ExitBadInput || !strings.Contains(errOut, "not found") || !strings.Contains(errOut, "check --cluster and --namespace") {
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
	} {
		err := outcomeError(tc.res, tc.err, o)
		if err == nil || err.Error() != tc.want && !strings.HasPrefix(err.Error(), tc.want) || exitCode(err) != tc.code {
			t.Errorf("%+v: %v (exit %d), want %q (exit %d)", tc.res, err, exitCode(err), tc.want, tc.code)
		}
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
	if !strings.Contains(got, "outcome: timed out") {
		t.Errorf("no outcome line:\n%s", got)
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
