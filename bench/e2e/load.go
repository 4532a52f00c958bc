package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/upgrade-console/upgrade-console/demo/kinds"
)

// write is one status change the driver made.
type write struct {
	sent, returned time.Time
	// rv is the resourceVersion the API server gave the Machine: a watch
	// delivers a kind's changes in this order, so a viewer that shows
	// version rv (or a later one) shows this write.
	rv  uint64
	err error
}

// driver writes Machine status changes the way CAPI's machine controller
// does: status.phase with status.lastUpdated, a JSON merge patch on the
// status subresource. Each write flips a worker machine between Running
// and Provisioned, so every write changes what both viewers print (the
// console's "in progress" count and table rows, kubectl's PHASE column), and
// lastUpdated stamps it with the time it was sent (RFC 3339, nanoseconds).
type driver struct {
	dyn      dynamic.Interface
	ns       string
	machines []string
	running  []atomic.Bool // per machine: is it Running now
	seq      atomic.Uint64
}

func newDriver(dyn dynamic.Interface, ns string, machines []string) *driver {
	d := &driver{dyn: dyn, ns: ns, machines: machines, running: make([]atomic.Bool, len(machines))}
	for i := range d.running {
		d.running[i].Store(true)
	}
	return d
}

// one flips machine i and records the write.
func (d *driver) one(ctx context.Context, i int) write {
	phase := "Provisioned"
	if !d.running[i].Load() {
		phase = "Running"
	}
	d.seq.Add(1)
	w := write{sent: time.Now()}
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{
		"phase": phase, "lastUpdated": w.sent.UTC().Format(time.RFC3339Nano),
	}})
	u, err := d.dyn.Resource(kinds.Machine).Namespace(d.ns).Patch(ctx, d.machines[i], types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	w.returned = time.Now()
	if err != nil {
		w.err = err
		return w
	}
	d.running[i].Store(phase == "Running")
	w.rv, w.err = strconv.ParseUint(u.GetResourceVersion(), 10, 64)
	return w
}

// resync reads every machine's phase back from the API server, for when a
// write failed: the API server may still have applied it, so the driver no
// longer knows which phase flips the machine.
func (d *driver) resync(ctx context.Context) error {
	l, err := d.dyn.Resource(kinds.Machine).Namespace(d.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	running := make(map[string]bool, len(l.Items))
	for _, m := range l.Items {
		phase, _, _ := unstructured.NestedString(m.Object, "status", "phase")
		running[m.GetName()] = phase == "Running"
	}
	for i, name := range d.machines {
		d.running[i].Store(running[name])
	}
	return nil
}

// atRate writes rate changes a second for d, each in its own goroutine so a
// slow reply never delays the next write, cycling through the machines.
// notSent counts the ticks that found every machine with a write under way.
func (d *driver) atRate(ctx context.Context, rate float64, dur time.Duration, next *int) (ws []write, notSent int) {
	var mu sync.Mutex
	var out []write
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	end := time.After(dur)
	// One machine is never written twice at once: two writes under way
	// would both flip it the same way, the second no change on screen, and
	// would contend for the same key in etcd. A machine comes round again
	// after len(machines)/rate seconds, which a backlog of replies can
	// outlast: its turn goes to the next machine with nothing under way,
	// and when there is none the tick makes no write.
	busy := make([]atomic.Bool, len(d.machines))
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-end:
			break loop
		case <-tick.C:
		}
		i := -1
		for range d.machines {
			j := *next % len(d.machines)
			*next++
			if busy[j].CompareAndSwap(false, true) {
				i = j
				break
			}
		}
		if i < 0 {
			notSent++
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := d.one(ctx, i)
			busy[i].Store(false)
			mu.Lock()
			out = append(out, w)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if notSent > 0 {
		logf("%d writes not sent: every one of the %d machines had a write under way", notSent, len(d.machines))
	}
	return out, notSent
}

// saturate writes as fast as the API server takes them: workers writers
// back to back, each with its own share of the machines.
func (d *driver) saturate(ctx context.Context, workers int, dur time.Duration) []write {
	// No write starts after the window; those under way finish (they are
	// real writes the viewers must show).
	end := time.Now().Add(dur)
	res := make([][]write, workers)
	var wg sync.WaitGroup
	for k := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := k; ctx.Err() == nil && time.Now().Before(end); i += workers {
				res[k] = append(res[k], d.one(ctx, i%len(d.machines)))
			}
		}()
	}
	wg.Wait()
	var out []write
	for _, r := range res {
		out = append(out, r...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].sent.Before(out[j].sent) })
	return out
}

// apiLatency summarises the API server's replies to the writes.
func apiLatency(ws []write) (dist, int) {
	var ds []time.Duration
	failed := 0
	for _, w := range ws {
		if w.err != nil {
			failed++
			continue
		}
		ds = append(ds, w.returned.Sub(w.sent))
	}
	return distribution(ds), failed
}

func okWrites(ws []write) []write {
	out := ws[:0:0]
	for _, w := range ws {
		if w.err == nil {
			out = append(out, w)
		}
	}
	return out
}

func firstErr(ws []write) error {
	for _, w := range ws {
		if w.err != nil {
			return fmt.Errorf("write failed: %w", w.err)
		}
	}
	return nil
}
