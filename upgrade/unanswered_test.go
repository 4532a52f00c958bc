package upgrade

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
)

// landedApply is a dynamic client whose first server-side apply that is
// not a dry run lands, and whose answer is then answer's error instead: the
// write made, its answer lost.
type landedApply struct {
	dynamic.Interface
	armed  *atomic.Bool
	answer func(context.Context) error
}

func (u landedApply) Resource(r schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return landedNS{u.Interface.Resource(r), u}
}

type landedNS struct {
	dynamic.NamespaceableResourceInterface
	u landedApply
}

func (n landedNS) Namespace(ns string) dynamic.ResourceInterface {
	return landedRes{n.NamespaceableResourceInterface.Namespace(ns), n.u}
}

func (n landedNS) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, o metav1.ApplyOptions, sub ...string) (*unstructured.Unstructured, error) {
	return landedRes{n.NamespaceableResourceInterface, n.u}.Apply(ctx, name, obj, o, sub...)
}

type landedRes struct {
	dynamic.ResourceInterface
	u landedApply
}

func (r landedRes) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, o metav1.ApplyOptions, sub ...string) (*unstructured.Unstructured, error) {
	out, err := r.ResourceInterface.Apply(ctx, name, obj, o, sub...)
	if err == nil && len(o.DryRun) == 0 && r.u.armed.CompareAndSwap(true, false) {
		return nil, r.u.answer(ctx)
	}
	return out, err
}

// unansweredApply answers the landed write as an API server that gave up
// waiting on etcd does (504).
func unansweredApply(c dynamic.Interface, armed *atomic.Bool) landedApply {
	return landedApply{Interface: c, armed: armed, answer: func(context.Context) error {
		return apierrors.NewTimeoutError("request did not complete within the allotted timeout", 0)
	}}
}

// A spec write the API server did not answer may have landed: the start
// keeps the lock as after a write that did, records the upgrade failed (not
// interrupted: "nothing of the spec was applied"), and says so. It
// released the lock and said the spec was unchanged, over a machine config
// on the new template.
func TestStartWithAnUnansweredWriteKeepsTheLock(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	audit := &memAudit{}
	armed := &atomic.Bool{}
	armed.Store(true)
	c := *w.client
	c.Dynamic = unansweredApply(c.Dynamic, armed)
	d := &Driver{Client: &c, Audit: audit, Holder: w.planner.Self, Planner: w.planner, SnapshotDir: t.TempDir()}
	p := w.plan(t)
	s, err := d.Start(ctx, p, StartOptions{ForceConflicts: true})
	if s == nil || err == nil {
		t.Fatalf("start: %v, %v; want it failed with the session kept", s, err)
	}
	if len(s.Applied) != 0 {
		t.Fatalf("applied %d documents, want none answered", len(s.Applied))
	}
	if !strings.Contains(err.Error(), "may have landed all the same") || !strings.Contains(err.Error(), "may have been too") {
		t.Errorf("error does not say the write may have landed:\n%v", err)
	}
	st, rerr := ReadLock(ctx, w.client.Kube, w.ns, "mgmt")
	if rerr != nil || st == nil || !st.Held() || !strings.Contains(st.Kept, "the spec may be applied in part") || !s.Kept() {
		t.Fatalf("lock after the unanswered write: %+v, %v (session kept: %t)", st, rerr, s.Kept())
	}
	got := strings.Join(audit.actions(), " ")
	if !strings.Contains(got, "apply:failed") || !strings.Contains(got, "lock-keep:ok") || !strings.HasSuffix(got, "upgrade:failed") || strings.Contains(got, "lock-release") {
		t.Errorf("audit %s: want the apply failed, the lock kept and the upgrade closed as failed", got)
	}
	for _, e := range audit.entries {
		if e.Action == "apply" && !strings.Contains(e.Error, "may have landed all the same") {
			t.Errorf("the apply's entry does not say the write may have landed: %+v", e)
		}
	}
}

// unansweredConfigMaps is a clientset whose ConfigMap creates land and
// then go unanswered (504).
type unansweredConfigMaps struct{ kubernetes.Interface }

func (u unansweredConfigMaps) CoreV1() typedcorev1.CoreV1Interface {
	return unansweredCore{u.Interface.CoreV1()}
}

type unansweredCore struct{ typedcorev1.CoreV1Interface }

func (c unansweredCore) ConfigMaps(ns string) typedcorev1.ConfigMapInterface {
	return unansweredCMs{c.CoreV1Interface.ConfigMaps(ns)}
}

type unansweredCMs struct{ typedcorev1.ConfigMapInterface }

func (c unansweredCMs) Create(ctx context.Context, cm *corev1.ConfigMap, o metav1.CreateOptions) (*corev1.ConfigMap, error) {
	if _, err := c.ConfigMapInterface.Create(ctx, cm, o); err != nil {
		return nil, err
	}
	return nil, apierrors.NewTimeoutError("request did not complete within the allotted timeout", 0)
}

// A snapshot whose ConfigMap create went unanswered says the ConfigMap may
// exist and how to delete it: made all the same, it is the snapshot of an
// upgrade that never started, offered to a later rollback.
func TestSnapshotUnansweredSaysTheConfigMapMayExist(t *testing.T) {
	w := newWorld(t, scenario.Rolling)
	ctx := context.Background()
	c := *w.client
	c.Kube = unansweredConfigMaps{c.Kube}
	at := time.Date(2026, 11, 21, 23, 6, 0, 0, time.UTC)
	s := &Snapshotter{Client: &c, Audit: &memAudit{}, Dir: t.TempDir()}
	_, _, err := s.Take(ctx, w.spec.Cluster, w.spec.Docs, "alice@laptop/1", at)
	want := "may have been created all the same: delete it (kubectl -n " + w.ns + " delete configmap " + SnapshotName("mgmt", at) + ")"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("unanswered snapshot: %v\nwant %q in it", err, want)
	}
}

// Which failed writes may have landed: those cut after the request left
// (no answer in time, a connection reset or closed, HTTP/2's lost ping, a
// timeout or a storage error from the server); not those the API server
// refused, nor those that never went out.
func TestMayHaveLanded(t *testing.T) {
	gr := schema.GroupResource{Group: "anywhere.eks.amazonaws.com", Resource: "clusters"}
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	live := context.Background()
	for _, c := range []struct {
		name string
		ctx  context.Context
		err  error
		want bool
	}{
		{"no answer in time", expired, context.DeadlineExceeded, true},
		{"server timeout (504)", live, apierrors.NewTimeoutError("request did not complete within the allotted timeout", 0), true},
		{"etcd timeout (500)", live, apierrors.NewInternalError(errors.New("etcdserver: request timed out")), true},
		{"connection reset", live, &url.Error{Op: "Patch", URL: "https://api", Err: &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}}, true},
		{"HTTP/2 lost ping", live, &url.Error{Op: "Patch", URL: "https://api", Err: errors.New("http2: client connection lost")}, true},
		{"closed connection", live, &url.Error{Op: "Patch", URL: "https://api", Err: net.ErrClosed}, true},
		{"unexpected EOF", live, &url.Error{Op: "Patch", URL: "https://api", Err: io.ErrUnexpectedEOF}, true},
		{"connection refused", live, &url.Error{Op: "Patch", URL: "https://api", Err: &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}, false},
		{"rate limiter", expired, errors.New("client rate limiter Wait returned an error: rate: Wait(n=1) would exceed context deadline"), false},
		{"forbidden", live, apierrors.NewForbidden(gr, "mgmt", errors.New("no")), false},
		{"invalid", live, apierrors.NewInvalid(schema.GroupKind{Group: gr.Group, Kind: "Cluster"}, "mgmt", nil), false},
		{"too many requests", live, apierrors.NewTooManyRequests("slow down", 1), false},
		{"webhook not reached (500)", live, apierrors.NewInternalError(errors.New(`failed calling webhook "v.example.com": dial tcp 127.0.0.1:1: connect: connection refused`)), false},
	} {
		if got := mayHaveLanded(c.ctx, c.err); got != c.want {
			t.Errorf("%s: may have landed %t, want %t (%v)", c.name, got, c.want, c.err)
		}
	}
}

// stoppedApply reads the landed write's answer only past its deadline, as
// a process stopped (SIGSTOP, ctrl+z) while the write was out and continued
// after the deadline does: the deadline's error, late, and a SIGCONT.
func stoppedApply(c dynamic.Interface, armed *atomic.Bool) landedApply {
	return landedApply{Interface: c, armed: armed, answer: func(ctx context.Context) error {
		<-ctx.Done()
		time.Sleep(stoppedSlack + 2*time.Second) // stopped as the deadline passed
		continued.Store(time.Now().UnixNano())   // and continued (SIGCONT)
		return ctx.Err()
	}}
}

// A spec write whose answer the process, stopped, did not read before its
// deadline is not said to be the API server's silence (R19 #7): the
// process says it did not run, and that the write may have landed.
func TestApplyStoppedPastItsDeadlineDoesNotBlameTheServer(t *testing.T) {
	defer func(l time.Duration) { writeLimit = l }(writeLimit)
	writeLimit = time.Second // a bound to wait out: the stop comes after it
	w := newWorld(t, scenario.Rolling)
	armed := &atomic.Bool{}
	armed.Store(true)
	c := *w.client
	c.Dynamic = stoppedApply(c.Dynamic, armed)
	a := &Applier{Client: &c, Audit: &memAudit{}, Cluster: "mgmt"}
	_, err := a.Apply(context.Background(), w.spec, ApplyOptions{ForceConflicts: true})
	var ue *UnansweredWriteError
	if !errors.As(err, &ue) {
		t.Fatalf("apply: %v; want an unanswered write", err)
	}
	if ue.Stopped < stoppedSlack || strings.Contains(err.Error(), "no answer from the API server") ||
		!strings.Contains(err.Error(), "this process was stopped (ctrl+z, SIGSTOP) and continued") || !strings.Contains(err.Error(), "may have landed all the same") {
		t.Errorf("stopped %s: %v", ue.Stopped, err)
	}
}
