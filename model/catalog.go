package model

import "sort"

// KeyKubernetes is the catalog key of the kubernetes row. It is the bundle's
// eksD key: EKS-D carries no version field, its version is derived
// (EksD.Version).
const KeyKubernetes = "eksD"

// Component is one row of the bundle diff: a versions-bundle key with a
// display name an operator cannot confuse with another row.
type Component struct {
	// Key is the versions-bundle JSON key (certManager, controlPlane, …); it is
	// stable and what scripts should match on.
	Key string
	// Name is what the console shows. Upstream calls both the control-plane
	// and the bootstrap provider "kubeadm"; the names here tell them apart.
	Name string
	// Management components are read from versionsBundles[0], as EKS-A does
	// (ManagementComponentsFromBundles); the others from the versions bundle of
	// the cluster's Kubernetes version.
	Management bool
	// Image components have no version field: Key is the path of an image
	// inside the versions bundle (upgrader.upgrader), and their row shows
	// the tag of its uri.
	Image bool
	// Provider rows are infrastructure providers: a cluster runs one, and
	// EKS-A upgrades that one alone.
	Provider bool
}

// catalog is in the row order of `eksctl anywhere upgrade plan cluster`
// (management components, then cilium and kubernetes), followed by the
// components EKS-A ships but does not plan, so operators see the familiar
// order first.
var catalog = []Component{
	{Key: "eksa", Name: "EKS-A management", Management: true},
	{Key: "flux", Name: "Flux", Management: true},
	{Key: "certManager", Name: "cert-manager", Management: true},
	{Key: "clusterAPI", Name: "cluster-api", Management: true},
	{Key: "controlPlane", Name: "kubeadm control plane", Management: true},
	{Key: "vSphere", Name: "vsphere", Management: true, Provider: true},
	{Key: "docker", Name: "docker", Management: true, Provider: true},
	{Key: "tinkerbell", Name: "tinkerbell", Management: true, Provider: true},
	{Key: "nutanix", Name: "nutanix", Management: true, Provider: true},
	{Key: "snow", Name: "snow", Management: true, Provider: true},
	{Key: "cloudStack", Name: "cloudstack", Management: true, Provider: true},
	{Key: "bootstrap", Name: "kubeadm bootstrap", Management: true},
	{Key: "etcdadmBootstrap", Name: "etcdadm-bootstrap", Management: true},
	{Key: "etcdadmController", Name: "etcdadm-controller", Management: true},
	{Key: "cilium", Name: "cilium"},
	{Key: KeyKubernetes, Name: "kubernetes (EKS-D)"},
	{Key: "kindnetd", Name: "kindnetd"},
	{Key: "packageController", Name: "package controller"},
	{Key: "aws", Name: "aws (deprecated)", Provider: true},
}

// imageCatalog lists the image-only entries of a versions bundle that the
// plan shows, after every versioned row, in this order. Of the images without
// a version these are the ones that change what happens to the nodes, read
// from the versions bundle of the cluster's Kubernetes version:
//   - the upgrader image runs the <node>-node-upgrader pod on every node of
//     an in-place upgrade (EKS-A's in-place-upgrade ConfigMap maps each
//     Kubernetes version to it), which copies the new binaries onto the node
//     and upgrades containerd, kubeadm and the kubelet there; its tag changes
//     with each Kubernetes and EKS-A build, and a node that cannot pull it
//     cannot be upgraded;
//   - the Bottlerocket admin and control host containers are written into
//     the KubeadmControlPlane's and the worker templates' kubeadm config of
//     Bottlerocket nodes, so a new tag is a change of those machines' spec,
//     rolled out to every Bottlerocket node even when nothing else about it
//     changes; their tags are Bottlerocket's own versions, which the plan
//     can order.
//
// Left out, so that the plan lists what an operator acts on: the
// Bottlerocket bootstrap container (bottlerocketHostContainers.kubeadmBootstrap),
// which carries the upgrader's tag and would repeat its row; haproxy, the
// load balancer of the Docker provider's development clusters; kube-vip and
// the other images inside a versioned component, whose version row stands
// for them.
//
// The names say "image": the row's versions are image tags. They are at most
// 24 columns, so that at 80 the plan screen keeps the CHANGE column beside
// EKS-D versions such as v1.30.14-eks-1-30-58 (hence "ctrl").
var imageCatalog = []Component{
	{Key: "upgrader.upgrader", Name: "in-place upgrader image", Image: true},
	{Key: "bottlerocketHostContainers.admin", Name: "bottlerocket admin image", Image: true},
	{Key: "bottlerocketHostContainers.control", Name: "bottlerocket ctrl image", Image: true},
}

var imageIndex = func() map[string]int {
	m := make(map[string]int, len(imageCatalog))
	for i, c := range imageCatalog {
		m[c.Key] = i
	}
	return m
}()

var catalogIndex = func() map[string]int {
	m := make(map[string]int, len(catalog))
	for i, c := range catalog {
		m[c.Key] = i
	}
	return m
}()

// Catalog returns the known components in display order: the versioned
// ones, then the images.
func Catalog() []Component {
	return append(append([]Component(nil), catalog...), imageCatalog...)
}

// LookupComponent returns the catalog entry for a versions-bundle key (or,
// for an image, its path). A key the catalog does not know (a component
// added by a newer EKS-A) is returned with its key as name and read from the
// cluster's versions bundle, so that no versioned component is ever hidden.
func LookupComponent(key string) Component {
	if i, ok := catalogIndex[key]; ok {
		return catalog[i]
	}
	if i, ok := imageIndex[key]; ok {
		return imageCatalog[i]
	}
	return Component{Key: key, Name: key}
}

// SortComponentKeys orders keys as the catalog does; unknown keys follow the
// known ones, alphabetically.
func SortComponentKeys(keys []string) {
	sort.SliceStable(keys, func(i, j int) bool {
		ai, aok := catalogIndex[keys[i]]
		bi, bok := catalogIndex[keys[j]]
		switch {
		case aok && bok:
			return ai < bi
		case aok != bok:
			return aok
		default:
			return keys[i] < keys[j]
		}
	})
}
