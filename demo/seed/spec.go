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
// spec file (no status, no annotations). ProviderSpecs are the documents it
// refers to.
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

// vCenter inventory of the demo's datacenter.
const (
	vsphereDatacenter = "SDDC-Datacenter"
	vsphereServer     = "vcenter.corp.example"
)

// ProviderSpecs builds the provider documents the Cluster of ClusterSpec
// refers to, at a Kubernetes version: its VSphereDatacenterConfig, then a
// VSphereMachineConfig per machine group (control plane, external etcd,
// each worker node group). The machine configs' template names the
// Kubernetes version, so an upgrade changes it, as it does on vSphere.
func ProviderSpecs(cfg scenario.Config, kube string) []*unstructured.Unstructured {
	doc := func(kind, name string, spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": kinds.EKSAVersion,
			"kind":       kind,
			"metadata":   map[string]any{"name": name, "namespace": cfg.ClusterNamespace},
			"spec":       spec,
		}}
	}
	dc := "/" + vsphereDatacenter
	docs := []*unstructured.Unstructured{doc("VSphereDatacenterConfig", cfg.ClusterName, map[string]any{
		"datacenter": vsphereDatacenter,
		"network":    dc + "/network/eksa-mgmt",
		"server":     vsphereServer,
		"insecure":   false,
		"thumbprint": "4E:2C:91:0B:7D:55:A8:3F:C6:19:E0:72:BB:08:D4:6A:93:1F:5C:E7",
	})}
	machines := func(name string, cpus, memMiB, diskGiB int64) *unstructured.Unstructured {
		return doc("VSphereMachineConfig", cfg.ClusterName+"-"+name, map[string]any{
			"datastore":    dc + "/datastore/vsanDatastore",
			"folder":       dc + "/vm/eksa/" + cfg.ClusterName,
			"resourcePool": dc + "/host/Cluster-1/Resources/eksa",
			"template":     dc + "/vm/Templates/ubuntu-2204-kube-" + kube,
			"osFamily":     "ubuntu",
			"cloneMode":    "fullClone",
			"numCPUs":      cpus,
			"memoryMiB":    memMiB,
			"diskGiB":      diskGiB,
			"users": []any{map[string]any{
				"name":              "capv",
				"sshAuthorizedKeys": []any{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHd3bW9kZW1vZGVtb2RlbW9kZW1vZGVtb2RlbW8 ops@bastion-1"},
			}},
		})
	}
	docs = append(docs, machines("cp", 4, 8192, 40))
	if cfg.ExternalEtcd() {
		docs = append(docs, machines("etcd", 2, 8192, 40))
	}
	for _, w := range cfg.Workers {
		docs = append(docs, machines(w.Name, 8, 32768, 100))
	}
	return docs
}

// CurrentSpec is the cluster spec file of the running release: the Cluster,
// then its provider documents, as `eksctl anywhere generate clusterconfig`
// lays them out.
func CurrentSpec(cfg scenario.Config) ([]byte, error) {
	return specFile(append([]*unstructured.Unstructured{ClusterSpec(cfg, release.Current.Version, CurrentKube)}, ProviderSpecs(cfg, CurrentKube)...)...)
}

// TargetSpec is the cluster spec file of the upgrade: the target release and
// the next Kubernetes minor version.
func TargetSpec(cfg scenario.Config) ([]byte, error) {
	return specFile(append([]*unstructured.Unstructured{ClusterSpec(cfg, release.Target.Version, TargetKube)}, ProviderSpecs(cfg, TargetKube)...)...)
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
