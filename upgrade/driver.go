package upgrade

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/clock"

	"github.com/upgrade-console/upgrade-console/model"
)

// The Driver runs an upgrade: lock, re-check, snapshot, apply, then track
// until done, renewing the lock all along. The renew loop is a goroutine of
// the Driver's Session, not of any UI model: the TUI calls Start and Track
// from tea.Cmds and reads Session.Lock() when it draws.

// Driver performs upgrades of one cluster.
type Driver struct {
	Client *Client
	// Audit records every write of the upgrade. Required: Start is
	// ErrNoAudit without it.
	Audit  Recorder
	Clock  clock.WithTicker
	Holder Holder
	// LeaseDuration of the lock (DefaultLeaseDuration when zero); renewed
	// every third of it.
	LeaseDuration time.Duration
	// SnapshotDir receives the local snapshot copy (StateDir()/snapshots when empty).
	SnapshotDir string
	// Planner re-runs the preflight checks once the lock is held.
	Planner *Planner
	// Conn are the console's connection flags, for the commands its
	// messages suggest.
	Conn model.ConnFlags
	// StopsWithConsole: the cluster is the demo's, whose control plane
	// stops when the console does, so a quit mid-upgrade leaves nothing
	// going on in it, and the audit log must not say the upgrade does.
	StopsWithConsole bool
}

func (d *Driver) clock() clock.WithTicker {
	if d.Clock == nil {
		return clock.RealClock{}
	}
	return d.Clock
}

// StartOptions are the operator's choices.
type StartOptions struct {
	// DryRun is the dry-run the operator saw and confirmed; recorded with
	// each write. When it reported conflicts, ForceConflicts must be set
	// explicitly or the apply is refused by the API server. Start runs it
	// again under the lock and refuses (DryRunChangedError) when it no
	// longer agrees.
	DryRun         *DryRunResult
	ForceConflicts bool
	// OnSnapshot and OnApplied, when set, hear of the snapshot and of each
	// document as they land, so that the operator sees the writes when
	// they happen (an interrupt that seemed to come before any write did
	// not).
	OnSnapshot func(SnapshotRef)
	OnApplied  func(AppliedObject)
}

// PreflightError is a start refused by blocking checks.
type PreflightError struct{ Checks []model.CheckResult }

func (e *PreflightError) Error() string {
	var b strings.Builder
	b.WriteString("blocked by preflight:")
	for _, c := range e.Checks {
		fmt.Fprintf(&b, "\n  %s: %s", c.Name, model.CheckLine(c.Message))
		if c.Remediation != "" {
			fmt.Fprintf(&b, "\n    fix: %s", model.CheckLine(c.Remediation))
		}
	}
	return b.String()
}

// Session is one running upgrade.
type Session struct {
	Plan     *Plan
	Snapshot SnapshotRef
	Applied  []AppliedObject
	// Unanswered is the document whose write got no answer, and may have
	// landed, when the apply stopped at one.
	Unanswered string
	// ClusterGeneration is the EKS-A Cluster's generation after the apply.
	ClusterGeneration int64
	// ChildrenBefore is the Cluster's status.childrenReconciledGeneration
	// before an apply that changed child objects; 0 when none changed or
	// the cluster does not report it.
	ChildrenBefore int64

	// wayBackText is WayBack's, set when the start applied part of the spec.
	wayBackText string

	locker *Locker
	hold   *Hold
	clk    clock.WithTicker
	audit  Recorder
	client *Client

	// ending is held through Finish and Detach, so that one called while
	// the other runs returns only once the lock is released and the end is
	// in the audit log: a console quit just as the tracker finishes must
	// not exit between the two.
	ending sync.Mutex

	mu       sync.Mutex
	finished bool
	// failedAt is when Finish declared the upgrade failed or timed out;
	// kept, that it kept the lock then.
	failedAt time.Time
	// endedAs is what Finish recorded then: "failure" or "timeout", and
	// endReason why.
	endedAs, endReason string
	kept               bool
	// lateDone: the upgrade completed after Finish had declared it failed.
	lateDone bool
	// completed: Finish saw the upgrade complete; detached: Detach ended
	// the session before any outcome.
	completed, detached bool
	// followed: Track began, so a Detach is the console stopping to
	// follow, not an apply nobody followed.
	followed bool
	// stopsWithConsole: see Driver.StopsWithConsole.
	stopsWithConsole bool
	// endErr is why the audit log did not take the upgrade's last end
	// entry (Finish's, or the completion after it); nil when it did.
	endErr error
	// detachErr is what Detach returned (guarded by ending).
	detachErr error
}

// EndUnrecorded is why the audit log did not take the entry that ends the
// upgrade (a full disk), nil when it took it: a farewell that says
// "recorded in the audit log" must not be said of an entry never written.
func (s *Session) EndUnrecorded() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endErr
}

// recordEnd writes the upgrade's end entry and remembers whether the log
// took it.
func (s *Session) recordEnd(ctx context.Context, e AuditEntry) error {
	err := audit(ctx, s.audit, e)
	s.mu.Lock()
	s.endErr = err
	s.mu.Unlock()
	return err
}

// Completed reports whether the upgrade the session started completed
// while it followed (after a declared failure too).
func (s *Session) Completed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.completed || s.lateDone
}

// Detached reports whether the session ended before the upgrade did: the
// console stopped following, and the upgrade goes on in the cluster.
func (s *Session) Detached() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.detached
}

// Start takes the lock, re-runs the checks under it, snapshots and applies.
// On an error before anything was applied the lock is released again; once
// a document is applied the lock is kept (the cluster is mid-change).
func (d *Driver) Start(ctx context.Context, plan *Plan, o StartOptions) (_ *Session, err error) {
	if err := requireAudit(d.Audit); err != nil {
		return nil, err
	}
	// The checks are re-run under the lock on a copy: the caller's plan may
	// be on screen.
	cp := *plan
	plan = &cp
	if plan.Blocked() {
		return nil, &PreflightError{Checks: plan.Blocking()}
	}
	// The snapshot's local copy is written only once the lock is taken and
	// the plan checked under it: a directory it cannot go to is refused
	// now, before any write, and recorded as apply records its refusals
	// before a write (its own check says it before the prompt; the plan
	// screen's start comes here).
	if err := CheckSnapshotDir(d.SnapshotDir); err != nil {
		e := RefusedApplyEntry(plan, false, err)
		e.Time = d.clock().Now()
		return nil, errors.Join(err, audit(context.WithoutCancel(ctx), d.Audit, e))
	}
	object := "Cluster " + plan.Namespace + "/" + plan.Cluster
	if err := audit(ctx, d.Audit, AuditEntry{
		Time: d.clock().Now(), Cluster: plan.Cluster, Action: "upgrade", Result: AuditStarted,
		Object:  object,
		Before:  map[string]string{"eksaVersion": plan.Versions.CurrentEKSA, "kubernetesVersion": plan.Versions.CurrentKubernetes},
		After:   map[string]string{"eksaVersion": plan.Versions.TargetEKSA, "kubernetesVersion": plan.Versions.TargetKubernetes, "writes": specWrites(plan.Target.Spec)},
		Skipped: plan.Skipped, Forced: o.ForceConflicts,
		Message: "spec " + SpecPathForLog(plan.Target.Spec.Path),
	}); err != nil {
		// The log holds the refused entry, to write later or print at
		// exit: its end goes with it, or, appended, it read "NO END
		// RECORDED … steps after its last entry may have run".
		_ = audit(context.WithoutCancel(ctx), d.Audit, AuditEntry{
			Time: d.clock().Now(), Cluster: plan.Cluster, Action: "upgrade", Result: AuditFailed,
			Object: object, Error: err.Error(), Message: "not started, nothing was changed: the audit log refused the upgrade's start",
		})
		return nil, err
	}
	// Close the "started" entry when the start itself fails, so the log
	// never shows an upgrade that seems interrupted when it was refused.
	anyApplied := false
	defer func() {
		if err == nil {
			return
		}
		result := AuditFailed
		var held *LockHeldError
		var pre *PreflightError
		var conflicts *ConflictsError
		var changed *DryRunChangedError
		switch {
		case errors.As(err, &held) || errors.As(err, &pre) || errors.As(err, &conflicts) || errors.As(err, &changed):
			result = AuditRefused
		case ctx.Err() != nil && !anyApplied:
			// A signal before the first write of the spec: recorded
			// "failed", the incident's record read as an upgrade that
			// failed where none ran.
			result = AuditInterrupted
		}
		err = errors.Join(err, audit(context.WithoutCancel(ctx), d.Audit, AuditEntry{
			Time: d.clock().Now(), Cluster: plan.Cluster, Action: "upgrade", Result: result,
			Object: object, Error: err.Error(),
		}))
	}()
	// step names what the start was doing, for an interrupt that cut a
	// request short (interrupted).
	step := "taking the upgrade lock"
	interrupted := func(cause error) error {
		if ctx.Err() == nil || !CancelledOnly(cause) {
			return cause
		}
		return &StartInterruptedError{Step: step, Err: cause}
	}
	locker := &Locker{Kube: d.Client.Kube, Namespace: d.Client.Sys(), Cluster: plan.Cluster, ClusterNamespace: plan.Namespace, Holder: d.Holder,
		Duration: d.LeaseDuration, Clock: d.clock(), Audit: d.Audit, Conn: d.Conn}
	h, err := locker.Hold(ctx, d.clock())
	if err != nil {
		return nil, interrupted(err)
	}
	s := &Session{Plan: plan, locker: locker, hold: h, clk: d.clock(), audit: d.Audit, client: d.Client, stopsWithConsole: d.StopsWithConsole}
	release := func(cause error) error {
		cause = interrupted(cause)
		rerr := h.Release(context.WithoutCancel(ctx))
		if rerr == nil || errors.Is(rerr, ErrLockLost) || errors.As(rerr, new(*AuditWriteError)) {
			// Released, lost, or its record refused (whether the delete
			// was made, the caller reads from the cluster).
			return errors.Join(cause, rerr)
		}
		// Left behind (the API server gone): it blocks the next upgrade
		// until it turns stale, and the operator is told how to clear it.
		return errors.Join(cause, &LockNotReleasedError{Err: rerr, Message: s.LockReleasedMessage(rerr)})
	}

	// Between the plan and the lock another console may have upgraded, or
	// the cluster may have changed: check again, now that nobody else can
	// start.
	if d.Planner != nil {
		step = "checking the plan again under the upgrade lock"
		if err := d.Planner.Recheck(ctx, plan); err != nil {
			return nil, release(err)
		}
		if plan.Blocked() {
			return nil, release(&PreflightError{Checks: plan.Blocking()})
		}
	}
	// The confirmation may have stayed open for minutes: what the writes
	// do, and the conflicts forced, must be what the operator saw.
	if o.DryRun != nil {
		step = "the dry run under the upgrade lock"
		now, err := (&Applier{Client: d.Client, Cluster: plan.Cluster}).DryRun(ctx, plan.Target.Spec)
		if err != nil {
			return nil, release(fmt.Errorf("the dry run under the upgrade lock failed, nothing was applied: %w", err))
		}
		if diffs := DryRunDifferences(o.DryRun, now); len(diffs) > 0 {
			return nil, release(&DryRunChangedError{Now: now, Differences: diffs})
		}
	}
	step = "saving the snapshot"
	snapper := &Snapshotter{Client: d.Client, Audit: d.Audit, Dir: d.SnapshotDir}
	snap, snapRef, err := snapper.Take(ctx, plan.Current.Cluster, plan.Target.Spec.Docs, d.Holder.String(), d.clock().Now())
	s.Snapshot = snapRef
	if err != nil {
		return nil, release(err)
	}
	if o.OnSnapshot != nil {
		o.OnSnapshot(s.Snapshot)
	}
	step = "the apply's own dry run, after the snapshot was taken"
	applier := &Applier{Client: d.Client, Audit: d.Audit, Cluster: plan.Cluster, Now: d.clock().Now}
	s.Applied, err = applier.Apply(ctx, plan.Target.Spec, ApplyOptions{
		ForceConflicts: o.ForceConflicts, Skipped: plan.Skipped, Changes: o.DryRun, OnApplied: o.OnApplied,
		Announced: true, // the started entry lists the writes
	})
	// A write with no answer may have landed: the spec may be half
	// applied, and the lock stays as after a write that did.
	var unanswered *UnansweredWriteError
	maybe := errors.As(err, &unanswered)
	anyApplied = len(s.Applied) > 0 || maybe
	if err != nil {
		if !anyApplied {
			return nil, release(err)
		}
		// The cluster is mid-change. A lock that only stops being renewed
		// turns stale and reads as a crashed console's, which `lock clear
		// --all` clears: marked kept, it stays until the operator clears
		// it by name, as after any failed upgrade.
		s.end()
		now := d.clock().Now()
		if maybe {
			s.Unanswered = unanswered.Object
		}
		why := fmt.Sprintf("upgrade failed: %s: %s (%s)", s.AppliedInPart(),
			strings.ReplaceAll(err.Error(), "\n", "; "), now.UTC().Format(time.RFC3339))
		_ = h.Keep(context.WithoutCancel(ctx), why) // its error is in LockKeptMessage
		s.mu.Lock()
		s.kept = true
		s.mu.Unlock()
		s.wayBackText = s.wayBack(snap, func(u *unstructured.Unstructured) (*meta.RESTMapping, error) {
			return d.Client.mapping(u.GroupVersionKind())
		})
		if maybe {
			return s, fmt.Errorf("%w\n%d document(s) were applied before it, and %s may have been too: read it (kubectl get) to know; %s", err, len(s.Applied), unanswered.Object, s.LockKeptMessage())
		}
		return s, fmt.Errorf("%w\n%d document(s) were applied before the failure; %s", err, len(s.Applied), s.LockKeptMessage())
	}
	s.ClusterGeneration = s.Applied[len(s.Applied)-1].Generation
	if childrenChanged(o.DryRun) && plan.Current != nil && plan.Current.Cluster != nil {
		s.ChildrenBefore, _, _ = unstructured.NestedInt64(plan.Current.Cluster.Object, "status", "childrenReconciledGeneration")
	}
	return s, nil
}

// StartInterruptedError is a start an interrupt (Ctrl-C, SIGTERM) cut short
// before any document was applied, in a request the API server had not
// answered: said in words, where client-go's read "read
// VSphereDatacenterConfig default/mgmt: client rate limiter Wait returned
// an error: context canceled", on the terminal and in the audit log. It is
// still errors.Is the cancellation.
type StartInterruptedError struct {
	// Step is what the start was doing ("saving the snapshot").
	Step string
	Err  error
}

func (e *StartInterruptedError) Error() string {
	return "interrupted before the API server answered (" + e.Step + "): no document was applied"
}

func (e *StartInterruptedError) Unwrap() error { return e.Err }

// CancelledOnly reports whether err says no more than that its context was
// cancelled: wrapping context.Canceled, or in client-go's text for it, which
// does not always wrap it (a request cut by the signal).
func CancelledOnly(err error) bool {
	if errors.Is(err, context.Canceled) {
		return true
	}
	msg := err.Error()
	return strings.HasSuffix(msg, "context canceled") || strings.HasSuffix(msg, "signal received")
}

// AppliedInPart says how much of the spec a start that failed part way
// applied.
func (s *Session) AppliedInPart() string {
	n := len(s.Plan.Target.Spec.Docs)
	if s.Unanswered != "" {
		return fmt.Sprintf("the spec may be applied in part (%d of %d documents, and %s unanswered)", len(s.Applied), n, s.Unanswered)
	}
	return fmt.Sprintf("the spec was applied in part (%d of %d documents)", len(s.Applied), n)
}

// specWrites lists the writes a start makes, in their order: the started
// entry carries them, so that a log that fills up during the writes does
// not stop the spec half applied (ApplyOptions.Announced).
func specWrites(spec *SpecFile) string {
	if spec == nil || spec.Cluster == nil {
		return ""
	}
	var refs []string
	for _, d := range ordered(spec) {
		refs = append(refs, "server-side apply "+docRef(d))
	}
	return strings.Join(refs, "; ")
}

// LockNotReleasedError is a start that stopped before the spec and could not
// release the lock it took: Message says what it blocks and how to clear it.
type LockNotReleasedError struct {
	Err     error
	Message string
}

func (e *LockNotReleasedError) Error() string { return e.Message }
func (e *LockNotReleasedError) Unwrap() error { return e.Err }

// childrenChanged reports whether the dry-run the operator confirmed changes
// the spec of an object other than the EKS-A Cluster.
func childrenChanged(dry *DryRunResult) bool {
	if dry == nil {
		return false
	}
	for _, o := range dry.Objects {
		if strings.HasPrefix(o.Object, "Cluster ") {
			continue
		}
		if o.Create {
			return true
		}
		for _, f := range o.Fields {
			// DiffObjects' paths: "spec.memoryMiB" (conflicts, from
			// managedFields, are written ".spec.memoryMiB").
			if p := strings.TrimPrefix(f.Path, "."); p == "spec" || strings.HasPrefix(p, "spec.") {
				return true
			}
		}
	}
	return false
}

// Lock is the lock as last taken or renewed, the last renew error, and
// whether the lock was lost (cleared or taken by someone else).
func (s *Session) Lock() (st *LockStatus, renewErr error, lost bool) { return s.hold.State() }

// RenewLockNow renews the session's lock at once (Hold.RenewNow); Lock then
// says how it went. Nothing to renew once the lock is kept, released or
// lost.
func (s *Session) RenewLockNow(ctx context.Context) { s.hold.RenewNow(ctx) }

// RenewLockOnResume is RenewLockNow for a console back from ctrl+z
// (Hold.RenewOnResume): the renewal the ticker made at fg answers it.
func (s *Session) RenewLockOnResume(ctx context.Context) { s.hold.RenewOnResume(ctx) }

// Track waits for the upgrade to complete (see Track) and then Finishes.
func (s *Session) Track(ctx context.Context, src StateSource, o TrackOptions) (Outcome, error) {
	o.AppliedGeneration = s.ClusterGeneration
	o.ChildrenReconciledBefore = s.ChildrenBefore
	s.confirmWith(&o)
	s.mu.Lock()
	s.followed = true
	s.mu.Unlock()
	out, err := Track(ctx, src, s.clk, o)
	if errors.Is(err, context.Canceled) {
		// The operator stopped following; the upgrade goes on in the
		// cluster. Nobody renews the lock any more, so it is released (as
		// without --wait) rather than left to block the next operator.
		return out, errors.Join(err, s.Detach(context.WithoutCancel(ctx)))
	}
	return out, errors.Join(err, s.Finish(context.WithoutCancel(ctx), out))
}

// confirmWith makes the tracking confirm completion with the API server
// before the lock is released on it, unless the caller confirms its own way.
func (s *Session) confirmWith(o *TrackOptions) {
	if o.Confirm == nil && s.client != nil && s.client.Dynamic != nil {
		o.Confirm = ConfirmCluster(s.client, s.Plan.Namespace, s.Plan.Cluster)
	}
}

// ConfirmCluster confirms a snapshot against the API server: the EKS-A
// Cluster read now is the one the watch delivered (same resourceVersion).
// A newer one means the watch is behind (it will deliver it); no answer
// means nothing the watch holds can be taken as the cluster's state.
func ConfirmCluster(c *Client, namespace, name string) func(context.Context, *model.ClusterState) error {
	return func(ctx context.Context, s *model.ClusterState) error {
		if s == nil || s.Cluster == nil {
			return errors.New("the watch holds no Cluster")
		}
		u, err := c.Dynamic.Resource(GVREKSACluster).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		switch {
		case DeadlineCut(ctx, err):
			return fmt.Errorf("reading Cluster %s/%s: no answer within %s", namespace, name, model.ConfirmWithin)
		case err != nil:
			return fmt.Errorf("reading Cluster %s/%s: %w", namespace, name, err)
		}
		if rv, seen := u.GetResourceVersion(), s.Cluster.ResourceVersion; rv != seen {
			return fmt.Errorf("the Cluster %s/%s is at resourceVersion %s, the watch has shown %s", namespace, name, rv, seen)
		}
		return nil
	}
}

// Finish ends the session: the lock is released when the upgrade completed
// and kept (no longer renewed, so it turns stale) when it failed or timed
// out, so nobody starts another upgrade on a cluster in an unknown state.
func (s *Session) Finish(ctx context.Context, out Outcome) error {
	s.ending.Lock()
	defer s.ending.Unlock()
	first, lost := s.end()
	if !first {
		return nil
	}
	e := AuditEntry{Time: s.clk.Now(), Cluster: s.Plan.Cluster, Action: "upgrade", Result: AuditFinished,
		Object: "Cluster " + s.Plan.Namespace + "/" + s.Plan.Cluster}
	switch {
	case out.Complete:
		e.Message = "completion rule held after " + model.TotalDuration(out.Elapsed)
	case out.TimedOut:
		e.Result, e.Message = AuditTimedOut, out.Reason
		if !strings.HasPrefix(out.Reason, "timed out") { // Track's says "timed out at …"
			e.Message = strings.TrimSuffix("timed out: "+out.Reason, ": ")
		}
	default:
		e.Result, e.Message = AuditFailed, "failed: "+out.Reason
	}
	var err error
	switch {
	case lost:
		if !out.Complete {
			e.Message += "; the lock was no longer this console's"
		}
	case out.Complete:
		if err = s.release(ctx); errors.Is(err, ErrLockLost) {
			err = nil
			e.Message += "; the lock was no longer this console's"
		}
	default:
		err = s.hold.Keep(ctx, "upgrade "+e.Message+" ("+s.clk.Now().UTC().Format(time.RFC3339)+")")
		if _, _, gone := s.hold.State(); gone {
			e.Message += "; the lock was no longer this console's"
			break
		}
		e.Message += "; lock kept"
		s.mu.Lock()
		s.kept = true
		s.mu.Unlock()
		if err != nil {
			// It still blocks the next upgrade; it only reads as live
			// until its lease runs out.
			e.Message += " (not marked kept: " + err.Error() + ")"
		}
	}
	e.Time = s.clk.Now()
	s.mu.Lock()
	if out.Complete {
		s.completed = true
	} else {
		s.failedAt, s.endedAs, s.endReason = e.Time, "failure", out.Reason
		if out.TimedOut {
			s.endedAs = "timeout"
		}
	}
	s.mu.Unlock()
	return errors.Join(err, s.recordEnd(ctx, e))
}

// Failure is how Finish ended a session that did not complete: "failure"
// or "timeout", and why; empty when it did not end so (completed, detached,
// or not ended).
func (s *Session) Failure() (endedAs, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endedAs, s.endReason
}

// CompletedAfterFailure reports whether the upgrade completed after Finish
// had declared it failed (FollowAfterFailure saw it through).
func (s *Session) CompletedAfterFailure() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lateDone
}

// Kept reports whether the session keeps its lock: Finish kept it after a
// failure or a timeout, and nothing released it since.
func (s *Session) Kept() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.kept && !s.hold.Released()
}

// WasKept reports whether Finish kept the session's lock after a failure
// or a timeout, whatever became of it since (cleared, released on a late
// completion).
func (s *Session) WasKept() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.kept
}

// FollowAfterFailure goes on following an upgrade that Finish declared
// failed or timed out, for a console that stays open on it (the dashboard):
// the operator's recovery (`node retry`, say) can still let it complete.
// When it does, the completion is recorded and the lock this session kept is
// released, as Finish does for an upgrade that completes; until then, or
// when ctx ends first, the failure stands and the lock stays kept. It
// returns at once, with a zero Outcome, for a session that did not fail.
func (s *Session) FollowAfterFailure(ctx context.Context, src StateSource, o TrackOptions) (Outcome, error) {
	s.mu.Lock()
	failedAt, endedAs := s.failedAt, s.endedAs
	s.mu.Unlock()
	if failedAt.IsZero() {
		return Outcome{}, nil
	}
	o.AppliedGeneration = s.ClusterGeneration
	o.ChildrenReconciledBefore = s.ChildrenBefore
	o.UntilComplete = true
	s.confirmWith(&o)
	out, err := Track(ctx, src, s.clk, o)
	if err != nil || !out.Complete {
		return out, err
	}
	s.ending.Lock()
	defer s.ending.Unlock()
	s.mu.Lock()
	s.lateDone = true
	s.mu.Unlock()
	e := AuditEntry{Time: s.clk.Now(), Cluster: s.Plan.Cluster, Action: "upgrade", Result: AuditFinished,
		Object:  "Cluster " + s.Plan.Namespace + "/" + s.Plan.Cluster,
		Message: "completion rule held, after the " + endedAs + " recorded at " + failedAt.UTC().Format(time.RFC3339)}
	var rerr error
	switch {
	case !s.Kept():
		e.Message += "; the lock was not this console's any more"
	default:
		rerr = s.hold.Release(ctx)
		switch {
		case errors.Is(rerr, ErrLockLost):
			rerr = nil
			e.Message += "; the lock was not this console's any more"
		case errors.As(rerr, new(*ReleaseUnrecordedError)):
			e.Message += "; kept lock released (the audit log refused the release's entry)"
		case rerr != nil:
			e.Message += "; the kept lock could NOT be released: " + rerr.Error()
		default:
			e.Message += "; kept lock released"
		}
	}
	return out, errors.Join(rerr, s.recordEnd(ctx, e))
}

// Detach ends the session right after the apply, for a caller that does not
// follow the upgrade: nobody would renew the lock, so it is released rather
// than left to go stale and block the next operator. The controllers'
// own markers and the readiness checks still keep a second upgrade out while
// this one rolls.
func (s *Session) Detach(ctx context.Context) error {
	s.ending.Lock()
	defer s.ending.Unlock()
	first, lost := s.end()
	if !first {
		// Detached already (the follow, stopped, ended it so): the same
		// error, for a caller that says it (a release refused); nil after
		// Finish.
		return s.detachErr
	}
	s.mu.Lock()
	s.detached = true
	what := "applied; not followed by the console"
	switch {
	case s.stopsWithConsole:
		what = "applied; the console quit before the upgrade completed, and the cluster (the demo's local control plane) stopped with it"
	case s.followed:
		what = "applied; the console stopped following before the upgrade completed, which goes on in the cluster"
	}
	s.mu.Unlock()
	var err error
	msg := what + " (lock released)"
	if lost {
		msg = what + " (the lock was no longer this console's)"
	} else if err = s.release(ctx); errors.Is(err, ErrLockLost) {
		err, msg = nil, what+" (the lock was no longer this console's)"
	} else if errors.As(err, new(*ReleaseUnrecordedError)) {
		msg = what + " (lock released; the audit log refused the release's entry, held with this one)"
	} else if err != nil {
		err = fmt.Errorf("releasing the upgrade lock: %w", err)
		msg = what + "; the lock was NOT released: " + err.Error()
	}
	s.detachErr = errors.Join(err, s.recordEnd(ctx, AuditEntry{Time: s.clk.Now(), Cluster: s.Plan.Cluster, Action: "upgrade",
		Result: AuditDetached, Object: "Cluster " + s.Plan.Namespace + "/" + s.Plan.Cluster, Message: msg}))
	return s.detachErr
}

// end stops the renew loop and marks the session finished; first is false
// when it already was (Finish and Detach may both be called).
func (s *Session) end() (first, lost bool) {
	s.hold.Stop()
	_, _, lost = s.hold.State()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return false, lost
	}
	s.finished = true
	return true, lost
}

func (s *Session) release(ctx context.Context) error { return s.hold.Release(ctx) }

// LockReleased reports whether the session released its lock.
func (s *Session) LockReleased() bool { return s.hold.Released() }

// ClusterFlags name the upgraded cluster and the console's connection in a
// command the operator pastes ("--cluster mgmt --context prod").
func (s *Session) ClusterFlags() string { return s.locker.clusterFlags() }

// LockKeptMessage is what the console says when it keeps the lock, or,
// when the lock was cleared or taken by someone else meanwhile, that it
// had none to keep (telling the operator to clear it would clear another
// console's). It says what the API server confirmed: a Lease that could not
// be marked kept (the API server gone) reads as live until it turns stale,
// and `lock clear lease` refuses it till then; one whose release failed is
// not said to be kept on purpose.
func (s *Session) LockKeptMessage() string {
	if _, _, lost := s.hold.State(); lost {
		return fmt.Sprintf("the upgrade lock was cleared or taken by someone else while this console followed, so it kept none; "+
			"`upgrade-console lock status %s` shows who holds it now; the pre-upgrade snapshot is in %s", s.locker.clusterFlags(), s.Snapshot.Where())
	}
	lease := fmt.Sprintf("the upgrade lock Lease %s/%s", s.locker.ns(), LockName(s.Plan.Cluster))
	clear := fmt.Sprintf("`upgrade-console lock clear lease %s`", s.locker.clusterFlags())
	snapshot := "; the pre-upgrade snapshot is in " + s.Snapshot.Where()
	marked, keepErr, releaseErr := s.hold.ended()
	blocks := "it blocks further upgrades until the cluster is checked and the lock cleared with " + clear
	if !marked {
		blocks = "it blocks further upgrades " + s.untilStale("once the cluster is checked, "+clear+" clears it")
	}
	switch {
	case releaseErr != nil:
		return fmt.Sprintf("%s could NOT be released (%v): %s%s", lease, releaseErr, blocks, snapshot)
	case keepErr != nil:
		return fmt.Sprintf("%s could not be marked kept (%v): %s%s", lease, keepErr, blocks, snapshot)
	case !marked:
		// Its renewals stopped, no more: nothing marked it.
		return fmt.Sprintf("%s is kept, no longer renewed: %s%s", lease, blocks, snapshot)
	}
	return fmt.Sprintf("%s is kept: %s%s", lease, blocks, snapshot)
}

// untilStale words how a lock no longer renewed, and not marked kept, reads
// until it turns stale (as held by a live console, which `lock clear lease`
// refuses without --force), then what clears it: its duration after the
// last renewal this console saw (one it sent that went unanswered may have
// landed, and moved that later).
func (s *Session) untilStale(then string) string {
	d := s.locker.duration()
	st, _, _ := s.hold.State()
	if st == nil || st.LastRenewed().IsZero() {
		return fmt.Sprintf("and reads as held by a live console until it turns stale, %s after its last renewal; from then, %s", d, then)
	}
	if st.Duration > 0 {
		d = st.Duration
	}
	at := st.ExpiresAt()
	if s.clk != nil && s.clk.Now().After(at) {
		return fmt.Sprintf("(it turned stale at about %s, %s after its last renewal); %s", at.UTC().Format(time.RFC3339), d, then)
	}
	return fmt.Sprintf("and reads as held by a live console until it turns stale at about %s (%s after its last renewal); from then, %s",
		at.UTC().Format(time.RFC3339), d, then)
}

// LockReleasedMessage is what the console says of the lock when the upgrade
// completed: released, no longer this console's, or left behind (a release
// the API server refused, or did not answer) with the way to clear it.
func (s *Session) LockReleasedMessage(releaseErr error) string {
	switch _, _, lost := s.hold.State(); {
	case lost:
		return "the upgrade lock was cleared or taken by someone else while this console followed"
	case s.LockReleased():
		return "the upgrade lock is released"
	case releaseErr == nil:
		_, _, releaseErr = s.hold.ended()
	}
	if releaseErr != nil {
		return fmt.Sprintf("the upgrade lock could NOT be released (%v): it blocks further upgrades %s", releaseErr,
			s.untilStale(fmt.Sprintf("`upgrade-console lock clear lease %s` clears it", s.locker.clusterFlags())))
	}
	return "the upgrade lock is released"
}

// RefusedApplyEntry is the audit entry of an apply refused before any write
// (by the checks, field conflicts, the API server or the snapshot
// directory), dryRun for an apply --dry-run: the console and the headless
// apply record it alike, where each built it by hand.
func RefusedApplyEntry(plan *Plan, dryRun bool, cause error) AuditEntry {
	return AuditEntry{Cluster: plan.Cluster, Action: "apply", Result: AuditRefused, DryRun: dryRun,
		Object: "Cluster " + plan.Namespace + "/" + plan.Cluster, Skipped: plan.Skipped,
		Error: cause.Error(), Message: "not applied, nothing changed"}
}
