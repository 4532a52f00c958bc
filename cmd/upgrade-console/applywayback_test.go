package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// apply whose Cluster write the API server refuses after its dry runs
// passed (an admission policy on real writes alone) exits 4 with the
// machine configs on the new template, and says the way back: each document
// applied and the commands that, pasted as printed, put their template
// back as the snapshot has it, then how to release the lock it keeps. It
// said the documents were applied and the lock kept, and no more.
func TestApplyRefusedPartWaySaysTheWayBack(t *testing.T) {
	kubectl := filepath.Join(cptest.AssetsDir(), "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Skipf("no kubectl in %s to paste the way back into", cptest.AssetsDir())
	}
	w := startDemo(t, scenario.Rolling)
	p := startFaultProxy(t, w.Config)
	cluster := fmt.Sprintf("/apis/%s/%s/namespaces/%s/%s/%s", upgrade.GVREKSACluster.Group, upgrade.GVREKSACluster.Version,
		w.ClusterNamespace, upgrade.GVREKSACluster.Resource, w.ClusterName)
	p.refuse(func(r *http.Request) bool {
		return r.Method == http.MethodPatch && r.URL.Path == cluster && r.URL.Query().Get("dryRun") == ""
	}, http.StatusForbidden)
	kc := p.kubeconfig(t, w.ClusterNamespace)
	out, errOut, code := runCaptured(t, "apply", "--kubeconfig", kc, "--cluster", w.ClusterName, "-f", w.TargetSpecPath,
		"--yes", "--force-conflicts", "--wait", "--timeout", "60s")
	if code != ExitUpgradeFail || !strings.Contains(errOut, "were applied before the failure") {
		t.Fatalf("exit %d, want %d after a part of the spec was applied:\n%s\n%s", code, ExitUpgradeFail, out, errOut)
	}
	mcs := kubeDynamic(t, w).Resource(schema.GroupVersionResource{Group: "anywhere.eks.amazonaws.com", Version: "v1alpha1", Resource: "vspheremachineconfigs"}).Namespace(w.ClusterNamespace)
	templates := func() map[string]string {
		list, err := mcs.List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, mc := range list.Items {
			m[mc.GetName()], _, _ = unstructured.NestedString(mc.Object, "spec", "template")
		}
		return m
	}
	applied := templates()
	var cmds []string
	for _, l := range strings.Split(errOut, "\n") {
		if c, ok := strings.CutPrefix(l, "  kubectl --kubeconfig "+kc+" -n "+w.ClusterNamespace+" patch vspheremachineconfigs.anywhere.eks.amazonaws.com "); ok {
			// Pasted with the demo's own kubeconfig: the proxy's names a
			// user with no credentials, for which kubectl asks a password.
			cmds = append(cmds, kubectl+" --kubeconfig "+w.KubeconfigPath+" -n "+w.ClusterNamespace+" patch vspheremachineconfigs.anywhere.eks.amazonaws.com "+c)
		}
	}
	if len(applied) == 0 || len(cmds) != len(applied) || !strings.Contains(errOut, "the way back: the spec was applied in part") ||
		!strings.Contains(errOut, "release the lock with `upgrade-console lock clear lease --cluster "+w.ClusterName+" --kubeconfig "+kc+"`") {
		t.Fatalf("%d machine config(s), %d patch(es) printed; want one each and the lock's release:\n%s", len(applied), len(cmds), errOut)
	}
	for _, c := range cmds {
		if b, err := exec.Command("sh", "-c", c).CombinedOutput(); err != nil {
			t.Fatalf("pasted %s: %v\n%s", c, err, b)
		}
	}
	for name, tmpl := range templates() {
		if !strings.HasSuffix(tmpl, "kube-1.30") || !strings.HasSuffix(applied[name], "kube-1.31") {
			t.Errorf("machine config %s: template %s after the apply, %s after the way back; want 1.31 then 1.30", name, applied[name], tmpl)
		}
	}
}
