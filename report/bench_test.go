package report

import (
	"fmt"
	"testing"

	"github.com/upgrade-console/upgrade-console/model"
)

// BenchmarkChanges is the plain watch's cost per snapshot: comparing two
// snapshots of a fleet in which one machine changed.
func BenchmarkChanges(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			prev := etcdRollout(n)
			// As the watchers build it: the other objects shared, the
			// changed one replaced.
			cur := *prev
			cur.Version++
			last := prev.Machines.Len() - 1
			m := *prev.Machines.At(last)
			m.Phase = "Deleting"
			cur.Machines = prev.Machines.With(map[int]*model.Machine{last: &m})
			pp, cp := derive(prev), derive(&cur)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if lines := Changes(prev, &cur, pp, cp, t0); len(lines) == 0 {
					b.Fatal("no change found")
				}
			}
		})
	}
}
