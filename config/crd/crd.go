// Package crd carries the CustomResourceDefinitions of the kinds the console
// reads and writes that no Go module ships: EKS Anywhere's Cluster, Bundles,
// EKSARelease and in-place upgrade kinds, the vSphere provider kinds a
// cluster spec file carries (VSphereDatacenterConfig, VSphereMachineConfig),
// and etcdadm's EtcdadmCluster. The
// YAML files beside this one are embedded so every binary (the demo, the
// integration tests) installs the same definitions.
//
// The Cluster API CRDs are not copied here: CAPIObjects reads them from the
// sigs.k8s.io/cluster-api module at the version this module requires.
package crd

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

//go:embed *.yaml
var files embed.FS

// Objects returns the project's own CRDs, sorted by name.
func Objects() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return decodeFS(files, ".")
}

// ReadDir returns the CRDs in every .yaml, .yml and .json file of dir (not
// recursive), sorted by name. It is how an alternative set (the upstream CRDs
// of the compatibility check) is loaded.
func ReadDir(dir string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds, err := decodeFS(os.DirFS(dir), ".")
	if err != nil {
		return nil, fmt.Errorf("reading CRDs in %s: %w", dir, err)
	}
	if len(crds) == 0 {
		return nil, fmt.Errorf("no CustomResourceDefinition found in %s", dir)
	}
	return crds, nil
}

func decodeFS(fsys fs.FS, dir string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, e := range entries {
		switch path.Ext(e.Name()) {
		case ".yaml", ".yml", ".json":
		default:
			continue
		}
		if e.IsDir() {
			continue
		}
		data, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		got, err := decode(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		crds = append(crds, got...)
	}
	sort.Slice(crds, func(i, j int) bool { return crds[i].Name < crds[j].Name })
	return crds, nil
}

// decode reads every CustomResourceDefinition document of a multi-document
// YAML or JSON stream and ignores documents of other kinds.
func decode(data []byte) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := dec.Decode(crd); err != nil {
			if errors.Is(err, io.EOF) {
				return crds, nil
			}
			return nil, err
		}
		if crd.Kind != "CustomResourceDefinition" || crd.Name == "" {
			continue
		}
		crds = append(crds, crd)
	}
}
