package demo_test

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/upgrade-console/upgrade-console/demo"
	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/demo/kinds"
	"github.com/upgrade-console/upgrade-console/demo/objects"
	"github.com/upgrade-console/upgrade-console/demo/release"
	"github.com/upgrade-console/upgrade-console/demo/sim"
)

// Run starts a world reachable through the kubeconfig it writes, with both
// spec files, and --auto-start upgrades it; Stop removes the temporary
// directory.
func TestRunAutoStart(t *testing.T) {
	var actions atomic.Int64
	w, err := demo.Run(context.Background(), demo.Config{
		AssetsDir: cptest.AssetsDir(),
		Speed:     40,
		AutoStart: true,
		OnAction:  func(sim.Action) { actions.Add(1) },
		Logf:      t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = w.Stop()
		}
	})
	if w.ClusterName != "mgmt" {
		t.Errorf("cluster %q", w.ClusterName)
	}
	for _, p := range []string{w.CurrentSpecPath, w.TargetSpecPath} {
		data, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(data), "kind: Cluster") {
			t.Errorf("spec file %s: %v", p, err)
		}
	}
	if !strings.Contains(w.TargetSpecPath, release.Target.Version) {
		t.Errorf("target spec file %s does not say its release", w.TargetSpecPath)
	}
	// Through the written kubeconfig, as kubectl or the console would.
	cfg, err := clientcmd.BuildConfigFromFlags("", w.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(cfg)
	err = wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		cl, err := dyn.Resource(kinds.EKSACluster).Namespace(w.ClusterNamespace).Get(ctx, w.ClusterName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		og, _, _ := unstructuredInt(cl.Object, "status", "observedGeneration")
		return cl.GetGeneration() == 2 && og == 2 && objects.IsTrue(cl.Object, "Ready") &&
			cl.GetAnnotations()["anywhere.eks.amazonaws.com/management-components-version"] == release.Target.Version, nil
	})
	if err != nil {
		t.Fatalf("the auto-started upgrade did not complete: %v", err)
	}
	if actions.Load() == 0 {
		t.Error("no action reported")
	}
	dir := w.Dir
	if err := w.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped = true
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("temporary directory %s left behind: %v", dir, err)
	}
}

func unstructuredInt(obj map[string]any, path ...string) (int64, bool, error) {
	return unstructured.NestedInt64(obj, path...)
}
