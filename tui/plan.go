package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/report"
	"github.com/upgrade-console/upgrade-console/themes"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// The plan screen comes before the dashboard: what the upgrade changes (the
// versions, the component diff), whether it may start (the preflight list,
// re-run as the cluster changes), what the apply would write (the
// server-side dry-run), and the apply itself behind a typed confirmation.
// Every call to the cluster runs in a tea.Cmd; the screen only keeps the
// results. Once the spec is applied the dashboard takes over.

// PlanActions are the upgrade steps the plan screen runs, in commands. The
// CLI builds them from an upgrade.Planner and an upgrade.Driver; tests give
// fakes.
type PlanActions struct {
	// Recheck re-runs the preflight checks on a copy of the plan.
	Recheck func(ctx context.Context, p *upgrade.Plan) (*upgrade.Plan, error)
	// DryRun asks the API server what the apply would do.
	DryRun func(ctx context.Context) (*upgrade.DryRunResult, error)
	// Start takes the lock, snapshots and applies.
	Start func(ctx context.Context, p *upgrade.Plan, o upgrade.StartOptions) (*upgrade.Session, error)
	// Track follows the started upgrade to its end (and releases or keeps
	// the lock). Optional.
	Track func(ctx context.Context, s *upgrade.Session) (upgrade.Outcome, error)
	// FollowAfterFailure goes on following an upgrade Track ended as failed
	// or timed out, until it completes after all (the operator's recovery
	// worked: the completion is recorded, the kept lock released) or the
	// console quits. Optional.
	FollowAfterFailure func(ctx context.Context, s *upgrade.Session) (upgrade.Outcome, error)
	// NotConfirmed records an apply whose typed confirmation was not
	// given (esc), as the command line records one. Optional.
	NotConfirmed func(ctx context.Context, p *upgrade.Plan, why string) error
	// RecordDryRun records a dry run the operator asked for (d), as
	// apply --dry-run records one. Optional.
	RecordDryRun func(ctx context.Context, p *upgrade.Plan, res *upgrade.DryRunResult) error
}

// recheckInterval is the least time between two runs of the checks: a
// snapshot burst during a reconcile re-runs them once a second at most.
const recheckInterval = time.Second

type (
	recheckedMsg struct {
		plan *upgrade.Plan
		err  error
		// fresh: the plan carries a dry run of the spec made for this
		// recheck (r).
		fresh bool
	}
	dryRunMsg struct {
		res *upgrade.DryRunResult
		err error
	}
	recheckDueMsg struct{}
	// applyConfirmedMsg comes from the confirmation dialog.
	applyConfirmedMsg struct{ force bool }
	// applyNotConfirmedMsg: the operator went back from the confirmation.
	applyNotConfirmedMsg struct{}
	// recordedMsg is how recording what (an apply not confirmed, a dry
	// run) in the audit log went.
	recordedMsg struct {
		what string
		err  error
	}
	startedMsg struct {
		session *upgrade.Session
		err     error
	}
	trackedMsg struct {
		out upgrade.Outcome
		err error
		// late: the outcome of following past a failure.
		late bool
	}
)

// planKeys are the plan screen's bindings.
type planKeys struct {
	Apply   key.Binding
	DryRun  key.Binding
	All     key.Binding
	Recheck key.Binding
	Up      key.Binding
	Down    key.Binding
	PageUp  key.Binding
	PageDn  key.Binding
	Home    key.Binding
	End     key.Binding
	Help    key.Binding
	Close   key.Binding
	Suspend key.Binding
	Quit    key.Binding
	// Copy is y, which the App takes (copyBinding); enabled, and listed,
	// while the plan shows a command.
	Copy key.Binding
}

func defaultPlanKeys(readOnly bool) planKeys {
	k := planKeys{
		Apply:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply")),
		DryRun:  key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "dry-run")),
		All:     key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "all components")),
		Recheck: key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "re-run checks")),
		Up:      key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:    key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:  key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup/ctrl+u", "page up")),
		PageDn:  key.NewBinding(key.WithKeys("pgdown", "ctrl+d", "space"), key.WithHelp("pgdn/ctrl+d/space", "page down")),
		// As on the dashboard: the dry-run d asks for lands at the end of
		// the list, three pages down at 80×24.
		Home:    key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("home/g", "top")),
		End:     key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("end/G", "bottom")),
		Help:    key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Close:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close help")),
		Suspend: suspendBinding(),
		Quit:    key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q/ctrl+c", "quit")),
		Copy:    copyBinding(),
	}
	if readOnly {
		// Not bound at all, as k9s does with dangerous actions.
		k.Apply.SetEnabled(false)
	}
	return k
}

// statusKind is what a status message reports, which decides how long it
// stays.
type statusKind int

const (
	// statusEvent reports what happened (the start, its outcome): it stays
	// until something else happens.
	statusEvent statusKind = iota
	// statusChecks is the apply refused by blocking checks: each run of the
	// checks renews it, and one that blocks nothing clears it.
	statusChecks
	// statusDryRun is the apply stopped by the dry-run's result: the next
	// dry-run clears it.
	statusDryRun
)

// PlanScreen is the plan: versions, components, preflight, dry-run, apply.
type PlanScreen struct {
	opts    Options
	ctx     context.Context
	actions PlanActions
	keys    planKeys
	help    help.Model
	st      *styles

	plan     *upgrade.Plan
	state    *model.ClusterState
	checked  uint64 // snapshot version the checks last ran on
	checking bool
	due      bool // a recheckDueMsg is scheduled
	lastRun  time.Time
	checkErr error

	dry        *upgrade.DryRunResult
	dryErr     error
	dryRunning bool
	// specDry is the newest dry run of the spec (d, r), which every plan
	// the screen shows carries from then on.
	specDry *upgrade.DryRunResult
	// applyAfterDryRun opens the confirmation once the dry-run is back.
	applyAfterDryRun bool

	starting bool
	// confirming: the typed confirmation is open.
	confirming bool
	session    *upgrade.Session
	// starts counts a start under way, and startedSession holds the session it
	// made: a console quit during the writes must wait for them (a spec
	// half applied breaks the cluster) and then end the session, though
	// the startedMsg never reaches Update.
	starts         *sync.WaitGroup
	startedSession *atomic.Pointer[upgrade.Session]
	// startsRunning counts the starts whose command has not returned, for
	// StartUnderWay (read after the program ended); startErr is the error
	// of a start that made no session (StartErr).
	startsRunning *atomic.Int32
	startErr      *atomic.Pointer[error]
	// following counts the follows (Track, FollowAfterFailure) whose
	// command is running, for WaitFollow.
	following *atomic.Int32
	// status is the last outcome of a key or a command (empty: the line
	// says where the plan stands); statusOf says what it reports, so that
	// it goes once that is no longer true. statusOut is the line wrapped
	// to the width.
	status    seg
	statusOf  statusKind
	statusOut []line
	// overlaid: a dialog covers the screen (setOverlaid).
	overlaid bool

	all     bool
	offset  int
	w, h    int
	body    []line
	helpOut []string
	// offered are the recovery keys offered for the current snapshot (a
	// stale lock or a leftover pause blocking the upgrade): shown in the
	// help, re-checked on each snapshot and each periodic tick.
	offered []key.Binding
}

// NewPlanScreen returns the plan screen for a computed plan.
func NewPlanScreen(ctx context.Context, opts Options, plan *upgrade.Plan, actions PlanActions) *PlanScreen {
	p := &PlanScreen{opts: opts, ctx: ctx, actions: actions, plan: plan, keys: defaultPlanKeys(opts.ReadOnly), help: help.New(),
		starts: &sync.WaitGroup{}, startedSession: &atomic.Pointer[upgrade.Session]{}, startsRunning: &atomic.Int32{}, startErr: &atomic.Pointer[error]{}, following: &atomic.Int32{}}
	suspendOff(&p.keys.Suspend, opts)
	p.setTheme(initialTheme(opts))
	return p
}

// Plan is the plan as last checked; DryRun the last dry-run result.
func (p *PlanScreen) Plan() *upgrade.Plan           { return p.plan }
func (p *PlanScreen) DryRun() *upgrade.DryRunResult { return p.dry }

// Session is the started upgrade, nil before the apply.
func (p *PlanScreen) Session() *upgrade.Session {
	if p.session != nil {
		return p.session
	}
	return p.startedSession.Load()
}

// StartErr is the error of the last start that made no session (nothing
// applied; nil when none failed), read once the program has ended.
func (p *PlanScreen) StartErr() error {
	if e := p.startErr.Load(); e != nil {
		return *e
	}
	return nil
}

// StartUnderWay reports whether a start's writes are still under way, so
// that the console says what it waits for once the screen is gone.
func (p *PlanScreen) StartUnderWay() bool { return p.startsRunning.Load() > 0 }

// WaitStart waits for a start under way (the program has ended: nothing
// else reads the screen).
func (p *PlanScreen) WaitStart() { p.starts.Wait() }

// WaitFollow waits, at most limit, for the follow of the upgrade to return
// once the context it runs in was cancelled (the program has ended): it
// takes a last look before it returns, and a failure the dashboard showed
// as the operator quit ends the session as failed, its lock kept. Ended
// before it (Detach), the session was detached as an upgrade that "goes
// on", its lock released, on a cluster an etcd rollback had left paused.
// A follow whose command never started is not waited for.
func (p *PlanScreen) WaitFollow(limit time.Duration) {
	for end := time.Now().Add(limit); p.following.Load() > 0 && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
}

func (p *PlanScreen) setTheme(th *themes.Theme) {
	p.st = newStyles(th)
	p.help.Styles = th.Help
	p.rebuild()
}

// periodicRecheck re-runs the checks even when no snapshot comes: the lock
// Lease of another console is not among the watched kinds.
const periodicRecheck = 5 * time.Second

type periodicMsg struct{}

func periodicTick() tea.Cmd {
	return tea.Tick(periodicRecheck, func(time.Time) tea.Msg { return periodicMsg{} })
}

// Init starts the periodic re-check; the plan arrives computed, and the
// checks also re-run when snapshots come.
func (p *PlanScreen) Init() tea.Cmd { return periodicTick() }

// SetSize follows the terminal.
func (p *PlanScreen) SetSize(w, h int) {
	p.w, p.h = w, h
	p.help.SetWidth(w - 1)
	p.rebuild()
}

// ShortHelp and FullHelp make the screen a help.KeyMap.
func (p *PlanScreen) ShortHelp() []key.Binding {
	out := []key.Binding{p.keys.Apply, p.keys.DryRun, p.keys.All, p.keys.Recheck}
	out = append(out, p.offered...)
	return append(out, p.keys.Copy, p.keys.Help, firstKey(p.keys.Quit))
}

func (p *PlanScreen) FullHelp() [][]key.Binding {
	out := [][]key.Binding{{p.keys.Apply, p.keys.DryRun, p.keys.Recheck, p.keys.All}}
	if p.keys.Copy.Enabled() {
		out[0] = append(out[0], p.keys.Copy)
	}
	if len(p.offered) > 0 {
		out = append(out, p.offered)
	}
	return append(out, []key.Binding{p.keys.Up, p.keys.Down, p.keys.PageUp, p.keys.PageDn, p.keys.Home, p.keys.End}, []key.Binding{p.keys.Help, p.keys.Close, p.keys.Suspend, p.keys.Quit})
}

// helpView is the help: on a narrow screen the short one keeps the apply,
// the recovery, ? and q, and drops what the body also says (a, d: the
// dry-run runs before any apply) or what has a default (r: the checks re-run
// as the cluster changes), then y, which says "copy" before it goes and
// which the ? help still names. Where the keys kept still do not fit on a
// row (40 columns, R recover offered), they take two, not cut at the edge,
// and y stays on the second (shortHelpRows).
func (p *PlanScreen) helpView() string {
	if p.help.ShowAll {
		return fullHelpFitting(p.help, p.FullHelp(), p.help.Width())
	}
	k := p.keys
	if p.overlaid {
		// Under a dialog the App blanks the screen's last row, the
		// help's: a second row would stay, listing keys the dialog takes.
		return shortHelpFitting(p.help, p.ShortHelp(), p.help.Width(), k.All, k.DryRun, k.Recheck, shortDesc(k.Copy, "copy"), k.Copy)
	}
	return shortHelpRows(p.help, p.ShortHelp(), p.help.Width(), k.All, k.DryRun, k.Recheck, shortDesc(k.Copy, "copy"), k.Copy)
}

// refreshActions updates the offered keys, and the help when they changed.
func (p *PlanScreen) refreshActions() {
	shown := offeredActions(p.opts, p.state)
	if !slices.EqualFunc(shown, p.offered, func(a, b key.Binding) bool { return a.Help() == b.Help() }) {
		p.offered = shown
		if p.statusOf == statusChecks {
			p.setBlockedStatus() // it names the keys offered
		}
		p.rebuild()
	}
}

// Update handles snapshots, command results and keys.
func (p *PlanScreen) Update(msg tea.Msg) (Screen, tea.Cmd) {
	switch msg := msg.(type) {
	case ThemeMsg:
		p.setTheme(msg.Theme)
	case SnapshotMsg:
		p.state = msg.State
		p.refreshActions()
		return p, p.maybeRecheck()
	case periodicMsg:
		p.refreshActions()
		if p.session != nil {
			return p, nil // the dashboard follows from here
		}
		if p.checking || p.starting {
			return p, periodicTick()
		}
		p.checked = 0
		return p, tea.Batch(p.recheck(), periodicTick())
	case recheckDueMsg:
		// The wait is over: run if the cluster moved meanwhile.
		p.due = false
		if p.state != nil && p.state.Version != p.checked && p.session == nil && !p.starting {
			return p, p.recheck()
		}
		return p, nil
	case recheckedMsg:
		p.checking = false
		p.lastRun = p.opts.clock().Now()
		p.checkErr = msg.err
		if msg.err == nil {
			switch t := msg.plan.Target; {
			case t == nil:
			case msg.fresh:
				p.specDry = t.SpecDryRun
			case p.specDry != nil && t.SpecDryRun != p.specDry:
				// Run on the plan of before a newer dry run: keep the
				// newer answer, and run the checks again on it.
				msg.plan = withSpecDryRun(msg.plan, p.specDry, nil)
				p.checked = 0
			}
			// The cluster moved (Rechecked read its current side again):
			// the plan's dry run of the spec dates from before, and the
			// status line went on saying "ready: enter applies the spec"
			// beside "all components are up to date".
			moved := !msg.fresh && p.plan != nil && msg.plan != nil && msg.plan.Current != p.plan.Current
			p.plan = msg.plan
			if p.statusOf == statusChecks {
				p.setBlockedStatus()
			}
			if moved {
				p.rebuild()
				return p, p.recheckWith(true)
			}
		}
		p.rebuild()
		return p, p.maybeRecheck()
	case dryRunMsg:
		p.dryRunning = false
		p.dry, p.dryErr = msg.res, msg.err
		var recheck tea.Cmd
		if msg.err == nil && msg.res != nil && p.plan != nil && p.plan.Target != nil {
			// The checks and the status line follow the newer answer.
			p.specDry = msg.res
			p.plan = withSpecDryRun(p.plan, msg.res, nil)
			p.checked = 0
			recheck = p.recheck()
		}
		if p.statusOf == statusDryRun {
			p.setStatus(statusEvent, seg{})
		}
		p.rebuild()
		if p.applyAfterDryRun {
			p.applyAfterDryRun = false
			return p, tea.Batch(recheck, p.confirm())
		}
		p.showDryRun()
		return p, tea.Batch(recheck, p.recordDryRun(msg))
	case applyConfirmedMsg:
		p.confirming = false
		return p, p.start(msg.force)
	case applyNotConfirmedMsg:
		return p, p.notConfirmed()
	case recordedMsg:
		if msg.err != nil {
			p.setStatus(statusEvent, seg{" " + p.st.th.Sym.Fail + " recording " + msg.what + ": " + firstLine(errText(msg.err)), rFailure})
			p.rebuild()
		}
		return p, nil
	case startedMsg:
		return p, p.started(msg)
	case trackedMsg:
		if msg.late && !msg.out.Complete {
			return p, nil // the console quit first: the failure stands
		}
		p.setStatus(statusEvent, trackedStatus(p.st, msg, p.session))
		p.rebuild()
		switch {
		case msg.late:
			// The exit code follows the upgrade's end, not the failure
			// the dashboard recorded first.
			return p, func() tea.Msg { return OutcomeMsg{Outcome: report.Done} }
		case (msg.out.Failed || msg.out.TimedOut) && p.actions.FollowAfterFailure != nil:
			ctx, s, follow, following := p.ctx, p.session, p.actions.FollowAfterFailure, p.following
			return p, func() tea.Msg {
				following.Add(1)
				defer following.Add(-1)
				out, err := follow(ctx, s)
				return trackedMsg{out: out, err: err, late: true}
			}
		}
	case tea.KeyPressMsg:
		return p, p.handleKey(msg)
	}
	return p, nil
}

// minPlanName and minPlanVersion are as narrow as the plan's NAME and
// version columns go to leave CHANGE whole.
const (
	minPlanName    = 12
	minPlanVersion = 10
)

// stackedPlanBelow is the width under which a components table that does
// not fit whole stacks each row (componentLines): in a split tmux pane (60
// to 79 columns) the columns cut every name to "kubernetes …" and
// "in-place up…" and the versions to "v1.30.5-…1-30-22", which told
// neither which component nor what it becomes.
const stackedPlanBelow = 80

// maybeRecheck re-runs the checks when the cluster moved since they last
// ran, at most once per recheckInterval, one run at a time.
func (p *PlanScreen) maybeRecheck() tea.Cmd {
	if p.actions.Recheck == nil || p.state == nil || p.checking || p.starting || p.session != nil {
		return nil
	}
	if p.state.Version == p.checked {
		return nil
	}
	wait := recheckInterval - p.opts.clock().Now().Sub(p.lastRun)
	if !p.lastRun.IsZero() && wait > 0 {
		if p.due {
			return nil
		}
		p.due = true
		return tea.Tick(wait, func(time.Time) tea.Msg { return recheckDueMsg{} })
	}
	return p.recheck()
}

func (p *PlanScreen) recheck() tea.Cmd { return p.recheckWith(false) }

// recheckWith re-runs the checks; with spec, it first asks the API server
// for a fresh dry run of the spec (r). The plan's dry run is made once, when
// the plan is: the objects it compares with change under it (another
// manager's write to a machine config), and spec-accepted went on saying
// "the cluster already runs this spec", the status line "nothing to apply",
// while d showed a change.
func (p *PlanScreen) recheckWith(spec bool) tea.Cmd {
	if p.actions.Recheck == nil || p.checking {
		return nil
	}
	p.checking = true
	if p.state != nil {
		p.checked = p.state.Version
	}
	p.restatus() // "re-running the checks…"
	ctx, plan, run, dry := p.ctx, p.plan, p.actions.Recheck, p.actions.DryRun
	return func() tea.Msg {
		if spec && dry != nil {
			res, err := dry(ctx)
			plan = withSpecDryRun(plan, res, err)
		}
		np, err := run(ctx, plan)
		return recheckedMsg{plan: np, err: err, fresh: spec && dry != nil}
	}
}

// withSpecDryRun is a copy of the plan with a fresh dry run of its spec:
// the plan a screen draws is never written from a command.
func withSpecDryRun(plan *upgrade.Plan, res *upgrade.DryRunResult, err error) *upgrade.Plan {
	if plan == nil || plan.Target == nil || (res == nil && err == nil) {
		return plan
	}
	cp, t := *plan, *plan.Target
	t.SpecDryRun, t.SpecDryRunErr = res, err
	cp.Target = &t
	return &cp
}

func (p *PlanScreen) dryRun() tea.Cmd {
	if p.actions.DryRun == nil || p.dryRunning {
		return nil
	}
	p.dryRunning = true
	p.rebuild()
	ctx, run := p.ctx, p.actions.DryRun
	return func() tea.Msg {
		res, err := run(ctx)
		return dryRunMsg{res: res, err: err}
	}
}

// recordDryRun records the dry run d asked for; a failure to write the
// audit log is said on the status line.
func (p *PlanScreen) recordDryRun(msg dryRunMsg) tea.Cmd {
	if p.actions.RecordDryRun == nil || msg.err != nil || msg.res == nil {
		return nil
	}
	ctx, plan, record := p.ctx, p.plan, p.actions.RecordDryRun
	return func() tea.Msg {
		return recordedMsg{what: "the dry run", err: record(ctx, plan, msg.res)}
	}
}

func (p *PlanScreen) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	k := p.keys
	switch {
	case key.Matches(msg, k.Quit):
		return tea.Quit
	case key.Matches(msg, k.Help):
		p.help.ShowAll = !p.help.ShowAll
		p.rebuild()
	case key.Matches(msg, k.Close) && p.help.ShowAll:
		// The help is what is on top: esc closes it before anything else
		// it does.
		p.closeHelp()
	case key.Matches(msg, k.All):
		p.all = !p.all
		p.rebuild()
	case key.Matches(msg, k.Recheck):
		p.checked = 0
		return p.recheckWith(true)
	case key.Matches(msg, k.DryRun):
		return p.dryRun()
	case key.Matches(msg, k.Apply):
		return p.apply()
	case key.Matches(msg, k.Up):
		p.offset--
	case key.Matches(msg, k.Down):
		p.offset++
	case key.Matches(msg, k.PageUp):
		p.offset -= max(p.bodyHeight()-1, 1)
	case key.Matches(msg, k.PageDn):
		p.offset += max(p.bodyHeight()-1, 1)
	case key.Matches(msg, k.Home):
		p.offset = 0
	case key.Matches(msg, k.End):
		p.offset = len(p.body) // clamped to the last page
	default:
		// Registered actions (the recovery menu: clearing a stale lock
		// that blocks the upgrade).
		cmd := matchAction(p.opts, msg, p.state)
		if cmd != nil {
			// A dialog opens over the screen: the screen's keys, which
			// it takes none of, would stay listed beneath it.
			p.closeHelp()
		}
		return cmd
	}
	p.clamp()
	return nil
}

// closeHelp puts the full help (?) away.
func (p *PlanScreen) closeHelp() {
	if p.help.ShowAll {
		p.help.ShowAll = false
		p.rebuild()
	}
}

// apply starts the apply path: refused while a check blocks; then a fresh
// dry run, and the typed confirmation of what it says. A dry run from an
// earlier d may be minutes old: the confirmation lists what the apply does
// now (the driver checks it again under the lock).
func (p *PlanScreen) apply() tea.Cmd {
	switch {
	case p.opts.ReadOnly || p.actions.Start == nil:
		return nil
	case p.session != nil || p.starting:
		return nil
	case p.plan.Blocked():
		p.setBlockedStatus()
		p.rebuild()
		return nil
	}
	p.applyAfterDryRun = true
	return p.dryRun()
}

func (p *PlanScreen) confirm() tea.Cmd {
	if p.dryErr != nil {
		p.setStatus(statusDryRun, seg{" " + p.st.th.Sym.Fail + " dry-run failed: " + firstLine(errText(p.dryErr)), rFailure})
		p.rebuild()
		return nil
	}
	if rej := p.dry.Rejected(); len(rej) > 0 {
		p.setStatus(statusDryRun, seg{" " + p.st.th.Sym.Fail + " the API server refuses " + rej[0].Object + ": " + firstLine(rej[0].Error), rFailure})
		p.rebuild()
		return nil
	}
	if p.dry.Changes() == 0 {
		p.setStatus(statusDryRun, nothingToApply(p.st, p.plan))
		p.rebuild()
		return nil
	}
	p.confirming = true
	// The confirmation takes every key: the plan's help, left open
	// beneath it, listed keys that do nothing there.
	p.closeHelp()
	return OpenDialog(newConfirmDialog(p.opts, p.plan, p.dry))
}

// suspendRefused: the start writes the spec's documents one after another
// under the upgrade lock, and "a spec half applied breaks the cluster";
// stopped between two writes, it stays half applied for as long as the job
// is stopped. The start takes seconds.
func (p *PlanScreen) suspendRefused() string {
	if !p.starting {
		return ""
	}
	return "ctrl+z: not while the spec is being applied; wait for the start to end"
}

// Confirming reports whether the typed confirmation is open (read after
// the program ended: a console quit there did not confirm the apply).
func (p *PlanScreen) Confirming() bool { return p.confirming }

// RecordQuitAtConfirmation records, once the program has ended, an apply
// whose typed confirmation was open when the console quit: not confirmed.
func (p *PlanScreen) RecordQuitAtConfirmation(ctx context.Context) error {
	if !p.confirming || p.actions.NotConfirmed == nil {
		return nil
	}
	p.confirming = false
	return p.actions.NotConfirmed(ctx, p.plan, "the console quit at the typed confirmation")
}

// notConfirmed records the apply the operator went back from.
func (p *PlanScreen) notConfirmed() tea.Cmd {
	p.confirming = false
	if p.actions.NotConfirmed == nil {
		return nil
	}
	ctx, plan, record := p.ctx, p.plan, p.actions.NotConfirmed
	return func() tea.Msg {
		return recordedMsg{what: "the apply not confirmed", err: record(context.WithoutCancel(ctx), plan, "the operator went back from the typed confirmation")}
	}
}

func (p *PlanScreen) start(force bool) tea.Cmd {
	if p.starting || p.session != nil || p.actions.Start == nil {
		return nil
	}
	if p.plan.Blocked() {
		// The checks re-ran while the confirmation was open.
		p.setBlockedStatus()
		p.rebuild()
		return nil
	}
	p.starting = true
	p.setStatus(statusEvent, seg{" taking the upgrade lock, saving the snapshot, applying…", rMuted})
	p.rebuild()
	ctx, plan, dry, run, started, starts, running, failed := p.ctx, p.plan, p.dry, p.actions.Start, p.startedSession, p.starts, p.startsRunning, p.startErr
	starts.Add(1)
	running.Add(1)
	return func() tea.Msg {
		defer starts.Done()
		defer running.Add(-1)
		s, err := run(ctx, plan, upgrade.StartOptions{DryRun: dry, ForceConflicts: force})
		switch {
		case s != nil:
			started.Store(s)
		case err != nil:
			failed.Store(&err)
		}
		return startedMsg{session: s, err: err}
	}
}

func (p *PlanScreen) started(msg startedMsg) tea.Cmd {
	p.starting = false
	var refused *upgrade.PreflightError
	if errors.As(msg.err, &refused) && msg.session == nil {
		// The checks the driver re-ran under the lock blocked the start:
		// the list shows them with their fixes and the status names them,
		// as when enter finds them blocking (the error's text puts them on
		// lines of their own, which a one-line status would drop).
		p.plan = withChecks(p.plan, refused.Checks)
		p.setBlockedStatus()
		p.rebuild()
		return p.recheck()
	}
	var changed *upgrade.DryRunChangedError
	if errors.As(msg.err, &changed) && msg.session == nil {
		// The plan shows the dry run the driver ran under the lock; enter
		// confirms it afresh.
		p.dry, p.dryErr = changed.Now, nil
		// A dry-run status: the next dry run (d, enter) replaces it.
		// Short, the key first: the differences (every changed object)
		// are the plan's new dry run, and cut at 80 columns they took
		// the key with them.
		p.setStatus(statusDryRun, seg{" " + p.st.th.Sym.Fail + " nothing was applied: the cluster changed since the dry run that was confirmed; enter to review and confirm the new dry run (the plan shows it)", rFailure})
		p.rebuild()
		return p.recheck()
	}
	if msg.err != nil {
		text := " " + p.st.th.Sym.Fail + " " + firstLine(errText(msg.err))
		var held *upgrade.LockHeldError
		if errors.As(msg.err, &held) {
			p.checked = 0 // the lock check shows the holder
		}
		if msg.session != nil {
			p.session = msg.session
			text += " (" + msg.session.AppliedInPart() + "; " + msg.session.LockKeptMessage() + ")"
		}
		p.setStatus(statusEvent, seg{text, rFailure})
		p.rebuild()
		return p.recheck()
	}
	p.session = msg.session
	p.setStatus(statusEvent, seg{" " + p.st.th.Sym.OK + " applied; snapshot in " + msg.session.Snapshot.Where(), rDone})
	p.rebuild()
	dashOpts := p.opts
	s := msg.session
	ctx := p.ctx
	dashOpts.RenewLock = func(resumed bool) {
		if resumed {
			s.RenewLockOnResume(ctx)
			return
		}
		s.RenewLockNow(ctx)
	}
	dashOpts.Lock = func() LockInfo {
		st, renewErr, lost := s.Lock()
		if st == nil || s.LockReleased() {
			return LockInfo{Lost: lost}
		}
		l := LockInfo{Holder: st.Holder.Display(), Renewed: st.RenewTime, Lost: lost, Kept: s.Kept()}
		if st.Duration > 0 {
			l.Expires = st.ExpiresAt()
		}
		var aw *upgrade.AuditWriteError
		switch {
		case errors.As(renewErr, &aw):
			// The write that met the refusal may have landed; the next
			// are not made until the log takes entries (the cause first:
			// the chain of wrappers hid it past the width).
			l.RenewErr = "the audit log refuses entries: " + firstLine(errText(aw))
		case renewErr != nil:
			l.RenewErr = firstLine(errText(renewErr))
		}
		return l
	}
	if p.state != nil && p.state.Cluster != nil && p.state.Cluster.Generation != 0 && s.ClusterGeneration == p.state.Cluster.Generation {
		dashOpts.AppliedAt = p.opts.clock().Now()
	}
	dash := NewDashboard(dashOpts)
	cmds := []tea.Cmd{Push(dash)}
	if st := p.state; st != nil {
		cmds = append(cmds, func() tea.Msg { return SnapshotMsg{State: st} })
	}
	if p.actions.Track != nil {
		ctx, s, run, following := p.ctx, msg.session, p.actions.Track, p.following
		cmds = append(cmds, func() tea.Msg {
			following.Add(1)
			defer following.Add(-1)
			out, err := run(ctx, s)
			return trackedMsg{out: out, err: err}
		})
	}
	return tea.Sequence(cmds...)
}

func trackedStatus(st *styles, msg trackedMsg, s *upgrade.Session) seg {
	switch {
	case msg.late && msg.err != nil:
		return seg{" " + st.th.Sym.Warn + " upgrade complete after its failure; " + errText(msg.err), rStall}
	case msg.late:
		return seg{" " + st.th.Sym.OK + " upgrade complete after its failure (recorded in the audit log); the kept upgrade lock is released", rDone}
	case msg.out.Complete:
		return seg{" " + st.th.Sym.OK + " upgrade complete in " + model.ShortDuration(msg.out.Elapsed) + "; the upgrade lock is released", rDone}
	case msg.out.Failed, msg.out.TimedOut:
		text := " " + st.th.Sym.Fail + " " + msg.out.Reason
		if s != nil {
			text += "; " + s.LockKeptMessage()
		}
		return seg{text, rFailure}
	case msg.err != nil:
		return seg{" " + st.th.Sym.Warn + " stopped following the upgrade: " + errText(msg.err), rStall}
	}
	return seg{}
}

// setStatus replaces the status message (an empty one lets the line say
// where the plan stands).
func (p *PlanScreen) setStatus(kind statusKind, s seg) {
	p.status, p.statusOf = s, kind
}

// setBlockedStatus names the checks that block the apply now, or, when
// none does any more, clears the message: the operator acts on it, so it
// must not outlive the checks it names.
func (p *PlanScreen) setBlockedStatus() {
	if !p.plan.Blocked() {
		p.setStatus(statusEvent, seg{})
		return
	}
	p.setStatus(statusChecks, seg{" " + p.st.th.Sym.Fail + " " + blockedSentence(p.plan) + ": fix what the checks say" + p.recoverHint() + " (r re-runs them)", rFailure})
}

// blockedLine is the status of a blocked plan in at most w cells: "apply
// blocked by upgrade-lock, eksa-reconcile-not-paused", the names that fit
// and how many more when they do not all fit, the count alone when not one
// does.
func blockedLine(pl *upgrade.Plan, w int) string {
	names := blockingNames(pl)
	for n := len(names); n > 0; n-- {
		s := "apply blocked by " + strings.Join(names[:n], ", ")
		if n < len(names) {
			s += fmt.Sprintf(" and %d more", len(names)-n)
		}
		if width(s) <= w {
			return s
		}
	}
	return fmt.Sprintf("apply blocked by %d checks", len(names))
}

// nothingToApply is the status of a spec that changes nothing: the cluster
// runs it, or, when the cluster has not reached its Cluster's spec, that
// this spec is already the Cluster's and the cluster is not there yet (not
// a ✓: the upgrade is not done).
func nothingToApply(st *styles, pl *upgrade.Plan) seg {
	if pl.CurrentSpec.NotReached() {
		// Why in brief: the status has three lines, and the body's first
		// lines say it whole.
		return seg{" " + st.th.Sym.Warn + " " + pl.CurrentSpec.NothingToApplyBrief(), rStall}
	}
	return seg{" " + st.th.Sym.OK + " " + pl.CurrentSpec.NothingToApply(), rDone}
}

// blockedSentence names the checks that block the apply.
func blockedSentence(pl *upgrade.Plan) string {
	return "apply is blocked by " + strings.Join(blockingNames(pl), ", ")
}

// blockingNames are the names of the checks that block the apply.
func blockingNames(pl *upgrade.Plan) []string {
	blocking := pl.Blocking()
	names := make([]string, 0, len(blocking))
	for _, r := range blocking {
		names = append(names, r.Name)
	}
	return names
}

// recoverHint points at the recovery keys offered now (a stale lock, a
// leftover pause: what blocks is often what R clears).
func (p *PlanScreen) recoverHint() string {
	if len(p.offered) == 0 {
		return ""
	}
	keys := make([]string, 0, len(p.offered))
	for _, b := range p.offered {
		keys = append(keys, b.Help().Key+" "+b.Help().Desc)
	}
	return ", or " + strings.Join(keys, ", ")
}

// withChecks is a copy of pl whose preflight list holds checks in place of
// the results of the same name (new ones at the end).
func withChecks(pl *upgrade.Plan, checks []model.CheckResult) *upgrade.Plan {
	cp := *pl
	cp.Preflight = slices.Clone(pl.Preflight)
	for _, c := range checks {
		if i := slices.IndexFunc(cp.Preflight, func(r model.CheckResult) bool { return r.Name == c.Name }); i >= 0 {
			cp.Preflight[i] = c
		} else {
			cp.Preflight = append(cp.Preflight, c)
		}
	}
	return &cp
}

func (p *PlanScreen) bodyHeight() int {
	// header, two rules, the status and the help
	return max(p.h-3-len(p.statusOut)-len(p.helpOut), 1)
}

// showDryRun scrolls the dry-run that d asked for into view. It ends the
// list: at 80×24 it came back three pages under the window, and nothing
// on the screen changed to say it had (the status line reads as before).
func (p *PlanScreen) showDryRun() {
	for i, l := range p.body {
		if len(l.segs) == 0 || l.segs[0].text != dryRunTitle {
			continue
		}
		if i < p.offset || len(p.body) > p.offset+p.bodyHeight() {
			p.offset = i
			p.clamp()
		}
		return
	}
}

func (p *PlanScreen) clamp() {
	p.offset = min(p.offset, max(len(p.body)-p.bodyHeight(), 0))
	p.offset = max(p.offset, 0)
}

// rebuild turns the plan, the dry-run and the status into lines (in Update,
// never in View).
func (p *PlanScreen) rebuild() {
	if p.st == nil || p.plan == nil {
		return
	}
	p.keys.Copy.SetEnabled(len(p.commands()) > 0)
	p.body = buildPlanBody(p.st, p.plan, p.all, p.dry, p.dryErr, p.dryRunning, p.checkErr, p.opts.ReadOnly, p.w)
	p.restatus()
}

// shownCommands are the commands the plan shows (y).
func (p *PlanScreen) shownCommands() ([]string, bool) { return p.commands(), true }

// commands are the commands of the plan's text, in the order the screen
// shows them: the unreached spec's next step, the checks' messages and
// fixes, then the status line's.
func (p *PlanScreen) commands() []string {
	if p.plan == nil || p.st == nil {
		return nil
	}
	var cmds []string
	if p.plan.CurrentSpec.Note() != "" {
		cmds = addCommandsOf(cmds, p.plan.CurrentSpec.Next)
	}
	for _, r := range failedFirst(p.plan.Preflight) {
		cmds = addCommandsOf(cmds, r.Message)
		if r.Status != model.CheckPass {
			cmds = addCommandsOf(cmds, r.Remediation)
		}
	}
	return addCommandsOf(cmds, p.statusLine().text)
}

// setOverlaid lays the status out for a dialog over the screen (see
// Dashboard.setOverlaid).
func (p *PlanScreen) setOverlaid(on bool) {
	if p.overlaid != on {
		p.overlaid = on
		p.restatus()
	}
}

// maxStatusLines bounds the status so that the plan keeps rows on a short
// terminal; the last line is cut when the message is longer still.
const maxStatusLines = 3

// restatus wraps the status line to the width (what the operator is told to
// do is read whole, not cut) and keeps the scroll within the body.
func (p *PlanScreen) restatus() {
	if p.st == nil || p.plan == nil {
		return
	}
	s := p.statusLine()
	// Continuation lines hang under the text after the leading mark.
	text := wrap(s.text, max(p.w-3, 10))
	limit := maxStatusLines
	if p.overlaid {
		// Under a dialog only the last rows show: one row, from the
		// start, not a sentence's end.
		limit = 1
	}
	if len(text) > limit {
		text = append(text[:limit-1], strings.Join(text[limit-1:], " "))
	}
	p.statusOut = p.statusOut[:0]
	for i, l := range text {
		indent := " "
		if i > 0 {
			indent = "   "
		}
		p.statusOut = append(p.statusOut, line{segs: []seg{{indent + l, s.r}}})
	}
	p.fitHelp()
	p.clamp()
}

// fitHelp keeps the full help (?) to the rows the screen leaves it, a row
// of the body among them: taller, it ran past the screen's bottom, whose
// rows the terminal cut without a word. Its last row then says how many
// it leaves out, as the dashboard's does.
func (p *PlanScreen) fitHelp() {
	p.helpOut = strings.Split(p.helpView(), "\n")
	room := p.h - 3 - len(p.statusOut) - 1
	if len(p.helpOut) <= room || room < 1 {
		return
	}
	more := len(p.helpOut) - room + 1
	p.helpOut = append(p.helpOut[:room-1:room-1],
		p.st.paint(rMuted, helpCutNote(more, "?", max(p.w-1, 0))))
}

// View draws the header, the scrolled body, the status line and the help.
func (p *PlanScreen) View() string {
	if p.w <= 0 || p.h <= 0 {
		return ""
	}
	st := p.st
	var b strings.Builder
	p.writeHeader(&b)
	b.WriteByte('\n')
	b.WriteString(st.paint(rRule, repeat("─", p.w)))
	bh := p.bodyHeight()
	for i := 0; i < bh; i++ {
		b.WriteByte('\n')
		j := p.offset + i
		if j < len(p.body) {
			writeLine(&b, st, p.body[j], p.w, time.Time{})
		} else {
			b.WriteString(spaces(p.w))
		}
	}
	b.WriteByte('\n')
	// The rule under the body says what is out of view, as a pane's title
	// does: the checks that block may be below the rows shown.
	writeRule(&b, st, p.w, scrollHint(p.offset, max(len(p.body)-p.offset-bh, 0)))
	for _, l := range p.statusOut {
		b.WriteByte('\n')
		st.paintSegs(&b, l.segs, p.w)
	}
	for _, hl := range p.helpOut {
		b.WriteByte('\n')
		b.WriteString(" " + hl)
	}
	return b.String()
}

// writeRule draws a rule w cells wide with hint near its right end.
func writeRule(b *strings.Builder, st *styles, w int, hint string) {
	hw := width(hint)
	if hint == "" || hw+6 > w {
		b.WriteString(st.paint(rRule, repeat("─", w)))
		return
	}
	b.WriteString(st.paint(rRule, repeat("─", w-hw-3)))
	b.WriteString(" " + st.paint(rMuted, hint) + " ")
	b.WriteString(st.paint(rRule, "─"))
}

func (p *PlanScreen) writeHeader(b *strings.Builder) {
	st, v := p.st, p.plan.Versions
	arrow := " " + st.th.Sym.Arrow + " "
	cluster := seg{" " + p.plan.Cluster, rCluster}
	var ctx, ro []seg
	if p.opts.Context != "" {
		ctx = []seg{{" @ " + p.opts.Context, rMuted}}
	}
	if p.opts.ReadOnly {
		ro = []seg{{"  read-only", rPaused}}
	}
	right := []seg{{"EKS-A ", rMuted}, {v.CurrentEKSA + arrow + v.TargetEKSA, rVersion}, {"   k8s ", rMuted},
		{v.CurrentKubernetes + arrow + v.TargetKubernetes, rVersion}, {" ", rText}}
	rights := [][]seg{right}
	if p.plan.CurrentSpec.NotReached() {
		// The current side is the Cluster's spec, which the cluster has
		// not reached: "v0.21.2 → v0.21.2" alone read as an upgrade done.
		// Where the mark leaves no room, the body's first lines say it.
		rights = [][]seg{concatSegs([]seg{{st.th.Sym.Warn + " spec not reached: ", rStall}}, right), right}
	}
	// Narrower still, the current side goes: the target is what the
	// operator applies.
	rights = append(rights, []seg{{"EKS-A ", rMuted}, {st.th.Sym.Arrow + " " + v.TargetEKSA, rVersion}, {"  k8s ", rMuted},
		{st.th.Sym.Arrow + " " + v.TargetKubernetes, rVersion}, {" ", rText}})
	// The versions and the read-only mark matter more than the title and
	// the context: those go first when the line is narrow (the context
	// shortened in its middle before it goes).
	variants := [][]seg{
		concatSegs([]seg{{" upgrade-console ", rTitle}, cluster}, ctx, ro),
		concatSegs([]seg{cluster}, ctx, ro),
		concatSegs([]seg{cluster}, ro),
	}
	for _, right := range rights {
		rw := segsWidth(right)
		for i, l := range variants {
			if i == len(variants)-1 && ctx != nil {
				// Before the context goes, it is shortened in its
				// middle to the room the versions leave, as the
				// dashboard's header does: its start and its end tell
				// apart two clusters both named mgmt. Two cells keep
				// it apart from the versions.
				room := p.w - rw - 2 - segsWidth(l) - width(" @ ")
				if room >= minContext {
					l = concatSegs([]seg{cluster}, []seg{{" @ " + fitMiddle(p.opts.Context, room), rMuted}}, ro)
				}
			}
			if lw := segsWidth(l); lw+rw+1 <= p.w {
				st.paintSegs(b, concatSegs(l, []seg{{spaces(p.w - lw - rw), rText}}, right), p.w)
				return
			}
		}
		// A long cluster name is shortened in its middle before the
		// versions go: painted whole, it pushed them off the line.
		if room := p.w - rw - 3 - segsWidth(ro); room >= minContext {
			l := concatSegs([]seg{{" " + fitMiddle(p.plan.Cluster, room), rCluster}}, ro)
			st.paintSegs(b, concatSegs(l, []seg{{spaces(p.w - segsWidth(l) - rw), rText}}, right), p.w)
			return
		}
	}
	// Narrower still: the target versions with whatever is left of the
	// name, down to a few cells; the name whole cut them off.
	target := rights[len(rights)-1]
	rw := segsWidth(target)
	if room := p.w - rw - 3 - segsWidth(ro); room >= 5 {
		l := concatSegs([]seg{{" " + fitMiddle(p.plan.Cluster, room), rCluster}}, ro)
		st.paintSegs(b, concatSegs(l, []seg{{spaces(p.w - segsWidth(l) - rw), rText}}, target), p.w)
		return
	}
	st.paintSegs(b, concatSegs(variants[2], []seg{{"  ", rText}}, right), p.w)
}

func (p *PlanScreen) statusLine() seg {
	if p.status.text != "" {
		return p.status
	}
	st := p.st
	switch {
	case p.opts.ReadOnly:
		return seg{" read-only: the apply is not available", rMuted}
	case p.plan.Blocked():
		// The checks that block are named: on a short screen they are
		// pages below, and a count sent the operator looking for them.
		lead := " " + st.th.Sym.Fail + " "
		return seg{lead + blockedLine(p.plan, max(p.w-3-width(lead), 1)), rFailure}
	case p.checking:
		return seg{" re-running the checks…", rMuted}
	case p.plan.Target != nil && p.plan.Target.SpecDryRun != nil && p.plan.Target.SpecDryRun.Changes() == 0 &&
		len(p.plan.Target.SpecDryRun.Rejected()) == 0:
		// The plan's own dry run (spec-accepted) already says so: "ready:
		// enter applies" promised an apply that finds nothing to do.
		return nothingToApply(st, p.plan)
	}
	return seg{" " + st.th.Sym.OK + " ready: enter applies the spec (after the dry-run and a typed confirmation)", rDone}
}

// dryRunTitle begins the dry-run's section of the plan.
const dryRunTitle = " DRY-RUN "

// buildPlanBody is the scrollable part: components, preflight, dry-run.
func buildPlanBody(st *styles, pl *upgrade.Plan, all bool, dry *upgrade.DryRunResult, dryErr error, dryRunning bool, checkErr error, readOnly bool, w int) []line {
	sym := st.th.Sym
	var out []line
	add := func(segs ...seg) { out = append(out, line{segs: segs}) }

	// What the current side is, when it is not what the cluster runs:
	// the Cluster's spec, which the cluster has not reached.
	if note := pl.CurrentSpec.Note(); note != "" {
		out = append(out, hanging([]seg{{" " + sym.Warn + " ", rStall}}, note, rStall, w)...)
		for i, l := range wrap(pl.CurrentSpec.Next, max(w-3-len(nextLead)-1, 10)) {
			lead := nextLead
			if i > 0 {
				lead = spaces(len(nextLead))
			}
			add(seg{"   " + lead + l, rSevWarning})
		}
		add()
	}

	// Components.
	changed := pl.Changed()
	rows := changed
	if all {
		rows = pl.Components
	}
	counts := model.SummarizeChangesFor(pl.Components, pl.CurrentSpec)
	toggle := "a: show all"
	if all {
		toggle = "a: changed only"
	}
	// Wrapped, not cut: at 80 columns its end is the one place that says
	// what a does (the help gives way to ? and q), kept whole.
	lead := []seg{{" COMPONENTS ", rPaneTitle}, {" ", rMuted}}
	heading := hanging(lead, counts, rMuted, w)
	tag := " (" + toggle + ")"
	if last := &heading[len(heading)-1]; segsWidth(last.segs)+width(tag) < w {
		last.segs = append(last.segs, seg{tag, rMuted})
	} else {
		heading = append(heading, line{segs: []seg{{spaces(segsWidth(lead)) + tag[1:], rMuted}}})
	}
	out = append(out, heading...)
	out = append(out, componentLines(sym.Arrow, rows, w)...)
	add()

	// Preflight.
	var pass, fail, warnN, skipped int
	for _, r := range pl.Preflight {
		switch r.Status {
		case model.CheckPass:
			pass++
		case model.CheckFail:
			fail++
		case model.CheckWarn:
			warnN++
		case model.CheckSkipped:
			skipped++
		}
	}
	summary := fmt.Sprintf(" %d passed · %d failed · %d warning(s)", pass, fail, warnN)
	if skipped > 0 {
		summary += fmt.Sprintf(" · %d skipped", skipped)
	}
	add(seg{" PREFLIGHT ", rPaneTitle}, seg{summary, rMuted})
	if checkErr != nil {
		out = append(out, hanging([]seg{{"   " + sym.Warn + " ", rStall}}, "could not re-run the checks: "+errText(checkErr), rStall, w)...)
	}
	nw := 0
	for _, r := range pl.Preflight {
		nw = max(nw, width(r.Name))
	}
	// Messages and remediations wrap under the name column: the fix is
	// the one line an operator must be able to read whole, and copy. Rows
	// are counted from the column they start at, whole words, a `command`
	// on one row where it fits (cut, or split mid-word, a command copied
	// from the screen runs something else). Where the names leave the text
	// too little room, or a word would not fit in it, the text goes under
	// the names instead.
	col := 5 + nw + 2
	stacked := w-col-1 < minCheckText || longestWord(pl.Preflight) > w-col-1-len(fixLead)
	if stacked {
		col = 7
	}
	indent := spaces(col)
	textW := max(w-col-1, 1)
	for _, r := range failedFirst(pl.Preflight) {
		mark, role := checkMark(sym, r.Status)
		msg := wrap(r.Message, textW)
		if stacked {
			add(seg{"   " + mark + " ", role}, seg{r.Name, rText})
		} else {
			add(seg{"   " + mark + " ", role}, seg{fit(r.Name, nw+2), rText}, seg{msg[0], rMuted})
			msg = msg[1:]
		}
		for _, l := range msg {
			add(seg{indent + l, rMuted})
		}
		if r.Remediation != "" && r.Status != model.CheckPass {
			// A command too long for the column takes the rows from under
			// the name, where it has more room.
			fixIndent, fixW := indent, textW-len(fixLead)
			if wide := w - 5 - 1 - len(fixLead); wide > fixW && !quotedFit(r.Remediation, fixW) {
				fixIndent, fixW = "     ", wide
			}
			for i, l := range wrap(r.Remediation, max(fixW, 1)) {
				lead := fixLead
				if i > 0 {
					lead = spaces(len(fixLead))
				}
				add(seg{fixIndent + lead + l, rSevWarning})
			}
		}
	}
	add()

	// Dry-run.
	title := dryRunTitle
	switch {
	case dryRunning:
		add(seg{title, rPaneTitle}, seg{" asking the API server…", rMuted})
	case dryErr != nil:
		out = append(out, hanging([]seg{{title, rPaneTitle}, {" " + sym.Fail + " ", rFailure}}, errText(dryErr), rFailure, w)...)
	case dry == nil:
		hint := " d: ask the API server what the apply changes (nothing is written)"
		if readOnly {
			hint = " d: ask the API server what the apply would change (nothing is written)"
		}
		add(seg{title, rPaneTitle}, seg{hint, rMuted})
	default:
		add(seg{title, rPaneTitle}, seg{fmt.Sprintf(" %d object(s) change, %d conflict(s), field manager %s", dry.Changes(), len(dry.Conflicts), upgrade.ManagerName), rMuted})
		out = append(out, dryRunLines(st, dry, 0, w)...)
	}
	return out
}

// componentLines is the components table at w cells: NAME, CURRENT,
// TARGET and CHANGE in columns when they fit whole, or at stackedPlanBelow
// columns and wider. On a narrow screen the names give way first, then
// the versions, equally: the change is what the row is read for
// ("downgr…" hid a downgrade), and a name stays known by its start.
// Narrower, each component takes two rows, its name and change, then its
// versions ("v1.30.5-eks-1-30-22 → v1.31.3-eks-1-31-11"; the target on a
// row of its own when both do not fit), so nothing is cut down to the
// minimum; what still must be is cut with "…". Narrower than a name at
// minPlanName beside the widest change, a single row says how wide the
// table needs the screen.
func componentLines(arrow string, rows []model.ComponentDiff, w int) []line {
	if len(rows) == 0 {
		return nil
	}
	nameW, curW, tgtW, changeW := 4, 7, 6, 6
	for _, r := range rows {
		nameW = max(nameW, width(r.Name))
		curW = max(curW, width(r.OldVersion))
		tgtW = max(tgtW, width(r.NewVersion))
		changeW = max(changeW, width(string(r.Change)))
	}
	names := make([]string, len(rows))
	for i, r := range rows {
		names[i] = r.Name
	}
	var out []line
	add := func(segs ...seg) { out = append(out, line{segs: segs}) }
	over := 3 + nameW + 2 + curW + 2 + tgtW + 2 + changeW - w
	if over <= 0 || w >= stackedPlanBelow {
		if over > 0 {
			cut := min(over, max(nameW-minPlanName, 0))
			nameW -= cut
			if over -= cut; over > 0 {
				curCut := min((over+1)/2, max(curW-minPlanVersion, 0))
				tgtCut := min(over-curCut, max(tgtW-minPlanVersion, 0))
				curW, tgtW = curW-curCut, tgtW-tgtCut
			}
		}
		add(seg{"   " + fit("NAME", nameW) + "  " + fit("CURRENT", curW) + "  " + fit("TARGET", tgtW) + "  CHANGE", rTableHeader})
		names = fitNames(names, nameW)
		for i, r := range rows {
			add(seg{"   " + names[i] + "  ", rText}, seg{fitMiddle(dashIfEmpty(r.OldVersion), curW) + "  ", rMuted},
				seg{fitMiddle(dashIfEmpty(r.NewVersion), tgtW) + "  ", rVersion}, seg{string(r.Change), changeRole(r.Change)})
		}
		return out
	}
	if need := 3 + minPlanName + 2 + changeW; w < need {
		// The number first: it is what a row cut at this width keeps.
		return []line{{segs: []seg{{fit(fmt.Sprintf("   %d columns needed to list them", need), w), rMuted}}}}
	}
	nameW = min(nameW, w-3-2-changeW)
	const verLead = "     " // the versions under the name, indented
	arrowLead := arrow + " "
	verW := w - len(verLead)
	add(seg{"   " + fit("NAME", nameW) + "  CHANGE", rTableHeader})
	add(seg{verLead + "CURRENT " + arrowLead + "TARGET", rTableHeader})
	names = fitNames(names, nameW)
	for i, r := range rows {
		add(seg{"   " + names[i] + "  ", rText}, seg{string(r.Change), changeRole(r.Change)})
		cur, tgt := dashIfEmpty(r.OldVersion), dashIfEmpty(r.NewVersion)
		switch {
		case r.OldVersion == r.NewVersion:
			// Unchanged (or skipped, unused): one version says it.
			add(seg{verLead + fitMiddle(cur, verW), rMuted})
		case width(cur)+1+width(arrowLead)+width(tgt) <= verW:
			add(seg{verLead + cur + " ", rMuted}, seg{arrowLead, rMuted}, seg{tgt, rVersion})
		default:
			add(seg{verLead + fitMiddle(cur, verW), rMuted})
			add(seg{verLead, rText}, seg{arrowLead, rMuted}, seg{fitMiddle(tgt, verW-width(arrowLead)), rVersion})
		}
	}
	return out
}

// dryRunLines lists what changes and the conflicts in lines w cells wide;
// limit > 0 caps the field lines per object (the confirmation dialog).
func dryRunLines(st *styles, dry *upgrade.DryRunResult, limit, w int) []line {
	sym := st.th.Sym
	var out []line
	add := func(segs ...seg) { out = append(out, line{segs: segs}) }
	for _, o := range dry.Objects {
		switch {
		case o.Error != "":
			out = append(out, hanging([]seg{{"   " + sym.Fail + " ", rFailure}}, o.Object+": refused: "+o.Error, rFailure, w)...)
		case o.Create:
			add(seg{"   + " + o.Object + ": created", rCondTrue})
		case len(o.Fields) == 0:
			add(seg{"   = " + o.Object + ": unchanged", rMuted})
		default:
			add(seg{"   ~ " + o.Object, rText}, seg{fmt.Sprintf(": %d field(s)", len(o.Fields)), rMuted})
			pw := 0
			for _, f := range o.Fields {
				pw = max(pw, width(f.Path))
			}
			for i, f := range o.Fields {
				if limit > 0 && i == limit {
					add(seg{fmt.Sprintf("       … %d more", len(o.Fields)-limit), rMuted})
					break
				}
				var val string
				switch f.Op {
				case "add":
					val = "+ " + f.New
				case "remove":
					val = "- " + f.Old
				default:
					val = changedValue(f.Old, f.New, sym.Arrow, w-7-(pw+2))
				}
				add(seg{"       " + fit(f.Path, pw+2), rMuted}, seg{val, rVersion})
			}
		}
	}
	if len(dry.Conflicts) == 0 {
		return out
	}
	// One manager (eks-a-cli, on a cluster the CLI created) is named once,
	// so that each line has room for the object the field belongs to.
	manager := upgrade.SoleManager(dry.Conflicts)
	if manager != "" {
		add(seg{"   " + sym.Warn + fmt.Sprintf(" %d field(s) owned by another field manager, %s:", len(dry.Conflicts), manager), rStall})
	} else {
		add(seg{"   " + sym.Warn + fmt.Sprintf(" %d field(s) owned by another field manager:", len(dry.Conflicts)), rStall})
	}
	fw := 0
	for _, c := range dry.Conflicts {
		fw = max(fw, width(c.Field))
	}
	for _, c := range dry.Conflicts {
		// The object first: it tells the rows apart, and a row cut at
		// the width lost it (four ".spec.template  owned by eks-a-cli
		// (VSphereMachineConf…" alike at 80 columns).
		owner := c.Object + "  (owned by " + c.Manager + ")"
		if manager != "" {
			owner = c.Object
		}
		add(seg{"       " + fit(c.Field, fw+2), rText}, seg{owner, rMuted})
	}
	return out
}

// hanging is text wrapped to w cells after lead, its continuation rows
// indented to the text: an error is read whole, not cut at the width.
func hanging(lead []seg, text string, r role, w int) []line {
	lw := segsWidth(lead)
	rows := wrap(text, max(w-lw-1, 10))
	out := make([]line, 0, len(rows))
	out = append(out, line{segs: append(slices.Clone(lead), seg{rows[0], r})})
	for _, row := range rows[1:] {
		out = append(out, line{segs: []seg{{spaces(lw) + row, r}}})
	}
	return out
}

// changedValue is "from → to" in at most avail cells where it can be: when
// the pair is too long, the start the two values share is cut from both
// ("…kube-1.30 → …kube-1.31"), because cutting their ends would hide the
// very part that changes.
func changedValue(from, to, arrow string, avail int) string {
	val := from + " " + arrow + " " + to
	over := width(val) - avail
	if over <= 0 {
		return val
	}
	common := 0
	for common < len(from) && common < len(to) && from[common] == to[common] {
		common++
	}
	// Cut at least enough cells to fit ("…" replaces each cut), at most the
	// shared start (whole characters only), after a path's "/" where there
	// is one.
	need, cut, cells := (over+3)/2, common, 0
	for i, r := range from[:common] {
		if cells >= need {
			cut = i
			break
		}
		cells += width(string(r))
	}
	for cut > 0 && cut < len(from) && !utf8.RuneStart(from[cut]) {
		cut--
	}
	if i := strings.IndexByte(from[cut:common], '/'); i >= 0 {
		cut += i + 1
	}
	if cut <= 1 {
		return val
	}
	return "…" + from[cut:] + " " + arrow + " …" + to[cut:]
}

func checkMark(sym themes.Symbols, s model.CheckStatus) (string, role) {
	switch s {
	case model.CheckPass:
		return sym.OK, rCondTrue
	case model.CheckFail:
		return sym.Fail, rCondFalse
	case model.CheckWarn:
		return sym.Warn, rSevWarning
	default:
		return sym.Skipped, rMuted
	}
}

func changeRole(c model.ChangeKind) role {
	switch c {
	case model.ChangeNone, model.ChangeSkipped, model.ChangeUnused:
		return rMuted
	case model.ChangeMajor, model.ChangeDowngrade, model.ChangeRemoved, model.ChangeUnknown:
		return rSevWarning
	}
	return rText
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// minCheckText is the fewest cells a check's message gets beside the
// names; with less it goes under the name.
const minCheckText = 20

// failedFirst is the checks with the failures first, then the warnings, each
// in the checks' own order: at 80×24 the two that blocked the apply came 41
// rows down, under fifteen passed ones.
func failedFirst(rs []model.CheckResult) []model.CheckResult {
	rank := func(s model.CheckStatus) int {
		switch s {
		case model.CheckFail:
			return 0
		case model.CheckWarn:
			return 1
		}
		return 2
	}
	out := slices.Clone(rs)
	slices.SortStableFunc(out, func(a, b model.CheckResult) int { return rank(a.Status) - rank(b.Status) })
	return out
}

// longestWord is the width of the longest word of the checks' messages and
// fixes.
func longestWord(checks []model.CheckResult) int {
	n := 0
	for _, r := range checks {
		for _, f := range strings.Fields(r.Message + " " + r.Remediation) {
			n = max(n, width(f))
		}
	}
	return n
}

// quotedFit reports whether every `quoted` span of s fits in w cells.
func quotedFit(s string, w int) bool {
	for _, f := range quotedFields(s) {
		if strings.HasPrefix(f, "`") && width(f) > w {
			return false
		}
	}
	return true
}

// nextLead starts what to do about a cluster that has not reached its spec.
const nextLead = "next: "

// fixLead starts a check's remediation; its continuation rows are indented
// to the text after it.
const fixLead = "fix: "

// wrap breaks plain text into lines of at most w cells, as wrapWords does:
// at spaces only, a `command` whole where it fits, and never no line (an
// empty text is one empty line). ansi.Wrap, which this used, also breaks
// after hyphens: "upgrade-" on one row and "console-mgmt" on the next read
// as two words, and a name copied from either is wrong.
func wrap(s string, w int) []string {
	if rows := wrapWords(s, w); len(rows) > 0 {
		return rows
	}
	return []string{""}
}

// concatSegs joins runs of segments into one.
func concatSegs(parts ...[]seg) []seg {
	var out []seg
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
