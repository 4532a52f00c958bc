package recovery

import (
	"context"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/upgrade-console/upgrade-console/upgrade"
)

// allowLeases answers the SelfSubjectAccessReviews: leases as allow says,
// anything else allowed.
func allowLeases(kube *kubefake.Clientset, allow func(verb string) bool) {
	kube.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview).DeepCopy()
		ra := r.Spec.ResourceAttributes
		r.Status.Allowed = ra.Resource != "leases" || allow(ra.Verb)
		return true, r, nil
	})
}

// An etcd rollback holds the upgrade lock for its run. An identity that may
// do every step but not write the Lease passed the dry run ("nothing was
// changed", exit 0), then failed the run before its first step (exit 4,
// "run the same command again"), or, allowed to create the Lease but not to
// delete it, ran every step and failed at the end with the lock kept. The
// dry run asks, as apply's apply-access check does.
func TestDryRunSaysTheLockCannotBeTaken(t *testing.T) {
	for _, tc := range []struct {
		name   string
		allow  func(string) bool
		denied string
	}{
		{"read only", func(v string) bool { return v == "get" || v == "list" || v == "watch" }, "may not create leases.coordination.k8s.io"},
		{"no delete", func(v string) bool { return v != "delete" }, "may not delete leases.coordination.k8s.io"},
		{"all", func(string) bool { return true }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kube := kubefake.NewClientset()
			allowLeases(kube, tc.allow)
			env := &Env{Client: &upgrade.Client{Kube: kube}, Cluster: "mgmt", Holder: upgrade.Holder{User: "ops", Host: "bastion", Instance: "a1"}}
			p := &Plan{Action: ActionEtcdRollback, Cluster: "mgmt", lock: env.runLock, lockAccess: env.lockAccess, lockObject: env.lockObjectRef(),
				Steps: []Step{{
					Name: "write-it",
					done: func(context.Context) (bool, string, error) { return false, "", nil },
					do:   func(context.Context, bool) (string, error) { return "written", nil },
				}}}
			audit := &recorded{}
			_, err := (&Executor{Audit: audit}).DryRun(context.Background(), p)
			if tc.denied == "" {
				if err != nil {
					t.Fatalf("dry run: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.denied) || !strings.Contains(err.Error(), "resourceNames: [upgrade-console-mgmt]") {
				t.Fatalf("dry run: %v", err)
			}
			if got := audit.results(); !strings.Contains(got, "upgrade-lock:failed") {
				t.Errorf("audit = %s", got)
			}
		})
	}
}
