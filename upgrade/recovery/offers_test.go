package recovery

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

func offerState(now time.Time) *model.ClusterState {
	etcdMachine := func(name string, age time.Duration, ready bool) *model.Machine {
		return &model.Machine{Meta: model.Meta{Name: name, CreationTimestamp: now.Add(-age)}, Role: model.RoleEtcd, Owned: true, EtcdReady: ready}
	}
	return &model.ClusterState{
		Cluster: &model.EKSACluster{Meta: model.Meta{Name: "mgmt", Annotations: map[string]string{}}},
		Etcd: &model.EtcdCluster{Meta: model.Meta{Name: "mgmt-etcd", Generation: 2, Annotations: map[string]string{model.AnnotationEtcdUpgrading: "true"}},
			Replicas: 3, ObservedGeneration: 2},
		ControlPlane: &model.ControlPlane{Meta: model.Meta{Name: "mgmt", Annotations: map[string]string{model.AnnotationCAPIPaused: "true"}}},
		Machines: model.ListOf(
			etcdMachine("e-a", time.Hour, true), etcdMachine("e-b", time.Hour, true), etcdMachine("e-c", time.Hour, true),
			etcdMachine("e-new", 20*time.Minute, false),
			&model.Machine{Meta: model.Meta{Name: "cp-1"}, Role: model.RoleControlPlane, NodeName: "node-cp-1"},
		),
	}
}

// withoutNewMember is offerState's machines without the new etcd member.
func withoutNewMember(l model.List[model.Machine]) model.List[model.Machine] {
	ms := l.Slice()
	return model.ListOf(append(ms[:3], ms[4])...)
}

func actions(os []Offer) []string {
	var out []string
	for _, o := range os {
		out = append(out, o.Action)
	}
	return out
}

func TestOffers(t *testing.T) {
	now := time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC)

	s := offerState(now)
	got := Offers(s, now, 15*time.Minute, "")
	if len(got) != 1 || got[0].Action != ActionEtcdRollback {
		t.Fatalf("stuck first member: offers %v, want only the rollback (the KCP pause belongs to the live rollout)", actions(got))
	}

	if got := Offers(s, now, 30*time.Minute, ""); len(got) != 0 {
		t.Errorf("before the threshold: %v", actions(got))
	}
	// The dashboard's cheap question agrees with the menu.
	if m, due := EtcdRollbackMember(s, now, 15*time.Minute); m == nil || m.Name != "e-new" || !due {
		t.Errorf("past the threshold: member %v, due %v", m, due)
	}
	if m, due := EtcdRollbackMember(s, now, 30*time.Minute); m == nil || due {
		t.Errorf("before the threshold: member %v, due %v", m, due)
	}

	s = offerState(now)
	s.Machines.At(0).Owned = false
	if got := Offers(s, now, 15*time.Minute, ""); len(got) != 0 {
		t.Errorf("an old member released: %v, want no rollback", actions(got))
	}

	s = offerState(now)
	s.Machines = withoutNewMember(s.Machines) // the new member is gone
	s.Etcd.Ready = true
	s.Cluster.Annotations[model.AnnotationEKSAPaused] = "true"
	s.NodeUpgrades = model.ListOf(&model.NodeUpgrade{Meta: model.Meta{Name: "cp-1-node-upgrader"}, MachineName: "cp-1",
		Conditions: model.Conditions{{Type: "BinariesCopied", Status: "True"},
			{Type: "KubeadmUpgraded", Status: "False", Severity: model.SeverityError, Reason: "Container exited with a non-zero exit code, reason: Error"}}})
	got = Offers(s, now, 15*time.Minute, "")
	if want := []string{ActionNodeRetry, ActionLockClear}; len(got) != 2 || got[0].Action != want[0] || got[1].Action != want[1] {
		t.Fatalf("offers = %v, want %v", actions(got), want)
	}
	if got[0].Node != "node-cp-1" {
		t.Errorf("retry node = %q, want the machine's node", got[0].Node)
	}
	if got[1].Why != "stale: etcd-upgrading, kcp-paused, paused" {
		t.Errorf("lock offer = %q", got[1].Why)
	}

	if Offers(&model.ClusterState{}, now, 0, "") != nil {
		t.Error("offers without a cluster")
	}

	// Another console's live lock: its upgrade, or its rollback, runs;
	// the plan refuses a rollback (no-live-lock), and the menu offered it.
	s = offerState(now)
	s.Lock = &model.Lock{HolderIdentity: "bob@laptop/2", Duration: time.Minute, RenewTime: now.Add(-5 * time.Second)}
	if got := Offers(s, now, 15*time.Minute, ""); len(got) != 0 {
		t.Errorf("under another console's live lock: offers %v, want none", actions(got))
	}
	s.Lock.RenewTime = now.Add(-2 * time.Minute) // stale
	if got := Offers(s, now, 15*time.Minute, ""); len(got) == 0 || got[0].Action != ActionEtcdRollback {
		t.Errorf("under a stale lock: offers %v, want the rollback first (it takes the lock over)", actions(got))
	}

	// A new member made in the second of the old ones (a cluster made and
	// upgraded at once): creation times are whole seconds, and the one
	// named last was taken for the new member, ready or not.
	s = offerState(now)
	for i := range 3 {
		s.Machines.At(i).CreationTimestamp = s.Machines.At(3).CreationTimestamp
	}
	s.Machines.At(2).Name = "e-z"
	if m, due := EtcdRollbackMember(s, now, 15*time.Minute); m == nil || m.Name != "e-new" || !due {
		t.Errorf("a member made in the second of the old ones: member %v, due %v", m, due)
	}

	// The CRD sets no minimum on replicas: -1 with no etcd Machine seen
	// (forbidden, or not made yet) indexed an empty list.
	s = offerState(now)
	s.Etcd.Replicas = -1
	s.Machines = model.ListOf(s.Machines.At(4))
	if got := Offers(s, now, 15*time.Minute, ""); len(got) != 0 {
		t.Errorf("replicas -1, no etcd machine: %v", actions(got))
	}
}

// An interrupted rollback, its new machine deleted and etcd ready again:
// the menu offered only the pause it keeps, whose clearing it refuses. It
// offers to finish the rollback, unless another console holds a live lock
// (that console is running it).
func TestOffersFinishAnInterruptedRollback(t *testing.T) {
	now := time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC)
	s := offerState(now)
	s.Machines = withoutNewMember(s.Machines)
	s.Etcd.Ready = true
	s.Cluster.Annotations[model.AnnotationEKSAPaused] = "true"
	s.Cluster.Annotations[model.AnnotationEtcdRollbackRecord] = `{"phase":"running","newMachine":"e-new","by":"ops@bastion","startedAt":"2026-11-21T22:58:00Z"}`
	got := Offers(s, now, 15*time.Minute, "")
	if len(got) == 0 || got[0].Action != ActionEtcdRollback || got[0].Title != "Finish the etcd rollback" || !strings.Contains(got[0].Why, "ops@bastion started 2m ago") {
		t.Fatalf("offers = %+v, want the rollback's finish first", got)
	}
	if !(&Offerer{}).Any(s, now) {
		t.Error("Offerer.Any disagrees: R would not be listed")
	}
	// The pause, the KCP's pause and etcd's upgrading mark are the
	// unfinished rollback's: offered for clearing, they were refused as
	// live (and the menu called paused kept by a finished rollback). The
	// lease of the console that was killed running it, stale, is taken
	// over by the finish: not offered apart either.
	s.Lock = &model.Lock{HolderIdentity: "ops@bastion/1", RenewTime: now.Add(-5 * time.Minute), Duration: time.Minute}
	got = Offers(s, now, 15*time.Minute, "")
	if len(got) == 0 || got[0].Action != ActionEtcdRollback {
		t.Errorf("offers under a stale lease = %+v, want the finish first", got)
	}
	for _, o := range got {
		if o.Action == ActionLockClear {
			t.Errorf("markers offered while the rollback is not finished: %+v", o)
		}
	}
	s.Cluster.Annotations[model.AnnotationEtcdRollbackRecord] = `{"phase":"done","newMachine":"e-new"}`
	for _, o := range Offers(s, now, 15*time.Minute, "") {
		if o.Action == ActionEtcdRollback {
			t.Errorf("a finished rollback offered again: %+v", o)
		}
	}
	s.Cluster.Annotations[model.AnnotationEtcdRollbackRecord] = `{"phase":"running","newMachine":"e-new"}`
	s.Lock = &model.Lock{HolderIdentity: "alice@laptop/1", RenewTime: now, Duration: time.Minute}
	for _, o := range Offers(s, now, 15*time.Minute, "") {
		if o.Action == ActionEtcdRollback {
			t.Errorf("offered under another console's live lock: %+v", o)
		}
	}
}

// TestOffersStaleLease: the upgrade lock Lease in the snapshot is offered for
// clearing when its holder stopped renewing it, on its own or with the
// other markers; a live or released lease is not.
func TestOffersStaleLease(t *testing.T) {
	now := time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC)
	quiet := func(l *model.Lock) *model.ClusterState {
		return &model.ClusterState{Cluster: &model.EKSACluster{Meta: model.Meta{Name: "mgmt"}}, Lock: l}
	}
	stale := &model.Lock{Namespace: "eksa-system", Name: "upgrade-console-mgmt", HolderIdentity: "ops@bastion-1/5d0c9e1a",
		AcquireTime: now.Add(-3*time.Hour - 20*time.Minute), RenewTime: now.Add(-3 * time.Hour), Duration: time.Minute}

	got := Offers(quiet(stale), now, 0, "")
	if len(got) != 1 || got[0].Action != ActionLockClear || strings.Join(got[0].Markers, ",") != MarkerLease {
		t.Fatalf("stale lease alone: %+v", got)
	}
	if want := "stale upgrade lock: held by ops@bastion-1 (console 5d0c9e1a) since 2026-11-21T19:40:00Z (3h20m ago); stale: its renewTime is 3h0m old by this machine's clock"; got[0].Why != want {
		t.Errorf("why = %q\nwant %q", got[0].Why, want)
	}

	live := *stale
	live.RenewTime = now.Add(-10 * time.Second)
	released := *stale
	released.HolderIdentity = ""
	for name, l := range map[string]*model.Lock{"live": &live, "released": &released, "none": nil} {
		if got := Offers(quiet(l), now, 0, ""); len(got) != 0 {
			t.Errorf("%s lease offered: %+v", name, got)
		}
	}

	s := quiet(stale)
	s.Cluster.Annotations = map[string]string{model.AnnotationEKSAPaused: "true"}
	got = Offers(s, now, 0, "")
	if len(got) != 1 || strings.Join(got[0].Markers, ",") != "lease,paused" || got[0].Why != "stale: lease, paused" {
		t.Errorf("stale lease and paused: %+v", got)
	}
}

func TestWithStaleLease(t *testing.T) {
	w := newWorld(t)
	w.now = time.Now()
	if got, err := WithStaleLease(w.ctx, w.env, nil, nil); err != nil || len(got) != 0 {
		t.Fatalf("no lease: %v %v", got, err)
	}
	w.lease("bob@laptop/1", w.now.Add(-time.Hour))
	got, err := WithStaleLease(w.ctx, w.env, []Offer{{Action: ActionNodeRetry}}, nil)
	if err != nil || len(got) != 2 || got[1].Action != ActionLockClear || got[1].Markers[0] != MarkerLease {
		t.Fatalf("stale lease: %+v %v", got, err)
	}
	got, _ = WithStaleLease(w.ctx, w.env, []Offer{{Action: ActionLockClear, Markers: []string{MarkerPaused}, Why: "stale: paused"}}, nil)
	if len(got) != 1 || strings.Join(got[0].Markers, ",") != "lease,paused" {
		t.Errorf("merged offer: %+v", got)
	}
	// The snapshot saw the stale lease too: it is offered once.
	seen := []Offer{{Action: ActionLockClear, Markers: []string{MarkerLease, MarkerPaused}, Why: "stale: lease, paused"}}
	got, _ = WithStaleLease(w.ctx, w.env, seen, nil)
	if len(got) != 1 || strings.Join(got[0].Markers, ",") != "lease,paused" || got[0].Why != "stale: lease, paused" {
		t.Errorf("lease seen by the snapshot and read live: %+v", got)
	}
	w.now = w.now.Add(-time.Hour) // the lease was renewed "now": live
	if got, _ := WithStaleLease(w.ctx, w.env, nil, nil); len(got) != 0 {
		t.Errorf("live lease offered: %+v", got)
	}
	// The snapshot is older than the renewal: the live read wins.
	got, _ = WithStaleLease(w.ctx, w.env, seen, nil)
	if len(got) != 1 || strings.Join(got[0].Markers, ",") != MarkerPaused || got[0].Why != "stale: paused" {
		t.Errorf("renewed lease still offered: %+v", got)
	}
	onlyLease := []Offer{{Action: ActionNodeRetry}, {Action: ActionLockClear, Markers: []string{MarkerLease}}}
	if got, _ := WithStaleLease(w.ctx, w.env, onlyLease, nil); len(got) != 1 || got[0].Action != ActionNodeRetry {
		t.Errorf("renewed lease alone still offered: %+v", got)
	}
}

// A Lease with no write time (managedFields cleared) has none for the API server's
// clock; its renewTime is its holder's clock. With that clock 3 minutes
// behind, the dashboard's watch saw it renewed seconds ago, and R read it
// again and offered to clear it by its renewTime alone. The same renewal
// keeps the watch's judgement, and so does the plan the offer leads to.
// The other way round (clock ahead, no renewal seen for two minutes), it
// is offered and planned stale, where the plan called it live.
func TestWithStaleLeaseKeepsTheWatchsJudgementOfTheSameRenewal(t *testing.T) {
	w := newWorld(t)
	w.now = time.Now()
	w.seedEtcdRollout(true) // the Cluster the markers are read from
	leases := w.client.Kube.CoordinationV1().Leases(w.sys)
	watchedAs := func(seen time.Time) *model.Lock {
		t.Helper()
		st, err := upgrade.ReadLock(w.ctx, w.client.Kube, w.sys, w.cluster)
		if err != nil {
			t.Fatal(err)
		}
		l := st.Lock // as the watchers translate the same Lease
		l.Seen, l.Arrived = seen, true
		return &l
	}
	leaseState := func(watched *model.Lock) MarkerState {
		t.Helper()
		ms, err := ListMarkers(w.ctx, w.env, MarkerOptions{Watched: watched})
		if err != nil {
			t.Fatal(err)
		}
		return ms[0].State
	}

	w.lease("bob@bastion-2/0a1b", w.now.Add(-3*time.Minute))
	renewing := watchedAs(w.now.Add(-5 * time.Second))
	if got, _ := WithStaleLease(w.ctx, w.env, nil, nil); len(got) != 1 || leaseState(nil) != MarkerStale {
		t.Fatalf("by its renewTime alone the lease is not stale: %+v", got)
	}
	if got, _ := WithStaleLease(w.ctx, w.env, nil, renewing); len(got) != 0 {
		t.Errorf("a lease the watch saw renewed 5s ago is offered: %+v", got)
	}
	if got := leaseState(renewing); got != MarkerLive {
		t.Errorf("planned with the watch's view, a lease seen renewed 5s ago is %s", got)
	}

	if err := leases.Delete(w.ctx, upgrade.LockName(w.cluster), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.lease("bob@bastion-2/0a1b", w.now.Add(3*time.Minute))
	stopped := watchedAs(w.now.Add(-2 * time.Minute))
	got, _ := WithStaleLease(w.ctx, w.env, nil, stopped)
	if len(got) != 1 || got[0].Watched != stopped || !strings.Contains(got[0].Why, "no renewal seen for 2m0s by this machine's clock") {
		t.Errorf("a lease the watch saw no renewal of for 2m, renewTime ahead: %+v", got)
	}
	if got := leaseState(stopped); got != MarkerStale {
		t.Errorf("planned with the watch's view, a lease not renewed for 2m is %s", got)
	}
	if got := leaseState(nil); got != MarkerLive {
		t.Errorf("by its renewTime alone, a renewTime 3m ahead is %s", got)
	}
}

// TestOffererAgreesWithOffers runs one Offerer through a sequence of states
// (new lists as the watchers publish them, and lists kept) and checks that
// it says "something to offer" exactly when Offers offers something.
func TestOffererAgreesWithOffers(t *testing.T) {
	now := time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC)
	failedNU := &model.NodeUpgrade{Meta: model.Meta{Name: "cp-1-node-upgrader"}, MachineName: "cp-1",
		Conditions: model.Conditions{{Type: "KubeadmUpgraded", Status: "False", Severity: model.SeverityError, Reason: "Container exited with a non-zero exit code"}}}
	quiet := func() *model.ClusterState {
		s := offerState(now)
		s.Machines = withoutNewMember(s.Machines)
		s.Etcd.Ready, s.Etcd.Annotations = true, nil
		s.ControlPlane.Annotations = nil
		return s
	}
	steps := []struct {
		name   string
		change func(prev *model.ClusterState) *model.ClusterState
	}{
		{"stuck etcd member", func(*model.ClusterState) *model.ClusterState { return offerState(now) }},
		{"quiet", func(*model.ClusterState) *model.ClusterState { return quiet() }},
		{"same lists, cluster paused", func(p *model.ClusterState) *model.ClusterState {
			s := *p
			c := *p.Cluster
			c.Annotations = map[string]string{model.AnnotationEKSAPaused: "true"}
			s.Cluster = &c
			return &s
		}},
		{"same lists, unpaused", func(p *model.ClusterState) *model.ClusterState {
			s := *p
			c := *p.Cluster
			c.Annotations = nil
			s.Cluster = &c
			return &s
		}},
		{"a node upgrade fails", func(p *model.ClusterState) *model.ClusterState {
			s := *p
			s.NodeUpgrades = model.ListOf(failedNU)
			return &s
		}},
		{"same lists again", func(p *model.ClusterState) *model.ClusterState { s := *p; return &s }},
		{"it completes", func(p *model.ClusterState) *model.ClusterState {
			s := *p
			done := *failedNU
			done.Completed = true
			s.NodeUpgrades = model.ListOf(&done)
			return &s
		}},
		{"a node keeps the upgrade label", func(p *model.ClusterState) *model.ClusterState {
			s := *p
			s.Nodes = model.ListOf(&model.Node{Meta: model.Meta{Name: "n1", Labels: map[string]string{model.LabelUpgradeInProgress: "true"}}})
			return &s
		}},
		{"the label is gone", func(p *model.ClusterState) *model.ClusterState {
			s := *p
			s.Nodes = model.ListOf(&model.Node{Meta: model.Meta{Name: "n1"}})
			return &s
		}},
		{"a stale lease, same lists", func(p *model.ClusterState) *model.ClusterState {
			s := *p
			s.Lock = &model.Lock{HolderIdentity: "ops@bastion-1/1", AcquireTime: now.Add(-time.Hour), Duration: time.Minute}
			return &s
		}},
		{"the lease renewed", func(p *model.ClusterState) *model.ClusterState {
			s := *p
			s.Lock = &model.Lock{HolderIdentity: "ops@bastion-1/1", AcquireTime: now.Add(-time.Hour), RenewTime: now, Duration: time.Minute}
			return &s
		}},
		// Under another console's live lock the markers are its upgrade at
		// work: none is offered, and R, listed, opened nothing.
		{"paused under the live lease", func(p *model.ClusterState) *model.ClusterState {
			s := *p
			c := *p.Cluster
			c.Annotations = map[string]string{model.AnnotationEKSAPaused: "true"}
			s.Cluster = &c
			return &s
		}},
		{"a node label under the live lease", func(p *model.ClusterState) *model.ClusterState {
			s := *p
			s.Nodes = model.ListOf(&model.Node{Meta: model.Meta{Name: "n1", Labels: map[string]string{model.LabelUpgradeInProgress: "true"}}})
			return &s
		}},
		{"the lease gone, paused by the EKS-A CLI", func(p *model.ClusterState) *model.ClusterState {
			s := *p
			s.Lock = nil
			s.Nodes = model.ListOf(&model.Node{Meta: model.Meta{Name: "n1"}})
			c := *p.Cluster
			c.Annotations = map[string]string{model.AnnotationEKSAPaused: "true", model.AnnotationManagedByCLI: "true"}
			s.Cluster = &c
			return &s
		}},
	}
	var o Offerer
	o.Threshold = 15 * time.Minute
	var s *model.ClusterState
	for _, st := range steps {
		s = st.change(s)
		want := len(Offers(s, now, o.Threshold, "")) > 0
		if got := o.Any(s, now); got != want {
			t.Errorf("%s: Any = %t, Offers offers %v", st.name, got, actions(Offers(s, now, o.Threshold, "")))
		}
	}
}

// A kept lease is an offer of its own, never folded into the markers' (after
// an etcd rollback, clearing paused as the status line says also cleared
// the console's kept lock, and the resumed upgrade ran with none); a stale
// one left by a dead console still goes with them. Under another console's
// live lock no marker is offered: each is that upgrade's, and the plan
// refuses them without --force, which the dialog has not.
func TestOffersKeepTheKeptLeaseApartAndLiveMarkersOut(t *testing.T) {
	now := time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC)
	state := func(lock *model.Lock) *model.ClusterState {
		s := offerState(now)
		s.Machines = withoutNewMember(s.Machines)
		s.Etcd.Ready = true
		s.Cluster.Annotations[model.AnnotationEKSAPaused] = "true"
		s.Nodes = model.ListOf(&model.Node{Meta: model.Meta{Name: "n1", Labels: map[string]string{model.LabelUpgradeInProgress: "true"}}})
		s.Lock = lock
		return s
	}
	lease := func(renewed time.Time, kept string) *model.Lock {
		return &model.Lock{Namespace: "eksa-system", Name: "upgrade-console-mgmt", HolderIdentity: "ops@bastion/5d0c9e1a",
			AcquireTime: renewed, RenewTime: renewed, Duration: time.Minute, Kept: kept}
	}
	markers := func(o Offer) string { return strings.Join(o.Markers, ",") }

	got := Offers(state(lease(now.Add(-time.Second), "upgrade failed: etcd rollback")), now, 15*time.Minute, "")
	if len(got) != 2 || markers(got[0]) != "etcd-upgrading,kcp-paused,node-label/n1,paused" || markers(got[1]) != MarkerLease ||
		got[1].Title != "Clear the kept upgrade lock" || !strings.HasPrefix(got[1].Why, "kept upgrade lock: ") {
		t.Errorf("kept lease: %+v", got)
	}
	// Kept by this console: said so, as the header says it.
	own := OwnKeptLease(got, lease(now.Add(-time.Second), "upgrade failed: etcd rollback"), "ops@bastion/5d0c9e1a", now)
	if want := "kept upgrade lock: this console's, taken 1s ago; kept when it stopped following: upgrade failed: etcd rollback"; own[1].Why != want || own[0].Why != got[0].Why {
		t.Errorf("own kept lease: %q, want %q", own[1].Why, want)
	}
	if other := OwnKeptLease(got, lease(now.Add(-time.Second), "upgrade failed: etcd rollback"), "alice@laptop/1", now); other[1].Why != got[1].Why {
		t.Errorf("another console's kept lease reworded: %q", other[1].Why)
	}

	got = Offers(state(lease(now.Add(-3*time.Hour), "")), now, 15*time.Minute, "")
	if len(got) != 1 || markers(got[0]) != "lease,etcd-upgrading,kcp-paused,node-label/n1,paused" || !strings.HasPrefix(got[0].Why, "stale: lease, ") {
		t.Errorf("stale lease: %+v", got)
	}

	if got := Offers(state(lease(now.Add(-5*time.Second), "")), now, 15*time.Minute, ""); len(got) != 0 {
		t.Errorf("another console's live lock: offers %+v, want none", got)
	}
}

// The Why of a markers offer is built from its markers, so adding the lease
// (withLease) and taking it out (withoutLease) keep it right, a pause the
// etcd rollback keeps included.
func TestMarkersWhy(t *testing.T) {
	const note = " (paused is kept by the etcd rollback: …)"
	for _, tc := range []struct {
		markers []string
		note    string
		want    string
	}{
		{[]string{"lease", "paused"}, "", "stale: lease, paused"},
		{[]string{"paused"}, note, "set: paused" + note},
		{[]string{"lease", "kcp-paused", "paused"}, note, "stale lease; set: kcp-paused, paused" + note},
	} {
		if got := markersWhy(tc.markers, tc.note); got != tc.want {
			t.Errorf("markersWhy(%v, %q) = %q, want %q", tc.markers, tc.note, got, tc.want)
		}
	}
	o := []Offer{{Action: ActionLockClear, Markers: []string{MarkerLease, MarkerPaused}, keptNote: note}}
	if got := withoutLease(o); len(got) != 1 || got[0].Why != "set: paused"+note {
		t.Errorf("withoutLease: %+v", got)
	}
}

// The planner's twin of the offers' case: a snapshot whose etcd spec has no
// members (replicas -1, the CRD sets no minimum) and no etcd machine seen.
func TestFreshRollbackChecksWithoutMembers(t *testing.T) {
	etcd := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"replicas": int64(-1)}}}
	fc := freshRollbackChecks(time.Now(), time.Minute, etcd, nil, nil, -1, "", time.Time{}, false)
	for _, p := range fc.pre {
		if p.Name == "single-new-member" && (p.OK || !strings.Contains(p.Detail, "no old member")) {
			t.Errorf("single-new-member: %+v", p)
		}
	}
}

// Through the kubelet's restarts the NodeUpgrade reads the failed step as
// "waiting to be initialized" (Info): the retry is offered from the
// upgrader pod's back-off, and not while the container runs again (the
// retry would kill it, and refuses to).
func TestNodeRetryOfferedFromTheUpgraderPod(t *testing.T) {
	now := time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC)
	s := offerState(now)
	s.Machines = withoutNewMember(s.Machines)
	s.Etcd.Ready = true
	s.Etcd.Annotations = map[string]string{}
	s.ControlPlane.Annotations = map[string]string{}
	s.NodeUpgrades = model.ListOf(&model.NodeUpgrade{Meta: model.Meta{Name: "cp-1-node-upgrader", CreationTimestamp: now.Add(-time.Hour)}, MachineName: "cp-1",
		Conditions: model.Conditions{{Type: "BinariesCopied", Status: "True"},
			{Type: "KubeadmUpgraded", Status: "False", Severity: model.SeverityInfo, Reason: "Container is waiting to be initialized"}}})
	if got := Offers(s, now, 15*time.Minute, ""); len(got) != 0 {
		t.Fatalf("without the pod: offers %v", actions(got))
	}
	exited := model.ContainerState{Terminated: true, ExitCode: 1, Reason: "Error"}
	s.UpgraderPods = []model.UpgraderPod{{Meta: model.Meta{Name: "node-cp-1-node-upgrader", CreationTimestamp: now.Add(-time.Hour)}, NodeName: "node-cp-1",
		Containers: []model.UpgraderContainer{{Name: "kubeadm-upgrader", Init: true,
			State: model.ContainerState{Waiting: true, Reason: "CrashLoopBackOff"}, Last: &exited, RestartCount: 2}}}}
	o := &Offerer{Threshold: 15 * time.Minute}
	got := Offers(s, now, 15*time.Minute, "")
	if len(got) != 1 || got[0].Action != ActionNodeRetry || got[0].Node != "node-cp-1" ||
		got[0].Why != "step KubeadmUpgraded failed: container kubeadm-upgrader waiting: CrashLoopBackOff after terminated: exit code 1 (Error) (2 restarts)" || !o.Any(s, now) {
		t.Fatalf("backed off: offers %+v, any %v", got, o.Any(s, now))
	}
	s.UpgraderPods = []model.UpgraderPod{s.UpgraderPods[0]}
	s.UpgraderPods[0].Containers = []model.UpgraderContainer{{Name: "kubeadm-upgrader", Init: true, State: model.ContainerState{Running: true}, Last: &exited, RestartCount: 3}}
	if got := Offers(s, now, 15*time.Minute, ""); len(got) != 0 || o.Any(s, now) {
		t.Errorf("running again: offers %v, any %v", actions(got), o.Any(s, now))
	}
}

// The Machines name the nodes whose upgrader pods say a step failed, and
// sync after the NodeUpgrades: the cached answer behind R followed them.
func TestOffererFollowsTheMachines(t *testing.T) {
	now := time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC)
	s := offerState(now)
	s.Etcd.Ready = true
	s.Etcd.Annotations = map[string]string{}
	s.ControlPlane.Annotations = map[string]string{}
	all := withoutNewMember(s.Machines)
	s.Machines = model.ListOf[model.Machine]()
	s.NodeUpgrades = model.ListOf(&model.NodeUpgrade{Meta: model.Meta{Name: "cp-1-node-upgrader", CreationTimestamp: now.Add(-time.Hour)}, MachineName: "cp-1",
		Conditions: model.Conditions{{Type: "KubeadmUpgraded", Status: "False", Severity: model.SeverityInfo, Reason: "Container is waiting to be initialized"}}})
	exited := model.ContainerState{Terminated: true, ExitCode: 1, Reason: "Error"}
	s.UpgraderPods = []model.UpgraderPod{{Meta: model.Meta{Name: "node-cp-1-node-upgrader", CreationTimestamp: now.Add(-time.Hour)}, NodeName: "node-cp-1",
		Containers: []model.UpgraderContainer{{Name: "kubeadm-upgrader", Init: true, State: model.ContainerState{Waiting: true, Reason: "CrashLoopBackOff"}, Last: &exited, RestartCount: 2}}}}
	o := &Offerer{Threshold: 15 * time.Minute}
	if o.Any(s, now) {
		t.Fatal("offered before the Machines name the node")
	}
	s.Machines = all
	if !o.Any(s, now) || len(Offers(s, now, 15*time.Minute, "")) != 1 {
		t.Errorf("the Machines synced: any %v, offers %v", o.Any(s, now), actions(Offers(s, now, 15*time.Minute, "")))
	}
}

// A workload cluster's upgrader pods are on its own API server: node retry
// refuses its failed steps with the command to run there, so the menu does
// not offer one (it was a dead end); the rest of the menu stays.
func TestNodeRetryNotOfferedForAClusterWhoseNodesAreElsewhere(t *testing.T) {
	now := time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC)
	s := offerState(now)
	s.Machines = withoutNewMember(s.Machines)
	s.Etcd.Ready = true
	s.Cluster.Annotations[model.AnnotationEKSAPaused] = "true"
	s.NodeUpgrades = model.ListOf(&model.NodeUpgrade{Meta: model.Meta{Name: "cp-1-node-upgrader"}, MachineName: "cp-1",
		Conditions: model.Conditions{{Type: "KubeadmUpgraded", Status: "False", Severity: model.SeverityError, Reason: "Container exited with a non-zero exit code, reason: Error"}}})
	o := &Offerer{Threshold: 15 * time.Minute}
	if got := Offers(s, now, 15*time.Minute, ""); len(got) != 2 || got[0].Action != ActionNodeRetry {
		t.Fatalf("self-managed: offers %v, want the node retry and the lock clear", actions(got))
	}
	s.Cluster.ManagementCluster = "mgmt-other"
	if got := Offers(s, now, 15*time.Minute, ""); len(got) != 1 || got[0].Action != ActionLockClear {
		t.Errorf("workload cluster: offers %v, want only the lock clear", actions(got))
	}
	// Offerer.Any, whose failed-node answer is cached by the lists, agrees.
	s.Cluster.Annotations = map[string]string{}
	s.ControlPlane.Annotations = map[string]string{}
	s.Etcd.Annotations = map[string]string{}
	if got := Offers(s, now, 15*time.Minute, ""); len(got) != 0 || o.Any(s, now) {
		t.Errorf("workload cluster, no markers: offers %v, any %v; want none", actions(got), o.Any(s, now))
	}
	s.Cluster.ManagementCluster = ""
	if !o.Any(s, now) {
		t.Error("self-managed again: Any = false, want the node retry")
	}
}
