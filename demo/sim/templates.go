package sim

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/upgrade-console/upgrade-console/demo/kinds"
	"github.com/upgrade-console/upgrade-console/demo/objects"
	"github.com/upgrade-console/upgrade-console/demo/release"
	"github.com/upgrade-console/upgrade-console/demo/seed"
)

// Machine templates. EKS-A generates one VSphereMachineTemplate per machine
// group (external etcd, control plane, each worker node group) from the
// group's VSphereMachineConfig and the cluster's VSphereDatacenterConfig.
// When the generated spec differs from the template the group's owner (the
// EtcdadmCluster, the KubeadmControlPlane, the MachineDeployment) refers to,
// EKS-A gives it a new template, and etcdadm or CAPI roll the group's
// machines onto it (clusterapi.EnsureNewNameIfChanged).
//
// The demo's API server serves no VSphereMachineTemplate kind: the simulator
// remembers the spec each template it generated was made from. A template it
// did not generate is one the world was seeded with, made from the spec the
// seed created the cluster with (seed.ProviderSpecs).

// Machine group keys: which seeded machine config a group was created from.
const (
	groupEtcd         = "etcd"
	groupControlPlane = "control-plane"
	groupWorkerPrefix = "worker/"
)

// reasonMachineConfigInvalid is EKS-A's failureReason when its context-aware
// validation of the machine configs fails.
const reasonMachineConfigInvalid = "MachineConfigInvalid"

// validationGrace is how long a machine config must fail the validation
// before the demo reports it (see reconcileEKSA). It is real time, not a
// simulated step: it covers a client's apply of a spec.
const validationGrace = 3 * time.Second

// datacenterTemplateFields are the VSphereDatacenterConfig fields a
// VSphereMachineTemplate carries: changing one of them changes every
// machine group's template. The others (insecure) do not reach machines.
var datacenterTemplateFields = []string{"datacenter", "server", "network", "thumbprint", "failureDomains"}

// templateSpec is what EKS-A generates a group's machine template from, as
// a comparable string: the whole machine config spec (sizes, OVA template,
// placement, users) and the datacenter fields templates carry.
func templateSpec(mc, dc *unstructured.Unstructured) string {
	d := map[string]any{}
	if spec, ok := dc.Object["spec"].(map[string]any); ok {
		for _, f := range datacenterTemplateFields {
			if v, ok := spec[f]; ok {
				d[f] = v
			}
		}
	}
	b, err := json.Marshal(map[string]any{"machineConfig": mc.Object["spec"], "datacenter": d})
	if err != nil {
		return ""
	}
	return string(b)
}

// groupConfig names the machine config a group of cl refers to.
func groupConfig(cl *unstructured.Unstructured, key string) string {
	switch key {
	case groupEtcd:
		return str(cl, "spec", "externalEtcdConfiguration", "machineGroupRef", "name")
	case groupControlPlane:
		return str(cl, "spec", "controlPlaneConfiguration", "machineGroupRef", "name")
	}
	for _, wg := range workerGroups(cl) {
		if groupWorkerPrefix+wg.name == key {
			return wg.config
		}
	}
	return ""
}

// machineConfigs names the machine configs cl refers to, each once.
func machineConfigs(cl *unstructured.Unstructured) []string {
	keys := []string{groupControlPlane, groupEtcd}
	for _, wg := range workerGroups(cl) {
		keys = append(keys, groupWorkerPrefix+wg.name)
	}
	var out []string
	seen := map[string]bool{}
	for _, k := range keys {
		if n := groupConfig(cl, k); n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// refersTo reports whether the Cluster cl refers to the provider object u
// of the resource gvr (its datacenter config or one of its machine configs),
// as EKS-A's cluster controller maps a changed child object to its Cluster.
func refersTo(cl *unstructured.Unstructured, gvr schema.GroupVersionResource, u *unstructured.Unstructured) bool {
	if cl == nil || u.GetNamespace() != cl.GetNamespace() {
		return false
	}
	switch gvr {
	case kinds.VSphereDatacenterConfig:
		return str(cl, "spec", "datacenterRef", "name") == u.GetName()
	case kinds.VSphereMachineConfig:
		return slices.Contains(machineConfigs(cl), u.GetName())
	}
	return false
}

// children are a Cluster's provider objects as one reconcile reads them
// from the cache, once: its roll decisions, its validation and the
// aggregated generation it writes all describe the same objects, as EKS-A
// builds its cluster spec once per reconcile. A child changed meanwhile is
// reconciled by the next reconcile, which its change enqueues.
type children struct {
	cl  *unstructured.Unstructured
	dc  *unstructured.Unstructured
	mcs map[string]*unstructured.Unstructured // by name; nil when missing
}

func (s *Simulator) children(cl *unstructured.Unstructured) *children {
	c := &children{cl: cl, mcs: map[string]*unstructured.Unstructured{}}
	ns := cl.GetNamespace()
	if n := str(cl, "spec", "datacenterRef", "name"); n != "" {
		c.dc = s.get(kinds.VSphereDatacenterConfig, ns, n)
	}
	for _, n := range machineConfigs(cl) {
		c.mcs[n] = s.get(kinds.VSphereMachineConfig, ns, n)
	}
	return c
}

// generation is EKS-A's aggregatedGeneration of the Cluster: the sum of the
// generations of its datacenter config and of each machine config it refers
// to, counted once; false when one of them is missing.
func (c *children) generation() (int64, bool) {
	if c == nil || c.dc == nil {
		return 0, false
	}
	sum := c.dc.GetGeneration()
	for _, mc := range c.mcs {
		if mc == nil {
			return 0, false
		}
		sum += mc.GetGeneration()
	}
	return sum, true
}

// machineConfig is the machine config of a group (nil when missing).
func (c *children) machineConfig(key string) *unstructured.Unstructured {
	return c.mcs[groupConfig(c.cl, key)]
}

// template is the spec EKS-A generates for a group's machine template;
// false when a provider object is missing (then nothing is rolled for it).
func (c *children) template(key string) (string, bool) {
	mc := c.machineConfig(key)
	if mc == nil || c.dc == nil {
		return "", false
	}
	return templateSpec(mc, c.dc), true
}

// templateOutdated reports whether the template an owner refers to was made
// from another spec than want: EKS-A then generates a new one.
func (s *Simulator) templateOutdated(current, key, want string) bool {
	if want == "" {
		return false
	}
	s.mu.Lock()
	have, ok := s.templates[current]
	s.mu.Unlock()
	if !ok {
		if have, ok = s.seededTemplate(key); !ok {
			// Unknown to the demo: EKS-A would create the missing
			// template from the current spec rather than rename it.
			return false
		}
	}
	return have != want
}

// newTemplate names a new template of a group, EKS-A's way
// (<cluster>-<role>-<unix seconds>; objects.TemplateName), and remembers the
// spec it is made from. A name already taken by the owner's current template
// or by one made from another spec moves on by a second.
func (s *Simulator) newTemplate(prefix, current, spec string, now time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for at := now; ; at = at.Add(time.Second) {
		name := objects.TemplateName(prefix, at)
		if have, ok := s.templates[name]; name == current || (ok && have != spec) {
			continue
		}
		if spec != "" {
			s.templates[name] = spec
		}
		return name
	}
}

// seededTemplate is the spec the seed's template of a group was made from.
func (s *Simulator) seededTemplate(key string) (string, bool) {
	s.seededOnce.Do(func() {
		s.seeded = map[string]string{}
		cl := seed.ClusterSpec(s.sc, release.Current.Version, seed.CurrentKube)
		docs := map[string]*unstructured.Unstructured{}
		for _, d := range seed.ProviderSpecs(s.sc, seed.CurrentKube) {
			docs[d.GetKind()+"/"+d.GetName()] = d
		}
		dc := docs["VSphereDatacenterConfig/"+str(cl, "spec", "datacenterRef", "name")]
		keys := []string{groupEtcd, groupControlPlane}
		for _, wg := range workerGroups(cl) {
			keys = append(keys, groupWorkerPrefix+wg.name)
		}
		for _, k := range keys {
			if mc := docs["VSphereMachineConfig/"+groupConfig(cl, k)]; mc != nil && dc != nil {
				s.seeded[k] = templateSpec(mc, dc)
			}
		}
	})
	v, ok := s.seeded[key]
	return v, ok
}

// templateKube is the Kubernetes version a vCenter template of the demo's
// inventory is built for: templates are named after it
// (".../ubuntu-2204-kube-1.30") and tagged for the EKS-D releases of it.
var templateKube = regexp.MustCompile(`kube-v?(\d+\.\d+)`)

// invalidTemplate is EKS-A's template validation of a group's machine config
// (vsphere Validator.validateTemplates): the VM template must carry the
// eksdRelease tag of the EKS-D release the group runs. "" when valid or when
// the machine config is not there to validate.
func (c *children) invalidTemplate(key, kube string, w wanted) string {
	mc := c.machineConfig(key)
	if mc == nil || w.eksD == "" {
		return ""
	}
	tmpl := str(mc, "spec", "template")
	if m := templateKube.FindStringSubmatch(path.Base(tmpl)); m != nil && m[1] == kube {
		return ""
	}
	return fmt.Sprintf("template %s is missing tag eksdRelease:%s", tmpl, w.eksD)
}
