package main

import (
	"slices"
	"testing"
)

// The results name the kubectl command without the run's kubeconfig path
// (a temporary file of the machine that ran it); the other flags stay.
func TestWithoutFlag(t *testing.T) {
	args := []string{"get", "machines", "--watch", "--kubeconfig", "/tmp/x/kubeconfig", "-o", "custom-columns=NAME:.metadata.name"}
	want := []string{"get", "machines", "--watch", "-o", "custom-columns=NAME:.metadata.name"}
	if got := withoutFlag(args, "--kubeconfig"); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := withoutFlag([]string{"get", "nodes", "--kubeconfig"}, "--kubeconfig"); !slices.Equal(got, []string{"get", "nodes"}) {
		t.Errorf("a trailing flag: %q", got)
	}
}

// The console's command keeps every flag it ran with, --read-only among
// them, and drops the run's temporary files.
func TestConsoleCommand(t *testing.T) {
	args := []string{"watch", "--cluster", "mgmt", "--kubeconfig", "/tmp/x/kubeconfig", "--read-only", "--log-file", "/tmp/x/console.log"}
	want := []string{"upgrade-console", "watch", "--cluster", "mgmt", "--read-only"}
	if got := consoleCommand(args); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
