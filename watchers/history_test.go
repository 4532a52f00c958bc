package watchers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/model"
)

// TestEventHistoryReadsTheSubjectsNewest runs the node detail's read
// against a real API server: of a machine with more events than the bound,
// the newest (not the first the server lists, which are the oldest, nor the
// first page alone); its node's, filed in default; its
// MachineSets' that name it whole; nothing about a machine whose name
// begins with its, about an object of the same name elsewhere, nor another
// owner's.
func TestEventHistoryReadsTheSubjectsNewest(t *testing.T) {
	cfg := env.Config
	sys, other := cptest.Namespace(t, cfg), cptest.Namespace(t, cfg)
	const nodeNS = metav1.NamespaceDefault
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	const m, node = testCluster + "-md-0-7d9f8-x2k4q", "history-node-x2k4q"
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	n := 0
	put := func(ns, kind, name, involvedNS, msg string, at time.Time) {
		t.Helper()
		n++
		// Named as client-go's recorder names them, after the object and
		// the time: the server lists them oldest first.
		_, err := cs.CoreV1().Events(ns).Create(ctx, &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", name, at.UnixNano()+int64(n)), Namespace: ns},
			InvolvedObject: corev1.ObjectReference{Kind: kind, Name: name, Namespace: involvedNS},
			Type:           corev1.EventTypeNormal, Reason: "R", Message: msg,
			FirstTimestamp: metav1.NewTime(at), LastTimestamp: metav1.NewTime(at),
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range model.EventHistoryPerSubject + 10 {
		put(sys, "Machine", m, sys, fmt.Sprintf("machine event %02d", i), base.Add(time.Duration(i)*time.Second))
	}
	put(sys, "Machine", m+"x", sys, "another machine's", base.Add(time.Hour))
	put(other, "Machine", m, other, "a namesake elsewhere", base.Add(time.Hour))
	put(nodeNS, "Node", node, "", "node event \x1b[2J", base.Add(30*time.Minute))
	put(nodeNS, "Node", node+"x", "", "another node's", base.Add(time.Hour))
	put(sys, "MachineSet", testCluster+"-md-0-7d9f8", sys, "Created machine: "+m, base.Add(-time.Minute))
	put(sys, "MachineSet", testCluster+"-md-0-7d9f8", sys, "Created machine: "+m+"x", base.Add(time.Hour))
	put(sys, "MachineSet", testCluster+"-md-1-5c6b7", sys, "Created machine: "+m, base.Add(time.Hour))

	defer func(p int64) { historyPage = p }(historyPage)
	historyPage = 7
	got, err := EventHistory(ctx, cs.CoreV1(), []string{sys, nodeNS}, []model.EventSubject{
		{Kind: "Machine", Name: m},
		{Kind: "Node", Name: node},
		{Kind: "MachineSet", Name: testCluster + "-md-0", Prefix: true, Naming: m},
	})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for i, e := range got {
		msgs = append(msgs, e.Message)
		if e.UID == "" {
			t.Errorf("event %q has no UID", e.Message)
		}
		if i > 0 && e.LastTimestamp.After(got[i-1].LastTimestamp) {
			t.Errorf("not newest first: %q after %q", e.Message, got[i-1].Message)
		}
	}
	want := []string{`node event \x1b[2J`}
	for i := model.EventHistoryPerSubject + 9; i >= 10; i-- {
		want = append(want, fmt.Sprintf("machine event %02d", i))
	}
	want = append(want, "Created machine: "+m)
	if strings.Join(msgs, "\n") != strings.Join(want, "\n") {
		t.Errorf("read:\n%s\nwant:\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}
}

// TestEventHistoryReadInPartSaysSo: a subject with more events than a read
// lists (historyPage × historyPages) comes back with what was read and a
// PartialHistoryError naming it: the server lists by name, not time, and
// the newest may be among those left. Cut silently, the detail showed the
// owner's oldest events as all there was.
func TestEventHistoryReadInPartSaysSo(t *testing.T) {
	cfg := env.Config
	ns := cptest.Namespace(t, cfg)
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	const m = testCluster + "-md-0-7d9f8-p4rt1"
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	for i := range 7 {
		at := base.Add(time.Duration(i) * time.Second)
		if _, err := cs.CoreV1().Events(ns).Create(ctx, &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", m, at.UnixNano()), Namespace: ns},
			InvolvedObject: corev1.ObjectReference{Kind: "Machine", Name: m, Namespace: ns},
			Type:           corev1.EventTypeNormal, Reason: "R", Message: fmt.Sprintf("event %d", i),
			FirstTimestamp: metav1.NewTime(at), LastTimestamp: metav1.NewTime(at),
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	defer func(p int64, n int) { historyPage, historyPages = p, n }(historyPage, historyPages)
	historyPage, historyPages = 3, 2
	got, err := EventHistory(ctx, cs.CoreV1(), []string{ns}, []model.EventSubject{{Kind: "Machine", Name: m}})
	var pe *model.PartialHistoryError
	if !errors.As(err, &pe) || pe.Listed != 6 || strings.Join(pe.Subjects, ",") != "Machine "+m || len(got) != 6 {
		t.Fatalf("%d events, err %v; want 6 and read in part of Machine %s", len(got), err, m)
	}
	historyPages = 3
	if got, err := EventHistory(ctx, cs.CoreV1(), []string{ns}, []model.EventSubject{{Kind: "Machine", Name: m}}); err != nil || len(got) != 7 {
		t.Errorf("with room for all: %d events, err %v; want 7, none", len(got), err)
	}
}

// TestEventHistoryForbiddenNamesTheRule: an identity that may not list
// events gets the permission worded as the panes word it, so the detail
// names the Role rule that grants it.
func TestEventHistoryForbiddenNamesTheRule(t *testing.T) {
	cfg := env.Config
	ns := cptest.Namespace(t, cfg)
	const user = "no-events-operator"
	grantAllBut(t, cfg, user, ns, model.KindEvent)
	cs := kubernetes.NewForConfigOrDie(cptest.Impersonate(cfg, user))
	_, err := EventHistory(context.Background(), cs.CoreV1(), []string{ns}, []model.EventSubject{{Kind: "Machine", Name: testCluster + "-cp-a"}})
	var fe *model.ForbiddenError
	if !errors.As(err, &fe) || fe.Forbidden != "list events in "+ns || model.GrantFor(fe.Forbidden, model.ConnFlags{}) == "" {
		t.Fatalf("err = %v, want forbidden: list events in %s", err, ns)
	}
}

// TestWatcherEventHistory: the watcher reads with its own client, in the
// namespace its event informers watch, and says so before it has one.
func TestWatcherEventHistory(t *testing.T) {
	cfg := env.Config
	ns := cptest.Namespace(t, cfg)
	cs := kubernetes.NewForConfigOrDie(cfg)
	subjects := []model.EventSubject{{Kind: "Machine", Name: testCluster + "-cp-a"}}
	idle, err := New(Options{Config: cfg, ClusterName: testCluster, ClusterNamespace: ns, SystemNamespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := idle.EventHistory(context.Background(), subjects); err == nil {
		t.Error("a watcher not started read events")
	}
	_, err = cs.CoreV1().Events(ns).Create(context.Background(), &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "ev", Namespace: ns},
		InvolvedObject: corev1.ObjectReference{Kind: "Machine", Name: testCluster + "-cp-a", Namespace: ns},
		Type:           corev1.EventTypeWarning, Reason: "Stuck", Message: "waiting", LastTimestamp: metav1.Now(),
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w := run(t, cfg, ns)
	waitState(t, w, "all sources synced", allSynced)
	got, err := w.EventHistory(context.Background(), subjects)
	if err != nil || len(got) != 1 || got[0].Reason != "Stuck" {
		t.Fatalf("EventHistory = %+v, %v", got, err)
	}
}
