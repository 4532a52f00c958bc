package recovery

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
	"github.com/upgrade-console/upgrade-console/watchers"
)

// Markers are the leftovers that block an upgrade or a retry: the console's
// own lock Lease, EKS-A's paused annotation (aws/eks-anywhere#5811), CAPI's
// paused annotation on the control plane, etcdadm's upgrading annotation, and
// the kubeone-style "upgrade in progress" node labels. Each can be cleared on
// its own; the stale ones (nothing alive holds them) all at once.

// Marker ids, as `lock clear` takes them.
const (
	MarkerLease         = "lease"
	MarkerManagedByCLI  = "managed-by-cli"
	MarkerPaused        = "paused"
	MarkerKCPPaused     = "kcp-paused"
	MarkerEtcdUpgrading = "etcd-upgrading"
	MarkerNodeLabel     = "node-label"
)

// MarkerIDs lists the marker ids in display order.
var MarkerIDs = []string{MarkerLease, MarkerManagedByCLI, MarkerPaused, MarkerKCPPaused, MarkerEtcdUpgrading, MarkerNodeLabel}

// KnownMarkerID reports whether `lock clear` knows id: one of MarkerIDs, or
// node-label/NODE. It needs no cluster, so a command line naming something
// else is told so before anything is read.
func KnownMarkerID(id string) bool {
	if node, ok := strings.CutPrefix(id, MarkerNodeLabel+"/"); ok {
		return node != "" && !strings.Contains(node, "/")
	}
	return slices.Contains(MarkerIDs, id)
}

// MarkerState says whether a marker may be cleared.
type MarkerState string

const (
	// MarkerNotSet: the marker is not there.
	MarkerNotSet MarkerState = "not set"
	// MarkerStale: set, and nothing alive holds it: `lock clear --all` clears it.
	MarkerStale MarkerState = "stale"
	// MarkerKept: set on purpose and kept until the operator decides (EKS-A
	// reconcile paused by a finished etcd rollback, the lease of an upgrade
	// that failed or timed out): cleared only by name.
	MarkerKept MarkerState = "kept"
	// MarkerLive: held by something that is running (a renewed lease, an etcd
	// rollout in progress): clearing it by name needs --force.
	MarkerLive MarkerState = "live"
	// MarkerUnknown: the identity may not read it (the node labels, to one
	// that may not list Nodes): nothing tells whether it is set, and it is
	// never cleared; the other markers are read and cleared all the same.
	MarkerUnknown MarkerState = "unknown"
)

var nodesGVR = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}

// Marker is one lock or leftover marker.
type Marker struct {
	// ID is what `lock clear` takes: "paused", "node-label/node-1".
	ID     string
	Object string
	// Key and Value are the annotation or label (empty for the lease).
	Key, Value string
	// Holder is who set it: the lease holder, or the field manager that last
	// wrote the annotation or label (from managedFields).
	Holder string
	// AuthenticatedAs is who the API server authenticated the lease's
	// holder as (the lease only, when its console wrote it): Holder is
	// the OS user and host, root@bastion for every operator of a bastion.
	AuthenticatedAs string
	Since           time.Time
	// Renewed is when the lease's holder last renewed it (the lease only):
	// Since is when it was taken, which says nothing of whether it lives.
	Renewed time.Time
	State   MarkerState
	// Blocks says what the marker blocks.
	Blocks string
	// Reason explains the state.
	Reason string

	// What a clear step needs.
	res     dynamic.ResourceInterface
	name    string
	field   string // "annotations" or "labels"
	lease   *upgrade.LockStatus
	extra   map[string]string // further annotations cleared with this one
	confirm string
	// pending says what clearing the paused marker starts: a spec EKS-A
	// has not reconciled ("" when there is none).
	pending string
}

// Age is how long the marker has been set, as far as the API says.
func (m Marker) Age(now time.Time) string { return ago(now, m.Since) }

// MarkerOptions tune ListMarkers.
type MarkerOptions struct {
	// NodeLabel is the upgrade-in-progress node label key
	// (model.LabelUpgradeInProgress when empty).
	NodeLabel string
	// Watched is the upgrade lock as a dashboard's watch saw it (Offer's
	// Watched): the Lease read is judged by it where it is the same
	// renewal (upgrade.LockStatus.Watched). Nil on the command line,
	// which has seen no renewal arrive.
	Watched *model.Lock
}

func (o MarkerOptions) nodeLabel() string {
	if o.NodeLabel == "" {
		return model.LabelUpgradeInProgress
	}
	return o.NodeLabel
}

// notRenewedBlocks is what a lease nobody renews (kept or stale) blocks: an
// etcd rollback takes it over (its no-live-lock precondition passes), so
// only a new upgrade waits for it to be cleared.
const notRenewedBlocks = "any new upgrade until it is cleared (an etcd rollback takes it over; a node retry is not blocked)"

// workloadLeaseBlocks is what the lease of cluster, which mgr manages, blocks
// in state. "A node retry is not blocked" promised one the lease leaves
// free, but node retry of a workload cluster's failed step is refused
// whatever the lease (NodeFailure.ManagedBy): the upgrader pod it deletes
// is on that cluster's own API server.
func workloadLeaseBlocks(state MarkerState, cluster, mgr string) string {
	retry := fmt.Sprintf("a node retry of a failed step is refused for %s whatever the lease: %s manages it, and the upgrader pod a retry deletes is on %s's own API server, not this one", cluster, mgr, cluster)
	if state == MarkerKept || state == MarkerStale {
		return "any new upgrade until it is cleared (an etcd rollback takes it over; " + retry + ")"
	}
	return "any new upgrade, and any etcd rollback, from another console (" + retry + ")"
}

// ListMarkers reads every marker of the cluster, set or not (node labels only
// when set), in MarkerIDs order. It only reads.
func ListMarkers(ctx context.Context, env *Env, o MarkerOptions) ([]Marker, error) {
	now := env.now()
	var out []Marker

	// The lease.
	lockRef := ref("Lease", env.systemNS(), upgrade.LockName(env.Cluster))
	st, err := upgrade.ReadLock(ctx, env.Client.Kube, env.systemNS(), env.Cluster)
	if err != nil {
		return nil, err
	}
	st.Watched(o.Watched)
	lease := Marker{ID: MarkerLease, Object: lockRef, State: MarkerNotSet, confirm: upgrade.LockName(env.Cluster),
		Blocks: "any new upgrade, and any etcd rollback, from another console (a node retry is not blocked: it is what a failed in-place step needs while the upgrade is followed)"}
	liveLock := false
	liveHolder := ""
	if st.Held() {
		// The table's holder column stays user@host (console id), as
		// `holder` in the JSON does for scripts that read it: the
		// identity has a field of its own, and the reason line (which
		// wraps) names both.
		short := st.Holder
		short.Authenticated = ""
		lease.Holder, lease.AuthenticatedAs, lease.Since, lease.Renewed, lease.lease = short.Display(), st.AuthenticatedAs, st.AcquireTime, st.LastRenewed(), st
		liveHolder = st.Holder.Display()
		lease.Reason = st.Describe(now)
		switch {
		case st.Kept != "":
			// An upgrade that failed or timed out kept it so that no new
			// upgrade starts before someone has looked: --all leaves it.
			lease.State = MarkerKept
			lease.Blocks = notRenewedBlocks
		case st.Expired(now):
			lease.State = MarkerStale
			lease.Blocks = notRenewedBlocks
		default:
			lease.State = MarkerLive
			liveLock = st.HolderIdentity != env.Holder.String()
		}
	} else if st != nil {
		lease.Reason = "a released lease with no holder"
	}
	out = append(out, lease)
	liveReason := "a console holds a live upgrade lock (" + liveHolder + "): an upgrade is being driven"

	// EKS-A paused annotation (and a rollback record that goes with it).
	cluster, err := env.readCluster(ctx)
	if err != nil {
		return nil, err
	}
	if mgr := managedBy(cluster, env.Cluster); mgr != "" {
		out[0].Blocks = workloadLeaseBlocks(out[0].State, env.Cluster, mgr)
	}
	// The EKS-A CLI's claim. Nothing says whether the CLI that set it still
	// runs (it holds no lease), so it is never called stale: clearing it is
	// the operator's call, with --force.
	cli := annotationMarker(MarkerManagedByCLI, cluster, env.eksaCluster(), model.AnnotationManagedByCLI, ref("Cluster", env.clusterNS(), env.Cluster),
		"the EKS-A controller: it takes no action while the EKS-A CLI drives an operation")
	cli.confirm = env.Cluster
	cliRunning := cli.State != MarkerNotSet && cli.Value == "true"
	switch {
	case cli.State == MarkerNotSet:
	case !cliRunning:
		cli.Reason = fmt.Sprintf("set to %q: the EKS-A controller acts on it only when it is \"true\"; a leftover", cli.Value)
	default:
		cli.State, cli.Reason = MarkerLive, "set by the EKS-A CLI (eksctl anywhere) while it drives an operation; whether that run is still going cannot be told from the cluster: clear it (--force) only when no eksctl anywhere runs against this cluster"
	}
	out = append(out, cli)

	paused := annotationMarker(MarkerPaused, cluster, env.eksaCluster(), model.AnnotationEKSAPaused, ref("Cluster", env.clusterNS(), env.Cluster),
		"EKS-A reconcile of the Cluster: spec changes (an upgrade) are not acted on")
	paused.confirm = env.Cluster
	var rollbackRunning string // why, when an etcd rollback is not finished
	if paused.State != MarkerNotSet {
		rec, _ := readRollbackRecord(cluster, env)
		if rec != nil && rec.Phase == "running" {
			rollbackRunning = fmt.Sprintf("an etcd rollback started by %s at %s is not finished: it clears this marker at its end; run `etcd rollback` again to finish it", rec.By, rec.StartedAt.Format(time.RFC3339))
		}
		if v, ok := cluster.GetAnnotations()[AnnotationEtcdRollback]; ok {
			paused.extra = map[string]string{AnnotationEtcdRollback: v}
		}
		switch {
		case rec != nil && rec.Phase == "running":
			paused.State, paused.Reason = MarkerLive, fmt.Sprintf("an etcd rollback started by %s at %s is not finished; run `etcd rollback` again to finish it", rec.By, rec.StartedAt.Format(time.RFC3339))
		case rec != nil:
			paused.State, paused.Reason = MarkerKept, fmt.Sprintf("kept by the etcd rollback of %s until the cause of the failed etcd member is fixed", rec.StartedAt.Format(time.RFC3339))
		case liveLock:
			paused.State, paused.Reason = MarkerLive, liveReason
		case cliRunning:
			paused.State, paused.Reason = MarkerLive, "the EKS-A CLI pauses the controller while it drives an operation, and "+model.AnnotationManagedByCLI+" is set (see managed-by-cli)"
		case paused.SetByOther():
			// A pause an operator made on purpose (kubectl annotate) reads
			// the same to the console as one an upgrade left: say whose
			// it is, rather than "a leftover".
			paused.Reason = fmt.Sprintf("set by %s, with no console holding a live upgrade lock, no rollback recorded and no claim of the EKS-A CLI: a leftover of an interrupted upgrade, or a pause made on purpose; ask whoever set it before clearing it", paused.Holder)
		default:
			paused.Reason = "no console holds a live upgrade lock, no rollback is recorded and the EKS-A CLI claims nothing: a leftover of an interrupted upgrade"
		}
		if og, found, _ := unstructured.NestedInt64(cluster.Object, "status", "observedGeneration"); found && og < cluster.GetGeneration() {
			// The spec was changed while paused (kubectl apply, GitOps):
			// resumed, EKS-A starts that change at once, with none of the
			// checks a plan makes.
			paused.pending = fmt.Sprintf("the Cluster's spec (generation %d) was changed since EKS-A last reconciled it (generation %d): clearing paused makes EKS-A start that change at once, with no preflight check; see what it changes first (`upgrade-console plan %s -f <that spec>`)",
				cluster.GetGeneration(), og, env.clusterFlags())
			if paused.State == MarkerStale {
				paused.Reason += "; " + paused.pending
			}
		}
	}
	out = append(out, paused)

	// CAPI paused on the KCP.
	etcdRes := env.res(upgrade.GVREtcdadmCluster, env.systemNS())
	etcd, err := getOpt(ctx, etcdRes, env.etcdName())
	if err != nil {
		return nil, fmt.Errorf("read EtcdadmCluster %s/%s: %w", env.systemNS(), env.etcdName(), err)
	}
	etcdRolling := false
	var etcdSt etcdStatus
	if etcd != nil {
		etcdSt = readEtcdStatus(etcd)
		etcdRolling = !etcdSt.settled()
	}
	kcpRes, err := env.capi(upgrade.GVRKCP, env.systemNS())
	if err != nil {
		return nil, err
	}
	kcp, err := getOpt(ctx, kcpRes, env.Cluster)
	if err != nil {
		return nil, fmt.Errorf("read KubeadmControlPlane %s/%s: %w", env.systemNS(), env.Cluster, err)
	}
	if kcp != nil {
		m := annotationMarker(MarkerKCPPaused, kcp, kcpRes, model.AnnotationCAPIPaused, ref("KubeadmControlPlane", env.systemNS(), env.Cluster),
			"the control plane rollout (CAPI does not reconcile a paused KubeadmControlPlane)")
		m.confirm = env.Cluster
		if m.State != MarkerNotSet {
			switch {
			case rollbackRunning != "":
				m.State, m.Reason = MarkerLive, rollbackRunning
			case etcd != nil && etcd.GetAnnotations()[model.AnnotationEtcdUpgrading] != "" && etcdRolling:
				m.State, m.Reason = MarkerLive, "EKS-A pauses the control plane while etcd rolls, and etcd is rolling ("+etcdSt.String()+")"
			case liveLock:
				m.State, m.Reason = MarkerLive, liveReason
			case paused.State == MarkerNotSet && !m.Since.IsZero() && env.now().Sub(m.Since) < kcpPauseGrace:
				// EKS-A pauses the KCP, then marks etcd upgrading: in
				// between, its pause looks like a leftover.
				m.State, m.Reason = MarkerLive, fmt.Sprintf("paused %s ago while EKS-A reconciles: EKS-A pauses the control plane before it marks etcd upgrading (a leftover only if it stays %s with etcd not rolling)",
					ago(env.now(), m.Since), kcpPauseGrace)
			default:
				m.Reason = "etcd is not rolling and no console holds a live upgrade lock: a leftover"
			}
		}
		out = append(out, m)
	}

	// etcdadm's upgrading annotation.
	if etcd != nil {
		m := annotationMarker(MarkerEtcdUpgrading, etcd, etcdRes, model.AnnotationEtcdUpgrading, ref("EtcdadmCluster", env.systemNS(), env.etcdName()),
			"the control plane (the KCP waits while etcd is marked upgrading) and the next etcd change")
		m.confirm = env.etcdName()
		if m.State != MarkerNotSet {
			switch {
			case rollbackRunning != "":
				m.State, m.Reason = MarkerLive, rollbackRunning
			case etcdRolling:
				m.State, m.Reason = MarkerLive, "etcd is rolling: "+etcdSt.String()
			case liveLock:
				m.State, m.Reason = MarkerLive, liveReason
			default:
				m.Reason = "etcd is ready on an observed generation (" + etcdSt.String() + "): the etcdadm controller should have removed it"
			}
		}
		out = append(out, m)
	}

	// Node labels: the Nodes of this API server are the management
	// cluster's own. A Cluster another one manages has its Nodes on its
	// own API server: the management cluster's were listed, and cleared,
	// as its markers.
	key := o.nodeLabel()
	if managedBy(cluster, env.Cluster) != "" {
		return out, nil
	}
	nodes, err := env.Client.Dynamic.Resource(nodesGVR).List(ctx, metav1.ListOptions{LabelSelector: key})
	if apierrors.IsForbidden(err) {
		// Nodes are cluster-wide: an identity with every right in the
		// cluster's namespaces (enough for an upgrade, with nodes-ready
		// skipped) could not see, nor clear, its own kept lease.
		out = append(out, Marker{ID: MarkerNodeLabel, Object: "Nodes labelled " + key, Key: key, State: MarkerUnknown,
			Blocks: "upgrades, if a node is labelled (kubeone-style fail-safe)",
			Reason: fmt.Sprintf("cannot tell whether a node is labelled: %v (fix: `kubectl%s auth can-i list nodes` says whether the identity may; a ClusterRole with {apiGroups: [\"\"], resources: [nodes], verbs: [list, patch]} and a ClusterRoleBinding grant it)", err, env.Conn)})
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list Nodes labelled %s: %w", key, err)
	}
	sort.Slice(nodes.Items, func(i, j int) bool { return nodes.Items[i].GetName() < nodes.Items[j].GetName() })
	var upgrading map[string]string
	var unread error // NodeUpgrades the identity may not read
	if len(nodes.Items) > 0 {
		switch upgrading, err = nodesUpgradingInPlace(ctx, env); {
		case apierrors.IsForbidden(err):
			// As for Nodes: the labels are unknown, the other markers
			// listed and cleared as before.
			unread = err
		case err != nil:
			return nil, err
		}
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		w := fieldWriter(n, "labels", key)
		m := Marker{
			ID: MarkerNodeLabel + "/" + n.GetName(), Object: ref("Node", "", n.GetName()),
			Key: key, Value: n.GetLabels()[key], Holder: w.Manager, Since: w.Time,
			State: MarkerStale, Blocks: "upgrades (kubeone-style fail-safe: a node left marked mid-upgrade)",
			Reason: "no console holds a live upgrade lock: a leftover of an interrupted node upgrade",
			res:    env.Client.Dynamic.Resource(nodesGVR), name: n.GetName(), field: "labels", confirm: n.GetName(),
		}
		switch nu, ok := upgrading[n.GetName()]; {
		case ok:
			// The in-place upgrade of this very node is under way,
			// whoever started it: cleared, the node is open to a
			// second upgrade mid-step.
			m.State, m.Reason = MarkerLive, "NodeUpgrade "+nu+" upgrades this node in place and has not completed"
		case liveLock:
			m.State, m.Reason = MarkerLive, liveReason
		case unread != nil:
			m.State = MarkerUnknown
			m.Reason = fmt.Sprintf("cannot tell whether the node is mid in-place upgrade: %v (fix: `kubectl%s auth can-i list nodeupgrades.anywhere.eks.amazonaws.com -n %s` says whether the identity may; a Role in %s with {apiGroups: [anywhere.eks.amazonaws.com], resources: [nodeupgrades], verbs: [list]} grants it)",
				unread, env.Conn, env.systemNS(), env.systemNS())
		}
		out = append(out, m)
	}
	return out, nil
}

// nodesUpgradingInPlace maps each node an in-place upgrade has not completed
// on to its NodeUpgrade's name: a node label is the upgrade's own marker
// while one is, console lock or not. No NodeUpgrade kind served (no
// in-place upgrades on the cluster) is none.
func nodesUpgradingInPlace(ctx context.Context, env *Env) (map[string]string, error) {
	sys := env.systemNS()
	nus, err := env.res(gvrNodeUpgrade, sys).List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsNotFound(err), meta.IsNoMatchError(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("list NodeUpgrades in %s (whether a labelled node is mid-upgrade): %w", sys, err)
	}
	var machines dynamic.ResourceInterface
	out := map[string]string{}
	for i := range nus.Items {
		nu := &nus.Items[i]
		if done, _, _ := unstructured.NestedBool(nu.Object, "status", "completed"); done || nu.GetDeletionTimestamp() != nil {
			continue
		}
		mname, _, _ := unstructured.NestedString(nu.Object, "spec", "machine", "name")
		if machines == nil {
			if machines, err = env.capi(gvrMachine, sys); err != nil {
				return nil, err
			}
		}
		m, err := getOpt(ctx, machines, mname)
		if err != nil {
			return nil, fmt.Errorf("read Machine %s/%s: %w", sys, mname, err)
		}
		out[nodeOf(m, mname)] = nu.GetName()
	}
	return out, nil
}

// SetByOther says whether a person or a tool other than a console may have
// set the marker on purpose: a pause by any field manager but a console's
// (the controllers do not pause the EKS-A Cluster), or any marker written
// with kubectl (kubectl-annotate, kubectl-label, …). What is stale to the
// console may not be to them. The markers the controllers set mid-upgrade
// (kcp-paused, etcd-upgrading) are not.
func (m Marker) SetByOther() bool {
	if m.ID == MarkerLease || m.Holder == "" || strings.HasPrefix(m.Holder, "upgrade-console") {
		return false
	}
	return m.ID == MarkerPaused || strings.HasPrefix(m.Holder, "kubectl")
}

func annotationMarker(id string, u *unstructured.Unstructured, res dynamic.ResourceInterface, key, objRef, blocks string) Marker {
	m := Marker{ID: id, Object: objRef, Key: key, State: MarkerNotSet, Blocks: blocks,
		res: res, name: u.GetName(), field: "annotations"}
	v, ok := u.GetAnnotations()[key]
	if !ok {
		return m
	}
	w := fieldWriter(u, "annotations", key)
	m.Value, m.Holder, m.Since, m.State = v, w.Manager, w.Time, MarkerStale
	return m
}

// kcpPauseGrace is how long a KCP pause written while EKS-A reconciles is
// taken for EKS-A's own, on its way to marking etcd upgrading.
const kcpPauseGrace = 2 * time.Minute

// ClearOptions select the markers to clear.
type ClearOptions struct {
	// IDs are marker ids: lease, paused, kcp-paused, etcd-upgrading,
	// node-label (every labelled node) or node-label/NODE.
	IDs []string
	// All clears every stale marker.
	All bool
	// Force clears live markers named in IDs (recorded in the audit log).
	Force bool
	MarkerOptions
}

// PlanClear plans the clearing of markers. It returns the markers read (for
// display) with the plan; a plan with no steps means there is nothing to clear.
func PlanClear(ctx context.Context, env *Env, o ClearOptions) (*Plan, []Marker, error) {
	if len(o.IDs) == 0 && !o.All {
		return nil, nil, &model.InputError{Source: "lock clear", Problem: "no marker named",
			Fix: "name one of " + strings.Join(MarkerIDs, ", ") + " (node-label/NODE for one node), or use --all for every stale marker"}
	}
	markers, err := ListMarkers(ctx, env, o.MarkerOptions)
	if err != nil {
		return nil, nil, err
	}
	if err := env.ownNodeLabels(ctx, o); err != nil {
		return nil, markers, err
	}
	byID := map[string]Marker{}
	for _, m := range markers {
		byID[m.ID] = m
	}
	var chosen []Marker
	seen := map[string]bool{}
	pick := func(m Marker) {
		if !seen[m.ID] {
			seen[m.ID] = true
			chosen = append(chosen, m)
		}
	}
	var pre []Precondition
	var notes []string
	forced := false
	for _, id := range o.IDs {
		var ms []Marker
		switch {
		case id == MarkerNodeLabel:
			for _, m := range markers {
				if strings.HasPrefix(m.ID, MarkerNodeLabel+"/") {
					ms = append(ms, m)
				}
			}
		case strings.HasPrefix(id, MarkerNodeLabel+"/"):
			m, ok := byID[id]
			if !ok {
				// Not labelled: a step that finds nothing to do keeps a
				// rerun idempotent. A node that does not exist is a typo.
				node := strings.TrimPrefix(id, MarkerNodeLabel+"/")
				n, err := getOpt(ctx, env.Client.Dynamic.Resource(nodesGVR), node)
				if err != nil {
					return nil, markers, err
				}
				if n == nil {
					return nil, markers, &model.InputError{Source: "lock clear " + id, Problem: "no Node named " + node,
						Fix: "see `upgrade-console lock status " + env.clusterFlags() + "` for the labelled nodes"}
				}
				m = Marker{ID: id, Object: ref("Node", "", node), Key: o.nodeLabel(), State: MarkerNotSet,
					res: env.Client.Dynamic.Resource(nodesGVR), name: node, field: "labels", confirm: node}
			}
			ms = append(ms, m)
		default:
			m, ok := byID[id]
			if !ok {
				if id == MarkerKCPPaused || id == MarkerEtcdUpgrading {
					return nil, markers, &model.InputError{Source: "lock clear " + id, Problem: "the cluster has no object carrying this marker",
						Fix: "see `upgrade-console lock status " + env.clusterFlags() + "`"}
				}
				return nil, markers, &model.InputError{Source: "lock clear " + id, Problem: "unknown marker",
					Fix: "use one of " + strings.Join(MarkerIDs, ", ") + " or node-label/NODE"}
			}
			ms = append(ms, m)
		}
		for _, m := range ms {
			if m.State == MarkerKept && m.ID == MarkerLease {
				notes = append(notes, fmt.Sprintf("%s is kept on purpose (%s): removing it lets a new upgrade start; check the cluster first", m.ID, m.Reason))
			} else if m.State == MarkerKept {
				notes = append(notes, fmt.Sprintf("%s is kept on purpose (%s): removing it resumes EKS-A reconcile, which applies the Cluster's spec again (the same etcd rollout, unless the spec was changed); fix the cause first", m.ID, m.Reason))
			}
			if m.pending != "" {
				notes = append(notes, m.pending)
			}
			// Unknown is not known not to be live: a node label whose
			// node may be mid in-place upgrade (NodeUpgrades not
			// readable) was cleared by name with no check.
			if m.State == MarkerLive || m.State == MarkerUnknown && m.res != nil {
				p := Precondition{Name: "not-live:" + m.ID, Description: m.ID + " is not held by something running", Detail: m.Reason}
				if o.Force {
					p.OK, forced = true, true
					p.Detail += " (cleared anyway: --force, recorded in the audit log)"
				} else {
					p.Detail += "; clear it anyway with --force (recorded)"
				}
				pre = append(pre, p)
			}
			pick(m)
		}
	}
	if o.All {
		for _, m := range markers {
			switch m.State {
			case MarkerStale:
				if m.pending != "" && !seen[m.ID] {
					notes = append(notes, m.pending)
				}
				pick(m)
			case MarkerKept:
				if !seen[m.ID] {
					// A kept lease is released by the console that
					// follows the upgrade when it completes (after an
					// etcd rollback, once paused is cleared): told only
					// to clear it, the operator cleared it for nothing.
					then := ""
					if m.ID == MarkerLease {
						then = "a console still following the upgrade releases it when the upgrade completes; otherwise, "
					}
					notes = append(notes, fmt.Sprintf("%s left as it is (%s): %s; %sonce the cluster is checked, clear it by name: `upgrade-console lock clear %s %s`",
						m.ID, m.State, m.Reason, then, m.ID, env.clusterFlags()))
				}
			case MarkerLive:
				if !seen[m.ID] {
					notes = append(notes, fmt.Sprintf("%s left as it is (%s): %s", m.ID, m.State, m.Reason))
				}
			}
		}
	}
	refused := ref("Cluster", env.clusterNS(), env.Cluster)
	if len(chosen) == 1 {
		refused = chosen[0].Object
	}
	if err := refuseUnless(ActionLockClear, env.Cluster, refused, pre); err != nil {
		return nil, markers, err
	}
	p := &Plan{
		Action:        ActionLockClear,
		Cluster:       env.Cluster,
		Preconditions: pre,
		Notes:         notes,
		Forced:        forced,
		Confirm:       env.Cluster,
		ConfirmObject: ref("Cluster", env.clusterNS(), env.Cluster),
	}
	for _, m := range chosen {
		p.Steps = append(p.Steps, clearStep(env, m, o))
	}
	if len(chosen) == 1 {
		p.Confirm, p.ConfirmObject = chosen[0].confirm, chosen[0].Object
		if p.Confirm == "" {
			p.Confirm = env.Cluster
		}
	}
	ids := make([]string, 0, len(chosen))
	for _, m := range chosen {
		ids = append(ids, m.ID)
	}
	p.Title = fmt.Sprintf("Clear upgrade lock markers of %s: %s", env.Cluster, strings.Join(ids, ", "))
	resumes := false
	for _, m := range chosen {
		resumes = resumes || (m.ID == MarkerPaused && m.State != MarkerNotSet)
	}
	p.closing = func(ctx context.Context) []string { return clearClosing(ctx, env, o.MarkerOptions, resumes) }
	return p, markers, nil
}

func clearStep(env *Env, m Marker, o ClearOptions) Step {
	if m.ID == MarkerLease {
		return leaseClearStep(env, m)
	}
	field := m.field
	what := "annotation"
	if field == "labels" {
		what = "label"
	}
	s := Step{
		Name:   "clear-" + m.ID,
		Title:  fmt.Sprintf("Clear %s (%s %s)", m.ID, what, m.Key),
		Object: m.Object,
		Change: fmt.Sprintf("remove %s %s (if it is still %q)", what, m.Key, m.Value),
		Before: map[string]any{m.Key: nilIfEmpty(m.Value)},
		After:  map[string]any{m.Key: nil},
	}
	if m.State == MarkerNotSet {
		// Named although not set: the step finds nothing to do, which
		// keeps a rerun idempotent; its plan says so.
		s.Change = fmt.Sprintf("none: %s %s is not set", what, m.Key)
	}
	for k, v := range m.extra {
		s.Change += fmt.Sprintf(" and %s %s", what, k)
		s.Before.(map[string]any)[k] = v
		s.After.(map[string]any)[k] = nil
	}
	done := func(ctx context.Context) (bool, string, error) {
		u, err := getOpt(ctx, m.res, m.name)
		if err != nil {
			return false, "", err
		}
		if u == nil {
			return true, m.Object + " no longer exists", nil
		}
		var cur map[string]string
		if field == "labels" {
			cur = u.GetLabels()
		} else {
			cur = u.GetAnnotations()
		}
		if _, ok := cur[m.Key]; ok {
			return false, "", nil
		}
		for k := range m.extra {
			if _, ok := cur[k]; ok {
				return false, "", nil
			}
		}
		return true, what + " " + m.Key + " is not set", nil
	}
	s.done = done
	s.do = func(ctx context.Context, dry bool) (string, error) {
		forcedNow, err := turnedLive(ctx, env, m, o)
		if err != nil {
			return "", err
		}
		base := "/metadata/" + field + "/"
		var ops []patchOp
		u, err := m.res.Get(ctx, m.name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		cur := u.GetAnnotations()
		if field == "labels" {
			cur = u.GetLabels()
		}
		if _, ok := cur[m.Key]; ok {
			ops = append(ops, patchOp{Op: "test", Path: base + pointerEscape(m.Key), Value: m.Value},
				patchOp{Op: "remove", Path: base + pointerEscape(m.Key)})
		}
		for k, v := range m.extra {
			if _, ok := cur[k]; ok {
				ops = append(ops, patchOp{Op: "test", Path: base + pointerEscape(k), Value: v},
					patchOp{Op: "remove", Path: base + pointerEscape(k)})
			}
		}
		if len(ops) == 0 {
			return "nothing left to remove", errNoWrite
		}
		_, err = m.res.Patch(ctx, m.name, types.JSONPatchType, jsonPatch(ops...),
			metav1.PatchOptions{FieldManager: upgrade.ManagerName, DryRun: dryRunOpt(dry)})
		if err != nil && !dry {
			// Another run (a second `lock clear`) removed it between
			// the read and the write: what this step is for holds.
			if ok, detail, derr := done(ctx); derr == nil && ok {
				if st := apierrors.APIStatus(nil); !errors.As(err, &st) {
					// No answer at all (a timeout, a connection cut):
					// the write most likely landed, and was this one.
					// An answer (its test refused, the object gone) says
					// it did not.
					return what + " " + m.Key + " removed (the API server's answer was lost: " + err.Error() + "; read again, it is gone)" + forcedNow, nil
				}
				return detail + " (removed meanwhile by another writer)", errNoWrite
			}
		}
		return what + " " + m.Key + " removed" + forcedNow, guarded(ctx, err, m.Object, fmt.Sprintf("%s %s is no longer %q", what, m.Key, m.Value),
			metaKeyIs(m.res, m.name, field, m.Key, m.Value))
	}
	return s
}

// turnedLive reads the markers again just before a clear: one stale (or
// kept) when the plan was made may have turned live while the confirmation
// waited (the EKS-A CLI starting an operation sets paused and managed-by-cli;
// another console's etcd rollback pauses EKS-A), and its value, which the
// patch tests, is the same. Refused unless --force, and said when forced; one
// live at the plan was forced there.
func turnedLive(ctx context.Context, env *Env, m Marker, o ClearOptions) (forced string, err error) {
	if m.State == MarkerLive || m.State == MarkerNotSet {
		return "", nil
	}
	reason, err := liveReasonNow(ctx, env, m, o)
	switch {
	case err != nil || reason == "":
		return "", err
	case o.Force:
		return " (live since the plan: " + reason + "; cleared under --force)", nil
	}
	return "", &ConcurrentChangeError{Object: m.Object, What: m.ID + " is live now: " + reason + "; clear it anyway with --force (recorded)"}
}

// liveReasonNow is why marker m is live now ("" when it is not).
func liveReasonNow(ctx context.Context, env *Env, m Marker, o ClearOptions) (string, error) {
	if strings.HasPrefix(m.ID, MarkerNodeLabel+"/") {
		// A node label turns live with a live lock alone: read it, not
		// every marker (a LIST of the labelled nodes per node, at fleet
		// scale, on the API server of an incident).
		st, err := upgrade.ReadLock(ctx, env.Client.Kube, env.systemNS(), env.Cluster)
		if err != nil || !st.Held() || st.Kept != "" || st.Expired(env.now()) || st.HolderIdentity == env.Holder.String() {
			return "", err
		}
		return "a console holds a live upgrade lock (" + st.Holder.Display() + "): an upgrade is being driven", nil
	}
	ms, err := ListMarkers(ctx, env, o.MarkerOptions)
	if err != nil {
		return "", err
	}
	for _, n := range ms {
		if n.ID == m.ID && n.State == MarkerLive {
			return n.Reason, nil
		}
	}
	return "", nil
}

func leaseClearStep(env *Env, m Marker) Step {
	leases := env.Client.Kube.CoordinationV1().Leases(env.systemNS())
	name := upgrade.LockName(env.Cluster)
	s := Step{
		Name:   "clear-lease",
		Title:  "Delete the upgrade lock Lease",
		Object: m.Object,
		Change: "delete (only if not renewed or taken since it was read)",
	}
	if m.lease != nil {
		// Whose lease it is, as lock status said: the clear is typed
		// for a cluster, and a live one's holder is named in its
		// precondition only.
		s.Change += "; held by " + m.lease.Holder.Display()
		before := map[string]any{"holder": m.lease.HolderIdentity, "renewTime": m.lease.RenewTime, "uid": m.lease.UID, "resourceVersion": m.lease.ResourceVersion}
		if m.lease.AuthenticatedAs != "" {
			before["authenticatedAs"] = m.lease.AuthenticatedAs
		}
		s.Before = before
		s.After = map[string]any{"lease": nil}
	} else if m.State == MarkerNotSet {
		// A rerun: "delete (only if not renewed …)" planned the delete
		// of a Lease that is not there; clear paused says "none".
		s.Change = "none: there is no upgrade lock Lease"
	}
	s.done = func(ctx context.Context) (bool, string, error) {
		l, err := leases.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, "no upgrade lock Lease", nil
		}
		if err != nil {
			return false, "", err
		}
		if m.lease == nil || string(l.UID) != m.lease.UID {
			return true, "the lease read at plan time is gone (" + m.Object + " is now another lease, not touched)", nil
		}
		return false, "", nil
	}
	s.do = func(ctx context.Context, dry bool) (string, error) {
		uid, rv := types.UID(m.lease.UID), m.lease.ResourceVersion
		if m.State == MarkerLive {
			// Forced on a live lease: its holder renews it every 20 s, and
			// the typed confirmation takes longer than that, so the
			// resourceVersion read at plan time never held. What must
			// not change is whose lease it is.
			l, err := leases.Get(ctx, name, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				return "already gone", errNoWrite
			case err != nil:
				return "", err
			case string(l.UID) != m.lease.UID:
				return "", &ConcurrentChangeError{Object: m.Object, What: "it is another lease now"}
			case ptr.Deref(l.Spec.HolderIdentity, "") != m.lease.HolderIdentity:
				return "", &ConcurrentChangeError{Object: m.Object, What: "taken by " + model.Printable(ptr.Deref(l.Spec.HolderIdentity, ""))}
			}
			rv = l.ResourceVersion
		}
		err := leases.Delete(ctx, name, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}, DryRun: dryRunOpt(dry),
		})
		if apierrors.IsNotFound(err) {
			return "already gone", errNoWrite
		}
		return "lease deleted", guarded(ctx, err, m.Object, "the lease was renewed or taken: its holder is alive", nil)
	}
	return s
}

func clearClosing(ctx context.Context, env *Env, o MarkerOptions, resumed bool) []string {
	ms, err := ListMarkers(ctx, env, o)
	if err != nil {
		return []string{"Could not read the markers back: " + err.Error()}
	}
	var out []string
	pausedLeft := false
	var lease *Marker
	for i, m := range ms {
		pausedLeft = pausedLeft || (m.ID == MarkerPaused && m.State != MarkerNotSet)
		if m.ID == MarkerLease {
			lease = &ms[i]
		}
	}
	if resumed && !pausedLeft {
		// EKS-A acts on the spec at once (the etcd rollout a rollback
		// undid starts again), and "Still set: kcp-paused (live)" did not
		// say that an upgrade was under way that no console follows.
		if cluster, err := env.readCluster(ctx); err == nil {
			if st := specNotReached(cluster, env.Conn); st != nil {
				out = append(out, fmt.Sprintf("EKS-A reconcile of %s is resumed and works on its spec now (%s)", env.Cluster, st.Message)+
					resumedFollower(env, lease))
			}
		}
	}
	return append(out, markersLeft(ctx, env, ms, len(out) > 0)...)
}

// resumedFollower ends clearClosing's resumed line with who follows the
// upgrade, by its lock: "with no console following it and no upgrade lock"
// was said whatever the lock, to a dashboard that held it kept and went on
// to release it at completion, two lines above "Still set: lease (kept)".
func resumedFollower(env *Env, lease *Marker) string {
	watch := "`upgrade-console watch " + env.clusterFlags() + "`"
	switch {
	case lease == nil || lease.State == MarkerNotSet:
		return ", and no console holds its upgrade lock: follow it with " + watch + "."
	case lease.lease != nil && lease.lease.HolderIdentity == env.Holder.String():
		// The dashboard that started the upgrade, whose R menu ran this.
		return "; this console holds its upgrade lock and follows it: it releases the lock when the upgrade completes."
	case lease.State == MarkerLive:
		return fmt.Sprintf("; the console holding its upgrade lock (%s) follows it. To follow it here too: %s.", lease.Holder, watch)
	case lease.State == MarkerKept:
		return fmt.Sprintf("; its upgrade lock is still set (kept, %s): a console still following the upgrade releases it when the upgrade completes. To follow it: %s.",
			orUnknown(lease.Holder), watch)
	}
	// Stale, or not readable: nothing said to renew it follows the
	// upgrade.
	return fmt.Sprintf("; its upgrade lock is still set (%s, %s) and no console renews it. To follow the upgrade: %s.",
		lease.State, orUnknown(lease.Holder), watch)
}

// markersLeft is what clearClosing says of the markers left; underWay: it
// already said that an upgrade is under way.
func markersLeft(ctx context.Context, env *Env, ms []Marker, underWay bool) []string {
	var left, unread []string
	controllers := true
	for _, m := range ms {
		switch m.State {
		case MarkerNotSet:
		case MarkerUnknown:
			unread = append(unread, m.ID)
		default:
			left = append(left, fmt.Sprintf("%s (%s)", m.ID, m.State))
			// Those the controllers set for a rollout (the KCP paused
			// while etcd rolls, etcd marked upgrading), and live.
			controllers = controllers && m.State == MarkerLive && (m.ID == MarkerKCPPaused || m.ID == MarkerEtcdUpgrading)
		}
	}
	if len(unread) > 0 {
		out := []string{"Not readable with this identity: " + strings.Join(unread, ", ") + " (see `upgrade-console lock status " + env.clusterFlags() + "`)."}
		if len(left) > 0 {
			out = append(out, "Still set: "+strings.Join(left, ", ")+" (see `upgrade-console lock status "+env.clusterFlags()+"`).")
		}
		return out
	}
	if len(left) == 0 {
		if underWay {
			return []string{"No upgrade lock or marker remains on " + env.Cluster + "."}
		}
		// Nothing is held, which is not the same as nothing going on: a
		// lock cleared while EKS-A still reconciles leaves an upgrade under
		// way that no console follows.
		if cluster, err := env.readCluster(ctx); err == nil {
			if st := specNotReached(cluster, env.Conn); st != nil {
				return []string{fmt.Sprintf("No upgrade lock or marker remains on %s, but the cluster has not reached its spec (%s): an upgrade is under way or failed; %s, before a new one starts.",
					env.Cluster, st.Message, st.Next)}
			}
		}
		return []string{"No upgrade lock or marker remains on " + env.Cluster + ": a new upgrade can start."}
	}
	if underWay && controllers {
		// The controllers' own, for the rollout the resume started
		// (EKS-A pauses the control plane while etcd rolls): "Still
		// set" alone read as more to clear.
		return []string{"Set by the controllers for the rollout now under way, as they should be: " + strings.Join(left, ", ") + " (see `upgrade-console lock status " + env.clusterFlags() + "`)."}
	}
	return []string{"Still set: " + strings.Join(left, ", ") + " (see `upgrade-console lock status " + env.clusterFlags() + "`)."}
}

// specNotReached is why the EKS-A Cluster has not reached its spec, by the
// rule the plan and the dashboard judge it by (model.ClusterSpecStatus);
// nil when it has, or when EKS-A never wrote its status (nothing to judge).
func specNotReached(cluster *unstructured.Unstructured, conn model.ConnFlags) *model.SpecStatus {
	if _, written, _ := unstructured.NestedInt64(cluster.Object, "status", "observedGeneration"); !written {
		return nil
	}
	if st := model.ClusterSpecStatus(watchers.EKSACluster(cluster.Object), conn); st.NotReached() {
		return st
	}
	return nil
}

// managedBy is the cluster that manages cluster (named self), "" when it
// manages itself.
func managedBy(cluster *unstructured.Unstructured, self string) string {
	mgr, _, _ := unstructured.NestedString(cluster.Object, "spec", "managementCluster", "name")
	if mgr == self {
		return ""
	}
	return mgr
}

// ownNodeLabels refuses node-label markers named for a Cluster another one
// manages: its Nodes, and their labels, are on its own API server, and the
// Nodes here are the management cluster's. node-label/NODE read this API
// server's Node and cleared its label, as w1's marker, planned as "not
// set" (D7).
func (e *Env) ownNodeLabels(ctx context.Context, o ClearOptions) error {
	var named []string
	for _, id := range o.IDs {
		if id == MarkerNodeLabel || strings.HasPrefix(id, MarkerNodeLabel+"/") {
			named = append(named, id)
		}
	}
	if len(named) == 0 {
		return nil
	}
	cluster, err := e.readCluster(ctx)
	if err != nil {
		return err
	}
	mgr := managedBy(cluster, e.Cluster)
	if mgr == "" {
		return nil
	}
	node := "NODE"
	if n, ok := strings.CutPrefix(named[0], MarkerNodeLabel+"/"); ok {
		node = n
	}
	return &model.InputError{Source: "lock clear " + strings.Join(named, " "),
		Problem: fmt.Sprintf("%s is managed by %s: its Nodes, and their %s labels, are on its own API server, not this one, whose Nodes are the management cluster's", ref("Cluster", e.clusterNS(), e.Cluster), mgr, o.nodeLabel()),
		Fix:     fmt.Sprintf("clear the label on that cluster: `kubectl --kubeconfig <%s's kubeconfig> label node %s %s-`", e.Cluster, node, o.nodeLabel())}
}
