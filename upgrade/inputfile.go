package upgrade

import (
	"fmt"
	"io"
	"os"
)

// Limits of the files an operator gives the console. Each is far above what
// the file holds in practice (a cluster spec is a few KB of YAML; a release's
// Bundles manifest about 200 KB; a snapshot copy tens of KB), and far below
// what would hurt: -f /dev/zero grew the console to 3 GB in 20 s, reading.
const (
	MaxSpecBytes     = 16 << 20
	MaxBundlesBytes  = 64 << 20
	MaxSnapshotBytes = 64 << 20
)

// TooLargeError is a file over its limit (ReadInputFile).
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string {
	if e.Limit < 1<<20 {
		return fmt.Sprintf("it is larger than %d bytes", e.Limit)
	}
	return fmt.Sprintf("it is larger than %d MiB", e.Limit>>20)
}

// ReadInputFile reads path, or fails with a *TooLargeError once it has read
// more than limit bytes, without reading the rest.
func ReadInputFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Limit: limit}
	}
	return data, nil
}
