package upgrade

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/serverdate"
)

// The kinds the package reads and writes. EKS-A and etcdadm kinds are read
// at their only served/storage versions. The Cluster API kinds are given at
// v1beta2 (the storage version since CAPI v1.11) but read at the version the
// API server serves (Client.CAPIResource): the CAPI releases before v1.11,
// which EKS-A's Bundles of 2024 and 2025 name (v1.8.5, v1.9.4), serve
// v1beta1 alone.
var (
	GVREKSACluster    = schema.GroupVersionResource{Group: "anywhere.eks.amazonaws.com", Version: "v1alpha1", Resource: "clusters"}
	GVRBundles        = schema.GroupVersionResource{Group: "anywhere.eks.amazonaws.com", Version: "v1alpha1", Resource: "bundles"}
	GVREKSARelease    = schema.GroupVersionResource{Group: "anywhere.eks.amazonaws.com", Version: "v1alpha1", Resource: "eksareleases"}
	GVRKCP            = schema.GroupVersionResource{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta2", Resource: "kubeadmcontrolplanes"}
	GVRMachineDeploy  = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "machinedeployments"}
	GVRMachine        = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "machines"}
	GVREtcdadmCluster = schema.GroupVersionResource{Group: "etcdcluster.cluster.x-k8s.io", Version: "v1beta1", Resource: "etcdadmclusters"}
)

// capiKinds are the kinds of the Cluster API resources the console reads,
// which CAPIResource needs to ask the REST mapper.
var capiKinds = map[schema.GroupResource]string{
	GVRKCP.GroupResource():           "KubeadmControlPlane",
	GVRMachineDeploy.GroupResource(): "MachineDeployment",
	GVRMachine.GroupResource():       "Machine",
}

// CAPIVersions are the Cluster API versions the console reads, the
// preferred first.
var CAPIVersions = []string{"v1beta2", "v1beta1"}

// Client bundles the API clients the package needs: typed for core kinds
// (Lease, ConfigMap, Node), dynamic for the CRDs and for the arbitrary
// provider objects of a cluster spec, and a REST mapper to find the resource
// of a document's kind.
type Client struct {
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	Mapper  meta.ResettableRESTMapper
	// System is the namespace of everything EKS-A generates and of the
	// console's own objects (lock, snapshots); empty means eksa-system.
	// Tests isolate worlds by giving each its own.
	System string
}

// Sys returns the system namespace.
func (c *Client) Sys() string {
	if c == nil || c.System == "" {
		return model.SystemNamespace
	}
	return c.System
}

// NewClient builds the clients from a rest config. The preflight checks read a
// dozen kinds at once, so the client-go default rate limit (5 QPS, burst 10)
// is raised to keep them from queueing behind each other.
func NewClient(cfg *rest.Config) (*Client, error) {
	cfg = rest.CopyConfig(cfg)
	// The upgrade lock is judged by the API server's clock (servertime.go).
	cfg.Wrap(serverdate.Wrap(time.Now))
	if cfg.QPS == 0 {
		cfg.QPS = 50
		cfg.Burst = 100
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	return &Client{
		Kube:    kube,
		Dynamic: dyn,
		Mapper:  restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)),
	}, nil
}

// CAPIResource returns a Cluster API resource (GVRKCP, GVRMachineDeploy,
// GVRMachine) at the first of CAPIVersions the API server serves. Any other
// resource, and every resource of a Client without a REST mapper (tests'),
// is returned as given. The fields the console reads are where both
// versions keep them, but for references: v1beta1 names a referenced
// object's apiVersion, v1beta2 its apiGroup.
func (c *Client) CAPIResource(gvr schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	kind, ok := capiKinds[gvr.GroupResource()]
	if !ok || c == nil || c.Mapper == nil {
		return gvr, nil
	}
	gk := schema.GroupKind{Group: gvr.Group, Kind: kind}
	m, err := c.Mapper.RESTMapping(gk, CAPIVersions...)
	if meta.IsNoMatchError(err) {
		c.Mapper.Reset()
		m, err = c.Mapper.RESTMapping(gk, CAPIVersions...)
	}
	if err != nil {
		if meta.IsNoMatchError(err) {
			return gvr, fmt.Errorf("the API server serves no %s.%s at %s: Cluster API is not installed, or is a release this console does not read", kind, gvr.Group, strings.Join(CAPIVersions, " or "))
		}
		return gvr, fmt.Errorf("find the served version of %s.%s: %w", kind, gvr.Group, err)
	}
	return m.Resource, nil
}

// mapping finds the resource of a kind, refreshing discovery once when the
// kind is unknown (its CRD may have been installed since the cache was filled).
func (c *Client) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		c.Mapper.Reset()
		m, err = c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	return m, err
}
