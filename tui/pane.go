package tui

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/upgrade-console/upgrade-console/model"
)

// paneID names a dashboard pane. The order is the tab order.
type paneID int

const (
	paneCluster paneID = iota
	paneEtcd
	paneControlPlane
	paneNodes
	paneEvents
	paneCount
)

var paneNames = [paneCount]string{"CLUSTER", "ETCD", "CONTROL PLANE", "NODES", "EVENTS"}

func (p paneID) String() string { return paneNames[p] }

// availability says whether a pane has data to show or why not.
type availability struct {
	// msg is shown instead of the body when not empty: "syncing…",
	// "forbidden: list machines…", "stacked etcd…".
	msg string
	r   role
}

// sourceAvailability turns the watchers' per-kind status into what a pane
// says before it has data. A nil state means no snapshot arrived yet.
func sourceAvailability(s *model.ClusterState, kinds ...model.Kind) availability {
	if s == nil {
		return availability{msg: "syncing…", r: rMuted}
	}
	for _, k := range kinds {
		src := s.Source(k)
		if src.Forbidden != "" {
			msg := "forbidden: " + src.Forbidden
			if fix := model.GrantFor(src.Forbidden, s.Conn); fix != "" {
				msg += "; " + fix
			}
			return availability{msg: msg, r: rSevError}
		}
	}
	for _, k := range kinds {
		src, ok := s.Sources[k]
		if ok && src.Installed && !src.Synced {
			return availability{msg: "syncing…", r: rMuted}
		}
		if !ok && s.Sources != nil {
			return availability{msg: "syncing…", r: rMuted}
		}
	}
	return availability{}
}

// paintAvail draws an availability's message on the pane's n body rows,
// wrapped to its width w, the last row cut with "…" when more remain, and
// blank rows after it. An access fix (the RBAC rule and the `kubectl auth
// can-i` that checks it) runs to some 300 columns: on one row it was cut
// before its verbs and its command, the pane zoomed at 150 columns.
func paintAvail(b *strings.Builder, st *styles, av availability, w, n int) {
	rows := wrapWords(av.msg, max(w-1, 1))
	if len(rows) > n {
		rows = rows[:n]
		if n > 0 {
			rows[n-1] = truncate(rows[n-1]+" …", max(w-1, 1))
		}
	}
	for i := range n {
		if i > 0 {
			b.WriteByte('\n')
		}
		if i < len(rows) {
			st.paintSegs(b, []seg{{" ", rText}, {rows[i], av.r}}, w)
		} else {
			b.WriteString(spaces(w))
		}
	}
}

// line is one body line of a text pane: segments on the left and, right
// aligned, how long ago something happened.
type line struct {
	segs  []seg
	since time.Time
	// whole, when set, is the last segment's text in full (an event's
	// message, which the line cuts at the pane's width): a pane that wraps
	// (textPane.wrapTo) shows it whole.
	whole string
	// key, when set, is what the line is the same line by from one
	// snapshot to the next (an event and its version): a pane scrolled
	// away from its top keeps the line on its screen row while lines are
	// added or dropped above it (textPane.set).
	key string
	// machine is the Machine the line is about (an etcd member): d on it
	// opens the node detail.
	machine string
	// cmd is a command the line shows without backquotes (the Cluster API
	// resume, in parentheses): y copies it too.
	cmd string
}

// renderKey is everything a pane's output depends on. A pane re-renders only
// when its key changes, so a frame in which nothing changed costs a compare.
type renderKey struct {
	gen            uint64 // bumped whenever the pane's data is rebuilt
	w, h           int
	focused        bool
	offset, cursor int
	nowSec         int64
	styles         *styles
}

type renderCache struct {
	key   renderKey
	out   string
	valid bool
}

func (c *renderCache) get(k renderKey) (string, bool) {
	if c.valid && c.key == k {
		return c.out, true
	}
	return "", false
}

func (c *renderCache) put(k renderKey, out string) string {
	c.key, c.out, c.valid = k, out, true
	return out
}

// textPane is a titled list of lines that scrolls: the cluster, control
// plane, etcd and events panes.
type textPane struct {
	id    paneID
	title []seg // after the pane's name
	avail availability
	lines []line
	// usesClock is true when lines show "since" and so change every second.
	usesClock bool

	// rows are the lines as drawn: the lines themselves, or, when wrapW is
	// set, with their whole texts wrapped to it; starts[i] is then the row
	// line i starts at.
	rows   []line
	wrapW  int
	starts []int

	offset int
	// selectable panes (the etcd pane) have a cursor, a row index, that
	// ↑/↓ move and the scroll follows, shown while the pane is focused:
	// the members are machines an operator must reach (d describes them).
	selectable bool
	cursor     int
	// height is the pane's height in the last layout (its title included),
	// 0 before the first: set clamps the offset to it.
	height int
	gen    uint64
	cache  renderCache
}

// set replaces the pane's content (in Update, never in View).
//
// At the top the pane shows what is first, the newest events as they
// come. Scrolled away from it, the lines in view stay on their screen
// rows: the first of them still listed (a key that did not change)
// keeps its row, and the offset moves by the lines added or dropped above
// it. Events come newest first, and an offset kept as an index moved the
// text under the operator every second, at fleet scale, while they read
// it. When every line in view is gone (the oldest events dropped past
// the cap), the nearest line above them that is left keeps its row, and
// the offset is clamped to the last page.
func (p *textPane) set(title []seg, avail availability, lines []line) {
	var anchors []string
	var rows []int
	if p.offset > 0 && avail.msg == "" && p.avail.msg == "" {
		anchors, rows = p.anchors()
	}
	// The cursor stays on its line (a member, by its machine's name) and
	// on its screen row, as the nodes pane's does: members reorder as they
	// fail, stall and leave, and a cursor kept by index moved onto another
	// machine. Left on the first row, it follows the first row, where the
	// failed member sorts.
	cursorKey, cursorRow, anchored := "", 0, false
	if p.selectable && p.cursor < len(p.rows) && (p.cursor > 0 || p.offset > 0) && avail.msg == "" && p.avail.msg == "" {
		cursorKey, cursorRow, anchored = p.rows[p.cursor].key, p.cursor-p.offset, true
	}
	p.title, p.avail, p.lines = title, avail, lines
	p.rewrap()
	p.gen++
	if len(anchors) > 0 {
		at := make(map[string]int, len(lines))
		for i := range lines {
			if k := lines[i].key; k != "" {
				if _, dup := at[k]; !dup {
					at[k] = i
				}
			}
		}
		for n, k := range anchors {
			if i, ok := at[k]; ok {
				p.offset = p.rowOf(i) - rows[n]
				break
			}
		}
	}
	p.clampOffset(p.height)
	if !p.selectable {
		return
	}
	if anchored {
		// A line without a key (a condition), or a member gone (deleted
		// by a rollback), keeps the cursor's screen row.
		p.cursor = p.offset + cursorRow
		if cursorKey != "" {
			if i := slices.IndexFunc(lines, func(l line) bool { return l.key == cursorKey }); i >= 0 {
				p.cursor = p.rowOf(i)
				p.offset = max(p.cursor-cursorRow, 0)
			}
		}
	}
	p.moveCursor(0, p.height)
}

// anchors are the keys of the lines in view, first to last, then of those
// above the view, nearest first, each with the screen row it starts at
// (under the title; negative above the view).
func (p *textPane) anchors() (keys []string, rows []int) {
	body := max(p.height-1, 1)
	first := p.lineAt(p.offset)
	add := func(i int) {
		if k := p.lines[i].key; k != "" {
			keys, rows = append(keys, k), append(rows, p.rowOf(i)-p.offset)
		}
	}
	for i := first; i < len(p.lines) && p.rowOf(i) < p.offset+body; i++ {
		add(i)
	}
	for i := min(first, len(p.lines)) - 1; i >= 0; i-- {
		add(i)
	}
	return keys, rows
}

// rowOf is the row line i starts at.
func (p *textPane) rowOf(i int) int {
	if p.starts == nil {
		return i
	}
	return p.starts[i]
}

// wrapTo wraps the lines' whole texts to w cells, or, with 0, cuts them
// again (in Update, never in View). The line shown first stays first.
func (p *textPane) wrapTo(w int) {
	if w == p.wrapW {
		return
	}
	first := p.lineAt(p.offset)
	p.wrapW = w
	p.rewrap()
	p.offset = first
	if p.starts != nil && first < len(p.starts) {
		p.offset = p.starts[first]
	}
	p.gen++
	p.clampOffset(0)
}

// lineAt is the index of the line row r belongs to.
func (p *textPane) lineAt(r int) int {
	if p.starts == nil {
		return r
	}
	i, found := slices.BinarySearch(p.starts, r)
	if !found {
		i--
	}
	return max(i, 0)
}

func (p *textPane) rewrap() {
	if p.wrapW <= 0 || !slices.ContainsFunc(p.lines, func(l line) bool { return l.whole != "" }) {
		p.rows, p.starts = p.lines, nil
		return
	}
	p.rows = make([]line, 0, len(p.lines))
	p.starts = make([]int, 0, len(p.lines))
	for _, l := range p.lines {
		p.starts = append(p.starts, len(p.rows))
		p.rows = append(p.rows, wrapWhole(l, p.wrapW)...)
	}
}

// sinceCells is the room a wrapped line keeps for its "since" ("10d23h"
// and the gap before it).
const sinceCells = 8

// wrapWhole is a line with its whole text at w cells: on the line when it
// fits there, else wrapped on rows of their own under it, indented as a
// condition's message is.
func wrapWhole(l line, w int) []line {
	if l.whole == "" || len(l.segs) == 0 {
		return []line{l}
	}
	last := len(l.segs) - 1
	room := w - segsWidth(l.segs[:last])
	if !l.since.IsZero() {
		room -= sinceCells
	}
	// A tab is a space, measured as one: it counted no cell.
	whole := oneRow(l.whole)
	if !strings.Contains(whole, "\n") && width(whole) <= room {
		segs := slices.Clone(l.segs)
		segs[last].text = whole
		return []line{{segs: segs, since: l.since}}
	}
	const indent = "     "
	out := []line{{segs: l.segs[:last], since: l.since}}
	for _, part := range strings.Split(strings.TrimSpace(whole), "\n") {
		for _, r := range wrap(part, max(w-len(indent)-1, 1)) {
			out = append(out, line{segs: []seg{{indent + r, l.segs[last].r}}})
		}
	}
	return out
}

// want is the height the pane would like: its title and every line.
func (p *textPane) want() int {
	if p.avail.msg != "" {
		return 2
	}
	return 1 + len(p.rows)
}

func (p *textPane) scroll(delta, h int) {
	if p.selectable {
		p.moveCursor(delta, h)
		return
	}
	p.offset += delta
	p.clampOffset(h)
}

// page moves the window and the cursor of a selectable pane by delta rows
// together, as the nodes pane pages; another pane scrolls.
func (p *textPane) page(delta, h int) {
	if !p.selectable {
		p.scroll(delta, h)
		return
	}
	p.offset += delta
	p.clampOffset(h)
	p.moveCursor(delta, h)
}

// moveCursor moves the cursor by delta rows and the window to keep it in
// view (h is the pane's height, title included; 0 before the first
// layout, when the window stays).
func (p *textPane) moveCursor(delta, h int) {
	p.cursor = max(min(p.cursor+delta, len(p.rows)-1), 0)
	if h <= 0 {
		return
	}
	body := max(h-1, 1)
	if p.cursor < p.offset {
		p.offset = p.cursor
	}
	if p.cursor >= p.offset+body {
		p.offset = p.cursor - body + 1
	}
	p.clampOffset(h)
}

// selectedMachine is the Machine of the line under the cursor; empty when
// the pane has no cursor or the line is about none.
func (p *textPane) selectedMachine() string {
	if !p.selectable || p.avail.msg != "" || p.cursor >= len(p.rows) {
		return ""
	}
	return p.rows[p.cursor].machine
}

func (p *textPane) clampOffset(h int) {
	body := max(h-1, 1)
	if h == 0 {
		body = 1
	}
	p.offset = min(p.offset, max(len(p.rows)-body, 0))
	p.offset = max(p.offset, 0)
}

// view renders exactly h lines of exactly w cells.
func (p *textPane) view(st *styles, w, h int, focused bool, now time.Time) string {
	if w <= 0 || h <= 0 {
		return ""
	}
	k := renderKey{gen: p.gen, w: w, h: h, focused: focused, offset: p.offset, styles: st}
	if p.selectable {
		k.cursor = p.cursor
	}
	if p.usesClock {
		k.nowSec = now.Unix()
	}
	if out, ok := p.cache.get(k); ok {
		return out
	}
	var b strings.Builder
	body := h - 1
	below := 0
	if p.avail.msg == "" {
		below = max(len(p.rows)-p.offset-body, 0)
	}
	writeTitle(&b, st, p.id, p.title, w, focused, p.offset, below)
	if p.avail.msg != "" && body > 0 {
		b.WriteByte('\n')
		paintAvail(&b, st, p.avail, w, body)
		return p.cache.put(k, b.String())
	}
	for i := 0; i < body; i++ {
		b.WriteByte('\n')
		j := p.offset + i
		if j >= len(p.rows) {
			b.WriteString(spaces(w))
			continue
		}
		if p.selectable && focused && j == p.cursor {
			writeSelectedLine(&b, st, p.rows[j], w, now)
			continue
		}
		writeLine(&b, st, p.rows[j], w, now)
	}
	return p.cache.put(k, b.String())
}

// writeTitle draws a pane's title line: its name (highlighted when focused),
// the title segments, and a scroll hint on the right.
func writeTitle(b *strings.Builder, st *styles, id paneID, title []seg, w int, focused bool, above, below int) {
	nameRole := rPaneTitle
	if focused {
		nameRole = rPaneFocused
	}
	hint := scrollHint(above, below)
	segs := make([]seg, 0, len(title)+3)
	segs = append(segs, seg{" " + id.String() + " ", nameRole})
	if len(title) > 0 {
		segs = append(segs, seg{" ", rText})
		segs = append(segs, title...)
	}
	hw := 0
	if hint != "" {
		hw = width(hint) + 2
	}
	if w-hw < 8 {
		hint, hw = "", 0
	}
	st.paintSegs(b, segs, w-hw)
	if hint != "" {
		b.WriteByte(' ')
		b.WriteString(st.paint(rMuted, hint))
		b.WriteByte(' ')
	}
}

// countsText is the bare counts of the rows above and below a view, the
// short form the dialogs put beside their keys where scrollHint's does not
// fit.
func countsText(above, below int) string {
	return strconv.Itoa(above) + "↑ " + strconv.Itoa(below) + "↓"
}

// scrollHint says how many lines are out of view above and below: an arrow
// only for a direction that has more, so the end of a list never claims
// there is more to come.
func scrollHint(above, below int) string {
	switch {
	case above > 0 && below > 0:
		return "↑ " + strconv.Itoa(above) + " ↓ " + strconv.Itoa(below)
	case above > 0:
		return "↑ " + strconv.Itoa(above) + " above"
	case below > 0:
		return "↓ " + strconv.Itoa(below) + " more"
	}
	return ""
}

// writeSelectedLine draws the line under the cursor as the nodes pane draws
// its selected row: the whole line in one style, "since" right aligned.
func writeSelectedLine(b *strings.Builder, st *styles, l line, w int, now time.Time) {
	var plain strings.Builder
	for _, s := range l.segs {
		plain.WriteString(s.text)
	}
	text := plain.String()
	if s := since(l.since, now); s != "" && w >= 20 {
		text = fit(text, w-width(s)-2) + "  " + s
	}
	b.WriteString(st.paint(rSelected, fit(text, w)))
}

// writeLine draws one body line: segments, then "since" right aligned.
func writeLine(b *strings.Builder, st *styles, l line, w int, now time.Time) {
	s := since(l.since, now)
	if s == "" || w < 20 {
		st.paintSegs(b, l.segs, w)
		return
	}
	sw := width(s)
	st.paintSegs(b, l.segs, w-sw-2)
	b.WriteString("  ")
	b.WriteString(st.paint(rMuted, s))
}
