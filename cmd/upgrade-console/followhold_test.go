package main

import (
	"strings"
	"testing"
	"time"

	"github.com/upgrade-console/upgrade-console/model"
)

// A --timeout that ends the follow before the failure's grace is said on
// the notice: "the upgrade fails at 07:06" read as the verdict this
// command would give, where it stops with exit 5 before then.
func TestFollowHoldSaysTheTimeoutComesFirst(t *testing.T) {
	until := time.Date(2026, 5, 4, 10, 10, 0, 0, time.UTC)
	for _, tc := range []struct {
		stopAt time.Time
		want   bool
	}{
		{time.Time{}, false},
		{until.Add(-5 * time.Minute), true},
		{until.Add(time.Minute), false},
	} {
		var out strings.Builder
		f := &followPrinter{out: &out, day: time.Now().UTC().Format(time.DateOnly), stopAt: tc.stopAt}
		f.onHold("still failing after 1m: boom; the upgrade fails at 10:10:00 UTC (in 9m) unless it clears first", model.Hold{Until: until})
		said := strings.Contains(out.String(), "; this console stops following at 10:05:00 UTC (--timeout), before then")
		if said != tc.want || !strings.Contains(out.String(), "! still failing after 1m: boom") {
			t.Errorf("stop at %s: %q", tc.stopAt, out.String())
		}
	}
}
