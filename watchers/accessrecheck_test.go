package watchers

import (
	"context"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/model"
)

// A kind the identity may not list says so on its pane, with the fix a
// cluster admin applies: once they have, the console follows the kind
// without a restart. It asked once, at start, and said "forbidden" for as
// long as it ran.
func TestAccessGrantedLaterStartsTheWatch(t *testing.T) {
	defer func(d time.Duration) { accessRecheck = d }(accessRecheck)
	accessRecheck = 100 * time.Millisecond

	cfg := env.Config
	ns := cptest.Namespace(t, cfg)
	const user = "operator-granted-later"
	grantAllBut(t, cfg, user, ns, model.KindMachine)
	create(t, cptest.Dynamic(t, cfg), gvrEKSACluster, eksaCluster(ns))

	w := run(t, cptest.Impersonate(cfg, user), ns)
	waitState(t, w, "machines forbidden", func(s *model.ClusterState) bool {
		return s.Source(model.KindMachine).Forbidden != ""
	})
	cptest.Grant(t, cfg, user, ns, cptest.ReadOnly(capiGroup, "machines"))
	waitState(t, w, "machines watched once granted", func(s *model.ClusterState) bool {
		src := s.Source(model.KindMachine)
		return src.Forbidden == "" && src.Synced
	})
}

// A right taken away mid-session: the open watch outlives the RoleBinding,
// and the pane kept its rows with no notice until the watch's next relist,
// minutes later. The re-check says it forbidden, and a grant given back
// clears it.
func TestAccessTakenAwayIsSaidWhileTheWatchRuns(t *testing.T) {
	defer func(d time.Duration) { accessRecheck = d }(accessRecheck)
	accessRecheck = 100 * time.Millisecond

	cfg := env.Config
	ns := cptest.Namespace(t, cfg)
	const user = "operator-revoked-later"
	grantAllBut(t, cfg, user, ns, model.KindMachine)
	create(t, cptest.Dynamic(t, cfg), gvrEKSACluster, eksaCluster(ns))
	rbac := kubernetes.NewForConfigOrDie(cfg).RbacV1()
	ctx := context.Background()
	if _, err := rbac.Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "machines"},
		Rules: []rbacv1.PolicyRule{cptest.ReadOnly(capiGroup, "machines")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "machines"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "machines"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}}
	if _, err := rbac.RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	w := run(t, cptest.Impersonate(cfg, user), ns)
	waitState(t, w, "machines watched", func(s *model.ClusterState) bool {
		src := s.Source(model.KindMachine)
		return src.Forbidden == "" && src.Synced
	})
	if err := rbac.RoleBindings(ns).Delete(ctx, binding.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitState(t, w, "machines forbidden once the binding is gone", func(s *model.ClusterState) bool {
		return s.Source(model.KindMachine).Forbidden == "list machines.cluster.x-k8s.io in "+ns
	})
	if _, err := rbac.RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitState(t, w, "machines watched again once granted back", func(s *model.ClusterState) bool {
		return s.Source(model.KindMachine).Forbidden == ""
	})
}
