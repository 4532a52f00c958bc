package crd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	// Imported only so that sigs.k8s.io/cluster-api is part of every binary's
	// build list: its version in the build info is the version of the CAPI
	// CRDs that CAPIObjects installs. The package holds no code, so it costs
	// nothing.
	_ "sigs.k8s.io/cluster-api/controllers"
)

// CAPIModule is the Go module that ships the Cluster API CRD YAMLs.
const CAPIModule = "sigs.k8s.io/cluster-api"

// capiFiles are the CRDs of the kinds the console and the demo use, relative
// to the module root (layout of CAPI v1.14: core/ instead of config/).
var capiFiles = []string{
	"core/config/crd/bases/cluster.x-k8s.io_clusters.yaml",
	"core/config/crd/bases/cluster.x-k8s.io_machines.yaml",
	"core/config/crd/bases/cluster.x-k8s.io_machinesets.yaml",
	"core/config/crd/bases/cluster.x-k8s.io_machinedeployments.yaml",
	"core/config/crd/bases/cluster.x-k8s.io_machinehealthchecks.yaml",
	"controlplane/kubeadm/config/crd/bases/controlplane.cluster.x-k8s.io_kubeadmcontrolplanes.yaml",
	"controlplane/kubeadm/config/crd/bases/controlplane.cluster.x-k8s.io_kubeadmcontrolplanetemplates.yaml",
	"bootstrap/kubeadm/config/crd/bases/bootstrap.cluster.x-k8s.io_kubeadmconfigs.yaml",
	"bootstrap/kubeadm/config/crd/bases/bootstrap.cluster.x-k8s.io_kubeadmconfigtemplates.yaml",
}

// CAPIObjects returns the Cluster API CRDs (Cluster, Machine, MachineSet,
// MachineDeployment, MachineHealthCheck, KubeadmControlPlane(Template),
// KubeadmConfig(Template)) from the sigs.k8s.io/cluster-api module at the
// version this binary was built with.
//
// The files carry no conversion stanza (CAPI adds its webhook through
// kustomize patches), so on a plain API server v1beta1 and v1beta2 are both
// served with None conversion: write and read v1beta2 only.
func CAPIObjects(ctx context.Context) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	dir, err := CAPIDir(ctx)
	if err != nil {
		return nil, err
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, f := range capiFiles {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			return nil, fmt.Errorf("cluster-api CRD: %w", err)
		}
		got, err := decode(data)
		if err != nil {
			return nil, fmt.Errorf("cluster-api CRD %s: %w", f, err)
		}
		crds = append(crds, got...)
	}
	return crds, nil
}

// CAPIVersion is the version of sigs.k8s.io/cluster-api this binary was built
// with. Test binaries carry no dependency list in their build information;
// for them (and `go run`) the version comes from `go list -m` in the module
// the process runs in.
func CAPIVersion(ctx context.Context) (string, error) {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path != CAPIModule {
				continue
			}
			if m.Replace != nil {
				m = m.Replace
			}
			return m.Version, nil
		}
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Version}}", CAPIModule)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	version := strings.TrimSpace(string(out))
	if err != nil || version == "" {
		return "", fmt.Errorf("cannot tell which %s version to take the Cluster API CRDs from: it is not in this binary's build information and `go list -m %s` failed (%v: %s)",
			CAPIModule, CAPIModule, err, strings.TrimSpace(stderr.String()))
	}
	return version, nil
}

// CAPIDir returns the root of the sigs.k8s.io/cluster-api module in the Go
// module cache, downloading the module when it is missing.
func CAPIDir(ctx context.Context) (string, error) {
	version, err := CAPIVersion(ctx)
	if err != nil {
		return "", err
	}
	modVersion := CAPIModule + "@" + version
	if cache, err := goModCache(ctx); err == nil {
		// The module path has no upper-case letters, so its escaped form
		// in the cache is the path itself.
		dir := filepath.Join(cache, filepath.FromSlash(modVersion))
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(capiFiles[0]))); err == nil {
			return dir, nil
		}
	}
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", modVersion)
	// Run outside any module so a go.work or go.mod nearby cannot interfere.
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var dl struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &dl); jerr == nil && dl.Error != "" {
		err = errors.New(dl.Error)
	}
	if err != nil || dl.Dir == "" {
		if err == nil {
			err = errors.New("no directory reported")
		}
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			msg = ": " + msg
		}
		return "", fmt.Errorf("the Cluster API CRDs come from the Go module %s, which is not in the module cache and could not be downloaded (%v%s); run `go mod download %s` with network access and retry", modVersion, err, msg, modVersion)
	}
	return dl.Dir, nil
}

func goModCache(ctx context.Context) (string, error) {
	if dir := os.Getenv("GOMODCACHE"); dir != "" {
		return dir, nil
	}
	out, err := exec.CommandContext(ctx, "go", "env", "GOMODCACHE").Output()
	if err != nil {
		return "", err
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", errors.New("go env GOMODCACHE is empty")
	}
	return dir, nil
}
