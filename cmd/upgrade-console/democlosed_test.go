package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
)

// `demo --serve | head -3`: once the reader has left, the demo's next write
// fails and stops it, as an interrupt does: its control plane stopped and its
// temporary directory (kubeconfig, keys, etcd's data) removed. Unwatched,
// the failed write was ignored and the demo ran on with no one to read it,
// until killed, which left the directory behind.
func TestDemoStopsWhenItsOutputIsClosed(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // the demo's temporary directory goes here
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	before := childProcesses(t)

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Close() // the reader left before the demo wrote its first line
	errF, err := os.Create(filepath.Join(state, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = w, errF
	ended := make(chan int, 1)
	go func() {
		ended <- run([]string{"demo", "--serve", "--assets", cptest.AssetsDir(), "--speed", "50"})
	}()
	var code int
	select {
	case code = <-ended:
	case <-time.After(2 * time.Minute):
		// As the operator would stop it: the test's own interrupt, so
		// that the world does not outlive the test.
		_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
		code = <-ended
		os.Stdout, os.Stderr = oldOut, oldErr
		t.Fatalf("the demo ran on for 2 minutes after its output was closed (stopped by an interrupt, exit %d)", code)
	}
	os.Stdout, os.Stderr = oldOut, oldErr
	_ = w.Close()
	_ = errF.Close()
	errOut, _ := os.ReadFile(errF.Name())
	if strings.Contains(string(errOut), "internal error") || strings.Contains(string(errOut), "demo: stopping:") {
		t.Errorf("exit %d, stderr:\n%s", code, errOut)
	}
	// The world was up when it stopped: its first line (KUBECONFIG=…)
	// is the write that failed.
	if !strings.Contains(string(errOut), "world seeded") {
		t.Fatalf("the demo did not start its world (exit %d):\n%s", code, errOut)
	}
	left, err := filepath.Glob(filepath.Join(tmp, "upgrade-console-demo-*"))
	if err != nil || len(left) != 0 {
		t.Errorf("the demo left its directory behind: %v %v", left, err)
	}
	for pid, comm := range childProcesses(t) {
		if _, ok := before[pid]; !ok {
			t.Errorf("the demo left its process %d (%s) behind", pid, comm)
		}
	}
}

// childProcesses are this process's live children (pid to command name),
// zombies aside: the demo's etcd and kube-apiserver are.
func childProcesses(t *testing.T) map[int]string {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(stats) == 0 {
		t.Skipf("no /proc to find the demo's processes in: %v", err)
	}
	self := os.Getpid()
	children := map[int]string{}
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // ended meanwhile
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		j := strings.IndexByte(s, '(')
		if i < 0 || j < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == self {
			pid, _ := strconv.Atoi(strings.TrimSpace(s[:j]))
			children[pid] = s[j+1 : i]
		}
	}
	return children
}
