package tui

import (
	"image/color"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	clocktesting "k8s.io/utils/clock/testing"

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
		{"explicit theme wins", Options{Theme: themes.HighContrast}, tea.BackgroundColorMsg{Color: white}, themes.HighContrast, themes.HighContrast},
		{"NO_COLOR stays mono", Options{Theme: themes.Auto, ColorOff: true}, tea.BackgroundColorMsg{Color: white}, themes.Mono, themes.Mono},
		{"no-colour terminal", Options{Theme: themes.Auto}, tea.ColorProfileMsg{Profile: colorprofile.ASCII}, themes.Mono, themes.Mono},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := newTestApp(c.opts)
			a.Update(c.msg)
			if a.Theme().Name != c.want {
				t.Fatalf("app theme %s, want %s", a.Theme().Name, c.want)
			}
			if got := a.screens[0].(*Dashboard).st.th.Name; got != c.wantDash {
				t.Fatalf("dashboard theme %s, want %s", got, c.wantDash)
			}
		})
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
