package watchers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/upgrade-console/upgrade-console/model"
)

// The in-place upgrader pods are watched like the lock Lease: access check,
// informer, translation on entry, by label, in the system namespace, which
// holds every pod EKS-A runs. The source is informational: the dashboard's
// "synced" rule does not wait for it, and a forbidden one only leaves the
// node detail without the containers' states. A cluster upgraded by rolling
// replacement has no such pod: the informer lists nothing and keeps nothing.
var upgraderPodSpec = kindSpec{kind: model.KindUpgraderPod, resource: "pods", versions: []string{"v1"}, typed: true,
	selectors: func(*Options) (string, string) {
		return "", labels.Set{model.LabelNodeUpgrader: "true"}.String()
	}}

// podListWatch reads Pods of one namespace through the typed client.
func podListWatch(typed kubernetes.Interface, namespace string) (runtime.Object,
	func(context.Context, metav1.ListOptions) (runtime.Object, error),
	func(context.Context, metav1.ListOptions) (watch.Interface, error)) {
	pods := typed.CoreV1().Pods(namespace)
	list := func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return pods.List(ctx, o) }
	return &corev1.Pod{}, list, pods.Watch
}

// translateUpgraderPod keeps the pod's name, node, phase and its
// containers' states; the spec (images, commands, volumes) and the pod's
// conditions are dropped.
func translateUpgraderPod(p *corev1.Pod) *model.UpgraderPod {
	out := &model.UpgraderPod{
		Meta: model.Meta{
			Name:              p.Name,
			Namespace:         p.Namespace,
			UID:               string(p.UID),
			ResourceVersion:   p.ResourceVersion,
			CreationTimestamp: p.CreationTimestamp.Time,
		},
		NodeName: p.Spec.NodeName,
		Phase:    string(p.Status.Phase),
	}
	if p.DeletionTimestamp != nil {
		out.DeletionTimestamp = p.DeletionTimestamp.Time
	}
	// The spec gives the order and the containers not started yet; a
	// status is matched by name (the kubelet lists them in spec order, but
	// says nothing of one it has not seen).
	add := func(cs []corev1.Container, sts []corev1.ContainerStatus, init bool) {
		for _, c := range cs {
			uc := model.UpgraderContainer{Name: c.Name, Init: init}
			for i := range sts {
				if st := &sts[i]; st.Name == c.Name {
					uc.State = containerState(st.State)
					if l := containerState(st.LastTerminationState); l.Terminated {
						uc.Last = &l
					}
					uc.RestartCount = st.RestartCount
					break
				}
			}
			out.Containers = append(out.Containers, uc)
		}
	}
	add(p.Spec.InitContainers, p.Status.InitContainerStatuses, true)
	add(p.Spec.Containers, p.Status.ContainerStatuses, false)
	return out
}

func containerState(s corev1.ContainerState) model.ContainerState {
	switch {
	case s.Terminated != nil:
		return model.ContainerState{Terminated: true, ExitCode: s.Terminated.ExitCode, Reason: model.Printable(s.Terminated.Reason), Message: model.Printable(s.Terminated.Message),
			Started: s.Terminated.StartedAt.Time, Finished: s.Terminated.FinishedAt.Time}
	case s.Running != nil:
		return model.ContainerState{Running: true, Started: s.Running.StartedAt.Time}
	case s.Waiting != nil:
		return model.ContainerState{Waiting: true, Reason: model.Printable(s.Waiting.Reason), Message: model.Printable(s.Waiting.Message)}
	}
	return model.ContainerState{}
}
