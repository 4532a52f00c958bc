package upgrade

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/model"
)

func newLocker(t *testing.T, c *Client, cluster string, h Holder, clk clock.PassiveClock, a Recorder) *Locker {
	t.Helper()
	return &Locker{Kube: c.Kube, Cluster: cluster, Holder: h, Duration: time.Minute, Clock: clk, Audit: a}
}

// uniqueCluster gives every test its own lock name in the shared eksa-system.
func uniqueCluster(t *testing.T) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 40 {
		name = name[:40]
	}
	return strings.Trim(name, "-")
}

func TestLockRaceExactlyOneWins(t *testing.T) {
	c := newTestClient(t)
	cluster := uniqueCluster(t)
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 21, 22, 0, 0, 0, time.UTC))
	ctx := context.Background()

	const n = 2
	holders := []Holder{{User: "alice", Host: "laptop", Instance: "aaaa1111"}, {User: "bob", Host: "desk", Instance: "bbbb2222"}}
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			_, errs[i] = newLocker(t, c, cluster, holders[i], clk, &memAudit{}).Acquire(ctx)
		}(i)
	}
	close(start)
	wg.Wait()

	winners := 0
	var loserErr error
	var winner Holder
	for i, err := range errs {
		if err == nil {
			winners++
			winner = holders[i]
		} else {
			loserErr = err
		}
	}
	if winners != 1 {
		t.Fatalf("want exactly one winner, got %d (errors %v)", winners, errs)
	}
	var held *LockHeldError
	if !errors.As(loserErr, &held) {
		t.Fatalf("loser's error is %T %v, want *LockHeldError", loserErr, loserErr)
	}
	if held.Stale {
		t.Errorf("a fresh lock reported stale: %v", loserErr)
	}
	msg := loserErr.Error()
	for _, want := range []string{winner.Display(), "since 2026-11-21T22:00:00Z"} {
		if !strings.Contains(msg, want) {
			t.Errorf("loser's error %q does not name %q", msg, want)
		}
	}
}

func TestLockRaceOnReleasedLease(t *testing.T) {
	// Both consoles find a released lease (no holder) and race to update
	// it: the resourceVersion precondition lets one through.
	c := newTestClient(t)
	cluster := uniqueCluster(t)
	ctx := context.Background()
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 21, 22, 0, 0, 0, time.UTC))
	first := newLocker(t, c, cluster, Holder{User: "carol", Host: "h", Instance: "1"}, clk, &memAudit{})
	if _, err := first.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	// Release by clearing the holder, the way other lease users do.
	lease, err := c.Kube.CoordinationV1().Leases("eksa-system").Get(ctx, LockName(cluster), metavOpts())
	if err != nil {
		t.Fatal(err)
	}
	lease.Spec.HolderIdentity = nil
	if _, err := c.Kube.CoordinationV1().Leases("eksa-system").Update(ctx, lease, updateOpts()); err != nil {
		t.Fatal(err)
	}
	a := newLocker(t, c, cluster, Holder{User: "alice", Host: "a", Instance: "2"}, clk, &memAudit{})
	b := newLocker(t, c, cluster, Holder{User: "bob", Host: "b", Instance: "3"}, clk, &memAudit{})
	var wg sync.WaitGroup
	var errA, errB error
	wg.Add(2)
	go func() { defer wg.Done(); _, errA = a.Acquire(ctx) }()
	go func() { defer wg.Done(); _, errB = b.Acquire(ctx) }()
	wg.Wait()
	if (errA == nil) == (errB == nil) {
		t.Fatalf("want exactly one winner: alice %v, bob %v", errA, errB)
	}
	st, err := ReadLock(ctx, c.Kube, "eksa-system", cluster)
	if err != nil {
		t.Fatal(err)
	}
	want := a.Holder.String()
	if errA != nil {
		want = b.Holder.String()
	}
	if st.HolderIdentity != want {
		t.Errorf("lease holder %q, want the winner %q", st.HolderIdentity, want)
	}
	// A released lease taken over counts a transition; the holder taking
	// its own again does not.
	read := func() int32 {
		l, err := c.Kube.CoordinationV1().Leases("eksa-system").Get(ctx, LockName(cluster), metavOpts())
		if err != nil {
			t.Fatal(err)
		}
		return ptr.Deref(l.Spec.LeaseTransitions, 0)
	}
	n := read()
	if n < 1 {
		t.Errorf("leaseTransitions %d after the released lease was taken over, want at least 1", n)
	}
	winner := a
	if errA != nil {
		winner = b
	}
	if _, err := winner.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != n {
		t.Errorf("leaseTransitions %d → %d when the holder took its own lock again", n, got)
	}
}

func TestLockExpiredBlocksUntilCleared(t *testing.T) {
	c := newTestClient(t)
	cluster := uniqueCluster(t)
	ctx := context.Background()
	t0 := time.Date(2026, 11, 21, 22, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	audit := &memAudit{}
	old := newLocker(t, c, cluster, Holder{User: "alice", Host: "laptop", Instance: "dead"}, clk, audit)
	if _, err := old.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	// alice's console dies; two minutes later (lease: one minute) bob tries.
	// By the API server's clock, which judges it, alice last wrote then.
	clk.SetTime(t0.Add(2 * time.Minute))
	cptest.AgeLeaseWrite(t, c.Kube, "eksa-system", LockName(cluster), ManagerName, 2*time.Minute)
	bob := newLocker(t, c, cluster, Holder{User: "bob", Host: "desk", Instance: "b0b"}, clk, &memAudit{})
	// bob's console was given --context: the fix, pasted, clears this
	// cluster's lock.
	bob.Conn = model.ConnFlags{{Name: "context", Value: "prod"}}
	_, err := bob.Acquire(ctx)
	var held *LockHeldError
	if !errors.As(err, &held) || !held.Stale {
		t.Fatalf("want a stale-lock error, got %v", err)
	}
	if !strings.Contains(err.Error(), "`upgrade-console lock clear lease --cluster "+cluster+" --context prod`") {
		t.Errorf("stale-lock error does not say how to clear it: %v", err)
	}
	// The preflight check says the same.
	st, err := bob.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := checkLock(ctx, &Inputs{Now: clk.Now(), Lock: st, Self: bob.Holder})
	if !r.Blocking || !strings.Contains(r.Remediation, "upgrade-console lock clear lease") {
		t.Errorf("check on a stale lock: %+v", r)
	}
	// Renewing a lock that is not yours fails.
	if _, err := bob.Renew(ctx); !errors.Is(err, ErrLockLost) {
		t.Errorf("bob renewing alice's lock: %v, want ErrLockLost", err)
	}
	// Clearing it (the recovery action) lets bob in.
	if err := deleteLease(ctx, c.Kube, st); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Acquire(ctx); err != nil {
		t.Fatalf("after clearing: %v", err)
	}
	if got := strings.Join(audit.actions(), ","); got != "lock-acquire:ok" {
		t.Errorf("audit of alice's console: %s", got)
	}
}

func TestLockBreakRefusesARenewedLease(t *testing.T) {
	c := newTestClient(t)
	cluster := uniqueCluster(t)
	ctx := context.Background()
	t0 := time.Date(2026, 11, 21, 22, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	l := newLocker(t, c, cluster, Holder{User: "alice", Host: "laptop", Instance: "1"}, clk, &memAudit{})
	if _, err := l.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := l.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	clk.SetTime(t0.Add(10 * time.Second))
	if _, err := l.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	if err := deleteLease(ctx, c.Kube, st); err == nil {
		t.Fatal("breaking a lock read before its renewal succeeded; it must be refused")
	}
	if st2, _ := l.Status(ctx); !st2.Held() {
		t.Fatal("lock gone")
	}
}

func TestLockRenewAndRelease(t *testing.T) {
	c := newTestClient(t)
	cluster := uniqueCluster(t)
	ctx := context.Background()
	t0 := time.Date(2026, 11, 21, 22, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	audit := &memAudit{}
	l := newLocker(t, c, cluster, Holder{User: "alice", Host: "laptop", Instance: "1"}, clk, audit)
	if _, err := l.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	clk.SetTime(t0.Add(50 * time.Second))
	st, err := l.Renew(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !st.RenewTime.Equal(t0.Add(50*time.Second)) || !st.AcquireTime.Equal(t0) {
		t.Errorf("after renew: acquire %v renew %v", st.AcquireTime, st.RenewTime)
	}
	clk.SetTime(t0.Add(100 * time.Second))
	if st.Expired(clk.Now()) {
		t.Error("renewed lease expired 50s after renewal with a 60s duration")
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if st, err := l.Status(ctx); err != nil || st != nil {
		t.Fatalf("after release: %v %v", st, err)
	}
	if got := strings.Join(audit.actions(), ","); got != "lock-acquire:ok,lock-renew:ok,lock-release:ok" {
		t.Errorf("audit: %s", got)
	}
}

// A lock cleared by someone else (`lock clear lease`, this console's own R
// menu included) is not released by its holder: Release says it is lost,
// and the holder records no release. It returned nil, and the console said
// "released" and recorded "kept lock released" of a Lease it never deleted.
func TestReleaseOfALockClearedMeanwhile(t *testing.T) {
	c := newTestClient(t)
	cluster := uniqueCluster(t)
	ctx := context.Background()
	audit := &memAudit{}
	l := newLocker(t, c, cluster, Holder{User: "alice", Host: "laptop", Instance: "1"}, nil, audit)
	h, err := l.Hold(ctx, clocktesting.NewFakeClock(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Kube.CoordinationV1().Leases(l.ns()).Delete(ctx, LockName(cluster), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := h.Release(ctx); !errors.Is(err, ErrLockLost) {
		t.Fatalf("release of a cleared lock: %v, want ErrLockLost", err)
	}
	if _, _, lost := h.State(); !lost || h.Released() {
		t.Errorf("after the release: lost %t, released %t; want lost, not released", lost, h.Released())
	}
	if got := strings.Join(audit.actions(), ","); strings.Contains(got, "lock-release") {
		t.Errorf("a release recorded of a lock someone else cleared: %s", got)
	}
}

// A lock cleared and then taken by another console is not released by its
// former holder: Release says it is lost and Bob's Lease stays. Without the
// holder check, Alice quitting her console would delete the lock Bob's
// upgrade runs under, and a third console could start a second upgrade.
func TestReleaseOfALockTakenByAnotherConsole(t *testing.T) {
	c := newTestClient(t)
	cluster := uniqueCluster(t)
	ctx := context.Background()
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 21, 22, 0, 0, 0, time.UTC))
	audit := &memAudit{}
	bobHolder := Holder{User: "bob", Host: "desk", Instance: "bbbb2222"}
	alice := newLocker(t, c, cluster, Holder{User: "alice", Host: "laptop", Instance: "aaaa1111"}, clk, audit)
	bob := newLocker(t, c, cluster, bobHolder, clk, &memAudit{})
	if _, err := alice.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	// `lock clear lease` deletes Alice's lease; Bob then takes the lock.
	if err := c.Kube.CoordinationV1().Leases(alice.ns()).Delete(ctx, LockName(cluster), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Acquire(ctx); err != nil {
		t.Fatalf("bob acquires the cleared lock: %v", err)
	}
	// Keeping it marks nothing either: bob's live lock marked kept reads
	// as stale (Expired), and other consoles would clear it.
	if err := alice.Keep(ctx, "the upgrade failed"); !errors.Is(err, ErrLockLost) {
		t.Fatalf("alice keeps a lock bob holds: %v, want ErrLockLost", err)
	}
	if st, err := bob.Status(ctx); err != nil || st.Kept != "" {
		t.Fatalf("after alice's keep: %+v, %v; want bob's Lease unmarked", st, err)
	}
	if err := alice.Release(ctx); !errors.Is(err, ErrLockLost) {
		t.Fatalf("alice releases a lock bob holds: %v, want ErrLockLost", err)
	}
	st, err := bob.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Held() || st.HolderIdentity != bobHolder.String() {
		t.Fatalf("after alice's release: %+v, want the lease held by %s", st, bobHolder.String())
	}
	if got := strings.Join(audit.actions(), ","); strings.Contains(got, "lock-release") {
		t.Errorf("alice recorded a release of bob's lock: %s", got)
	}
}

// RenewNow renews at once, without waiting for the ticker (a console resumed
// after ctrl+z renewed nothing while it was stopped): a lock cleared
// meanwhile is found lost by the time it returns. Once the renewals have
// ended it returns at once.
func TestHoldRenewNow(t *testing.T) {
	c := newTestClient(t)
	cluster := uniqueCluster(t)
	ctx := context.Background()
	l := newLocker(t, c, cluster, Holder{User: "alice", Host: "laptop", Instance: "1"}, nil, &memAudit{})
	// A fake clock that never moves: no tick renews the lock.
	h, err := l.Hold(ctx, clocktesting.NewFakeClock(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	before, _, _ := h.State()
	h.RenewNow(ctx)
	st, renewErr, lost := h.State()
	if renewErr != nil || lost || st == nil || st == before {
		t.Fatalf("after RenewNow: status %+v (before %+v), err %v, lost %t; want a new renewal", st, before, renewErr, lost)
	}
	if err := c.Kube.CoordinationV1().Leases(l.ns()).Delete(ctx, LockName(cluster), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h.RenewNow(ctx)
	if _, renewErr, lost := h.State(); !lost || !errors.Is(renewErr, ErrLockLost) {
		t.Fatalf("after RenewNow of a cleared lock: err %v, lost %t; want it lost", renewErr, lost)
	}
	// The renewals ended with the loss: RenewNow does not wait for them.
	done := make(chan struct{})
	go func() { h.RenewNow(ctx); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("RenewNow waited on renewals that had ended")
	}
	var nilHold *Hold
	nilHold.RenewNow(ctx)
}

// An audit log that refuses an entry (a full disk) stops the lock's writes
// until it takes one again: a renewal made and not recorded makes the log
// refuse, and from then each write is announced first, and made only when
// the announcement is on disk. The renewals went on every few seconds
// unrecorded, and the release at exit with them.
func TestLockWritesStopWhileTheAuditLogRefuses(t *testing.T) {
	c := newTestClient(t)
	cluster := uniqueCluster(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.log")
	audit, err := NewAuditor(path)
	if err != nil {
		t.Fatal(err)
	}
	l := newLocker(t, c, cluster, Holder{User: "alice", Host: "laptop", Instance: "1"}, nil, audit)
	if _, err := l.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	// The log refuses: its file is a directory now.
	if err := os.Rename(path, path+".full"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	var aw *AuditWriteError
	if _, err := l.Renew(ctx); !errors.As(err, &aw) || !audit.Refusing() {
		t.Fatalf("renewal the log refused: %v, refusing %t", err, audit.Refusing())
	}
	before, err := l.Status(ctx)
	if err != nil || before == nil {
		t.Fatal(before, err)
	}
	if _, err := l.Renew(ctx); !errors.As(err, &aw) {
		t.Errorf("renewal while the log refuses: %v, want its AuditWriteError", err)
	}
	if err := l.Release(ctx); !errors.As(err, &aw) {
		t.Errorf("release while the log refuses: %v, want its AuditWriteError", err)
	}
	if after, err := l.Status(ctx); err != nil || after == nil || after.ResourceVersion != before.ResourceVersion {
		t.Fatalf("the Lease was written while the log refused: %+v → %+v (%v)", before, after, err)
	}

	// Space again: the release is announced, made and recorded.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".full", path); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if st, err := l.Status(ctx); err != nil || st != nil {
		t.Fatalf("after the release: %+v %v", st, err)
	}
	res, err := ReadAudit(path, AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	// The renewal the log refused, made before it was known to refuse,
	// is on record too: kept, and written late, marked so, before the
	// release's announcement.
	var got []string
	for _, e := range res.Entries {
		got = append(got, fmt.Sprintf("%s:%s:%t", e.Action, e.Result, e.Delayed))
	}
	if want := "lock-acquire:ok:false,lock-renew:ok:true,lock-release:announced:false,lock-release:ok:false"; strings.Join(got, ",") != want || audit.Refusing() {
		t.Errorf("audit log %q (refusing %t), want %q", got, audit.Refusing(), want)
	}
}
