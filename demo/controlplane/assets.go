package controlplane

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Binaries the local control plane needs in its assets directory.
var binaries = []string{"kube-apiserver", "etcd"}

// AssetsError says that no directory holds the control plane binaries. It
// lists every place that was looked at.
type AssetsError struct {
	// Looked holds one line per place: where, and why it did not do.
	Looked []string
}

func (e *AssetsError) Error() string {
	var b strings.Builder
	b.WriteString("the local control plane binaries (kube-apiserver, etcd) were not found; looked in:\n")
	for _, l := range e.Looked {
		b.WriteString("  - " + l + "\n")
	}
	b.WriteString("build them with `make controlplane` (several minutes the first time) and pass --assets <dir> or set KUBEBUILDER_ASSETS")
	return b.String()
}

// FindAssets returns the directory holding kube-apiserver and etcd. A
// directory given explicitly (a flag) must hold them; otherwise it tries, in
// order, $KUBEBUILDER_ASSETS, ./bin, the directory of the running executable
// (bin/ when `make build` put the console there) and
// <user cache dir>/upgrade-console/bin.
func FindAssets(flagDir string) (string, error) {
	if flagDir != "" {
		if why := missing(flagDir); why != "" {
			return "", &AssetsError{Looked: []string{fmt.Sprintf("%s (given with --assets): %s", flagDir, why)}}
		}
		return abs(flagDir), nil
	}
	type place struct{ dir, label string }
	var places []place
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		places = append(places, place{d, "$KUBEBUILDER_ASSETS"})
	} else {
		places = append(places, place{"", "$KUBEBUILDER_ASSETS"})
	}
	places = append(places, place{"bin", "./bin"})
	if exe, err := os.Executable(); err == nil {
		places = append(places, place{filepath.Dir(exe), "next to the executable"})
	}
	if cache, err := os.UserCacheDir(); err == nil {
		places = append(places, place{filepath.Join(cache, "upgrade-console", "bin"), "user cache"})
	}

	var looked []string
	for _, p := range places {
		if p.dir == "" {
			looked = append(looked, p.label+": not set")
			continue
		}
		why := missing(p.dir)
		if why == "" {
			return abs(p.dir), nil
		}
		looked = append(looked, fmt.Sprintf("%s (%s): %s", abs(p.dir), p.label, why))
	}
	return "", &AssetsError{Looked: looked}
}

// missing says what dir lacks, or "" when it holds every binary.
func missing(dir string) string {
	var absent []string
	for _, b := range binaries {
		fi, err := os.Stat(filepath.Join(dir, b))
		if err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
			absent = append(absent, b)
		}
	}
	if len(absent) == 0 {
		return ""
	}
	return "no executable " + strings.Join(absent, ", ")
}

func abs(dir string) string {
	if a, err := filepath.Abs(dir); err == nil {
		return a
	}
	return dir
}
