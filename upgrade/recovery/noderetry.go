package recovery

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upgrade-console/upgrade-console/model"
)

// Retrying a failed in-place node upgrade. A NodeUpgrade's steps are the init
// containers of the upgrader pod <node>-node-upgrader; when one exits
// non-zero, EKS-A's documented retry (designs/in-place-upgrades-eksa.md) is to
// fix the cause and delete the pod: the NodeUpgrade controller recreates it
// and the steps run again from the first.

// StepContainers maps a NodeUpgrade step condition to the container that runs it.
var StepContainers = map[string]string{
	"BinariesCopied":              "components-copier",
	"ContainerdUpgraded":          "containerd-upgrader",
	"CNIPluginsUpgraded":          "cni-plugins-upgrader",
	"KubeadmUpgraded":             "kubeadm-upgrader",
	"KubeletUpgraded":             "kubelet-kubectl-upgrader",
	"PostUpgradeCleanupCompleted": "post-upgrade-status",
}

// AnnotationSimulatedLogPrefix is where the demo leaves a container's log
// (see model.AnnotationSimulatedLogPrefix); it is read only when the kubelet
// cannot serve pods/log, and what it gives is shown as simulated.
const AnnotationSimulatedLogPrefix = model.AnnotationSimulatedLogPrefix

// DefaultLogLines is how many log lines are shown.
const DefaultLogLines = 20

// DefaultPodRecreateTimeout bounds the wait for the controller to recreate
// the upgrader pod.
const DefaultPodRecreateTimeout = 2 * time.Minute

// NodeFailure is what went wrong with a node's in-place upgrade.
type NodeFailure struct {
	Node        string
	Machine     string
	NodeUpgrade string // "eksa-system/<machine>-node-upgrader"
	// NodeUpgradeUID tells the NodeUpgrade inspected from a later one of
	// the same name.
	NodeUpgradeUID string
	Completed      bool
	// Step is the failed step's condition type ("KubeadmUpgraded"), empty
	// when no step failed.
	Step      string
	Container string
	// Reason is the condition's reason (EKS-A puts the sentence there:
	// "Container exited with a non-zero exit code, reason: Error").
	Reason string
	// FailedAt is when the step's condition turned False.
	FailedAt time.Time
	// Rerunning is set when the failure belongs to an earlier upgrader pod:
	// the current one was created after it, and its container has not
	// failed (yet). The NodeUpgrade keeps the old condition until the new
	// pod's steps report.
	Rerunning bool
	// ContainerState is the container's state from the pod status
	// ("terminated: exit code 1, reason Error"), when the pod reports it.
	ContainerState string
	Pod            string // "eksa-system/<node>-node-upgrader"
	PodUID         string
	PodCreated     time.Time
	// Log holds the container's last lines; LogSource says where they come
	// from; LogError why there is no log.
	Log       []string
	LogSource string
	LogError  string
	// Events are the latest events about the NodeUpgrade and its pod.
	Events []string
}

// InspectNode finds the NodeUpgrade of a node and, when a step failed, the
// failing container's state and last log lines. It only reads.
func InspectNode(ctx context.Context, env *Env, node string, tail int) (*NodeFailure, error) {
	if tail <= 0 {
		tail = DefaultLogLines
	}
	sys := env.systemNS()
	nus, err := env.res(gvrNodeUpgrade, sys).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list NodeUpgrades in %s: %w", sys, err)
	}
	var nu *unstructured.Unstructured
	var machineName string
	for i := range nus.Items {
		mname, _, _ := unstructured.NestedString(nus.Items[i].Object, "spec", "machine", "name")
		m, err := getOpt(ctx, env.res(gvrMachine, sys), mname)
		if err != nil {
			return nil, fmt.Errorf("read Machine %s/%s: %w", sys, mname, err)
		}
		nodeName := ""
		if m != nil {
			nodeName, _, _ = unstructured.NestedString(m.Object, "status", "nodeRef", "name")
		}
		if nodeName == node || (nodeName == "" && mname == node) {
			if owner := clusterOf(m); owner != "" && owner != env.Cluster {
				return nil, &model.InputError{Source: "node " + node, Problem: fmt.Sprintf("belongs to cluster %q (Machine %s/%s), not %q", owner, sys, mname, env.Cluster),
					Fix: "give that cluster with --cluster, so the audit log records the action against it"}
			}
			nu, machineName = &nus.Items[i], mname
			break
		}
	}
	if nu == nil {
		// A node of the cluster with nothing to retry is a refusal (exit 3,
		// recorded); a name that is no node is a typo.
		n, err := getOpt(ctx, env.Client.Dynamic.Resource(nodesGVR), node)
		if err != nil {
			return nil, err
		}
		if n != nil {
			return nil, &RefusedError{Action: ActionNodeRetry, Cluster: env.Cluster, Object: ref("Node", "", node), Preconditions: []Precondition{{
				Name: "in-place-upgrade", Description: "an in-place upgrade (a NodeUpgrade) is under way on the node",
				Detail: "no NodeUpgrade in " + sys + " upgrades node " + node + ": its upgrade is not in place, not started, or finished (EKS-A removes the NodeUpgrades when it is done); nothing to retry"}}}
		}
		return nil, &model.InputError{Source: "node " + node, Problem: "no Node of that name, and no NodeUpgrade in " + sys + " upgrades it",
			Fix: "check the node name (`kubectl get nodes`, `kubectl get nodeupgrades -n " + sys + "`); only in-place upgrades have per-node steps"}
	}
	f := &NodeFailure{Node: node, Machine: machineName, NodeUpgrade: sys + "/" + nu.GetName(), NodeUpgradeUID: string(nu.GetUID()), Pod: sys + "/" + node + "-node-upgrader"}
	f.Completed, _, _ = unstructured.NestedBool(nu.Object, "status", "completed")
	conds, _, _ := unstructured.NestedSlice(nu.Object, "status", "conditions")
	byType := map[string]map[string]any{}
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok {
			t, _ := m["type"].(string)
			byType[t] = m
		}
	}
	for _, step := range model.NodeUpgradeSteps {
		c, ok := byType[step]
		if !ok {
			continue
		}
		status, _ := c["status"].(string)
		severity, _ := c["severity"].(string)
		reason, _ := c["reason"].(string)
		if status == "False" && (severity == string(model.SeverityError) || strings.Contains(reason, "non-zero exit code")) {
			f.Step, f.Container, f.Reason = step, StepContainers[step], reason
			if ts, _ := c["lastTransitionTime"].(string); ts != "" {
				f.FailedAt, _ = time.Parse(time.RFC3339, ts)
			}
			break
		}
	}

	pod, err := env.Client.Kube.CoreV1().Pods(sys).Get(ctx, node+"-node-upgrader", metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		pod = nil
	case err != nil:
		return nil, fmt.Errorf("read pod %s: %w", f.Pod, err)
	default:
		f.PodUID, f.PodCreated = string(pod.UID), pod.CreationTimestamp.Time
	}
	if pod != nil && f.Container != "" {
		f.ContainerState = containerState(pod, f.Container)
		f.Rerunning = !failedInPod(pod, f.Container, f.FailedAt)
		f.Log, f.LogSource, f.LogError = containerLog(ctx, env, pod, f.Container, tail)
	}
	f.Events = recentEvents(ctx, env, nu.GetName(), node+"-node-upgrader")
	return f, nil
}

// clusterOf is the CAPI cluster a Machine belongs to ("" when unknown).
func clusterOf(m *unstructured.Unstructured) string {
	if m == nil {
		return ""
	}
	return m.GetLabels()[model.LabelClusterName]
}

func containerState(pod *corev1.Pod, name string) string {
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, cs := range list {
			if cs.Name != name {
				continue
			}
			st := cs.State
			if st.Terminated == nil && cs.LastTerminationState.Terminated != nil {
				st = cs.LastTerminationState
			}
			switch {
			case st.Terminated != nil:
				return fmt.Sprintf("terminated: exit code %d, reason %s, restarts %d", st.Terminated.ExitCode, st.Terminated.Reason, cs.RestartCount)
			case st.Waiting != nil:
				return fmt.Sprintf("waiting: %s %s", st.Waiting.Reason, st.Waiting.Message)
			case st.Running != nil:
				return "running"
			}
		}
	}
	return ""
}

// failedInPod reports whether the failure of container, seen on the
// NodeUpgrade at failedAt, is this pod's: its container exited non-zero (and
// has not been started again), or, when the pod reports no status for it
// yet, the pod is not newer than the failure.
func failedInPod(pod *corev1.Pod, container string, failedAt time.Time) bool {
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, cs := range list {
			if cs.Name != container {
				continue
			}
			switch st := cs.State; {
			case st.Terminated != nil:
				return st.Terminated.ExitCode != 0
			case st.Waiting != nil && cs.LastTerminationState.Terminated != nil:
				return cs.LastTerminationState.Terminated.ExitCode != 0 // restart back-off after a failure
			default:
				return false // running again, or not started yet
			}
		}
	}
	return failedAt.IsZero() || !pod.CreationTimestamp.After(failedAt)
}

// containerLog reads the container's last lines from the kubelet (pods/log);
// where there is no kubelet (the demo) it falls back to the log the simulated
// controllers left on the pod, and says so.
func containerLog(ctx context.Context, env *Env, pod *corev1.Pod, container string, tail int) ([]string, string, string) {
	n := int64(tail)
	raw, err := env.Client.Kube.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: container, TailLines: &n}).DoRaw(ctx)
	if err == nil {
		return lastLines(string(raw), tail), "container log (kubelet, pods/log)", ""
	}
	if sim, ok := pod.Annotations[AnnotationSimulatedLogPrefix+container]; ok {
		return lastLines(sim, tail), "simulated log (demo: no kubelet; written by the simulated NodeUpgrade controller)", ""
	}
	return nil, "", "log not available from the kubelet (pods/log): " + err.Error()
}

func lastLines(s string, n int) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

func recentEvents(ctx context.Context, env *Env, names ...string) []string {
	var evs []corev1.Event
	seen := map[types.UID]bool{}
	for _, name := range names {
		list, err := env.Client.Kube.CoreV1().Events(env.systemNS()).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			continue
		}
		for _, e := range list.Items {
			// The pod and the NodeUpgrade may share a name.
			if !seen[e.UID] {
				seen[e.UID] = true
				evs = append(evs, e)
			}
		}
	}
	at := func(e corev1.Event) time.Time {
		switch {
		case !e.LastTimestamp.IsZero():
			return e.LastTimestamp.Time
		case !e.EventTime.IsZero():
			return e.EventTime.Time
		}
		return e.CreationTimestamp.Time
	}
	sort.Slice(evs, func(i, j int) bool { return at(evs[i]).Before(at(evs[j])) })
	if len(evs) > 5 {
		evs = evs[len(evs)-5:]
	}
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		out = append(out, fmt.Sprintf("%s %s %s: %s", at(e).UTC().Format("15:04:05"), e.Type, e.Reason, e.Message))
	}
	return out
}

// NodeRetryOptions tune the retry.
type NodeRetryOptions struct {
	// Tail is the number of log lines shown (DefaultLogLines when zero).
	Tail int
	// WaitTimeout bounds the wait for the recreated pod
	// (DefaultPodRecreateTimeout when zero).
	WaitTimeout time.Duration
}

// PlanNodeRetry returns the inspection of the node and, when a step failed,
// the retry plan; otherwise a *RefusedError with the reason (the inspection
// is returned either way, for display).
func PlanNodeRetry(ctx context.Context, env *Env, node string, o NodeRetryOptions) (*Plan, *NodeFailure, error) {
	if o.WaitTimeout <= 0 {
		o.WaitTimeout = DefaultPodRecreateTimeout
	}
	f, err := InspectNode(ctx, env, node, o.Tail)
	if err != nil {
		return nil, nil, err
	}
	pre := []Precondition{{Name: "not-completed", Description: "the node's upgrade has not completed", OK: !f.Completed, Detail: "NodeUpgrade " + f.NodeUpgrade + " completed"}}
	if !f.Completed {
		pre[0].Detail = "NodeUpgrade " + f.NodeUpgrade + " not completed"
	}
	failed := Precondition{Name: "step-failed", Description: "a step of the node's upgrade failed, in its current upgrader pod", OK: f.Step != "" && !f.Rerunning}
	switch {
	case f.Completed:
		failed.Detail = "the node's upgrade completed; nothing to retry"
	case f.Step == "":
		failed.Detail = "no step reports a failure: the upgrade is waiting or running; nothing to retry"
	case f.Rerunning:
		failed.Detail = fmt.Sprintf("%s failed at %s, but the upgrader pod was recreated %s ago and its steps run again (%s: %s); wait for them",
			f.Step, f.FailedAt.UTC().Format(time.RFC3339), ago(env.now(), f.PodCreated), f.Container, orUnknown(f.ContainerState))
	default:
		failed.Detail = fmt.Sprintf("%s failed (container %s): %s", f.Step, f.Container, f.Reason)
	}
	pre = append(pre, failed)
	// A pod already deleted by an interrupted retry is not an obstacle: the
	// plan then only waits for its successor.
	podPre := Precondition{Name: "upgrader-pod", Description: "the upgrader pod exists or is being recreated", OK: true}
	if f.PodUID != "" {
		podPre.Detail = "pod " + f.Pod + " created " + ago(env.now(), f.PodCreated) + " ago"
	} else {
		podPre.Detail = "pod " + f.Pod + " is gone: the controller is to recreate it"
	}
	pre = append(pre, podPre)
	if err := refuseUnless(ActionNodeRetry, env.Cluster, ref("Node", "", node), pre); err != nil {
		return nil, f, err
	}

	pods := env.Client.Kube.CoreV1().Pods(env.systemNS())
	podName := node + "-node-upgrader"
	failedUID := f.PodUID
	podRef := "Pod " + f.Pod
	p := &Plan{
		Action:        ActionNodeRetry,
		Cluster:       env.Cluster,
		Title:         fmt.Sprintf("Retry the in-place upgrade of node %s: delete its upgrader pod so the NodeUpgrade controller recreates it", node),
		Confirm:       node,
		ConfirmObject: "Node " + node,
		Preconditions: pre,
		Notes: []string{
			"Fix what made " + f.Container + " fail first (see its log): the recreated pod runs every step again from the first.",
		},
	}
	gone := func(ctx context.Context) (bool, string, error) {
		cur, err := pods.Get(ctx, podName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, "the failed pod is gone", nil
		}
		if err != nil {
			return false, "", err
		}
		if string(cur.UID) != failedUID {
			return true, "the failed pod was replaced", nil
		}
		if cur.DeletionTimestamp != nil {
			return true, "the failed pod is terminating", nil
		}
		return false, "", nil
	}
	p.Steps = append(p.Steps, Step{
		Name:   "delete-upgrader-pod",
		Title:  "Delete the upgrader pod (EKS-A's documented retry)",
		Object: podRef,
		Change: fmt.Sprintf("delete (only the pod with UID %s)", orUnknown(failedUID)),
		Before: map[string]any{"pod": podName, "uid": nilIfEmpty(failedUID), "failedStep": f.Step},
		After:  map[string]any{"pod": nil},
		done:   gone,
		do: func(ctx context.Context, dry bool) (string, error) {
			uid := types.UID(failedUID)
			err := pods.Delete(ctx, podName, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, DryRun: dryRunOpt(dry)})
			if apierrors.IsNotFound(err) {
				return "already gone", errNoWrite
			}
			return "pod deleted", guarded(ctx, err, podRef, "a different pod now has this name", nil)
		},
	})
	nuName := strings.TrimPrefix(f.NodeUpgrade, env.systemNS()+"/")
	completed := func(nu *unstructured.Unstructured) bool {
		done, _, _ := unstructured.NestedBool(nu.Object, "status", "completed")
		return done
	}
	nuUID := f.NodeUpgradeUID
	recreated := func(ctx context.Context) (bool, string, error) {
		cur, err := pods.Get(ctx, podName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			// A quick rerun can finish before a poll sees its pod: the
			// controller then deletes the pod (and EKS-A the NodeUpgrade,
			// with the upgrade object that made it). That is success.
			nu, err := getOpt(ctx, env.res(gvrNodeUpgrade, env.systemNS()), nuName)
			if err != nil {
				return false, "", err
			}
			switch {
			case nu == nil || (nuUID != "" && string(nu.GetUID()) != nuUID):
				return true, "NodeUpgrade " + f.NodeUpgrade + " is gone: its upgrade finished and was cleaned up", nil
			case completed(nu):
				return true, "NodeUpgrade " + f.NodeUpgrade + " completed", nil
			}
			return false, "pod not recreated yet", nil
		}
		if err != nil {
			return false, "", err
		}
		if string(cur.UID) == failedUID {
			if cur.DeletionTimestamp != nil {
				return false, "the failed pod is terminating", nil
			}
			return false, "the failed pod is still there", nil
		}
		return true, "the controller recreated the pod; the steps run again", nil
	}
	p.Steps = append(p.Steps, Step{
		Name:   "wait-pod-recreated",
		Title:  "Wait for the NodeUpgrade controller to recreate the pod",
		Object: podRef,
		Change: fmt.Sprintf("none (waits up to %s)", o.WaitTimeout),
		Wait:   true,
		done:   recreated,
		do: func(ctx context.Context, _ bool) (string, error) {
			last, err := pollState(ctx, env.poll(), o.WaitTimeout, recreated)
			if err != nil {
				if ctx.Err() != nil {
					return last, ctx.Err()
				}
				return last, &WaitTimeoutError{What: "pod " + f.Pod + " not recreated", After: o.WaitTimeout, Last: last,
					Hint: "check the eksa-controller-manager logs; run the action again to keep waiting, or `upgrade-console node retry " + node + " --cluster " + env.Cluster + " --dry-run` to see the node's state"}
			}
			return last, nil
		},
	})
	p.closing = func(ctx context.Context) []string {
		// What a retry that worked comes to: EKS-A removes a node's
		// NodeUpgrade once its upgrade is done.
		if nu, err := getOpt(ctx, env.res(gvrNodeUpgrade, env.systemNS()), strings.TrimPrefix(f.NodeUpgrade, env.systemNS()+"/")); err == nil && nu == nil {
			return []string{fmt.Sprintf("NodeUpgrade %s is gone: the node's in-place upgrade finished and EKS-A removed it.", f.NodeUpgrade),
				"Follow the rest of the upgrade on the dashboard, or with `upgrade-console watch --plain --cluster " + env.Cluster + "`."}
		}
		g, err := InspectNode(ctx, env, node, 1)
		if err != nil {
			return []string{"Could not read the node's upgrade back: " + err.Error()}
		}
		state := "running its steps again"
		switch {
		case g.Completed:
			state = "completed"
		case g.Rerunning:
			// The failed condition is the old pod's until the new one's
			// steps report: read as "failed again", a retry that worked
			// was recorded as failed.
		case g.Step != "":
			state = "failed again at " + g.Step + ": " + g.Reason
		}
		return []string{
			fmt.Sprintf("NodeUpgrade %s is %s (pod %s recreated).", g.NodeUpgrade, state, g.Pod),
			fmt.Sprintf("Follow it on the dashboard, or run `upgrade-console node retry %s --cluster %s` again to see its state.", node, env.Cluster),
		}
	}
	return p, f, nil
}
