package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"sigs.k8s.io/yaml"
)

// APIVersion is the group/version of every EKS-A object the console reads.
const APIVersion = "anywhere.eks.amazonaws.com/v1alpha1"

// Kinds of the EKS-A release objects the console parses.
const (
	KindBundles     = "Bundles"
	KindEKSARelease = "EKSARelease"
)

// Bundles is the part of an EKS-A Bundles manifest the console uses: which
// component versions one EKS-A release ships, per Kubernetes version.
type Bundles struct {
	Name          string
	Number        int
	CLIMinVersion string
	CLIMaxVersion string
	// VersionsBundles are in manifest order; EKS-A reads management
	// components from the first one.
	VersionsBundles []VersionsBundle
	// Source names where the manifest came from (a file, or "Bundles
	// eksa-system/bundles-42"), for error messages.
	Source string
}

// VersionsBundle is one entry of spec.versionsBundles: the components EKS-A
// ships for one Kubernetes minor version.
type VersionsBundle struct {
	KubeVersion          string // "1.30"
	EndOfStandardSupport string // "2025-08-31", empty in older manifests
	EksD                 EksD
	// Components maps the bundle's JSON key (certManager, controlPlane, …) to
	// its version, for every key whose value object carries a non-empty
	// version. Keys EKS-A adds later appear here without a code change.
	Components map[string]string
	// Images maps the key of each image-only component the plan shows (see
	// imageCatalog: upgrader.upgrader, …) to its image uri, when the bundle
	// has one.
	Images map[string]string
}

// EksD is the EKS Distro release a versions bundle pins.
type EksD struct {
	Name        string // "kubernetes-1-30-eks-58"
	Channel     string // "1-30"
	KubeVersion string // "v1.30.14"
}

// Version is the string EKS-A's upgrade plan shows for the kubernetes row:
// <kubeVersion>-eks-<channel>-<N>, N being the trailing number of the name
// (e.g. v1.30.14-eks-1-30-58). ParseBundles guarantees the name has one.
func (e EksD) Version() string {
	return e.KubeVersion + "-eks-" + e.Channel + "-" + trailingNumber(e.Name)
}

// trailingNumber returns the digits after the last '-' of s, or "" when s does
// not end in -<digits>.
func trailingNumber(s string) string {
	i := strings.LastIndexByte(s, '-')
	if i < 0 || i == len(s)-1 {
		return ""
	}
	for _, r := range s[i+1:] {
		if r < '0' || r > '9' {
			return ""
		}
	}
	return s[i+1:]
}

// Version returns the version of the component with the given catalog key;
// KeyKubernetes yields the EKS-D version. Empty when the bundle lacks it.
func (v *VersionsBundle) Version(key string) string {
	if key == KeyKubernetes {
		if v.EksD.Name == "" {
			return ""
		}
		return v.EksD.Version()
	}
	return v.Components[key]
}

// Image returns the uri of the image-only component with the given catalog
// key (upgrader.upgrader, …); empty when the bundle lacks it.
func (v *VersionsBundle) Image(key string) string { return v.Images[key] }

// ForKubernetes returns the versions bundle EKS-A uses for a cluster on the
// given Kubernetes version ("1.30"): the one whose kubeVersion equals it.
func (b *Bundles) ForKubernetes(kubeVersion string) (*VersionsBundle, error) {
	for i := range b.VersionsBundles {
		if b.VersionsBundles[i].KubeVersion == kubeVersion {
			return &b.VersionsBundles[i], nil
		}
	}
	fix := "use one of the Kubernetes versions the manifest contains, or a Bundles manifest of an EKS-A release that supports " + kubeVersion
	if v, err := semver.NewVersion(kubeVersion); err == nil && fmt.Sprintf("%d.%d", v.Major(), v.Minor()) != kubeVersion {
		fix = fmt.Sprintf("give the Kubernetes minor version as EKS-A writes it, e.g. %d.%d", v.Major(), v.Minor())
	}
	return nil, &InputError{
		Source:  b.describe(),
		Field:   "spec.versionsBundles[].kubeVersion",
		Problem: fmt.Sprintf("has no versions bundle for Kubernetes %q; it contains %s", kubeVersion, strings.Join(b.KubernetesVersions(), ", ")),
		Fix:     fix,
	}
}

// KubernetesVersions lists the Kubernetes versions the manifest has bundles
// for, in manifest order.
func (b *Bundles) KubernetesVersions() []string {
	out := make([]string, 0, len(b.VersionsBundles))
	for _, vb := range b.VersionsBundles {
		out = append(out, vb.KubeVersion)
	}
	return out
}

// NewestKubernetesVersion returns the highest Kubernetes version the manifest
// has a bundle for, by version order rather than manifest order.
func (b *Bundles) NewestKubernetesVersion() string {
	var best string
	var bestV *semver.Version
	for _, k := range b.KubernetesVersions() {
		v, err := semver.NewVersion(k)
		if err != nil {
			continue
		}
		if bestV == nil || v.GreaterThan(bestV) {
			best, bestV = k, v
		}
	}
	return best
}

// describe names the manifest for messages: its source and, when the source
// does not already say it, its object name.
func (b *Bundles) describe() string {
	switch {
	case b.Source == "":
		return "Bundles " + b.Name
	case b.Name == "" || strings.Contains(b.Source, b.Name):
		return b.Source
	default:
		return b.Source + " (" + b.Name + ")"
	}
}

// rawBundles is the wire shape; versions bundles stay raw so that every key,
// including ones this console does not know yet, can be inspected.
type rawBundles struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Number          *int                         `json:"number"`
		CLIMinVersion   string                       `json:"cliMinVersion"`
		CLIMaxVersion   string                       `json:"cliMaxVersion"`
		VersionsBundles []map[string]json.RawMessage `json:"versionsBundles"`
	} `json:"spec"`
}

// bundlesFix is the fix for a Bundles manifest with a missing or malformed
// field. EKS-A generates the manifest whole, so such a file was cut, edited
// or exported wrongly, and no repair of one field can be trusted to say what
// the release ships: the remedy is the release's own manifest.
const bundlesFix = "use the Bundles manifest of an EKS-A release, unedited: " +
	"`kubectl get bundles NAME -n eksa-system -o yaml` (NAME is the EKSARelease's spec.bundlesRef.name), " +
	"or the release's bundle manifest (the EKSARelease's spec.bundleManifestUrl)"

// ParseBundles reads a Bundles manifest (YAML or JSON). Unknown fields are
// ignored so that manifests of newer EKS-A releases still parse; a field the
// console needs that is missing or malformed is an *InputError naming the
// file, the field and a fix.
func ParseBundles(data []byte, source string) (*Bundles, error) {
	b, err := parseBundles(data, source)
	if err != nil {
		// The field helpers are shared with ParseEKSARelease, whose remedy
		// differs, so the Bundles one is given here; a fix more precise
		// than it (quote a number, pass a single object) is kept.
		var ie *InputError
		if errors.As(err, &ie) && ie.Fix == "" {
			ie.Fix = bundlesFix
		}
		return nil, err
	}
	return b, nil
}

func parseBundles(data []byte, source string) (*Bundles, error) {
	j, err := objectJSON(data, source, KindBundles)
	if err != nil {
		return nil, err
	}
	var raw rawBundles
	if err := json.Unmarshal(j, &raw); err != nil {
		return nil, decodeError(err, source)
	}
	b := &Bundles{
		Name:          PrintableLine(raw.Metadata.Name),
		CLIMinVersion: PrintableLine(raw.Spec.CLIMinVersion),
		CLIMaxVersion: PrintableLine(raw.Spec.CLIMaxVersion),
		Source:        source,
	}
	if raw.Spec.Number == nil {
		return nil, missing(source, "spec.number")
	}
	b.Number = *raw.Spec.Number
	if len(raw.Spec.VersionsBundles) == 0 {
		return nil, &InputError{Source: source, Field: "spec.versionsBundles", Problem: "is missing or empty",
			Fix: "a Bundles manifest lists one versions bundle per supported Kubernetes version; " + bundlesFix}
	}
	seen := map[string]int{}
	for i, m := range raw.Spec.VersionsBundles {
		field := fmt.Sprintf("spec.versionsBundles[%d]", i)
		vb, err := parseVersionsBundle(m, source, field)
		if err != nil {
			return nil, err
		}
		if prev, dup := seen[vb.KubeVersion]; dup {
			return nil, &InputError{Source: source, Field: field + ".kubeVersion",
				Problem: fmt.Sprintf("Kubernetes %q appears twice (also in spec.versionsBundles[%d])", vb.KubeVersion, prev),
				Fix:     "a Bundles manifest has one versions bundle per Kubernetes version; " + bundlesFix}
		}
		seen[vb.KubeVersion] = i
		b.VersionsBundles = append(b.VersionsBundles, vb)
	}
	return b, nil
}

// notComponents are versions-bundle keys that are not components with a version.
var notComponents = map[string]bool{"kubeVersion": true, "endOfStandardSupport": true, "eksD": true}

func parseVersionsBundle(m map[string]json.RawMessage, source, field string) (VersionsBundle, error) {
	vb := VersionsBundle{Components: map[string]string{}, Images: map[string]string{}}
	var err error
	if vb.KubeVersion, err = requiredString(m, "kubeVersion", source, field); err != nil {
		return vb, err
	}
	if vb.EndOfStandardSupport, _, err = optionalString(m, "endOfStandardSupport", source, field); err != nil {
		return vb, err
	}
	eksdRaw, ok := m["eksD"]
	if !ok || isNull(eksdRaw) {
		return vb, missing(source, field+".eksD")
	}
	var eksd map[string]json.RawMessage
	if err := json.Unmarshal(eksdRaw, &eksd); err != nil {
		return vb, &InputError{Source: source, Field: field + ".eksD", Problem: "must be a mapping (the EKS-D release)"}
	}
	ef := field + ".eksD"
	if vb.EksD.Name, err = requiredString(eksd, "name", source, ef); err != nil {
		return vb, err
	}
	if trailingNumber(vb.EksD.Name) == "" {
		return vb, &InputError{Source: source, Field: ef + ".name",
			Problem: fmt.Sprintf("%q does not end in the EKS-D release number (like kubernetes-1-30-eks-58)", vb.EksD.Name)}
	}
	if vb.EksD.Channel, err = requiredString(eksd, "channel", source, ef); err != nil {
		return vb, err
	}
	if vb.EksD.KubeVersion, err = requiredString(eksd, "kubeVersion", source, ef); err != nil {
		return vb, err
	}
	// Sorted so that the first malformed key reported is the same every run.
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if notComponents[k] {
			continue
		}
		if PrintableLine(k) != k {
			// An unknown key is a row's name: escaped, it would still
			// be a row no release ships.
			return vb, &InputError{Source: source, Field: field, Problem: fmt.Sprintf("has a key with control characters, %s", PrintableLine(k)), Fix: bundlesFix}
		}
		// A component the diff knows must be whole: read as absent, a broken
		// entry would show as "added" or "removed" instead of as an error.
		_, known := catalogIndex[k]
		broken := func(problem string) error {
			return &InputError{Source: source, Field: field + "." + k, Problem: problem,
				Fix: bundlesFix}
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(m[k], &obj) != nil || obj == nil {
			if known {
				return vb, broken("must be a mapping with the component's version")
			}
			continue // not a mapping: not a component (nothing EKS-A ships today)
		}
		v, ok, err := optionalString(obj, "version", source, field+"."+k)
		if err != nil {
			return vb, err
		}
		if known && (!ok || v == "") {
			return vb, broken("has no version")
		}
		if _, readable := eksaSemver(v); k == "eksa" && !readable {
			// The version-skew check reads it: unreadable, the plan
			// failed that check (exit 3) with a fix for a spec file.
			return vb, &InputError{Source: source, Field: field + ".eksa.version",
				Problem: fmt.Sprintf("%q is not a version (like v0.21.2)", v), Fix: bundlesFix}
		}
		if ok && v != "" {
			vb.Components[k] = v
		}
	}
	for _, c := range imageCatalog {
		uri, err := imageURI(m, c.Key, source, field)
		if err != nil {
			return vb, err
		}
		if uri != "" {
			vb.Images[c.Key] = uri
		}
	}
	return vb, nil
}

// imageURI reads the uri of the image at a dotted path (upgrader.upgrader)
// of a versions bundle. An image that is absent, null, or has no uri is ""
// rather than an error: a release need not ship it (the upgrader came with
// in-place upgrades, in v0.19), an image without a uri has nothing to pull,
// and its row then reads "added" or "removed", which is what happens. A value
// of the wrong type is an error: the file is damaged.
func imageURI(m map[string]json.RawMessage, path, source, field string) (string, error) {
	parts := strings.Split(path, ".")
	obj := m
	for i, p := range parts {
		raw, ok := obj[p]
		if !ok || isNull(raw) {
			return "", nil
		}
		f := field + "." + strings.Join(parts[:i+1], ".")
		obj = nil
		if json.Unmarshal(raw, &obj) != nil || obj == nil {
			what := "a mapping"
			if i == len(parts)-1 {
				what = "a mapping with the image's uri"
			}
			return "", &InputError{Source: source, Field: f, Problem: "must be " + what}
		}
	}
	uri, _, err := optionalString(obj, "uri", source, field+"."+path)
	return uri, err
}

// clusterSpecKind finds an EKS-A Cluster document in a multi-document file.
var clusterSpecKind = regexp.MustCompile(`(?m)^kind:\s*Cluster\s*$`)

// yamlErrLine finds the line a YAML parser error names.
var yamlErrLine = regexp.MustCompile(`\bline [0-9]+\b`)

// objectJSON converts a single YAML or JSON document to JSON and checks that it
// is an object of the wanted kind in the EKS-A API group.
func objectJSON(data []byte, source, kind string) ([]byte, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &InputError{Source: source, Problem: "is empty", Fix: "pass a " + kind + " manifest"}
	}
	if extraDocument(data) {
		if clusterSpecKind.Match(data) {
			// A cluster spec given for the Bundles (--to-bundles spec.yaml):
			// "keep only the Bundles object" sent the operator looking
			// for one in it.
			return nil, &InputError{Source: source, Problem: "is a cluster spec (it holds an EKS-A Cluster), not a " + kind + " manifest",
				Fix: "give the " + kind + " manifest here (`kubectl -n eksa-system get " + strings.ToLower(kind) + " NAME -o yaml`); the cluster spec goes to -f"}
		}
		return nil, &InputError{Source: source, Problem: "holds more than one YAML document",
			Fix: "keep only the " + kind + " object in the file"}
	}
	// Strict: a key given twice (a second versionsBundles:) would leave
	// only the last, without a word.
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
		problem, fix := "is not valid YAML: "+msg, "correct the YAML"
		if strings.Contains(msg, "already set in map") {
			problem, fix = "has a key given twice: "+msg, "keep one of the two (YAML would take the last and drop the other)"
		}
		if at := yamlErrLine.FindString(msg); at != "" {
			fix += " (" + at + ")"
		}
		return nil, &InputError{Source: source, Problem: problem,
			Fix: fix + ", or save the " + kind + " again (`kubectl get " + strings.ToLower(kind) + " NAME -o yaml`)"}
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(j, &header); err != nil || header == nil {
		return nil, &InputError{Source: source, Problem: "is not a Kubernetes object (a mapping with apiVersion and kind)",
			Fix: "pass a " + kind + " manifest (" + APIVersion + ")"}
	}
	gotKind, _, err := optionalString(header, "kind", source, "")
	if err != nil {
		return nil, err
	}
	gotAPI, _, err := optionalString(header, "apiVersion", source, "")
	if err != nil {
		return nil, err
	}
	if gotKind != kind || gotAPI != APIVersion {
		what := fmt.Sprintf("a %s object (%s)", orMissing(gotKind), orMissing(gotAPI))
		if gotKind == "List" || strings.HasSuffix(gotKind, "List") {
			what = "a list of objects"
		}
		// The kind right and the apiVersion not: the field is the
		// apiVersion, where "kind:" sent the operator to a kind that was
		// right.
		field, fix := "kind", fmt.Sprintf("pass a single %s manifest, e.g. the output of kubectl get %s NAME -n eksa-system -o yaml", kind, strings.ToLower(kind))
		if gotKind == kind {
			field = "apiVersion"
			fix = fmt.Sprintf("EKS-A serves %s as %s: set apiVersion: %s if the manifest is an EKS-A release's, or %s", kind, APIVersion, APIVersion, fix)
		}
		return nil, &InputError{Source: source, Field: field,
			Problem: fmt.Sprintf("is %s, not an EKS-A %s (%s)", what, kind, APIVersion), Fix: fix}
	}
	return j, nil
}

func orMissing(s string) string {
	if s == "" {
		return "<missing>"
	}
	return s
}

// extraDocument reports whether data has a second YAML document with content:
// the YAML decoder would silently read only the first.
func extraDocument(data []byte) bool {
	content, separated := false, false
	for _, line := range bytes.Split(data, []byte("\n")) {
		// A document marker starts at column 0; an indented "---" is content
		// of a block scalar.
		marker := bytes.TrimRight(line, " \t\r")
		t := bytes.TrimSpace(line)
		switch {
		case bytes.Equal(marker, []byte("---")) || bytes.HasPrefix(marker, []byte("--- ")):
			separated = content
		case len(t) == 0 || t[0] == '#' || bytes.Equal(t, []byte("...")):
		case separated:
			return true
		default:
			content = true
		}
	}
	return false
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

func missing(source, field string) error {
	return &InputError{Source: source, Field: field, Problem: "is missing (required)"}
}

func requiredString(m map[string]json.RawMessage, key, source, field string) (string, error) {
	s, ok, err := optionalString(m, key, source, field)
	if err != nil {
		return "", err
	}
	if !ok || s == "" {
		return "", missing(source, join(field, key))
	}
	return s, nil
}

// optionalString reads m[key] as a string; ok is false when the key is absent
// or null.
func optionalString(m map[string]json.RawMessage, key, source, field string) (s string, ok bool, err error) {
	raw, present := m[key]
	if !present || isNull(raw) {
		return "", false, nil
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		problem := fmt.Sprintf("must be a string, got %s", Printable(strings.TrimSpace(string(raw))))
		if len(raw) > 40 {
			problem = "must be a string"
		}
		fix := ""
		switch {
		case key == "uri":
			fix = "give the image reference as a string, e.g. uri: public.ecr.aws/eks-anywhere/upgrader:v1-31-11-eks-a-84; or " + bundlesFix
		case len(raw) > 0 && (raw[0] >= '0' && raw[0] <= '9'):
			fix = "quote the value in YAML (\"1.30\", not 1.30, which YAML reads as the number 1.3)"
		}
		return "", false, &InputError{Source: source, Field: join(field, key), Problem: problem, Fix: fix}
	}
	// Bundles come from files and from the cluster, and their strings
	// are printed in tables and checks: an escape sequence in a version
	// wiped a downgrade's warning and wrote a row of its choosing there.
	return PrintableLine(s), true, nil
}

// decodeError turns a JSON type error into an InputError naming the field.
func decodeError(err error, source string) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return &InputError{Source: source, Field: te.Field, Problem: fmt.Sprintf("must be %s, got %s", jsonTypeName(te.Type.Kind().String()), te.Value)}
	}
	return &InputError{Source: source, Problem: "cannot be decoded: " + err.Error()}
}

func jsonTypeName(goKind string) string {
	switch goKind {
	case "int", "int64", "ptr":
		return "an integer"
	case "string":
		return "a string"
	case "slice":
		return "a list"
	case "map", "struct":
		return "a mapping"
	default:
		return "a " + goKind
	}
}

// Differences lists how two manifests of the same Bundles differ, as
// "1.31 cert-manager: v2.0.0+… here, v1.16.4+… there" lines, in manifest
// order: the Kubernetes versions each carries, each component's version and
// EKS-D's. Empty when they carry the same versions.
func (b *Bundles) Differences(other *Bundles) []string {
	var out []string
	theirs := map[string]*VersionsBundle{}
	for i := range other.VersionsBundles {
		theirs[other.VersionsBundles[i].KubeVersion] = &other.VersionsBundles[i]
	}
	seen := map[string]bool{}
	for i := range b.VersionsBundles {
		vb := &b.VersionsBundles[i]
		seen[vb.KubeVersion] = true
		o := theirs[vb.KubeVersion]
		if o == nil {
			out = append(out, fmt.Sprintf("Kubernetes %s: here only", vb.KubeVersion))
			continue
		}
		keys := []string{KeyKubernetes}
		for k := range vb.Components {
			keys = append(keys, k)
		}
		for k := range o.Components {
			if _, ok := vb.Components[k]; !ok {
				keys = append(keys, k)
			}
		}
		SortComponentKeys(keys)
		for _, k := range slices.Compact(keys) {
			c := LookupComponent(k)
			where := vb.KubeVersion + " "
			if c.Management {
				// Read from the first versions bundle only, as EKS-A does,
				// and not tied to a Kubernetes version.
				if i > 0 {
					continue
				}
				where = ""
			}
			if mine, them := vb.Version(k), o.Version(k); mine != them {
				out = append(out, fmt.Sprintf("%s%s: %s here, %s there", where, c.Name, orNone(mine), orNone(them)))
			}
		}
		// The images the plan shows are what the nodes pull: an edited
		// reference is as much another release as an edited version.
		for _, c := range imageCatalog {
			if mine, them := vb.Image(c.Key), o.Image(c.Key); mine != them {
				out = append(out, fmt.Sprintf("%s %s: %s here, %s there", vb.KubeVersion, c.Name, orNone(mine), orNone(them)))
			}
		}
	}
	for i := range other.VersionsBundles {
		if k := other.VersionsBundles[i].KubeVersion; !seen[k] {
			out = append(out, fmt.Sprintf("Kubernetes %s: there only", k))
		}
	}
	return out
}

func orNone(v string) string {
	if v == "" {
		return "none"
	}
	return v
}
