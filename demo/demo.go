// Package demo runs the demo world: a local control plane (kube-apiserver
// and etcd), a seeded EKS Anywhere management cluster, and simulated
// controllers that upgrade it when its spec changes, so the console can be
// tried, tested and broken on purpose without a data centre.
package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/upgrade-console/upgrade-console/demo/controlplane"
	"github.com/upgrade-console/upgrade-console/demo/kinds"
	"github.com/upgrade-console/upgrade-console/demo/objects"
	"github.com/upgrade-console/upgrade-console/demo/release"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/demo/seed"
	"github.com/upgrade-console/upgrade-console/demo/sim"
)

// OperatorManager is the field manager of the scripted operator's apply.
const OperatorManager = "demo-operator"

// DefaultAutoStartDelay is how long after the world is ready the scripted
// operator applies the target spec (at speed 1).
const DefaultAutoStartDelay = 5 * time.Second

// Config configures a demo world.
type Config struct {
	Scenario scenario.Name
	// Nodes is the worker count of the large scenario.
	Nodes int
	// Speed scales every simulated timing (10 = ten times faster).
	Speed float64
	// AssetsDir holds kube-apiserver and etcd ("" = controlplane.FindAssets).
	AssetsDir string
	// Dir receives the kubeconfig and the spec files; "" = a temporary
	// directory removed by Stop.
	Dir string
	// AutoStart makes a scripted operator apply the target spec
	// AutoStartDelay (scaled by Speed) after the world is ready.
	AutoStart      bool
	AutoStartDelay time.Duration
	// OnAction receives every action of the simulated controllers.
	OnAction func(sim.Action)
	// Logf reports progress while the world starts.
	Logf func(format string, args ...any)
	// ControlPlaneOutput receives etcd and kube-apiserver output (nil:
	// discarded).
	ControlPlaneOutput io.Writer
}

// World is a running demo world.
type World struct {
	Scenario       scenario.Config
	KubeconfigPath string
	// ClusterName and ClusterNamespace locate the EKS-A Cluster.
	ClusterName, ClusterNamespace string
	// CurrentSpecPath and TargetSpecPath are the cluster spec files of the
	// current and the target release.
	CurrentSpecPath, TargetSpecPath string
	Dir                             string
	// Config is an admin client configuration for the world's API server.
	Config *rest.Config

	env       *controlplane.Env
	removeDir bool
	cancel    context.CancelFunc
	done      chan struct{}
	runErr    error
	stopOnce  sync.Once
	stopErr   error
}

// Run starts the control plane, seeds the scenario's world, writes the spec
// files and starts the simulated controllers. The world runs until Stop (or
// until ctx ends, after which Stop must still be called).
func Run(ctx context.Context, cfg Config) (_ *World, err error) {
	logf := cfg.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	sc, err := scenario.For(cfg.Scenario, scenario.Options{Nodes: cfg.Nodes})
	if err != nil {
		return nil, err
	}
	if cfg.Speed <= 0 {
		cfg.Speed = 1
	}
	assets, err := controlplane.FindAssets(cfg.AssetsDir)
	if err != nil {
		return nil, err
	}
	w := &World{Scenario: sc, ClusterName: sc.ClusterName, ClusterNamespace: sc.ClusterNamespace, Dir: cfg.Dir, done: make(chan struct{})}
	if w.Dir == "" {
		if w.Dir, err = os.MkdirTemp("", "upgrade-console-demo-"); err != nil {
			return nil, err
		}
		w.removeDir = true
	} else if err := os.MkdirAll(w.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("--dir %s: %w", w.Dir, err)
	}
	defer func() {
		if err != nil {
			_ = w.Stop()
		}
	}()

	w.env, err = controlplane.Start(ctx, controlplane.Options{
		AssetsDir:      assets,
		KubeconfigPath: filepath.Join(w.Dir, "kubeconfig"),
		Output:         cfg.ControlPlaneOutput,
		Logf:           logf,
	})
	if err != nil {
		return nil, err
	}
	w.KubeconfigPath = w.env.KubeconfigPath
	w.Config = w.env.Config

	logf("seeding scenario %s (%d control plane, %d etcd, %d workers)", sc.Name, sc.ControlPlaneCount, sc.EtcdCount, sc.WorkerCount())
	began := time.Now()
	names := objects.NewNames(time.Now().UnixNano())
	if err := Seed(ctx, w.Config, sc, names); err != nil {
		return nil, err
	}
	logf("world seeded in %s", time.Since(began).Round(time.Millisecond))
	if err := w.writeSpecs(); err != nil {
		return nil, err
	}

	s, err := sim.New(w.Config, sim.Config{Scenario: sc, Speed: cfg.Speed, Names: names, OnAction: cfg.OnAction, Workers: workers(sc), Logf: logf})
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w.cancel = cancel
	go func() {
		defer close(w.done)
		w.runErr = s.Run(runCtx)
	}()

	if cfg.AutoStart {
		delay := cfg.AutoStartDelay
		if delay == 0 {
			delay = DefaultAutoStartDelay
		}
		delay = time.Duration(float64(delay) / cfg.Speed)
		go w.autoStart(runCtx, delay, logf)
	}
	return w, nil
}

// workers is the reconcile parallelism: a large fleet needs more than one.
func workers(sc scenario.Config) int {
	if sc.WorkerCount() > 50 {
		return 4
	}
	return 1
}

// Seed seeds a scenario's world with clients fast enough for a large fleet.
func Seed(ctx context.Context, cfg *rest.Config, sc scenario.Config, names *objects.Names) error {
	rc := rest.CopyConfig(cfg)
	rc.QPS, rc.Burst = 2000, 4000
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	return seed.Seed(ctx, seed.Clients{Dynamic: dyn, Kube: kube}, sc, names, time.Now())
}

func (w *World) writeSpecs() error {
	cur, err := seed.CurrentSpec(w.Scenario)
	if err != nil {
		return err
	}
	tgt, err := seed.TargetSpec(w.Scenario)
	if err != nil {
		return err
	}
	w.CurrentSpecPath = filepath.Join(w.Dir, fmt.Sprintf("%s-%s-k8s-%s.yaml", w.ClusterName, release.Current.Version, seed.CurrentKube))
	w.TargetSpecPath = filepath.Join(w.Dir, fmt.Sprintf("%s-%s-k8s-%s.yaml", w.ClusterName, release.Target.Version, seed.TargetKube))
	if err := os.WriteFile(w.CurrentSpecPath, cur, 0o600); err != nil {
		return err
	}
	return os.WriteFile(w.TargetSpecPath, tgt, 0o600)
}

// autoStart is the scripted operator: it applies the target spec.
func (w *World) autoStart(ctx context.Context, delay time.Duration, logf func(string, ...any)) {
	// A bug here must not end the dashboard running in this process.
	defer func() {
		if r := recover(); r != nil {
			klog.ErrorS(nil, "internal error", "where", "the demo's auto-start", "panic", r, "stack", string(debug.Stack()))
			logf("auto-start: internal error: %v (the stack is in the log file)", r)
		}
	}()
	select {
	case <-ctx.Done():
		return
	case <-time.After(delay):
	}
	data, err := os.ReadFile(w.TargetSpecPath)
	if err == nil {
		err = ApplySpec(ctx, w.Config, data)
	}
	if err != nil {
		logf("auto-start: applying %s failed: %v", w.TargetSpecPath, err)
		return
	}
	logf("auto-start: applied %s (field manager %s)", w.TargetSpecPath, OperatorManager)
}

// ApplySpec server-side applies every document of a cluster spec file as the
// scripted operator, taking ownership of conflicting fields as the EKS-A CLI
// does: the provider documents first, the Cluster last, as `apply` orders
// them.
func ApplySpec(ctx context.Context, cfg *rest.Config, spec []byte) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var docs, clusters []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(spec), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return err
		}
		if len(u.Object) == 0 {
			continue
		}
		if u.GetKind() == "Cluster" {
			clusters = append(clusters, u)
		} else {
			docs = append(docs, u)
		}
	}
	for _, u := range append(docs, clusters...) {
		gvr, ok := kinds.SpecKinds[u.GetKind()]
		if !ok || u.GetAPIVersion() != kinds.EKSAVersion {
			return fmt.Errorf("the demo applies only EKS-A Cluster, VSphereDatacenterConfig and VSphereMachineConfig documents, not %s %s", u.GetAPIVersion(), u.GetKind())
		}
		_, err := dyn.Resource(gvr).Namespace(u.GetNamespace()).Apply(ctx, u.GetName(), u,
			metav1.ApplyOptions{FieldManager: OperatorManager, Force: true})
		if err != nil {
			return fmt.Errorf("apply %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
	}
	return nil
}

// Done is closed when the simulated controllers stopped.
func (w *World) Done() <-chan struct{} { return w.done }

// Stop stops the simulated controllers, then the control plane, and removes
// a temporary directory. It is safe to call more than once.
func (w *World) Stop() error {
	w.stopOnce.Do(func() {
		var errs []error
		if w.cancel != nil {
			w.cancel()
			<-w.done
			errs = append(errs, w.runErr)
		}
		errs = append(errs, w.env.Stop())
		if w.removeDir {
			errs = append(errs, os.RemoveAll(w.Dir))
		}
		w.stopErr = errors.Join(errs...)
	})
	return w.stopErr
}
