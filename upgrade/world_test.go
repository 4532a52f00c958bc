package upgrade

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/demo/objects"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/demo/seed"
	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/watchers"
)

// world is a demo world seeded into a namespace of its own (used as both the
// cluster's namespace and the system namespace), with a watcher following it
// and a client whose system namespace is that namespace.
type world struct {
	cfg     scenario.Config
	ns      string
	client  *Client
	watcher *watchers.Watcher
	spec    *SpecFile
	planner *Planner
}

func newWorld(t *testing.T, name scenario.Name) *world {
	t.Helper()
	ns := cptest.Namespace(t, env.Config)
	cfg, err := scenario.For(name, scenario.Options{ClusterName: "mgmt", ClusterNamespace: ns, SystemNamespace: ns, Nodes: 8})
	if err != nil {
		t.Fatal(err)
	}
	c := newTestClient(t)
	c.System = ns
	if err := seed.Seed(context.Background(), seed.Clients{Dynamic: c.Dynamic, Kube: c.Kube}, cfg,
		objects.NewNames(time.Now().UnixNano()), time.Now()); err != nil {
		t.Fatal(err)
	}
	w, err := watchers.New(watchers.Options{Config: env.Config, ClusterName: cfg.ClusterName, ClusterNamespace: ns, SystemNamespace: ns, MinInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	if _, err := WaitSynced(context.Background(), w, 20*time.Millisecond, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	data, err := seed.TargetSpec(cfg)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := ParseSpec("target.yaml", data, ns)
	if err != nil {
		t.Fatal(err)
	}
	return &world{cfg: cfg, ns: ns, client: c, watcher: w, spec: spec,
		planner: &Planner{Client: c, State: w, Self: Holder{User: "test", Host: "host", Instance: "self"}}}
}

func (w *world) plan(t *testing.T, skips ...string) *Plan {
	t.Helper()
	p, err := w.planner.Plan(context.Background(), PlanRequest{Cluster: w.cfg.ClusterName, Namespace: w.ns, Spec: w.spec, Skips: skips})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func result(p *Plan, name string) model.CheckResult {
	for _, r := range p.Preflight {
		if r.Name == name {
			return r
		}
	}
	return model.CheckResult{Name: name, Status: "missing"}
}

// waitCheck re-runs the checks until the named one has the wanted status (the
// watcher needs a moment to see a write) and returns the result.
func (w *world) waitCheck(t *testing.T, p *Plan, name string, want model.CheckStatus) model.CheckResult {
	t.Helper()
	var got model.CheckResult
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := w.planner.Recheck(ctx, p); err != nil {
			return false, err
		}
		got = result(p, name)
		return got.Status == want, nil
	})
	if err != nil {
		t.Fatalf("check %s: want %s, last %+v (%v)", name, want, got, err)
	}
	return got
}

// mutate reads an object, changes it and writes it back (status when
// status is true).
func (w *world) mutate(t *testing.T, ri func() (*unstructured.Unstructured, error), write func(*unstructured.Unstructured) (*unstructured.Unstructured, error), change func(*unstructured.Unstructured)) {
	t.Helper()
	u, err := ri()
	if err != nil {
		t.Fatal(err)
	}
	change(u)
	if _, err := write(u); err != nil {
		t.Fatal(err)
	}
}

func (w *world) cluster(t *testing.T, status bool, change func(*unstructured.Unstructured)) {
	t.Helper()
	r := w.client.Dynamic.Resource(GVREKSACluster).Namespace(w.ns)
	w.mutate(t, func() (*unstructured.Unstructured, error) {
		return r.Get(context.Background(), w.cfg.ClusterName, metav1.GetOptions{})
	},
		func(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			if status {
				return r.UpdateStatus(context.Background(), u, metav1.UpdateOptions{})
			}
			return r.Update(context.Background(), u, metav1.UpdateOptions{})
		}, change)
}

func (w *world) status(t *testing.T, gvr schema.GroupVersionResource, name string, change func(*unstructured.Unstructured)) {
	t.Helper()
	r := w.client.Dynamic.Resource(gvr).Namespace(w.ns)
	w.mutate(t, func() (*unstructured.Unstructured, error) {
		return r.Get(context.Background(), name, metav1.GetOptions{})
	},
		func(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			return r.UpdateStatus(context.Background(), u, metav1.UpdateOptions{})
		}, change)
}

func setNested(u *unstructured.Unstructured, v any, path ...string) {
	if err := unstructured.SetNestedField(u.Object, v, path...); err != nil {
		panic(fmt.Sprintf("set %v: %v", path, err))
	}
}
