package upgrade

import (
	"context"
	"fmt"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Authenticated is who the API server took the console's credentials to be,
// as a SelfSubjectReview returns it. The OS user and the kubeconfig context
// an entry also carries do not say it: a ServiceAccount or OIDC token on a
// shared bastion is run as root, under a context named after anything.
type Authenticated struct {
	Username string   `json:"username"`
	Groups   []string `json:"groups,omitempty"`
}

// String is the username, the part an operator looks for.
func (a *Authenticated) String() string {
	if a == nil {
		return ""
	}
	return a.Username
}

// reviewTimeout bounds the one SelfSubjectReview: the review only adds to
// the record, and a slow API server must not hold up the action.
const reviewTimeout = 5 * time.Second

// ReviewSelf asks the API server who it authenticates the client as
// (authentication.k8s.io/v1 SelfSubjectReview, which every authenticated
// user may create). Under impersonation it is the impersonated user.
func ReviewSelf(ctx context.Context, kube kubernetes.Interface) (*Authenticated, error) {
	ctx, cancel := context.WithTimeout(ctx, reviewTimeout)
	defer cancel()
	r, err := kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("self subject review: %w", err)
	}
	u := r.Status.UserInfo
	if strings.TrimSpace(u.Username) == "" {
		return nil, fmt.Errorf("self subject review: no username in the reply")
	}
	return &Authenticated{Username: u.Username, Groups: u.Groups}, nil
}
