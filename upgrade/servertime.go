package upgrade

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// Whether the upgrade lock is renewed is judged by the API server's clock
// where it can be: the Lease's renewTime is the holder's clock, and against
// this machine's a holder whose clock ran a minute behind read as stale
// while it renewed (and was cleared), one ahead as live long after it died.
// The API server's time of the last write is in managedFields
// (model.Lock.Written); its time now is the Date header of the very
// response that carried the Lease, aged to the moment judged by this
// machine's monotonic clock.
//
// The Date rather than the time of a write of the console's own: `lock
// status` and plan only read, with an identity that may be allowed no
// more. The Date of that one response rather than an offset kept from
// earlier ones: behind a load balancer another response may come from
// another API server, and the Lease's write time and the Date then share
// one clock unless the write was served by another (the control-plane
// nodes' clocks are then compared, a much smaller error than two
// operators' laptops). A proxy forwards the API server's Date (RFC 9110
// 6.6.1); one that writes its own from a clock behind is caught as a
// "now" before the write (model.Lock.ExpiredByServer), and a response
// with no Date falls back to this machine's clock, said so.

// WrapServerDate is a rest.Config WrapTransport: it records the Date of
// each response to a request whose context asks for it (withResponseDate).
func WrapServerDate(rt http.RoundTripper) http.RoundTripper { return &serverDateTransport{next: rt} }

type serverDateTransport struct{ next http.RoundTripper }

func (t *serverDateTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if d, ok := req.Context().Value(responseDateKey{}).(*responseDate); ok && err == nil {
		d.record(resp.Header.Get("Date"), time.Now())
	}
	return resp, err
}

// WrappedRoundTripper lets client-go see through the wrapper (as its own
// wrappers do).
func (t *serverDateTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

type responseDateKey struct{}

// responseDate is the API server's Date of the last response to a request
// made with its context, and when this machine received it.
type responseDate struct {
	mu             sync.Mutex
	date, received time.Time
}

// withResponseDate asks the requests made with the context it returns for
// their response's Date. A client without WrapServerDate leaves it unknown.
func withResponseDate(ctx context.Context) (context.Context, *responseDate) {
	d := &responseDate{}
	return context.WithValue(ctx, responseDateKey{}, d), d
}

// record keeps the last response's Date, or none when it had none that
// parses: a retry's answer is the one read, and an earlier response's Date
// is not that answer's.
func (d *responseDate) record(header string, received time.Time) {
	date, err := http.ParseTime(header)
	d.mu.Lock()
	defer d.mu.Unlock()
	if header == "" || err != nil {
		d.date, d.received = time.Time{}, time.Time{}
		return
	}
	d.date, d.received = date, received
}

func (d *responseDate) get() (date, received time.Time) {
	if d == nil {
		return time.Time{}, time.Time{}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.date, d.received
}

// serverNow is the API server's time at now (this machine's), from a Date
// received at received: never later than the server's true time, since the
// Date is truncated to the second and was stamped before it was received.
// Zero when there was no Date. A now before received (a test's fixed
// clock) counts as received.
func serverNow(date, received, now time.Time) time.Time {
	if date.IsZero() {
		return time.Time{}
	}
	return date.Add(max(now.Sub(received), 0))
}
