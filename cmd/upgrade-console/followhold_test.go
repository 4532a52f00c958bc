package main

import (
	"strings"
	"testing"
	"time"

	"github.com/upgrade-console/upgrade-console/model"
)

// A --timeout that ends the follow before the failure's grace is said on
// the notice: "the upgrade fails at 07:06" read as the verdict this
// command would give, where it stops with exit 5 before then.
func TestFollowHoldSaysTheTimeoutComesFirst(t *testing.T) {
	until := time.Date(2026, 5, 4, 10, 10, 0, 0, time.UTC)
	for _, tc := range []struct {
		stopAt time.Time
		want   bool
	}{
		{time.Time{}, false},
		{until.Add(-5 * time.Minute), true},
		{until.Add(time.Minute), false},
	} {
		var out strings.Builder
		f := &followPrinter{out: &out, day: time.Now().UTC().Format(time.DateOnly), stopAt: tc.stopAt}
		f.onHold("still failing after 1m: boom; the upgrade fails at 10:10:00 UTC (in 9m) unless it clears first", model.Hold{Until: until})
		said := strings.Contains(out.String(), "; this console stops following at 10:05:00 UTC (--timeout), before then")
		if said != tc.want || !strings.Contains(out.String(), "! still failing after 1m: boom") {
			t.Errorf("stop at %s: %q", tc.stopAt, out.String())
		}
	}
}

// The follow looks once a second: a rollout that ended between two looks
// went from "workers: 2/4 nodes" straight to "every completion milestone
// met", and a CI log never showed the end state. It says the phase's end
// first, once, unless it is the line said last.
func TestFollowSaysTheLastPhasesEndBeforeCompletion(t *testing.T) {
	workers := func(status model.PhaseStatus, detail string) []model.PhaseProgress {
		return []model.PhaseProgress{{Phase: model.PhaseEtcd, Status: model.PhaseOK, Detail: "3/3 members upgraded and ready"},
			{Phase: model.PhaseWorkers, Status: status, Detail: detail}}
	}
	under := model.Progress{Current: model.PhaseWorkers, Phases: workers(model.PhaseActive, "2/4 nodes upgraded and ready"), Summary: "workers: 2/4 nodes upgraded and ready · 1 stalled"}
	done := model.Progress{Current: model.PhaseDone, Complete: true, Phases: workers(model.PhaseOK, "4/4 nodes upgraded and ready"), Summary: "every completion milestone met; confirming it holds for 5s"}
	var out strings.Builder
	f := &followPrinter{out: &out, day: time.Now().UTC().Format(time.DateOnly)}
	f.onProgress(under)
	f.onProgress(done)
	done.Summary = "done: every completion milestone met"
	f.onProgress(done)
	got := out.String()
	want := []string{"workers: 2/4 nodes upgraded and ready · 1 stalled", "workers: 4/4 nodes upgraded and ready", "every completion milestone met; confirming", "done: every"}
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != len(want) {
		t.Fatalf("said:\n%s\nwant %d lines: %q", got, len(want), want)
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d: %q, want %q", i, lines[i], w)
		}
	}
	// Said already, the end is not said again.
	out.Reset()
	f = &followPrinter{out: &out, day: time.Now().UTC().Format(time.DateOnly)}
	under.Phases, under.Summary = done.Phases, "workers: 4/4 nodes upgraded and ready"
	under.Phases[1].Status = model.PhaseActive
	f.onProgress(under)
	f.onProgress(done)
	if n := strings.Count(out.String(), "4/4 nodes"); n != 1 {
		t.Errorf("the end said %d times:\n%s", n, out.String())
	}
	// A phase that ended between two looks, the next under way: its end
	// first ("etcd: 2/3" went straight to the workers' line).
	out.Reset()
	f = &followPrinter{out: &out, day: time.Now().UTC().Format(time.DateOnly)}
	etcd := model.Progress{Current: model.PhaseEtcd, Phases: []model.PhaseProgress{{Phase: model.PhaseEtcd, Status: model.PhaseActive, Detail: "2/3 members upgraded and ready"}},
		Summary: "etcd: 2/3 members upgraded and ready"}
	f.onProgress(etcd)
	f.onProgress(model.Progress{Current: model.PhaseWorkers, Phases: workers(model.PhaseActive, "0/4 nodes upgraded and ready"), Summary: "workers: 0/4 nodes upgraded and ready"})
	if got := out.String(); !strings.Contains(got, "etcd: 2/3 members upgraded and ready\n") || !strings.Contains(got, "etcd: 3/3 members upgraded and ready\n") ||
		strings.Index(got, "etcd: 3/3") > strings.Index(got, "workers: 0/4") {
		t.Errorf("a phase that ended between two looks:\n%s", got)
	}
}
