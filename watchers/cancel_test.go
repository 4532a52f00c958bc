package watchers

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
)

// Discovery's calls take no context: cancelled while an API server took the
// connection and never answered, Run waited out the TLS handshake's 10 s
// (and, answered slowly, without end) before it returned.
func TestRunReturnsOnCancelDuringDiscovery(t *testing.T) {
	cfg := &rest.Config{Host: "https://" + cptest.Frozen(t), TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	w, err := New(Options{Config: cfg, ClusterName: testCluster, ClusterNamespace: "default", SystemNamespace: "eksa-system"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	time.Sleep(time.Second) // discovery's first call is under way
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return within 5 s of the cancel")
	}
}
