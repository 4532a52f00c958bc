package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
)

// TestFilterFindsFailedAndStalledRows: the nodes title counts the failed
// machines and the status line names three stalls ("(+N more)"), but the
// filter read only the columns' text: "failed" and "stalled" found no row,
// and among thousands of rows nothing listed the stalls the status line
// had no room for. The filter matches the state a row's mark shows, and
// the title counts the stalled rows as it counts the failed.
func TestFilterFindsFailedAndStalledRows(t *testing.T) {
	filter := func(d *Dashboard, f string) {
		t.Helper()
		d.Update(tea.KeyPressMsg{Code: '/', Text: "/"})
		for _, r := range f {
			d.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
		}
		d.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	}
	rowsMarked := func(d *Dashboard, mark string) (n int) {
		for _, l := range strings.Split(screenOf(d), "\n") {
			if strings.HasPrefix(l, " "+mark+" mgmt-") {
				n++
			}
		}
		return n
	}

	d := newTestDashboard(t, fixtureInPlaceFailed(), themes.Mono, 120, 40)
	if title := paneTitle(t, d, "NODES"); !strings.Contains(title, "1 failed") {
		t.Fatalf("the fixture should have one failed machine: %q", title)
	}
	filter(d, "failed")
	if title := paneTitle(t, d, "NODES"); !strings.Contains(title, `filter "failed": 1 shown`) || rowsMarked(d, "✗") != 1 {
		t.Errorf("filter failed: %q, %d row(s) marked ✗\n%s", title, rowsMarked(d, "✗"), screenOf(d))
	}

	d = newTestDashboard(t, fixtureLarge(500), themes.Mono, 120, 60)
	stalled := 0
	for _, r := range d.nodes.all {
		if r.mark.r == rStall {
			stalled++
		}
	}
	if stalled <= maxStallLines || stalled > 25 {
		t.Fatalf("%d stalled rows: the test wants more than the status line shows, fewer than a screen", stalled)
	}
	if title := paneTitle(t, d, "NODES"); !strings.Contains(title, fmt.Sprintf("· %d stalled", stalled)) {
		t.Errorf("the title does not count the %d stalled rows: %q", stalled, title)
	}
	filter(d, "stalled")
	d.Update(tea.KeyPressMsg{Code: tea.KeyEnter}) // zoomed: every row in view
	title := paneTitle(t, d, "NODES")
	if !strings.Contains(title, fmt.Sprintf(`filter "stalled": %d shown`, stalled)) || rowsMarked(d, "⚠") != stalled {
		t.Errorf("filter stalled: %q, %d row(s) marked ⚠, want %d\n%s", title, rowsMarked(d, "⚠"), stalled, screenOf(d))
	}
}

// TestCAPIMachineFailureReadsAsFailed: a machine whose failureMessage CAPI
// set reads as failed in the nodes pane, its phase Running or not: its
// mark, the title's count, the "failed" filter. The upgrade's outcome is
// not the pane's to judge and stays as it was.
func TestCAPIMachineFailureReadsAsFailed(t *testing.T) {
	s := fixtureMachineFailed()
	d := newTestDashboard(t, s, themes.Mono, 120, 40)
	if title := paneTitle(t, d, "NODES"); !strings.Contains(title, "2 failed") {
		t.Errorf("title %q, want the in-place failure and the CAPI one counted", title)
	}
	var row *nodeRow
	for i := range d.nodes.all {
		if d.nodes.all[i].machine == failedWorker {
			row = &d.nodes.all[i]
		}
	}
	if row == nil || row.state() != "failed" || row.phase != "Running" || !row.matches("failed") {
		t.Fatalf("row of %s: %+v", failedWorker, row)
	}
	before := model.DeriveProgress(fixtureDetail(), model.ProgressOptions{}, t0)
	after := model.DeriveProgress(s, model.ProgressOptions{}, t0)
	if before.Failed != after.Failed || before.Current != after.Current {
		t.Errorf("the CAPI failure moved the upgrade's judgement: failed %v→%v, current %v→%v", before.Failed, after.Failed, before.Current, after.Current)
	}
}

// The filter's placeholder is told apart from a typed filter in the
// monochrome theme (NO_COLOR): Bubbles greyed it with a colour alone, which
// NO_COLOR strips, and "/node, phase, step, failed, stalled…" read as a
// filter typed and matching every row. It is faint, an attribute NO_COLOR
// keeps; what is typed is not.
func TestMonoFilterPlaceholderIsFaint(t *testing.T) {
	d := newTestDashboard(t, fixtureInPlaceFailed(), themes.Mono, 120, 40)
	d.Update(tea.KeyPressMsg{Code: '/', Text: "/"})
	line := func() string {
		for _, l := range strings.Split(d.View(), "\n") {
			if strings.Contains(l, "apply filter") {
				return l
			}
		}
		t.Fatalf("no filter line in:\n%s", d.View())
		return ""
	}
	// The cursor sits on the placeholder's first letter; the rest is faint.
	if l := line(); !strings.Contains(l, "\x1b[2mode, phase, step") {
		t.Errorf("placeholder not faint: %q", l)
	}
	for _, r := range "fail" {
		d.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	if l := line(); strings.Contains(l, "\x1b[2m") {
		t.Errorf("typed filter drawn faint: %q", l)
	}
}

// The filter row keeps its input 8 columns wide: on a terminal of 12 or
// fewer, with its margins, it ran past the right edge.
func TestFilterRowFitsATinyTerminal(t *testing.T) {
	for w := 1; w <= 20; w++ {
		d := newTestDashboard(t, fixtureInPlaceFailed(), themes.Mono, w, 3)
		d.Update(tea.KeyPressMsg{Code: '/', Text: "/"})
		d.Update(tea.KeyPressMsg{Code: 'x', Text: "x"})
		for i, l := range strings.Split(screenOf(d), "\n") {
			if lw := ansi.StringWidth(l); lw > w {
				t.Errorf("%dx3: line %d is %d wide: %q", w, i, lw, l)
			}
		}
	}
}

// At 40 columns the filter's keys did not fit beside its input, and the
// edge cut "esc clear filter" to "enter apply filter …": enter gives way,
// and esc, which clears the filter, is read whole. Wider, both show.
func TestFilterRowSaysEscAt40Columns(t *testing.T) {
	for _, c := range []struct {
		w    int
		want []string
	}{{40, []string{"esc clear filter"}}, {80, []string{"enter apply filter", "esc clear filter"}}} {
		d := newTestDashboard(t, fixtureInPlaceFailed(), themes.Mono, c.w, 24)
		d.Update(tea.KeyPressMsg{Code: '/', Text: "/"})
		d.Update(tea.KeyPressMsg{Code: 'x', Text: "x"})
		rows := strings.Split(screenOf(d), "\n")
		last := rows[len(rows)-1]
		for _, w := range c.want {
			if !strings.Contains(last, w) {
				t.Errorf("%d columns: the filter's row lacks %q: %q", c.w, w, last)
			}
		}
		if strings.Contains(last, "…") {
			t.Errorf("%d columns: the filter's row is cut: %q", c.w, last)
		}
	}
}
