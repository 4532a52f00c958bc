package upgrade

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/upgrade-console/upgrade-console/model"
)

// SpecFile is a cluster spec as the operator wrote it: a multi-document YAML
// with one EKS-A Cluster and the provider objects that go with it (datacenter
// and machine configs, …), the file `eksctl anywhere upgrade cluster -f` takes.
type SpecFile struct {
	Path string
	// Docs are the documents in file order, cleaned of server-managed fields.
	Docs []*unstructured.Unstructured
	// Cluster is the EKS-A Cluster among Docs.
	Cluster *unstructured.Unstructured
}

// ReadSpecFile reads and checks a cluster spec file. defaultNamespace is used
// for documents that name none (the kubeconfig context's namespace, as
// kubectl does).
func ReadSpecFile(path, defaultNamespace string) (*SpecFile, error) {
	return ReadSpecFileWith(path, defaultNamespace, Schemas{})
}

// ReadSpecFileWith is ReadSpecFile checking the documents against schemas
// (ClusterSchemas); the console's copies of the CRDs when zero.
func ReadSpecFileWith(path, defaultNamespace string, schemas Schemas) (*SpecFile, error) {
	if path == "-" {
		// kubectl's way to name standard input: the spec's path is in the
		// plan, the audit log and the snapshot, and a pipe has none.
		return nil, &model.InputError{Source: "-f -", Problem: "the cluster spec is read from a file, not from standard input",
			Fix: "save the spec to a file and give its path (-f mgmt.yaml): it is named in the plan, the audit log and the snapshot"}
	}
	data, err := ReadInputFile(path, MaxSpecBytes)
	if err != nil {
		return nil, &model.InputError{Source: path, Problem: "cannot read the cluster spec: " + unwrapPathErr(err),
			Fix: "give the cluster spec file with -f (the file you created the cluster with, edited for the upgrade; a few KB of YAML)"}
	}
	return ParseSpecWith(path, data, defaultNamespace, schemas)
}

func unwrapPathErr(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// minorOnly is a Kubernetes version as EKS-A's Cluster spec takes it.
var minorOnly = regexp.MustCompile(`^[0-9]+\.[0-9]+$`)

// serverFields are metadata the API server owns: a document copied from
// `kubectl get -o yaml` carries them, and a stale resourceVersion would turn
// the apply into a precondition that fails.
var serverFields = []string{"resourceVersion", "uid", "creationTimestamp", "generation", "managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"}

// ParseSpec parses the documents of a cluster spec. source names the file in
// errors.
func ParseSpec(source string, data []byte, defaultNamespace string) (*SpecFile, error) {
	return ParseSpecWith(source, data, defaultNamespace, Schemas{})
}

// ParseSpecWith is ParseSpec checking the documents against schemas; the
// console's copies of the CRDs when zero.
func ParseSpecWith(source string, data []byte, defaultNamespace string, schemas Schemas) (*SpecFile, error) {
	if schemas.byKind == nil {
		conn := schemas.conn
		var err error
		if schemas, err = embeddedSchemas(); err != nil {
			return nil, err
		}
		schemas.conn = conn
	}
	if defaultNamespace == "" {
		defaultNamespace = "default"
	}
	spec := &SpecFile{Path: source}
	docs, err := decodeSpecDocs(source, data)
	if err != nil {
		return nil, err
	}
	seen := map[string]int{}
	for i, obj := range docs {
		u := &unstructured.Unstructured{Object: obj}
		where := fmt.Sprintf("document %d", i+1)
		if u.GetAPIVersion() == "" {
			return nil, &model.InputError{Source: source, Field: where + ": apiVersion", Problem: "missing", Fix: "every document needs apiVersion and kind"}
		}
		if u.GetKind() == "" {
			return nil, &model.InputError{Source: source, Field: where + ": kind", Problem: "missing", Fix: "every document needs apiVersion and kind"}
		}
		gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
		if err != nil {
			return nil, &model.InputError{Source: source, Field: where + ": apiVersion", Problem: err.Error()}
		}
		clean(u)
		// Before the checks of single fields below: a misspelt
		// kubernetesVersion is to be reported as the misspelling, not as
		// kubernetesVersion missing. Objects of other groups are refused
		// further down, whatever their fields.
		// "apiVersion: anywhere.eks.amazonaws.com" parses as a core version
		// of that name: checkSchema says the version is missing, where the
		// file read as having no EKS-A Cluster.
		if gv.Group == GVREKSACluster.Group || (gv.Group == "" && gv.Version == GVREKSACluster.Group) {
			if err := checkSchema(source, i+1, u, schemas); err != nil {
				return nil, err
			}
		}
		if u.GetName() == "" {
			return nil, &model.InputError{Source: source, Field: fmt.Sprintf("%s (%s): metadata.name", where, u.GetKind()), Problem: "missing",
				Fix: "name the object as the cluster names it (`kubectl get " + strings.TrimSuffix(strings.ToLower(u.GetKind())+"."+gv.Group, ".") + " -A` lists them)"}
		}
		if u.GetNamespace() == "" {
			u.SetNamespace(defaultNamespace)
		}
		// The same object twice would be applied twice, the last copy
		// winning, each diffed apart against the cluster: the operator
		// would confirm neither what lands.
		id := gv.Group + "/" + u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
		if first, twice := seen[id]; twice {
			return nil, &model.InputError{Source: source, Field: where,
				Problem: fmt.Sprintf("%s %s/%s again (first in document %d): both would be applied, the last one winning", u.GetKind(), u.GetNamespace(), u.GetName(), first),
				Fix:     "keep one of the two documents"}
		}
		seen[id] = i + 1
		if isEKSACluster(u) {
			if spec.Cluster != nil {
				return nil, &model.InputError{Source: source, Field: where,
					Problem: fmt.Sprintf("a second EKS-A Cluster (%s) after %s", u.GetName(), spec.Cluster.GetName()),
					Fix:     "upgrade one cluster at a time: keep one Cluster and its provider objects in the file"}
			}
			spec.Cluster = u
		}
		spec.Docs = append(spec.Docs, u)
	}
	if spec.Cluster == nil {
		return nil, &model.InputError{Source: source, Problem: "no EKS-A Cluster (apiVersion anywhere.eks.amazonaws.com/v1alpha1, kind Cluster) in the file",
			Fix: "give the cluster spec file, not a Bundles or CAPI manifest"}
	}
	// The console applies the cluster's own spec, nothing else: an object of
	// another API group slipped into the file would be created or changed
	// under the upgrade's name.
	for _, d := range spec.Docs {
		if gv, _ := schema.ParseGroupVersion(d.GetAPIVersion()); gv.Group != GVREKSACluster.Group {
			return nil, &model.InputError{Source: source, Field: docRef(d),
				Problem: "not an EKS Anywhere object: the spec file holds the EKS-A Cluster and its provider objects (apiVersion " + GVREKSACluster.Group + "/…)",
				Fix:     "remove it from the file; apply other objects with the tool that owns them"}
		}
	}
	// EKS-A finds a Cluster's provider objects by name in the Cluster's own
	// namespace: one in another namespace would be created there, unused,
	// while the object the Cluster refers to stays as it was.
	if err := checkNamespaces(source, spec); err != nil {
		return nil, err
	}
	// YAML reads an unquoted 1.30 as the number 1.3: said as such, not as a
	// missing field.
	for _, fe := range [][2]string{{"kubernetesVersion", `"1.31" (unquoted, YAML reads 1.30 as the number 1.3)`}, {"eksaVersion", `"v0.21.2"`}} {
		f, example := fe[0], fe[1]
		v, found, _ := unstructured.NestedFieldNoCopy(spec.Cluster.Object, "spec", f)
		field := "Cluster " + spec.Cluster.GetName() + ": spec." + f
		str, isString := v.(string)
		switch {
		case !found && f == "kubernetesVersion":
			return nil, &model.InputError{Source: source, Field: field, Problem: "missing",
				Fix: `set the Kubernetes version the cluster should run, e.g. kubernetesVersion: "1.31"`}
		case found && !isString:
			return nil, &model.InputError{Source: source, Field: field, Problem: fmt.Sprintf("must be a string, got %v (%T)", v, v),
				Fix: fmt.Sprintf("quote the value, e.g. %s: %s", f, example)}
		case f == "eksaVersion" && str != "" && !strings.HasPrefix(str, "v"):
			// EKS-A looks the release up by a name made of this string:
			// "0.21.2" names EKSARelease eksa-0-21-2, which no release
			// is, and the upgrade stops after the apply.
			return nil, &model.InputError{Source: source, Field: field,
				Problem: fmt.Sprintf("%q has no leading v: EKS-A looks the release up as EKSARelease %s, and releases are named from their version with the v (%s)",
					str, model.EKSAReleaseName(str), model.EKSAReleaseName("v"+str)),
				Fix: fmt.Sprintf(`write eksaVersion: "v%s"`, str)}
		case f == "eksaVersion" && str != "" && !validEKSAVersion(str):
			return nil, &model.InputError{Source: source, Field: field,
				Problem: fmt.Sprintf("%q is not an EKS-A release version (v, then MAJOR.MINOR.PATCH)", v),
				Fix:     `give the version of the EKS-A release to upgrade to, e.g. eksaVersion: "v0.21.2"`}
		case f == "kubernetesVersion" && !minorOnly.MatchString(str):
			// EKS-A names a Kubernetes minor; "1.31.2" read as a version
			// newer than every bundle, with the wrong fix.
			return nil, &model.InputError{Source: source, Field: field, Problem: fmt.Sprintf("%q is not a Kubernetes minor version", v),
				Fix: `give MAJOR.MINOR, e.g. kubernetesVersion: "1.31" (EKS-A picks the patch release from its bundle)`}
		}
	}
	if err := checkNodeGroups(source, spec.Cluster, schemas.conn); err != nil {
		return nil, err
	}
	return spec, nil
}

// validEKSAVersion: v and a whole semantic version, as EKS-A names its
// releases (a development build's pre-release and build metadata included).
func validEKSAVersion(v string) bool {
	_, err := semver.StrictNewVersion(strings.TrimPrefix(v, "v"))
	return err == nil
}

// specFileFix is what to give instead of a file that is not a cluster spec.
const specFileFix = "give the cluster spec file: the EKS-A Cluster and its provider objects, as YAML documents separated by lines of ---"

// decodeSpecDocs decodes the documents of a spec file that hold something
// (a document of comments only, or {}, is skipped), in file order: the
// messages number documents the same way.
func decodeSpecDocs(source string, data []byte) ([]map[string]any, error) {
	if bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{")) {
		return decodeJSONDocs(source, data)
	}
	chunks, err := splitYAML(source, data)
	if err != nil {
		return nil, err
	}
	var docs []map[string]any
	for _, c := range chunks {
		n := len(docs) + 1
		var v any
		if err := yaml.Unmarshal(c.data, &v); err != nil {
			msg, line := c.yamlError(err)
			return nil, &model.InputError{Source: source, Field: fmt.Sprintf("document %d", n), Problem: "not valid YAML: " + msg, Fix: yamlFix(msg, line, c.data)}
		}
		// A key given twice: YAML keeps the last one and the first is lost
		// without a word. A document with merge keys (<<: *anchor) is let
		// be: the strict decoder counts a key that overrides a merged one as
		// given twice, which it is not.
		if !bytes.Contains(c.data, []byte("<<")) {
			if err := yaml.UnmarshalStrict(c.data, new(any)); err != nil {
				msg, _ := c.yamlError(err)
				return nil, &model.InputError{Source: source, Field: docLabel(n, v), Problem: "a key given twice in one mapping: " + msg,
					Fix: "keep one of the two: YAML would take the last and drop the other without a word"}
			}
		}
		objs, err := specObjects(source, n, v)
		if err != nil {
			return nil, err
		}
		docs = append(docs, objs...)
	}
	return docs, nil
}

// yamlFix says what to do about a YAML syntax error: where, the usual cause
// of that error, and the way out for a file that was never the spec.
func yamlFix(msg string, line int, doc []byte) string {
	fix := "correct the YAML"
	if line > 0 {
		fix += fmt.Sprintf(" at line %d", line)
	}
	switch {
	case strings.Contains(msg, "cannot start any token") && bytes.ContainsRune(doc, '\t'):
		fix += " (indent with spaces: YAML does not allow tabs)"
	case strings.Contains(msg, "mapping values are not allowed"):
		fix += ` (quote a value that holds ": ", e.g. key: "a: b", or line the key up with the ones above it)`
	case strings.Contains(msg, "control characters"):
		fix = "remove the control characters (a binary file is no spec)"
	}
	return fix + "; if this is not the cluster spec, " + specFileFix
}

// docLabel names a document in messages: its number, and its kind and name
// when it has them.
func docLabel(n int, v any) string {
	m, _ := v.(map[string]any)
	kind, _ := m["kind"].(string)
	md, _ := m["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	switch {
	case kind != "" && name != "":
		return fmt.Sprintf("document %d (%s %s)", n, kind, name)
	case kind != "":
		return fmt.Sprintf("document %d (%s)", n, kind)
	}
	return fmt.Sprintf("document %d", n)
}

// decodeJSONDocs reads a stream of JSON objects (kubectl get -o json).
func decodeJSONDocs(source string, data []byte) ([]map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var docs []map[string]any
	for {
		n := len(docs) + 1
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			where := "correct the JSON"
			var se *json.SyntaxError
			if errors.As(err, &se) && se.Offset <= int64(len(data)) {
				where = fmt.Sprintf("correct the JSON at line %d", bytes.Count(data[:se.Offset], []byte("\n"))+1)
			}
			return nil, &model.InputError{Source: source, Field: fmt.Sprintf("document %d", n), Problem: "not valid JSON: " + err.Error(),
				Fix: where + "; if this is not the cluster spec, " + specFileFix}
		}
		// JSON is YAML: the strict reading refuses a key given twice, which
		// JSON decoding would settle silently for the last.
		var v any
		if err := yaml.UnmarshalStrict(raw, &v); err != nil {
			msg := strings.TrimPrefix(strings.TrimPrefix(err.Error(), "error converting YAML to JSON: "), "yaml: ")
			return nil, &model.InputError{Source: source, Field: docLabel(n, nil), Problem: "a key given twice in one object: " + msg,
				Fix: "keep one of the two: JSON decoding would take the last and drop the other without a word"}
		}
		objs, err := specObjects(source, n, v)
		if err != nil {
			return nil, err
		}
		docs = append(docs, objs...)
	}
}

// specObjects are the objects of a decoded document: the document itself,
// or the items of a List (`kubectl get … -o yaml` of several objects); none
// for an empty one.
func specObjects(source string, n int, v any) ([]map[string]any, error) {
	obj, err := specObject(source, n, v)
	if err != nil || len(obj) == 0 {
		return nil, err
	}
	items, isList := obj["items"].([]any)
	kind, _ := obj["kind"].(string)
	if !strings.HasSuffix(kind, "List") {
		return []map[string]any{obj}, nil
	}
	if !isList {
		// A List whose items are missing or not a sequence went on as an
		// object of kind List, refused for its missing name with
		// "`kubectl get list -A` lists them".
		problem := "a " + kind + " with no items: nothing to apply"
		if it, ok := obj["items"]; ok && it != nil {
			problem = "a " + kind + " whose items YAML reads as " + describe(it) + ", not a list of objects"
		}
		return nil, &model.InputError{Source: source, Field: fmt.Sprintf("document %d (%s): items", n, kind), Problem: problem,
			Fix: "give the cluster spec's objects (the Cluster and its datacenter and machine configs) as the List's items, or one per document separated by ---"}
	}
	var out []map[string]any
	for i, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, &model.InputError{Source: source, Field: fmt.Sprintf("document %d: items[%d]", n, i),
				Problem: "not a Kubernetes object: YAML reads it as " + describe(it), Fix: specFileFix}
		}
		if len(m) > 0 {
			out = append(out, m)
		}
	}
	return out, nil
}

// specObject is a decoded document as an object; nil for an empty one.
func specObject(source string, n int, v any) (map[string]any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		if len(x) > 0 && x["apiVersion"] == nil && x["kind"] == nil {
			// Text with a colon in it reads as a mapping too.
			return nil, &model.InputError{Source: source, Field: fmt.Sprintf("document %d", n),
				Problem: "not a Kubernetes object: it has neither apiVersion nor kind",
				Fix:     "if this is the cluster spec, give every document apiVersion and kind (apiVersion: anywhere.eks.amazonaws.com/v1alpha1, kind: Cluster, …); if not, " + specFileFix}
		}
		return x, nil
	}
	return nil, &model.InputError{Source: source, Field: fmt.Sprintf("document %d", n),
		Problem: "not a Kubernetes object (a mapping with apiVersion, kind, metadata and spec): YAML reads the document as " + describe(v),
		Fix:     specFileFix}
}

// yamlChunk is one document of a multi-document YAML file and the file's line
// it starts at.
type yamlChunk struct {
	data []byte
	line int
}

var yamlLine = regexp.MustCompile(`\bline ([0-9]+)\b`)

// yamlError words a YAML parser error for the file, and returns the first
// line it names (0 for none): the parser counts lines from the start of the
// document, the operator from the start of the file.
func (c yamlChunk) yamlError(err error) (string, int) {
	msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:")
	var parts []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	msg = strings.Join(parts, "; ")
	first := 0
	msg = yamlLine.ReplaceAllStringFunc(msg, func(m string) string {
		n, _ := strconv.Atoi(yamlLine.FindStringSubmatch(m)[1])
		n += c.line - 1
		if first == 0 {
			first = n
		}
		return "line " + strconv.Itoa(n)
	})
	if first == 0 && c.line > 1 {
		msg += fmt.Sprintf(" (in the document that starts at line %d)", c.line)
	}
	return msg, first
}

// splitYAML cuts a YAML stream into documents at its "---" lines as
// k8s.io/apimachinery's YAMLReader does (so documents count alike
// everywhere), keeping the line each starts at.
func splitYAML(source string, data []byte) ([]yamlChunk, error) {
	var chunks []yamlChunk
	start, startLine := 0, 1
	for off, line := 0, 1; off < len(data); line++ {
		next := len(data)
		if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
			next = off + i + 1
		}
		if l := data[off:next]; bytes.HasPrefix(l, []byte("---")) {
			if rest := strings.TrimSpace(string(l[3:])); rest != "" && rest[0] != '#' {
				return nil, &model.InputError{Source: source, Field: fmt.Sprintf("line %d", line),
					Problem: fmt.Sprintf("a document separator with %q after it", rest),
					Fix:     "put --- on a line of its own (a comment may follow it) and the document below it"}
			}
			if off > start {
				chunks = append(chunks, yamlChunk{data: data[start:off], line: startLine})
			}
			start, startLine = next, line+1
		}
		off = next
	}
	if len(data) > start {
		chunks = append(chunks, yamlChunk{data: data[start:], line: startLine})
	}
	return chunks, nil
}

func clean(u *unstructured.Unstructured) {
	md, ok := u.Object["metadata"].(map[string]any)
	if ok {
		for _, f := range serverFields {
			delete(md, f)
		}
		if ann, ok := md["annotations"].(map[string]any); ok {
			delete(ann, "kubectl.kubernetes.io/last-applied-configuration")
			if len(ann) == 0 {
				delete(md, "annotations")
			}
		}
	}
	delete(u.Object, "status")
}

// SpecPathForLog is the spec file's path as the audit log keeps it: absolute,
// since a relative one means nothing once read from another directory.
func SpecPathForLog(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// EksaVersion is spec.eksaVersion of the spec's Cluster ("" when unset).
func (s *SpecFile) EksaVersion() string {
	v, _, _ := unstructured.NestedString(s.Cluster.Object, "spec", "eksaVersion")
	return v
}

// KubernetesVersion is spec.kubernetesVersion of the spec's Cluster.
func (s *SpecFile) KubernetesVersion() string {
	v, _, _ := unstructured.NestedString(s.Cluster.Object, "spec", "kubernetesVersion")
	return v
}

// WorkerGroups are the spec's Cluster's worker groups, as the live plan reads
// a Cluster's (their own kubernetesVersion, or empty: the cluster's).
func (s *SpecFile) WorkerGroups() []model.WorkerGroup { return workerGroups(s.Cluster) }

// CiliumSkipUpgrade is spec.clusterNetwork.cniConfig.cilium.skipUpgrade of
// the spec's Cluster: EKS-A then leaves Cilium as it is.
func (s *SpecFile) CiliumSkipUpgrade() bool {
	v, _, _ := unstructured.NestedBool(s.Cluster.Object, "spec", "clusterNetwork", "cniConfig", "cilium", "skipUpgrade")
	return v
}

// Uses is what the spec's Cluster chooses among the components a release
// ships (its provider, Flux, its CNI), so that the plan marks the others
// unused.
func (s *SpecFile) Uses() *model.ClusterUses {
	u := &model.ClusterUses{}
	kind, _, _ := unstructured.NestedString(s.Cluster.Object, "spec", "datacenterRef", "kind")
	if p, datacenter := providerOf(kind); p != nil && datacenter {
		u.Provider = p.bundleKey
	}
	ref, _, _ := unstructured.NestedFieldNoCopy(s.Cluster.Object, "spec", "gitOpsRef")
	u.GitOps = ref != nil
	cni, _, _ := unstructured.NestedMap(s.Cluster.Object, "spec", "clusterNetwork", "cniConfig")
	// EKS-A's webhook takes one CNI; the older string field is read when
	// cniConfig names none.
	switch legacy, _, _ := unstructured.NestedString(s.Cluster.Object, "spec", "clusterNetwork", "cni"); {
	case cni["cilium"] != nil:
		u.CNI = "cilium"
	case cni["kindnetd"] != nil:
		u.CNI = "kindnetd"
	case legacy == "cilium", legacy == "kindnetd":
		u.CNI = legacy
	}
	u.NoInPlace = !s.asksInPlace()
	u.NoBottlerocket = s.osFamiliesKnownWithout("bottlerocket")
	return u
}

// asksInPlace reports whether the control plane or a worker group upgrades
// in place (upgradeRolloutStrategy.type InPlace): only then do the nodes run
// the in-place upgrader image.
func (s *SpecFile) asksInPlace() bool {
	cp, _, _ := unstructured.NestedString(s.Cluster.Object, "spec", "controlPlaneConfiguration", "upgradeRolloutStrategy", "type")
	if cp == "InPlace" {
		return true
	}
	for _, g := range s.WorkerGroups() {
		if g.RolloutStrategy == "InPlace" {
			return true
		}
	}
	return false
}

// osFamiliesKnownWithout reports whether every machine config the Cluster
// refers to is in the file, names its osFamily, and none of them is family:
// a config the file lacks (the live plan's, read from the cluster) or one
// without osFamily leaves it unknown, and false.
func (s *SpecFile) osFamiliesKnownWithout(family string) bool {
	seen := false
	for _, r := range providerRefs(s.Cluster, "") {
		if r.datacenter || !r.set {
			continue
		}
		seen = true
		d := s.Doc(r.kind, r.name)
		if d == nil {
			return false
		}
		osFamily, _, _ := unstructured.NestedString(d.Object, "spec", "osFamily")
		if osFamily == "" || strings.EqualFold(osFamily, family) {
			return false
		}
	}
	return seen
}

// checkNamespaces refuses a spec whose documents are not all in one
// namespace, naming the documents out of step: those outside the namespace
// most of them share (the Cluster's, on a tie). A Cluster alone in a
// mistyped namespace was reported as its first provider object's fault,
// "VSphereDatacenterConfig default/mgmt: … is not the Cluster's namespace
// (defualt)", and the fix moved the five right documents.
func checkNamespaces(source string, spec *SpecFile) error {
	count := map[string]int{}
	for _, d := range spec.Docs {
		count[d.GetNamespace()]++
	}
	if len(count) == 1 {
		return nil
	}
	want := spec.Cluster.GetNamespace()
	for _, ns := range slices.Sorted(maps.Keys(count)) {
		if count[ns] > count[want] {
			want = ns
		}
	}
	var out []string
	first := -1
	for i, d := range spec.Docs {
		if d.GetNamespace() != want {
			if first < 0 {
				first = i
			}
			out = append(out, fmt.Sprintf("document %d (%s)", i+1, docRef(d)))
		}
	}
	d := spec.Docs[first]
	problem := fmt.Sprintf("%s is not the Cluster's namespace (%s): EKS-A looks for the Cluster's provider objects in its own namespace only", d.GetNamespace(), want)
	if want != spec.Cluster.GetNamespace() {
		problem = fmt.Sprintf("%s is not the namespace of %d of the spec's %d documents (%s): EKS-A looks for the Cluster's provider objects in the Cluster's own namespace only", d.GetNamespace(), count[want], len(spec.Docs), want)
	}
	if len(out) > 1 {
		problem += "; out of step too: " + strings.Join(out[1:], ", ")
	}
	it := "it"
	if len(out) > 1 {
		it = "each of them"
	}
	return &model.InputError{Source: source, Field: out[0] + ": metadata.namespace", Problem: problem,
		Fix: "set metadata.namespace: " + want + " on " + it + ", or leave it out on every document"}
}

// Names lists the documents as "Kind namespace/name", for messages.
func (s *SpecFile) Names() string {
	names := make([]string, 0, len(s.Docs))
	for _, d := range s.Docs {
		names = append(names, docRef(d))
	}
	return strings.Join(names, ", ")
}

// Has reports whether the spec holds a document of that kind and name.
func (s *SpecFile) Has(kind, name string) bool { return s.Doc(kind, name) != nil }

// Doc is the spec's document of that kind and name; nil when it has none.
func (s *SpecFile) Doc(kind, name string) *unstructured.Unstructured {
	for _, d := range s.Docs {
		if d.GetKind() == kind && d.GetName() == name {
			return d
		}
	}
	return nil
}
