package crd

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

//go:embed samples/*.yaml
var samples embed.FS

// SampleObjects returns one realistic object of every kind the project's CRDs
// define, as EKS-A, etcdadm and the in-place upgrade controllers write them
// (with status). They prove the CRDs store what real clusters hold, and the
// compatibility check proves the upstream CRDs accept them unchanged. Each
// call returns fresh copies.
func SampleObjects() ([]*unstructured.Unstructured, error) {
	entries, err := fs.ReadDir(samples, "samples")
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for _, e := range entries {
		data, err := fs.ReadFile(samples, path.Join("samples", e.Name()))
		if err != nil {
			return nil, err
		}
		got, err := DecodeObjects(data)
		if err != nil {
			return nil, fmt.Errorf("samples/%s: %w", e.Name(), err)
		}
		objs = append(objs, got...)
	}
	return objs, nil
}

// DecodeObjects reads every object of a multi-document YAML or JSON stream.
func DecodeObjects(data []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, err
		}
		if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(raw, []byte("null")) {
			continue
		}
		// UnmarshalJSON keeps integers as int64, as the API machinery does.
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return nil, err
		}
		objs = append(objs, u)
	}
}
