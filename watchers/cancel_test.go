package watchers

import (
	"context"
	"net"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// Discovery's calls take no context: cancelled while an API server took the
// connection and never answered, Run waited out the TLS handshake's 10 s
// (and, answered slowly, without end) before it returned.
func TestRunReturnsOnCancelDuringDiscovery(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() }) // accepted, never answered
		}
	}()
	cfg := &rest.Config{Host: "https://" + ln.Addr().String(), TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
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
