package upgrade

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
)

func TestUniqueSkipsKeepsFirstSeenOrder(t *testing.T) {
	got := uniqueSkips([]string{CheckNodesReady, CheckWorkersReady, CheckNodesReady, CheckWorkersReady, CheckNoFailureMessage})
	want := []string{CheckNodesReady, CheckWorkersReady, CheckNoFailureMessage}
	if !slices.Equal(got, want) {
		t.Errorf("uniqueSkips = %v, want %v", got, want)
	}
	if got := uniqueSkips(nil); got != nil {
		t.Errorf("uniqueSkips(nil) = %v, want nil (omitted from JSON)", got)
	}
}

// plan --skip X --skip X lists X once in the plan (and so in its JSON and
// the audit log).
func TestPlanSkipGivenTwiceIsListedOnce(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	p := w.plan(t, CheckNodesReady, CheckWorkersReady, CheckNodesReady)
	if want := []string{CheckNodesReady, CheckWorkersReady}; !slices.Equal(p.Skipped, want) {
		t.Errorf("Skipped = %v, want %v", p.Skipped, want)
	}
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"skipped":["` + CheckNodesReady + `","` + CheckWorkersReady + `"]`; !strings.Contains(string(data), want) {
		t.Errorf("plan JSON lacks %s", want)
	}
}

// A spec whose eksaVersion EKS-A refuses for the cluster has no EKSARelease
// in it: the plan said the release was missing and told the operator to
// install that version's management components first (a downgrade, minors
// skipped, a "banana CLI"). The version's own fault is said instead; a
// version EKS-A takes whose release is missing keeps that advice.
func TestPlanSaysARefusedEKSAVersionBeforeItsMissingRelease(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	for _, tc := range []struct {
		version, want string
	}{
		{"v0.19.0", "is a downgrade"},
		{"v0.23.0", "skips 2 minor version(s)"},
		{"banana", "cannot read the target EKS-A version"},
		{"v0.21.9", "install them first"},
		// Below the management components (v0.21.2 in the demo), a skew
		// EKS-A takes: installing that release's components, the advice,
		// would downgrade them.
		{"v0.21.0", "older than the management components (v0.21.2)"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			spec := &SpecFile{Path: "target.yaml", Cluster: w.spec.Cluster.DeepCopy()}
			if err := unstructured.SetNestedField(spec.Cluster.Object, tc.version, "spec", "eksaVersion"); err != nil {
				t.Fatal(err)
			}
			spec.Docs = []*unstructured.Unstructured{spec.Cluster}
			_, err := w.planner.Plan(context.Background(), PlanRequest{Cluster: w.cfg.ClusterName, Namespace: w.ns, Spec: spec})
			var in *model.InputError
			if !errors.As(err, &in) || !strings.Contains(in.Error(), tc.want) {
				t.Fatalf("plan: %v, want an input error saying %q", err, tc.want)
			}
			if tc.want != "install them first" && (strings.Contains(in.Error(), "install them first") || !strings.Contains(in.Error(), "target.yaml") || !strings.Contains(in.Error(), "spec.eksaVersion")) {
				t.Errorf("the error does not name the file and field, or advises the install: %v", in)
			}
		})
	}
}
