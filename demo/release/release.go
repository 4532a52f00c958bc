// Package release holds the two EKS Anywhere releases of the demo world (the
// one the cluster runs and the one it upgrades to) and builds the in-cluster
// objects EKS-A keeps for them: an EKSARelease and a Bundles manifest each.
//
// The versions follow the shapes of real manifests (component versions are
// "<gitTag>+<7-hex checksum>", EKS-D releases "kubernetes-1-30-eks-N"); the
// numbers themselves are the demo's own.
package release

import (
	"fmt"
	"strings"
)

// Kube is what one release ships for one Kubernetes minor version.
type Kube struct {
	Minor        string // "1.30"
	EksDNumber   int    // N of kubernetes-1-30-eks-N
	Patch        string // "v1.30.5", the EKS-D kubeVersion
	GitCommit    string // short commit of the EKS-D build, shown in kubelet versions
	EtcdVersion  string // etcd release the EKS-D release pins
	EndOfSupport string
}

// Channel is the EKS-D channel, "1-30".
func (k Kube) Channel() string { return strings.ReplaceAll(k.Minor, ".", "-") }

// EksDName is the EKS-D release name, "kubernetes-1-30-eks-22".
func (k Kube) EksDName() string {
	return fmt.Sprintf("kubernetes-%s-eks-%d", k.Channel(), k.EksDNumber)
}

// KubeadmVersion is the version EKS-A writes into KubeadmControlPlane and
// Machine spec.version: "v1.30.5-eks-1-30-22".
func (k Kube) KubeadmVersion() string {
	return fmt.Sprintf("%s-eks-%s-%d", k.Patch, k.Channel(), k.EksDNumber)
}

// KubeletVersion is what an EKS-D kubelet reports in node status: the
// Kubernetes patch release and the EKS-D build commit, "v1.30.5-eks-ce1d5eb".
func (k Kube) KubeletVersion() string { return k.Patch + "-eks-" + k.GitCommit }

// Release is one EKS Anywhere release.
type Release struct {
	Version       string // "v0.20.9"
	BundlesNumber int
	Date          string
	GitCommit     string
	// Components maps a versions-bundle key (certManager, clusterAPI, …) to
	// the version every Kubernetes bundle of the release carries.
	Components map[string]string
	// Kubes lists the supported Kubernetes versions, oldest first.
	Kubes []Kube
}

// Current is the release the demo cluster runs.
var Current = Release{
	Version:       "v0.20.9",
	BundlesNumber: 78,
	Date:          "2024-10-24 18:02:15.416279 +0000 UTC",
	GitCommit:     "3f9a1c7e52d04b8a9e6f1d2c3b4a5968778695a4",
	Components: map[string]string{
		"bootstrap":         "v1.7.5+3d8f1a2",
		"certManager":       "v1.14.7+e4f2a91",
		"cilium":            "v1.13.20-eksa.1",
		"clusterAPI":        "v1.7.5+3d8f1a2",
		"controlPlane":      "v1.7.5+3d8f1a2",
		"docker":            "v1.7.5+3d8f1a2",
		"eksa":              "v0.20.9+9c41e0b",
		"etcdadmBootstrap":  "v1.0.13+2e9c4f7",
		"etcdadmController": "v1.0.22+6b3f0d8",
		"flux":              "v2.3.0+a0d5e61",
		"kindnetd":          "v0.22.0+4f7b2c9",
		"packageController": "v0.4.3+1e8d7a2",
		"vSphere":           "v1.10.4+5a7e2c1",
	},
	Kubes: []Kube{
		{Minor: "1.28", EksDNumber: 33, Patch: "v1.28.14", GitCommit: "9d2a4f1", EtcdVersion: "3.5.15", EndOfSupport: "2024-11-26"},
		{Minor: "1.29", EksDNumber: 22, Patch: "v1.29.9", GitCommit: "a7c0e35", EtcdVersion: "3.5.15", EndOfSupport: "2025-03-23"},
		{Minor: "1.30", EksDNumber: 22, Patch: "v1.30.5", GitCommit: "ce1d5eb", EtcdVersion: "3.5.15", EndOfSupport: "2025-07-23"},
	},
}

// Target is the release the demo upgrades to.
var Target = Release{
	Version:       "v0.21.2",
	BundlesNumber: 84,
	Date:          "2024-12-05 21:47:03.118642 +0000 UTC",
	GitCommit:     "b2e7d40c91a35f6e8d7c2b1a0f9e8d7c6b5a4938",
	Components: map[string]string{
		"bootstrap":         "v1.8.4+b91e6c3",
		"certManager":       "v1.15.3+7c2d9e0",
		"cilium":            "v1.14.12-eksa.1",
		"clusterAPI":        "v1.8.4+b91e6c3",
		"controlPlane":      "v1.8.4+b91e6c3",
		"docker":            "v1.8.4+b91e6c3",
		"eksa":              "v0.21.2+d05f3a8",
		"etcdadmBootstrap":  "v1.0.14+8a1d3b6",
		"etcdadmController": "v1.0.23+c5e7a19",
		"flux":              "v2.4.0+e3b9c27",
		"kindnetd":          "v0.22.0+4f7b2c9",
		"packageController": "v0.4.5+6a2f0d9",
		"vSphere":           "v1.11.3+0f4d8b2",
	},
	Kubes: []Kube{
		{Minor: "1.29", EksDNumber: 27, Patch: "v1.29.11", GitCommit: "5b8e2d0", EtcdVersion: "3.5.16", EndOfSupport: "2025-03-23"},
		{Minor: "1.30", EksDNumber: 27, Patch: "v1.30.7", GitCommit: "f14b6a2", EtcdVersion: "3.5.16", EndOfSupport: "2025-07-23"},
		{Minor: "1.31", EksDNumber: 11, Patch: "v1.31.3", GitCommit: "7e0c9d4", EtcdVersion: "3.5.16", EndOfSupport: "2025-11-26"},
	},
}

// All lists the demo's releases, oldest first.
var All = []Release{Current, Target}

// ByVersion finds a release by its version ("v0.21.2").
func ByVersion(v string) (Release, bool) {
	for _, r := range All {
		if r.Version == v {
			return r, true
		}
	}
	return Release{}, false
}

// Kube returns what the release ships for a Kubernetes minor version.
func (r Release) Kube(minor string) (Kube, bool) {
	for _, k := range r.Kubes {
		if k.Minor == minor {
			return k, true
		}
	}
	return Kube{}, false
}

// BundlesName is the name of the release's Bundles object, "bundles-78".
func (r Release) BundlesName() string { return fmt.Sprintf("bundles-%d", r.BundlesNumber) }

// Name is the EKSARelease object name EKS-A derives from an eksaVersion
// (GenerateEKSAReleaseName): "+" becomes "-plus-", then "." becomes "-".
func Name(eksaVersion string) string {
	v := strings.ReplaceAll(eksaVersion, "+", "-plus-")
	return "eksa-" + strings.ReplaceAll(v, ".", "-")
}

// Minor is the minor version of a semver-like string: "v0.21.2" → "v0.21".
func Minor(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}

// ByKubeadmVersion finds the Kubernetes release whose KubeadmVersion is v
// ("v1.31.3-eks-1-31-11"), in any of the demo's releases.
func ByKubeadmVersion(v string) (Kube, bool) {
	for _, r := range All {
		for _, k := range r.Kubes {
			if k.KubeadmVersion() == v {
				return k, true
			}
		}
	}
	return Kube{}, false
}

// UpgraderImage is the in-place upgrader image the release of a Kubernetes
// version ships (versionsBundle.upgrader.upgrader.uri).
func UpgraderImage(kubeadmVersion string) string {
	for _, r := range All {
		for _, k := range r.Kubes {
			if k.KubeadmVersion() == kubeadmVersion {
				return fmt.Sprintf("%s/aws/upgrader:v%s-%d-eks-a-%d", registry, k.Channel(), k.EksDNumber, r.BundlesNumber)
			}
		}
	}
	return registry + "/aws/upgrader:latest"
}
