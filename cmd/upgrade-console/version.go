package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=…"; otherwise the
// module version from the build info is used (as `go install …@vX` records it).
var version = ""

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
	cmd.Flags().StringVarP(&output, "output", "o", "text", outputHelp("text"))
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(outputs("text"), cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func writeVersion(out io.Writer, output string) error {
	v, deps := buildVersions()
	doc := versionDoc{Version: v, GoVersion: runtime.Version(), Deps: []versionDep{}}
	for _, d := range deps {
		doc.Deps = append(doc.Deps, versionDep{d[0], d[1]})
	}
	if err := checkOutput(output, "text"); err != nil {
		return err
	}
	if output == "text" {
		fmt.Fprintf(out, "upgrade-console %s\n", v)
		for _, d := range deps {
			fmt.Fprintf(out, "  %-28s %s\n", d[0], d[1])
		}
		return nil
	}
	return writeDoc(out, output, doc)
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
