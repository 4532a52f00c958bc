package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
)

// editedSpec writes a copy of the demo's target spec whose Cluster document
// (the first) is changed by edit, and returns its path.
func editedSpec(t *testing.T, target string, edit func(spec map[string]any)) string {
	t.Helper()
	data, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	docs := bytes.SplitN(data, []byte("\n---\n"), 2)
	var cluster map[string]any
	if err := yaml.Unmarshal(docs[0], &cluster); err != nil || cluster["kind"] != "Cluster" {
		t.Fatalf("the target spec's first document is not the Cluster (%v):\n%s", err, docs[0])
	}
	edit(cluster["spec"].(map[string]any))
	out, err := yaml.Marshal(cluster)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) > 1 {
		out = append(append(out, "---\n"...), docs[1]...)
	}
	path := filepath.Join(t.TempDir(), filepath.Base(target))
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The reviewer's findings, as the binary shows them against the demo world:
// a misspelt provider kind, or a datacenter config that is nowhere, passed
// `plan` (exit 0) and was applied; an identity that may not read Leases got
// no plan at all (exit 1, no fix), and `lock status` no fix.
func TestLivePlanProviderRefsAndLockRights(t *testing.T) {
	w := startDemo(t, scenario.Rolling)
	plan := func(t *testing.T, spec string, extra ...string) (string, string, int) {
		t.Helper()
		return runCaptured(t, append([]string{"plan", "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName, "-f", spec}, extra...)...)
	}

	t.Run("references to provider objects", func(t *testing.T) {
		for _, c := range []struct {
			name  string
			edit  func(map[string]any)
			wants []string
		}{
			{"a misspelt machine config kind", func(s map[string]any) {
				s["workerNodeGroupConfigurations"].([]any)[1].(map[string]any)["machineGroupRef"].(map[string]any)["kind"] = "VSphereMachinConfig"
			}, []string{"spec.workerNodeGroupConfigurations[1].machineGroupRef.kind: VSphereMachinConfig is not a machine config kind the console knows (did you mean VSphereMachineConfig?)",
				"fix: set spec.workerNodeGroupConfigurations[1].machineGroupRef.kind: VSphereMachineConfig in "}},
			{"a misspelt datacenter config kind", func(s map[string]any) {
				s["datacenterRef"].(map[string]any)["kind"] = "VSphereDatacenterConfigg"
			}, []string{"spec.datacenterRef.kind: VSphereDatacenterConfigg is not a datacenter config kind the console knows (did you mean VSphereDatacenterConfig?)"}},
			{"a datacenter config that is nowhere", func(s map[string]any) {
				s["datacenterRef"].(map[string]any)["name"] = "mgmtt"
			}, []string{"spec.datacenterRef.name: VSphereDatacenterConfig mgmtt, but Cluster mgmt in the cluster has VSphereDatacenterConfig mgmt, and EKS-A refuses to change datacenterRef (immutable)",
				"fix: set spec.datacenterRef back to kind: VSphereDatacenterConfig, name: mgmt"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				out, errOut, code := plan(t, editedSpec(t, w.TargetSpecPath, c.edit))
				if code != ExitPreflight {
					t.Errorf("exit %d, want %d (stderr %q)", code, ExitPreflight, errOut)
				}
				for _, want := range append(c.wants, "fail   provider-refs", "kubernetes (EKS-D)") {
					if !strings.Contains(out, want) {
						t.Errorf("stdout lacks %q:\n%s", want, out)
					}
				}
				if !strings.Contains(errOut, "preflight check provider-refs blocks the upgrade") {
					t.Errorf("stderr %q", errOut)
				}
			})
		}
		out, errOut, code := plan(t, w.TargetSpecPath)
		if code != ExitOK || !strings.Contains(out, "pass   provider-refs") {
			t.Errorf("the target spec: exit %d, stderr %q\n%s", code, errOut, out)
		}
	})

	// An identity that may read the cluster and dry-run its spec, but not
	// get Leases.
	const user = "bob"
	var rules []rbacv1.PolicyRule
	for _, g := range []string{"", "anywhere.eks.amazonaws.com", "cluster.x-k8s.io", "controlplane.cluster.x-k8s.io",
		"etcdcluster.cluster.x-k8s.io", "bootstrap.cluster.x-k8s.io", "infrastructure.cluster.x-k8s.io", "apiextensions.k8s.io"} {
		rules = append(rules, cptest.ReadOnly(g, "*"))
	}
	rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{"anywhere.eks.amazonaws.com"}, Resources: []string{"*"}, Verbs: []string{"patch"}})
	cptest.Grant(t, w.Config, user, "", rules...)
	// With the console's connection flags: a bare can-i, pasted, asks
	// the shell's current context as its own user.
	canI := "`kubectl auth can-i get leases/upgrade-console-mgmt -n eksa-system" +
		model.ConnFlags{{Name: "kubeconfig", Value: w.KubeconfigPath}, {Name: "as", Value: user}}.String() + "`"

	t.Run("plan may not read the lock", func(t *testing.T) {
		out, errOut, code := plan(t, w.TargetSpecPath, "--as", user)
		if code != ExitPreflight {
			t.Errorf("exit %d, want %d (stderr %q)", code, ExitPreflight, errOut)
		}
		for _, want := range []string{"kubernetes (EKS-D)", "warn   spec-accepted               a server-side dry run", "pass   provider-refs",
			"fail   upgrade-lock                cannot tell whether another console holds the upgrade lock: the console may not read Lease eksa-system/upgrade-console-mgmt (leases.coordination.k8s.io \"upgrade-console-mgmt\" is forbidden: User \"bob\" cannot get resource \"leases\"",
			"fix: " + canI, "resourceNames: [upgrade-console-mgmt]"} {
			if !strings.Contains(out, want) {
				t.Errorf("stdout lacks %q:\n%s", want, out)
			}
		}
		// It may not take the lock nor save the snapshot either: said
		// before any write, not by a refused one after the confirmation.
		if !strings.Contains(errOut, "2 preflight checks block the upgrade: upgrade-lock, apply-access") ||
			!strings.Contains(out, "fail   apply-access") || !strings.Contains(out, "may not create leases.coordination.k8s.io in eksa-system (to take the upgrade lock)") {
			t.Errorf("stderr %q\n%s", errOut, out)
		}
	})

	t.Run("lock status may not read the lock", func(t *testing.T) {
		out, errOut, code := runCaptured(t, "lock", "status", "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName, "--as", user)
		if code != ExitBadInput || out != "" {
			t.Errorf("exit %d (want %d), stdout %q", code, ExitBadInput, out)
		}
		for _, want := range []string{"Lease eksa-system/upgrade-console-mgmt: the console may not read the upgrade lock: leases.coordination.k8s.io \"upgrade-console-mgmt\" is forbidden: User \"bob\"",
			"(fix: " + canI, "resourceNames: [upgrade-console-mgmt]"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("stderr %q lacks %q", errOut, want)
			}
		}
	})
}
