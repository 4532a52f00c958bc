package tui

import (
	"image/color"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
)

func newTestApp(opts Options) *App {
	opts.Clock = clocktesting.NewFakePassiveClock(t0)
	a := NewApp(opts, NewDashboard(opts))
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	return a
}

var (
	white = color.RGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xff}
	black = color.RGBA{A: 0xff}
)

func TestThemeFollowsTerminalBackground(t *testing.T) {
	cases := []struct {
		name     string
		opts     Options
		msg      tea.Msg
		want     themes.Name
		wantDash themes.Name
	}{
		{"auto light background", Options{Theme: themes.Auto}, tea.BackgroundColorMsg{Color: white}, themes.Light, themes.Light},
		{"auto dark background", Options{Theme: themes.Auto}, tea.BackgroundColorMsg{Color: black}, themes.Dark, themes.Dark},
		{"explicit theme wins", Options{Theme: themes.Dark}, tea.BackgroundColorMsg{Color: white}, themes.Dark, themes.Dark},
		{"high contrast stays high contrast", Options{Theme: themes.HighContrast}, tea.BackgroundColorMsg{Color: white}, themes.HighContrast, themes.HighContrast},
		{"NO_COLOR stays mono", Options{Theme: themes.Auto, ColorOff: true}, tea.BackgroundColorMsg{Color: white}, themes.Mono, themes.Mono},
		{"no-colour terminal", Options{Theme: themes.Auto}, tea.ColorProfileMsg{Profile: colorprofile.ASCII}, themes.Mono, themes.Mono},
		// NO_COLOR with --theme dark: the renderer strips the colours the
		// cursor row is marked with alone.
		{"explicit theme on a no-colour terminal", Options{Theme: themes.Dark}, tea.ColorProfileMsg{Profile: colorprofile.ASCII}, themes.Mono, themes.Mono},
		{"explicit high contrast on a no-colour terminal", Options{Theme: themes.HighContrast}, tea.ColorProfileMsg{Profile: colorprofile.ASCII}, themes.Mono, themes.Mono},
		// The background answers after the profile (a TERM-less terminal
		// that still answers OSC 11): it must not bring the colours back.
		{"background after a no-colour profile", Options{Theme: themes.Auto}, []tea.Msg{tea.ColorProfileMsg{Profile: colorprofile.ASCII}, tea.BackgroundColorMsg{Color: white}}, themes.Mono, themes.Mono},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := newTestApp(c.opts)
			msgs, ok := c.msg.([]tea.Msg)
			if !ok {
				msgs = []tea.Msg{c.msg}
			}
			for _, m := range msgs {
				a.Update(m)
			}
			if a.Theme().Name != c.want {
				t.Fatalf("app theme %s, want %s", a.Theme().Name, c.want)
			}
			if got := a.screens[0].(*Dashboard).st.th.Name; got != c.wantDash {
				t.Fatalf("dashboard theme %s, want %s", got, c.wantDash)
			}
		})
	}
}

// A terminal of 16 colours draws the colour themes with the colours chosen
// for it (themes.ForProfile), whichever of its profile and its background
// the App hears first: the renderer's nearest of 16 drew the warnings in
// the red of failures. One that says later it has true colour (tmux's RGB
// capability) gets the full palette back.
func TestThemeFollowsColourProfile(t *testing.T) {
	ansi16 := tea.ColorProfileMsg{Profile: colorprofile.ANSI}
	cases := []struct {
		name string
		opts Options
		msgs []tea.Msg
		want themes.Theme
	}{
		{"explicit dark", Options{Theme: themes.Dark}, []tea.Msg{ansi16}, themes.ForProfile(themes.Dark, true, colorprofile.ANSI)},
		{"auto, profile then background", Options{Theme: themes.Auto}, []tea.Msg{ansi16, tea.BackgroundColorMsg{Color: white}}, themes.ForProfile(themes.Light, false, colorprofile.ANSI)},
		{"auto, background then profile", Options{Theme: themes.Auto}, []tea.Msg{tea.BackgroundColorMsg{Color: white}, ansi16}, themes.ForProfile(themes.Light, false, colorprofile.ANSI)},
		{"256 colours", Options{Theme: themes.Dark}, []tea.Msg{tea.ColorProfileMsg{Profile: colorprofile.ANSI256}}, themes.ForName(themes.Dark, true)},
		{"true colour after 16", Options{Theme: themes.Light}, []tea.Msg{ansi16, tea.ColorProfileMsg{Profile: colorprofile.TrueColor}}, themes.ForName(themes.Light, false)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := newTestApp(c.opts)
			for _, m := range c.msgs {
				a.Update(m)
			}
			for who, th := range map[string]*themes.Theme{"app": a.Theme(), "dashboard": a.screens[0].(*Dashboard).st.th} {
				if th.Name != c.want.Name || th.Stall != c.want.Stall || th.TableSelected != c.want.TableSelected {
					t.Errorf("%s theme %s draws a stall %q and the cursor row %q, want %s's %q and %q", who, th.Name,
						th.Stall.S("x"), th.TableSelected.S("x"), c.want.Name, c.want.Stall.S("x"), c.want.TableSelected.S("x"))
				}
			}
		})
	}
}

// A terminal that names itself dumb or not at all (kubectl exec -it without
// TERM) is still drawn with the dashboard: its profile keeps the attributes
// the monochrome theme marks the cursor row and the focused pane with.
func TestTerminalProfileKeepsAttributes(t *testing.T) {
	cases := []struct {
		name    string
		tty     bool
		environ []string
		want    colorprofile.Profile
		force   bool
	}{
		{"TERM unset", true, []string{"HOME=/root"}, colorprofile.ASCII, true},
		{"TERM=dumb", true, []string{"TERM=dumb"}, colorprofile.ASCII, true},
		{"TERM empty", true, []string{"TERM="}, colorprofile.ASCII, true},
		{"xterm: detected", true, []string{"TERM=xterm-256color"}, 0, false},
		{"NO_COLOR: detected (ASCII)", true, []string{"TERM=xterm", "NO_COLOR=1"}, 0, false},
		{"not a terminal", false, []string{"TERM=dumb"}, 0, false},
	}
	for _, c := range cases {
		p, ok := terminalProfile(c.tty, c.environ)
		if ok != c.force || (ok && p != c.want) {
			t.Errorf("%s: terminalProfile = %v, %v; want %v, %v", c.name, p, ok, c.want, c.force)
		}
	}
	// What it forces keeps reverse video (the cursor row); NoTTY drops it.
	for p, want := range map[colorprofile.Profile]bool{colorprofile.ASCII: true, colorprofile.NoTTY: false} {
		var b strings.Builder
		w := &colorprofile.Writer{Forward: &b, Profile: p}
		if _, err := w.WriteString("\x1b[7mrow\x1b[m"); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(b.String(), "\x1b[7m"); got != want {
			t.Fatalf("profile %v keeps reverse video: %v, want %v (%q)", p, got, want, b.String())
		}
	}
}

// --theme high-contrast on a light terminal: its text was bright white on
// white. It asks for the background as auto does and takes the variant drawn
// for it, on the dashboard too.
func TestHighContrastFollowsTerminalBackground(t *testing.T) {
	a := newTestApp(Options{Theme: themes.HighContrast})
	if !a.followsBackground() {
		t.Fatal("high contrast does not ask for the terminal's background")
	}
	for _, c := range []struct {
		bg   color.Color
		dark bool
	}{{white, false}, {black, true}} {
		a.Update(tea.BackgroundColorMsg{Color: c.bg})
		if th := a.Theme(); th.Name != themes.HighContrast || th.Dark != c.dark {
			t.Fatalf("background %v: theme %s dark=%v, want high-contrast dark=%v", c.bg, th.Name, th.Dark, c.dark)
		}
		if th := a.screens[0].(*Dashboard).st.th; th.Dark != c.dark {
			t.Fatalf("background %v: dashboard's theme dark=%v, want %v", c.bg, th.Dark, c.dark)
		}
	}
}

// stubDialog is a minimal dialog: a box that closes on esc.
type stubDialog struct{ keys int }

func (s *stubDialog) Init() tea.Cmd { return nil }
func (s *stubDialog) Update(msg tea.Msg) (Screen, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		s.keys++
		if k.String() == "esc" {
			return s, CloseDialog
		}
	}
	return s, nil
}
func (s *stubDialog) View() string {
	return "┌────────┐\n│ DIALOG │\n└────────┘"
}
func (s *stubDialog) SetSize(int, int)          {}
func (s *stubDialog) ShortHelp() []key.Binding  { return nil }
func (s *stubDialog) FullHelp() [][]key.Binding { return nil }

func TestDialogTakesKeysAndDrawsOverTheScreen(t *testing.T) {
	a := newTestApp(Options{Theme: themes.Mono})
	a.Update(SnapshotMsg{State: fixtureMidEtcd()})
	d := &stubDialog{}
	a.Update(OpenDialogMsg{Dialog: d})
	a.Update(tea.KeyPressMsg{Code: tea.KeyTab})
	if d.keys != 1 || a.screens[0].(*Dashboard).Focus() != "NODES" {
		t.Fatalf("the key went past the dialog (dialog saw %d keys)", d.keys)
	}
	view := a.View().Content
	if !containsPlain(view, "│ DIALOG │") || !containsPlain(view, "EKS-A") {
		t.Fatalf("dialog not drawn over the dashboard:\n%s", view)
	}
	_, cmd := a.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	a.Update(cmd())
	if len(a.dialogs) != 0 {
		t.Fatal("esc did not close the dialog")
	}
}

func TestPushAndPopScreens(t *testing.T) {
	a := newTestApp(Options{Theme: themes.Mono})
	second := NewDashboard(Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0)})
	a.Update(PushMsg{Screen: second})
	if len(a.screens) != 2 || second.w != 80 {
		t.Fatalf("pushed screen not on top and sized: %d screens, width %d", len(a.screens), second.w)
	}
	a.Update(PopMsg{})
	if len(a.screens) != 1 {
		t.Fatal("pop did not remove the top screen")
	}
	if _, cmd := a.Update(PopMsg{}); cmd == nil {
		t.Fatal("popping the last screen must quit")
	}
}

func containsPlain(s, sub string) bool { return strings.Contains(ansi.Strip(s), sub) }

// The first theme reaches the screens from a command of Init. That command
// read the App's theme on its own goroutine, while the event loop may
// already have set another (the terminal's colour profile, or its
// background): a data race, and a theme read before the change and
// delivered after it put the screens back on the dark theme on a terminal
// without colours, the App itself on mono.
func TestInitialThemeIsTheAppsWhenItArrives(t *testing.T) {
	initBatch := func(t *testing.T, a *App) tea.BatchMsg {
		t.Helper()
		batch, ok := a.Init()().(tea.BatchMsg)
		if !ok {
			t.Fatalf("Init yields %T, want a batch", a.Init()())
		}
		return batch
	}
	deliver := func(a *App, msgs []tea.Msg) {
		for _, msg := range msgs {
			if _, isBatch := msg.(tea.BatchMsg); msg != nil && !isBatch {
				a.Update(msg)
			}
		}
	}
	check := func(t *testing.T, a *App) {
		t.Helper()
		if got := a.Theme().Name; got != themes.Mono {
			t.Fatalf("app theme %s, want %s", got, themes.Mono)
		}
		if got := a.screens[0].(*Dashboard).st.th.Name; got != themes.Mono {
			t.Fatalf("dashboard theme %s after the first messages, want the app's %s", got, themes.Mono)
		}
	}
	t.Run("command run before the profile arrives", func(t *testing.T) {
		a := NewApp(Options{Theme: themes.Auto}, NewDashboard(Options{}))
		var msgs []tea.Msg
		for _, c := range initBatch(t, a) {
			msgs = append(msgs, c())
		}
		a.Update(tea.ColorProfileMsg{Profile: colorprofile.ASCII})
		deliver(a, msgs)
		check(t, a)
	})
	// As Bubble Tea runs them: each command on a goroutine of its own while
	// the event loop goes on with the terminal's first messages (go test
	// -race reports a command that reads the App).
	t.Run("commands run beside the event loop", func(t *testing.T) {
		a := NewApp(Options{Theme: themes.Auto}, NewDashboard(Options{}))
		batch := initBatch(t, a)
		ch := make(chan tea.Msg, len(batch))
		for _, c := range batch {
			go func() { ch <- c() }()
		}
		a.Update(tea.ColorProfileMsg{Profile: colorprofile.ASCII})
		msgs := make([]tea.Msg, 0, len(batch))
		for range batch {
			msgs = append(msgs, <-ch)
		}
		deliver(a, msgs)
		check(t, a)
	})
}

// countingSource counts the readers the App arms: each waitForSnapshot
// asks for the channel once.
type countingSource struct {
	ch    chan *model.ClusterState
	asked int
}

func (s *countingSource) Updates() <-chan *model.ClusterState {
	s.asked++
	return s.ch
}

// The App reads the source with one command at a time, re-armed by the
// snapshot it read: never more than one snapshot in flight. A SnapshotMsg a
// screen sent itself (the plan screen hands the dashboard it pushes the
// newest snapshot it has) re-armed it too, and from then on two commands
// read the source: two snapshots in flight, taken by two goroutines, which
// may hand them over in either order (an older one last, shown until the
// cluster changes again).
func TestASnapshotSentByAScreenArmsNoSecondReader(t *testing.T) {
	src := &countingSource{ch: make(chan *model.ClusterState, 1)}
	a := NewApp(Options{Source: src, Clock: clocktesting.NewFakePassiveClock(t0)}, NewDashboard(Options{}))
	a.Init()
	if src.asked != 1 {
		t.Fatalf("Init armed %d readers of the source, want 1", src.asked)
	}
	a.Update(SnapshotMsg{State: &model.ClusterState{Version: 1}})
	if src.asked != 1 {
		t.Fatalf("%d readers of the source after a screen's own SnapshotMsg, want 1", src.asked)
	}
	// The one reader's snapshot arms the next.
	src.ch <- &model.ClusterState{Version: 2}
	a.Update(waitForSnapshot(src.ch)())
	if src.asked != 2 {
		t.Fatalf("%d readers armed after a snapshot read from the source, want 2 (one after the other)", src.asked)
	}
}

// TestDialogHidesTheScreensKeys: a dialog takes every key, but the screen
// beneath it kept its key help on the last line ("tab next pane • enter
// zoom • / filter nodes" under the recovery menu, whose enter runs a
// recovery), and on the dashboard its full help (? then R) too. Neither
// is shown under a dialog; the dialog lists its own keys.
func TestDialogHidesTheScreensKeys(t *testing.T) {
	a := RecoveryAction(RecoveryOptions{backend: &fakeRecovery{p: planFixture()}, Now: func() time.Time { return t0 }})
	opts := Options{Theme: themes.Mono, Actions: []Action{a}, Clock: clocktesting.NewFakePassiveClock(t0)}
	app := NewApp(opts, NewDashboard(opts))
	app.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	app.Update(SnapshotMsg{State: stuckEtcdState(t0)})
	screen := func() string { return ansi.Strip(app.View().Content) }
	if s := screen(); !strings.Contains(s, "tab next pane") || !strings.Contains(s, "R recover") {
		t.Fatalf("the test wants the dashboard's key help on the screen, with R:\n%s", s)
	}
	app.Update(tea.KeyPressMsg{Code: '?', Text: "?"})
	_, cmd := app.Update(tea.KeyPressMsg{Code: 'R', Text: "R"})
	if cmd == nil {
		t.Fatal("R gave no command, want the recovery menu opened")
	}
	msg := cmd()
	if _, ok := msg.(OpenDialogMsg); !ok {
		t.Fatalf("R gave %T, want the recovery menu opened", msg)
	}
	app.Update(msg)
	s := screen()
	if !strings.Contains(s, "Roll back the etcd rollout") {
		t.Fatalf("the recovery menu is not open:\n%s", s)
	}
	for _, gone := range []string{"tab next pane", "enter zoom", "filter nodes", "previous pane", "page down"} {
		if strings.Contains(s, gone) {
			t.Errorf("the dashboard's %q is listed under the dialog:\n%s", gone, s)
		}
	}
}

// Background is I/O no screen waits for (the audit log's review of who the
// console is): it runs among Init's commands, not in Update, and only once.
func TestBackgroundRunsAmongInitsCommands(t *testing.T) {
	ran := 0
	a := NewApp(Options{Background: func() tea.Msg { ran++; return nil }}, NewDashboard(Options{}))
	batch, ok := a.Init()().(tea.BatchMsg)
	if !ok {
		t.Fatalf("Init yields %T, want a batch", a.Init()())
	}
	if ran != 0 {
		t.Fatalf("Background ran %d times while Init built its commands", ran)
	}
	for _, c := range batch {
		if c != nil {
			c()
		}
	}
	if ran != 1 {
		t.Errorf("Background ran %d times among Init's commands, want once", ran)
	}
}
