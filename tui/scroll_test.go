package tui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
)

// paneTitle is the title line of the named pane on the dashboard's screen.
func paneTitle(t *testing.T, d *Dashboard, name string) string {
	t.Helper()
	for _, l := range strings.Split(screenOf(d), "\n") {
		if strings.HasPrefix(l, " "+name+" ") {
			return l
		}
	}
	t.Fatalf("no %s pane on the screen:\n%s", name, screenOf(d))
	return ""
}

// paneBody is the first line under the named pane's title.
func paneBody(t *testing.T, d *Dashboard, name string) string {
	t.Helper()
	lines := strings.Split(screenOf(d), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, " "+name+" ") && i+1 < len(lines) {
			return lines[i+1]
		}
	}
	t.Fatalf("no %s pane on the screen:\n%s", name, screenOf(d))
	return ""
}

func TestScrollHintShowsOnlyDirectionsWithMore(t *testing.T) {
	th := themes.NewMono()
	st := newStyles(&th)
	p := textPane{id: paneEvents}
	var lines []line
	for i := range 20 {
		lines = append(lines, line{segs: []seg{{fmt.Sprintf(" event %02d", i), rText}}})
	}
	p.set(nil, availability{}, lines)
	const h = 6 // a title and five lines
	title := func() string {
		return strings.Join(strings.Fields(ansi.Strip(strings.SplitN(p.view(st, 60, h, true, time.Time{}), "\n", 2)[0])), " ")
	}
	for _, c := range []struct {
		name   string
		scroll int
		want   string
		last   string // the last line in view
	}{
		{"top", 0, "EVENTS ↓ 15 more", "event 04"},
		{"middle", 5, "EVENTS ↑ 5 ↓ 10", "event 09"},
		{"one before the end", 14, "EVENTS ↑ 14 ↓ 1", "event 18"},
		{"end", 1 << 30, "EVENTS ↑ 15 above", "event 19"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p.offset = 0
			p.scroll(c.scroll, h)
			if got := title(); got != c.want {
				t.Errorf("title %q, want %q", got, c.want)
			}
			out := strings.Split(ansi.Strip(p.view(st, 60, h, true, time.Time{})), "\n")
			if got := strings.TrimSpace(out[len(out)-1]); got != c.last {
				t.Errorf("last line in view %q, want %q", got, c.last)
			}
		})
	}
	short := textPane{id: paneEvents}
	short.set(nil, availability{}, lines[:5])
	if got := strings.SplitN(ansi.Strip(short.view(st, 60, h, true, time.Time{})), "\n", 2)[0]; strings.ContainsAny(got, "↑↓") {
		t.Errorf("a list that fits has a scroll hint: %q", got)
	}
}

// TestDashboardPagesByPage: PgDn and PgUp move a pane by the lines it shows,
// and End leaves no "more below" in its title.
func TestDashboardPagesByPage(t *testing.T) {
	d := newTestDashboard(t, fixtureMidEtcd(), themes.Mono, 80, 24)
	// The etcd pane: a title and three of its six lines at 80×24.
	d.Update(tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift})
	d.Update(tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift})
	if d.Focus() != "ETCD" || d.focusedHeight() != 4 {
		t.Fatalf("focus %s, %d rows; the test wants the etcd pane, 4 rows", d.Focus(), d.focusedHeight())
	}
	top := paneBody(t, d, "ETCD")
	if title := paneTitle(t, d, "ETCD"); !strings.HasSuffix(strings.TrimSpace(title), "↓ 3 more") {
		t.Fatalf("title at the top: %q", title)
	}
	d.Update(tea.KeyPressMsg{Code: tea.KeyPgDown})
	if title := paneTitle(t, d, "ETCD"); !strings.HasSuffix(strings.TrimSpace(title), "↑ 3 above") {
		t.Errorf("PgDn moved %d line(s), want a page of 3: %q", d.etcd.offset, title)
	}
	d.Update(tea.KeyPressMsg{Code: tea.KeyPgUp})
	if d.etcd.offset != 0 || paneBody(t, d, "ETCD") != top {
		t.Errorf("PgUp after PgDn left the pane at line %d", d.etcd.offset)
	}
	// ↓ moves the pane's cursor; the lines move once it passes the last
	// one in view.
	d.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	d.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	if title := paneTitle(t, d, "ETCD"); d.etcd.cursor != 2 || !strings.HasSuffix(strings.TrimSpace(title), "↓ 3 more") {
		t.Errorf("cursor on line %d, title %q: two lines down, want the cursor on the third line and the lines where they were", d.etcd.cursor, title)
	}
	d.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	if title := paneTitle(t, d, "ETCD"); !strings.HasSuffix(strings.TrimSpace(title), "↑ 1 ↓ 2") {
		t.Errorf("title with the cursor a line past the window: %q", title)
	}
	d.Update(tea.KeyPressMsg{Code: tea.KeyEnd})
	if title := paneTitle(t, d, "ETCD"); strings.Contains(title, "↓") || !strings.HasSuffix(strings.TrimSpace(title), "↑ 3 above") {
		t.Errorf("title at the end: %q", title)
	}
}

// TestNodesPaneScrollHint: the nodes table's title counts the rows out of
// view the same way, whatever its cursor.
func TestNodesPaneScrollHint(t *testing.T) {
	d := newTestDashboard(t, fixtureMidEtcd(), themes.Mono, 80, 24)
	d.Update(tea.KeyPressMsg{Code: 'e', Text: "e"}) // a row per machine
	if d.Focus() != "NODES" {
		t.Fatalf("focus %s, want NODES", d.Focus())
	}
	rows, page := len(d.nodes.rows), d.focusedHeight()-2 // under the title and the column header
	if rows <= 2*page {
		t.Fatalf("%d rows in pages of %d: the test wants more than two pages", rows, page)
	}
	title := func() string { return strings.Join(strings.Fields(paneTitle(t, d, "NODES")), " ") }
	if got, want := title(), fmt.Sprintf("up to date ↓ %d more", rows-page); !strings.HasSuffix(got, want) {
		t.Errorf("at the top: %q, want it to end %q", got, want)
	}
	d.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	d.Update(tea.KeyPressMsg{Code: tea.KeyPgDown})
	if got, want := title(), fmt.Sprintf("up to date ↑ %d ↓ %d", page, rows-2*page); !strings.HasSuffix(got, want) {
		t.Errorf("a page down: %q, want it to end %q", got, want)
	}
	if d.nodes.cursor != page+1 {
		t.Errorf("cursor on row %d after a page down from row 1, want %d", d.nodes.cursor, page+1)
	}
	d.Update(tea.KeyPressMsg{Code: tea.KeyPgUp})
	if got, want := title(), fmt.Sprintf("up to date ↓ %d more", rows-page); !strings.HasSuffix(got, want) || d.nodes.cursor != 1 {
		t.Errorf("a page up: %q on row %d, want it to end %q on row 1", got, d.nodes.cursor, want)
	}
	d.Update(tea.KeyPressMsg{Code: tea.KeyEnd})
	if got, want := title(), fmt.Sprintf("up to date ↑ %d above", rows-page); !strings.HasSuffix(got, want) {
		t.Errorf("at the end: %q, want it to end %q", got, want)
	}
}

// TestNodesEndFollowsTheGrowingList: G went to the last row of a large
// fleet, and the rows that arrived right after it were below the window
// ("↑ 4 ↓ 10"). G follows the end as the list grows, as less +F and k9s do,
// until the operator moves up.
func TestNodesEndFollowsTheGrowingList(t *testing.T) {
	s := fixtureLarge(200)
	d := newTestDashboard(t, s, themes.Mono, 120, 40)
	d.Update(tea.KeyPressMsg{Code: 'e', Text: "e"}) // a row per machine
	if d.Focus() != "NODES" {
		t.Fatalf("focus %s, want NODES", d.Focus())
	}
	title := func() string { return strings.Join(strings.Fields(paneTitle(t, d, "NODES")), " ") }
	atEnd := func() bool {
		return d.nodes.cursor == len(d.nodes.rows)-1 && !strings.Contains(title(), "↓")
	}
	grow := func(n int) {
		t.Helper()
		next := *s
		next.Version = s.Version + 1
		ms, ns := workers(n, "md-9", newK8s, ago(time.Minute))
		for i := range ms {
			// Joining the fleet: new machines, not yet up to date.
			ms[i].Phase, ns[i].Ready = "Provisioning", false
			ms[i].Name = fmt.Sprintf("mgmt-md-9-new-%05d", s.Machines.Len()+i)
			ms[i].NodeName, ns[i].Name = ms[i].Name, ms[i].Name
		}
		for _, m := range s.Machines.All() {
			ms = append(ms, m)
		}
		for _, n := range s.Nodes.All() {
			ns = append(ns, n)
		}
		next.Machines, next.Nodes = model.ListOf(ms...), model.ListOf(ns...)
		s = &next
		d.Update(SnapshotMsg{State: s})
		d.Update(frameMsg{}) // the snapshot came within the frame interval
		if d.built != s.Version {
			t.Fatalf("snapshot %d not built (built %d)", s.Version, d.built)
		}
	}
	before := len(d.nodes.rows)
	d.Update(tea.KeyPressMsg{Code: 'G', Text: "G"})
	if !atEnd() {
		t.Fatalf("G: cursor on row %d of %d, title %q", d.nodes.cursor, len(d.nodes.rows), title())
	}
	grow(14)
	if len(d.nodes.rows) <= before {
		t.Fatalf("%d rows, no more than the %d before: the test wants the list to grow", len(d.nodes.rows), before)
	}
	if !atEnd() {
		t.Errorf("rows arrived after G: cursor on row %d of %d, title %q", d.nodes.cursor, len(d.nodes.rows), title())
	}
	grow(3)
	if !atEnd() {
		t.Errorf("more rows: cursor on row %d of %d, title %q", d.nodes.cursor, len(d.nodes.rows), title())
	}

	// Up lets go: the cursor stays on its row as rows arrive (above it:
	// the new machines are listed first), not on the last.
	d.Update(tea.KeyPressMsg{Code: tea.KeyUp})
	name := d.nodes.rows[d.nodes.cursor].name
	grow(5)
	if got := d.nodes.rows[d.nodes.cursor].name; got != name || atEnd() {
		t.Errorf("after up: cursor on row %d of %d (%q, was %q), title %q", d.nodes.cursor, len(d.nodes.rows), got, name, title())
	}
	// And G takes it up again.
	d.Update(tea.KeyPressMsg{Code: tea.KeyEnd})
	grow(2)
	if !atEnd() {
		t.Errorf("End again: cursor on row %d of %d, title %q", d.nodes.cursor, len(d.nodes.rows), title())
	}
}

// TestNodesCursorKeepsItsRow: at fleet scale machines join and leave above
// the row the operator reads several times a second. The cursor kept its
// index, so the highlighted machine and the rows around it changed under
// it with no key pressed; it stays on its machine, on the same screen line.
func TestNodesCursorKeepsItsRow(t *testing.T) {
	s := fixtureLarge(200)
	d := newTestDashboard(t, s, themes.Mono, 120, 40)
	d.Update(tea.KeyPressMsg{Code: 'e', Text: "e"}) // a row per machine
	if d.Focus() != "NODES" {
		t.Fatalf("focus %s, want NODES", d.Focus())
	}
	for range 30 {
		d.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	}
	name, line := d.nodes.rows[d.nodes.cursor].name, d.nodes.cursor-d.nodes.offset
	if d.nodes.offset == 0 || name == "" {
		t.Fatalf("cursor on row %d (%q), window at %d: the test wants a scrolled window on a machine", d.nodes.cursor, name, d.nodes.offset)
	}
	selected := func() string {
		t.Helper()
		for _, l := range strings.Split(d.View(), "\n") {
			if strings.Contains(l, "\x1b[7m") || strings.Contains(l, "\x1b[48") {
				return strings.Fields(ansi.Strip(l))[1]
			}
		}
		t.Fatalf("no row selected:\n%s", screenOf(d))
		return ""
	}
	if got := selected(); got != name {
		t.Fatalf("the screen selects %q, the cursor is on %q", got, name)
	}
	// Three new machines of the first worker group, listed first: their
	// rows come before the cursor's.
	next := *s
	next.Version = s.Version + 1
	ms, ns := workers(3, "md-0", newK8s, ago(time.Minute))
	for i := range ms {
		ms[i].Phase, ns[i].Ready = "Provisioning", false
		ms[i].Name = fmt.Sprintf("mgmt-md-0-new-%d", i)
		ms[i].NodeName, ns[i].Name = ms[i].Name, ms[i].Name
	}
	var all []*model.Machine
	for _, m := range s.Machines.All() {
		if m.Owner == "mgmt-md-0" && ms != nil {
			all, ms = append(all, ms...), nil
		}
		all = append(all, m)
	}
	for _, n := range s.Nodes.All() {
		ns = append(ns, n)
	}
	next.Machines, next.Nodes = model.ListOf(all...), model.ListOf(ns...)
	d.Update(SnapshotMsg{State: &next})
	d.Update(frameMsg{})
	if d.built != next.Version {
		t.Fatalf("snapshot %d not built (built %d)", next.Version, d.built)
	}
	if got := d.nodes.rows[d.nodes.cursor].name; got != name {
		t.Errorf("after rows arrived above it the cursor is on %q, was on %q", got, name)
	}
	if got := d.nodes.cursor - d.nodes.offset; got != line {
		t.Errorf("the cursor's row moved from screen line %d to %d", line, got)
	}
	if got := selected(); got != name {
		t.Errorf("the screen selects %q, want %q", got, name)
	}
}

// A cursor left on the first row follows the first row: the operator who
// has not moved it sees the failed machine that sorts to the top selected,
// not the machine that was first when the console opened.
func TestNodesCursorAtTheTopFollowsTheTop(t *testing.T) {
	s := fixtureLarge(200)
	d := newTestDashboard(t, s, themes.Mono, 120, 40)
	d.Update(tea.KeyPressMsg{Code: 'e', Text: "e"})
	if d.nodes.cursor != 0 || d.nodes.offset != 0 {
		t.Fatalf("cursor %d, window %d: the test wants the cursor on the first row", d.nodes.cursor, d.nodes.offset)
	}
	first := d.nodes.rows[0].name
	next := *s
	next.Version = s.Version + 1
	ms, ns := workers(1, "md-0", newK8s, ago(time.Minute))
	ms[0].Name, ms[0].Phase = "mgmt-md-0-failed", "Failed"
	ms[0].NodeName, ns[0].Name = ms[0].Name, ms[0].Name
	next.Machines = model.ListOf(append([]*model.Machine{ms[0]}, s.Machines.Slice()...)...)
	next.Nodes = model.ListOf(append(ns, s.Nodes.Slice()...)...)
	d.Update(SnapshotMsg{State: &next})
	d.Update(frameMsg{})
	if got := d.nodes.rows[0].name; got == first {
		t.Fatalf("the new machine did not sort first (first row %q)", got)
	}
	if d.nodes.cursor != 0 {
		t.Errorf("the cursor stayed on %q (row %d), want the first row %q", d.nodes.rows[d.nodes.cursor].name, d.nodes.cursor, d.nodes.rows[0].name)
	}
}

// Failed machines head the table; the cursor on one whose failure cleared
// followed it back among its group's rows, and the window jumped from the
// failures at the top to the table's end.
func TestNodesCursorStaysAtTheTopWhenItsFailureClears(t *testing.T) {
	s := fixtureLarge(200)
	failed := func(s *model.ClusterState, v uint64, names ...string) *model.ClusterState {
		next := *s
		next.Version = s.Version + v
		var ms []*model.Machine
		for _, m := range s.Machines.All() {
			c := *m
			if slices.Contains(names, c.Name) {
				c.Phase = "Failed"
			}
			ms = append(ms, &c)
		}
		next.Machines = model.ListOf(ms...)
		return &next
	}
	// Two machines up to date, at the table's end once their failures
	// clear.
	var last []string
	for _, r := range newTestDashboard(t, s, themes.Mono, 120, 40).nodes.all {
		if r.settled && r.machine != "" {
			last = append(last, r.machine)
		}
	}
	last = last[len(last)-2:]
	d := newTestDashboard(t, failed(s, 1, last...), themes.Mono, 120, 40)
	d.Update(tea.KeyPressMsg{Code: 'e', Text: "e"})
	d.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	if d.nodes.cursor != 1 || !d.nodes.rows[1].first() || d.nodes.rows[1].machine != last[1] {
		t.Fatalf("cursor %d on %q: the test wants it on the second failed machine, %s", d.nodes.cursor, d.nodes.rows[d.nodes.cursor].machine, last[1])
	}
	next := failed(s, 2, last[0]) // the second's failure cleared
	d.Update(SnapshotMsg{State: next})
	d.Update(frameMsg{})
	if d.nodes.cursor != 1 || d.nodes.offset != 0 {
		t.Errorf("the cursor went to row %d (window at %d) with its machine, want it kept at the top", d.nodes.cursor, d.nodes.offset)
	}
}

// eventsFrom is n events, newest first, numbered from first up (the newest
// the highest), each a second after the one before.
func eventsFrom(first, n int) []model.Event {
	evs := make([]model.Event, 0, n)
	for i := first + n - 1; i >= first; i-- {
		evs = append(evs, model.Event{Namespace: "eksa-system", Name: fmt.Sprintf("ev-%04d", i), Type: "Normal",
			Reason: "Step", Message: fmt.Sprintf("message %04d", i), ObjectKind: "Machine", ObjectName: "mgmt-md-0-x",
			LastTimestamp: t0.Add(time.Duration(i-first-n) * time.Second), ResourceVersion: uint64(i)})
	}
	return evs
}

// TestEventsPaneKeepsTheLinesInViewWhileEventsArrive: new events come at
// the top, newest first, and the pane's offset was an index: scrolled 5
// lines down, at fleet scale the title went ↑ 5 ↓ 205, ↑ 5 ↓ 207, and the
// lines under the operator moved every second with no key pressed. The
// lines in view stay on their rows; at the top the newest still come in
// view; and when the lines in view are dropped past the cap, the pane
// shows its last page.
func TestEventsPaneKeepsTheLinesInViewWhileEventsArrive(t *testing.T) {
	s := fixtureHealthy()
	s.Events = eventsFrom(0, 150)
	d := newTestDashboard(t, s, themes.Mono, 120, 40)
	for d.Focus() != "EVENTS" {
		d.Update(tea.KeyPressMsg{Code: tea.KeyTab})
	}
	d.Update(tea.KeyPressMsg{Code: tea.KeyEnter}) // zoom
	for range 5 {
		d.Update(tea.KeyPressMsg{Code: 'j', Text: "j"})
	}
	body := func() []string {
		t.Helper()
		lines := strings.Split(screenOf(d), "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, " EVENTS ") {
				var out []string
				for _, b := range lines[i+1 : i+1+d.plan.height[paneEvents]-1] {
					out = append(out, strings.TrimSpace(b))
				}
				return out
			}
		}
		t.Fatalf("no EVENTS pane:\n%s", screenOf(d))
		return nil
	}
	version := s.Version
	arrive := func(evs []model.Event) {
		t.Helper()
		next := *s
		version++
		next.Version, next.Events = version, evs
		d.Update(SnapshotMsg{State: &next})
		d.Update(frameMsg{})
		if d.built != version {
			t.Fatalf("snapshot %d not built (built %d)", version, d.built)
		}
	}
	title, before := paneTitle(t, d, "EVENTS"), body()
	if !strings.Contains(title, "↑ 5 ") || !strings.Contains(before[0], "message 0144") {
		t.Fatalf("after 5 down: title %q, first line %q", title, before[0])
	}

	// Three newer events, and the newest of those in view fired again: it
	// goes to the top (its version changed); the lines around it stay.
	evs := append(eventsFrom(150, 3), s.Events...)
	again := evs[3+7]
	again.ResourceVersion, again.Count = 1000, 2
	evs = append([]model.Event{again}, slices.Delete(evs, 3+7, 3+8)...)
	arrive(evs)
	after := body()
	if got := paneTitle(t, d, "EVENTS"); !strings.Contains(got, "↑ 9 ") {
		t.Errorf("title %q, want the 4 lines added above counted: ↑ 9", got)
	}
	want := slices.DeleteFunc(slices.Clone(before), func(l string) bool { return strings.Contains(l, "message 0142") })
	if len(want) == len(before) || !slices.Equal(after[:len(want)], want) {
		t.Errorf("lines in view moved:\nbefore %q\nafter  %q", before, after)
	}

	// At the cap, the lines in view dropped off the end: the last page.
	d.Update(tea.KeyPressMsg{Code: 'G', Text: "G"})
	arrive(eventsFrom(53, maxEvents))
	last := body()
	if want := "message 0053"; !strings.Contains(last[len(last)-1], want) {
		t.Errorf("last line in view %q, want the oldest kept, %q", last[len(last)-1], want)
	}
	if got := paneTitle(t, d, "EVENTS"); !strings.Contains(got, "above") {
		t.Errorf("title %q, want the end of the list (↑ n above)", got)
	}

	// At the top the newest events come into view.
	d.Update(tea.KeyPressMsg{Code: 'g', Text: "g"})
	arrive(eventsFrom(54, maxEvents))
	if got := body()[0]; !strings.Contains(got, "message 0253") {
		t.Errorf("at the top the first line is %q, want the newest, message 0253", got)
	}
}
