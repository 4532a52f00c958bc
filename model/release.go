package model

import (
	"encoding/json"
	"strings"
)

// EKSARelease is the part of an EKSARelease object the console uses: which
// Bundles object an EKS-A version maps to.
type EKSARelease struct {
	Name                string
	Version             string // spec.version, "v0.21.1"
	BundlesRefName      string // spec.bundlesRef.name, "bundles-73"
	BundlesRefNamespace string // spec.bundlesRef.namespace, "eksa-system"
	ReleaseDate         string
	GitCommit           string
	BundleManifestURL   string
}

// EKSAReleaseName is the name EKS-A gives the EKSARelease of a version
// (GenerateEKSAReleaseName): "eksa-" + version with '+' → "-plus-", then
// '.' → '-'. v0.19.0 → eksa-v0-19-0.
func EKSAReleaseName(version string) string {
	return "eksa-" + strings.ReplaceAll(strings.ReplaceAll(version, "+", "-plus-"), ".", "-")
}

// ParseEKSARelease reads an EKSARelease manifest (YAML or JSON). The fields the
// console resolves Bundles with (spec.version, spec.bundlesRef.name and
// namespace) are required; other fields are optional and unknown ones ignored.
func ParseEKSARelease(data []byte, source string) (*EKSARelease, error) {
	j, err := objectJSON(data, source, KindEKSARelease)
	if err != nil {
		return nil, err
	}
	var raw struct {
		Metadata map[string]json.RawMessage `json:"metadata"`
		Spec     map[string]json.RawMessage `json:"spec"`
	}
	if err := json.Unmarshal(j, &raw); err != nil {
		return nil, decodeError(err, source)
	}
	r := &EKSARelease{}
	if r.Name, _, err = optionalString(raw.Metadata, "name", source, "metadata"); err != nil {
		return nil, err
	}
	if raw.Spec == nil {
		return nil, missing(source, "spec")
	}
	if r.Version, err = requiredString(raw.Spec, "version", source, "spec"); err != nil {
		return nil, err
	}
	for key, dst := range map[string]*string{"releaseDate": &r.ReleaseDate, "gitCommit": &r.GitCommit, "bundleManifestUrl": &r.BundleManifestURL} {
		if *dst, _, err = optionalString(raw.Spec, key, source, "spec"); err != nil {
			return nil, err
		}
	}
	refRaw, ok := raw.Spec["bundlesRef"]
	if !ok || isNull(refRaw) {
		return nil, missing(source, "spec.bundlesRef")
	}
	var ref map[string]json.RawMessage
	if err := json.Unmarshal(refRaw, &ref); err != nil {
		return nil, &InputError{Source: source, Field: "spec.bundlesRef", Problem: "must be a mapping with name and namespace"}
	}
	if r.BundlesRefName, err = requiredString(ref, "name", source, "spec.bundlesRef"); err != nil {
		return nil, err
	}
	if r.BundlesRefNamespace, err = requiredString(ref, "namespace", source, "spec.bundlesRef"); err != nil {
		return nil, err
	}
	return r, nil
}
