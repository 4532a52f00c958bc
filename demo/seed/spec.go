package seed

import (
	"bytes"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/upgrade-console/upgrade-console/demo/kinds"
	"github.com/upgrade-console/upgrade-console/demo/release"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
)

// Kubernetes versions of the demo: the cluster runs CurrentKube on the current
// release and is upgraded to TargetKube on the target release.
const (
	CurrentKube = "1.30"
	TargetKube  = "1.31"
)

// ControlPlaneEndpoint is the cluster's API server VIP.
const ControlPlaneEndpoint = "10.20.0.10"

// ClusterSpec builds the EKS-A Cluster document of the world at an EKS-A
// version and a Kubernetes version, as an operator keeps it in the cluster
// spec file (no status, no annotations).
//
// The file holds the Cluster document only: the demo's provider objects
// (VSphereDatacenterConfig, VSphereMachineConfig) have no CRD in the local
// control plane, so the spec refers to them by name without carrying them.
func ClusterSpec(cfg scenario.Config, eksaVersion, kube string) *unstructured.Unstructured {
	cpStrategy := map[string]any{"type": cfg.Strategy}
	if cfg.Strategy == scenario.RollingUpdate {
		cpStrategy["rollingUpdate"] = map[string]any{"maxSurge": int64(1)}
	}
	var workers []any
	for _, w := range cfg.Workers {
		ws := map[string]any{"type": cfg.Strategy}
		if cfg.Strategy == scenario.RollingUpdate {
			ws["rollingUpdate"] = map[string]any{"maxSurge": int64(w.MaxSurge), "maxUnavailable": int64(0)}
		}
		workers = append(workers, map[string]any{
			"name":                   w.Name,
			"count":                  int64(w.Count),
			"machineGroupRef":        map[string]any{"kind": "VSphereMachineConfig", "name": cfg.ClusterName + "-" + w.Name},
			"upgradeRolloutStrategy": ws,
		})
	}
	spec := map[string]any{
		"kubernetesVersion": kube,
		"eksaVersion":       eksaVersion,
		"managementCluster": map[string]any{"name": cfg.ClusterName},
		"datacenterRef":     map[string]any{"kind": "VSphereDatacenterConfig", "name": cfg.ClusterName},
		"clusterNetwork": map[string]any{
			"cniConfig": map[string]any{"cilium": map[string]any{}},
			"pods":      map[string]any{"cidrBlocks": []any{"192.168.0.0/16"}},
			"services":  map[string]any{"cidrBlocks": []any{"10.96.0.0/12"}},
		},
		"controlPlaneConfiguration": map[string]any{
			"count":                  int64(cfg.ControlPlaneCount),
			"endpoint":               map[string]any{"host": ControlPlaneEndpoint},
			"machineGroupRef":        map[string]any{"kind": "VSphereMachineConfig", "name": cfg.ClusterName + "-cp"},
			"upgradeRolloutStrategy": cpStrategy,
		},
		"workerNodeGroupConfigurations": workers,
	}
	if cfg.ExternalEtcd() {
		spec["externalEtcdConfiguration"] = map[string]any{
			"count":           int64(cfg.EtcdCount),
			"machineGroupRef": map[string]any{"kind": "VSphereMachineConfig", "name": cfg.ClusterName + "-etcd"},
		}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kinds.EKSAVersion,
		"kind":       "Cluster",
		"metadata":   map[string]any{"name": cfg.ClusterName, "namespace": cfg.ClusterNamespace},
		"spec":       spec,
	}}
}

// CurrentSpec is the cluster spec file of the running release.
func CurrentSpec(cfg scenario.Config) ([]byte, error) {
	return specFile(ClusterSpec(cfg, release.Current.Version, CurrentKube))
}

// TargetSpec is the cluster spec file of the upgrade: the target release and
// the next Kubernetes minor version.
func TargetSpec(cfg scenario.Config) ([]byte, error) {
	return specFile(ClusterSpec(cfg, release.Target.Version, TargetKube))
}

// specFile renders documents as a multi-document YAML file.
func specFile(docs ...*unstructured.Unstructured) ([]byte, error) {
	var b bytes.Buffer
	for i, d := range docs {
		if i > 0 {
			b.WriteString("---\n")
		}
		y, err := yaml.Marshal(d.Object)
		if err != nil {
			return nil, fmt.Errorf("rendering %s %s: %w", d.GetKind(), d.GetName(), err)
		}
		b.Write(y)
	}
	return b.Bytes(), nil
}
