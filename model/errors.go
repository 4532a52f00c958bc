package model

import (
	"fmt"
	"strings"
)

// InputError is bad input from the operator: a file, a flag or an object that
// cannot be used as it is. It names where the problem is and how to fix it, and
// maps to the CLI's "bad input" exit code.
type InputError struct {
	// Source is the file, flag or object the input came from (e.g.
	// "bundles-a.yaml", "--kubernetes-version", "Cluster eksa-system/mgmt").
	Source string
	// Field is the path inside the source, if any (e.g. "spec.versionsBundles[2].eksD.name").
	Field string
	// Problem says what is wrong.
	Problem string
	// Fix says what the operator can do about it.
	Fix string
	// Cause is the error behind the problem, when one is (a transport
	// error behind "cannot be reached"): callers may tell kinds apart.
	Cause error
}

func (e *InputError) Unwrap() error { return e.Cause }

func (e *InputError) Error() string {
	var b strings.Builder
	b.WriteString(e.Source)
	if e.Field != "" {
		fmt.Fprintf(&b, ": %s", e.Field)
	}
	fmt.Fprintf(&b, ": %s", e.Problem)
	if e.Fix != "" {
		fmt.Fprintf(&b, " (fix: %s)", e.Fix)
	}
	return b.String()
}

// InternalError is a bug of the console's own, caught as a panic before it
// reached the operator: where it happened and what it was. The stack goes to
// the log file, not the terminal; it maps to the CLI's internal-error exit
// code.
type InternalError struct {
	// Where names the part of the console that failed (e.g. "the terminal
	// UI", "the watch of Machines").
	Where string
	// Panic is the value the panic carried.
	Panic any
}

func (e *InternalError) Error() string {
	return fmt.Sprintf("internal error in %s: %v (the stack is in the log file; please report it)", e.Where, e.Panic)
}

// ForbiddenError is a read the identity may not make. Forbidden is worded
// as SourceStatus.Forbidden ("list events in eksa-system"), so that
// GrantFor names the rule that allows it.
type ForbiddenError struct {
	Forbidden string
	Err       error
}

func (e *ForbiddenError) Error() string { return "forbidden: " + e.Forbidden }
func (e *ForbiddenError) Unwrap() error { return e.Err }

// PartialHistoryError is an event history read in part: the API server
// holds more events of Subjects than a read lists (Listed each), and lists
// them in name order, not by time, so the newest of them may be among
// those left. The events that were read come with it.
type PartialHistoryError struct {
	Subjects []string // "MachineSet mgmt-md-0-*"
	Listed   int
}

func (e *PartialHistoryError) Error() string {
	return fmt.Sprintf("read in part: more than %d events of %s; the newest may be among those not read", e.Listed, strings.Join(e.Subjects, ", "))
}
