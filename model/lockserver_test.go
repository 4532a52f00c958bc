package model

import (
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestLockExpiredByServerIsNeverEarlierThanTheDuration(t *testing.T) {
	written := t0.Add(-time.Minute)
	// The holder's renewTime says an hour ago and an hour ahead: neither
	// counts where the server's times are known.
	for _, renew := range []time.Time{t0.Add(-time.Hour), t0.Add(time.Hour)} {
		l := &Lock{HolderIdentity: "a@b/1", AcquireTime: renew, RenewTime: renew, Duration: time.Minute, Written: written}
		tests := []struct {
			name               string
			now                time.Time
			expired, judgeable bool
		}{
			// Both times are truncated to the second: a write stamped
			// a minute and two seconds ago may be a minute and one old.
			{"at the duration", t0, false, true},
			{"within the slack", t0.Add(2 * time.Second), false, true},
			{"past the slack", t0.Add(2*time.Second + time.Nanosecond), true, true},
			{"written long ago", t0.Add(time.Hour), true, true},
			{"no server time", time.Time{}, false, false},
			// A now before the write is not the clock that wrote it.
			{"now before the write", written.Add(-3 * time.Second), false, false},
			{"now within a truncation of the write", written.Add(-time.Second), false, true},
		}
		for _, tt := range tests {
			expired, ok := l.ExpiredByServer(tt.now)
			if expired != tt.expired || ok != tt.judgeable {
				t.Errorf("renewTime %s, %s: ExpiredByServer = %v, %v; want %v, %v", renew.Sub(t0), tt.name, expired, ok, tt.expired, tt.judgeable)
			}
		}
	}
	unknown := &Lock{HolderIdentity: "a@b/1", RenewTime: t0, Duration: time.Minute}
	if _, ok := unknown.ExpiredByServer(t0); ok {
		t.Error("a lock with no server write time was judged by the server's clock")
	}
	kept := &Lock{HolderIdentity: "a@b/1", RenewTime: t0, Duration: time.Minute, Written: t0, Kept: "upgrade failed"}
	if expired, ok := kept.ExpiredByServer(t0); !expired || !ok {
		t.Errorf("a kept lock: ExpiredByServer = %v, %v; want stale", expired, ok)
	}
	released := &Lock{RenewTime: t0, Duration: time.Minute, Written: t0.Add(-time.Hour)}
	if expired, _ := released.ExpiredByServer(t0); expired {
		t.Error("a released lease was called stale")
	}
}

func TestLockHolderClockOff(t *testing.T) {
	tests := []struct {
		name string
		lock Lock
		want time.Duration
	}{
		{"in step", Lock{RenewTime: t0.Add(1500 * time.Millisecond), Written: t0}, 0},
		{"within the noise", Lock{RenewTime: t0.Add(-5 * time.Second), Written: t0}, 0},
		{"behind", Lock{RenewTime: t0.Add(-10 * time.Minute), Written: t0}, -10 * time.Minute},
		{"ahead", Lock{RenewTime: t0.Add(time.Hour), Written: t0}, time.Hour},
		{"never renewed: the acquire time", Lock{AcquireTime: t0.Add(-time.Minute), Written: t0}, -time.Minute},
		{"no server time", Lock{RenewTime: t0.Add(-time.Hour)}, 0},
		// The kept mark is a write after the last renewal.
		{"kept", Lock{RenewTime: t0.Add(-time.Minute), Written: t0, Kept: "upgrade failed"}, 0},
	}
	for _, tt := range tests {
		if got := tt.lock.HolderClockOff(); got != tt.want {
			t.Errorf("%s: HolderClockOff = %s, want %s", tt.name, got, tt.want)
		}
	}
}

// The write time is that of the latest write that renewed or took the
// lease: the console's field manager's, the latest of its entries, or
// another manager's that owns a renewal field and wrote later.
func TestLockOfReadsTheRenewalsWriteTime(t *testing.T) {
	at := func(d time.Duration) *metav1.Time { return ptr.To(metav1.NewTime(t0.Add(d))) }
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{
		{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationUpdate, Time: at(-time.Minute)},
		{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, Time: at(-2 * time.Minute)},
		{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply, Time: at(-30 * time.Second)},
		{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationUpdate},
	}}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("a@b/1")}}
	want := func(what string, written time.Time, by string) {
		t.Helper()
		got := LockOf(l)
		if !got.Written.Equal(written) || got.WrittenBy != by {
			t.Errorf("%s: Written = %s by %q, want %s by %q", what, got.Written, got.WrittenBy, written, by)
		}
	}
	want("the console's writes", t0.Add(-30*time.Second), "")
	// The newest, wherever the API server lists it.
	rev := l.DeepCopy()
	slices.Reverse(rev.ManagedFields)
	if got := LockOf(rev).Written; !got.Equal(t0.Add(-30 * time.Second)) {
		t.Errorf("the newest entry listed first: Written = %s, want %s", got, t0.Add(-30*time.Second))
	}
	// Another manager's write of an annotation renews nothing.
	l.ManagedFields[1].Time = at(0)
	l.ManagedFields[1].FieldsV1 = metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:note":{}}}}`)
	want("an annotation written last by kubectl", t0.Add(-30*time.Second), "")
	// Renewed last by hand (kubectl patch of renewTime): the console's
	// older write called it stale while it was renewed a moment ago
	// (D12), and its renewTime is a laptop's clock; the API server
	// stamped that write as it stamps a console's.
	for _, field := range []string{"f:renewTime", "f:acquireTime", "f:holderIdentity"} {
		l.ManagedFields[1].FieldsV1 = metav1.NewFieldsV1(`{"f:spec":{"` + field + `":{}}}`)
		want("a Lease whose "+field+" kubectl wrote last", t0, "kubectl-edit")
	}
	// Renewed by kubectl before the console's last write: the console's.
	l.ManagedFields[1].Time = at(-time.Hour)
	want("kubectl's renewal before the console's", t0.Add(-30*time.Second), "")
	l.ManagedFields = l.ManagedFields[1:2]
	want("a Lease only kubectl wrote", t0.Add(-time.Hour), "kubectl-edit")
	l.ManagedFields[0].Time = nil
	want("a Lease with no write time", time.Time{}, "")
}

// A renewTime another manager wrote tells nothing of a console's clock.
func TestLockHolderClockOffOfAnotherWriter(t *testing.T) {
	l := Lock{RenewTime: t0.Add(-10 * time.Minute), Written: t0, WrittenBy: "kubectl-patch"}
	if got := l.HolderClockOff(); got != 0 {
		t.Errorf("HolderClockOff = %s, want 0", got)
	}
}
