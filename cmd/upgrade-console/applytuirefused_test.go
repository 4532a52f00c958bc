package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// apply --tui whose start the audit log refuses (nothing applied), quit
// after, exits as apply does on the same failure, 1, and says nothing was
// applied: it exited 0, which endRun made 74 once the log held the start's
// entries, "the run did its work" (D10).
func TestApplyTUIStartTheAuditLogRefusedExitsAsApply(t *testing.T) {
	w := startDemo(t, scenario.Rolling)
	state := t.TempDir()
	r := startInTerminal(t, state, "apply", "--tui", "--kubeconfig", w.KubeconfigPath,
		"--cluster", w.ClusterName, "-f", w.TargetSpecPath)
	r.waitScreen(t, "PREFLIGHT")
	path := filepath.Join(state, "upgrade-console", upgrade.AuditFileName)
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(path, 0o700); err != nil {
		t.Fatal(err)
	}
	r.confirmStart(t, w.ClusterName)
	r.waitScreen(t, "is a directory")
	time.Sleep(500 * time.Millisecond)
	r.press(t, "\x03")
	r.wait(t, 2*time.Minute)
	const said = "the upgrade did not start (the start failed, above): no document of the spec was applied"
	if r.code != ExitBadInput || !strings.Contains(r.stderr, said) {
		t.Fatalf("exit %d, stderr %q; want %d saying %q\n%s", r.code, r.stderr, ExitBadInput, said, tail(r.screen.String()))
	}
}
