package recovery

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// An identity that may not read ConfigMaps ended the rollback with "list
// snapshots … forbidden" and the fix to ask for the right (exit 1), not a
// word of the local copy, which restores just as well. It is refused on
// snapshot, as when the ConfigMap is gone: the refusal names --snapshot-file,
// where the copies are and this machine's copy, and the rule to grant; from
// the copy the rollback is planned.
func TestEtcdRollbackOfAnIdentityThatMayNotReadConfigMaps(t *testing.T) {
	w := newWorld(t)
	w.seedEtcdRollout(true)
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	dir := filepath.Join(state, "upgrade-console", "snapshots")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file := w.localCopy(dir, nil)
	snapName := strings.TrimSuffix(filepath.Base(file), ".json")

	user := "no-configmaps-" + w.cluster
	var rules []rbacv1.PolicyRule
	for _, g := range []string{"anywhere.eks.amazonaws.com", "cluster.x-k8s.io", "controlplane.cluster.x-k8s.io", "etcdcluster.cluster.x-k8s.io",
		"bootstrap.cluster.x-k8s.io", "infrastructure.cluster.x-k8s.io", "coordination.k8s.io"} {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: []string{"*"}, Verbs: []string{"*"}})
	}
	rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets", "pods", "events"}, Verbs: []string{"*"}})
	cptest.Grant(t, cp.Config, user, w.ns, rules...)
	cptest.Grant(t, cp.Config, user, w.sys, rules...)
	client, err := upgrade.NewClient(cptest.Impersonate(cp.Config, user))
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{Client: client, Cluster: w.cluster, ClusterNamespace: w.ns, Now: w.env.Now}

	for _, tc := range []struct {
		name, snapshot, canI string
		copy                 string
	}{
		{"newest", "", "`kubectl auth can-i list configmaps -n " + w.sys + "`",
			"This machine keeps 1 local copy of " + w.cluster + "'s snapshots; the newest: `--snapshot-file " + file + "`"},
		{"named", snapName, "`kubectl auth can-i get configmaps/" + snapName + " -n " + w.sys + "`",
			"This machine keeps it: `--snapshot-file " + file + "`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var refused *RefusedError
			deadline := time.Now().Add(30 * time.Second)
			for {
				// RBAC takes effect within moments of the binding.
				_, err = PlanEtcdRollback(w.ctx, env, EtcdRollbackOptions{Snapshot: tc.snapshot})
				if errors.As(err, &refused) || time.Now().After(deadline) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if refused == nil || len(refused.Failed()) != 1 || refused.Failed()[0].Name != "snapshot" {
				t.Fatalf("err = %v, want a refusal on the snapshot", err)
			}
			detail := refused.Failed()[0].Detail
			for _, part := range []string{"forbidden", "--snapshot-file", "$XDG_STATE_HOME/upgrade-console/snapshots", "~/.local/state/upgrade-console/snapshots",
				`{apiGroups: [""], resources: [configmaps], verbs: [get, list]}`, tc.canI, tc.copy} {
				if !strings.Contains(detail, part) {
					t.Errorf("refusal %q does not mention %q", detail, part)
				}
			}
		})
	}

	p, err := PlanEtcdRollback(w.ctx, env, EtcdRollbackOptions{SnapshotFile: file})
	if err != nil || len(p.Steps) == 0 {
		t.Fatalf("plan from the local copy: %v", err)
	}
}
