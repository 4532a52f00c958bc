package tui

import (
	"strings"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
)

// role names what a piece of text means; the theme decides how it looks.
// View-models store roles, not styles, so that a theme change (the terminal
// answered the background query) needs no rebuild of the data.
type role uint8

const (
	rText role = iota
	rMuted
	rBold
	rTitle
	rCluster
	rVersion
	rPaneTitle
	rPaneFocused
	rRule
	rPhaseDone
	rPhaseActive
	rPhasePending
	rPhaseFailed
	rPhaseSkipped
	rPhaseHeld
	rPhaseRolledBack
	rCondTrue
	rCondFalse
	rCondUnknown
	rSevError
	rSevWarning
	rSevInfo
	rFailure
	rTableHeader
	rTableRow
	rSelected
	rLive
	rConnecting
	rReconnecting
	rStale
	rPaused
	rStall
	rDone
	rBarFull
	rBarEmpty
	rBarFail
	roleCount
)

// styles is a theme resolved into an array indexed by role.
type styles struct {
	th   *themes.Theme
	inks [roleCount]themes.Ink
}

func newStyles(th *themes.Theme) *styles {
	s := &styles{th: th}
	s.inks = [roleCount]themes.Ink{
		rText: th.Text, rMuted: th.Muted, rBold: th.Bold, rTitle: th.Title,
		rCluster: th.HeaderCluster, rVersion: th.HeaderVersion,
		rPaneTitle: th.PaneTitle, rPaneFocused: th.PaneFocused, rRule: th.Rule,
		rPhaseDone: th.PhaseDone, rPhaseActive: th.PhaseActive, rPhasePending: th.PhasePending,
		rPhaseFailed: th.PhaseFailed, rPhaseSkipped: th.PhaseSkipped,
		// The themes have no phase inks for these: a held phase looks like
		// the pause badge, a rolled-back one like a stall (bold in mono),
		// which is what each is to the operator.
		rPhaseHeld: th.BadgePaused, rPhaseRolledBack: th.Stall,
		rCondTrue: th.CondTrue, rCondFalse: th.CondFalse, rCondUnknown: th.CondUnknown,
		rSevError: th.SevError, rSevWarning: th.SevWarning, rSevInfo: th.SevInfo,
		rFailure: th.Failure, rTableHeader: th.TableHeader, rTableRow: th.TableRow,
		rSelected: th.TableSelected, rLive: th.BadgeLive, rConnecting: th.BadgeConnecting,
		rReconnecting: th.BadgeReconnecting, rStale: th.BadgeStale, rPaused: th.BadgePaused,
		rStall: th.Stall, rDone: th.Done,
		rBarFull: th.BarFull, rBarEmpty: th.BarEmpty, rBarFail: th.BarFail,
	}
	return s
}

func (s *styles) paint(r role, text string) string { return s.inks[r].S(text) }

// seg is a piece of plain text and what it means.
type seg struct {
	text string
	r    role
}

// segsWidth is the cell width of a run of segments.
func segsWidth(ss []seg) int {
	n := 0
	for _, s := range ss {
		n += width(s.text)
	}
	return n
}

// paintSegs writes segments into exactly w cells: truncated from the end
// when too long, padded when short. A cut ends in "…", also where a segment
// ends exactly at the edge and only later ones are left out ("running
// v1.30.5 ×2" hid the machine on v1.31.3 that followed).
func (s *styles) paintSegs(b *strings.Builder, ss []seg, w int) {
	last := -1 // the last segment with something to read
	for i := len(ss) - 1; i >= 0; i-- {
		if strings.TrimSpace(ss[i].text) != "" {
			last = i
			break
		}
	}
	left := w
	for i, sg := range ss {
		if left <= 0 {
			break
		}
		t := sg.text
		tw := width(t)
		switch {
		case tw > left:
			t = truncate(t, left)
			tw = width(t)
		case tw == left && i < last:
			t = truncate(t+"…", left)
			tw = width(t)
		}
		b.WriteString(s.paint(sg.r, t))
		left -= tw
	}
	b.WriteString(spaces(left))
}

// conditionMark is the symbol and role for a condition.
func (s *styles) conditionMark(c model.Condition) seg {
	sym := s.th.Sym
	switch {
	case c.Status == "True":
		return seg{sym.OK, rCondTrue}
	case c.Status == "False" && c.Severity == model.SeverityError:
		return seg{sym.Fail, rSevError}
	case c.Status == "False" && c.Severity == model.SeverityInfo:
		return seg{sym.Active, rSevInfo}
	case c.Status == "False":
		return seg{sym.Fail, rCondFalse}
	default:
		return seg{sym.Unknown, rCondUnknown}
	}
}
