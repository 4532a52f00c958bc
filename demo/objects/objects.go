// Package objects builds the CAPI, etcdadm and core objects of the demo world
// (Machines, Nodes, MachineSets and their statuses) the way the real
// controllers create them, so the seed and the simulated controllers write
// identical shapes: the same names, labels, annotations and ownerReferences.
package objects

import (
	"fmt"
	"math/rand"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/demo/kinds"
	"github.com/upgrade-console/upgrade-console/model"
)

// Label and annotation keys beyond those of the model.
const (
	LabelMachineTemplateHash = "machine-template-hash"
	LabelSetName             = "cluster.x-k8s.io/set-name"
	// AnnotationSimTemplate is the simulated controllers' own record of the
	// infrastructure template a Machine was cloned from. Real CAPI writes
	// cluster.x-k8s.io/cloned-from-name on the infrastructure machine
	// (a VSphereMachine), never on the Machine, and the demo creates no
	// infrastructure machines: under that key here, the console read it and
	// told new etcd members by template, a path no real cluster takes (it
	// goes by creation time there).
	AnnotationSimTemplate = "demo.upgrade-console/infra-template"
	AnnotationMDRevision  = "machinedeployment.clusters.x-k8s.io/revision"
	// InfraTemplateKind is the infrastructure template kind of the world:
	// a vSphere cluster.
	InfraTemplateKind = "VSphereMachineTemplate"
	InfraMachineKind  = "VSphereMachine"
)

// Names hands out what a real cluster would: random name suffixes (CAPI's
// five-character generator alphabet), machine IPs and provider IDs. It is
// safe for concurrent use; the seed and the simulated controllers share one.
type Names struct {
	mu   sync.Mutex
	rnd  *rand.Rand
	ips  map[string]int
	used map[string]bool
}

// NewNames returns a generator; the same seed yields the same names.
func NewNames(seed int64) *Names {
	return &Names{rnd: rand.New(rand.NewSource(seed)), ips: map[string]int{}, used: map[string]bool{}}
}

// alphabet is the one of apiserver's SimpleNameGenerator (no vowels, no
// look-alikes).
const alphabet = "bcdfghjklmnpqrstvwxz2456789"

// Suffix returns a fresh random suffix of n characters.
func (n *Names) Suffix(size int) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	for {
		b := make([]byte, size)
		for i := range b {
			b[i] = alphabet[n.rnd.Intn(len(alphabet))]
		}
		if s := string(b); !n.used[s] {
			n.used[s] = true
			return s
		}
	}
}

// Generate returns prefix + "-" + a five-character suffix, as CAPI and
// etcdadm name machines (GenerateName(prefix + "-")).
func (n *Names) Generate(prefix string) string { return prefix + "-" + n.Suffix(5) }

// IP returns the next address of a subnet; subnet is the first two octets
// plus a role octet base, e.g. "10.20.1".
func (n *Names) IP(subnet string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	i := n.ips[subnet]
	n.ips[subnet] = i + 1
	// 240 hosts per /24, then the next /24: a large fleet spills over.
	var a, b, c int
	if _, err := fmt.Sscanf(subnet, "%d.%d.%d", &a, &b, &c); err != nil {
		return "10.0.0.1"
	}
	return fmt.Sprintf("%d.%d.%d.%d", a, b, c+i/240, 10+i%240)
}

// UUID returns a random UUID-shaped string (vSphere VM BIOS UUIDs).
func (n *Names) UUID() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	b := make([]byte, 16)
	n.rnd.Read(b)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Subnets of each role.
const (
	SubnetEtcd         = "10.20.1"
	SubnetControlPlane = "10.20.2"
	SubnetWorkers      = "10.20.8"
)

// Owner is an ownerReference target.
type Owner struct {
	APIVersion, Kind, Name, UID string
}

// Ref returns the controller ownerReference to o.
func (o Owner) Ref() map[string]any {
	return map[string]any{
		"apiVersion":         o.APIVersion,
		"kind":               o.Kind,
		"name":               o.Name,
		"uid":                o.UID,
		"controller":         true,
		"blockOwnerDeletion": true,
	}
}

// OwnerOf is the Owner for an existing object.
func OwnerOf(u *unstructured.Unstructured) Owner {
	return Owner{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Name: u.GetName(), UID: string(u.GetUID())}
}

// MachineSpec says which Machine to build.
type MachineSpec struct {
	Name, Namespace, Cluster string
	Role                     model.MachineRole
	Owner                    Owner
	// Version is spec.version; empty for etcd machines, which etcdadm
	// creates without one.
	Version string
	// InfraTemplate is the infrastructure template the machine was cloned
	// from (it tells an up-to-date machine from an outdated one).
	InfraTemplate string
	// ControlPlaneName is the KCP name (control-plane machines).
	ControlPlaneName string
	// Deployment, MachineSet and TemplateHash place a worker machine.
	Deployment, MachineSet, TemplateHash string
	// EtcdCluster is the EtcdadmCluster name (etcd machines).
	EtcdCluster string
}

// Machine builds a CAPI v1beta2 Machine without status.
func Machine(s MachineSpec) *unstructured.Unstructured {
	labels := map[string]any{model.LabelClusterName: s.Cluster}
	bootstrapKind := "KubeadmConfig"
	bootstrapGroup := kinds.BootstrapGrp
	switch s.Role {
	case model.RoleEtcd:
		labels[model.LabelEtcdCluster] = s.EtcdCluster
		bootstrapKind = "EtcdadmConfig"
	case model.RoleControlPlane:
		labels[model.LabelControlPlane] = ""
		labels[model.LabelControlPlaneName] = s.ControlPlaneName
	case model.RoleWorker:
		labels[model.LabelDeploymentName] = s.Deployment
		labels[LabelSetName] = s.MachineSet
		labels[LabelMachineTemplateHash] = s.TemplateHash
	}
	spec := map[string]any{
		"clusterName": s.Cluster,
		"bootstrap": map[string]any{
			"configRef": map[string]any{"apiGroup": bootstrapGroup, "kind": bootstrapKind, "name": s.Name},
		},
		"infrastructureRef": map[string]any{"apiGroup": kinds.InfraGroup, "kind": InfraMachineKind, "name": s.Name},
	}
	if s.Version != "" {
		spec["version"] = s.Version
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kinds.CAPIVersion,
		"kind":       "Machine",
		"metadata": map[string]any{
			"name":      s.Name,
			"namespace": s.Namespace,
			"labels":    labels,
			"annotations": map[string]any{
				AnnotationSimTemplate: s.InfraTemplate,
			},
			"ownerReferences": []any{s.Owner.Ref()},
		},
		"spec": spec,
	}}
}

// Machine phases (CAPI v1beta2).
const (
	PhasePending      = "Pending"
	PhaseProvisioning = "Provisioning"
	PhaseProvisioned  = "Provisioned"
	PhaseRunning      = "Running"
	PhaseDeleting     = "Deleting"
)

// MachineState is what a Machine's status reports.
type MachineState struct {
	Phase   string
	Address string
	// NodeName is set once the node joined (not for etcd machines).
	NodeName       string
	KubeletVersion string
	Generation     int64
	// UpToDate is false for a machine a rollout is about to replace.
	UpToDate bool
	// OutdatedMessage explains UpToDate=False.
	OutdatedMessage string
}

// MachineStatus builds a Machine status for a state, keeping old
// conditions' transition times.
func MachineStatus(old map[string]any, s MachineState, now time.Time) map[string]any {
	var conds []any
	if old != nil {
		conds, _ = old["conditions"].([]any)
	}
	gen := s.Generation
	running := s.Phase == PhaseRunning
	provisioned := running || s.Phase == PhaseProvisioned
	bootstrapped := provisioned || s.Phase == PhaseProvisioning
	base := V1beta2Setter(&conds, gen, now)
	set := func(typ string, ok bool, okReason, notReason, msg string) {
		base(typ, ok, okReason, notReason, cond(!ok, msg))
	}
	set("BootstrapConfigReady", bootstrapped, "Ready", "NotReady", "* KubeadmConfig status.initialization.dataSecretCreated is false")
	set("InfrastructureReady", provisioned, "Ready", "NotReady", "* "+InfraMachineKind+" status.initialization.provisioned is false")
	set("NodeHealthy", running, "NodeHealthy", "WaitingForNode", "* Waiting for a Node with spec.providerID to exist")
	set("NodeReady", running, "NodeReady", "WaitingForNode", "* Waiting for a Node with spec.providerID to exist")
	upMsg := s.OutdatedMessage
	set("UpToDate", s.UpToDate, "UpToDate", "NotUpToDate", upMsg)
	set("Ready", running, "Ready", "NotReady", "* NodeHealthy: Waiting for a Node")
	set("Available", running, "Available", "NotReady", "* Ready: Machine is not ready")
	st := map[string]any{
		"phase":              s.Phase,
		"observedGeneration": gen,
		"lastUpdated":        Time(now),
		"conditions":         conds,
	}
	init := map[string]any{}
	if bootstrapped {
		init["bootstrapDataSecretCreated"] = true
	}
	if provisioned {
		init["infrastructureProvisioned"] = true
	}
	if len(init) > 0 {
		st["initialization"] = init
	}
	if provisioned && s.Address != "" {
		st["addresses"] = []any{map[string]any{"type": "InternalIP", "address": s.Address}}
	}
	if s.NodeName != "" {
		st["nodeRef"] = map[string]any{"name": s.NodeName}
		st["nodeInfo"] = NodeInfo(s.KubeletVersion)
	}
	return st
}

// NodeInfo is the node system info of a demo node (Ubuntu, containerd).
func NodeInfo(kubelet string) map[string]any {
	return map[string]any{
		"architecture":            "amd64",
		"bootID":                  "",
		"containerRuntimeVersion": "containerd://1.7.22",
		"kernelVersion":           "5.15.0-125-generic",
		// Required by the Machine CRD; kubelets no longer fill it (the field
		// is deprecated), so it is empty as on a real node.
		"kubeProxyVersion": "",
		"kubeletVersion":   kubelet,
		"machineID":        "",
		"operatingSystem":  "linux",
		"osImage":          "Ubuntu 22.04.5 LTS",
		"systemUUID":       "",
	}
}

// Node builds the Node of a machine (named after it, as on vSphere), Ready.
func Node(name string, role model.MachineRole, kubelet, ip, providerID string, now time.Time) *corev1.Node {
	labels := map[string]string{
		"kubernetes.io/hostname": name,
		"kubernetes.io/os":       "linux",
		"kubernetes.io/arch":     "amd64",
	}
	var taints []corev1.Taint
	if role == model.RoleControlPlane {
		labels["node-role.kubernetes.io/control-plane"] = ""
		taints = []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}
	}
	t := metav1.NewTime(now)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       corev1.NodeSpec{ProviderID: providerID, Taints: taints},
		Status: corev1.NodeStatus{
			Capacity: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("4"),
				corev1.ResourceMemory: resource.MustParse("16Gi"),
				corev1.ResourcePods:   resource.MustParse("110"),
			},
			Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", Message: "kubelet has sufficient memory available", LastHeartbeatTime: t, LastTransitionTime: t},
				{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", Message: "kubelet has no disk pressure", LastHeartbeatTime: t, LastTransitionTime: t},
				{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID", Message: "kubelet has sufficient PID available", LastHeartbeatTime: t, LastTransitionTime: t},
				{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status", LastHeartbeatTime: t, LastTransitionTime: t},
			},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}, {Type: corev1.NodeHostName, Address: name}},
			NodeInfo: corev1.NodeSystemInfo{
				Architecture:            "amd64",
				ContainerRuntimeVersion: "containerd://1.7.22",
				KernelVersion:           "5.15.0-125-generic",
				KubeletVersion:          kubelet,
				OperatingSystem:         "linux",
				OSImage:                 "Ubuntu 22.04.5 LTS",
			},
		},
	}
}

// ProviderID is the vSphere provider ID of a VM.
func ProviderID(uuid string) string { return "vsphere://" + uuid }

// TemplateName is how EKS-A names a generated machine template:
// "<cluster>-<role>-<unix seconds>" ("mgmt-etcd-template-1729800000",
// "mgmt-control-plane-template-…", "mgmt-md-0-…").
func TemplateName(prefix string, at time.Time) string {
	return fmt.Sprintf("%s-%d", prefix, at.Unix())
}

// EtcdTemplatePrefix, ControlPlaneTemplatePrefix and WorkerTemplatePrefix
// are the template name prefixes of a cluster's roles.
func EtcdTemplatePrefix(cluster string) string         { return cluster + "-etcd-template" }
func ControlPlaneTemplatePrefix(cluster string) string { return cluster + "-control-plane-template" }
func WorkerTemplatePrefix(md string) string            { return md }
