package recovery

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// A --snapshot that names no snapshot ConfigMap, or another cluster's, is
// the flag's fault: bad input naming --snapshot with `snapshot list` in its
// fix, as `snapshot restore --snapshot` has it. It was refused on the
// snapshot precondition (exit 3), as a cluster that does not allow the
// rollback is.
func TestEtcdRollbackNamedSnapshotNotThereIsBadInput(t *testing.T) {
	w := newWorld(t)
	w.seedEtcdRollout(true)
	other := upgrade.Snapshot{Format: upgrade.SnapshotFormat, Cluster: "other", ClusterNamespace: w.ns, TakenAt: time.Now().UTC().Truncate(time.Second),
		Objects: []upgrade.SnapshotObject{{Kind: "EtcdadmCluster", Namespace: w.sys, Name: w.cluster + "-etcd", Spec: etcdSpec(oldEtcdVersion, oldEtcdTemplate)}}}
	data, _ := json.Marshal(other)
	otherName := upgrade.SnapshotName("other", other.TakenAt)
	if _, err := w.client.Kube.CoreV1().ConfigMaps(w.sys).Create(w.ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: otherName, Namespace: w.sys},
		Data:       map[string]string{upgrade.SnapshotDataKey: string(data)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	missing := upgrade.SnapshotName(w.cluster, time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, c := range []struct{ name, snapshot, problem string }{
		{"no such ConfigMap", missing, "no such snapshot (ConfigMap " + w.sys + "/" + missing + ")"},
		{"another cluster's", otherName, "a snapshot of Cluster " + w.ns + "/other, not of Cluster " + w.ns + "/" + w.cluster},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := PlanEtcdRollback(w.ctx, w.env, EtcdRollbackOptions{Snapshot: c.snapshot})
			var in *model.InputError
			if !errors.As(err, &in) || in.Source != "--snapshot" || in.Field != c.snapshot ||
				!strings.Contains(in.Problem, c.problem) || !strings.Contains(in.Fix, "`upgrade-console snapshot list --cluster "+w.cluster) {
				t.Fatalf("err = %v, want bad input naming --snapshot %s: %s, with snapshot list in its fix", err, c.snapshot, c.problem)
			}
			// The attempt is still a refusal on the snapshot precondition,
			// for the audit log to record it.
			var r *RefusedError
			if !errors.As(err, &r) || r.Input != in || len(r.Failed()) == 0 || r.Failed()[len(r.Failed())-1].Name != "snapshot" {
				t.Fatalf("err = %#v, want a refusal on the snapshot precondition carrying the bad input", err)
			}
			rec := &memRecorder{}
			if err := RecordRefusal(w.ctx, rec, err); err != nil || len(rec.entries) != 1 || rec.entries[0].Result != upgrade.AuditRefused ||
				!strings.Contains(rec.entries[0].Message, "snapshot: "+c.snapshot+": "+c.problem) {
				t.Fatalf("recorded %+v (%v), want one refused entry naming the snapshot", rec.entries, err)
			}
		})
	}
}

// memRecorder keeps the entries recorded, in order.
type memRecorder struct{ entries []upgrade.AuditEntry }

func (m *memRecorder) Record(_ context.Context, e upgrade.AuditEntry) error {
	m.entries = append(m.entries, e)
	return nil
}
