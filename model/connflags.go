package model

import (
	"slices"
	"strings"
)

// ConnFlag is one connection flag the operator gave the console, by its
// long name without dashes ("context", "as-group").
type ConnFlag struct {
	Name  string
	Value string
}

// ConnFlags are the connection flags the operator gave the console on its
// command line, in the order the console lists them. A command the console
// prints for pasting carries them: pasted into a shell whose kubeconfig
// context is another cluster's, a bare `kubectl patch` would change that
// cluster. Flags left unset are absent, as is $KUBECONFIG, which the
// operator's shell passes on by itself.
//
// They may also hold the namespace of the kubeconfig context they reach
// (WithContextNamespace), which is no flag and is not printed.
type ConnFlags []ConnFlag

// contextNamespace names the entry that holds the context's namespace: no
// flag has a name with a space.
const contextNamespace = "context namespace"

// WithContextNamespace is f noting the namespace of the kubeconfig context
// the flags reach: a pasted command without -n works there, so
// ClusterArgs names a Cluster in any other with -n, "default" included.
func (f ConnFlags) WithContextNamespace(ns string) ConnFlags {
	f = slices.DeleteFunc(slices.Clone(f), func(fl ConnFlag) bool { return fl.Name == contextNamespace })
	if ns == "" || ns == "default" {
		return f
	}
	return append(f, ConnFlag{Name: contextNamespace, Value: ns})
}

// ContextNamespace is the namespace a pasted command without -n works in:
// the kubeconfig context's, "default" when it names none or is not known.
func (f ConnFlags) ContextNamespace() string {
	for _, fl := range f {
		if fl.Name == contextNamespace {
			return fl.Value
		}
	}
	return "default"
}

// secretFlag reports whether a flag's value is never printed: a screen, a
// scrollback or a log that shows the command would show the credential.
func secretFlag(name string) bool {
	return name == "token" || name == "password" || name == "username"
}

// String renders the flags for a POSIX shell, each after a space
// (" --context prod --as bob"), "" when none. A secret reads as
// '<token>': pasted unchanged, the API server refuses it; a shell variable
// in its place would expand to nothing when unset, and the command would
// run as the kubeconfig's user.
func (f ConnFlags) String() string {
	var b strings.Builder
	for _, fl := range f {
		if fl.Name == contextNamespace {
			continue
		}
		b.WriteString(" --" + fl.Name)
		switch {
		case secretFlag(fl.Name):
			b.WriteString(" " + ShellQuote("<"+fl.Name+">"))
		case fl.Name == "insecure-skip-tls-verify":
			// A boolean takes its value after "=" or not at all.
			if fl.Value != "true" {
				b.WriteString("=" + ShellQuote(fl.Value))
			}
		default:
			b.WriteString(" " + ShellQuote(fl.Value))
		}
	}
	return b.String()
}

// ShellQuote quotes s for a POSIX shell when it needs it: a value with a
// space, a quote or any character the shell reads is single-quoted, with
// each single quote closed, escaped and reopened.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
