// Command upgrade-console plans, starts, watches and recovers upgrades of an
// EKS Anywhere / Cluster API management cluster, in a terminal UI or headless.
//
// This package is cobra wiring only: every command parses its flags, calls the
// package that computes the data, and prints or runs the UI.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
	"github.com/upgrade-console/upgrade-console/watchers"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run executes the CLI and turns any error (or panic) into an exit code, so that
// no panic ever reaches the operator as a stack trace.
func run(args []string) (code int) {
	limitMemory()
	quickHealthCheck()
	watchers.ContainClientGo()
	upgrade.WatchContinued()
	defer startProfiles()()
	opened.take() // another run's, in tests
	// After the recovery below: a run that panicked prints its record too.
	defer func() { code = endRun(os.Stderr, code, opened.take()) }()
	defer func() {
		if r := recover(); r != nil {
			if loggingToFile.Load() {
				klog.ErrorS(nil, "internal error", "where", "the command", "panic", r, "stack", string(debug.Stack()))
				klog.Flush()
			}
			fmt.Fprintf(os.Stderr, "upgrade-console: internal error: %v\n(please report it with the log file named by --log-file)\n", r)
			code = ExitInternal
		}
	}()
	root := newRootCmd()
	setArgs(root, args)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	fmt.Fprint(os.Stderr, errorLine(err))
	return exitCode(err)
}

// errorLine is what the operator reads of an error: explained, and
// printable (model.Printable), as an API server's message or an input
// error quotes text from the cluster or a file, which may hold escape
// sequences.
//
// Each error of a join is a line of its own, prefixed: a refusal joined
// with the audit log's (`etcd rollback` refused, its entry not taken) had
// the second without "upgrade-console:", where a script greps for it.
func errorLine(err error) string {
	if parts := joined(err); parts != nil {
		var b strings.Builder
		for _, e := range parts {
			b.WriteString(errorLine(e))
		}
		return b.String()
	}
	return "upgrade-console: " + model.Printable(explain(err).Error()) + "\n"
}

// joined is the errors of an errors.Join, nil for any other error (one of
// fmt.Errorf's with several %w says more than its parts).
func joined(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return nil
	}
	var parts []error
	var msgs []string
	for _, e := range j.Unwrap() {
		if e != nil {
			parts = append(parts, e)
			msgs = append(msgs, e.Error())
		}
	}
	if len(parts) < 2 || strings.Join(msgs, "\n") != err.Error() {
		return nil
	}
	return parts
}

// explain adds the fix to an error that reached the operator in client-go's
// words alone: refused credentials read "read Cluster default/mgmt:
// Unauthorized", a bound that passed "…: context deadline exceeded". Errors
// that already say what to do (model.InputError) are left as they are.
func explain(err error) error {
	var input *model.InputError
	switch {
	case errors.As(err, &input):
		return err
	case apierrors.IsUnauthorized(err), apierrors.IsForbidden(err):
		return upgrade.ExplainAPIError(err)
	case (apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err)) && !errors.As(err, new(codedError)):
		// The API server's own answer to a request given less time than
		// it needed (--request-timeout 1ms): "the server was unable to
		// return a response in the time allotted", with no fix.
		return upgrade.WithFix(err, err.Error(), "the API server gave up on the request within its time bound: give --request-timeout more time (e.g. 30s; 0 waits for ever), or check the API server's load")
	case errors.Is(err, context.DeadlineExceeded) && !errors.As(err, new(codedError)) && !errors.As(err, new(*upgrade.ProcessStoppedError)):
		// A coded one already says which bound passed (--timeout, a wait);
		// one that passed while the process was stopped is not the API
		// server's, and says so.
		return upgrade.WithFix(err, err.Error(), "a time bound passed before the API server answered: check it is up, and that --request-timeout or --sync-timeout (where given) leave it long enough")
	}
	return err
}
