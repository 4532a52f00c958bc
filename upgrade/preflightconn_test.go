package upgrade

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/model"
)

// A console run with --kubeconfig and --context words the fixes of its
// checks with them: pasted into a shell on another context, a bare
// `kubectl patch` or `lock clear` would change another cluster.
func TestPreflightFixesCarryTheConnection(t *testing.T) {
	conn := model.ConnFlags{{Name: "kubeconfig", Value: "/etc/kc"}, {Name: "context", Value: "prod"}}
	const flags = " --kubeconfig /etc/kc --context prod"
	state := func(annotations map[string]string) *model.ClusterState {
		c := &model.EKSACluster{}
		c.Name, c.Namespace, c.Annotations = "mgmt", "default", annotations
		return &model.ClusterState{Cluster: c, Conn: conn}
	}
	ctx := context.Background()

	r := checkPaused(ctx, &Inputs{State: state(map[string]string{model.AnnotationEKSAPaused: "true"})})
	if !strings.Contains(r.Remediation, "`upgrade-console lock status --cluster mgmt"+flags+"`") ||
		!strings.Contains(r.Remediation, "`upgrade-console lock clear paused --cluster mgmt"+flags+"`") {
		t.Errorf("paused: %q", r.Remediation)
	}
	r = checkPaused(ctx, &Inputs{State: state(map[string]string{model.AnnotationEKSAPaused: "true", model.AnnotationEtcdRollbackRecord: `{"phase":"done"}`})})
	if !strings.Contains(r.Remediation, "`upgrade-console lock clear paused --cluster mgmt"+flags+"`") {
		t.Errorf("paused by the etcd rollback: %q", r.Remediation)
	}
	s := state(nil)
	s.CAPICluster = &model.CAPICluster{Meta: model.Meta{Name: "mgmt", Namespace: "eksa-system"}, Paused: true}
	r = checkPaused(ctx, &Inputs{State: s})
	if !strings.Contains(r.Remediation, "`kubectl"+flags+" -n eksa-system patch clusters.cluster.x-k8s.io mgmt") {
		t.Errorf("Cluster API paused: %q", r.Remediation)
	}
	s = state(nil)
	s.Sources = map[model.Kind]model.SourceStatus{model.KindNode: {Installed: true, Synced: true, Forbidden: "list nodes (cluster-wide)"}}
	if r := checkNodes(ctx, &Inputs{State: s}); !strings.Contains(r.Remediation, "`kubectl"+flags+" auth can-i list nodes`") {
		t.Errorf("nodes forbidden: %q", r.Remediation)
	}
	if got := nodeLabelClear([]string{"n1"}, model.LabelUpgradeInProgress, &Inputs{State: state(nil)}); !strings.Contains(got, "`upgrade-console lock clear node-label/n1 --cluster mgmt"+flags+"`") {
		t.Errorf("node label: %q", got)
	}
	// The access check's can-i, asked of the API server the console reaches.
	in := &Inputs{State: state(nil), System: "eksa-system", Access: &ApplyAccess{Denied: []string{"create leases"}, Grant: []string{"{}"}, CanI: "auth can-i create leases.coordination.k8s.io -n eksa-system"}}
	if r := checkApplyAccess(ctx, in); !strings.Contains(r.Remediation, "`kubectl"+flags+" auth can-i create leases.coordination.k8s.io -n eksa-system`") {
		t.Errorf("apply access: %q", r.Remediation)
	}
}

// A fix that names `upgrade-console watch` names the EKS-A Cluster too: the
// command refuses to run without --cluster, so pasted with the connection
// flags alone it only printed a usage error.
func TestPreflightWatchFixesNameTheCluster(t *testing.T) {
	conn := model.ConnFlags{{Name: "kubeconfig", Value: "/etc/kc"}, {Name: "context", Value: "prod"}}
	const want = "`upgrade-console watch --cluster mgmt --kubeconfig /etc/kc --context prod`"
	c := &model.EKSACluster{}
	c.Name, c.Namespace, c.ControlPlaneCount = "mgmt", "default", 3
	ctx := context.Background()

	s := &model.ClusterState{Cluster: c, Conn: conn, Etcd: &model.EtcdCluster{Meta: model.Meta{Name: "mgmt-etcd"}, Replicas: 3, ReadyReplicas: 3}}
	if r := checkEtcd(ctx, &Inputs{State: s}); !strings.Contains(r.Remediation, want) {
		t.Errorf("etcd not ready: %q", r.Remediation)
	}
	three, two := int32(3), int32(2)
	s = &model.ClusterState{Cluster: c, Conn: conn, ControlPlane: &model.ControlPlane{Meta: model.Meta{Name: "mgmt"}, Replicas: model.ReplicaCounts{Desired: &three, Ready: &two}}}
	if r := checkControlPlane(ctx, &Inputs{State: s}); !strings.Contains(r.Remediation, want) {
		t.Errorf("control plane not ready: %q", r.Remediation)
	}
}

// The commands a fix names reach the same EKS-A Cluster as the console: one
// outside the default namespace is named with -n, in every command (the
// lock's commands left it out, and pasted they read Cluster default/mgmt).
func TestPreflightFixesNameTheClusterNamespace(t *testing.T) {
	conn := model.ConnFlags{{Name: "context", Value: "prod"}}
	c := &model.EKSACluster{}
	c.Name, c.Namespace, c.Annotations = "mgmt", "clusters", map[string]string{model.AnnotationEKSAPaused: "true"}
	r := checkPaused(context.Background(), &Inputs{State: &model.ClusterState{Cluster: c, Conn: conn}})
	for _, want := range []string{"`upgrade-console lock status --cluster mgmt -n clusters --context prod`", "`upgrade-console lock clear paused --cluster mgmt -n clusters --context prod`"} {
		if !strings.Contains(r.Remediation, want) {
			t.Errorf("paused: %q, want %s", r.Remediation, want)
		}
	}
}

// The read-only kubectl a check's fix names reaches the same cluster as the
// console: pasted into a shell on another context, it showed that cluster's
// Bundles (to be given to --to-bundles) or its control plane.
func TestPreflightKubectlFixesCarryTheConnection(t *testing.T) {
	conn := model.ConnFlags{{Name: "kubeconfig", Value: "/etc/kc"}, {Name: "context", Value: "prod"}}
	const flags = " --kubeconfig /etc/kc --context prod"
	tg := &Target{BundlesFile: "b.yaml", Bundles: &model.Bundles{Name: "bundles-78"},
		Release: &model.EKSARelease{Name: "eksa-v0-21-2", BundlesRefName: "bundles-84", BundlesRefNamespace: "eksa-system"}}
	if r := checkBundlesFile(tg, conn); !strings.Contains(r.Remediation, "`kubectl"+flags+" -n eksa-system get bundles bundles-84 -o yaml`") {
		t.Errorf("bundles file: %q", r.Remediation)
	}
	c := &model.EKSACluster{}
	c.Name, c.Namespace = "mgmt", "default"
	cp := &model.ControlPlane{Meta: model.Meta{Name: "mgmt", Namespace: "eksa-system"}}
	cp.FailureMessage = "boom"
	s := &model.ClusterState{Cluster: c, Conn: conn, ControlPlane: cp}
	if r := checkFailure(context.Background(), &Inputs{State: s}); !strings.Contains(r.Remediation, "`kubectl"+flags+" -n eksa-system describe kubeadmcontrolplane mgmt`") {
		t.Errorf("control plane failure: %q", r.Remediation)
	}
}

// A spec file that sets EKS-A's paused (or managed-by-cli) annotation
// fails the check, naming the file and the annotation: an exported paused
// cluster carries it, and the console applied it, pausing EKS-A itself and
// then watching an upgrade that could not move.
func TestPausedCheckReadsTheSpecFile(t *testing.T) {
	c := &model.EKSACluster{}
	c.Name, c.Namespace = "mgmt", "default"
	for _, k := range []string{model.AnnotationEKSAPaused, model.AnnotationManagedByCLI} {
		spec := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "anywhere.eks.amazonaws.com/v1alpha1", "kind": "Cluster",
			"metadata": map[string]any{"name": "mgmt", "annotations": map[string]any{k: "true"}}}}
		in := &Inputs{State: &model.ClusterState{Cluster: c}, Target: &Target{Spec: &SpecFile{Path: "up.yaml", Cluster: spec, Docs: []*unstructured.Unstructured{spec}}}}
		r := checkPaused(context.Background(), in)
		if r.Status != model.CheckFail || !strings.Contains(r.Message, "up.yaml") || !strings.Contains(r.Message, k) || !strings.Contains(r.Remediation, "remove the annotation "+k) {
			t.Errorf("%s in the spec: %+v", k, r)
		}
	}
	spec := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "mgmt", "annotations": map[string]any{model.AnnotationEKSAPaused: "false"}}}}
	if r := checkPaused(context.Background(), &Inputs{State: &model.ClusterState{Cluster: c}, Target: &Target{Spec: &SpecFile{Path: "up.yaml", Cluster: spec}}}); r.Status != model.CheckPass {
		t.Errorf("paused: \"false\" in the spec: %+v", r)
	}
}
