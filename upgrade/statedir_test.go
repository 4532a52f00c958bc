package upgrade

import (
	"path/filepath"
	"testing"
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
