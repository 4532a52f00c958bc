package cptest

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/upgrade-console/upgrade-console/config/crd"
)

// Export lists every object of the project's own CRD kinds (EKS-A, etcdadm)
// in the given namespaces (repeats ignored), stripped of what the API server sets (uid,
// resourceVersion, generation, timestamps, managed fields) so they can be
// created again elsewhere. It is how objects written by code that talks to
// the API directly (the demo seed, the simulated controllers) reach the
// compatibility check:
//
//	up := cptest.UpstreamEnv(t)                      // skips without UPSTREAM_CRDS
//	... seed into env ...
//	cptest.RoundTrip(t, up.Config, cptest.Export(t, env.Config, ns))
func Export(t testing.TB, cfg *rest.Config, namespaces ...string) []*unstructured.Unstructured {
	t.Helper()
	crds, err := crd.Objects()
	if err != nil {
		t.Fatal(err)
	}
	dyn := Dynamic(t, cfg)
	slices.Sort(namespaces)
	namespaces = slices.Compact(namespaces)
	var out []*unstructured.Unstructured
	for _, c := range crds {
		gvr := schema.GroupVersionResource{Group: c.Spec.Group, Resource: c.Spec.Names.Plural}
		for _, v := range c.Spec.Versions {
			if v.Storage {
				gvr.Version = v.Name
			}
		}
		for _, ns := range namespaces {
			list, err := dyn.Resource(gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatalf("listing %s in %s: %v", gvr.Resource, ns, err)
			}
			for i := range list.Items {
				o := list.Items[i].DeepCopy()
				for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"} {
					unstructured.RemoveNestedField(o.Object, "metadata", f)
				}
				out = append(out, o)
			}
		}
	}
	return out
}
