package model

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// DeriveProgress turns one snapshot into the progress of the upgrade: the
// phase, per-phase counts, EKS-A's completion rule and the stalls. It is pure
// and costs one pass over the machines, so it can run on every snapshot of a
// cluster with thousands of them.
//
// Phases run in EKS-A's order (components, etcd, control plane, CNI,
// workers). A phase counts as done only when the objects behind it say so
// (child evidence: replica counters, machines, NodeUpgrades) and, where EKS-A
// reports it, its condition agrees. A later phase is never reported done while
// an earlier one is not: it shows as pending, because EKS-A moves on only in
// that order and a True condition left over from before the upgrade must not
// read as progress. A phase none of whose objects the console may see (its
// lists forbidden) is not counted as empty: EKS-A's Cluster conditions say
// where it stands, and its detail says so and why (byCluster).
func DeriveProgress(s *ClusterState, opts ProgressOptions, now time.Time) Progress {
	return derive(s, opts, now, nil)
}

// Deriver derives the progress of successive snapshots of one cluster: the
// same result as DeriveProgress, but what it works out per machine (its
// readiness, in-place upgrade, up-to-date answer, last change) and its
// lookups by name are kept for the next snapshot. The watchers share every unchanged object between
// snapshots, so at 10,000 machines a status change costs the work of one
// machine and a pass of pointer comparisons, not 10,000 lookups and maps
// (DeriveProgress runs up to ten times a second on the dashboard). The zero
// value is ready to use; a Deriver is not safe for concurrent use.
type Deriver struct {
	nodesFrom    List[Node]
	nodeByName   map[string]*Node
	nusFrom      List[NodeUpgrade]
	upgrades     map[string]*NodeUpgrade
	activeNUs    []*NodeUpgrade
	machinesFrom List[Machine]
	// prev[i] is what was worked out for machinesFrom[i]; valid while the
	// node and NodeUpgrade lists are the ones it was worked out with.
	prev, next []mach
	groups     [3][]mach // the index's etcd, cp and worker lists, reused
	// utd memoizes upToDate per worker (a scan of its conditions).
	utd, utdNext []utdEntry
	// said holds the last derivation's machine stall sentences, saying
	// this one's (machineSentence).
	said, saying map[*Machine]saidStall
	built        bool
}

// utdEntry is one worker's upToDate and what it was worked out from.
type utdEntry struct {
	m      *Machine
	nu     *NodeUpgrade
	target MachineTarget
	ready  bool // from the node when the machine has no Ready condition
	v      bool
}

// utdMemo answers upToDate for the workers of one derivation by position,
// from the previous derivation's answers where the machine, its readiness,
// its NodeUpgrade and its target are the same.
type utdMemo struct {
	d *Deriver
}

func (ix *index) upToDateMemo(n int) utdMemo {
	if ix.d == nil {
		return utdMemo{}
	}
	d := ix.d
	if cap(d.utdNext) < n {
		d.utdNext = make([]utdEntry, n)
	} else {
		d.utdNext = d.utdNext[:n]
		clear(d.utdNext)
	}
	return utdMemo{d}
}

// done makes this derivation's answers the ones the next one starts from.
func (u utdMemo) done() {
	if u.d != nil {
		u.d.utd, u.d.utdNext = u.d.utdNext, u.d.utd
	}
}

func (u utdMemo) get(i int, m *mach, target MachineTarget) bool {
	if u.d == nil {
		return upToDate(m.Machine, m.ready, m.nu, target)
	}
	e := utdEntry{m: m.Machine, nu: m.nu, target: target, ready: m.ready}
	if i < len(u.d.utd) {
		if p := u.d.utd[i]; p.m == e.m && p.nu == e.nu && p.target == e.target && p.ready == e.ready {
			u.d.utdNext[i] = p
			return p.v
		}
	}
	e.v = upToDate(m.Machine, m.ready, m.nu, target)
	u.d.utdNext[i] = e
	return e.v
}

// Derive is DeriveProgress for the next snapshot.
func (d *Deriver) Derive(s *ClusterState, opts ProgressOptions, now time.Time) Progress {
	return derive(s, opts, now, d)
}

func derive(s *ClusterState, opts ProgressOptions, now time.Time, d *Deriver) Progress {
	if s == nil {
		s = &ClusterState{}
	}
	var p Progress
	c := s.Cluster
	p.Milestones, p.Complete = Completion(c)
	p.Blind = s.Connection == Reconnecting
	p.Stale = c != nil && c.Stale()
	if c != nil {
		p.SpecChangedAt = c.SpecChangedAt
		p.Generation = c.Generation
		p.ClusterFlags = c.ClusterFlags(s.Conn)
		p.Target = targetOf(c)
		if r, ok := c.EtcdRollback(); ok {
			p.EtcdRollback = &r
		}
	}
	p.Syncing = syncing(s)
	if c != nil && !p.Stale && c.FailureMessage != "" {
		p.Failed = true
		p.FailureMessage = c.FailureMessage
	}

	ix := newIndex(s, d)
	p.Phases = []PhaseProgress{
		componentsPhase(s),
		etcdPhase(s, ix),
		controlPlanePhase(s, ix),
		cniPhase(s),
		workersPhase(s, ix),
	}
	if p.EtcdRollback != nil {
		rolledBack(&p.Phases[1], p.EtcdRollback) // Phases[1] is etcd
	}
	p.Current = orderPhases(&p)
	// A rollback record still "running" with no live lock: the rollback
	// was stopped (ctrl+c, a crash), not under way. Only when the Lease is
	// known: without the right to read it nothing says which.
	holdPhases(&p, c, s.LockKnown() && !(s.Lock.Held() && !s.LockExpired(now)))
	p.Stalls = stalls(s, ix, opts, now)
	p.Summary = summary(&p, now)
	return p
}

// targetOf is "EKS-A v0.21.2, Kubernetes 1.31" (EKS-A's webhook requires
// the Kubernetes version; a Cluster from before eksaVersion may lack it).
func targetOf(c *EKSACluster) string {
	k := "Kubernetes " + c.KubernetesVersion
	if c.EksaVersion == "" {
		return k
	}
	return "EKS-A " + c.EksaVersion + ", " + k
}

// phaseKinds are the lists the phases are derived from.
var phaseKinds = []Kind{KindEKSACluster, KindKubeadmControlPlane, KindEtcdadmCluster, KindMachineDeployment,
	KindMachine, KindNode, KindNodeUpgrade, KindControlPlaneUpgrade, KindMachineDeploymentUpgrade}

// syncing reports whether a list the phases read is still on its way: the
// EKS-A Cluster not seen yet (before discovery no kind is listed at all), or
// an installed kind not synced. A forbidden one never comes, and is not
// waited for.
func syncing(s *ClusterState) bool {
	if s.Cluster == nil {
		return true
	}
	for _, k := range phaseKinds {
		if src := s.Sources[k]; src.Installed && !src.Synced && src.Forbidden == "" {
			return true
		}
	}
	return false
}

// orderPhases enforces the order of the phases and picks the current one.
func orderPhases(p *Progress) Phase {
	first := -1 // first phase that is not done
	for i := range p.Phases {
		ph := &p.Phases[i]
		if ph.Status == PhaseSkipped {
			continue
		}
		if first >= 0 {
			if ph.Status == PhaseOK {
				ph.Status = PhasePending
				ph.Detail = waiting(ph, p.Phases[first].Phase)
			}
			continue
		}
		if ph.Status == PhaseUnknown && movesLater(p.Phases[i+1:]) {
			// Not seen, and the Cluster does not say; a later phase
			// visibly moves, so EKS-A is past this one.
			continue
		}
		if ph.Status != PhaseOK {
			first = i
		}
	}
	if first < 0 && !p.Complete && !p.Failed {
		// Every object looks done but EKS-A has not said so yet: the unmet
		// milestone names the phase that is still in flight.
		first = phaseOfMilestone(p)
		if first >= 0 {
			ph := &p.Phases[first]
			ph.Status = PhaseActive
			ph.Detail = firstUnmet(p.Milestones).Message
			if ph.Unseen != "" {
				ph.Detail = ph.Unseen + "; " + clusterSays + ph.Detail
			}
			for i := first + 1; i < len(p.Phases); i++ {
				if later := &p.Phases[i]; later.Status == PhaseOK {
					later.Status = PhasePending
					later.Detail = waiting(later, ph.Phase)
				}
			}
		}
	}
	if p.Failed {
		// A failure with no phase in flight is the Cluster's (a validation,
		// a reconcile error): no phase is marked with it. Marked on the
		// last one, "phase workers: failed: Cluster validation failed"
		// blamed workers that were all up to date.
		if first >= 0 {
			p.Phases[first].Status = PhaseBroken
			p.Phases[first].Detail = p.FailureMessage
		}
		return PhaseFailed
	}
	if first < 0 {
		return PhaseDone
	}
	if ph := &p.Phases[first]; ph.Status == PhasePending && ph.Unseen == "" && p.Generation != 0 {
		// Nothing is visibly moving yet (objects still syncing, or
		// waiting for EKS-A): the phase is still where the upgrade
		// stands. One the console may not see stays as the Cluster
		// says it is. Before the EKS-A Cluster is seen at all nothing
		// stands anywhere: the strip read "components ●" with every
		// pane still syncing.
		ph.Status = PhaseActive
	}
	return p.Phases[first].Phase
}

// movesLater reports whether one of the phases visibly moves: under way by
// what the console sees of its objects, not by the Cluster's word alone.
func movesLater(phs []PhaseProgress) bool {
	for i := range phs {
		if phs[i].Status == PhaseActive && phs[i].Unseen == "" {
			return true
		}
	}
	return false
}

func firstUnmet(ms []Milestone) Milestone {
	for _, m := range ms {
		if !m.Met {
			return m
		}
	}
	return Milestone{}
}

// phaseOfMilestone maps the first unmet milestone to the index of the phase
// that waits for it.
func phaseOfMilestone(p *Progress) int {
	want := PhaseControlPlane
	switch firstUnmet(p.Milestones).Name {
	case MilestoneGenerationObserved, MilestoneNoFailure:
		// The controller has not looked at the new spec yet: the upgrade
		// starts with etcd when it is external, with the control plane
		// otherwise.
		for i, ph := range p.Phases {
			if ph.Phase != PhaseComponents && ph.Status != PhaseSkipped {
				return i
			}
		}
	case MilestoneDefaultCNI:
		want = PhaseCNI
	case MilestoneWorkersReady, MilestoneReady:
		want = PhaseWorkers
	}
	for i, ph := range p.Phases {
		if ph.Phase == want && ph.Status != PhaseSkipped {
			return i
		}
	}
	return lastApplicable(p.Phases)
}

func lastApplicable(phs []PhaseProgress) int {
	for i := len(phs) - 1; i >= 0; i-- {
		if phs[i].Status != PhaseSkipped {
			return i
		}
	}
	return -1
}

func componentsPhase(s *ClusterState) PhaseProgress {
	ph := PhaseProgress{Phase: PhaseComponents, Status: PhaseOK}
	c := s.Cluster
	if c == nil {
		ph.Status = PhasePending
		ph.Detail = notSeen(s, KindEKSACluster, "EKS-A Cluster")
		return ph
	}
	installed := c.Annotations[AnnotationManagementComponentsVersion]
	if c.SelfManaged() && ManagementBehind(installed, c.EksaVersion) {
		// Active, not done: the cluster cannot go on, and nothing in it
		// upgrades them; said so, the stall rule then holds it up.
		ph.Status = PhaseActive
		ph.Detail = fmt.Sprintf("management components at %s, older than the cluster's %s (eksctl anywhere upgrade management-components upgrades them)", installed, c.EksaVersion)
		return ph
	}
	if installed != "" {
		ph.Detail = "management components " + installed
	}
	return ph
}

func etcdPhase(s *ClusterState, ix *index) PhaseProgress {
	ph := PhaseProgress{Phase: PhaseEtcd}
	e := s.Etcd
	c := s.Cluster
	if e == nil {
		src := s.Source(KindEtcdadmCluster)
		switch {
		case c != nil && c.ExternalEtcdCount > 0:
			if u := unseen(s, KindEtcdadmCluster); u != "" {
				return byCluster(ph, c, u)
			}
			ph.Status = PhasePending
			ph.Total = c.ExternalEtcdCount
			ph.Detail = notSeen(s, KindEtcdadmCluster, "EtcdadmCluster")
		case c != nil || src.Synced:
			ph.Status = PhaseSkipped
			ph.Detail = "stacked etcd"
		default:
			ph.Status = PhasePending
			ph.Detail = notSeen(s, KindEtcdadmCluster, "EtcdadmCluster")
		}
		return ph
	}
	ph.Total = int(e.Replicas)
	ph.Ready = int(e.ReadyReplicas)
	outdatedSince := time.Time{}
	if cond, ok := e.Conditions.Get(EtcdConditionMachinesSpecUpToDate); ok && !cond.IsTrue() {
		outdatedSince = cond.LastTransitionTime
		ph.Since = cond.LastTransitionTime
	}
	for i := range ix.etcd {
		m := ix.etcd[i]
		if m.Deleting() || !m.Owned || !m.EtcdReady {
			continue
		}
		if etcdMemberUpToDate(m.Machine, e, outdatedSince) {
			ph.Done++
		}
	}
	if ph.Total == 0 {
		ph.Total = len(ix.etcd)
	}
	// EKS-A's own rule for "etcd is ready" (observed generation, status.ready,
	// no rollout marker) decides the phase; the per-member count is shown
	// but is a guess (see etcdMemberUpToDate) and the machines may still be
	// syncing.
	ready := !e.Stale() && e.Ready && !e.Upgrading()
	if len(ix.etcd) == 0 && ready {
		ph.Done = ph.Ready
	}
	notStarted := ""
	if ready {
		notStarted = etcdAwaitsEKSA(s, ix)
	}
	if notStarted != "" {
		// The members match the EtcdadmCluster's spec, but that spec is
		// the one from before the upgrade.
		ph.Done = 0
	}
	if len(ix.etcd) == 0 && !ready && notStarted == "" {
		// Which members have the new spec only the machines tell: not
		// visible, they are not counted, not "0 upgraded". The ready
		// count is the EtcdadmCluster's own.
		if ph.Unseen = unseen(s, KindMachine); ph.Unseen != "" {
			ph.Done = 0
		}
	}
	counts := fmt.Sprintf("%d/%d members %s, %d %s", ph.Done, ph.Total, countedUpgraded, ph.Ready, countedReady)
	if ph.Unseen != "" {
		counts = fmt.Sprintf("%s: upgraded members not counted, %d/%d members ready by the EtcdadmCluster's count", ph.Unseen, ph.Ready, ph.Total)
	}
	var parts []string
	parts = append(parts, counts)
	switch {
	case notStarted != "":
		parts = append(parts, "not started: "+notStarted)
	case e.Stale():
		parts = append(parts, "status not yet observed")
	case e.Upgrading():
		parts = append(parts, "upgrading")
	case !e.Ready:
		parts = append(parts, "not ready")
	}
	ph.Detail = strings.Join(parts, ", ")
	switch {
	case notStarted != "":
		// Waiting for EKS-A, not moving (orderPhases makes it the active
		// phase when the upgrade stands here).
		ph.Status = PhasePending
	case ready:
		ph.Status = PhaseOK
		if cond, ok := e.Conditions.Get(ConditionReady); ok {
			ph.Since = cond.LastTransitionTime
		}
	default:
		ph.Status = PhaseActive
	}
	return ph
}

// etcdAwaitsEKSA says what EKS-A has yet to do before the etcd rollout of the
// upgrade begins, or "" when it has begun or nothing says one is to come.
// Until EKS-A writes the new spec, the EtcdadmCluster is ready and every
// member matches its spec, the one from before the upgrade: read as such,
// etcd is done before it has started, and once EKS-A moves it the upgrade
// seems to go back from the control plane to etcd. EKS-A rolls external etcd
// before it gives the KubeadmControlPlane the new Kubernetes version, so a
// control plane still behind the Cluster, with no sign of an etcd rollout
// since the Cluster's spec changed, means etcd's turn has not come yet.
func etcdAwaitsEKSA(s *ClusterState, ix *index) string {
	if s.Cluster == nil || s.ControlPlane == nil {
		return ""
	}
	target := controlPlaneTarget(s)
	if !target.OwnerBehind() || etcdMovedSince(s.Etcd, ix.etcd, s.Cluster.SpecChangedAt) {
		return ""
	}
	return "EKS-A has yet to roll it for Kubernetes " + target.Kubernetes
}

// etcdMovedSince reports whether an etcd rollout has shown since t: a member
// created, or EtcdMachinesSpecUpToDate turned, at t or later (both in whole
// seconds, as t is). A zero t dates nothing: no sign.
func etcdMovedSince(e *EtcdCluster, members []mach, t time.Time) bool {
	if t.IsZero() {
		return false
	}
	if c, ok := e.Conditions.Get(EtcdConditionMachinesSpecUpToDate); ok && !c.LastTransitionTime.Before(t) {
		return true
	}
	for i := range members {
		if !members[i].CreationTimestamp.Before(t) {
			return true
		}
	}
	return false
}

// EtcdadmCluster condition types.
const (
	EtcdConditionMachinesSpecUpToDate = "EtcdMachinesSpecUpToDate"
	EtcdConditionHasNoOutdated        = "EtcdClusterHasNoOutdatedMachines"
)

// EtcdMemberSpec says, during an etcd rollout (EtcdMachinesSpecUpToDate not
// True), whether an owned member has the new spec, by the guess the etcd
// phase counts with (etcdMemberUpToDate); rollout is false outside one,
// when every owned member has the spec. The etcd pane tags its members so:
// all showed "ready" alike, old and new.
func EtcdMemberSpec(m *Machine, e *EtcdCluster) (newSpec, rollout bool) {
	if e == nil || m == nil {
		return false, false
	}
	cond, ok := e.Conditions.Get(EtcdConditionMachinesSpecUpToDate)
	if !ok || cond.IsTrue() {
		return false, false
	}
	return etcdMemberUpToDate(m, e, cond.LastTransitionTime), true
}

// etcdMemberUpToDate guesses whether an owned etcd machine has the current
// spec. The EtcdadmCluster does not say per machine: compare infrastructure
// templates when both are known, otherwise treat machines created after the
// rollout began (EtcdMachinesSpecUpToDate turned False) as the new ones.
func etcdMemberUpToDate(m *Machine, e *EtcdCluster, outdatedSince time.Time) bool {
	if m.InfrastructureTemplate != "" && e.InfrastructureTemplate != "" {
		return m.InfrastructureTemplate == e.InfrastructureTemplate
	}
	if outdatedSince.IsZero() {
		return true
	}
	return !m.CreationTimestamp.Before(outdatedSince)
}

func controlPlanePhase(s *ClusterState, ix *index) PhaseProgress {
	ph := PhaseProgress{Phase: PhaseControlPlane}
	kcp := s.ControlPlane
	c := s.Cluster
	target := controlPlaneTarget(s)
	if kcp != nil && kcp.Replicas.Desired != nil {
		ph.Total = int(*kcp.Replicas.Desired)
	}
	if ph.Total == 0 && c != nil {
		ph.Total = c.ControlPlaneCount
	}
	// Until EKS-A gives the KubeadmControlPlane the new version (after
	// etcd), its machines match its spec but not the upgrade: the phase has
	// not started, and none of them is up to date.
	notStarted := kcp != nil && target.OwnerBehind()
	live := 0
	for i := range ix.cp {
		m := &ix.cp[i]
		if m.deleting {
			continue
		}
		live++
		if upToDate(m.Machine, m.ready, m.nu, target) {
			ph.Done++
		}
		if m.ready {
			ph.Ready++
		}
	}
	if kcp == nil && live == 0 && s.Source(KindKubeadmControlPlane).Forbidden != "" {
		// Nothing of the control plane is visible: counted, it read "0/3
		// upgraded, 0 ready" of a control plane that may be all ready.
		return byCluster(ph, c, unseen(s, KindKubeadmControlPlane, KindMachine))
	}
	if ph.Total == 0 {
		ph.Total = live
	}
	counted := "machines " + countedUpgraded
	if live == 0 && kcp != nil && kcp.Replicas.UpToDate != nil {
		// Machines not visible (forbidden or syncing): the counters still
		// are, but they count machines whose spec matches, running or not,
		// which is not what "up to date" means elsewhere: say whose they are.
		counted = "up to date by the KubeadmControlPlane's count"
		if !notStarted {
			ph.Done = int(*kcp.Replicas.UpToDate)
		}
		if kcp.Replicas.Ready != nil {
			ph.Ready = int(*kcp.Replicas.Ready)
		}
	}
	rolling := ph.Done < ph.Total || live > ph.Total
	paused := false
	var parts []string
	parts = append(parts, fmt.Sprintf("%d/%d %s, %d %s", ph.Done, ph.Total, counted, ph.Ready, countedReady))
	if notStarted {
		parts = append(parts, "not started: EKS-A has yet to move it to Kubernetes "+target.Kubernetes)
	}
	if kcp != nil {
		if kcp.Stale() {
			rolling = true
			parts = append(parts, "status not yet observed")
		}
		if kcp.Paused() {
			paused = true
			if s.Etcd != nil && (s.Etcd.Upgrading() || !s.Etcd.Ready) {
				parts = append(parts, "paused while etcd upgrades")
			} else {
				parts = append(parts, "paused")
			}
		}
	}
	if r := ix.request(KindControlPlaneUpgrade, kcpName(kcp)); r != nil && !r.Ready {
		rolling = true
		upgraded, total := ix.inPlaceUpgraded(r)
		parts = append(parts, fmt.Sprintf("in-place %d/%d upgraded", upgraded, total))
	}
	since, cond := conditionOf(c, ConditionControlPlaneReady)
	if !cond.IsTrue() && cond.Reason != "" {
		parts = append(parts, reasonText(cond))
	}
	ph.Since = since
	ph.Detail = strings.Join(parts, ", ")
	if kcp == nil && live == 0 {
		// No child evidence: EKS-A's condition is all there is.
		if cond.IsTrue() && !c.Stale() {
			ph.Status = PhaseOK
		} else {
			ph.Status = PhasePending
			if ph.Detail == "" || ph.Total == 0 {
				ph.Detail = notSeen(s, KindKubeadmControlPlane, "KubeadmControlPlane")
			}
		}
		return ph
	}
	switch {
	case notStarted:
		// Waiting for EKS-A, not moving (orderPhases makes it the active
		// phase when the upgrade stands here).
		ph.Status = PhasePending
	case rolling:
		ph.Status = PhaseActive
	case paused:
		// Paused by EKS-A while etcd rolls: waiting, not moving.
		ph.Status = PhasePending
	case cond.IsTrue() || c == nil || c.Stale():
		ph.Status = PhaseOK
	default:
		ph.Status = PhaseActive
	}
	return ph
}

func kcpName(kcp *ControlPlane) string {
	if kcp == nil {
		return ""
	}
	return kcp.Name
}

func cniPhase(s *ClusterState) PhaseProgress {
	ph := PhaseProgress{Phase: PhaseCNI}
	c := s.Cluster
	if c == nil {
		ph.Status = PhasePending
		ph.Detail = notSeen(s, KindEKSACluster, "EKS-A Cluster")
		return ph
	}
	if !c.CNIManaged() {
		ph.Status = PhaseSkipped
		if c.CiliumSkipUpgrade {
			ph.Detail = "cilium skipUpgrade: true"
		} else {
			ph.Detail = "CNI not managed by EKS-A"
		}
		return ph
	}
	since, cond := conditionOf(c, ConditionDefaultCNIConfigured)
	ph.Since = since
	if cond.IsTrue() {
		ph.Status = PhaseOK
		return ph
	}
	ph.Status = PhaseActive
	ph.Detail = reasonText(cond)
	if cond.Type == "" {
		ph.Detail = "DefaultCNIConfigured not reported yet"
	}
	return ph
}

func workersPhase(s *ClusterState, ix *index) PhaseProgress {
	ph := PhaseProgress{Phase: PhaseWorkers}
	c := s.Cluster
	targets := make(map[string]MachineTarget, len(s.MachineDeployments))
	rolling := false
	// behind counts the deployments EKS-A has yet to give the new
	// Kubernetes version: while all are, the phase has not started.
	behind := 0
	behindVersion := ""
	var notes []string
	for i := range s.MachineDeployments {
		md := &s.MachineDeployments[i]
		t := workerTarget(c, md)
		targets[md.Name] = t
		if t.OwnerBehind() {
			behind++
			behindVersion = t.Kubernetes
		}
		if md.Replicas.Desired != nil {
			ph.Total += int(*md.Replicas.Desired)
		}
		if md.Stale() {
			rolling = true
			notes = append(notes, md.Name+" status not yet observed")
		}
		if r := ix.request(KindMachineDeploymentUpgrade, md.Name); r != nil && !r.Ready {
			rolling = true
			upgraded, total := ix.inPlaceUpgraded(r)
			notes = append(notes, fmt.Sprintf("%s in-place %d/%d upgraded", md.Name, upgraded, total))
		}
	}
	notStarted := behind > 0 && behind == len(s.MachineDeployments)
	if ph.Total == 0 && c != nil {
		for _, g := range c.WorkerGroups {
			ph.Total += g.Count
		}
	}
	live := 0
	utd := ix.upToDateMemo(len(ix.workers))
	// Workers come in name order, a group's together: the target is
	// looked up once per run of one owner, not hashed per machine.
	owner, target, looked := "", MachineTarget{}, false
	var oc *OwnerCount
	for i := range ix.workers {
		m := &ix.workers[i]
		if m.deleting {
			continue
		}
		live++
		if !looked || m.owner != owner {
			owner, target, looked = m.owner, targets[m.owner], true
			// Found, not appended: one group's name can prefix another's
			// ("md" and "md-0"), and their machines then interleave.
			j := slices.IndexFunc(ph.Owners, func(c OwnerCount) bool { return c.Owner == owner })
			if j < 0 {
				ph.Owners = append(ph.Owners, OwnerCount{Owner: owner})
				j = len(ph.Owners) - 1
			}
			oc = &ph.Owners[j]
		}
		oc.Live++
		if utd.get(i, m, target) {
			ph.Done++
			oc.Done++
		}
		if m.ready {
			ph.Ready++
		}
	}
	utd.done()
	if len(s.MachineDeployments) == 0 && live == 0 && s.Source(KindMachineDeployment).Forbidden != "" {
		// Nothing of the workers is visible: counted, it read "0/4 nodes
		// upgraded, 0 ready" of workers that may be all ready.
		return byCluster(ph, c, unseen(s, KindMachineDeployment, KindMachine))
	}
	counted := workerUnit(s) + " " + countedUpgraded
	if live == 0 {
		// Machines not visible (forbidden or syncing): the deployments'
		// counters count machines whose spec matches, running or not, which
		// is not what "up to date" means elsewhere: say whose they are.
		for i := range s.MachineDeployments {
			md := &s.MachineDeployments[i]
			if md.Replicas.UpToDate != nil {
				counted = "up to date by the MachineDeployments' count"
				if !targets[md.Name].OwnerBehind() {
					ph.Done += int(*md.Replicas.UpToDate)
				}
			}
			if md.Replicas.Ready != nil {
				ph.Ready += int(*md.Replicas.Ready)
			}
		}
	}
	if ph.Total == 0 {
		ph.Total = live
	}
	if ph.Done < ph.Total || live > ph.Total {
		rolling = true
	}
	since, cond := conditionOf(c, ConditionWorkersReady)
	ph.Since = since
	parts := []string{fmt.Sprintf("%d/%d %s, %d %s", ph.Done, ph.Total, counted, ph.Ready, countedReady)}
	if notStarted {
		parts = append(parts, "not started: EKS-A has yet to move them to Kubernetes "+behindVersion)
	}
	parts = append(parts, notes...)
	if !cond.IsTrue() && cond.Reason != "" {
		parts = append(parts, reasonText(cond))
	}
	ph.Detail = strings.Join(parts, ", ")
	evidence := len(s.MachineDeployments) > 0 || live > 0
	switch {
	case notStarted:
		// Waiting for EKS-A, not moving (orderPhases makes it the active
		// phase when the upgrade stands here).
		ph.Status = PhasePending
	case rolling:
		ph.Status = PhaseActive
	case cond.IsTrue() || (evidence && (c == nil || c.Stale())):
		ph.Status = PhaseOK
	case !evidence && c == nil:
		ph.Status = PhasePending
		ph.Detail = notSeen(s, KindMachineDeployment, "MachineDeployments")
	default:
		ph.Status = PhaseActive
	}
	return ph
}

// conditionOf returns an EKS-A Cluster condition and its transition time.
func conditionOf(c *EKSACluster, t string) (time.Time, Condition) {
	if c == nil {
		return time.Time{}, Condition{}
	}
	cond, _ := c.Conditions.Get(t)
	return cond.LastTransitionTime, cond
}

// reasonText is "Reason: message", or whichever of the two is set.
func reasonText(c Condition) string {
	switch {
	case c.Reason != "" && c.Message != "":
		return c.Reason + ": " + c.Message
	case c.Message != "":
		return c.Message
	default:
		return c.Reason
	}
}

// unseen says which of the kinds behind a phase the console may not list,
// and why: "MachineDeployments and Machines not visible (forbidden: list
// machinedeployments.cluster.x-k8s.io in eksa-system, list
// machines.cluster.x-k8s.io in eksa-system)"; "" when none is forbidden.
func unseen(s *ClusterState, kinds ...Kind) string {
	var what, why string
	for _, k := range kinds {
		f := s.Source(k).Forbidden
		if f == "" {
			continue
		}
		if what != "" {
			what += " and "
			why += ", "
		}
		what += kindNoun(k)
		why += f
	}
	if what == "" {
		return ""
	}
	return what + " not visible (forbidden: " + why + ")"
}

// kindNoun names a kind's objects as a phase's detail speaks of them.
func kindNoun(k Kind) string {
	switch k {
	case KindMachineDeployment:
		return "MachineDeployments"
	case KindMachine:
		return "Machines"
	case KindNode:
		return "Nodes"
	default:
		return k.Short()
	}
}

// Why EKS-A's ControlPlaneReady is False while external etcd is not ready
// (pkg/controller/clusters/status.go, updateConditionsForEtcdAndControlPlane):
// it checks etcd before the control plane, so any other verdict means etcd
// has passed.
const (
	reasonExternalEtcdNotAvailable = "ExternalEtcdNotAvailable"
	messageEtcdNotReady            = "Etcd is not ready"
)

// etcdBlocks reports whether a False ControlPlaneReady is EKS-A waiting for
// external etcd.
func etcdBlocks(c Condition) bool {
	return !c.IsTrue() && (c.Reason == reasonExternalEtcdNotAvailable || c.Message == messageEtcdNotReady)
}

// clusterSays is the prefix of what a phase's status rests on when none of
// its objects is visible.
const clusterSays = "per the EKS-A Cluster: "

// byCluster is a phase none of whose objects the console may see (unseen
// says which and why). EKS-A's Cluster conditions, the authority on
// completion, say where it stands, and the detail says that they do;
// nothing is counted. EKS-A computes ControlPlaneReady (external etcd
// first, then the control plane) and WorkersReady from those very objects:
// True is done; False is the phase under way, or, for the control plane
// while the condition waits for etcd, not begun. Without a status that
// describes the current spec (generation not observed), or without the
// condition, the Cluster says nothing of the phase: PhaseUnknown, never
// active on no evidence.
func byCluster(ph PhaseProgress, c *EKSACluster, unseen string) PhaseProgress {
	ph.Unseen = unseen
	ph.Done, ph.Ready, ph.Total, ph.Since = 0, 0, 0, time.Time{}
	if c == nil {
		ph.Status, ph.Detail = PhaseUnknown, unseen
		return ph
	}
	if c.Stale() {
		ph.Status = PhaseUnknown
		ph.Detail = unseen + "; EKS-A Cluster status not yet observed"
		return ph
	}
	t := ConditionControlPlaneReady
	if ph.Phase == PhaseWorkers {
		t = ConditionWorkersReady
	}
	cond, ok := c.Conditions.Get(t)
	switch {
	case !ok:
		ph.Status = PhaseUnknown
		ph.Detail = unseen + "; " + clusterSays + t + " not reported yet"
	case cond.IsTrue():
		ph.Status = PhaseOK
		ph.Detail = unseen + "; " + clusterSays + t + " True"
		if ph.Phase != PhaseEtcd {
			// When etcd finished the condition does not say.
			ph.Since = cond.LastTransitionTime
		}
	case ph.Phase == PhaseEtcd && !etcdBlocks(cond):
		ph.Status = PhaseOK
		ph.Detail = unseen + "; " + clusterSays + t + " no longer waits for etcd"
	case ph.Phase == PhaseControlPlane && etcdBlocks(cond):
		ph.Status = PhasePending
		ph.Detail = unseen + "; " + clusterSays + t + " False: " + reasonText(cond)
	default:
		ph.Status = PhaseActive
		ph.Detail = unseen + "; " + clusterSays + t + " False: " + reasonText(cond)
		if ph.Phase != PhaseControlPlane {
			// The control plane's condition turned False when etcd
			// began, not when the control plane did.
			ph.Since = cond.LastTransitionTime
		}
	}
	return ph
}

// waiting is the detail of a phase that waits for an earlier one, keeping
// what the console may not see of it.
func waiting(ph *PhaseProgress, on Phase) string {
	if ph.Unseen != "" {
		return ph.Unseen + "; waiting for " + string(on)
	}
	return "waiting for " + string(on)
}

// notSeen explains why an object is missing from the snapshot.
func notSeen(s *ClusterState, k Kind, what string) string {
	src := s.Source(k)
	switch {
	case src.Forbidden != "":
		return what + " not visible (forbidden: " + src.Forbidden + ")"
	case !src.Installed && src.Synced:
		return what + " kind not installed"
	case !src.Synced:
		return what + " syncing"
	default:
		return what + " not found"
	}
}

func summary(p *Progress, now time.Time) string {
	var b strings.Builder
	switch {
	case p.Failed:
		b.WriteString("failed: " + p.FailureMessage)
	case p.Current == PhasePaused:
		b.WriteString(p.Pause)
	case p.Current == PhaseDone:
		// Not "done": the waiters say so once the rule has kept holding
		// (Judge), and a cluster at rest meets it as well.
		b.WriteString("every completion milestone met")
	default:
		for _, ph := range p.Phases {
			if ph.Phase == p.Current {
				b.WriteString(string(ph.Phase))
				if ph.Detail != "" {
					b.WriteString(": " + ph.Detail)
				}
			}
		}
	}
	if p.Stale {
		m := p.Milestones[0]
		// The current phase says it already when the Cluster's status is
		// what is stale ("etcd: status not yet observed (generation 3,
		// observed 2) · status not yet observed (generation 3, …)").
		if !strings.Contains(b.String(), m.Message) {
			b.WriteString(" · " + m.Message)
		}
		if !m.Since.IsZero() {
			b.WriteString(" for " + ShortDuration(now.Sub(m.Since)))
		}
	}
	if p.Blind {
		b.WriteString(" · connection lost: this is what the cluster said before, waiting for the watch to reconnect")
	}
	failed, stalled := countStalls(p.Stalls)
	if failed > 0 {
		fmt.Fprintf(&b, " · %d failed", failed)
	}
	if stalled > 0 {
		fmt.Fprintf(&b, " · %d stalled", stalled)
	}
	return b.String()
}

// countStalls counts the failed steps apart from what has made no progress
// for the stall threshold: called stalled, a step that failed a second ago
// read as stuck for minutes. Each object is counted once.
func countStalls(sts []Stall) (failed, stalled int) {
	for _, st := range sts {
		if st.Failed {
			failed++
		} else {
			stalled++
		}
	}
	return failed, stalled
}

// TotalDuration is how long something took, to the second under an hour
// ("1m50s", where ShortDuration's "1m" of an upgrade that took 1m50s read as
// half of it), to the minute beyond ("1h05m").
func TotalDuration(d time.Duration) string {
	if d >= time.Minute && d < time.Hour {
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	return ShortDuration(d)
}

// ShortDuration formats a duration the way the console shows ages: "45s",
// "11m", "1h05m", "2d3h".
func ShortDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	default:
		return fmt.Sprintf("%dd%dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
	}
}

// shortDurationFloor is d truncated to the unit ShortDuration says it in:
// two durations with the same floor read the same.
func shortDurationFloor(d time.Duration) time.Duration {
	switch {
	case d < 0:
		return 0
	case d < time.Hour:
		if d < time.Minute {
			return d.Truncate(time.Second)
		}
		return d.Truncate(time.Minute)
	case d < 24*time.Hour:
		return d.Truncate(time.Minute)
	default:
		return d.Truncate(time.Hour)
	}
}

// index holds the lookups a derivation needs, built once per derivation:
// each machine's readiness and in-place upgrade are worked out once and
// shared by the phases and the stall detection (at 10,000 machines the
// lookups are most of the cost).
type index struct {
	s       *ClusterState
	etcd    []mach // each group in name order
	cp      []mach
	workers []mach
	// upgrades is the newest in-place upgrade object per machine name.
	upgrades map[string]*NodeUpgrade
	// nodeByName, when set, finds nodes without a search.
	nodeByName map[string]*Node
	activeNUs  []*NodeUpgrade // see activeUpgrades
	d          *Deriver       // nil for a one-off derivation
}

// mach is a machine with what the derivation needs to know about it.
type mach struct {
	*Machine
	ready bool
	nu    *NodeUpgrade // newest in-place upgrade of the machine, if any
	// Copied out of the Machine and NodeUpgrade, so that the passes over
	// 10,000 machines read one contiguous slice instead of following a
	// pointer per machine (the cache misses were most of their cost).
	deleting bool
	nuActive bool // an in-place upgrade is in flight
	owner    string
	// changedAt is the machine's last visible change: created, Ready
	// moved, deletion started, a step of its in-place upgrade (what a
	// stalled rollout is timed from).
	changedAt time.Time
}

func newIndex(s *ClusterState, d *Deriver) *index {
	ix := &index{s: s}
	machines := s.Machines
	if s.Sources != nil && !s.Source(KindMachine).Synced {
		// A partial list would read as a rollout (4 of 10,000 machines):
		// until the informer has synced, the controllers' counters speak.
		machines = List[Machine]{}
	}
	if d == nil {
		ix.upgrades = NewestUpgrades(s.NodeUpgrades)
		ix.activeNUs = activeUpgrades(s.NodeUpgrades)
		ix.workers = make([]mach, 0, machines.Len())
		for _, m := range machines.All() {
			ix.add(ix.work(m))
		}
		return ix
	}
	// The per-machine memo holds only while the lists it looked into are
	// the same; a changed list is re-indexed (one pass), not searched.
	memo := d.built && s.Nodes.Same(d.nodesFrom) && s.NodeUpgrades.Same(d.nusFrom)
	if !s.Nodes.Same(d.nodesFrom) || d.nodeByName == nil {
		d.nodeByName = make(map[string]*Node, s.Nodes.Len())
		for _, n := range s.Nodes.All() {
			d.nodeByName[n.Name] = n
		}
		d.nodesFrom = s.Nodes
	}
	if !s.NodeUpgrades.Same(d.nusFrom) || !d.built {
		d.upgrades = NewestUpgrades(s.NodeUpgrades)
		d.activeNUs = activeUpgrades(s.NodeUpgrades)
		d.nusFrom = s.NodeUpgrades
	}
	ix.nodeByName, ix.upgrades, ix.d = d.nodeByName, d.upgrades, d
	ix.activeNUs = d.activeNUs
	// Buffers reused and swapped: an index lives for one derivation only.
	ix.etcd, ix.cp, ix.workers = d.groups[0][:0], d.groups[1][:0], d.groups[2][:0]
	d.next = d.next[:0]
	for i, mp := range machines.All() {
		var m mach
		if memo && i < d.machinesFrom.Len() && d.machinesFrom.At(i) == mp {
			m = d.prev[i]
		} else {
			m = ix.work(mp)
		}
		d.next = append(d.next, m)
		ix.add(m)
	}
	d.prev, d.next = d.next, d.prev
	d.groups = [3][]mach{ix.etcd, ix.cp, ix.workers}
	d.machinesFrom, d.built = machines, true
	return ix
}

// activeUpgrades are the in-place upgrades neither completed nor deleting:
// the only ones that can stall (at fleet scale, a handful of 10,000).
func activeUpgrades(nus List[NodeUpgrade]) []*NodeUpgrade {
	var out []*NodeUpgrade
	for _, nu := range nus.All() {
		if !nu.Completed && !nu.Deleting() {
			out = append(out, nu)
		}
	}
	return out
}

// upgradesByMachine is the newest in-place upgrade object per machine name.
func NewestUpgrades(nus List[NodeUpgrade]) map[string]*NodeUpgrade {
	if nus.Len() == 0 {
		return nil
	}
	out := make(map[string]*NodeUpgrade, nus.Len())
	for _, nu := range nus.All() {
		if prev := out[nu.MachineName]; prev == nil || prev.CreationTimestamp.Before(nu.CreationTimestamp) {
			out[nu.MachineName] = nu
		}
	}
	return out
}

// work is what the derivation needs to know about one machine.
func (ix *index) work(m *Machine) mach {
	w := mach{Machine: m, ready: ix.machineReady(m), deleting: m.Deleting(), owner: m.Owner, changedAt: m.CreationTimestamp}
	if c, ok := m.Conditions.Get(ConditionReady); ok && c.LastTransitionTime.After(w.changedAt) {
		w.changedAt = c.LastTransitionTime
	}
	if m.DeletionTimestamp.After(w.changedAt) {
		w.changedAt = m.DeletionTimestamp
	}
	if ix.upgrades != nil {
		w.nu = ix.upgrades[m.Name]
		w.nuActive = w.nu != nil && !w.nu.Completed
		if nu := w.nu; nu != nil {
			// In place, the machine is neither made nor deleted: its
			// upgrade's steps are its visible changes (a group whose nodes
			// upgraded one after another read as stalled from the start).
			if nu.CreationTimestamp.After(w.changedAt) {
				w.changedAt = nu.CreationTimestamp
			}
			for _, c := range nu.Conditions {
				if c.LastTransitionTime.After(w.changedAt) {
					w.changedAt = c.LastTransitionTime
				}
			}
		}
	}
	return w
}

func (ix *index) add(m mach) {
	switch m.Role {
	case RoleEtcd:
		ix.etcd = append(ix.etcd, m)
	case RoleControlPlane:
		ix.cp = append(ix.cp, m)
	default:
		ix.workers = append(ix.workers, m)
	}
}

// machine finds a machine by name.
func (ix *index) machine(name string) *Machine {
	for _, group := range [][]mach{ix.etcd, ix.cp, ix.workers} {
		i := sort.Search(len(group), func(i int) bool { return group[i].Name >= name })
		if i < len(group) && group[i].Name == name {
			return group[i].Machine
		}
	}
	return nil
}

// node finds a node by name in the sorted node list.
func (ix *index) node(name string) *Node {
	if name == "" {
		return nil
	}
	if ix.nodeByName != nil {
		return ix.nodeByName[name]
	}
	ns := ix.s.Nodes
	i := sort.Search(ns.Len(), func(i int) bool { return ns.At(i).Name >= name })
	if i < ns.Len() && ns.At(i).Name == name {
		return ns.At(i)
	}
	return nil
}

func (ix *index) request(k Kind, target string) *UpgradeRequest {
	if target == "" {
		return nil
	}
	for i := range ix.s.UpgradeRequests {
		r := &ix.s.UpgradeRequests[i]
		if r.Kind == k && r.Target == target {
			return r
		}
	}
	return nil
}

// inPlaceUpgraded is how many of an in-place upgrade request's machines are
// upgraded, of how many. EKS-A's ControlPlaneUpgrade and
// MachineDeploymentUpgrade controllers count, in their status, the listed
// machines whose NodeUpgrade is completed; but they write that count only when
// they next reconcile (they watch their own kind, not NodeUpgrades, and
// requeue every 10 s), so the status lags the NodeUpgrades by up to that
// long. The phase counts a machine upgraded by the same NodeUpgrade of this
// snapshot (MachineOnTarget): read from the status, one line said "4/4 nodes
// upgraded and ready" beside "mgmt-md-0 in-place 1/2 upgraded". So the rule
// is applied here to the NodeUpgrades the phase counts from; the status
// stands in only while they are not all in view (not synced, forbidden) or
// the request lists no machines.
func (ix *index) inPlaceUpgraded(r *UpgradeRequest) (upgraded, total int64) {
	src := ix.s.Source(KindNodeUpgrade)
	if len(r.Machines) == 0 || (ix.s.Sources != nil && (!src.Synced || src.Forbidden != "")) {
		return r.Upgraded, r.Upgraded + r.RequireUpgrade
	}
	for _, m := range r.Machines {
		if nu := ix.upgrades[m]; nu != nil && nu.Completed {
			upgraded++
		}
	}
	return upgraded, int64(len(r.Machines))
}

// machineReady is readyWith, looking the node up only when the Machine has
// no Ready condition (the lookup is most of the cost at fleet scale).
func (ix *index) machineReady(m *Machine) bool {
	if m.Role != RoleEtcd {
		if _, ok := m.Conditions.Get(ConditionReady); !ok {
			return readyWith(m, ix.node(m.NodeName))
		}
	}
	return readyWith(m, nil)
}

// CAPI Machine condition types (v1beta2).
const (
	MachineConditionUpToDate            = "UpToDate"
	MachineConditionInfrastructureReady = "InfrastructureReady"
	MachineConditionBootstrapReady      = "BootstrapConfigReady"
	MachineConditionNodeHealthy         = "NodeHealthy"
	MachineConditionNodeReady           = "NodeReady"
	MachineConditionDeleting            = "Deleting"
)

// Deleting reports whether the object has a deletionTimestamp.
func (m *Meta) Deleting() bool { return !m.DeletionTimestamp.IsZero() }

// Stale reports whether the status lags the spec.
func (e *EtcdCluster) Stale() bool { return e.Generation != e.ObservedGeneration }

// Stale reports whether the status lags the spec.
func (c *ControlPlane) Stale() bool { return c.Generation != c.ObservedGeneration }

// Stale reports whether the status lags the spec.
func (md *MachineDeployment) Stale() bool { return md.Generation != md.ObservedGeneration }
