package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// globalOptions are the flags every command shares.
type globalOptions struct {
	// kube holds kubectl's connection flags (--kubeconfig, --context, --as, …).
	kube    *genericclioptions.ConfigFlags
	logFile string
	// conn are the connection flags given on the command line, which the
	// commands the console prints carry.
	conn model.ConnFlags
}

func newRootCmd() *cobra.Command {
	g := &globalOptions{kube: genericclioptions.NewConfigFlags(true)}
	// --cluster names the EKS-A Cluster in every command that takes it;
	// kubectl's --cluster (a kubeconfig cluster) would read as the same
	// flag in the root's help. --context picks the kubeconfig's cluster.
	g.kube.ClusterName = nil
	root := &cobra.Command{
		Use:   "upgrade-console",
		Short: "Plan, start, watch and recover EKS Anywhere management cluster upgrades",
		Long: `upgrade-console upgrades an EKS Anywhere / Cluster API management cluster from the terminal.

It shows what an upgrade changes (the bundle version diff and preflight checks), takes the
upgrade lock and applies the new cluster spec, follows the EKS-A controller live, and guides
recovery when an upgrade fails. Every screen has a headless twin for scripts and CI.

The commands that reach a cluster (plan --cluster, apply, watch, lock, etcd, node, snapshot) take
kubectl's connection flags: --kubeconfig, --context, --as, --token, … (see their --help).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := flagTookAFlag(cmd); err != nil {
				return err
			}
			if cmd.HasAvailableSubCommands() || cmd.Name() == "help" {
				// The root, the groups and help run only to show the
				// help or say a command is wrong: no log file for that.
				return nil
			}
			impersonated = impersonation(g.kube)
			g.conn = connFlags(cmd.Flags())
			return setupLogging(g.logFile)
		},
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		// A mistyped command with flags after it (`plann -f spec.yaml`):
		// the flags were read as the parent's, and the typo is the error.
		if cmd.HasAvailableSubCommands() {
			if args := cmd.Flags().Args(); len(args) > 0 {
				return unknownCommand(cmd, args[0])
			}
			// The flag came before the typo (`lock --cluster m
			// stauts`): pflag stopped at it, and the typo is among
			// the words after the command.
			if name, ok := mistypedAfter(cmd); ok {
				return unknownCommand(cmd, name)
			}
		}
		// A value the flag cannot parse is bad input (exit 1), as for
		// values the commands check themselves; a missing or unknown flag
		// is a wrong command line (exit 2).
		var invalid *pflag.InvalidValueError
		if errors.As(err, &invalid) {
			f := invalid.GetFlag()
			return badFlag("--"+f.Name, err, fmt.Sprintf("give --%s a %s (see --help)", f.Name, f.Value.Type()))
		}
		return usageError{err}
	})
	root.PersistentFlags().StringVar(&g.logFile, "log-file", "",
		"file that receives the console's and client-go's logs (default: $XDG_STATE_HOME/upgrade-console/upgrade-console.log)")

	// kubectl's connection flags go on the commands that connect: version,
	// audit (a local file) and demo (its own control plane) listed them in
	// their help and ignored them.
	connecting := []*cobra.Command{
		newPlanCmd(g),
		newApplyCmd(g),
		newLockCmd(g),
		newEtcdCmd(g),
		newNodeCmd(g),
		newSnapshotCmd(g),
		newWatchCmd(g),
	}
	for _, c := range connecting {
		g.kube.AddFlags(c.PersistentFlags())
		// kubectl's text ("the namespace scope for this CLI request") said
		// more than it does here: the objects EKS-A generates are read in
		// eksa-system whatever -n says.
		if f := c.PersistentFlags().Lookup("namespace"); f != nil {
			f.Usage = "namespace of the EKS-A Cluster (default: the kubeconfig context's, else default); the objects EKS-A generates are read in eksa-system"
		}
	}
	root.AddCommand(connecting...)
	root.AddCommand(newVersionCmd(), newAuditCmd(), newDemoCmd())
	strictCompletion(root)
	// A mistyped command is a wrong command line (exit 2), as a mistyped
	// flag is; cobra's own error for it read as bad input (exit 1).
	root.Args = cobra.ArbitraryArgs
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		return unknownCommand(cmd, args[0])
	}
	return root
}

// commandNames are the commands cmd holds, as its help lists them.
func commandNames(cmd *cobra.Command) []string {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return names
}

// argsAnnotation keeps, on the root command, the command line it runs
// (setArgs): a flag error names a mistyped command found after the flag.
const argsAnnotation = "upgrade-console/args"

// setArgs gives root its command line. Never nil: cobra reads a nil one as
// os.Args[1:], which in a test binary are the test's own flags
// (`-test.run ^X$` read as the command "^X$").
func setArgs(root *cobra.Command, args []string) {
	root.SetArgs(append([]string{}, args...))
	if root.Annotations == nil {
		root.Annotations = map[string]string{}
	}
	root.Annotations[argsAnnotation] = strings.Join(args, "\x00")
}

// mistypedAfter is the first word of the command line after cmd's name
// that is near one of cmd's commands. A word right after a flag given
// without "=" is taken for its value, not a command: cobra's suggestions
// match prefixes, and `lock --cluster c` read "did you mean clear?".
func mistypedAfter(cmd *cobra.Command) (string, bool) {
	raw, ok := cmd.Root().Annotations[argsAnnotation]
	if !ok {
		return "", false
	}
	words := strings.Split(raw, "\x00")
	if i := slices.Index(words, cmd.Name()); i >= 0 {
		words = words[i+1:]
	}
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	value := false // the word is the value of the flag before it
	for _, w := range words {
		switch {
		case w == "--":
			return "", false
		case strings.HasPrefix(w, "-"):
			value = !strings.Contains(w, "=")
		case value:
			value = false
		case len(cmd.SuggestionsFor(w)) > 0:
			return w, true
		}
	}
	return "", false
}

// unknownCommand is the wrong command line of a command name cmd does not
// hold, with the names near it.
func unknownCommand(cmd *cobra.Command, name string) error {
	s := fmt.Sprintf("unknown command %q for %q", name, cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's own, which it sets only where it suggests
	}
	if near := cmd.SuggestionsFor(name); len(near) > 0 {
		s += "; did you mean " + strings.Join(near, " or ") + "?"
	} else {
		s += "; its commands: " + strings.Join(commandNames(cmd), ", ")
	}
	return usageError{errors.New(s)}
}

// strictCompletion makes cobra's completion command refuse a shell it has no
// script for: it is not runnable, so cobra printed its help for
// "completion tcsh" and exited 0, as if a script had been written.
func strictCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		var shells []string
		for _, s := range c.Commands() {
			shells = append(shells, s.Name())
		}
		supported := strings.Join(shells, ", ")
		c.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Errorf("completion: unsupported shell %q: the supported shells are %s (e.g. %q)", args[0], supported, cmd.CommandPath()+" bash")}
			}
			return nil
		}
		c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	}
}

// flagTookAFlag refuses a flag whose value is the next flag: `-f $SPEC
// --yes` with SPEC unset made --yes the spec's path, and the error blamed
// "--yes: cannot read the cluster spec".
func flagTookAFlag(cmd *cobra.Command) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if v := f.Value.String(); err == nil && f.Value.Type() == "string" && strings.HasPrefix(v, "--") {
			err = usageError{fmt.Errorf("--%s took %q as its value: its own value is missing (an unset shell variable?); give --%s a value", f.Name, v, f.Name)}
		}
	})
	return err
}

// exactArgs is cobra.ExactArgs with the usage exit code.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError{fmt.Errorf("%q takes %d argument(s), got %d; see %q", cmd.CommandPath(), n, len(args), cmd.CommandPath()+" --help")}
		}
		return nil
	}
}

// connNames are ConfigFlags' flags that choose the cluster and the identity
// a printed command reaches it as, in the order it prints them; kubectl
// takes them under the same names. Not -n: it names the EKS-A Cluster's
// namespace here, which the commands give where they mean it; nor
// --cluster, the EKS-A Cluster here (kubectl's is not offered); nor
// --request-timeout, --cache-dir or --disable-compression, which change
// neither.
var connNames = []string{"kubeconfig", "context", "user", "server", "tls-server-name",
	"certificate-authority", "client-certificate", "client-key", "insecure-skip-tls-verify",
	"token", "username", "password", "as", "as-uid", "as-group", "as-user-extra"}

// connFlags are the connection flags set on the command line: one left to
// its default, or to $KUBECONFIG, which the operator's shell passes on, is
// not repeated.
func connFlags(fs *pflag.FlagSet) model.ConnFlags {
	var out model.ConnFlags
	for _, name := range connNames {
		f := fs.Lookup(name)
		if f == nil || !f.Changed {
			continue
		}
		if s, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range s.GetSlice() {
				out = append(out, model.ConnFlag{Name: name, Value: v})
			}
			continue
		}
		v := f.Value.String()
		if pathFlags[name] && v != "" {
			// Made absolute: the command is pasted in another shell,
			// maybe in another directory.
			if abs, err := filepath.Abs(v); err == nil {
				v = abs
			}
		}
		out = append(out, model.ConnFlag{Name: name, Value: v})
	}
	return out
}

// reach is the kubeconfig context the command reaches (--context, or the
// kubeconfig's current one, "" when neither is known), and notes that
// context's namespace in g.conn: a printed command without -n works there,
// so a Cluster outside it is printed with -n (-n default too).
func (g *globalOptions) reach(loader clientcmd.ClientConfig) string {
	raw, _ := loader.RawConfig()
	name := raw.CurrentContext
	if g.kube.Context != nil && *g.kube.Context != "" {
		name = *g.kube.Context
	}
	if c := raw.Contexts[name]; c != nil {
		g.conn = g.conn.WithContextNamespace(c.Namespace)
	}
	return name
}

// pathFlags are the connection flags that name a file.
var pathFlags = map[string]bool{"kubeconfig": true, "certificate-authority": true, "client-certificate": true, "client-key": true}

// impersonated is the identity the connection flags impersonate (--as,
// --as-group), "" when none: every audit entry records it, since it is who
// the cluster saw make the change.
var impersonated string

func impersonation(k *genericclioptions.ConfigFlags) string {
	var parts []string
	if k.Impersonate != nil && *k.Impersonate != "" {
		parts = append(parts, *k.Impersonate)
	}
	if k.ImpersonateGroup != nil {
		for _, g := range *k.ImpersonateGroup {
			parts = append(parts, "group "+g)
		}
	}
	return strings.Join(parts, ", ")
}

// auditTarget is what the audit log says of the connection a command writes
// through: the kubeconfig context, and the client that asks the API server
// who the console is (nil: not asked).
type auditTarget struct {
	context string
	kube    kubernetes.Interface
}

// newAuditor opens the audit log for the commands that write, stamping the
// kubeconfig context, the impersonated identity and the one the API server
// authenticated on every entry. The server is asked here, at the command's
// start: a headless command has no screen to keep drawing meanwhile.
func newAuditor(ctx context.Context, at auditTarget) (*upgrade.Auditor, error) {
	a, err := openAuditor(at)
	if err != nil {
		return nil, err
	}
	a.Authenticate(ctx)
	return a, nil
}

// openAuditor is newAuditor for a screen: the API server is asked by
// authenticateCmd, or by the first entry if that comes first.
func openAuditor(at auditTarget) (*upgrade.Auditor, error) {
	opts := []upgrade.AuditorOption{upgrade.WithAuditContext(at.context), upgrade.WithAuditAs(impersonated)}
	if at.kube != nil {
		opts = append(opts, upgrade.WithAuditReview(at.kube))
	}
	a, err := upgrade.NewAuditor("", opts...)
	if err == nil {
		opened.add(a)
	}
	return a, err
}

// holdingAuditor is newAuditor for a run that may change nothing (a dry
// run): the log refusing to open does not stop it, its entries are held
// and printed at exit, and the exit is 74, as for a log that fills up
// mid-run. It was exit 1, as for a run refused its start, though the run
// had done all it was asked. The auditor is never nil: with no path (no
// state directory) it holds every entry, and the error says why.
func holdingAuditor(ctx context.Context, at auditTarget) (*upgrade.Auditor, error) {
	opts := []upgrade.AuditorOption{upgrade.WithAuditContext(at.context), upgrade.WithAuditAs(impersonated)}
	if at.kube != nil {
		opts = append(opts, upgrade.WithAuditReview(at.kube))
	}
	a, err := upgrade.NewAuditorHolding("", opts...)
	opened.add(a)
	a.Authenticate(ctx)
	return a, err
}

// opened are the audit logs this run opened: at its end, the entries a log
// refused (a full disk) and still does not take are printed, not lost with
// the process (sayUnwritten).
var opened auditors

type auditors struct {
	mu   sync.Mutex
	list []*upgrade.Auditor
}

func (o *auditors) add(a *upgrade.Auditor) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.list = append(o.list, a)
}

// held is the entries the opened logs refused and hold, and why the first
// that holds any refused the last (tui.Options.AuditHeld): memory only, for
// a screen to draw.
func (o *auditors) held() (entries int, why string) {
	o.mu.Lock()
	list := slices.Clone(o.list)
	o.mu.Unlock()
	for _, a := range list {
		n, w := a.Held()
		if n > 0 && why == "" {
			why = w
		}
		entries += n
	}
	return entries, why
}

// take returns the auditors opened since the last take, and forgets them.
func (o *auditors) take() []*upgrade.Auditor {
	o.mu.Lock()
	defer o.mu.Unlock()
	l := o.list
	o.list = nil
	return l
}

// endRun is the exit code of a run that ended with code, once the entries
// its audit logs refused are said (sayUnwritten): a run whose record is
// still not in the log is no success, whatever it did, and exits
// ExitUnrecorded instead of 0 (a script read 0 and went on, the record on
// a terminal nobody read). A run that failed keeps its own code: the
// printed lines say the rest.
func endRun(out io.Writer, code int, list []*upgrade.Auditor) int {
	if sayUnwritten(out, list) && code == ExitOK {
		return ExitUnrecorded
	}
	return code
}

// sayUnwritten prints, after the command (and its screen) ended, the entries
// the audit log refused and does not take now either: the record of what
// the console did is then on the operator's terminal, to append to the log
// once it can be written ("once it has space" was said of a directory or
// an immutable file in its place too). The lines are JSON as the log holds
// them, control characters escaped: safe to print. unwritten is whether
// there were any.
func sayUnwritten(out io.Writer, list []*upgrade.Auditor) (unwritten bool) {
	for _, a := range list {
		lines, held, lost, err := a.Unwritten()
		if held == 0 && lost == 0 {
			continue
		}
		unwritten = true
		why := ""
		if err != nil {
			why = " (" + err.Error() + ")"
		}
		what, here, it := fmt.Sprintf("%d entries of this run", held), "here they are", "them"
		if held == 1 {
			what, here, it = "1 entry of this run", "here it is", "it"
		}
		// A log with no path (no state directory) has none to name: the
		// log it belongs in is the one the state directory, once set,
		// holds.
		where := a.Path() + " once it can be written"
		if a.NoPath() != nil {
			where = "the audit log ($XDG_STATE_HOME/upgrade-console/" + upgrade.AuditFileName + ") once XDG_STATE_HOME or HOME is set"
		}
		fmt.Fprintf(out, "upgrade-console: the audit log did not take %s%s; %s, as the log would hold %s: append %s to %s\n",
			what, model.Printable(why), here, it, it, where)
		if lost > 0 {
			fmt.Fprintf(out, "(%d more were refused and not kept: the first line says so)\n", lost)
		}
		out.Write(lines)
	}
	return unwritten
}

// authenticateCmd asks the API server who the console is for the audit log,
// in a command: the screen draws meanwhile, and an action started before
// the answer waits for it in its own command (Auditor.Authenticate).
func authenticateCmd(a *upgrade.Auditor) tea.Cmd {
	return func() tea.Msg {
		a.Authenticate(context.Background())
		return nil
	}
}
