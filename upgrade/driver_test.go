package upgrade

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
)

// The driver takes the lock, snapshots, applies, renews the lock on its
// clock while the upgrade runs, notices when the lock is taken away, and
// releases it only on completion.
func TestDriverLockLifecycle(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	t0 := time.Now().Truncate(time.Second)
	clk := clocktesting.NewFakeClock(t0)
	audit := &memAudit{}
	holder := Holder{User: "alice", Host: "laptop", Instance: "d1"}
	w.planner.Self = holder
	d := &Driver{Client: w.client, Audit: audit, Clock: clk, Holder: holder, Planner: w.planner, SnapshotDir: t.TempDir()}

	// A blocked plan never takes the lock.
	blocked := w.plan(t)
	blocked.Preflight = append(blocked.Preflight, model.CheckResult{Name: "x", Status: model.CheckFail, Blocking: true})
	if _, err := d.Start(ctx, blocked, StartOptions{ForceConflicts: true}); !errors.As(err, new(*PreflightError)) {
		t.Fatalf("blocked start: %v", err)
	}
	if st, _ := ReadLock(ctx, w.client.Kube, w.ns, "mgmt"); st != nil {
		t.Fatalf("blocked start left a lock: %+v", st)
	}

	p := w.plan(t)
	s, err := d.Start(ctx, p, StartOptions{ForceConflicts: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.ClusterGeneration < 2 || len(s.Applied) != len(w.spec.Docs) || s.Snapshot.Name == "" {
		t.Fatalf("session %+v", s)
	}
	// The caller's plan is untouched by the re-check under the lock.
	if &p.Preflight[0] == &s.Plan.Preflight[0] {
		t.Error("the session shares the caller's preflight slice")
	}

	// Renewals follow the driver's clock (every third of the lease).
	clk.Step(DefaultLeaseDuration / 3)
	want := t0.Add(DefaultLeaseDuration / 3)
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		st, err := ReadLock(ctx, w.client.Kube, w.ns, "mgmt")
		return err == nil && st != nil && st.RenewTime.Equal(want), nil
	}); err != nil {
		st, _ := ReadLock(ctx, w.client.Kube, w.ns, "mgmt")
		t.Fatalf("lock not renewed at %v: %+v", want, st)
	}
	// The renew loop writes the Lease, then records it: the session may
	// lag the API server by that instant.
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		st, _, _ := s.Lock()
		return st.RenewTime.Equal(want), nil
	}); err != nil {
		st, _, _ := s.Lock()
		t.Errorf("session lock not renewed at %v: %+v", want, st)
	}
	if _, renewErr, lost := s.Lock(); lost || renewErr != nil {
		t.Errorf("session lock: err %v, lost %t", renewErr, lost)
	}

	// A failed upgrade keeps the lock.
	if err := s.Finish(ctx, Outcome{Failed: true, Reason: "boom"}); err != nil {
		t.Fatal(err)
	}
	st, _ := ReadLock(ctx, w.client.Kube, w.ns, "mgmt")
	if !st.Held() || s.LockReleased() {
		t.Fatal("a failed upgrade released the lock")
	}
	// Kept on purpose, it reads as left behind at once (the fake clock has
	// not moved past its lease), so `lock clear lease` needs no --force and
	// the next console is told it is stale.
	if !strings.Contains(st.Kept, "upgrade failed: boom") || !st.Expired(clk.Now()) || !strings.Contains(st.Describe(clk.Now()), "kept on purpose by its console") {
		t.Errorf("kept lock: %+v; %s", st.Lock, st.Describe(clk.Now()))
	}
	other := &Locker{Kube: w.client.Kube, Namespace: w.ns, Cluster: "mgmt", Holder: Holder{User: "bob", Host: "desk", Instance: "b0b"}, Clock: clk, Audit: &memAudit{}}
	var held *LockHeldError
	if _, err := other.Acquire(ctx); !errors.As(err, &held) || !held.Stale {
		t.Errorf("another console's acquire of the kept lock: %v", err)
	}
	// The same console taking it again renews it: no longer kept.
	again := &Locker{Kube: w.client.Kube, Namespace: w.ns, Cluster: "mgmt", Holder: holder, Clock: clk, Audit: &memAudit{}}
	if st, err := again.Acquire(ctx); err != nil || st.Kept != "" || st.Expired(clk.Now()) {
		t.Errorf("taken again: %v %+v", err, st)
	}
	if !strings.Contains(s.LockKeptMessage(), "upgrade-console lock clear lease") || !strings.Contains(s.LockKeptMessage(), s.Snapshot.Name) {
		t.Errorf("kept message: %s", s.LockKeptMessage())
	}
	var actions []string
	for _, e := range audit.entries {
		actions = append(actions, e.Action+":"+e.Result)
	}
	got := strings.Join(actions, " ")
	for _, want := range []string{"upgrade:started", "lock-acquire:ok", "snapshot:ok", "apply:ok", "lock-renew:ok", "lock-keep:ok", "upgrade:failed"} {
		if !strings.Contains(got, want) {
			t.Errorf("audit lacks %s: %s", want, got)
		}
	}
	if strings.Contains(got, "lock-release") {
		t.Errorf("a failed upgrade released the lock: %s", got)
	}
}

// A lock cleared by someone else while the console follows is noticed and
// never released by the console (it is no longer its lock).
func TestDriverNoticesLostLock(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	clk := clocktesting.NewFakeClock(time.Now())
	holder := Holder{User: "alice", Host: "laptop", Instance: "d2"}
	w.planner.Self = holder
	audit := &memAudit{}
	d := &Driver{Client: w.client, Clock: clk, Holder: holder, Audit: audit, SnapshotDir: t.TempDir()}
	s, err := d.Start(ctx, w.plan(t), StartOptions{ForceConflicts: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.client.Kube.CoordinationV1().Leases(w.ns).Delete(ctx, LockName("mgmt"), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	clk.Step(DefaultLeaseDuration / 3)
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_, _, lost := s.Lock()
		return lost, nil
	}); err != nil {
		t.Fatal("lost lock not noticed")
	}
	if _, renewErr, _ := s.Lock(); !errors.Is(renewErr, ErrLockLost) {
		t.Errorf("renew error %v", renewErr)
	}
	// The loss is in the log, when it was found.
	if got := strings.Join(audit.actions(), ","); !strings.Contains(got, "lock-renew:failed") {
		t.Errorf("audit = %s, want the failed renewal", got)
	}
	if err := s.Finish(ctx, Outcome{Complete: true}); err != nil || s.LockReleased() {
		t.Errorf("finish after losing the lock: %v (released %t)", err, s.LockReleased())
	}
	// Said as lost, never as released, nor as kept with the command that
	// would clear whoever holds it now.
	if m := s.LockReleasedMessage(nil); !strings.Contains(m, "cleared or taken by someone else") {
		t.Errorf("completion's lock message %q", m)
	}
	if m := s.LockKeptMessage(); !strings.Contains(m, "kept none") || strings.Contains(m, "lock clear lease") {
		t.Errorf("failure's lock message %q", m)
	}
}

// A start refused by another console's lock is closed in the audit log as
// refused, never left looking interrupted.
func TestDriverRefusedStartIsRecorded(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	other := &Locker{Kube: w.client.Kube, Namespace: w.ns, Cluster: "mgmt", Holder: Holder{User: "bob", Host: "desk", Instance: "b"}, Audit: &memAudit{}}
	if _, err := other.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	audit := &memAudit{}
	d := &Driver{Client: w.client, Audit: audit, Holder: Holder{User: "alice", Host: "laptop", Instance: "a"}, SnapshotDir: t.TempDir()}
	p := w.plan(t)
	p.Preflight = nil // as if planned before bob took the lock
	_, err := d.Start(ctx, p, StartOptions{ForceConflicts: true})
	if !errors.As(err, new(*LockHeldError)) || !strings.Contains(err.Error(), "bob@desk (console b)") {
		t.Fatalf("start under bob's lock: %v", err)
	}
	if got := strings.Join(audit.actions(), " "); got != "upgrade:started upgrade:refused" {
		t.Errorf("audit: %s", got)
	}
}

// gatedAudit holds the entry that ends a session until the test opens the
// gate; every other entry goes through.
type gatedAudit struct {
	memAudit
	held chan struct{} // closed when the end entry arrived
	gate chan struct{}
}

func (g *gatedAudit) Record(ctx context.Context, e AuditEntry) error {
	if e.Action == "upgrade" && e.Result == AuditFinished {
		close(g.held)
		<-g.gate
	}
	return g.memAudit.Record(ctx, e)
}

// A console quit (Detach) while the tracker is finishing returns only once
// the finish is in the audit log: the command exits right after Detach.
func TestDetachWaitsForAFinishUnderWay(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	audit := &gatedAudit{held: make(chan struct{}), gate: make(chan struct{})}
	holder := Holder{User: "alice", Host: "laptop", Instance: "d3"}
	w.planner.Self = holder
	d := &Driver{Client: w.client, Audit: audit, Holder: holder, SnapshotDir: t.TempDir()}
	s, err := d.Start(ctx, w.plan(t), StartOptions{ForceConflicts: true})
	if err != nil {
		t.Fatal(err)
	}
	finished := make(chan error, 1)
	go func() { finished <- s.Finish(ctx, Outcome{Complete: true}) }()
	<-audit.held // the lock is released; the end entry is being written
	detached := make(chan error, 1)
	go func() { detached <- s.Detach(ctx) }()
	select {
	case err := <-detached:
		t.Fatalf("Detach returned (%v) while the finish was not yet in the audit log", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(audit.gate)
	if err := <-finished; err != nil {
		t.Fatal(err)
	}
	if err := <-detached; err != nil {
		t.Fatal(err)
	}
	got := strings.Join(audit.actions(), " ")
	if !strings.HasSuffix(got, "lock-release:ok upgrade:finished") || strings.Count(got, "upgrade:finished") != 1 {
		t.Errorf("audit: %s", got)
	}
}

// A Ctrl-C or a SIGTERM during the start (a CI job cancelled, say) killed
// the process between two writes: machine configs on the new template under
// a Cluster still on the old version, which EKS-A refused. Before the first
// write an interrupt stops the start cleanly; after it, the writes run to
// their end.
func TestStartInterrupted(t *testing.T) {
	// start runs a start whose options interrupt it (cancel is the
	// operator's ctrl-c).
	start := func(t *testing.T, opts func(cancel context.CancelFunc) StartOptions) (*world, *memAudit, *Session, error) {
		w := newWorld(t, scenario.Rolling)
		audit := &memAudit{}
		d := &Driver{Client: w.client, Audit: audit, Holder: w.planner.Self, Planner: w.planner, SnapshotDir: t.TempDir()}
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		o := opts(cancel)
		o.ForceConflicts = true
		s, err := d.Start(ctx, w.plan(t), o)
		return w, audit, s, err
	}
	t.Run("after the first write: every document is applied", func(t *testing.T) {
		var heard []string
		w, _, s, err := start(t, func(cancel context.CancelFunc) StartOptions {
			return StartOptions{OnApplied: func(a AppliedObject) {
				heard = append(heard, a.Object)
				cancel()
			}}
		})
		if err != nil || s == nil {
			t.Fatalf("start: %v", err)
		}
		if len(s.Applied) != len(w.spec.Docs) || len(heard) != len(w.spec.Docs) {
			t.Errorf("applied %d of %d documents (heard of %d)", len(s.Applied), len(w.spec.Docs), len(heard))
		}
		if s.Detached() || s.Completed() {
			t.Error("a session not yet ended says it detached or completed")
		}
		_ = s.Detach(context.Background())
		if !s.Detached() || s.Completed() {
			t.Error("a detached session does not say it detached")
		}
	})
	t.Run("before the first write: nothing is applied, the lock released", func(t *testing.T) {
		w, audit, s, err := start(t, func(cancel context.CancelFunc) StartOptions {
			return StartOptions{OnSnapshot: func(SnapshotRef) { cancel() }}
		})
		if s != nil || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted before the API server answered (the apply's own dry run, after the snapshot was taken): no document was applied") {
			t.Fatalf("start: %v, %v; want it stopped", s, err)
		}
		// Said in words, on the terminal and in the audit log: client-go's
		// "client rate limiter Wait returned an error: context canceled"
		// told the operator nothing.
		if strings.Contains(err.Error(), "context canceled") {
			t.Errorf("start: %v", err)
		}
		for _, e := range audit.entries {
			if strings.Contains(e.Error, "context canceled") || strings.Contains(e.Message, "context canceled") {
				t.Errorf("audit %s %s: %q %q", e.Action, e.Result, e.Error, e.Message)
			}
		}
		if st, _ := ReadLock(context.Background(), w.client.Kube, w.ns, "mgmt"); st != nil {
			t.Errorf("the interrupted start left the lock: %+v", st)
		}
		got := strings.Join(audit.actions(), " ")
		if strings.Contains(got, "apply:") || !strings.HasSuffix(got, "upgrade:interrupted") {
			t.Errorf("audit %s: want no apply and the upgrade closed as interrupted (not failed: none ran)", got)
		}
	})
}

// A release the API server refused says when the lock turns stale: with the
// default lease it said "0s".
func TestLockReleasedMessageAfterARefusedRelease(t *testing.T) {
	s := &Session{Plan: &Plan{Cluster: "mgmt"}, locker: &Locker{Cluster: "mgmt"}}
	m := s.LockReleasedMessage(errors.New(`leases "upgrade-console-mgmt" is forbidden`))
	if want := "could NOT be released (leases \"upgrade-console-mgmt\" is forbidden): it blocks further upgrades and reads as held by a live console until it turns stale, " + DefaultLeaseDuration.String() + " after"; !strings.Contains(m, want) ||
		!strings.Contains(m, "lock clear lease --cluster mgmt") {
		t.Errorf("message %q, want %q and the command that clears it", m, want)
	}
}

// A start that applied part of the spec keeps the lock marked kept, as a
// failed upgrade does: only stopping its renewals let it turn stale, and
// `lock clear --all` clears a stale lock with no mark as a crashed
// console's, on a cluster left mid-change.
func TestStartAppliedInPartKeepsTheLock(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	audit := &memAudit{}
	d := &Driver{Client: w.client, Audit: audit, Holder: w.planner.Self, Planner: w.planner, SnapshotDir: t.TempDir()}
	p := w.plan(t)
	if len(p.Target.Spec.Docs) < 2 {
		t.Fatalf("the target spec has %d document(s): nothing can land before a failure", len(p.Target.Spec.Docs))
	}
	// After the first write the Cluster document goes stale (as when
	// another writer changed it): the API server refuses its apply.
	once := false
	s, err := d.Start(ctx, p, StartOptions{ForceConflicts: true, OnApplied: func(AppliedObject) {
		if !once {
			once = true
			p.Target.Spec.Cluster.SetResourceVersion("1")
		}
	}})
	if s == nil || err == nil {
		t.Fatalf("start: %v, %v; want it failed part way", s, err)
	}
	if len(s.Applied) == 0 || len(s.Applied) >= len(p.Target.Spec.Docs) {
		t.Fatalf("applied %d of %d documents", len(s.Applied), len(p.Target.Spec.Docs))
	}
	st, rerr := ReadLock(ctx, w.client.Kube, w.ns, "mgmt")
	if rerr != nil || st == nil || !st.Held() {
		t.Fatalf("lock after the failure: %+v, %v", st, rerr)
	}
	if !strings.Contains(st.Kept, "the spec was applied in part") || !s.Kept() {
		t.Errorf("lock not marked kept: %q (session kept: %t)", st.Kept, s.Kept())
	}
	if !strings.Contains(err.Error(), "upgrade-console-mgmt is kept: it blocks further upgrades until the cluster is checked") {
		t.Errorf("error does not say the lock is kept:\n%v", err)
	}
	got := strings.Join(audit.actions(), " ")
	if !strings.Contains(got, "lock-keep:ok") || !strings.HasSuffix(got, "upgrade:failed") || strings.Contains(got, "lock-release") {
		t.Errorf("audit %s: want the lock kept and the upgrade closed as failed", got)
	}
	// Ended: a later Detach (the console quitting) releases nothing.
	if err := s.Detach(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := ReadLock(ctx, w.client.Kube, w.ns, "mgmt"); st == nil || st.Kept == "" {
		t.Errorf("a detach after the failure released or unmarked the lock: %+v", st)
	}
}

// Another manager changes a field the spec sets while the typed confirmation
// is open: the start ran the writes with the dry run the operator had
// confirmed, forcing a conflict never listed (and recorded the confirmed
// changes, not the ones made). Under the lock it dry-runs again and, the
// result no longer agreeing, refuses with nothing written.
func TestStartRefusesWhenTheDryRunNoLongerAgrees(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	dry, err := (&Applier{Client: w.client, Cluster: "mgmt"}).DryRun(ctx, w.spec)
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "anywhere.eks.amazonaws.com", Version: "v1alpha1", Resource: "vspheremachineconfigs"}
	mc := w.client.Dynamic.Resource(gvr).Namespace(w.ns)
	if _, err := mc.Patch(ctx, "mgmt-md-0", types.MergePatchType, []byte(`{"spec":{"memoryMiB":65536}}`),
		metav1.PatchOptions{FieldManager: "gitops-controller"}); err != nil {
		t.Fatal(err)
	}
	audit := &memAudit{}
	w.planner.Self = Holder{User: "alice", Host: "laptop", Instance: "a"}
	d := &Driver{Client: w.client, Audit: audit, Holder: w.planner.Self, Planner: w.planner, SnapshotDir: t.TempDir()}
	_, err = d.Start(ctx, w.plan(t), StartOptions{DryRun: dry, ForceConflicts: true})
	var changed *DryRunChangedError
	if !errors.As(err, &changed) || !strings.Contains(err.Error(), "spec.memoryMiB is now owned by another field manager, gitops-controller") ||
		!strings.Contains(err.Error(), "nothing was applied") {
		t.Fatalf("start after the field changed: %v", err)
	}
	if got := strings.Join(audit.actions(), " "); !strings.HasPrefix(got, "upgrade:started lock-acquire:ok") || !strings.HasSuffix(got, "upgrade:refused") ||
		strings.Contains(got, "apply:") || strings.Contains(got, "snapshot:") {
		t.Errorf("audit: %s", got)
	}
	if st, _ := ReadLock(ctx, w.client.Kube, w.ns, "mgmt"); st.Held() {
		t.Errorf("the refused start left its lock: %+v", st)
	}
	obj, err := mc.Get(ctx, "mgmt-md-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedInt64(obj.Object, "spec", "memoryMiB"); v != 65536 {
		t.Errorf("memoryMiB %d: the refused start wrote", v)
	}
	// Confirmed again on the new dry run, it starts.
	if _, err := d.Start(ctx, w.plan(t), StartOptions{DryRun: changed.Now, ForceConflicts: true}); err != nil {
		t.Errorf("start on the new dry run: %v", err)
	}
}

// The demo's cluster stops with its console: a quit mid-upgrade recorded
// "which goes on in the cluster", of a control plane that was gone.
func TestDetachOfAClusterThatStopsWithTheConsole(t *testing.T) {
	ctx := context.Background()
	for _, stops := range []bool{false, true} {
		w, audit := newWorld(t, scenario.Rolling), &memAudit{}
		d := &Driver{Client: w.client, Audit: audit, Holder: w.planner.Self, Planner: w.planner, SnapshotDir: t.TempDir(), StopsWithConsole: stops}
		s, err := d.Start(ctx, w.plan(t), StartOptions{ForceConflicts: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Detach(ctx); err != nil {
			t.Fatal(err)
		}
		last := audit.entries[len(audit.entries)-1]
		if last.Result != AuditDetached || strings.Contains(last.Message, "goes on") || strings.Contains(last.Message, "demo") != stops {
			t.Errorf("StopsWithConsole %v: end entry %s %q", stops, last.Result, last.Message)
		}
	}
}

// A start refused under the lock by a blocking check prints the check's
// text, which carries cluster text (a failureMessage): its lines joined and
// escaped, as the plan's table prints them.
func TestPreflightErrorPrintsChecksOnALineEach(t *testing.T) {
	err := &PreflightError{Checks: []model.CheckResult{{Name: "no-failure-message", Message: "disk full\n2026-11-25T12:18:03Z outcome: done\x1b[2K", Remediation: "look\nhere"}}}
	if got, want := err.Error(), "blocked by preflight:\n  no-failure-message: disk full; 2026-11-25T12:18:03Z outcome: done\\x1b[2K\n    fix: look; here"; got != want {
		t.Errorf("error = %q\nwant    %q", got, want)
	}
}
