package recovery

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// A run whose lock could not be given back (the API server lost mid-run)
// told the operator to run the same command again, which the Lease still
// held refused as another console's live lock. The release's error says
// so, when it lapses, and how to clear it at once.
func TestRunLockReleaseFailureSaysWhatARerunMeets(t *testing.T) {
	kube := kubefake.NewClientset()
	env := &Env{Client: &upgrade.Client{Kube: kube}, Cluster: "mgmt", Holder: upgrade.Holder{User: "ops", Host: "bastion", Instance: "a1"},
		Conn: model.ConnFlags{{Name: "kubeconfig", Value: "/etc/kc"}, {Name: "context", Value: "prod"}}}
	release, _, err := env.runLock(context.Background(), &recorded{})
	if err != nil {
		t.Fatal(err)
	}
	lost := func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("http2: client connection lost")
	}
	kube.PrependReactor("delete", "leases", lost)
	kube.PrependReactor("update", "leases", lost)
	kube.PrependReactor("get", "leases", lost)
	err = release(context.Background())
	if err == nil || !strings.Contains(err.Error(), "could not be released, so a rerun is refused until it turns stale") ||
		!strings.Contains(err.Error(), "`upgrade-console lock clear lease --force --cluster mgmt --kubeconfig /etc/kc --context prod`") {
		t.Errorf("release: %v", err)
	}
}

// A run whose lock was cleared by someone else while it stood still (ctrl-z,
// a laptop asleep, past its lease) stops before its next step, and says
// so: it wrote on, unlocked, and ended in a success.
func TestARunWhoseLockWasClearedStopsBeforeItsNextStep(t *testing.T) {
	kube := kubefake.NewClientset()
	env := &Env{Client: &upgrade.Client{Kube: kube}, Cluster: "mgmt", Holder: upgrade.Holder{User: "ops", Host: "bastion", Instance: "a1"}}
	first, second := false, false
	p := &Plan{Action: ActionEtcdRollback, Cluster: "mgmt", lock: env.runLock, Steps: []Step{{
		Name: "first",
		done: func(context.Context) (bool, string, error) { return first, "", nil },
		do: func(ctx context.Context, _ bool) (string, error) {
			first = true
			// Another operator clears the stale lock meanwhile.
			return "done", kube.CoordinationV1().Leases(model.SystemNamespace).Delete(ctx, upgrade.LockName("mgmt"), metav1.DeleteOptions{})
		},
	}, {
		Name: "second",
		done: func(context.Context) (bool, string, error) { return false, "", nil },
		do:   func(context.Context, bool) (string, error) { second = true; return "", nil },
	}}}
	audit := &recorded{}
	rep, err := (&Executor{Audit: audit}).Run(context.Background(), p)
	if !errors.Is(err, upgrade.ErrLockLost) || second || len(rep.Steps) != 1 {
		t.Fatalf("run: %v (second step ran: %t, %d steps); want it stopped before the second, the lock lost", err, second, len(rep.Steps))
	}
	if !strings.Contains(err.Error(), "stopped before step 2 (") || !strings.Contains(err.Error(), "cleared or taken by someone else (nobody holds it now)") {
		t.Errorf("error: %v", err)
	}
	if got := audit.results(); !strings.HasSuffix(got, ":failed") {
		t.Errorf("audit = %s, want the run's end recorded failed", got)
	}
}

// A step that waits before it writes reads the lock again after its wait: a
// stop during the wait outlived the lease, another operator cleared it, and
// the write went out on resume.
func TestAStepThatWaitsReadsItsLockBeforeItWrites(t *testing.T) {
	kube := kubefake.NewClientset()
	env := &Env{Client: &upgrade.Client{Kube: kube}, Cluster: "mgmt", Holder: upgrade.Holder{User: "ops", Host: "bastion", Instance: "a1"}}
	wrote := false
	p := &Plan{Action: ActionEtcdRollback, Cluster: "mgmt", lock: env.runLock, Steps: []Step{{
		Name: "restore",
		done: func(context.Context) (bool, string, error) { return wrote, "", nil },
		do: func(ctx context.Context, _ bool) (string, error) {
			// The wait, during which the lock is cleared.
			if err := kube.CoordinationV1().Leases(model.SystemNamespace).Delete(ctx, upgrade.LockName("mgmt"), metav1.DeleteOptions{}); err != nil {
				return "", err
			}
			if err := stillHeld(ctx); err != nil {
				return "", err
			}
			wrote = true
			return "written", nil
		},
	}}}
	_, err := (&Executor{Audit: &recorded{}}).Run(context.Background(), p)
	if !errors.Is(err, upgrade.ErrLockLost) || wrote {
		t.Fatalf("run: %v (wrote: %t), want the write not made, the lock lost", err, wrote)
	}
}

// refusesRelease is an audit log that takes every entry but the lock's
// release: a disk that filled at the run's end.
type refusesRelease struct{ recorded }

func (r *refusesRelease) Record(ctx context.Context, e upgrade.AuditEntry) error {
	if e.Action == "lock-release" {
		return &upgrade.AuditWriteError{Path: "audit.log", Err: errors.New("no space left on device")}
	}
	return r.recorded.Record(ctx, e)
}

// A run that did its steps and gave its lock back, the release's entry
// alone refused, is done: the run ended in an error, and the command said
// "resumable: run the same command again" of a finished rollback, exit 4
// (D11). The entry is the log's to hold, printed at exit (exit 74).
func TestARunWhoseReleaseEntryIsRefusedIsDone(t *testing.T) {
	kube := kubefake.NewClientset()
	env := &Env{Client: &upgrade.Client{Kube: kube}, Cluster: "mgmt", Holder: upgrade.Holder{User: "ops", Host: "bastion", Instance: "a1"}}
	done := false
	p := &Plan{Action: ActionEtcdRollback, Cluster: "mgmt", lock: env.runLock, Steps: []Step{{
		Name: "only",
		done: func(context.Context) (bool, string, error) { return done, "", nil },
		do:   func(context.Context, bool) (string, error) { done = true; return "done", nil },
	}}}
	rep, err := (&Executor{Audit: &refusesRelease{}}).Run(context.Background(), p)
	if err != nil || len(rep.Steps) != 1 || rep.Steps[0].Status != StepDone {
		t.Fatalf("run: %v\n%s", err, describeSteps(rep))
	}
	if _, err := kube.CoordinationV1().Leases(model.SystemNamespace).Get(context.Background(), upgrade.LockName("mgmt"), metav1.GetOptions{}); err == nil {
		t.Error("the Lease is still there")
	}
}
