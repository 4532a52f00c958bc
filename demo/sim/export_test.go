package sim

import (
	"context"
	"sync/atomic"
	"time"
)

// ComponentEKSA names the simulated EKS-A controller.
const ComponentEKSA = compEKSA

// CountReconciles counts the reconciles a controller of s has finished. Call
// it before Run.
func CountReconciles(s *Simulator, component string) *atomic.Int64 {
	n := &atomic.Int64{}
	for _, l := range s.loops {
		if l.name != component {
			continue
		}
		r := l.reconcile
		l.reconcile = func(ctx context.Context, k string) (time.Duration, error) {
			defer n.Add(1)
			return r(ctx, k)
		}
	}
	return n
}
