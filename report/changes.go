package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/upgrade-console/upgrade-console/model"
)

// Line is one meaningful change, as the plain watch prints it.
type Line struct {
	At time.Time
	// Subject is what changed: "phase", "Cluster mgmt", "Machine mgmt-cp-x".
	Subject string
	Text    string
}

// String is the log form: RFC 3339 UTC time, subject, change.
func (l Line) String() string {
	return l.At.UTC().Format(time.RFC3339) + " " + l.Subject + ": " + l.Text
}

// differ collects lines for one comparison.
type differ struct {
	at time.Time
	// conn are the console's connection flags, for the commands it prints.
	conn model.ConnFlags
	// first is true for the first snapshot: lists are summarised instead of
	// reported object by object (10,000 "created" lines help nobody).
	first bool
	// prevListed and curListed tell whether the previous and the current
	// snapshot hold a kind's whole list (see listed). Nothing is said of a
	// list still on its way; one that just arrived whole is summarised like
	// a first one.
	prevListed, curListed func(model.Kind) bool
	// nodesElsewhere: the cluster's Nodes are on its own API server
	// (model.ClusterState.NodesElsewhere), now and in the previous
	// snapshot: what is said of its nodes is its Machines' reading.
	nodesElsewhere, prevNodesElsewhere bool
	// rolledBack: the Cluster carries upgrade-console's etcd rollback
	// record, so etcd's annotation cleared and members disowned are the
	// rollback's doing, not a finished rollout's.
	rolledBack bool
	lines      []Line
}

// listed reports whether a snapshot holds a kind's whole list: its informer
// has synced. Until then the list is what has arrived so far: counted, it
// read "nodes: 0, 0 ready", then "nodes: 897", of 1,003 Ready nodes.
// Snapshots without source status (tests, tools) hold whole lists.
func listed(s *model.ClusterState, k model.Kind) bool {
	return s.Sources == nil || s.Sources[k].Synced
}

// fresh reports whether a listed kind is to be stated whole rather than
// compared: nothing has been said of it yet.
func (d *differ) fresh(k model.Kind) bool { return d.first || !d.prevListed(k) }

func (d *differ) add(subject, format string, args ...any) {
	d.lines = append(d.lines, Line{At: d.at, Subject: subject, Text: fmt.Sprintf(format, args...)})
}

// Changes lists what changed between two snapshots and their derived
// progress, in a fixed order (connection, progress, cluster objects,
// machines, nodes, in-place upgrades, warning events). A nil prev means the
// first snapshot: the lines then state where the upgrade stands. It is O(n)
// in the number of objects.
func Changes(prev, cur *model.ClusterState, prevP, curP *model.Progress, now time.Time) []Line {
	if cur == nil {
		return nil
	}
	d := &differ{at: now, conn: cur.Conn}
	d.prevListed = func(k model.Kind) bool { return prev != nil && listed(prev, k) }
	d.curListed = func(k model.Kind) bool { return listed(cur, k) }
	if prev == nil {
		prev = &model.ClusterState{}
		prevP = &model.Progress{}
		d.first = true
		d.add("watch", "cluster %s/%s (context %s)", cur.Namespace, cur.ClusterName, orDash(cur.Context))
	}
	d.rolledBack = cur.Cluster != nil && cur.Cluster.Annotations[model.AnnotationEtcdRollbackRecord] != ""
	d.nodesElsewhere, d.prevNodesElsewhere = cur.NodesElsewhere(), prev.NodesElsewhere()
	d.connection(prev, cur)
	d.sources(prev, cur)
	d.progress(prevP, curP)
	d.cluster(prev.Cluster, cur.Cluster)
	d.capiCluster(prev.CAPICluster, cur.CAPICluster)
	d.controlPlane(prev, cur, prevP, curP)
	d.etcd(prev.Etcd, cur.Etcd)
	d.machineDeployments(prev, cur, prevP, curP)
	d.machines(prev.Machines, cur.Machines)
	if d.nodesElsewhere {
		d.machineNodes(cur)
	} else {
		d.nodes(prev.Nodes, cur.Nodes)
	}
	d.nodeUpgrades(prev.NodeUpgrades, cur.NodeUpgrades, cur)
	d.upgraderPods(prev.UpgraderPods, cur.UpgraderPods)
	d.upgradeRequests(wholeRequests(prev.UpgradeRequests, d.prevListed), wholeRequests(cur.UpgradeRequests, d.curListed))
	d.events(prev.Events, cur.Events)
	return d.lines
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// connection says each change of the link to the API server once, a lost
// one with the error that lost it: "reconnecting: dial tcp …: connection
// refused", then "live". Credentials refused while it stays lost are said
// too: a server that timed out and then answered 401 (a token revoked
// behind a frozen server) left the timeout as the last word for as long as
// the refusal lasted, and the fix unsaid.
func (d *differ) connection(prev, cur *model.ClusterState) {
	if cur.Connection == "" {
		return
	}
	if prev.Connection == cur.Connection {
		if cur.Connection != model.Live && refused(cur.ConnectionErr) && !refused(prev.ConnectionErr) {
			d.add("connection", "%s", ConnectionText(cur))
		}
		return
	}
	d.add("connection", "%s", ConnectionText(cur))
}

// ConnectionText is a snapshot's link to the API server as the plain watch
// says it: the state, the error of one not live, and for credentials the
// API server refuses, the fix (no retry mends them).
func ConnectionText(s *model.ClusterState) string {
	if s.Connection == model.Live || s.ConnectionErr == "" {
		return string(s.Connection)
	}
	text := string(s.Connection) + ": " + s.ConnectionErr
	if refused(s.ConnectionErr) {
		text += " (fix: " + model.CredentialsFix + ")"
	}
	return text
}

func refused(connErr string) bool { return strings.HasPrefix(connErr, model.CredentialsRefused) }

// connected reports whether a snapshot's link to the API server is live
// (snapshots without connection state, from tests or tools, count as live).
func connected(s *model.ClusterState) bool {
	return s.Connection == "" || s.Connection == model.Live
}

func (d *differ) sources(prev, cur *model.ClusterState) {
	for _, k := range sortedKinds(cur.Sources) {
		p, c := prev.Sources[k], cur.Sources[k]
		if c.Forbidden != "" && c.Forbidden != p.Forbidden {
			shown := "the " + string(k) + " pane stays empty"
			switch k {
			case model.KindLease:
				shown = "the upgrade lock is not shown"
			case model.KindUpgraderPod:
				shown = "the upgrader pods' containers are not shown; the in-place steps still are"
			case model.KindMachine:
				// A NodeUpgrade is told this cluster's by its Machine.
				shown = "the machines pane stays empty, and no in-place step is shown"
			}
			if fix := model.GrantFor(c.Forbidden, d.conn); fix != "" {
				shown += "; fix: " + fix
			}
			d.add("access", "forbidden: %s (%s)", c.Forbidden, shown)
		}
		if c.Forbidden == "" && p.Forbidden != "" && c.Installed {
			// Refused a while (an API server restarting answers 403
			// until it has loaded RBAC, a RoleBinding granted late):
			// unsaid, the forbidden line stood for the rest of the log.
			d.add("access", "restored: %s", p.Forbidden)
		}
		// While the connection is lost every kind's watch fails, each
		// with its own URL, again at each retry: dozens of lines that
		// the connection line says once. On a live connection an error
		// is the kind's own (its watch was refused), said when it
		// changes, and when the connection comes back with it.
		if c.Err != "" && connected(cur) && (c.Err != p.Err || !connected(prev)) {
			d.add("watch "+string(k), "%s", c.Err)
		}
	}
}

func sortedKinds(m map[model.Kind]model.SourceStatus) []model.Kind {
	ks := make([]model.Kind, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}

// progress reports the progress lines. What the EKS-A Cluster says (its
// status, failure, completion) is said at once; the phases and stalls only
// once the lists they are derived from are whole (Progress.Syncing): from a
// partial list a healthy cluster read "workers: active: 0/1000 nodes
// upgraded and ready, 0 ready in all".
func (d *differ) progress(prev, cur *model.Progress) {
	d.status(prev, cur)
	if !cur.Syncing {
		said := prev
		if prev.Syncing {
			said = &model.Progress{} // nothing said of the phases yet
		}
		d.phases(said, cur)
		d.stalls(said, cur)
	}
	d.verdict(prev, cur)
}

// status reports whether the EKS-A Cluster's status describes its spec.
func (d *differ) status(prev, cur *model.Progress) {
	if cur.Stale != prev.Stale || (cur.Stale && len(prev.Milestones) == 0) {
		if cur.Stale && len(cur.Milestones) > 0 {
			d.add("status", "%s", cur.Milestones[0].Message)
		} else if !cur.Stale && len(prev.Milestones) > 0 {
			d.add("status", "generation observed")
		}
	}
}

// phases reports the current phase and each phase's status and counts.
func (d *differ) phases(prev, cur *model.Progress) {
	if cur.Current != prev.Current {
		if prev.Current == "" {
			d.add("phase", "%s", cur.Current)
		} else {
			d.add("phase", "%s → %s", prev.Current, cur.Current)
		}
	}
	for _, ph := range cur.Phases {
		old := phaseOf(prev, ph.Phase)
		if old.Status == ph.Status && old.Done == ph.Done && old.Ready == ph.Ready && old.Total == ph.Total && old.Unseen == ph.Unseen {
			// A phase whose objects are not visible has no counts to
			// move: what EKS-A's Cluster says of it meanwhile is the
			// Cluster's own condition lines.
			continue
		}
		text := string(ph.Status)
		switch {
		case ph.Unseen != "":
			// Its objects are not visible: the detail says why and what
			// the status rests on. Counted, "(0/3 upgraded and ready, 0
			// ready in all)", it read as a control plane down.
			text += ": " + ph.Detail
		case ph.Detail != "" && ph.Status != model.PhasePending:
			// The detail counts in the words of what it counts: a count
			// of its own here, "up to date", read as a contradiction of
			// it and of EKS-A's message after it.
			text += ": " + ph.Detail
		case ph.Total > 0:
			text += fmt.Sprintf(" (%d/%d upgraded and ready, %d ready in all)", ph.Done, ph.Total, ph.Ready)
		}
		d.add("phase "+string(ph.Phase), "%s", text)
	}
}

// stalls reports what became stalled or failed, and what moves again.
func (d *differ) stalls(prev, cur *model.Progress) {
	old := map[string]bool{}
	for _, s := range prev.Stalls {
		old[string(s.Kind)+"/"+s.Name] = true
	}
	now := map[string]bool{}
	for _, s := range cur.Stalls {
		k := string(s.Kind) + "/" + s.Name
		now[k] = true
		if !old[k] {
			word, text := "stalled", s.Sentence
			if s.Failed {
				word = "failed"
			}
			if s.Resume != "" {
				// The console's own way past it, on the first line that
				// reports it: the step's event offers raw kubectl, and
				// the outcome line naming the command came ten minutes on.
				text += "; next: " + s.Resume
			}
			d.add(word, "%s", text)
		}
	}
	for _, s := range prev.Stalls {
		if !now[string(s.Kind)+"/"+s.Name] {
			// "moving again" was said of a machine the rollback had
			// deleted: gone is no longer stalled too.
			was := "stalled"
			if s.Failed {
				was = "failed" // said "failed:", never "stalled:"
			}
			d.add("progressing", "%s %s no longer %s", s.Kind.Short(), s.Name, was)
		}
	}
}

// verdict reports the Cluster's failure and the completion rule holding.
func (d *differ) verdict(prev, cur *model.Progress) {
	if cur.Failed && (!prev.Failed || cur.FailureMessage != prev.FailureMessage) {
		d.add("upgrade", "failed: %s", cur.FailureMessage)
	}
	switch {
	case cur.Complete && !prev.Complete && prev.Generation == 0:
		// The first look at the Cluster: nothing completed, it was at rest.
		d.add("upgrade", "none under way: every completion milestone met")
	case cur.Complete && !prev.Complete:
		// Not "complete": the outcome line says done once the rule has
		// kept holding and the API server confirmed it. A script that
		// took this line for the end acted seconds early, while the last
		// old machines were still being deleted.
		d.add("upgrade", "every completion milestone met; confirming it holds (the outcome line follows)")
	}
}

// phaseOf is p's phase ph, zero when p is nil or has none.
func phaseOf(p *model.Progress, ph model.Phase) model.PhaseProgress {
	if p == nil {
		return model.PhaseProgress{}
	}
	for _, pp := range p.Phases {
		if pp.Phase == ph {
			return pp
		}
	}
	return model.PhaseProgress{}
}

// conditions reports every condition whose status, reason or message moved.
// On an object seen for the first time only the conditions that need
// attention are listed.
func (d *differ) conditions(subject string, prev, cur model.Conditions) {
	baseline := len(prev) == 0
	for _, c := range cur {
		p, ok := prev.Get(c.Type)
		if ok && p.Status == c.Status && p.Reason == c.Reason && p.Message == c.Message {
			continue
		}
		if baseline && Healthy(c) {
			continue
		}
		text := c.Type + " " + c.Status
		if c.Severity != "" && c.Status == "False" {
			text += " (" + string(c.Severity) + ")"
		}
		if c.Reason != "" {
			text += " " + c.Reason
		}
		if c.Message != "" {
			text += ": " + model.FoldLines(c.Message)
		}
		d.add(subject, "%s", text)
	}
	for _, p := range prev {
		if _, ok := cur.Get(p.Type); !ok {
			d.add(subject, "%s removed", p.Type)
		}
	}
}

func annotation(d *differ, subject string, prev, cur map[string]string, key, set, cleared string) {
	p, c := prev[key] == "true", cur[key] == "true"
	switch {
	case c && !p:
		d.add(subject, "%s", set)
	case p && !c:
		d.add(subject, "%s", cleared)
	}
}

func (d *differ) cluster(prev, cur *model.EKSACluster) {
	if cur == nil {
		if prev != nil {
			d.add("Cluster "+prev.Name, "gone")
		}
		return
	}
	if prev == nil {
		prev = &model.EKSACluster{}
	}
	subj := "Cluster " + cur.Name
	if cur.Generation != prev.Generation && prev.Generation != 0 {
		d.add(subj, "spec changed (generation %d → %d)", prev.Generation, cur.Generation)
	}
	if cur.EksaVersion != prev.EksaVersion || cur.KubernetesVersion != prev.KubernetesVersion {
		d.add(subj, "target EKS-A %s, Kubernetes %s", orDash(cur.EksaVersion), orDash(cur.KubernetesVersion))
	}
	if cur.FailureMessage != prev.FailureMessage {
		if cur.FailureMessage == "" {
			d.add(subj, "failureMessage cleared")
		} else {
			d.add(subj, "failureMessage (%s): %s", orDash(cur.FailureReason), model.FoldLines(cur.FailureMessage))
		}
	}
	annotation(d, subj, prev.Annotations, cur.Annotations, model.AnnotationEKSAPaused, "reconcile paused", "reconcile resumed")
	d.conditions(subj, prev.Conditions, cur.Conditions)
}

// Replicas is "3 desired<sep>1 up to date<sep>3 ready<sep>3 available",
// with "?" for counters not reported yet (nil in CAPI v1beta2).
func Replicas(r model.ReplicaCounts, sep string) string {
	n := func(p *int32) string {
		if p == nil {
			return "?"
		}
		return strconv.Itoa(int(*p))
	}
	return n(r.Desired) + " desired" + sep + n(r.UpToDate) + " up to date" + sep + n(r.Ready) + " ready" + sep + n(r.Available) + " available"
}

func replicas(r model.ReplicaCounts) string { return Replicas(r, ", ") }

// capiCluster says the Cluster API Cluster's pause as it comes and goes:
// paused, CAPI rolls no machine (EKS-A's etcd restore procedure sets it).
func (d *differ) capiCluster(prev, cur *model.CAPICluster) {
	if cur == nil {
		return
	}
	was := prev != nil && prev.Paused
	switch {
	case cur.Paused && !was:
		d.add("Cluster.cluster.x-k8s.io "+cur.Name, "paused (spec.paused: Cluster API rolls no machine until it is resumed)")
	case !cur.Paused && was:
		d.add("Cluster.cluster.x-k8s.io "+cur.Name, "resumed (spec.paused cleared)")
	}
}

func (d *differ) controlPlane(prevS, curS *model.ClusterState, prevP, curP *model.Progress) {
	prev, cur := prevS.ControlPlane, curS.ControlPlane
	if cur == nil {
		return
	}
	if prev == nil {
		prev = &model.ControlPlane{}
	}
	subj := "KubeadmControlPlane " + cur.Name
	if cur.Version != prev.Version {
		d.add(subj, "version %s", cur.Version)
	}
	// Up to date by the model's rule, as the dashboard's CONTROL PLANE
	// title counts it (model.ControlPlaneReplicas): CAPI's counter read
	// "2 up to date" where the dashboard read 1.
	if r := replicas(controlPlaneReplicas(curS, curP)); r != replicas(controlPlaneReplicas(prevS, prevP)) {
		d.add(subj, "%s", r)
	}
	annotation(d, subj, prev.Annotations, cur.Annotations, model.AnnotationCAPIPaused, "paused", "unpaused")
	if cur.FailureMessage != prev.FailureMessage && cur.FailureMessage != "" {
		d.add(subj, "failure: %s", model.FoldLines(cur.FailureMessage))
	}
	d.conditions(subj, prev.Conditions, cur.Conditions)
}

// controlPlaneReplicas is s's KubeadmControlPlane counts with up to date as
// the control-plane phase of p, derived from s, counts it.
func controlPlaneReplicas(s *model.ClusterState, p *model.Progress) model.ReplicaCounts {
	if s.ControlPlane == nil {
		return model.ReplicaCounts{}
	}
	r, _ := model.ControlPlaneReplicas(s, phaseOf(p, model.PhaseControlPlane).Done, model.LiveControlPlaneMachines(s))
	return r
}

func (d *differ) etcd(prev, cur *model.EtcdCluster) {
	if cur == nil {
		return
	}
	if prev == nil {
		prev = &model.EtcdCluster{}
	}
	subj := "EtcdadmCluster " + cur.Name
	if cur.EtcdVersion != prev.EtcdVersion {
		d.add(subj, "etcd %s", cur.EtcdVersion)
	}
	if cur.ReadyReplicas != prev.ReadyReplicas || cur.Replicas != prev.Replicas || cur.Ready != prev.Ready {
		d.add(subj, "%d/%d members ready, ready=%v", cur.ReadyReplicas, cur.Replicas, cur.Ready)
	}
	cleared := "upgrading annotation cleared (rollout finished)"
	if d.rolledBack {
		cleared = "upgrading annotation cleared (etcd rolled back)"
	}
	annotation(d, subj, prev.Annotations, cur.Annotations, model.AnnotationEtcdUpgrading, "upgrading (rollout started)", cleared)
	d.conditions(subj, prev.Conditions, cur.Conditions)
}

func (d *differ) machineDeployments(prevS, curS *model.ClusterState, prevP, curP *model.Progress) {
	if !d.curListed(model.KindMachineDeployment) {
		return
	}
	prev, cur := prevS.MachineDeployments, curS.MachineDeployments
	if d.fresh(model.KindMachineDeployment) {
		prev = nil
	}
	prevW, curW := phaseOf(prevP, model.PhaseWorkers), phaseOf(curP, model.PhaseWorkers)
	old := index(prev, func(m *model.MachineDeployment) string { return m.Name })
	for i := range cur {
		c := &cur[i]
		p := old[c.Name]
		pr := model.ReplicaCounts{}
		if p == nil {
			p = &model.MachineDeployment{}
		} else {
			pr = model.MachineDeploymentReplicas(prevS.Cluster, p, prevW)
		}
		subj := "MachineDeployment " + c.Name
		if c.Version != p.Version {
			d.add(subj, "version %s", c.Version)
		}
		// Up to date by the model's rule, as the workers phase counts it
		// (model.MachineDeploymentReplicas): CAPI's counter read "12 up to
		// date" where the dashboard read 0 of 12 nodes upgraded.
		if r := replicas(model.MachineDeploymentReplicas(curS.Cluster, c, curW)); r != replicas(pr) {
			d.add(subj, "%s", r)
		}
		d.conditions(subj, p.Conditions, c.Conditions)
	}
}

func index[T any](l []T, name func(*T) string) map[string]*T {
	m := make(map[string]*T, len(l))
	for i := range l {
		m[name(&l[i])] = &l[i]
	}
	return m
}

// indexPtrs is index for the fleet-sized lists, which hold pointers.
func indexPtrs[T any](l model.List[T], name func(*T) string) map[string]*T {
	m := make(map[string]*T, l.Len())
	for _, v := range l.All() {
		m[name(v)] = v
	}
	return m
}

func (d *differ) machines(prevL, curL model.List[model.Machine]) {
	if !d.curListed(model.KindMachine) {
		return
	}
	if d.fresh(model.KindMachine) {
		d.summariseMachines(curL)
		return
	}
	if prevL.Same(curL) { // at fleet scale most snapshots leave a kind untouched
		return
	}
	old := indexPtrs(prevL, func(m *model.Machine) string { return m.Name })
	seen := make(map[string]bool, curL.Len())
	for _, c := range curL.All() {
		seen[c.Name] = true
		p := old[c.Name]
		if p == nil {
			d.add(string(c.Role)+" machine "+c.Name, "created (phase %s%s)", orDash(c.Phase), versionSuffix(c.Version))
			continue
		}
		nodeReady := d.nodesElsewhere && c.Role != model.RoleEtcd && machineNodeReadyChanged(p, c)
		if p == c || machineSame(p, c) && !nodeReady {
			continue // the common case at fleet scale: no string built
		}
		subj := string(c.Role) + " machine " + c.Name
		if c.Phase != p.Phase {
			d.add(subj, "phase %s → %s", orDash(p.Phase), orDash(c.Phase))
		}
		if c.Version != p.Version {
			d.add(subj, "version %s → %s", orDash(p.Version), orDash(c.Version))
		}
		if nodeReady {
			d.add(subj, "node %s", machineNodeText(c))
		} else if c.NodeName != p.NodeName && c.NodeName != "" {
			d.add(subj, "node %s", c.NodeName)
		}
		if c.EtcdReady != p.EtcdReady {
			d.add(subj, "etcd-ready %v", c.EtcdReady)
		}
		if p.Owned && !c.Owned {
			if d.rolledBack || !c.DeletionTimestamp.IsZero() {
				d.add(subj, "disowned by %s", orDash(p.Owner))
			} else {
				d.add(subj, "disowned by %s (outdated member, removed after the control plane rollout)", orDash(p.Owner))
			}
		}
		if !c.DeletionTimestamp.IsZero() && p.DeletionTimestamp.IsZero() {
			d.add(subj, "deleting")
		}
	}
	for _, p := range prevL.All() {
		if !seen[p.Name] {
			d.add(string(p.Role)+" machine "+p.Name, "deleted")
		}
	}
}

// machineSame reports whether nothing the lines mention changed.
func machineSame(p, c *model.Machine) bool {
	return p.Phase == c.Phase && p.Version == c.Version && p.NodeName == c.NodeName &&
		p.EtcdReady == c.EtcdReady && p.Owned == c.Owned && p.DeletionTimestamp.Equal(c.DeletionTimestamp)
}

func versionSuffix(v string) string {
	if v == "" {
		return ""
	}
	return ", " + v
}

// machineNodes states, once, how the nodes of a cluster whose Nodes are on
// its own API server are, by its Machines: a count of this API server's
// Nodes read as its own (the management cluster's). Each change after is
// a machine's line (machines).
func (d *differ) machineNodes(cur *model.ClusterState) {
	if !d.curListed(model.KindMachine) || !d.fresh(model.KindMachine) && d.prevNodesElsewhere {
		return
	}
	total, ready, unknown := 0, 0, 0
	for _, m := range cur.Machines.All() {
		if m.Role == model.RoleEtcd || m.Deleting() {
			continue
		}
		total++
		switch r, known := model.MachineNodeReady(m); {
		case !known:
			unknown++
		case r:
			ready++
		}
	}
	text := fmt.Sprintf("%d, %d ready by their Machines' NodeReady/NodeHealthy conditions", total, ready)
	if unknown > 0 {
		text += fmt.Sprintf(", %d unknown (no such condition)", unknown)
	}
	d.add("nodes", "%s; cluster %s is managed by %s: its Nodes are on its own API server, not this one", text, cur.Cluster.Name, cur.Cluster.ManagementCluster)
}

func machineNodeReadyChanged(p, c *model.Machine) bool {
	pr, pk := model.MachineNodeReady(p)
	cr, ck := model.MachineNodeReady(c)
	return pr != cr || pk != ck
}

// machineNodeText is a machine's node as its Machine reports it.
func machineNodeText(m *model.Machine) string {
	switch r, known := model.MachineNodeReady(m); {
	case m.NodeName == "":
		return "none yet"
	case !known:
		return m.NodeName + " ready=unknown (no NodeReady or NodeHealthy condition)"
	default:
		return fmt.Sprintf("%s ready=%v (its Machine's node condition)", m.NodeName, r)
	}
}

func (d *differ) nodes(prevL, curL model.List[model.Node]) {
	if !d.curListed(model.KindNode) {
		return
	}
	if d.fresh(model.KindNode) {
		ready := 0
		for _, n := range curL.All() {
			if n.Ready {
				ready++
			}
		}
		d.add("nodes", "%d, %d ready", curL.Len(), ready)
		return
	}
	if prevL.Same(curL) { // at fleet scale most snapshots leave a kind untouched
		return
	}
	old := indexPtrs(prevL, func(n *model.Node) string { return n.Name })
	seen := make(map[string]bool, curL.Len())
	for _, c := range curL.All() {
		seen[c.Name] = true
		p := old[c.Name]
		if p == nil {
			d.add("Node "+c.Name, "joined (ready=%v, kubelet %s)", c.Ready, orDash(c.KubeletVersion))
			continue
		}
		if p == c || p.Ready == c.Ready && p.KubeletVersion == c.KubeletVersion && p.Unschedulable == c.Unschedulable {
			continue
		}
		subj := "Node " + c.Name
		if c.Ready != p.Ready {
			d.add(subj, "ready=%v", c.Ready)
		}
		if c.KubeletVersion != p.KubeletVersion {
			d.add(subj, "kubelet %s → %s", orDash(p.KubeletVersion), orDash(c.KubeletVersion))
		}
		if c.Unschedulable != p.Unschedulable {
			if c.Unschedulable {
				d.add(subj, "cordoned")
			} else {
				d.add(subj, "uncordoned")
			}
		}
	}
	for _, p := range prevL.All() {
		if !seen[p.Name] {
			d.add("Node "+p.Name, "removed")
		}
	}
}

func (d *differ) nodeUpgrades(prevL, curL model.List[model.NodeUpgrade], cur *model.ClusterState) {
	// The NodeUpgrades of this cluster are told apart by their Machines:
	// until those are listed too, there is nothing to say of them (other
	// clusters' steps were said, FAILED, then "deleted").
	if !d.curListed(model.KindNodeUpgrade) || !d.curListed(model.KindMachine) {
		return
	}
	if d.fresh(model.KindNodeUpgrade) || d.fresh(model.KindMachine) {
		prevL = model.List[model.NodeUpgrade]{}
	}
	if prevL.Same(curL) { // at fleet scale most snapshots leave a kind untouched
		return
	}
	old := indexPtrs(prevL, func(n *model.NodeUpgrade) string { return n.Name })
	kept := 0                    // of the previous ones, still there
	var nodeOf map[string]string // built once a NodeUpgrade's step fails
	for _, c := range curL.All() {
		subj := "NodeUpgrade " + c.Name
		p := old[c.Name]
		if p != nil {
			kept++
		}
		if p == c {
			continue
		}
		switch {
		case p == nil:
			first := ""
			if c.FirstNodeToBeUpgraded {
				// Its kubeadm step runs `kubeadm upgrade apply`, the
				// others' `kubeadm upgrade node`.
				first = ", the first control-plane node (kubeadm upgrade apply)"
			}
			d.add(subj, "created for machine %s (Kubernetes %s%s)", c.MachineName, orDash(c.KubernetesVersion), first)
			p = &model.NodeUpgrade{}
		case p.UID != "" && c.UID != "" && p.UID != c.UID:
			// Deleted and made again between two snapshots: the
			// steps start over, which read as steps done again.
			d.add(subj, "recreated for machine %s: its steps start over", c.MachineName)
			p = &model.NodeUpgrade{}
		}
		// The kubelet reruns a failed step's container, and the
		// condition reads each back-off, run and exit: three lines a
		// rerun, "FAILED" among lines that read as progress. With the
		// upgrader pod's word that the step is failing, the back-off
		// goes unsaid, and the run and the exit say what they are.
		loopStep, loop := "", (*model.UpgraderContainer)(nil)
		if len(cur.UpgraderPods) > 0 && !c.Completed {
			if nodeOf == nil {
				nodeOf = make(map[string]string, cur.Machines.Len())
				for _, m := range cur.Machines.All() {
					nodeOf[m.Name] = m.NodeName
				}
			}
			node := nodeOf[c.MachineName]
			if node == "" {
				node = c.MachineName
			}
			if f, failed := cur.NodeStepFailure(c, node); failed && f.Container != nil {
				loopStep, loop = f.Step, f.Container
			}
		}
		// Every step False, severity Error, UpgraderPodCreated too: EKS-A
		// cannot read the upgrader pod (a retry deleted it), a wait until
		// its next reconcile makes it again (model.StepFailed). Said once,
		// where each step read "FAILED" after a retry that worked.
		if pc, ok := c.Conditions.Get(model.NodeUpgradeSteps[0]); ok && pc.Status == "False" && pc.Severity == model.SeverityError {
			if was, _ := p.Conditions.Get(model.NodeUpgradeSteps[0]); was.Status != pc.Status || was.Reason != pc.Reason {
				d.add(subj, "waiting for its upgrader pod: %s (a retry deletes it; EKS-A makes it again at its next reconcile)", orDash(pc.Reason))
			}
		}
		for _, step := range model.NodeUpgradeSteps {
			cc, ok := c.Conditions.Get(step)
			if !ok {
				continue
			}
			pc, _ := p.Conditions.Get(step)
			if pc.Status == cc.Status && pc.Reason == cc.Reason {
				continue
			}
			rerun := step == loopStep && loop.RestartCount > 0
			failed := model.StepFailed(c.Conditions, cc)
			switch {
			case cc.IsTrue():
				d.add(subj, "step %s done", step)
			case failed && rerun:
				d.add(subj, "step %s FAILED again: %s (%s)", step, orDash(cc.Reason), model.Restarts(loop.RestartCount))
			case failed:
				d.add(subj, "step %s FAILED: %s", step, orDash(cc.Reason))
			case cc.Severity == model.SeverityError:
				// The upgrader pod's wait, said above.
			case step == loopStep && cc.Reason == waitingReason:
				// The kubelet backs off before the next run.
			case rerun && loop.State.Running:
				d.add(subj, "step %s: running again after its failure (%s)", step, model.Restarts(loop.RestartCount))
			case pc.Status != "" || cc.Reason != waitingReason:
				d.add(subj, "step %s: %s", step, orDash(cc.Reason))
			}
		}
		if c.Completed && !p.Completed {
			d.add(subj, "completed")
		}
	}
	if kept == prevL.Len() {
		return
	}
	// EKS-A deletes a group's NodeUpgrades with its upgrade object, the
	// last node's before its last steps were seen: without a line the log
	// ended on "Container is still running".
	now := indexPtrs(curL, func(n *model.NodeUpgrade) string { return n.Name })
	for _, p := range prevL.All() {
		if now[p.Name] != nil {
			continue
		}
		if p.Completed {
			d.add("NodeUpgrade "+p.Name, "deleted (completed)")
		} else {
			d.add("NodeUpgrade "+p.Name, "deleted before it was seen completed")
		}
	}
}

// waitingReason is a NodeUpgrade step's reason while its container has not
// started: not yet reached, or backed off after a failure.
const waitingReason = "Container is waiting to be initialized"

// upgraderPods says a container of an in-place upgrader pod that failed
// (exited non-zero, or backs off: CrashLoopBackOff, ImagePullBackOff), with
// the command that reads its log: the NodeUpgrade's step line says which
// step failed, not why. Said when the container turns failing, not again
// while it stays so (a crash loop alternates exit and back-off); a
// recreated pod (the retry) is a new one.
func (d *differ) upgraderPods(prev, cur []model.UpgraderPod) {
	if !d.curListed(model.KindUpgraderPod) || len(cur) == 0 {
		return
	}
	if d.fresh(model.KindUpgraderPod) {
		prev = nil
	}
	old := index(prev, func(p *model.UpgraderPod) string { return p.Name })
	for i := range cur {
		c := &cur[i]
		p := old[c.Name]
		if p != nil && p.UID != c.UID {
			p = nil
		}
		for j := range c.Containers {
			cc := &c.Containers[j]
			if !cc.Failing() || (p != nil && containerFailing(p, cc.Name)) {
				continue
			}
			text := cc.State.String()
			if cc.State.Waiting && cc.Last != nil {
				text += "; last " + cc.Last.String()
			}
			if cc.RestartCount > 0 {
				text += "; " + model.Restarts(cc.RestartCount)
			}
			d.add("Pod "+c.Name, "container %s FAILED (%s); logs: %s", cc.Name, text, c.LogsCommand(cc.Name, d.conn))
		}
	}
}

// containerFailing reports whether the container was failing in p: failed,
// or run again by the kubelet after a failure (StepFailing), whose next
// exit is the same failure, not one to say again on every rerun.
func containerFailing(p *model.UpgraderPod, name string) bool {
	for i := range p.Containers {
		if c := &p.Containers[i]; c.Name == name {
			return c.Failing() || c.StepFailing()
		}
	}
	return false
}

// wholeRequests are the upgrade requests of the kinds listed in full.
func wholeRequests(rs []model.UpgradeRequest, listed func(model.Kind) bool) []model.UpgradeRequest {
	var out []model.UpgradeRequest
	for _, r := range rs {
		// A MachineDeploymentUpgrade is told this cluster's by its
		// MachineDeployment, listed whole too.
		if listed(r.Kind) && (r.Kind != model.KindMachineDeploymentUpgrade || listed(model.KindMachineDeployment)) {
			out = append(out, r)
		}
	}
	return out
}

func (d *differ) upgradeRequests(prev, cur []model.UpgradeRequest) {
	old := index(prev, func(u *model.UpgradeRequest) string { return string(u.Kind) + "/" + u.Name })
	for i := range cur {
		c := &cur[i]
		p := old[string(c.Kind)+"/"+c.Name]
		subj := string(c.Kind) + " " + c.Name
		if p == nil {
			d.add(subj, "created: %d machines to upgrade to %s", len(c.Machines), orDash(c.KubernetesVersion))
			p = &model.UpgradeRequest{}
		}
		if c.Upgraded != p.Upgraded || c.RequireUpgrade != p.RequireUpgrade || c.Ready != p.Ready {
			d.add(subj, "%d upgraded, %d to go, ready=%v", c.Upgraded, c.RequireUpgrade, c.Ready)
		}
	}
	now := index(cur, func(u *model.UpgradeRequest) string { return string(u.Kind) + "/" + u.Name })
	for i := range prev {
		if p := &prev[i]; d.curListed(p.Kind) && now[string(p.Kind)+"/"+p.Name] == nil {
			d.add(string(p.Kind)+" "+p.Name, "deleted (when last seen: %d upgraded, %d to go)", p.Upgraded, p.RequireUpgrade)
		}
	}
}

// events prints new Warning events only: normal events repeat what the
// object lines already say.
func (d *differ) events(prev, cur []model.Event) {
	if d.first || !d.prevListed(model.KindEvent) || !d.curListed(model.KindEvent) {
		return // history, not change
	}
	var newest time.Time
	seen := make(map[string]int32, len(prev))
	for i := range prev {
		seen[eventKey(&prev[i])] = prev[i].Count
		if t := eventTime(&prev[i]); t.After(newest) {
			newest = t
		}
	}
	for i := len(cur) - 1; i >= 0; i-- { // oldest first
		e := &cur[i]
		if e.Type != "Warning" {
			continue
		}
		count, known := seen[eventKey(e)]
		if known && count == e.Count {
			continue
		}
		if !known && len(prev) > 0 && !eventTime(e).After(newest) {
			continue
		}
		text := e.Reason + ": " + model.FoldLines(e.Message)
		if e.Count > 1 {
			text += " (×" + strconv.Itoa(int(e.Count)) + ")"
		}
		d.add("warning "+e.ObjectKind+" "+e.ObjectName, "%s", text)
	}
}

func eventKey(e *model.Event) string {
	return e.ObjectKind + "/" + e.ObjectName + "/" + e.Reason + "/" + e.Message
}

func eventTime(e *model.Event) time.Time {
	if !e.LastTimestamp.IsZero() {
		return e.LastTimestamp
	}
	return e.FirstTimestamp
}

// summariseMachines is the first snapshot's machine line per role, with the
// phases that are not Running spelled out.
func (d *differ) summariseMachines(cur model.List[model.Machine]) {
	for _, role := range []model.MachineRole{model.RoleEtcd, model.RoleControlPlane, model.RoleWorker} {
		n := 0
		phases := map[string]int{}
		var order []string
		for _, m := range cur.All() {
			if m.Role != role {
				continue
			}
			n++
			// A Machine CAPI has not given a phase yet reads "no phase":
			// "14 -" read as a typo.
			ph := m.Phase
			if ph == "" {
				ph = "no phase yet"
			}
			if phases[ph] == 0 {
				order = append(order, ph)
			}
			phases[ph]++
		}
		if n == 0 {
			continue
		}
		parts := make([]string, 0, len(order))
		for _, ph := range order {
			parts = append(parts, strconv.Itoa(phases[ph])+" "+ph)
		}
		d.add(string(role)+" machines", "%d (%s)", n, strings.Join(parts, ", "))
	}
}

// negativePolarity lists CAPI v1beta2 conditions that are True while
// something is happening (RollingOut, ScalingUp…): for them True is not
// "healthy".
var negativePolarity = map[string]bool{
	"RollingOut": true, "ScalingUp": true, "ScalingDown": true, "Remediating": true,
	"Deleting": true, "Paused": true, "Updating": true,
}

// Healthy reports whether a condition needs no attention, minding the
// conditions whose True means "in progress".
func Healthy(c model.Condition) bool {
	if negativePolarity[c.Type] {
		return c.Status == "False"
	}
	return c.Status == "True"
}

// NegativePolarity reports whether True on this condition type means
// something is in progress.
func NegativePolarity(conditionType string) bool { return negativePolarity[conditionType] }
