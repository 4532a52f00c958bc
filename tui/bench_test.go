package tui

import (
	"fmt"
	"testing"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
)

// Render benchmarks (issue 7: View() ≤ 2 ms per frame at 10,000 nodes).
//
// BenchmarkDashboardView measures the frame the renderer asks for: View()
// after the clock moved by a second, so every pane that shows "since"
// re-renders its visible rows (the worst steady-state frame).
// BenchmarkDashboardViewCached is a frame in which nothing changed.
// BenchmarkDashboardSnapshot is the Update-side cost of a new snapshot
// (progress derivation, row building, grouping), which runs at most ten
// times a second, off the frame path: with a changed machine list, and with
// the lists unchanged (an event or a condition moved), when rows are kept.

var benchSizes = [][2]int{{80, 24}, {200, 60}}
var benchNodes = []int{100, 1000, 10000}

func BenchmarkDashboardView(b *testing.B) {
	for _, n := range benchNodes {
		s := fixtureLarge(n)
		for _, sz := range benchSizes {
			b.Run(fmt.Sprintf("nodes=%d/%dx%d", n, sz[0], sz[1]), func(b *testing.B) {
				d := newTestDashboard(b, s, themes.Dark, sz[0], sz[1])
				d.expand = true
				d.buildPanes()
				d.relayout()
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					d.now = d.now.Add(1e9) // a new second: since columns change
					_ = d.View()
				}
			})
		}
	}
}

func BenchmarkDashboardViewCached(b *testing.B) {
	for _, n := range benchNodes {
		s := fixtureLarge(n)
		b.Run(fmt.Sprintf("nodes=%d/200x60", n), func(b *testing.B) {
			d := newTestDashboard(b, s, themes.Dark, 200, 60)
			_ = d.View()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_ = d.View()
			}
		})
	}
}

func BenchmarkDashboardSnapshot(b *testing.B) {
	for _, n := range benchNodes {
		s := fixtureLarge(n)
		for _, changed := range []bool{true, false} {
			name := fmt.Sprintf("nodes=%d/machines-changed", n)
			if !changed {
				name = fmt.Sprintf("nodes=%d/machines-same", n)
			}
			b.Run(name, func(b *testing.B) {
				d := newTestDashboard(b, s, themes.Dark, 200, 60)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					next := *s
					next.Version = s.Version + uint64(i) + 1
					if changed {
						// A new list, as the watchers publish after any
						// machine changed (the copy is part of the cost).
						b.StopTimer()
						next.Machines = append([]model.Machine(nil), s.Machines...)
						b.StartTimer()
					}
					d.state = &next
					d.rebuild()
				}
			})
		}
	}
}

// BenchmarkPaneView renders each pane alone at 200 columns with its clock
// moving, so its cache misses every time.
func BenchmarkPaneView(b *testing.B) {
	for _, n := range benchNodes {
		s := fixtureLarge(n)
		d := newTestDashboard(b, s, themes.Dark, 200, 60)
		d.expand = true
		d.buildPanes()
		for id := paneID(0); id < paneCount; id++ {
			b.Run(fmt.Sprintf("nodes=%d/%s", n, id), func(b *testing.B) {
				h := min(d.paneWant(id), 40)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					d.now = d.now.Add(1e9)
					_ = d.paneView(id, 200, h)
				}
			})
		}
	}
}
