package tui

import (
	"strconv"
	"strings"
	"time"

	"github.com/upgrade-console/upgrade-console/model"
)

// nodesPane is the table of control plane and worker machines. It keeps the
// whole joined list but renders only the rows in its window, so its cost per
// frame does not grow with the fleet.
type nodesPane struct {
	join rowJoin
	all  []nodeRow
	rows []nodeRow // after grouping and filtering
	// groupBuf is the grouped rows' storage, reused between rebuilds.
	groupBuf []nodeRow
	avail    availability
	// elsewhere: the cluster's Nodes are on its own API server, and the
	// title says the rows' node health is the Machines'.
	elsewhere bool
	title     []seg

	expand bool
	filter string

	cursor, offset int
	// tail keeps the cursor on the last row while rows come and go (G, as
	// less +F and k9s follow a log): a fleet growing under a cursor left
	// on the row that was last moved it up the list, new rows below it,
	// right after G. Moving up lets go.
	tail   bool
	height int // last body height, for paging
	inputs nodeInputs
	built  bool
	gen    uint64
	cache  renderCache

	// drawn says where each row's line is in drawnOut, the last output,
	// so that a row that did not change is copied from it instead of
	// drawn again: under load a snapshot changes a machine or two, and
	// drawing every visible row anew was a fifth of all the console
	// allocated (heap profile of a 10,000-node bench/e2e run). drawing
	// is the map being filled; the two are swapped after each render.
	// The maps index into drawnRows/drawingRows: a map stores a value
	// as large as a row out of line, an allocation per entry.
	drawn, drawing         map[rowKey]int
	drawnRows, drawingRows []drawnRow
	drawnOut               string
	drawnFor               drawnFor
	redrawn                int // rows the last render drew anew
}

// rowKey finds a row's last drawing; drawnRow.row says whether it still
// holds.
type rowKey struct {
	name, owner string
	fold        foldKind
	group       bool
}

type drawnRow struct {
	row        nodeRow
	selected   bool
	start, end int
}

// drawnFor is what every drawn line depends on besides its row.
type drawnFor struct {
	w      int
	nowSec int64
	styles *styles
}

// nodeInputs identifies what the rows are built from. The watchers reuse a
// list while none of its objects changed, so comparing the lists' keys
// (model.List.Key) and lengths tells, at no cost, whether a snapshot that
// changed elsewhere (an event, a condition) needs the rows rebuilt.
type nodeInputs struct {
	// Pointers, not addresses: holding them keeps the arrays alive, so an
	// address cannot be reused by a different list.
	machines *[]*model.Machine // model.List.Key
	nodes    *[]*model.Node
	upgrades *[]*model.NodeUpgrade
	mds      *model.MachineDeployment
	nm, nn   int
	nu, nmd  int
	cp       *model.ControlPlane
	cluster  *model.EKSACluster
	avail    availability
	st       *styles
	stalled  string
}

func first[T any](l []T) *T {
	if len(l) == 0 {
		return nil
	}
	return &l[0]
}

func inputsOf(st *styles, s *model.ClusterState, av availability, stalled stallSet) nodeInputs {
	in := nodeInputs{avail: av, st: st, stalled: stalled.key}
	if s != nil {
		in.machines, in.nm = s.Machines.Key(), s.Machines.Len()
		in.nodes, in.nn = s.Nodes.Key(), s.Nodes.Len()
		in.upgrades, in.nu = s.NodeUpgrades.Key(), s.NodeUpgrades.Len()
		in.mds, in.nmd = first(s.MachineDeployments), len(s.MachineDeployments)
		in.cp, in.cluster = s.ControlPlane, s.Cluster
	}
	return in
}

func (p *nodesPane) set(st *styles, s *model.ClusterState, stalled stallSet) {
	av := sourceAvailability(s, model.KindMachine, model.KindNode)
	in := inputsOf(st, s, av, stalled)
	if p.built && in == p.inputs {
		return
	}
	p.inputs, p.built = in, true
	p.avail = av
	p.elsewhere = s.NodesElsewhere()
	// The cursor stays on its row where the row is still listed, and the
	// row on its screen line: at fleet scale rows come and go above it
	// several times a second (machines joining, leaving, moving between
	// states), and a cursor kept by index moved onto another machine, and
	// the window under it, while the operator read it. A cursor on the
	// first row follows the first row, as the events pane at its top
	// does: failures sort first, and a console that has not been moved
	// kept the machine it opened on while a failed one rose above it.
	anchor, anchored, line, wasFirst := rowAnchor{}, false, 0, false
	if !p.tail && p.cursor < len(p.rows) && (p.cursor > 0 || p.offset > 0) {
		anchor, anchored, line, wasFirst = anchorOf(&p.rows[p.cursor]), true, p.cursor-p.offset, p.rows[p.cursor].first()
	}
	p.all = p.join.join(st, s, stalled)
	p.regroup()
	if !anchored {
		return
	}
	for i := range p.rows {
		if anchorOf(&p.rows[i]) == anchor {
			if wasFirst && !p.rows[i].first() {
				// Its stall cleared, and the row went back among its
				// group's, maybe thousands of rows down: the cursor
				// stays where the operator was reading, among the
				// failures at the top.
				break
			}
			p.cursor, p.offset = i, max(i-line, 0)
			p.follow()
			return
		}
	}
}

// regroup recomputes the visible rows after data, expand or filter changed.
func (p *nodesPane) regroup() {
	p.rows = groupRowsInto(p.groupBuf, p.all, p.expand, p.filter)
	if len(p.rows) > 0 && len(p.all) > 0 && &p.rows[0] != &p.all[0] {
		p.groupBuf = p.rows
	}
	var upToDate, active, failed, stalled, nodeOnly int
	for i := range p.all {
		if p.all[i].role == roleNodeOnly {
			nodeOnly++
		}
		// The mark first: a settled machine in the stall set is listed
		// as stalled, at the top, and the title counted it up to date.
		switch {
		case p.all[i].mark.r == rSevError:
			failed++
		case p.all[i].mark.r == rStall:
			stalled++
		case p.all[i].settled:
			upToDate++
		case p.all[i].mark.r == rSevInfo:
			active++
		}
	}
	if p.avail.msg != "" {
		// Still listing: say how far it got rather than counts that lie.
		// Forbidden, it is not listing: "7 machines so far" above
		// "forbidden: list machines…" read as a list still loading.
		p.title = nil
		if len(p.all) > 0 && p.avail.r == rMuted {
			p.title = []seg{{strconv.Itoa(len(p.all)) + " machines so far", rMuted}}
		}
		p.cursor = 0
		p.gen++
		return
	}
	p.title = []seg{{strconv.Itoa(len(p.all)-nodeOnly) + " machines", rText}, {" · " + strconv.Itoa(upToDate) + " up to date", rMuted}}
	if active > 0 {
		p.title = append(p.title, seg{" · " + strconv.Itoa(active) + " in progress", rSevInfo})
	}
	if failed > 0 {
		p.title = append(p.title, seg{" · " + strconv.Itoa(failed) + " failed", rSevError})
	}
	if stalled > 0 {
		p.title = append(p.title, seg{" · " + strconv.Itoa(stalled) + " stalled", rStall})
	}
	if nodeOnly > 0 {
		p.title = append(p.title, seg{" · " + strconv.Itoa(nodeOnly) + " node(s) without a machine", rMuted})
	}
	if p.elsewhere {
		// Its Nodes are on its own API server: none is listed here.
		p.title = append(p.title, seg{" · node health from the Machines", rMuted})
	}
	if p.filter != "" {
		p.title = append([]seg{{"filter \"" + p.filter + "\": " + strconv.Itoa(len(p.rows)) + " shown  ", rSevInfo}}, p.title...)
	}
	p.cursor = min(p.cursor, max(len(p.rows)-1, 0))
	if p.tail {
		p.cursor = max(len(p.rows)-1, 0)
	}
	p.follow()
	p.gen++
}

// rowAnchor is what a row stays the same row by: a machine (or node) by its
// name, whatever state it moves to; a group row by its owner and state.
type rowAnchor struct {
	name, owner string
	fold        foldKind
	group       bool
}

func anchorOf(r *nodeRow) rowAnchor {
	if r.group > 0 {
		return rowAnchor{owner: r.owner, fold: r.fold, group: true}
	}
	return rowAnchor{name: r.name, owner: r.owner}
}

// selected is the row under the cursor; false while the table has none
// (still listing, nothing matches the filter).
func (p *nodesPane) selected() (nodeRow, bool) {
	if p.avail.msg != "" || p.cursor >= len(p.rows) {
		return nodeRow{}, false
	}
	return p.rows[p.cursor], true
}

func (p *nodesPane) want() int {
	if p.avail.msg != "" {
		return 2
	}
	return 2 + max(len(p.rows), 1)
}

// move moves the cursor and keeps it in the window; up, it stops
// following the last row (tail).
func (p *nodesPane) move(delta int) {
	if delta < 0 {
		p.tail = false
	}
	p.cursor = max(min(p.cursor+delta, len(p.rows)-1), 0)
	p.follow()
}

// toEnd moves the cursor to the last row and keeps it there as rows arrive
// (tail), until it moves up.
func (p *nodesPane) toEnd() {
	p.tail = true
	p.move(len(p.rows))
}

// page moves the window and the cursor by delta rows together, the cursor
// keeping its row in the window: moved alone, the cursor would leave the
// window by one row and the window follow by one, not a page.
func (p *nodesPane) page(delta int) {
	if delta < 0 {
		p.tail = false
	}
	body := max(p.height, 1)
	p.offset = max(min(p.offset+delta, len(p.rows)-body), 0)
	p.cursor = max(min(p.cursor+delta, len(p.rows)-1), 0)
	p.follow()
}

func (p *nodesPane) follow() {
	body := max(p.height, 1)
	if p.cursor < p.offset {
		p.offset = p.cursor
	}
	if p.cursor >= p.offset+body {
		p.offset = p.cursor - body + 1
	}
	p.offset = max(min(p.offset, len(p.rows)-body), 0)
}

// columns of the nodes table, and the order in which they are dropped when
// the terminal is too narrow (the name and the status mark always stay).
type nodeCol int

const (
	colName nodeCol = iota
	colRole
	colPhase
	colVersion
	colSteps
	colSince
	nodeColCount
)

// ROLE takes 6 cells: "cp 1st" (nodeRow.roleText).
var (
	nodeColTitle = [nodeColCount]string{"NODE", "ROLE", "PHASE", "VERSION", "UPGRADE", "SINCE"}
	nodeColMin   = [nodeColCount]int{14, 6, 12, 8, 18, 6}
	nodeColDrop  = []nodeCol{colVersion, colRole, colSince, colPhase, colSteps}
)

// nodeLayout is the width of every column (0 = dropped).
type nodeLayout [nodeColCount]int

const nodeMarkW = 3 // " ✓ "

// maxNodeNameW is the widest the NODE column grows while other columns can
// take the room.
const maxNodeNameW = 48

func layoutNodeColumns(w int) nodeLayout {
	l := nodeColMin
	gap := 2
	total := func() int {
		t := nodeMarkW
		for c := nodeCol(0); c < nodeColCount; c++ {
			if l[c] > 0 {
				t += l[c]
				if c != colName {
					t += gap
				}
			}
		}
		return t
	}
	for _, c := range nodeColDrop {
		if total() <= w {
			break
		}
		l[c] = 0
	}
	extra := w - total()
	if extra > 0 {
		// Names first (they identify the row), then room for the step name.
		grow := min(extra, 30-l[colName])
		l[colName] += max(grow, 0)
		extra -= max(grow, 0)
		if l[colSteps] > 0 && extra > 0 {
			g := min(extra, 10)
			l[colSteps] += g
			extra -= g
		}
		// Names get up to maxNodeNameW, the longest names EKS-A makes
		// ("mgmt-md-0-7d9f8b6c5x-x2k4q" and longer cluster names); the
		// rest is left blank after the last column. At 200 columns the
		// name took ~130 cells and the other columns sat far from the
		// names they belong to.
		if l[colSteps] == 0 {
			l[colName] += extra
		} else {
			l[colName] += min(extra, max(maxNodeNameW-l[colName], 0))
		}
	} else if extra < 0 {
		l[colName] = max(l[colName]+extra, 1)
	}
	return l
}

// setHeight takes the pane's height from the layout (in Update, never in
// View): the rows the table shows, less its title and header, which the
// cursor's moves and pages scroll by.
func (p *nodesPane) setHeight(h int) {
	p.height = max(h-2, 1)
	p.follow()
}

func (p *nodesPane) view(st *styles, w, h int, focused bool, now time.Time) string {
	if w <= 0 || h <= 0 {
		return ""
	}
	k := renderKey{gen: p.gen, w: w, h: h, focused: focused, offset: p.offset, cursor: p.cursor, nowSec: now.Unix(), styles: st}
	if out, ok := p.cache.get(k); ok {
		return out
	}
	var b strings.Builder
	// The last render's length is the best guess of this one's: a builder
	// that has to grow copies what it holds into a new array (as much
	// garbage again as the output, in a bench/e2e run's heap profile).
	b.Grow(max((w+16)*h*2, len(p.drawnOut)+2*w))
	below := 0
	if p.avail.msg == "" {
		below = max(len(p.rows)-p.offset-max(h-2, 1), 0)
	}
	writeTitle(&b, st, paneNodes, p.title, w, focused, p.offset, below)
	if h == 1 {
		return p.cache.put(k, b.String())
	}
	b.WriteByte('\n')
	if p.avail.msg != "" {
		paintAvail(&b, st, p.avail, w, h-1)
		return p.cache.put(k, b.String())
	}
	l := layoutNodeColumns(w)
	p.writeHeader(&b, st, l, w)
	df := drawnFor{w: w, nowSec: k.nowSec, styles: st}
	reuse := p.drawnFor == df
	if p.drawing == nil {
		p.drawing = map[rowKey]int{}
	}
	clear(p.drawing)
	p.drawingRows = p.drawingRows[:0]
	p.redrawn = 0
	for i := 0; i < h-2; i++ {
		b.WriteByte('\n')
		j := p.offset + i
		switch {
		case j < len(p.rows):
			r := &p.rows[j]
			rk := rowKey{name: r.name, owner: r.owner, fold: r.fold, group: r.group > 0}
			d := drawnRow{row: *r, selected: focused && j == p.cursor, start: b.Len()}
			if i, ok := p.drawn[rk]; reuse && ok && p.drawnRows[i].row == d.row && p.drawnRows[i].selected == d.selected {
				b.WriteString(p.drawnOut[p.drawnRows[i].start:p.drawnRows[i].end])
			} else {
				p.writeRow(&b, st, l, r, w, d.selected, now)
				p.redrawn++
			}
			d.end = b.Len()
			p.drawing[rk] = len(p.drawingRows)
			p.drawingRows = append(p.drawingRows, d)
		case j == 0 && p.filter != "":
			st.paintSegs(&b, []seg{{" no machine matches the filter (esc clears it)", rMuted}}, w)
		case j == 0:
			st.paintSegs(&b, []seg{{" no machines", rMuted}}, w)
		default:
			b.WriteString(spaces(w))
		}
	}
	out := b.String()
	p.drawn, p.drawing = p.drawing, p.drawn
	p.drawnRows, p.drawingRows = p.drawingRows, p.drawnRows
	p.drawnOut, p.drawnFor = out, df
	return p.cache.put(k, out)
}

func (p *nodesPane) writeHeader(b *strings.Builder, st *styles, l nodeLayout, w int) {
	var plain strings.Builder
	plain.WriteString(spaces(nodeMarkW))
	for c := nodeCol(0); c < nodeColCount; c++ {
		if l[c] == 0 {
			continue
		}
		if c != colName {
			plain.WriteString("  ")
		}
		if c == colSince {
			plain.WriteString(spaces(l[c]-width(nodeColTitle[c])) + nodeColTitle[c])
			continue
		}
		plain.WriteString(fit(nodeColTitle[c], l[c]))
	}
	b.WriteString(st.paint(rTableHeader, fit(plain.String(), w)))
}

func (p *nodesPane) writeRow(b *strings.Builder, st *styles, l nodeLayout, r *nodeRow, w int, selected bool, now time.Time) {
	cells := make([]seg, 0, 2*nodeColCount+1)
	cells = append(cells, seg{" " + r.mark.text + " ", r.mark.r})
	if r.group > 0 {
		cells = append(cells, seg{groupText(r), rMuted})
	} else {
		for c := nodeCol(0); c < nodeColCount; c++ {
			if l[c] == 0 {
				continue
			}
			if c != colName {
				cells = append(cells, seg{"  ", rText})
			}
			cells = append(cells, p.cell(st, c, r, l[c], now)...)
		}
	}
	if selected {
		var plain strings.Builder
		for _, c := range cells {
			plain.WriteString(c.text)
		}
		b.WriteString(st.paint(rSelected, fit(plain.String(), w)))
		return
	}
	st.paintSegs(b, cells, w)
}

// cell returns a column's content fitted to cw cells.
func (p *nodesPane) cell(st *styles, c nodeCol, r *nodeRow, cw int, now time.Time) []seg {
	switch c {
	case colName:
		return []seg{{fitEnd(r.name, cw), rText}}
	case colRole:
		return []seg{{fit(r.roleText(), cw), rMuted}}
	case colPhase:
		return []seg{{fit(r.phase, cw), r.phaseRole}}
	case colVersion:
		return []seg{{fit(r.version, cw), rText}}
	case colSince:
		s := since(r.since, now)
		return []seg{{spaces(cw-width(s)) + s, rMuted}}
	case colSteps:
		return stepsCell(st, r, cw)
	}
	return nil
}

// stepsCell draws the in-place steps as a bar (one cell per step) and the
// name of the step the node is on, or failed at.
func stepsCell(st *styles, r *nodeRow, cw int) []seg {
	if r.stepsTotal == 0 {
		return []seg{{fit(r.stepText, cw), rMuted}}
	}
	sym := st.th.Sym
	failed := 0
	if r.stepFailed {
		failed = 1
	}
	empty := r.stepsTotal - r.stepsDone - failed
	tw := cw - r.stepsTotal - 1
	text := r.stepText
	if r.stepFailed {
		tw -= 2
	}
	if width(text) > tw {
		text = shortStep(text)
	}
	textRole := rMuted
	if r.stepFailed {
		text = sym.Fail + " " + text
		textRole = rFailure
		tw += 2
	}
	return []seg{
		{repeat(sym.BarFull, r.stepsDone), rBarFull},
		{repeat(sym.BarFail, failed), rBarFail},
		{repeat(sym.BarEmpty, max(empty, 0)), rBarEmpty},
		{" ", rText},
		{fit(text, max(tw, 0)), textRole},
	}
}

// shortSteps are the step names for narrow tables (the init containers'
// names, minus the "-upgrader" suffix).
var shortSteps = map[string]string{
	"UpgraderPodCreated": "pod", "BinariesCopied": "binaries", "ContainerdUpgraded": "containerd",
	"CNIPluginsUpgraded": "cni-plugins", "KubeadmUpgraded": "kubeadm", "KubeletUpgraded": "kubelet",
	"PostUpgradeCleanupCompleted": "cleanup",
}

func shortStep(s string) string {
	if v, ok := shortSteps[s]; ok {
		return v
	}
	return s
}
