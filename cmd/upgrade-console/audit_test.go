package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

func TestAuditCommandTableAndJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	now := time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC)
	clock := now.Add(-3 * time.Hour)
	a, err := upgrade.NewAuditor(path, upgrade.WithAuditIdentity("ops", "bastion"),
		upgrade.WithAuditClock(func() time.Time { clock = clock.Add(time.Hour); return clock }))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []upgrade.AuditEntry{
		{Cluster: "old", Action: "apply", Result: upgrade.AuditOK},
		{Cluster: "mgmt", Action: "lock-clear", Step: "lease", Object: "Lease eksa-system/upgrade-console-mgmt", Result: upgrade.AuditOK, Forced: true},
		{Cluster: "mgmt", Action: "etcd-rollback", Step: "delete-new-machine", Result: upgrade.AuditFailed, Error: "machines.cluster.x-k8s.io \"m\" is forbidden"},
	} {
		if err := a.Record(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}

	var out, errOut bytes.Buffer
	if err := runAudit(&out, &errOut, &auditOptions{cluster: "mgmt", since: "150m", output: "table", file: path}, now); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"WHO", "ops@bastion", "lock-clear", "FORCED", "error: machines.cluster.x-k8s.io", "2026-11-21 22:00:00Z"} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "old") || strings.Count(got, "\n") != 3 {
		t.Errorf("filter not applied:\n%s", got)
	}

	out.Reset()
	if err := runAudit(&out, &errOut, &auditOptions{output: "json", file: path}, now); err != nil {
		t.Fatal(err)
	}
	var entries []upgrade.AuditEntry
	if err := json.Unmarshal(out.Bytes(), &entries); err != nil || len(entries) != 3 {
		t.Fatalf("json output: %v, %d entries:\n%s", err, len(entries), out.String())
	}

	// -o yaml is the same document, as plan's is.
	jsonOut := append([]byte(nil), out.Bytes()...)
	out.Reset()
	if err := runAudit(&out, &errOut, &auditOptions{output: "yaml", file: path}, now); err != nil {
		t.Fatal(err)
	}
	if fromYAML, err := yaml.YAMLToJSON(out.Bytes()); err != nil || !jsonEqual(t, fromYAML, jsonOut) {
		t.Errorf("yaml output (%v):\n%s\nis not the json one:\n%s", err, out.String(), jsonOut)
	}

	out.Reset()
	if err := runAudit(&out, &errOut, &auditOptions{cluster: "none", output: "json", file: path}, now); err != nil || strings.TrimSpace(out.String()) != "[]" {
		t.Errorf("empty json = %q %v, want []", out.String(), err)
	}
	// "No audit entries … for since 10s" read badly.
	out.Reset()
	if err := runAudit(&out, &errOut, &auditOptions{cluster: "none", since: "10s", output: "table", file: path}, now); err != nil ||
		!strings.HasSuffix(strings.TrimSpace(out.String()), "(cluster none, in the last 10s).") {
		t.Errorf("empty table = %q %v", out.String(), err)
	}
}

// A log others wrote (--audit-log), whose errors quote the API server
// and webhooks, is printed escaped, one line an entry: raw, an entry's
// text cleared the terminal's line, wrote a row of its own choosing, and a
// long message lost half of its last character.
func TestAuditTableEscapesWhatEntriesCarry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	a, err := upgrade.NewAuditor(path, upgrade.WithAuditIdentity("u\x1b]0;T\a", "h\x1b[2K\r"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []upgrade.AuditEntry{
		{Cluster: "mgmt\x1b[31m", Action: "apply", Step: "s\x1b[8m", Result: upgrade.AuditFailed,
			Error: "denied\n2026-11-21 22:00:00Z  ops@bastion  mgmt  apply  -  -  ok \u202e"},
		{Cluster: "mgmt", Action: "apply", Result: upgrade.AuditOK, Message: strings.Repeat("a", 116) + "→…"},
	} {
		if err := a.Record(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	if err := runAudit(&out, &errOut, &auditOptions{output: "table", file: path}, time.Now()); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if strings.ContainsAny(got, "\x1b\a\r\u202e") || strings.Count(got, "\n") != 3 || !utf8.ValidString(got) ||
		!strings.Contains(got, `u\x1b]0;T\a@h\x1b[2K\r`) || !strings.Contains(got, `ok \u202e`) || !strings.Contains(got, strings.Repeat("a", 116)+"→…\n") {
		t.Errorf("table:\n%q", got)
	}
}

// Two consoles of one user on one host write one log: each entry names the
// console that wrote it, as the lock holder does, and --console picks one
// console's entries out.
func TestAuditEntriesNameTheirConsole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	now := time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	for _, id := range []string{"aaaa1111", "bbbb2222"} {
		a, err := upgrade.NewAuditor(path, upgrade.WithAuditIdentity("ops", "bastion"), upgrade.WithAuditConsole(id), upgrade.WithAuditClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Record(context.Background(), upgrade.AuditEntry{Cluster: "mgmt", Action: "node-retry", Result: upgrade.AuditOK, Message: "by " + id}); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	if err := runAudit(&out, &errOut, &auditOptions{output: "table", file: path}, now); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ops@bastion/aaaa1111", "ops@bastion/bbbb2222"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := runAudit(&out, &errOut, &auditOptions{console: "bbbb2222", output: "json", file: path}, now); err != nil {
		t.Fatal(err)
	}
	var entries []upgrade.AuditEntry
	if err := json.Unmarshal(out.Bytes(), &entries); err != nil || len(entries) != 1 || entries[0].Message != "by bbbb2222" || entries[0].Console != "bbbb2222" {
		t.Errorf("--console bbbb2222 = %v %+v", err, entries)
	}
	if h := upgrade.LocalHolder(); h.Instance != upgrade.ConsoleID() || h.Instance == "" {
		t.Errorf("the lock holder's instance %q is not the console id %q", h.Instance, upgrade.ConsoleID())
	}
}

func TestAuditCommandBadInput(t *testing.T) {
	var out bytes.Buffer
	var ie *model.InputError
	if err := runAudit(&out, &out, &auditOptions{since: "yesterday", output: "table"}, time.Now()); !errors.As(err, &ie) || ie.Source != "--since" {
		t.Errorf("--since yesterday: %v, want an InputError on --since", err)
	}
	if err := runAudit(&out, &out, &auditOptions{output: "xml"}, time.Now()); !errors.As(err, &ie) || ie.Source != "--output" {
		t.Errorf("-o xml: %v, want an InputError on --output", err)
	}
	// A log named on purpose that is not there is a mistake, not an empty log.
	missing := filepath.Join(t.TempDir(), "no-such.log")
	if err := runAudit(&out, &out, &auditOptions{file: missing, output: "table"}, time.Now()); !errors.As(err, &ie) || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("--audit-log %s: %v, want an InputError", missing, err)
	}
}

// With --as the cluster saw another identity make the change: every entry
// records it beside the operator who ran the console, and the table shows
// it in WHO.
func TestAuditEntriesRecordTheImpersonatedIdentity(t *testing.T) {
	dir := t.TempDir()
	// plan with no input stops at its own check, after the flags are read.
	if _, errOut, code := runCapturedIn(t, dir, "--as", "alice", "--as-group", "ops", "plan"); code != ExitUsage || !strings.Contains(errOut, "plan needs") {
		t.Fatalf("plan: exit %d, %s", code, errOut)
	}
	t.Cleanup(func() { impersonated = "" })
	a, err := newAuditor(context.Background(), auditTarget{context: "prod"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Record(context.Background(), upgrade.AuditEntry{Cluster: "mgmt", Action: "lock-clear", Result: upgrade.AuditOK}); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := runAudit(&out, &errOut, &auditOptions{output: "json", file: a.Path()}, time.Now()); err != nil {
		t.Fatal(err)
	}
	var entries []upgrade.AuditEntry
	if err := json.Unmarshal(out.Bytes(), &entries); err != nil || len(entries) != 1 || entries[0].As != "alice, group ops" || entries[0].Context != "prod" {
		t.Fatalf("entries %+v (%v), want as alice, group ops", entries, err)
	}
	out.Reset()
	if err := runAudit(&out, &errOut, &auditOptions{output: "table", file: a.Path()}, time.Now()); err != nil || !strings.Contains(out.String(), "(as alice, group ops)") {
		t.Errorf("table %q (%v) does not show the impersonated identity", out.String(), err)
	}
}

// A ServiceAccount's token run as root on a bastion: the entries said
// root@vm and the context, not who the API server saw. A headless command
// asks the server at its start; a screen asks in a command of its own, not
// while it is being built; WHO shows the answer.
func TestAuditEntriesRecordWhomTheServerAuthenticated(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	const sa = "system:serviceaccount:default:deployer"
	reviewer := func(asked *int) *fake.Clientset {
		kube := fake.NewClientset()
		kube.PrependReactor("create", "selfsubjectreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
			*asked++
			return true, &authenticationv1.SelfSubjectReview{Status: authenticationv1.SelfSubjectReviewStatus{
				UserInfo: authenticationv1.UserInfo{Username: sa, Groups: []string{"system:serviceaccounts", "system:authenticated"}}}}, nil
		})
		return kube
	}
	var headless, screen int
	a, err := newAuditor(context.Background(), auditTarget{"deployer@mgmt", reviewer(&headless)})
	if err != nil {
		t.Fatal(err)
	}
	if headless != 1 {
		t.Errorf("a headless command's auditor asked %d reviews before its first entry, want 1", headless)
	}
	s, err := openAuditor(auditTarget{"deployer@mgmt", reviewer(&screen)})
	if err != nil {
		t.Fatal(err)
	}
	if screen != 0 {
		t.Errorf("a screen's auditor asked %d reviews while the screen was built, want none", screen)
	}
	authenticateCmd(s)()
	if screen != 1 {
		t.Errorf("the screen's command asked %d reviews, want 1", screen)
	}
	if err := a.Record(context.Background(), upgrade.AuditEntry{Cluster: "mgmt", Action: "lock-clear", Result: upgrade.AuditOK}); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := runAudit(&out, &errOut, &auditOptions{output: "json", file: a.Path()}, time.Now()); err != nil {
		t.Fatal(err)
	}
	var entries []upgrade.AuditEntry
	if err := json.Unmarshal(out.Bytes(), &entries); err != nil || len(entries) != 1 || entries[0].Authenticated.String() != sa || entries[0].As != "" {
		t.Fatalf("entries %s (%v), want authenticated %s", out.String(), err, sa)
	}
	out.Reset()
	if err := runAudit(&out, &errOut, &auditOptions{output: "table", file: a.Path()}, time.Now()); err != nil || !strings.Contains(out.String(), "(as "+sa+")") {
		t.Errorf("table %q (%v) does not show whom the server authenticated", out.String(), err)
	}
	if headless != 1 {
		t.Errorf("%d reviews after an entry, want the one at the start", headless)
	}
}

// The commands that never reach a cluster do not take kubectl's connection
// flags (their help listed them, and they were ignored); the ones that do,
// and their subcommands, take them.
func TestConnectionFlagsOnlyOnCommandsThatConnect(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"version"}, {"audit"}, {"demo"}} {
		_, errOut, code := runCapturedIn(t, dir, append(args, "--kubeconfig", "k")...)
		if code != ExitUsage || !strings.Contains(errOut, "unknown flag: --kubeconfig") {
			t.Errorf("%v --kubeconfig: exit %d, %q; want a usage error", args, code, errOut)
		}
	}
	root := newRootCmd()
	for _, path := range [][]string{{"plan"}, {"apply"}, {"watch"}, {"lock", "status"}, {"lock", "clear"}, {"etcd", "rollback"}, {"node", "retry"}, {"snapshot", "list"}, {"snapshot", "prune"}} {
		c, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"kubeconfig", "context", "as", "token"} {
			if c.PersistentFlags().Lookup(name) == nil && c.InheritedFlags().Lookup(name) == nil {
				t.Errorf("%v has no --%s", path, name)
			}
		}
	}
}

// An action whose console recorded its start and never its end (killed in
// the middle of an etcd rollback, say) is marked in the table and in the
// JSON: the steps after its last entry may have run unrecorded. Actions that
// ended (finished, detached, stopped) are not, nor is an action another
// console ended, nor an entry with no console id.
func TestAuditMarksActionsWithNoEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	now := time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC)
	clock := now.Add(-time.Hour)
	tick := func() time.Time { clock = clock.Add(time.Minute); return clock }
	auditor := func(id string) *upgrade.Auditor {
		a, err := upgrade.NewAuditor(path, upgrade.WithAuditIdentity("ops", "bastion"), upgrade.WithAuditConsole(id), upgrade.WithAuditClock(tick))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	killed, other, old := auditor("aaaa1111"), auditor("bbbb2222"), auditor("")
	for _, r := range []struct {
		a *upgrade.Auditor
		e upgrade.AuditEntry
	}{
		{old, upgrade.AuditEntry{Cluster: "mgmt", Action: "lock-clear", Result: upgrade.AuditStarted, Message: "legacy"}},
		{other, upgrade.AuditEntry{Cluster: "mgmt", Action: "upgrade", Result: upgrade.AuditStarted, Message: "followed"}},
		{other, upgrade.AuditEntry{Cluster: "mgmt", Action: "upgrade", Result: upgrade.AuditDetached}},
		{other, upgrade.AuditEntry{Cluster: "mgmt", Action: "node-retry", Result: upgrade.AuditStarted, Message: "stopped"}},
		{other, upgrade.AuditEntry{Cluster: "mgmt", Action: "node-retry", Step: "relabel", Result: upgrade.AuditFailed, Error: "forbidden"}},
		{other, upgrade.AuditEntry{Cluster: "mgmt", Action: "node-retry", Result: upgrade.AuditFailed, Error: "step 1 failed"}},
		{killed, upgrade.AuditEntry{Cluster: "mgmt", Action: "etcd-rollback", Result: upgrade.AuditStarted, Message: "killed"}},
		{killed, upgrade.AuditEntry{Cluster: "mgmt", Action: "etcd-rollback", Step: "pause-eksa", Result: upgrade.AuditOK}},
		// Another console's end does not end this console's run.
		{other, upgrade.AuditEntry{Cluster: "mgmt", Action: "etcd-rollback", Result: upgrade.AuditFinished}},
		{other, upgrade.AuditEntry{Cluster: "mgmt", Action: "lock-clear", Result: upgrade.AuditStarted, Message: "finished"}},
		{other, upgrade.AuditEntry{Cluster: "mgmt", Action: "lock-clear", Result: upgrade.AuditFinished}},
	} {
		if err := r.a.Record(context.Background(), r.e); err != nil {
			t.Fatal(err)
		}
	}

	var out, errOut bytes.Buffer
	if err := runAudit(&out, &errOut, &auditOptions{output: "table", file: path}, now); err != nil {
		t.Fatal(err)
	}
	var marked []string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.Contains(l, "NO END RECORDED") {
			marked = append(marked, l)
		}
	}
	if len(marked) != 1 || !strings.Contains(marked[0], "aaaa1111") || !strings.Contains(marked[0], "killed; NO END RECORDED") {
		t.Errorf("marked rows %q, want the killed rollback's start alone:\n%s", marked, out.String())
	}

	out.Reset()
	if err := runAudit(&out, &errOut, &auditOptions{output: "json", file: path}, now); err != nil {
		t.Fatal(err)
	}
	var entries []struct {
		Message string `json:"message"`
		NoEnd   *bool  `json:"noEnd"`
	}
	if err := json.Unmarshal(out.Bytes(), &entries); err != nil || len(entries) != 11 {
		t.Fatalf("json: %v, %d entries", err, len(entries))
	}
	for _, e := range entries {
		if (e.NoEnd != nil) != (e.Message == "killed") || (e.NoEnd != nil && !*e.NoEnd) {
			t.Errorf("entry %q: noEnd %v", e.Message, e.NoEnd)
		}
	}
}

// A flag whose value is left out takes the next flag as its value: `-f $SPEC
// --yes` with SPEC unset read --yes as the spec's path, and the error
// blamed --yes.
func TestAFlagThatTookTheNextFlagIsAUsageError(t *testing.T) {
	dir := t.TempDir()
	_, errOut, code := runCapturedIn(t, dir, "apply", "--cluster", "mgmt", "-f", "--yes")
	if code != ExitUsage || !strings.Contains(errOut, `--filename took "--yes" as its value`) {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// The entries a refusing log held are printed at the run's end, whole and
// in order, with where to append them; a log that takes them again by then
// gets them, and nothing is printed.
func TestUnwrittenEntriesArePrintedAtTheEnd(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	opened.take()
	a := openAuditorT(t)
	path := a.Path()
	refuseAudit(t, path)
	ctx := context.Background()
	for _, step := range []string{"renew", "release"} {
		if err := a.Record(ctx, upgrade.AuditEntry{Cluster: "mgmt", Action: "lock-" + step, Result: upgrade.AuditOK}); err == nil {
			t.Fatalf("lock-%s taken by a directory", step)
		}
	}
	var out bytes.Buffer
	sayUnwritten(&out, opened.take())
	head, rest, _ := strings.Cut(out.String(), "\n")
	if !strings.Contains(head, "did not take 2 entries of this run") || !strings.HasSuffix(head, "append them to "+path+" once it can be written") {
		t.Errorf("first line %q", head)
	}
	var actions []string
	for l := range strings.Lines(rest) {
		var e upgrade.AuditEntry
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		actions = append(actions, e.Action)
	}
	if !slices.Equal(actions, []string{"lock-renew", "lock-release"}) {
		t.Errorf("printed %v, want lock-renew, lock-release", actions)
	}

	opened.add(a)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	sayUnwritten(&out, opened.take())
	if out.Len() != 0 {
		t.Errorf("with space again, printed %q", out.String())
	}
	res, err := upgrade.ReadAudit(path, upgrade.AuditFilter{})
	if err != nil || len(res.Entries) != 2 {
		t.Fatalf("log: %v, %d entries; want the two", err, len(res.Entries))
	}
}

// A run whose record the audit log still refuses at its end is no
// success: it did what it did, but the rule that no change goes unrecorded
// did not hold, and a script that read 0 went on with the record on a
// terminal nobody read. It exits ExitUnrecorded; a run that failed keeps
// its own code, and a run whose log took every entry in the end exits 0.
func TestARunWhoseRecordIsNotInTheLogDoesNotExitZero(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	opened.take()
	a := openAuditorT(t)
	path := a.Path()
	refuseAudit(t, path)
	if err := a.Record(context.Background(), upgrade.AuditEntry{Cluster: "mgmt", Action: "lock-release", Result: upgrade.AuditOK}); err == nil {
		t.Fatal("lock-release taken by a directory")
	}
	var out bytes.Buffer
	if code := endRun(&out, ExitOK, []*upgrade.Auditor{a}); code != ExitUnrecorded || !strings.Contains(out.String(), "did not take 1 entry of this run") {
		t.Errorf("a done run with an entry unwritten: exit %d, said %q; want %d and the entry", code, out.String(), ExitUnrecorded)
	}
	if code := endRun(io.Discard, ExitUpgradeFail, []*upgrade.Auditor{a}); code != ExitUpgradeFail {
		t.Errorf("a failed run with an entry unwritten: exit %d, want its own %d", code, ExitUpgradeFail)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := endRun(&out, ExitOK, []*upgrade.Auditor{a}); code != ExitOK || out.Len() != 0 {
		t.Errorf("the log took the entry at the end: exit %d, said %q; want 0 and nothing", code, out.String())
	}
}

// The screens read the entries held by every log the run opened (the plan
// screen's, the R menu's): opened.held sums them, with a refusal's cause.
func TestTheScreensSeeTheEntriesEveryOpenedLogHolds(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	opened.take()
	defer opened.take()
	if n, why := opened.held(); n != 0 || why != "" {
		t.Fatalf("no log opened: held %d (%q)", n, why)
	}
	var logs []*upgrade.Auditor
	for range 2 {
		logs = append(logs, openAuditorT(t))
	}
	path := logs[0].Path()
	refuseAudit(t, path)
	for _, a := range logs {
		if err := a.Record(context.Background(), upgrade.AuditEntry{Cluster: "mgmt", Action: "lock-renew", Result: upgrade.AuditOK}); err == nil {
			t.Fatal("an entry taken by a directory")
		}
	}
	if n, why := opened.held(); n != 2 || why != "is a directory" {
		t.Errorf("held %d (%q), want 2 (is a directory)", n, why)
	}
}

// openAuditorT opens the audit log of XDG_STATE_HOME, as a run does.
func openAuditorT(t *testing.T) *upgrade.Auditor {
	t.Helper()
	a, err := openAuditor(auditTarget{context: "mgmt-admin@mgmt"})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// refuseAudit makes the log at path refuse every entry: a directory where
// the file was: each write fails, as on a full disk.
func refuseAudit(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
}

// audit --audit-log names the flag and the fix for a directory, refuses a
// file no line of which is an entry (exit 1: it said "No audit entries",
// exit 0), and names the lines it skips as lines ("line 2", where ": 2"
// read as a count).
func TestAuditCommandSaysWhatItCannotRead(t *testing.T) {
	dir := t.TempDir()
	entry := `{"time":"2026-11-21T22:47:58Z","user":"u","host":"h","cluster":"mgmt","action":"apply","result":"ok"}` + "\n"
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	logDir := filepath.Join(dir, "logs")
	if err := os.Mkdir(logDir, 0o700); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	err := runAudit(&out, &errOut, &auditOptions{file: logDir, output: "table"}, time.Now())
	var ie *model.InputError
	if !errors.As(err, &ie) || ie.Source != "--audit-log "+logDir || !strings.Contains(ie.Problem, "is a directory") || ie.Fix == "" {
		t.Errorf("--audit-log a directory: %v", err)
	}
	write("logs/audit.log", entry)
	if err := runAudit(&out, &errOut, &auditOptions{file: logDir, output: "table"}, time.Now()); err == nil || !strings.Contains(err.Error(), "--audit-log "+filepath.Join(logDir, "audit.log")) {
		t.Errorf("--audit-log a directory holding audit.log: %v, want it named in the fix", err)
	}

	notLog := write("notes.txt", "hello\n")
	out.Reset()
	err = runAudit(&out, &errOut, &auditOptions{file: notLog, output: "table"}, time.Now())
	if !errors.As(err, &ie) || exitCode(err) != ExitBadInput || !strings.Contains(err.Error(), "is not an audit log") || strings.Contains(out.String(), "No audit entries") {
		t.Errorf("--audit-log a file that is no audit log: %v (exit %d)\n%s", err, exitCode(err), out.String())
	}

	empty := write("empty.log", "")
	if err := runAudit(&out, &errOut, &auditOptions{file: empty, output: "table"}, time.Now()); err != nil {
		t.Errorf("an empty log: %v, want no error", err)
	}

	mixed := write("mixed.log", entry+"torn\n"+entry)
	out.Reset()
	errOut.Reset()
	if err := runAudit(&out, &errOut, &auditOptions{file: mixed, output: "table"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), "line 2 is not an audit entry") || strings.Count(out.String(), "apply") != 2 {
		t.Errorf("a log with a torn line: warning %q, want it named as line 2, and both entries:\n%s", errOut.String(), out.String())
	}

	// A log whose only line was torn mid-write (a full disk) is a log,
	// warned of as a longer log's torn last line is, where it was called
	// "not an audit log" (exit 1).
	tornLast := write("torn-last.log", entry+strings.TrimSuffix(entry, "\n")[:50])
	tornOnly := write("torn-only.log", strings.TrimSuffix(entry, "\n")[:50])
	for _, c := range []struct{ path, warning string }{
		{tornLast, "warning: " + tornLast + ": line 2 is not an audit entry; skipped, the other entries are shown\n"},
		{tornOnly, "warning: " + tornOnly + ": line 1 is not an audit entry; skipped, it was the log's only line (torn mid-write: no entry was completed)\n"},
	} {
		out.Reset()
		errOut.Reset()
		if err := runAudit(&out, &errOut, &auditOptions{file: c.path, output: "table"}, time.Now()); err != nil {
			t.Errorf("%s: %v, want the torn line skipped", filepath.Base(c.path), err)
		}
		if errOut.String() != c.warning {
			t.Errorf("%s: warning %q, want %q", filepath.Base(c.path), errOut.String(), c.warning)
		}
	}
}

// jsonEqual reports whether two JSON documents hold the same values.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(va, vb)
}
