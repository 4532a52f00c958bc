package upgrade

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"k8s.io/utils/clock"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/report"
)

// Tracking follows the EKS-A controller after the apply, as the CLI's Applier
// waits (pkg/clustermanager/applier.go): the completion rule (generation
// observed, no failureMessage, ControlPlaneReady, DefaultCNIConfigured when
// managed, WorkersReady, Ready, in that order) must hold, and keep holding
// (model.CompletionGate), before the upgrade counts as done. A failureMessage,
// or an in-place step that failed, fails the upgrade only when it stays: the
// CLI gives a failureMessage 10 minutes to clear, because the controller sets
// it on transient problems and clears it on the next successful reconcile.
// The rule is model.Judge's, so `watch --exit-on-done` and the dashboard
// end the same upgrade the same way.

// StateSource is where tracking reads the cluster: the watchers' latest
// snapshot (watchers.Watcher implements it).
type StateSource interface {
	Latest() *model.ClusterState
}

// DefaultFailureGrace is how long a failure may stay before the upgrade
// counts as failed (EKS-A's applier waits 10 minutes).
const DefaultFailureGrace = model.DefaultFailureGrace

// TrackOptions tune the waiter.
type TrackOptions struct {
	// AppliedGeneration is the EKS-A Cluster's generation after the apply:
	// a snapshot of an older generation (the watch not caught up yet) says
	// nothing about the upgrade, even if every condition on it is True.
	AppliedGeneration int64
	// Gate is the completion gate (model.DefaultCompletionGate when zero).
	Gate model.CompletionGate
	// Poll is how often the latest snapshot is re-read (1s when zero). It
	// reads memory, not the API server.
	Poll time.Duration
	// FailureGrace (DefaultFailureGrace when zero), as
	// report.WatchOptions.FailureGrace.
	FailureGrace time.Duration
	Progress     model.ProgressOptions
	// OnProgress, when set, receives the progress whenever its summary
	// changes (the headless output).
	OnProgress func(model.Progress)
	// ChildrenReconciledBefore, when positive, is the Cluster's
	// status.childrenReconciledGeneration before an apply that changed child
	// objects (machine or datacenter configs): completion also waits for
	// EKS-A to report them reconciled (the value moves past it), since a
	// change to a child alone leaves the Cluster's generation, and so the
	// rest of the rule, as it was.
	ChildrenReconciledBefore int64
	// OnHold, when set, receives once a minute, while a failure is waited
	// out before it fails the upgrade, the line that says so
	// (model.HoldNotice): the summary does not change meanwhile, and the
	// headless output was silent for the grace's 10 minutes.
	OnHold func(line string, h model.Hold)
	// OnPoll, when set, is called at every poll with the latest snapshot
	// (nil before the first), for what the caller reports besides progress.
	OnPoll func(*model.ClusterState)
	// UntilComplete: a failure does not end the tracking, only completion
	// or ctx does (following an upgrade already declared failed).
	UntilComplete bool
	// Confirm, when set, is asked before the upgrade counts as done; an
	// error means not confirmed, and the completion rule must hold its time
	// again. The rule held on what the watch delivered, and a watch on an
	// API server that stopped answering (a frozen process, a half-open
	// connection) delivers nothing and reports no error: only a request
	// tells. See ConfirmCluster.
	Confirm func(ctx context.Context, s *model.ClusterState) error
}

// Outcome is how tracking ended.
type Outcome struct {
	Complete bool
	Failed   bool
	TimedOut bool
	// Reason says why it failed or timed out.
	Reason   string
	Progress model.Progress
	Elapsed  time.Duration
}

// ErrTrackTimeout is returned when the context's deadline passes first.
var ErrTrackTimeout = errors.New("timed out waiting for the upgrade to complete")

// Track waits until the upgrade completes, fails, or ctx ends. A deadline
// gives TimedOut and ErrTrackTimeout; a cancel gives ctx.Err().
func Track(ctx context.Context, src StateSource, clk clock.WithTicker, o TrackOptions) (Outcome, error) {
	if clk == nil {
		clk = clock.RealClock{}
	}
	judge := model.NewJudgeWith(model.JudgeOptions{Gate: o.Gate, FailureGrace: o.FailureGrace, Applied: true})
	poll := o.Poll
	if poll <= 0 {
		poll = time.Second
	}
	start := clk.Now()
	ticker := clk.NewTicker(poll)
	defer ticker.Stop()
	var (
		lastSummary string
		// last is the progress last judged: the judge words it.
		last model.Progress
		// resume tells a tracker that did not run for a while (Ctrl-Z,
		// SIGSTOP, a laptop asleep), as watch --plain and the dashboard.
		resume report.Resume
		hold   model.HoldNotice
	)
	for {
		now := clk.Now()
		if gap, stopped := resume.Look(now); stopped && o.OnProgress != nil {
			lastSummary = report.ResumedText(gap)
			o.OnProgress(model.Progress{Summary: lastSummary})
		}
		// The source's cache is as old as the stop, and judged at the time
		// now a failure seen a moment before it read as one that stayed
		// the whole grace: nothing is judged until it has caught up.
		catchingUp := resume.CatchingUp(now)
		// Every poll is one observation, as every poll is one for the CLI's
		// count of consecutive successes: a watch publishes nothing while
		// nothing changes, so counting only new snapshots could wait forever
		// on a cluster that is done.
		s := src.Latest()
		if o.OnPoll != nil {
			o.OnPoll(s)
		}
		if s != nil && !catchingUp {
			p := progressOf(s, o, now)
			var outcome model.Outcome
			judge, outcome = judge.Observe(p, now)
			// Said as judged: milestones met are "done" only once they
			// have kept holding.
			p.Summary = judge.Summary(p)
			if outcome == model.OutcomeDone && o.Confirm != nil {
				cctx, cancel := context.WithTimeout(ctx, model.ConfirmWithin)
				err := o.Confirm(cctx, s)
				cancel()
				if err != nil {
					judge, outcome = judge.Unconfirmed(p, clk.Now(), err), model.OutcomeRunning
					p.Summary = judge.UnconfirmedText()
				}
			}
			last = p
			if key := summaryKey(p.Summary); o.OnProgress != nil && key != lastSummary {
				o.OnProgress(p)
				lastSummary = key
			}
			if line, h, due := hold.Next(judge, p, now); due && o.OnHold != nil {
				o.OnHold(line, h)
			}
			switch outcome {
			case model.OutcomeDone:
				return Outcome{Complete: true, Progress: p, Elapsed: now.Sub(start)}, nil
			case model.OutcomeFailed:
				if o.UntilComplete {
					break
				}
				return Outcome{Failed: true, Progress: p, Elapsed: now.Sub(start), Reason: judge.Reason()}, nil
			}
		}
		select {
		case <-ctx.Done():
			now := clk.Now()
			if s := src.Latest(); s != nil && !o.UntilComplete && !resume.CatchingUp(now) && errors.Is(ctx.Err(), context.Canceled) {
				// A last look: stopped within a poll of a failure the
				// screen already declared (q as an etcd rollback ended),
				// the upgrade was detached as one that "goes on", and
				// its lock released, on a cluster rolled back and paused.
				p := progressOf(s, o, now)
				if j, outcome := judge.Observe(p, now); outcome == model.OutcomeFailed {
					p.Summary = j.Summary(p)
					return Outcome{Failed: true, Progress: p, Elapsed: now.Sub(start), Reason: j.Reason()}, nil
				}
			}
			out := Outcome{Elapsed: now.Sub(start), Progress: last}
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				// Ended while the gate held, it is neither done nor
				// stuck "at done": the lock is kept (nobody saw the rule
				// hold its time), and the reason says why.
				out.TimedOut = true
				out.Reason = judge.Unfinished("timed out", last, now)
				return out, ErrTrackTimeout
			}
			return out, ctx.Err()
		case <-ticker.C():
		}
	}
}

// durations are the ages a summary carries ("for 12s", "1m30s").
var durations = regexp.MustCompile(`(\d+(h|ms|m|s))+`)

// summaryKey is a summary without its ages: a line that says the same thing
// a second later is not news (CI logs would get one per second).
func summaryKey(s string) string { return durations.ReplaceAllString(s, "#") }

// progressOf derives the progress of a snapshot, refusing completion (and
// failure) on a snapshot older than the apply.
func progressOf(s *model.ClusterState, o TrackOptions, now time.Time) model.Progress {
	p := model.DeriveProgress(s, o.Progress, now)
	if s.Cluster == nil || s.Cluster.Generation < o.AppliedGeneration {
		// Its failed steps too may be of before the apply.
		p.Complete, p.Failed, p.Stalls = false, false, nil
		p.Summary = fmt.Sprintf("waiting for the watch to see generation %d of the Cluster", o.AppliedGeneration)
		return p
	}
	if o.ChildrenReconciledBefore > 0 && p.Complete && s.Cluster.ChildrenReconciledGeneration <= o.ChildrenReconciledBefore {
		p.Complete = false
		p.Summary = fmt.Sprintf("waiting for EKS-A to reconcile the changed machine and datacenter configs (status.childrenReconciledGeneration still %d)",
			s.Cluster.ChildrenReconciledGeneration)
	}
	return p
}
