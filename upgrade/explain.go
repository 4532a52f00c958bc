package upgrade

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// ExplainAPIError adds the fix to an API server's refusal, which reaches the
// operator in the server's words alone: "…: Unauthorized" names no cause, and
// a 403 names the verb, the resource and the identity but not what to do.
// The command line and the TUI's dialogs say the same fix. Other errors are
// returned as they are.
func ExplainAPIError(err error) error {
	switch {
	case err == nil:
		return nil
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("%w\nfix: the API server refused the kubeconfig's credentials (401 Unauthorized: an expired or revoked token or certificate); "+
			"refresh them (the cluster's admin kubeconfig, or your token provider) or choose others with --kubeconfig, --context or --user", err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%w\nfix: the identity above lacks that right: ask a cluster admin to grant it (a Role or ClusterRole bound to it), or run as one that has it (--kubeconfig, --context, --user, --as)", err)
	}
	return err
}
