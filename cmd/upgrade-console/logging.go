package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sync/atomic"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/upgrade-console/upgrade-console/upgrade"
)

// setupLogging sends klog (client-go's logger), the standard logger and API
// warnings to a file, never to the terminal the UI draws on.
func setupLogging(path string) error {
	if path == "" {
		dir, err := upgrade.StateDir()
		if err != nil {
			return err
		}
		path = filepath.Join(dir, "upgrade-console.log")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("--log-file %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("--log-file %s: %w", path, err)
	}
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(f)
	klog.LogToStderr(false)
	log.SetOutput(f)
	rest.SetDefaultWarningHandler(rest.NewWarningWriter(f, rest.WarningWriterOptions{Deduplicate: true}))
	loggingToFile.Store(true)
	return nil
}

// loggingToFile is set once klog writes to the log file: before, a stack
// logged would land on the terminal.
var loggingToFile atomic.Bool
