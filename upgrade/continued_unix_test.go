//go:build unix

package upgrade

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// WatchContinued records the SIGCONT that ends a stop: the evidence a write
// cut late needs before it is said stopped rather than unanswered.
func TestWatchContinuedRecordsASIGCONT(t *testing.T) {
	WatchContinued()
	before := time.Now()
	if err := syscall.Kill(os.Getpid(), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); !continuedSince(before) && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if !continuedSince(before) {
		t.Error("a SIGCONT is not recorded")
	}
}
