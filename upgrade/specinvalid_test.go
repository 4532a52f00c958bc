package upgrade

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// A 422 whose causes are about values, from the CRD's schema, is the
// file's content (bad input); one with a FieldValueForbidden (an immutable
// field), or any an admission webhook or policy gave (EKS-A's answer to a
// version skew), is the plan the cluster refuses, a blocking check's (exit 3).
func TestInvalidFieldsTellsContentFromForbidden(t *testing.T) {
	gk := schema.GroupKind{Group: GVREKSACluster.Group, Kind: "Cluster"}
	content := apierrors.NewInvalid(gk, "mgmt", field.ErrorList{field.NotSupported(field.NewPath("spec", "cloneMode"), "halfClone", []string{"fullClone"})})
	if causes, ok := invalidFields(content); !ok || len(causes) != 1 || causes[0].Field != "spec.cloneMode" {
		t.Errorf("a value outside the enum: %v %v", causes, ok)
	}
	skew := apierrors.NewInvalid(gk, "mgmt", field.ErrorList{field.Forbidden(field.NewPath("spec", "kubernetesVersion"), "only +1 minor version skew is supported")})
	if _, ok := invalidFields(skew); ok {
		t.Error("a version skew's Forbidden read as the file's content")
	}
	// EKS-A's webhook answers a skew with field.Invalid
	// (cluster_webhook.go validateKubeVersionSkew, ValidateEksaVersionSkew);
	// the API server puts its denial's words before the webhook's.
	hooked := apierrors.NewInvalid(gk, "mgmt", field.ErrorList{field.Invalid(field.NewPath("spec"), "1.33", "only +1 minor version skew is supported, minor version skew detected 1.31 -> 1.33")})
	hooked.ErrStatus.Message = `admission webhook "validation.cluster.anywhere.amazonaws.com" denied the request: ` + hooked.ErrStatus.Message
	if _, ok := invalidFields(hooked); ok {
		t.Error("a version skew EKS-A's webhook refused with field.Invalid read as the file's content")
	}
	// The policy dispatcher's error, as the API server words it (D11
	// read it from a live policy: a Forbidden whose message names it).
	policy := apierrors.NewInvalid(gk, "mgmt", field.ErrorList{field.Invalid(field.NewPath("spec", "kubernetesVersion"), "1.31", "kubernetesVersion is pinned")})
	policy.ErrStatus.Message = `clusters.anywhere.eks.amazonaws.com "mgmt" is forbidden: ValidatingAdmissionPolicy 'pin' with binding 'pin' denied request: kubernetesVersion is pinned`
	if _, ok := invalidFields(policy); ok {
		t.Error("a ValidatingAdmissionPolicy's refusal read as the file's content")
	}
	if !admissionDenial(policy.ErrStatus.Message) || admissionDenial(content.ErrStatus.Message) {
		t.Error("admission denials not told from the schema's refusal")
	}
	if _, ok := invalidFields(apierrors.NewForbidden(schema.GroupResource{Resource: "clusters"}, "mgmt", errors.New("no"))); ok {
		t.Error("an RBAC refusal read as the file's content")
	}
}
