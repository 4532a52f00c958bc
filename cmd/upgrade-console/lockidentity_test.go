package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// On a shared bastion every lock is root@bastion's: lock status, the plan
// of lock clear and the preflight check name who the API server
// authenticated the holding console as (here a ServiceAccount, by
// impersonation, as its token would be), and the JSON has it in a field of
// its own. A lock taken without that answer (an older console, a review
// refused) reads as it did.
func TestLockStatusNamesWhoTheHolderIsAuthenticatedAs(t *testing.T) {
	w := startDemo(t, scenario.Rolling)
	ctx := context.Background()
	const user = "system:serviceaccount:ops:alice"
	cptest.Grant(t, w.Config, user, model.SystemNamespace, rbacv1.PolicyRule{
		APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update", "delete"}})
	take := func(t *testing.T, kube kubernetes.Interface, instance string, opts ...upgrade.AuditorOption) *upgrade.Locker {
		t.Helper()
		a, err := upgrade.NewAuditor(filepath.Join(t.TempDir(), "audit.log"), opts...)
		if err != nil {
			t.Fatal(err)
		}
		l := &upgrade.Locker{Kube: kube, Cluster: w.ClusterName, Holder: upgrade.Holder{User: "root", Host: "bastion", Instance: instance}, Audit: a}
		if _, err := l.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = l.Release(ctx) })
		return l
	}
	leaseRow := func(t *testing.T) map[string]any {
		t.Helper()
		out, errOut, code := runCaptured(t, "lock", "status", "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName, "-o", "json")
		if code != ExitOK {
			t.Fatalf("lock status -o json: exit %d\n%s", code, errOut)
		}
		var rows []map[string]any
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatalf("lock status -o json: %v\n%s", err, out)
		}
		for _, r := range rows {
			if r["id"] == "lease" {
				return r
			}
		}
		t.Fatalf("no lease row:\n%s", out)
		return nil
	}
	lockStatus := func(t *testing.T) string {
		t.Helper()
		out, errOut, code := runCaptured(t, "lock", "status", "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName)
		if code != ExitOK {
			t.Fatalf("lock status: exit %d\n%s", code, errOut)
		}
		return out
	}

	t.Run("taken by a console that knows", func(t *testing.T) {
		impersonated, err := kubernetes.NewForConfig(cptest.Impersonate(w.Config, user))
		if err != nil {
			t.Fatal(err)
		}
		take(t, impersonated, "3f2a9c1e", upgrade.WithAuditReview(impersonated))
		const holder = "root@bastion (console 3f2a9c1e, authenticated as " + user + ")"
		out := lockStatus(t)
		if !strings.Contains(out, "lease (live): held by "+holder+" since ") {
			t.Errorf("lock status does not name %q:\n%s", holder, out)
		}
		// The table keeps its width: user@host and the console.
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "lease ") && !strings.HasPrefix(line, "lease (") && (!strings.Contains(line, " root@bastion (console 3f2a9c1e) ") || strings.Contains(line, "authenticated")) {
				t.Errorf("table row %q", line)
			}
		}
		if r := leaseRow(t); r["authenticatedAs"] != user || r["holder"] != "root@bastion (console 3f2a9c1e)" {
			t.Errorf("lease row %v: want authenticatedAs %q beside the holder", r, user)
		}
		out, errOut, code := runCaptured(t, "lock", "clear", "lease", "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName, "--force", "--read-only")
		if code != ExitOK || !strings.Contains(out, "delete (only if not renewed or taken since it was read); held by "+holder) {
			t.Errorf("lock clear plan: exit %d, %s\n%s", code, errOut, out)
		}
		out, errOut, code = runCaptured(t, liveArgs(w, "plan")...)
		if code != ExitPreflight || !strings.Contains(out, "held by "+holder+" since ") || !strings.Contains(out, "fix: wait for "+holder+" to finish, or ask them") {
			t.Errorf("plan: exit %d, %s\n%s", code, errOut, out)
		}
	})

	t.Run("taken by a console that does not", func(t *testing.T) {
		take(t, kubernetes.NewForConfigOrDie(w.Config), "aaaa1111")
		if out := lockStatus(t); strings.Contains(out, "authenticated") || !strings.Contains(out, "lease (live): held by root@bastion (console aaaa1111) since ") {
			t.Errorf("lock status of a lock taken without a review:\n%s", out)
		}
		if r, has := leaseRow(t)["authenticatedAs"]; has {
			t.Errorf("authenticatedAs %v on a lock taken without a review", r)
		}
	})
}
