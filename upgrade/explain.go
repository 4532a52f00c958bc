package upgrade

import (
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/upgrade-console/upgrade-console/model"
)

// ExplainAPIError adds the fix to an API server's refusal, which reaches the
// operator in the server's words alone: "…: Unauthorized" names no cause, and
// a 403 names the verb, the resource and the identity but not what to do.
// The command line and the TUI's dialogs say the same fix. Other errors are
// returned as they are.
//
// The result is one line, "what was read: why (fix: …)", as the console's
// other refusals (model.InputError) are: the 401 read "read Cluster
// default/mgmt: Unauthorized" with its cause and fix on a second line.
func ExplainAPIError(err error) error {
	switch {
	case err == nil:
		return nil
	case apierrors.IsUnauthorized(err):
		// The server's own word ("Unauthorized") is what the cause
		// replaces; other text it sent is kept.
		msg := strings.TrimSuffix(strings.TrimSuffix(err.Error(), "Unauthorized"), ": ")
		return WithFix(err, msg+": "+model.CredentialsRefused+": an expired or revoked token or certificate",
			model.CredentialsFix)
	case apierrors.IsForbidden(err):
		return WithFix(err, err.Error(), "the identity the API server names lacks that right: ask a cluster admin to grant it (a Role or ClusterRole bound to it), or run as one that has it (--kubeconfig, --context, --user, --as)")
	}
	return err
}

// WithFix is err said as msg, with the fix after it on the same line, as a
// model.InputError says its own; errors.Is and As still see err.
func WithFix(err error, msg, fix string) error {
	return &fixedError{msg: msg + " (fix: " + fix + ")", err: err}
}

type fixedError struct {
	msg string
	err error
}

func (e *fixedError) Error() string { return e.msg }
func (e *fixedError) Unwrap() error { return e.err }
