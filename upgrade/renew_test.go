package upgrade

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/upgrade-console/upgrade-console/model"
)

// brokenKube panics on any call, as a bug in the renewal would.
type brokenKube struct{ kubernetes.Interface }

// A panic while renewing the lock stops the renewal and is reported by the
// session, instead of killing the console in the middle of an upgrade.
func TestRenewContainsAPanic(t *testing.T) {
	s := &Session{locker: &Locker{Kube: brokenKube{}, Namespace: "eksa-system", Cluster: "mgmt"}, clk: clock.RealClock{}}
	s.startRenew(time.Millisecond)
	select {
	case <-s.renewDone:
	case <-time.After(10 * time.Second):
		t.Fatal("the renewal did not stop after its panic")
	}
	_, renewErr, lost := s.Lock()
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
