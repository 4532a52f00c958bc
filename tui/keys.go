package tui

import (
	"slices"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"
)

// KeyMap is the dashboard's key bindings. It implements help.KeyMap, so the
// footer and the full help (?) are generated from it.
type KeyMap struct {
	NextPane key.Binding
	PrevPane key.Binding
	Zoom     key.Binding
	Filter   key.Binding
	Expand   key.Binding
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Home     key.Binding
	End      key.Binding
	Help     key.Binding
	Quit     key.Binding

	// Bindings active while the node filter is being typed.
	AcceptFilter key.Binding
	ClearFilter  key.Binding

	// Actions are the bindings of registered actions (recovery and the like);
	// in read-only mode the dangerous ones are not bound at all.
	Actions []key.Binding
}

// DefaultKeyMap returns the dashboard's default bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		NextPane:     key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		PrevPane:     key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous pane")),
		Zoom:         key.NewBinding(key.WithKeys("enter", "z"), key.WithHelp("enter", "zoom")),
		Filter:       key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter nodes")),
		Expand:       key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "expand groups")),
		Up:           key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:         key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:       key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown:     key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "page down")),
		Home:         key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("home/g", "top")),
		End:          key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("end/G", "bottom")),
		Help:         key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:         key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		AcceptFilter: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply filter")),
		ClearFilter:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),
	}
}

// ShortHelp is the footer line.
func (k KeyMap) ShortHelp() []key.Binding {
	b := []key.Binding{k.NextPane, k.Zoom, k.Filter, k.Expand}
	b = append(b, k.Actions...)
	return append(b, k.Help, k.Quit)
}

// FullHelp is the ? view, one column per group.
func (k KeyMap) FullHelp() [][]key.Binding {
	cols := [][]key.Binding{
		{k.NextPane, k.PrevPane, k.Zoom, k.Expand},
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End},
		{k.Filter, k.AcceptFilter, k.ClearFilter},
	}
	if len(k.Actions) > 0 {
		cols = append(cols, k.Actions)
	}
	return append(cols, []key.Binding{k.Help, k.Quit})
}

// filterKeys is the help shown while the filter is being typed.
type filterKeys struct{ k KeyMap }

func (f filterKeys) ShortHelp() []key.Binding {
	return []key.Binding{f.k.AcceptFilter, f.k.ClearFilter}
}

func (f filterKeys) FullHelp() [][]key.Binding { return [][]key.Binding{f.ShortHelp()} }

// shortHelpFitting renders bindings as a short help of at most w cells. When
// they do not all fit, the bindings in drop give way, first ones first, so
// that what ends the line stays in view: bubbles/help cuts the line's end
// instead, and with it ? and q, the keys that say how to see the rest and
// how to leave. What still does not fit is cut as bubbles/help cuts it.
func shortHelpFitting(h help.Model, bindings []key.Binding, w int, drop ...key.Binding) string {
	h.SetWidth(0)
	out := h.ShortHelpView(bindings)
	for _, d := range drop {
		if ansi.StringWidth(out) <= w {
			break
		}
		bindings = slices.DeleteFunc(slices.Clone(bindings), func(b key.Binding) bool { return b.Help() == d.Help() })
		out = h.ShortHelpView(bindings)
	}
	h.SetWidth(w)
	return h.ShortHelpView(bindings)
}
