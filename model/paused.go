package model

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// EtcdRollbackRecord is the part of upgrade-console's etcd rollback record
// (AnnotationEtcdRollbackRecord, written by upgrade/recovery) the progress
// shows.
type EtcdRollbackRecord struct {
	// Phase is "running" while the rollback works and "done" once etcd is
	// back on the previous spec (EKS-A stays paused either way).
	Phase      string `json:"phase"`
	NewMachine string `json:"newMachine"`
	By         string `json:"by"`
	// StartedAt is when the rollback began: the upgrade's etcd phase
	// stopped there (the Timeline freezes its time at it).
	StartedAt time.Time `json:"startedAt"`
}

// Running reports whether the rollback has not finished (a record it cannot
// read counts as running: nothing says it is over).
func (r EtcdRollbackRecord) Running() bool { return r.Phase != "done" }

// EtcdRollback returns upgrade-console's etcd rollback record on the Cluster.
// A record on a Cluster that is not paused is a leftover that the recovery
// itself ignores, and so does this. A record that does not parse is still
// returned (zero fields): the pause that goes with it is deliberate all the
// same.
func (c *EKSACluster) EtcdRollback() (EtcdRollbackRecord, bool) {
	if c == nil || !c.Paused() {
		return EtcdRollbackRecord{}, false
	}
	v, ok := c.Annotations[AnnotationEtcdRollbackRecord]
	if !ok {
		return EtcdRollbackRecord{}, false
	}
	var r EtcdRollbackRecord
	if json.Unmarshal([]byte(v), &r) != nil {
		return EtcdRollbackRecord{}, true
	}
	return r, true
}

// rolledBack marks the etcd phase after upgrade-console's etcd rollback. Its
// objects then look finished (ready, no rollout marker, every member matching
// the spec) only because the spec is the previous one again: none of the
// members has what the upgrade asked for, and the phase is not done.
func rolledBack(ph *PhaseProgress, r *EtcdRollbackRecord) {
	if ph.Phase != PhaseEtcd || ph.Status == PhaseSkipped {
		return
	}
	ph.Status = PhaseRolledBack
	ph.Done = 0
	what := "rolled back to the previous spec by upgrade-console"
	if r.Running() {
		what = "rollback to the previous spec by upgrade-console in progress"
	}
	counts := fmt.Sprintf("%d/%d members ready", ph.Ready, ph.Total)
	if ph.Unseen != "" && ph.Total == 0 {
		// Nothing of etcd is seen, and nothing was counted.
		counts = ph.Unseen
	}
	ph.Detail = joinDetail(what, counts)
}

// holdPhases applies EKS-A's pause. Phases are derived from what the objects
// say, and after an etcd rollback they say "etcd ready, control plane
// waiting": read as such, the upgrade seems to move on while EKS-A, paused,
// will do nothing. So, under way, no phase is active: the one that would be
// is held, and Current says the upgrade is paused. A pause on a cluster at
// rest or failed is shown all the same: it holds back whatever comes next.
func holdPhases(p *Progress, c *EKSACluster, noLiveLock bool) {
	if c == nil || !c.Paused() {
		return
	}
	p.Paused = true
	if p.Failed || p.Current == PhaseDone {
		p.Pause = restingPause(p, noLiveLock)
		return
	}
	for i := range p.Phases {
		ph := &p.Phases[i]
		if ph.Status != PhaseActive {
			continue
		}
		ph.Status = PhaseHeld
		ph.Detail = joinDetail("EKS-A reconcile paused", ph.Detail)
	}
	p.Current = PhasePaused
	p.Pause = pausedSummary(p, noLiveLock)
}

// pausedSummary is the status line of a paused upgrade: why nothing moves and
// how it resumes.
func pausedSummary(p *Progress, noLiveLock bool) string {
	if s, ok := rollbackPause(p, noLiveLock); ok {
		return s
	}
	at := ""
	for _, ph := range p.Phases {
		if ph.Status == PhaseHeld {
			at = " at " + string(ph.Phase)
			break
		}
	}
	// Someone else's pause (an interrupted eksctl run leaves one behind):
	// say how to find out whose before clearing it.
	return "upgrade paused" + at + ": EKS-A reconcile paused (" + AnnotationEKSAPaused + "); nothing moves until it is removed: " + lockStatus(p)
}

// restingPause is the pause of a cluster whose upgrade is not under way:
// nothing is held now, the next change is.
func restingPause(p *Progress, noLiveLock bool) string {
	if s, ok := rollbackPause(p, noLiveLock); ok {
		return s
	}
	return "EKS-A reconcile paused (" + AnnotationEKSAPaused + "): EKS-A acts on no change until it is removed: " + lockStatus(p)
}

func rollbackPause(p *Progress, noLiveLock bool) (string, bool) {
	r := p.EtcdRollback
	if r == nil {
		return "", false
	}
	switch {
	case r.Running() && noLiveLock:
		// The rollback runs under the upgrade lock: without it, it was
		// stopped ("in progress … until it ends" waited for nothing).
		return "etcd rollback stopped before its end; EKS-A reconcile paused (upgrade-console etcd rollback): finish it with `upgrade-console etcd rollback " + p.ClusterFlags + "` (R in the dashboard)", true
	case r.Running():
		return "etcd rollback in progress; EKS-A reconcile paused (upgrade-console etcd rollback) until it ends", true
	}
	resume := "`upgrade-console lock clear paused " + p.ClusterFlags + "`"
	return "etcd rolled back; EKS-A reconcile paused (upgrade-console etcd rollback): resume with " + resume + " after fixing the cause", true
}

func lockStatus(p *Progress) string {
	return "see `upgrade-console lock status " + p.ClusterFlags + "`"
}

// ClusterFlags name the cluster in a command the operator pastes:
// --cluster, -n outside the default namespace, and the connection flags.
func (c *EKSACluster) ClusterFlags(conn ConnFlags) string {
	return ClusterArgs(c.Name, c.Namespace, conn)
}

// ClusterArgs name the EKS-A Cluster name in namespace, and the connection,
// in a command the operator pastes: -n outside the namespace the command
// works in without it (the context's, "default" when it names none), so
// that the command reaches the same Cluster as the console that printed it.
func ClusterArgs(name, namespace string, conn ConnFlags) string {
	s := "--cluster " + name
	if namespace != "" && namespace != conn.ContextNamespace() {
		s += " -n " + namespace
	}
	return s + conn.String()
}

func joinDetail(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "; ")
}
