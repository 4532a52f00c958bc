package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/upgrade-console/upgrade-console/model"
)

// version is set at build time with -ldflags "-X main.version=…"; otherwise the
// module version from the build info is used (as `go install …@vX` records it).
var version = ""

var versionOutputs = []string{"text", "json", "yaml"}

// versionDoc is `version -o json`: a CI log records which build ran, which
// the text form gave a script to parse.
type versionDoc struct {
	Version   string       `json:"version"`
	GoVersion string       `json:"goVersion"`
	Deps      []versionDep `json:"deps"`
}

type versionDep struct {
	Path    string `json:"path"`
	Version string `json:"version"`
}

func newVersionCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the console's version and the versions of the APIs it was built against",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return writeVersion(cmd.OutOrStdout(), output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: "+strings.Join(versionOutputs, ", "))
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(versionOutputs, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func writeVersion(out io.Writer, output string) error {
	v, deps := buildVersions()
	doc := versionDoc{Version: v, GoVersion: runtime.Version(), Deps: []versionDep{}}
	for _, d := range deps {
		doc.Deps = append(doc.Deps, versionDep{d[0], d[1]})
	}
	switch output {
	case "text":
		fmt.Fprintf(out, "upgrade-console %s\n", v)
		for _, d := range deps {
			fmt.Fprintf(out, "  %-28s %s\n", d[0], d[1])
		}
		return nil
	case "json":
		data, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s\n", data)
		return err
	case "yaml":
		data, err := yaml.Marshal(doc)
		if err != nil {
			return err
		}
		_, err = out.Write(data)
		return err
	}
	return &model.InputError{Source: "--output", Problem: fmt.Sprintf("unknown format %q", output),
		Fix: "use one of " + strings.Join(versionOutputs, ", ")}
}

func buildVersions() (string, [][2]string) {
	v := version
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return orDev(v), nil
	}
	if v == "" {
		v = info.Main.Version
	}
	wanted := []string{"k8s.io/client-go", "sigs.k8s.io/cluster-api/api", "charm.land/bubbletea/v2"}
	var deps [][2]string
	for _, w := range wanted {
		for _, d := range info.Deps {
			if d.Path == w {
				deps = append(deps, [2]string{d.Path, d.Version})
			}
		}
	}
	return orDev(v), deps
}

func orDev(v string) string {
	if v == "" || v == "(devel)" {
		return "(devel)"
	}
	return v
}
