package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/upgrade-console/upgrade-console/demo"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// faultProxy is an HTTP proxy in front of a demo world's API server that
// refuses the requests a rule picks, as an API server that stopped answering
// them, or an RBAC that forbids them, would: everything else (the lists and
// watches) goes through. The command under test reaches it through the
// kubeconfig it writes, so the command builds its clients as in production.
type faultProxy struct {
	srv *httptest.Server

	mu      sync.Mutex
	rule    func(*http.Request) bool
	status  int // of a refusal: 503 or 403
	refused int // requests the rule refused
	// passed counts the requests watched picks that went through.
	passed  int
	watched func(*http.Request) bool
}

func startFaultProxy(t *testing.T, target *rest.Config) *faultProxy {
	t.Helper()
	rt, err := rest.TransportFor(target)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(target.Host)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			// The proxy's transport carries the demo's admin credentials.
			r.Out.Header.Del("Authorization")
		},
		Transport:     rt,
		FlushInterval: -1, // watches stream
		ErrorLog:      log.New(io.Discard, "", 0),
	}
	p := &faultProxy{}
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status, refused := p.refuses(r); refused {
			writeStatus(w, status, r)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	p.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	p.srv.StartTLS()
	t.Cleanup(func() {
		p.srv.CloseClientConnections()
		p.srv.Close()
	})
	return p
}

// refuses reports whether the rule refuses r, and with which status.
func (p *faultProxy) refuses(r *http.Request) (status int, refused bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.rule != nil && p.rule(r):
		p.refused++
		return p.status, true
	case p.watched != nil && p.watched(r):
		p.passed++
	}
	return 0, false
}

// refuse makes the proxy answer the requests rule picks with status, as
// refused (nil: refuse none again).
func (p *faultProxy) refuse(rule func(*http.Request) bool, status int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rule, p.status = rule, status
}

// watch counts the requests match picks that the proxy lets through.
func (p *faultProxy) watch(match func(*http.Request) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watched = match
}

func (p *faultProxy) counts() (refused, passed int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused, p.passed
}

// writeStatus answers as the API server does, with a Status the client
// turns into an API error.
func writeStatus(w http.ResponseWriter, code int, r *http.Request) {
	reason, details := "ServiceUnavailable", ""
	switch code {
	case http.StatusForbidden:
		reason = "Forbidden"
	case http.StatusConflict:
		// As server-side apply refuses a field another manager owns.
		reason = "Conflict"
		details = `,"details":{"causes":[{"reason":"FieldManagerConflict","message":"conflict with \"flux\" using anywhere.eks.amazonaws.com/v1alpha1","field":".spec.kubernetesVersion"}]}`
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the test proxy refuses %s %s","reason":%q%s,"code":%d}`,
		r.Method, r.URL.Path, reason, details, code)
}

// kubeconfig writes a kubeconfig that reaches the API server through the
// proxy, in namespace ns.
func (p *faultProxy) kubeconfig(t *testing.T, ns string) string {
	t.Helper()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters:
- name: proxied
  cluster: {server: "`+p.srv.URL+`", insecure-skip-tls-verify: true}
users:
- name: u
  user: {}
contexts:
- name: proxied
  context: {cluster: proxied, user: u, namespace: `+ns+`}
current-context: proxied
`), 0o600); err != nil {
		t.Fatal(err)
	}
	return kc
}

// readsTheCluster picks the read of the one EKS-A Cluster, by name: what
// upgrade.ConfirmCluster asks (the watchers list and watch the collection).
func readsTheCluster(w *demo.World) func(*http.Request) bool {
	path := fmt.Sprintf("/apis/%s/%s/namespaces/%s/%s/%s", upgrade.GVREKSACluster.Group, upgrade.GVREKSACluster.Version,
		w.ClusterNamespace, upgrade.GVREKSACluster.Resource, w.ClusterName)
	return func(r *http.Request) bool { return r.Method == http.MethodGet && r.URL.Path == path }
}

// terminalRun is the CLI run in-process as main does, on a pseudo-terminal
// (its stdin and stdout, as an operator's), stderr to a file: the dashboard
// and the plan screen draw only on a terminal.
type terminalRun struct {
	ptmx   *os.File
	screen syncBuffer
	done   chan struct{}
	code   int
	stderr string
}

func startInTerminal(t *testing.T, dir string, args ...string) *terminalRun {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", dir)
	t.Setenv("NO_COLOR", "1")
	t.Setenv("TERM", "xterm-256color")
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 50, Cols: 160}); err != nil {
		t.Fatal(err)
	}
	errF, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	r := &terminalRun{ptmx: ptmx, done: make(chan struct{})}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(&r.screen, ptmx)
	}()
	oldIn, oldOut, oldErr := os.Stdin, os.Stdout, os.Stderr
	os.Stdin, os.Stdout, os.Stderr = tty, tty, errF
	go func() {
		defer close(r.done)
		code := run(args)
		os.Stdin, os.Stdout, os.Stderr = oldIn, oldOut, oldErr
		// What the command wrote last (the lines said once the UI gave the
		// screen back) may still sit in the terminal: with the terminal's
		// one end closed, the reader drains it and stops, and only then
		// is the run over (a test reading the screen at once lost them).
		_ = tty.Close()
		select {
		case <-copied:
		case <-time.After(10 * time.Second):
		}
		_ = errF.Close()
		e, _ := os.ReadFile(errF.Name())
		r.code, r.stderr = code, string(e)
	}()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			// The test gave up on it: the operator's ctrl-c.
			_, _ = ptmx.Write([]byte{0x03})
			select {
			case <-r.done:
			case <-time.After(time.Minute):
				t.Error("the command did not end on ctrl-c")
			}
		}
		_ = tty.Close()
		_ = ptmx.Close()
	})
	return r
}

// press types keys on the terminal.
func (r *terminalRun) press(t *testing.T, keys string) {
	t.Helper()
	if _, err := r.ptmx.Write([]byte(keys)); err != nil {
		t.Fatal(err)
	}
}

func (r *terminalRun) ended() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// waitScreen waits until the terminal shows text; it fails the test when
// the command ends first.
func (r *terminalRun) waitScreen(t *testing.T, text string) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		return strings.Contains(r.screen.String(), text) || r.ended(), nil
	}); err != nil || !strings.Contains(r.screen.String(), text) {
		<-r.done
		t.Fatalf("the terminal never showed %q (exit %d, stderr %q)", text, r.code, r.stderr)
	}
}

// confirmStart starts the upgrade from apply --tui's plan screen: enter,
// the cluster's name typed in the confirmation, its conflicts taken over
// (tab), enter.
func (r *terminalRun) confirmStart(t *testing.T, cluster string) {
	t.Helper()
	r.waitScreen(t, "PREFLIGHT")
	r.press(t, "\r")
	r.waitScreen(t, "type the cluster name")
	r.press(t, cluster)
	time.Sleep(200 * time.Millisecond)
	r.press(t, "\t")
	time.Sleep(200 * time.Millisecond)
	r.press(t, "\r")
}

// wait waits for the command to end.
func (r *terminalRun) wait(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(within):
		t.Fatalf("the command did not end within %s", within)
	}
}

// watch --plain says "outcome: done" only once the API server, read after
// the completion rule has held, shows the Cluster the watch holds
// (runWatch builds the confirmation from upgrade.ConfirmCluster and follow
// passes it to report.WatchResult): a watch on an API server that stopped
// answering delivers nothing, so the rule holding on what it delivered
// proves nothing. Through a proxy that refuses that one read, the watch
// says it was not confirmed and holds again; once the read is answered, it
// is done.
func TestWatchPlainConfirmsCompletionWithTheAPIServer(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	w := startDemo(t, scenario.Rolling) // at rest: the rule holds at once
	p := startFaultProxy(t, w.Config)
	read := readsTheCluster(w)
	p.watch(read)

	var out syncBuffer
	root := newRootCmd()
	root.SetArgs([]string{"watch", "--plain", "--kubeconfig", p.kubeconfig(t, w.ClusterNamespace), "--cluster", w.ClusterName,
		"--exit-on-done", "--timeout", "3m"})
	root.SetOut(&out)
	root.SetErr(&out)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ended := make(chan error, 1)
	go func() { ended <- root.ExecuteContext(ctx) }()
	end := func() error {
		t.Helper()
		select {
		case err := <-ended:
			return err
		case <-time.After(2 * time.Minute):
			cancel()
			t.Fatalf("the watch did not end:\n%s", out.String())
			return nil
		}
	}

	// The first read of the Cluster (the check that it exists) is
	// answered; from the baseline on, the confirming read is refused. The
	// rule must hold 5s before it counts: the baseline comes first.
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return strings.Contains(out.String(), "phase: "), nil
	}); err != nil {
		t.Fatalf("the watch printed no baseline:\n%s", out.String())
	}
	p.refuse(read, http.StatusServiceUnavailable)

	const notConfirmed = "upgrade: every completion milestone met, but the API server did not confirm it (reading Cluster "
	select {
	case err := <-ended:
		refused, _ := p.counts()
		t.Fatalf("the watch ended (exit %d, %v) with the read of the Cluster refused %d time(s): it said the upgrade done without the API server confirming it\n%s",
			codeOf(err), err, refused, out.String())
	case <-waitFor(t, func() bool { return strings.Contains(out.String(), notConfirmed) }):
	case <-time.After(2 * time.Minute):
		t.Fatalf("no line saying the API server did not confirm the completion:\n%s", out.String())
	}
	if refused, _ := p.counts(); refused == 0 || strings.Contains(out.String(), "outcome: done") {
		t.Fatalf("refused reads %d; want the outcome held back:\n%s", refused, out.String())
	}

	// The API server answers again: the rule holds its time again, the
	// read confirms it, the watch is done.
	p.refuse(nil, 0)
	_, passedBefore := p.counts()
	err := end()
	got := out.String()
	if code := codeOf(err); err != nil || !strings.Contains(got, "outcome: done") {
		t.Fatalf("exit %d (%v), want %d with the outcome line:\n%s", code, err, ExitOK, got)
	}
	if strings.Index(got, "outcome: done") < strings.Index(got, notConfirmed) {
		t.Errorf("the outcome came before the refusal:\n%s", got)
	}
	if _, passed := p.counts(); passed <= passedBefore {
		t.Errorf("the watch was done without reading the Cluster again (%d reads answered)", passed)
	}
}

// The dashboard says "upgrade complete" (and, with --exit-on-done, exits
// 0) only once the API server confirms it too: watch gives it
// lazyConfirm(t), which builds its client on the first question. Refused,
// the read is asked again once the rule has held again, and the dashboard
// stays; answered, it is done.
func TestWatchDashboardConfirmsCompletionWithTheAPIServer(t *testing.T) {
	w := startDemo(t, scenario.Rolling)
	p := startFaultProxy(t, w.Config)
	read := readsTheCluster(w)
	// The dashboard makes no first read of the Cluster: the only read of
	// it by name is the confirmation's.
	p.refuse(read, http.StatusServiceUnavailable)
	p.watch(read)
	r := startInTerminal(t, t.TempDir(), "watch", "--kubeconfig", p.kubeconfig(t, w.ClusterNamespace), "--cluster", w.ClusterName,
		"--exit-on-done", "--timeout", "3m")

	// Asked once the rule held (5s), refused, asked again once it held
	// again: the dashboard is still up.
	select {
	case <-r.done:
		refused, _ := p.counts()
		t.Fatalf("the dashboard ended (exit %d, stderr %q) with the read of the Cluster refused %d time(s): it took the upgrade as complete without the API server confirming it",
			r.code, r.stderr, refused)
	case <-waitFor(t, func() bool { refused, _ := p.counts(); return refused >= 2 }):
	case <-time.After(2 * time.Minute):
		refused, _ := p.counts()
		t.Fatalf("the dashboard read the Cluster %d time(s) in 2m, want 2 (asked, refused, asked again)", refused)
	}
	if r.ended() {
		t.Fatalf("the dashboard ended (exit %d) while the API server refused to confirm", r.code)
	}

	p.refuse(nil, 0)
	r.wait(t, 2*time.Minute)
	if r.code != ExitOK {
		t.Fatalf("exit %d, stderr %q; want %d once the API server confirmed", r.code, r.stderr, ExitOK)
	}
	if _, passed := p.counts(); passed == 0 {
		t.Errorf("the dashboard was done without a read of the Cluster answered")
	}
}

// codeOf is the exit code run gives err.
func codeOf(err error) int {
	if err == nil {
		return ExitOK
	}
	return exitCode(err)
}

// waitFor closes its channel once cond holds (polled every 20ms, until the
// test ends).
func waitFor(t *testing.T, cond func() bool) <-chan struct{} {
	c, stop := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		for !cond() {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
		close(c)
	}()
	return c
}
