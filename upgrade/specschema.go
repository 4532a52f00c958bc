package upgrade

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/upgrade-console/upgrade-console/config/crd"
	"github.com/upgrade-console/upgrade-console/model"
)

// The spec file is checked against the schemas of the CRDs the console
// embeds (config/crd) before it goes anywhere near a cluster. Otherwise a
// misspelt field or a value of the wrong type is refused only by the API
// server, in the live plan's dry run (spec-accepted): with a cluster at
// hand only, as a failed preflight check rather than as the bad input in
// the file it is, and after ParseSpec has reported a misspelt
// kubernetesVersion as missing. The walker below knows only what a spec
// file needs — field names, types, int-or-string, maps, lists — and leaves
// enums, formats, required fields and limits to the API server: a schema
// validator from k8s.io/apiextensions-apiserver would bring the API
// server's validation machinery into the binary for that.

// maxSchemaProblems caps what one document reports: past a handful, the
// rest are likely one mistake (a wrong indentation) seen many times.
const maxSchemaProblems = 10

// Schemas are the schemas a spec is checked against, by kind and version.
// The cluster's own CRDs are the ones its API server enforces
// (ClusterSchemas); the console's copies stand in for a kind the cluster's
// CRD could not be read of, and offline.
type Schemas struct {
	byKind map[schema.GroupVersionKind]*apiextensionsv1.JSONSchemaProps
	// fromCluster marks the kinds read from the cluster.
	fromCluster map[schema.GroupVersionKind]bool
	// live: a cluster will judge the spec too (the plan's server-side dry
	// run); unread says, for a kind whose CRD it did not give, why.
	live   bool
	unread map[schema.GroupVersionKind]string
	// read reads the cluster's CRD of a kind into the maps above, once a
	// kind (tried); nil offline.
	read  func(schema.GroupKind)
	tried map[schema.GroupKind]bool
	// conn are the connection flags of the cluster the spec is for, for
	// the kubectl commands a refusal of the file names (WithConn).
	conn model.ConnFlags
}

// WithConn is s with the connection flags the fixes of a refused spec give
// in their kubectl commands, so they reach the cluster the console did.
func (s Schemas) WithConn(conn model.ConnFlags) Schemas {
	s.conn = conn
	return s
}

var embeddedSchemas = sync.OnceValues(func() (Schemas, error) {
	crds, err := crd.Objects()
	if err != nil {
		return Schemas{}, fmt.Errorf("reading the console's embedded CRDs: %w", err)
	}
	out := Schemas{byKind: map[schema.GroupVersionKind]*apiextensionsv1.JSONSchemaProps{}}
	for _, c := range crds {
		out.add(c)
	}
	return out, nil
})

// add takes the served versions of a CRD.
func (s Schemas) add(c *apiextensionsv1.CustomResourceDefinition) []schema.GroupVersionKind {
	var added []schema.GroupVersionKind
	for _, v := range c.Spec.Versions {
		if !v.Served || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		root := *v.Schema.OpenAPIV3Schema
		// A CRD's schema says only "type: object" of metadata; the API
		// server checks it as ObjectMeta.
		props := make(map[string]apiextensionsv1.JSONSchemaProps, len(root.Properties)+1)
		maps.Copy(props, root.Properties)
		props["metadata"] = objectMetaSchema
		root.Properties = props
		gvk := schema.GroupVersionKind{Group: c.Spec.Group, Version: v.Name, Kind: c.Spec.Names.Kind}
		s.byKind[gvk] = &root
		added = append(added, gvk)
	}
	return added
}

// gvrCRD is the resource of CustomResourceDefinitions.
var gvrCRD = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// ClusterSchemas checks a spec against the cluster's own CRDs of the kinds
// the console carries copies of. An EKS-A newer than the console may have
// fields its copies lack, and a spec using them must not be refused for it;
// a CRD that cannot be read (no right to, no answer) leaves the console's
// copy. Each CRD is read the first time a document of its kind is checked
// (a spec holds three or four kinds; the Bundles CRD alone is large), with
// ctx.
func ClusterSchemas(ctx context.Context, c *Client) (Schemas, error) {
	emb, err := embeddedSchemas()
	if err != nil {
		return Schemas{}, err
	}
	crds, err := crd.Objects()
	if err != nil {
		return Schemas{}, err
	}
	out := Schemas{byKind: maps.Clone(emb.byKind), fromCluster: map[schema.GroupVersionKind]bool{},
		live: true, unread: map[schema.GroupVersionKind]string{}, tried: map[schema.GroupKind]bool{}}
	out.read = func(gk schema.GroupKind) {
		i := slices.IndexFunc(crds, func(c *apiextensionsv1.CustomResourceDefinition) bool {
			return c.Spec.Group == gk.Group && c.Spec.Names.Kind == gk.Kind
		})
		if i < 0 {
			return
		}
		own := crds[i]
		unread := func(why string) {
			for _, v := range own.Spec.Versions {
				out.unread[schema.GroupVersionKind{Group: own.Spec.Group, Version: v.Name, Kind: own.Spec.Names.Kind}] = why
			}
		}
		u, err := c.Dynamic.Resource(gvrCRD).Get(ctx, own.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsForbidden(err):
			unread("the console may not read CustomResourceDefinition " + own.Name + " (forbidden)")
			return
		case err != nil:
			unread("reading CustomResourceDefinition " + own.Name + ": " + err.Error())
			return
		}
		var theirs apiextensionsv1.CustomResourceDefinition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &theirs); err != nil {
			unread("reading CustomResourceDefinition " + own.Name + ": " + err.Error())
			return
		}
		for _, gvk := range out.add(&theirs) {
			out.fromCluster[gvk] = true
		}
	}
	return out, nil
}

// schemaOf is the schema a document of gvk is checked against (nil: none),
// reading the cluster's CRD of its kind first if it was not yet tried.
func (s Schemas) schemaOf(gvk schema.GroupVersionKind) *apiextensionsv1.JSONSchemaProps {
	if s.read != nil && !s.tried[gvk.GroupKind()] {
		s.tried[gvk.GroupKind()] = true
		s.read(gvk.GroupKind())
	}
	return s.byKind[gvk]
}

// objectMetaSchema is the part of ObjectMeta an operator writes; the fields
// the server owns are accepted as anything (ParseSpec drops most of them).
var objectMetaSchema = func() apiextensionsv1.JSONSchemaProps {
	// Nullable: metadata is decoded as ObjectMeta, which reads a null as
	// the empty value, where a custom field's null is refused.
	str := apiextensionsv1.JSONSchemaProps{Type: "string", Nullable: true}
	strMap := apiextensionsv1.JSONSchemaProps{Type: "object",
		AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &str}}
	anything := apiextensionsv1.JSONSchemaProps{}
	props := map[string]apiextensionsv1.JSONSchemaProps{
		"name": str, "generateName": str, "namespace": str,
		"labels": strMap, "annotations": strMap,
		"finalizers": {Type: "array", Nullable: true, Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &str}},
	}
	for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
		"deletionGracePeriodSeconds", "selfLink", "ownerReferences", "managedFields"} {
		props[f] = anything
	}
	return apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props}
}()

// checkSchema checks a spec document against the embedded CRD of its
// apiVersion and kind: unknown fields and values of the wrong type, every
// one of the document (up to maxSchemaProblems), each an *InputError. A
// document of a kind the console carries no CRD for is left to the API
// server, which has the CRD (the live plan's spec-accepted dry run).
func checkSchema(source string, n int, u *unstructured.Unstructured, all Schemas) error {
	gvk := u.GroupVersionKind()
	root := all.schemaOf(gvk)
	if root == nil {
		// A kind the console does not know may be a newer EKS-A's (the
		// dry run tells); a near miss of a known one is a typo, which
		// otherwise read as "no EKS-A Cluster in the file".
		var kinds []string
		for k := range all.byKind {
			if k.Group == gvk.Group && !slices.Contains(kinds, k.Kind) {
				kinds = append(kinds, k.Kind)
			}
		}
		slices.Sort(kinds)
		// A known kind at a version nobody serves (anywhere.eks.amazonaws.com/v1beta1):
		// left to the dry run, the document went unchecked offline (a
		// typo in it passed) and live the refusal named no file or field.
		want := gvk.GroupKind()
		if gvk.Group == "" {
			// "apiVersion: anywhere.eks.amazonaws.com" reads as a core
			// version of that name.
			want.Group = gvk.Version
		}
		var versions []string
		for k := range all.byKind {
			if k.GroupKind() == want {
				versions = append(versions, k.Version)
			}
		}
		if len(versions) > 0 {
			slices.Sort(versions)
			served := make([]string, len(versions))
			for i, v := range versions {
				served[i] = schema.GroupVersion{Group: want.Group, Version: v}.String()
			}
			return &model.InputError{Source: source, Field: docLabel(n, u.Object) + ": apiVersion",
				Problem: fmt.Sprintf("%s is not a version of %s that EKS Anywhere serves (%s)", u.GetAPIVersion(), gvk.Kind, strings.Join(served, ", ")),
				Fix:     "set apiVersion: " + served[len(served)-1]}
		}
		if c := closest(gvk.Kind, kinds); c != "" && c != gvk.Kind {
			return &model.InputError{Source: source, Field: docLabel(n, u.Object) + ": kind",
				Problem: fmt.Sprintf("%s is not an EKS Anywhere kind (did you mean %s?)", gvk.Kind, c), Fix: "set kind: " + c}
		}
		return nil
	}
	w := &schemaWalker{kind: u.GetKind()}
	w.value(place{}, u.Object, root)
	if all.live && !all.fromCluster[gvk] {
		// Judged by the console's copy while the cluster will judge the
		// spec itself: a field the copy does not know may be a newer
		// EKS-A's, and only the API server can tell; it is left to the
		// plan's dry run. A near miss of a known field is a typo all the
		// same, and is said as one.
		w.problems = slices.DeleteFunc(w.problems, func(p fieldProblem) bool { return p.unknown && !p.nearMiss })
	}
	if len(w.problems) == 0 {
		return nil
	}
	doc := docLabel(n, u.Object)
	var errs []error
	for i, p := range w.problems {
		if i == maxSchemaProblems {
			errs = append(errs, fmt.Errorf("%s: %s: %d more problems not shown", source, doc, len(w.problems)-i))
			break
		}
		fix := p.fix
		if p.unknown && !all.fromCluster[gvk] {
			// The console's copy may be older than the EKS-A that
			// will read the spec.
			if why := all.unread[gvk]; why != "" {
				fix += " (checked against the console's copy of the " + gvk.Kind + " CRD, which may be older than your EKS-A: " + why + ")"
			} else {
				fix += " (checked against the console's copy of the " + gvk.Kind + " CRD: a field of a newer EKS-A is checked against the cluster's own CRD when the console can read it)"
			}
		}
		errs = append(errs, &model.InputError{Source: source, Field: doc + ": " + p.path, Problem: p.problem, Fix: fix})
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

type fieldProblem struct {
	path, problem, fix string
	// unknown: a field the schema does not name (not a wrong type);
	// nearMiss, one a known field's name is a slip away from.
	unknown, nearMiss bool
}

// place is where a value sits: its path for messages, and how an example of
// it is written (key: value, or - value for a list item).
type place struct {
	path string
	key  string
	item bool
}

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

func (p place) field(k string) place {
	switch {
	case p.path == "":
		return place{path: k, key: k}
	case plainKey.MatchString(k):
		return place{path: p.path + "." + k, key: k}
	default: // a label or annotation key such as app.kubernetes.io/name
		return place{path: p.path + "[" + strconv.Quote(k) + "]", key: k}
	}
}

func (p place) index(i int) place {
	return place{path: fmt.Sprintf("%s[%d]", p.path, i), key: p.key, item: true}
}

// example writes v where p is, as it would read in the file.
func (p place) example(v string) string {
	if p.item {
		return "- " + v
	}
	return p.key + ": " + v
}

type schemaWalker struct {
	kind     string
	problems []fieldProblem
}

func (w *schemaWalker) add(p place, problem, fix string) {
	w.problems = append(w.problems, fieldProblem{path: p.path, problem: problem, fix: fix})
}

func (w *schemaWalker) addUnknown(p place, problem, fix string) {
	w.problems = append(w.problems, fieldProblem{path: p.path, problem: problem, fix: fix, unknown: true})
}

func (w *schemaWalker) value(p place, v any, s *apiextensionsv1.JSONSchemaProps) {
	if v == nil {
		// YAML's null (a key with nothing after it). Server-side apply
		// never removes a field for it. A null list or scalar that is not
		// nullable is refused ("in body must be of type array"; where
		// another manager owns it, after a conflict that forcing only
		// turns into that refusal), so it is refused here, before the
		// plan. A null mapping is merged as one without fields: where
		// another manager owns fields in it they are kept, and the null
		// changes nothing; where none does, the API server refuses it
		// ("must be of type object"). Which of the two depends on the
		// live object's managers, so it is left to the dry run, whose
		// refusal names the field.
		if !s.Nullable && !s.XIntOrString && s.Type != "" && s.Type != "object" {
			w.nullProblem(p, s)
		}
		return
	}
	if s.XIntOrString {
		if !isInteger(v) && !isString(v) {
			w.typeProblem(p, v, s)
		}
		return
	}
	if s.Type == "" {
		// No type (x-kubernetes-preserve-unknown-fields): anything goes, but
		// the fields the schema does name are still checked.
		if m, ok := v.(map[string]any); ok {
			w.fields(p, m, s)
		}
		return
	}
	if !hasType(v, s.Type) {
		w.typeProblem(p, v, s)
		return
	}
	switch s.Type {
	case "object":
		w.fields(p, v.(map[string]any), s)
	case "array":
		if s.Items != nil && s.Items.Schema != nil {
			for i, e := range v.([]any) {
				w.value(p.index(i), e, s.Items.Schema)
			}
		}
	}
}

func (w *schemaWalker) fields(p place, m map[string]any, s *apiextensionsv1.JSONSchemaProps) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		at := p.field(k)
		if ps, ok := s.Properties[k]; ok {
			w.value(at, m[k], &ps)
			continue
		}
		switch ap := s.AdditionalProperties; {
		case ap != nil && ap.Schema != nil:
			w.value(at, m[k], ap.Schema)
		case ap != nil && ap.Allows:
		case s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields:
		case s.XEmbeddedResource && (k == "apiVersion" || k == "kind" || k == "metadata"):
		case len(s.Properties) == 0:
			// An object whose fields the schema does not list: nothing to
			// compare with, and nothing to suggest.
		default:
			w.unknown(at, k, s)
		}
	}
}

func (w *schemaWalker) unknown(p place, k string, s *apiextensionsv1.JSONSchemaProps) {
	known := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		known = append(known, name)
	}
	slices.Sort(known)
	problem := "unknown field: " + w.kind + " has no such field here"
	if best := closest(k, known); best != "" {
		w.problems = append(w.problems, fieldProblem{path: p.path, problem: problem, fix: "did you mean " + best + "?", unknown: true, nearMiss: true})
		return
	}
	list := known
	if len(list) > 12 {
		list = append(slices.Clip(list[:12]), "…")
	}
	w.addUnknown(p, problem, "remove it, or name one of the fields that can be here: "+strings.Join(list, ", "))
}

// closest is the known name nearest to k: the same but for case, or within a
// few edits (fewer for short names, which are close to everything).
func closest(k string, known []string) string {
	best, bestDist := "", math.MaxInt
	for _, c := range known {
		if strings.EqualFold(c, k) {
			return c
		}
		d := editDistance(strings.ToLower(k), strings.ToLower(c))
		if d < bestDist {
			best, bestDist = c, d
		}
	}
	limit := 3
	switch n := len(k); {
	case n <= 4:
		limit = 1
	case n <= 10:
		limit = 2
	}
	if bestDist > limit {
		return ""
	}
	return best
}

// editDistance counts the insertions, deletions, substitutions and swaps of
// two neighbours that turn a into b (optimal string alignment), the usual
// typing slips.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

func isString(v any) bool { _, ok := v.(string); return ok }

func isInteger(v any) bool {
	switch n := v.(type) {
	case int, int32, int64:
		return true
	case float64: // every JSON number decodes as one
		return n == math.Trunc(n) && !math.IsInf(n, 0)
	}
	return false
}

func isNumber(v any) bool {
	switch v.(type) {
	case int, int32, int64, float64:
		return true
	}
	return false
}

func hasType(v any, t string) bool {
	switch t {
	case "string":
		return isString(v)
	case "integer":
		return isInteger(v)
	case "number":
		return isNumber(v) // an integer is a number too
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	}
	return true // a type this walker does not know: the API server judges
}

// describe says what a value is, quoting a short scalar as written.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > 40 {
			return "a string"
		}
		return strconv.Quote(x) + " (a string)"
	case bool:
		return strconv.FormatBool(x) + " (a boolean)"
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	}
	if isNumber(v) {
		return formatNumber(v) + " (a number)"
	}
	return fmt.Sprintf("%v", v)
}

func formatNumber(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// stringExamples are values of the fields an operator edits for an upgrade,
// for a fix that shows the value as it should read.
var stringExamples = map[string]string{
	"kubernetesVersion": `"1.31"`,
	"eksaVersion":       `"v0.21.2"`,
}

func (w *schemaWalker) typeProblem(p place, v any, s *apiextensionsv1.JSONSchemaProps) {
	var want, fix string
	switch {
	case s.XIntOrString:
		want = "a whole number or a string"
		fix = "give e.g. " + p.example("1") + " or " + p.example(`"25%"`)
	case s.Type == "string":
		want = "a string"
		switch {
		case isNumber(v) || v == true || v == false:
			example := stringExamples[p.key]
			if example == "" || p.item {
				example = strconv.Quote(fmt.Sprint(formatScalar(v)))
			}
			fix = "quote the value, e.g. " + p.example(example)
			if isNumber(v) && !isInteger(v) {
				fix += " (unquoted, YAML reads 1.30 as the number 1.3)"
			}
		default:
			fix = "give a single value on the same line, e.g. " + p.example(`"…"`)
		}
	case s.Type == "integer":
		want = "an integer"
		fix = "give a whole number without quotes, e.g. " + p.example("3")
	case s.Type == "number":
		want = "a number"
		fix = "give a number without quotes, e.g. " + p.example("1.5")
	case s.Type == "boolean":
		want = "true or false"
		fix = "give true or false without quotes, e.g. " + p.example("false")
	case s.Type == "object":
		want = "a mapping of fields"
		if _, isList := v.([]any); isList {
			fix = `remove the "- " in front of its fields: a list item starts with "- ", a mapping's fields do not`
		} else {
			fix = "end the line after " + p.key + ": and write its fields on the lines below, indented"
		}
		if fields := fieldNames(s); fields != "" {
			fix += " (its fields: " + fields + ")"
		}
	case s.Type == "array":
		want = "a list"
		if m, isMap := v.(map[string]any); isMap {
			first := "name"
			if _, ok := m[first]; !ok {
				keys := make([]string, 0, len(m))
				for k := range m {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				if len(keys) > 0 {
					first = keys[0]
				}
			}
			fix = `make it a list: start each item with "- ", e.g. ` + p.key + `: then "- ` + first + `: …" on the next line`
		} else {
			fix = "make it a list, e.g. " + p.example("["+quoteScalar(v)+"]")
		}
	default:
		want = "of type " + s.Type
	}
	w.add(p, fmt.Sprintf("must be %s, got %s", want, describe(v)), fix)
}

func (w *schemaWalker) nullProblem(p place, s *apiextensionsv1.JSONSchemaProps) {
	want, example := "a value", `"…"`
	switch s.Type {
	case "array":
		want, example = "a list", "[…]"
	case "string":
		want = "a string"
	case "integer":
		want, example = "an integer", "3"
	case "number":
		want, example = "a number", "1.5"
	case "boolean":
		want, example = "true or false", "false"
	}
	how := "give it a value (" + p.example(example) + ")"
	if s.Type == "array" {
		how = "give it its items (" + p.example(example) + ", or one \"- \" line each below it)"
	}
	w.add(p, "is empty (null), and must be "+want, how+", or remove the line")
}

func formatScalar(v any) any {
	if isNumber(v) {
		return formatNumber(v)
	}
	return v
}

func quoteScalar(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(formatScalar(v))
}

func fieldNames(s *apiextensionsv1.JSONSchemaProps) string {
	if len(s.Properties) == 0 {
		return ""
	}
	names := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		names = append(names, k)
	}
	slices.Sort(names)
	if len(names) > 8 {
		names = append(slices.Clip(names[:8]), "…")
	}
	return strings.Join(names, ", ")
}
