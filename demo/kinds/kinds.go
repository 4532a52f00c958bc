// Package kinds names the API resources of the demo world: group, version
// and resource of every kind the seed creates and the simulated controllers
// watch. CAPI objects are written and read at v1beta2 only (the local control
// plane serves v1beta1 too, without conversion).
package kinds

import "k8s.io/apimachinery/pkg/runtime/schema"

const (
	EKSAGroup    = "anywhere.eks.amazonaws.com"
	EKSAVersion  = EKSAGroup + "/v1alpha1"
	CAPIGroup    = "cluster.x-k8s.io"
	CAPIVersion  = CAPIGroup + "/v1beta2"
	KCPGroup     = "controlplane.cluster.x-k8s.io"
	KCPVersion   = KCPGroup + "/v1beta2"
	EtcdGroup    = "etcdcluster.cluster.x-k8s.io"
	EtcdVersion  = EtcdGroup + "/v1beta1"
	InfraGroup   = "infrastructure.cluster.x-k8s.io"
	BootstrapGrp = "bootstrap.cluster.x-k8s.io"
)

var (
	EKSACluster              = schema.GroupVersionResource{Group: EKSAGroup, Version: "v1alpha1", Resource: "clusters"}
	Bundles                  = schema.GroupVersionResource{Group: EKSAGroup, Version: "v1alpha1", Resource: "bundles"}
	EKSARelease              = schema.GroupVersionResource{Group: EKSAGroup, Version: "v1alpha1", Resource: "eksareleases"}
	ControlPlaneUpgrade      = schema.GroupVersionResource{Group: EKSAGroup, Version: "v1alpha1", Resource: "controlplaneupgrades"}
	MachineDeploymentUpgrade = schema.GroupVersionResource{Group: EKSAGroup, Version: "v1alpha1", Resource: "machinedeploymentupgrades"}
	NodeUpgrade              = schema.GroupVersionResource{Group: EKSAGroup, Version: "v1alpha1", Resource: "nodeupgrades"}
	VSphereDatacenterConfig  = schema.GroupVersionResource{Group: EKSAGroup, Version: "v1alpha1", Resource: "vspheredatacenterconfigs"}
	VSphereMachineConfig     = schema.GroupVersionResource{Group: EKSAGroup, Version: "v1alpha1", Resource: "vspheremachineconfigs"}

	// SpecKinds are the resources of the kinds a demo cluster spec file
	// holds (all in EKSAVersion), by kind.
	SpecKinds = map[string]schema.GroupVersionResource{
		"Cluster":                 EKSACluster,
		"VSphereDatacenterConfig": VSphereDatacenterConfig,
		"VSphereMachineConfig":    VSphereMachineConfig,
	}

	CAPICluster        = schema.GroupVersionResource{Group: CAPIGroup, Version: "v1beta2", Resource: "clusters"}
	Machine            = schema.GroupVersionResource{Group: CAPIGroup, Version: "v1beta2", Resource: "machines"}
	MachineSet         = schema.GroupVersionResource{Group: CAPIGroup, Version: "v1beta2", Resource: "machinesets"}
	MachineDeployment  = schema.GroupVersionResource{Group: CAPIGroup, Version: "v1beta2", Resource: "machinedeployments"}
	MachineHealthCheck = schema.GroupVersionResource{Group: CAPIGroup, Version: "v1beta2", Resource: "machinehealthchecks"}
	KCP                = schema.GroupVersionResource{Group: KCPGroup, Version: "v1beta2", Resource: "kubeadmcontrolplanes"}
	EtcdadmCluster     = schema.GroupVersionResource{Group: EtcdGroup, Version: "v1beta1", Resource: "etcdadmclusters"}
)
