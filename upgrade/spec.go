package upgrade

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

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
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &model.InputError{Source: path, Problem: "cannot read the cluster spec: " + unwrapPathErr(err),
			Fix: "give the cluster spec file with -f (the file you created the cluster with, edited for the upgrade)"}
	}
	return ParseSpec(path, data, defaultNamespace)
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
	if defaultNamespace == "" {
		defaultNamespace = "default"
	}
	spec := &SpecFile{Path: source}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for i := 1; ; i++ {
		var obj map[string]any
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &model.InputError{Source: source, Field: fmt.Sprintf("document %d", i), Problem: "not valid YAML: " + err.Error()}
		}
		if len(obj) == 0 {
			continue // an empty document between two ---
		}
		u := &unstructured.Unstructured{Object: obj}
		where := fmt.Sprintf("document %d", i)
		if u.GetAPIVersion() == "" {
			return nil, &model.InputError{Source: source, Field: where + ": apiVersion", Problem: "missing", Fix: "every document needs apiVersion and kind"}
		}
		if u.GetKind() == "" {
			return nil, &model.InputError{Source: source, Field: where + ": kind", Problem: "missing", Fix: "every document needs apiVersion and kind"}
		}
		if _, err := schema.ParseGroupVersion(u.GetAPIVersion()); err != nil {
			return nil, &model.InputError{Source: source, Field: where + ": apiVersion", Problem: err.Error()}
		}
		if u.GetName() == "" {
			return nil, &model.InputError{Source: source, Field: fmt.Sprintf("%s (%s): metadata.name", where, u.GetKind()), Problem: "missing"}
		}
		if u.GetNamespace() == "" {
			u.SetNamespace(defaultNamespace)
		}
		clean(u)
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
	for _, d := range spec.Docs {
		if d.GetNamespace() != spec.Cluster.GetNamespace() {
			return nil, &model.InputError{Source: source, Field: docRef(d) + ": metadata.namespace",
				Problem: fmt.Sprintf("%s is not the Cluster's namespace (%s): EKS-A looks for the Cluster's provider objects in its own namespace only", d.GetNamespace(), spec.Cluster.GetNamespace()),
				Fix:     "set metadata.namespace: " + spec.Cluster.GetNamespace() + " on it, or leave it out on every document"}
		}
	}
	// YAML reads an unquoted 1.30 as the number 1.3: said as such, not as a
	// missing field.
	for _, fe := range [][2]string{{"kubernetesVersion", `"1.31" (unquoted, YAML reads 1.30 as the number 1.3)`}, {"eksaVersion", `"v0.21.2"`}} {
		f, example := fe[0], fe[1]
		v, found, _ := unstructured.NestedFieldNoCopy(spec.Cluster.Object, "spec", f)
		field := "Cluster " + spec.Cluster.GetName() + ": spec." + f
		switch _, isString := v.(string); {
		case !found && f == "kubernetesVersion":
			return nil, &model.InputError{Source: source, Field: field, Problem: "missing",
				Fix: `set the Kubernetes version the cluster should run, e.g. kubernetesVersion: "1.31"`}
		case found && !isString:
			return nil, &model.InputError{Source: source, Field: field, Problem: fmt.Sprintf("must be a string, got %v (%T)", v, v),
				Fix: fmt.Sprintf("quote the value, e.g. %s: %s", f, example)}
		case f == "kubernetesVersion" && !minorOnly.MatchString(v.(string)):
			// EKS-A names a Kubernetes minor; "1.31.2" read as a version
			// newer than every bundle, with the wrong fix.
			return nil, &model.InputError{Source: source, Field: field, Problem: fmt.Sprintf("%q is not a Kubernetes minor version", v),
				Fix: `give MAJOR.MINOR, e.g. kubernetesVersion: "1.31" (EKS-A picks the patch release from its bundle)`}
		}
	}
	return spec, nil
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

// Names lists the documents as "Kind namespace/name", for messages.
func (s *SpecFile) Names() string {
	names := make([]string, 0, len(s.Docs))
	for _, d := range s.Docs {
		names = append(names, docRef(d))
	}
	return strings.Join(names, ", ")
}

// Has reports whether the spec holds a document of that kind and name.
func (s *SpecFile) Has(kind, name string) bool {
	for _, d := range s.Docs {
		if d.GetKind() == kind && d.GetName() == name {
			return true
		}
	}
	return false
}
