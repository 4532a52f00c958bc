package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Discovery is what a client that polls for new kinds polls: it counts.
// Watches, the API server's own housekeeping, /metrics and the driver's
// writes do not. kube-apiserver records discovery's paths without their
// leading slash ("apis"), which a match on "/apis" missed.
func TestCountRequestsCountsDiscovery(t *testing.T) {
	page := `# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="",scope="",subresource="apis",verb="GET",version=""} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="",scope="",subresource="api",verb="GET",version=""} 2
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="",scope="",subresource="/metrics",verb="GET",version=""} 40
apiserver_request_total{code="200",component="",dry_run="",group="",resource="",scope="",subresource="/readyz",verb="GET",version=""} 7
apiserver_request_total{code="200",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="PUT",version="v1"} 50
apiserver_request_total{code="200",component="apiserver",dry_run="",group="cluster.x-k8s.io",resource="machines",scope="namespace",subresource="",verb="WATCH",version="v1beta1"} 1
apiserver_request_total{code="200",component="apiserver",dry_run="",group="cluster.x-k8s.io",resource="machines",scope="resource",subresource="status",verb="PATCH",version="v1beta1"} 6000
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="nodes",scope="cluster",subresource="",verb="LIST",version="v1"} 1
`
	if got := countRequests([]byte(page)); got != 6 {
		t.Errorf("got %d, want 6 (3 + 2 discovery, 1 list)", got)
	}
}

// A count the API server does not give is not zero requests: two failed
// reads used to subtract to 0 and pass the no-polling target.
func TestRequestsOverFailsWhenUnread(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusForbidden)
	}))
	defer srv.Close()
	kube, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	b := &bench{metrics: kube.Discovery().RESTClient()}
	if n, err := b.requestsOver(context.Background(), 0); err == nil {
		t.Errorf("got %d requests and no error from an API server that refused /metrics", n)
	}
}
