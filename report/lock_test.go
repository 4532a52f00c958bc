package report

import (
	"strings"
	"testing"
	"time"

	"github.com/upgrade-console/upgrade-console/model"
)

func TestLockWatchSaysWhoHoldsItAndWhenItGoesStale(t *testing.T) {
	lock := func(holder string, renewed time.Time) *model.Lock {
		return &model.Lock{HolderIdentity: holder, AcquireTime: t0.Add(-time.Hour), RenewTime: renewed, Duration: time.Minute}
	}
	steps := []struct {
		lock *model.Lock
		now  time.Time
		want string // "" when nothing is to be said
	}{
		{nil, t0, ""},
		{lock("alice@laptop/1", t0), t0, "held by alice@laptop/1 since 2026-11-21T11:00:00Z"},
		{lock("alice@laptop/1", t0.Add(20*time.Second)), t0.Add(20 * time.Second), ""}, // a renewal
		{lock("alice@laptop/1", t0.Add(20*time.Second)), t0.Add(80 * time.Second), ""}, // the boundary still holds
		{lock("alice@laptop/1", t0.Add(20*time.Second)), t0.Add(3 * time.Minute),
			"held by alice@laptop/1, stale: not renewed for 2m (if no upgrade is running, clear it with `upgrade-console lock clear lease --cluster mgmt`)"},
		{lock("alice@laptop/1", t0.Add(3*time.Minute)), t0.Add(3 * time.Minute), "renewed again by alice@laptop/1"},
		{lock("bob@bastion/2", t0.Add(4*time.Minute)), t0.Add(4 * time.Minute), "held by bob@bastion/2 since 2026-11-21T11:00:00Z"},
		{&model.Lock{HolderIdentity: "bob@bastion/2", AcquireTime: t0.Add(-time.Hour), RenewTime: t0.Add(4 * time.Minute), Duration: time.Minute, Kept: "upgrade failed: x"}, t0.Add(4 * time.Minute),
			"held by bob@bastion/2, kept when its console stopped following: upgrade failed: x (check the cluster, then clear it with `upgrade-console lock clear lease --cluster mgmt`)"},
		{lock("", t0.Add(4*time.Minute)), t0.Add(5 * time.Minute), "released by bob@bastion/2"},
		{nil, t0.Add(6 * time.Minute), ""},
	}
	var w lockWatch
	for i, st := range steps {
		got := w.observe(st.lock, "mgmt", "", nil, st.now)
		switch {
		case st.want == "" && len(got) != 0:
			t.Errorf("step %d: %v, want nothing", i, got)
		case st.want != "" && (len(got) != 1 || got[0].Text != st.want || got[0].Subject != "lock" || !got[0].At.Equal(st.now)):
			t.Errorf("step %d: %v, want %q", i, got, st.want)
		}
	}
}

// On a shared bastion every holder is root@bastion: the plain watch says who
// the API server authenticated the console that took the lock as.
func TestLockWatchNamesWhoTheHolderIsAuthenticatedAs(t *testing.T) {
	l := &model.Lock{HolderIdentity: "root@bastion/3f2a9c1e", AcquireTime: t0, RenewTime: t0, Duration: time.Minute, AuthenticatedAs: "system:serviceaccount:ops:alice"}
	var w lockWatch
	got := w.observe(l, "mgmt", "", nil, t0)
	if want := "held by root@bastion/3f2a9c1e (authenticated as system:serviceaccount:ops:alice) since 2026-11-21T12:00:00Z"; len(got) != 1 || got[0].Text != want {
		t.Errorf("%v, want %q", got, want)
	}
	if got := w.observe(&model.Lock{}, "mgmt", "", nil, t0); len(got) != 1 || got[0].Text != "released by root@bastion/3f2a9c1e" {
		t.Errorf("released: %v", got)
	}
}

// TestWatchReportsStaleLockAsTimePasses: the lease expires without a new
// snapshot; the plain watch says so on its tick.
func TestWatchReportsStaleLockAsTimePasses(t *testing.T) {
	s := etcdRollout(1)
	s.Lock = &model.Lock{HolderIdentity: "alice@laptop/1", AcquireTime: t0.Add(-time.Minute), RenewTime: t0, Duration: time.Minute}
	w := startWatch(t, WatchOptions{})
	w.send(s)
	if got := w.out.String(); !strings.Contains(got, "lock: held by alice@laptop/1") || strings.Contains(got, "stale") {
		t.Fatalf("live lock:\n%s", got)
	}
	w.advance(t, 2*time.Minute)
	waitOutput(t, w.out, "lock: held by alice@laptop/1, stale: not renewed for 1m")
}

// A watch that lost its connection sees no renewal: the lease of a holder
// that goes on renewing it is not stale for that (the blind watch said
// "stale: not renewed for 1m (if no upgrade is running, clear it …)" while
// the holder's renewals went through). What it knew when the connection was
// lost stands: a lease already stale then is still said stale.
func TestWatchDoesNotCallTheLockStaleWhileItCannotSeeIt(t *testing.T) {
	s := etcdRollout(1)
	s.Lock = &model.Lock{HolderIdentity: "alice@laptop/1", AcquireTime: t0.Add(-time.Minute), RenewTime: t0, Duration: time.Minute}
	s.Connection, s.ConnectionSince = model.Reconnecting, t0.Add(25*time.Second)
	w := startWatch(t, WatchOptions{})
	w.send(s)
	w.advance(t, 2*time.Minute)
	if got := w.out.String(); strings.Contains(got, "stale") {
		t.Fatalf("a lease renewed when the connection was lost called stale while reconnecting:\n%s", got)
	}

	s = etcdRollout(1)
	s.Lock = &model.Lock{HolderIdentity: "alice@laptop/1", AcquireTime: t0.Add(-5 * time.Minute), RenewTime: t0.Add(-3 * time.Minute), Duration: time.Minute}
	s.Connection, s.ConnectionSince = model.Reconnecting, t0.Add(-10*time.Second)
	w = startWatch(t, WatchOptions{})
	w.send(s)
	w.advance(t, time.Minute)
	waitOutput(t, w.out, "lock: held by alice@laptop/1, stale: not renewed for")
}

func TestForbiddenLeaseIsNotAPane(t *testing.T) {
	a := etcdRollout(1)
	b := clone(a)
	b.Sources = map[model.Kind]model.SourceStatus{model.KindLease: {Installed: true, Forbidden: "list leases.coordination.k8s.io in eksa-system"}}
	out := texts(Changes(a, b, derive(a), derive(b), t0))
	if want := "access: forbidden: list leases.coordination.k8s.io in eksa-system (the upgrade lock is not shown; fix: grant a Role in eksa-system with {apiGroups: [\"coordination.k8s.io\"], resources: [leases], verbs: [list, watch]} and a RoleBinding to the identity (check: `kubectl auth can-i list leases.coordination.k8s.io -n eksa-system`))"; !strings.Contains(out, want) {
		t.Errorf("missing %q:\n%s", want, out)
	}
}

// The holderIdentity is text whoever may update the Lease writes: printed,
// its control characters are escaped.
func TestLockWatchEscapesTheHolder(t *testing.T) {
	var w lockWatch
	got := w.observe(&model.Lock{HolderIdentity: "eve\r\x1b[2Klock: none@x/1", AcquireTime: t0, RenewTime: t0, Duration: time.Minute}, "mgmt", "", nil, t0)
	if len(got) != 1 || strings.ContainsAny(got[0].Text, "\r\x1b") || !strings.Contains(got[0].Text, `eve\r\x1b[2Klock: none@x/1`) {
		t.Errorf("lines %q, want the holder with its control characters escaped", got)
	}
}

// TestLockWatchJudgesByRenewalsSeenNotTheHoldersClock: bob's clock runs 3
// minutes behind and the watchers see his renewals arrive; the plain watch
// called his lock stale, with the command that clears it.
func TestLockWatchJudgesByRenewalsSeenNotTheHoldersClock(t *testing.T) {
	renewed := func(at time.Time) *model.Lock {
		return &model.Lock{HolderIdentity: "bob@laptop/1", AcquireTime: t0.Add(-time.Hour), RenewTime: at.Add(-3 * time.Minute),
			Duration: time.Minute, Seen: at, Arrived: true}
	}
	var w lockWatch
	if got := w.observe(renewed(t0), "mgmt", "", nil, t0); len(got) != 1 || got[0].Text != "held by bob@laptop/1 since 2026-11-21T11:00:00Z" {
		t.Errorf("first sight: %v", got)
	}
	if got := w.observe(renewed(t0.Add(20*time.Second)), "mgmt", "", nil, t0.Add(30*time.Second)); len(got) != 0 {
		t.Errorf("renewed 10s ago by this machine's clock, 3m10s by its holder's: %v", got)
	}
	want := "held by bob@laptop/1, stale: not renewed for 1m (if no upgrade is running, clear it with `upgrade-console lock clear lease --cluster mgmt`)"
	if got := w.observe(renewed(t0.Add(20*time.Second)), "mgmt", "", nil, t0.Add(90*time.Second)); len(got) != 1 || got[0].Text != want {
		t.Errorf("no renewal seen for 70s: %v, want %q", got, want)
	}
}

// The holder's clock runs 3 minutes ahead: the watch sees its renewals stop
// and calls the lock stale, while its renewTime reads as live for minutes
// more. lock clear reads the Lease once and judges it by that renewTime, so
// the command the line gave was refused as a clear of a live lease.
func TestLockWatchSaysForceWhereLockClearCallsTheLeaseLive(t *testing.T) {
	last := t0.Add(20 * time.Second)
	l := &model.Lock{HolderIdentity: "bob@laptop/1", AcquireTime: t0.Add(-time.Hour), RenewTime: last.Add(3 * time.Minute),
		Duration: time.Minute, Seen: last, Arrived: true}
	var w lockWatch
	w.observe(l, "mgmt", "", nil, last)
	want := "held by bob@laptop/1, stale: no renewal seen for 1m (its renewTime is ahead of this machine's clock, so lock clear calls it live until " +
		l.ExpiresAt().Local().Format("15:04:05") + "; if no upgrade is running, clear it with `upgrade-console lock clear lease --force --cluster mgmt`)"
	if got := w.observe(l, "mgmt", "", nil, last.Add(70*time.Second)); len(got) != 1 || got[0].Text != want {
		t.Errorf("no renewal seen for 70s, renewTime 3m ahead: %v\nwant %q", got, want)
	}
}
