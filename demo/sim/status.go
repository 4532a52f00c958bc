package sim

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/demo/kinds"
	"github.com/upgrade-console/upgrade-console/demo/objects"
	"github.com/upgrade-console/upgrade-console/model"
)

// clusterStatus computes the EKS-A Cluster conditions of one reconcile, as
// EKS-A's pkg/controller/clusters/status.go does (facts §1.4), reading the
// KCP and MachineDeployments in their v1beta2 shape.
type clusterStatus struct {
	s   *Simulator
	cl  *unstructured.Unstructured
	now time.Time

	cp, workersC, cniC map[string]any
	kcpEndpoints       []string
	// kids are the provider objects this reconcile acted on; children is
	// the childrenReconciledGeneration written, once written.
	kids     *children
	children int64
}

func (c *clusterStatus) upgradeReason() string {
	if c.s.sc.InPlace() {
		return reasonInPlace
	}
	return reasonRolling
}

func (c *clusterStatus) notTrue(typ, severity, reason, format string, args ...any) map[string]any {
	return objects.V1beta1(typ, false, severity, reason, fmt.Sprintf(format, args...), c.now)
}

// controlPlane is updateControlPlaneReadyCondition.
func (c *clusterStatus) controlPlane(kcp *unstructured.Unstructured) {
	const t = "ControlPlaneReady"
	if num(kcp, "status", "observedGeneration") != kcp.GetGeneration() {
		c.cp = c.notTrue(t, "Info", reasonOutdated, "")
		return
	}
	expected := num(c.cl, "spec", "controlPlaneConfiguration", "count")
	total := num(kcp, "status", "replicas")
	upToDate := num(kcp, "status", "upToDateReplicas")
	ready := num(kcp, "status", "readyReplicas")
	switch {
	case total-upToDate > 0 || inPlaceUnfinished(kcp, model.AnnotationKCPInPlaceUpgradeNeeded):
		c.cp = c.notTrue(t, "Info", c.upgradeReason(), "Control plane nodes not up-to-date yet, %d upgrading (%d up to date)", total, upToDate)
	case total < expected:
		c.cp = c.notTrue(t, "Info", reasonScalingUp, "Scaling up control plane nodes, %d expected (%d actual)", expected, total)
	case total > expected:
		c.cp = c.notTrue(t, "Info", reasonScalingDown, "Scaling down control plane nodes, %d expected (%d actual)", expected, total)
	case ready != expected:
		c.cp = c.notTrue(t, "Info", reasonNotReady, "Control plane nodes not ready yet, %d expected (%d ready)", expected, ready)
	default:
		h, ok := objects.Condition(kcp.Object, "ControlPlaneComponentsHealthy")
		switch {
		case !ok:
			c.cp = c.notTrue(t, "Error", reasonCPUnhealthy, "")
		case h["status"] == "False":
			msg, _ := h["message"].(string)
			c.cp = c.notTrue(t, "Error", reasonCPUnhealthy, "%s", msg)
		default:
			c.cp = objects.V1beta1(t, true, "", "", "", c.now)
		}
	}
}

// etcdNotReady is the control plane reconciler's verdict while external etcd
// is rolling.
func (c *clusterStatus) etcdNotReady() {
	c.cp = c.notTrue("ControlPlaneReady", "Info", reasonRolling, "Etcd is not ready")
}

// outdatedCP is the verdict right after the KCP spec changed: its status
// describes the old spec.
func (c *clusterStatus) outdatedCP() {
	c.cp = c.notTrue("ControlPlaneReady", "Info", reasonOutdated, "")
}

// workers is updateWorkersReadyCondition.
func (c *clusterStatus) workers(mds []*unstructured.Unstructured) {
	const t = "WorkersReady"
	var expected int64
	for _, wg := range workerCounts(c.cl) {
		expected += wg
	}
	var total, upToDate, ready int64
	inPlace := false
	for _, md := range mds {
		if num(md, "status", "observedGeneration") != md.GetGeneration() {
			c.outdatedWorkers(md.GetName())
			return
		}
		total += num(md, "status", "replicas")
		upToDate += num(md, "status", "upToDateReplicas")
		ready += num(md, "status", "readyReplicas")
		inPlace = inPlace || inPlaceUnfinished(md, model.AnnotationMDInPlaceUpgradeNeeded)
	}
	switch {
	case total-upToDate > 0 || inPlace:
		c.workersC = c.notTrue(t, "Info", c.upgradeReason(), "Worker nodes not up-to-date yet, %d upgrading (%d up to date)", total, upToDate)
	case total < expected:
		c.workersC = c.notTrue(t, "Info", reasonScalingUp, "Scaling up worker nodes, %d expected (%d actual)", expected, total)
	case total > expected:
		c.workersC = c.notTrue(t, "Info", reasonScalingDown, "Scaling down worker nodes, %d expected (%d actual)", expected, total)
	case ready != expected:
		c.workersC = c.notTrue(t, "Info", reasonNotReady, "Worker nodes not ready yet, %d expected (%d ready)", expected, ready)
	default:
		c.workersC = objects.V1beta1(t, true, "", "", "", c.now)
	}
}

// inPlaceUnfinished reports an in-place upgrade still under way on a KCP or
// MachineDeployment: the mark stays until EKS-A has seen every NodeUpgrade
// complete, deleted the request and resumed the health check. The last
// machine's version changes once its NodeUpgrade has completed, while the
// request's own bookkeeping still runs: the replica counters alone would
// call the nodes up to date (and the Cluster Ready) before it ends. How the forked CAPI controllers count
// in-place machines is not in the facts we have; holding the verdict on the
// mark keeps the simulated Ready behind EKS-A's own in-place completion.
func inPlaceUnfinished(obj *unstructured.Unstructured, mark string) bool {
	return obj.GetAnnotations()[mark] == "true"
}

func (c *clusterStatus) outdatedWorkers(md string) {
	c.workersC = c.notTrue("WorkersReady", "Info", reasonOutdated, "Worker node group %s status not up to date yet", md)
}

func (c *clusterStatus) cni(ok bool) {
	if ok {
		c.cniC = objects.V1beta1("DefaultCNIConfigured", true, "", "", "", c.now)
		return
	}
	c.cniC = c.notTrue("DefaultCNIConfigured", "Info", reasonCNIUpgrade, "Cilium upgrade in progress")
}

func (c *clusterStatus) isTrue(typ string) bool {
	for _, cond := range []map[string]any{c.cp, c.workersC, c.cniC} {
		if cond != nil && cond["type"] == typ {
			return cond["status"] == "True"
		}
	}
	return false
}

func (c *clusterStatus) allTrue() bool {
	return c.isTrue("ControlPlaneReady") && c.isTrue("WorkersReady") && c.isTrue("DefaultCNIConfigured")
}

// ready is CAPI v1beta1 SetSummary over the summary's conditions: True when
// all are, else the reason, severity and message of the first condition of
// the worst group.
func (c *clusterStatus) ready(conds []any) map[string]any {
	order := []string{"ControlPlaneInitialized", "ControlPlaneReady", "WorkersReady", "DefaultCNIConfigured"}
	rank := map[string]int{"Error": 0, "Warning": 1, "Info": 2, "": 3}
	var worst map[string]any
	for _, t := range order {
		cond, ok := objects.Condition(map[string]any{"status": map[string]any{"conditions": conds}}, t)
		if !ok || cond["status"] == "True" {
			continue
		}
		sev, _ := cond["severity"].(string)
		if worst == nil {
			worst = cond
			continue
		}
		ws, _ := worst["severity"].(string)
		if rank[sev] < rank[ws] {
			worst = cond
		}
	}
	if worst == nil {
		return objects.V1beta1("Ready", true, "", "", "", c.now)
	}
	sev, _ := worst["severity"].(string)
	reason, _ := worst["reason"].(string)
	msg, _ := worst["message"].(string)
	return objects.V1beta1("Ready", false, sev, reason, msg, c.now)
}

// write writes the status for the generation just reconciled.
func (c *clusterStatus) write(ctx context.Context, owner string, w *wanted, failureReason, failureMessage string) error {
	old := statusMap(c.cl)
	st := copyStatus(old)
	conds, _ := old["conditions"].([]any)
	if _, ok := objects.Condition(c.cl.Object, "ControlPlaneInitialized"); !ok {
		conds = objects.SetCondition(conds, objects.V1beta1("ControlPlaneInitialized", true, "", "", "", c.now))
	}
	for _, cond := range []map[string]any{c.cp, c.workersC, c.cniC} {
		if cond != nil {
			conds = objects.SetCondition(conds, cond)
		}
	}
	conds = objects.SetCondition(conds, c.ready(conds))
	st["conditions"] = objects.SortV1beta1(conds)
	gen := c.cl.GetGeneration()
	st["observedGeneration"] = gen
	if w != nil && w.eksD != "" {
		st["eksdReleaseRef"] = map[string]any{
			"apiVersion": "distro.eks.amazonaws.com/v1alpha1", "kind": "Release",
			"name": w.eksD, "namespace": c.s.sc.SystemNamespace,
		}
	}
	switch {
	case failureMessage != "":
		st["failureMessage"], st["failureReason"] = failureMessage, failureReason
	default:
		for _, k := range []string{"failureMessage", "failureReason"} {
			if _, ok := old[k]; ok {
				st[k] = nil
			}
		}
	}
	if failureMessage == "" && c.allTrue() {
		st["reconciledGeneration"] = gen
		// As EKS-A writes it at the end of a successful reconcile: the sum
		// of the generations of the child objects it reconciled
		// (aggregatedGeneration), as read when the reconcile began: a
		// child changed since is not reconciled yet.
		if n, ok := c.kids.generation(); ok {
			st["childrenReconciledGeneration"] = n
			c.children = n
		}
	}
	return c.s.setStatus(ctx, owner, compEKSA, kinds.EKSACluster, c.cl, st)
}

func workerCounts(cl *unstructured.Unstructured) []int64 {
	list, _, _ := unstructured.NestedSlice(cl.Object, "spec", "workerNodeGroupConfigurations")
	var out []int64
	for _, w := range list {
		m, _ := w.(map[string]any)
		out = append(out, num(&unstructured.Unstructured{Object: m}, "count"))
	}
	return out
}
