package model

import (
	"strings"
	"testing"
)

// wantCheck is what a rule test asserts: status, blocking, and fragments the
// message and remediation must contain (a failure must always say how to fix it).
type wantCheck struct {
	status   CheckStatus
	message  string
	fixHas   string
	blocking bool
}

func assertCheck(t *testing.T, call string, got CheckResult, name string, w wantCheck) {
	t.Helper()
	if got.Name != name || got.Status != w.status || got.Blocking != w.blocking {
		t.Errorf("%s = %+v; want name %s status %s blocking %v", call, got, name, w.status, w.blocking)
	}
	if !strings.Contains(got.Message, w.message) {
		t.Errorf("%s message %q does not contain %q", call, got.Message, w.message)
	}
	if !strings.Contains(got.Remediation, w.fixHas) {
		t.Errorf("%s remediation %q does not contain %q", call, got.Remediation, w.fixHas)
	}
	if got.Status == CheckFail && got.Remediation == "" {
		t.Errorf("%s fails without a remediation", call)
	}
	if got.Skippable {
		t.Errorf("%s is skippable; webhook-enforced rules must not be", call)
	}
}

func TestCheckKubernetesVersionSkew(t *testing.T) {
	for _, tc := range []struct {
		cur, tgt string
		want     wantCheck
	}{
		{"1.30", "1.30", wantCheck{CheckPass, "stays at 1.30", "", false}},
		{"1.30", "1.31", wantCheck{CheckPass, "1.30 → 1.31 is one minor up", "", false}},
		{"1.9", "1.10", wantCheck{CheckPass, "one minor up", "", false}}, // numeric order
		{"v1.30", "1.31", wantCheck{CheckPass, "one minor up", "", false}},
		{"1.30", "v1.31.6-eks-1-31-16", wantCheck{CheckPass, "one minor up", "", false}},
		{"1.30", "1.32", wantCheck{CheckFail, "skips 1 minor version(s)", "upgrade to 1.31 first", true}},
		{"1.28", "1.31", wantCheck{CheckFail, "skips 2 minor version(s)", "upgrade to 1.29 first", true}},
		{"1.31", "1.30", wantCheck{CheckFail, "is a downgrade", "choose 1.31 (no change) or 1.32", true}},
		{"1.30", "2.0", wantCheck{CheckFail, "changes the major version", "choose 1.30", true}},
		{"one", "1.31", wantCheck{CheckFail, `current Kubernetes version "one"`, "e.g. 1.30", true}},
		{"1.30", "", wantCheck{CheckFail, `target Kubernetes version ""`, "e.g. 1.31", true}},
	} {
		assertCheck(t, "CheckKubernetesVersionSkew("+tc.cur+", "+tc.tgt+")", CheckKubernetesVersionSkew(tc.cur, tc.tgt), CheckNameKubernetesVersionSkew, tc.want)
	}
}

func TestCheckEKSAVersionSkew(t *testing.T) {
	for _, tc := range []struct {
		cur, tgt string
		want     wantCheck
	}{
		{"v0.14.0", "v0.15.0", wantCheck{CheckPass, "one minor up", "", false}},
		{"v0.14.6", "v0.15.1", wantCheck{CheckPass, "one minor up", "", false}},
		{"v0.13.0", "v0.15.0", wantCheck{CheckFail, "v0.13 → v0.15 skips 1 minor", "newest v0.14.x release first", true}},
		{"v0.21.1", "v0.21.3", wantCheck{CheckPass, "stays within v0.21", "", false}},        // patch up
		{"v0.21.1", "v0.21.1", wantCheck{CheckPass, "stays within v0.21", "", false}},        // no change
		{"v0.21.3", "v0.21.1", wantCheck{CheckWarn, "goes down a patch", "intended", false}}, // patch down: allowed
		{"v0.15.0", "v0.14.9", wantCheck{CheckFail, "is a downgrade", "v0.15.x or v0.16.x", true}},
		{"v0.21.1", "v1.0.0", wantCheck{CheckFail, "changes the major version", "stay on major v0", true}},
		{"v1.0.0", "v0.22.0", wantCheck{CheckFail, "changes the major version", "", true}},
		// build metadata, including EKS-A's double '+', is ignored
		{"v0.21.1+abcdef1", "v0.22.0+build.3+65d2d66", wantCheck{CheckPass, "one minor up", "", false}},
		// a development build target is exempt, as in EKS-A's webhook
		{"v0.21.1", "v0.0.0-dev+build.0+abcdef1", wantCheck{CheckSkipped, "development build", "", false}},
		// so is a development build on the cluster
		{"v0.0.0-dev+build.0+abcdef1", "v0.21.2", wantCheck{CheckSkipped, "current v0.0.0-dev+build.0+abcdef1 is a development build", "", false}},
		// an unreadable current version is not held against the operator
		{"garbage", "v0.22.0", wantCheck{CheckWarn, `cannot read the current EKS-A version "garbage"`, "spec.eksaVersion", false}},
		{"v0.21.1", "latest", wantCheck{CheckFail, `cannot read the target EKS-A version "latest"`, "e.g. v0.21.1", true}},
	} {
		assertCheck(t, "CheckEKSAVersionSkew("+tc.cur+", "+tc.tgt+")", CheckEKSAVersionSkew(tc.cur, tc.tgt), CheckNameEKSAVersionSkew, tc.want)
	}
}

// The way back from an eksaVersion EKS-A refused: its webhook lets the minor
// go down when the Cluster's failureReason is EksaVersionInvalid, and the
// check blocked it with nothing to skip.
func TestCheckEKSAVersionSkewFromARefusedVersion(t *testing.T) {
	assertCheck(t, "down from a refused version", CheckEKSAVersionSkewFrom("v0.22.0", "v0.21.2", true), CheckNameEKSAVersionSkew,
		wantCheck{CheckWarn, "allows only because it refused v0.22.0 (status.failureReason EksaVersionInvalid)", "before the refused eksaVersion", false})
	// The rest of the rule stands: still one major, still no skipped minor.
	assertCheck(t, "major change from a refused version", CheckEKSAVersionSkewFrom("v1.0.0", "v0.21.2", true), CheckNameEKSAVersionSkew,
		wantCheck{CheckFail, "changes the major version", "", true})
	assertCheck(t, "skip from a refused version", CheckEKSAVersionSkewFrom("v0.19.0", "v0.21.2", true), CheckNameEKSAVersionSkew,
		wantCheck{CheckFail, "skips 1 minor", "", true})
}

func TestCheckWorkerVersionSkew(t *testing.T) {
	g := func(name, v string) WorkerGroup { return WorkerGroup{Name: name, KubernetesVersion: v} }
	for _, tc := range []struct {
		name   string
		cp     string
		groups []WorkerGroup
		want   wantCheck
	}{
		{"no groups", "1.31", nil, wantCheck{CheckPass, "follow the control plane", "", false}},
		{"all inherit", "1.31", []WorkerGroup{g("md-0", ""), g("md-1", "")}, wantCheck{CheckPass, "follow the control plane", "", false}},
		{"one behind", "1.31", []WorkerGroup{g("md-0", "1.30")}, wantCheck{CheckPass, "within 2 minors", "", false}},
		{"at the limit", "1.31", []WorkerGroup{g("md-0", "1.29")}, wantCheck{CheckWarn, "md-0 (1.29) will be 2 minors behind the control plane (1.31), the most EKS-A allows", "before the next control-plane upgrade", false}},
		{"past the limit", "1.31", []WorkerGroup{g("md-0", "1.28")}, wantCheck{CheckFail, "md-0 (1.28) would be 3 minors behind", "upgrade md-0 to at least 1.29 first", true}},
		{"newer than cp", "1.30", []WorkerGroup{g("md-0", "1.31")}, wantCheck{CheckFail, "md-0 (1.31) would be newer than the control plane (1.30)", "1.30 or lower", true}},
		{"unreadable", "1.31", []WorkerGroup{g("md-0", "x")}, wantCheck{CheckFail, `unreadable Kubernetes version "x"`, "like 1.30", true}},
		{"mixed keeps the warning", "1.31", []WorkerGroup{g("md-b", "1.29"), g("md-a", "1.27")}, wantCheck{CheckFail, "md-a (1.27) would be 4 minors behind the control plane (1.31); EKS-A allows 2; worker group md-b (1.29) will be 2 minors", "upgrade md-a", true}},
		{"bad cp", "", []WorkerGroup{g("md-0", "1.30")}, wantCheck{CheckFail, "control-plane Kubernetes version", "e.g. 1.31", true}},
		// Within the skew, and still a downgrade: EKS-A refuses it.
		{"downgrade", "1.31", []WorkerGroup{{Name: "md-0", KubernetesVersion: "1.29", Was: "1.30"}},
			wantCheck{CheckFail, "worker group md-0 would go down from 1.30 to 1.29; EKS-A never downgrades Kubernetes", "set md-0's kubernetesVersion to 1.30 or higher", true}},
		{"kept behind, not lowered", "1.31", []WorkerGroup{{Name: "md-0", KubernetesVersion: "1.30", Was: "1.30"}}, wantCheck{CheckPass, "within 2 minors", "", false}},
		// The webhook's rules of a group's own change, which passed here.
		{"a group skips a minor", "1.31", []WorkerGroup{{Name: "md-0", KubernetesVersion: "1.31", Was: "1.29"}},
			wantCheck{CheckFail, "worker group md-0 would go from 1.29 to 1.31, skipping 1 minor version(s)", "set md-0's kubernetesVersion to 1.30 first", true}},
		{"pin dropped with a control-plane upgrade", "1.31", []WorkerGroup{{Name: "md-0", Was: "1.30", WasPinned: true, WasControlPlane: "1.30"}},
			wantCheck{CheckFail, "worker group md-0 drops its kubernetesVersion (1.30) while the control plane goes 1.30 → 1.31; EKS-A refuses both in one change", "drop it in a later one", true}},
		{"pin dropped two minors behind", "1.31", []WorkerGroup{{Name: "md-0", Was: "1.29", WasPinned: true, WasControlPlane: "1.31"}},
			wantCheck{CheckFail, "it would go from 1.29 to the control plane's 1.31, skipping 1 minor version(s)", "one minor at a time to 1.31 first", true}},
		{"pin dropped one minor behind", "1.31", []WorkerGroup{{Name: "md-0", Was: "1.30", WasPinned: true, WasControlPlane: "1.31"}},
			wantCheck{CheckPass, "follow the control plane", "", false}},
	} {
		assertCheck(t, "CheckWorkerVersionSkew/"+tc.name, CheckWorkerVersionSkew(tc.cp, tc.groups), CheckNameWorkerVersionSkew, tc.want)
	}
}

func TestCheckTargetKubernetesKnown(t *testing.T) {
	b := parseFixture(t, "bundles-2025-03.yaml")
	for _, tc := range []struct {
		kube string
		want wantCheck
	}{
		{"1.31", wantCheck{CheckPass, "bundles-2025-03.yaml (bundles-86) carries Kubernetes 1.31 (v1.31.6-eks-1-31-16)", "", false}},
		{"1.33", wantCheck{CheckFail, "Kubernetes 1.33 is newer than anything bundles-2025-03.yaml (bundles-86) knows (newest: 1.32)", "newer EKS-A release that supports 1.33, or target 1.32", true}},
		{"1.10", wantCheck{CheckFail, "has no bundle for Kubernetes 1.10 (it has 1.30, 1.31, 1.32)", "target one of 1.30, 1.31, 1.32", true}}, // 1.10 < 1.30 numerically
		{"1.29", wantCheck{CheckFail, "has no bundle for Kubernetes 1.29", "target one of", true}},
		{"junk", wantCheck{CheckFail, "has no bundle for Kubernetes junk", "target one of", true}},
	} {
		assertCheck(t, "CheckTargetKubernetesKnownFrom("+tc.kube+", \"\")", CheckTargetKubernetesKnownFrom(b, tc.kube, ""), CheckNameTargetKubernetesKnown, tc.want)
	}
}

// For a cluster on a known version the fix offers only what one minor at a
// time allows from there: it offered 1.30 … 1.32 to a cluster on 1.29, of
// which kubernetes-version-skew then blocked 1.31 and 1.32.
func TestCheckTargetKubernetesKnownFrom(t *testing.T) {
	b := parseFixture(t, "bundles-2025-03.yaml")
	for _, tc := range []struct {
		kube, current string
		want          wantCheck
	}{
		{"1.29", "1.29", wantCheck{CheckFail, "has no bundle for Kubernetes 1.29", "target one of 1.30 (from 1.29, Kubernetes goes one minor at a time)", true}},
		{"1.33", "1.30", wantCheck{CheckFail, "is newer than anything", "or target one of 1.30, 1.31 (from 1.30, one minor at a time)", true}},
		{"1.33", "1.32", wantCheck{CheckFail, "is newer than anything", "or target 1.32", true}},
		{"1.20", "1.19", wantCheck{CheckFail, "has no bundle for Kubernetes 1.20", "target one of 1.30, 1.31, 1.32 (upgrading Kubernetes one minor at a time)", true}},
	} {
		assertCheck(t, "CheckTargetKubernetesKnownFrom("+tc.kube+", "+tc.current+")", CheckTargetKubernetesKnownFrom(b, tc.kube, tc.current), CheckNameTargetKubernetesKnown, tc.want)
	}
}

// The control plane's version is judged first: a target the Bundles lack
// is the failure to fix, even where a pinned worker group's version is
// missing too (its failure named only the group, and the fix a version
// for it, while the control plane's target could not be planned at all).
func TestCheckTargetKubernetesKnownFor(t *testing.T) {
	b := parseFixture(t, "bundles-2025-03.yaml")
	for _, tc := range []struct {
		kube   string
		groups []WorkerGroup
		want   wantCheck
	}{
		{"1.31", []WorkerGroup{{Name: "md-0"}, {Name: "md-1", KubernetesVersion: "1.30"}}, wantCheck{CheckPass, "carries Kubernetes 1.31", "", false}},
		{"1.31", []WorkerGroup{{Name: "md-0"}, {Name: "md-1", KubernetesVersion: "1.29"}}, wantCheck{CheckFail, "worker group md-1 is pinned to Kubernetes 1.29", "set the kubernetesVersion of md-1", true}},
		{"1.33", []WorkerGroup{{Name: "md-1", KubernetesVersion: "1.29"}}, wantCheck{CheckFail, "Kubernetes 1.33 is newer than anything", "or target 1.32", true}},
	} {
		assertCheck(t, "CheckTargetKubernetesKnownFor("+tc.kube+")", CheckTargetKubernetesKnownFor(b, tc.kube, "1.31", tc.groups), CheckNameTargetKubernetesKnown, tc.want)
	}
}

func TestBlocked(t *testing.T) {
	if Blocked(nil) || Blocked([]CheckResult{{Status: CheckWarn}, {Status: CheckPass}}) {
		t.Error("warn/pass must not block")
	}
	if !Blocked([]CheckResult{{Status: CheckPass}, CheckKubernetesVersionSkew("1.30", "1.32")}) {
		t.Error("a failed skew must block")
	}
}

// The fix of a refused Kubernetes change named the next minor whether or not
// the target Bundles ship it: "upgrade to 1.33 first" with Bundles that stop
// at 1.32, a version no apply with them can reach.
func TestCheckKubernetesVersionSkewInBundles(t *testing.T) {
	b := parseFixture(t, "bundles-2025-03.yaml") // ships 1.30, 1.31, 1.32
	for _, tc := range []struct {
		cur, tgt string
		want     wantCheck
		notInFix string
	}{
		// The next minor is shipped: the fix names it, as without Bundles.
		{"1.30", "1.32", wantCheck{CheckFail, "skips 1 minor", "upgrade to 1.31 first, then on from there one minor at a time", true}, ""},
		// Past the newest: a newer release's Bundles, not "upgrade to 1.33" with these.
		{"1.32", "1.34", wantCheck{CheckFail, "skips 1 minor", "bundles-2025-03.yaml (bundles-86) ships no Kubernetes 1.33, the next minor after 1.32 (it ships 1.30, 1.31, 1.32): upgrade to 1.33 first with the Bundles of a newer EKS-A release", true}, "upgrade to 1.33 first, then"},
		// Before the oldest: an older release's.
		{"1.28", "1.30", wantCheck{CheckFail, "skips 1 minor", "ships no Kubernetes 1.29, the next minor after 1.28", true}, "upgrade to 1.29 first, then"},
		{"1.28", "1.30", wantCheck{CheckFail, "skips 1 minor", "the Bundles of an older EKS-A release that ships it", true}, ""},
		// A downgrade offers only what is shipped.
		{"1.32", "1.30", wantCheck{CheckFail, "is a downgrade", "choose 1.32 (no change; bundles-2025-03.yaml (bundles-86) ships no 1.33); going back needs a restore", true}, "or 1.33"},
		{"1.31", "1.30", wantCheck{CheckFail, "is a downgrade", "choose 1.31 (no change) or 1.32 (one minor up)", true}, ""},
		{"1.29", "2.0", wantCheck{CheckFail, "changes the major version", "choose 1.30 (one minor up; bundles-2025-03.yaml (bundles-86) ships no 1.29)", true}, ""},
		{"1.27", "1.26", wantCheck{CheckFail, "is a downgrade", "ships neither 1.27 (no change) nor 1.28 (one minor up), only 1.30, 1.31, 1.32: use the Bundles of an EKS-A release that ships one of them", true}, "choose"},
	} {
		call := "CheckKubernetesVersionSkewIn(2025-03, " + tc.cur + ", " + tc.tgt + ")"
		got := CheckKubernetesVersionSkewIn(b, tc.cur, tc.tgt)
		assertCheck(t, call, got, CheckNameKubernetesVersionSkew, tc.want)
		if tc.notInFix != "" && strings.Contains(got.Remediation, tc.notInFix) {
			t.Errorf("%s remediation %q names %q, which the Bundles do not ship", call, got.Remediation, tc.notInFix)
		}
	}
}

// The offline plan judges the skew against the target Bundles it was given.
func TestBuildPlanSkewFixNamesAShippedVersion(t *testing.T) {
	b := parseFixture(t, "bundles-2025-03.yaml")
	p, err := BuildPlan(PlanInput{Current: b, Target: b, CurrentKube: "1.32", TargetKube: "1.34"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range p.Preflight {
		if r.Name == CheckNameKubernetesVersionSkew && strings.Contains(r.Remediation, "upgrade to 1.33 first, then") {
			t.Errorf("fix %q sends the operator to 1.33 with Bundles that stop at 1.32", r.Remediation)
		}
	}
}
