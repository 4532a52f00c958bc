package tui

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
)

// headerModel is the two header lines, built in Update from the snapshot,
// the progress and the timeline.
type headerModel struct {
	name seg // the cluster
	// context is the kubeconfig context ("" when unknown): with the name,
	// it says which cluster the operator is on, and gives way last
	// (line1).
	context  string
	versions []seg // EKS-A and Kubernetes, current → target
	// versionsTarget is the versions without their current side
	// ("EKS-A → v0.21.2  k8s → 1.31"), for when the line is short;
	// versionsK8s is its Kubernetes part alone, for when it is shorter
	// still: the version the operator reads first.
	versionsTarget, versionsK8s []seg

	badges []badge // right aligned: stale, lock, paused, connection

	timeline model.Timeline
	progress model.Progress
	// etcdOffered: R offers the etcd rollback (its own threshold, which
	// may come before --stall-after): the strip flags the phase held, as
	// the status line does, rather than seconds later.
	etcdOffered bool
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
	h.name, h.context = seg{" " + name, rCluster}, ctx
	if s != nil && s.Cluster != nil {
		c := s.Cluster
		// The management components' release is the "from" only while
		// they are behind the spec's; ahead of it (upgraded for the next
		// release, as EKS-A's CLI does first) it read as a downgrade.
		cur := c.Annotations[model.AnnotationManagementComponentsVersion]
		if !model.ManagementBehind(cur, c.EksaVersion) {
			cur = ""
		}
		h.versions = append(h.versions, seg{"EKS-A ", rMuted})
		h.versions = append(h.versions, fromTo(sym.Arrow, cur, c.EksaVersion)...)
		h.versionsTarget = append(h.versionsTarget, seg{"EKS-A ", rMuted})
		h.versionsTarget = append(h.versionsTarget, toTarget(sym.Arrow, cur, c.EksaVersion)...)
		curK := ""
		if s.ControlPlane != nil {
			curK = minorOf(s.ControlPlane.StatusVersion)
		}
		if running != "" && (curK == "" || olderMinor(running, curK)) {
			curK = running
		}
		h.versions = append(h.versions, seg{"   k8s ", rMuted})
		h.versions = append(h.versions, fromTo(sym.Arrow, curK, c.KubernetesVersion)...)
		h.versionsK8s = append([]seg{{"k8s ", rMuted}}, toTarget(sym.Arrow, curK, c.KubernetesVersion)...)
		h.versionsTarget = append(h.versionsTarget, seg{"  ", rText})
		h.versionsTarget = append(h.versionsTarget, h.versionsK8s...)
	}
	h.badges = buildBadges(sym, s, p, opts, now)
	return h
}

// badge is one of the header's badges in its three forms, from the
// longest: full; short, without what only dates or details it (when the
// lock was renewed, the renewal's error: at 80 columns the full forms left
// no room for the versions); tiny, a word or two (at 80 columns a kept
// lock, a pause and a status not yet observed left no room for the
// cluster). Every form keeps every badge.
type badge struct {
	full, short, tiny string
	r                 role
	// drop orders the badges where even their tiny forms leave the
	// line less than it needs (40 columns): the lowest goes first.
	drop int
}

// The order in which the badges give way on a line too short for all of
// them. At 40 columns a lock and a pause went together, and the pause is
// the state the operator must act on (nothing moves until it goes): a lock
// goes first, its holder being what lock status and R say; a status not
// yet observed before it, as the panes say it too.
const (
	dropFirst = iota
	dropLock
	dropConnection
	dropLast
)

// buildBadges is the right-hand side of the header's first line: stale,
// lock, paused, connection.
func buildBadges(sym themes.Symbols, s *model.ClusterState, p model.Progress, opts Options, now time.Time) []badge {
	var out []badge
	if p.Stale {
		out = append(out, badge{"◌ status not yet observed", "◌ status not yet observed", "◌ not observed", rStale, dropFirst})
	}
	ownLock := false
	if opts.Lock != nil {
		switch l := opts.Lock(); {
		case l.Kept && (l.Lost || keptLockGone(s)) && p.Complete:
			// Cleared, and the upgrade completed since: the lock kept
			// after the failure has served its purpose (a warning beside
			// "upgrade complete" read as something left to do).
		case l.Kept && (l.Lost || keptLockGone(s)):
			// Cleared (from R, or `lock clear lease`): the Lease says so
			// before the session does (it learns it when its release on
			// completion finds the Lease gone, which is no alarm), and an
			// upgrade that resumes runs without a lock. Another console's
			// lock, if one took it, is shown after this.
			w := sym.Warn + " "
			out = append(out, badge{w + "lock: this console's kept lock was cleared", w + "lock: kept lock cleared", w + "kept lock cleared", rStale, dropLock})
		case l.Lost:
			// What it means: the upgrade goes on without this console's
			// lock, and another console may start one.
			t := sym.Fail + " lock lost"
			out = append(out, badge{t + ": cleared or taken by another console", t + ": cleared or taken", t, rFailure, dropLock})
		case l.Holder != "" && l.Kept:
			ownLock = true
			// No longer renewed: an age would only grow.
			w := sym.Warn + " "
			out = append(out, badge{w + "lock: kept by this console (the upgrade failed)", w + "lock: kept by this console", w + "lock kept", rStale, dropLock})
		case l.Holder != "":
			ownLock = true
			// This console's own lock: its holder (this user, this host,
			// this console's id) would read as someone else's, the way
			// another console's lock is shown.
			b := heldBadge(l.Renewed, now)
			switch {
			case l.RenewErr != "" && !l.Expires.IsZero() && !now.Before(l.Expires):
				// Run out: another console may clear it, or take it, and
				// "renewal failing" read as a lock still held.
				stale := " " + sym.Warn + " stale, not renewed"
				b = badge{"lock: this console's" + stale + ": " + l.RenewErr, "lock: this console's" + stale, sym.Warn + " lock stale", rFailure, dropLock}
			case l.RenewErr != "":
				// The lease runs out unless a renewal succeeds.
				failing := " " + sym.Warn + " renewal failing"
				b = badge{b.full + failing + ": " + l.RenewErr, b.short + failing, "lock" + failing, rFailure, dropLock}
			}
			out = append(out, b)
		}
	}
	switch {
	case ownLock || s == nil || !s.Lock.Held():
	case opts.SelfHolder != "" && s.Lock.HolderIdentity == opts.SelfHolder && s.Lock.Kept == "" && !s.LockExpired(now):
		out = append(out, heldBadge(s.Lock.LastRenewed(), now))
	default:
		out = append(out, watchedLockBadge(sym, s.Lock, s.LockSeenAt(now), now))
	}
	if p.Paused {
		// Whatever the phases show, nothing moves until the pause goes;
		// the status line says why and how it resumes.
		t := markHeld + " paused"
		out = append(out, badge{t, t, t, rPaused, dropLast})
	}
	switch {
	case credentialsRefused(s):
		// Not a server out of reach: no wait mends a revoked token, and
		// the status line says what does.
		t := sym.Fail + " credentials refused"
		b := badge{t, t, sym.Fail + " 401", rFailure, dropConnection}
		if d := since(s.ConnectionSince, now); d != "" && s.Connection == model.Reconnecting {
			b.full = t + " " + d
		}
		out = append(out, b)
	case s == nil || s.Connection == model.Connecting || s.Connection == "":
		t := "◌ connecting"
		out = append(out, badge{t, t, t, rConnecting, dropConnection})
	case s.Connection == model.Reconnecting:
		t := "↻ reconnecting"
		b := badge{t, t, t, rReconnecting, dropConnection}
		if d := since(s.ConnectionSince, now); d != "" {
			b.full, b.short = t+" "+d, t+" "+d
		}
		out = append(out, b)
	default:
		t := sym.Active + " live"
		out = append(out, badge{t, t, t, rLive, dropConnection})
	}
	return out
}

// badgeLevels is how many ways badgeSegs draws n badges, from the widest.
func badgeLevels(n int) int { return 3 + n }

// badgeSegs draws the badges at a level: 0 full, 1 short, 2 short and
// closer together, and from 3 on as many of them tiny, from the left (a
// status not yet observed and a pause are also said in the panes, and the
// connection's is as short as it gets).
func badgeSegs(bs []badge, level int) []seg {
	gap := seg{"   ", rText}
	if level >= 2 {
		gap = seg{"  ", rText}
	}
	out := make([]seg, 0, 2*len(bs))
	for i, b := range bs {
		if i > 0 {
			out = append(out, gap)
		}
		t := b.full
		switch {
		case level >= 3 && i < level-2:
			t = b.tiny
		case level >= 1:
			t = b.short
		}
		out = append(out, seg{t, b.r})
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
	return s.LockKnown() && (!s.Lock.Held() || s.Lock.Kept == "")
}

// heldBadge is the badge of a lock this console holds.
func heldBadge(renewed, now time.Time) badge {
	b := badge{"lock: held by this console", "lock: this console", "lock: this console", rMuted, dropLock}
	if d := since(renewed, now); d != "" {
		b.full += " (renewed " + d + " ago)"
	}
	return b
}

// watchedLockBadge is the upgrade lock as the watchers see it, when this
// console does not hold it: another console's, or one left stale by a
// console that died (which R offers to clear). The holder is user@host: the
// console's instance id ("/3f2a9c1e") would crowd out the header at 80
// columns, and whoever holds it, it is not this console. Who the API server
// authenticated it as is in the full form only: on a shared bastion
// user@host is root@bastion for everyone, but a ServiceAccount's name is
// longer than the room the versions leave at 80 columns.
func watchedLockBadge(sym themes.Symbols, l *model.Lock, seen, now time.Time) badge {
	holder, _, _ := strings.Cut(model.PrintableLine(l.HolderIdentity), "/")
	full := holder
	if l.AuthenticatedAs != "" {
		full += " as " + l.AuthenticatedAs
	}
	d := since(l.RenewedHere(), now)
	if l.Kept != "" {
		// Left on purpose by an upgrade that failed or timed out: not a
		// console that died, and no age tells it apart.
		t := sym.Warn + " lock: " + holder + " kept"
		return badge{sym.Warn + " lock: " + full + " kept", t, t, rStale, dropLock}
	}
	if l.ExpiredWatched(seen) {
		t := sym.Warn + " lock: " + holder + " stale"
		return badge{sym.Warn + " lock: " + full + " stale " + d, t + " " + d, t, rStale, dropLock}
	}
	t := "lock: " + holder
	b := badge{"lock: " + full, t, t, rMuted, dropLock}
	if d != "" {
		b.full += " (renewed " + d + " ago)"
	}
	return b
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

// toTarget is fromTo without the current side: "→ v0.21.1" while the
// version changes (the arrow says it is the target, not what runs), just
// the version when it does not.
func toTarget(arrow, cur, target string) []seg {
	if target == "" || cur == "" || cur == target {
		return fromTo(arrow, cur, target)
	}
	return []seg{{arrow + " ", rMuted}, {target, rBold}}
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

// minorOf turns "v1.30.14-eks-1-30-40" into "1.30": a part of v, so that
// a pass over every node's kubelet allocates nothing.
func minorOf(v string) string {
	v = strings.TrimPrefix(v, "v")
	i := strings.IndexByte(v, '.')
	if i < 0 {
		return v
	}
	if j := strings.IndexByte(v[i+1:], '.'); j >= 0 {
		return v[:i+1+j]
	}
	return v
}

// minContext is as narrow as the header shortens the context (line1).
const minContext = 12

// line1 is the header's first line at w cells: the identity and the
// versions on the left, the badges on the right. The cluster's name and its
// context tell which cluster the operator is on, exactly when the badges
// crowd the line (a kept lock, a pause: the moment to act on the right
// one), and nothing else on the screen names the context: they give way
// last. When the line is short, in this order, the first that fits wins:
//
//  1. the spacing between the identity and the versions narrows;
//  2. the badges drop their details, then come closer (badgeSegs);
//  3. the versions drop their current side ("EKS-A → v0.21.2"): the
//     target stays, and the panes tell what runs;
//  4. the EKS-A version goes, the Kubernetes one stays ("k8s → 1.31"):
//     operators read it first (at 80 columns a stale lock's badge took
//     it, while the EKS-A release, chosen once on the plan screen,
//     stayed);
//  5. the badges shrink to a word or two, one by one (badgeSegs);
//  6. the context is shortened in its middle, to no less than minContext
//     cells: its start and its end tell contexts apart ("arn:…/mgmt");
//  7. the Kubernetes version goes, the context whole again if that makes
//     room.
//
// Past that the context stays at minContext and render cuts the left side
// into what the badges leave. Where they alone leave less than 12 cells,
// which render needs for the left side, they give way one at a time, the
// least important first (badge.drop), and the line is laid out again with
// the others: at 40 columns a lock beside a pause took the pause with it.
// Render drops a last badge too wide alone.
func (h *headerModel) line1(w int) (left, badges []seg) {
	bs := h.badges
	for {
		left, badges, fits := h.line1Of(bs, w)
		if fits || segsWidth(badges)+12 <= w || len(bs) <= 1 {
			return left, badges
		}
		// Render would drop them all: the least important goes, and
		// the others are laid out again.
		i := 0
		for j, b := range bs {
			if b.drop < bs[i].drop {
				i = j
			}
		}
		bs = slices.Delete(slices.Clone(bs), i, i+1)
	}
}

// line1Of is line1 with the badges bs; fits is false past its steps.
func (h *headerModel) line1Of(bs []badge, w int) (left, badges []seg, fits bool) {
	ident := func(cw int) []seg {
		if h.context == "" {
			return []seg{h.name}
		}
		c := h.context
		if cw < width(c) {
			c = fitMiddle(c, cw)
		}
		return []seg{h.name, {" @ " + c, rMuted}}
	}
	cw := width(h.context)
	type step struct {
		sep      string
		versions []seg
		level    int  // of the badges
		shorten  bool // the context may shorten
	}
	tiny := badgeLevels(len(bs)) - 1
	steps := []step{
		{"   ", h.versions, 0, false},
		{"  ", h.versions, 0, false},
		{"  ", h.versions, 1, false},
		{"  ", h.versions, 2, false},
		{"  ", h.versionsTarget, 2, false},
		{"  ", h.versionsK8s, 2, false},
	}
	for l := 3; l <= tiny; l++ {
		steps = append(steps, step{"  ", h.versionsK8s, l, false})
	}
	steps = append(steps, step{"  ", h.versionsK8s, tiny, true}, step{"  ", nil, tiny, true})
	whole := ident(cw)
	ww := segsWidth(whole)
	for _, s := range steps {
		segs := badgeSegs(bs, s.level)
		over := ww + len(s.sep) + segsWidth(s.versions) + segsWidth(segs) + 2 - w
		switch {
		case over <= 0:
			return joinSegs(whole, seg{s.sep, rText}, s.versions), segs, true
		case s.shorten && h.context != "" && cw-over >= minContext:
			return joinSegs(ident(cw-over), seg{s.sep, rText}, s.versions), segs, true
		}
	}
	return ident(minContext), badgeSegs(bs, tiny), false
}

// render draws the header in exactly two lines of w cells. The timeline has
// three forms, from spelled out to symbols only; the widest that fits wins.
func (h *headerModel) render(b *strings.Builder, st *styles, w int, now time.Time) {
	left, badges := h.line1(w)
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
	for _, form := range []int{timelineFull, timelineShort, timelineNamed, timelineSymbols} {
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
	// timelineNamed is the short names with the time of the phase under
	// way (or failed) alone: at 60 columns a finished upgrade fell from
	// the short form, with its six times, to six bare ✓ and no name.
	timelineNamed
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
	// A failed in-place step holds up the phase under way until an
	// operator acts: before the waiters call the upgrade failed (after the
	// grace), "● cp" read as moving beside a ✗ row and "R recover". So
	// does a stall (an etcd member not ready past --stall-after, or the
	// rollback offered): "● etcd" read as moving beside "⚠ stalled". Not
	// the Cluster's own (its spec not yet observed), which is no phase's.
	held := h.etcdOffered
	for _, st := range p.Stalls {
		held = held || st.Failed || st.Kind != model.KindEKSACluster
	}
	for i, pp := range p.Phases {
		if i > 0 {
			segs = append(segs, sep)
		}
		mark, r := phaseMark(sym, pp.Status)
		if held && pp.Status == model.PhaseActive {
			mark, r = sym.Warn, rStall
		}
		name := string(pp.Phase)
		if form == timelineShort || form == timelineNamed {
			name = shortPhase[pp.Phase]
		}
		el := ""
		if e, ok := h.timeline.Entry(pp.Phase); ok && (form != timelineNamed || named(pp.Status)) && pp.Status != model.PhasePending && pp.Status != model.PhaseSkipped {
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
		label, took := "   elapsed ", ""
		if !h.timeline.Rerun.IsZero() {
			// A re-rollout of the same generation (a machine config
			// changed alone) is timed on its own: said as such, with
			// the upgrade's time where it fits, not as a new upgrade.
			label = "   re-rollout "
			if form == timelineFull {
				took = " (upgrade " + clockDuration(h.timeline.UpgradeTook) + ")"
			}
		}
		if form == timelineSymbols {
			// Bare, a re-rollout's few seconds read as the whole
			// upgrade's time: "rerun" marks it in the narrow form.
			label = "  "
			if !h.timeline.Rerun.IsZero() {
				label = "  rerun "
			}
		}
		segs = append(segs, seg{label + clockDuration(end.Sub(h.timeline.Started)) + took, rMuted})
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

// credentialsRefused reports whether the link to the API server is down
// because it refuses the credentials (401): before the first sync or
// after (a token expired or revoked mid-watch).
func credentialsRefused(s *model.ClusterState) bool {
	return s != nil && s.Connection != model.Live && s.Connection != "" && strings.HasPrefix(s.ConnectionErr, model.CredentialsRefused)
}
