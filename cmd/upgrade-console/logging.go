package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"sync/atomic"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/upgrade-console/upgrade-console/upgrade"
)

// setupLogging sends klog (client-go's logger), the standard logger and API
// warnings to a file, never to the terminal the UI draws on.
func setupLogging(path string) error {
	if path == "" {
		// An offline plan in a CI container with a read-only HOME, or
		// none, needs no state: the logs go nowhere, never to the
		// terminal, and the commands that do need the state directory
		// (the audit log, snapshots) say so themselves.
		dir, err := upgrade.StateDir()
		if err == nil {
			err = os.MkdirAll(dir, 0o700)
		}
		if err != nil {
			// No state directory (HOME unset) says its fix itself, which
			// --log-file joins: said twice, the fixes read as two
			// problems.
			msg := fmt.Sprintf("%v (set --log-file, or XDG_STATE_HOME to a writable directory)", err)
			if se := (*upgrade.StateDirError)(nil); errors.As(err, &se) {
				msg = fmt.Sprintf("cannot find the state directory: %s (fix: set --log-file, or %s)", se.Problem, upgrade.StateDirFix)
			}
			fmt.Fprintf(os.Stderr, "upgrade-console: logs discarded: %s\n", msg)
			return logTo(io.Discard)
		}
		path = filepath.Join(dir, "upgrade-console.log")
	}
	// A directory the operator named is never created: a typo would
	// otherwise put the log where nobody looks for it.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		fix := "name a file in a directory this user can write, or leave --log-file out for the default"
		if errors.Is(err, fs.ErrNotExist) {
			fix = "create the directory " + filepath.Dir(path) + " first, or name a file in one that exists"
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return badFlag("--log-file", fmt.Errorf("%s: %w", path, err), fix)
	}
	return logTo(f)
}

// logTo sends klog, the standard logger, controller-runtime's logger and API
// warnings to w.
func logTo(w io.Writer) error {
	kf := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(kf)
	_ = kf.Set("logtostderr", "false")
	_ = kf.Set("alsologtostderr", "false")
	_ = kf.Set("stderrthreshold", "FATAL")
	klog.SetOutput(w)
	klog.LogToStderr(false)
	log.SetOutput(w)
	// controller-runtime's logger (envtest's, which starts the demo's
	// control plane) goes through klog. Never set, it dropped every line
	// and, once the process was 30 s old, printed "log.SetLogger(...) was
	// never called" and a stack trace on the terminal: a control plane
	// slow to start on a loaded machine put one under the demo's progress
	// lines. It takes the first logger it is given, for the process.
	ctrllog.SetLogger(klog.NewKlogr())
	rest.SetDefaultWarningHandler(rest.NewWarningWriter(w, rest.WarningWriterOptions{Deduplicate: true}))
	loggingToFile.Store(true)
	return nil
}

// loggingToFile is set once klog writes to the log file: before, a stack
// logged would land on the terminal.
var loggingToFile atomic.Bool
