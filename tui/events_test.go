package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
)

// TestZoomedEventsShowWholeMessages: in the layout an event is one row, its
// message cut at the width; zoomed (enter), the events pane shows each
// message whole, wrapped under its event, and scrolls over the rows; back
// in the layout, one row an event again.
func TestZoomedEventsShowWholeMessages(t *testing.T) {
	long := "Failed to apply the etcd spec: admission webhook \"vetcdadmcluster.kb.io\" denied the request: spec.etcdadmConfigSpec.cloudInitConfig.version: Invalid value: \"3.5.16\": the version cannot be changed while members are not ready\nretrying in 30s"
	s := fixtureHealthy()
	s.Events = append([]model.Event{{Type: "Warning", Reason: "ReconcileError", Message: long, ObjectKind: "EtcdadmCluster",
		ObjectName: "mgmt-etcd", Count: 3, LastTimestamp: t0.Add(-time.Minute)}}, s.Events...)
	d := newTestDashboard(t, s, themes.Mono, 80, 24)
	d.focus = paneEvents
	whole := strings.Join(strings.Fields(long), " ")
	flat := func() string { return strings.Join(strings.Fields(ansi.Strip(d.View())), " ") }
	if strings.Contains(flat(), whole) {
		t.Fatal("the message is whole in the layout already: the test shows nothing")
	}

	d.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if !d.Zoomed() {
		t.Fatal("enter did not zoom the events pane")
	}
	out := ansi.Strip(d.View())
	requireLines(t, out, 80, 24)
	if !strings.Contains(flat(), whole) {
		t.Errorf("zoomed events do not show the message whole:\n%s", out)
	}
	for _, want := range []string{"upgrade complete", "Machine mgmt-md-0-00011 is ready"} {
		if !strings.Contains(flat(), want) {
			t.Errorf("zoomed events lack %q:\n%s", want, out)
		}
	}
	// The footer says what enter does now.
	if !strings.Contains(out, "enter unzoom") || strings.Contains(out, "enter zoom") {
		t.Errorf("zoomed footer:\n%s", out)
	}

	// Zoomed out, an event is one row again.
	d.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if got := len(d.events.rows); got != len(s.Events) {
		t.Errorf("%d rows for %d events in the layout", got, len(s.Events))
	}
}

// TestZoomedEventsKeepTheirPlace: zooming keeps the event shown first at the
// top, wrapped or not, and the pane scrolls over the wrapped rows to the end.
func TestZoomedEventsKeepTheirPlace(t *testing.T) {
	s := fixtureHealthy()
	var evs []model.Event
	for i := range 30 {
		evs = append(evs, model.Event{Type: "Normal", Reason: "Progress", ObjectKind: "Machine", ObjectName: "m" + string(rune('a'+i%26)),
			Message: strings.Repeat("a long message that wraps on an eighty column screen ", 2), LastTimestamp: t0.Add(-time.Duration(i) * time.Minute)})
	}
	s.Events = evs
	p := &textPane{id: paneEvents}
	p.set(buildEventsPane(newStyles(ptrTheme(themes.NewMono())), s))
	p.scroll(5, 10)
	p.wrapTo(80)
	if got := p.lineAt(p.offset); got != 5 {
		t.Errorf("zoomed, the first event shown is %d, want 5", got)
	}
	if len(p.rows) <= len(p.lines) {
		t.Fatalf("%d rows for %d lines: nothing wrapped", len(p.rows), len(p.lines))
	}
	p.scroll(1<<20, 20)
	if want := len(p.rows) - 19; p.offset != want {
		t.Errorf("offset at the end %d, want %d", p.offset, want)
	}
	first := p.lineAt(p.offset)
	p.wrapTo(0)
	if p.offset != first {
		t.Errorf("zoomed out, the first event shown is %d, want %d", p.offset, first)
	}
}

// TestEventsTitleSaysOlderWereDropped: at the cap the pane holds only the
// newest events (the watchers forget the rest): the title says so, since
// the scroll hint alone ("↓ 199 more") read as the cluster's whole
// history. Below the cap, nothing was dropped and the title does not say
// it was.
func TestEventsTitleSaysOlderWereDropped(t *testing.T) {
	for _, n := range []int{2, maxEvents - 1, maxEvents, 2532} {
		s := fixtureInPlaceFailed()
		ev := s.Events[1]
		s.Events = make([]model.Event, n)
		for i := range s.Events {
			s.Events[i] = ev
			s.Events[i].LastTimestamp = ago(time.Duration(i) * time.Second)
		}
		d := newTestDashboard(t, s, themes.Mono, 80, 40)
		title := strings.SplitN(ansi.Strip(d.paneView(paneEvents, 80, 6)), "\n", 2)[0]
		capped := strings.Contains(title, "only the newest 200 kept")
		if capped != (n >= maxEvents) || (n > 5) != strings.Contains(title, "↓ ") {
			t.Errorf("%d events: title %q", n, title)
		}
	}
}

// The footer is cached by what it depends on: zooming a pane whose keys
// are otherwise the same (the cluster pane) must redraw it as "unzoom".
func TestZoomedFooterSaysUnzoomOnEveryPane(t *testing.T) {
	d := newTestDashboard(t, fixtureHealthy(), themes.Mono, 80, 24)
	d.focus = paneCluster
	d.relayout()
	if out := ansi.Strip(d.View()); !strings.Contains(out, "enter zoom") {
		t.Fatalf("footer before zooming:\n%s", out)
	}
	d.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if out := ansi.Strip(d.View()); !d.Zoomed() || !strings.Contains(out, "enter unzoom") {
		t.Errorf("zoomed %t, footer:\n%s", d.Zoomed(), out)
	}
}

// A tab in a message is a space on the pane's row, folded and zoomed: kept,
// it counted no cell, the terminal drew none, and "col1\tcol2" read
// "col1col2".
func TestEventsPaneShowsATabAsASpace(t *testing.T) {
	s := fixtureInPlaceFailed()
	s.Events = s.Events[:1]
	s.Events[0].Message = "col1\tcol2\tcol3"
	d := newTestDashboard(t, s, themes.Mono, 120, 40)
	if out := ansi.Strip(d.paneView(paneEvents, 120, 6)); !strings.Contains(out, "col1 col2 col3") {
		t.Errorf("the events pane:\n%s", out)
	}
	d.focus = paneEvents
	d.relayout()
	d.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if out := ansi.Strip(d.View()); !d.Zoomed() || !strings.Contains(out, "col1 col2 col3") {
		t.Errorf("zoomed %t:\n%s", d.Zoomed(), out)
	}
}

// A message with tabs is measured with each tab a cell, on its row and
// wrapped: measured raw, it ran a row past the width by its tabs.
func TestWrapWholeMeasuresTabsAsSpaces(t *testing.T) {
	l := line{segs: []seg{{"AB", rBold}, {"", rText}}, whole: "aa\tbb\tcc\tdd"}
	for _, w := range []int{12, 20} {
		for _, r := range wrapWhole(l, w) {
			var b strings.Builder
			for _, s := range r.segs {
				b.WriteString(s.text)
			}
			if got := width(b.String()); got > w || strings.Contains(b.String(), "\t") {
				t.Errorf("at %d: row %q, %d cells", w, b.String(), got)
			}
		}
	}
}
