// Package themes holds the console's colour themes: one Theme of named styles
// per look (dark, light, high contrast, monochrome), built once and shared by
// every screen.
//
// Rendering cost matters (the dashboard redraws up to ten times a second with
// thousands of rows behind it), so besides lipgloss styles a Theme carries
// Inks: the escape sequences of a colour-only style captured once, so that
// painting a table cell is a string concatenation instead of a Style.Render
// (which measures, wraps and pads every time; see lipgloss#721).
package themes

import (
	"fmt"
	"image/color"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/textinput"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
)

// Name selects a theme on the command line (--theme).
type Name string

const (
	Auto         Name = "auto"
	Dark         Name = "dark"
	Light        Name = "light"
	HighContrast Name = "high-contrast"
	Mono         Name = "mono"
)

// Names lists the accepted --theme values, in the order help shows them.
var Names = []Name{Auto, Dark, Light, HighContrast, Mono}

// ParseName checks a --theme value.
func ParseName(s string) (Name, error) {
	for _, n := range Names {
		if string(n) == s {
			return n, nil
		}
	}
	return "", fmt.Errorf("unknown theme %q: use one of %s", s, joinNames())
}

func joinNames() string {
	parts := make([]string, len(Names))
	for i, n := range Names {
		parts[i] = string(n)
	}
	return strings.Join(parts, ", ")
}

// Ink paints single-line text with a colour-only style. It is the prefix and
// suffix lipgloss would emit, captured once, so painting costs a
// concatenation. The zero Ink leaves text as it is.
type Ink struct{ pre, post string }

// NewInk captures the escape sequences of a style. The style must not pad,
// size, border or align: only colours and text attributes survive.
func NewInk(s lipgloss.Style) Ink {
	const probe = "\x00"
	out := s.Render(probe)
	i := strings.Index(out, probe)
	if i < 0 {
		return Ink{}
	}
	return Ink{pre: out[:i], post: out[i+len(probe):]}
}

// S paints s. Empty text stays empty so that no stray escapes reach the screen.
func (k Ink) S(s string) string {
	if s == "" || k.pre == "" {
		return s
	}
	return k.pre + s + k.post
}

// Symbols are the glyphs status is drawn with. A theme may swap them (the
// monochrome theme relies on them alone, so they must differ in shape).
type Symbols struct {
	OK, Fail, Active, Pending, Skipped, Unknown, Warn string
	// BarFull and BarEmpty draw step progress bars.
	BarFull, BarEmpty, BarFail string
	Arrow                      string
}

// Theme is every style the console draws with.
type Theme struct {
	Name Name
	// Dark is true when the theme is meant for a dark background.
	Dark bool
	Sym  Symbols

	// Whole-block styles (lipgloss, used a few times per frame).
	App        lipgloss.Style
	Dialog     lipgloss.Style // a recovery dialog or another overlay
	DialogText lipgloss.Style
	Help       help.Styles
	FilterText lipgloss.Style
	FilterMark lipgloss.Style

	// Inks (used per cell).
	Title         Ink // the console's name in the header
	HeaderCluster Ink
	HeaderVersion Ink
	PaneTitle     Ink
	PaneFocused   Ink // title of the focused pane
	Rule          Ink // separators between panes
	Muted         Ink
	Text          Ink
	Bold          Ink

	PhaseDone, PhaseActive, PhasePending, PhaseFailed, PhaseSkipped Ink

	CondTrue, CondFalse, CondUnknown Ink
	SevError, SevWarning, SevInfo    Ink
	// Failure is a failureMessage or a failed step: the one thing that must
	// jump out of the screen.
	Failure Ink

	TableHeader   Ink
	TableRow      Ink
	TableSelected Ink

	BadgeLive, BadgeConnecting, BadgeReconnecting, BadgeStale, BadgePaused Ink

	Stall Ink
	Done  Ink

	BarFull, BarEmpty, BarFail Ink
}

// palette is what distinguishes the colour themes.
type palette struct {
	fg, muted, faint, accent, ok, warn, err, info, selBg, selFg color.Color
}

var unicodeSymbols = Symbols{
	OK: "✓", Fail: "✗", Active: "●", Pending: "○", Skipped: "–", Unknown: "?", Warn: "⚠",
	BarFull: "█", BarEmpty: "░", BarFail: "▓", Arrow: "→",
}

func build(name Name, dark bool, p palette) Theme {
	st := lipgloss.NewStyle
	fg := func(c color.Color) lipgloss.Style { return st().Foreground(c) }
	ink := func(s lipgloss.Style) Ink { return NewInk(s) }

	t := Theme{Name: name, Dark: dark, Sym: unicodeSymbols}
	t.App = st()
	t.Dialog = st().Border(lipgloss.RoundedBorder()).BorderForeground(p.accent).Padding(0, 1)
	t.DialogText = fg(p.fg)
	t.Help = help.Styles{
		Ellipsis:       fg(p.faint),
		ShortKey:       fg(p.fg).Bold(true),
		ShortDesc:      fg(p.muted),
		ShortSeparator: fg(p.faint),
		FullKey:        fg(p.fg).Bold(true),
		FullDesc:       fg(p.muted),
		FullSeparator:  fg(p.faint),
	}
	t.FilterText = fg(p.fg)
	t.FilterMark = fg(p.accent).Bold(true)

	t.Title = ink(fg(p.accent).Bold(true))
	t.HeaderCluster = ink(fg(p.fg).Bold(true))
	t.HeaderVersion = ink(fg(p.fg))
	t.PaneTitle = ink(fg(p.muted).Bold(true))
	t.PaneFocused = ink(fg(p.accent).Bold(true).Underline(true))
	t.Rule = ink(fg(p.faint))
	t.Muted = ink(fg(p.muted))
	t.Text = ink(fg(p.fg))
	t.Bold = ink(fg(p.fg).Bold(true))

	t.PhaseDone = ink(fg(p.ok))
	t.PhaseActive = ink(fg(p.info).Bold(true))
	t.PhasePending = ink(fg(p.faint))
	t.PhaseFailed = ink(fg(p.err).Bold(true))
	t.PhaseSkipped = ink(fg(p.faint))

	t.CondTrue = ink(fg(p.ok))
	t.CondFalse = ink(fg(p.warn))
	t.CondUnknown = ink(fg(p.muted))
	t.SevError = ink(fg(p.err).Bold(true))
	t.SevWarning = ink(fg(p.warn))
	t.SevInfo = ink(fg(p.info))
	t.Failure = ink(fg(p.err).Bold(true))

	t.TableHeader = ink(fg(p.muted).Bold(true))
	t.TableRow = ink(fg(p.fg))
	t.TableSelected = ink(st().Foreground(p.selFg).Background(p.selBg))

	t.BadgeLive = ink(fg(p.ok).Bold(true))
	t.BadgeConnecting = ink(fg(p.muted))
	t.BadgeReconnecting = ink(fg(p.warn).Bold(true))
	t.BadgeStale = ink(fg(p.warn))
	t.BadgePaused = ink(fg(p.warn))

	t.Stall = ink(fg(p.warn).Bold(true))
	t.Done = ink(fg(p.ok).Bold(true))

	t.BarFull = ink(fg(p.ok))
	t.BarEmpty = ink(fg(p.faint))
	t.BarFail = ink(fg(p.err))
	return t
}

// NewDark is the default theme for dark terminals.
func NewDark() Theme { return build(Dark, true, darkPalette) }

// onSixteen picks the palette a colour theme draws with on a terminal of
// the given profile. Where the terminal has 16 colours the renderer turns
// each of the full palette's to its nearest (colorprofile.ANSI), and that
// is no choice at all: the dark theme's warning yellow and error red both
// became bright red, a stall read as a failure, and the light theme's
// amber became red too. There the theme draws with a palette of the 16
// chosen for their meaning instead.
func onSixteen(p colorprofile.Profile, full, sixteen palette) palette {
	if p == colorprofile.ANSI {
		return sixteen
	}
	return full
}

// darkPalette16 is the dark palette where the terminal has 16 colours: what
// the full one became there (bright colours, which read on black where the
// normal blue and red are dim), but for a warning that is yellow, an info
// told from the accent, and a cursor row on blue, the hue of the slate
// #3A3F58 (which became a grey, bright black).
var darkPalette16 = palette{
	fg:     lipgloss.BrightWhite,
	muted:  lipgloss.White,
	faint:  lipgloss.BrightBlack,
	accent: lipgloss.BrightBlue,
	ok:     lipgloss.BrightGreen,
	warn:   lipgloss.BrightYellow,
	err:    lipgloss.BrightRed,
	info:   lipgloss.BrightCyan,
	selBg:  lipgloss.Blue,
	selFg:  lipgloss.BrightWhite,
}

var darkPalette = palette{
	fg:     lipgloss.Color("#E4E4E4"),
	muted:  lipgloss.Color("#A0A0A0"),
	faint:  lipgloss.Color("#5F5F5F"),
	accent: lipgloss.Color("#7AA2F7"),
	ok:     lipgloss.Color("#73C991"),
	warn:   lipgloss.Color("#E5C07B"),
	err:    lipgloss.Color("#FF5F5F"),
	info:   lipgloss.Color("#61AFEF"),
	selBg:  lipgloss.Color("#3A3F58"),
	selFg:  lipgloss.Color("#FFFFFF"),
}

// NewLight is the theme for light terminals.
func NewLight() Theme { return build(Light, false, lightPalette) }

var lightPalette = palette{
	fg:    lipgloss.Color("#1F1F1F"),
	muted: lipgloss.Color("#5C5C5C"),
	// Pending phases and empty bar cells: #A8A8A8 read at 2.3:1 on a
	// white background; #767676 reads at 4.5:1.
	faint:  lipgloss.Color("#767676"),
	accent: lipgloss.Color("#2F5BD3"),
	ok:     lipgloss.Color("#1E7F3C"),
	warn:   lipgloss.Color("#9A6700"),
	err:    lipgloss.Color("#C41E1E"),
	info:   lipgloss.Color("#0B62A8"),
	selBg:  lipgloss.Color("#D5DDF5"),
	selFg:  lipgloss.Color("#000000"),
}

// lightPalette16 is the light palette where the terminal has 16 colours.
// Warnings are magenta, as in the light high-contrast theme: the amber
// became red, and ANSI yellow is drawn 1.7:1 on white (xterm's #cdcd00).
// The cursor row is white on blue: the pale #D5DDF5 became bright blue
// under black text, 2.4:1 where bright blue is #0000ff.
var lightPalette16 = palette{
	fg:     lipgloss.Black,
	muted:  lipgloss.BrightBlack,
	faint:  lipgloss.BrightBlack,
	accent: lipgloss.Blue,
	ok:     lipgloss.Green,
	warn:   lipgloss.Magenta,
	err:    lipgloss.Red,
	info:   lipgloss.Blue,
	selBg:  lipgloss.Blue,
	selFg:  lipgloss.BrightWhite,
}

// NewHighContrast uses the 16 basic ANSI colours at full intensity, which
// terminals map to their most legible shades, and never relies on faint text.
// It is drawn for a dark background; NewHighContrastFor picks by background.
func NewHighContrast() Theme { return NewHighContrastFor(true) }

// NewHighContrastFor is the high-contrast theme for a dark or a light
// background. The dark one's bright white text and bright green, cyan and
// yellow marks on a light terminal were the background's colour or near it
// (bright white on white), unreadable for the operators who ask for high
// contrast.
func NewHighContrastFor(dark bool) Theme {
	if !dark {
		t := build(HighContrast, false, palette{
			fg:     lipgloss.Black,
			muted:  lipgloss.Black,
			faint:  lipgloss.Black,
			accent: lipgloss.Blue,
			ok:     lipgloss.Green,
			warn:   lipgloss.Magenta,
			err:    lipgloss.Red,
			info:   lipgloss.Blue,
			selBg:  lipgloss.Black,
			selFg:  lipgloss.BrightWhite,
		})
		t.PaneTitle = NewInk(lipgloss.NewStyle().Bold(true))
		t.PaneFocused = NewInk(lipgloss.NewStyle().Reverse(true).Bold(true))
		return t
	}
	t := build(HighContrast, true, palette{
		fg:     lipgloss.BrightWhite,
		muted:  lipgloss.White,
		faint:  lipgloss.White,
		accent: lipgloss.BrightCyan,
		ok:     lipgloss.BrightGreen,
		warn:   lipgloss.BrightYellow,
		err:    lipgloss.BrightRed,
		info:   lipgloss.BrightCyan,
		selBg:  lipgloss.BrightWhite,
		selFg:  lipgloss.Black,
	})
	t.PaneTitle = NewInk(lipgloss.NewStyle().Bold(true))
	t.PaneFocused = NewInk(lipgloss.NewStyle().Reverse(true).Bold(true))
	return t
}

// NewMono draws without colour (NO_COLOR, dumb terminals, --theme mono):
// emphasis by weight, underline and reverse video only, and status by symbol.
func NewMono() Theme {
	st := lipgloss.NewStyle
	plain := Ink{}
	bold := NewInk(st().Bold(true))
	t := Theme{Name: Mono, Dark: true, Sym: unicodeSymbols}
	t.App = st()
	t.Dialog = st().Border(lipgloss.NormalBorder()).Padding(0, 1)
	t.DialogText = st()
	t.Help = help.Styles{
		Ellipsis: st(), ShortKey: st().Bold(true), ShortDesc: st(), ShortSeparator: st(),
		FullKey: st().Bold(true), FullDesc: st(), FullSeparator: st(),
	}
	t.FilterText = st()
	t.FilterMark = st().Bold(true)

	t.Title, t.HeaderCluster, t.HeaderVersion = bold, bold, plain
	t.PaneTitle = bold
	t.PaneFocused = NewInk(st().Reverse(true).Bold(true))
	t.Rule, t.Muted, t.Text, t.Bold = plain, plain, plain, bold
	t.PhaseDone, t.PhaseActive, t.PhasePending, t.PhaseFailed, t.PhaseSkipped = plain, bold, plain, bold, plain
	t.CondTrue, t.CondFalse, t.CondUnknown = plain, bold, plain
	t.SevError, t.SevWarning, t.SevInfo = bold, plain, plain
	t.Failure = NewInk(st().Bold(true).Underline(true))
	t.TableHeader = NewInk(st().Underline(true))
	t.TableRow = plain
	t.TableSelected = NewInk(st().Reverse(true))
	t.BadgeLive, t.BadgeConnecting, t.BadgeReconnecting, t.BadgeStale, t.BadgePaused = bold, plain, bold, bold, plain
	t.Stall, t.Done = bold, bold
	t.BarFull, t.BarEmpty, t.BarFail = plain, plain, bold
	return t
}

// InputStyles are the styles of a text input (the node filter, the typed
// confirmations): the prompt and text in the theme's, the placeholder told
// apart from typed text. Bubbles greys the placeholder with a colour alone,
// which NO_COLOR strips: in the monochrome theme "node, phase, step, failed,
// stalled…" and "cluster name" read as typed. It is faint there, an
// attribute NO_COLOR leaves.
func (t *Theme) InputStyles() textinput.Styles {
	ts := textinput.DefaultStyles(t.Dark)
	ts.Focused.Prompt = t.FilterMark
	ts.Focused.Text = t.FilterText
	if t.Name == Mono {
		ts.Focused.Placeholder = lipgloss.NewStyle().Faint(true)
		ts.Blurred.Placeholder = ts.Focused.Placeholder
	}
	return ts
}

// ForName returns the theme a name selects, as drawn where the terminal
// has 256 colours or more. Auto resolves to dark or light from the terminal
// background (isDark), and HighContrast to its variant for that background;
// callers resolve Auto to Mono first when colour is off (see ColorOff).
func ForName(n Name, isDark bool) Theme {
	return ForProfile(n, isDark, colorprofile.TrueColor)
}

// ForProfile is ForName for a terminal of the given colour profile: on one
// of 16 colours the dark and light themes draw with colours chosen among
// those 16 (see onSixteen). The high-contrast and monochrome themes are the
// same on every profile.
func ForProfile(n Name, isDark bool, p colorprofile.Profile) Theme {
	switch n {
	case Light:
		return build(Light, false, onSixteen(p, lightPalette, lightPalette16))
	case HighContrast:
		return NewHighContrastFor(isDark)
	case Mono:
		return NewMono()
	case Dark:
		return build(Dark, true, onSixteen(p, darkPalette, darkPalette16))
	default:
		if isDark {
			return ForProfile(Dark, true, p)
		}
		return ForProfile(Light, false, p)
	}
}

// ColorOff reports whether the environment asks for no colour: NO_COLOR set
// to anything (no-color.org), TERM=dumb, or output that is not a terminal.
// getenv is os.Getenv in production.
func ColorOff(getenv func(string) string, outputIsTerminal bool) bool {
	if getenv("NO_COLOR") != "" {
		return true
	}
	if getenv("TERM") == "dumb" {
		return true
	}
	return !outputIsTerminal
}
