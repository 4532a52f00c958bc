package upgrade

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// AuditFileName is the audit log's file name inside StateDir.
const AuditFileName = "audit.log"

// Results an audit entry can carry.
const (
	// AuditOK: the write was made and the server accepted it.
	AuditOK = "ok"
	// AuditAlreadyDone: the step found its effect already in place and wrote nothing.
	AuditAlreadyDone = "already-done"
	// AuditDryRun: the server validated the write with dryRun=All; nothing was persisted.
	AuditDryRun = "dry-run"
	// AuditFailed: the write was attempted and failed (Error says why).
	AuditFailed = "failed"
	// AuditRefused: the action was not run (a precondition or a live lock).
	AuditRefused = "refused"
	// AuditStarted and AuditFinished bracket a multi-step action, so that a
	// reader can tell an action that was interrupted from one that completed.
	AuditStarted  = "started"
	AuditFinished = "finished"
	// AuditDetached ends an upgrade the console stopped following (no --wait,
	// or interrupted): the upgrade itself goes on in the cluster.
	AuditDetached = "detached"
	// AuditTimedOut ends an upgrade whose follow reached its --timeout: not
	// a failure (exit 5, not 4); the upgrade may go on in the cluster, and
	// the lock is kept until someone has looked.
	AuditTimedOut = "timed-out"
	// AuditInterrupted ends an upgrade stopped (a signal) after its start
	// but before its first write of the spec: nothing of the spec was
	// applied, and the lock was released. Not a failure (exit 5, not 4).
	AuditInterrupted = "interrupted"
	// AuditNotConfirmed: the action was planned and dry-run, and the typed
	// confirmation was not given; nothing was changed.
	AuditNotConfirmed = "not-confirmed"
	// AuditAnnounced: a write about to be made, announced before it because
	// the log had refused an entry (see Refusing); the entry after it says
	// how the write went.
	AuditAnnounced = "announced"
)

// AuditEntry is one line of the audit log: one change (or attempted change)
// the console made to a cluster, or the start or end of an action.
type AuditEntry struct {
	Time time.Time `json:"time"`
	User string    `json:"user"`
	Host string    `json:"host"`
	// Console is the id of the console process that wrote the entry
	// (ConsoleID): the instance in the lock holder "alice@laptop/3f2a9c1e".
	// Empty in entries written before it was recorded.
	Console string `json:"console,omitempty"`
	Context string `json:"context,omitempty"` // kubeconfig context
	// As is the identity the API server acted as when the console
	// impersonated one (--as, --as-group): who the cluster saw make the
	// change, where User is who ran the console.
	As string `json:"as,omitempty"`
	// Authenticated is who the API server authenticated the console as
	// (a SelfSubjectReview): the ServiceAccount or OIDC user behind a
	// token kubeconfig, or the impersonated user. Absent when the server
	// did not say (too old, the review refused or not answered).
	Authenticated *Authenticated `json:"authenticated,omitempty"`
	Cluster       string         `json:"cluster"`
	// Action is what the operator asked for: "apply", "lock-acquire",
	// "lock-release", "snapshot", "etcd-rollback", "lock-clear", "node-retry",
	// "snapshot-prune".
	Action string `json:"action"`
	// Step names the step of a multi-step action ("pause-eksa-reconcile").
	Step string `json:"step,omitempty"`
	// Object is "Kind namespace/name".
	Object string `json:"object,omitempty"`
	// Before and After are the part of the object the step changes, as it was
	// and as it is meant to be (a map of annotations, a spec fragment, ...).
	Before any    `json:"before,omitempty"`
	After  any    `json:"after,omitempty"`
	Result string `json:"result"`
	Error  string `json:"error,omitempty"`
	// Message is a short human explanation (why it was refused, what was found).
	Message string `json:"message,omitempty"`
	DryRun  bool   `json:"dryRun,omitempty"`
	// Forced is set when the operator overrode a guard (--force on a live lock,
	// a field-ownership conflict forced on apply).
	Forced bool `json:"forced,omitempty"`
	// Skipped lists the preflight checks the operator skipped by name.
	Skipped []string `json:"skipped,omitempty"`
	// Delayed: the log refused the entry at its Time (a full disk), and
	// the console kept it and wrote it with the next entry the log took.
	Delayed bool `json:"delayed,omitempty"`
}

// Auditor appends entries to the audit log. It is safe for concurrent use, and
// every Record is on disk (fsync'd) when it returns, so the console may report
// success only after Record returned nil.
type Auditor struct {
	path string
	// noPath is why the log has no path (StateDir found none): every
	// entry is refused, held and printed at exit, as a log that cannot be
	// opened refuses them.
	noPath  error
	user    string
	host    string
	console string
	context string
	as      string
	now     func() time.Time

	// review asks the API server who the console is; reviewMu and
	// reviewed make it asked once, however many entries and goroutines,
	// unless the caller's context cut it short (see sharedReview).
	review        func(context.Context) (*Authenticated, error)
	reviewMu      sync.Mutex
	reviewed      bool
	authenticated *Authenticated

	mu sync.Mutex
	// refused: the last entry could not be written.
	refused bool
	// held are the entries the log refused, encoded and marked Delayed,
	// written before the next entry it takes: a write recorded after it
	// was made (a lock renewal that met a full disk) is then on record
	// once space comes back. At most maxHeld; lost counts those dropped.
	held [][]byte
	lost int
	// heldCluster is the cluster of the last entry held: the note of the
	// entries not kept names it when no new entry comes to stamp it.
	heldCluster string
	// heldNow and refusal are what Held reports, set with mu held after
	// each write: read without mu, which a write holds through its fsync,
	// by a screen that must not wait for a disk.
	heldNow atomic.Int64
	refusal atomic.Pointer[string]
}

// maxHeld bounds the refused entries kept in memory: once the log refuses,
// the lock's writes stop (announce), so few come; a log that refuses for
// hours must not grow the console without bound.
const maxHeld = 256

// AuditorOption configures an Auditor.
type AuditorOption func(*Auditor)

// WithAuditClock sets the clock that stamps entries (tests).
func WithAuditClock(now func() time.Time) AuditorOption {
	return func(a *Auditor) { a.now = now }
}

// WithAuditIdentity overrides the user and host taken from the OS (tests).
func WithAuditIdentity(user, host string) AuditorOption {
	return func(a *Auditor) { a.user, a.host = user, host }
}

// WithAuditConsole overrides the console id stamped on entries (tests).
func WithAuditConsole(id string) AuditorOption {
	return func(a *Auditor) { a.console = id }
}

// WithAuditContext records the kubeconfig context in every entry.
func WithAuditContext(kubeContext string) AuditorOption {
	return func(a *Auditor) { a.context = kubeContext }
}

// WithAuditAs records the identity the console impersonates in every entry.
func WithAuditAs(identity string) AuditorOption {
	return func(a *Auditor) { a.as = identity }
}

// WithAuditReview makes the auditor ask the API server who it authenticates
// the console as (ReviewSelf), and record it in every entry.
func WithAuditReview(kube kubernetes.Interface) AuditorOption {
	return func(a *Auditor) { a.review = sharedReview(kube) }
}

// reviews holds the one review of each client (kubernetes.Interface →
// *selfReview): a command opens an auditor per outcome (an apply's refusal
// after its dry run), and the answer does not change within a run.
var reviews sync.Map

type selfReview struct {
	mu   sync.Mutex
	done bool
	id   *Authenticated
	err  error
}

// sharedReview asks once per client. A review the caller's context cut
// short (the entry recorded after a ctrl-c) is not the API server's answer:
// kept, it left every later entry of the run, of every auditor on the
// client, without the identity.
func sharedReview(kube kubernetes.Interface) func(context.Context) (*Authenticated, error) {
	v, _ := reviews.LoadOrStore(kube, &selfReview{})
	r := v.(*selfReview)
	return func(ctx context.Context) (*Authenticated, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.done {
			return r.id, r.err
		}
		id, err := ReviewSelf(ctx, kube)
		if err != nil && ctx.Err() != nil {
			return nil, err
		}
		r.done, r.id, r.err = true, id, err
		return id, err
	}
}

// Authenticate asks the API server who the console is, the first time it
// is called (later calls, and calls under way, wait for that one). A review
// that fails leaves the entries without it: it is a record of the
// identity, not a check, and no action waits on it beyond its timeout.
// Commands call it before their first write; Record calls it in case they
// did not.
func (a *Auditor) Authenticate(ctx context.Context) { a.authenticate(ctx) }

// authenticate is Authenticate, returning the identity (nil without one).
func (a *Auditor) authenticate(ctx context.Context) *Authenticated {
	if a.review == nil {
		return nil
	}
	a.reviewMu.Lock()
	defer a.reviewMu.Unlock()
	if a.reviewed {
		return a.authenticated
	}
	id, err := a.review(ctx)
	if err != nil {
		klog.V(2).Infof("audit log: the API server's view of the console's identity is not recorded: %v", err)
		// Cut short by ctx: the next entry asks again.
		a.reviewed = ctx.Err() == nil
		return nil
	}
	a.reviewed, a.authenticated = true, id
	return id
}

// AuthenticatedAs is who the API server authenticated the console as: the
// one review Authenticate asks (waiting for it, if under way), nil when it
// was refused, unanswered or not asked for (no WithAuditReview).
func (a *Auditor) AuthenticatedAs(ctx context.Context) *Authenticated {
	return a.authenticate(ctx)
}

// DefaultAuditPath is StateDir()/audit.log.
func DefaultAuditPath() (string, error) {
	dir, err := StateDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, AuditFileName), nil
}

// NewAuditor returns an Auditor appending to path (DefaultAuditPath when
// empty). It creates the directory and checks that the file can be opened for
// appending, so that an unwritable audit log stops an action before its first
// write to the cluster rather than after it.
func NewAuditor(path string, opts ...AuditorOption) (*Auditor, error) {
	a, err := openAuditor(path, opts)
	if err != nil {
		return nil, err
	}
	return a, nil
}

// NewAuditorHolding is NewAuditor for a run that changes nothing (a dry
// run, a plan every step of which is done): a log that cannot be opened
// does not stop it, as one that fills up mid-run does not stop a run. The
// Auditor is returned with the refusal, and holds the entries the log
// refuses, for the caller to print at exit. A log with no path (no state
// directory: HOME unset) is one that cannot be opened: returned nil, it
// stopped a dry run with exit 1 that a log in a file's way let run.
func NewAuditorHolding(path string, opts ...AuditorOption) (*Auditor, error) {
	return openAuditor(path, opts)
}

func openAuditor(path string, opts []AuditorOption) (*Auditor, error) {
	var noPath error
	if path == "" {
		path, noPath = DefaultAuditPath()
	}
	u, h := CurrentOperator()
	a := &Auditor{path: path, noPath: noPath, user: u, host: h, console: ConsoleID(), now: time.Now}
	for _, o := range opts {
		o(a)
	}
	if noPath != nil {
		return a, &AuditWriteError{Err: noPath}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return a, fmt.Errorf("audit log %s: %w (set XDG_STATE_HOME to a writable directory)", path, err)
	}
	f, created, err := openAppend(path)
	if err != nil {
		// With the fix ("open …/audit.log: is a directory" said none).
		return a, &AuditWriteError{Path: path, Err: err}
	}
	if err := f.Close(); err != nil {
		return a, &AuditWriteError{Path: path, Err: err}
	}
	if created {
		syncDir(filepath.Dir(path))
	}
	return a, nil
}

// Path is the file the auditor appends to, "" when it has none (NoPath).
func (a *Auditor) Path() string { return a.path }

// NoPath is why the log has no path, nil when it has one.
func (a *Auditor) NoPath() error { return a.noPath }

// User and Host are the identity stamped on entries.
func (a *Auditor) User() string { return a.user }
func (a *Auditor) Host() string { return a.host }

// Record appends one entry, filling Time, User, Host, Console, Context, As and
// Authenticated when unset, and returns once the line is on disk. The context
// is deliberately not used to abandon the write: an entry usually describes a
// change the cluster has already accepted, and an operator who pressed ctrl-c
// still needs it logged (only a review not yet asked is cut short by it, and
// asked again by the next entry).
func (a *Auditor) Record(ctx context.Context, e AuditEntry) error {
	if e.Time.IsZero() {
		e.Time = a.now()
	}
	e.Time = e.Time.UTC()
	if e.User == "" {
		e.User = a.user
	}
	if e.Host == "" {
		e.Host = a.host
	}
	if e.Console == "" {
		e.Console = a.console
	}
	if e.Context == "" {
		e.Context = a.context
	}
	if e.As == "" {
		e.As = a.as
	}
	if id := a.authenticate(ctx); e.Authenticated == nil {
		e.Authenticated = id
	}
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("audit log: encode entry: %w", err)
	}
	line = append(line, '\n')

	a.mu.Lock()
	defer a.mu.Unlock()
	taken, err := a.write(e, line)
	if !taken {
		a.hold(e)
	}
	a.publish(err)
	return err
}

// publish makes the held entries' count, and err, the log's last refusal,
// what Held reports. Called with a.mu held.
func (a *Auditor) publish(err error) {
	n := len(a.held) + a.lost
	a.heldNow.Store(int64(n))
	switch {
	case n == 0:
		a.refusal.Store(nil)
	case err != nil:
		// The cause alone ("no space left on device"): the path and its
		// fix are the exit's to say, and a screen's row has no room.
		why := err.Error()
		var aw *AuditWriteError
		var pe *os.PathError
		switch {
		case errors.As(err, &pe):
			why = pe.Err.Error()
		case errors.As(err, &aw):
			why = aw.Err.Error()
		}
		a.refusal.Store(&why)
	}
}

// Held is how many entries the log refused that the console holds to
// write later (kept, and refused and not kept: Unwritten's held and lost),
// and why it refused the last ("" when none is held). It reads no file and
// waits for no write: a screen calls it to say that the record is held,
// and printed at exit for the operator to append.
func (a *Auditor) Held() (entries int, why string) {
	n := int(a.heldNow.Load())
	if n == 0 {
		return 0, ""
	}
	if w := a.refusal.Load(); w != nil {
		why = *w
	}
	return n, why
}

// write appends the entries refused before, then line (none when nil), in
// the one write: on disk in their order, or held again; taken is whether
// the file took all of the batch. Called with a.mu held; e stamps the note
// of the entries not kept.
func (a *Auditor) write(e AuditEntry, line []byte) (taken bool, _ error) {
	batch := a.pending(e)
	if line != nil {
		batch = append(slices.Clip(batch), line)
	}
	if len(batch) == 0 {
		return true, nil
	}
	written, err := a.append(bytes.Join(batch, nil))
	a.refused = err != nil
	// The lines the file took whole are on record (a full disk takes
	// part of a write): written again, they would be there twice.
	done := 0
	for _, l := range batch {
		if written < len(l) {
			break
		}
		written -= len(l)
		done++
	}
	taken = done == len(batch) // with an error: only its flush failed
	if a.lost > 0 && done > 0 {
		a.lost, done = 0, done-1
	}
	a.held = a.held[min(done, len(a.held)):]
	return taken, err
}

// pending are the lines the log has yet to take: the note of the entries
// not kept, stamped as e, then the held ones. Called with a.mu held.
func (a *Auditor) pending(e AuditEntry) [][]byte {
	if a.lost == 0 {
		return a.held
	}
	return append([][]byte{a.lostNote(e)}, a.held...)
}

// lostNote is the line that says how many refused entries were not kept,
// stamped as e.
func (a *Auditor) lostNote(e AuditEntry) []byte {
	note, _ := json.Marshal(AuditEntry{Time: e.Time, User: e.User, Host: e.Host, Console: e.Console, Context: e.Context,
		Cluster: e.Cluster, Action: "audit", Result: AuditFailed, Delayed: true,
		Message: fmt.Sprintf("%d entries the log refused (a full disk) were not kept: the console kept the first %d", a.lost, maxHeld)})
	return append(note, '\n')
}

// hold keeps a refused entry, marked Delayed, for the next write. An
// announcement is not kept: the write it announced was not made.
func (a *Auditor) hold(e AuditEntry) {
	if e.Result == AuditAnnounced {
		return
	}
	if len(a.held) >= maxHeld {
		a.lost++
		return
	}
	e.Delayed = true
	line, err := json.Marshal(e)
	if err != nil {
		return
	}
	a.held = append(a.held, append(line, '\n'))
	a.heldCluster = e.Cluster
}

// Unwritten writes the entries the log refused, if it takes them now, and
// returns those it still does not: their lines (JSON, marked delayed, after
// a note of the entries not kept when there were more than maxHeld), how
// many are held and how many were not kept, and why the log refused them.
// A console that exits must not take its record with it: the caller
// prints the lines for the operator to append to the log.
func (a *Auditor) Unwritten() (lines []byte, held, lost int, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.held) == 0 && a.lost == 0 {
		return nil, 0, 0, nil
	}
	e := AuditEntry{Time: a.now().UTC(), User: a.user, Host: a.host, Console: a.console, Context: a.context, Cluster: a.heldCluster}
	_, err = a.write(e, nil)
	a.publish(err)
	if len(a.held) == 0 && a.lost == 0 {
		return nil, 0, 0, err // taken; with an error, only its flush failed
	}
	return bytes.Join(a.pending(e), nil), len(a.held), a.lost, err
}

// Refusing reports whether the log refused the last entry it was given (a
// full disk): a writer that records after its write (the lock's renewals,
// every few seconds) then announces each write first, and makes it only
// once the log took the announcement.
func (a *Auditor) Refusing() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.refused
}

// append writes encoded entries at the end of the log, on disk when it
// returns nil; written is how many bytes of lines the file took (a full
// disk takes part of a write). Called with a.mu held.
func (a *Auditor) append(lines []byte) (written int, _ error) {
	// Opened per entry with O_APPEND: each line is a single write at the end of
	// the file, so several consoles on one machine interleave whole lines.
	if a.noPath != nil {
		return 0, &AuditWriteError{Err: a.noPath}
	}
	f, created, err := openAppend(a.path)
	if err != nil {
		return 0, &AuditWriteError{Path: a.path, Err: err}
	}
	lockLog(f)
	// A line torn by a crash or a full disk mid-write leaves the file without
	// its final newline: end the torn line first, in the same write, so that
	// this entry is a line of its own rather than glued to the torn text.
	size, torn, err := endsTorn(f)
	if err != nil {
		f.Close()
		return 0, &AuditWriteError{Path: a.path, Err: err}
	}
	buf := lines
	if torn {
		buf = append([]byte{'\n'}, lines...)
	}
	n, err := f.Write(buf)
	if err != nil {
		// A full disk takes part of a line: cut it off, so that the file
		// ends whole and the lines printed at exit can be appended as
		// they are (glued to the fragment, both were lost).
		whole := bytes.LastIndexByte(buf[:n], '\n') + 1
		if whole < n {
			if fi, serr := f.Stat(); serr == nil && fi.Size() == size+int64(n) && f.Truncate(size+int64(whole)) == nil {
				n = whole
			}
		}
	}
	if torn {
		n = max(n-1, 0)
	}
	if err != nil {
		f.Close()
		return n, &AuditWriteError{Path: a.path, Err: err}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return n, &AuditWriteError{Path: a.path, Err: fmt.Errorf("flush to disk: %w", err)}
	}
	if err := f.Close(); err != nil {
		return n, &AuditWriteError{Path: a.path, Err: err}
	}
	if created {
		syncDir(filepath.Dir(a.path))
	}
	return n, nil
}

// AuditWriteError is an entry the audit log could not take (a full disk, a
// file or directory not writable). What needed the entry does not go ahead:
// before the first write, the commands say so as bad input from the
// environment (exit 1); after one (a recovery that ran a step), the action
// stopped part way and resumes, and exits as one that ran and failed (4).
// A run that writes nothing (a dry run) is not stopped by it: its entries
// are held, printed at exit, and the exit is 74.
type AuditWriteError struct {
	Path string // "" when the log has none (Err is a StateDirError)
	Err  error
}

func (e *AuditWriteError) Error() string {
	if e.Path == "" {
		// Err names the fix.
		return fmt.Sprintf("audit log: %v", e.Err)
	}
	return fmt.Sprintf("audit log %s: %v (%s)", e.Path, e.Err, auditWriteFix(e.Err))
}

// auditWriteFix is what to do about the log's refusal, by its cause: "free
// space on its disk" was said of every cause but a permission, a directory
// at the log's path (EISDIR) and a read-only file system among them, and
// sent the operator to a disk that had room.
func auditWriteFix(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "free space on its disk, or set XDG_STATE_HOME to a directory on another"
	case errors.Is(err, syscall.EDQUOT):
		return "free space within this user's disk quota, or set XDG_STATE_HOME to a directory on another disk"
	case errors.Is(err, syscall.EISDIR):
		return "the log is a file: move the directory at that path away, or set XDG_STATE_HOME to another directory"
	case errors.Is(err, syscall.EROFS):
		return "its file system is mounted read-only: set XDG_STATE_HOME to a directory on a writable one"
	case errors.Is(err, syscall.EPERM):
		// EPERM, not EACCES: modes allow the write, an attribute does
		// not (chattr +i, +a refuses a truncate), so chmod is no fix.
		return "the file or its directory refuses writes whatever its mode (an immutable file: `lsattr` shows it, `chattr -i` clears it), or set XDG_STATE_HOME to a writable directory"
	case errors.Is(err, os.ErrPermission):
		return "make it and its directory writable for this user, or set XDG_STATE_HOME to a writable directory"
	}
	return "check the file and the disk it is on, or set XDG_STATE_HOME to a writable directory"
}

func (e *AuditWriteError) Unwrap() error { return e.Err }

// endsTorn reports whether the file is not empty and does not end with a
// newline (its last line was torn mid-write).
func endsTorn(f *os.File) (size int64, torn bool, _ error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, false, err
	}
	if fi.Size() == 0 {
		return 0, false, nil
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], fi.Size()-1); err != nil {
		return 0, false, fmt.Errorf("read its last byte: %w", err)
	}
	return fi.Size(), last[0] != '\n', nil
}

// openAppend opens the log for appending; read too, so that Record can check
// how the file ends.
func openAppend(path string) (*os.File, bool, error) {
	_, statErr := os.Stat(path)
	created := errors.Is(statErr, os.ErrNotExist)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_RDWR, 0o600)
	if err != nil {
		return nil, false, err
	}
	return f, created, nil
}

// syncDir makes a newly created file's directory entry durable. Best effort:
// some filesystems refuse fsync on directories.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// CurrentOperator returns the OS user and host name that identify the person
// at the console, in audit entries and in the lock holder ("user@host").
func CurrentOperator() (userName, host string) {
	userName = "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		userName = u.Username
	} else if v := os.Getenv("USER"); v != "" {
		userName = v
	}
	host = "unknown"
	if h, err := os.Hostname(); err == nil && h != "" {
		host = h
	}
	return userName, host
}

// AuditFilter selects entries when reading the log back.
type AuditFilter struct {
	Cluster string    // empty: every cluster
	Since   time.Time // zero: from the beginning
	Console string    // empty: every console
}

func (f AuditFilter) match(e AuditEntry) bool {
	if f.Cluster != "" && e.Cluster != f.Cluster {
		return false
	}
	if f.Console != "" && e.Console != f.Console {
		return false
	}
	return f.Since.IsZero() || !e.Time.Before(f.Since)
}

// AuditReadResult is what ReadAudit found.
type AuditReadResult struct {
	Entries []AuditEntry
	// BadLines are the 1-based numbers of lines that are not valid entries (a
	// line torn by a crash mid-write, or an edited file), LongLines among
	// them.
	BadLines []int
	// LongLines are the lines longer than MaxAuditLine, skipped unread.
	LongLines []int
	// Read is how many lines were entries, the filter's or not: none in a
	// file that has lines is a file that is not an audit log, unless its
	// one bad line is Torn.
	Read int
	// Torn is the number of the last line when it is an entry cut short
	// mid-write (a crash, a full disk): no final newline, and the start of
	// an entry's JSON. 0 when there is none. It is among BadLines.
	Torn int
}

// auditEntryStart is how every entry's JSON begins (Time is AuditEntry's
// first field): a torn line begins so, or is cut before its end.
const auditEntryStart = `{"time":"`

// tornMin is how much of auditEntryStart a last line must hold to be read
// as an entry torn mid-write: an empty prefix, or a lone "{", begins any
// JSON, and a file holding only "{" read as an empty audit log (exit 0)
// where it is none.
const tornMin = len(`{"t`)

// MaxAuditLine is the longest line ReadAudit reads: an entry's before and
// after fragments can be whole specs, but a line longer than this is no
// entry the console wrote.
const MaxAuditLine = 16 << 20

// ReadAudit reads the audit log at path, keeping the entries that match the
// filter, in file order. A missing file is an empty log.
func ReadAudit(path string, f AuditFilter) (AuditReadResult, error) {
	file, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return AuditReadResult{}, nil
	}
	if err != nil {
		return AuditReadResult{}, fmt.Errorf("audit log %s: %w", path, err)
	}
	defer file.Close()
	if fi, err := file.Stat(); err == nil && fi.IsDir() {
		// Opened, it read as "audit log line 1: read …: is a directory".
		return AuditReadResult{}, fmt.Errorf("audit log %s: is a directory, not the log (%s)", path, auditWriteFix(syscall.EISDIR))
	}
	return decodeAudit(file, f)
}

func decodeAudit(r io.Reader, f AuditFilter) (AuditReadResult, error) {
	var res AuditReadResult
	br := bufio.NewReaderSize(r, 64*1024)
	var line []byte
	for n := 1; ; n++ {
		// A line over the limit is skipped, as other lines that are no
		// entry: bufio.Scanner stopped there ("token too long"), and
		// no entry at all was shown, the readable ones before it neither.
		line = line[:0]
		long := false
		var err error
		for {
			var frag []byte
			frag, err = br.ReadSlice('\n')
			if !long && len(line)+len(frag) > MaxAuditLine {
				long, line = true, line[:0]
			}
			if !long {
				line = append(line, frag...)
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if err != nil && err != io.EOF {
			return res, fmt.Errorf("audit log line %d: %w", n, err)
		}
		if err == io.EOF && len(line) == 0 && !long {
			return res, nil
		}
		eof := err == io.EOF
		b := bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		switch {
		case long:
			res.BadLines = append(res.BadLines, n)
			res.LongLines = append(res.LongLines, n)
		case len(b) == 0:
		default:
			var e AuditEntry
			if err := json.Unmarshal(b, &e); err != nil || e.Action == "" {
				res.BadLines = append(res.BadLines, n)
				// Without its newline, the last line was cut as it was
				// written: a log whose only line it is is a torn log, not
				// a file of other text.
				if eof && len(b) >= tornMin && (bytes.HasPrefix(b, []byte(auditEntryStart)) || bytes.HasPrefix([]byte(auditEntryStart), b)) {
					res.Torn = n
				}
				break
			}
			res.Read++
			if f.match(e) {
				res.Entries = append(res.Entries, e)
			}
		}
		if err == io.EOF {
			return res, nil
		}
	}
}

// Unended reports, for entries in file order, which start an action
// (AuditStarted) that no later entry of the same console, cluster and action
// ends: finished, detached, timed-out, refused (a start the lock or a
// re-check under it turned away), or failed with no step (a run that stopped). Such
// an action is still under way, or its console stopped without recording its
// end (killed, its machine lost), and steps after the last entry it wrote may
// have run unrecorded: a reader must check the cluster, or plan the action
// again (recovery actions resume). Entries without a console id (written
// before it was recorded) are never reported.
func Unended(entries []AuditEntry) []bool {
	out := make([]bool, len(entries))
	type key struct{ console, cluster, action string }
	open := map[key]int{}
	for i, e := range entries {
		if e.Console == "" {
			continue
		}
		k := key{e.Console, e.Cluster, e.Action}
		switch {
		case e.Result == AuditStarted:
			open[k] = i
			out[i] = true
		case e.Step == "" && (e.Result == AuditFinished || e.Result == AuditDetached || e.Result == AuditFailed || e.Result == AuditRefused ||
			e.Result == AuditTimedOut || e.Result == AuditInterrupted):
			if j, ok := open[k]; ok {
				out[j] = false
				delete(open, k)
			}
		}
	}
	return out
}
