package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
)

// nodeDetailInput is what the node detail is built from: the snapshot the
// dashboard's panes show and the stalls derived from it. The detail reads
// them from the dashboard rather than from the snapshots it is sent: the
// dashboard holds a burst of snapshots back (frameInterval), and only it
// derives the stalls, a pass over the whole fleet.
type nodeDetailInput struct {
	state     *model.ClusterState
	stalls    []model.Stall
	derivedAt time.Time
	now       time.Time
}

// nodeDetailSource is the screen beneath the detail (the dashboard).
type nodeDetailSource interface {
	nodeDetailInput() nodeDetailInput
}

// nodeDetailKeys are the detail's bindings: it scrolls and closes, and
// Copy (y, taken by the App) is enabled while it shows a command. Help (?)
// shows the full help, as on every screen, and esc closes it (CloseHelp)
// before the view, one thing at a time as on the dashboard.
type nodeDetailKeys struct {
	Up, Down, PageUp, PageDown, Top, Bottom, Close, Copy key.Binding
	Help, CloseHelp                                      key.Binding
}

// defaultNodeDetailKeys scrolls with the dashboard's own bindings: a copy
// of them drifted (ctrl+u/ctrl+d paged the view, unnamed in its help).
func defaultNodeDetailKeys() nodeDetailKeys {
	k := DefaultKeyMap()
	return nodeDetailKeys{
		Up: k.Up, Down: k.Down, PageUp: k.PageUp, PageDown: k.PageDown, Top: k.Home, Bottom: k.End,
		// q closes the view, as in k9s: the console's q is one esc away,
		// and a q meant for the view that quit the console mid-upgrade
		// would be the costlier mistake.
		Close:     key.NewBinding(key.WithKeys("esc", "q"), key.WithHelp("esc/q", "close")),
		Copy:      k.Copy,
		Help:      k.Help,
		CloseHelp: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close help")),
	}
}

// nodeDetail is the read-only view of one row of the nodes table, or of an
// external etcd member of the etcd pane: the Machine, its Node, its in-place
// upgrade, its events and its stall, as the snapshot holds them. It follows the machine by name from snapshot to
// snapshot (the objects are new ones whenever they change) and says so when
// the machine is gone, showing it as last seen.
type nodeDetail struct {
	src  nodeDetailSource
	keys nodeDetailKeys
	st   *styles
	w, h int
	// help draws the full help (?) in place of the keys' line.
	help help.Model

	// machine is the Machine's name; node, for a Node no Machine claims,
	// the Node's (machine then empty).
	machine, node string
	// group is the size of the group row it was opened on (0: a machine's
	// own row): a group row opens its first machine.
	group int

	// history is the detail's read of its events from the API server, and
	// fetch the command that reads them, built on opening.
	history detailHistory
	fetch   tea.Cmd

	// last are the objects as last seen, shown under a note once the
	// machine is gone.
	last detailObjects
	seen bool

	built detailKey
	head  []line
	body  []line
	// cmds are the commands body shows (the failing container's logs, the
	// can-i check of a refused read), for y.
	cmds []string
	// offset is the first body row shown; maxOffset is as far as it goes
	// at the last View.
	offset, maxOffset int
}

// detailObjects are the objects the detail describes.
type detailObjects struct {
	m  *model.Machine
	n  *model.Node
	nu *model.NodeUpgrade
}

// detailKey is what the built lines depend on.
type detailKey struct {
	state     *model.ClusterState
	derivedAt time.Time
	stalls    *model.Stall
	nstalls   int
	nowSec    int64
	w         int
	st        *styles
	history   int
}

// detailHistory is how far the read of the detail's events from the API
// server went. The dashboard keeps the newest events of the whole cluster
// (maxEvents): at fleet scale a failing machine's have long left them.
type detailHistory struct {
	state historyState
	// events are those read, err why none were.
	events []model.Event
	err    error
	// gen counts the replies taken, for detailKey.
	gen int
	// read numbers the detail's read (historyReads): the reply it takes.
	read uint64
}

// historyReads numbers the details' reads. A detail closed and opened
// again on the same machine names the same subject: the reply of the
// earlier opening's read (one that failed on an API server that stopped
// answering) must not stand for its own.
var historyReads atomic.Uint64

type historyState int

const (
	// historyNone: no read (no Options.EventHistory: tests, replays).
	historyNone historyState = iota
	historyLoading
	historyLoaded
	historyFailed
)

// historyMsg is the reply to a detail's read. It names the read: a reply
// that arrives once the detail closed, or was reopened, on this machine or
// another, is dropped.
type historyMsg struct {
	read   uint64
	events []model.Event
	err    error
}

// readHistory reads the subjects' events; it is given all it needs, as a
// command must not read the model it runs beside.
func readHistory(read EventHistoryFunc, n uint64, subjects []model.EventSubject) tea.Cmd {
	return func() tea.Msg {
		evs, err := read(context.Background(), subjects)
		return historyMsg{read: n, events: evs, err: err}
	}
}

// newNodeDetail opens on the row r; with read set, its events are read
// from the API server (Init), about the objects the dashboard knows it by
// now.
func newNodeDetail(src nodeDetailSource, r nodeRow, read EventHistoryFunc) *nodeDetail {
	v := &nodeDetail{src: src, keys: defaultNodeDetailKeys(), help: help.New(), machine: r.machine, group: r.group}
	if r.machine == "" {
		v.node = r.name
	}
	v.setTheme(initialTheme(Options{}))
	if read != nil && src != nil {
		in := src.nodeDetailInput()
		o, _ := v.find(in.state)
		v.history.state, v.history.read = historyLoading, historyReads.Add(1)
		v.fetch = readHistory(read, v.history.read, historySubjects(v.machine, v.node, o, in.state))
	}
	return v
}

// historySubjects are the objects whose events the detail lists: the
// machine, its node, its in-place upgrade (or, where EKS-A serves them, the
// one it deleted once done), and its owner (an EtcdadmCluster,
// a KubeadmControlPlane, the one the nodes table files it under too, or a
// MachineDeployment and the MachineSets CAPI names after it,
// <deployment>-<hash>), whose events count when they name the machine.
func historySubjects(machine, node string, o detailObjects, s *model.ClusterState) []model.EventSubject {
	if machine == "" {
		return []model.EventSubject{{Kind: string(model.KindNode), Name: node}}
	}
	subs := []model.EventSubject{{Kind: string(model.KindMachine), Name: machine}}
	m := o.m
	if m == nil {
		return subs
	}
	switch {
	case s.NodesElsewhere():
		// Its Node's events are on its own API server: a Node of this
		// one by the same name is the management cluster's.
	case o.n != nil:
		subs = append(subs, model.EventSubject{Kind: string(model.KindNode), Name: o.n.Name})
	case m.NodeName != "":
		subs = append(subs, model.EventSubject{Kind: string(model.KindNode), Name: m.NodeName})
	}
	inPlace := true
	switch {
	case o.nu != nil:
		subs = append(subs, model.EventSubject{Kind: o.nu.Kind.Short(), Name: o.nu.Name})
	case m.Role != model.RoleEtcd && s != nil && s.Sources[model.KindNodeUpgrade].Installed:
		// EKS-A deletes a node's NodeUpgrade with its upgrade, once done;
		// its events (the failed attempts before it succeeded) outlive
		// it, under the name EKS-A gives it.
		subs = append(subs, model.EventSubject{Kind: string(model.KindNodeUpgrade), Name: model.NodeUpgradeName(machine)})
	default:
		inPlace = false
	}
	node = m.NodeName
	if o.n != nil {
		node = o.n.Name
	}
	if inPlace && node != "" && !s.NodesElsewhere() {
		// The upgrader pod's BackOff events say why a failed step runs
		// again, and when. A workload cluster's runs on its own API
		// server.
		subs = append(subs, model.EventSubject{Kind: "Pod", Name: model.UpgraderPodName(node)})
	}
	if m.Owner == "" {
		return subs
	}
	owner := func(kind, name string, prefix bool) {
		subs = append(subs, model.EventSubject{Kind: kind, Name: name, Prefix: prefix, Naming: machine})
	}
	switch m.Role {
	case model.RoleEtcd:
		owner(string(model.KindEtcdadmCluster), m.Owner, false)
	case model.RoleControlPlane:
		owner(string(model.KindKubeadmControlPlane), m.Owner, false)
		if s != nil && s.ControlPlane != nil && s.ControlPlane.Name != m.Owner {
			owner(string(model.KindKubeadmControlPlane), s.ControlPlane.Name, false)
		}
	default:
		owner(string(model.KindMachineDeployment), m.Owner, false)
		owner(kindMachineSet, m.Owner, true)
	}
	return subs
}

func (v *nodeDetail) setTheme(th *themes.Theme) {
	v.st = newStyles(th)
	v.help.Styles = th.Help
}

func (v *nodeDetail) Init() tea.Cmd { return v.fetch }

func (v *nodeDetail) SetSize(w, h int) {
	v.w, v.h = w, h
	v.refresh()
}

// innerWidth is the text's width: the dialog less its border and padding.
func (v *nodeDetail) innerWidth() int { return max(v.w-4, 20) }

func (v *nodeDetail) ShortHelp() []key.Binding {
	return []key.Binding{v.keys.Up, v.keys.Down, v.keys.PageUp, v.keys.PageDown, v.keys.Top, v.keys.Bottom, v.keys.Copy, v.keys.Close}
}

// shownCommands are the commands the detail shows (y).
func (v *nodeDetail) shownCommands() ([]string, bool) { return v.cmds, true }

func (v *nodeDetail) FullHelp() [][]key.Binding {
	k := v.keys
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Copy, k.Close}, {k.Help, k.CloseHelp, suspendBinding()}}
}

// helpRows is the full help as the view shows it in place of its keys'
// line, wrapped to its width; nil while it is not shown. Its last rows go
// where the view is too short for it, as the dashboard's do (fullHelpFitting
// puts ? and esc first): taller than the screen, the App cut the view's
// top, the name of the machine described.
func (v *nodeDetail) helpRows() []string {
	if !v.help.ShowAll {
		return nil
	}
	rows := strings.Split(fullHelpFitting(v.help, v.FullHelp(), v.innerWidth()), "\n")
	return rows[:min(len(rows), max(v.h-2-len(v.head)-2*v.gap()-1, 1))]
}

// Update scrolls and closes on keys; any other message (a snapshot, the
// dashboard's frame or clock tick, all handled by the dashboard first)
// rebuilds the lines if what they show changed.
func (v *nodeDetail) Update(msg tea.Msg) (Screen, tea.Cmd) {
	switch msg := msg.(type) {
	case ThemeMsg:
		v.setTheme(msg.Theme)
		v.refresh()
	case tea.KeyPressMsg:
		return v, v.handleKey(msg)
	case historyMsg:
		if msg.read != v.history.read || v.history.state != historyLoading {
			return v, nil
		}
		v.history.gen++
		v.history.events, v.history.err, v.history.state = msg.events, msg.err, historyLoaded
		var partial *model.PartialHistoryError
		if msg.err != nil && !errors.As(msg.err, &partial) {
			v.history.events, v.history.state = nil, historyFailed
		}
		v.refresh()
	default:
		v.refresh()
	}
	return v, nil
}

func (v *nodeDetail) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	k := v.keys
	page := max(v.visible()-1, 1)
	switch {
	case key.Matches(msg, k.Help):
		v.help.ShowAll = !v.help.ShowAll
	case v.help.ShowAll && key.Matches(msg, k.CloseHelp):
		v.help.ShowAll = false
	case key.Matches(msg, k.Close):
		return CloseDialog
	case key.Matches(msg, k.Up):
		v.offset--
	case key.Matches(msg, k.Down):
		v.offset++
	case key.Matches(msg, k.PageUp):
		v.offset -= page
	case key.Matches(msg, k.PageDown):
		v.offset += page
	case key.Matches(msg, k.Top):
		v.offset = 0
	case key.Matches(msg, k.Bottom):
		v.offset = len(v.body)
	}
	v.clamp()
	return nil
}

// visible is how many body rows the dialog shows: its height less the
// border, the head, a blank row each side of the body (gap), and the footer
// (the keys' line, or the full help's rows).
func (v *nodeDetail) visible() int {
	return max(v.h-2-len(v.head)-2*v.gap()-max(len(v.helpRows()), 1), 1)
}

// gap is the blank row each side of the body: none where they would leave
// it no row beside the head and the keys (40x10, the dialog 6 rows). Kept,
// the body took one row all the same, and the dialog overflowed the room
// the App gives it.
func (v *nodeDetail) gap() int {
	if v.h-2-len(v.head)-2-1 < 1 {
		return 0
	}
	return 1
}

func (v *nodeDetail) clamp() {
	v.maxOffset = max(len(v.body)-v.visible(), 0)
	v.offset = min(max(v.offset, 0), v.maxOffset)
}

// refresh rebuilds the lines when the snapshot, the stalls, the clock's
// second, the width or the theme changed.
func (v *nodeDetail) refresh() {
	if v.src == nil || v.w <= 0 {
		return
	}
	in := v.src.nodeDetailInput()
	k := detailKey{state: in.state, derivedAt: in.derivedAt, nstalls: len(in.stalls), nowSec: in.now.Unix(), w: v.innerWidth(), st: v.st, history: v.history.gen}
	if len(in.stalls) > 0 {
		k.stalls = &in.stalls[0]
	}
	if k == v.built {
		return
	}
	v.built = k
	v.build(in)
	v.clamp()
}

// find looks the subject up in s by name.
func (v *nodeDetail) find(s *model.ClusterState) (detailObjects, bool) {
	var o detailObjects
	if s == nil {
		return o, false
	}
	if v.machine == "" {
		for _, n := range s.Nodes.All() {
			if n.Name == v.node {
				o.n = n
				return o, true
			}
		}
		return o, false
	}
	for _, m := range s.Machines.All() {
		if m.Name == v.machine {
			o.m = m
			break
		}
	}
	if o.m == nil {
		return o, false
	}
	if o.m.Role == model.RoleEtcd {
		// etcdadm's machines run etcd alone: they never register a Node
		// nor upgrade in place, and a Node of the machine's name would
		// be another's.
		return o, true
	}
	name := nodeOf(o.m)
	for _, n := range s.Nodes.All() {
		if n.Name == name {
			o.n = n
			break
		}
	}
	// The newest, as the nodes table picks it (model.NewestUpgrades).
	for _, nu := range s.NodeUpgrades.All() {
		if nu.MachineName == v.machine && (o.nu == nil || o.nu.CreationTimestamp.Before(nu.CreationTimestamp)) {
			o.nu = nu
		}
	}
	return o, true
}

func (v *nodeDetail) build(in nodeDetailInput) {
	iw := v.innerWidth()
	sym := v.st.th.Sym
	now := in.now
	o, found := v.find(in.state)
	if found {
		v.last, v.seen = o, true
	} else if v.seen {
		o = v.last
	}

	kind, name := "Machine", v.machine
	if v.machine == "" {
		kind, name = "Node", v.node
	}
	v.head = wrapTagged(kind+" ", name, rBold, "", rText, iw)
	v.head[0].segs = append([]seg{{kind + " ", rTitle}}, seg{strings.TrimPrefix(v.head[0].segs[0].text, kind+" "), rBold})

	var body []line
	var cmds []string
	add := func(segs ...seg) { body = append(body, line{segs: segs}) }
	blank := func() { body = append(body, line{}) }
	wrapped := func(prefix, text string, r role) {
		body = append(body, wrapTagged(prefix, text, r, "", rText, iw)...)
	}
	field := func(label, value string, r role) {
		wrapped(" "+fit(label, detailLabelW), value, r)
	}
	section := func(title string, note ...seg) {
		blank()
		add(append([]seg{{title, rBold}}, note...)...)
	}

	switch {
	case in.state == nil:
		wrapped(" ", "waiting for the first snapshot from the API server…", rMuted)
	case !found && !v.seen:
		wrapped(" "+sym.Warn+" ", "no "+kind+" "+name+" in the snapshot", rSevWarning)
	case !found:
		wrapped(" "+sym.Warn+" ", kind+" gone: not in the newest snapshot (deleted, or no longer listed); as last seen:", rSevWarning)
	}
	if v.group > 1 {
		wrapped(" ", "the first of the "+strconv.Itoa(v.group)+" machines of the group row it was opened on (e on the dashboard lists them one by one)", rMuted)
	}
	if len(body) > 0 {
		blank()
	}

	m, n, nu := o.m, o.n, o.nu
	// CAPI's failure first: it is terminal (CAPI does not retry the
	// machine), and the phase alone does not say why.
	if m != nil && (m.FailureReason != "" || m.FailureMessage != "") {
		text := "Machine failed"
		if m.FailureReason != "" {
			text += " (" + m.FailureReason + ")"
		}
		if msg := strings.TrimSpace(m.FailureMessage); msg != "" {
			text += ": " + msg
		}
		wrapped(" "+sym.Fail+" ", text, rFailure)
		blank()
	}
	switch {
	case m != nil:
		field("owner", ownerText(m, in.state), rText)
		phase, pr := m.Phase, rText
		if phase == "" {
			phase, pr = "not reported yet", rMuted
		}
		if phase == "Failed" {
			pr = rFailure
		}
		field("phase", phase, pr)
		field("version", orNone(m.Version), rText)
		if m.InfrastructureTemplate != "" {
			field("template", m.InfrastructureTemplate, rText)
		}
		switch {
		case m.Role == model.RoleEtcd:
			field("node", "none: an external etcd member runs no Kubernetes Node", rMuted)
			// What etcdadm waits for before it moves on to the next
			// member: the pane's "ready" is this label.
			if m.EtcdReady {
				field("etcd", "ready ("+model.LabelEtcdReady+"=true)", rCondTrue)
			} else {
				field("etcd", "not ready (no "+model.LabelEtcdReady+"=true label)", rSevWarning)
			}
		case m.NodeName == "" && n == nil:
			field("node", "none yet (no nodeRef)", rMuted)
		case n == nil && in.state.NodesElsewhere():
			// A workload cluster's Node is on its own API server: not
			// looked for here, so not missing either.
			field("node", m.NodeName+" (on the cluster's own API server)", rText)
		case n == nil:
			field("node", m.NodeName+" (no such Node listed)", rSevWarning)
		case m.NodeName == "":
			field("node", n.Name+" (its nodeRef not set yet)", rText)
		default:
			field("node", n.Name, rText)
		}
		if m.ProviderID != "" {
			field("provider", m.ProviderID, rText)
		}
		if len(m.Addresses) > 0 {
			field("addresses", addressesText(m.Addresses), rText)
		}
		field("created", stamp(m.CreationTimestamp, now), rText)
		if m.Deleting() {
			field("deleting", stamp(m.DeletionTimestamp, now), rSevWarning)
		}
	case n != nil:
		field("machine", "none: no Machine claims this Node", rMuted)
		field("created", stamp(n.CreationTimestamp, now), rText)
	}
	if n != nil {
		ready, rr := "NotReady", rSevWarning
		if n.Ready {
			ready, rr = "Ready", rCondTrue
		}
		if !n.ReadySince.IsZero() {
			ready += ", since " + stamp(n.ReadySince, now)
		}
		field("node ready", ready, rr)
		field("kubelet", orNone(n.KubeletVersion), rText)
		if n.Unschedulable {
			field("scheduling", "cordoned (unschedulable)", rSevWarning)
		}
		if n.Deleting() {
			field("node", "deleting, "+stamp(n.DeletionTimestamp, now), rSevWarning)
		}
		body = append(body, detailNodeConditions(sym.Warn, n.Abnormal, now, iw)...)
	} else if m != nil && m.Role != model.RoleEtcd && m.NodeName != "" && in.state.NodesElsewhere() {
		// What CAPI read from the Node on the cluster's own API server.
		ready, rr := "unknown (the Machine has no NodeReady or NodeHealthy condition)", rMuted
		switch r, known := model.MachineNodeReady(m); {
		case known && r:
			ready, rr = "Ready (the Machine's node condition)", rCondTrue
		case known:
			ready, rr = "NotReady (the Machine's node condition)", rSevWarning
		}
		field("node ready", ready, rr)
	}

	// The stall line, whole: the dashboard's status line cuts it at the
	// width and shows three at most.
	for _, sl := range in.stalls {
		if !found || !stallOf(sl, m, n, nu) {
			continue
		}
		mark, r := sym.Warn, rStall
		if sl.Failed {
			mark, r = sym.Fail, rFailure
		}
		blank()
		wrapped(" "+mark+" ", sl.Sentence, r)
		cmds = addCommandsOf(cmds, sl.Sentence)
		if sl.Resume != "" {
			wrapped("   ", sl.Resume, rMuted)
			cmds = addCommandsOf(cmds, sl.Resume)
		}
	}

	if m != nil {
		section("Conditions")
		body = append(body, detailConditions(v.st, m.Conditions, now, iw)...)
	}

	if nu != nil {
		section("In-place upgrade")
		field("object", nu.Kind.Short()+" "+nu.Name, rText)
		if nu.KubernetesVersion != "" {
			field("to", nu.KubernetesVersion, rText)
		}
		node := ""
		switch {
		case m != nil:
			node = nodeOf(m)
		case n != nil:
			node = n.Name
		}
		done, step, failed, _ := stepProgress(nu, in.state.UpgraderPodOf(node), time.Time{})
		progress := fmt.Sprintf("%d of %d steps done", done, len(model.NodeUpgradeSteps))
		pr := rSevInfo
		switch {
		case nu.Completed:
			progress, pr = "completed", rCondTrue
		case failed:
			progress, pr = progress+", failed at "+step, rFailure
		case step != "":
			progress += ", on " + step
		}
		field("progress", progress, pr)
		if nu.FirstNodeToBeUpgraded {
			field("first node", "yes: it upgrades the cluster's control plane components too", rMuted)
		}
		field("created", stamp(nu.CreationTimestamp, now), rText)
		if nu.Deleting() {
			field("deleting", stamp(nu.DeletionTimestamp, now), rSevWarning)
		}
		body = append(body, detailConditions(v.st, stepOrder(nu.Conditions), now, iw)...)
		blank()
		pod, podCmds := detailUpgraderPod(v.st, in.state, node, iw)
		body = append(body, pod...)
		for _, c := range podCmds {
			cmds = addCommand(cmds, c)
		}
	}

	if in.state != nil {
		pool := in.state.Events
		if v.history.state == historyLoaded {
			pool = mergeEvents(v.history.events, pool)
		}
		evs := detailEvents(pool, historySubjects(v.machine, v.node, o, in.state))
		kept := len(in.state.Events)
		note := eventsKept(len(evs), kept)
		switch v.history.state {
		case historyLoading:
			note = "loading events… until then " + note
		case historyLoaded:
			note = fmt.Sprintf("%d: the newest %d of each object, read from the API server on opening, with those kept since",
				len(evs), model.EventHistoryPerSubject)
		}
		section("Events", seg{"  " + note, rMuted})
		if v.history.err != nil {
			// Failed, or loaded in part (PartialHistoryError).
			text := historyFailure(v.history.err, in.state.Conn)
			wrapped(" "+sym.Warn+" ", text, rSevWarning)
			cmds = addCommandsOf(cmds, text)
		}
		switch {
		case len(evs) > 0:
		case v.history.state == historyLoaded:
			wrapped(" ", "none about this "+strings.ToLower(kind), rMuted)
		default:
			wrapped(" ", "none about this "+strings.ToLower(kind)+" among them", rMuted)
		}
		for _, ev := range evs {
			mark, r := " · ", rText
			if ev.Type == "Warning" {
				mark, r = " "+sym.Warn+" ", rSevWarning
			}
			// The kind alone: the name is the machine's, its node's or
			// its upgrade's, above, and a long one left no room for the
			// reason. An owner's event is marked: its object is not the
			// one named above but the owner line's (or a MachineSet of it).
			head := []seg{{mark, r}, {ev.ObjectKind, rBold}}
			if ev.owner {
				head = append(head, seg{" (owner)", rMuted})
			}
			head = append(head, seg{"  " + ev.Reason, rMuted})
			if ev.Count > 1 {
				head = append(head, seg{" ×" + strconv.Itoa(int(ev.Count)), rMuted})
			}
			t := ev.LastTimestamp
			if t.IsZero() {
				t = ev.FirstTimestamp
			}
			if s := since(t, now); s != "" {
				head = append(head, seg{"  " + s + " ago", rMuted})
			}
			add(head...)
			for _, l := range strings.Split(strings.TrimRight(ev.Message, "\n"), "\n") {
				wrapped("     ", strings.TrimSpace(l), r)
			}
		}
	}
	v.body, v.cmds = body, cmds
	v.keys.Copy.SetEnabled(len(cmds) > 0)
}

// detailLabelW is the width of the labels' column.
const detailLabelW = 11

// ownerText names the machine's owner by kind.
func ownerText(m *model.Machine, s *model.ClusterState) string {
	// Owner comes from the etcd-cluster label, which a disowned member
	// keeps: the detail named an owner the Machine no longer had.
	if m.Role == model.RoleEtcd && !m.Owned {
		return "none: etcdadm removed its owner reference (an outdated member, leaving)"
	}
	if m.Owner == "" {
		return "none"
	}
	switch m.Role {
	case model.RoleEtcd:
		return "EtcdadmCluster " + m.Owner
	case model.RoleControlPlane:
		// The nodes table files every control-plane machine under the
		// KubeadmControlPlane, whatever its owner reference says.
		if s != nil && s.ControlPlane != nil && s.ControlPlane.Name != m.Owner {
			return "KubeadmControlPlane " + s.ControlPlane.Name + " (owner reference: " + m.Owner + ")"
		}
		return "KubeadmControlPlane " + m.Owner
	}
	return "MachineDeployment " + m.Owner
}

func orNone(s string) string {
	if s == "" {
		return "not reported"
	}
	return s
}

// stamp is how long ago t was, then t in UTC: cut at the width, a line
// loses the time to look up in a log before the age.
func stamp(t, now time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	at := t.UTC().Format("2006-01-02 15:04:05 UTC")
	if now.IsZero() {
		return at
	}
	return since(t, now) + " ago (" + at + ")"
}

// stallOf reports whether a stall is about the machine, its node upgrade or
// (for a Node no Machine claims) the node.
func stallOf(sl model.Stall, m *model.Machine, n *model.Node, nu *model.NodeUpgrade) bool {
	switch {
	case m != nil && sl.Kind == model.KindMachine && sl.Name == m.Name:
		return true
	case nu != nil && sl.Kind == nu.Kind && sl.Name == nu.Name:
		return true
	case n != nil && sl.Kind == model.KindNode && sl.Name == n.Name:
		return true
	}
	return false
}

// stepOrder is a NodeUpgrade's conditions in the order its steps run, Ready
// (the summary) first and any others last: stored, they come in
// alphabetical order, and a step that ran after a failed one showed above
// it, against the pod's containers just below, listed in run order.
func stepOrder(cs model.Conditions) model.Conditions {
	rank := func(t string) int {
		if t == model.ConditionReady {
			return -1
		}
		if i := slices.Index(model.NodeUpgradeSteps, t); i >= 0 {
			return i
		}
		return len(model.NodeUpgradeSteps)
	}
	out := slices.Clone(cs)
	slices.SortStableFunc(out, func(a, b model.Condition) int { return rank(a.Type) - rank(b.Type) })
	return out
}

// detailConditions lists every condition as the model holds it, healthy
// ones too: type, status and severity, when it last changed, then its
// reason and message whole.
func detailConditions(st *styles, cs model.Conditions, now time.Time, iw int) []line {
	if len(cs) == 0 {
		return []line{{segs: []seg{{" none reported", rMuted}}}}
	}
	rolling := cs.IsTrue("RollingOut")
	var out []line
	for _, c := range cs {
		mark := conditionMark(st, c, rolling)
		status := c.Status
		if c.Severity != model.SeverityNone {
			status += " " + string(c.Severity)
		}
		r := rMuted
		if c.Severity == model.SeverityError {
			r = rSevError
		}
		out = detailCondition(out, mark, c.Type, status, c, r, now, iw)
	}
	return out
}

// detailCondition adds one condition's lines: its mark, type and status,
// when it last changed, then its reason and message (in r) whole.
func detailCondition(out []line, mark seg, typ, status string, c model.Condition, r role, now time.Time, iw int) []line {
	segs := []seg{{" " + mark.text + " ", mark.r}, {typ, rText}, {"  " + status, mark.r}}
	if !c.LastTransitionTime.IsZero() {
		segs = append(segs, seg{"  " + stamp(c.LastTransitionTime, now), rMuted})
	}
	out = append(out, line{segs: segs})
	if c.Reason != "" {
		out = append(out, wrapTagged("     reason  ", c.Reason, r, "", rText, iw)...)
	}
	for i, l := range strings.Split(strings.TrimRight(c.Message, "\n"), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		prefix := "     message "
		if i > 0 {
			prefix = spaces(width(prefix))
		}
		out = append(out, wrapTagged(prefix, strings.TrimSpace(l), r, "", rText, iw)...)
	}
	return out
}

// detailUpgraderPod shows the upgrader pod under the steps its containers
// report: each container in the order the pod runs them, its state, and
// for the one that failed what it exited with and the command that reads
// its log. The steps say which failed; this says why. cmds are the commands
// the lines show, whole.
func detailUpgraderPod(st *styles, s *model.ClusterState, node string, iw int) (out []line, cmds []string) {
	sym := st.th.Sym
	wrapped := func(prefix, text string, r role) {
		out = append(out, wrapTagged(prefix, text, r, "", rText, iw)...)
	}
	label := " " + fit("pod", detailLabelW)
	src := s.Source(model.KindUpgraderPod)
	switch {
	case src.Forbidden != "":
		// Optional: the steps above still say which failed.
		text := "not shown (forbidden: " + src.Forbidden + ")"
		if fix := model.GrantFor(src.Forbidden, s.Conn); fix != "" {
			text += "; fix: " + fix
		}
		wrapped(label, text, rSevWarning)
		return out, backquoted(text)
	case s.Sources != nil && src.Installed && !src.Synced:
		wrapped(label, "not listed yet", rMuted)
		return out, nil
	}
	p := s.UpgraderPodOf(node)
	if p == nil {
		wrapped(label, "none on node "+node+" (not created yet, or deleted by a retry)", rMuted)
		return out, nil
	}
	phase := p.Phase
	if phase == "" {
		phase = "no phase reported yet"
	}
	wrapped(label, p.Name+", "+phase, rText)
	failing := p.Failing()
	for i := range p.Containers {
		c := &p.Containers[i]
		mark, r, nr := sym.Pending, rMuted, rText
		switch {
		case c.Failing():
			mark, r, nr = sym.Fail, rFailure, rFailure
		case c.State.Terminated:
			mark, r = sym.OK, rCondTrue
		case c.State.Running:
			mark, r = sym.Active, rSevInfo
		}
		segs := []seg{{"   " + mark + " ", r}, {c.Name, nr}}
		if step := model.UpgraderContainerSteps[c.Name]; step != "" {
			segs = append(segs, seg{"  " + step, rMuted})
		}
		out = append(out, line{segs: segs})
		state := c.State.String()
		if c.RestartCount > 0 {
			state += "; " + model.Restarts(c.RestartCount)
		}
		wrapped("       ", state, r)
		if c.Last != nil && !c.State.Terminated {
			wrapped("       last ", c.Last.String(), r)
		}
		if c == failing {
			logs := p.LogsCommand(c.Name, s.Conn)
			wrapped("       logs ", logs, rBold)
			cmds = append(cmds, logs)
		}
	}
	return out, cmds
}

// detailNodeConditions lists the node's abnormal conditions (DiskPressure
// True, a node-problem-detector's KernelDeadlock…) as warnings: the model
// keeps no other, and a node holds none while healthy.
func detailNodeConditions(warn string, cs model.Conditions, now time.Time, iw int) []line {
	var out []line
	for _, c := range cs {
		out = detailCondition(out, seg{warn, rSevWarning}, "node "+c.Type, c.Status, c, rSevWarning, now, iw)
	}
	return out
}

// addressesText is the machine's addresses on one line, as an operator
// reads them to reach it: "InternalIP 10.0.0.5 · Hostname ip-10-0-0-5".
func addressesText(as []model.MachineAddress) string {
	parts := make([]string, len(as))
	for i, a := range as {
		parts[i] = a.Type + " " + a.Address
	}
	return strings.Join(parts, " · ")
}

// detailEvent is an event the detail lists; owner marks one its machine's
// owner emitted about it.
type detailEvent struct {
	model.Event
	owner bool
}

// detailEvents are the events of evs (newest first) about the detail's
// subjects (historySubjects: the machine, its node, its in-place upgrade,
// and its owner's that name it), the same objects the read from the API
// server asks about. The owner's are where etcdadm, KCP and the MachineSet
// say they created or deleted the machine, or wait for it: nothing about
// it among its own events says so.
func detailEvents(evs []model.Event, subs []model.EventSubject) []detailEvent {
	var out []detailEvent
	for _, ev := range evs {
		for _, sub := range subs {
			if sub.Matches(ev.ObjectKind, ev.ObjectName, ev.Message) {
				out = append(out, detailEvent{Event: ev, owner: sub.Naming != ""})
				break
			}
		}
	}
	return out
}

// kindMachineSet is the involved-object kind of a MachineSet's events; the
// model has no MachineSets, only their events.
const kindMachineSet = "MachineSet"

// mergeEvents is the events read from the API server and the kept ones,
// each once (the later write of one that changed since the read), newest
// first.
func mergeEvents(read, kept []model.Event) []model.Event {
	out := make([]model.Event, 0, len(read)+len(kept))
	at := make(map[string]int, len(read)+len(kept))
	for _, list := range [][]model.Event{read, kept} {
		for _, e := range list {
			k := e.Identity()
			if i, ok := at[k]; ok && k != "" {
				if e.ResourceVersion > out[i].ResourceVersion {
					out[i] = e
				}
				continue
			}
			at[k] = len(out)
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Newer(&out[j]) })
	return out
}

// historyFailure says why the events were not read, or were read in part:
// a permission with the rule that grants it, as the panes say it, a read
// cut short, or the error.
func historyFailure(err error, conn model.ConnFlags) string {
	var fe *model.ForbiddenError
	var pe *model.PartialHistoryError
	if errors.As(err, &pe) {
		return errText(pe)
	}
	if errors.As(err, &fe) {
		text := "not read from the API server (forbidden: " + fe.Forbidden + ")"
		if fix := model.GrantFor(fe.Forbidden, conn); fix != "" {
			text += "; fix: " + fix
		}
		return text
	}
	msg, _, _ := strings.Cut(errText(err), "\n")
	return "not read from the API server: " + truncate(msg, historyErrW)
}

// historyErrW bounds an error's text: an API server's can run to pages.
const historyErrW = 200

// eventsKept says how many events are shown of how many the snapshot keeps:
// the watchers keep the newest (maxEvents) of the whole cluster, so an
// older event about this machine may have been dropped.
func eventsKept(shown, kept int) string {
	if kept >= maxEvents {
		return strconv.Itoa(shown) + " of the newest " + strconv.Itoa(kept) + " events of the cluster, all the console keeps"
	}
	return strconv.Itoa(shown) + " of the " + strconv.Itoa(kept) + " events the console keeps"
}

// footer is the keys' line, no wider than iw: the scroll keys and position
// shorten, then y and ? are left out, so that the keys that close the view
// end the line and stay in view. At 40 columns the scroll keys alone ran
// past the edge, where esc/q close was cut.
func (v *nodeDetail) footer(iw int) string {
	const end = "esc/q close"
	footer := end
	if v.maxOffset > 0 {
		above, below := v.offset, v.maxOffset-v.offset
		for _, s := range []string{
			fmt.Sprintf("↑/↓ pgup/pgdn g/G scroll (%d above, %d below)", above, below),
			fmt.Sprintf("↑/↓ scroll (%d above, %d below)", above, below),
			"↑/↓ " + countsText(above, below),
		} {
			if width(s+" · "+end) <= iw {
				footer = s + " · " + end
				break
			}
		}
	}
	if len(v.cmds) > 0 {
		for _, y := range []string{"y copy command · ", "y copy · "} {
			if width(y+footer) <= iw {
				footer = y + footer
				break
			}
		}
	}
	if h := strings.Replace(footer, end, "? help · "+end, 1); width(h) <= iw {
		footer = h
	}
	return footer
}

// View draws the box: the name, the body's window, the keys.
func (v *nodeDetail) View() string {
	st := v.st
	iw := v.innerWidth()
	v.clamp()
	vis := v.visible()
	footer := v.footer(iw)
	var b strings.Builder
	n := 0
	emit := func(l line) {
		if n > 0 {
			b.WriteByte('\n')
		}
		n++
		st.paintSegs(&b, l.segs, iw)
	}
	for _, l := range v.head {
		emit(l)
	}
	for range v.gap() {
		emit(line{})
	}
	for i := 0; i < vis; i++ {
		if j := v.offset + i; j < len(v.body) {
			emit(v.body[j])
			continue
		}
		emit(line{})
	}
	for range v.gap() {
		emit(line{})
	}
	if rows := v.helpRows(); rows != nil {
		for _, r := range rows {
			b.WriteByte('\n')
			b.WriteString(fit(r, iw))
		}
		return st.th.Dialog.Render(b.String())
	}
	emit(line{segs: []seg{{footer, rMuted}}})
	return st.th.Dialog.Render(b.String())
}
