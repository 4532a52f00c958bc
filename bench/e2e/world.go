package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upgrade-console/upgrade-console/demo"
	"github.com/upgrade-console/upgrade-console/demo/controlplane"
	"github.com/upgrade-console/upgrade-console/demo/kinds"
	"github.com/upgrade-console/upgrade-console/demo/objects"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
)

// world is the demo's large scenario on a local control plane, without the
// simulated controllers: nothing writes to it but the load driver, so every
// change the console and kubectl draw is one the benchmark made and timed.
type world struct {
	env     *controlplane.Env
	sc      scenario.Config
	workers []string // worker Machine names, sorted
	counts  map[string]int
	gc      *gcTrace // nil without --apiserver-gctrace
}

// withGCTrace adds gctrace=1 to env's GODEBUG, or sets it.
func withGCTrace(env []string) []string {
	out := slices.Clone(env)
	for i, kv := range out {
		if v, ok := strings.CutPrefix(kv, "GODEBUG="); ok {
			out[i] = "GODEBUG=" + strings.TrimPrefix(v+",gctrace=1", ",")
			return out
		}
	}
	return append(out, "GODEBUG=gctrace=1")
}

// fast is a client configuration for seeding and load: the point is to
// measure the API server, not client-go's default 5 requests a second.
func fast(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = 100000, 100000
	c.UserAgent = "upgrade-console-bench"
	return c
}

func startWorld(ctx context.Context, o *options, logf func(string, ...any)) (*world, error) {
	sc, err := scenario.For(scenario.Large, scenario.Options{Nodes: o.nodes})
	if err != nil {
		return nil, err
	}
	cpo := controlplane.Options{AssetsDir: o.assets, Logf: logf, APIServerEnv: o.apiServerEnv, APIServerArgs: o.apiServerArgs}
	if o.controlPlaneLog != "" {
		f, err := os.Create(o.controlPlaneLog)
		if err != nil {
			return nil, err
		}
		// Closed when the process exits: the control plane writes to it
		// until it stops, after startWorld's caller is done with it.
		cpo.Output = f
	}
	var gc *gcTrace
	if o.apiServerGC {
		gc = newGCTrace(cpo.Output)
		cpo.Output = gc
		cpo.APIServerEnv = withGCTrace(cpo.APIServerEnv)
	}
	env, err := controlplane.Start(ctx, cpo)
	if err != nil {
		return nil, err
	}
	w := &world{env: env, sc: sc, gc: gc}
	began := time.Now()
	if err := demo.Seed(ctx, env.Config, sc, objects.NewNames(1)); err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("seeding the large scenario: %w", err)
	}
	logf("seeded %d workers in %s", sc.WorkerCount(), time.Since(began).Round(time.Millisecond))
	dyn, err := dynamic.NewForConfig(fast(env.Config))
	if err != nil {
		return nil, err
	}
	ms, err := dyn.Resource(kinds.Machine).Namespace(sc.SystemNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, m := range ms.Items {
		if m.GetLabels()[model.LabelDeploymentName] != "" {
			w.workers = append(w.workers, m.GetName())
		}
	}
	sort.Strings(w.workers)
	if o.nodeUpgrades {
		began = time.Now()
		if err := w.seedNodeUpgrades(ctx, dyn); err != nil {
			return nil, err
		}
		logf("created %d completed NodeUpgrades in %s", len(w.workers), time.Since(began).Round(time.Millisecond))
	}
	if o.restartAPI {
		began = time.Now()
		if err := env.RestartAPIServer(ctx); err != nil {
			return nil, err
		}
		logf("restarted kube-apiserver in %s", time.Since(began).Round(time.Millisecond))
	}
	if err := w.count(ctx, dyn); err != nil {
		return nil, err
	}
	return w, nil
}

// seedNodeUpgrades gives every worker the completed NodeUpgrade an in-place
// upgrade leaves behind, so the console lists Machines, Nodes and
// NodeUpgrades at fleet size, as the world has them.
func (w *world) seedNodeUpgrades(ctx context.Context, dyn dynamic.Interface) error {
	ns := w.sc.SystemNamespace
	at := objects.Time(time.Now().Add(-24 * time.Hour))
	conds := make([]any, 0, len(model.NodeUpgradeSteps)+1)
	for _, step := range append([]string{"Ready"}, model.NodeUpgradeSteps...) {
		conds = append(conds, map[string]any{"type": step, "status": "True", "lastTransitionTime": at})
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(32)
	for _, m := range w.workers {
		g.Go(func() error {
			nu := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": kinds.EKSAVersion,
				"kind":       "NodeUpgrade",
				"metadata": map[string]any{
					"name": model.NodeUpgradeName(m), "namespace": ns,
					"labels": map[string]any{model.LabelClusterName: w.sc.ClusterName},
				},
				"spec": map[string]any{
					"machine":           map[string]any{"apiVersion": kinds.CAPIVersion, "kind": "Machine", "name": m, "namespace": ns},
					"kubernetesVersion": "v1.30.14-eks-1-30-40",
				},
			}}
			created, err := dyn.Resource(kinds.NodeUpgrade).Namespace(ns).Create(ctx, nu, metav1.CreateOptions{})
			if err != nil {
				return fmt.Errorf("NodeUpgrade for %s: %w", m, err)
			}
			created.Object["status"] = map[string]any{"completed": true, "conditions": conds, "observedGeneration": created.GetGeneration()}
			if _, err := dyn.Resource(kinds.NodeUpgrade).Namespace(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("NodeUpgrade status for %s: %w", m, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// count lists what the world holds, for the report and for knowing when
// kubectl has printed every object.
func (w *world) count(ctx context.Context, dyn dynamic.Interface) error {
	ns := w.sc.SystemNamespace
	w.counts = map[string]int{}
	for name, gvr := range map[string]struct {
		list func() (int, error)
	}{
		"machines": {func() (int, error) {
			l, err := dyn.Resource(kinds.Machine).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return 0, err
			}
			return len(l.Items), nil
		}},
		"nodeupgrades": {func() (int, error) {
			l, err := dyn.Resource(kinds.NodeUpgrade).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return 0, err
			}
			return len(l.Items), nil
		}},
		"nodes": {func() (int, error) {
			kube, err := kubernetes.NewForConfig(fast(w.env.Config))
			if err != nil {
				return 0, err
			}
			l, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			if err != nil {
				return 0, err
			}
			return len(l.Items), nil
		}},
	} {
		n, err := gvr.list()
		if err != nil {
			return fmt.Errorf("counting %s: %w", name, err)
		}
		w.counts[name] = n
	}
	return nil
}
