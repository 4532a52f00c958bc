package model

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
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
}

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

// LockExpired is Lock.Expired as far as the snapshot can tell (LockSeenAt):
// a lease already stale when the connection was lost stays stale, one
// renewed then is not called stale while the console cannot see it.
func (s *ClusterState) LockExpired(now time.Time) bool {
	return s != nil && s.Lock.Expired(s.LockSeenAt(now))
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
	return lock
}
