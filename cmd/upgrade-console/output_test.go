package main

import (
	"strings"
	"testing"
)

// Every command that prints a document refuses an unknown --output in the
// same words, naming its own default: the fixes read "use one of text,
// json, yaml" for version and plan, and "use table, json or yaml" for lock
// status, snapshot list and audit.
func TestUnknownOutputIsOneRefusal(t *testing.T) {
	for _, c := range []struct {
		args []string
		def  string
	}{
		{[]string{"version", "-o", "xml"}, "text"},
		{planArgs("bundles-2024-11.yaml", "bundles-2025-03.yaml", "1.30", "-o", "xml"), "table"},
		{[]string{"lock", "status", "--cluster", "mgmt", "--kubeconfig", unreachableKubeconfig(t), "-o", "xml"}, "table"},
		{[]string{"snapshot", "list", "--cluster", "mgmt", "--kubeconfig", unreachableKubeconfig(t), "-o", "xml"}, "table"},
		{[]string{"audit", "-o", "xml"}, "table"},
	} {
		_, errOut, code := runCaptured(t, c.args...)
		want := `--output: unknown format "xml" (fix: use one of ` + c.def + `, json, yaml)`
		if code != ExitBadInput || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d, want %d saying %s\n%s", strings.Join(c.args, " "), code, ExitBadInput, want, errOut)
		}
	}
}
