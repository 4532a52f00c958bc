package main

import (
	"os"
	"testing"
)

// The console's HTTP/2 health check is set where the environment says
// nothing, and the operator's own values are left as they are.
func TestQuickHealthCheckLeavesTheOperatorsValues(t *testing.T) {
	for k := range http2HealthCheck {
		old, had := os.LookupEnv(k)
		t.Cleanup(func() {
			if had {
				os.Setenv(k, old)
			} else {
				os.Unsetenv(k)
			}
		})
	}
	os.Unsetenv("HTTP2_READ_IDLE_TIMEOUT_SECONDS")
	os.Setenv("HTTP2_PING_TIMEOUT_SECONDS", "30")
	quickHealthCheck()
	if got := os.Getenv("HTTP2_READ_IDLE_TIMEOUT_SECONDS"); got != "10" {
		t.Errorf("HTTP2_READ_IDLE_TIMEOUT_SECONDS = %q, want the console's 10", got)
	}
	if got := os.Getenv("HTTP2_PING_TIMEOUT_SECONDS"); got != "30" {
		t.Errorf("HTTP2_PING_TIMEOUT_SECONDS = %q, want the operator's 30", got)
	}
}
