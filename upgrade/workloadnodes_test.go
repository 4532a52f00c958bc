package upgrade

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/demo/release"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
)

// workloadState is a workload cluster seen from its management cluster: its
// Machines, and the management cluster's own Nodes (all Ready) as they were
// published for it before the watchers held them back.
func workloadState(machines ...*model.Machine) *model.ClusterState {
	return &model.ClusterState{
		Sources: map[model.Kind]model.SourceStatus{
			model.KindMachine: {Installed: true, Synced: true},
			model.KindNode:    {Installed: true, Synced: true},
		},
		Cluster:  &model.EKSACluster{Meta: model.Meta{Name: "w1"}, ManagementCluster: "mgmt"},
		Machines: model.ListOf(machines...),
		Nodes: model.ListOf(&model.Node{Meta: model.Meta{Name: "mgmt-cp-a", Labels: map[string]string{model.LabelUpgradeInProgress: "true"}}, Ready: true},
			&model.Node{Meta: model.Meta{Name: "mgmt-md-0-a"}, Ready: true}),
	}
}

func workloadMachine(name, node string, conds ...model.Condition) *model.Machine {
	return &model.Machine{Meta: model.Meta{Name: name}, Role: model.RoleWorker, NodeName: node, Phase: "Running", Conditions: conds}
}

// nodes-ready of a workload cluster reads its Machines' node conditions:
// the Nodes of this API server are the management cluster's, and read all
// Ready while the workload cluster's were not.
func TestNodesReadyOfAWorkloadClusterReadsItsMachines(t *testing.T) {
	notReady := model.Condition{Type: model.MachineConditionNodeReady, Status: "False", Reason: "KubeletNotReady"}
	deleting := func(m *model.Machine) *model.Machine {
		m.DeletionTimestamp = time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
		return m
	}
	ready := model.Condition{Type: model.MachineConditionNodeReady, Status: "True"}
	healthy := model.Condition{Type: model.MachineConditionNodeHealthy, Status: "True"}
	for _, tc := range []struct {
		name     string
		machines []*model.Machine
		status   model.CheckStatus
		want     string
	}{
		{"one not ready", []*model.Machine{workloadMachine("w1-md-0-a", "w1-md-0-a", ready), workloadMachine("w1-md-0-b", "w1-md-0-b", notReady)},
			model.CheckFail, "1 of 2 nodes not Ready by their Machines' NodeReady/NodeHealthy conditions: w1-md-0-b"},
		{"all ready", []*model.Machine{workloadMachine("w1-md-0-a", "w1-md-0-a", ready), workloadMachine("w1-md-0-b", "w1-md-0-b", healthy)},
			model.CheckPass, "all 2 nodes Ready by their Machines' NodeReady/NodeHealthy conditions"},
		{"no condition", []*model.Machine{workloadMachine("w1-md-0-a", "w1-md-0-a")},
			model.CheckWarn, "health is unknown: w1-md-0-a"},
		{"no machine", nil, model.CheckWarn, "no Machine of the cluster is visible: node health unknown"},
		// A Machine provisioning has no node to be Ready (D7: it failed
		// the check as "w1-md-0-b (no node yet)" not Ready).
		{"no node yet", []*model.Machine{workloadMachine("w1-md-0-a", "w1-md-0-a", ready), workloadMachine("w1-md-0-b", "")},
			model.CheckPass, "all 1 nodes Ready by their Machines' NodeReady/NodeHealthy conditions"},
		{"all provisioning", []*model.Machine{workloadMachine("w1-md-0-a", ""), workloadMachine("w1-md-0-b", "")},
			model.CheckWarn, "none of the cluster's 2 Machines has a node yet (all provisioning)"},
		// A Machine being deleted is going: its node is not one the
		// upgrade waits for.
		{"one going away", []*model.Machine{workloadMachine("w1-md-0-a", "w1-md-0-a", ready), deleting(workloadMachine("w1-md-0-b", "w1-md-0-b", notReady))},
			model.CheckPass, "all 1 nodes Ready by their Machines' NodeReady/NodeHealthy conditions"},
	} {
		r := checkNodes(context.Background(), &Inputs{State: workloadState(tc.machines...)})
		if r.Status != tc.status || !strings.Contains(r.Message, tc.want) || !strings.Contains(r.Message, "its Nodes are on its own API server") {
			t.Errorf("%s: nodes-ready = %+v, want %s with %q", tc.name, r, tc.status, tc.want)
		}
		if strings.Contains(r.Message, "mgmt-cp-a") || strings.Contains(r.Message, "mgmt-md-0-a") {
			t.Errorf("%s: nodes-ready names the management cluster's Nodes: %+v", tc.name, r)
		}
	}
	// Machines not listed yet: not "no Machine", which would say none is
	// there.
	s := workloadState()
	s.Sources[model.KindMachine] = model.SourceStatus{Installed: true}
	if r := checkNodes(context.Background(), &Inputs{State: s}); r.Status != model.CheckWarn || !strings.Contains(r.Message, "its Machines, which say how they are, are not visible") {
		t.Errorf("Machines not synced: nodes-ready = %+v", r)
	}
}

// The upgrade-in-progress label of a workload cluster's node is on its own
// API server: the management cluster's labelled Node failed the check as
// the workload cluster's leftover.
func TestNodeLabelCheckOfAWorkloadClusterSaysItIsNotChecked(t *testing.T) {
	r := checkNodeLabel(context.Background(), &Inputs{State: workloadState()})
	if r.Status != model.CheckWarn || r.Blocking || !strings.Contains(r.Message, "not checked") || strings.Contains(r.Message, "mgmt-cp-a") {
		t.Errorf("node-upgrade-label of a workload cluster = %+v", r)
	}
}

// A workload cluster has no management components of its own: they are its
// management cluster's, whose Cluster (in the same namespace) says their
// version. Read from the workload Cluster, which has no annotation, they
// were its own spec.eksaVersion, and management-components failed its
// upgrade as ahead of them, with an `eksctl anywhere upgrade
// management-components` that EKS-A refuses for a cluster that is not
// self-managed; the diff listed them as changing.
func TestPlanOfAWorkloadClusterReadsItsManagementClustersComponents(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	const mgr = "boss"
	clusters := w.client.Dynamic.Resource(GVREKSACluster).Namespace(w.ns)
	mgmt := w.managedBy(t, mgr)
	check := func(what string, status model.CheckStatus, in string) *Plan {
		t.Helper()
		p := w.plan(t)
		r := result(p, CheckManagementComponents)
		if r.Status != status || !strings.Contains(r.Message+" "+r.Remediation, in) {
			t.Errorf("%s: management-components = %+v, want %s with %q", what, r, status, in)
		}
		for _, c := range p.Components {
			if model.LookupComponent(c.Key).Management {
				t.Errorf("%s: the diff has the management component %s (%s → %s)", what, c.Key, c.OldVersion, c.NewVersion)
			}
		}
		return p
	}

	check("no management Cluster", model.CheckWarn, "the version of the components of management cluster "+mgr+" is unknown: the management cluster's Cluster "+mgr+" is neither in namespace "+w.ns+" (the workload cluster's) nor in any other namespace")

	// The management cluster, its components at the target release.
	boss := &unstructured.Unstructured{Object: map[string]any{"apiVersion": mgmt.GetAPIVersion(), "kind": mgmt.GetKind(), "spec": mgmt.Object["spec"]}}
	boss.SetName(mgr)
	boss.SetNamespace(w.ns)
	boss.SetAnnotations(map[string]string{model.AnnotationManagementComponentsVersion: release.Target.Version})
	if err := unstructured.SetNestedField(boss.Object, mgr, "spec", "managementCluster", "name"); err != nil {
		t.Fatal(err)
	}
	if _, err := clusters.Create(ctx, boss, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if p := check("components at the target", model.CheckPass, "management components of "+mgr+" at "+release.Target.Version); p.Versions.Management != release.Target.Version {
		t.Errorf("plan's management components %q, want %s (%s's)", p.Versions.Management, release.Target.Version, mgr)
	}

	// Behind the target: the management cluster is upgraded first.
	boss, err := clusters.Get(ctx, mgr, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	boss.SetAnnotations(map[string]string{model.AnnotationManagementComponentsVersion: release.Current.Version})
	if _, err := clusters.Update(ctx, boss, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	check("components behind", model.CheckFail, "upgrade management cluster "+mgr+" first")
}

// EKS-A looks for a workload cluster's management Cluster in the workload
// cluster's namespace, else in every namespace by name
// (FetchManagementEksaCluster), one found or an error. Read in the
// workload cluster's namespace alone, a management cluster in another
// namespace was "not found" and its components' version unknown.
func TestPlanOfAWorkloadClusterFindsItsManagementClusterInAnotherNamespace(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	// Unique on the shared API server: the lookup lists every namespace.
	mgr := "boss-" + w.ns
	clusters := w.client.Dynamic.Resource(GVREKSACluster)
	mgmt := w.managedBy(t, mgr)
	create := func(version string) string {
		t.Helper()
		ns := cptest.Namespace(t, env.Config)
		boss := &unstructured.Unstructured{Object: map[string]any{"apiVersion": mgmt.GetAPIVersion(), "kind": mgmt.GetKind(), "spec": mgmt.Object["spec"]}}
		boss.SetName(mgr)
		boss.SetNamespace(ns)
		boss.SetAnnotations(map[string]string{model.AnnotationManagementComponentsVersion: version})
		if err := unstructured.SetNestedField(boss.Object, mgr, "spec", "managementCluster", "name"); err != nil {
			t.Fatal(err)
		}
		if _, err := clusters.Namespace(ns).Create(ctx, boss, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		return ns
	}
	check := func(what string, status model.CheckStatus, in ...string) {
		t.Helper()
		r := result(w.plan(t), CheckManagementComponents)
		for _, s := range in {
			if r.Status != status || !strings.Contains(r.Message+" "+r.Remediation, s) {
				t.Errorf("%s: management-components = %+v, want %s with %q", what, r, status, s)
			}
		}
	}

	// Behind the target, in a namespace of its own: found, and judged.
	other := create(release.Current.Version)
	check("in another namespace", model.CheckFail, "the components of management cluster "+mgr+" are at "+release.Current.Version)

	// Two of that name elsewhere: which one manages it is not known.
	third := create(release.Target.Version)
	nss := []string{other, third}
	slices.Sort(nss)
	check("in two other namespaces", model.CheckWarn,
		"is not in namespace "+w.ns+" (the workload cluster's) but in 2 others ("+strings.Join(nss, ", ")+")",
		"--field-selector metadata.name="+mgr)

	// One in the workload cluster's namespace is the one, as to EKS-A.
	create2 := &unstructured.Unstructured{Object: map[string]any{"apiVersion": mgmt.GetAPIVersion(), "kind": mgmt.GetKind(), "spec": mgmt.Object["spec"]}}
	create2.SetName(mgr)
	create2.SetNamespace(w.ns)
	create2.SetAnnotations(map[string]string{model.AnnotationManagementComponentsVersion: release.Target.Version})
	if err := unstructured.SetNestedField(create2.Object, mgr, "spec", "managementCluster", "name"); err != nil {
		t.Fatal(err)
	}
	if _, err := clusters.Namespace(w.ns).Create(ctx, create2, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	check("in the workload cluster's namespace too", model.CheckPass, "management components of "+mgr+" at "+release.Target.Version)
}

// managedBy makes the world's Cluster a workload cluster of mgr, as EKS-A
// makes one (no management-components annotation of its own), and returns
// the Cluster as it was, to copy as mgr's.
func (w *world) managedBy(t *testing.T, mgr string) *unstructured.Unstructured {
	t.Helper()
	mgmt, err := w.client.Dynamic.Resource(GVREKSACluster).Namespace(w.ns).Get(context.Background(), w.cfg.ClusterName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.cluster(t, false, func(u *unstructured.Unstructured) {
		u.SetAnnotations(merge(u.GetAnnotations(), model.AnnotationManagementComponentsVersion, ""))
		if err := unstructured.SetNestedField(u.Object, mgr, "spec", "managementCluster", "name"); err != nil {
			t.Fatal(err)
		}
	})
	return mgmt
}
