package upgrade

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
)

// errAuditBroken is what failingAudit returns: a full disk, a log file
// made read-only.
var errAuditBroken = errors.New("audit log: no space left on device")

// failingAudit is an audit log that breaks: the Record that is the failAt-th
// (from 1), or the first of action failAction, fails, and so does every
// Record after it (a broken log stays broken). asked keeps every entry it
// was asked to record, failed or not.
type failingAudit struct {
	failAt     int
	failAction string

	mu     sync.Mutex
	asked  []AuditEntry
	broken bool
}

func (f *failingAudit) Record(_ context.Context, e AuditEntry) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, e)
	if len(f.asked) == f.failAt || (f.failAction != "" && e.Action == f.failAction) {
		f.broken = true
	}
	if f.broken {
		return errAuditBroken
	}
	return nil
}

func (f *failingAudit) actions() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, e := range f.asked {
		out = append(out, e.Action+":"+e.Result)
	}
	return out
}

// writeLog lists the requests that reached the API server to change
// something: every method but GET and HEAD, dry runs excluded (they persist
// nothing).
type writeLog struct {
	mu   sync.Mutex
	reqs []string
}

func (l *writeLog) add(r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs = append(l.reqs, r.Method+" "+r.URL.Path)
}

func (l *writeLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.reqs...)
}

// with lists the writes whose method is method.
func (l *writeLog) with(method string) []string {
	var out []string
	for _, r := range l.list() {
		if strings.HasPrefix(r, method+" ") {
			out = append(out, r)
		}
	}
	return out
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// watchedClient is a client of w's cluster whose writes are listed.
func (w *world) watchedClient(t *testing.T) (*Client, *writeLog) {
	t.Helper()
	l := &writeLog{}
	return w.clientThrough(t, func(r *http.Request, rt http.RoundTripper) (*http.Response, error) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead && r.URL.Query().Get("dryRun") == "" {
			l.add(r)
		}
		return rt.RoundTrip(r)
	}), l
}

// clientThrough is a client of w's cluster whose every request goes through
// rt, which sends it on with next (or answers it itself).
func (w *world) clientThrough(t *testing.T, rt func(r *http.Request, next http.RoundTripper) (*http.Response, error)) *Client {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) { return rt(r, next) })
	})
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.System = w.ns
	return c
}

// An Applier whose audit log fails stops at the write it could not record:
// an operator reading the log after a full disk must find every change the
// console made to the cluster, so the rest of the spec is not applied.
func TestApplyStopsAtTheFirstWriteItCannotRecord(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	if len(w.spec.Docs) < 2 {
		t.Fatalf("the target spec has %d document(s): nothing would follow the first write", len(w.spec.Docs))
	}
	client, writes := w.watchedClient(t)
	audit := &failingAudit{failAt: 1}
	applied, err := (&Applier{Client: client, Audit: audit, Cluster: "mgmt"}).Apply(ctx, w.spec, ApplyOptions{ForceConflicts: true})
	if !errors.Is(err, errAuditBroken) {
		t.Fatalf("apply with a failing audit log: %v, want its failure", err)
	}
	if got := writes.list(); len(got) != 1 || !strings.HasPrefix(got[0], "PATCH ") {
		t.Errorf("writes %q, want the one apply whose record failed and nothing after it", got)
	}
	// The server took it: left out, the start said "nothing was applied"
	// over a Cluster already on the new spec, and let its lock go.
	if len(applied) != 1 || applied[0].Object != docRef(ordered(w.spec)[0]) {
		t.Errorf("applied %+v, want the one write the server took, its record refused", applied)
	}
	if got := audit.actions(); len(got) != 1 || got[0] != "apply:ok" {
		t.Errorf("asked to record %v, want the one apply", got)
	}
}

// A log that fills up during a start's writes does not stop the spec half
// applied (machine configs on the new template under a Cluster still on the
// old version, which EKS-A fails): the started entry lists every write, so
// each goes on, its own entry held and said unrecorded.
func TestStartWritesTheWholeSpecWhenTheLogFillsUpDuringTheWrites(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	client, writes := w.watchedClient(t)
	audit := &failingAudit{failAction: "apply"}
	d := &Driver{Client: client, Audit: audit, Holder: w.planner.Self, Planner: w.planner, SnapshotDir: t.TempDir()}
	s, err := d.Start(context.Background(), w.plan(t), StartOptions{ForceConflicts: true})
	if err != nil || s == nil {
		t.Fatalf("start: %v, %v; want the upgrade started, its records held", s, err)
	}
	docs := ordered(w.spec)
	if got := writes.with(http.MethodPatch); len(got) != len(docs) {
		t.Errorf("applied %q, want all %d documents", got, len(docs))
	}
	if len(s.Applied) != len(docs) {
		t.Fatalf("applied %+v, want all %d documents", s.Applied, len(docs))
	}
	for _, a := range s.Applied {
		if !errors.Is(a.Unrecorded, errAuditBroken) {
			t.Errorf("%s: unrecorded %v, want the log's refusal", a.Object, a.Unrecorded)
		}
	}
	started := audit.asked[0]
	listed, _ := started.After.(map[string]string)["writes"]
	for _, doc := range docs {
		if started.Result != AuditStarted || !strings.Contains(listed, "server-side apply "+docRef(doc)) {
			t.Errorf("the started entry %+v does not list the write of %s", started, docRef(doc))
		}
	}
}

// A Driver whose audit log cannot take the upgrade's "started" entry starts
// nothing: no lock, no snapshot, no apply. An upgrade missing from the log
// is one the next operator cannot know happened.
func TestStartRefusedWhenStartedCannotBeRecorded(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	client, writes := w.watchedClient(t)
	audit := &failingAudit{failAt: 1}
	d := &Driver{Client: client, Audit: audit, Holder: w.planner.Self, Planner: w.planner, SnapshotDir: t.TempDir()}
	s, err := d.Start(context.Background(), w.plan(t), StartOptions{ForceConflicts: true})
	if s != nil || !errors.Is(err, errAuditBroken) {
		t.Fatalf("start: %v, %v; want its audit failure", s, err)
	}
	if got := writes.list(); len(got) != 0 {
		t.Errorf("writes %q after the started entry failed, want none", got)
	}
	if st, _ := ReadLock(context.Background(), w.client.Kube, w.ns, "mgmt"); st != nil {
		t.Errorf("the refused start left a lock: %+v", st)
	}
	// Its end goes with the refused start (held and printed together):
	// alone, appended, it read as an upgrade that may have run.
	if got := strings.Join(audit.actions(), " "); got != "upgrade:started upgrade:failed" {
		t.Errorf("asked to record %s, want the start and its end", got)
	}
}

// A snapshot the audit log could not record stops the start before the
// apply: the snapshot is what a rollback restores, and an upgrade that
// went on would change the cluster with its log already broken.
func TestStartStopsWhenTheSnapshotCannotBeRecorded(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	client, writes := w.watchedClient(t)
	audit := &failingAudit{failAction: "snapshot"}
	d := &Driver{Client: client, Audit: audit, Holder: w.planner.Self, Planner: w.planner, SnapshotDir: t.TempDir()}
	s, err := d.Start(context.Background(), w.plan(t), StartOptions{ForceConflicts: true})
	if s != nil || !errors.Is(err, errAuditBroken) {
		t.Fatalf("start: %v, %v; want its audit failure", s, err)
	}
	if got := writes.with(http.MethodPatch); len(got) != 0 {
		t.Errorf("applied %q after the snapshot's record failed", got)
	}
	if got := strings.Join(audit.actions(), " "); strings.Contains(got, "apply:") {
		t.Errorf("asked to record %s, want no apply", got)
	}
}

// Snapshotter.Take returns the audit log's failure: swallowed, the start
// went on to apply as if the snapshot were on record.
func TestSnapshotReturnsItsAuditFailure(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	p := w.plan(t)
	audit := &failingAudit{failAt: 1}
	_, ref, err := (&Snapshotter{Client: w.client, Audit: audit, Dir: t.TempDir()}).Take(context.Background(), p.Current.Cluster, w.spec.Docs, "test", time.Now())
	if !errors.Is(err, errAuditBroken) {
		t.Fatalf("snapshot with a failing audit log: %v, want its failure", err)
	}
	if got := audit.actions(); len(got) != 1 || got[0] != "snapshot:ok" {
		t.Errorf("asked to record %v, want the snapshot", got)
	}
	if ref.Name == "" {
		t.Error("the snapshot written is not named: the operator cannot find what the log lacks")
	}
}

// Built without an audit log, every writer refuses before its first write:
// a Driver, Applier, Snapshotter or Locker missing its Recorder changed the
// cluster with no record, where the recovery Executor refused.
func TestWritersWithoutAnAuditLogWriteNothing(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	client, writes := w.watchedClient(t)
	p := w.plan(t)
	dir := t.TempDir()
	locker := &Locker{Kube: client.Kube, Namespace: w.ns, Cluster: "mgmt", Holder: w.planner.Self}
	for name, write := range map[string]func() error{
		"driver start": func() error {
			_, err := (&Driver{Client: client, Holder: w.planner.Self, Planner: w.planner, SnapshotDir: dir}).Start(ctx, p, StartOptions{ForceConflicts: true})
			return err
		},
		"apply": func() error {
			_, err := (&Applier{Client: client, Cluster: "mgmt"}).Apply(ctx, w.spec, ApplyOptions{ForceConflicts: true})
			return err
		},
		"snapshot": func() error {
			_, _, err := (&Snapshotter{Client: client, Dir: dir}).Take(ctx, p.Current.Cluster, w.spec.Docs, "test", time.Now())
			return err
		},
		"lock acquire": func() error { _, err := locker.Acquire(ctx); return err },
		"lock renew":   func() error { _, err := locker.Renew(ctx); return err },
		"lock keep":    func() error { return locker.Keep(ctx, "test") },
		"lock release": func() error { return locker.Release(ctx) },
		"lock hold":    func() error { _, err := locker.Hold(ctx, nil); return err },
	} {
		if err := write(); !errors.Is(err, ErrNoAudit) {
			t.Errorf("%s without an audit log: %v, want ErrNoAudit", name, err)
		}
	}
	if got := writes.list(); len(got) != 0 {
		t.Errorf("writes without an audit log: %q", got)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("snapshot copies written without an audit log: %v %v", entries, err)
	}
	if cms, err := w.client.Kube.CoreV1().ConfigMaps(w.ns).List(ctx, metav1.ListOptions{LabelSelector: LabelSnapshot + "=true"}); err != nil || len(cms.Items) != 0 {
		t.Errorf("snapshot ConfigMaps without an audit log: %v %v", cms, err)
	}
}

// The entry that ends an upgrade, refused by the log, is said as refused
// (EndUnrecorded): the console's farewell said "the upgrade completed
// (recorded in the audit log)" of an entry never written.
func TestSessionSaysItsEndWasNotRecorded(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	client, _ := w.watchedClient(t)
	audit := &failingAudit{}
	d := &Driver{Client: client, Audit: audit, Holder: w.planner.Self, Planner: w.planner, SnapshotDir: t.TempDir()}
	ctx := context.Background()
	s, err := d.Start(ctx, w.plan(t), StartOptions{ForceConflicts: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.EndUnrecorded() != nil {
		t.Fatalf("before the end: %v", s.EndUnrecorded())
	}
	audit.mu.Lock()
	audit.broken = true
	audit.mu.Unlock()
	if err := s.Finish(ctx, Outcome{Complete: true}); !errors.Is(err, errAuditBroken) {
		t.Errorf("finish: %v, want its audit failure", err)
	}
	if !s.Completed() || !errors.Is(s.EndUnrecorded(), errAuditBroken) {
		t.Errorf("completed %t, end unrecorded %v; want true and the audit failure", s.Completed(), s.EndUnrecorded())
	}
}

// A start that fails under the lock before the spec, with the API server
// gone, cannot release the lock: it says so, what the Lease blocks and how
// to clear it, rather than a bare read error after the cause.
func TestStartThatCannotReleaseTheLockSaysHowToClearIt(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	dry, err := (&Applier{Client: w.client, Cluster: "mgmt"}).DryRun(ctx, w.spec)
	if err != nil {
		t.Fatal(err)
	}
	var gone atomic.Bool
	client := w.clientThrough(t, func(r *http.Request, next http.RoundTripper) (*http.Response, error) {
		if gone.Load() {
			return nil, errors.New("dial tcp: connect: connection refused")
		}
		resp, err := next.RoundTrip(r)
		if r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/leases") {
			gone.Store(true) // the lock taken, the API server goes
		}
		return resp, err
	})
	d := &Driver{Client: client, Audit: &memAudit{}, Holder: w.planner.Self, SnapshotDir: t.TempDir()}
	s, err := d.Start(ctx, w.plan(t), StartOptions{ForceConflicts: true, DryRun: dry})
	var nr *LockNotReleasedError
	if s != nil || !errors.As(err, &nr) {
		t.Fatalf("start: %v, %v; want a start that says the lock was not released", s, err)
	}
	for _, want := range []string{"the dry run under the upgrade lock failed, nothing was applied", "the upgrade lock could NOT be released", "it blocks further upgrades", "`upgrade-console lock clear lease"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the start's error lacks %q:\n%v", want, err)
		}
	}
}

// A write the API server refuses after the dry run agreed (a webhook, a
// change meanwhile) is recorded failed, with the refusal: an entry "ok"
// claimed a write that never landed.
func TestApplyRecordsAWriteTheServerRefusedAsFailed(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	client := w.clientThrough(t, func(r *http.Request, next http.RoundTripper) (*http.Response, error) {
		if r.Method == http.MethodPatch && r.URL.Query().Get("dryRun") == "" {
			body := `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"admission webhook \"vcluster.kb.io\" denied the request: no","reason":"Forbidden","code":403}`
			return &http.Response{StatusCode: http.StatusForbidden, Header: http.Header{"Content-Type": []string{"application/json"}},
				Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
		}
		return next.RoundTrip(r)
	})
	audit := &memAudit{}
	applied, err := (&Applier{Client: client, Audit: audit, Cluster: "mgmt"}).Apply(context.Background(), w.spec, ApplyOptions{ForceConflicts: true})
	if err == nil || len(applied) != 0 {
		t.Fatalf("apply refused by the server: %v, applied %v", err, applied)
	}
	first := docRef(ordered(w.spec)[0])
	var got []AuditEntry
	for _, e := range audit.entries {
		if e.Action == "apply" && e.Object == first {
			got = append(got, e)
		}
	}
	if len(got) != 1 || got[0].Result != AuditFailed || !strings.Contains(got[0].Error, "denied the request") {
		t.Errorf("entries for %s: %+v, want one failed with the refusal", first, got)
	}
}
