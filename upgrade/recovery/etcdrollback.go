package recovery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// The etcd rollback of the kindless-upgrade design: when the first new etcd
// member of a rollout does not come up, put the etcd cluster spec back as it
// was and delete the new machine, leaving the cluster as it was before.
//
// It is only safe while the rollout has not gone past that first member: the
// etcdadm controller scales up one new member, waits for it to be healthy,
// and only then disowns (and later removes) an old one. While the new member
// is not healthy, every old member is still in place, so reverting the spec
// and deleting the new machine returns to the old, complete member set.

// DefaultEtcdRollbackThreshold is how long the new member may stay not ready
// before the rollback is offered.
const DefaultEtcdRollbackThreshold = 15 * time.Minute

// DefaultEtcdWaitTimeout bounds the wait for etcd to be ready again.
const DefaultEtcdWaitTimeout = 15 * time.Minute

// AnnotationEtcdRollback on the EKS-A Cluster records a rollback in progress
// (phase "running") or finished (phase "done", EKS-A reconcile kept paused):
// the facts found before the first write, so that a run resumed after an
// interruption acts on the same machines as the first run, although the
// rollback itself has changed what the planner would otherwise look at.
const AnnotationEtcdRollback = model.AnnotationEtcdRollbackRecord

// rollbackRecord is the value of AnnotationEtcdRollback.
type rollbackRecord struct {
	Phase            string   `json:"phase"` // "running" or "done"
	NewMachine       string   `json:"newMachine"`
	NewMachineUID    string   `json:"newMachineUID"`
	OldMachines      []string `json:"oldMachines"`
	KCPPausedForEtcd bool     `json:"kcpPausedForEtcd"`
	// Snapshot is where the snapshot came from: the name of its ConfigMap,
	// or "file:" and the absolute path of a local copy (--snapshot-file).
	Snapshot string `json:"snapshot"`
	// SnapshotDigest identifies the snapshot's content (see snapshotDigest),
	// whatever its source: a resumed run checks that the snapshot it reads,
	// again or from a copy, is the one the rollback started with. Empty in
	// records written before it was kept.
	SnapshotDigest string    `json:"snapshotDigest,omitempty"`
	StartedAt      time.Time `json:"startedAt"`
	By             string    `json:"by"`
}

// fileSourcePrefix marks a rollbackRecord.Snapshot that is a local file, not
// a ConfigMap name (which cannot hold a colon).
const fileSourcePrefix = "file:"

// snapshotsDirHelp is where the local copies of the snapshots are, as the
// operator reads it. It is not this machine's path: the copy is on the
// machine that ran the upgrade, which may not be the one rolling back.
const snapshotsDirHelp = "$XDG_STATE_HOME/upgrade-console/snapshots (~/.local/state/upgrade-console/snapshots when XDG_STATE_HOME is unset), on the machine that ran the upgrade"

func (r rollbackRecord) encode() string {
	b, _ := json.Marshal(r)
	return string(b)
}

// env names the cluster and the connection in the command the error gives.
func readRollbackRecord(u *unstructured.Unstructured, env *Env) (*rollbackRecord, error) {
	v, ok := u.GetAnnotations()[AnnotationEtcdRollback]
	if !ok {
		return nil, nil
	}
	var r rollbackRecord
	if err := json.Unmarshal([]byte(v), &r); err != nil || r.NewMachine == "" {
		return nil, &model.InputError{Source: ref("Cluster", u.GetNamespace(), u.GetName()), Field: "metadata.annotations." + AnnotationEtcdRollback,
			Problem: "not a rollback record written by upgrade-console",
			Fix:     "remove the annotation with `upgrade-console lock clear paused " + env.clusterFlags() + "` once you know no rollback is running"}
	}
	return &r, nil
}

// EtcdRollbackOptions tune the rollback.
type EtcdRollbackOptions struct {
	// Threshold is how long the new member must have been not ready
	// (DefaultEtcdRollbackThreshold when zero).
	Threshold time.Duration
	// WaitTimeout bounds the wait for etcd to be ready again
	// (DefaultEtcdWaitTimeout when zero).
	WaitTimeout time.Duration
	// Snapshot names the snapshot ConfigMap to restore from; empty: the
	// newest snapshot of the cluster.
	Snapshot string
	// SnapshotFile is a local copy of a snapshot (upgrade.LoadSnapshotFile)
	// to restore from instead of a ConfigMap: for when the ConfigMap is
	// gone. It must be a snapshot of the same cluster. Not with Snapshot.
	SnapshotFile string
	// By names the operator in the rollback record ("user@host").
	By string
}

// Validate checks the options that need no cluster: one snapshot source at
// most.
func (o EtcdRollbackOptions) Validate() error {
	if o.Snapshot != "" && o.SnapshotFile != "" {
		return &model.InputError{Source: "--snapshot " + o.Snapshot + " and --snapshot-file " + o.SnapshotFile,
			Problem: "both name a snapshot to restore from; a rollback restores one",
			Fix:     "give --snapshot NAME for a snapshot ConfigMap in the cluster, or --snapshot-file PATH for a local copy (when the ConfigMap is gone), not both"}
	}
	return nil
}

// etcdSpecPaths are the parts of the EtcdadmCluster spec a rollback restores:
// the etcdadm config (etcd version for Ubuntu/RHEL, etcd image for
// Bottlerocket, and the rest of the config that went with them) and the
// infrastructure template the members are built from.
var etcdSpecPaths = [][]string{{"spec", "etcdadmConfigSpec"}, {"spec", "infrastructureTemplate"}}

// PlanEtcdRollback reads the cluster and returns the rollback plan, or a
// *RefusedError saying which precondition does not hold.
func PlanEtcdRollback(ctx context.Context, env *Env, o EtcdRollbackOptions) (*Plan, error) {
	if o.Threshold <= 0 {
		o.Threshold = DefaultEtcdRollbackThreshold
	}
	if o.WaitTimeout <= 0 {
		o.WaitTimeout = DefaultEtcdWaitTimeout
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	// A file given is read first: a bad one is refused before the cluster
	// is even read.
	var given *fileSnapshot
	if o.SnapshotFile != "" {
		f, err := env.readSnapshotFile(o.SnapshotFile, "--snapshot-file ")
		if err != nil {
			return nil, err
		}
		given = f
	}
	now := env.now()
	cluster, err := env.readCluster(ctx)
	if err != nil {
		return nil, err
	}
	rec, err := readRollbackRecord(cluster, env)
	if err != nil {
		return nil, err
	}
	// A record on a cluster that is no longer paused is a leftover (the pause
	// was removed by hand): a new rollback starts from scratch.
	if rec != nil && cluster.GetAnnotations()[model.AnnotationEKSAPaused] != "true" {
		rec = nil
	}
	etcdRes := env.res(upgrade.GVREtcdadmCluster, env.systemNS())
	etcd, err := getOpt(ctx, etcdRes, env.etcdName())
	if err != nil {
		return nil, fmt.Errorf("read EtcdadmCluster %s/%s: %w", env.systemNS(), env.etcdName(), err)
	}
	etcdRef := ref("EtcdadmCluster", env.systemNS(), env.etcdName())
	clusterRef := ref("Cluster", env.clusterNS(), env.Cluster)
	var pre []Precondition
	if etcd == nil {
		pre = append(pre, Precondition{Name: "external-etcd", Description: "the cluster has external etcd (an EtcdadmCluster)",
			Detail: etcdRef + " not found: the cluster runs stacked etcd, whose upgrade the control plane rollout handles"})
		return nil, &RefusedError{Action: ActionEtcdRollback, Cluster: env.Cluster, Object: etcdRef, Preconditions: pre}
	}
	pre = append(pre, Precondition{Name: "external-etcd", Description: "the cluster has external etcd (an EtcdadmCluster)", OK: true, Detail: etcdRef})

	src, err := env.snapshotSource(ctx, o, rec, given)
	if err != nil {
		return nil, err
	}
	snap, snapDetail := src.snap, src.detail
	// A --snapshot at fault is bad input (exit 1), but it goes through the
	// preconditions as a missing snapshot: the attempt is recorded as the
	// refusal it was, with the lines that say what else holds.
	var badSnapshot *model.InputError
	if rec == nil && given == nil && o.Snapshot != "" {
		if err := env.namedSnapshotBad(ctx, o.Snapshot, src); err != nil {
			badSnapshot = err
			snap, snapDetail = nil, err.Field+": "+err.Problem
		}
	}
	var oldEtcd *upgrade.SnapshotObject
	if snap != nil {
		oldEtcd = snap.Object("EtcdadmCluster", env.etcdName())
		switch {
		case oldEtcd == nil:
			snapDetail = fmt.Sprintf("%s holds no %s", src.label, etcdRef)
		case oldEtcd.UID != "" && oldEtcd.UID != string(etcd.GetUID()):
			// Same names, another object: a copy from another management
			// cluster with the same names (two upgraded the same second
			// wrote one file), or this one's before it was made again.
			// Its spec is no record of how these members were built.
			snapDetail = fmt.Sprintf("%s holds %s with UID %s, but the cluster's has UID %s: the snapshot is of another cluster's etcd (another management cluster with the same names, or this one before it was created again)",
				src.label, etcdRef, oldEtcd.UID, etcd.GetUID())
			oldEtcd = nil
		}
	}
	if oldEtcd == nil {
		// Without the snapshot the spec cannot be compared; a settled
		// etcd not marked upgrading has no rollout either way, and that
		// is the refusal's first reason: it read as a missing snapshot
		// alone, with the way to restore from a copy.
		if st := readEtcdStatus(etcd); etcd.GetAnnotations()[model.AnnotationEtcdUpgrading] == "" && st.settled() {
			pre = append(pre, Precondition{Name: "rollout-in-progress", Description: "an etcd rollout is in progress",
				Detail: fmt.Sprintf("etcd is settled (%s) and not marked upgrading: there is no etcd rollout to roll back", st)})
		}
	}
	pre = append(pre, Precondition{Name: "snapshot", Description: "a pre-upgrade snapshot holds the previous etcd spec",
		OK: oldEtcd != nil, Detail: snapDetail})
	if oldEtcd == nil {
		return nil, &RefusedError{Action: ActionEtcdRollback, Cluster: env.Cluster, Object: etcdRef, Preconditions: pre, Input: badSnapshot}
	}

	machines, err := env.etcdMachines(ctx)
	if err != nil {
		return nil, err
	}
	kcpRes, err := env.capi(upgrade.GVRKCP, env.systemNS())
	if err != nil {
		return nil, err
	}
	kcp, err := getOpt(ctx, kcpRes, env.Cluster)
	if err != nil {
		return nil, fmt.Errorf("read KubeadmControlPlane %s/%s: %w", env.systemNS(), env.Cluster, err)
	}
	lockPre, err := env.lockPrecondition(ctx)
	if err != nil {
		return nil, err
	}

	changes := etcdSpecChanges(etcd, oldEtcd)
	if rec == nil {
		env.readTemplates(ctx, machines)
		snapReplicas := number(oldEtcd.Spec["replicas"])
		snapTemplate, _, _ := unstructured.NestedString(oldEtcd.Spec, "infrastructureTemplate", "name")
		fresh := freshRollbackChecks(now, o.Threshold, etcd, changes, machines, snapReplicas, snapTemplate, snap.When(), snap.Created.IsZero())
		pre = append(pre, fresh.pre...)
		pre = append(pre, lockPre)
		if err := refuseUnless(ActionEtcdRollback, env.Cluster, etcdRef, pre); err != nil {
			return nil, err
		}
		rec = &rollbackRecord{
			Phase:            "running",
			NewMachine:       fresh.newMachine.Name,
			NewMachineUID:    fresh.newMachine.UID,
			OldMachines:      fresh.old,
			KCPPausedForEtcd: kcp != nil && kcp.GetAnnotations()[model.AnnotationCAPIPaused] == "true" && etcd.GetAnnotations()[model.AnnotationEtcdUpgrading] != "",
			Snapshot:         src.record,
			SnapshotDigest:   snapshotDigest(snap),
			StartedAt:        now.UTC(),
			By:               o.By,
		}
	} else {
		// snapshotSource checked that the snapshot is the one the rollback
		// started with.
		detail := fmt.Sprintf("started by %s at %s from %s (phase %s): resuming from the cluster's current state", rec.By, rec.StartedAt.Format(time.RFC3339), recordedSource(rec), rec.Phase)
		if rec.Phase == "done" {
			// "resuming" of a rollback that finished read as one cut short.
			detail = fmt.Sprintf("started by %s at %s from %s, and finished: each step is checked against the cluster as it is now", rec.By, rec.StartedAt.Format(time.RFC3339), recordedSource(rec))
		}
		pre = append(pre, Precondition{Name: "resume", Description: "a rollback of this cluster is recorded", OK: true, Detail: detail})
		pre = append(pre, resumeSafe(rec, machines, env))
		pre = append(pre, lockPre)
		if err := refuseUnless(ActionEtcdRollback, env.Cluster, etcdRef, pre); err != nil {
			return nil, err
		}
	}

	p := &Plan{
		lock:          env.runLock,
		lockAccess:    env.lockAccess,
		lockObject:    env.lockObjectRef(),
		Action:        ActionEtcdRollback,
		Cluster:       env.Cluster,
		Title:         fmt.Sprintf("Roll back the etcd rollout of %s: restore the etcd spec of %s and delete the new member %s", env.Cluster, src.label, rec.NewMachine),
		Confirm:       env.etcdName(),
		ConfirmObject: etcdRef,
		Preconditions: pre,
	}
	paused := cluster.GetAnnotations()[model.AnnotationEKSAPaused]
	// pausedAt is when this run paused EKS-A (zero when an earlier run
	// did): the restore waits for the controller to have seen it.
	var pausedAt time.Time
	// holds says whether the restore still holds. EKS-A's controller reads
	// the Cluster from its cache, and a reconcile that did not yet see the
	// pause (one under way, or one the restore itself triggered) writes the
	// new etcd spec again: etcdadm then rolls forward and releases the old
	// members, which the wait read, about to go, as "ready" (the demo did it
	// 2 times in 4 at --speed 1).
	holds := func(u *unstructured.Unstructured) error {
		ch := etcdSpecChanges(u, oldEtcd)
		if len(ch) == 0 {
			return nil
		}
		// Who wrote it is read, not assumed: a reconcile of EKS-A that
		// had not seen the pause, or a person or tool, whom a second
		// restore does not stop.
		by, next := "", rollbackAgain(env)
		if w := specWriter(u); w.Manager != "" {
			by = fmt.Sprintf(", written again by %s at %s", w.Manager, w.Time.UTC().Format(time.RFC3339))
			next = "if " + w.Manager + " is not EKS-A's controller (paused now, it writes no more), stop it first; then " + next
		}
		return &RolledForwardError{What: "the etcd spec is no longer the snapshot's" + by + ": " + describeChanges(rolledOut(ch)), Next: next}
	}
	p.Steps = append(p.Steps, Step{
		Name:   "pause-eksa-reconcile",
		Title:  "Pause EKS-A reconcile of the Cluster, so its controller does not apply the new etcd spec again",
		Object: clusterRef,
		Change: fmt.Sprintf("add annotation %s=\"true\" and the rollback record %s", model.AnnotationEKSAPaused, AnnotationEtcdRollback),
		Before: map[string]any{model.AnnotationEKSAPaused: nilIfEmpty(paused)},
		After:  map[string]any{model.AnnotationEKSAPaused: "true", AnnotationEtcdRollback: rec},
		done: func(ctx context.Context) (bool, string, error) {
			u, err := env.eksaCluster().Get(ctx, env.Cluster, metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			a := u.GetAnnotations()
			if a[model.AnnotationEKSAPaused] == "true" && a[AnnotationEtcdRollback] != "" {
				return true, "EKS-A reconcile is paused and the rollback is recorded", nil
			}
			return false, "", nil
		},
		do: func(ctx context.Context, dry bool) (string, error) {
			if err := env.stillStuck(ctx, rec, etcdRef); err != nil {
				return "", err
			}
			// The record says when the rollback began, not when it was
			// planned: the confirmation may have waited.
			if !dry {
				rec.StartedAt = env.now().UTC()
			}
			err := setAnnotations(ctx, env.eksaCluster(), env.Cluster, map[string]string{
				model.AnnotationEKSAPaused: "true",
				AnnotationEtcdRollback:     rec.encode(),
			}, dry)
			if err == nil && !dry {
				pausedAt = time.Now()
			}
			return "EKS-A reconcile paused", err
		},
	})

	before, after := map[string]any{}, map[string]any{}
	for _, path := range etcdSpecPaths {
		v, _, _ := unstructured.NestedFieldCopy(etcd.Object, path...)
		before[strings.Join(path, ".")] = v
		after[strings.Join(path, ".")] = oldEtcd.Spec[path[1]]
	}
	p.Steps = append(p.Steps, Step{
		Name:   "restore-etcd-spec",
		Title:  "Restore the EtcdadmCluster spec (etcd version or image, infrastructure template) from the snapshot",
		Object: etcdRef,
		Change: describeChanges(changes),
		Before: before,
		After:  after,
		done: func(ctx context.Context) (bool, string, error) {
			u, err := etcdRes.Get(ctx, env.etcdName(), metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			if len(etcdSpecChanges(u, oldEtcd)) == 0 {
				return true, "the etcd spec is the snapshot's", nil
			}
			return false, "", nil
		},
		do: func(ctx context.Context, dry bool) (string, error) {
			// The first write of a rollback resumed after the pause: the
			// rollout may have gone past its first member while the
			// confirmation waited, and the old spec would roll every
			// member back.
			if wait := env.pauseSettle() - time.Since(pausedAt); !dry && !pausedAt.IsZero() && wait > 0 {
				select {
				case <-ctx.Done():
					return "", ctx.Err()
				case <-time.After(wait):
				}
			}
			if err := stillHeld(ctx); !dry && err != nil {
				return "", err
			}
			if err := env.stillStuck(ctx, rec, etcdRef); err != nil {
				return "", err
			}
			var ops []patchOp
			for _, path := range etcdSpecPaths {
				ptr := "/" + strings.Join(path, "/")
				cur := before[strings.Join(path, ".")]
				old, inOld := oldEtcd.Spec[path[1]]
				switch {
				case cur == nil && !inOld:
					continue
				case cur == nil:
					ops = append(ops, patchOp{Op: "add", Path: ptr, Value: old})
				case !inOld:
					ops = append(ops, patchOp{Op: "test", Path: ptr, Value: cur}, patchOp{Op: "remove", Path: ptr})
				default:
					ops = append(ops, patchOp{Op: "test", Path: ptr, Value: cur}, patchOp{Op: "replace", Path: ptr, Value: old})
				}
			}
			_, err := etcdRes.Patch(ctx, env.etcdName(), types.JSONPatchType, jsonPatch(ops...),
				metav1.PatchOptions{FieldManager: upgrade.ManagerName, DryRun: dryRunOpt(dry)})
			same := func(ctx context.Context) bool {
				u, err := etcdRes.Get(ctx, env.etcdName(), metav1.GetOptions{})
				if err != nil {
					return true
				}
				for _, path := range etcdSpecPaths {
					v, _, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
					if !reflect.DeepEqual(v, before[strings.Join(path, ".")]) {
						return false
					}
				}
				return true
			}
			if err == nil && !dry {
				// Written again within moments (a reconcile the restore
				// itself set off, on a cache without the pause): said
				// as such, where the read-back said "not in place: ".
				u, gerr := etcdRes.Get(ctx, env.etcdName(), metav1.GetOptions{})
				if gerr != nil {
					return "", gerr
				}
				if herr := holds(u); herr != nil {
					// Its own write landed: the record says so, not
					// a restore that failed.
					return "", fmt.Errorf("the snapshot's spec was written, then: %w", herr)
				}
			}
			return fmt.Sprintf("%d field(s) restored", len(changes)), guarded(ctx, err, etcdRef, "its etcd spec is no longer the one the plan read", same)
		},
	})

	machineRes, err := env.capi(gvrMachine, env.systemNS())
	if err != nil {
		return nil, err
	}
	newRef := ref("Machine", env.systemNS(), rec.NewMachine)
	p.Steps = append(p.Steps, Step{
		Name:   "delete-new-machine",
		Title:  "Delete the new etcd Machine that did not become ready",
		Object: newRef,
		Change: fmt.Sprintf("delete (only the Machine with UID %s)", rec.NewMachineUID),
		Before: map[string]any{"machine": rec.NewMachine, "uid": rec.NewMachineUID},
		After:  map[string]any{"machine": nil},
		done: func(ctx context.Context) (bool, string, error) {
			u, err := getOpt(ctx, machineRes, rec.NewMachine)
			switch {
			case err != nil:
				return false, "", err
			case u == nil || string(u.GetUID()) != rec.NewMachineUID:
				return true, "the new machine is gone", nil
			case u.GetDeletionTimestamp() != nil:
				return true, "the new machine is being deleted", nil
			}
			return false, "", nil
		},
		do: func(ctx context.Context, dry bool) (string, error) {
			if err := env.stillStuck(ctx, rec, etcdRef); err != nil {
				return "", err
			}
			if !dry {
				// Deleted under the new spec, the member is replaced by
				// another on it: the rollout goes on.
				u, err := etcdRes.Get(ctx, env.etcdName(), metav1.GetOptions{})
				if err != nil {
					return "", err
				}
				if err := holds(u); err != nil {
					return "", err
				}
			}
			uid := types.UID(rec.NewMachineUID)
			err := machineRes.Delete(ctx, rec.NewMachine, metav1.DeleteOptions{
				Preconditions: &metav1.Preconditions{UID: &uid}, DryRun: dryRunOpt(dry),
			})
			if apierrors.IsNotFound(err) {
				return "already gone", errNoWrite
			}
			return "deletion requested", guarded(ctx, err, newRef, "a different Machine now has this name", nil)
		},
	})

	blocker := waitBlocker{what: "etcd not ready", hint: "check the etcdadm-controller logs"}
	// etcdReady is the wait's condition; waiting, a restore that does not
	// hold ends it (no wait would), where the step's check before it runs
	// (a dry run's too, before any restore) only finds it not done.
	etcdReady := func(waiting bool) func(ctx context.Context) (bool, string, error) {
		return func(ctx context.Context) (bool, string, error) {
			u, err := etcdRes.Get(ctx, env.etcdName(), metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			st := readEtcdStatus(u)
			ms, err := env.etcdMachines(ctx)
			if err != nil {
				return false, "", err
			}
			byName := machinesByName(ms)
			herr := holds(u)
			if rel := rec.released(byName); herr == nil && len(rel) > 0 {
				// Released, being deleted or gone: the rollout's doing
				// (stillStuck reads them so too); the wait ran out its
				// time on members that would not come back.
				herr = &RolledForwardError{What: "etcdadm released or removed old member(s) " + strings.Join(rel, ", ") + ": the rollout goes on with the new etcd spec", Next: rollbackAgain(env)}
			}
			if herr != nil {
				if !waiting {
					return false, herr.Error(), nil
				}
				return false, "", herr
			}
			var missing []string
			for _, n := range rec.OldMachines {
				if m, ok := byName[n]; !ok || !m.EtcdReady || m.Deleting {
					missing = append(missing, n)
				}
			}
			newLeft := false
			if m, ok := byName[rec.NewMachine]; ok && m.UID == rec.NewMachineUID {
				newLeft = true
			}
			switch {
			case newLeft:
				blocker = waitBlocker{what: "machine " + rec.NewMachine + " not deleted",
					hint: fmt.Sprintf("its deletion waits on its finalizers (kubectl%s get machine -n %s %s -o jsonpath='{.metadata.finalizers}'): the infrastructure provider removes them once the VM is gone, so check that provider's controller logs and the VM",
						env.Conn, env.systemNS(), rec.NewMachine)}
				return false, fmt.Sprintf("machine %s still exists (deletion in progress); %s", rec.NewMachine, st), nil
			case len(missing) > 0:
				blocker = waitBlocker{what: "etcd members not ready", hint: "check the etcdadm-controller logs"}
				return false, fmt.Sprintf("members not ready: %s; %s", strings.Join(missing, ", "), st), nil
			case !st.settled() || st.ReadyReplicas < int64(len(rec.OldMachines)):
				blocker = waitBlocker{what: "etcd not ready", hint: "check the etcdadm-controller logs"}
				return false, st.String(), nil
			}
			return true, fmt.Sprintf("etcd ready with its %d members (%s)", len(rec.OldMachines), strings.Join(rec.OldMachines, ", ")), nil
		}
	}
	p.Steps = append(p.Steps, Step{
		Name:   "wait-etcd-ready",
		Title:  "Wait until etcd is ready again with all its old members",
		Object: etcdRef,
		Change: fmt.Sprintf("none (waits up to %s for status.ready on an observed generation, members %s, and no machine %s)", o.WaitTimeout, strings.Join(rec.OldMachines, ", "), rec.NewMachine),
		Wait:   true,
		done:   etcdReady(false),
		do: func(ctx context.Context, _ bool) (string, error) {
			last, err := pollState(ctx, env.poll(), o.WaitTimeout, etcdReady(true))
			if err != nil {
				if rf := (*RolledForwardError)(nil); errors.As(err, &rf) {
					return "", err
				}
				if ctx.Err() != nil {
					return last, ctx.Err()
				}
				// What held the wait at its last look, not "etcd not
				// ready" when etcd was and a machine's deletion was not.
				return last, &WaitTimeoutError{What: blocker.what, After: o.WaitTimeout, Last: last, Hint: blocker.hint}
			}
			return last, nil
		},
	})

	upgrading := etcd.GetAnnotations()[model.AnnotationEtcdUpgrading]
	if upgrading == "" {
		upgrading = "true"
	}
	p.Steps = append(p.Steps, removeAnnotationStep("clear-etcd-upgrading",
		"Clear the etcd upgrading annotation if it remains", etcdRes, etcdRef, env.etcdName(),
		model.AnnotationEtcdUpgrading, upgrading))

	if rec.KCPPausedForEtcd {
		p.Steps = append(p.Steps, removeAnnotationStep("unpause-kcp",
			"Unpause the KubeadmControlPlane (EKS-A paused it for the etcd rollout)", kcpRes,
			ref("KubeadmControlPlane", env.systemNS(), env.Cluster), env.Cluster, model.AnnotationCAPIPaused, "true"))
	} else {
		p.Notes = append(p.Notes, "The KubeadmControlPlane was not paused for the etcd rollout: it is left as it is.")
	}

	doneRec := *rec
	doneRec.Phase = "done"
	p.Steps = append(p.Steps, Step{
		Name:   "record-finished",
		Title:  "Record the rollback as finished (EKS-A reconcile stays paused)",
		Object: clusterRef,
		Change: fmt.Sprintf("set %s phase to \"done\"; %s stays \"true\"", AnnotationEtcdRollback, model.AnnotationEKSAPaused),
		Before: map[string]any{AnnotationEtcdRollback: rec},
		After:  map[string]any{AnnotationEtcdRollback: &doneRec},
		done: func(ctx context.Context) (bool, string, error) {
			u, err := env.eksaCluster().Get(ctx, env.Cluster, metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			r, err := readRollbackRecord(u, env)
			if err != nil {
				return false, "", err
			}
			return r != nil && r.Phase == "done", "the rollback is recorded as finished", nil
		},
		do: func(ctx context.Context, dry bool) (string, error) {
			u, err := env.eksaCluster().Get(ctx, env.Cluster, metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			cur := u.GetAnnotations()[AnnotationEtcdRollback]
			if cur == "" {
				if dry {
					return "depends on step 1 (not yet made)", nil
				}
				return "", &ConcurrentChangeError{Object: clusterRef, What: "the rollback record was removed"}
			}
			// Finish the record as step 1 wrote it (its start time is
			// when that step ran, after this plan was made).
			if r, err := readRollbackRecord(u, env); err == nil && r != nil {
				doneRec = *r
				doneRec.Phase = "done"
			}
			path := "/metadata/annotations/" + pointerEscape(AnnotationEtcdRollback)
			_, err = env.eksaCluster().Patch(ctx, env.Cluster, types.JSONPatchType, jsonPatch(
				patchOp{Op: "test", Path: path, Value: cur},
				patchOp{Op: "replace", Path: path, Value: doneRec.encode()},
			), metav1.PatchOptions{FieldManager: upgrade.ManagerName, DryRun: dryRunOpt(dry)})
			return "rollback recorded as finished", guarded(ctx, err, clusterRef, "the rollback record changed",
				metaKeyIs(env.eksaCluster(), env.Cluster, "annotations", AnnotationEtcdRollback, cur))
		},
	})

	p.Notes = append(p.Notes,
		"EKS-A reconcile of the Cluster stays paused after the rollback: resumed with the new spec, the controller would start the same etcd rollout again.",
		"The EKS-A Cluster's spec is not changed (its webhook forbids version downgrades); the etcd spec and machines are.",
		memberNote)
	p.closing = func(ctx context.Context) []string { return env.rollbackClosing(ctx) }
	return p, nil
}

// RolledForwardError says the etcd rollout went on after the rollback
// restored its spec: the rollback does not hold, and Next says what to do.
type RolledForwardError struct {
	What string
	Next string
}

func (e *RolledForwardError) Error() string {
	return "the rollback does not hold: " + e.What + "; " + e.Next
}

// specWriter is the manager that last wrote the object's spec, from its
// managedFields.
func specWriter(u *unstructured.Unstructured) Writer {
	var best Writer
	for _, mf := range u.GetManagedFields() {
		// The console's own restore is not who wrote the spec again.
		if mf.FieldsV1 == nil || mf.Subresource != "" || mf.Time == nil || mf.Manager == upgrade.ManagerName || !bytes.Contains(mf.FieldsV1.GetRawBytes(), []byte(`"f:spec"`)) {
			continue
		}
		if best.Manager == "" || mf.Time.After(best.Time) {
			best = Writer{Manager: mf.Manager, Time: mf.Time.Time}
		}
	}
	return best
}

// waitBlocker is what a wait step last found in its way, and where to look.
type waitBlocker struct{ what, hint string }

// memberNote is the step the console cannot take: it has no access to etcd
// itself. etcdadm-controller removes the member of a machine it deletes
// (removeEtcdMemberAndDeleteMachine), not of one deleted by someone else, and
// a new member that got as far as joining stays in the member list, dead:
// three healthy of four registered tolerate no failure.
const memberNote = "Deleting the new Machine does not remove its etcd member if it joined: on an old etcd node run `etcdctl member list` (certificates under /etc/etcd/pki on Ubuntu and RHEL), and if the new machine is listed, `etcdctl member remove <its id>`; until then etcd tolerates one failure fewer."

// resumeSafe checks, before a resumed rollback deletes the new member, that
// the rollout is still stuck at it. Only the EKS-A reconcile is paused: the
// etcdadm controller goes on while a rollback is interrupted, and once the
// new member is ready it releases an old one, after which deleting the new
// member could break quorum.
func resumeSafe(rec *rollbackRecord, machines []machine, e *Env) Precondition {
	p := Precondition{Name: "resume-safe", Description: "the new member is still not ready and every old member is in place"}
	p.OK, p.Detail = stuckAtNewMember(rec, machines, "since the rollback started")
	if !p.OK {
		p.Detail += "; the rollback cannot continue safely. If etcd is healthy, end it and resume EKS-A with `upgrade-console lock clear paused --force " + e.clusterFlags() + "` (recorded)"
	}
	return p
}

func machinesByName(ms []machine) map[string]machine {
	byName := make(map[string]machine, len(ms))
	for _, m := range ms {
		byName[m.Name] = m
	}
	return byName
}

// released are the old members the etcdadm controller has released, is
// deleting or has removed: the rollout went past them.
func (r *rollbackRecord) released(byName map[string]machine) []string {
	var out []string
	for _, n := range r.OldMachines {
		if m, ok := byName[n]; !ok || !m.Owned || m.Deleting {
			out = append(out, n)
		}
	}
	return out
}

// rollbackAgain is what to do once the rollback does not hold: run it again.
func rollbackAgain(env *Env) string {
	return "run `upgrade-console etcd rollback " + env.clusterFlags() + "` again: it restores the snapshot's spec once more while the rollout is still at its first new member, and otherwise refuses, saying how to end the rollback"
}

// stuckAtNewMember says whether the rollout is still where the rollback
// found it: every old member owned and in place, and the new member not
// ready or already gone (the rollback deletes it). while says since when it
// is judged, for the reason when it is not.
func stuckAtNewMember(rec *rollbackRecord, machines []machine, while string) (bool, string) {
	byName := machinesByName(machines)
	released := rec.released(byName)
	nm, ok := byName[rec.NewMachine]
	gone := !ok || nm.UID != rec.NewMachineUID || nm.Deleting
	switch {
	case gone && len(released) > 0:
		// The new machine went (this rollback, or another console's,
		// deleted it), and the rollout went on without it: etcdadm
		// released old members for new ones that came up. Their spec put
		// back, every member would be rolled back to the previous one.
		return false, fmt.Sprintf("the new machine %s is gone and the etcdadm controller has released or removed old member(s) %s %s: the rollout went on with other new members, and restoring the previous spec would roll every member back", rec.NewMachine, strings.Join(released, ", "), while)
	case gone:
		return true, "the new machine " + rec.NewMachine + " is already deleted or being deleted; old members " + strings.Join(rec.OldMachines, ", ") + " in place"
	case nm.EtcdReady:
		return false, fmt.Sprintf("the new member %s became ready %s: the rollout went on, and deleting it would remove a healthy member", nm.Name, while)
	case len(released) > 0:
		return false, fmt.Sprintf("the etcdadm controller has released or removed old member(s) %s %s: deleting the new member could break quorum", strings.Join(released, ", "), while)
	}
	return true, fmt.Sprintf("%s not ready; old members %s in place", nm.Name, strings.Join(rec.OldMachines, ", "))
}

// stillStuck checks again, right before a write, what the plan found: the
// plan may wait any time for its dry run and the typed confirmation while
// the etcdadm controller goes on, and a new member that became ready meanwhile
// (an old one then released) must not be deleted, nor the spec it runs
// taken away.
func (e *Env) stillStuck(ctx context.Context, rec *rollbackRecord, object string) error {
	ms, err := e.etcdMachines(ctx)
	if err != nil {
		return err
	}
	if ok, why := stuckAtNewMember(rec, ms, "meanwhile"); !ok {
		return &ConcurrentChangeError{Object: object, What: why}
	}
	return nil
}

type freshChecks struct {
	pre        []Precondition
	newMachine machine
	old        []string
}

// freshRollbackChecks evaluates the preconditions of a rollback that has not
// started: an etcd rollout whose first new member is stuck.
func freshRollbackChecks(now time.Time, threshold time.Duration, etcd *unstructured.Unstructured, changes []upgrade.FieldChange,
	machines []machine, snapReplicas int64, snapTemplate string, takenAt time.Time, clientClock bool) freshChecks {
	var fc freshChecks
	st := readEtcdStatus(etcd)
	upgrading := etcd.GetAnnotations()[model.AnnotationEtcdUpgrading] != ""

	rollout := Precondition{Name: "rollout-in-progress", Description: "an etcd rollout is in progress (the etcd spec differs from the snapshot)"}
	switch {
	case len(changes) == 0:
		rollout.Detail = "the etcd spec is the snapshot's: there is no new etcd spec to roll back (if that snapshot was taken after the new spec was applied, name an older one with --snapshot or --snapshot-file)"
	case !upgrading && st.settled():
		rollout.Detail = fmt.Sprintf("the etcd spec changed but etcd is settled (%s) and not marked upgrading: the rollout finished", st)
	default:
		rollout.OK = true
		rollout.Detail = fmt.Sprintf("etcd spec changed since the snapshot (%s); %s", describeChanges(rolledOut(changes)), st)
	}
	fc.pre = append(fc.pre, rollout)

	replicas := Precondition{Name: "same-member-count", Description: "the rollout does not also change the number of etcd members"}
	if st.Replicas != snapReplicas {
		replicas.Detail = fmt.Sprintf("spec.replicas is %d, the snapshot's %d: a resize is not rolled back by this action", st.Replicas, snapReplicas)
	} else {
		replicas.OK = true
		replicas.Detail = fmt.Sprintf("%d members", st.Replicas)
	}
	fc.pre = append(fc.pre, replicas)

	var disowned, deleting []string
	for _, m := range machines {
		if !m.Owned {
			disowned = append(disowned, m.Name)
		}
		if m.Deleting {
			deleting = append(deleting, m.Name)
		}
	}
	removed := Precondition{Name: "no-old-member-removed", Description: "no old etcd member has been removed yet"}
	switch {
	case len(disowned) > 0:
		removed.Detail = fmt.Sprintf("the etcdadm controller has already released %s: the rollout went past its first new member, and deleting it now could break quorum", strings.Join(disowned, ", "))
	case len(deleting) > 0:
		removed.Detail = fmt.Sprintf("machine(s) %s are being deleted", strings.Join(deleting, ", "))
	case int64(len(machines)) < snapReplicas:
		removed.Detail = fmt.Sprintf("only %d etcd machines for %d members", len(machines), snapReplicas)
	default:
		removed.OK = true
		removed.Detail = fmt.Sprintf("all %d machines are owned by the EtcdadmCluster", len(machines))
	}
	fc.pre = append(fc.pre, removed)

	// The etcdadm controller adds one member at a time, so with no old member
	// removed, the machines beyond the member count are the new ones.
	extra := int64(len(machines)) - snapReplicas
	one := Precondition{Name: "single-new-member", Description: "exactly one new etcd machine exists (the newest, the only one with the new spec)"}
	switch {
	case snapReplicas < 1:
		one.Detail = fmt.Sprintf("the snapshot's etcd spec has %d members: there is no old member to go back to", snapReplicas)
	case extra <= 0 && !rollout.OK:
		one.Detail = fmt.Sprintf("%d etcd machines for %d members: no new member", len(machines), snapReplicas)
	case extra <= 0:
		one.Detail = fmt.Sprintf("%d etcd machines for %d members: no new member has been created yet; wait for the etcdadm controller", len(machines), snapReplicas)
	case extra > 1:
		one.Detail = fmt.Sprintf("%d new etcd machines: the rollout is past its first member; this rollback only undoes a first member that failed", extra)
	default:
		fc.newMachine = machines[len(machines)-1]
		if !takenAt.IsZero() && fc.newMachine.Created.Before(takenAt.Truncate(time.Second)) {
			one.Detail = fmt.Sprintf("the newest machine %s was created before the snapshot (%s): it is not from this rollout", fc.newMachine.Name, takenAt.Format(time.RFC3339))
			if clientClock {
				// A file's time is the clock of the machine that took
				// it: one that ran ahead of the API server's reads so.
				one.Detail += " (the file's time is the clock of the machine that took it: if that clock ran ahead of the API server's, restore from its snapshot ConfigMap instead, `--snapshot NAME`, which `upgrade-console snapshot list` names)"
			}
			break
		}
		one.OK = true
		one.Detail = fmt.Sprintf("%s, created %s ago", fc.newMachine.Name, ago(now, fc.newMachine.Created))
		for _, m := range machines[:len(machines)-1] {
			fc.old = append(fc.old, m.Name)
		}
	}
	fc.pre = append(fc.pre, one)
	if rollout.OK {
		fc.pre = append(fc.pre, snapshotOfTheseMembers(machines, fc.newMachine, snapTemplate, takenAt))
	} else {
		// With no rollout, every member may be newer than the snapshot
		// (the rollout finished): "name the snapshot taken just before
		// this rollout" sent the operator after the very one named.
		fc.pre = append(fc.pre, Precondition{Name: "snapshot-of-these-members", Description: "the snapshot holds the etcd spec the old members were built from",
			Detail: "no rollout in progress to judge it against"})
	}

	stuck := Precondition{Name: "new-member-not-ready", Description: fmt.Sprintf("the new member has not become ready within %s", threshold)}
	switch {
	case !one.OK:
		stuck.Detail = "no single new member to judge"
	case fc.newMachine.EtcdReady:
		stuck.Detail = fmt.Sprintf("%s is a ready etcd member: the rollout is progressing", fc.newMachine.Name)
	case now.Sub(fc.newMachine.Created) < threshold:
		stuck.Detail = fmt.Sprintf("%s is not ready yet but only %s old (phase %s); the rollback is offered after %s (--threshold)",
			fc.newMachine.Name, ago(now, fc.newMachine.Created), orUnknown(fc.newMachine.Phase), threshold)
	default:
		stuck.OK = true
		stuck.Detail = fmt.Sprintf("%s not ready %s after its creation (phase %s, no %s label)", fc.newMachine.Name, ago(now, fc.newMachine.Created), orUnknown(fc.newMachine.Phase), model.LabelEtcdReady)
	}
	fc.pre = append(fc.pre, stuck)
	return fc
}

// snapshotOfTheseMembers checks that the snapshot holds the etcd spec the
// old members run. Restored, the spec of an earlier upgrade's snapshot (the
// newest ConfigMap after an upgrade the console did not start, or an old
// local copy) makes every member outdated: etcdadm then replaces them all,
// downgrading etcd. A member created after the snapshot was built from a
// later spec; a member cloned from another template than the snapshot's was
// too.
func snapshotOfTheseMembers(machines []machine, newMachine machine, snapTemplate string, takenAt time.Time) Precondition {
	p := Precondition{Name: "snapshot-of-these-members", Description: "the snapshot holds the etcd spec the old members were built from"}
	var later, other []string
	for _, m := range machines {
		if m.UID != "" && m.UID == newMachine.UID {
			continue
		}
		if !takenAt.IsZero() && m.Created.After(takenAt) {
			later = append(later, fmt.Sprintf("%s (created %s)", m.Name, m.Created.UTC().Format(time.RFC3339)))
		}
		if m.Template != "" && snapTemplate != "" && m.Template != snapTemplate {
			other = append(other, fmt.Sprintf("%s (from %s)", m.Name, m.Template))
		}
	}
	const fix = "; restoring it would replace every member with an older spec. Name the snapshot taken just before this rollout (--snapshot NAME or --snapshot-file PATH), or recover by hand"
	switch {
	case len(later) > 0:
		p.Detail = fmt.Sprintf("the snapshot was taken %s, before member(s) %s: it holds an earlier etcd spec than they run%s",
			takenAt.UTC().Format(time.RFC3339), strings.Join(later, ", "), fix)
	case len(other) > 0:
		p.Detail = fmt.Sprintf("the snapshot's infrastructure template is %s, but member(s) %s were cloned from another%s",
			snapTemplate, strings.Join(other, ", "), fix)
	default:
		p.OK = true
		p.Detail = "taken " + takenAt.UTC().Format(time.RFC3339) + ", after every old member was created"
		if snapTemplate != "" {
			p.Detail += "; template " + snapTemplate
		}
	}
	return p
}

// etcdSpecChanges lists the fields of the live EtcdadmCluster that differ
// from the snapshot, within the parts a rollback restores.
func etcdSpecChanges(live *unstructured.Unstructured, old *upgrade.SnapshotObject) []upgrade.FieldChange {
	cur := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
	prev := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
	for _, path := range etcdSpecPaths {
		if v, ok, _ := unstructured.NestedFieldCopy(live.Object, path...); ok {
			_ = unstructured.SetNestedField(cur.Object, v, path...)
		}
		if v, ok := old.Spec[path[1]]; ok {
			_ = unstructured.SetNestedField(prev.Object, runtime.DeepCopyJSONValue(v), path...)
		}
	}
	if reflect.DeepEqual(cur.Object, prev.Object) {
		return nil
	}
	return upgrade.DiffObjects(cur, prev)
}

// rolledOut turns the changes that restore the snapshot's etcd spec into
// the changes the rollout made to it: from the snapshot to now. Read under
// "etcd spec changed", the restore's own direction (3.5.16 → 3.5.15) said
// the upgrade was taking etcd back a version.
func rolledOut(restore []upgrade.FieldChange) []upgrade.FieldChange {
	out := make([]upgrade.FieldChange, len(restore))
	for i, c := range restore {
		c.Old, c.New = c.New, c.Old
		switch c.Op {
		case "add":
			c.Op = "remove"
		case "remove":
			c.Op = "add"
		}
		out[i] = c
	}
	return out
}

func describeChanges(cs []upgrade.FieldChange) string {
	if len(cs) == 0 {
		return "no change"
	}
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		switch c.Op {
		case "add":
			parts = append(parts, fmt.Sprintf("%s: set to %s", c.Path, c.New))
		case "remove":
			parts = append(parts, fmt.Sprintf("%s: remove (%s)", c.Path, c.Old))
		default:
			parts = append(parts, fmt.Sprintf("%s: %s → %s", c.Path, c.Old, c.New))
		}
	}
	return strings.Join(parts, "; ")
}

// removeAnnotationStep removes one annotation if (and only if) it still has
// the value the plan saw.
func removeAnnotationStep(name, title string, res dynamic.ResourceInterface, objRef, objName, key, want string) Step {
	return Step{
		Name:   name,
		Title:  title,
		Object: objRef,
		Change: fmt.Sprintf("remove annotation %s (if it is still %q)", key, want),
		Before: map[string]any{key: want},
		After:  map[string]any{key: nil},
		done: func(ctx context.Context) (bool, string, error) {
			u, err := res.Get(ctx, objName, metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			if _, ok := u.GetAnnotations()[key]; !ok {
				return true, "annotation " + key + " is not set", nil
			}
			return false, "", nil
		},
		do: func(ctx context.Context, dry bool) (string, error) {
			err := removeMetaKey(ctx, res, objName, "annotations", key, want, dry)
			return "annotation " + key + " removed", guarded(ctx, err, objRef, fmt.Sprintf("annotation %s is no longer %q", key, want),
				metaKeyIs(res, objName, "annotations", key, want))
		},
	}
}

// snapshotSrc is the snapshot a rollback restores and where it came from.
type snapshotSrc struct {
	// snap is nil when there is none (detail says why).
	snap *upgrade.Snapshot
	// record is what the rollback record keeps (rollbackRecord.Snapshot).
	record string
	// label names it in the plan: "snapshot NAME", "snapshot file PATH".
	label string
	// detail is what the snapshot precondition shows.
	detail string
	// unread is why the ConfigMap named was not read as a snapshot (none
	// of that name, or not a snapshot), nil otherwise.
	unread *model.InputError
}

// fileSnapshot is a snapshot read from a local file.
type fileSnapshot struct {
	snap *upgrade.Snapshot
	path string // absolute
}

// snapshotSource finds the snapshot to restore from: for a new rollback, the
// file given, the ConfigMap named or the cluster's newest; for a resumed one,
// the snapshot the rollback started with.
//
// A resumed rollback restores the snapshot it started with, and no other:
// its first run may have restored part of the spec already, and the record
// names the machines that snapshot's time picked. Its record keeps the
// source and a digest of the snapshot's content, so:
//   - with no snapshot flag, the recorded source is read again (the same
//     ConfigMap, or the same file path, which is absolute) and must still
//     hold the same snapshot;
//   - --snapshot is accepted only naming the recorded ConfigMap;
//   - --snapshot-file is accepted when the file holds the recorded snapshot
//     (the same digest; for a record without one, the same snapshot name),
//     whatever its path or the recorded source. This is what an operator
//     needs after an interruption: the rollback may be resumed from another
//     machine (with a copy of the file), from another directory, or after the
//     recorded ConfigMap was deleted, but never from a snapshot that differs.
//
// When the recorded file cannot be read (or no longer holds the snapshot),
// the resume is refused as bad input naming the file and the fix, rather
// than falling back to another source.
func (e *Env) snapshotSource(ctx context.Context, o EtcdRollbackOptions, rec *rollbackRecord, given *fileSnapshot) (snapshotSrc, error) {
	clusterRef := ref("Cluster", e.clusterNS(), e.Cluster)
	if rec == nil {
		if given != nil {
			return given.source(fileSourcePrefix+given.path, "snapshot file "+given.path, "file "+given.path), nil
		}
		return e.loadSnapshot(ctx, o.Snapshot)
	}
	started := "the rollback recorded on " + clusterRef + " started from " + recordedSource(rec)
	notThatSnapshot := func(source, problem string) error {
		return &model.InputError{Source: source, Problem: problem + "; " + started + ", and a resumed rollback restores the snapshot it started with",
			Fix: "give --snapshot-file a copy of that snapshot (or run it again with no snapshot flag to read " + recordedSource(rec) + " again)"}
	}

	if path, ok := strings.CutPrefix(rec.Snapshot, fileSourcePrefix); ok {
		if o.Snapshot != "" {
			return snapshotSrc{}, &model.InputError{Source: "--snapshot " + o.Snapshot, Problem: started + "; a resumed rollback restores the snapshot it started with",
				Fix: "run it again without --snapshot (it reads " + path + " again), or give --snapshot-file a copy of that file"}
		}
		f := given
		if f == nil {
			var err error
			f, err = e.readSnapshotFile(path, "")
			if err != nil {
				var ie *model.InputError
				if errors.As(err, &ie) {
					return snapshotSrc{}, &model.InputError{Source: path, Field: ie.Field,
						Problem: started + ", and it cannot be used now: " + ie.Problem,
						Fix:     "run it again with --snapshot-file naming a copy of that file (for instance from the machine that started the rollback); if the copy is lost and etcd is healthy, end the rollback with `upgrade-console lock clear paused --force " + e.clusterFlags() + "` (recorded)"}
				}
				return snapshotSrc{}, err
			}
		}
		if !rec.holds(f.snap) {
			if given == nil {
				return snapshotSrc{}, notThatSnapshot(path, "the file no longer holds the snapshot the rollback started with")
			}
			return snapshotSrc{}, notThatSnapshot("--snapshot-file "+f.path, "not the snapshot the rollback started with")
		}
		label := "snapshot file " + f.path
		if f.path != path {
			label += " (a copy of " + path + ")"
		}
		return f.source(rec.Snapshot, label, "file "+f.path), nil
	}

	if o.Snapshot != "" && o.Snapshot != rec.Snapshot {
		return snapshotSrc{}, &model.InputError{Source: "--snapshot " + o.Snapshot, Problem: "a rollback from snapshot " + rec.Snapshot + " is recorded on " + clusterRef + "; a resumed rollback restores the snapshot it started with",
			Fix: "run it again without --snapshot"}
	}
	if given != nil {
		// The local copy of the recorded ConfigMap, e.g. after the
		// ConfigMap was deleted while the rollback was interrupted.
		if !rec.holds(given.snap) {
			return snapshotSrc{}, notThatSnapshot("--snapshot-file "+given.path, "not the snapshot the rollback started with")
		}
		return given.source(rec.Snapshot, "snapshot "+rec.Snapshot+" (its local copy "+given.path+")",
			"file "+given.path+", the local copy of snapshot "+rec.Snapshot), nil
	}
	src, err := e.loadSnapshot(ctx, rec.Snapshot)
	if err != nil || src.snap == nil {
		return src, err
	}
	if !rec.holds(src.snap) {
		return snapshotSrc{}, &model.InputError{Source: "ConfigMap " + e.systemNS() + "/" + rec.Snapshot,
			Problem: "it no longer holds the snapshot the rollback recorded on " + clusterRef + " started with (it was changed since)",
			Fix:     "give --snapshot-file the local copy of that snapshot, " + rec.Snapshot + ".json in " + snapshotsDirHelp}
	}
	return src, nil
}

func (f *fileSnapshot) source(record, label, where string) snapshotSrc {
	return snapshotSrc{snap: f.snap, record: record, label: label,
		detail: fmt.Sprintf("%s, snapshot of %s taken %s by %s (by the clock of the machine that took it: a file keeps no API server's time)", where, ref("Cluster", f.snap.ClusterNamespace, f.snap.Cluster),
			f.snap.TakenAt.UTC().Format(time.RFC3339), f.snap.TakenBy) + unchecked(f.snap)}
}

// unchecked says of a snapshot with no checksum that nothing tells whether
// it was edited since it was taken: an older console's, or one whose
// checksum was removed with an edit, which passed as checked.
func unchecked(s *upgrade.Snapshot) string {
	if s.Checksum != "" {
		return ""
	}
	return "; it carries no checksum, so whether it was edited since it was taken cannot be told: compare the plan's restore lines with what the cluster ran"
}

// recordedSource names the snapshot source of a rollback record.
func recordedSource(rec *rollbackRecord) string {
	if path, ok := strings.CutPrefix(rec.Snapshot, fileSourcePrefix); ok {
		return "snapshot file " + path
	}
	return "snapshot " + rec.Snapshot
}

// holds reports whether s is the snapshot the rollback started with.
func (r *rollbackRecord) holds(s *upgrade.Snapshot) bool {
	if r.SnapshotDigest != "" {
		return snapshotDigest(s) == r.SnapshotDigest
	}
	// A record written before digests were kept names a ConfigMap, whose
	// name is the snapshot's cluster and time.
	return !strings.HasPrefix(r.Snapshot, fileSourcePrefix) && upgrade.SnapshotName(s.Cluster, s.TakenAt) == r.Snapshot
}

// snapshotDigest identifies a snapshot by its content: the SHA-256 of its
// canonical JSON (re-encoded, so that the ConfigMap and its local copy, or a
// copy re-indented on the way, give the same digest).
func snapshotDigest(s *upgrade.Snapshot) string {
	if s == nil {
		return ""
	}
	b, err := json.Marshal(s)
	if err != nil {
		return ""
	}
	return upgrade.ContentDigest(b)
}

// readSnapshotFile reads a local snapshot copy and checks that it is one of
// this cluster. source prefixes the file in errors ("--snapshot-file ").
func (e *Env) readSnapshotFile(path, source string) (*fileSnapshot, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	copies := fmt.Sprintf("the local copies are upgrade-console-snapshot-%s-<time>.json in %s", e.Cluster, snapshotsDirHelp)
	snap, err := upgrade.LoadSnapshotFile(abs)
	if err != nil {
		var ie *model.InputError
		if !errors.As(err, &ie) {
			return nil, err
		}
		out := *ie
		out.Source = source + abs
		if out.Fix == "" {
			out.Fix = "give a snapshot file written by upgrade-console; " + copies
		} else {
			out.Fix += "; " + copies
		}
		return nil, &out
	}
	if snap.Cluster != e.Cluster || snap.ClusterNamespace != e.clusterNS() {
		return nil, &model.InputError{Source: source + abs, Field: "cluster",
			Problem: fmt.Sprintf("a snapshot of %s, not of %s (--cluster): it cannot restore this cluster",
				ref("Cluster", snap.ClusterNamespace, snap.Cluster), ref("Cluster", e.clusterNS(), e.Cluster)),
			Fix: "give a snapshot of " + e.Cluster + "; " + copies + "; or check --cluster and -n"}
	}
	return &fileSnapshot{snap: snap, path: abs}, nil
}

// namedSnapshotBad turns loadSnapshot's answer on the ConfigMap --snapshot
// names into bad input (exit 1) when the flag is at fault: a snapshot that
// does not exist, is not one, or is another cluster's, as `snapshot
// restore --snapshot` has them. It was a refusal (exit 3), a precondition
// of the cluster, for a name the operator mistyped. A ConfigMap the console
// may not read stays a refusal: the flag is right, the identity is not.
func (e *Env) namedSnapshotBad(ctx context.Context, name string, src snapshotSrc) *model.InputError {
	list := "`upgrade-console snapshot list " + e.clusterFlags() + "` lists this cluster's, and leaving --snapshot out restores from the newest"
	if src.snap != nil {
		if src.snap.Cluster != e.Cluster || src.snap.ClusterNamespace != e.clusterNS() {
			return &model.InputError{Source: "--snapshot", Field: name,
				Problem: "a snapshot of " + ref("Cluster", src.snap.ClusterNamespace, src.snap.Cluster) + ", not of " + ref("Cluster", e.clusterNS(), e.Cluster) + " (--cluster): it cannot restore this cluster",
				Fix:     "give a snapshot of " + e.Cluster + " (" + list + "), or check --cluster and -n"}
		}
		return nil
	}
	ie := src.unread
	if ie == nil {
		return nil // not readable by this identity: said in the snapshot precondition
	}
	fix := "give the snapshot the upgrade took; " + list
	if strings.HasPrefix(name, "upgrade-console-snapshot-") {
		fix += "; if this one's local copy is kept, restore from it with --snapshot-file, giving " + name + ".json in " + snapshotsDirHelp + e.localCopiesHint(ctx, name)
	}
	problem := ie.Problem
	if ie.Field != "" {
		problem = ie.Field + ": " + problem
	}
	return &model.InputError{Source: "--snapshot", Field: name, Problem: problem + " (ConfigMap " + e.systemNS() + "/" + name + ")", Fix: fix}
}

// loadSnapshot finds a snapshot ConfigMap to restore from: the named one, or
// the newest of the cluster. It returns no snapshot (with the reason) when
// there is none.
func (e *Env) loadSnapshot(ctx context.Context, name string) (snapshotSrc, error) {
	kube := e.Client.Kube
	if name == "" {
		snapshots, err := upgrade.SnapshotConfigMaps(ctx, kube, e.systemNS(), e.Cluster)
		if apierrors.IsForbidden(err) {
			return e.snapshotsForbidden(ctx, "", "list", err), nil
		}
		if err != nil {
			return snapshotSrc{}, fmt.Errorf("list snapshots of %s in %s: %w", e.Cluster, e.systemNS(), err)
		}
		if len(snapshots) == 0 {
			return snapshotSrc{detail: fmt.Sprintf("no snapshot ConfigMap labelled %s=%s in %s: its snapshot was deleted, or the upgrade was not started by upgrade-console. "+
				"The console that started the upgrade also kept a local copy: restore from it with --snapshot-file, giving upgrade-console-snapshot-%s-<time>.json in %s (or a copy of it). "+
				"Without one, the previous etcd spec is unknown: to recover by hand, follow EKS-A's troubleshooting for an upgrade stuck on \"Waiting for external etcd to be ready\" (the etcdadm-controller logs, the %s-etcd-init Secret, etcdctl member list/remove)",
				upgrade.LabelCluster, e.Cluster, e.systemNS(), e.Cluster, snapshotsDirHelp, e.Cluster) + e.localCopiesHint(ctx, "")}, nil
		}
		// The newest that reads as a snapshot of this Cluster, as
		// `snapshot list` and prune call newest: a labelled ConfigMap
		// that does not read (or another namespace's Cluster of the
		// same name) was picked, and the rollback refused on it.
		name = snapshots[0].Name
		found := false
		for i := range snapshots {
			if snap, err := upgrade.SnapshotOf(&snapshots[i]); err == nil && snap.Cluster == e.Cluster && snap.ClusterNamespace == e.clusterNS() {
				name, found = snapshots[i].Name, true
				break
			}
		}
		if snap, err := upgrade.SnapshotOf(&snapshots[0]); !found && err == nil {
			// The newest reads, and is another Cluster's (labelled
			// for this one by hand): said as such, where the refusal
			// read "holds no EtcdadmCluster".
			return snapshotSrc{record: name, label: "snapshot " + name, detail: fmt.Sprintf(
				"none of the %d ConfigMaps labelled %s=%s in %s holds a snapshot of %s: the newest, %s, is %s's; restore from a local copy with --snapshot-file, giving upgrade-console-snapshot-%s-<time>.json in %s",
				len(snapshots), upgrade.LabelCluster, e.Cluster, e.systemNS(), ref("Cluster", e.clusterNS(), e.Cluster), name,
				ref("Cluster", snap.ClusterNamespace, snap.Cluster), e.Cluster, snapshotsDirHelp) + e.localCopiesHint(ctx, "")}, nil
		}
	}
	src := snapshotSrc{record: name, label: "snapshot " + name}
	snap, err := upgrade.LoadSnapshot(ctx, kube, e.systemNS(), name)
	if apierrors.IsForbidden(err) {
		return e.snapshotsForbidden(ctx, name, "get", err), nil
	}
	var ie *model.InputError
	if errors.As(err, &ie) {
		src.unread = ie
		src.detail = ie.Error()
		// A name of the snapshots' form may have its local copy; another
		// ConfigMap's ("kube-root-ca.crt.json") never has.
		if strings.HasPrefix(name, "upgrade-console-snapshot-") {
			src.detail += "; if its local copy is kept, restore from it with --snapshot-file, giving " + name + ".json in " + snapshotsDirHelp + e.localCopiesHint(ctx, name)
		}
		return src, nil
	}
	if err != nil {
		return snapshotSrc{}, err
	}
	src.snap = snap
	src.detail = fmt.Sprintf("ConfigMap %s/%s, taken %s by %s", e.systemNS(), name, snap.When().UTC().Format(time.RFC3339), snap.TakenBy) + unchecked(snap)
	return src, nil
}

// snapshotsForbidden is the snapshot precondition of an identity that may
// not read the snapshot ConfigMaps: a refusal on snapshot, as when there is
// none, since the local copy restores just as well (--snapshot-file, the
// dashboard's f). It ended as "list snapshots … forbidden" with the fix to
// ask for the right, and no word of the copy.
func (e *Env) snapshotsForbidden(ctx context.Context, name, verb string, err error) snapshotSrc {
	what, file, obj := "the snapshot ConfigMaps of "+e.Cluster+" in "+e.systemNS(), "upgrade-console-snapshot-"+e.Cluster+"-<time>.json", "configmaps"
	if name != "" {
		what, file, obj = "snapshot ConfigMap "+e.systemNS()+"/"+name, name+".json", "configmaps/"+name
	}
	return snapshotSrc{detail: fmt.Sprintf("the console may not read %s (%v). "+
		"Restore from the local copy the console that started the upgrade kept: --snapshot-file %s in %s (or a copy of it); "+
		"or grant the identity a Role in %s with the rule {apiGroups: [\"\"], resources: [configmaps], verbs: [get, list]} and a RoleBinding "+
		"(`kubectl%s auth can-i %s %s -n %s` says whether it may)",
		what, err, file, snapshotsDirHelp, e.systemNS(), e.Conn, verb, obj, e.systemNS()) + e.localCopiesHint(ctx, name)}
}

// LocalCopies are the local snapshot copies this machine keeps named for
// a cluster (upgrade.LocalSnapshotCopies), newest first: Paths those of
// this Cluster, which are offered; Passed the others.
type LocalCopies struct {
	Paths  []string
	Passed []PassedCopy
}

// PassedCopy is a local copy named for the cluster that is not offered: of
// another cluster with the same name, or not read as a snapshot.
type PassedCopy struct {
	Path string
	// Of says whose it is, or why it was not read; the copies of one
	// cluster share it.
	Of string
	// TakenAt is the snapshot's, zero for a copy not read.
	TakenAt time.Time
}

// SnapshotCopies lists the local snapshot copies this machine keeps of this
// cluster, newest first: those named for it (upgrade.LocalSnapshotCopies)
// whose content is of this Cluster and, where both are known, of the
// EtcdadmCluster it has now (by UID). Management clusters are often all
// named mgmt: a copy of another one was counted, named as the newest and
// pre-filled, and only the rollback's own check turned it away. Those
// passed over are kept with whose they are: with none offered, the
// operator read "no local copy" beside a directory of copies named for
// the cluster.
func (e *Env) SnapshotCopies(ctx context.Context) (LocalCopies, error) {
	copies, err := upgrade.LocalSnapshotCopies(e.Cluster)
	if err != nil || len(copies) == 0 {
		return LocalCopies{Paths: copies}, err
	}
	uid := ""
	if etcd, err := getOpt(ctx, e.res(upgrade.GVREtcdadmCluster, e.systemNS()), e.etcdName()); err == nil && etcd != nil {
		uid = string(etcd.GetUID())
	}
	var out LocalCopies
	for _, c := range copies {
		if of, taken := e.copyOf(c, uid); of != "" {
			out.Passed = append(out.Passed, PassedCopy{Path: c, Of: of, TakenAt: taken})
			continue
		}
		out.Paths = append(out.Paths, c)
	}
	return out, nil
}

// copyOf says whose the local copy at path is when it is not this
// cluster's, "" when it is; uid is the cluster's EtcdadmCluster's, "" when
// unknown.
func (e *Env) copyOf(path, uid string) (string, time.Time) {
	snap, err := upgrade.LoadSnapshotFile(path)
	if err != nil {
		return "not read as a snapshot (--snapshot-file with it says why)", time.Time{}
	}
	if snap.Cluster != e.Cluster || snap.ClusterNamespace != e.clusterNS() {
		return "of " + ref("Cluster", snap.ClusterNamespace, snap.Cluster), snap.TakenAt
	}
	if uid == "" {
		return "", time.Time{}
	}
	// A copy with no EtcdadmCluster (a stacked-etcd cluster's) holds
	// nothing to restore for a cluster that has one.
	switch o := snap.Object("EtcdadmCluster", e.etcdName()); {
	case o == nil:
		return "of a cluster named " + e.Cluster + " with no EtcdadmCluster " + e.etcdName() + " (stacked etcd)", snap.TakenAt
	case o.UID != "" && o.UID != uid:
		return "of another cluster named " + e.Cluster + ", whose EtcdadmCluster had UID " + o.UID + " (this one's: " + uid + ")", snap.TakenAt
	}
	return "", time.Time{}
}

// PassedOver says the local copies named for the cluster that are not
// offered and where they are (head), and whose they are, one cluster (or
// reason) an item, newest first: "" and none when there are none. The
// dialog's file stage lists the items; the rollback's refusals join them
// (passedOverLine), in the same words.
func (c LocalCopies) PassedOver(cluster string) (head string, whose []string) {
	if len(c.Passed) == 0 {
		return "", nil
	}
	type group struct {
		of     string
		n      int
		newest time.Time
	}
	var groups []*group
	byOf := map[string]*group{}
	for _, p := range c.Passed {
		g := byOf[p.Of]
		if g == nil {
			g = &group{of: p.Of}
			byOf[p.Of] = g
			groups = append(groups, g)
		}
		g.n++
		if p.TakenAt.After(g.newest) {
			g.newest = p.TakenAt
		}
	}
	for _, g := range groups {
		item := g.of
		if len(groups) > 1 {
			item = fmt.Sprintf("%d %s", g.n, g.of)
		}
		switch {
		case g.newest.IsZero():
		case g.n == 1:
			item += ", taken " + g.newest.UTC().Format(time.RFC3339)
		default:
			item += ", the newest taken " + g.newest.UTC().Format(time.RFC3339)
		}
		whose = append(whose, item)
	}
	n := len(c.Passed)
	return fmt.Sprintf("%d local %s named for %s in %s %s not offered",
		n, plural(n, "copy", "copies"), cluster, filepath.Dir(c.Passed[0].Path), plural(n, "is", "are")), whose
}

// passedOverLine is PassedOver in one line, "" when none is passed over.
func (c LocalCopies) passedOverLine(cluster string) string {
	head, whose := c.PassedOver(cluster)
	if head == "" {
		return ""
	}
	return head + ": " + strings.Join(whose, "; ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// localCopiesHint names the local copy to give --snapshot-file when this
// machine keeps one: the copy of the named snapshot, else the newest of the
// cluster's; and the copies named for the cluster that are another's.
// Empty when it keeps none (the copy may be on another machine).
func (e *Env) localCopiesHint(ctx context.Context, name string) string {
	copies, err := e.SnapshotCopies(ctx)
	if err != nil {
		return ""
	}
	passed := copies.passedOverLine(e.Cluster)
	if name != "" {
		for _, c := range copies.Paths {
			if filepath.Base(c) == name+".json" {
				return ". This machine keeps it: `--snapshot-file " + c + "`"
			}
		}
		for _, c := range copies.Passed {
			if filepath.Base(c.Path) == name+".json" {
				return ". This machine keeps " + c.Path + ", not offered: " + c.Of
			}
		}
		return ""
	}
	if len(copies.Paths) == 0 {
		if passed == "" {
			return ""
		}
		return ". This machine keeps no local copy of " + e.Cluster + "'s snapshots; " + passed
	}
	hint := fmt.Sprintf(". This machine keeps %d local %s of %s's snapshots; the newest: `--snapshot-file %s`",
		len(copies.Paths), plural(len(copies.Paths), "copy", "copies"), e.Cluster, copies.Paths[0])
	if passed != "" {
		hint += ". " + passed
	}
	return hint
}

// lockPrecondition: the console's upgrade lock must not be live in another
// console (a running upgrade would fight the recovery).
func (e *Env) lockPrecondition(ctx context.Context) (Precondition, error) {
	p := Precondition{Name: "no-live-lock", Description: "no other console holds a live upgrade lock"}
	st, err := upgrade.ReadLock(ctx, e.Client.Kube, e.systemNS(), e.Cluster)
	if err != nil {
		return p, err
	}
	switch {
	case !st.Held():
		p.OK, p.Detail = true, "no upgrade lock"
	case st.HolderIdentity == e.holder().String():
		p.OK, p.Detail = true, "held by this console"
	case st.Expired(e.now()):
		// Named as lock status names it: kept on purpose, or stale.
		state := "stale"
		if st.Kept != "" {
			state = "kept"
		}
		p.OK, p.Detail = true, state+" lock: "+st.Describe(e.now())+"; the run takes it over"
	default:
		p.Detail = st.Describe(e.now()) + fmt.Sprintf("; stop that console first (or wait for its upgrade to end); a console that died leaves it to turn stale at %s, %s after its last renewal, and the rollback then takes it over",
			st.ExpiresHere(e.now()).UTC().Format(time.RFC3339), model.ShortDuration(st.Duration))
	}
	return p, nil
}

// rollbackClosing says where the cluster stands after the rollback.
func (e *Env) rollbackClosing(ctx context.Context) []string {
	var out []string
	if u, err := e.res(upgrade.GVREtcdadmCluster, e.systemNS()).Get(ctx, e.etcdName(), metav1.GetOptions{}); err == nil {
		st := readEtcdStatus(u)
		version, _, _ := unstructured.NestedString(u.Object, "spec", "etcdadmConfigSpec", "cloudInitConfig", "version")
		if version == "" {
			version, _, _ = unstructured.NestedString(u.Object, "spec", "etcdadmConfigSpec", "bottlerocketConfig", "etcdImage")
		}
		tmpl, _, _ := unstructured.NestedString(u.Object, "spec", "infrastructureTemplate", "name")
		ready := "not ready"
		if st.settled() {
			ready = "ready"
		}
		out = append(out, fmt.Sprintf("etcd: EtcdadmCluster %s/%s %s, %d/%d members ready, etcd %s, infrastructure template %s.",
			e.systemNS(), e.etcdName(), ready, st.ReadyReplicas, st.Replicas, orUnknown(version), orUnknown(tmpl)))
	}
	if kcpRes, err := e.capi(upgrade.GVRKCP, e.systemNS()); err != nil {
		out = append(out, "Control plane: cannot be read: "+err.Error()+".")
	} else if u, err := kcpRes.Get(ctx, e.Cluster, metav1.GetOptions{}); err == nil {
		state := "not paused"
		if u.GetAnnotations()[model.AnnotationCAPIPaused] == "true" {
			state = "paused"
		}
		version, _, _ := unstructured.NestedString(u.Object, "spec", "version")
		out = append(out, fmt.Sprintf("Control plane: KubeadmControlPlane %s/%s %s, spec.version %s (its spec was not changed).",
			e.systemNS(), e.Cluster, state, orUnknown(version)))
	}
	out = append(out,
		fmt.Sprintf("EKS-A reconcile of Cluster %s/%s stays paused (%s=\"true\"): resumed as it is, the controller would apply the new etcd spec again.",
			e.clusterNS(), e.Cluster, model.AnnotationEKSAPaused),
		memberNote,
		"Next: find why the new etcd member did not come up (etcdadm-controller logs, the machine's infrastructure status, the "+e.Cluster+"-etcd-init Secret) and fix it where it failed (the VM, its network, its template),",
		fmt.Sprintf("then resume EKS-A reconcile with: `upgrade-console lock clear paused %s`: it starts the same etcd rollout again.", e.clusterFlags()),
		// The console's apply refuses a paused Cluster, and EKS-A's
		// webhook a version going back: "or change the Cluster spec" named
		// a way the console does not offer. --force-conflicts: the spec's
		// fields belong to eks-a-cli (and to the console, after its own
		// apply), so without it kubectl refuses every field edited.
		"To change the spec first instead (an etcd machine config, say), apply it while EKS-A stays paused with `kubectl"+e.Conn.String()+" apply --server-side --force-conflicts -f <spec file>` (the console's apply refuses a paused Cluster, and EKS-A's webhook a version going back; its fields belong to eks-a-cli and the console's apply, so kubectl needs --force-conflicts to change them), then resume as above.")
	// The upgrade that failed kept its lock (the rollback took it over and
	// gave it back, or found it kept): it blocks the next upgrade, and
	// nothing above named it.
	if st, err := upgrade.ReadLock(ctx, e.Client.Kube, e.systemNS(), e.Cluster); err == nil && st != nil && st.Held() && st.Kept != "" {
		out = append(out, fmt.Sprintf("The upgrade lock is kept by %s (%s): it blocks any new upgrade. A console still following the upgrade releases it when the upgrade completes; otherwise clear it once the cluster is checked: `upgrade-console lock clear lease %s`",
			st.Holder.Display(), st.Kept, e.clusterFlags()))
	}
	return out
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// number reads an integer of a decoded JSON document (float64 after
// encoding/json, int64 after the API machinery's decoder).
func number(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case int:
		return int64(n)
	case float64:
		return int64(n)
	case json.Number:
		i, _ := n.Int64()
		return i
	}
	return 0
}
