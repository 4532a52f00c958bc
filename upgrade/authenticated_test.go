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

// A review cut short by its caller's context (the entry recorded after a
// ctrl-c) is not the API server's answer: the next entry, of this auditor
// or another on the client, asks again. Kept, it left every later entry of
// the run without the identity.
func TestAuditReviewCutShortIsAskedAgain(t *testing.T) {
	user := "cut-" + cptest.Namespace(t, env.Config)
	kube, err := kubernetes.NewForConfig(cptest.Impersonate(env.Config, user))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "audit.log")
	a, err := NewAuditor(path, WithAuditReview(kube))
	if err != nil {
		t.Fatal(err)
	}
	cut, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.Record(cut, AuditEntry{Cluster: "mgmt", Action: "upgrade", Result: AuditInterrupted}); err != nil {
		t.Fatal(err)
	}
	if err := a.Record(context.Background(), AuditEntry{Cluster: "mgmt", Action: "lock-release", Result: AuditOK}); err != nil {
		t.Fatal(err)
	}
	other, err := NewAuditor(path, WithAuditReview(kube))
	if err != nil {
		t.Fatal(err)
	}
	if id := other.AuthenticatedAs(cut); id == nil || id.Username != user {
		t.Errorf("another auditor of the client: authenticated %+v, want %s", id, user)
	}
	res, err := ReadAudit(path, AuditFilter{})
	if err != nil || len(res.Entries) != 2 {
		t.Fatalf("read back %+v, %v", res, err)
	}
	if got := res.Entries[0].Authenticated; got != nil {
		t.Errorf("the entry whose review was cut short: authenticated %+v", got)
	}
	if got := res.Entries[1].Authenticated; got == nil || got.Username != user {
		t.Errorf("the entry after it: authenticated %+v, want %s", got, user)
	}
}
