package model

import (
	"fmt"
	"strings"
	"time"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// This file holds the snapshot of a management cluster that the watchers
// publish and everything else reads: the dashboard, the headless watch, the
// preflight checks and the recovery planner. A ClusterState is immutable once
// published: producers build a new one for every change, consumers never
// mutate it, so it can be shared between goroutines without locks.

// Kind names an API kind the console watches. It is also the key of the
// per-source sync status.
type Kind string

const (
	KindEKSACluster              Kind = "Cluster.anywhere.eks.amazonaws.com"
	KindCAPICluster              Kind = "Cluster.cluster.x-k8s.io"
	KindKubeadmControlPlane      Kind = "KubeadmControlPlane"
	KindEtcdadmCluster           Kind = "EtcdadmCluster"
	KindMachineDeployment        Kind = "MachineDeployment"
	KindMachine                  Kind = "Machine"
	KindNode                     Kind = "Node"
	KindNodeUpgrade              Kind = "NodeUpgrade"
	KindNodeKubeadmUpgrade       Kind = "NodeKubeadmUpgrade"
	KindControlPlaneUpgrade      Kind = "ControlPlaneUpgrade"
	KindMachineDeploymentUpgrade Kind = "MachineDeploymentUpgrade"
	KindEvent                    Kind = "Event"
	// KindLease is the upgrade lock Lease (LockName). It is informational:
	// no pane waits for it, and a console not allowed to read it carries on.
	KindLease Kind = "Lease"
)

// Meta is the part of an object's metadata the console uses.
type Meta struct {
	Name              string
	Namespace         string
	UID               string
	Generation        int64
	ResourceVersion   string
	CreationTimestamp time.Time
	// DeletionTimestamp is zero unless the object is being deleted.
	DeletionTimestamp time.Time
	Labels            map[string]string
	Annotations       map[string]string
}

// ConditionSeverity is the CAPI v1beta1 severity of a False condition.
type ConditionSeverity string

const (
	SeverityNone    ConditionSeverity = ""
	SeverityInfo    ConditionSeverity = "Info"
	SeverityWarning ConditionSeverity = "Warning"
	SeverityError   ConditionSeverity = "Error"
)

// Condition is one condition in either dialect: CAPI v1beta1 (EKS-A Cluster,
// EtcdadmCluster, NodeUpgrade: has Severity) or metav1.Condition (CAPI v1beta2
// objects: has ObservedGeneration). The watchers' adapter fills what the
// dialect carries and leaves the rest zero.
type Condition struct {
	Type               string
	Status             string // "True", "False" or "Unknown"
	Severity           ConditionSeverity
	Reason             string
	Message            string
	LastTransitionTime time.Time
	ObservedGeneration int64
}

// IsTrue reports whether the condition's status is "True".
func (c Condition) IsTrue() bool { return c.Status == "True" }

// Conditions is a list of conditions in the order the object lists them.
type Conditions []Condition

// Get returns the condition of the given type.
func (cs Conditions) Get(t string) (Condition, bool) {
	for _, c := range cs {
		if c.Type == t {
			return c, true
		}
	}
	return Condition{}, false
}

// IsTrue reports whether the condition of the given type exists and is True.
func (cs Conditions) IsTrue(t string) bool {
	c, ok := cs.Get(t)
	return ok && c.IsTrue()
}

// WorkerGroup is one entry of the EKS-A Cluster's workerNodeGroupConfigurations.
type WorkerGroup struct {
	Name  string
	Count int
	// KubernetesVersion is the group's own version ("1.30"), or empty when it
	// inherits the cluster's.
	KubernetesVersion string
	RolloutStrategy   string // "RollingUpdate", "InPlace" or empty
	// Was is the version the group runs before the upgrade (its own or the
	// Cluster's), when known: a target below it is a downgrade.
	Was string
	// WasPinned: the group had its own kubernetesVersion before the upgrade.
	// WasControlPlane is the control plane's version then. EKS-A's webhook
	// judges dropping a pin by both.
	WasPinned       bool
	WasControlPlane string
}

// EKSACluster is the EKS-A Cluster (anywhere.eks.amazonaws.com/v1alpha1).
type EKSACluster struct {
	Meta
	KubernetesVersion string // spec.kubernetesVersion, "1.30"
	EksaVersion       string // spec.eksaVersion, "v0.21.1"
	// BundlesRefName is the deprecated spec.bundlesRef.name, empty when unset.
	BundlesRefName      string
	BundlesRefNamespace string
	ManagementCluster   string // spec.managementCluster.name
	ControlPlaneCount   int
	// ControlPlaneRolloutStrategy is spec.controlPlaneConfiguration.upgradeRolloutStrategy.type.
	ControlPlaneRolloutStrategy string
	WorkerGroups                []WorkerGroup
	// ExternalEtcdCount is spec.externalEtcdConfiguration.count; 0 means stacked etcd.
	ExternalEtcdCount int
	// CiliumManaged is true when the cluster's CNI is EKS-A's Cilium
	// (clusterNetwork.cniConfig.cilium set); see CNIManaged for skipUpgrade.
	CiliumManaged     bool
	CiliumSkipUpgrade bool
	// Kindnetd is true when clusterNetwork.cniConfig.kindnetd is set (the
	// Docker provider's development clusters): EKS-A manages it too.
	Kindnetd bool
	GitOps   bool

	ObservedGeneration int64
	// ChildrenReconciledGeneration is status.childrenReconciledGeneration:
	// the sum of the child objects' generations (datacenter and machine
	// configs) at EKS-A's last successful full reconcile; 0 when unset. A
	// change to a child alone moves no generation of the Cluster.
	ChildrenReconciledGeneration int64
	FailureMessage               string
	FailureReason                string
	Conditions                   Conditions
	// SpecChangedAt is the newest managedFields time of a write to the main
	// resource (not status): roughly when the spec under upgrade was applied.
	// Zero when unknown. Used to say how long a generation has gone unobserved.
	SpecChangedAt time.Time
}

// Stale reports whether the status describes an older spec than the current
// one (metadata.generation != status.observedGeneration).
func (c *EKSACluster) Stale() bool { return c.Generation != c.ObservedGeneration }

// CNIManaged reports whether EKS-A manages the default CNI, the condition
// under which its completion rule waits for DefaultCNIConfigured: kindnetd,
// or Cilium without skipUpgrade (CNIConfig.IsManaged).
func (c *EKSACluster) CNIManaged() bool {
	return c.Kindnetd || (c.CiliumManaged && !c.CiliumSkipUpgrade)
}

// SelfManaged reports whether the cluster manages itself (a management cluster).
func (c *EKSACluster) SelfManaged() bool {
	return c.ManagementCluster == "" || c.ManagementCluster == c.Name
}

// Paused reports whether EKS-A reconcile of the cluster is paused.
func (c *EKSACluster) Paused() bool {
	return c.Annotations[AnnotationEKSAPaused] == "true"
}

// CAPICluster is the Cluster API Cluster (cluster.x-k8s.io).
type CAPICluster struct {
	Meta
	Paused             bool // spec.paused
	Phase              string
	ObservedGeneration int64
	Conditions         Conditions
}

// ResumeCommand is the kubectl command that clears spec.paused, which the
// console does not write itself.
func (c *CAPICluster) ResumeCommand(conn ConnFlags) string {
	return "kubectl" + conn.String() + " -n " + c.Namespace + " patch clusters.cluster.x-k8s.io " + c.Name + ` --type merge -p '{"spec":{"paused":false}}'`
}

// ReplicaCounts are a controller's replica counters. Pointers because in CAPI
// v1beta2 a nil counter means "not reported yet", not zero.
type ReplicaCounts struct {
	Desired   *int32
	Current   *int32
	Ready     *int32
	Available *int32
	UpToDate  *int32
}

// ControlPlane is the KubeadmControlPlane.
type ControlPlane struct {
	Meta
	Version         string // spec.version, "v1.30.14-eks-1-30-58"
	RolloutStrategy string
	Replicas        ReplicaCounts
	// StatusVersion is the lowest version the control plane runs.
	StatusVersion      string
	Versions           []VersionCount // status.versions (CAPI v1.14)
	Initialized        bool
	ObservedGeneration int64
	FailureMessage     string
	Conditions         Conditions
	// ChangedAt is the newest managedFields time of a write other than
	// status (its spec, or an annotation such as the pause): a pause is no
	// older than that. Zero when unknown.
	ChangedAt time.Time
}

// Paused reports whether CAPI reconcile of the control plane is paused.
func (c *ControlPlane) Paused() bool { return c.Annotations[AnnotationCAPIPaused] == "true" }

// VersionCount is one entry of a status.versions list.
type VersionCount struct {
	Version  string
	Replicas int32
}

// EtcdCluster is the EtcdadmCluster (external etcd).
type EtcdCluster struct {
	Meta
	Replicas int32 // spec.replicas
	// EtcdVersion is etcdadmConfigSpec.cloudInitConfig.version, or the
	// bottlerocketConfig.etcdImage when the nodes run Bottlerocket.
	EtcdVersion            string
	InfrastructureTemplate string // spec.infrastructureTemplate.name
	// ReadyReplicas is status.replicas, which counts healthy owned machines.
	ReadyReplicas      int32
	Ready              bool
	Initialized        bool
	CreationComplete   bool
	Endpoints          string
	ObservedGeneration int64
	Conditions         Conditions
}

// Upgrading reports whether the etcd rollout marker is set.
func (e *EtcdCluster) Upgrading() bool { return e.Annotations[AnnotationEtcdUpgrading] == "true" }

// MachineDeployment is a CAPI MachineDeployment (one worker group).
type MachineDeployment struct {
	Meta
	Version            string
	RolloutStrategy    string
	Replicas           ReplicaCounts
	Phase              string
	ObservedGeneration int64
	Conditions         Conditions
	// SpecChangedAt is the newest managedFields time of a write to its
	// spec: when EKS-A handed it the new template or version. Zero when
	// unknown.
	SpecChangedAt time.Time
}

// MachineRole is what a Machine is for.
type MachineRole string

const (
	RoleEtcd         MachineRole = "etcd"
	RoleControlPlane MachineRole = "control-plane"
	RoleWorker       MachineRole = "worker"
)

// Machine is a CAPI Machine.
type Machine struct {
	Meta
	Role MachineRole
	// Owner is the name of the object the machine belongs to: the
	// EtcdadmCluster, the KubeadmControlPlane or the MachineDeployment.
	Owner string
	// Owned is false for an etcd machine whose ownerReference the etcdadm
	// controller removed during a rollout (still a member, about to go).
	Owned    bool
	Version  string // spec.version
	NodeName string // status.nodeRef.name
	Phase    string // status.phase
	// EtcdReady is the cluster.x-k8s.io/etcd-ready label (etcd machines).
	EtcdReady bool
	// InfrastructureTemplate is the cloned-from-name annotation of the infra
	// machine when known (tells which spec generation the machine has).
	InfrastructureTemplate string
	Conditions             Conditions
	// FailureReason and FailureMessage are CAPI's terminal failure of the
	// machine: status.failureReason/failureMessage at v1beta1,
	// status.deprecated.v1beta1.* at v1beta2. Empty on a healthy machine.
	// CAPI does not retry a failed machine; whether the upgrade failed
	// is still EKS-A's rule (outcome.go), which does not read them.
	FailureReason  string
	FailureMessage string
	// ProviderID is spec.providerID ("vsphere://4203…"), what ties the
	// machine to its VM and its Node.
	ProviderID string
	// Addresses are status.addresses, as the infrastructure provider
	// reports them; nil before it has.
	Addresses []MachineAddress
}

// Failed reports whether CAPI reports the machine failed: its phase, or a
// failure reason or message (set before, or without, the phase).
func (m *Machine) Failed() bool {
	return m.Phase == "Failed" || m.FailureReason != "" || m.FailureMessage != ""
}

// MachineAddress is one entry of a Machine's status.addresses.
type MachineAddress struct {
	Type    string // InternalIP, ExternalIP, Hostname, InternalDNS, ExternalDNS
	Address string
}

// Node is a Kubernetes Node (metadata and status only).
type Node struct {
	Meta
	// The two flags side by side: one word for both, and with Abnormal
	// the Node stays in the allocator's 208-byte class (224 otherwise).
	Ready          bool
	Unschedulable  bool
	ReadySince     time.Time
	KubeletVersion string
	// Abnormal are the node's conditions other than Ready that report a
	// problem (see the watchers' nodeConditionAbnormal), in the order the
	// node lists them; nil on a healthy node, as nearly all of a fleet
	// is.
	Abnormal Conditions
}

// NodeUpgradeStep is the ordered list of per-node in-place upgrade steps, as
// conditions of a NodeUpgrade.
var NodeUpgradeSteps = []string{
	"UpgraderPodCreated",
	"BinariesCopied",
	"ContainerdUpgraded",
	"CNIPluginsUpgraded",
	"KubeadmUpgraded",
	"KubeletUpgraded",
	"PostUpgradeCleanupCompleted",
}

// StepFailed reports whether c, the condition of an in-place step of an
// upgrade whose conditions are cs, says the step's container failed. EKS-A
// marks steps False with severity Error in two cases: the step's container
// exited non-zero ("Container exited with a non-zero exit code, reason: …"),
// and, every step at once, UpgraderPodCreated included, when it cannot read
// the upgrader pod: "Upgrader pod does not exist" right after a retry
// deleted the pod, until its next reconcile (within 10 s) creates it again,
// or the read's error. The second is a wait, not a failure; UpgraderPodCreated
// is False only then.
func StepFailed(cs Conditions, c Condition) bool {
	if c.Status != "False" {
		return false
	}
	if strings.HasPrefix(c.Reason, nodeUpgradeFailedPrefix) {
		return true
	}
	if c.Severity != SeverityError {
		return false
	}
	pod, ok := cs.Get(NodeUpgradeSteps[0])
	return !ok || pod.Status != "False"
}

// FailedStep is the first in-place step of cs whose container failed
// (StepFailed), false when none has.
func FailedStep(cs Conditions) (Condition, bool) {
	for _, step := range NodeUpgradeSteps {
		if c, ok := cs.Get(step); ok && StepFailed(cs, c) {
			return c, true
		}
	}
	return Condition{}, false
}

// NodeUpgrade is a per-node in-place upgrade object: the NodeUpgrade EKS-A
// ships, or the NodeKubeadmUpgrade of the design (Kind tells which).
type NodeUpgrade struct {
	Meta
	Kind                  Kind
	MachineName           string
	KubernetesVersion     string
	EtcdVersion           string
	FirstNodeToBeUpgraded bool
	Completed             bool
	ObservedGeneration    int64
	Conditions            Conditions
}

// UpgradeRequest is a ControlPlaneUpgrade or a MachineDeploymentUpgrade.
type UpgradeRequest struct {
	Meta
	Kind Kind
	// Target is the KubeadmControlPlane or MachineDeployment it upgrades.
	Target            string
	Machines          []string
	KubernetesVersion string
	RequireUpgrade    int64
	Upgraded          int64
	Ready             bool
}

// Event is a Kubernetes Event about one of the watched objects.
type Event struct {
	// Namespace and Name are the Event object's: what tells one event from
	// another of the same text (the console keeps a line in view by it).
	Namespace, Name string
	// UID is the Event object's: the node detail merges the events it reads
	// from the API server with the kept ones by it.
	UID            string
	Type           string // Normal, Warning
	Reason         string
	Message        string
	ObjectKind     string
	ObjectName     string
	Count          int32
	FirstTimestamp time.Time
	LastTimestamp  time.Time
	// ResourceVersion is the Event's metadata.resourceVersion as a number
	// (0 when it is not one). It orders events whose timestamps are equal:
	// most of them have one-second precision.
	ResourceVersion uint64
}

// Newer orders events newest first: by LastTimestamp, then, within the
// same time (one second for most events), by resourceVersion, larger
// (written later) first.
func (e *Event) Newer(than *Event) bool {
	if !e.LastTimestamp.Equal(than.LastTimestamp) {
		return e.LastTimestamp.After(than.LastTimestamp)
	}
	return e.ResourceVersion > than.ResourceVersion
}

// Identity tells one Event object from another: its UID, else its
// namespace and name (a source that left the UID out), else "" (no two
// such are known to be the same).
func (e *Event) Identity() string {
	switch {
	case e.UID != "":
		return e.UID
	case e.Name != "":
		return e.Namespace + "/" + e.Name
	}
	return ""
}

// SourceStatus says how far the console can see one kind.
type SourceStatus struct {
	// Installed is false when the API server does not serve the kind (no
	// EtcdadmCluster means stacked etcd). Once discovery has found a kind
	// missing, Synced is true as well: there is nothing to wait for.
	Installed bool
	// Version is the served API version the watcher uses (e.g. "v1beta2").
	Version string
	// Forbidden names the missing permission, e.g. "list machines.cluster.x-k8s.io
	// in eksa-system"; empty when access is allowed.
	Forbidden string
	// Synced is true once the informer's first list has been received.
	Synced bool
	// Err is the last watch error, empty when healthy.
	Err string
}

// ConnectionState is the state of the link to the API server.
type ConnectionState string

const (
	Connecting   ConnectionState = "connecting"
	Live         ConnectionState = "live"
	Reconnecting ConnectionState = "reconnecting"
)

// ClusterState is one immutable snapshot of everything the console knows about
// the management cluster being upgraded.
type ClusterState struct {
	// Version increases with every published snapshot; renderers cache on it.
	Version uint64
	// At is when the snapshot was taken.
	At time.Time

	ClusterName string
	Namespace   string // namespace of the EKS-A Cluster
	Context     string // kubeconfig context, for the header
	// Conn are the connection flags the console was given, which every
	// command it prints for pasting carries.
	Conn ConnFlags

	Connection      ConnectionState
	ConnectionSince time.Time
	// ConnectionErr is the last error that keeps the connection from being
	// live ("dial tcp 10.0.0.5:6443: connect: connection refused"); empty
	// while live.
	ConnectionErr string
	Sources       map[Kind]SourceStatus

	Cluster            *EKSACluster
	CAPICluster        *CAPICluster
	ControlPlane       *ControlPlane
	Etcd               *EtcdCluster
	MachineDeployments []MachineDeployment // sorted by name
	// The fleet-sized lists are Lists (list.go): a snapshot shares every
	// object that did not change, and every chunk of the list none of whose
	// objects changed, with the one before it. Never modify what they point
	// to.
	Machines        List[Machine]     // sorted by role (etcd, cp, worker), then name
	Nodes           List[Node]        // sorted by name
	NodeUpgrades    List[NodeUpgrade] // sorted by name
	UpgradeRequests []UpgradeRequest  // sorted by kind, then name
	Events          []Event           // newest first
	// Lock is the cluster's upgrade lock Lease; nil when there is none or
	// it is not watched (forbidden).
	Lock *Lock
	// UpgraderPods are the in-place upgrader pods, sorted by name: none
	// outside an in-place upgrade, or when Pods may not be read.
	UpgraderPods []UpgraderPod
}

// LockKnown reports whether the snapshot's Lock says what the cluster has:
// the Lease watch has listed and may read it (a nil Lock then means none).
func (s *ClusterState) LockKnown() bool {
	src := s.Source(KindLease)
	return src.Synced && src.Forbidden == ""
}

// LockNotHeldBy reports whether the upgrade lock as watched, its list
// synced, is gone or another holder's: a console that holds it, renewing,
// learns so from the watch before its next renewal.
func (s *ClusterState) LockNotHeldBy(holder string) bool {
	return holder != "" && s != nil && s.LockKnown() && (!s.Lock.Held() || s.Lock.HolderIdentity != holder)
}

// NodesElsewhere reports whether the named cluster's Nodes are on another
// API server: a Cluster another one manages (a workload cluster) has its
// CAPI objects here, on its management cluster, and its Nodes on its own
// API server, which the console does not talk to. The Nodes here are then
// the management cluster's: the watchers publish none, and what would read
// them reads the Machines' node conditions instead (MachineNodeReady).
func (s *ClusterState) NodesElsewhere() bool {
	return s != nil && s.Cluster != nil && !s.Cluster.SelfManaged()
}

// Source returns the sync status of a kind (zero value when unknown).
func (s *ClusterState) Source(k Kind) SourceStatus {
	if s == nil || s.Sources == nil {
		return SourceStatus{}
	}
	return s.Sources[k]
}

// Annotation and label keys, exactly as EKS-A, CAPI and etcdadm spell them.
// The Cluster API ones come from its typed API package, so a rename upstream
// breaks the build instead of silently matching nothing.
const (
	AnnotationEKSAPaused                  = "anywhere.eks.amazonaws.com/paused"
	AnnotationManagementComponentsVersion = "anywhere.eks.amazonaws.com/management-components-version"
	AnnotationCAPIPaused                  = clusterv1.PausedAnnotation
	AnnotationEtcdUpgrading               = "etcdcluster.cluster.x-k8s.io/upgrading"
	AnnotationEtcdUpgradeComplete         = "controlplane.cluster.x-k8s.io/upgrade-complete"
	AnnotationKCPInPlaceUpgradeNeeded     = "controlplane.clusters.x-k8s.io/in-place-upgrade-needed"
	AnnotationMDInPlaceUpgradeNeeded      = "machinedeployment.clusters.x-k8s.io/in-place-upgrade-needed"
	AnnotationSkipPauseCPManagedEtcd      = "cluster.x-k8s.io/skip-pause-cp-managed-etcd"

	LabelClusterName      = clusterv1.ClusterNameLabel
	LabelControlPlane     = clusterv1.MachineControlPlaneLabel
	LabelControlPlaneName = clusterv1.MachineControlPlaneNameLabel
	LabelDeploymentName   = clusterv1.MachineDeploymentNameLabel
	LabelEtcdCluster      = "cluster.x-k8s.io/etcd-cluster"
	LabelEtcdReady        = "cluster.x-k8s.io/etcd-ready"
	LabelEKSAClusterName  = "cluster.anywhere.eks.amazonaws.com/cluster-name"
	LabelEKSAClusterNS    = "cluster.anywhere.eks.amazonaws.com/cluster-namespace"
	// LabelUpgradeInProgress is the default node label that marks a node
	// whose upgrade is in progress (kubeone's fail-safe); configurable.
	LabelUpgradeInProgress = "kubeone.io/upgrade-in-progress"

	// AnnotationSimulatedLogPrefix + a container name is the pod annotation in
	// which the demo's simulated kubelet leaves that container's log: the
	// demo's API server has no kubelet to serve pods/log. On a real cluster
	// the log comes from the kubelet and this annotation is never set.
	AnnotationSimulatedLogPrefix = "demo.upgrade-console.io/log."

	// SystemNamespace is where EKS-A keeps every generated object.
	SystemNamespace = "eksa-system"
)

// CredentialsRefused begins a ConnectionErr that is the API server's 401:
// it was reached, and turned the kubeconfig's credentials away (an expired
// or revoked token or certificate), which no retry mends.
const CredentialsRefused = "the API server refused the credentials (401 Unauthorized)"

// CredentialsFix is what mends CredentialsRefused, said wherever it is.
const CredentialsFix = "refresh the credentials (the cluster's admin kubeconfig, or your token provider) or choose others with --kubeconfig, --context or --user"

// GrantFor is the fix of a missing permission as SourceStatus.Forbidden
// names it ("list machines.cluster.x-k8s.io in eksa-system", "list nodes
// (cluster-wide)"): the RBAC rule a cluster admin binds to the identity, and
// the kubectl command that checks it, with the console's connection flags.
// "" for a text it cannot read.
func GrantFor(forbidden string, conn ConnFlags) string {
	if parts := strings.Split(forbidden, "; "); len(parts) > 1 {
		// A kind read per namespace (events), denied in more than one.
		fixes := make([]string, 0, len(parts))
		for _, p := range parts {
			f := GrantFor(p, conn)
			if f == "" {
				return ""
			}
			fixes = append(fixes, f)
		}
		return strings.Join(fixes, "; ")
	}
	verb, rest, ok := strings.Cut(forbidden, " ")
	if !ok {
		return ""
	}
	qualified, where, ok := strings.Cut(rest, " ")
	if !ok {
		return ""
	}
	resource, group, _ := strings.Cut(qualified, ".")
	rule := fmt.Sprintf("{apiGroups: [%q], resources: [%s], verbs: [list, watch]}", group, resource)
	switch {
	case where == "(cluster-wide)":
		return fmt.Sprintf("grant a ClusterRole with %s and a ClusterRoleBinding to the identity (check: `kubectl%s auth can-i %s %s`)", rule, conn, verb, qualified)
	case strings.HasPrefix(where, "in "):
		ns := strings.TrimPrefix(where, "in ")
		return fmt.Sprintf("grant a Role in %s with %s and a RoleBinding to the identity (check: `kubectl%s auth can-i %s %s -n %s`)", ns, rule, conn, verb, qualified, ns)
	}
	return ""
}
