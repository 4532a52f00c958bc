package upgrade

import (
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
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

// fifoWait is how long ReadInputFile waits for a named pipe's writer.
var fifoWait = 30 * time.Second

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
//
// A named pipe is opened without blocking, and waited on for a writer for
// fifoWait at most: a FIFO nobody writes to held the open for ever, deaf to
// ctrl-c and SIGTERM. One whose writer comes (`producer > fifo &`, `-f
// <(kubectl get …)`) reads as what it writes; one whose writer does not, as
// empty.
func ReadInputFile(path string, limit int64) ([]byte, error) {
	fifo := false
	if st, err := os.Stat(path); err == nil && st.Mode()&os.ModeNamedPipe != 0 {
		fifo = true
	}
	flag := os.O_RDONLY
	if fifo {
		flag |= syscall.O_NONBLOCK
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	// Read before any writer opened it, a FIFO ends at once, empty: its
	// writer may come yet.
	for deadline := time.Now().Add(fifoWait); fifo && err == nil && len(data) == 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		data, err = io.ReadAll(io.LimitReader(f, limit+1))
	}
	if err != nil {
		return nil, err
	}
	if fifo && len(data) == 0 {
		// Said as such: "is empty" read as a file with nothing in it.
		return nil, fmt.Errorf("it is a named pipe, and nothing was written to it within %s", fifoWait)
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Limit: limit}
	}
	return data, nil
}
