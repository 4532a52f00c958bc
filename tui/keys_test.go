package tui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/upgrade-console/upgrade-console/themes"
)

// TestFullHelpShowsEveryKey: the full help (?) lists every binding, R
// recover offered, at every width it has room for: at 80 columns
// bubbles/help dropped its last column, "? help" and "q quit", without a
// mark. No row is wider than the screen (View puts a space before each).
func TestFullHelpShowsEveryKey(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(t0)
	for _, sz := range [][2]int{{80, 24}, {60, 24}, {40, 30}, {100, 30}, {120, 40}, {200, 50}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			d := recoveryDashboard(clk, withLock(fixtureHealthy(), staleLock()), sz[0], sz[1])
			d.Update(tea.KeyPressMsg{Code: '?', Text: "?"})
			if !d.help.ShowAll {
				t.Fatal("? did not open the full help")
			}
			out := screenOf(d)
			requireLines(t, out, sz[0], sz[1])
			if got, want := d.plan.helpLines, strings.Count(d.helpOut, "\n")+1; got != want {
				t.Fatalf("%d of the help's %d rows drawn", got, want)
			}
			rows := strings.Split(out, "\n")
			helpRows := strings.Join(rows[len(rows)-d.plan.helpLines:], "\n")
			for _, g := range d.keys.FullHelp() {
				for _, b := range g {
					re := regexp.MustCompile(`(^|\s)` + regexp.QuoteMeta(b.Help().Key) + ` +` + regexp.QuoteMeta(b.Help().Desc) + `(\s|$)`)
					if !re.MatchString(helpRows) {
						t.Errorf("full help lacks %q %q:\n%s", b.Help().Key, b.Help().Desc, helpRows)
					}
				}
			}
			if strings.Contains(helpRows, "…") {
				t.Errorf("full help cut:\n%s", helpRows)
			}
		})
	}
}

// TestFullHelpFittingKeepsTheLastGroupFirstWhenWrapped: wrapped onto more
// rows, the group with ? and q comes first, so a short screen, which cuts
// the help's last rows, keeps them; a column wider than the width is cut,
// never drawn past it.
func TestFullHelpFittingKeepsTheLastGroupFirstWhenWrapped(t *testing.T) {
	k := DefaultKeyMap()
	h := help.New()
	out := ansi.Strip(fullHelpFitting(h, k.FullHelp(), 39))
	first := strings.SplitN(out, "\n", 2)[0]
	if !regexp.MustCompile(`^\? +help`).MatchString(first) {
		t.Errorf("wrapped help does not start with ? help:\n%s", out)
	}
	for _, l := range strings.Split(ansi.Strip(fullHelpFitting(h, k.FullHelp(), 12)), "\n") {
		if w := ansi.StringWidth(l); w > 12 {
			t.Errorf("row %q is %d cells wide, more than 12", l, w)
		}
	}
}

// TestHelpNeverWiderThanTheScreen: the short help, the full help and the
// filter's help stay within the screen at every width. View puts a space
// before the help's rows, so the help has a cell less than the screen: at
// 79 columns the short help, exactly 79 cells, ran one past the edge, which
// the terminal cuts (the "t" of "q quit"); and with no room for its
// ellipsis bubbles/help adds the next binding past the width all the same
// (the short help below 33 columns, the filter's at 35 to 39).
func TestHelpNeverWiderThanTheScreen(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(t0)
	for w := 20; w <= 200; w++ {
		for _, s := range []*Dashboard{
			newTestDashboard(t, fixtureHealthy(), "mono", w, 30),
			recoveryDashboard(clk, withLock(fixtureHealthy(), staleLock()), w, 30),
		} {
			for _, k := range []tea.KeyPressMsg{{Code: '?', Text: "?"}, {Code: '?', Text: "?"}, {Code: '/', Text: "/"}} {
				requireLines(t, screenOf(s), w, 30)
				s.Update(k)
			}
			requireLines(t, screenOf(s), w, 30)
		}
	}
}

// TestDashboardEscUndoesOneThingAtATime: with the nodes zoomed and a filter
// on, the first esc only unzoomed, while the help says "esc clear filter"
// (and so does an empty table). esc now undoes what is on top first: the
// full help (it stayed open while esc cleared the filter behind it, as the
// plan screen and k9s do not), then the filter, as the help says, then the
// zoom.
func TestDashboardEscUndoesOneThingAtATime(t *testing.T) {
	d := newTestDashboard(t, fixtureMidEtcd(), "mono", 120, 40)
	if k := d.keys.ClearFilter.Help(); k.Key != "esc" || k.Desc != "clear filter" {
		t.Fatalf("the help says %q %q for esc; the test checks it clears the filter", k.Key, k.Desc)
	}
	esc := tea.KeyPressMsg{Code: tea.KeyEscape}
	d.Update(tea.KeyPressMsg{Code: '/', Text: "/"})
	for _, r := range "md-0" {
		d.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	d.Update(tea.KeyPressMsg{Code: tea.KeyEnter}) // accepts the filter
	d.Update(tea.KeyPressMsg{Code: tea.KeyEnter}) // zooms the nodes
	d.Update(tea.KeyPressMsg{Code: '?', Text: "?"})
	if d.Filter() != "md-0" || !d.Zoomed() || !d.help.ShowAll || d.Focus() != "NODES" {
		t.Fatalf("filter %q, zoomed %t, full help %t, focus %s: the test wants all three on the nodes", d.Filter(), d.Zoomed(), d.help.ShowAll, d.Focus())
	}
	for _, want := range []struct {
		filter       string
		zoom, helpOn bool
	}{
		{"md-0", true, false}, // what is on top first: the help
		{"", true, false},
		{"", false, false},
		{"", false, false},
	} {
		d.Update(esc)
		if d.Filter() != want.filter || d.Zoomed() != want.zoom || d.help.ShowAll != want.helpOn {
			t.Fatalf("after esc: filter %q, zoomed %t, full help %t; want %q, %t, %t",
				d.Filter(), d.Zoomed(), d.help.ShowAll, want.filter, want.zoom, want.helpOn)
		}
	}
	if !strings.Contains(screenOf(d), "NODES") {
		t.Errorf("the nodes pane is gone:\n%s", screenOf(d))
	}
}

// A full help taller than the screen covers the panes: it says that rows
// are left out, and the next key closes it instead of scrolling a pane
// nobody can see (the failed node scrolled away behind it at 60×20).
func TestFullHelpThatCoversThePanesTakesTheNextKey(t *testing.T) {
	d := NewDashboard(Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0)})
	d.SetSize(60, 14)
	d.Update(SnapshotMsg{State: fixtureLarge(100)})
	before := ansi.Strip(d.View())
	d.Update(tea.KeyPressMsg{Code: '?', Text: "?"})
	if v := ansi.Strip(d.View()); !strings.Contains(v, "more rows of help") {
		t.Fatalf("the cut help does not say so:\n%s", v)
	}
	d.Update(tea.KeyPressMsg{Code: 'G', Text: "G"})
	if after := ansi.Strip(d.View()); after != before {
		t.Errorf("the key did more than close the help:\nbefore\n%s\nafter\n%s", before, after)
	}
}

// e toggles the groups: its help says which way it goes now ("expand
// groups" said nothing of the way back).
func TestExpandHelpSaysWhichWay(t *testing.T) {
	d := NewDashboard(Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0)})
	d.SetSize(200, 50)
	d.Update(SnapshotMsg{State: fixtureLarge(20)})
	d.Update(tea.KeyPressMsg{Code: '?', Text: "?"})
	if v := ansi.Strip(d.View()); !strings.Contains(v, "expand groups") {
		t.Fatalf("help before e:\n%s", v)
	}
	d.Update(tea.KeyPressMsg{Code: 'e', Text: "e"})
	if v := ansi.Strip(d.View()); !strings.Contains(v, "collapse groups") || strings.Contains(v, "expand groups") {
		t.Errorf("help after e:\n%s", v)
	}
}

// Zoomed, tab zooms the next pane: the footer offered it, and with one pane
// visible it did nothing.
func TestTabWhileZoomedZoomsTheNextPane(t *testing.T) {
	d := NewDashboard(Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0)})
	d.SetSize(100, 30)
	d.Update(SnapshotMsg{State: fixtureMidEtcd()})
	d.Update(tea.KeyPressMsg{Code: 'z', Text: "z"})
	before := d.Focus()
	d.Update(tea.KeyPressMsg{Code: tea.KeyTab})
	if !d.Zoomed() || d.Focus() == before {
		t.Fatalf("zoomed %v, focus %s → %s", d.Zoomed(), before, d.Focus())
	}
	if v := ansi.Strip(d.View()); !strings.Contains(v, d.Focus()) {
		t.Errorf("the zoomed pane is not %s:\n%s", d.Focus(), v)
	}
	d.Update(tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift})
	if d.Focus() != before {
		t.Errorf("shift+tab: focus %s, want %s back", d.Focus(), before)
	}
}

// At 40 columns the row that says the full help is cut lost its end, the
// key that closes the help ("… 8 more rows of help: a taller termin…"): a
// shorter form keeps it, on the dashboard and the plan screen.
func TestCutHelpSaysItsKeyAt40Columns(t *testing.T) {
	d := NewDashboard(Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0)})
	d.SetSize(40, 14)
	d.Update(SnapshotMsg{State: fixtureLarge(100)})
	d.Update(tea.KeyPressMsg{Code: '?', Text: "?"})
	rows := strings.Split(ansi.Strip(d.View()), "\n")
	if last := rows[len(rows)-1]; !strings.Contains(last, "more rows") || !strings.Contains(last, "any key closes") || strings.HasSuffix(strings.TrimSpace(last), "…") {
		t.Errorf("the dashboard's cut help: %q", last)
	}
	p := newTestPlanScreen(t, fixturePlan(false), Options{}, PlanActions{}, 40, 10)
	p.Update(tea.KeyPressMsg{Code: '?', Text: "?"})
	rows = strings.Split(ansi.Strip(p.View()), "\n")
	if last := rows[len(rows)-1]; !strings.Contains(last, "more rows of help") || !strings.Contains(last, "? closes it") {
		t.Errorf("the plan's cut help: %q", last)
	}
}
