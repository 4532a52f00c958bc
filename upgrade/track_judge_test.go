package upgrade

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
)

// fixedSource serves one snapshot and counts the looks at it.
type fixedSource struct {
	s  *model.ClusterState
	mu sync.Mutex
	n  int
}

func (f *fixedSource) Latest() *model.ClusterState {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	return f.s
}

func (f *fixedSource) looks() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// trackSteps runs Track on a fake clock moved a second at a time, each step
// once the tracker has looked, until Track returns or limit has passed.
func trackSteps(t *testing.T, ctx context.Context, src *fixedSource, clk *clocktesting.FakeClock, o TrackOptions, limit time.Duration) (Outcome, []string, error) {
	t.Helper()
	var mu sync.Mutex
	var said []string
	o.OnProgress = func(p model.Progress) {
		mu.Lock()
		said = append(said, p.Summary)
		mu.Unlock()
	}
	type result struct {
		out Outcome
		err error
	}
	done := make(chan result, 1)
	// The looks counted before each step of the clock: read after it, a
	// look the step's tick set off before the read was waited for again,
	// and never came (the tracker waited for the next tick). The first
	// count too is read before the tracker starts: read after, a first
	// look made meanwhile (a busy CI machine) was waited for again.
	n := src.looks()
	go func() {
		out, err := Track(ctx, src, clk, o)
		done <- result{out, err}
	}()
	end := clk.Now().Add(limit)
	for {
		if err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			return src.looks() > n || len(done) > 0, nil
		}); err != nil {
			t.Fatalf("the tracker stopped looking: %v", err)
		}
		select {
		case r := <-done:
			mu.Lock()
			defer mu.Unlock()
			return r.out, said, r.err
		default:
		}
		if !clk.Now().Before(end) {
			t.Fatalf("Track did not return within %s; said %q", limit, said)
		}
		if err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			return clk.HasWaiters(), nil
		}); err != nil {
			t.Fatal("the tracker waits on no tick")
		}
		n = src.looks()
		clk.Step(time.Second)
	}
}

// settled is a Cluster (generation 2) whose every completion milestone is
// met: stacked etcd, CNI unmanaged, no child object to wait for.
func settled() *model.ClusterState {
	at := time.Now().Add(-time.Hour)
	conds := model.Conditions{}
	for _, c := range []string{model.ConditionControlPlaneReady, model.ConditionWorkersReady, model.ConditionReady} {
		conds = append(conds, model.Condition{Type: c, Status: "True", LastTransitionTime: at})
	}
	return &model.ClusterState{ClusterName: "mgmt", Cluster: &model.EKSACluster{
		Meta:              model.Meta{Name: "mgmt", Namespace: "default", Generation: 2},
		EksaVersion:       "v0.21.2",
		KubernetesVersion: "1.31", ObservedGeneration: 2, Conditions: conds,
	}}
}

// Apply --wait said "done" as soon as the milestones were met, before the
// gate's hold: now it says it is confirming, and "done" only after.
func TestTrackSaysDoneOnlyAfterTheHold(t *testing.T) {
	t0 := time.Now().Truncate(time.Second)
	clk := clocktesting.NewFakeClock(t0)
	out, said, err := trackSteps(t, context.Background(), &fixedSource{s: settled()}, clk, TrackOptions{AppliedGeneration: 2}, time.Minute)
	if err != nil || !out.Complete {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	want := []string{"every completion milestone met; confirming it holds for 5s", "done: every completion milestone met"}
	if strings.Join(said, "\n") != strings.Join(want, "\n") {
		t.Errorf("said %q\nwant %q", said, want)
	}
	if hold := model.DefaultCompletionGate().Hold; out.Elapsed < hold {
		t.Errorf("done after %s, within the hold of %s", out.Elapsed, hold)
	}
}

// An in-place step that failed and stays failed fails the wait once the
// grace has passed (it only timed out), saying what resumes it.
func TestTrackFailsOnAStepThatStaysFailed(t *testing.T) {
	t0 := time.Now().Truncate(time.Second)
	s := settled()
	s.Cluster.Conditions[1] = model.Condition{Type: model.ConditionWorkersReady, Status: "False", Reason: "InPlaceUpgradeInProgress", LastTransitionTime: t0}
	s.Cluster.Conditions[2] = model.Condition{Type: model.ConditionReady, Status: "False", Reason: "InPlaceUpgradeInProgress", LastTransitionTime: t0}
	s.Machines = model.ListOf(&model.Machine{Meta: model.Meta{Name: "mgmt-md-0-x"}, Role: model.RoleWorker, Owner: "mgmt-md-0", Owned: true,
		NodeName: "mgmt-6d6mj", Phase: "Running"})
	s.NodeUpgrades = model.ListOf(&model.NodeUpgrade{Meta: model.Meta{Name: "mgmt-md-0-x-node-upgrader", CreationTimestamp: t0.Add(-time.Minute)},
		Kind: model.KindNodeUpgrade, MachineName: "mgmt-md-0-x", Conditions: model.Conditions{
			{Type: "UpgraderPodCreated", Status: "True", LastTransitionTime: t0.Add(-time.Minute)},
			{Type: "BinariesCopied", Status: "True", LastTransitionTime: t0.Add(-time.Minute)},
			{Type: "ContainerdUpgraded", Status: "True", LastTransitionTime: t0.Add(-time.Minute)},
			{Type: "CNIPluginsUpgraded", Status: "True", LastTransitionTime: t0.Add(-time.Minute)},
			{Type: "KubeadmUpgraded", Status: "False", Severity: model.SeverityError, Reason: "Container exited with a non-zero exit code, reason: Error", LastTransitionTime: t0},
		}})
	clk := clocktesting.NewFakeClock(t0)
	out, _, err := trackSteps(t, context.Background(), &fixedSource{s: s}, clk, TrackOptions{AppliedGeneration: 2, FailureGrace: 30 * time.Second}, time.Minute)
	if err != nil || !out.Failed || out.Elapsed < 30*time.Second {
		t.Fatalf("outcome %+v, %v; want failed once the step stayed failed 30s", out, err)
	}
	for _, want := range []string{"node mgmt-6d6mj in-place step KubeadmUpgraded failed", "`upgrade-console node retry mgmt-6d6mj --cluster mgmt` runs its steps again"} {
		if !strings.Contains(out.Reason, want) {
			t.Errorf("reason %q lacks %q", out.Reason, want)
		}
	}
}

// A timeout inside the hold says so truthfully ("timed out at done: …" it
// said), and the lock is kept: nobody saw the rule hold its time.
func TestTrackTimeoutWhileConfirmingKeepsTheLockTruthfully(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	d := &Driver{Client: w.client, Audit: &memAudit{}, Holder: w.planner.Self, Planner: w.planner, SnapshotDir: t.TempDir()}
	s, err := d.Start(ctx, w.plan(t), StartOptions{ForceConflicts: true})
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]bool{"Ready": true, "ControlPlaneInitialized": true, "ControlPlaneReady": true, "DefaultCNIConfigured": true, "WorkersReady": true}
	w.setConditions(t, s.ClusterGeneration, "", all)
	var mu sync.Mutex
	var said []string
	tctx, cancel := context.WithTimeout(ctx, 2*time.Second) // inside the 5 s hold
	defer cancel()
	out, err := s.Track(tctx, w.watcher, TrackOptions{Poll: 20 * time.Millisecond, OnProgress: func(p model.Progress) {
		mu.Lock()
		said = append(said, p.Summary)
		mu.Unlock()
	}})
	if !out.TimedOut || out.Complete {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	if !strings.HasPrefix(out.Reason, "timed out while confirming completion: every milestone was met ") {
		t.Errorf("reason %q", out.Reason)
	}
	if strings.HasPrefix(out.Progress.Summary, "done") {
		t.Errorf("summary %q at the timeout", out.Progress.Summary)
	}
	mu.Lock()
	for _, l := range said {
		if strings.HasPrefix(l, "done") {
			t.Errorf("said %q before the hold passed", l)
		}
	}
	mu.Unlock()
	st, err := ReadLock(ctx, w.client.Kube, w.ns, "mgmt")
	if err != nil || !st.Held() || !strings.Contains(st.Kept, "upgrade timed out while confirming completion: every milestone was met") {
		t.Errorf("lock after the timeout: %+v %v", st, err)
	}
}

// apply --tui reported an upgrade failed (exit 4, the lock kept, nothing more
// in the audit log) after the operator's `node retry` from the dashboard let
// it complete: the console follows it past the failure, records the
// completion and releases the lock it kept.
func TestFollowAfterFailureRecordsTheCompletionAndReleasesTheLock(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	audit := &memAudit{}
	d := &Driver{Client: w.client, Audit: audit, Holder: w.planner.Self, Planner: w.planner, SnapshotDir: t.TempDir()}
	s, err := d.Start(ctx, w.plan(t), StartOptions{ForceConflicts: true})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := s.FollowAfterFailure(ctx, w.watcher, TrackOptions{}); err != nil || out.Complete || out.Failed || out.TimedOut {
		t.Fatalf("following a session that has not failed: %+v %v, want nothing", out, err)
	}
	if err := s.Finish(ctx, Outcome{Failed: true, Reason: "node mgmt-6d6mj in-place step KubeadmUpgraded failed"}); err != nil {
		t.Fatal(err)
	}
	if !s.Kept() || s.Completed() || s.Detached() {
		t.Fatal("the failed session does not say it keeps the lock, or says it completed or detached")
	}
	// The retry worked: the cluster meets the rule at the applied generation.
	all := map[string]bool{"Ready": true, "ControlPlaneInitialized": true, "ControlPlaneReady": true, "DefaultCNIConfigured": true, "WorkersReady": true}
	w.setConditions(t, s.ClusterGeneration, "", all)
	tctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := s.FollowAfterFailure(tctx, w.watcher, TrackOptions{Poll: 20 * time.Millisecond})
	if err != nil || !out.Complete {
		t.Fatalf("outcome %+v, %v; want complete", out, err)
	}
	if !s.CompletedAfterFailure() || !s.Completed() || s.Detached() {
		t.Error("the session does not say the upgrade completed after its failure")
	}
	if st, err := ReadLock(ctx, w.client.Kube, w.ns, "mgmt"); err != nil || st != nil || s.Kept() || !s.LockReleased() {
		t.Errorf("lock after the late completion: %+v %v (kept %t)", st, err, s.Kept())
	}
	var last AuditEntry
	for _, e := range audit.entries {
		if e.Action == "upgrade" {
			last = e
		}
	}
	if last.Result != AuditFinished || !strings.Contains(last.Message, "completion rule held, after the failure recorded at ") || !strings.HasSuffix(last.Message, "; kept lock released") {
		t.Errorf("last upgrade entry %+v, want the completion after the failure", last)
	}
}

// Stopped within a poll of a failure the dashboard has already declared
// (q as an etcd rollback ended), the tracker takes a last look: the upgrade
// failed, and is not detached as one that goes on (its lock released on a
// cluster rolled back and paused).
func TestTrackStoppedJustAfterAFailureReportsTheFailure(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now().Truncate(time.Second))
	running := settled()
	running.Cluster.ObservedGeneration = 1
	src := &fixedSource{s: running}
	ctx, cancel := context.WithCancel(context.Background())
	run := make(chan struct {
		out Outcome
		err error
	}, 1)
	go func() {
		out, err := Track(ctx, src, clk, TrackOptions{AppliedGeneration: 2})
		run <- struct {
			out Outcome
			err error
		}{out, err}
	}()
	if err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return src.looks() > 0 && clk.HasWaiters(), nil
	}); err != nil {
		t.Fatal("the tracker did not look")
	}
	rolledBack := settled()
	rolledBack.Cluster.ObservedGeneration = 1
	rolledBack.Cluster.Annotations = map[string]string{model.AnnotationEKSAPaused: "true",
		model.AnnotationEtcdRollbackRecord: `{"phase":"done","newMachine":"mgmt-etcd-z","by":"ops@bastion"}`}
	src.mu.Lock()
	src.s = rolledBack
	src.mu.Unlock()
	cancel()
	r := <-run
	if r.err != nil || !r.out.Failed || !strings.Contains(r.out.Reason, "etcd was rolled back") {
		t.Fatalf("outcome %+v, %v; want the rollback's failure", r.out, r.err)
	}

	// Stopped on an upgrade still under way, it stops as before.
	src = &fixedSource{s: running}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if out, err := Track(ctx, src, clk, TrackOptions{AppliedGeneration: 2}); !errors.Is(err, context.Canceled) || out.Failed {
		t.Errorf("under way: %+v, %v; want stopped", out, err)
	}
}

// A failed step waited out through the grace is said again each minute
// (OnHold), with when it fails the upgrade: apply --wait printed nothing
// between the failure and the verdict 10 minutes later.
func TestTrackSaysAFailureWaitedOutEachMinute(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC))
	src := &fixedSource{s: failedControlPlaneStep(clk.Now())}
	var mu sync.Mutex
	var held []string
	out, _, err := trackSteps(t, context.Background(), src, clk, TrackOptions{Poll: time.Second, OnHold: func(line string, _ model.Hold) {
		mu.Lock()
		held = append(held, line)
		mu.Unlock()
	}}, 11*time.Minute)
	if err != nil || !out.Failed {
		t.Fatalf("outcome %+v, %v; want failed", out, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(held) != 9 || !strings.HasPrefix(held[0], "still failing after 1m: node mgmt-lvn8n in-place step KubeadmUpgraded failed") ||
		!strings.Contains(held[0], "the upgrade fails at 10:10:00 UTC (in 9m)") || !strings.Contains(held[8], "(in 1m)") {
		t.Errorf("said %d times, want 9, from 1m to 9m:\n%s", len(held), strings.Join(held, "\n"))
	}
}
