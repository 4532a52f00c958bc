package upgrade

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/model"
)

// A holder whose clock runs ten minutes behind writes a renewTime ten
// minutes old: by this machine's clock its lock read as stale while it
// renewed, and another console was told to clear it (and could take it
// over). The API server wrote the Lease just now: it is live.
func TestLockOfAHolderWhoseClockIsBehindIsLiveByTheServersClock(t *testing.T) {
	c := newTestClient(t)
	cluster := uniqueCluster(t)
	ctx := context.Background()
	behind := clocktesting.NewFakePassiveClock(time.Now().Add(-10 * time.Minute))
	holder := Holder{User: "alice", Host: "laptop", Instance: "aaaa1111"}
	if _, err := newLocker(t, c, cluster, holder, behind, &memAudit{}).Acquire(ctx); err != nil {
		t.Fatal(err)
	}

	now := time.Now()
	st, err := ReadLock(ctx, c.Kube, "eksa-system", cluster)
	if err != nil {
		t.Fatal(err)
	}
	if st.Expired(now) {
		t.Fatalf("a lock written just now reads as stale: %s", st.Describe(now))
	}
	d := st.Describe(now)
	for _, want := range []string{"by the API server's clock", "its console's clock runs about 10m0s behind the API server's"} {
		if !strings.Contains(d, want) {
			t.Errorf("lock status says %q, want it to say %q", d, want)
		}
	}

	other := newLocker(t, c, cluster, Holder{User: "bob", Host: "desk", Instance: "bbbb2222"}, nil, &memAudit{})
	_, err = other.Acquire(ctx)
	var held *LockHeldError
	if !errors.As(err, &held) {
		t.Fatalf("another console's Acquire: %v, want a *LockHeldError", err)
	}
	if held.Stale {
		t.Errorf("another console was told the live lock is stale: %v", err)
	}
}

// A renewTime an hour ahead, on a Lease the console last wrote ten minutes
// ago by the API server's clock: a console that died with its clock ahead
// (or a hand-edited renewTime) held the lock for an hour by this machine's
// clock. By the server's it is stale.
func TestLockNotWrittenForLongerThanItsDurationIsStaleWhateverItsRenewTime(t *testing.T) {
	c := newTestClient(t)
	cluster := uniqueCluster(t)
	ctx := context.Background()
	holder := Holder{User: "alice", Host: "laptop", Instance: "aaaa1111"}
	ahead := clocktesting.NewFakePassiveClock(time.Now().Add(time.Hour))
	if _, err := newLocker(t, c, cluster, holder, ahead, &memAudit{}).Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	cptest.AgeLeaseWrite(t, c.Kube, "eksa-system", LockName(cluster), ManagerName, 10*time.Minute)

	now := time.Now()
	st, err := ReadLock(ctx, c.Kube, "eksa-system", cluster)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Expired(now) {
		t.Fatalf("a lock last written ten minutes ago reads as live: %s", st.Describe(now))
	}
	if d := st.Describe(now); !strings.Contains(d, "stale: not renewed for 10m") || !strings.Contains(d, "by the API server's clock") ||
		!strings.Contains(d, "ahead of the API server's") {
		t.Errorf("lock status says %q", d)
	}
	_, err = newLocker(t, c, cluster, Holder{User: "bob", Host: "desk", Instance: "bbbb2222"}, nil, &memAudit{}).Acquire(ctx)
	var held *LockHeldError
	if !errors.As(err, &held) || !held.Stale {
		t.Errorf("another console's Acquire: %v, want a stale *LockHeldError", err)
	}

	// A renewal is a write the API server times anew: the lock is live.
	// (A renewal that changed nothing, on a clock that stood still, is
	// not a write.)
	ahead.SetTime(ahead.Now().Add(20 * time.Second))
	if _, err := newLocker(t, c, cluster, holder, ahead, &memAudit{}).Renew(ctx); err != nil {
		t.Fatal(err)
	}
	now = time.Now()
	if st, err = ReadLock(ctx, c.Kube, "eksa-system", cluster); err != nil {
		t.Fatal(err)
	}
	// The write's time and the Date are each to the second: a second
	// boundary between the two reads as 1s.
	if st.Expired(now) || !renewedJustNow.MatchString(st.Describe(now)) {
		t.Errorf("renewed just now, the lock says %s", st.Describe(now))
	}
}

// renewedJustNow is a renewal a moment ago by the API server's clock.
var renewedJustNow = regexp.MustCompile(`renewed [01]s ago by the API server's clock`)

// A Lease renewed by hand (kubectl patch of renewTime) from a laptop whose
// clock runs ten minutes behind: its renewTime is ten minutes old, and
// `lock clear` judged it by that alone, calling the lease stale a moment
// after it was renewed. The API server timed kubectl's write: it is live,
// and the line names who wrote it.
func TestLockRenewedByAnotherManagerIsJudgedByTheServersClock(t *testing.T) {
	c := newTestClient(t)
	cluster := uniqueCluster(t)
	ctx := context.Background()
	holder := Holder{User: "alice", Host: "laptop", Instance: "aaaa1111"}
	if _, err := newLocker(t, c, cluster, holder, nil, &memAudit{}).Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	cptest.AgeLeaseWrite(t, c.Kube, "eksa-system", LockName(cluster), ManagerName, 10*time.Minute)
	behind := time.Now().Add(-10 * time.Minute).UTC().Format("2006-01-02T15:04:05.000000Z07:00")
	if _, err := c.Kube.CoordinationV1().Leases("eksa-system").Patch(ctx, LockName(cluster), types.MergePatchType,
		[]byte(`{"spec":{"renewTime":"`+behind+`"}}`), metav1.PatchOptions{FieldManager: "kubectl-patch"}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	st, err := ReadLock(ctx, c.Kube, "eksa-system", cluster)
	if err != nil {
		t.Fatal(err)
	}
	if st.Expired(now) {
		t.Fatalf("a lock renewed by kubectl a moment ago reads as stale: %s", st.Describe(now))
	}
	d := st.Describe(now)
	if !renewedJustNow.MatchString(d) || !strings.Contains(d, "by the API server's clock (written last by kubectl-patch, not by a console)") {
		t.Errorf("lock status says %q", d)
	}
	// Its renewTime was typed: it tells nothing of a console's clock.
	if strings.Contains(d, "clock runs about") {
		t.Errorf("lock status says %q", d)
	}
	if !st.Expired(now.Add(st.Duration + 5*time.Second)) {
		t.Errorf("not renewed since kubectl's write for its duration, the lock is live: %s", st.Describe(now.Add(st.Duration+5*time.Second)))
	}
}

// Without the API server's Date (a client without the wrapper, a response
// without one) the lock is judged as before, by this machine's clock, and
// says so.
func TestLockWithoutTheServersDateIsJudgedByThisMachinesClock(t *testing.T) {
	c := newTestClient(t)
	cluster := uniqueCluster(t)
	ctx := context.Background()
	behind := clocktesting.NewFakePassiveClock(time.Now().Add(-10 * time.Minute))
	if _, err := newLocker(t, c, cluster, Holder{User: "alice", Host: "laptop"}, behind, &memAudit{}).Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := ReadLock(ctx, c.Kube, "eksa-system", cluster)
	if err != nil {
		t.Fatal(err)
	}
	st.ServerDate, st.Received = time.Time{}, time.Time{}
	now := time.Now()
	if !st.Expired(now) {
		t.Fatalf("judged without the server's time, a renewTime ten minutes old reads as live: %s", st.Describe(now))
	}
	if d := st.Describe(now); !strings.Contains(d, "stale: its renewTime is 10m") || !strings.Contains(d, "old by this machine's clock") {
		t.Errorf("lock status says %q", d)
	}
}

// A snapshot's lock carries the API server's clock when the watchers saw
// it: its status (the recovery offers' "stale upgrade lock" line, from
// LockStatusOf) is judged and worded by that clock, not by the holder's
// renewTime 3 minutes behind, and when it turns stale is said on this
// machine's clock.
func TestLockStatusOfASnapshotsLockIsJudgedByTheServersClock(t *testing.T) {
	seen := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	server := seen.Add(7 * time.Second) // the API server's clock, 7s ahead of this machine's
	l := model.Lock{HolderIdentity: "bob@laptop/1", AcquireTime: seen.Add(-time.Hour), RenewTime: seen.Add(-3*time.Minute - 5*time.Second),
		Duration: time.Minute, Written: server.Add(-5 * time.Second), Seen: seen, ServerAtSeen: server}
	st := LockStatusOf(l)
	now := seen.Add(10 * time.Second)
	if st.Expired(now) {
		t.Errorf("a lock written 15s ago by the API server's clock is stale: %s", st.Describe(now))
	}
	if d := st.Describe(now); !strings.Contains(d, "renewed 15s ago by the API server's clock") {
		t.Errorf("lock status says %q", d)
	}
	if got, want := st.ExpiresHere(now), seen.Add(55*time.Second); !got.Equal(want) {
		t.Errorf("ExpiresHere = %s, want %s (a minute after the write, on this machine's clock)", got, want)
	}
	if !st.Expired(seen.Add(time.Minute)) {
		t.Errorf("a lock written 65s ago by the API server's clock is live: %s", st.Describe(seen.Add(time.Minute)))
	}
}
