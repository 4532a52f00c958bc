package watchers

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// The upgrade lock is judged stale by the API server's clock where it can
// be (model.Lock.ExpiredWatched): the Lease's write time is the server's
// (managedFields), and the server's time when the Lease came is the Date
// of the response whose stream carried it, aged by this machine's clock
// since its headers came. A watch's Date is when the stream began, so
// the age counts from then, not from the event. Package upgrade reads the
// Date of its own reads likewise (servertime.go there); its recorder is
// its own, and package upgrade imports nothing of the watchers'.

// wrapServerDate is a rest.Config WrapTransport recording, with clock, the
// Date of each response to a request whose context carries a *serverDate.
func wrapServerDate(clock func() time.Time) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper { return &serverDateTransport{next: rt, clock: clock} }
}

type serverDateTransport struct {
	next  http.RoundTripper
	clock func() time.Time
}

func (t *serverDateTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if d, ok := req.Context().Value(serverDateKey{}).(*serverDate); ok && err == nil {
		d.record(resp.Header.Get("Date"), t.clock())
	}
	return resp, err
}

// WrappedRoundTripper lets client-go see through the wrapper.
func (t *serverDateTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

type serverDateKey struct{}

// serverDate is the Date of the last response to a list or watch of one
// informer, and when this machine received it. One informer lists or
// watches once at a time, and translates what a response carried before
// it sends the next request.
type serverDate struct {
	mu             sync.Mutex
	date, received time.Time
}

// with asks the requests made with the context it returns for their Date.
func (d *serverDate) with(ctx context.Context) context.Context {
	return context.WithValue(ctx, serverDateKey{}, d)
}

// record keeps the response's Date, or none when it has none that parses:
// an older response's Date aged on would do, but its stream is gone.
func (d *serverDate) record(header string, received time.Time) {
	date, err := http.ParseTime(header)
	d.mu.Lock()
	defer d.mu.Unlock()
	if header == "" || err != nil {
		d.date, d.received = time.Time{}, time.Time{}
		return
	}
	d.date, d.received = date, received
}

// at is the API server's time at now (this machine's): never later than
// its true time, the Date being truncated to the second and stamped
// before it was received. Zero when not known.
func (d *serverDate) at(now time.Time) time.Time {
	if d == nil {
		return time.Time{}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.date.IsZero() {
		return time.Time{}
	}
	return d.date.Add(max(now.Sub(d.received), 0))
}
