package upgrade

import (
	"context"
	"errors"
	"runtime/debug"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/upgrade-console/upgrade-console/model"
)

// Hold is a taken upgrade lock kept alive: a goroutine renews the Lease every
// period until Stop. An upgrade's Session holds one while it applies and
// follows; a recovery action holds one while it runs. A nil Hold holds
// nothing (a Session made by hand, in tests of what draws it).
type Hold struct {
	locker *Locker
	clk    clock.WithTicker

	mu        sync.Mutex
	lock      *LockStatus
	renewErr  error
	lost      bool
	stopRenew context.CancelFunc
	renewDone chan struct{}
	// kick asks the renewing goroutine for a renewal now (RenewNow); it
	// closes the request's channel once that renewal is recorded.
	kick     chan renewRequest
	released bool
	// marked: Keep marked the Lease kept. keepErr and releaseErr are why
	// the last Keep or Release failed: what is said of the lock afterwards
	// must not claim what the API server never confirmed.
	marked     bool
	keepErr    error
	releaseErr error
}

// hold starts renewing the lock st that locker has just taken.
func hold(locker *Locker, clk clock.WithTicker, st *LockStatus) *Hold {
	if clk == nil {
		clk = clock.RealClock{}
	}
	h := &Hold{locker: locker, clk: clk, lock: st}
	h.start(locker.duration() / 3)
	return h
}

// Hold takes the lock (see Acquire) and keeps it renewed until Release.
func (l *Locker) Hold(ctx context.Context, clk clock.WithTicker) (*Hold, error) {
	st, err := l.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return hold(l, clk, st), nil
}

// renewWithin bounds one renewal: a renewal to an API server that does not
// answer fails, and is reported (State), by then rather than when HTTP/2's
// health check gives up, a minute later. Never more than the period: the
// ticker drops the ticks that come while a renewal waits, so a longer bound
// would delay the next attempt too, and within a lease (three periods) there
// must be room for a second and a third. Never more than answer (the
// Locker's bound for any request about the lock, 10s by default): a Lease
// is read and written in milliseconds.
func renewWithin(period, answer time.Duration) time.Duration { return min(period, answer) }

func (h *Hold) start(every time.Duration) {
	within := renewWithin(every, h.locker.answerWithin())
	ctx, cancel := context.WithCancel(context.Background())
	h.stopRenew = cancel
	h.renewDone = make(chan struct{})
	h.kick = make(chan renewRequest)
	go func() {
		defer close(h.renewDone)
		// A bug here must not kill the console mid-upgrade: renewing stops
		// and the holder reports why (State), as when the API refuses.
		defer func() {
			if r := recover(); r != nil {
				klog.ErrorS(nil, "internal error", "where", "renewing the upgrade lock", "panic", r, "stack", string(debug.Stack()))
				h.mu.Lock()
				h.renewErr = &model.InternalError{Where: "renewing the upgrade lock", Panic: r}
				h.mu.Unlock()
			}
		}()
		// A timer, set after each renewal for a period after that renewal
		// began: a ticker on its old phase renewed again 2-20 s after a
		// renewal made at fg; one started anew after each renewal put the
		// next a period after it ended, and renewals to a slow server
		// drifted apart (three within a Lease no more).
		t := h.clk.NewTimer(every)
		defer t.Stop()
		// After a failed renewal the API server is probed every few
		// seconds, a read the log need not record, and the lock renewed
		// as soon as it answers: at the next tick, a third of the Lease
		// away, a lock that expired during an outage stayed expired (and
		// clearable as a dead console's) for up to 20 s with the server
		// back.
		var retry clock.Timer
		defer func() {
			if retry != nil {
				retry.Stop()
			}
		}()
		// renewed is when the last renewal that succeeded began. Back from
		// ctrl+z the timer has fired and the console asks a renewal
		// at once (RenewOnResume): each renewed, one after the other, two
		// renewals and their audit entries in the same second. A
		// RenewOnResume within fresh of a renewal is answered by it (see
		// there). And the timer is set again after every renewal (above).
		var renewed time.Time
		fresh := retryEvery(every)
		for {
			var asked renewRequest
			var retryC <-chan time.Time
			if retry != nil {
				retryC = retry.C()
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C():
			case <-retryC:
				retry = nil
				if !h.locker.answers(ctx, within) {
					retry = h.clk.NewTimer(retryEvery(every))
					continue
				}
			case asked = <-h.kick:
				if !renewed.IsZero() && asked.answeredBy(renewed, fresh) {
					close(asked.done)
					continue
				}
			}
			began := h.clk.Now()
			st, err := h.locker.renew(ctx, within)
			if ctx.Err() != nil {
				return
			}
			if !t.Stop() {
				select { // fired, unread: a renewal it asked for is made
				case <-t.C():
				default:
				}
			}
			t.Reset(max(every-h.clk.Since(began), 0))
			if retry != nil {
				retry.Stop()
				retry = nil
			}
			if unansweredRenewal(err) {
				retry = h.clk.NewTimer(retryEvery(every))
			}
			renewed = time.Time{}
			if err == nil {
				renewed = began
			}
			h.mu.Lock()
			h.renewErr = err
			if st != nil {
				h.lock = st
			}
			if errors.Is(err, ErrLockLost) {
				h.lost = true
			}
			h.mu.Unlock()
			if asked.done != nil {
				close(asked.done)
			}
			if errors.Is(err, ErrLockLost) {
				return
			}
		}
	}()
}

// unansweredRenewal: the renewal failed because the API server did not
// answer (not reached, timed out), which the probe waits out. One it
// answered (a refusal, a full etcd) or the log refused is tried at the
// next tick: retried every 2 s, each failure was a record and a write
// against a server already struggling.
func unansweredRenewal(err error) bool {
	return err != nil && !errors.Is(err, ErrLockLost) && !asStatus(err, new(apierrors.APIStatus)) && !errors.As(err, new(*AuditWriteError))
}

// retryEvery is how often a failed renewal probes the API server: a tenth
// of the renewal period, at least a second.
func retryEvery(every time.Duration) time.Duration { return max(every/10, time.Second) }

// answers reports whether the API server answers a read of the Lease
// (found or not) within the bound.
func (l *Locker) answers(ctx context.Context, within time.Duration) bool {
	rctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	_, err := l.Status(rctx)
	return err == nil
}

// RenewNow renews the lock at once, in the renewing goroutine, as its next
// tick would, and returns once that renewal is recorded (State says how it
// went), or at once when the renewals have ended (Stop, the lock lost) or
// ctx ends. The renewal it waits for begins after it was asked: it is
// asked when the watched Lease no longer names this console, or the API
// server answers again after a failed renewal, and a renewal begun before
// that says nothing of it.
func (h *Hold) RenewNow(ctx context.Context) { h.ask(ctx, false) }

// RenewOnResume is RenewNow for a console resumed after ctrl+z: it renewed
// nothing while it was stopped, the Lease may have gone stale, and been
// cleared or taken, and the next tick is up to a third of the Lease's
// duration away. The ticker's tick due during the stop renews at fg too:
// a renewal that succeeded and began at most retryEvery before the request
// answers it, where the two renewed one after the other. Begun that close
// to fg, it began after the stop, or the stop was too short for the Lease
// to go stale (a forced clear meanwhile is seen by the watch, which asks
// RenewNow).
func (h *Hold) RenewOnResume(ctx context.Context) { h.ask(ctx, true) }

func (h *Hold) ask(ctx context.Context, resumed bool) {
	if h == nil {
		return
	}
	h.mu.Lock()
	kick, done := h.kick, h.renewDone
	h.mu.Unlock()
	if kick == nil {
		return
	}
	asked := renewRequest{at: h.clk.Now(), resumed: resumed, done: make(chan struct{})}
	select {
	case kick <- asked:
	case <-done:
		return
	case <-ctx.Done():
		return
	}
	select {
	case <-asked.done:
	case <-done:
	case <-ctx.Done():
	}
}

// renewRequest is a RenewNow or RenewOnResume: when it was asked, and the
// channel closed once a renewal that answers it is recorded.
type renewRequest struct {
	at      time.Time
	resumed bool
	done    chan struct{}
}

// answeredBy says whether a renewal that succeeded and began at renewed
// answers the request: one begun after it; for a resume, one begun less
// than fresh before it by the monotonic clock and by the wall clock both.
// The monotonic clock stops while some machines sleep: a laptop closed an
// hour after ctrl+z, renewed a second before the stop, read as fresh by it
// alone, with the Lease long expired.
func (r renewRequest) answeredBy(renewed time.Time, fresh time.Duration) bool {
	if renewed.After(r.at) {
		return true
	}
	return r.resumed && r.at.Sub(renewed) < fresh && r.at.Round(0).Sub(renewed.Round(0)) < fresh
}

// Stop ends the renewals and waits for them; the Lease stays (it turns
// stale after its duration).
func (h *Hold) Stop() {
	if h == nil {
		return
	}
	h.mu.Lock()
	cancel, done := h.stopRenew, h.renewDone
	h.stopRenew = nil
	h.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// State is the lock as last taken or renewed, the last renewal's error, and
// whether the lock was lost (cleared or taken by someone else).
func (h *Hold) State() (st *LockStatus, renewErr error, lost bool) {
	if h == nil {
		return nil, nil, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lock, h.renewErr, h.lost
}

// Release stops the renewals and deletes the Lease, unless it was lost.
func (h *Hold) Release(ctx context.Context) error {
	if h == nil {
		return nil
	}
	h.Stop()
	if _, _, lost := h.State(); lost {
		return nil
	}
	err := h.locker.Release(ctx)
	h.mu.Lock()
	switch {
	case err == nil, errors.As(err, new(*ReleaseUnrecordedError)):
		h.released = true
	case errors.Is(err, ErrLockLost):
		h.lost = true
	default:
		h.releaseErr = err
	}
	h.mu.Unlock()
	return err
}

// Keep stops the renewals and marks the Lease kept (Locker.Keep), unless it
// was lost.
func (h *Hold) Keep(ctx context.Context, why string) error {
	if h == nil {
		return nil
	}
	h.Stop()
	if _, _, lost := h.State(); lost {
		return nil
	}
	err := h.locker.Keep(ctx, why)
	h.mu.Lock()
	defer h.mu.Unlock()
	if errors.Is(err, ErrLockLost) {
		h.lost = true
		return nil
	}
	h.marked, h.keepErr = err == nil, err
	return err
}

// ended is what ending the hold did to the Lease: whether Keep marked it
// kept, and the errors of a Keep or a Release that failed.
func (h *Hold) ended() (marked bool, keepErr, releaseErr error) {
	if h == nil {
		return false, nil, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.marked, h.keepErr, h.releaseErr
}

// Released reports whether Release deleted the Lease.
func (h *Hold) Released() bool {
	if h == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.released
}

// TakeOver takes the lock for a recovery: a Lease its holder stopped renewing
// (an upgrade that failed and kept it, a console that died) is deleted first,
// conditionally on what was read, and recorded; a live one of another
// console is a *LockHeldError.
func (l *Locker) TakeOver(ctx context.Context, clk clock.WithTicker) (*Hold, error) {
	h, err := l.Hold(ctx, clk)
	var held *LockHeldError
	if !errors.As(err, &held) || !held.Stale {
		return h, err
	}
	// A log that refused the last entry takes this one's announcement
	// first, or the delete is not made, as for the lock's other writes.
	state := "stale"
	if held.Status.Kept != "" {
		state = "kept"
	}
	if err := l.announce(ctx, "lock-takeover", "delete the "+state+" Lease of "+held.Status.Holder.Display()); err != nil {
		return nil, err
	}
	// An interrupt does not cut the delete: once sent it may land, and its
	// record must say what became of it, as for the lock's other writes.
	wctx, cancel := landing(ctx)
	err = deleteLease(wctx, l.Kube, held.Status)
	gone := errors.Is(err, errLeaseGone)
	if err != nil && !gone {
		err = l.mayHaveLanded(wctx, err)
	}
	cancel()
	// Named as lock status names it: kept on purpose (an upgrade that
	// failed), or stale (a console that died).
	msg := "deleted the " + state + " Lease of " + held.Status.Holder.Display() + " (" + held.Status.Describe(l.now()) + ")"
	changed := apierrors.IsConflict(err)
	switch {
	case changed:
		msg = "did not delete the " + state + " Lease of " + held.Status.Holder.Display() + ": it changed since it was read (renewed, or taken by another console)"
	case gone:
		// Deleted by another console first: recorded as deleted here,
		// the log claimed a delete this console did not make.
		msg, err = "the "+state+" Lease of "+held.Status.Holder.Display()+" was gone already (cleared by another console): nothing deleted", nil
	}
	if rerr := l.record(ctx, "lock-takeover", msg, err); rerr != nil {
		return nil, errors.Join(err, rerr)
	}
	if err != nil && !changed {
		return nil, err
	}
	// Changed meanwhile (another console took it over first): read again,
	// a live lock of another console is refused as such (exit 3), not a
	// failure to resume.
	return l.Hold(ctx, clk)
}
