package recovery

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// seedFailedNode is inplace-node-step-fails on one node: its NodeUpgrade's
// kubeadm step exited non-zero, the upgrader pod is still there.
func (w *world) seedFailedNode() (node string) {
	w.t.Helper()
	w.create(upgrade.GVREKSACluster, obj("anywhere.eks.amazonaws.com/v1alpha1", "Cluster", w.ns, w.cluster, nil, nil, map[string]any{"kubernetesVersion": "1.31"}))
	machine := w.cluster + "-cp-x1"
	node = machine
	m := obj("cluster.x-k8s.io/v1beta2", "Machine", w.sys, machine, map[string]any{model.LabelClusterName: w.cluster}, nil,
		map[string]any{"clusterName": w.cluster, "version": "v1.30.14-eks-1-30-58",
			"bootstrap":         map[string]any{"configRef": map[string]any{"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfig", "name": machine}},
			"infrastructureRef": map[string]any{"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "VSphereMachine", "name": machine}})
	w.create(gvrMachine, m)
	w.setStatus(gvrMachine, w.sys, machine, map[string]any{"phase": "Running", "nodeRef": map[string]any{"name": node}})
	nu := obj("anywhere.eks.amazonaws.com/v1alpha1", "NodeUpgrade", w.sys, machine+"-node-upgrader", nil, nil,
		map[string]any{"kubernetesVersion": "v1.31.9-eks-1-31-20", "machine": map[string]any{"kind": "Machine", "name": machine, "namespace": w.sys}})
	w.create(gvrNodeUpgrade, nu)
	// The step failed a minute ago: an upgrader pod recreated since is newer.
	now := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	var conds []any
	for i, step := range model.NodeUpgradeSteps {
		c := map[string]any{"type": step, "status": "True", "lastTransitionTime": now}
		if i == 4 {
			c = map[string]any{"type": step, "status": "False", "severity": "Error", "reason": "Container exited with a non-zero exit code, reason: Error", "lastTransitionTime": now}
		} else if i > 4 {
			c = map[string]any{"type": step, "status": "False", "severity": "Info", "reason": "Container is waiting to be initialized", "lastTransitionTime": now}
		}
		conds = append(conds, c)
	}
	w.setStatus(gvrNodeUpgrade, w.sys, machine+"-node-upgrader", map[string]any{"conditions": conds, "completed": false})
	w.createUpgraderPod(node)
	return node
}

func (w *world) createUpgraderPod(node string) *corev1.Pod {
	w.t.Helper()
	pod, err := w.client.Kube.CoreV1().Pods(w.sys).Create(w.ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-node-upgrader", Namespace: w.sys, Labels: map[string]string{"eks-d-upgrader": "true"},
			Annotations: map[string]string{AnnotationSimulatedLogPrefix + "kubeadm-upgrader": "line 1\n[upgrade/apply] FATAL: couldn't upgrade control plane\nexit status 1\n"}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "post-upgrade-status", Image: "upgrader"}},
			InitContainers: []corev1.Container{{Name: "kubeadm-upgrader", Image: "upgrader"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	pod.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "kubeadm-upgrader", Image: "upgrader",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}}
	if _, err := w.client.Kube.CoreV1().Pods(w.sys).UpdateStatus(w.ctx, pod, metav1.UpdateOptions{}); err != nil {
		w.t.Fatal(err)
	}
	return pod
}

// playNodeUpgradeController plays the kubelet (a terminating pod goes away)
// and the NodeUpgrade controller (a missing pod is recreated).
func (w *world) playNodeUpgradeController(node string) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	w.t.Cleanup(func() { cancel(); wg.Wait() })
	go func() {
		defer wg.Done()
		_ = wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			pod, err := w.client.Kube.CoreV1().Pods(w.sys).Get(ctx, node+"-node-upgrader", metav1.GetOptions{})
			if err == nil && pod.DeletionTimestamp != nil {
				_ = w.client.Kube.CoreV1().Pods(w.sys).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))})
				return false, nil
			}
			if apierrors.IsNotFound(err) {
				_, _ = w.client.Kube.CoreV1().Pods(w.sys).Create(ctx, &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: node + "-node-upgrader", Namespace: w.sys},
					Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "post-upgrade-status", Image: "upgrader"}}},
				}, metav1.CreateOptions{})
			}
			return false, nil
		})
	}()
}

func TestNodeRetryShowsTheFailingStepAndItsLog(t *testing.T) {
	w := newWorld(t)
	node := w.seedFailedNode()
	f, err := InspectNode(w.ctx, w.env, node, 2)
	if err != nil {
		t.Fatal(err)
	}
	if f.Step != "KubeadmUpgraded" || f.Container != "kubeadm-upgrader" || !strings.Contains(f.Reason, "non-zero exit code") {
		t.Errorf("failure = %+v", f)
	}
	if f.ContainerState != "terminated: exit code 1, reason Error, restarts 0" {
		t.Errorf("container state = %q", f.ContainerState)
	}
	// No kubelet behind this API server: the simulated log, said so.
	if len(f.Log) != 2 || f.Log[1] != "exit status 1" || !strings.HasPrefix(f.LogSource, "simulated") {
		t.Errorf("log = %q from %q (%s)", f.Log, f.LogSource, f.LogError)
	}
}

func TestNodeRetryDeletesThePodAndResumes(t *testing.T) {
	w := newWorld(t)
	node := w.seedFailedNode()
	w.playNodeUpgradeController(node)
	p, f, err := PlanNodeRetry(w.ctx, w.env, node, NodeRetryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Confirm != node || len(p.Steps) != 2 || f.PodUID == "" {
		t.Fatalf("plan %+v", p)
	}
	x := &Executor{Audit: w.audit}
	if rep, err := x.DryRun(w.ctx, p); err != nil || rep.Steps[0].Status != StepDryRunOK {
		t.Fatalf("dry run: %v %+v", err, rep.Steps)
	}
	if pod, err := w.client.Kube.CoreV1().Pods(w.sys).Get(w.ctx, node+"-node-upgrader", metav1.GetOptions{}); err != nil || string(pod.UID) != f.PodUID {
		t.Fatalf("the dry run deleted the pod: %v", err)
	}
	rep, err := x.Run(w.ctx, p)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, describeSteps(rep))
	}
	pod, err := w.client.Kube.CoreV1().Pods(w.sys).Get(w.ctx, node+"-node-upgrader", metav1.GetOptions{})
	if err != nil || string(pod.UID) == f.PodUID {
		t.Fatalf("pod not replaced: %v", err)
	}
	// The closing reads the NodeUpgrade whose failed condition is still the
	// old pod's: the retry worked, and the audit's last entry said "failed
	// again".
	if closing := strings.Join(rep.Closing, " "); strings.Contains(closing, "failed again") || !strings.Contains(closing, "running its steps again") {
		t.Errorf("closing %q, want the node running its steps again", closing)
	}
	// Rerun of the same plan after the retry: every step already done.
	rep, err = x.Run(w.ctx, p)
	if err != nil || rep.Steps[0].Status != StepAlreadyDone || rep.Steps[1].Status != StepAlreadyDone {
		t.Fatalf("rerun: %v %s", err, describeSteps(rep))
	}
}

// A rerun that finishes before the wait sees its pod: the controller
// deletes the pod and EKS-A the NodeUpgrade. The retry succeeded, and must
// say so, not time out.
func TestNodeRetryThatFinishesAtOnceSucceeds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		finish func(w *world, nu string)
		want   string
	}{
		{"NodeUpgrade removed", func(w *world, nu string) {
			if err := w.client.Dynamic.Resource(gvrNodeUpgrade).Namespace(w.sys).Delete(w.ctx, nu, metav1.DeleteOptions{}); err != nil {
				t.Error(err)
			}
		}, "is gone"},
		{"NodeUpgrade completed", func(w *world, nu string) { w.setStatus(gvrNodeUpgrade, w.sys, nu, map[string]any{"completed": true}) }, "completed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			node := w.seedFailedNode()
			p, f, err := PlanNodeRetry(w.ctx, w.env, node, NodeRetryOptions{WaitTimeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			nu := strings.TrimPrefix(f.NodeUpgrade, w.sys+"/")
			// The controller: the failed pod goes, the node's upgrade
			// finishes, and no pod is left for the wait to see.
			go func() {
				_ = wait.PollUntilContextTimeout(w.ctx, 20*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
					pod, err := w.client.Kube.CoreV1().Pods(w.sys).Get(ctx, node+"-node-upgrader", metav1.GetOptions{})
					if err == nil && pod.DeletionTimestamp != nil {
						_ = w.client.Kube.CoreV1().Pods(w.sys).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))})
					}
					if !apierrors.IsNotFound(err) {
						return false, nil
					}
					tc.finish(w, nu)
					return true, nil
				})
			}()
			rep, err := (&Executor{Audit: w.audit}).Run(w.ctx, p)
			if err != nil {
				t.Fatalf("run: %v\n%s", err, describeSteps(rep))
			}
			if last := rep.Steps[len(rep.Steps)-1]; !strings.Contains(last.Detail, tc.want) {
				t.Errorf("wait step = %+v, want a detail saying %q", last, tc.want)
			}
			// The closing lines say the same, not that the node "could not
			// be read back".
			if closing := strings.Join(p.Closing(w.ctx), "\n"); strings.Contains(closing, "Could not") || !strings.Contains(closing, tc.want) {
				t.Errorf("closing %q, want it to say %q", closing, tc.want)
			}
		})
	}
}

func TestNodeRetryRefusedWithoutAFailedStep(t *testing.T) {
	w := newWorld(t)
	node := w.seedFailedNode()
	w.setStatus(gvrNodeUpgrade, w.sys, node+"-node-upgrader", map[string]any{"completed": true})
	_, f, err := PlanNodeRetry(w.ctx, w.env, node, NodeRetryOptions{})
	var refused *RefusedError
	if !errors.As(err, &refused) || f == nil {
		t.Fatalf("err = %v, want a refusal with the inspection", err)
	}
	names := map[string]bool{}
	for _, p := range refused.Failed() {
		names[p.Name] = true
	}
	if !names["not-completed"] || !names["step-failed"] {
		t.Errorf("failed preconditions = %+v", refused.Failed())
	}
	if refused.Object != "Node "+node {
		t.Errorf("refusal object = %q, want Node %s", refused.Object, node)
	}
	var ie *model.InputError
	if _, _, err := PlanNodeRetry(w.ctx, w.env, "no-such-node", NodeRetryOptions{}); !errors.As(err, &ie) {
		t.Errorf("unknown node: %v, want InputError", err)
	}
	// A node with no in-place upgrade under way: nothing to retry, refused.
	idle := w.cluster + "-idle"
	if _, err := w.client.Kube.CoreV1().Nodes().Create(w.ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: idle}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.client.Kube.CoreV1().Nodes().Delete(context.Background(), idle, metav1.DeleteOptions{}) })
	if _, _, err := PlanNodeRetry(w.ctx, w.env, idle, NodeRetryOptions{}); !errors.As(err, &refused) ||
		refused.Failed()[0].Name != "in-place-upgrade" || refused.Object != "Node "+idle {
		t.Errorf("node with no NodeUpgrade: %v, want a refusal on in-place-upgrade", err)
	}
	// A node of another cluster is not retried, nor recorded, under this one.
	other := *w.env
	other.Cluster = "typo-cluster"
	if _, _, err := PlanNodeRetry(w.ctx, &other, node, NodeRetryOptions{}); !errors.As(err, &ie) || !strings.Contains(err.Error(), "belongs to cluster") {
		t.Errorf("node of another cluster: %v, want InputError", err)
	}
}

// Once the pod is recreated its steps run again, though the NodeUpgrade still
// shows the old failure: a second retry must not kill the new pod. When the
// new pod's container fails too, the retry is offered again.
func TestNodeRetryIsNotOfferedWhileTheStepsRunAgain(t *testing.T) {
	w := newWorld(t)
	node := w.seedFailedNode()
	w.playNodeUpgradeController(node)
	p, _, err := PlanNodeRetry(w.ctx, w.env, node, NodeRetryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&Executor{Audit: w.audit}).Run(w.ctx, p); err != nil {
		t.Fatal(err)
	}
	_, f, err := PlanNodeRetry(w.ctx, w.env, node, NodeRetryOptions{})
	var refused *RefusedError
	if !errors.As(err, &refused) || f == nil || !f.Rerunning {
		t.Fatalf("err = %v (inspection %+v), want a refusal: the steps run again", err, f)
	}
	if fp := refused.Failed(); len(fp) != 1 || fp[0].Name != "step-failed" || !strings.Contains(fp[0].Detail, "recreated") {
		t.Fatalf("failed preconditions = %+v", fp)
	}

	pod, err := w.client.Kube.CoreV1().Pods(w.sys).Get(w.ctx, node+"-node-upgrader", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "kubeadm-upgrader", Image: "upgrader",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}}
	if _, err := w.client.Kube.CoreV1().Pods(w.sys).UpdateStatus(w.ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, f, err := PlanNodeRetry(w.ctx, w.env, node, NodeRetryOptions{}); err != nil || f.Rerunning {
		t.Fatalf("the new pod failed too: err %v, rerunning %t; want the retry offered", err, f.Rerunning)
	}
}
