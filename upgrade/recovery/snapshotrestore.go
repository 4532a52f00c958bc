package recovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// ActionSnapshotRestore puts back, as a snapshot has it, the spec of the
// documents an apply refused part way had applied: the way back apply
// prints, made a recovery action so that its writes are planned, dry-run,
// confirmed, guarded and recorded like the others.
const ActionSnapshotRestore = "snapshot-restore"

// ErrRestoreArgs is a restore without its --snapshot or any --object: the
// command line is wrong, and the restore touches only what it is given.
var ErrRestoreArgs = errors.New("--snapshot and at least one --object are required: give them as the failed apply printed them (upgrade-console snapshot list names the snapshots)")

// generated are the kinds EKS-A makes from the Cluster: the snapshot holds
// them for the etcd rollback, and written back by hand they would fight
// the controller that owns them. No spec file holds them.
var generated = map[string]bool{"KubeadmControlPlane": true, "EtcdadmCluster": true, "MachineDeployment": true}

// PlanSnapshotRestore plans restoring the spec of each of objects ("Kind/name",
// as apply names the documents it applied) from the snapshot ConfigMap
// snapshot. Only those objects are touched: apply names the documents it
// changed, and an object the snapshot holds that the apply did not touch
// may have moved on since for good reasons. Each write is a JSON patch of
// the fields that differ and that the console's field manager still owns
// alone (the others were changed since by another writer, and are left and
// said so), guarded by a test of the generation and of each value the plan
// read. The snapshot must be the newest of the cluster (the failed apply's)
// unless older.
// The upgrade lock is not taken: the failed apply kept it, which keeps any
// new upgrade out, and the restore runs under it and leaves it for the
// operator to clear once the cluster is checked. A live lock of another
// console (an upgrade under way) refuses the restore.
func PlanSnapshotRestore(ctx context.Context, env *Env, snapshot string, objects []string, older bool) (*Plan, error) {
	if snapshot == "" || len(objects) == 0 {
		return nil, ErrRestoreArgs
	}
	list := "`upgrade-console snapshot list " + env.clusterFlags() + "`"
	snap, err := upgrade.LoadSnapshot(ctx, env.Client.Kube, env.systemNS(), snapshot)
	var bad *model.InputError
	if errors.As(err, &bad) {
		return nil, &model.InputError{Source: "--snapshot", Field: snapshot, Problem: bad.Problem + " (ConfigMap " + env.systemNS() + "/" + snapshot + ")",
			Fix: "give the snapshot the failed apply named; " + list + " lists this cluster's"}
	}
	if err != nil {
		return nil, err
	}
	if snap.Cluster != env.Cluster || snap.ClusterNamespace != env.clusterNS() {
		return nil, &model.InputError{Source: "--snapshot", Problem: fmt.Sprintf("%s is a snapshot of Cluster %s/%s, not of %s/%s", snapshot, snap.ClusterNamespace, snap.Cluster, env.clusterNS(), env.Cluster),
			Fix: "give a snapshot of this cluster (" + list + ")"}
	}
	// Nothing records which snapshot the failed apply took but its own
	// message; every start takes one, and the lock that apply kept keeps
	// any later start out, so the newest is its snapshot. An older one
	// holds the spec from before other upgrades too, whose fields the
	// console's field manager also owns: restored, it would undo them.
	if !older {
		cms, err := upgrade.SnapshotConfigMaps(ctx, env.Client.Kube, env.systemNS(), env.Cluster)
		if err != nil {
			return nil, fmt.Errorf("list the snapshots of %s: %w", env.Cluster, err)
		}
		for i := range cms {
			// The label names the cluster alone: a namesake's in another
			// namespace, or one that does not read, is not this one's.
			if s, err := upgrade.SnapshotOf(&cms[i]); err != nil || s.ClusterNamespace != env.clusterNS() {
				continue
			}
			if cms[i].Name != snapshot {
				return nil, &model.InputError{Source: "--snapshot", Field: snapshot, Problem: "not the newest snapshot of " + env.Cluster + ": " + cms[i].Name + " was taken after it, so it is not the one the failed apply took, and restoring from it would undo the upgrades since as well",
					Fix: "give the snapshot the failed apply named (the newest, " + cms[i].Name + "; " + list + "); to restore from an older one all the same, add --older-snapshot"}
			}
			break
		}
	}
	lockPre, err := env.restoreLockPrecondition(ctx)
	if err != nil {
		return nil, err
	}
	p := &Plan{
		Action:        ActionSnapshotRestore,
		Cluster:       env.Cluster,
		Confirm:       env.Cluster,
		ConfirmObject: ref("Cluster", env.clusterNS(), env.Cluster),
	}
	pre := []Precondition{lockPre}
	seen := map[string]bool{}
	for _, arg := range objects {
		kind, name, ok := strings.Cut(arg, "/")
		if !ok || kind == "" || name == "" || strings.Contains(name, "/") {
			return nil, &model.InputError{Source: "--object", Field: arg, Problem: "not KIND/NAME",
				Fix: "name a document as apply printed it, e.g. --object VSphereMachineConfig/mgmt-cp (the objects of a cluster's spec are in its namespace, " + env.clusterNS() + ", which is the one restored)"}
		}
		if seen[kind+"/"+name] {
			continue
		}
		seen[kind+"/"+name] = true
		if generated[kind] {
			return nil, &model.InputError{Source: "--object", Field: arg, Problem: "EKS-A generates " + kind + " from the Cluster: no spec file holds it, and written back by hand it would fight its controller",
				Fix: "restore the documents the apply applied (its spec file's), and let EKS-A generate the rest"}
		}
		// The spec's documents are all in the Cluster's namespace: a
		// namesake elsewhere is not one of them.
		old := snap.ObjectIn(kind, env.clusterNS(), name)
		if old == nil {
			return nil, &model.InputError{Source: "--object", Field: arg, Problem: "not in snapshot " + snapshot + " in namespace " + env.clusterNS() + ": no such object existed when the snapshot was taken (one the apply created, or a name misspelt), so there is no earlier spec to restore",
				Fix: "leave it out; if the spec you go back to names it no more, delete it with kubectl; to put back a spec the snapshot does not hold, apply the spec file you upgraded from: `kubectl" + env.Conn.String() + " -n " + model.ShellQuote(env.clusterNS()) + " apply --server-side --force-conflicts -f <previous spec file>`"}
		}
		step, ok, err := env.restoreSpecStep(ctx, snapshot, snap.When(), *old)
		if err != nil {
			return nil, err
		}
		if !ok {
			pre = append(pre, Precondition{Name: "exists", Description: old.Ref() + " exists", Detail: old.Ref() + " is gone: there is nothing to restore its spec on"})
			continue
		}
		p.Steps = append(p.Steps, step)
	}
	p.Preconditions = pre
	if err := refuseUnless(ActionSnapshotRestore, env.Cluster, ref("Cluster", env.clusterNS(), env.Cluster), pre); err != nil {
		return nil, err
	}
	p.Title = fmt.Sprintf("Restore the spec of %s from snapshot %s", count(len(p.Steps), "object", "objects"), snapshot)
	p.Notes = []string{
		"Only the spec is restored, and only the fields that differ from the snapshot's and that the console's field manager (" + upgrade.ManagerName + ") still owns alone: a field another writer changed since is left as it is, and named; labels, annotations and the objects not named are not touched.",
		"The upgrade lock is neither taken nor released: the apply that failed kept it, which keeps a new upgrade out meanwhile.",
	}
	p.closing = func(ctx context.Context) []string {
		return []string{
			"EKS-A reconciles the restored specs: follow it with `upgrade-console watch " + env.clusterFlags() + "` until the Cluster reads as before the apply.",
			"Then release the upgrade lock the apply kept: `upgrade-console lock clear lease " + env.clusterFlags() + "`.",
		}
	}
	return p, nil
}

// restoreLockPrecondition: no other console's upgrade may be under way
// (a live lock): restoring under it would fight its writes. A lock kept
// by a failed apply, or stale, is the one a restore is for.
func (e *Env) restoreLockPrecondition(ctx context.Context) (Precondition, error) {
	p := Precondition{Name: "no-live-lock", Description: "no other console's upgrade holds a live upgrade lock"}
	st, err := upgrade.ReadLock(ctx, e.Client.Kube, e.systemNS(), e.Cluster)
	if err != nil {
		return p, err
	}
	switch {
	case !st.Held():
		p.OK, p.Detail = true, "no upgrade lock"
	case st.Kept != "":
		p.OK, p.Detail = true, "kept lock: "+st.Describe(e.now())+"; the restore runs under it and leaves it"
	case st.HolderIdentity == e.holder().String():
		p.OK, p.Detail = true, "held by this console"
	case st.Expired(e.now()):
		p.OK, p.Detail = true, "stale lock: "+st.Describe(e.now())+"; the restore leaves it"
	default:
		p.Detail = st.Describe(e.now()) + "; an upgrade is under way: stop that console first, or let its upgrade end"
	}
	return p, nil
}

// restoreSpecStep restores one object's spec from the snapshot; ok is false
// when the object is gone. A field is restored only when the console is
// its owner alone in metadata.managedFields: a field another writer set
// after the apply (GitOps raising numCPUs) is theirs, and is left.
func (e *Env) restoreSpecStep(ctx context.Context, snapshot string, taken time.Time, old upgrade.SnapshotObject) (Step, bool, error) {
	object := old.Ref()
	ri, err := e.Client.ResourceOf(old.Unstructured())
	if err != nil {
		return Step{}, false, err
	}
	live, err := getOpt(ctx, ri, old.Name)
	if err != nil {
		return Step{}, false, fmt.Errorf("read %s: %w", object, err)
	}
	if live == nil {
		return Step{}, false, nil
	}
	cur, _ := live.Object["spec"].(map[string]any)
	ours, others, since := specOwners(live.GetManagedFields(), taken)
	target := map[string]any{}
	for k, v := range cur {
		target[k] = v
	}
	var restore, left []string
	for _, k := range upgrade.DifferingKeys(old.Spec, cur) {
		_, inCur := cur[k]
		switch {
		case len(others[k]) > 0:
			left = append(left, "spec."+k+": changed since by "+strings.Join(others[k], ", ")+", left as it is")
			continue
		case inCur && !ours[k]:
			left = append(left, "spec."+k+": not set by "+upgrade.ManagerName+", left as it is")
			continue
		case !inCur && len(since) > 0:
			// Nothing owns a removed field: the apply or a writer since
			// may have removed it; only the latter wrote the object
			// after the snapshot was taken.
			left = append(left, "spec."+k+": absent, and "+strings.Join(since, ", ")+" wrote the object after the snapshot, so it may have removed it: left as it is")
			continue
		}
		restore = append(restore, k)
		if v, ok := old.Spec[k]; ok {
			target[k] = v
		} else {
			delete(target, k)
		}
	}
	patch, fields := upgrade.RestoreSpecPatch(target, cur, live.GetGeneration())
	before, after := map[string]any{}, map[string]any{}
	for _, f := range fields {
		k := strings.TrimPrefix(f, "spec.")
		before[f], after[f] = cur[k], old.Spec[k]
	}
	change := "none: the spec is the snapshot's"
	if len(fields) > 0 || len(left) > 0 {
		var parts []string
		for _, f := range fields {
			parts = append(parts, f+" "+model.PrintableLine(jsonText(before[f]))+" → "+model.PrintableLine(jsonText(after[f])))
		}
		if len(fields) > 0 {
			parts[len(parts)-1] += " (as snapshot " + snapshot + " has it; the generation and each value tested against what the plan read first)"
		}
		for _, l := range left {
			parts = append(parts, model.PrintableLine(l))
		}
		change = strings.Join(parts, "; ")
	}
	specNow := func(ctx context.Context) (map[string]any, error) {
		u, err := ri.Get(ctx, old.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		spec, _ := u.Object["spec"].(map[string]any)
		return spec, nil
	}
	return Step{
		Name:   "restore-spec/" + old.Kind + "/" + old.Name,
		Title:  "Restore the spec of " + object + " from the snapshot",
		Object: object,
		Change: change,
		Before: before,
		After:  after,
		done: func(ctx context.Context) (bool, string, error) {
			spec, err := specNow(ctx)
			if err != nil {
				return false, "", err
			}
			if len(upgrade.DifferingKeys(pick(old.Spec, restore), pick(spec, restore))) == 0 {
				if len(left) > 0 {
					return true, "the fields the console owned are the snapshot's; " + strings.Join(left, "; "), nil
				}
				return true, "the spec is the snapshot's", nil
			}
			return false, "", nil
		},
		do: func(ctx context.Context, dry bool) (string, error) {
			_, err := ri.Patch(ctx, old.Name, types.JSONPatchType, patch, metav1.PatchOptions{FieldManager: upgrade.ManagerName, DryRun: dryRunOpt(dry)})
			same := func(ctx context.Context) bool {
				u, err := ri.Get(ctx, old.Name, metav1.GetOptions{})
				return err != nil || u.GetGeneration() == live.GetGeneration()
			}
			return fmt.Sprintf("%d field(s) restored", len(fields)), guarded(ctx, err, object, "its spec is no longer the one the plan read", same)
		},
	}, true, nil
}

// pick is m with only keys.
func pick(m map[string]any, keys []string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

// specOwners reads managedFields at the spec's top level: the fields the
// console's manager owns, the other managers of each field, and the
// other managers that wrote the object at or after taken.
func specOwners(entries []metav1.ManagedFieldsEntry, taken time.Time) (ours map[string]bool, others map[string][]string, since []string) {
	ours, others = map[string]bool{}, map[string][]string{}
	for _, e := range entries {
		if e.Subresource != "" {
			continue
		}
		who := e.Manager
		if e.Operation != "" {
			who += " (" + string(e.Operation) + ")"
		}
		// Any write, not only one that still owns spec fields: a writer
		// that removed the only field it had may own none, and its entry's
		// time is all that is left of it.
		if e.Manager != upgrade.ManagerName && e.Time != nil && !e.Time.Time.Before(taken.Truncate(time.Second)) {
			since = append(since, who)
		}
		spec, _ := fieldsTree(e)["f:spec"].(map[string]any)
		for f := range spec {
			k, ok := strings.CutPrefix(f, "f:")
			if !ok {
				continue
			}
			if e.Manager == upgrade.ManagerName {
				ours[k] = true
			} else {
				others[k] = append(others[k], who)
			}
		}
	}
	return ours, others, since
}

// jsonText shows a spec value on one line: absent as such, the rest as JSON.
func jsonText(v any) string {
	if v == nil {
		return "(absent)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
