package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A NODE no Node can be named is refused up front, naming the argument and
// the fix, as a --cluster a/b is: the API server's refusal of the read
// ("read Node Bad/Name: invalid resource name …") said neither. Refused
// before connecting: the kubeconfig here does not exist.
func TestNodeRetryRefusesANameNoNodeCanHave(t *testing.T) {
	_, errOut, code := runCaptured(t, "node", "retry", "Bad/Name", "--cluster", "mgmt", "--kubeconfig", "/nonexistent")
	if code != ExitBadInput || !strings.Contains(errOut, `node Bad/Name: "Bad/Name" is not a node name`) || !strings.Contains(errOut, "fix: give the NODE argument") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// The fix names the connection flag at fault, or says the file is no
// kubeconfig: it said "give --kubeconfig (or KUBECONFIG) and --context"
// of a --user or --certificate-authority that was wrong, and quoted
// client-go's "json: cannot unmarshal string into Go value of type struct
// { APIVersion …" of a file that is no kubeconfig.
func TestKubeconfigErrorNamesTheConnectionFlagAtFault(t *testing.T) {
	kubeconfig := unreachableKubeconfig(t)
	garbage := filepath.Join(t.TempDir(), "kc")
	if err := os.WriteFile(garbage, []byte("garbage\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args      []string
		want, not string
	}{
		{[]string{"--kubeconfig", kubeconfig, "--user", "nosuchuser"}, "fix: give --user one of the kubeconfig's users (nobody)", "give --kubeconfig"},
		{[]string{"--kubeconfig", kubeconfig, "--certificate-authority", "/nonexist.crt"}, "fix: give --certificate-authority a file that exists", "give --kubeconfig"},
		{[]string{"--kubeconfig", kubeconfig, "--client-certificate", "/nonexist.crt"}, "fix: give --client-certificate a file that exists", "give --kubeconfig"},
		{[]string{"--kubeconfig", garbage}, garbage + ": is not a kubeconfig", "cannot unmarshal"},
	} {
		_, errOut, code := runCaptured(t, append([]string{"lock", "status", "--cluster", "mgmt"}, tc.args...)...)
		if code != ExitBadInput || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, tc.not) {
			t.Errorf("%v: exit %d, stderr %q, want %q and not %q", tc.args, code, errOut, tc.want, tc.not)
		}
	}
	t.Setenv("KUBECONFIG", garbage)
	if _, errOut, code := runCaptured(t, "lock", "status", "--cluster", "mgmt"); code != ExitBadInput || !strings.Contains(errOut, "fix: KUBECONFIG names it") {
		t.Errorf("KUBECONFIG=%s: exit %d, stderr %q", garbage, code, errOut)
	}
}

// demo --dir a file says what to give: "mkdir …: not a directory" said no
// fix. Refused before the control plane starts.
func TestDemoDirThatIsAFileIsRefusedWithItsFix(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{file, filepath.Join(file, "sub")} {
		_, errOut, code := runCaptured(t, "demo", "--dir", dir)
		if code != ExitBadInput || !strings.Contains(errOut, "--dir: "+dir) || !strings.Contains(errOut, "fix: it, or a directory above it, is a file") {
			t.Errorf("--dir %s: exit %d, stderr %q", dir, code, errOut)
		}
	}
}
