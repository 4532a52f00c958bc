//go:build unix

package upgrade

import (
	"os"
	"syscall"
)

// lockLog takes the log's advisory lock until f is closed: the check of how
// the file ends, the append and the cut of a fragment a full disk left are
// then one step among the consoles that share the log (a cut could remove
// a line another console appended in between). Best effort: a file system
// without flock (some NFS) appends as before.
func lockLog(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }
