package tui

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/upgrade-console/upgrade-console/model"
)

// This file decides where every pane goes (in Update, after data, size,
// focus or zoom change) and joins the cached pane outputs (in View).
//
// Degrading at small sizes follows a fixed order so the screen is never
// garbled, only shorter: first the events pane goes, then etcd, then the
// control plane, then the cluster pane, leaving the nodes table (while the
// etcd phase is under way, held or failed, etcd goes after the cluster
// pane: etcdUnderWay); the header
// loses its phase strip below 12 rows and the help line below 10; a pause
// on the status line wraps onto up to a third of the rows (whole from 80×24
// up) and is cut past that, a command in it first replaced by a pointer at
// y where that makes it fit; the nodes table drops columns (version, role,
// since, phase, steps) as the width shrinks. Every line is exactly the
// terminal's width.

// wideLayout is the width from which the cluster and etcd panes sit side by
// side.
const wideLayout = 100

type section struct {
	left, right paneID // right < 0: the left pane takes the full width
	h           int
}

type layoutPlan struct {
	headerLines int
	stallLines  int
	helpLines   int
	sections    []section
	visible     [paneCount]bool
	height      [paneCount]int
	leftW       int
	rightW      int

	// stalls are the status rows drawn (stallLines of them), and
	// stallMore how many status lines did not fit, counted on the last.
	stalls    []line
	stallMore int
	// helpCut: the full help is taller than the screen leaves it, and
	// covers the panes; its last row says so, and a key closes it first
	// (it scrolled a pane nobody could see).
	helpCut bool
	// stallShown is how many of the dashboard's status lines the rows
	// show, whole or cut: y copies their commands.
	stallShown int
}

const noPane paneID = -1

type allocItem struct {
	left, right paneID
	min, want   int
	// full is what the pane would show uncapped; it gets that only from
	// rows the nodes table does not need.
	full    int
	h       int
	dropped bool
}

func (d *Dashboard) relayout() {
	w, h := d.w, d.h
	var p layoutPlan
	if w <= 0 || h <= 0 {
		d.plan = p
		return
	}
	// Zoomed, one pane takes the body and has rows to spare: the status
	// lines "(+N more)" hid get them (no key showed them at 80×24).
	budget := 1
	if h >= 30 || (d.zoom && h >= 16) {
		budget = maxStallLines
	}
	// The pause may run past the budget, to be read whole, up to a third
	// of the screen: at 80×24 it takes two or three rows of the 24 and
	// every pane keeps its minimum; on a tiny screen it is cut instead.
	limit := max(budget, h/3)
	if d.overlaid {
		budget, limit = 1, 1
	}
	d.layoutStalls(&p, w, budget, limit)
	// Laid out before the help, which lists y only while a status line
	// shown names a command.
	d.keys.Copy.SetEnabled(len(d.paneCommands(d.statusCommands(p.stallShown))) > 0)
	d.refreshHelp()
	p.helpLines = strings.Count(d.helpOut, "\n") + 1
	if d.filtering {
		p.helpLines = 1
	} else if h < 10 && !d.helpKey.quit {
		p.helpLines = 0
	}
	switch {
	case h >= 12:
		p.headerLines = 2
	case h >= 5:
		p.headerLines = 1
	}
	body := h - p.headerLines - p.stallLines - p.helpLines
	for body < 1 && (p.helpLines > 0 || p.stallLines > 0 || p.headerLines > 0) {
		switch {
		case p.helpLines > 0:
			p.helpLines--
		case p.headerLines > 0:
			p.headerLines--
		default:
			p.stallLines--
		}
		body++
	}
	p.helpCut = d.help.ShowAll && !d.filtering && !d.helpKey.quit && p.helpLines < strings.Count(d.helpOut, "\n")+1
	if p.stallLines < len(p.stalls) {
		d.layoutStalls(&p, w, min(budget, p.stallLines), p.stallLines)
		body = h - p.headerLines - p.stallLines - p.helpLines
	}
	// Zoomed, the events pane has the screen's width to show each message
	// whole; in the layout it keeps one row per event.
	if d.zoom && d.focus == paneEvents {
		d.events.wrapTo(w)
	} else {
		d.events.wrapTo(0)
	}
	if d.zoom {
		p.sections = []section{{left: d.focus, right: noPane, h: body}}
		p.visible[d.focus] = true
		p.height[d.focus] = body
		p.leftW = w
		d.plan = p
		d.etcd.moveCursor(0, p.height[paneEtcd])
		if d.focus == paneNodes {
			d.nodes.setHeight(p.height[paneNodes])
		}
		d.clampTextPanes()
		return
	}
	items := d.allocate(body, w >= wideLayout)
	for _, it := range items {
		if it.dropped || it.h <= 0 {
			continue
		}
		p.sections = append(p.sections, section{left: it.left, right: it.right, h: it.h})
		p.visible[it.left] = true
		p.height[it.left] = it.h
		if it.right != noPane {
			p.visible[it.right] = true
			p.height[it.right] = it.h
		}
	}
	p.leftW = w
	if w >= wideLayout {
		p.leftW = (w - 1) / 2
		p.rightW = w - p.leftW - 1
	}
	d.plan = p
	if !p.visible[d.focus] {
		d.focus = paneNodes
	}
	// The etcd pane's height moves with the others' content: its cursor
	// stays in view.
	d.etcd.moveCursor(0, p.height[paneEtcd])
	if p.visible[paneNodes] {
		// Hidden (another pane zoomed, a screen too short), it keeps its
		// place for when it shows again.
		d.nodes.setHeight(p.height[paneNodes])
	}
	d.clampTextPanes()
}

// etcdUnderWay reports whether the etcd phase is the one under way, held
// by a pause, or failed: its members are then what the upgrade waits on.
func (d *Dashboard) etcdUnderWay() bool {
	for _, ph := range d.progress.Phases {
		if ph.Phase == model.PhaseEtcd {
			return ph.Status == model.PhaseActive || ph.Status == model.PhaseHeld || ph.Status == model.PhaseBroken
		}
	}
	return false
}

// clampTextPanes keeps each shown text pane's window full for its new
// height: scrolled to its end, a pane that grew (zoomed, the terminal
// made taller) kept the offset of its old height, ten events over a blank
// screen, until the next snapshot.
func (d *Dashboard) clampTextPanes() {
	for _, tp := range [...]*textPane{&d.cluster, &d.cp, &d.events} {
		if d.plan.visible[tp.id] {
			tp.clampOffset(d.plan.height[tp.id])
		}
	}
}

// allocate shares the body's rows between the panes: everyone gets a
// minimum, panes are dropped (events first) until the minimums fit, then
// rows go to the panes in order of importance up to what they want, and
// what is left goes to the nodes table.
func (d *Dashboard) allocate(body int, wide bool) []allocItem {
	capTo := func(want, limit int) int { return min(want, max(limit, 3)) }
	clusterWant := capTo(d.cluster.want(), body/3)
	etcdWant := capTo(d.etcd.want(), body/3)
	etcdMin := min(2, d.etcd.want())
	var items []allocItem
	if wide {
		items = append(items, allocItem{left: paneCluster, right: paneEtcd, min: max(3, etcdMin),
			want: max(clusterWant, etcdWant), full: max(d.cluster.want(), d.etcd.want())})
	} else {
		items = append(items,
			allocItem{left: paneCluster, right: noPane, min: 3, want: clusterWant, full: d.cluster.want()},
			allocItem{left: paneEtcd, right: noPane, min: etcdMin, want: etcdWant, full: d.etcd.want()})
	}
	items = append(items,
		allocItem{left: paneControlPlane, right: noPane, min: 2, want: capTo(d.cp.want(), body/4), full: d.cp.want()},
		allocItem{left: paneNodes, right: noPane, min: 3, want: d.nodes.want(), full: d.nodes.want()},
		allocItem{left: paneEvents, right: noPane, min: 2, want: capTo(d.events.want(), body/5), full: d.events.want()},
	)
	find := func(id paneID) *allocItem {
		for i := range items {
			if items[i].left == id || items[i].right == id {
				return &items[i]
			}
		}
		return nil
	}
	sumMin := func() int {
		n := 0
		for _, it := range items {
			if !it.dropped {
				n += it.min
			}
		}
		return n
	}
	dropOrder := []paneID{paneEvents, paneEtcd, paneControlPlane, paneCluster}
	if d.etcdUnderWay() {
		// At 40x12, etcd stuck, its pane went first of the three, and
		// nothing on the screen named the member that held the
		// upgrade: the control plane waits for etcd, and the cluster's
		// conditions say only that etcd is not ready.
		dropOrder = []paneID{paneEvents, paneControlPlane, paneCluster, paneEtcd}
	}
	for _, id := range dropOrder {
		if sumMin() <= body {
			break
		}
		it := find(id)
		if it.right == id {
			it.right = noPane // etcd leaves the shared row, cluster keeps it
			continue
		}
		if it.left == id && it.right != noPane {
			// The cluster leaves the shared row, etcd keeps it.
			it.left, it.right = it.right, noPane
			it.min, it.want, it.full = etcdMin, etcdWant, d.etcd.want()
			continue
		}
		it.dropped = true
	}
	nodes := find(paneNodes)
	left := body
	if sumMin() > body {
		for i := range items {
			items[i].dropped = items[i].left != paneNodes
		}
		nodes.h = body
		return items
	}
	for i := range items {
		if !items[i].dropped {
			items[i].h = items[i].min
			left -= items[i].min
		}
	}
	// Two rounds: first every pane up to a modest share (so the nodes table
	// shows rows even on 80×24), then up to everything it wants.
	firstRound := map[paneID]int{paneCluster: 5, paneEtcd: 4, paneControlPlane: 3, paneNodes: 10, paneEvents: 3}
	order := []paneID{paneCluster, paneEtcd, paneControlPlane, paneNodes, paneEvents}
	for round := 0; round < 2; round++ {
		for _, id := range order {
			it := find(id)
			if it == nil || it.dropped || left <= 0 || it.left != id {
				continue
			}
			target := it.want
			if round == 0 {
				target = min(it.want, max(firstRound[id], it.min))
			}
			g := min(max(target-it.h, 0), left)
			it.h += g
			left -= g
		}
	}
	// Rows the nodes table does not need go to the panes that were capped.
	for _, id := range order {
		it := find(id)
		if it == nil || it.dropped || left <= 0 || it.left != id || id == paneNodes {
			continue
		}
		g := min(max(it.full-it.h, 0), left)
		it.h += g
		left -= g
	}
	nodes.h += left
	return items
}

// layoutStalls lays the status lines out in rows: each line one row (cut
// to the width when drawn), in order, at most budget lines in limit rows. The
// pause is wrapped, never cut while it fits in limit rows: it ends in the
// command that resumes the upgrade, which the operator came for, and it
// comes before the stalls. A failure is wrapped where it fits
// in limit rows whole. Lines that do not fit are counted on the last row.
func (d *Dashboard) layoutStalls(p *layoutPlan, w, budget, limit int) {
	rows := d.stallRowBuf[:0]
	shown := 0
	lastPause := false // the last row is the pause's
	for i, ln := range d.stalls {
		// budget counts lines, limit rows: a failure wrapped over two
		// rows used to take a stall's place, which then showed only as
		// "(+1 more)" where nothing reveals it.
		if shown >= budget || len(rows) >= limit {
			break
		}
		shown++
		if i != d.pauseLine {
			// A failure wraps too, as far as the pause may: cut, its end
			// (the reason, what resumes it) was lost, and at 80×24 the
			// budget is one row.
			if wrapped := failureRows(ln, w); len(wrapped) > 1 && len(rows)+len(wrapped) <= limit {
				rows = append(rows, wrapped...)
			} else {
				rows = append(rows, ln)
			}
			lastPause = false
			continue
		}
		wrapped := d.pauseRows(ln, w)
		texts := d.pauseWrap.texts
		room := limit - len(rows)
		// Filling its rows, the pause's last row has the count of the
		// lines left out beside it, which cuts it when drawn.
		aw := w - width(pauseIndent(room == 1))
		if more := d.stallCount - shown; more > 0 {
			aw -= width(moreText(more))
		}
		fits := func(texts []string) bool {
			return len(texts) < room || len(texts) == room && width(texts[room-1]) <= aw
		}
		if !fits(texts) {
			// Cut, the pause ended in half the command that resumes
			// the upgrade (40x12: "resume with `upgrade-console lock
			// clear paused -…"), which pasted runs something else:
			// where the pause does not fit whole, the sentence
			// points at y, which copies the command whole and names
			// it, and only its words can be cut.
			if pointed := pointAtCommands(ln.segs[0].text); pointed != ln.segs[0].text {
				texts, wrapped = wrapPause(pointed, ln.segs[0].r, w)
			}
		}
		if len(wrapped) >= room {
			// The last row it gets holds the rest, cut with an
			// ellipsis when drawn, but for the pointer at y.
			rows = append(rows, wrapped[:room-1]...)
			rest := keepPointer(strings.Join(texts[room-1:], " "), aw)
			rows = append(rows, line{segs: []seg{{pauseIndent(room == 1) + rest, rPaused}}})
		} else {
			rows = append(rows, wrapped...)
		}
		lastPause = true
	}
	more := d.stallCount - shown
	if more > 0 && lastPause && len(rows) < limit &&
		segsWidth(rows[len(rows)-1].segs)+width(moreText(more)) > w {
		// The count on a row of its own, the pause kept whole.
		rows = append(rows, line{})
	}
	d.stallRowBuf = rows
	p.stalls, p.stallMore, p.stallLines, p.stallShown = rows, max(more, 0), len(rows), shown
}

// yPointer stands for a command in a status line too long for its rows.
const yPointer = "the command y copies"

// pointAtCommands is text with each command to paste in it (backquoted)
// replaced by a pointer at y, which copies the commands of the status
// lines shown.
func pointAtCommands(text string) string {
	for _, c := range backquoted(text) {
		text = strings.ReplaceAll(text, "`"+c+"`", yPointer)
	}
	return text
}

// keepPointer is the last row of a pause cut to w cells: where the cut
// would fall in the pointer at y (40x12: "removed: see the command …"),
// the words before it give way to it instead, so that the row still says
// where the command is.
func keepPointer(rest string, w int) string {
	i := strings.Index(rest, yPointer)
	if i < 0 || width(rest[:i+len(yPointer)]) <= w {
		return rest
	}
	const gap = "… "
	room := w - width(gap+yPointer)
	head := ""
	for _, word := range strings.Fields(rest[:i]) {
		if width(head+word+" ") > room {
			break
		}
		head += word + " "
	}
	return head + gap + rest[i:]
}

// failureRows is a failure's status line wrapped to w cells, its rows after
// the first indented to the text after the mark; any other line, or one
// that fits, is itself.
func failureRows(ln line, w int) []line {
	if len(ln.segs) != 1 || ln.segs[0].r != rFailure || width(ln.segs[0].text) <= w {
		return []line{ln}
	}
	text := ln.segs[0].text
	cut := strings.Index(strings.TrimLeft(text, " "), " ")
	if cut < 0 {
		return []line{ln}
	}
	lead := len(text) - len(strings.TrimLeft(text, " ")) + cut + 1
	indent := spaces(width(text[:lead]))
	texts := wrapWords(text[lead:], w-width(indent))
	if len(texts) < 2 {
		return []line{ln}
	}
	out := make([]line, len(texts))
	for i, t := range texts {
		p := indent
		if i == 0 {
			p = text[:lead]
		}
		out[i] = line{segs: []seg{{p + t, rFailure}}}
	}
	return out
}

// pauseWrap is the pause's line wrapped to a width.
type pauseWrap struct {
	text  string // the pause's sentence
	w     int
	texts []string // its rows' text, without the mark or the indent
	rows  []line
}

// pauseRows returns the pause's line ln wrapped to w cells: the first row
// behind the mark, the others indented to the text after it.
func (d *Dashboard) pauseRows(ln line, w int) []line {
	text := strings.TrimPrefix(ln.segs[0].text, pausePrefix)
	pw := &d.pauseWrap
	if pw.text == text && pw.w == w && pw.rows != nil {
		return pw.rows
	}
	pw.text, pw.w = text, w
	pw.texts, pw.rows = wrapPause(text, ln.segs[0].r, w)
	return pw.rows
}

// wrapPause wraps the pause's text (without its mark) to w cells: its
// rows' text, and the rows behind the mark or the indent.
func wrapPause(text string, r role, w int) (texts []string, rows []line) {
	text = strings.TrimPrefix(text, pausePrefix)
	texts = wrapWords(text, w-width(pausePrefix))
	if len(texts) == 0 {
		// Narrower than the mark: one row, cut when drawn.
		texts = []string{text}
	}
	rows = make([]line, len(texts))
	for i, t := range texts {
		rows[i] = line{segs: []seg{{pauseIndent(i == 0) + t, r}}}
	}
	return texts, rows
}

// pauseIndent starts a row of the pause: the mark on the first, as many
// spaces on the others.
func pauseIndent(first bool) string {
	if first {
		return pausePrefix
	}
	return spaces(width(pausePrefix))
}

// moreText counts the status lines not shown.
func moreText(n int) string { return "  (+" + strconv.Itoa(n) + " more)" }

// refreshHelp renders the help footer when what it shows changed.
func (d *Dashboard) refreshHelp() {
	_, describe := d.describable()
	d.keys.Describe.SetEnabled(describe)
	// An etcd member is a Machine without a Node: "describe node" named
	// what it does not have.
	member := d.focus == paneEtcd
	what := "describe node"
	if member {
		what = "describe member"
	}
	d.keys.Describe.SetHelp(d.keys.Describe.Help().Key, what)
	// e toggles: "expand groups" said nothing of the way back.
	groups := "expand groups"
	if d.expand {
		groups = "collapse groups"
	}
	d.keys.Expand.SetHelp(d.keys.Expand.Help().Key, groups)
	k := helpKey{w: d.w, all: d.help.ShowAll, filtering: d.filtering, quit: d.quitPrompt(), st: d.st, actions: d.actionsGen, describe: describe, member: member, zoom: d.zoom,
		copy: d.keys.Copy.Enabled(), expand: d.expand}
	if k == d.helpKey && d.helpOut != "" {
		return
	}
	d.helpKey = k
	if k.quit {
		d.helpOut = d.st.paint(rStall, truncate(quitPromptText(max(d.w-1, 0), len(d.progress.FailedStalls()) > 0, d.opts.Demo), max(d.w-1, 0)))
		return
	}
	if d.filtering {
		// Where both do not fit beside the input (40 columns), enter gives
		// way: it ends the typing as it ends any input, where esc, cut at
		// the edge ("enter apply filter …"), was the key not said, and the
		// one whose meaning (the filter cleared, not kept) must be read.
		d.helpOut = shortHelpFitting(d.help, filterKeys{d.keys}.ShortHelp(), max(d.w-filterWidth(d.w)-6, 0), d.keys.AcceptFilter)
		return
	}
	// View puts a space before each row of the help: it has a cell less.
	hw := max(d.w-1, 0)
	if d.help.ShowAll {
		d.helpOut = fullHelpFitting(d.help, d.zoomKeys().FullHelp(), hw)
		return
	}
	// On a narrow screen the pane keys give way before an offered action
	// (R recover), ? and q: cut at its end, the line lost those first.
	// Expand goes before describe: every group row says "e to expand",
	// and nothing on the screen tells of d. On the etcd pane the nodes'
	// filter goes before it: at 80 columns "d describe member" did not
	// fit beside it. y goes last of them, and says "copy" before it goes:
	// a status line too long for its rows says "the command y copies" in
	// place of its command, and at 40 columns, R recover offered, the
	// line dropped y beside it, where "y copy" fits. A filter applied, esc
	// says "clear" before y goes, and goes last: at 40 columns, R offered,
	// "esc clear filter" was in no drop step and the line, cut at its end,
	// lost ? and q.
	km := d.zoomKeys()
	drop := []key.Binding{km.Expand, km.Describe, km.Filter, km.Zoom, km.NextPane, shortDesc(km.Copy, "copy"),
		shortDesc(km.ClearFilter, "clear"), km.Copy, km.ClearFilter}
	if member {
		drop[1], drop[2] = drop[2], drop[1]
	}
	d.helpOut = shortHelpFitting(d.help, km.ShortHelp(), hw, drop...)
}

// quitPromptText asks to confirm a quit while this console holds the lock
// of an upgrade under way, in the words that fit w cells. heldUp: a failed
// step holds the upgrade, which then does not simply "go on" (nothing in
// EKS-A retries it).
func quitPromptText(w int, heldUp, demo bool) string {
	texts := []string{
		"Quit? The upgrade goes on in the cluster, and this console releases its upgrade lock: q again quits, any other key stays",
		"q again quits (the upgrade goes on; the upgrade lock is released) • any other key stays",
		"q again quits (the upgrade goes on; the lock is released) • other keys stay",
	}
	switch {
	case demo:
		// Nothing goes on: the demo's world stops with the console.
		texts = []string{
			"Quit? The demo's world (its control plane and controllers) stops with the console, mid-upgrade: q again quits, any other key stays",
			"q again quits (the demo's world stops with it, mid-upgrade) • any other key stays",
			"q again quits (the demo stops) • other keys stay",
		}
	case heldUp:
		texts = []string{
			"Quit? A failed step holds the upgrade (R offers its retry), and this console releases its upgrade lock: q again quits, any other key stays",
			"q again quits (a failed step holds the upgrade; the upgrade lock is released) • any other key stays",
			"q again quits (a step failed; the lock is released) • other keys stay",
		}
	}
	for _, t := range texts {
		if width(t) <= w {
			return t
		}
	}
	return "q again quits • other keys stay"
}

// View joins the header, the cached pane outputs and the footer.
func (d *Dashboard) View() string {
	p := &d.plan
	w := d.w
	if w <= 0 || d.h <= 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(w * d.h * 3)
	lines := 0
	nl := func() {
		if lines > 0 {
			b.WriteByte('\n')
		}
		lines++
	}
	if p.headerLines > 0 {
		hs := d.headerView(w)
		if p.headerLines == 1 {
			// The identity line stays: it holds the connection and the
			// lock's badges (reconnecting, lock lost), which nothing else
			// shows; the status line says where the upgrade stands.
			if i := strings.IndexByte(hs, '\n'); i >= 0 {
				hs = hs[:i]
			}
		}
		nl()
		b.WriteString(hs)
		lines += p.headerLines - 1
	}
	for _, s := range p.sections {
		if s.right == noPane {
			nl()
			b.WriteString(d.paneView(s.left, w, s.h))
			lines += s.h - 1
			continue
		}
		l := strings.Split(d.paneView(s.left, p.leftW, s.h), "\n")
		r := strings.Split(d.paneView(s.right, p.rightW, s.h), "\n")
		sep := d.st.paint(rRule, "│")
		for i := 0; i < s.h; i++ {
			nl()
			b.WriteString(l[i])
			b.WriteString(sep)
			b.WriteString(r[i])
		}
	}
	for i := 0; i < p.stallLines; i++ {
		nl()
		ln := p.stalls[i]
		if i == p.stallLines-1 && p.stallMore > 0 {
			// The count is cut last: a long sentence gives way to it (the
			// layout gave the pause's last row room for it).
			more := moreText(p.stallMore)
			if mw := width(more); mw < w {
				d.st.paintSegs(&b, ln.segs, w-mw)
				d.st.paintSegs(&b, []seg{{more, rMuted}}, mw)
				continue
			}
		}
		d.st.paintSegs(&b, ln.segs, w)
	}
	if p.helpLines > 0 {
		nl()
		if d.filtering {
			// Cut to the width: the filter keeps 8 columns, wider than a
			// terminal of 12 or fewer with its margins.
			b.WriteString(ansi.Truncate(" "+d.filter.View()+"  "+d.helpOut, w, ""))
		} else {
			hl := strings.Split(d.helpOut, "\n")
			for i := 0; i < p.helpLines && i < len(hl); i++ {
				if i > 0 {
					nl()
				}
				if p.helpCut && i == p.helpLines-1 && p.helpLines > 1 {
					b.WriteString(" " + d.st.paint(rMuted, helpCutNote(len(hl)-i, "any key", max(w-1, 0))))
					break
				}
				b.WriteString(" " + hl[i])
			}
		}
	}
	for lines < d.h {
		nl()
	}
	return b.String()
}

func (d *Dashboard) paneView(id paneID, w, h int) string {
	focused := id == d.focus
	switch id {
	case paneCluster:
		return d.cluster.view(d.st, w, h, focused, d.now)
	case paneEtcd:
		return d.etcd.view(d.st, w, h, focused, d.now)
	case paneControlPlane:
		return d.cp.view(d.st, w, h, focused, d.now)
	case paneNodes:
		return d.nodes.view(d.st, w, h, focused, d.now)
	case paneEvents:
		return d.events.view(d.st, w, h, focused, d.now)
	}
	return ""
}

// headerView renders the header, cached until it is rebuilt, resized or the
// clock's second changes (elapsed times).
func (d *Dashboard) headerView(w int) string {
	k := renderKey{gen: d.headerGen, w: w, nowSec: d.now.Unix(), styles: d.st}
	if out, ok := d.headerCache.get(k); ok {
		return out
	}
	var b strings.Builder
	d.header.render(&b, d.st, w, d.now)
	return d.headerCache.put(k, b.String())
}
