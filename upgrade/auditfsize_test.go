package upgrade

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// A full disk that takes part of an entry leaves no fragment behind: the
// lines the console prints at exit, appended as they are (`cat saved >>
// log`), were glued to it, and both were lost. The disk is a file size
// limit (RLIMIT_FSIZE) in a child process, so that no other test's file
// meets it.
func TestAuditorCutsOffTheLineAFullDiskTookInPart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	first := `{"time":"2026-11-21T21:00:00Z","user":"ops","host":"h","cluster":"mgmt","action":"apply","result":"ok"}` + "\n"
	if err := os.WriteFile(path, []byte(first), 0o600); err != nil {
		t.Fatal(err)
	}
	limit := len(first) + 40 // part of the next entry
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "AUDIT_FSIZE_CHILD="+path, "AUDIT_FSIZE_LIMIT="+strconv.Itoa(limit))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "refused:") {
		t.Fatalf("the child's record was not refused:\n%s", out)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != first {
		t.Errorf("the log after a partial write:\n%q\nwant it as it was:\n%q", data, first)
	}
}

func auditFsizeChild() {
	path := os.Getenv("AUDIT_FSIZE_CHILD")
	limit, _ := strconv.ParseUint(os.Getenv("AUDIT_FSIZE_LIMIT"), 10, 64)
	a, err := NewAuditor(path, WithAuditIdentity("ops", "bastion"))
	if err != nil {
		panic(err)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
		panic(err)
	}
	err = a.Record(context.Background(), AuditEntry{Cluster: "mgmt", Action: "lock-clear", Result: AuditOK, Message: strings.Repeat("x", 200)})
	if err != nil {
		os.Stdout.WriteString("refused: " + err.Error() + "\n")
	}
}
