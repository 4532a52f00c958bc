// Package recovery holds the console's guided recovery actions (etcd rollback,
// clearing stale upgrade locks, retrying a failed in-place node) and the one
// engine that runs them all.
//
// An action is planned, never improvised: a planner reads the live cluster
// (and, for a rollback, the pre-upgrade snapshot), checks its preconditions
// and returns a Plan, the list of steps, each naming its object and the exact
// change. The operator sees the plan, a server-side dry run of its writes,
// types the object's name, and the Executor runs the steps one by one.
//
// Every step knows how to tell whether its effect is already in place, and
// checks that before it writes. A run that was interrupted at any point (the
// console killed, the API server gone) is resumed by planning and running the
// action again: finished steps report "already done" and the run ends in the
// same state as an uninterrupted one. Every write is guarded by optimistic
// concurrency (a JSON patch test of the value being replaced, or UID and
// resourceVersion preconditions) so a concurrent change is never clobbered,
// and every write is recorded in the audit log before success is reported.
package recovery

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// Action names, as they appear in the audit log and on the command line.
const (
	ActionEtcdRollback = "etcd-rollback"
	ActionLockClear    = "lock-clear"
	ActionNodeRetry    = "node-retry"
)

// Step is one change of a plan.
type Step struct {
	// Name is the step's stable id ("pause-eksa-reconcile"), used in the audit log.
	Name string
	// Title is what the step does, for the operator.
	Title string
	// Object is the object it changes or watches: "Kind namespace/name".
	Object string
	// Change is the exact change, e.g. `add annotation anywhere.eks.amazonaws.com/paused="true"`.
	Change string
	// Before and After are the changed part of the object as it is and as it
	// will be (recorded in the audit log).
	Before, After any
	// Wait marks a step that writes nothing and waits for the cluster (a
	// controller) to reach a state; it is not run in a dry run.
	Wait bool

	// done reports whether the step's effect is already in place, with a
	// short account of what it found.
	done func(ctx context.Context) (bool, string, error)
	// do makes the change; with dryRun the write is sent with dryRun=All and
	// nothing is persisted. It returns a short account of what happened.
	do func(ctx context.Context, dryRun bool) (string, error)
}

// Precondition is one condition an action needs before it may run.
type Precondition struct {
	Name string
	// Description says what must hold.
	Description string
	OK          bool
	// Detail is what was found (why it holds or does not).
	Detail string
}

// Plan is an action ready to run.
type Plan struct {
	Action  string
	Cluster string
	// Title is one line: "Roll back the etcd rollout of mgmt".
	Title string
	// Confirm is the name the operator types to confirm (the main object).
	Confirm string
	// ConfirmObject says what Confirm names ("EtcdadmCluster eksa-system/mgmt-etcd").
	ConfirmObject string
	Preconditions []Precondition
	Steps         []Step
	// Notes are shown with the plan (what the action does not do, what to
	// check first).
	Notes []string
	// Forced is set when the operator overrode a guard with --force.
	Forced bool

	// closing computes the closing message from the live state after a
	// successful run.
	closing func(ctx context.Context) []string
	// lock, when set, takes the upgrade lock for the run and returns what
	// gives it back and what says, before each step, that the run still
	// holds it (see Env.runLock).
	lock func(ctx context.Context, audit upgrade.Recorder) (release, held func(context.Context) error, err error)
	// lockAccess, when set, says (in the dry run) why the identity could
	// not take or give back that lock: its writes are no step's, so no
	// step's dry run asks the API server about them.
	lockAccess func(ctx context.Context) error
	// lockObject names the lock's Lease ("eksa-system/upgrade-console-mgmt").
	lockObject string
}

// Closing is the message shown after a successful run: the cluster's state
// and what the operator does next.
func (p *Plan) Closing(ctx context.Context) []string {
	if p.closing == nil {
		return nil
	}
	return p.closing(ctx)
}

// ConfirmMatches reports whether the operator typed the confirmation name.
func (p *Plan) ConfirmMatches(typed string) bool {
	return strings.TrimSpace(typed) == p.Confirm
}

// RefusedError says why an action is not offered: the preconditions that do
// not hold, each with what was found.
type RefusedError struct {
	Action  string
	Cluster string
	// Object is the object the action was asked to change, "Kind
	// namespace/name", so the audit log says what the refusal was about.
	Object        string
	Preconditions []Precondition
	// Input, when set, is the operator's input the refusal comes from (a
	// --snapshot naming no snapshot of the cluster): the command exits 1
	// naming the flag and its fix, while the attempt is still recorded as
	// a refusal with its preconditions, as before the input was checked.
	Input *model.InputError
}

// Unwrap lets the exit code find the bad input.
func (e *RefusedError) Unwrap() error {
	if e.Input == nil {
		return nil
	}
	return e.Input
}

func (e *RefusedError) Error() string {
	if e.Input != nil {
		return e.Input.Error()
	}
	var failed []string
	for _, p := range e.Preconditions {
		if !p.OK {
			failed = append(failed, fmt.Sprintf("%s: %s", p.Name, p.Detail))
		}
	}
	return fmt.Sprintf("%s of %s is not possible: %s", e.Action, e.Cluster, strings.Join(failed, "; "))
}

// Failed returns the preconditions that do not hold.
func (e *RefusedError) Failed() []Precondition {
	var out []Precondition
	for _, p := range e.Preconditions {
		if !p.OK {
			out = append(out, p)
		}
	}
	return out
}

// RecordRefusal writes an action the operator asked for and that was refused
// (err a *RefusedError) to the audit log: nothing was changed, but who tried
// what on which cluster, and why it was not possible, is part of an
// incident's record. Any other error is not a refusal and records nothing.
func RecordRefusal(ctx context.Context, audit upgrade.Recorder, err error) error {
	var r *RefusedError
	if audit == nil || !errors.As(err, &r) {
		return nil
	}
	var failed []string
	for _, p := range r.Failed() {
		failed = append(failed, p.Name+": "+p.Detail)
	}
	if rerr := audit.Record(ctx, upgrade.AuditEntry{Cluster: r.Cluster, Action: r.Action, Object: r.Object, Result: upgrade.AuditRefused,
		Message: "not run, nothing changed: " + strings.Join(failed, "; ")}); rerr != nil {
		return upgrade.AuditRecordError(rerr)
	}
	return nil
}

// RecordDryRunRefused ends an attempt whose dry run the API server refused:
// its step entries say which write was refused, and this that the action
// was not run, as a refused plan's entry does.
func RecordDryRunRefused(ctx context.Context, audit upgrade.Recorder, p *Plan, cause error) error {
	return recordNotRun(ctx, audit, p, upgrade.AuditRefused, "not run, nothing changed: the dry run failed", cause)
}

// RecordNotConfirmed ends an attempt whose typed confirmation was not given
// (no terminal, a wrong name, an interrupted prompt): its dry run is in the
// log, and so is that nothing was run.
func RecordNotConfirmed(ctx context.Context, audit upgrade.Recorder, p *Plan, cause error) error {
	return recordNotRun(ctx, audit, p, upgrade.AuditNotConfirmed, "not run, nothing changed", cause)
}

func recordNotRun(ctx context.Context, audit upgrade.Recorder, p *Plan, result, msg string, cause error) error {
	if audit == nil {
		return nil
	}
	if cause != nil {
		msg += ": " + cause.Error()
	}
	if err := audit.Record(ctx, upgrade.AuditEntry{Cluster: p.Cluster, Action: p.Action, Object: p.ConfirmObject,
		Result: result, Message: msg}); err != nil {
		return upgrade.AuditRecordError(err)
	}
	return nil
}

// refuseUnless returns a *RefusedError when a precondition fails.
func refuseUnless(action, cluster, object string, pre []Precondition) error {
	for _, p := range pre {
		if !p.OK {
			return &RefusedError{Action: action, Cluster: cluster, Object: object, Preconditions: pre}
		}
	}
	return nil
}

// ErrReadOnly is returned for any attempt to run or dry-run an action in
// read-only mode; nothing was sent to the API server.
var ErrReadOnly = errors.New("read-only mode: recovery actions are disabled (restart the console without --read-only to use them)")

// WaitTimeoutError says a wait step gave up: the cluster did not reach the
// state in time. The action is resumable: running it again waits again.
type WaitTimeoutError struct {
	What  string
	After time.Duration
	// Last is the last state seen.
	Last string
	// Hint says where to look.
	Hint string
}

func (e *WaitTimeoutError) Error() string {
	msg := fmt.Sprintf("%s after %s", e.What, e.After)
	if e.Last != "" {
		msg += " (" + e.Last + ")"
	}
	if e.Hint != "" {
		msg += ": " + e.Hint
	}
	return msg + "; run the action again to keep waiting"
}

// errNoWrite is returned by a step's do, with its account, when it found its
// effect already in place at the moment of writing (a delete that finds the
// object gone): nothing was written, so it is "already done", not "ok".
var errNoWrite = errors.New("no write was needed")

// StepStatus is where a step stands.
type StepStatus string

const (
	StepRunning     StepStatus = "running"
	StepDone        StepStatus = "done"
	StepAlreadyDone StepStatus = "already done"
	StepDryRunOK    StepStatus = "dry run ok"
	StepNotDryRun   StepStatus = "not dry-run"
	StepFailed      StepStatus = "failed"
)

// StepResult is the outcome of one step.
type StepResult struct {
	Index  int // 0-based
	Step   string
	Title  string
	Object string
	Status StepStatus
	Detail string
	Err    error
	Took   time.Duration
}

// Report is the outcome of a run or a dry run.
type Report struct {
	Action  string
	Cluster string
	DryRun  bool
	Steps   []StepResult
	// Closing is the plan's closing message (runs that completed only).
	Closing []string
}

// WroteNothing reports whether the run stopped before any step of it
// wrote: each step it reached found its effect in place, or stopped before
// its write (the server refused it).
func (r Report) WroteNothing() bool {
	for _, s := range r.Steps {
		if s.Status == StepDone {
			return false
		}
	}
	return true
}

// Refused reports whether the run was refused rather than stopped part way:
// the cluster changed since the plan was made (err a ConcurrentChangeError),
// before any step wrote.
func (r Report) Refused(err error) bool {
	var cc *ConcurrentChangeError
	return errors.As(err, &cc) && r.WroteNothing()
}

// AllAlreadyDone reports whether the report found every step of its plan in
// effect already: a dry run of a recovery that has nothing left to do.
func (r Report) AllAlreadyDone() bool {
	for _, st := range r.Steps {
		if st.Status != StepAlreadyDone {
			return false
		}
	}
	return len(r.Steps) > 0
}

// Executor runs plans. It is safe to use from one goroutine at a time.
type Executor struct {
	// Audit receives one entry per step (and the start and end of a run).
	// Required: an action never runs unrecorded.
	Audit upgrade.Recorder
	// ReadOnly refuses every run and dry run before any request is sent.
	ReadOnly bool
	// Progress, when set, is called as each step starts and ends.
	Progress func(StepResult)
	// Now is the clock for step durations (time.Now when nil).
	Now func() time.Time

	// afterStep is a test hook called after step i finished successfully.
	afterStep func(i int)
}

func (x *Executor) now() time.Time {
	if x.Now == nil {
		return time.Now()
	}
	return x.Now()
}

func (x *Executor) progress(r StepResult) {
	if x.Progress != nil {
		x.Progress(r)
	}
}

func (x *Executor) check(p *Plan) error {
	if x.ReadOnly {
		return ErrReadOnly
	}
	if x.Audit == nil {
		return fmt.Errorf("recovery: %w", upgrade.ErrNoAudit)
	}
	if p == nil || len(p.Steps) == 0 {
		return errors.New("recovery: empty plan")
	}
	return nil
}

func (x *Executor) record(ctx context.Context, p *Plan, e upgrade.AuditEntry) error {
	e.Cluster = p.Cluster
	e.Action = p.Action
	if p.Forced {
		e.Forced = true
	}
	if err := x.Audit.Record(ctx, e); err != nil {
		return upgrade.AuditRecordError(err)
	}
	return nil
}

// DryRun sends every write of the plan with dryRun=All: the API server runs
// admission, validation and the optimistic-concurrency tests and persists
// nothing. Steps already in place report so; wait steps are not run.
func (x *Executor) DryRun(ctx context.Context, p *Plan) (Report, error) {
	rep := Report{Action: p.Action, Cluster: p.Cluster, DryRun: true}
	if err := x.check(p); err != nil {
		return rep, err
	}
	var errs []error
	// The log's first refusal; the dry run goes on, its entries held (see
	// DryRunUnrecordedError).
	var unrecorded error
	for i := range p.Steps {
		s := &p.Steps[i]
		r := StepResult{Index: i, Step: s.Name, Title: s.Title, Object: s.Object}
		start := x.now()
		done, detail, err := s.done(ctx)
		switch {
		case err != nil:
			r.Status, r.Err = StepFailed, err
		case done:
			r.Status, r.Detail = StepAlreadyDone, detail
		case s.Wait:
			r.Status, r.Detail = StepNotDryRun, "waits for the cluster; not run in a dry run"
		default:
			var detail string
			detail, r.Err = s.do(ctx, true)
			r.Status, r.Detail = StepDryRunOK, "accepted by the API server; nothing persisted"
			switch {
			case errors.Is(r.Err, errNoWrite):
				r.Status, r.Detail, r.Err = StepAlreadyDone, detail, nil
			case r.Err != nil:
				// What the write would have done ("2 field(s) restored")
				// is not what a refused one did: the audit entry read as
				// a success beside its error.
				r.Status, r.Detail = StepFailed, ""
			case strings.HasPrefix(detail, "depends on"):
				r.Detail = detail
			}
		}
		r.Took = x.now().Sub(start)
		rep.Steps = append(rep.Steps, r)
		x.progress(r)
		if r.Err != nil {
			errs = append(errs, fmt.Errorf("step %d %s: %w", i+1, s.Name, r.Err))
		}
		if !s.Wait && r.Status != StepNotDryRun {
			e := upgrade.AuditEntry{Step: s.Name, Object: s.Object, Before: s.Before, After: s.After, DryRun: true, Message: r.Detail}
			e.Result = upgrade.AuditDryRun
			if r.Status == StepAlreadyDone {
				e.Result, e.Before, e.After = upgrade.AuditAlreadyDone, nil, nil
			}
			if r.Err != nil {
				e.Result, e.Error = upgrade.AuditFailed, r.Err.Error()
			}
			if err := x.record(ctx, p, e); err != nil && unrecorded == nil {
				unrecorded = err
			}
		}
		if ctx.Err() != nil {
			return rep, errors.Join(ctx.Err(), unrecorded)
		}
	}
	if p.lockAccess != nil && !rep.AllAlreadyDone() {
		// A run takes the lock before its first step and gives it back
		// after its last: refused, the dry run said "ok" and the run
		// failed before its first step (exit 4, "run it again"), or
		// finished every step and then kept the lock.
		if err := p.lockAccess(ctx); err != nil {
			errs = append(errs, fmt.Errorf("the upgrade lock: %w", err))
			e := upgrade.AuditEntry{Step: "upgrade-lock", Object: "Lease " + p.lockObject, DryRun: true,
				Result: upgrade.AuditFailed, Error: err.Error()}
			if rerr := x.record(ctx, p, e); rerr != nil && unrecorded == nil {
				unrecorded = rerr
			}
		}
	}
	if len(errs) == 0 && unrecorded != nil {
		return rep, &DryRunUnrecordedError{Err: unrecorded}
	}
	return rep, errors.Join(append(errs, unrecorded)...)
}

// DryRunUnrecordedError is a dry run that passed, every step of it, whose
// entries the audit log refused (a full disk): the Auditor holds them. It
// changed nothing, so a caller that stops there (--dry-run, every step
// already done) ends as a run whose record the log did not take (exit 74),
// and one that would go on to write must not. Its chain holds the
// upgrade.AuditWriteError.
type DryRunUnrecordedError struct{ Err error }

func (e *DryRunUnrecordedError) Error() string { return e.Err.Error() }
func (e *DryRunUnrecordedError) Unwrap() error { return e.Err }

// interruptedError is a step, or a run, stopped by its context (ctrl+c, a
// signal): said in words, not client-go's "context canceled", and still
// errors.Is the cancellation.
type interruptedError struct {
	what  string
	cause error
}

func (e *interruptedError) Error() string {
	if e.what != "" {
		return e.what
	}
	return "stopped before its end (interrupted)"
}

func (e *interruptedError) Unwrap() error { return e.cause }

// NotStartedError is a run that did not start because the audit log refused
// its start entry: nothing was written. Any later refusal (the lock taken
// over, a step's entry) comes after a write, and is not this.
type NotStartedError struct{ Err error }

func (e *NotStartedError) Error() string { return e.Err.Error() }
func (e *NotStartedError) Unwrap() error { return e.Err }

// Run executes the plan step by step. A step whose effect is in place is
// skipped as "already done"; the first failure stops the run (the cluster is
// left as the finished steps made it; planning and running again resumes).
func (x *Executor) Run(ctx context.Context, p *Plan) (rep Report, err error) {
	rep = Report{Action: p.Action, Cluster: p.Cluster}
	if err := x.check(p); err != nil {
		return rep, err
	}
	// Interrupted before it began (ctrl-c at the confirmation): nothing was
	// attempted, so nothing is recorded as started or failed.
	if err := ctx.Err(); err != nil {
		return rep, fmt.Errorf("interrupted before the first step, nothing was changed: %w", err)
	}
	before, after := planned(p)
	if err := x.record(ctx, p, upgrade.AuditEntry{Result: upgrade.AuditStarted, Object: p.ConfirmObject,
		Message: fmt.Sprintf("%s (%d steps)", p.Title, len(p.Steps)), Before: before, After: after}); err != nil {
		// The log holds the refused start, to write later or print at
		// exit: its end goes with it (alone, it read as a run that may
		// have made its steps).
		_ = x.end(p, upgrade.AuditFailed, "not run, nothing was changed: the audit log refused the run's start", err)
		return rep, &NotStartedError{Err: err}
	}
	var held func(context.Context) error
	if p.lock != nil {
		var release func(context.Context) error
		var lerr error
		release, held, lerr = p.lock(ctx, x.Audit)
		if held != nil {
			ctx = context.WithValue(ctx, heldKey{}, held)
		}
		if lerr != nil {
			lerr = fmt.Errorf("taking the upgrade lock: %w", lerr)
			if held := (*upgrade.LockHeldError)(nil); errors.As(lerr, &held) {
				// Turned away before any step: refused, as a start the
				// lock turns away is (not a run that stopped).
				return rep, x.end(p, upgrade.AuditRefused, "not run, nothing was changed: another console holds the upgrade lock", lerr)
			}
			return rep, x.stop(ctx, p, lerr)
		}
		// Given back however the run ends, interrupted included: a rerun
		// must not wait for the Lease to turn stale.
		defer func() { err = errors.Join(err, release(context.WithoutCancel(ctx))) }()
	}
	for i := range p.Steps {
		s := &p.Steps[i]
		if err := ctx.Err(); err != nil {
			return rep, x.stop(ctx, p, &interruptedError{cause: err,
				what: fmt.Sprintf("interrupted before step %d (%s)", i+1, s.Title)})
		}
		if held != nil {
			// A run stopped (ctrl-z, a laptop asleep) past its lease
			// found its lock cleared by another operator, and wrote
			// on, unlocked, to a success.
			if err := held(ctx); err != nil {
				return rep, x.stop(ctx, p, fmt.Errorf("stopped before step %d (%s), which was not made: %w", i+1, s.Title, err))
			}
		}
		r := StepResult{Index: i, Step: s.Name, Title: s.Title, Object: s.Object, Status: StepRunning}
		x.progress(r)
		start := x.now()
		r.Status, r.Detail, r.Err = x.runStep(ctx, s)
		if r.Err != nil && ctx.Err() != nil && errors.Is(r.Err, ctx.Err()) {
			// "failed: context canceled" read as a fault of the step's.
			r.Err = &interruptedError{cause: r.Err}
		}
		r.Took = x.now().Sub(start)
		rep.Steps = append(rep.Steps, r)
		x.progress(r)

		e := upgrade.AuditEntry{Step: s.Name, Object: s.Object, Message: r.Detail}
		switch {
		case rep.Refused(r.Err):
			// The server refused the write: nothing was written.
			e.Result, e.Error, e.Before, e.After = upgrade.AuditRefused, r.Err.Error(), s.Before, s.After
		case r.Err != nil:
			e.Result, e.Error, e.Before, e.After = upgrade.AuditFailed, r.Err.Error(), s.Before, s.After
		case r.Status == StepAlreadyDone:
			e.Result = upgrade.AuditAlreadyDone
		default:
			e.Result, e.Before, e.After = upgrade.AuditOK, s.Before, s.After
		}
		if err := x.record(ctx, p, e); err != nil {
			return rep, err
		}
		if r.Err != nil {
			if ctx.Err() != nil && errors.Is(r.Err, ctx.Err()) {
				return rep, x.stop(ctx, p, &interruptedError{cause: r.Err,
					what: fmt.Sprintf("interrupted during step %d (%s)", i+1, s.Title)})
			}
			if ctx.Err() != nil {
				// Interrupted while a write step ran to its end (the
				// API server hung, the write then failed): the run was
				// stopped, not a failure of the action's own.
				return rep, x.stop(ctx, p, fmt.Errorf("interrupted during step %d (%s), whose write then failed: %w: %w", i+1, s.Title, r.Err, ctx.Err()))
			}
			if rep.Refused(r.Err) {
				// A refusal, as a plan whose preconditions fail: not a
				// run that stopped part way and resumes.
				return rep, x.end(p, upgrade.AuditRefused, "not run, nothing was changed: the cluster changed since the plan was made; plan the action again",
					fmt.Errorf("step %d (%s) refused: %w", i+1, s.Title, r.Err))
			}
			return rep, x.stop(ctx, p, fmt.Errorf("step %d (%s) failed: %w", i+1, s.Title, r.Err))
		}
		if x.afterStep != nil {
			x.afterStep(i)
		}
	}
	rep.Closing = p.Closing(ctx)
	if err := x.record(ctx, p, upgrade.AuditEntry{Result: upgrade.AuditFinished, Object: p.ConfirmObject,
		Message: strings.Join(rep.Closing, " ")}); err != nil {
		return rep, err
	}
	return rep, nil
}

// planned is what the run's write steps are to change, by step name: the
// object, the change and the values it replaces (before), and the values it
// writes (after). The started entry carries it, ahead of every write: a
// console killed while a write landed, before the write's own entry,
// left no record of it or of what it replaced (a deleted Lease's holder).
func planned(p *Plan) (before, after map[string]any) {
	before, after = map[string]any{}, map[string]any{}
	for _, s := range p.Steps {
		if s.Wait {
			continue
		}
		before[s.Name] = map[string]any{"object": s.Object, "change": s.Change, "value": s.Before}
		after[s.Name] = map[string]any{"object": s.Object, "value": s.After}
	}
	if len(before) == 0 {
		return nil, nil
	}
	return before, after
}

// writeStepLimit bounds a write step that an interrupt no longer stops.
const writeStepLimit = time.Minute

func (x *Executor) runStep(ctx context.Context, s *Step) (StepStatus, string, error) {
	done, detail, err := s.done(ctx)
	if err != nil {
		return StepFailed, detail, err
	}
	if done {
		return StepAlreadyDone, detail, nil
	}
	if !s.Wait {
		// A write step runs to its end, read-back included, once begun: an
		// interrupt in between recorded a write that had landed as failed
		// ("reading back: context canceled"). The loop stops before the
		// next step instead.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), writeStepLimit)
		defer cancel()
	}
	detail, err = s.do(ctx, false)
	if errors.Is(err, errNoWrite) {
		return StepAlreadyDone, detail, nil
	}
	if err != nil && !s.Wait {
		// A write's detail says what it did ("lease deleted"): beside its
		// error the audit entry read as a success, as the dry run's did.
		return StepFailed, "", err
	}
	if err != nil {
		return StepFailed, detail, err
	}
	if s.Wait {
		return StepDone, detail, nil
	}
	// Read back: a write the server accepted but that did not take effect
	// (a mutating webhook undoing it) must not be reported as done.
	ok, after, err := s.done(ctx)
	if err != nil {
		return StepFailed, detail, fmt.Errorf("reading back: %w", err)
	}
	if !ok {
		return StepFailed, detail, fmt.Errorf("the server accepted the change but it is not in place: %s", after)
	}
	return StepDone, detail, nil
}

// stop records the end of an unfinished run. The audit write uses a fresh
// context: the run's may be the one that was cancelled.
// heldKey holds, in a run's context, what says the run still holds its
// lock (Plan.lock's held).
type heldKey struct{}

// stillHeld says whether the run of ctx still holds its lock, for a step
// that waits before it writes: a stop (ctrl-z) during the wait outlived the
// lease, another operator cleared it, and the write went out on resume.
// The read has a time of its own: the step's may have run out meanwhile.
func stillHeld(ctx context.Context) error {
	held, ok := ctx.Value(heldKey{}).(func(context.Context) error)
	if !ok {
		return nil
	}
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	return held(hctx)
}

func (x *Executor) stop(_ context.Context, p *Plan, cause error) error {
	return x.end(p, upgrade.AuditFailed, "run stopped; plan and run the action again to resume", cause)
}

// end records how a run ended before its steps did, and returns cause.
func (x *Executor) end(p *Plan, result, message string, cause error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := x.record(ctx, p, upgrade.AuditEntry{Result: result, Object: p.ConfirmObject,
		Error: cause.Error(), Message: message}); err != nil {
		return errors.Join(cause, err)
	}
	return cause
}

// pollState polls check until it holds or timeout passes, and returns the
// last state it described. An error of the API server (restarting, say) does
// not end the wait; it is the last state until a read succeeds again, unless
// it came from the deadline itself: a read begun just before it ends fails
// in client-go's rate limiter ("would exceed context deadline"), which says
// nothing of the cluster.
func pollState(ctx context.Context, interval, timeout time.Duration, check func(context.Context) (bool, string, error)) (string, error) {
	var last string
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		ok, detail, err := check(ctx)
		if rf := (*RolledForwardError)(nil); errors.As(err, &rf) {
			return false, err // no wait ends it
		}
		if err != nil {
			if dl, has := ctx.Deadline(); ctx.Err() == nil && (!has || time.Until(dl) > time.Second) {
				last = err.Error()
			}
			return false, nil
		}
		last = detail
		return ok, nil
	})
	return last, err
}
