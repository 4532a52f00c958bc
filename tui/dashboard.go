package tui

import (
	"slices"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/report"
	"github.com/upgrade-console/upgrade-console/themes"
	"github.com/upgrade-console/upgrade-console/upgrade/recovery"
)

// rederiveEvery is how often progress is re-derived while no snapshot
// arrives (for stalls, which are a matter of time).
const rederiveEvery = 5 * time.Second

// frameInterval is the shortest time between two rebuilds of the view from
// snapshots: at most 10 per second, however fast the cluster changes.
const frameInterval = 100 * time.Millisecond

// frameSlack is how much closer than frameInterval two snapshots may be
// taken and still count as spaced: paced snapshots (Pacer) are frameInterval
// apart by schedule, and their timer fires a few milliseconds late by a
// varying amount.
const frameSlack = 10 * time.Millisecond

type (
	// frameMsg fires when a rebuild held back by frameInterval is due.
	frameMsg struct{}
	// clockMsg fires every second: "since" columns, elapsed times and
	// stalls move with the clock even when the cluster is silent.
	clockMsg struct{}
)

// Dashboard is the live view of an upgrade: header, panes, stall line.
type Dashboard struct {
	opts Options
	keys KeyMap
	help help.Model

	filter    textinput.Model
	filtering bool

	st *styles
	w  int
	h  int

	state    *model.ClusterState
	built    uint64              // snapshot version the panes were built from
	shown    *model.ClusterState // that snapshot (state may be newer, held back by frameInterval)
	dirty    bool
	pending  bool // a frameMsg is scheduled
	lastRun  time.Time
	builtAt  time.Time // when the snapshot last built was taken
	now      time.Time
	progress model.Progress
	deriver  model.Deriver
	// stalled are the objects the progress names as stalled.
	stalled stallSet
	// derivedAt is when progress was last derived.
	derivedAt time.Time
	// oldestKubelet is the oldest minor the nodes run, found once per
	// list of nodes (a pass over every node), not on every clock tick or
	// Machine change; oldestFrom is that list's Key.
	oldestKubelet string
	oldestFrom    *[]*model.Node
	// failedAt is when the judge declared the upgrade failed; zero while it
	// does not (a retried step takes it on again).
	failedAt time.Time
	timeline model.Timeline
	judge    report.Judge
	outcome  report.Outcome
	// resume tells the clock ticks of a console that did not run for a
	// while (ctrl+z, SIGSTOP, a laptop asleep); stoppedFor is how long,
	// said while it catches up.
	resume     report.Resume
	stoppedFor time.Duration
	// confirm is where the API server's confirmation of completion stands
	// (Options.Confirm).
	confirm completionConfirm

	cluster, etcd, cp, events textPane
	nodes                     nodesPane

	focus  paneID
	zoom   bool
	expand bool
	// overlaid: a dialog covers the dashboard (setOverlaid).
	overlaid bool

	header headerModel
	// headerGen counts header rebuilds; headerCache holds its rendering.
	headerGen   uint64
	headerCache renderCache
	stalls      []line // the first maxStallLines of stallCount
	stallCount  int
	// pauseLine is the index in stalls of the pause, which is wrapped
	// rather than cut; -1 when the upgrade is not paused.
	pauseLine int
	// pauseWrap is the pause wrapped to the width, kept until either
	// changes (the layout asks for it on every clock tick).
	pauseWrap   pauseWrap
	stallRowBuf []line // storage of plan.stalls
	plan        layoutPlan
	helpOut     string
	actionsGen  uint64 // moves when the action keys shown change
	helpKey     helpKey
	// quitArmed: q was pressed while quitAsks, and the footer asks for it
	// again.
	quitArmed bool
	// leaseGoneAsked: a renewal was asked of a watched Lease that no
	// longer names this console (ownLeaseGone).
	leaseGoneAsked bool
}

type helpKey struct {
	w         int
	all       bool
	filtering bool
	quit      bool
	st        *styles
	actions   uint64 // actionsGen
	describe  bool   // d describes the row under the cursor
	member    bool   // an etcd member's (the etcd pane focused)
	copy      bool   // y copies a command of the status lines
	zoom      bool   // enter unzooms (zoomKeys)
	expand    bool   // e collapses the groups
}

// NewDashboard returns the dashboard screen.
func NewDashboard(opts Options) *Dashboard {
	d := &Dashboard{opts: opts, keys: DefaultKeyMap(), help: help.New(), focus: paneNodes, judge: report.NewJudge(), pauseLine: -1}
	suspendOff(&d.keys.Suspend, opts)
	d.refreshActions()
	d.cluster = textPane{id: paneCluster, usesClock: true}
	d.etcd = textPane{id: paneEtcd, usesClock: true, selectable: true}
	d.cp = textPane{id: paneControlPlane, usesClock: true}
	d.events = textPane{id: paneEvents, usesClock: true}
	d.filter = textinput.New()
	d.filter.Prompt = "/"
	d.filter.Placeholder = "node, phase, step, failed, stalled…"
	d.filter.CharLimit = 64
	th := initialTheme(opts)
	d.setTheme(th)
	d.now = opts.clock().Now()
	d.rebuild()
	return d
}

// Init starts the clock.
func (d *Dashboard) Init() tea.Cmd { return clockTick() }

func clockTick() tea.Cmd {
	return tea.Every(time.Second, func(time.Time) tea.Msg { return clockMsg{} })
}

// SetSize follows the terminal.
func (d *Dashboard) SetSize(w, h int) {
	d.w, d.h = w, h
	d.help.SetWidth(w)
	d.filter.SetWidth(filterWidth(w))
	d.relayout()
}

// ShortHelp and FullHelp make the dashboard a help.KeyMap.
func (d *Dashboard) ShortHelp() []key.Binding  { return d.zoomKeys().ShortHelp() }
func (d *Dashboard) FullHelp() [][]key.Binding { return d.zoomKeys().FullHelp() }

// setOverlaid lays the status out for a dialog over the dashboard: the
// dialog's margin leaves the last status row and the footer in view, so a
// status of several rows (a pause wrapped with its resume command) showed
// its last row alone, a sentence's end. Under a dialog it takes one row,
// from its start.
func (d *Dashboard) setOverlaid(on bool) {
	if d.overlaid != on {
		d.overlaid = on
		d.relayout()
	}
}

// zoomKeys is the key map as the help shows it: zoomed, enter unzooms
// (the footer said "enter zoom" over a pane that filled the screen).
func (d *Dashboard) zoomKeys() KeyMap {
	k := d.keys
	if d.zoom {
		k.Zoom.SetHelp(k.Zoom.Help().Key, "unzoom")
	}
	return k
}

// State is the newest snapshot the dashboard holds.
func (d *Dashboard) State() *model.ClusterState { return d.state }

// Progress is the progress derived at the last rebuild.
func (d *Dashboard) Progress() model.Progress { return d.progress }

// Focus is the focused pane's name, Zoomed whether it fills the body, and
// Filter the node filter (for tests and for screens built on top).
func (d *Dashboard) Focus() string  { return d.focus.String() }
func (d *Dashboard) Zoomed() bool   { return d.zoom }
func (d *Dashboard) Filter() string { return d.nodes.filter }

func (d *Dashboard) setTheme(th *themes.Theme) {
	d.st = newStyles(th)
	d.help.Styles = th.Help
	d.filter.SetStyles(th.InputStyles())
}

// Update handles snapshots, ticks and keys.
func (d *Dashboard) Update(msg tea.Msg) (Screen, tea.Cmd) {
	switch msg := msg.(type) {
	case ThemeMsg:
		d.setTheme(msg.Theme)
		d.built = 0
		d.rebuild()
		return d, nil
	case SnapshotMsg:
		back := d.state != nil && d.state.Connection != model.Live && msg.State != nil && msg.State.Connection == model.Live
		d.state = msg.State
		d.dirty = true
		if back && d.opts.Lock != nil && d.opts.Lock().RenewErr != "" {
			// Live again after a renewal failed: an outage longer than
			// the Lease left it expired, and the next renewal is up to
			// 20 s away, while other consoles call it stale.
			return d, tea.Batch(d.maybeRebuild(), d.renewLockNow(false))
		}
		if d.ownLeaseGone() {
			// The watched Lease no longer names this console (cleared by
			// `lock clear lease --force`, taken by another console): a
			// renewal now says the lock is lost, where the header said
			// "held by this console" until the next renewal, 20 s away.
			return d, tea.Batch(d.maybeRebuild(), d.renewLockNow(false))
		}
		return d, d.maybeRebuild()
	case frameMsg:
		d.pending = false
		if d.dirty {
			return d, d.rebuild()
		}
		return d, nil
	case confirmedMsg:
		if d.confirm.answered(msg) {
			d.judge = d.judge.Unconfirmed(d.progress, d.now, msg.err)
		}
		cmd := d.refreshProgress(false)
		d.relayout()
		return d, cmd
	case tea.ResumeMsg:
		d.look()
		return d, d.renewLockNow(true)
	case lockRenewedMsg:
		// What the renewal found (renewed, failing, lost) shows now, not
		// on the next tick.
		d.now = d.opts.clock().Now()
		cmd := d.refreshProgress(false)
		d.relayout()
		return d, cmd
	case clockMsg:
		d.now = d.opts.clock().Now()
		d.look()
		// Offers can depend on time alone (a lease goes stale, an etcd
		// member passes the rollback threshold): ask again every tick.
		d.refreshActions()
		cmd := d.refreshProgress(false)
		d.relayout()
		return d, tea.Batch(cmd, clockTick())
	case tea.KeyPressMsg:
		if d.filtering {
			return d, d.updateFilter(msg)
		}
		return d, d.handleKey(msg)
	}
	if d.filtering {
		var cmd tea.Cmd
		d.filter, cmd = d.filter.Update(msg)
		return d, cmd
	}
	return d, nil
}

// maybeRebuild rebuilds now if the last rebuild is older than
// frameInterval, otherwise schedules one: bursts of snapshots coalesce into
// at most ten rebuilds a second, and a lone change shows at once.
//
// Snapshots taken frameInterval apart are rebuilt at once whenever they
// arrive: the watchers already publish at most ten a second, and measuring
// the interval again from when the last rebuild ran would hold back every
// snapshot that follows a late one (a second coalescing in series with
// the watchers', which showed as tail latency under load).
func (d *Dashboard) maybeRebuild() tea.Cmd {
	now := d.opts.clock().Now()
	wait := frameInterval - now.Sub(d.lastRun)
	spaced := d.state != nil && !d.state.At.IsZero() && !d.builtAt.IsZero() && d.state.At.Sub(d.builtAt) >= frameInterval-frameSlack
	if d.lastRun.IsZero() || wait <= 0 || spaced {
		return d.rebuild()
	}
	if d.pending {
		return nil
	}
	d.pending = true
	return tea.Tick(wait, func(time.Time) tea.Msg { return frameMsg{} })
}

// look records a clock tick, and starts a catch-up when the ticks stopped:
// the informers' cache is as old as the stop, and judged against the time
// now it aged every wait by the whole stop (stalls of 40m), and could call
// the upgrade failed on a step that failed for a moment before it.
func (d *Dashboard) look() {
	if gap, stopped := d.resume.Look(d.opts.clock().Now()); stopped {
		d.stoppedFor = gap
	}
}

// rebuild derives progress and rebuilds every view-model from the newest
// snapshot. It is the only place snapshot data is read.
func (d *Dashboard) rebuild() tea.Cmd {
	d.now = d.opts.clock().Now()
	if d.state != nil {
		d.lastRun = d.now
	}
	d.dirty = false
	var version uint64
	if d.state != nil {
		version = d.state.Version
	}
	if d.built != version || version == 0 {
		d.buildPanes()
		d.built, d.shown = version, d.state
		if d.state != nil {
			d.builtAt = d.state.At
		}
		d.refreshActions()
	}
	cmd := d.refreshProgress(true)
	d.relayout()
	return cmd
}

// nodeDetailInput is what the node detail shows its machine from: the
// snapshot the panes show, and the stalls derived from it.
func (d *Dashboard) nodeDetailInput() nodeDetailInput {
	return nodeDetailInput{state: d.shown, stalls: d.progress.Stalls, derivedAt: d.derivedAt, now: d.now}
}

// refreshActions sets the action keys the help shows: those bound (not
// dangerous in read-only mode) and offered for the current snapshot.
func (d *Dashboard) refreshActions() {
	shown := offeredActions(d.opts, d.state)
	if !slices.EqualFunc(shown, d.keys.Actions, func(a, b key.Binding) bool { return a.Help() == b.Help() }) {
		d.actionsGen++
	}
	d.keys.Actions = shown
}

func (d *Dashboard) buildPanes() {
	s := d.state
	for _, p := range [...]*textPane{&d.cluster, &d.etcd, &d.cp, &d.events} {
		p.height = d.plan.height[p.id]
	}
	d.cluster.set(buildClusterPane(d.st, s))
	// The nodes table before the control plane: the control plane's title
	// counts up-to-date machines from the table's join.
	d.nodes.expand = d.expand
	d.nodes.set(d.st, s, d.stalled)
	d.nodes.follow()
	d.cp.set(buildControlPlanePane(d.st, s, d.expand, d.nodes.join.controlPlaneCount(s)))
	d.etcd.set(buildEtcdPane(d.st, s, d.expand, d.stalled))
	d.events.set(buildEventsPane(d.st, s))
}

// refreshProgress re-derives progress (stalls depend on the clock), the
// timeline, the header and the stall lines, and judges the outcome.
//
// On a clock tick with no new snapshot only time has moved, and time matters
// to the derivation only through stalls (thresholds of minutes, sentences
// in minutes): re-deriving every rederiveEvery is plenty, and at fleet scale
// saves most of an idle console's CPU (a derivation at 10,000 nodes costs
// milliseconds).
func (d *Dashboard) refreshProgress(snapshotChanged bool) tea.Cmd {
	var cmd tea.Cmd
	catchingUp := d.state != nil && d.resume.CatchingUp(d.now)
	if d.state != nil && snapshotChanged && (d.oldestFrom != d.state.Nodes.Key() || d.state.Nodes.Len() == 0) {
		// Once per list of nodes: a pass over every kubelet's version.
		d.oldestKubelet, d.oldestFrom = oldestKubelet(d.state), d.state.Nodes.Key()
	}
	if d.state != nil {
		every := rederiveEvery
		if len(d.progress.Stalls) > 0 {
			// A stall's sentence carries its age ("failed 5s ago"), which
			// the nodes and events rows count on every tick: re-derived
			// as often, the status line does not lag them by seconds.
			every = 0 // every clock tick: a tick can come a little early
		}
		if catchingUp || snapshotChanged || d.now.Sub(d.derivedAt) >= every || d.now.Before(d.derivedAt) {
			said := d.progress.Stalls
			d.progress = d.deriver.Derive(d.state, model.ProgressOptions{StallAfter: d.opts.StallAfter}, d.now)
			d.derivedAt = d.now
			if catchingUp {
				// Until caught up, a new stall rests on what the
				// console did not see; those said before stay.
				d.progress.Stalls = report.SaidStalls(said, d.progress.Stalls)
				d.derivedAt = time.Time{}
			}
			if st := newStallSet(d.progress.Stalls); st.key != d.stalled.key {
				// The rows mark stalled machines: rebuild them.
				d.stalled = st
				d.buildPanes()
			}
		}
		timed := d.progress
		if a := d.opts.AppliedAt; a.After(timed.SpecChangedAt) {
			// This console's apply of machine configs alone: the
			// Cluster's last spec change is the earlier upgrade's
			// (D11: "elapsed 5:57" of a rollout the audit log timed
			// at 16 s). A later spec, another console's, is later.
			timed.SpecChangedAt = a
		}
		d.timeline = d.timeline.ObserveResumed(timed, d.now, d.resume.SeenAt(d.now))
		if !catchingUp {
			// The judge's holds and graces would count the time the
			// console did not see: what it decides waits until then.
			cmd = d.judgeOutcome()
		}
	}
	hp, htl := failedStrip(d.progress, d.timeline, d.judge, d.failedAt)
	d.header = buildHeader(d.st, d.state, d.oldestKubelet, hp, htl, d.opts, d.now)
	// Read once: at fleet scale it walks every Machine mid-rollout.
	offer := etcdOfferOf(d.state, d.rollbackAfter(), d.now, d.opts.SelfHolder)
	d.header.etcdOffered = offer.offered
	d.headerGen++
	d.stalls, d.stallCount, d.pauseLine = statusLines(d.st, d.state, d.progress, d.judge, d.confirm.words(), offer, d.rollbackAfter(), d.now)
	if catchingUp {
		d.prependStatus(seg{" ◌ " + report.ResumedText(d.stoppedFor), rStall})
	}
	if d.opts.Lock != nil && d.st != nil {
		// The header says "renewal failing"; why (a full disk under the
		// audit log, a refusal) fits only here, wrapped as a failure is.
		if l := d.opts.Lock(); l.RenewErr != "" && !l.Lost && !l.Kept {
			d.prependStatus(seg{" " + d.st.th.Sym.Warn + " this console's upgrade lock is not renewed: " + l.RenewErr, rFailure})
		}
	}
	return cmd
}

// prependStatus puts a line of one segment first among the status lines,
// before the stalls and the pause, counted with them.
func (d *Dashboard) prependStatus(s seg) {
	d.stalls = append([]line{{segs: []seg{s}}}, d.stalls...)
	d.stallCount++
	if d.pauseLine >= 0 {
		d.pauseLine++
	}
}

// judgeOutcome judges the outcome of the progress derived: on every
// refresh, also after the outcome was recorded, as the status line says
// what the judge sees (confirming, at rest, done), as the plain watch does.
func (d *Dashboard) judgeOutcome() tea.Cmd {
	var cmd tea.Cmd
	var o report.Outcome
	d.judge, o = d.judge.Observe(d.progress, d.now)
	if o == report.Done && d.opts.Confirm != nil {
		var ask tea.Cmd
		o, ask = d.confirm.needed(d.opts.Confirm, d.state)
		cmd = tea.Batch(cmd, ask)
	} else {
		// A refusal stays said while the rule holds its time again;
		// a question under way is answered to nobody.
		d.confirm.asking, d.confirm.confirmed = false, false
		if !d.progress.Complete {
			d.confirm.err = nil
		}
	}
	if d.outcome == report.Running && o != report.Running {
		d.outcome = o
		cmd = d.record(o)
	}
	switch {
	case o != report.Failed:
		d.failedAt = time.Time{}
	case d.failedAt.IsZero():
		d.failedAt = d.now
	}
	return cmd
}

// record reports how the upgrade ended, once, for the exit code.
func (d *Dashboard) record(out report.Outcome) tea.Cmd {
	reason := ""
	if out == report.Failed {
		reason = d.judge.Reason()
	}
	atRest := out == report.Done && d.judge.AtRest()
	record := func() tea.Msg { return OutcomeMsg{Outcome: out, Reason: reason, AtRest: atRest} }
	if d.opts.QuitOnDone {
		return tea.Sequence(record, quitWhenIdle)
	}
	return record
}

// buildStallLines is the bottom line(s): the failure, the stalls, or the
// summary of where the upgrade stands.
// maxStallLines is the most stall lines the layout shows: only those are
// drawn, whatever the count (at fleet scale hundreds of machines can be
// stuck at once, and a line for each was built on every rebuild).
const maxStallLines = 3

// pausePrefix starts the pause's status line; its continuation lines are
// indented by as many cells, so the sentence reads as one block.
const pausePrefix = " " + markHeld + " "

// buildStallLines is statusLines of a progress no judge has seen.
func buildStallLines(st *styles, s *model.ClusterState, p model.Progress) ([]line, int, int) {
	return statusLines(st, s, p, report.Judge{}, "", etcdOffer{}, 0, time.Time{})
}

// rollbackAfter is when R offers the etcd rollback, zero when it never does
// here (read-only: the action is unbound).
func (d *Dashboard) rollbackAfter() time.Duration {
	if d.opts.ReadOnly {
		return 0
	}
	return d.opts.EtcdRollbackAfter
}

// etcdOffer is the new etcd member the recovery menu would offer to roll
// back (recovery.EtcdRollbackMember, the menu's own rule), and whether it
// does now: a hint by a rule of its own said "offered" of a rollout the menu
// does not offer to roll back.
type etcdOffer struct {
	newest  *model.Machine // nil: no rollback to offer
	offered bool
	running bool // its rollback is recorded on the Cluster, not finished
	// locked: due, but another console holds a live upgrade lock, and the
	// menu does not offer it.
	locked bool
}

func etcdOfferOf(s *model.ClusterState, after time.Duration, now time.Time, self string) etcdOffer {
	if after <= 0 || s == nil || now.IsZero() {
		return etcdOffer{}
	}
	m, due := recovery.EtcdRollbackMember(s, now, after)
	o := etcdOffer{newest: m, offered: due}
	if m != nil && s.Lock != nil && s.Lock.HolderIdentity != self && recovery.LiveLockOfAnother(s, now) {
		o.offered, o.locked = false, true
	}
	if rec, ok := s.Cluster.EtcdRollback(); ok && rec.Running() && m != nil && rec.NewMachine == m.Name {
		// The rollback of this member is under way (or was cut short):
		// "offered" read as one yet to start.
		o.running = true
	}
	return o
}

// when is what the stall line of the new member adds, before its details:
// when R offers the rollback ("R offers rollback at 15m"), or that it does
// now. R pressed before then did nothing, and nothing said why. Short: at
// 80 columns "(R: etcd rollback offered)" beside the machine's name and
// the "(+1 more)" count was cut to "(R: etcd rollba…".
func (o etcdOffer) when(sl model.Stall, after time.Duration) string {
	switch {
	case o.newest == nil || sl.Kind != model.KindMachine || sl.Name != o.newest.Name:
		return ""
	case o.locked && o.running:
		return "another console holds the upgrade lock, its rollback under way"
	case o.locked:
		return "no rollback while another console holds the upgrade lock"
	case o.running:
		return "its etcd rollback is under way, or was cut short: R shows it"
	case o.offered:
		return "R: roll back"
	}
	return "R offers rollback at " + model.ShortDuration(after)
}

// statusLines returns the first maxStallLines lines of the stall list, how
// many lines it has in all, and the index of the pause among them (-1 when
// not paused). Each is one line of text, however long: the layout cuts them
// to the width, except the pause, which it wraps (layoutStalls). The judge
// has observed p: it words the end (failed, confirming, done, at rest) as
// the plain watch and apply --wait do.
//
// unconfirmed, when set, is said instead of "upgrade complete" while the API
// server has not confirmed it (completionConfirm.words); offer (etcdOfferOf),
// rollbackAfter and now place the etcd rollback's hints.
func statusLines(st *styles, s *model.ClusterState, p model.Progress, j report.Judge, unconfirmed string, offer etcdOffer, rollbackAfter time.Duration, now time.Time) ([]line, int, int) {
	sym := st.th.Sym
	var out []line
	pause := -1
	stalls := p.Stalls
	if sl, ok := j.FailedOn(); ok && !p.Failed {
		// The failure line below says it, with what resumes it: the
		// stall's own line only repeated it.
		stalls = slices.DeleteFunc(slices.Clone(stalls), func(x model.Stall) bool { return x.Kind == sl.Kind && x.Name == sl.Name })
	}
	total := len(stalls)
	switch {
	case p.Failed:
		total++
		out = append(out, line{segs: []seg{{" " + sym.Fail + " upgrade failed: " + firstLine(p.FailureMessage), rFailure}}})
	case j.Reason() != "" && (p.EtcdRollback == nil || p.EtcdRollback.Running()):
		// A step that stayed failed past the grace: the upgrade failed,
		// and the line says what resumes it. After an etcd rollback the
		// pause line below says it, with the command that resumes.
		total++
		out = append(out, line{segs: []seg{{" " + sym.Fail + " upgrade failed: " + j.Reason(), rFailure}}})
	}
	if s != nil && (s.Connection == model.Connecting || s.Connection == "" || credentialsRefused(s)) && s.ConnectionErr != "" {
		// Never live yet: an API server that cannot be reached (a dead
		// kubeconfig) left "connecting" and "syncing…" on screen with
		// nothing to say why, for as long as the operator waited.
		total++
		// The fix before the error, which the width may cut.
		text := " ◌ API server not reached yet (check --kubeconfig and --context; retrying): " + firstLine(s.ConnectionErr)
		if strings.HasPrefix(s.ConnectionErr, model.CredentialsRefused) {
			// Reached, and the credentials refused: "not reached" sent
			// the operator to check the server, and a retry never mends
			// an expired token. Refused after the first sync (a token
			// revoked mid-watch), the header's "credentials refused"
			// needs the same fix said.
			text = " ◌ " + model.CredentialsRefused + ": refresh them (an expired or revoked token or certificate) or choose others with --kubeconfig, --context or --user; retrying"
		}
		out = append(out, line{segs: []seg{{text, rStall}}})
	}
	pauseText := p.Pause
	if p.Current == model.PhasePaused {
		pauseText = p.Summary // under way, the pause is the summary
	}
	if p.Paused && pauseText != "" {
		// First, before the stalls: the pause is why nothing moves, and the
		// summary says how the upgrade resumes.
		total++
		pause = len(out)
		out = append(out, line{segs: []seg{{pausePrefix + pauseText, rPaused}}})
	}
	if cc := capiClusterOf(s); cc != nil && cc.Paused {
		// EKS-A's etcd restore, a backup or clusterctl move pauses it:
		// left so, CAPI rolls no machine, and the stalls below said only
		// that nothing moved (preflight's eksa-reconcile-not-paused).
		total++
		resume := cc.ResumeCommand(s.Conn)
		out = append(out, line{segs: []seg{{pausePrefix + "Cluster API paused: spec.paused is true on Cluster " + cc.Namespace + "/" + cc.Name +
			"; it rolls no machine until resumed (" + resume + ")", rPaused}}, cmd: resume})
	}
	for _, sl := range stalls {
		if len(out) == maxStallLines {
			break
		}
		mark, r := sym.Warn, rStall
		if sl.Failed {
			mark, r = sym.Fail, rFailure
		}
		text := sl.Sentence
		if when := offer.when(sl, rollbackAfter); when != "" {
			// Before the details, which the width cuts.
			if i := strings.Index(text, ": "); i > 0 {
				text = text[:i] + " (" + when + ")" + text[i:]
			} else {
				text += " (" + when + ")"
			}
		}
		out = append(out, line{segs: []seg{{" " + mark + " " + text, r}}})
	}
	// A rollback threshold under the stall threshold (watch's
	// --etcd-rollback-threshold 5m beside its 10m --stall-after): R offered
	// the rollback before any line said why.
	if m := offer.newest; offer.offered && len(out) < maxStallLines &&
		!slices.ContainsFunc(stalls, func(sl model.Stall) bool { return sl.Kind == model.KindMachine && sl.Name == m.Name }) {
		total++
		when := offer.when(model.Stall{Kind: model.KindMachine, Name: m.Name}, rollbackAfter)
		out = append(out, line{segs: []seg{{" " + sym.Warn + " etcd machine " + m.Name + " not ready " + model.ShortDuration(now.Sub(m.CreationTimestamp)) +
			" after its creation (" + when + ")", rStall}}})
	}
	var status line
	switch {
	case s == nil:
		status = line{segs: []seg{{" waiting for the first snapshot from the API server…", rMuted}}}
	case p.Complete && j.AtRest():
		// Not "upgrade complete": none was under way. A pause, shown
		// above, holds back the next one.
		status = line{segs: []seg{{" " + j.Summary(p), rMuted}}}
	case p.Complete && unconfirmed != "":
		status = line{segs: []seg{{" " + unconfirmed, rMuted}}}
	case p.Complete && j.Confirming().IsZero():
		status = line{segs: []seg{{" " + sym.OK + " upgrade complete: every completion milestone met", rDone}}}
	case p.Complete:
		status = line{segs: []seg{{" " + j.Summary(p), rMuted}}}
	case len(out) == 0 && p.Summary != "":
		status = line{segs: []seg{{" " + p.Summary, rMuted}}}
	}
	switch {
	case len(status.segs) == 0:
	case len(out) == 0:
		return []line{status}, 1, -1
	case p.Complete && len(out) < maxStallLines:
		// At rest and paused: where the cluster stands, after the pause.
		total++
		out = append(out, status)
	}
	return out, total, pause
}

// takingText reports whether the node filter is being typed.
func (d *Dashboard) takingText() bool { return d.filtering }

// shownCommands are the commands of the status lines shown (y). While the
// filter is typed y is a letter of it, and while the footer asks to
// confirm a quit it is one of the "other keys" that keep the console.
func (d *Dashboard) shownCommands() ([]string, bool) {
	if d.filtering || d.quitPrompt() {
		return nil, false
	}
	return d.paneCommands(d.statusCommands(d.plan.stallShown)), true
}

// paneCommands appends to cmds the commands of the panes' access fixes
// (`kubectl auth can-i …`, which checks the grant): at 150 columns a pane
// cut the fix before its command, and the command, with the connection
// flags, runs past 80. Zoomed, only the zoomed pane's.
func (d *Dashboard) paneCommands(cmds []string) []string {
	panes := []paneID{paneCluster, paneEtcd, paneControlPlane, paneNodes, paneEvents}
	if d.zoom {
		panes = []paneID{d.focus}
	}
	for _, id := range panes {
		switch id {
		case paneNodes:
			cmds = addCommandsOf(cmds, d.nodes.avail.msg)
		case paneEtcd:
			cmds = addCommandsOf(cmds, d.etcd.avail.msg)
			// Its members' Machines denied, the pane says so on a line
			// of its own.
			cmds = deniedLineCommands(cmds, d.etcd.lines)
		case paneCluster:
			cmds = addCommandsOf(cmds, d.cluster.avail.msg)
		case paneControlPlane:
			cmds = addCommandsOf(cmds, d.cp.avail.msg)
		case paneEvents:
			cmds = addCommandsOf(cmds, d.events.avail.msg)
			// One namespace's denied, the others' events shown under it.
			cmds = deniedLineCommands(cmds, d.events.lines)
		}
	}
	return cmds
}

// deniedLineCommands appends to cmds the commands of the lines' error
// segments, where a pane that shows what it may read says what it may not
// and the fix. Only those: an event's message is the cluster's text.
func deniedLineCommands(cmds []string, lines []line) []string {
	for _, ln := range lines {
		for _, s := range ln.segs {
			if s.r == rSevError {
				cmds = addCommandsOf(cmds, s.text)
			}
		}
	}
	return cmds
}

// statusCommands are the commands of the first n status lines: those the
// layout shows, whole or cut at the width (the pause's "lock clear paused",
// the Cluster API resume), whole whatever the rows show of them.
func (d *Dashboard) statusCommands(n int) []string {
	var cmds []string
	for _, ln := range d.stalls[:min(n, len(d.stalls))] {
		for _, s := range ln.segs {
			cmds = addCommandsOf(cmds, s.text)
		}
		cmds = addCommand(cmds, ln.cmd)
	}
	return cmds
}

// quitAsks reports whether q should ask once more before quitting: this
// console holds the upgrade lock of an upgrade still under way (apply --tui),
// and quitting releases the lock while the cluster goes on upgrading. A lock
// already kept (the upgrade failed) or lost is left as it is by a quit, and
// watch holds no lock: q quits at once there.
func (d *Dashboard) quitAsks() bool {
	if d.outcome != report.Running {
		return false
	}
	if d.opts.Demo && d.state != nil && !d.progress.Complete {
		// The demo's world stops with the console, mid-upgrade, whoever
		// started it (--auto-start's scripted operator holds no lock).
		return true
	}
	if d.opts.Lock == nil {
		return false
	}
	l := d.opts.Lock()
	return l.Holder != "" && !l.Lost && !l.Kept
}

// lockRenewedMsg says a renewal asked by renewLockNow is done.
type lockRenewedMsg struct{}

// ownLeaseGone says whether this console holds its lock, renewed, while
// the watched Lease, its list synced, is gone or another's. Asked once per
// disagreement: the renewal settles it (lost), or the watch catches up.
func (d *Dashboard) ownLeaseGone() bool {
	gone := d.opts.Lock != nil && d.state.LockNotHeldBy(d.opts.SelfHolder)
	if gone {
		l := d.opts.Lock()
		gone = l.Holder != "" && !l.Lost && !l.Kept
	}
	ask := gone && !d.leaseGoneAsked
	d.leaseGoneAsked = gone
	return ask
}

// renewLockNow renews the lock this console holds at once, back from
// ctrl+z or from a lost connection: stopped, the process renewed nothing, and the Lease may have
// gone stale and been cleared or taken meanwhile. The header says what the
// renewal found as for any renewal ("✗ lock lost", "renewal failing"), and
// a lost lock is no longer this console's to release (quitAsks). resumed:
// back from ctrl+z (Options.RenewLock).
func (d *Dashboard) renewLockNow(resumed bool) tea.Cmd {
	if d.opts.RenewLock == nil || d.opts.Lock == nil {
		return nil
	}
	if l := d.opts.Lock(); l.Holder == "" || l.Lost || l.Kept {
		return nil
	}
	renew := d.opts.RenewLock
	return func() tea.Msg {
		renew(resumed)
		return lockRenewedMsg{}
	}
}

// quit answers q, on the dashboard or in a dialog over it: at once, or,
// while quitAsks, with the footer's question.
func (d *Dashboard) quit() tea.Cmd {
	if d.quitAsks() {
		d.quitArmed = true
		d.relayout()
		return nil
	}
	return tea.Quit
}

// quitPrompt reports whether the footer asks to confirm a quit.
func (d *Dashboard) quitPrompt() bool { return d.quitArmed && d.quitAsks() }

// footerBusy: the footer asks or takes text (footerOwner).
func (d *Dashboard) footerBusy() bool { return d.filtering || d.quitPrompt() }

func (d *Dashboard) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	k := d.keys
	if d.quitArmed {
		// Any key but q again keeps the console: the prompt goes, and the
		// key does what it does (esc only dismisses).
		d.quitArmed = false
		if key.Matches(msg, k.Quit) {
			return tea.Quit
		}
		if key.Matches(msg, k.Back) {
			d.relayout()
			return nil
		}
	}
	if d.plan.helpCut && !key.Matches(msg, k.Quit) {
		// The help covers the panes: a key closes it rather than move
		// a pane out of sight (the failed node scrolled away behind it).
		d.help.ShowAll = false
		d.relayout()
		return nil
	}
	switch {
	case key.Matches(msg, k.Quit):
		if msg.String() == "ctrl+c" {
			return tea.Quit
		}
		return d.quit()
	case key.Matches(msg, k.Help):
		d.help.ShowAll = !d.help.ShowAll
	case key.Matches(msg, k.NextPane):
		d.cycleFocus(1)
	case key.Matches(msg, k.PrevPane):
		d.cycleFocus(-1)
	case key.Matches(msg, k.Zoom):
		d.zoom = !d.zoom
	case key.Matches(msg, k.Back):
		// One thing at a time, what is on top first: the full help
		// (? closes it too), as on the plan screen; it stayed open while
		// esc cleared the filter behind it, unseen. Then the filter, as
		// the help says ("esc clear filter", and so does a table the
		// filter empties, zoomed or not), then the zoom. Unzooming first
		// left the filter the help said esc clears, and took the zoomed
		// table away from under it.
		switch {
		case d.help.ShowAll:
			d.help.ShowAll = false
		case d.nodes.filter != "":
			d.setFilter("")
		case d.zoom:
			d.zoom = false
		}
	case key.Matches(msg, k.Filter):
		d.focus = paneNodes
		d.filtering = true
		d.filter.SetValue(d.nodes.filter)
		d.filter.CursorEnd()
		d.relayout()
		return d.filter.Focus()
	case key.Matches(msg, k.Describe):
		r, ok := d.describable()
		if !ok {
			break
		}
		if d.help.ShowAll {
			// The full help of keys the dialog takes none of would stay
			// beneath it, as for the recovery menu.
			d.help.ShowAll = false
			d.relayout()
		}
		return OpenDialog(newNodeDetail(d, r, d.opts.EventHistory))
	case key.Matches(msg, k.Expand):
		d.expand = !d.expand
		d.nodes.built = false
		d.buildPanes()
	case key.Matches(msg, k.Up):
		d.scroll(-1)
	case key.Matches(msg, k.Down):
		d.scroll(1)
	case key.Matches(msg, k.PageUp):
		d.scrollPage(-1)
	case key.Matches(msg, k.PageDown):
		d.scrollPage(1)
	case key.Matches(msg, k.Home):
		d.scroll(-1 << 30)
	case key.Matches(msg, k.End):
		if d.focus == paneNodes {
			d.nodes.toEnd() // and stays there as rows arrive
			break
		}
		d.scroll(1 << 30)
	default:
		cmd := matchAction(d.opts, msg, d.state)
		if cmd != nil && d.help.ShowAll {
			// A dialog opens over the screen (the recovery menu): the
			// full help of the keys it takes none of would stay beneath
			// it, as on the plan screen.
			d.help.ShowAll = false
			d.relayout()
		}
		return cmd
	}
	d.relayout()
	return nil
}

// describable is the row d would describe: the one under the cursor of the
// focused nodes pane, or the member under the focused etcd pane's (external
// etcd members are Machines the nodes table does not list, and the ones an
// operator must reach when etcd's rollout fails).
func (d *Dashboard) describable() (nodeRow, bool) {
	switch d.focus {
	case paneNodes:
		r, ok := d.nodes.selected()
		if !ok || (r.machine == "" && r.name == "") {
			return nodeRow{}, false
		}
		return r, true
	case paneEtcd:
		if m := d.etcd.selectedMachine(); m != "" {
			return nodeRow{name: m, machine: m}, true
		}
	}
	return nodeRow{}, false
}

func (d *Dashboard) updateFilter(msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(msg, d.keys.AcceptFilter):
		d.filtering = false
		d.filter.Blur()
		d.relayout()
		return nil
	case key.Matches(msg, d.keys.ClearFilter):
		d.filtering = false
		d.filter.Blur()
		d.setFilter("")
		return nil
	}
	var cmd tea.Cmd
	d.filter, cmd = d.filter.Update(msg)
	if v := d.filter.Value(); v != d.nodes.filter {
		d.setFilter(v)
	}
	return cmd
}

func (d *Dashboard) setFilter(f string) {
	d.nodes.filter = strings.TrimSpace(f)
	d.keys.filterOn = d.nodes.filter != ""
	d.nodes.cursor, d.nodes.offset, d.nodes.tail = 0, 0, false
	d.nodes.regroup()
	d.relayout()
}

func (d *Dashboard) cycleFocus(dir int) {
	if d.zoom {
		// Zoomed, the next pane takes the zoom: the footer offered tab,
		// and with one pane visible it did nothing.
		d.focus = paneID((int(d.focus) + dir + int(paneCount)) % int(paneCount))
		return
	}
	for i := 1; i <= int(paneCount); i++ {
		next := paneID((int(d.focus) + dir*i + 2*int(paneCount)) % int(paneCount))
		if d.plan.visible[next] {
			d.focus = next
			return
		}
	}
}

func (d *Dashboard) focusedHeight() int { return d.plan.height[d.focus] }

// page is how far PgUp and PgDn move in the focused pane: as many rows as
// it shows, so no row is skipped and none seen twice.
func (d *Dashboard) page() int {
	h := d.focusedHeight()
	if d.focus == paneNodes {
		return max(h-2, 1) // under the title and the column header
	}
	return max(h-1, 1) // under the title
}

// scrollPage moves the focused pane a page up (dir -1) or down (1).
func (d *Dashboard) scrollPage(dir int) {
	switch d.focus {
	case paneNodes:
		d.nodes.page(dir * d.page())
	case paneEtcd:
		d.etcd.page(dir*d.page(), d.plan.height[paneEtcd])
	default:
		d.scroll(dir * d.page())
	}
}

func (d *Dashboard) scroll(delta int) {
	switch d.focus {
	case paneNodes:
		d.nodes.move(delta)
	case paneCluster:
		d.cluster.scroll(delta, d.plan.height[paneCluster])
	case paneEtcd:
		d.etcd.scroll(delta, d.plan.height[paneEtcd])
	case paneControlPlane:
		d.cp.scroll(delta, d.plan.height[paneControlPlane])
	case paneEvents:
		d.events.scroll(delta, d.plan.height[paneEvents])
	}
}

// paneWant is the height a pane would like.
func (d *Dashboard) paneWant(id paneID) int {
	switch id {
	case paneCluster:
		return d.cluster.want()
	case paneEtcd:
		return d.etcd.want()
	case paneControlPlane:
		return d.cp.want()
	case paneNodes:
		return d.nodes.want()
	default:
		return d.events.want()
	}
}

// filterWidth is the width of the filter input: room for a node name, the
// rest of the line for its key help.
func filterWidth(w int) int { return max(min(32, w/3), 8) }

// stallSet is the objects named by stalls, and a key that changes with it.
type stallSet struct {
	names map[stallKey]bool
	key   string
}

// stallKey is a struct, not "kind/name": a lookup builds no string (it is
// asked once per machine per rebuild, 10,000 times at fleet size).
type stallKey struct {
	kind model.Kind
	name string
}

func newStallSet(stalls []model.Stall) stallSet {
	if len(stalls) == 0 {
		return stallSet{}
	}
	set := stallSet{names: make(map[stallKey]bool, len(stalls))}
	keys := make([]string, 0, len(stalls))
	for _, s := range stalls {
		set.names[stallKey{s.Kind, s.Name}] = true
		keys = append(keys, string(s.Kind)+"/"+s.Name)
	}
	sort.Strings(keys)
	set.key = strings.Join(keys, ",")
	return set
}

func (s stallSet) has(k model.Kind, name string) bool {
	if len(s.names) == 0 {
		return false
	}
	return s.names[stallKey{k, name}]
}

// capiClusterOf is the Cluster API Cluster of s, nil before the first
// snapshot or when not seen.
func capiClusterOf(s *model.ClusterState) *model.CAPICluster {
	if s == nil {
		return nil
	}
	return s.CAPICluster
}
