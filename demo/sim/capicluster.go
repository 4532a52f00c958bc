package sim

import (
	"context"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/demo/kinds"
	"github.com/upgrade-console/upgrade-console/demo/objects"
	"github.com/upgrade-console/upgrade-console/model"
)

// reconcileCAPICluster is CAPI's Cluster controller as far as an upgrade
// shows on it: status.controlPlane and status.workers summarise the KCP and
// the MachineDeployments (replicas, versions), and the *UpToDate and
// RollingOut conditions follow them.
func (s *Simulator) reconcileCAPICluster(ctx context.Context, k string) (time.Duration, error) {
	ns, name := splitKey(k)
	c := s.get(kinds.CAPICluster, ns, name)
	kcp := s.get(kinds.KCP, ns, name)
	if c == nil || kcp == nil {
		return 0, nil
	}
	now := s.clock.Now()
	cp := summary(num(kcp, "spec", "replicas"), []*unstructured.Unstructured{kcp})
	var mds []*unstructured.Unstructured
	var desired int64
	for _, md := range s.list(kinds.MachineDeployment, ns, map[string]string{model.LabelClusterName: name}) {
		mds = append(mds, md)
		desired += num(md, "spec", "replicas")
	}
	workers := summary(desired, mds)

	st := copyStatus(statusMap(c))
	st["controlPlane"], st["workers"] = cp, workers
	conds, _ := st["conditions"].([]any)
	gen := c.GetGeneration()
	upToDate := func(m map[string]any) bool { return m["upToDateReplicas"] == m["replicas"] }
	set := objects.V1beta2Setter(&conds, gen, now)
	msg := func(show bool, m string) string {
		if show {
			return m
		}
		return ""
	}
	set("ControlPlaneMachinesUpToDate", upToDate(cp), "UpToDate", "NotUpToDate", msg(!upToDate(cp), "* KubeadmControlPlane "+name+": machines not up-to-date"))
	set("WorkerMachinesUpToDate", upToDate(workers), "UpToDate", "NotUpToDate", msg(!upToDate(workers), "* MachineDeployments: machines not up-to-date"))
	rolling := !upToDate(cp) || !upToDate(workers)
	set("RollingOut", rolling, "RollingOut", "NotRollingOut", msg(rolling, "* Rolling out machines not up-to-date"))
	st["conditions"] = conds
	return 0, s.setStatus(ctx, compCAPICluster+"/"+k, compCAPICluster, kinds.CAPICluster, c, st)
}

// summary adds up the v1beta2 replica counters and versions of objects.
func summary(desired int64, objs []*unstructured.Unstructured) map[string]any {
	out := map[string]any{"desiredReplicas": desired}
	versions := map[string]int64{}
	for _, f := range []string{"replicas", "readyReplicas", "availableReplicas", "upToDateReplicas"} {
		var n int64
		for _, o := range objs {
			n += num(o, "status", f)
		}
		out[f] = n
	}
	for _, o := range objs {
		list, _, _ := unstructured.NestedSlice(o.Object, "status", "versions")
		for _, v := range list {
			m, _ := v.(map[string]any)
			ver, _ := m["version"].(string)
			versions[ver] += num(&unstructured.Unstructured{Object: m}, "replicas")
		}
	}
	keys := make([]string, 0, len(versions))
	for v := range versions {
		keys = append(keys, v)
	}
	sort.Strings(keys)
	var vs []any
	for _, v := range keys {
		vs = append(vs, map[string]any{"version": v, "replicas": versions[v]})
	}
	if len(vs) > 0 {
		out["versions"] = vs
	}
	return out
}
