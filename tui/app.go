// Package tui is the console's terminal UI: an App that holds a stack of
// screens (the dashboard today; the plan screen goes beneath it and recovery
// dialogs over it) and feeds them cluster snapshots.
//
// Data flows one way. The watcher publishes immutable model.ClusterState
// snapshots on a channel; the App waits on it with a tea.Cmd that re-arms
// itself (Bubble Tea's realtime pattern), so there is never more than one
// snapshot in flight and no goroutine inside a model. Screens store the newest
// snapshot, mark themselves dirty and rebuild their view-models on a tick of
// at most 10 Hz; View only lays out strings cached by data version, size and
// focus.
package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"reflect"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/term"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/report"
	"github.com/upgrade-console/upgrade-console/themes"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// Source publishes snapshots; *watchers.Watcher satisfies it. The channel
// holds at most one (the latest) snapshot and is closed when the source stops.
type Source interface {
	Updates() <-chan *model.ClusterState
}

// Options configure the App and its dashboard.
type Options struct {
	// ClusterName and Context are shown until the first snapshot names them.
	ClusterName string
	Context     string
	// Source feeds snapshots; nil runs the UI without data (tests, demos
	// that send SnapshotMsg themselves).
	Source Source
	// Theme is the --theme value; ColorOff forces monochrome for Auto
	// (NO_COLOR, not a colour terminal; see themes.ColorOff).
	Theme    themes.Name
	ColorOff bool
	// ReadOnly leaves every dangerous action unbound.
	ReadOnly bool
	// NoRecovery is why the command line made no recovery action though
	// the console is not read-only (the audit log cannot be opened, and
	// no action may run unrecorded), longest form first: R says it on the
	// last line, where it did nothing at all and the reason went to the
	// log file alone.
	NoRecovery []string
	// StallAfter is the stall threshold (model.DefaultStallAfter when zero).
	StallAfter time.Duration
	// EtcdRollbackAfter is when R offers the etcd rollback (the recovery
	// action's threshold): the stall line of a new etcd member says it,
	// as R does nothing before. Zero: not said (read-only, no recovery).
	EtcdRollbackAfter time.Duration
	// Confirm, when set, is asked before the dashboard says the upgrade is
	// complete, as upgrade.TrackOptions.Confirm: the rule held on what the
	// watch delivered, and a watch on an API server that stopped answering
	// delivers nothing and reports no error. It runs in a command.
	Confirm func(ctx context.Context, s *model.ClusterState) error
	// QuitOnDone ends the program once the upgrade is done or failed
	// (watch --exit-on-done).
	QuitOnDone bool
	// ForceConflicts starts the plan screen's confirmation with "take
	// over the conflicting fields" ticked (apply --tui --force-conflicts):
	// the operator still sees it, and tab unticks it.
	ForceConflicts bool
	// Actions are extra key-bound actions on the dashboard (recovery…).
	Actions []Action
	// Clock tells the time for "since" columns and stalls; the real clock
	// when nil. Tests inject a fake one.
	Clock clock.PassiveClock
	// AppliedAt is when this console applied a spec that moved no
	// generation of the Cluster (machine or datacenter configs alone): the
	// rollout it starts is timed from then, where the Cluster's last spec
	// change, the earlier upgrade's, timed it as that one's.
	AppliedAt time.Time
	// Pacer, when set, learns when the renderer writes the terminal, for the
	// watchers' Pace (see Pacer); the Source should be paced by it.
	Pacer *Pacer
	// Lock, when set, reports the upgrade lock this console holds, for the
	// header ("lock: held by this console (renewed 3s ago)"). It reads memory the
	// upgrade driver keeps; it does no I/O.
	Lock func() LockInfo
	// RenewLock, when set, renews the lock Lock reports at once and
	// returns when that renewal is done (Lock then says how it went). It
	// does I/O: call it in a command. The dashboard calls it on resuming
	// from ctrl+z (resumed), as nothing was renewed while the process was
	// stopped: a renewal the lock's own ticker made at fg then answers it
	// (upgrade.Hold.RenewOnResume), where the two renewed one after the
	// other.
	RenewLock func(resumed bool)
	// NoSuspend is why ctrl+z may not suspend the console here ("" when it
	// may): with no job-control shell to resume it, the stop never came
	// and the console hung waiting for it.
	NoSuspend string
	// Demo: the world is the demo's, stopped with the console: a quit
	// leaves nothing going on, whatever the upgrade's state.
	Demo bool
	// SelfHolder is this console's holder identity in the upgrade lock
	// Lease: a lock it holds for a recovery action (an etcd rollback) reads
	// "held by this console", not as another console's ("lock: root@vm").
	SelfHolder string
	// EventHistory, when set, reads the events about the given objects from
	// the API server, the newest model.EventHistoryPerSubject of each,
	// newest first, within a bound of its own (watchers.EventHistory). It
	// does I/O: the node detail calls it in a command, once each time it
	// opens, for the events the dashboard's buffer no longer keeps.
	EventHistory EventHistoryFunc
	// AuditHeld, when set, reports how many entries the audit log refused
	// (a full disk) that the console holds, and why it refused the last.
	// It reads memory (upgrade.Auditor.Held); it does no I/O. While any is
	// held the App says so on the last row, on every screen and under the
	// dialogs: the console prints them at exit, after the screen is gone,
	// and the operator must know before quitting that a change went
	// unrecorded.
	AuditHeld func() (entries int, why string)
	// Background, when set, runs once at start beside the App's own
	// commands: I/O no screen waits for (asking the API server who the
	// console is, for the audit log). Its message, if any, is ignored.
	Background tea.Cmd
}

// EventHistoryFunc reads the events about subjects from the API server
// (Options.EventHistory).
type EventHistoryFunc func(ctx context.Context, subjects []model.EventSubject) ([]model.Event, error)

// LockInfo is the upgrade lock as the console holding it last saw it.
type LockInfo struct {
	Holder  string
	Renewed time.Time
	// Lost is true when the lock was taken away (cleared, or taken by
	// another console after it went stale).
	Lost bool
	// RenewErr is why the last renewal failed; empty when it succeeded.
	RenewErr string
	// Expires is when the lease runs out unless renewed (zero: unknown).
	Expires time.Time
	// Kept: the upgrade failed or timed out and the lock is kept, no longer
	// renewed, to block further upgrades until the cluster is checked.
	Kept bool
}

func (o Options) clock() clock.PassiveClock {
	if o.Clock == nil {
		return clock.RealClock{}
	}
	return o.Clock
}

// Action is a key-bound operation a screen offers. Dangerous actions (those
// that change the cluster) are not bound in read-only mode.
type Action struct {
	Binding   key.Binding
	Dangerous bool
	// Run is called with the newest snapshot and returns the command that
	// carries the action out (usually opening a dialog).
	Run func(s *model.ClusterState) tea.Cmd
	// Offered, when set, tells whether the action has anything to do for a
	// snapshot: the help shows its key only then. It is asked once per new
	// snapshot and on every clock tick (what is offered can depend on time
	// alone: a lease goes stale without a write), so it must be cheap.
	// While it says no, the key opens nothing (matchAction): R opened
	// "Nothing to recover" on a cluster that never showed anything to
	// recover.
	Offered func(s *model.ClusterState) bool
	// NotOffered, when set, is what the key says on the last line while
	// Offered says no: that there is nothing to do, and why, longest form
	// first (sayMsg). A key the help leaves out is still pressed (the
	// README names it, or the hand remembers it), and a press that did
	// nothing at all read as a key that does not work.
	NotOffered func(s *model.ClusterState) []string
}

// Screen is one full-window page of the App (plan, dashboard). Like the
// components of bubbles and soft-serve it is a model with a size and a key
// map, so the App can size it and build its help.
type Screen interface {
	Init() tea.Cmd
	Update(msg tea.Msg) (Screen, tea.Cmd)
	// View returns exactly the size last given to SetSize.
	View() string
	SetSize(width, height int)
	help.KeyMap
}

// Dialog is a screen drawn over the top screen as a centred box (a recovery
// dialog, a confirmation). While one is open it receives every key.
type Dialog interface {
	Screen
}

// closingDialog is a dialog a key can end with a decision (the typed
// confirmation's enter). The App closes it and hands the decision to the
// screens within the same update: a key pressed right after it (q, ctrl-c)
// finds the screen already acting on it, where a close sent as a command
// let such a key be typed into the dialog, or quit before the decision
// arrived, with nothing said.
type closingDialog interface {
	Dialog
	// Decided returns the decision once a key has made it.
	Decided() (tea.Msg, bool)
}

// Messages screens use to drive the App.
type (
	// PushMsg puts a screen on top of the stack (e.g. the plan screen
	// pushing the dashboard once the upgrade starts).
	PushMsg struct{ Screen Screen }
	// PopMsg removes the top screen; popping the last one quits.
	PopMsg struct{}
	// OpenDialogMsg opens a dialog over the current screen.
	OpenDialogMsg struct{ Dialog Dialog }
	// CloseDialogMsg closes the top dialog.
	CloseDialogMsg struct{}
	// SnapshotMsg carries a new snapshot to every screen and dialog.
	SnapshotMsg struct {
		State *model.ClusterState
		// fromSource: read from Options.Source (waitForSnapshot), whose
		// next is then waited for. A screen's own SnapshotMsg (the plan
		// screen hands the dashboard it pushes its newest) arms no
		// second reader of the source.
		fromSource bool
	}
	// ThemeMsg tells every screen and dialog the theme changed.
	ThemeMsg struct{ Theme *themes.Theme }
	// OutcomeMsg records how the upgrade ended, for the exit code.
	OutcomeMsg struct {
		Outcome report.Outcome
		// Reason is the judge's, for a failure: what the console
		// says of it once the alternate screen has taken it away.
		Reason string
		// AtRest is the judge's, for done: no upgrade was under way,
		// which the console's last line says as the plain watch does.
		AtRest bool
	}
	// sourceClosedMsg says the snapshot channel was closed.
	sourceClosedMsg struct{}
)

// Push, OpenDialog and CloseDialog are the commands for those messages.
func Push(s Screen) tea.Cmd       { return func() tea.Msg { return PushMsg{s} } }
func OpenDialog(d Dialog) tea.Cmd { return func() tea.Msg { return OpenDialogMsg{d} } }
func CloseDialog() tea.Msg        { return CloseDialogMsg{} }

// sayMsg is what a screen answers a key with on the last line, as y's copy
// is answered, until the next key: its forms, longest first, the App
// showing the first that fits beside the line's mark.
type sayMsg struct{ forms []string }

// say is the command that answers a key with forms (sayMsg).
func say(forms ...string) tea.Cmd {
	return func() tea.Msg { return sayMsg{forms: forms} }
}

// firstFitting is the first of forms at most w cells wide, the last cut to
// w where none is.
func firstFitting(forms []string, w int) string {
	for _, f := range forms {
		if width(f) <= w {
			return f
		}
	}
	if len(forms) == 0 {
		return ""
	}
	return truncate(forms[len(forms)-1], max(w, 0))
}

// hideDialogMsg sets the top dialog aside (App.hidden): a recovery run's
// wait, which the dialog would cover for minutes.
type hideDialogMsg struct{}

func hideDialog() tea.Msg { return hideDialogMsg{} }

// hider is a dialog that can be set aside: hiddenLine is what the screen's
// last line says meanwhile.
type hider interface {
	hiddenLine() string
}

// quitRequestMsg is a quit asked from a dialog (its q); requestQuit sends it.
type quitRequestMsg struct{}

func requestQuit() tea.Msg { return quitRequestMsg{} }

// quitter is a screen with its own answer to a quit asked from a dialog
// over it: the dashboard asks again while this console holds the lock of an
// upgrade under way.
type quitter interface{ quit() tea.Cmd }

// waitForSnapshot blocks (in a command, never in a model) until the source
// publishes, and returns the snapshot as a message.
func waitForSnapshot(ch <-chan *model.ClusterState) tea.Cmd {
	return func() tea.Msg {
		s, ok := <-ch
		if !ok {
			return sourceClosedMsg{}
		}
		return SnapshotMsg{State: s, fromSource: true}
	}
}

// App is the root model: a stack of screens, dialogs over them, the theme
// and the snapshot subscription.
type App struct {
	opts    Options
	screens []Screen
	dialogs []Dialog
	width   int
	height  int
	theme   *themes.Theme
	// profile is the renderer's colour profile, as its last
	// ColorProfileMsg said; until one arrives, a theme is drawn for a
	// terminal of 256 colours or more.
	profile       colorprofile.Profile
	outcome       report.Outcome
	outcomeReason string
	outcomeAtRest bool
	title         string
	// flog is the benchmark's frame log (FrameLogEnv); nil when unset.
	flog *frameLog
	// fatal is the console's own bug, caught (contain), the snapshot
	// source's, or a Cluster its first list did not find (judgeCluster):
	// the App quits and RunApp returns it.
	fatal error
	// clusterJudged: the watch of the EKS-A Cluster has listed once
	// (judgeCluster); whatever it says later is the dashboard's to show.
	clusterJudged bool
	// quitPending is a quit waiting for a recovery run to end (quitWhenIdle).
	quitPending bool
	// hidden is a dialog set aside (hideDialogMsg): not drawn and given no
	// keys, it still gets every other message; R brings it back, and so
	// does the end of its work.
	hidden Dialog
	// suspendKey is ctrl+z (suspend); notice is why it was refused, shown
	// on the key help's row until the next key, or until the reason no
	// longer holds.
	suspendKey key.Binding
	notice     string
	// copyKey is y (copyBinding). said is what the last key press did
	// where nothing else on the screen shows it (y's copy, R with nothing
	// to recover: sayMsg), shown where notice is, until the next key.
	// copyNext counts the presses of a run of y: y again goes on to the
	// next command the view holds, and any other key ends the run.
	copyKey  key.Binding
	said     string
	copyNext int
	// copyFrom is the command a run of y starts at (firstInView), read
	// from shown, the frame the last View drew: the screen the operator
	// pressed y on, not a second rendering of it.
	copyFrom int
	shown    string
	// st are the styles of stOf, for what the App draws itself.
	st   *styles
	stOf *themes.Theme
}

// allDialogs are the open dialogs and the one set aside.
func (a *App) allDialogs() []Dialog {
	if a.hidden == nil {
		return a.dialogs
	}
	return append(a.dialogs[:len(a.dialogs):len(a.dialogs)], a.hidden)
}

func (a *App) unhide() {
	a.hidden.SetSize(a.dialogSize())
	a.dialogs = append(a.dialogs, a.hidden)
	a.hidden = nil
}

// errSource is a Source that can say why it closed its channel.
type errSource interface {
	Err() error
}

// contain turns a panic in the App (a screen's Update or View) into an
// InternalError that ends the program cleanly: Bubble Tea would otherwise
// print the panic and its stack on the operator's terminal. The stack goes
// to the log file.
func (a *App) contain(where string, r any) {
	klog.ErrorS(nil, "internal error", "where", where, "panic", r, "stack", string(debug.Stack()))
	if a.fatal == nil {
		a.fatal = &model.InternalError{Where: where, Panic: r}
	}
}

// judgeCluster reads the first snapshot whose watch of the EKS-A Cluster
// has listed: a Cluster not there then is a --cluster (or -n) that names
// none, the error the plain watch ends with at once (exit 1), not a
// cluster to follow. The dashboard showed it as one, "not found" beside
// the management cluster's Nodes listed as its own, and exited 0 on q.
// Until that list, or while it is forbidden, nothing is known; a Cluster
// seen and then deleted is not judged here: the panes say it is gone, as
// the plain watch's "gone" line does.
func (a *App) judgeCluster(s *model.ClusterState) error {
	src := s.Source(model.KindEKSACluster)
	if !src.Installed || !src.Synced || src.Forbidden != "" {
		return nil
	}
	a.clusterJudged = true
	if s.Cluster != nil {
		return nil
	}
	return upgrade.ClusterNotFound(s.Namespace, s.ClusterName, s.Conn)
}

// Err is what ended the App other than the operator: the console's own
// bug, the snapshot source's failure, or a Cluster that is not there; nil
// otherwise.
func (a *App) Err() error { return a.fatal }

// internalErrorMsg carries a panic of a command, caught in its goroutine.
type internalErrorMsg struct{ err error }

// guard wraps a command so that a panic in it, in the goroutine Bubble Tea
// runs it in, comes back to the App as an internalErrorMsg instead of
// Bubble Tea's stack trace on the terminal; so do the commands of a batch
// or a sequence it returns.
func guard(cmd tea.Cmd) tea.Cmd {
	if cmd == nil {
		return nil
	}
	return func() (msg tea.Msg) {
		defer func() {
			if r := recover(); r != nil {
				klog.ErrorS(nil, "internal error", "where", "a task of the terminal UI", "panic", r, "stack", string(debug.Stack()))
				msg = internalErrorMsg{&model.InternalError{Where: "a task of the terminal UI", Panic: r}}
			}
		}()
		return guardList(cmd())
	}
}

var cmdType = reflect.TypeFor[tea.Cmd]()

// guardList guards each command of a message that is a list of them:
// tea.BatchMsg, and the message of tea.Sequence, whose type Bubble Tea does
// not export (hence reflect: any slice of commands, its type kept).
func guardList(msg tea.Msg) tea.Msg {
	if b, ok := msg.(tea.BatchMsg); ok {
		out := make(tea.BatchMsg, len(b))
		for i, c := range b {
			out[i] = guard(c)
		}
		return out
	}
	v := reflect.ValueOf(msg)
	if v.Kind() != reflect.Slice || v.Type().Elem() != cmdType {
		return msg
	}
	out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
	for i := range v.Len() {
		c, _ := v.Index(i).Interface().(tea.Cmd)
		out.Index(i).Set(reflect.ValueOf(guard(c)))
	}
	return out.Interface()
}

// NewApp returns an App showing the given screen first.
func NewApp(opts Options, first Screen) *App {
	a := &App{opts: opts, screens: []Screen{first}, title: "upgrade-console", suspendKey: suspendBinding(), copyKey: copyBinding()}
	if opts.ClusterName != "" {
		a.title += ": " + opts.ClusterName
	}
	a.theme = initialTheme(opts)
	a.profile = colorprofile.TrueColor
	a.flog = openFrameLog()
	return a
}

// initialTheme is the theme before the terminal answers the background
// query: dark unless the options say otherwise.
func initialTheme(opts Options) *themes.Theme {
	name := opts.Theme
	if name == "" {
		name = themes.Auto
	}
	if name == themes.Auto && opts.ColorOff {
		name = themes.Mono
	}
	t := themes.ForName(name, true)
	return &t
}

// Theme returns the App's current theme.
func (a *App) Theme() *themes.Theme { return a.theme }

// Outcome is how the upgrade ended, as far as the App saw.
func (a *App) Outcome() report.Outcome { return a.outcome }

// OutcomeReason is why the upgrade failed, as the dashboard judged it
// (empty for any other outcome).
func (a *App) OutcomeReason() string { return a.outcomeReason }

// OutcomeAtRest reports whether the outcome, done, was a cluster at rest
// since the dashboard began rather than an upgrade it saw complete.
func (a *App) OutcomeAtRest() bool { return a.outcomeAtRest }

func (a *App) autoTheme() bool {
	return (a.opts.Theme == "" || a.opts.Theme == themes.Auto) && !a.opts.ColorOff
}

// followsBackground: the theme depends on the terminal's background (auto,
// and high contrast, which has a variant for each), so the App asks for it.
func (a *App) followsBackground() bool {
	return a.autoTheme() || (a.opts.Theme == themes.HighContrast && !a.opts.ColorOff)
}

// colourless: the renderer draws no colour (its profile is ASCII:
// NO_COLOR, or a terminal that names none), whatever the theme asked for.
// Only the monochrome theme reads there: the colour themes mark the cursor
// row by its background alone, which is dropped.
func (a *App) colourless() bool { return a.profile <= colorprofile.ASCII }

// Init starts the snapshot subscription, asks the terminal for its
// background colour when the theme follows it, and initialises the screen.
func (a *App) Init() tea.Cmd {
	cmds := []tea.Cmd{firstTheme}
	if a.opts.Source != nil {
		cmds = append(cmds, waitForSnapshot(a.opts.Source.Updates()))
	}
	if a.followsBackground() {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	for _, s := range a.screens {
		cmds = append(cmds, s.Init())
	}
	if a.opts.Background != nil {
		cmds = append(cmds, a.opts.Background)
	}
	return guard(tea.Batch(cmds...))
}

// firstThemeMsg hands the screens the App's theme as it is when the
// message is handled. A command that carried it read the App from its own
// goroutine, racing the event loop's change of it (the terminal's colour
// profile, its background), and a theme read before the change and
// delivered after it put the screens back on it.
type firstThemeMsg struct{}

func firstTheme() tea.Msg { return firstThemeMsg{} }

// ender is a dialog with something to settle when the program ends with it
// open, whatever ended it (recoveryDialog.atEnd).
type ender interface {
	atEnd(ctx context.Context, wait time.Duration) (note string, err error)
}

// busyDialog is a dialog with work under way (a recovery run).
type busyDialog interface{ busy() bool }

func (a *App) busy() bool {
	for _, d := range a.allDialogs() {
		if b, ok := d.(busyDialog); ok && b.busy() {
			return true
		}
	}
	return false
}

// quitWhenIdleMsg quits once no dialog has work under way: --exit-on-done's
// quit waits for a recovery run (a node retry that completed the upgrade
// still has steps to record) instead of stopping it.
type quitWhenIdleMsg struct{}

func quitWhenIdle() tea.Msg { return quitWhenIdleMsg{} }

// settle settles every open dialog once the program has ended (ender): the
// notes say what became of their actions, for the terminal the UI gave
// back; waiting is called before a wait for a run under way.
func (a *App) settle(ctx context.Context, waiting func()) (notes []string, err error) {
	if a.busy() && waiting != nil {
		waiting()
	}
	var errs []error
	all := a.allDialogs()
	for i := len(all) - 1; i >= 0; i-- {
		e, ok := all[i].(ender)
		if !ok {
			continue
		}
		note, err := e.atEnd(ctx, runEndLimit)
		if note != "" {
			notes = append(notes, note)
		}
		errs = append(errs, err)
	}
	return notes, errors.Join(errs...)
}

// textTaker is a screen that may be taking typed text (the dashboard's
// node filter), which the App's own letter keys must leave to it.
type textTaker interface{ takingText() bool }

// topTakesText reports whether the top screen takes typed text now.
func (a *App) topTakesText() bool {
	if n := len(a.screens); n > 0 {
		if t, ok := a.screens[n-1].(textTaker); ok {
			return t.takingText()
		}
	}
	return false
}

// suspendRefuser is a screen or dialog with work that ctrl+z must not stop:
// suspendRefused says why while it is under way ("" otherwise).
type suspendRefuser interface{ suspendRefused() string }

// suspend answers ctrl+z: Bubble Tea gives the terminal back and stops the
// process (tea.Suspend), and sends tea.ResumeMsg after fg, which every
// screen gets (the dashboard renews the lock it holds then). While a
// screen or a dialog, shown or set aside, refuses, the key help's row says
// why instead, until the next key or the end of the work it names.
func (a *App) suspend() tea.Cmd {
	if why := a.suspendRefused(); why != "" {
		a.notice = why
		return nil
	}
	return tea.Suspend
}

// suspendRefused is why ctrl+z is refused now: the first screen's or
// dialog's, shown or set aside, that refuses; "" when none does.
func (a *App) suspendRefused() string {
	if a.opts.NoSuspend != "" {
		return a.opts.NoSuspend
	}
	var all []any
	for _, s := range a.screens {
		all = append(all, s)
	}
	for _, d := range a.allDialogs() {
		all = append(all, d)
	}
	for _, x := range all {
		if r, ok := x.(suspendRefuser); ok {
			if why := r.suspendRefused(); why != "" {
				return why
			}
		}
	}
	return ""
}

// interrupter is a dialog with work that ctrl+c must stop rather than
// abandon (a recovery run: a write cut off by the process's end would have
// no end in the audit log and leave the lock held).
type interrupter interface {
	interrupt() (cmd tea.Cmd, handled bool)
}

// Update routes messages: keys to the top dialog or screen, everything else
// to every screen and dialog (they all follow the cluster).
func (a *App) Update(msg tea.Msg) (m tea.Model, cmd tea.Cmd) {
	defer func() {
		if r := recover(); r != nil {
			a.contain("the terminal UI", r)
			m, cmd = a, tea.Quit
		}
		if a.quitPending && !a.busy() {
			a.quitPending = false
			cmd = tea.Batch(cmd, tea.Quit)
		}
		// A refusal's reason goes with the work it named (the run
		// ended, the start wrote the spec), not only at the next key:
		// left, it told of a run that was over, and of a ctrl+c that
		// would stop it where ctrl+c now quits.
		if a.notice != "" && a.suspendRefused() == "" {
			a.notice = ""
		}
		a.syncOverlay()
		cmd = guard(cmd)
	}()
	if e, ok := msg.(internalErrorMsg); ok && a.fatal == nil {
		a.fatal = e.err
	}
	if a.fatal != nil {
		return a, tea.Quit
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		a.width, a.height = msg.Width, msg.Height
		if a.opts.Pacer != nil {
			a.opts.Pacer.setSized()
		}
		for _, s := range a.screens {
			s.SetSize(a.width, a.height)
		}
		for _, d := range a.allDialogs() {
			d.SetSize(a.dialogSize())
		}
		return a, nil
	case tea.BackgroundColorMsg:
		// The background's answer comes after the colour profile: it
		// must not put a colour theme back on a terminal without colour.
		if !a.followsBackground() || a.colourless() {
			return a, nil
		}
		name := themes.Auto
		if !a.autoTheme() {
			name = a.opts.Theme
		}
		t := themes.ForProfile(name, msg.IsDark(), a.profile)
		a.theme = &t
		return a.broadcast(ThemeMsg{a.theme})
	case firstThemeMsg:
		return a.broadcast(ThemeMsg{a.theme})
	case tea.ColorProfileMsg:
		// Any theme, not only auto's: --theme dark under NO_COLOR drew
		// the cursor row with its colours stripped, as any other row.
		prev := a.profile
		a.profile = msg.Profile
		if a.colourless() && a.theme.Name != themes.Mono {
			t := themes.NewMono()
			a.theme = &t
			return a.broadcast(ThemeMsg{a.theme})
		}
		// A colour theme picks its colours by profile: the renderer's
		// nearest of 16 drew warnings in the red of failures.
		if a.colourless() || a.theme.Name == themes.Mono || a.profile == prev {
			return a, nil
		}
		t := themes.ForProfile(a.theme.Name, a.theme.Dark, a.profile)
		a.theme = &t
		return a.broadcast(ThemeMsg{a.theme})
	case tea.KeyPressMsg:
		a.notice, a.said = "", ""
		if !key.Matches(msg, a.copyKey) {
			a.copyNext = 0
		}
		if key.Matches(msg, a.suspendKey) {
			return a, a.suspend()
		}
		if msg.String() == "ctrl+c" {
			if n := len(a.dialogs); n > 0 {
				if i, ok := a.dialogs[n-1].(interrupter); ok {
					if cmd, handled := i.interrupt(); handled {
						return a, cmd
					}
				}
			}
			if i, ok := a.hidden.(interrupter); ok && len(a.dialogs) == 0 {
				if cmd, handled := i.interrupt(); handled {
					a.unhide() // to see it stop
					return a, cmd
				}
			}
			return a, tea.Quit
		}
		// q too: a run under way is stopped by ctrl+c, not by a quit that
		// forgets it is there. Not while the screen takes text (the node
		// filter): CAPI's machine names hold q, and the filter lost it.
		if a.hidden != nil && len(a.dialogs) == 0 && (msg.String() == "R" || msg.String() == "q") && !a.topTakesText() {
			a.unhide()
			return a, nil
		}
		if key.Matches(msg, a.copyKey) {
			if cmd, ok := a.copy(); ok {
				return a, cmd
			}
		}
		return a.routeKey(msg)
	case SnapshotMsg:
		if msg.fromSource && !a.clusterJudged {
			if err := a.judgeCluster(msg.State); err != nil {
				a.fatal = err
				return a, tea.Quit
			}
		}
		m, cmd := a.broadcast(msg)
		if a.opts.Source != nil && msg.fromSource {
			cmd = tea.Batch(cmd, waitForSnapshot(a.opts.Source.Updates()))
		}
		return m, cmd
	case sourceClosedMsg:
		if src, ok := a.opts.Source.(errSource); ok && src.Err() != nil {
			a.fatal = src.Err()
			return a, tea.Quit
		}
		return a, nil
	case PushMsg:
		msg.Screen.SetSize(a.width, a.height)
		a.screens = append(a.screens, msg.Screen)
		_, themeCmd := a.send(msg.Screen, ThemeMsg{a.theme})
		return a, tea.Batch(msg.Screen.Init(), themeCmd)
	case PopMsg:
		a.screens = a.screens[:len(a.screens)-1]
		if len(a.screens) == 0 {
			return a, tea.Quit
		}
		return a, nil
	case OpenDialogMsg:
		msg.Dialog.SetSize(a.dialogSize())
		a.dialogs = append(a.dialogs, msg.Dialog)
		_, themeCmd := a.send(msg.Dialog, ThemeMsg{a.theme})
		return a, tea.Batch(msg.Dialog.Init(), themeCmd)
	case quitRequestMsg:
		// A dialog's q: the screen beneath answers it as its own q, with
		// the dialogs closed so that a question it asks is seen and
		// answered there.
		a.dialogs = nil
		if n := len(a.screens); n > 0 {
			if q, ok := a.screens[n-1].(quitter); ok {
				return a, q.quit()
			}
		}
		return a, tea.Quit
	case CloseDialogMsg:
		if len(a.dialogs) > 0 {
			a.dialogs = a.dialogs[:len(a.dialogs)-1]
		}
		return a, nil
	case OutcomeMsg:
		a.outcome, a.outcomeReason, a.outcomeAtRest = msg.Outcome, msg.Reason, msg.AtRest
		return a, nil
	case sayMsg:
		a.said = firstFitting(msg.forms, a.width-3)
		return a, nil
	case hideDialogMsg:
		if n := len(a.dialogs); n > 0 && a.hidden == nil {
			if _, ok := a.dialogs[n-1].(hider); ok {
				a.hidden, a.dialogs = a.dialogs[n-1], a.dialogs[:n-1]
			}
		}
		return a, nil
	case quitWhenIdleMsg:
		if a.busy() {
			a.quitPending = true
			return a, nil
		}
		return a, tea.Quit
	}
	return a.broadcast(msg)
}

// copy answers y over a view that shows commands (commandShower): the
// next of them goes to the terminal's clipboard by OSC 52, whole, and the
// last line says which. ok is false where y is typed or the view shows
// none, and the view gets the key.
func (a *App) copy() (cmd tea.Cmd, ok bool) {
	var top any
	if n := len(a.dialogs); n > 0 {
		top = a.dialogs[n-1]
	} else if n := len(a.screens); n > 0 {
		top = a.screens[n-1]
	}
	s, ok := top.(commandShower)
	if !ok {
		return nil, false
	}
	cmds, ok := s.shownCommands()
	if !ok {
		return nil, false
	}
	if len(cmds) == 0 {
		a.said = copiedNotice(nil, 0, 0)
		return nil, true
	}
	if a.copyNext == 0 {
		// A run of y starts at the command the operator scrolled to:
		// the first the screen shows, not the first the view holds.
		a.copyFrom = firstInView(cmds, ansi.Strip(a.shown))
	}
	i := (a.copyFrom + a.copyNext) % len(cmds)
	a.copyNext++
	a.said = copiedNotice(cmds, i, a.width-4)
	return tea.SetClipboard(cmds[i]), true
}

// lastLine is what the App says on the screen's last row ("" for nothing).
func (a *App) lastLine() string {
	if a.notice != "" {
		return a.notice
	}
	return a.said
}

func (a *App) routeKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	if n := len(a.dialogs); n > 0 {
		d, cmd := a.dialogs[n-1].Update(msg)
		if dd, ok := d.(Dialog); ok {
			a.dialogs[n-1] = dd
		}
		if c, ok := d.(closingDialog); ok {
			if decision, done := c.Decided(); done {
				a.dialogs = a.dialogs[:n-1]
				_, next := a.broadcast(decision)
				return a, tea.Batch(cmd, next)
			}
		}
		return a, cmd
	}
	n := len(a.screens)
	s, cmd := a.screens[n-1].Update(msg)
	a.screens[n-1] = s
	return a, cmd
}

func (a *App) send(s Screen, msg tea.Msg) (Screen, tea.Cmd) {
	return s.Update(msg)
}

func (a *App) broadcast(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	for i, s := range a.screens {
		var cmd tea.Cmd
		a.screens[i], cmd = s.Update(msg)
		cmds = append(cmds, cmd)
	}
	for i, d := range a.dialogs {
		s, cmd := d.Update(msg)
		if dd, ok := s.(Dialog); ok {
			a.dialogs[i] = dd
		}
		cmds = append(cmds, cmd)
	}
	if a.hidden != nil {
		s, cmd := a.hidden.Update(msg)
		if dd, ok := s.(Dialog); ok {
			a.hidden = dd
		}
		cmds = append(cmds, cmd)
		// Its work ended: the result is for the operator to read.
		if b, ok := a.hidden.(busyDialog); ok && !b.busy() {
			a.unhide()
		}
	}
	return a, tea.Batch(cmds...)
}

// footerOwner is a screen whose last row is, for now, more than its key
// help: the dashboard's quit prompt ("q again quits") and its filter's
// input. The App draws no warning of its own over them: over the prompt, a
// q pressed in the demo seemed to do nothing.
type footerOwner interface{ footerBusy() bool }

func (a *App) footerBusy() bool {
	f, ok := a.screens[len(a.screens)-1].(footerOwner)
	return ok && f.footerBusy()
}

// heldLine is what the App says while the audit log holds entries it
// refused ("" while it holds none): after a notice or a copy, which last
// until the next key, on the key help's row, as nothing else on a screen
// or a dialog says that a change went unrecorded, and the lines printed
// at exit come once the screen is gone.
func (a *App) heldLine() string {
	if a.opts.AuditHeld == nil {
		return ""
	}
	n, why := a.opts.AuditHeld()
	if n == 0 {
		return ""
	}
	if why != "" {
		why = " (" + why + ")"
	}
	// The count and the exit first; the cause where it fits. Narrow (40
	// columns) the long form kept "1 hel…": the short one keeps that
	// entries are held and come at exit.
	full := fmt.Sprintf("the audit log refuses entries: %d held, printed at exit to append to it", n)
	for _, l := range []string{full + why, full} {
		if ansi.StringWidth(l)+3 <= a.width {
			return l
		}
	}
	return fmt.Sprintf("audit log refuses: %d held till exit", n)
}

// withLastLine is the screen with its last row replaced by text (the
// screen's own key help, which a dialog set aside makes partly wrong).
func (a *App) withLastLine(base, text string) string {
	return a.withLine(base, seg{" " + a.theme.Sym.Active + " ", rSevInfo}, seg{text, rSevInfo})
}

// withWarnLine is withLastLine for a warning.
func (a *App) withWarnLine(base, text string) string {
	return a.withLine(base, seg{" " + a.theme.Sym.Warn + " ", rSevWarning}, seg{text, rSevWarning})
}

func (a *App) withLine(base string, segs ...seg) string {
	i := strings.LastIndexByte(base, '\n')
	if i < 0 {
		return base
	}
	if a.st == nil || a.stOf != a.theme {
		a.st, a.stOf = newStyles(a.theme), a.theme
	}
	var b strings.Builder
	b.WriteString(base[:i+1])
	a.st.paintSegs(&b, segs, a.width)
	return b.String()
}

// blankRows is h rows of spaces the width of the screen.
func (a *App) blankRows(h int) string {
	return strings.TrimSuffix(strings.Repeat(strings.Repeat(" ", a.width)+"\n", h), "\n")
}

// overlaidScreen is a screen that lays itself out differently under a
// dialog: the dialog's margin leaves it its last rows only.
type overlaidScreen interface {
	setOverlaid(bool)
}

// syncOverlay tells the top screen whether a dialog covers it.
func (a *App) syncOverlay() {
	if n := len(a.screens); n > 0 {
		if o, ok := a.screens[n-1].(overlaidScreen); ok {
			o.setOverlaid(len(a.dialogs) > 0)
		}
	}
}

// dialogSize leaves a margin around dialogs so the dashboard stays visible.
func (a *App) dialogSize() (int, int) {
	return max(a.width-4, 10), max(a.height-4, 5)
}

// View draws the top screen, and the dialogs over it as layers.
func (a *App) View() (v tea.View) {
	v.AltScreen = true
	v.WindowTitle = a.title
	// Run last, after the recovery below: what the screen shows.
	defer func() { a.shown = v.Content }()
	// A panic here shows the error instead of a frame; the next message
	// (the clock's, within a second) quits.
	defer func() {
		if r := recover(); r != nil {
			a.contain("the terminal UI", r)
			v.SetContent(errText(a.fatal))
		}
	}()
	if len(a.screens) == 0 || a.width == 0 || a.fatal != nil {
		if a.fatal != nil {
			v.SetContent(errText(a.fatal))
		}
		return v
	}
	base := a.screens[len(a.screens)-1].View()
	h, hides := a.hidden.(hider)
	if hides && len(a.dialogs) == 0 {
		base = a.withLastLine(base, h.hiddenLine())
	}
	if n := a.lastLine(); n != "" && len(a.dialogs) == 0 {
		base = a.withLastLine(base, n)
	} else if held := a.heldLine(); held != "" && len(a.dialogs) == 0 && !hides && !a.footerBusy() {
		// After the set-aside run's line: R brings back its dialog,
		// which says the held entries under it.
		base = a.withWarnLine(base, held)
	}
	if len(a.dialogs) == 0 {
		v.SetContent(base)
		if a.flog != nil {
			a.flog.frame(a.builtState(), base)
		}
		return v
	}
	if a.flog != nil {
		a.flog.content = "" // the screen shows the dialogs too
	}
	// The screen's key help is blanked: a dialog takes every key, and the
	// help beneath it listed keys that did nothing there ("enter zoom"
	// under a dialog whose enter runs a recovery, "/ filter nodes", "tab
	// next pane"). The dialog lists its own.
	if i := strings.LastIndexByte(base, '\n'); i >= 0 {
		base = base[:i+1] + a.blankRows(1)
		if n := a.lastLine(); n != "" {
			base = a.withLastLine(base, n)
		} else if h := a.heldLine(); h != "" {
			base = a.withWarnLine(base, h)
		}
	}
	layers := []*lipgloss.Layer{lipgloss.NewLayer(base)}
	for i, d := range a.dialogs {
		box := d.View()
		w, h := lipgloss.Size(box)
		if h > a.height {
			// Taller than the screen (a short split pane): the
			// canvas cut its bottom, the typed confirmation's input
			// and the dialog's keys. Its top goes instead: the
			// dialogs keep what the operator acts on last.
			box = strings.Join(strings.Split(box, "\n")[h-a.height:], "\n")
			h = a.height
		}
		x, y := max((a.width-w)/2, 0), max((a.height-h)/2, 0)
		// The rows the dialog covers are blanked across the screen: the
		// ends of the lines behind it, beside its border ("│2", "│1m",
		// "│×2"), read as part of a dialog that confirms a write.
		layers = append(layers, lipgloss.NewLayer(a.blankRows(h)).X(0).Y(y).Z(2*i+1),
			lipgloss.NewLayer(box).X(x).Y(y).Z(2*i+2))
	}
	// A Layer draws only its own content; the Compositor draws the layers
	// in z order.
	v.SetContent(lipgloss.NewCanvas(a.width, a.height).Compose(lipgloss.NewCompositor(layers...)).Render())
	return v
}

// terminalProfile is the colour profile to draw a terminal with, when
// Bubble Tea's own would not do (ok false: let it detect). It takes a
// terminal whose TERM is dumb or unset (kubectl exec -it, docker exec -it
// without -e TERM, a TERM lost through sudo or su) for no terminal at all
// (NoTTY) and strips every attribute with the colours: the monochrome theme
// then drew the cursor row, the focused pane and a failure exactly as the
// rest, and d described a machine no mark showed. The dashboard drawn there
// moves the cursor and uses the alternate screen anyway; bold, underline
// and reverse video cost nothing more.
func terminalProfile(isTerminal bool, environ []string) (colorprofile.Profile, bool) {
	if !isTerminal {
		return 0, false
	}
	if p := colorprofile.Env(environ); p != colorprofile.NoTTY {
		return 0, false
	}
	return colorprofile.ASCII, true
}

// StopSignals are the signals that stop the console as a quit, or an
// interrupt, does. SIGQUIT (ctrl-\) is one: Go's own handling dumped every
// goroutine (over the alternate screen, leaving the terminal raw) and
// exited 2, with no lock released and no audit entry written. The
// keyboard's signals a console was started ignoring (a script's background
// job: the keyboard is for the job in front) stay ignored.
func StopSignals() []os.Signal {
	sigs := []os.Signal{syscall.SIGTERM, syscall.SIGHUP}
	for _, s := range []os.Signal{os.Interrupt, syscall.SIGQUIT} {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	return sigs
}

// rendererFPS is how often Bubble Tea flushes the view (see RunApp).
const rendererFPS = 20

// RunApp runs an App built by the caller (a dashboard, or a plan screen
// first) until the operator quits (or, with QuitOnDone, until the upgrade
// is done or has failed) and returns the outcome it saw. Logs must already
// go to a file: the terminal belongs to the UI.
//
// SIGINT, SIGTERM and SIGHUP end it as if the operator had quit, and a deadline of
// ctx (watch --timeout) ends it with ctx's error. The signals are caught
// here, not by Bubble Tea: its own handler (v2.0.10) hands the event loop a
// QuitMsg with no way out, and when the same signal has already cancelled
// the context (the commands' signal.NotifyContext), the loop is gone, the
// handler blocks, and the program neither exits nor gives the terminal back
// (charmbracelet/bubbletea#1806, open). It hung in 4 of 10 SIGTERMs sent to
// `watch` at 10,000 nodes.
func RunApp(ctx context.Context, app *App, progOpts ...tea.ProgramOption) (report.Outcome, error) {
	sctx, stop := signal.NotifyContext(ctx, StopSignals()...)
	defer stop()
	// The content changes at most ten times a second (the watchers publish
	// at most every 100 ms), so a renderer flushing at 20 frames a second
	// puts every change on screen within 50 ms. Its ticker is nearly all an
	// idle console's CPU: each wake-up costs the Go scheduler ~0.2 ms on a
	// virtual machine (perf record of an idle console at 10,000 nodes: 54 %
	// scheduling, 23 % sysmon, 10 % the ticker's own flush). Idle, in a
	// pseudo-terminal, 40 s each: 0.42-0.45 % of a core at 20 frames a
	// second, 0.62-0.67 % at 30, 1.27 % at 60 (Bubble Tea's default),
	// against a target of 1 %.
	//
	// The ticker also holds back the first frame: the renderer writes
	// nothing before its first tick, one period after it starts, however
	// soon the frame is ready (~50 ms after the first View, strace of a
	// start). A renderer that draws on demand is upstream's to do
	// (charmbracelet/bubbletea#1776 and #1796, open); Bubble Tea has no
	// call that flushes a frame now.
	opts := []tea.ProgramOption{tea.WithContext(sctx), tea.WithoutSignalHandler(), tea.WithFPS(rendererFPS)}
	if p, ok := terminalProfile(term.IsTerminal(os.Stdout.Fd()), os.Environ()); ok {
		opts = append(opts, tea.WithColorProfile(p))
	}
	if app.opts.Pacer != nil {
		opts = append(opts, tea.WithOutput(app.opts.Pacer.output(os.Stdout)))
	}
	opts = append(opts, progOpts...)
	final, err := tea.NewProgram(app, opts...).Run()
	if errors.Is(err, tea.ErrProgramKilled) && sctx.Err() != nil {
		err = nil
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = ctx.Err()
		}
	}
	// The program has ended and given the terminal back; a recovery run
	// it leaves under way would be cut by the process's end, its write
	// unrecorded and the lock held.
	notes, settleErr := app.settle(context.WithoutCancel(ctx), func() {
		fmt.Fprintln(os.Stderr, "upgrade-console: stopping the recovery action under way: the step under way runs to its end first…")
	})
	for _, n := range notes {
		fmt.Fprintln(os.Stderr, "upgrade-console: "+n)
	}
	if err != nil {
		err = fmt.Errorf("terminal UI: %w", err)
		if settleErr != nil {
			err = errors.Join(err, settleErr)
		}
		return report.Running, err
	}
	if a, ok := final.(*App); ok {
		if settleErr != nil {
			return a.outcome, errors.Join(a.fatal, settleErr)
		}
		return a.outcome, a.fatal
	}
	return report.Running, settleErr
}
