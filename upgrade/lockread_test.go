package upgrade

import (
	"context"
	"errors"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
)

// everythingButLeases are the rights of an identity that may read the
// cluster (and dry-run its spec) but not get the upgrade lock's Lease.
func everythingButLeases() []rbacv1.PolicyRule {
	var rules []rbacv1.PolicyRule
	for _, g := range []string{"", "anywhere.eks.amazonaws.com", "cluster.x-k8s.io", "controlplane.cluster.x-k8s.io",
		"etcdcluster.cluster.x-k8s.io", "bootstrap.cluster.x-k8s.io", "infrastructure.cluster.x-k8s.io", "apiextensions.k8s.io"} {
		rules = append(rules, cptest.ReadOnly(g, "*"))
	}
	return append(rules, rbacv1.PolicyRule{APIGroups: []string{"anywhere.eks.amazonaws.com"}, Resources: []string{"*"}, Verbs: []string{"patch"}})
}

// An identity that may not read Leases got no plan at all ("read upgrade
// lock Lease …: forbidden", exit 1, no fix). Now the plan is computed, and
// upgrade-lock fails, blocking, with the right it lacks and how to grant it:
// nothing tells whether another console holds the lock.
func TestPlanWhenTheLockMayNotBeRead(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	user := "no-leases-" + w.ns
	cptest.Grant(t, env.Config, user, "", everythingButLeases()...)
	c, err := NewClient(cptest.Impersonate(env.Config, user))
	if err != nil {
		t.Fatal(err)
	}
	c.System = w.client.System

	_, err = ReadLock(ctx, c.Kube, c.Sys(), w.cfg.ClusterName)
	var fe *LockForbiddenError
	if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), "read upgrade lock Lease "+w.ns+"/upgrade-console-mgmt: ") {
		t.Fatalf("ReadLock: %T %v, want a *LockForbiddenError", err, err)
	}

	planner := &Planner{Client: c, State: w.watcher, Self: w.planner.Self}
	p, err := planner.Plan(ctx, PlanRequest{Cluster: w.cfg.ClusterName, Namespace: w.ns, Spec: w.spec})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	r := result(p, CheckUpgradeLock)
	wantMsg := "cannot tell whether another console holds the upgrade lock: the console may not read Lease " + w.ns + "/upgrade-console-mgmt (" +
		`leases.coordination.k8s.io "upgrade-console-mgmt" is forbidden: User "` + user + `" cannot get resource "leases"`
	if r.Status != model.CheckFail || !r.Blocking || !strings.HasPrefix(r.Message, wantMsg) {
		t.Errorf("upgrade-lock %s (blocking %t) %q\nwant a blocking failure starting %q", r.Status, r.Blocking, r.Message, wantMsg)
	}
	for _, want := range []string{"`kubectl auth can-i get leases/upgrade-console-mgmt -n " + w.ns + "`",
		"resourceNames: [upgrade-console-mgmt], verbs: [get, list, watch, update, delete]", "verbs: [create]"} {
		if !strings.Contains(r.Remediation, want) {
			t.Errorf("fix %q lacks %q", r.Remediation, want)
		}
	}
	// The rest of the plan is there, and only the lock blocks it: the
	// lock's read, and its writes (and the snapshot's) this identity may
	// not make either.
	if len(p.Components) == 0 || len(p.Preflight) != len(Checks) {
		t.Errorf("%d components, %d checks", len(p.Components), len(p.Preflight))
	}
	if r := result(p, CheckApplyAccess); !strings.Contains(r.Message, "create leases.coordination.k8s.io") || !strings.Contains(r.Message, "create configmaps") {
		t.Errorf("apply-access: %+v", r)
	}
	for _, b := range p.Blocking() {
		if b.Name != CheckUpgradeLock && b.Name != CheckApplyAccess {
			t.Errorf("%s blocks too: %s", b.Name, b.Message)
		}
	}

	// Any other failure to read the lock is still an error of the plan.
	c2, err := NewClient(cptest.Impersonate(env.Config, user))
	if err != nil {
		t.Fatal(err)
	}
	c2.System = w.client.System
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := (&Planner{Client: c2, State: w.watcher}).Recheck(cctx, p); err == nil || errors.As(err, &fe) {
		t.Errorf("recheck with a cancelled context: %v, want the error", err)
	}
}

// A holderIdentity from the Lease is parsed printable (it is shown to
// operators); the local holder's own identity is untouched.
func TestParseHolderEscapesControlCharacters(t *testing.T) {
	h := ParseHolder("eve\x1b[2K@host\r/3f2a")
	if got := h.Display(); strings.ContainsAny(got, "\x1b\r") || got != `eve\x1b[2K@host\r (console 3f2a)` {
		t.Errorf("display %q, want control characters escaped", got)
	}
	if got := ParseHolder("alice@laptop/3f2a9c1e").String(); got != "alice@laptop/3f2a9c1e" {
		t.Errorf("plain identity round trip %q", got)
	}
	// Another tool's identity, with no "@": kept whole, and escaped too
	// (it was shown as written, with a stray "@" after it).
	if got := ParseHolder("evil\x1b[2K\rpass").Display(); got != `evil\x1b[2K\rpass` {
		t.Errorf("an identity with no host: %q", got)
	}
}
