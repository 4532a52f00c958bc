package watchers

import (
	"maps"
	"strings"

	"github.com/upgrade-console/upgrade-console/model"
)

// stores holds the translated objects of every kind.
type stores struct {
	clusters     *store[model.EKSACluster]
	capi         *store[model.CAPICluster]
	kcp          *store[model.ControlPlane]
	etcd         *store[model.EtcdCluster]
	mds          *store[model.MachineDeployment]
	machines     *store[model.Machine]
	nodes        *store[model.Node]
	nodeUpgrades *store[model.NodeUpgrade]
	requests     *store[model.UpgradeRequest]
	events       *store[model.Event]
	locks        *store[model.Lock]
	pods         *store[model.UpgraderPod]

	// Filtered lists and what they were filtered from: NodeUpgrades and
	// upgrade requests of other clusters share the namespace and are dropped
	// by membership, recomputed only when either side changed.
	nuFrom, nuOut   model.List[model.NodeUpgrade]
	reqFrom, reqOut []model.UpgradeRequest
	machinesEpoch   uint64
	mdsEpoch        uint64
	// Whether the membership side was synced when each was filtered: a
	// list filtered while Machines were not (keep all) stayed so after
	// they synced, with another cluster's NodeUpgrade (a failed one read
	// as this upgrade failing) for as long as nothing else changed.
	nuVisible, reqVisible bool
	// Events of this cluster's objects, filtered from evFrom (see
	// eventOfCluster) with the MachineDeployments of mdsEpoch.
	evFrom, evOut   []model.Event
	evEpoch         uint64
	evMachinesEpoch uint64
	evVisible       bool
	// Whether Node events were dropped (nodesElsewhere) when evOut was
	// filtered.
	evNoNodes bool
	// managedElsewhere: the Cluster last read is managed by another.
	managedElsewhere bool
}

func byName[T any](name func(*T) string) func(a, b *T) bool {
	return func(a, b *T) bool { return name(a) < name(b) }
}

// roleOrder puts etcd machines first, then the control plane, then workers.
func roleOrder(r model.MachineRole) int {
	switch r {
	case model.RoleEtcd:
		return 0
	case model.RoleControlPlane:
		return 1
	default:
		return 2
	}
}

func newStores() *stores {
	return &stores{
		clusters: newStore(byName(func(c *model.EKSACluster) string { return c.Name })),
		capi:     newStore(byName(func(c *model.CAPICluster) string { return c.Name })),
		kcp:      newStore(byName(func(c *model.ControlPlane) string { return c.Name })),
		etcd:     newStore(byName(func(c *model.EtcdCluster) string { return c.Name })),
		mds:      newStore(byName(func(c *model.MachineDeployment) string { return c.Name })),
		machines: newStore(func(a, b *model.Machine) bool {
			if ra, rb := roleOrder(a.Role), roleOrder(b.Role); ra != rb {
				return ra < rb
			}
			return a.Name < b.Name
		}),
		nodes:        newStore(byName(func(n *model.Node) string { return n.Name })),
		nodeUpgrades: newStore(byName(func(n *model.NodeUpgrade) string { return n.Name })),
		requests: newStore(func(a, b *model.UpgradeRequest) bool {
			if a.Kind != b.Kind {
				return a.Kind < b.Kind
			}
			return a.Name < b.Name
		}),
		events: newStore(eventNewer),
		locks:  newStore(byName(func(l *model.Lock) string { return l.Name })),
		pods:   newStore(byName(func(p *model.UpgraderPod) string { return p.Name })),
	}
}

// drop forgets every object of a kind whose CRD went away.
func (st *stores) drop(k model.Kind) {
	switch k {
	case model.KindEKSACluster:
		st.clusters.removeIf(nil)
	case model.KindCAPICluster:
		st.capi.removeIf(nil)
	case model.KindKubeadmControlPlane:
		st.kcp.removeIf(nil)
	case model.KindEtcdadmCluster:
		st.etcd.removeIf(nil)
	case model.KindMachineDeployment:
		st.mds.removeIf(nil)
	case model.KindMachine:
		st.machines.removeIf(nil)
	case model.KindNodeUpgrade, model.KindNodeKubeadmUpgrade:
		st.nodeUpgrades.removeIf(func(key string) bool { return strings.HasPrefix(key, string(k)+"/") })
	case model.KindControlPlaneUpgrade, model.KindMachineDeploymentUpgrade:
		st.requests.removeIf(func(key string) bool { return strings.HasPrefix(key, string(k)+"/") })
	}
}

func key(namespace, name string) string { return namespace + "/" + name }

func same[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// snapshotLocked assembles a snapshot from the stores. It never translates:
// objects were translated when they arrived. w.mu must be held.
func (w *Watcher) snapshotLocked() *model.ClusterState {
	w.setConnLocked()
	w.version++
	o := &w.opts
	st := w.st
	s := &model.ClusterState{
		Version:         w.version,
		At:              o.Clock(),
		ClusterName:     o.ClusterName,
		Namespace:       o.ClusterNamespace,
		Context:         o.Context,
		Conn:            o.Conn,
		Connection:      w.conn,
		ConnectionSince: w.connSince,
		ConnectionErr:   w.connErr,
		Sources:         w.sourcesLocked(),
		Cluster:         st.clusters.get(key(o.ClusterNamespace, o.ClusterName)),
		CAPICluster:     st.capi.get(key(o.SystemNamespace, o.ClusterName)),
		ControlPlane:    st.kcp.get(key(o.SystemNamespace, o.ClusterName)),
		Etcd:            st.etcd.get(key(o.SystemNamespace, o.ClusterName+"-etcd")),
		Lock:            st.locks.get(key(o.SystemNamespace, model.LockName(o.ClusterName))),
	}
	s.MachineDeployments = st.mds.values()
	s.Machines = st.machines.list()
	// The Nodes are listed cluster-wide (they carry no cluster label):
	// they are this API server's, which are a workload cluster's
	// management cluster's. Published for it, they read as its nodes in
	// nodes-ready, the dashboard and the node-label markers; and its
	// upgrader pods run on its own API server, with its Nodes.
	if s.Cluster != nil {
		st.managedElsewhere = s.NodesElsewhere()
	}
	noNodes := nodesElsewhere(s, st.managedElsewhere)
	if !noNodes {
		s.Nodes = st.nodes.list()
		s.UpgraderPods = st.pods.values()
	}

	machinesVisible := s.Source(model.KindMachine).Synced
	nus := st.nodeUpgrades.list()
	if !nus.Same(st.nuFrom) || st.machines.epoch != st.machinesEpoch || machinesVisible != st.nuVisible {
		st.nuFrom, st.nuVisible = nus, machinesVisible
		// A NodeUpgrade names its Machine and carries no cluster label:
		// until the Machines are listed (never, to an identity that may
		// not list them) it cannot be told this cluster's from a
		// workload cluster's, whose failed step failed this upgrade.
		st.nuOut = filterList(nus, func(n *model.NodeUpgrade) bool {
			return machinesVisible && st.machines.get(key(n.Namespace, n.MachineName)) != nil
		})
	}
	s.NodeUpgrades = st.nuOut

	mdsVisible := s.Source(model.KindMachineDeployment).Synced
	reqs := st.requests.values()
	if !same(reqs, st.reqFrom) || st.mds.epoch != st.mdsEpoch || mdsVisible != st.reqVisible {
		st.reqFrom, st.reqVisible = reqs, mdsVisible
		st.reqOut = filter(reqs, func(r model.UpgradeRequest) bool {
			if r.Kind == model.KindControlPlaneUpgrade {
				return r.Target == o.ClusterName
			}
			return mdsVisible && st.mds.get(key(r.Namespace, r.Target)) != nil
		})
	}
	s.UpgradeRequests = st.reqOut
	st.machinesEpoch, st.mdsEpoch = st.machines.epoch, st.mds.epoch

	evs := st.events.values()
	if len(evs) > 2*o.MaxEvents {
		st.events.truncate(o.MaxEvents)
		evs = st.events.values()
	}
	if !same(evs, st.evFrom) || st.mds.epoch != st.evEpoch || st.machines.epoch != st.evMachinesEpoch || mdsVisible != st.evVisible || noNodes != st.evNoNodes {
		st.evFrom, st.evEpoch, st.evMachinesEpoch, st.evVisible, st.evNoNodes = evs, st.mds.epoch, st.machines.epoch, mdsVisible, noNodes
		mds := s.MachineDeployments
		// The Machines are watched by the cluster's label: one listed is
		// this cluster's, however it is named.
		listed := func(ns, name string) bool { return st.machines.get(key(ns, name)) != nil }
		st.evOut = filter(evs, func(e model.Event) bool {
			return !(noNodes && e.ObjectKind == "Node") && eventOfCluster(&e, o.ClusterName, mds, mdsVisible, listed)
		})
	}
	evs = st.evOut
	s.Events = evs[:min(len(evs), o.MaxEvents)]
	return s
}

// nodesElsewhere reports whether the Nodes of this API server must not be
// published as the cluster's: it is a workload cluster
// (model.ClusterState.NodesElsewhere), or was when last read (wasElsewhere:
// deleted while watched, its Nodes were never these), or the Cluster is not
// read yet and may turn out one. A Cluster this identity may not read, or
// that is not there, says nothing more later: the Nodes are published as
// before.
func nodesElsewhere(s *model.ClusterState, wasElsewhere bool) bool {
	if s.NodesElsewhere() {
		return true
	}
	if s.Cluster != nil {
		return false
	}
	src := s.Source(model.KindEKSACluster)
	return wasElsewhere || src.Installed && !src.Synced && src.Forbidden == ""
}

// eventOfCluster tells this cluster's objects from a workload cluster's
// whose name begins with this one's (cluster "mgmt-w1" managed by "mgmt",
// its CAPI objects in the same namespace): translateEvent keeps any name
// with the cluster's prefix, and a drain failure of mgmt-w1's machine read
// as mgmt's. EKS-A, CAPI and etcdadm name the objects after the cluster:
// the Cluster, the KubeadmControlPlane and its machines (<cluster>-xxxxx),
// the EtcdadmCluster <cluster>-etcd and its machines (<cluster>-etcd-xxxxx),
// the ControlPlaneUpgrade <cluster>-cp-upgrade, and, after a worker group's
// MachineDeployment (<cluster>-<group>), its MachineSets, machines and
// MachineDeploymentUpgrade; a NodeUpgrade after its machine. A Machine
// listed (by the cluster's label) is the cluster's whatever its name. Until
// the MachineDeployments are synced, a name with the cluster's prefix is kept.
func eventOfCluster(e *model.Event, cluster string, mds []model.MachineDeployment, mdsSynced bool, listed func(ns, name string) bool) bool {
	name := e.ObjectName
	if e.ObjectKind == "Node" {
		return true
	}
	if e.ObjectKind == "Machine" && listed != nil && listed(e.Namespace, name) {
		return true
	}
	if name == cluster {
		return true
	}
	rest, ok := strings.CutPrefix(name, cluster+"-")
	if !ok {
		return false
	}
	if !mdsSynced {
		return true
	}
	machine := func(rest string) bool {
		if generated(rest) {
			return true // the control plane's
		}
		if r, ok := strings.CutPrefix(rest, "etcd-"); ok && generated(r) {
			return true
		}
		return ofWorkerGroup(cluster+"-"+rest, mds)
	}
	switch e.ObjectKind {
	case "Cluster", "KubeadmControlPlane":
		return false // the cluster's own name, above
	case "EtcdadmCluster":
		return rest == "etcd"
	case "ControlPlaneUpgrade":
		return rest == "cp-upgrade"
	case "NodeUpgrade", "NodeKubeadmUpgrade", "Pod":
		// The upgrader pod is named as its NodeUpgrade: a control-plane
		// node's pod's BackOff events fell through to the worker groups'
		// rule below and were dropped.
		if m, ok := strings.CutSuffix(rest, model.UpgraderSuffix); ok {
			return machine(m)
		}
		return machine(rest)
	case "Machine":
		return machine(rest)
	}
	// MachineDeployment, MachineSet, MachineDeploymentUpgrade.
	return ofWorkerGroup(name, mds)
}

// generated reports whether s is the five-character suffix Kubernetes'
// GenerateName adds (lower-case letters and digits).
func generated(s string) bool {
	if len(s) != 5 {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// ofWorkerGroup reports whether name is a MachineDeployment of mds or
// named after one (<md>-…).
func ofWorkerGroup(name string, mds []model.MachineDeployment) bool {
	for i := range mds {
		md := mds[i].Name
		if name == md || strings.HasPrefix(name, md+"-") {
			return true
		}
	}
	return false
}

// filter returns l itself when every element is kept (no copy), else the
// kept elements.
func filter[T any](l []T, keep func(T) bool) []T {
	for i := range l {
		if keep(l[i]) {
			continue
		}
		out := make([]T, i, len(l))
		copy(out, l[:i])
		for j := i + 1; j < len(l); j++ {
			if keep(l[j]) {
				out = append(out, l[j])
			}
		}
		return out
	}
	return l
}

// filterList is filter for a List.
func filterList[T any](l model.List[T], keep func(*T) bool) model.List[T] {
	for i, v := range l.All() {
		if keep(v) {
			continue
		}
		out := make([]*T, 0, l.Len())
		for j, v := range l.All() {
			if j != i && (j < i || keep(v)) {
				out = append(out, v)
			}
		}
		return model.ListOf(out...)
	}
	return l
}

// sourcesLocked is the per-kind status: kinds without an informer as
// discovery left them, kinds with informers (events have one per namespace)
// merged.
func (w *Watcher) sourcesLocked() map[model.Kind]model.SourceStatus {
	out := maps.Clone(w.sources)
	if out == nil {
		out = map[model.Kind]model.SourceStatus{}
	}
	seen := map[model.Kind]bool{}
	for _, in := range w.insts {
		k := in.spec.kind
		cur := in.status
		if seen[k] {
			prev := out[k]
			cur.Synced = prev.Synced && (cur.Synced || cur.Forbidden != "")
			switch {
			case prev.Forbidden == "" || prev.Forbidden == cur.Forbidden:
			case cur.Forbidden == "":
				cur.Forbidden = prev.Forbidden
			default:
				// Denied in each namespace: each is named, as the
				// first alone told the operator to grant one Role and
				// left the other pane of events still denied.
				cur.Forbidden = prev.Forbidden + "; " + cur.Forbidden
			}
			if prev.Err != "" {
				cur.Err = prev.Err
			}
		}
		seen[k] = true
		out[k] = cur
	}
	return out
}
