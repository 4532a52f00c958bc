package upgrade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestAuditorRecordFillsIdentityAndReadsBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nested", "audit.log")
	now := time.Date(2026, 11, 21, 22, 0, 0, 0, time.FixedZone("X", 3600))
	a, err := NewAuditor(path, WithAuditClock(func() time.Time { return now }),
		WithAuditIdentity("ops", "bastion"), WithAuditContext("mgmt-admin@mgmt"))
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("audit file not created 0600 by NewAuditor: %v %v", fi, err)
	}
	e := AuditEntry{
		Cluster: "mgmt", Action: "lock-clear", Step: "paused",
		Object: "Cluster default/mgmt",
		Before: map[string]string{"anywhere.eks.amazonaws.com/paused": "true"},
		After:  map[string]string{},
		Result: AuditOK, Forced: true,
	}
	if err := a.Record(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	res, err := ReadAudit(path, AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Entries) != 1 || len(res.BadLines) != 0 {
		t.Fatalf("read back %+v", res)
	}
	got := res.Entries[0]
	if got.User != "ops" || got.Host != "bastion" || got.Context != "mgmt-admin@mgmt" {
		t.Errorf("identity not filled: %+v", got)
	}
	if !got.Time.Equal(now) || got.Time.Location() != time.UTC {
		t.Errorf("time = %v, want %v in UTC", got.Time, now)
	}
	before, ok := got.Before.(map[string]any)
	if !ok || before["anywhere.eks.amazonaws.com/paused"] != "true" || !got.Forced {
		t.Errorf("before/forced lost: %#v forced=%v", got.Before, got.Forced)
	}
	raw, _ := os.ReadFile(path)
	if !strings.HasSuffix(string(raw), "}\n") || strings.Count(string(raw), "\n") != 1 {
		t.Errorf("not one JSON line: %q", raw)
	}
}

func TestAuditorConcurrentRecordsStayWholeLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	// Two auditors on one file stand for two consoles on one machine.
	a1, err := NewAuditor(path, WithAuditIdentity("a", "h"))
	if err != nil {
		t.Fatal(err)
	}
	a2, err := NewAuditor(path, WithAuditIdentity("b", "h"))
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 8000)
	var wg sync.WaitGroup
	const n = 40
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := a1
			if i%2 == 1 {
				a = a2
			}
			if err := a.Record(context.Background(), AuditEntry{Cluster: "c", Action: "x", Step: fmt.Sprint(i), Message: big, Result: AuditOK}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	res, err := ReadAudit(path, AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Entries) != n || len(res.BadLines) != 0 {
		t.Fatalf("entries=%d bad=%v, want %d whole lines", len(res.Entries), res.BadLines, n)
	}
	seen := map[string]bool{}
	for _, e := range res.Entries {
		seen[e.Step] = true
	}
	if len(seen) != n {
		t.Errorf("distinct steps = %d, want %d", len(seen), n)
	}
}

func TestReadAuditFiltersAndReportsTornLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	content := fmt.Sprintf(`{"time":%q,"cluster":"a","action":"apply","result":"ok"}
{"time":%q,"cluster":"b","action":"apply","result":"ok"}

{"time":%q,"cluster":"a","action":"lock-clear","result":"ok"}
{"time":"2026-01-01T03:00:00Z","cluster":"a","act`,
		t0.Format(time.RFC3339), t0.Add(time.Hour).Format(time.RFC3339), t0.Add(2*time.Hour).Format(time.RFC3339))
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := ReadAudit(path, AuditFilter{Cluster: "a", Since: t0.Add(30 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Entries) != 1 || res.Entries[0].Action != "lock-clear" {
		t.Errorf("entries = %+v, want only the lock-clear of cluster a", res.Entries)
	}
	if len(res.BadLines) != 1 || res.BadLines[0] != 5 {
		t.Errorf("bad lines = %v, want [5]", res.BadLines)
	}

	missing, err := ReadAudit(filepath.Join(t.TempDir(), "none.log"), AuditFilter{})
	if err != nil || len(missing.Entries) != 0 {
		t.Errorf("missing file: %+v %v, want empty log", missing, err)
	}
}

func TestNewAuditorFailsEarlyWhenTheLogCannotBeCreated(t *testing.T) {
	// A regular file where the state directory should be: fails even as root.
	blocker := filepath.Join(t.TempDir(), "state")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewAuditor(filepath.Join(blocker, "audit.log")); err == nil {
		t.Fatal("NewAuditor succeeded although the log cannot be created")
	}
}

func TestStateDirHonoursXDG(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/xdg")
	d, err := StateDir()
	if err != nil || d != filepath.Join("/xdg", "upgrade-console") {
		t.Errorf("StateDir = %q %v", d, err)
	}
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "/home/op")
	d, err = StateDir()
	if err != nil || d != filepath.Join("/home/op", ".local", "state", "upgrade-console") {
		t.Errorf("StateDir default = %q %v", d, err)
	}
}

// An audit log the console cannot create says how to give it one, whether
// its directory or the file is what fails: the directory's case said only
// "mkdir …: not a directory".
func TestUnwritableAuditLogSaysTheFix(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "notadir")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := NewAuditor(filepath.Join(blocker, "upgrade-console", "audit.log"))
	if err == nil || !strings.Contains(err.Error(), "set XDG_STATE_HOME to a writable directory") {
		t.Errorf("NewAuditor under a file: %v", err)
	}
}

// An entry the log cannot take (the file made a directory, a full disk) is
// an AuditWriteError with the fix, whatever the step that failed: the
// commands give it one exit code (lock clear called a full disk a failed
// preflight check, exit 3; apply exit 1).
func TestAuditWriteErrorIsTyped(t *testing.T) {
	dir := t.TempDir()
	a, err := NewAuditor(filepath.Join(dir, "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(filepath.Join(dir, "audit.log"))
	if err := os.Mkdir(filepath.Join(dir, "audit.log"), 0o700); err != nil {
		t.Fatal(err)
	}
	err = a.Record(context.Background(), AuditEntry{Action: "x", Result: AuditOK})
	var aw *AuditWriteError
	if !errors.As(err, &aw) || !strings.Contains(err.Error(), "move the directory at that path away, or set XDG_STATE_HOME") {
		t.Errorf("record into a directory: %v", err)
	}
}

// A start closed as refused (the lock held by another console, a re-check
// under the lock) has ended: it was reported as having no end recorded.
func TestUnendedCountsARefusalAsTheEnd(t *testing.T) {
	entries := []AuditEntry{
		{Console: "a", Cluster: "mgmt", Action: "upgrade", Result: AuditStarted},
		{Console: "a", Cluster: "mgmt", Action: "lock-acquire", Result: AuditFailed},
		{Console: "a", Cluster: "mgmt", Action: "upgrade", Result: AuditRefused},
		{Console: "b", Cluster: "mgmt", Action: "upgrade", Result: AuditStarted},
		{Console: "b", Cluster: "mgmt", Action: "apply", Step: "server-side-apply", Result: AuditOK},
		{Console: "c", Cluster: "mgmt", Action: "upgrade", Result: AuditStarted},
		{Console: "c", Cluster: "mgmt", Action: "upgrade", Step: "x", Result: AuditRefused},
		{Console: "d", Cluster: "mgmt", Action: "upgrade", Result: AuditStarted},
		{Console: "d", Cluster: "mgmt", Action: "upgrade", Result: AuditTimedOut},
	}
	got := Unended(entries)
	want := []bool{false, false, false, true, false, true, false, false, false}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d (%s %s %s): unended %t, want %t", i, entries[i].Console, entries[i].Action, entries[i].Result, got[i], want[i])
		}
	}
}

func TestAuditorRecordAfterATornLineKeepsTheEntryWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	whole := `{"time":"2026-11-21T21:00:00Z","user":"ops","host":"h","cluster":"mgmt","action":"apply","result":"ok"}` + "\n"
	torn := `{"time":"2026-11-21T21:59:00Z","action":"upgr`
	if err := os.WriteFile(path, []byte(whole+torn), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := NewAuditor(path, WithAuditIdentity("ops", "bastion"))
	if err != nil {
		t.Fatal(err)
	}
	for _, action := range []string{"snapshot", "lock-release"} {
		if err := a.Record(context.Background(), AuditEntry{Cluster: "mgmt", Action: action, Result: AuditOK}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := ReadAudit(path, AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range res.Entries {
		got = append(got, e.Action)
	}
	if strings.Join(got, ",") != "apply,snapshot,lock-release" {
		t.Errorf("entries = %v, want apply,snapshot,lock-release", got)
	}
	if len(res.BadLines) != 1 || res.BadLines[0] != 2 {
		t.Errorf("bad lines = %v, want [2] (the torn line alone)", res.BadLines)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), whole+torn+"\n{") || strings.Contains(string(data), "\n\n") {
		t.Errorf("torn line not ended by exactly one newline:\n%s", data)
	}
}

// An audit log the user may not write says so: "free space on its disk"
// sent the operator to the wrong fix.
func TestAuditWriteErrorFitsTheCause(t *testing.T) {
	denied := (&AuditWriteError{Path: "/x/audit.log", Err: &os.PathError{Op: "open", Path: "/x/audit.log", Err: syscall.EACCES}}).Error()
	if !strings.Contains(denied, "writable for this user") || strings.Contains(denied, "free space") {
		t.Errorf("permission denied: %s", denied)
	}
	full := (&AuditWriteError{Path: "/x/audit.log", Err: &os.PathError{Op: "write", Path: "/x/audit.log", Err: syscall.ENOSPC}}).Error()
	if !strings.Contains(full, "free space") {
		t.Errorf("disk full: %s", full)
	}
}

// Entries the log refused are kept and written, marked delayed, before the
// next entry it takes, in their order; announcements are not kept (their
// write was not made), and past maxHeld the rest are counted in a note.
func TestAuditorWritesRefusedEntriesLate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	a, err := NewAuditor(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range maxHeld + 3 {
		if err := a.Record(ctx, AuditEntry{Cluster: "mgmt", Action: "lock-renew", Result: AuditOK, Message: fmt.Sprint(i)}); err == nil || !a.Refusing() {
			t.Fatalf("entry %d: %v, refusing %t; want refused", i, err, a.Refusing())
		}
	}
	if err := a.Record(ctx, AuditEntry{Cluster: "mgmt", Action: "lock-release", Result: AuditAnnounced}); err == nil {
		t.Fatal("an announcement the log refused was taken")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := a.Record(ctx, AuditEntry{Cluster: "mgmt", Action: "lock-release", Result: AuditOK}); err != nil || a.Refusing() {
		t.Fatalf("with space again: %v, refusing %t", err, a.Refusing())
	}
	res, err := ReadAudit(path, AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Entries); n != 1+maxHeld+1 {
		t.Fatalf("%d entries, want the note, %d kept and the last", n, maxHeld)
	}
	first, last := res.Entries[0], res.Entries[len(res.Entries)-1]
	if first.Action != "audit" || !strings.HasPrefix(first.Message, "3 entries the log refused") {
		t.Errorf("first entry %+v, want the note of the 3 not kept", first)
	}
	for i, e := range res.Entries[1 : 1+maxHeld] {
		if e.Message != fmt.Sprint(i) || !e.Delayed || e.Result != AuditOK {
			t.Fatalf("kept entry %d: %+v, want message %d, delayed", i, e, i)
		}
	}
	if last.Action != "lock-release" || last.Result != AuditOK || last.Delayed {
		t.Errorf("last entry %+v, want the release, not delayed", last)
	}
}

// A console that exits while the log refuses hands its held entries back
// to be printed; once the log takes them, Unwritten writes them and hands
// back nothing.
func TestAuditorHandsBackTheEntriesItCouldNotWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	a, err := NewAuditor(path)
	if err != nil {
		t.Fatal(err)
	}
	if lines, held, lost, err := a.Unwritten(); lines != nil || held != 0 || lost != 0 || err != nil {
		t.Fatalf("nothing refused: %q, %d, %d, %v", lines, held, lost, err)
	}
	ctx := context.Background()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"first", "second"} {
		if err := a.Record(ctx, AuditEntry{Cluster: "mgmt", Action: "lock-renew", Step: step, Result: AuditOK}); err == nil {
			t.Fatalf("%s entry taken by a directory", step)
		}
	}
	lines, held, lost, err := a.Unwritten()
	if err == nil || held != 2 || lost != 0 {
		t.Fatalf("refusing: held %d, lost %d, err %v; want 2, 0 and the refusal", held, lost, err)
	}
	var steps []string
	for l := range strings.Lines(string(lines)) {
		var e AuditEntry
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if !e.Delayed || e.Cluster != "mgmt" {
			t.Errorf("line %q: want delayed, of mgmt", l)
		}
		steps = append(steps, e.Step)
	}
	if !slices.Equal(steps, []string{"first", "second"}) {
		t.Fatalf("handed back %v, want first, second", steps)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if lines, held, _, err := a.Unwritten(); lines != nil || held != 0 || err != nil {
		t.Fatalf("with space again: %q, held %d, %v; want written", lines, held, err)
	}
	res, err := ReadAudit(path, AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Entries) != 2 || res.Entries[0].Step != "first" || !res.Entries[1].Delayed {
		t.Fatalf("log holds %+v, want the two, delayed", res.Entries)
	}
}

// Held says, without touching the file, how many entries the log refused
// and the console holds, and the cause alone (the screen's row has no room
// for the path): a TUI start showed nothing of them.
func TestAuditorSaysHowManyEntriesItHolds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	a, err := NewAuditor(path)
	if err != nil {
		t.Fatal(err)
	}
	if n, why := a.Held(); n != 0 || why != "" {
		t.Fatalf("nothing refused: held %d (%q)", n, why)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"first", "second"} {
		if err := a.Record(context.Background(), AuditEntry{Cluster: "mgmt", Action: "lock-renew", Step: step, Result: AuditOK}); err == nil {
			t.Fatalf("%s entry taken by a directory", step)
		}
	}
	if n, why := a.Held(); n != 2 || why != "is a directory" {
		t.Errorf("refusing: held %d (%q), want 2 (is a directory)", n, why)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if lines, _, _, err := a.Unwritten(); lines != nil || err != nil {
		t.Fatalf("with space again: %q, %v", lines, err)
	}
	if n, why := a.Held(); n != 0 || why != "" {
		t.Errorf("written at last: held %d (%q), want none", n, why)
	}
}
