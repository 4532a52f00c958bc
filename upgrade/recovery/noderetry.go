package recovery

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
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
	// RerunStep and RerunContainer name a step whose container failed and
	// that the kubelet runs again in the same pod (restartPolicy
	// OnFailure): not retried while it runs, which would kill that run.
	RerunStep, RerunContainer string
	// HeldBy are the nodes whose failed in-place step holds the upgrade,
	// for a node no NodeUpgrade upgrades yet: its turn waits on them.
	HeldBy []HeldBy
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

	// KubeletVersion is what the Node reports (status.nodeInfo.kubeletVersion,
	// "v1.31.3-eks-7e0c9d4"); empty when the Node is gone or does not say.
	// For a Cluster another one manages it is what its Machine copied
	// from the Node (see ManagedBy).
	KubeletVersion string
	// ManagedBy is the Cluster's management cluster when that is another
	// one: its Node is on its own API server and is not read, so an empty
	// KubeletVersion means its Machine did not say.
	ManagedBy string
	// TargetVersion is the Kubernetes version the node's upgrade is to reach:
	// the NodeUpgrade's spec.kubernetesVersion ("v1.31.3-eks-1-31-11") or,
	// without one, the Cluster's for the node's machine group ("1.31").
	// TargetSource says which.
	TargetVersion string
	TargetSource  string
	// Group is the node's machine group in the EKS-A Cluster ("control
	// plane", "worker group md-0") and Strategy how that group upgrades
	// ("InPlace", "RollingUpdate"); read only when no NodeUpgrade upgrades
	// the node, to tell a node that is done from one never upgraded in place.
	Group    string
	Strategy string
}

// InspectNode finds the NodeUpgrade of a node and, when a step failed, the
// failing container's state and last log lines. With no NodeUpgrade for the
// node, NodeUpgrade is empty and what the node runs, and what its machine
// group is to run, say whether there is anything left to upgrade. It only
// reads.
func InspectNode(ctx context.Context, env *Env, node string, tail int) (*NodeFailure, error) {
	if tail <= 0 {
		tail = DefaultLogLines
	}
	sys := env.systemNS()
	nus, err := env.res(gvrNodeUpgrade, sys).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list NodeUpgrades in %s: %w", sys, err)
	}
	machines, err := env.capi(gvrMachine, sys)
	if err != nil {
		return nil, err
	}
	var nu, machine *unstructured.Unstructured
	var machineName string
	for i := range nus.Items {
		mname, _, _ := unstructured.NestedString(nus.Items[i].Object, "spec", "machine", "name")
		m, err := getOpt(ctx, machines, mname)
		if err != nil {
			return nil, fmt.Errorf("read Machine %s/%s: %w", sys, mname, err)
		}
		if nodeOf(m, mname) == node {
			if err := env.ownMachine(node, m, mname); err != nil {
				return nil, err
			}
			nu, machine, machineName = &nus.Items[i], m, mname
			break
		}
	}
	n, err := env.Client.Kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		n = nil
	case err != nil:
		return nil, fmt.Errorf("read Node %s: %w", node, err)
	}
	if nu == nil {
		// A name that is no node is a typo; a node without a NodeUpgrade
		// is judged by the planner from what follows.
		if n == nil {
			return nil, &model.InputError{Source: "node " + node, Problem: "no Node of that name, and no NodeUpgrade in " + sys + " upgrades it",
				Fix: "check the node name (`kubectl" + env.Conn.String() + " get nodes`, `kubectl" + env.Conn.String() + " get nodeupgrades -n " + sys + "`); only in-place upgrades have per-node steps"}
		}
		f := &NodeFailure{Node: node, KubeletVersion: n.Status.NodeInfo.KubeletVersion}
		m, err := nodeMachine(ctx, env, node)
		if err != nil || m == nil {
			return f, err
		}
		if err := env.ownMachine(node, m, m.GetName()); err != nil {
			return nil, err
		}
		f.Machine = m.GetName()
		cluster, err := env.readCluster(ctx)
		if err != nil {
			return nil, err
		}
		f.readGroup(env, cluster, m)
		f.Events = recentEvents(ctx, env, model.UpgraderPodName(node))
		// EKS-A upgrades one node at a time: a failed step on another
		// node holds this one's turn, and the refusal said only to
		// wait for it.
		for i := range nus.Items {
			c, ok := model.FailedStep(nodeUpgradeSteps(&nus.Items[i]))
			if !ok {
				continue
			}
			mname, _, _ := unstructured.NestedString(nus.Items[i].Object, "spec", "machine", "name")
			if mname == "" {
				continue
			}
			other, err := getOpt(ctx, machines, mname)
			if err != nil {
				return nil, fmt.Errorf("read Machine %s/%s: %w", sys, mname, err)
			}
			if clusterOf(other) != env.Cluster {
				continue // another cluster's, in the same namespace
			}
			held := nodeOf(other, mname)
			// Its pod recreated since (a retry under way): the
			// NodeUpgrade keeps the old condition until the new pod's
			// steps report, and naming it sent the operator to retry
			// it again.
			if pod, err := env.Client.Kube.CoreV1().Pods(sys).Get(ctx, model.UpgraderPodName(held), metav1.GetOptions{}); err == nil && !failedInPod(pod, StepContainers[c.Type], c.LastTransitionTime) {
				continue
			}
			f.HeldBy = append(f.HeldBy, HeldBy{Node: held, Step: c.Type})
		}
		return f, nil
	}
	f := &NodeFailure{Node: node, Machine: machineName, NodeUpgrade: sys + "/" + nu.GetName(), NodeUpgradeUID: string(nu.GetUID()), Pod: sys + "/" + model.UpgraderPodName(node)}
	if n != nil {
		f.KubeletVersion = n.Status.NodeInfo.KubeletVersion
	}
	f.TargetVersion, _, _ = unstructured.NestedString(nu.Object, "spec", "kubernetesVersion")
	f.TargetSource = "NodeUpgrade " + f.NodeUpgrade
	if f.TargetVersion == "" && machine != nil {
		// Only shown, and used to judge the node once its NodeUpgrade is
		// gone: a Cluster that cannot be read leaves it unknown.
		if cluster, err := getOpt(ctx, env.eksaCluster(), env.Cluster); err == nil && cluster != nil {
			f.readGroup(env, cluster, machine)
		}
	}
	f.Completed, _, _ = unstructured.NestedBool(nu.Object, "status", "completed")
	steps := nodeUpgradeSteps(nu)
	if c, ok := model.FailedStep(steps); ok {
		f.Step, f.Container, f.Reason, f.FailedAt = c.Type, StepContainers[c.Type], c.Reason, c.LastTransitionTime
	}

	pod, err := env.Client.Kube.CoreV1().Pods(sys).Get(ctx, model.UpgraderPodName(node), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		pod = nil
	case err != nil:
		return nil, fmt.Errorf("read pod %s: %w", f.Pod, err)
	default:
		f.PodUID, f.PodCreated = string(pod.UID), pod.CreationTimestamp.Time
	}
	if pod != nil && f.Step == "" && !f.Completed {
		// Read as "nothing failed", a pod that did fail would make a retry
		// report success: the NodeUpgrade reads a container the kubelet
		// restarts after a failure as waiting (its back-off) or running
		// (the rerun), and one made anew, or whose controller lags, does
		// not report the failure its pod shows.
		if step, container, at := podFailure(pod); step != "" {
			f.Step, f.Container, f.FailedAt = step, container, at
			f.Reason = "container " + container + " exited non-zero in the upgrader pod (the NodeUpgrade reads a container the kubelet backs off as waiting, or does not report it yet)"
		}
	}
	if pod != nil && !f.Completed {
		if step, container := podRerun(pod); step != "" && (f.Step == "" || step == f.Step) {
			f.RerunStep, f.RerunContainer = step, container
			f.ContainerState = containerState(pod, container)
		}
	}
	if pod != nil && f.Container != "" {
		f.ContainerState = containerState(pod, f.Container)
		f.Rerunning = !failedInPod(pod, f.Container, f.FailedAt)
		f.Log, f.LogSource, f.LogError = containerLog(ctx, env, pod, f.Container, tail)
	}
	f.Events = recentEvents(ctx, env, nu.GetName(), model.UpgraderPodName(node))
	return f, nil
}

// HeldBy is a node whose in-place step failed.
type HeldBy struct{ Node, Step string }

// nodeUpgradeSteps are a NodeUpgrade's step conditions.
func nodeUpgradeSteps(nu *unstructured.Unstructured) model.Conditions {
	conds, _, _ := unstructured.NestedSlice(nu.Object, "status", "conditions")
	var steps model.Conditions
	for _, raw := range conds {
		c, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		var mc model.Condition
		mc.Type, _ = c["type"].(string)
		mc.Status, _ = c["status"].(string)
		sev, _ := c["severity"].(string)
		mc.Severity = model.ConditionSeverity(sev)
		mc.Reason, _ = c["reason"].(string)
		if ts, _ := c["lastTransitionTime"].(string); ts != "" {
			mc.LastTransitionTime, _ = time.Parse(time.RFC3339, ts)
		}
		steps = append(steps, mc)
	}
	return steps
}

// clusterOf is the CAPI cluster a Machine belongs to ("" when unknown).
func clusterOf(m *unstructured.Unstructured) string {
	if m == nil {
		return ""
	}
	return m.GetLabels()[model.LabelClusterName]
}

// nodeOf is the node of the Machine named mname (m, nil when it cannot be
// read): its nodeRef, or the machine's own name before the nodeRef is set
// (on vSphere a node is named after its machine).
func nodeOf(m *unstructured.Unstructured, mname string) string {
	if m != nil {
		if n, _, _ := unstructured.NestedString(m.Object, "status", "nodeRef", "name"); n != "" {
			return n
		}
	}
	return mname
}

// ownMachine refuses a node whose Machine is another cluster's, so that the
// audit log never records an action against the wrong cluster.
func (e *Env) ownMachine(node string, m *unstructured.Unstructured, mname string) error {
	if owner := clusterOf(m); owner != "" && owner != e.Cluster {
		return &model.InputError{Source: "node " + node, Problem: fmt.Sprintf("belongs to cluster %q (Machine %s/%s), not %q", owner, e.systemNS(), mname, e.Cluster),
			Fix: "give that cluster with --cluster, so the audit log records the action against it"}
	}
	return nil
}

// nodeMachine finds the Machine whose node is node (nil when none): by name
// first, as vSphere names them alike, then by every Machine's nodeRef.
func nodeMachine(ctx context.Context, env *Env, node string) (*unstructured.Unstructured, error) {
	sys := env.systemNS()
	machines, err := env.capi(gvrMachine, sys)
	if err != nil {
		return nil, err
	}
	m, err := getOpt(ctx, machines, node)
	if err != nil {
		return nil, fmt.Errorf("read Machine %s/%s: %w", sys, node, err)
	}
	if m != nil && nodeOf(m, node) == node {
		return m, nil
	}
	list, err := machines.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Machines in %s: %w", sys, err)
	}
	for i := range list.Items {
		if n, _, _ := unstructured.NestedString(list.Items[i].Object, "status", "nodeRef", "name"); n == node {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

// StrategyInPlace is the EKS-A upgradeRolloutStrategy type of a machine
// group upgraded in place; RollingUpdate, the default, replaces machines.
const (
	StrategyInPlace       = "InPlace"
	StrategyRollingUpdate = "RollingUpdate"
)

// readGroup finds the EKS-A Cluster's machine group of a Machine (the
// control plane, or the worker group EKS-A named its MachineDeployment
// after), how that group upgrades and the Kubernetes version it is to run.
func (f *NodeFailure) readGroup(env *Env, cluster, m *unstructured.Unstructured) {
	spec, _, _ := unstructured.NestedMap(cluster.Object, "spec")
	kube, _, _ := unstructured.NestedString(spec, "kubernetesVersion")
	clusterRef := ref("Cluster", env.clusterNS(), env.Cluster)
	labels := m.GetLabels()
	if _, ok := labels[model.LabelControlPlane]; ok {
		f.Group = "control plane"
		f.Strategy, _, _ = unstructured.NestedString(spec, "controlPlaneConfiguration", "upgradeRolloutStrategy", "type")
		f.TargetVersion, f.TargetSource = kube, clusterRef+" spec.kubernetesVersion"
	} else if md := labels[model.LabelDeploymentName]; md != "" {
		groups, _, _ := unstructured.NestedSlice(spec, "workerNodeGroupConfigurations")
		for _, g := range groups {
			gm, ok := g.(map[string]any)
			if !ok {
				continue
			}
			name, _ := gm["name"].(string)
			if env.Cluster+"-"+name != md {
				continue
			}
			f.Group = "worker group " + name
			f.Strategy, _, _ = unstructured.NestedString(gm, "upgradeRolloutStrategy", "type")
			f.TargetVersion, f.TargetSource = kube, clusterRef+" spec.kubernetesVersion"
			if v, _ := gm["kubernetesVersion"].(string); v != "" {
				f.TargetVersion, f.TargetSource = v, clusterRef+" worker group "+name+" kubernetesVersion"
			}
			break
		}
	}
	if f.Group != "" && f.Strategy == "" {
		f.Strategy = StrategyRollingUpdate
	}
}

// runsVersion reports whether a kubelet version ("v1.31.3-eks-7e0c9d4") is
// the Kubernetes release target names: to the patch when target has one (a
// NodeUpgrade's "v1.31.3-eks-1-31-11"), to the minor otherwise (a Cluster's
// "1.31"). The build suffixes differ by design: an EKS-D kubelet names its
// commit where the NodeUpgrade names the EKS-D release.
func runsVersion(kubelet, target string) bool {
	want, got := versionParts(target), versionParts(kubelet)
	if len(want) < 2 || len(got) < len(want) {
		return false
	}
	for i := range want {
		if want[i] != got[i] {
			return false
		}
	}
	return true
}

// versionCore is the leading major.minor[.patch] of a version, as
// versionParts reads it ("v1.31.3" of "v1.31.3-eks-1-31-11"); "" when it
// has none.
func versionCore(s string) string {
	parts := versionParts(s)
	if len(parts) == 0 {
		return ""
	}
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = strconv.Itoa(p)
	}
	return "v" + strings.Join(out, ".")
}

// versionParts reads the leading major.minor[.patch] of "v1.31.3-eks-…" or
// "1.31".
func versionParts(s string) []int {
	s = strings.TrimPrefix(s, "v")
	var parts []int
	for len(parts) < 3 {
		i := 0
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		if i == 0 {
			break
		}
		n, err := strconv.Atoi(s[:i])
		if err != nil {
			break
		}
		parts = append(parts, n)
		if i == len(s) || s[i] != '.' {
			break
		}
		s = s[i+1:]
	}
	return parts
}

func containerState(pod *corev1.Pod, name string) string {
	for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, cs := range list {
			if cs.Name != name {
				continue
			}
			// The state it is in, then the run that failed before it
			// (a back-off, or the kubelet's rerun): the last run alone
			// read "terminated" of a container in CrashLoopBackOff.
			last := ""
			if t := cs.LastTerminationState.Terminated; t != nil && cs.State.Terminated == nil {
				last = fmt.Sprintf(", after exit code %d, reason %s", t.ExitCode, t.Reason)
			}
			switch st := cs.State; {
			case st.Terminated != nil:
				return fmt.Sprintf("terminated: exit code %d, reason %s, restarts %d", st.Terminated.ExitCode, st.Terminated.Reason, cs.RestartCount)
			case st.Waiting != nil:
				return fmt.Sprintf("waiting: %s%s, restarts %d", st.Waiting.Reason, last, cs.RestartCount)
			case st.Running != nil:
				return fmt.Sprintf("running%s, restarts %d", last, cs.RestartCount)
			}
		}
	}
	return ""
}

// firstStep is the first step, in run order, whose container's status in
// pod matches; empty when none does.
func firstStep(pod *corev1.Pod, match func(corev1.ContainerStatus) bool) (step string, cs corev1.ContainerStatus) {
	for _, step := range model.NodeUpgradeSteps {
		name, ok := StepContainers[step]
		if !ok {
			continue
		}
		for _, list := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
			for _, cs := range list {
				if cs.Name == name && match(cs) {
					return step, cs
				}
			}
		}
	}
	return "", corev1.ContainerStatus{}
}

// podFailure is the first step whose container exited non-zero in the
// upgrader pod and is not running again (a rerun by the kubelet may still
// succeed, and a retry would kill it), with when; empty when none did.
func podFailure(pod *corev1.Pod) (step, container string, at time.Time) {
	exited := func(cs corev1.ContainerStatus) *corev1.ContainerStateTerminated {
		t := cs.State.Terminated
		if t == nil && cs.State.Waiting != nil {
			t = cs.LastTerminationState.Terminated // restart back-off after a failure
		}
		if t != nil && t.ExitCode != 0 {
			return t
		}
		return nil
	}
	step, cs := firstStep(pod, func(cs corev1.ContainerStatus) bool { return exited(cs) != nil })
	if step == "" {
		return "", "", time.Time{}
	}
	return step, cs.Name, exited(cs).FinishedAt.Time
}

// podRerun is the first step whose container the kubelet runs again after
// it exited non-zero; empty when none does.
func podRerun(pod *corev1.Pod) (step, container string) {
	step, cs := firstStep(pod, func(cs corev1.ContainerStatus) bool {
		last := cs.LastTerminationState.Terminated
		return cs.State.Running != nil && last != nil && last.ExitCode != 0
	})
	return step, cs.Name
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
// the retry plan. When the node's upgrade is where a retry would bring it
// (completed, or running its steps again, as after a retry that worked) the
// plan has no steps and its title says why there is nothing to retry: a
// rerun succeeds. A node that is not upgraded in place at all, or not yet,
// is a *RefusedError with the reason. The inspection is returned either way,
// for display.
func PlanNodeRetry(ctx context.Context, env *Env, node string, o NodeRetryOptions) (*Plan, *NodeFailure, error) {
	if o.WaitTimeout <= 0 {
		o.WaitTimeout = DefaultPodRecreateTimeout
	}
	if mgr, cluster, err := env.managerOf(ctx); err != nil {
		return nil, nil, err
	} else if mgr != "" {
		return planElsewhere(ctx, env, cluster, mgr, node)
	}
	f, err := InspectNode(ctx, env, node, o.Tail)
	if err != nil {
		return nil, nil, err
	}
	if f.NodeUpgrade == "" {
		return planWithoutNodeUpgrade(env, f)
	}
	if f.RerunContainer != "" && !f.Completed {
		// Not done, and not retried: refused, as the same state found
		// just before the delete is (exit 3). Planned as nothing to
		// retry, it exited 0 and was recorded already-done, which a
		// script reads as retried.
		return nil, f, &RefusedError{Action: ActionNodeRetry, Cluster: env.Cluster, Object: ref("Node", "", f.Node), Preconditions: []Precondition{{
			Name: "not-running-again", Description: "the failed step's container is not running again",
			Detail: fmt.Sprintf("step %s failed in pod %s, and the kubelet runs its container %s again (%s): a retry now would kill that run; run node retry again if it fails again",
				f.RerunStep, f.Pod, f.RerunContainer, orUnknown(f.ContainerState)),
		}}}
	}
	if why := f.nothingToRetry(env.now()); why != "" {
		return nothingToRetryPlan(env, f, why), f, nil
	}
	pre := []Precondition{
		{Name: "not-completed", Description: "the node's upgrade has not completed", OK: true, Detail: "NodeUpgrade " + f.NodeUpgrade + " not completed"},
		{Name: "step-failed", Description: "a step of the node's upgrade failed, in its current upgrader pod", OK: true,
			Detail: fmt.Sprintf("%s failed (container %s): %s", f.Step, f.Container, f.Reason)},
	}
	// A pod already deleted by an interrupted retry is not an obstacle: the
	// plan then only waits for its successor.
	podPre := Precondition{Name: "upgrader-pod", Description: "the upgrader pod exists or is being recreated", OK: true}
	if f.PodUID != "" {
		podPre.Detail = "pod " + f.Pod + " created " + ago(env.now(), f.PodCreated) + " ago"
	} else {
		podPre.Detail = "pod " + f.Pod + " is gone: the controller is to recreate it"
	}
	pre = append(pre, podPre)

	pods := env.Client.Kube.CoreV1().Pods(env.systemNS())
	podName := model.UpgraderPodName(node)
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
			// Read again just before the delete, which is guarded by
			// what this read saw: the kubelet restarts a failed init
			// container in the same pod (same UID), and a confirmation
			// that waited would kill kubeadm running the step again. A
			// status written between the read and the delete (the
			// kubelet's back-off) is read again, a few times: it refused
			// a retry of a pod still failed.
			var err error
			for range 5 {
				var cur *corev1.Pod
				cur, err = pods.Get(ctx, podName, metav1.GetOptions{})
				switch {
				case apierrors.IsNotFound(err):
					return "already gone", errNoWrite
				case err != nil:
					return "", err
				case string(cur.UID) != failedUID:
					return "", &ConcurrentChangeError{Object: podRef, What: "a different pod now has this name"}
				case !failedInPod(cur, f.Container, f.FailedAt):
					return "", &ConcurrentChangeError{Object: podRef, What: "its " + f.Container + " container is running the step again (" +
						orUnknown(containerState(cur, f.Container)) + "): nothing to retry while it runs"}
				}
				uid, rv := cur.UID, cur.ResourceVersion
				err = pods.Delete(ctx, podName, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}, DryRun: dryRunOpt(dry)})
				if !apierrors.IsConflict(err) {
					break
				}
			}
			if apierrors.IsNotFound(err) {
				return "already gone", errNoWrite
			}
			return "pod deleted", guarded(ctx, err, podRef, "the pod kept changing as it was deleted (the kubelet restarting its container?)", nil)
		},
	})
	nuName := strings.TrimPrefix(f.NodeUpgrade, env.systemNS()+"/")
	completed := func(nu *unstructured.Unstructured) bool {
		done, _, _ := unstructured.NestedBool(nu.Object, "status", "completed")
		return done
	}
	nuUID := f.NodeUpgradeUID
	following := "Follow the rest of the upgrade on the dashboard, or with `upgrade-console watch --plain " + env.clusterFlags() + "`."
	// nuGone judges a NodeUpgrade that is no longer there by the node
	// itself: EKS-A removes it once the node runs the version it asked
	// for, but so goes one deleted by hand, or with its owner, and then
	// nothing upgrades the node (behind).
	nuGone := func(ctx context.Context) (done bool, detail string, behind bool, err error) {
		n, err := env.Client.Kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, fmt.Sprintf("NodeUpgrade %s is gone, and so is node %s", f.NodeUpgrade, node), true, nil
		}
		if err != nil {
			return false, "", false, fmt.Errorf("NodeUpgrade %s is gone; reading node %s: %w", f.NodeUpgrade, node, err)
		}
		kubelet := n.Status.NodeInfo.KubeletVersion
		if runsVersion(kubelet, f.TargetVersion) {
			// The kubelet's build (v1.31.3-eks-7e0c9d4) and the release
			// asked for (v1.31.3-eks-1-31-11) are named differently by
			// design: said as "runs X, the version it asked for (Y)" they
			// read as a contradiction.
			return true, fmt.Sprintf("NodeUpgrade %s is gone and node %s runs Kubernetes %s (kubelet %s), the version it asked for (%s): its upgrade finished and EKS-A removed it",
				f.NodeUpgrade, node, versionCore(f.TargetVersion), kubelet, f.TargetVersion), false, nil
		}
		return false, fmt.Sprintf("NodeUpgrade %s is gone, but node %s still runs kubelet %s, not Kubernetes %s (%s), the version it asked for",
			f.NodeUpgrade, node, orUnknown(kubelet), orUnknown(versionCore(f.TargetVersion)), orUnknown(f.TargetVersion)), true, nil
	}
	podRecreated := func(ctx context.Context) (bool, string, bool, error) {
		cur, err := pods.Get(ctx, podName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			// A quick rerun can finish before a poll sees its pod: the
			// controller then deletes the pod (and EKS-A the NodeUpgrade,
			// with the upgrade object that made it). That is success.
			nu, err := getOpt(ctx, env.res(gvrNodeUpgrade, env.systemNS()), nuName)
			if err != nil {
				return false, "", false, err
			}
			switch {
			case nu == nil:
				return nuGone(ctx)
			case nuUID != "" && string(nu.GetUID()) != nuUID:
				return true, "NodeUpgrade " + f.NodeUpgrade + " was made anew: the new one runs the steps again", false, nil
			case completed(nu):
				return true, "NodeUpgrade " + f.NodeUpgrade + " completed", false, nil
			}
			return false, "pod not recreated yet", false, nil
		}
		if err != nil {
			return false, "", false, err
		}
		if string(cur.UID) == failedUID {
			if cur.DeletionTimestamp != nil {
				return false, "the failed pod is terminating", false, nil
			}
			return false, "the failed pod is still there", false, nil
		}
		// What the step waited for, and no more: "the steps run again"
		// stood above a closing that read the NodeUpgrade completed a
		// moment later, and the two contradicted each other. The closing
		// says where the node's upgrade is when the run ends.
		return true, "the NodeUpgrade controller recreated the pod", false, nil
	}
	// leftBehind is what the last read found of a NodeUpgrade gone with
	// its node not upgraded: no controller recreates the pod then, and a
	// wait that gives up says so. A read that failed leaves it as it was.
	leftBehind := false
	recreated := func(ctx context.Context) (bool, string, error) {
		done, detail, behind, err := podRecreated(ctx)
		if err == nil {
			leftBehind = behind
		}
		return done, detail, err
	}
	p.Steps = append(p.Steps, Step{
		Name:   "wait-pod-recreated",
		Title:  "Wait for the NodeUpgrade controller to recreate the pod",
		Object: podRef,
		Change: fmt.Sprintf("none (waits up to %s for a new pod of that name, created by the NodeUpgrade controller)", o.WaitTimeout),
		Wait:   true,
		done:   recreated,
		do: func(ctx context.Context, _ bool) (string, error) {
			last, err := pollState(ctx, env.poll(), o.WaitTimeout, recreated)
			if err != nil {
				if ctx.Err() != nil {
					return last, ctx.Err()
				}
				hint := "check the eksa-controller-manager logs; run the action again to keep waiting, or `upgrade-console node retry " + node + " " + env.clusterFlags() + " --dry-run` to see the node's state"
				if leftBehind {
					hint = "no controller recreates the pod of a NodeUpgrade that is gone. " + notUpgradedAdvice(env)
				}
				return last, &WaitTimeoutError{What: "pod " + f.Pod + " not recreated", After: o.WaitTimeout, Last: last, Hint: hint}
			}
			return last, nil
		},
	})
	p.closing = func(ctx context.Context) []string {
		// What a retry that worked comes to: EKS-A removes a node's
		// NodeUpgrade once its upgrade is done.
		if nu, err := getOpt(ctx, env.res(gvrNodeUpgrade, env.systemNS()), nuName); err == nil && nu == nil {
			done, detail, _, err := nuGone(ctx)
			switch {
			case err != nil:
				return []string{"Could not read the node back: " + err.Error()}
			case done:
				return []string{"The retry completed: " + detail + ".", following}
			}
			return []string{detail + ": it was removed before the node was upgraded, and nothing upgrades the node now.", notUpgradedAdvice(env)}
		}
		g, err := InspectNode(ctx, env, node, 1)
		if err != nil {
			return []string{"Could not read the node's upgrade back: " + err.Error()}
		}
		if g.NodeUpgrade == "" {
			return []string{"NodeUpgrade " + f.NodeUpgrade + " is gone (removed while the console read it back).", following}
		}
		// The action completed whatever the node does next (the run's
		// steps are done): said first, then where the node's upgrade is
		// now and what to watch. "NodeUpgrade … is completed (pod …
		// recreated)" beside "follow it … to see its state" left the
		// operator to work out whether the retry had done its part, and
		// what was left to follow.
		retried := "The retry completed: the NodeUpgrade controller recreated the upgrader pod " + g.Pod
		flags := env.clusterFlags()
		switch {
		case g.Completed:
			return []string{
				fmt.Sprintf("%s, and NodeUpgrade %s has completed since: node %s is upgraded.", retried, g.NodeUpgrade, node),
				following,
			}
		case g.Step != "" && !g.Rerunning:
			// Rerunning: the failed condition is the old pod's until the
			// new one's steps report; read as "failed again", a retry
			// that worked was recorded as failed.
			return []string{
				fmt.Sprintf("%s, but NodeUpgrade %s failed again at %s: %s.", retried, g.NodeUpgrade, g.Step, g.Reason),
				fmt.Sprintf("Fix what made %s fail before another retry: `upgrade-console node retry %s %s --dry-run` shows its container's log.", g.Step, node, flags),
			}
		}
		return []string{
			fmt.Sprintf("%s, and NodeUpgrade %s runs the node's upgrade steps again from the first.", retried, g.NodeUpgrade),
			fmt.Sprintf("Watch node %s on the dashboard, or with `upgrade-console watch --plain %s`, until its NodeUpgrade completes; if a step fails again, `upgrade-console node retry %s %s --dry-run` shows which, and its log.", node, flags, node, flags),
		}
	}
	return p, f, nil
}

// nothingToRetry says why a node with a NodeUpgrade has nothing to retry:
// its upgrade is done or under way, the state a retry leaves. Empty when a
// step failed in the current upgrader pod (or the pod is gone after a retry
// that was interrupted), which is what the retry is for.
func (f *NodeFailure) nothingToRetry(now time.Time) string {
	switch {
	case f.Completed:
		s := "NodeUpgrade " + f.NodeUpgrade + " completed"
		if f.KubeletVersion != "" {
			s += " and the node runs " + f.KubeletVersion
		}
		return s
	case f.Rerunning:
		return fmt.Sprintf("%s failed at %s, but the upgrader pod %s was recreated %s ago and runs the steps again (%s: %s)",
			f.Step, f.FailedAt.UTC().Format(time.RFC3339), f.Pod, ago(now, f.PodCreated), f.Container, orUnknown(f.ContainerState))
	case f.Step == "":
		return "no step of NodeUpgrade " + f.NodeUpgrade + " has failed: its steps run or wait their turn"
	}
	return ""
}

// managerOf is the cluster that manages the Cluster, when another one does
// (a workload cluster): EKS-A runs its upgrader pods, which a retry deletes,
// on its own API server, where its Nodes are too. Empty for a Cluster that
// manages itself, or that cannot be found: the inspection says which
// cluster the node is of, where "not found" did not. The Cluster is
// returned as read.
func (e *Env) managerOf(ctx context.Context) (string, *unstructured.Unstructured, error) {
	cluster, err := getOpt(ctx, e.eksaCluster(), e.Cluster)
	if err != nil {
		return "", nil, fmt.Errorf("read Cluster %s/%s: %w", e.clusterNS(), e.Cluster, err)
	}
	if cluster == nil {
		return "", nil, nil
	}
	return managedBy(cluster, e.Cluster), cluster, nil
}

// planElsewhere judges a retry of a node of a Cluster another one manages
// from what this API server has of it: its Machine, the Cluster and the
// NodeUpgrade. Its Node and upgrader pod are on its own API server: read
// here, they were the management cluster's, and the delete would have
// removed the management cluster's pod of that name. So a failed step is
// refused with the command to run there, and only a name that is a node of
// the Cluster is: a typo was sent to delete a pod that does not exist.
func planElsewhere(ctx context.Context, env *Env, cluster *unstructured.Unstructured, mgr, node string) (*Plan, *NodeFailure, error) {
	sys := env.systemNS()
	machines, err := env.capi(gvrMachine, sys)
	if err != nil {
		return nil, nil, err
	}
	// Every Machine, not only the Cluster's: a node of another cluster is
	// said to be that cluster's, as for a Cluster that manages itself.
	list, err := machines.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("list Machines in %s: %w", sys, err)
	}
	var m *unstructured.Unstructured
	for i := range list.Items {
		if n, _, _ := unstructured.NestedString(list.Items[i].Object, "status", "nodeRef", "name"); n != node {
			continue
		}
		if m == nil || clusterOf(&list.Items[i]) == env.Cluster {
			m = &list.Items[i]
		}
	}
	if m == nil {
		return nil, nil, &model.InputError{Source: "node " + node,
			Problem: fmt.Sprintf("no Machine in %s has a node of that name (status.nodeRef), and %s is managed by %s: its Nodes are on its own API server", sys, ref("Cluster", env.clusterNS(), env.Cluster), mgr),
			Fix:     "check the node name (`kubectl" + env.Conn.String() + " get machines -n " + sys + " -l " + model.LabelClusterName + "=" + env.Cluster + "` lists its Machines and their nodes)"}
	}
	if err := env.ownMachine(node, m, m.GetName()); err != nil {
		return nil, nil, err
	}
	f := &NodeFailure{Node: node, Machine: m.GetName(), ManagedBy: mgr}
	// The Machine carries what the Node reports (CAPI copies it): the
	// Node itself is not here.
	f.KubeletVersion, _, _ = unstructured.NestedString(m.Object, "status", "nodeInfo", "kubeletVersion")
	nus, err := env.res(gvrNodeUpgrade, sys).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("list NodeUpgrades in %s: %w", sys, err)
	}
	var nu *unstructured.Unstructured
	for i := range nus.Items {
		if mname, _, _ := unstructured.NestedString(nus.Items[i].Object, "spec", "machine", "name"); mname != m.GetName() {
			continue
		}
		if nu == nil || nu.GetCreationTimestamp().Time.Before(nus.Items[i].GetCreationTimestamp().Time) {
			nu = &nus.Items[i]
		}
	}
	if nu == nil {
		f.readGroup(env, cluster, m)
		// EKS-A upgrades one node at a time: a failed step on another of
		// its nodes holds this one's turn, as for a Cluster that manages
		// itself (its pods, which could say a retry is under way, are not
		// here to read).
		byName := map[string]*unstructured.Unstructured{}
		for i := range list.Items {
			byName[list.Items[i].GetName()] = &list.Items[i]
		}
		for i := range nus.Items {
			c, ok := model.FailedStep(nodeUpgradeSteps(&nus.Items[i]))
			if !ok {
				continue
			}
			mname, _, _ := unstructured.NestedString(nus.Items[i].Object, "spec", "machine", "name")
			if other := byName[mname]; other != nil && clusterOf(other) == env.Cluster {
				f.HeldBy = append(f.HeldBy, HeldBy{Node: nodeOf(other, mname), Step: c.Type})
			}
		}
		return planWithoutNodeUpgrade(env, f)
	}
	f.NodeUpgrade, f.NodeUpgradeUID = sys+"/"+nu.GetName(), string(nu.GetUID())
	f.TargetVersion, _, _ = unstructured.NestedString(nu.Object, "spec", "kubernetesVersion")
	f.TargetSource = "NodeUpgrade " + f.NodeUpgrade
	if f.TargetVersion == "" {
		f.readGroup(env, cluster, m)
	}
	f.Completed, _, _ = unstructured.NestedBool(nu.Object, "status", "completed")
	if c, ok := model.FailedStep(nodeUpgradeSteps(nu)); ok {
		f.Step, f.Container, f.Reason, f.FailedAt = c.Type, StepContainers[c.Type], c.Reason, c.LastTransitionTime
	}
	f.Events = recentEvents(ctx, env, nu.GetName())
	if f.Completed {
		return nothingToRetryPlan(env, f, f.nothingToRetry(env.now())), f, nil
	}
	pre := Precondition{Name: "self-managed", Description: "the Cluster manages itself: its Nodes and upgrader pods are on this API server"}
	clusterRef, retry := ref("Cluster", env.clusterNS(), env.Cluster), model.RetryOnOwnAPIServer(env.Cluster, node)
	if f.Step == "" {
		// Not "nothing to retry" (exit 0, recorded already-done): the
		// NodeUpgrade reads a container the kubelet backs off after a
		// failure as waiting, so a failed step may show only in the pod,
		// which is not here to read.
		pre.Detail = fmt.Sprintf("%s is managed by %s: no step of NodeUpgrade %s reports a failure, but one may show only in node %s's upgrader pod (a container the kubelet backs off after a failure reads as waiting), which is on its own API server with the node, where this console does not look. Check it there (`kubectl --kubeconfig <%s's kubeconfig> -n %s get pod %s-node-upgrader`); if a container of it failed, retry there: %s (EKS-A creates it again and reruns the steps)",
			clusterRef, mgr, f.NodeUpgrade, node, env.Cluster, model.SystemNamespace, node, retry)
	} else {
		pre.Detail = fmt.Sprintf("%s is managed by %s: its node %s, whose step %s failed (NodeUpgrade %s), and that node's upgrader pod are on its own API server, which this console does not talk to. Retry there: %s (EKS-A creates it again and reruns the steps; the NodeUpgrade keeps the failed step until the new pod's steps report)",
			clusterRef, mgr, node, f.Step, f.NodeUpgrade, retry)
	}
	return nil, f, &RefusedError{Action: ActionNodeRetry, Cluster: env.Cluster, Object: ref("Node", "", node), Preconditions: []Precondition{pre}}
}

// nothingToRetryPlan is the plan of a node whose upgrade is where a retry would
// bring it: no step, a title that says why.
func nothingToRetryPlan(env *Env, f *NodeFailure, why string) *Plan {
	return &Plan{
		Action:        ActionNodeRetry,
		Cluster:       env.Cluster,
		Title:         fmt.Sprintf("Nothing to retry on node %s: %s.", f.Node, why),
		Confirm:       f.Node,
		ConfirmObject: ref("Node", "", f.Node),
		Notes:         []string{"Follow the upgrade on the dashboard, or with `upgrade-console watch --plain " + env.clusterFlags() + "`."},
	}
}

// planWithoutNodeUpgrade judges a node that no NodeUpgrade upgrades: done
// when its machine group upgrades in place and it runs the version the
// Cluster asks for (EKS-A removes a node's NodeUpgrade once it is done);
// refused when it is not upgraded in place at all, or not yet.
func planWithoutNodeUpgrade(env *Env, f *NodeFailure) (*Plan, *NodeFailure, error) {
	pre := Precondition{Name: "in-place-upgrade", Description: "an in-place upgrade (a NodeUpgrade) is under way on the node"}
	sys, clusterRef := env.systemNS(), ref("Cluster", env.clusterNS(), env.Cluster)
	switch {
	case f.Machine == "":
		pre.Detail = fmt.Sprintf("node %s is the node of no Machine in %s, and no NodeUpgrade upgrades it: it is not part of an in-place upgrade of %s; nothing to retry",
			f.Node, sys, clusterRef)
	case f.Group == "":
		pre.Detail = fmt.Sprintf("Machine %s/%s of node %s is in no machine group of %s (neither the control plane nor a worker group), and no NodeUpgrade upgrades it; nothing to retry",
			sys, f.Machine, f.Node, clusterRef)
	case f.Strategy != StrategyInPlace:
		pre.Detail = fmt.Sprintf("the %s of %s upgrades with %s, not %s (upgradeRolloutStrategy): EKS-A replaces its machines and runs no in-place steps; nothing to retry",
			f.Group, clusterRef, f.Strategy, StrategyInPlace)
	case runsVersion(f.KubeletVersion, f.TargetVersion):
		return nothingToRetryPlan(env, f, fmt.Sprintf("no NodeUpgrade upgrades it, and it runs %s, the Kubernetes %s that %s asks for (EKS-A removes a node's NodeUpgrade once its in-place upgrade is done)",
			f.KubeletVersion, f.TargetVersion, f.TargetSource)), f, nil
	case f.KubeletVersion == "" && len(f.HeldBy) > 0:
		h := f.HeldBy[0]
		pre.Detail = fmt.Sprintf("no NodeUpgrade in %s upgrades node %s, and %s. If it runs the Kubernetes %s that %s asks for, its in-place upgrade is done (EKS-A removes a node's NodeUpgrade once it is); if not, it waits for its turn: EKS-A upgrades one node at a time, and node %s's step %s failed, which holds the upgrade. Nothing to retry here. %s; retry that node once the cause is fixed: `upgrade-console node retry %s %s`",
			sys, f.Node, f.kubeletUnknown(env), orUnknown(f.TargetVersion), f.TargetSource, h.Node, h.Step, f.checkKubelet(env), h.Node, env.clusterFlags())
	case f.KubeletVersion == "":
		pre.Detail = fmt.Sprintf("no NodeUpgrade in %s upgrades node %s, and %s. If it runs the Kubernetes %s that %s asks for, its in-place upgrade is done (EKS-A removes a node's NodeUpgrade once it is); if not, it has not started (EKS-A upgrades one node at a time), or its NodeUpgrade was removed before it finished. Nothing to retry. %s. %s",
			sys, f.Node, f.kubeletUnknown(env), orUnknown(f.TargetVersion), f.TargetSource, f.checkKubelet(env), notUpgradedAdvice(env))
	case len(f.HeldBy) > 0:
		h := f.HeldBy[0]
		pre.Detail = fmt.Sprintf("no NodeUpgrade in %s upgrades node %s yet (it runs %s, not the Kubernetes %s that %s asks for): EKS-A upgrades one node at a time, and node %s's step %s failed, which holds the upgrade; nothing to retry here. Retry that node once the cause is fixed: `upgrade-console node retry %s %s`",
			sys, f.Node, f.KubeletVersion, orUnknown(f.TargetVersion), f.TargetSource, h.Node, h.Step, h.Node, env.clusterFlags())
	default:
		pre.Detail = fmt.Sprintf("no NodeUpgrade in %s upgrades node %s, and it still runs %s, not the Kubernetes %s that %s asks for: its in-place upgrade has not started (EKS-A upgrades one node at a time), or its NodeUpgrade was removed before it finished; nothing to retry. %s",
			sys, f.Node, f.KubeletVersion, orUnknown(f.TargetVersion), f.TargetSource, notUpgradedAdvice(env))
	}
	return nil, f, &RefusedError{Action: ActionNodeRetry, Cluster: env.Cluster, Object: ref("Node", "", f.Node), Preconditions: []Precondition{pre}}
}

// kubeletUnknown says where the node's kubelet version would have been read
// and that it was not there. Without a version the node may as well be
// done as not started: "it still runs unknown" claimed it was behind.
func (f *NodeFailure) kubeletUnknown(env *Env) string {
	if f.ManagedBy != "" {
		return fmt.Sprintf("which Kubernetes it runs is not known here: its Machine %s/%s reports no kubelet version (status.nodeInfo), and the node is on %s's own API server, which this console does not talk to",
			env.systemNS(), f.Machine, env.Cluster)
	}
	return fmt.Sprintf("which Kubernetes it runs is not known: Node %s reports no kubelet version (status.nodeInfo)", f.Node)
}

// checkKubelet is the command that reads the node's kubelet version where
// its Node is.
func (f *NodeFailure) checkKubelet(env *Env) string {
	get := " get node " + f.Node + " -o jsonpath='{.status.nodeInfo.kubeletVersion}'`"
	if f.ManagedBy != "" {
		return "Check it on that cluster: `kubectl --kubeconfig <" + env.Cluster + "'s kubeconfig>" + get
	}
	return "Check it: `kubectl" + env.Conn.String() + get
}

// notUpgradedAdvice is what to do about a node that nothing upgrades although
// it runs an older version than its upgrade asks for.
func notUpgradedAdvice(env *Env) string {
	return "Follow the upgrade with `upgrade-console watch " + env.clusterFlags() + "`: EKS-A creates a node's NodeUpgrade when its turn comes. " +
		"If it does not, check `kubectl" + env.Conn.String() + " get controlplaneupgrades,machinedeploymentupgrades,nodeupgrades -n " + env.systemNS() + "` and the eksa-controller-manager log."
}

// RecordNothingToRetry writes a node retry that found nothing to retry (p
// has no steps: see PlanNodeRetry) to the audit log as already-done, the
// result of a recovery step whose effect was in place: nothing was changed,
// and the rerun is part of the record like the retry before it.
func RecordNothingToRetry(ctx context.Context, audit upgrade.Recorder, p *Plan, dryRun bool) error {
	if audit == nil || p == nil || len(p.Steps) > 0 {
		return nil
	}
	if err := audit.Record(ctx, upgrade.AuditEntry{Cluster: p.Cluster, Action: p.Action, Object: p.ConfirmObject, Result: upgrade.AuditAlreadyDone,
		DryRun: dryRun, Message: p.Title + " Nothing was changed."}); err != nil {
		return upgrade.AuditRecordError(err)
	}
	return nil
}
