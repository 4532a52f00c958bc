package watchers

import (
	"context"
	"errors"
	"slices"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/upgrade-console/upgrade-console/model"
)

// historyPage and historyPages bound the read of one subject in one
// namespace. The API server lists in key order, not by time, so the newest
// are only known once every page is read; an owner's events (a
// MachineSet's SuccessfulCreate for each of a thousand workers) are the
// ones that run long.
var (
	historyPage  int64 = 500
	historyPages       = 10
)

// historyWithin bounds a whole EventHistory: the detail says "loading
// events…" meanwhile, and an API server that stopped answering must not
// leave it saying so.
const historyWithin = 10 * time.Second

// EventHistory lists the events about subjects from the API server, the
// newest model.EventHistoryPerSubject of each, newest first, each once.
// With a subject that has more events than a read lists, what was read
// comes with a *model.PartialHistoryError. A
// Node's are looked for in default, when namespaces has it; the others' in
// the first namespace, where the objects live. It is the node detail's read
// on opening: the watch keeps the newest events of the whole cluster, and
// at fleet scale a failing machine's have long left them.
func EventHistory(ctx context.Context, c typedcorev1.EventsGetter, namespaces []string, subjects []model.EventSubject) ([]model.Event, error) {
	if len(namespaces) == 0 {
		return nil, errors.New("no namespace to read events in")
	}
	ctx, cancel := context.WithTimeout(ctx, historyWithin)
	defer cancel()
	seen := map[string]bool{}
	var out []model.Event
	var partial []string
	for _, s := range subjects {
		in, involvedNS := namespaces[:1], namespaces[0]
		if s.Kind == string(model.KindNode) {
			// The API server files the events of a cluster-scoped
			// object in default alone; where the watch does not read
			// default, the dashboard never shows them either.
			in, involvedNS = nil, ""
			if slices.Contains(namespaces, metav1.NamespaceDefault) {
				in = []string{metav1.NamespaceDefault}
			}
		}
		var mine []model.Event
		for _, ns := range in {
			evs, more, err := subjectEvents(ctx, c, ns, involvedNS, s)
			if err != nil {
				return nil, err
			}
			if more {
				partial = append(partial, s.String())
			}
			mine = append(mine, evs...)
		}
		sortNewest(mine)
		for _, e := range mine[:min(len(mine), model.EventHistoryPerSubject)] {
			if k := e.Identity(); k == "" || !seen[k] {
				seen[k] = true
				out = append(out, e)
			}
		}
	}
	sortNewest(out)
	if len(partial) > 0 {
		return out, &model.PartialHistoryError{Subjects: partial, Listed: int(historyPage) * historyPages}
	}
	return out, nil
}

// subjectEvents reads one subject's events in one namespace, page by page;
// more says pages were left unread.
func subjectEvents(ctx context.Context, c typedcorev1.EventsGetter, ns, involvedNS string, s model.EventSubject) (_ []model.Event, more bool, _ error) {
	sel := fields.Set{"involvedObject.kind": s.Kind, "involvedObject.namespace": involvedNS}
	if !s.Prefix {
		sel["involvedObject.name"] = s.Name
	}
	opts := metav1.ListOptions{FieldSelector: fields.SelectorFromSet(sel).String(), Limit: historyPage}
	var out []model.Event
	for range historyPages {
		list, err := c.Events(ns).List(ctx, opts)
		if apierrors.IsForbidden(err) {
			return nil, false, &model.ForbiddenError{Forbidden: "list events in " + ns, Err: err}
		}
		if err != nil {
			return nil, false, err
		}
		for i := range list.Items {
			e := &list.Items[i]
			if s.Matches(e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Message) {
				out = append(out, *modelEvent(e))
			}
		}
		if list.Continue == "" {
			return out, false, nil
		}
		opts.Continue = list.Continue
	}
	return out, true, nil
}

func sortNewest(evs []model.Event) {
	sort.SliceStable(evs, func(i, j int) bool { return eventNewer(&evs[i], &evs[j]) })
}

// EventHistory is the package's EventHistory on this watcher's client and
// namespaces: those its event informers watch.
func (w *Watcher) EventHistory(ctx context.Context, subjects []model.EventSubject) ([]model.Event, error) {
	w.mu.Lock()
	typed := w.clients.typed
	w.mu.Unlock()
	if typed == nil {
		return nil, errors.New("not connected to the API server yet")
	}
	var spec *kindSpec
	for i := range kindSpecs {
		if kindSpecs[i].kind == model.KindEvent {
			spec = &kindSpecs[i]
		}
	}
	return EventHistory(ctx, typed.CoreV1(), w.namespacesOf(spec), subjects)
}
