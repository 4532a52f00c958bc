package model

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// DefaultStaleAfter is how long a spec change may go unobserved by the EKS-A
// controller before it is reported: a healthy controller observes a new
// generation within seconds, and observedGeneration only advances when a
// reconcile ends without error (aws/eks-anywhere#7614 looped for an hour).
const DefaultStaleAfter = 2 * time.Minute

// Reasons a NodeUpgrade step condition carries. EKS-A puts the human sentence
// in the reason and leaves the message empty.
const nodeUpgradeFailedPrefix = "Container exited with a non-zero exit code"

// Stalls lists what has made no progress for longer than opts.StallAfter, and
// NodeUpgrade steps that failed (at once). Each entry names the object that
// blocks the upgrade and what it waits for, from the timestamps the snapshot
// carries (creation, deletion, condition transitions); failures first, then
// the longest stall.
func Stalls(s *ClusterState, opts ProgressOptions, now time.Time) []Stall {
	if s == nil {
		return nil
	}
	return stalls(s, newIndex(s, nil), opts, now)
}

func stalls(s *ClusterState, ix *index, opts ProgressOptions, now time.Time) []Stall {
	after := opts.stallAfter()
	if d := ix.d; d != nil && d.saying == nil {
		d.saying = map[*Machine]saidStall{}
	}
	warn := warnings(s.Events)
	var out []Stall
	add := func(st Stall) {
		if len(warn) == 0 {
			// Most derivations: no Warning event to look a stall up by.
		} else if ev, ok := warn[st.Kind.Short()+"/"+st.Name]; ok {
			st.Sentence += "; last warning: " + ev.Reason + ": " + oneLine(ev.Message)
		}
		out = append(out, st)
	}

	if c := s.Cluster; c != nil && c.Stale() && !c.SpecChangedAt.IsZero() {
		if d := now.Sub(c.SpecChangedAt); d > opts.staleAfter() {
			why := "the EKS-A controller has not finished a reconcile without error"
			if c.Paused() {
				why = "reconcile is paused (" + AnnotationEKSAPaused + ")"
			}
			add(Stall{Kind: KindEKSACluster, Name: c.Name, Since: c.SpecChangedAt, For: d,
				Sentence: fmt.Sprintf("EKS-A Cluster %s generation %d not observed for %s (observed %d): %s",
					c.Name, c.Generation, ShortDuration(d), c.ObservedGeneration, why)})
		}
	}

	for _, nu := range ix.activeNUs {
		if st, ok := nodeUpgradeStall(nu, ix, after, now); ok {
			add(st)
		}
	}
	for i := range ix.etcd {
		if st, ok := machineStall(&ix.etcd[i], ix, after, now); ok {
			add(st)
		}
	}
	for _, group := range [][]mach{ix.cp, ix.workers} {
		for i := range group {
			m := &group[i]
			if m.nuActive {
				continue // the NodeUpgrade's step says more
			}
			if st, ok := machineStall(m, ix, after, now); ok {
				add(st)
			}
		}
	}
	if st, ok := etcdRolloutStall(s, ix, after, now); ok {
		add(st)
	}
	if st, ok := kcpStall(s, ix, after, now); ok {
		add(st)
	}
	for i := range s.MachineDeployments {
		if st, ok := mdStall(&s.MachineDeployments[i], ix, after, now); ok {
			add(st)
		}
	}
	if d := ix.d; d != nil {
		d.said, d.saying = d.saying, d.said
		clear(d.saying)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Failed != out[j].Failed {
			return out[i].Failed
		}
		return out[i].For > out[j].For
	})
	return out
}

// Short is the kind without its group, as Events name it.
func (k Kind) Short() string {
	if i := strings.IndexByte(string(k), '.'); i >= 0 {
		return string(k[:i])
	}
	return string(k)
}

// warnings indexes the newest Warning event per object ("Kind/name").
func warnings(evs []Event) map[string]Event {
	w := map[string]Event{}
	for _, e := range evs { // newest first
		if e.Type != "Warning" {
			continue
		}
		k := e.ObjectKind + "/" + e.ObjectName
		if _, ok := w[k]; !ok {
			w[k] = e
		}
	}
	return w
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return s
}

func roleName(r MachineRole) string {
	switch r {
	case RoleEtcd:
		return "etcd machine"
	case RoleControlPlane:
		return "control-plane machine"
	default:
		return "worker machine"
	}
}

// machineStall reports a machine that has been not ready, or deleting, for
// longer than the threshold.
func machineStall(m *mach, ix *index, after time.Duration, now time.Time) (Stall, bool) {
	if m.deleting {
		d := now.Sub(m.DeletionTimestamp)
		if d <= after {
			return Stall{}, false
		}
		return Stall{Kind: KindMachine, Name: m.Name, Since: m.DeletionTimestamp, For: d,
			Sentence: ix.machineSentence(m, d, nil)}, true
	}
	if m.ready {
		return Stall{}, false
	}
	since := m.CreationTimestamp
	if c, ok := m.Conditions.Get(ConditionReady); ok && c.LastTransitionTime.After(since) {
		since = c.LastTransitionTime
	}
	if since.IsZero() {
		return Stall{}, false
	}
	d := now.Sub(since)
	if d <= after {
		return Stall{}, false
	}
	var n *Node
	if m.Role != RoleEtcd {
		n = ix.node(m.NodeName)
	}
	return Stall{Kind: KindMachine, Name: m.Name, Since: since, For: d,
		Sentence: ix.machineSentence(m, d, n)}, true
}

// saidStall is a machine's stall sentence and what it was built from.
type saidStall struct {
	node     *Node
	shown    time.Duration // the duration as ShortDuration rounds it
	sentence string
}

// machineSentence is machineStall's sentence. A fleet mid-rollout can hold
// hundreds of machines not ready at once, each sentence built from a dozen
// strings on every derivation (half of what the dashboard's rebuild
// allocated at 10,000 nodes): a Deriver keeps each one while the machine
// (immutable: the same pointer, the same object), its node and the
// duration as said are the same.
func (ix *index) machineSentence(m *mach, d time.Duration, n *Node) string {
	shown := shortDurationFloor(d)
	// Not kept where the sentence rests on more than the machine and its
	// node: Nodes forbidden, or on another API server (a workload cluster).
	memo := ix.d != nil && ix.s.Source(KindNode).Forbidden == "" && !ix.s.NodesElsewhere()
	if memo {
		if p, ok := ix.d.said[m.Machine]; ok && p.node == n && p.shown == shown {
			ix.d.saying[m.Machine] = p
			return p.sentence
		}
	}
	var s string
	if m.deleting {
		why := "waiting for drain and deletion"
		if c, ok := m.Conditions.Get(MachineConditionDeleting); ok && (c.Reason != "" || c.Message != "") {
			why = reasonText(c)
		}
		s = roleName(m.Role) + " " + m.Name + " deleting for " + ShortDuration(d) + ": " + oneLine(why)
	} else {
		s = roleName(m.Role) + " " + m.Name + " not ready for " + ShortDuration(d) + ": " + machineWaits(m.Machine, ix)
	}
	if memo {
		ix.d.saying[m.Machine] = saidStall{node: n, shown: shown, sentence: s}
	}
	return s
}

// machineWaits says what a machine that is not ready waits for.
func machineWaits(m *Machine, ix *index) string {
	var parts []string
	if m.Role == RoleEtcd {
		parts = append(parts, "no etcd-ready label")
	}
	phase := m.Phase
	if phase == "" {
		phase = "unknown"
	}
	parts = append(parts, "Machine phase "+phase)
	if m.Role != RoleEtcd {
		switch n := ix.node(m.NodeName); {
		case m.NodeName == "":
			parts = append(parts, "no node yet")
		case n == nil && ix.s.NodesElsewhere():
			// A workload cluster's Nodes are on its own API server:
			// none was looked for here (NodeHealthy below says more).
		case n == nil && ix.s.Source(KindNode).Forbidden != "":
			// Nodes unreadable to this identity: not found would
			// claim a look never taken (NodeHealthy below says more).
			parts = append(parts, "node "+m.NodeName+" not readable (Nodes forbidden)")
		case n == nil:
			parts = append(parts, "node "+m.NodeName+" not found")
		case !n.Ready:
			parts = append(parts, "node "+m.NodeName+" NotReady")
		}
	}
	for _, t := range []string{MachineConditionBootstrapReady, MachineConditionInfrastructureReady, MachineConditionNodeHealthy, ConditionReady} {
		if c, ok := m.Conditions.Get(t); ok && !c.IsTrue() && (c.Reason != "" || c.Message != "") {
			parts = append(parts, t+" "+c.Status+" ("+oneLine(reasonText(c))+")")
			break
		}
	}
	return strings.Join(parts, ", ")
}

// nodeUpgradeStall reports the first step of an in-place node upgrade that
// failed, or that has not completed for longer than the threshold.
func nodeUpgradeStall(nu *NodeUpgrade, ix *index, after time.Duration, now time.Time) (Stall, bool) {
	if nu.Completed || nu.Deleting() {
		return Stall{}, false
	}
	node := ix.nodeOf(nu)
	failure, failed := ix.s.NodeStepFailure(nu, node)
	prev := nu.CreationTimestamp // when the previous step finished
	for _, step := range NodeUpgradeSteps {
		c, ok := nu.Conditions.Get(step)
		if ok && c.IsTrue() {
			if c.LastTransitionTime.After(prev) {
				prev = c.LastTransitionTime
			}
			continue
		}
		if failed && failure.Step == step && failure.Container != nil {
			// The kubelet reruns the container: the condition's time
			// restarts at each run. Since is the step's start, for the
			// sentence; the judge times the failure from FailedAt.
			since := prev
			if failure.Pod.CreationTimestamp.After(since) {
				since = failure.Pod.CreationTimestamp
			}
			d := now.Sub(since)
			st := Stall{Kind: nu.Kind, Name: nu.Name, Since: since, For: d, Failed: true, SinceStep: true,
				FailedAt: failure.Container.FirstFailure(since)}
			failedHow := "failed"
			st.Resume = nodeRetry(ix.s, node)
			if failure.Rerun() {
				// No retry while it runs: deleting the pod would kill
				// the rerun, and node retry refuses to. Whether the
				// step fails again is a moment away, so the stall
				// still says what follows if it does.
				failedHow = "failed and runs again"
				st.Resume = "if it fails again, " + st.Resume
			}
			st.Sentence = fmt.Sprintf("node %s in-place step %s %s (the step began %s ago): %s", node, step, failedHow, ShortDuration(d), failure.Reason())
			return st, true
		}
		since := prev
		why := "not reported yet"
		if ok {
			why = oneLine(reasonText(c))
			if c.LastTransitionTime.After(since) {
				since = c.LastTransitionTime
			}
			if failed && failure.Step == step {
				d := now.Sub(since)
				return Stall{Kind: nu.Kind, Name: nu.Name, Since: since, For: d, Failed: true,
					Sentence: fmt.Sprintf("node %s in-place step %s failed %s ago: %s", node, step, ShortDuration(d), why),
					Resume:   nodeRetry(ix.s, node)}, true
			}
		}
		if since.IsZero() {
			return Stall{}, false
		}
		d := now.Sub(since)
		if d <= after {
			return Stall{}, false
		}
		if p := podOf(nu, ix.s.UpgraderPodOf(node)); p != nil {
			// A wait the NodeUpgrade reads as "waiting to be initialized"
			// (an image that cannot be pulled) says why in the pod.
			if uc := p.StepContainer(step); uc != nil && uc.Failing() {
				why = "container " + uc.Name + " " + uc.State.String()
			}
		}
		return Stall{Kind: nu.Kind, Name: nu.Name, Since: since, For: d,
			Sentence: fmt.Sprintf("node %s in-place step %s waiting for %s: %s", node, step, ShortDuration(d), why)}, true
	}
	return Stall{}, false
}

// nodeRetry is how the upgrade gets past a failed in-place step: EKS-A
// runs the steps again only when the upgrader pod is recreated. A workload
// cluster's upgrader pod is on its own API server, where node retry does
// not reach (it refuses, naming the same command): the advice is the
// command that deletes it there.
func nodeRetry(s *ClusterState, node string) string {
	if s.NodesElsewhere() {
		return RetryOnOwnAPIServer(s.Cluster.Name, node) + ", on " + s.Cluster.Name + "'s own API server, runs its steps again once the cause is fixed"
	}
	cluster := ""
	if s.Cluster != nil {
		cluster = " " + s.Cluster.ClusterFlags(s.Conn)
	}
	return "`upgrade-console node retry " + node + cluster + "` runs its steps again once the cause is fixed"
}

// nodeOf names the node a NodeUpgrade works on (its machine's, else the
// machine's name).
func (ix *index) nodeOf(nu *NodeUpgrade) string {
	if m := ix.machine(nu.MachineName); m != nil && m.NodeName != "" {
		return m.NodeName
	}
	return nu.MachineName
}

// lastChange is the newest creation or Ready transition among machines:
// the last sign that a rollout moved.
func lastChange(ms []mach, floor time.Time) time.Time { return lastChangeOf(ms, floor, "") }

// lastChangeOf is lastChange over the machines of one owner ("" for all).
func lastChangeOf(ms []mach, floor time.Time, owner string) time.Time {
	t := floor
	for i := range ms {
		m := &ms[i]
		if owner != "" && m.owner != owner {
			continue
		}
		if m.changedAt.After(t) {
			t = m.changedAt
		}
	}
	return t
}

func etcdRolloutStall(s *ClusterState, ix *index, after time.Duration, now time.Time) (Stall, bool) {
	e := s.Etcd
	if e == nil || (e.Ready && !e.Upgrading() && !e.Stale()) {
		return Stall{}, false
	}
	start := time.Time{}
	cond, hasCond := e.Conditions.Get(EtcdConditionMachinesSpecUpToDate)
	if hasCond && !cond.IsTrue() {
		start = cond.LastTransitionTime
	}
	t := lastChange(ix.etcd, start)
	if t.IsZero() || now.Sub(t) <= after {
		return Stall{}, false
	}
	d := now.Sub(t)
	ph := etcdPhase(s, ix)
	if r, ok := s.Cluster.EtcdRollback(); ok {
		// Its members match the spec put back, which the phase alone
		// counted as "3/3 members upgraded".
		rolledBack(&ph, &r)
	}
	why := ph.Detail
	if hasCond && !cond.IsTrue() {
		why += "; " + EtcdConditionMachinesSpecUpToDate + " " + oneLine(reasonText(cond))
	}
	return Stall{Kind: KindEtcdadmCluster, Name: e.Name, Since: t, For: d,
		Sentence: fmt.Sprintf("etcd cluster %s rollout waiting for %s: %s", e.Name, ShortDuration(d), why)}, true
}

// rolloutStart is the earliest a rollout can have waited since: its
// RollingOut condition turning True, and never before the owner was handed
// its new spec (specChanged). Before RollingOut turns True, the machines'
// own times (days old on a real cluster) read as a stall the moment the
// phase began.
func rolloutStart(specChanged time.Time, cs Conditions) time.Time {
	if c, ok := cs.Get("RollingOut"); ok && c.IsTrue() && c.LastTransitionTime.After(specChanged) {
		return c.LastTransitionTime
	}
	return specChanged
}

func kcpStall(s *ClusterState, ix *index, after time.Duration, now time.Time) (Stall, bool) {
	kcp := s.ControlPlane
	if kcp == nil {
		return Stall{}, false
	}
	if kcp.Paused() && s.Etcd != nil && s.Etcd.Ready && !s.Etcd.Upgrading() && !s.Etcd.Stale() {
		// EKS-A unpauses the control plane once etcd is ready; a pause that
		// outlives that is the annotation left behind (aws/eks-anywhere#5811).
		since := time.Time{}
		if c, ok := s.Etcd.Conditions.Get(ConditionReady); ok {
			since = c.LastTransitionTime
		}
		if c, ok := kcp.Conditions.Get("Paused"); ok && c.IsTrue() && c.LastTransitionTime.After(since) {
			since = c.LastTransitionTime
		}
		// EKS-A pauses the control plane, then marks etcd upgrading: seen
		// between the two writes (separate watches), a pause set a moment
		// ago would read as left behind since etcd was last ready, days
		// before. CAPI's Paused condition comes later still.
		if kcp.ChangedAt.After(since) {
			since = kcp.ChangedAt
		}
		if !since.IsZero() && now.Sub(since) > after {
			d := now.Sub(since)
			return Stall{Kind: KindKubeadmControlPlane, Name: kcp.Name, Since: since, For: d,
				Sentence: fmt.Sprintf("control plane %s paused for %s although etcd is ready: %s annotation still set",
					kcp.Name, ShortDuration(d), AnnotationCAPIPaused)}, true
		}
	}
	ph := controlPlanePhase(s, ix)
	if ph.Status != PhaseActive {
		return Stall{}, false
	}
	t := lastChange(ix.cp, rolloutStart(kcp.ChangedAt, kcp.Conditions))
	if t.IsZero() || now.Sub(t) <= after {
		return Stall{}, false
	}
	d := now.Sub(t)
	return Stall{Kind: KindKubeadmControlPlane, Name: kcp.Name, Since: t, For: d,
		Sentence: fmt.Sprintf("control plane %s rollout waiting for %s: %s", kcp.Name, ShortDuration(d), ph.Detail)}, true
}

func mdStall(md *MachineDeployment, ix *index, after time.Duration, now time.Time) (Stall, bool) {
	desired, counter := int32(0), int32(0)
	if md.Replicas.Desired != nil {
		desired = *md.Replicas.Desired
	}
	if md.Replicas.UpToDate != nil {
		counter = *md.Replicas.UpToDate
	} else {
		return Stall{}, false
	}
	if counter >= desired && !md.Stale() {
		return Stall{}, false
	}
	t := lastChangeOf(ix.workers, rolloutStart(md.SpecChangedAt, md.Conditions), md.Name)
	if t.IsZero() || now.Sub(t) <= after {
		return Stall{}, false
	}
	d := now.Sub(t)
	// The same count as the workers phase, so the stall line and the status
	// line agree; the deployment's own counter only when no machine is listed.
	done, counted := int(counter), "up to date by its count"
	if len(ix.workers) > 0 {
		done, counted = 0, workerUnit(ix.s)+" "+countedUpgraded
		tg := workerTarget(ix.s.Cluster, md)
		for i := range ix.workers {
			if m := &ix.workers[i]; m.owner == md.Name && upToDate(m.Machine, m.ready, m.nu, tg) {
				done++
			}
		}
	}
	return Stall{Kind: KindMachineDeployment, Name: md.Name, Since: t, For: d,
		Sentence: fmt.Sprintf("worker group %s rollout waiting for %s: %d/%d %s", md.Name, ShortDuration(d), done, desired, counted)}, true
}
