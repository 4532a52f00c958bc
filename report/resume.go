package report

import (
	"time"

	"github.com/upgrade-console/upgrade-console/model"
)

// StoppedAfter is a gap between two looks, by the wall clock, that only a
// process that did not run makes (Ctrl-Z, SIGSTOP, a laptop asleep): the
// watch and the dashboard look every second. Their cache is as old as the
// gap, and the first derivation after it aged every wait by the whole gap
// ("waiting for X for 40m"), taken back a second later when the informers
// caught up.
const StoppedAfter = 30 * time.Second

// CatchUpFor is how long after such a gap stalls, the lock's staleness and
// the outcome wait: the informers' watches resume or relist within a second
// or two, and a connection that died meanwhile is found dead within the
// HTTP/2 health check's 15 s (cmd/upgrade-console/http2.go), after which the
// snapshots say reconnecting. The first event after the gap is no sign of
// being caught up: it comes from one informer, not all, and a cluster that
// did not change sends none.
const CatchUpFor = 20 * time.Second

// Resume tells the looks of a watch that did not run for a while, and the
// catch-up that follows them. Its zero value has seen no look.
type Resume struct {
	lookedAt, until time.Time
	// seenAt is the last look before the latest stop.
	seenAt time.Time
}

// Look records a look at now. It returns the gap since the last look when
// the gap says the process did not run, and starts the catch-up.
func (r *Resume) Look(now time.Time) (gap time.Duration, stopped bool) {
	last := r.lookedAt
	r.lookedAt = now
	// By the wall clock: Go's monotonic clock stops while the machine
	// sleeps, the clock the objects' times are read against does not.
	gap = now.Round(0).Sub(last.Round(0))
	if last.IsZero() || gap < StoppedAfter {
		return 0, false
	}
	r.until, r.seenAt = now.Add(CatchUpFor), last.Round(0)
	return gap, true
}

// SeenAt is, while catching up at now, the last look before the stop: what
// changed between it and now changed unseen. Zero otherwise.
func (r *Resume) SeenAt(now time.Time) time.Time {
	if !r.CatchingUp(now) {
		return time.Time{}
	}
	return r.seenAt
}

// Looked moves the last look to now without judging the gap: after a look
// that took its time (a slow write is the watch running, not stopped).
func (r *Resume) Looked(now time.Time) { r.lookedAt = now }

// CatchingUp reports whether now falls in the catch-up after a stop.
func (r *Resume) CatchingUp(now time.Time) bool { return now.Before(r.until) }

// ResumedText is what a watch says on its first look after a stop.
func ResumedText(gap time.Duration) string {
	return "resumed after " + model.ShortDuration(gap) + " stopped; catching up"
}

// SaidStalls keeps of the stalls derived while catching up those already
// said (prev) and the failed steps, which are not a matter of time: a new
// stall then rests on the age of what the watch did not see, and one said
// before stays said until the watch knows better.
func SaidStalls(prev, cur []model.Stall) []model.Stall {
	said := map[string]bool{}
	for _, s := range prev {
		said[string(s.Kind)+"/"+s.Name] = true
	}
	var out []model.Stall
	for _, s := range cur {
		if s.Failed || said[string(s.Kind)+"/"+s.Name] {
			out = append(out, s)
		}
	}
	return out
}
