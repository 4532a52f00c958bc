package watchers

import (
	"time"

	"github.com/upgrade-console/upgrade-console/model"
)

// The fleet-sized custom resources (a Machine and a NodeUpgrade per node)
// are decoded straight into structs that hold only what translation reads.
// Decoding their spec and status into maps, as the other kinds are, boxed
// every string and number into an interface and built a map per nested
// object: ~150 allocations and 7 KB per Machine event, a third of all the
// console allocated in a 10,000-node bench/e2e run (heap profile), most of
// it during the load phases, where each collection it triggers competes with
// kube-apiserver and etcd for the two cores.
//
// The map translators (translate.go) stay the rule for the dynamic client's
// objects; each fills the same structs and shares the translation below, so
// both decoders translate an object identically (leanwatch_test.go checks it
// on the same JSON).

// leanCondition is a condition of either dialect (see conditions).
type leanCondition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	Severity           string `json:"severity"`
	Reason             string `json:"reason"`
	Message            string `json:"message"`
	LastTransitionTime string `json:"lastTransitionTime"`
	ObservedGeneration int64  `json:"observedGeneration"`
}

func (c *leanCondition) model() model.Condition {
	return model.Condition{
		Type:               intern(c.Type),
		Status:             intern(c.Status),
		Severity:           model.ConditionSeverity(intern(c.Severity)),
		Reason:             intern(c.Reason),
		Message:            intern(c.Message),
		LastTransitionTime: parseTime(c.LastTransitionTime),
		ObservedGeneration: c.ObservedGeneration,
	}
}

func leanConditions(l []leanCondition) model.Conditions {
	if len(l) == 0 {
		return nil
	}
	out := make(model.Conditions, len(l))
	for i := range l {
		out[i] = l[i].model()
	}
	return out
}

func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// fleet is the object's model.Meta without labels and annotations (see
// fleetMeta).
func (m *leanMeta) fleet() model.Meta {
	return model.Meta{
		Name:              m.Name,
		Namespace:         m.Namespace,
		UID:               m.UID,
		Generation:        m.Generation,
		ResourceVersion:   m.ResourceVersion,
		CreationTimestamp: parseTime(m.CreationTimestamp),
		DeletionTimestamp: parseTime(m.DeletionTimestamp),
	}
}

// leanMachine is a CAPI Machine at either served version.
type leanMachine struct {
	leanHead
	Spec struct {
		Version    string `json:"version"`
		ProviderID string `json:"providerID"`
	} `json:"spec"`
	Status struct {
		Phase   string `json:"phase"`
		NodeRef struct {
			Name string `json:"name"`
		} `json:"nodeRef"`
		Addresses []leanAddress `json:"addresses"`
		// Conditions are v1beta2 conditions at v1beta2, the legacy
		// ones at v1beta1, which carries the v1beta2 ones in V1Beta2.
		Conditions []leanCondition `json:"conditions"`
		V1Beta2    struct {
			Conditions []leanCondition `json:"conditions"`
		} `json:"v1beta2"`
		// The failure is status.failure* at v1beta1, and at v1beta2
		// under status.deprecated.v1beta1.
		leanFailure
		Deprecated struct {
			V1Beta1 leanFailure `json:"v1beta1"`
		} `json:"deprecated"`
	} `json:"status"`
}

type leanFailure struct {
	FailureReason  string `json:"failureReason"`
	FailureMessage string `json:"failureMessage"`
}

type leanAddress struct {
	Type    string `json:"type"`
	Address string `json:"address"`
}

// machineAddresses keeps the types interned (a handful of words repeated
// by every machine) and the addresses as decoded: each is its machine's
// own.
func machineAddresses(l []leanAddress) []model.MachineAddress {
	if len(l) == 0 {
		return nil
	}
	out := make([]model.MachineAddress, len(l))
	for i, a := range l {
		out[i] = model.MachineAddress{Type: intern(a.Type), Address: model.Printable(a.Address)}
	}
	return out
}

func machineDecoder(version string) leanDecode {
	return leanDecoder(func(o *leanMachine) any { return o.translate(version) })
}

// reuse empties the Machine for the next event, keeping its lists' arrays.
func (o *leanMachine) reuse() {
	c, c2, own := reuseList(o.Status.Conditions), reuseList(o.Status.V1Beta2.Conditions), reuseList(o.Metadata.OwnerReferences)
	addrs := reuseList(o.Status.Addresses)
	*o = leanMachine{}
	o.Status.Conditions, o.Status.V1Beta2.Conditions, o.Metadata.OwnerReferences = c, c2, own
	o.Status.Addresses = addrs
}

func (o *leanMachine) translate(version string) any {
	md := &o.Metadata
	m := &model.Machine{
		Meta:     md.fleet(),
		Version:  intern(o.Spec.Version),
		NodeName: o.Status.NodeRef.Name,
		Phase:    intern(o.Status.Phase),
		// A machine's own: interning would keep a copy of each in the
		// process-wide table too.
		ProviderID: model.Printable(o.Spec.ProviderID),
		Addresses:  machineAddresses(o.Status.Addresses),
	}
	failure := o.Status.leanFailure
	if version != "v1beta1" {
		failure = o.Status.Deprecated.V1Beta1
	}
	// Reasons are a few CAPI constants; messages are each machine's, and
	// only failed machines have one.
	m.FailureReason, m.FailureMessage = intern(failure.FailureReason), model.Printable(failure.FailureMessage)
	conds := o.Status.Conditions
	if version == "v1beta1" && len(o.Status.V1Beta2.Conditions) > 0 {
		conds = o.Status.V1Beta2.Conditions
	}
	m.Conditions = leanConditions(conds)
	m.InfrastructureTemplate = intern(md.Annotations[annotationClonedFromName])
	m.EtcdReady = md.Labels[model.LabelEtcdReady] == "true"
	_, controlPlane := md.Labels[model.LabelControlPlane]
	switch {
	case md.Labels[model.LabelEtcdCluster] != "":
		m.Role = model.RoleEtcd
		m.Owner = intern(md.Labels[model.LabelEtcdCluster])
		m.Owned = md.ownedBy("EtcdadmCluster")
	case controlPlane:
		m.Role = model.RoleControlPlane
		m.Owner = intern(md.Labels[model.LabelControlPlaneName])
		m.Owned = len(md.OwnerReferences) > 0
	default:
		m.Role = model.RoleWorker
		m.Owner = intern(md.Labels[model.LabelDeploymentName])
		m.Owned = len(md.OwnerReferences) > 0
	}
	if m.Owner == "" {
		m.Owner = md.controller()
	}
	return m
}

func (m *leanMeta) ownedBy(kind string) bool {
	for _, o := range m.OwnerReferences {
		if o.Kind == kind {
			return true
		}
	}
	return false
}

// controller is the name of the controlling owner, "" when none.
func (m *leanMeta) controller() string {
	for _, o := range m.OwnerReferences {
		if o.Controller {
			return o.Name
		}
	}
	return ""
}

// leanNodeUpgrade is a NodeUpgrade or a NodeKubeadmUpgrade.
type leanNodeUpgrade struct {
	leanHead
	Spec struct {
		Machine struct {
			Name string `json:"name"`
		} `json:"machine"`
		KubernetesVersion     string `json:"kubernetesVersion"`
		EtcdVersion           string `json:"etcdVersion"`
		FirstNodeToBeUpgraded bool   `json:"firstNodeToBeUpgraded"`
	} `json:"spec"`
	Status struct {
		Completed          bool            `json:"completed"`
		ObservedGeneration int64           `json:"observedGeneration"`
		Conditions         []leanCondition `json:"conditions"`
	} `json:"status"`
}

func nodeUpgradeDecoder(kind model.Kind) func(version string) leanDecode {
	return func(string) leanDecode {
		return leanDecoder(func(o *leanNodeUpgrade) any { return o.translate(kind) })
	}
}

// reuse empties the NodeUpgrade for the next event, keeping its lists' arrays.
func (o *leanNodeUpgrade) reuse() {
	c, own := reuseList(o.Status.Conditions), reuseList(o.Metadata.OwnerReferences)
	*o = leanNodeUpgrade{}
	o.Status.Conditions, o.Metadata.OwnerReferences = c, own
}

func (o *leanNodeUpgrade) translate(kind model.Kind) any {
	return &model.NodeUpgrade{
		Meta:                  o.Metadata.fleet(),
		Kind:                  kind,
		MachineName:           o.Spec.Machine.Name,
		KubernetesVersion:     intern(o.Spec.KubernetesVersion),
		EtcdVersion:           intern(o.Spec.EtcdVersion),
		FirstNodeToBeUpgraded: o.Spec.FirstNodeToBeUpgraded,
		Completed:             o.Status.Completed,
		ObservedGeneration:    o.Status.ObservedGeneration,
		Conditions:            leanConditions(o.Status.Conditions),
	}
}
