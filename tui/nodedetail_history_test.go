package tui

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
)

// fakeHistory stands for the API server's events: it records what each
// read asked for and answers with events or err.
type fakeHistory struct {
	asked  [][]model.EventSubject
	events []model.Event
	err    error
}

func (f *fakeHistory) read(_ context.Context, subjects []model.EventSubject) ([]model.Event, error) {
	f.asked = append(f.asked, subjects)
	return f.events, f.err
}

// historyApp is detailApp with the detail reading its events from f.
func historyApp(t *testing.T, s *model.ClusterState, f *fakeHistory) *App {
	t.Helper()
	opts := Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0), ClusterName: "mgmt", EventHistory: f.read}
	app := NewApp(opts, NewDashboard(opts))
	app.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	app.Update(firstThemeMsg{})
	app.Update(SnapshotMsg{State: s})
	return app
}

// openHistory opens the detail of the row the filter leaves and returns it
// with the message its read ends with, not yet delivered.
func openHistory(t *testing.T, app *App, filter string) (*nodeDetail, tea.Msg) {
	t.Helper()
	filterTo(t, app, filter)
	pressRun(t, app, keyD)
	v := topDetail(t, app)
	cmd := v.Init()
	if cmd == nil {
		t.Fatal("opening the detail reads no events from the API server")
	}
	return v, cmd()
}

// historyFixture is fixtureDetail whose kept machine event has an identity,
// with the API server holding an older copy of it and older events the
// dashboard's buffer no longer keeps: the machine's, its node's, its
// NodeUpgrade's and its owner's naming it.
func historyFixture() (*model.ClusterState, *fakeHistory) {
	s := fixtureDetail()
	evs := append([]model.Event(nil), s.Events...)
	for i := range evs {
		if evs[i].Reason == "MachineMarkedUnhealthy" {
			evs[i].UID, evs[i].Count, evs[i].ResourceVersion = "uid-marked", 2, 20
		}
	}
	s.Events = evs
	ev := func(uid, kind, name, reason, msg string, age time.Duration, rv uint64) model.Event {
		return model.Event{UID: uid, Namespace: "eksa-system", Name: uid, Type: "Normal", Reason: reason, Message: msg,
			ObjectKind: kind, ObjectName: name, Count: 1, LastTimestamp: ago(age), ResourceVersion: rv}
	}
	f := &fakeHistory{events: []model.Event{
		ev("uid-marked", "Machine", "mgmt-cp-b8k4m", "MachineMarkedUnhealthy", "Machine eksa-system/mgmt-cp-b8k4m is upgrading in place", 6*time.Minute, 10),
		ev("uid-drain", "Node", "mgmt-cp-b8k4m", "NodeNotSchedulable", "Node mgmt-cp-b8k4m status is now: NodeNotSchedulable", 50*time.Minute, 9),
		ev("uid-nu", "NodeUpgrade", "mgmt-cp-b8k4m-node-upgrader", "NodeUpgradeStarted", "started upgrading node mgmt-cp-b8k4m-node-upgrader", 55*time.Minute, 8),
		ev("uid-kcp", "KubeadmControlPlane", "mgmt", "SuccessfulCreate", "Created machine mgmt-cp-b8k4m", 40*24*time.Hour, 2),
	}}
	return s, f
}

// TestNodeDetailReadsItsEventHistory: opening the detail reads the events
// about the machine, its node, its NodeUpgrade and its owner from the API
// server; until the reply it says it is loading and lists the kept ones,
// then lists those the buffer no longer keeps among them, each once (the
// kept, later write of one read too), newest first.
func TestNodeDetailReadsItsEventHistory(t *testing.T) {
	s, f := historyFixture()
	app := historyApp(t, s, f)
	v, reply := openHistory(t, app, "b8k4m")
	want := []model.EventSubject{
		{Kind: "Machine", Name: "mgmt-cp-b8k4m"},
		{Kind: "Node", Name: "mgmt-cp-b8k4m"},
		{Kind: "NodeUpgrade", Name: "mgmt-cp-b8k4m-node-upgrader"},
		{Kind: "Pod", Name: "mgmt-cp-b8k4m-node-upgrader"},
		{Kind: "KubeadmControlPlane", Name: "mgmt", Naming: "mgmt-cp-b8k4m"},
	}
	if len(f.asked) != 1 || !reflect.DeepEqual(f.asked[0], want) {
		t.Errorf("asked for %+v, want %+v", f.asked, want)
	}

	body := detailBody(v)
	if !strings.Contains(body, "Events  loading events… until then 3 of the ") || strings.Contains(body, "NodeUpgradeStarted") {
		t.Errorf("while loading, the detail does not say so, or lists what is not read yet:\n%s", body)
	}
	pressApp(t, app, tea.KeyPressMsg{Code: 'G', Text: "G"})
	t.Run("loading", func(t *testing.T) { golden.RequireEqual(t, app.View().Content) })

	app.Update(reply)
	body = detailBody(v)
	order := []string{"MachineMarkedUnhealthy ×2", "NodeNotSchedulable", "NodeUpgradeStarted", "KubeadmControlPlane (owner)  SuccessfulCreate"}
	last := -1
	for _, w := range order {
		i := strings.Index(body, w)
		if i < 0 || i < last {
			t.Errorf("the detail lacks %q, or lists it out of order (newest first):\n%s", w, body)
		}
		last = i
	}
	if n := strings.Count(body, "MachineMarkedUnhealthy"); n != 1 {
		t.Errorf("the event read and kept is listed %d times, want once:\n%s", n, body)
	}
	if !strings.Contains(body, "Events  6: the newest 50 of each object, read from the API server on opening, with those kept since") {
		t.Errorf("the detail does not say where its events came from:\n%s", body)
	}
	pressApp(t, app, tea.KeyPressMsg{Code: 'G', Text: "G"})
	t.Run("loaded", func(t *testing.T) { golden.RequireEqual(t, app.View().Content) })
}

// TestNodeDetailHistoryFailureFallsBack: a read the identity may not make
// names the Role rule that grants it, as the panes do, and any other error
// is said on one printable line; either way the kept events are listed as
// without the read.
func TestNodeDetailHistoryFailureFallsBack(t *testing.T) {
	for _, c := range []struct {
		name   string
		err    error
		want   []string
		unwant []string
	}{
		{"forbidden", &model.ForbiddenError{Forbidden: "list events in eksa-system", Err: errors.New("events is forbidden: User \"ops\" cannot list resource \"events\"")},
			[]string{"not read from the API server (forbidden: list events in eksa-system); fix: grant a Role in eksa-system with",
				"kubectl auth can-i list events -n eksa-system"}, nil},
		{"other", errors.New("Get \"https://10.0.0.1:6443/api/v1/namespaces/eksa-system/events\": context deadline exceeded\x1b[2J\nsecond line"),
			// Wrapped at the width, and the escape made printable.
			[]string{`not read from the API server: Get "https://10.0.0.1:6443/api/v1/namespaces/eksa-system/events"`, `deadline exceeded\x1b[2J`},
			[]string{"\x1b[2J", "second line"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, f := historyFixture()
			f.err = c.err
			app := historyApp(t, s, f)
			v, reply := openHistory(t, app, "b8k4m")
			app.Update(reply)
			body := detailBody(v)
			for _, w := range append(c.want, "Events  3 of the ", "MachineMarkedUnhealthy ×2") {
				if !strings.Contains(body, w) {
					t.Errorf("the detail lacks %q:\n%s", w, body)
				}
			}
			for _, u := range append(c.unwant, "loading events", "NodeUpgradeStarted") {
				if strings.Contains(body, u) {
					t.Errorf("the detail has %q:\n%s", u, body)
				}
			}
			if c.name == "forbidden" {
				pressApp(t, app, tea.KeyPressMsg{Code: 'G', Text: "G"})
				golden.RequireEqual(t, app.View().Content)
			}
		})
	}
}

// TestNodeDetailHistoryReadInPart: a read the API server had more events
// for than it lists shows what it read, and says the rest was not read.
func TestNodeDetailHistoryReadInPart(t *testing.T) {
	s, f := historyFixture()
	f.err = &model.PartialHistoryError{Subjects: []string{"KubeadmControlPlane mgmt"}, Listed: 5000}
	app := historyApp(t, s, f)
	v, reply := openHistory(t, app, "b8k4m")
	app.Update(reply)
	body := detailBody(v)
	for _, w := range []string{"Events  6: the newest 50 of each object, read from the API server", "NodeUpgradeStarted",
		"read in part: more than 5000 events of KubeadmControlPlane mgmt; the newest may be among those not read"} {
		if !strings.Contains(body, w) {
			t.Errorf("the detail lacks %q:\n%s", w, body)
		}
	}
}

// TestNodeDetailDropsAStaleHistory: a reply that arrives after its detail
// closed changes nothing, and one for the machine a detail was open on
// before is not shown in the detail of another: it stays loading until its
// own reply.
func TestNodeDetailDropsAStaleHistory(t *testing.T) {
	s, f := historyFixture()
	app := historyApp(t, s, f)
	_, stale := openHistory(t, app, "b8k4m")
	pressRun(t, app, tea.KeyPressMsg{Code: tea.KeyEscape})
	if len(app.dialogs) != 0 {
		t.Fatal("esc did not close the detail")
	}
	app.Update(stale) // the detail is closed: nobody takes it

	pressApp(t, app, tea.KeyPressMsg{Code: tea.KeyEscape}) // the filter
	v, own := openHistory(t, app, "q2w6z")
	if got := f.asked[1][0]; got.Name != "mgmt-cp-q2w6z" {
		t.Fatalf("the second detail asked for %+v", got)
	}
	app.Update(stale)
	body := detailBody(v)
	if strings.Contains(body, "NodeUpgradeStarted") || strings.Contains(body, "KubeadmControlPlane (owner)") || !strings.Contains(body, "loading events…") {
		t.Fatalf("another machine's late reply was taken:\n%s", body)
	}
	app.Update(own)
	if body := detailBody(v); strings.Contains(body, "loading events…") {
		t.Fatalf("the detail's own reply was not taken:\n%s", body)
	}
}

// TestHistorySubjectsFollowTheOwner: the read asks for the events of the
// objects the detail lists them about, an owner's naming the machine: an
// etcd member's EtcdadmCluster, a worker's MachineDeployment and its
// MachineSets (named after it), a Node no Machine claims alone.
func TestHistorySubjectsFollowTheOwner(t *testing.T) {
	etcd := &model.Machine{Meta: model.Meta{Name: "mgmt-etcd-h2v8d"}, Role: model.RoleEtcd, Owner: "mgmt-etcd"}
	worker := &model.Machine{Meta: model.Meta{Name: "mgmt-md-0-7d9f8-x2k4q"}, Role: model.RoleWorker, Owner: "mgmt-md-0", NodeName: "mgmt-md-0-7d9f8-x2k4q"}
	for _, c := range []struct {
		name          string
		machine, node string
		o             detailObjects
		want          []model.EventSubject
	}{
		{"etcd", etcd.Name, "", detailObjects{m: etcd}, []model.EventSubject{
			{Kind: "Machine", Name: etcd.Name}, {Kind: "EtcdadmCluster", Name: "mgmt-etcd", Naming: etcd.Name}}},
		{"worker", worker.Name, "", detailObjects{m: worker}, []model.EventSubject{
			{Kind: "Machine", Name: worker.Name}, {Kind: "Node", Name: worker.Name},
			{Kind: "MachineDeployment", Name: "mgmt-md-0", Naming: worker.Name},
			{Kind: "MachineSet", Name: "mgmt-md-0", Prefix: true, Naming: worker.Name}}},
		{"node alone", "", "ip-10-0-0-9", detailObjects{}, []model.EventSubject{{Kind: "Node", Name: "ip-10-0-0-9"}}},
	} {
		if got := historySubjects(c.machine, c.node, c.o, nil); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: subjects %+v, want %+v", c.name, got, c.want)
		}
	}
	// Where EKS-A serves NodeUpgrades, a machine with none now may have
	// had one: EKS-A deletes it once the node is upgraded, and its events
	// (the attempts that failed first) outlive it. Not an etcd member's:
	// etcd is never upgraded in place.
	inPlace := &model.ClusterState{Sources: map[model.Kind]model.SourceStatus{model.KindNodeUpgrade: {Installed: true}}}
	for _, c := range []struct {
		name    string
		machine string
		o       detailObjects
		want    []model.EventSubject
	}{
		{"worker", worker.Name, detailObjects{m: worker}, []model.EventSubject{
			{Kind: "Machine", Name: worker.Name}, {Kind: "Node", Name: worker.Name},
			{Kind: "NodeUpgrade", Name: worker.Name + "-node-upgrader"},
			{Kind: "Pod", Name: worker.NodeName + "-node-upgrader"},
			{Kind: "MachineDeployment", Name: "mgmt-md-0", Naming: worker.Name},
			{Kind: "MachineSet", Name: "mgmt-md-0", Prefix: true, Naming: worker.Name}}},
		{"etcd", etcd.Name, detailObjects{m: etcd}, []model.EventSubject{
			{Kind: "Machine", Name: etcd.Name}, {Kind: "EtcdadmCluster", Name: "mgmt-etcd", Naming: etcd.Name}}},
	} {
		if got := historySubjects(c.machine, "", c.o, inPlace); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: subjects %+v, want %+v", c.name, got, c.want)
		}
	}
	// A workload cluster's Node is on its own API server: a Node of this
	// one by its name is the management cluster's, whose events the
	// detail showed as the workload node's (D7).
	workload := &model.ClusterState{Cluster: &model.EKSACluster{Meta: model.Meta{Name: "mgmt"}, ManagementCluster: "other"}}
	want := []model.EventSubject{{Kind: "Machine", Name: worker.Name},
		{Kind: "MachineDeployment", Name: "mgmt-md-0", Naming: worker.Name},
		{Kind: "MachineSet", Name: "mgmt-md-0", Prefix: true, Naming: worker.Name}}
	if got := historySubjects(worker.Name, "", detailObjects{m: worker}, workload); !reflect.DeepEqual(got, want) {
		t.Errorf("a workload cluster's worker: subjects %+v, want %+v", got, want)
	}
}

// TestNodeDetailDropsTheReplyOfAnEarlierOpening: a detail closed and
// opened again on the same machine takes the reply of its own read only.
// The first read, stuck on an API server that stopped answering, fails
// when its bound passes: taken by the second opening, it said its events
// were not read while its own read was under way, or, arriving after it,
// took back the events it had read.
func TestNodeDetailDropsTheReplyOfAnEarlierOpening(t *testing.T) {
	s, f := historyFixture()
	app := historyApp(t, s, f)
	f.err = errors.New("context deadline exceeded")
	_, first := openHistory(t, app, "b8k4m")
	pressRun(t, app, tea.KeyPressMsg{Code: tea.KeyEscape})
	pressApp(t, app, tea.KeyPressMsg{Code: tea.KeyEscape}) // the filter
	f.err = nil
	v, own := openHistory(t, app, "b8k4m")

	app.Update(first)
	if body := detailBody(v); strings.Contains(body, "not read from the API server") || !strings.Contains(body, "loading events…") {
		t.Fatalf("the reply of an earlier opening was taken while the detail's own read was under way:\n%s", body)
	}
	app.Update(own)
	app.Update(first)
	if body := detailBody(v); strings.Contains(body, "not read from the API server") || !strings.Contains(body, "NodeUpgradeStarted") {
		t.Fatalf("the reply of an earlier opening took back the events the detail read:\n%s", body)
	}
}
