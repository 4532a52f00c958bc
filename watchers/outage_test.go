package watchers

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
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

// refuse403 answers the requests for a resource with a 403, as an API
// server that has not loaded RBAC yet after a restart does.
func refuse403(refuse *atomic.Bool, resource string) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if !refuse.Load() || !strings.HasSuffix(r.URL.Path, "/"+resource) {
				return rt.RoundTrip(r)
			}
			body := `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,` +
				`"message":"` + resource + ` is forbidden: User \"x\" cannot list resource \"` + resource + `\" (test)"}`
			return &http.Response{StatusCode: http.StatusForbidden, Header: http.Header{"Content-Type": []string{"application/json"}},
				Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
		})
	}
}

// Refused for a while, then let through: the source said forbidden until
// the console was restarted (plain: no line said it was over), with the API
// server's text beside it as the kind's error, which a plain watch printed
// as one more "watch Lease: … is forbidden" line at every reconnection.
func TestRefusalWithdrawnWhenTheWatchWorksAgain(t *testing.T) {
	cfg := env.Config
	ns := cptest.Namespace(t, cfg)
	create(t, cptest.Dynamic(t, cfg), gvrEKSACluster, eksaCluster(ns))
	createLease(t, cfg, lease(ns, model.LockName(testCluster), "alice@laptop/1", time.Now(), time.Now()))

	var refuse atomic.Bool
	refuse.Store(true)
	rcfg := rest.CopyConfig(cfg)
	rcfg.WrapTransport = refuse403(&refuse, "leases")
	w := run(t, rcfg, ns)
	s := waitState(t, w, "leases refused", func(s *model.ClusterState) bool {
		return s.Source(model.KindLease).Forbidden != "" && s.Connection == model.Live
	})
	if src := s.Source(model.KindLease); src.Err != "" {
		t.Errorf("a refusal is the kind's error too: %q", src.Err)
	}
	refuse.Store(false)
	s = waitState(t, w, "leases watched", func(s *model.ClusterState) bool {
		return s.Source(model.KindLease).Forbidden == "" && s.Lock != nil
	})
	if src := s.Source(model.KindLease); src.Err != "" || !src.Synced {
		t.Errorf("lease source after the refusal: %+v", src)
	}
}

// A kind refused is said once: the reflector's list and watch are refused
// in turn, and each verb in turn was a new "access: forbidden" block.
func TestRefusalSaidOnceWhateverTheVerb(t *testing.T) {
	w, err := New(Options{Config: &rest.Config{Host: "https://127.0.0.1:1"}, ClusterName: testCluster})
	if err != nil {
		t.Fatal(err)
	}
	in := w.instancesOf(&kindSpecs[slices.IndexFunc(kindSpecs, func(k kindSpec) bool { return k.kind == model.KindMachine })], "v1beta2")[0]
	w.insts = []*instance{in}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: capiGroup, Resource: "machines"}, "", errors.New("test"))
	ctx := context.Background()
	in.observe(ctx, "list", forbidden)
	first := in.status.Forbidden
	in.observe(ctx, "list", forbidden)
	in.observe(ctx, "watch", forbidden)
	if in.status.Forbidden != first || in.status.Err != "" {
		t.Errorf("after list, list, watch refused: forbidden %q (first %q), err %q", in.status.Forbidden, first, in.status.Err)
	}
}
