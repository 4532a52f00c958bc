package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/upgrade-console/upgrade-console/demo/kinds"
)

func machine(name, phase string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kinds.CAPIVersion, "kind": "Machine",
		"metadata": map[string]any{"name": name, "namespace": "ns", "resourceVersion": "1"},
		"status":   map[string]any{"phase": phase},
	}}
}

func fakeDynamic(objs ...runtime.Object) *fake.FakeDynamicClient {
	return fake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{kinds.Machine: "MachineList"}, objs...)
}

// patchOnly is a dynamic client of which the driver's writes only call
// Resource(…).Namespace(…).Patch, concurrently (the fake client runs its
// reactors one at a time, which would hide an overlap).
type patchOnly struct {
	dynamic.NamespaceableResourceInterface // nil: nothing else is called
	patch                                  func(name string) (*unstructured.Unstructured, error)
}

type patchClient struct {
	dynamic.Interface
	p patchOnly
}

func (c patchClient) Resource(schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return c.p
}

func (p patchOnly) Namespace(string) dynamic.ResourceInterface { return p }

func (p patchOnly) Patch(_ context.Context, name string, _ types.PatchType, _ []byte, _ metav1.PatchOptions, _ ...string) (*unstructured.Unstructured, error) {
	return p.patch(name)
}

// When replies are slower than the pool comes round, a machine with a write
// under way gets no second one: each write flips a phase and no two
// contend for the same object.
func TestAtRateNeverWritesAMachineTwiceAtOnce(t *testing.T) {
	var mu sync.Mutex
	inFlight := map[string]bool{}
	var overlap []string
	rv := 0
	client := patchClient{p: patchOnly{patch: func(name string) (*unstructured.Unstructured, error) {
		mu.Lock()
		if inFlight[name] {
			overlap = append(overlap, name)
		}
		inFlight[name] = true
		rv++
		m := machine(name, "Provisioned")
		m.SetResourceVersion(strconv.Itoa(rv))
		mu.Unlock()
		// The reply takes several of the driver's ticks, as a loaded API
		// server's does.
		<-time.After(3 * time.Millisecond)
		mu.Lock()
		inFlight[name] = false
		mu.Unlock()
		return m, nil
	}}}
	d := newDriver(client, "ns", []string{"m0", "m1", "m2"})
	next := 0
	ws, _ := d.atRate(context.Background(), 2000, 100*time.Millisecond, &next)
	if len(overlap) > 0 {
		t.Fatalf("machines written twice at once: %v", overlap)
	}
	if len(ws) == 0 {
		t.Fatal("no write made")
	}
	for _, w := range ws {
		if w.err != nil || w.rv == 0 {
			t.Errorf("write %+v: want a resourceVersion and no error", w)
		}
	}
}

// After failed writes the driver takes every machine's phase from the API
// server, so its next write to each flips it.
func TestResyncReadsPhasesBack(t *testing.T) {
	dyn := fakeDynamic(machine("m0", "Running"), machine("m1", "Provisioned"), machine("m2", "Running"))
	d := newDriver(dyn, "ns", []string{"m0", "m1", "m2"})
	d.running[0].Store(false) // as a timed-out write that was applied would leave it
	if err := d.resync(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false, true} {
		if got := d.running[i].Load(); got != want {
			t.Errorf("m%d: running %v, want %v", i, got, want)
		}
	}
	// And the next write flips each machine from its real phase.
	for i, want := range []string{"Provisioned", "Running", "Provisioned"} {
		var sent string
		dyn.PrependReactor("patch", "machines", func(a k8stesting.Action) (bool, runtime.Object, error) {
			sent = string(a.(k8stesting.PatchAction).GetPatch())
			return true, machine(fmt.Sprint("m", i), want), nil
		})
		if w := d.one(context.Background(), i); w.err != nil {
			t.Fatal(w.err)
		}
		if want := `"phase":"` + want + `"`; !strings.Contains(sent, want) {
			t.Errorf("m%d: patch %s, want it to set %s", i, sent, want)
		}
	}
}
