package upgrade

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/utils/ptr"
)

// stoppedLeases is a clientset whose Lease writes land, and whose answers
// the process reads only past their deadline, as one stopped (SIGSTOP,
// ctrl+z) while the write was out and continued after the deadline does:
// the deadline's error, late, and a SIGCONT.
type stoppedLeases struct{ kubernetes.Interface }

func (s stoppedLeases) CoordinationV1() coordinationv1client.CoordinationV1Interface {
	return stoppedCoordination{s.Interface.CoordinationV1()}
}

type stoppedCoordination struct {
	coordinationv1client.CoordinationV1Interface
}

func (s stoppedCoordination) Leases(ns string) coordinationv1client.LeaseInterface {
	return stoppedLease{s.CoordinationV1Interface.Leases(ns)}
}

type stoppedLease struct {
	coordinationv1client.LeaseInterface
}

func (s stoppedLease) Update(ctx context.Context, l *coordinationv1.Lease, o metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	if _, err := s.LeaseInterface.Update(ctx, l, o); err != nil {
		return nil, err
	}
	return nil, readLate(ctx)
}

func (s stoppedLease) Delete(ctx context.Context, name string, o metav1.DeleteOptions) error {
	if err := s.LeaseInterface.Delete(ctx, name, o); err != nil {
		return err
	}
	return readLate(ctx)
}

func readLate(ctx context.Context) error {
	<-ctx.Done()
	time.Sleep(stoppedSlack + 2*time.Second) // stopped as the deadline passed
	continued.Store(time.Now().UnixNano())   // and continued (SIGCONT)
	return ctx.Err()
}

// The lock's renewal, keep and release whose answer the process, stopped,
// did not read before their bound are not said to be the API server's
// silence, as the spec's writes and the lock's take are not (R19 #7): an
// operator back from ctrl+z was told the API server had not answered, and
// to check it.
func TestLockWritesStoppedPastTheirBoundDoNotBlameTheServer(t *testing.T) {
	defer func(n int64) { continued.Store(n) }(continued.Load())
	holder := Holder{User: "a", Host: "h", Instance: "1"}
	ops := map[string]func(*Locker) error{
		"renew":   func(l *Locker) error { _, err := l.Renew(context.Background()); return err },
		"keep":    func(l *Locker) error { return l.Keep(context.Background(), "upgrade timed out") },
		"release": func(l *Locker) error { return l.Release(context.Background()) },
	}
	var wg sync.WaitGroup
	for name, op := range ops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			kube := fake.NewClientset(&coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: LockName("mgmt"), Namespace: "eksa-system", UID: "u1", ResourceVersion: "7"},
				Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder.String())},
			})
			audit := &memAudit{}
			l := &Locker{Kube: stoppedLeases{kube}, Namespace: "eksa-system", Cluster: "mgmt", Holder: holder,
				Audit: audit, AnswerWithin: 200 * time.Millisecond}
			err := op(l)
			var ps *ProcessStoppedError
			if !errors.As(err, &ps) || ps.Stopped < stoppedSlack || ps.Within != 200*time.Millisecond {
				t.Errorf("%s: %v; want that the process was stopped past 200ms", name, err)
			}
			if msg := err.Error(); strings.Contains(msg, "no answer from the API server") ||
				!strings.Contains(msg, "no answer read within 200ms: this process was stopped (ctrl+z, SIGSTOP) and continued") {
				t.Errorf("%s: %s", name, msg)
			}
			entries := audit.entries
			if len(entries) == 0 || entries[len(entries)-1].Result != AuditFailed ||
				!strings.Contains(entries[len(entries)-1].Error, "this process was stopped") {
				t.Errorf("%s: recorded %+v", name, entries)
			}
		}()
	}
	wg.Wait()
}
