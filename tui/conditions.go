package tui

import (
	"strconv"
	"strings"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/report"
)

// healthy reports whether a condition needs no attention.
func healthy(c model.Condition) bool { return report.Healthy(c) }

// conditionLines lists conditions the way clusterctl describe does: the
// healthy ones folded into one line (unless expanded), the others one by one
// with reason, since and, indented below, the message.
func conditionLines(st *styles, cs model.Conditions, expand bool) []line {
	var out []line
	var ok []string
	for _, c := range cs {
		if healthy(c) && !expand {
			ok = append(ok, c.Type)
			continue
		}
		out = append(out, conditionLine(st, c)...)
	}
	if len(ok) > 0 {
		folded := line{segs: []seg{
			{" " + st.th.Sym.OK + " ", rCondTrue},
			{strconv.Itoa(len(ok)) + " healthy: ", rMuted},
			{strings.Join(ok, ", "), rMuted},
		}}
		out = append(out, folded)
	}
	return out
}

func conditionLine(st *styles, c model.Condition) []line {
	mark := st.conditionMark(c)
	switch {
	case report.NegativePolarity(c.Type) && c.Status == "True":
		mark = seg{st.th.Sym.Active, rSevInfo}
	case report.NegativePolarity(c.Type) && c.Status == "False":
		mark = seg{st.th.Sym.OK, rCondTrue}
	}
	segs := []seg{{" " + mark.text + " ", mark.r}, {c.Type, rText}}
	if c.Reason != "" && !healthy(c) {
		segs = append(segs, seg{"  " + c.Reason, rMuted})
	}
	out := []line{{segs: segs, since: c.LastTransitionTime}}
	if c.Message != "" && !healthy(c) {
		r := rMuted
		if c.Severity == model.SeverityError {
			r = rSevError
		}
		out = append(out, messageLines(c.Message, r, "     ")...)
	}
	return out
}

// maxMessageLines caps a multi-line message (v1beta2 aggregates one line per
// machine); the rest is summarised.
const maxMessageLines = 4

// messageLines splits a message into indented lines.
func messageLines(msg string, r role, indent string) []line {
	parts := strings.Split(strings.TrimRight(msg, "\n"), "\n")
	var out []line
	for i, p := range parts {
		if i == maxMessageLines {
			out = append(out, line{segs: []seg{{indent + "… " + strconv.Itoa(len(parts)-i) + " more lines", rMuted}}})
			break
		}
		out = append(out, line{segs: []seg{{indent + strings.TrimSpace(p), r}}})
	}
	return out
}
