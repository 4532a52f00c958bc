package cptest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/upgrade-console/upgrade-console/demo/controlplane"
)

// UpstreamCRDsEnv is the environment variable naming a directory of real
// upstream CRDs for the compatibility check.
const UpstreamCRDsEnv = "UPSTREAM_CRDS"

// UpstreamEnv starts a control plane with the upstream CRDs of
// $UPSTREAM_CRDS installed instead of the project's (plus the Cluster API
// CRDs, and the project's CRDs for kinds upstream does not have), stopped
// when the test ends. The test is skipped when UPSTREAM_CRDS is not set: the
// check is opt-in because the upstream CRDs are not part of the repository.
func UpstreamEnv(t testing.TB) *controlplane.Env {
	t.Helper()
	dir := os.Getenv(UpstreamCRDsEnv)
	if dir == "" {
		t.Skipf("%s is not set: the upstream CRD compatibility check needs a directory of upstream CRDs (make compat)", UpstreamCRDsEnv)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("%s=%s is not a directory", UpstreamCRDsEnv, dir)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env, err := controlplane.Start(ctx, controlplane.Options{AssetsDir: AssetsDir(), CRDDirs: []string{dir}})
	if err != nil {
		t.Fatalf("starting a control plane with the CRDs of %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping the upstream control plane: %v", err)
		}
	})
	return env
}

// RoundTrip creates each object (creating its namespace if needed), writes
// its status through the status subresource when it has one, reads it back
// and fails the test for every field the API server rejected, pruned or
// changed. Fields the server added (defaults) are logged, not failures.
// Objects are not modified; they must not exist yet.
func RoundTrip(t testing.TB, cfg *rest.Config, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, err := range RoundTripErrors(context.Background(), cfg, objs, t.Logf) {
		t.Error(err)
	}
}

// RoundTripErrors is RoundTrip returning the problems instead of failing a
// test; logf receives the notes about defaulted fields.
func RoundTripErrors(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured, logf func(string, ...any)) []error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return []error{err}
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return []error{err}
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return []error{err}
	}
	var errs []error
	for _, o := range objs {
		id := fmt.Sprintf("%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
		problems, notes, err := roundTrip(ctx, dyn, mapper, cs, o)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", id, err))
			continue
		}
		for _, p := range problems {
			errs = append(errs, fmt.Errorf("%s: %s", id, p))
		}
		for _, n := range notes {
			logf("%s: %s", id, n)
		}
	}
	return errs
}

func roundTrip(ctx context.Context, dyn dynamic.Interface, mapper meta.RESTMapper, cs kubernetes.Interface, orig *unstructured.Unstructured) (problems, notes []string, err error) {
	gvk := orig.GroupVersionKind()
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, nil, fmt.Errorf("kind not served: %w", err)
	}
	var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := orig.GetNamespace()
		if ns == "" {
			return nil, nil, fmt.Errorf("namespaced kind without a namespace")
		}
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, nil, fmt.Errorf("creating namespace: %w", err)
		}
		ri = dyn.Resource(mapping.Resource).Namespace(ns)
	}

	obj := orig.DeepCopy()
	status, hasStatus := obj.Object["status"]
	created, err := ri.Create(ctx, obj, metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict})
	if err != nil {
		return nil, nil, fmt.Errorf("rejected on create: %w", err)
	}
	if hasStatus && hasStatusSubresource(ctx, cs, mapping.Resource.Group, mapping.Resource.Version, mapping.Resource.Resource) {
		created.Object["status"] = status
		if _, err := ri.UpdateStatus(ctx, created, metav1.UpdateOptions{FieldValidation: metav1.FieldValidationStrict}); err != nil {
			return nil, nil, fmt.Errorf("status rejected: %w", err)
		}
	}
	stored, err := ri.Get(ctx, orig.GetName(), metav1.GetOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("reading back: %w", err)
	}

	sent, got := normalize(orig.Object), normalize(stored.Object)
	for k := range sent {
		if k == "metadata" {
			continue
		}
		compare(k, sent[k], got[k], &problems, &notes)
	}
	sm, _ := sent["metadata"].(map[string]any)
	gm, _ := got["metadata"].(map[string]any)
	for _, k := range []string{"labels", "annotations", "finalizers", "ownerReferences"} {
		if v, ok := sm[k]; ok {
			compare("metadata."+k, v, gm[k], &problems, &notes)
		}
	}
	return problems, notes, nil
}

// hasStatusSubresource reports whether discovery lists resource/status.
func hasStatusSubresource(ctx context.Context, cs kubernetes.Interface, group, version, resource string) bool {
	gv := version
	if group != "" {
		gv = group + "/" + version
	}
	list, err := cs.Discovery().ServerResourcesForGroupVersion(gv)
	if err != nil {
		return false
	}
	for _, r := range list.APIResources {
		if r.Name == resource+"/status" {
			return true
		}
	}
	return false
}

// normalize gives both sides the same JSON types (float64 numbers).
func normalize(m map[string]any) map[string]any {
	data, err := json.Marshal(m)
	if err != nil {
		return m
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		return m
	}
	return out
}

// compare records, by JSON path, what was pruned or changed between what was
// sent and what was stored, and as notes what was added.
func compare(path string, sent, got any, problems, notes *[]string) {
	switch s := sent.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			if got == nil {
				*problems = append(*problems, "pruned "+path)
			} else {
				*problems = append(*problems, fmt.Sprintf("changed %s: sent an object, stored %s", path, short(got)))
			}
			return
		}
		for _, k := range slices.Sorted(maps.Keys(s)) {
			if _, ok := g[k]; !ok {
				*problems = append(*problems, "pruned "+path+"."+k)
				continue
			}
			compare(path+"."+k, s[k], g[k], problems, notes)
		}
		for _, k := range slices.Sorted(maps.Keys(g)) {
			if _, ok := s[k]; !ok {
				*notes = append(*notes, fmt.Sprintf("defaulted %s.%s = %s", path, k, short(g[k])))
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(s) {
			*problems = append(*problems, fmt.Sprintf("changed %s: sent %d items, stored %s", path, len(s), short(got)))
			return
		}
		for i := range s {
			compare(fmt.Sprintf("%s[%d]", path, i), s[i], g[i], problems, notes)
		}
	default:
		if !reflect.DeepEqual(sent, got) {
			*problems = append(*problems, fmt.Sprintf("changed %s: sent %s, stored %s", path, short(sent), short(got)))
		}
	}
}

func short(v any) string {
	data, _ := json.Marshal(v)
	s := string(data)
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return strings.TrimSpace(s)
}
