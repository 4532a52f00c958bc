package watchers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// A lean watch reads a custom resource's watch stream straight into the
// translated entries the informer caches, for the kinds whose translation
// needs no managedFields (every CRD kind but the EKS-A Cluster, the
// KubeadmControlPlane and the MachineDeployments: kindSpec.managedFields).
//
// Why not the dynamic client's watch: it reads each event five times (the
// framer finds its end, the WatchEvent is checked, decoded, searched for its
// apiVersion and kind, then its object is decoded into maps) and builds a
// map for every managedFields entry, which the console drops at once. At
// 10,000 Machines under 100 writes a second that was a third of the
// console's CPU (CPU profile of bench/e2e), and the initial list, streamed
// through the same watch (client-go's WatchList), paid it 10,000 times. Here
// each event is scanned twice (the stream decoder finds its end, then
// decodes it into structs that keep only what translation reads) and
// managedFields, finalizers and the rest are skipped without allocating.

// leanEvent is one watch event as the API server sends it, its object
// decoded into O: leanObject (spec and status as maps, for the small kinds)
// or one of the fleet kinds' structs (leantyped.go).
type leanEvent[O any] struct {
	Type   watch.EventType `json:"type"`
	Object O               `json:"object"`
}

// leanHead is what every lean object holds: its metadata, and the fields of
// the metav1.Status an ERROR event carries instead of an object.
type leanHead struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   leanMeta `json:"metadata"`
	// metav1.Status
	Code    int32  `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

func (h *leanHead) head() *leanHead { return h }

// leanObject is an object of a kind translated from maps. Its status is any
// because an ERROR event's metav1.Status has a string there.
type leanObject struct {
	leanHead
	Spec   map[string]any `json:"spec"`
	Status any            `json:"status"`
}

type leanMeta struct {
	Name              string            `json:"name"`
	Namespace         string            `json:"namespace"`
	UID               string            `json:"uid"`
	ResourceVersion   string            `json:"resourceVersion"`
	Generation        int64             `json:"generation"`
	CreationTimestamp string            `json:"creationTimestamp"`
	DeletionTimestamp string            `json:"deletionTimestamp"`
	Labels            map[string]string `json:"labels"`
	Annotations       map[string]string `json:"annotations"`
	OwnerReferences   []leanOwner       `json:"ownerReferences"`
}

type leanOwner struct {
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Controller bool   `json:"controller"`
}

// unstructured is the object as translation reads it: the same shape the
// dynamic client decodes, without the fields translation never reads.
func (o *leanObject) unstructured() map[string]any {
	m := &o.Metadata
	md := map[string]any{
		"name":            m.Name,
		"namespace":       m.Namespace,
		"uid":             m.UID,
		"resourceVersion": m.ResourceVersion,
		"generation":      m.Generation,
	}
	if m.CreationTimestamp != "" {
		md["creationTimestamp"] = m.CreationTimestamp
	}
	if m.DeletionTimestamp != "" {
		md["deletionTimestamp"] = m.DeletionTimestamp
	}
	if m.Labels != nil {
		md["labels"] = anyMap(m.Labels)
	}
	if m.Annotations != nil {
		md["annotations"] = anyMap(m.Annotations)
	}
	if m.OwnerReferences != nil {
		owners := make([]any, len(m.OwnerReferences))
		for i, r := range m.OwnerReferences {
			owners[i] = map[string]any{"kind": r.Kind, "name": r.Name, "controller": r.Controller}
		}
		md["ownerReferences"] = owners
	}
	u := map[string]any{"apiVersion": o.APIVersion, "kind": o.Kind, "metadata": md}
	if o.Spec != nil {
		u["spec"] = o.Spec
	}
	if o.Status != nil {
		u["status"] = o.Status
	}
	return u
}

func anyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// leanDecode reads the next event of a stream.
type leanDecode func(dec *json.Decoder) (watch.Event, error)

// leanDecoder decodes events into O and translates their objects.
//
// A value of the wrong JSON type for its field (the string status of an
// ERROR event, for the structs) is left zero and the event kept: the
// decoder has consumed the whole event by then, and the map translators
// ignore a wrongly typed field the same way.
//
// Events are decoded into pooled values whose lists keep their arrays
// (reuse): encoding/json grows a list one element at a time, and the
// growing of a Machine's ten conditions was 8 % of all the console
// allocated in a 10,000-node bench/e2e run. Translation copies what it
// keeps, so nothing refers to a pooled value once its event is returned.
func leanDecoder[O any, P interface {
	*O
	head() *leanHead
	reuse()
}](translate func(P) any) leanDecode {
	pool := sync.Pool{New: func() any { return new(leanEvent[O]) }}
	return func(dec *json.Decoder) (watch.Event, error) {
		ev := pool.Get().(*leanEvent[O])
		defer pool.Put(ev)
		ev.Type = ""
		P(&ev.Object).reuse()
		if err := dec.Decode(ev); err != nil {
			if _, mistyped := errors.AsType[*json.UnmarshalTypeError](err); !mistyped {
				return watch.Event{}, err
			}
		}
		o := P(&ev.Object)
		h := o.head()
		switch ev.Type {
		case watch.Error:
			return watch.Event{Type: watch.Error, Object: &metav1.Status{Status: metav1.StatusFailure,
				Code: h.Code, Reason: metav1.StatusReason(h.Reason), Message: h.Message}}, nil
		case watch.Bookmark:
			e := newEntry(h.Metadata.Namespace, h.Metadata.Name, h.Metadata.ResourceVersion, nil)
			if h.Metadata.Annotations[metav1.InitialEventsAnnotationKey] == "true" {
				e.value = initialEventsEnd
			}
			return watch.Event{Type: watch.Bookmark, Object: e}, nil
		}
		return watch.Event{Type: ev.Type, Object: newEntry(h.Metadata.Namespace, h.Metadata.Name, h.Metadata.ResourceVersion, translate(o))}, nil
	}
}

// reuse empties the object for the next event. Its maps are not reused:
// translation may keep parts of them.
func (o *leanObject) reuse() { *o = leanObject{} }

// reuseList empties a list, keeping its array: encoding/json decodes into
// the elements it finds there, so they must be zero.
func reuseList[T any](l []T) []T {
	l = l[:0]
	clear(l[:cap(l)])
	return l
}

// mapDecoder decodes the events of a kind translated from maps.
func mapDecoder(translate func(u map[string]any) any) leanDecode {
	return leanDecoder(func(o *leanObject) any { return translate(o.unstructured()) })
}

// initialEventsEnd is the value of the bookmark entry that ends the initial
// events of a streamed list: the reflector reads it through GetAnnotations.
var initialEventsEnd = &struct{ bookmark bool }{true}

var initialEventsEndAnnotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}

// leanWatcher opens lean watches of one resource.
type leanWatcher struct {
	client    rest.Interface
	gvr       schema.GroupVersionResource
	namespace string
	decode    leanDecode
	// w contains a panic of decode (nil in tests: it is not recovered);
	// spec names the kind then.
	w    *Watcher
	spec *kindSpec
}

var (
	leanParamScheme = runtime.NewScheme()
	leanParamCodec  = runtime.NewParameterCodec(leanParamScheme)
	leanParamGV     = schema.GroupVersion{Version: "v1"}
)

func init() {
	metav1.AddToGroupVersion(leanParamScheme, leanParamGV)
}

func (l *leanWatcher) path() []string {
	p := []string{"/apis", l.gvr.Group, l.gvr.Version}
	if l.gvr.Group == "" {
		p = []string{"/api", l.gvr.Version}
	}
	if l.namespace != "" {
		p = append(p, "namespaces", l.namespace)
	}
	return append(p, l.gvr.Resource)
}

// watch starts a watch; errors from the API server come back as API status
// errors, as the dynamic client's do.
func (l *leanWatcher) watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	ctx, cancel := context.WithCancel(ctx)
	body, err := l.client.Get().AbsPath(l.path()...).
		SpecificallyVersionedParams(&opts, leanParamCodec, leanParamGV).
		Stream(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	w := &leanWatch{body: body, cancel: cancel, ch: make(chan watch.Event), done: make(chan struct{}),
		owner: l.w, spec: l.spec}
	go w.run(l.decode)
	return w, nil
}

type leanWatch struct {
	owner  *Watcher
	spec   *kindSpec
	body   io.ReadCloser
	cancel context.CancelFunc
	ch     chan watch.Event
	done   chan struct{}
	once   sync.Once
}

func (w *leanWatch) ResultChan() <-chan watch.Event { return w.ch }

func (w *leanWatch) Stop() {
	w.once.Do(func() {
		close(w.done)
		w.cancel()
	})
}

func (w *leanWatch) run(decode leanDecode) {
	defer close(w.ch)
	defer w.body.Close()
	defer w.cancel()
	defer w.owner.contain("decoding the watch of", w.spec)
	dec := json.NewDecoder(w.body)
	for {
		ev, err := decode(dec)
		if err != nil {
			select {
			case <-w.done:
			default:
				// The stream ended (the API server's timeout, a closed
				// connection) or broke: the reflector watches again.
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, context.Canceled) {
					w.send(watch.Event{Type: watch.Error, Object: &metav1.Status{Status: metav1.StatusFailure,
						Code: http.StatusInternalServerError, Reason: metav1.StatusReasonInternalError,
						Message: fmt.Sprintf("unable to decode an event from the watch stream: %v", err)}})
				}
			}
			return
		}
		if !w.send(ev) {
			return
		}
	}
}

func (w *leanWatch) send(ev watch.Event) bool {
	select {
	case w.ch <- ev:
		return true
	case <-w.done:
		return false
	}
}
