package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// apply with a snapshot directory its local copy cannot go to (a file in
// its place: a read-only directory stops no write as root) is bad input,
// refused before the prompt and before any write, and recorded as the
// other refusals before a write are: it took, recorded and released the
// upgrade lock, then failed on the copy.
func TestApplyRefusesAnUnwritableSnapshotDirBeforeAnyWrite(t *testing.T) {
	state := t.TempDir()
	snapshots := filepath.Join(state, "upgrade-console", "snapshots")
	if err := os.MkdirAll(filepath.Dir(snapshots), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(snapshots, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	w := startDemo(t, scenario.Rolling)
	ctx := context.Background()
	before, err := kubeDynamic(t, w).Resource(upgrade.GVREKSACluster).Namespace(w.ClusterNamespace).Get(ctx, w.ClusterName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "snapshot directory " + snapshots + ": is not a directory; the upgrade's local snapshot copy cannot be written there, and nothing was changed (fix: make it a directory this user can write, or set XDG_STATE_HOME to one"
	// A dry run says the same refusal, with the same exit: a CI gate
	// running apply --dry-run passed (exit 0), and the apply exited 1.
	if _, errOut, code := runCapturedIn(t, state, liveArgs(w, "apply", "--dry-run", "--force-conflicts")...); code != ExitBadInput || !strings.Contains(errOut, want) {
		t.Fatalf("--dry-run: exit %d, want %d saying\n%s\n%s", code, ExitBadInput, want, errOut)
	}
	out, errOut, code := runCapturedIn(t, state, liveArgs(w, "apply", "--yes", "--force-conflicts")...)
	if code != ExitBadInput || !strings.Contains(errOut, want) || strings.Contains(out, "taking the upgrade lock") {
		t.Fatalf("exit %d, want %d saying\n%s\nbefore taking the lock:\n%s\n%s", code, ExitBadInput, want, out, errOut)
	}
	kube := kubernetes.NewForConfigOrDie(w.Config)
	if st, err := upgrade.ReadLock(ctx, kube, "eksa-system", w.ClusterName); err != nil || st != nil {
		t.Errorf("the refused apply left a lock: %+v %v", st, err)
	}
	if _, err := kube.CoordinationV1().Leases("eksa-system").Get(ctx, upgrade.LockName(w.ClusterName), metav1.GetOptions{}); err == nil {
		t.Error("the refused apply created the lock's Lease")
	}
	after, err := kubeDynamic(t, w).Resource(upgrade.GVREKSACluster).Namespace(w.ClusterNamespace).Get(ctx, w.ClusterName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.GetResourceVersion() != before.GetResourceVersion() {
		t.Errorf("the Cluster was written: resourceVersion %s, then %s", before.GetResourceVersion(), after.GetResourceVersion())
	}
	var log, logErr bytes.Buffer
	if err := runAudit(&log, &logErr, &auditOptions{output: "json", file: filepath.Join(state, "upgrade-console", upgrade.AuditFileName)}, time.Now()); err != nil {
		t.Fatal(err)
	}
	var entries []upgrade.AuditEntry
	if err := json.Unmarshal(log.Bytes(), &entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || !entries[0].DryRun || entries[1].DryRun {
		t.Fatalf("audit log %s, want the dry run's refusal, then the apply's", log.String())
	}
	for _, e := range entries {
		if e.Action != "apply" || e.Result != upgrade.AuditRefused || !strings.Contains(e.Error, snapshots) {
			t.Errorf("audit entry %+v, want apply refused naming %s", e, snapshots)
		}
	}
}
