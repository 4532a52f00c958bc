package tui

import (
	"fmt"
	"time"

	"github.com/upgrade-console/upgrade-console/model"
)

// Hand-made snapshots the tests and benchmarks render. They follow the
// shapes EKS-A, CAPI and etcdadm really produce (condition reasons and
// messages from eks-anywhere's status.go, etcdadm's condition_consts.go).

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) time.Time { return t0.Add(-d) }

func i32(v int32) *int32 { return &v }

func allSynced(stackedEtcd bool) map[model.Kind]model.SourceStatus {
	m := map[model.Kind]model.SourceStatus{}
	for _, k := range []model.Kind{model.KindEKSACluster, model.KindCAPICluster, model.KindKubeadmControlPlane,
		model.KindEtcdadmCluster, model.KindMachineDeployment, model.KindMachine, model.KindNode,
		model.KindNodeUpgrade, model.KindControlPlaneUpgrade, model.KindMachineDeploymentUpgrade, model.KindEvent} {
		m[k] = model.SourceStatus{Installed: true, Synced: true, Version: "v1beta2"}
	}
	if stackedEtcd {
		m[model.KindEtcdadmCluster] = model.SourceStatus{}
	}
	return m
}

func cond(t, status string, sev model.ConditionSeverity, reason, msg string, at time.Time) model.Condition {
	return model.Condition{Type: t, Status: status, Severity: sev, Reason: reason, Message: msg, LastTransitionTime: at}
}

func meta(name string, created time.Time) model.Meta {
	return model.Meta{Name: name, Namespace: model.SystemNamespace, CreationTimestamp: created, Generation: 1, Annotations: map[string]string{}, Labels: map[string]string{}}
}

const (
	oldK8s = "v1.30.14-eks-1-30-40"
	newK8s = "v1.31.14-eks-1-31-47"
)

func eksaCluster(gen, observed int64, etcdCount int, conds ...model.Condition) *model.EKSACluster {
	c := &model.EKSACluster{
		Meta:              model.Meta{Name: "mgmt", Namespace: "default", Generation: gen, CreationTimestamp: ago(40 * 24 * time.Hour), Annotations: map[string]string{model.AnnotationManagementComponentsVersion: "v0.20.4"}},
		KubernetesVersion: "1.31", EksaVersion: "v0.21.1",
		ControlPlaneCount: 3, ExternalEtcdCount: etcdCount,
		WorkerGroups:       []model.WorkerGroup{{Name: "md-0", Count: 12}},
		CiliumManaged:      true,
		ObservedGeneration: observed,
		Conditions:         conds,
	}
	return c
}

func workers(n int, md, version string, created time.Time) ([]*model.Machine, []*model.Node) {
	ms := make([]*model.Machine, n)
	ns := make([]*model.Node, n)
	for i := range n {
		name := fmt.Sprintf("mgmt-%s-%05d", md, i)
		ms[i] = &model.Machine{Meta: meta(name, created), Role: model.RoleWorker, Owner: "mgmt-" + md, Owned: true,
			Version: version, NodeName: name, Phase: "Running"}
		ns[i] = &model.Node{Meta: meta(name, created), Ready: true, ReadySince: created.Add(3 * time.Minute), KubeletVersion: version}
	}
	return ms, ns
}

func cpMachines(version string, created time.Time, names ...string) ([]*model.Machine, []*model.Node) {
	var ms []*model.Machine
	var ns []*model.Node
	for _, n := range names {
		ms = append(ms, &model.Machine{Meta: meta(n, created), Role: model.RoleControlPlane, Owner: "mgmt", Owned: true,
			Version: version, NodeName: n, Phase: "Running"})
		ns = append(ns, &model.Node{Meta: meta(n, created), Ready: true, ReadySince: created.Add(2 * time.Minute), KubeletVersion: version})
	}
	return ms, ns
}

func kcp(version string, desired, upToDate, ready int32, paused bool, conds ...model.Condition) *model.ControlPlane {
	c := &model.ControlPlane{Meta: meta("mgmt", ago(40*24*time.Hour)), Version: version, RolloutStrategy: "RollingUpdate",
		Replicas:      model.ReplicaCounts{Desired: i32(desired), Current: i32(desired), Ready: i32(ready), Available: i32(ready), UpToDate: i32(upToDate)},
		StatusVersion: oldK8s, Versions: []model.VersionCount{{Version: oldK8s, Replicas: desired}},
		Initialized: true, ObservedGeneration: 1, Conditions: conds}
	if paused {
		c.Annotations[model.AnnotationCAPIPaused] = "true"
		// As CAPI does: a paused object's Paused condition is True.
		for i := range c.Conditions {
			if c.Conditions[i].Type == "Paused" {
				c.Conditions[i].Status, c.Conditions[i].Reason = "True", "Paused"
			}
		}
	}
	return c
}

func healthyKCPConds(at time.Time) model.Conditions {
	return model.Conditions{
		cond("Available", "True", "", "Available", "", at),
		cond("Initialized", "True", "", "Initialized", "", at),
		cond("MachinesReady", "True", "", "Ready", "", at),
		cond("MachinesUpToDate", "True", "", "UpToDate", "", at),
		cond("RollingOut", "False", "", "NotRollingOut", "", at),
		cond("ScalingUp", "False", "", "NotScalingUp", "", at),
		cond("Paused", "False", "", "NotPaused", "", at),
	}
}

func md(name, version string, n int32) model.MachineDeployment {
	return model.MachineDeployment{Meta: meta(name, ago(40*24*time.Hour)), Version: version, RolloutStrategy: "RollingUpdate",
		Replicas: model.ReplicaCounts{Desired: i32(n), Current: i32(n), Ready: i32(n), Available: i32(n), UpToDate: i32(n)},
		Phase:    "Running", ObservedGeneration: 1}
}

func etcdMachine(name string, created time.Time, ready, owned bool, phase string) *model.Machine {
	m := &model.Machine{Meta: meta(name, created), Role: model.RoleEtcd, Owner: "mgmt-etcd", Owned: owned, Phase: phase, EtcdReady: ready}
	return m
}

// fixtureHealthy is a cluster at rest after a finished upgrade.
func fixtureHealthy() *model.ClusterState {
	at := ago(2 * time.Hour)
	s := &model.ClusterState{Version: 10, At: t0, ClusterName: "mgmt", Namespace: "default", Context: "admin@mgmt",
		Connection: model.Live, ConnectionSince: ago(time.Hour), Sources: allSynced(false)}
	s.Cluster = eksaCluster(7, 7, 3,
		cond("ControlPlaneInitialized", "True", "", "", "", ago(40*24*time.Hour)),
		cond("ControlPlaneReady", "True", "", "", "", at),
		cond("DefaultCNIConfigured", "True", "", "", "", at),
		cond("WorkersReady", "True", "", "", "", at),
		cond("Ready", "True", "", "", "", at))
	s.Cluster.Annotations[model.AnnotationManagementComponentsVersion] = "v0.21.1"
	s.ControlPlane = kcp(newK8s, 3, 3, 3, false, healthyKCPConds(at)...)
	s.ControlPlane.StatusVersion = newK8s
	s.ControlPlane.Versions = []model.VersionCount{{Version: newK8s, Replicas: 3}}
	s.Etcd = &model.EtcdCluster{Meta: meta("mgmt-etcd", ago(40*24*time.Hour)), Replicas: 3, EtcdVersion: "v3.5.24", ReadyReplicas: 3,
		Ready: true, Initialized: true, CreationComplete: true, ObservedGeneration: 1,
		Conditions: model.Conditions{
			cond("Ready", "True", "", "", "", at),
			cond("EtcdMachinesSpecUpToDate", "True", "", "", "", at),
			cond("EtcdEndpointsAvailable", "True", "", "", "", at),
		}}
	s.MachineDeployments = []model.MachineDeployment{md("mgmt-md-0", newK8s, 12)}
	etcd := []*model.Machine{
		etcdMachine("mgmt-etcd-4xk2q", ago(3*time.Hour), true, true, "Running"),
		etcdMachine("mgmt-etcd-9pq7w", ago(3*time.Hour), true, true, "Running"),
		etcdMachine("mgmt-etcd-h2v8d", ago(3*time.Hour), true, true, "Running"),
	}
	cps, cpn := cpMachines(newK8s, ago(150*time.Minute), "mgmt-cp-7f9x2", "mgmt-cp-b8k4m", "mgmt-cp-q2w6z")
	ws, wn := workers(12, "md-0", newK8s, ago(140*time.Minute))
	s.Machines = model.ListOf(append(append(etcd, cps...), ws...)...)
	s.Nodes = model.ListOf(append(cpn, wn...)...)
	s.Events = []model.Event{
		{Type: "Normal", Reason: "SuccessfulUpgrade", Message: "upgrade complete", ObjectKind: "Cluster", ObjectName: "mgmt", Count: 1, LastTimestamp: at},
		{Type: "Normal", Reason: "MachineReady", Message: "Machine mgmt-md-0-00011 is ready", ObjectKind: "Machine", ObjectName: "mgmt-md-0-00011", Count: 1, LastTimestamp: at.Add(-time.Minute)},
	}
	return s
}

// fixtureMidEtcd is a rolling upgrade in its etcd phase: one new member is
// provisioning, the control plane is paused for the etcd rollout.
func fixtureMidEtcd() *model.ClusterState {
	start := ago(6*time.Minute + 52*time.Second)
	s := &model.ClusterState{Version: 42, At: t0, ClusterName: "mgmt", Namespace: "default", Context: "admin@mgmt",
		Connection: model.Live, ConnectionSince: ago(time.Hour), Sources: allSynced(false)}
	s.Cluster = eksaCluster(7, 7, 3,
		cond("ControlPlaneInitialized", "True", "", "", "", ago(40*24*time.Hour)),
		cond("ControlPlaneReady", "False", model.SeverityInfo, "RollingUpgradeInProgress", "Etcd is not ready", ago(6*time.Minute)),
		cond("DefaultCNIConfigured", "True", "", "", "", ago(40*24*time.Hour)),
		cond("WorkersReady", "True", "", "", "", ago(40*24*time.Hour)),
		cond("Ready", "False", model.SeverityInfo, "RollingUpgradeInProgress", "Etcd is not ready", ago(6*time.Minute)))
	s.Cluster.Annotations[model.AnnotationManagementComponentsVersion] = "v0.21.1"
	s.ControlPlane = kcp(oldK8s, 3, 3, 3, true, healthyKCPConds(ago(40*24*time.Hour))...)
	s.ControlPlane.Annotations[model.AnnotationSkipPauseCPManagedEtcd] = "true"
	s.Etcd = &model.EtcdCluster{Meta: meta("mgmt-etcd", ago(40*24*time.Hour)), Replicas: 3, EtcdVersion: "v3.5.24", ReadyReplicas: 2,
		Initialized: true, CreationComplete: true, ObservedGeneration: 2,
		Conditions: model.Conditions{
			cond("EtcdMachinesSpecUpToDate", "False", model.SeverityWarning, "EtcdRollingUpdateInProgress", "Rolling 2 replicas with outdated spec (1 replicas up to date)", ago(6*time.Minute)),
			cond("EtcdEndpointsAvailable", "True", "", "", "", ago(40*24*time.Hour)),
			cond("EtcdCertificatesAvailable", "True", "", "", "", ago(40*24*time.Hour)),
		}}
	s.Etcd.Generation = 2
	s.Etcd.Annotations[model.AnnotationEtcdUpgrading] = "true"
	s.MachineDeployments = []model.MachineDeployment{md("mgmt-md-0", oldK8s, 12)}
	etcd := []*model.Machine{
		etcdMachine("mgmt-etcd-4xk2q", ago(40*24*time.Hour), true, true, "Running"),
		etcdMachine("mgmt-etcd-9pq7w", ago(40*24*time.Hour), true, true, "Running"),
		etcdMachine("mgmt-etcd-h2v8d", ago(4*time.Minute), false, true, "Provisioning"),
	}
	cps, cpn := cpMachines(oldK8s, ago(40*24*time.Hour), "mgmt-cp-7f9x2", "mgmt-cp-b8k4m", "mgmt-cp-q2w6z")
	ws, wn := workers(12, "md-0", oldK8s, ago(40*24*time.Hour))
	s.Machines = model.ListOf(append(append(etcd, cps...), ws...)...)
	s.Nodes = model.ListOf(append(cpn, wn...)...)
	s.Events = []model.Event{
		{Type: "Normal", Reason: "SuccessfulCreate", Message: "Created machine mgmt-etcd-h2v8d (new etcd member 1 of 3)", ObjectKind: "EtcdadmCluster", ObjectName: "mgmt-etcd", Count: 1, LastTimestamp: ago(4 * time.Minute)},
		{Type: "Warning", Reason: "EtcdHealthCheckFailed", Message: "etcd endpoint https://10.0.0.14:2379 not healthy yet", ObjectKind: "EtcdadmCluster", ObjectName: "mgmt-etcd", Count: 7, LastTimestamp: ago(30 * time.Second)},
		{Type: "Normal", Reason: "Updated", Message: "Cluster spec applied by upgrade-console (generation 6 → 7)", ObjectKind: "Cluster", ObjectName: "mgmt", Count: 1, LastTimestamp: start},
	}
	// Newest first, as the snapshot promises.
	s.Events[0], s.Events[1] = s.Events[1], s.Events[0]
	return s
}

// fixtureInPlaceFailed is an in-place control plane upgrade (stacked etcd)
// whose second node failed its kubeadm step.
func fixtureInPlaceFailed() *model.ClusterState {
	s := &model.ClusterState{Version: 77, At: t0, ClusterName: "mgmt", Namespace: "default", Context: "admin@mgmt",
		Connection: model.Live, ConnectionSince: ago(time.Hour), Sources: allSynced(true)}
	s.Cluster = eksaCluster(9, 9, 0,
		cond("ControlPlaneInitialized", "True", "", "", "", ago(40*24*time.Hour)),
		cond("ControlPlaneReady", "False", model.SeverityInfo, "InPlaceUpgradeInProgress", "Control plane nodes not up-to-date yet, 3 upgrading (1 up to date)", ago(12*time.Minute)),
		cond("DefaultCNIConfigured", "True", "", "", "", ago(40*24*time.Hour)),
		cond("WorkersReady", "True", "", "", "", ago(40*24*time.Hour)),
		cond("Ready", "False", model.SeverityInfo, "InPlaceUpgradeInProgress", "Control plane nodes not up-to-date yet, 3 upgrading (1 up to date)", ago(12*time.Minute)))
	s.Cluster.ControlPlaneRolloutStrategy = "InPlace"
	s.Cluster.Annotations[model.AnnotationManagementComponentsVersion] = "v0.21.1"
	s.ControlPlane = kcp(newK8s, 3, 1, 3, false,
		cond("Available", "True", "", "Available", "", ago(40*24*time.Hour)),
		cond("MachinesUpToDate", "False", "", "NotUpToDate", "* Machine mgmt-cp-b8k4m: Version v1.30.14-eks-1-30-40, v1.31.14-eks-1-31-47 required\n* Machine mgmt-cp-q2w6z: Version v1.30.14-eks-1-30-40, v1.31.14-eks-1-31-47 required", ago(12*time.Minute)),
		cond("RollingOut", "True", "", "RollingOut", "Rolling out 2 not up-to-date replicas", ago(12*time.Minute)))
	s.ControlPlane.RolloutStrategy = "InPlace"
	s.ControlPlane.Annotations[model.AnnotationKCPInPlaceUpgradeNeeded] = "true"
	s.ControlPlane.Versions = []model.VersionCount{{Version: oldK8s, Replicas: 2}, {Version: newK8s, Replicas: 1}}
	s.MachineDeployments = []model.MachineDeployment{md("mgmt-md-0", oldK8s, 12)}
	cps, cpn := cpMachines(oldK8s, ago(40*24*time.Hour), "mgmt-cp-7f9x2", "mgmt-cp-b8k4m", "mgmt-cp-q2w6z")
	cps[0].Version, cpn[0].KubeletVersion = newK8s, newK8s
	ws, wn := workers(12, "md-0", oldK8s, ago(40*24*time.Hour))
	s.Machines = model.ListOf(append(cps, ws...)...)
	s.Nodes = model.ListOf(append(cpn, wn...)...)
	steps := func(upTo int, failAt string, at time.Time) model.Conditions {
		var cs model.Conditions
		for i, st := range model.NodeUpgradeSteps {
			switch {
			case i < upTo:
				cs = append(cs, cond(st, "True", "", "", "", at.Add(time.Duration(i)*20*time.Second)))
			case st == failAt:
				cs = append(cs, cond(st, "False", model.SeverityError, "Container exited with a non-zero exit code, reason: Error", "", at.Add(time.Duration(i)*20*time.Second)))
			default:
				cs = append(cs, cond(st, "False", model.SeverityInfo, "Container is waiting to be initialized", "", at))
			}
		}
		return cs
	}
	s.NodeUpgrades = model.ListOf(
		&model.NodeUpgrade{Meta: meta("mgmt-cp-7f9x2-node-upgrader", ago(12*time.Minute)), Kind: model.KindNodeUpgrade, MachineName: "mgmt-cp-7f9x2",
			KubernetesVersion: newK8s, FirstNodeToBeUpgraded: true, Completed: true, Conditions: steps(7, "", ago(12*time.Minute))},
		&model.NodeUpgrade{Meta: meta("mgmt-cp-b8k4m-node-upgrader", ago(6*time.Minute)), Kind: model.KindNodeUpgrade, MachineName: "mgmt-cp-b8k4m",
			KubernetesVersion: newK8s, Conditions: steps(4, "KubeadmUpgraded", ago(6*time.Minute))},
	)
	s.UpgradeRequests = []model.UpgradeRequest{{Meta: meta("mgmt-cp-upgrade", ago(12*time.Minute)), Kind: model.KindControlPlaneUpgrade,
		Target: "mgmt", Machines: []string{"mgmt-cp-7f9x2", "mgmt-cp-b8k4m", "mgmt-cp-q2w6z"}, KubernetesVersion: newK8s, RequireUpgrade: 2, Upgraded: 1}}
	s.Events = []model.Event{
		{Type: "Warning", Reason: "BackOff", Message: "Back-off restarting failed container kubeadm-upgrader in pod mgmt-cp-b8k4m-node-upgrader", ObjectKind: "Pod", ObjectName: "mgmt-cp-b8k4m-node-upgrader", Count: 4, LastTimestamp: ago(20 * time.Second)},
		{Type: "Normal", Reason: "Created", Message: "Created NodeUpgrade mgmt-cp-b8k4m-node-upgrader", ObjectKind: "ControlPlaneUpgrade", ObjectName: "mgmt-cp-upgrade", Count: 1, LastTimestamp: ago(6 * time.Minute)},
	}
	return s
}

// fixtureLarge is a fleet-size cluster: 3 control plane nodes and n workers
// in ten groups, a tenth of them mid rolling upgrade.
func fixtureLarge(n int) *model.ClusterState {
	s := fixtureMidEtcd()
	s.Version = 1000 + uint64(n)
	groups := 10
	var ms []*model.Machine
	var ns []*model.Node
	for _, m := range s.Machines.All() {
		if m.Role != model.RoleWorker {
			ms = append(ms, m)
		}
	}
	for _, nd := range s.Nodes.All() {
		if len(ns) < 3 {
			ns = append(ns, nd)
		}
	}
	s.MachineDeployments = nil
	per := n / groups
	for g := range groups {
		name := fmt.Sprintf("md-%d", g)
		s.MachineDeployments = append(s.MachineDeployments, md("mgmt-"+name, newK8s, int32(per)))
		wm, wn := workers(per, name, newK8s, ago(time.Duration(g+1)*time.Hour))
		for i := range wm {
			if i%10 == 0 {
				wm[i].Version = oldK8s
				wn[i].KubeletVersion = oldK8s
			}
			if i%37 == 0 {
				wm[i].Phase = "Provisioning"
				wn[i].Ready = false
			}
		}
		ms = append(ms, wm...)
		ns = append(ns, wn...)
	}
	s.Machines = model.ListOf(ms...)
	s.Nodes = model.ListOf(ns...)
	return s
}

// withChanged returns l with its k-th object replaced by a changed copy and
// every other object shared, as the watchers publish one object's update.
func withChanged[T any](l model.List[T], k int, change func(*T)) model.List[T] {
	v := *l.At(k)
	change(&v)
	return l.With(map[int]*T{k: &v})
}

// fixtureHeld is fixtureMidEtcd with EKS-A reconcile paused by someone
// else (no rollback record): the etcd phase is held.
func fixtureHeld() *model.ClusterState {
	s := fixtureMidEtcd()
	s.Cluster.Annotations[model.AnnotationEKSAPaused] = "true"
	return s
}

// fixturePausedAfterRollback is fixtureMidEtcd after upgrade-console's etcd
// rollback: the new member is gone, etcd is ready again on the previous
// spec, the control plane is no longer paused for the rollout, and EKS-A
// reconcile stays paused with the rollback's record (as upgrade/recovery
// leaves it). EKS-A, paused, has not rewritten its conditions since.
func fixturePausedAfterRollback() *model.ClusterState {
	s := fixtureMidEtcd()
	s.Version = 43
	s.Cluster.Annotations[model.AnnotationEKSAPaused] = "true"
	s.Cluster.Annotations[model.AnnotationEtcdRollbackRecord] = `{"phase":"done","newMachine":"mgmt-etcd-x","by":"ops@bastion"}`
	delete(s.ControlPlane.Annotations, model.AnnotationCAPIPaused)
	delete(s.ControlPlane.Annotations, model.AnnotationSkipPauseCPManagedEtcd)
	rolledBack := ago(2 * time.Minute)
	s.Etcd.Generation, s.Etcd.ObservedGeneration = 3, 3
	s.Etcd.ReadyReplicas, s.Etcd.Ready = 3, true
	delete(s.Etcd.Annotations, model.AnnotationEtcdUpgrading)
	s.Etcd.Conditions = model.Conditions{
		cond("Ready", "True", "", "", "", rolledBack),
		cond("EtcdMachinesSpecUpToDate", "True", "", "", "", rolledBack),
		cond("EtcdEndpointsAvailable", "True", "", "", "", ago(40*24*time.Hour)),
		cond("EtcdCertificatesAvailable", "True", "", "", "", ago(40*24*time.Hour)),
	}
	var ms []*model.Machine
	for _, m := range s.Machines.All() {
		if m.Role != model.RoleEtcd {
			ms = append(ms, m)
		}
	}
	etcd := []*model.Machine{
		etcdMachine("mgmt-etcd-4xk2q", ago(40*24*time.Hour), true, true, "Running"),
		etcdMachine("mgmt-etcd-9pq7w", ago(40*24*time.Hour), true, true, "Running"),
		etcdMachine("mgmt-etcd-p4x44", ago(40*24*time.Hour), true, true, "Running"),
	}
	s.Machines = model.ListOf(append(etcd, ms...)...)
	s.Events = []model.Event{
		{Type: "Normal", Reason: "SuccessfulDelete", Message: "Deleted machine mgmt-etcd-x", ObjectKind: "EtcdadmCluster", ObjectName: "mgmt-etcd", Count: 1, LastTimestamp: ago(3 * time.Minute)},
		{Type: "Warning", Reason: "EtcdHealthCheckFailed", Message: "etcd endpoint https://10.0.0.14:2379 not healthy yet", ObjectKind: "EtcdadmCluster", ObjectName: "mgmt-etcd", Count: 31, LastTimestamp: ago(4 * time.Minute)},
		{Type: "Normal", Reason: "Updated", Message: "Cluster spec applied by upgrade-console (generation 6 → 7)", ObjectKind: "Cluster", ObjectName: "mgmt", Count: 1, LastTimestamp: ago(6*time.Minute + 52*time.Second)},
	}
	return s
}
