package watchers

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/model"
)

// outage stands in for an API server that stops answering (frozen, or
// restarting): while down, every request but discovery fails as a lost
// connection does, and cut ends the open watches. Discovery is let through
// so that a test can start the watcher's informers in the middle of it.
type outage struct {
	down  atomic.Bool
	conns conns
}

var errOutage = errors.New("connection refused (test outage)")

func (o *outage) config(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Dial = o.conns.dial
	c.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if o.down.Load() && !isDiscovery(r.URL.Path) {
				return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errOutage}
			}
			return rt.RoundTrip(r)
		})
	}
	return c
}

func (o *outage) begin() {
	o.down.Store(true)
	o.conns.cut()
}

func (o *outage) end() { o.down.Store(false) }

// isDiscovery: /api, /apis, /api/v1, /apis/<group>/<version>.
func isDiscovery(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch parts[0] {
	case "api":
		return len(parts) <= 2
	case "apis":
		return len(parts) <= 3
	}
	return false
}

// A kind the identity may not read never re-lists after an outage: its
// informer, started while the access review failed with the connection,
// was left failing by the call the outage cut, and the 403s that followed
// did not clear it. The connection stayed reconnecting (plain watch:
// "timed out while reconnecting" once the upgrade was done).
func TestForbiddenKindDoesNotHoldTheConnectionAfterAnOutage(t *testing.T) {
	cfg := env.Config
	ns := cptest.Namespace(t, cfg)
	const user = "operator-without-machines-at-start"
	grantAllBut(t, cfg, user, ns, model.KindMachine)
	create(t, cptest.Dynamic(t, cfg), gvrEKSACluster, eksaCluster(ns))

	var o outage
	o.down.Store(true)
	w := run(t, o.config(cptest.Impersonate(cfg, user)), ns)
	waitState(t, w, "not live, every list failing", func(s *model.ClusterState) bool {
		return s.Connection != model.Live && s.ConnectionErr != "" && len(s.Sources) >= len(kindSpecs)
	})
	// Long enough for every informer's first list to have failed.
	time.Sleep(500 * time.Millisecond)
	o.end()
	s := waitState(t, w, "live, machines forbidden", func(s *model.ClusterState) bool {
		return s.Connection == model.Live && s.Source(model.KindMachine).Forbidden != "" && allSynced(s)
	})
	if s.Cluster == nil {
		t.Errorf("live without the EKS-A Cluster: %s", describe(s))
	}
}

// The same outage once live: the recheck of the forbidden kind's access
// fails while the API server is lost. That was read as a grant: the
// informer started, met the denial again (a second "access: forbidden"
// line, now of its watch), and held the connection as above.
func TestForbiddenKindStaysDeniedThroughAnOutage(t *testing.T) {
	defer func(d time.Duration) { accessRecheck = d }(accessRecheck)
	accessRecheck = 100 * time.Millisecond

	cfg := env.Config
	ns := cptest.Namespace(t, cfg)
	const user = "operator-without-machines"
	grantAllBut(t, cfg, user, ns, model.KindMachine)
	create(t, cptest.Dynamic(t, cfg), gvrEKSACluster, eksaCluster(ns))

	var o outage
	w := run(t, o.config(cptest.Impersonate(cfg, user)), ns)
	live := waitState(t, w, "live, machines forbidden", func(s *model.ClusterState) bool {
		return s.Connection == model.Live && s.Source(model.KindMachine).Forbidden != "" && allSynced(s)
	})
	denied := live.Source(model.KindMachine).Forbidden

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	said := make(chan string, 1)
	go func() {
		for ctx.Err() == nil {
			if s := w.Latest(); s != nil {
				if f := s.Source(model.KindMachine).Forbidden; f != denied {
					said <- f
					return
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	o.begin()
	waitState(t, w, "reconnecting", func(s *model.ClusterState) bool { return s.Connection == model.Reconnecting })
	// Several rechecks fail meanwhile.
	time.Sleep(10 * accessRecheck)
	o.end()

	waitState(t, w, "live again", func(s *model.ClusterState) bool { return s.Connection == model.Live && s.Cluster != nil })
	select {
	case f := <-said:
		t.Errorf("machines forbidden %q through the outage, was %q", f, denied)
	case <-time.After(time.Second):
	}
}
