package upgrade

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/serverdate"
)

// The upgrade lock is a coordination.k8s.io/v1 Lease in eksa-system. A Lease
// rather than an annotation on the Cluster because it has the fields a lock
// needs (holder, acquire and renew times, duration) and because writing it
// does not bump the generation of an object the EKS-A controller reconciles.
//
// Every write carries the resourceVersion it read (create is an implicit
// "must not exist"), so of two consoles racing exactly one wins: the other gets
// AlreadyExists or Conflict and reports who holds the lock.

// DefaultLeaseDuration is how long a lease stays valid without renewal. A
// console renews every third of it, so one missed renewal is not fatal.
const DefaultLeaseDuration = 60 * time.Second

// LockName is the name of the upgrade lock Lease of a cluster.
func LockName(cluster string) string { return model.LockName(cluster) }

// Holder identifies a console: user@host plus an id of the running instance, so
// two consoles of the same user on the same host are told apart.
type Holder struct {
	User     string
	Host     string
	Instance string
	// Authenticated is who the API server authenticated the holding
	// console as (model.AnnotationLockAuthenticatedAs), when the Lease
	// says: on a shared bastion every operator is root@bastion. It is not
	// part of the holderIdentity, which older consoles parse and compare.
	Authenticated string
}

// String is the Lease's holderIdentity: "alice@laptop/3f2a9c1e".
func (h Holder) String() string {
	// Always user@host: it is the Lease's identity, compared as written.
	s := h.User + "@" + h.Host
	if h.Instance != "" {
		s += "/" + h.Instance
	}
	return s
}

// Display is the holder as an operator reads it: "alice@laptop (console
// 3f2a9c1e)", "root@bastion (console 3f2a9c1e, authenticated as
// system:serviceaccount:ops:alice)".
func (h Holder) Display() string {
	var about []string
	if h.Instance != "" {
		about = append(about, "console "+h.Instance)
	}
	if h.Authenticated != "" {
		about = append(about, "authenticated as "+h.Authenticated)
	}
	s := h.userAtHost()
	if len(about) > 0 {
		s += " (" + strings.Join(about, ", ") + ")"
	}
	return s
}

// userAtHost is "user@host" as an operator reads it, or the identity whole
// where it named no host (another tool's).
func (h Holder) userAtHost() string {
	if h.Host == "" {
		return h.User
	}
	return h.User + "@" + h.Host
}

// ParseHolder reads a holderIdentity written by String. Identities written by
// something else are kept whole in User so they are still shown.
//
// The parts are printable (model.Printable): whoever may update the Lease
// writes its holderIdentity, and the parts are printed to terminals. The
// comparisons that decide whose lock it is read the Lease's identity as
// written, never a parsed one.
func ParseHolder(id string) Holder {
	printable := model.PrintableLine(id)
	who, inst, _ := strings.Cut(printable, "/")
	u, h, ok := strings.Cut(who, "@")
	if !ok {
		return Holder{User: printable}
	}
	return Holder{User: u, Host: h, Instance: inst}
}

// LocalHolder is this process: the operator's user and host (as the audit log
// names them) and the process's ConsoleID.
func LocalHolder() Holder {
	u, h := CurrentOperator()
	return Holder{User: u, Host: h, Instance: ConsoleID()}
}

// ConsoleID is a random id of this console process, drawn once. It is the
// instance in the lock's holder and is stamped on every audit entry, so that
// the entries of two consoles sharing one log (or one user and host) are told
// apart and matched with the lock each one held.
var ConsoleID = sync.OnceValue(func() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
})

// LockStatus is the upgrade lock as read from the cluster: the lease as the
// watchers' snapshots carry it (model.Lock, whose rule says when it is
// stale), plus what acting on it needs.
type LockStatus struct {
	model.Lock
	Holder Holder
	// UID and ResourceVersion make a later delete or update conditional on
	// the lease still being the one that was read.
	UID             string
	ResourceVersion string
	// ServerDate is the Date of the API server's response that carried
	// the Lease, Received when this machine received it: the server's
	// clock, to judge Lock.Written by (see servertime.go). Zero when the
	// response had none; from a snapshot, the watchers' Lock.ServerAtSeen
	// and Lock.Seen.
	ServerDate, Received time.Time
}

// Held reports whether the lease names a holder at all.
func (s *LockStatus) Held() bool { return s != nil && s.Lock.Held() }

// Expired reports whether the holder stopped renewing: by the API
// server's clock when both its times are known (model.Lock.ExpiredByServer),
// else by the holder's renewTime against now (model.Lock.Expired).
func (s *LockStatus) Expired(now time.Time) bool {
	expired, _ := s.judge(now)
	return expired
}

// judge is Expired, and whether the API server's clock judged it.
func (s *LockStatus) judge(now time.Time) (expired, byServer bool) {
	if s == nil {
		return false, false
	}
	if expired, ok := s.Lock.ExpiredByServer(s.serverNow(now)); ok {
		return expired, true
	}
	if s.watched() {
		return s.Lock.ExpiredWatched(now), false
	}
	return s.Lock.Expired(now), false
}

// watched reports whether the status carries the watchers' view of its
// renewal (a snapshot's lock, or a read given it by Watched).
func (s *LockStatus) watched() bool { return !s.Lock.Seen.IsZero() }

// Watched gives a status read from the cluster the watchers' view of the
// same renewal (model.Lock's Seen, Arrived and ServerAtSeen), where w, the
// snapshot's lock, is the Lease as this read found it: the same holder and
// the same renewal. A Lease with no write time (its managedFields cleared)
// has none for the API server's clock to judge, and its renewTime is its
// holder's clock: the dashboard's R re-read it and judged it by that alone,
// offering to clear the live lock of a holder whose clock ran behind, which
// the header showed renewed seconds ago. A renewal since, or another
// holder, is left to the read's own judgement.
func (s *LockStatus) Watched(w *model.Lock) {
	if s == nil || w == nil || w.Seen.IsZero() || !s.Held() || w.HolderIdentity != s.HolderIdentity || !w.LastRenewed().Equal(s.LastRenewed()) {
		return
	}
	s.Lock.Seen, s.Lock.Arrived, s.Lock.ServerAtSeen = w.Seen, w.Arrived, w.ServerAtSeen
}

// ExpiresHere is when the lease runs out unless renewed, on this machine's
// clock: by the API server's clock where Expired judges by it, else the
// holder's renewTime plus the duration (model.Lock.ExpiresAt), which is the
// holder's clock.
func (s *LockStatus) ExpiresHere(now time.Time) time.Time {
	if _, byServer := s.judge(now); byServer {
		return now.Add(s.Written.Add(s.Duration).Sub(s.serverNow(now)))
	}
	return s.ExpiresAt()
}

func (s *LockStatus) serverNow(now time.Time) time.Time {
	return model.ServerTimeAt(s.ServerDate, s.Received, now)
}

// Describe is one line for the operator: who holds the lock, since when, and
// whether it is stale.
func (s *LockStatus) Describe(now time.Time) string {
	if !s.Held() {
		return "not held"
	}
	line := fmt.Sprintf("held by %s since %s (%s ago)", s.Holder.Display(),
		s.AcquireTime.UTC().Format(time.RFC3339), roundAgo(now.Sub(s.AcquireTime)))
	expired, byServer := s.judge(now)
	switch {
	case s.Kept != "":
		line += "; kept on purpose by its console, which stopped renewing it: " + s.Kept
	case expired && byServer:
		line += fmt.Sprintf("; stale: not renewed for %s by the API server's clock", roundAgo(s.serverNow(now).Sub(s.Written))) + s.writer()
	case expired && s.watched() && s.Lock.Arrived:
		line += fmt.Sprintf("; stale: no renewal seen for %s by this machine's clock", roundAgo(now.Sub(s.Lock.Seen)))
	case expired && s.watched() && now.Sub(s.Lock.Seen) > s.Duration:
		line += fmt.Sprintf("; stale: no renewal seen in the %s this console has watched it", roundAgo(now.Sub(s.Lock.Seen)))
	case expired:
		// renewTime is the holder's clock: its age here is off by as much
		// as that clock is.
		line += fmt.Sprintf("; stale: its renewTime is %s old by this machine's clock", roundAgo(now.Sub(s.LastRenewed())))
	case byServer:
		line += fmt.Sprintf("; renewed %s ago by the API server's clock", roundAgo(s.serverNow(now).Sub(s.Written))) + s.writer()
	}
	// The holder's own times (since, renewTime) are off by as much, and
	// two consoles' upgrades timed by it disagree: worth an NTP check.
	if off := s.HolderClockOff(); off > 0 {
		line += fmt.Sprintf("; its console's clock runs about %s ahead of the API server's", roughly(off))
	} else if off < 0 {
		line += fmt.Sprintf("; its console's clock runs about %s behind the API server's", roughly(-off))
	}
	return line
}

// writer names who wrote the renewal the API server's clock judged, where
// it was not a console: a lease renewed by hand is the operator's to know
// of before it is cleared or waited for.
func (s *LockStatus) writer() string {
	if s.WrittenBy == "" {
		return ""
	}
	return " (written last by " + model.PrintableLine(s.WrittenBy) + ", not by a console)"
}

// roughly is a clock's offset, which the times' second precision and the
// request's way to the server blur by a second or two: beyond a minute,
// "9m59s" claimed seconds it does not have.
func roughly(d time.Duration) string {
	if d >= time.Minute {
		d = d.Round(10 * time.Second)
	}
	return roundAgo(d)
}

func roundAgo(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Hour {
		return d.Round(time.Second).String()
	}
	// Rounded to the minute, "3h20m0s" claimed seconds it does not have.
	return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
}

// statusFromLease is the status of a Lease as read; date, when not nil,
// is the Date of the response that carried it.
func statusFromLease(l *coordinationv1.Lease, date *serverdate.Recorder) *LockStatus {
	s := LockStatusOf(model.LockOf(l))
	s.UID, s.ResourceVersion = string(l.UID), l.ResourceVersion
	s.ServerDate, s.Received = date.Get()
	return s
}

// LockStatusOf is the status of a lock as a snapshot carries it (no UID or
// resourceVersion to act on: the planner reads the live lease for those).
// The watchers' lock carries the API server's clock when they saw it, which
// serves as a read's Date does: the recovery offers' "stale upgrade lock"
// line said "not renewed for 3m by this machine's clock", the holder's
// renewTime's age, of a lock the watchers judged by the server's clock.
func LockStatusOf(l model.Lock) *LockStatus {
	h := ParseHolder(l.HolderIdentity)
	h.Authenticated = l.AuthenticatedAs
	return &LockStatus{Lock: l, Holder: h, ServerDate: l.ServerAtSeen, Received: l.Seen}
}

// LockHeldError says the lock belongs to another console. Stale is true when
// that console stopped renewing it: then it must be cleared first.
type LockHeldError struct {
	Status *LockStatus
	Now    time.Time
	Stale  bool
	// Cluster is the EKS-A Cluster the lock is for, and Conn the console's
	// connection flags, so the fix can be pasted as it is.
	Cluster string
	// ClusterNamespace is the EKS-A Cluster's namespace.
	ClusterNamespace string
	Conn             model.ConnFlags
}

func (e *LockHeldError) Error() string {
	if e.Stale {
		return fmt.Sprintf("upgrade lock Lease %s/%s is stale: %s; if no upgrade is running, clear it with `upgrade-console lock clear lease %s`",
			e.Status.Namespace, e.Status.Name, e.Status.Describe(e.Now), model.ClusterArgs(e.Cluster, e.ClusterNamespace, e.Conn))
	}
	return fmt.Sprintf("another console holds the upgrade lock (an upgrade or a recovery action of its own under way): Lease %s/%s %s",
		e.Status.Namespace, e.Status.Name, e.Status.Describe(e.Now))
}

// ErrLockLost is returned by Renew when the lease no longer names this
// console (cleared by an operator, or taken over after it went stale).
var ErrLockLost = errors.New("the upgrade lock is no longer held by this console")

// Locker reads, takes, renews and releases the upgrade lock of one cluster.
type Locker struct {
	Kube      kubernetes.Interface
	Namespace string // eksa-system
	Cluster   string
	// ClusterNamespace is the EKS-A Cluster's namespace, which the commands
	// its messages suggest name (-n) outside the default one.
	ClusterNamespace string
	Holder           Holder
	Duration         time.Duration
	Clock            clock.PassiveClock
	// Audit records every write to the Lease. Required for the writes
	// (Acquire, Renew, Keep, Release): without it they are ErrNoAudit.
	// When it knows who the API server authenticated the console as (an
	// *Auditor's one SelfSubjectReview), Acquire writes it on the Lease.
	Audit Recorder
	// AnswerWithin bounds how long Renew, Keep and Release wait for the API
	// server (DefaultAnswerWithin when zero).
	AnswerWithin time.Duration
	// Conn are the console's connection flags, for the commands its
	// messages suggest.
	Conn model.ConnFlags
}

func (l *Locker) name() string { return LockName(l.Cluster) }

// clusterFlags name the cluster and the connection in a command the
// operator pastes.
func (l *Locker) clusterFlags() string {
	return model.ClusterArgs(l.Cluster, l.ClusterNamespace, l.Conn)
}

// identityRecorder is an audit log that knows who the API server
// authenticated the console as: *Auditor.
type identityRecorder interface {
	AuthenticatedAs(ctx context.Context) *Authenticated
}

// authenticatedAs is the username the audit log's review got, "" when it was
// refused or unanswered: the lock takes the audit log's answer rather than
// asking again, so the Lease and the lock-acquire entry name the same one.
func (l *Locker) authenticatedAs(ctx context.Context) string {
	if r, ok := l.Audit.(identityRecorder); ok {
		return r.AuthenticatedAs(ctx).String()
	}
	return ""
}

func (l *Locker) ns() string {
	if l.Namespace == "" {
		return model.SystemNamespace
	}
	return l.Namespace
}

func (l *Locker) duration() time.Duration {
	if l.Duration <= 0 {
		return DefaultLeaseDuration
	}
	return l.Duration
}

// DefaultAnswerWithin is how long a request about the lock waits for the
// API server. A Lease is read and written in milliseconds by one that works,
// and 10s leaves room for one that is busy (client-go's leader election
// gives a renewal as long). Without a bound, an API server that stopped
// answering (a frozen process, a half-open connection) held each request
// until HTTP/2's health check gave up, about a minute: the renewal that
// failed was said that late, and a console at its end (a --timeout passed)
// waited as long, in silence, to mark or release the lock.
const DefaultAnswerWithin = 10 * time.Second

func (l *Locker) answerWithin() time.Duration {
	if l.AnswerWithin <= 0 {
		return DefaultAnswerWithin
	}
	return l.AnswerWithin
}

// unanswered says of a request cut by its bound, ctx's, set within before
// its deadline, that the API server did not answer in time, rather than the
// client's "context deadline exceeded"; or, when the process was stopped
// and continued past that bound (stoppedPast), that nothing read an answer
// that may have come: a renewal, keep or release cut by ctrl+z blamed the
// API server, and main's explain told the operator to check it.
func unanswered(ctx context.Context, within time.Duration, err error) error {
	if !DeadlineCut(ctx, err) {
		return err
	}
	if stopped := stoppedPast(ctx, within); stopped > 0 {
		return fmt.Errorf("%w: %w", &ProcessStoppedError{Within: within, Stopped: stopped}, err)
	}
	return fmt.Errorf("%s: %w", noAnswer(within, 0), err)
}

func (l *Locker) now() time.Time {
	if l.Clock == nil {
		return time.Now()
	}
	return l.Clock.Now()
}

// Status reads the lock; nil (and no error) when there is no lease.
func (l *Locker) Status(ctx context.Context) (*LockStatus, error) {
	return ReadLock(ctx, l.Kube, l.ns(), l.Cluster)
}

// ReadLock reads the upgrade lock of a cluster; nil when there is none. A
// refusal of the read is a *LockForbiddenError.
func ReadLock(ctx context.Context, kube kubernetes.Interface, namespace, cluster string) (*LockStatus, error) {
	ctx, date := withResponseDate(ctx)
	lease, err := kube.CoordinationV1().Leases(namespace).Get(ctx, LockName(cluster), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if apierrors.IsForbidden(err) {
		return nil, &LockForbiddenError{Namespace: namespace, Name: LockName(cluster), Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("read upgrade lock Lease %s/%s: %w", namespace, LockName(cluster), err)
	}
	return statusFromLease(lease, date), nil
}

// LockForbiddenError is a read of the upgrade lock Lease that the API server
// refused: the identity may not get it. Nothing then tells whether another
// console holds the lock.
type LockForbiddenError struct {
	Namespace, Name string
	Err             error
}

func (e *LockForbiddenError) Error() string {
	return fmt.Sprintf("read upgrade lock Lease %s/%s: %v", e.Namespace, e.Name, e.Err)
}

func (e *LockForbiddenError) Unwrap() error { return e.Err }

// Refusal is the API server's words (who may not do what).
func (e *LockForbiddenError) Refusal() string { return refusal(e.Err) }

// Fix says how to see and grant the rights on the Lease: get to read it
// (plan, lock status), list and watch to follow it (watch, the dashboard),
// update and delete to renew and release it, and create to take it, which
// RBAC grants only without resourceNames.
func (e *LockForbiddenError) Fix(conn model.ConnFlags) string {
	return fmt.Sprintf("`kubectl auth can-i get leases/%s -n %s%s` says whether the identity may read it; "+
		"grant it with a Role in %s with the rule {apiGroups: [coordination.k8s.io], resources: [leases], resourceNames: [%s], verbs: [get, list, watch, update, delete]} "+
		"and a RoleBinding to the identity (apply also needs {apiGroups: [coordination.k8s.io], resources: [leases], verbs: [create]}: RBAC cannot limit create to a name), "+
		"or use a kubeconfig that has them",
		e.Name, e.Namespace, conn, e.Namespace, e.Name)
}

// Acquire takes the lock for this console. It fails with a *LockHeldError when
// another console holds it or left it stale.
func (l *Locker) Acquire(ctx context.Context) (*LockStatus, error) {
	if err := requireAudit(l.Audit); err != nil {
		return nil, err
	}
	leases := l.Kube.CoordinationV1().Leases(l.ns())
	as := l.authenticatedAs(ctx)
	holder := "holder " + l.Holder.String()
	if as != "" {
		holder += " (authenticated as " + as + ")"
	}
	now := metav1.NewMicroTime(l.now())
	spec := coordinationv1.LeaseSpec{
		HolderIdentity:       ptr.To(l.Holder.String()),
		LeaseDurationSeconds: ptr.To(int32(l.duration() / time.Second)),
		AcquireTime:          &now,
		RenewTime:            &now,
	}
	within := l.answerWithin()
	rctx, cancel := context.WithTimeout(ctx, within)
	rctx, date := withResponseDate(rctx)
	existing, err := leases.Get(rctx, l.name(), metav1.GetOptions{})
	err = unanswered(rctx, within, err)
	cancel()
	switch {
	case apierrors.IsNotFound(err):
		lease := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{
				Name:      l.name(),
				Namespace: l.ns(),
				Labels: map[string]string{
					LabelManagedBy: ManagerName,
					LabelCluster:   l.Cluster,
				},
			},
			Spec: spec,
		}
		if as != "" {
			lease.Annotations = map[string]string{model.AnnotationLockAuthenticatedAs: as}
		}
		if err := l.announce(ctx, "lock-acquire", "create the Lease, "+holder); err != nil {
			return nil, err
		}
		wctx, cancel := landing(ctx)
		created, err := leases.Create(wctx, lease, metav1.CreateOptions{FieldManager: ManagerName})
		cancel()
		if apierrors.IsAlreadyExists(err) {
			return nil, l.lostRace(ctx)
		}
		if err != nil {
			err = fmt.Errorf("create upgrade lock Lease %s/%s: %w", l.ns(), l.name(), l.mayHaveLanded(wctx, err))
			return nil, errors.Join(err, l.record(ctx, "lock-acquire", "", err))
		}
		st := statusFromLease(created, nil)
		if err := l.record(ctx, "lock-acquire", "created the Lease, "+holder, nil); err != nil {
			return st, err
		}
		return st, nil
	case err != nil:
		return nil, fmt.Errorf("read upgrade lock Lease %s/%s: %w", l.ns(), l.name(), err)
	}
	cur := statusFromLease(existing, date)
	if cur.Held() && cur.HolderIdentity != l.Holder.String() {
		return nil, &LockHeldError{Status: cur, Now: l.now(), Stale: cur.Expired(l.now()), Cluster: l.Cluster, ClusterNamespace: l.ClusterNamespace, Conn: l.Conn}
	}
	// A released lease (no holder) or our own: take it over, conditional on
	// the resourceVersion just read.
	existing = existing.DeepCopy()
	transitions := ptr.Deref(existing.Spec.LeaseTransitions, 0)
	if !cur.Held() {
		transitions++
	}
	spec.LeaseTransitions = ptr.To(transitions)
	existing.Spec = spec
	if existing.Labels == nil {
		existing.Labels = map[string]string{}
	}
	existing.Labels[LabelManagedBy] = ManagerName
	existing.Labels[LabelCluster] = l.Cluster
	// Taken again, the lock is renewed: a kept mark would call it stale.
	delete(existing.Annotations, model.AnnotationLockKept)
	// The identity is this console's, or none: one left by the previous
	// holder (a Lease released by hand) would name someone else.
	if as != "" {
		if existing.Annotations == nil {
			existing.Annotations = map[string]string{}
		}
		existing.Annotations[model.AnnotationLockAuthenticatedAs] = as
	} else {
		delete(existing.Annotations, model.AnnotationLockAuthenticatedAs)
	}
	if err := l.announce(ctx, "lock-acquire", "take over a released Lease, "+holder); err != nil {
		return nil, err
	}
	wctx, cancel := landing(ctx)
	updated, err := leases.Update(wctx, existing, metav1.UpdateOptions{FieldManager: ManagerName})
	cancel()
	if apierrors.IsConflict(err) {
		return nil, l.lostRace(ctx)
	}
	if err != nil {
		err = fmt.Errorf("update upgrade lock Lease %s/%s: %w", l.ns(), l.name(), l.mayHaveLanded(wctx, err))
		return nil, errors.Join(err, l.record(ctx, "lock-acquire", "", err))
	}
	st := statusFromLease(updated, nil)
	return st, l.record(ctx, "lock-acquire", "took over a released Lease, "+holder, nil)
}

// lostRace re-reads the lease after a failed optimistic write to name the
// console that won.
func (l *Locker) lostRace(ctx context.Context) error {
	st, err := l.Status(ctx)
	if err != nil {
		return err
	}
	if st == nil {
		return fmt.Errorf("upgrade lock Lease %s/%s changed while taking it (it was then released); try again", l.ns(), l.name())
	}
	return &LockHeldError{Status: st, Now: l.now(), Stale: st.Expired(l.now()), Cluster: l.Cluster, ClusterNamespace: l.ClusterNamespace, Conn: l.Conn}
}

// Renew extends the lease. ErrLockLost when another holder is recorded or the
// lease is gone.
func (l *Locker) Renew(ctx context.Context) (*LockStatus, error) {
	return l.renew(ctx, l.answerWithin())
}

// renew is Renew bounded by within: the whole renewal, read and write, ends
// by then, answered or not.
func (l *Locker) renew(ctx context.Context, within time.Duration) (*LockStatus, error) {
	if err := requireAudit(l.Audit); err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	leases := l.Kube.CoordinationV1().Leases(l.ns())
	existing, err := leases.Get(rctx, l.name(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		// Lost: the log says when, as for any renewal that failed.
		return nil, errors.Join(ErrLockLost, l.record(ctx, "lock-renew", "the Lease is gone (cleared by someone else): this console no longer holds the upgrade lock", ErrLockLost))
	}
	if err != nil {
		// The renewal was not even attempted: recorded all the same, so the
		// log shows when the lock stopped being renewed.
		err = fmt.Errorf("renew upgrade lock: %w", unanswered(rctx, within, err))
		return nil, errors.Join(err, l.record(ctx, "lock-renew", "could not read the Lease", err))
	}
	if holder := ptr.Deref(existing.Spec.HolderIdentity, ""); holder != l.Holder.String() {
		return nil, errors.Join(ErrLockLost, l.record(ctx, "lock-renew", "the Lease is held by "+cmp.Or(model.Printable(holder), "no one")+" now: this console no longer holds the upgrade lock", ErrLockLost))
	}
	// The whole Lease read goes back, annotations included: the
	// authenticated-as one written when the lock was taken stays.
	existing = existing.DeepCopy()
	now := metav1.NewMicroTime(l.now())
	existing.Spec.RenewTime = &now
	if err := l.announce(ctx, "lock-renew", "renewTime "+now.UTC().Format(time.RFC3339)); err != nil {
		return nil, fmt.Errorf("renew upgrade lock: %w", err)
	}
	// Sent, the write is not cut by a Stop (it could land after the
	// release that follows had read the Lease, which would then refuse
	// to delete it as changed), only by the renewal's bound.
	dl, _ := rctx.Deadline()
	wctx, wcancel := context.WithDeadline(context.WithoutCancel(rctx), dl)
	updated, err := leases.Update(wctx, existing, metav1.UpdateOptions{FieldManager: ManagerName})
	err = unanswered(wctx, within, err)
	wcancel()
	if err != nil {
		err = fmt.Errorf("renew upgrade lock: %w", err)
		return nil, errors.Join(err, l.record(ctx, "lock-renew", "", err))
	}
	return statusFromLease(updated, nil), l.record(ctx, "lock-renew", "renewTime "+now.UTC().Format(time.RFC3339), nil)
}

// Keep marks the lease, if this console still holds it, as kept on purpose
// (model.AnnotationLockKept): the console stops renewing it and it blocks the
// next upgrade until someone checks the cluster and clears it. Without the
// mark it would read as live, and be refused to `lock clear lease` without
// --force, until its duration ran out.
func (l *Locker) Keep(ctx context.Context, why string) error {
	if err := requireAudit(l.Audit); err != nil {
		return err
	}
	within := l.answerWithin()
	rctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	leases := l.Kube.CoordinationV1().Leases(l.ns())
	existing, err := leases.Get(rctx, l.name(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ErrLockLost
	}
	if err != nil {
		err = fmt.Errorf("mark the upgrade lock kept: %w", unanswered(rctx, within, err))
		return errors.Join(err, l.record(ctx, "lock-keep", "could not read the Lease: not marked", err))
	}
	if ptr.Deref(existing.Spec.HolderIdentity, "") != l.Holder.String() {
		return ErrLockLost
	}
	existing = existing.DeepCopy()
	if existing.Annotations == nil {
		existing.Annotations = map[string]string{}
	}
	existing.Annotations[model.AnnotationLockKept] = why
	if err := l.announce(ctx, "lock-keep", "annotate the Lease "+model.AnnotationLockKept+": "+why); err != nil {
		return err
	}
	// Update carries the resourceVersion just read: a lease cleared or
	// taken meanwhile is not marked.
	_, err = leases.Update(rctx, existing, metav1.UpdateOptions{FieldManager: ManagerName})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return ErrLockLost
	}
	if err != nil {
		err = fmt.Errorf("mark the upgrade lock kept: %w", unanswered(rctx, within, err))
	}
	return errors.Join(err, l.record(ctx, "lock-keep", "annotated the Lease "+model.AnnotationLockKept+": "+why, err))
}

// Release deletes the lease if (and only if) this console still holds it:
// ErrLockLost when another console holds it, or when it is gone (cleared by
// someone, `lock clear` from this console's own R menu included): a console
// that said "released" then claimed a release it never made, and recorded
// it.
func (l *Locker) Release(ctx context.Context) error {
	if err := requireAudit(l.Audit); err != nil {
		return err
	}
	within := l.answerWithin()
	rctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	st, err := l.Status(rctx)
	if err != nil {
		err = unanswered(rctx, within, err)
		return errors.Join(err, l.record(ctx, "lock-release", "could not read the Lease: not released", err))
	}
	if st == nil || st.HolderIdentity != l.Holder.String() {
		return ErrLockLost
	}
	if err := l.announce(ctx, "lock-release", "delete the Lease"); err != nil {
		return err
	}
	// Deleted rather than emptied: the holder and who it was
	// authenticated as go in the one write.
	err = deleteLease(rctx, l.Kube, st)
	if errors.Is(err, errLeaseGone) {
		// Cleared by another console between the read and the delete:
		// lost, as when it was gone at the read ("deleted the Lease"
		// recorded a release this console did not make).
		return ErrLockLost
	}
	err = unanswered(rctx, within, err)
	rerr := l.record(ctx, "lock-release", "deleted the Lease", err)
	if err == nil && rerr != nil {
		return &ReleaseUnrecordedError{Err: rerr}
	}
	return errors.Join(err, rerr)
}

// ReleaseUnrecordedError is a release the API server made, the Lease
// deleted, whose entry the audit log refused: the lock is gone, and its
// record is held for the log's next write or printed at exit. Read as a
// failed release, it was said "could NOT be released" with the way to
// clear a Lease that no longer existed.
type ReleaseUnrecordedError struct{ Err error }

func (e *ReleaseUnrecordedError) Error() string {
	return "the upgrade lock is released, but the audit log did not take its entry: " + e.Err.Error()
}

func (e *ReleaseUnrecordedError) Unwrap() error { return e.Err }

// errLeaseGone is a delete of a Lease that no longer exists.
var errLeaseGone = errors.New("the Lease is gone")

// deleteLease deletes the lease that was read as st, and only that one: if
// it was renewed or changed hands since, the API server refuses (Conflict),
// so a console that is alive again is never robbed of its lock; one already
// gone is errLeaseGone. Callers record it in the audit log.
func deleteLease(ctx context.Context, kube kubernetes.Interface, st *LockStatus) error {
	uid := types.UID(st.UID)
	rv := st.ResourceVersion
	err := kube.CoordinationV1().Leases(st.Namespace).Delete(ctx, st.Name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv},
	})
	if apierrors.IsNotFound(err) {
		return errLeaseGone
	}
	if apierrors.IsConflict(err) {
		return fmt.Errorf("upgrade lock Lease %s/%s changed since it was read (renewed or taken); read it again: %w", st.Namespace, st.Name, err)
	}
	if err != nil {
		return fmt.Errorf("delete upgrade lock Lease %s/%s: %w", st.Namespace, st.Name, err)
	}
	return nil
}

// announce records a write the Locker is about to make when the log
// refused its last entry (see the package's announce).
func (l *Locker) announce(ctx context.Context, action, msg string) error {
	return announce(ctx, l.Audit, AuditEntry{Time: l.now(), Cluster: l.Cluster, Action: action,
		Object: "Lease " + l.ns() + "/" + l.name(), Message: msg})
}

func (l *Locker) record(ctx context.Context, action, msg string, err error) error {
	result, emsg := resultOf(err)
	return audit(ctx, l.Audit, AuditEntry{
		Time:    l.now(),
		Cluster: l.Cluster,
		Action:  action,
		Object:  "Lease " + l.ns() + "/" + l.name(),
		Result:  result,
		Error:   emsg,
		Message: msg,
	})
}

// mayHaveLanded says of a lock write that got no answer in time that it may
// have been made all the same, and how to find out and undo it: the console
// then neither renews nor releases a Lease it does not know it holds.
func (l *Locker) mayHaveLanded(wctx context.Context, err error) error {
	if !DeadlineCut(wctx, err) {
		return err
	}
	var why error = errors.New(noAnswer(writeLimit, 0))
	if stopped := stoppedPast(wctx, writeLimit); stopped > 0 {
		why = &ProcessStoppedError{Within: writeLimit, Stopped: stopped}
	}
	return fmt.Errorf("%w; the write may have landed all the same: "+
		"'upgrade-console lock status %s' says, and 'upgrade-console lock clear lease %s' clears it once it is stale: %w",
		why, l.clusterFlags(), l.clusterFlags(), err)
}

// writeLimit bounds a write that an interrupt no longer stops. A variable
// only so that a test need not wait out 30 s.
var writeLimit = 30 * time.Second

// landing is the context of one write that an interrupt must not cut once
// sent: a request cancelled on its way may still land, and then nobody
// records it, releases it or deletes it (a Ctrl-C while the lock was taken
// left a live Lease behind, said to be released).
func landing(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), writeLimit)
}
