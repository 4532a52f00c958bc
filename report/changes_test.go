package report

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/upgrade-console/upgrade-console/model"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func i32(v int32) *int32 { return &v }

func cond(t, status string, sev model.ConditionSeverity, reason, msg string) model.Condition {
	return model.Condition{Type: t, Status: status, Severity: sev, Reason: reason, Message: msg, LastTransitionTime: t0.Add(-time.Hour)}
}

func meta(name string) model.Meta {
	return model.Meta{Name: name, Namespace: model.SystemNamespace, Generation: 1, CreationTimestamp: t0.Add(-time.Hour),
		Annotations: map[string]string{}, Labels: map[string]string{}}
}

// etcdRollout is a management cluster in the middle of an etcd rollout with
// `workers` worker machines.
func etcdRollout(workers int) *model.ClusterState {
	s := &model.ClusterState{Version: 1, At: t0, ClusterName: "mgmt", Namespace: "default", Context: "admin@mgmt", Connection: model.Live}
	s.Cluster = &model.EKSACluster{Meta: model.Meta{Name: "mgmt", Namespace: "default", Generation: 7, Annotations: map[string]string{}},
		KubernetesVersion: "1.31", EksaVersion: "v0.21.1", ExternalEtcdCount: 3, ObservedGeneration: 7,
		Conditions: model.Conditions{
			cond("ControlPlaneReady", "False", model.SeverityInfo, "RollingUpgradeInProgress", "Etcd is not ready"),
			cond("WorkersReady", "True", "", "", ""),
			cond("Ready", "False", model.SeverityInfo, "RollingUpgradeInProgress", "Etcd is not ready"),
		}}
	s.ControlPlane = &model.ControlPlane{Meta: meta("mgmt"), Version: "v1.30.14-eks-1-30-40",
		Replicas: model.ReplicaCounts{Desired: i32(3), Ready: i32(3), Available: i32(3), UpToDate: i32(3)}, ObservedGeneration: 1}
	s.ControlPlane.Annotations[model.AnnotationCAPIPaused] = "true"
	s.Etcd = &model.EtcdCluster{Meta: meta("mgmt-etcd"), Replicas: 3, ReadyReplicas: 2, ObservedGeneration: 1,
		Conditions: model.Conditions{cond("EtcdMachinesSpecUpToDate", "False", model.SeverityWarning, "EtcdRollingUpdateInProgress", "Rolling 2 replicas with outdated spec")}}
	s.Etcd.Annotations[model.AnnotationEtcdUpgrading] = "true"
	machines := []*model.Machine{
		{Meta: meta("mgmt-etcd-a"), Role: model.RoleEtcd, Owner: "mgmt-etcd", Owned: true, Phase: "Running", EtcdReady: true},
		{Meta: meta("mgmt-etcd-b"), Role: model.RoleEtcd, Owner: "mgmt-etcd", Owned: true, Phase: "Running", EtcdReady: true},
		{Meta: meta("mgmt-etcd-new"), Role: model.RoleEtcd, Owner: "mgmt-etcd", Owned: true, Phase: "Provisioning"},
	}
	var nodes []*model.Node
	for i := range workers {
		n := fmt.Sprintf("mgmt-md-0-%04d", i)
		machines = append(machines, &model.Machine{Meta: meta(n), Role: model.RoleWorker, Owner: "mgmt-md-0", Owned: true,
			Phase: "Running", Version: "v1.30.14-eks-1-30-40", NodeName: n})
		nodes = append(nodes, &model.Node{Meta: meta(n), Ready: true, KubeletVersion: "v1.30.14-eks-1-30-40"})
	}
	s.Machines, s.Nodes = model.ListOf(machines...), model.ListOf(nodes...)
	return s
}

// clone copies the parts of a snapshot the tests change (snapshots are
// immutable: a new one is built for every change).
func clone(s *model.ClusterState) *model.ClusterState {
	c := *s
	c.Version++
	cl := *s.Cluster
	cl.Conditions = append(model.Conditions{}, s.Cluster.Conditions...)
	cl.Annotations = copyMap(s.Cluster.Annotations)
	c.Cluster = &cl
	cp := *s.ControlPlane
	cp.Annotations = copyMap(s.ControlPlane.Annotations)
	c.ControlPlane = &cp
	e := *s.Etcd
	e.Annotations = copyMap(s.Etcd.Annotations)
	e.Conditions = append(model.Conditions{}, s.Etcd.Conditions...)
	c.Etcd = &e
	c.Machines = deepCopy(s.Machines)
	c.Nodes = deepCopy(s.Nodes)
	c.NodeUpgrades = deepCopy(s.NodeUpgrades)
	c.Events = append([]model.Event{}, s.Events...)
	return &c
}

// deepCopy copies the objects too: the tests change them in place, which a
// snapshot never does.
func deepCopy[T any](l model.List[T]) model.List[T] {
	out := make([]*T, l.Len())
	for i, v := range l.All() {
		c := *v
		out[i] = &c
	}
	return model.ListOf(out...)
}

func copyMap(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func texts(lines []Line) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.String())
		b.WriteByte('\n')
	}
	return b.String()
}

func derive(s *model.ClusterState) *model.Progress {
	p := model.DeriveProgress(s, model.ProgressOptions{}, t0)
	return &p
}

func TestFirstSnapshotSummarises(t *testing.T) {
	s := etcdRollout(1000)
	s.Machines.At(s.Machines.Len() - 1).Phase = "" // a new Machine CAPI has not phased yet
	out := texts(Changes(nil, s, nil, derive(s), t0))
	for _, want := range []string{
		"2026-11-21T12:00:00Z watch: cluster default/mgmt (context admin@mgmt)",
		"connection: live",
		"Cluster mgmt: ControlPlaneReady False (Info) RollingUpgradeInProgress: Etcd is not ready",
		"EtcdadmCluster mgmt-etcd: upgrading (rollout started)",
		"KubeadmControlPlane mgmt: paused",
		"etcd machines: 3 (2 Running, 1 Provisioning)",
		"worker machines: 1000 (999 Running, 1 no phase yet)",
		"nodes: 1000, 1000 ready",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("first snapshot lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\n"); n > 40 {
		t.Errorf("first snapshot printed %d lines for 1000 workers; it must summarise:\n%s", n, out)
	}
}

// The phase lines count in the words of what they count: "up to date"
// beside EKS-A's own "(1 up to date)", counted by spec, read as a
// contradiction.
func TestPhaseLinesSayWhatTheyCount(t *testing.T) {
	s := etcdRollout(2)
	out := texts(Changes(nil, s, nil, derive(s), t0))
	if !strings.Contains(out, "phase etcd: active: 2/3 members upgraded and ready, 2 ready in all, upgrading") {
		t.Errorf("etcd phase line:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, " phase ") && strings.Contains(l, "up to date") {
			t.Errorf("a phase line counts \"up to date\": %s", l)
		}
	}
}

func TestChangesFollowEtcdRollout(t *testing.T) {
	a := etcdRollout(2)
	b := clone(a)
	b.Machines.At(2).Phase = "Running"
	b.Machines.At(2).EtcdReady = true
	b.Etcd.ReadyReplicas = 3
	b.Machines.At(0).Owned = false
	out := texts(Changes(a, b, derive(a), derive(b), t0))
	for _, want := range []string{
		"etcd machine mgmt-etcd-new: phase Provisioning → Running",
		"etcd machine mgmt-etcd-new: etcd-ready true",
		"EtcdadmCluster mgmt-etcd: 3/3 members ready, ready=false",
		"etcd machine mgmt-etcd-a: disowned by mgmt-etcd",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "mgmt-md-0") || strings.Contains(out, "Node ") {
		t.Errorf("unchanged workers were reported:\n%s", out)
	}

	c := clone(b)
	delete(c.Etcd.Annotations, model.AnnotationEtcdUpgrading)
	delete(c.ControlPlane.Annotations, model.AnnotationCAPIPaused)
	c.Etcd.Conditions[0] = cond("EtcdMachinesSpecUpToDate", "True", "", "", "")
	c.Machines = model.ListOf(c.Machines.Slice()[1:]...) // old member deleted
	out = texts(Changes(b, c, derive(b), derive(c), t0))
	for _, want := range []string{
		"EtcdadmCluster mgmt-etcd: upgrading annotation cleared (rollout finished)",
		"KubeadmControlPlane mgmt: unpaused",
		"EtcdadmCluster mgmt-etcd: EtcdMachinesSpecUpToDate True",
		"etcd machine mgmt-etcd-a: deleted",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q:\n%s", want, out)
		}
	}
}

// After upgrade-console's etcd rollback the same changes are its doing: the
// plain watch said "rollout finished" and "removed after the control plane
// rollout" of an etcd put back and of the member the rollback deleted.
func TestChangesSayAnEtcdRollbackAsSuch(t *testing.T) {
	a := etcdRollout(2)
	b := clone(a)
	b.Cluster.Annotations = map[string]string{model.AnnotationEtcdRollbackRecord: `{"phase":"done"}`}
	delete(b.Etcd.Annotations, model.AnnotationEtcdUpgrading)
	b.Machines.At(2).Owned = false
	out := texts(Changes(a, b, derive(a), derive(b), t0))
	for _, want := range []string{
		"EtcdadmCluster mgmt-etcd: upgrading annotation cleared (etcd rolled back)",
		"etcd machine mgmt-etcd-new: disowned by mgmt-etcd\n",
	} {
		if !strings.Contains(out+"\n", want) {
			t.Errorf("missing %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "rollout finished") || strings.Contains(out, "after the control plane rollout") {
		t.Errorf("a rollback said as a finished rollout:\n%s", out)
	}
}

func TestChangesNoChangeNoLines(t *testing.T) {
	a := etcdRollout(50)
	b := clone(a)
	if lines := Changes(a, b, derive(a), derive(b), t0); len(lines) != 0 {
		t.Fatalf("identical snapshots produced lines:\n%s", texts(lines))
	}
}

func TestChangesInPlaceStepsAndFailure(t *testing.T) {
	a := etcdRollout(2)
	b := clone(a)
	b.NodeUpgrades = model.ListOf(&model.NodeUpgrade{Meta: meta("mgmt-md-0-0000-node-upgrader"), Kind: model.KindNodeUpgrade, MachineName: "mgmt-md-0-0000",
		KubernetesVersion: "v1.31.14-eks-1-31-47", Conditions: model.Conditions{
			cond("UpgraderPodCreated", "True", "", "", ""),
			cond("BinariesCopied", "False", model.SeverityInfo, "Container is still running", ""),
		}})
	out := texts(Changes(a, b, derive(a), derive(b), t0))
	for _, want := range []string{
		"NodeUpgrade mgmt-md-0-0000-node-upgrader: created for machine mgmt-md-0-0000",
		"step UpgraderPodCreated done",
		"step BinariesCopied: Container is still running",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q:\n%s", want, out)
		}
	}
	c := clone(b)
	c.NodeUpgrades.At(0).Conditions = model.Conditions{
		cond("UpgraderPodCreated", "True", "", "", ""),
		cond("BinariesCopied", "True", "", "", ""),
		cond("ContainerdUpgraded", "False", model.SeverityError, "Container exited with a non-zero exit code, reason: Error", ""),
	}
	c.Cluster.FailureMessage = "node upgrade failed"
	c.Cluster.FailureReason = "ClusterInvalid"
	c.Events = []model.Event{{Type: "Warning", Reason: "BackOff", Message: "Back-off restarting failed container", ObjectKind: "Pod", ObjectName: "x-node-upgrader", Count: 3, LastTimestamp: t0}}
	out = texts(Changes(b, c, derive(b), derive(c), t0))
	for _, want := range []string{
		"step ContainerdUpgraded FAILED: Container exited with a non-zero exit code, reason: Error",
		"Cluster mgmt: failureMessage (ClusterInvalid): node upgrade failed",
		"upgrade: failed: node upgrade failed",
		"warning Pod x-node-upgrader: BackOff: Back-off restarting failed container (×3)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q:\n%s", want, out)
		}
	}
	// A failed step without a failureMessage (EKS-A's in-place upgrades
	// set none): the line that first reports it names the console's way
	// past it; the step's event offered raw kubectl, and the outcome line
	// naming the command came ten minutes on.
	pb, pd := derive(b), derive(b)
	pd.Stalls = append(pd.Stalls, model.Stall{Kind: model.KindNodeUpgrade, Name: "n-node-upgrader", Failed: true,
		Sentence: "node n in-place step ContainerdUpgraded failed 5s ago: exit 1", Resume: "`upgrade-console node retry n --cluster mgmt` runs its steps again"})
	out = texts(Changes(b, b, pb, pd, t0))
	if !strings.Contains(out, "failed: node n in-place step ContainerdUpgraded failed 5s ago: exit 1; next: `upgrade-console node retry n --cluster mgmt`") {
		t.Errorf("the failed step's line does not name node retry:\n%s", out)
	}
}

func TestChangesConnectionAndStaleness(t *testing.T) {
	a := etcdRollout(1)
	b := clone(a)
	b.Connection = model.Reconnecting
	b.Cluster.Generation = 8
	out := texts(Changes(a, b, derive(a), derive(b), t0))
	for _, want := range []string{"connection: reconnecting", "Cluster mgmt: spec changed (generation 7 → 8)", "status: status not yet observed (generation 8, observed 7)"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q:\n%s", want, out)
		}
	}
}

// healthy is the rollout finished: every completion milestone met.
func healthy() *model.ClusterState { return healthyWith(2) }

func healthyWith(workers int) *model.ClusterState {
	s := etcdRollout(workers)
	s.Cluster.Conditions = model.Conditions{
		cond("ControlPlaneReady", "True", "", "", ""), cond("WorkersReady", "True", "", "", ""), cond("Ready", "True", "", "", ""),
	}
	delete(s.Etcd.Annotations, model.AnnotationEtcdUpgrading)
	delete(s.ControlPlane.Annotations, model.AnnotationCAPIPaused)
	s.Etcd.ReadyReplicas, s.Etcd.Ready = 3, true
	s.Etcd.Conditions = model.Conditions{cond("EtcdMachinesSpecUpToDate", "True", "", "", "")}
	s.Machines.At(2).Phase, s.Machines.At(2).EtcdReady = "Running", true
	return s
}

func runWatch(t *testing.T, ctx context.Context, opts WatchOptions, states ...*model.ClusterState) (Outcome, string, *clocktesting.FakeClock) {
	t.Helper()
	var out bytes.Buffer
	clk := clocktesting.NewFakeClock(t0)
	opts.Out, opts.Clock = &out, clk
	ch := make(chan *model.ClusterState)
	type result struct {
		o   Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		o, err := Watch(ctx, ch, opts)
		done <- result{o, err}
	}()
	// Bounded by a real deadline: a Watch that returned early, or stopped
	// reading, fails the test at once instead of hanging it until the
	// package timeout.
	deadline := time.After(10 * time.Second)
	for i, s := range states {
		select {
		case ch <- s:
		case r := <-done:
			t.Fatalf("Watch returned (%s, %v) before it took state %d of %d; output so far:\n%s", r.o, r.err, i+1, len(states), out.String())
		case <-deadline:
			t.Fatalf("Watch did not take state %d of %d; output so far:\n%s", i+1, len(states), out.String())
		}
	}
	// Move the fake clock until Watch returns: the completion gate needs
	// the rule to hold for a while.
	for {
		select {
		case r := <-done:
			if r.err != nil {
				t.Fatal(r.err)
			}
			return r.o, out.String(), clk
		case <-deadline:
			close(ch)
			t.Fatalf("Watch did not return; output so far:\n%s", out.String())
		case <-time.After(5 * time.Millisecond):
			if clk.HasWaiters() {
				clk.Step(time.Second)
			}
		}
	}
}

func TestWatchExitsDoneWhenRuleHolds(t *testing.T) {
	o, out, _ := runWatch(t, context.Background(), WatchOptions{ExitOnDone: true}, etcdRollout(2), healthy())
	if o != Done {
		t.Fatalf("outcome %s, want done:\n%s", o, out)
	}
	for _, want := range []string{"upgrade: every completion milestone met; confirming it holds", "outcome: done", "EtcdadmCluster mgmt-etcd: upgrading annotation cleared"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q:\n%s", want, out)
		}
	}
}

// A cluster at rest meets EKS-A's rule at once: done, and said to have been
// at rest, so a script that expected to follow an upgrade is not misled.
// One that moved while watched is plainly done.
func TestWatchSaysTheClusterWasAtRest(t *testing.T) {
	const atRest = "at rest when the watch began"
	o, out, _ := runWatch(t, context.Background(), WatchOptions{ExitOnDone: true}, healthy())
	if o != Done || !strings.Contains(out, "outcome: done (the cluster was "+atRest) {
		t.Errorf("outcome %s at rest:\n%s", o, out)
	}
	o, out, _ = runWatch(t, context.Background(), WatchOptions{ExitOnDone: true}, etcdRollout(2), healthy())
	if o != Done || strings.Contains(out, atRest) {
		t.Errorf("outcome %s after an upgrade:\n%s", o, out)
	}
}

// With the default grace, as apply --wait: a failureMessage fails the
// upgrade once it has stayed 10 minutes, not at once.
func TestWatchExitsFailed(t *testing.T) {
	s := etcdRollout(2)
	s.Cluster.FailureMessage = "boom"
	o, out, clk := runWatch(t, context.Background(), WatchOptions{ExitOnDone: true}, s)
	if o != Failed || !strings.Contains(out, "outcome: failed: the Cluster reports a failure (for 10m): boom") {
		t.Fatalf("outcome %s, want failed:\n%s", o, out)
	}
	if at := clk.Now().Sub(t0); at < model.DefaultFailureGrace {
		t.Errorf("failed after %s, before the grace of %s", at, model.DefaultFailureGrace)
	}
}

func TestWatchTimesOut(t *testing.T) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	o, out, _ := runWatch(t, ctx, WatchOptions{ExitOnDone: true})
	if o != TimedOut || !strings.Contains(out, "outcome: timed out") {
		t.Fatalf("outcome %s, want timed out:\n%s", o, out)
	}
}

// syncBuffer is a bytes.Buffer safe to read while Watch writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestWatchReportsStallAsTimePasses(t *testing.T) {
	s := etcdRollout(1)
	// The new etcd member appeared 30 s ago: not stalled yet at a one
	// minute threshold. Two minutes later, with no new snapshot, it is.
	s.Machines.At(2).CreationTimestamp = t0.Add(-30 * time.Second)
	w := startWatch(t, WatchOptions{StallAfter: time.Minute})
	w.send(s)
	if strings.Contains(w.out.String(), "stalled") {
		t.Fatalf("stalled before the threshold:\n%s", w.out.String())
	}
	// A second at a time, as the watch ticks: one step of two minutes is
	// a watch that did not run (TestWatchResumedAfterAStop).
	w.advance(t, 2*time.Minute)
	waitOutput(t, w.out, "stalled: etcd machine mgmt-etcd-new")
}

// waitOutput polls until Watch has written want.
func waitOutput(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return strings.Contains(out.String(), want), nil
	})
	if err != nil {
		t.Fatalf("no %q in the output:\n%s", want, out.String())
	}
}

func TestListsThatJustSyncedAreSummarised(t *testing.T) {
	a := etcdRollout(0)
	a.Sources = map[model.Kind]model.SourceStatus{model.KindEKSACluster: {Installed: true, Synced: true}, model.KindMachine: {Installed: true}}
	b := etcdRollout(500)
	b.Sources = map[model.Kind]model.SourceStatus{model.KindEKSACluster: {Installed: true, Synced: true},
		model.KindMachine: {Installed: true, Synced: true}, model.KindNode: {Installed: true, Synced: true}}
	out := texts(Changes(a, b, derive(a), derive(b), t0))
	if strings.Contains(out, "created") || strings.Contains(out, "joined") {
		t.Fatalf("objects of a list that just synced were reported one by one:\n%s", out)
	}
	if !strings.Contains(out, "worker machines: 500 (500 Running)") {
		t.Fatalf("no summary of the synced list:\n%s", out)
	}
}

func TestWatchWaitsForTheClusterToSync(t *testing.T) {
	unsynced := etcdRollout(3)
	unsynced.Connection = model.Connecting
	unsynced.Sources = map[model.Kind]model.SourceStatus{model.KindEKSACluster: {Installed: true}}
	synced := etcdRollout(3)
	synced.Sources = map[model.Kind]model.SourceStatus{model.KindEKSACluster: {Installed: true, Synced: true}}
	failed := clone(synced)
	failed.Cluster.FailureMessage = "boom"
	_, out, _ := runWatch(t, context.Background(), WatchOptions{ExitOnDone: true}, unsynced, synced, failed)
	if strings.Contains(out, "phase components: active") || !strings.Contains(out, "connection: connecting") {
		t.Fatalf("progress reported before the cluster synced:\n%s", out)
	}
	if !strings.Contains(out, "phase: etcd") {
		t.Fatalf("no baseline once synced:\n%s", out)
	}
}

// A Cluster the identity may get but not list or watch is never synced: the
// watch said "connection: live" and then nothing until its timeout. It says
// the refusal once, with the grant that fixes it.
func TestWatchSaysAForbiddenClusterBeforeItSyncs(t *testing.T) {
	forbidden := etcdRollout(3)
	forbidden.Connection = model.Live
	forbidden.Sources = map[model.Kind]model.SourceStatus{model.KindEKSACluster: {Installed: true,
		Forbidden: "list clusters.anywhere.eks.amazonaws.com in default"}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second) // never synced: it stops at the deadline
	defer cancel()
	_, out, _ := runWatch(t, ctx, WatchOptions{}, forbidden, clone(forbidden))
	if n := strings.Count(out, "access: forbidden: list clusters.anywhere.eks.amazonaws.com in default (the EKS-A Cluster cannot be followed"); n != 1 {
		t.Fatalf("the forbidden Cluster said %d times, want once:\n%s", n, out)
	}
	if !strings.Contains(out, "fix: ") || strings.Contains(out, "phase") {
		t.Errorf("want the grant, and no phase of a cluster not seen:\n%s", out)
	}
}

// atRest is a management cluster at rest with `workers` Ready workers whose
// Node list is on its way: `arrived` nodes so far.
func atRest(workers, arrived int) *model.ClusterState {
	s := healthyWith(workers)
	s.Cluster.KubernetesVersion = "1.30" // what the machines run
	s.Sources = map[model.Kind]model.SourceStatus{}
	for _, k := range []model.Kind{model.KindEKSACluster, model.KindKubeadmControlPlane, model.KindEtcdadmCluster,
		model.KindMachineDeployment, model.KindMachine, model.KindNodeUpgrade, model.KindEvent} {
		s.Sources[k] = model.SourceStatus{Installed: true, Synced: true}
	}
	s.Sources[model.KindNode] = model.SourceStatus{Installed: true, Synced: arrived == workers}
	s.Nodes = model.ListOf(s.Nodes.Slice()[:arrived]...)
	return s
}

// A line about a kind waits for its whole list: counted while the Node list
// arrived, a healthy cluster read "nodes: 0, 0 ready", then "nodes: 897", and
// its workers "0/1000 nodes upgraded and ready, 0 ready in all".
func TestWatchCountsOnlyWholeLists(t *testing.T) {
	_, out, _ := runWatch(t, context.Background(), WatchOptions{ExitOnDone: true}, atRest(1000, 0), atRest(1000, 897), atRest(1000, 1000))
	if n := strings.Count(out, " nodes: "); n != 1 || !strings.Contains(out, " nodes: 1000, 1000 ready\n") {
		t.Errorf("want one nodes line, of the whole list:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, " 0 ready") || strings.Contains(l, " 0/1000") {
			t.Errorf("counted from a partial list: %s", l)
		}
	}
	if !strings.Contains(out, "phase workers: done: 1000/1000 nodes upgraded and ready, 1000 ready in all") {
		t.Errorf("no workers phase once the nodes are listed:\n%s", out)
	}
}

// The same for every fleet list: the machines, the in-place upgrades.
func TestChangesWaitForEachList(t *testing.T) {
	a := atRest(3, 3)
	a.Sources[model.KindMachine] = model.SourceStatus{Installed: true}
	a.Sources[model.KindNodeUpgrade] = model.SourceStatus{Installed: true}
	a.NodeUpgrades = model.ListOf(&model.NodeUpgrade{Meta: meta("old-node-upgrader"), Kind: model.KindNodeUpgrade, MachineName: "mgmt-md-0-0000", Completed: true})
	out := texts(Changes(nil, a, nil, derive(a), t0))
	if strings.Contains(out, "machines:") || strings.Contains(out, "NodeUpgrade") || strings.Contains(out, "phase") {
		t.Errorf("lines from lists on their way:\n%s", out)
	}
	b := atRest(3, 3)
	b.NodeUpgrades = a.NodeUpgrades
	out = texts(Changes(a, b, derive(a), derive(b), t0))
	for _, want := range []string{"worker machines: 3 (3 Running)", "phase: done"} {
		if !strings.Contains(out, want) {
			t.Errorf("once listed, no %q:\n%s", want, out)
		}
	}
}

// withSources is s as the watcher delivers it: every kind listed, the
// connection as given, and the kinds' errors.
func withSources(s *model.ClusterState, conn model.ConnectionState, connErr string, errs map[model.Kind]string) *model.ClusterState {
	s.Connection, s.ConnectionErr = conn, connErr
	s.Sources = map[model.Kind]model.SourceStatus{}
	for _, k := range []model.Kind{model.KindEKSACluster, model.KindKubeadmControlPlane, model.KindEtcdadmCluster,
		model.KindMachineDeployment, model.KindMachine, model.KindNode, model.KindNodeUpgrade, model.KindEvent, model.KindLease} {
		s.Sources[k] = model.SourceStatus{Installed: true, Synced: true, Err: errs[k]}
	}
	return s
}

// With the API server gone, every kind's watch fails, each with its own URL
// and again at each retry: the plain watch printed one raw "watch X: Get
// https://…: connection refused" line per kind and retry, dozens. The
// connection line says it once, with the error that lost it, and once
// more when it is back.
func TestWatchSaysALostConnectionOnce(t *testing.T) {
	refused := func(what string) string {
		return `Get "https://10.0.0.5:6443/apis/cluster.x-k8s.io/v1beta2/namespaces/eksa-system/` + what + `": dial tcp 10.0.0.5:6443: connect: connection refused`
	}
	states := []*model.ClusterState{withSources(etcdRollout(2), model.Live, "", nil)}
	lost := map[model.Kind]string{}
	for i, k := range []model.Kind{model.KindMachine, model.KindNode, model.KindMachineDeployment, model.KindEvent, model.KindMachine, model.KindLease, model.KindNode} {
		lost[k] = refused(fmt.Sprintf("%s?watch=true&try=%d", strings.ToLower(string(k)), i))
		errs := map[model.Kind]string{}
		for k, v := range lost {
			errs[k] = v
		}
		states = append(states, withSources(etcdRollout(2), model.Reconnecting, refused("machines?watch=true&try=0"), errs))
	}
	states = append(states, withSources(healthy(), model.Live, "", nil))
	_, out, _ := runWatch(t, context.Background(), WatchOptions{ExitOnDone: true}, states...)
	if strings.Contains(out, " watch ") {
		t.Errorf("the lost connection said kind by kind:\n%s", out)
	}
	want := "connection: reconnecting: " + refused("machines?watch=true&try=0")
	if n := strings.Count(out, "connection: reconnecting"); n != 1 || !strings.Contains(out, want) {
		t.Errorf("want one line %q, got %d:\n%s", want, n, out)
	}
	if !strings.Contains(out, "connection: live\n") || strings.LastIndex(out, "connection: live\n") < strings.Index(out, "connection: reconnecting") {
		t.Errorf("no line when the connection came back:\n%s", out)
	}
}

// Credentials revoked mid-watch: every kind's relist is refused (401),
// again at each retry. The plain watch says it once, on the connection
// line, and once more when they work again.
func TestWatchSaysRefusedCredentialsOnce(t *testing.T) {
	refused := model.CredentialsRefused + ": Unauthorized"
	states := []*model.ClusterState{withSources(etcdRollout(2), model.Live, "", nil)}
	errs := map[model.Kind]string{}
	for _, k := range []model.Kind{model.KindMachine, model.KindNode, model.KindEvent, model.KindMachine, model.KindLease} {
		errs[k] = model.CredentialsRefused + ": failed to list " + strings.ToLower(string(k)) + ": Unauthorized"
		states = append(states, withSources(etcdRollout(2), model.Reconnecting, refused, maps.Clone(errs)))
	}
	states = append(states, withSources(healthy(), model.Live, "", nil))
	_, out, _ := runWatch(t, context.Background(), WatchOptions{ExitOnDone: true}, states...)
	if n := strings.Count(out, "connection: reconnecting: "+refused+" (fix: "+model.CredentialsFix+")\n"); n != 1 || strings.Contains(out, " watch ") {
		t.Errorf("want one connection line saying the credentials are refused, and no kind's own, got %d:\n%s", n, out)
	}
	if !strings.Contains(out, "connection: live\n") || strings.LastIndex(out, "connection: live\n") < strings.Index(out, "connection: reconnecting") {
		t.Errorf("no line when the credentials worked again:\n%s", out)
	}
}

// Lost to a frozen API server, then refused by it once it answered (the
// ServiceAccount deleted meanwhile): the connection stays reconnecting, and
// the plain watch said only the timeout, for as long as the refusal lasted.
// The refusal is said once, with its fix.
func TestWatchSaysCredentialsRefusedWhileReconnecting(t *testing.T) {
	timeout := "10.0.0.5:6443: net/http: TLS handshake timeout"
	refused := model.CredentialsRefused + ": Unauthorized"
	states := []*model.ClusterState{
		withSources(etcdRollout(2), model.Live, "", nil),
		withSources(etcdRollout(2), model.Reconnecting, timeout, nil),
		withSources(etcdRollout(2), model.Reconnecting, refused, nil),
		withSources(etcdRollout(2), model.Reconnecting, refused, nil),
		withSources(etcdRollout(2), model.Reconnecting, refused, nil),
		withSources(healthy(), model.Live, "", nil),
	}
	_, out, _ := runWatch(t, context.Background(), WatchOptions{ExitOnDone: true}, states...)
	if !strings.Contains(out, "connection: reconnecting: "+timeout+"\n") {
		t.Errorf("the lost connection is not said:\n%s", out)
	}
	if n := strings.Count(out, "connection: reconnecting: "+refused+" (fix: "+model.CredentialsFix+")\n"); n != 1 {
		t.Errorf("want the refusal said once with its fix, got %d:\n%s", n, out)
	}
}

// A kind's own error on a live connection (its watch refused, not lost) is
// said when it changes, and one held while the connection was lost once the
// connection is back.
func TestChangesSayAKindsOwnError(t *testing.T) {
	notFound := "the server could not find the requested resource (get machines.cluster.x-k8s.io)"
	a := withSources(etcdRollout(1), model.Live, "", nil)
	b := withSources(etcdRollout(1), model.Live, "", map[model.Kind]string{model.KindMachine: notFound})
	if out := texts(Changes(a, b, derive(a), derive(b), t0)); !strings.Contains(out, "watch Machine: "+notFound) {
		t.Errorf("a kind's own error on a live connection is not said:\n%s", out)
	}
	c := withSources(etcdRollout(1), model.Reconnecting, "connection refused", map[model.Kind]string{model.KindMachine: notFound})
	d := withSources(etcdRollout(1), model.Live, "", map[model.Kind]string{model.KindMachine: notFound})
	if out := texts(Changes(c, d, derive(c), derive(d), t0)); !strings.Contains(out, "watch Machine: "+notFound) || !strings.Contains(out, "connection: live") {
		t.Errorf("an error held over the connection's return is not said:\n%s", out)
	}
}

// eksaOnly is s seen by a user who may read the EKS-A API group only (the
// reviewer's `--as bob --as-group eksaonly`): every other list is refused,
// so the snapshot holds none of those objects.
func eksaOnly(s *model.ClusterState) *model.ClusterState {
	synced := model.SourceStatus{Installed: true, Version: "v1alpha1", Synced: true}
	s.Sources = map[model.Kind]model.SourceStatus{
		model.KindEKSACluster: synced, model.KindNodeUpgrade: synced,
		model.KindControlPlaneUpgrade: synced, model.KindMachineDeploymentUpgrade: synced,
	}
	for k, perm := range map[model.Kind]string{
		model.KindCAPICluster:         "list clusters.cluster.x-k8s.io in eksa-system",
		model.KindEtcdadmCluster:      "list etcdadmclusters.etcdcluster.cluster.x-k8s.io in eksa-system",
		model.KindKubeadmControlPlane: "list kubeadmcontrolplanes.controlplane.cluster.x-k8s.io in eksa-system",
		model.KindMachineDeployment:   "list machinedeployments.cluster.x-k8s.io in eksa-system",
		model.KindMachine:             "list machines.cluster.x-k8s.io in eksa-system",
		model.KindNode:                "list nodes (cluster-wide)",
		model.KindEvent:               "list events in eksa-system",
		model.KindLease:               "list leases.coordination.k8s.io in eksa-system",
	} {
		s.Sources[k] = model.SourceStatus{Installed: true, Forbidden: perm}
	}
	s.CAPICluster, s.Etcd, s.ControlPlane, s.MachineDeployments, s.Events = nil, nil, nil, nil, nil
	s.Machines, s.Nodes = model.List[model.Machine]{}, model.List[model.Node]{}
	return s
}

// phaseLines are the lines about the phases, one per line.
func phaseLines(out string) []string {
	var ls []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "Z phase") {
			ls = append(ls, l)
		}
	}
	return ls
}

// noCountOfForbidden fails on a phase line that counts, or calls under way
// on nothing seen, what the watcher may not list.
func noCountOfForbidden(t *testing.T, out string) {
	t.Helper()
	for _, l := range phaseLines(out) {
		for _, bad := range []string{"0 ready", "ready in all", "upgraded and ready", "0/"} {
			if strings.Contains(l, bad) {
				t.Errorf("a phase line counts what is not visible (%q): %s", bad, l)
			}
		}
		if strings.Contains(l, ": active") && !strings.Contains(l, "per the EKS-A Cluster: ") {
			t.Errorf("a phase line is active on nothing seen: %s", l)
		}
	}
}

// The reviewer's case: at rest, seen by a user who may read the EKS-A API
// group only. The phase lines said "phase: etcd", "etcd: active",
// "workers: active: 0/4 nodes upgraded and ready, 0 ready in all", and the
// next line "upgrade: none under way: every completion milestone met".
func TestPhaseLinesOfForbiddenKindsAgreeWithCompletion(t *testing.T) {
	s := eksaOnly(healthyWith(4))
	out := texts(Changes(nil, s, nil, derive(s), t0))
	for _, want := range []string{
		"Z access: forbidden: list nodes (cluster-wide) (the Node pane stays empty; fix: grant a ClusterRole with {apiGroups: [\"\"], resources: [nodes], verbs: [list, watch]} and a ClusterRoleBinding to the identity (check: `kubectl auth can-i list nodes`))",
		"Z phase: done\n",
		"Z phase etcd: done: EtcdadmCluster not visible (forbidden: list etcdadmclusters.etcdcluster.cluster.x-k8s.io in eksa-system); per the EKS-A Cluster: ControlPlaneReady True\n",
		"Z phase control plane: done: KubeadmControlPlane and Machines not visible (forbidden: list kubeadmcontrolplanes.controlplane.cluster.x-k8s.io in eksa-system, " +
			"list machines.cluster.x-k8s.io in eksa-system); per the EKS-A Cluster: ControlPlaneReady True\n",
		"Z phase workers: done: MachineDeployments and Machines not visible (forbidden: list machinedeployments.cluster.x-k8s.io in eksa-system, " +
			"list machines.cluster.x-k8s.io in eksa-system); per the EKS-A Cluster: WorkersReady True\n",
		"Z upgrade: none under way: every completion milestone met",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	for _, l := range phaseLines(out) {
		if !strings.Contains(l, "Z phase: done") && !strings.Contains(l, ": done") && !strings.Contains(l, ": skipped") {
			t.Errorf("a phase line contradicts the completion rule met: %s", l)
		}
	}
	noCountOfForbidden(t, out)

	// The watch as the reviewer ran it: the same lines, and the outcome.
	o, wout, _ := runWatch(t, context.Background(), WatchOptions{ExitOnDone: true}, eksaOnly(healthyWith(4)))
	if o != Done || !strings.Contains(wout, "phase: done") || !strings.Contains(wout, "outcome: done (the cluster was at rest") {
		t.Errorf("outcome %s:\n%s", o, wout)
	}
	noCountOfForbidden(t, wout)
}

// Through an upgrade the same user's phase lines follow the Cluster's
// conditions (they stayed on "phase: … → etcd" to the end).
func TestPhaseLinesOfForbiddenKindsFollowTheConditions(t *testing.T) {
	with := func(cp, workers, ready model.Condition) *model.ClusterState {
		s := eksaOnly(healthyWith(4))
		s.Cluster.Conditions = model.Conditions{cp, workers, ready}
		return s
	}
	etcdRolling := cond("ControlPlaneReady", "False", model.SeverityInfo, "RollingUpgradeInProgress", "Etcd is not ready")
	cpRolling := cond("ControlPlaneReady", "False", model.SeverityInfo, "RollingUpgradeInProgress", "Control plane nodes not up-to-date yet, 4 upgrading (1 up to date)")
	wRolling := cond("WorkersReady", "False", model.SeverityInfo, "RollingUpgradeInProgress", "Worker nodes not up-to-date yet, 5 upgrading (1 up to date)")
	cpOK, wOK, readyOK := cond("ControlPlaneReady", "True", "", "", ""), cond("WorkersReady", "True", "", "", ""), cond("Ready", "True", "", "", "")
	notReady := func(c model.Condition) model.Condition {
		c.Type = "Ready"
		return c
	}
	wRolling3 := wRolling
	wRolling3.Message = "Worker nodes not up-to-date yet, 5 upgrading (3 up to date)"
	states := []*model.ClusterState{
		with(etcdRolling, wOK, notReady(etcdRolling)),
		with(cpRolling, wOK, notReady(cpRolling)),
		with(cpOK, wRolling, notReady(wRolling)),
		with(cpOK, wRolling3, notReady(wRolling3)),
		with(cpOK, wOK, readyOK),
	}
	var b strings.Builder
	var prev *model.ClusterState
	var prevP *model.Progress
	for _, s := range states {
		p := derive(s)
		b.WriteString(texts(Changes(prev, s, prevP, p, t0)))
		prev, prevP = s, p
	}
	out := b.String()
	for _, want := range []string{
		"Z phase: etcd\n",
		"Z phase etcd: active: EtcdadmCluster not visible (forbidden: list etcdadmclusters.etcdcluster.cluster.x-k8s.io in eksa-system); " +
			"per the EKS-A Cluster: ControlPlaneReady False: RollingUpgradeInProgress: Etcd is not ready\n",
		// Pending, yet said why: not seen, and what the Cluster says.
		"Z phase control plane: pending: KubeadmControlPlane and Machines not visible (forbidden: list kubeadmcontrolplanes.controlplane.cluster.x-k8s.io in eksa-system, " +
			"list machines.cluster.x-k8s.io in eksa-system); per the EKS-A Cluster: ControlPlaneReady False: RollingUpgradeInProgress: Etcd is not ready\n",
		"Z phase workers: pending: MachineDeployments and Machines not visible (forbidden: list machinedeployments.cluster.x-k8s.io in eksa-system, " +
			"list machines.cluster.x-k8s.io in eksa-system); waiting for etcd\n",
		"Z phase: etcd → control plane\n",
		"Z phase etcd: done: EtcdadmCluster not visible (forbidden: list etcdadmclusters.etcdcluster.cluster.x-k8s.io in eksa-system); " +
			"per the EKS-A Cluster: ControlPlaneReady no longer waits for etcd\n",
		"per the EKS-A Cluster: ControlPlaneReady False: RollingUpgradeInProgress: Control plane nodes not up-to-date yet, 4 upgrading (1 up to date)\n",
		"Z phase: control plane → workers\n",
		"Z phase workers: active: MachineDeployments and Machines not visible (forbidden: list machinedeployments.cluster.x-k8s.io in eksa-system, " +
			"list machines.cluster.x-k8s.io in eksa-system); per the EKS-A Cluster: WorkersReady False: RollingUpgradeInProgress: Worker nodes not up-to-date yet, 5 upgrading (1 up to date)\n",
		// No count to move: the Cluster's own line says how it goes.
		"Z Cluster mgmt: WorkersReady False (Info) RollingUpgradeInProgress: Worker nodes not up-to-date yet, 5 upgrading (3 up to date)\n",
		"Z phase: workers → done\n",
		"Z upgrade: every completion milestone met; confirming it holds",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "Z phase workers: active: "); n != 1 {
		t.Errorf("%d lines say the workers are active, want 1 (the long reason is not repeated at each message):\n%s", n, out)
	}
	noCountOfForbidden(t, out)
}

// The Cluster API Cluster's pause is said as it comes and goes: paused, no
// machine rolls, and the plain watch said only that nothing moved.
func TestChangesSayTheClusterAPIPause(t *testing.T) {
	a := etcdRollout(3)
	a.CAPICluster = &model.CAPICluster{Meta: model.Meta{Name: "mgmt", Namespace: "eksa-system"}}
	b := clone(a)
	b.CAPICluster = &model.CAPICluster{Meta: model.Meta{Name: "mgmt", Namespace: "eksa-system"}, Paused: true}
	if out := texts(Changes(a, b, derive(a), derive(b), t0)); !strings.Contains(out, "Cluster.cluster.x-k8s.io mgmt: paused (spec.paused: Cluster API rolls no machine until it is resumed)") {
		t.Errorf("pause not said:\n%s", out)
	}
	if out := texts(Changes(b, a, derive(b), derive(a), t0)); !strings.Contains(out, "Cluster.cluster.x-k8s.io mgmt: resumed") {
		t.Errorf("resume not said:\n%s", out)
	}
	if out := texts(Changes(nil, b, nil, derive(b), t0)); !strings.Contains(out, "mgmt: paused (spec.paused") {
		t.Errorf("a pause at the watch's start not said:\n%s", out)
	}
	if out := texts(Changes(a, a, derive(a), derive(a), t0)); strings.Contains(out, "spec.paused") {
		t.Errorf("said with nothing paused:\n%s", out)
	}
}

// EKS-A deletes a group's NodeUpgrades with its ControlPlaneUpgrade or
// MachineDeploymentUpgrade, the last node's before its last steps were seen:
// the log ended on "step …: Container is still running" and never said the
// objects went.
func TestChangesSayInPlaceObjectsDeleted(t *testing.T) {
	a := etcdRollout(2)
	a.NodeUpgrades = model.ListOf(
		&model.NodeUpgrade{Meta: meta("a-node-upgrader"), Kind: model.KindNodeUpgrade, MachineName: "a", Completed: true},
		&model.NodeUpgrade{Meta: meta("b-node-upgrader"), Kind: model.KindNodeUpgrade, MachineName: "b"},
	)
	a.UpgradeRequests = []model.UpgradeRequest{{Meta: meta("mgmt-cp-upgrade"), Kind: model.KindControlPlaneUpgrade, Upgraded: 2, RequireUpgrade: 1}}
	b := clone(a)
	b.NodeUpgrades = model.ListOf[model.NodeUpgrade]()
	b.UpgradeRequests = nil
	out := texts(Changes(a, b, derive(a), derive(b), t0))
	for _, want := range []string{
		"NodeUpgrade a-node-upgrader: deleted (completed)",
		"NodeUpgrade b-node-upgrader: deleted before it was seen completed",
		"ControlPlaneUpgrade mgmt-cp-upgrade: deleted (when last seen: 2 upgraded, 1 to go)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q:\n%s", want, out)
		}
	}
}

// An identity that may not list Nodes: the workers' counts are of the
// Machines (ready by their own Ready condition), and the phase line, as
// `watch --plain` and `apply --wait` print it, says so; "2/2 nodes" claimed
// Nodes the console never saw.
func TestWorkersPhaseLineNamesWhatItCounts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		forbid bool
		want   string
	}{
		{"nodes listed", false, "Z phase workers: done: 2/2 nodes upgraded and ready, 2 ready in all\n"},
		{"nodes forbidden", true, "Z phase workers: done: 2/2 machines upgraded and ready, 2 ready in all\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := withSources(healthyWith(2), model.Live, "", nil)
			s.Cluster.KubernetesVersion = "1.30" // what the machines run
			for _, m := range s.Machines.All() {
				if m.Role == model.RoleWorker {
					m.Conditions = model.Conditions{cond(model.ConditionReady, "True", "", "", "")}
				}
			}
			if tc.forbid {
				s.Sources[model.KindNode] = model.SourceStatus{Installed: true, Forbidden: "list nodes (cluster-wide)"}
				s.Nodes = model.List[model.Node]{}
			}
			_, out, _ := runWatch(t, context.Background(), WatchOptions{ExitOnDone: true}, s)
			if !strings.Contains(out, tc.want) {
				t.Errorf("lacks %q:\n%s", tc.want, out)
			}
		})
	}
}

// An API server restarting refuses every request (403) until it has loaded
// RBAC: a user who may read everything got "access: forbidden: watch leases
// …", and nothing said it was over once the watch worked again.
func TestAccessRestoredIsSaid(t *testing.T) {
	synced := model.SourceStatus{Installed: true, Version: "v1", Synced: true}
	denied := synced
	denied.Forbidden = "watch leases.coordination.k8s.io in eksa-system"
	s1 := healthyWith(2)
	s1.Sources = map[model.Kind]model.SourceStatus{model.KindLease: synced}
	s2 := *s1
	s2.Sources = map[model.Kind]model.SourceStatus{model.KindLease: denied}
	s3 := s2
	s3.Sources = map[model.Kind]model.SourceStatus{model.KindLease: synced}
	out := texts(Changes(s1, &s2, derive(s1), derive(&s2), t0)) + texts(Changes(&s2, &s3, derive(&s2), derive(&s3), t0))
	for _, want := range []string{
		"Z access: forbidden: watch leases.coordination.k8s.io in eksa-system (the upgrade lock is not shown",
		"Z access: restored: watch leases.coordination.k8s.io in eksa-system\n",
	} {
		if strings.Count(out, want) != 1 {
			t.Errorf("want %q once:\n%s", want, out)
		}
	}
	// An uninstalled kind's refusal is not restored access.
	s4 := s2
	s4.Sources = map[model.Kind]model.SourceStatus{model.KindLease: {Installed: false, Synced: true}}
	if out := texts(Changes(&s2, &s4, derive(&s2), derive(&s4), t0)); strings.Contains(out, "restored") {
		t.Errorf("a kind uninstalled reads as restored access:\n%s", out)
	}
}
