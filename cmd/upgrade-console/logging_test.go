package main

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"

	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// lockedBuffer is a bytes.Buffer safe for klog's writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// controller-runtime's logger (envtest's, in the demo) was never set: its
// lines went nowhere, and once the process was 30 s old the first of them
// printed "log.SetLogger(...) was never called" and a stack trace on the
// terminal (a demo whose control plane was slow to start). It writes to the
// log file, as klog does.
func TestControllerRuntimeLogsGoToTheLogFile(t *testing.T) {
	var buf lockedBuffer
	if err := logTo(&buf); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = logTo(io.Discard) })
	ctrllog.Log.WithName("test-env").Info("installing CRDs")
	klog.Flush()
	if got := buf.String(); !strings.Contains(got, "installing CRDs") {
		t.Fatalf("controller-runtime's line is not in the log file; the file has:\n%s", got)
	}
}
