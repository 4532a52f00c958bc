package sim_test

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/upgrade-console/upgrade-console/demo/kinds"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
)

// stepsTrue is how many steps of a NodeUpgrade are True, and whether they
// form a prefix of the documented order.
func stepsTrue(nu *unstructured.Unstructured) (int, bool) {
	n, prefix := 0, true
	for i, step := range model.NodeUpgradeSteps {
		if isTrue(nu, step) {
			n++
			if n != i+1 {
				prefix = false
			}
		}
	}
	return n, prefix
}

func machineNames(ms []unstructured.Unstructured) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.GetName())
	}
	sort.Strings(out)
	return out
}

func TestInPlaceUpgrade(t *testing.T) {
	w := startWorld(t, scenario.InPlace, "inpl")
	w.waitFor("the seeded cluster to be complete", func() bool { return complete(w.cluster()) })
	before := machineNames(w.machines(model.LabelClusterName))
	w.applyTarget()
	want := target().KubeadmVersion()
	w.waitFor("the in-place upgrade to complete", func() bool {
		cl := w.cluster()
		if cl.GetGeneration() != 2 || !complete(cl) {
			return false
		}
		for _, m := range w.machines(model.LabelClusterName) {
			if str(&m, "spec", "version") != want {
				return false
			}
		}
		return w.get(kinds.ControlPlaneUpgrade, w.sc.ClusterName+"-cp-upgrade") == nil
	})
	h := w.snapshot()

	t.Run("no machine replaced", func(t *testing.T) {
		after := machineNames(w.machines(model.LabelClusterName))
		if len(after) != len(before) {
			t.Fatalf("machines %v after, %v before", after, before)
		}
		for i := range after {
			if after[i] != before[i] {
				t.Fatalf("machines %v after, %v before", after, before)
			}
		}
		for _, m := range w.machines(model.LabelClusterName) {
			n, err := w.kube.CoreV1().Nodes().Get(w.ctx, m.GetName(), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if n.Status.NodeInfo.KubeletVersion != target().KubeletVersion() {
				t.Errorf("node %s kubelet %s after the upgrade", n.Name, n.Status.NodeInfo.KubeletVersion)
			}
		}
	})

	t.Run("steps in order, one node at a time per request", func(t *testing.T) {
		nus := map[string]*unstructured.Unstructured{}
		progress := map[string]int{}
		cpNUs := []string{}
		for _, o := range h {
			if o.res != "nodeupgrades" {
				continue
			}
			name := o.obj.GetName()
			if o.deleted {
				delete(nus, name)
				continue
			}
			if _, seen := progress[name]; !seen {
				progress[name] = 0
				if owners := o.obj.GetOwnerReferences(); len(owners) == 1 && owners[0].Kind == "ControlPlaneUpgrade" {
					cpNUs = append(cpNUs, name)
					first, _, _ := unstructured.NestedBool(o.obj.Object, "spec", "firstNodeToBeUpgraded")
					if first != (len(cpNUs) == 1) {
						t.Errorf("%s firstNodeToBeUpgraded=%v, position %d", name, first, len(cpNUs))
					}
					if str(o.obj, "spec", "etcdVersion") == "" {
						t.Errorf("control-plane NodeUpgrade %s has no etcdVersion", name)
					}
				}
			}
			nus[name] = o.obj
			n, prefix := stepsTrue(o.obj)
			if !prefix {
				t.Fatalf("#%d %s: steps True out of order: %v", o.seq, name, o.obj.Object["status"])
			}
			if n < progress[name] {
				t.Fatalf("#%d %s: steps went back from %d to %d", o.seq, name, progress[name], n)
			}
			progress[name] = n
			busy := map[string]int{}
			for _, nu := range nus {
				if done, _, _ := unstructured.NestedBool(nu.Object, "status", "completed"); !done {
					busy[nu.GetOwnerReferences()[0].Name]++
				}
			}
			for req, b := range busy {
				if b > 1 {
					t.Fatalf("#%d: %d NodeUpgrades of %s in progress at once", o.seq, b, req)
				}
			}
		}
		if len(progress) != 7 {
			t.Errorf("%d NodeUpgrades, want one per node (7)", len(progress))
		}
		for name, n := range progress {
			if n != len(model.NodeUpgradeSteps) {
				t.Errorf("%s finished with %d steps True", name, n)
			}
		}
	})

	t.Run("in-place objects and annotations come and go", func(t *testing.T) {
		seen := map[string]bool{}
		for _, o := range h {
			switch o.res {
			case "controlplaneupgrades", "machinedeploymentupgrades":
				seen[o.obj.GetName()] = true
			case "machinehealthchecks":
				if o.obj.GetAnnotations()[model.AnnotationCAPIPaused] == "true" {
					seen["paused/"+o.obj.GetName()] = true
				}
			case "kubeadmcontrolplanes", "machinedeployments":
				for _, a := range []string{model.AnnotationKCPInPlaceUpgradeNeeded, model.AnnotationMDInPlaceUpgradeNeeded} {
					if o.obj.GetAnnotations()[a] == "true" {
						seen[a+"/"+o.obj.GetName()] = true
					}
				}
			case "clusters":
				if c := cond(o.obj, "ControlPlaneReady"); c != nil && c["reason"] == "InPlaceUpgradeInProgress" {
					seen["cp-reason"] = true
				}
				if c := cond(o.obj, "WorkersReady"); c != nil && c["reason"] == "InPlaceUpgradeInProgress" {
					seen["workers-reason"] = true
				}
			}
		}
		c := w.sc.ClusterName
		for _, k := range []string{c + "-cp-upgrade", c + "-md-0-md-upgrade", c + "-md-1-md-upgrade",
			model.AnnotationKCPInPlaceUpgradeNeeded + "/" + c, model.AnnotationMDInPlaceUpgradeNeeded + "/" + c + "-md-0",
			"cp-reason", "workers-reason", "paused/" + c + "-kcp-unhealthy", "paused/" + c + "-md-1-worker-unhealthy"} {
			if !seen[k] {
				t.Errorf("never saw %s", k)
			}
		}
		for _, mhc := range []string{c + "-kcp-unhealthy", c + "-md-0-worker-unhealthy", c + "-md-1-worker-unhealthy"} {
			if m := w.get(kinds.MachineHealthCheck, mhc); m == nil || m.GetAnnotations()[model.AnnotationCAPIPaused] != "" {
				t.Errorf("MachineHealthCheck %s missing or still paused", mhc)
			}
		}
		if kcp := w.get(kinds.KCP, c); kcp.GetAnnotations()[model.AnnotationKCPInPlaceUpgradeNeeded] != "" {
			t.Error("KCP keeps the in-place-upgrade-needed annotation")
		}
		if l, _ := w.dyn.Resource(kinds.NodeUpgrade).Namespace(w.sc.SystemNamespace).List(w.ctx, metav1.ListOptions{}); len(l.Items) != 0 {
			w.waitFor("NodeUpgrades to go with their requests", func() bool {
				l, _ := w.dyn.Resource(kinds.NodeUpgrade).Namespace(w.sc.SystemNamespace).List(w.ctx, metav1.ListOptions{})
				return len(l.Items) == 0
			})
		}
	})
}

func TestInPlaceNodeStepFailsThenRetrySucceeds(t *testing.T) {
	w := startWorld(t, scenario.InPlaceNodeStepFails, "ipfail")
	w.waitFor("the seeded cluster to be complete", func() bool { return complete(w.cluster()) })
	w.applyTarget()
	var failed *unstructured.Unstructured
	w.waitFor("a NodeUpgrade whose kubeadm step failed", func() bool {
		l, err := w.dyn.Resource(kinds.NodeUpgrade).Namespace(w.sc.SystemNamespace).List(w.ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for i := range l.Items {
			if c := cond(&l.Items[i], "KubeadmUpgraded"); c != nil && c["status"] == "False" && c["severity"] == "Error" {
				failed = &l.Items[i]
				return true
			}
		}
		return false
	})

	// Exactly where the scenario says: the second control-plane node, at
	// KubeadmUpgraded, with EKS-A's sentence as the reason.
	if o := failed.GetOwnerReferences(); len(o) != 1 || o[0].Kind != "ControlPlaneUpgrade" {
		t.Errorf("failed NodeUpgrade %s is not a control-plane one: %v", failed.GetName(), o)
	}
	if first, _, _ := unstructured.NestedBool(failed.Object, "spec", "firstNodeToBeUpgraded"); first {
		t.Errorf("the first control-plane node failed; the scenario fails the second")
	}
	c := cond(failed, "KubeadmUpgraded")
	if c["reason"] != "Container exited with a non-zero exit code, reason: Error" || c["message"] != nil {
		t.Errorf("KubeadmUpgraded = %v", c)
	}
	for i, step := range model.NodeUpgradeSteps {
		got := cond(failed, step)
		switch {
		case i < 4 && got["status"] != "True":
			t.Errorf("%s before the failure is %v", step, got)
		case i > 4 && (got["status"] != "False" || got["reason"] != "Container is waiting to be initialized"):
			t.Errorf("%s after the failure is %v", step, got)
		}
	}
	if r := cond(failed, "Ready"); r["status"] != "False" || r["severity"] != "Error" || r["reason"] != c["reason"] {
		t.Errorf("Ready summary %v", r)
	}
	cpu := w.get(kinds.ControlPlaneUpgrade, w.sc.ClusterName+"-cp-upgrade")
	if i64(cpu, "status", "upgraded") != 1 {
		t.Errorf("ControlPlaneUpgrade status %v, want 1 upgraded", cpu.Object["status"])
	}

	// The upgrader pod says why, as a kubelet does: kubeadm's container
	// exited 1 with a message, then, restarted and failed again, backs off;
	// the containers after it never started.
	podName := str(failed, "spec", "machine", "name") + "-node-upgrader"
	kubeadm := func() (corev1.ContainerStatus, []corev1.ContainerStatus) {
		pod, err := w.kube.CoreV1().Pods(w.sc.SystemNamespace).Get(w.ctx, podName, metav1.GetOptions{})
		if err != nil {
			return corev1.ContainerStatus{}, nil
		}
		for _, cs := range pod.Status.InitContainerStatuses {
			if cs.Name == "kubeadm-upgrader" {
				return cs, pod.Status.InitContainerStatuses
			}
		}
		return corev1.ContainerStatus{}, nil
	}
	var cs corev1.ContainerStatus
	var all []corev1.ContainerStatus
	w.waitFor("kubeadm's container in CrashLoopBackOff", func() bool {
		cs, all = kubeadm()
		return cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff"
	})
	if last := cs.LastTerminationState.Terminated; last == nil || last.ExitCode != 1 || last.Message == "" || cs.RestartCount < 1 {
		t.Errorf("kubeadm-upgrader backed off with last state %+v, %d restarts", cs.LastTerminationState, cs.RestartCount)
	}
	if after := all[len(all)-1]; after.State.Waiting == nil || after.State.Waiting.Reason != "PodInitializing" {
		t.Errorf("%s after the failure is %+v", after.Name, after.State)
	}

	// It stays failed: no retry by itself, no next node.
	w.holds("the failed step", 2*time.Second, func() bool {
		l, err := w.dyn.Resource(kinds.NodeUpgrade).Namespace(w.sc.SystemNamespace).List(w.ctx, metav1.ListOptions{})
		if err != nil || len(l.Items) != 2 {
			return false
		}
		nu := w.get(kinds.NodeUpgrade, failed.GetName())
		done, _, _ := unstructured.NestedBool(nu.Object, "status", "completed")
		return !done && cond(nu, "KubeadmUpgraded")["status"] == "False" && !complete(w.cluster())
	})

	// EKS-A's documented retry: delete the upgrader pod.
	machine := str(failed, "spec", "machine", "name")
	if err := w.kube.CoreV1().Pods(w.sc.SystemNamespace).Delete(w.ctx, machine+"-node-upgrader", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.waitFor("the upgrade to complete after the retry", func() bool {
		cl := w.cluster()
		return cl.GetGeneration() == 2 && complete(cl)
	})
	var reset bool
	for _, o := range w.snapshot() {
		if o.res == "nodeupgrades" && o.obj.GetName() == failed.GetName() {
			if n, _ := stepsTrue(o.obj); n == 1 && cond(o.obj, "KubeadmUpgraded")["reason"] != "Container exited with a non-zero exit code, reason: Error" {
				reset = true
			}
		}
	}
	if !reset {
		t.Error("the retried NodeUpgrade did not start its steps again")
	}
}

// seenState is one state of a container as a watcher of its pod saw it,
// with when it arrived.
type seenState struct {
	at       time.Time
	state    corev1.ContainerState
	restarts int32
}

// stateKey tells the states of a container apart by what they are, not
// by their times.
func stateKey(s corev1.ContainerState, restarts int32) string {
	switch {
	case s.Waiting != nil:
		return fmt.Sprintf("waiting %s %s %d", s.Waiting.Reason, s.Waiting.Message, restarts)
	case s.Running != nil:
		return fmt.Sprintf("running %d", restarts)
	case s.Terminated != nil:
		return fmt.Sprintf("terminated %d %d", s.Terminated.ExitCode, restarts)
	}
	return ""
}

// watchContainer keeps each new state of the container name of every
// upgrader pod, in the order the API server's watch delivers them, and
// returns those of one pod.
func (w *world) watchContainer(name string) func(pod string) []seenState {
	var mu sync.Mutex
	seen := map[string][]seenState{}
	f := informers.NewSharedInformerFactoryWithOptions(w.kube, 0, informers.WithNamespace(w.sc.SystemNamespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "eks-d-upgrader=true" }))
	put := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			if cs.Name != name {
				continue
			}
			mu.Lock()
			ss := seen[p.Name]
			if n := len(ss); n == 0 || stateKey(ss[n-1].state, ss[n-1].restarts) != stateKey(cs.State, cs.RestartCount) {
				seen[p.Name] = append(ss, seenState{at: time.Now(), state: cs.State, restarts: cs.RestartCount})
			}
			mu.Unlock()
		}
	}
	_, _ = f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: put, UpdateFunc: func(_, o any) { put(o) }})
	f.Start(w.ctx.Done())
	f.WaitForCacheSync(w.ctx.Done())
	return func(pod string) []seenState {
		mu.Lock()
		defer mu.Unlock()
		return append([]seenState{}, seen[pod]...)
	}
}

// The kubelet reruns a failed container at once, then, after each later
// failure, waits in CrashLoopBackOff 10s, 20s, 40s… (at most 5 minutes)
// from the run's end, its waiting message naming that back-off, and
// records a BackOff event on the pod for each. The simulated kubelet does
// the same at the simulation's speed: the demo's reruns came 1, 2, 4, then
// always 8 steps after their back-off began, whatever the message said
// (back-off 5m0s, rerun 8 steps later, and the message unscaled by the
// speed), and it recorded no event on the pod.
func TestInPlaceFailedStepBacksOffAsTheKubelet(t *testing.T) {
	w := startWorld(t, scenario.InPlaceNodeStepFails, "ipboff")
	w.waitFor("the seeded cluster to be complete", func() bool { return complete(w.cluster()) })
	seenOf := w.watchContainer("kubeadm-upgrader")
	w.applyTarget()

	// Three back-offs and the rerun after each.
	var pod string
	var seen []seenState
	backOffs := func(ss []seenState) []int {
		var at []int
		for i, s := range ss {
			if s.state.Waiting != nil && s.state.Waiting.Reason == "CrashLoopBackOff" {
				at = append(at, i)
			}
		}
		return at
	}
	w.waitFor("three back-offs of kubeadm-upgrader, each followed by a rerun", func() bool {
		l, err := w.dyn.Resource(kinds.NodeUpgrade).Namespace(w.sc.SystemNamespace).List(w.ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		// The upgrader pod is named like its NodeUpgrade.
		for _, nu := range l.Items {
			ss := seenOf(nu.GetName())
			if b := backOffs(ss); len(b) >= 3 && b[2]+1 < len(ss) && ss[b[2]+1].state.Running != nil {
				pod, seen = nu.GetName(), ss
				return true
			}
		}
		return false
	})
	got, err := w.kube.CoreV1().Pods(w.sc.SystemNamespace).Get(w.ctx, pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for n, i := range backOffs(seen)[:3] {
		// The kubelet's 10s doubled at each rerun, at the test's speed.
		want := 10 * time.Second / testSpeed << n
		s := seen[i]
		msg := fmt.Sprintf("back-off %s restarting failed container=kubeadm-upgrader pod=%s_%s(%s)", want, pod, got.Namespace, got.UID)
		if s.state.Waiting.Message != msg || s.restarts != int32(n+1) {
			t.Errorf("back-off %d: %q with %d restarts, want %q with %d", n+1, s.state.Waiting.Message, s.restarts, msg, n+1)
		}
		// From the run's end (the state before) to the rerun (the state
		// after): the back-off named, give or take the watch's delays.
		exit, rerun := seen[i-1], seen[i+1]
		if exit.state.Terminated == nil || exit.state.Terminated.ExitCode != 1 || rerun.state.Running == nil {
			t.Fatalf("back-off %d between %+v and %+v, want between an exit and a rerun", n+1, exit.state, rerun.state)
		}
		if d := rerun.at.Sub(exit.at); d < want/2 || d > want*3/2+300*time.Millisecond {
			t.Errorf("back-off %d named %s: the rerun came %s after the exit", n+1, want, d.Round(time.Millisecond))
		}
	}

	// One BackOff event of the node's kubelet on the pod, one more in its
	// count per back-off: never more than the restarts before it.
	var ev corev1.Event
	w.waitFor("the kubelet's BackOff event, counted thrice", func() bool {
		l, err := w.kube.CoreV1().Events(w.sc.SystemNamespace).List(w.ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod + ",reason=BackOff"})
		if err != nil || len(l.Items) != 1 {
			return false
		}
		ev = l.Items[0]
		return ev.Count >= 3
	})
	now, err := w.kube.CoreV1().Pods(w.sc.SystemNamespace).Get(w.ctx, pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var restarts int32
	for _, cs := range now.Status.InitContainerStatuses {
		if cs.Name == "kubeadm-upgrader" {
			restarts = cs.RestartCount
		}
	}
	// The log names the container's run in the pod, not the pod's attempt
	// alone ("attempt 1" beside "restarts 7"), and the Job as the
	// termination message does.
	if l := now.Annotations[model.AnnotationSimulatedLogPrefix+"kubeadm-upgrader"]; !strings.Contains(l, "(pod attempt 1, run ") ||
		strings.Contains(l, "(pod attempt 1, run 1)") || !strings.Contains(l, `Job "upgrade-health-check" in the namespace`) {
		t.Errorf("the failed run's log:\n%s", l)
	}
	wantMsg := fmt.Sprintf("Back-off restarting failed container kubeadm-upgrader in pod %s_%s(%s)", pod, got.Namespace, got.UID)
	if ev.Type != corev1.EventTypeWarning || ev.Message != wantMsg || ev.InvolvedObject.Kind != "Pod" || ev.InvolvedObject.UID != got.UID ||
		ev.InvolvedObject.FieldPath != "spec.initContainers{kubeadm-upgrader}" || ev.Source.Component != "kubelet" || ev.Source.Host != got.Spec.NodeName {
		t.Errorf("BackOff event %s %q on %+v from %+v", ev.Type, ev.Message, ev.InvolvedObject, ev.Source)
	}
	if ev.Count > restarts {
		t.Errorf("BackOff counted %d times after %d restarts: more than one per back-off", ev.Count, restarts)
	}
}

// seenPod is one status of an upgrader pod as a watcher saw it, with when
// it arrived.
type seenPod struct {
	at  time.Time
	pod *corev1.Pod
}

// watchPods keeps every status of every upgrader pod, in the order the API
// server's watch delivers them.
func (w *world) watchPods() func() []seenPod {
	var mu sync.Mutex
	var seen []seenPod
	f := informers.NewSharedInformerFactoryWithOptions(w.kube, 0, informers.WithNamespace(w.sc.SystemNamespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "eks-d-upgrader=true" }))
	put := func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok {
			mu.Lock()
			seen = append(seen, seenPod{at: time.Now(), pod: p.DeepCopy()})
			mu.Unlock()
		}
	}
	_, _ = f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: put, UpdateFunc: func(_, o any) { put(o) }})
	f.Start(w.ctx.Done())
	f.WaitForCacheSync(w.ctx.Done())
	return func() []seenPod {
		mu.Lock()
		defer mu.Unlock()
		return append([]seenPod{}, seen...)
	}
}

// healthCheckWait is the wait kubeadm's health check error names.
var healthCheckWait = regexp.MustCompile(`did not complete in ([0-9.]+[a-zµ]+)`)

// A kubelet records when each container starts and when it ends, once:
// every later status shows the same times, and a terminated state carries
// both. The simulated kubelet wrote every completed container's finishedAt
// as the time of each write (it moved on at every sync) and no startedAt,
// and kubeadm's failed run, said not to have completed its health check in
// 15s, lasted a step (about 2 s at --speed 1).
func TestInPlaceUpgraderPodTimesAreTheKubelets(t *testing.T) {
	w := startWorld(t, scenario.InPlaceNodeStepFails, "iptimes")
	w.waitFor("the seeded cluster to be complete", func() bool { return complete(w.cluster()) })
	seenOf := w.watchPods()
	w.applyTarget()

	// To the fifth run: the first failure, the kubelet's rerun at once,
	// then three back-offs (1.75 s at the test's speed), so the completed
	// containers are written again across a second boundary of the times
	// the API keeps.
	var seen []seenPod
	var failing string
	w.waitFor("kubeadm-upgrader's fifth run", func() bool {
		seen = seenOf()
		for _, s := range seen {
			for _, cs := range s.pod.Status.InitContainerStatuses {
				if cs.Name == "kubeadm-upgrader" && cs.State.Running != nil && cs.RestartCount >= 4 {
					failing = s.pod.Name
					return true
				}
			}
		}
		return false
	})

	type ref struct{ uid, container string }
	type times struct{ started, finished metav1.Time }
	completed := map[ref]times{}
	running := map[ref]metav1.Time{}
	told := map[string]bool{}
	terminated := func(what string, s seenPod, name string, term *corev1.ContainerStateTerminated) {
		once := fmt.Sprintf("%s %s %s %d", s.pod.UID, name, what, term.ExitCode)
		if (term.StartedAt.IsZero() || term.FinishedAt.IsZero() || term.FinishedAt.Before(&term.StartedAt)) && !told[once] {
			told[once] = true
			t.Errorf("pod %s %s %s terminated (exit %d) started %v, finished %v", s.pod.Name, name, what, term.ExitCode, term.StartedAt, term.FinishedAt)
		}
	}
	for _, s := range seen {
		for _, cs := range append(append([]corev1.ContainerStatus{}, s.pod.Status.InitContainerStatuses...), s.pod.Status.ContainerStatuses...) {
			r := ref{string(s.pod.UID), cs.Name}
			if term := cs.State.Terminated; term != nil {
				terminated("state", s, cs.Name, term)
				if term.ExitCode == 0 {
					now := times{term.StartedAt, term.FinishedAt}
					if was, ok := completed[r]; ok && was != now && !told[r.uid+r.container] {
						told[r.uid+r.container] = true
						t.Errorf("pod %s %s completed at %v-%v, later at %v-%v", s.pod.Name, cs.Name, was.started, was.finished, now.started, now.finished)
					} else if !ok {
						completed[r] = now
					}
				}
			}
			if last := cs.LastTerminationState.Terminated; last != nil {
				terminated("last state", s, cs.Name, last)
				// Two runs of one container: the last ended before the
				// one the state shows started.
				if term := cs.State.Terminated; term != nil && last.FinishedAt.After(term.StartedAt.Time) {
					t.Errorf("pod %s %s: last run ended %v, after the current one started %v", s.pod.Name, cs.Name, last.FinishedAt, term.StartedAt)
				}
			}
			if run := cs.State.Running; run != nil {
				r.container += fmt.Sprintf("#%d", cs.RestartCount)
				if was, ok := running[r]; ok && !was.Equal(&run.StartedAt) {
					t.Errorf("pod %s %s run %d started at %v, later at %v", s.pod.Name, cs.Name, cs.RestartCount+1, was, run.StartedAt)
				} else if !ok {
					running[r] = run.StartedAt
				}
			}
		}
	}

	// Each failed run lasted at least the wait its message names. The API
	// keeps the times to the second, shorter than a run at the test's
	// speed: the run is timed by when its start and its failure arrived.
	var runStart time.Time
	var lastRestarts int32 = -1
	failures := 0
	for _, s := range seen {
		if s.pod.Name != failing {
			continue
		}
		for _, cs := range s.pod.Status.InitContainerStatuses {
			if cs.Name != "kubeadm-upgrader" {
				continue
			}
			switch st := cs.State; {
			case st.Running != nil && cs.RestartCount != lastRestarts:
				runStart, lastRestarts = s.at, cs.RestartCount
			case st.Terminated != nil && st.Terminated.ExitCode != 0 && !runStart.IsZero():
				m := healthCheckWait.FindStringSubmatch(st.Terminated.Message)
				if m == nil {
					t.Fatalf("failed run's message %q names no wait", st.Terminated.Message)
				}
				named, err := time.ParseDuration(m[1])
				if err != nil {
					t.Fatal(err)
				}
				if took := s.at.Sub(runStart); took < named*3/4 {
					t.Errorf("run %d failed %s after it started, its message: %q", cs.RestartCount+1, took.Round(time.Millisecond), st.Terminated.Message)
				}
				failures++
				runStart = time.Time{}
			}
		}
	}
	if failures < 4 {
		t.Errorf("%d failed runs seen start and end, want 4", failures)
	}

	// The log left on the pod names the same wait, between its first and
	// last lines' stamps.
	pod, err := w.kube.CoreV1().Pods(w.sc.SystemNamespace).Get(w.ctx, failing, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	log := strings.Split(pod.Annotations[model.AnnotationSimulatedLogPrefix+"kubeadm-upgrader"], "\n")
	stamp := func(line string) time.Time {
		const layout = "0102 15:04:05.000000"
		if len(line) < 1+len(layout) {
			t.Fatalf("log line %q has no stamp", line)
		}
		at, err := time.Parse(layout, line[1:1+len(layout)])
		if err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		return at
	}
	m := healthCheckWait.FindStringSubmatch(strings.Join(log, "\n"))
	if m == nil {
		t.Fatalf("the failed run's log names no wait:\n%s", strings.Join(log, "\n"))
	}
	named, err := time.ParseDuration(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if took := stamp(log[len(log)-1]).Sub(stamp(log[0])); took < named {
		t.Errorf("the failed run's log spans %s and names a wait of %s:\n%s", took, named, strings.Join(log, "\n"))
	}
}
