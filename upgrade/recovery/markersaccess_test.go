package recovery

import (
	"errors"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// An identity with every right in the Cluster's namespace and eksa-system,
// enough for an upgrade (nodes-ready skipped), may not list Nodes, which
// are cluster-wide: lock status and lock clear failed on the node labels
// ("list Nodes labelled …: forbidden"), so it could neither see nor clear
// the lease its own interrupted upgrade kept. The node labels read
// "unknown"; the other markers are listed and cleared.
func TestMarkersOfAnIdentityThatMayNotListNodes(t *testing.T) {
	w := newWorld(t)
	label := w.seedStaleLock()
	user := "ns-operator-" + w.cluster
	all := rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}
	cptest.Grant(t, cp.Config, user, w.ns, all)
	cptest.Grant(t, cp.Config, user, w.sys, all)
	client, err := upgrade.NewClient(cptest.Impersonate(cp.Config, user))
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{Client: client, Cluster: w.cluster, ClusterNamespace: w.ns, Now: func() time.Time { return w.now }}
	var ms []Marker
	deadline := time.Now().Add(30 * time.Second)
	for {
		// RBAC takes effect within moments of the binding.
		if ms, err = ListMarkers(w.ctx, env, MarkerOptions{NodeLabel: label}); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("ListMarkers: %v", err)
	}
	byID := map[string]Marker{}
	for _, m := range ms {
		byID[m.ID] = m
	}
	if m := byID[MarkerNodeLabel]; m.State != MarkerUnknown || !strings.Contains(m.Reason, "kubectl auth can-i list nodes") {
		t.Errorf("node-label marker = %+v", m)
	}
	if m := byID[MarkerLease]; m.State != MarkerStale {
		t.Errorf("lease marker = %+v", m)
	}
	p, _, err := PlanClear(w.ctx, env, ClearOptions{IDs: []string{MarkerLease}, MarkerOptions: MarkerOptions{NodeLabel: label}})
	if err != nil || len(p.Steps) != 1 {
		t.Fatalf("plan clear lease: %v %+v", err, p)
	}
	x := &Executor{Audit: w.audit}
	if rep, err := x.Run(w.ctx, p); err != nil {
		t.Fatalf("run: %v\n%s", err, describeSteps(rep))
	}
	if st, err := upgrade.ReadLock(w.ctx, w.client.Kube, w.sys, w.cluster); err != nil || st.Held() {
		t.Errorf("lease after clear: %+v %v", st, err)
	}
}

// An identity that may list Nodes but not NodeUpgrades cannot tell whether a
// labelled node is mid in-place upgrade: its label reads "unknown", with the
// rule that grants the read, and the other markers are listed and cleared as
// before. The read's refusal failed lock status and every lock clear.
func TestMarkersOfAnIdentityThatMayNotListNodeUpgrades(t *testing.T) {
	w := newWorld(t)
	label := w.seedStaleLock()
	user := "no-nu-" + w.cluster
	all := rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}
	cptest.Grant(t, cp.Config, user, w.ns, all)
	cptest.Grant(t, cp.Config, user, w.sys,
		rbacv1.PolicyRule{APIGroups: []string{"", "coordination.k8s.io", "cluster.x-k8s.io", "controlplane.cluster.x-k8s.io", "etcdcluster.cluster.x-k8s.io", "bootstrap.cluster.x-k8s.io", "infrastructure.cluster.x-k8s.io"},
			Resources: []string{"*"}, Verbs: []string{"*"}},
		rbacv1.PolicyRule{APIGroups: []string{"anywhere.eks.amazonaws.com"}, Resources: []string{"clusters"}, Verbs: []string{"*"}})
	cptest.Grant(t, cp.Config, user, "", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "patch"}})
	client, err := upgrade.NewClient(cptest.Impersonate(cp.Config, user))
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{Client: client, Cluster: w.cluster, ClusterNamespace: w.ns, Now: func() time.Time { return w.now }}
	ms, err := ListMarkers(w.ctx, env, MarkerOptions{NodeLabel: label})
	if err != nil {
		t.Fatalf("ListMarkers: %v", err)
	}
	byID := map[string]Marker{}
	for _, m := range ms {
		byID[m.ID] = m
	}
	n1 := MarkerNodeLabel + "/" + w.cluster + "-n1"
	if m := byID[n1]; m.State != MarkerUnknown || !strings.Contains(m.Reason, "auth can-i list nodeupgrades.anywhere.eks.amazonaws.com") {
		t.Errorf("%s = %+v", n1, m)
	}
	if m := byID[MarkerLease]; m.State != MarkerStale {
		t.Errorf("lease marker = %+v", m)
	}
	if _, _, err := PlanClear(w.ctx, env, ClearOptions{IDs: []string{MarkerLease}, MarkerOptions: MarkerOptions{NodeLabel: label}}); err != nil {
		t.Errorf("plan clear lease: %v", err)
	}
	// Not known not to be live, the label is not cleared by name without
	// --force, as a live one is not.
	var refused *RefusedError
	if _, _, err := PlanClear(w.ctx, env, ClearOptions{IDs: []string{n1}, MarkerOptions: MarkerOptions{NodeLabel: label}}); !errors.As(err, &refused) {
		t.Errorf("plan clear %s: %v, want refused without --force", n1, err)
	}
	if p, _, err := PlanClear(w.ctx, env, ClearOptions{IDs: []string{n1}, Force: true, MarkerOptions: MarkerOptions{NodeLabel: label}}); err != nil || !p.Forced || len(p.Steps) != 1 {
		t.Errorf("plan clear %s --force: %v", n1, err)
	}
}
