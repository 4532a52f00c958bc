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
	{Key: "vSphere", Name: "vsphere", Management: true},
	{Key: "docker", Name: "docker", Management: true},
	{Key: "tinkerbell", Name: "tinkerbell", Management: true},
	{Key: "nutanix", Name: "nutanix", Management: true},
	{Key: "snow", Name: "snow", Management: true},
	{Key: "cloudStack", Name: "cloudstack", Management: true},
	{Key: "bootstrap", Name: "kubeadm bootstrap", Management: true},
	{Key: "etcdadmBootstrap", Name: "etcdadm-bootstrap", Management: true},
	{Key: "etcdadmController", Name: "etcdadm-controller", Management: true},
	{Key: "cilium", Name: "cilium"},
	{Key: KeyKubernetes, Name: "kubernetes (EKS-D)"},
	{Key: "kindnetd", Name: "kindnetd"},
	{Key: "packageController", Name: "package controller"},
	{Key: "aws", Name: "aws (deprecated)"},
}

var catalogIndex = func() map[string]int {
	m := make(map[string]int, len(catalog))
	for i, c := range catalog {
		m[c.Key] = i
	}
	return m
}()

// Catalog returns the known components in display order.
func Catalog() []Component {
	return append([]Component(nil), catalog...)
}

// LookupComponent returns the catalog entry for a versions-bundle key. A key
// the catalog does not know (a component added by a newer EKS-A) is returned
// with its key as name and read from the cluster's versions bundle, so that
// no versioned component is ever hidden.
func LookupComponent(key string) Component {
	if i, ok := catalogIndex[key]; ok {
		return catalog[i]
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
