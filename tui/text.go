package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/upgrade-console/upgrade-console/model"
)

// This file holds the cell arithmetic every pane uses. Widths are counted on
// plain text before it is painted, so no rendered (escaped) string is ever
// measured again: measuring is what makes lipgloss slow (lipgloss#721).

// width is the number of terminal cells plain text takes.
func width(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 || s[i] < 0x20 {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}

// fit truncates plain text to w cells (with an ellipsis) or pads it with
// spaces to exactly w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := width(s)
	switch {
	case sw == w:
		return s
	case sw < w:
		return s + spaces(w-sw)
	default:
		// A wide rune (CJK) that would straddle the edge is dropped
		// whole: the cut is a cell short, and the column after it moved.
		t := truncate(s, w)
		return t + spaces(w-width(t))
	}
}

// fitMiddle is fit for versions, which differ at both ends: the release at
// the start, the build at the end (v1.15.14-eksa.10 → v1.15.1…eksa.10).
func fitMiddle(s string, w int) string {
	sw := width(s)
	if sw <= w || w < 5 || sw != len(s) { // short, tiny, or not plain ASCII
		return fit(s, w)
	}
	tail := (w - 1) / 2
	return s[:w-1-tail] + "…" + s[len(s)-tail:]
}

// fitEnd is fit for names whose end tells them apart: CAPI names machines
// <deployment>-<hash>-<suffix>, so cut at the end two rows read alike
// ("mgmt-md-1-gxmqdpw…"), while cut at the start they keep their unique
// suffix ("…gxmqdpw-rrdmk"); the role column names the deployment.
func fitEnd(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := width(s)
	switch {
	case sw <= w:
		return fit(s, w)
	case w == 1:
		return "…"
	case sw == len(s): // plain ASCII: one cell a byte
		return "…" + s[len(s)-(w-1):]
	default:
		// TruncateLeft keeps a wide rune the cut goes through: drop it
		// too, and pad the cell it leaves.
		n := sw - (w - 1)
		t := ansi.TruncateLeft(s, n, "…")
		if width(t) > w {
			t = ansi.TruncateLeft(s, n+1, "…")
		}
		return fit(t, w)
	}
}

// truncate cuts plain text to at most w cells, ending in "…" when cut.
func truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if width(s) <= w {
		return s
	}
	if w == 1 {
		return "…"
	}
	return ansi.Truncate(s, w, "…")
}

const spaceRun = "                                                                                                                                "

// spaces returns n spaces without allocating for common widths.
func spaces(n int) string {
	if n <= 0 {
		return ""
	}
	if n <= len(spaceRun) {
		return spaceRun[:n]
	}
	return strings.Repeat(" ", n)
}

// repeat returns s n times (rules, bars).
func repeat(s string, n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat(s, n)
}

// since formats how long ago t was, in the compact form clusterctl and
// kubectl use ("45s", "6m", "2h05m"). Zero time renders as "".
func since(t, now time.Time) string {
	if t.IsZero() {
		return ""
	}
	return model.ShortDuration(now.Sub(t))
}

// clockDuration is the timeline's m:ss (or h:mm:ss) form.
func clockDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d >= 24*time.Hour {
		return model.ShortDuration(d)
	}
	s := int(d / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// wrapWords breaks plain text into lines of at most w cells at its spaces,
// and a `quoted` span is one word: a command to copy stays whole on one line
// whenever it fits in w (split, it reads as two commands, and a copy of one
// line runs half of it). A span wider than w breaks at its spaces, and a
// word wider than w is cut. Empty text is no line at all (wrap makes it one).
func wrapWords(s string, w int) []string {
	if w <= 0 {
		return nil
	}
	if strings.ContainsAny(s, "\t\n\r") {
		// A line break kept inside a quoted span would break the screen.
		s = strings.Join(strings.Fields(s), " ")
	}
	var out []string
	var cur strings.Builder
	cw := 0
	add := func(word string) {
		ww := width(word)
		if cw > 0 && cw+1+ww > w {
			out = append(out, cur.String())
			cur.Reset()
			cw = 0
		}
		if cw > 0 {
			cur.WriteByte(' ')
			cw++
		}
		cur.WriteString(word)
		cw += ww
	}
	for _, tok := range quotedFields(s) {
		if width(tok) <= w {
			add(tok)
			continue
		}
		for _, f := range strings.Fields(tok) {
			if width(f) <= w {
				add(f)
				continue
			}
			for _, part := range strings.Split(ansi.Wrap(f, w, ""), "\n") {
				add(part)
			}
		}
	}
	if cw > 0 {
		out = append(out, cur.String())
	}
	return out
}

// quotedFields is strings.Fields, except that spaces between backquotes do
// not separate: "resume with `a b c` after" is "resume", "with", "`a b c`",
// "after". An unclosed backquote runs to the end.
func quotedFields(s string) []string {
	var out []string
	start, quoted := -1, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '`' {
			quoted = !quoted
		}
		if (c == ' ' || c == '\t' || c == '\n') && !quoted {
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// fitNames fits each name to w as fit does, except names that fit would cut
// to the same text ("bottlerocke…" for both Bottlerocket images at 60
// columns): those lose what they share at the start instead, which the rows
// around them show ("…admin image", "…ctrl image").
func fitNames(names []string, w int) []string {
	out := make([]string, len(names))
	byFit := make(map[string][]int, len(names))
	for i, n := range names {
		out[i] = fit(n, w)
		if width(n) > w {
			byFit[out[i]] = append(byFit[out[i]], i)
		}
	}
	for _, idx := range byFit {
		if len(idx) < 2 {
			continue
		}
		prefix := names[idx[0]]
		for _, i := range idx[1:] {
			prefix = commonPrefix(prefix, names[i])
		}
		if prefix == names[idx[0]] || len(prefix) == 0 {
			continue
		}
		for _, i := range idx {
			out[i] = fit("…"+names[i][len(prefix):], w)
		}
	}
	return out
}

// commonPrefix is the longest start a and b share, cut back to a word's
// start when it ends inside one of them.
func commonPrefix(a, b string) string {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	if n < len(a) && n < len(b) {
		if sp := strings.LastIndexByte(a[:n], ' '); sp >= 0 {
			n = sp + 1
		} else {
			n = 0
		}
	}
	return a[:n]
}

// errText is an error as the screens show it: printable (model.Printable),
// since an API server's or a file's text quoted in it may hold escape
// sequences that would rewrite the screen.
func errText(err error) string { return model.Printable(err.Error()) }
