package recovery

import (
	"context"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upgrade-console/upgrade-console/demo/controlplane"
	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// serveV1beta1Alone makes a Cluster API CRD what it was before CAPI v1.11:
// v1beta1 served and stored, no v1beta2.
func serveV1beta1Alone(c *apiextensionsv1.CustomResourceDefinition) {
	if !strings.HasSuffix(c.Spec.Group, "cluster.x-k8s.io") {
		return
	}
	var v1beta1 *apiextensionsv1.CustomResourceDefinitionVersion
	hasV1beta2 := false
	for i := range c.Spec.Versions {
		switch c.Spec.Versions[i].Name {
		case "v1beta1":
			v1beta1 = &c.Spec.Versions[i]
		case "v1beta2":
			hasV1beta2 = true
		}
	}
	if v1beta1 == nil || !hasV1beta2 {
		return
	}
	v := *v1beta1
	v.Served, v.Storage, v.Deprecated, v.DeprecationWarning = true, true, false, nil
	c.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{v}
}

// The EKS-A releases whose Bundles name Cluster API v1.8 and v1.9 run a CAPI
// that serves v1beta1 alone. The pre-upgrade snapshot, the markers and the
// etcd rollback read its kinds at the version served: at v1beta2, the
// snapshot refused the upgrade ("KubeadmControlPlane not found"), the markers
// missed the paused KCP, and the rollback found no etcd Machine.
func TestRecoveryOnClusterAPIServedAtV1beta1Alone(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	old, err := controlplane.Start(ctx, controlplane.Options{AssetsDir: cptest.AssetsDir(), EditCRD: serveV1beta1Alone})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = old.Stop() })
	w := newWorldOn(t, old, true)
	if _, err := w.client.Dynamic.Resource(upgrade.GVRKCP).Namespace(w.sys).List(ctx, metav1.ListOptions{}); err == nil {
		t.Fatal("the test's API server serves KubeadmControlPlane at v1beta2")
	}
	w.seedEtcdRollout(true)

	// The markers see the KCP paused.
	markers, err := ListMarkers(ctx, w.env, MarkerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range markers {
		if m.ID == MarkerKCPPaused {
			found = m.State != MarkerNotSet
		}
	}
	if !found {
		t.Errorf("the paused KubeadmControlPlane is not a marker: %+v", markers)
	}

	// The etcd rollback finds the new member (by its infrastructure
	// reference's apiVersion) and rolls it back.
	kcpBefore := w.rollbackState().KCPSpec
	w.playEtcdadm()
	p, err := PlanEtcdRollback(ctx, w.env, EtcdRollbackOptions{By: "ops@bastion"})
	if err != nil {
		t.Fatal(err)
	}
	x := &Executor{Audit: w.audit}
	if rep, err := x.Run(ctx, p); err != nil {
		t.Fatalf("run: %v\n%s", err, describeSteps(rep))
	}
	got := w.rollbackState()
	want := w.rolledBack(kcpBefore)
	if got != want {
		t.Fatalf("final state\n got %+v\nwant %+v", got, want)
	}
	requireNothingLeft(t, w, x)

	// The pre-upgrade snapshot of the next upgrade holds the KCP, as the
	// v1beta1 API server gives it.
	cluster, err := w.env.readCluster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	snap, _, err := (&upgrade.Snapshotter{Client: w.client, Audit: w.audit, Dir: t.TempDir()}).Take(ctx, cluster, nil, "ops@bastion", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatalf("snapshot on a v1beta1 API server: %v", err)
	}
	var kcp *upgrade.SnapshotObject
	for i := range snap.Objects {
		if snap.Objects[i].Kind == "KubeadmControlPlane" {
			kcp = &snap.Objects[i]
		}
	}
	if kcp == nil || kcp.APIVersion != "controlplane.cluster.x-k8s.io/v1beta1" || len(kcp.Templates) != 1 || kcp.Templates[0].Name != "cp-template" {
		t.Fatalf("the snapshot's KubeadmControlPlane: %+v", kcp)
	}
}
