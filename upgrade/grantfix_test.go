package upgrade

import (
	"context"
	"strings"
	"testing"

	"github.com/upgrade-console/upgrade-console/model"
)

// A check that cannot read what it judges names the RBAC rule that grants
// it: "use a kubeconfig that may list nodes" and "check --cluster,
// --namespace and the kubeconfig's permissions" left the operator to find
// the rule, and nodes-ready did not say it may be skipped.
func TestForbiddenChecksNameTheRule(t *testing.T) {
	in := &Inputs{State: &model.ClusterState{Sources: map[model.Kind]model.SourceStatus{
		model.KindNode:        {Installed: true, Synced: true, Forbidden: "list nodes (cluster-wide)"},
		model.KindEKSACluster: {Installed: true, Synced: true, Forbidden: "list clusters.anywhere.eks.amazonaws.com in default"},
	}}}
	r := checkNodes(context.Background(), in)
	if r.Status != model.CheckFail || !strings.Contains(r.Remediation, "grant a ClusterRole with {apiGroups: [\"\"], resources: [nodes], verbs: [list, watch]}") ||
		!strings.Contains(r.Remediation, "--skip nodes-ready") {
		t.Errorf("nodes-ready: %+v", r)
	}
	r = checkPaused(context.Background(), in)
	if r.Status != model.CheckFail || !strings.Contains(r.Remediation, "grant a Role in default with {apiGroups: [\"anywhere.eks.amazonaws.com\"], resources: [clusters], verbs: [list, watch]}") {
		t.Errorf("eksa-reconcile-not-paused: %+v", r)
	}
}
