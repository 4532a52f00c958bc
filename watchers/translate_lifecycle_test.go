package watchers

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upgrade-console/upgrade-console/model"
)

// A Machine being deleted says so: the phases skip it and the plain watch
// says "deleting".
func TestTranslateMachineDeletion(t *testing.T) {
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	m := translateMachine(map[string]any{
		"metadata": map[string]any{"name": "mgmt-md-0-a", "deletionTimestamp": at.Format(time.RFC3339)},
	}, "v1beta2").(*model.Machine)
	if !m.DeletionTimestamp.Equal(at) || !m.Deleting() {
		t.Errorf("deletionTimestamp = %s, want %s", m.DeletionTimestamp, at)
	}
}

// A NodeUpgrade is completed when its status says so, not once its
// controller has observed it.
func TestTranslateNodeUpgradeCompletedOnlyWhenSaid(t *testing.T) {
	nu := func(completed bool) *model.NodeUpgrade {
		return translateNodeUpgrade(model.KindNodeUpgrade)(map[string]any{
			"metadata": map[string]any{"name": "mgmt-md-0-a-node-upgrader"},
			"spec":     map[string]any{"machine": map[string]any{"name": "mgmt-md-0-a"}, "kubernetesVersion": "v1.31.9"},
			"status": map[string]any{"completed": completed, "observedGeneration": int64(1),
				"conditions": []any{map[string]any{"type": "BinariesCopied", "status": "False", "severity": "Error", "reason": "exit 1"}}},
		}, "").(*model.NodeUpgrade)
	}
	if got := nu(false); got.Completed || got.MachineName != "mgmt-md-0-a" || got.KubernetesVersion != "v1.31.9" {
		t.Errorf("node upgrade in progress = %+v", got)
	}
	if got := nu(true); !got.Completed {
		t.Errorf("completed node upgrade = %+v", got)
	}
	if c, ok := nu(false).Conditions.Get("BinariesCopied"); !ok || c.Severity != model.SeverityError || c.Reason != "exit 1" {
		t.Errorf("step condition = %+v", c)
	}
}

// A Node's events are kept whatever its name: on bare metal nodes are named
// after their hosts, not after the cluster.
func TestTranslateEventKeepsNodesOfAnyName(t *testing.T) {
	e := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e", CreationTimestamp: metav1.NewTime(benchTime)},
		InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: "rack1-host7"}, Type: "Warning", Reason: "NodeNotReady"}
	if translateEvent(e, "mgmt") == nil {
		t.Error("a node's event dropped for its name")
	}
}
