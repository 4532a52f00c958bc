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
			return "", &StateDirError{Problem: fmt.Sprintf("XDG_STATE_HOME %q is relative, which the XDG specification has ignored, and %v", d, err)}
		}
		return "", &StateDirError{Problem: fmt.Sprintf("XDG_STATE_HOME is not set and %v", err)}
	}
	return filepath.Join(home, ".local", "state", "upgrade-console"), nil
}

// StateDirError is a state directory StateDir cannot find (HOME unset, as
// in many CI containers, cron jobs and systemd units). It names both
// variables: "set XDG_STATE_HOME" alone hid that HOME does as well.
type StateDirError struct{ Problem string }

// StateDirFix is what to do about a StateDirError.
const StateDirFix = "set XDG_STATE_HOME to an absolute directory this user can write, or HOME"

func (e *StateDirError) Error() string {
	return "cannot find the state directory: " + e.Problem + " (fix: " + StateDirFix + ")"
}
