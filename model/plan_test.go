package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func checkStatuses(p *Plan) map[string]CheckStatus {
	m := map[string]CheckStatus{}
	for _, r := range p.Preflight {
		m[r.Name] = r.Status
	}
	return m
}

func TestBuildPlan(t *testing.T) {
	a, b := parseFixture(t, "bundles-2024-11.yaml"), parseFixture(t, "bundles-2025-03.yaml")
	p, err := BuildPlan(PlanInput{Current: a, Target: b, CurrentKube: "1.30", TargetKube: "1.31"})
	if err != nil {
		t.Fatal(err)
	}
	diffRows(t, p.Components, append(slices.Clone(realDiff), fixtureImages...))
	if len(p.Changed()) != 15 {
		t.Errorf("Changed() = %d rows, want 15", len(p.Changed()))
	}
	want := map[string]CheckStatus{
		CheckNameTargetKubernetesKnown: CheckPass,
		CheckNameKubernetesVersionSkew: CheckPass,
		CheckNameEKSAVersionSkew:       CheckSkipped, // the fixtures ship a development build of EKS-A
	}
	if got := checkStatuses(p); len(got) != len(want) || got[CheckNameTargetKubernetesKnown] != CheckPass ||
		got[CheckNameKubernetesVersionSkew] != CheckPass || got[CheckNameEKSAVersionSkew] != CheckSkipped {
		t.Errorf("preflight = %v, want %v", got, want)
	}
	if p.Blocked() {
		t.Error("plan is blocked")
	}
}

func TestBuildPlanLiveInputs(t *testing.T) {
	a, b := parseFixture(t, "bundles-2024-11.yaml"), parseFixture(t, "bundles-2025-03.yaml")
	p, err := BuildPlan(PlanInput{Current: a, Target: b, CurrentKube: "1.30", TargetKube: "1.31",
		CurrentEKSA: "v0.20.3", TargetEKSA: "v0.22.0",
		WorkerGroups: []WorkerGroup{{Name: "md-0", KubernetesVersion: "1.29"}}})
	if err != nil {
		t.Fatal(err)
	}
	got := checkStatuses(p)
	if got[CheckNameEKSAVersionSkew] != CheckFail || got[CheckNameWorkerVersionSkew] != CheckWarn || !p.Blocked() {
		t.Errorf("preflight = %v, blocked %v; want eksa fail (v0.20 → v0.22), worker warn, blocked", got, p.Blocked())
	}
}

// A worker group pinned to a version the target Bundles have no bundle for:
// EKS-A fails the upgrade after the apply, so the plan blocks, naming the
// group, while the control plane's rows are still planned.
func TestBuildPlanWorkerPinnedToAnUnknownVersion(t *testing.T) {
	a, b := parseFixture(t, "bundles-2024-11.yaml"), parseFixture(t, "bundles-2025-03.yaml")
	in := PlanInput{Current: a, Target: b, CurrentKube: "1.30", TargetKube: "1.31",
		WorkerGroups: []WorkerGroup{{Name: "md-0"}, {Name: "md-1", KubernetesVersion: "1.29"}}}
	p, err := BuildPlan(in)
	if err != nil {
		t.Fatal(err)
	}
	r := p.Preflight[0]
	if r.Name != CheckNameTargetKubernetesKnown || r.Status != CheckFail || !p.Blocked() ||
		!strings.Contains(r.Message, "worker group md-1 is pinned to Kubernetes 1.29") || strings.Contains(r.Message, "md-0") ||
		!strings.Contains(r.Remediation, "md-1 to one of 1.30, 1.31, 1.32") {
		t.Errorf("target-kubernetes-known = %+v, blocked %v", r, p.Blocked())
	}
	for _, d := range p.Components {
		if d.Key == "kubernetes" && (d.Change == ChangeUnknown || d.NewVersion == "") {
			t.Errorf("the control plane's kubernetes row is not planned: %+v", d)
		}
	}
	in.WorkerGroups[1].KubernetesVersion = "1.30"
	if p, err := BuildPlan(in); err != nil || p.Preflight[0].Status != CheckPass {
		t.Errorf("pinned to a version the Bundles carry: %v, %+v", err, p.Preflight[0])
	}
}

// A worker group pinned to its own Kubernetes version runs the EKS-D of
// that version's bundle: a new release rebuilds it, and those nodes are
// replaced too, which the control plane's row alone did not show.
func TestBuildPlanWorkerGroupsOwnKubernetesRows(t *testing.T) {
	a, b := parseFixture(t, "bundles-2024-11.yaml"), parseFixture(t, "bundles-2025-03.yaml")
	eksd := func(bs *Bundles, kube string) string {
		vb, err := bs.ForKubernetes(kube)
		if err != nil {
			t.Fatal(err)
		}
		return vb.Version(KeyKubernetes)
	}
	p, err := BuildPlan(PlanInput{Current: a, Target: b, CurrentKube: "1.30", TargetKube: "1.31",
		WorkerGroups: []WorkerGroup{{Name: "md-0"}, {Name: "md-1", KubernetesVersion: "1.30"},
			{Name: "md-2", KubernetesVersion: "1.30"}, {Name: "md-3", KubernetesVersion: "1.31", Was: "1.30"},
			{Name: "md-4", Was: "1.29", WasPinned: true}}})
	if err != nil {
		t.Fatal(err)
	}
	var kube []ComponentDiff
	for i, d := range p.Components {
		if d.Key == KeyKubernetes {
			kube = append(kube, d)
			if len(kube) == 1 && (i+2 >= len(p.Components) || p.Components[i+1].Key != KeyKubernetes) {
				t.Errorf("the worker rows do not follow the control plane's: %+v", p.Components)
			}
		}
	}
	want := []ComponentDiff{
		{Key: KeyKubernetes, Name: "kubernetes (EKS-D)", OldVersion: eksd(a, "1.30"), NewVersion: eksd(b, "1.31"), Change: ChangeMinor},
		{Key: KeyKubernetes, Name: "kubernetes (EKS-D) for md-1, md-2", OldVersion: eksd(a, "1.30"), NewVersion: eksd(b, "1.30"),
			Change: Classify(eksd(a, "1.30"), eksd(b, "1.30")), WorkerGroups: []string{"md-1", "md-2"}},
		{Key: KeyKubernetes, Name: "kubernetes (EKS-D) for md-4", OldVersion: eksd(a, "1.29"), NewVersion: eksd(b, "1.31"),
			Change: ChangeMinor, WorkerGroups: []string{"md-4"}},
	}
	if !reflect.DeepEqual(kube, want) || want[1].Change != ChangePatch {
		t.Errorf("kubernetes rows:\n got %+v\nwant %+v", kube, want)
	}
	// A group pinned to a version the target Bundles lack: what its nodes
	// get is not known, which "removed" would not say.
	rows := WorkerKubernetesRows(a, b, "1.30", "1.31", []WorkerGroup{{Name: "md-5", KubernetesVersion: "1.29", Was: "1.29"}})
	if len(rows) != 1 || rows[0].OldVersion != eksd(a, "1.29") || rows[0].NewVersion != "" || rows[0].Change != ChangeUnknown {
		t.Errorf("a group pinned to 1.29, which the target lacks: %+v, want its current EKS-D and the change unknown", rows)
	}
	// Offline, with no groups known, the control plane's row stands alone.
	p, err = BuildPlan(PlanInput{Current: a, Target: b, CurrentKube: "1.30", TargetKube: "1.31"})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range p.Components {
		if d.WorkerGroups != nil {
			t.Errorf("a worker row without worker groups: %+v", d)
		}
	}
}

func TestBuildPlanTargetUnknown(t *testing.T) {
	b, c := parseFixture(t, "bundles-2025-03.yaml"), parseFixture(t, "bundles-synthetic-next.yaml")
	p, err := BuildPlan(PlanInput{Current: b, Target: c, CurrentKube: "1.32", TargetKube: "1.33"})
	if err != nil {
		t.Fatal(err)
	}
	if got := checkStatuses(p); got[CheckNameTargetKubernetesKnown] != CheckFail || got[CheckNameKubernetesVersionSkew] != CheckPass || !p.Blocked() {
		t.Errorf("preflight = %v; want target-kubernetes-known to fail and block", got)
	}
	// Per-Kubernetes rows cannot be planned: each is kept, with the current
	// version and the change "unknown", never left out (the summary would
	// then read as if kubernetes stayed put) nor shown as removed.
	unknown := map[string]bool{}
	for _, d := range p.Components {
		mgmt := LookupComponent(d.Key).Management
		if !mgmt && (d.Change != ChangeUnknown || d.OldVersion == "" || d.NewVersion != "") {
			t.Errorf("per-Kubernetes row %+v, want the current version and change unknown", d)
		}
		if mgmt && d.Change == ChangeUnknown {
			t.Errorf("management row %+v reads as unknown", d)
		}
		if d.Change == ChangeRemoved && d.Key != "snow" {
			t.Errorf("row %+v reads as removed", d)
		}
		if d.Change == ChangeUnknown {
			unknown[d.Key] = true
		}
	}
	for _, k := range []string{KeyKubernetes, "cilium", "packageController", "upgrader.upgrader", "bottlerocketHostContainers.admin"} {
		if !unknown[k] {
			t.Errorf("no unknown row for %s", k)
		}
	}
	if len(p.Components) != 20 {
		t.Errorf("%d rows, want 14 management, 4 per-Kubernetes and 2 images", len(p.Components))
	}
	if s := SummarizeChanges(p.Components); !strings.Contains(s, "; 6 unknown (the target Bundles lack the Kubernetes version they are for)") {
		t.Errorf("summary %q does not count the unknown rows", s)
	}
}

func TestBuildPlanCurrentUnknownIsBadInput(t *testing.T) {
	a, b := parseFixture(t, "bundles-2024-11.yaml"), parseFixture(t, "bundles-2025-03.yaml")
	_, err := BuildPlan(PlanInput{Current: a, Target: b, CurrentKube: "1.32", TargetKube: "1.32"})
	var ie *InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "bundles-2024-11.yaml") || !strings.Contains(err.Error(), "1.29, 1.30, 1.31") {
		t.Errorf("err = %v", err)
	}
	for _, in := range []PlanInput{{Target: b, CurrentKube: "1.30"}, {Current: a, CurrentKube: "1.30"}} {
		if _, err := BuildPlan(in); !errors.As(err, &ie) || ie.Fix == "" {
			t.Errorf("BuildPlan with a nil side: err = %v, want *InputError with a fix", err)
		}
	}
	// Bundles without versions bundles (built, not parsed: ParseBundles
	// refuses them) are named with the field and a fix.
	empty := &Bundles{Name: "bundles-9", Source: "empty.yaml"}
	for _, in := range []PlanInput{{Current: empty, Target: b, CurrentKube: "1.30"}, {Current: a, Target: empty, CurrentKube: "1.30"}} {
		if _, err := BuildPlan(in); !errors.As(err, &ie) || ie.Source != "empty.yaml (bundles-9)" || ie.Field != "spec.versionsBundles" || ie.Fix == "" {
			t.Errorf("BuildPlan with an empty side: err = %#v", err)
		}
	}
}

// The JSON field names are the contract `plan -o json` scripts rely on.
func TestPlanJSONContract(t *testing.T) {
	p := &Plan{
		Components: []ComponentDiff{{Key: "cilium", Name: "cilium", OldVersion: "v1.19.4-1", NewVersion: "v1.19.4-2", Change: ChangeRebuild}},
		Preflight:  []CheckResult{{Name: "kubernetes-version-skew", Status: CheckPass, Message: "ok"}},
	}
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"components":[{"key":"cilium","name":"cilium","oldVersion":"v1.19.4-1","newVersion":"v1.19.4-2","change":"rebuild"}],` +
		`"preflight":[{"name":"kubernetes-version-skew","status":"pass","message":"ok","remediation":""}]}`
	if string(data) != want {
		t.Errorf("JSON =\n%s\nwant\n%s", data, want)
	}

	// An image row adds the references its tags come from; a side that
	// lacks the image has none.
	img := ComponentDiff{Key: "upgrader.upgrader", Name: "in-place upgrader image", NewVersion: "v1-31-16-eks-a-1", Change: ChangeAdded,
		NewImage: "registry.example/eks-anywhere/upgrader:v1-31-16-eks-a-1"}
	data, err = json.Marshal(img)
	if err != nil {
		t.Fatal(err)
	}
	want = `{"key":"upgrader.upgrader","name":"in-place upgrader image","oldVersion":"","newVersion":"v1-31-16-eks-a-1","change":"added",` +
		`"newImage":"registry.example/eks-anywhere/upgrader:v1-31-16-eks-a-1"}`
	if string(data) != want {
		t.Errorf("image row JSON =\n%s\nwant\n%s", data, want)
	}
}

// The spec's cilium skipUpgrade: EKS-A leaves Cilium as it is, and its own
// plan says "Upgrade skipped"; the row read as a minor upgrade.
func TestBuildPlanCiliumSkipUpgrade(t *testing.T) {
	a, b := parseFixture(t, "bundles-2024-11.yaml"), parseFixture(t, "bundles-2025-03.yaml")
	plain, err := BuildPlan(PlanInput{Current: a, Target: b, CurrentKube: "1.30", TargetKube: "1.31"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := BuildPlan(PlanInput{Current: a, Target: b, CurrentKube: "1.30", TargetKube: "1.31", CiliumSkipUpgrade: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range p.Components {
		want := plain.Components[i].Change
		if r.Key == "cilium" {
			want = ChangeSkipped
		}
		if r.Change != want {
			t.Errorf("%s: %s, want %s", r.Key, r.Change, want)
		}
	}
	before, after := SummarizeChanges(plain.Components), SummarizeChanges(p.Components)
	if !strings.Contains(after, "; 1 skipped (the spec's skipUpgrade)") || before == after {
		t.Errorf("summary %q (was %q)", after, before)
	}
}

// A plan that knows the spec listed every provider and Flux as changes
// (`17 of 21 components change` for a vSphere cluster without GitOps),
// where EKS-A upgrades the cluster's provider alone, Flux only with a
// gitOpsRef, and one CNI.
func TestBuildPlanMarksWhatTheClusterDoesNotRun(t *testing.T) {
	a, b := parseFixture(t, "bundles-2024-11.yaml"), parseFixture(t, "bundles-2025-03.yaml")
	plain, err := BuildPlan(PlanInput{Current: a, Target: b, CurrentKube: "1.30", TargetKube: "1.31"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		uses   ClusterUses
		unused []string
	}{
		{ClusterUses{Provider: "vSphere", CNI: "cilium"},
			[]string{"flux", "docker", "tinkerbell", "nutanix", "snow", "cloudStack", "kindnetd", "aws"}},
		{ClusterUses{Provider: "docker", GitOps: true, CNI: "kindnetd"},
			[]string{"vSphere", "tinkerbell", "nutanix", "snow", "cloudStack", "cilium", "aws"}},
		// A datacenter kind of no known provider, no CNI named: every
		// provider and CNI row stays, as without a spec.
		{ClusterUses{GitOps: true}, nil},
	} {
		uses := tc.uses
		p, err := BuildPlan(PlanInput{Current: a, Target: b, CurrentKube: "1.30", TargetKube: "1.31", Uses: &uses})
		if err != nil {
			t.Fatal(err)
		}
		unused := map[string]bool{}
		for _, k := range tc.unused {
			unused[k] = true
		}
		present := 0
		for i, r := range p.Components {
			want := plain.Components[i].Change
			if unused[r.Key] {
				want = ChangeUnused
				present++
			}
			if r.Change != want {
				t.Errorf("%+v: %s is %s, want %s", uses, r.Key, r.Change, want)
			}
			if r.Change == ChangeUnused && r.Changed() {
				t.Errorf("%+v: unused %s counts as changed", uses, r.Key)
			}
		}
		if present == 0 {
			continue
		}
		sum := SummarizeChanges(p.Components)
		runs := len(p.Components) - present
		want := fmt.Sprintf("; %d unused (not run by this cluster)", present)
		if !strings.HasSuffix(sum, want) || !strings.Contains(sum, fmt.Sprintf(" of %d components change", runs)) {
			t.Errorf("%+v: summary %q, want \"… of %d components change …%s\"", uses, sum, runs, want)
		}
	}
}

// Target Bundles without an eksa component: the EKS-A skew check vanished
// from the list, and the plan passed. It says it could not be made.
func TestBuildPlanWithoutTheEKSAVersionSaysSo(t *testing.T) {
	a, b := parseFixture(t, "bundles-2024-11.yaml"), parseFixture(t, "bundles-2025-03.yaml")
	delete(b.VersionsBundles[0].Components, "eksa")
	p, err := BuildPlan(PlanInput{Current: a, Target: b, CurrentKube: "1.30", TargetKube: "1.31"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range p.Preflight {
		if r.Name == CheckNameEKSAVersionSkew {
			if r.Status != CheckWarn || !strings.Contains(r.Message, "the target EKS-A version is not known") {
				t.Errorf("eksa-version-skew: %+v", r)
			}
			return
		}
	}
	t.Errorf("no eksa-version-skew row: %+v", p.Preflight)
}

// The two Bundles the wrong way round plan every component down. Between
// development builds EKS-A checks no version skew, and the plan said the
// upgrade may start without a word: the skipped check is now a warning
// naming what goes down. Not blocking: EKS-A's webhook would not refuse it.
func TestBuildPlanWarnsOfDowngrades(t *testing.T) {
	a, b := parseFixture(t, "bundles-2024-11.yaml"), parseFixture(t, "bundles-2025-03.yaml")
	p, err := BuildPlan(PlanInput{Current: b, Target: a, CurrentKube: "1.30", TargetKube: "1.30"})
	if err != nil {
		t.Fatal(err)
	}
	var skew CheckResult
	for _, c := range p.Preflight {
		if c.Name == CheckNameEKSAVersionSkew {
			skew = c
		}
	}
	if skew.Status != CheckWarn || !strings.Contains(skew.Message, "component(s) go down: ") || !strings.Contains(skew.Message, " more") ||
		!strings.Contains(skew.Remediation, "the wrong way round") || p.Blocked() {
		t.Errorf("eksa-version-skew = %+v (blocked %t), want a warning naming the downgrades", skew, p.Blocked())
	}
	// The right way round, nothing goes down: as before.
	p, err = BuildPlan(PlanInput{Current: a, Target: b, CurrentKube: "1.30", TargetKube: "1.30"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Preflight {
		if c.Name == CheckNameEKSAVersionSkew && c.Status != CheckSkipped {
			t.Errorf("upgrade: eksa-version-skew = %+v", c)
		}
	}
}

// Components of the Kubernetes version that go down with a Kubernetes
// downgrade kubernetes-version-skew already fails are its finding: a live
// plan of kubernetesVersion 1.29 warned again under eksa-version-skew and
// blamed "the two files the wrong way round", which a live plan has not.
func TestWarnDowngradesLeavesTheKubernetesDowngradeToItsCheck(t *testing.T) {
	rows := []ComponentDiff{
		{Key: KeyKubernetes, Name: "kubernetes (EKS-D)", OldVersion: "v1.30.5-eks-1-30-22", NewVersion: "v1.29.9-eks-1-29-40", Change: ChangeDowngrade},
	}
	checks := func(kube CheckStatus) []CheckResult {
		return []CheckResult{{Name: CheckNameEKSAVersionSkew, Status: CheckPass, Message: "EKS-A v0.20.9 → v0.21.2 is one minor up"},
			{Name: CheckNameKubernetesVersionSkew, Status: kube}}
	}
	c := checks(CheckFail)
	WarnDowngrades(c, rows, true)
	if c[0].Status != CheckPass {
		t.Errorf("with the Kubernetes downgrade failed already: %+v", c[0])
	}
	c = checks(CheckPass)
	WarnDowngrades(c, rows, true)
	if c[0].Status != CheckWarn || strings.Contains(c[0].Remediation, "files") || !strings.Contains(c[0].Remediation, "spec.eksaVersion") {
		t.Errorf("live: %+v", c[0])
	}
	rows = append(rows, ComponentDiff{Key: "certManager", Name: "cert-manager", OldVersion: "v1.15.3", NewVersion: "v1.14.7", Change: ChangeDowngrade})
	c = checks(CheckFail)
	WarnDowngrades(c, rows, false)
	if c[0].Status != CheckWarn || !strings.Contains(c[0].Message, "1 component(s) go down: cert-manager") || !strings.Contains(c[0].Remediation, "the two files the wrong way round") {
		t.Errorf("a management component down beside it, offline: %+v", c[0])
	}
}

// Offline, the target Bundles must be the spec's release: a spec of
// v0.20.9 planned against the Bundles of v0.21.2 showed components the spec
// never installs, and passed.
func TestPlanTargetBundlesOfTheSpecsRelease(t *testing.T) {
	for _, tc := range []struct {
		spec, bundles string
		want          CheckStatus
		made          bool
	}{
		{"v0.21.2", "v0.21.2+d05f3a8", CheckPass, true},
		{"v0.20.9", "v0.21.2+d05f3a8", CheckFail, true},
		{"v0.21.9", "v0.21.2+d05f3a8", CheckFail, true},
		{"", "v0.21.2+d05f3a8", "", false},                   // no spec
		{"v0.21.2", "v0.0.0-dev+build.0+abcdef1", "", false}, // a development build names no release
	} {
		r, made := targetBundlesOfSpec(tc.spec, tc.bundles)
		if made != tc.made || made && (r.Status != tc.want || r.Name != CheckNameTargetRelease || (tc.want == CheckFail) != r.Blocking) {
			t.Errorf("spec %q, bundles %q: made %v, %+v", tc.spec, tc.bundles, made, r)
		}
		if made && tc.want == CheckFail && !strings.Contains(r.Remediation, "set spec.eksaVersion to v0.21.2") {
			t.Errorf("fix: %q", r.Remediation)
		}
	}
}

// A target version that is not a version where the current one is (a
// Bundles manifest edited by hand) warns: the row read "changed" and the
// plan exited 0. Image URIs on both sides are no such thing.
func TestWarnUnversionedTargets(t *testing.T) {
	rows := []ComponentDiff{
		{Key: "kubeadmBootstrap", Name: "kubeadm bootstrap", OldVersion: "v1.8.5+abcdef1", NewVersion: "banana", Change: Classify("v1.8.5+abcdef1", "banana")},
		{Key: "upgrader", Name: "upgrader", OldVersion: "public.ecr.aws/a/upgrader:x", NewVersion: "public.ecr.aws/a/upgrader:y", Change: ChangeChanged},
	}
	c := []CheckResult{{Name: CheckNameEKSAVersionSkew, Status: CheckPass, Message: "EKS-A v0.20.9 → v0.21.2 is one minor up"}}
	WarnUnversioned(c, rows, false)
	if c[0].Status != CheckWarn || !strings.Contains(c[0].Message, `1 component(s) have a target version that is not a version: kubeadm bootstrap v1.8.5+abcdef1 → "banana"`) ||
		!strings.HasPrefix(c[0].Remediation, "check the target Bundles file") {
		t.Errorf("%+v", c[0])
	}
	c = []CheckResult{{Name: CheckNameEKSAVersionSkew, Status: CheckPass}}
	WarnUnversioned(c, rows[1:], false)
	if c[0].Status != CheckPass {
		t.Errorf("image URIs warned: %+v", c[0])
	}
}

// A target Bundles without a component the current ones carry (cilium cut
// from the file) warns: the row read "removed" and the plan exited 0, and
// EKS-A stops at the component it cannot find. Unused rows are not named.
func TestWarnRemovedComponents(t *testing.T) {
	rows := []ComponentDiff{
		{Key: "cilium", Name: "cilium", OldVersion: "v1.15.14-eksa.9", Change: Classify("v1.15.14-eksa.9", "")},
		{Key: "flux", Name: "flux", OldVersion: "v2.5.1", Change: ChangeUnused},
	}
	c := []CheckResult{{Name: CheckNameEKSAVersionSkew, Status: CheckPass, Message: "EKS-A v0.20.9 → v0.21.2 is one minor up"}}
	WarnRemoved(c, rows, false)
	if c[0].Status != CheckWarn || !strings.HasSuffix(c[0].Message, "; but 1 component(s) are missing from the target Bundles: cilium v1.15.14-eksa.9") ||
		!strings.HasPrefix(c[0].Remediation, "check the target Bundles file") {
		t.Errorf("offline: %+v", c[0])
	}
	c = []CheckResult{{Name: CheckNameEKSAVersionSkew, Status: CheckPass}}
	WarnRemoved(c, rows, true)
	if c[0].Status != CheckWarn || !strings.Contains(c[0].Remediation, "--to-bundles") {
		t.Errorf("live: %+v", c[0])
	}
	c = []CheckResult{{Name: CheckNameEKSAVersionSkew, Status: CheckPass}}
	WarnRemoved(c, rows[1:], false)
	if c[0].Status != CheckPass {
		t.Errorf("an unused component warned: %+v", c[0])
	}
}

// A failed worker-version-skew owns the worker groups' kubernetes rows that go
// to a lower minor (its own finding), not a group's EKS-D that keeps its
// minor on an older build: that is the target Bundles', and it was hidden.
func TestWarnDowngradesLeavesWorkerMinorDowngradesToTheirCheck(t *testing.T) {
	rows := []ComponentDiff{
		{Key: KeyKubernetes, Name: "kubernetes for md-0", OldVersion: "v1.31.3-eks-1-31-11", NewVersion: "v1.30.5-eks-1-30-22", Change: ChangeDowngrade, WorkerGroups: []string{"md-0"}},
	}
	checks := func() []CheckResult {
		return []CheckResult{{Name: CheckNameEKSAVersionSkew, Status: CheckPass, Message: "EKS-A v0.20.9 → v0.21.2 is one minor up"},
			{Name: CheckNameWorkerVersionSkew, Status: CheckFail}}
	}
	c := checks()
	WarnDowngrades(c, rows, true)
	if c[0].Status != CheckPass {
		t.Errorf("a worker group's minor going down, which its check fails: %+v", c[0])
	}
	rows = append(rows, ComponentDiff{Key: KeyKubernetes, Name: "kubernetes for md-1", OldVersion: "v1.29.9-eks-1-29-40", NewVersion: "v1.29.9-eks-1-29-38", Change: ChangeDowngrade, WorkerGroups: []string{"md-1"}})
	c = checks()
	WarnDowngrades(c, rows, true)
	if c[0].Status != CheckWarn || !strings.Contains(c[0].Message, "1 component(s) go down: kubernetes for md-1") {
		t.Errorf("a worker group's older EKS-D build beside it: %+v", c[0])
	}
}
