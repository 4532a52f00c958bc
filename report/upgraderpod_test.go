package report

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/upgrade-console/upgrade-console/model"
)

// upgraderPod is an upgrader pod whose kubeadm container is in the given
// state, the ones before it done, the ones after it waiting.
func upgraderPod(uid string, kubeadm model.ContainerState, last *model.ContainerState, restarts int32) model.UpgraderPod {
	done := model.ContainerState{Terminated: true, Reason: "Completed"}
	waiting := model.ContainerState{Waiting: true, Reason: "PodInitializing"}
	return model.UpgraderPod{Meta: model.Meta{Name: "mgmt-md-0-0000-node-upgrader", Namespace: "eksa-system", UID: uid},
		NodeName: "mgmt-md-0-0000", Phase: "Pending",
		Containers: []model.UpgraderContainer{
			{Name: "components-copier", Init: true, State: done},
			{Name: "containerd-upgrader", Init: true, State: done},
			{Name: "kubeadm-upgrader", Init: true, State: kubeadm, Last: last, RestartCount: restarts},
			{Name: "post-upgrade-status", State: waiting},
		}}
}

// A container that fails is said once, with its exit and the command that
// reads its log; the crash loop that follows (back-off, restart, exit
// again) is not said again, nor is a snapshot that changed nothing; the
// pod recreated by a retry that fails again is.
func TestChangesSayAFailedUpgraderContainerOnce(t *testing.T) {
	running := upgraderPod("u1", model.ContainerState{Running: true}, nil, 0)
	exited := model.ContainerState{Terminated: true, ExitCode: 1, Reason: "Error", Message: "kubeadm upgrade node: health check failed"}
	failed := upgraderPod("u1", exited, nil, 0)
	backOff := upgraderPod("u1", model.ContainerState{Waiting: true, Reason: "CrashLoopBackOff", Message: "back-off 10s restarting failed container"}, &exited, 1)

	a := etcdRollout(2)
	a.UpgraderPods = []model.UpgraderPod{running}
	b := clone(a)
	b.UpgraderPods = []model.UpgraderPod{failed}
	c := clone(b)
	c.UpgraderPods = []model.UpgraderPod{backOff}
	// The kubelet's rerun after the back-off (running, the failure its
	// last run), then the same failure again.
	rerun := clone(c)
	rerun.UpgraderPods = []model.UpgraderPod{upgraderPod("u1", model.ContainerState{Running: true}, &exited, 2)}
	d := clone(rerun)
	d.UpgraderPods = []model.UpgraderPod{upgraderPod("u1", exited, &exited, 2)}

	if out := texts(Changes(a, a, derive(a), derive(a), t0)); strings.Contains(out, "Pod ") {
		t.Errorf("a running container said:\n%s", out)
	}
	out := texts(Changes(a, b, derive(a), derive(b), t0))
	want := "Pod mgmt-md-0-0000-node-upgrader: container kubeadm-upgrader FAILED (terminated: exit code 1 (Error): kubeadm upgrade node: health check failed); " +
		"logs: kubectl logs -n eksa-system mgmt-md-0-0000-node-upgrader -c kubeadm-upgrader"
	requireAll(t, out, want)
	if n := strings.Count(out, "FAILED (terminated"); n != 1 {
		t.Errorf("the failure said %d times:\n%s", n, out)
	}
	for _, step := range [][2]*model.ClusterState{{b, b}, {b, c}, {c, rerun}, {rerun, d}} {
		if out := texts(Changes(step[0], step[1], derive(step[0]), derive(step[1]), t0)); strings.Contains(out, "Pod ") {
			t.Errorf("the same failure said again:\n%s", out)
		}
	}

	// The first snapshot states a failure already there, back-off and all.
	out = texts(Changes(nil, c, nil, derive(c), t0))
	requireAll(t, out, "container kubeadm-upgrader FAILED (waiting: CrashLoopBackOff: back-off 10s restarting failed container; "+
		"last terminated: exit code 1 (Error): kubeadm upgrade node: health check failed; 1 restart)")

	// The retry: a new pod (new UID), failing again.
	e := clone(d)
	e.UpgraderPods = []model.UpgraderPod{upgraderPod("u2", exited, nil, 0)}
	requireAll(t, texts(Changes(d, e, derive(d), derive(e), t0)), want)
}

// Denied Pods, the sources line says what is missing and what is not shown.
func TestChangesSayUpgraderPodsForbidden(t *testing.T) {
	a := etcdRollout(2)
	b := clone(a)
	b.Sources = map[model.Kind]model.SourceStatus{model.KindUpgraderPod: {Installed: true, Forbidden: "list pods in eksa-system"}}
	requireAll(t, texts(Changes(a, b, derive(a), derive(b), t0)),
		"forbidden: list pods in eksa-system (the upgrader pods' containers are not shown; the in-place steps still are; fix: grant a Role in eksa-system")
}

// The plain watch of a console given --context words its commands with it:
// the log of a failed upgrader container and the clear of a stale lock,
// pasted into a shell on another context, read and clear this cluster's.
func TestWatchCommandsCarryTheConnection(t *testing.T) {
	exited := model.ContainerState{Terminated: true, ExitCode: 1, Reason: "Error", Message: "kubeadm upgrade node: health check failed"}
	a := etcdRollout(2)
	a.UpgraderPods = []model.UpgraderPod{upgraderPod("u1", exited, nil, 0)}
	a.Lock = &model.Lock{HolderIdentity: "alice@laptop/1", AcquireTime: t0.Add(-time.Hour), RenewTime: t0.Add(-2 * time.Minute), Duration: time.Minute}
	b := healthy()
	for _, s := range []*model.ClusterState{a, b} {
		s.Conn = model.ConnFlags{{Name: "kubeconfig", Value: "/etc/kc"}, {Name: "context", Value: "prod"}}
	}
	_, out, _ := runWatch(t, context.Background(), WatchOptions{ExitOnDone: true}, a, b)
	requireAll(t, out,
		"logs: kubectl --kubeconfig /etc/kc --context prod logs -n eksa-system mgmt-md-0-0000-node-upgrader -c kubeadm-upgrader",
		"clear it with `upgrade-console lock clear lease --cluster mgmt --kubeconfig /etc/kc --context prod`")
}

// A failed stall that goes (a retry) was said "failed:", never
// "stalled:": its end says it is no longer failed.
func TestChangesSayAFailedStallNoLongerFailed(t *testing.T) {
	a := etcdRollout(2)
	pa, pb := derive(a), derive(a)
	pa.Stalls = []model.Stall{{Kind: model.KindNodeUpgrade, Name: "n-node-upgrader", Failed: true, Sentence: "node n in-place step KubeadmUpgraded failed"}}
	pb.Stalls = nil
	out := texts(Changes(a, a, pa, pb, t0))
	requireAll(t, out, "NodeUpgrade n-node-upgrader no longer failed")
	if strings.Contains(out, "no longer stalled") {
		t.Errorf("a failed stall said no longer stalled:\n%s", out)
	}
}

// A failed step the kubelet reruns reads, on the NodeUpgrade, back-off,
// run and exit again, each a line: with the upgrader pod saying the step
// is failing, the back-off goes unsaid and the run and the exit say they
// are a rerun and a failure again, not progress.
func TestChangesSayAStepsRerunsAsReruns(t *testing.T) {
	exited := model.ContainerState{Terminated: true, ExitCode: 1, Reason: "Error", Message: "kubeadm upgrade node: health check failed"}
	step := func(s *model.ClusterState, severity model.ConditionSeverity, reason string, pod model.UpgraderPod) *model.ClusterState {
		c := clone(s)
		c.NodeUpgrades = model.ListOf(&model.NodeUpgrade{Meta: meta("mgmt-md-0-0000-node-upgrader"), Kind: model.KindNodeUpgrade, MachineName: "mgmt-md-0-0000",
			Conditions: model.Conditions{cond("BinariesCopied", "True", "", "", ""), cond("ContainerdUpgraded", "True", "", "", ""),
				cond("CNIPluginsUpgraded", "True", "", "", ""), cond("KubeadmUpgraded", "False", severity, reason, "")}})
		pod.CreationTimestamp = t0.Add(-time.Minute) // the NodeUpgrade's
		c.UpgraderPods = []model.UpgraderPod{pod}
		return c
	}
	base := etcdRollout(2)
	running := step(base, model.SeverityInfo, "Container is still running", upgraderPod("u1", model.ContainerState{Running: true}, nil, 0))
	failed := step(running, model.SeverityError, "Container exited with a non-zero exit code, reason: Error", upgraderPod("u1", exited, nil, 0))
	backOff := step(failed, model.SeverityInfo, waitingReason, upgraderPod("u1", model.ContainerState{Waiting: true, Reason: "CrashLoopBackOff"}, &exited, 1))
	rerun := step(backOff, model.SeverityInfo, "Container is still running", upgraderPod("u1", model.ContainerState{Running: true}, &exited, 1))
	again := step(rerun, model.SeverityError, "Container exited with a non-zero exit code, reason: Error", upgraderPod("u1", exited, &exited, 1))
	diff := func(a, b *model.ClusterState) string {
		var nu []string
		for _, l := range Changes(a, b, derive(a), derive(b), t0) {
			if strings.HasPrefix(l.Subject, "NodeUpgrade ") {
				nu = append(nu, l.Subject+": "+l.Text)
			}
		}
		return strings.Join(nu, "\n")
	}
	const subj = "NodeUpgrade mgmt-md-0-0000-node-upgrader: "
	for _, c := range []struct {
		name string
		a, b *model.ClusterState
		want string
	}{
		{"the first failure", running, failed, subj + "step KubeadmUpgraded FAILED: Container exited with a non-zero exit code, reason: Error"},
		{"the back-off", failed, backOff, ""},
		{"the rerun", backOff, rerun, subj + "step KubeadmUpgraded: running again after its failure (1 restart)"},
		{"the failure again", rerun, again, subj + "step KubeadmUpgraded FAILED again: Container exited with a non-zero exit code, reason: Error (1 restart)"},
	} {
		if got := diff(c.a, c.b); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	// Without the pod (Pods forbidden), the condition alone is said.
	noPod := func(s *model.ClusterState) *model.ClusterState { c := clone(s); c.UpgraderPods = nil; return c }
	if got := diff(noPod(failed), noPod(backOff)); got != subj+"step KubeadmUpgraded: "+waitingReason {
		t.Errorf("without the pod, the back-off: %q", got)
	}
}

// A retry deletes the upgrader pod, and until EKS-A makes it again every
// step reads False, severity Error, "Upgrader pod does not exist": a wait,
// said once, where each step read "FAILED" after a retry that worked.
func TestChangesSayTheRetrysWaitForThePodOnce(t *testing.T) {
	a := etcdRollout(2)
	a.NodeUpgrades = model.ListOf(&model.NodeUpgrade{Meta: meta("mgmt-md-0-0000-node-upgrader"), Kind: model.KindNodeUpgrade, MachineName: "mgmt-md-0-0000",
		Conditions: model.Conditions{cond("UpgraderPodCreated", "True", "", "", ""), cond("BinariesCopied", "True", "", "", ""),
			cond("KubeadmUpgraded", "False", model.SeverityError, "Container exited with a non-zero exit code, reason: Error", "")}})
	b := clone(a)
	var cs model.Conditions
	for _, step := range model.NodeUpgradeSteps {
		cs = append(cs, cond(step, "False", model.SeverityError, "Upgrader pod does not exist", ""))
	}
	b.NodeUpgrades = model.ListOf(&model.NodeUpgrade{Meta: meta("mgmt-md-0-0000-node-upgrader"), Kind: model.KindNodeUpgrade, MachineName: "mgmt-md-0-0000", Conditions: cs})
	var got []string
	for _, l := range Changes(a, b, derive(a), derive(b), t0) {
		if strings.HasPrefix(l.Subject, "NodeUpgrade ") {
			got = append(got, l.Text)
		}
	}
	want := "waiting for its upgrader pod: Upgrader pod does not exist (a retry deletes it; EKS-A makes it again at its next reconcile)"
	if len(got) != 1 || got[0] != want {
		t.Errorf("lines %q, want one: %q", got, want)
	}
}

// The first control-plane node's NodeUpgrade says it is the first (its
// kubeadm step differs), and one deleted and made again between two
// snapshots says it was recreated, where its steps read as done again.
func TestChangesSayTheFirstNodeAndARecreatedNodeUpgrade(t *testing.T) {
	a := etcdRollout(2)
	mk := func(uid string, first bool, conds model.Conditions) *model.NodeUpgrade {
		m := meta("mgmt-cp-0000-node-upgrader")
		m.UID = uid
		return &model.NodeUpgrade{Meta: m, Kind: model.KindNodeUpgrade, MachineName: "mgmt-cp-0000", KubernetesVersion: "v1.31.3", FirstNodeToBeUpgraded: first, Conditions: conds}
	}
	lines := func(a, b *model.ClusterState) []string {
		var out []string
		for _, l := range Changes(a, b, derive(a), derive(b), t0) {
			if strings.HasPrefix(l.Subject, "NodeUpgrade ") {
				out = append(out, l.Text)
			}
		}
		return out
	}
	b := clone(a)
	b.NodeUpgrades = model.ListOf(mk("u1", true, model.Conditions{cond("UpgraderPodCreated", "True", "", "", "")}))
	if got := lines(a, b); len(got) < 1 || got[0] != "created for machine mgmt-cp-0000 (Kubernetes v1.31.3, the first control-plane node (kubeadm upgrade apply))" {
		t.Errorf("created: %q", got)
	}
	c := clone(b)
	c.NodeUpgrades = model.ListOf(mk("u2", true, model.Conditions{cond("UpgraderPodCreated", "True", "", "", "")}))
	if got := lines(b, c); len(got) != 2 || got[0] != "recreated for machine mgmt-cp-0000: its steps start over" || got[1] != "step UpgraderPodCreated done" {
		t.Errorf("recreated: %q", got)
	}
}

// The NodeUpgrades are said once the Machines that tell this cluster's
// apart are listed too: at start, another cluster's step was said FAILED,
// then "deleted" when the Machines arrived.
func TestChangesWaitForTheMachinesBeforeNodeUpgrades(t *testing.T) {
	a := etcdRollout(2)
	b := clone(a)
	b.NodeUpgrades = model.ListOf(&model.NodeUpgrade{Meta: meta("mgmt-md-0-0000-node-upgrader"), Kind: model.KindNodeUpgrade, MachineName: "mgmt-md-0-0000",
		Conditions: model.Conditions{cond("KubeadmUpgraded", "False", model.SeverityError, "Container exited with a non-zero exit code, reason: Error", "")}})
	b.Sources = map[model.Kind]model.SourceStatus{}
	for _, k := range []model.Kind{model.KindNodeUpgrade, model.KindEKSACluster, model.KindNode} {
		b.Sources[k] = model.SourceStatus{Installed: true, Synced: true}
	}
	b.Sources[model.KindMachine] = model.SourceStatus{Installed: true}
	for _, l := range Changes(a, b, derive(a), derive(b), t0) {
		if strings.HasPrefix(l.Subject, "NodeUpgrade ") {
			t.Errorf("said before the Machines were listed: %s", l)
		}
	}
}
