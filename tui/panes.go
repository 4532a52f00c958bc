package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/report"
)

// This file turns a snapshot into the content of the text panes. It runs in
// Update when a snapshot (or the expand toggle) changes, never in View.

func buildClusterPane(st *styles, s *model.ClusterState) ([]seg, availability, []line) {
	av := sourceAvailability(s, model.KindEKSACluster)
	if av.msg != "" {
		return nil, av, nil
	}
	c := s.Cluster
	if c == nil {
		return nil, availability{msg: fmt.Sprintf("EKS-A Cluster %s/%s not found", s.Namespace, s.ClusterName), r: rSevError}, nil
	}
	title := []seg{{c.Name, rBold}, {fmt.Sprintf("  gen %d / observed %d", c.Generation, c.ObservedGeneration), rMuted}}
	if c.Stale() {
		title = append(title, seg{"  status not yet observed", rStale})
	}
	if c.Paused() {
		title = append(title, seg{"  reconcile paused", rPaused})
	}
	var lines []line
	if c.FailureMessage != "" {
		head := "failure"
		if c.FailureReason != "" {
			head += " " + c.FailureReason
		}
		lines = append(lines, line{segs: []seg{{" " + st.th.Sym.Fail + " " + head, rFailure}}})
		lines = append(lines, messageLines(c.FailureMessage, rFailure, "     ")...)
	}
	lines = append(lines, conditionLines(st, c.Conditions, true)...)
	if len(c.Conditions) == 0 {
		lines = append(lines, line{segs: []seg{{" no conditions reported yet", rMuted}}})
	}
	return title, av, lines
}

// buildControlPlanePane builds the CONTROL PLANE pane; utd is the count of
// its up-to-date machines by the model's rule (rowJoin.controlPlaneCount).
func buildControlPlanePane(st *styles, s *model.ClusterState, expand bool, utd controlPlaneCount) ([]seg, availability, []line) {
	av := sourceAvailability(s, model.KindKubeadmControlPlane)
	if av.msg != "" {
		return nil, av, nil
	}
	cp := s.ControlPlane
	if cp == nil {
		return nil, availability{msg: "KubeadmControlPlane not found", r: rMuted}, nil
	}
	title := []seg{{cp.Name, rBold}}
	// CAPI's upToDateReplicas answers another question than the rest of
	// the screen (model/uptodate.go): mid-rollout this title contradicted
	// the status line, the phase counts and the nodes table.
	r, byKCP := model.ControlPlaneReplicas(s, utd.upToDate, utd.live)
	var note []line
	switch {
	case byKCP:
		// No machine to judge (forbidden, still listing): the KCP's count
		// stands in, saying whose count it is.
		note = append(note, line{segs: []seg{{" up to date as the KubeadmControlPlane counts it: no control plane machine visible", rMuted}}})
	case utd.live > 0 && utd.target.OwnerBehind() && utd.upToDate == 0 && cp.Replicas.UpToDate != nil && *cp.Replicas.UpToDate > 0 && s.Cluster != nil && s.Cluster.Paused():
		// "0 up to date" beside kubectl's UP-TO-DATE 3 and a healthy
		// MachinesUpToDate, with EKS-A paused (after an etcd rollback
		// left the KCP where it was) and nothing moving, read as a
		// contradiction: say against what. Mid-upgrade the phases
		// say it.
		// Not "up to date with Kubernetes 1.31" on a line of its own,
		// which read as a claim that the control plane ran it (tw).
		note = append(note, line{segs: []seg{{fmt.Sprintf(" 0 up to date: none runs the target, Kubernetes %s; the KubeadmControlPlane counts %d up to date with its own %s",
			utd.target.Kubernetes, *cp.Replicas.UpToDate, cp.Version), rMuted}}})
	}
	title = append(title, seg{"  " + report.Replicas(r, " · "), rText})
	if cp.Paused() {
		why := "paused"
		if s.Etcd != nil && s.Etcd.Upgrading() {
			why = "paused (etcd rollout)"
		}
		title = append(title, seg{"  " + why, rPaused})
	}
	if cp.Annotations[model.AnnotationKCPInPlaceUpgradeNeeded] == "true" {
		title = append(title, seg{"  in-place upgrade", rSevInfo})
	}
	var lines []line
	vs := []seg{{" version ", rMuted}, {cp.Version, rText}}
	if len(cp.Versions) > 0 {
		vs = append(vs, seg{"  running ", rMuted})
		for i, v := range cp.Versions {
			if i > 0 {
				vs = append(vs, seg{", ", rMuted})
			}
			vs = append(vs, seg{fmt.Sprintf("%s ×%d", v.Version, v.Replicas), rText})
		}
	} else if cp.StatusVersion != "" && cp.StatusVersion != cp.Version {
		vs = append(vs, seg{"  running " + cp.StatusVersion, rText})
	}
	if cp.RolloutStrategy != "" {
		vs = append(vs, seg{"  " + cp.RolloutStrategy, rMuted})
	}
	lines = append(lines, line{segs: vs})
	lines = append(lines, note...)
	if cp.FailureMessage != "" {
		lines = append(lines, messageLines(cp.FailureMessage, rFailure, " "+st.th.Sym.Fail+" ")...)
	}
	lines = append(lines, conditionLines(st, cp.Conditions, expand)...)
	return title, av, lines
}

func buildEtcdPane(st *styles, s *model.ClusterState, expand bool, stalled stallSet) ([]seg, availability, []line) {
	if s != nil {
		src, known := s.Sources[model.KindEtcdadmCluster]
		stacked := (known && !src.Installed && src.Forbidden == "") ||
			(s.Cluster != nil && s.Cluster.ExternalEtcdCount == 0 && s.Etcd == nil)
		if stacked {
			return []seg{{"stacked etcd (members run on the control plane nodes)", rMuted}}, availability{}, nil
		}
	}
	av := sourceAvailability(s, model.KindEtcdadmCluster)
	if av.msg != "" {
		return nil, av, nil
	}
	e := s.Etcd
	if e == nil {
		return nil, availability{msg: "EtcdadmCluster not found", r: rMuted}, nil
	}
	title := []seg{{e.Name, rBold}, {fmt.Sprintf("  %d/%d ready", e.ReadyReplicas, e.Replicas), rText}}
	// EtcdVersion is the spec's: the version the members are to run. At
	// rest they run it; during a rollout, or before the controller
	// observed the spec, the ready ones may run the old one, and
	// "3/3 ready  3.5.16  upgrading" read as three members on 3.5.16 while
	// the only one on it was stuck provisioning: there it is the target.
	// Under upgrade-console's etcd rollback the spec is the previous one
	// again: "upgrading to 3.5.15" and the old members marked "new spec"
	// read as new members having joined.
	rec, recorded := s.Cluster.EtcdRollback()
	rollingBack := recorded && rec.Running()
	if rollingBack {
		// Only once the spec is put back: between the pause and the
		// restore the spec is still the rollout's, and the new member
		// read as the "restored" one.
		for _, m := range s.Machines.All() {
			if m.Name == rec.NewMachine {
				if newSpec, rollout := model.EtcdMemberSpec(m, e); rollout && newSpec {
					rollingBack = false
				}
				break
			}
		}
	}
	switch {
	case e.Upgrading() && rollingBack:
		title = append(title, seg{"  rolling back", rSevInfo})
		if e.EtcdVersion != "" {
			title = append(title, seg{" to " + e.EtcdVersion, rMuted})
		}
	case e.Upgrading():
		title = append(title, seg{"  upgrading", rSevInfo})
		if e.EtcdVersion != "" {
			title = append(title, seg{" to " + e.EtcdVersion, rMuted})
		}
	case e.EtcdVersion != "" && e.ObservedGeneration != e.Generation:
		title = append(title, seg{"  target " + e.EtcdVersion, rMuted})
	case e.EtcdVersion != "":
		title = append(title, seg{"  " + e.EtcdVersion, rMuted})
	}
	if e.Ready && e.ObservedGeneration == e.Generation {
		title = append(title, seg{"  ready", rCondTrue})
	}
	var lines []line
	// The members are Machines: a large fleet can take a while to list,
	// the EtcdadmCluster's own status need not wait for it.
	if mav := sourceAvailability(s, model.KindMachine); mav.msg != "" {
		lines = append(lines, line{segs: []seg{{" members: ", rMuted}, {mav.msg, mav.r}}})
	} else {
		// The member that holds the rollout up first: listed by name, three
		// ready members filled the pane at 80×24 and the stuck new one
		// was below them, out of view.
		type member struct {
			m       *model.Machine
			stalled bool
			rank    int
		}
		var ms []member
		for _, m := range s.Machines.All() {
			if m.Role != model.RoleEtcd {
				continue
			}
			stuck := stalled.has(model.KindMachine, m.Name)
			ms = append(ms, member{m, stuck, etcdMemberRank(m, stuck)})
		}
		slices.SortStableFunc(ms, func(a, b member) int { return a.rank - b.rank })
		for _, x := range ms {
			lines = append(lines, etcdMemberLine(st, x.m, e, x.stalled, rollingBack))
		}
	}
	lines = append(lines, conditionLines(st, e.Conditions, expand)...)
	return title, av, lines
}

// etcdMemberRank orders the members as the nodes pane orders its rows: the
// failed, the stalled, the ones coming up, the ones leaving, then the ready.
func etcdMemberRank(m *model.Machine, stalled bool) int {
	switch {
	case m.Failed():
		return 0
	case stalled:
		return 1
	case !m.DeletionTimestamp.IsZero() || !m.Owned:
		return 3
	case !(m.EtcdReady && m.Phase == "Running"):
		return 2
	}
	return 4
}

func etcdMemberLine(st *styles, m *model.Machine, e *model.EtcdCluster, stalled, rollingBack bool) line {
	sym := st.th.Sym
	mark := seg{sym.Active, rSevInfo}
	switch {
	case m.Failed():
		mark = seg{sym.Fail, rSevError}
	case !m.DeletionTimestamp.IsZero():
		mark = seg{sym.Pending, rMuted}
	case m.EtcdReady && m.Phase == "Running":
		mark = seg{sym.OK, rCondTrue}
	case stalled:
		mark = seg{sym.Warn, rStall}
	}
	state := strings.ToLower(m.Phase)
	if state == "" {
		state = "pending"
	}
	if m.EtcdReady {
		state = "ready"
	}
	if m.Failed() {
		// Its ✗ beside "ready" read as a contradiction.
		state = "failed"
	}
	if !m.DeletionTimestamp.IsZero() {
		state = "deleting"
	}
	segs := []seg{{" " + mark.text + " ", mark.r}, {m.Name, rText}}
	if m.Version != "" {
		segs = append(segs, seg{"  " + m.Version, rMuted})
	}
	segs = append(segs, seg{"  " + state, rText})
	switch newSpec, rollout := model.EtcdMemberSpec(m, e); {
	case !m.Owned:
		segs = append(segs, seg{"  outdated, leaving", rMuted})
	case rollout && rollingBack && newSpec:
		segs = append(segs, seg{"  restored spec", rSevInfo})
	case rollout && rollingBack:
		segs = append(segs, seg{"  spec rolled back", rMuted})
	case rollout && newSpec:
		segs = append(segs, seg{"  new spec", rSevInfo})
	case rollout:
		segs = append(segs, seg{"  old spec", rMuted})
	}
	if stalled {
		segs = append(segs, seg{"  stalled", rStall})
	}
	since := m.CreationTimestamp
	if c, ok := m.Conditions.Get("Ready"); ok && !c.LastTransitionTime.IsZero() {
		since = c.LastTransitionTime
	}
	// Keyed by name: the cursor stays on its member as the members reorder.
	return line{segs: segs, since: since, key: "Machine/" + m.Name, machine: m.Name}
}

// maxEvents bounds the events pane; the snapshot is newest first. The
// watchers keep as many (watchers.Options.MaxEvents, 200 by default) and
// forget the older ones, so the snapshot does not tell how many the
// cluster has.
const maxEvents = 200

// eventsTitle is the events pane's title. With the list at the cap, older
// events were dropped (by the watchers or here): "↓ 199 more" alone read
// as the cluster's whole history, which held thousands.
func eventsTitle(n int) []seg {
	if n < maxEvents {
		return []seg{{"newest first", rMuted}}
	}
	// The cap first: cut at a narrow width, the title loses the order,
	// which the times on the right tell anyway.
	return []seg{{"only the newest " + strconv.Itoa(maxEvents) + " kept, newest first", rMuted}}
}

func buildEventsPane(st *styles, s *model.ClusterState) ([]seg, availability, []line) {
	av := sourceAvailability(s, model.KindEvent)
	denied := ""
	if av.msg != "" {
		// Events are watched per namespace (the system namespace, where
		// the upgrade's own are, and the Cluster's): one denied does not
		// hide those the identity may read.
		if src := s.Source(model.KindEvent); src.Forbidden != "" && src.Synced && len(s.Events) > 0 {
			denied, av = src.Forbidden, availability{}
		} else {
			return nil, av, nil
		}
	}
	n := min(len(s.Events), maxEvents)
	title := eventsTitle(len(s.Events))
	lines := make([]line, 0, n)
	for i := 0; i < n; i++ {
		ev := &s.Events[i]
		mark := seg{" · ", rMuted}
		msgRole := rText
		if ev.Type == "Warning" {
			mark = seg{" " + st.th.Sym.Warn + " ", rSevWarning}
			msgRole = rSevWarning
		}
		segs := []seg{mark, {ev.ObjectKind + " " + ev.ObjectName, rBold}, {"  " + ev.Reason, rMuted}}
		if ev.Count > 1 {
			segs = append(segs, seg{" ×" + strconv.Itoa(int(ev.Count)), rMuted})
		}
		segs = append(segs, seg{"  " + firstLine(ev.Message), msgRole})
		t := ev.LastTimestamp
		if t.IsZero() {
			t = ev.FirstTimestamp
		}
		// Zoomed, the pane shows the message whole (wrapped): cut at the
		// width, the end of a long one could be read nowhere.
		lines = append(lines, line{segs: segs, since: t, whole: "  " + ev.Message, key: eventKey(ev)})
	}
	if denied != "" {
		deny := line{segs: []seg{{" forbidden: " + denied + " (those are not shown)", rSevError}}}
		// The fix, as the other panes give theirs, runs past any width:
		// zoomed, the pane wraps it, and y copies its command.
		if fix := model.GrantFor(denied, s.Conn); fix != "" {
			deny.segs[0].text += "; "
			deny.segs = append(deny.segs, seg{fix, rSevError})
			deny.whole = fix
		}
		lines = append([]line{deny}, lines...)
	}
	if n == 0 {
		lines = append(lines, line{segs: []seg{{" no events", rMuted}}})
	}
	return title, av, lines
}

// eventKey is an event's line's identity: the Event object and its
// version. An event that fires again is another line (its count and time
// changed, and it moved to the top): the lines around it stay where they
// were. Without a name (no object behind it) it has none.
func eventKey(ev *model.Event) string {
	if ev.Name == "" {
		return ""
	}
	return ev.Namespace + "/" + ev.Name + "@" + strconv.FormatUint(ev.ResourceVersion, 10)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return oneRow(s)
}

// oneRow is text for one row: a tab is a space. Kept, it counted no cell
// and the terminal drew none, and the words around it ran together.
func oneRow(s string) string {
	if strings.IndexByte(s, '\t') < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\t", " ")
}
