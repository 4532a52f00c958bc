package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"sigs.k8s.io/yaml"

	"github.com/upgrade-console/upgrade-console/model"
)

// listOutputs are the formats of lock status, snapshot list and audit:
// yaml as plan has it, the same document as json.
var listOutputs = []string{"table", "json", "yaml"}

const listOutputsHelp = "output format: table, json or yaml"

func checkListOutput(format string) error {
	if slices.Contains(listOutputs, format) {
		return nil
	}
	return &model.InputError{Source: "--output", Problem: fmt.Sprintf("unknown format %q", format), Fix: "use table, json or yaml"}
}

// writeDoc prints v as json (indented, as these commands always did) or
// yaml.
func writeDoc(out io.Writer, format string, v any) error {
	if format == "yaml" {
		data, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = out.Write(data)
		return err
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
