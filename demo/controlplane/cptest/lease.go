package cptest

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// AgeLeaseWrite sets back by `by` the API server's time of manager's last
// write to a Lease (its metadata.managedFields entries), as if it had last
// written then: the upgrade lock is judged stale by that time, which no
// client clock can move. The API server takes managedFields as an update
// sends them, when the update changes the object: it adds an annotation of
// its own, written by another manager, so manager's time is not set anew.
func AgeLeaseWrite(t testing.TB, kube kubernetes.Interface, namespace, name, manager string, by time.Duration) {
	t.Helper()
	ctx := context.Background()
	leases := kube.CoordinationV1().Leases(namespace)
	lease, err := leases.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var want time.Time
	for i, f := range lease.ManagedFields {
		if f.Manager == manager && f.Time != nil {
			aged := metav1.NewTime(f.Time.Add(-by))
			lease.ManagedFields[i].Time, want = &aged, aged.Time
		}
	}
	if want.IsZero() {
		t.Fatalf("Lease %s/%s has no managedFields entry of %s: %+v", namespace, name, manager, lease.ManagedFields)
	}
	if lease.Annotations == nil {
		lease.Annotations = map[string]string{}
	}
	lease.Annotations["cptest/aged"] = time.Now().Format(time.RFC3339Nano)
	lease, err = leases.Update(ctx, lease, metav1.UpdateOptions{FieldManager: "cptest-age"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range lease.ManagedFields {
		if f.Manager == manager && f.Time != nil && f.Time.After(want.Add(time.Second)) {
			t.Fatalf("the API server did not keep the aged time of %s on Lease %s/%s: %+v", manager, namespace, name, lease.ManagedFields)
		}
	}
}

// ForgetLeaseWrites clears a Lease's metadata.managedFields, so that no
// write time tells the API server's clock of its last renewal and only its
// renewTime (the holder's clock) does: a Lease whose managedFields were
// stripped, or that was restored without them. Sending the one empty entry
// is the API server's way to clear them; the update itself is not recorded.
func ForgetLeaseWrites(t testing.TB, kube kubernetes.Interface, namespace, name string) {
	t.Helper()
	ctx := context.Background()
	leases := kube.CoordinationV1().Leases(namespace)
	lease, err := leases.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lease.ManagedFields = []metav1.ManagedFieldsEntry{{}}
	if lease, err = leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(lease.ManagedFields) != 0 {
		t.Fatalf("the API server kept the managedFields of Lease %s/%s: %+v", namespace, name, lease.ManagedFields)
	}
}
