package main

import "os"

// http2HealthCheck is how soon a connection to the API server that went
// silent is found dead: HTTP/2 pings it after readIdle without a frame, and
// gives up on it when the ping is not answered within ping. Only then do
// the watches fail and the dashboard say "reconnecting". A frozen API
// server (a stopped process, a half-open connection) keeps its watches
// open and says nothing; with client-go's defaults (30 s, then 15 s) the
// dashboard said "● live" for about 55 s after it froze, with these for
// about 25 s. A ping is one frame on a connection that had no other for
// readIdle, answered by the server's HTTP/2 layer: no API request, no
// polling.
var http2HealthCheck = map[string]string{
	"HTTP2_READ_IDLE_TIMEOUT_SECONDS": "10",
	"HTTP2_PING_TIMEOUT_SECONDS":      "5",
}

// quickHealthCheck sets client-go's HTTP/2 health check (read by
// k8s.io/apimachinery/pkg/util/net when it builds a transport) to
// http2HealthCheck, where the environment does not set it: the operator's
// values win.
func quickHealthCheck() {
	for k, v := range http2HealthCheck {
		if _, set := os.LookupEnv(k); !set {
			_ = os.Setenv(k, v)
		}
	}
}
