package watchers

import (
	"strconv"
	"strings"
	"time"
	"unique"

	corev1 "k8s.io/api/core/v1"

	"github.com/upgrade-console/upgrade-console/model"
)

// Translation from API objects to model values. It runs once per object
// version, in the informer's transform, so the informer caches only the small
// model value (no unstructured maps, no managedFields): that is what keeps
// 10,000 Machines, Nodes and NodeUpgrades in a few tens of megabytes.
//
// The accessors below read the unstructured maps in place; the helpers of
// k8s.io/apimachinery's unstructured package deep-copy slices and maps, which
// at this volume is most of the cost.

func field(m map[string]any, path ...string) any {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[p]
	}
	return cur
}

// str is a string field, printable (model.Printable): every string the
// dynamic translators read passes here.
func str(m map[string]any, path ...string) string {
	s, _ := field(m, path...).(string)
	return model.Printable(s)
}

// intern shares one copy of a string that thousands of objects repeat
// (label keys and values, condition types and reasons, versions, phases):
// the JSON decoder allocates each occurrence anew, and at 10,000 machines
// those copies were a fifth of the cache.
func intern(s string) string {
	if s == "" {
		return ""
	}
	// Made printable before it is shared: the lean decoders' text (a
	// condition's reason and message among it) passes here.
	return unique.Make(model.Printable(s)).Value()
}

func obj(m map[string]any, path ...string) map[string]any {
	o, _ := field(m, path...).(map[string]any)
	return o
}

func list(m map[string]any, path ...string) []any {
	l, _ := field(m, path...).([]any)
	return l
}

func boolean(m map[string]any, path ...string) bool {
	b, _ := field(m, path...).(bool)
	return b
}

func integer(m map[string]any, path ...string) (int64, bool) {
	switch v := field(m, path...).(type) {
	case int64:
		return v, true
	case int:
		return int64(v), true
	case int32:
		return int64(v), true
	case float64:
		return int64(v), true
	}
	return 0, false
}

func i64(m map[string]any, path ...string) int64 {
	v, _ := integer(m, path...)
	return v
}

// i32p is a replica counter: nil when absent (CAPI v1beta2: "not reported").
func i32p(m map[string]any, path ...string) *int32 {
	v, ok := integer(m, path...)
	if !ok {
		return nil
	}
	r := int32(v)
	return &r
}

func timestamp(m map[string]any, path ...string) time.Time { return parseTime(str(m, path...)) }

// lastAppliedAnnotation is dropped from every object: it holds a whole copy
// of the object as kubectl applied it.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

func stringMap(m map[string]any, drop func(string) bool) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if drop != nil && drop(k) {
			continue
		}
		if s, ok := v.(string); ok {
			out[intern(k)] = intern(s)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func meta(u map[string]any) model.Meta {
	m := fleetMeta(u)
	md := obj(u, "metadata")
	m.Labels = stringMap(obj(md, "labels"), nil)
	m.Annotations = stringMap(obj(md, "annotations"), func(k string) bool { return k == lastAppliedAnnotation })
	return m
}

// fleetMeta is meta without labels and annotations, for the kinds there is
// one of per node (Machines, NodeUpgrades): their translators read the few
// keys they need into fields, and at 10,000 nodes the maps were 12 MB of
// the console's live heap that nothing read (heap profile of bench/e2e),
// which the collector scanned on every cycle.
func fleetMeta(u map[string]any) model.Meta {
	m := leanScalars(obj(u, "metadata"))
	return m.fleet()
}

// leanMetaOf reads the metadata the lean decoders keep (leantyped.go) out of
// an unstructured object's, labels and annotations uninterned.
func leanMetaOf(md map[string]any) leanMeta {
	m := leanScalars(md)
	for k, v := range obj(md, "labels") {
		if s, ok := v.(string); ok {
			if m.Labels == nil {
				m.Labels = map[string]string{}
			}
			m.Labels[k] = s
		}
	}
	for k, v := range obj(md, "annotations") {
		if s, ok := v.(string); ok {
			if m.Annotations == nil {
				m.Annotations = map[string]string{}
			}
			m.Annotations[k] = s
		}
	}
	for _, o := range list(md, "ownerReferences") {
		if om, ok := o.(map[string]any); ok {
			m.OwnerReferences = append(m.OwnerReferences, leanOwner{Kind: str(om, "kind"), Name: str(om, "name"), Controller: boolean(om, "controller")})
		}
	}
	return m
}

// leanScalars is the metadata a lean decoder keeps, but the maps.
func leanScalars(md map[string]any) leanMeta {
	return leanMeta{
		Name:              str(md, "name"),
		Namespace:         str(md, "namespace"),
		UID:               str(md, "uid"),
		Generation:        i64(md, "generation"),
		ResourceVersion:   str(md, "resourceVersion"),
		CreationTimestamp: str(md, "creationTimestamp"),
		DeletionTimestamp: str(md, "deletionTimestamp"),
	}
}

// conditions is the one adapter for both condition dialects: CAPI v1beta2
// metav1.Condition (observedGeneration, no severity) and CAPI v1beta1 as used
// by EKS-A, etcdadm and NodeUpgrade (severity, no observedGeneration). Each
// fills what it carries; the rest stays zero.
func conditions(l []any) model.Conditions {
	return leanConditions(leanConditionsOf(l))
}

func leanConditionsOf(l []any) []leanCondition {
	var out []leanCondition
	for _, item := range l {
		c, ok := item.(map[string]any)
		if !ok {
			continue
		}
		out = append(out, leanCondition{
			Type:               str(c, "type"),
			Status:             str(c, "status"),
			Severity:           str(c, "severity"),
			Reason:             str(c, "reason"),
			Message:            str(c, "message"),
			LastTransitionTime: str(c, "lastTransitionTime"),
			ObservedGeneration: i64(c, "observedGeneration"),
		})
	}
	return out
}

// capiConditions picks the v1beta2 conditions of a CAPI object in either
// served version: status.conditions at v1beta2, status.v1beta2.conditions at
// v1beta1 (falling back to the v1beta1 conditions when a controller older
// than CAPI v1.9 wrote none).
func capiConditions(u map[string]any, version string) model.Conditions {
	if version == "v1beta1" {
		if l := list(u, "status", "v1beta2", "conditions"); len(l) > 0 {
			return conditions(l)
		}
	}
	return conditions(list(u, "status", "conditions"))
}

// EKSACluster is the model of an EKS-A Cluster object read with one GET
// (a command, not the watch), by the watch's own translation: what the
// command then judges it by (model.ClusterSpecStatus) is the rule the
// dashboard and the plan use.
func EKSACluster(u map[string]any) *model.EKSACluster {
	return translateEKSACluster(u, "").(*model.EKSACluster)
}

func translateEKSACluster(u map[string]any, _ string) any {
	spec := obj(u, "spec")
	c := &model.EKSACluster{
		Meta:                         meta(u),
		KubernetesVersion:            str(spec, "kubernetesVersion"),
		EksaVersion:                  str(spec, "eksaVersion"),
		BundlesRefName:               str(spec, "bundlesRef", "name"),
		BundlesRefNamespace:          str(spec, "bundlesRef", "namespace"),
		ManagementCluster:            str(spec, "managementCluster", "name"),
		ControlPlaneCount:            1,
		ControlPlaneRolloutStrategy:  str(spec, "controlPlaneConfiguration", "upgradeRolloutStrategy", "type"),
		ExternalEtcdCount:            int(i64(spec, "externalEtcdConfiguration", "count")),
		CiliumManaged:                field(spec, "clusterNetwork", "cniConfig", "cilium") != nil,
		CiliumSkipUpgrade:            boolean(spec, "clusterNetwork", "cniConfig", "cilium", "skipUpgrade"),
		Kindnetd:                     field(spec, "clusterNetwork", "cniConfig", "kindnetd") != nil,
		GitOps:                       field(spec, "gitOpsRef") != nil,
		ObservedGeneration:           i64(u, "status", "observedGeneration"),
		ChildrenReconciledGeneration: i64(u, "status", "childrenReconciledGeneration"),
		FailureMessage:               str(u, "status", "failureMessage"),
		FailureReason:                str(u, "status", "failureReason"),
		Conditions:                   conditions(list(u, "status", "conditions")),
		SpecChangedAt:                specWrittenAt(u),
	}
	if n, ok := integer(spec, "controlPlaneConfiguration", "count"); ok {
		c.ControlPlaneCount = int(n)
	}
	for _, item := range list(spec, "workerNodeGroupConfigurations") {
		g, ok := item.(map[string]any)
		if !ok {
			continue
		}
		wg := model.WorkerGroup{
			Name:              str(g, "name"),
			Count:             1,
			KubernetesVersion: str(g, "kubernetesVersion"),
			RolloutStrategy:   str(g, "upgradeRolloutStrategy", "type"),
		}
		if n, ok := integer(g, "count"); ok {
			wg.Count = int(n)
		}
		c.WorkerGroups = append(c.WorkerGroups, wg)
	}
	return c
}

// specChangedAt is the newest managedFields time of a write to the main
// resource: when the spec (or metadata) last changed. Status writes carry
// subresource "status" and are skipped.
func specChangedAt(u map[string]any) time.Time {
	var t time.Time
	for _, item := range list(u, "metadata", "managedFields") {
		mf, ok := item.(map[string]any)
		if !ok || str(mf, "subresource") != "" {
			continue
		}
		if ts := timestamp(mf, "time"); ts.After(t) {
			t = ts
		}
	}
	return t
}

// specWrittenAt is the newest managedFields time of a write that owns spec
// fields: when the spec last changed. An entry's time moves with any field
// its manager changes, so the entries of metadata alone (EKS-A's
// management-components annotation, the console's pause) are skipped: taken
// for the spec change, one moved the upgrade's start to the end of its
// first phase.
func specWrittenAt(u map[string]any) time.Time {
	var t time.Time
	for _, item := range list(u, "metadata", "managedFields") {
		mf, ok := item.(map[string]any)
		if !ok || str(mf, "subresource") != "" || field(mf, "fieldsV1", "f:spec") == nil {
			continue
		}
		if ts := timestamp(mf, "time"); ts.After(t) {
			t = ts
		}
	}
	return t
}

func translateCAPICluster(u map[string]any, version string) any {
	return &model.CAPICluster{
		Meta:               meta(u),
		Paused:             boolean(u, "spec", "paused"),
		Phase:              str(u, "status", "phase"),
		ObservedGeneration: i64(u, "status", "observedGeneration"),
		Conditions:         capiConditions(u, version),
	}
}

func translateKCP(u map[string]any, version string) any {
	spec, status := obj(u, "spec"), obj(u, "status")
	cp := &model.ControlPlane{
		Meta:               meta(u),
		Version:            str(spec, "version"),
		StatusVersion:      str(status, "version"),
		ObservedGeneration: i64(status, "observedGeneration"),
		Conditions:         capiConditions(u, version),
		ChangedAt:          specChangedAt(u),
	}
	cp.Replicas.Desired = i32p(spec, "replicas")
	cp.Replicas.Current = i32p(status, "replicas")
	for _, item := range list(status, "versions") {
		if v, ok := item.(map[string]any); ok {
			cp.Versions = append(cp.Versions, model.VersionCount{Version: str(v, "version"), Replicas: int32(i64(v, "replicas"))})
		}
	}
	if version == "v1beta1" {
		cp.RolloutStrategy = str(spec, "rolloutStrategy", "type")
		cp.Initialized = boolean(status, "initialized")
		cp.FailureMessage = str(status, "failureMessage")
		cp.Replicas.Ready = i32p(status, "v1beta2", "readyReplicas")
		cp.Replicas.Available = i32p(status, "v1beta2", "availableReplicas")
		cp.Replicas.UpToDate = i32p(status, "v1beta2", "upToDateReplicas")
		if cp.Replicas.UpToDate == nil {
			cp.Replicas.UpToDate = i32p(status, "updatedReplicas")
		}
		if cp.Replicas.Ready == nil {
			cp.Replicas.Ready = i32p(status, "readyReplicas")
		}
		return cp
	}
	cp.RolloutStrategy = str(spec, "rollout", "strategy", "type")
	cp.Initialized = boolean(status, "initialization", "controlPlaneInitialized")
	cp.FailureMessage = str(status, "deprecated", "v1beta1", "failureMessage")
	cp.Replicas.Ready = i32p(status, "readyReplicas")
	cp.Replicas.Available = i32p(status, "availableReplicas")
	cp.Replicas.UpToDate = i32p(status, "upToDateReplicas")
	return cp
}

func translateEtcdadmCluster(u map[string]any, _ string) any {
	spec, status := obj(u, "spec"), obj(u, "status")
	e := &model.EtcdCluster{
		Meta:                   meta(u),
		Replicas:               int32(i64(spec, "replicas")),
		EtcdVersion:            str(spec, "etcdadmConfigSpec", "cloudInitConfig", "version"),
		InfrastructureTemplate: str(spec, "infrastructureTemplate", "name"),
		ReadyReplicas:          int32(i64(status, "replicas")),
		Ready:                  boolean(status, "ready"),
		Initialized:            boolean(status, "initialized"),
		CreationComplete:       boolean(status, "creationComplete"),
		Endpoints:              str(status, "endpoints"),
		ObservedGeneration:     i64(status, "observedGeneration"),
		Conditions:             conditions(list(status, "conditions")),
	}
	if e.EtcdVersion == "" {
		e.EtcdVersion = str(spec, "etcdadmConfigSpec", "bottlerocketConfig", "etcdImage")
	}
	return e
}

func translateMachineDeployment(u map[string]any, version string) any {
	spec, status := obj(u, "spec"), obj(u, "status")
	md := &model.MachineDeployment{
		Meta:               meta(u),
		Version:            str(spec, "template", "spec", "version"),
		Phase:              str(status, "phase"),
		ObservedGeneration: i64(status, "observedGeneration"),
		Conditions:         capiConditions(u, version),
		SpecChangedAt:      specWrittenAt(u),
	}
	md.Replicas.Desired = i32p(spec, "replicas")
	md.Replicas.Current = i32p(status, "replicas")
	if version == "v1beta1" {
		md.RolloutStrategy = str(spec, "strategy", "type")
		md.Replicas.Ready = i32p(status, "v1beta2", "readyReplicas")
		md.Replicas.Available = i32p(status, "v1beta2", "availableReplicas")
		md.Replicas.UpToDate = i32p(status, "v1beta2", "upToDateReplicas")
		if md.Replicas.UpToDate == nil {
			md.Replicas.UpToDate = i32p(status, "updatedReplicas")
		}
		if md.Replicas.Ready == nil {
			md.Replicas.Ready = i32p(status, "readyReplicas")
		}
		return md
	}
	md.RolloutStrategy = str(spec, "rollout", "strategy", "type")
	md.Replicas.Ready = i32p(status, "readyReplicas")
	md.Replicas.Available = i32p(status, "availableReplicas")
	md.Replicas.UpToDate = i32p(status, "upToDateReplicas")
	return md
}

const annotationClonedFromName = "cluster.x-k8s.io/cloned-from-name"

// translateMachine translates a Machine the dynamic client decoded, by the
// lean decoder's rule.
func translateMachine(u map[string]any, version string) any {
	var o leanMachine
	o.Metadata = leanMetaOf(obj(u, "metadata"))
	o.Spec.Version = str(u, "spec", "version")
	o.Spec.ProviderID = str(u, "spec", "providerID")
	status := obj(u, "status")
	o.Status.Phase = str(status, "phase")
	o.Status.NodeRef.Name = str(status, "nodeRef", "name")
	for _, item := range list(status, "addresses") {
		if a, ok := item.(map[string]any); ok {
			o.Status.Addresses = append(o.Status.Addresses, leanAddress{Type: str(a, "type"), Address: str(a, "address")})
		}
	}
	o.Status.FailureReason = str(status, "failureReason")
	o.Status.FailureMessage = str(status, "failureMessage")
	o.Status.Deprecated.V1Beta1.FailureReason = str(status, "deprecated", "v1beta1", "failureReason")
	o.Status.Deprecated.V1Beta1.FailureMessage = str(status, "deprecated", "v1beta1", "failureMessage")
	o.Status.Conditions = leanConditionsOf(list(status, "conditions"))
	o.Status.V1Beta2.Conditions = leanConditionsOf(list(status, "v1beta2", "conditions"))
	return o.translate(version)
}

// translateNodeUpgrade translates a NodeUpgrade the dynamic client decoded,
// by the lean decoder's rule.
func translateNodeUpgrade(kind model.Kind) func(u map[string]any, _ string) any {
	return func(u map[string]any, _ string) any {
		var o leanNodeUpgrade
		o.Metadata = leanScalars(obj(u, "metadata"))
		spec, status := obj(u, "spec"), obj(u, "status")
		o.Spec.Machine.Name = str(spec, "machine", "name")
		o.Spec.KubernetesVersion = str(spec, "kubernetesVersion")
		o.Spec.EtcdVersion = str(spec, "etcdVersion")
		o.Spec.FirstNodeToBeUpgraded = boolean(spec, "firstNodeToBeUpgraded")
		o.Status.Completed = boolean(status, "completed")
		o.Status.ObservedGeneration = i64(status, "observedGeneration")
		o.Status.Conditions = leanConditionsOf(list(status, "conditions"))
		return o.translate(kind)
	}
}

func translateUpgradeRequest(kind model.Kind, targetField string) func(u map[string]any, _ string) any {
	return func(u map[string]any, _ string) any {
		spec, status := obj(u, "spec"), obj(u, "status")
		r := &model.UpgradeRequest{
			Meta:              meta(u),
			Kind:              kind,
			Target:            str(spec, targetField, "name"),
			KubernetesVersion: str(spec, "kubernetesVersion"),
			RequireUpgrade:    i64(status, "requireUpgrade"),
			Upgraded:          i64(status, "upgraded"),
			Ready:             boolean(status, "ready"),
		}
		for _, item := range list(spec, "machinesRequireUpgrade") {
			if ref, ok := item.(map[string]any); ok {
				r.Machines = append(r.Machines, str(ref, "name"))
			}
		}
		return r
	}
}

// nodeLabelKept says which node labels the console keeps: roles, Cluster API
// labels and the upgrade-in-progress marker. A node carries dozens of labels
// (topology, instance type, OS) the console never shows; at 10,000 nodes
// they would be most of the cache.
func nodeLabelKept(k, upgradeLabel string) bool {
	return strings.HasPrefix(k, "node-role.kubernetes.io/") || strings.HasPrefix(k, "cluster.x-k8s.io/") ||
		strings.HasPrefix(k, "node.cluster.x-k8s.io/") || k == upgradeLabel
}

func filterStrings(m map[string]string, keep func(string) bool) map[string]string {
	var out map[string]string
	for k, v := range m {
		if keep(k) {
			if out == nil {
				out = map[string]string{}
			}
			out[intern(k)] = intern(v)
		}
	}
	return out
}

func translateNode(n *corev1.Node, upgradeLabel string) *model.Node {
	out := &model.Node{
		Meta: model.Meta{
			Name:              n.Name,
			UID:               string(n.UID),
			Generation:        n.Generation,
			ResourceVersion:   n.ResourceVersion,
			CreationTimestamp: n.CreationTimestamp.Time,
			Labels:            filterStrings(n.Labels, func(k string) bool { return nodeLabelKept(k, upgradeLabel) }),
			Annotations:       filterStrings(n.Annotations, func(k string) bool { return strings.HasPrefix(k, "cluster.x-k8s.io/") }),
		},
		KubeletVersion: intern(n.Status.NodeInfo.KubeletVersion),
		Unschedulable:  n.Spec.Unschedulable,
	}
	if n.DeletionTimestamp != nil {
		out.DeletionTimestamp = n.DeletionTimestamp.Time
	}
	for _, c := range n.Status.Conditions {
		switch {
		case c.Type == corev1.NodeReady:
			out.Ready = c.Status == corev1.ConditionTrue
			out.ReadySince = c.LastTransitionTime.Time
		case nodeConditionAbnormal(c):
			// Not its lastHeartbeatTime: it moves with every status the
			// kubelet posts, and held here it would make each heartbeat
			// of a node under pressure a change (putOrRemove drops the
			// writes that change nothing the model holds).
			out.Abnormal = append(out.Abnormal, model.Condition{
				Type:               intern(string(c.Type)),
				Status:             intern(string(c.Status)),
				Reason:             intern(c.Reason),
				Message:            intern(c.Message),
				LastTransitionTime: c.LastTransitionTime.Time,
			})
		}
	}
	return out
}

// nodeConditionAbnormal reports whether a Node condition other than Ready
// reports a problem. Every other condition a node carries names a problem,
// so False is its normal status: the kubelet's pressure conditions and the
// cloud route controller's NetworkUnavailable, and the conditions of
// node-problem-detector and its kin (KernelDeadlock, ReadonlyFilesystem,
// FrequentKubeletRestart…), the usual source of any other type.
//
// Kubernetes' own four are kept only when True: when the kubelet stops
// posting status the node lifecycle controller sets its three Unknown
// along with Ready, which the detail already shows as NotReady, and a mass
// outage would otherwise hold three copies of the same message per node
// (NetworkUnavailable is its CNI's or cloud's, which report True or False).
// Any other type is kept when True or Unknown: no controller blanks those,
// so Unknown is its reporter saying it cannot tell.
func nodeConditionAbnormal(c corev1.NodeCondition) bool {
	switch c.Type {
	case corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure, corev1.NodeNetworkUnavailable:
		return c.Status == corev1.ConditionTrue
	}
	return c.Status != corev1.ConditionFalse
}

// eventKinds are the involved-object kinds whose events the console keeps.
var eventKinds = map[string]bool{
	"Cluster": true, "KubeadmControlPlane": true, "EtcdadmCluster": true, "MachineDeployment": true,
	"MachineSet": true, "Machine": true, "Node": true, "NodeUpgrade": true, "NodeKubeadmUpgrade": true,
	"ControlPlaneUpgrade": true, "MachineDeploymentUpgrade": true,
}

// upgraderPodEvent reports whether an event is about an in-place upgrader
// pod (<node>-node-upgrader): its BackOff events say why a step fails again.
// The other pods of the namespace (the controllers') are not the upgrade's.
func upgraderPodEvent(io corev1.ObjectReference) bool {
	return io.Kind == "Pod" && strings.HasSuffix(io.Name, model.UpgraderSuffix)
}

// translateEvent keeps an event about one of the watched kinds whose object
// belongs to the cluster (EKS-A names every generated object after the
// cluster); it returns nil for any other event.
//
// LastTimestamp is the event's latest time: the latest of lastTimestamp,
// firstTimestamp, series.lastObservedTime and eventTime, else the creation
// time. The first two have one-second precision (the API truncates them), the
// MicroTimes microsecond precision, so within a second a MicroTime wins, while
// a lastTimestamp a later second moved (an event that fired again) wins over
// the eventTime of its first occurrence. Events of the same time are ordered by
// ResourceVersion (see eventNewer).
func translateEvent(e *corev1.Event, cluster string) *model.Event {
	io := e.InvolvedObject
	kept := eventKinds[io.Kind] || upgraderPodEvent(io)
	if !kept || (io.Kind != "Node" && !strings.HasPrefix(io.Name, cluster)) {
		return nil
	}
	return modelEvent(e)
}

// modelEvent is translateEvent without its choice of events.
func modelEvent(e *corev1.Event) *model.Event {
	io := e.InvolvedObject
	out := &model.Event{
		Namespace:      e.Namespace,
		Name:           e.Name,
		UID:            string(e.UID),
		Type:           e.Type,
		Reason:         model.Printable(e.Reason),
		Message:        model.Printable(e.Message),
		ObjectKind:     io.Kind,
		ObjectName:     io.Name,
		Count:          e.Count,
		FirstTimestamp: e.FirstTimestamp.Time,
		LastTimestamp:  e.LastTimestamp.Time,
	}
	// An API server's resourceVersion is a decimal counter of its writes;
	// anything else is left 0 and orders as the oldest.
	out.ResourceVersion, _ = strconv.ParseUint(e.ResourceVersion, 10, 64)
	if e.Series != nil {
		out.Count = max(out.Count, e.Series.Count)
	}
	for _, t := range []time.Time{e.FirstTimestamp.Time, e.EventTime.Time, seriesTime(e.Series)} {
		if t.After(out.LastTimestamp) {
			out.LastTimestamp = t
		}
	}
	if out.LastTimestamp.IsZero() {
		out.LastTimestamp = e.CreationTimestamp.Time
	}
	if out.FirstTimestamp.IsZero() {
		out.FirstTimestamp = out.LastTimestamp
	}
	return out
}

func seriesTime(s *corev1.EventSeries) time.Time {
	if s == nil {
		return time.Time{}
	}
	return s.LastObservedTime.Time
}

// eventNewer is model.Event.Newer; the store breaks the remaining ties by
// key.
func eventNewer(a, b *model.Event) bool { return a.Newer(b) }
