package watchers

import (
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upgrade-console/upgrade-console/model"
)

// coreEvent is an event as the core recorder (client-go tools/record) writes
// it: second-precision firstTimestamp and lastTimestamp, no eventTime.
func coreEvent(name, rv, kind, object, reason string, last time.Time) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: "eksa-system", Name: name, ResourceVersion: rv, CreationTimestamp: metav1.NewTime(last)},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Name: object},
		Type:           corev1.EventTypeNormal, Reason: reason, Count: 1,
		FirstTimestamp: metav1.NewTime(last), LastTimestamp: metav1.NewTime(last),
	}
}

func eventSnapshot(w *Watcher) []model.Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.snapshotLocked().Events
}

func reasons(evs []model.Event) []string {
	out := make([]string, len(evs))
	for i := range evs {
		out[i] = evs[i].Reason
	}
	return out
}

func wantReasons(t *testing.T, what string, evs []model.Event, want ...string) {
	t.Helper()
	if got := reasons(evs); !slices.Equal(got, want) {
		t.Errorf("%s:\n got  %v\n want %v", what, got, want)
	}
}

// TestEventsSameSecondNewestByResourceVersion: events of the same second
// (lastTimestamp has one-second precision) come out newest first by
// resourceVersion, not by their names; time comes first, resourceVersion
// second; an event that fires again moves by its new time and version.
func TestEventsSameSecondNewestByResourceVersion(t *testing.T) {
	w, insts := benchWatcher(t)
	sec := benchTime.Add(5 * time.Second)
	// In the order the controllers wrote them (increasing resourceVersion);
	// the names sort the same way, so a tie broken by key is oldest first.
	written := []*corev1.Event{
		coreEvent("a-mgmt.1", "1001", "Cluster", "mgmt", "ManagementComponentsUpgraded", sec),
		coreEvent("b-mgmt.2", "1002", "KubeadmControlPlane", "mgmt", "Paused", sec),
		coreEvent("c-mgmt-etcd.3", "1003", "EtcdadmCluster", "mgmt-etcd", "EtcdUpgradeStarted", sec),
		coreEvent("d-mgmt.4", "1004", "KubeadmControlPlane", "mgmt", "ScalingUp", sec),
		coreEvent("e-mgmt-x2k4q.5", "1005", "Machine", "mgmt-x2k4q", "Provisioning", sec),
		coreEvent("f-mgmt-x2k4q.6", "1006", "Machine", "mgmt-x2k4q", "WaitingForIPAddress", sec),
		// A second earlier but written later (a larger version): time wins.
		coreEvent("g-mgmt.7", "2000", "Cluster", "mgmt", "Earlier", sec.Add(-time.Second)),
		// A second later with a smaller version: time wins.
		coreEvent("0-mgmt.8", "900", "Cluster", "mgmt", "Later", sec.Add(time.Second)),
	}
	for _, i := range []int{3, 0, 5, 7, 1, 4, 6, 2} {
		ingest(t, insts[model.KindEvent], written[i])
	}
	wantReasons(t, "same second", eventSnapshot(w), "Later",
		"WaitingForIPAddress", "Provisioning", "ScalingUp", "EtcdUpgradeStarted", "Paused", "ManagementComponentsUpgraded",
		"Earlier")

	// Paused fires again within the same second: count 2, a new version.
	again := coreEvent("b-mgmt.2", "1010", "KubeadmControlPlane", "mgmt", "Paused", sec)
	again.Count = 2
	ingest(t, insts[model.KindEvent], again)
	wantReasons(t, "refired in the same second", eventSnapshot(w), "Later",
		"Paused", "WaitingForIPAddress", "Provisioning", "ScalingUp", "EtcdUpgradeStarted", "ManagementComponentsUpgraded",
		"Earlier")

	// ManagementComponentsUpgraded fires again two seconds later: it sorts by
	// its new lastTimestamp.
	later := coreEvent("a-mgmt.1", "1011", "Cluster", "mgmt", "ManagementComponentsUpgraded", sec)
	later.Count, later.LastTimestamp = 2, metav1.NewTime(sec.Add(2*time.Second))
	ingest(t, insts[model.KindEvent], later)
	wantReasons(t, "refired later", eventSnapshot(w), "ManagementComponentsUpgraded", "Later",
		"Paused", "WaitingForIPAddress", "Provisioning", "ScalingUp", "EtcdUpgradeStarted",
		"Earlier")

	// A rewrite that changes nothing the console shows keeps the event's
	// place and asks for no snapshot.
	<-w.kick
	same := coreEvent("c-mgmt-etcd.3", "1020", "EtcdadmCluster", "mgmt-etcd", "EtcdUpgradeStarted", sec)
	ingest(t, insts[model.KindEvent], same)
	select {
	case <-w.kick:
		t.Error("an invisible rewrite of an event asked for a snapshot")
	default:
	}
	wantReasons(t, "invisible rewrite", eventSnapshot(w), "ManagementComponentsUpgraded", "Later",
		"Paused", "WaitingForIPAddress", "Provisioning", "ScalingUp", "EtcdUpgradeStarted",
		"Earlier")
}

// TestEventsMicroTimeOrdersWithinSecond: an event's MicroTime (eventTime,
// series.lastObservedTime) orders it inside a second, ahead of the
// resourceVersion; a lastTimestamp a later second moved still wins over the
// eventTime of the first occurrence.
func TestEventsMicroTimeOrdersWithinSecond(t *testing.T) {
	w, insts := benchWatcher(t)
	sec := benchTime.Add(5 * time.Second)
	micro := func(d time.Duration) metav1.MicroTime { return metav1.NewMicroTime(sec.Add(d)) }
	// events.k8s.io style: eventTime only. Versions run against the times,
	// so only the MicroTime can give this order.
	newStyle := func(name, rv, reason string, d time.Duration) *corev1.Event {
		e := coreEvent(name, rv, "Machine", "mgmt-x2k4q", reason, time.Time{})
		e.FirstTimestamp, e.LastTimestamp, e.EventTime = metav1.Time{}, metav1.Time{}, micro(d)
		e.CreationTimestamp = metav1.NewTime(sec)
		return e
	}
	// Both: lastTimestamp truncated to the second, eventTime inside it.
	both := coreEvent("both", "100", "Machine", "mgmt-x2k4q", "Both700ms", sec)
	both.EventTime = micro(700 * time.Millisecond)
	// A series observed again inside the second.
	series := newStyle("series", "101", "Series900ms", 100*time.Millisecond)
	series.Series = &corev1.EventSeries{Count: 3, LastObservedTime: micro(900 * time.Millisecond)}
	// Fired first a second earlier, again in this second: lastTimestamp wins.
	refired := coreEvent("refired", "102", "Machine", "mgmt-x2k4q", "Refired0ms", sec)
	refired.EventTime = metav1.NewMicroTime(sec.Add(-100 * time.Millisecond))
	refired.Count, refired.FirstTimestamp = 2, metav1.NewTime(sec.Add(-time.Second))
	for _, e := range []*corev1.Event{
		newStyle("n1", "300", "New200ms", 200*time.Millisecond),
		newStyle("n2", "200", "New500ms", 500*time.Millisecond),
		newStyle("n3", "100", "New800ms", 800*time.Millisecond),
		both, series, refired,
	} {
		ingest(t, insts[model.KindEvent], e)
	}
	evs := eventSnapshot(w)
	wantReasons(t, "microtime", evs, "Series900ms", "New800ms", "Both700ms", "New500ms", "New200ms", "Refired0ms")
	for _, e := range evs {
		switch e.Reason {
		case "Series900ms":
			if e.Count != 3 {
				t.Errorf("series count = %d, want 3", e.Count)
			}
		case "Refired0ms":
			if !e.LastTimestamp.Equal(sec) {
				t.Errorf("refired last = %v, want %v", e.LastTimestamp, sec)
			}
		}
	}
}

func TestEventNewer(t *testing.T) {
	ev := func(rv string, d time.Duration) *model.Event {
		e := translateEvent(coreEvent("e", rv, "Cluster", "mgmt", "R", benchTime.Add(d)), "mgmt")
		if e == nil {
			t.Fatal("event dropped")
		}
		return e
	}
	if e := ev("18446744073709551615", 0); e.ResourceVersion != 18446744073709551615 {
		t.Errorf("resourceVersion = %d", e.ResourceVersion)
	}
	cases := []struct {
		a, b *model.Event
		want bool
	}{
		{ev("2", 0), ev("1", 0), true},
		{ev("1", 0), ev("2", 0), false},
		{ev("1", time.Second), ev("2", 0), true},
		{ev("2", 0), ev("1", time.Second), false},
		{ev("1", 0), ev("1", 0), false},
		// An unparsable version is 0, the oldest of its second.
		{ev("x", 0), ev("1", 0), false},
		{ev("1", 0), ev("x", 0), true},
		{ev("x", 0), ev("x", 0), false},
	}
	for i, c := range cases {
		if got := eventNewer(c.a, c.b); got != c.want {
			t.Errorf("case %d: eventNewer(%s@%v, %s@%v) = %v", i,
				strconv.FormatUint(c.a.ResourceVersion, 10), c.a.LastTimestamp, strconv.FormatUint(c.b.ResourceVersion, 10), c.b.LastTimestamp, got)
		}
	}
}
