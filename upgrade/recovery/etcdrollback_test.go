package recovery

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

func TestEtcdRollbackRefusesWithTheReason(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(w *world)
		want   string
	}{
		{"before the threshold", func(w *world) { w.now = time.Now() }, "new-member-not-ready"},
		{"new member became ready", func(w *world) {
			w.patch(gvrMachine, w.sys, w.cluster+"-etcd-z", `{"metadata":{"labels":{"`+model.LabelEtcdReady+`":"true"}}}`)
		}, "new-member-not-ready"},
		{"an old member was released", func(w *world) {
			w.patch(gvrMachine, w.sys, w.cluster+"-etcd-a", `{"metadata":{"ownerReferences":null}}`)
		}, "no-old-member-removed"},
		// Still owned, but going: deleting the new member as well would
		// leave two of four members, below quorum.
		{"an old member is being deleted", func(w *world) { w.deleteHeld(w.cluster + "-etcd-a") }, "no-old-member-removed"},
		{"two new members", func(w *world) {
			m, err := w.client.Dynamic.Resource(gvrMachine).Namespace(w.sys).Get(w.ctx, w.cluster+"-etcd-z", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			m = m.DeepCopy()
			m.SetName(w.cluster + "-etcd-zz")
			m.SetResourceVersion("")
			m.SetUID("")
			w.create(gvrMachine, m)
		}, "single-new-member"},
		{"no new spec", func(w *world) {
			w.patch(upgrade.GVREtcdadmCluster, w.sys, w.cluster+"-etcd", `{"spec":{"etcdadmConfigSpec":{"cloudInitConfig":{"version":"`+oldEtcdVersion+`"}},"infrastructureTemplate":{"apiVersion":"infrastructure.cluster.x-k8s.io/v1beta1","kind":"VSphereMachineTemplate","name":"`+oldEtcdTemplate+`"}}}`)
		}, "rollout-in-progress"},
		{"the rollout also resizes etcd", func(w *world) {
			w.patch(upgrade.GVREtcdadmCluster, w.sys, w.cluster+"-etcd", `{"spec":{"replicas":5}}`)
		}, "same-member-count"},
		{"no snapshot", func(w *world) {
			if err := w.client.Kube.CoreV1().ConfigMaps(w.sys).DeleteCollection(w.ctx, metav1.DeleteOptions{},
				metav1.ListOptions{LabelSelector: upgrade.LabelCluster + "=" + w.cluster}); err != nil {
				t.Fatal(err)
			}
		}, "snapshot"},
		// No snapshot and no rollout either: the refusal says the latter
		// first, not only how to restore from a copy.
		{"no snapshot, etcd settled", func(w *world) {
			if err := w.client.Kube.CoreV1().ConfigMaps(w.sys).DeleteCollection(w.ctx, metav1.DeleteOptions{},
				metav1.ListOptions{LabelSelector: upgrade.LabelCluster + "=" + w.cluster}); err != nil {
				t.Fatal(err)
			}
			w.patch(upgrade.GVREtcdadmCluster, w.sys, w.cluster+"-etcd", `{"metadata":{"annotations":{"`+model.AnnotationEtcdUpgrading+`":null}}}`)
			etcd, err := w.client.Dynamic.Resource(upgrade.GVREtcdadmCluster).Namespace(w.sys).Get(w.ctx, w.cluster+"-etcd", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			w.setStatus(upgrade.GVREtcdadmCluster, w.sys, w.cluster+"-etcd", map[string]any{"ready": true, "replicas": int64(3), "observedGeneration": etcd.GetGeneration()})
		}, "rollout-in-progress"},
		{"another console holds a live lock", func(w *world) { w.lease("alice@laptop/1234", w.now) }, "no-live-lock"},
		// The newest snapshot is an earlier upgrade's: restored, its spec
		// would replace every member.
		{"the snapshot predates the members", func(w *world) { w.backdateSnapshot() }, "snapshot-of-these-members"},
		{"an old member was cloned from another template", func(w *world) {
			w.patch(gvrMachine, w.sys, w.cluster+"-etcd-b", `{"metadata":{"annotations":{"`+clusterv1.TemplateClonedFromNameAnnotation+`":"etcd-template-of-a-later-upgrade"}}}`)
		}, "snapshot-of-these-members"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.seedEtcdRollout(true)
			if _, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{}); err != nil {
				t.Fatalf("the seeded world must be rollback-able: %v", err)
			}
			tc.mutate(w)
			_, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
			var refused *RefusedError
			if !errors.As(err, &refused) {
				t.Fatalf("err = %v, want a refusal", err)
			}
			failed := refused.Failed()
			if len(failed) == 0 || failed[0].Name != tc.want {
				t.Fatalf("failed preconditions = %+v, want %s first", failed, tc.want)
			}
			if failed[0].Detail == "" {
				t.Errorf("refusal %s gives no reason", tc.want)
			}
			// A console that died cannot be stopped: the refusal says when
			// its lock turns stale, and that the rollback then goes on.
			if tc.want == "no-live-lock" && !strings.Contains(failed[0].Detail, "turn stale at ") {
				t.Errorf("no-live-lock detail %q does not say when the lock turns stale", failed[0].Detail)
			}
			if want := "EtcdadmCluster " + w.sys + "/" + w.cluster + "-etcd"; refused.Object != want {
				t.Errorf("refusal object = %q, want %q", refused.Object, want)
			}
		})
	}

	t.Run("stacked etcd", func(t *testing.T) {
		w := newWorld(t)
		w.create(upgrade.GVREKSACluster, obj("anywhere.eks.amazonaws.com/v1alpha1", "Cluster", w.ns, w.cluster, nil, nil, map[string]any{"kubernetesVersion": "1.31"}))
		_, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
		var refused *RefusedError
		if !errors.As(err, &refused) || refused.Failed()[0].Name != "external-etcd" {
			t.Fatalf("err = %v, want refusal external-etcd", err)
		}
	})
}

func TestEtcdRollbackPlanNamesEveryChange(t *testing.T) {
	w := newWorld(t)
	w.seedEtcdRollout(true)
	p, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"pause-eksa-reconcile", "restore-etcd-spec", "delete-new-machine", "wait-etcd-ready", "clear-etcd-upgrading", "unpause-kcp", "record-finished"}
	if len(p.Steps) != len(want) {
		t.Fatalf("steps = %d, want %v", len(p.Steps), want)
	}
	for i, s := range p.Steps {
		if s.Name != want[i] || s.Object == "" || s.Change == "" {
			t.Errorf("step %d = %s %q %q, want %s with object and change", i, s.Name, s.Object, s.Change, want[i])
		}
	}
	restore := p.Steps[1].Change
	for _, part := range []string{"cloudInitConfig.version: " + newEtcdVersion + " → " + oldEtcdVersion, "infrastructureTemplate.name: " + newEtcdTemplate + " → " + oldEtcdTemplate} {
		if !strings.Contains(restore, part) {
			t.Errorf("restore change %q lacks %q", restore, part)
		}
	}
	// The step the console cannot take: a new member that joined stays in
	// etcd's member list after its Machine is deleted by anyone but
	// etcdadm-controller.
	if notes := strings.Join(p.Notes, "\n"); !strings.Contains(notes, "etcdctl member remove") {
		t.Errorf("the notes do not say to remove a joined member:\n%s", notes)
	}
	if p.Confirm != w.cluster+"-etcd" || p.ConfirmMatches(w.cluster) || !p.ConfirmMatches(" "+w.cluster+"-etcd\n") {
		t.Errorf("confirmation name = %q", p.Confirm)
	}

	// Without the KCP paused, the plan leaves the KCP alone.
	w2 := newWorld(t)
	w2.seedEtcdRollout(false)
	p2, err := PlanEtcdRollback(w2.ctx, w2.env, EtcdRollbackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p2.Steps {
		if s.Name == "unpause-kcp" {
			t.Error("unpause-kcp planned although the KCP was not paused")
		}
	}
}

func TestEtcdRollbackDryRunAndReadOnlyWriteNothing(t *testing.T) {
	w := newWorld(t)
	w.seedEtcdRollout(true)
	before := w.rollbackState()
	p, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// Read-only: not even a dry run reaches the API server.
	writes := w.writes.Load()
	ro := &Executor{Audit: w.audit, ReadOnly: true}
	if _, err := ro.DryRun(w.ctx, p); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("read-only dry run: %v", err)
	}
	if _, err := ro.Run(w.ctx, p); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("read-only run: %v", err)
	}
	if n := w.writes.Load() - writes; n != 0 {
		t.Fatalf("read-only mode sent %d write requests", n)
	}
	if len(w.auditEntries()) != 0 {
		t.Fatal("read-only mode recorded entries")
	}

	x := &Executor{Audit: w.audit}
	rep, err := x.DryRun(w.ctx, p)
	if err != nil {
		t.Fatalf("dry run: %v\n%s", err, describeSteps(rep))
	}
	for _, s := range rep.Steps {
		want := StepDryRunOK
		if s.Step == "wait-etcd-ready" {
			want = StepNotDryRun
		}
		if s.Status != want {
			t.Errorf("dry run step %s = %s (%s), want %s", s.Step, s.Status, s.Detail, want)
		}
	}
	if after := w.rollbackState(); after != before {
		t.Fatalf("the dry run changed the cluster:\n%+v\n%+v", before, after)
	}
	for _, e := range w.auditEntries() {
		if !e.DryRun || e.Result != upgrade.AuditDryRun {
			t.Errorf("dry-run audit entry %+v", e)
		}
	}
}

func TestEtcdRollbackRestoresTheClusterAndAuditsEveryWrite(t *testing.T) {
	w := newWorld(t)
	w.seedEtcdRollout(true)
	kcpBefore := w.rollbackState().KCPSpec
	w.playEtcdadm()
	// The console was given --context: the resume it closes with, pasted
	// in a shell on another context, resumes this cluster.
	w.env.Conn = model.ConnFlags{{Name: "context", Value: "prod"}}
	p, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{By: "ops@bastion"})
	if err != nil {
		t.Fatal(err)
	}
	var seen []StepResult
	x := &Executor{Audit: w.audit, Progress: func(r StepResult) { seen = append(seen, r) }}
	// The operator takes a while to confirm: the record says when it ran.
	w.now = w.now.Add(7 * time.Minute)
	rep, err := x.Run(w.ctx, p)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, describeSteps(rep))
	}
	if c, err := w.res(upgrade.GVREKSACluster, w.ns).Get(w.ctx, w.cluster, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	} else if rec, err := readRollbackRecord(c, w.env); err != nil || rec == nil || !rec.StartedAt.Equal(w.now) {
		t.Errorf("rollback record %+v (%v): startedAt should be when it ran, %s", rec, err, w.now.UTC())
	}
	got := w.rollbackState()
	want := w.rolledBack(kcpBefore)
	if got != want {
		t.Fatalf("final state\n got %+v\nwant %+v", got, want)
	}
	if len(seen) != 2*len(p.Steps) {
		t.Errorf("progress callbacks = %d, want a start and an end per step", len(seen))
	}
	if len(rep.Closing) < 3 || !strings.Contains(rep.Closing[0], "ready, 3/3 members ready, etcd "+oldEtcdVersion) ||
		// Quoted: the dialog keeps a quoted command on one line (it split
		// it at 60 columns).
		!strings.Contains(strings.Join(rep.Closing, "\n"), "`upgrade-console lock clear paused --cluster "+w.cluster+" -n "+w.ns+" --context prod`") ||
		// The way to change the spec while paused, which the console's
		// apply refuses, reaching the same cluster.
		!strings.Contains(rep.Closing[len(rep.Closing)-1], "`kubectl --context prod apply --server-side --force-conflicts -f <spec file>`") ||
		!strings.Contains(strings.Join(rep.Closing, "\n"), "etcdctl member remove") {
		t.Errorf("closing message:\n%v", rep.Closing)
	}

	// The rollback held the upgrade lock while it ran, and gave it back.
	all := w.auditEntries()
	if n := len(all); n < 3 || all[1].Action != "lock-acquire" || all[1].Result != upgrade.AuditOK ||
		all[n-1].Action != "lock-release" || all[n-1].Result != upgrade.AuditOK {
		t.Fatalf("the run did not take and release the lock: %+v", all)
	}
	if st, err := upgrade.ReadLock(w.ctx, w.client.Kube, w.sys, w.cluster); err != nil || st != nil {
		t.Errorf("lock after the rollback: %+v %v", st, err)
	}
	var entries []upgrade.AuditEntry
	for _, e := range all {
		if e.Action == ActionEtcdRollback {
			entries = append(entries, e)
		}
	}
	if len(entries) != len(p.Steps)+2 || entries[0].Result != upgrade.AuditStarted || entries[len(entries)-1].Result != upgrade.AuditFinished {
		t.Fatalf("audit entries: %+v", entries)
	}
	for i, e := range entries[1 : len(entries)-1] {
		okResult := e.Result == upgrade.AuditOK || (p.Steps[i].Wait && e.Result == upgrade.AuditAlreadyDone)
		if e.Step != p.Steps[i].Name || !okResult || e.User != "ops" || e.Cluster != w.cluster || e.Action != ActionEtcdRollback || e.Object == "" {
			t.Errorf("entry %d: %+v", i, e)
		}
		if !p.Steps[i].Wait && (e.Before == nil || e.After == nil) {
			t.Errorf("write %s recorded without before/after", e.Step)
		}
	}

	// Running it again finds everything in place.
	requireNothingLeft(t, w, x)
}

// referenceRollback runs the rollback of a seeded etcd rollout from its
// snapshot ConfigMap, uninterrupted, and returns its plan and the state it
// ends in (normalise), which other ways to the same rollback must reach, and
// its world.
func referenceRollback(t *testing.T) (*world, *Plan, rollbackState) {
	t.Helper()
	ref := newWorld(t)
	ref.seedEtcdRollout(true)
	ref.playEtcdadm()
	p, err := PlanEtcdRollback(ref.ctx, ref.env, EtcdRollbackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&Executor{Audit: ref.audit}).Run(ref.ctx, p); err != nil {
		t.Fatal(err)
	}
	return ref, p, normalise(ref, ref.rollbackState())
}

// requireNothingLeft plans and runs the rollback of w again, with no
// snapshot flag, after it finished: every step must find its effect in place.
func requireNothingLeft(t *testing.T, w *world, x *Executor) {
	t.Helper()
	p, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
	if err != nil {
		t.Fatalf("replan after a finished rollback: %v", err)
	}
	// Not "resuming": it read as a rollback cut short.
	for _, c := range p.Preconditions {
		if c.Name == "resume" && (!strings.Contains(c.Detail, "and finished") || strings.Contains(c.Detail, "resuming")) {
			t.Errorf("a finished rollback planned again: %s", c.Detail)
		}
	}
	rep, err := x.Run(w.ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Steps {
		if s.Status != StepAlreadyDone {
			t.Errorf("second run: step %s %s", s.Step, s.Status)
		}
	}
}

func TestEtcdRollbackResumesAfterAnInterruptionAtEveryStep(t *testing.T) {
	resumeAtEveryStep(t, resumeCase{})
}

// resumeCase adapts resumeAtEveryStep to a snapshot source: start readies
// a seeded world and returns the options of the first run; stopped checks the
// world after the interruption; resumed checks the resumed plan.
type resumeCase struct {
	start   func(t *testing.T, w *world) EtcdRollbackOptions
	stopped func(t *testing.T, w *world)
	resumed func(t *testing.T, again *Plan)
}

// resumeAtEveryStep kills a rollback right after each of its steps in turn,
// plans and runs it again with no snapshot flag, and checks that the resumed
// run redoes nothing and ends in the state of an uninterrupted rollback, the
// interruption recorded.
func resumeAtEveryStep(t *testing.T, c resumeCase) {
	_, p, want := referenceRollback(t)
	for k := range p.Steps {
		t.Run(p.Steps[k].Name, func(t *testing.T) {
			w := newWorld(t)
			w.seedEtcdRollout(true)
			var opts EtcdRollbackOptions
			if c.start != nil {
				opts = c.start(t, w)
			}
			w.playEtcdadm()
			plan, err := PlanEtcdRollback(w.ctx, w.env, opts)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(w.ctx)
			x := &Executor{Audit: w.audit, afterStep: func(i int) {
				if i == k {
					cancel() // the console is killed right after step k
				}
			}}
			_, err = x.Run(ctx, plan)
			if k < len(plan.Steps)-1 && !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted run: %v", err)
			}
			cancel()
			if c.stopped != nil {
				c.stopped(t, w)
			}

			again, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
			if err != nil {
				t.Fatalf("replan after interruption at step %d: %v", k+1, err)
			}
			if c.resumed != nil {
				c.resumed(t, again)
			}
			rep, err := (&Executor{Audit: w.audit}).Run(w.ctx, again)
			if err != nil {
				t.Fatalf("resumed run: %v\n%s", err, describeSteps(rep))
			}
			for _, s := range rep.Steps[:k+1] {
				if s.Status != StepAlreadyDone {
					t.Errorf("resumed run redid step %s (%s)", s.Step, s.Status)
				}
			}
			if got := normalise(w, w.rollbackState()); got != want {
				t.Fatalf("final state after interruption at step %d\n got %+v\nwant %+v", k+1, got, want)
			}
			var failed int
			for _, e := range w.auditEntries() {
				if e.Result == upgrade.AuditFailed && e.Step == "" {
					failed++
				}
			}
			if k < len(plan.Steps)-1 && failed != 1 {
				t.Errorf("the interruption is not in the audit log (%d stop entries)", failed)
			}
		})
	}
}

// A rollback interrupted after its first step pauses only EKS-A: the etcdadm
// controller goes on. If the new member came up meanwhile, or an old one was
// released, the resumed rollback must not delete the new member.
func TestEtcdRollbackResumeRefusesWhenTheRolloutWentOn(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(w *world)
	}{
		{"the new member became ready", func(w *world) {
			w.patch(gvrMachine, w.sys, w.cluster+"-etcd-z", `{"metadata":{"labels":{"`+model.LabelEtcdReady+`":"true"}}}`)
		}},
		{"an old member was released", func(w *world) {
			w.patch(gvrMachine, w.sys, w.cluster+"-etcd-a", `{"metadata":{"ownerReferences":null}}`)
		}},
		{"an old member was deleted", func(w *world) {
			if err := w.client.Dynamic.Resource(gvrMachine).Namespace(w.sys).Delete(w.ctx, w.cluster+"-etcd-b", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}},
		// Held by a finalizer, it is still listed and owned: only its
		// deletionTimestamp says it is going.
		{"an old member is being deleted", func(w *world) { w.deleteHeld(w.cluster + "-etcd-b") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := interruptedAfterThePause(t)
			tc.mutate(w)
			_, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
			var refused *RefusedError
			if !errors.As(err, &refused) {
				t.Fatalf("err = %v, want a refusal", err)
			}
			if f := refused.Failed(); len(f) != 1 || f[0].Name != "resume-safe" || !strings.Contains(f[0].Detail, "lock clear paused --force") {
				t.Fatalf("failed preconditions = %+v, want resume-safe with the way out", f)
			}
			if _, err := w.client.Dynamic.Resource(gvrMachine).Namespace(w.sys).Get(w.ctx, w.cluster+"-etcd-z", metav1.GetOptions{}); err != nil {
				t.Fatalf("the new member: %v", err)
			}
		})
	}

	t.Run("another snapshot named on resume", func(t *testing.T) {
		w := interruptedAfterThePause(t)
		_, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{Snapshot: "other"})
		var in *model.InputError
		if !errors.As(err, &in) || !strings.Contains(in.Error(), "without --snapshot") {
			t.Fatalf("err = %v, want an input error naming the recorded snapshot", err)
		}
	})
}

// The plan waits any time for its dry run and the typed confirmation while
// the etcdadm controller goes on. A new member that came up meanwhile, and
// an old one released, were judged only when the plan was made: the run
// deleted the healthy new member. The run now checks again before its first
// write, and before the delete.
func TestEtcdRollbackRunChecksAgainThatTheRolloutIsStuck(t *testing.T) {
	rolloutWentOn := func(w *world) {
		w.patch(gvrMachine, w.sys, w.cluster+"-etcd-z", `{"metadata":{"labels":{"`+model.LabelEtcdReady+`":"true"}}}`)
		w.patch(gvrMachine, w.sys, w.cluster+"-etcd-a", `{"metadata":{"ownerReferences":null}}`)
	}
	for _, after := range []string{"", "restore-etcd-spec"} {
		name := "before the run"
		if after != "" {
			name = "after " + after
		}
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			w.seedEtcdRollout(true)
			p, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
			if err != nil {
				t.Fatal(err)
			}
			x := &Executor{Audit: w.audit}
			if after == "" {
				rolloutWentOn(w)
			} else {
				x.Progress = func(r StepResult) {
					if r.Step == after && r.Status != StepRunning {
						rolloutWentOn(w)
					}
				}
			}
			// A run that went on would wait for etcd, which nothing here
			// plays: it must fail, not hang.
			ctx, cancel := context.WithTimeout(w.ctx, 15*time.Second)
			defer cancel()
			rep, err := x.Run(ctx, p)
			var cc *ConcurrentChangeError
			if !errors.As(err, &cc) || !strings.Contains(cc.What, "became ready meanwhile") {
				t.Fatalf("run: %v, want a concurrent change naming the ready member\n%s", err, describeSteps(rep))
			}
			if _, err := w.client.Dynamic.Resource(gvrMachine).Namespace(w.sys).Get(w.ctx, w.cluster+"-etcd-z", metav1.GetOptions{}); err != nil {
				t.Fatalf("the new member was deleted: %v", err)
			}
			c, err := w.res(upgrade.GVREKSACluster, w.ns).Get(w.ctx, w.cluster, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if paused := c.GetAnnotations()[model.AnnotationEKSAPaused] == "true"; paused != (after != "") {
				t.Errorf("EKS-A paused %v: the refused first step must write nothing", paused)
			}
		})
	}
}

// A rollback resumed after its pause, whose rollout went on while the
// confirmation waited: the restore was its first write, unchecked, and put
// the old etcd spec back over a rollout past its first member.
func TestEtcdRollbackResumedChecksAgainBeforeTheRestore(t *testing.T) {
	w := interruptedAfterThePause(t)
	p, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	etcdSpec := func() any {
		u, err := w.res(upgrade.GVREtcdadmCluster, w.sys).Get(w.ctx, w.cluster+"-etcd", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		v, _, _ := unstructured.NestedFieldCopy(u.Object, "spec")
		return v
	}
	before := etcdSpec()
	w.patch(gvrMachine, w.sys, w.cluster+"-etcd-z", `{"metadata":{"labels":{"`+model.LabelEtcdReady+`":"true"}}}`)
	w.patch(gvrMachine, w.sys, w.cluster+"-etcd-a", `{"metadata":{"ownerReferences":null}}`)
	ctx, cancel := context.WithTimeout(w.ctx, 15*time.Second)
	defer cancel()
	rep, err := (&Executor{Audit: w.audit}).Run(ctx, p)
	var cc *ConcurrentChangeError
	if !errors.As(err, &cc) || !rep.Refused(err) {
		t.Fatalf("run: %v, want refused before any write\n%s", err, describeSteps(rep))
	}
	if after := etcdSpec(); !reflect.DeepEqual(after, before) {
		t.Errorf("the etcd spec was restored over a rollout that went on:\nbefore %v\nafter  %v", before, after)
	}
}

// A plan left at its confirmation while another console's rollback deleted
// the new member and EKS-A, resumed, finished the rollout with other new
// members: the old members are released. The run, and a resume of its
// record, found "the new machine is already deleted" enough, and restored
// the previous spec over a finished rollout, which rolled every member back.
func TestEtcdRollbackRefusesOnceTheRolloutWentOnWithoutTheNewMember(t *testing.T) {
	wentOnWithoutIt := func(w *world) {
		t.Helper()
		if err := w.client.Dynamic.Resource(gvrMachine).Namespace(w.sys).Delete(w.ctx, w.cluster+"-etcd-z", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		w.patch(gvrMachine, w.sys, w.cluster+"-etcd-a", `{"metadata":{"ownerReferences":null}}`)
	}
	const want = "is gone and the etcdadm controller has released or removed old member(s)"

	t.Run("a plan confirmed late", func(t *testing.T) {
		w := newWorld(t)
		w.seedEtcdRollout(true)
		p, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wentOnWithoutIt(w)
		etcdBefore := w.rollbackState()
		// A run that went on would wait for etcd, which nothing here
		// plays: it must fail, not hang.
		ctx, cancel := context.WithTimeout(w.ctx, 15*time.Second)
		defer cancel()
		rep, err := (&Executor{Audit: w.audit}).Run(ctx, p)
		var cc *ConcurrentChangeError
		if !errors.As(err, &cc) || !strings.Contains(cc.What, want) {
			t.Fatalf("run: %v, want a concurrent change saying the rollout went on\n%s", err, describeSteps(rep))
		}
		if got := w.rollbackState(); got != etcdBefore {
			t.Errorf("the refused run wrote:\n got %+v\nwant %+v", got, etcdBefore)
		}
	})

	t.Run("a resume", func(t *testing.T) {
		w := interruptedAfterThePause(t)
		wentOnWithoutIt(w)
		_, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
		var refused *RefusedError
		if !errors.As(err, &refused) {
			t.Fatalf("err = %v, want a refusal", err)
		}
		if f := refused.Failed(); len(f) != 1 || f[0].Name != "resume-safe" || !strings.Contains(f[0].Detail, want) || !strings.Contains(f[0].Detail, "lock clear paused --force") {
			t.Fatalf("failed preconditions = %+v, want resume-safe saying the rollout went on, with the way out", f)
		}
	})
}

// A plan left at its confirmation while the etcdadm controller began to
// delete an old member: the run must not delete the new member too, which
// would leave two of four members and etcd without quorum.
func TestEtcdRollbackRunRefusesWhileAnOldMemberIsBeingDeleted(t *testing.T) {
	w := newWorld(t)
	w.seedEtcdRollout(true)
	p, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.deleteHeld(w.cluster + "-etcd-a")
	etcdBefore := w.rollbackState()
	// A run that went on would wait for etcd, which nothing here plays: it
	// must fail, not hang.
	ctx, cancel := context.WithTimeout(w.ctx, 15*time.Second)
	defer cancel()
	rep, err := (&Executor{Audit: w.audit}).Run(ctx, p)
	var cc *ConcurrentChangeError
	if !errors.As(err, &cc) || !strings.Contains(cc.What, "released or removed old member(s) "+w.cluster+"-etcd-a") {
		t.Fatalf("run: %v, want a concurrent change naming the old member being deleted\n%s", err, describeSteps(rep))
	}
	if got := w.rollbackState(); got != etcdBefore {
		t.Errorf("the refused run wrote:\n got %+v\nwant %+v", got, etcdBefore)
	}
}

// The rollback deletes a member: offered a minute early, it removes one
// that was still joining (slow image pulls are common on bare metal); a
// minute late, the operator is kept waiting for no reason.
func TestEtcdRollbackIsOfferedOnceTheThresholdHasPassed(t *testing.T) {
	for _, threshold := range []time.Duration{0, 45 * time.Minute} {
		want := threshold
		if want == 0 {
			want = DefaultEtcdRollbackThreshold
		}
		t.Run(want.String(), func(t *testing.T) {
			w := newWorld(t)
			w.seedEtcdRollout(true)
			m, err := w.client.Dynamic.Resource(gvrMachine).Namespace(w.sys).Get(w.ctx, w.cluster+"-etcd-z", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			created := m.GetCreationTimestamp().Time
			o := EtcdRollbackOptions{Threshold: threshold}

			w.now = created.Add(want - time.Minute)
			_, err = PlanEtcdRollback(w.ctx, w.env, o)
			var refused *RefusedError
			if !errors.As(err, &refused) {
				t.Fatalf("a minute before the threshold: %v, want a refusal", err)
			}
			if f := refused.Failed(); len(f) != 1 || f[0].Name != "new-member-not-ready" {
				t.Fatalf("a minute before the threshold: failed preconditions = %+v, want new-member-not-ready alone", f)
			}

			w.now = created.Add(want + time.Minute)
			if _, err := PlanEtcdRollback(w.ctx, w.env, o); err != nil {
				t.Fatalf("a minute after the threshold: %v, want the rollback offered", err)
			}
		})
	}
}

// After an interruption the rollback's own markers are live, its to clear
// as it finishes: lock status called the KCP's pause a leftover, and `lock
// clear --all` would have taken it from under the unfinished rollback.
func TestAnUnfinishedRollbacksMarkersAreLive(t *testing.T) {
	w := interruptedAfterThePause(t)
	// Interrupted later, after its delete: etcd is ready again, on its old
	// members, and nothing is rolling.
	if err := w.client.Dynamic.Resource(gvrMachine).Namespace(w.sys).Delete(w.ctx, w.cluster+"-etcd-z", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	etcd, err := w.res(upgrade.GVREtcdadmCluster, w.sys).Get(w.ctx, w.cluster+"-etcd", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.setStatus(upgrade.GVREtcdadmCluster, w.sys, w.cluster+"-etcd", map[string]any{
		"ready": true, "replicas": int64(3), "observedGeneration": etcd.GetGeneration(), "initialized": true, "creationComplete": true})
	markers, err := ListMarkers(w.ctx, w.env, MarkerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range markers {
		switch m.ID {
		case MarkerPaused, MarkerKCPPaused, MarkerEtcdUpgrading:
			if m.State != MarkerLive || !strings.Contains(m.Reason, "is not finished") {
				t.Errorf("%s: %s (%s), want live, the unfinished rollback's", m.ID, m.State, m.Reason)
			}
		}
	}
}

// interruptedAfterThePause is a stuck etcd rollout whose rollback was killed
// right after its first step: EKS-A paused, the rollback recorded, nothing
// else done.
func interruptedAfterThePause(t *testing.T) *world {
	t.Helper()
	w := newWorld(t)
	w.seedEtcdRollout(true)
	w.interruptAfterFirstStep(EtcdRollbackOptions{})
	return w
}

// interruptAfterFirstStep plans the rollback with o and kills its run right
// after the first step.
func (w *world) interruptAfterFirstStep(o EtcdRollbackOptions) {
	w.t.Helper()
	p, err := PlanEtcdRollback(w.ctx, w.env, o)
	if err != nil {
		w.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(w.ctx)
	defer cancel()
	x := &Executor{Audit: w.audit, afterStep: func(int) { cancel() }}
	_, err = x.Run(ctx, p)
	if !errors.Is(err, context.Canceled) {
		w.t.Fatalf("interrupted run: %v", err)
	}
	// Said in words, as the audit log records it: "…: context canceled"
	// read as a fault.
	if want := "interrupted before step 2 (" + p.Steps[1].Title + ")"; err.Error() != want {
		w.t.Errorf("interrupted run says %q, want %q", err, want)
	}
}

func TestEtcdRollbackNeverClobbersAConcurrentSpecChange(t *testing.T) {
	w := newWorld(t)
	w.seedEtcdRollout(true)
	p, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Someone applies yet another etcd version after the plan was made.
	w.patch(upgrade.GVREtcdadmCluster, w.sys, w.cluster+"-etcd", `{"spec":{"etcdadmConfigSpec":{"cloudInitConfig":{"version":"3.5.22"}}}}`)
	_, err = (&Executor{Audit: w.audit}).Run(w.ctx, p)
	var cc *ConcurrentChangeError
	if !errors.As(err, &cc) {
		var st interface{ Status() metav1.Status }
		if errors.As(err, &st) {
			t.Logf("status: %+v", st.Status())
		}
		t.Fatalf("err = %v, want a ConcurrentChangeError", err)
	}
	if got := w.rollbackState().Version; got != "3.5.22" {
		t.Fatalf("etcd version = %s: the concurrent change was overwritten", got)
	}
}

// normalise drops what differs between worlds (names).
func normalise(w *world, s rollbackState) rollbackState {
	s.Record = strings.ReplaceAll(s.Record, w.cluster, "C")
	s.Machines = strings.ReplaceAll(s.Machines, w.cluster, "C")
	return s
}

// backdateSnapshot makes the world's snapshot older than its old members,
// as if an earlier upgrade had taken it: the snapshot's time is its
// ConfigMap's creation, by the API server's clock, which no write moves
// back, so the old members are made again after it instead (a second
// later, as the API server keeps whole seconds).
func (w *world) backdateSnapshot() {
	w.t.Helper()
	time.Sleep(1100 * time.Millisecond)
	res := w.capi(gvrMachine)
	for _, suffix := range []string{"a", "b", "c"} {
		name := w.cluster + "-etcd-" + suffix
		m, err := w.client.Dynamic.Resource(res).Namespace(w.sys).Get(w.ctx, name, metav1.GetOptions{})
		if err != nil {
			w.t.Fatal(err)
		}
		if err := w.client.Dynamic.Resource(res).Namespace(w.sys).Delete(w.ctx, name, metav1.DeleteOptions{}); err != nil {
			w.t.Fatal(err)
		}
		phase, _, _ := unstructured.NestedString(m.Object, "status", "phase")
		again := &unstructured.Unstructured{Object: map[string]any{"apiVersion": m.GetAPIVersion(), "kind": m.GetKind(), "spec": m.Object["spec"]}}
		again.SetName(name)
		again.SetNamespace(w.sys)
		again.SetLabels(m.GetLabels())
		again.SetAnnotations(m.GetAnnotations())
		again.SetOwnerReferences(m.GetOwnerReferences())
		w.create(res, again)
		w.setStatus(res, w.sys, name, map[string]any{"phase": phase})
	}
}

// deleteHeld deletes the machine name with a finalizer holding it: it stays,
// owned, with a deletionTimestamp, as while its provider tears the VM down.
func (w *world) deleteHeld(name string) {
	w.t.Helper()
	w.patch(gvrMachine, w.sys, name, `{"metadata":{"finalizers":["test.example/hold"]}}`)
	w.t.Cleanup(func() { w.patch(gvrMachine, w.sys, name, `{"metadata":{"finalizers":null}}`) })
	if err := w.client.Dynamic.Resource(gvrMachine).Namespace(w.sys).Delete(w.ctx, name, metav1.DeleteOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) patch(gvr schema.GroupVersionResource, ns, name, merge string) {
	w.t.Helper()
	if _, err := w.client.Dynamic.Resource(gvr).Namespace(ns).Patch(w.ctx, name, types.MergePatchType, []byte(merge), metav1.PatchOptions{}); err != nil {
		w.t.Fatalf("patch %s: %v", name, err)
	}
}

func TestEtcdRollbackResumesAfterTheAPIServerWentAway(t *testing.T) {
	w := newWorld(t)
	w.seedEtcdRollout(true)
	w.playEtcdadm()
	p, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cp.StartAPIServer(context.Background()); err != nil {
			t.Errorf("restart kube-apiserver: %v", err)
		}
	})
	x := &Executor{Audit: w.audit, afterStep: func(i int) {
		if i == 1 { // after the spec was restored
			if err := cp.StopAPIServer(); err != nil {
				t.Fatal(err)
			}
		}
	}}
	if _, err := x.Run(w.ctx, p); err == nil {
		t.Fatal("the run went on without an API server")
	}
	if err := cp.StartAPIServer(w.ctx); err != nil {
		t.Fatal(err)
	}
	again, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
	if err != nil {
		t.Fatalf("replan: %v", err)
	}
	rep, err := (&Executor{Audit: w.audit}).Run(w.ctx, again)
	if err != nil {
		t.Fatalf("resumed run: %v\n%s", err, describeSteps(rep))
	}
	got := w.rollbackState()
	if got.Version != oldEtcdVersion || got.Template != oldEtcdTemplate || !got.EtcdReady || got.KCPPaused || got.Upgrading || !strings.HasPrefix(got.Record, "done ") {
		t.Fatalf("final state after the API server came back: %+v", got)
	}
	if rep.Steps[0].Status != StepAlreadyDone || rep.Steps[1].Status != StepAlreadyDone {
		t.Errorf("steps before the outage were redone:\n%s", describeSteps(rep))
	}
}

// Two consoles rolling back at once: the second finds the first's lock when
// its run begins and changes nothing. A lock an earlier upgrade left stale is
// taken over (and recorded), since that upgrade is what is rolled back.
func TestEtcdRollbackHoldsTheUpgradeLock(t *testing.T) {
	t.Run("a second console is refused", func(t *testing.T) {
		w := newWorld(t)
		w.seedEtcdRollout(true)
		w.playEtcdadm()
		a, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
		if err != nil {
			t.Fatal(err)
		}
		other := *w.env
		other.Holder = upgrade.Holder{User: "bob", Host: "bastion-2", Instance: "b0b"}
		b, err := PlanEtcdRollback(w.ctx, &other, EtcdRollbackOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var bErr error
		var bRep Report
		// The other console's log is the same file, its entries its own.
		bAudit, err := upgrade.NewAuditor(w.audit.Path(), upgrade.WithAuditIdentity("bob", "bastion-2"), upgrade.WithAuditConsole("b0b"))
		if err != nil {
			t.Fatal(err)
		}
		x := &Executor{Audit: w.audit, afterStep: func(i int) {
			if i == 0 {
				bRep, bErr = (&Executor{Audit: bAudit}).Run(w.ctx, b)
			}
		}}
		if _, err := x.Run(w.ctx, a); err != nil {
			t.Fatalf("first console: %v", err)
		}
		var held *upgrade.LockHeldError
		if !errors.As(bErr, &held) || len(bRep.Steps) != 0 {
			t.Fatalf("second console: %v after %d steps, want a LockHeldError before any", bErr, len(bRep.Steps))
		}
		// Turned away, not stopped: recorded refused, and the start it
		// recorded has its end (audit said NO END RECORDED of it).
		res, err := upgrade.ReadAudit(w.audit.Path(), upgrade.AuditFilter{})
		if err != nil {
			t.Fatal(err)
		}
		var ends []string
		for _, e := range res.Entries {
			if e.Action == ActionEtcdRollback && e.Step == "" && e.Result != upgrade.AuditStarted {
				ends = append(ends, e.Result)
			}
		}
		if strings.Join(ends, " ") != upgrade.AuditRefused+" "+upgrade.AuditFinished {
			t.Errorf("the two runs ended as %v, want the second refused while the first ran, then the first finished", ends)
		}
		for i, open := range upgrade.Unended(res.Entries) {
			if open {
				t.Errorf("entry %d (%s %s) has no end recorded", i, res.Entries[i].Action, res.Entries[i].Result)
			}
		}
	})

	// A lock left stale, or kept by an upgrade that failed, is taken over,
	// and recorded as what it was (a kept one was said "stale").
	for _, state := range []string{"stale", "kept"} {
		t.Run("a "+state+" lock is taken over", func(t *testing.T) {
			w := newWorld(t)
			w.seedEtcdRollout(true)
			w.playEtcdadm()
			renewed := time.Now().Add(-2 * time.Hour)
			if state == "kept" {
				renewed = time.Now() // kept, not expired
			}
			w.lease("bob@old-laptop/77aa", renewed)
			if state == "kept" {
				w.keepLease("upgrade failed: etcd")
			}
			p, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := (&Executor{Audit: w.audit}).Run(w.ctx, p); err != nil {
				t.Fatal(err)
			}
			var takeover bool
			for _, e := range w.auditEntries() {
				takeover = takeover || (e.Action == "lock-takeover" && e.Result == upgrade.AuditOK &&
					strings.Contains(e.Message, "deleted the "+state+" Lease of bob@old-laptop"))
			}
			if !takeover {
				t.Errorf("the takeover of the %s lock is not in the audit log as such: %+v", state, w.auditEntries())
			}
			if st, err := upgrade.ReadLock(w.ctx, w.client.Kube, w.sys, w.cluster); err != nil || st != nil {
				t.Errorf("lock after the rollback: %+v %v", st, err)
			}
		})
	}
}

// The rollout-in-progress check says what the rollout changed, from the
// snapshot to now: the restore's own direction read as an upgrade taking
// etcd back a version.
func TestRolloutChangesReadFromTheSnapshotToNow(t *testing.T) {
	restore := []upgrade.FieldChange{
		{Path: "spec.etcdadmConfigSpec.cloudInitConfig.version", Old: "3.5.16", New: "3.5.15", Op: "change"},
		{Path: "spec.etcdadmConfigSpec.cipherSuites", New: "TLS_A", Op: "add"},
		{Path: "spec.etcdadmConfigSpec.preEtcdadmCommands", Old: "[x]", Op: "remove"},
	}
	got := describeChanges(rolledOut(restore))
	want := "spec.etcdadmConfigSpec.cloudInitConfig.version: 3.5.15 → 3.5.16; spec.etcdadmConfigSpec.cipherSuites: remove (TLS_A); spec.etcdadmConfigSpec.preEtcdadmCommands: set to [x]"
	if got != want {
		t.Errorf("rollout changes:\n got %s\nwant %s", got, want)
	}
	if restore[0].Old != "3.5.16" {
		t.Error("rolledOut changed the restore's own changes")
	}
}

// CAPI and etcdadm-controller put the cloned-from-name annotation on the
// infrastructure machine, not on the Machine: read from the Machine alone,
// the template guard never fired on a real cluster.
func TestEtcdRollbackReadsTheTemplateFromTheInfrastructureMachine(t *testing.T) {
	w := newWorld(t)
	w.seedEtcdRollout(true)
	gvrCRD := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "vspheremachines.infrastructure.cluster.x-k8s.io"},
		"spec": map[string]any{
			"group": "infrastructure.cluster.x-k8s.io", "scope": "Namespaced",
			"names": map[string]any{"kind": "VSphereMachine", "listKind": "VSphereMachineList", "plural": "vspheremachines", "singular": "vspheremachine"},
			"versions": []any{map[string]any{"name": "v1beta1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}}
	if _, err := w.client.Dynamic.Resource(gvrCRD).Create(w.ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	gvrInfra := schema.GroupVersionResource{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Resource: "vspheremachines"}
	infra := obj("infrastructure.cluster.x-k8s.io/v1beta1", "VSphereMachine", w.sys, "x-b", nil,
		map[string]any{clusterv1.TemplateClonedFromNameAnnotation: "etcd-template-of-a-later-upgrade"}, map[string]any{})
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := w.client.Dynamic.Resource(gvrInfra).Namespace(w.sys).Create(w.ctx, infra, metav1.CreateOptions{})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("create VSphereMachine: %v", err)
		}
		time.Sleep(200 * time.Millisecond) // until the CRD is established
	}
	w.patch(gvrMachine, w.sys, w.cluster+"-etcd-b", `{"metadata":{"annotations":{"`+clusterv1.TemplateClonedFromNameAnnotation+`":null}}}`)
	w.client.Mapper.Reset()
	_, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "snapshot-of-these-members") || !strings.Contains(err.Error(), "etcd-template-of-a-later-upgrade") {
		t.Errorf("a member cloned from another template, said by its VSphereMachine: %v", err)
	}
}

// A wait held by the new machine's deletion (a finalizer its provider does
// not remove) said "etcd not ready" and pointed at etcdadm-controller, with
// etcd ready in the same line.
func TestEtcdRollbackWaitNamesTheMachineDeletionThatHoldsIt(t *testing.T) {
	w := newWorld(t)
	w.seedEtcdRollout(true)
	newMachine := w.cluster + "-etcd-z"
	w.patch(gvrMachine, w.sys, newMachine, `{"metadata":{"finalizers":["test.example/hold"]}}`)
	t.Cleanup(func() { w.patch(gvrMachine, w.sys, newMachine, `{"metadata":{"finalizers":null}}`) })
	w.playEtcdadm()
	p, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{WaitTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&Executor{Audit: w.audit}).Run(w.ctx, p)
	var wait *WaitTimeoutError
	if !errors.As(err, &wait) || wait.What != "machine "+newMachine+" not deleted" || !strings.Contains(err.Error(), "finalizers") || strings.Contains(err.Error(), "etcdadm-controller") {
		t.Errorf("the wait's error: %v", err)
	}
}

// With no rollout in progress the snapshot guard is not judged: after a
// finished rollout every member is newer than the snapshot, and it told the
// operator to name "the snapshot taken just before this rollout", the very
// one it had.
func TestEtcdRollbackWithoutARolloutGivesNoSnapshotAdvice(t *testing.T) {
	w := newWorld(t)
	w.seedEtcdRollout(true)
	w.backdateSnapshot()
	w.patch(upgrade.GVREtcdadmCluster, w.sys, w.cluster+"-etcd", `{"spec":{"etcdadmConfigSpec":{"cloudInitConfig":{"version":"`+oldEtcdVersion+`"}},"infrastructureTemplate":{"apiVersion":"infrastructure.cluster.x-k8s.io/v1beta1","kind":"VSphereMachineTemplate","name":"`+oldEtcdTemplate+`"}}}`)
	_, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "rollout-in-progress") || strings.Contains(err.Error(), "Name the snapshot taken just before this rollout") {
		t.Errorf("refusal: %v", err)
	}
}

// The closing lines name a lock the failed upgrade kept (its console still
// open, following it): it blocks the next upgrade, and "resume with lock
// clear paused" alone left it unmentioned.
func TestRollbackClosingNamesAKeptLock(t *testing.T) {
	w := newWorld(t)
	w.seedEtcdRollout(true)
	if got := strings.Join(w.env.rollbackClosing(w.ctx), "\n"); strings.Contains(got, "lock clear lease") {
		t.Errorf("no lock, yet the closing names one:\n%s", got)
	}
	w.lease("alice@laptop/3f2a9c1e", time.Now())
	w.keepLease("upgrade failed: etcd")
	got := strings.Join(w.env.rollbackClosing(w.ctx), "\n")
	if !strings.Contains(got, "The upgrade lock is kept by alice@laptop") || !strings.Contains(got, "`upgrade-console lock clear lease --cluster "+w.cluster+" -n "+w.ns+"`") {
		t.Errorf("closing does not name the kept lock:\n%s", got)
	}
}

// keepLease marks the world's lock Lease kept, as a console does when its
// upgrade fails (upgrade.Locker.Keep).
func (w *world) keepLease(why string) {
	w.t.Helper()
	lease, err := w.client.Kube.CoordinationV1().Leases(w.sys).Get(w.ctx, upgrade.LockName(w.cluster), metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	lease.Annotations = map[string]string{model.AnnotationLockKept: why}
	if _, err := w.client.Kube.CoordinationV1().Leases(w.sys).Update(w.ctx, lease, metav1.UpdateOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

// The writer named is the last other than the console: its own restore,
// later, named it as the one that wrote the spec again.
func TestSpecWriterSkipsTheConsole(t *testing.T) {
	at := func(m int) *metav1.Time { return &metav1.Time{Time: time.Date(2026, 11, 25, 3, m, 0, 0, time.UTC)} }
	u := &unstructured.Unstructured{}
	u.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "eksa-controller", Operation: metav1.ManagedFieldsOperationApply, Time: at(1), FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:etcdadmConfigSpec":{}}}`)},
		{Manager: upgrade.ManagerName, Operation: metav1.ManagedFieldsOperationUpdate, Time: at(2), FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:infrastructureTemplate":{}}}`)},
		{Manager: "kubectl-annotate", Operation: metav1.ManagedFieldsOperationUpdate, Time: at(3), FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{}}}`)},
	})
	if w := specWriter(u); w.Manager != "eksa-controller" {
		t.Errorf("spec writer %+v, want eksa-controller", w)
	}
}

// An EKS-A reconcile that had not yet seen the pause writes the new etcd
// spec again right after the restore (its cache lags; the demo did it 2
// times in 4): the new member is not deleted (etcdadm would replace it on
// the new spec), the run says the rollback does not hold, and run again
// (EKS-A paused now) it restores once more and finishes. An old member
// released during the wait ends it at once: it read, about to go, as ready.
func TestEtcdRollbackSaysWhenTheRolloutWentOnAfterTheRestore(t *testing.T) {
	newSpec, err := json.Marshal(map[string]any{"spec": etcdSpec(newEtcdVersion, newEtcdTemplate)})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("spec written again", func(t *testing.T) {
		w, p := plannedRollback(t)
		w.playEtcdadm()
		x := &Executor{Audit: w.audit, afterStep: func(i int) {
			if i == 1 { // the spec was restored
				if _, err := w.client.Dynamic.Resource(upgrade.GVREtcdadmCluster).Namespace(w.sys).Patch(w.ctx, w.cluster+"-etcd", types.MergePatchType, newSpec,
					metav1.PatchOptions{FieldManager: "eksa-controller"}); err != nil {
					t.Fatal(err)
				}
			}
		}}
		rep, err := x.Run(w.ctx, p)
		var rf *RolledForwardError
		if !errors.As(err, &rf) || !strings.Contains(rf.What, "written again by eksa-controller") || !strings.Contains(rf.Next, "etcd rollback") {
			t.Fatalf("run: %v, want the rollback said not to hold, naming who wrote the spec\n%s", err, describeSteps(rep))
		}
		if _, err := w.client.Dynamic.Resource(w.capi(gvrMachine)).Namespace(w.sys).Get(w.ctx, w.cluster+"-etcd-z", metav1.GetOptions{}); err != nil {
			t.Fatalf("the new member was deleted under the new spec: %v", err)
		}
		again, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
		if err != nil {
			t.Fatalf("replan: %v", err)
		}
		if rep, err := (&Executor{Audit: w.audit}).Run(w.ctx, again); err != nil {
			t.Fatalf("run again: %v\n%s", err, describeSteps(rep))
		}
		if got := w.rollbackState(); got.Version != oldEtcdVersion || !got.EtcdReady || !strings.HasPrefix(got.Record, "done ") {
			t.Fatalf("after the second run: %+v", got)
		}
	})
	t.Run("spec written again at once", func(t *testing.T) {
		// Within moments of the restore, before its read-back: that
		// failed "not in place: " with nothing after it.
		w := newWorld(t)
		w.seedEtcdRollout(true)
		var rewrote atomic.Bool
		env := w.envAnswered(func(r *http.Request) error {
			if r.Method == http.MethodPatch && strings.Contains(r.URL.Path, "/etcdadmclusters/") && r.URL.Query().Get("dryRun") == "" &&
				r.Header.Get("Content-Type") == string(types.JSONPatchType) && rewrote.CompareAndSwap(false, true) {
				_, err := w.client.Dynamic.Resource(upgrade.GVREtcdadmCluster).Namespace(w.sys).Patch(context.Background(), w.cluster+"-etcd", types.MergePatchType, newSpec,
					metav1.PatchOptions{FieldManager: "eksa-controller"})
				return err
			}
			return nil
		})
		p, err := PlanEtcdRollback(w.ctx, env, EtcdRollbackOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := (&Executor{Audit: w.audit}).Run(w.ctx, p)
		var rf *RolledForwardError
		if !rewrote.Load() || !errors.As(err, &rf) || !strings.Contains(rf.What, "written again by eksa-controller") {
			t.Fatalf("run: %v (rewritten: %v), want the rollback said not to hold\n%s", err, rewrote.Load(), describeSteps(rep))
		}
	})
	t.Run("old member released during the wait", func(t *testing.T) {
		w := newWorld(t)
		w.seedEtcdRollout(true)
		p, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{WaitTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		x := &Executor{Audit: w.audit, afterStep: func(i int) {
			if i == 2 { // the new member deleted
				w.patch(w.capi(gvrMachine), w.sys, w.cluster+"-etcd-a", `{"metadata":{"ownerReferences":null}}`)
			}
		}}
		start := time.Now()
		rep, err := x.Run(w.ctx, p)
		var rf *RolledForwardError
		if !errors.As(err, &rf) || !strings.Contains(rf.What, "released or removed old member(s) "+w.cluster+"-etcd-a") {
			t.Fatalf("run: %v, want the rollback said not to hold\n%s", err, describeSteps(rep))
		}
		if took := time.Since(start); took > 30*time.Second {
			t.Errorf("the wait went on %s after an old member was released", took)
		}
	})
}

// A Cluster the operator paused by hand before the rollback: the pause step
// still writes the rollback's record (with the pause in place), so that an
// interrupted run resumes and the last step finds it. Counted done on the
// annotation alone, the run wrote no record and failed at its end.
func TestEtcdRollbackOfAClusterPausedByHandWritesItsRecord(t *testing.T) {
	w := newWorld(t)
	w.seedEtcdRollout(true)
	w.playEtcdadm()
	w.patch(upgrade.GVREKSACluster, w.ns, w.cluster, `{"metadata":{"annotations":{"`+model.AnnotationEKSAPaused+`":"true"}}}`)
	p, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{By: "ops@bastion"})
	if err != nil {
		t.Fatal(err)
	}
	x := &Executor{Audit: w.audit}
	rep, err := x.Run(w.ctx, p)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, describeSteps(rep))
	}
	if c, err := w.res(upgrade.GVREKSACluster, w.ns).Get(w.ctx, w.cluster, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	} else if rec, err := readRollbackRecord(c, w.env); err != nil || rec == nil {
		t.Errorf("rollback record %+v (%v): want the run's record", rec, err)
	}
}

// The new etcd Machine re-created under the same name after the plan (a
// restore, clusterctl move): the run deletes only the Machine it planned,
// by UID, and leaves the new one, as the plan promises; the planned one is
// gone.
func TestEtcdRollbackNeverDeletesAMachineRecreatedUnderTheSameName(t *testing.T) {
	w := newWorld(t)
	w.seedEtcdRollout(true)
	w.playEtcdadm()
	p, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{WaitTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	last := p.Steps[len(p.Steps)-1].Object
	for _, s := range p.Steps {
		if strings.HasPrefix(s.Object, "Machine ") {
			last = s.Object
		}
	}
	name := last[strings.LastIndex(last, "/")+1:]
	machines := w.client.Dynamic.Resource(upgrade.GVRMachine).Namespace(w.sys)
	m, err := machines.Get(w.ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the planned Machine %q: %v", last, err)
	}
	if err := machines.Delete(w.ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	m.SetUID("")
	m.SetResourceVersion("")
	m.SetCreationTimestamp(metav1.Time{})
	again, err := machines.Create(w.ctx, m, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The wait after it times out: no etcdadm controller plays here.
	rep, _ := (&Executor{Audit: w.audit}).Run(w.ctx, p)
	for _, r := range rep.Steps {
		if r.Step == "delete-new-machine" && r.Status != StepAlreadyDone {
			t.Errorf("the delete step %s (%s), want it to find its Machine gone", r.Status, r.Detail)
		}
	}
	if got, gerr := machines.Get(w.ctx, name, metav1.GetOptions{}); gerr != nil || got.GetUID() != again.GetUID() || got.GetDeletionTimestamp() != nil {
		t.Errorf("the re-created Machine %s: %v, deleting %v", name, gerr, got.GetDeletionTimestamp())
	}
}

// A snapshot with no checksum (an older console's, or one whose checksum was
// removed with an edit) says that nothing tells whether it was edited: it
// passed as checked.
func TestEtcdRollbackSaysASnapshotWithoutChecksumIsUnchecked(t *testing.T) {
	w := newWorld(t)
	w.seedEtcdRollout(true)
	if pre := w.rollbackSnapshotPrecondition(); !strings.Contains(pre.Detail, "carries no checksum") {
		t.Errorf("snapshot precondition: %q", pre.Detail)
	}
}

// rollbackSnapshotPrecondition plans the etcd rollback and returns the
// plan's precondition on its snapshot.
func (w *world) rollbackSnapshotPrecondition() Precondition {
	w.t.Helper()
	p, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	for _, pre := range p.Preconditions {
		if pre.Name == "snapshot" {
			return pre
		}
	}
	w.t.Fatalf("no snapshot precondition in %+v", p.Preconditions)
	return Precondition{}
}

// The rollback restores the newest ConfigMap that reads as a snapshot of the
// Cluster, the one `snapshot list` calls newest: a labelled ConfigMap that
// does not read, made later, was picked and the rollback refused on it.
func TestEtcdRollbackSkipsALabelledConfigMapThatIsNoSnapshot(t *testing.T) {
	w := newWorld(t)
	w.seedEtcdRollout(true)
	time.Sleep(1100 * time.Millisecond) // newer by the API server's whole seconds
	junk := w.snapshotCM(time.Now().UTC().Truncate(time.Second), w.ns, "{not json")
	p, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
	if err != nil {
		t.Fatalf("plan: %v (the newest labelled ConfigMap, %s, is no snapshot)", err, junk)
	}
	for _, pre := range p.Preconditions {
		if pre.Name == "snapshot" && strings.Contains(pre.Detail, junk) {
			t.Errorf("restores from %s: %q", junk, pre.Detail)
		}
	}
}

// A ConfigMap labelled for this Cluster that holds another one's snapshot (a
// Cluster of the same name in another namespace) is said as such: the
// refusal read "holds no EtcdadmCluster".
func TestEtcdRollbackSaysTheLabelledSnapshotIsAnotherClusters(t *testing.T) {
	w := newWorld(t)
	w.seedEtcdRollout(true)
	_, ours := w.snapshotConfigMap()
	if err := w.client.Kube.CoreV1().ConfigMaps(w.sys).Delete(w.ctx, ours, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	theirs := w.snapshotCM(time.Now().UTC().Truncate(time.Second), "elsewhere", "")
	_, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{})
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "none of the 1 ConfigMaps labelled") || !strings.Contains(err.Error(), theirs+", is Cluster elsewhere/"+w.cluster+"'s") {
		t.Errorf("refusal: %v", err)
	}
}

// The rollback names its snapshot's time by the API server's clock, as
// `snapshot list` does (the ConfigMap's creation), not the clock of the
// machine that took it: with that one two hours behind, the two named the
// same snapshot two hours apart.
func TestEtcdRollbackSaysTheSnapshotsServerTime(t *testing.T) {
	w := newWorld(t)
	w.seedEtcdRollout(true)
	cms := w.client.Kube.CoreV1().ConfigMaps(w.sys)
	list, err := cms.List(w.ctx, metav1.ListOptions{LabelSelector: upgrade.LabelSnapshot + "=true," + upgrade.LabelCluster + "=" + w.cluster})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("the seeded snapshot: %d, %v", len(list.Items), err)
	}
	cm := list.Items[0]
	var snap upgrade.Snapshot
	if err := json.Unmarshal([]byte(cm.Data[upgrade.SnapshotDataKey]), &snap); err != nil {
		t.Fatal(err)
	}
	created := cm.CreationTimestamp.UTC().Format(time.RFC3339)
	snap.TakenAt = cm.CreationTimestamp.Add(-2 * time.Hour).UTC()
	skewed := snap.TakenAt.Format(time.RFC3339)
	b, _ := json.Marshal(snap)
	cm.Data[upgrade.SnapshotDataKey] = string(b)
	if _, err := cms.Update(w.ctx, &cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if pre := w.rollbackSnapshotPrecondition(); !strings.Contains(pre.Detail, "taken "+created) || strings.Contains(pre.Detail, skewed) {
		t.Errorf("snapshot precondition %q, want it taken %s (the ConfigMap's creation), not %s", pre.Detail, created, skewed)
	}
}
