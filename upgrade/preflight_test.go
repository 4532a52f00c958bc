package upgrade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
	"github.com/upgrade-console/upgrade-console/demo/kinds"
	"github.com/upgrade-console/upgrade-console/demo/release"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/demo/seed"
	"github.com/upgrade-console/upgrade-console/model"
)

func TestPreflightHealthyWorld(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	p := w.plan(t)
	if p.Blocked() {
		t.Fatalf("healthy world blocked: %+v", p.Blocking())
	}
	if len(p.Preflight) != len(Checks) {
		t.Fatalf("%d results for %d checks", len(p.Preflight), len(Checks))
	}
	for _, r := range p.Preflight {
		// The demo's management components are the target release's,
		// upgraded first as EKS-A's CLI does. The spec's fields are
		// eks-a-cli's, as on a cluster the EKS-A CLI made: a plan that
		// passed was followed by an apply refused (exit 3) for them.
		want := model.CheckPass
		if r.Name == CheckSpecAccepted {
			want = model.CheckWarn
			if !strings.Contains(r.Message, "6 field(s) it changes are owned by eks-a-cli: an apply without --force-conflicts refuses them") ||
				!strings.Contains(r.Remediation, "apply --force-conflicts") {
				t.Errorf("spec-accepted %q, fix %q", r.Message, r.Remediation)
			}
		}
		if r.Status != want {
			t.Errorf("%s: %s (%s), want %s", r.Name, r.Status, r.Message, want)
		}
	}
	if b, _ := json.Marshal(p); len(p.Conflicts) != 6 || p.Conflicts[0].Manager != "eks-a-cli" || !strings.Contains(string(b), `"conflicts":[{"object":`) {
		t.Errorf("conflicts %+v\n%s", p.Conflicts, b)
	}
	forced, err := w.planner.Plan(context.Background(), PlanRequest{Cluster: w.cfg.ClusterName, Namespace: w.ns, Spec: w.spec, ForceConflicts: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := result(forced, CheckSpecAccepted); r.Status != model.CheckPass || !strings.HasSuffix(r.Message, "owned by eks-a-cli, taken over (--force-conflicts)") {
		t.Errorf("spec-accepted with --force-conflicts: %s %q", r.Status, r.Message)
	}
	if p.Versions.CurrentEKSA != release.Current.Version || p.Versions.TargetEKSA != release.Target.Version ||
		p.Versions.CurrentKubernetes != "1.30" || p.Versions.TargetKubernetes != "1.31" {
		t.Errorf("versions %+v", p.Versions)
	}
	changed := map[string]model.ChangeKind{}
	for _, c := range p.Changed() {
		changed[c.Key] = c.Change
	}
	// The management components are read from their own release: at the
	// target already, they do not change.
	if changed[model.KeyKubernetes] != model.ChangeMinor || changed["cilium"] != model.ChangeMinor || changed["eksa"] != "" {
		t.Errorf("diff rows %v: want kubernetes and cilium minor, EKS-A unchanged", changed)
	}
}

// Each live check, failing and passing again, on one world: the world is
// broken the way the check guards against, then mended.
func TestPreflightChecksFailAndRecover(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	p := w.plan(t)
	name := w.cfg.ClusterName

	expectFail := func(t *testing.T, check, inMessage, inFix string) model.CheckResult {
		t.Helper()
		r := w.waitCheck(t, p, check, model.CheckFail)
		if !r.Blocking {
			t.Errorf("%s failed without blocking", check)
		}
		if !strings.Contains(r.Message, inMessage) || !strings.Contains(r.Remediation, inFix) {
			t.Errorf("%s: message %q (want %q), remediation %q (want %q)", check, r.Message, inMessage, r.Remediation, inFix)
		}
		if !p.Blocked() {
			t.Errorf("plan not blocked by %s", check)
		}
		return r
	}

	t.Run("paused", func(t *testing.T) {
		w.cluster(t, false, func(u *unstructured.Unstructured) {
			u.SetAnnotations(merge(u.GetAnnotations(), model.AnnotationEKSAPaused, "true"))
		})
		expectFail(t, CheckReconcileNotPaused, model.AnnotationEKSAPaused, "upgrade-console lock clear paused --cluster "+name)
		w.cluster(t, false, func(u *unstructured.Unstructured) {
			u.SetAnnotations(merge(u.GetAnnotations(), model.AnnotationEKSAPaused, ""))
		})
		w.waitCheck(t, p, CheckReconcileNotPaused, model.CheckPass)
	})

	// A Cluster API Cluster left paused (EKS-A's etcd restore pauses it):
	// CAPI would roll no machine of the new spec.
	t.Run("CAPI Cluster paused", func(t *testing.T) {
		capi := w.client.Dynamic.Resource(kinds.CAPICluster).Namespace(w.ns)
		pause := func(paused bool) {
			t.Helper()
			patch := fmt.Sprintf(`{"spec":{"paused":%t}}`, paused)
			if _, err := capi.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		pause(true)
		expectFail(t, CheckReconcileNotPaused, "spec.paused is true on the Cluster API Cluster "+w.ns+"/"+name, "patch clusters.cluster.x-k8s.io "+name)
		pause(false)
		w.waitCheck(t, p, CheckReconcileNotPaused, model.CheckPass)
	})

	// The EKS-A CLI claims the cluster: its controller takes no action.
	t.Run("managed by the EKS-A CLI", func(t *testing.T) {
		w.cluster(t, false, func(u *unstructured.Unstructured) {
			u.SetAnnotations(merge(u.GetAnnotations(), model.AnnotationManagedByCLI, "true"))
		})
		expectFail(t, CheckReconcileNotPaused, model.AnnotationManagedByCLI, "lock clear managed-by-cli paused --cluster "+name+" -n "+w.ns+" --force")
		w.cluster(t, false, func(u *unstructured.Unstructured) {
			u.SetAnnotations(merge(u.GetAnnotations(), model.AnnotationManagedByCLI, ""))
		})
		w.waitCheck(t, p, CheckReconcileNotPaused, model.CheckPass)
	})

	t.Run("failureMessage, then skipped", func(t *testing.T) {
		w.cluster(t, true, func(u *unstructured.Unstructured) {
			setNested(u, "machine config mgmt-cp is invalid", "status", "failureMessage")
			setNested(u, "MachineConfigInvalid", "status", "failureReason")
		})
		expectFail(t, CheckNoFailureMessage, "reports a failure (MachineConfigInvalid): machine config mgmt-cp is invalid", "fix what it says")
		if r := result(p, CheckNoFailureMessage); !strings.Contains(r.Message, "MachineConfigInvalid") {
			t.Errorf("failure reason not shown: %q", r.Message)
		}
		p.Skipped = []string{CheckNoFailureMessage}
		r := w.waitCheck(t, p, CheckNoFailureMessage, model.CheckSkipped)
		if r.Blocking || p.Blocked() || !strings.Contains(r.Message, "skipped by the operator") {
			t.Errorf("skipped check still blocks: %+v", r)
		}
		p.Skipped = nil
		w.cluster(t, true, func(u *unstructured.Unstructured) {
			unstructured.RemoveNestedField(u.Object, "status", "failureMessage")
			unstructured.RemoveNestedField(u.Object, "status", "failureReason")
		})
		w.waitCheck(t, p, CheckNoFailureMessage, model.CheckPass)
	})

	t.Run("generation not observed", func(t *testing.T) {
		var gen int64
		w.cluster(t, true, func(u *unstructured.Unstructured) {
			gen = u.GetGeneration()
			setNested(u, gen-1, "status", "observedGeneration")
		})
		expectFail(t, CheckGenerationObserved, "Cluster mgmt (generation", "wait for the running reconcile")
		w.cluster(t, true, func(u *unstructured.Unstructured) { setNested(u, gen, "status", "observedGeneration") })
		w.waitCheck(t, p, CheckGenerationObserved, model.CheckPass)
	})

	t.Run("control plane not ready", func(t *testing.T) {
		w.status(t, GVRKCP, name, func(u *unstructured.Unstructured) { setNested(u, int64(2), "status", "readyReplicas") })
		expectFail(t, CheckControlPlaneReady, "2 of 3 replicas ready", "wait for the control plane")
		w.status(t, GVRKCP, name, func(u *unstructured.Unstructured) { setNested(u, int64(3), "status", "readyReplicas") })
		w.waitCheck(t, p, CheckControlPlaneReady, model.CheckPass)
	})

	t.Run("etcd not ready", func(t *testing.T) {
		w.status(t, GVREtcdadmCluster, name+"-etcd", func(u *unstructured.Unstructured) { setNested(u, false, "status", "ready") })
		expectFail(t, CheckEtcdReady, "EtcdadmCluster mgmt-etcd is not ready", "etcdadm-controller logs")
		w.status(t, GVREtcdadmCluster, name+"-etcd", func(u *unstructured.Unstructured) { setNested(u, true, "status", "ready") })
		w.waitCheck(t, p, CheckEtcdReady, model.CheckPass)
		// Ready on a generation the controller has not observed: a new
		// spec not acted on yet is not ready, as EKS-A reads it.
		var observed int64
		w.status(t, GVREtcdadmCluster, name+"-etcd", func(u *unstructured.Unstructured) {
			observed, _, _ = unstructured.NestedInt64(u.Object, "status", "observedGeneration")
			setNested(u, u.GetGeneration()-1, "status", "observedGeneration")
		})
		expectFail(t, CheckEtcdReady, "EtcdadmCluster mgmt-etcd is not ready", "etcdadm-controller logs")
		w.status(t, GVREtcdadmCluster, name+"-etcd", func(u *unstructured.Unstructured) { setNested(u, observed, "status", "observedGeneration") })
		w.waitCheck(t, p, CheckEtcdReady, model.CheckPass)
	})

	t.Run("leftover etcd upgrading annotation", func(t *testing.T) {
		r := w.client.Dynamic.Resource(GVREtcdadmCluster).Namespace(w.ns)
		w.mutate(t, func() (*unstructured.Unstructured, error) { return r.Get(ctx, name+"-etcd", metav1.GetOptions{}) },
			func(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
				return r.Update(ctx, u, metav1.UpdateOptions{})
			},
			func(u *unstructured.Unstructured) {
				u.SetAnnotations(merge(u.GetAnnotations(), model.AnnotationEtcdUpgrading, "true"))
			})
		expectFail(t, CheckEtcdUpgradingMarker, model.AnnotationEtcdUpgrading, "lock clear etcd-upgrading --cluster mgmt")
		w.mutate(t, func() (*unstructured.Unstructured, error) { return r.Get(ctx, name+"-etcd", metav1.GetOptions{}) },
			func(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
				return r.Update(ctx, u, metav1.UpdateOptions{})
			},
			func(u *unstructured.Unstructured) {
				u.SetAnnotations(merge(u.GetAnnotations(), model.AnnotationEtcdUpgrading, ""))
			})
		w.waitCheck(t, p, CheckEtcdUpgradingMarker, model.CheckPass)
	})

	t.Run("workers not ready", func(t *testing.T) {
		md := name + "-md-0"
		w.status(t, GVRMachineDeploy, md, func(u *unstructured.Unstructured) { setNested(u, int64(1), "status", "readyReplicas") })
		expectFail(t, CheckWorkersReady, md+" 1/", "wait for the workers")
		w.status(t, GVRMachineDeploy, md, func(u *unstructured.Unstructured) {
			n, _, _ := unstructured.NestedInt64(u.Object, "status", "replicas")
			setNested(u, n, "status", "readyReplicas")
		})
		w.waitCheck(t, p, CheckWorkersReady, model.CheckPass)
	})

	t.Run("node not ready", func(t *testing.T) {
		node := w.someNode(t)
		w.setNodeReady(t, node, corev1.ConditionFalse)
		t.Cleanup(func() { w.setNodeReady(t, node, corev1.ConditionTrue) })
		expectFail(t, CheckNodesReady, node, "bring the nodes back")
		w.setNodeReady(t, node, corev1.ConditionTrue)
		w.waitCheck(t, p, CheckNodesReady, model.CheckPass)
	})

	t.Run("node labelled upgrade-in-progress", func(t *testing.T) {
		node := w.someNode(t)
		w.labelNode(t, node, "true")
		t.Cleanup(func() { w.labelNode(t, node, "") })
		// The recorded command, not a kubectl label the audit log misses.
		expectFail(t, CheckNodeUpgradeLabel, node, "`upgrade-console lock clear node-label/"+node+" --cluster "+w.cfg.ClusterName+" -n "+w.ns+"` (recorded)")
		w.labelNode(t, node, "")
		w.waitCheck(t, p, CheckNodeUpgradeLabel, model.CheckPass)
	})

	t.Run("upgrade lock held, then stale", func(t *testing.T) {
		leases := w.client.Kube.CoordinationV1().Leases(w.ns)
		now := metav1.NewMicroTime(time.Now())
		_, err := leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: LockName(name), Namespace: w.ns},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("alice@laptop/1234abcd"), LeaseDurationSeconds: ptr.To(int32(3600)),
				AcquireTime: &now, RenewTime: &now},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		expectFail(t, CheckUpgradeLock, "alice@laptop (console 1234abcd)", "wait for alice@laptop")
		lease, err := leases.Get(ctx, LockName(name), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		old := metav1.NewMicroTime(time.Now().Add(-3 * time.Hour))
		lease.Spec.RenewTime, lease.Spec.AcquireTime = &old, &old
		if _, err := leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		// No write time: the update's, by the API server's clock, is a
		// renewal a moment ago whatever renewTime it wrote.
		cptest.ForgetLeaseWrites(t, w.client.Kube, w.ns, LockName(name))
		expectFail(t, CheckUpgradeLock, "stale upgrade lock", "upgrade-console lock clear lease")
		// Kept by an upgrade that failed: blocking even when renewed (it is
		// read before the holder).
		if lease, err = leases.Get(ctx, LockName(name), metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
		fresh := metav1.NewMicroTime(time.Now())
		lease.Spec.RenewTime = &fresh
		lease.Annotations = map[string]string{model.AnnotationLockKept: "upgrade failed: boom"}
		if _, err := leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		// The check already fails (stale): wait for the watchers to see the mark.
		if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
			return strings.Contains(w.waitCheck(t, p, CheckUpgradeLock, model.CheckFail).Message, "kept"), nil
		}); err != nil {
			t.Fatalf("kept lock not seen: %+v", result(p, CheckUpgradeLock))
		}
		expectFail(t, CheckUpgradeLock, "upgrade lock kept: Lease", "upgrade-console lock clear lease")
		if r := result(p, CheckUpgradeLock); !strings.Contains(r.Message, "upgrade failed: boom") {
			t.Errorf("kept lock check: %+v", r)
		}
		// Kept by this very console: blocking too, so that it does not
		// start again before someone looked at the cluster (Acquire would
		// take it back and drop the mark).
		if lease, err = leases.Get(ctx, LockName(name), metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
		lease.Spec.HolderIdentity = ptr.To(w.planner.Self.String())
		if _, err := leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
			if err := w.planner.Recheck(ctx, p); err != nil {
				return false, err
			}
			r := result(p, CheckUpgradeLock)
			return strings.Contains(r.Message, w.planner.Self.Display()) || r.Status == model.CheckPass, nil
		}); err != nil {
			t.Fatalf("this console's kept lock not seen: %+v", result(p, CheckUpgradeLock))
		}
		if r := result(p, CheckUpgradeLock); r.Status != model.CheckFail || !strings.Contains(r.Message, "upgrade lock kept") {
			t.Errorf("this console's own kept lock: %+v, want it blocking", r)
		}
		if err := leases.Delete(ctx, LockName(name), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		w.waitCheck(t, p, CheckUpgradeLock, model.CheckPass)
	})

	t.Run("management components", func(t *testing.T) {
		w.cluster(t, false, func(u *unstructured.Unstructured) {
			u.SetAnnotations(merge(u.GetAnnotations(), model.AnnotationManagementComponentsVersion, release.Target.Version))
		})
		// The annotation is read when resolving: plan again.
		p2 := w.plan(t)
		if r := result(p2, CheckManagementComponents); r.Status != model.CheckPass {
			t.Errorf("components at the target release: %+v", r)
		}
		w.cluster(t, false, func(u *unstructured.Unstructured) {
			u.SetAnnotations(merge(u.GetAnnotations(), model.AnnotationManagementComponentsVersion, release.Current.Version))
		})
		// Older than the target: nothing in the cluster upgrades them,
		// and EKS-A runs no cluster components newer than them. It was a
		// warning, and the plan said the upgrade may start.
		p3 := w.plan(t)
		r := result(p3, CheckManagementComponents)
		if r.Status != model.CheckFail || !strings.Contains(r.Remediation, "eksctl anywhere upgrade management-components") || !p3.Blocked() {
			t.Errorf("older components: %+v", r)
		}
		if changed := p3.Changed(); len(changed) == 0 || changed[0].Key != "eksa" {
			t.Errorf("older components: the diff's first row %+v, want EKS-A changing", changed)
		}
	})
}

// The version rules and the target release, failing through the spec file.
func TestPreflightVersionRules(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	planWith := func(t *testing.T, toBundles string, edit func(spec map[string]any)) *Plan {
		t.Helper()
		spec := w.spec.Cluster.DeepCopy()
		edit(spec.Object["spec"].(map[string]any))
		sf := &SpecFile{Path: "edited.yaml", Docs: []*unstructured.Unstructured{spec}, Cluster: spec}
		p, err := w.planner.Plan(ctx, PlanRequest{Cluster: w.cfg.ClusterName, Namespace: w.ns, Spec: sf, ToBundles: toBundles})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	check := func(t *testing.T, p *Plan, name string, want model.CheckStatus, inMessage string) {
		t.Helper()
		r := result(p, name)
		if r.Status != want || !strings.Contains(r.Message, inMessage) {
			t.Errorf("%s: %s %q, want %s containing %q", name, r.Status, r.Message, want, inMessage)
		}
	}

	t.Run("kubernetes downgrade", func(t *testing.T) {
		p := planWith(t, "", func(s map[string]any) { s["kubernetesVersion"] = "1.29" })
		check(t, p, model.CheckNameKubernetesVersionSkew, model.CheckFail, "1.29")
		check(t, p, model.CheckNameTargetKubernetesKnown, model.CheckPass, "1.29")
	})
	t.Run("kubernetes skips a minor, unknown to the target bundles", func(t *testing.T) {
		p := planWith(t, "", func(s map[string]any) { s["kubernetesVersion"] = "1.32" })
		check(t, p, model.CheckNameKubernetesVersionSkew, model.CheckFail, "1.32")
		check(t, p, model.CheckNameTargetKubernetesKnown, model.CheckFail, "1.32")
	})
	t.Run("worker group too far behind", func(t *testing.T) {
		p := planWith(t, "", func(s map[string]any) {
			groups := s["workerNodeGroupConfigurations"].([]any)
			groups[0].(map[string]any)["kubernetesVersion"] = "1.28"
		})
		// From the 1.30 it runs: a downgrade, before being too far behind.
		check(t, p, model.CheckNameWorkerVersionSkew, model.CheckFail, "would go down from 1.30 to 1.28")
		// And the target Bundles have no 1.28 bundle to build it from.
		check(t, p, model.CheckNameTargetKubernetesKnown, model.CheckFail, "worker group md-0 is pinned to Kubernetes 1.28, which Bundles ")
	})
	// A group pinned to the version it runs gets the new release's build
	// of it: its row goes from the 1.30 EKS-D it runs, not the control
	// plane's way to 1.31.
	t.Run("worker group pinned where it is", func(t *testing.T) {
		p := planWith(t, "", func(s map[string]any) {
			groups := s["workerNodeGroupConfigurations"].([]any)
			groups[0].(map[string]any)["kubernetesVersion"] = "1.30"
		})
		check(t, p, model.CheckNameWorkerVersionSkew, model.CheckPass, "")
		var cp, md0 *model.ComponentDiff
		for i, d := range p.Components {
			switch {
			case d.Key == model.KeyKubernetes && d.WorkerGroups == nil:
				cp = &p.Components[i]
			case d.Key == model.KeyKubernetes && slices.Equal(d.WorkerGroups, []string{"md-0"}):
				md0 = &p.Components[i]
			}
		}
		if cp == nil || md0 == nil || md0.OldVersion != cp.OldVersion || !strings.HasPrefix(md0.NewVersion, "v1.30.") ||
			md0.Name != "kubernetes (EKS-D) for md-0" {
			t.Errorf("kubernetes rows: control plane %+v, md-0 %+v", cp, md0)
		}
	})
	// A machine config nobody holds passed the plan, and EKS-A failed on it.
	t.Run("a worker group refers to a machine config that is nowhere", func(t *testing.T) {
		p := planWith(t, "", func(s map[string]any) {
			groups := s["workerNodeGroupConfigurations"].([]any)
			groups[0].(map[string]any)["machineGroupRef"].(map[string]any)["name"] = "mgmt-md-9"
		})
		check(t, p, CheckProviderRefs, model.CheckFail, "the worker group md-0 refers to VSphereMachineConfig mgmt-md-9, which neither the spec file nor the cluster holds")
		if !p.Blocked() {
			t.Error("the plan is not blocked")
		}
		// The whole target spec: its machine configs on the 1.31 images.
		check(t, w.plan(t), CheckMachineTemplates, model.CheckPass, "4 machine config(s)")
	})
	// A spec file of the Cluster alone (as planWith writes): EKS-A uses the
	// machine configs in the cluster, still on the 1.30 images. The check
	// said "no machine config names its image after a Kubernetes version".
	t.Run("a spec file without its machine configs", func(t *testing.T) {
		p := planWith(t, "", func(map[string]any) {})
		check(t, p, CheckMachineTemplates, model.CheckWarn, "mgmt-cp (the cluster's: the spec file leaves it out)")
		check(t, p, CheckMachineTemplates, model.CheckWarn, "named for Kubernetes 1.30, and the machines run 1.31")
	})
	// The API server judges every field: the plan passed a spec whose apply
	// it then refused.
	t.Run("a field the API server refuses", func(t *testing.T) {
		p := planWith(t, "", func(s map[string]any) {
			s["controlPlaneConfiguration"].(map[string]any)["count"] = "three"
		})
		check(t, p, CheckSpecAccepted, model.CheckFail, "controlPlaneConfiguration.count")
		if !p.Blocked() {
			t.Error("the plan is not blocked")
		}
		p = planWith(t, "", func(map[string]any) {})
		check(t, p, CheckSpecAccepted, model.CheckWarn, "accepted; 2 field(s) it changes are owned by eks-a-cli")
		if r := result(p, CheckSpecAccepted); strings.Contains(r.Message, "changes nothing") {
			t.Errorf("a spec that changes the cluster: %q", r.Message)
		}
		// The cluster's own spec, applied again, changes nothing.
		data, err := seed.CurrentSpec(w.cfg)
		if err != nil {
			t.Fatal(err)
		}
		sf, err := ParseSpec("current.yaml", data, w.ns)
		if err != nil {
			t.Fatal(err)
		}
		p, err = w.planner.Plan(ctx, PlanRequest{Cluster: w.cfg.ClusterName, Namespace: w.ns, Spec: sf})
		if err != nil {
			t.Fatal(err)
		}
		check(t, p, CheckSpecAccepted, model.CheckPass, "changes nothing")
	})
	bundlesFile := func(t *testing.T, r release.Release) string {
		t.Helper()
		file := filepath.Join(t.TempDir(), "bundles.yaml")
		data, err := yaml.Marshal(r.Bundles(w.ns).Object)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return file
	}
	// The plan shows the file's components: another release's file made a
	// real upgrade read "all components are up to date", and pass.
	t.Run("a --to-bundles file of another release than the spec's", func(t *testing.T) {
		p := planWith(t, bundlesFile(t, release.Current), func(map[string]any) {})
		check(t, p, CheckTargetRelease, model.CheckFail, "names Bundles "+release.Target.BundlesName())
		if !p.Blocked() {
			t.Error("the plan is not blocked")
		}
		p = planWith(t, bundlesFile(t, release.Target), func(map[string]any) {})
		check(t, p, CheckTargetRelease, model.CheckPass, "")
	})
	// Named as the release's, edited: the plan showed versions the
	// controller never installs.
	t.Run("a --to-bundles file that is an edited copy of the release's", func(t *testing.T) {
		obj := release.Target.Bundles(w.ns).Object
		vb := obj["spec"].(map[string]any)["versionsBundles"].([]any)[0].(map[string]any)
		vb["certManager"].(map[string]any)["version"] = "v9.9.9"
		data, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "bundles.yaml")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		p := planWith(t, file, func(map[string]any) {})
		check(t, p, CheckTargetRelease, model.CheckFail, "differs from the cluster's Bundles")
		if r := result(p, CheckTargetRelease); !strings.Contains(r.Message, "cert-manager: v9.9.9 here, ") || !p.Blocked() {
			t.Errorf("message %q (blocked %t), want the edited component named", r.Message, p.Blocked())
		}
	})
	t.Run("EKS-A skips a minor, its release not in the cluster", func(t *testing.T) {
		file := bundlesFile(t, release.Target)
		p := planWith(t, file, func(s map[string]any) { s["eksaVersion"] = "v0.22.1" })
		check(t, p, model.CheckNameEKSAVersionSkew, model.CheckFail, "skips 1 minor")
		check(t, p, CheckTargetRelease, model.CheckFail, "eksa-v0-22-1")
		if r := result(p, CheckTargetRelease); !strings.Contains(r.Remediation, "install the v0.22.1 management components") {
			t.Errorf("remediation %q", r.Remediation)
		}
		if p.Versions.TargetBundles != file {
			t.Errorf("target bundles from %q, want the --to-bundles file", p.Versions.TargetBundles)
		}
	})
}

func TestValidateSkips(t *testing.T) {
	if err := ValidateSkips([]string{CheckNodesReady, CheckWorkersReady}); err != nil {
		t.Errorf("skippable checks refused: %v", err)
	}
	err := ValidateSkips([]string{CheckUpgradeLock})
	if err == nil || !strings.Contains(err.Error(), "cannot be skipped") || !strings.Contains(err.Error(), CheckNodesReady) {
		t.Errorf("skipping the lock check: %v", err)
	}
	err = ValidateSkips([]string{"no-such-check"})
	if err == nil || !strings.Contains(err.Error(), `no preflight check is named "no-such-check"`) {
		t.Errorf("unknown check: %v", err)
	}
}

func merge(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	if v == "" {
		delete(m, k)
	} else {
		m[k] = v
	}
	return m
}

// someNode returns a node of this world (a control-plane machine's node).
func (w *world) someNode(t *testing.T) string {
	t.Helper()
	s := w.watcher.Latest()
	for _, m := range s.Machines.All() {
		if m.Role == model.RoleControlPlane && m.NodeName != "" {
			return m.NodeName
		}
	}
	t.Fatal("no control-plane node in the world")
	return ""
}

func (w *world) setNodeReady(t *testing.T, name string, status corev1.ConditionStatus) {
	t.Helper()
	ctx := context.Background()
	n, err := w.client.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			n.Status.Conditions[i].Status = status
		}
	}
	if _, err := w.client.Kube.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (w *world) labelNode(t *testing.T, name, value string) {
	t.Helper()
	ctx := context.Background()
	n, err := w.client.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Labels = merge(n.Labels, model.LabelUpgradeInProgress, value)
	if _, err := w.client.Kube.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Without a snapshot (the watch never synced) the live checks fail as "not
// visible" instead of passing or panicking.
func TestRunChecksWithoutSnapshot(t *testing.T) {
	cur := &unstructured.Unstructured{Object: map[string]any{}}
	b := &model.Bundles{Name: "bundles-1", VersionsBundles: []model.VersionsBundle{{KubeVersion: "1.31", Components: map[string]string{"eksa": "v0.21.2"}}}}
	in := &Inputs{
		Now:     time.Now(),
		Current: &Current{Cluster: cur, KubernetesVersion: "1.30", EksaVersion: "v0.20.9", ManagementVersion: "v0.21.2", Bundles: b},
		Target:  &Target{KubernetesVersion: "1.31", EksaVersion: "v0.21.2", Bundles: b, Release: &model.EKSARelease{Name: "eksa-v0-21-2"}},
	}
	res := RunChecks(context.Background(), Checks, in, nil)
	byName := map[string]model.CheckResult{}
	for _, r := range res {
		byName[r.Name] = r
	}
	for _, n := range []string{CheckReconcileNotPaused, CheckGenerationObserved, CheckControlPlaneReady, CheckEtcdReady, CheckWorkersReady} {
		if r := byName[n]; r.Status != model.CheckFail || !strings.Contains(r.Message, "not visible") {
			t.Errorf("%s without a snapshot: %+v", n, r)
		}
	}
	if r := byName[model.CheckNameKubernetesVersionSkew]; r.Status != model.CheckPass {
		t.Errorf("version rule needs no snapshot: %+v", r)
	}
}

// The live checks on hand-made snapshots, each broken in one way the world
// tests do not break it: each case was found by a mutation of the check
// that no test noticed.
func TestLiveChecksOnSnapshots(t *testing.T) {
	ctx := context.Background()
	// healthy is a cluster every check below passes on: 3 control-plane
	// replicas, one worker group of 2, stacked etcd.
	healthy := func() *model.ClusterState {
		c := &model.EKSACluster{ControlPlaneCount: 3, WorkerGroups: []model.WorkerGroup{{Name: "md-0"}}}
		c.Name, c.Namespace, c.Generation, c.ObservedGeneration = "mgmt", "default", 2, 2
		cp := &model.ControlPlane{}
		cp.Name, cp.Generation, cp.ObservedGeneration = "mgmt", 4, 4
		cp.Replicas.Desired, cp.Replicas.Ready = ptr.To(int32(3)), ptr.To(int32(3))
		md := model.MachineDeployment{}
		md.Name, md.Generation, md.ObservedGeneration = "mgmt-md-0", 5, 5
		md.Replicas.Desired, md.Replicas.Ready = ptr.To(int32(2)), ptr.To(int32(2))
		return &model.ClusterState{Cluster: c, ControlPlane: cp, MachineDeployments: []model.MachineDeployment{md}}
	}
	with := func(change func(s *model.ClusterState)) *Inputs {
		s := healthy()
		change(s)
		return &Inputs{State: s}
	}
	same := func(*model.ClusterState) {}
	// A Bundles of one Kubernetes version whose copy in the cluster
	// differs in n components.
	bundlesFile := func(n int) model.CheckResult {
		mine := map[string]string{}
		theirs := map[string]string{}
		for i := range n {
			k := fmt.Sprintf("component%d", i)
			mine[k], theirs[k] = "v1.0.0", "v1.0.1"
		}
		b := func(components map[string]string) *model.Bundles {
			return &model.Bundles{Name: "bundles-84", VersionsBundles: []model.VersionsBundle{{KubeVersion: "1.31", Components: components}}}
		}
		return checkBundlesFile(&Target{BundlesFile: "b.yaml", Bundles: b(mine), ClusterBundles: b(theirs),
			Release: &model.EKSARelease{Name: "eksa-v0-21-2", BundlesRefName: "bundles-84"}}, nil)
	}
	for _, tc := range []struct {
		name         string
		got          model.CheckResult
		status       model.CheckStatus
		message, fix string
	}{
		// checkEKSASkew's `cur == "" || tgt == ""` as &&: the unknown
		// target failed as an unreadable version, and blocked.
		{"eksa-version-skew, the target's version unknown",
			checkEKSASkew(ctx, &Inputs{Current: &Current{Cluster: &unstructured.Unstructured{Object: map[string]any{}}, EksaVersion: "v0.21.1"}, Target: &Target{}}),
			model.CheckWarn, "the current or target EKS-A version is unknown", "set spec.eksaVersion"},
		// checkManagement's `installed == "" || tgt == ""` as &&: "cannot
		// compare", with no fix.
		{"management-components, no annotation",
			checkManagement(ctx, &Inputs{Current: &Current{}, Target: &Target{EksaVersion: "v0.22.0"}}),
			model.CheckWarn, "the management components' version is unknown", "get deploy eksa-controller-manager"},
		{"generation-observed, healthy", checkGeneration(ctx, with(same)), model.CheckPass, "every object's status describes its current spec", ""},
		{"generation-observed, the control plane behind",
			checkGeneration(ctx, with(func(s *model.ClusterState) { s.ControlPlane.Generation = 5 })),
			model.CheckFail, "KubeadmControlPlane mgmt (generation 5, observed 4)", "wait for the running reconcile to finish"},
		{"generation-observed, a worker group behind",
			checkGeneration(ctx, with(func(s *model.ClusterState) { s.MachineDeployments[0].Generation = 6 })),
			model.CheckFail, "MachineDeployment mgmt-md-0 (generation 6, observed 5)", "wait for the running reconcile to finish"},
		// Waiting never ends while the EKS-A CLI holds the cluster.
		{"generation-observed, the EKS-A CLI holds the cluster",
			checkGeneration(ctx, with(func(s *model.ClusterState) {
				s.Cluster.Generation = 3
				s.Cluster.Annotations = map[string]string{model.AnnotationManagedByCLI: "true"}
			})),
			model.CheckFail, "Cluster mgmt (generation 3, observed 2)", "EKS-A will not report the last change observed while the EKS-A CLI holds the cluster"},
		{"etcd-ready, stacked", checkEtcd(ctx, with(same)), model.CheckPass, "stacked etcd", ""},
		{"etcd-ready, one external member not visible",
			checkEtcd(ctx, with(func(s *model.ClusterState) { s.Cluster.ExternalEtcdCount = 1 })),
			model.CheckFail, "the cluster has external etcd (1 members) but EtcdadmCluster mgmt-etcd is not visible", "etcdadm controller"},
		{"control-plane-ready, healthy", checkControlPlane(ctx, with(same)), model.CheckPass, "3/3 ready", ""},
		// No desired count reported yet: the Cluster's count stands in.
		{"control-plane-ready, desired not reported",
			checkControlPlane(ctx, with(func(s *model.ClusterState) {
				s.ControlPlane.Replicas.Desired, s.ControlPlane.Replicas.Ready = nil, ptr.To(int32(1))
			})),
			model.CheckFail, "KubeadmControlPlane mgmt: 1 of 3 replicas ready", "wait for the control plane to be ready"},
		{"workers-ready, healthy", checkWorkers(ctx, with(same)), model.CheckPass, "1 worker group(s) ready", ""},
		{"workers-ready, no MachineDeployment visible",
			checkWorkers(ctx, with(func(s *model.ClusterState) { s.MachineDeployments = nil })),
			model.CheckFail, "the cluster has 1 worker group(s) but no MachineDeployment is visible", "may list machinedeployments"},
		// No Node at all is not "all 0 nodes Ready".
		{"nodes-ready, no Node visible", checkNodes(ctx, with(same)), model.CheckWarn, "no Node objects visible", "points at the management cluster"},
		// At most three differences are listed; "and 0 more" is not one.
		{"target-release-present, three differences", bundlesFile(3), model.CheckFail, "component2: v1.0.0 here, v1.0.1 there", ""},
		{"target-release-present, four differences", bundlesFile(4), model.CheckFail, "component2: v1.0.0 here, v1.0.1 there and 1 more", ""},
	} {
		if tc.got.Status != tc.status || !strings.Contains(tc.got.Message, tc.message) || !strings.Contains(tc.got.Remediation, tc.fix) {
			t.Errorf("%s: %s %q, fix %q; want %s with %q, fix with %q", tc.name, tc.got.Status, tc.got.Message, tc.got.Remediation, tc.status, tc.message, tc.fix)
		}
		if strings.Contains(tc.got.Message, "and 0 more") {
			t.Errorf("%s: %q", tc.name, tc.got.Message)
		}
	}
}

// A console whose identity may read the cluster but not write it: the dry
// run is refused by authorization, and the fix says so, not "a field of the
// wrong type". The can-i it gives is of a refused kind: one that may patch
// Clusters but not machine configs was sent to check clusters.
func TestSpecAcceptedForbiddenNamesTheRights(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	user := "reader-" + w.ns
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{GVREKSACluster.Group}, Resources: []string{"clusters"}, Verbs: []string{"patch"}}}}
	if _, err := w.client.Kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}}}
	if _, err := w.client.Kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGranted(t, w.client.Kube, user, w.ns, GVREKSACluster.Group, "clusters", "get")
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.System = w.client.System
	planner := &Planner{Client: c, State: w.watcher, Self: w.planner.Self}
	p, err := planner.Plan(ctx, PlanRequest{Cluster: w.cfg.ClusterName, Namespace: w.ns, Spec: w.spec})
	if err != nil {
		t.Fatal(err)
	}
	r := result(p, CheckSpecAccepted)
	if r.Status != model.CheckFail || !strings.Contains(r.Message, "forbidden") || !strings.Contains(r.Remediation, "may not write these objects") {
		t.Errorf("spec-accepted %s %q, fix %q; want a failure whose fix names the rights", r.Status, r.Message, r.Remediation)
	}
	if strings.Contains(r.Message, "Cluster "+w.ns+"/") || !strings.Contains(r.Remediation, "auth can-i patch vsphere") ||
		!strings.Contains(r.Remediation, ".anywhere.eks.amazonaws.com -n "+w.ns+"`") {
		t.Errorf("spec-accepted %q, fix %q; want the Cluster accepted and the can-i of a refused machine or datacenter config", r.Message, r.Remediation)
	}
}

// A document of a kind the cluster does not serve (misspelt, or a provider
// not installed) is refused by the dry run, and the fix says to check the
// kind, not "a field of the wrong type".
func TestSpecAcceptedNamesAKindNotServed(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	spec := *w.spec
	odd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": GVREKSACluster.Group + "/v1alpha1", "kind": "VSphereMachineConfg",
		"metadata": map[string]any{"name": "mgmt-extra", "namespace": w.ns}}}
	spec.Docs = append(append([]*unstructured.Unstructured(nil), spec.Docs...), odd)
	p, err := w.planner.Plan(context.Background(), PlanRequest{Cluster: w.cfg.ClusterName, Namespace: w.ns, Spec: &spec})
	if err != nil {
		t.Fatal(err)
	}
	r := result(p, CheckSpecAccepted)
	if r.Status != model.CheckFail || !strings.Contains(r.Message, "VSphereMachineConfg") || !strings.Contains(r.Remediation, "kubectl api-resources") {
		t.Errorf("spec-accepted %s %q, fix %q; want a failure whose fix names the kind", r.Status, r.Message, r.Remediation)
	}
}

// An identity that may read the lock but not take it, or not save the
// snapshot, is told by the plan, with the rights to grant: it learned it from
// a refused write after the confirmation (exit 1, as bad input).
func TestApplyAccessCheck(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	if r := result(w.plan(t), CheckApplyAccess); r.Status != model.CheckPass {
		t.Fatalf("an admin: %+v", r)
	}
	// A user who may read Leases but write nothing in the system namespace.
	ctx := context.Background()
	user := "viewer-" + w.ns
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "lock-reader", Namespace: w.ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch"}}}}
	if _, err := w.client.Kube.RbacV1().Roles(w.ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "lock-reader", Namespace: w.ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "lock-reader"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: user}}}
	if _, err := w.client.Kube.RbacV1().RoleBindings(w.ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGranted(t, w.client.Kube, user, w.ns, "coordination.k8s.io", "leases", "get")
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	a := ReadApplyAccess(ctx, kubernetes.NewForConfigOrDie(cfg), w.ns, "mgmt")
	if a.Err != nil || len(a.Denied) != len(applyNeeds) || !strings.Contains(a.Denied[0], "create leases.coordination.k8s.io in "+w.ns+" (to take the upgrade lock)") {
		t.Fatalf("a lock reader: %+v", a)
	}
	r := checkApplyAccess(ctx, &Inputs{Access: a, System: w.ns})
	for _, want := range []string{"a Role in " + w.ns + " with the rules {apiGroups: [coordination.k8s.io], resources: [leases], verbs: [create]}, " +
		"{apiGroups: [coordination.k8s.io], resources: [leases], resourceNames: [upgrade-console-mgmt], verbs: [update, delete]}, " +
		`{apiGroups: [""], resources: [configmaps], verbs: [create]}`, "`kubectl auth can-i create leases.coordination.k8s.io -n " + w.ns + "`"} {
		if r.Status != model.CheckFail || !r.Blocking || !strings.Contains(r.Remediation, want) {
			t.Errorf("check for a lock reader: %+v\nwant its fix to name %s", r, want)
		}
	}
	if r := checkApplyAccess(ctx, &Inputs{Access: &ApplyAccess{Err: errors.New("forbidden")}}); r.Status != model.CheckWarn || r.Blocking {
		t.Errorf("unknown rights block: %+v", r)
	}
}

// The apply's snapshot reads the EtcdadmCluster, the KubeadmControlPlane
// and the MachineDeployments: an identity that may not list the
// MachineDeployments passed apply --dry-run (exit 0), and the apply then
// stopped at "snapshot: list MachineDeployments … forbidden". The plan says
// it, blocking, with the rule to grant.
func TestApplyAccessCheckAsksForTheSnapshotsReads(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	user := "no-machinedeployments-" + w.ns
	var rules []rbacv1.PolicyRule
	for _, g := range []string{"", "anywhere.eks.amazonaws.com", "controlplane.cluster.x-k8s.io", "etcdcluster.cluster.x-k8s.io",
		"bootstrap.cluster.x-k8s.io", "infrastructure.cluster.x-k8s.io", "apiextensions.k8s.io", "coordination.k8s.io"} {
		rules = append(rules, cptest.ReadOnly(g, "*"))
	}
	rules = append(rules, cptest.ReadOnly("cluster.x-k8s.io", "clusters", "machines", "machinesets", "machinehealthchecks"),
		rbacv1.PolicyRule{APIGroups: []string{"anywhere.eks.amazonaws.com"}, Resources: []string{"*"}, Verbs: []string{"patch"}},
		rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create", "update", "delete"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create"}})
	cptest.Grant(t, env.Config, user, "", rules...)
	c, err := NewClient(cptest.Impersonate(env.Config, user))
	if err != nil {
		t.Fatal(err)
	}
	c.System = w.client.System

	// What the check is for: the snapshot stops there.
	p := w.plan(t)
	if _, _, err := (&Snapshotter{Client: c, Audit: &memAudit{}, Dir: t.TempDir()}).Take(ctx, p.Current.Cluster, w.spec.Docs, "test", time.Now()); err == nil ||
		!strings.Contains(err.Error(), "snapshot: list MachineDeployments") {
		t.Fatalf("snapshot by %s: %v, want it refused the MachineDeployments", user, err)
	}

	planner := &Planner{Client: c, State: w.watcher, Self: w.planner.Self}
	p, err = planner.Plan(ctx, PlanRequest{Cluster: w.cfg.ClusterName, Namespace: w.ns, Spec: w.spec, Skips: []string{CheckWorkersReady}})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	r := result(p, CheckApplyAccess)
	want := "the console may not list machinedeployments.cluster.x-k8s.io in " + w.ns + " (to read the worker node groups for the pre-upgrade snapshot)"
	if r.Status != model.CheckFail || !r.Blocking || r.Message != want {
		t.Errorf("apply-access %s (blocking %t) %q\nwant a blocking failure %q", r.Status, r.Blocking, r.Message, want)
	}
	for _, fix := range []string{"{apiGroups: [cluster.x-k8s.io], resources: [machinedeployments], verbs: [list]}",
		"`kubectl auth can-i list machinedeployments.cluster.x-k8s.io -n " + w.ns + "`"} {
		if !strings.Contains(r.Remediation, fix) {
			t.Errorf("fix %q lacks %q", r.Remediation, fix)
		}
	}
	for _, b := range p.Blocking() {
		if b.Name != CheckApplyAccess {
			t.Errorf("%s blocks too: %s", b.Name, b.Message)
		}
	}
}

// waitGranted waits until RBAC, which the API server reads from a cache,
// grants user verb on resource: a request made at once could still be
// refused (the test then failed, now and then, on "access denied").
func waitGranted(t *testing.T, kube kubernetes.Interface, user, ns, group, resource, verb string) {
	t.Helper()
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Group: group, Resource: resource, Verb: verb}}}
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		return err == nil && got.Status.Allowed, nil
	}); err != nil {
		t.Fatalf("the grant to %s is not in effect: %v", user, err)
	}
}

// The live check reads the Cluster's failureReason: going back from an
// eksaVersion EKS-A refused is what its webhook allows, and the check
// blocked it; the skip annotation still turns any other failure into a
// warning.
func TestEKSASkewCheckReadsTheRefusedVersion(t *testing.T) {
	in := func(reason string, annotations map[string]string) *Inputs {
		c := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"failureReason": reason}}}
		c.SetAnnotations(annotations)
		return &Inputs{Current: &Current{Cluster: c, EksaVersion: "v0.22.0"}, Target: &Target{EksaVersion: "v0.21.2"}}
	}
	if r := checkEKSASkew(context.Background(), in(model.FailureReasonEksaVersionInvalid, nil)); r.Status != model.CheckWarn || r.Blocking {
		t.Errorf("back from a refused version: %+v", r)
	}
	if r := checkEKSASkew(context.Background(), in("ClusterInvalid", nil)); r.Status != model.CheckFail {
		t.Errorf("a downgrade with another failure: %+v", r)
	}
	skip := map[string]string{"anywhere.eks.amazonaws.com/skip-eksa-version-skew-check": "true"}
	if r := checkEKSASkew(context.Background(), in("", skip)); r.Status != model.CheckWarn || !strings.Contains(r.Message, "the Cluster's skip-eksa-version-skew-check annotation lets it through") {
		t.Errorf("skip annotation: %+v", r)
	}
	// EKS-A's webhook reads the object applied: the spec file's
	// annotation counts (it was refused), and its "false" wins over the
	// Cluster's "true".
	withSpec := func(live, file map[string]string) *Inputs {
		i := in("", live)
		spec := &unstructured.Unstructured{Object: map[string]any{}}
		spec.SetAnnotations(file)
		i.Target.Spec = &SpecFile{Path: "target.yaml", Cluster: spec}
		return i
	}
	if r := checkEKSASkew(context.Background(), withSpec(nil, skip)); r.Status != model.CheckWarn || !strings.Contains(r.Message, "the spec file's skip-eksa-version-skew-check") {
		t.Errorf("skip annotation in the spec file: %+v", r)
	}
	off := map[string]string{"anywhere.eks.amazonaws.com/skip-eksa-version-skew-check": "false"}
	if r := checkEKSASkew(context.Background(), withSpec(skip, off)); r.Status != model.CheckFail {
		t.Errorf("the spec file turns it off: %+v", r)
	}
}

// Fields EKS-A's CLI refuses to upgrade a cluster on: its webhook lets the
// CNI plugin through, so cilium → kindnetd planned "cilium unused" and exit
// 0 through the API. A field the file leaves out keeps the cluster's value.
func TestImmutableFields(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	plan := func(t *testing.T, edit func(spec map[string]any)) model.CheckResult {
		t.Helper()
		spec := w.spec.Cluster.DeepCopy()
		edit(spec.Object["spec"].(map[string]any))
		sf := &SpecFile{Path: "edited.yaml", Docs: []*unstructured.Unstructured{spec}, Cluster: spec}
		p, err := w.planner.Plan(ctx, PlanRequest{Cluster: w.cfg.ClusterName, Namespace: w.ns, Spec: sf})
		if err != nil {
			t.Fatal(err)
		}
		r := result(p, CheckImmutableFields)
		if r.Failed() && !p.Blocked() {
			t.Errorf("a failed %s does not block the plan", CheckImmutableFields)
		}
		return r
	}
	if r := plan(t, func(map[string]any) {}); r.Status != model.CheckPass {
		t.Errorf("the target spec: %+v", r)
	}
	for _, tc := range []struct {
		name string
		edit func(spec map[string]any)
		want string
	}{
		{"the CNI plugin", func(s map[string]any) {
			s["clusterNetwork"].(map[string]any)["cniConfig"] = map[string]any{"kindnetd": map[string]any{}}
		}, "spec.clusterNetwork.cniConfig cilium → kindnetd"},
		{"the endpoint", func(s map[string]any) {
			s["controlPlaneConfiguration"].(map[string]any)["endpoint"] = map[string]any{"host": "10.9.9.9"}
		}, "spec.controlPlaneConfiguration.endpoint.host"},
		{"the pod network", func(s map[string]any) {
			s["clusterNetwork"].(map[string]any)["pods"] = map[string]any{"cidrBlocks": []any{"10.99.0.0/16"}}
		}, "spec.clusterNetwork.pods"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := plan(t, tc.edit); r.Status != model.CheckFail || !strings.Contains(r.Message, tc.want) || !strings.Contains(r.Remediation, "edited.yaml") {
				t.Errorf("%+v, want a failure naming %q", r, tc.want)
			}
		})
	}
	t.Run("left out of the file", func(t *testing.T) {
		if r := plan(t, func(s map[string]any) { delete(s, "clusterNetwork") }); r.Status != model.CheckPass {
			t.Errorf("%+v", r)
		}
	})
	t.Run("mutable fields", func(t *testing.T) {
		if r := plan(t, func(s map[string]any) { s["controlPlaneConfiguration"].(map[string]any)["count"] = int64(5) }); r.Status != model.CheckPass {
			t.Errorf("%+v", r)
		}
	})
}

// A null mapping removes nothing under server-side apply (another
// manager's fields in it are kept, or the API server refuses it): the
// check read `proxyConfiguration:` left empty as the proxy removed, and
// blocked an apply that keeps it.
func TestImmutableFieldsNullMappingChangesNothing(t *testing.T) {
	obj := func(spec map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
		u.SetName("mgmt")
		u.SetNamespace("default")
		return u
	}
	live := obj(map[string]any{"proxyConfiguration": map[string]any{"httpProxy": "http://proxy:3128"},
		"clusterNetwork": map[string]any{"pods": map[string]any{"cidrBlocks": []any{"192.168.0.0/16"}}}})
	for _, null := range []string{"proxyConfiguration", "clusterNetwork"} {
		in := &Inputs{Current: &Current{Cluster: live}, Target: &Target{Spec: &SpecFile{Path: "cluster.yaml", Cluster: obj(map[string]any{null: nil})}}}
		if r := checkImmutable(context.Background(), in); r.Status != model.CheckPass {
			t.Errorf("%s: null: %+v", null, r)
		}
	}
}

// From v0.22.0 EKS-A fails a Cluster on a Kubernetes version past its end
// of standard support without a licenseToken, after the apply: the plan
// passed it.
func TestExtendedSupportNeedsALicenseToken(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	in := func(eksa, end, fileToken, liveToken string) *Inputs {
		live := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
		if liveToken != "" {
			live.Object["spec"].(map[string]any)["licenseToken"] = liveToken
		}
		file := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
		if fileToken != "" {
			file.Object["spec"].(map[string]any)["licenseToken"] = fileToken
		}
		b := &model.Bundles{VersionsBundles: []model.VersionsBundle{{KubeVersion: "1.28", EndOfStandardSupport: end}}}
		return &Inputs{Now: now, Current: &Current{Cluster: live, EksaVersion: "v0.21.2"},
			Target: &Target{EksaVersion: eksa, KubernetesVersion: "1.28", Bundles: b, Spec: &SpecFile{Path: "t.yaml", Cluster: file}}}
	}
	for _, tc := range []struct {
		name                       string
		eksa, end, fileTok, liveTk string
		want                       model.CheckStatus
		says                       string
	}{
		{"past, no token", "v0.22.1", "2025-11-26", "", "", model.CheckFail, "no licenseToken"},
		{"past, the file's token", "v0.22.1", "2025-11-26", "eyJ…", "", model.CheckPass, "the spec file's spec.licenseToken is set"},
		{"past, the Cluster's token kept", "v0.22.1", "2025-11-26", "", "eyJ…", model.CheckPass, "the Cluster's spec.licenseToken is set"},
		{"in standard support", "v0.22.1", "2026-12-31", "", "", model.CheckPass, "in standard support until 2026-12-31"},
		{"ends today", "v0.22.1", "2026-11-24", "", "", model.CheckPass, "in standard support"},
		{"before v0.22", "v0.21.2", "2025-11-26", "", "", model.CheckPass, "does not check"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := checkExtendedSupport(context.Background(), in(tc.eksa, tc.end, tc.fileTok, tc.liveTk))
			if r.Status != tc.want || !strings.Contains(r.Message, tc.says) {
				t.Errorf("%+v, want %s saying %q", r, tc.want, tc.says)
			}
		})
	}
}

// The live check judges the step against the target Bundles: with Bundles
// that stop at 1.32, a cluster on 1.32 was told to "upgrade to 1.33 first".
func TestKubeSkewCheckNamesWhatTheTargetBundlesShip(t *testing.T) {
	b := &model.Bundles{Name: "bundles-86", VersionsBundles: []model.VersionsBundle{{KubeVersion: "1.31"}, {KubeVersion: "1.32"}}}
	r := checkKubeSkew(context.Background(), &Inputs{Current: &Current{KubernetesVersion: "1.32"}, Target: &Target{KubernetesVersion: "1.34", Bundles: b}})
	if r.Status != model.CheckFail || strings.Contains(r.Remediation, "upgrade to 1.33 first, then") ||
		!strings.Contains(r.Remediation, "Bundles bundles-86 ships no Kubernetes 1.33") {
		t.Errorf("%s, fix %q: want a failure whose fix says the Bundles ship no 1.33", r.Status, r.Remediation)
	}
}

// Fields another manager than the EKS-A CLI owns (a GitOps controller)
// are taken over only if it will not put them back: the fix said to take
// them over whoever owned them.
func TestSpecAcceptedConflictsOfAnotherManager(t *testing.T) {
	in := func(managers ...string) *Inputs {
		var c []FieldConflict
		for _, m := range managers {
			c = append(c, FieldConflict{Object: "Cluster default/mgmt", Field: ".spec.kubernetesVersion", Manager: m})
		}
		spec := &unstructured.Unstructured{}
		return &Inputs{Target: &Target{Spec: &SpecFile{Path: "s.yaml", Cluster: spec},
			SpecDryRun: &DryRunResult{Objects: []ObjectChange{{Object: "Cluster default/mgmt"}}, Conflicts: c}}}
	}
	r := checkSpecAccepted(context.Background(), in("kustomize-controller", "eks-a-cli"))
	if r.Status != model.CheckWarn || !strings.Contains(r.Message, "owned by kustomize-controller, eks-a-cli") ||
		!strings.HasPrefix(r.Remediation, "take them over only if their manager (a GitOps controller, say) will not put them back") {
		t.Errorf("another manager: %s %q, fix %q", r.Status, r.Message, r.Remediation)
	}
	if r := checkSpecAccepted(context.Background(), in("eks-a-cli")); !strings.HasPrefix(r.Remediation, "take them over: `apply --force-conflicts`") {
		t.Errorf("the EKS-A CLI's: fix %q", r.Remediation)
	}
}

// A spec the cluster's admission control denies (EKS-A's webhook refusing a
// version skew, a policy) is not fixed by another value of the field nor by
// other rights: the fix says so, where it said to correct a field of the
// wrong type (D11).
func TestSpecAcceptedDeniedByAdmissionSaysAnotherPath(t *testing.T) {
	spec := &unstructured.Unstructured{}
	in := &Inputs{Target: &Target{Spec: &SpecFile{Path: "s.yaml", Cluster: spec},
		SpecDryRun: &DryRunResult{Objects: []ObjectChange{{Object: "Cluster default/mgmt", Denied: true,
			Error: `admission webhook "validation.cluster.anywhere.amazonaws.com" denied the request: spec: Invalid value: "1.33": only +1 minor version skew is supported`}}}}}
	r := checkSpecAccepted(context.Background(), in)
	if r.Status != model.CheckFail || !strings.Contains(r.Remediation, "does not allow this change") || strings.Contains(r.Remediation, "wrong type") {
		t.Errorf("%s, fix %q: want a failure whose fix names another path", r.Status, r.Remediation)
	}
}
