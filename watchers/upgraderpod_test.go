package watchers

import (
	"context"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/model"
)

// lastRunStarted is when the crash-looping container's last run began.
var lastRunStarted = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)

// upgraderPodObject is an upgrader pod as EKS-A creates it, its kubeadm
// container crash-looping: the status the kubelet writes after its second
// failure.
func upgraderPodObject(ns, node string) *corev1.Pod {
	c := func(name string) corev1.Container {
		return corev1.Container{Name: name, Image: "public.ecr.aws/eks-anywhere/upgrader:v1.31.14-eks-1-31-47",
			Command: []string{"nsenter", "--target", "1", "--mount", "upgrader", "upgrade", name}}
	}
	done := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-node-upgrader", Namespace: ns, Labels: map[string]string{model.LabelNodeUpgrader: "true"}},
		Spec: corev1.PodSpec{
			NodeName: node, HostPID: true, RestartPolicy: corev1.RestartPolicyOnFailure,
			InitContainers: []corev1.Container{c("components-copier"), c("kubeadm-upgrader")},
			Containers:     []corev1.Container{c("post-upgrade-status")},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodPending,
			InitContainerStatuses: []corev1.ContainerStatus{
				{Name: "components-copier", State: done},
				{Name: "kubeadm-upgrader", RestartCount: 2,
					State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 20s restarting failed container"}},
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
						ExitCode: 1, Reason: "Error", Message: "kubeadm upgrade node failed",
						StartedAt: metav1.NewTime(lastRunStarted), FinishedAt: metav1.NewTime(lastRunStarted.Add(15 * time.Second))}}},
			},
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "post-upgrade-status", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}},
			},
		},
	}
}

// The translation keeps the node, the phase and each container's state in
// the order the pod runs them (init containers first), and nothing of the
// spec.
func TestTranslateUpgraderPod(t *testing.T) {
	p := upgraderPodObject("eksa-system", "mgmt-md-0-a")
	p.ResourceVersion, p.UID = "42", "u-1"
	got := translateUpgraderPod(p)
	want := &model.UpgraderPod{
		Meta:     model.Meta{Name: "mgmt-md-0-a-node-upgrader", Namespace: "eksa-system", UID: "u-1", ResourceVersion: "42"},
		NodeName: "mgmt-md-0-a", Phase: "Pending",
		Containers: []model.UpgraderContainer{
			{Name: "components-copier", Init: true, State: model.ContainerState{Terminated: true, Reason: "Completed"}},
			{Name: "kubeadm-upgrader", Init: true, RestartCount: 2,
				State: model.ContainerState{Waiting: true, Reason: "CrashLoopBackOff", Message: "back-off 20s restarting failed container"},
				// Its times: the judge's failure hold runs from them.
				Last: &model.ContainerState{Terminated: true, ExitCode: 1, Reason: "Error", Message: "kubeadm upgrade node failed",
					Started: lastRunStarted, Finished: lastRunStarted.Add(15 * time.Second)}},
			{Name: "post-upgrade-status", State: model.ContainerState{Waiting: true, Reason: "PodInitializing"}},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("translated\n%+v\nwant\n%+v", got, want)
	}
	if f := got.Failing(); f == nil || f.Name != "kubeadm-upgrader" {
		t.Errorf("failing container = %+v, want kubeadm-upgrader", f)
	}

	// A container the kubelet has not reported on yet has no state, and
	// an informer's relist hands back what it already transformed.
	p.Status = corev1.PodStatus{}
	in := &instance{w: &Watcher{}, spec: &upgraderPodSpec}
	e, err := in.transform(p)
	if err != nil {
		t.Fatal(err)
	}
	up, ok := e.(*entry).value.(*model.UpgraderPod)
	if !ok || len(up.Containers) != 3 || up.Containers[1].State != (model.ContainerState{}) || up.Containers[1].State.String() != "no status yet" {
		t.Errorf("pod without status = %+v", e.(*entry).value)
	}
	if again, _ := in.transform(e); again != e {
		t.Error("a transformed entry was translated again")
	}
}

// An upgrader pod in the system namespace reaches the snapshot with its
// containers' states, and only it: the namespace's other pods are neither
// in the snapshot nor in the informer's cache.
func TestUpgraderPodsReachTheSnapshot(t *testing.T) {
	cfg := env.Config
	ns := cptest.Namespace(t, cfg)
	pods := kubernetes.NewForConfigOrDie(cfg).CoreV1().Pods(ns)
	ctx := context.Background()
	create(t, cptest.Dynamic(t, cfg), gvrEKSACluster, eksaCluster(ns))
	other := upgraderPodObject(ns, "mgmt-md-0-b")
	other.Name, other.Labels = "eksa-controller-manager-0", nil
	if _, err := pods.Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	w := run(t, cfg, ns)
	s := waitState(t, w, "all sources synced", allSynced)
	if src := s.Source(model.KindUpgraderPod); !src.Installed || src.Forbidden != "" || len(s.UpgraderPods) != 0 {
		t.Fatalf("before any upgrader pod: source %+v, pods %+v", src, s.UpgraderPods)
	}

	want := upgraderPodObject(ns, "mgmt-md-0-a")
	created, err := pods.Create(ctx, want, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Status = want.Status
	if _, err := pods.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	s = waitState(t, w, "the upgrader pod's crash loop", func(s *model.ClusterState) bool {
		p := s.UpgraderPodOf("mgmt-md-0-a")
		return p != nil && p.Failing() != nil
	})
	p := s.UpgraderPodOf("mgmt-md-0-a")
	if len(s.UpgraderPods) != 1 || p.Name != "mgmt-md-0-a-node-upgrader" || p.Phase != "Pending" || len(p.Containers) != 3 {
		t.Fatalf("upgrader pods = %+v", s.UpgraderPods)
	}
	if c := p.Failing(); c.Name != "kubeadm-upgrader" || c.RestartCount != 2 || c.Last == nil || c.Last.ExitCode != 1 {
		t.Errorf("failing container = %+v", c)
	}
	for _, in := range w.insts {
		if in.spec.kind == model.KindUpgraderPod {
			if keys := in.informer.GetStore().ListKeys(); len(keys) != 1 || keys[0] != ns+"/"+want.Name {
				t.Errorf("Pod informer caches %v, want only the upgrader pod", keys)
			}
		}
	}

	if err := pods.Delete(ctx, want.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	waitState(t, w, "the upgrader pod gone", func(s *model.ClusterState) bool { return len(s.UpgraderPods) == 0 })
}

// An identity that may not read Pods in the system namespace sees
// everything else: the Pod source names the missing permission and the
// others sync (nothing waits for it).
func TestForbiddenUpgraderPodsDoNotHoldTheOthers(t *testing.T) {
	cfg := env.Config
	ns := cptest.Namespace(t, cfg)
	const user = "no-pods-operator"
	grantAllBut(t, cfg, user, ns, model.KindUpgraderPod)
	create(t, cptest.Dynamic(t, cfg), gvrEKSACluster, eksaCluster(ns))
	if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Pods(ns).Create(context.Background(), upgraderPodObject(ns, "mgmt-md-0-a"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	w := run(t, cptest.Impersonate(cfg, user), ns)
	s := waitState(t, w, "all sources synced or forbidden", allSynced)
	if src := s.Source(model.KindUpgraderPod); !src.Installed || src.Forbidden != "list pods in "+ns || src.Synced {
		t.Errorf("Pod source = %+v, want forbidden", src)
	}
	for k, src := range s.Sources {
		if k != model.KindUpgraderPod && (!src.Synced || src.Forbidden != "") {
			t.Errorf("%s source = %+v, want synced", k, src)
		}
	}
	if s.Cluster == nil || s.Connection != model.Live || len(s.UpgraderPods) != 0 {
		t.Errorf("restricted user sees cluster=%v connection=%s pods=%d", s.Cluster != nil, s.Connection, len(s.UpgraderPods))
	}
	// The access check answers at once; the recheck (30 s) is not waited for.
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the others took %s to sync", d)
	}
}
