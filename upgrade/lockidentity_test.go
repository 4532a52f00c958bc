package upgrade

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/model"
)

// On a shared bastion every operator takes the lock as root@bastion: the
// Lease also names who the API server authenticated the console as (here a
// ServiceAccount, by impersonation, as its token would be), from the audit
// log's one review. A renewal keeps it, the release takes it with the holder,
// and a console whose review got nothing writes none, nor keeps one left by
// the previous holder.
func TestLockNamesTheAuthenticatedIdentity(t *testing.T) {
	ns := cptest.Namespace(t, env.Config)
	user := "system:serviceaccount:" + ns + ":alice"
	cptest.Grant(t, env.Config, user, model.SystemNamespace, rbacv1.PolicyRule{
		APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update", "delete"}})
	c, err := NewClient(cptest.Impersonate(env.Config, user))
	if err != nil {
		t.Fatal(err)
	}
	audit, err := NewAuditor(filepath.Join(t.TempDir(), "audit.log"), WithAuditIdentity("root", "bastion"), WithAuditReview(c.Kube))
	if err != nil {
		t.Fatal(err)
	}
	admin := newTestClient(t)
	cluster := uniqueCluster(t)
	ctx := context.Background()
	t0 := time.Date(2026, 11, 21, 22, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	leases := admin.Kube.CoordinationV1().Leases(model.SystemNamespace)
	annotation := func() (string, bool) {
		t.Helper()
		l, err := leases.Get(ctx, LockName(cluster), metavOpts())
		if err != nil {
			t.Fatal(err)
		}
		v, ok := l.Annotations[model.AnnotationLockAuthenticatedAs]
		return v, ok
	}

	locker := newLocker(t, c, cluster, Holder{User: "root", Host: "bastion", Instance: "3f2a9c1e"}, clk, audit)
	st, err := locker.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := annotation(); got != user {
		t.Fatalf("taken: %s = %q, want %q", model.AnnotationLockAuthenticatedAs, got, user)
	}
	want := "root@bastion (console 3f2a9c1e, authenticated as " + user + ")"
	if st.Holder.Display() != want || st.HolderIdentity != "root@bastion/3f2a9c1e" {
		t.Errorf("taken: holder %q, identity %q; want %q, root@bastion/3f2a9c1e", st.Holder.Display(), st.HolderIdentity, want)
	}
	// Another root@bastion is told who it really is.
	_, err = newLocker(t, admin, cluster, Holder{User: "root", Host: "bastion", Instance: "bbbb2222"}, clk, &memAudit{}).Acquire(ctx)
	var held *LockHeldError
	if !errors.As(err, &held) || !strings.Contains(err.Error(), "held by "+want+" since") {
		t.Errorf("second console: %v, want a LockHeldError naming %q", err, want)
	}

	clk.SetTime(t0.Add(20 * time.Second))
	if _, err := locker.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := annotation(); got != user {
		t.Errorf("renewed: %s = %q, want it kept as %q", model.AnnotationLockAuthenticatedAs, got, user)
	}
	if err := locker.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := leases.Get(ctx, LockName(cluster), metavOpts()); !apierrors.IsNotFound(err) {
		t.Errorf("released: %v, want the Lease (and its identity) gone", err)
	}
	res, err := ReadAudit(audit.Path(), AuditFilter{})
	if err != nil || len(res.Entries) == 0 || !strings.Contains(res.Entries[0].Message, "(authenticated as "+user+")") {
		t.Errorf("lock-acquire entry: %+v, %v", res.Entries, err)
	}

	// Released by hand (holder emptied, the annotation left): it names
	// nobody, and a console whose review got nothing does not inherit it.
	if _, err := locker.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	l, err := leases.Get(ctx, LockName(cluster), metavOpts())
	if err != nil {
		t.Fatal(err)
	}
	l.Spec.HolderIdentity = nil
	if _, err := leases.Update(ctx, l, updateOpts()); err != nil {
		t.Fatal(err)
	}
	if st, err := ReadLock(ctx, admin.Kube, model.SystemNamespace, cluster); err != nil || st.AuthenticatedAs != "" {
		t.Errorf("released by hand: %+v, %v; want no identity", st, err)
	}
	unknown := newLocker(t, admin, cluster, Holder{User: "root", Host: "bastion", Instance: "cccc3333"}, clk, &memAudit{})
	st, err = unknown.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := annotation(); ok || st.Holder.Display() != "root@bastion (console cccc3333)" {
		t.Errorf("taken over without a review: annotation %q (%t), holder %q", got, ok, st.Holder.Display())
	}
}

// The preflight check that finds another console's lock names who the API
// server took that console for, in its message and in its fix; a lock an
// older console took (no annotation) reads as it did.
func TestLockCheckNamesTheAuthenticatedHolder(t *testing.T) {
	now := time.Date(2026, 11, 21, 22, 0, 0, 0, time.UTC)
	lock := model.Lock{Namespace: model.SystemNamespace, Name: LockName("mgmt"), HolderIdentity: "root@bastion/3f2a9c1e",
		AcquireTime: now.Add(-time.Minute), RenewTime: now.Add(-3 * time.Second), Duration: time.Minute,
		AuthenticatedAs: "system:serviceaccount:ops:alice"}
	self := Holder{User: "root", Host: "bastion", Instance: "bbbb2222"}
	r := checkLock(context.Background(), &Inputs{Now: now, Lock: LockStatusOf(lock), Self: self})
	want := "root@bastion (console 3f2a9c1e, authenticated as system:serviceaccount:ops:alice)"
	if r.Status != model.CheckFail || !strings.Contains(r.Message, "held by "+want+" since") || r.Remediation != "wait for "+want+" to finish, or ask them" {
		t.Errorf("held by another console: %s %q, fix %q; want both to name %q", r.Status, r.Message, r.Remediation, want)
	}
	lock.AuthenticatedAs = ""
	r = checkLock(context.Background(), &Inputs{Now: now, Lock: LockStatusOf(lock), Self: self})
	if r.Remediation != "wait for root@bastion (console 3f2a9c1e) to finish, or ask them" || strings.Contains(r.Message, "authenticated") {
		t.Errorf("lock of an older console: %q, fix %q", r.Message, r.Remediation)
	}
}
