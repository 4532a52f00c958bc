package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/upgrade-console/upgrade-console/upgrade/recovery"
)

// A pause or a node label set with kubectl a second ago is stale to the
// console (nothing alive holds it), and may be a person's on purpose: its
// reason says to ask whoever set it, and the closing line said "clear them
// with --all" all the same. It names those markers and asks first; markers
// of the console's or the controllers' keep the plain line.
func TestLockStatusAsksBeforeClearingMarkersOthersSet(t *testing.T) {
	now := time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)
	stale := func(id, holder string) recovery.Marker {
		return recovery.Marker{ID: id, Holder: holder, State: recovery.MarkerStale, Since: now.Add(-time.Second), Object: "Cluster default/mgmt"}
	}
	var out bytes.Buffer
	writeMarkers(&out, []recovery.Marker{stale(recovery.MarkerPaused, "kubectl-annotate"), stale("node-label/n1", "kubectl-label"), stale(recovery.MarkerKCPPaused, "manager")}, now, "--cluster mgmt")
	want := "3 stale marker(s), 2 set by another manager: paused (kubectl-annotate), node-label/n1 (kubectl-label); ask whoever set those before clearing them"
	if !strings.Contains(out.String(), want) {
		t.Errorf("closing line:\n%s\nwant %q", out.String(), want)
	}
	out.Reset()
	writeMarkers(&out, []recovery.Marker{stale(recovery.MarkerPaused, "upgrade-console"), stale(recovery.MarkerKCPPaused, "manager")}, now, "--cluster mgmt")
	if !strings.Contains(out.String(), "2 stale marker(s): clear them with\n  upgrade-console lock clear --all --cluster mgmt") {
		t.Errorf("console's own markers:\n%s", out.String())
	}
}

// Kept markers, which --all leaves, are named with the command that clears
// them by name; and a lock clear without a marker names the lock status of
// the cluster and connection it was given.
func TestLockCommandsNameHowKeptMarkersAreCleared(t *testing.T) {
	now := time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)
	var out bytes.Buffer
	writeMarkers(&out, []recovery.Marker{
		{ID: recovery.MarkerLease, Holder: "alice@laptop", State: recovery.MarkerKept, Since: now.Add(-time.Hour), Object: "Lease eksa-system/upgrade-console-mgmt"},
		{ID: recovery.MarkerPaused, Holder: "upgrade-console", State: recovery.MarkerKept, Since: now.Add(-time.Hour), Object: "Cluster default/mgmt"},
	}, now, "--cluster mgmt --context prod")
	if want := "2 kept marker(s), left by --all: once the cluster is checked, clear them by name with\n  upgrade-console lock clear lease paused --cluster mgmt --context prod\n"; !strings.Contains(out.String(), want) {
		t.Errorf("lock status:\n%s\nwant %q", out.String(), want)
	}
	_, errOut, code := runCaptured(t, "lock", "clear", "--cluster", "mgmt", "--context", "prod")
	if code != ExitUsage || !strings.Contains(errOut, "`upgrade-console lock status --cluster mgmt --context prod` lists them") {
		t.Errorf("lock clear with no marker: exit %d, %s", code, errOut)
	}
}
