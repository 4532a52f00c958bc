package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// Quitting apply --tui while the upgrade goes on in the cluster exits 5, as
// apply --wait interrupted does, and says what the console left: the spec
// applied, the upgrade going on, and the lock released, or, when the API
// server refused the release, a lock that could NOT be released, with the
// release's error in the exit message too (README, "The plan screen").
func TestApplyTUIQuitWhileTheUpgradeGoesOn(t *testing.T) {
	for _, c := range []struct {
		name          string
		refuseRelease bool
	}{
		{"lock released", false},
		{"release refused", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A first etcd member that never becomes ready: the upgrade
			// is still under way when the operator quits.
			w := startDemo(t, scenario.EtcdFirstMemberFails)
			ctx := context.Background()
			kube := kubernetes.NewForConfigOrDie(w.Config)
			p := startFaultProxy(t, w.Config)
			lease := fmt.Sprintf("/apis/coordination.k8s.io/v1/namespaces/eksa-system/leases/%s", upgrade.LockName(w.ClusterName))
			deletesTheLease := func(r *http.Request) bool { return r.Method == http.MethodDelete && r.URL.Path == lease }
			p.watch(deletesTheLease)
			if c.refuseRelease {
				// Nothing else deletes the Lease before the quit: the start
				// creates it, the renewals update it.
				p.refuse(deletesTheLease, http.StatusForbidden)
			}
			before, err := kubeDynamic(t, w).Resource(upgrade.GVREKSACluster).Namespace(w.ClusterNamespace).Get(ctx, w.ClusterName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}

			state := t.TempDir()
			r := startInTerminal(t, state, "apply", "--tui", "--kubeconfig", p.kubeconfig(t, w.ClusterNamespace),
				"--cluster", w.ClusterName, "-f", w.TargetSpecPath)
			// As TestPlanTUIToDone.
			r.confirmStart(t, w.ClusterName)

			// The upgrade is under way: the spec applied under the lock,
			// and the console follows it (the start recorded its end).
			audit := filepath.Join(state, "upgrade-console", upgrade.AuditFileName)
			if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
				if r.ended() {
					return true, nil
				}
				u, err := kubeDynamic(t, w).Resource(upgrade.GVREKSACluster).Namespace(w.ClusterNamespace).Get(ctx, w.ClusterName, metav1.GetOptions{})
				if err != nil || u.GetGeneration() == before.GetGeneration() {
					return false, nil
				}
				st, err := upgrade.ReadLock(ctx, kube, "eksa-system", w.ClusterName)
				return err == nil && st.Held(), nil
			}); err != nil || r.ended() {
				t.Fatalf("the upgrade did not start (ended %t, exit %d, stderr %q): %v\n%s", r.ended(), r.code, r.stderr, err, auditLines(t, audit))
			}
			// Past the start (its writes done), into the dashboard.
			if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
				return strings.Contains(auditLines(t, audit), "apply:ok Cluster "), nil
			}); err != nil {
				t.Fatalf("the start did not apply the Cluster:\n%s", auditLines(t, audit))
			}
			time.Sleep(time.Second)

			r.press(t, "\x03") // ctrl-c: quit
			r.wait(t, 2*time.Minute)
			screen := r.screen.String()

			const stopped = "stopped following before the upgrade completed (quit): the upgrade goes on in the cluster"
			if r.code != ExitTimeout || !strings.Contains(r.stderr, stopped) {
				t.Fatalf("exit %d, stderr %q; want %d saying %q\n%s", r.code, r.stderr, ExitTimeout, stopped, tail(screen))
			}
			if want := "the console stopped following before the upgrade completed: the spec is applied and the upgrade goes on in the cluster; follow it with"; !strings.Contains(screen, want) ||
				!strings.Contains(screen, "upgrade-console watch --cluster "+w.ClusterName) {
				t.Errorf("the console does not say it left the upgrade going on (%q):\n%s", want, tail(screen))
			}
			st, err := upgrade.ReadLock(ctx, kube, "eksa-system", w.ClusterName)
			if err != nil {
				t.Fatal(err)
			}
			refused, passed := p.counts()
			audited := auditLines(t, audit)
			if !c.refuseRelease {
				if !strings.Contains(screen, "the upgrade lock is released") || strings.Contains(r.stderr, "releasing the upgrade lock") {
					t.Errorf("released: stderr %q\n%s", r.stderr, tail(screen))
				}
				if st != nil || passed == 0 {
					t.Errorf("the Lease after the quit: %+v (%d deletes); want it deleted", st, passed)
				}
				if !strings.Contains(audited, "upgrade:detached") || !strings.Contains(audited, "(lock released)") {
					t.Errorf("audit:\n%s", audited)
				}
				return
			}
			// The release refused: exit 5 all the same (the upgrade goes
			// on), the error said in the exit message, and a lock the
			// operator is told could NOT be released, with the way out.
			if !strings.Contains(r.stderr, "releasing the upgrade lock: ") || !strings.Contains(r.stderr, "the test proxy refuses DELETE "+lease) {
				t.Errorf("the exit message lacks the failed release: %q", r.stderr)
			}
			if !strings.Contains(screen, "could NOT be released") || !strings.Contains(screen, "lock clear lease --cluster "+w.ClusterName) ||
				strings.Contains(screen, "the upgrade lock is released") {
				t.Errorf("the console does not say the lock could not be released:\n%s", tail(screen))
			}
			if refused == 0 || !st.Held() {
				t.Errorf("the Lease after the refused release: %+v (%d deletes refused); want it still there", st, refused)
			}
			if !strings.Contains(audited, "lock-release:failed") || !strings.Contains(audited, "the lock was NOT released") {
				t.Errorf("audit:\n%s", audited)
			}
		})
	}
}

// auditLines is the audit log as "action:result object: message" lines
// (empty while there is none).
func auditLines(t *testing.T, path string) string {
	t.Helper()
	res, err := upgrade.ReadAudit(path, upgrade.AuditFilter{})
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, e := range res.Entries {
		fmt.Fprintf(&b, "%s:%s %s: %s\n", e.Action, e.Result, e.Object, e.Message)
	}
	return b.String()
}

// tail is the end of what the terminal showed: the lines said once the
// UI gave the screen back.
func tail(screen string) string {
	const n = 3000
	if len(screen) > n {
		screen = screen[len(screen)-n:]
	}
	return screen
}

// ctrl-c at the dashboard's typed confirmation is a confirmation not given,
// exit 1 as for apply without --tui: it exited 0, as for a plan looked at
// and left.
func TestPlanTUIQuitAtTheConfirmationIsNotConfirmed(t *testing.T) {
	w := startDemo(t, scenario.Rolling)
	state := t.TempDir()
	r := startInTerminal(t, state, "apply", "--tui", "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName, "-f", w.TargetSpecPath)
	r.waitScreen(t, "PREFLIGHT")
	r.press(t, "\r")
	r.waitScreen(t, "type the cluster name")
	r.press(t, "mg")
	time.Sleep(200 * time.Millisecond)
	r.press(t, "\x03")
	r.wait(t, time.Minute)
	if r.code != ExitBadInput || !strings.Contains(r.stderr, "quit at the typed confirmation: nothing was changed") {
		t.Errorf("exit %d (want %d), stderr %q", r.code, ExitBadInput, r.stderr)
	}
	res, err := upgrade.ReadAudit(filepath.Join(state, "upgrade-console", upgrade.AuditFileName), upgrade.AuditFilter{})
	if err != nil || len(res.Entries) == 0 || res.Entries[len(res.Entries)-1].Result != upgrade.AuditNotConfirmed {
		t.Errorf("audit: %v %+v", err, res.Entries)
	}
}
