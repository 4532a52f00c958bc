// Command upgrade-console plans, starts, watches and recovers upgrades of an
// EKS Anywhere / Cluster API management cluster, in a terminal UI or headless.
//
// This package is cobra wiring only: every command parses its flags, calls the
// package that computes the data, and prints or runs the UI.
package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"k8s.io/klog/v2"

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
	defer startProfiles()()
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
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(os.Stderr, "upgrade-console: %v\n", err)
	return exitCode(err)
}
