package watchers

import (
	"context"
	"slices"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/model"
)

func lease(ns, name, holder string, acquired, renewed time.Time) *coordinationv1.Lease {
	a, r := metav1.NewMicroTime(acquired), metav1.NewMicroTime(renewed)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To(int32(60)),
			AcquireTime: &a, RenewTime: &r},
	}
}

func createLease(t *testing.T, cfg *rest.Config, l *coordinationv1.Lease) *coordinationv1.Lease {
	t.Helper()
	got, err := kubernetes.NewForConfigOrDie(cfg).CoordinationV1().Leases(l.Namespace).Create(context.Background(), l, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating Lease %s: %v", l.Name, err)
	}
	return got
}

// leaseInstance is the watcher's informer of Leases.
func leaseInstance(t *testing.T, w *Watcher) *instance {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, in := range w.insts {
		if in.spec.kind == model.KindLease {
			return in
		}
	}
	t.Fatal("no Lease informer")
	return nil
}

// grantAllBut lets user read every kind the watchers watch but those named.
func grantAllBut(t *testing.T, cfg *rest.Config, user, ns string, except ...model.Kind) {
	t.Helper()
	var rules []rbacv1.PolicyRule
	for _, k := range kindSpecs {
		switch {
		case slices.Contains(except, k.kind):
		case k.clusterScoped:
			cptest.Grant(t, cfg, user, "", cptest.ReadOnly(k.group, k.resource))
		default:
			rules = append(rules, cptest.ReadOnly(k.group, k.resource))
		}
	}
	cptest.Grant(t, cfg, user, ns, rules...)
}

// TestLeaseFollowsTheUpgradeLock: the snapshot carries the cluster's upgrade
// lock Lease as it is created, renewed and deleted, and only that one: the
// other leases of the namespace (every controller has one) are neither in
// the snapshot nor in the informer's cache.
func TestLeaseFollowsTheUpgradeLock(t *testing.T) {
	cfg := env.Config
	ns := cptest.Namespace(t, cfg)
	leases := kubernetes.NewForConfigOrDie(cfg).CoordinationV1().Leases(ns)
	ctx := context.Background()
	t0 := time.Now().Truncate(time.Second).Add(-time.Hour)
	createLease(t, cfg, lease(ns, "capi-controller-manager", "ctrl-1", t0, t0))
	create(t, cptest.Dynamic(t, cfg), gvrEKSACluster, eksaCluster(ns))

	w := run(t, cfg, ns)
	s := waitState(t, w, "all sources synced", allSynced)
	if src := s.Source(model.KindLease); !src.Installed || !src.Synced || src.Version != "v1" || src.Forbidden != "" {
		t.Errorf("Lease source = %+v", src)
	}
	if s.Lock != nil {
		t.Fatalf("snapshot has a lock before there is one: %+v", s.Lock)
	}

	l := createLease(t, cfg, lease(ns, model.LockName(testCluster), "alice@laptop/3f2a9c1e", t0, t0.Add(time.Minute)))
	s = waitState(t, w, "lock in the snapshot", func(s *model.ClusterState) bool { return s.Lock != nil })
	want := model.Lock{Namespace: ns, Name: model.LockName(testCluster), HolderIdentity: "alice@laptop/3f2a9c1e",
		AcquireTime: t0, RenewTime: t0.Add(time.Minute), Duration: time.Minute}
	if got := *s.Lock; !got.AcquireTime.Equal(want.AcquireTime) || !got.RenewTime.Equal(want.RenewTime) ||
		got.Namespace != want.Namespace || got.Name != want.Name || got.HolderIdentity != want.HolderIdentity || got.Duration != want.Duration {
		t.Errorf("lock = %+v, want %+v", got, want)
	}
	if !s.Lock.Expired(time.Now()) {
		t.Error("a lease last renewed 59 minutes ago is not stale")
	}
	if keys := leaseInstance(t, w).informer.GetStore().ListKeys(); len(keys) != 1 || keys[0] != ns+"/"+model.LockName(testCluster) {
		t.Errorf("Lease informer caches %v, want only the lock", keys)
	}

	renewed := metav1.NewMicroTime(time.Now().Truncate(time.Second))
	l.Spec.RenewTime = &renewed
	if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	s = waitState(t, w, "renewal in the snapshot", func(s *model.ClusterState) bool {
		return s.Lock != nil && s.Lock.RenewTime.Equal(renewed.Time)
	})
	if s.Lock.Expired(renewed.Time.Add(30 * time.Second)) {
		t.Error("a lease renewed 30s ago is stale")
	}

	if err := leases.Delete(ctx, l.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitState(t, w, "lock gone from the snapshot", func(s *model.ClusterState) bool { return s.Lock == nil })
}

// TestLeaseReadableByNameOnly: a Role that grants the lock Lease alone
// (resourceNames), the least a console needs, is enough: the access check
// asks about that name, as the API server authorizes a watch by name.
func TestLeaseReadableByNameOnly(t *testing.T) {
	cfg := env.Config
	ns := cptest.Namespace(t, cfg)
	const user = "lock-only-operator"
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	name := model.LockName(testCluster)
	role, err := cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "lock-reader", Namespace: ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{coordinationGroup}, Resources: []string{"leases"},
			ResourceNames: []string{name}, Verbs: []string{"get", "list", "watch"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// RBAC is read from a cache: wait until the grant is in effect.
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Group: coordinationGroup, Resource: "leases", Verb: "watch", Name: name}}}
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		return err == nil && got.Status.Allowed, nil
	}); err != nil {
		t.Fatalf("grant not effective: %v", err)
	}
	now := time.Now().Truncate(time.Second)
	createLease(t, cfg, lease(ns, name, "alice@laptop/1", now, now))

	w := run(t, cptest.Impersonate(cfg, user), ns)
	s := waitState(t, w, "lock in the snapshot", func(s *model.ClusterState) bool {
		return s.Lock != nil && s.Source(model.KindLease).Synced
	})
	if src := s.Source(model.KindLease); src.Forbidden != "" {
		t.Errorf("Lease source = %+v", src)
	}
	if s.Lock.HolderIdentity != "alice@laptop/1" {
		t.Errorf("lock = %+v", s.Lock)
	}
}

// TestLeaseOfAHolderWhoseClockIsBehindIsLive: a console whose clock runs 3
// minutes behind holds the lock (lease 60s). The snapshot's lock is live
// at first sight, by the API server's clock (its write time against the
// Date of the watch that carried it), and once a renewal is seen arriving
// by this machine's, though renewTime says 3 minutes ago; it is stale a
// duration after that renewal.
func TestLeaseOfAHolderWhoseClockIsBehindIsLive(t *testing.T) {
	cfg := env.Config
	ns := cptest.Namespace(t, cfg)
	leases := kubernetes.NewForConfigOrDie(cfg).CoordinationV1().Leases(ns)
	ctx := context.Background()
	behind := time.Now().Add(-3 * time.Minute)
	l, err := leases.Create(ctx, lease(ns, model.LockName(testCluster), "bob@laptop/1", behind, behind),
		metav1.CreateOptions{FieldManager: model.FieldManager})
	if err != nil {
		t.Fatal(err)
	}
	create(t, cptest.Dynamic(t, cfg), gvrEKSACluster, eksaCluster(ns))

	w := run(t, cfg, ns)
	s := waitState(t, w, "lock in the snapshot", func(s *model.ClusterState) bool { return s.Lock != nil })
	first := *s.Lock
	if first.Seen.IsZero() || first.ServerAtSeen.IsZero() || first.Written.IsZero() || first.Arrived {
		t.Fatalf("first sight: Seen %s, ServerAtSeen %s, Written %s, Arrived %v; want the server's times, not arrived",
			first.Seen, first.ServerAtSeen, first.Written, first.Arrived)
	}
	if s.LockExpired(time.Now()) {
		t.Errorf("a lock written a moment ago by the API server's clock, renewTime 3m ago, is stale at first sight")
	}
	if !s.LockExpired(time.Now().Add(time.Minute + 5*time.Second)) {
		t.Errorf("a lock not renewed for 65s by the API server's clock is not stale")
	}

	// Renewed by hand after the console's last write, 10 minutes ago by
	// the API server's clock: judged by the time of kubectl's write
	// (model.LockOf), which is a moment ago, not by the console's.
	cptest.AgeLeaseWrite(t, kubernetes.NewForConfigOrDie(cfg), ns, l.Name, model.FieldManager, 10*time.Minute)
	if l, err = leases.Get(ctx, l.Name, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	renewed := metav1.NewMicroTime(time.Now().Add(-3 * time.Minute).Truncate(time.Second))
	l.Spec.RenewTime = &renewed
	if _, err := leases.Update(ctx, l, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	s = waitState(t, w, "renewal in the snapshot", func(s *model.ClusterState) bool {
		return s.Lock != nil && s.Lock.RenewTime.Equal(renewed.Time)
	})
	// Written is kubectl's write, not the console's aged 10 minutes: at or
	// after the console's first (both to the second, maybe the same one).
	if !s.Lock.Arrived || !s.Lock.Seen.After(first.Seen) || s.Lock.Written.Before(first.Written) || s.Lock.WrittenBy != "kubectl-edit" {
		t.Errorf("renewal: Arrived %v, Seen %s (first seen %s), Written %s by %q (first %s); want seen arriving, written by kubectl-edit since",
			s.Lock.Arrived, s.Lock.Seen, first.Seen, s.Lock.Written, s.Lock.WrittenBy, first.Written)
	}
	arrived := s.Lock.Seen
	if s.LockExpired(arrived.Add(30 * time.Second)) {
		t.Error("a lock seen renewed 30s ago, renewTime 3m ago, is stale")
	}
	if !s.LockExpired(arrived.Add(time.Minute + 5*time.Second)) {
		t.Error("a lock seen renewed 65s ago is not stale")
	}
}

// TestLeaseCreatedWhileWatchedHasArrived: a Lease created while the
// console watches, by a holder whose clock runs 3 minutes behind, with no
// write time for the API server's clock (its managedFields cleared). Its
// renewal arrived then: it was judged as a Lease there at start, by its
// renewTime alone, and read "stale 3m" until its first renewal.
func TestLeaseCreatedWhileWatchedHasArrived(t *testing.T) {
	cfg := env.Config
	ns := cptest.Namespace(t, cfg)
	create(t, cptest.Dynamic(t, cfg), gvrEKSACluster, eksaCluster(ns))
	w := run(t, cfg, ns)
	waitState(t, w, "the Lease source synced", func(s *model.ClusterState) bool { return s.Source(model.KindLease).Synced })

	behind := time.Now().Add(-3 * time.Minute)
	leases := kubernetes.NewForConfigOrDie(cfg).CoordinationV1().Leases(ns)
	if _, err := leases.Create(context.Background(), lease(ns, model.LockName(testCluster), "bob@laptop/1", behind, behind),
		metav1.CreateOptions{FieldManager: "bob-renewer"}); err != nil {
		t.Fatal(err)
	}
	cptest.ForgetLeaseWrites(t, kubernetes.NewForConfigOrDie(cfg), ns, model.LockName(testCluster))
	s := waitState(t, w, "lock in the snapshot, no write time", func(s *model.ClusterState) bool { return s.Lock != nil && s.Lock.Written.IsZero() })
	if !s.Lock.Arrived || !s.Lock.Written.IsZero() {
		t.Errorf("created while watched: Arrived %v, Written %s; want arrived, Written unknown", s.Lock.Arrived, s.Lock.Written)
	}
	if s.LockExpired(time.Now()) {
		t.Error("a Lease created a moment ago, renewTime 3m ago by its holder's clock, is stale")
	}
}
