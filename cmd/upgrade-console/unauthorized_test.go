package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
)

// An expired token (a 401) reads as the 403 and the unreachable API server
// do: one line naming what was read, the cause and the fix, on every
// command that reads. It printed "read Cluster default/mgmt: Unauthorized"
// with the cause and the fix on a second line.
func TestRefusedCredentialsAreOneLineOnEveryCommand(t *testing.T) {
	w := startDemo(t, scenario.Rolling)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: s, cluster: {server: "%s", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: expired}}]
contexts: [{name: s, context: {cluster: s, user: u}}]
current-context: s
`, w.Config.Host)), 0o600); err != nil {
		t.Fatal(err)
	}
	conn := []string{"--kubeconfig", kubeconfig, "--cluster", w.ClusterName}
	for _, cmd := range [][]string{
		{"plan", "-f", w.TargetSpecPath},
		{"apply", "-f", w.TargetSpecPath, "--dry-run"},
		{"lock", "status"},
		{"lock", "clear", "lease", "--yes"},
		{"watch", "--plain"},
		{"snapshot", "list"},
		{"node", "retry", "n1", "--yes"},
		{"etcd", "rollback", "--yes"},
	} {
		name := strings.Join(cmd, " ")
		out, errOut, code := runCaptured(t, append(cmd, conn...)...)
		if code != ExitBadInput {
			t.Errorf("%s: exit %d, want %d\n%s\n%s", name, code, ExitBadInput, out, errOut)
		}
		line := strings.TrimSuffix(errOut, "\n")
		if strings.Contains(line, "\n") || !strings.Contains(line, ": the API server refused the credentials (401 Unauthorized): an expired or revoked token or certificate (fix: refresh the credentials") ||
			strings.Contains(line, ": Unauthorized") {
			t.Errorf("%s: not one line naming the cause and the fix:\n%s", name, errOut)
		}
	}
}

// Refused credentials end the dashboard as they end the plain watch: on q,
// with its message and its exit code (1). The dashboard said "credentials
// refused" and exited 0 on q, printing nothing once the screen was gone.
func TestWatchDashboardQuitWithRefusedCredentialsExitsAsThePlainWatch(t *testing.T) {
	w := startDemo(t, scenario.Rolling)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: s, cluster: {server: "%s", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: bogus}}]
contexts: [{name: s, context: {cluster: s, user: u}}]
current-context: s
`, w.Config.Host)), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"watch", "--kubeconfig", kubeconfig, "--cluster", w.ClusterName}
	_, plainErr, plainCode := runCaptured(t, append(args, "--plain")...)
	if plainCode != ExitBadInput || !strings.Contains(plainErr, model.CredentialsRefused) {
		t.Fatalf("the plain watch: exit %d, stderr %q", plainCode, plainErr)
	}
	r := startInTerminal(t, t.TempDir(), args...)
	r.waitScreen(t, "credentials refused")
	r.press(t, "q")
	r.wait(t, time.Minute)
	if r.code != plainCode || r.stderr != plainErr {
		t.Errorf("the dashboard: exit %d, stderr %q\nthe plain watch: exit %d, stderr %q", r.code, r.stderr, plainCode, plainErr)
	}
}
