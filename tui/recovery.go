package tui

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"k8s.io/klog/v2"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
	"github.com/upgrade-console/upgrade-console/upgrade"
	"github.com/upgrade-console/upgrade-console/upgrade/recovery"
)

// The recovery menu and its dialog: the TUI twin of `etcd rollback`,
// `lock clear` and `node retry`. The dashboard's R opens it only when the
// snapshot shows an action is offered (recovery.Offers). The dialog walks the
// same path as the headless commands: the plan (with the preconditions the
// live cluster was checked against), the server-side dry run, the typed
// confirmation (the object's name), then the steps as they run, and the
// closing message. All I/O runs in commands; progress arrives through a
// channel read by a re-arming command, one step result at a time.

// RecoveryOptions connect the recovery menu to a cluster.
type RecoveryOptions struct {
	Env   *recovery.Env
	Audit upgrade.Recorder
	// ReadOnly makes the dialog show plans only: no dry run, no run.
	ReadOnly bool
	// Threshold is the etcd rollback's (recovery.DefaultEtcdRollbackThreshold when zero).
	Threshold time.Duration
	// NodeLabel is the upgrade-in-progress node label.
	NodeLabel string
	// Now is the clock for the offers (time.Now when nil).
	Now func() time.Time

	// backend replaces the cluster in tests.
	backend recoveryBackend
}

func (o RecoveryOptions) now() time.Time {
	if o.Now == nil {
		return time.Now()
	}
	return o.Now()
}

// RecoveryAction is the dashboard's R: it opens the recovery menu when an
// action is offered for the current snapshot, and does nothing otherwise. It
// is dangerous, so read-only mode leaves it unbound.
func RecoveryAction(o RecoveryOptions) Action {
	offerer := &recovery.Offerer{Threshold: o.Threshold, NodeLabel: o.NodeLabel}
	return Action{
		Offered: func(s *model.ClusterState) bool { return offerer.Any(o.ownLockHidden(s), o.now()) },
		NotOffered: func(s *model.ClusterState) []string {
			return nothingToRecover(o.ownLockHidden(s), o.now(), o.Threshold)
		},
		Binding:   recoveryBinding(),
		Dangerous: true,
		Run: func(s *model.ClusterState) tea.Cmd {
			own := o.ownLive(s)
			offers := recovery.Offers(o.ownLockHidden(s), o.now(), o.Threshold, o.NodeLabel)
			if o.Env == nil {
				if len(offers) == 0 {
					return nil
				}
				return OpenDialog(newRecoveryDialog(o, offers))
			}
			// The snapshot's view of the upgrade lock may be a moment
			// old, or missing (Leases forbidden to the watchers): one
			// read, in the command, settles whether a stale lease is
			// offered.
			return func() tea.Msg {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				var watched *model.Lock
				if s != nil {
					watched = s.Lock
				}
				if st, err := recovery.WithStaleLease(ctx, o.Env, offers, watched); err == nil && !own {
					offers = st
				}
				offers = recovery.OwnKeptLease(offers, s.Lock, o.Env.Holder.String(), o.now())
				d := newRecoveryDialog(o, offers)
				// R was offered: a press that opened nothing read as a
				// key that does not work.
				d.nothing = nothingAfterRefresh
				return OpenDialogMsg{Dialog: d}
			}
		},
	}
}

// recoveryBinding is R, the recovery menu's key.
func recoveryBinding() key.Binding {
	return key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "recover"))
}

// readOnlyRecovery is what R says in read-only mode, where it opens
// nothing whatever the cluster shows, longest form first.
var readOnlyRecovery = []string{
	"R: no recovery from this console: it is read-only (--read-only), which leaves R unbound",
	"R: no recovery here: the console is read-only (--read-only)",
	"R: no recovery here: read-only",
}

// ownLockHidden is s without the upgrade lock when it is this console's own
// and not kept: while the API server does not answer, the renewals fail
// and the lock reads stale, and R offered to clear the lock of the upgrade
// this console drives (the planner refused it, once the operator had
// chosen it). The header says the renewal is failing. A lock this console
// kept, the upgrade having failed, is offered: the operator clears it once
// the cluster is checked.
func (o RecoveryOptions) ownLockHidden(s *model.ClusterState) *model.ClusterState {
	if !o.ownLive(s) {
		return s
	}
	c := *s
	c.Lock = nil
	return &c
}

// ownLive says whether s shows this console's own lock, not kept.
func (o RecoveryOptions) ownLive(s *model.ClusterState) bool {
	return o.Env != nil && o.Env.Holder != (upgrade.Holder{}) && s != nil && s.Lock != nil &&
		s.Lock.Kept == "" && s.Lock.HolderIdentity == o.Env.Holder.String()
}

// nothingToRecover is what R says where nothing is offered for s (its own
// live lock hidden, as Offers sees it): what R looks for and did not find,
// longest form first. Under a live lock the markers are not looked for
// (Offers: they are its upgrade at work), and saying "no marker" there
// would be wrong.
func nothingToRecover(s *model.ClusterState, now time.Time, threshold time.Duration) []string {
	const short = "R: nothing to recover now"
	if s == nil || s.Cluster == nil {
		return []string{"R: nothing to recover yet: the cluster has not been read", short}
	}
	if threshold <= 0 {
		threshold = recovery.DefaultEtcdRollbackThreshold
	}
	etcd := "no new etcd member unready past " + model.ShortDuration(threshold)
	if s.Lock.Held() && !s.LockExpired(now) {
		return []string{
			"R: nothing to recover now: " + etcd + ", no in-place node to retry; the upgrade lock is live, its markers the upgrade at work",
			"R: nothing to recover: no stuck etcd member, node to retry; the lock is live",
			short,
		}
	}
	return []string{
		"R: nothing to recover now: no stale upgrade lock or leftover marker, " + etcd + ", no in-place node to retry",
		"R: nothing to recover now: no stale lock or leftover marker, " + etcd + ", no node to retry",
		"R: nothing to recover: no stale lock/marker, stuck etcd member, node to retry",
		short,
	}
}

// nothingAfterRefresh is what the menu says when the one read of the lock
// R makes found nothing left to offer: the snapshot showed a stale lease
// that has been renewed or removed since.
const nothingAfterRefresh = "Nothing to recover: a fresh read of the cluster found the upgrade lock renewed or removed since the dashboard showed it stale. The header shows the lock as it is now."

// recoveryBackend is the I/O the dialog's commands do; the real one plans
// and runs against the cluster, tests substitute their own.
type recoveryBackend interface {
	plan(ctx context.Context, o recovery.Offer) (*recovery.Plan, *recovery.NodeFailure, error)
	dryRun(ctx context.Context, p *recovery.Plan) (recovery.Report, error)
	run(ctx context.Context, p *recovery.Plan, progress func(recovery.StepResult)) (recovery.Report, error)
	// snapshotCopies lists the local snapshot copies of the cluster on
	// this machine, newest first, and those named for it that are not.
	snapshotCopies(ctx context.Context) (recovery.LocalCopies, error)
	// notConfirmed records a plan whose dry run ran and whose typed
	// confirmation was not given (why), as the command line does.
	notConfirmed(ctx context.Context, p *recovery.Plan, why string) error
}

type clusterBackend struct{ o RecoveryOptions }

// plan plans the offer the operator chose. A refusal is recorded in the
// audit log, as on the command line: the operator asked, and was told no.
func (b clusterBackend) plan(ctx context.Context, o recovery.Offer) (*recovery.Plan, *recovery.NodeFailure, error) {
	p, f, err := b.planOffer(ctx, o)
	return p, f, recordPlanned(ctx, b.o, p, err)
}

// recordPlanned records what planning told the operator, as the command
// line does: a refusal, or a node retry with nothing to retry (already-done:
// the rerun of a retry that worked is part of the record).
func recordPlanned(ctx context.Context, o RecoveryOptions, p *recovery.Plan, err error) error {
	switch {
	case o.ReadOnly:
		return err
	case err != nil:
		return errors.Join(err, recovery.RecordRefusal(ctx, o.Audit, err))
	case p != nil && p.Action == recovery.ActionNodeRetry:
		return recovery.RecordNothingToRetry(ctx, o.Audit, p, false)
	}
	return nil
}

func (b clusterBackend) planOffer(ctx context.Context, o recovery.Offer) (*recovery.Plan, *recovery.NodeFailure, error) {
	user, host := upgrade.CurrentOperator()
	switch o.Action {
	case recovery.ActionEtcdRollback:
		p, err := recovery.PlanEtcdRollback(ctx, b.o.Env, recovery.EtcdRollbackOptions{Threshold: b.o.Threshold, By: user + "@" + host, SnapshotFile: o.SnapshotFile})
		return p, nil, err
	case recovery.ActionNodeRetry:
		return recovery.PlanNodeRetry(ctx, b.o.Env, o.Node, recovery.NodeRetryOptions{Tail: 8})
	default:
		p, _, err := recovery.PlanClear(ctx, b.o.Env, recovery.ClearOptions{IDs: o.Markers, All: true,
			MarkerOptions: recovery.MarkerOptions{NodeLabel: b.o.NodeLabel, Watched: o.Watched}})
		return p, nil, err
	}
}

func (b clusterBackend) notConfirmed(ctx context.Context, p *recovery.Plan, why string) error {
	if b.o.ReadOnly {
		return nil
	}
	return recovery.RecordNotConfirmed(ctx, b.o.Audit, p, errors.New(why))
}

func (b clusterBackend) snapshotCopies(ctx context.Context) (recovery.LocalCopies, error) {
	return b.o.Env.SnapshotCopies(ctx)
}

func (b clusterBackend) dryRun(ctx context.Context, p *recovery.Plan) (recovery.Report, error) {
	rep, err := (&recovery.Executor{Audit: b.o.Audit, ReadOnly: b.o.ReadOnly}).DryRun(ctx, p)
	var aw *upgrade.AuditWriteError
	if err != nil && !b.o.ReadOnly && !errors.As(err, &aw) {
		// As on the command line: the action was not run.
		err = errors.Join(err, recovery.RecordDryRunRefused(ctx, b.o.Audit, p, err))
	}
	return rep, err
}

func (b clusterBackend) run(ctx context.Context, p *recovery.Plan, progress func(recovery.StepResult)) (recovery.Report, error) {
	return (&recovery.Executor{Audit: b.o.Audit, ReadOnly: b.o.ReadOnly, Progress: progress}).Run(ctx, p)
}

// matchAction runs the registered action bound to a key, if any; dangerous
// ones are not bound in read-only mode.
// offeredActions are the action keys a screen's help shows for a snapshot:
// those bound (not dangerous in read-only mode) and offered for it.
func offeredActions(opts Options, s *model.ClusterState) []key.Binding {
	var shown []key.Binding
	for _, a := range opts.Actions {
		if a.Dangerous && opts.ReadOnly {
			continue
		}
		if a.Offered != nil && !a.Offered(s) {
			continue
		}
		shown = append(shown, a.Binding)
	}
	return shown
}

func matchAction(opts Options, msg tea.KeyPressMsg, s *model.ClusterState) tea.Cmd {
	for _, a := range opts.Actions {
		if a.Dangerous && opts.ReadOnly {
			continue
		}
		// An action not offered is not in the footer or the help, and its
		// key opens nothing (R opened "Nothing to recover" on a cluster
		// that never showed anything to recover): the last line says why.
		if !key.Matches(msg, a.Binding) || a.Run == nil {
			continue
		}
		if a.Offered == nil || a.Offered(s) {
			return a.Run(s)
		}
		if a.NotOffered != nil {
			return say(a.NotOffered(s)...)
		}
		return nil
	}
	// Read-only, R is bound to nothing (the command line makes no
	// recovery action then) and did nothing at all when pressed, where a
	// console that merely has nothing to recover says so (NotOffered):
	// it says why instead, as the plan says why enter applies nothing.
	if opts.ReadOnly && key.Matches(msg, recoveryBinding()) {
		return say(readOnlyRecovery...)
	}
	// Not read-only, yet no recovery action: the command line could not
	// make one (Options.NoRecovery), and R said nothing of why.
	if len(opts.NoRecovery) > 0 && key.Matches(msg, recoveryBinding()) {
		forms := make([]string, len(opts.NoRecovery))
		for i, f := range opts.NoRecovery {
			forms[i] = "R: no recovery: " + f
		}
		return say(forms...)
	}
	return nil
}

type recStage int

const (
	recMenu recStage = iota
	recPlanning
	recPlan
	recDryRunning
	recConfirm
	recRunning
	recDone
	// recFile asks for the local snapshot copy an etcd rollback restores
	// from when the snapshot ConfigMap is gone.
	recFile
)

type (
	recPlanMsg struct {
		plan    *recovery.Plan
		failure *recovery.NodeFailure
		err     error
	}
	recDryMsg struct {
		rep recovery.Report
		err error
	}
	// recStepMsg is one step's progress; ch is where the next comes from,
	// read once this one is in (waitRecStep).
	recStepMsg struct {
		r  recovery.StepResult
		ch <-chan recovery.StepResult
	}
	recDoneMsg struct {
		rep recovery.Report
		err error
	}
	recCopiesMsg struct {
		copies recovery.LocalCopies
		err    error
	}
)

type recoveryKeys struct {
	Up, Down, PageUp, PageDown, Select, Back, File, Quit, Suspend key.Binding
	// Top and Bottom (home/g, end/G) are the dashboard's and the node
	// detail's, where nothing is typed (there g is a letter, home and end
	// the input's).
	Top, Bottom key.Binding
	// Copy is y, which the App takes (copyBinding) where nothing is typed.
	Copy key.Binding
	// Help (?) shows the full help where nothing is typed, as on every
	// screen, and esc closes it (CloseHelp) before it goes back.
	Help, CloseHelp key.Binding
}

// recoveryDialog is the recovery menu and the dialog of the chosen action.
type recoveryDialog struct {
	o       RecoveryOptions
	backend recoveryBackend
	st      *styles
	w, h    int
	// help draws the full help (?) in place of the keys' line.
	help   help.Model
	offers []recovery.Offer
	cursor int
	stage  recStage
	// nothing is what the menu says when no action is left to offer.
	nothing string
	// cancel stops the run under way; stopping is set once ctrl+c asked it to.
	cancel   context.CancelFunc
	stopping bool
	// ran receives the run's error once its command has returned, its end
	// recorded: atEnd, the only reader, learns the end from the command's
	// goroutine through it, as a Cmd may not write the model.
	ran chan error
	// stepSince is when the step under way began: a wait step can take
	// minutes, and the dialog says since when.
	stepSince time.Time

	plan    *recovery.Plan
	failure *recovery.NodeFailure
	err     error
	dry     recovery.Report
	steps   map[int]recovery.StepResult
	done    recovery.Report
	input   textinput.Model
	hint    string
	keys    recoveryKeys
	// offset scrolls the body when it is taller than the dialog; follow
	// keeps in view the step under way as the steps run, and the result's
	// first line at the end, from when the operator scrolls away until
	// they scroll back there (scrollTo). relayout computes maxOffset for
	// the keys.
	offset, maxOffset int
	follow            bool
	// stepFrom and stepTo are the body lines of the step under way (or,
	// between two, of the last one that began), resultAt the first line
	// of the result at the run's end; set by runLines, -1 when none.
	stepFrom, stepTo, resultAt int
	// countRow: the count of the body's rows out of view does not fit
	// beside the keys on their last row (40 columns: "enter/esc close ·
	// q quit", the run's short keys), and takes a row of its own.
	countRow bool
	// helpOffset scrolls the full help where it is taller than the rows
	// it has (40x10: one of its ten).
	helpOffset int
	// selFrom and selTo are the body lines of the offer the menu's cursor
	// is on, and offerEnds the line after each offer's, set by bodyLines.
	selFrom, selTo int
	offerEnds      []int
	// body and cmds are the stage's lines and the commands in them, laid
	// out by relayout after each Update and SetSize: View only paints.
	body    []line
	cmds    []string
	visible int
	// promptFolded: the prompt's text is laid out at the body's end, to
	// scroll with it, as the dialog is too short to keep it fixed.
	promptFolded bool
	// tight is how much of its frame a stage gives up where the body,
	// a typed stage's folded prompt with it, has no row (40x10, 80x12):
	// 1 the blank rows and a run's long keys, 2 the title too and the
	// error's long form. Kept, they pushed the dialog past the room the
	// App gives it: a typed stage past the screen, whose top (the rows
	// that name what to type) the App cut; the menu, plan, run and end
	// over the rows the App keeps clear around it.
	tight int
	// copies are the local snapshot copies the file stage lists.
	copies    recovery.LocalCopies
	copiesErr error
	// doneSteps, set while the action is planned again after a dry run
	// that found every step done (the cluster moved on since the plan),
	// are those steps (name and object). allDone: the plan made again
	// lists the same (a finished rollback's record keeps them): nothing to
	// run, where enter ran the same dry run again; one with other steps is
	// shown to run.
	doneSteps []string
	allDone   bool
}

func newRecoveryDialog(o RecoveryOptions, offers []recovery.Offer) *recoveryDialog {
	var b recoveryBackend = clusterBackend{o}
	if o.backend != nil {
		b = o.backend
	}
	dk := DefaultKeyMap()
	d := &recoveryDialog{o: o, backend: b, offers: offers, steps: map[int]recovery.StepResult{}, help: help.New(),
		keys: recoveryKeys{
			Up:   key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
			Down: key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
			// Scroll a body taller than the dialog (a long plan, a run's
			// steps), and in the menu a chosen offer taller than the
			// rows in view (40x10).
			PageUp:   key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "page up")),
			PageDown: key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn", "page down")),
			Top:      dk.Home,
			Bottom:   dk.End,
			Select:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "continue")),
			Back:     key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
			File:     key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "restore from a local snapshot file")),
			// The dashboard's footer, still in view beneath the dialog,
			// says "q quit": q quits from every stage that reads no text
			// and runs nothing.
			Quit: key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),
			// Not while the run is under way (suspendRefused).
			Suspend:   key.NewBinding(key.WithKeys("ctrl+z"), key.WithHelp("ctrl+z", "suspend (not while a run is under way)")),
			Copy:      copyBinding(),
			Help:      dk.Help,
			CloseHelp: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close help")),
		}}
	d.input = textinput.New()
	d.input.Prompt = "> "
	d.input.CharLimit = 253
	d.setTheme(initialTheme(Options{}))
	return d
}

func (d *recoveryDialog) setTheme(th *themes.Theme) {
	d.st = newStyles(th)
	d.help.Styles = th.Help
	d.input.SetStyles(th.InputStyles())
}

func (d *recoveryDialog) Init() tea.Cmd { return nil }

func (d *recoveryDialog) SetSize(w, h int) {
	d.w, d.h = w, h
	d.input.SetWidth(max(d.innerWidth()-4, 10))
	d.relayout()
}

// innerWidth is the text's width: what the App gives the dialog (the window
// less a margin), at most dialogMaxWidth as the typed confirmation's, less
// the border and padding. Uncapped, at 250 columns a step's change ran 240
// cells across the terminal, hard to read and to the eye no dialog. Every
// line wraps (a cut at 100 once lost the end of long step titles and the
// dry run's result after them).
func (d *recoveryDialog) innerWidth() int { return max(min(d.w, dialogMaxWidth)-4, 20) }

func (d *recoveryDialog) ShortHelp() []key.Binding {
	return []key.Binding{d.keys.Up, d.keys.Down, d.keys.Select, d.keys.Back}
}

// FullHelp is the keys of the stage shown, as its footer says them: one
// list for all of them said "f restore…" in the menu, "q quit" and "enter
// continue" while a run went on (neither does anything then), and not the
// ctrl+c that stops it.
func (d *recoveryDialog) FullHelp() [][]key.Binding {
	k := d.keys
	as := func(b key.Binding, desc string) key.Binding {
		b.SetHelp(b.Help().Key, desc)
		return b
	}
	scroll := []key.Binding{as(k.Up, "scroll up"), as(k.Down, "scroll down"), k.PageUp, k.PageDown, k.Top, k.Bottom}
	help := []key.Binding{k.Help, k.CloseHelp}
	// y copies the commands the body shows: said only where it shows one.
	copyKey := key.NewBinding(key.WithDisabled())
	if cmds, _ := d.shownCommands(); len(cmds) > 0 {
		copyKey = k.Copy
	}
	switch d.stage {
	case recMenu:
		if len(d.offers) == 0 {
			return [][]key.Binding{{as(k.Back, "close"), copyKey, k.Suspend, k.Quit}, help}
		}
		ends := []key.Binding{as(k.Top, "first offer"), as(k.Bottom, "last offer")}
		if d.offerCut() {
			// As the footer has them: ↑/↓ go through the chosen offer's
			// rows first, and pgup/pgdn scroll it.
			return [][]key.Binding{{as(k.Up, "scroll the chosen offer, then choose"), as(k.Down, "scroll the chosen offer, then choose"),
				as(k.PageUp, "scroll the chosen offer up"), as(k.PageDown, "scroll the chosen offer down"), ends[0], ends[1], as(k.Select, "plan the chosen action"), as(k.Back, "close")},
				{copyKey, k.Suspend, k.Quit}, help}
		}
		return [][]key.Binding{{as(k.Up, "choose"), as(k.Down, "choose"), ends[0], ends[1], as(k.Select, "plan the chosen action"), as(k.Back, "close")},
			{copyKey, k.Suspend, k.Quit}, help}
	case recPlan:
		var acts []key.Binding
		if d.runnable() {
			acts = append(acts, as(k.Select, "dry run"))
		}
		if d.fileOffered() {
			acts = append(acts, k.File)
		}
		acts = append(acts, as(k.Back, "back to the menu"), copyKey, k.Suspend, k.Quit)
		return [][]key.Binding{scroll, acts, help}
	case recDone:
		return [][]key.Binding{scroll, {as(k.Select, "close"), as(k.Back, "close"), copyKey, k.Suspend, k.Quit}, help}
	case recRunning:
		// ctrl+z is refused and q does nothing while the run writes.
		stop := key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "stop after the step under way (recorded; the menu resumes it)"))
		if d.stopping {
			stop.SetHelp("ctrl+c", "stopping: the step under way ends first")
		}
		return [][]key.Binding{scroll, {as(k.Back, "hide (R shows it; the run goes on)"), stop}, help}
	}
	// Planning, dry-running: the work answers soon; ctrl+c quits the
	// console (the App), as on the dashboard.
	return [][]key.Binding{scroll, {k.Suspend, key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit"))}, help}
}

// helpRows is the full help as the dialog shows it in place of its keys'
// line, wrapped to its width; nil while it is not shown. Where the dialog
// is too short for it (taller than the screen, the App cut the dialog's
// top, the action it is about), it shows the rows it has room for, from
// helpOffset (? and esc lead it), and its last row counts the rows out of
// view, which ↑/↓ and pgup/pgdn reach: cut at 40x10 with no sign, it showed
// "? help" and "esc close help" alone, and none of the stage's keys.
func (d *recoveryDialog) helpRows() []string {
	if !d.help.ShowAll || d.typing() {
		return nil
	}
	rows := d.fullHelpRows()
	room := d.helpRoom()
	if len(rows) <= room {
		return rows
	}
	n := room - 1
	off := min(max(d.helpOffset, 0), len(rows)-n)
	above, below := off, len(rows)-off-n
	iw := d.innerWidth()
	note := countsText(above, below)
	for _, s := range []string{
		fmt.Sprintf("↑/↓/%s/%s scroll the help (%d above, %d below)", d.keys.PageUp.Help().Key, d.keys.PageDown.Help().Key, above, below),
		"↑/↓ " + countsText(above, below) + " · esc close help",
		"↑/↓ " + countsText(above, below),
	} {
		if width(s) <= iw {
			note = s
			break
		}
	}
	return append(slices.Clone(rows[off:off+n]), d.st.paint(rMuted, note))
}

// fullHelpRows is the full help wrapped to the dialog's width, whole.
func (d *recoveryDialog) fullHelpRows() []string {
	return strings.Split(fullHelpFitting(d.help, d.FullHelp(), d.innerWidth()), "\n")
}

// helpRoom is the rows the full help has: what the title, the blank line
// and a row of the body leave.
func (d *recoveryDialog) helpRoom() int { return max(d.h-2-d.headRows()-d.gapRows()-1, 1) }

// helpMaxOffset is how far the full help scrolls: 0 where it fits.
func (d *recoveryDialog) helpMaxOffset() int {
	if !d.help.ShowAll || d.typing() {
		return 0
	}
	rows, room := len(d.fullHelpRows()), d.helpRoom()
	if rows <= room {
		return 0
	}
	return rows - (room - 1)
}

// stepKeys name a plan's steps as doneSteps does.
func stepKeys(steps []recovery.Step) []string {
	keys := make([]string, len(steps))
	for i, st := range steps {
		keys[i] = st.Name + " " + st.Object
	}
	return keys
}

// runnable says whether the plan on screen can go on to its dry run.
func (d *recoveryDialog) runnable() bool {
	return d.plan != nil && len(d.plan.Steps) > 0 && d.err == nil && !d.o.ReadOnly && !d.allDone
}

// typing says whether the stage reads text (the typed confirmation, the
// snapshot file's path): y is a letter there.
func (d *recoveryDialog) typing() bool { return d.stage == recConfirm || d.stage == recFile }

// shownCommands are the commands the dialog's body shows (y): the closing
// message's (the lock to clear, EKS-A's reconcile to resume), a refusal's.
func (d *recoveryDialog) shownCommands() ([]string, bool) {
	if d.typing() {
		return nil, false
	}
	return d.cmds, true
}

// Stage names the dialog's stage (tests).
func (d *recoveryDialog) Stage() string {
	return [...]string{"menu", "planning", "plan", "dry-running", "confirm", "running", "done", "file"}[d.stage]
}

func (d *recoveryDialog) Update(msg tea.Msg) (Screen, tea.Cmd) {
	stage := d.stage
	s, cmd := d.update(msg)
	if d.stage != stage {
		// The help was of the stage before (the keys differ), and a
		// stage that reads text takes ? and esc as its own.
		d.help.ShowAll = false
	}
	d.relayout()
	return s, cmd
}

func (d *recoveryDialog) update(msg tea.Msg) (Screen, tea.Cmd) {
	switch msg := msg.(type) {
	case ThemeMsg:
		d.setTheme(msg.Theme)
	case recPlanMsg:
		if d.stage == recPlanning {
			d.plan, d.failure, d.err, d.stage = msg.plan, msg.failure, upgrade.ExplainAPIError(msg.err), recPlan
			d.allDone = d.doneSteps != nil && d.err == nil && d.plan != nil && slices.Equal(stepKeys(d.plan.Steps), d.doneSteps)
			d.doneSteps = nil
		}
	case recDryMsg:
		if d.stage == recDryRunning {
			d.dry, d.err = msg.rep, upgrade.ExplainAPIError(msg.err)
			d.stage = recConfirm
			if d.err != nil {
				d.stage = recPlan
				return d, nil
			}
			if msg.rep.AllAlreadyDone() {
				// The cluster moved on since the plan (another console,
				// the controller): planned again, it says there is
				// nothing to do, and is recorded as the command line
				// records it, rather than asked for a run of no-ops.
				d.doneSteps = make([]string, 0, len(msg.rep.Steps))
				for _, r := range msg.rep.Steps {
					d.doneSteps = append(d.doneSteps, r.Step+" "+r.Object)
				}
				d.stage, d.dry, d.offset = recPlanning, recovery.Report{}, 0
				return d, d.planCmd(d.offers[d.cursor])
			}
			d.input.Placeholder = confirmPlaceholder(d.plan.ConfirmObject)
			return d, d.input.Focus()
		}
	case recCopiesMsg:
		if d.stage == recFile {
			d.copies, d.copiesErr = msg.copies, msg.err
			if d.input.Value() == "" && len(msg.copies.Paths) > 0 {
				d.input.SetValue(msg.copies.Paths[0])
				d.input.CursorEnd()
			}
		}
	case recStepMsg:
		if d.stage == recRunning {
			d.steps[msg.r.Index] = msg.r
			if msg.r.Status == recovery.StepRunning {
				d.stepSince = d.o.now()
			}
		}
		return d, waitRecStep(msg.ch)
	case recDoneMsg:
		if d.stage == recRunning {
			// The result opens at its first line, where the operator
			// had scrolled to during the run too.
			d.done, d.err, d.stage, d.follow = msg.rep, upgrade.ExplainAPIError(msg.err), recDone, true
			// Step messages still queued behind this one are superseded
			// by the report, which holds every step's final result.
			for _, r := range msg.rep.Steps {
				d.steps[r.Index] = r
			}
		}
	case tea.KeyPressMsg:
		return d, d.handleKey(msg)
	}
	return d, nil
}

func (d *recoveryDialog) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	k := d.keys
	if !d.typing() {
		switch {
		case key.Matches(msg, k.Help):
			d.help.ShowAll, d.helpOffset = !d.help.ShowAll, 0
			return nil
		case d.help.ShowAll && key.Matches(msg, k.CloseHelp):
			d.help.ShowAll = false
			return nil
		}
		// A full help cut by the dialog's foot scrolls, and its last
		// row counts the rest; relayout keeps the offset in bounds.
		if d.helpMaxOffset() > 0 {
			page := max(d.h/2, 1)
			switch {
			case key.Matches(msg, k.Up):
				d.helpOffset--
				return nil
			case key.Matches(msg, k.Down):
				d.helpOffset++
				return nil
			case key.Matches(msg, k.PageUp):
				d.helpOffset -= page
				return nil
			case key.Matches(msg, k.PageDown):
				d.helpOffset += page
				return nil
			case key.Matches(msg, k.Top):
				d.helpOffset = 0
				return nil
			case key.Matches(msg, k.Bottom):
				d.helpOffset = d.helpMaxOffset()
				return nil
			}
		}
	}
	if d.stage != recMenu {
		page := max(d.h/2, 1)
		// While the operator types, k and j are letters.
		typing := d.typing()
		switch {
		case key.Matches(msg, k.Up):
			if !typing || msg.String() == "up" {
				d.scrollTo(d.offset - 1)
				return nil
			}
		case key.Matches(msg, k.Down):
			if !typing || msg.String() == "down" {
				d.scrollTo(d.offset + 1)
				return nil
			}
		case key.Matches(msg, k.PageUp):
			d.scrollTo(d.offset - page)
			return nil
		case key.Matches(msg, k.PageDown):
			d.scrollTo(d.offset + page)
			return nil
		case !typing && key.Matches(msg, k.Top):
			d.scrollTo(0)
			return nil
		case !typing && key.Matches(msg, k.Bottom):
			d.scrollTo(d.maxOffset)
			return nil
		}
	}
	if key.Matches(msg, k.Quit) && d.quits() {
		return requestQuit
	}
	switch d.stage {
	case recRunning:
		// A wait can take fifteen minutes, and the dialog covers the panes
		// the operator watches meanwhile: esc sets it aside (the run goes
		// on), R brings it back, and it comes back by itself at the end.
		if key.Matches(msg, k.Back) {
			return hideDialog
		}
	case recMenu:
		// ↑/↓ go through the rows of a chosen offer cut by the dialog's
		// edge before they choose another: at 40x10 the one offer's
		// reason was out of view, with no key to reach it. pgup/pgdn
		// scroll it; relayout keeps the view within it.
		switch {
		case key.Matches(msg, k.Back):
			return CloseDialog
		case len(d.offers) == 0:
		case key.Matches(msg, k.Up) && d.offset > d.selFrom:
			d.offset--
		case key.Matches(msg, k.Up):
			d.cursor = max(d.cursor-1, 0)
			d.offset = min(d.offset, d.offerStart(d.cursor))
		case key.Matches(msg, k.Down) && d.offset+d.visible < d.selTo:
			d.offset++
		case key.Matches(msg, k.Down):
			d.cursor = min(d.cursor+1, len(d.offers)-1)
		case key.Matches(msg, k.PageUp):
			d.offset -= max(d.h/2, 1)
		case key.Matches(msg, k.PageDown):
			d.offset += max(d.h/2, 1)
		// As in the nodes table and the panes: g/G were the list keys the
		// menu alone did not take, and a long menu (a failed node each)
		// was gone through one ↓ at a time. The offer chosen opens at its
		// first line, as one ↑/↓ chooses does.
		case key.Matches(msg, k.Top):
			d.cursor, d.offset = 0, 0
		case key.Matches(msg, k.Bottom):
			d.cursor = len(d.offers) - 1
			d.offset = d.offerStart(d.cursor)
		case key.Matches(msg, k.Select):
			d.stage, d.offset = recPlanning, 0
			return d.planCmd(d.offers[d.cursor])
		}
	case recPlan:
		switch {
		case key.Matches(msg, k.Back):
			d.stage, d.plan, d.err, d.failure, d.allDone = recMenu, nil, nil, nil, false
		case key.Matches(msg, k.Select) && d.runnable():
			d.stage = recDryRunning
			return d.dryRunCmd()
		case key.Matches(msg, k.File) && d.fileOffered():
			d.stage, d.offset, d.hint = recFile, 0, ""
			d.input.Placeholder = "path of a snapshot file"
			d.input.SetValue(d.offers[d.cursor].SnapshotFile)
			d.input.CursorEnd()
			return tea.Batch(d.input.Focus(), d.copiesCmd())
		}
	case recFile:
		switch {
		case key.Matches(msg, k.Back):
			d.leaveInput(recPlan)
			return nil
		case key.Matches(msg, k.Select):
			path := strings.TrimSpace(d.input.Value())
			if path == "" {
				d.hint = "type the path of a local snapshot copy, or esc to go back"
				return nil
			}
			d.leaveInput(recPlanning)
			d.offers[d.cursor].SnapshotFile = path
			d.plan, d.err, d.failure = nil, nil, nil
			return d.planCmd(d.offers[d.cursor])
		}
		var cmd tea.Cmd
		d.input, cmd = d.input.Update(msg)
		return cmd
	case recConfirm:
		switch {
		case key.Matches(msg, k.Back):
			d.leaveInput(recPlan)
			b, p := d.backend, d.plan
			return func() tea.Msg {
				// The audit log's own failure is in the console's log: the
				// dialog has gone back to the plan, and nothing was changed.
				if err := b.notConfirmed(context.Background(), p, "the operator went back from the typed confirmation"); err != nil {
					klog.Errorf("recording the recovery not confirmed: %v", err)
				}
				return nil
			}
		case key.Matches(msg, k.Select):
			if !d.plan.ConfirmMatches(d.input.Value()) {
				d.hint = fmt.Sprintf("type %q exactly to run it, or esc to go back", d.plan.Confirm)
				return nil
			}
			d.input.Blur()
			d.stage, d.offset, d.follow = recRunning, 0, true
			return d.runCmd()
		}
		var cmd tea.Cmd
		d.input, cmd = d.input.Update(msg)
		return cmd
	case recDone:
		if key.Matches(msg, k.Back) || key.Matches(msg, k.Select) {
			return CloseDialog
		}
	}
	// Planning, dry-running and running take no keys: the work is under
	// way and resumable; ctrl-c still quits through the App.
	return nil
}

// confirmPlaceholder is what the empty confirmation input shows: the kind
// of name to type ("etcdadmcluster name"), never the name itself, which the
// prompt above gives. Where the placeholder is not dimmed (NO_COLOR, the
// mono theme) the name itself read as already typed.
func confirmPlaceholder(object string) string {
	kind, _, _ := strings.Cut(strings.TrimSpace(object), " ")
	if kind == "" {
		return "name"
	}
	return strings.ToLower(kind) + " name"
}

// leaveInput ends the typing of a stage (the file, the confirmation): the
// next stage that types starts from an empty input.
func (d *recoveryDialog) leaveInput(next recStage) {
	d.input.Blur()
	d.input.SetValue("")
	d.stage, d.hint = next, ""
}

// fileOffered says whether the plan stage offers a local snapshot copy: for
// an etcd rollback refused for want of the snapshot ConfigMap, or one whose
// file the operator gave and the planner did not accept.
func (d *recoveryDialog) fileOffered() bool {
	if d.o.ReadOnly || d.stage != recPlan || d.offers[d.cursor].Action != recovery.ActionEtcdRollback || d.err == nil {
		return false
	}
	if d.offers[d.cursor].SnapshotFile != "" {
		return true
	}
	var refused *recovery.RefusedError
	if !errors.As(d.err, &refused) {
		return false
	}
	for _, p := range refused.Failed() {
		if p.Name == "snapshot" {
			return true
		}
	}
	return false
}

func (d *recoveryDialog) copiesCmd() tea.Cmd {
	b := d.backend
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		copies, err := b.snapshotCopies(ctx)
		return recCopiesMsg{copies: copies, err: err}
	}
}

func (d *recoveryDialog) planCmd(o recovery.Offer) tea.Cmd {
	b := d.backend
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		p, f, err := b.plan(ctx, o)
		return recPlanMsg{plan: p, failure: f, err: err}
	}
}

func (d *recoveryDialog) dryRunCmd() tea.Cmd {
	b, p := d.backend, d.plan
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		rep, err := b.dryRun(ctx, p)
		return recDryMsg{rep: rep, err: err}
	}
}

// runCmd runs the plan in a command; each step's progress is sent on a
// channel that waitRecStep reads one message at a time.
//
// The run's context is the dialog's to cancel (interrupt): ctrl+c during a
// run stops it where the recovery package can record it, instead of the
// App's quit ending the process under a write with no audit end and the
// lock left held.
func (d *recoveryDialog) runCmd() tea.Cmd {
	ch := make(chan recovery.StepResult, 2*len(d.plan.Steps)+2)
	b, p := d.backend, d.plan
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	d.cancel, d.stopping, d.ran = cancel, false, ran
	run := func() tea.Msg {
		defer cancel()
		rep, err := b.run(ctx, p, func(r recovery.StepResult) { ch <- r })
		close(ch)
		ran <- err
		return recDoneMsg{rep: rep, err: err}
	}
	return tea.Batch(run, waitRecStep(ch))
}

// interrupt answers ctrl+c. While a run is under way it cancels the run and
// keeps the dialog open, so that the operator sees where it stopped (the
// audit log has it, and the menu resumes it); handled is false otherwise,
// and the App quits.
func (d *recoveryDialog) interrupt() (cmd tea.Cmd, handled bool) {
	if d.stage != recRunning || d.cancel == nil {
		return nil, false
	}
	d.stopping = true
	d.cancel()
	return nil, true
}

// busy says whether a run is under way: the App holds a quit that waits
// for the upgrade's end (--exit-on-done) until it has ended.
func (d *recoveryDialog) busy() bool { return d.stage == recRunning }

// suspendRefused: a run writes to the cluster step by step under its own
// upgrade lock. Stopped mid-run, its lock goes unrenewed and turns stale,
// another console may take it and act, and the step under way, when the
// console resumes, writes on a cluster that moved. ctrl+c stops a run at
// a step's end instead.
func (d *recoveryDialog) suspendRefused() string {
	if !d.busy() {
		return ""
	}
	return "ctrl+z: not while the recovery action runs (it writes under its own upgrade lock); ctrl+c stops it after the step under way"
}

// runEndLimit bounds the wait for a run stopped by the program's end: the
// step under way runs to its end (at most a minute for a write), then the
// run records its stop and gives the lock back.
const runEndLimit = 2 * time.Minute

// atEnd settles the dialog once the program has ended, whatever ended it (a
// signal, --timeout, --exit-on-done, ctrl+c at the confirmation): a run
// under way is stopped and waited for, so that its end and the lock's
// release are recorded before the process exits, and a typed confirmation
// left open is recorded not confirmed, as the command line records it. The
// note says what became of the action, for the terminal the UI gave back.
func (d *recoveryDialog) atEnd(ctx context.Context, wait time.Duration) (note string, err error) {
	switch {
	case d.stage == recConfirm && d.plan != nil:
		if err := d.backend.notConfirmed(ctx, d.plan, "the console ended at the typed confirmation"); err != nil {
			return "", err
		}
		return "", &RecoveryNotConfirmedError{Action: d.plan.Action}
	case d.stage != recRunning || d.ran == nil:
		return "", nil
	}
	title := "the recovery action"
	if d.plan != nil {
		title = d.plan.Action
	}
	var ranErr error
	select {
	case ranErr = <-d.ran:
	default:
		d.cancel()
		select {
		case ranErr = <-d.ran:
		case <-time.After(wait):
			return "", &RecoveryCutError{Action: title, says: fmt.Sprintf("%s was still running %s after the console ended; the audit log has its steps so far (upgrade-console audit); run it again to continue", title, wait)}
		}
	}
	if ranErr == nil {
		return fmt.Sprintf("%s finished as the console ended (upgrade-console audit has its steps)", title), nil
	}
	return "", &RecoveryCutError{Action: title, says: fmt.Sprintf("%s was stopped as the console ended: the step under way ran to its end, and the audit log records where it stopped (upgrade-console audit); run it again to continue", title)}
}

// RecoveryCutError says that the program's end stopped a recovery action
// run from the dashboard before its end: the console exits as the headless
// command interrupted does (5), not 0, so that a script wrapping the
// dashboard can tell the action is half done. It is said once, as the
// command's error, not also as a note.
type RecoveryCutError struct {
	Action string
	says   string
}

func (e *RecoveryCutError) Error() string {
	if e.says != "" {
		return e.says
	}
	return e.Action + " was stopped before its end as the console ended: run it again to continue"
}

// RecoveryNotConfirmedError says that the program ended at a recovery
// action's typed confirmation (ctrl+c, a signal, --timeout): the command
// exits as the headless command not confirmed does (1), not 0.
type RecoveryNotConfirmedError struct{ Action string }

func (e *RecoveryNotConfirmedError) Error() string {
	return "confirmation: the console ended at the typed confirmation of " + e.Action + ": nothing was changed (recorded as not-confirmed)"
}

// waitRecStep reads the next step result. The dialog asks for the one
// after once this one is in (recStepMsg): results read ahead, each in a
// command of its own (a batch), reached the dialog in any order, and a
// step's "running" that overtook its "done" left a finished write shown
// as running, beside the wait step after it, for as long as that took.
func waitRecStep(ch <-chan recovery.StepResult) tea.Cmd {
	return func() tea.Msg {
		r, ok := <-ch
		if !ok {
			return nil
		}
		return recStepMsg{r: r, ch: ch}
	}
}

// cluster is the cluster's name, "" when not known.
func (d *recoveryDialog) cluster() string {
	if d.o.Env == nil {
		return ""
	}
	return d.o.Env.Cluster
}

// bodyLines are the stage's lines under the title, and the commands in
// the text they wrap, whole.
func (d *recoveryDialog) bodyLines() (body []line, cmds []string) {
	iw := d.innerWidth()
	add := func(segs ...seg) { body = append(body, line{segs: segs}) }
	wrapAdd := func(text string, r role, indent string) {
		for _, l := range wrap(text, iw-width(indent)) {
			add(seg{indent + l, r})
		}
		cmds = addCommandsOf(cmds, text)
	}
	cluster := d.cluster()
	switch d.stage {
	case recMenu:
		d.selFrom, d.selTo, d.offerEnds = 0, 0, d.offerEnds[:0]
		if len(d.offers) == 0 {
			wrapAdd(d.nothing, rText, "")
		}
		for i, o := range d.offers {
			mark, r := "  ", rText
			if i == d.cursor {
				mark, r = "› ", rSelected
				d.selFrom = len(body)
			}
			add(seg{mark + offerTitle(o, iw-width(mark)), r})
			// Wrapped: cut at 80 columns, "kept when it sto…" lost why
			// the lock was kept, and the member's creation time.
			for _, l := range wrap(o.Why, iw-4) {
				add(seg{"    " + l, rMuted})
			}
			if i == d.cursor {
				d.selTo = len(body)
			}
			d.offerEnds = append(d.offerEnds, len(body))
		}
	case recPlanning:
		add(seg{"reading the cluster and the pre-upgrade snapshot…", rMuted})
	case recPlan, recDryRunning, recConfirm:
		d.planLines(add, wrapAdd)
	case recRunning, recDone:
		d.runLines(add, wrapAdd, func() int { return len(body) })
	case recFile:
		d.fileLines(add, wrapAdd, cluster)
	}
	return body, cmds
}

// offerTitle is offer o's entry in the menu, in w cells where it can be.
// Cut at the edge, a node retry's read "Retry the in-place upgrade of…" at
// 40 columns (of a worker's long name at 60): two failed nodes' offers
// read the same, and the node, what tells them apart, was the part cut.
// Its shorter forms keep the node, cut in its middle where even "Retry
// <node>" does not fit: its group at its start, the machine's suffix at
// its end. The other offers name no object (one of each at most) and fit
// at 40 columns.
func offerTitle(o recovery.Offer, w int) string {
	if width(o.Title) <= w || o.Action != recovery.ActionNodeRetry || o.Node == "" {
		return o.Title
	}
	for _, t := range []string{"Retry in-place upgrade of node " + o.Node, "Retry node " + o.Node, "Retry " + o.Node} {
		if width(t) <= w {
			return t
		}
	}
	return "Retry " + cutMiddle(o.Node, w-width("Retry "))
}

// tail is what goes under the body: the prompt of a stage that reads text
// (promptAt is the first row of what it asks for, inputAt the row of its
// input, both -1 when none), then the keys.
//
// The prompt wraps: cut at the width, it lost the very name to type (a
// Lease's is 16 cells longer than its cluster's).
func (d *recoveryDialog) tail() (tail []line, promptAt, inputAt int) {
	promptAt, inputAt = -1, -1
	iw := d.innerWidth()
	wrapped := func(text string, r role) {
		for _, l := range wrap(text, iw) {
			tail = append(tail, line{segs: []seg{{l, r}}})
		}
	}
	// On a dialog too short for the error's sentence, its short form
	// takes one row.
	hint := d.hint
	if d.stage == recConfirm {
		tail = append(tail, line{})
		wrapped("The API server accepted every write (dry run, nothing persisted).", rCondTrue)
		promptAt = len(tail)
		wrapped(fmt.Sprintf("Type %q (%s) to run it:", d.plan.Confirm, d.plan.ConfirmObject), rBold)
		inputAt = len(tail)
		tail = append(tail, line{})
		if hint != "" && d.tight >= 2 {
			// One row: the prompt's first, in view above, names it.
			hint = fmt.Sprintf("type %q exactly", d.plan.Confirm)
			if width(hint) > iw {
				hint = "not that name: type it exactly"
			}
		}
		wrapped(hint, rFailure)
	}
	if d.stage == recFile {
		tail = append(tail, line{})
		promptAt = len(tail)
		tail = append(tail, line{segs: []seg{{"Snapshot file:", rBold}}})
		inputAt = len(tail)
		tail = append(tail, line{})
		if hint != "" && d.tight >= 2 {
			hint = "type a snapshot file's path"
		}
		wrapped(hint, rFailure)
	}
	return tail, promptAt, inputAt
}

// dialogHead is the title and the blank line under it.
const dialogHead = 2

// headRows and gapRows are the rows of the title and of the blank line
// above the keys at d.tight.
func (d *recoveryDialog) headRows() int { return max(dialogHead-d.tight, 0) }
func (d *recoveryDialog) gapRows() int  { return max(1-d.tight, 0) }

// relayout lays the stage's body out for the size and sets the scroll
// bounds the keys use, so that View only paints.
func (d *recoveryDialog) relayout() {
	d.body, d.cmds = d.bodyLines()
	// The prompt and the keys (two rows, or the blank and the full help)
	// stay in view; the body scrolls. One row at least: three pushed a
	// short dialog past the screen, whose top (the title, the action
	// confirmed) the App then cut.
	//
	// Where the prompt leaves the body no row (40x14: the typed
	// confirmation's two sentences take five at 40 columns), its text
	// scrolls with the body, and the input under it and the keys stay:
	// fixed, it pushed the dialog two rows past the screen, which cut the
	// title. It opens scrolled to what it asks for ("Type "mgmt-etcd"
	// (EtcdadmCluster …"), or to its end where that is in view from
	// there too. Shorter still, on any stage, the frame goes, a step at
	// a time: the keys and the full help count their rows at each step,
	// as a run's keys take a short form and the help has the rows the
	// frame gave up.
	var tail []line
	var promptAt, inputAt int
	folded := false
	wasTight := d.tight
	for d.tight = 0; ; d.tight++ {
		help := d.helpRows()
		rows := d.keyRows(d.innerWidth())
		keys := len(help)
		if keys == 0 {
			keys = len(rows)
		}
		tail, promptAt, inputAt = d.tail()
		d.visible = d.h - 2 - d.headRows() - len(tail) - d.gapRows() - keys
		folded = d.visible < 1 && inputAt > 0
		if folded {
			d.visible += inputAt
		}
		// A body taller than its rows has its rows out of view counted
		// (the menu counts its own): where even the bare count does not
		// fit beside the keys, it takes a row of the body's. Dropped
		// there, the run's end at 40x10 showed its last two rows, cut
		// with no sign.
		n := len(d.body)
		if folded {
			n += inputAt
		}
		d.countRow = help == nil && d.stage != recMenu && n > d.visible && !d.countFits(rows, n)
		if d.countRow {
			d.visible--
		}
		if d.visible >= 1 || d.tight == 2 {
			break
		}
	}
	anchor := len(d.body) + promptAt
	if folded {
		d.body = append(d.body, tail[:inputAt]...)
	}
	d.visible = max(d.visible, 1)
	d.maxOffset = max(len(d.body)-d.visible, 0)
	if d.follow {
		d.offset = d.followed()
	}
	d.helpOffset = min(max(d.helpOffset, 0), d.helpMaxOffset())
	// Folded now, or the frame gave up more (a resize to fewer rows): the
	// offset the body had kept a row of the plan in view, not the
	// prompt's first, which names what to type.
	if folded && (!d.promptFolded || d.tight > wasTight) {
		d.offset = min(anchor, d.maxOffset)
	}
	d.promptFolded = folded
	if d.stage == recMenu {
		// ↑/↓ choose an offer here: the chosen one stays in view.
		// Taller than the lines in view (the full help shown, a small
		// screen), the view stays within it, from its first line (the
		// action enter plans, where a newly chosen offer opens) to its
		// last, which ↑/↓ and pgup/pgdn reach.
		first, last := d.selTo-d.visible, d.selFrom
		if d.offerCut() {
			first, last = last, first
		}
		d.offset = min(max(d.offset, first), last)
	}
	d.offset = min(max(d.offset, 0), d.maxOffset)
}

// scrollTo moves the body's view to off, within its bounds. Scrolled away
// from where following puts it, a run's view stays where the operator took
// it; brought back there, it follows again, as a log viewer does once its
// end is back in view: left off for good, one look at the steps done
// cost the operator the step under way for the rest of a run that can
// wait fifteen minutes.
func (d *recoveryDialog) scrollTo(off int) {
	d.offset = min(max(off, 0), d.maxOffset)
	d.follow = (d.stage == recRunning || d.stage == recDone) && d.offset == d.followed()
}

// followed is the offset that keeps in view what a run has under way: the
// step under way whole, at the view's foot beneath the steps done before
// it, or its first rows where it is taller than the view; at the run's end
// the result from its first line, as the other stages open at their
// start. The body's end, followed before, was at 40x10 the last step's
// title, not yet begun, and at the end the last rows of the closing
// message, its first out of view.
func (d *recoveryDialog) followed() int {
	switch {
	case d.stage == recDone && d.resultAt >= 0:
		return min(d.resultAt, d.maxOffset)
	case d.stage == recRunning && d.stepFrom >= 0:
		return min(d.stepFrom, max(d.stepTo-d.visible, 0), d.maxOffset)
	}
	return d.maxOffset
}

// countFits says whether the shortest count of a body of n rows ("12↑ 0↓",
// each count as wide as n) fits beside the keys on their last row, before
// q quit, as View puts it.
func (d *recoveryDialog) countFits(rows [][]string, n int) bool {
	if len(rows) == 0 {
		return false
	}
	digits := len(fmt.Sprint(n))
	count := strings.Repeat("9", digits) + "↑ " + strings.Repeat("9", digits) + "↓"
	return width(strings.Join(append(slices.Clone(rows[len(rows)-1]), count), " · ")) <= d.innerWidth()
}

// offersOutOfView counts the menu's offers wholly above and wholly below
// the lines in view.
func (d *recoveryDialog) offersOutOfView() (above, below int) {
	start := 0
	for _, end := range d.offerEnds {
		switch {
		case end <= d.offset:
			above++
		case start >= d.offset+d.visible:
			below++
		}
		start = end
	}
	return above, below
}

// offerCut says whether the menu's chosen offer is taller than the rows in
// view (40x10: its title alone is): ↑/↓ and pgup/pgdn scroll through it,
// and the footer counts its rows out of view.
func (d *recoveryDialog) offerCut() bool {
	return d.stage == recMenu && d.selTo-d.selFrom > d.visible
}

// offerStart is the body line of offer i's title.
func (d *recoveryDialog) offerStart(i int) int {
	if i == 0 || i > len(d.offerEnds) {
		return 0
	}
	return d.offerEnds[i-1]
}

func (d *recoveryDialog) View() string {
	st := d.st
	iw := d.innerWidth()
	head := []line{{segs: []seg{{"Recovery", rTitle}, {"  " + d.cluster(), rCluster}}}, {}}[:d.headRows()]
	body, cmds := d.body, d.cmds
	tail, _, inputAt := d.tail()
	if d.promptFolded {
		// The prompt's text is the body's end (relayout).
		tail, inputAt = tail[inputAt:], 0
	}
	rows := d.keyRows(iw)
	// What is said beside the keys goes on their last row, before q quit,
	// and only where it fits there: the rows relayout counted stay.
	last := len(rows) - 1
	at := len(rows[last])
	if d.quits() {
		at--
	}
	if d.countRow {
		// The count's own row (relayout), under the keys.
		rows = append(rows, nil)
		last, at = last+1, 0
	}
	fits := func(row []string) bool { return width(strings.Join(row, " · ")) <= iw }
	insert := func(piece string) bool {
		row := slices.Insert(slices.Clone(rows[last]), at, piece)
		if !fits(row) {
			return false
		}
		rows[last], at = row, at+1
		return true
	}
	if d.maxOffset > 0 {
		body = body[d.offset:min(d.offset+d.visible, len(body))]
	}
	// Rows out of view, and the keys that reach them: down to the bare
	// counts. At 40 columns beside "enter run · esc back" the typed
	// confirmation hid the steps below it with no sign, when the counts
	// had two digits (D10).
	scrolled := func(above, below int) {
		_ = insert(fmt.Sprintf("↑/↓/%s/%s (%d above, %d below)", d.keys.PageUp.Help().Key, d.keys.PageDown.Help().Key, above, below)) ||
			insert("↑/↓ "+countsText(above, below)) || insert(countsText(above, below))
	}
	// The stage's last key, beside which the menu counts its offers: the
	// rows of a cut offer go after it.
	stageKey := at - 1
	above, below := d.offersOutOfView()
	// countOffers counts the offers out of view, the way the operator
	// moves through the menu, beside the stage's last key; shorter where
	// the width would cut q quit, and false where even that does not fit.
	countOffers := func() bool {
		if stageKey < 0 {
			return false // q quit alone on the last row: no key to count beside
		}
		long, short := []string{}, []string{}
		if above > 0 {
			long, short = append(long, fmt.Sprintf("%d %s", above, plural(above, "offer above", "offers above"))), append(short, fmt.Sprintf("%d↑", above))
		}
		if below > 0 {
			long, short = append(long, fmt.Sprintf("%d %s", below, plural(below, "offer below", "offers below"))), append(short, fmt.Sprintf("%d↓", below))
		}
		for _, more := range []string{" (" + strings.Join(long, ", ") + ")", " (" + strings.Join(short, " ") + ")"} {
			row := slices.Clone(rows[last])
			row[stageKey] += more
			if fits(row) {
				rows[last] = row
				return true
			}
		}
		return false
	}
	switch {
	case d.maxOffset > 0 && d.stage == recMenu:
		// A cut offer's own rows out of view are counted as the other
		// stages count the body's (at 40x10 the one offer's title
		// showed, its reason cut with no sign of it), said before the
		// offers, which take what room is left. Where the offers out
		// of view cannot be counted beside it (40 columns), the one
		// count is of the menu's rows out of view, theirs with them,
		// which ↑/↓ go through: it counted the chosen offer's alone,
		// and "0↑ 5↓" hid the two offers below.
		kept, keptAt := slices.Clone(rows[last]), at
		if d.offerCut() {
			scrolled(d.offset-d.selFrom, d.selTo-d.offset-d.visible)
		}
		// Every offer in view, at least in part, leaves none to count
		// (the count read "esc close ()").
		if above+below > 0 && !countOffers() {
			rows[last], at = kept, keptAt
			scrolled(d.offset, d.maxOffset-d.offset)
		}
	case d.maxOffset > 0:
		scrolled(d.offset, d.maxOffset-d.offset)
	}
	if len(cmds) > 0 && !d.typing() {
		// Shorter, or left out, where the width would cut the footer.
		if !insert("y copy command") {
			insert("y copy")
		}
	}
	if !d.typing() {
		insert("? help")
	}
	if d.gapRows() > 0 {
		tail = append(tail, line{})
	}
	helpRows := d.helpRows()
	if helpRows == nil {
		for _, r := range rows {
			tail = append(tail, line{segs: []seg{{strings.Join(r, " · "), rMuted}}})
		}
	}

	var b strings.Builder
	n := 0
	emit := func(l line) {
		if n > 0 {
			b.WriteByte('\n')
		}
		n++
		st.paintSegs(&b, l.segs, iw)
	}
	for _, l := range head {
		emit(l)
	}
	for _, l := range body {
		emit(l)
	}
	for i, l := range tail {
		if i == inputAt {
			b.WriteByte('\n')
			b.WriteString(fit(d.input.View(), iw))
			continue
		}
		emit(l)
	}
	for _, r := range helpRows {
		b.WriteByte('\n')
		b.WriteString(fit(r, iw))
	}
	return st.th.Dialog.Render(b.String())
}

// fileLines explains the file stage and lists the local copies this machine
// keeps, and says those named for the cluster that are another's.
func (d *recoveryDialog) fileLines(add func(...seg), wrapAdd func(string, role, string), cluster string) {
	if cluster == "" {
		cluster = "the cluster"
	}
	add(seg{"Restore from a local copy of the pre-upgrade snapshot", rBold})
	for _, l := range wrapWords("As `etcd rollback --snapshot-file` does. Each upgrade writes a copy beside its snapshot ConfigMap, on the machine that ran it. The file is read before the cluster: it must be a snapshot of "+cluster+", and nothing is written before the dry run.", d.innerWidth()) {
		add(seg{l, rText})
	}
	add()
	switch {
	case d.copiesErr != nil:
		wrapAdd(errText(d.copiesErr), rFailure, "")
	case len(d.copies.Paths) == 0:
		wrapAdd("No local copy of "+cluster+"'s snapshots on this machine: give the path of one copied from the machine that ran the upgrade.", rMuted, "")
	default:
		add(seg{"Local copies on this machine, newest first:", rMuted})
		for _, c := range d.copies.Paths {
			wrapAdd(c, rText, "  ")
		}
	}
	// Copies of another cluster of the same name (a management cluster
	// made again, another one called mgmt): "no local copy" beside them
	// sent the operator to look elsewhere, or to doubt the console.
	if head, whose := d.copies.PassedOver(cluster); d.copiesErr == nil && head != "" {
		add()
		wrapAdd(head+":", rMuted, "")
		for _, w := range whose {
			wrapAdd(w, rText, "  ")
		}
	}
}

// runLines shows the steps as they run and, at the end, the closing message
// or the failure.
//
// It notes where the step under way and the result begin (at is the body's
// length so far), which the view follows.
func (d *recoveryDialog) runLines(add func(...seg), wrapAdd func(string, role, string), at func() int) {
	sym := d.st.th.Sym
	d.stepFrom, d.stepTo, d.resultAt = -1, -1, -1
	if d.plan != nil {
		wrapAdd(d.plan.Title, rBold, "")
		add()
		for i, s := range d.plan.Steps {
			r, ok := d.steps[i]
			mark, rl := sym.Pending, rPhasePending
			detail := ""
			if ok {
				switch r.Status {
				case recovery.StepRunning:
					mark, rl = sym.Active, rPhaseActive
				case recovery.StepDone, recovery.StepAlreadyDone:
					mark, rl, detail = sym.OK, rPhaseDone, string(r.Status)
				case recovery.StepFailed:
					mark, rl, detail = sym.Fail, rPhaseFailed, "failed"
				}
			}
			from := at()
			for _, l := range wrapTagged(fmt.Sprintf("%s %d. ", mark, i+1), s.Title, rl, "", rl, d.innerWidth()) {
				add(l.segs...)
			}
			if ok && r.Status == recovery.StepRunning && d.stage == recRunning && !d.stepSince.IsZero() {
				what := "running"
				if s.Wait {
					what = "waiting for the cluster"
				}
				wrapAdd(what+" since "+d.stepSince.Format("15:04:05"), rMuted, "     ")
			}
			if ok && r.Status != recovery.StepRunning {
				text := detail
				if r.Err != nil {
					text += ": " + errText(r.Err)
				} else if r.Detail != "" {
					text += ": " + r.Detail
				}
				wrapAdd(text, rMuted, "     ")
			}
			if ok {
				d.stepFrom, d.stepTo = from, at()
			}
		}
	}
	if d.stage == recDone {
		add()
		d.resultAt = at()
		if d.err != nil {
			if d.stopping {
				wrapAdd("Stopped by ctrl+c; the audit log records where.", rFailure, "")
			}
			wrapAdd(errText(d.err), rFailure, "")
			var ns *recovery.NotStartedError
			switch {
			case d.done.Refused(d.err):
				wrapAdd("Refused, nothing was written: open the recovery menu again for a plan of the cluster as it is now.", rMuted, "")
			case errors.As(d.err, &ns):
				wrapAdd("Nothing was written: the audit log refused the run's first entry. Fix the log (above), then open the recovery menu again.", rMuted, "")
			default:
				wrapAdd("The action is resumable: open the recovery menu again to continue from where the cluster is.", rMuted, "")
			}
		} else {
			for _, l := range d.done.Closing {
				wrapAdd(l, rText, "")
			}
		}
	}
}

// planLines shows the plan (or why the action is refused), the dry run and
// the confirmation prompt.
func (d *recoveryDialog) planLines(add func(...seg), wrapAdd func(string, role, string)) {
	sym := d.st.th.Sym
	if f := d.failure; f != nil && f.Step != "" {
		// Wrapped, all of it: cut at the width, the cause was lost
		// ("…in the namespace…"), and with it what to fix.
		iw := d.innerWidth()
		heading := "Node " + f.Node + ": step " + f.Step + " failed (container " + f.Container + ")"
		source := "last lines (" + f.LogSource + "):"
		above := len(wrap(heading, iw)) + len(wrap(f.Reason, iw-2)) + len(wrap(source, iw-2))
		wrapAdd(heading, rFailure, "")
		wrapAdd(f.Reason, rText, "  ")
		if f.ContainerState != "" {
			above += len(wrap(f.ContainerState, iw-2))
			wrapAdd(f.ContainerState, rText, "  ")
		}
		if len(f.Log) > 0 {
			wrapAdd(source, rMuted, "  ")
			const bar = "  │ "
			rows, note := logTail(f.Log, iw-width(bar), d.logRows(above))
			if note != "" {
				add(seg{bar + note, rMuted})
			}
			for _, r := range rows {
				add(seg{bar + r, rText})
			}
		} else if f.LogError != "" {
			wrapAdd(f.LogError, rMuted, "  ")
		}
		add()
	}
	var refused *recovery.RefusedError
	switch {
	case errors.As(d.err, &refused):
		add(seg{"Not possible now:", rFailure})
		for _, p := range refused.Preconditions {
			mark, r := sym.OK, rCondTrue
			if !p.OK {
				mark, r = sym.Fail, rSevError
			}
			wrapAdd(mark+" "+p.Name+": "+p.Detail, r, "  ")
		}
		if d.fileOffered() {
			add()
			wrapAdd("Press f to restore from a local copy of the snapshot instead.", rText, "")
		}
		return
	case d.err != nil && d.stage == recPlan && d.plan != nil && len(d.dry.Steps) > 0:
		wrapAdd("The dry run failed; nothing was changed: "+errText(d.err), rFailure, "")
	case d.err != nil:
		wrapAdd(errText(d.err), rFailure, "")
		if d.fileOffered() {
			add()
			wrapAdd("Press f to give another snapshot file.", rText, "")
		}
		return
	}
	p := d.plan
	if p == nil {
		return
	}
	wrapAdd(p.Title, rBold, "")
	if d.allDone {
		add()
		wrapAdd("Nothing to do: the dry run found every step already done; nothing was changed (the dry run is recorded in the audit log).", rCondTrue, "")
		return
	}
	if len(p.Steps) == 0 {
		add(seg{"Nothing to do.", rText})
		for _, n := range p.Notes {
			wrapAdd(n, rMuted, "  ")
		}
		return
	}
	// The preconditions held (the planner refuses otherwise): one line
	// names them; the headless command prints each with what was found.
	if n := len(p.Preconditions); n > 0 {
		names := make([]string, 0, n)
		for _, c := range p.Preconditions {
			names = append(names, c.Name)
		}
		wrapAdd(fmt.Sprintf("%s %d preconditions hold: %s", sym.OK, n, strings.Join(names, ", ")), rCondTrue, "")
	}
	add()
	for i, s := range p.Steps {
		status := ""
		if i < len(d.dry.Steps) {
			status = "  [" + string(d.dry.Steps[i].Status) + "]"
		}
		for _, l := range wrapTagged(fmt.Sprintf("%d. ", i+1), s.Title, rText, status, rMuted, d.innerWidth()) {
			add(l.segs...)
		}
		// Whole: the operator confirms exactly this change. The body
		// scrolls when the plan is taller than the dialog.
		for _, l := range wrap(s.Object+": "+s.Change, d.innerWidth()-3) {
			add(seg{"   " + l, rMuted})
		}
	}
	for _, n := range p.Notes {
		wrapAdd("note: "+n, rMuted, "")
	}
	switch d.stage {
	case recDryRunning:
		add()
		add(seg{"server-side dry run…", rMuted})
	}
}

// logRows is how many rows the failing container's log may take, under
// the failure's other rows (above): what the dialog shows of its body when
// the plan opens, so that the failure, the log's end and its error with
// it, is in view whole, and the plan a scroll away. The same in every
// stage: the confirmation's prompt takes more rows, and the log would
// change as it opens. Border, title and keys take 6 rows (the blank line
// under the log goes below, with the plan).
func (d *recoveryDialog) logRows(above int) int {
	return max(d.h-6-above, 4)
}

// logTail wraps log lines to w cells and keeps the last rows that fit in n:
// a container's last lines hold its error. When lines are left out, note
// says how many (it takes one of the n rows).
func logTail(log []string, w, n int) (rows []string, note string) {
	w, n = max(w, 10), max(n, 2)
	var kept [][]string // from the last line up
	used, k := 0, len(log)
	for k > 0 {
		r := wrapLogLine(log[k-1], w)
		need := used + len(r)
		if k > 1 {
			need++ // the note, for the lines before this one
		}
		if need > n {
			break
		}
		kept, used, k = append(kept, r), used+len(r), k-1
	}
	partial := false
	if len(kept) == 0 {
		// Even the last line alone is taller: its end.
		r := wrapLogLine(log[k-1], w)
		kept, k, partial = [][]string{r[len(r)-(n-1):]}, k-1, true
	}
	for i := len(kept) - 1; i >= 0; i-- {
		rows = append(rows, kept[i]...)
	}
	switch {
	case partial && k > 0:
		note = fmt.Sprintf("… %d earlier %s and the start of the last left out", k, plural(k, "line", "lines"))
	case partial:
		note = "… the start of the line left out"
	case k > 0:
		note = fmt.Sprintf("… %d earlier %s left out", k, plural(k, "line", "lines"))
	}
	// In a narrow dialog kubeadm's own error ("[upgrade/health] FATAL:
	// …") was among the lines left out, and the rows kept only said that
	// the container exited: the note's row shows it instead of the count,
	// its "…" saying that lines are left out.
	for i := k - 1; i >= 0; i-- {
		if l := strings.TrimSpace(ansi.Strip(log[i])); errorLine.MatchString(l) {
			if long := note + "; the last error: "; w-width(long) >= 20 {
				note = ansi.Truncate(long+l, w, "…")
			} else {
				note = ansi.Truncate("… "+l, w, "…")
			}
			break
		}
	}
	return rows, note
}

// errorLine is a log line that states an error: kubeadm's [ERROR …] and
// FATAL lines, and "error:" (not its "To see the stack trace of this
// error …").
var errorLine = regexp.MustCompile(`\[ERROR|FATAL|(?i:\berror:)`)

// wrapLogLine wraps one log line to w cells, its indentation (a tab is two
// cells) kept on every row. Escape sequences are dropped: the log is the
// container's, and its colours are not the theme's.
func wrapLogLine(l string, w int) []string {
	l = strings.TrimRight(ansi.Strip(l), " \t\r")
	body := strings.TrimLeft(l, " \t")
	lead := strings.ReplaceAll(l[:len(l)-len(body)], "\t", "  ")
	lead = spaces(min(width(lead), w/2))
	rows := wrap(body, w-width(lead))
	for i := range rows {
		rows[i] = lead + rows[i]
	}
	return rows
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// wrapTagged wraps text to w cells after a prefix (its continuation lines
// indented to match) and ends it with tag: on the last line when it fits
// there, else on a line of its own. Cut instead, a long step title took the
// dry run's result after it off the screen.
func wrapTagged(prefix, text string, r role, tag string, tr role, w int) []line {
	indent := spaces(width(prefix))
	ls := wrap(text, max(w-width(prefix), 10))
	out := make([]line, 0, len(ls)+1)
	for i, l := range ls {
		p := indent
		if i == 0 {
			p = prefix
		}
		out = append(out, line{segs: []seg{{p + l, r}}})
	}
	if tag == "" {
		return out
	}
	last := &out[len(out)-1]
	if segsWidth(last.segs)+width(tag) <= w {
		last.segs = append(last.segs, seg{tag, tr})
	} else {
		out = append(out, line{segs: []seg{{indent + strings.TrimLeft(tag, " "), tr}}})
	}
	return out
}

// quits says whether q quits the console in this stage: one that reads no
// text and runs nothing.
func (d *recoveryDialog) quits() bool {
	return d.stage == recMenu || d.stage == recPlan || d.stage == recDone
}

// keyRows lays the footer's keys out in rows of at most iw cells: the
// stage's keys, then q quit where it quits, each row taking as many as fit
// (a key's text wider than the dialog wraps at its words). On one row at
// 40 columns the dialog's edge cut esc close and q quit, the keys that
// leave. relayout counts the rows, View adds to the last one what fits.
func (d *recoveryDialog) keyRows(iw int) [][]string {
	keys := strings.Split(d.footer(), " · ")
	if d.quits() {
		keys = append(keys, "q quit")
	}
	var rows [][]string
	for _, k := range keys {
		if n := len(rows); n > 0 && width(strings.Join(rows[n-1], " · ")+" · "+k) <= iw {
			rows[n-1] = append(rows[n-1], k)
			continue
		}
		for _, l := range wrapWords(k, iw) {
			rows = append(rows, []string{l})
		}
	}
	return rows
}

func (d *recoveryDialog) footer() string {
	switch d.stage {
	case recMenu:
		if len(d.offers) == 0 {
			return "esc close"
		}
		if d.offerCut() {
			// ↑/↓ go through the cut offer's rows before they choose
			// another: "choose" named a key that did not.
			return "↑/↓ scroll · enter plan · esc close"
		}
		return "↑/↓ choose · enter plan · esc close"
	case recPlan:
		if d.runnable() {
			return "enter dry run · esc back"
		}
		if d.o.ReadOnly {
			return "read-only: plan only · esc back"
		}
		if d.fileOffered() {
			return "f snapshot file · esc back"
		}
		return "esc back"
	case recFile:
		return "enter plan · esc back"
	case recConfirm:
		return "enter run · esc back"
	case recDone:
		return "enter/esc close"
	case recRunning:
		// On a dialog short of rows (tight), one row at 40 columns (32
		// cells): the long forms took three, and left the steps none
		// beside the title. The full help, the hidden line and the
		// closing text say the rest.
		switch {
		case d.stopping && d.tight > 0:
			return "stopping after this step…"
		case d.stopping:
			return "stopping: the step under way ends, then the run is recorded as interrupted…"
		case d.tight > 0:
			return "running · esc hide · ctrl+c stop"
		}
		return "working… · esc hide (R shows it) · ctrl+c stop (the run is recorded and can be resumed)"
	}
	return "working…"
}

// hiddenLine is what the screen's last line says while the dialog is set
// aside: the run under way, its step, and the keys.
func (d *recoveryDialog) hiddenLine() string {
	action := "recovery"
	if d.plan != nil {
		action = d.plan.Action
	}
	step := ""
	for i := range d.steps {
		if r := d.steps[i]; r.Status == recovery.StepRunning && d.plan != nil {
			step = fmt.Sprintf(": step %d of %d, %s", r.Index+1, len(d.plan.Steps), r.Title)
		}
	}
	if d.stopping {
		return action + " stopping" + step + " · R show"
	}
	return action + " running" + step + " · R show · ctrl+c stop"
}
