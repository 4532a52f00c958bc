package model

import "testing"

// A wait that ends while the cluster reports a failure the grace has not yet
// made an outcome says so ("timed out at failed: boom" read oddly, and as a
// failure already called).
func TestUnfinishedWithAFailureWithinTheGrace(t *testing.T) {
	p := Progress{Failed: true, FailureMessage: "boom", Summary: "failed: boom", Current: PhaseFailed}
	want := "timed out while the cluster reported a failure not yet held long enough to fail the upgrade: boom"
	if got := (Judge{}).Unfinished("timed out", p, t0); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
