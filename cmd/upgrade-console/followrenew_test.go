package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/upgrade-console/upgrade-console/model"
)

// An API server outage longer than the Lease leaves it expired; when the
// connection comes back the follow renews it at once rather than at its
// next tick (up to 20 s later: 9 s measured against the demo), while other
// consoles called the live upgrade's lock stale.
func TestFollowRenewsTheLockAtOnceWhenTheConnectionReturns(t *testing.T) {
	var out strings.Builder
	renewErr := errors.New("renew upgrade lock: no answer from the API server within 10s")
	asked := 0
	f := &followPrinter{out: &out,
		lock:     func() (error, bool) { return renewErr, false },
		renewNow: func() { asked++; renewErr = nil },
	}
	f.onPoll(&model.ClusterState{Connection: model.Live})
	f.onPoll(&model.ClusterState{Connection: model.Reconnecting})
	if asked != 0 {
		t.Fatalf("renewal asked %d time(s) while reconnecting", asked)
	}
	f.onPoll(&model.ClusterState{Connection: model.Live})
	if asked != 1 {
		t.Fatalf("renewal asked %d time(s) when the connection came back, want 1", asked)
	}
	if !strings.Contains(out.String(), "the upgrade lock is renewed again") {
		t.Errorf("no renewal said:\n%s", out.String())
	}
	f.onPoll(&model.ClusterState{Connection: model.Live})
	if asked != 1 {
		t.Errorf("renewal asked again with nothing failing: %d", asked)
	}
}

// The watched Lease no longer names this console (cleared with --force):
// the follow renews at once and says the lock was lost, where it said so
// at the next renewal, 14 s later in the demo. Asked once per disagreement.
func TestFollowRenewsAtOnceWhenItsLeaseIsGone(t *testing.T) {
	const self = "alice@laptop/1"
	var out strings.Builder
	lost, asked := false, 0
	f := &followPrinter{out: &out, self: self,
		lock:     func() (error, bool) { return nil, lost },
		renewNow: func() { asked++; lost = true },
	}
	synced := map[model.Kind]model.SourceStatus{model.KindLease: {Installed: true, Synced: true}}
	f.onPoll(&model.ClusterState{Connection: model.Live, Sources: synced, Lock: &model.Lock{HolderIdentity: self}})
	if asked != 0 {
		t.Fatalf("renewal asked %d time(s) while the Lease names this console", asked)
	}
	f.onPoll(&model.ClusterState{Connection: model.Live, Sources: synced})
	if asked != 1 || !strings.Contains(out.String(), "the upgrade lock was cleared or taken by someone else") {
		t.Fatalf("asked %d, said:\n%s", asked, out.String())
	}
	f.onPoll(&model.ClusterState{Connection: model.Live, Sources: synced})
	if asked != 1 {
		t.Errorf("asked again for the same disagreement: %d", asked)
	}
}
