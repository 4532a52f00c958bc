package model

// "Up to date" for a control-plane or worker machine is defined here, once:
// the phase counts, the status line and the stall sentences use it, and the
// nodes pane (MachineUpToDate). CAPI's own answers are to a
// different question, whether a machine's spec matches its owner's:
// upToDateReplicas and the Machine UpToDate condition count a new machine
// that is still Pending or Provisioning, and an old machine keeps
// UpToDate=True until the machine controller gets round to it (at 2,000
// machines, many seconds). Counted that way the status line read 758, then
// 233, then 100 of 2,000 nodes up to date while the nodes pane, which counts
// running nodes on the new version, read 3. An operator reads "up to date" as
// "a running node on the version the upgrade wants", so that is the rule.

// The counts are worded by what they count, not "up to date": on the same
// line EKS-A's messages count by spec ("Control plane nodes not up-to-date
// yet, 4 upgrading (1 up to date)", a new machine still provisioning
// included), and "0/3 up to date" beside "(1 up to date)" read as a
// contradiction. The ready count is of every machine, whatever its version.
const (
	countedUpgraded = "upgraded and ready"
	countedReady    = "ready in all"
)

// workerUnit is what the workers' counts count, as their line names it.
// They count worker Machines, each one node, so "nodes" as the operator
// speaks of them; but to an identity that may not list Nodes, "4/4 nodes"
// claimed a look at Nodes the console never had (readiness then rests on
// the Machines' Ready condition alone), so the unit is what was counted.
func workerUnit(s *ClusterState) string {
	if s.Source(KindNode).Forbidden != "" {
		return "machines"
	}
	return "nodes"
}

// MachineTarget is the version an upgrade wants a machine to run.
type MachineTarget struct {
	// Version is the owner's spec.version (KubeadmControlPlane or
	// MachineDeployment), "v1.31.3-eks-1-31-11": what CAPI rolls the
	// machines to. Empty when unknown.
	Version string
	// Kubernetes is the EKS-A Cluster spec's Kubernetes version for the
	// machine's group, "1.31"; empty when unknown. EKS-A writes the new
	// version into the owner's spec only when the upgrade reaches that
	// owner's phase, so until then Version still names the old release and
	// this is the only sign that the machines have yet to move.
	Kubernetes string
}

// MachineTargets returns the target of each owner of control-plane and worker
// machines, by owner name (the KubeadmControlPlane's and each
// MachineDeployment's).
func MachineTargets(s *ClusterState) map[string]MachineTarget {
	if s == nil {
		return nil
	}
	out := make(map[string]MachineTarget, len(s.MachineDeployments)+1)
	if s.ControlPlane != nil {
		out[s.ControlPlane.Name] = controlPlaneTarget(s)
	}
	for i := range s.MachineDeployments {
		md := &s.MachineDeployments[i]
		out[md.Name] = workerTarget(s.Cluster, md)
	}
	return out
}

func controlPlaneTarget(s *ClusterState) MachineTarget {
	var t MachineTarget
	if s.ControlPlane != nil {
		t.Version = s.ControlPlane.Version
	}
	if s.Cluster != nil {
		t.Kubernetes = s.Cluster.KubernetesVersion
	}
	return t
}

// workerTarget finds the EKS-A worker group behind a MachineDeployment by
// EKS-A's naming (<cluster>-<group>). A deployment that matches no group gets
// the cluster's version only when no group overrides it; otherwise its
// Kubernetes target is unknown rather than guessed.
func workerTarget(c *EKSACluster, md *MachineDeployment) MachineTarget {
	t := MachineTarget{Version: md.Version}
	if c == nil {
		return t
	}
	overridden := false
	for _, g := range c.WorkerGroups {
		if g.KubernetesVersion != "" {
			overridden = true
		}
		if c.Name+"-"+g.Name == md.Name {
			t.Kubernetes = g.KubernetesVersion
			if t.Kubernetes == "" {
				t.Kubernetes = c.KubernetesVersion
			}
			return t
		}
	}
	if !overridden {
		t.Kubernetes = c.KubernetesVersion
	}
	return t
}

// Behind reports whether a version ("v1.30.14-eks-1-30-58") is of an older
// Kubernetes minor than the EKS-A spec asks for. Only older counts: EKS-A's
// webhook refuses a downgrade, so a newer version means the snapshot's Cluster
// is the one behind, not the machine.
func (t MachineTarget) Behind(version string) bool {
	wantMaj, wantMin, ok := kubeMinor(t.Kubernetes)
	if !ok {
		return false
	}
	maj, min, ok := kubeMinor(version)
	if !ok {
		return false
	}
	return maj < wantMaj || (maj == wantMaj && min < wantMin)
}

// OwnerBehind reports whether EKS-A has yet to give the owner the new
// Kubernetes version: its rollout has not started.
func (t MachineTarget) OwnerBehind() bool { return t.Behind(t.Version) }

// MachineOnTarget reports whether a control-plane or worker machine has the
// version the upgrade wants, whether or not it runs yet. An in-place upgrade
// in flight says no and a completed one for the target says yes; a version of
// an older minor than the EKS-A spec, or other than the owner's, says no
// whatever the UpToDate condition says (it lags the owner's spec); otherwise
// CAPI's UpToDate condition decides, which also sees changes other than the
// version (a new machine template).
func MachineOnTarget(m *Machine, nu *NodeUpgrade, t MachineTarget) bool {
	if nu != nil {
		if !nu.Completed {
			return false
		}
		if t.Version == "" || nu.KubernetesVersion == t.Version {
			return !t.Behind(nu.KubernetesVersion)
		}
	}
	if t.Behind(m.Version) {
		return false
	}
	if t.Version != "" && m.Version != "" && m.Version != t.Version {
		return false
	}
	if c, ok := m.Conditions.Get(MachineConditionUpToDate); ok {
		return c.IsTrue()
	}
	return true
}

// MachineUpToDate reports whether a control-plane or worker machine is up to
// date: a running, ready node, not being deleted, on the version the upgrade
// wants (MachineOnTarget). n is the machine's node (nil when unknown), nu its
// newest in-place upgrade (nil when none).
func MachineUpToDate(m *Machine, n *Node, nu *NodeUpgrade, t MachineTarget) bool {
	return upToDate(m, readyWith(m, n), nu, t)
}

func upToDate(m *Machine, ready bool, nu *NodeUpgrade, t MachineTarget) bool {
	return ready && m.Phase == MachinePhaseRunning && !m.Deleting() && MachineOnTarget(m, nu, t)
}

// ControlPlaneReplicas is the KubeadmControlPlane's replica counts as the
// console shows them, the dashboard's CONTROL PLANE title and watch's
// KubeadmControlPlane line alike: its upToDateReplicas is replaced by
// upToDate of live, the control-plane machines not being deleted counted by
// MachineUpToDate (the control-plane phase's Done). The dashboard said the
// model's count while watch --plain said CAPI's, so mid-rollout the two
// read "1 up to date" and "2 up to date" of the same snapshot. Only that
// counter is replaced: desired is the spec, which no machine tells, and
// ready and available come from one status write. With no machine visible
// the KubeadmControlPlane's own count stands in (byKCP), none up to date
// while EKS-A has yet to give it the new version, as the phase counts it.
func ControlPlaneReplicas(s *ClusterState, upToDate, live int) (r ReplicaCounts, byKCP bool) {
	if s == nil || s.ControlPlane == nil {
		return r, false
	}
	r = s.ControlPlane.Replicas
	switch {
	case live > 0:
		n := int32(upToDate)
		r.UpToDate = &n
	case r.UpToDate != nil:
		if controlPlaneTarget(s).OwnerBehind() {
			r.UpToDate = new(int32)
		}
		byKCP = true
	}
	return r, byKCP
}

// MachineDeploymentReplicas is md's replica counts as the console shows them,
// by the rule of the workers phase (workers, derived from the same
// snapshot): its upToDateReplicas is replaced by the machines of md that
// phase counts up to date. watch --plain said CAPI's count, which counts
// a new machine still provisioning and, before EKS-A gives md the new
// version, every machine matching its old spec: "12 up to date" beside the
// dashboard's "0/12 nodes upgraded". As ControlPlaneReplicas does, only
// that counter is replaced; with no machine counted md's own count stands
// in, none up to date while EKS-A has yet to give it the new version.
func MachineDeploymentReplicas(c *EKSACluster, md *MachineDeployment, workers PhaseProgress) ReplicaCounts {
	r := md.Replicas
	switch {
	case workers.Owners != nil:
		// The machines were counted: one of md's not among them has
		// none live.
		n := int32(0)
		for _, o := range workers.Owners {
			if o.Owner == md.Name {
				n = int32(o.Done)
			}
		}
		r.UpToDate = &n
	case r.UpToDate != nil && workerTarget(c, md).OwnerBehind():
		r.UpToDate = new(int32)
	}
	return r
}

// LiveControlPlaneMachines counts the control-plane machines not being
// deleted: the live that ControlPlaneReplicas takes beside the phase's Done.
func LiveControlPlaneMachines(s *ClusterState) int {
	n := 0
	for _, m := range s.Machines.All() {
		if m.Role == RoleControlPlane && !m.Deleting() {
			n++
		}
	}
	return n
}

// MachinePhaseRunning is the CAPI Machine phase of a machine whose node runs.
const MachinePhaseRunning = "Running"

// readyWith: etcd members by their label, the others by the Machine's Ready
// condition, or their node's readiness when the condition is absent.
func readyWith(m *Machine, n *Node) bool {
	if m.Role == RoleEtcd {
		return m.EtcdReady
	}
	if c, ok := m.Conditions.Get(ConditionReady); ok {
		return c.IsTrue()
	}
	return n != nil && n.Ready
}

// kubeMinor reads the major and minor of "1.31", "v1.31" or
// "v1.31.3-eks-1-31-11" without allocating: it runs per machine.
func kubeMinor(s string) (major, minor int, ok bool) {
	if len(s) > 0 && s[0] == 'v' {
		s = s[1:]
	}
	major, s, ok = leadingInt(s)
	if !ok || len(s) == 0 || s[0] != '.' {
		return 0, 0, false
	}
	minor, _, ok = leadingInt(s[1:])
	return major, minor, ok
}

func leadingInt(s string) (n int, rest string, ok bool) {
	i := 0
	for ; i < len(s) && i < 9 && '0' <= s[i] && s[i] <= '9'; i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n, s[i:], i > 0
}

// MachineNodeReady is whether m's Node is Ready as CAPI reports it on the
// Machine, for a cluster whose Nodes are not on this API server
// (ClusterState.NodesElsewhere): the v1beta2 NodeReady condition, which
// mirrors the Node's Ready, else NodeHealthy (v1beta1 has no NodeReady; it
// is False for a NotReady Node and for a node condition reporting a
// problem). known is false when the Machine carries neither: then nothing
// here says how its Node is. A Machine with no nodeRef yet has no Node to
// be Ready: not ready, known.
func MachineNodeReady(m *Machine) (ready, known bool) {
	if m.NodeName == "" {
		return false, true
	}
	for _, t := range [...]string{MachineConditionNodeReady, MachineConditionNodeHealthy} {
		if c, ok := m.Conditions.Get(t); ok && c.Status != "Unknown" {
			return c.IsTrue(), true
		}
	}
	return false, false
}
