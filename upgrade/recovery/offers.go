package recovery

import (
	"context"
	"fmt"
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
}

// Offers lists the actions offered for a snapshot: an etcd rollback when the
// first new member of a rollout is stuck past the threshold, a node retry
// per failed in-place node, and clearing the markers when one is set.
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
	nodeOf := map[string]string{}
	for _, m := range s.Machines {
		nodeOf[m.Name] = m.NodeName
	}
	for _, nu := range s.NodeUpgrades {
		if nu.Completed {
			continue
		}
		step := failedStep(nu)
		if step == "" {
			continue
		}
		c, _ := nu.Conditions.Get(step)
		node := nodeOf[nu.MachineName]
		if node == "" {
			node = nu.MachineName
		}
		out = append(out, Offer{Action: ActionNodeRetry, Node: node,
			Title: "Retry the in-place upgrade of node " + node,
			Why:   fmt.Sprintf("step %s failed: %s", step, c.Reason)})
	}
	var markers []string
	if s.Cluster.Paused() {
		markers = append(markers, MarkerPaused)
	}
	etcdRolling := s.Etcd != nil && (!s.Etcd.Ready || s.Etcd.Generation != s.Etcd.ObservedGeneration)
	if s.ControlPlane != nil && s.ControlPlane.Paused() && !etcdRolling {
		markers = append(markers, MarkerKCPPaused)
	}
	if s.Etcd != nil && s.Etcd.Upgrading() && !etcdRolling {
		markers = append(markers, MarkerEtcdUpgrading)
	}
	for _, n := range s.Nodes {
		if _, ok := n.Labels[nodeLabel]; ok {
			markers = append(markers, MarkerNodeLabel+"/"+n.Name)
		}
	}
	if len(markers) > 0 {
		sort.Strings(markers)
		out = append(out, Offer{Action: ActionLockClear, Title: "Clear upgrade lock markers", Markers: markers,
			Why: "set: " + strings.Join(markers, ", ")})
	}
	return out
}

// failedStep is the first step of an in-place upgrade whose container
// failed, or "".
func failedStep(nu *model.NodeUpgrade) string {
	for _, step := range model.NodeUpgradeSteps {
		c, ok := nu.Conditions.Get(step)
		if ok && c.Status == "False" && (c.Severity == model.SeverityError || strings.Contains(c.Reason, "non-zero exit code")) {
			return step
		}
	}
	return ""
}

func etcdOffer(s *model.ClusterState, now time.Time, threshold time.Duration) (Offer, bool) {
	e := s.Etcd
	if e == nil || (e.Ready && !e.Upgrading()) {
		return Offer{}, false
	}
	var ms []*model.Machine
	for _, m := range s.Machines {
		if m.Role != model.RoleEtcd {
			continue
		}
		if !m.Owned || !m.DeletionTimestamp.IsZero() {
			return Offer{}, false // an old member is already going: past the point of rollback
		}
		ms = append(ms, m)
	}
	if int32(len(ms)) != e.Replicas+1 {
		return Offer{}, false
	}
	sort.Slice(ms, func(i, j int) bool {
		if !ms[i].CreationTimestamp.Equal(ms[j].CreationTimestamp) {
			return ms[i].CreationTimestamp.Before(ms[j].CreationTimestamp)
		}
		return ms[i].Name < ms[j].Name
	})
	newest := ms[len(ms)-1]
	age := now.Sub(newest.CreationTimestamp)
	if newest.EtcdReady || age < threshold {
		return Offer{}, false
	}
	return Offer{Action: ActionEtcdRollback, Title: "Roll back the etcd rollout",
		Why: fmt.Sprintf("new etcd member %s not ready for %s", newest.Name, ago(now, newest.CreationTimestamp))}, true
}

// WithStaleLease adds the console's upgrade lock to the offers when it is
// stale: the lock is not part of a snapshot, so it is read here (one GET),
// from a command, never from a view.
func WithStaleLease(ctx context.Context, env *Env, offers []Offer) ([]Offer, error) {
	st, err := upgrade.ReadLock(ctx, env.Client.Kube, env.systemNS(), env.Cluster)
	if err != nil || !st.Held() || !st.Expired(env.now()) {
		return offers, err
	}
	out := append([]Offer(nil), offers...)
	for i := range out {
		if out[i].Action == ActionLockClear {
			out[i].Markers = append([]string{MarkerLease}, out[i].Markers...)
			out[i].Why = "stale lease; " + out[i].Why
			return out, nil
		}
	}
	return append(out, Offer{Action: ActionLockClear, Title: "Clear upgrade lock markers", Markers: []string{MarkerLease},
		Why: "stale upgrade lock: " + st.Describe(env.now())}), nil
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

	nusFrom     []*model.NodeUpgrade
	nodesFrom   []*model.Node
	failedNode  bool
	labeledNode bool
	checked     bool
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
	if !o.checked || !model.SameList(s.NodeUpgrades, o.nusFrom) {
		o.failedNode = false
		for _, nu := range s.NodeUpgrades {
			if !nu.Completed && failedStep(nu) != "" {
				o.failedNode = true
				break
			}
		}
		o.nusFrom = s.NodeUpgrades
	}
	if !o.checked || !model.SameList(s.Nodes, o.nodesFrom) {
		o.labeledNode = false
		for _, n := range s.Nodes {
			if _, ok := n.Labels[label]; ok {
				o.labeledNode = true
				break
			}
		}
		o.nodesFrom = s.Nodes
	}
	o.checked = true
	if o.failedNode || o.labeledNode || s.Cluster.Paused() {
		return true
	}
	etcdRolling := s.Etcd != nil && (!s.Etcd.Ready || s.Etcd.Generation != s.Etcd.ObservedGeneration)
	if (s.ControlPlane != nil && s.ControlPlane.Paused() && !etcdRolling) || (s.Etcd != nil && s.Etcd.Upgrading() && !etcdRolling) {
		return true
	}
	threshold := o.Threshold
	if threshold <= 0 {
		threshold = DefaultEtcdRollbackThreshold
	}
	_, ok := etcdOffer(s, now, threshold)
	return ok
}
