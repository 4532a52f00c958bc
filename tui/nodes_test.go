package tui

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/report"
	"github.com/upgrade-console/upgrade-console/themes"
)

// TestRowJoinMatchesAFreshJoin drives one join through a run of snapshots
// built the way the watchers build them (changed objects replaced, the
// rest shared; objects added and removed; lists kept when nothing in them
// changed) and compares every result with a join from scratch: a row kept
// from an earlier snapshot must be exactly the row a fresh join builds.
func TestRowJoinMatchesAFreshJoin(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	th := themes.NewDark()
	st := newStyles(&th)
	s := fixtureLarge(200)
	var j rowJoin
	for round := 0; round < 400; round++ {
		next := *s
		next.Version++
		ops := rng.IntN(4)
		for op := 0; op <= ops; op++ {
			switch rng.IntN(8) {
			case 0, 1: // a machine's status changes
				k := rng.IntN(next.Machines.Len())
				next.Machines = withChanged(next.Machines, k, func(m *model.Machine) {
					m.Phase = []string{"Running", "Provisioned", "Deleting", "Failed"}[rng.IntN(4)]
					if rng.IntN(3) == 0 {
						m.Version = []string{oldK8s, newK8s}[rng.IntN(2)]
					}
				})
			case 2: // a node's readiness flips
				k := rng.IntN(next.Nodes.Len())
				next.Nodes = withChanged(next.Nodes, k, func(n *model.Node) { n.Ready = !n.Ready })
			case 3: // a machine goes away (its node stays, orphaned)
				if next.Machines.Len() > 10 {
					k := rng.IntN(next.Machines.Len())
					next.Machines = model.ListOf(slices.Delete(next.Machines.Slice(), k, k+1)...)
				}
			case 4: // a machine is created
				k := rng.IntN(next.Machines.Len())
				m := *next.Machines.At(k)
				m.Name = fmt.Sprintf("%s-new%d", m.Name, round)
				m.NodeName = ""
				m.Phase = "Provisioning"
				next.Machines = model.ListOf(slices.Insert(next.Machines.Slice(), k+1, &m)...)
			case 5: // an in-place upgrade starts or moves on
				k := rng.IntN(next.Machines.Len())
				nu := &model.NodeUpgrade{Meta: model.Meta{Name: fmt.Sprintf("nu-%d", round)}, Kind: model.KindNodeUpgrade,
					MachineName: next.Machines.At(k).Name, KubernetesVersion: newK8s, Completed: rng.IntN(2) == 0,
					// Its pod made: the next step's is its pod's first container.
					Conditions: model.Conditions{{Type: model.NodeUpgradeSteps[0], Status: "True"}}}
				next.NodeUpgrades = model.ListOf(append(next.NodeUpgrades.Slice(), nu)...)
			case 6: // the target moves
				next.MachineDeployments = slices.Clone(next.MachineDeployments)
				k := rng.IntN(len(next.MachineDeployments))
				next.MachineDeployments[k].Version = []string{oldK8s, newK8s}[rng.IntN(2)]
			case 7: // the upgrader pod of a node upgrading in place comes, fails or goes
				var node string
				for _, nu := range next.NodeUpgrades.All() {
					if !nu.Completed && rng.IntN(2) == 0 {
						node = nu.MachineName // the fixture's nodes are named for their machines
					}
				}
				if node == "" {
					continue
				}
				pods := slices.DeleteFunc(slices.Clone(next.UpgraderPods), func(p model.UpgraderPod) bool { return p.NodeName == node })
				if rng.IntN(3) != 0 {
					// Its first step failed (the NodeUpgrade has no
					// condition yet: the row's step is the first).
					pod := model.UpgraderPod{Meta: model.Meta{Name: node + "-node-upgrader", Namespace: "eksa-system"}, NodeName: node, Phase: "Pending",
						Containers: []model.UpgraderContainer{{Name: "components-copier", Init: true, RestartCount: 2,
							State: model.ContainerState{Waiting: true, Reason: "CrashLoopBackOff"},
							Last:  &model.ContainerState{Terminated: true, ExitCode: 1, Reason: "Error"}}}}
					if rng.IntN(2) == 0 {
						pod.Containers = nil // not started yet
					}
					pods = append(pods, pod)
				}
				next.UpgraderPods = pods
			}
		}
		var stalled stallSet
		if rng.IntN(5) == 0 {
			m := next.Machines.At(rng.IntN(next.Machines.Len()))
			stalled = newStallSet([]model.Stall{{Kind: model.KindMachine, Name: m.Name}})
		}
		got := slices.Clone(j.join(st, &next, stalled))
		want := buildNodeRows(st, &next, stalled)
		if len(got) != len(want) {
			t.Fatalf("round %d: %d rows, want %d", round, len(got), len(want))
		}
		for i := range want {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("round %d: row %d = %+v\nwant %+v", round, i, got[i], want[i])
			}
		}
		s = &next
	}
}

// TestRowJoinKeepsUnchangedRows checks that the join does not rebuild rows
// whose inputs are the same objects: the point of it at fleet scale.
func TestRowJoinKeepsUnchangedRows(t *testing.T) {
	th := themes.NewDark()
	st := newStyles(&th)
	s := fixtureLarge(100)
	var j rowJoin
	j.join(st, s, stallSet{})
	next := *s
	next.Machines = withChanged(s.Machines, s.Machines.Len()-1, func(m *model.Machine) { m.Phase = "Failed" })
	before := slices.Clone(j.src)
	rows := j.join(st, &next, stallSet{})
	changed := 0
	for i := range before {
		if before[i] != j.src[i] {
			changed++
		}
	}
	if changed != 1 {
		t.Errorf("%d rows rebuilt for one changed machine, want 1", changed)
	}
	if r := rows[len(rows)-1]; r.mark.r != rSevError {
		t.Errorf("the changed row was not rebuilt: %+v", r)
	}
}

// A retried in-place upgrade leaves the failed NodeUpgrade beside the new
// one; the row must show the newest (as progress does), whatever their
// names' order.
func TestRowShowsTheNewestNodeUpgrade(t *testing.T) {
	th := themes.NewDark()
	st := newStyles(&th)
	s := fixtureLarge(100)
	m := s.Machines.At(s.Machines.Len() - 1)
	failed := model.Conditions{{Type: model.NodeUpgradeSteps[0], Status: "False", Severity: model.SeverityError, Reason: "Container exited with a non-zero exit code"}}
	s.NodeUpgrades = model.ListOf(
		&model.NodeUpgrade{Meta: model.Meta{Name: "a-retry", CreationTimestamp: t0}, Kind: model.KindNodeUpgrade, MachineName: m.Name, KubernetesVersion: newK8s, Completed: true},
		&model.NodeUpgrade{Meta: model.Meta{Name: "b-original", CreationTimestamp: t0.Add(-time.Hour)}, Kind: model.KindNodeUpgrade, MachineName: m.Name, KubernetesVersion: newK8s, Conditions: failed},
	)
	for _, r := range buildNodeRows(st, s, stallSet{}) {
		if r.name == m.NodeName && (r.stepFailed || r.stepText != "done") {
			t.Fatalf("row shows the older, failed NodeUpgrade: %+v", r)
		}
	}
}

// TestNodesPaneCopiesUnchangedRows drives one nodes pane through snapshots,
// scrolling, focus, width and clock changes, and compares every render with
// a fresh pane's: a row line copied from the last render must be exactly the
// line drawing it again gives. It also checks that an unchanged row is
// copied, not drawn.
func TestNodesPaneCopiesUnchangedRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	th := themes.NewDark()
	st := newStyles(&th)
	s := fixtureLarge(300)
	now := t0
	w, h := 160, 40
	var p nodesPane
	p.expand = true
	for round := 0; round < 300; round++ {
		next := *s
		next.Version++
		switch rng.IntN(6) {
		case 0, 1: // a visible machine's status changes
			k := rng.IntN(min(next.Machines.Len(), 60))
			next.Machines = withChanged(next.Machines, k, func(m *model.Machine) {
				m.Phase = []string{"Running", "Provisioned", "Deleting", "Failed"}[rng.IntN(4)]
			})
		case 2: // a machine is created near the top: the rows below move
			k := rng.IntN(min(next.Machines.Len(), 30))
			m := *next.Machines.At(k)
			m.Name = fmt.Sprintf("%s-new%d", m.Name, round)
			m.NodeName, m.Phase = "", "Provisioning"
			next.Machines = model.ListOf(slices.Insert(next.Machines.Slice(), k+1, &m)...)
		case 3: // the clock moves
			now = now.Add(time.Duration(rng.IntN(3)) * time.Second)
		case 4: // the operator scrolls
			p.cursor = max(0, p.cursor+rng.IntN(21)-10)
		case 5: // the terminal is resized
			w = []int{80, 120, 160, 200}[rng.IntN(4)]
		}
		focused := rng.IntN(4) != 0
		p.set(st, &next, stallSet{})
		got := p.view(st, w, h, focused, now)

		fresh := nodesPane{expand: true}
		fresh.set(st, &next, stallSet{})
		fresh.cursor, fresh.offset = p.cursor, p.offset
		if want := fresh.view(st, w, h, focused, now); got != want {
			t.Fatalf("round %d: the pane differs from a fresh render\n got: %q\nwant: %q", round, got, want)
		}
		s = &next
	}

	// One machine changed, nothing else: one row drawn, the rest copied.
	p.view(st, w, h, true, now)
	next := *s
	k := -1
	for i, m := range s.Machines.All() {
		if m.Name == p.rows[p.offset+2].name {
			k = i
		}
	}
	if k < 0 {
		t.Fatalf("no machine for visible row %q", p.rows[p.offset+2].name)
	}
	next.Machines = withChanged(s.Machines, k, func(m *model.Machine) { m.Phase = "Failed" })
	p.set(st, &next, stallSet{})
	p.view(st, w, h, true, now)
	if p.redrawn != 1 {
		t.Errorf("%d rows drawn for one changed machine, want 1", p.redrawn)
	}
}

// fixtureMidWorkers is a rolling upgrade in its workers phase: the
// MachineDeployment has the new version; some workers are replaced, some
// still run the old one, one new machine is provisioning, one old one is
// leaving, and one new machine's node is ready while its Machine is not
// (the model reads the Machine's Ready condition first).
func fixtureMidWorkers() *model.ClusterState {
	s := fixtureHealthy()
	s.Version = 11
	ms := s.Machines.Slice()
	ns := s.Nodes.Slice()
	for i, m := range ms {
		if m.Role != model.RoleWorker {
			continue
		}
		k := i - 6 // the workers follow 3 etcd and 3 control-plane machines
		switch {
		case k < 5: // not replaced yet
			m.Version = oldK8s
			ns[i-3].KubeletVersion = oldK8s
		case k == 5:
			m.Version, m.Phase = oldK8s, "Deleting"
			m.DeletionTimestamp = ago(time.Minute)
		case k == 6:
			m.Phase = "Provisioning"
			ns[i-3].Ready = false
		case k == 7:
			m.Conditions = model.Conditions{cond(model.ConditionReady, "False", model.SeverityInfo, "NodeStartupTimeout", "", ago(time.Minute))}
		}
	}
	s.Machines, s.Nodes = model.ListOf(ms...), model.ListOf(ns...)
	return s
}

// TestNodesPaneUpToDateIsTheModels: a row is ✓ and counted in the title
// exactly when the model calls its machine up to date, so the title's count
// is the control plane's and the workers' phase counts. The pane used to
// compare a machine's version with its owner's spec, which before the
// workers phase is still the old one: "15 up to date" in the middle of etcd.
func TestNodesPaneUpToDateIsTheModels(t *testing.T) {
	th := themes.NewMono()
	st := newStyles(&th)
	for _, tc := range []struct {
		name  string
		state func() *model.ClusterState
	}{
		{"mid-etcd", fixtureMidEtcd},
		{"inplace-failed", fixtureInPlaceFailed},
		{"mid-workers", fixtureMidWorkers},
		{"paused-after-rollback", fixturePausedAfterRollback},
		{"healthy", fixtureHealthy},
		{"large", func() *model.ClusterState { return fixtureLarge(500) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.state()
			prog := model.DeriveProgress(s, model.ProgressOptions{}, t0)
			want := 0
			for _, ph := range prog.Phases {
				if ph.Phase == model.PhaseControlPlane || ph.Phase == model.PhaseWorkers {
					want += ph.Done
				}
			}
			p := nodesPane{expand: true}
			p.set(st, s, stallSet{})
			got := 0
			for _, r := range p.all {
				if r.settled {
					got++
				}
				if r.settled != (r.fold == foldUpToDate) || (r.settled && r.mark.text != th.Sym.OK) {
					t.Errorf("row %s: settled %t, fold %d, mark %q", r.name, r.settled, r.fold, r.mark.text)
				}
			}
			if got != want {
				t.Errorf("%d rows up to date, the model counts %d", got, want)
			}
			title := segsText(p.title)
			if !strings.Contains(title, fmt.Sprintf(" · %d up to date", want)) {
				t.Errorf("title %q, want %d up to date", title, want)
			}
		})
	}
}

// TestNodesPaneWorkersBeforeTheirPhase: in the middle of the etcd phase of
// an upgrade to 1.31, nothing has moved to 1.31 and no owner has the new
// version yet: every control-plane and worker row reads "not started",
// none ✓.
func TestNodesPaneWorkersBeforeTheirPhase(t *testing.T) {
	th := themes.NewMono()
	st := newStyles(&th)
	s := fixtureMidEtcd()
	p := nodesPane{expand: true}
	p.set(st, s, stallSet{})
	for _, r := range p.all {
		if r.mark.text == th.Sym.OK || r.stepText != "not started" || r.fold != foldWaiting {
			t.Errorf("row %s (%s): mark %q, upgrade %q, fold %d; want waiting, not started", r.name, r.role, r.mark.text, r.stepText, r.fold)
		}
	}
	if title := segsText(p.title); title != "15 machines · 0 up to date" {
		t.Errorf("title %q", title)
	}
	p.expand = false
	p.regroup()
	out := ansi.Strip(p.view(st, 80, 8, false, t0))
	for _, want := range []string{"○ 3 control plane nodes not started", "○ 12 md-0 workers not started"} {
		if !strings.Contains(out, want) {
			t.Errorf("pane lacks %q:\n%s", want, out)
		}
	}
}

// TestNodesPaneKeepsTheEndOfCutNames: at 80 columns the name column cuts
// CAPI's machine names; cut at the end, two rows of one MachineSet read
// alike ("mgmt-md-1-gxmqdpw…"), so the start goes instead.
func TestNodesPaneKeepsTheEndOfCutNames(t *testing.T) {
	th := themes.NewMono()
	st := newStyles(&th)
	s := fixtureHealthy()
	names := []string{"mgmt-md-1-gxmqdpw-rrdmk", "mgmt-md-1-gxmqdpw-x7k2p"}
	var ms []*model.Machine
	var ns []*model.Node
	for _, m := range s.Machines.All() {
		if m.Role != model.RoleWorker {
			ms = append(ms, m)
		}
	}
	for _, n := range s.Nodes.All() {
		if !strings.HasPrefix(n.Name, "mgmt-md-0") {
			ns = append(ns, n)
		}
	}
	wm, wn := workers(len(names), "md-1", newK8s, ago(time.Hour))
	for i, name := range names {
		wm[i].Name, wm[i].NodeName, wn[i].Name = name, name, name
	}
	s.Machines = model.ListOf(append(ms, wm...)...)
	s.Nodes = model.ListOf(append(ns, wn...)...)
	s.MachineDeployments = []model.MachineDeployment{md("mgmt-md-1", newK8s, 2)}

	p := nodesPane{expand: true}
	p.set(st, s, stallSet{})
	out := ansi.Strip(p.view(st, 80, 12, false, t0))
	lines := strings.Split(out, "\n")
	for _, name := range names {
		cut := "…" + name[len(name)-16:] + " " // the name column is 17 wide at 80
		n := 0
		for _, l := range lines {
			if strings.HasPrefix(l, " ✓ "+cut) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d rows start with %q, want 1:\n%s", n, cut, out)
		}
	}

	for _, tc := range []struct {
		s    string
		w    int
		want string
	}{
		{"mgmt-md-1-gxmqdpw-rrdmk", 14, "…gxmqdpw-rrdmk"},
		{"mgmt-md-1-gxmqdpw-rrdmk", 30, "mgmt-md-1-gxmqdpw-rrdmk       "},
		{"mgmt-md-1-gxmqdpw-rrdmk", 1, "…"},
		{"nœud-ünïcode-12345", 8, "…e-12345"},
		{"节点-名称-abcde", 9, "…称-abcde"},
		{"节点-名称-abcde", 8, "…-abcde "},
	} {
		if got := fitEnd(tc.s, tc.w); got != tc.want || ansi.StringWidth(got) != tc.w {
			t.Errorf("fitEnd(%q, %d) = %q, want %q", tc.s, tc.w, got, tc.want)
		}
	}
}

func segsText(ss []seg) string {
	var b strings.Builder
	for _, s := range ss {
		b.WriteString(s.text)
	}
	return b.String()
}

// fixtureMidControlPlane is a rolling upgrade in its control plane phase,
// as CAPI counts it: the KubeadmControlPlane's upToDateReplicas (3) counts
// a new machine still Provisioning, and an old machine whose UpToDate
// condition the machine controller has not turned False yet. By the
// model's rule one machine is up to date: the new one that runs.
func fixtureMidControlPlane() *model.ClusterState {
	s := fixtureHealthy()
	s.Version = 12
	s.ControlPlane.Replicas.UpToDate = i32(3)
	s.ControlPlane.Versions = []model.VersionCount{{Version: oldK8s, Replicas: 2}, {Version: newK8s, Replicas: 2}}
	var etcd, ws []*model.Machine
	for _, m := range s.Machines.All() {
		switch m.Role {
		case model.RoleEtcd:
			etcd = append(etcd, m)
		case model.RoleWorker:
			m := *m
			m.Version = oldK8s
			ws = append(ws, &m)
		}
	}
	old, oldNodes := cpMachines(oldK8s, ago(40*24*time.Hour), "mgmt-cp-7f9x2", "mgmt-cp-b8k4m")
	old[1].Conditions = model.Conditions{cond(model.MachineConditionUpToDate, "True", "", "UpToDate", "", ago(40*24*time.Hour))}
	running, runningNode := cpMachines(newK8s, ago(5*time.Minute), "mgmt-cp-n3w01")
	provisioning := &model.Machine{Meta: meta("mgmt-cp-n3w02", ago(time.Minute)), Role: model.RoleControlPlane, Owner: "mgmt", Owned: true,
		Version: newK8s, Phase: "Provisioning",
		Conditions: model.Conditions{cond(model.MachineConditionUpToDate, "True", "", "UpToDate", "", ago(time.Minute))}}
	cps := append(append(old, running...), provisioning)
	s.Machines = model.ListOf(append(append(etcd, cps...), ws...)...)
	var ns []*model.Node
	for _, n := range s.Nodes.All() {
		if !strings.HasPrefix(n.Name, "mgmt-cp-") {
			n := *n
			n.KubeletVersion = oldK8s
			ns = append(ns, &n)
		}
	}
	ns = append(append(ns, oldNodes...), runningNode...)
	slices.SortFunc(ns, func(a, b *model.Node) int { return strings.Compare(a.Name, b.Name) })
	s.Nodes = model.ListOf(ns...)
	s.MachineDeployments[0].Version = oldK8s
	return s
}

// TestControlPlaneTitleUpToDateIsTheModels: the CONTROL PLANE pane's title
// counts up-to-date machines by the model's rule, as the status line, the
// phase counts and the nodes table do, not by the KubeadmControlPlane's
// upToDateReplicas, which counts a machine still provisioning.
func TestControlPlaneTitleUpToDateIsTheModels(t *testing.T) {
	for _, tc := range []struct {
		name  string
		state func() *model.ClusterState
		want  string
	}{
		{"mid-control-plane", fixtureMidControlPlane, "3 desired · 1 up to date · 3 ready · 3 available"},
		// Before its phase the KCP's machines match its (old) spec, and
		// it counts all three.
		{"mid-etcd", fixtureMidEtcd, "3 desired · 0 up to date · 3 ready · 3 available"},
		{"inplace-failed", fixtureInPlaceFailed, "3 desired · 1 up to date · 3 ready · 3 available"},
		{"healthy", fixtureHealthy, "3 desired · 3 up to date · 3 ready · 3 available"},
		{"large", func() *model.ClusterState { return fixtureLarge(1000) }, "3 desired · 0 up to date · 3 ready · 3 available"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newTestDashboard(t, tc.state(), themes.Mono, 120, 40)
			title := segsText(d.cp.title)
			if !strings.Contains(title, tc.want) {
				t.Errorf("title %q, want %q", title, tc.want)
			}
			// The phase count and the nodes table's control-plane rows say
			// the same.
			done := -1
			for _, ph := range d.progress.Phases {
				if ph.Phase == model.PhaseControlPlane {
					done = ph.Done
				}
			}
			rows := 0
			for _, r := range d.nodes.all {
				if r.role == "cp" && r.settled {
					rows++
				}
			}
			if want := fmt.Sprintf(" %d up to date", done); !strings.Contains(title, want) || rows != done {
				t.Errorf("title %q, %d control-plane rows up to date; the model counts %d", title, rows, done)
			}
		})
	}
}

// TestControlPlaneTitleWithoutMachines: with no control-plane machine to
// judge (machines forbidden), the title falls back on the KCP's count, as
// the phase count does, and says whose count it is; before the control
// plane's phase, none is up to date there either.
func TestControlPlaneTitleWithoutMachines(t *testing.T) {
	for _, tc := range []struct {
		name  string
		state func() *model.ClusterState
		want  string
	}{
		{"healthy", fixtureHealthy, "3 up to date"},
		{"mid-etcd", fixtureMidEtcd, "0 up to date"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.state()
			s.Sources[model.KindMachine] = model.SourceStatus{Installed: true, Forbidden: "list machines.cluster.x-k8s.io in eksa-system"}
			s.Machines = model.List[model.Machine]{}
			d := newTestDashboard(t, s, themes.Mono, 120, 40)
			if title := segsText(d.cp.title); !strings.Contains(title, " · "+tc.want+" · ") {
				t.Errorf("title %q, want %q", title, tc.want)
			}
			for _, ph := range d.progress.Phases {
				if ph.Phase == model.PhaseControlPlane && !strings.HasPrefix(tc.want, fmt.Sprint(ph.Done)+" ") {
					t.Errorf("the phase counts %d up to date, the title %q", ph.Done, tc.want)
				}
			}
			if out := screenOf(d); !strings.Contains(out, "up to date as the KubeadmControlPlane counts it") {
				t.Errorf("the pane does not say whose count it is:\n%s", out)
			}
		})
	}
}

// TestControlPlaneUpToDateIsTheSameInWatchPlain renders the dashboard's
// CONTROL PLANE title and watch --plain's KubeadmControlPlane line from one
// snapshot: both count up to date by the model's rule. watch said CAPI's
// upToDateReplicas, so mid-rollout it read "3 up to date" (a machine still
// provisioning, an old one whose UpToDate condition lags) where the
// dashboard read 1.
func TestControlPlaneUpToDateIsTheSameInWatchPlain(t *testing.T) {
	notReady := func() *model.ClusterState {
		// On the target version, its node NotReady: not up to date.
		s := fixtureMidControlPlane()
		s.Nodes = withChanged(s.Nodes, slices.IndexFunc(s.Nodes.Slice(), func(n *model.Node) bool { return n.Name == "mgmt-cp-n3w01" }),
			func(n *model.Node) { n.Ready = false })
		return s
	}
	for _, tc := range []struct {
		name  string
		state func() *model.ClusterState
		want  string
	}{
		{"mid-control-plane", fixtureMidControlPlane, "1 up to date"},
		{"new-machine-not-ready", notReady, "0 up to date"},
		{"mid-etcd", fixtureMidEtcd, "0 up to date"},
		{"inplace-failed", fixtureInPlaceFailed, "1 up to date"},
		{"healthy", fixtureHealthy, "3 up to date"},
		{"no-machines-healthy", noMachines(fixtureHealthy), "3 up to date"},
		{"no-machines-mid-etcd", noMachines(fixtureMidEtcd), "0 up to date"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.state()
			d := newTestDashboard(t, s, themes.Mono, 120, 40)
			title := segsText(d.cp.title)
			p := model.DeriveProgress(s, model.ProgressOptions{}, t0)
			var plain string
			for _, l := range report.Changes(nil, s, nil, &p, t0) {
				if l.Subject == "KubeadmControlPlane "+s.ControlPlane.Name && strings.Contains(l.Text, " desired, ") {
					plain = l.Text
				}
			}
			if !strings.Contains(title, " · "+tc.want+" · ") || !strings.Contains(plain, ", "+tc.want+", ") {
				t.Errorf("want %q in both:\ndashboard: %q\nwatch --plain: %q", tc.want, title, plain)
			}
		})
	}
}

// Expanded or filtered, the rows of each group come in the folded view's
// order: the machines under way first, then those leaving, waiting and up
// to date. In name order, at 1,000 workers, the few in progress came after
// hundreds "to be replaced".
func TestExpandedAndFilteredRowsPutTheMovingFirst(t *testing.T) {
	all := []nodeRow{
		{name: "mgmt-cp-a", owner: "mgmt", fold: foldUpToDate},
		{name: "mgmt-cp-b", owner: "mgmt"},
		{name: "mgmt-md-0-a", owner: "mgmt-md-0", fold: foldWaiting},
		{name: "mgmt-md-0-b", owner: "mgmt-md-0", fold: foldUpToDate},
		{name: "mgmt-md-0-c", owner: "mgmt-md-0", fold: foldWaiting},
		{name: "mgmt-md-0-d", owner: "mgmt-md-0", fold: foldLeaving},
		{name: "mgmt-md-0-e", owner: "mgmt-md-0"},
		{name: "mgmt-md-0-f", owner: "mgmt-md-0"},
	}
	names := func(rows []nodeRow) string {
		var out []string
		for _, r := range rows {
			out = append(out, strings.TrimPrefix(r.name, "mgmt-"))
		}
		return strings.Join(out, " ")
	}
	if got, want := names(groupRowsInto(nil, all, true, "")), "cp-b cp-a md-0-e md-0-f md-0-d md-0-a md-0-c md-0-b"; got != want {
		t.Errorf("expanded: %s, want %s", got, want)
	}
	if got, want := names(groupRowsInto(nil, all, false, "md-0")), "md-0-e md-0-f md-0-d md-0-a md-0-c md-0-b"; got != want {
		t.Errorf("filtered: %s, want %s", got, want)
	}
	if got := names(all); got != "cp-a cp-b md-0-a md-0-b md-0-c md-0-d md-0-e md-0-f" {
		t.Errorf("the rows were reordered in place: %s", got)
	}
}

// Failed machines, then stalled ones, come before every owner's rows: at
// 2,000 workers the stalled machines of md-1 the status line named came
// after every md-0 machine still moving, off the screen.
func TestFailedAndStalledRowsComeFirst(t *testing.T) {
	all := []nodeRow{
		{name: "cp-a", owner: "mgmt", fold: foldUpToDate},
		{name: "md-0-a", owner: "md-0"},
		{name: "md-0-b", owner: "md-0", mark: seg{"⚠", rStall}},
		{name: "md-0-c", owner: "md-0", fold: foldWaiting},
		{name: "md-1-a", owner: "md-1"},
		{name: "md-1-b", owner: "md-1", mark: seg{"⚠", rStall}},
		{name: "md-1-c", owner: "md-1", mark: seg{"✗", rSevError}},
	}
	names := func(rows []nodeRow) string {
		var out []string
		for _, r := range rows {
			if r.group > 0 {
				out = append(out, fmt.Sprintf("(%d)", r.group))
				continue
			}
			out = append(out, r.name)
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		expand bool
		filter string
		want   string
	}{
		{false, "", "md-1-c md-0-b md-1-b cp-a md-0-a md-0-c md-1-a"},
		{true, "", "md-1-c md-0-b md-1-b cp-a md-0-a md-0-c md-1-a"},
		{false, "md-1", "md-1-c md-1-b md-1-a"},
	} {
		if got := names(groupRowsInto(nil, all, tc.expand, tc.filter)); got != tc.want {
			t.Errorf("expand %v, filter %q: %s, want %s", tc.expand, tc.filter, got, tc.want)
		}
	}
}

// A NodeUpgrade just created, no condition yet: its row's SINCE was the
// node's Ready time (days old on a real cluster), not the step's start.
func TestStepSinceStartsAtTheNodeUpgrade(t *testing.T) {
	readySince := t0.Add(-40 * 24 * time.Hour)
	created := t0.Add(-2 * time.Second)
	nu := &model.NodeUpgrade{Meta: model.Meta{Name: "n-node-upgrader", CreationTimestamp: created}}
	if _, text, _, since := stepProgress(nu, nil, readySince); !since.Equal(created) || text != model.NodeUpgradeSteps[0] {
		t.Errorf("since %s, step %q; want the NodeUpgrade's creation and its first step", since, text)
	}
}

// A Machine whose nodeRef CAPI has not set yet, its Node registered under the
// Machine's name: one row, not a second "node  no machine" row marked up to
// date and counted as a machine. A Node no Machine can claim is listed, and
// counted apart.
func TestNodesPaneJoinsANodeBeforeItsNodeRef(t *testing.T) {
	th := themes.NewMono()
	st := newStyles(&th)
	s := fixtureMidWorkers()
	ms := s.Machines.Slice()
	var m *model.Machine
	for _, c := range ms {
		if c.Role != model.RoleEtcd && c.NodeName != "" {
			m = c
			break
		}
	}
	machines := s.Machines.Len()
	cp := *m
	cp.NodeName = ""
	for i := range ms {
		if ms[i] == m {
			ms[i] = &cp
		}
	}
	for _, n := range s.Nodes.All() {
		if n.Name == m.NodeName {
			n.Name = cp.Name
		}
	}
	s.Nodes = model.ListOf(append(s.Nodes.Slice(), &model.Node{Meta: model.Meta{Name: "stray"}})...)
	s.Machines = model.ListOf(ms...)
	p := nodesPane{expand: true}
	p.set(st, s, stallSet{})
	var named, etcd int
	for _, r := range p.all {
		if r.name == cp.Name {
			named++
		}
	}
	for _, c := range ms {
		if c.Role == model.RoleEtcd {
			etcd++
		}
	}
	if named != 1 {
		t.Errorf("%d rows for %s, want one", named, cp.Name)
	}
	if title := segsText(p.title); !strings.HasPrefix(title, fmt.Sprintf("%d machines", machines-etcd)) || !strings.Contains(title, "1 node(s) without a machine") {
		t.Errorf("title %q, want %d machines and the stray node apart", title, machines-etcd)
	}
}

// The node columns fill the width without the name taking it all: at 200
// columns NODE was ~130 cells, ROLE and the rest far from their names.
func TestNodeColumnsKeepNamesNearTheirColumns(t *testing.T) {
	for _, w := range []int{60, 80, 120, 200, 300} {
		l := layoutNodeColumns(w)
		total := nodeMarkW
		for c := nodeCol(0); c < nodeColCount; c++ {
			if l[c] > 0 {
				total += l[c]
				if c != colName {
					total += 2
				}
			}
		}
		if total > w || (total < w && l[colName] < maxNodeNameW) {
			t.Errorf("at %d the columns take %d cells, NODE %d", w, total, l[colName])
		}
		if l[colName] > maxNodeNameW && l[colSteps] > 0 {
			t.Errorf("at %d NODE is %d cells wide, more than %d", w, l[colName], maxNodeNameW)
		}
	}
}

// TestNodesTableMarksTheFirstControlPlaneNode: the row of the first node
// upgraded in place (NodeUpgrade.FirstNodeToBeUpgraded, as watch --plain and
// the node detail name it) says "cp 1st" in the ROLE column, at 80 and 200
// columns, and a filter finds it by that word; the others say "cp". An
// earlier upgrade's NodeUpgrade, not on target, marks nothing: the table
// was not telling which machine ran `kubeadm upgrade apply`.
func TestNodesTableMarksTheFirstControlPlaneNode(t *testing.T) {
	th := themes.NewMono()
	st := newStyles(&th)
	for _, w := range []int{80, 200} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			p := nodesPane{}
			p.set(st, fixtureInPlaceFailed(), stallSet{})
			out := p.view(st, w, 8, false, t0)
			requireShape(t, out, w, 8)
			var marked []string
			for _, l := range strings.Split(ansi.Strip(out), "\n") {
				if strings.Contains(l, " cp 1st ") {
					marked = append(marked, l)
				}
			}
			if len(marked) != 1 || !strings.Contains(marked[0], "mgmt-cp-7f9x2") {
				t.Errorf("rows marked first: %q, want mgmt-cp-7f9x2's alone:\n%s", marked, ansi.Strip(out))
			}
			golden.RequireEqual(t, out)
		})
	}
	p := nodesPane{filter: "1st"}
	p.set(st, fixtureInPlaceFailed(), stallSet{})
	if len(p.rows) != 1 || p.rows[0].name != "mgmt-cp-7f9x2" {
		t.Errorf("filter 1st: %d rows, want mgmt-cp-7f9x2's", len(p.rows))
	}

	// Its NodeUpgrade an earlier upgrade's (to the version it runs now,
	// not this upgrade's target): no mark.
	s := fixtureInPlaceFailed()
	for _, nu := range s.NodeUpgrades.All() {
		if nu.FirstNodeToBeUpgraded {
			nu.KubernetesVersion = oldK8s
		}
	}
	for _, m := range s.Machines.All() {
		if m.Name == "mgmt-cp-7f9x2" {
			m.Version = oldK8s
		}
	}
	for _, n := range s.Nodes.All() {
		if n.Name == "mgmt-cp-7f9x2" {
			n.KubeletVersion = oldK8s
		}
	}
	for _, r := range buildNodeRows(st, s, stallSet{}) {
		if r.firstCP {
			t.Errorf("%s marked first by an earlier upgrade's NodeUpgrade", r.name)
		}
	}
}

// TestWorkersUpToDateIsTheSameInWatchPlain renders the dashboard's nodes
// table and watch --plain's MachineDeployment lines from one snapshot: each
// line's up to date is the rows of its MachineDeployment the table marks up
// to date, and the lines add up to the workers phase's count. watch said
// CAPI's upToDateReplicas, which counts a new machine still provisioning
// or NotReady and, before EKS-A gives the MachineDeployment the new
// version, every machine on the old one: "12 up to date" mid-etcd, where
// the dashboard read 0 of 12 nodes upgraded.
func TestWorkersUpToDateIsTheSameInWatchPlain(t *testing.T) {
	th := themes.NewMono()
	st := newStyles(&th)
	midWorkers := func() *model.ClusterState {
		// CAPI counts the new machines by spec: the one provisioning and
		// the one NotReady too.
		s := fixtureMidWorkers()
		s.MachineDeployments[0].Replicas.UpToDate = i32(7)
		return s
	}
	inPlace := func() *model.ClusterState {
		// Workers upgraded in place: one done, one in flight, the rest
		// waiting; CAPI's counter, by spec, already says all of them.
		s := fixtureHealthy()
		s.MachineDeployments[0].RolloutStrategy = "InPlace"
		ms, ns := s.Machines.Slice(), s.Nodes.Slice()
		var nus []*model.NodeUpgrade
		for i, m := range ms {
			if m.Role != model.RoleWorker {
				continue
			}
			k := i - 6
			if k > 0 {
				m.Version, ns[i-3].KubeletVersion = oldK8s, oldK8s
			}
			if k < 2 {
				nus = append(nus, &model.NodeUpgrade{Meta: meta(m.Name+"-node-upgrader", ago(5*time.Minute)), Kind: model.KindNodeUpgrade,
					MachineName: m.Name, KubernetesVersion: newK8s, Completed: k == 0})
			}
		}
		s.Machines, s.Nodes, s.NodeUpgrades = model.ListOf(ms...), model.ListOf(ns...), model.ListOf(nus...)
		return s
	}
	for _, tc := range []struct {
		name  string
		state func() *model.ClusterState
		want  int // of the workers phase, all MachineDeployments
	}{
		{"mid-workers", midWorkers, 4},
		{"mid-control-plane", fixtureMidControlPlane, 0},
		{"mid-etcd", fixtureMidEtcd, 0},
		{"inplace-workers", inPlace, 1},
		{"healthy", fixtureHealthy, 12},
		{"large", func() *model.ClusterState { return fixtureLarge(500) }, 440},
		{"no-machines-healthy", noMachines(fixtureHealthy), 12},
		{"no-machines-mid-etcd", noMachines(fixtureMidEtcd), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.state()
			p := model.DeriveProgress(s, model.ProgressOptions{}, t0)
			done := -1
			for _, ph := range p.Phases {
				if ph.Phase == model.PhaseWorkers {
					done = ph.Done
				}
			}
			if done != tc.want {
				t.Fatalf("workers phase counts %d up to date, want %d", done, tc.want)
			}
			pane := nodesPane{expand: true}
			pane.set(st, s, stallSet{})
			rows := map[string]int{}
			for _, r := range pane.all {
				if r.settled {
					rows[r.owner]++
				}
			}
			plain := map[string]string{}
			for _, l := range report.Changes(nil, s, nil, &p, t0) {
				if name, ok := strings.CutPrefix(l.Subject, "MachineDeployment "); ok && strings.Contains(l.Text, " desired, ") {
					plain[name] = l.Text
				}
			}
			sum := 0
			for _, md := range s.MachineDeployments {
				n := rows[md.Name]
				if s.Source(model.KindMachine).Forbidden != "" {
					n = tc.want / len(s.MachineDeployments)
				}
				sum += n
				if want := fmt.Sprintf(", %d up to date, ", n); !strings.Contains(plain[md.Name], want) {
					t.Errorf("%s: watch --plain %q, want %q as the nodes table counts its rows", md.Name, plain[md.Name], want)
				}
			}
			if sum != done {
				t.Errorf("the MachineDeployments' rows up to date add up to %d, the workers phase counts %d", sum, done)
			}
		})
	}
}

// noMachines is fixture f as an identity that may not list Machines sees it.
func noMachines(f func() *model.ClusterState) func() *model.ClusterState {
	return func() *model.ClusterState {
		s := f()
		s.Sources[model.KindMachine] = model.SourceStatus{Installed: true, Forbidden: "list machines.cluster.x-k8s.io in eksa-system"}
		s.Machines = model.List[model.Machine]{}
		return s
	}
}
