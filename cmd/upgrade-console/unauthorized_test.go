package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
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
