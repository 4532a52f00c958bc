package model

import (
	"strconv"
	"strings"
	"time"
)

// KindUpgraderPod is the in-place upgrader Pods (UpgraderPod). Like the
// Lease it is informational: nothing waits for it, and a console not allowed
// to read Pods in the system namespace shows the steps without their
// containers.
const KindUpgraderPod Kind = "Pod"

// LabelNodeUpgrader marks the Pods EKS-A's NodeUpgrade controller runs.
const LabelNodeUpgrader = "eks-d-upgrader"

// UpgraderPod is EKS-A's <node>-node-upgrader Pod (facts §5.4): one
// container per in-place step, init containers first, the main container
// last. The NodeUpgrade's conditions say which step failed; its containers
// say why (exit code, message, back-off) and how often it was retried.
type UpgraderPod struct {
	Meta
	NodeName string
	Phase    string // Pending, Running, Succeeded, Failed
	// Containers are the init containers, then the main ones, in the
	// order the pod runs them.
	Containers []UpgraderContainer
}

// UpgraderContainer is one container of an upgrader pod and its status.
type UpgraderContainer struct {
	Name string
	Init bool
	// State is the current state; Last the previous run's end (lastState),
	// what a container in CrashLoopBackOff failed with.
	State        ContainerState
	Last         *ContainerState
	RestartCount int32
}

// ContainerState is one of a container's states: waiting (with its reason),
// running, or terminated (exit code, reason, message). All zero: no status
// reported yet.
type ContainerState struct {
	Waiting, Running, Terminated bool
	Reason                       string
	Message                      string
	ExitCode                     int32
	// Started and Finished are the run's startedAt and (terminated)
	// finishedAt; zero when the kubelet reports none.
	Started, Finished time.Time
}

// UpgraderContainerSteps maps each upgrader pod container to the
// NodeUpgrade step (condition) it reports (facts §5.4).
var UpgraderContainerSteps = map[string]string{
	"components-copier":        "BinariesCopied",
	"containerd-upgrader":      "ContainerdUpgraded",
	"cni-plugins-upgrader":     "CNIPluginsUpgraded",
	"kubeadm-upgrader":         "KubeadmUpgraded",
	"kubelet-kubectl-upgrader": "KubeletUpgraded",
	"post-upgrade-status":      "PostUpgradeCleanupCompleted",
}

// Restarts says a restart count: "1 restart", "3 restarts".
func Restarts(n int32) string {
	if n == 1 {
		return "1 restart"
	}
	return strconv.Itoa(int(n)) + " restarts"
}

// waitingFailures are the waiting reasons that mean the container cannot
// run: it crashed and is backed off, or its image or configuration is bad.
// PodInitializing and ContainerCreating are the normal waits.
var waitingFailures = map[string]bool{
	"CrashLoopBackOff": true, "ImagePullBackOff": true, "ErrImagePull": true, "InvalidImageName": true,
	"CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true,
}

// Failing reports whether the container failed: it exited non-zero, or it
// waits for a reason that will not pass by itself (CrashLoopBackOff,
// ImagePullBackOff…).
func (c *UpgraderContainer) Failing() bool {
	s := c.State
	return (s.Terminated && s.ExitCode != 0) || (s.Waiting && waitingFailures[s.Reason])
}

// StepFailing reports whether the container's step failed and has not
// succeeded since: it exited non-zero, or waits (backed off) or runs again
// after a run that did. A wait that is not an exit (ImagePullBackOff) is a
// stall, not a failed step: a retry (node retry) would not get past it, and
// refuses it. The upgrader pod's restartPolicy is OnFailure: the kubelet
// runs a failed container again and again, backing off up to 5 minutes,
// and EKS-A's NodeUpgrade reads the container's state alone: "Container is
// waiting to be initialized" (Info) through each back-off and "Container is
// still running" through each run. Only the moment between a run's exit
// and the next back-off shows "exited with a non-zero exit code" (Error),
// and the condition's lastTransitionTime restarts at each change.
func (c *UpgraderContainer) StepFailing() bool {
	if c.State.Terminated {
		return c.State.ExitCode != 0
	}
	return c.Last != nil && c.Last.ExitCode != 0
}

// FirstFailure is when the container's step first failed, as the pod
// records it, for a step that began at stepStart: the judge's failure hold
// runs from it, so that a console started later (a CI job's rerun) judges
// the same failure the same way, where a hold timed from when each console
// first saw it began again with each. The kubelet keeps no time of a first
// failure it has run again: a first run that ended is its own finishedAt;
// after reruns it is stepStart plus the length of the last run that failed
// (runs of one container take about as long, and the first began when the
// step did, the init containers running in order), and never after that
// run's end. Zero when the pod reports no times.
func (c *UpgraderContainer) FirstFailure(stepStart time.Time) time.Time {
	if c.RestartCount == 0 && c.State.Terminated {
		return c.State.Finished
	}
	run := c.Last
	if c.State.Terminated {
		run = &c.State
	}
	if run == nil || run.Started.IsZero() || run.Finished.Before(run.Started) || stepStart.IsZero() {
		return time.Time{}
	}
	at := stepStart.Add(run.Finished.Sub(run.Started))
	if at.After(run.Finished) {
		at = run.Finished
	}
	return at
}

// FailureText says how a failing container failed, on one line: its
// state, the run that failed before it (backed off, or running again) and
// its restarts: "waiting: CrashLoopBackOff after terminated: exit code 1
// (Error): … (3 restarts)".
func (c *UpgraderContainer) FailureText() string {
	s := c.State
	var b strings.Builder
	switch {
	case s.Running:
		b.WriteString("running again")
	case s.Waiting:
		// The back-off's message repeats the pod's name and UID.
		b.WriteString(ContainerState{Waiting: true, Reason: s.Reason}.String())
	default:
		b.WriteString(s.String())
	}
	if !s.Terminated && c.Last != nil {
		b.WriteString(" after " + c.Last.String())
	}
	if c.RestartCount > 0 {
		b.WriteString(" (" + Restarts(c.RestartCount) + ")")
	}
	return b.String()
}

// StepContainer is the container of p that runs an in-place step, nil when
// p has none (UpgraderPodCreated, which no container reports).
func (p *UpgraderPod) StepContainer(step string) *UpgraderContainer {
	for i := range p.Containers {
		if UpgraderContainerSteps[p.Containers[i].Name] == step {
			return &p.Containers[i]
		}
	}
	return nil
}

// StepFailure is an in-place step that failed.
type StepFailure struct {
	Step string
	// Condition is the step's condition on the NodeUpgrade (zero when it
	// reports none).
	Condition Condition
	// Container is the step's container when the upgrader pod says it
	// failed; nil when the NodeUpgrade alone does.
	Container *UpgraderContainer
	// Pod is the upgrader pod Container is of.
	Pod *UpgraderPod
}

// Rerun reports whether the kubelet runs the failed container again: the
// step may yet succeed, and deleting its pod (a retry) would kill it
// mid-run.
func (f StepFailure) Rerun() bool { return f.Container != nil && f.Container.State.Running }

// Reason says why the step failed, on one line.
func (f StepFailure) Reason() string {
	if f.Container != nil {
		return "container " + f.Container.Name + " " + f.Container.FailureText()
	}
	return oneLine(reasonText(f.Condition))
}

// NodeStepFailure is the first in-place step of nu, which upgrades node,
// that failed: its container failed in the node's upgrader pod
// (StepFailing), or the NodeUpgrade says so (StepFailed). The pod is read
// first: through the kubelet's restarts the NodeUpgrade mostly reads
// "waiting" or "running" (see StepFailing). A pod older than nu (another
// upgrade's) or being deleted (a retry) says nothing of nu.
func (s *ClusterState) NodeStepFailure(nu *NodeUpgrade, node string) (StepFailure, bool) {
	return StepFailureOf(nu, s.UpgraderPodOf(node))
}

// StepFailureOf is NodeStepFailure with the node's upgrader pod found (nil
// when there is none).
func StepFailureOf(nu *NodeUpgrade, pod *UpgraderPod) (StepFailure, bool) {
	pod = podOf(nu, pod)
	for _, step := range NodeUpgradeSteps {
		c, ok := nu.Conditions.Get(step)
		if ok && c.IsTrue() {
			continue
		}
		if pod != nil {
			if uc := pod.StepContainer(step); uc != nil && uc.StepFailing() {
				return StepFailure{Step: step, Condition: c, Container: uc, Pod: pod}, true
			}
		}
		// A pod made after the condition failed (a retry) runs the step
		// again: the condition is the old pod's until EKS-A's next
		// reconcile reads the new one.
		if ok && StepFailed(nu.Conditions, c) && (pod == nil || !pod.CreationTimestamp.After(c.LastTransitionTime)) {
			return StepFailure{Step: step, Condition: c}, true
		}
	}
	return StepFailure{}, false
}

// podOf is pod when it is nu's: nil when it is older than nu (another
// upgrade's) or being deleted (a retry), which says nothing of nu.
func podOf(nu *NodeUpgrade, pod *UpgraderPod) *UpgraderPod {
	if pod == nil || pod.CreationTimestamp.Before(nu.CreationTimestamp) || !pod.DeletionTimestamp.IsZero() {
		return nil
	}
	return pod
}

// Failing is the pod's first failing container, nil when none is.
func (p *UpgraderPod) Failing() *UpgraderContainer {
	for i := range p.Containers {
		if p.Containers[i].Failing() {
			return &p.Containers[i]
		}
	}
	return nil
}

// LogsCommand is the kubectl command that prints a container's log.
func (p *UpgraderPod) LogsCommand(container string, conn ConnFlags) string {
	ns := p.Namespace
	if ns == "" {
		ns = SystemNamespace
	}
	return "kubectl" + conn.String() + " logs -n " + ns + " " + p.Name + " -c " + container
}

// String says a state as kubectl's describe does, on one line:
// "terminated: exit code 1 (Error): kubeadm upgrade failed",
// "waiting: CrashLoopBackOff", "running".
func (s ContainerState) String() string {
	var b strings.Builder
	switch {
	case s.Terminated:
		b.WriteString("terminated: exit code " + strconv.Itoa(int(s.ExitCode)))
		if s.Reason != "" {
			b.WriteString(" (" + s.Reason + ")")
		}
	case s.Running:
		b.WriteString("running")
	case s.Waiting:
		b.WriteString("waiting")
		if s.Reason != "" {
			b.WriteString(": " + s.Reason)
		}
	default:
		return "no status yet"
	}
	if msg := strings.TrimSpace(s.Message); msg != "" {
		b.WriteString(": " + strings.Join(strings.Fields(msg), " "))
	}
	return b.String()
}

// UpgraderSuffix ends the names EKS-A gives a machine's NodeUpgrade
// (<machine>-node-upgrader) and the upgrader Pod on its node
// (<node>-node-upgrader).
const UpgraderSuffix = "-node-upgrader"

// RetryOnOwnAPIServer is the command that retries a failed in-place step of
// a node of a workload cluster: EKS-A runs its upgrader pod on the cluster's
// own API server, with its Node, where the console does not reach, so node
// retry (which deletes that pod) can only name what to run there.
func RetryOnOwnAPIServer(cluster, node string) string {
	return "`kubectl --kubeconfig <" + cluster + "'s kubeconfig> -n " + SystemNamespace + " delete pod " + node + UpgraderSuffix + "`"
}

// NodeUpgradeName is the name of the NodeUpgrade EKS-A creates for a
// machine it upgrades in place.
func NodeUpgradeName(machine string) string { return machine + UpgraderSuffix }

// UpgraderPodName is the name of the upgrader pod EKS-A runs on a node it
// upgrades in place, in SystemNamespace.
func UpgraderPodName(node string) string { return node + UpgraderSuffix }

// UpgraderPodOf is the upgrader pod running on a node, nil when there is
// none in the snapshot.
func (s *ClusterState) UpgraderPodOf(node string) *UpgraderPod {
	if s == nil || node == "" {
		return nil
	}
	for i := range s.UpgraderPods {
		if p := &s.UpgraderPods[i]; p.NodeName == node || (p.NodeName == "" && p.Name == node+UpgraderSuffix) {
			return p
		}
	}
	return nil
}
