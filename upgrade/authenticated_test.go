package upgrade

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
)

// A token kubeconfig on a shared bastion is run as root under a context
// named after anything: the entries named the OS user and the context, not
// who the API server saw. Against the real API server, the user the console
// acts as (here by impersonation, as a token's ServiceAccount would be) is
// in every entry, from one review.
func TestAuditEntriesRecordTheAuthenticatedIdentity(t *testing.T) {
	user := "deployer-" + cptest.Namespace(t, env.Config)
	kube, err := kubernetes.NewForConfig(cptest.Impersonate(env.Config, user, "platform-ops"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "audit.log")
	a, err := NewAuditor(path, WithAuditIdentity("root", "bastion"), WithAuditContext("deployer@mgmt"), WithAuditReview(kube))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, action := range []string{"lock-acquire", "apply"} {
		if err := a.Record(ctx, AuditEntry{Cluster: "mgmt", Action: action, Result: AuditOK}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := ReadAudit(path, AuditFilter{})
	if err != nil || len(res.Entries) != 2 {
		t.Fatalf("read back %+v, %v", res, err)
	}
	for _, e := range res.Entries {
		if e.Authenticated == nil || e.Authenticated.Username != user || !slices.Contains(e.Authenticated.Groups, "platform-ops") {
			t.Errorf("%s: authenticated %+v, want %s in group platform-ops", e.Action, e.Authenticated, user)
		}
		if e.User != "root" || e.Context != "deployer@mgmt" {
			t.Errorf("%s: user %q context %q", e.Action, e.User, e.Context)
		}
	}
}

// The review is a record, not a check: a server that refuses it (too old to
// serve it, or a webhook that denies it) leaves the entries without it and
// the action goes on. It is asked once, however many entries, callers and
// auditors of the client.
func TestAuditReviewRefusedRecordsNothingExtraAndIsAskedOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"forbidden", apierrors.NewForbidden(schema.GroupResource{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"}, "", nil)},
		{"not served", apierrors.NewNotFound(schema.GroupResource{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"}, "")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kube := fake.NewClientset()
			var asked atomic.Int32
			kube.PrependReactor("create", "selfsubjectreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
				asked.Add(1)
				return true, nil, tc.err
			})
			path := filepath.Join(t.TempDir(), "audit.log")
			a, err := NewAuditor(path, WithAuditReview(kube))
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for range 3 {
				wg.Go(func() {
					a.Authenticate(context.Background())
					if err := a.Record(context.Background(), AuditEntry{Cluster: "mgmt", Action: "apply", Result: AuditOK}); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			// A second auditor of the same client (an apply's refusal
			// after its dry run) asks no second time.
			again, err := NewAuditor(path, WithAuditReview(kube))
			if err != nil {
				t.Fatal(err)
			}
			if err := again.Record(context.Background(), AuditEntry{Cluster: "mgmt", Action: "apply", Result: AuditRefused}); err != nil {
				t.Fatal(err)
			}
			res, err := ReadAudit(path, AuditFilter{})
			if err != nil || len(res.Entries) != 4 {
				t.Fatalf("read back %+v, %v", res, err)
			}
			for _, e := range res.Entries {
				if e.Authenticated != nil {
					t.Errorf("authenticated %+v recorded from a refused review", e.Authenticated)
				}
			}
			if n := asked.Load(); n != 1 {
				t.Errorf("review asked %d times, want once", n)
			}
		})
	}
}
