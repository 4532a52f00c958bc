package tui

import (
	"strconv"
	"strings"
	"time"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
)

// headerModel is the two header lines, built in Update from the snapshot,
// the progress and the timeline.
type headerModel struct {
	ident    []seg // cluster, context
	versions []seg // EKS-A and Kubernetes, current → target
	badges   []seg // right aligned: stale, lock, paused, connection
	// badgesShort is the same, shorter, for when badges leave the
	// versions no room.
	badgesShort []seg
	timeline    model.Timeline
	progress    model.Progress
}

// running is the oldest Kubernetes minor the nodes run ("" when unknown):
// the control plane's version alone read "k8s 1.31" while hundreds of
// workers were still on 1.30.
func buildHeader(st *styles, s *model.ClusterState, running string, p model.Progress, tl model.Timeline, opts Options, now time.Time) headerModel {
	sym := st.th.Sym
	h := headerModel{timeline: tl, progress: p}
	name, ctx := opts.ClusterName, opts.Context
	if s != nil {
		if s.ClusterName != "" {
			name = s.ClusterName
		}
		if s.Context != "" {
			ctx = s.Context
		}
	}
	h.ident = []seg{{" " + name, rCluster}}
	if ctx != "" {
		h.ident = append(h.ident, seg{" @ " + ctx, rMuted})
	}
	if s != nil && s.Cluster != nil {
		c := s.Cluster
		cur := c.Annotations[model.AnnotationManagementComponentsVersion]
		h.versions = append(h.versions, seg{"EKS-A ", rMuted})
		h.versions = append(h.versions, fromTo(sym.Arrow, cur, c.EksaVersion)...)
		curK := ""
		if s.ControlPlane != nil {
			curK = minorOf(s.ControlPlane.StatusVersion)
		}
		if running != "" && (curK == "" || olderMinor(running, curK)) {
			curK = running
		}
		h.versions = append(h.versions, seg{"   k8s ", rMuted})
		h.versions = append(h.versions, fromTo(sym.Arrow, curK, c.KubernetesVersion)...)
	}
	h.badges = buildBadges(sym, s, p, opts, now, false)
	h.badgesShort = buildBadges(sym, s, p, opts, now, true)
	return h
}

// buildBadges is the right-hand side of the header's first line. The short
// form, for narrow screens, drops what only dates or details a badge (when
// the lock was renewed, the renewal's error) and keeps every badge: at 80
// columns the full form left no room for the versions.
func buildBadges(sym themes.Symbols, s *model.ClusterState, p model.Progress, opts Options, now time.Time, short bool) []seg {
	var out []seg
	if p.Stale {
		out = append(out, seg{"◌ status not yet observed", rStale}, seg{"   ", rText})
	}
	ownLock := false
	if opts.Lock != nil {
		switch l := opts.Lock(); {
		case l.Lost:
			out = append(out, seg{sym.Fail + " lock lost", rFailure}, seg{"   ", rText})
		case l.Holder != "" && l.Kept && keptLockGone(s):
			// Cleared (from R, or `lock clear lease`): the session still
			// says kept, the Lease says otherwise, and an upgrade that
			// resumes runs without a lock. Another console's lock, if one
			// took it, is shown after this.
			t := "lock: this console's kept lock was cleared"
			if short {
				t = "lock: kept lock cleared"
			}
			out = append(out, seg{sym.Warn + " " + t, rStale}, seg{"   ", rText})
		case l.Holder != "" && l.Kept:
			ownLock = true
			// No longer renewed: an age would only grow.
			t := "lock: kept by this console (the upgrade failed)"
			if short {
				t = "lock: kept by this console"
			}
			out = append(out, seg{sym.Warn + " " + t, rStale}, seg{"   ", rText})
		case l.Holder != "":
			ownLock = true
			// This console's own lock: its holder (this user, this host,
			// this console's id) would read as someone else's, the way
			// another console's lock is shown.
			t := "lock: held by this console"
			if short {
				t = "lock: this console"
			}
			if d := since(l.Renewed, now); d != "" && !short {
				t += " (renewed " + d + " ago)"
			}
			if l.RenewErr != "" {
				// The lease runs out unless a renewal succeeds.
				t += " " + sym.Warn + " renewal failing"
				if !short {
					t += ": " + l.RenewErr
				}
				out = append(out, seg{t, rFailure}, seg{"   ", rText})
				break
			}
			out = append(out, seg{t, rMuted}, seg{"   ", rText})
		}
	}
	if !ownLock && s != nil && s.Lock.Held() {
		out = append(out, watchedLockBadge(sym, s.Lock, now, short), seg{"   ", rText})
	}
	if p.Paused {
		// Whatever the phases show, nothing moves until the pause goes;
		// the status line says why and how it resumes.
		out = append(out, seg{markHeld + " paused", rPaused}, seg{"   ", rText})
	}
	switch {
	case s == nil || s.Connection == model.Connecting || s.Connection == "":
		out = append(out, seg{"◌ connecting", rConnecting})
	case s.Connection == model.Reconnecting:
		t := "↻ reconnecting"
		if d := since(s.ConnectionSince, now); d != "" {
			t += " " + d
		}
		out = append(out, seg{t, rReconnecting})
	default:
		out = append(out, seg{sym.Active + " live", rLive})
	}
	return out
}

// keptLockGone says whether the watched Lease shows no lock kept any more
// (gone, released, or taken afresh: a lock taken again is not kept). Unknown
// (not watched, not yet listed) is not gone.
func keptLockGone(s *model.ClusterState) bool {
	if s == nil {
		return false
	}
	src := s.Source(model.KindLease)
	return src.Synced && src.Forbidden == "" && (!s.Lock.Held() || s.Lock.Kept == "")
}

// watchedLockBadge is the upgrade lock as the watchers see it, when this
// console does not hold it: another console's, or one left stale by a
// console that died (which R offers to clear). The holder is user@host: the
// console's instance id ("/3f2a9c1e") would crowd out the header at 80
// columns, and whoever holds it, it is not this console.
func watchedLockBadge(sym themes.Symbols, l *model.Lock, now time.Time, short bool) seg {
	holder, _, _ := strings.Cut(l.HolderIdentity, "/")
	d := since(l.LastRenewed(), now)
	if l.Kept != "" {
		// Left on purpose by an upgrade that failed or timed out: not a
		// console that died, and no age tells it apart.
		return seg{sym.Warn + " lock: " + holder + " kept", rStale}
	}
	if l.Expired(now) {
		return seg{sym.Warn + " lock: " + holder + " stale " + d, rStale}
	}
	t := "lock: " + holder
	if d != "" && !short {
		t += " (renewed " + d + " ago)"
	}
	return seg{t, rMuted}
}

// fromTo is "v0.20.4 → v0.21.1", or just the target when nothing changes or
// the current version is unknown.
func fromTo(arrow, cur, target string) []seg {
	switch {
	case target == "":
		return []seg{{orUnknown(cur), rVersion}}
	case cur == "" || cur == target:
		return []seg{{target, rVersion}}
	default:
		return []seg{{cur, rVersion}, {" " + arrow + " ", rMuted}, {target, rBold}}
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// olderMinor reports whether minor a ("1.30") is older than b ("1.31").
func olderMinor(a, b string) bool {
	am, an, aok := splitMinor(a)
	bm, bn, bok := splitMinor(b)
	return aok && bok && (am < bm || am == bm && an < bn)
}

func splitMinor(v string) (major, minor int, ok bool) {
	ma, mi, found := strings.Cut(v, ".")
	a, err1 := strconv.Atoi(ma)
	b, err2 := strconv.Atoi(mi)
	return a, b, found && err1 == nil && err2 == nil
}

// oldestKubelet is the oldest Kubernetes minor among the nodes' kubelets,
// "" when no node reports one.
func oldestKubelet(s *model.ClusterState) string {
	oldest, last := "", ""
	for _, n := range s.Nodes.All() {
		// A fleet runs a version or two: parse each once in a row.
		if n.KubeletVersion == last {
			continue
		}
		last = n.KubeletVersion
		if v := minorOf(last); v != "" && (oldest == "" || olderMinor(v, oldest)) {
			oldest = v
		}
	}
	return oldest
}

// minorOf turns "v1.30.14-eks-1-30-40" into "1.30".
func minorOf(v string) string {
	v = strings.TrimPrefix(v, "v")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}

// render draws the header in exactly two lines of w cells. The timeline has
// three forms, from spelled out to symbols only; the widest that fits wins.
func (h *headerModel) render(b *strings.Builder, st *styles, w int, now time.Time) {
	// Line 1: identity and versions on the left, badges on the right; the
	// context goes first when the line is too narrow, then the spacing,
	// then the badges' details.
	full, short := joinSegs(h.ident, seg{"   ", rText}, h.versions), joinSegs(h.ident[:1], seg{"  ", rText}, h.versions)
	variants := []struct{ left, badges []seg }{{full, h.badges}, {short, h.badges}, {short, h.badgesShort}}
	v := variants[len(variants)-1]
	for _, c := range variants {
		if segsWidth(c.left)+segsWidth(c.badges)+2 <= w {
			v = c
			break
		}
	}
	left, badges := v.left, v.badges
	bw := segsWidth(badges)
	if bw+12 > w {
		st.paintSegs(b, left, w)
	} else {
		st.paintSegs(b, left, w-bw-2)
		b.WriteByte(' ')
		st.paintSegs(b, badges, bw)
		b.WriteByte(' ')
	}
	b.WriteByte('\n')
	for _, form := range []int{timelineFull, timelineShort, timelineSymbols} {
		segs := h.timelineSegs(st, form, now)
		if segsWidth(segs) <= w || form == timelineSymbols {
			st.paintSegs(b, segs, w)
			return
		}
	}
}

const (
	timelineFull = iota
	timelineShort
	timelineSymbols
)

var shortPhase = map[model.Phase]string{
	model.PhaseComponents: "comp", model.PhaseEtcd: "etcd", model.PhaseControlPlane: "cp",
	model.PhaseCNI: "cni", model.PhaseWorkers: "wrk",
}

func (h *headerModel) timelineSegs(st *styles, form int, now time.Time) []seg {
	sym := st.th.Sym
	p := &h.progress
	segs := make([]seg, 0, 24)
	segs = append(segs, seg{" ", rText})
	sep := seg{" ─ ", rRule}
	if form != timelineFull {
		sep = seg{" ", rText}
	}
	for i, pp := range p.Phases {
		if i > 0 {
			segs = append(segs, sep)
		}
		mark, r := phaseMark(sym, pp.Status)
		name := string(pp.Phase)
		if form == timelineShort {
			name = shortPhase[pp.Phase]
		}
		el := ""
		if e, ok := h.timeline.Entry(pp.Phase); ok && pp.Status != model.PhasePending && pp.Status != model.PhaseSkipped {
			if d := e.Elapsed(now); d > 0 {
				el = clockDuration(d)
			}
		}
		switch form {
		case timelineSymbols:
			segs = append(segs, seg{mark, r})
			if named(pp.Status) {
				segs = append(segs, seg{" " + shortPhase[pp.Phase], r})
				if el != "" {
					segs = append(segs, seg{" " + el, rMuted})
				}
			}
		default:
			segs = append(segs, seg{name + " ", nameRole(pp.Status)}, seg{mark, r})
			if el != "" {
				segs = append(segs, seg{" " + el, rMuted})
			}
		}
	}
	if len(p.Phases) > 0 {
		mark, r := sym.Pending, rPhasePending
		switch {
		case p.Failed:
			mark, r = sym.Fail, rPhaseFailed
		case p.Complete:
			mark, r = sym.OK, rPhaseDone
		}
		if form == timelineSymbols {
			segs = append(segs, sep, seg{mark, r})
		} else {
			segs = append(segs, sep, seg{"ready ", nameRole(model.PhasePending)}, seg{mark, r})
		}
	} else {
		segs = append(segs, seg{"waiting for the first snapshot", rMuted})
	}
	if !h.timeline.Started.IsZero() {
		end := now
		if !h.timeline.Finished.IsZero() {
			end = h.timeline.Finished
		}
		label := "   elapsed "
		if form == timelineSymbols {
			label = "  "
		}
		segs = append(segs, seg{label + clockDuration(end.Sub(h.timeline.Started)), rMuted})
	}
	return segs
}

// Marks of the phase statuses the themes' symbols have none for. Both are
// one cell wide in every terminal font the other marks render in, and
// differ in shape from them, which is all the monochrome theme has:
// "‖" a pause (not the emoji-width "⏸"), "↺" a step taken back (unlike
// the header's "↻ reconnecting").
const (
	markHeld       = "‖"
	markRolledBack = "↺"
)

// named reports whether the symbols-only timeline names a phase: the ones
// an operator must find at a glance.
func named(s model.PhaseStatus) bool {
	switch s {
	case model.PhaseActive, model.PhaseBroken, model.PhaseHeld, model.PhaseRolledBack:
		return true
	}
	return false
}

func phaseMark(sym themes.Symbols, s model.PhaseStatus) (string, role) {
	switch s {
	case model.PhaseHeld:
		return markHeld, rPhaseHeld
	case model.PhaseRolledBack:
		return markRolledBack, rPhaseRolledBack
	case model.PhaseOK:
		return sym.OK, rPhaseDone
	case model.PhaseActive:
		return sym.Active, rPhaseActive
	case model.PhaseBroken:
		return sym.Fail, rPhaseFailed
	case model.PhaseSkipped:
		return sym.Skipped, rPhaseSkipped
	default:
		return sym.Pending, rPhasePending
	}
}

func nameRole(s model.PhaseStatus) role {
	switch s {
	case model.PhaseActive:
		return rPhaseActive
	case model.PhaseBroken:
		return rPhaseFailed
	case model.PhaseOK:
		return rText
	case model.PhaseHeld:
		return rPhaseHeld
	case model.PhaseRolledBack:
		return rPhaseRolledBack
	default:
		return rMuted
	}
}

func joinSegs(a []seg, sep seg, b []seg) []seg {
	out := make([]seg, 0, len(a)+len(b)+1)
	out = append(append(out, a...), sep)
	return append(out, b...)
}
