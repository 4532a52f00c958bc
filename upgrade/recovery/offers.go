package recovery

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// Offer is a recovery action the console proposes for the state it sees. It
// is computed from a snapshot, without I/O, so the dashboard can tell on every
// frame whether to offer the recovery menu; the planner then checks the live
// cluster before anything is done.
type Offer struct {
	Action string // ActionEtcdRollback, ActionLockClear, ActionNodeRetry
	// Node is the node to retry (ActionNodeRetry).
	Node string
	// Markers are the markers to clear (ActionLockClear).
	Markers []string
	// Title is the menu entry; Why is the state that makes it offered.
	Title, Why string
	// SnapshotFile is the local snapshot copy an etcd rollback restores
	// from, when the operator gave one because the ConfigMap is gone (the
	// TUI twin of --snapshot-file).
	SnapshotFile string
	// Watched is the upgrade lock as the snapshot the offer was made from
	// saw it (ActionLockClear of the lease): its plan judges the Lease it
	// reads by the watch's view of the same renewal (LockStatus.Watched),
	// as the offer was.
	Watched *model.Lock
	// keptNote is what clearing a pause the etcd rollback keeps would do
	// (ActionLockClear): Why is built from it and Markers (markersWhy).
	keptNote string
}

// markersWhy is the Why of an offer to clear markers: "stale", as lock
// status calls them ("stale: lease, paused"); "set" beside the note of a
// pause the etcd rollback keeps on purpose, whose lease, if any, is stale.
func markersWhy(markers []string, keptNote string) string {
	if keptNote == "" {
		return "stale: " + strings.Join(markers, ", ")
	}
	if len(markers) > 0 && markers[0] == MarkerLease {
		return "stale lease; set: " + strings.Join(markers[1:], ", ") + keptNote
	}
	return "set: " + strings.Join(markers, ", ") + keptNote
}

// Offers lists the actions offered for a snapshot: an etcd rollback when the
// first new member of a rollout is stuck past the threshold, a node retry
// per failed in-place node, and clearing the markers when one is set or the
// upgrade lock Lease is stale.
func Offers(s *model.ClusterState, now time.Time, threshold time.Duration, nodeLabel string) []Offer {
	if s == nil || s.Cluster == nil {
		return nil
	}
	if threshold <= 0 {
		threshold = DefaultEtcdRollbackThreshold
	}
	if nodeLabel == "" {
		nodeLabel = model.LabelUpgradeInProgress
	}
	var out []Offer
	if o, ok := etcdOffer(s, now, threshold); ok {
		out = append(out, o)
	}
	if !s.NodesElsewhere() { // see retryableSteps
		for node, f := range retryableSteps(s) {
			out = append(out, Offer{Action: ActionNodeRetry, Node: node,
				Title: "Retry the in-place upgrade of node " + node,
				Why:   fmt.Sprintf("step %s failed: %s", f.Step, f.Reason())})
		}
	}
	var markers []string
	var kept string
	// Under another console's live lock every marker is that console's
	// upgrade at work (ListMarkers calls them live, and the plan refuses
	// them without --force, which the dialog has not): none is offered.
	// The caller hides its own live lock (the TUI's ownLockHidden).
	if !s.Lock.Held() || s.LockExpired(now) {
		markers, kept = leftoverMarkers(s, nodeLabel)
	}
	if len(markers) > 0 {
		sort.Strings(markers)
		out = append(out, Offer{Action: ActionLockClear, Title: "Clear upgrade lock markers", Markers: markers,
			Why: markersWhy(markers, kept), keptNote: kept})
	}
	// An etcd rollback not finished takes a stale lease over as it goes
	// on (the console that ran it was killed, say): finishing it is the
	// offer, not clearing the lease apart.
	if r, ok := s.Cluster.EtcdRollback(); s.LockExpired(now) && !(ok && r.Running()) {
		out = withLease(out, upgrade.LockStatusOf(*s.Lock), now)
	}
	return watchedLease(out, s.Lock)
}

// watchedLease gives the offers that clear the lease the lock they were
// judged by.
func watchedLease(offers []Offer, watched *model.Lock) []Offer {
	for i := range offers {
		if offers[i].Action == ActionLockClear && slices.Contains(offers[i].Markers, MarkerLease) {
			offers[i].Watched = watched
		}
	}
	return offers
}

// leftoverMarkers are the markers set that no rollout under way holds, and
// what a clear of paused would do when an etcd rollback keeps it.
func leftoverMarkers(s *model.ClusterState, nodeLabel string) (markers []string, kept string) {
	markers, kept = objectMarkers(s)
	for _, n := range s.Nodes.All() {
		if _, ok := n.Labels[nodeLabel]; ok {
			markers = append(markers, MarkerNodeLabel+"/"+n.Name)
		}
	}
	return markers, kept
}

// objectMarkers are leftoverMarkers less the node labels: the markers on
// the Cluster, the KCP and the EtcdadmCluster, cheap enough for
// Offerer.Any to ask on every frame.
func objectMarkers(s *model.ClusterState) (markers []string, kept string) {
	// An etcd rollback not finished holds the pause and the KCP's: it
	// resumes the one and keeps the other at its end (etcdOffer offers to
	// finish it). Offered, the clear was refused as live.
	if r, ok := s.Cluster.EtcdRollback(); ok && r.Running() {
		return nil, ""
	}
	// A pause the EKS-A CLI holds is not offered: it is live, and clearing
	// it takes --force on the command line.
	if s.Cluster.Paused() && !s.Cluster.ManagedByCLI() {
		markers = append(markers, MarkerPaused)
		if _, ok := s.Cluster.Annotations[model.AnnotationEtcdRollbackRecord]; ok {
			kept = " (paused is kept by the etcd rollback: clearing it makes EKS-A apply the spec again)"
		}
	}
	etcdRolling := s.Etcd != nil && (!s.Etcd.Ready || s.Etcd.Generation != s.Etcd.ObservedGeneration)
	if s.ControlPlane != nil && s.ControlPlane.Paused() && !etcdRolling {
		markers = append(markers, MarkerKCPPaused)
	}
	if s.Etcd != nil && s.Etcd.Upgrading() && !etcdRolling {
		markers = append(markers, MarkerEtcdUpgrading)
	}
	return markers, kept
}

// retryableSteps yields, by node, the failed in-place steps node retry gets
// past: not while the kubelet runs the failed container again (the retry,
// deleting the pod, would kill it mid-run, and refuses to). Nor, by its
// callers, for a cluster whose Nodes are elsewhere: node retry refuses
// those, naming the kubectl command to run on that cluster's API server
// (the stall's advice says it too), so offered, the menu was a dead end.
func retryableSteps(s *model.ClusterState) iter.Seq2[string, model.StepFailure] {
	return func(yield func(string, model.StepFailure) bool) {
		var nodeOf map[string]string // built once a NodeUpgrade runs
		for _, nu := range s.NodeUpgrades.All() {
			if nu.Completed {
				continue
			}
			if nodeOf == nil {
				nodeOf = map[string]string{}
				for _, m := range s.Machines.All() {
					nodeOf[m.Name] = m.NodeName
				}
			}
			node := nodeOf[nu.MachineName]
			if node == "" {
				node = nu.MachineName
			}
			if f, failed := s.NodeStepFailure(nu, node); failed && !f.Rerun() && !yield(node, f) {
				return
			}
		}
	}
}

// LiveLockOfAnother says whether s shows an upgrade lock held and renewed,
// neither kept nor stale: another console's, since the caller's own is
// hidden from s (the dashboard's ownLockHidden).
func LiveLockOfAnother(s *model.ClusterState, now time.Time) bool {
	return s.Lock.Held() && !s.LockExpired(now)
}

func etcdOffer(s *model.ClusterState, now time.Time, threshold time.Duration) (Offer, bool) {
	// An interrupted rollback is finished the way it was started: once its
	// new machine is gone the rollout no longer looks stuck, and the menu
	// offered only the pause it keeps, whose clearing it refuses ("run etcd
	// rollback again to finish it"), a dead end in the dashboard. Not under
	// another console's live lock: that console is running it.
	if r, ok := s.Cluster.EtcdRollback(); ok && r.Running() && !LiveLockOfAnother(s, now) {
		why := "an etcd rollback is not finished"
		if r.By != "" && !r.StartedAt.IsZero() {
			why = fmt.Sprintf("the etcd rollback %s started %s ago is not finished", r.By, ago(now, r.StartedAt))
		}
		return Offer{Action: ActionEtcdRollback, Title: "Finish the etcd rollback", Why: why + ": it resumes where it stopped"}, true
	}
	newest, due := EtcdRollbackMember(s, now, threshold)
	if !due || LiveLockOfAnother(s, now) {
		// Under another console's live lock the plan refuses it
		// (no-live-lock): that console runs the upgrade, or its rollback.
		return Offer{}, false
	}
	return Offer{Action: ActionEtcdRollback, Title: "Roll back the etcd rollout",
		// A time, not an age: the menu stays open while the age grows,
		// and the status line beneath it counted on ("14s" above "16s").
		Why: fmt.Sprintf("new etcd member %s not ready since its creation at %s", newest.Name, newest.CreationTimestamp.UTC().Format("15:04:05 UTC"))}, true
}

// EtcdRollbackMember is the new member of an etcd rollout the rollback
// undoes: the newest of one member more than the spec, every member owned
// and in place, the new one not ready (nil otherwise); due says whether it
// is threshold old, when Offers offers the rollback. The dashboard's status
// lines ask it on every rebuild (18 µs at 10,000 nodes; Offers, which reads
// every NodeUpgrade too, took 1 ms and 1.3 MB).
func EtcdRollbackMember(s *model.ClusterState, now time.Time, threshold time.Duration) (newest *model.Machine, due bool) {
	e := s.Etcd
	if e == nil || (e.Ready && !e.Upgrading()) {
		return nil, false
	}
	var ms []*model.Machine
	for _, m := range s.Machines.All() {
		if m.Role != model.RoleEtcd {
			continue
		}
		if !m.Owned || !m.DeletionTimestamp.IsZero() {
			return nil, false // an old member is already going: past the point of rollback
		}
		ms = append(ms, m)
	}
	// A rollout has one member more than the spec: with replicas 0 or
	// below (the CRD has no minimum) there is no old member to go back to.
	if e.Replicas < 1 || int32(len(ms)) != e.Replicas+1 {
		return nil, false
	}
	sort.Slice(ms, func(i, j int) bool {
		return olderMember(ms[i].CreationTimestamp, ms[j].CreationTimestamp, ms[i].EtcdReady, ms[j].EtcdReady, ms[i].Name, ms[j].Name)
	})
	newest = ms[len(ms)-1]
	if newest.EtcdReady {
		return nil, false
	}
	return newest, now.Sub(newest.CreationTimestamp) >= threshold
}

// WithStaleLease checks the offers' view of the upgrade lock against the live
// cluster (one GET, from a command, never from a view): the snapshot may be
// a moment old, or may not carry the lock at all (reading Leases forbidden
// to the watchers). A stale lease is offered once, whether the snapshot saw
// it or not; one that was renewed or removed since is offered no more. The
// same renewal as watched (the snapshot's lock) is judged as the watch
// judged it (LockStatus.Watched). On a failed read the offers are returned
// as they were.
func WithStaleLease(ctx context.Context, env *Env, offers []Offer, watched *model.Lock) ([]Offer, error) {
	st, err := upgrade.ReadLock(ctx, env.Client.Kube, env.systemNS(), env.Cluster)
	if err != nil {
		return offers, err
	}
	st.Watched(watched)
	if !st.Expired(env.now()) {
		return withoutLease(offers), nil
	}
	return watchedLease(withLease(offers, st, env.now()), watched), nil
}

// OwnKeptLease words the kept-lease offer as this console's when self (its
// holder identity) kept it: the menu named the console's own user@host as
// if another held it, while the header said "kept by this console".
func OwnKeptLease(offers []Offer, l *model.Lock, self string, now time.Time) []Offer {
	if l == nil || self == "" || l.HolderIdentity != self || l.Kept == "" {
		return offers
	}
	out := slices.Clone(offers)
	for i := range out {
		if out[i].Action == ActionLockClear && slices.Equal(out[i].Markers, []string{MarkerLease}) {
			out[i].Why = fmt.Sprintf("kept upgrade lock: this console's, taken %s ago; kept when it stopped following: %s", ago(now, l.AcquireTime), l.Kept)
		}
	}
	return out
}

// withLease adds the stale lease to the offer that clears markers, or as an
// offer of its own; offers that already include it are returned as they are.
// A kept lease is always an offer of its own: it marks a failed upgrade the
// cluster must be checked for, a separate call from the markers (after an
// etcd rollback the next step is to clear paused alone, and the upgrade
// that resumes then runs under the kept lock, released on its completion;
// offered together, clearing paused cleared the lock too).
func withLease(offers []Offer, st *upgrade.LockStatus, now time.Time) []Offer {
	for _, o := range offers {
		if o.Action == ActionLockClear && slices.Contains(o.Markers, MarkerLease) {
			return offers
		}
	}
	out := slices.Clone(offers)
	if st.Kept != "" {
		return append(out, Offer{Action: ActionLockClear, Title: "Clear the kept upgrade lock", Markers: []string{MarkerLease},
			Why: "kept upgrade lock: " + st.Describe(now)})
	}
	for i := range out {
		if out[i].Action == ActionLockClear {
			out[i].Markers = append([]string{MarkerLease}, out[i].Markers...)
			out[i].Why = markersWhy(out[i].Markers, out[i].keptNote)
			return out
		}
	}
	return append(out, Offer{Action: ActionLockClear, Title: "Clear upgrade lock markers", Markers: []string{MarkerLease},
		Why: "stale upgrade lock: " + st.Describe(now)})
}

// withoutLease takes the lease out of the offers (and the offer that only
// cleared it).
func withoutLease(offers []Offer) []Offer {
	out := make([]Offer, 0, len(offers))
	for _, o := range offers {
		if o.Action == ActionLockClear && slices.Contains(o.Markers, MarkerLease) {
			o.Markers = slices.DeleteFunc(slices.Clone(o.Markers), func(m string) bool { return m == MarkerLease })
			if len(o.Markers) == 0 {
				continue
			}
			o.Why = markersWhy(o.Markers, o.keptNote)
		}
		out = append(out, o)
	}
	return out
}

// Offerer tells, for successive snapshots of one cluster, whether Offers
// would offer anything, without Offers' work on every snapshot: the
// dashboard asks on each one (up to ten a second) to show its recovery key
// only when there is something to recover, and at fleet scale Offers
// indexes every Machine. The fleet-sized lists are re-examined only when
// the watchers published a new one. Not safe for concurrent use.
type Offerer struct {
	Threshold time.Duration
	NodeLabel string

	nusFrom      model.List[model.NodeUpgrade]
	podsFrom     []model.UpgraderPod
	machinesFrom model.List[model.Machine]
	nodesFrom    model.List[model.Node]
	failedNode   bool
	labeledNode  bool
	checked      bool
}

// Any reports whether Offers(s, now, o.Threshold, o.NodeLabel) is not empty.
func (o *Offerer) Any(s *model.ClusterState, now time.Time) bool {
	if s == nil || s.Cluster == nil {
		return false
	}
	label := o.NodeLabel
	if label == "" {
		label = model.LabelUpgradeInProgress
	}
	// Machines too: they name the nodes whose pods say a step failed, and
	// sync after the NodeUpgrades (the list then stays the same one).
	if !o.checked || !s.NodeUpgrades.Same(o.nusFrom) || !samePods(s.UpgraderPods, o.podsFrom) || !s.Machines.Same(o.machinesFrom) {
		o.failedNode = false
		for range retryableSteps(s) {
			o.failedNode = true
			break
		}
		o.nusFrom, o.podsFrom, o.machinesFrom = s.NodeUpgrades, s.UpgraderPods, s.Machines
	}
	if !o.checked || !s.Nodes.Same(o.nodesFrom) {
		o.labeledNode = false
		for _, n := range s.Nodes.All() {
			if _, ok := n.Labels[label]; ok {
				o.labeledNode = true
				break
			}
		}
		o.nodesFrom = s.Nodes
	}
	o.checked = true
	// NodesElsewhere outside the cache: it is the Cluster's, which the
	// cache does not follow.
	if (o.failedNode && !s.NodesElsewhere()) || s.LockExpired(now) {
		return true
	}
	// The markers, by Offers' own rule (none under another console's live
	// lock), the node labels from the cache above.
	if !s.Lock.Held() {
		if markers, _ := objectMarkers(s); o.labeledNode || len(markers) > 0 {
			return true
		}
	}
	threshold := o.Threshold
	if threshold <= 0 {
		threshold = DefaultEtcdRollbackThreshold
	}
	_, ok := etcdOffer(s, now, threshold)
	return ok
}

// samePods reports whether two snapshots hold the same list of upgrader
// pods: a snapshot makes a new one when a pod changes.
func samePods(a, b []model.UpgraderPod) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
