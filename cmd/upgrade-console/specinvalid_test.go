package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/upgrade"
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

// Worker groups EKS-A's own validation refuses (two named md-0: "worker
// node group names must be unique", aws/eks-anywhere
// pkg/api/v1alpha1/cluster.go validateWorkerNodeGroups), which the demo's
// API server, without EKS-A's webhook, would take: plan, offline plan and
// apply refuse the file as bad input before anything is sent, and the
// Cluster is left as it was.
func TestWorkerGroupsEKSARefusesAreBadInputBeforeAnyWrite(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	w := startDemo(t, scenario.Rolling)
	target, err := os.ReadFile(w.TargetSpecPath)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Replace(target, []byte("    name: md-1\n"), []byte("    name: md-0\n"), 1)
	if bytes.Equal(bad, target) {
		t.Fatal("the target spec has no worker group md-1")
	}
	spec := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(spec, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	before, err := kubeDynamic(t, w).Resource(upgrade.GVREKSACluster).Namespace(w.ClusterNamespace).Get(ctx, w.ClusterName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := spec + `: Cluster mgmt: spec.workerNodeGroupConfigurations[1].name: "md-0" is also the name of workerNodeGroupConfigurations[0]: worker node group names must be unique (EKS-A refuses it) (fix: give each worker group a name of its own`
	for _, args := range [][]string{
		planArgs("bundles-2024-11.yaml", "bundles-2025-03.yaml", "1.30", "-f", spec),
		{"plan", "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName, "-f", spec},
		{"apply", "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName, "-f", spec, "--yes", "--force-conflicts"},
	} {
		_, errOut, code := runCaptured(t, args...)
		if code != ExitBadInput || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d, want %d saying\n%s\n%s", strings.Join(args, " "), code, ExitBadInput, want, errOut)
		}
	}
	after, err := kubeDynamic(t, w).Resource(upgrade.GVREKSACluster).Namespace(w.ClusterNamespace).Get(ctx, w.ClusterName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.GetResourceVersion() != before.GetResourceVersion() {
		t.Errorf("the Cluster was written: resourceVersion %s, then %s", before.GetResourceVersion(), after.GetResourceVersion())
	}
}
