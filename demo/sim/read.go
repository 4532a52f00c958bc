package sim

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/demo/objects"
	"github.com/upgrade-console/upgrade-console/model"
)

func str(u *unstructured.Unstructured, path ...string) string {
	v, _, _ := unstructured.NestedString(u.Object, path...)
	return v
}

func num(u *unstructured.Unstructured, path ...string) int64 {
	v, ok, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
	if !ok {
		return 0
	}
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case int32:
		return int64(n)
	case int:
		return int64(n)
	case string:
		i, _ := strconv.ParseInt(n, 10, 64)
		return i
	}
	return 0
}

func flag(u *unstructured.Unstructured, path ...string) bool {
	v, _, _ := unstructured.NestedBool(u.Object, path...)
	return v
}

func statusMap(u *unstructured.Unstructured) map[string]any {
	m, _ := u.Object["status"].(map[string]any)
	return m
}

func annotation(u *unstructured.Unstructured, k string) string { return u.GetAnnotations()[k] }

func deleting(u *unstructured.Unstructured) bool {
	return u.GetDeletionTimestamp() != nil || str(u, "status", "phase") == objects.PhaseDeleting
}

func phase(u *unstructured.Unstructured) string { return str(u, "status", "phase") }

func running(u *unstructured.Unstructured) bool { return phase(u) == objects.PhaseRunning }

// ownedBy reports whether owner is among u's ownerReferences.
func ownedBy(u, owner *unstructured.Unstructured) bool {
	for _, o := range u.GetOwnerReferences() {
		if o.UID == owner.GetUID() {
			return true
		}
	}
	return false
}

// byAge sorts objects oldest first (then by name, for equal timestamps).
func byAge(list []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := append([]*unstructured.Unstructured{}, list...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].GetCreationTimestamp(), out[j].GetCreationTimestamp()
		if !a.Equal(&b) {
			return a.Before(&b)
		}
		return out[i].GetName() < out[j].GetName()
	})
	return out
}

func template(u *unstructured.Unstructured) string {
	return annotation(u, objects.AnnotationSimTemplate)
}

func address(u *unstructured.Unstructured) string {
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "addresses")
	for _, a := range list {
		if m, ok := a.(map[string]any); ok && m["type"] == "InternalIP" {
			s, _ := m["address"].(string)
			return s
		}
	}
	return ""
}

func roleOf(u *unstructured.Unstructured) model.MachineRole {
	l := u.GetLabels()
	switch {
	case l[model.LabelEtcdCluster] != "":
		return model.RoleEtcd
	case l[model.LabelControlPlaneName] != "":
		return model.RoleControlPlane
	default:
		return model.RoleWorker
	}
}

// versionCounts counts machines per spec.version.
func versionCounts(ms []*unstructured.Unstructured) map[string]int64 {
	out := map[string]int64{}
	for _, m := range ms {
		out[str(m, "spec", "version")]++
	}
	return out
}

// notUpToDate is CAPI's UpToDate=False message of a KCP or MachineDeployment
// machine against its owner's version and infrastructure template, one line
// per difference; "" when the machine is up to date. The demo's in-place
// upgrades change versions only, so an in-place world compares versions.
func (s *Simulator) notUpToDate(m *unstructured.Unstructured, version, tmpl string) string {
	var lines []string
	if have := str(m, "spec", "version"); have != version {
		lines = append(lines, "* Version "+have+", "+version+" required")
	}
	if !s.sc.InPlace() && tmpl != "" && template(m) != tmpl {
		lines = append(lines, "* "+objects.InfraMachineKind+" is not up-to-date")
	}
	return strings.Join(lines, "\n")
}

func unix(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }
