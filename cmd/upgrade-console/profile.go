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
)

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
