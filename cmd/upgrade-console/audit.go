package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

type auditOptions struct {
	cluster string
	since   string
	console string
	output  string
	file    string
}

func newAuditCmd() *cobra.Command {
	o := &auditOptions{}
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Show the audit log: every change the console made to a cluster",
		Long: `Show the audit log: one entry per change the console made (or tried to make) to a
cluster: upgrades applied, locks taken and cleared, recovery steps, with who, where,
the object, its state before and after, and the result. WHO is user@host/console: the
console is the id of the process that wrote the entry, the same id the upgrade lock's
holder shows ("held by alice@laptop (console 3f2a9c1e)"), so one run's entries can be
picked out of a log several consoles wrote to (--console). "(as …)" after it is who the
cluster saw make the change: the identity impersonated with --as, else the one the API
server authenticated the kubeconfig's credentials as (a ServiceAccount's token, an OIDC
user).

The log is $XDG_STATE_HOME/upgrade-console/audit.log (default
~/.local/state/upgrade-console/audit.log), one JSON object per line.`,
		Example: `  upgrade-console audit --cluster mgmt --since 24h
  upgrade-console audit --console 3f2a9c1e
  upgrade-console audit -o json | jq '.[] | select(.forced)'`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAudit(cmd.OutOrStdout(), cmd.ErrOrStderr(), o, time.Now())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.cluster, "cluster", "", "only entries about this cluster")
	f.StringVar(&o.since, "since", "", "only entries newer than a duration (24h) or an RFC 3339 time (2026-11-21T22:00:00Z)")
	f.StringVar(&o.console, "console", "", "only entries written by this console (the id after / in WHO)")
	f.StringVarP(&o.output, "output", "o", "table", outputHelp("table"))
	f.StringVar(&o.file, "audit-log", "", "audit log file to read (default: $XDG_STATE_HOME/upgrade-console/audit.log)")
	return cmd
}

func runAudit(out, errOut io.Writer, o *auditOptions, now time.Time) error {
	since, err := parseSince(o.since, now)
	if err != nil {
		return err
	}
	if err := checkOutput(o.output, "table"); err != nil {
		return err
	}
	path := o.file
	if path == "" {
		if path, err = upgrade.DefaultAuditPath(); err != nil {
			// The log may be elsewhere (a copy): the state directory's
			// fix alone hid the flag that reads it without one.
			if se := (*upgrade.StateDirError)(nil); errors.As(err, &se) {
				return &model.InputError{Source: "audit log", Problem: "cannot find the state directory: " + se.Problem,
					Fix: "give the log's file with --audit-log, or " + upgrade.StateDirFix}
			}
			return err
		}
	} else if fi, err := os.Stat(path); err != nil {
		// The default log may not exist yet (nothing changed on this
		// machine); a file named on purpose that cannot be read is a mistake.
		return &model.InputError{Source: "--audit-log " + path, Problem: "cannot be read: " + pathErr(err),
			Fix: "give the audit log's path (default $XDG_STATE_HOME/upgrade-console/audit.log)"}
	} else if fi.IsDir() {
		// Read, it said "audit log line 1: read …: is a directory", naming
		// neither the flag nor the file to give.
		fix := "give the audit log file itself (default $XDG_STATE_HOME/upgrade-console/audit.log)"
		if in := filepath.Join(path, upgrade.AuditFileName); isFile(in) {
			fix = "give the log file in it: --audit-log " + in
		}
		return &model.InputError{Source: "--audit-log " + path, Problem: "is a directory, not an audit log", Fix: fix}
	}
	res, err := upgrade.ReadAudit(path, upgrade.AuditFilter{Cluster: o.cluster, Since: since, Console: o.console})
	if err != nil {
		return err
	}
	// A log whose only line was torn mid-write (a full disk) is a log: its
	// line is skipped with the warning a longer log's torn line has,
	// where it was called "not an audit log".
	onlyTorn := len(res.BadLines) == 1 && res.Torn == res.BadLines[0]
	if res.Read == 0 && len(res.BadLines) > 0 && !onlyTorn {
		// "No audit entries", exit 0, and a warning of skipped lines read
		// as an empty log: no line of it is an entry, so it is no audit log.
		return &model.InputError{Source: auditSource(o, path),
			Problem: fmt.Sprintf("is not an audit log: no line of it is an audit entry (%d read)%s", len(res.BadLines), longText(res)),
			Fix:     "give the console's audit log: one JSON entry per line (default $XDG_STATE_HOME/upgrade-console/audit.log)"}
	}
	if len(res.BadLines) > 0 {
		// A log of one torn line has no other entries to show: "the
		// other entries are shown" above "No audit entries" read as if
		// some had been.
		rest := "the other entries are shown"
		if res.Read == 0 {
			rest = "it was the log's only line (torn mid-write: no entry was completed)"
		}
		fmt.Fprintf(errOut, "warning: %s: %s; skipped, %s\n", path, linesText(res), rest)
	}
	unended := upgrade.Unended(res.Entries)
	if o.output != "table" {
		entries := make([]auditJSON, len(res.Entries))
		for i, e := range res.Entries {
			entries[i] = auditJSON{AuditEntry: e, NoEnd: unended[i]}
		}
		return writeDoc(out, o.output, entries)
	}
	if len(res.Entries) == 0 {
		fmt.Fprintf(out, "No audit entries in %s%s.\n", path, filterText(o))
		return nil
	}
	writeAuditTable(out, res.Entries, unended)
	return nil
}

// auditJSON is an entry as `audit -o json` prints it: the log's entry, and
// whether it starts an action with no end recorded (upgrade.Unended).
type auditJSON struct {
	upgrade.AuditEntry
	NoEnd bool `json:"noEnd,omitempty"`
}

// noEndNote marks a started action no later entry ends.
const noEndNote = "NO END RECORDED: still under way, or its console stopped before recording one; steps after its last entry may have run"

func writeAuditTable(out io.Writer, entries []upgrade.AuditEntry, unended []bool) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tWHO\tCLUSTER\tACTION\tSTEP\tOBJECT\tRESULT\tNOTES")
	for i, e := range entries {
		notes := auditNotes(e)
		if unended[i] {
			notes = strings.TrimPrefix(notes+"; "+noEndNote, "; ")
		}
		who := upgrade.Holder{User: e.User, Host: e.Host, Instance: e.Console}.String()
		// Who the cluster saw make the change: the identity impersonated
		// (with its groups, as given), else the one the API server
		// authenticated (a ServiceAccount's token run as root).
		switch {
		case e.As != "":
			who += " (as " + e.As + ")"
		case e.Authenticated != nil:
			who += " (as " + e.Authenticated.Username + ")"
		}
		// A log is read that others wrote (--audit-log), and its errors
		// quote the API server and webhooks: every cell is escaped.
		p := model.PrintableLine
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			e.Time.UTC().Format("2006-01-02 15:04:05Z"), p(who), p(e.Cluster), p(e.Action),
			p(dash(e.Step)), p(dash(e.Object)), p(e.Result), notes)
	}
	tw.Flush()
}

func auditNotes(e upgrade.AuditEntry) string {
	var n []string
	if e.DryRun && e.Result != upgrade.AuditDryRun {
		n = append(n, "dry-run")
	}
	if e.Forced {
		n = append(n, "FORCED")
	}
	if e.Delayed {
		n = append(n, "written late (the log refused it then)")
	}
	if len(e.Skipped) > 0 {
		n = append(n, "skipped "+model.PrintableLine(strings.Join(e.Skipped, ",")))
	}
	if e.Error != "" {
		n = append(n, "error: "+oneLine(e.Error))
	} else if e.Message != "" {
		n = append(n, oneLine(e.Message))
	}
	return strings.Join(n, "; ")
}

// parseSince accepts a duration back from now or an absolute RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, &model.InputError{Source: "--since", Problem: fmt.Sprintf("%q is neither a duration nor an RFC 3339 time", s),
		Fix: "use e.g. 90m, 24h or 2026-11-21T22:00:00Z"}
}

func filterText(o *auditOptions) string {
	var parts []string
	if o.cluster != "" {
		parts = append(parts, "cluster "+o.cluster)
	}
	if o.console != "" {
		parts = append(parts, "console "+o.console)
	}
	if o.since != "" {
		// "for since 10s" read badly.
		if _, err := time.ParseDuration(o.since); err == nil {
			parts = append(parts, "in the last "+o.since)
		} else {
			parts = append(parts, "since "+o.since)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine is a message as a cell: on one line, escaped, cut at 120
// characters (never inside one).
func oneLine(s string) string {
	s = model.Printable(strings.Join(strings.Fields(s), " "))
	if r := []rune(s); len(r) > 120 {
		s = string(r[:117]) + "..."
	}
	return s
}

func joinInts(ns []int, max int) string {
	var b strings.Builder
	for i, n := range ns {
		if i == max {
			fmt.Fprintf(&b, ", … (%d more)", len(ns)-max)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, n)
	}
	return b.String()
}

// auditSource names the log read: the flag that gave it, if one did.
func auditSource(o *auditOptions, path string) string {
	if o.file != "" {
		return "--audit-log " + path
	}
	return path
}

// linesText says which lines are not entries, "line 3" or "lines 3, 5",
// and which of them are too long to read: the numbers alone after a colon
// (": 1") read as a count.
func linesText(res upgrade.AuditReadResult) string {
	return linesAre(res.BadLines) + " not an audit entry" + longText(res)
}

func longText(res upgrade.AuditReadResult) string {
	if len(res.LongLines) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%s longer than %d MiB, not read)", linesAre(res.LongLines), upgrade.MaxAuditLine>>20)
}

func linesAre(ns []int) string {
	if len(ns) == 1 {
		return "line " + joinInts(ns, 10) + " is"
	}
	return "lines " + joinInts(ns, 10) + " are"
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// pathErr is err without the path an os.PathError repeats.
func pathErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
