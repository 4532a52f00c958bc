package upgrade

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/model"
)

// CheckExtendedSupport fails an upgrade to a Kubernetes version past its
// end of standard support without a licenseToken: from v0.22.0, EKS-A's
// controller fails such a Cluster after the apply
// (ExtendedKubernetesVersionSupportNotSupported, "licenseToken is required
// for extended kubernetes support"; pkg/validations/extendedversion.go).
const CheckExtendedSupport = "extended-support"

// extendedSupportFrom is the first EKS-A release that checks it.
var extendedSupportFrom = semver.MustParse("v0.22.0")

func checkExtendedSupport(_ context.Context, in *Inputs) model.CheckResult {
	t := in.Target
	if t == nil || t.Bundles == nil || t.KubernetesVersion == "" {
		return pass("not asked (no target release)")
	}
	_, tgt := in.eksaVersions()
	core, _, _ := strings.Cut(tgt, "+")
	v, err := semver.NewVersion(core)
	if err != nil || v.LessThan(extendedSupportFrom) {
		return pass(fmt.Sprintf("EKS-A %s does not check extended Kubernetes support (from v0.22.0)", orUnknown(tgt)))
	}
	vb, err := t.Bundles.ForKubernetes(t.KubernetesVersion)
	if err != nil || vb.EndOfStandardSupport == "" {
		return pass("the target Bundles give no end of standard support for Kubernetes " + t.KubernetesVersion)
	}
	end, err := time.Parse("2006-01-02", vb.EndOfStandardSupport)
	if err != nil {
		return warn(fmt.Sprintf("the target Bundles' endOfStandardSupport %q for Kubernetes %s is not a date", vb.EndOfStandardSupport, t.KubernetesVersion), "")
	}
	now := in.Now
	if now.IsZero() {
		now = time.Now()
	}
	// EKS-A compares with today's date, truncated to the day.
	if !end.Before(now.Truncate(24 * time.Hour)) {
		return pass(fmt.Sprintf("Kubernetes %s is in standard support until %s", t.KubernetesVersion, vb.EndOfStandardSupport))
	}
	token, where := licenseToken(in)
	if token == "" {
		return failed(fmt.Sprintf("Kubernetes %s left standard support on %s, and the spec has no licenseToken: EKS-A %s fails the Cluster after the apply (ExtendedKubernetesVersionSupportNotSupported)", t.KubernetesVersion, vb.EndOfStandardSupport, tgt),
			"set spec.licenseToken to the cluster's EKS Anywhere extended support license token, or upgrade to a Kubernetes version in standard support")
	}
	return pass(fmt.Sprintf("Kubernetes %s is in extended support (standard support ended %s); %s spec.licenseToken is set: EKS-A checks its signature and expiry, which the console cannot", t.KubernetesVersion, vb.EndOfStandardSupport, where))
}

// licenseToken is the token the applied Cluster will have: the spec file's,
// else (server-side apply keeps another manager's field) the Cluster's.
func licenseToken(in *Inputs) (token, where string) {
	if in.Target.Spec != nil && in.Target.Spec.Cluster != nil {
		if s, ok, _ := unstructured.NestedString(in.Target.Spec.Cluster.Object, "spec", "licenseToken"); ok {
			return s, "the spec file's"
		}
	}
	if in.Current != nil && in.Current.Cluster != nil {
		s, _, _ := unstructured.NestedString(in.Current.Cluster.Object, "spec", "licenseToken")
		return s, "the Cluster's"
	}
	return "", ""
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}
