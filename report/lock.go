package report

import (
	"time"

	"github.com/upgrade-console/upgrade-console/model"
)

// lockWatch follows the upgrade lock Lease for the plain watch: a line when
// a console takes it, hands it over or releases it, and when its holder stops
// renewing it or starts again. A lease goes stale without a write, so it is
// asked on every tick, not only on new snapshots; renewals print nothing.
type lockWatch struct {
	holder string
	stale  bool
}

// cluster and namespace name the EKS-A Cluster in the fixes, and conn the
// console's connection, so they can be pasted.
func (w *lockWatch) observe(l *model.Lock, cluster, namespace string, conn model.ConnFlags, now time.Time) []Line {
	return w.observeSeen(l, cluster, namespace, conn, now, now)
}

// observeSeen is observe with the lease judged at seen, the latest moment
// the watch's view of it holds for (ClusterState.LockSeenAt): a watch that
// reconnects sees no renewal, which does not make the lease stale.
func (w *lockWatch) observeSeen(l *model.Lock, cluster, namespace string, conn model.ConnFlags, now, seen time.Time) []Line {
	holder, stale := "", false
	if l.Held() {
		// Printed: whoever may update the Lease writes it.
		holder, stale = model.PrintableLine(l.HolderIdentity), l.ExpiredWatched(seen)
	}
	if holder == w.holder && stale == w.stale {
		return nil
	}
	// Who the API server authenticated the holder as, when its console
	// wrote it: on a shared bastion the identity is root@bastion for all.
	named := holder
	if l.Held() && l.AuthenticatedAs != "" {
		named += " (authenticated as " + l.AuthenticatedAs + ")"
	}
	var text string
	switch {
	case holder == "":
		text = "released by " + w.holder
	case stale && l.Kept != "":
		text = "held by " + named + ", kept when its console stopped following: " + l.Kept +
			" (check the cluster, then clear it with `upgrade-console lock clear lease " + model.ClusterArgs(cluster, namespace, conn) + "`)"
	case stale && l.Written.IsZero() && !l.Expired(seen):
		// Stale by the renewals the watch saw, while its renewTime, the
		// holder's clock, is ahead of this machine's: lock clear reads
		// the Lease once and judges it by that renewTime, and refused
		// the clear this line advised, calling the lease live.
		text = "held by " + named + ", stale: no renewal seen for " + model.ShortDuration(now.Sub(l.RenewedHere())) +
			" (its renewTime is ahead of this machine's clock, so lock clear calls it live until " + l.ExpiresAt().Local().Format("15:04:05") +
			"; if no upgrade is running, clear it with `upgrade-console lock clear lease --force " + model.ClusterArgs(cluster, namespace, conn) + "`)"
	case stale:
		text = "held by " + named + ", stale: not renewed for " + model.ShortDuration(now.Sub(l.RenewedHere())) +
			" (if no upgrade is running, clear it with `upgrade-console lock clear lease " + model.ClusterArgs(cluster, namespace, conn) + "`)"
	case holder == w.holder:
		text = "renewed again by " + holder
	default:
		text = "held by " + named + " since " + l.AcquireTime.UTC().Format(time.RFC3339)
	}
	w.holder, w.stale = holder, stale
	return []Line{{At: now, Subject: "lock", Text: text}}
}
