package recovery

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// ActionSnapshotPrune deletes the snapshot ConfigMaps a rollback no longer
// needs. It is housekeeping, not a recovery, but it deletes what a recovery
// reads, so it is planned, dry-run, confirmed and recorded as one.
const ActionSnapshotPrune = "snapshot-prune"

// SnapshotEntry is one snapshot ConfigMap of the cluster, as `snapshot list`
// shows it and prune judges it.
type SnapshotEntry struct {
	Name      string    `json:"name"`
	Namespace string    `json:"namespace"`
	TakenAt   time.Time `json:"takenAt"`
	TakenBy   string    `json:"takenBy,omitempty"`
	// Bytes is the size of the snapshot the ConfigMap holds.
	Bytes int `json:"bytes"`
	// Kept says why prune keeps the snapshot; empty when it deletes it.
	Kept string `json:"kept,omitempty"`

	uid, resourceVersion string
}

// Why prune keeps a snapshot.
const (
	keptNewest   = "newest"
	keptRollback = "the etcd rollback recorded on the Cluster restores it"
)

// ListSnapshots lists the cluster's snapshot ConfigMaps, newest first, each
// with why prune keeps it: the keep newest of them, and the one an etcd
// rollback recorded on the EKS-A Cluster restores (running, or done and not
// yet cleared). Only the newest snapshot of an upgrade is ever restored
// (an etcd rollback refuses an earlier upgrade's), so the others serve no
// rollback. A ConfigMap that does not read as a snapshot of this Cluster
// (one of a Cluster of the same name in another namespace, which carries
// the same label) is not listed: it is not this cluster's to prune. One
// that does not decode is listed, kept, and not counted among the newest.
func ListSnapshots(ctx context.Context, env *Env, keep int) ([]SnapshotEntry, error) {
	if keep < 1 {
		return nil, fmt.Errorf("keep must be at least 1, got %d: the newest snapshot is the one an etcd rollback restores", keep)
	}
	cms, err := upgrade.SnapshotConfigMaps(ctx, env.Client.Kube, env.systemNS(), env.Cluster)
	if err != nil {
		return nil, fmt.Errorf("list the snapshots of %s in %s: %w", env.Cluster, env.systemNS(), err)
	}
	// The Cluster may be gone (deleted after its last upgrade): its
	// snapshots are then kept by count alone.
	recorded := ""
	cluster, err := getOpt(ctx, env.eksaCluster(), env.Cluster)
	if err != nil {
		return nil, fmt.Errorf("read Cluster %s/%s: %w", env.clusterNS(), env.Cluster, err)
	}
	if cluster != nil {
		rec, err := readRollbackRecord(cluster, env)
		if err != nil {
			return nil, err
		}
		if rec != nil {
			recorded = rec.Snapshot
		}
	}
	var out []SnapshotEntry
	for i := range cms {
		cm := &cms[i]
		e := SnapshotEntry{Name: cm.Name, Namespace: cm.Namespace, TakenAt: upgrade.SnapshotTakenAt(cm),
			Bytes: len(cm.Data[upgrade.SnapshotDataKey]), uid: string(cm.UID), resourceVersion: cm.ResourceVersion}
		snap, err := upgrade.SnapshotOf(cm)
		switch {
		case err != nil:
			// Kept, and not counted among the newest: it may still be
			// the one a rollback needs, read by hand.
			e.Kept = "does not read as a snapshot: " + err.Error()
		case snap.Cluster != env.Cluster || snap.ClusterNamespace != env.clusterNS():
			// A Cluster of the same name in another namespace: its
			// snapshots carry the same label, and are not this one's.
			continue
		default:
			e.TakenBy = snap.TakenBy
		}
		out = append(out, e)
	}
	if cluster == nil && len(out) == 0 {
		// A --cluster or -n that names nothing, said as the other
		// commands say it: "no snapshot" read as no rollback possible.
		// A Cluster deleted after its upgrades has its snapshots listed.
		return nil, &model.InputError{Source: ref("Cluster", env.clusterNS(), env.Cluster), Problem: "not found, and no snapshot of it in " + env.systemNS(),
			Fix: "check --cluster, and give the Cluster's namespace with -n (default: the kubeconfig context's)"}
	}
	// Newest first, as SnapshotConfigMaps orders them: the etcd rollback
	// restores the first, and that one must be kept.
	newest := 0
	for i := range out {
		switch {
		case out[i].Kept != "":
		case newest < keep:
			out[i].Kept = keptNewest
			newest++
		case out[i].Name == recorded:
			out[i].Kept = keptRollback
		}
	}
	return out, nil
}

// PlanSnapshotPrune plans deleting the snapshots ListSnapshots does not
// keep, each guarded by its UID and resourceVersion: a snapshot changed
// since it was listed is not deleted. A plan with no steps means there is
// nothing to prune. Local copies (StateDir()/snapshots) are this machine's
// files and are not touched.
func PlanSnapshotPrune(ctx context.Context, env *Env, keep int) (*Plan, []SnapshotEntry, error) {
	entries, err := ListSnapshots(ctx, env, keep)
	if err != nil {
		return nil, nil, err
	}
	p := &Plan{
		Action:        ActionSnapshotPrune,
		Cluster:       env.Cluster,
		Confirm:       env.Cluster,
		ConfirmObject: ref("Cluster", env.clusterNS(), env.Cluster),
	}
	cms := env.Client.Kube.CoreV1().ConfigMaps(env.systemNS())
	var kept []string
	for _, e := range entries {
		if e.Kept != "" {
			kept = append(kept, e.Name+" ("+e.Kept+")")
			continue
		}
		p.Steps = append(p.Steps, deleteSnapshotStep(env, cms, e))
	}
	p.Title = fmt.Sprintf("Delete %s of %s, keeping %s", count(len(p.Steps), "snapshot", "snapshots"), env.Cluster, strings.Join(kept, ", "))
	p.Notes = []string{
		"Only the newest snapshot of an upgrade is ever restored (an etcd rollback refuses an earlier upgrade's); the ones deleted serve no rollback.",
		"The local copies of the snapshots (upgrade-console-snapshot-" + env.Cluster + "-<time>.json in $XDG_STATE_HOME/upgrade-console/snapshots, on the machines that ran the upgrades) are not touched: they are those machines' files.",
	}
	p.closing = func(ctx context.Context) []string {
		left, err := ListSnapshots(ctx, env, keep)
		if err != nil {
			return []string{"Could not list the snapshots back: " + err.Error()}
		}
		return []string{fmt.Sprintf("%s of %s left in %s.", count(len(left), "snapshot", "snapshots"), env.Cluster, env.systemNS())}
	}
	return p, entries, nil
}

// count is n and the noun for it: "1 snapshot", "3 snapshots".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func deleteSnapshotStep(env *Env, cms typedcorev1.ConfigMapInterface, e SnapshotEntry) Step {
	object := ref("ConfigMap", e.Namespace, e.Name)
	return Step{
		Name:   "delete-snapshot/" + e.Name,
		Title:  "Delete snapshot " + e.Name + " (taken " + e.TakenAt.UTC().Format(time.RFC3339) + ")",
		Object: object,
		Change: fmt.Sprintf("delete (only the ConfigMap with UID %s, unchanged since it was listed)", e.uid),
		Before: map[string]any{"configMap": e.Name, "uid": e.uid, "takenAt": e.TakenAt, "takenBy": e.TakenBy},
		After:  map[string]any{"configMap": nil},
		done: func(ctx context.Context) (bool, string, error) {
			cm, err := cms.Get(ctx, e.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, "already gone", nil
			}
			if err != nil {
				return false, "", err
			}
			if string(cm.UID) != e.uid {
				return true, "the snapshot listed is gone (" + object + " is now another ConfigMap, not touched)", nil
			}
			return false, "", nil
		},
		do: func(ctx context.Context, dry bool) (string, error) {
			// An etcd rollback planned on this snapshot (--snapshot)
			// may have recorded it on the Cluster since the list, which
			// its ConfigMap's UID and resourceVersion do not tell: a
			// resume of that rollback reads it.
			cluster, err := getOpt(ctx, env.eksaCluster(), env.Cluster)
			if err != nil {
				return "", fmt.Errorf("read Cluster %s/%s: %w", env.clusterNS(), env.Cluster, err)
			}
			if cluster != nil {
				if rec, err := readRollbackRecord(cluster, env); err != nil {
					return "", err
				} else if rec != nil && rec.Snapshot == e.Name {
					return "", &ConcurrentChangeError{Object: object, What: "an etcd rollback recorded on the Cluster since the list restores it"}
				}
			}
			uid, rv := types.UID(e.uid), e.resourceVersion
			err = cms.Delete(ctx, e.Name, metav1.DeleteOptions{
				Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}, DryRun: dryRunOpt(dry)})
			if apierrors.IsNotFound(err) {
				return "already gone", errNoWrite
			}
			return "snapshot deleted", guarded(ctx, err, object, "it changed since it was listed", nil)
		},
	}
}
