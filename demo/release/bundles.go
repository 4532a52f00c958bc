package release

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/demo/kinds"
)

const (
	registry    = "registry.example.invalid/eks-anywhere"
	assetBucket = "https://anywhere-assets.eks.amazonaws.com/releases"
)

// EKSARelease builds the release's EKSARelease object, in namespace ns.
func (r Release) EKSARelease(ns string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kinds.EKSAVersion,
		"kind":       "EKSARelease",
		"metadata": map[string]any{
			"name":      Name(r.Version),
			"namespace": ns,
		},
		"spec": map[string]any{
			"releaseDate":       r.Date,
			"version":           r.Version,
			"gitCommit":         r.GitCommit,
			"bundleManifestUrl": fmt.Sprintf("%s/bundles/%d/manifest.yaml", assetBucket, r.BundlesNumber),
			"bundlesRef": map[string]any{
				"apiVersion": kinds.EKSAVersion,
				"name":       r.BundlesName(),
				"namespace":  ns,
			},
		},
	}}
}

// Bundles builds the release's Bundles manifest, in namespace ns: one versions
// bundle per supported Kubernetes version, with every component the upstream
// schema requires.
func (r Release) Bundles(ns string) *unstructured.Unstructured {
	vbs := make([]any, 0, len(r.Kubes))
	for _, k := range r.Kubes {
		vbs = append(vbs, r.versionsBundle(k))
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kinds.EKSAVersion,
		"kind":       "Bundles",
		"metadata": map[string]any{
			"name":      r.BundlesName(),
			"namespace": ns,
			"annotations": map[string]any{
				"anywhere.eks.amazonaws.com/signature": "MEUCIQDdemo" + r.GitCommit[:12],
			},
		},
		"spec": map[string]any{
			"number":          int64(r.BundlesNumber),
			"cliMinVersion":   r.Version,
			"cliMaxVersion":   r.Version,
			"versionsBundles": vbs,
		},
	}}
}

// tag is the git tag of a component version: "v1.8.4+b91e6c3" → "v1.8.4".
func tag(v string) string {
	t, _, _ := strings.Cut(v, "+")
	return t
}

func (r Release) image(name, repo, version string) map[string]any {
	return map[string]any{
		"name":        name,
		"description": "Container image for " + name + " image",
		"os":          "linux",
		"arch":        []any{"amd64", "arm64"},
		"uri":         fmt.Sprintf("%s/%s:%s-eks-a-%d", registry, repo, tag(version), r.BundlesNumber),
		"imageDigest": "sha256:" + strings.Repeat(r.GitCommit[:16], 4),
	}
}

func (r Release) manifest(component, version, file string) map[string]any {
	return map[string]any{"uri": fmt.Sprintf("%s/bundles/%d/artifacts/%s/manifests/%s/%s", assetBucket, r.BundlesNumber, component, tag(version), file)}
}

// provider is the shape of a CAPI provider bundle (clusterAPI, bootstrap,
// controlPlane, etcdadm*): controller, kube-rbac-proxy, components, metadata.
func (r Release) provider(key, component, controller string) map[string]any {
	v := r.Components[key]
	return map[string]any{
		"version":    v,
		"controller": r.image(controller, component+"/"+controller, v),
		"kubeProxy":  r.image("kube-rbac-proxy", "brancz/kube-rbac-proxy", "v0.18.1"),
		"components": r.manifest(component, v, "components.yaml"),
		"metadata":   r.manifest(component, v, "metadata.yaml"),
	}
}

func (r Release) versionsBundle(k Kube) map[string]any {
	c := r.Components
	eksdArchive := func(name string) map[string]any {
		return map[string]any{
			"name":   name + "-linux-amd64.tar.gz",
			"os":     "linux",
			"arch":   []any{"amd64"},
			"uri":    fmt.Sprintf("%s/bundles/%d/artifacts/%s/%s-linux-amd64.tar.gz", assetBucket, r.BundlesNumber, k.EksDName(), name),
			"sha256": strings.Repeat(k.GitCommit, 10)[:64],
		}
	}
	return map[string]any{
		"kubeVersion":          k.Minor,
		"endOfStandardSupport": k.EndOfSupport,
		"eksD": map[string]any{
			"name":         k.EksDName(),
			"channel":      k.Channel(),
			"kubeVersion":  k.Patch,
			"gitCommit":    strings.Repeat(k.GitCommit, 6)[:40],
			"manifestUrl":  fmt.Sprintf("https://distro.eks.amazonaws.com/kubernetes-%s/%s.yaml", k.Channel(), k.EksDName()),
			"components":   "https://distro.eks.amazonaws.com/crds/releases.distro.eks.amazonaws.com-v1alpha1.yaml",
			"kindNode":     r.image("kind-node", "kubernetes-sigs/kind/node", k.Patch),
			"etcdadm":      eksdArchive("etcdadm"),
			"crictl":       eksdArchive("cri-tools"),
			"containerd":   eksdArchive("containerd"),
			"imagebuilder": eksdArchive("image-builder"),
			"ova":          map[string]any{"bottlerocket": map[string]any{}},
			"raw":          map[string]any{"bottlerocket": map[string]any{}},
			"ami":          map[string]any{"bottlerocket": map[string]any{}},
		},
		"bootstrap":    r.provider("bootstrap", "cluster-api", "kubeadm-bootstrap-controller"),
		"clusterAPI":   r.provider("clusterAPI", "cluster-api", "cluster-api-controller"),
		"controlPlane": r.provider("controlPlane", "cluster-api", "kubeadm-control-plane-controller"),
		"etcdadmBootstrap": r.provider("etcdadmBootstrap", "etcdadm-bootstrap-provider",
			"etcdadm-bootstrap-provider"),
		"etcdadmController": r.provider("etcdadmController", "etcdadm-controller", "etcdadm-controller"),
		"bottlerocketHostContainers": map[string]any{
			"admin":            r.image("bottlerocket-admin", "bottlerocket/bottlerocket-admin", "v0.11.13"),
			"control":          r.image("bottlerocket-control", "bottlerocket/bottlerocket-control", "v0.7.17"),
			"kubeadmBootstrap": r.image("bottlerocket-bootstrap", "bottlerocket-bootstrap", k.Patch),
		},
		"certManager": map[string]any{
			"version":         c["certManager"],
			"acmesolver":      r.image("cert-manager-acmesolver", "cert-manager/cert-manager-acmesolver", c["certManager"]),
			"cainjector":      r.image("cert-manager-cainjector", "cert-manager/cert-manager-cainjector", c["certManager"]),
			"controller":      r.image("cert-manager-controller", "cert-manager/cert-manager-controller", c["certManager"]),
			"startupapicheck": r.image("cert-manager-startupapicheck", "cert-manager/cert-manager-startupapicheck", c["certManager"]),
			"webhook":         r.image("cert-manager-webhook", "cert-manager/cert-manager-webhook", c["certManager"]),
			"manifest":        r.manifest("cert-manager", c["certManager"], "cert-manager.yaml"),
		},
		"cilium": map[string]any{
			"version":   c["cilium"],
			"cilium":    r.image("cilium", "isovalent/cilium", c["cilium"]),
			"operator":  r.image("operator-generic", "isovalent/operator-generic", c["cilium"]),
			"helmChart": map[string]any{"name": "cilium-chart", "uri": fmt.Sprintf("registry.example.invalid/isovalent/cilium:%s", strings.TrimPrefix(c["cilium"], "v"))},
			"manifest":  r.manifest("cilium", c["cilium"], "cilium.yaml"),
		},
		"docker": map[string]any{
			"version":         c["docker"],
			"manager":         r.image("cluster-api-provider-docker", "cluster-api/capd-manager", c["docker"]),
			"kubeProxy":       r.image("kube-rbac-proxy", "brancz/kube-rbac-proxy", "v0.18.1"),
			"components":      r.manifest("cluster-api-provider-docker", c["docker"], "infrastructure-components-development.yaml"),
			"clusterTemplate": r.manifest("cluster-api-provider-docker", c["docker"], "cluster-template-development.yaml"),
			"metadata":        r.manifest("cluster-api-provider-docker", c["docker"], "metadata.yaml"),
		},
		"eksa": map[string]any{
			"version":             c["eksa"],
			"cliTools":            r.image("eks-anywhere-cli-tools", "eks-anywhere-cli-tools", c["eksa"]),
			"clusterController":   r.image("eks-anywhere-cluster-controller", "eks-anywhere-cluster-controller", c["eksa"]),
			"diagnosticCollector": r.image("eks-anywhere-diagnostic-collector", "eks-anywhere-diagnostic-collector", c["eksa"]),
			"components":          r.manifest("eks-anywhere", c["eksa"], "eksa-components.yaml"),
		},
		"flux": map[string]any{
			"version":                c["flux"],
			"helmController":         r.image("helm-controller", "fluxcd/helm-controller", c["flux"]),
			"kustomizeController":    r.image("kustomize-controller", "fluxcd/kustomize-controller", c["flux"]),
			"notificationController": r.image("notification-controller", "fluxcd/notification-controller", c["flux"]),
			"sourceController":       r.image("source-controller", "fluxcd/source-controller", c["flux"]),
		},
		"haproxy": map[string]any{"image": r.image("haproxy", "kubernetes-sigs/kind/haproxy", "v0.23.0")},
		"kindnetd": map[string]any{
			"version":  c["kindnetd"],
			"manifest": r.manifest("kind", c["kindnetd"], "kindnetd.yaml"),
		},
		"packageController": map[string]any{
			"version":           c["packageController"],
			"packageController": r.image("eks-anywhere-packages", "eks-anywhere-packages", c["packageController"]),
			"tokenRefresher":    r.image("ecr-token-refresher", "ecr-token-refresher", c["packageController"]),
			"helmChart":         r.image("eks-anywhere-packages", "eks-anywhere-packages", c["packageController"]),
		},
		"upgrader": map[string]any{
			"upgrader": r.image("upgrader", "aws/upgrader", fmt.Sprintf("v%s-%d", k.Channel(), k.EksDNumber)),
		},
		"vSphere": map[string]any{
			"version":              c["vSphere"],
			"clusterAPIController": r.image("cluster-api-provider-vsphere", "kubernetes-sigs/cluster-api-provider-vsphere/release/manager", c["vSphere"]),
			"manager":              r.image("cloud-provider-vsphere", "kubernetes/cloud-provider-vsphere/cpi/manager", k.Patch),
			"kubeProxy":            r.image("kube-rbac-proxy", "brancz/kube-rbac-proxy", "v0.18.1"),
			"kubeVip":              r.image("kube-vip", "kube-vip/kube-vip", "v0.8.4"),
			"components":           r.manifest("cluster-api-provider-vsphere", c["vSphere"], "infrastructure-components.yaml"),
			"clusterTemplate":      r.manifest("cluster-api-provider-vsphere", c["vSphere"], "cluster-template.yaml"),
			"metadata":             r.manifest("cluster-api-provider-vsphere", c["vSphere"], "metadata.yaml"),
		},
	}
}
