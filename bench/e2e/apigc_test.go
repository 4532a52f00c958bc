package main

import (
	"bytes"
	"math"
	"testing"
	"time"
)

func TestGCTraceWindow(t *testing.T) {
	base := time.Unix(1_000, 0)
	var clock time.Time
	var out bytes.Buffer
	g := newGCTrace(&out)
	g.now = func() time.Time { return clock }

	// Lines as kube-apiserver prints them, split across writes and mixed
	// with etcd's output.
	clock = base.Add(10 * time.Second) // a 4 s mark ending at 10 s
	mustWrite(t, g, `{"level":"info","msg":"saved snapshot"}`+"\ngc 70 @223.339s 14%: 0.26+3999.7+0.04 ms clock, 0.52+1289/2122/2.8+0.082 ms cpu, 2809->3310->1685 MB, 3300 MB goal, 2 MB stacks, 0 MB globals, 2 P\ngc 71 @2")
	clock = base.Add(25 * time.Second) // a 10 s mark ending at 25 s
	mustWrite(t, g, "31.788s 14%: 2.2+9997.7+0.1 ms clock, 4.4+3260/4837/0+0.22 ms cpu, 2872->3398->1762 MB, 3373 MB goal, 4 MB stacks, 0 MB globals, 2 P\n")
	clock = base.Add(40 * time.Second) // outside the window below
	mustWrite(t, g, "gc 72 @246.696s 15%: 1.9+998+0.1 ms clock, 3.8+1989/2858/0+0.061 ms cpu, 3006->3554->1900 MB, 3531 MB goal, 19 MB stacks, 0 MB globals, 2 P\n")

	if !bytes.Contains(out.Bytes(), []byte("saved snapshot")) || !bytes.Contains(out.Bytes(), []byte("gc 72")) {
		t.Errorf("output not passed on: %q", out.String())
	}
	// [8 s, 20 s): the first mark's last 2 s, the second's first 5 s.
	got := g.window(base.Add(8*time.Second), base.Add(20*time.Second))
	if got == nil {
		t.Fatal("no window")
	}
	want := APIServerGC{Cycles: 2, MarkPct: 100 * 7.0 / 12, MarkMaxMs: 10000, AssistCPUSeconds: 4.549, LiveHeapMB: 1762}
	if got.Cycles != want.Cycles || got.LiveHeapMB != want.LiveHeapMB ||
		math.Abs(got.MarkPct-want.MarkPct) > 0.01 || math.Abs(got.MarkMaxMs-want.MarkMaxMs) > 0.01 ||
		math.Abs(got.AssistCPUSeconds-want.AssistCPUSeconds) > 0.0001 {
		t.Errorf("window = %+v, want %+v", *got, want)
	}
	if got := g.window(base.Add(41*time.Second), base.Add(50*time.Second)); got.Cycles != 0 || got.MarkPct != 0 {
		t.Errorf("a window with no collection = %+v", *got)
	}
	var none *gcTrace
	if none.window(base, base.Add(time.Second)) != nil {
		t.Error("without --apiserver-gctrace a window reports a collector")
	}
}

func mustWrite(t *testing.T, g *gcTrace, s string) {
	t.Helper()
	if n, err := g.Write([]byte(s)); err != nil || n != len(s) {
		t.Fatalf("Write = %d, %v", n, err)
	}
}

func TestWithGCTrace(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{nil, []string{"GODEBUG=gctrace=1"}},
		{[]string{"GOGC=400"}, []string{"GOGC=400", "GODEBUG=gctrace=1"}},
		{[]string{"GODEBUG=madvdontneed=1"}, []string{"GODEBUG=madvdontneed=1,gctrace=1"}},
		{[]string{"GODEBUG="}, []string{"GODEBUG=gctrace=1"}},
	} {
		got := withGCTrace(c.in)
		if len(got) != len(c.want) {
			t.Errorf("withGCTrace(%q) = %q, want %q", c.in, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("withGCTrace(%q) = %q, want %q", c.in, got, c.want)
			}
		}
	}
}

// A collection still marking when a window closes is printed after it: the
// windows are filled in once the run is over, so it still counts.
func TestGCWindowsCountAMarkSpanningTheEnd(t *testing.T) {
	base := time.Unix(2_000, 0)
	g := newGCTrace(nil)
	nv := &NoViewer{Rate: &Unviewed{from: base, to: base.Add(10 * time.Second)}}
	g.now = func() time.Time { return base.Add(12 * time.Second) } // 4 s mark from 8 s to 12 s
	mustWrite(t, g, "gc 9 @30.000s 14%: 0.1+3999.8+0.1 ms clock, 0.2+500/900/0+0.1 ms cpu, 2000->2400->1500 MB, 2300 MB goal, 2 MB stacks, 0 MB globals, 2 P\n")
	nv.gcWindows(g)
	got := nv.Rate.APIServerGC
	if got == nil || got.Cycles != 1 || math.Abs(got.MarkPct-20) > 0.01 {
		t.Errorf("window = %+v, want the mark's 2 s inside it (20 %%)", got)
	}
	(*NoViewer)(nil).gcWindows(g) // no no-viewer windows: nothing to do
}
