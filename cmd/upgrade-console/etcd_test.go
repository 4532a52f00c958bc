package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// unreachableKubeconfig is a kubeconfig whose API server does not answer:
// a command that reaches it fails with a connection error, not bad input.
func unreachableKubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	const cfg = `apiVersion: v1
kind: Config
clusters:
- name: nowhere
  cluster:
    server: https://127.0.0.1:1
contexts:
- name: nowhere
  context:
    cluster: nowhere
    user: nobody
current-context: nowhere
users:
- name: nobody
  user:
    token: x
`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A --snapshot-file that cannot be used is bad input (exit 1); --snapshot
// with --snapshot-file is a wrong command line (exit 2, as the README's
// table has flags that do not go together): it exited 1.
func TestEtcdRollbackSnapshotFileIsBadInput(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "upgrade-console-snapshot-other-20261121-224758.json")
	data, _ := json.Marshal(upgrade.Snapshot{Format: upgrade.SnapshotFormat, Cluster: "other", ClusterNamespace: "default",
		TakenAt: time.Now().UTC(), Objects: []upgrade.SnapshotObject{{Kind: "EtcdadmCluster", Name: "other-etcd", Spec: map[string]any{
			"etcdadmConfigSpec": map[string]any{}, "infrastructureTemplate": map[string]any{"name": "other-etcd-template"}}}}})
	if err := os.WriteFile(other, data, 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfig := unreachableKubeconfig(t)
	missing := filepath.Join(dir, "missing.json")
	for _, tc := range []struct {
		name  string
		args  []string
		code  int
		wants []string
	}{
		{"both snapshot flags", []string{"--snapshot", "upgrade-console-snapshot-mgmt-20261121-224758", "--snapshot-file", missing}, ExitUsage,
			[]string{"--snapshot upgrade-console-snapshot-mgmt-20261121-224758 and --snapshot-file " + missing, "not both"}},
		{"a missing file", []string{"--snapshot-file", missing}, ExitBadInput, []string{"--snapshot-file " + missing, "no such file", "upgrade-console/snapshots"}},
		{"another cluster's snapshot", []string{"--snapshot-file", other}, ExitBadInput, []string{"--snapshot-file " + other, "Cluster default/other, not of Cluster default/mgmt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The file is read before the cluster: the unreachable API
			// server is never contacted (that would be another error).
			args := append([]string{"etcd", "rollback", "--kubeconfig", kubeconfig, "-n", "default", "--cluster", "mgmt", "--yes"}, tc.args...)
			_, errOut, code := runCaptured(t, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, errOut)
			}
			for _, want := range tc.wants {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errOut)
				}
			}
			if strings.Contains(errOut, "127.0.0.1:1") {
				t.Errorf("the API server was contacted:\n%s", errOut)
			}
		})
	}
}

func TestEtcdRollbackHelpNamesTheSnapshotFile(t *testing.T) {
	out, errOut, code := runCaptured(t, "etcd", "rollback", "--help")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"--snapshot-file", "$XDG_STATE_HOME/upgrade-console/snapshots", "--snapshot-file ~/.local/state/upgrade-console/snapshots/upgrade-console-snapshot-mgmt-"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

// An API server that cannot be reached is said at once, with the server and
// what to check: plan waited --sync-timeout for it, and watch and the
// recovery commands printed the transport's error alone.
func TestUnreachableAPIServerIsSaidAtOnce(t *testing.T) {
	kubeconfig := unreachableKubeconfig(t)
	spec := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(spec, []byte("apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata:\n  name: mgmt\n  namespace: default\nspec:\n  kubernetesVersion: \"1.31\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"plan", "--cluster", "mgmt", "-f", spec, "--sync-timeout", "3s"},
		{"watch", "--plain", "--cluster", "mgmt"},
		{"lock", "status", "--cluster", "mgmt"},
		{"lock", "clear", "--all", "--cluster", "mgmt", "--yes"},
		{"etcd", "rollback", "--cluster", "mgmt", "--yes"},
		{"node", "retry", "mgmt-md-0-abc", "--cluster", "mgmt", "--yes"},
	} {
		_, errOut, code := runCaptured(t, append(args, "--kubeconfig", kubeconfig, "-n", "default")...)
		if code != ExitBadInput {
			t.Errorf("%v: exit %d, want %d: %s", args, code, ExitBadInput, errOut)
		}
		for _, want := range []string{"API server https://127.0.0.1:1: cannot be reached", "fix: check --kubeconfig and --context"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("%v: stderr lacks %q:\n%s", args, want, errOut)
			}
		}
	}
}

// Durations and counts out of range are bad input, said before the cluster
// is read: --threshold -1s planned a rollback as if every new member had
// been not ready too long, and --tail -5 showed 8 lines.
func TestRecoveryFlagsOutOfRange(t *testing.T) {
	kubeconfig := unreachableKubeconfig(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"etcd", "rollback", "--cluster", "mgmt", "--threshold", "-1s"}, "--threshold: must be positive, got -1s"},
		{[]string{"etcd", "rollback", "--cluster", "mgmt", "--wait-timeout", "0s"}, "--wait-timeout: must be positive, got 0s"},
		{[]string{"node", "retry", "mgmt-a", "--cluster", "mgmt", "--tail", "0"}, "--tail: must be at least 1, got 0"},
		{[]string{"node", "retry", "mgmt-a", "--cluster", "mgmt", "--tail", "-5"}, "--tail: must be at least 1, got -5"},
	} {
		_, errOut, code := runCaptured(t, append(c.args, "--kubeconfig", kubeconfig, "--dry-run")...)
		if code != ExitBadInput || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "127.0.0.1:1") {
			t.Errorf("%v: exit %d, stderr %q; want exit %d saying %q before any request", c.args, code, errOut, ExitBadInput, c.want)
		}
	}
}

// A --snapshot that names no snapshot ConfigMap is bad input (exit 1)
// naming the flag, with `snapshot list` as the fix, as for `snapshot
// restore`: it exited 3, refused, as a cluster that does not allow the
// rollback.
func TestEtcdRollbackMissingSnapshotIsBadInput(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	w := startDemo(t, scenario.Rolling)
	const name = "upgrade-console-snapshot-mgmt-20200101-000000"
	out, errOut, code := runCapturedIn(t, state, "etcd", "rollback", "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName, "--snapshot", name, "--yes")
	want := "--snapshot: " + name + ": no such snapshot (ConfigMap eksa-system/" + name + ") (fix: give the snapshot the upgrade took; `upgrade-console snapshot list --cluster mgmt"
	if code != ExitBadInput || !strings.Contains(errOut, want) || strings.Contains(out, "is not offered") ||
		!strings.Contains(out, "external-etcd") || !strings.Contains(out, "snapshot") {
		t.Fatalf("exit %d, want %d saying\n%s\nwith the preconditions\n%s\n%s", code, ExitBadInput, want, out, errOut)
	}
	// The attempt is in the audit log, refused, as it was when it exited 3.
	res, err := upgrade.ReadAudit(filepath.Join(state, "upgrade-console", upgrade.AuditFileName), upgrade.AuditFilter{})
	if err != nil || len(res.Entries) != 1 || res.Entries[0].Action != "etcd-rollback" || res.Entries[0].Result != upgrade.AuditRefused ||
		!strings.Contains(res.Entries[0].Message, "snapshot: "+name+": no such snapshot") {
		t.Fatalf("audit log (%v): %+v, want one etcd-rollback refused entry naming %s", err, res, name)
	}
}
