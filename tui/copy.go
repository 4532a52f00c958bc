package tui

import (
	"slices"
	"strconv"
	"strings"
	"unicode"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"
)

// copyBinding is y, which puts a command the view shows on the clipboard.
// The commands carry the operator's connection flags, so they run past 80
// columns and wrap: a terminal selection over the rows copies the line
// break (and a dialog's border) with them, and the shell, pasted, runs the
// first half alone against its current context. The App takes y, as it
// takes ctrl+z, over every screen and dialog that shows commands
// (commandShower); the key maps carry it for their help, enabled only while
// there is a command to copy.
func copyBinding() key.Binding {
	return key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy command"))
}

// commandShower is a screen or dialog that shows commands to paste.
type commandShower interface {
	// shownCommands are the commands the view shows, whole, in the order
	// it shows them; ok is false while y is text being typed (a filter, a
	// typed confirmation), which the view then gets as any other key.
	shownCommands() (cmds []string, ok bool)
}

// backquoted are the `spans` of text, without their backquotes: the
// console's messages quote a command to paste so (wrapWords keeps one on a
// row where it fits). Taken from the text before it is wrapped, a command
// wider than the rows is still whole. A backquote left open quotes nothing:
// its end is not known.
func backquoted(text string) []string {
	var out []string
	for {
		_, rest, ok := strings.Cut(text, "`")
		if !ok {
			return out
		}
		span, after, ok := strings.Cut(rest, "`")
		if !ok {
			return out
		}
		if strings.ContainsAny(span, "\t\n\r") {
			// As wrapWords shows it: a line break pasted runs half of it.
			span = strings.Join(strings.Fields(span), " ")
		}
		if span = strings.TrimSpace(span); pasteable(span) {
			out = addCommand(out, span)
		}
		text = after
	}
}

// pasteable reports whether a backquoted span is a command to run as it
// is: it starts with a program the console's commands name, and holds no
// <placeholder> outside single quotes (`etcdctl member remove <its id>`
// is an instruction; pasted, the shell reads <its as a redirection). A
// quoted placeholder ('<token>') fails loudly where it stands, as meant.
// Partial commands (`plan --cluster`, `--snapshot-file <path>`) are text.
func pasteable(span string) bool {
	prog, _, _ := strings.Cut(span, " ")
	if !slices.Contains(pastePrograms, prog) {
		return false
	}
	quoted := false
	for _, c := range span {
		switch {
		case c == '\'':
			quoted = !quoted
		case c == '<' && !quoted:
			return false
		}
	}
	return true
}

// pastePrograms are the programs of the commands the console prints.
var pastePrograms = []string{"upgrade-console", "kubectl", "eksctl", "clusterctl", "etcdctl"}

// addCommand appends cmd to cmds unless it is there already: two lines
// naming the same command offer it once.
func addCommand(cmds []string, cmd string) []string {
	if cmd == "" || slices.Contains(cmds, cmd) {
		return cmds
	}
	return append(cmds, cmd)
}

// addCommandsOf appends the backquoted commands of text to cmds.
func addCommandsOf(cmds []string, text string) []string {
	for _, c := range backquoted(text) {
		cmds = addCommand(cmds, c)
	}
	return cmds
}

// copiedNotice is what the last line says once y sent cmds[i], in w cells:
// which command, with as much of it as fits, its start and its end (two
// lock clear commands differ only past the width), and that it went by
// OSC 52, which some terminals ignore (tmux without set-clipboard on), so
// that a paste of something else is not a surprise.
func copiedNotice(cmds []string, i, w int) string {
	if len(cmds) == 0 {
		return "y: no command shown to copy"
	}
	lead := "copied (OSC 52): "
	if len(cmds) > 1 {
		lead = "copied " + strconv.Itoa(i+1) + "/" + strconv.Itoa(len(cmds)) + " (OSC 52): "
	}
	return lead + cutMiddle(cmds[i], w-width(lead))
}

// cutMiddle cuts plain text to at most w cells by taking out its middle:
// a command's program and verb stay, and so does its end.
func cutMiddle(s string, w int) string {
	sw := width(s)
	if sw <= w {
		return s
	}
	if w < 8 {
		return truncate(s, w)
	}
	head := (w - 1) * 2 / 3
	tail := w - 1 - head
	return ansi.Truncate(s, head, "") + "…" + ansi.TruncateLeft(s, sw-tail, "")
}

// firstInView is the index of the first of cmds the screen shows whole, or
// else the first whose start it shows (its rows cut at the bottom, or its
// line at the width), or else 0. screen is the frame's text: rows, and a
// dialog's borders, are read as the spaces they stand for, so a command
// wrapped over rows reads whole again.
func firstInView(cmds []string, screen string) int {
	flat := " " + strings.Join(strings.FieldsFunc(screen, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(borderRunes, r)
	}), " ") + " "
	for _, whole := range []bool{true, false} {
		for i, c := range cmds {
			words := strings.Fields(c)
			if !whole {
				words = words[:min(len(words), startWords)]
			}
			if strings.Contains(flat, strings.Join(words, " ")) {
				return i
			}
		}
	}
	return 0
}

// startWords is how much of a command tells where it starts: its program,
// its verb and their first arguments ("upgrade-console lock clear lease").
const startWords = 4

// borderRunes are the box-drawing runes dialogs and panes draw around text.
const borderRunes = "│┃║─━═┌┐└┘╭╮╰╯├┤┬┴┼"
