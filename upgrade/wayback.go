package upgrade

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/model"
)

// A spec the API server refused part way (an admission policy that lets the
// dry run through and denies the write) leaves machine configs on the new
// template under a Cluster on the old version, which EKS-A fails. The lock
// is kept and the snapshot holds what the applied documents were, but
// nothing said how to put them back: the old spec's apply is blocked by the
// very lock and failure it would end. The way back is said as commands the
// operator can paste, computed from the snapshot and from what the API
// server stored, so they name exactly the fields this apply changed and
// nothing it did not touch.

// wayBackPatch is one JSON-patch operation of the way back.
type wayBackPatch struct {
	Op    string
	Path  string
	Value any
}

// MarshalJSON keeps a value of null, which add, replace and test need as
// a value (omitempty left it out and the patch was malformed), and leaves
// it out of a remove, which takes none.
func (p wayBackPatch) MarshalJSON() ([]byte, error) {
	if p.Op == "remove" {
		return json.Marshal(struct {
			Op   string `json:"op"`
			Path string `json:"path"`
		}{p.Op, p.Path})
	}
	return json.Marshal(struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}{p.Op, p.Path, p.Value})
}

// restorePatch is the JSON patch that puts spec back as the snapshot has
// it, one top-level field at a time, each change guarded by a test of the
// value this apply stored: pasted after someone else changed the object,
// it is refused rather than overwriting their change. Nil when the spec
// is the snapshot's already.
func restorePatch(snap, stored map[string]any) []wayBackPatch {
	var ops []wayBackPatch
	for _, k := range DifferingKeys(snap, stored) {
		old, inOld := snap[k]
		cur, inCur := stored[k]
		ptr := "/spec/" + strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
		switch {
		case !inCur:
			ops = append(ops, wayBackPatch{Op: "add", Path: ptr, Value: old})
		case !inOld:
			ops = append(ops, wayBackPatch{Op: "test", Path: ptr, Value: cur}, wayBackPatch{Op: "remove", Path: ptr})
		default:
			ops = append(ops, wayBackPatch{Op: "test", Path: ptr, Value: cur}, wayBackPatch{Op: "replace", Path: ptr, Value: old})
		}
	}
	return ops
}

// DifferingKeys are the top-level keys, sorted, that one of a and b lacks
// or whose values differ as JSON: a snapshot read back from its ConfigMap
// has its numbers as float64, the API server's objects as int64.
func DifferingKeys(a, b map[string]any) []string {
	keys := map[string]bool{}
	for k, v := range a {
		if w, ok := b[k]; !ok || !sameJSON(v, w) {
			keys[k] = true
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys[k] = true
		}
	}
	return sortedKeys(keys)
}

func sameJSON(a, b any) bool {
	ja, erra := json.Marshal(a)
	jb, errb := json.Marshal(b)
	return erra == nil && errb == nil && string(ja) == string(jb)
}

// RestoreSpecPatch is the JSON patch that puts live's spec back to snap's,
// guarded first by a test of generation (the object's as live was read)
// and each change by a test of the value it replaces, and the fields it
// changes ("spec.template"); nil when they are the same.
func RestoreSpecPatch(snap, live map[string]any, generation int64) ([]byte, []string) {
	ops := restorePatch(snap, live)
	if len(ops) == 0 {
		return nil, nil
	}
	b, _ := json.Marshal(guardGeneration(generation, ops))
	return b, patchedFields(ops)
}

// guardGeneration puts a test of metadata.generation before ops. The tests
// of the values replaced cannot guard a field the apply removed: its add
// has nothing to test (a test of absence is no JSON-patch operation), and
// an add over a member someone set since replaces it. Any write of the spec
// since, by anyone, moves the generation (for these CRDs, with or without a
// status subresource), so the whole patch is refused instead.
func guardGeneration(generation int64, ops []wayBackPatch) []wayBackPatch {
	return append([]wayBackPatch{{Op: "test", Path: "/metadata/generation", Value: generation}}, ops...)
}

// patchedFields names the fields a restore patch changes.
func patchedFields(ops []wayBackPatch) []string {
	var fields []string
	for _, op := range ops {
		if op.Op != "test" {
			fields = append(fields, "spec."+strings.TrimPrefix(op.Path, "/spec/"))
		}
	}
	return fields
}

// wayBack says, for a start that applied part of the spec, each document
// applied and how to put it back from the snapshot, then how to end. It
// is computed when the start fails, while the snapshot and the stored
// objects are at hand; the mapper names each kind's resource for kubectl.
func (s *Session) wayBack(snap *Snapshot, mapper func(*unstructured.Unstructured) (*meta.RESTMapping, error)) string {
	conn := s.locker.Conn.String()
	var b strings.Builder
	fmt.Fprintf(&b, "the way back: %s; the snapshot %s holds what the documents applied were before it:\n", s.AppliedInPart(), s.Snapshot.Name)
	var cmds, objects []string
	for _, a := range s.Applied {
		if a.stored == nil {
			fmt.Fprintf(&b, "  %s: applied; this console did not see what the API server stored, so it prints no patch: compare it with the snapshot (`kubectl get … -o yaml`)\n", a.Object)
			continue
		}
		res := a.stored.GetKind()
		ns := ""
		if m, err := mapper(a.stored); err == nil {
			res = m.Resource.Resource
			if m.Resource.Group != "" {
				res += "." + m.Resource.Group
			}
			if m.Scope.Name() == meta.RESTScopeNameNamespace {
				ns = " -n " + model.ShellQuote(a.stored.GetNamespace())
			}
		} else if a.stored.GetNamespace() != "" {
			ns = " -n " + model.ShellQuote(a.stored.GetNamespace())
		}
		target := fmt.Sprintf("kubectl%s%s", conn, ns)
		var old *SnapshotObject
		if snap != nil {
			for i := range snap.Objects {
				o := &snap.Objects[i]
				if o.Kind == a.stored.GetKind() && o.Name == a.stored.GetName() && o.Namespace == a.stored.GetNamespace() {
					old = o
				}
			}
		}
		if old == nil {
			// The snapshot leaves out only what was not found when it was
			// taken (a read that failed stops the start): this apply made it.
			fmt.Fprintf(&b, "  %s: not in the snapshot: it did not exist before this apply, which created it; once the spec you go back to names it no more, `%s delete %s %s` removes it\n",
				a.Object, target, res, model.ShellQuote(a.stored.GetName()))
			continue
		}
		stored, _ := a.stored.Object["spec"].(map[string]any)
		ops := restorePatch(old.Spec, stored)
		if len(ops) == 0 {
			fmt.Fprintf(&b, "  %s: spec unchanged by this apply, nothing to put back\n", a.Object)
			continue
		}
		fields := patchedFields(ops)
		fmt.Fprintf(&b, "  %s: %s to put back\n", a.Object, strings.Join(fields, ", "))
		patch, _ := json.Marshal(guardGeneration(a.stored.GetGeneration(), ops))
		objects = append(objects, " --object "+model.ShellQuote(a.stored.GetKind()+"/"+a.stored.GetName()))
		cmds = append(cmds, fmt.Sprintf("%s patch %s %s --type=json -p %s", target, res, model.ShellQuote(a.stored.GetName()), model.ShellQuote(string(patch))))
	}
	if s.Unanswered != "" {
		fmt.Fprintf(&b, "  %s: its write got no answer and may have landed: read it (`kubectl get … -o yaml`); if it did, apply the spec file you upgraded from: `kubectl%s -n %s apply --server-side --force-conflicts -f <previous spec file>`\n", s.Unanswered, conn, model.ShellQuote(s.Plan.Namespace))
	}
	if len(cmds) > 0 {
		fmt.Fprintf(&b, "to put their spec back as the snapshot has it (the plan and the API server's dry run first, then the cluster's name typed; each write guarded and recorded in the audit log; --dry-run stops before the writes):\n  upgrade-console snapshot restore %s --snapshot %s%s\n",
			s.locker.clusterFlags(), model.ShellQuote(s.Snapshot.Name), strings.Join(objects, ""))
		b.WriteString("or, where this console cannot run, the same with kubectl (each patch first tests the generation this apply left and the values it wrote, so it changes nothing on an object whose spec anyone changed since: use the command above for that one; add --dry-run=server to see the API server's answer first; kubectl's writes are not in the console's audit log, note them with the incident):\n")
		for _, c := range cmds {
			b.WriteString("  " + c + "\n")
		}
	}
	fmt.Fprintf(&b, "Once the cluster reads as before (`upgrade-console watch %s`), release the lock with `upgrade-console lock clear lease %s`",
		s.locker.clusterFlags(), s.locker.clusterFlags())
	return b.String()
}

// WayBack is what to do after a start that applied part of the spec: the
// documents applied and the commands that put them back from the
// snapshot. Empty for a start that applied all of it, or none.
func (s *Session) WayBack() string { return s.wayBackText }
