package upgrade

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upgrade-console/upgrade-console/model"
)

// A relative XDG_STATE_HOME is ignored, as the XDG base directory
// specification has it: used as it was, each working directory had an
// audit log and snapshots of its own.
func TestStateDirIgnoresARelativeXDGStateHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for env, want := range map[string]string{
		"state":             filepath.Join(home, ".local", "state", "upgrade-console"),
		"":                  filepath.Join(home, ".local", "state", "upgrade-console"),
		"/var/lib/operator": "/var/lib/operator/upgrade-console",
	} {
		t.Setenv("XDG_STATE_HOME", env)
		if got, err := StateDir(); err != nil || got != want {
			t.Errorf("XDG_STATE_HOME=%q: %q, %v; want %q", env, got, err, want)
		}
	}
}

// No state directory at all (HOME unset, as in CI containers, cron and
// systemd units) is said with both fixes: "set XDG_STATE_HOME" alone hid
// that HOME does. The snapshot directory check and an audit log opened to
// hold its entries say the same, and the log holds the entries, as one
// that cannot be opened does, where it was not returned at all.
func TestNoStateDirNamesXDGStateHomeAndHome(t *testing.T) {
	t.Setenv("HOME", "")
	t.Setenv("XDG_STATE_HOME", "")
	_, err := StateDir()
	var se *StateDirError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "(fix: "+StateDirFix+")") || !strings.Contains(StateDirFix, "or HOME") {
		t.Errorf("StateDir: %v, want a StateDirError naming XDG_STATE_HOME and HOME", err)
	}
	var ie *model.InputError
	if err := CheckSnapshotDir(""); !errors.As(err, &ie) || ie.Fix != StateDirFix || !strings.Contains(ie.Problem, "cannot find the state directory") {
		t.Errorf("CheckSnapshotDir: %v, want bad input with the fix %q", err, StateDirFix)
	}
	a, err := NewAuditorHolding("")
	var aw *AuditWriteError
	if a == nil || !errors.As(err, &aw) || !errors.As(err, &se) || a.NoPath() == nil || a.Path() != "" {
		t.Fatalf("NewAuditorHolding: %v, %v; want an auditor with no path, and the refusal", a, err)
	}
	if err := a.Record(context.Background(), AuditEntry{Cluster: "mgmt", Action: "lock-clear", Result: AuditDryRun, DryRun: true}); !errors.As(err, &aw) || !strings.Contains(err.Error(), "or HOME") {
		t.Errorf("Record: %v, want the log's refusal naming the fix", err)
	}
	if lines, held, _, _ := a.Unwritten(); held != 1 || !strings.Contains(string(lines), `"action":"lock-clear"`) {
		t.Errorf("held %d entries: %s; want the one refused", held, lines)
	}
	if a, err := NewAuditor(""); a != nil || !errors.As(err, &se) {
		t.Errorf("NewAuditor: %v, %v; want no auditor for a run that writes", a, err)
	}
}
