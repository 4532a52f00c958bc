package tui

import (
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
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
		if span = strings.TrimSpace(span); span != "" {
			out = addCommand(out, span)
		}
		text = after
	}
}

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

// copiedNotice is what the last line says once y sent cmds[i]: that the
// terminal was asked by OSC 52, which some ignore (tmux without
// set-clipboard on), so that a paste of something else is not a surprise.
func copiedNotice(cmds []string, i int) string {
	if len(cmds) == 0 {
		return "y: no command shown to copy"
	}
	which := ""
	if len(cmds) > 1 {
		which = " " + strconv.Itoa(i+1) + " of " + strconv.Itoa(len(cmds))
	}
	return "copied" + which + " by OSC 52 (if the terminal allows it): " + cmds[i]
}
