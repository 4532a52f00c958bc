package main

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/tui"
)

// Exit codes, the contract scripts rely on (documented in the README).
const (
	ExitOK          = 0
	ExitBadInput    = 1 // unreadable or invalid file, object or flag value
	ExitUsage       = 2 // wrong command line
	ExitPreflight   = 3 // a blocking preflight check failed
	ExitUpgradeFail = 4 // the upgrade (or a recovery action) ran and failed
	ExitTimeout     = 5 // stopped before the upgrade (or a recovery) completed: timed out or interrupted
	ExitInternal    = 70
	// ExitUnrecorded: the run did its work, but the audit log (a full
	// disk) did not take all of its record: the entries are printed at
	// exit to append. sysexits' EX_IOERR, as 70 is its EX_SOFTWARE.
	ExitUnrecorded = 74
)

// usageError marks an error in the command line itself.
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

// codedError carries an explicit exit code from a command.
type codedError struct {
	code int
	err  error
}

func (c codedError) Error() string { return c.err.Error() }
func (c codedError) Unwrap() error { return c.err }

func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return codedError{code: code, err: err}
}

func exitCode(err error) int {
	var coded codedError
	var input *model.InputError
	var usage usageError
	var internal *model.InternalError
	var cut *tui.RecoveryCutError
	switch {
	case errors.As(err, &coded):
		return coded.code
	case errors.As(err, &internal):
		return ExitInternal
	case errors.As(err, &cut):
		// A recovery run the dashboard's end stopped: as the headless
		// command interrupted.
		return ExitTimeout
	case errors.As(err, &usage):
		return ExitUsage
	case errors.As(err, &input):
		return ExitBadInput
	default:
		return ExitBadInput
	}
}

// badFlag is an invalid flag value: bad input (exit 1), as the README's table
// has it; a missing or unknown flag is a usageError (exit 2).
func badFlag(flag string, problem error, fix string) error {
	return &model.InputError{Source: flag, Problem: problem.Error(), Fix: fix}
}

// checkClusterName refuses a --cluster that no object can be named (a/b,
// a namespace given with it): the API server's refusal said neither the
// flag nor the fix.
func checkClusterName(name string) error {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return badFlag("--cluster", fmt.Errorf("%q is not an object name: %s", name, strings.Join(errs, "; ")),
			"give the EKS-A Cluster's name alone, as `kubectl get clusters.anywhere.eks.amazonaws.com -A` lists it; its namespace goes to -n")
	}
	return nil
}

// checkNodeName refuses a NODE argument that no Node can be named (a/b,
// upper case): the API server's refusal of the read ("read Node Bad/Name:
// invalid resource name …") said neither the argument nor the fix.
func checkNodeName(name string) error {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return &model.InputError{Source: "node " + name, Problem: fmt.Sprintf("%q is not a node name: %s", name, strings.Join(errs, "; ")),
			Fix: "give the NODE argument the node's name as `kubectl get nodes` lists it"}
	}
	return nil
}

// checkLabelKey refuses a node label flag that is not a label key: the
// blocking node-upgrade-label check looked for a node labelled
// "kubeone.io/upgrade-in-progress=true", found none, and passed.
func checkLabelKey(flag, key string) error {
	if key == "" {
		return nil // the default label
	}
	if errs := validation.IsQualifiedName(key); len(errs) > 0 {
		return badFlag(flag, fmt.Errorf("%q is not a label key: %s", key, strings.Join(errs, "; ")),
			"give the label's key alone, without a value, e.g. "+model.LabelUpgradeInProgress)
	}
	return nil
}

// restConfig builds the REST configuration from kubectl's flags. Where no
// kubeconfig file exists (KUBECONFIG naming a file that is not there, no
// ~/.kube/config) and no --server is given, client-go falls back to
// http://localhost:8080, and the operator read "API server
// http://localhost:8080: cannot be reached … check --kubeconfig and
// --context", with neither given and the misspelt path nowhere named.
func restConfig(kube *genericclioptions.ConfigFlags) (*rest.Config, error) {
	if err := unknownContext(kube); err != nil {
		return nil, err
	}
	cfg, err := kube.ToRESTConfig()
	if err != nil {
		return nil, kubeconfigError(kube, err)
	}
	if kube.APIServer != nil && *kube.APIServer != "" {
		return cfg, nil
	}
	defaulted := cfg.Host == "http://localhost:8080" || cfg.Host == "localhost:8080"
	// --kubeconfig is among them: read, or refused by ToRESTConfig naming it.
	if found := kubeconfigFiles(kube); len(found) > 0 {
		return cfg, noServerError(kube, defaulted, found)
	}
	files := kube.ToRawKubeConfigLoader().ConfigAccess().GetLoadingPrecedence()
	if len(files) == 0 || !defaulted {
		return cfg, nil // in-cluster, or another source of the server
	}
	return nil, noKubeconfigError(files)
}

// noKubeconfigError says that none of the files client-go looks in exists.
func noKubeconfigError(files []string) error {
	return &model.InputError{Source: "kubeconfig", Problem: "no kubeconfig was found: " + noKubeconfigWhere(files),
		Fix: "give --kubeconfig (or KUBECONFIG) the management cluster's kubeconfig, and --context where it has several"}
}

// noKubeconfigWhere says where client-go looked for a kubeconfig and found
// none.
func noKubeconfigWhere(files []string) string {
	if v := os.Getenv("KUBECONFIG"); v != "" {
		return "KUBECONFIG=" + v + " names no file that exists"
	}
	return "KUBECONFIG is not set and " + strings.Join(files, ", ") + " does not exist"
}

// inClusterUnknownContext is a --context given in a pod with no kubeconfig
// at all: without it client-go would connect with the pod's in-cluster
// configuration, which has no contexts, so the --context is at fault, not a
// missing kubeconfig (it was said as "no kubeconfig was found", and the fix
// asked for one). client-go itself refuses it ("context was not found for
// specified context") rather than fall back to the in-cluster one.
func inClusterUnknownContext(name string, files []string) error {
	return &model.InputError{Source: "kubeconfig", Field: "--context",
		Problem: fmt.Sprintf("%q names no context in any kubeconfig: there is none (%s), and the pod's in-cluster configuration (KUBERNETES_SERVICE_HOST is set) has no contexts",
			name, noKubeconfigWhere(files)),
		Fix: fmt.Sprintf("leave --context out to connect with the pod's in-cluster configuration (its service account), or give --kubeconfig (or KUBECONFIG) a kubeconfig that has context %q", name)}
}

// unknownContext refuses a --context, or a current-context, that names no
// context in the kubeconfig: client-go said `context "prod" does not
// exist` (or "context was not found for specified context"), naming
// neither the file it looked in nor the contexts it has, and the fix told
// the operator to give the --context they had given. A --context with no
// kubeconfig at all is said as no kubeconfig, but in a pod, where the
// in-cluster configuration stands in for one, as the context that is not
// there. Nil where the context is there, or the kubeconfig cannot be read
// (ToRESTConfig then says why).
func unknownContext(kube *genericclioptions.ConfigFlags) error {
	loader := kube.ToRawKubeConfigLoader()
	raw, err := loader.RawConfig()
	if err != nil {
		return nil
	}
	field, name := "current-context", raw.CurrentContext
	if kube.Context != nil && *kube.Context != "" {
		field, name = "--context", *kube.Context
	}
	if _, ok := raw.Contexts[name]; ok || name == "" {
		return nil // "": noServerError says a kubeconfig without a current context
	}
	files := kubeconfigFiles(kube)
	if len(files) == 0 {
		precedence := loader.ConfigAccess().GetLoadingPrecedence()
		if len(precedence) == 0 {
			return nil // no file to name (loading rules without one): client-go's own error
		}
		if field == "--context" && os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
			return inClusterUnknownContext(name, precedence)
		}
		return noKubeconfigError(precedence)
	}
	return &model.InputError{Source: strings.Join(files, ", "), Field: field,
		Problem: fmt.Sprintf("%q names no context in %s", name, kubeconfigsNoun(files)), Fix: contextFix(field, raw, len(files) > 1)}
}

func kubeconfigsNoun(files []string) string {
	if len(files) > 1 {
		return "the kubeconfigs KUBECONFIG names"
	}
	return "the kubeconfig"
}

// contextFix lists the contexts the kubeconfig has, sorted, and how to
// choose one of them in place of the one that is not there.
func contextFix(field string, raw clientcmdapi.Config, several bool) string {
	its, has := "its", "the kubeconfig has"
	if several {
		its, has = "their", "the kubeconfigs have"
	}
	contexts := slices.Sorted(maps.Keys(raw.Contexts))
	if len(contexts) == 0 {
		return has + " no contexts: give --kubeconfig (or KUBECONFIG) the management cluster's kubeconfig"
	}
	fix := "give --context one of " + its + " contexts (" + strings.Join(contexts, ", ") + ")"
	if field == "current-context" {
		return fix + ", or set one with `kubectl config use-context NAME`"
	}
	if _, ok := raw.Contexts[raw.CurrentContext]; ok {
		fix += ", or leave --context out for " + its + " current context, " + raw.CurrentContext
	}
	return fix
}

// kubeconfigFiles are the kubeconfig files client-go reads: --kubeconfig,
// or those KUBECONFIG (else ~/.kube/config) names that exist.
func kubeconfigFiles(kube *genericclioptions.ConfigFlags) []string {
	if kube.KubeConfig != nil && *kube.KubeConfig != "" {
		return []string{*kube.KubeConfig}
	}
	var found []string
	for _, f := range kube.ToRawKubeConfigLoader().ConfigAccess().GetLoadingPrecedence() {
		if _, err := os.Stat(f); err == nil {
			found = append(found, f)
		}
	}
	return found
}

// noServerError says why a kubeconfig that was read gave no API server
// (client-go then falls back to http://localhost:8080, and the operator
// read "cannot be reached" of a server nobody named): it names no current
// context (an empty file, or current-context ""), or its context's cluster
// names no server. Nil where the server came from the kubeconfig.
func noServerError(kube *genericclioptions.ConfigFlags, defaulted bool, files []string) error {
	if !defaulted {
		return nil
	}
	raw, err := kube.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil // ToRESTConfig read it; the connection error says the rest
	}
	source := strings.Join(files, ", ")
	name := raw.CurrentContext
	if kube.Context != nil && *kube.Context != "" {
		name = *kube.Context
	}
	if name == "" {
		return &model.InputError{Source: source, Field: "current-context", Problem: "names no context to use, so no API server",
			Fix: contextFix("current-context", raw, len(files) > 1)}
	}
	c, ok := raw.Contexts[name]
	if !ok {
		return nil // unknownContext refused it
	}
	cluster := "(none)"
	if c.Cluster != "" {
		cluster = c.Cluster
	}
	return &model.InputError{Source: source, Field: "clusters[" + cluster + "].cluster.server",
		Problem: "context " + name + " names no API server", Fix: "give the context a cluster with its server: the management cluster's kubeconfig has both"}
}

// kubeconfigError is a REST configuration that could not be built from the
// kubeconfig and its flags. Its fix names the flag at fault where the error
// does: --request-timeout abc was told to "give --kubeconfig", and so were
// --user nosuchuser and --certificate-authority /nonexist.crt, whose
// --kubeconfig and --context were right.
func kubeconfigError(kube *genericclioptions.ConfigFlags, err error) error {
	msg := err.Error()
	if ie := notAKubeconfig(kube, msg); ie != nil {
		return ie
	}
	fix := "give --kubeconfig (or KUBECONFIG) and --context of the management cluster"
	given := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	switch {
	case strings.Contains(msg, "timeout"):
		fix = "give --request-timeout a duration such as 30s (0 waits for ever)"
	case strings.Contains(msg, "without impersonating a user"):
		// --as-group (or --as-uid) alone: client-go impersonates groups
		// only on behalf of a user.
		fix = "give --as with --as-group or --as-uid: the user whose groups they are (as kubectl takes them)"
	case strings.Contains(msg, "auth info ") && strings.Contains(msg, "does not exist"):
		users := "the kubeconfig's users"
		if raw, rerr := kube.ToRawKubeConfigLoader().RawConfig(); rerr == nil && len(raw.AuthInfos) > 0 {
			users += " (" + strings.Join(slices.Sorted(maps.Keys(raw.AuthInfos)), ", ") + ")"
		}
		if given(kube.AuthInfoName) != "" {
			fix = "give --user one of " + users + ", or leave --user out for the context's own"
		} else {
			fix = "the context names a user the kubeconfig does not have: give --user one of " + users + ", or --context another context"
		}
	default:
		for _, f := range []struct {
			what, flag string
			value      *string
		}{
			{"unable to read certificate-authority ", "--certificate-authority", kube.CAFile},
			{"unable to read client-cert ", "--client-certificate", kube.CertFile},
			{"unable to read client-key ", "--client-key", kube.KeyFile},
		} {
			if !strings.Contains(msg, f.what) {
				continue
			}
			if v := given(f.value); v != "" && strings.Contains(msg, f.what+v+" ") {
				fix = "give " + f.flag + " a file that exists and this user may read, or leave " + f.flag + " out for the kubeconfig's"
			} else {
				fix = "the kubeconfig names a file that cannot be read: fix its path in the kubeconfig, or give " + f.flag + " one that can"
			}
			break
		}
	}
	return &model.InputError{Source: "kubeconfig", Problem: msg, Fix: fix}
}

// loadingFailed matches client-go's refusal of a kubeconfig file that is
// not one.
var loadingFailed = regexp.MustCompile(`error loading config file "([^"]*)": (.*)`)

// notAKubeconfig says a file that is no kubeconfig (a word, another YAML)
// as such, naming it and where it was given: client-go said "couldn't get
// version/kind; json parse error: json: cannot unmarshal string into Go
// value of type struct { APIVersion string …". Nil for other errors.
func notAKubeconfig(kube *genericclioptions.ConfigFlags, msg string) error {
	m := loadingFailed.FindStringSubmatch(msg)
	if m == nil {
		return nil
	}
	file, cause := m[1], m[2]
	if strings.Contains(cause, "couldn't get version/kind") {
		cause = "it is not YAML with a kubeconfig's apiVersion: v1 and kind: Config"
	}
	where := "give --kubeconfig (or KUBECONFIG) the management cluster's kubeconfig"
	switch {
	case kube.KubeConfig != nil && *kube.KubeConfig != "":
		where = "give --kubeconfig the management cluster's kubeconfig"
	case os.Getenv("KUBECONFIG") != "":
		where = "KUBECONFIG names it: give KUBECONFIG (or --kubeconfig) the management cluster's kubeconfig"
	}
	return &model.InputError{Source: file, Problem: "is not a kubeconfig: " + cause,
		Fix: where}
}
