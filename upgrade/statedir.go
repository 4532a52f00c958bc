package upgrade

import (
	"fmt"
	"os"
	"path/filepath"
)

// StateDir is where the console keeps its log, its audit log and the local
// copies of pre-upgrade snapshots: $XDG_STATE_HOME/upgrade-console, or
// ~/.local/state/upgrade-console when XDG_STATE_HOME is unset (the XDG base
// directory specification's default), or relative: the specification has
// such a path ignored, and used as it was, each working directory had an
// audit log and snapshots of its own.
func StateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "upgrade-console"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		if d := os.Getenv("XDG_STATE_HOME"); d != "" {
			return "", fmt.Errorf("cannot find the state directory: XDG_STATE_HOME %q is relative, which the XDG specification has ignored; set it to an absolute path: %w", d, err)
		}
		return "", fmt.Errorf("cannot find the state directory: set XDG_STATE_HOME: %w", err)
	}
	return filepath.Join(home, ".local", "state", "upgrade-console"), nil
}
