package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
	"github.com/upgrade-console/upgrade-console/upgrade/recovery"
)

// snapshot list says which snapshots a prune deletes and prints the prune
// command; prune deletes those (recorded), keeps the newest, and finds
// nothing to do when run again; a --keep below 1 and --read-only with --yes
// are refused before the cluster is reached.
func TestSnapshotListAndPrune(t *testing.T) {
	w := startDemo(t, scenario.Rolling)
	ctx := context.Background()
	cms := kubernetes.NewForConfigOrDie(w.Config).CoreV1().ConfigMaps(model.SystemNamespace)
	base := time.Now().UTC().Truncate(time.Second).Add(-48 * time.Hour)
	var names []string
	for i := range 3 {
		at := base.Add(time.Duration(i) * 24 * time.Hour)
		snap := upgrade.Snapshot{Format: upgrade.SnapshotFormat, Cluster: w.ClusterName, ClusterNamespace: w.ClusterNamespace, TakenAt: at, TakenBy: "ops@bastion",
			Objects: []upgrade.SnapshotObject{{APIVersion: "anywhere.eks.amazonaws.com/v1alpha1", Kind: "Cluster", Namespace: w.ClusterNamespace, Name: w.ClusterName,
				Spec: map[string]any{"kubernetesVersion": "1.30"}}}}
		data, _ := json.Marshal(snap)
		name := upgrade.SnapshotName(w.ClusterName, at)
		if _, err := cms.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{upgrade.LabelSnapshot: "true", upgrade.LabelCluster: w.ClusterName},
				Annotations: map[string]string{"upgrade-console/taken-at": at.Format(time.RFC3339)}},
			Data: map[string]string{upgrade.SnapshotDataKey: string(data)},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	conn := []string{"--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName}
	dir := t.TempDir()

	out, errOut, code := runCapturedIn(t, dir, append([]string{"snapshot", "list"}, conn...)...)
	if code != ExitOK || strings.Count(out, "deletes") != 2 || !strings.Contains(out, names[2]+"  ") || !strings.Contains(out, "keeps: newest") ||
		!strings.Contains(out, "\n  upgrade-console snapshot prune --cluster "+w.ClusterName+" --kubeconfig "+model.ShellQuote(w.KubeconfigPath)+"\n") {
		t.Fatalf("list: exit %d, %s\n%s", code, errOut, out)
	}
	for _, bad := range [][]string{{"--keep", "0"}, {"--read-only", "--yes"}} {
		_, errOut, code := runCapturedIn(t, dir, append(append([]string{"snapshot", "prune"}, conn...), bad...)...)
		want := ExitBadInput
		if bad[0] == "--read-only" {
			want = ExitUsage
		}
		if code != want {
			t.Errorf("prune %v: exit %d, want %d: %s", bad, code, want, errOut)
		}
	}
	out, errOut, code = runCapturedIn(t, dir, append([]string{"snapshot", "prune", "--yes"}, conn...)...)
	if code != ExitOK || !strings.Contains(out, "1 snapshot of "+w.ClusterName+" left") {
		t.Fatalf("prune: exit %d, %s\n%s", code, errOut, out)
	}
	for i, name := range names {
		_, err := cms.Get(ctx, name, metav1.GetOptions{})
		if gone := apierrors.IsNotFound(err); gone != (i < 2) {
			t.Errorf("%s: gone %t (%v)", name, gone, err)
		}
	}
	out, errOut, code = runCapturedIn(t, dir, append([]string{"snapshot", "prune", "--yes"}, conn...)...)
	if code != ExitOK || !strings.HasPrefix(out, "Nothing to prune") {
		t.Errorf("prune again: exit %d, %s\n%s", code, errOut, out)
	}
	res, err := upgrade.ReadAudit(dir+"/upgrade-console/"+upgrade.AuditFileName, upgrade.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	deleted := 0
	for _, e := range res.Entries {
		if e.Action == recovery.ActionSnapshotPrune && e.Result == upgrade.AuditOK {
			deleted++
		}
	}
	if deleted != 2 {
		t.Errorf("audit log: %d deletes recorded, want 2", deleted)
	}
}
