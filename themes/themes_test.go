package themes

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
)

func TestParseName(t *testing.T) {
	for _, n := range Names {
		got, err := ParseName(string(n))
		if err != nil || got != n {
			t.Errorf("ParseName(%q) = %q, %v", n, got, err)
		}
	}
	_, err := ParseName("solarized")
	if err == nil || !strings.Contains(err.Error(), "high-contrast") {
		t.Fatalf("ParseName(solarized) error = %v, want one listing the valid names", err)
	}
}

func TestInkMatchesLipgloss(t *testing.T) {
	s := lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("#ff0000"))
	k := NewInk(s)
	if got, want := k.S("etcd"), s.Render("etcd"); got != want {
		t.Fatalf("Ink.S = %q, lipgloss = %q", got, want)
	}
	if k.S("") != "" {
		t.Fatal("painting empty text must not emit escapes")
	}
	if (Ink{}).S("x") != "x" {
		t.Fatal("zero Ink must leave text unchanged")
	}
}

func TestForName(t *testing.T) {
	cases := []struct {
		name   Name
		isDark bool
		want   Name
	}{
		{Auto, true, Dark},
		{Auto, false, Light},
		{Dark, false, Dark},
		{Light, true, Light},
		{HighContrast, false, HighContrast},
		{Mono, true, Mono},
	}
	for _, c := range cases {
		if got := ForName(c.name, c.isDark).Name; got != c.want {
			t.Errorf("ForName(%s, dark=%v) = %s, want %s", c.name, c.isDark, got, c.want)
		}
	}
}

func TestMonoHasNoColour(t *testing.T) {
	m := NewMono()
	for name, k := range map[string]Ink{
		"failure": m.Failure, "condFalse": m.CondFalse, "selected": m.TableSelected,
		"stall": m.Stall, "live": m.BadgeLive, "barFull": m.BarFull, "focused": m.PaneFocused,
	} {
		if hasColour(k.S("x")) {
			t.Errorf("mono %s = %q carries a colour", name, k.S("x"))
		}
	}
	if !hasColour(NewDark().Failure.S("x")) {
		t.Fatal("hasColour is blind: it must see the dark theme's red")
	}
	// Mono must still make a failure stand out.
	if m.Failure.S("x") == "x" {
		t.Error("mono failure must be emphasised")
	}
}

func TestColourThemesDistinguishStates(t *testing.T) {
	for _, th := range []Theme{NewDark(), NewLight(), NewHighContrast(), NewHighContrastFor(false)} {
		if th.CondTrue.S("x") == th.CondFalse.S("x") {
			t.Errorf("%s: True and False conditions look the same", th.Name)
		}
		if th.CondTrue.S("x") == th.Text.S("x") {
			t.Errorf("%s (dark %v): a True condition looks like plain text", th.Name, th.Dark)
		}
		if th.Failure.S("x") == th.Text.S("x") {
			t.Errorf("%s: failure looks like plain text", th.Name)
		}
		if th.TableSelected.S("x") == th.TableRow.S("x") {
			t.Errorf("%s: selected row looks like any row", th.Name)
		}
	}
	if !NewDark().Dark || NewLight().Dark {
		t.Error("Dark flag wrong")
	}
}

func TestColorOff(t *testing.T) {
	env := func(kv map[string]string) func(string) string {
		return func(k string) string { return kv[k] }
	}
	cases := []struct {
		env  map[string]string
		tty  bool
		want bool
	}{
		{map[string]string{"TERM": "xterm-256color"}, true, false},
		{map[string]string{"TERM": "xterm-256color", "NO_COLOR": "1"}, true, true},
		{map[string]string{"TERM": "xterm", "NO_COLOR": "yes"}, true, true},
		{map[string]string{"TERM": "dumb"}, true, true},
		{map[string]string{"TERM": "xterm"}, false, true},
	}
	for _, c := range cases {
		if got := ColorOff(env(c.env), c.tty); got != c.want {
			t.Errorf("ColorOff(%v, tty=%v) = %v, want %v", c.env, c.tty, got, c.want)
		}
	}
}

// The high-contrast theme's colours, as a terminal draws the 16 ANSI ones
// (x/ansi's palette), read at 4.5:1 at least on the background it is drawn
// for: on white, the dark variant's bright white text was 1:1.
func TestHighContrastReadsOnItsBackground(t *testing.T) {
	for _, tc := range []struct {
		dark bool
		bg   color.Color
	}{{true, color.Black}, {false, color.White}} {
		th := ForName(HighContrast, tc.dark)
		if th.Name != HighContrast || th.Dark != tc.dark {
			t.Fatalf("ForName(high-contrast, dark=%v) = %s dark=%v", tc.dark, th.Name, th.Dark)
		}
		for name, k := range map[string]Ink{
			"text": th.Text, "muted": th.Muted, "failure": th.Failure, "stall": th.Stall,
			"done": th.Done, "active": th.PhaseActive, "pending": th.PhasePending,
		} {
			c, ok := sgrColour(k.S("x"))
			if !ok {
				t.Fatalf("dark=%v: %s ink %q sets no basic colour", tc.dark, name, k.S("x"))
			}
			if r := contrast(c, tc.bg); r < 4.5 {
				t.Errorf("dark=%v: %s ink (ANSI %d) at %.2f:1 on its background", tc.dark, name, c, r)
			}
		}
	}
}

// sgrColour is the basic (16) foreground colour an SGR sequence in s sets.
func sgrColour(s string) (ansi.BasicColor, bool) {
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == '[' || r == 'm' }) {
		n, err := strconv.Atoi(f)
		switch {
		case err != nil:
		case n >= 30 && n <= 37:
			return ansi.BasicColor(n - 30), true
		case n >= 90 && n <= 97:
			return ansi.BasicColor(n - 90 + 8), true
		}
	}
	return 0, false
}

// hasColour reports whether any SGR sequence in s sets a colour.
func hasColour(s string) bool {
	for {
		i := strings.Index(s, "\x1b[")
		if i < 0 {
			return false
		}
		s = s[i+2:]
		j := strings.IndexByte(s, 'm')
		if j < 0 {
			return false
		}
		for _, p := range strings.Split(s[:j], ";") {
			n, err := strconv.Atoi(p)
			if err != nil {
				continue
			}
			if (n >= 30 && n <= 49) || (n >= 90 && n <= 107) {
				return true
			}
		}
		s = s[j:]
	}
}

// The faint ink (pending phases, empty bar cells) stays readable on the
// terminal's own background: 3:1 at least, as for large or non-text marks;
// the muted ink, which carries text, 4.5:1.
func TestInksReadOnTheirBackground(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    palette
		bg   color.Color
	}{{"dark", darkPalette, color.Black}, {"light", lightPalette, color.White}} {
		if c := contrast(tc.p.faint, tc.bg); c < 3 {
			t.Errorf("%s: faint at %.2f:1", tc.name, c)
		}
		if c := contrast(tc.p.muted, tc.bg); c < 4.5 {
			t.Errorf("%s: muted at %.2f:1", tc.name, c)
		}
	}
}

// A terminal of 16 colours (TERM=xterm-16color, xterm, the Linux console)
// gets each colour as the renderer downsamples it (colorprofile.ANSI). The
// nearest of 16 made the dark theme's warning yellow and error red the same
// bright red, and the light theme's amber red: a stall read as a failure.
// Drawn as such a terminal receives them, the status inks keep their hues
// apart, and no ink that draws text, a mark or the cursor row lands on the
// background's side of the 16: white or bright white on a light theme
// (xterm draws ANSI white #e5e5e5, 1.3:1 on white), black on a dark one.
func TestInksOnSixteenColours(t *testing.T) {
	for _, tc := range []struct {
		name Name
		dark bool
		bg   []ansi.BasicColor
	}{
		{Dark, true, []ansi.BasicColor{ansi.Black}},
		{Light, false, []ansi.BasicColor{ansi.White, ansi.BrightWhite}},
		{HighContrast, true, []ansi.BasicColor{ansi.Black}},
		{HighContrast, false, []ansi.BasicColor{ansi.White, ansi.BrightWhite}},
	} {
		th := ForProfile(tc.name, tc.dark, colorprofile.ANSI)
		label := fmt.Sprintf("%s dark=%v", tc.name, tc.dark)
		fgOf := func(what string, k Ink) ansi.BasicColor {
			t.Helper()
			fg, _ := onTerminal(t, colorprofile.ANSI, k)
			if fg < 0 {
				t.Fatalf("%s: %s ink %q sets no colour on 16 colours", label, what, k.S("x"))
			}
			return ansi.BasicColor(fg)
		}
		// hue is a colour's family: bright red is still red.
		hue := func(c ansi.BasicColor) ansi.BasicColor { return c % 8 }

		ok, warn, fail := fgOf("done", th.Done), fgOf("stall", th.Stall), fgOf("failure", th.Failure)
		for _, k := range []Ink{th.CondFalse, th.SevWarning, th.BadgeStale, th.BadgePaused, th.BadgeReconnecting} {
			if c := fgOf("warning", k); c != warn {
				t.Errorf("%s: a warning ink is ANSI %d, the stall's %d", label, c, warn)
			}
		}
		if hue(warn) == hue(fail) {
			t.Errorf("%s: warnings (ANSI %d) and failures (ANSI %d) are the same colour", label, warn, fail)
		}
		if hue(ok) == hue(warn) || hue(ok) == hue(fail) {
			t.Errorf("%s: done (ANSI %d) looks like a warning (%d) or a failure (%d)", label, ok, warn, fail)
		}
		inks := map[string]Ink{
			"text": th.Text, "muted": th.Muted, "title": th.Title, "done": th.Done,
			"stall": th.Stall, "failure": th.Failure, "active": th.PhaseActive,
			"pending": th.PhasePending, "rule": th.Rule, "bar empty": th.BarEmpty,
		}
		for what, k := range inks {
			c := fgOf(what, k)
			for _, b := range tc.bg {
				if c == b {
					t.Errorf("%s: %s ink is ANSI %d, the background's colour", label, what, c)
				}
			}
		}
		if title := fgOf("title", th.Title); hue(title) == hue(warn) || hue(title) == hue(fail) {
			t.Errorf("%s: the accent (ANSI %d) looks like a warning or a failure", label, title)
		}
		fg, bg := onTerminal(t, colorprofile.ANSI, th.TableSelected)
		if bg < 0 || fg < 0 || fg == bg {
			t.Fatalf("%s: cursor row %q draws no colours of its own on 16 colours", label, th.TableSelected.S("x"))
		}
		for _, b := range tc.bg {
			if ansi.BasicColor(bg) == b {
				t.Errorf("%s: cursor row on ANSI %d, the background's colour", label, bg)
			}
		}
	}
}

// On 256 colours and more the colour themes keep their own colours.
func TestFullColourKeepsThePalettes(t *testing.T) {
	for _, p := range []colorprofile.Profile{colorprofile.TrueColor, colorprofile.ANSI256} {
		for _, tc := range []struct {
			name Name
			pal  palette
		}{{Dark, darkPalette}, {Light, lightPalette}} {
			want := build(tc.name, tc.name == Dark, tc.pal)
			got := ForProfile(tc.name, tc.name == Dark, p)
			if got.Stall != want.Stall || got.Failure != want.Failure || got.TableSelected != want.TableSelected || got.PhasePending != want.PhasePending {
				t.Errorf("%s on %s: inks differ from the palette's", tc.name, p)
			}
		}
	}
}

// onTerminal is the foreground and background colour (-1: none) an ink's
// text carries once the renderer has downsampled it to profile p.
func onTerminal(t *testing.T, p colorprofile.Profile, k Ink) (fg, bg int) {
	t.Helper()
	var b strings.Builder
	w := &colorprofile.Writer{Forward: &b, Profile: p}
	if _, err := w.WriteString(k.S("x")); err != nil {
		t.Fatal(err)
	}
	fg, bg = -1, -1
	s := b.String()
	for {
		i := strings.Index(s, "\x1b[")
		if i < 0 {
			return fg, bg
		}
		s = s[i+2:]
		j := strings.IndexByte(s, 'm')
		if j < 0 {
			return fg, bg
		}
		ps := strings.Split(s[:j], ";")
		s = s[j:]
		for n := 0; n < len(ps); n++ {
			v, err := strconv.Atoi(ps[n])
			switch {
			case err != nil:
			case v == 38 || v == 48:
				t.Fatalf("ink %q keeps an extended colour on %s: %q", k.S("x"), p, b.String())
			case v >= 30 && v <= 37:
				fg = v - 30
			case v >= 90 && v <= 97:
				fg = v - 90 + 8
			case v >= 40 && v <= 47:
				bg = v - 40
			case v >= 100 && v <= 107:
				bg = v - 100 + 8
			}
		}
	}
}

// contrast is WCAG's contrast ratio of two colours.
func contrast(a, b color.Color) float64 {
	lum := func(c color.Color) float64 {
		r, g, bl, _ := c.RGBA()
		ch := func(v uint32) float64 {
			x := float64(v) / 65535
			if x <= 0.03928 {
				return x / 12.92
			}
			return math.Pow((x+0.055)/1.055, 2.4)
		}
		return 0.2126*ch(r) + 0.7152*ch(g) + 0.0722*ch(bl)
	}
	la, lb := lum(a), lum(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}
