package watchers

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/model"
)

// conns are the connections a client dialled, to cut them: an open watch
// outlives the revocation of the token it was opened with, and only the
// calls that follow its end are refused.
type conns struct {
	mu   sync.Mutex
	open []net.Conn
}

func (c *conns) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err == nil {
		c.mu.Lock()
		c.open = append(c.open, conn)
		c.mu.Unlock()
	}
	return conn, err
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (c *conns) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.open {
		_ = conn.Close()
	}
	c.open = nil
}

// TestCredentialsRefusedMidWatch: a ServiceAccount token revoked while the
// console watches. Every relist failed with 401, and the snapshot still
// said live: the header showed "● live" over a cluster it no longer saw.
// The connection is lost, with the credentials named as the cause, until a
// token the API server accepts is in place again.
func TestCredentialsRefusedMidWatch(t *testing.T) {
	cfg := env.Config
	ns := cptest.Namespace(t, cfg)
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	const sa = "operator"
	grantAllBut(t, cfg, "system:serviceaccount:"+ns+":"+sa, ns)
	create(t, cptest.Dynamic(t, cfg), gvrEKSACluster, eksaCluster(ns))

	// The token the client sends, as a credential plugin hands it out:
	// the one in use until the test replaces it. (A kubeconfig's token
	// file is read again once a minute.)
	var token atomic.Pointer[string]
	issue := func() {
		t.Helper()
		if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		expiry := int64(3600)
		tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa,
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		token.Store(&tr.Status.Token)
	}
	issue()
	var c conns
	tcfg := rest.AnonymousClientConfig(cfg)
	tcfg.Dial = c.dial
	tcfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer "+*token.Load())
			return rt.RoundTrip(r)
		})
	}
	w := run(t, tcfg, ns)
	waitState(t, w, "live and synced with the token", func(s *model.ClusterState) bool {
		return s.Connection == model.Live && allSynced(s) && s.Cluster != nil
	})

	// Revoked: the ServiceAccount is gone, and with it every token of it.
	if err := cs.CoreV1().ServiceAccounts(ns).Delete(ctx, sa, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The API server accepts a token it accepted in the last 10 s (its
	// authentication cache), and each cut watch lengthens client-go's
	// backoff before the next list (up to a minute): the watches are cut
	// once the cache has let the token go, and again only if that was not
	// enough.
	revoked := time.Now()
	time.Sleep(11 * time.Second)
	last := time.Time{}
	refused := waitState(t, w, "credentials refused", func(s *model.ClusterState) bool {
		if time.Since(last) > 6*time.Second {
			c.cut()
			last = time.Now()
		}
		return s.Connection != model.Live
	})
	if refused.Connection != model.Reconnecting || !strings.HasPrefix(refused.ConnectionErr, model.CredentialsRefused) {
		t.Errorf("connection %s: %q, want reconnecting: %s…", refused.Connection, refused.ConnectionErr, model.CredentialsRefused)
	}

	t.Logf("refused %s after the revocation", time.Since(revoked).Round(time.Millisecond))

	// A new token: live again.
	issue()
	renewed := time.Now()
	waitState(t, w, "live again with a new token", func(s *model.ClusterState) bool { return s.Connection == model.Live })
	t.Logf("live %s after the new token", time.Since(renewed).Round(time.Millisecond))
}
