package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/tui"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

func TestExitCodes(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{withCode(ExitTimeout, errors.New("late")), ExitTimeout},
		{usageError{errors.New("no --cluster")}, ExitUsage},
		{&model.InputError{Source: "a.yaml", Problem: "bad"}, ExitBadInput},
		// The watcher's or the UI's own bug, however wrapped on its way up.
		{fmt.Errorf("terminal UI: %w", &model.InternalError{Where: "the terminal UI", Panic: "boom"}), ExitInternal},
		// A recovery run the dashboard's end stopped: 5, as the headless
		// command interrupted (it exited 0), also beside a failure seen.
		{errors.Join(nil, &tui.RecoveryCutError{Action: "etcd-rollback"}), ExitTimeout},
		{errors.New("anything else"), ExitBadInput},
	} {
		if got := exitCode(c.err); got != c.want {
			t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

// A bad --request-timeout is named in the fix; it was told to give
// --kubeconfig.
func TestKubeconfigErrorNamesTheFlagAtFault(t *testing.T) {
	kubeconfig := unreachableKubeconfig(t)
	_, errOut, code := runCaptured(t, "lock", "status", "--cluster", "mgmt", "--kubeconfig", kubeconfig, "--request-timeout", "abc")
	if code != ExitBadInput || !strings.Contains(errOut, "give --request-timeout a duration such as 30s") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// --as-group without --as is refused by client-go ("requesting uid, groups
// or user-extra for <user> without impersonating a user"); the fix told the
// operator to give --kubeconfig and --context, which were right.
func TestKubeconfigErrorNamesAsForAsGroup(t *testing.T) {
	kubeconfig := unreachableKubeconfig(t)
	_, errOut, code := runCaptured(t, "lock", "status", "--cluster", "mgmt", "--kubeconfig", kubeconfig, "--as-group", "readers")
	if code != ExitBadInput || !strings.Contains(errOut, "give --as with --as-group") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// KUBECONFIG naming a file that is not there left client-go's fallback,
// http://localhost:8080, and "cannot be reached … check --kubeconfig and
// --context", with neither given: the error names KUBECONFIG and its value.
func TestMissingKubeconfigFileIsNamed(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-kubeconfig")
	t.Setenv("KUBECONFIG", missing)
	for _, args := range [][]string{
		{"lock", "status", "--cluster", "mgmt"},
		{"watch", "--plain", "--cluster", "mgmt"},
	} {
		_, errOut, code := runCaptured(t, args...)
		if code != ExitBadInput || !strings.Contains(errOut, "no kubeconfig was found: KUBECONFIG="+missing+" names no file that exists") || strings.Contains(errOut, "localhost:8080") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

// A kubeconfig that names no current context (an empty ~/.kube/config,
// current-context "") gives client-go no server, and it fell back to
// http://localhost:8080: "cannot be reached" of a server nobody named,
// where anything answering there was taken for the management cluster.
func TestKubeconfigWithoutAContextIsSaid(t *testing.T) {
	dir := t.TempDir()
	noCurrent := filepath.Join(dir, "nocurrent")
	if err := os.WriteFile(noCurrent, []byte(`apiVersion: v1
kind: Config
clusters:
- name: mgmt
  cluster: {server: "https://10.0.0.1:6443"}
contexts:
- name: admin@mgmt
  context: {cluster: mgmt, user: admin}
- name: other
  context: {cluster: mgmt, user: admin}
users:
- name: admin
  user: {token: abc}
current-context: ""
`), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		env  string
		want []string
	}{
		{[]string{"--kubeconfig", noCurrent}, "", []string{noCurrent + ": current-context: names no context to use", "give --context one of its contexts (admin@mgmt, other), or set one with `kubectl config use-context NAME`"}},
		{nil, noCurrent, []string{noCurrent + ": current-context"}},
		{[]string{"--kubeconfig", empty}, "", []string{empty + ": current-context", "the kubeconfig has no contexts"}},
	} {
		t.Setenv("KUBECONFIG", c.env)
		_, errOut, code := runCaptured(t, append([]string{"lock", "status", "--cluster", "mgmt"}, c.args...)...)
		if code != ExitBadInput || strings.Contains(errOut, "localhost:8080") {
			t.Errorf("%v KUBECONFIG=%q: exit %d, stderr %q", c.args, c.env, code, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v KUBECONFIG=%q: stderr %q lacks %q", c.args, c.env, errOut, w)
			}
		}
	}
}

// A --context the kubeconfig lacks was client-go's `context "nosuch" does
// not exist`, naming neither the file nor its contexts, with the fix "give
// --kubeconfig (or KUBECONFIG) and --context", which the operator had: the
// error names the files and lists their contexts, sorted. Every command
// that connects says it the same way.
func TestUnknownContextListsTheContexts(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: mgmt
  cluster: {server: "https://127.0.0.1:1"}
contexts:
- name: prod
  context: {cluster: mgmt, user: admin}
- name: admin@mgmt
  context: {cluster: mgmt, user: admin}
users:
- name: admin
  user: {token: abc}
current-context: %s
`
	kc := write("kc", fmt.Sprintf(kubeconfig, "prod"))
	second := write("second", "apiVersion: v1\nkind: Config\ncontexts:\n- name: lab\n  context: {cluster: lab, user: lab}\n")
	noContexts := write("nocontexts", "apiVersion: v1\nkind: Config\nclusters:\n- name: mgmt\n  cluster: {server: \"https://127.0.0.1:1\"}\n")
	goneCurrent := write("gonecurrent", fmt.Sprintf(kubeconfig, "gone"))
	missing := filepath.Join(dir, "missing")

	for _, command := range [][]string{
		{"lock", "status", "--cluster", "mgmt"},
		{"watch", "--plain", "--cluster", "mgmt"},
		{"plan", "--cluster", "mgmt", "-f", "spec.yaml"},
		{"apply", "--cluster", "mgmt", "-f", "spec.yaml"},
		{"etcd", "rollback", "--cluster", "mgmt", "--yes"},
	} {
		t.Setenv("KUBECONFIG", "")
		_, errOut, code := runCaptured(t, append(command, "--kubeconfig", kc, "--context", "nosuch")...)
		want := kc + `: --context: "nosuch" names no context in the kubeconfig (fix: give --context one of its contexts (admin@mgmt, prod), or leave --context out for its current context, prod)`
		if code != ExitBadInput || !strings.Contains(errOut, want) {
			t.Errorf("%v: exit %d, stderr %q\nwant %q", command, code, errOut, want)
		}
	}

	for _, c := range []struct {
		name string
		args []string
		env  string
		want string
	}{
		{"KUBECONFIG with several files", []string{"--context", "nosuch"}, kc + string(os.PathListSeparator) + second + string(os.PathListSeparator) + missing,
			kc + ", " + second + `: --context: "nosuch" names no context in the kubeconfigs KUBECONFIG names (fix: give --context one of their contexts (admin@mgmt, lab, prod), or leave --context out for their current context, prod)`},
		{"KUBECONFIG with one file", []string{"--context", "nosuch"}, kc, kc + `: --context: "nosuch" names no context in the kubeconfig`},
		{"no contexts", []string{"--kubeconfig", noContexts, "--context", "nosuch"}, "",
			noContexts + `: --context: "nosuch" names no context in the kubeconfig (fix: the kubeconfig has no contexts: give --kubeconfig (or KUBECONFIG) the management cluster's kubeconfig)`},
		{"no kubeconfig", []string{"--context", "nosuch"}, missing, "no kubeconfig was found: KUBECONFIG=" + missing + " names no file that exists"},
		{"current-context gone", []string{"--kubeconfig", goneCurrent}, "",
			goneCurrent + `: current-context: "gone" names no context in the kubeconfig (fix: give --context one of its contexts (admin@mgmt, prod), or set one with ` + "`kubectl config use-context NAME`)"},
	} {
		t.Setenv("KUBECONFIG", c.env)
		_, errOut, code := runCaptured(t, append([]string{"lock", "status", "--cluster", "mgmt"}, c.args...)...)
		if code != ExitBadInput || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, stderr %q\nwant %q", c.name, code, errOut, c.want)
		}
	}
}

// In a pod with no kubeconfig at all, client-go connects with the pod's
// in-cluster configuration, and refuses a --context, which names none of
// its (it has none): the console said "no kubeconfig was found", with the
// fix to give one, where leaving the --context out was the fix. Every
// command that connects says the context, as bad input.
func TestInClusterUnknownContextNamesTheContext(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	t.Setenv("KUBECONFIG", missing)
	t.Setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
	t.Setenv("KUBERNETES_SERVICE_PORT", "1")
	want := `kubeconfig: --context: "nosuch" names no context in any kubeconfig: there is none (KUBECONFIG=` + missing + ` names no file that exists), ` +
		`and the pod's in-cluster configuration (KUBERNETES_SERVICE_HOST is set) has no contexts ` +
		`(fix: leave --context out to connect with the pod's in-cluster configuration (its service account), or give --kubeconfig (or KUBECONFIG) a kubeconfig that has context "nosuch")`
	for _, command := range [][]string{
		{"lock", "status", "--cluster", "mgmt"},
		{"watch", "--plain", "--cluster", "mgmt"},
		{"plan", "--cluster", "mgmt", "-f", "spec.yaml"},
		{"apply", "--cluster", "mgmt", "-f", "spec.yaml"},
		{"etcd", "rollback", "--cluster", "mgmt", "--yes"},
	} {
		_, errOut, code := runCaptured(t, append(command, "--context", "nosuch")...)
		if code != ExitBadInput || !strings.Contains(errOut, want) {
			t.Errorf("%v: exit %d, stderr %q\nwant %q", command, code, errOut, want)
		}
	}
}

// Refused credentials and a bound that passed reached the operator in
// client-go's words alone ("read Cluster default/mgmt: Unauthorized"): the
// message gains the fix; one that already has its fix is left as it is.
func TestExplainAddsTheFix(t *testing.T) {
	unauthorized := fmt.Errorf("read Cluster default/mgmt: %w", apierrors.NewUnauthorized("Unauthorized"))
	if got := explain(unauthorized).Error(); got != "read Cluster default/mgmt: the API server refused the credentials (401 Unauthorized): an expired or revoked token or certificate "+
		"(fix: refresh the credentials (the cluster's admin kubeconfig, or your token provider) or choose others with --kubeconfig, --context or --user)" || !apierrors.IsUnauthorized(explain(unauthorized)) {
		t.Errorf("unauthorized: %s", got)
	}
	forbidden := fmt.Errorf("read Cluster default/mgmt: %w", apierrors.NewForbidden(schema.GroupResource{Group: "anywhere.eks.amazonaws.com", Resource: "clusters"}, "mgmt", errors.New("no RBAC policy matched")))
	if got := explain(forbidden).Error(); !strings.Contains(got, "forbidden") || strings.Contains(got, "\n") || !strings.Contains(got, " (fix: the identity the API server names lacks that right") {
		t.Errorf("forbidden: %s", got)
	}
	deadline := fmt.Errorf("read upgrade lock Lease eksa-system/upgrade-console-mgmt: %w", context.DeadlineExceeded)
	if got := explain(deadline).Error(); !strings.Contains(got, "--request-timeout or --sync-timeout") {
		t.Errorf("deadline: %s", got)
	}
	allotted := fmt.Errorf("read Cluster default/mgmt: %w", apierrors.NewTimeoutError("the server was unable to return a response in the time allotted, but may still be processing the request", 0))
	if got := explain(allotted).Error(); !strings.Contains(got, "give --request-timeout more time") {
		t.Errorf("timeout: %s", got)
	}
	coded := withCode(ExitTimeout, fmt.Errorf("stopped following: --timeout 3s passed: %w", context.DeadlineExceeded))
	if got := explain(coded).Error(); strings.Contains(got, "fix: a time bound") {
		t.Errorf("a coded deadline gained a second fix: %s", got)
	}
	// A write's bound that passed while the console was stopped (R19 #7):
	// the API server may have answered, and is not told to be checked.
	stopped := fmt.Errorf("create upgrade lock Lease eksa-system/upgrade-console-mgmt: %w; the write may have landed all the same: %w",
		&upgrade.ProcessStoppedError{Within: 30 * time.Second, Stopped: 4 * time.Minute}, context.DeadlineExceeded)
	if got := explain(stopped).Error(); strings.Contains(got, "before the API server answered") || !strings.Contains(got, "this process was stopped (ctrl+z, SIGSTOP) and continued 4m0s") {
		t.Errorf("a write cut while the process was stopped: %s", got)
	}
	input := &model.InputError{Source: "API server https://x", Problem: "cannot be reached", Fix: "check"}
	if got := explain(fmt.Errorf("%w: %w", input, context.DeadlineExceeded)); !errors.Is(got, input) || strings.Contains(got.Error(), "fix: a time bound") {
		t.Errorf("an input error gained a second fix: %v", got)
	}
}

// The demo ends at a recovery confirmation as at any other point (0): the
// confirmation is said on the terminal, and the rest of the error kept.
func TestDemoSaysANotConfirmedRecovery(t *testing.T) {
	var out strings.Builder
	other := errors.New("the watch's own trouble")
	err := sayNotConfirmed(&out, errors.Join(other, errors.Join(nil, &tui.RecoveryNotConfirmedError{Action: "etcd-rollback"})))
	var nc *tui.RecoveryNotConfirmedError
	if errors.As(err, &nc) || !errors.Is(err, other) || !strings.Contains(out.String(), "typed confirmation of etcd-rollback") {
		t.Errorf("err %v, said %q", err, out.String())
	}
	if err := sayNotConfirmed(&out, &tui.RecoveryNotConfirmedError{Action: "x"}); err != nil {
		t.Errorf("alone: %v", err)
	}
}

// An error quoting text from the cluster or a file reaches the terminal
// with its control characters escaped, its lines kept.
func TestErrorLineIsPrintable(t *testing.T) {
	got := errorLine(errors.New("read Cluster default/mgmt: admission webhook denied: \x1b]0;x\x07bad\nsecond line"))
	want := "upgrade-console: read Cluster default/mgmt: admission webhook denied: \\x1b]0;x\\abad\nsecond line\n"
	if got != want {
		t.Errorf("error line %q, want %q", got, want)
	}
}

// A mistyped command is a wrong command line: a group's printed its help
// and exited 0, so a runbook's `etcd rolback --kubeconfig …` passed having
// done nothing, and a mistyped top-level command exited 1, as bad input.
// With flags after it, the typo is named, not the flags.
func TestMistypedCommandsAreWrongCommandLines(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"etcd", "rolback", "--kubeconfig", "x"}, `unknown command "rolback" for "upgrade-console etcd"; did you mean rollback?`},
		{[]string{"lock", "stauts"}, `did you mean status?`},
		{[]string{"snapshot", "prun"}, `did you mean prune?`},
		{[]string{"node"}, `"upgrade-console node" needs a subcommand: retry`},
		{[]string{"plann", "-f", "x", "--cluster", "m"}, `unknown command "plann" for "upgrade-console"; did you mean plan?`},
		{[]string{"etcd", "rolback", "--yes"}, `did you mean rollback?`},
		{[]string{"lock", "stauts", "--cluster", "m"}, `did you mean status?`},
		{[]string{"lock", "--cluster", "m", "stauts"}, `unknown command "stauts" for "upgrade-console lock"; did you mean status?`},
		{[]string{"etcd", "--kubeconfig", "x", "rolback", "--yes"}, `did you mean rollback?`},
		{[]string{"lock", "--cluster", "m"}, "unknown flag: --cluster"},
		{[]string{"lock", "--cluster", "c"}, "unknown flag: --cluster"},
		{[]string{"lock", "--cluster", "statu", "stauts"}, `unknown command "stauts" for "upgrade-console lock"`},
		{[]string{"plan", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"plann"}, `unknown command "plann" for "upgrade-console"; did you mean plan?`},
		{[]string{"bogus"}, "its commands: apply, audit,"},
	} {
		out, errOut, code := runCaptured(t, c.args...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d (want %d), stdout %q, stderr %q", c.args, code, ExitUsage, out, errOut)
		}
	}
	if out, _, code := runCaptured(t); code != ExitOK || !strings.Contains(out, "Usage:") {
		t.Errorf("no command: exit %d\n%s", code, out)
	}
	// Help, or a wrong command, makes no log file.
	for _, args := range [][]string{nil, {"help", "plan"}, {"lock"}, {"plann"}} {
		state := t.TempDir()
		runCapturedIn(t, state, args...)
		if _, err := os.Stat(filepath.Join(state, "upgrade-console")); err == nil {
			t.Errorf("%v made a log file under XDG_STATE_HOME", args)
		}
	}
}

// With neither HOME nor XDG_STATE_HOME, a command that needs no state runs,
// its logs discarded with a word: every command, version and an offline
// plan included, exited 1.
func TestNoStateDirectoryDiscardsTheLogs(t *testing.T) {
	t.Setenv("HOME", "")
	t.Setenv("XDG_STATE_HOME", "")
	out, errOut, code := runCapturedTo(t, t.TempDir(), "version")
	if code != ExitOK || out == "" || !strings.Contains(errOut, "logs discarded") {
		t.Errorf("version: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// One fix, naming --log-file, XDG_STATE_HOME and HOME: the state
	// directory's and the log's were said one after the other.
	if want := "(fix: set --log-file, or " + upgrade.StateDirFix + ")\n"; !strings.HasSuffix(errOut, want) || strings.Count(errOut, "set XDG_STATE_HOME") != 1 {
		t.Errorf("stderr %q, want it to end %q", errOut, want)
	}
}
