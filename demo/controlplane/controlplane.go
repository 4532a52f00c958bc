// Package controlplane runs a real local Kubernetes control plane (etcd and
// kube-apiserver, built by `make controlplane`) with every CRD the console
// needs installed. The demo world lives in it and the integration tests run
// against it: there is no fake clientset anywhere in the project.
//
// The processes are envtest's (sigs.k8s.io/controller-runtime/pkg/envtest)
// and run in process groups of their own, so a terminal's Ctrl-C does not
// reach them: a program calls Stop on its way out. Should it die without
// doing so (killed, crashed, a test timeout), they get SIGTERM from the
// kernel on Linux (see reaper_linux.go).
package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/upgrade-console/upgrade-console/config/crd"
)

// ContextName is the kubeconfig context (and cluster and user entry) of the
// local control plane.
const ContextName = "upgrade-console-demo"

// SystemNamespace is created on start: EKS-A keeps every generated object there.
const SystemNamespace = "eksa-system"

// Options configure Start. The zero value starts the project's CRDs with
// binaries found by FindAssets("").
type Options struct {
	// AssetsDir holds kube-apiserver and etcd. Empty: FindAssets("").
	AssetsDir string
	// CRDDirs hold CRDs that replace the project's own CRDs of the same
	// name (the upstream CRDs of the compatibility check); the project's
	// CRDs they do not define are still installed, and so are the Cluster
	// API CRDs.
	CRDDirs []string
	// ExtraCRDs are installed in addition to the others.
	ExtraCRDs []*apiextensionsv1.CustomResourceDefinition
	// EditCRD, when set, changes each CRD before it is installed: a test's
	// API server that serves Cluster API at v1beta1 alone, as CAPI did
	// before v1.11, say.
	EditCRD func(*apiextensionsv1.CustomResourceDefinition)
	// Dir is the working directory (kubeconfig, certificates, etcd data).
	// Empty: a temporary directory that Stop removes.
	Dir string
	// KubeconfigPath is where the admin kubeconfig is written. Empty:
	// <Dir>/kubeconfig.
	KubeconfigPath string
	// Output receives the output of etcd and kube-apiserver. Nil: discarded.
	Output io.Writer
	// APIServerEnv are NAME=value environment variables for kube-apiserver
	// alone (GODEBUG=gctrace=1 or GOGC for the benchmark, say), on Linux;
	// elsewhere they are ignored.
	APIServerEnv []string
	// APIServerArgs are extra name=value flags for kube-apiserver (the
	// benchmark's experiments with its watch cache, say); a name given twice
	// is passed twice.
	APIServerArgs []string
	// StartTimeout bounds the start of each process. Zero: 90s, generous
	// because the machines this runs on are small and shared.
	StartTimeout time.Duration
	// Logf reports progress (start, CRDs installed, restart). Nil: silent.
	Logf func(format string, args ...any)
}

// Env is a running local control plane.
type Env struct {
	// Config authenticates as an admin (group system:masters).
	Config *rest.Config
	// KubeconfigPath is a kubeconfig file for Config, context ContextName,
	// for kubectl and other processes.
	KubeconfigPath string
	// Dir is the working directory.
	Dir string
	// CRDs are the installed CRDs.
	CRDs []*apiextensionsv1.CustomResourceDefinition

	env        *envtest.Environment
	removeDir  bool
	logf       func(string, ...any)
	mu         sync.Mutex // serialises Stop/Start of the API server
	apiStopped bool
}

// Start starts etcd and kube-apiserver, installs the CRDs (waiting until they
// are established), creates the eksa-system namespace and writes the
// kubeconfig. On error nothing is left running.
func Start(ctx context.Context, opts Options) (_ *Env, err error) {
	began := time.Now()
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	assets, err := FindAssets(opts.AssetsDir)
	if err != nil {
		return nil, err
	}

	crds, err := crdsFor(ctx, opts)
	if err != nil {
		return nil, err
	}

	e := &Env{Dir: opts.Dir, CRDs: crds, logf: logf}
	if e.Dir == "" {
		if e.Dir, err = os.MkdirTemp("", "upgrade-console-cp-"); err != nil {
			return nil, err
		}
		e.removeDir = true
	}
	defer func() {
		if err != nil {
			_ = e.Stop()
		}
	}()

	out := opts.Output
	if out == nil {
		out = io.Discard
	}
	timeout := opts.StartTimeout
	if timeout == 0 {
		timeout = 90 * time.Second
	}
	certDir := filepath.Join(e.Dir, "apiserver")
	etcdDir := filepath.Join(e.Dir, "etcd")
	shimDir := filepath.Join(e.Dir, "bin")
	if err := os.MkdirAll(etcdDir, 0o700); err != nil {
		return nil, err
	}
	newEnvironment := func() *envtest.Environment {
		apiServer := &envtest.APIServer{
			Path: shim(shimDir, assets, "kube-apiserver", opts.APIServerEnv),
			// A fixed certificate directory is what makes RestartAPIServer
			// possible: envtest regenerates serving certificates (and so
			// invalidates every client's CA) when it picks the directory.
			CertDir: certDir,
			Out:     out,
			Err:     out,
		}
		// With a watch open, kube-apiserver otherwise waits for watchers to
		// drain before honouring SIGTERM, and envtest kills it only after its
		// stop timeout: restarts (and every test package's teardown) would
		// take 30 s instead of about one.
		apiServer.Configure().Set("shutdown-watch-termination-grace-period", "2s")
		for _, a := range opts.APIServerArgs {
			name, value, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			apiServer.Configure().Append(name, value)
		}
		return &envtest.Environment{
			ControlPlane: envtest.ControlPlane{
				APIServer: apiServer,
				Etcd: &envtest.Etcd{
					Path:    shim(shimDir, assets, "etcd", nil),
					DataDir: etcdDir,
					Out:     out,
					Err:     out,
				},
			},
			CRDs:                     crds,
			ControlPlaneStartTimeout: timeout,
			ControlPlaneStopTimeout:  30 * time.Second,
		}
	}
	logf("starting etcd and kube-apiserver from %s", assets)
	var cfg *rest.Config
	for attempt := 1; ; attempt++ {
		// envtest only generates serving certificates (and learns their
		// CA) into an empty directory.
		if err := os.RemoveAll(certDir); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(certDir, 0o700); err != nil {
			return nil, err
		}
		e.env = newEnvironment()
		cfg, err = e.env.Start()
		// envtest gives the API server a fixed 5s to create the default
		// namespace, which a loaded two-core machine can miss: one more try.
		if err != nil && attempt == 1 && strings.Contains(err.Error(), "default namespace") {
			logf("control plane slow to start (%v), retrying", err)
			_ = e.env.Stop()
			continue
		}
		break
	}
	if err != nil {
		return nil, fmt.Errorf("starting the local control plane (binaries in %s): %w", assets, err)
	}
	e.Config = cfg
	logf("control plane up, %d CRDs established", len(crds))

	if err := ensureNamespace(ctx, cfg, SystemNamespace); err != nil {
		return nil, err
	}

	e.KubeconfigPath = opts.KubeconfigPath
	if e.KubeconfigPath == "" {
		e.KubeconfigPath = filepath.Join(e.Dir, "kubeconfig")
	}
	if err := writeKubeconfig(cfg, e.KubeconfigPath); err != nil {
		return nil, err
	}
	logf("local control plane ready in %s (kubeconfig %s)", time.Since(began).Round(time.Millisecond), e.KubeconfigPath)
	return e, nil
}

// crdsFor returns the CRDs opts asks for: those of opts.CRDDirs, the
// project's own for every name those do not define, the Cluster API ones,
// and opts.ExtraCRDs.
func crdsFor(ctx context.Context, opts Options) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	given := map[string]bool{}
	for _, d := range opts.CRDDirs {
		got, err := crd.ReadDir(d)
		if err != nil {
			return nil, err
		}
		for _, c := range got {
			given[c.Name] = true
		}
		crds = append(crds, got...)
	}
	own, err := crd.Objects()
	if err != nil {
		return nil, fmt.Errorf("the project's CRDs: %w", err)
	}
	for _, c := range own {
		if !given[c.Name] {
			crds = append(crds, c)
		}
	}
	capi, err := crd.CAPIObjects(ctx)
	if err != nil {
		return nil, err
	}
	crds = append(crds, capi...)
	crds = append(crds, opts.ExtraCRDs...)
	if opts.EditCRD != nil {
		for _, c := range crds {
			opts.EditCRD(c)
		}
	}
	return crds, nil
}

// Stop stops the control plane and removes the working directory when Start
// created it. It is safe to call more than once.
func (e *Env) Stop() error {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var errs []error
	if e.env != nil {
		// An API server already stopped by StopAPIServer is skipped by
		// envtest (its process has exited).
		errs = append(errs, e.env.Stop())
		e.env = nil
	}
	if e.removeDir && e.Dir != "" {
		errs = append(errs, os.RemoveAll(e.Dir))
		e.removeDir = false
	}
	return errors.Join(errs...)
}

// StopAPIServer stops kube-apiserver and leaves etcd running, so clients see
// the API server go away (connection refused) with all data kept.
func (e *Env) StopAPIServer() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.env == nil {
		return errors.New("control plane not running")
	}
	if e.apiStopped {
		return nil
	}
	if err := e.env.ControlPlane.APIServer.Stop(); err != nil {
		return fmt.Errorf("stopping kube-apiserver: %w", err)
	}
	e.apiStopped = true
	e.logf("kube-apiserver stopped")
	return nil
}

// StartAPIServer starts kube-apiserver again after StopAPIServer, on the same
// address, with the same certificates and etcd data, so Config and the
// kubeconfig stay valid. It returns once the API server serves the CRDs.
func (e *Env) StartAPIServer(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.env == nil {
		return errors.New("control plane not running")
	}
	if !e.apiStopped {
		return nil
	}
	if err := e.env.ControlPlane.APIServer.Start(); err != nil {
		return fmt.Errorf("restarting kube-apiserver: %w", err)
	}
	e.apiStopped = false
	if err := waitServed(ctx, e.Config, e.CRDs); err != nil {
		return err
	}
	e.logf("kube-apiserver started again")
	return nil
}

// RestartAPIServer stops and starts kube-apiserver (see StopAPIServer and
// StartAPIServer).
func (e *Env) RestartAPIServer(ctx context.Context) error {
	if err := e.StopAPIServer(); err != nil {
		return err
	}
	return e.StartAPIServer(ctx)
}

// waitServed waits until discovery lists every CRD's resource: a restarted
// API server answers /healthz before its CRD handlers are back.
func waitServed(ctx context.Context, cfg *rest.Config, crds []*apiextensionsv1.CustomResourceDefinition) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		for _, c := range crds {
			gv := c.Spec.Group + "/" + servedVersion(c)
			list, err := dc.ServerResourcesForGroupVersion(gv)
			if err != nil {
				last = err
				return false, nil
			}
			found := false
			for _, r := range list.APIResources {
				found = found || r.Name == c.Spec.Names.Plural
			}
			if !found {
				last = fmt.Errorf("%s not served yet", c.Name)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the restarted API server to serve the CRDs: %w (last: %v)", err, last)
	}
	return nil
}

func servedVersion(c *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range c.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return c.Spec.Versions[0].Name
}

func ensureNamespace(ctx context.Context, cfg *rest.Config, name string) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}

// writeKubeconfig writes an admin kubeconfig for cfg with everything inline,
// so the file works from any directory and outlives no secret file.
func writeKubeconfig(cfg *rest.Config, path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[ContextName] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.CAData,
	}
	kc.AuthInfos[ContextName] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
	}
	kc.Contexts[ContextName] = &clientcmdapi.Context{Cluster: ContextName, AuthInfo: ContextName}
	kc.CurrentContext = ContextName
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return os.Chmod(path, 0o600)
}
