package model

import (
	"testing"
	"time"
)

// The summary under the plan table counts what changes: a component the spec
// keeps back (skipUpgrade) is neither a change nor "up to date".
func TestSummarizeChangesCountsSkippedApart(t *testing.T) {
	rows := func(kinds ...ChangeKind) []ComponentDiff {
		var out []ComponentDiff
		for _, k := range kinds {
			out = append(out, ComponentDiff{Change: k})
		}
		return out
	}
	for _, tc := range []struct {
		rows []ComponentDiff
		want string
	}{
		{rows(ChangeSkipped, ChangeMinor, ChangeNone), "1 of 3 components change: 1 minor; 1 skipped (the spec's skipUpgrade); 1 unchanged"},
		{rows(ChangeSkipped, ChangeNone), "0 of 2 components change; 1 skipped (the spec's skipUpgrade); 1 unchanged"},
		{rows(ChangeMinor), "1 of 1 component changes: 1 minor"},
	} {
		if got := SummarizeChanges(tc.rows); got != tc.want {
			t.Errorf("summary = %q\nwant      %q", got, tc.want)
		}
	}
}

// The kubernetes rows of worker groups pinned to their own version are
// counted as groups after the components, not as components: a cluster of
// 18 components with two pinned groups read "… of 20 components change".
func TestSummarizeChangesCountsWorkerGroupsApart(t *testing.T) {
	rows := []ComponentDiff{
		{Key: "cilium", Change: ChangeMinor},
		{Key: KeyKubernetes, Change: ChangeMinor},
		{Key: KeyKubernetes, Change: ChangePatch, WorkerGroups: []string{"md-1", "md-2"}},
		{Key: KeyKubernetes, Change: ChangeNone, WorkerGroups: []string{"md-3"}},
		{Key: "flux", Change: ChangeNone},
	}
	want := "2 of 3 components change: 2 minor; 1 unchanged; the kubernetes of 3 worker groups on their own version: 2 patch, 1 unchanged"
	if got := SummarizeChanges(rows); got != want {
		t.Errorf("summary = %q\nwant      %q", got, want)
	}
	// Components all up to date, one group's EKS-D rebuilt: not "all up to date" alone.
	rows = []ComponentDiff{{Key: "cilium", Change: ChangeNone}, {Key: KeyKubernetes, Change: ChangeRebuild, WorkerGroups: []string{"md-1"}}}
	want = "all components are up to date; the kubernetes of 1 worker group on its own version: 1 rebuild"
	if got := SummarizeChanges(rows); got != want {
		t.Errorf("summary = %q\nwant      %q", got, want)
	}
}

// A failed upgrade's time stops when it failed: the header's elapsed time
// does not keep counting up under "failed".
func TestTimelineStopsWhenTheUpgradeFails(t *testing.T) {
	var tl Timeline
	tl = tl.Observe(progressWith(PhaseEtcd, map[Phase]PhaseStatus{PhaseComponents: PhaseOK, PhaseEtcd: PhaseActive}, nil), t0)
	tl = tl.Observe(progressWith(PhaseFailed, map[Phase]PhaseStatus{PhaseComponents: PhaseOK, PhaseEtcd: PhaseBroken}, nil), t0.Add(5*time.Minute))
	if tl.Finished != t0.Add(5*time.Minute) {
		t.Errorf("finished = %s, want the moment it was seen failed (%s)", tl.Finished, t0.Add(5*time.Minute))
	}
}

// A start ahead of the local clock (the API server's clock is ahead, or the
// spec change is stamped by it) is no negative elapsed time.
func TestTimelineElapsedNeverNegative(t *testing.T) {
	e := TimelineEntry{Started: t0.Add(time.Minute)}
	if got := e.Elapsed(t0); got != 0 {
		t.Errorf("elapsed = %s, want 0", got)
	}
}
