package watchers

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"

	"github.com/upgrade-console/upgrade-console/model"
)

// A panic in any goroutine of the watcher ends Run with an InternalError and
// closes the update channel, instead of killing the process with the
// terminal still in the dashboard's mode.
func TestAPanicEndsRunWithAnInternalError(t *testing.T) {
	w, ctx, ran := runningWatcher(t)
	go func() {
		defer w.contain("a test goroutine", nil)
		panic("boom") // a bug of the kind contain is for
	}()
	var err error
	select {
	case err = <-ran:
	case <-ctx.Done():
		t.Fatal("Run did not end after a contained panic")
	}
	var internal *model.InternalError
	if !errors.As(err, &internal) || internal.Where != "a test goroutine" {
		t.Fatalf("Run returned %v, want the InternalError of the test goroutine", err)
	}
	if w.Err() != err {
		t.Errorf("Err() = %v, want what Run returned", w.Err())
	}
	for range w.Updates() {
		// drained: the channel must be closed
	}
	if ctx.Err() != nil {
		t.Fatal("Run ended because the test's context did, not because of the panic")
	}
}

func TestContainOnlyRecovers(t *testing.T) {
	w, err := New(Options{Config: &rest.Config{Host: "http://127.0.0.1:1"}, ClusterName: "mgmt"})
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer w.contain("nothing", nil)
	}()
	if w.Err() != nil {
		t.Fatalf("no panic, yet Err() = %v", w.Err())
	}
	// A second panic keeps the first error: that is the cause.
	for _, where := range []string{"first", "second"} {
		func() {
			defer w.contain(where, nil)
			panic(where)
		}()
	}
	var internal *model.InternalError
	if !errors.As(w.Err(), &internal) || internal.Where != "first" || internal.Panic != "first" {
		t.Fatalf("Err() = %v, want the first panic", w.Err())
	}
	// Without a watcher (the lean watch in unit tests) the panic goes on.
	defer func() {
		if recover() == nil {
			t.Error("a nil watcher swallowed the panic")
		}
	}()
	func() {
		var none *Watcher
		defer none.contain("no watcher", nil)
		panic("on")
	}()
}

// A transform that panics hands client-go an error, never a nil object, and
// the panic becomes the watcher's error.
func TestContainTransform(t *testing.T) {
	w, err := New(Options{Config: &rest.Config{Host: "http://127.0.0.1:1"}, ClusterName: "mgmt"})
	if err != nil {
		t.Fatal(err)
	}
	spec := &kindSpec{group: capiGroup, resource: "machines"}
	ok := w.containTransform("translating", spec, func(obj any) (any, error) { return obj, nil })
	if out, err := ok("x"); out != "x" || err != nil {
		t.Fatalf("a transform without a panic gave %v, %v", out, err)
	}
	bad := w.containTransform("translating", spec, func(any) (any, error) { panic("boom") })
	out, err := bad("x")
	if out != nil || err == nil || err.Error() != "translating machines.cluster.x-k8s.io failed" {
		t.Fatalf("a panicking transform gave %v, %v; want nil and an error naming the kind", out, err)
	}
	var internal *model.InternalError
	if !errors.As(w.Err(), &internal) || internal.Where != "translating machines.cluster.x-k8s.io" {
		t.Fatalf("Err() = %v, want the transform's InternalError", w.Err())
	}
}

// A panic in one of client-go's own goroutines (run under HandleCrash, which
// would panic again and kill the process) ends the running watch with an
// InternalError instead; with no watch running it still panics.
func TestAClientGoPanicEndsTheWatch(t *testing.T) {
	ContainClientGo()
	crashed := func() (r any) {
		defer func() { r = recover() }()
		func() {
			defer utilruntime.HandleCrash()
			panic("no watch")
		}()
		return nil
	}()
	if crashed != "no watch" {
		t.Fatalf("with no watch running, HandleCrash recovered %v; want the panic to go on", crashed)
	}

	_, ctx, ran := runningWatcher(t)
	go func() {
		defer utilruntime.HandleCrash() // as client-go's reflectors and listeners do
		panic("in client-go")
	}()
	var err error
	select {
	case err = <-ran:
	case <-ctx.Done():
		t.Fatal("Run did not end after a panic in a client-go goroutine")
	}
	var internal *model.InternalError
	if !errors.As(err, &internal) || internal.Panic != "in client-go" || !strings.Contains(internal.Where, "client-go") {
		t.Fatalf("Run returned %v, want the InternalError of the client-go goroutine", err)
	}
}

// runningWatcher starts a watcher's Run and returns once it is under way
// (its first snapshot), with the context Run got (ended by the test's end or
// after 30 s) and what Run returns. Nothing listens at its address: it keeps
// reconnecting, which is all these tests need of it.
func runningWatcher(t *testing.T) (*Watcher, context.Context, <-chan error) {
	t.Helper()
	w, err := New(Options{Config: &rest.Config{Host: "http://127.0.0.1:1"}, ClusterName: "mgmt"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	ran := make(chan error, 1)
	go func() { ran <- w.Run(ctx) }()
	<-w.Updates()
	return w, ctx, ran
}
