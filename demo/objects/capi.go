package objects

import (
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/demo/kinds"
	"github.com/upgrade-console/upgrade-console/demo/release"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
)

// EtcdTemplateRef is an EtcdadmCluster's spec.infrastructureTemplate.
func EtcdTemplateRef(name, ns string) map[string]any {
	return map[string]any{
		"apiVersion": kinds.InfraGroup + "/v1beta1",
		"kind":       InfraTemplateKind,
		"name":       name,
		"namespace":  ns,
	}
}

// EtcdadmConfigSpec is the etcdadm bootstrap config of an Ubuntu etcd machine.
func EtcdadmConfigSpec(etcdVersion string) map[string]any {
	return map[string]any{
		"format": "cloud-config",
		"cloudInitConfig": map[string]any{
			"version":        etcdVersion,
			"installDir":     "/usr/bin",
			"etcdReleaseURL": "https://anywhere-assets.eks.amazonaws.com/releases/eks-a/etcd/v" + etcdVersion + "/etcd-linux-amd64-v" + etcdVersion + ".tar.gz",
		},
		"cipherSuites": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
	}
}

// EtcdState is what an EtcdadmCluster status reports.
type EtcdState struct {
	Ready      bool
	Replicas   int64 // ready owned members
	Generation int64
	Endpoints  []string // member IPs
	Cluster    string
	// Rolling is set while members with an outdated spec remain:
	// Outdated of them, UpToDate members current.
	Rolling            bool
	Outdated, UpToDate int
	// Disowned counts old members waiting for the control plane's
	// upgrade-complete signal.
	Disowned int
	// MaxReached is etcdadm's safety stop (too many machines).
	MaxReached      bool
	Total, MaxTotal int
	// Waiting is set while a new member has not passed its health check.
	Waiting string
}

// EtcdStatus builds an EtcdadmCluster status (CAPI v1beta1 conditions, facts
// §6.2 and §6.3), keeping old conditions' transition times.
func EtcdStatus(old map[string]any, s EtcdState, now time.Time) map[string]any {
	var conds []any
	if old != nil {
		conds, _ = old["conditions"].([]any)
	}
	set := func(c map[string]any) { conds = SetCondition(conds, c) }
	set(V1beta1("Initialized", true, "", "", "", now))
	set(V1beta1("EtcdCertificatesAvailable", true, "", "", "", now))
	set(V1beta1("EtcdClusterResizeCompleted", true, "", "", "", now))
	switch {
	case s.MaxReached:
		set(V1beta1("EtcdMachinesSpecUpToDate", false, "Warning", "MaxNumberOfEtcdMachinesReached",
			sprintf("Etcd cluster has %d total machines, maximum number of machines is %d", s.Total, s.MaxTotal), now))
	case s.Rolling:
		set(V1beta1("EtcdMachinesSpecUpToDate", false, "Warning", "EtcdRollingUpdateInProgress",
			sprintf("Rolling %d replicas with outdated spec (%d replicas up to date)", s.Outdated, s.UpToDate), now))
	default:
		set(V1beta1("EtcdMachinesSpecUpToDate", true, "", "", "", now))
	}
	if s.Disowned > 0 {
		set(V1beta1("EtcdClusterHasNoOutdatedMachines", false, "Warning", "EtcdClusterHasOutdatedMachines",
			sprintf("%d etcd members have outdated spec", s.Disowned), now))
	} else {
		set(V1beta1("EtcdClusterHasNoOutdatedMachines", true, "", "", "", now))
	}
	if s.Waiting != "" {
		set(V1beta1("EtcdMachinesReady", false, "Info", "WaitingForEtcdadmEndpointsToPassHealthcheck", s.Waiting, now))
		set(V1beta1("EtcdEndpointsAvailable", false, "Info", "WaitingForEtcdadmEndpointsToPassHealthcheck", s.Waiting, now))
	} else {
		set(V1beta1("EtcdMachinesReady", true, "", "", "", now))
		set(V1beta1("EtcdEndpointsAvailable", true, "", "", "", now))
	}
	if s.Ready {
		set(V1beta1("Ready", true, "", "", "", now))
	} else {
		reason, msg := "EtcdRollingUpdateInProgress", sprintf("Rolling %d replicas with outdated spec (%d replicas up to date)", s.Outdated, s.UpToDate)
		if s.MaxReached {
			reason, msg = "MaxNumberOfEtcdMachinesReached", sprintf("Etcd cluster has %d total machines, maximum number of machines is %d", s.Total, s.MaxTotal)
		} else if !s.Rolling && s.Waiting != "" {
			reason, msg = "WaitingForEtcdadmEndpointsToPassHealthcheck", s.Waiting
		}
		set(V1beta1("Ready", false, "Warning", reason, msg, now))
	}
	eps := make([]string, 0, len(s.Endpoints))
	for _, ip := range s.Endpoints {
		eps = append(eps, "https://"+ip+":2379")
	}
	sort.Strings(eps)
	return map[string]any{
		"ready":              s.Ready,
		"initialized":        true,
		"creationComplete":   true,
		"replicas":           s.Replicas,
		"endpoints":          strings.Join(eps, ","),
		"initMachineAddress": s.Cluster + "-etcd-init",
		"selector":           model.LabelClusterName + "=" + s.Cluster + "," + model.LabelEtcdCluster + "=" + s.Cluster + "-etcd",
		"observedGeneration": s.Generation,
		"conditions":         SortV1beta1(conds),
	}
}

// KCP builds the cluster's KubeadmControlPlane (v1beta2) without status.
// External etcd is referenced by its endpoints; stacked etcd pins the EKS-D
// etcd image. The upstream CRD has no InPlace rollout strategy (a fork-only
// enum value), so an in-place world leaves spec.rollout unset.
func KCP(cfg scenario.Config, etcdEndpoints []string, template, version string, k release.Kube) *unstructured.Unstructured {
	etcd := map[string]any{}
	if cfg.ExternalEtcd() {
		eps := make([]any, 0, len(etcdEndpoints))
		for _, e := range etcdEndpoints {
			eps = append(eps, e)
		}
		if len(eps) == 0 {
			eps = append(eps, "https://"+SubnetEtcd+".10:2379")
		}
		etcd["external"] = map[string]any{
			"endpoints": eps,
			"caFile":    "/etc/kubernetes/pki/etcd/ca.crt",
			"certFile":  "/etc/kubernetes/pki/apiserver-etcd-client.crt",
			"keyFile":   "/etc/kubernetes/pki/apiserver-etcd-client.key",
		}
	} else {
		etcd["local"] = map[string]any{
			"imageRepository": "registry.example.invalid/eks-distro/etcd-io",
			"imageTag":        EtcdImageTag(k),
		}
	}
	spec := map[string]any{
		"replicas": int64(cfg.ControlPlaneCount),
		"version":  version,
		"machineTemplate": map[string]any{
			"spec": map[string]any{
				"infrastructureRef": map[string]any{"apiGroup": kinds.InfraGroup, "kind": InfraTemplateKind, "name": template},
			},
		},
		"kubeadmConfigSpec": map[string]any{
			"clusterConfiguration": map[string]any{
				"imageRepository": "registry.example.invalid/eks-distro/kubernetes",
				"etcd":            etcd,
			},
		},
	}
	if !cfg.InPlace() {
		spec["rollout"] = map[string]any{"strategy": map[string]any{
			"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": int64(1)},
		}}
	}
	annotations := map[string]any{}
	if cfg.ExternalEtcd() {
		annotations[model.AnnotationSkipPauseCPManagedEtcd] = "true"
	}
	meta := map[string]any{
		"name":      cfg.ClusterName,
		"namespace": cfg.SystemNamespace,
		"labels":    map[string]any{model.LabelClusterName: cfg.ClusterName},
	}
	if len(annotations) > 0 {
		meta["annotations"] = annotations
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kinds.KCPVersion,
		"kind":       "KubeadmControlPlane",
		"metadata":   meta,
		"spec":       spec,
	}}
}

// EtcdImageTag is the EKS-D etcd image tag of a Kubernetes release,
// "v3.5.15-eks-1-30-22".
func EtcdImageTag(k release.Kube) string {
	return "v" + k.EtcdVersion + "-eks-" + k.Channel() + "-" + itoa(int64(k.EksDNumber))
}

// KCPState is what a KubeadmControlPlane status reports.
type KCPState struct {
	Replicas, Ready, Available, UpToDate int64
	Generation                           int64
	Versions                             map[string]int64
	Cluster                              string
	Paused                               bool
	// RollingOut is set while machines are outdated; Message explains it.
	RollingOut     bool
	RollingMessage string
	ScalingUp      bool
	ScalingDown    bool
	// EtcdUpgrading is the fork's wait for an external etcd rollout.
	EtcdUpgrading bool
}

// KCPStatus builds a KubeadmControlPlane v1beta2 status.
func KCPStatus(old map[string]any, s KCPState, now time.Time) map[string]any {
	var conds []any
	if old != nil {
		conds, _ = old["conditions"].([]any)
	}
	g := s.Generation
	set := V1beta2Setter(&conds, g, now)
	set("Available", true, "Available", "NotAvailable", "")
	set("CertificatesAvailable", true, "Available", "NotAvailable", "")
	set("EtcdClusterHealthy", true, "Healthy", "NotHealthy", "")
	set("ControlPlaneComponentsHealthy", true, "Healthy", "NotHealthy", "")
	set("MachinesReady", s.Ready == s.Replicas, "Ready", "NotReady", cond(s.Ready != s.Replicas, sprintf("* %d Machines not ready", s.Replicas-s.Ready)))
	set("MachinesUpToDate", s.UpToDate >= s.Replicas && !s.RollingOut, "UpToDate", "NotUpToDate", cond(s.RollingOut, sprintf("* %d Machines not up-to-date", max(0, s.Replicas-s.UpToDate))))
	// RollingOut, ScalingUp and ScalingDown are True while happening.
	set("RollingOut", s.RollingOut, "RollingOut", "NotRollingOut", cond(s.RollingOut, s.RollingMessage))
	set("ScalingUp", s.ScalingUp, "ScalingUp", "NotScalingUp", cond(s.ScalingUp, "Scaling up from "+itoa(s.Replicas-1)+" to "+itoa(s.Replicas)+" replicas"))
	set("ScalingDown", s.ScalingDown, "ScalingDown", "NotScalingDown", "")
	set("Remediating", false, "Remediating", "NotRemediating", "")
	set("Deleting", false, "Deleting", "NotDeleting", "")
	set("Paused", s.Paused, "Paused", "NotPaused", "")
	if s.EtcdUpgrading {
		set("ExternalEtcdEndpointsAvailable", false, "", "ExternalEtcdUndergoingUpgrade", "External etcd is undergoing an upgrade")
	} else if _, ok := Condition(map[string]any{"status": map[string]any{"conditions": conds}}, "ExternalEtcdEndpointsAvailable"); ok {
		set("ExternalEtcdEndpointsAvailable", true, "ExternalEtcdEndpointsAvailable", "", "")
	}
	st := map[string]any{
		"replicas":           s.Replicas,
		"readyReplicas":      s.Ready,
		"availableReplicas":  s.Available,
		"upToDateReplicas":   s.UpToDate,
		"observedGeneration": g,
		"initialization":     map[string]any{"controlPlaneInitialized": true},
		"selector":           model.LabelClusterName + "=" + s.Cluster + "," + model.LabelControlPlane,
		"conditions":         conds,
	}
	if vs, low := versions(s.Versions); len(vs) > 0 {
		st["versions"] = vs
		st["version"] = low
	}
	return st
}

// versions renders status.versions (sorted) and the lowest version.
func versions(m map[string]int64) ([]any, string) {
	keys := make([]string, 0, len(m))
	for k, n := range m {
		if n > 0 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := make([]any, 0, len(keys))
	for _, k := range keys {
		out = append(out, map[string]any{"version": k, "replicas": m[k]})
	}
	low := ""
	if len(keys) > 0 {
		low = keys[0]
	}
	return out, low
}

// MachineDeployment builds a worker group's MachineDeployment without status.
func MachineDeployment(cfg scenario.Config, w scenario.WorkerGroup, version, template string) *unstructured.Unstructured {
	name := cfg.ClusterName + "-" + w.Name
	selector := map[string]any{model.LabelClusterName: cfg.ClusterName, model.LabelDeploymentName: name}
	spec := map[string]any{
		"clusterName": cfg.ClusterName,
		"replicas":    int64(w.Count),
		"selector":    map[string]any{"matchLabels": selector},
		"template": map[string]any{
			"metadata": map[string]any{"labels": copyMap(selector)},
			"spec":     machineTemplateSpec(cfg.ClusterName, name, version, template),
		},
	}
	if !cfg.InPlace() {
		spec["rollout"] = map[string]any{"strategy": map[string]any{
			"type":          "RollingUpdate",
			"rollingUpdate": map[string]any{"maxSurge": int64(max(1, w.MaxSurge)), "maxUnavailable": int64(0)},
		}}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kinds.CAPIVersion,
		"kind":       "MachineDeployment",
		"metadata": map[string]any{
			"name":        name,
			"namespace":   cfg.SystemNamespace,
			"labels":      map[string]any{model.LabelClusterName: cfg.ClusterName},
			"annotations": map[string]any{AnnotationMDRevision: "1"},
		},
		"spec": spec,
	}}
}

func machineTemplateSpec(cluster, md, version, template string) map[string]any {
	return map[string]any{
		"clusterName": cluster,
		"version":     version,
		"bootstrap": map[string]any{"configRef": map[string]any{
			"apiGroup": kinds.BootstrapGrp, "kind": "KubeadmConfigTemplate", "name": md + "-template-" + strings.TrimPrefix(template, md+"-"),
		}},
		"infrastructureRef": map[string]any{"apiGroup": kinds.InfraGroup, "kind": InfraTemplateKind, "name": template},
	}
}

// MDState is what a MachineDeployment status reports.
type MDState struct {
	// Desired is spec.replicas; Replicas counts every machine, surge and
	// machines being deleted included.
	Desired                              int64
	Replicas, Ready, Available, UpToDate int64
	Generation                           int64
	Versions                             map[string]int64
	Cluster, Name                        string
	RollingOut                           bool
	RollingMessage                       string
}

// MDStatus builds a MachineDeployment v1beta2 status.
func MDStatus(old map[string]any, s MDState, now time.Time) map[string]any {
	var conds []any
	if old != nil {
		conds, _ = old["conditions"].([]any)
	}
	g := s.Generation
	set := V1beta2Setter(&conds, g, now)
	desired := s.Desired
	if desired == 0 {
		desired = s.Replicas
	}
	// maxUnavailable is 0: available means at least the desired count.
	set("Available", s.Available >= desired, "Available", "NotAvailable", cond(s.Available < desired, sprintf("%d available replicas, at least %d required", s.Available, desired)))
	set("MachinesReady", s.Ready >= s.Replicas, "Ready", "NotReady", cond(s.Ready < s.Replicas, sprintf("* %d Machines not ready", s.Replicas-s.Ready)))
	set("MachinesUpToDate", !s.RollingOut, "UpToDate", "NotUpToDate", cond(s.RollingOut, sprintf("* %d Machines not up-to-date", max(0, s.Replicas-s.UpToDate))))
	set("RollingOut", s.RollingOut, "RollingOut", "NotRollingOut", cond(s.RollingOut, s.RollingMessage))
	set("ScalingUp", false, "ScalingUp", "NotScalingUp", "")
	set("ScalingDown", false, "ScalingDown", "NotScalingDown", "")
	set("Remediating", false, "Remediating", "NotRemediating", "")
	set("Deleting", false, "Deleting", "NotDeleting", "")
	set("Paused", false, "Paused", "NotPaused", "")
	phase := "Running"
	if s.RollingOut {
		phase = "ScalingUp"
	}
	st := map[string]any{
		"replicas":           s.Replicas,
		"readyReplicas":      s.Ready,
		"availableReplicas":  s.Available,
		"upToDateReplicas":   s.UpToDate,
		"observedGeneration": g,
		"phase":              phase,
		"selector":           model.LabelClusterName + "=" + s.Cluster + "," + model.LabelDeploymentName + "=" + s.Name,
		"conditions":         conds,
	}
	if vs, _ := versions(s.Versions); len(vs) > 0 {
		st["versions"] = vs
	}
	return st
}

// MachineSet builds a MachineSet of a MachineDeployment, for its current
// template (hash), at a revision.
func MachineSet(md *unstructured.Unstructured, name, hash string, replicas int64, revision int) *unstructured.Unstructured {
	cluster, _, _ := unstructured.NestedString(md.Object, "spec", "clusterName")
	tmplSpec, _, _ := unstructured.NestedMap(md.Object, "spec", "template", "spec")
	selector := map[string]any{
		model.LabelClusterName:    cluster,
		model.LabelDeploymentName: md.GetName(),
		LabelMachineTemplateHash:  hash,
	}
	labels := copyMap(selector)
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kinds.CAPIVersion,
		"kind":       "MachineSet",
		"metadata": map[string]any{
			"name":            name,
			"namespace":       md.GetNamespace(),
			"labels":          labels,
			"annotations":     map[string]any{AnnotationMDRevision: itoa(int64(revision))},
			"ownerReferences": []any{OwnerOf(md).Ref()},
		},
		"spec": map[string]any{
			"clusterName": cluster,
			"replicas":    replicas,
			"selector":    map[string]any{"matchLabels": selector},
			"template": map[string]any{
				"metadata": map[string]any{"labels": copyMap(selector)},
				"spec":     tmplSpec,
			},
		},
	}}
}

// MSStatus builds a MachineSet status.
func MSStatus(replicas, ready, upToDate, generation int64, cluster, md, hash string) map[string]any {
	return map[string]any{
		"replicas":           replicas,
		"readyReplicas":      ready,
		"availableReplicas":  ready,
		"upToDateReplicas":   upToDate,
		"observedGeneration": generation,
		"selector":           model.LabelClusterName + "=" + cluster + "," + model.LabelDeploymentName + "=" + md + "," + LabelMachineTemplateHash + "=" + hash,
	}
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func cond(ok bool, s string) string {
	if ok {
		return s
	}
	return ""
}

// MachineHealthCheck builds the health check EKS-A generates for the
// control plane ("<cluster>-kcp-unhealthy") or a worker group
// ("<md>-worker-unhealthy"): machines whose node is not Ready for 5 minutes,
// or that have no node 20 minutes after creation, are remediated.
func MachineHealthCheck(cfg scenario.Config, name string, selector map[string]any) *unstructured.Unstructured {
	unhealthy := func(status string) map[string]any {
		return map[string]any{"type": "Ready", "status": status, "timeoutSeconds": int64(300)}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kinds.CAPIVersion,
		"kind":       "MachineHealthCheck",
		"metadata": map[string]any{
			"name":      name,
			"namespace": cfg.SystemNamespace,
			"labels":    map[string]any{model.LabelClusterName: cfg.ClusterName},
		},
		"spec": map[string]any{
			"clusterName": cfg.ClusterName,
			"selector":    map[string]any{"matchLabels": selector},
			"checks": map[string]any{
				"nodeStartupTimeoutSeconds": int64(1200),
				"unhealthyNodeConditions":   []any{unhealthy("Unknown"), unhealthy("False")},
			},
		},
	}}
}

// KCPHealthCheckName and WorkerHealthCheckName are EKS-A's MHC names.
func KCPHealthCheckName(cluster string) string { return cluster + "-kcp-unhealthy" }
func WorkerHealthCheckName(md string) string   { return md + "-worker-unhealthy" }
