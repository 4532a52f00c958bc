package watchers

import (
	"testing"
	"time"

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
