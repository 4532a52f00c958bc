package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/upgrade-console/upgrade-console/themes"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// confirmDialog is the typed confirmation of the apply: the operator types
// the cluster name, as k9s asks for dangerous actions, so a reflexive "y" or
// enter never starts an upgrade. Field conflicts are shown and only taken
// over when the operator ticks the box (tab) explicitly.
//
// What changes can be longer than the terminal (an object per machine
// config, a conflict per field): that list scrolls, while the title, the
// box, the prompt, the input, the error and the keys stay in view, since
// they are what the operator acts on.
type confirmDialog struct {
	opts  Options
	st    *styles
	input textinput.Model
	w, h  int

	cluster string
	plan    *upgrade.Plan
	// opened is the plan as the dialog opened, whose versions go with the
	// dry run it confirms: a plan the re-run checks bring (another console
	// applied meanwhile) said "v0.21.2 → v0.21.2" above that dry run.
	opened *upgrade.Plan
	dry    *upgrade.DryRunResult
	force  bool
	hint   string
	// hintShort is hint in one short row, for tightTail.
	hintShort string
	// blocked names the checks that block the apply since the dialog
	// opened (the checks re-run as the cluster changes); empty when none.
	blocked string

	keys confirmKeys
	// decided is the operator's answer, once a key gave it (Decided): the
	// confirmed apply, or going back.
	decided tea.Msg

	// The layout, rebuilt in Update (relayout): head is always shown, body
	// scrolls in visible rows from offset, tail goes around the input
	// (inputAt is its index in tail).
	head, body, tail []line
	inputAt          int
	visible          int
	offset           int
	// folded counts the rows of the sentences above the input laid out at
	// the body's end, to scroll with it, on a dialog too short for them.
	folded int
	// boxAt is the take-over box's first row in body, where it scrolls
	// with the list; -1 where it is fixed in tail, or not shown.
	boxAt int
	// keysAt, when above zero, is the keys' first row in tail on a dialog
	// with no row for the scroll hint (40x10): the counts of the rows out
	// of view go beside the keys, drawn in View.
	keysAt int
	// compact puts the keys beside the counts in their short form
	// (compactKeysText), where their long form left the list no row.
	compact bool
	// resized is set by SetSize for relayout, which opens the body at
	// the box again where the sentences above the input are part of it.
	resized bool
}

type confirmKeys struct {
	Confirm  key.Binding
	Force    key.Binding
	Cancel   key.Binding
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
}

func newConfirmDialog(opts Options, plan *upgrade.Plan, dry *upgrade.DryRunResult) *confirmDialog {
	d := &confirmDialog{opts: opts, cluster: plan.Cluster, plan: plan, opened: plan, dry: dry,
		keys: confirmKeys{
			Confirm: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply")),
			Force:   key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "take over conflicting fields")),
			Cancel:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
			// Arrows and pages only: letters (j, k, space) belong to
			// the name being typed.
			Up:       key.NewBinding(key.WithKeys("up"), key.WithHelp("↑", "scroll up")),
			Down:     key.NewBinding(key.WithKeys("down"), key.WithHelp("↓", "scroll down")),
			PageUp:   key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "page up")),
			PageDown: key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn", "page down")),
		}}
	if len(dry.Conflicts) == 0 {
		d.keys.Force.SetEnabled(false)
	} else {
		d.force = opts.ForceConflicts
	}
	d.input = textinput.New()
	d.input.Prompt = "> "
	d.input.Placeholder = "cluster name"
	d.input.CharLimit = 253
	d.setTheme(initialTheme(opts))
	return d
}

func (d *confirmDialog) setTheme(th *themes.Theme) {
	d.st = newStyles(th)
	d.input.SetStyles(th.InputStyles())
	d.relayout()
}

func (d *confirmDialog) Init() tea.Cmd { return d.input.Focus() }

func (d *confirmDialog) SetSize(w, h int) {
	// A resize moves the rows under the offset: kept, it showed at 40x12
	// the conflict rows an ↑ at 40x10 had scrolled to, where the box and
	// the prompt are what the operator acts on.
	d.resized = d.resized || w != d.w || h != d.h
	d.w, d.h = w, h
	d.input.SetWidth(max(min(w, dialogMaxWidth)-10, 10))
	d.relayout()
}

// dialogMaxWidth caps the dialog's width: wide enough on a wide screen for a
// changed template path on both sides of its arrow (at 84 they were cut to
// their last element), narrow enough to read as a dialog.
const dialogMaxWidth = 124

// innerWidth is the text's width: the border and padding take 4.
func (d *confirmDialog) innerWidth() int { return max(min(d.w, dialogMaxWidth)-4, 20) }

func (d *confirmDialog) ShortHelp() []key.Binding {
	return []key.Binding{d.keys.Confirm, d.keys.Force, d.keys.Cancel}
}

func (d *confirmDialog) FullHelp() [][]key.Binding {
	return [][]key.Binding{d.ShortHelp(), {d.keys.Up, d.keys.Down, d.keys.PageUp, d.keys.PageDown}, {suspendBinding()}}
}

// Typed reports what has been typed (tests).
func (d *confirmDialog) Typed() string { return d.input.Value() }

func (d *confirmDialog) Update(msg tea.Msg) (Screen, tea.Cmd) {
	switch msg := msg.(type) {
	case ThemeMsg:
		d.setTheme(msg.Theme)
		return d, nil
	case recheckedMsg:
		// The plan screen behind re-ran the checks: the dialog must not
		// offer an apply they now refuse (nor keep refusing once they
		// pass again).
		if msg.err == nil && msg.plan != nil {
			d.plan, d.blocked = msg.plan, ""
			if msg.plan.Blocked() {
				d.blocked = blockedSentence(msg.plan)
			}
			d.keys.Confirm.SetEnabled(d.blocked == "")
			d.relayout()
		}
		return d, nil
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, d.keys.Cancel):
			d.decided = applyNotConfirmedMsg{}
			return d, nil
		case d.blocked != "" && !key.Matches(msg, d.keys.Up, d.keys.Down, d.keys.PageUp, d.keys.PageDown):
			// Blocked, the footer offers esc alone: a name typed and a
			// takeover ticked meanwhile armed the dialog for the moment
			// the checks passed again, one enter from applying.
			return d, nil
		case key.Matches(msg, d.keys.Force):
			d.force = !d.force
			d.hint, d.hintShort = "", ""
			d.relayout()
			// Scrolled away from a box that scrolls with the list
			// (40x10 to 40x14), tab ticked it out of view: what
			// the apply takes over changed unseen.
			if d.boxAt >= 0 && (d.boxAt < d.offset || d.boxAt >= d.offset+d.visible) {
				d.offset = d.boxAt
				d.clamp()
			}
			return d, nil
		case key.Matches(msg, d.keys.Confirm):
			cmd := d.submit()
			d.relayout()
			return d, cmd
		case key.Matches(msg, d.keys.Up):
			d.scroll(-1)
			return d, nil
		case key.Matches(msg, d.keys.Down):
			d.scroll(1)
			return d, nil
		case key.Matches(msg, d.keys.PageUp):
			d.scroll(-max(d.visible-1, 1))
			return d, nil
		case key.Matches(msg, d.keys.PageDown):
			d.scroll(max(d.visible-1, 1))
			return d, nil
		}
	}
	var cmd tea.Cmd
	d.input, cmd = d.input.Update(msg)
	return d, cmd
}

func (d *confirmDialog) submit() tea.Cmd {
	typed := strings.TrimSpace(d.input.Value())
	switch {
	case typed != d.cluster:
		d.hint = fmt.Sprintf("type %q exactly to apply, or esc to cancel", d.cluster)
		d.hintShort = fmt.Sprintf("type %q exactly", d.cluster)
		return nil
	case len(d.dry.Conflicts) > 0 && !d.force:
		d.hint = fmt.Sprintf("%d field(s) belong to another manager: tab takes them over, or esc and resolve them", len(d.dry.Conflicts))
		d.hintShort = fmt.Sprintf("tab takes the %d field(s) over", len(d.dry.Conflicts))
		return nil
	}
	d.decided = applyConfirmedMsg{force: d.force}
	return nil
}

// Decided is the operator's answer: the App closes the dialog and hands it
// to the plan screen in the same update as the key (closingDialog).
func (d *confirmDialog) Decided() (tea.Msg, bool) { return d.decided, d.decided != nil }

func (d *confirmDialog) scroll(delta int) {
	d.offset += delta
	d.clamp()
}

func (d *confirmDialog) maxOffset() int { return max(len(d.body)-d.visible, 0) }

func (d *confirmDialog) clamp() { d.offset = max(min(d.offset, d.maxOffset()), 0) }

// minBody is the fewest rows of the list worth keeping the title fixed for;
// on a shorter dialog the title scrolls with the list.
const minBody = 3

// relayout builds the dialog's lines for the current state and size and
// shares the rows between them (in Update, never in View).
func (d *confirmDialog) relayout() {
	if d.st == nil {
		return
	}
	st := d.st
	sym := st.th.Sym
	iw := d.innerWidth()
	var head, body, tail []line
	add := func(to *[]line, segs ...seg) { *to = append(*to, line{segs: segs}) }
	// The instructions wrap: they are read whole or not at all.
	wrapAdd := func(to *[]line, text string, r role) {
		for _, l := range wrap(text, iw) {
			add(to, seg{l, r})
		}
	}
	v := d.opened.Versions
	// Narrower than the title and the versions (40 columns), the cluster
	// name and the Kubernetes versions take a row of their own: cut at
	// the edge, the dialog that confirms the apply lost the name of the
	// cluster it applies to ("Apply the new spec to cluster m…").
	const title = "Apply the new spec to cluster "
	if width(title+d.cluster) <= iw {
		add(&head, seg{title, rText}, seg{d.cluster, rCluster})
	} else {
		add(&head, seg{strings.TrimSpace(title), rText})
		for _, l := range wrap(d.cluster, iw) {
			add(&head, seg{l, rCluster})
		}
	}
	eksa := "EKS-A " + v.CurrentEKSA + " " + sym.Arrow + " " + v.TargetEKSA
	kube := "Kubernetes " + v.CurrentKubernetes + " " + sym.Arrow + " " + v.TargetKubernetes
	if width(eksa+"   "+kube) <= iw {
		add(&head, seg{eksa + "   " + kube, rVersion})
	} else {
		add(&head, seg{eksa, rVersion})
		add(&head, seg{kube, rVersion})
	}
	// One sentence, wrapped whole: two, each wrapped, read ragged at 60
	// columns. "Upgrades", not "rolls": an in-place upgrade replaces no
	// machine.
	wrapAdd(&body, "The upgrade lock is taken and a snapshot saved first; then the EKS-A controller upgrades the cluster while the dashboard follows.", rMuted)
	if len(d.plan.Skipped) > 0 {
		wrapAdd(&body, "Skipped checks (recorded): "+strings.Join(d.plan.Skipped, ", "), rSevWarning)
	}
	add(&body)
	body = append(body, dryRunLines(st, d.dry, 6, iw)...)
	tail, inputAt := d.tailLines(wrapAdd, true)
	// An operator at the end of the list stays there when a row comes or
	// goes (the error appears).
	atEnd := d.offset > 0 && d.offset == d.maxOffset()
	rows := d.h - 2 // the border
	folded, anchor, keysAt := 0, 0, 0
	placeholder := "cluster name"
	d.compact = false
	d.visible = len(body)
	if len(head)+len(body)+len(tail) > rows {
		// A row says where the list is and how to scroll it. On a short
		// terminal the blank lines go first, then the title scrolls too.
		d.visible = rows - len(head) - len(tail) - 1
		if d.visible < minBody {
			tail, inputAt = d.tailLines(wrapAdd, false)
			d.visible = rows - len(head) - len(tail) - 1
		}
		if d.visible < minBody {
			body = append(head, body...)
			head = nil
			d.visible = rows - len(tail) - 1
		}
		// Shorter still (40x14, fields to take over: the box, the prompt
		// and the keys wrap to seven rows), the sentences above the input
		// scroll at the list's end, the box first, then the prompt, and
		// the list opens at the first of them: fixed, they pushed the
		// dialog past the screen, and the App cut its top. The input, the
		// error and the keys stay.
		for _, n := range d.prompts(tail[:inputAt], iw) {
			if d.visible >= 1 {
				break
			}
			if folded == 0 {
				anchor = len(body)
			}
			body, tail, inputAt, folded = append(body, tail[:n]...), tail[n:], inputAt-n, folded+n
			d.visible = rows - len(head) - len(tail) - 1
		}
		d.visible = max(d.visible, 1)
		// Even so the list can have no row (40x10, fields to take over:
		// the keys wrap to two rows). The counts of the rows out of view
		// go beside the keys, for one row of the list, opened at the box,
		// and what to type is said in the empty input: in one short row
		// in its place, the prompt left no row for the box, nor for a sign
		// that anything was out of view, and ↑/↓ scrolled nothing seen.
		if len(head)+d.visible+1+len(tail) > rows {
			d.visible = 0
			if len(head) == 0 && folded > 0 {
				tail, keysAt = d.countedTail(wrapAdd, tail, len(body), false)
				d.visible = rows - len(tail)
				if d.visible < 1 && (d.hintShort != "" || d.blocked != "") {
					tail, keysAt = d.countedTail(wrapAdd, tail, len(body), true)
					d.visible = rows - len(tail)
				}
				// A name refused at 40x10 (fields to take over) took
				// the list's one row for the error, and the box
				// went out of view until tab or a resize: the keys
				// take their short form first, the error being what
				// the operator reads now.
				if d.visible < 1 && d.hintShort != "" {
					d.compact = true
					tail, keysAt = d.countedTail(wrapAdd, tail, len(body), true)
					d.visible = rows - len(tail)
				}
				if d.visible >= 1 {
					inputAt = 0
					if ph := fmt.Sprintf("type %q to confirm", d.cluster); width(ph) < d.input.Width() {
						placeholder = ph
					}
				}
			}
			// Shorter still, what to type is said in one short row in
			// place of the list.
			if d.visible < 1 {
				d.compact = false
				tail, inputAt = d.tightTail(wrapAdd)
				d.visible, keysAt = max(rows-len(head)-len(tail)-1, 0), 0
			}
		}
		// At 40 columns the scroll row was cut ("↑ 35 ↓ 4 · ↑/↓
		// pgup/pgdn scr…") and took a row of the list, where the
		// counts fit beside the keys on their last row: they go there,
		// and the list has the row. Where the row is whole (80x24), it
		// stays: it says the keys that scroll.
		if keysAt == 0 && d.visible >= 1 {
			n := len(body)
			hint := "   " + scrollHint(n, n) + " · ↑/↓ pgup/pgdn scroll"
			keys := len(wrap(d.keysText(), iw))
			if width(hint) > iw && len(wrap(d.keysText()+" · "+countsText(n, n), iw)) == keys {
				keysAt = len(tail) - keys
				d.visible++
			}
		}
	}
	d.head, d.body, d.tail, d.inputAt, d.keysAt = head, body, tail, inputAt, keysAt
	d.boxAt = -1
	if folded > 0 && len(d.dry.Conflicts) > 0 && d.visible > 0 {
		// The sentences fold box first (prompts).
		d.boxAt = anchor
	}
	d.input.Placeholder = placeholder
	switch {
	case folded != d.folded || d.resized && folded > 0:
		d.offset = min(anchor, d.maxOffset())
	case atEnd:
		d.offset = d.maxOffset()
	}
	d.folded, d.resized = folded, false
	d.clamp()
}

// countedTail is tail (the input, the error and the keys, the sentences
// above the input all at the body's end) with the keys laid out for the
// counts of the body's rows out of view beside them, as wide as n rows
// make them; keysAt is the keys' first row. short puts the error in its
// short form (tightTail's).
func (d *confirmDialog) countedTail(wrapAdd func(*[]line, string, role), tail []line, n int, short bool) (counted []line, keysAt int) {
	iw := d.innerWidth()
	keys := len(wrap(d.keysText(), iw))
	counted = append(counted, tail[:len(tail)-keys]...)
	if short {
		hint := d.hintShort
		if d.blocked != "" {
			hint = d.st.th.Sym.Fail + " " + d.blocked
		}
		counted = counted[:1] // the input
		if hint != "" {
			wrapAdd(&counted, hint, rFailure)
		}
	}
	keysAt = len(counted)
	wrapAdd(&counted, d.countedKeysText()+" · "+countsText(n, n), rMuted)
	return counted, keysAt
}

// countedKeysText is the keys' text beside the counts: short where
// relayout found no row for the list with the long one.
func (d *confirmDialog) countedKeysText() string {
	if d.compact {
		return d.compactKeysText()
	}
	return d.keysText()
}

// compactKeysText is keysText beside an error, in one row at 40 columns
// with the counts: enter is left out, the error being its answer, and
// tab's words, which the box and the error say; the way out stays whole.
func (d *confirmDialog) compactKeysText() string {
	if len(d.dry.Conflicts) > 0 && d.blocked == "" {
		return "tab · esc cancel"
	}
	return "esc cancel"
}

// prompts are the rows of each sentence of tail (the lines above the input
// laid out without gaps), in order: the take-over box, where there is one,
// and the prompt.
func (d *confirmDialog) prompts(tail []line, iw int) []int {
	prompt := len(wrap("type the cluster name ("+d.cluster+") to confirm:", iw))
	if box := len(tail) - prompt; box > 0 {
		return []int{box, prompt}
	}
	return []int{len(tail)}
}

// tailLines are the lines from the box to the keys, with the blank lines
// between them when gaps; inputAt is the input's index among them.
func (d *confirmDialog) tailLines(wrapAdd func(*[]line, string, role), gaps bool) (tail []line, inputAt int) {
	gap := func() {
		if gaps {
			tail = append(tail, line{})
		}
	}
	if len(d.dry.Conflicts) > 0 {
		box := "[ ]"
		if d.force {
			box = "[x]"
		}
		gap()
		// What it takes over, in the box: at 80×24 the list of the
		// fields is below the fold.
		whose := "other managers own"
		if m := upgrade.SoleManager(d.dry.Conflicts); m != "" {
			whose = m + " owns"
		}
		wrapAdd(&tail, fmt.Sprintf("%s take over the %d field(s) %s (recorded in the audit log)", box, len(d.dry.Conflicts), whose), rBold)
	}
	gap()
	wrapAdd(&tail, "type the cluster name ("+d.cluster+") to confirm:", rText)
	inputAt = len(tail)
	tail = append(tail, line{}) // the input
	switch {
	case d.blocked != "":
		wrapAdd(&tail, d.st.th.Sym.Fail+" "+d.blocked+": esc, then fix what the checks say", rFailure)
	case d.hint != "":
		wrapAdd(&tail, d.hint, rFailure)
	case gaps:
		// Kept, so that an error does not move the prompt.
		tail = append(tail, line{})
	}
	wrapAdd(&tail, d.keysText(), rMuted)
	return tail, inputAt
}

// keysText is the keys' row, before it wraps.
func (d *confirmDialog) keysText() string {
	switch {
	case d.blocked != "":
		return "esc cancel"
	case len(d.dry.Conflicts) > 0 && d.force:
		return "enter apply · tab leave the fields · esc cancel"
	case len(d.dry.Conflicts) > 0:
		return "enter apply · tab take over fields · esc cancel"
	}
	return "enter apply · esc cancel"
}

// tightTail is the input between what to type, in short, and the keys: the
// prompt above it, or the error's short form under it, which says as much.
// The list gives up its rows first: on one row it pushed the dialog past
// the screen, and the App cut its top.
func (d *confirmDialog) tightTail(wrapAdd func(*[]line, string, role)) (tail []line, inputAt int) {
	hint := d.hintShort
	switch {
	case d.blocked != "":
		hint = d.st.th.Sym.Fail + " " + d.blocked
	case hint == "":
		wrapAdd(&tail, fmt.Sprintf("type %q to confirm:", d.cluster), rText)
	}
	inputAt = len(tail)
	tail = append(tail, line{})
	if hint != "" {
		wrapAdd(&tail, hint, rFailure)
	}
	wrapAdd(&tail, d.keysText(), rMuted)
	return tail, inputAt
}

func (d *confirmDialog) View() string {
	st := d.st
	iw := d.innerWidth()
	var b strings.Builder
	n := 0
	emit := func(segs []seg) {
		if n > 0 {
			b.WriteByte('\n')
		}
		n++
		st.paintSegs(&b, segs, iw)
	}
	for _, l := range d.head {
		emit(l.segs)
	}
	for _, l := range d.body[d.offset:min(d.offset+d.visible, len(d.body))] {
		emit(l.segs)
	}
	above, below := d.offset, max(len(d.body)-d.offset-d.visible, 0)
	if d.visible > 0 && d.keysAt == 0 && (above > 0 || below > 0) {
		emit([]seg{{"   " + scrollHint(above, below) + " · ↑/↓ pgup/pgdn scroll", rMuted}})
	}
	for i, l := range d.tail {
		if d.keysAt > 0 && i >= d.keysAt {
			// The keys and the counts, wrapped as relayout made room
			// for (the counts no wider than there).
			if i == d.keysAt {
				for _, k := range wrap(d.countedKeysText()+" · "+countsText(above, below), iw) {
					emit([]seg{{k, rMuted}})
				}
			}
			continue
		}
		if i == d.inputAt {
			// The first row on a tight dialog (tightTail).
			if n > 0 {
				b.WriteByte('\n')
			}
			n++
			b.WriteString(d.input.View())
			continue
		}
		emit(l.segs)
	}
	return st.th.Dialog.Render(b.String())
}
