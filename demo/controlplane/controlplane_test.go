package controlplane_test

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/upgrade-console/upgrade-console/demo/controlplane"
	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
)

var env *controlplane.Env

func TestMain(m *testing.M) { cptest.Main(m, &env) }

// Every CRD the console relies on is installed and established, CAPI's
// included, and the system namespace exists.
func TestCRDsEstablished(t *testing.T) {
	ctx := context.Background()
	cs := apiextensionsclient.NewForConfigOrDie(env.Config)
	want := []string{
		"clusters.anywhere.eks.amazonaws.com",
		"bundles.anywhere.eks.amazonaws.com",
		"eksareleases.anywhere.eks.amazonaws.com",
		"controlplaneupgrades.anywhere.eks.amazonaws.com",
		"machinedeploymentupgrades.anywhere.eks.amazonaws.com",
		"nodeupgrades.anywhere.eks.amazonaws.com",
		"nodekubeadmupgrades.anywhere.eks.amazonaws.com",
		"etcdadmclusters.etcdcluster.cluster.x-k8s.io",
		"clusters.cluster.x-k8s.io",
		"machines.cluster.x-k8s.io",
		"machinesets.cluster.x-k8s.io",
		"machinedeployments.cluster.x-k8s.io",
		"machinehealthchecks.cluster.x-k8s.io",
		"kubeadmcontrolplanes.controlplane.cluster.x-k8s.io",
		"kubeadmconfigs.bootstrap.cluster.x-k8s.io",
	}
	for _, name := range want {
		got, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("CRD %s: %v", name, err)
			continue
		}
		established := false
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				established = true
			}
		}
		if !established {
			t.Errorf("CRD %s not established: %+v", name, got.Status.Conditions)
		}
	}
	if _, err := kubernetes.NewForConfigOrDie(env.Config).CoreV1().Namespaces().Get(ctx, controlplane.SystemNamespace, metav1.GetOptions{}); err != nil {
		t.Errorf("namespace %s: %v", controlplane.SystemNamespace, err)
	}
}

// The kubeconfig file is what kubectl and the demo's other processes use: it
// must reach the API server as an admin through the named context.
func TestKubeconfigFile(t *testing.T) {
	raw, err := clientcmd.LoadFromFile(env.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if raw.CurrentContext != controlplane.ContextName {
		t.Errorf("current context %q, want %q", raw.CurrentContext, controlplane.ContextName)
	}
	fi, err := os.Stat(env.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("kubeconfig mode %v, want 0600 (it holds a client key)", fi.Mode().Perm())
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", env.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatalf("listing namespaces through the kubeconfig: %v", err)
	}
}

// An impersonated user can do nothing until granted, and then exactly what
// was granted.
func TestImpersonateAndGrant(t *testing.T) {
	ctx := context.Background()
	ns := cptest.Namespace(t, env.Config)
	user := "restricted-" + ns
	cs := kubernetes.NewForConfigOrDie(cptest.Impersonate(env.Config, user))

	if _, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("before the grant: list configmaps err = %v, want forbidden", err)
	}
	cptest.Grant(t, env.Config, user, ns, cptest.ReadOnly("", "configmaps"))
	if _, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("after the grant: list configmaps: %v", err)
	}
	if _, err := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("secrets were not granted: err = %v, want forbidden", err)
	}
	if _, err := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the grant is namespaced: list configmaps in default err = %v, want forbidden", err)
	}
	_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("create was not granted: err = %v, want forbidden", err)
	}

	cptest.Grant(t, env.Config, user, "", rbacv1.PolicyRule{APIGroups: []string{"cluster.x-k8s.io"}, Resources: []string{"machines"}, Verbs: []string{"list"}})
	if _, err := cptest.Dynamic(t, cptest.Impersonate(env.Config, user)).Resource(cptest.GVR("cluster.x-k8s.io", "v1beta2", "machines")).List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("cluster-wide grant: list machines: %v", err)
	}
}

// Namespaces are unique per call and valid names even for long test names.
func TestNamespaceUniqueForAVeryLongTestNameThatWouldNotFitInADNSLabel(t *testing.T) {
	a, b := cptest.Namespace(t, env.Config), cptest.Namespace(t, env.Config)
	if a == b {
		t.Fatalf("two calls gave the same namespace %q", a)
	}
	if len(a) > 63 {
		t.Errorf("namespace %q longer than 63", a)
	}
}

// Stopping the API server breaks clients; starting it again on the same
// address with the same data lets the same config reconnect and see what
// was stored before.
func TestRestartAPIServer(t *testing.T) {
	ctx := context.Background()
	ns := cptest.Namespace(t, env.Config)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "before-restart"},
		Data:       map[string]string{"k": "v"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	if err := env.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	_, err := cs.CoreV1().ConfigMaps(ns).Get(short, "before-restart", metav1.GetOptions{})
	cancel()
	if err == nil {
		t.Fatal("the API server still answers after StopAPIServer")
	}

	if err := env.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	var got *corev1.ConfigMap
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err = cs.CoreV1().ConfigMaps(ns).Get(ctx, "before-restart", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatalf("same config after restart: %v (last error %v)", err, err)
	}
	if got.Data["k"] != "v" {
		t.Errorf("data after restart = %v", got.Data)
	}

	if err := env.RestartAPIServer(ctx); err != nil {
		t.Fatalf("second restart: %v", err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "before-restart", metav1.GetOptions{}); err != nil {
		t.Fatalf("after RestartAPIServer: %v", err)
	}
}

// A control plane started again in the same working directory comes back
// with its data and fresh, valid certificates.
func TestStartAgainInSameDir(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	opts := controlplane.Options{AssetsDir: cptest.AssetsDir(), Dir: dir}
	first, err := controlplane.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept", Namespace: controlplane.SystemNamespace}}
	_, err = kubernetes.NewForConfigOrDie(first.Config).CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{})
	if stopErr := first.Stop(); err != nil || stopErr != nil {
		t.Fatalf("create: %v, stop: %v", err, stopErr)
	}

	second, err := controlplane.Start(ctx, opts)
	if err != nil {
		t.Fatalf("second start in %s: %v", dir, err)
	}
	defer func() {
		if err := second.Stop(); err != nil {
			t.Error(err)
		}
	}()
	if _, err := kubernetes.NewForConfigOrDie(second.Config).CoreV1().ConfigMaps(cm.Namespace).Get(ctx, cm.Name, metav1.GetOptions{}); err != nil {
		t.Fatalf("after restart in the same dir: %v", err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("Stop removed a directory it did not create: %v", err)
	}
}
