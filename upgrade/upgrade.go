// Package upgrade performs an upgrade of an EKS Anywhere management cluster the
// way `eksctl anywhere upgrade cluster` does it without a bootstrap cluster:
// it resolves the current and target versions, runs the preflight checks,
// takes the upgrade lock, snapshots what a rollback needs, server-side applies
// the new cluster spec and follows the EKS-A controller until the completion
// rule holds. Every write to the cluster is recorded in the audit log.
//
// The package computes data (a Plan, check results, a dry-run report) that
// both the TUI and the headless commands render; it never prints.
package upgrade

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/upgrade-console/upgrade-console/model"
)

// ManagerName is the field manager of every server-side apply, and the
// app.kubernetes.io/managed-by value of the objects the console creates.
const ManagerName = model.FieldManager

// Labels on the objects the console creates (lock Lease, snapshot ConfigMaps).
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelCluster   = "upgrade-console/cluster"
	LabelSnapshot  = "upgrade-console/snapshot"
)

// Recorder is the audit log as this package uses it; *Auditor implements it.
type Recorder interface {
	Record(ctx context.Context, e AuditEntry) error
}

// ErrNoAudit refuses a write that has no audit log to record it in: no
// mutation of a cluster may go unrecorded.
var ErrNoAudit = errors.New("no audit log: refusing to change the cluster unrecorded")

// requireAudit is checked before the first write of an operation, so that
// one without an audit log writes nothing (as the recovery Executor
// refuses).
func requireAudit(r Recorder) error {
	if r == nil {
		return ErrNoAudit
	}
	return nil
}

// audit writes an entry. A nil recorder is ErrNoAudit (the writers refuse
// it before their first write, with requireAudit). A failed record is an
// error the caller must not swallow: no mutation may go unrecorded.
func audit(ctx context.Context, r Recorder, e AuditEntry) error {
	if r == nil {
		return ErrNoAudit
	}
	if err := r.Record(ctx, e); err != nil {
		return AuditRecordError(err)
	}
	return nil
}

// AuditRecordError is a Recorder's refusal as the commands say it: an
// AuditWriteError names the log itself ("audit log x: …"), and wrapped as
// every other cause is, it read "write audit log: audit log x: …".
func AuditRecordError(err error) error {
	var we *AuditWriteError
	if errors.As(err, &we) {
		return err
	}
	return fmt.Errorf("write audit log: %w", err)
}

// announce records e, before the write it describes, as announced when the
// recorder refused its last entry (a full disk). A writer records after its
// write: against such a log each write would go unrecorded, and the lock's
// would go on every few seconds (its renewals, then its release at exit).
// A log that refuses the announcement too stops the write; one that takes
// it lets the writers go on as before. A recorder that does not say
// whether it refuses is not asked.
func announce(ctx context.Context, r Recorder, e AuditEntry) error {
	if rf, ok := r.(interface{ Refusing() bool }); !ok || !rf.Refusing() {
		return nil
	}
	e.Result = AuditAnnounced
	return audit(ctx, r, e)
}

// resultOf maps an error to an audit result.
func resultOf(err error) (result, msg string) {
	if err != nil {
		return AuditFailed, err.Error()
	}
	return AuditOK, ""
}

func asStatus(err error, target *apierrors.APIStatus) bool { return errors.As(err, target) }
