package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/upgrade-console/upgrade-console/model"
)

// runCaptured runs the CLI in-process as main does and returns what it wrote
// and its exit code.
func runCaptured(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runCapturedIn(t, t.TempDir(), args...)
}

// runCapturedIn is runCaptured with the state directory (log, audit log,
// snapshots) in dir.
func runCapturedIn(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", dir) // the log file goes here, not to the user's state dir
	return runCapturedTo(t, dir, args...)
}

// runCapturedTo runs the command with its output captured in files in dir,
// the environment as the caller left it.
func runCapturedTo(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	outF, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	errF, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = outF, errF
	code = run(args)
	os.Stdout, os.Stderr = oldOut, oldErr
	_ = outF.Close()
	_ = errF.Close()
	o, _ := os.ReadFile(outF.Name())
	e, _ := os.ReadFile(errF.Name())
	return string(o), string(e), code
}

func fixture(name string) string { return filepath.Join("..", "..", "model", "testdata", name) }

func planArgs(from, to, kube string, extra ...string) []string {
	return append([]string{"plan", "--from-bundles", fixture(from), "--to-bundles", fixture(to), "--kubernetes-version", kube}, extra...)
}

const wantPlanTable = `NAME                      CURRENT               TARGET                CHANGE
Flux                      v2.4.0+abcdef1        v2.5.1+abcdef1        minor
cert-manager              v1.16.1+abcdef1       v1.16.4+abcdef1       patch
cluster-api               v1.8.5+abcdef1        v1.9.4+abcdef1        minor
kubeadm control plane     v1.8.5+abcdef1        v1.9.4+abcdef1        minor
vsphere                   v1.11.2+abcdef1       v1.12.0+abcdef1       minor
docker                    v1.8.5+abcdef1        v1.9.4+abcdef1        minor
tinkerbell                v0.5.3+abcdef1        v0.6.4+abcdef1        minor
nutanix                   v1.4.0+abcdef1        v1.5.3+abcdef1        minor
snow                      v0.1.27+abcdef1       v0.2.1+abcdef1        minor
kubeadm bootstrap         v1.8.5+abcdef1        v1.9.4+abcdef1        minor
cilium                    v1.14.12-eksa.2       v1.15.14-eksa.1       minor
kubernetes (EKS-D)        v1.30.5-eks-1-30-17   v1.31.6-eks-1-31-16   minor
kindnetd                  v0.25.0+abcdef1       v0.26.0+abcdef1       minor
package controller        v0.4.4+abcdef1        v0.4.6+abcdef1        patch
in-place upgrader image   v1-30-17-eks-a-1      v1-31-16-eks-a-1      changed

15 of 20 components change: 12 minor, 2 patch, 1 changed; 5 unchanged

preflight:
  pass      target-kubernetes-known   ../../model/testdata/bundles-2025-03.yaml (bundles-86) carries Kubernetes 1.31 (v1.31.6-eks-1-31-16)
  pass      kubernetes-version-skew   Kubernetes 1.30 → 1.31 is one minor up
  skipped   eksa-version-skew         target v0.0.0-dev+build.0+abcdef1 is a development build; EKS-A does not check its version skew
`

const wantSpecPlanTable = `NAME                    CURRENT               TARGET                CHANGE
cert-manager            v1.16.1+abcdef1       v1.16.4+abcdef1       patch
cluster-api             v1.8.5+abcdef1        v1.9.4+abcdef1        minor
kubeadm control plane   v1.8.5+abcdef1        v1.9.4+abcdef1        minor
vsphere                 v1.11.2+abcdef1       v1.12.0+abcdef1       minor
kubeadm bootstrap       v1.8.5+abcdef1        v1.9.4+abcdef1        minor
cilium                  v1.14.12-eksa.2       v1.15.14-eksa.1       minor
kubernetes (EKS-D)      v1.30.5-eks-1-30-17   v1.31.6-eks-1-31-16   minor
kindnetd                v0.25.0+abcdef1       v0.26.0+abcdef1       minor
package controller      v0.4.4+abcdef1        v0.4.6+abcdef1        patch

9 of 13 components change: 7 minor, 2 patch; 4 unchanged; 7 unused (not run by this cluster)

preflight:
  pass      target-kubernetes-known   ../../model/testdata/bundles-2025-03.yaml (bundles-86) carries Kubernetes 1.31 (v1.31.6-eks-1-31-16)
  pass      kubernetes-version-skew   Kubernetes 1.30 → 1.31 is one minor up
  skipped   eksa-version-skew         target v0.0.0-dev+build.0+abcdef1 is a development build; EKS-A does not check its version skew
`

func TestPlanTable(t *testing.T) {
	out, errOut, code := runCaptured(t, planArgs("bundles-2024-11.yaml", "bundles-2025-03.yaml", "1.30", "--target-kubernetes-version", "1.31")...)
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if out != wantPlanTable {
		t.Errorf("table:\n%s\nwant:\n%s", out, wantPlanTable)
	}
}

func TestPlanTableAllAndUpToDate(t *testing.T) {
	out, _, code := runCaptured(t, planArgs("bundles-2024-11.yaml", "bundles-2025-03.yaml", "1.30", "--all")...)
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	// Unchanged rows appear with --all; without a Kubernetes upgrade the
	// kubernetes row is a patch to the newer EKS-D of 1.30.
	for _, want := range []string{
		"EKS-A management           v0.0.0-dev+build.0+abcdef1   v0.0.0-dev+build.0+abcdef1   none",
		"etcdadm-controller         v1.0.24+abcdef1              v1.0.24+abcdef1              none",
		"kubernetes (EKS-D)         v1.30.5-eks-1-30-17          v1.30.10-eks-1-30-27         patch",
		// The image-only rows follow the versioned ones.
		"in-place upgrader image    v1-30-17-eks-a-1             v1-30-27-eks-a-1             changed",
		"bottlerocket admin image   v0.11.13                     v0.11.13                     none",
		"Kubernetes stays at 1.30",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("--all output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\n"); n != 1+20+1+1+1+1+3 {
		t.Errorf("--all output has %d lines:\n%s", n, out)
	}

	out, _, code = runCaptured(t, planArgs("bundles-2025-03.yaml", "bundles-2025-03.yaml", "1.31")...)
	if code != ExitOK || !strings.HasPrefix(out, "all components are up to date\n\npreflight:\n") || strings.Contains(out, "NAME") {
		t.Errorf("up to date: exit %d\n%s", code, out)
	}
}

func TestPlanJSONContract(t *testing.T) {
	out, errOut, code := runCaptured(t, planArgs("bundles-2025-03.yaml", "bundles-synthetic-next.yaml", "1.31", "-o", "json")...)
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	// The field set is the contract scripts read (README's table): a
	// rename or a removal fails here.
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &top); err != nil {
		t.Fatalf("stdout is not the JSON document: %v\n%s", err, out)
	}
	if got := sortedKeys(top); !reflect.DeepEqual(got, []string{"apiVersion", "blocked", "components", "kind", "mayStart", "preflight"}) {
		t.Errorf("top-level keys = %v", got)
	}
	if got := string(top["apiVersion"]) + " " + string(top["kind"]) + " " + string(top["mayStart"]) + " " + string(top["blocked"]); got != `"upgrade-console/v1" "Plan" true []` {
		t.Errorf("apiVersion kind mayStart blocked = %s", got)
	}
	var doc map[string][]map[string]any
	if err := json.Unmarshal([]byte(`{"components":`+string(top["components"])+`,"preflight":`+string(top["preflight"])+`}`), &doc); err != nil {
		t.Fatal(err)
	}
	// Every component of either side, unchanged ones included.
	if len(doc["components"]) != 21 {
		t.Errorf("%d components, want 21", len(doc["components"]))
	}
	kinds := map[any]bool{}
	for _, c := range doc["components"] {
		want := []string{"change", "key", "name", "newVersion", "oldVersion"}
		if k, _ := c["key"].(string); strings.Contains(k, ".") { // an image-only row
			want = []string{"change", "key", "name", "newImage", "newVersion", "oldImage", "oldVersion"}
		}
		if got := sortedKeys(c); !reflect.DeepEqual(got, want) {
			t.Errorf("component %v keys = %v", c["key"], got)
		}
		kinds[c["change"]] = true
	}
	for _, k := range []string{"none", "added", "removed", "changed", "major", "patch", "downgrade", "rebuild"} {
		if !kinds[k] {
			t.Errorf("no %q row in %v", k, kinds)
		}
	}
	for _, p := range doc["preflight"] {
		for _, k := range []string{"name", "status", "message", "remediation"} {
			if _, ok := p[k]; !ok {
				t.Errorf("preflight entry %v lacks %q", p, k)
			}
		}
	}

	// YAML carries the same document.
	yout, _, code := runCaptured(t, planArgs("bundles-2025-03.yaml", "bundles-synthetic-next.yaml", "1.31", "-o", "yaml")...)
	var fromJSON, fromYAML model.Plan
	if err := json.Unmarshal([]byte(out), &fromJSON); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(yout), &fromYAML); err != nil || code != ExitOK {
		t.Fatalf("yaml: exit %d, %v\n%s", code, err, yout)
	}
	if !reflect.DeepEqual(fromJSON, fromYAML) {
		t.Errorf("yaml and json differ:\n%+v\n%+v", fromYAML, fromJSON)
	}
}

func TestPlanBlockingPreflight(t *testing.T) {
	out, errOut, code := runCaptured(t, planArgs("bundles-2024-11.yaml", "bundles-2025-03.yaml", "1.30", "--target-kubernetes-version", "1.32")...)
	if code != ExitPreflight {
		t.Errorf("exit %d, want %d", code, ExitPreflight)
	}
	// The plan is still printed, with the failure and its fix.
	for _, want := range []string{"kubernetes (EKS-D)", "fail      kubernetes-version-skew   Kubernetes 1.30 → 1.32 skips 1 minor", "fix: upgrade to 1.31 first"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "preflight check kubernetes-version-skew blocks the upgrade") {
		t.Errorf("stderr = %q", errOut)
	}

	// --skip is checked as in the live plan: an unknown name, or a check
	// that guards against a refused upgrade, is bad input.
	for skip, want := range map[string]string{"foo": `no preflight check is named "foo"`, "kubernetes-version-skew": "cannot be skipped"} {
		_, errOut, code := runCaptured(t, planArgs("bundles-2024-11.yaml", "bundles-2025-03.yaml", "1.30", "--target-kubernetes-version", "1.32", "--skip", skip)...)
		if code != ExitBadInput || !strings.Contains(errOut, want) {
			t.Errorf("--skip %s: exit %d, stderr %q; want %d and %q", skip, code, errOut, ExitBadInput, want)
		}
	}

	// A target newer than the target bundles know, as JSON: stdout stays a
	// clean document for scripts, the reason goes to stderr.
	out, errOut, code = runCaptured(t, planArgs("bundles-2025-03.yaml", "bundles-synthetic-next.yaml", "1.32", "--target-kubernetes-version", "1.33", "-o", "json")...)
	var p model.Plan
	if err := json.Unmarshal([]byte(out), &p); err != nil || code != ExitPreflight {
		t.Fatalf("exit %d, %v\n%s", code, err, out)
	}
	if p.Preflight[0].Name != model.CheckNameTargetKubernetesKnown || p.Preflight[0].Status != model.CheckFail || !p.Preflight[0].Blocking {
		t.Errorf("preflight[0] = %+v", p.Preflight[0])
	}
	// The verdict agrees with the exit code.
	var v struct {
		MayStart *bool    `json:"mayStart"`
		Blocked  []string `json:"blocked"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.MayStart == nil || *v.MayStart || !reflect.DeepEqual(v.Blocked, []string{model.CheckNameTargetKubernetesKnown}) {
		t.Errorf("mayStart %v, blocked %v (%v); want false, [%s]", v.MayStart, v.Blocked, err, model.CheckNameTargetKubernetesKnown)
	}
	if !strings.Contains(errOut, "newer than anything") {
		t.Errorf("stderr = %q", errOut)
	}
}

func TestPlanBadInputAndUsage(t *testing.T) {
	dir := t.TempDir()
	cluster := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(cluster, []byte("apiVersion: anywhere.eks.amazonaws.com/v1alpha1\nkind: Cluster\nmetadata: {name: mgmt}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, b := fixture("bundles-2024-11.yaml"), fixture("bundles-2025-03.yaml")
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr []string
	}{
		{"unknown kubernetes", planArgs("bundles-2024-11.yaml", "bundles-2025-03.yaml", "1.32"), ExitBadInput,
			[]string{"bundles-2024-11.yaml", `Kubernetes "1.32"`, "it contains 1.29, 1.30, 1.31"}},
		{"missing file", []string{"plan", "--from-bundles", filepath.Join(dir, "nope.yaml"), "--to-bundles", b, "--kubernetes-version", "1.30"}, ExitBadInput,
			[]string{"nope.yaml: cannot be read", "--from-bundles"}},
		{"not bundles", []string{"plan", "--from-bundles", a, "--to-bundles", cluster, "--kubernetes-version", "1.30"}, ExitBadInput,
			[]string{"cluster.yaml: kind: is a Cluster object", "not an EKS-A Bundles"}},
		{"bad output", planArgs("bundles-2024-11.yaml", "bundles-2025-03.yaml", "1.30", "-o", "xml"), ExitBadInput,
			[]string{`--output: unknown format "xml"`}},
		{"patch kubernetes version", planArgs("bundles-2024-11.yaml", "bundles-2025-03.yaml", "1.30", "--target-kubernetes-version", "1.31.2"), ExitBadInput,
			[]string{`--target-kubernetes-version: "1.31.2" is not a Kubernetes minor version`, "e.g. 1.31"}},
		{"word kubernetes version", planArgs("bundles-2024-11.yaml", "bundles-2025-03.yaml", "abc"), ExitBadInput,
			[]string{`--kubernetes-version: "abc" is not a Kubernetes minor version`}},
		{"no flags", []string{"plan"}, ExitUsage, []string{"plan needs --from-bundles and --to-bundles"}},
		{"spec without --cluster", []string{"plan", "-f", "spec.yaml"}, ExitUsage, []string{"-f spec.yaml needs --cluster NAME"}},
		{"one manifest", []string{"plan", "--from-bundles", a, "--kubernetes-version", "1.30"}, ExitUsage, []string{"both --from-bundles and --to-bundles"}},
		{"no kubernetes version", []string{"plan", "--from-bundles", a, "--to-bundles", b}, ExitUsage, []string{"needs --kubernetes-version"}},
		{"unknown flag", []string{"plan", "--bundles", a}, ExitUsage, []string{"unknown flag: --bundles"}},
		{"argument", append(planArgs("bundles-2024-11.yaml", "bundles-2025-03.yaml", "1.30"), "extra"), ExitUsage, []string{"takes 0 argument(s)"}},
		{"log file in a missing directory", planArgs("bundles-2024-11.yaml", "bundles-2025-03.yaml", "1.30", "--log-file", filepath.Join(dir, "typo", "uc.log")), ExitBadInput,
			[]string{"--log-file: " + filepath.Join(dir, "typo", "uc.log") + ": no such file or directory", "fix: create the directory " + filepath.Join(dir, "typo")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCaptured(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, errOut)
			}
			if out != "" {
				t.Errorf("stdout = %q, want nothing on error", out)
			}
			for _, s := range tc.stderr {
				if !strings.Contains(errOut, s) {
					t.Errorf("stderr %q lacks %q", errOut, s)
				}
			}
		})
	}
	// The directory --log-file named is not created behind the operator.
	if _, err := os.Stat(filepath.Join(dir, "typo")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--log-file in a missing directory: stat = %v, want the directory left uncreated", err)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// An offline plan needs no state: with no state directory to be had (a CI
// container's read-only HOME), it still runs, and the logs go nowhere, not
// to the terminal.
func TestOfflinePlanWithoutAStateDirectory(t *testing.T) {
	dir := t.TempDir()
	notADir := filepath.Join(dir, "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_STATE_HOME", notADir)
	out, errOut, code := runCapturedTo(t, dir, planArgs("bundles-2024-11.yaml", "bundles-2025-03.yaml", "1.30")...)
	if code != ExitOK || !strings.Contains(out, "15 of 20 components change") {
		t.Errorf("exit %d, stdout %q, stderr %q: want the plan", code, out, errOut)
	}
	if !strings.Contains(errOut, "logs discarded") {
		t.Errorf("stderr %q does not say the logs are discarded", errOut)
	}
}

// An offline plan given a spec checks it and takes its kubernetesVersion
// as the target: -f used to be ignored, and a spec with a misspelt field
// passed the plan.
func TestOfflinePlanReadsTheSpec(t *testing.T) {
	const cluster = `apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: Cluster
metadata:
  name: mgmt
spec:
  kubernetesVersion: "1.31"
  datacenterRef: {kind: VSphereDatacenterConfig, name: mgmt}
  controlPlaneConfiguration:
    count: 3
    machineGroupRef: {kind: VSphereMachineConfig, name: mgmt-cp}
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: VSphereDatacenterConfig
metadata:
  name: mgmt
spec:
  datacenter: SDDC-Datacenter
  network: /SDDC-Datacenter/network/sddc-cgw-network-1
  server: vcenter.example.com
---
apiVersion: anywhere.eks.amazonaws.com/v1alpha1
kind: VSphereMachineConfig
metadata:
  name: mgmt-cp
spec:
  template: /SDDC-Datacenter/vm/Templates/ubuntu-2204-kube-1.31
`
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", cluster)
	out, errOut, code := runCaptured(t, planArgs("bundles-2024-11.yaml", "bundles-2025-03.yaml", "1.30", "-f", good)...)
	// The spec's references are checked from the file alone. The rows of
	// what a vSphere cluster without gitOpsRef or an InPlace rollout does
	// not run (Flux, the other providers, the in-place upgrader) are
	// unused, out of the table and counted apart: they read as changes of
	// the upgrade.
	want := wantSpecPlanTable + "  pass      worker-version-skew       all worker groups follow the control plane's Kubernetes version\n" +
		"  pass      provider-refs             datacenterRef and 1 machineGroupRef(s) name vSphere objects that " + good + " holds\n"
	if code != ExitOK || out != want {
		t.Errorf("exit %d, stderr %q; table:\n%s\nwant (Kubernetes 1.31 from the spec):\n%s", code, errOut, out, want)
	}
	badRef := write("badref.yaml", strings.Replace(cluster, "kind: VSphereMachineConfig, name: mgmt-cp}", "kind: VSphereMachinConfig, name: mgmt-cp}", 1))
	out, _, code = runCaptured(t, planArgs("bundles-2024-11.yaml", "bundles-2025-03.yaml", "1.30", "-f", badRef)...)
	if code != ExitPreflight || !strings.Contains(out, "fail      provider-refs") || !strings.Contains(out, "did you mean VSphereMachineConfig?") {
		t.Errorf("a misspelt machineGroupRef kind, offline: exit %d\n%s", code, out)
	}
	// A provider newer than the console is not a dead end: the check is
	// skipped by name, and says so.
	out, errOut, code = runCaptured(t, planArgs("bundles-2024-11.yaml", "bundles-2025-03.yaml", "1.30", "-f", badRef, "--skip", "provider-refs")...)
	if code != ExitOK || !strings.Contains(out, "skipped   provider-refs") {
		t.Errorf("provider-refs skipped: exit %d, stderr %q\n%s", code, errOut, out)
	}
	typo := write("typo.yaml", strings.Replace(cluster, "kubernetesVersion:", "kubernetesVersio:", 1))
	_, errOut, code = runCaptured(t, planArgs("bundles-2024-11.yaml", "bundles-2025-03.yaml", "1.30", "-f", typo)...)
	if code != ExitBadInput || !strings.Contains(errOut, "spec.kubernetesVersio") || !strings.Contains(errOut, "did you mean kubernetesVersion?") {
		t.Errorf("a misspelt field: exit %d, stderr %q", code, errOut)
	}
	// A worker group pinned three minors behind the control plane: EKS-A
	// refuses it, and the offline plan passed it (the worker skew check was
	// the live plan's alone).
	pinned := write("pinned.yaml", strings.Replace(cluster, "  controlPlaneConfiguration:", `  workerNodeGroupConfigurations:
  - name: md-0
    count: 2
    kubernetesVersion: "1.28"
    machineGroupRef: {kind: VSphereMachineConfig, name: mgmt-cp}
  controlPlaneConfiguration:`, 1))
	out, _, code = runCaptured(t, planArgs("bundles-2024-11.yaml", "bundles-2025-03.yaml", "1.30", "-f", pinned)...)
	if code != ExitPreflight || !strings.Contains(out, "fail      worker-version-skew") || !strings.Contains(out, "md-0") {
		t.Errorf("a worker group three minors behind, offline: exit %d\n%s", code, out)
	}
	_, errOut, code = runCaptured(t, planArgs("bundles-2024-11.yaml", "bundles-2025-03.yaml", "1.30", "-f", good, "--target-kubernetes-version", "1.32")...)
	if code != ExitBadInput || !strings.Contains(errOut, "asks for Kubernetes 1.31") {
		t.Errorf("a target the spec contradicts: exit %d, stderr %q", code, errOut)
	}
}

// A --skip of a check an offline plan does not make was silently ignored,
// the skip read as made: it is said, as a warning of its own.
func TestOfflinePlanSaysASkipOfACheckItDoesNotMake(t *testing.T) {
	out, errOut, code := runCaptured(t, planArgs("bundles-2024-11.yaml", "bundles-2025-03.yaml", "1.30", "--skip", "nodes-ready")...)
	if code != ExitOK || !strings.Contains(out, "warn      nodes-ready               --skip nodes-ready skips nothing: an offline plan does not make this check") {
		t.Errorf("exit %d, stderr %q\n%s", code, errOut, out)
	}
}

// A check's message carries cluster text (a failureMessage): its lines
// are joined on the table's, where they read as lines of the plan, and it
// is escaped whichever way it came (a Lease holder with no "@" was not).
func TestPlanTableJoinsAndEscapesCheckMessages(t *testing.T) {
	var out bytes.Buffer
	p := &model.Plan{Preflight: []model.CheckResult{{Name: "no-failure-message", Status: model.CheckFail,
		Message: "KubeadmControlPlane mgmt reports a failure: disk full\n2026-11-25T12:18:03Z outcome: done (forged line)\x1b[2K\r\tx", Remediation: "look\nhere"}}}
	writePlanTableFor(&out, p, false, nil)
	if got := out.String(); strings.Contains(got, "\n2026-11-25") || strings.ContainsAny(got, "\x1b\r") ||
		!strings.Contains(got, `disk full; 2026-11-25T12:18:03Z outcome: done (forged line)\x1b[2K\r\tx`) || !strings.Contains(got, "fix: look; here") {
		t.Errorf("table:\n%s", got)
	}
	if err := blockedError([]model.CheckResult{{Name: "x", Blocking: true, Message: "a\nb", Remediation: "c"}}); strings.Contains(err.Error(), "\n") {
		t.Errorf("blocked error: %q", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// plan -o json/yaml into a file on a full disk fails: it exited 0 with the
// file cut short, for a script to read.
func TestPlanOutputWriteErrorsFail(t *testing.T) {
	for _, format := range []string{"json", "yaml"} {
		if err := writePlan(failingWriter{}, format, map[string]string{"a": "b"}, nil); err == nil || !strings.Contains(err.Error(), "no space left on device") {
			t.Errorf("-o %s to a full disk: %v, want the write's error", format, err)
		}
	}
}
