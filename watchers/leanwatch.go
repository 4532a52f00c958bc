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
// needs no managedFields (every CRD kind but the EKS-A Cluster).
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

// leanEvent is one watch event as the API server sends it.
type leanEvent struct {
	Type   watch.EventType `json:"type"`
	Object leanObject      `json:"object"`
}

// leanObject holds what translation reads of an object, and of the
// metav1.Status an ERROR event carries (whose "status" is a string).
type leanObject struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   leanMeta       `json:"metadata"`
	Spec       map[string]any `json:"spec"`
	Status     any            `json:"status"`
	// metav1.Status
	Code    int32  `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

type leanMeta struct {
	Name              string         `json:"name"`
	Namespace         string         `json:"namespace"`
	UID               string         `json:"uid"`
	ResourceVersion   string         `json:"resourceVersion"`
	Generation        int64          `json:"generation"`
	CreationTimestamp string         `json:"creationTimestamp"`
	DeletionTimestamp string         `json:"deletionTimestamp"`
	Labels            map[string]any `json:"labels"`
	Annotations       map[string]any `json:"annotations"`
	OwnerReferences   []any          `json:"ownerReferences"`
}

// unstructured is the object as translation reads it: the same shape the
// dynamic client decodes, without the fields translation never reads.
func (o *leanObject) unstructured() map[string]any {
	md := map[string]any{
		"name":            o.Metadata.Name,
		"namespace":       o.Metadata.Namespace,
		"uid":             o.Metadata.UID,
		"resourceVersion": o.Metadata.ResourceVersion,
		"generation":      o.Metadata.Generation,
	}
	if o.Metadata.CreationTimestamp != "" {
		md["creationTimestamp"] = o.Metadata.CreationTimestamp
	}
	if o.Metadata.DeletionTimestamp != "" {
		md["deletionTimestamp"] = o.Metadata.DeletionTimestamp
	}
	if o.Metadata.Labels != nil {
		md["labels"] = o.Metadata.Labels
	}
	if o.Metadata.Annotations != nil {
		md["annotations"] = o.Metadata.Annotations
	}
	if o.Metadata.OwnerReferences != nil {
		md["ownerReferences"] = o.Metadata.OwnerReferences
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

// initialEventsEnd is the value of the bookmark entry that ends the initial
// events of a streamed list: the reflector reads it through GetAnnotations.
var initialEventsEnd = &struct{ bookmark bool }{true}

var initialEventsEndAnnotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}

// leanWatcher opens lean watches of one resource.
type leanWatcher struct {
	client    rest.Interface
	gvr       schema.GroupVersionResource
	namespace string
	translate func(u map[string]any) any
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
	w := &leanWatch{body: body, cancel: cancel, ch: make(chan watch.Event), done: make(chan struct{})}
	go w.run(l.translate)
	return w, nil
}

type leanWatch struct {
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

func (w *leanWatch) run(translate func(u map[string]any) any) {
	defer close(w.ch)
	defer w.body.Close()
	defer w.cancel()
	dec := json.NewDecoder(w.body)
	for {
		var ev leanEvent
		if err := dec.Decode(&ev); err != nil {
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
		if !w.send(w.event(&ev, translate)) {
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

func (w *leanWatch) event(ev *leanEvent, translate func(u map[string]any) any) watch.Event {
	o := &ev.Object
	switch ev.Type {
	case watch.Error:
		return watch.Event{Type: watch.Error, Object: &metav1.Status{Status: metav1.StatusFailure,
			Code: o.Code, Reason: metav1.StatusReason(o.Reason), Message: o.Message}}
	case watch.Bookmark:
		e := newEntry(o.Metadata.Namespace, o.Metadata.Name, o.Metadata.ResourceVersion, nil)
		if o.Metadata.Annotations[metav1.InitialEventsAnnotationKey] == "true" {
			e.value = initialEventsEnd
		}
		return watch.Event{Type: watch.Bookmark, Object: e}
	}
	return watch.Event{Type: ev.Type, Object: newEntry(o.Metadata.Namespace, o.Metadata.Name, o.Metadata.ResourceVersion, translate(o.unstructured()))}
}
