package upgrade

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"

	"github.com/upgrade-console/upgrade-console/model"
)

// brokenKube panics on any call, as a bug in the renewal would.
type brokenKube struct{ kubernetes.Interface }

// A panic while renewing the lock stops the renewal and is reported by the
// holder, instead of killing the console in the middle of an upgrade.
func TestRenewContainsAPanic(t *testing.T) {
	h := &Hold{locker: &Locker{Kube: brokenKube{}, Namespace: "eksa-system", Cluster: "mgmt"}, clk: clock.RealClock{}}
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
	if last := audit.entries[len(audit.entries)-1]; !strings.Contains(last.Message, "NOT released") {
		t.Errorf("the detach entry says %q", last.Message)
	}
}
