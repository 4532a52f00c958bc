package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
)

// A spec whose machine configs the CRD's schema refuses (a cloneMode
// outside its enum, which the console's own schema check leaves to the API
// server) is bad input: plan and apply end it with exit 1 naming the file,
// the document, the field and the fix, as apply's own dry run did, where
// spec-accepted made it exit 3, a plan the cluster would refuse.
func TestASpecTheAPIServerRefusesIsBadInputOnEveryPath(t *testing.T) {
	w := startDemo(t, scenario.Rolling)
	target, err := os.ReadFile(w.TargetSpecPath)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.ReplaceAll(target, []byte("cloneMode: fullClone"), []byte("cloneMode: halfClone"))
	if bytes.Equal(bad, target) {
		t.Fatal("the target spec has no cloneMode: fullClone")
	}
	spec := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(spec, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	want := spec + `: document 3 (VSphereMachineConfig mgmt-cp): spec.cloneMode: the API server refuses it: Unsupported value: "halfClone": supported values: "fullClone", "linkedClone"; refused too: document 4 (VSphereMachineConfig mgmt-etcd),`
	for _, cmd := range [][]string{{"plan"}, {"apply", "--dry-run", "--force-conflicts"}, {"apply", "--yes", "--force-conflicts"}} {
		args := append([]string{cmd[0], "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName, "-f", spec}, cmd[1:]...)
		out, errOut, code := runCaptured(t, args...)
		if code != ExitBadInput || !strings.Contains(errOut, want) ||
			!strings.Contains(errOut, "(fix: give spec.cloneMode a value the API server's schema of VSphereMachineConfig allows") {
			t.Errorf("%s: exit %d, want %d saying\n%s\n%s\n%s", strings.Join(cmd, " "), code, ExitBadInput, want, errOut, out)
		}
		if strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%s: the error is not one line:\n%s", strings.Join(cmd, " "), errOut)
		}
		if !strings.Contains(out, "fail   spec-accepted") {
			t.Errorf("%s: the plan does not show spec-accepted failing:\n%s", strings.Join(cmd, " "), out)
		}
	}
}
