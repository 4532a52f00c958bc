package watchers

import (
	"context"
	"runtime/debug"
	"sync"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"

	"github.com/upgrade-console/upgrade-console/model"
)

// client-go runs its informers' goroutines (reflectors, the listeners that
// call the handlers) under utilruntime.HandleCrash, which logs a panic and
// then panics again: a bug there would kill the process with the terminal
// left in the dashboard's mode, where contain cannot reach it. ContainClientGo
// makes such a panic end every running watch instead, as contain does for the
// watcher's own code: Run returns a model.InternalError, the program gives
// the terminal back and says where. With no watch running there is nothing
// to end and nobody else to tell, so it panics again as before.

var (
	runningMu sync.Mutex
	running   = map[*Watcher]struct{}{}

	containOnce sync.Once
)

// ContainClientGo installs the handler (once per process). The command
// calls it at start; it changes process-wide client-go behaviour, so a
// library user decides for itself.
func ContainClientGo() {
	containOnce.Do(func() {
		utilruntime.PanicHandlers = append(utilruntime.PanicHandlers, endWatches)
		utilruntime.ReallyCrash = false
	})
}

// endWatches is the PanicHandler: every running watcher stops with the
// panic as its error.
func endWatches(_ context.Context, r any) {
	runningMu.Lock()
	ws := make([]*Watcher, 0, len(running))
	for w := range running {
		ws = append(ws, w)
	}
	runningMu.Unlock()
	if len(ws) == 0 {
		panic(r)
	}
	const where = "client-go (an informer's goroutine)"
	klog.ErrorS(nil, "internal error", "where", where, "panic", r, "stack", string(debug.Stack()))
	for _, w := range ws {
		w.fatal.CompareAndSwap(nil, &model.InternalError{Where: where, Panic: r})
		if stop := w.stopRun.Load(); stop != nil {
			(*stop)()
		}
	}
}

// track registers w as running until the returned func is called.
func track(w *Watcher) func() {
	runningMu.Lock()
	running[w] = struct{}{}
	runningMu.Unlock()
	return func() {
		runningMu.Lock()
		delete(running, w)
		runningMu.Unlock()
	}
}
