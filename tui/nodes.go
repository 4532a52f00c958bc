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
	since                 time.Time
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
// any of its columns.
func (r *nodeRow) matches(f string) bool {
	for _, s := range [...]string{r.name, r.role, r.phase, r.version, r.stepText} {
		if containsFold(s, f) {
			return true
		}
	}
	return false
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

// buildNodeRows joins Machines, Nodes and NodeUpgrades into table rows, in
// the snapshot's machine order (control plane, then workers by name). Etcd
// machines have their own pane. It is O(machines + nodes + node upgrades).
func buildNodeRows(st *styles, s *model.ClusterState, stalled stallSet) []nodeRow {
	if s == nil {
		return nil
	}
	nodes := make(map[string]int, len(s.Nodes))
	for i := range s.Nodes {
		nodes[s.Nodes[i].Name] = i
	}
	upgrades := make(map[string]*model.NodeUpgrade, len(s.NodeUpgrades))
	for i := range s.NodeUpgrades {
		upgrades[s.NodeUpgrades[i].MachineName] = &s.NodeUpgrades[i]
	}
	targets := make(map[string]target, len(s.MachineDeployments)+1)
	for i := range s.MachineDeployments {
		md := &s.MachineDeployments[i]
		targets[md.Name] = target{md.Version, md.RolloutStrategy == "InPlace" ||
			md.Annotations[model.AnnotationMDInPlaceUpgradeNeeded] == "true" || groupInPlace(s, md.Name)}
	}
	if cp := s.ControlPlane; cp != nil {
		targets[cp.Name] = target{cp.Version, cp.RolloutStrategy == "InPlace" ||
			cp.Annotations[model.AnnotationKCPInPlaceUpgradeNeeded] == "true" ||
			(s.Cluster != nil && s.Cluster.ControlPlaneRolloutStrategy == "InPlace")}
	}
	prefix := s.ClusterName + "-"
	seen := make([]bool, len(s.Nodes))
	rows := make([]nodeRow, 0, len(s.Machines))
	for i := range s.Machines {
		m := &s.Machines[i]
		if m.Role == model.RoleEtcd {
			continue
		}
		var n *model.Node
		if j, ok := nodes[m.NodeName]; ok && m.NodeName != "" {
			n, seen[j] = &s.Nodes[j], true
		}
		var nu *model.NodeUpgrade
		if len(upgrades) > 0 {
			nu = upgrades[m.Name]
		}
		r := machineRow(st, m, n, nu, targets[m.Owner], prefix)
		if r.mark.r != rSevError && (stalled.has(model.KindMachine, m.Name) || (nu != nil && stalled.has(nu.Kind, nu.Name))) {
			r.mark, r.fold = seg{st.th.Sym.Warn, rStall}, foldNone
		}
		rows = append(rows, r)
	}
	for i := range s.Nodes {
		if !seen[i] {
			rows = append(rows, machineRow(st, nil, &s.Nodes[i], nil, target{}, prefix))
		}
	}
	return rows
}

// target is the version a machine's owner wants and how it gets there.
type target struct {
	version string
	inPlace bool
}

func machineRow(st *styles, m *model.Machine, n *model.Node, nu *model.NodeUpgrade, tg target, prefix string) nodeRow {
	sym := st.th.Sym
	r := nodeRow{phaseRole: rText}
	switch {
	case m == nil:
		r.name, r.role, r.phase, r.owner = n.Name, "node", "no machine", ""
	case m.Role == model.RoleControlPlane:
		r.role, r.owner = "cp", m.Owner
	default:
		r.role, r.owner = strings.TrimPrefix(m.Owner, prefix), m.Owner
	}
	if m != nil {
		r.name, r.phase = m.Name, m.Phase
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
	upToDate := m == nil || tg.version == "" || m.Version == tg.version
	inProgress := false
	if nu != nil {
		r.stepsTotal = len(model.NodeUpgradeSteps)
		r.stepsDone, r.stepText, r.stepFailed, r.since = stepProgress(nu, r.since)
		inProgress = !nu.Completed
	} else if m != nil && !upToDate {
		// Not started: how long it has been running its old version says
		// nothing about the upgrade.
		r.stepText, r.since = "to be replaced", time.Time{}
		if tg.inPlace {
			r.stepText = "waiting"
		}
	}
	switch {
	case r.stepFailed || (m != nil && m.Phase == "Failed"):
		r.mark, r.phaseRole = seg{sym.Fail, rSevError}, rSevError
	case m != nil && (!m.DeletionTimestamp.IsZero() || m.Phase == "Deleting"):
		r.mark, r.phase, r.phaseRole = seg{sym.Pending, rMuted}, "Deleting", rMuted
		if !upToDate {
			r.stepText = "replaced, leaving"
			r.fold = foldLeaving
		}
	case inProgress || (m != nil && m.Phase != "Running") || !ready:
		r.mark = seg{sym.Active, rSevInfo}
	case !upToDate:
		r.mark = seg{sym.Pending, rMuted}
		if m != nil && nu == nil {
			r.fold = foldWaiting
		}
	default:
		r.mark = seg{sym.OK, rCondTrue}
		r.settled = m != nil
		if r.settled {
			r.fold = foldUpToDate
		}
	}
	r.version = shortVersion(r.version)
	return r
}

// stepProgress reads a NodeUpgrade's step conditions: how many steps are
// done, the step it is on (or failed at), and when its latest step changed.
func stepProgress(nu *model.NodeUpgrade, fallback time.Time) (done int, text string, failed bool, since time.Time) {
	since = fallback
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
		if ok && c.Status == "False" && (c.Severity == model.SeverityError || strings.Contains(c.Reason, "non-zero")) {
			failed = true
		}
		return done, text, failed, since
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

// groupRows folds settled siblings into one row per owner, as clusterctl
// describe groups machines with the same state.
func groupRows(all []nodeRow, expand bool, filter string) []nodeRow {
	if filter != "" {
		f := strings.ToLower(filter)
		out := make([]nodeRow, 0, 64)
		for i := range all {
			if all[i].matches(f) {
				out = append(out, all[i])
			}
		}
		return out
	}
	if expand {
		return all
	}
	out := make([]nodeRow, 0, 64)
	for i := 0; i < len(all); {
		owner := all[i].owner
		j := i
		var groups [foldKinds]foldedRows
		for ; j < len(all) && all[j].owner == owner; j++ {
			if k := all[j].fold; k != foldNone {
				groups[k].add(all[j])
				continue
			}
			out = append(out, all[j])
		}
		for k := foldNone + 1; k < foldKinds; k++ {
			out = groups[k].appendTo(out, owner)
		}
		i = j
	}
	return out
}

// foldedRows counts the rows one group row stands for.
type foldedRows struct {
	n    int
	last nodeRow
}

func (f *foldedRows) add(r nodeRow) { f.n, f.last = f.n+1, r }

// appendTo adds the group row, or the single row when there is just one.
func (f *foldedRows) appendTo(out []nodeRow, owner string) []nodeRow {
	switch {
	case f.n == 1:
		return append(out, f.last)
	case f.n > 1:
		return append(out, nodeRow{group: f.n, role: f.last.role, owner: owner, mark: f.last.mark,
			fold: f.last.fold, stepText: f.last.stepText})
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
		state = r.stepText // "to be replaced"
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
