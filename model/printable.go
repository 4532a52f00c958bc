package model

import (
	"strconv"
	"strings"
	"unicode"
)

// Printable is text read from the cluster as the console prints it: its
// control characters escaped ("\x1b"), newlines and tabs kept (messages
// wrap, and the panes fold them to one line). Condition and event messages,
// failure messages, container messages and annotations are text anyone who
// may write the object (or create an event) chooses, and the console prints
// them to a terminal: an escape sequence there could clear a line and write
// another in its place ("lock: no holder"), retitle the window or hide what
// follows. The watchers apply it where such text enters a snapshot.
func Printable(s string) string {
	if strings.IndexFunc(s, unprintable) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		if unprintable(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func unprintable(r rune) bool {
	return r != '\n' && r != '\t' && unicode.IsControl(r)
}
