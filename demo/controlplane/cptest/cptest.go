// Package cptest runs integration tests against the local control plane:
// one shared control plane per test package (Main, from TestMain), a fresh
// namespace per test (Namespace), and restricted users (Impersonate, Grant).
//
// Tests never skip because the binaries are missing: Main fails the package
// and says how to build them.
package cptest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upgrade-console/upgrade-console/demo/controlplane"
)

// Main is the body of a test package's TestMain: it starts one control plane
// with the project's CRDs, stores it in *env, runs the tests and stops it.
//
//	var env *controlplane.Env
//	func TestMain(m *testing.M) { cptest.Main(m, &env) }
func Main(m *testing.M, env **controlplane.Env) {
	MainWith(m, env, controlplane.Options{})
}

// MainWith is Main with options. An empty opts.AssetsDir means
// $KUBEBUILDER_ASSETS, else the bin/ directory at the root of the module
// under test.
func MainWith(m *testing.M, env **controlplane.Env, opts controlplane.Options) {
	os.Exit(run(m, env, opts))
}

func run(m *testing.M, env **controlplane.Env, opts controlplane.Options) int {
	// TestMain runs before the test flags are parsed; -v is read below.
	if !flag.Parsed() {
		flag.Parse()
	}
	if opts.AssetsDir == "" {
		opts.AssetsDir = AssetsDir()
	}
	if opts.Output == nil && os.Getenv("CONTROLPLANE_OUTPUT") == "stderr" {
		opts.Output = os.Stderr
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	began := time.Now()
	e, err := controlplane.Start(ctx, opts)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: cannot start the local control plane for this test package:\n%v\n", err)
		return 1
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "cptest: control plane started in %s\n", time.Since(began).Round(time.Millisecond))
	}
	*env = e
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "cptest: stopping the control plane: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// AssetsDir is where tests take the binaries from: $KUBEBUILDER_ASSETS when
// set, else bin/ at the root of the enclosing module (where `make
// controlplane` puts them), else "" (FindAssets then reports where it looked).
func AssetsDir() string {
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "bin")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// Namespace creates a namespace for this test, named after it and unique, and
// returns its name. It is not deleted afterwards: namespaces never finish
// deleting on a control plane without the namespace controller.
func Namespace(t testing.TB, cfg *rest.Config) string {
	t.Helper()
	prefix := strings.Trim(notDNS.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(prefix) > 40 {
		prefix = strings.TrimRight(prefix[:40], "-")
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	ns, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a namespace for %s: %v", t.Name(), err)
	}
	return ns.Name
}

// Impersonate returns a copy of an admin cfg that acts as user (with groups)
// through impersonation: what that user may do is what RBAC grants it (see
// Grant). Without a grant every request is forbidden.
func Impersonate(cfg *rest.Config, user string, groups ...string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	return c
}

// ReadOnly is a rule allowing get, list and watch on resources of group
// ("" for the core group).
func ReadOnly(group string, resources ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{group}, Resources: resources, Verbs: []string{"get", "list", "watch"}}
}

// Grant gives user the rules, cluster-wide when namespace is "" and in that
// namespace otherwise, and waits until the API server's authorizer applies
// them (RBAC is read from a cache, so a grant is not effective at once).
// The grant is removed when the test ends.
func Grant(t testing.TB, cfg *rest.Config, user, namespace string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(cfg)
	meta := metav1.ObjectMeta{GenerateName: "cptest-grant-", Namespace: namespace}
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	if namespace == "" {
		role, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: meta, Rules: rules}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating cluster role for %s: %v", user, err)
		}
		binding, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects:   subjects,
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("binding cluster role for %s: %v", user, err)
		}
		t.Cleanup(func() {
			_ = cs.RbacV1().ClusterRoleBindings().Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
			_ = cs.RbacV1().ClusterRoles().Delete(context.Background(), role.Name, metav1.DeleteOptions{})
		})
	} else {
		role, err := cs.RbacV1().Roles(namespace).Create(ctx, &rbacv1.Role{ObjectMeta: meta, Rules: rules}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating role for %s in %s: %v", user, namespace, err)
		}
		binding, err := cs.RbacV1().RoleBindings(namespace).Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: namespace},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
			Subjects:   subjects,
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("binding role for %s in %s: %v", user, namespace, err)
		}
		t.Cleanup(func() {
			_ = cs.RbacV1().RoleBindings(namespace).Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
			_ = cs.RbacV1().Roles(namespace).Delete(context.Background(), role.Name, metav1.DeleteOptions{})
		})
	}
	for _, r := range rules {
		for _, group := range r.APIGroups {
			for _, res := range r.Resources {
				for _, verb := range r.Verbs {
					waitAllowed(t, cs, user, namespace, group, res, verb)
				}
			}
		}
	}
}

func waitAllowed(t testing.TB, cs kubernetes.Interface, user, namespace, group, resource, verb string) {
	t.Helper()
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: namespace, Group: group, Resource: resource, Verb: verb,
		},
	}}
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = got.Status.Reason
		return got.Status.Allowed, nil
	})
	if err != nil {
		t.Fatalf("grant of %s %s.%s to %s not effective: %v (last: %s)", verb, resource, group, user, err, last)
	}
}

// Dynamic returns a dynamic client for cfg.
func Dynamic(t testing.TB, cfg *rest.Config) dynamic.Interface {
	t.Helper()
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("dynamic client: %v", err)
	}
	return c
}

// GVR is shorthand for a GroupVersionResource.
func GVR(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}
