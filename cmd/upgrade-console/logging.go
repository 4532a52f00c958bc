package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// stateDir is where the console keeps its log and audit files:
// $XDG_STATE_HOME/upgrade-console, or ~/.local/state/upgrade-console.
func stateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "upgrade-console"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot find the state directory: set XDG_STATE_HOME: %w", err)
	}
	return filepath.Join(home, ".local", "state", "upgrade-console"), nil
}

// setupLogging sends klog (client-go's logger), the standard logger and API
// warnings to a file, never to the terminal the UI draws on.
func setupLogging(path string) error {
	if path == "" {
		dir, err := stateDir()
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
	return nil
}
