package sim_test

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/upgrade-console/upgrade-console/demo"
	"github.com/upgrade-console/upgrade-console/demo/kinds"
	"github.com/upgrade-console/upgrade-console/demo/objects"
	"github.com/upgrade-console/upgrade-console/demo/release"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/demo/seed"
	"github.com/upgrade-console/upgrade-console/model"
)

// A change of one worker group's machine config alone (the Cluster's
// generation unchanged) is reconciled as EKS-A reconciles it: the group's
// MachineDeployment gets a new machine template, CAPI replaces its machines,
// the other groups are left alone, WorkersReady is False while they roll, and
// only then does status.childrenReconciledGeneration reach the new sum of the
// child objects' generations.
func TestWorkerMachineConfigChangeRollsItsGroup(t *testing.T) {
	w := startWorld(t, scenario.Rolling, "mcroll")
	w.waitFor("the seeded cluster to be complete", func() bool { return complete(w.cluster()) })
	w.settle()
	group := w.sc.Workers[0]
	mdName := w.sc.ClusterName + "-" + group.Name
	before := w.templates()
	oldMachines := names(w.machines(model.LabelDeploymentName + "=" + mdName))
	others := names(w.machines(model.LabelClusterName + "=" + w.sc.ClusterName + ",!" + model.LabelDeploymentName))
	children := i64(w.cluster(), "status", "childrenReconciledGeneration")
	gen := w.cluster().GetGeneration()

	// The operator applies the whole spec file with the one change, as
	// `apply` does: every document is applied (each a write), the provider
	// documents before the Cluster.
	w.applyCurrentSpecWith(func(doc *unstructured.Unstructured) {
		if doc.GetKind() == "VSphereMachineConfig" && doc.GetName() == w.sc.ClusterName+"-"+group.Name {
			_ = unstructured.SetNestedField(doc.Object, int64(65536), "spec", "memoryMiB")
		}
	})
	want := w.childrenSum()
	if want != children+1 {
		t.Fatalf("sum of the children's generations %d after the change, want %d", want, children+1)
	}

	w.waitFor("the group to roll and the children to be reconciled", func() bool {
		cl := w.cluster()
		if !complete(cl) || i64(cl, "status", "childrenReconciledGeneration") != want {
			return false
		}
		ms := w.machines(model.LabelDeploymentName + "=" + mdName)
		tmpl := w.templates()[mdName]
		for _, m := range ms {
			if m.GetAnnotations()[objects.AnnotationSimTemplate] != tmpl || str(&m, "status", "phase") != objects.PhaseRunning {
				return false
			}
		}
		return len(ms) == group.Count
	})

	after := w.templates()
	t.Run("a new template for the changed group only", func(t *testing.T) {
		if after[mdName] == before[mdName] || !strings.HasPrefix(after[mdName], objects.WorkerTemplatePrefix(mdName)+"-") {
			t.Errorf("MachineDeployment %s template %q (before %q), want a new %s-<unix seconds>", mdName, after[mdName], before[mdName], mdName)
		}
		for owner, tmpl := range before {
			if owner != mdName && after[owner] != tmpl {
				t.Errorf("%s template changed from %s to %s: its machine config did not change", owner, tmpl, after[owner])
			}
		}
		md := w.get(kinds.MachineDeployment, mdName)
		if v := str(md, "spec", "template", "spec", "version"); v != w.machineVersion() {
			t.Errorf("MachineDeployment version %s, want it unchanged (%s)", v, w.machineVersion())
		}
		if cl := w.cluster(); cl.GetGeneration() != gen {
			t.Errorf("Cluster generation %d, want it unchanged (%d)", cl.GetGeneration(), gen)
		}
	})

	t.Run("its machines replaced, no other", func(t *testing.T) {
		now := names(w.machines(model.LabelDeploymentName + "=" + mdName))
		for n := range oldMachines {
			if now[n] {
				t.Errorf("machine %s of the old template is still there", n)
			}
		}
		if got := names(w.machines(model.LabelClusterName + "=" + w.sc.ClusterName + ",!" + model.LabelDeploymentName)); !equalSets(got, others) {
			t.Errorf("etcd and control plane machines changed: %v, before %v", sorted(got), sorted(others))
		}
		for _, other := range w.sc.Workers[1:] {
			md := w.sc.ClusterName + "-" + other.Name
			for _, m := range w.machines(model.LabelDeploymentName + "=" + md) {
				if tmpl := m.GetAnnotations()[objects.AnnotationSimTemplate]; tmpl != before[md] {
					t.Errorf("machine %s of %s on template %s, want %s", m.GetName(), md, tmpl, before[md])
				}
			}
		}
	})

	t.Run("conditions honest while rolling", func(t *testing.T) {
		h := w.snapshot()
		lastGone, firstReconciled := -1, -1
		sawRolling := false
		for _, o := range h {
			switch o.res {
			case "machines":
				if o.deleted && oldMachines[o.obj.GetName()] {
					lastGone = o.seq
				}
			case "clusters":
				if c := cond(o.obj, "WorkersReady"); c != nil && c["status"] == "False" && c["reason"] == "RollingUpgradeInProgress" {
					sawRolling = true
				}
				if i64(o.obj, "status", "childrenReconciledGeneration") == want && firstReconciled < 0 {
					firstReconciled = o.seq
					if !isTrue(o.obj, "WorkersReady") || !isTrue(o.obj, "Ready") {
						t.Errorf("#%d: childrenReconciledGeneration %d written with a cluster not ready: %v", o.seq, want, o.obj.Object["status"])
					}
				}
			}
		}
		if !sawRolling {
			t.Error("WorkersReady never went False (RollingUpgradeInProgress) while the group rolled")
		}
		if lastGone < 0 || firstReconciled < lastGone {
			t.Errorf("childrenReconciledGeneration reached %d at #%d, before the last old machine was gone at #%d", want, firstReconciled, lastGone)
		}
	})
}

// A change of the datacenter config that reaches no machine (insecure) is
// reconciled without rolling anything: childrenReconciledGeneration moves to
// the new sum and every machine stays.
func TestDatacenterConfigChangeIsReconciledWithoutRolling(t *testing.T) {
	w := startWorld(t, scenario.Rolling, "dcchange")
	w.waitFor("the seeded cluster to be complete", func() bool { return complete(w.cluster()) })
	w.settle()
	before := w.templates()
	machines := names(w.machines(model.LabelClusterName + "=" + w.sc.ClusterName))
	children := i64(w.cluster(), "status", "childrenReconciledGeneration")

	w.patchSpec(kinds.VSphereDatacenterConfig, w.sc.ClusterName, map[string]any{"insecure": true})
	want := w.childrenSum()
	if want != children+1 {
		t.Fatalf("sum of the children's generations %d after the change, want %d", want, children+1)
	}
	w.waitFor("the datacenter config change to be reconciled", func() bool {
		cl := w.cluster()
		return complete(cl) && i64(cl, "status", "childrenReconciledGeneration") == want
	})
	dc := w.getIn(kinds.VSphereDatacenterConfig, w.sc.ClusterNamespace, w.sc.ClusterName)
	if og := i64(dc, "status", "observedGeneration"); og != dc.GetGeneration() || !flagOf(dc, "status", "specValid") {
		t.Errorf("datacenter config status %v for generation %d", dc.Object["status"], dc.GetGeneration())
	}
	// Nothing rolls afterwards either.
	w.holds("no machine rolled", 2*time.Second, func() bool {
		return equalSets(names(w.machines(model.LabelClusterName+"="+w.sc.ClusterName)), machines) && equalMaps(w.templates(), before)
	})
	for _, o := range w.snapshot() {
		if o.res == "clusters" && !isTrue(o.obj, "Ready") {
			t.Errorf("#%d: the Cluster went not Ready for a change that rolls nothing: %v", o.seq, o.obj.Object["status"])
			break
		}
	}
}

// Control plane and etcd machine config changes roll those groups: etcd
// first with the control plane paused, then the control plane.
func TestControlPlaneAndEtcdMachineConfigChangesRollThem(t *testing.T) {
	w := startWorld(t, scenario.Rolling, "mccpetcd")
	w.waitFor("the seeded cluster to be complete", func() bool { return complete(w.cluster()) })
	w.settle()
	before := w.templates()
	etcdName, cp := w.sc.ClusterName+"-etcd", w.sc.ClusterName
	oldEtcd := names(w.machines(model.LabelEtcdCluster + "=" + etcdName))
	oldCP := names(w.machines(model.LabelControlPlaneName + "=" + cp))
	workers := names(w.machines(model.LabelDeploymentName))

	w.patchSpec(kinds.VSphereMachineConfig, w.sc.ClusterName+"-etcd", map[string]any{"numCPUs": int64(4)})
	w.patchSpec(kinds.VSphereMachineConfig, w.sc.ClusterName+"-cp", map[string]any{"diskGiB": int64(80)})
	want := w.childrenSum()

	w.waitFor("etcd and the control plane to roll", func() bool {
		cl := w.cluster()
		if !complete(cl) || i64(cl, "status", "childrenReconciledGeneration") != want {
			return false
		}
		tmpl := w.templates()
		for sel, owner := range map[string]string{model.LabelEtcdCluster + "=" + etcdName: etcdName, model.LabelControlPlaneName + "=" + cp: cp} {
			ms := w.machines(sel)
			if len(ms) != 3 {
				return false
			}
			for _, m := range ms {
				if m.GetAnnotations()[objects.AnnotationSimTemplate] != tmpl[owner] {
					return false
				}
			}
		}
		return true
	})
	after := w.templates()
	for _, owner := range []string{etcdName, cp} {
		if after[owner] == before[owner] {
			t.Errorf("%s kept template %s", owner, before[owner])
		}
	}
	for _, wg := range w.sc.Workers {
		md := w.sc.ClusterName + "-" + wg.Name
		if after[md] != before[md] {
			t.Errorf("%s template changed to %s", md, after[md])
		}
	}
	if got := names(w.machines(model.LabelDeploymentName)); !equalSets(got, workers) {
		t.Errorf("workers changed: %v, before %v", sorted(got), sorted(workers))
	}
	for n := range oldEtcd {
		if w.get(kinds.Machine, n) != nil {
			t.Errorf("old etcd member %s left behind", n)
		}
	}
	for n := range oldCP {
		if w.get(kinds.Machine, n) != nil {
			t.Errorf("old control plane machine %s left behind", n)
		}
	}
	kcp := w.get(kinds.KCP, cp)
	if kcp.GetAnnotations()[model.AnnotationCAPIPaused] != "" {
		t.Error("KCP left paused")
	}
	ec := w.get(kinds.EtcdadmCluster, etcdName)
	if a := ec.GetAnnotations(); a[model.AnnotationEtcdUpgrading] != "" || a[model.AnnotationEtcdUpgradeComplete] != "" {
		t.Errorf("etcd annotations left behind: %v", a)
	}
	// A new etcd member joins only while the control plane is paused.
	var paused bool
	for _, o := range w.snapshot() {
		switch {
		case o.res == "kubeadmcontrolplanes":
			paused = o.obj.GetAnnotations()[model.AnnotationCAPIPaused] == "true"
		case o.res == "machines" && !o.deleted && o.obj.GetLabels()[model.LabelEtcdCluster] != "" && !oldEtcd[o.obj.GetName()] &&
			o.obj.GetLabels()[model.LabelEtcdReady] != "true" && !paused:
			t.Fatalf("#%d: new etcd member %s joining while the KCP is not paused", o.seq, o.obj.GetName())
		}
	}
}

// A machine config whose VM template is not for the group's Kubernetes
// version fails EKS-A's validation: nothing rolls, the failure is reported
// (MachineConfigInvalid), and fixing the machine config clears it.
func TestMachineConfigWithATemplateForAnotherVersionIsRejected(t *testing.T) {
	w := startWorld(t, scenario.Rolling, "mcbad")
	w.waitFor("the seeded cluster to be complete", func() bool { return complete(w.cluster()) })
	w.settle()
	before := w.templates()
	mc := w.getIn(kinds.VSphereMachineConfig, w.sc.ClusterNamespace, w.sc.ClusterName+"-cp")
	good := str(mc, "spec", "template")
	bad := strings.Replace(good, "kube-1.30", "kube-1.31", 1)
	if bad == good {
		t.Fatalf("seeded template %s does not name 1.30", good)
	}
	w.patchSpec(kinds.VSphereMachineConfig, mc.GetName(), map[string]any{"template": bad})
	w.waitFor("the failure to be reported", func() bool {
		return str(w.cluster(), "status", "failureReason") == "MachineConfigInvalid"
	})
	if m := str(w.cluster(), "status", "failureMessage"); !strings.Contains(m, bad) || !strings.Contains(m, "missing tag eksdRelease:") {
		t.Errorf("failureMessage %q", m)
	}
	if after := w.templates(); !equalMaps(after, before) {
		t.Errorf("templates changed on an invalid machine config: %v, before %v", after, before)
	}
	w.patchSpec(kinds.VSphereMachineConfig, mc.GetName(), map[string]any{"template": good})
	want := w.childrenSum()
	w.waitFor("the fix to clear the failure", func() bool {
		cl := w.cluster()
		return complete(cl) && str(cl, "status", "failureMessage") == "" && i64(cl, "status", "childrenReconciledGeneration") == want
	})
	// Back to the spec of the current template: nothing to roll.
	if after := w.templates(); !equalMaps(after, before) {
		t.Errorf("templates changed: %v, before %v", after, before)
	}
}

// In an in-place world a machine config change is reconciled too: the
// group's MachineDeployment gets its new template and the Cluster reports the
// children reconciled. The demo's in-place upgrader changes Kubernetes
// versions only, so the machines stay (see Simulator.notUpToDate).
func TestInPlaceWorldMachineConfigChangeIsReconciled(t *testing.T) {
	w := startWorld(t, scenario.InPlace, "mcinpl")
	w.waitFor("the seeded cluster to be complete", func() bool { return complete(w.cluster()) })
	w.settle()
	group := w.sc.Workers[0]
	mdName := w.sc.ClusterName + "-" + group.Name
	before := w.templates()
	machines := names(w.machines(model.LabelClusterName + "=" + w.sc.ClusterName))

	w.patchSpec(kinds.VSphereMachineConfig, w.sc.ClusterName+"-"+group.Name, map[string]any{"numCPUs": int64(16)})
	want := w.childrenSum()
	w.waitFor("the change to be reconciled", func() bool {
		cl := w.cluster()
		return complete(cl) && i64(cl, "status", "childrenReconciledGeneration") == want
	})
	if after := w.templates(); after[mdName] == before[mdName] {
		t.Errorf("MachineDeployment %s kept template %s", mdName, before[mdName])
	}
	if got := names(w.machines(model.LabelClusterName + "=" + w.sc.ClusterName)); !equalSets(got, machines) {
		t.Errorf("machines changed: %v, before %v", sorted(got), sorted(machines))
	}
	md := w.get(kinds.MachineDeployment, mdName)
	if md.GetAnnotations()[model.AnnotationMDInPlaceUpgradeNeeded] != "" {
		t.Errorf("in-place upgrade marked on %s for a machine config change", mdName)
	}
}

// ---- helpers ----

// applyCurrentSpecWith applies the spec file of the seeded world after edit
// changed its documents, as the scripted operator applies one.
func (w *world) applyCurrentSpecWith(edit func(*unstructured.Unstructured)) {
	w.t.Helper()
	var b strings.Builder
	for i, d := range append([]*unstructured.Unstructured{seed.ClusterSpec(w.sc, release.Current.Version, seed.CurrentKube)}, seed.ProviderSpecs(w.sc, seed.CurrentKube)...) {
		edit(d)
		y, err := yaml.Marshal(d.Object)
		if err != nil {
			w.t.Fatal(err)
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(y)
	}
	if err := demo.ApplySpec(w.ctx, w.cfg, []byte(b.String())); err != nil {
		w.t.Fatal(err)
	}
}

// patchSpec merges spec fields into a provider object of the cluster's
// namespace, as an operator's apply of a changed document does.
func (w *world) patchSpec(gvr schema.GroupVersionResource, name string, spec map[string]any) {
	w.t.Helper()
	data, err := json.Marshal(map[string]any{"spec": spec})
	if err != nil {
		w.t.Fatal(err)
	}
	if _, err := w.dyn.Resource(gvr).Namespace(w.sc.ClusterNamespace).Patch(w.ctx, name, types.MergePatchType, data, metav1.PatchOptions{FieldManager: "test"}); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) getIn(gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	w.t.Helper()
	u, err := w.dyn.Resource(gvr).Namespace(ns).Get(w.ctx, name, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return u
}

// childrenSum is EKS-A's aggregatedGeneration of the Cluster: the sum of the
// generations of its datacenter config and of each machine config.
func (w *world) childrenSum() int64 {
	w.t.Helper()
	var sum int64
	for _, gvr := range []schema.GroupVersionResource{kinds.VSphereDatacenterConfig, kinds.VSphereMachineConfig} {
		l, err := w.dyn.Resource(gvr).Namespace(w.sc.ClusterNamespace).List(w.ctx, metav1.ListOptions{})
		if err != nil {
			w.t.Fatal(err)
		}
		for _, u := range l.Items {
			sum += u.GetGeneration()
		}
	}
	return sum
}

// templates maps each machine owner (EtcdadmCluster, KCP, MachineDeployment)
// to the machine template it refers to.
func (w *world) templates() map[string]string {
	out := map[string]string{}
	if ec := w.get(kinds.EtcdadmCluster, w.sc.ClusterName+"-etcd"); ec != nil {
		out[ec.GetName()] = str(ec, "spec", "infrastructureTemplate", "name")
	}
	if kcp := w.get(kinds.KCP, w.sc.ClusterName); kcp != nil {
		out[kcp.GetName()] = str(kcp, "spec", "machineTemplate", "spec", "infrastructureRef", "name")
	}
	for _, wg := range w.sc.Workers {
		if md := w.get(kinds.MachineDeployment, w.sc.ClusterName+"-"+wg.Name); md != nil {
			out[md.GetName()] = str(md, "spec", "template", "spec", "infrastructureRef", "name")
		}
	}
	return out
}

// machineVersion is the version the seeded control plane runs.
func (w *world) machineVersion() string {
	return str(w.get(kinds.KCP, w.sc.ClusterName), "spec", "version")
}

func names(ms []unstructured.Unstructured) map[string]bool {
	out := map[string]bool{}
	for _, m := range ms {
		out[m.GetName()] = true
	}
	return out
}

func equalSets(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func sorted(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func flagOf(u *unstructured.Unstructured, path ...string) bool {
	v, _, _ := unstructured.NestedBool(u.Object, path...)
	return v
}
