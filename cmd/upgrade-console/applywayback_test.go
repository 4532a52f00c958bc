package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

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

// A field conflict on a write after others landed (a writer that took
// the field after the dry run) is the upgrade failing part way, exit 4
// with the way back, not the refusal before any write that a conflict in
// the dry run is (exit 3): it read as that, and the way back went unsaid.
func TestApplyConflictPartWayExits4WithTheWayBack(t *testing.T) {
	w := startDemo(t, scenario.Rolling)
	p := startFaultProxy(t, w.Config)
	cluster := fmt.Sprintf("/apis/%s/%s/namespaces/%s/%s/%s", upgrade.GVREKSACluster.Group, upgrade.GVREKSACluster.Version,
		w.ClusterNamespace, upgrade.GVREKSACluster.Resource, w.ClusterName)
	p.refuse(func(r *http.Request) bool {
		return r.Method == http.MethodPatch && r.URL.Path == cluster && r.URL.Query().Get("dryRun") == ""
	}, http.StatusConflict)
	kc := p.kubeconfig(t, w.ClusterNamespace)
	out, errOut, code := runCaptured(t, "apply", "--kubeconfig", kc, "--cluster", w.ClusterName, "-f", w.TargetSpecPath,
		"--yes", "--force-conflicts")
	if code != ExitUpgradeFail || !strings.Contains(errOut, "were applied before the failure") ||
		!strings.Contains(errOut, "the way back: the spec was applied in part") || !strings.Contains(errOut, "upgrade-console snapshot restore") {
		t.Fatalf("exit %d, want %d and the way back after a conflict part way:\n%s\n%s", code, ExitUpgradeFail, out, errOut)
	}
}

// The console's own way back: the `snapshot restore` the refused apply
// prints, run as printed, dry-runs without a change, then puts the machine
// configs' template back as the snapshot has it, recorded step by step in
// the audit log, touching neither the Cluster nor the kept lock; run again
// it finds every step done. Nothing restored them before: the snapshot held
// their old spec and no command read it back.
func TestSnapshotRestoreAsTheRefusedApplyPrintsIt(t *testing.T) {
	w := startDemo(t, scenario.Rolling)
	p := startFaultProxy(t, w.Config)
	cluster := fmt.Sprintf("/apis/%s/%s/namespaces/%s/%s/%s", upgrade.GVREKSACluster.Group, upgrade.GVREKSACluster.Version,
		w.ClusterNamespace, upgrade.GVREKSACluster.Resource, w.ClusterName)
	p.refuse(func(r *http.Request) bool {
		return r.Method == http.MethodPatch && r.URL.Path == cluster && r.URL.Query().Get("dryRun") == ""
	}, http.StatusForbidden)
	state := t.TempDir()
	_, errOut, code := runCapturedIn(t, state, "apply", "--kubeconfig", p.kubeconfig(t, w.ClusterNamespace), "--cluster", w.ClusterName, "-f", w.TargetSpecPath,
		"--yes", "--force-conflicts", "--wait", "--timeout", "60s")
	var args []string
	for _, l := range strings.Split(errOut, "\n") {
		if c, ok := strings.CutPrefix(l, "  upgrade-console snapshot restore "); ok {
			args = append([]string{"snapshot", "restore"}, strings.Fields(c)...)
		}
	}
	if code != ExitUpgradeFail || args == nil || strings.Count(strings.Join(args, " "), "--object VSphereMachineConfig/") != 4 ||
		strings.Contains(strings.Join(args, " "), "VSphereDatacenterConfig") {
		t.Fatalf("exit %d, restore %q; want 4 and the four machine configs the apply changed named:\n%s", code, args, errOut)
	}
	dyn := kubeDynamic(t, w)
	mcs := dyn.Resource(schema.GroupVersionResource{Group: "anywhere.eks.amazonaws.com", Version: "v1alpha1", Resource: "vspheremachineconfigs"}).Namespace(w.ClusterNamespace)
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
	eksa := func() string {
		u, err := dyn.Resource(upgrade.GVREKSACluster).Namespace(w.ClusterNamespace).Get(context.Background(), w.ClusterName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// Its spec: EKS-A writes its status as the machine configs move.
		return fmt.Sprint(u.GetGeneration(), u.Object["spec"])
	}
	applied, clusterBefore := templates(), eksa()
	// The restore goes straight to the API server: the proxy's kubeconfig
	// names a user with no credentials, which only the console's apply
	// above needed no more than.
	args = append(args, "--kubeconfig", w.KubeconfigPath)
	out, errOut, code := runCapturedIn(t, state, append(args, "--dry-run")...)
	if code != 0 || !strings.Contains(out, "--dry-run: nothing was changed") || !reflect.DeepEqual(templates(), applied) {
		t.Fatalf("restore --dry-run: exit %d, templates %v (applied %v)\n%s\n%s", code, templates(), applied, out, errOut)
	}
	out, errOut, code = runCapturedIn(t, state, append(args, "--yes")...)
	if code != 0 || !strings.Contains(out, "lock clear lease --cluster "+w.ClusterName) {
		t.Fatalf("restore: exit %d\n%s\n%s", code, out, errOut)
	}
	for name, tmpl := range templates() {
		if !strings.HasSuffix(tmpl, "kube-1.30") || !strings.HasSuffix(applied[name], "kube-1.31") {
			t.Errorf("machine config %s: template %s after the apply, %s after the restore; want 1.31 then 1.30", name, applied[name], tmpl)
		}
	}
	if got := eksa(); got != clusterBefore {
		t.Errorf("the restore touched the Cluster it was not given: %s, was %s", got, clusterBefore)
	}
	st, err := upgrade.ReadLock(context.Background(), kubernetes.NewForConfigOrDie(w.Config), "eksa-system", w.ClusterName)
	if err != nil || !st.Held() || st.Kept == "" {
		t.Errorf("the lock the apply kept, after the restore: %+v, %v; want it left kept", st, err)
	}
	audit := auditLines(t, filepath.Join(state, "upgrade-console", upgrade.AuditFileName))
	if n := strings.Count(audit, "snapshot-restore:ok "); n != 4 || !strings.Contains(audit, "snapshot-restore:finished") {
		t.Errorf("audit: %d restore writes recorded, want 4 and the run finished:\n%s", n, audit)
	}
	out, errOut, code = runCapturedIn(t, state, append(args, "--yes")...)
	if code != 0 || !strings.Contains(out, "Nothing to do: every step is already done") {
		t.Errorf("restore run again: exit %d\n%s\n%s", code, out, errOut)
	}
}
