package report

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"k8s.io/utils/clock"

	"github.com/upgrade-console/upgrade-console/model"
)

// rederiveEvery is how often the progress of an unchanged snapshot is
// derived again: time matters only to stalls, whose thresholds are minutes,
// and a derivation at fleet scale costs milliseconds.
const rederiveEvery = 5 * time.Second

// WatchOptions configure Watch.
type WatchOptions struct {
	// Out receives one line per change.
	Out io.Writer
	// StallAfter is the stall threshold (model.DefaultStallAfter when zero).
	StallAfter time.Duration
	// FailureGrace is how long a failure may stay before the upgrade counts
	// as failed (model.DefaultFailureGrace when zero), as for apply --wait
	// (upgrade.TrackOptions.FailureGrace): one rule, the Judge's.
	FailureGrace time.Duration
	// ExitOnDone returns as soon as the upgrade is done or has failed;
	// otherwise Watch runs until ctx ends or the source closes.
	ExitOnDone bool
	// Clock reads the time and drives the re-evaluation tick; the real clock
	// when nil.
	Clock clock.WithTicker
	// Confirm, when set, is asked before the upgrade is reported done, as
	// upgrade.TrackOptions.Confirm: an error means not confirmed, and the
	// completion rule must hold its time again.
	Confirm func(ctx context.Context, s *model.ClusterState) error
}

// Watch prints the changes between successive snapshots until ctx ends, the
// source closes or (with ExitOnDone) the upgrade is done or failed. Without
// a new snapshot it still looks again every second: the completion rule must
// hold for a while before it counts (model.CompletionGate), a failure must
// stay (Judge), and every few seconds it re-derives the progress, because
// stalls are a matter of time. A context that ends by its deadline returns
// TimedOut, unless the upgrade had failed, or had been seen done (see
// Result).
func Watch(ctx context.Context, updates <-chan *model.ClusterState, opts WatchOptions) (Outcome, error) {
	r, err := WatchResult(ctx, updates, opts)
	return r.Outcome, err
}

// Result is how a watch ended.
type Result struct {
	// Outcome is the outcome the watch had reached when it ended: Done or
	// Failed, Running when it was stopped before one. When its deadline
	// passed it is TimedOut, but for a failure, or an upgrade the watch saw
	// done: a cluster at rest had no upgrade to be done with.
	Outcome Outcome
	// AtRest: every snapshot judged met EKS-A's completion rule, so no
	// upgrade was under way while the watch ran (Judge.AtRest).
	AtRest bool
	// Deadline: the watch ended because its deadline passed (watch
	// --timeout), whatever the outcome: a failure it had said stays Failed
	// (not hidden behind the timeout), an upgrade it saw complete Done.
	Deadline bool
	// Words, when set, say how a watch that ended before its outcome left
	// the cluster, after what ended it (" while reconnecting to the API
	// server; the connection was found lost …"): Cut uses them.
	Words string
}

// Cut words a watch that ended before its outcome, cause being what ended
// it ("--timeout 3s passed", "stopped"): true whether or not an upgrade was
// under way, and whether or not the API server could still be reached.
func (r Result) Cut(cause string) string {
	switch {
	case r.Words != "":
		return cause + r.Words
	case r.AtRest:
		return cause + restNote
	}
	return cause + " before the upgrade completed"
}

// ClusterGone reports whether s, a snapshot whose watch of the EKS-A
// Cluster has listed and may read it, finds no Cluster of its name: one
// deleted while it was watched, once a watch has begun on it (a watch
// that never found it ends at its start). Not while reconnecting: what
// the Cluster is then is not known.
func ClusterGone(s *model.ClusterState) bool {
	if s == nil || s.Cluster != nil || s.Connection == model.Reconnecting {
		return false
	}
	src := s.Source(model.KindEKSACluster)
	return src.Installed && src.Synced && src.Forbidden == ""
}

// GoneWords words a watch that ended after the EKS-A Cluster of s was
// deleted (ClusterGone), after what ended it: the state the judge last saw
// ("with the cluster at rest", "done") was the deleted Cluster's.
func GoneWords(s *model.ClusterState) string {
	return fmt.Sprintf(" after the EKS-A Cluster %s/%s was deleted: there is no upgrade left to follow", s.Namespace, s.ClusterName)
}

// ReconnectingWords words a watch that ended while its connection to the API
// server was lost (model.Reconnecting), after what ended it: the cluster's
// state is not known then, only what it was when last seen, at lostAt (when
// the loss was found; zero when not known). seen is that state:
// seenAtRest, or the summary of the progress last derived while live
// ("etcd: 1/3 members upgraded and ready…"); empty when not known. now
// decides whether the time needs its date.
func ReconnectingWords(lostAt time.Time, seen string, now time.Time) string {
	const w = " while reconnecting to the API server"
	at := ""
	if !lostAt.IsZero() {
		at = " at " + lostAt.UTC().Format("15:04:05Z")
		if y, m, d := lostAt.UTC().Date(); y != now.UTC().Year() || m != now.UTC().Month() || d != now.UTC().Day() {
			at = " at " + lostAt.UTC().Format(time.RFC3339)
		}
	}
	// The time is when the loss was found (a failed watch, a ping without
	// answer: up to ~25 s after the API server last answered), not when the
	// cluster was last heard from: "last seen at T" claimed that much more.
	switch {
	case seen == "" && at == "":
		return w
	case seen == "":
		return w + "; the connection was found lost" + at
	case at == "" && seen == seenAtRest:
		return w + "; the cluster was last known at rest"
	case at == "":
		return w + "; the cluster was last known: " + seen
	case seen == seenAtRest:
		return w + "; the connection was found lost" + at + ", the cluster then last known at rest"
	}
	return w + "; the connection was found lost" + at + ", the cluster then last known: " + seen
}

// AtRestDone follows "done" for a cluster at rest: EKS-A's rule holds, as
// it does for any cluster at rest; a script that expected an upgrade to
// follow is told there was none to see.
const AtRestDone = " (the cluster was at rest when the watch began: no upgrade was under way)"

// seenAtRest is ReconnectingWords's seen for a cluster at rest.
const seenAtRest = "at rest"

// WatchResult is Watch, telling also whether the cluster was at rest.
func WatchResult(ctx context.Context, updates <-chan *model.ClusterState, opts WatchOptions) (Result, error) {
	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	popts := model.ProgressOptions{StallAfter: opts.StallAfter}
	tick := clk.NewTicker(time.Second)
	defer tick.Stop()

	var (
		prev     *model.ClusterState
		prevP    model.Progress
		cur      *model.ClusterState
		judge    = NewJudgeWith(JudgeOptions{FailureGrace: opts.FailureGrace})
		outcome  = Running
		reported = Running
		lastConn model.ConnectionState
		// lastConnErr is the connection's error last said while the
		// Cluster was not yet seen: a refusal (401) is said once.
		lastConnErr string
		// clusterForbidden is the refusal of the EKS-A Cluster's watch
		// last said while the Cluster was not yet seen.
		clusterForbidden string
		// conn is the connection of the newest snapshot, synced or not;
		// lostAt is when it was last lost (model.Reconnecting).
		conn   model.ConnectionState
		lostAt time.Time
		// liveP is the progress last derived from a snapshot seen live:
		// what the cluster looked like before a lost connection.
		liveP model.Progress
		// derivedAt is when the progress was last derived.
		derivedAt time.Time
		deriver   model.Deriver
		lock      lockWatch
		// resume tells a watch that did not run for a while.
		resume Resume
		// hold says again, each minute, a failure waited out.
		hold model.HoldNotice
	)
	result := func() Result { return Result{Outcome: outcome, AtRest: judge.AtRest()} }
	emit := func(lines []Line) error {
		for _, l := range lines {
			if _, err := fmt.Fprintln(opts.Out, l.String()); err != nil {
				return err
			}
		}
		return nil
	}
	outcomeLine := func(now time.Time) []Line {
		if outcome == Running {
			// A watch that goes on after an outcome (no --exit-on-done)
			// reports the next one: a cluster at rest, then upgraded.
			reported = Running
			return nil
		}
		if outcome == reported {
			return nil
		}
		reported = outcome
		text := outcome.String()
		switch {
		case outcome == Done && judge.AtRest():
			text += AtRestDone
		case outcome == Failed:
			text += ": " + judge.Reason()
		}
		return []Line{{At: now, Subject: "outcome", Text: text}}
	}
	// resumed says, once, that the watch ran again after a gap of
	// StoppedAfter or more, and starts the catch-up.
	resumed := func(now time.Time) error {
		gap, stopped := resume.Look(now)
		if !stopped {
			return nil
		}
		return emit([]Line{{At: now, Subject: "watch", Text: ResumedText(gap)}})
	}
	step := func(now time.Time) error {
		if cur == nil {
			return nil
		}
		var lines []Line
		catchingUp := resume.CatchingUp(now)
		// A notice due is worded from a fresh derivation: prevP's ages are
		// up to rederiveEvery old ("still failing after 1m: … began 57s ago").
		if !catchingUp && prev == cur && len(prevP.Phases) > 0 && now.Sub(derivedAt) < rederiveEvery && !now.Before(derivedAt) && !hold.Due(judge, prevP, now) {
			// Only time moved, and not enough to matter to stalls: the
			// completion gate still needs to see it. An outcome it brings
			// is judged again on a fresh derivation, whose ages ("failed
			// 10m ago") are the outcome line's.
			if j, o := judge.Observe(prevP, now); o == outcome || o == Running {
				judge, outcome = j, o
				return emit(append(lock.observeSeen(cur.Lock, clusterName(cur), clusterNamespace(cur), cur.Conn, now, cur.LockSeenAt(now)), outcomeLine(now)...))
			}
		}
		p := deriver.Derive(cur, popts, now)
		derivedAt = now
		if catchingUp {
			p.Stalls = SaidStalls(prevP.Stalls, p.Stalls)
			// The first look after the catch-up derives again, and says
			// the stalls held back that still hold.
			derivedAt = time.Time{}
		}
		if !p.Blind {
			liveP = p
		}
		if prev != cur || len(prevP.Phases) == 0 {
			if prev == nil {
				lines = Changes(nil, cur, nil, &p, now)
				if cur.Connection == lastConn {
					lines = dropSubject(lines, "connection") // said while syncing
				}
			} else {
				lines = Changes(prev, cur, &prevP, &p, now)
			}
		} else {
			// Same snapshot, later time: only the progress can have moved.
			d := &differ{at: now, conn: cur.Conn}
			d.progress(&prevP, &p)
			lines = d.lines
		}
		prev, prevP = cur, p
		if catchingUp {
			// The judge's holds and graces, and the lease's renewals,
			// would count the time the watch did not see: what they
			// decide waits until it has caught up.
			return emit(lines)
		}
		judge, outcome = judge.Observe(p, now)
		lines = append(lines, lock.observeSeen(cur.Lock, clusterName(cur), clusterNamespace(cur), cur.Conn, now, cur.LockSeenAt(now))...)
		lines = append(lines, holdLine(&hold, judge, p, now)...)
		decided := now
		if outcome == Done && reported != Done && opts.Confirm != nil {
			cctx, cancel := context.WithTimeout(ctx, model.ConfirmWithin)
			err := opts.Confirm(cctx, cur)
			cancel()
			// The outcome is decided when the API server has answered,
			// or has not, up to model.ConfirmWithin after the look began: the
			// line is stamped then, not when the look began.
			decided = clk.Now()
			if err != nil {
				// Judged as through a lost connection, the rule
				// starts its hold again.
				// Not an outcome: "outcome:" lines are the verdicts a
				// script greps for, and this one is taken back.
				said := judge.UnconfirmedText()
				judge, outcome = judge.Unconfirmed(p, decided, err), Running
				if text := judge.UnconfirmedText(); text != said {
					// Once: a refusal that does not pass (403) was
					// said every few seconds until the timeout.
					lines = append(lines, Line{At: decided, Subject: "upgrade", Text: text})
				}
			}
		}
		return emit(append(lines, outcomeLine(decided)...))
	}
	for {
		select {
		case <-ctx.Done():
			now := clk.Now()
			r := result()
			r.Deadline = errors.Is(ctx.Err(), context.DeadlineExceeded)
			if outcome == Failed || outcome == Done && !r.AtRest {
				// Said when it was reached, and it stands: a failure is
				// not hidden behind a timeout, nor is a completion the
				// watch saw, and the API server confirmed. (Through a
				// lost connection the outcome is Running again: the
				// rule does not hold on what the cluster said before.)
				return r, nil
			}
			cause := "stopped"
			if r.Deadline {
				// A cluster at rest too: there was no upgrade to see
				// through, and --timeout gave up on one (exit 5).
				cause, r.Outcome = TimedOut.String(), TimedOut
			}
			// Said as it stands: "timed out" alone read as an upgrade
			// cut short when none was under way, and "at rest" after
			// the API server was lost stated what was no longer seen.
			text := judge.Unfinished(cause, prevP, now)
			if conn == model.Reconnecting {
				seen := ""
				switch {
				case liveP.Generation == 0:
					// The EKS-A Cluster was never seen live.
				case judge.AtRest():
					seen = seenAtRest
				default:
					seen = liveP.Summary
				}
				r.Words = ReconnectingWords(lostAt, seen, now)
				text = cause + r.Words
			} else if ClusterGone(cur) {
				// "stopped with the cluster at rest" was said of a
				// Cluster deleted since.
				r.Words = GoneWords(cur)
				text = cause + r.Words
			}
			_ = emit([]Line{{At: now, Subject: "outcome", Text: text}})
			return r, nil
		case s, ok := <-updates:
			if !ok {
				return result(), nil
			}
			if err := resumed(clk.Now()); err != nil {
				return result(), err
			}
			if s != nil {
				if s.Connection == model.Reconnecting && conn != model.Reconnecting {
					lostAt = s.ConnectionSince
					if lostAt.IsZero() {
						lostAt = clk.Now()
					}
				}
				conn = s.Connection
			}
			if !clusterSynced(s) {
				// Until the EKS-A Cluster is seen, phases would describe
				// an empty cluster: say how the connection goes, no more.
				if s != nil && (s.Connection != lastConn || refused(s.ConnectionErr) && !refused(lastConnErr)) {
					lastConn, lastConnErr = s.Connection, s.ConnectionErr
					if err := emit([]Line{{At: clk.Now(), Subject: "connection", Text: ConnectionText(s)}}); err != nil {
						return result(), err
					}
				}
				// A Cluster the identity may get but not list or watch is
				// never seen: said, or the watch stayed silent for ever.
				if f := clusterRefusal(s); f != "" && f != clusterForbidden {
					clusterForbidden = f
					if err := emit([]Line{{At: clk.Now(), Subject: "access", Text: f}}); err != nil {
						return result(), err
					}
				}
				continue
			}
			cur = s
			if err := step(clk.Now()); err != nil {
				return result(), err
			}
		case <-tick.C():
			if err := resumed(clk.Now()); err != nil {
				return result(), err
			}
			if err := step(clk.Now()); err != nil {
				return result(), err
			}
		}
		// After the look, not before: a slow Confirm or write is the
		// watch running, not stopped.
		resume.Looked(clk.Now())
		if opts.ExitOnDone && outcome != Running {
			return result(), nil
		}
	}
}

// clusterRefusal is the access line for an EKS-A Cluster whose watch the
// API server refuses, "" when it does not.
func clusterRefusal(s *model.ClusterState) string {
	if s == nil {
		return ""
	}
	c := s.Sources[model.KindEKSACluster]
	if c.Forbidden == "" {
		return ""
	}
	text := "forbidden: " + c.Forbidden + " (the EKS-A Cluster cannot be followed: nothing else is said until it can"
	if fix := model.GrantFor(c.Forbidden, s.Conn); fix != "" {
		text += "; fix: " + fix
	}
	return text + ")"
}

// clusterSynced reports whether a snapshot has seen the EKS-A Cluster's
// informer sync (snapshots without source status, from tests or tools, count
// as synced).
func clusterSynced(s *model.ClusterState) bool {
	if s == nil {
		return false
	}
	return s.Sources == nil || s.Sources[model.KindEKSACluster].Synced
}

func dropSubject(lines []Line, subject string) []Line {
	out := lines[:0]
	for _, l := range lines {
		if l.Subject != subject {
			out = append(out, l)
		}
	}
	return out
}

// clusterName is the EKS-A Cluster's name in a snapshot ("" before it is
// listed).
func clusterName(s *model.ClusterState) string {
	if s == nil || s.Cluster == nil {
		return ""
	}
	return s.Cluster.Name
}

func clusterNamespace(s *model.ClusterState) string {
	if s == nil || s.Cluster == nil {
		return ""
	}
	return s.Cluster.Namespace
}

// holdLine is the line, when one is due, that says a failure is still
// waited out before it fails the upgrade (model.HoldNotice).
func holdLine(n *model.HoldNotice, j model.Judge, p model.Progress, now time.Time) []Line {
	if text, _, due := n.Next(j, p, now); due {
		return []Line{{At: now, Subject: "upgrade", Text: text}}
	}
	return nil
}
