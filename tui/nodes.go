package tui

import (
	"strconv"
	"strings"
	"time"

	"github.com/upgrade-console/upgrade-console/model"
)

// nodeRow is one line of the nodes table: a machine (with its node and
// in-place upgrade) or a group of settled siblings.
type nodeRow struct {
	mark                  seg
	name, role            string
	phase, version        string
	phaseRole             role
	stepsDone, stepsTotal int
	stepFailed            bool
	stepText              string
	// firstCP: its in-place upgrade is the first node's
	// (NodeUpgrade.FirstNodeToBeUpgraded, as watch --plain and the node
	// detail name it), whose kubeadm step runs `kubeadm upgrade apply`
	// and upgrades the control plane's components for all the others.
	// The ROLE column says "cp 1st".
	firstCP bool
	since   time.Time
	// settled rows (up to date, running, ready, nothing in progress) fold
	// into their owner's group row unless expanded or filtered.
	settled bool
	// fold names the group a row folds into (foldNone: shown on its own).
	// At fleet scale most machines are up to date, waiting their turn or
	// leaving; the few that move are what the table must show.
	fold  foldKind
	owner string
	// group > 0 marks a group row standing for that many settled rows.
	group int
	// machine is the Machine's name (name is its Node's when it has one);
	// empty for a Node no Machine claims. A group row holds its first
	// machine's, which the node detail opens.
	machine string
}

// foldKind is a state siblings share, in the order groups are listed.
type foldKind uint8

const (
	foldNone foldKind = iota
	foldLeaving
	foldWaiting
	foldUpToDate
	foldKinds
)

// matches reports whether the row contains the (lower-case) filter text in
// any of its columns or in the state its mark shows, as the nodes title
// counts it ("failed", "stalled"): among thousands of rows the one the
// title counts as failed, or a stall the status line has no room for
// ("(+23 more)"), was found by no filter.
func (r *nodeRow) matches(f string) bool {
	for _, s := range [...]string{r.name, r.roleText(), r.phase, r.version, r.stepText, r.state()} {
		if containsFold(s, f) {
			return true
		}
	}
	return false
}

// roleText is the ROLE column's word: the role, and for the first node
// to be upgraded in place, "1st" after it.
func (r *nodeRow) roleText() string {
	if r.firstCP {
		return r.role + " 1st"
	}
	return r.role
}

// first says whether the row is listed before every owner's: a failed or
// stalled machine's (groupRowsInto).
func (r *nodeRow) first() bool {
	return r.fold == foldNone && (r.mark.r == rSevError || r.mark.r == rStall)
}

// state is the word for what the row's mark shows, as the nodes title
// counts it.
func (r *nodeRow) state() string {
	switch {
	case r.mark.r == rSevError:
		return "failed"
	case r.mark.r == rStall:
		return "stalled"
	case r.settled:
		return "up to date"
	case r.mark.r == rSevInfo:
		return "in progress"
	}
	return ""
}

// containsFold is strings.Contains ignoring ASCII case, without allocating
// (the filter runs over every row on every keystroke).
func containsFold(s, lowerSub string) bool {
	n := len(lowerSub)
	if n == 0 {
		return true
	}
outer:
	for i := 0; i+n <= len(s); i++ {
		for j := 0; j < n; j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != lowerSub[j] {
				continue outer
			}
		}
		return true
	}
	return false
}

// rowJoin joins Machines, Nodes and NodeUpgrades into table rows, in the
// snapshot's machine order (control plane, then workers by name; etcd
// machines have their own pane), and remembers what each row was built
// from. The watchers share every unchanged object between snapshots, so a
// row whose machine, node, in-place upgrade, target and stall mark are the
// same pointers and values as last time is kept as it is: at 10,000 nodes a
// status change rebuilds one row instead of 10,000 (it was 18 % of the
// console's CPU at 100 writes a second, and most of its garbage). The
// lookups by name are rebuilt only when their list changed.
type rowJoin struct {
	st *styles

	nodesFrom model.List[model.Node]
	nodeAt    map[string]int // node name → index in nodesFrom
	nusFrom   model.List[model.NodeUpgrade]
	upgrades  map[string]*model.NodeUpgrade // machine name → its NodeUpgrade

	// targets is what each owner's machines are upgraded to, kept while
	// the objects it is read from are the same (targetsFrom): a map per
	// snapshot was garbage on every status change at 10,000 nodes.
	targets     map[string]target
	targetsFrom targetInputs

	rows []nodeRow
	src  []rowSrc // what rows[i] was built from
	seen []bool   // per node: some machine shows it
	// stalledKey is the key of the stall set src's stalled marks were
	// asked of.
	stalledKey string
}

// targetInputs are the objects the targets are read from. The watchers
// publish a new object (and a new MachineDeployment slice) when one changes,
// so the same pointers mean the same targets.
type targetInputs struct {
	cluster *model.EKSACluster
	cp      *model.ControlPlane
	mds     *model.MachineDeployment
	nmd     int
	name    string
}

// rowSrc is everything a row is a function of.
type rowSrc struct {
	m      *model.Machine
	n      *model.Node
	nodeAt int // index of n in the node list, -1 without one
	nu     *model.NodeUpgrade
	// pod is the node's upgrader pod while nu runs: whether a step failed
	// is read from it first (model.StepFailureOf).
	pod     *model.UpgraderPod
	tg      target
	stalled bool
	// elsewhere: the cluster's Nodes are on its own API server
	// (model.ClusterState.NodesElsewhere); n is nil, and the Machine
	// says how its Node is.
	elsewhere bool
}

// join returns the rows for s. The returned slice is owned by the join and
// changes at the next call.
func (j *rowJoin) join(st *styles, s *model.ClusterState, stalled stallSet) []nodeRow {
	if s == nil {
		j.rows, j.src = j.rows[:0], j.src[:0]
		return j.rows
	}
	if st != j.st {
		j.st, j.src = st, j.src[:0] // a new theme changes every row
	}
	nodesSame := s.Nodes.Same(j.nodesFrom) && j.nodeAt != nil
	if !nodesSame {
		j.nodeAt = make(map[string]int, s.Nodes.Len())
		for i, n := range s.Nodes.All() {
			j.nodeAt[n.Name] = i
		}
		j.nodesFrom = s.Nodes
	}
	nusSame := s.NodeUpgrades.Same(j.nusFrom) && (j.upgrades != nil || s.NodeUpgrades.Len() == 0)
	if !nusSame {
		j.upgrades = model.NewestUpgrades(s.NodeUpgrades)
		j.nusFrom = s.NodeUpgrades
	}
	targetsFrom := j.targetsFrom
	targets := j.targetsOf(s)
	targetsSame := j.targetsFrom == targetsFrom && j.src != nil
	cpName := ""
	if s.ControlPlane != nil {
		cpName = s.ControlPlane.Name
	}
	prefix := s.ClusterName + "-"
	stalledSame := stalled.key == j.stalledKey
	j.stalledKey = stalled.key
	elsewhere := s.NodesElsewhere()
	j.seen = resize(j.seen, s.Nodes.Len())
	clear(j.seen)
	k := 0 // next row
	// Machines come in name order, a group's together: the target is
	// looked up once per run of one owner, not hashed per machine.
	lastOwner, tg, looked := "", target{}, false
	for _, m := range s.Machines.All() {
		if old := j.prev(k); old != nil && old.m == m && nodesSame && nusSame && targetsSame && stalledSame && old.elsewhere == elsewhere {
			// The row of the same Machine with every list and set it was
			// joined with the same: only its upgrader pod may have moved.
			// Not even the Machine is read (at 10,000 machines, reading
			// each one's role and owner was a third of the join).
			src := *old
			if src.nu != nil && !src.nu.Completed {
				src.pod = s.UpgraderPodOf(nodeOf(m))
			}
			if src.nodeAt >= 0 {
				j.seen[src.nodeAt] = true
			}
			if src.pod != old.pod {
				j.put(k, src, prefix)
			}
			k++
			continue
		}
		if m.Role == model.RoleEtcd {
			continue
		}
		owner := m.Owner
		if m.Role == model.RoleControlPlane && cpName != "" {
			// The model holds every control-plane machine to the
			// KubeadmControlPlane's target, whatever its owner reference.
			owner = cpName
		}
		if !looked || owner != lastOwner {
			lastOwner, tg, looked = owner, targets[owner], true
		}
		src := rowSrc{m: m, nodeAt: -1, tg: tg, elsewhere: elsewhere}
		if old := j.prev(k); old != nil && old.m == m && nodesSame && nusSame {
			src.n, src.nodeAt, src.nu = old.n, old.nodeAt, old.nu
		} else {
			if i, ok := j.nodeAt[nodeOf(m)]; ok {
				src.n, src.nodeAt = s.Nodes.At(i), i
			}
			if j.upgrades != nil {
				src.nu = j.upgrades[m.Name]
			}
		}
		if src.nu != nil && !src.nu.Completed {
			src.pod = s.UpgraderPodOf(nodeOf(m))
		}
		if src.nodeAt >= 0 {
			j.seen[src.nodeAt] = true
		}
		if old := j.prev(k); old != nil && old.m == m && old.nu == src.nu && stalledSame {
			// Asked once per machine and stall set: hashing 10,000
			// names into the set was a sixth of a rebuild.
			src.stalled = old.stalled
		} else {
			src.stalled = stalled.has(model.KindMachine, m.Name) || (src.nu != nil && stalled.has(src.nu.Kind, src.nu.Name))
		}
		j.put(k, src, prefix)
		k++
	}
	for i, n := range s.Nodes.All() {
		if !j.seen[i] {
			j.put(k, rowSrc{n: n, nodeAt: i}, prefix)
			k++
		}
	}
	j.rows, j.src = j.rows[:k], j.src[:k]
	return j.rows
}

// nodeOf is the name of m's Node: its nodeRef, or before CAPI has set it
// (seconds after the Node registers, longer on slow infrastructure) the
// Machine's own name, which the Node of a vSphere, Docker or CloudStack
// machine carries. The Node was listed apart, as a second row marked up to
// date with "no machine".
func nodeOf(m *model.Machine) string {
	if m.NodeName != "" {
		return m.NodeName
	}
	return m.Name
}

// targetsOf returns each owner's target: the version from the model
// (model.MachineTargets, so the rows and the phase counts agree on "up to
// date") and whether it is reached in place.
func (j *rowJoin) targetsOf(s *model.ClusterState) map[string]target {
	in := targetInputs{cluster: s.Cluster, cp: s.ControlPlane, mds: first(s.MachineDeployments),
		nmd: len(s.MachineDeployments), name: s.ClusterName}
	if j.targets != nil && in == j.targetsFrom {
		return j.targets
	}
	mts := model.MachineTargets(s)
	targets := make(map[string]target, len(mts))
	for i := range s.MachineDeployments {
		md := &s.MachineDeployments[i]
		targets[md.Name] = target{mts[md.Name], md.RolloutStrategy == "InPlace" ||
			md.Annotations[model.AnnotationMDInPlaceUpgradeNeeded] == "true" || groupInPlace(s, md.Name)}
	}
	if cp := s.ControlPlane; cp != nil {
		targets[cp.Name] = target{mts[cp.Name], cp.RolloutStrategy == "InPlace" ||
			cp.Annotations[model.AnnotationKCPInPlaceUpgradeNeeded] == "true" ||
			(s.Cluster != nil && s.Cluster.ControlPlaneRolloutStrategy == "InPlace")}
	}
	j.targets, j.targetsFrom = targets, in
	return targets
}

// controlPlaneCount is the control plane's "up to date" by the model's rule.
type controlPlaneCount struct {
	// upToDate counts the machines model.MachineUpToDate says are up to
	// date, of live ones: the control-plane machines not being deleted.
	upToDate, live int
	// target is the KubeadmControlPlane's, as the rows hold it.
	target model.MachineTarget
}

// controlPlaneCount counts the control-plane machines of the last join. It
// reads the rows' sources, so the CONTROL PLANE pane's title judges each
// machine with the same node, newest in-place upgrade and target as its row
// in the nodes table, and no lookup is built twice.
func (j *rowJoin) controlPlaneCount(s *model.ClusterState) controlPlaneCount {
	var c controlPlaneCount
	if s == nil || s.ControlPlane == nil {
		return c
	}
	c.target = j.targets[s.ControlPlane.Name].MachineTarget
	for i := range j.src {
		src := &j.src[i]
		// The snapshot lists machines by role (etcd, control plane,
		// workers) and the join leaves etcd's out: the control plane's
		// rows come first, and at fleet scale the 10,000 workers' after
		// them need not be read.
		if src.m == nil || src.m.Role != model.RoleControlPlane {
			break
		}
		if src.m.Deleting() {
			continue
		}
		c.live++
		if model.MachineUpToDate(src.m, src.n, src.nu, src.tg.MachineTarget) {
			c.upToDate++
		}
	}
	return c
}

// prev is what row k was built from last time, nil when it is new.
func (j *rowJoin) prev(k int) *rowSrc {
	if k < len(j.src) {
		return &j.src[k]
	}
	return nil
}

// put sets row k, building it only when its inputs changed.
func (j *rowJoin) put(k int, src rowSrc, prefix string) {
	if k < len(j.src) {
		if j.src[k] == src {
			return
		}
		j.src[k], j.rows[k] = src, j.build(src, prefix)
		return
	}
	j.src, j.rows = append(j.src, src), append(j.rows, j.build(src, prefix))
}

func (j *rowJoin) build(src rowSrc, prefix string) nodeRow {
	r := machineRow(j.st, src.m, src.n, src.nu, src.pod, src.tg, prefix, src.elsewhere)
	if src.stalled && r.mark.r != rSevError {
		r.mark, r.fold = seg{j.st.th.Sym.Warn, rStall}, foldNone
	}
	return r
}

// buildNodeRows is a one-off join (tests and benchmarks).
func buildNodeRows(st *styles, s *model.ClusterState, stalled stallSet) []nodeRow {
	var j rowJoin
	return j.join(st, s, stalled)
}

func resize[T any](l []T, n int) []T {
	if cap(l) < n {
		return make([]T, n)
	}
	return l[:n]
}

// roleNodeOnly is the ROLE of a Node no Machine claims.
const roleNodeOnly = "node"

// target is the version a machine's owner wants and how it gets there.
type target struct {
	model.MachineTarget
	inPlace bool
}

func machineRow(st *styles, m *model.Machine, n *model.Node, nu *model.NodeUpgrade, pod *model.UpgraderPod, tg target, prefix string, elsewhere bool) nodeRow {
	sym := st.th.Sym
	r := nodeRow{phaseRole: rText}
	switch {
	case m == nil:
		r.name, r.role, r.phase, r.owner = n.Name, roleNodeOnly, "no machine", ""
	case m.Role == model.RoleControlPlane:
		r.role, r.owner = "cp", m.Owner
	default:
		r.role, r.owner = strings.TrimPrefix(m.Owner, prefix), m.Owner
	}
	if m != nil {
		r.name, r.machine, r.phase = m.Name, m.Name, m.Phase
		if m.NodeName != "" {
			r.name = m.NodeName
		}
		if r.phase == "" {
			r.phase = "Pending"
		}
		r.version = m.Version
		r.since = m.CreationTimestamp
	}
	ready := n != nil && n.Ready
	if n == nil && m != nil && elsewhere {
		// CAPI's reading of the Node, on the cluster's own API server.
		var known bool
		if ready, known = model.MachineNodeReady(m); known && !ready && m.NodeName != "" && r.phase == "Running" {
			r.phase = "NotReady"
		}
	}
	if n != nil {
		if n.KubeletVersion != "" {
			r.version = n.KubeletVersion
		}
		if !n.ReadySince.IsZero() {
			r.since = n.ReadySince
		}
		if !ready && r.phase == "Running" {
			r.phase = "NotReady"
		}
	}
	// On target and up to date are the model's answers (model/uptodate.go),
	// so a row's ✓ and the title's count agree with the phase counts: a
	// machine still on the old Kubernetes minor is not up to date before
	// its phase starts, whatever its owner's spec says meanwhile.
	onTarget, upToDate := true, false
	if m != nil {
		onTarget = model.MachineOnTarget(m, nu, tg.MachineTarget)
		upToDate = model.MachineUpToDate(m, n, nu, tg.MachineTarget)
	}
	// A completed in-place upgrade that does not put the machine on target
	// is an earlier upgrade's: its full bar would read as this one done.
	steps := nu != nil && (!nu.Completed || onTarget)
	inProgress := false
	if steps {
		// Of this upgrade's NodeUpgrade only: an earlier upgrade's first
		// node need not be this one's.
		r.firstCP = nu.FirstNodeToBeUpgraded
		r.stepsTotal = len(model.NodeUpgradeSteps)
		r.stepsDone, r.stepText, r.stepFailed, r.since = stepProgress(nu, pod, r.since)
		inProgress = !nu.Completed
	} else if m != nil && !onTarget {
		// Not started: how long it has been running its old version says
		// nothing about the upgrade.
		r.since = time.Time{}
		switch {
		case tg.OwnerBehind():
			// EKS-A has not given the owner the new version yet: neither
			// a replacement nor an in-place upgrade is on its way.
			r.stepText = "not started"
		case tg.inPlace:
			r.stepText = "waiting"
		default:
			r.stepText = "to be replaced"
		}
	}
	switch {
	// A machine CAPI reports failed (phase or failure message) reads as
	// failed whatever its node says; whether the upgrade failed stays
	// EKS-A's rule (model/outcome.go), which does not read it.
	case r.stepFailed || (m != nil && m.Failed()):
		r.mark, r.phaseRole = seg{sym.Fail, rSevError}, rSevError
	case m != nil && (!m.DeletionTimestamp.IsZero() || m.Phase == "Deleting"):
		r.mark, r.phase, r.phaseRole = seg{sym.Pending, rMuted}, "Deleting", rMuted
		if !onTarget {
			r.stepText = "replaced, leaving"
			r.fold = foldLeaving
		}
	case upToDate:
		// Before the readiness below: the model reads the Machine's Ready
		// condition first, and the title counts what the model counts.
		r.mark, r.settled, r.fold = seg{sym.OK, rCondTrue}, true, foldUpToDate
	case inProgress || (m != nil && m.Phase != "Running") || !ready:
		r.mark = seg{sym.Active, rSevInfo}
	case m == nil:
		// A ready node no machine claims: nothing the upgrade moves.
		r.mark = seg{sym.OK, rCondTrue}
	case !onTarget:
		r.mark = seg{sym.Pending, rMuted}
		if !steps {
			r.fold = foldWaiting
		}
	default:
		// On target with a ready node, but its Machine not Ready yet.
		r.mark = seg{sym.Active, rSevInfo}
	}
	r.version = shortVersion(r.version)
	return r
}

// stepProgress reads a NodeUpgrade's step conditions: how many steps are
// done, the step it is on (or failed at), and when its latest step changed.
func stepProgress(nu *model.NodeUpgrade, pod *model.UpgraderPod, fallback time.Time) (done int, text string, failed bool, since time.Time) {
	since = fallback
	if nu.CreationTimestamp.After(since) {
		// A NodeUpgrade with no condition yet: its step began when it was
		// created, not when the node last turned Ready (days ago).
		since = nu.CreationTimestamp
	}
	for _, c := range nu.Conditions {
		if c.LastTransitionTime.After(since) {
			since = c.LastTransitionTime
		}
	}
	if nu.Completed {
		return len(model.NodeUpgradeSteps), "done", false, since
	}
	for _, step := range model.NodeUpgradeSteps {
		c, ok := nu.Conditions.Get(step)
		if ok && c.IsTrue() {
			done++
			continue
		}
		text = step
		f, ok := model.StepFailureOf(nu, pod)
		return done, text, ok && f.Step == step, since
	}
	return done, "finishing", false, since
}

// shortVersion drops the EKS-D build suffix ("v1.30.14-eks-1-30-40" →
// "v1.30.14"): the table has no room for it and the header names the target.
func shortVersion(v string) string {
	if i := strings.Index(v, "-eks-"); i > 0 {
		return v[:i]
	}
	return v
}

// groupRowsInto folds settled siblings into one row per owner, as
// clusterctl describe groups machines with the same state. The failed
// machines come first, then the stalled ones, whatever their owner: among
// 2,000 rows in name order, the stalled machines of md-1 came after every
// md-0 machine still moving, off the screen. Then, per owner, the rows that
// move, then those leaving, waiting and up to date. In name order the few
// machines under way came after hundreds "to be replaced". Expanded or
// filtered, every (matching) row is shown, in the same order. It appends
// to out[:0], a buffer the caller keeps between rebuilds; it must not
// share memory with all.
func groupRowsInto(out []nodeRow, all []nodeRow, expand bool, filter string) []nodeRow {
	out = out[:0]
	f := strings.ToLower(filter)
	for _, mark := range [...]role{rSevError, rStall} {
		for r := range all {
			if all[r].first() && all[r].mark.r == mark && (filter == "" || all[r].matches(f)) {
				out = append(out, all[r])
			}
		}
	}
	for i := 0; i < len(all); {
		owner := all[i].owner
		j := i
		for j < len(all) && all[j].owner == owner {
			j++
		}
		block := all[i:j]
		i = j
		if expand || filter != "" {
			for k := foldNone; k < foldKinds; k++ {
				for r := range block {
					if block[r].fold == k && !block[r].first() && (filter == "" || block[r].matches(f)) {
						out = append(out, block[r])
					}
				}
			}
			continue
		}
		var groups [foldKinds]foldedRows
		for r := range block {
			if k := block[r].fold; k != foldNone {
				groups[k].add(&block[r])
				continue
			}
			if !block[r].first() {
				out = append(out, block[r])
			}
		}
		for k := foldNone + 1; k < foldKinds; k++ {
			out = groups[k].appendTo(out, owner)
		}
	}
	return out
}

// foldedRows counts the rows one group row stands for.
type foldedRows struct {
	n           int
	first, last *nodeRow
}

func (f *foldedRows) add(r *nodeRow) {
	if f.n == 0 {
		f.first = r
	}
	f.n, f.last = f.n+1, r
}

// appendTo adds the group row, or the single row when there is just one.
func (f *foldedRows) appendTo(out []nodeRow, owner string) []nodeRow {
	switch {
	case f.n == 1:
		return append(out, *f.last)
	case f.n > 1:
		return append(out, nodeRow{group: f.n, role: f.last.role, owner: owner, mark: f.last.mark,
			fold: f.last.fold, stepText: f.last.stepText, machine: f.first.machine})
	}
	return out
}

// groupText is what a group row says.
func groupText(r *nodeRow) string {
	what := r.role + " workers"
	if r.role == "cp" {
		what = "control plane nodes"
	}
	state := "up to date"
	switch {
	case r.fold == foldLeaving:
		state = "replaced, being deleted"
	case r.fold == foldWaiting && r.stepText == "waiting":
		state = "waiting for their in-place upgrade"
	case r.fold == foldWaiting:
		state = r.stepText // "to be replaced", "not started"
	}
	return strconv.Itoa(r.group) + " " + what + " " + state + " (e to expand)"
}

// groupInPlace reports whether the EKS-A spec asks for in-place upgrades of
// the worker group behind a MachineDeployment (named <cluster>-<group>).
func groupInPlace(s *model.ClusterState, mdName string) bool {
	if s.Cluster == nil {
		return false
	}
	for _, g := range s.Cluster.WorkerGroups {
		if s.ClusterName+"-"+g.Name == mdName {
			return g.RolloutStrategy == "InPlace"
		}
	}
	return false
}
