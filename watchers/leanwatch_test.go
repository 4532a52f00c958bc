package watchers

import (
	"context"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	restclientwatch "k8s.io/client-go/rest/watch"

	"github.com/upgrade-console/upgrade-console/model"
)

// A Machine as a v1beta2 API server sends it, managedFields and all.
const leanMachineJSON = `{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Machine","metadata":{
 "name":"mgmt-md-0-abc","namespace":"eksa-system","uid":"u-1","resourceVersion":"4711","generation":3,
 "creationTimestamp":"2026-11-21T10:00:00Z","deletionTimestamp":"2026-11-21T11:00:00Z","finalizers":["machine.cluster.x-k8s.io"],
 "labels":{"cluster.x-k8s.io/cluster-name":"mgmt","cluster.x-k8s.io/deployment-name":"mgmt-md-0"},
 "annotations":{"cluster.x-k8s.io/cloned-from-name":"mgmt-md-0-tmpl-2","kubectl.kubernetes.io/last-applied-configuration":"{}"},
 "ownerReferences":[{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"MachineSet","name":"mgmt-md-0-xyz","uid":"u-2","controller":true}],
 "managedFields":[{"manager":"manager","operation":"Update","apiVersion":"cluster.x-k8s.io/v1beta2","time":"2026-11-21T10:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:version":{}}}},
  {"manager":"manager","operation":"Update","subresource":"status","apiVersion":"cluster.x-k8s.io/v1beta2","time":"2026-11-21T10:05:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:phase":{}}}}]},
 "spec":{"clusterName":"mgmt","version":"v1.31.9-eks-1-31-40","bootstrap":{"dataSecretName":"s"},"infrastructureRef":{"kind":"VSphereMachine","name":"m"}},
 "status":{"phase":"Running","observedGeneration":3,"nodeRef":{"name":"mgmt-md-0-abc"},
  "conditions":[{"type":"Ready","status":"True","reason":"Ready","lastTransitionTime":"2026-11-21T10:04:00Z","observedGeneration":3},
   {"type":"UpToDate","status":"False","reason":"NotUpToDate","message":"* Version v1.30 → v1.31","lastTransitionTime":"2026-11-21T10:06:00Z","observedGeneration":3}]}}`

// The same at v1beta1: legacy conditions in status.conditions, the v1beta2
// ones in status.v1beta2; a control-plane machine that failed, with its
// provider ID and addresses.
const leanMachineV1Beta1JSON = `{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Machine","metadata":{
 "name":"mgmt-cp-abc","namespace":"eksa-system","uid":"u-4","resourceVersion":"4713","generation":2,
 "creationTimestamp":"2026-11-21T10:00:00Z",
 "labels":{"cluster.x-k8s.io/cluster-name":"mgmt","cluster.x-k8s.io/control-plane":"","cluster.x-k8s.io/control-plane-name":"mgmt"},
 "ownerReferences":[{"apiVersion":"controlplane.cluster.x-k8s.io/v1beta1","kind":"KubeadmControlPlane","name":"mgmt","uid":"u-5","controller":true}]},
 "spec":{"clusterName":"mgmt","version":"v1.31.9-eks-1-31-40","providerID":"vsphere://4203a1b2-0001"},
 "status":{"phase":"Provisioning","bootstrapReady":true,
  "failureReason":"CreateError","failureMessage":"Failure detected from referenced resource VSphereMachine mgmt-cp-abc: clone failed",
  "addresses":[{"type":"InternalIP","address":"10.0.0.5"},{"type":"Hostname","address":"mgmt-cp-abc"}],
  "conditions":[{"type":"Ready","status":"False","severity":"Warning","reason":"WaitingForInfrastructure","lastTransitionTime":"2026-11-21T10:01:00Z"}],
  "v1beta2":{"conditions":[{"type":"Ready","status":"False","reason":"NotReady","message":"* InfrastructureReady: waiting","lastTransitionTime":"2026-11-21T10:01:00Z","observedGeneration":2},
   {"type":"UpToDate","status":"True","reason":"UpToDate","lastTransitionTime":"2026-11-21T10:01:00Z","observedGeneration":2}]}}}`

// A failed etcd machine at v1beta2: the failure under
// status.deprecated.v1beta1, which is where v1beta2 keeps it.
const leanFailedMachineJSON = `{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Machine","metadata":{
 "name":"mgmt-etcd-f00","namespace":"eksa-system","uid":"u-10","resourceVersion":"4716","generation":1,
 "creationTimestamp":"2026-11-21T09:00:00Z",
 "labels":{"cluster.x-k8s.io/cluster-name":"mgmt","cluster.x-k8s.io/etcd-cluster":"mgmt-etcd"},
 "ownerReferences":[{"apiVersion":"etcdcluster.cluster.x-k8s.io/v1beta1","kind":"EtcdadmCluster","name":"mgmt-etcd","uid":"u-11","controller":true}]},
 "spec":{"clusterName":"mgmt","version":"v1.31.9-eks-1-31-40","providerID":"vsphere://4203a1b2-0002"},
 "status":{"phase":"Failed","nodeRef":{"name":"mgmt-etcd-f00"},
  "addresses":[{"type":"InternalIP","address":"10.0.0.7"}],
  "deprecated":{"v1beta1":{"failureReason":"UpdateError","failureMessage":"etcd member failed to join"}},
  "conditions":[{"type":"Ready","status":"False","reason":"NotReady","lastTransitionTime":"2026-11-21T09:05:00Z","observedGeneration":1}]}}`

// An etcd machine the etcdadm controller disowned mid-rollout (owner left:
// a MachineSet-less controller ref is not the EtcdadmCluster), with only
// legacy conditions.
const leanEtcdMachineJSON = `{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Machine","metadata":{
 "name":"mgmt-etcd-xyz","namespace":"eksa-system","uid":"u-6","resourceVersion":"4714","generation":1,
 "creationTimestamp":"2026-11-21T09:00:00Z",
 "labels":{"cluster.x-k8s.io/cluster-name":"mgmt","cluster.x-k8s.io/etcd-cluster":"mgmt-etcd","cluster.x-k8s.io/etcd-ready":"true"},
 "annotations":{"cluster.x-k8s.io/cloned-from-name":"mgmt-etcd-tmpl-1"},
 "ownerReferences":[{"apiVersion":"v1","kind":"Secret","name":"other","uid":"u-7"}]},
 "spec":{"clusterName":"mgmt","version":"v1.31.9-eks-1-31-40"},
 "status":{"phase":"Running","nodeRef":{"name":"mgmt-etcd-xyz"},
  "conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2026-11-21T09:05:00Z"}]}}`

// A MachineDeployment: a kind decoded into maps, which keeps its labels and
// annotations.
const leanMachineDeploymentJSON = `{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"MachineDeployment","metadata":{
 "name":"mgmt-md-0","namespace":"eksa-system","uid":"u-8","resourceVersion":"4715","generation":4,
 "creationTimestamp":"2026-11-21T08:00:00Z",
 "labels":{"cluster.x-k8s.io/cluster-name":"mgmt"},
 "annotations":{"machinedeployment.clusters.x-k8s.io/revision":"3","kubectl.kubernetes.io/last-applied-configuration":"{}"},
 "ownerReferences":[{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","name":"mgmt","uid":"u-9"}]},
 "spec":{"clusterName":"mgmt","replicas":3,"rollout":{"strategy":{"type":"RollingUpdate"}},"template":{"spec":{"version":"v1.31.9-eks-1-31-40"}}},
 "status":{"phase":"Running","replicas":3,"readyReplicas":3,"availableReplicas":3,"upToDateReplicas":1,"observedGeneration":4,
  "conditions":[{"type":"Available","status":"True","reason":"Available","lastTransitionTime":"2026-11-21T08:10:00Z","observedGeneration":4}]}}`

const leanNodeUpgradeJSON = `{"apiVersion":"anywhere.eks.amazonaws.com/v1alpha1","kind":"NodeUpgrade","metadata":{
 "name":"mgmt-md-0-abc-node-upgrader","namespace":"eksa-system","uid":"u-3","resourceVersion":"4712","generation":1,
 "creationTimestamp":"2026-11-21T10:00:00Z","managedFields":[{"manager":"m","operation":"Update","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}}]},
 "spec":{"machine":{"name":"mgmt-md-0-abc","namespace":"eksa-system"},"kubernetesVersion":"v1.31.9-eks-1-31-40","firstNodeToBeUpgraded":true},
 "status":{"completed":false,"observedGeneration":1,"conditions":[{"type":"UpgraderPodCreated","status":"True","lastTransitionTime":"2026-11-21T10:01:00Z"},
  {"type":"BinariesCopied","status":"False","severity":"Error","reason":"Container exited with a non-zero exit code","lastTransitionTime":"2026-11-21T10:02:00Z"}]}}`

// TestLeanDecodeTranslatesAsTheDynamicClient checks that an object read by
// the lean watch translates to exactly what the dynamic client's full
// decode translates to.
func TestLeanDecodeTranslatesAsTheDynamicClient(t *testing.T) {
	cases := []struct {
		name, raw, version string
		// translate is the dynamic client's translation; decode the lean
		// watch's (structs for the fleet kinds, maps for the others).
		translate func(map[string]any, string) any
		decode    leanDecode
	}{
		{"Machine", leanMachineJSON, "v1beta2", translateMachine, machineDecoder("v1beta2")},
		{"Machine/v1beta1", leanMachineV1Beta1JSON, "v1beta1", translateMachine, machineDecoder("v1beta1")},
		// No deployment-name label: the owner is the controller reference.
		{"Machine/controller", strings.Replace(leanMachineJSON, "cluster.x-k8s.io/deployment-name", "example.com/group", 1), "v1beta2",
			translateMachine, machineDecoder("v1beta2")},
		{"Machine/etcd", leanEtcdMachineJSON, "v1beta1", translateMachine, machineDecoder("v1beta1")},
		{"Machine/failed", leanFailedMachineJSON, "v1beta2", translateMachine, machineDecoder("v1beta2")},
		{"NodeUpgrade", leanNodeUpgradeJSON, "v1alpha1", translateNodeUpgrade(model.KindNodeUpgrade), nodeUpgradeDecoder(model.KindNodeUpgrade)("v1alpha1")},
		{"MachineDeployment", leanMachineDeploymentJSON, "v1beta2", translateMachineDeployment,
			mapDecoder(func(u map[string]any) any { return translateMachineDeployment(u, "v1beta2") })},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			full := &unstructured.Unstructured{}
			if err := full.UnmarshalJSON([]byte(c.raw)); err != nil {
				t.Fatal(err)
			}
			want := c.translate(full.Object, c.version)
			got := leanRun(t, `{"type":"ADDED","object":`+c.raw+`}`, c.decode)
			if len(got) != 1 {
				t.Fatalf("%d events, want 1", len(got))
			}
			e, ok := got[0].Object.(*entry)
			if !ok || got[0].Type != watch.Added {
				t.Fatalf("event %v %T", got[0].Type, got[0].Object)
			}
			if e.name != full.GetName() || e.namespace != full.GetNamespace() || e.resourceVersion != full.GetResourceVersion() {
				t.Errorf("entry %s/%s@%s", e.namespace, e.name, e.resourceVersion)
			}
			if !reflect.DeepEqual(e.value, want) {
				t.Errorf("lean translation\n%+v\nfull translation\n%+v", e.value, want)
			}
		})
	}
}

// TestMachineFailureAndAddresses checks what both decoders read of a
// machine's failure, provider ID and addresses at either served version,
// and that a healthy machine without them holds nothing extra.
func TestMachineFailureAndAddresses(t *testing.T) {
	cases := []struct {
		name, raw, version        string
		reason, message, provider string
		addrs                     []model.MachineAddress
	}{
		{"v1beta1", leanMachineV1Beta1JSON, "v1beta1", "CreateError", "Failure detected from referenced resource VSphereMachine mgmt-cp-abc: clone failed",
			"vsphere://4203a1b2-0001", []model.MachineAddress{{Type: "InternalIP", Address: "10.0.0.5"}, {Type: "Hostname", Address: "mgmt-cp-abc"}}},
		{"v1beta2", leanFailedMachineJSON, "v1beta2", "UpdateError", "etcd member failed to join",
			"vsphere://4203a1b2-0002", []model.MachineAddress{{Type: "InternalIP", Address: "10.0.0.7"}}},
		// At v1beta2 status.failure* is not the API's: only the deprecated
		// copy is read.
		{"v1beta2/top-level-ignored", strings.Replace(leanFailedMachineJSON, `"phase":"Failed",`, `"phase":"Failed","failureReason":"Stray",`, 1), "v1beta2",
			"UpdateError", "etcd member failed to join", "vsphere://4203a1b2-0002", []model.MachineAddress{{Type: "InternalIP", Address: "10.0.0.7"}}},
		{"healthy", leanMachineJSON, "v1beta2", "", "", "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			full := &unstructured.Unstructured{}
			if err := full.UnmarshalJSON([]byte(c.raw)); err != nil {
				t.Fatal(err)
			}
			evs := leanRun(t, `{"type":"ADDED","object":`+c.raw+`}`, machineDecoder(c.version))
			if len(evs) != 1 {
				t.Fatalf("%d events, want 1", len(evs))
			}
			for dec, v := range map[string]any{"map": translateMachine(full.Object, c.version), "lean": evs[0].Object.(*entry).value} {
				m := v.(*model.Machine)
				if m.FailureReason != c.reason || m.FailureMessage != c.message || m.ProviderID != c.provider || !reflect.DeepEqual(m.Addresses, c.addrs) {
					t.Errorf("%s decoder: failure %q %q, provider %q, addresses %#v", dec, m.FailureReason, m.FailureMessage, m.ProviderID, m.Addresses)
				}
				if failed := c.message != ""; m.Failed() != failed {
					t.Errorf("%s decoder: Failed() = %v", dec, m.Failed())
				}
			}
		})
	}
}

// TestLeanWatchEvents checks the events the reflector relies on: the
// bookmark that ends a streamed list, an API error, a deletion, the end of
// the stream.
func TestLeanWatchEvents(t *testing.T) {
	stream := `{"type":"BOOKMARK","object":{"kind":"Machine","apiVersion":"cluster.x-k8s.io/v1beta2","metadata":{"resourceVersion":"90","annotations":{"k8s.io/initial-events-end":"true"}}}}
{"type":"BOOKMARK","object":{"kind":"Machine","apiVersion":"cluster.x-k8s.io/v1beta2","metadata":{"resourceVersion":"91"}}}
{"type":"DELETED","object":` + leanMachineJSON + `}
{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (90)","reason":"Expired","code":410}}
`
	evs := leanRun(t, stream, machineDecoder("v1beta2"))
	if len(evs) != 4 {
		t.Fatalf("%d events, want 4", len(evs))
	}
	end, ok := evs[0].Object.(metav1.Object)
	if !ok || evs[0].Type != watch.Bookmark || end.GetResourceVersion() != "90" || end.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" {
		t.Errorf("initial-events-end bookmark: %v %+v", evs[0].Type, evs[0].Object)
	}
	if bm := evs[1].Object.(metav1.Object); bm.GetResourceVersion() != "91" || len(bm.GetAnnotations()) != 0 {
		t.Errorf("plain bookmark: %+v", evs[1].Object)
	}
	if e := evs[2].Object.(*entry); evs[2].Type != watch.Deleted || e.value == nil {
		t.Errorf("deletion: %v %+v", evs[2].Type, evs[2].Object)
	}
	st, ok := evs[3].Object.(*metav1.Status)
	if !ok || evs[3].Type != watch.Error || st.Code != 410 || st.Reason != metav1.StatusReasonExpired {
		t.Errorf("error event: %v %+v", evs[3].Type, evs[3].Object)
	}
}

// leanRun feeds a watch stream through a lean watch and collects its
// events until the stream ends.
func leanRun(t *testing.T, stream string, decode leanDecode) []watch.Event {
	t.Helper()
	_, cancel := context.WithCancel(context.Background())
	w := &leanWatch{body: io.NopCloser(strings.NewReader(stream)), cancel: cancel, ch: make(chan watch.Event), done: make(chan struct{})}
	go w.run(decode)
	var out []watch.Event
	for ev := range w.ResultChan() {
		out = append(out, ev)
	}
	return out
}

// BenchmarkWatchDecode is the cost of one Machine watch event, from the
// bytes of the stream to the translated entry: the lean watch against the
// dynamic client's decoder (client-go's watch decoder, then the
// informer's translation), on the same stream.
func BenchmarkWatchDecode(b *testing.B) {
	const events = 1000
	line := `{"type":"MODIFIED","object":` + leanMachineJSON + "}\n"
	stream := strings.Repeat(line, events)
	// chunks feeds b.N events, a stream of up to 1,000 at a time, the last
	// one short: one op is one event, whatever b.N is.
	chunks := func(b *testing.B, decode func(body io.ReadCloser) int) {
		decoded := 0
		for done := 0; done < b.N; done += events {
			n := min(events, b.N-done)
			decoded += decode(io.NopCloser(strings.NewReader(stream[:n*len(line)])))
		}
		if decoded != b.N {
			b.Fatalf("%d events decoded for %d ops", decoded, b.N)
		}
	}
	b.Run("lean", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(line)))
		chunks(b, func(body io.ReadCloser) int {
			_, cancel := context.WithCancel(context.Background())
			w := &leanWatch{body: body, cancel: cancel, ch: make(chan watch.Event), done: make(chan struct{})}
			go w.run(machineDecoder("v1beta2"))
			n := 0
			for range w.ResultChan() {
				n++
			}
			return n
		})
	})
	b.Run("dynamic", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(line)))
		chunks(b, func(body io.ReadCloser) int {
			w := dynamicStreamWatch(body)
			n := 0
			for ev := range w.ResultChan() {
				u := ev.Object.(*unstructured.Unstructured)
				_ = newEntry(u.GetNamespace(), u.GetName(), u.GetResourceVersion(), translateMachine(u.Object, "v1beta2"))
				n++
			}
			return n
		})
	})
}

// dynamicStreamWatch decodes a watch stream as the dynamic client does
// (rest.Request.Watch with the dynamic client's serializers).
func dynamicStreamWatch(body io.ReadCloser) watch.Interface {
	info := dynamic.ConfigFor(&rest.Config{}).NegotiatedSerializer.SupportedMediaTypes()[0]
	frames := info.StreamSerializer.Framer.NewFrameReader(body)
	events := streaming.NewDecoder(frames, info.StreamSerializer.Serializer)
	return watch.NewStreamWatcher(restclientwatch.NewDecoder(events, info.Serializer),
		apierrors.NewClientErrorReporter(500, "GET", "ClientWatchDecoding"))
}

// TestLeanReuseForgetsThePreviousEvent decodes an event into a value that
// held a fuller one before (as the pooled values are reused) and checks it
// translates exactly as a fresh decode: nothing of the first event may
// leak into the second through the lists' reused arrays.
func TestLeanReuseForgetsThePreviousEvent(t *testing.T) {
	// The second event: fewer conditions, none with a severity or message,
	// no owner, no deletion.
	minimal := `{"type":"MODIFIED","object":{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Machine","metadata":{"name":"m2","namespace":"eksa-system","resourceVersion":"9"},
 "status":{"conditions":[{"type":"Ready","status":"True"}],"v1beta2":{"conditions":[{"type":"Ready","status":"True"}]}}}}`
	t.Run("Machine", func(t *testing.T) {
		var ev leanEvent[leanMachine]
		for _, raw := range []string{`{"type":"ADDED","object":` + leanMachineV1Beta1JSON + `}`, `{"type":"ADDED","object":` + leanEtcdMachineJSON + `}`} {
			ev.Object.reuse()
			if err := json.Unmarshal([]byte(raw), &ev); err != nil {
				t.Fatal(err)
			}
		}
		ev.Object.reuse()
		if err := json.Unmarshal([]byte(minimal), &ev); err != nil {
			t.Fatal(err)
		}
		var fresh leanEvent[leanMachine]
		if err := json.Unmarshal([]byte(minimal), &fresh); err != nil {
			t.Fatal(err)
		}
		if got, want := ev.Object.translate("v1beta1"), fresh.Object.translate("v1beta1"); !reflect.DeepEqual(got, want) {
			t.Errorf("after reuse\n%+v\nfresh\n%+v", got, want)
		}
	})
	t.Run("NodeUpgrade", func(t *testing.T) {
		var ev leanEvent[leanNodeUpgrade]
		ev.Object.reuse()
		if err := json.Unmarshal([]byte(`{"type":"ADDED","object":`+leanNodeUpgradeJSON+`}`), &ev); err != nil {
			t.Fatal(err)
		}
		second := `{"type":"MODIFIED","object":{"kind":"NodeUpgrade","metadata":{"name":"n2","resourceVersion":"7"},"status":{"conditions":[{"type":"UpgraderPodCreated","status":"True"}]}}}`
		ev.Object.reuse()
		if err := json.Unmarshal([]byte(second), &ev); err != nil {
			t.Fatal(err)
		}
		var fresh leanEvent[leanNodeUpgrade]
		if err := json.Unmarshal([]byte(second), &fresh); err != nil {
			t.Fatal(err)
		}
		if got, want := ev.Object.translate(model.KindNodeUpgrade), fresh.Object.translate(model.KindNodeUpgrade); !reflect.DeepEqual(got, want) {
			t.Errorf("after reuse\n%+v\nfresh\n%+v", got, want)
		}
	})
}

// Text from the cluster reaches snapshots printable (model.Printable):
// anyone who may write a Machine's status or create an Event chooses it,
// and the console prints it to a terminal. Both decoders, and events.
func TestClusterTextReachesSnapshotsPrintable(t *testing.T) {
	const esc = "\x1b[2K\x1b]0;x\x07"
	const escaped = `\x1b[2K\x1b]0;x\a`
	raw := strings.Replace(leanFailedMachineJSON, `"etcd member failed to join"`, `"etcd member`+strings.ReplaceAll(escapeJSON(esc), `"`, ``)+` failed"`, 1)
	if raw == leanFailedMachineJSON {
		t.Fatal("fixture: failure message not found")
	}
	full := &unstructured.Unstructured{}
	if err := full.UnmarshalJSON([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	evs := leanRun(t, `{"type":"ADDED","object":`+raw+`}`, machineDecoder("v1beta2"))
	if len(evs) != 1 {
		t.Fatalf("%d events, want 1", len(evs))
	}
	for dec, v := range map[string]any{"map": translateMachine(full.Object, "v1beta2"), "lean": evs[0].Object.(*entry).value} {
		if got, want := v.(*model.Machine).FailureMessage, "etcd member"+escaped+" failed"; got != want {
			t.Errorf("%s decoder: failure message %q, want %q", dec, got, want)
		}
	}
	if got := intern("Ready" + esc); got != "Ready"+escaped {
		t.Errorf("interned condition text %q, want %q", got, "Ready"+escaped)
	}
	e := translateEvent(&corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "eksa-system", Name: "e"},
		InvolvedObject: corev1.ObjectReference{Kind: "Machine", Name: "mgmt-md-0-x"}, Type: "Warning", Reason: "R" + esc, Message: "m" + esc}, "mgmt")
	if e == nil || e.Reason != "R"+escaped || e.Message != "m"+escaped {
		t.Errorf("event = %+v, want reason and message escaped", e)
	}
}

func escapeJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
