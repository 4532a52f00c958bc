package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// apply --tui whose start the API server refuses part way (the machine
// configs applied, the Cluster's own write forbidden) exits 4, as apply
// without --tui does, and the audit log holds the writes that landed, the
// refused one and the upgrade closed as failed, the lock kept: it exited 0,
// the dashboard never pushed and the outcome still "running".
func TestApplyTUIStartFailedPartWayExits4(t *testing.T) {
	w := startDemo(t, scenario.Rolling)
	ctx := context.Background()
	p := startFaultProxy(t, w.Config)
	cluster := fmt.Sprintf("/apis/%s/%s/namespaces/%s/%s/%s", upgrade.GVREKSACluster.Group, upgrade.GVREKSACluster.Version,
		w.ClusterNamespace, upgrade.GVREKSACluster.Resource, w.ClusterName)
	// The Cluster is the spec's last write. Its dry runs (the plan's, and
	// the one under the lock) go through: only the write itself is
	// refused, after the other documents have landed.
	p.refuse(func(r *http.Request) bool {
		return r.Method == http.MethodPatch && r.URL.Path == cluster && r.URL.Query().Get("dryRun") == ""
	}, http.StatusForbidden)

	state := t.TempDir()
	r := startInTerminal(t, state, "apply", "--tui", "--kubeconfig", p.kubeconfig(t, w.ClusterNamespace),
		"--cluster", w.ClusterName, "-f", w.TargetSpecPath)
	r.confirmStart(t, w.ClusterName)
	// The start ends as its last entry is written: the upgrade closed.
	path := filepath.Join(state, "upgrade-console", upgrade.AuditFileName)
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		return r.ended() || strings.Contains(auditLines(t, path), "upgrade:failed "), nil
	}); err != nil {
		t.Errorf("the start did not end within 2 minutes:\n%s", auditLines(t, path))
	}
	time.Sleep(time.Second) // the screen takes the start's end
	r.press(t, "\x03")
	r.wait(t, 2*time.Minute)

	audit := auditLines(t, path)
	const said = "the start failed part way (above): the upgrade lock is kept"
	if r.code != ExitUpgradeFail || !strings.Contains(r.stderr, said) {
		t.Fatalf("exit %d, stderr %q; want %d saying %q\n%s\naudit:\n%s", r.code, r.stderr, ExitUpgradeFail, said, tail(r.screen.String()), audit)
	}
	if refused, _ := p.counts(); refused != 1 {
		t.Errorf("the Cluster's write was refused %d times, want once", refused)
	}
	// What was written, in the log: each document that landed, the
	// refused Cluster, the lock kept and the upgrade closed as failed.
	if !strings.Contains(audit, "apply:ok VSphereMachineConfig ") {
		t.Errorf("the audit log lacks the documents applied before the refusal:\n%s", audit)
	}
	for _, want := range []string{
		"upgrade:started Cluster " + w.ClusterNamespace + "/" + w.ClusterName,
		"apply:failed Cluster " + w.ClusterNamespace + "/" + w.ClusterName,
		"lock-keep:ok ",
		"upgrade:failed Cluster " + w.ClusterNamespace + "/" + w.ClusterName,
	} {
		if !strings.Contains(audit, want) {
			t.Errorf("the audit log lacks %q:\n%s", want, audit)
		}
	}
	if strings.Contains(audit, "apply:ok Cluster ") || strings.Contains(audit, "lock-release") {
		t.Errorf("the audit log records the Cluster applied or the lock released:\n%s", audit)
	}
	// The screen said it, and the cluster has it: the lock stays, kept.
	if screen := r.screen.String(); !strings.Contains(screen, "the spec was applied in part (") {
		t.Errorf("the console does not say the spec was applied in part:\n%s", tail(screen))
	}
	st, err := upgrade.ReadLock(ctx, kubernetes.NewForConfigOrDie(w.Config), "eksa-system", w.ClusterName)
	if err != nil || st == nil || !st.Held() || !strings.Contains(st.Kept, "the spec was applied in part") {
		t.Errorf("the lock after the start failed part way: %+v, %v; want it held and marked kept", st, err)
	}
}
