package upgrade

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/upgrade-console/upgrade-console/demo/release"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
)

// clusterConditions sets the EKS-A Cluster's status as EKS-A leaves it: the
// generation observed, and the conditions of the completion rule, True but
// for those named in notTrue (False, RollingUpgradeInProgress, msg).
func clusterConditions(u *unstructured.Unstructured, msg string, notTrue ...string) {
	setNested(u, u.GetGeneration(), "status", "observedGeneration")
	var conds []any
	for _, c := range []string{model.ConditionReady, model.ConditionControlPlaneInitialized, model.ConditionControlPlaneReady, model.ConditionDefaultCNIConfigured, model.ConditionWorkersReady} {
		cond := map[string]any{"type": c, "status": "True", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}
		for _, n := range notTrue {
			if n == c {
				cond["status"], cond["reason"], cond["message"], cond["severity"] = "False", "RollingUpgradeInProgress", msg, "Info"
			}
		}
		conds = append(conds, cond)
	}
	setNested(u, conds, "status", "conditions")
}

// TestPlanOfASpecTheClusterHasNotReached is the live plan of the target spec
// once it is applied: the Cluster's spec is then the target, so the plan's
// current side reads v0.21.2 → v0.21.2 and the dry run changes nothing. In
// the middle of the upgrade, and after an etcd rollback, the cluster has not
// reached that spec: the plan says so (currentSpec, spec-accepted) instead
// of "the cluster already runs this spec", and the fixes of the checks that
// wait for EKS-A say that EKS-A, paused, reports nothing.
func TestPlanOfASpecTheClusterHasNotReached(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	name := w.cfg.ClusterName
	recheckUntil := func(t *testing.T, p *Plan, what string, ok func(*Plan) bool) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
			return ok(p), w.planner.Recheck(ctx, p)
		}); err != nil || !ok(p) {
			t.Fatalf("%s: currentSpec %+v, preflight %+v (%v)", what, p.CurrentSpec, p.Preflight, err)
		}
	}

	// At rest on its spec, before the upgrade.
	p := w.plan(t)
	if s := p.CurrentSpec; s == nil || !s.Reached || s.Reason != "" {
		t.Fatalf("at rest: currentSpec %+v, want reached", s)
	}

	// The target applied; EKS-A has observed it and works on etcd.
	if _, err := (&Applier{Client: w.client, Audit: &memAudit{}}).Apply(ctx, w.spec, ApplyOptions{ForceConflicts: true}); err != nil {
		t.Fatal(err)
	}
	w.cluster(t, false, func(u *unstructured.Unstructured) {
		// EKS-A has upgraded its own components (the upgrade's first phase).
		u.SetAnnotations(merge(u.GetAnnotations(), model.AnnotationManagementComponentsVersion, release.Target.Version))
	})
	w.cluster(t, true, func(u *unstructured.Unstructured) {
		clusterConditions(u, "Etcd is not ready", model.ConditionControlPlaneReady, model.ConditionReady)
	})
	p = w.plan(t)
	recheckUntil(t, p, "under way", func(p *Plan) bool { return p.CurrentSpec.NotReached() && p.CurrentSpec.Reason == model.SpecUnderWay })
	if p.Versions.CurrentEKSA != release.Target.Version || p.Versions.CurrentKubernetes != "1.31" || len(p.Changed()) != 0 {
		t.Errorf("the current side is not the Cluster's spec (the target): %+v, %d changed", p.Versions, len(p.Changed()))
	}
	if want := "the upgrade to it is still under way: ControlPlaneReady: Etcd is not ready"; p.CurrentSpec.Message != want {
		t.Errorf("message %q, want %q", p.CurrentSpec.Message, want)
	}
	if want := "follow it with `upgrade-console watch --cluster " + name; !strings.Contains(p.CurrentSpec.Next, want) {
		t.Errorf("next %q, want %q", p.CurrentSpec.Next, want)
	}
	r := result(p, CheckSpecAccepted)
	if want := "it changes nothing: the Cluster's spec is already this spec, but the cluster has not reached it (the upgrade to it is still under way: ControlPlaneReady: Etcd is not ready)"; !strings.HasSuffix(r.Message, want) || strings.Contains(r.Message, "already runs") {
		t.Errorf("spec-accepted %q, want it to end %q", r.Message, want)
	}
	if r := result(p, CheckControlPlaneReady); r.Remediation != "wait for EKS-A to report the control plane ready" {
		t.Errorf("control-plane-ready, EKS-A not paused: fix %q", r.Remediation)
	}

	// The etcd rollback: EKS-A paused with the rollback's record.
	w.cluster(t, false, func(u *unstructured.Unstructured) {
		a := u.GetAnnotations()
		a[model.AnnotationEKSAPaused] = "true"
		a[model.AnnotationEtcdRollbackRecord] = `{"phase":"done","newMachine":"mgmt-etcd-x7k2p","startedAt":"2026-11-23T08:07:55Z","by":"ops@bastion-1"}`
		u.SetAnnotations(a)
	})
	recheckUntil(t, p, "rolled back", func(p *Plan) bool {
		return p.CurrentSpec.NotReached() && p.CurrentSpec.Reason == model.SpecEtcdRollback
	})
	if want := "find and fix why the new etcd member did not come up, then `upgrade-console lock clear paused --cluster " + name; !strings.Contains(p.CurrentSpec.Next, want) {
		t.Errorf("next %q, want %q", p.CurrentSpec.Next, want)
	}
	if r := result(p, CheckSpecAccepted); !strings.Contains(r.Message, "the cluster has not reached it (upgrade-console's etcd rollback put etcd back on its previous spec and keeps EKS-A reconcile paused)") {
		t.Errorf("spec-accepted %q", r.Message)
	}
	r = result(p, CheckReconcileNotPaused)
	if r.Status != model.CheckFail || !strings.Contains(r.Message, "kept by the etcd rollback of 2026-11-23T08:07:55Z by ops@bastion-1 until the cause of the failed etcd member is fixed") ||
		!strings.Contains(r.Message, "resuming EKS-A reconcile makes it apply the new etcd spec again") {
		t.Errorf("eksa-reconcile-not-paused: %s %q", r.Status, r.Message)
	}
	fix, clear := strings.Index(r.Remediation, "first find and fix why the new etcd member (Machine mgmt-etcd-x7k2p) did not come up"), strings.Index(r.Remediation, "then `upgrade-console lock clear paused --cluster "+name)
	if fix < 0 || clear < fix || strings.Contains(r.Remediation, "eksctl") {
		t.Errorf("eksa-reconcile-not-paused fix %q: want the failed member found and fixed first, then the pause cleared", r.Remediation)
	}
	if r := result(p, CheckControlPlaneReady); !strings.HasPrefix(r.Remediation, "EKS-A will not report the control plane ready while its reconcile is paused, and the etcd rollback keeps it paused") ||
		!strings.Contains(r.Remediation, "`upgrade-console lock clear paused --cluster "+name+" -n "+w.ns+"`") {
		t.Errorf("control-plane-ready fix %q", r.Remediation)
	}
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"currentSpec":{"reached":false,"reason":"etcd-rollback","message":"upgrade-console's etcd rollback`; !strings.Contains(string(data), want) {
		t.Errorf("JSON lacks %s:\n%s", want, data)
	}

	// Resumed, the upgrade completes: the cluster runs its spec.
	w.cluster(t, false, func(u *unstructured.Unstructured) {
		a := u.GetAnnotations()
		delete(a, model.AnnotationEKSAPaused)
		delete(a, model.AnnotationEtcdRollbackRecord)
		u.SetAnnotations(a)
	})
	w.cluster(t, true, func(u *unstructured.Unstructured) { clusterConditions(u, "") })
	recheckUntil(t, p, "complete", func(p *Plan) bool { return p.CurrentSpec != nil && p.CurrentSpec.Reached })
	if r := result(p, CheckSpecAccepted); !strings.HasSuffix(r.Message, "it changes nothing: the cluster already runs this spec") {
		t.Errorf("spec-accepted at rest on the target: %q", r.Message)
	}
}

// The fixes of the checks that wait for EKS-A to report something, on a
// Cluster whose reconcile is paused: waiting would never end, and they say
// why and what to do instead.
func TestWaitingFixesWhileEKSAIsPaused(t *testing.T) {
	ready := int32(3)
	state := func(annotations map[string]string) *model.ClusterState {
		c := &model.EKSACluster{ControlPlaneCount: 3, WorkerGroups: []model.WorkerGroup{{Name: "md-0"}}}
		c.Name, c.Namespace, c.Annotations = "mgmt", "default", annotations
		c.Conditions = model.Conditions{
			{Type: model.ConditionControlPlaneReady, Status: "False", Reason: "RollingUpgradeInProgress", Message: "Etcd is not ready"},
			{Type: model.ConditionWorkersReady, Status: "False", Reason: "RollingUpgradeInProgress", Message: "Worker nodes not up-to-date yet"},
		}
		s := &model.ClusterState{Cluster: c}
		s.ControlPlane = &model.ControlPlane{}
		s.ControlPlane.Name = "mgmt"
		s.ControlPlane.Replicas.Desired, s.ControlPlane.Replicas.Ready = ptr.To(ready), ptr.To(ready)
		md := model.MachineDeployment{}
		md.Name = "mgmt-md-0"
		md.Replicas.Desired, md.Replicas.Ready = ptr.To(ready), ptr.To(ready)
		s.MachineDeployments = []model.MachineDeployment{md}
		return s
	}
	for _, c := range []struct {
		name        string
		annotations map[string]string
		cp, workers string
	}{
		{name: "reconciling", cp: "wait for EKS-A to report the control plane ready", workers: "wait for EKS-A to report the workers ready"},
		{name: "paused", annotations: map[string]string{model.AnnotationEKSAPaused: "true"},
			cp:      "EKS-A will not report the control plane ready while its reconcile is paused (anywhere.eks.amazonaws.com/paused): see eksa-reconcile-not-paused for whose pause it is and how to resume",
			workers: "EKS-A will not report the workers ready while its reconcile is paused"},
		{name: "paused by the etcd rollback", annotations: map[string]string{model.AnnotationEKSAPaused: "true", model.AnnotationEtcdRollbackRecord: `{"phase":"done"}`},
			cp: "EKS-A will not report the control plane ready while its reconcile is paused, and the etcd rollback keeps it paused: find and fix why the new etcd member did not come up, then `upgrade-console lock clear paused --cluster mgmt` (see eksa-reconcile-not-paused)"},
		{name: "etcd rollback running", annotations: map[string]string{model.AnnotationEKSAPaused: "true", model.AnnotationEtcdRollbackRecord: `{"phase":"running"}`},
			cp: "EKS-A will not report the control plane ready while its reconcile is paused by the etcd rollback under way"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := &Inputs{State: state(c.annotations)}
			if r := checkControlPlane(context.Background(), in); r.Status != model.CheckFail || !strings.HasPrefix(r.Remediation, c.cp) {
				t.Errorf("control-plane-ready: %s, fix %q, want %q", r.Status, r.Remediation, c.cp)
			}
			if r := checkWorkers(context.Background(), in); c.workers != "" && !strings.HasPrefix(r.Remediation, c.workers) {
				t.Errorf("workers-ready: fix %q, want %q", r.Remediation, c.workers)
			}
		})
	}
	// A change EKS-A has not observed is not caught up with by waiting
	// while it is paused either.
	for paused, want := range map[bool]string{
		false: "wait for the running reconcile to finish",
		true:  "EKS-A will not report the last change observed while its reconcile is paused (anywhere.eks.amazonaws.com/paused): see eksa-reconcile-not-paused",
	} {
		a := map[string]string{}
		if paused {
			a[model.AnnotationEKSAPaused] = "true"
		}
		st := state(a)
		st.Cluster.Generation, st.Cluster.ObservedGeneration = 3, 2
		if r := checkGeneration(context.Background(), &Inputs{State: st}); r.Status != model.CheckFail || !strings.HasPrefix(r.Remediation, want) {
			t.Errorf("generation-observed, paused %t: %s, fix %q, want %q", paused, r.Status, r.Remediation, want)
		}
	}
	// The pause check on a rollback still under way: finish it first.
	in := &Inputs{State: state(map[string]string{model.AnnotationEKSAPaused: "true", model.AnnotationEtcdRollbackRecord: `{"phase":"running","by":"ops@bastion-1"}`})}
	if r := checkPaused(context.Background(), in); !strings.Contains(r.Message, "etcd rollback by ops@bastion-1 is not finished") ||
		!strings.HasPrefix(r.Remediation, "finish it: run `upgrade-console etcd rollback --cluster mgmt` again") {
		t.Errorf("eksa-reconcile-not-paused during the rollback: %q, fix %q", r.Message, r.Remediation)
	}
}

// failedControlPlaneStep is an in-place upgrade whose control-plane node
// mgmt-lvn8n failed its kubeadm step at failedAt (the demo's
// inplace-node-step-fails): the Cluster alone reads as under way.
func failedControlPlaneStep(failedAt time.Time) *model.ClusterState {
	s := settled()
	for i := range s.Cluster.Conditions {
		if typ := s.Cluster.Conditions[i].Type; typ == model.ConditionControlPlaneReady || typ == model.ConditionReady {
			s.Cluster.Conditions[i] = model.Condition{Type: typ, Status: "False", Reason: "InPlaceUpgradeInProgress", Message: "Control plane nodes not up-to-date yet", LastTransitionTime: failedAt}
		}
	}
	three := int32(3)
	s.ControlPlane = &model.ControlPlane{Meta: model.Meta{Name: "mgmt"}, Replicas: model.ReplicaCounts{Desired: &three, Ready: &three}}
	s.Machines = model.ListOf(&model.Machine{Meta: model.Meta{Name: "mgmt-cp-b"}, Role: model.RoleControlPlane, Owner: "mgmt", Owned: true,
		NodeName: "mgmt-lvn8n", Phase: "Running"})
	s.NodeUpgrades = model.ListOf(&model.NodeUpgrade{Meta: model.Meta{Name: "mgmt-cp-b-node-upgrader", CreationTimestamp: failedAt.Add(-time.Minute)},
		Kind: model.KindNodeUpgrade, MachineName: "mgmt-cp-b", Conditions: model.Conditions{
			{Type: "UpgraderPodCreated", Status: "True", LastTransitionTime: failedAt.Add(-time.Minute)},
			{Type: "BinariesCopied", Status: "True", LastTransitionTime: failedAt.Add(-time.Minute)},
			{Type: "ContainerdUpgraded", Status: "True", LastTransitionTime: failedAt.Add(-time.Minute)},
			{Type: "CNIPluginsUpgraded", Status: "True", LastTransitionTime: failedAt.Add(-time.Minute)},
			{Type: "KubeadmUpgraded", Status: "False", Severity: model.SeverityError, Reason: "Container exited with a non-zero exit code, reason: Error", LastTransitionTime: failedAt},
		}})
	return s
}

// The plan of a cluster whose in-place step failed 10+ minutes ago, when
// watch and apply --wait have called the upgrade failed: currentSpec says
// "failed" with the step and `node retry` (it said "under-way", "follow it
// with watch"), and control-plane-ready no longer says to wait.
func TestPlanOfAnUpgradeFailedOnAnInPlaceStep(t *testing.T) {
	failedAt := time.Now().Truncate(time.Second).Add(-time.Hour)
	retry := "`upgrade-console node retry mgmt-lvn8n --cluster mgmt` runs its steps again once the cause is fixed"
	inputsAt := func(at time.Time) *Inputs {
		pl := &Planner{State: &fixedSource{s: failedControlPlaneStep(failedAt)}, Clock: clocktesting.NewFakeClock(at)}
		p := &Plan{Cluster: "mgmt", Namespace: "default", At: at}
		return p.inputs(pl)
	}

	in := inputsAt(failedAt.Add(11 * time.Minute))
	s := in.CurrentSpec
	if !s.NotReached() || s.Reason != model.SpecFailed {
		t.Fatalf("currentSpec %+v, want reason failed", s)
	}
	if want := "the upgrade to it failed: node mgmt-lvn8n in-place step KubeadmUpgraded failed 11m ago: Container exited with a non-zero exit code, reason: Error"; s.Message != want {
		t.Errorf("message %q\nwant    %q", s.Message, want)
	}
	if s.Next != retry {
		t.Errorf("next %q\nwant %q", s.Next, retry)
	}
	r := checkControlPlane(context.Background(), in)
	if r.Status != model.CheckFail || strings.Contains(r.Remediation, "wait for") || r.Remediation != "EKS-A will not report the control plane ready while the upgrade stays failed (node mgmt-lvn8n in-place step KubeadmUpgraded failed 11m ago: Container exited with a non-zero exit code, reason: Error): "+retry {
		t.Errorf("control-plane-ready: %s, fix %q", r.Status, r.Remediation)
	}
	// The fixes that wait for replicas say the same: a machine not ready
	// behind a failed step comes back with what gets past it.
	two, three := int32(2), int32(3)
	in.State.ControlPlane.Replicas.Ready = &two
	if r := checkControlPlane(context.Background(), in); !strings.HasPrefix(r.Remediation, "EKS-A will not report the control plane ready while the upgrade stays failed (node mgmt-lvn8n") || !strings.HasSuffix(r.Remediation, retry) {
		t.Errorf("control-plane-ready, a replica not ready: fix %q", r.Remediation)
	}
	in.State.MachineDeployments = []model.MachineDeployment{{Meta: model.Meta{Name: "mgmt-md-0"}, Replicas: model.ReplicaCounts{Desired: &three, Ready: &two}}}
	if r := checkWorkers(context.Background(), in); !strings.HasPrefix(r.Remediation, "EKS-A will not report the workers ready while the upgrade stays failed (node mgmt-lvn8n") ||
		!strings.HasSuffix(r.Remediation, retry+"; or skip this check if the upgrade is meant to replace the broken machines") {
		t.Errorf("workers-ready, a replica not ready: fix %q", r.Remediation)
	}
	data, err := json.Marshal(&Plan{CurrentSpec: s})
	if err != nil {
		t.Fatal(err)
	}
	if want := `"currentSpec":{"reached":false,"reason":"failed","message":"the upgrade to it failed: node mgmt-lvn8n in-place step KubeadmUpgraded failed 11m ago`; !strings.Contains(string(data), want) {
		t.Errorf("JSON lacks %s:\n%s", want, data)
	}

	// Within the grace neither the watch nor the plan calls it failed.
	in = inputsAt(failedAt.Add(3 * time.Minute))
	if s := in.CurrentSpec; s.Reason != model.SpecUnderWay {
		t.Errorf("within the grace: currentSpec %+v, want under way", s)
	}
	if r := checkControlPlane(context.Background(), in); !strings.HasPrefix(r.Remediation, "EKS-A will not report the control plane ready while a failed step holds the upgrade (node mgmt-lvn8n") || !strings.HasSuffix(r.Remediation, retry) {
		t.Errorf("within the grace: control-plane-ready fix %q", r.Remediation)
	}
	in.State.ControlPlane.Replicas.Ready = &two
	if r := checkControlPlane(context.Background(), in); !strings.HasPrefix(r.Remediation, "wait for the control plane to be ready") {
		t.Errorf("within the grace, a replica not ready: control-plane-ready fix %q", r.Remediation)
	}
}

// The plan screen's plan was made at rest; then someone else applied the
// target (eksctl, kubectl) and EKS-A upgraded its components. The screen
// re-runs the checks with Rechecked: it kept the current side it was made
// with, "11 of 11 components change" from the old release beside "nothing to
// apply", and warned of management components already upgraded.
func TestRecheckedReadsTheCurrentSideAgainWhenTheClusterMoved(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	p := w.plan(t)
	if len(p.Changed()) == 0 || p.Versions.CurrentEKSA == release.Target.Version {
		t.Fatalf("at rest: %+v, %d changed: want the upgrade to show", p.Versions, len(p.Changed()))
	}
	same, err := w.planner.Rechecked(ctx, p)
	if err != nil || same.Current != p.Current {
		t.Fatalf("nothing moved: the current side was read again (%v)", err)
	}
	if _, err := (&Applier{Client: w.client, Audit: &memAudit{}}).Apply(ctx, w.spec, ApplyOptions{ForceConflicts: true}); err != nil {
		t.Fatal(err)
	}
	w.cluster(t, false, func(u *unstructured.Unstructured) {
		u.SetAnnotations(merge(u.GetAnnotations(), model.AnnotationManagementComponentsVersion, release.Target.Version))
	})
	var got *Plan
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err = w.planner.Rechecked(ctx, p)
		return err == nil && got.Versions.CurrentEKSA == release.Target.Version && got.Versions.Management == release.Target.Version, err
	}); err != nil {
		t.Fatalf("current side after the out-of-band upgrade: %+v (%v)", got.Versions, err)
	}
	if got.Versions.CurrentKubernetes != "1.31" || len(got.Changed()) != 0 {
		t.Errorf("current side %+v, %d changed: want the applied spec, nothing to change", got.Versions, len(got.Changed()))
	}
	if r := result(got, CheckManagementComponents); r.Status == model.CheckWarn {
		t.Errorf("management-components still warns: %s", r.Message)
	}
	if p.Versions.CurrentEKSA == release.Target.Version {
		t.Error("Rechecked wrote the plan it was given")
	}
}
