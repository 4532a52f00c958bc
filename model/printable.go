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
// follows. Format characters go the same way: a right-to-left override
// (U+202E) reorders what follows it on the line, and zero-width ones make
// two names look alike. The watchers apply it where such text enters a
// snapshot.
//
// A CRLF line break is a line break: escaped, a message from a tool that
// writes them ended each of its lines on a literal "\r".
func Printable(s string) string {
	if strings.Contains(s, "\r\n") {
		s = strings.ReplaceAll(s, "\r\n", "\n")
	}
	return escape(s, unprintable)
}

// PrintableLine is Printable for a value that is one token on one line
// (a version, an image reference, a holder): its newlines and tabs are
// escaped too, where a newline would start a line of the value's choosing
// in the console's output.
func PrintableLine(s string) string {
	return escape(s, func(r rune) bool { return r == '\n' || r == '\t' || unprintable(r) })
}

func escape(s string, bad func(rune) bool) string {
	if strings.IndexFunc(s, bad) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		if bad(r) {
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func unprintable(r rune) bool {
	return r != '\n' && r != '\t' && (unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp))
}

// FoldLines is text of many lines on one: its first line, and how many
// follow ("disk full (+2 lines)"). A message printed in a table or after a
// label would otherwise start lines of its own, which read as the
// console's.
func FoldLines(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		rest := strings.Count(s[i:], "\n")
		return strings.TrimRight(s[:i], "\r") + " (+" + strconv.Itoa(rest) + " lines)"
	}
	return s
}

// JoinLines puts text of many lines on one, its lines joined with "; " (a
// space after a line that ends in ":"): the API server's multi-line
// refusal ("errors:" and a field a line), a failureMessage whose cause
// follows a first line that names none.
func JoinLines(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if b.Len() > 0 {
			if strings.HasSuffix(b.String(), ":") {
				b.WriteString(" ")
			} else {
				b.WriteString("; ")
			}
		}
		b.WriteString(l)
	}
	return b.String()
}

// CheckLine is a preflight check's message or fix as one line of the
// console's output: its lines joined (a failureMessage's cause often
// follows its first line) and escaped, whichever path the cluster's text
// took into it.
func CheckLine(s string) string { return PrintableLine(JoinLines(s)) }
