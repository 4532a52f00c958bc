//go:build !unix

package upgrade

import "os"

// lockLog is a no-op where flock is not available.
func lockLog(*os.File) {}
