package watchers

import (
	"context"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/serverdate"
)

// The upgrade lock Lease is watched like every other kind (access check,
// informer, translation on entry), by name: the system namespace holds the
// leases of every controller EKS-A runs, renewed every few seconds, and the
// console wants one of them. Its source is informational: the dashboard's
// "synced" rule does not wait for it, and a forbidden Lease only leaves the
// snapshot's Lock nil.

const coordinationGroup = "coordination.k8s.io"

var leaseSpec = kindSpec{kind: model.KindLease, group: coordinationGroup, resource: "leases", versions: []string{"v1"}, typed: true,
	selectors: nameIs(func(o *Options) string { return model.LockName(o.ClusterName) })}

// leaseListWatch reads Leases of one namespace through the typed client,
// recording the Date of each response in date: the API server's clock when
// the Lease came, which judges its write time (model.Lock.ExpiredWatched).
// A watch's Date is when the stream began, so the age counts from then,
// not from the event.
func leaseListWatch(typed kubernetes.Interface, namespace string, date *serverdate.Recorder) (runtime.Object,
	func(context.Context, metav1.ListOptions) (runtime.Object, error),
	func(context.Context, metav1.ListOptions) (watch.Interface, error)) {
	leases := typed.CoordinationV1().Leases(namespace)
	list := func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return leases.List(serverdate.With(ctx, date), o)
	}
	watchFn := func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		return leases.Watch(serverdate.With(ctx, date), o)
	}
	return &coordinationv1.Lease{}, list, watchFn
}
