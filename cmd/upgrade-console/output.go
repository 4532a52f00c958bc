package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/upgrade-console/upgrade-console/model"
)

// outputs are the formats of the commands that print a document (plan,
// version, lock status, snapshot list, audit): the command's own default
// (table, or version's text), and the same document as json or yaml. One
// list and one check: the fixes were worded two ways ("use one of text,
// json, yaml", "use table, json or yaml").
func outputs(def string) []string { return []string{def, "json", "yaml"} }

// outputHelp is the --output flag's usage.
func outputHelp(def string) string { return "output format: " + strings.Join(outputs(def), ", ") }

// checkOutput refuses a --output that is none of outputs(def).
func checkOutput(format, def string) error {
	if slices.Contains(outputs(def), format) {
		return nil
	}
	return &model.InputError{Source: "--output", Problem: fmt.Sprintf("unknown format %q", format), Fix: "use one of " + strings.Join(outputs(def), ", ")}
}

// writeDoc prints v as json (indented, as these commands always did) or
// yaml. A write that fails is returned: a script reads the output, and a
// document cut short (a full disk) is not one to exit 0 on.
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
