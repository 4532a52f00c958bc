package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=…"; otherwise the
// module version from the build info is used (as `go install …@vX` records it).
var version = ""

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the console's version and the versions of the APIs it was built against",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, deps := buildVersions()
			fmt.Fprintf(cmd.OutOrStdout(), "upgrade-console %s\n", v)
			for _, d := range deps {
				fmt.Fprintf(cmd.OutOrStdout(), "  %-28s %s\n", d[0], d[1])
			}
			return nil
		},
	}
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
