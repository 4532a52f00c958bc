package sim

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/demo/kinds"
	"github.com/upgrade-console/upgrade-console/demo/objects"
	"github.com/upgrade-console/upgrade-console/model"
)

// reconcileKCP is the (EKS-A-forked) KubeadmControlPlane controller: it waits
// while paused or while external etcd is being upgraded, then replaces
// outdated control-plane machines one at a time (maxSurge 1): create a new
// machine, wait until it runs, delete the oldest outdated one. With the
// InPlace strategy it only marks the control plane as needing an in-place
// upgrade, which EKS-A carries out (see inplace.go).
func (s *Simulator) reconcileKCP(ctx context.Context, k string) (time.Duration, error) {
	ns, name := splitKey(k)
	kcp := s.get(kinds.KCP, ns, name)
	if kcp == nil {
		return 0, nil
	}
	owner := compKCP + "/" + k
	now := s.clock.Now()
	version := str(kcp, "spec", "version")
	replicas := num(kcp, "spec", "replicas")
	paused := annotation(kcp, model.AnnotationCAPIPaused) == "true"
	tmpl := str(kcp, "spec", "machineTemplate", "spec", "infrastructureRef", "name")
	notUpToDate := func(m *unstructured.Unstructured) string { return s.notUpToDate(m, version, tmpl) }

	var live, outdated, current []*unstructured.Unstructured
	for _, m := range byAge(s.list(kinds.Machine, ns, map[string]string{model.LabelControlPlaneName: name})) {
		if deleting(m) {
			if !paused {
				if left, _, err := s.retire(ctx, owner, compKCP, m); err != nil || left > 0 {
					if err == nil {
						s.requeue(s.l.kcp, k, left)
					}
					return 0, err
				}
				s.emit(compKCP, kcp, false, "SuccessfulDelete", "Deleted control plane machine %s", m.GetName())
				return 0, nil
			}
			continue
		}
		live = append(live, m)
		if notUpToDate(m) != "" {
			outdated = append(outdated, m)
		} else {
			current = append(current, m)
		}
	}
	var ec *unstructured.Unstructured
	if s.sc.ExternalEtcd() {
		ec = s.get(kinds.EtcdadmCluster, ns, s.sc.ClusterName+"-etcd")
	}
	etcdUpgrading := ec != nil && annotation(ec, model.AnnotationEtcdUpgrading) == "true"

	st := objects.KCPState{
		Replicas: int64(len(live)), UpToDate: int64(len(current)), Generation: kcp.GetGeneration(),
		Versions: versionCounts(live), Cluster: s.sc.ClusterName, Paused: paused, EtcdUpgrading: etcdUpgrading && !paused,
	}
	for _, m := range live {
		if running(m) {
			st.Ready++
		}
	}
	st.Available = st.Ready
	if len(outdated) > 0 {
		st.RollingOut = true
		st.RollingMessage = fmt.Sprintf("Rolling out %d not up-to-date replicas\n%s", len(outdated), notUpToDate(outdated[0]))
	}

	if paused {
		// A paused controller only reports that it is paused.
		old := statusMap(kcp)
		ps := objects.KCPStatus(old, st, now)
		if old != nil {
			ps = copyStatus(old)
			conds, _ := old["conditions"].([]any)
			ps["conditions"] = objects.SetCondition(conds, objects.V1beta2("Paused", true, "Paused", "", kcp.GetGeneration(), now))
		}
		return 0, s.setStatus(ctx, owner, compKCP, kinds.KCP, kcp, ps)
	}
	if err := s.markOutdated(ctx, owner, compKCP, outdated, notUpToDate); err != nil {
		return 0, err
	}

	switch {
	case etcdUpgrading:
		// The fork waits for etcdadm to finish (facts §6.5 step 4).
	case s.sc.InPlace():
		if err := s.kcpInPlace(ctx, owner, kcp, outdated); err != nil {
			return 0, err
		}
	case len(outdated) > 0:
		if int64(len(live)) <= replicas {
			m := objects.Machine(objects.MachineSpec{
				Name: s.cfg.Names.Generate(name), Namespace: ns, Cluster: s.sc.ClusterName, Role: model.RoleControlPlane,
				Owner: objects.OwnerOf(kcp), Version: version, ControlPlaneName: name, InfraTemplate: tmpl,
			})
			if _, err := s.create(ctx, owner, compKCP, kinds.Machine, m); err != nil {
				return 0, err
			}
			st.ScalingUp = true
			s.emit(compKCP, kcp, false, "SuccessfulCreate", "Created control plane machine %s (%s), replacing %s", m.GetName(), version, outdated[0].GetName())
			break
		}
		if len(current) == 0 || !allOf(current, running) {
			st.ScalingUp = true
			break
		}
		if _, _, err := s.retire(ctx, owner, compKCP, outdated[0]); err != nil {
			return 0, err
		}
	default:
		if err := s.signalEtcdUpgradeComplete(ctx, owner, ec, live, replicas); err != nil {
			return 0, err
		}
	}
	return 0, s.setStatus(ctx, owner, compKCP, kinds.KCP, kcp, objects.KCPStatus(statusMap(kcp), st, now))
}

// signalEtcdUpgradeComplete is the fork's upgrade-complete annotation on the
// EtcdadmCluster once the control plane runs on the new etcd members: it lets
// etcdadm delete the old members it disowned.
func (s *Simulator) signalEtcdUpgradeComplete(ctx context.Context, owner string, ec *unstructured.Unstructured, live []*unstructured.Unstructured, replicas int64) error {
	if ec == nil || annotation(ec, model.AnnotationEtcdUpgradeComplete) == "true" || int64(len(live)) != replicas {
		return nil
	}
	for _, m := range live {
		if !running(m) {
			return nil
		}
	}
	disowned := 0
	for _, m := range s.list(kinds.Machine, ec.GetNamespace(), map[string]string{model.LabelEtcdCluster: ec.GetName()}) {
		if !ownedBy(m, ec) {
			disowned++
		}
	}
	if disowned == 0 {
		return nil
	}
	if _, err := s.patch(ctx, owner, compKCP, kinds.EtcdadmCluster, ec.GetNamespace(), ec.GetName(), map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{model.AnnotationEtcdUpgradeComplete: "true"}},
	}); err != nil {
		return err
	}
	s.emit(compKCP, ec, false, "UpgradeComplete", "Control plane upgrade complete: %d outdated etcd members can be removed", disowned)
	return nil
}

// markOutdated sets UpToDate=False on machines a rollout will replace, as
// CAPI's machine controller reports them; message says why.
func (s *Simulator) markOutdated(ctx context.Context, owner, comp string, outdated []*unstructured.Unstructured, message func(*unstructured.Unstructured) string) error {
	for _, m := range outdated {
		msg := message(m)
		if c, ok := objects.Condition(m.Object, "UpToDate"); ok && c["status"] == "False" && c["message"] == msg {
			continue
		}
		st := copyStatus(statusMap(m))
		conds, _ := st["conditions"].([]any)
		st["conditions"] = objects.SetCondition(conds, objects.V1beta2("UpToDate", false, "NotUpToDate",
			msg, m.GetGeneration(), s.clock.Now()))
		if err := s.setStatus(ctx, owner, comp, kinds.Machine, m, st); err != nil {
			return err
		}
	}
	return nil
}
