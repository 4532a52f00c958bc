package upgrade

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/upgrade-console/upgrade-console/model"
)

// Applying a spec is a server-side apply of every document with the field
// manager "upgrade-console". The dry-run (dryRun=All) goes through admission
// and the EKS-A webhook exactly like the real write, so what it reports is
// what the write would do: the fields that change and the fields another
// manager owns (eks-a-cli, kubectl, a GitOps controller), which a plain apply
// refuses with 409 Conflict. Conflicts are only forced on the operator's
// explicit choice, and that choice is recorded.

// FieldChange is one leaf that differs between the live object and the result.
type FieldChange struct {
	Path string `json:"path"`
	// Old and New are the values rendered compactly; Old is empty for an added
	// field and New for a removed one.
	Old string `json:"old,omitempty"`
	New string `json:"new,omitempty"`
	Op  string `json:"op"` // "add", "remove", "change"
}

// FieldConflict is a field another manager owns with a different value.
type FieldConflict struct {
	Object  string `json:"object"`
	Field   string `json:"field"`
	Manager string `json:"manager"`
	Message string `json:"message"`
}

// ObjectChange is what applying one document does.
type ObjectChange struct {
	Object string        `json:"object"` // "Kind namespace/name"
	Create bool          `json:"create,omitempty"`
	Fields []FieldChange `json:"fields,omitempty"`
	// Error is the API server's refusal (validation, admission webhook) of
	// this document; the spec cannot be applied while any is set.
	Error string `json:"error,omitempty"`
	// Forbidden: the refusal is the API server's authorization (RBAC), not
	// the document's content.
	Forbidden bool `json:"forbidden,omitempty"`
	// NotServed: the API server serves no such kind (its CRD is not
	// installed, or the kind or apiVersion is misspelt).
	NotServed bool `json:"notServed,omitempty"`
	// Invalid: the refusal is of the document's content, a field the
	// CRD's schema refuses (422 Invalid, each cause a value of the wrong
	// type, outside its allowed values, missing or too long): bad input,
	// which the file's fix ends, not the cluster's.
	Invalid bool `json:"invalid,omitempty"`
	// Denied: the refusal is an admission webhook's or policy's (EKS-A's
	// webhook: a version skew, a downgrade, an immutable field; a
	// cluster's own policy), a change the cluster does not allow, which
	// another upgrade path ends, not another value, nor other rights.
	Denied bool `json:"denied,omitempty"`
	// causes are the fields an Invalid refusal names.
	causes []metav1.StatusCause
	// resource and namespace name what a Forbidden refusal was of
	// ("vspheremachineconfigs.anywhere.eks.amazonaws.com", "default"), for
	// the `kubectl auth can-i` its fix gives.
	resource, namespace string
}

// refusedResource is the resource an API server refusal names
// ("vspheremachineconfigs.anywhere.eks.amazonaws.com"), "" when it names none.
func refusedResource(err error) string {
	var se apierrors.APIStatus
	if !asStatus(err, &se) || se.Status().Details == nil || se.Status().Details.Kind == "" {
		return ""
	}
	d := se.Status().Details
	return strings.TrimSuffix(d.Kind+"."+d.Group, ".")
}

// Unchanged reports an object the apply leaves as it is.
func (o ObjectChange) Unchanged() bool { return !o.Create && len(o.Fields) == 0 && o.Error == "" }

// DryRunResult is the server-side dry-run of a spec.
type DryRunResult struct {
	Objects   []ObjectChange  `json:"objects"`
	Conflicts []FieldConflict `json:"conflicts,omitempty"`
	// clusterLive and clusterResult are the EKS-A Cluster as the dry run
	// read it and as the apply would leave it (nil when it was refused or
	// is to be created). A field the file leaves out is removed where no
	// other field manager owns it, which the file alone does not show:
	// the etcd topology is judged on these (CheckImmutableFields).
	clusterLive, clusterResult *unstructured.Unstructured
}

// Rejected lists the documents the API server refused.
func (r *DryRunResult) Rejected() []ObjectChange {
	var out []ObjectChange
	for _, o := range r.Objects {
		if o.Error != "" {
			out = append(out, o)
		}
	}
	return out
}

// Changes counts the objects the apply changes or creates.
func (r *DryRunResult) Changes() int {
	n := 0
	for _, o := range r.Objects {
		if o.Create || len(o.Fields) > 0 {
			n++
		}
	}
	return n
}

// ConflictsError is the refusal of a non-forced apply.
type ConflictsError struct{ Conflicts []FieldConflict }

func (e *ConflictsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d field(s) are owned by another manager:", len(e.Conflicts))
	for _, c := range e.Conflicts {
		fmt.Fprintf(&b, "\n  %s %s: %s", c.Object, c.Field, c.Manager)
	}
	b.WriteString("\nthe upgrade changes them; take them over only if that manager (e.g. a GitOps controller) will not put them back: re-run with --force-conflicts, or change them where that manager reads them")
	if SoleManager(e.Conflicts) == eksaCLIManager {
		b.WriteString("\n(" + eksaCLIManager + " is the EKS-A CLI, which itself applies with forced ownership: taking its fields over is what its own upgrade does)")
	}
	return b.String()
}

// eksaCLIManager is the field manager of `eksctl anywhere` (its applier).
const eksaCLIManager = "eks-a-cli"

// SoleManager is the one field manager that owns every conflicting field,
// "" when they are more than one's (or none).
func SoleManager(conflicts []FieldConflict) string {
	if len(conflicts) == 0 {
		return ""
	}
	m := conflicts[0].Manager
	for _, c := range conflicts[1:] {
		if c.Manager != m {
			return ""
		}
	}
	return m
}

// Applier server-side applies a spec file.
type Applier struct {
	Client *Client
	// Audit records each write. Required by Apply (ErrNoAudit without
	// it); DryRun writes nothing and records nothing.
	Audit Recorder
	// Cluster names the EKS-A cluster in audit entries.
	Cluster string
	Now     func() time.Time
}

// ordered puts the EKS-A Cluster last: the controller reconciles on any child
// change, but a Cluster that refers to provider objects not yet updated would
// be validated against their old specs.
func ordered(spec *SpecFile) []*unstructured.Unstructured {
	docs := make([]*unstructured.Unstructured, 0, len(spec.Docs))
	for _, d := range spec.Docs {
		if d != spec.Cluster {
			docs = append(docs, d)
		}
	}
	return append(docs, spec.Cluster)
}

// resource returns the client of a document's kind and a copy of the document
// with its namespace fixed for the kind's scope.
// errNotServed marks a document of a kind the API server does not serve.
var errNotServed = errors.New("the API server does not serve")

func (c *Client) resource(doc *unstructured.Unstructured) (dynamic.ResourceInterface, *unstructured.Unstructured, error) {
	m, err := c.mapping(doc.GroupVersionKind())
	if err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil, fmt.Errorf("%s: %w %s: is its CRD installed (and is the apiVersion right)?", docRef(doc), errNotServed, doc.GroupVersionKind().String())
		}
		return nil, nil, fmt.Errorf("%s: %w", docRef(doc), err)
	}
	u := doc.DeepCopy()
	if m.Scope.Name() == meta.RESTScopeNameRoot {
		u.SetNamespace("")
		return c.Dynamic.Resource(m.Resource), u, nil
	}
	return c.Dynamic.Resource(m.Resource).Namespace(u.GetNamespace()), u, nil
}

// ResourceOf is the client of an object's kind, in its namespace when the
// kind is namespaced: a restore from a snapshot reads and writes objects
// of any kind a spec held.
func (c *Client) ResourceOf(u *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	ri, _, err := c.resource(u)
	return ri, err
}

func (c *Client) get(ctx context.Context, doc *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	ri, u, err := c.resource(doc)
	if err != nil {
		return nil, err
	}
	return ri.Get(ctx, u.GetName(), metav1.GetOptions{})
}

// DryRun asks the API server what applying the spec would do. A document the
// server refuses is reported in its ObjectChange, not as an error; err is for
// failures to ask at all.
func (a *Applier) DryRun(ctx context.Context, spec *SpecFile) (*DryRunResult, error) {
	res := &DryRunResult{}
	for _, doc := range ordered(spec) {
		ri, u, err := a.Client.resource(doc)
		if err != nil && !errors.Is(err, errNotServed) {
			// Discovery not answered (the API server gone): a failure
			// to ask, not the server refusing the document (read as the
			// cluster having changed since the dry run confirmed).
			return nil, fmt.Errorf("read the API server's resources for %w", err)
		}
		if err != nil {
			res.Objects = append(res.Objects, ObjectChange{Object: docRef(doc), Error: err.Error(), NotServed: true})
			continue
		}
		ref := docRef(u)
		live, err := ri.Get(ctx, u.GetName(), metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("read %s: %w", ref, err)
		}
		if apierrors.IsNotFound(err) {
			live = nil
		}
		opts := metav1.ApplyOptions{FieldManager: ManagerName, DryRun: []string{metav1.DryRunAll}}
		out, err := ri.Apply(ctx, u.GetName(), u, opts)
		if conflicts := conflictsOf(ref, err); conflicts != nil {
			res.Conflicts = append(res.Conflicts, conflicts...)
			// A forced dry-run persists nothing and shows what taking the
			// fields over would change.
			opts.Force = true
			out, err = ri.Apply(ctx, u.GetName(), u, opts)
		}
		if err != nil {
			causes, invalid := invalidFields(err)
			denied := admissionDenial(refusal(err))
			res.Objects = append(res.Objects, ObjectChange{Object: ref, Error: refusal(err), Forbidden: apierrors.IsForbidden(err) && !denied,
				Denied: denied, Invalid: invalid, causes: causes, resource: refusedResource(err), namespace: u.GetNamespace()})
			continue
		}
		oc := ObjectChange{Object: ref, Create: live == nil}
		if live != nil {
			oc.Fields = DiffObjects(live, out)
			if doc == spec.Cluster {
				res.clusterLive, res.clusterResult = live, out
			}
		}
		res.Objects = append(res.Objects, oc)
	}
	return res, nil
}

// contentCauses are the causes of a 422 that are about a value in the
// document. A FieldValueForbidden is left out: it says a change is not
// allowed (EKS-A's webhook answers an immutable field with it), not that
// a value is malformed.
var contentCauses = []metav1.CauseType{metav1.CauseTypeFieldValueInvalid, metav1.CauseTypeFieldValueNotSupported,
	metav1.CauseTypeFieldValueRequired, metav1.CauseTypeTypeInvalid, metav1.CauseTypeFieldValueDuplicate,
	metav1.CauseTypeTooLong, metav1.CauseTypeTooMany, metav1.CauseTypeFieldValueNotFound}

// invalidFields are the causes of a 422 Invalid refusal, and whether every
// one of them is about the document's content as the CRD's schema judges
// it. An admission webhook's or policy's refusal is not: EKS-A's webhook
// answers a Kubernetes or EKS-A version skew, a downgrade or a field
// removed with FieldValueInvalid causes too, and those are the plan EKS-A
// refuses (exit 3), whose fix is another upgrade path, not another value
// the schema allows.
func invalidFields(err error) ([]metav1.StatusCause, bool) {
	var se apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !asStatus(err, &se) || se.Status().Details == nil || len(se.Status().Details.Causes) == 0 {
		return nil, false
	}
	causes := se.Status().Details.Causes
	if admissionDenial(se.Status().Message) {
		return causes, false
	}
	for _, c := range causes {
		if !slices.Contains(contentCauses, c.Type) {
			return causes, false
		}
	}
	return causes, true
}

// admissionDenial reports whether a refusal's message is the API server's
// wording of an admission webhook's denial (k8s.io/apiserver's webhook
// errors: `admission webhook "NAME" denied the request: …`) or of an
// admission policy's (policy/validating's dispatcher, inside the
// Forbidden or Invalid error it makes: `KIND "NAME" is forbidden:
// ValidatingAdmissionPolicy 'NAME' with binding 'NAME' denied request: …`,
// or `policy 'NAME' denied request: …`), where the schema's own refusal
// reads `KIND "NAME" is invalid: FIELD: …`.
func admissionDenial(msg string) bool {
	return strings.Contains(msg, "admission webhook ") && strings.Contains(msg, " denied the request") ||
		strings.Contains(msg, " denied request")
}

// InvalidSpec is the dry run's refusal of the spec's content as bad input
// (exit 1, as a field the console's own schema check refuses): the file,
// the document and field of the first refused, the API server's words and
// the fix. Nil when no document is refused for its content: a refusal by
// RBAC, of a kind not served, or of a version skew is the cluster's.
func (r *DryRunResult) InvalidSpec(spec *SpecFile) *model.InputError {
	var bad []ObjectChange
	for _, o := range r.Rejected() {
		if o.Invalid {
			bad = append(bad, o)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	o, c := bad[0], bad[0].causes[0]
	where := spec.docNamed(o.Object)
	field := model.PrintableLine(c.Field)
	problem := "the API server refuses it: " + model.PrintableLine(c.Message)
	if n := len(o.causes) - 1; n > 0 {
		problem += fmt.Sprintf(" (and %d more field(s) of it)", n)
	}
	if len(bad) > 1 {
		others := make([]string, 0, len(bad)-1)
		for _, b := range bad[1:] {
			others = append(others, spec.docNamed(b.Object))
		}
		problem += "; refused too: " + strings.Join(others, ", ")
	}
	return &model.InputError{Source: spec.Path, Field: where + ": " + field, Problem: problem,
		Fix: "give " + field + " a value the API server's schema of " + strings.SplitN(o.Object, " ", 2)[0] + " allows (its words above), then plan again; nothing was changed"}
}

// docNamed names the spec's document whose object is ref ("Kind ns/name")
// by its number, kind and name, as the spec's own checks name documents;
// ref itself when no document is that object.
func (f *SpecFile) docNamed(ref string) string {
	for i, d := range f.Docs {
		if docRef(d) == ref {
			return fmt.Sprintf("document %d (%s %s)", i+1, d.GetKind(), d.GetName())
		}
	}
	return ref
}

// refusal is the API server's reason for refusing a document, without the
// Go error chain around it.
func refusal(err error) string {
	var se apierrors.APIStatus
	if errors.As(err, &se) && se.Status().Message != "" {
		return se.Status().Message
	}
	return err.Error()
}

var managerRE = regexp.MustCompile(`conflict with ("(?:[^"\\]|\\.)*")`)

// conflictsOf reads the field conflicts out of a 409 apply refusal; nil when
// err is not one.
func conflictsOf(ref string, err error) []FieldConflict {
	if err == nil || !apierrors.IsConflict(err) {
		return nil
	}
	var se apierrors.APIStatus
	if !errors.As(err, &se) || se.Status().Details == nil {
		return nil
	}
	var out []FieldConflict
	for _, c := range se.Status().Details.Causes {
		if c.Type != metav1.CauseTypeFieldManagerConflict {
			continue
		}
		// A manager's name is whoever wrote the object's choice.
		fc := FieldConflict{Object: ref, Field: model.PrintableLine(c.Field), Message: model.Printable(c.Message)}
		if m := managerRE.FindStringSubmatch(c.Message); m != nil {
			if s, err := strconv.Unquote(m[1]); err == nil {
				fc.Manager = model.PrintableLine(s)
			}
		}
		out = append(out, fc)
	}
	return out
}

// ApplyOptions are the operator's choices for the real apply.
type ApplyOptions struct {
	// ForceConflicts takes over fields other managers own. Only ever set
	// from an explicit operator choice; it is recorded.
	ForceConflicts bool
	// Skipped are the preflight checks the operator skipped, recorded with
	// the apply.
	Skipped []string
	// Changes is the dry-run's result, recorded as what each write meant to do.
	Changes *DryRunResult
	// OnApplied, when set, hears of each document as it is applied, so
	// that an operator sees the writes as they land.
	OnApplied func(AppliedObject)
	// Announced: every write of the spec is already on record (the
	// upgrade's started entry lists them). A log that refuses a
	// document's entry (a full disk) then no longer stops the writes:
	// stopping there left machine configs on the new template under a
	// Cluster still on the old version, which EKS-A fails. The entry is
	// held by the log and the document's Unrecorded says so.
	Announced bool
}

// AppliedObject is a document as the API server stored it.
type AppliedObject struct {
	Object          string
	Generation      int64
	ResourceVersion string
	// Unrecorded is why the log did not take the write's entry (with
	// ApplyOptions.Announced, whose writes go on): the log holds it, to
	// write with its next entry or print at exit.
	Unrecorded error
	// stored is the object as the API server stored it: the way back
	// after a partial apply (Session.WayBack) patches from it to the
	// snapshot's spec.
	stored *unstructured.Unstructured
}

// Apply server-side applies every document (the EKS-A Cluster last) and
// records each write. Every document is dry-run first: when any would
// conflict (unforced) or be refused, nothing is written and the refusal is
// recorded, so a spec never lands half applied because of its own content.
// A write that fails after that (the server changed meanwhile) stops it:
// the documents applied before it stay applied, and the snapshot holds
// their previous state.
func (a *Applier) Apply(ctx context.Context, spec *SpecFile, o ApplyOptions) ([]AppliedObject, error) {
	if err := requireAudit(a.Audit); err != nil {
		return nil, err
	}
	if err := a.precheck(ctx, spec, o); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// From the first write on, an interrupt (a Ctrl-C, a CI job's SIGTERM)
	// no longer stops the writes: each lands (landing) and the loop goes on,
	// since the spec half applied is what breaks a cluster (machine configs
	// on the new template under a Cluster still on the old version), and the
	// few writes left take a moment.
	var applied []AppliedObject
	for _, doc := range ordered(spec) {
		ri, u, err := a.Client.resource(doc)
		if err != nil {
			return applied, err
		}
		ref := docRef(u)
		// A log that refused the last entry takes this one's announcement
		// first, or the write is not made (the Locker's rule), unless the
		// write is on record already.
		if !o.Announced {
			if err := announce(ctx, a.Audit, AuditEntry{Time: a.now(), Cluster: a.Cluster, Action: "apply", Step: "server-side-apply",
				Object: ref, After: o.changesOf(ref), Forced: o.forcedOn(ref), Skipped: o.Skipped}); err != nil {
				return applied, err
			}
		}
		wctx, cancel := landing(ctx)
		out, err := ri.Apply(wctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: ManagerName, Force: o.ForceConflicts})
		cancel()
		entry := AuditEntry{
			Time:    a.now(),
			Cluster: a.Cluster,
			Action:  "apply",
			Step:    "server-side-apply",
			Object:  ref,
			After:   o.changesOf(ref),
			Forced:  o.forcedOn(ref),
			Skipped: o.Skipped,
		}
		if c := conflictsOf(ref, err); c != nil {
			err = &ConflictsError{Conflicts: c}
		} else if mayHaveLanded(wctx, err) {
			ue := &UnansweredWriteError{Object: ref, Err: err}
			if DeadlineCut(wctx, err) {
				ue.Stopped = stoppedPast(wctx, writeLimit)
			}
			err = ue
		}
		entry.Result, entry.Error = resultOf(err)
		if err == nil {
			entry.Message = fmt.Sprintf("generation %d", out.GetGeneration())
		}
		aerr := audit(ctx, a.Audit, entry)
		if err == nil {
			// Applied whatever becomes of its record: the server took it.
			// Left out when the log refused the entry, the start said
			// "nothing was applied" over a Cluster already on the new
			// spec, and released the lock of an upgrade under way.
			applied = append(applied, AppliedObject{Object: ref, Generation: out.GetGeneration(), ResourceVersion: out.GetResourceVersion(), Unrecorded: aerr, stored: out})
			if o.OnApplied != nil {
				o.OnApplied(applied[len(applied)-1])
			}
		}
		if aerr != nil && (err != nil || !o.Announced) {
			return applied, errors.Join(err, aerr)
		}
		if err != nil {
			var ce *ConflictsError
			var unanswered *UnansweredWriteError
			if errors.As(err, &ce) || errors.As(err, &unanswered) {
				return applied, err
			}
			return applied, fmt.Errorf("apply %s: %s", ref, refusal(err))
		}
	}
	return applied, nil
}

// UnansweredWriteError is a write of the spec that failed with no answer
// from the API server (no answer within writeLimit, a server timeout or
// error, a connection cut after the request went out): it may have landed
// all the same. Treated as not applied, the start released the lock and
// said the spec was unchanged, over a document that may be on the new spec.
type UnansweredWriteError struct {
	Object string
	Err    error
	// Stopped is how long past its bound the process, stopped, came to
	// see the write cut: the API server is then not the one to blame.
	Stopped time.Duration
}

func (e *UnansweredWriteError) Error() string {
	if e.Stopped > 0 {
		return fmt.Sprintf("apply %s: %s (%s); the write may have landed all the same", e.Object, noAnswer(writeLimit, e.Stopped), refusal(e.Err))
	}
	return fmt.Sprintf("apply %s: no answer from the API server (%s); the write may have landed all the same", e.Object, refusal(e.Err))
}

func (e *UnansweredWriteError) Unwrap() error { return e.Err }

// mayHaveLanded reports whether a failed write may have been made all the
// same. It was not when the API server answered with a refusal (a 4xx
// status, or a 500 from an admission webhook it could not call, which
// stops the write before storage), or when the request never went out (a
// refused connection, client-go's rate limiter that would have waited past
// the deadline). Anything else that cut the exchange after the request
// left (no answer in time, a connection reset or closed, HTTP/2's lost
// ping, a 5xx from storage) may have landed.
func mayHaveLanded(wctx context.Context, err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	var se apierrors.APIStatus
	switch {
	case strings.Contains(msg, "client rate limiter Wait returned an error"), errors.Is(err, syscall.ECONNREFUSED):
		return false
	case errors.As(err, &se):
		if strings.Contains(se.Status().Message, "failed calling webhook") {
			return false
		}
		return se.Status().Code >= 500 || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err)
	}
	return DeadlineCut(wctx, err) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) ||
		strings.Contains(msg, "http2: client connection lost") || strings.Contains(msg, "connection reset by peer")
}

// precheck dry-runs the spec (DryRun) and returns its conflicts, unless
// forced, as a *ConflictsError, or its first refusal, recorded in the audit
// log, before anything is written.
func (a *Applier) precheck(ctx context.Context, spec *SpecFile, o ApplyOptions) error {
	res, err := a.DryRun(ctx, spec)
	if err != nil {
		return err
	}
	var ref string
	switch rej := res.Rejected(); {
	case len(rej) > 0:
		ref = rej[0].Object
		err = fmt.Errorf("apply %s: %s", ref, strings.TrimPrefix(rej[0].Error, ref+": "))
	case len(res.Conflicts) > 0 && !o.ForceConflicts:
		ref = res.Conflicts[0].Object
		err = &ConflictsError{Conflicts: res.Conflicts}
	default:
		return nil
	}
	entry := AuditEntry{
		Time:    a.now(),
		Cluster: a.Cluster,
		Action:  "apply",
		Step:    "server-side-apply dry-run, nothing written",
		Object:  ref,
		Forced:  o.ForceConflicts,
		Skipped: o.Skipped,
	}
	entry.Result, entry.Error = resultOf(err)
	if aerr := audit(ctx, a.Audit, entry); aerr != nil {
		return errors.Join(err, aerr)
	}
	return err
}

func (a *Applier) now() time.Time {
	if a.Now == nil {
		return time.Now()
	}
	return a.Now()
}

// forcedOn reports whether the write of ref takes fields over: forced, and
// the dry run found a conflict on it (every write, when there was no dry run
// to tell). The audit marked all of them FORCED.
func (o ApplyOptions) forcedOn(ref string) bool {
	if !o.ForceConflicts || o.Changes == nil {
		return o.ForceConflicts
	}
	for _, c := range o.Changes.Conflicts {
		if c.Object == ref {
			return true
		}
	}
	return false
}

func (o ApplyOptions) changesOf(ref string) any {
	if o.Changes == nil {
		return nil
	}
	for _, c := range o.Changes.Objects {
		if c.Object == ref {
			if c.Create {
				return map[string]any{"create": true}
			}
			if len(c.Fields) == 0 {
				return nil
			}
			return c.Fields
		}
	}
	return nil
}

// DiffObjects lists the leaves of spec, metadata.labels and
// metadata.annotations that differ between two versions of an object.
func DiffObjects(before, after *unstructured.Unstructured) []FieldChange {
	var out []FieldChange
	for _, path := range [][]string{{"metadata", "labels"}, {"metadata", "annotations"}, {"spec"}} {
		b, _, _ := unstructured.NestedFieldNoCopy(before.Object, path...)
		a, _, _ := unstructured.NestedFieldNoCopy(after.Object, path...)
		out = diffValue(strings.Join(path, "."), b, a, out)
	}
	return out
}

func diffValue(path string, before, after any, out []FieldChange) []FieldChange {
	if reflect.DeepEqual(before, after) {
		return out
	}
	switch {
	case before == nil:
		return leaves(path, after, "add", out)
	case after == nil:
		return leaves(path, before, "remove", out)
	}
	bm, bok := before.(map[string]any)
	am, aok := after.(map[string]any)
	if bok && aok {
		keys := map[string]bool{}
		for k := range bm {
			keys[k] = true
		}
		for k := range am {
			keys[k] = true
		}
		for _, k := range sortedKeys(keys) {
			out = diffValue(path+"."+k, bm[k], am[k], out)
		}
		return out
	}
	bl, bok := before.([]any)
	al, aok := after.([]any)
	if bok && aok {
		if keyed(bl) && keyed(al) {
			return diffNamedList(path, bl, al, out)
		}
		for i := 0; i < max(len(bl), len(al)); i++ {
			var b, a any
			if i < len(bl) {
				b = bl[i]
			}
			if i < len(al) {
				a = al[i]
			}
			out = diffValue(fmt.Sprintf("%s[%d]", path, i), b, a, out)
		}
		return out
	}
	return append(out, FieldChange{Path: path, Old: render(before), New: render(after), Op: "change"})
}

// keyed reports a list of objects that all have a name: EKS-A's worker node
// groups, CAPI's machine lists. Matching them by name rather than by index
// keeps a removed first group from showing as every group changed.
func keyed(l []any) bool {
	for _, e := range l {
		m, ok := e.(map[string]any)
		if !ok {
			return false
		}
		if _, ok := m["name"].(string); !ok {
			return false
		}
	}
	return len(l) > 0
}

func diffNamedList(path string, before, after []any, out []FieldChange) []FieldChange {
	byName := func(l []any) (map[string]any, []string) {
		m := map[string]any{}
		var order []string
		for _, e := range l {
			n := e.(map[string]any)["name"].(string)
			if _, dup := m[n]; !dup {
				order = append(order, n)
			}
			m[n] = e
		}
		return m, order
	}
	bm, border := byName(before)
	am, aorder := byName(after)
	seen := map[string]bool{}
	for _, n := range append(border, aorder...) {
		if seen[n] {
			continue
		}
		seen[n] = true
		out = diffValue(fmt.Sprintf("%s[name=%s]", path, n), bm[n], am[n], out)
	}
	return out
}

func leaves(path string, v any, op string, out []FieldChange) []FieldChange {
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 {
			break
		}
		keys := map[string]bool{}
		for k := range t {
			keys[k] = true
		}
		for _, k := range sortedKeys(keys) {
			out = leaves(path+"."+k, t[k], op, out)
		}
		return out
	}
	fc := FieldChange{Path: path, Op: op}
	if op == "add" {
		fc.New = render(v)
	} else {
		fc.Old = render(v)
	}
	return append(out, fc)
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// render shows a value on one line: strings bare, the rest as JSON, long
// values cut in the middle: two URLs or images of one release differ at
// their end (…/v3.5.15/etcd-linux-amd64.tar.gz → …/v3.5.16/…), which a cut
// at the end hid on both sides of the arrow. Cut by runes, never inside
// one.
func render(v any) string {
	var s string
	if str, ok := v.(string); ok {
		s = str
	} else {
		b, err := json.Marshal(v)
		if err != nil {
			s = fmt.Sprint(v)
		} else {
			s = string(b)
		}
	}
	// The live side is the cluster's, which anyone who may write the
	// object chose: escaped, as cluster text is.
	s = model.PrintableLine(s)
	if r := []rune(s); len(r) > 80 {
		s = string(r[:38]) + "…" + string(r[len(r)-41:])
	}
	return s
}
