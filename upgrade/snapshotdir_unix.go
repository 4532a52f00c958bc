//go:build unix

package upgrade

import "golang.org/x/sys/unix"

// dirWritable asks the kernel whether this user may create files in dir:
// a read-only mode or mount is refused, and root passes a mode as its
// writes do.
func dirWritable(dir string) error { return unix.Access(dir, unix.W_OK|unix.X_OK) }
