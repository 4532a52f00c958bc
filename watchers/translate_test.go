package watchers

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/upgrade-console/upgrade-console/model"
)

func TestTranslateKCPBothVersions(t *testing.T) {
	v1beta2 := map[string]any{
		"metadata": map[string]any{"name": "mgmt", "generation": int64(3)},
		"spec":     map[string]any{"replicas": int64(3), "version": "v1.31.9", "rollout": map[string]any{"strategy": map[string]any{"type": "InPlace"}}},
		"status": map[string]any{
			"replicas": int64(4), "readyReplicas": int64(3), "upToDateReplicas": int64(1), "observedGeneration": int64(3),
			"initialization": map[string]any{"controlPlaneInitialized": true},
			"versions":       []any{map[string]any{"version": "v1.30.14", "replicas": int64(3)}, map[string]any{"version": "v1.31.9", "replicas": int64(1)}},
			"conditions":     []any{map[string]any{"type": "RollingOut", "status": "True", "reason": "RollingOut", "observedGeneration": int64(3)}},
			"deprecated":     map[string]any{"v1beta1": map[string]any{"failureMessage": "old failure"}},
		},
	}
	cp := translateKCP(v1beta2, "v1beta2").(*model.ControlPlane)
	if *cp.Replicas.Desired != 3 || *cp.Replicas.UpToDate != 1 || *cp.Replicas.Ready != 3 || cp.Replicas.Available != nil ||
		cp.RolloutStrategy != "InPlace" || !cp.Initialized || len(cp.Versions) != 2 || cp.FailureMessage != "old failure" ||
		cp.Conditions[0].ObservedGeneration != 3 {
		t.Errorf("v1beta2 KCP = %+v", cp)
	}

	v1beta1 := map[string]any{
		"metadata": map[string]any{"name": "mgmt"},
		"spec":     map[string]any{"replicas": int64(3), "version": "v1.31.9", "rolloutStrategy": map[string]any{"type": "RollingUpdate"}},
		"status": map[string]any{
			"replicas": int64(3), "updatedReplicas": int64(2), "readyReplicas": int64(3), "initialized": true,
			"conditions": []any{map[string]any{"type": "MachinesSpecUpToDate", "status": "False", "severity": "Warning", "reason": "RollingUpdateInProgress"}},
			"v1beta2": map[string]any{
				"upToDateReplicas": int64(2), "availableReplicas": int64(3),
				"conditions": []any{map[string]any{"type": "MachinesUpToDate", "status": "False", "reason": "NotUpToDate"}},
			},
		},
	}
	// The pause's write: the newest managedFields time other than status.
	v1beta1["metadata"].(map[string]any)["managedFields"] = []any{
		map[string]any{"manager": "eks-a-controller", "operation": "Update", "time": "2026-11-22T10:00:00Z"},
		map[string]any{"manager": "capi", "operation": "Update", "subresource": "status", "time": "2026-11-22T11:00:00Z"},
	}
	cp = translateKCP(v1beta1, "v1beta1").(*model.ControlPlane)
	if want := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC); !cp.ChangedAt.Equal(want) {
		t.Errorf("ChangedAt = %v, want %v (status writes do not count)", cp.ChangedAt, want)
	}
	if *cp.Replicas.UpToDate != 2 || *cp.Replicas.Available != 3 || cp.RolloutStrategy != "RollingUpdate" || !cp.Initialized {
		t.Errorf("v1beta1 KCP = %+v", cp)
	}
	// The v1beta2 conditions win over the legacy ones when both are there.
	if len(cp.Conditions) != 1 || cp.Conditions[0].Type != "MachinesUpToDate" {
		t.Errorf("v1beta1 KCP conditions = %+v", cp.Conditions)
	}
	delete(v1beta1["status"].(map[string]any), "v1beta2")
	// The pause's write: the newest managedFields time other than status.
	v1beta1["metadata"].(map[string]any)["managedFields"] = []any{
		map[string]any{"manager": "eks-a-controller", "operation": "Update", "time": "2026-11-22T10:00:00Z"},
		map[string]any{"manager": "capi", "operation": "Update", "subresource": "status", "time": "2026-11-22T11:00:00Z"},
	}
	cp = translateKCP(v1beta1, "v1beta1").(*model.ControlPlane)
	if want := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC); !cp.ChangedAt.Equal(want) {
		t.Errorf("ChangedAt = %v, want %v (status writes do not count)", cp.ChangedAt, want)
	}
	if *cp.Replicas.UpToDate != 2 || cp.Conditions[0].Severity != model.SeverityWarning {
		t.Errorf("legacy-only v1beta1 KCP = %+v", cp)
	}
}

func TestTranslateMachineRolesAndOwners(t *testing.T) {
	mk := func(labels map[string]any, owners ...any) *model.Machine {
		return translateMachine(map[string]any{
			"metadata": map[string]any{"name": "m", "labels": labels, "ownerReferences": owners,
				"annotations": map[string]any{lastAppliedAnnotation: "{…}", annotationClonedFromName: "tmpl-2"}},
			"status": map[string]any{"nodeRef": map[string]any{"name": "n"}},
		}, "v1beta2").(*model.Machine)
	}
	etcd := mk(map[string]any{model.LabelEtcdCluster: "mgmt-etcd", model.LabelEtcdReady: "true"})
	if etcd.Role != model.RoleEtcd || etcd.Owner != "mgmt-etcd" || etcd.Owned || !etcd.EtcdReady || etcd.InfrastructureTemplate != "tmpl-2" {
		t.Errorf("disowned etcd machine = %+v", etcd)
	}
	if etcd.Labels != nil || etcd.Annotations != nil {
		t.Errorf("a Machine keeps its labels %v and annotations %v: at fleet size they are megabytes nothing reads", etcd.Labels, etcd.Annotations)
	}
	md := translateMachineDeployment(map[string]any{"metadata": map[string]any{"name": "md",
		"labels":      map[string]any{"a": "b"},
		"annotations": map[string]any{lastAppliedAnnotation: "{…}", model.AnnotationMDInPlaceUpgradeNeeded: "true"}}}, "v1beta2").(*model.MachineDeployment)
	if _, ok := md.Annotations[lastAppliedAnnotation]; ok || md.Annotations[model.AnnotationMDInPlaceUpgradeNeeded] != "true" || md.Labels["a"] != "b" {
		t.Errorf("a MachineDeployment keeps labels %v and annotations %v, want its own but last-applied", md.Labels, md.Annotations)
	}
	etcd = mk(map[string]any{model.LabelEtcdCluster: "mgmt-etcd"}, map[string]any{"kind": "EtcdadmCluster", "name": "mgmt-etcd"})
	if !etcd.Owned || etcd.EtcdReady {
		t.Errorf("owned etcd machine = %+v", etcd)
	}
	cp := mk(map[string]any{model.LabelControlPlane: "", model.LabelControlPlaneName: "mgmt"})
	if cp.Role != model.RoleControlPlane || cp.Owner != "mgmt" || cp.NodeName != "n" {
		t.Errorf("cp machine = %+v", cp)
	}
	w := mk(map[string]any{}, map[string]any{"kind": "MachineSet", "name": "mgmt-md-0-abc", "controller": true})
	if w.Role != model.RoleWorker || w.Owner != "mgmt-md-0-abc" || !w.Owned {
		t.Errorf("worker without deployment label = %+v", w)
	}
}

// The spec's write, not the newest write: status writes and writes of
// metadata alone (EKS-A's management-components annotation as its phase
// ends, the console's pause) are not the spec change the upgrade began with.
func TestTranslateEKSAClusterSpecChangedAtSkipsStatusAndMetadataWrites(t *testing.T) {
	c := translateEKSACluster(map[string]any{
		"metadata": map[string]any{"name": "mgmt", "generation": int64(5), "managedFields": []any{
			map[string]any{"manager": "upgrade-console", "operation": "Apply", "time": "2026-05-04T10:00:00Z", "fieldsType": "FieldsV1",
				"fieldsV1": map[string]any{"f:spec": map[string]any{"f:kubernetesVersion": map[string]any{}}}},
			map[string]any{"manager": "eksa-controller", "operation": "Update", "subresource": "status", "time": "2026-05-04T10:05:00Z", "fieldsType": "FieldsV1",
				"fieldsV1": map[string]any{"f:status": map[string]any{}}},
			map[string]any{"manager": "eksa-controller", "operation": "Update", "time": "2026-05-04T10:00:08Z", "fieldsType": "FieldsV1",
				"fieldsV1": map[string]any{"f:metadata": map[string]any{"f:annotations": map[string]any{}}}},
		}},
		"spec": map[string]any{"clusterNetwork": map[string]any{"cniConfig": map[string]any{"cilium": map[string]any{"skipUpgrade": true}}},
			"externalEtcdConfiguration": map[string]any{"count": int64(3)}},
		"status": map[string]any{"observedGeneration": int64(4), "failureMessage": "spec invalid: x", "failureReason": "ClusterInvalid"},
	}, "").(*model.EKSACluster)
	if !c.SpecChangedAt.Equal(time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("SpecChangedAt = %s", c.SpecChangedAt)
	}
	if !c.Stale() || c.CNIManaged() || !c.CiliumManaged || c.ExternalEtcdCount != 3 || c.ControlPlaneCount != 1 || c.FailureReason != "ClusterInvalid" || c.FailureMessage != "spec invalid: x" {
		t.Errorf("cluster = %+v", c)
	}
}

func TestTranslateNodeKeepsOnlyWhatTheConsoleShows(t *testing.T) {
	n := translateNode(benchNode(7), "example.com/upgrading")
	if len(n.Labels) != 1 || n.Labels["node-role.kubernetes.io/worker"] != "" {
		t.Errorf("labels = %v", n.Labels)
	}
	if len(n.Annotations) != 3 || n.Annotations["cluster.x-k8s.io/machine"] != "mgmt-md-0-000007" {
		t.Errorf("annotations = %v", n.Annotations)
	}
	if !n.Ready || n.KubeletVersion != "v1.30.14-eks-1-30-58" || n.ReadySince.IsZero() {
		t.Errorf("node = %+v", n)
	}
}

// A node keeps only its abnormal conditions besides Ready: none while
// healthy (the fixture's pressures are all False), a pressure when True, and
// any other type when not False.
func TestTranslateNodeKeepsAbnormalConditionsOnly(t *testing.T) {
	if n := translateNode(benchNode(7), ""); n.Abnormal != nil {
		t.Errorf("healthy node holds %+v", n.Abnormal)
	}
	n := benchNode(8)
	since := metav1.NewTime(benchTime.Add(-5 * time.Minute))
	for i := range n.Status.Conditions {
		switch c := &n.Status.Conditions[i]; c.Type {
		case corev1.NodeDiskPressure:
			c.Status, c.Reason, c.Message, c.LastTransitionTime = corev1.ConditionTrue, "KubeletHasDiskPressure", "kubelet has disk pressure", since
		case corev1.NodeMemoryPressure:
			// As the node lifecycle controller leaves it when the kubelet
			// stops posting: the NotReady says so already.
			c.Status, c.Reason = corev1.ConditionUnknown, "NodeStatusUnknown"
		}
	}
	n.Status.Conditions = append(n.Status.Conditions,
		corev1.NodeCondition{Type: "KernelDeadlock", Status: corev1.ConditionUnknown, Reason: "NoFrequentReports", LastTransitionTime: since},
		corev1.NodeCondition{Type: "ReadonlyFilesystem", Status: corev1.ConditionFalse, Reason: "FilesystemIsNotReadOnly"},
		corev1.NodeCondition{Type: corev1.NodeNetworkUnavailable, Status: corev1.ConditionFalse, Reason: "CiliumIsUp"})
	want := model.Conditions{
		{Type: "DiskPressure", Status: "True", Reason: "KubeletHasDiskPressure", Message: "kubelet has disk pressure", LastTransitionTime: since.Time},
		{Type: "KernelDeadlock", Status: "Unknown", Reason: "NoFrequentReports", LastTransitionTime: since.Time},
	}
	first := translateNode(n, "")
	if !reflect.DeepEqual(first.Abnormal, want) {
		t.Errorf("abnormal conditions\n%+v\nwant\n%+v", first.Abnormal, want)
	}
	// The kubelet's next heartbeat changes nothing the console shows: no
	// new snapshot for it.
	for i := range n.Status.Conditions {
		n.Status.Conditions[i].LastHeartbeatTime = metav1.NewTime(benchTime.Add(time.Minute))
	}
	n.ResourceVersion += "1"
	if !unchanged(first, translateNode(n, "")) {
		t.Error("a heartbeat of a node under disk pressure reads as a change")
	}
}

func TestTranslateEventFiltersUnrelated(t *testing.T) {
	ev := func(kind, name string) *corev1.Event {
		return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "eksa-system", Name: "e", CreationTimestamp: metav1.NewTime(benchTime)},
			InvolvedObject: corev1.ObjectReference{Kind: kind, Name: name}, Type: "Warning", Reason: "R"}
	}
	if translateEvent(ev("Pod", "mgmt-x"), "mgmt") != nil || translateEvent(ev("Machine", "other-x"), "mgmt") != nil {
		t.Error("unrelated event kept")
	}
	// An upgrader pod's BackOff says why a step fails again.
	if translateEvent(ev("Pod", "mgmt-x2k4q-node-upgrader"), "mgmt") == nil {
		t.Error("an upgrader pod's event dropped")
	}
	e := translateEvent(ev("Machine", "mgmt-md-0-x"), "mgmt")
	if e == nil || !e.LastTimestamp.Equal(benchTime) || !e.FirstTimestamp.Equal(benchTime) {
		t.Errorf("event = %+v", e)
	}
	// The events pane keeps a line in view by the Event object it shows.
	if e != nil && (e.Namespace != "eksa-system" || e.Name != "e") {
		t.Errorf("event %s/%s, want eksa-system/e", e.Namespace, e.Name)
	}
}

func TestStoreSharesUnchangedAndPatchesUpdates(t *testing.T) {
	s := newStore(byName(func(m *model.Machine) string { return m.Name }))
	for _, n := range []string{"c", "a", "b"} {
		s.put("ns/"+n, &model.Machine{Meta: model.Meta{Name: n}})
	}
	firstL := s.list()
	first := firstL.Slice()
	if len(first) != 3 || first[0].Name != "a" || first[2].Name != "c" {
		t.Fatalf("sorted = %v", first)
	}
	if again := s.list(); !again.Same(firstL) {
		t.Error("unchanged store rebuilt its list")
	}
	epoch := s.epoch
	s.put("ns/b", &model.Machine{Meta: model.Meta{Name: "b"}, Phase: "Running"})
	patchedL := s.list()
	patched := patchedL.Slice()
	if patchedL.Same(firstL) || patched[1].Phase != "Running" || firstL.At(1).Phase != "" || s.epoch != epoch {
		t.Errorf("update: patched=%v first=%v epoch %d→%d", patched, first, epoch, s.epoch)
	}
	s.remove("ns/a")
	s.put("ns/0", &model.Machine{Meta: model.Meta{Name: "0"}})
	rebuilt := s.list().Slice()
	if len(rebuilt) != 3 || rebuilt[0].Name != "0" || rebuilt[1].Name != "b" || s.epoch == epoch {
		t.Errorf("structural change: %v", rebuilt)
	}
	// A patch after a rebuild lands at the right index.
	s.put("ns/c", &model.Machine{Meta: model.Meta{Name: "c"}, Phase: "Deleting"})
	if got := s.list(); got.At(2).Phase != "Deleting" {
		t.Errorf("patch after rebuild: %v", got.Slice())
	}
}

func TestFilterKeepsSliceWhenAllKept(t *testing.T) {
	l := []int{1, 2, 3}
	if got := filter(l, func(int) bool { return true }); !same(got, l) {
		t.Error("copied although everything was kept")
	}
	if got := filter(l, func(v int) bool { return v != 2 }); len(got) != 2 || got[1] != 3 {
		t.Errorf("filtered = %v", got)
	}
}

func TestFilterListKeepsListWhenAllKept(t *testing.T) {
	var items []*int
	for i := range 600 {
		v := i
		items = append(items, &v)
	}
	l := model.ListOf(items...)
	if got := filterList(l, func(*int) bool { return true }); !got.Same(l) {
		t.Error("copied although everything was kept")
	}
	for _, drop := range []int{0, 299, 599} {
		got := filterList(l, func(v *int) bool { return *v != drop })
		want := slices.Delete(slices.Clone(items), drop, drop+1)
		if !slices.Equal(got.Slice(), want) {
			t.Errorf("dropping %d: got %d items, not the others in order", drop, got.Len())
		}
	}
}

func TestPublishIsLatestWins(t *testing.T) {
	w, _ := benchWatcher(t)
	for i := 0; i < 5; i++ {
		w.publish()
	}
	s := <-w.Updates()
	if s.Version != 5 || w.Latest() != s {
		t.Errorf("got version %d, latest %d", s.Version, w.Latest().Version)
	}
	select {
	case old := <-w.Updates():
		t.Errorf("stale snapshot %d still queued", old.Version)
	default:
	}
}

func TestInvisibleWritesPublishNothing(t *testing.T) {
	w, insts := benchWatcher(t)
	node := insts[model.KindNode]
	ingest(t, node, benchNode(1))
	<-w.kick
	heartbeat := benchNode(1)
	heartbeat.ResourceVersion = "99999"
	heartbeat.Status.Conditions[3].LastHeartbeatTime = metav1.NewTime(benchTime.Add(time.Minute))
	ingest(t, node, heartbeat)
	select {
	case <-w.kick:
		t.Fatal("a heartbeat asked for a snapshot")
	default:
	}
	notReady := benchNode(1)
	notReady.Status.Conditions[3].Status = corev1.ConditionFalse
	ingest(t, node, notReady)
	select {
	case <-w.kick:
	default:
		t.Fatal("a node going NotReady did not ask for a snapshot")
	}
	w.mu.Lock()
	s := w.snapshotLocked()
	w.mu.Unlock()
	if s.Nodes.Len() != 1 || s.Nodes.At(0).Ready {
		t.Errorf("nodes = %+v", s.Nodes)
	}
	// Events of no interest are cached as empty entries and never published.
	ingest(t, insts[model.KindEvent], &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e"}, InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "x"}})
	select {
	case <-w.kick:
		t.Fatal("an unrelated event asked for a snapshot")
	default:
	}
}

func TestStoreTruncateKeepsNewest(t *testing.T) {
	s := newStore(func(a, b *model.Event) bool { return a.LastTimestamp.After(b.LastTimestamp) })
	for i := 0; i < 10; i++ {
		s.put(string(rune('a'+i)), &model.Event{Reason: string(rune('a' + i)), LastTimestamp: benchTime.Add(time.Duration(i) * time.Minute)})
	}
	s.list()
	s.truncate(3)
	got := s.list().Slice()
	if len(got) != 3 || got[0].Reason != "j" || got[2].Reason != "h" || s.len() != 3 {
		t.Fatalf("after truncate: %+v (%d stored)", got, s.len())
	}
	// An old event that fires again comes back, newest first.
	s.put("a", &model.Event{Reason: "a", LastTimestamp: benchTime.Add(time.Hour)})
	if got := s.list().Slice(); len(got) != 4 || got[0].Reason != "a" {
		t.Fatalf("after refire: %+v", got)
	}
}

func TestPlanPrefersV1beta2AndFallsBack(t *testing.T) {
	w, err := New(Options{Config: &rest.Config{Host: "https://127.0.0.1:1"}, ClusterName: "mgmt"})
	if err != nil {
		t.Fatal(err)
	}
	served := map[schema.GroupVersionResource]bool{}
	for _, k := range kindSpecs {
		for _, v := range k.versions {
			served[schema.GroupVersionResource{Group: k.group, Version: v, Resource: k.resource}] = true
		}
	}
	// An older CAPI serving Machines at v1beta1 only, and no etcdadm.
	delete(served, schema.GroupVersionResource{Group: capiGroup, Version: "v1beta2", Resource: "machines"})
	delete(served, schema.GroupVersionResource{Group: etcdGroup, Version: "v1beta1", Resource: "etcdadmclusters"})
	insts, sources := w.plan(served)
	got := map[model.Kind][]string{}
	for _, in := range insts {
		got[in.spec.kind] = append(got[in.spec.kind], in.version+"@"+in.namespace)
	}
	if v := got[model.KindMachine]; len(v) != 1 || v[0] != "v1beta1@eksa-system" {
		t.Errorf("machines = %v, want v1beta1 in eksa-system", v)
	}
	if v := got[model.KindKubeadmControlPlane]; len(v) != 1 || v[0] != "v1beta2@eksa-system" {
		t.Errorf("KCP = %v", v)
	}
	if v := got[model.KindEKSACluster]; len(v) != 1 || v[0] != "v1alpha1@default" {
		t.Errorf("EKS-A Cluster = %v, want its own namespace", v)
	}
	if v := got[model.KindEvent]; len(v) != 2 {
		t.Errorf("events = %v, want both namespaces", v)
	}
	if v := got[model.KindNode]; len(v) != 1 || v[0] != "v1@" {
		t.Errorf("nodes = %v, want cluster-wide", v)
	}
	if src, ok := sources[model.KindEtcdadmCluster]; !ok || src.Installed || !src.Synced || got[model.KindEtcdadmCluster] != nil {
		t.Errorf("etcdadm = %+v %v, want not installed", src, got[model.KindEtcdadmCluster])
	}
}

// TestStoreMatchesAFreshSort drives a store with random adds, updates (some
// moving in the order), removals and truncations, and compares every build
// with sorting the same objects from scratch.
func TestStoreMatchesAFreshSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	less := func(a, b *model.Machine) bool {
		if a.Phase != b.Phase {
			return a.Phase < b.Phase
		}
		return a.Name < b.Name
	}
	s := newStore(less)
	want := map[string]*model.Machine{}
	phases := []string{"A", "B", "C"}
	for round := 0; round < 300; round++ {
		for op := rng.IntN(round%7*40 + 20); op >= 0; op-- {
			// Enough keys for several of a List's chunks.
			k := fmt.Sprintf("ns/m%04d", rng.IntN(1200))
			switch rng.IntN(4) {
			case 0:
				s.remove(k)
				delete(want, k)
			default:
				m := &model.Machine{Meta: model.Meta{Name: k[3:]}, Phase: phases[rng.IntN(len(phases))], Version: fmt.Sprint(round)}
				s.put(k, m)
				want[k] = m
			}
		}
		prev, prevItems := s.sorted, s.sorted.Slice()
		got := s.list().Slice()
		if !slices.Equal(prev.Slice(), prevItems) {
			t.Fatalf("round %d: building a list changed the one published before it", round)
		}
		keys := make([]string, 0, len(want))
		for k := range want {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int {
			return s.cmp(keyed[model.Machine]{a, want[a]}, keyed[model.Machine]{b, want[b]})
		})
		if len(got) != len(keys) {
			t.Fatalf("round %d: %d objects, want %d", round, len(got), len(keys))
		}
		for i, k := range keys {
			if got[i] != want[k] || s.keys[i] != k {
				t.Fatalf("round %d: position %d = %s/%s, want %s", round, i, got[i].Name, got[i].Phase, k)
			}
		}
		if round%50 == 49 {
			s.truncate(40)
			for _, k := range keys[min(40, len(keys)):] {
				delete(want, k)
			}
		}
	}
}

func TestConnectionStates(t *testing.T) {
	now := benchTime
	w, err := New(Options{Config: &rest.Config{Host: "https://127.0.0.1:1"}, ClusterName: "mgmt", Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	conn := func() (model.ConnectionState, time.Time) {
		w.mu.Lock()
		defer w.mu.Unlock()
		s := w.snapshotLocked()
		return s.Connection, s.ConnectionSince
	}
	if c, _ := conn(); c != model.Connecting {
		t.Fatalf("before discovery: %s", c)
	}
	w.discovery = errors.New("connection refused")
	if c, _ := conn(); c != model.Connecting {
		t.Fatalf("discovery failing before ever live: %s", c)
	}
	// The snapshot says why it is not live, for the operator and for the
	// sync timeout's message.
	w.mu.Lock()
	if got := w.snapshotLocked().ConnectionErr; got != "connection refused" {
		t.Errorf("connection error while connecting = %q", got)
	}
	w.mu.Unlock()
	w.discovery = nil
	insts, sources := w.plan(map[schema.GroupVersionResource]bool{{Group: capiGroup, Version: "v1beta2", Resource: "machines"}: true})
	w.insts, w.sources = insts, sources
	now = now.Add(time.Second)
	if c, since := conn(); c != model.Live || !since.Equal(now) {
		t.Fatalf("after discovery: %s since %s", c, since)
	}
	ctx := context.Background()
	in := w.insts[0]
	in.observe(ctx, "watch", nil)
	now = now.Add(time.Minute)
	in.observe(ctx, "watch", errors.New("dial tcp 127.0.0.1:6443: connect: connection refused"))
	c, since := conn()
	if c != model.Reconnecting || !since.Equal(now) {
		t.Fatalf("watch failing after live: %s since %s", c, since)
	}
	if src := w.sourcesLocked()[model.KindMachine]; src.Err == "" {
		t.Errorf("source error not recorded: %+v", src)
	}
	w.mu.Lock()
	if got := w.snapshotLocked().ConnectionErr; !strings.Contains(got, "connection refused") {
		t.Errorf("connection error while reconnecting = %q", got)
	}
	w.mu.Unlock()
	// client-go's error names the request's whole URL first; the operator
	// reads the server and the cause.
	in.observe(ctx, "watch", &url.Error{Op: "Get", URL: "https://127.0.0.1:6443/apis/cluster.x-k8s.io/v1beta2/namespaces/eksa-system/machines?allowWatchBookmarks=true&watch=true",
		Err: errors.New("net/http: TLS handshake timeout")})
	w.mu.Lock()
	if got := w.snapshotLocked().ConnectionErr; got != "127.0.0.1:6443: net/http: TLS handshake timeout" {
		t.Errorf("connection error = %q, want the server and the cause", got)
	}
	w.mu.Unlock()
	// A relist that expired is routine, not a connection problem.
	in.observe(ctx, "list", apierrors.NewResourceExpired("too old resource version"))
	if c, _ := conn(); c != model.Reconnecting {
		t.Fatalf("still reconnecting expected, got %s", c)
	}
	now = now.Add(time.Minute)
	in.observe(ctx, "watch", nil)
	if c, since := conn(); c != model.Live || !since.Equal(now) {
		t.Fatalf("after the watch came back: %s since %s", c, since)
	}
	in.observe(ctx, "list", apierrors.NewForbidden(schema.GroupResource{Group: capiGroup, Resource: "machines"}, "", errors.New("denied")))
	if src := w.sourcesLocked()[model.KindMachine]; src.Forbidden != "list machines.cluster.x-k8s.io in eksa-system" {
		t.Errorf("forbidden = %q", src.Forbidden)
	}
	if c, _ := conn(); c != model.Live {
		t.Errorf("a 403 is an answer, not a lost connection: %s", c)
	}
	// A 401 is an answer too, but one that lets the console see nothing:
	// a token revoked mid-watch failed every relist under "live".
	now = now.Add(time.Minute)
	in.observe(ctx, "list", apierrors.NewUnauthorized("Unauthorized"))
	if c, since := conn(); c != model.Reconnecting || !since.Equal(now) {
		t.Errorf("after a 401: %s since %s, want reconnecting since %s", c, since, now)
	}
	w.mu.Lock()
	if got := w.snapshotLocked().ConnectionErr; !strings.HasPrefix(got, model.CredentialsRefused) {
		t.Errorf("connection error after a 401 = %q", got)
	}
	w.mu.Unlock()
	in.observe(ctx, "list", nil)
	if c, _ := conn(); c != model.Live {
		t.Errorf("credentials accepted again: %s", c)
	}
}

// A 401 is the API server's answer, not a server out of reach: its message
// says the credentials were refused, which the dashboard then says.
func TestConnectionMessageSaysCredentialsRefused(t *testing.T) {
	got := connectionMessage(apierrors.NewUnauthorized("the server has asked for the client to provide credentials"))
	if !strings.HasPrefix(got, model.CredentialsRefused) {
		t.Errorf("connectionMessage(401) = %q", got)
	}
}

// Behind an API server that froze and came back refusing the credentials (a
// ServiceAccount deleted meanwhile), the sources that retried first got the
// 401 while the first still held its timeout: the snapshot said the
// timeout, and the plain watch never said the credentials were refused.
func TestConnectionErrorSaysRefusedCredentialsBeforeATimeout(t *testing.T) {
	w, err := New(Options{Config: &rest.Config{Host: "https://127.0.0.1:1"}, ClusterName: "mgmt"})
	if err != nil {
		t.Fatal(err)
	}
	insts, sources := w.plan(map[schema.GroupVersionResource]bool{
		{Group: capiGroup, Version: "v1beta2", Resource: "machines"}:           true,
		{Group: capiGroup, Version: "v1beta2", Resource: "machinedeployments"}: true,
	})
	w.insts, w.sources = insts, sources
	if len(w.insts) < 2 {
		t.Fatalf("%d sources, want two or more", len(w.insts))
	}
	ctx := context.Background()
	w.insts[0].observe(ctx, "list", &url.Error{Op: "Get", URL: "https://127.0.0.1:1/apis", Err: errors.New("net/http: TLS handshake timeout")})
	w.insts[1].observe(ctx, "list", apierrors.NewUnauthorized("Unauthorized"))
	w.mu.Lock()
	w.setConnLocked()
	got := w.snapshotLocked().ConnectionErr
	w.mu.Unlock()
	if !strings.HasPrefix(got, model.CredentialsRefused) {
		t.Errorf("connection error %q, want the refused credentials", got)
	}
}

// Events are read per namespace, one informer each. Denied in both, the
// source named the first alone, and its fix granted one Role: the other
// namespace's events stayed denied with nothing saying so.
func TestEventsDeniedInEachNamespaceNameEach(t *testing.T) {
	spec := &kindSpec{kind: model.KindEvent, resource: "events"}
	w := &Watcher{}
	for _, ns := range []string{"eksa-system", "default"} {
		w.insts = append(w.insts, &instance{w: w, spec: spec, namespace: ns,
			status: model.SourceStatus{Installed: true, Forbidden: "list events in " + ns}})
	}
	src := w.sourcesLocked()[model.KindEvent]
	if want := "list events in eksa-system; list events in default"; src.Forbidden != want {
		t.Fatalf("forbidden = %q, want %q", src.Forbidden, want)
	}
	if fix := model.GrantFor(src.Forbidden, nil); !strings.Contains(fix, "Role in eksa-system") || !strings.Contains(fix, "Role in default") {
		t.Errorf("fix = %q, want a Role in each namespace", fix)
	}
	// Allowed in one: only the other is named.
	w.insts[0].status.Forbidden = ""
	if src := w.sourcesLocked()[model.KindEvent]; src.Forbidden != "list events in default" {
		t.Errorf("forbidden in one namespace = %q", src.Forbidden)
	}
}

// A watch's error is an API server's (or a proxy's) text: in the snapshot it
// is printable, as the connection line and the panes print it.
func TestSourceErrorsArePrintable(t *testing.T) {
	w, err := New(Options{Config: &rest.Config{Host: "https://127.0.0.1:1"}, ClusterName: "mgmt"})
	if err != nil {
		t.Fatal(err)
	}
	insts, sources := w.plan(map[schema.GroupVersionResource]bool{{Group: capiGroup, Version: "v1beta2", Resource: "machines"}: true})
	w.insts, w.sources = insts, sources
	in := w.insts[0]
	ctx := context.Background()
	in.observe(ctx, "watch", apierrors.NewBadRequest("bad \x1b[2Krequest"))
	if src := w.sourcesLocked()[model.KindMachine]; src.Err == "" || strings.Contains(src.Err, "\x1b") {
		t.Errorf("source error %q, want it recorded with its escape escaped", src.Err)
	}
	in.observe(ctx, "watch", errors.New("proxy said \x1b]0;x\x07 no"))
	w.mu.Lock()
	got := w.snapshotLocked().ConnectionErr
	w.mu.Unlock()
	if got != `proxy said \x1b]0;x\a no` {
		t.Errorf("connection error %q, want it printable", got)
	}
}
