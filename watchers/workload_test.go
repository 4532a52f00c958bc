package watchers

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/model"
)

// A workload cluster's CAPI objects are on its management cluster's API
// server, its Nodes on its own: the Nodes listed here are the management
// cluster's, and were published, with their events, as the workload
// cluster's nodes.
func TestAWorkloadClusterGetsNoneOfThisAPIServersNodes(t *testing.T) {
	cfg := env.Config
	ns := cptest.Namespace(t, cfg)
	dc := cptest.Dynamic(t, cfg)
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	nodeName := ns + "-mgmt-node"
	if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), nodeName, metav1.DeleteOptions{}) })
	for i, obj := range []corev1.ObjectReference{{Kind: "Node", Name: nodeName, Namespace: ns}, {Kind: "Machine", Name: testCluster + "-cp-a", Namespace: ns}} {
		if _, err := cs.CoreV1().Events(ns).Create(ctx, &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: "ev-" + string(rune('a'+i)), Namespace: ns},
			InvolvedObject: obj, Type: corev1.EventTypeWarning, Reason: "NodeNotReady", Message: "x",
			LastTimestamp: metav1.Now(),
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The management cluster's upgrader pod, named for a node as EKS-A
	// names them: the workload cluster's run on its own API server.
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, upgraderPodObject(ns, nodeName), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := eksaCluster(ns)
	if err := unstructured.SetNestedField(c.Object, "other-mgmt", "spec", "managementCluster", "name"); err != nil {
		t.Fatal(err)
	}
	create(t, dc, gvrEKSACluster, c)
	create(t, dc, gvrMachine, machine(ns, testCluster+"-cp-a", model.RoleControlPlane))
	w := run(t, cfg, ns)
	s := waitState(t, w, "the workload Cluster, its machine and event", func(s *model.ClusterState) bool {
		return allSynced(s) && s.Cluster != nil && s.Machines.Len() == 1 && len(s.Events) > 0 && s.Source(model.KindUpgraderPod).Synced
	})
	if len(s.UpgraderPods) != 0 {
		t.Errorf("a workload cluster's snapshot has this API server's upgrader pods: %+v", s.UpgraderPods)
	}
	if !s.NodesElsewhere() {
		t.Fatalf("NodesElsewhere of a Cluster managed by other-mgmt is false")
	}
	if s.Nodes.Len() != 0 {
		t.Errorf("a workload cluster's snapshot has this API server's %d Nodes (%s among them: %v)", s.Nodes.Len(), nodeName, hasNode(s, nodeName))
	}
	for _, e := range s.Events {
		if e.ObjectKind == "Node" {
			t.Errorf("a workload cluster's snapshot has an event of this API server's Node: %+v", e)
		}
	}
	// Deleted while watched, it is still another's: the Nodes were never
	// its own (D7: `watch --plain` said the management cluster's Nodes
	// joined it).
	if err := dc.Resource(gvrEKSACluster).Namespace(ns).Delete(ctx, testCluster, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitState(t, w, "the Cluster gone", func(s *model.ClusterState) bool { return s.Cluster == nil })
	// A snapshot more, after a change the watch delivers after the delete.
	create(t, dc, gvrMachine, machine(ns, testCluster+"-cp-b", model.RoleControlPlane))
	s = waitState(t, w, "the second machine", func(s *model.ClusterState) bool { return s.Machines.Len() == 2 })
	if s.Nodes.Len() != 0 || hasNode(s, nodeName) {
		t.Errorf("the workload Cluster deleted, its snapshot has this API server's %d Nodes", s.Nodes.Len())
	}
	for _, e := range s.Events {
		if e.ObjectKind == "Node" {
			t.Errorf("the workload Cluster deleted, its snapshot has an event of this API server's Node: %+v", e)
		}
	}
}
