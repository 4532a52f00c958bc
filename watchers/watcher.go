// Package watchers turns the management cluster's objects into model
// snapshots: one shared informer per kind, scoped to the cluster being
// upgraded, each object translated once into a small model value, and
// immutable model.ClusterState snapshots published at most every MinInterval.
//
// The data path follows k9s's (informers, an access check before each, no
// blocking on cache sync) but not its refresh loop: nothing here polls the
// API server. After the initial discovery, the only requests are the
// informers' watches (plus one on CustomResourceDefinitions, so kinds
// installed or removed mid-upgrade are followed, and EventHistory when an
// operator opens a machine's detail), so an idle console costs the API
// server nothing and a write reaches the screen as soon as its watch
// event arrives.
//
// Memory at fleet scale: informers cache the translated model values, not
// the API objects (see entry and translate.go), writes the console cannot
// see publish nothing, and a snapshot shares every list that did not change
// with the previous one.
package watchers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/serverdate"
)

// Options configure a Watcher.
type Options struct {
	// Config reaches the management cluster's API server.
	Config *rest.Config
	// ClusterName is the EKS-A Cluster to follow.
	ClusterName string
	// ClusterNamespace holds the EKS-A Cluster; empty means "default".
	ClusterNamespace string
	// SystemNamespace holds the objects EKS-A generates (CAPI, etcd, in-place
	// upgrade kinds); empty means eksa-system.
	SystemNamespace string
	// Context is the kubeconfig context, copied into snapshots for the header.
	Context string
	// Conn are the console's connection flags, copied into snapshots for
	// the commands the console prints.
	Conn model.ConnFlags
	// MinInterval is the least time between two snapshots: a burst of
	// changes within it is coalesced into one. Empty means 100ms (at most ten
	// snapshots a second, the dashboard's redraw rate).
	MinInterval time.Duration
	// NodeUpgradeLabel is the node label that marks a node being upgraded;
	// empty means model.LabelUpgradeInProgress. Nodes keep this label.
	NodeUpgradeLabel string
	// MaxEvents is how many events a snapshot carries, newest first; empty
	// means 200.
	MaxEvents int
	// Clock stamps snapshots and connection changes; nil means time.Now.
	Clock func() time.Time
	// Pace, when set, moves a held-back snapshot's time: given the earliest
	// time it may be taken (MinInterval after the last), it returns when to
	// take it, at or after that. A change after a quiet spell is published
	// at once all the same. The dashboard sets it so that a
	// snapshot is taken just before the terminal is written and holds every
	// change until then (tui.Pacer). Nil: at the earliest.
	Pace func(earliest time.Time) time.Time
	// Trace, when set, gets a line "<unix ns> <resource> <resourceVersion>"
	// for every watch event applied to the state the next snapshot is taken
	// from. The end-to-end benchmark reads it to tell the API server's share
	// of write → screen (until the event is applied) from the console's
	// (coalescing, drawing). Nil costs nothing.
	Trace io.Writer
	// Begin, when set, holds discovery and the informers back until it is
	// closed, for at most beginWithin; the first snapshot (nothing synced)
	// is published at once all the same. The dashboard's tui.Pacer closes it
	// once the first frame is on the terminal: at 10,000 nodes the API server's
	// answers to the initial lists, and their decoding, take both cores of a
	// small machine for seconds, and the first frame waited for a CPU.
	Begin <-chan struct{}
}

// beginWithin is the longest Options.Begin holds the watch back: a terminal
// that takes longer to show the first frame does not hold up the data.
const beginWithin = time.Second

func (o Options) withDefaults() Options {
	if o.ClusterNamespace == "" {
		o.ClusterNamespace = "default"
	}
	if o.SystemNamespace == "" {
		o.SystemNamespace = model.SystemNamespace
	}
	if o.MinInterval <= 0 {
		o.MinInterval = 100 * time.Millisecond
	}
	if o.NodeUpgradeLabel == "" {
		o.NodeUpgradeLabel = model.LabelUpgradeInProgress
	}
	if o.MaxEvents <= 0 {
		o.MaxEvents = 200
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	return o
}

// Watcher follows one EKS-A cluster and publishes snapshots of it.
type Watcher struct {
	opts Options
	cfg  *rest.Config

	updates chan *model.ClusterState
	latest  atomic.Pointer[model.ClusterState]
	kick    chan struct{}
	started atomic.Bool

	mu        sync.Mutex // guards everything below
	version   uint64
	conn      model.ConnectionState
	connSince time.Time
	everLive  bool
	discovery error  // last discovery error, nil once discovery succeeded
	connErr   string // why the connection is not live (connectionErrLocked)
	clients   clients
	wg        sync.WaitGroup // informer goroutines
	insts     []*instance
	sources   map[model.Kind]model.SourceStatus // kinds without an informer (not installed)
	st        *stores

	traceMu  sync.Mutex // guards traceBuf; informers apply events concurrently
	traceBuf []byte

	// fatal is the first panic of the watcher's own code, caught by
	// contain; stopRun then ends Run, which returns it.
	fatal   atomic.Pointer[model.InternalError]
	stopRun atomic.Pointer[context.CancelFunc]
}

// contain, deferred directly at the top of each goroutine and callback of
// the watcher's own code, turns a panic (a bug of the console's, say on an
// object shaped as it did not expect) into an end of the watch that the
// operator sees as an error: the process does not die with the terminal
// left in the dashboard's mode. Nothing the watcher holds can be trusted
// after a panic, so every informer stops. The stack goes to the log file.
// The place is what it was doing, and the kind when spec is not nil: the
// two are joined only on a panic, so that a deferred contain on every event
// costs no allocation.
func (w *Watcher) contain(doing string, spec *kindSpec) {
	r := recover()
	if r == nil {
		return
	}
	if w == nil {
		panic(r)
	}
	where := place(doing, spec)
	if w.fatal.CompareAndSwap(nil, &model.InternalError{Where: where, Panic: r}) {
		klog.ErrorS(nil, "internal error", "where", where, "panic", r, "stack", string(debug.Stack()))
	} else {
		// The informers stopping may meet the same bug again: once is enough.
		klog.ErrorS(nil, "internal error (again)", "where", where, "panic", r)
	}
	if stop := w.stopRun.Load(); stop != nil {
		(*stop)()
	}
}

// place is what the watcher was doing, and on which kind when spec is set.
func place(doing string, spec *kindSpec) string {
	if spec == nil {
		return doing
	}
	return doing + " " + spec.qualified()
}

// containTransform wraps an informer's transform in contain. After a
// contained panic it returns an error, not a nil object, which client-go
// would dereference; the watcher is stopping by then.
func (w *Watcher) containTransform(doing string, spec *kindSpec, f cache.TransformFunc) cache.TransformFunc {
	return func(obj any) (out any, err error) {
		defer func() {
			if out == nil && err == nil {
				err = errors.New(place(doing, spec) + " failed")
			}
		}()
		defer w.contain(doing, spec)
		return f(obj)
	}
}

// Err is the internal error that ended Run, once its update channel is
// closed; nil when Run ended because its context did.
func (w *Watcher) Err() error {
	if e := w.fatal.Load(); e != nil {
		return e
	}
	return nil
}

// New checks the options and returns a Watcher; nothing is contacted until Run.
func New(opts Options) (*Watcher, error) {
	if opts.Config == nil {
		return nil, errors.New("watchers: no API server configuration")
	}
	if opts.ClusterName == "" {
		return nil, errors.New("watchers: no cluster name")
	}
	opts = opts.withDefaults()
	cfg := rest.CopyConfig(opts.Config)
	// The Date of the lock Lease's responses (leaseListWatch).
	cfg.Wrap(serverdate.Wrap(opts.Clock))
	// The start-up burst (discovery, two access reviews per kind, one watch
	// per kind) must not queue behind client-go's default 5 requests/s.
	if cfg.QPS == 0 {
		cfg.QPS = 50
	}
	if cfg.Burst == 0 {
		cfg.Burst = 100
	}
	w := &Watcher{
		opts:    opts,
		cfg:     cfg,
		updates: make(chan *model.ClusterState, 1),
		kick:    make(chan struct{}, 1),
		conn:    model.Connecting,
		sources: map[model.Kind]model.SourceStatus{},
		st:      newStores(),
	}
	w.connSince = opts.Clock()
	return w, nil
}

// Updates delivers snapshots, latest wins: the channel holds at most one,
// and a snapshot not yet received is replaced by a newer one, so a slow
// consumer only ever sees the newest state. It is closed when Run returns.
func (w *Watcher) Updates() <-chan *model.ClusterState { return w.updates }

// Latest returns the newest snapshot (nil before Run has published one).
func (w *Watcher) Latest() *model.ClusterState { return w.latest.Load() }

// Run publishes a first snapshot at once (nothing synced yet), then (once
// Options.Begin allows) discovers what the API server serves, checks access
// to each kind and starts the informers; it blocks until ctx is done. A
// kind shows as syncing until its informer has its first list, so a slow
// kind never delays the others or the first frame. Run can be called once.
func (w *Watcher) Run(ctx context.Context) (err error) {
	if !w.started.CompareAndSwap(false, true) {
		return errors.New("watchers: Run called twice")
	}
	ctx, cancel := context.WithCancel(ctx)
	w.stopRun.Store(&cancel)
	defer cancel()
	defer close(w.updates)
	defer track(w)()
	// After contain (deferred later, so run before it): a panic contained
	// here or in any goroutine of the watcher is what Run returns.
	defer func() {
		if e := w.Err(); e != nil {
			err = e
		}
	}()
	defer w.contain("the watch", nil)
	w.publish()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer w.contain("building snapshots", nil)
		w.publishLoop(ctx)
	}()
	// Also on a panic in Run itself: nothing may publish once the update
	// channel is closed.
	defer func() {
		cancel()
		<-done
	}()
	if w.begin(ctx) {
		err = w.start(ctx)
	}
	<-ctx.Done()
	<-done
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// begin waits for Options.Begin (see there); false when ctx ended first.
func (w *Watcher) begin(ctx context.Context) bool {
	if w.opts.Begin == nil {
		return true
	}
	t := time.NewTimer(beginWithin)
	defer t.Stop()
	select {
	case <-w.opts.Begin:
	case <-t.C:
	case <-ctx.Done():
		return false
	}
	return true
}

// trace writes one Trace line (see Options.Trace), in one write so that
// lines from concurrent informers never interleave.
func (w *Watcher) trace(resource, resourceVersion string) {
	w.traceMu.Lock()
	defer w.traceMu.Unlock()
	b := strconv.AppendInt(w.traceBuf[:0], time.Now().UnixNano(), 10)
	b = append(b, ' ')
	b = append(b, resource...)
	b = append(b, ' ')
	b = append(b, resourceVersion...)
	b = append(b, '\n')
	w.traceBuf = b
	_, _ = w.opts.Trace.Write(b)
}

// changed notes that the state moved on; the publish loop picks it up.
func (w *Watcher) changed() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// publishLoop coalesces changes: the first change after a quiet period is
// published at once (no added latency), later ones at most every MinInterval,
// at the time Pace gives.
func (w *Watcher) publishLoop(ctx context.Context) {
	var last time.Time
	timer := time.NewTimer(0)
	<-timer.C
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
		}
		now := time.Now()
		at := last.Add(w.opts.MinInterval)
		paced := false
		if at.Before(now) {
			at = now // after a quiet spell: at once
		} else if w.opts.Pace != nil {
			at, paced = w.opts.Pace(at), true
		}
		if wait := at.Sub(now); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				timer.Stop()
				return
			case <-timer.C:
			}
			// Changes that came while waiting are in this snapshot.
			select {
			case <-w.kick:
			default:
			}
		}
		w.publish()
		last = time.Now()
		if paced {
			// The schedule, not the timer's lateness: measured from when
			// the timer fired, the next paced time would skip a tick
			// whenever it fired late.
			last = at
		}
	}
}

// publish builds a snapshot and hands it over, replacing one the consumer
// has not taken yet.
func (w *Watcher) publish() {
	w.mu.Lock()
	s := w.snapshotLocked()
	w.mu.Unlock()
	w.latest.Store(s)
	for {
		select {
		case w.updates <- s:
			return
		default:
		}
		select {
		case <-w.updates:
		default:
		}
	}
}

// setConnLocked recomputes the connection state from the sources.
func (w *Watcher) setConnLocked() {
	failing := w.discovery != nil
	anyOK := false
	for _, in := range w.insts {
		if in.failing {
			failing = true
		}
		if in.contacted {
			anyOK = true
		}
	}
	next := w.conn
	switch {
	case failing && w.everLive:
		next = model.Reconnecting
	case failing:
		next = model.Connecting
	case anyOK || (w.discovery == nil && w.discovered()):
		next = model.Live
		w.everLive = true
	}
	if next != w.conn {
		w.conn = next
		w.connSince = w.opts.Clock()
	}
	w.connErr = ""
	if next != model.Live {
		w.connErr = w.connectionErrLocked()
	}
}

// connectionErrLocked is why the connection is not live: discovery's error,
// else a failing source's refused credentials, else the first failing
// source's error. A refusal comes first: behind a server that timed out, the
// sources that retried first got the 401 while the first one still held its
// timeout, and the snapshot said the timeout, not what no wait mends.
func (w *Watcher) connectionErrLocked() string {
	if w.discovery != nil {
		return connectionMessage(w.discovery)
	}
	first := ""
	for _, in := range w.insts {
		if !in.failing || in.status.Err == "" {
			continue
		}
		if strings.HasPrefix(in.status.Err, model.CredentialsRefused) {
			return in.status.Err
		}
		if first == "" {
			first = in.status.Err
		}
	}
	return first
}

func (w *Watcher) discovered() bool { return len(w.insts) > 0 || len(w.sources) > 0 }

func (w *Watcher) String() string {
	return fmt.Sprintf("watcher for %s/%s", w.opts.ClusterNamespace, w.opts.ClusterName)
}
