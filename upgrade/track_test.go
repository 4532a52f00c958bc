package upgrade

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/upgrade-console/upgrade-console/demo/objects"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
)

// countingSource counts how often the tracker looked, so a test can let it
// look many times at a state without completing, without measuring time.
type countingSource struct {
	src StateSource
	mu  sync.Mutex
	n   int
}

func (c *countingSource) Latest() *model.ClusterState {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.src.Latest()
}

func (c *countingSource) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// waitLooks waits until the tracker has looked n more times.
func (c *countingSource) waitLooks(t *testing.T, n int) {
	t.Helper()
	target := c.count() + n
	if err := wait.PollUntilContextTimeout(context.Background(), 2*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return c.count() >= target, nil
	}); err != nil {
		t.Fatalf("tracker stopped looking: %v", err)
	}
}

type trackRun struct {
	done chan struct{}
	out  Outcome
	err  error
}

func startTrack(src StateSource, o TrackOptions) *trackRun {
	r := &trackRun{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.out, r.err = Track(context.Background(), src, clock.RealClock{}, o)
	}()
	return r
}

func (r *trackRun) finished() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

func (w *world) setConditions(t *testing.T, observed int64, failure string, conds map[string]bool) {
	t.Helper()
	w.cluster(t, true, func(u *unstructured.Unstructured) {
		var list []any
		for _, typ := range []string{"Ready", "ControlPlaneInitialized", "ControlPlaneReady", "DefaultCNIConfigured", "WorkersReady"} {
			ok := conds[typ]
			reason := ""
			if !ok {
				reason = "RollingUpgradeInProgress"
			}
			list = append(list, objects.V1beta1(typ, ok, "Info", reason, "", time.Now()))
		}
		setNested(u, list, "status", "conditions")
		setNested(u, observed, "status", "observedGeneration")
		if failure == "" {
			unstructured.RemoveNestedField(u.Object, "status", "failureMessage")
		} else {
			setNested(u, failure, "status", "failureMessage")
		}
	})
}

// The completion rule through status writes, as the EKS-A controller makes
// them: a stale observedGeneration, then conditions True out of order, then
// in order, must not complete; only the whole rule does.
func TestTrackCompletionRule(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	a := &Applier{Client: w.client, Cluster: "mgmt", Audit: &memAudit{}}
	applied, err := a.Apply(context.Background(), w.spec, ApplyOptions{ForceConflicts: true})
	if err != nil {
		t.Fatal(err)
	}
	gen := applied[len(applied)-1].Generation // the Cluster, applied last
	all := map[string]bool{"Ready": true, "ControlPlaneInitialized": true, "ControlPlaneReady": true, "DefaultCNIConfigured": true, "WorkersReady": true}

	src := &countingSource{src: w.watcher}
	var mu sync.Mutex
	var seen []model.Progress
	run := startTrack(src, TrackOptions{
		AppliedGeneration: gen, Poll: 2 * time.Millisecond,
		Gate: model.CompletionGate{Snapshots: 5},
		OnProgress: func(p model.Progress) {
			mu.Lock()
			seen = append(seen, p)
			mu.Unlock()
		},
	})
	lastSummary := func() string {
		mu.Lock()
		defer mu.Unlock()
		if len(seen) == 0 {
			return ""
		}
		return seen[len(seen)-1].Summary
	}

	// 1. Every condition still True from before the upgrade, but the status
	// describes the old generation: not done.
	w.setConditions(t, gen-1, "", all)
	src.waitLooks(t, 50)
	if run.finished() {
		t.Fatalf("completed on a stale observedGeneration: %+v", run.out)
	}

	// 2. Observed, but the control plane is not ready while the later
	// conditions are True (out of order): not done.
	w.setConditions(t, gen, "", map[string]bool{"Ready": true, "ControlPlaneInitialized": true, "DefaultCNIConfigured": true, "WorkersReady": true})
	src.waitLooks(t, 50)
	if run.finished() {
		t.Fatalf("completed with ControlPlaneReady False: %+v", run.out)
	}

	// 3. A failureMessage with everything True: not done (and, within the
	// grace period, not failed either).
	w.setConditions(t, gen, "etcd member not reachable", all)
	src.waitLooks(t, 50)
	if run.finished() {
		t.Fatalf("finished with a failureMessage inside the grace period: %+v", run.out)
	}

	// 4. The whole rule: done.
	w.setConditions(t, gen, "", all)
	<-run.done
	if run.err != nil || !run.out.Complete || !run.out.Progress.Complete {
		t.Fatalf("outcome %+v, %v", run.out, run.err)
	}
	mu.Lock()
	defer mu.Unlock()
	var sawStale, sawCP bool
	for _, p := range seen {
		if p.Stale {
			sawStale = true
		}
		for _, m := range p.Milestones {
			if m.Name == model.MilestoneControlPlaneReady && !m.Met && p.Milestones[0].Met && p.Milestones[1].Met {
				sawCP = true
			}
		}
	}
	if !sawStale || !sawCP {
		t.Errorf("progress reports: stale %t, waiting on ControlPlaneReady %t; last %q", sawStale, sawCP, lastSummary())
	}
}

func TestTrackFailureAndTimeout(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	a := &Applier{Client: w.client, Cluster: "mgmt", Audit: &memAudit{}}
	applied, err := a.Apply(context.Background(), w.spec, ApplyOptions{ForceConflicts: true})
	if err != nil {
		t.Fatal(err)
	}
	gen := applied[len(applied)-1].Generation // the Cluster, applied last
	w.setConditions(t, gen, "MachineConfigInvalid: bad template", map[string]bool{"Ready": false})
	// A failure that stays past the grace period fails the upgrade. Bounded:
	// a failure the watch does not see (its translation broken) failed
	// the test at the package's 10-minute timeout.
	fctx, fcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer fcancel()
	out, err := Track(fctx, w.watcher, clock.RealClock{}, TrackOptions{AppliedGeneration: gen, Poll: 2 * time.Millisecond, FailureGrace: time.Nanosecond})
	if err != nil || !out.Failed || out.Complete {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	if want := "bad template"; !strings.Contains(out.Reason, want) {
		t.Errorf("reason %q lacks %q", out.Reason, want)
	}
	// A deadline gives a timeout, not a failure.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	w.setConditions(t, gen, "", map[string]bool{"Ready": false})
	out, err = Track(ctx, w.watcher, clock.RealClock{}, TrackOptions{AppliedGeneration: gen, Poll: 2 * time.Millisecond})
	if err != ErrTrackTimeout || !out.TimedOut || out.Failed {
		t.Errorf("outcome %+v, %v", out, err)
	}
}

// A change to machine or datacenter configs alone leaves the Cluster's
// generation and conditions as they were: completion waits until EKS-A
// reports the children reconciled (status.childrenReconciledGeneration moves
// past its value before the apply).
func TestTrackWaitsForChangedChildren(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	gen := int64(1)
	all := map[string]bool{"Ready": true, "ControlPlaneInitialized": true, "ControlPlaneReady": true, "DefaultCNIConfigured": true, "WorkersReady": true}
	w.setConditions(t, gen, "", all)
	children := func(n int64) {
		w.cluster(t, true, func(u *unstructured.Unstructured) { setNested(u, n, "status", "childrenReconciledGeneration") })
	}
	children(7)
	src := &countingSource{src: w.watcher}
	run := startTrack(src, TrackOptions{AppliedGeneration: gen, ChildrenReconciledBefore: 7, Poll: 2 * time.Millisecond,
		Gate: model.CompletionGate{Snapshots: 5}})
	src.waitLooks(t, 50)
	if run.finished() {
		t.Fatalf("completed before EKS-A reconciled the changed children: %+v", run.out)
	}
	children(9)
	<-run.done
	if run.err != nil || !run.out.Complete {
		t.Fatalf("outcome %+v, %v", run.out, run.err)
	}
}

func TestChildrenChanged(t *testing.T) {
	for _, c := range []struct {
		dry  *DryRunResult
		want bool
	}{
		{nil, false},
		{&DryRunResult{Objects: []ObjectChange{{Object: "Cluster default/mgmt", Fields: []FieldChange{{Path: ".spec.kubernetesVersion"}}}}}, false},
		{&DryRunResult{Objects: []ObjectChange{{Object: "VSphereMachineConfig default/mgmt-cp", Fields: []FieldChange{{Path: ".spec.diskGiB"}}}}}, true},
		{&DryRunResult{Objects: []ObjectChange{{Object: "VSphereMachineConfig default/mgmt-cp", Fields: []FieldChange{{Path: ".metadata.annotations.x"}}}}}, false},
		// The paths as the dry run writes them (DiffObjects): a test with
		// hand-written paths passed while every real dry run said no.
		{&DryRunResult{Objects: []ObjectChange{{Object: "VSphereMachineConfig default/mgmt-md-0", Fields: DiffObjects(
			&unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"memoryMiB": int64(8192)}}},
			&unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"memoryMiB": int64(16384)}}})}}}, true},
		{&DryRunResult{Objects: []ObjectChange{{Object: "VSphereMachineConfig default/mgmt-md-0", Fields: DiffObjects(
			&unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "1"}}}},
			&unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "2"}}}})}}}, false},
		{&DryRunResult{Objects: []ObjectChange{{Object: "VSphereMachineConfig default/mgmt-new", Create: true}}}, true},
	} {
		if got := childrenChanged(c.dry); got != c.want {
			t.Errorf("childrenChanged(%+v) = %t", c.dry, got)
		}
	}
}

// A progress line that only grows older is not printed again.
func TestSummaryKeyIgnoresAges(t *testing.T) {
	a := "status not yet observed (generation 4, observed 3) for 0s"
	b := "status not yet observed (generation 4, observed 3) for 1m5s"
	if summaryKey(a) != summaryKey(b) {
		t.Errorf("%q and %q differ only in age", a, b)
	}
	if summaryKey(a) == summaryKey("status not yet observed (generation 5, observed 3) for 0s") {
		t.Error("a new generation is news")
	}
}

// A watch on an API server that stopped answering (SIGSTOP, a half-open
// connection) delivers nothing and reports no error: the completion rule
// holding on it is not the cluster's word. Tracking asks the API server
// before it counts the upgrade done, and holds again while it gets no
// confirmation.
func TestTrackConfirmsCompletionWithTheAPIServer(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	a := &Applier{Client: w.client, Cluster: "mgmt", Audit: &memAudit{}}
	applied, err := a.Apply(context.Background(), w.spec, ApplyOptions{ForceConflicts: true})
	if err != nil {
		t.Fatal(err)
	}
	gen := applied[len(applied)-1].Generation
	w.setConditions(t, gen, "", map[string]bool{"Ready": true, "ControlPlaneInitialized": true, "ControlPlaneReady": true, "DefaultCNIConfigured": true, "WorkersReady": true})

	live := ConfirmCluster(w.client, w.ns, "mgmt")
	var mu sync.Mutex
	frozen, asked, afterThaw := true, 0, 0
	var summaries []string
	src := &countingSource{src: w.watcher}
	run := startTrack(src, TrackOptions{
		AppliedGeneration: gen, Poll: 2 * time.Millisecond, Gate: model.CompletionGate{Snapshots: 5},
		Confirm: func(ctx context.Context, s *model.ClusterState) error {
			mu.Lock()
			defer mu.Unlock()
			asked++
			if frozen {
				return context.DeadlineExceeded
			}
			afterThaw++
			return live(ctx, s)
		},
		OnProgress: func(p model.Progress) {
			mu.Lock()
			summaries = append(summaries, p.Summary)
			mu.Unlock()
		},
	})
	src.waitLooks(t, 100)
	if run.finished() {
		t.Fatalf("counted done with the API server not answering: %+v", run.out)
	}
	mu.Lock()
	if asked < 2 {
		t.Errorf("asked the API server %d times in 100 looks; the rule holding 5 looks should ask again after each hold", asked)
	}
	frozen = false
	mu.Unlock()
	<-run.done
	if run.err != nil || !run.out.Complete {
		t.Fatalf("outcome %+v, %v", run.out, run.err)
	}
	mu.Lock()
	defer mu.Unlock()
	if afterThaw != 1 {
		t.Errorf("confirmed %d times after the API server answered, want 1", afterThaw)
	}
	said := strings.Join(summaries, "\n")
	if !strings.Contains(said, "the API server did not confirm it") {
		t.Errorf("the progress never said completion was not confirmed:\n%s", said)
	}
}

// ConfirmCluster against the real API server: the snapshot the watch
// delivered is confirmed; one that is behind the API server is not, nor is
// any when the API server does not answer.
func TestConfirmCluster(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	confirm := ConfirmCluster(w.client, w.ns, "mgmt")
	var s *model.ClusterState
	var last error
	// The watch may still be delivering the seed's last write.
	if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		s = w.watcher.Latest()
		last = confirm(ctx, s)
		return last == nil, nil
	}); err != nil {
		t.Fatalf("the watch's own snapshot never confirmed: %v", last)
	}
	behind := *s
	cl := *s.Cluster
	cl.ResourceVersion = "1"
	behind.Cluster = &cl
	if err := confirm(context.Background(), &behind); err == nil || !strings.Contains(err.Error(), "the watch has shown 1") {
		t.Errorf("a snapshot behind the API server: %v", err)
	}

	// An API server that accepts the connection and never answers.
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer hung.Close()
	c, err := NewClient(&rest.Config{Host: hung.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err = ConfirmCluster(c, w.ns, "mgmt")(ctx, s)
	if err == nil || !strings.Contains(err.Error(), "no answer") {
		t.Errorf("a frozen API server: %v", err)
	}
}
