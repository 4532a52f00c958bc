// Package serverdate records the API server's clock as its responses state
// it: the Date header of a response, and when this machine received it.
// The upgrade lock is judged stale by that clock where it can be
// (model.Lock.ExpiredByServer): the Lease's renewTime is the holder's
// clock, and against this machine's a holder whose clock ran a minute
// behind read as stale while it renewed, one ahead as live long after it
// died. Package upgrade reads the Date of its own reads of the Lease, and
// the watchers that of the lock Lease's list and watch; both record it
// here.
package serverdate

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/upgrade-console/upgrade-console/model"
)

// Wrap is a rest.Config WrapTransport: it records, with clock, the Date of
// each response to a request whose context carries a Recorder (With).
func Wrap(clock func() time.Time) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper { return &transport{next: rt, clock: clock} }
}

type transport struct {
	next  http.RoundTripper
	clock func() time.Time
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if d, ok := req.Context().Value(key{}).(*Recorder); ok && err == nil {
		d.record(resp.Header.Get("Date"), t.clock())
	}
	return resp, err
}

// WrappedRoundTripper lets client-go see through the wrapper (as its own
// wrappers do).
func (t *transport) WrappedRoundTripper() http.RoundTripper { return t.next }

type key struct{}

// Recorder is the API server's Date of the last response to a request
// made with its context, and when this machine received it. A client
// without Wrap leaves it unknown.
type Recorder struct {
	mu             sync.Mutex
	date, received time.Time
}

// With asks the requests made with the context it returns for their
// response's Date, recorded in d.
func With(ctx context.Context, d *Recorder) context.Context {
	return context.WithValue(ctx, key{}, d)
}

// record keeps the last response's Date, or none when it had none that
// parses: a retry's answer is the one read, and an earlier response's Date
// is not that answer's.
func (d *Recorder) record(header string, received time.Time) {
	date, err := http.ParseTime(header)
	d.mu.Lock()
	defer d.mu.Unlock()
	if header == "" || err != nil {
		d.date, d.received = time.Time{}, time.Time{}
		return
	}
	d.date, d.received = date, received
}

// Get is the last Date recorded and when it was received; zero when none.
func (d *Recorder) Get() (date, received time.Time) {
	if d == nil {
		return time.Time{}, time.Time{}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.date, d.received
}

// At is the API server's time at now (this machine's), by the last Date
// (model.ServerTimeAt); zero when none.
func (d *Recorder) At(now time.Time) time.Time {
	date, received := d.Get()
	return model.ServerTimeAt(date, received, now)
}
