package upgrade

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/upgrade-console/upgrade-console/model"
)

// brokenKube panics on any call, as a bug in the renewal would.
type brokenKube struct{ kubernetes.Interface }

// A panic while renewing the lock stops the renewal and is reported by the
// holder, instead of killing the console in the middle of an upgrade.
func TestRenewContainsAPanic(t *testing.T) {
	h := &Hold{locker: &Locker{Kube: brokenKube{}, Namespace: "eksa-system", Cluster: "mgmt", Audit: &memAudit{}}, clk: clock.RealClock{}}
	h.start(time.Millisecond)
	select {
	case <-h.renewDone:
	case <-time.After(10 * time.Second):
		t.Fatal("the renewal did not stop after its panic")
	}
	_, renewErr, lost := h.State()
	var internal *model.InternalError
	if !errors.As(renewErr, &internal) || internal.Where != "renewing the upgrade lock" || lost {
		t.Fatalf("Lock() = err %v, lost %t; want the InternalError of the renewal", renewErr, lost)
	}
}

// failedSource is a watcher that stopped on an internal error.
type failedSource struct{ err error }

func (failedSource) Latest() *model.ClusterState { return nil }
func (f failedSource) Err() error                { return f.err }

// WaitSynced gives up at once on a watcher that failed, with its error, not
// after the timeout with one about the connection.
func TestWaitSyncedStopsOnAFailedWatcher(t *testing.T) {
	want := &model.InternalError{Where: "building snapshots", Panic: "boom"}
	_, err := WaitSynced(context.Background(), failedSource{want}, time.Millisecond, 30*time.Second)
	// After the timeout it would be the connection's error instead.
	if err != want {
		t.Fatalf("WaitSynced = %v, want the watcher's error", err)
	}
}

// neverSynced is a watcher whose first lists never arrive.
type neverSynced struct{}

func (neverSynced) Latest() *model.ClusterState { return nil }

// WaitSynced stopped by its context (a signal) says so, not that the
// objects did not load within the timeout, which sent an operator who
// pressed Ctrl-C after the connection; its own timeout is a
// SyncTimeoutError naming what it waited for.
func TestWaitSyncedTellsAStopFromItsTimeout(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := WaitSynced(ctx, neverSynced{}, time.Millisecond, 30*time.Second)
	var slow *SyncTimeoutError
	if !errors.Is(err, context.Canceled) || errors.As(err, &slow) {
		t.Errorf("cancelled: %v; want context.Canceled", err)
	}
	_, err = WaitSynced(context.Background(), neverSynced{}, time.Millisecond, 20*time.Millisecond)
	if !errors.As(err, &slow) || slow.Timeout != 20*time.Millisecond || len(slow.Waiting) != 1 || slow.Waiting[0] != "no snapshot yet" {
		t.Errorf("timed out: %v; want a SyncTimeoutError waiting for the first snapshot", err)
	}
}

// unreachable is an API server that answers nothing about the lock.
func unreachable() kubernetes.Interface {
	kube := fake.NewClientset()
	kube.PrependReactor("*", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("connection refused")
	})
	return kube
}

// With the API server gone, a renewal and a release are failures, recorded
// as such, and a console that stops following does not claim it released
// the lock.
func TestDetachWithTheAPIServerGoneSaysTheLockIsKept(t *testing.T) {
	audit := &memAudit{}
	locker := &Locker{Kube: unreachable(), Namespace: "eksa-system", Cluster: "mgmt", Holder: Holder{User: "a", Host: "h", Instance: "1"}, Audit: audit}
	if _, err := locker.Renew(context.Background()); err == nil {
		t.Fatal("renewal succeeded against an unreachable API server")
	}
	s := &Session{Plan: &Plan{Cluster: "mgmt", Namespace: "default"}, locker: locker, hold: &Hold{locker: locker, clk: clock.RealClock{}},
		clk: clock.RealClock{}, audit: audit}
	err := s.Detach(context.Background())
	if err == nil || s.LockReleased() {
		t.Fatalf("Detach = %v, released %t; want the release's failure", err, s.LockReleased())
	}
	got := strings.Join(audit.actions(), " ")
	if got != "lock-renew:failed lock-release:failed upgrade:detached" {
		t.Fatalf("audit = %s", got)
	}
	if last := audit.entries[len(audit.entries)-1]; !strings.Contains(last.Message, "NOT released") || !strings.Contains(last.Message, "not followed by the console") {
		t.Errorf("the detach entry says %q", last.Message)
	}
	// Quit while it followed: the console stopped following, it did not
	// leave the upgrade unfollowed ("not followed" after 13 s of it).
	s = &Session{Plan: &Plan{Cluster: "mgmt", Namespace: "default"}, locker: locker, hold: &Hold{locker: locker, clk: clock.RealClock{}},
		clk: clock.RealClock{}, audit: audit, followed: true}
	_ = s.Detach(context.Background())
	if last := audit.entries[len(audit.entries)-1]; !strings.Contains(last.Message, "the console stopped following before the upgrade completed") {
		t.Errorf("the detach entry of a followed upgrade says %q", last.Message)
	}
}

// silent is an API server that takes every request and answers none, as a
// frozen kube-apiserver (SIGSTOP) or a half-open connection does.
func silent(t *testing.T) kubernetes.Interface {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() {
		close(release)
		srv.Close()
	})
	return kubernetes.NewForConfigOrDie(&rest.Config{Host: srv.URL})
}

// A renewal the API server does not answer fails, and the holder reports it,
// within the renewal's bound: it was said only when HTTP/2's health check
// gave up, about a minute later, or never while that request hung.
func TestRenewalNotAnsweredFailsWithinItsBound(t *testing.T) {
	if got := renewWithin(DefaultLeaseDuration/3, DefaultAnswerWithin); got != DefaultAnswerWithin {
		t.Errorf("renewal bound of the default lease: %s, want %s", got, DefaultAnswerWithin)
	}
	if got := renewWithin(3*time.Second, DefaultAnswerWithin); got != 3*time.Second {
		t.Errorf("renewal bound of a 9s lease: %s, want its period, 3s", got)
	}
	audit := &memAudit{}
	locker := &Locker{Kube: silent(t), Namespace: "eksa-system", Cluster: "mgmt", Holder: Holder{User: "a", Host: "h", Instance: "1"}, Audit: audit}
	h := &Hold{locker: locker, clk: clock.RealClock{}}
	const period = 300 * time.Millisecond
	start := time.Now()
	h.start(period)
	defer h.Stop()
	var renewErr error
	for renewErr == nil && time.Since(start) < 10*time.Second {
		time.Sleep(20 * time.Millisecond)
		_, renewErr, _ = h.State()
	}
	if renewErr == nil {
		t.Fatal("a renewal the API server never answered was not reported as failed within 10s")
	}
	if took := time.Since(start); took > period+renewWithin(period, DefaultAnswerWithin)+2*time.Second {
		t.Errorf("the failed renewal was reported after %s", took)
	}
	if !strings.Contains(renewErr.Error(), "no answer from the API server within 300ms") {
		t.Errorf("renewal error %q does not say the API server did not answer", renewErr)
	}
	if got := strings.Join(audit.actions(), " "); !strings.HasPrefix(got, "lock-renew:failed") {
		t.Errorf("audit = %s", got)
	}
}

// Taking the lock, marking it kept and releasing it at the end of an
// upgrade do not wait for an API server that does not answer: each fails
// within its bound, saying so, and keeping and releasing are recorded as
// failed (taking it failed on its read: nothing was written).
func TestKeepAndReleaseNotAnsweredFailWithinTheirBound(t *testing.T) {
	audit := &memAudit{}
	locker := &Locker{Kube: silent(t), Namespace: "eksa-system", Cluster: "mgmt", Holder: Holder{User: "a", Host: "h", Instance: "1"},
		Audit: audit, AnswerWithin: 200 * time.Millisecond}
	for name, op := range map[string]func(context.Context) error{
		"keep":    func(ctx context.Context) error { return locker.Keep(ctx, "upgrade timed out") },
		"release": locker.Release,
		"acquire": func(ctx context.Context) error { _, err := locker.Acquire(ctx); return err },
	} {
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- op(context.Background()) }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "no answer from the API server within 200ms") {
				t.Errorf("%s: %v, want that the API server did not answer within 200ms", name, err)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("%s took %s", name, took)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s still waits for an API server that does not answer after 10s", name)
		}
	}
	got := strings.Join(audit.actions(), " ")
	if !strings.Contains(got, "lock-keep:failed") || !strings.Contains(got, "lock-release:failed") {
		t.Errorf("audit = %s", got)
	}
}

// What the console says of the lock is what the API server confirmed. With
// the API server gone at the end of an upgrade, the Lease could not be marked
// kept: it said "is kept: it blocks further upgrades until … cleared", while
// the audit log said lock-keep failed and `lock clear lease` refused the
// Lease, which read as live until it turned stale. A release that failed
// after the console had said it kept the lock was said "is kept" too.
func TestLockKeptMessageSaysWhatTheAPIServerConfirmed(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 5, 12, 0, 0, time.UTC)
	holder := Holder{User: "a", Host: "h", Instance: "1"}
	session := func(kube kubernetes.Interface) *Session {
		locker := &Locker{Kube: kube, Namespace: "eksa-system", Cluster: "mgmt", Holder: holder, Audit: &memAudit{}}
		h := &Hold{locker: locker, clk: clock.RealClock{}, lock: &LockStatus{Lock: model.Lock{
			Namespace: "eksa-system", Name: LockName("mgmt"), HolderIdentity: holder.String(),
			AcquireTime: t0.Add(-time.Minute), RenewTime: t0, Duration: DefaultLeaseDuration,
		}}}
		return &Session{Plan: &Plan{Cluster: "mgmt", Namespace: "default"}, Snapshot: SnapshotRef{Namespace: "eksa-system", Name: "snap"},
			locker: locker, hold: h, clk: clocktesting.NewFakeClock(t0.Add(10 * time.Second)), audit: &memAudit{}}
	}
	staleAt := "turns stale at about 2026-11-23T05:13:00Z (1m0s after its last renewal)"

	t.Run("not marked", func(t *testing.T) {
		s := session(unreachable())
		if err := s.Finish(context.Background(), Outcome{TimedOut: true, Reason: "timed out at etcd"}); err == nil {
			t.Fatal("marking the lock kept succeeded against an unreachable API server")
		}
		// A timeout is not a failure (exit 5, not 4): recorded as such.
		if es := s.audit.(*memAudit).entries; len(es) == 0 || es[len(es)-1].Result != AuditTimedOut {
			t.Errorf("the timeout was recorded as %+v, want %s", es, AuditTimedOut)
		}
		m := s.LockKeptMessage()
		for _, want := range []string{"could not be marked kept (mark the upgrade lock kept: ", "connection refused", staleAt,
			"`upgrade-console lock clear lease --cluster mgmt` clears it", "snapshot is in ConfigMap eksa-system/snap"} {
			if !strings.Contains(m, want) {
				t.Errorf("message lacks %q:\n%s", want, m)
			}
		}
		if strings.Contains(m, " is kept") {
			t.Errorf("a lock that could not be marked kept is said kept:\n%s", m)
		}
	})
	t.Run("not released", func(t *testing.T) {
		s := session(unreachable())
		s.hold.Stop() // renewals stopped, the Lease never marked
		if m := s.LockKeptMessage(); !strings.Contains(m, "is kept, no longer renewed: it blocks further upgrades and reads as held by a live console until it "+staleAt) {
			t.Errorf("a lock no longer renewed, never marked:\n%s", m)
		}
		if err := s.Detach(context.Background()); err == nil {
			t.Fatal("the release succeeded against an unreachable API server")
		}
		m := s.LockKeptMessage()
		if !strings.Contains(m, "could NOT be released (read upgrade lock Lease eksa-system/upgrade-console-mgmt: connection refused)") ||
			!strings.Contains(m, staleAt) || strings.Contains(m, " is kept") {
			t.Errorf("after a release that failed:\n%s", m)
		}
		if m := s.LockReleasedMessage(nil); !strings.Contains(m, "could NOT be released (read upgrade lock") || !strings.Contains(m, staleAt) {
			t.Errorf("released message after a release that failed:\n%s", m)
		}
	})
	t.Run("marked", func(t *testing.T) {
		s := session(fake.NewClientset(&coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: "eksa-system", Name: LockName("mgmt")},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder.String())},
		}))
		if err := s.Finish(context.Background(), Outcome{Failed: true, Reason: "boom"}); err != nil {
			t.Fatal(err)
		}
		if m := s.LockKeptMessage(); !strings.Contains(m, "upgrade-console-mgmt is kept: it blocks further upgrades until the cluster is checked and the lock cleared with `upgrade-console lock clear lease --cluster mgmt`") {
			t.Errorf("a lock marked kept:\n%s", m)
		}
	})
}

// A Lease cleared by another console between the release's read and its
// delete is lost, not released: "deleted the Lease" was recorded of a
// delete the API server answered NotFound.
func TestReleaseRacedByAClearRecordsNoRelease(t *testing.T) {
	holder := Holder{User: "a", Host: "h", Instance: "1"}
	kube := fake.NewClientset(&coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: LockName("mgmt"), Namespace: "eksa-system", UID: "u1", ResourceVersion: "7"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder.String())},
	})
	kube.PrependReactor("delete", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(coordinationv1.Resource("leases"), LockName("mgmt"))
	})
	audit := &memAudit{}
	locker := &Locker{Kube: kube, Namespace: "eksa-system", Cluster: "mgmt", Holder: holder, Audit: audit}
	if err := locker.Release(context.Background()); !errors.Is(err, ErrLockLost) {
		t.Fatalf("release raced by a clear: %v, want ErrLockLost", err)
	}
	if got := strings.Join(audit.actions(), " "); strings.Contains(got, "lock-release") {
		t.Errorf("a release recorded of a Lease someone else deleted: %s", got)
	}
}

// Two consoles take over the same stale Lease: the one whose conditional
// delete finds it changed (the other took it first) reads it again and is
// refused as under a live lock (exit 3), not failed ("resumable", exit 4).
func TestTakeOverRacedByAnotherConsoleIsRefused(t *testing.T) {
	now := time.Now()
	stale := staleLease(now)
	kube := fake.NewClientset(stale)
	kube.PrependReactor("delete", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		// Carol took it over first: her Lease, live, in its place.
		carol := stale.DeepCopy()
		carol.UID, carol.ResourceVersion = "u2", "9"
		carol.Spec.HolderIdentity = ptr.To("carol@desk/3")
		carol.Spec.RenewTime = &metav1.MicroTime{Time: now}
		if err := kube.Tracker().Update(coordinationv1.SchemeGroupVersion.WithResource("leases"), carol, "eksa-system"); err != nil {
			t.Error(err)
		}
		return true, nil, apierrors.NewConflict(coordinationv1.Resource("leases"), LockName("mgmt"), errors.New("the UID in the precondition does not match"))
	})
	audit := &memAudit{}
	locker := &Locker{Kube: kube, Namespace: "eksa-system", Cluster: "mgmt", Holder: Holder{User: "bob", Host: "laptop", Instance: "2"}, Audit: audit}
	h, err := locker.TakeOver(context.Background(), clocktesting.NewFakeClock(now))
	var held *LockHeldError
	if h != nil || !errors.As(err, &held) || held.Stale || held.Status.HolderIdentity != "carol@desk/3" {
		t.Fatalf("takeover raced by carol: %v, %v; want carol's live lock refused", h, err)
	}
	if got := strings.Join(audit.actions(), " "); got != "lock-takeover:failed" || !strings.Contains(audit.entries[0].Message, "changed since it was read") {
		t.Errorf("audit = %s %q", got, audit.entries[0].Message)
	}
}

// A renewal that failed (the API server gone) is tried again as soon as the
// server answers a read, not at the next tick a third of the Lease away: a
// lock that expired during the outage stayed clearable as a dead console's
// for up to 20 s with the server back.
func TestFailedRenewalIsRetriedOnceTheServerAnswers(t *testing.T) {
	var down atomic.Bool
	var probes atomic.Int32
	kube := fake.NewClientset()
	kube.PrependReactor("*", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if down.Load() {
			if a.GetVerb() == "get" {
				probes.Add(1)
			}
			return true, nil, errors.New("connection refused")
		}
		return false, nil, nil
	})
	fc := clocktesting.NewFakeClock(time.Now())
	audit := &memAudit{}
	locker := &Locker{Kube: kube, Namespace: "eksa-system", Cluster: "mgmt", Holder: Holder{User: "a", Host: "h", Instance: "1"},
		Duration: time.Minute, Clock: fc, Audit: audit}
	h, err := locker.Hold(context.Background(), fc)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Stop()
	every := locker.duration() / 3
	waitFor := func(what string, ok func(error) bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if _, rerr, _ := h.State(); ok(rerr) {
				return
			}
		}
		t.Fatalf("%s: never", what)
	}
	for !fc.HasWaiters() { // the renewing goroutine's ticker
		time.Sleep(time.Millisecond)
	}
	down.Store(true)
	fc.Step(every)
	waitFor("the renewal failed", func(err error) bool { return err != nil })
	before := probes.Load()
	fc.Step(retryEvery(every)) // the server still gone: probed, nothing recorded
	for deadline := time.Now().Add(5 * time.Second); probes.Load() == before && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	// The probe's timer armed again, beside the ticker: stepped before,
	// the clock would pass a timer not yet made.
	for deadline := time.Now().Add(5 * time.Second); fc.Waiters() < 2 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	failed := len(audit.actions())
	down.Store(false)
	fc.Step(retryEvery(every))
	waitFor("renewed once the server answers", func(err error) bool { return err == nil })
	if got := audit.actions(); len(got) != failed+1 || got[len(got)-1] != "lock-renew:ok" {
		t.Errorf("audit = %v, want one renewal recorded after the failure", got)
	}
}

// A renewal the API server answers with a refusal (its etcd out of space, a
// webhook) is tried at the next tick, not probed every 2 s: each try is a
// record and a write against a server already struggling.
func TestRenewalRefusedByTheServerWaitsForTheNextTick(t *testing.T) {
	var full atomic.Bool
	var updates atomic.Int32
	_, fc, every := heldOnFake(t, func(k8stesting.Action) (bool, runtime.Object, error) {
		if full.Load() {
			updates.Add(1)
			return true, nil, apierrors.NewInternalError(errors.New("etcdserver: mvcc: database space exceeded"))
		}
		return false, nil, nil
	})
	full.Store(true)
	fc.Step(every)
	for deadline := time.Now().Add(5 * time.Second); updates.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	for range 5 {
		fc.Step(retryEvery(every))
		time.Sleep(10 * time.Millisecond)
	}
	if n := updates.Load(); n != 1 {
		t.Errorf("%d renewals tried within one period of a refusal, want 1", n)
	}
}

// A stale Lease another console cleared between the takeover's read and its
// delete: the takeover records that it was gone, not that it deleted it,
// and takes the lock.
func TestTakeOverOfALeaseClearedMeanwhileRecordsNoDelete(t *testing.T) {
	now := time.Now()
	kube := fake.NewClientset(&coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: LockName("mgmt"), Namespace: "eksa-system", UID: "u1", ResourceVersion: "7"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("dead@vm/1"), LeaseDurationSeconds: ptr.To[int32](60),
			RenewTime: &metav1.MicroTime{Time: now.Add(-5 * time.Minute)}},
	})
	kube.PrependReactor("delete", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		if err := kube.Tracker().Delete(coordinationv1.SchemeGroupVersion.WithResource("leases"), "eksa-system", LockName("mgmt")); err != nil {
			t.Error(err)
		}
		return true, nil, apierrors.NewNotFound(coordinationv1.Resource("leases"), LockName("mgmt"))
	})
	audit := &memAudit{}
	locker := &Locker{Kube: kube, Namespace: "eksa-system", Cluster: "mgmt", Holder: Holder{User: "bob", Host: "laptop", Instance: "2"}, Audit: audit}
	h, err := locker.TakeOver(context.Background(), clocktesting.NewFakeClock(now))
	if err != nil || h == nil {
		t.Fatalf("takeover of a Lease gone meanwhile: %v", err)
	}
	defer h.Stop()
	if e := audit.entries[0]; e.Action != "lock-takeover" || e.Result != AuditOK || !strings.Contains(e.Message, "was gone already") {
		t.Errorf("takeover entry %+v", e)
	}
}

// refusingAudit is an audit log that refuses every entry (a full disk).
type refusingAudit struct{ memAudit }

func (r *refusingAudit) Refusing() bool { return true }

func (r *refusingAudit) Record(ctx context.Context, e AuditEntry) error {
	_ = r.memAudit.Record(ctx, e)
	return &AuditWriteError{Path: "audit.log", Err: errors.New("no space left on device")}
}

// A takeover while the audit log refuses entries is announced first, and the
// stale Lease is not deleted when the announcement is refused too, as for
// the lock's other writes: it deleted another console's Lease and held its
// record in memory.
func TestTakeOverWhileTheAuditLogRefusesDeletesNothing(t *testing.T) {
	now := time.Now()
	stale := staleLease(now)
	kube := fake.NewClientset(stale)
	var deletes atomic.Int32
	kube.PrependReactor("delete", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		deletes.Add(1)
		return false, nil, nil
	})
	audit := &refusingAudit{}
	locker := &Locker{Kube: kube, Namespace: "eksa-system", Cluster: "mgmt", Holder: Holder{User: "bob", Host: "laptop", Instance: "2"}, Audit: audit}
	h, err := locker.TakeOver(context.Background(), clocktesting.NewFakeClock(now))
	var aw *AuditWriteError
	if h != nil || !errors.As(err, &aw) {
		t.Fatalf("takeover under a refusing log: %v, %v; want its AuditWriteError", h, err)
	}
	if n := deletes.Load(); n != 0 {
		t.Errorf("the Lease was deleted %d time(s) while the log refused", n)
	}
	if got := strings.Join(audit.actions(), " "); got != "lock-takeover:announced" {
		t.Errorf("audit = %s, want the takeover's announcement alone", got)
	}
}

// staleLease is mgmt's lock Lease of a console that died 5 minutes before
// now (its lease lasts a minute).
func staleLease(now time.Time) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: LockName("mgmt"), Namespace: "eksa-system", UID: "u1", ResourceVersion: "7"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("dead@vm/1"), LeaseDurationSeconds: ptr.To[int32](60),
			RenewTime: &metav1.MicroTime{Time: now.Add(-5 * time.Minute)}},
	}
}

// Back from ctrl+z (fg), the ticker has a tick due and the console asks a
// renewal at once (RenewOnResume): the Lease is renewed once, whichever of the
// two the renewing goroutine takes first, where each renewed, one after the
// other, with an audit entry each (R19 #6). The ticker goes on: the next
// period renews again.
func TestResumeRenewsTheLockOnce(t *testing.T) {
	h, fc, updates, every := countedHold(t)
	fc.Step(5 * every) // stopped for five periods: a tick is due at fg
	h.RenewOnResume(context.Background())
	// The due tick may be taken after the request's renewal: it is given
	// the time it takes to renew, as the other tests here do.
	for deadline := time.Now().Add(200 * time.Millisecond); updates.Load() < 2 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if _, rerr, _ := h.State(); rerr != nil {
		t.Fatalf("renewal failed: %v", rerr)
	}
	if n := updates.Load(); n != 1 {
		t.Fatalf("%d renewals on resume, want 1", n)
	}
	fc.Step(every)
	for deadline := time.Now().Add(5 * time.Second); updates.Load() < 2 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if n := updates.Load(); n != 2 {
		t.Errorf("%d renewals after the next period, want 2: the ticker no longer renews", n)
	}
}

// The ticker starts again after a renewal: back from a stop of five and a
// half periods, the renewal at fg is the only one until a period later,
// where the ticker, kept on its old phase, renewed again half a period
// after fg (two audit entries seconds apart, D6).
func TestResumeRenewsOncePerPeriod(t *testing.T) {
	h, fc, updates, every := countedHold(t)
	// settle waits for want renewals (a renewal to the fake API server
	// takes milliseconds), then gives one it should not make the time to.
	settle := func(want int32) int32 {
		for deadline := time.Now().Add(5 * time.Second); updates.Load() < want && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond)
		return updates.Load()
	}
	fc.Step(5*every + every/2)
	h.RenewOnResume(context.Background())
	if n := settle(1); n != 1 {
		t.Fatalf("%d renewals at fg, want 1", n)
	}
	fc.Step(every / 2)
	if n := settle(1); n != 1 {
		t.Fatalf("%d renewals half a period after fg, want 1 (the one at fg)", n)
	}
	fc.Step(every / 2)
	if n := settle(2); n != 2 {
		t.Errorf("%d renewals a period after fg, want 2", n)
	}
}

// countedHold is a lock held on a fake API server that counts its
// renewals, with its renewal period, on a fake clock.
func countedHold(t *testing.T) (*Hold, *clocktesting.FakeClock, *atomic.Int32, time.Duration) {
	t.Helper()
	updates := &atomic.Int32{}
	h, fc, every := heldOnFake(t, func(k8stesting.Action) (bool, runtime.Object, error) {
		updates.Add(1)
		return false, nil, nil
	})
	return h, fc, updates, every
}

// heldOnFake is a lock held on a fake API server whose Lease updates go
// through onUpdate first, with its renewal period, on a fake clock.
func heldOnFake(t *testing.T, onUpdate k8stesting.ReactionFunc) (*Hold, *clocktesting.FakeClock, time.Duration) {
	t.Helper()
	kube := fake.NewClientset()
	kube.PrependReactor("update", "leases", onUpdate)
	fc := clocktesting.NewFakeClock(time.Now())
	locker := &Locker{Kube: kube, Namespace: "eksa-system", Cluster: "mgmt", Holder: Holder{User: "a", Host: "h", Instance: "1"},
		Duration: time.Minute, Clock: fc, Audit: &memAudit{}}
	h, err := locker.Hold(context.Background(), fc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Stop)
	for !fc.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	return h, fc, locker.duration() / 3
}

// Renewals begin a period apart however long each takes: to a slow server
// (9 s a write) that refuses them, the attempts after one at 20 s began at
// 49 and 78 s once the next was timed from a renewal's end (D8), and the
// Lease renewed at 20 s expired at 80 s before the third landed.
func TestRenewalsBeginAPeriodApartWhenTheServerIsSlow(t *testing.T) {
	var mu sync.Mutex
	var began []time.Duration
	var fc *clocktesting.FakeClock
	var start time.Time
	ready := make(chan struct{})
	_, fc, every := heldOnFake(t, func(k8stesting.Action) (bool, runtime.Object, error) {
		<-ready
		mu.Lock()
		began = append(began, fc.Since(start))
		n := len(began)
		mu.Unlock()
		fc.Step(9 * time.Second) // the write takes 9 s
		if n == 1 {
			return false, nil, nil
		}
		return true, nil, apierrors.NewInternalError(errors.New("etcdserver: mvcc: database space exceeded"))
	})
	start = fc.Now()
	close(ready)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		mu.Lock()
		n := len(began)
		mu.Unlock()
		if n >= 3 || fc.Since(start) > 4*every {
			break
		}
		fc.Step(time.Second)
		time.Sleep(2 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(began) < 3 || began[0] != every || began[1] != 2*every || began[2] != 3*every {
		t.Errorf("renewal attempts began at %v, want %v, %v and %v", began, every, 2*every, 3*every)
	}
}
