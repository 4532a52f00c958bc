package model

import (
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The upgrade lock is a coordination.k8s.io/v1 Lease in the system namespace
// (package upgrade takes, renews and releases it). The watchers carry it in
// every snapshot so that a lock left behind by a console that died shows,
// and is offered for recovery, without anyone reading it on purpose.

// LockName is the name of the upgrade lock Lease of a cluster.
func LockName(cluster string) string { return "upgrade-console-" + cluster }

// AnnotationLockKept, on the lock Lease, says why its holder kept the lock
// when it stopped following the upgrade (the upgrade failed or timed out). It
// is written by the holder as it stops renewing, so that the lock reads as
// left behind at once, rather than as live until the lease runs out.
const AnnotationLockKept = "upgrade-console/lock-kept"

// AnnotationLockAuthenticatedAs, on the lock Lease, is who the API server
// authenticated the holding console as (its SelfSubjectReview), written
// with the holder when the console takes the lock. The holderIdentity names
// the OS user and host, root@bastion for every operator of a shared bastion;
// this names the token or OIDC user behind it. Absent when the review was
// refused or unanswered, and on a lock taken by an older console.
const AnnotationLockAuthenticatedAs = "upgrade-console/authenticated-as"

// Lock is the upgrade lock Lease as last read: who holds it and until when.
type Lock struct {
	Namespace, Name string
	// HolderIdentity is the raw spec.holderIdentity ("alice@laptop/3f2a9c1e"
	// when a console wrote it); empty when the lease was released.
	HolderIdentity string
	AcquireTime    time.Time
	// RenewTime is zero when the holder never renewed.
	RenewTime time.Time
	// Duration is spec.leaseDurationSeconds: how long the lease holds
	// without renewal.
	Duration time.Duration
	// Kept is why the holder kept the lock when it stopped renewing it
	// (AnnotationLockKept): "upgrade failed: …". Empty while the holder
	// renews it, and on a lock left by a console that died.
	Kept string
	// AuthenticatedAs is who the API server authenticated the holder as
	// (AnnotationLockAuthenticatedAs); empty when it is not known.
	AuthenticatedAs string
	// Written is when the holder last renewed the Lease, by the API
	// server's clock: the time of the writer's entry in
	// metadata.managedFields, which the API server sets (to the second)
	// on each write that changes that manager's fields, as every renewal
	// does. RenewTime is the holder's clock, which may be minutes off.
	// Zero when not known: no entry with a time (managedFields cleared).
	Written time.Time
	// WrittenBy is the field manager of that write where it is not a
	// console's (kubectl-patch: a Lease renewed by hand, or by another
	// tool); empty for a console's own.
	WrittenBy string

	// The watchers' view of when the holder last renewed, by clocks other
	// than the holder's (see ExpiredWatched); zero on a Lock read by any
	// other means, and judged by Expired then.

	// Seen is when, by this machine's clock, the watchers received the
	// Lease with its current renewal: its arrival if Arrived, else when
	// they first saw the Lease, renewed at some unknown time before.
	Seen time.Time
	// Arrived says the watchers saw the renewal arrive (the Lease
	// changed its renewTime, acquireTime or holder while they watched
	// it).
	Arrived bool
	// ServerAtSeen is the API server's clock at Seen: the Date of the
	// response whose stream carried the Lease, aged by this machine's
	// clock since it came. Zero when the response had no Date.
	ServerAtSeen time.Time
}

// FieldManager is the field manager of the console's writes: its Lease
// writes name it, and LockOf finds their time by it.
const FieldManager = "upgrade-console"

// serverSlack is how much later than the lease's duration a lock is called
// stale by the API server's clock: both its times are to the second,
// truncated (managedFields time, the Date header), and the write time's
// truncation alone can make a lease look up to a second older than it is.
// Erring the other way only delays a clear by a second or two.
const serverSlack = 2 * time.Second

// ExpiredByServer is Expired judged by the API server's clock alone:
// serverNow (its time now, as its response said) against Written. ok is
// false when either is unknown, or when serverNow is before Written by
// more than the precision: that "now" is not the clock that wrote the
// Lease (a proxy's Date, another API server's clock far off), and the
// caller falls back to Expired.
func (l *Lock) ExpiredByServer(serverNow time.Time) (expired, ok bool) {
	if l == nil || l.Written.IsZero() || serverNow.IsZero() || serverNow.Before(l.Written.Add(-serverSlack)) {
		return false, false
	}
	return l.Held() && (l.Kept != "" || serverNow.Sub(l.Written) > l.Duration+serverSlack), true
}

// HolderClockOff is how far the holder's clock ran ahead of the API
// server's (behind when negative) at its last write: its renewTime less
// Written. Zero when Written is not known or the Lease was kept (the mark
// is a write after the last renewal), and within holderClockNoise, which
// the times' precision and the request's way to the server account for.
func (l *Lock) HolderClockOff() time.Duration {
	// A renewTime written by another manager was typed, or set by a tool
	// of its own: no console's clock to tell of.
	if l == nil || l.Written.IsZero() || l.WrittenBy != "" || l.Kept != "" || l.LastRenewed().IsZero() {
		return 0
	}
	off := l.LastRenewed().Sub(l.Written)
	if off.Abs() <= holderClockNoise {
		return 0
	}
	return off
}

// holderClockNoise: a renewTime is stamped before its write is sent and
// Written is truncated to the second, so a holder in step with the API
// server differs from it by a second or two, more over a slow link.
const holderClockNoise = 5 * time.Second

// Held reports whether the lease names a holder at all.
func (l *Lock) Held() bool { return l != nil && l.HolderIdentity != "" }

// LastRenewed is when the holder last showed it was alive: the renew time,
// or the acquire time of a lease never renewed.
func (l *Lock) LastRenewed() time.Time {
	if l.RenewTime.IsZero() {
		return l.AcquireTime
	}
	return l.RenewTime
}

// ExpiresAt is when the lease stops holding unless renewed.
func (l *Lock) ExpiresAt() time.Time { return l.LastRenewed().Add(l.Duration) }

// Expired reports whether nobody keeps the lock alive any more: a stale lock,
// kept by an upgrade that failed or timed out (Kept, stale from that moment)
// or left by a console that died (stale once its lease ran out). A released
// lease (no holder) is not expired: there is nothing to clear.
func (l *Lock) Expired(now time.Time) bool {
	return l.Held() && (l.Kept != "" || now.After(l.ExpiresAt()))
}

// ExpiredWatched is Expired as the watchers can tell at seen without the
// holder's clock, whose renewTime may be minutes off this machine's: a
// holder whose clock ran behind by more than the lease's duration was
// called stale while it renewed, and offered for clearing. In order:
//
//   - by the API server's clock (ExpiredByServer), where both the time of
//     the last renewal's write and the server's time at Seen are known:
//     the age of the last renewal, exact to the second;
//   - by this machine's clock, where the watchers saw a renewal arrive: a
//     holder that renews is seen renewing, whatever its clock says, and
//     one that stopped is stale a duration after its last renewal came;
//   - a Lease watched for longer than its duration with no renewal seen is
//     stale whatever its renewTime says (a holder with a clock ahead of
//     this machine's reads as renewed in the future);
//   - else, the first sight of a Lease already there, nothing but the
//     holder's renewTime tells its age: Expired.
//
// seen is ClusterState.LockSeenAt, whose rule holds while the watch is
// disconnected. A renewal seen arriving on a relist after a disconnect
// may have come any time during it: the lease reads as renewed at most
// that much later than it was, for one duration.
func (l *Lock) ExpiredWatched(seen time.Time) bool {
	if !l.Held() {
		return false
	}
	if l.Kept != "" || l.Seen.IsZero() {
		return l.Expired(seen)
	}
	if expired, ok := l.ExpiredByServer(l.serverAt(seen)); ok {
		return expired
	}
	if seen.Sub(l.Seen) > l.Duration+serverSlack {
		return true
	}
	return !l.Arrived && l.Expired(seen)
}

// RenewedHere is when the holder last renewed, on this machine's clock,
// by the clock ExpiredWatched judges it by: the age to show beside its
// judgement. The holder's own LastRenewed where nothing better is known.
func (l *Lock) RenewedHere() time.Time {
	if l.Seen.IsZero() || l.Kept != "" {
		return l.LastRenewed()
	}
	if _, ok := l.ExpiredByServer(l.serverAt(l.Seen)); ok {
		return l.Seen.Add(l.Written.Sub(l.ServerAtSeen))
	}
	if l.Arrived {
		return l.Seen
	}
	return l.LastRenewed()
}

// serverAt is the API server's clock at seen (this machine's), from its
// clock at Seen; zero when not known.
func (l *Lock) serverAt(seen time.Time) time.Time {
	if l.Seen.IsZero() {
		return time.Time{}
	}
	return ServerTimeAt(l.ServerAtSeen, l.Seen, seen)
}

// ServerTimeAt is the API server's time at now (this machine's), from a
// response's Date received at received: never later than the server's true
// time, since the Date is truncated to the second and was stamped before it
// was received. Zero when there was no Date. A now before received (a
// test's fixed clock) counts as received.
func ServerTimeAt(date, received, now time.Time) time.Time {
	if date.IsZero() {
		return time.Time{}
	}
	return date.Add(max(now.Sub(received), 0))
}

// LockSeenAt is the latest moment the snapshot's view of the upgrade lock
// holds for: now while the connection is live, and, while the console
// reconnects to the API server, when it found the connection lost, since it
// sees no renewal after that. Judged at now, a blind console called the
// lease of a holder that renewed it all along "stale: not renewed for 1m",
// with the command that clears it.
func (s *ClusterState) LockSeenAt(now time.Time) time.Time {
	if s != nil && s.Connection == Reconnecting && !s.ConnectionSince.IsZero() && s.ConnectionSince.Before(now) {
		return s.ConnectionSince
	}
	return now
}

// LockExpired is whether the snapshot's lock is stale as far as it can tell:
// Lock.ExpiredWatched at LockSeenAt, so a lease already stale when the
// connection was lost stays stale, one renewed then is not called stale
// while the console cannot see it. The header, watch --plain, the
// progress and the recovery offers all judge the watched lock by it.
func (s *ClusterState) LockExpired(now time.Time) bool {
	return s != nil && s.Lock.ExpiredWatched(s.LockSeenAt(now))
}

// renews reports whether a managedFields entry owns a field whose write
// renews or takes the lease. Another manager's write of an annotation
// renews nothing; the time of an entry that owns one of these does move
// with its manager's other writes, which errs towards calling the lease
// live.
func renews(f *metav1.FieldsV1) bool {
	if f == nil {
		return false
	}
	raw := f.GetRawString()
	return strings.Contains(raw, `"f:renewTime"`) || strings.Contains(raw, `"f:acquireTime"`) || strings.Contains(raw, `"f:holderIdentity"`)
}

// LockOf reads the upgrade lock out of its Lease: the one translation the
// watchers (for snapshots) and package upgrade (when it acts on the lock)
// share.
func LockOf(l *coordinationv1.Lease) Lock {
	lock := Lock{
		Namespace:      l.Namespace,
		Name:           l.Name,
		HolderIdentity: ptr.Deref(l.Spec.HolderIdentity, ""),
		Duration:       time.Duration(ptr.Deref(l.Spec.LeaseDurationSeconds, 0)) * time.Second,
		Kept:           PrintableLine(l.Annotations[AnnotationLockKept]),
	}
	if lock.HolderIdentity != "" {
		// A lease released by hand (holder emptied, annotation left)
		// names nobody: the identity went with its holder.
		lock.AuthenticatedAs = PrintableLine(l.Annotations[AnnotationLockAuthenticatedAs])
	}
	if l.Spec.AcquireTime != nil {
		lock.AcquireTime = l.Spec.AcquireTime.Time
	}
	if l.Spec.RenewTime != nil {
		lock.RenewTime = l.Spec.RenewTime.Time
	}
	var other time.Time
	var otherBy string
	for _, f := range l.ManagedFields {
		switch {
		case f.Time == nil:
		case f.Manager == FieldManager && f.Time.After(lock.Written):
			lock.Written = f.Time.Time
		case f.Manager != FieldManager && f.Time.After(other) && renews(f.FieldsV1):
			other, otherBy = f.Time.Time, f.Manager
		}
	}
	if other.After(lock.Written) {
		// Renewed last by something else (kubectl patch of renewTime by
		// hand, a tool holding the Lease): the console's own last write,
		// older, called a Lease renewed a moment ago stale by the API
		// server's clock, and clearable (D12). That write's time is the
		// API server's clock as much as a console's is; judged by its
		// renewTime instead, the Lease of a holder whose clock ran behind
		// was offered for clearing by `lock clear` while it renewed.
		lock.Written, lock.WrittenBy = other, otherBy
	}
	return lock
}
