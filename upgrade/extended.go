package upgrade

import (
	"context"
	"fmt"
	"time"

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
const extendedSupportFrom = "v0.22.0"

func checkExtendedSupport(_ context.Context, in *Inputs) model.CheckResult {
	t := in.Target
	if t == nil || t.Bundles == nil || t.KubernetesVersion == "" {
		return pass("not asked (no target release)")
	}
	_, tgt := in.eksaVersions()
	if before, err := model.EKSAVersionLess(tgt, extendedSupportFrom); err != nil || before {
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
	var live, applied *unstructured.Unstructured
	if in.Current != nil {
		live = in.Current.Cluster
	}
	if in.Target.Spec != nil {
		applied = in.Target.Spec.Cluster
	}
	token, where := afterApply(live, applied, "spec", "licenseToken")
	if token == "" {
		return failed(fmt.Sprintf("Kubernetes %s left standard support on %s, and the spec has no licenseToken: EKS-A %s fails the Cluster after the apply (ExtendedKubernetesVersionSupportNotSupported)", t.KubernetesVersion, vb.EndOfStandardSupport, tgt),
			"set spec.licenseToken to the cluster's EKS Anywhere extended support license token, or upgrade to a Kubernetes version in standard support")
	}
	return pass(fmt.Sprintf("Kubernetes %s is in extended support (standard support ended %s); %s spec.licenseToken is set: EKS-A checks its signature and expiry, which the console cannot", t.KubernetesVersion, vb.EndOfStandardSupport, where))
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}
