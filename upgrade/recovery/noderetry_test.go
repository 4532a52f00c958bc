package recovery

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// Versions of the seeded node: what its kubelet runs before and after the
// upgrade, and what its NodeUpgrade asks for (EKS-D kubelets name their
// commit, NodeUpgrades the EKS-D release).
const (
	oldKubelet    = "v1.30.14-eks-0a1b2c3"
	newKubelet    = "v1.31.9-eks-4d5e6f7"
	targetKubeadm = "v1.31.9-eks-1-31-20"
)

// seedFailedNode is inplace-node-step-fails on one node: its NodeUpgrade's
// kubeadm step exited non-zero, the upgrader pod is still there, the node
// still runs the old kubelet.
func (w *world) seedFailedNode() (node string) {
	w.t.Helper()
	w.create(upgrade.GVREKSACluster, obj("anywhere.eks.amazonaws.com/v1alpha1", "Cluster", w.ns, w.cluster, nil, nil, map[string]any{"kubernetesVersion": "1.31",
		"controlPlaneConfiguration": map[string]any{"count": int64(3), "upgradeRolloutStrategy": map[string]any{"type": StrategyInPlace}}}))
	machine := w.cluster + "-cp-x1"
	node = machine
	w.createCPNode(node)
	nu := obj("anywhere.eks.amazonaws.com/v1alpha1", "NodeUpgrade", w.sys, machine+"-node-upgrader", nil, nil,
		map[string]any{"kubernetesVersion": targetKubeadm, "machine": map[string]any{"kind": "Machine", "name": machine, "namespace": w.sys}})
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

// createCPNode creates a control-plane Machine of the world's cluster and
// its Node of the same name, on the old kubelet.
func (w *world) createCPNode(name string) {
	w.t.Helper()
	w.createNode(name, oldKubelet)
	m := obj("cluster.x-k8s.io/v1beta2", "Machine", w.sys, name, map[string]any{model.LabelClusterName: w.cluster, model.LabelControlPlane: ""}, nil,
		map[string]any{"clusterName": w.cluster, "version": "v1.30.14-eks-1-30-58",
			"bootstrap":         map[string]any{"configRef": map[string]any{"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfig", "name": name}},
			"infrastructureRef": map[string]any{"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "VSphereMachine", "name": name}})
	w.create(gvrMachine, m)
	w.setStatus(gvrMachine, w.sys, name, map[string]any{"phase": "Running", "nodeRef": map[string]any{"name": name}})
}

// createNode creates a Node (cluster-scoped: named after the world's
// cluster, removed after the test) whose kubelet reports kubelet.
func (w *world) createNode(name, kubelet string) {
	w.t.Helper()
	if _, err := w.client.Kube.CoreV1().Nodes().Create(w.ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { _ = w.client.Kube.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	w.setKubelet(name, kubelet)
}

// setKubelet plays the kubelet of a node reporting its version.
func (w *world) setKubelet(node, kubelet string) {
	w.t.Helper()
	n, err := w.client.Kube.CoreV1().Nodes().Get(w.ctx, node, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	n.Status.NodeInfo.KubeletVersion = kubelet
	if _, err := w.client.Kube.CoreV1().Nodes().UpdateStatus(w.ctx, n, metav1.UpdateOptions{}); err != nil {
		w.t.Fatal(err)
	}
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
	if f.KubeletVersion != oldKubelet || f.TargetVersion != targetKubeadm || f.TargetSource != "NodeUpgrade "+f.NodeUpgrade {
		t.Errorf("versions: node runs %q, %s asks for %q", f.KubeletVersion, f.TargetSource, f.TargetVersion)
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
	if closing := strings.Join(rep.Closing, " "); strings.Contains(closing, "failed again") || !strings.Contains(closing, "runs the node's upgrade steps again") {
		t.Errorf("closing %q, want the node running its steps again", closing)
	}
	// The result reads as one: the wait says what it saw, the closing
	// that the retry completed, where the node's upgrade is and what to
	// watch. The wait's "the steps run again" stood above a closing that
	// read the NodeUpgrade completed.
	if d := rep.Steps[1].Detail; d != "the NodeUpgrade controller recreated the pod" {
		t.Errorf("the wait's result %q, want what it saw alone", d)
	}
	nu := strings.TrimPrefix(f.NodeUpgrade, w.sys+"/")
	if c := rep.Closing; len(c) != 2 || !strings.HasPrefix(c[0], "The retry completed: the NodeUpgrade controller recreated the upgrader pod ") ||
		!strings.HasPrefix(c[1], "Watch node "+node+" on the dashboard, or with `upgrade-console watch --plain ") {
		t.Errorf("closing %q, want the retry completed, then the node to watch", c)
	}
	w.setStatus(gvrNodeUpgrade, w.sys, nu, map[string]any{"completed": true})
	if c := p.Closing(w.ctx); len(c) != 2 || !strings.HasPrefix(c[0], "The retry completed: ") ||
		!strings.HasSuffix(c[0], ", and NodeUpgrade "+f.NodeUpgrade+" has completed since: node "+node+" is upgraded.") ||
		!strings.HasPrefix(c[1], "Follow the rest of the upgrade on the dashboard") {
		t.Errorf("closing once the NodeUpgrade completed: %q", c)
	}
	// Rerun of the same plan after the retry: every step already done.
	rep, err = x.Run(w.ctx, p)
	if err != nil || rep.Steps[0].Status != StepAlreadyDone || rep.Steps[1].Status != StepAlreadyDone {
		t.Fatalf("rerun: %v %s", err, describeSteps(rep))
	}
}

// A rerun that finishes before the wait sees its pod: the controller
// deletes the pod and EKS-A the NodeUpgrade. The retry succeeded, and must
// say so, not time out; but a NodeUpgrade that is gone with the node still
// on the old version was not a success (removed by hand, or with its owner),
// and the wait says so instead of calling it finished.
func TestNodeRetryThatFinishesAtOnceSucceeds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		finish func(w *world, node, nu string)
		want   string
		// notUpgraded: the wait must not end on it, and says why.
		notUpgraded bool
	}{
		{"NodeUpgrade removed", func(w *world, node, nu string) {
			w.setKubelet(node, newKubelet)
			if err := w.client.Dynamic.Resource(gvrNodeUpgrade).Namespace(w.sys).Delete(w.ctx, nu, metav1.DeleteOptions{}); err != nil {
				t.Error(err)
			}
		}, "is gone and node %s runs Kubernetes v1.31.9 (kubelet " + newKubelet + "), the version it asked for (" + targetKubeadm + ")", false},
		{"NodeUpgrade completed", func(w *world, node, nu string) {
			w.setStatus(gvrNodeUpgrade, w.sys, nu, map[string]any{"completed": true})
		}, "completed", false},
		{"NodeUpgrade removed, node not upgraded", func(w *world, node, nu string) {
			if err := w.client.Dynamic.Resource(gvrNodeUpgrade).Namespace(w.sys).Delete(w.ctx, nu, metav1.DeleteOptions{}); err != nil {
				t.Error(err)
			}
		}, "is gone, but node %s still runs kubelet " + oldKubelet + ", not Kubernetes v1.31.9 (" + targetKubeadm + "), the version it asked for", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			node := w.seedFailedNode()
			want := tc.want
			if strings.Contains(want, "%s") {
				want = fmt.Sprintf(want, node)
			}
			p, f, err := PlanNodeRetry(w.ctx, w.env, node, NodeRetryOptions{WaitTimeout: 3 * time.Second})
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
					tc.finish(w, node, nu)
					return true, nil
				})
			}()
			rep, err := (&Executor{Audit: w.audit}).Run(w.ctx, p)
			if tc.notUpgraded {
				var wt *WaitTimeoutError
				if !errors.As(err, &wt) || !strings.Contains(wt.Last, want) || !strings.Contains(wt.Hint, "no controller recreates the pod") {
					t.Fatalf("run: %v, want the wait to time out saying %q and what to do\n%s", err, want, describeSteps(rep))
				}
				if closing := strings.Join(p.Closing(w.ctx), "\n"); !strings.Contains(closing, want) || !strings.Contains(closing, "nothing upgrades the node") {
					t.Errorf("closing %q, want it to say %q", closing, want)
				}
				return
			}
			if err != nil {
				t.Fatalf("run: %v\n%s", err, describeSteps(rep))
			}
			if last := rep.Steps[len(rep.Steps)-1]; !strings.Contains(last.Detail, want) {
				t.Errorf("wait step = %+v, want a detail saying %q", last, want)
			}
			// The closing lines say the same, not that the node "could not
			// be read back".
			if closing := strings.Join(p.Closing(w.ctx), "\n"); strings.Contains(closing, "Could not") || !strings.Contains(closing, want) {
				t.Errorf("closing %q, want it to say %q", closing, want)
			}
		})
	}
}

// A completed node upgrade has nothing to retry, and that is success: a
// plan without steps that says why. A name that is no node, or a node of
// another cluster, is bad input; a node no machine of the cluster runs on is
// refused.
func TestNodeRetryOfACompletedNodeHasNothingToRetry(t *testing.T) {
	w := newWorld(t)
	node := w.seedFailedNode()
	w.setKubelet(node, newKubelet)
	w.setStatus(gvrNodeUpgrade, w.sys, node+"-node-upgrader", map[string]any{"completed": true})
	p, f, err := PlanNodeRetry(w.ctx, w.env, node, NodeRetryOptions{})
	if err != nil || f == nil || p == nil {
		t.Fatalf("err = %v, want a plan with nothing to retry and the inspection", err)
	}
	if len(p.Steps) != 0 || p.Action != ActionNodeRetry || p.ConfirmObject != "Node "+node ||
		!strings.Contains(p.Title, "Nothing to retry on node "+node+": NodeUpgrade "+f.NodeUpgrade+" completed and the node runs "+newKubelet) {
		t.Errorf("plan %+v", p)
	}
	// Recorded as already-done, as a recovery step whose effect is in place.
	if err := RecordNothingToRetry(w.ctx, w.audit, p, false); err != nil {
		t.Fatal(err)
	}
	es := w.auditEntries()
	if len(es) != 1 || es[0].Result != upgrade.AuditAlreadyDone || es[0].Action != ActionNodeRetry || es[0].Object != "Node "+node ||
		!strings.Contains(es[0].Message, "Nothing to retry") || !strings.Contains(es[0].Message, "Nothing was changed") {
		t.Errorf("audit entries %+v", es)
	}

	var ie *model.InputError
	if _, _, err := PlanNodeRetry(w.ctx, w.env, "no-such-node", NodeRetryOptions{}); !errors.As(err, &ie) {
		t.Errorf("unknown node: %v, want InputError", err)
	}
	// A node no Machine runs on: not part of an in-place upgrade, refused.
	idle := w.cluster + "-idle"
	w.createNode(idle, newKubelet)
	var refused *RefusedError
	if _, _, err := PlanNodeRetry(w.ctx, w.env, idle, NodeRetryOptions{}); !errors.As(err, &refused) ||
		refused.Failed()[0].Name != "in-place-upgrade" || refused.Object != "Node "+idle || !strings.Contains(err.Error(), "the node of no Machine") {
		t.Errorf("node with no NodeUpgrade: %v, want a refusal on in-place-upgrade", err)
	}
	// A node of another cluster is not retried, nor recorded, under this one.
	other := *w.env
	other.Cluster = "typo-cluster"
	if _, _, err := PlanNodeRetry(w.ctx, &other, node, NodeRetryOptions{}); !errors.As(err, &ie) || !strings.Contains(err.Error(), "belongs to cluster") {
		t.Errorf("node of another cluster: %v, want InputError", err)
	}
}

// Once EKS-A removed the NodeUpgrade, the node itself says whether its
// upgrade is done: the version it runs against the one its machine group is
// to run, in a group that upgrades in place at all.
func TestNodeRetryWithoutANodeUpgradeJudgesTheNode(t *testing.T) {
	w := newWorld(t)
	node := w.seedFailedNode()
	if err := w.client.Dynamic.Resource(gvrNodeUpgrade).Namespace(w.sys).Delete(w.ctx, node+"-node-upgrader", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	clusterRef := "Cluster " + w.ns + "/" + w.cluster

	// Still on the old version: not done, and it says so and what to do.
	p, f, err := PlanNodeRetry(w.ctx, w.env, node, NodeRetryOptions{})
	var refused *RefusedError
	if !errors.As(err, &refused) || p != nil || f == nil {
		t.Fatalf("old node: plan %+v, err %v; want a refusal with the inspection", p, err)
	}
	want := "still runs " + oldKubelet + ", not the Kubernetes 1.31 that " + clusterRef + " spec.kubernetesVersion asks for"
	if d := refused.Failed()[0].Detail; refused.Failed()[0].Name != "in-place-upgrade" || !strings.Contains(d, want) || !strings.Contains(d, "upgrade-console watch --cluster "+w.cluster) {
		t.Errorf("refusal %q, want it to say %q and what to do", d, want)
	}
	if f.NodeUpgrade != "" || f.Group != "control plane" || f.Strategy != StrategyInPlace || f.KubeletVersion != oldKubelet || f.TargetVersion != "1.31" {
		t.Errorf("inspection %+v", f)
	}

	// On the Cluster's version: done, nothing to retry.
	w.setKubelet(node, newKubelet)
	p, _, err = PlanNodeRetry(w.ctx, w.env, node, NodeRetryOptions{})
	if err != nil || len(p.Steps) != 0 || !strings.Contains(p.Title, "runs "+newKubelet+", the Kubernetes 1.31 that "+clusterRef) {
		t.Fatalf("upgraded node: plan %+v, err %v; want nothing to retry", p, err)
	}

	// A group that does not upgrade in place has no in-place steps at all.
	c, err := w.client.Dynamic.Resource(upgrade.GVREKSACluster).Namespace(w.ns).Get(w.ctx, w.cluster, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(c.Object, StrategyRollingUpdate, "spec", "controlPlaneConfiguration", "upgradeRolloutStrategy", "type"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.client.Dynamic.Resource(upgrade.GVREKSACluster).Namespace(w.ns).Update(w.ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := PlanNodeRetry(w.ctx, w.env, node, NodeRetryOptions{}); !errors.As(err, &refused) ||
		!strings.Contains(refused.Failed()[0].Detail, "the control plane of "+clusterRef+" upgrades with RollingUpdate, not InPlace") {
		t.Errorf("rolling group: %v, want a refusal saying it is not upgraded in place", err)
	}
}

// A NodeUpgrade made anew (deleted, and recreated by EKS-A) or whose
// controller lags reports no failure while its pod shows one: that is not
// "nothing to retry", which would call a failed node a success.
func TestNodeRetryReadsAFailureTheNodeUpgradeDoesNotReportYet(t *testing.T) {
	w := newWorld(t)
	node := w.seedFailedNode()
	w.setStatus(gvrNodeUpgrade, w.sys, node+"-node-upgrader", map[string]any{})
	p, f, err := PlanNodeRetry(w.ctx, w.env, node, NodeRetryOptions{})
	if err != nil || len(p.Steps) != 2 {
		t.Fatalf("plan %+v, err %v; want the retry offered", p, err)
	}
	if f.Step != "KubeadmUpgraded" || f.Container != "kubeadm-upgrader" || f.Rerunning || !strings.Contains(f.Reason, "exited non-zero in the upgrader pod") {
		t.Errorf("inspection %+v", f)
	}
}

func TestRunsVersion(t *testing.T) {
	for _, c := range []struct {
		kubelet, target string
		want            bool
	}{
		{"v1.31.3-eks-7e0c9d4", "v1.31.3-eks-1-31-11", true},
		{"v1.31.3-eks-7e0c9d4", "1.31", true},
		{"v1.31.4-eks-7e0c9d4", "v1.31.3-eks-1-31-11", false},
		{"v1.30.5-eks-ce1d5eb", "1.31", false},
		{"v1.310.0", "1.31", false},
		{"", "1.31", false},
		{"v1.31.3", "", false},
		{"v1.31.3", "latest", false},
	} {
		if got := runsVersion(c.kubelet, c.target); got != c.want {
			t.Errorf("runsVersion(%q, %q) = %t, want %t", c.kubelet, c.target, got, c.want)
		}
	}
}

// Once the pod is recreated its steps run again, though the NodeUpgrade still
// shows the old failure: a second retry must not kill the new pod, and a
// rerun after a retry that worked succeeds with nothing to retry. When the
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
	again, f, err := PlanNodeRetry(w.ctx, w.env, node, NodeRetryOptions{})
	if err != nil || f == nil || !f.Rerunning {
		t.Fatalf("err = %v (inspection %+v), want nothing to retry: the steps run again", err, f)
	}
	if len(again.Steps) != 0 || !strings.Contains(again.Title, "Nothing to retry on node "+node) || !strings.Contains(again.Title, "recreated") {
		t.Fatalf("rerun plan = %+v, want no steps and why", again)
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

// The kubelet restarts the failed container in the same pod (same UID)
// while the confirmation waits: the retry must not delete a pod whose step
// runs again (killing kubeadm mid-upgrade), which a UID alone allowed.
func TestNodeRetryRefusesOnceTheStepRunsAgainInTheSamePod(t *testing.T) {
	w := newWorld(t)
	node := w.seedFailedNode()
	p, _, err := PlanNodeRetry(w.ctx, w.env, node, NodeRetryOptions{WaitTimeout: 2 * time.Second})
	if err != nil || len(p.Steps) == 0 {
		t.Fatalf("plan: %v", err)
	}
	pods := w.client.Kube.CoreV1().Pods(w.sys)
	w.rerunStep(node)
	rep, err := (&Executor{Audit: w.audit}).Run(w.ctx, p)
	var cc *ConcurrentChangeError
	if !errors.As(err, &cc) || !rep.Refused(err) || !strings.Contains(cc.What, "running the step again") {
		t.Fatalf("run: %v, want refused: the step runs again\n%s", err, describeSteps(rep))
	}
	if cur, err := pods.Get(w.ctx, node+"-node-upgrader", metav1.GetOptions{}); err != nil || cur.DeletionTimestamp != nil {
		t.Errorf("the upgrader pod was deleted (%v)", err)
	}
}

// A node whose turn has not come, while another node's step has failed:
// the refusal said only that EKS-A creates its NodeUpgrade when its turn
// comes, and the turn waits on the failed node, which it now names with
// its retry.
func TestNodeRetryOfANodeWaitingNamesTheFailedOne(t *testing.T) {
	w := newWorld(t)
	failed := w.seedFailedNode()
	waiting := w.cluster + "-cp-x2"
	w.createCPNode(waiting)
	_, f, err := PlanNodeRetry(w.ctx, w.env, waiting, NodeRetryOptions{})
	var refused *RefusedError
	if !errors.As(err, &refused) || len(f.HeldBy) != 1 || f.HeldBy[0].Node != failed {
		t.Fatalf("plan: %v, held by %+v; want a refusal naming %s", err, f, failed)
	}
	if d := refused.Failed()[0].Detail; !strings.Contains(d, "node "+failed+"'s step KubeadmUpgraded failed") || !strings.Contains(d, "`upgrade-console node retry "+failed+" --cluster "+w.cluster) {
		t.Errorf("refusal %q", d)
	}
	// Its step runs again (a retry under way): not named, nor its retry.
	w.rerunStep(failed)
	if _, f, err = PlanNodeRetry(w.ctx, w.env, waiting, NodeRetryOptions{}); !errors.As(err, &refused) || len(f.HeldBy) != 0 {
		t.Errorf("with the failed node's step running again: %v, held by %+v", err, f.HeldBy)
	}
}

// rerunStep plays the kubelet restarting the failed container of node's
// upgrader pod: the step runs again in the same pod.
func (w *world) rerunStep(node string) {
	w.t.Helper()
	pods := w.client.Kube.CoreV1().Pods(w.sys)
	pod, err := pods.Get(w.ctx, node+"-node-upgrader", metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	cs := pod.Status.InitContainerStatuses[0]
	cs.LastTerminationState, cs.RestartCount = cs.State, 1
	cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
	pod.Status.InitContainerStatuses[0] = cs
	if _, err := pods.UpdateStatus(w.ctx, pod, metav1.UpdateOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

// The kubelet writes the failed pod's status between the retry's read and
// its delete (its back-off): the delete's resourceVersion no longer holds,
// and the retry read the pod again rather than refuse a pod still failed
// (the demo's kubelet did it in 1 CI run of 3).
func TestNodeRetryReadsAgainAPodWrittenBeforeItsDelete(t *testing.T) {
	w := newWorld(t)
	node := w.seedFailedNode()
	// The step's read of the pod before its delete is the run's second
	// (its done check reads it first).
	var reads atomic.Int32
	var written atomic.Bool
	env := w.envAnswered(func(r *http.Request) error {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/pods/"+node+"-node-upgrader") && reads.Add(1) == 2 {
			written.Store(true)
			_, err := w.client.Kube.CoreV1().Pods(w.sys).Patch(context.Background(), node+"-node-upgrader", types.MergePatchType,
				[]byte(`{"metadata":{"annotations":{"kubelet.test/backoff":"1"}}}`), metav1.PatchOptions{})
			return err
		}
		return nil
	})
	p, _, err := PlanNodeRetry(w.ctx, env, node, NodeRetryOptions{WaitTimeout: 2 * time.Second})
	if err != nil || len(p.Steps) == 0 {
		t.Fatalf("plan: %v", err)
	}
	reads.Store(0) // the plan's reads are past
	rep, err := (&Executor{Audit: w.audit}).Run(w.ctx, p)
	if !written.Load() || rep.Steps[0].Status != StepDone {
		t.Fatalf("run: %v (written between: %v), want the pod deleted\n%s", err, written.Load(), describeSteps(rep))
	}
}

// The kubelet runs the failed container again in the same pod: the retry
// is refused while it runs (it would kill that run), as the same state
// found just before the delete is, said as such, not as a pod "recreated"
// or a step that never failed. Planned as nothing to retry, it exited 0,
// recorded already-done.
func TestNodeRetryNamesTheKubeletsRerun(t *testing.T) {
	w := newWorld(t)
	node := w.seedFailedNode()
	w.rerunStep(node)
	p, f, err := PlanNodeRetry(w.ctx, w.env, node, NodeRetryOptions{})
	var refused *RefusedError
	if !errors.As(err, &refused) || p != nil || f == nil || f.RerunContainer == "" || len(refused.Preconditions) != 1 {
		t.Fatalf("plan %+v, inspection %+v, err %v; want the retry refused", p, f, err)
	}
	if d := refused.Preconditions[0].Detail; !strings.Contains(d, "the kubelet runs its container "+f.RerunContainer+" again (running, after exit code") ||
		!strings.Contains(d, "a retry now would kill that run") || strings.Contains(d, "recreated") {
		t.Errorf("refusal %q", d)
	}
}

// A workload cluster's upgrader pod and Node are on its own API server: the
// retry read this one's, and would have deleted the management cluster's
// pod of that name. Refused, with the command to run there; nothing here is
// deleted.
func TestNodeRetryOfAWorkloadClusterIsRefused(t *testing.T) {
	w := newWorld(t)
	node := w.seedFailedNode()
	w.patch(upgrade.GVREKSACluster, w.ns, w.cluster, `{"spec":{"managementCluster":{"name":"mgmt-of-`+w.cluster+`"}}}`)
	before, err := w.client.Kube.CoreV1().Pods(w.sys).Get(w.ctx, node+"-node-upgrader", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := PlanNodeRetry(w.ctx, w.env, node, NodeRetryOptions{})
	var r *RefusedError
	if !errors.As(err, &r) || p != nil {
		t.Fatalf("PlanNodeRetry of a workload cluster's node = %+v, %v; want refused", p, err)
	}
	if msg := err.Error(); !strings.Contains(msg, "managed by mgmt-of-"+w.cluster) || !strings.Contains(msg, "delete pod "+node+"-node-upgrader") {
		t.Errorf("refusal = %q", msg)
	}
	if after, err := w.client.Kube.CoreV1().Pods(w.sys).Get(w.ctx, node+"-node-upgrader", metav1.GetOptions{}); err != nil || after.UID != before.UID {
		t.Errorf("the pod here was touched: %v", err)
	}
}

// A workload cluster's retry is judged from what this API server has of the
// node: its Machine and its NodeUpgrade. The kubectl command is for a step
// that failed; a name that is no node of the Cluster is a typo (exit 1), and
// a node with nothing to retry is told so, as for a Cluster that manages
// itself. The Nodes here are the management cluster's: one of the same
// name is not the workload cluster's.
func TestNodeRetryOfAWorkloadClusterLooksAtItsMachineAndNodeUpgrade(t *testing.T) {
	w := newWorld(t)
	node := w.seedFailedNode()
	w.patch(upgrade.GVREKSACluster, w.ns, w.cluster, `{"spec":{"managementCluster":{"name":"mgmt-of-`+w.cluster+`"}}}`)
	mgmtNode := w.cluster + "-mgmt-node"
	w.createNode(mgmtNode, newKubelet)

	var ie *model.InputError
	var refused *RefusedError
	for _, name := range []string{"no-such-node", mgmtNode} {
		if p, _, err := PlanNodeRetry(w.ctx, w.env, name, NodeRetryOptions{}); !errors.As(err, &ie) || p != nil ||
			!strings.Contains(err.Error(), "no Machine in "+w.sys+" has a node of that name") || strings.Contains(err.Error(), "delete pod") {
			t.Errorf("node retry %s of a workload cluster = %v; want an InputError that it is no node of the Cluster", name, err)
		}
	}
	// A node of another cluster is that cluster's, as for a self-managed one.
	otherMachine := obj("cluster.x-k8s.io/v1beta2", "Machine", w.sys, w.cluster+"-other-m", map[string]any{model.LabelClusterName: "other-" + w.cluster}, nil,
		map[string]any{"clusterName": "other-" + w.cluster,
			"bootstrap":         map[string]any{"configRef": map[string]any{"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": "KubeadmConfig", "name": "x"}},
			"infrastructureRef": map[string]any{"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "VSphereMachine", "name": "x"}})
	w.create(gvrMachine, otherMachine)
	w.setStatus(gvrMachine, w.sys, w.cluster+"-other-m", map[string]any{"nodeRef": map[string]any{"name": w.cluster + "-other-node"}})
	if _, _, err := PlanNodeRetry(w.ctx, w.env, w.cluster+"-other-node", NodeRetryOptions{}); !errors.As(err, &ie) || !strings.Contains(err.Error(), "belongs to cluster") {
		t.Errorf("node of another cluster: %v, want InputError", err)
	}

	// No step reported failed: a failure may show only in the pod, which
	// is not here; refused, not "nothing to retry" (exit 0, already-done).
	w.setStatus(gvrNodeUpgrade, w.sys, node+"-node-upgrader", map[string]any{"completed": false})
	if p, _, err := PlanNodeRetry(w.ctx, w.env, node, NodeRetryOptions{}); !errors.As(err, &refused) || p != nil ||
		!strings.Contains(err.Error(), "no step of NodeUpgrade "+w.sys+"/"+node+"-node-upgrader reports a failure") || !strings.Contains(err.Error(), "get pod "+node+"-node-upgrader") {
		t.Errorf("no step failed: plan %+v, err %v; want a refusal that says to look at the pod there", p, err)
	}

	// Completed: nothing to retry, and no command to delete a pod.
	w.setStatus(gvrNodeUpgrade, w.sys, node+"-node-upgrader", map[string]any{"completed": true})
	p, f, err := PlanNodeRetry(w.ctx, w.env, node, NodeRetryOptions{})
	if err != nil || p == nil || len(p.Steps) != 0 || f == nil ||
		!strings.Contains(p.Title, "Nothing to retry on node "+node+": NodeUpgrade "+w.sys+"/"+node+"-node-upgrader completed") ||
		strings.Contains(strings.Join(p.Notes, " "), "delete pod") {
		t.Errorf("completed: plan %+v, err %v; want nothing to retry", p, err)
	}

	// No NodeUpgrade, in a group that replaces its machines: not upgraded
	// in place, nothing to retry.
	if err := w.client.Dynamic.Resource(gvrNodeUpgrade).Namespace(w.sys).Delete(w.ctx, node+"-node-upgrader", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.patch(upgrade.GVREKSACluster, w.ns, w.cluster, `{"spec":{"controlPlaneConfiguration":{"upgradeRolloutStrategy":{"type":"`+StrategyRollingUpdate+`"}}}}`)
	if _, _, err := PlanNodeRetry(w.ctx, w.env, node, NodeRetryOptions{}); !errors.As(err, &refused) || refused.Failed()[0].Name != "in-place-upgrade" ||
		!strings.Contains(err.Error(), "upgrades with RollingUpdate, not InPlace") || strings.Contains(err.Error(), "delete pod") {
		t.Errorf("rolling group: %v, want a refusal saying it is not upgraded in place", err)
	}
}

// The same for a workload cluster, from its Machines and NodeUpgrades (on
// this API server): its node waiting for its turn names the failed one
// (D8: it said only to wait for a turn that would not come).
func TestNodeRetryOfAWorkloadNodeWaitingNamesTheFailedOne(t *testing.T) {
	w := newWorld(t)
	failed := w.seedFailedNode()
	waiting := w.cluster + "-cp-x2"
	w.createCPNode(waiting)
	w.patch(upgrade.GVREKSACluster, w.ns, w.cluster, `{"spec":{"managementCluster":{"name":"mgmt-of-`+w.cluster+`"}}}`)
	_, f, err := PlanNodeRetry(w.ctx, w.env, waiting, NodeRetryOptions{})
	var refused *RefusedError
	if !errors.As(err, &refused) || f == nil || len(f.HeldBy) != 1 || f.HeldBy[0].Node != failed {
		t.Fatalf("plan: %v, inspection %+v; want a refusal naming %s", err, f, failed)
	}
	if d := refused.Failed()[0].Detail; !strings.Contains(d, "node "+failed+"'s step KubeadmUpgraded failed") {
		t.Errorf("refusal %q", d)
	}
}

// A node no NodeUpgrade upgrades whose kubelet version is not known (a
// workload cluster's Machine without status.nodeInfo, whose Node is not
// read; a Node that reports none) is not said to "still run unknown": it
// may as well be done. The refusal says where the version was looked for
// and the command that reads it where the Node is, held back by another
// node's failed step or not.
func TestNodeRetryOfANodeWhoseKubeletIsNotKnownSaysSo(t *testing.T) {
	w := newWorld(t)
	failed := w.seedFailedNode()
	waiting := w.cluster + "-cp-x2"
	w.createCPNode(waiting)
	check := "get node " + waiting + " -o jsonpath='{.status.nodeInfo.kubeletVersion}'`"
	refusal := func(what string) string {
		t.Helper()
		_, f, err := PlanNodeRetry(w.ctx, w.env, waiting, NodeRetryOptions{})
		var refused *RefusedError
		if !errors.As(err, &refused) || f == nil || f.KubeletVersion != "" {
			t.Fatalf("%s: plan: %v, inspection %+v; want a refusal with no kubelet version", what, err, f)
		}
		d := refused.Failed()[0].Detail
		if strings.Contains(d, "unknown") || strings.Contains(d, oldKubelet) ||
			!strings.Contains(d, "If it runs the Kubernetes 1.31 that Cluster "+w.ns+"/"+w.cluster+" spec.kubernetesVersion asks for, its in-place upgrade is done") {
			t.Errorf("%s: refusal %q", what, d)
		}
		return d
	}

	// A workload cluster: the Node here of that name is the management
	// cluster's, and its kubelet (oldKubelet) is not the node's.
	w.patch(upgrade.GVREKSACluster, w.ns, w.cluster, `{"spec":{"managementCluster":{"name":"mgmt-of-`+w.cluster+`"}}}`)
	elsewhere := "its Machine " + w.sys + "/" + waiting + " reports no kubelet version (status.nodeInfo), and the node is on " + w.cluster + "'s own API server"
	onItsServer := "`kubectl --kubeconfig <" + w.cluster + "'s kubeconfig> " + check
	if d := refusal("workload, held"); !strings.Contains(d, elsewhere) || !strings.Contains(d, onItsServer) ||
		!strings.Contains(d, "node "+failed+"'s step KubeadmUpgraded failed, which holds the upgrade") {
		t.Errorf("workload, held: refusal %q", d)
	}
	if err := w.client.Dynamic.Resource(gvrNodeUpgrade).Namespace(w.sys).Delete(w.ctx, failed+"-node-upgrader", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := refusal("workload"); !strings.Contains(d, elsewhere) || !strings.Contains(d, onItsServer) || strings.Contains(d, "holds the upgrade") {
		t.Errorf("workload: refusal %q", d)
	}

	// A Cluster that manages itself, whose Node reports no version.
	w.patch(upgrade.GVREKSACluster, w.ns, w.cluster, `{"spec":{"managementCluster":{"name":"`+w.cluster+`"}}}`)
	w.setKubelet(waiting, "")
	if d := refusal("self-managed"); !strings.Contains(d, "Node "+waiting+" reports no kubelet version (status.nodeInfo)") ||
		!strings.Contains(d, "`kubectl"+w.env.Conn.String()+" "+check) || strings.Contains(d, "own API server") {
		t.Errorf("self-managed: refusal %q", d)
	}
}
