package upgrade

import (
	"context"

	"github.com/upgrade-console/upgrade-console/serverdate"
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

// withResponseDate asks the requests made with the context it returns for
// their response's Date (the client wraps its transport with
// serverdate.Wrap; one that does not leaves it unknown).
func withResponseDate(ctx context.Context) (context.Context, *serverdate.Recorder) {
	d := &serverdate.Recorder{}
	return serverdate.With(ctx, d), d
}
