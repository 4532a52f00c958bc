package model

import (
	"testing"
	"time"
)

// watchedHolder is a console renewing its lock every 20s with its clock off
// this machine's by skew, as the watchers see it: local is this machine's
// clock, server the API server's, 7s ahead of it, so that no test passes
// by mixing them up.
type watchedHolder struct {
	skew  time.Duration
	lock  Lock
	withW bool // the Lease carries the console's write time (Written)
}

const serverAhead = 7 * time.Second

// renew is a renewal the holder writes at local, seen arriving at once.
func (h *watchedHolder) renew(local time.Time) {
	h.lock.RenewTime = local.Add(h.skew)
	if h.withW {
		h.lock.Written = local.Add(serverAhead).Truncate(time.Second)
	}
	h.lock.Seen, h.lock.Arrived, h.lock.ServerAtSeen = local, true, time.Time{}
	if h.withW {
		h.lock.ServerAtSeen = local.Add(serverAhead).Truncate(time.Second)
	}
}

func newWatchedHolder(skew time.Duration, withW bool) *watchedHolder {
	return &watchedHolder{skew: skew, withW: withW,
		lock: Lock{HolderIdentity: "bob@laptop/1", AcquireTime: t0.Add(-time.Hour + skew), Duration: time.Minute}}
}

// TestLockExpiredWatchedIgnoresTheHoldersClock: a holder that renews is
// live whatever its clock says, and stale a duration after it stops,
// judged by the arrivals the watchers saw when the Lease carries no write
// time of the console's, by the API server's clock when it does.
func TestLockExpiredWatchedIgnoresTheHoldersClock(t *testing.T) {
	for _, withW := range []bool{false, true} {
		for _, skew := range []time.Duration{-3 * time.Minute, 3 * time.Minute} {
			h := newWatchedHolder(skew, withW)
			var last time.Time
			for i := range 10 {
				last = t0.Add(time.Duration(i) * 20 * time.Second)
				h.renew(last)
				for _, after := range []time.Duration{0, 10 * time.Second, 19 * time.Second} {
					if now := last.Add(after); h.lock.ExpiredWatched(now) {
						t.Errorf("written %v, clock %s: renewed %s ago (renewTime %s), called stale", withW, skew, after, h.lock.RenewTime)
					}
				}
			}
			// The renewals stop: stale once a duration passed since the
			// last, though renewTime says it is in the future (ahead).
			for _, after := range []time.Duration{time.Minute, time.Minute + serverSlack} {
				if h.lock.ExpiredWatched(last.Add(after)) {
					t.Errorf("written %v, clock %s: stale %s after the last renewal, within the slack", withW, skew, after)
				}
			}
			if !h.lock.ExpiredWatched(last.Add(time.Minute + 3*time.Second)) {
				t.Errorf("written %v, clock %s: not stale 63s after the last renewal (renewTime %s)", withW, skew, h.lock.RenewTime)
			}
			if !h.lock.ExpiredWatched(last.Add(time.Hour)) {
				t.Errorf("written %v, clock %s: not stale an hour after the last renewal", withW, skew)
			}
			if got := h.lock.RenewedHere(); got.Sub(last).Abs() > time.Second {
				t.Errorf("written %v, clock %s: RenewedHere = %s, want about %s", withW, skew, got, last)
			}
			// Kept as it stops following: stale at once, though its last
			// renewal was seen arriving a moment ago.
			kept := h.lock
			kept.Kept = "upgrade failed"
			if !kept.ExpiredWatched(last) {
				t.Errorf("written %v, clock %s: a lock kept right after a renewal seen arriving is not stale at once", withW, skew)
			}
		}
	}
}

// TestLockExpiredWatchedFirstSight: a Lease already there when the watchers
// start was renewed at a time this machine did not see.
func TestLockExpiredWatchedFirstSight(t *testing.T) {
	behind := Lock{HolderIdentity: "bob@laptop/1", RenewTime: t0.Add(-3*time.Minute - 5*time.Second), Duration: time.Minute,
		Seen: t0}
	// The API server wrote it 5s before it sent it: live, by its clock.
	byServer := behind
	byServer.Written, byServer.ServerAtSeen = t0.Add(serverAhead-5*time.Second), t0.Add(serverAhead)
	if byServer.ExpiredWatched(t0) || byServer.ExpiredWatched(t0.Add(50*time.Second)) {
		t.Error("a Lease the API server saw written 5s ago, whose holder's clock is 3m behind, called stale")
	}
	if !byServer.ExpiredWatched(t0.Add(58 * time.Second)) {
		t.Error("a Lease written 63s ago by the API server's clock, not renewed since, not called stale")
	}
	if got := byServer.RenewedHere(); !got.Equal(t0.Add(-5 * time.Second)) {
		t.Errorf("RenewedHere = %s, want 5s before it was seen", got.Sub(t0))
	}
	// No write time: the holder's renewTime is all there is, until a
	// renewal is seen arriving.
	if !behind.ExpiredWatched(t0) {
		t.Error("no server time: a renewTime 3m old was not judged by it")
	}
	ahead := Lock{HolderIdentity: "bob@laptop/1", RenewTime: t0.Add(3 * time.Minute), Duration: time.Minute, Seen: t0}
	if ahead.ExpiredWatched(t0.Add(time.Minute)) || ahead.ExpiredWatched(t0.Add(time.Minute+serverSlack)) {
		t.Error("a renewTime in the future, watched a duration: stale within the slack")
	}
	if !ahead.ExpiredWatched(t0.Add(time.Minute + 3*time.Second)) {
		t.Error("watched 63s with no renewal seen: not stale because its renewTime is in the future")
	}
	kept := ahead
	kept.Kept = "upgrade failed"
	if !kept.ExpiredWatched(t0) {
		t.Error("a kept lock is not stale at once")
	}
	released := ahead
	released.HolderIdentity = ""
	if released.ExpiredWatched(t0.Add(time.Hour)) {
		t.Error("a released lease was called stale")
	}
}

// TestLockExpiredKeepsTheSeenAtRule: while the watch reconnects, the lock
// is judged as of when the connection was lost, with the watchers' times.
func TestLockExpiredKeepsTheSeenAtRule(t *testing.T) {
	h := newWatchedHolder(-3*time.Minute, false)
	h.renew(t0)
	s := &ClusterState{Lock: &h.lock, Connection: Reconnecting, ConnectionSince: t0.Add(30 * time.Second)}
	if s.LockExpired(t0.Add(time.Hour)) {
		t.Error("a lock renewed 30s before the connection was lost called stale while reconnecting")
	}
	s.Connection = Live
	if !s.LockExpired(t0.Add(time.Hour)) {
		t.Error("a lock not renewed for an hour, connection live, not stale")
	}
	if s.LockExpired(t0.Add(30 * time.Second)) {
		t.Error("a lock renewed 30s ago by this machine's clock, its holder's 3m behind, called stale")
	}
	// Connecting, never yet live, the Lease's own watch delivered it: the
	// time the console began to connect, before it saw the Lease, is not
	// when its view of the lock ends.
	s.Connection, s.ConnectionSince = Connecting, t0.Add(-time.Minute)
	if !s.LockExpired(t0.Add(time.Hour)) {
		t.Error("a lock not renewed for an hour, seen while connecting, not stale")
	}
}
