package tui

import (
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// KeyMap is the dashboard's key bindings. It implements help.KeyMap, so the
// footer and the full help (?) are generated from it.
type KeyMap struct {
	NextPane key.Binding
	PrevPane key.Binding
	Zoom     key.Binding
	Back     key.Binding
	Filter   key.Binding
	Expand   key.Binding
	// Describe opens the node detail of the row under the cursor; it is
	// enabled only while the nodes pane is focused and has a row there, or
	// the etcd pane with its cursor on a member.
	Describe key.Binding
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Home     key.Binding
	End      key.Binding
	Help     key.Binding
	Suspend  key.Binding
	Quit     key.Binding
	// Copy is y, which the App takes (copyBinding); it is enabled, and
	// listed, while the status lines show a command.
	Copy key.Binding

	// Bindings active while the node filter is being typed.
	AcceptFilter key.Binding
	ClearFilter  key.Binding
	// filterOn: a filter is applied, which esc clears; the help lists it
	// then only (it listed "enter apply filter" and "esc clear filter"
	// beside "enter zoom" with no filter to apply or clear).
	filterOn bool

	// Actions are the bindings of registered actions (recovery and the like);
	// in read-only mode the dangerous ones are not bound at all.
	Actions []key.Binding
}

// DefaultKeyMap returns the dashboard's default bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		NextPane:     key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		PrevPane:     key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous pane")),
		Zoom:         key.NewBinding(key.WithKeys("enter", "z"), key.WithHelp("enter/z", "zoom")),
		Back:         key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "unzoom, close help")),
		Filter:       key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter nodes")),
		Expand:       key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "expand groups")),
		Describe:     key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "describe node")),
		Up:           key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:         key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:       key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup/ctrl+u", "page up")),
		PageDown:     key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn/ctrl+d", "page down")),
		Home:         key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("home/g", "top")),
		End:          key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("end/G", "bottom")),
		Help:         key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Suspend:      suspendBinding(),
		Quit:         key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q/ctrl+c", "quit")),
		Copy:         copyBinding(),
		AcceptFilter: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply filter")),
		ClearFilter:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),
	}
}

// ShortHelp is the footer line: a key each, the full help (?) names the
// others.
func (k KeyMap) ShortHelp() []key.Binding {
	b := []key.Binding{k.NextPane, firstKey(k.Zoom), k.Filter}
	if k.filterOn {
		b = append(b, k.ClearFilter)
	}
	b = append(b, k.Expand, k.Describe)
	b = append(b, k.Actions...)
	return append(b, k.Copy, k.Help, firstKey(k.Quit))
}

// firstKey is b with its help naming only the first of its keys ("enter"
// for "enter/z"): the footer has room for a key per action, the full help
// for all of them.
func firstKey(b key.Binding) key.Binding {
	h := b.Help()
	if first, _, ok := strings.Cut(h.Key, "/"); ok && first != "" {
		b.SetHelp(first, h.Desc)
	}
	return b
}

// FullHelp is the ? view, one column per group.
func (k KeyMap) FullHelp() [][]key.Binding {
	cols := [][]key.Binding{
		{k.NextPane, k.PrevPane, k.Zoom, k.Back, k.Expand, k.Describe},
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End},
		{k.Filter},
	}
	if k.filterOn {
		cols[2] = append(cols[2], k.ClearFilter)
	}
	acts := k.Actions
	if k.Copy.Enabled() {
		acts = append(slices.Clip(acts), k.Copy)
	}
	if len(acts) > 0 {
		cols = append(cols, acts)
	}
	return append(cols, []key.Binding{k.Help, k.Suspend, k.Quit})
}

// suspendBinding is ctrl+z, which stops the console as a shell job (fg
// resumes it). In raw mode the terminal sends it as a key, not SIGTSTP, so
// without it ctrl+z did nothing. The App takes it on every screen and
// dialog (App.Update), except while a run that writes to the cluster is
// under way (suspendRefuser); the key maps carry it for their help.
func suspendBinding() key.Binding {
	return key.NewBinding(key.WithKeys("ctrl+z"), key.WithHelp("ctrl+z", "suspend (fg resumes)"))
}

// suspendOff words b's help where ctrl+z is off (Options.NoSuspend): the
// help listed "suspend (fg resumes)" beside the line saying it was off.
func suspendOff(b *key.Binding, opts Options) {
	if opts.NoSuspend != "" {
		b.SetHelp("ctrl+z", "suspend: off here (no job control)")
	}
}

// filterKeys is the help shown while the filter is being typed.
type filterKeys struct{ k KeyMap }

func (f filterKeys) ShortHelp() []key.Binding {
	return []key.Binding{f.k.AcceptFilter, f.k.ClearFilter}
}

func (f filterKeys) FullHelp() [][]key.Binding { return [][]key.Binding{f.ShortHelp()} }

// shortHelpFitting renders bindings as a short help of at most w cells. When
// they do not all fit, the bindings in drop (told by their keys, as the
// line may name fewer of them) give way, first ones first, so
// that what ends the line stays in view: bubbles/help cuts the line's end
// instead, and with it ? and q, the keys that say how to see the rest and
// how to leave. A binding of drop with a narrower help than the line's
// (shortDesc) takes its place instead of taking it out, so that a key can
// say less before it goes. What still does not fit is cut as bubbles/help
// cuts it, and cut at w where bubbles/help, with no room for its ellipsis,
// would add the next binding past the width all the same.
func shortHelpFitting(h help.Model, bindings []key.Binding, w int, drop ...key.Binding) string {
	bindings = dropUntilFits(h, bindings, w, drop)
	h.SetWidth(w)
	out := h.ShortHelpView(bindings)
	if ansi.StringWidth(out) > w {
		out = ansi.Truncate(out, max(w, 0), "…")
	}
	return out
}

// dropUntilFits is bindings with as many of drop's steps taken, first ones
// first, as the short help needs to fit in w cells (all of them where it
// still does not).
func dropUntilFits(h help.Model, bindings []key.Binding, w int, drop []key.Binding) []key.Binding {
	h.SetWidth(0)
	for _, d := range drop {
		if ansi.StringWidth(h.ShortHelpView(bindings)) <= w {
			break
		}
		bindings = dropStep(bindings, d)
	}
	return bindings
}

// dropStep is bindings with the one of d's keys given way to d: replaced by
// d where d's help is the narrower, taken out where it is not.
func dropStep(bindings []key.Binding, d key.Binding) []key.Binding {
	same := func(b key.Binding) bool { return slices.Equal(b.Keys(), d.Keys()) }
	i := slices.IndexFunc(bindings, same)
	if i < 0 {
		return bindings
	}
	bindings = slices.Clone(bindings)
	if width(d.Help().Desc) < width(bindings[i].Help().Desc) {
		bindings[i] = d
		return bindings
	}
	return slices.DeleteFunc(bindings, same)
}

// shortDesc is b with its help's description desc: a narrower form of it
// for drop (shortHelpFitting), "y copy" for "y copy command".
func shortDesc(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}

// shortHelpRows is shortHelpFitting for a screen that gives its help more
// than one row: what does not fit on one row once drop has given way folds
// onto the next, between two bindings, where a single row would cut its
// end, and with it ? and q (the plan at 40 columns, R recover offered).
// Where the line takes more than one row all the same, drop gives way only
// as far as that saves a row: taken out to fit one row that was never
// had, y went at 40 columns, while the plan said "the command y copies",
// and a second row had room for it. A binding wider than w alone is cut
// with an ellipsis.
func shortHelpRows(h help.Model, bindings []key.Binding, w int, drop ...key.Binding) string {
	rows := helpRows(h, dropUntilFits(h, bindings, w, drop), w)
	if len(rows) > 1 {
		kept := bindings
		for _, d := range drop {
			if r := helpRows(h, kept, w); len(r) <= len(rows) {
				return strings.Join(r, "\n")
			}
			kept = dropStep(kept, d)
		}
	}
	return strings.Join(rows, "\n")
}

// helpRows lays bindings out as the short help in rows of at most w cells,
// each taking as many as fit.
func helpRows(h help.Model, bindings []key.Binding, w int) []string {
	h.SetWidth(0)
	if out := h.ShortHelpView(bindings); ansi.StringWidth(out) <= w {
		return []string{out}
	}
	var rows []string
	var row []key.Binding
	for _, b := range bindings {
		if !b.Enabled() {
			continue
		}
		if len(row) > 0 && ansi.StringWidth(h.ShortHelpView(append(slices.Clip(row), b))) > w {
			rows = append(rows, ansi.Truncate(h.ShortHelpView(row), max(w, 0), "…"))
			row = nil
		}
		row = append(row, b)
	}
	if len(row) > 0 {
		rows = append(rows, ansi.Truncate(h.ShortHelpView(row), max(w, 0), "…"))
	}
	return rows
}

// helpCutNote is the last row of a full help cut to the screen's rows: how
// many rows it leaves out and the key that closes it (closer), in the first
// of its forms that fits in w cells. Cut at the edge, the one form lost
// the key at 40 columns ("… 8 more rows of help: a taller termin…").
func helpCutNote(more int, closer string, w int) string {
	n := strconv.Itoa(more)
	for _, s := range []string{
		"… " + n + " more rows of help: a taller terminal shows them; " + closer + " closes it",
		"… " + n + " more rows of help; " + closer + " closes it",
		"… " + n + " more rows; " + closer + " closes the help",
	} {
		if width(s) <= w {
			return s
		}
	}
	return truncate("… "+n+" more rows; "+closer+" closes the help", w)
}

// fullHelpFitting renders groups as the full help, no row wider than w
// cells. bubbles/help drops the columns past the width instead, from the
// last, which holds ? and q, or, with no room for its ellipsis, draws the
// next one past the width all the same: at 80 columns, R recover offered,
// "? help" and "q quit" ran past the edge, where the terminal cut them
// without a mark.
//
// First the last groups are stacked in one column while that makes the
// help no taller (fewer columns, the same rows). If it is still too wide,
// the columns wrap onto more rows with that stack leading, its last group
// on top: on a short screen the layout cuts the help's last rows, and ?
// and q say how to see the rest and how to leave. A column wider than w
// alone is cut with an ellipsis.
func fullHelpFitting(h help.Model, groups [][]key.Binding, w int) string {
	h.SetWidth(0)
	out := h.FullHelpView(groups)
	if lipgloss.Width(out) <= w || len(groups) == 0 {
		return out
	}
	tallest := 0
	for _, g := range groups {
		tallest = max(tallest, len(g))
	}
	n := len(groups)
	m := 1 // the last m groups are stacked in the last column
	for m < n && stackHeight(groups[n-m-1:]) <= tallest {
		m++
		cols := append(slices.Clip(groups[:n-m]), stackGroups(groups[n-m:]))
		if out = h.FullHelpView(cols); lipgloss.Width(out) <= w {
			return out
		}
	}
	tail := slices.Clone(groups[n-m:])
	slices.Reverse(tail)
	cols := append([][]key.Binding{stackGroups(tail)}, groups[:n-m]...)
	var rows []string
	for len(cols) > 0 {
		k := 1
		for k < len(cols) && lipgloss.Width(h.FullHelpView(cols[:k+1])) <= w {
			k++
		}
		rows = append(rows, h.FullHelpView(cols[:k]))
		cols = cols[k:]
	}
	lines := strings.Split(strings.Join(rows, "\n"), "\n")
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, max(w, 0), "…")
	}
	return strings.Join(lines, "\n")
}

// stackGroups is groups in one column, a blank row between two.
func stackGroups(groups [][]key.Binding) []key.Binding {
	var col []key.Binding
	for i, g := range groups {
		if i > 0 {
			col = append(col, helpSpacer)
		}
		col = append(col, g...)
	}
	return col
}

// stackHeight is the rows of stackGroups(groups).
func stackHeight(groups [][]key.Binding) int {
	n := len(groups) - 1
	for _, g := range groups {
		n += len(g)
	}
	return n
}

// helpSpacer is the blank row between two groups stacked in one column of
// the full help. It has a key only because bubbles/help hides a binding
// without one; no key press is ever "".
var helpSpacer = key.NewBinding(key.WithKeys(""), key.WithHelp("", ""))
