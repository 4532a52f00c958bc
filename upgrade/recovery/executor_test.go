package recovery

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/upgrade-console/upgrade-console/upgrade"
)

// recorded is an in-memory audit log.
type recorded struct {
	mu      sync.Mutex
	entries []upgrade.AuditEntry
}

func (r *recorded) Record(_ context.Context, e upgrade.AuditEntry) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries = append(r.entries, e)
	return nil
}

func (r *recorded) results() string {
	var out []string
	for _, e := range r.entries {
		out = append(out, e.Step+":"+e.Result)
	}
	return strings.Join(out, " ")
}

// A step that finds, when it writes, that its effect is already there (the
// object it deletes is gone, removed by someone else between its check and its
// write) wrote nothing: the log says "already-done", never "ok".
func TestAStepThatFindsNothingToWriteIsAlreadyDone(t *testing.T) {
	p := &Plan{Action: ActionNodeRetry, Cluster: "mgmt", Steps: []Step{{
		Name: "delete-it",
		done: func(context.Context) (bool, string, error) { return false, "", nil },
		do:   func(context.Context, bool) (string, error) { return "already gone", errNoWrite },
	}}}
	audit := &recorded{}
	x := &Executor{Audit: audit}
	dry, err := x.DryRun(context.Background(), p)
	if err != nil || dry.Steps[0].Status != StepAlreadyDone {
		t.Fatalf("dry run: %v %+v", err, dry.Steps)
	}
	rep, err := x.Run(context.Background(), p)
	if err != nil || rep.Steps[0].Status != StepAlreadyDone || rep.Steps[0].Detail != "already gone" {
		t.Fatalf("run: %v %+v", err, rep.Steps)
	}
	if got := audit.results(); got != "delete-it:already-done :started delete-it:already-done :finished" {
		t.Fatalf("audit = %s", got)
	}
}

// Interrupted before the first step (ctrl-c at the confirmation), a run
// changes nothing and leaves no started or failed entry behind.
func TestARunInterruptedBeforeItBeganRecordsNothing(t *testing.T) {
	ran := false
	p := &Plan{Action: ActionLockClear, Cluster: "mgmt", Steps: []Step{{
		Name: "clear",
		done: func(context.Context) (bool, string, error) { return false, "", nil },
		do:   func(context.Context, bool) (string, error) { ran = true; return "cleared", nil },
	}}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	audit := &recorded{}
	_, err := (&Executor{Audit: audit}).Run(ctx, p)
	if !errors.Is(err, context.Canceled) || ran || len(audit.entries) != 0 {
		t.Fatalf("err %v, ran %t, audit %q", err, ran, audit.results())
	}
}

// Interrupted during a write step, the step runs to its end, read-back
// included, and is recorded as what it did; the run stops before the next
// step. The write had landed and the log said "failed: reading back:
// context canceled".
func TestAWriteStepInterruptedRunsToItsEnd(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	written := false
	second := false
	p := &Plan{Action: ActionEtcdRollback, Cluster: "mgmt", Steps: []Step{{
		Name: "restore-it",
		done: func(ctx context.Context) (bool, string, error) {
			if err := ctx.Err(); err != nil {
				return false, "", err
			}
			return written, "", nil
		},
		do: func(context.Context, bool) (string, error) {
			cancel() // the operator's ctrl-c, as the write lands
			written = true
			return "restored", nil
		},
	}, {
		Name: "next",
		done: func(context.Context) (bool, string, error) { return false, "", nil },
		do:   func(context.Context, bool) (string, error) { second = true; return "", nil },
	}}}
	audit := &recorded{}
	rep, err := (&Executor{Audit: audit}).Run(ctx, p)
	if !errors.Is(err, context.Canceled) || second {
		t.Fatalf("run: %v (second step ran: %t), want it stopped before the next step", err, second)
	}
	if len(rep.Steps) != 1 || rep.Steps[0].Status != StepDone {
		t.Fatalf("steps %+v, want the write step done", rep.Steps)
	}
	if got := audit.results(); !strings.HasPrefix(got, ":started restore-it:ok") {
		t.Errorf("audit = %s, want the write recorded ok", got)
	}
}

// A write that fails is not recorded with what it would have done: the
// entry read `clear-lease failed msg="lease deleted" err="… nothing was
// written …"`, a success beside its error.
func TestAFailedWriteIsNotRecordedAsDone(t *testing.T) {
	p := &Plan{Action: ActionLockClear, Cluster: "mgmt", Steps: []Step{{
		Name: "clear-lease",
		done: func(context.Context) (bool, string, error) { return false, "", nil },
		do: func(context.Context, bool) (string, error) {
			return "lease deleted", &ConcurrentChangeError{Object: "Lease eksa-system/upgrade-console-mgmt", What: "renewed"}
		},
	}}}
	audit := &recorded{}
	rep, err := (&Executor{Audit: audit}).Run(context.Background(), p)
	if err == nil || rep.Steps[0].Status != StepFailed || rep.Steps[0].Detail != "" {
		t.Fatalf("run: %v %+v", err, rep.Steps)
	}
	// Refused by a change since the plan, before anything was written:
	// a refusal, as a precondition's, not a run stopped part way.
	for _, e := range audit.entries {
		if e.Step == "clear-lease" && (e.Result != upgrade.AuditRefused || e.Message != "" || !strings.Contains(e.Error, "changed since the plan was made")) {
			t.Errorf("entry %+v", e)
		}
	}
	if got := audit.results(); !strings.HasSuffix(got, " clear-lease:refused :refused") || !rep.Refused(err) {
		t.Errorf("audit = %s, refused %t; want the step and the run refused", got, rep.Refused(err))
	}

	// After a step that wrote, the same change stops the run part way.
	p.Steps = append([]Step{{Name: "first",
		done: func(context.Context) (bool, string, error) { return false, "", nil },
		do:   func(context.Context, bool) (string, error) { return "written", nil },
	}}, p.Steps...)
	done := false
	p.Steps[0].done = func(context.Context) (bool, string, error) { d := done; done = true; return d, "", nil }
	audit = &recorded{}
	rep, err = (&Executor{Audit: audit}).Run(context.Background(), p)
	if got := audit.results(); err == nil || rep.Refused(err) || !strings.HasSuffix(got, " clear-lease:failed :failed") {
		t.Errorf("after a write: %v, audit = %s; want the run stopped", err, got)
	}
}
