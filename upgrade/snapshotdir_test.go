package upgrade

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
)

// A local snapshot directory that cannot be written (a file in its place,
// a file above it, XDG_STATE_HOME a file) is refused as bad input before
// the start writes anything: the lock was taken, recorded and released for
// a copy that could not be saved. Files stand in for a read-only directory,
// which stops no write when the tests run as root. The refusal is recorded
// as apply's before a write are.
func TestStartRefusesAnUnwritableSnapshotDirBeforeAnyWrite(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	var mu sync.Mutex
	var writes []string
	client := w.clientThrough(t, func(r *http.Request, next http.RoundTripper) (*http.Response, error) {
		if r.Method != http.MethodGet {
			mu.Lock()
			writes = append(writes, r.Method+" "+r.URL.Path)
			mu.Unlock()
		}
		return next.RoundTrip(r)
	})
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, dir, xdg, want string
	}{
		{"a file in its place", file, "", "snapshot directory " + file + ": is not a directory"},
		{"a file above it", filepath.Join(file, "snapshots"), "", file + " is not a directory"},
		{"XDG_STATE_HOME a file", "", file, "snapshot directory " + filepath.Join(file, "upgrade-console", "snapshots") + ": " + file + " is not a directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.xdg != "" {
				t.Setenv("XDG_STATE_HOME", c.xdg)
			}
			audit := &memAudit{}
			d := &Driver{Client: client, Audit: audit, Holder: w.planner.Self, Planner: w.planner, SnapshotDir: c.dir}
			p := w.plan(t)
			mu.Lock()
			writes = nil
			mu.Unlock()
			s, err := d.Start(context.Background(), p, StartOptions{ForceConflicts: true})
			var ie *model.InputError
			if s != nil || !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "nothing was changed") ||
				!strings.Contains(err.Error(), "(fix: make it a directory this user can write") {
				t.Fatalf("start: %v, %v; want bad input saying %q and its fix", s, err, c.want)
			}
			if c.dir == "" && !strings.Contains(err.Error(), "set XDG_STATE_HOME") {
				t.Errorf("the fix does not name XDG_STATE_HOME: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(writes) > 0 {
				t.Errorf("the refused start wrote to the cluster: %v", writes)
			}
			if a := audit.actions(); len(a) != 1 || a[0] != "apply:"+AuditRefused || !strings.Contains(audit.entries[0].Error, c.want) {
				t.Errorf("the refused start recorded %v, want the one apply refused, as apply records its refusals before a write", a)
			}
		})
	}
}

// The check creates nothing: a directory not there yet passes when the one
// above it can be written, and is left uncreated.
func TestCheckSnapshotDirCreatesNothing(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "a", "snapshots")
	if err := CheckSnapshotDir(dir); err != nil {
		t.Fatal(err)
	}
	if ents, err := os.ReadDir(root); err != nil || len(ents) > 0 {
		t.Errorf("the check left %v behind (%v)", ents, err)
	}
}
