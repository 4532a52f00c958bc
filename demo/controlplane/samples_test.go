package controlplane_test

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/config/crd"
	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
)

// The project's CRDs store every sample object (one of each kind, with
// status, as the real controllers write them) without pruning or changing
// a field.
func TestSampleObjectsStoredUnchanged(t *testing.T) {
	objs, err := crd.SampleObjects()
	if err != nil {
		t.Fatal(err)
	}
	ns := cptest.Namespace(t, env.Config)
	for _, o := range objs {
		o.SetNamespace(ns)
	}
	cptest.RoundTrip(t, env.Config, objs)
}

// RoundTrip must catch pruning: a field the schema does not know is
// reported, not silently dropped. (A check that cannot fail proves nothing.)
func TestRoundTripReportsUnknownFields(t *testing.T) {
	objs, err := crd.SampleObjects()
	if err != nil {
		t.Fatal(err)
	}
	var cluster *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "Cluster" {
			cluster = o
		}
	}
	if cluster == nil {
		t.Fatal("no Cluster among the samples")
	}
	cluster.SetNamespace(cptest.Namespace(t, env.Config))
	if err := unstructured.SetNestedField(cluster.Object, "surprise", "spec", "controlPlaneConfiguration", "notAField"); err != nil {
		t.Fatal(err)
	}
	errs := cptest.RoundTripErrors(t.Context(), env.Config, []*unstructured.Unstructured{cluster}, t.Logf)
	if len(errs) == 0 {
		t.Fatal("an unknown field in spec.controlPlaneConfiguration went unreported")
	}
	t.Logf("reported as expected: %v", errs)
}

// The upstream EKS-A and etcdadm CRDs (UPSTREAM_CRDS, opt-in: they are not
// in the repository) accept every sample object unchanged. The demo seed
// runs its objects through the same cptest.UpstreamEnv + cptest.RoundTrip.
func TestUpstreamCRDCompatibility(t *testing.T) {
	up := cptest.UpstreamEnv(t)
	objs, err := crd.SampleObjects()
	if err != nil {
		t.Fatal(err)
	}
	own, err := crd.Objects()
	if err != nil {
		t.Fatal(err)
	}
	upstream, err := crd.ReadDir(os.Getenv(cptest.UpstreamCRDsEnv))
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, c := range upstream {
		have[c.Name] = true
	}
	for _, c := range own {
		if !have[c.Name] {
			t.Logf("no upstream CRD for %s: the project's own is used", c.Name)
		}
	}
	cptest.RoundTrip(t, up.Config, objs)
}
