package watchers

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/upgrade-console/upgrade-console/model"
)

// The console runs through an upgrade whose first phase installs new
// controllers, and with them CRDs: a kind missing at start (the in-place
// upgrade kinds of a newer EKS-A, etcdadm) may appear, and one may go away.
// Rather than re-running discovery on a timer (k9s re-lists CRDs every two
// seconds, at a cost to the API server), the watcher follows the
// CustomResourceDefinitions themselves: one more watch, quiet unless a CRD
// changes. Without permission to watch CRDs the start-up discovery stands.

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// crdInfo is what the console keeps of a CRD (its schema, most of its
// weight, is dropped in the transform).
type crdInfo struct {
	group, plural string
	served        []string // served versions
	established   bool
}

func translateCRD(u map[string]any) *crdInfo {
	c := &crdInfo{group: str(u, "spec", "group"), plural: str(u, "spec", "names", "plural")}
	for _, item := range list(u, "spec", "versions") {
		if v, ok := item.(map[string]any); ok && boolean(v, "served") {
			c.served = append(c.served, str(v, "name"))
		}
	}
	for _, item := range list(u, "status", "conditions") {
		if cond, ok := item.(map[string]any); ok && str(cond, "type") == "Established" {
			c.established = str(cond, "status") == "True"
		}
	}
	return c
}

func (w *Watcher) launchCRDWatch(ctx context.Context) {
	probe := &instance{w: w, spec: &kindSpec{group: crdGVR.Group, resource: crdGVR.Resource, clusterScoped: true}, version: crdGVR.Version}
	if denied, _ := probe.checkAccess(ctx, w.clients.cs); denied != "" {
		klog.V(2).InfoS("not following CRDs: kinds installed later need a restart", "missing", denied)
		return
	}
	ri := w.clients.dyn.Resource(crdGVR)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return ri.List(ctx, o) },
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return ri.Watch(ctx, o)
		},
	}
	inf := cache.NewSharedIndexInformerWithOptions(lw, &unstructured.Unstructured{}, cache.SharedIndexInformerOptions{ObjectDescription: "customresourcedefinitions"})
	_ = inf.SetTransform(w.containTransform("translating a CRD", nil, func(obj any) (any, error) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			return newEntry("", u.GetName(), u.GetResourceVersion(), translateCRD(u.Object)), nil
		}
		return obj, nil
	}))
	handle := func(obj any, deleted bool) {
		defer w.contain("following CRDs", nil)
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj, deleted = t.Obj, true
		}
		if e, ok := obj.(*entry); ok {
			if c, ok := e.value.(*crdInfo); ok {
				w.crdChanged(ctx, c, deleted)
			}
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { handle(obj, false) },
		UpdateFunc: func(_, obj any) { handle(obj, false) },
		DeleteFunc: func(obj any) { handle(obj, true) },
	}); err != nil {
		klog.ErrorS(err, "following CRDs")
		return
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer w.contain("following CRDs", nil)
		inf.RunWithContext(ctx)
	}()
}

// crdChanged starts the informers of a kind whose CRD is now established and
// served in a version the console reads, and stops those of a kind whose CRD
// went away. A kind already watched keeps its version.
func (w *Watcher) crdChanged(ctx context.Context, c *crdInfo, deleted bool) {
	for i := range kindSpecs {
		k := &kindSpecs[i]
		if k.typed || k.group != c.group || k.resource != c.plural {
			continue
		}
		version := ""
		if !deleted && c.established {
			for _, v := range k.versions {
				if slices.Contains(c.served, v) {
					version = v
					break
				}
			}
		}
		w.mu.Lock()
		var mine, others []*instance
		for _, in := range w.insts {
			if in.spec == k {
				mine = append(mine, in)
			} else {
				others = append(others, in)
			}
		}
		var start []*instance
		switch {
		case version == "" && len(mine) > 0:
			klog.V(2).InfoS("kind no longer served: informer stopped", "resource", k.qualified())
			for _, in := range mine {
				in.cancel()
			}
			w.insts = others
			w.sources[k.kind] = model.SourceStatus{Installed: false, Synced: true}
			w.st.drop(k.kind)
		case version != "" && len(mine) == 0:
			klog.V(2).InfoS("kind now served: starting its informer", "resource", k.qualified(), "version", version)
			start = w.instancesOf(k, version)
			w.insts = append(w.insts, start...)
			delete(w.sources, k.kind)
		}
		moved := len(start) > 0 || (version == "" && len(mine) > 0)
		w.mu.Unlock()
		for _, in := range start {
			w.launch(ctx, in)
		}
		if moved {
			w.changed()
		}
	}
}
