package sim

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/upgrade-console/upgrade-console/demo/kinds"
	"github.com/upgrade-console/upgrade-console/demo/objects"
	"github.com/upgrade-console/upgrade-console/demo/release"
	"github.com/upgrade-console/upgrade-console/model"
)

// The in-place upgrade chain (facts §5): the forked KCP/MD controller marks
// its object in-place-upgrade-needed; EKS-A's KCP/MD controller creates a
// ControlPlaneUpgrade / MachineDeploymentUpgrade listing the machines; that
// controller creates one NodeUpgrade at a time; the NodeUpgrade controller
// runs the upgrader pod <node>-node-upgrader whose containers are the seven
// steps, and when they all succeed sets the machine's version.
//
// Retry of a failed step is EKS-A's documented one: delete the upgrader pod;
// the NodeUpgrade controller recreates it and the steps run again.

const (
	upgraderPodLabel = "eks-d-upgrader"
	// stepFailedReason is the kubeadm step's failure as EKS-A reports it
	// (the sentence is the reason; the message is empty).
	stepFailedReason = "Container exited with a non-zero exit code, reason: Error"
)

// inPlaceKind describes the control-plane or the worker side of the chain.
type inPlaceKind struct {
	// healthCheck names the MachineHealthCheck paused meanwhile.
	healthCheck func(name string) string
	annotation  string
	request     schema.GroupVersionResource
	kind        string // ControlPlaneUpgrade, MachineDeploymentUpgrade
	suffix      string // -cp-upgrade, -md-upgrade
	refField    string // spec.controlPlane / spec.machineDeployment
	selector    string // machine label selecting the targets
	comp        string
}

var (
	cpInPlace = inPlaceKind{objects.KCPHealthCheckName, model.AnnotationKCPInPlaceUpgradeNeeded, kinds.ControlPlaneUpgrade, "ControlPlaneUpgrade",
		"-cp-upgrade", "controlPlane", model.LabelControlPlaneName, compKCP}
	mdInPlace = inPlaceKind{objects.WorkerHealthCheckName, model.AnnotationMDInPlaceUpgradeNeeded, kinds.MachineDeploymentUpgrade, "MachineDeploymentUpgrade",
		"-md-upgrade", "machineDeployment", model.LabelDeploymentName, compMD}
)

func (s *Simulator) kcpInPlace(ctx context.Context, owner string, kcp *unstructured.Unstructured, outdated []*unstructured.Unstructured) error {
	return s.inPlace(ctx, owner, cpInPlace, kinds.KCP, kcp, outdated, func() map[string]any {
		tag := str(kcp, "spec", "kubeadmConfigSpec", "clusterConfiguration", "etcd", "local", "imageTag")
		spec, _ := json.Marshal(kcp.Object["spec"])
		return map[string]any{"etcdVersion": tag, "controlPlaneSpecData": base64.StdEncoding.EncodeToString(spec)}
	})
}

func (s *Simulator) mdInPlace(ctx context.Context, owner string, md *unstructured.Unstructured, outdated []*unstructured.Unstructured) error {
	return s.inPlace(ctx, owner, mdInPlace, kinds.MachineDeployment, md, outdated, func() map[string]any {
		spec, _, _ := unstructured.NestedMap(md.Object, "spec", "template", "spec")
		data, _ := json.Marshal(spec)
		return map[string]any{"machineSpecData": base64.StdEncoding.EncodeToString(data)}
	})
}

// inPlace is the forked CAPI controller's mark plus EKS-A's KCP/MD
// controller for one object.
func (s *Simulator) inPlace(ctx context.Context, owner string, p inPlaceKind, gvr schema.GroupVersionResource, obj *unstructured.Unstructured,
	outdated []*unstructured.Unstructured, extra func() map[string]any) error {
	ns, name := obj.GetNamespace(), obj.GetName()
	marked := annotation(obj, p.annotation) == "true"
	if len(outdated) > 0 && !marked {
		if _, err := s.patch(ctx, owner, p.comp, gvr, ns, name, map[string]any{
			"metadata": map[string]any{"annotations": map[string]any{p.annotation: "true"}},
		}); err != nil {
			return err
		}
		s.emit(p.comp, obj, false, "InPlaceUpgradeNeeded", "%d machines need an in-place upgrade to %s", len(outdated), s.targetVersion(obj))
		return nil
	}
	if !marked {
		return nil
	}
	reqName := name + p.suffix
	req := s.get(p.request, ns, reqName)
	switch {
	case req == nil && len(outdated) > 0:
		machines := byAge(s.list(kinds.Machine, ns, map[string]string{p.selector: name}))
		var refs []any
		for _, m := range machines {
			if !deleting(m) {
				refs = append(refs, objRef(m))
			}
		}
		spec := map[string]any{
			p.refField:               objRef(obj),
			"machinesRequireUpgrade": refs,
			"kubernetesVersion":      s.targetVersion(obj),
		}
		for k, v := range extra() {
			spec[k] = v
		}
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": kinds.EKSAVersion,
			"kind":       p.kind,
			"metadata": map[string]any{
				"name": reqName, "namespace": ns,
				"labels":          map[string]any{model.LabelClusterName: s.sc.ClusterName},
				"ownerReferences": []any{objects.OwnerOf(obj).Ref()},
			},
			"spec": spec,
		}}
		// Remediation would replace machines mid-upgrade: EKS-A pauses the
		// health check first.
		if err := s.pauseHealthCheck(ctx, ns, p.healthCheck(name), true); err != nil {
			return err
		}
		got, err := s.create(ctx, owner, compEKSA, p.request, u)
		if err != nil {
			return err
		}
		s.emit(compEKSA, got, false, "Created", "%s %s created for %d machines", p.kind, reqName, len(refs))
	case req != nil && len(outdated) == 0 && flag(req, "status", "ready"):
		if err := s.delete(ctx, owner, p.request, ns, reqName); err != nil {
			return err
		}
		// What the garbage collector and the NodeUpgrade finalizer do on a
		// real cluster: the NodeUpgrades go with their request, and their
		// upgrader pods with them.
		if err := s.deleteNodeUpgrades(ctx, owner, req); err != nil {
			return err
		}
		if err := s.pauseHealthCheck(ctx, ns, p.healthCheck(name), false); err != nil {
			return err
		}
		if _, err := s.patch(ctx, owner, compEKSA, gvr, ns, name, map[string]any{
			"metadata": map[string]any{"annotations": map[string]any{p.annotation: nil}},
		}); err != nil {
			return err
		}
		s.emit(compEKSA, obj, false, "InPlaceUpgradeCompleted", "All machines of %s upgraded in place to %s", name, s.targetVersion(obj))
	case req == nil && len(outdated) == 0:
		_, err := s.patch(ctx, owner, compEKSA, gvr, ns, name, map[string]any{
			"metadata": map[string]any{"annotations": map[string]any{p.annotation: nil}},
		})
		return err
	}
	return nil
}

// targetVersion is the version a KCP or MachineDeployment asks for.
func (s *Simulator) targetVersion(obj *unstructured.Unstructured) string {
	if obj.GetKind() == "MachineDeployment" {
		return str(obj, "spec", "template", "spec", "version")
	}
	return str(obj, "spec", "version")
}

func objRef(u *unstructured.Unstructured) map[string]any {
	return map[string]any{
		"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(), "name": u.GetName(),
		"namespace": u.GetNamespace(), "uid": string(u.GetUID()),
	}
}

func (s *Simulator) reconcileCPUpgrade(ctx context.Context, k string) (time.Duration, error) {
	return s.reconcileUpgradeRequest(ctx, k, cpInPlace, compCPUpgrade)
}

func (s *Simulator) reconcileMDUpgrade(ctx context.Context, k string) (time.Duration, error) {
	return s.reconcileUpgradeRequest(ctx, k, mdInPlace, compMDUpgrade)
}

// reconcileUpgradeRequest upgrades the listed machines one NodeUpgrade at a
// time, in list order; the first control-plane machine is marked first.
func (s *Simulator) reconcileUpgradeRequest(ctx context.Context, k string, p inPlaceKind, comp string) (time.Duration, error) {
	ns, name := splitKey(k)
	req := s.get(p.request, ns, name)
	if req == nil || req.GetDeletionTimestamp() != nil {
		return 0, nil
	}
	owner := comp + "/" + k
	want := str(req, "spec", "kubernetesVersion")
	refs, _, _ := unstructured.NestedSlice(req.Object, "spec", "machinesRequireUpgrade")
	upgraded := int64(0)
	for i, r := range refs {
		ref, _ := r.(map[string]any)
		mname, _ := ref["name"].(string)
		m := s.get(kinds.Machine, ns, mname)
		if m == nil {
			continue
		}
		// One node at a time: the next NodeUpgrade only once the previous
		// one reports completed (not merely once its machine changed).
		nuName := model.NodeUpgradeName(mname)
		nu := s.get(kinds.NodeUpgrade, ns, nuName)
		if nu != nil && !flag(nu, "status", "completed") {
			break
		}
		if str(m, "spec", "version") == want {
			upgraded++
			continue
		}
		if nu != nil {
			// Completed: EKS-A updates the Machine when it next sees it
			// (it requeues every 10 s), and creates the next NodeUpgrade
			// in that same reconcile. Meanwhile the NodeUpgrade says
			// completed and the Machine its old version.
			if left, ok := s.pace.wait(fmt.Sprintf("%s/machine/%s", k, nu.GetUID()), s.t.Step); !ok {
				return left, nil
			}
			if err := s.finishMachine(ctx, owner, comp, m, want); err != nil {
				return 0, err
			}
			upgraded++
			continue
		}
		spec := map[string]any{
			"machine":               map[string]any{"apiVersion": kinds.CAPIVersion, "kind": "Machine", "name": mname, "namespace": ns},
			"kubernetesVersion":     want,
			"firstNodeToBeUpgraded": p.kind == "ControlPlaneUpgrade" && i == 0,
		}
		if ev := str(req, "spec", "etcdVersion"); ev != "" {
			spec["etcdVersion"] = ev
		}
		nu = &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": kinds.EKSAVersion,
			"kind":       "NodeUpgrade",
			"metadata": map[string]any{
				"name": nuName, "namespace": ns,
				"labels":          map[string]any{model.LabelClusterName: s.sc.ClusterName},
				"ownerReferences": []any{objects.OwnerOf(req).Ref()},
			},
			"spec": spec,
		}}
		s.mu.Lock()
		s.nodeUpgrades++
		if s.nodeUpgrades == s.sc.FailNodeUpgrade {
			s.failNU[nuName] = true
		}
		s.mu.Unlock()
		if _, err := s.create(ctx, owner, comp, kinds.NodeUpgrade, nu); err != nil {
			return 0, err
		}
		s.emit(comp, req, false, "NodeUpgradeCreated", "Upgrading machine %s in place (%d of %d)", mname, i+1, len(refs))
		break
	}
	total := int64(len(refs))
	st := map[string]any{"requireUpgrade": total - upgraded, "upgraded": upgraded, "ready": upgraded == total}
	return 0, s.setStatus(ctx, owner, comp, p.request, req, st)
}

// crashPhase is where a failed container is in the kubelet's restarts.
type crashPhase int

const (
	crashExited  crashPhase = iota // terminated, exit code 1
	crashBackOff                   // waiting: CrashLoopBackOff
	crashRerun                     // running again after the failure
)

// containerRun is one run of a container: its StartedAt and, once it has
// ended, its FinishedAt.
type containerRun struct{ started, finished time.Time }

// start begins a run of step's container at now, keeping the run before it:
// the kubelet shows a rerun's previous run as its LastTerminationState.
func (p *nuProgress) start(step int, now time.Time) {
	if p.runs == nil {
		p.runs = map[int]containerRun{}
	}
	p.lastRun = p.runs[step]
	p.runs[step] = containerRun{started: now}
}

// finish ends step's container's current run at now, once: later syncs
// show this time, as a kubelet's do.
func (p *nuProgress) finish(step int, now time.Time) {
	if p.runs == nil {
		p.runs = map[int]containerRun{}
	}
	r := p.runs[step]
	r.finished = now
	p.runs[step] = r
}

// nuProgress is where one NodeUpgrade's upgrader pod stands.
type nuProgress struct {
	done    int  // steps finished (conditions True)
	running bool // steps[done] is running
	failed  bool // steps[done] exited non-zero; the pod must be deleted
	// crash is where the failed container is in the kubelet's restarts
	// (restartPolicy OnFailure): it exited, waits in CrashLoopBackOff, or
	// runs again (and fails again); restarts counts the reruns.
	crash    crashPhase
	restarts int32
	// runs are the steps' containers' runs, by step (1..6), the failed
	// one's latest; lastRun is the failed container's run before it, its
	// LastTerminationState. A kubelet records a container's start once and
	// its end once, so every later status shows the same times; the failed
	// run's end is also what the kubelet counts the back-off from.
	runs    map[int]containerRun
	lastRun containerRun
	// podMissing: the pod was deleted (a retry) and is not made again
	// yet: EKS-A marks every step False, "Upgrader pod does not exist",
	// and creates the pod at its next reconcile (within 10 s).
	podMissing bool
	failedOnce bool
	attempt    int
}

func nodeUpgradeForPod(pod string) string {
	// Nodes are named after their machines, so <node>-node-upgrader (the
	// pod) is also <machine>-node-upgrader (the NodeUpgrade).
	return pod
}

func (s *Simulator) reconcileNodeUpgrade(ctx context.Context, k string) (time.Duration, error) {
	ns, name := splitKey(k)
	nu := s.get(kinds.NodeUpgrade, ns, name)
	if nu == nil || flag(nu, "status", "completed") {
		return 0, nil
	}
	owner := compNodeUpg + "/" + k
	m := s.get(kinds.Machine, ns, str(nu, "spec", "machine", "name"))
	if m == nil {
		return 0, nil
	}
	node := str(m, "status", "nodeRef", "name")
	if node == "" {
		node = m.GetName()
	}
	s.mu.Lock()
	p, ok := s.nuState[k]
	if !ok {
		p = &nuProgress{}
		s.nuState[k] = p
	}
	failing := s.failNU[name]
	s.mu.Unlock()
	steps := model.NodeUpgradeSteps
	want := str(nu, "spec", "kubernetesVersion")

	podName := model.UpgraderPodName(node)
	obj, exists, _ := s.podFactory.Core().V1().Pods().Informer().GetStore().GetByKey(key(ns, podName))
	if exists && obj.(*corev1.Pod).DeletionTimestamp != nil {
		// A bound pod is deleted gracefully: its kubelet confirms. The
		// simulated kubelet does so at once; the deletion event brings the
		// NodeUpgrade back here.
		err := s.kube.CoreV1().Pods(ns).Delete(ctx, podName, metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))})
		if err != nil && !isNotFound(err) {
			return 0, err
		}
		return 0, nil
	}
	if !exists {
		if p.done > 0 {
			// The pod was deleted: EKS-A's retry. It marks every step
			// False at once and makes the pod again at its next reconcile.
			*p = nuProgress{failedOnce: p.failedOnce, attempt: p.attempt + 1, podMissing: true}
			s.emit(compNodeUpg, nu, false, "UpgraderPodDeleted", "Upgrader pod %s was deleted; recreating it to retry the upgrade of %s", podName, node)
			return s.t.Step, s.writeNU(ctx, owner, nu, p, false)
		}
		if p.podMissing {
			if left, ok := s.pace.wait(fmt.Sprintf("%s/recreate/%d", k, p.attempt), s.t.Step); !ok {
				return left, nil
			}
			p.podMissing = false
		}
		if err := s.createUpgraderPod(ctx, nu, m, node, podName, want); err != nil && !isAlreadyExists(err) {
			return 0, err
		}
		p.done = 1
		s.emit(compNodeUpg, nu, false, "UpgraderPodCreated", "Created upgrader pod %s on node %s (%s)", podName, node, want)
		return s.t.Step, s.writeNU(ctx, owner, nu, p, false)
	}
	if p.failed {
		// The kubelet restarts the failed container for ever, backing off
		// longer each time (restartPolicy OnFailure), and EKS-A's
		// NodeUpgrade reads each state as it comes: "exited with a
		// non-zero exit code" (Error) only between a run's end and the
		// next back-off, "waiting to be initialized" (Info) through the
		// back-off, "still running" (Info) through the run.
		if left, ok := s.crashWait(k, p); !ok {
			return left, nil
		}
		switch {
		case p.crash == crashExited && p.restarts == 0:
			// The kubelet restarts a container at once the first time.
			p.crash, p.restarts = crashRerun, 1
			p.start(p.done, s.clock.Now())
		case p.crash == crashExited:
			p.crash = crashBackOff
			// The kubelet records BackOff each time it syncs the pod in a
			// back-off, at least once per back-off; the simulated one
			// once, so the event's count is the back-offs so far.
			pod := obj.(*corev1.Pod)
			container := containerAt(pod, p.done)
			s.emitContainer(pod, container, true, "BackOff", "Back-off restarting failed container %s in pod %s", container, kubeletPodName(pod))
		case p.crash == crashBackOff:
			p.crash, p.restarts = crashRerun, p.restarts+1
			p.start(p.done, s.clock.Now())
		default:
			p.crash = crashExited
			p.finish(p.done, s.clock.Now())
		}
		return s.t.Step, s.writeNU(ctx, owner, nu, p, false)
	}
	if p.done == 0 {
		p.done = 1
	}
	if p.done < len(steps) {
		step := steps[p.done]
		if !p.running {
			p.running = true
			p.start(p.done, s.clock.Now())
			return s.t.Step, s.writeNU(ctx, owner, nu, p, false)
		}
		fails := step == "KubeadmUpgraded" && failing && !p.failedOnce
		run := s.t.Step
		if fails {
			// kubeadm fails once its health check has waited out its
			// timeout, which the container's message names.
			run = max(run, s.t.healthCheck())
		}
		if left, ok := s.pace.wait(fmt.Sprintf("%s/%s/%d", k, step, p.attempt), run); !ok {
			return left, nil
		}
		if fails {
			p.failed, p.failedOnce, p.running = true, true, false
			p.finish(p.done, s.clock.Now())
			s.emit(compNodeUpg, nu, true, "UpgradeStepFailed", "Step %s failed on node %s: container kubeadm-upgrader exited with code 1; delete pod %s/%s to retry", step, node, ns, podName)
			return s.t.Step, s.writeNU(ctx, owner, nu, p, false)
		}
		p.finish(p.done, s.clock.Now())
		p.done++
		p.running = false
		if p.done < len(steps) {
			return 0, s.writeNU(ctx, owner, nu, p, false)
		}
	}
	// Every step succeeded: the node's kubelet runs the new version. The
	// Machine is EKS-A's upgrade request controller's to update, once it
	// sees the NodeUpgrade completed (reconcileUpgradeRequest).
	if err := s.upgradeKubelet(ctx, node, want); err != nil {
		return 0, err
	}
	s.emit(compNodeUpg, nu, false, "NodeUpgraded", "Node %s upgraded in place to %s", node, want)
	return 0, s.writeNU(ctx, owner, nu, p, true)
}

// crashWait is how long the failed container stays as it is: the exit
// (until the kubelet's next look) lasts a step; a rerun fails as the first
// run did, once kubeadm's health check has timed out; the back-off lasts
// until crashBackOff has passed since the run ended, as the kubelet counts
// it from the container's FinishedAt.
func (s *Simulator) crashWait(k string, p *nuProgress) (time.Duration, bool) {
	switch p.crash {
	case crashBackOff:
		left := p.runs[p.done].finished.Add(s.t.crashBackOff(p.restarts)).Sub(s.clock.Now())
		return left, left <= 0
	case crashRerun:
		return s.pace.wait(fmt.Sprintf("%s/crash/%d/%d/%d", k, p.attempt, p.restarts, p.crash), max(s.t.Step, s.t.healthCheck()))
	}
	return s.pace.wait(fmt.Sprintf("%s/crash/%d/%d/%d", k, p.attempt, p.restarts, p.crash), s.t.Step)
}

// healthCheck is kubeadm's health check timeout at the simulation's speed,
// to the millisecond, as the failed container's message names it.
func (t Timings) healthCheck() time.Duration {
	return t.HealthCheck.Round(time.Millisecond)
}

// crashBackOff is the kubelet's back-off after the failure of a container
// it has restarted restarts times (1 or more): CrashBackOff doubled at each
// rerun after the first, at most CrashBackOffMax. The waiting message names
// it, as the kubelet's names its current back-off; rounded to the
// millisecond so that a speed such as 3 does not name 3.333333333s.
func (t Timings) crashBackOff(restarts int32) time.Duration {
	d := t.CrashBackOff
	for i := int32(1); i < restarts && d < t.CrashBackOffMax; i++ {
		d *= 2
	}
	return min(d, t.CrashBackOffMax).Round(time.Millisecond)
}

// kubeletPodName is how the kubelet names a pod in its messages
// (format.Pod): name_namespace(uid).
func kubeletPodName(pod *corev1.Pod) string {
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
}

// writeNU writes a NodeUpgrade's status: one condition per step, sentences
// as reasons (facts §5.4), and the Ready summary.
func (s *Simulator) writeNU(ctx context.Context, owner string, nu *unstructured.Unstructured, p *nuProgress, completed bool) error {
	// The pod's status is what kubectl shows; the NodeUpgrade is what
	// counts, so a failed pod write must not hold it back.
	if err := s.syncUpgraderPod(ctx, nu.GetNamespace(), nu.GetName(), p, completed); err != nil {
		klog.V(2).InfoS("simulated kubelet: upgrader pod status not written", "pod", nu.GetName(), "err", err)
	}
	now := s.clock.Now()
	var conds []any
	if old := statusMap(nu); old != nil {
		conds, _ = old["conditions"].([]any)
	}
	var first map[string]any
	for i, step := range model.NodeUpgradeSteps {
		var c map[string]any
		switch {
		case p.podMissing:
			c = objects.V1beta1(step, false, "Error", "Upgrader pod does not exist", "", now)
		case i < p.done:
			c = objects.V1beta1(step, true, "", "", "", now)
		case i == p.done && p.failed && p.crash == crashExited:
			c = objects.V1beta1(step, false, "Error", stepFailedReason, "", now)
		case i == p.done && (p.running || p.failed && p.crash == crashRerun):
			c = objects.V1beta1(step, false, "Info", "Container is still running", "", now)
		default:
			c = objects.V1beta1(step, false, "Info", "Container is waiting to be initialized", "", now)
		}
		if first == nil && c["status"] == "False" {
			first = c
		}
		conds = objects.SetCondition(conds, c)
	}
	if first == nil {
		conds = objects.SetCondition(conds, objects.V1beta1("Ready", true, "", "", "", now))
	} else {
		sev, _ := first["severity"].(string)
		reason, _ := first["reason"].(string)
		conds = objects.SetCondition(conds, objects.V1beta1("Ready", false, sev, reason, "", now))
	}
	st := map[string]any{
		"conditions":         objects.SortV1beta1(conds),
		"completed":          completed,
		"observedGeneration": nu.GetGeneration(),
	}
	return s.setStatus(ctx, owner, compNodeUpg, kinds.NodeUpgrade, nu, st)
}

func (s *Simulator) createUpgraderPod(ctx context.Context, nu, m *unstructured.Unstructured, node, podName, version string) error {
	image := release.UpgraderImage(version)
	nodeType := "Worker"
	switch {
	case flag(nu, "spec", "firstNodeToBeUpgraded"):
		nodeType = "FirstCP"
	case roleOf(m) == model.RoleControlPlane:
		nodeType = "RestCP"
	}
	kubeadm := []string{"nsenter", "--target", "1", "--mount", "--uts", "--ipc", "--net", "upgrader", "upgrade", "node", "--type", nodeType}
	if nodeType != "Worker" {
		kubeadm = append(kubeadm, "--k8sVersion", version)
	}
	if ev := str(nu, "spec", "etcdVersion"); ev != "" && nodeType == "FirstCP" {
		kubeadm = append(kubeadm, "--etcdVersion", ev)
	}
	nsenter := func(args ...string) []string {
		return append([]string{"nsenter", "--target", "1", "--mount", "--uts", "--ipc", "--net", "upgrader", "upgrade"}, args...)
	}
	c := func(name string, cmd []string) corev1.Container {
		return corev1.Container{Name: name, Image: image, Command: cmd, SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)},
			VolumeMounts: []corev1.VolumeMount{{Name: "host-components", MountPath: "/usr/host"}}}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: podName, Namespace: nu.GetNamespace(),
			Labels: map[string]string{upgraderPodLabel: "true"},
		},
		Spec: corev1.PodSpec{
			NodeName:      node,
			HostPID:       true,
			RestartPolicy: corev1.RestartPolicyOnFailure,
			InitContainers: []corev1.Container{
				c("components-copier", []string{"cp", "-r", "/eksa-upgrades", "/usr/host"}),
				c("containerd-upgrader", nsenter("containerd")),
				c("cni-plugins-upgrader", nsenter("cni-plugins")),
				c("kubeadm-upgrader", kubeadm),
				c("kubelet-kubectl-upgrader", nsenter("kubelet-kubectl")),
			},
			Containers: []corev1.Container{c("post-upgrade-status", nsenter("status"))},
			Volumes: []corev1.Volume{{Name: "host-components", VolumeSource: corev1.VolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: "/usr", Type: ptr.To(corev1.HostPathDirectory)},
			}}},
		},
	}
	_, err := s.kube.CoreV1().Pods(nu.GetNamespace()).Create(ctx, pod, metav1.CreateOptions{FieldManager: compNodeUpg})
	return err
}

// kubeletOf is the kubelet version a node upgraded to version reports.
func kubeletOf(version string) string {
	if k, ok := release.ByKubeadmVersion(version); ok {
		return k.KubeletVersion()
	}
	return version
}

// finishMachine records an upgraded node on its Machine, as EKS-A's
// ControlPlaneUpgrade and MachineDeploymentUpgrade controllers do once they
// see its NodeUpgrade completed: the version and UpToDate condition.
func (s *Simulator) finishMachine(ctx context.Context, owner, comp string, m *unstructured.Unstructured, version string) error {
	if _, err := s.patch(ctx, owner, comp, kinds.Machine, m.GetNamespace(), m.GetName(), map[string]any{
		"spec": map[string]any{"version": version},
	}); err != nil {
		return err
	}
	st := copyStatus(statusMap(m))
	conds, _ := st["conditions"].([]any)
	st["conditions"] = objects.SetCondition(conds, objects.V1beta2("UpToDate", true, "UpToDate", "", m.GetGeneration()+1, s.clock.Now()))
	st["nodeInfo"] = objects.NodeInfo(kubeletOf(version))
	return s.setStatus(ctx, owner, comp, kinds.Machine, m, st)
}

// upgradeKubelet records the kubelet version an upgraded node reports.
func (s *Simulator) upgradeKubelet(ctx context.Context, node, version string) error {
	kubelet := kubeletOf(version)
	n, err := s.kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return err
	}
	n.Status.NodeInfo.KubeletVersion = kubelet
	_, err = s.kube.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{FieldManager: compKubelet})
	return err
}

func (s *Simulator) deleteNodeUpgrades(ctx context.Context, owner string, req *unstructured.Unstructured) error {
	for _, nu := range s.list(kinds.NodeUpgrade, req.GetNamespace(), nil) {
		if !ownedBy(nu, req) {
			continue
		}
		if err := s.delete(ctx, owner, kinds.NodeUpgrade, nu.GetNamespace(), nu.GetName()); err != nil {
			return err
		}
		m := s.get(kinds.Machine, nu.GetNamespace(), str(nu, "spec", "machine", "name"))
		node := str(nu, "spec", "machine", "name")
		if m != nil && str(m, "status", "nodeRef", "name") != "" {
			node = str(m, "status", "nodeRef", "name")
		}
		err := s.kube.CoreV1().Pods(nu.GetNamespace()).Delete(ctx, model.UpgraderPodName(node), metav1.DeleteOptions{})
		if err != nil && !isNotFound(err) {
			return err
		}
		s.mu.Lock()
		delete(s.nuState, key(nu.GetNamespace(), nu.GetName()))
		s.mu.Unlock()
	}
	return nil
}

// pauseHealthCheck sets or removes the CAPI paused annotation on a
// MachineHealthCheck; a cluster without it is left alone.
func (s *Simulator) pauseHealthCheck(ctx context.Context, ns, name string, pause bool) error {
	var v any
	if pause {
		v = "true"
	}
	_, err := s.dyn.Resource(kinds.MachineHealthCheck).Namespace(ns).Patch(ctx, name, types.MergePatchType,
		[]byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:%s}}}`, model.AnnotationCAPIPaused, jsonValue(v))), metav1.PatchOptions{FieldManager: compEKSA})
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("pause MachineHealthCheck %s/%s: %w", ns, name, err)
	}
	return nil
}

func jsonValue(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// syncUpgraderPod is the simulated kubelet's view of the upgrader pod: one
// init container per step (the main container is the last step), so
// `kubectl get pod` reads Init:2/5, Init:Error, Running or Completed as on
// a real node. The pod is named like its NodeUpgrade (nodes are named after
// their machines).
func (s *Simulator) syncUpgraderPod(ctx context.Context, ns, name string, p *nuProgress, completed bool) error {
	pod, err := s.kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if isNotFound(err) || (err == nil && pod.DeletionTimestamp != nil) {
		return nil
	}
	if err != nil {
		return err
	}
	now := metav1.NewTime(s.clock.Now())
	// Step i (1..6) runs in container i-1 of init+main.
	state := func(step int) corev1.ContainerState {
		r := p.runs[step]
		switch {
		case step < p.done || completed:
			return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed",
				StartedAt: metav1.NewTime(r.started), FinishedAt: metav1.NewTime(r.finished)}}
		case step == p.done && p.failed && p.crash == crashBackOff:
			return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
				Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", s.t.crashBackOff(p.restarts), containerAt(pod, step), kubeletPodName(pod))}}
		case step == p.done && p.failed && p.crash == crashRerun:
			return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(r.started)}}
		case step == p.done && p.failed:
			return s.failedExit(r)
		case step == p.done && p.running:
			return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(r.started)}}
		default:
			return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}
		}
	}
	status := func(c corev1.Container, step int) corev1.ContainerStatus {
		st := state(step)
		cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, State: st,
			Ready: st.Running != nil, Started: ptr.To(st.Running != nil)}
		if step == p.done && p.failed {
			cs.RestartCount = p.restarts
			// The run before the one the state shows: through a back-off
			// the state shows none, so it is the run that just failed.
			switch {
			case p.crash == crashBackOff:
				cs.LastTerminationState = s.failedExit(p.runs[step])
			case p.restarts > 0:
				cs.LastTerminationState = s.failedExit(p.lastRun)
			}
		}
		return cs
	}
	var inits []corev1.ContainerStatus
	for i, c := range pod.Spec.InitContainers {
		inits = append(inits, status(c, i+1))
	}
	var mains []corev1.ContainerStatus
	for _, c := range pod.Spec.Containers {
		mains = append(mains, status(c, len(pod.Spec.InitContainers)+1))
	}
	pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses = inits, mains
	pod.Status.Phase = corev1.PodPending
	switch {
	case completed:
		pod.Status.Phase = corev1.PodSucceeded
	case p.done > len(pod.Spec.InitContainers):
		pod.Status.Phase = corev1.PodRunning
	}
	if pod.Status.StartTime == nil {
		pod.Status.StartTime = &now
	}
	_, err = s.kube.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{FieldManager: compKubelet})
	if isNotFound(err) {
		return nil
	}
	if err != nil || !p.failed {
		return err
	}
	return s.writeFailedContainerLog(ctx, pod, p)
}

// failedExit is how the kubeadm step's container ends run r when it fails:
// what kubeadm's upgrade health check prints last (writeFailedContainerLog
// has the whole log).
func (s *Simulator) failedExit(r containerRun) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error",
		StartedAt: metav1.NewTime(r.started), FinishedAt: metav1.NewTime(r.finished),
		Message: "[upgrade/health] FATAL: [preflight] Some fatal errors occurred: [ERROR CreateJob]: " + s.healthCheckError()}}
}

// healthCheckError is kubeadm's error when its health check's Job did not
// complete in time, naming the time it waited.
func (s *Simulator) healthCheckError() string {
	return fmt.Sprintf(`Job "upgrade-health-check" in the namespace "kube-system" did not complete in %s`, s.t.healthCheck())
}

// containerAt names the container that runs step (1..6: the init
// containers, then the main one).
func containerAt(pod *corev1.Pod, step int) string {
	cs := append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	if step < 1 || step > len(cs) {
		return ""
	}
	return cs[step-1].Name
}

// writeFailedContainerLog leaves the failed container's last log lines on the
// pod (model.AnnotationSimulatedLogPrefix), where `node retry` reads them when
// no kubelet serves pods/log. The lines are what kubeadm prints when its
// upgrade health check fails, so the demo's failure reads like a real one.
func (s *Simulator) writeFailedContainerLog(ctx context.Context, pod *corev1.Pod, p *nuProgress) error {
	containers := append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	if p.done < 1 || p.done > len(containers) {
		return nil
	}
	if p.crash == crashRerun {
		// The rerun has not failed yet: the log on the pod stays the
		// failed run's, whose end it is stamped with.
		return nil
	}
	c := containers[p.done-1]
	r := p.runs[p.done]
	stamp := func(t time.Time) string { return t.UTC().Format("0102 15:04:05.000000") }
	// The pod's attempt (a retry makes a new pod) and the container's run
	// in it: "attempt 1" beside "restarts 7" read as a log of another run.
	// The Job is named as kubeadm names it, and as the container's
	// termination message (failedExit) says; the run's first and last
	// lines are stamped with its start and end, as far apart as the
	// health check's wait it names.
	log := fmt.Sprintf(`I%s upgrader: upgrading node %s in place (pod attempt %d, run %d)
[upgrade/config] Reading configuration from the "kubeadm-config" ConfigMap in namespace "kube-system"...
[preflight] Running pre-flight checks.
[upgrade] Running cluster health checks
[upgrade/health] FATAL: [preflight] Some fatal errors occurred:
	[ERROR CreateJob]: %s: no condition of type Complete
To see the stack trace of this error execute with --v=5 or higher
E%s upgrader: %s failed: exit status 1`,
		stamp(r.started), pod.Spec.NodeName, p.attempt+1, p.restarts+1, s.healthCheckError(), stamp(r.finished), c.Name)
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		model.AnnotationSimulatedLogPrefix + c.Name: log,
	}}})
	if err != nil {
		return err
	}
	_, err = s.kube.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: compKubelet})
	if isNotFound(err) {
		return nil
	}
	return err
}
