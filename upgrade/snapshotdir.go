package upgrade

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/upgrade-console/upgrade-console/model"
)

// CheckSnapshotDir refuses, as bad input, a local snapshot directory (dir,
// or StateDir()/snapshots when empty) that the snapshot's local copy could
// not be written to: not a directory, or one this user cannot write. The
// copy is written after the upgrade lock is taken and the plan checked
// again under it, so found only then the start had taken, recorded and
// released the lock for nothing. A directory not there yet passes when the
// nearest one above it can be written (the copy creates it). Nothing is
// created: asking the kernel (access(2)) leaves no probe file behind.
func CheckSnapshotDir(dir string) error {
	fix := "make it a directory this user can write"
	if dir == "" {
		sd, err := StateDir()
		if err != nil {
			problem := err.Error()
			if se := (*StateDirError)(nil); errors.As(err, &se) {
				problem = "cannot find the state directory: " + se.Problem
			}
			return &model.InputError{Source: "snapshot directory", Problem: problem +
				"; the upgrade's local snapshot copy has nowhere to go, and nothing was changed", Fix: StateDirFix}
		}
		dir = filepath.Join(sd, "snapshots")
		fix += ", or set XDG_STATE_HOME to one (the snapshots go to $XDG_STATE_HOME/upgrade-console/snapshots, and the audit log moves with them)"
	}
	refuse := func(problem string) error {
		return &model.InputError{Source: "snapshot directory " + dir, Problem: problem + "; the upgrade's local snapshot copy cannot be written there, and nothing was changed", Fix: fix}
	}
	for p := dir; ; {
		fi, err := os.Stat(p)
		switch {
		case err == nil && !fi.IsDir():
			if p == dir {
				return refuse("is not a directory")
			}
			return refuse(p + " is not a directory")
		case err == nil:
			if err := dirWritable(p); err != nil {
				return refuse(p + " cannot be written: " + err.Error())
			}
			return nil
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			// Made by the copy, from the nearest directory above that
			// is there (a file above it is said when the walk gets to
			// it).
		default:
			return refuse(pathError(err))
		}
		up := filepath.Dir(p)
		if up == p {
			return nil
		}
		p = up
	}
}

// pathError is err without the path an *fs.PathError repeats.
func pathError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s: %v", pe.Path, pe.Err)
	}
	return err.Error()
}
