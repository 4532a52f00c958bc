package upgrade

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/upgrade-console/upgrade-console/model"
)

// A file that never ends (-f /dev/zero) or is far too large for what it
// claims to be is refused once past its limit, without reading the rest:
// the console grew to 3 GB reading /dev/zero.
func TestInputFilesHaveALimit(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err == nil {
		_, err := ReadSpecFile("/dev/zero", "default")
		var in *model.InputError
		if !errors.As(err, &in) || in.Source != "/dev/zero" || !strings.Contains(in.Problem, "larger than 16 MiB") {
			t.Errorf("-f /dev/zero: %v, want bad input naming the limit", err)
		}
	}
	path := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(path, make([]byte, 2048), 0o600); err != nil {
		t.Fatal(err)
	}
	var big *TooLargeError
	if _, err := ReadInputFile(path, 1024); !errors.As(err, &big) || big.Limit != 1024 {
		t.Errorf("2 KB read with a 1 KB limit: %v", err)
	}
	if data, err := ReadInputFile(path, 2048); err != nil || len(data) != 2048 {
		t.Errorf("2 KB read with a 2 KB limit: %d bytes, %v", len(data), err)
	}
}

// kubectl's "-f -" is said to be unsupported: it read "-: no such file or
// directory".
func TestReadSpecFileRefusesStdin(t *testing.T) {
	_, err := ReadSpecFile("-", "default")
	var in *model.InputError
	if !errors.As(err, &in) || in.Source != "-f -" || !strings.Contains(in.Fix, "save the spec to a file") {
		t.Errorf("err = %v", err)
	}
}

// A FIFO nobody writes to reads as empty after fifoWait: its open blocked
// for ever, deaf to ctrl-c and SIGTERM (`--snapshot-file fifo.json`, `-f
// fifo`). One whose writer opens it late reads whole.
func TestReadInputFileOfAFIFOWithNoWriterDoesNotHang(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo.json")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	defer func(w time.Duration) { fifoWait = w }(fifoWait)
	fifoWait = 500 * time.Millisecond
	go func() {
		time.Sleep(200 * time.Millisecond) // a producer that opens its output late
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		_, _ = f.WriteString("kind: Bundles\n")
		_ = f.Close()
	}()
	if data, err := ReadInputFile(path, MaxSnapshotBytes); err != nil || string(data) != "kind: Bundles\n" {
		t.Fatalf("a FIFO whose writer came late: %q, %v", data, err)
	}
	done := make(chan error, 1)
	go func() {
		data, err := ReadInputFile(path, MaxSnapshotBytes)
		if err == nil || !strings.Contains(err.Error(), "named pipe, and nothing was written to it within") {
			err = fmt.Errorf("read %q, %v; want the pipe said unwritten", data, err)
		} else {
			err = nil
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reading a FIFO with no writer still waits after 10 s")
	}
}
