package main

import (
	"os"
	"runtime"
	"runtime/pprof"
)

// Profiling hooks for the benchmarks (bench/README.md): with
// UPGRADE_CONSOLE_CPUPROFILE the whole run is CPU-profiled, with
// UPGRADE_CONSOLE_MEMPROFILE a heap profile is written at exit. Unset, they
// cost two environment lookups. Failures are ignored: a profile must never
// stop the console.
const (
	envCPUProfile = "UPGRADE_CONSOLE_CPUPROFILE"
	envMemProfile = "UPGRADE_CONSOLE_MEMPROFILE"
	// envEventLog names the file the watchers trace applied watch events
	// to (watchers.Options.Trace): bench/e2e splits write → screen with it.
	envEventLog = "UPGRADE_CONSOLE_EVENTLOG"
)

// openEventLog opens the file envEventLog names; nil when unset or when it
// cannot be opened (the console runs regardless). A nil *os.File must not
// reach an io.Writer field: the caller checks.
func openEventLog() *os.File {
	path := os.Getenv(envEventLog)
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil
	}
	return f
}

// startProfiles starts what the environment asks for and returns the
// function that finishes it.
func startProfiles() func() {
	var stops []func()
	if path := os.Getenv(envCPUProfile); path != "" {
		if f, err := os.Create(path); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
			} else {
				f.Close()
			}
		}
	}
	if path := os.Getenv(envMemProfile); path != "" {
		stops = append(stops, func() {
			if f, err := os.Create(path); err == nil {
				runtime.GC()
				_ = pprof.WriteHeapProfile(f)
				f.Close()
			}
		})
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
}
