package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
)

// The frame log is what bench/e2e reads; its lines must say which frame
// first showed which snapshot, and nothing for frames that show no news.
func TestFrameLogRecordsFramesThatShowNews(t *testing.T) {
	path := filepath.Join(t.TempDir(), "frames")
	t.Setenv(FrameLogEnv, path)
	a := newTestApp(Options{Theme: themes.Mono})
	a.View() // no snapshot yet: the first frame says "syncing"

	s := fixtureHealthy()
	s.Version = 7
	s.Machines.At(0).ResourceVersion = "1234"
	s.Machines.At(1).ResourceVersion = "99"
	a.Update(SnapshotMsg{State: s})
	a.View()
	a.View() // same snapshot: nothing new to log

	synced := *s
	synced.Version = 8
	synced.Sources = allSynced(false)
	synced.Sources[model.KindNodeKubeadmUpgrade] = model.SourceStatus{}
	// Inside the frame interval the dashboard defers the rebuild: the
	// frame still shows version 7 and must not claim 8.
	a.Update(SnapshotMsg{State: &synced})
	a.View()
	a.Update(frameMsg{})
	a.View()

	// One machine written again, the others shared: the log reads the
	// changed one and keeps the highest version shown.
	next := synced
	next.Version = 9
	next.Machines = withChanged(synced.Machines, 2, func(m *model.Machine) { m.ResourceVersion = "2000" })
	a.Update(SnapshotMsg{State: &next})
	a.Update(frameMsg{})
	a.View()

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(l)
		if len(f) != 6 {
			t.Fatalf("line %q: want 6 fields", l)
		}
		got = append(got, strings.Join(f[1:5], " "))
	}
	want := []string{"first 0 0 0", "frame 7 1234 0", "synced 8 1234 1", "frame 9 2000 1"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("frame log:\n%s\nwant (after the time):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestNoFrameLogWhenUnset(t *testing.T) {
	t.Setenv(FrameLogEnv, "")
	if a := newTestApp(Options{Theme: themes.Mono}); a.flog != nil {
		t.Fatal("the frame log must be off unless asked for")
	}
}
