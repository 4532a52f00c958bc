package recovery

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/upgrade-console/upgrade-console/upgrade"
)

// errAuditBroken is what failingAudit returns: a full disk, a log file
// made read-only.
var errAuditBroken = errors.New("audit log: no space left on device")

// failingAudit is an audit log that breaks at its failAt-th Record (from
// 1), or at the first entry of a step when failStep is set, and stays
// broken; asked keeps every entry it was asked to record.
type failingAudit struct {
	failAt   int
	failStep bool

	mu     sync.Mutex
	asked  []upgrade.AuditEntry
	broken bool
}

func (f *failingAudit) Record(_ context.Context, e upgrade.AuditEntry) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, e)
	if len(f.asked) == f.failAt || (f.failStep && e.Step != "") {
		f.broken = true
	}
	if f.broken {
		return errAuditBroken
	}
	return nil
}

// plannedRollback is a world whose first new etcd member is stuck, and the
// plan of its rollback.
func plannedRollback(t *testing.T) (*world, *Plan) {
	t.Helper()
	w := newWorld(t)
	w.seedEtcdRollout(true)
	p, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return w, p
}

// An Executor built without an audit log refuses the run and the dry run
// before any request: a rollback nobody can find in the log afterwards
// leaves the next operator guessing what was changed.
func TestExecutorWithoutAnAuditLogRefusesBeforeAnyWrite(t *testing.T) {
	w, p := plannedRollback(t)
	before, state := w.writes.Load(), w.rollbackState()
	for name, run := range map[string]func(*Executor) error{
		"run":     func(x *Executor) error { _, err := x.Run(w.ctx, p); return err },
		"dry run": func(x *Executor) error { _, err := x.DryRun(w.ctx, p); return err },
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s without an audit log panicked: %v", name, r)
				}
			}()
			if err := run(&Executor{}); !errors.Is(err, upgrade.ErrNoAudit) {
				t.Errorf("%s without an audit log: %v, want a refusal", name, err)
			}
		}()
	}
	if n := w.writes.Load() - before; n != 0 {
		t.Errorf("%d write(s) reached the API server without an audit log", n)
	}
	if got := w.rollbackState(); got != state {
		t.Errorf("the refused run changed the cluster:\n got %+v\nwant %+v", got, state)
	}
}

// A rollback whose "started" entry the audit log refuses writes nothing:
// the started entry carries what every write is to replace, the only
// record of it should the console die mid-write.
func TestExecutorWritesNothingWhenStartedCannotBeRecorded(t *testing.T) {
	w, p := plannedRollback(t)
	before, state := w.writes.Load(), w.rollbackState()
	audit := &failingAudit{failAt: 1}
	_, err := (&Executor{Audit: audit}).Run(w.ctx, p)
	if ns := (*NotStartedError)(nil); !errors.Is(err, errAuditBroken) || !errors.As(err, &ns) {
		t.Fatalf("run with a failing audit log: %v, want its failure, as a run not started", err)
	}
	if n := w.writes.Load() - before; n != 0 {
		t.Errorf("%d write(s) reached the API server after the started entry failed", n)
	}
	if got := w.rollbackState(); got != state {
		t.Errorf("the run changed the cluster:\n got %+v\nwant %+v", got, state)
	}
	// The started entry and its end: held together and printed at exit,
	// the start alone read as a run that may have made its steps.
	if len(audit.asked) != 2 || audit.asked[0].Result != upgrade.AuditStarted || audit.asked[1].Result != upgrade.AuditFailed {
		t.Errorf("asked to record %+v, want the started entry and its end", audit.asked)
	}
}

// A step whose entry the audit log refuses ends the run there: the next
// step (the etcd spec put back) would change the cluster with nothing on
// record, and an operator reading the log could not tell how far it got.
func TestExecutorStopsAtTheStepItCannotRecord(t *testing.T) {
	w, p := plannedRollback(t)
	if len(p.Steps) < 2 || p.Steps[1].Name != "restore-etcd-spec" {
		t.Fatalf("steps %+v: want the etcd spec restored second", p.Steps)
	}
	etcdBefore := w.rollbackState()
	audit := &failingAudit{failStep: true}
	// A run that went on would wait for etcd, which nothing here plays:
	// it must fail, not hang.
	ctx, cancel := context.WithTimeout(w.ctx, 20*time.Second)
	defer cancel()
	rep, err := (&Executor{Audit: audit}).Run(ctx, p)
	if ns := (*NotStartedError)(nil); errors.As(err, &ns) {
		// The run took the lock and stopped at a step: it started.
		t.Errorf("a run stopped at a step reads as not started: %v", err)
	}
	if !errors.Is(err, errAuditBroken) {
		t.Fatalf("run with a failing audit log: %v, want its failure\n%s", err, describeSteps(rep))
	}
	if len(rep.Steps) != 1 {
		t.Errorf("ran %d step(s) after the first one's record failed:\n%s", len(rep.Steps), describeSteps(rep))
	}
	if got := w.rollbackState(); got.Version != etcdBefore.Version || got.Template != etcdBefore.Template {
		t.Errorf("the etcd spec was restored after a step's record failed: %+v, was %+v", got, etcdBefore)
	}
}

// A dry run whose entries the log refuses goes on to its last step (it
// writes nothing; the entries are the Auditor's to hold): it stopped at
// the first, and a --dry-run that ends there did not do what it was asked.
// Passed, it says so with a DryRunUnrecordedError, which still carries the
// refusal.
func TestDryRunGoesOnWhenTheLogRefusesItsEntries(t *testing.T) {
	w, p := plannedRollback(t)
	state := w.rollbackState()
	audit := &failingAudit{failAt: 1}
	rep, err := (&Executor{Audit: audit}).DryRun(w.ctx, p)
	var ud *DryRunUnrecordedError
	if !errors.As(err, &ud) || !errors.Is(err, errAuditBroken) {
		t.Fatalf("dry run with a failing audit log: %v, want a DryRunUnrecordedError with its refusal\n%s", err, describeSteps(rep))
	}
	if len(rep.Steps) != len(p.Steps) {
		t.Errorf("dry-ran %d of %d steps:\n%s", len(rep.Steps), len(p.Steps), describeSteps(rep))
	}
	if len(audit.asked) < 2 {
		t.Errorf("asked to record %d entries, want every dry-run step's", len(audit.asked))
	}
	if got := w.rollbackState(); got != state {
		t.Errorf("the dry run changed the cluster:\n got %+v\nwant %+v", got, state)
	}
}
