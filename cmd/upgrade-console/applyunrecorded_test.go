package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
)

// refuseAt passes an apply's output through and, at the first line holding
// at, makes the audit log at path refuse every later entry. The line is
// written from the start's own goroutine, so the log refuses from that
// point of the start on.
type refuseAt struct {
	t        *testing.T
	at, path string
	buf      bytes.Buffer
	done     bool
}

func (w *refuseAt) Write(p []byte) (int, error) {
	w.buf.Write(p)
	if !w.done && strings.Contains(w.buf.String(), w.at) {
		w.done = true
		refuseAudit(w.t, w.path)
	}
	return len(p), nil
}

// An apply that applied the spec, its audit log refusing from some point
// of the start (a full disk), ends as the work it did: the upgrade runs,
// the lock's fate is said as it is, and the exit is 74, not the 1 of bad
// input, which told a script that nothing had started (D9).
//   - The log refusing before the documents' writes: the release must be
//     announced first, the log does not take that, and the Lease stays,
//     said with the way to clear it.
//   - The log refusing after the last write: the Lease is deleted and only
//     the release's entry is held; "could NOT be released" would send the
//     operator to clear a Lease that is gone.
func TestAnApplyWhoseLogRefusesAfterItsStartExitsUnrecorded(t *testing.T) {
	for _, tc := range []struct {
		at, lock string
		kept     bool
	}{
		{"snapshot saved: ", "the upgrade lock could NOT be released", true},
		{"applied Cluster ", "the upgrade lock is released", false},
	} {
		t.Run(strings.TrimSpace(strings.TrimSuffix(tc.at, ": ")), func(t *testing.T) {
			state := t.TempDir()
			t.Setenv("XDG_STATE_HOME", state)
			w := startDemo(t, scenario.Rolling)
			opened.take()
			out := &refuseAt{t: t, at: tc.at, path: filepath.Join(state, "upgrade-console", "audit.log")}
			var errOut bytes.Buffer
			root := newRootCmd()
			root.SetOut(out)
			root.SetErr(&errOut)
			setArgs(root, []string{"apply", "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName, "-f", w.TargetSpecPath, "--yes", "--force-conflicts"})
			err := root.Execute()
			code := ExitOK
			if err != nil {
				code = exitCode(err)
			}
			var end bytes.Buffer
			code = endRun(&end, code, opened.take())
			said := out.buf.String()
			if !out.done || !strings.Contains(said, "applied Cluster ") {
				t.Fatalf("the apply did not get past %q:\n%s\n%v", tc.at, said, err)
			}
			if code != ExitUnrecorded || err != nil {
				t.Errorf("exit %d (%v), want %d", code, err, ExitUnrecorded)
			}
			_, tail, _ := strings.Cut(said, "not waiting (--wait not given): ")
			if !strings.HasPrefix(tail, tc.lock) || !strings.Contains(tail, "follow the upgrade with") {
				t.Errorf("the end says, want %q first and how to follow:\n%s", tc.lock, tail)
			}
			if clear := strings.Contains(tail, "lock clear lease --cluster "+w.ClusterName); clear != tc.kept {
				t.Errorf("the way to clear the lease given: %v, want %v:\n%s", clear, tc.kept, tail)
			}
			if !strings.Contains(tail, "this run's end is NOT recorded in the audit log") || !strings.Contains(end.String(), "did not take") {
				t.Errorf("the unrecorded end is not said, or its entries not printed:\n%s\n%s", tail, end.String())
			}
			lock, _, _ := runCaptured(t, "lock", "status", "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName)
			lease := ""
			for l := range strings.Lines(lock) {
				if f := strings.Fields(l); len(f) > 1 && f[0] == "lease" {
					lease = f[1]
					break
				}
			}
			if held := lease == "live"; held != tc.kept {
				t.Errorf("lock status after it: the Lease %q, want held %v:\n%s", lease, tc.kept, lock)
			}
		})
	}
}
