package tui

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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

	// One machine written again (its phase shows), the others shared: the
	// log reads the changed one and keeps the highest version shown.
	next := synced
	next.Version = 9
	next.Machines = withChanged(synced.Machines, 2, func(m *model.Machine) { m.ResourceVersion, m.Phase = "2000", "Deleting" })
	a.Update(SnapshotMsg{State: &next})
	a.Update(frameMsg{})
	a.View()

	// A newer snapshot whose change is off screen (a resourceVersion
	// alone) draws the same frame: "same", so the benchmark does not wait
	// for a write that never comes.
	quiet := next
	quiet.Version = 10
	quiet.Machines = withChanged(next.Machines, 2, func(m *model.Machine) { m.ResourceVersion = "2100" })
	a.Update(SnapshotMsg{State: &quiet})
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
	want := []string{"first 0 0 0", "frame 7 1234 0", "synced 8 1234 1", "frame 9 2000 1", "same 10 2100 1"}
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

// The renderer's writes go to the frame log beside the frames, each line
// whole and stamped when the write began.
func TestWriteLogRecordsTerminalWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "frames")
	t.Setenv(FrameLogEnv, path)
	term, err := os.CreateTemp(t.TempDir(), "term")
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	out := NewPacer().output(term)
	before := time.Now().UnixNano()
	for _, frame := range []string{"frame one", "", "two"} {
		if _, err := out.Write([]byte(frame)); err != nil {
			t.Fatal(err)
		}
	}
	after := time.Now().UnixNano()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 {
		t.Fatalf("write log %q: want one line per write of some bytes", data)
	}
	for i, want := range []string{"9", "3"} {
		f := strings.Fields(lines[i])
		if len(f) != 3 || f[1] != "write" || f[2] != want {
			t.Fatalf("line %q: want <ns> write %s", lines[i], want)
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || ns < before || ns > after {
			t.Errorf("line %q: time not within the writes (%d..%d)", lines[i], before, after)
		}
	}
}

func TestNoWriteLogWhenUnset(t *testing.T) {
	t.Setenv(FrameLogEnv, "")
	if NewPacer().output(os.Stdout).log != nil {
		t.Fatal("the write log must be off unless asked for")
	}
}
