package model

import (
	"strings"
	"testing"
	"time"
	"unicode"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestLockHeldAndExpired(t *testing.T) {
	acquired := t0.Add(-10 * time.Minute)
	renewed := t0.Add(-30 * time.Second)
	tests := []struct {
		name         string
		lock         *Lock
		now          time.Time
		held, expire bool
	}{
		{"no lease", nil, t0, false, false},
		{"released", &Lock{AcquireTime: acquired, RenewTime: acquired, Duration: time.Minute}, t0, false, false},
		{"renewed within the duration", &Lock{HolderIdentity: "a@b/1", AcquireTime: acquired, RenewTime: renewed, Duration: time.Minute}, t0, true, false},
		// The boundary itself still holds: expiry is strictly after.
		{"at the end of the duration", &Lock{HolderIdentity: "a@b/1", AcquireTime: acquired, RenewTime: renewed, Duration: 30 * time.Second}, t0, true, false},
		{"past the end of the duration", &Lock{HolderIdentity: "a@b/1", AcquireTime: acquired, RenewTime: renewed, Duration: 30 * time.Second}, t0.Add(time.Nanosecond), true, true},
		// Never renewed: the acquire time counts.
		{"never renewed, fresh", &Lock{HolderIdentity: "a@b/1", AcquireTime: t0.Add(-10 * time.Second), Duration: time.Minute}, t0, true, false},
		{"never renewed, stale", &Lock{HolderIdentity: "a@b/1", AcquireTime: acquired, Duration: time.Minute}, t0, true, true},
		{"no duration", &Lock{HolderIdentity: "a@b/1", AcquireTime: acquired, RenewTime: renewed}, t0, true, true},
		// Kept by an upgrade that failed: nobody renews it from that moment,
		// though its lease has not run out.
		{"kept, within the duration", &Lock{HolderIdentity: "a@b/1", AcquireTime: acquired, RenewTime: renewed, Duration: time.Minute, Kept: "upgrade failed: x"}, t0, true, true},
		{"kept, released", &Lock{AcquireTime: acquired, Duration: time.Minute, Kept: "upgrade failed: x"}, t0, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.lock.Held(); got != tt.held {
				t.Errorf("Held() = %v, want %v", got, tt.held)
			}
			if got := tt.lock.Expired(tt.now); got != tt.expire {
				t.Errorf("Expired() = %v, want %v", got, tt.expire)
			}
		})
	}
}

func TestLockLastRenewedAndExpiresAt(t *testing.T) {
	l := &Lock{HolderIdentity: "a@b", AcquireTime: t0, Duration: time.Minute}
	if !l.LastRenewed().Equal(t0) || !l.ExpiresAt().Equal(t0.Add(time.Minute)) {
		t.Errorf("never renewed: last %v, expires %v", l.LastRenewed(), l.ExpiresAt())
	}
	l.RenewTime = t0.Add(time.Hour)
	if !l.LastRenewed().Equal(l.RenewTime) || !l.ExpiresAt().Equal(t0.Add(61*time.Minute)) {
		t.Errorf("renewed: last %v, expires %v", l.LastRenewed(), l.ExpiresAt())
	}
}

func TestLockName(t *testing.T) {
	if got := LockName("mgmt"); got != "upgrade-console-mgmt" {
		t.Errorf("LockName = %q", got)
	}
}

func TestLockOfLease(t *testing.T) {
	acquired := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "eksa-system", Name: LockName("mgmt")},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("ops@bastion-1/5d0c9e1a"), LeaseDurationSeconds: ptr.To(int32(60)),
			AcquireTime: &metav1.MicroTime{Time: acquired}},
	}
	got := LockOf(lease)
	want := Lock{Namespace: "eksa-system", Name: "upgrade-console-mgmt", HolderIdentity: "ops@bastion-1/5d0c9e1a",
		AcquireTime: acquired, Duration: time.Minute}
	if got != want {
		t.Errorf("never renewed: %+v, want %+v", got, want)
	}
	lease.Spec.RenewTime = &metav1.MicroTime{Time: acquired.Add(time.Hour)}
	if got := LockOf(lease); !got.RenewTime.Equal(acquired.Add(time.Hour)) || !got.ExpiresAt().Equal(acquired.Add(time.Hour+time.Minute)) {
		t.Errorf("renewed: %+v", got)
	}
	lease.Annotations = map[string]string{AnnotationLockKept: "upgrade timed out"}
	if got := LockOf(lease); got.Kept != "upgrade timed out" || !got.Expired(acquired.Add(time.Hour)) {
		t.Errorf("kept: %+v", got)
	}
	if got := LockOf(&coordinationv1.Lease{}); got.Held() || got.Duration != 0 {
		t.Errorf("released lease: %+v", got)
	}
	// Released by hand, the holder emptied and its annotation left: the
	// identity went with the holder.
	released := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AnnotationLockAuthenticatedAs: "alice"}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("")}}
	if got := LockOf(released); got.AuthenticatedAs != "" {
		t.Errorf("released lease names who held it: authenticated as %q", got.AuthenticatedAs)
	}
}

// The Lease's annotations are printed to terminals (lock status, watch
// --plain, the plan's upgrade-lock check): an escape sequence in them, which
// anyone who may update the Lease can write, must not reach the terminal.
func TestLockOfEscapesControlCharacters(t *testing.T) {
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "eksa-system", Name: LockName("mgmt"), Annotations: map[string]string{
			AnnotationLockAuthenticatedAs: "carol\r\x1b[2Klease (not set): no holder\x1b[8m",
			AnnotationLockKept:            "\x1b[8m",
		}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("ops@bastion-1/5d0c9e1a")},
	}
	got := LockOf(lease)
	for name, s := range map[string]string{"authenticated as": got.AuthenticatedAs, "kept": got.Kept} {
		if strings.ContainsFunc(s, unicode.IsControl) {
			t.Errorf("%s %q carries control characters", name, s)
		}
	}
	if got.AuthenticatedAs != `carol\r\x1b[2Klease (not set): no holder\x1b[8m` {
		t.Errorf("authenticated as %q, want the control characters escaped, the rest as written", got.AuthenticatedAs)
	}
	if got.Kept == "" {
		t.Error("a kept mark of control characters alone no longer reads as kept")
	}
	lease.Annotations[AnnotationLockAuthenticatedAs] = "system:serviceaccount:ops:alice"
	if got := LockOf(lease); got.AuthenticatedAs != "system:serviceaccount:ops:alice" {
		t.Errorf("plain identity changed: %q", got.AuthenticatedAs)
	}
}
