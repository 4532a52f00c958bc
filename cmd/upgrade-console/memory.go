package main

import (
	"os"
	"runtime/debug"
)

// memoryLimit is the soft limit of the Go heap (and the runtime's other
// memory) of the console. Without it the garbage collector lets the heap
// grow to twice what is live: at 10,000 nodes (~30,000 cached objects)
// about 85 MB are live at the end of the first sync, so the heap peaked at
// ~170 MB and the resident set at ~218 MiB (bench/results.json), above the
// 200 MB the console is meant to hold. With the limit the collector runs
// sooner instead; it costs a little CPU while the caches fill and nothing
// when idle. Above the limit (a fleet much larger than 10,000 nodes) the
// runtime keeps the collector under half the CPU and lets the heap grow, so
// the limit never starves the console. GOMEMLIMIT overrides it.
const memoryLimit = 110 << 20

func limitMemory() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(memoryLimit)
}
