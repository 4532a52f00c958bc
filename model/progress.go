package model

import "time"

// Phase is a stage of a management cluster upgrade, in the order EKS-A runs them.
type Phase string

const (
	PhaseComponents   Phase = "components"
	PhaseEtcd         Phase = "etcd"
	PhaseControlPlane Phase = "control plane"
	PhaseCNI          Phase = "CNI"
	PhaseWorkers      Phase = "workers"
	PhaseDone         Phase = "done"
	PhaseFailed       Phase = "failed"
	// PhasePaused is the upgrade under way with EKS-A reconcile paused
	// (AnnotationEKSAPaused): nothing EKS-A drives moves until the
	// annotation goes, whatever the objects say; Progress.Paused says why.
	PhasePaused Phase = "paused"
)

// Phases lists the upgrade phases in order (done and failed are end states).
var Phases = []Phase{PhaseComponents, PhaseEtcd, PhaseControlPlane, PhaseCNI, PhaseWorkers}

// PhaseStatus is where one phase stands.
type PhaseStatus string

const (
	PhasePending PhaseStatus = "pending"
	PhaseActive  PhaseStatus = "active"
	PhaseOK      PhaseStatus = "done"
	PhaseBroken  PhaseStatus = "failed"
	// PhaseSkipped is a phase that does not apply (stacked etcd, unmanaged CNI).
	PhaseSkipped PhaseStatus = "skipped"
	// PhaseHeld is a phase that would be active but cannot move: EKS-A
	// reconcile is paused.
	PhaseHeld PhaseStatus = "paused"
	// PhaseRolledBack is the etcd phase after upgrade-console's etcd
	// rollback: its spec is the previous one again, so it is not done,
	// and it will not move while EKS-A stays paused.
	PhaseRolledBack PhaseStatus = "rolled back"
	// PhaseUnknown is a phase whose objects the console may not see
	// (PhaseProgress.Unseen says which and why) and of which EKS-A's
	// Cluster says nothing for the current spec: its status not yet
	// observed, or the condition not reported. Neither done nor under way:
	// not known.
	PhaseUnknown PhaseStatus = "unknown"
)

// PhaseProgress is one phase of the derived progress.
type PhaseProgress struct {
	Phase  Phase
	Status PhaseStatus
	// Done and Total count the phase's units (machines, members, nodes) that
	// are up to date; both are zero when the phase has no countable units.
	Done, Total int
	// Ready counts the units that are ready (etcd members with the etcd-ready
	// label, machines with a Ready node), whatever their version.
	Ready int
	// Owners splits Done by the owner of the machines counted (each
	// MachineDeployment, for the workers phase), for the lines that speak
	// of one owner (MachineDeploymentReplicas). Nil when no machine was
	// counted: the owners' own counters stood in.
	Owners []OwnerCount `json:"-"`
	// Since is the snapshot's best estimate of when the phase began (for an
	// active phase) or ended (for a done one), from lastTransitionTimes and
	// creation timestamps; zero when the snapshot does not say.
	Since time.Time
	// Detail is a short explanation ("2/3 members ready", "paused for etcd").
	Detail string
	// Unseen, when set, says which objects behind the phase the console may
	// not see, and why: "MachineDeployments and Machines not visible
	// (forbidden: list machinedeployments.cluster.x-k8s.io in eksa-system,
	// list machines.cluster.x-k8s.io in eksa-system)". What it cannot see
	// it does not count: Done is zero, and so are Ready and Total when no
	// object of the phase is seen. The Detail begins with it and says what
	// the status rests on: the objects that are seen, or, when none is,
	// EKS-A's Cluster conditions ("per the EKS-A Cluster: WorkersReady
	// True"), PhaseUnknown when they do not say. Empty when everything the
	// phase is derived from is visible.
	Unseen string
}

// OwnerCount is one owner's share of a phase's machines.
type OwnerCount struct {
	Owner string
	// Done counts its machines up to date, of Live, those not being
	// deleted.
	Done, Live int
}

// Milestone is one step of EKS-A's completion rule, in the rule's order.
type Milestone struct {
	Name   string // "generation observed", "no failureMessage", "ControlPlaneReady", …
	Met    bool
	Reason string
	// Message explains why the milestone is not met (empty when met).
	Message string
	Since   time.Time
}

// Stall is an object that has made no progress for longer than the
// threshold, or an in-place step that failed (see Failed).
type Stall struct {
	Kind  Kind
	Name  string
	Since time.Time
	For   time.Duration
	// Sentence is the line an operator needs, e.g. "etcd machine mgmt-etcd-x7k2p
	// not ready for 11m: no etcd-ready label, Machine phase Provisioning".
	Sentence string
	// Failed is true when the object reports a failure (a NodeUpgrade step
	// whose container exited non-zero) rather than slow progress; such a
	// stall is reported at once, without waiting for StallAfter, and the
	// summary counts it as failed, not stalled. One that stays failed for DefaultFailureGrace
	// fails the upgrade (Judge): nothing in EKS-A retries a failed step, so
	// it will not clear (the kubelet reruns its container, and the step
	// stays failed through the rerun: it fails again).
	Failed bool
	// SinceStep: Since is when the failed step began, not when it failed:
	// a container the kubelet restarts keeps no time of its first failure.
	// The judge times such a failure from FailedAt, else (a pod that
	// reports no times) from when it first saw it.
	SinceStep bool
	// FailedAt, with SinceStep, is when the step first failed as the
	// upgrader pod's times tell (UpgraderContainer.FirstFailure); zero
	// when they do not.
	FailedAt time.Time
	// Resume, for a failed stall that a recovery action gets past, is the
	// command and what it does ("`upgrade-console node retry …` runs the
	// node's steps again"); empty otherwise.
	Resume string
}

// FailedStalls are the stalls whose object reports a failure (a failed
// in-place step): nothing in EKS-A retries them, so the upgrade is held up
// until an operator acts, however long it has been.
func (p Progress) FailedStalls() []Stall {
	var out []Stall
	for _, st := range p.Stalls {
		if st.Failed {
			out = append(out, st)
		}
	}
	return out
}

// Progress is the view of an upgrade derived from one ClusterState.
type Progress struct {
	// Current is the active phase, PhaseDone when the completion rule holds,
	// PhaseFailed when the cluster reports a failureMessage, PhasePaused when
	// EKS-A reconcile is paused before either.
	Current Phase
	Phases  []PhaseProgress
	// Stale is true while metadata.generation != status.observedGeneration on
	// the EKS-A Cluster: the status describes an older spec and says nothing
	// about the current one ("status not yet observed").
	Stale bool
	// Milestones is EKS-A's completion rule evaluated in order.
	Milestones []Milestone
	// Complete is true when every milestone is met (and Stale is false).
	Complete bool
	// Blind is true while the connection to the API server is lost (the
	// watch reconnecting): what the snapshot says may be out of date, so
	// the completion rule is not counted as holding (CompletionGate).
	Blind bool
	// Failed is true while status.failureMessage is set on a status that
	// describes the current spec: what the cluster says now. EKS-A also sets
	// it on transient problems and clears it on the next good reconcile, so
	// whether the upgrade has failed is the waiters' call (Judge): a
	// failureMessage, or a failed in-place step (Stall.Failed), that stays
	// for DefaultFailureGrace.
	Failed         bool
	FailureMessage string
	Stalls         []Stall
	// Summary is one line for the header and the headless watch.
	Summary string
	// SpecChangedAt is when the EKS-A Cluster's spec was last written (zero
	// when unknown): the phases that follow it cannot have started earlier.
	SpecChangedAt time.Time
	// ClusterFlags are the flags that name the Cluster on a command line
	// ("--cluster mgmt", with -n when not in default, and the console's
	// connection flags), for the commands a sentence suggests; empty when
	// the Cluster is not seen.
	ClusterFlags string `json:"-"`
	// Generation is the EKS-A Cluster's metadata.generation (0 when unknown):
	// it moves with spec changes only, which tells the Timeline a new
	// upgrade from a metadata write that moved SpecChangedAt.
	Generation int64
	// Paused is true while EKS-A reconcile of the Cluster is paused
	// (AnnotationEKSAPaused), whatever the upgrade's state: a pause left on a
	// cluster at rest holds back the next upgrade. While the upgrade is
	// under way (neither complete nor failed) Current is PhasePaused and no
	// phase is active.
	Paused bool
	// Pause is the sentence of the pause, why nothing moves and how it
	// resumes; empty when not paused. Under way, the Summary begins with it.
	Pause string
	// Target is the versions the Cluster's spec asks for, "EKS-A v0.21.2,
	// Kubernetes 1.31": what the cluster runs once the rule holds. Empty
	// when the Cluster is not seen.
	Target string
	// Syncing is true while a list the phases are derived from has not
	// been received yet: a phase may then look under way only because its
	// objects are not seen (the Timeline does not time it).
	Syncing bool
	// EtcdRollback is upgrade-console's etcd rollback record on the Cluster
	// (nil without one, or when the Cluster is not paused, as the recovery
	// itself reads a record without the pause as a leftover).
	EtcdRollback *EtcdRollbackRecord
}

// ProgressOptions tunes the derivation.
type ProgressOptions struct {
	// StallAfter is how long a machine or step may make no progress before it
	// is shown as stalled. EKS-A waits 10 minutes per machine. Zero means
	// DefaultStallAfter.
	StallAfter time.Duration
	// StaleAfter is how long a new generation of the EKS-A Cluster may go
	// unobserved before it is reported as a stall. Zero means
	// DefaultStaleAfter.
	StaleAfter time.Duration
}

func (o ProgressOptions) staleAfter() time.Duration {
	if o.StaleAfter <= 0 {
		return DefaultStaleAfter
	}
	return o.StaleAfter
}

// stallAfter returns the threshold with the default applied.
func (o ProgressOptions) stallAfter() time.Duration {
	if o.StallAfter <= 0 {
		return DefaultStallAfter
	}
	return o.StallAfter
}

// DefaultStallAfter is EKS-A's per-machine wait.
const DefaultStallAfter = 10 * time.Minute

// DefaultFailureGrace is how long a failure may stay before the upgrade
// counts as failed: EKS-A's CLI gives a failureMessage 10 minutes to clear,
// because the controller sets it on transient problems and clears it on the
// next successful reconcile. A failed in-place step gets the same.
const DefaultFailureGrace = 10 * time.Minute
