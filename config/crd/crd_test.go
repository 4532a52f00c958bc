package crd_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/upgrade-console/upgrade-console/config/crd"
)

// identity is what a client sees of a CRD: how it is addressed and listed.
type identity struct {
	Group, Kind, ListKind, Plural, Singular string
	ShortNames                              []string
	Scope                                   apiextensionsv1.ResourceScope
	Version                                 string // served and storage
	Status                                  bool
	Columns                                 []string // name=jsonPath
}

func identityOf(c *apiextensionsv1.CustomResourceDefinition) identity {
	id := identity{
		Group: c.Spec.Group, Kind: c.Spec.Names.Kind, ListKind: c.Spec.Names.ListKind,
		Plural: c.Spec.Names.Plural, Singular: c.Spec.Names.Singular,
		ShortNames: c.Spec.Names.ShortNames, Scope: c.Spec.Scope,
	}
	for _, v := range c.Spec.Versions {
		if !v.Storage {
			continue
		}
		id.Version = v.Name
		id.Status = v.Subresources != nil && v.Subresources.Status != nil
		for _, col := range v.AdditionalPrinterColumns {
			id.Columns = append(id.Columns, col.Name+"="+col.JSONPath)
		}
	}
	return id
}

var inPlaceColumns = func(target string) []string {
	return []string{target, "Upgraded=.status.upgraded", "PendingUpgrade=.status.requireUpgrade",
		"Ready=.status.ready", "Age=.metadata.creationTimestamp", "KubernetesVersion=.spec.kubernetesVersion"}
}

var nodeColumns = []string{"Machine=.spec.machine.name", "Ready=.status.completed",
	"Age=.metadata.creationTimestamp", "KubernetesVersion=.spec.kubernetesVersion"}

// What EKS-A and etcdadm-controller publish (eksa-api-facts §1, §2, §5, §6;
// the vSphere kinds as in EKS-A's config/crd/bases);
// the compatibility check below compares with the real files when present.
var want = map[string]identity{
	"clusters.anywhere.eks.amazonaws.com": {Group: "anywhere.eks.amazonaws.com", Kind: "Cluster", ListKind: "ClusterList",
		Plural: "clusters", Singular: "cluster", Scope: apiextensionsv1.NamespaceScoped, Version: "v1alpha1", Status: true},
	"bundles.anywhere.eks.amazonaws.com": {Group: "anywhere.eks.amazonaws.com", Kind: "Bundles", ListKind: "BundlesList",
		Plural: "bundles", Singular: "bundles", Scope: apiextensionsv1.NamespaceScoped, Version: "v1alpha1", Status: true},
	"eksareleases.anywhere.eks.amazonaws.com": {Group: "anywhere.eks.amazonaws.com", Kind: "EKSARelease", ListKind: "EKSAReleaseList",
		Plural: "eksareleases", Singular: "eksarelease", Scope: apiextensionsv1.NamespaceScoped, Version: "v1alpha1", Status: true},
	"controlplaneupgrades.anywhere.eks.amazonaws.com": {Group: "anywhere.eks.amazonaws.com", Kind: "ControlPlaneUpgrade",
		ListKind: "ControlPlaneUpgradeList", Plural: "controlplaneupgrades", Singular: "controlplaneupgrade", ShortNames: []string{"cpu"},
		Scope: apiextensionsv1.NamespaceScoped, Version: "v1alpha1", Status: true,
		Columns: inPlaceColumns("KubeadmControlPlane=.spec.controlPlane.name")},
	"machinedeploymentupgrades.anywhere.eks.amazonaws.com": {Group: "anywhere.eks.amazonaws.com", Kind: "MachineDeploymentUpgrade",
		ListKind: "MachineDeploymentUpgradeList", Plural: "machinedeploymentupgrades", Singular: "machinedeploymentupgrade", ShortNames: []string{"mdu"},
		Scope: apiextensionsv1.NamespaceScoped, Version: "v1alpha1", Status: true,
		Columns: inPlaceColumns("Machine Deployment=.spec.machineDeployment.name")},
	"nodeupgrades.anywhere.eks.amazonaws.com": {Group: "anywhere.eks.amazonaws.com", Kind: "NodeUpgrade", ListKind: "NodeUpgradeList",
		Plural: "nodeupgrades", Singular: "nodeupgrade", ShortNames: []string{"nu"}, Scope: apiextensionsv1.NamespaceScoped,
		Version: "v1alpha1", Status: true, Columns: nodeColumns},
	"nodekubeadmupgrades.anywhere.eks.amazonaws.com": {Group: "anywhere.eks.amazonaws.com", Kind: "NodeKubeadmUpgrade", ListKind: "NodeKubeadmUpgradeList",
		Plural: "nodekubeadmupgrades", Singular: "nodekubeadmupgrade", ShortNames: []string{"nku"}, Scope: apiextensionsv1.NamespaceScoped,
		Version: "v1alpha1", Status: true, Columns: nodeColumns},
	"vspheredatacenterconfigs.anywhere.eks.amazonaws.com": {Group: "anywhere.eks.amazonaws.com", Kind: "VSphereDatacenterConfig",
		ListKind: "VSphereDatacenterConfigList", Plural: "vspheredatacenterconfigs", Singular: "vspheredatacenterconfig",
		Scope: apiextensionsv1.NamespaceScoped, Version: "v1alpha1", Status: true},
	"vspheremachineconfigs.anywhere.eks.amazonaws.com": {Group: "anywhere.eks.amazonaws.com", Kind: "VSphereMachineConfig",
		ListKind: "VSphereMachineConfigList", Plural: "vspheremachineconfigs", Singular: "vspheremachineconfig",
		Scope: apiextensionsv1.NamespaceScoped, Version: "v1alpha1", Status: true},
	"etcdadmclusters.etcdcluster.cluster.x-k8s.io": {Group: "etcdcluster.cluster.x-k8s.io", Kind: "EtcdadmCluster", ListKind: "EtcdadmClusterList",
		Plural: "etcdadmclusters", Singular: "etcdadmcluster", Scope: apiextensionsv1.NamespaceScoped, Version: "v1beta1", Status: true},
}

func TestObjects(t *testing.T) {
	crds, err := crd.Objects()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]identity{}
	for _, c := range crds {
		got[c.Name] = identityOf(c)
		if len(c.Spec.Versions) != 1 || !c.Spec.Versions[0].Served || !c.Spec.Versions[0].Storage {
			t.Errorf("%s: want exactly one version, served and storage", c.Name)
		}
		if c.Spec.Names.Plural+"."+c.Spec.Group != c.Name {
			t.Errorf("%s: name is not <plural>.<group>", c.Name)
		}
	}
	for name, w := range want {
		if g, ok := got[name]; !ok {
			t.Errorf("missing CRD %s", name)
		} else if !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\n got  %+v\n want %+v", name, g, w)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("unexpected CRD %s", name)
		}
	}
}

// Every project CRD has a sample object and every sample has a project CRD,
// so the round-trip and compatibility checks cover every kind.
func TestSampleObjectsCoverEveryKind(t *testing.T) {
	crds, err := crd.Objects()
	if err != nil {
		t.Fatal(err)
	}
	objs, err := crd.SampleObjects()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, o := range objs {
		kinds[o.GroupVersionKind().GroupKind().String()] = true
		if o.GetName() == "" || o.GetNamespace() == "" {
			t.Errorf("sample %s without name or namespace", o.GetKind())
		}
	}
	for _, c := range crds {
		gk := c.Spec.Names.Kind + "." + c.Spec.Group
		if !kinds[gk] {
			t.Errorf("no sample object of %s", gk)
		}
		delete(kinds, gk)
	}
	for gk := range kinds {
		t.Errorf("sample of %s, which the project does not define", gk)
	}
}

func TestCAPIObjects(t *testing.T) {
	crds, err := crd.CAPIObjects(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range crds {
		names = append(names, c.Name)
		storage := ""
		for _, v := range c.Spec.Versions {
			if v.Storage {
				storage = v.Name
			}
		}
		if storage != "v1beta2" {
			t.Errorf("%s: storage version %q, want v1beta2", c.Name, storage)
		}
	}
	for _, n := range []string{
		"clusters.cluster.x-k8s.io", "machines.cluster.x-k8s.io", "machinesets.cluster.x-k8s.io",
		"machinedeployments.cluster.x-k8s.io", "machinehealthchecks.cluster.x-k8s.io",
		"kubeadmcontrolplanes.controlplane.cluster.x-k8s.io", "kubeadmcontrolplanetemplates.controlplane.cluster.x-k8s.io",
		"kubeadmconfigs.bootstrap.cluster.x-k8s.io", "kubeadmconfigtemplates.bootstrap.cluster.x-k8s.io",
	} {
		if !slices.Contains(names, n) {
			t.Errorf("missing CAPI CRD %s (have %v)", n, names)
		}
	}
}

func TestReadDirRejectsEmptyDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.yaml"), []byte("kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := crd.ReadDir(dir); err == nil {
		t.Fatal("a directory without CRDs was accepted")
	}
}

// With UPSTREAM_CRDS set (make compat), every project CRD that has an
// upstream counterpart is addressed exactly like it: same group, names,
// scope, storage version, status subresource and printer columns.
func TestUpstreamCRDIdentity(t *testing.T) {
	dir := os.Getenv("UPSTREAM_CRDS")
	if dir == "" {
		t.Skip("UPSTREAM_CRDS is not set: the comparison with the upstream CRDs is opt-in (make compat)")
	}
	upstream, err := crd.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	own, err := crd.Objects()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, c := range upstream {
		byName[c.Name] = c
	}
	for _, c := range own {
		up, ok := byName[c.Name]
		if !ok {
			t.Logf("%s: no upstream CRD in %s; not compared", c.Name, dir)
			continue
		}
		if g, w := identityOf(c), identityOf(up); !reflect.DeepEqual(g, w) {
			t.Errorf("%s differs from upstream:\n project  %+v\n upstream %+v", c.Name, g, w)
		}
	}
}
