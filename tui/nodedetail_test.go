package tui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
)

// longWorker is a worker whose name is wider than the detail at 80
// columns: EKS-A names machines after the cluster and the group, and both
// can be long.
const longWorker = "mgmt-md-0-payments-prod-us-east-1-gpu-a100-large-nodes-for-inference-7d9f8b6c5x-x2k4q"

// fixtureDetail is fixtureInPlaceFailed with what the node detail shows:
// conditions on the failed node's Machine, events about it, its node and
// its NodeUpgrade, and a worker with a long name being deleted.
func fixtureDetail() *model.ClusterState {
	s := fixtureInPlaceFailed()
	s.Version = 78
	for i, m := range s.Machines.All() {
		switch m.Name {
		case "mgmt-cp-b8k4m":
			s.Machines = withChanged(s.Machines, i, func(m *model.Machine) {
				m.InfrastructureTemplate = "mgmt-control-plane-template-1731000000000"
				m.Conditions = model.Conditions{
					cond("Available", "True", "", "Available", "", ago(40*24*time.Hour)),
					cond("Ready", "True", "", "Ready", "", ago(40*24*time.Hour)),
					cond("UpToDate", "False", "", "NotUpToDate", "* Version v1.30.14-eks-1-30-40, v1.31.14-eks-1-31-47 required\n* In-place update in progress", ago(6*time.Minute)),
					cond("NodeHealthy", "True", "", "NodeHealthy", "", ago(40*24*time.Hour)),
				}
			})
		case "mgmt-md-0-00003":
			s.Machines = withChanged(s.Machines, i, func(m *model.Machine) {
				m.Name, m.NodeName = longWorker, longWorker
				m.DeletionTimestamp = ago(90 * time.Second)
				m.Phase = "Deleting"
				m.Conditions = model.Conditions{
					cond("Deleting", "True", "", "Drained", "Drain completed, waiting for volumes to be detached from the node", ago(30*time.Second)),
					cond("Ready", "False", "", "Deleting", "Machine deletion in progress", ago(90*time.Second)),
				}
			})
		}
	}
	for i, n := range s.Nodes.All() {
		if n.Name == "mgmt-md-0-00003" {
			s.Nodes = withChanged(s.Nodes, i, func(n *model.Node) {
				n.Name, n.Ready, n.ReadySince, n.Unschedulable = longWorker, false, ago(40*time.Second), true
			})
		}
	}
	s.Events = append([]model.Event{
		{Type: "Warning", Reason: "InPlaceUpgradeFailed", Message: "step KubeadmUpgraded failed on node mgmt-cp-b8k4m", ObjectKind: "NodeUpgrade", ObjectName: "mgmt-cp-b8k4m-node-upgrader", Count: 3, LastTimestamp: ago(10 * time.Second)},
		{Type: "Normal", Reason: "NodeNotSchedulable", Message: "Node " + longWorker + " status is now: NodeNotSchedulable", ObjectKind: "Node", ObjectName: longWorker, Count: 1, LastTimestamp: ago(60 * time.Second)},
		{Type: "Normal", Reason: "MachineMarkedUnhealthy", Message: "Machine eksa-system/mgmt-cp-b8k4m is upgrading in place", ObjectKind: "Machine", ObjectName: "mgmt-cp-b8k4m", Count: 1, LastTimestamp: ago(6 * time.Minute)},
	}, s.Events...)
	s.Sources[model.KindUpgraderPod] = model.SourceStatus{Installed: true, Synced: true, Version: "v1"}
	s.UpgraderPods = []model.UpgraderPod{failedUpgraderPod()}
	return s
}

// failedUpgraderPod is the failed node's upgrader pod as the kubelet reports
// it after kubeadm's third failure: the copier and the first two upgraders
// done, kubeadm's backed off, the last two not started.
func failedUpgraderPod() model.UpgraderPod {
	done := model.ContainerState{Terminated: true, Reason: "Completed"}
	waiting := model.ContainerState{Waiting: true, Reason: "PodInitializing"}
	return model.UpgraderPod{Meta: model.Meta{Name: "mgmt-cp-b8k4m-node-upgrader", Namespace: "eksa-system"}, NodeName: "mgmt-cp-b8k4m", Phase: "Pending",
		Containers: []model.UpgraderContainer{
			{Name: "components-copier", Init: true, State: done},
			{Name: "containerd-upgrader", Init: true, State: done},
			{Name: "cni-plugins-upgrader", Init: true, State: done},
			{Name: "kubeadm-upgrader", Init: true, RestartCount: 3,
				State: model.ContainerState{Waiting: true, Reason: "CrashLoopBackOff",
					Message: "back-off 40s restarting failed container=kubeadm-upgrader pod=mgmt-cp-b8k4m-node-upgrader_eksa-system(118deb58-8403-40da-8af5-6fdf075b3d00)"},
				Last: &model.ContainerState{Terminated: true, ExitCode: 1, Reason: "Error",
					Message: "[upgrade/health] FATAL: [preflight] Some fatal errors occurred: [ERROR CreateJob]: Job \"upgrade-health-check-4712\" did not complete in 15s"}},
			{Name: "kubelet-kubectl-upgrader", Init: true, State: waiting},
			{Name: "post-upgrade-status", State: waiting},
		}}
}

// failedWorker is the worker fixtureMachineFailed fails.
const failedWorker = "mgmt-md-0-00005"

// fixtureMachineFailed is fixtureDetail with a worker CAPI reports failed
// (its phase still Running: the failure is what says so), with its
// provider ID and addresses, on a node under disk pressure whose
// node-problem-detector cannot tell about kernel deadlocks.
func fixtureMachineFailed() *model.ClusterState {
	s := fixtureDetail()
	s.Version = 79
	for i, m := range s.Machines.All() {
		if m.Name == failedWorker {
			s.Machines = withChanged(s.Machines, i, func(m *model.Machine) {
				m.FailureReason = "UpdateError"
				m.FailureMessage = "Failure detected from referenced resource infrastructure.cluster.x-k8s.io/v1beta1, Kind=VSphereMachine with name \"" + failedWorker + "\": VM powered off unexpectedly"
				m.ProviderID = "vsphere://4203a1b2-c3d4-e5f6-0708-090a0b0c0d0e"
				m.Addresses = []model.MachineAddress{{Type: "InternalIP", Address: "10.0.0.5"}, {Type: "Hostname", Address: failedWorker}}
			})
		}
	}
	for i, n := range s.Nodes.All() {
		if n.Name == failedWorker {
			s.Nodes = withChanged(s.Nodes, i, func(n *model.Node) {
				n.Abnormal = model.Conditions{
					cond("DiskPressure", "True", "", "KubeletHasDiskPressure", "kubelet has disk pressure", ago(4*time.Minute)),
					cond("KernelDeadlock", "Unknown", "", "NoFrequentReports", "", ago(2*time.Minute)),
				}
			})
		}
	}
	return s
}

// detailApp is the console at w×h on s, the detail not yet open.
func detailApp(t *testing.T, s *model.ClusterState, w, h int) *App {
	t.Helper()
	opts := Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0), ClusterName: "mgmt"}
	app := NewApp(opts, NewDashboard(opts))
	app.Update(tea.WindowSizeMsg{Width: w, Height: h})
	app.Update(firstThemeMsg{})
	app.Update(SnapshotMsg{State: s})
	return app
}

// pressApp sends keys to the App; the commands they return are dropped
// (the filter's cursor blinks on a timer).
func pressApp(t *testing.T, app *App, keys ...tea.KeyPressMsg) {
	t.Helper()
	for _, k := range keys {
		app.Update(k)
	}
}

// pressRun sends a key that opens or closes a dialog and hands the App
// the message its command returns.
func pressRun(t *testing.T, app *App, k tea.KeyPressMsg) {
	t.Helper()
	_, cmd := app.Update(k)
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case OpenDialogMsg, CloseDialogMsg:
		app.Update(msg)
	default:
		t.Fatalf("%s gave %T, want a dialog opened or closed", k, msg)
	}
}

var keyD = tea.KeyPressMsg{Code: 'd', Text: "d"}

// filterTo puts the nodes pane's cursor on the one row the filter leaves.
func filterTo(t *testing.T, app *App, text string) {
	t.Helper()
	pressApp(t, app, tea.KeyPressMsg{Code: '/', Text: "/"})
	pressApp(t, app, typeText(text)...)
	pressApp(t, app, enter)
}

func topDetail(t *testing.T, app *App) *nodeDetail {
	t.Helper()
	if len(app.dialogs) == 0 {
		t.Fatalf("no dialog open:\n%s", ansi.Strip(app.View().Content))
	}
	v, ok := app.dialogs[len(app.dialogs)-1].(*nodeDetail)
	if !ok {
		t.Fatalf("top dialog is %T, want the node detail", app.dialogs[len(app.dialogs)-1])
	}
	return v
}

// TestNodeDetailGoldens pins the node detail over the dashboard at the
// sizes operators use: a control-plane node whose in-place kubeadm step
// failed (its stall, its machine's and NodeUpgrade's conditions, their
// events), and a worker whose name is wider than the view at 80 columns,
// cordoned and being deleted. At 40 columns the scroll keys shorten and
// esc/q close stays at the footer's end (it was cut at the edge).
func TestNodeDetailGoldens(t *testing.T) {
	for _, c := range []struct {
		name, filter string
		fixture      func() *model.ClusterState
		keys         []tea.KeyPressMsg
	}{
		{"inplace-failed", "b8k4m", fixtureDetail, nil}, {"long-name", "gpu-a100", fixtureDetail, nil},
		// Scrolled to the end: the upgrader pod under the steps, kubeadm's
		// container backed off, what it last exited with and the command
		// that reads its log.
		{"upgrader-pod", "b8k4m", fixtureDetail, []tea.KeyPressMsg{{Code: 'G', Text: "G"}}},
		// A console given --context: the log command names it, so that
		// pasted in a shell on another context it reads this cluster's.
		{"upgrader-pod-context", "b8k4m", func() *model.ClusterState {
			s := fixtureDetail()
			s.Conn = model.ConnFlags{{Name: "context", Value: "prod"}}
			return s
		}, []tea.KeyPressMsg{{Code: 'G', Text: "G"}}},
		// CAPI's failure at the top, the addresses to reach the machine
		// by, the node's pressure under its readiness.
		{"machine-failed", "md-0-00005", fixtureMachineFailed, nil},
		// A workload cluster's: its Node is on its own API server, so not
		// "no such Node listed"; its readiness is its Machine's NodeReady.
		{"workload", "md-0-00003", fixtureWorkload, nil},
	} {
		for _, sz := range [][2]int{{40, 24}, {80, 24}, {120, 40}} {
			t.Run(fmt.Sprintf("%s/%dx%d", c.name, sz[0], sz[1]), func(t *testing.T) {
				app := detailApp(t, c.fixture(), sz[0], sz[1])
				filterTo(t, app, c.filter)
				pressRun(t, app, keyD)
				topDetail(t, app)
				pressApp(t, app, c.keys...)
				out := app.View().Content
				requireLines(t, out, sz[0], sz[1])
				golden.RequireEqual(t, out)
			})
		}
	}
}

// TestNodeDetailShowsTheNameWhole: the nodes pane cuts a long name to its
// end at 80 columns; the detail shows all of it, wrapped.
func TestNodeDetailShowsTheNameWhole(t *testing.T) {
	app := detailApp(t, fixtureDetail(), 80, 24)
	filterTo(t, app, "gpu-a100")
	if s := ansi.Strip(app.View().Content); strings.Contains(s, longWorker) {
		t.Fatalf("the test wants the nodes pane to cut the name at 80 columns:\n%s", s)
	}
	pressRun(t, app, keyD)
	v := topDetail(t, app)
	if len(v.head) < 2 {
		t.Fatalf("the name is on %d line(s), want it wrapped at 80 columns", len(v.head))
	}
	var name strings.Builder
	for i, l := range v.head {
		for _, sg := range l.segs {
			if i == 0 && sg.r == rTitle {
				continue
			}
			name.WriteString(strings.TrimSpace(sg.text))
		}
	}
	if name.String() != longWorker {
		t.Fatalf("the detail's head reads %q, want the name whole: %q", name.String(), longWorker)
	}
	s := ansi.Strip(app.View().Content)
	pressApp(t, app, tea.KeyPressMsg{Code: 'G', Text: "G"})
	s += ansi.Strip(app.View().Content)
	for _, want := range []string{"MachineDeployment mgmt-md-0", "Deleting", "cordoned", "NotReady", "1 of the 5 events the console keeps", "NodeNotSchedulable"} {
		if !strings.Contains(s, want) {
			t.Errorf("the detail lacks %q:\n%s", want, s)
		}
	}
}

// TestNodeDetailFollowsSnapshots: the open detail shows each new snapshot's
// machine (found by name: the watchers publish a new object for every
// change), says when the machine is gone and what it was, and takes it up
// again if a machine of that name comes back.
func TestNodeDetailFollowsSnapshots(t *testing.T) {
	s := fixtureDetail()
	app := detailApp(t, s, 120, 40)
	filterTo(t, app, "b8k4m")
	pressRun(t, app, keyD)
	v := topDetail(t, app)
	screen := func() string { return ansi.Strip(app.View().Content) }
	if sc := screen(); !strings.Contains(sc, "failed at KubeadmUpgraded") || !strings.Contains(sc, "in-place step KubeadmUpgraded failed") {
		t.Fatalf("the detail lacks the failed step and its stall:\n%s", sc)
	}

	publish := func(s *model.ClusterState) {
		app.Update(SnapshotMsg{State: s})
		app.Update(frameMsg{}) // the dashboard's held-back rebuild
	}
	// The retry: the NodeUpgrade starts over and its pod step succeeds.
	next := *s
	next.Version++
	for i, nu := range s.NodeUpgrades.All() {
		if nu.MachineName == "mgmt-cp-b8k4m" {
			next.NodeUpgrades = withChanged(s.NodeUpgrades, i, func(nu *model.NodeUpgrade) {
				nu.Conditions = model.Conditions{cond("UpgraderPodCreated", "True", "", "", "", t0)}
			})
		}
	}
	publish(&next)
	sc := screen()
	if strings.Contains(sc, "failed at KubeadmUpgraded") || !strings.Contains(sc, "1 of 7 steps done, on BinariesCopied") {
		t.Fatalf("the detail did not follow the snapshot:\n%s", sc)
	}

	gone := next
	gone.Version++
	var ms []*model.Machine
	for _, m := range next.Machines.All() {
		if m.Name != "mgmt-cp-b8k4m" {
			ms = append(ms, m)
		}
	}
	gone.Machines = model.ListOf(ms...)
	publish(&gone)
	sc = screen()
	for _, want := range []string{"Machine gone: not in the newest snapshot", "Machine mgmt-cp-b8k4m", "KubeadmControlPlane mgmt", "1 of 7 steps done"} {
		if !strings.Contains(sc, want) {
			t.Errorf("with the machine gone, the detail lacks %q:\n%s", want, sc)
		}
	}
	if topDetail(t, app) != v {
		t.Fatal("the detail closed when its machine went")
	}

	publish(&next)
	if sc := screen(); strings.Contains(sc, "Machine gone") || !strings.Contains(sc, "1 of 7 steps done") {
		t.Fatalf("the machine is back, the detail still says it is gone:\n%s", sc)
	}
}

// TestDescribeKeyFromDashboard: d on the focused nodes pane opens the detail
// of the row under the cursor, a group row its first machine; on another
// pane d does nothing and the help does not offer it; esc and q close the
// detail (q does not quit the console).
func TestDescribeKeyFromDashboard(t *testing.T) {
	app := detailApp(t, fixtureHealthy(), 120, 40)
	d := dashboardOf(t, app)
	if !strings.Contains(ansi.Strip(app.View().Content), "d describe node") {
		t.Fatalf("the footer does not offer d on the nodes pane:\n%s", ansi.Strip(app.View().Content))
	}
	pressApp(t, app, tea.KeyPressMsg{Code: '?', Text: "?"})
	if !strings.Contains(ansi.Strip(app.View().Content), "describe node") {
		t.Fatalf("the full help does not list d:\n%s", ansi.Strip(app.View().Content))
	}
	pressApp(t, app, tea.KeyPressMsg{Code: '?', Text: "?"})
	// At rest every row is folded: the first is the control plane's group.
	if r, _ := d.nodes.selected(); r.group != 3 {
		t.Fatalf("the test wants the cursor on the control plane's group row, got %+v", r)
	}
	pressRun(t, app, keyD)
	v := topDetail(t, app)
	if v.machine != "mgmt-cp-7f9x2" || v.group != 3 {
		t.Fatalf("d on the group row opened %q (group %d), want its first machine mgmt-cp-7f9x2", v.machine, v.group)
	}
	if s := ansi.Strip(app.View().Content); !strings.Contains(s, "the first of the 3 machines of the group row") {
		t.Errorf("the detail does not say it is one of a group:\n%s", s)
	}
	_, cmd := app.Update(tea.KeyPressMsg{Code: 'q', Text: "q"})
	if cmd == nil {
		t.Fatal("q did nothing in the detail")
	}
	if msg := cmd(); msg != (CloseDialogMsg{}) {
		t.Fatalf("q in the detail gave %T, want the detail closed (not the console quit)", msg)
	}
	app.Update(CloseDialogMsg{})

	pressApp(t, app, tea.KeyPressMsg{Code: 'e', Text: "e"}, tea.KeyPressMsg{Code: tea.KeyDown})
	pressRun(t, app, keyD)
	if v := topDetail(t, app); v.machine != "mgmt-cp-b8k4m" || v.group != 0 {
		t.Fatalf("d on the second row opened %q (group %d), want mgmt-cp-b8k4m", v.machine, v.group)
	}
	pressRun(t, app, tea.KeyPressMsg{Code: tea.KeyEscape})
	if len(app.dialogs) != 0 {
		t.Fatal("esc did not close the detail")
	}

	pressApp(t, app, tea.KeyPressMsg{Code: tea.KeyTab}) // events
	if d.Focus() == "NODES" {
		t.Fatal("the test wants another pane focused")
	}
	if _, cmd := app.Update(keyD); cmd != nil {
		t.Fatalf("d on the %s pane returned a command", d.Focus())
	}
	if s := ansi.Strip(app.View().Content); strings.Contains(s, "describe") {
		t.Errorf("the footer offers d on the %s pane:\n%s", d.Focus(), s)
	}
}

// TestNodeDetailScrolls: taller than the screen, the detail scrolls with
// ↑/↓, pgup/pgdn and g/G, and its footer says how much is above and below.
func TestNodeDetailScrolls(t *testing.T) {
	app := detailApp(t, fixtureDetail(), 80, 24)
	filterTo(t, app, "b8k4m")
	pressRun(t, app, keyD)
	v := topDetail(t, app)
	app.View()
	if v.maxOffset == 0 {
		t.Fatalf("the test wants a detail taller than the screen at 80x24 (%d rows)", len(v.body))
	}
	steps := []struct {
		k    tea.KeyPressMsg
		want int
	}{
		{tea.KeyPressMsg{Code: tea.KeyDown}, 1},
		{tea.KeyPressMsg{Code: 'j', Text: "j"}, 2},
		{tea.KeyPressMsg{Code: tea.KeyUp}, 1},
		{tea.KeyPressMsg{Code: 'G', Text: "G"}, v.maxOffset},
		{tea.KeyPressMsg{Code: tea.KeyDown}, v.maxOffset},
		{tea.KeyPressMsg{Code: 'g', Text: "g"}, 0},
		{tea.KeyPressMsg{Code: tea.KeyPgDown}, min(v.visible()-1, v.maxOffset)},
		{tea.KeyPressMsg{Code: tea.KeyPgUp}, 0},
	}
	for _, s := range steps {
		pressApp(t, app, s.k)
		if v.offset != s.want {
			t.Fatalf("after %s the offset is %d, want %d", s.k, v.offset, s.want)
		}
	}
	pressApp(t, app, tea.KeyPressMsg{Code: 'G', Text: "G"})
	if s := ansi.Strip(app.View().Content); !strings.Contains(s, fmt.Sprintf("(%d above, 0 below)", v.maxOffset)) {
		t.Errorf("the footer does not say where the view is:\n%s", s)
	}
}

// Denied Pods, the detail keeps the steps and says in their place why the
// containers are missing and what grants them; a node with no upgrader pod
// (none yet, or deleted by a retry) says so.
func TestNodeDetailUpgraderPodForbiddenOrMissing(t *testing.T) {
	text := func(s *model.ClusterState) string {
		var b strings.Builder
		lines, _ := detailUpgraderPod(newStyles(initialTheme(Options{Theme: themes.Mono})), s, "mgmt-cp-b8k4m", 200)
		for _, l := range lines {
			for _, sg := range l.segs {
				b.WriteString(sg.text)
			}
			b.WriteByte('\n')
		}
		return b.String()
	}
	s := fixtureDetail()
	s.Sources[model.KindUpgraderPod] = model.SourceStatus{Installed: true, Forbidden: "list pods in eksa-system"}
	s.UpgraderPods = nil
	got := text(s)
	if !strings.Contains(got, "pod        not shown (forbidden: list pods in eksa-system); fix: grant a Role in eksa-system with {apiGroups: [\"\"], resources: [pods], verbs: [list, watch]}") {
		t.Errorf("forbidden:\n%s", got)
	}
	s.Sources[model.KindUpgraderPod] = model.SourceStatus{Installed: true, Synced: true}
	if got := text(s); !strings.Contains(got, "none on node mgmt-cp-b8k4m (not created yet, or deleted by a retry)") {
		t.Errorf("missing:\n%s", got)
	}
}

// detailBody is the detail's body as text, a line per row.
func detailBody(v *nodeDetail) string {
	var b strings.Builder
	for _, l := range v.body {
		for _, sg := range l.segs {
			b.WriteString(sg.text)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestNodeDetailListsItsOwnersEventsAboutIt: that etcdadm created the new
// member, KCP scaled down a control-plane machine or a MachineSet created a
// worker is said by the owner's events, not the machine's; the detail lists
// those that name the machine whole (not a longer name it begins, nor one
// another owner or a stranger's object emitted), marked as the owner's,
// newest first among the machine's own, and counts them.
func TestNodeDetailListsItsOwnersEventsAboutIt(t *testing.T) {
	s := fixtureMidEtcd()
	ev := func(kind, name, reason, msg string, age time.Duration) model.Event {
		return model.Event{Type: "Normal", Reason: reason, Message: msg, ObjectKind: kind, ObjectName: name, Count: 1, LastTimestamp: ago(age)}
	}
	s.Events = append([]model.Event{
		ev("Machine", "mgmt-etcd-h2v8d", "WaitingForIPAddress", "no IP address on the VM yet", 10*time.Second),
		ev("EtcdadmCluster", "mgmt-etcd", "SuccessfulCreate", "Created machine mgmt-etcd-h2v8dx", 20*time.Second),
		ev("KubeadmControlPlane", "mgmt", "Waiting", "waiting for etcd member mgmt-etcd-h2v8d", 25*time.Second),
		ev("KubeadmControlPlane", "mgmt", "SuccessfulDelete", "Deleted machine mgmt-cp-b8k4m.", 40*time.Second),
		ev("MachineSet", "mgmt-md-0-7d9f8", "SuccessfulCreate", "Created machine: mgmt-md-0-00003", 50*time.Second),
		ev("MachineSet", "mgmt-md-0-7d9f8", "SuccessfulCreate", "Created machine: mgmt-md-0-000031", 55*time.Second),
		ev("MachineSet", "mgmt-md-1-5c6b7", "SuccessfulCreate", "Created machine: mgmt-md-0-00004 (adopted)", 58*time.Second),
		ev("MachineDeployment", "mgmt-md-0", "ScalingReplicaSet", "Scaled up MachineSet mgmt-md-0-7d9f8 for machine mgmt-md-0-00004", 59*time.Second),
	}, s.Events...)
	kept := len(s.Events)
	for _, c := range []struct {
		name   string
		open   func(t *testing.T, app *App)
		want   []string
		unwant []string
		shown  int
	}{
		{"etcd member", func(t *testing.T, app *App) {
			focusEtcd(t, dashboardOf(t, app), func(k tea.KeyPressMsg) { pressApp(t, app, k) })
		}, []string{"Machine  WaitingForIPAddress", "EtcdadmCluster (owner)  SuccessfulCreate", "Created machine mgmt-etcd-h2v8d (new etcd member 1 of 3)"},
			[]string{"mgmt-etcd-h2v8dx", "waiting for etcd member", "not healthy yet"}, 2},
		{"control plane", func(t *testing.T, app *App) { filterTo(t, app, "cp-b8k4m") },
			[]string{"KubeadmControlPlane (owner)  SuccessfulDelete", "Deleted machine mgmt-cp-b8k4m."}, []string{"waiting for etcd member"}, 1},
		{"worker", func(t *testing.T, app *App) { filterTo(t, app, "md-0-00004") },
			[]string{"MachineDeployment (owner)  ScalingReplicaSet"}, []string{"adopted", "00003"}, 1},
		{"worker of a MachineSet", func(t *testing.T, app *App) { filterTo(t, app, "md-0-00003") },
			[]string{"MachineSet (owner)  SuccessfulCreate", "Created machine: mgmt-md-0-00003"}, []string{"000031"}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			app := detailApp(t, s, 120, 40)
			c.open(t, app)
			pressRun(t, app, keyD)
			body := detailBody(topDetail(t, app))
			for _, w := range append(c.want, fmt.Sprintf("%d of the %d events the console keeps", c.shown, kept)) {
				if !strings.Contains(body, w) {
					t.Errorf("the detail lacks %q:\n%s", w, body)
				}
			}
			for _, u := range c.unwant {
				if strings.Contains(body, u) {
					t.Errorf("the detail lists an event that is not its owner's about it (%q):\n%s", u, body)
				}
			}
		})
	}
}

// An etcd member etcdadm disowned keeps its etcd-cluster label: the detail
// named the EtcdadmCluster as its owner, where the Machine had none.
func TestOwnerTextOfADisownedEtcdMember(t *testing.T) {
	m := &model.Machine{Role: model.RoleEtcd, Owner: "mgmt-etcd", Owned: false}
	if got := ownerText(m, nil); !strings.HasPrefix(got, "none: etcdadm removed its owner reference") {
		t.Errorf("disowned: %q", got)
	}
	m.Owned = true
	if got := ownerText(m, nil); got != "EtcdadmCluster mgmt-etcd" {
		t.Errorf("owned: %q", got)
	}
}

// A NodeUpgrade's conditions come stored in alphabetical order; the detail
// lists its steps in the order they run, Ready first.
func TestNodeUpgradeStepsInRunOrder(t *testing.T) {
	var cs model.Conditions
	for _, typ := range []string{"BinariesCopied", "CNIPluginsUpgraded", "ContainerdUpgraded", "KubeadmUpgraded", "KubeletUpgraded", "PostUpgradeCleanupCompleted", "Ready", "Something", "UpgraderPodCreated"} {
		cs = append(cs, model.Condition{Type: typ})
	}
	var got []string
	for _, c := range stepOrder(cs) {
		got = append(got, c.Type)
	}
	want := append(append([]string{"Ready"}, model.NodeUpgradeSteps...), "Something")
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

// TestNodeDetailQuestionMarkShowsTheFullHelp: ? shows the full help in the
// detail as on every screen, where it did nothing, in place of the keys'
// line and wrapped to the view's width; the body keeps scrolling above it.
// On a short screen the help's last rows go (? and esc lead it), not the
// view's top. esc closes the help first, then the view; ? again closes it
// too.
func TestNodeDetailQuestionMarkShowsTheFullHelp(t *testing.T) {
	question := tea.KeyPressMsg{Code: '?', Text: "?"}
	for _, sz := range [][2]int{{80, 24}, {40, 16}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			app := detailApp(t, fixtureDetail(), sz[0], sz[1])
			filterTo(t, app, "b8k4m")
			pressRun(t, app, keyD)
			v := topDetail(t, app)
			if s := ansi.Strip(app.View().Content); strings.Contains(s, "close help") {
				t.Fatalf("the full help is shown before ?:\n%s", s)
			}
			pressRun(t, app, question)
			out := app.View().Content
			requireLines(t, out, sz[0], sz[1])
			s := ansi.Strip(out)
			wants := []string{"Machine mgmt-cp-b8k4m", "close help", "ctrl+z"}
			if sz[0] == 80 {
				wants = append(wants, "page down")
			}
			for _, want := range wants {
				if !strings.Contains(s, want) {
					t.Errorf("the full help lacks %q:\n%s", want, s)
				}
			}
			golden.RequireEqual(t, out)
			pressApp(t, app, tea.KeyPressMsg{Code: tea.KeyDown})
			if v.offset != 1 {
				t.Errorf("↓ under the help: offset %d, want 1", v.offset)
			}
			pressRun(t, app, tea.KeyPressMsg{Code: tea.KeyEscape})
			if len(app.dialogs) != 1 || strings.Contains(ansi.Strip(app.View().Content), "close help") {
				t.Fatalf("esc: %d dialogs, want the detail with its help closed:\n%s", len(app.dialogs), ansi.Strip(app.View().Content))
			}
			pressRun(t, app, question)
			pressRun(t, app, question)
			if strings.Contains(ansi.Strip(app.View().Content), "close help") {
				t.Error("? again did not close the help")
			}
			pressRun(t, app, tea.KeyPressMsg{Code: tea.KeyEscape})
			if len(app.dialogs) != 0 {
				t.Error("esc with the help closed did not close the detail")
			}
		})
	}
}
