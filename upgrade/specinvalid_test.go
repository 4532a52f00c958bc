package upgrade

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// A 422 whose causes are about values is the file's content (bad input);
// one with a FieldValueForbidden, EKS-A's webhook answer to a version skew,
// is not the file's alone to fix, and stays a blocking check's (exit 3).
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
	if _, ok := invalidFields(apierrors.NewForbidden(schema.GroupResource{Resource: "clusters"}, "mgmt", errors.New("no"))); ok {
		t.Error("an RBAC refusal read as the file's content")
	}
}
