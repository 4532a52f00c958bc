package sim

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/demo/kinds"
	"github.com/upgrade-console/upgrade-console/demo/objects"
	"github.com/upgrade-console/upgrade-console/model"
)

// reconcileEtcd is etcdadm-controller (facts §6.5): members whose template no
// longer matches are replaced one at a time: scale up one new member, wait
// until it passed the health check (etcd-ready label), then disown one old
// member, which stays in the etcd cluster until the control plane signals
// upgrade-complete; then the old members are deleted.
func (s *Simulator) reconcileEtcd(ctx context.Context, k string) (time.Duration, error) {
	ns, name := splitKey(k)
	ec := s.get(kinds.EtcdadmCluster, ns, name)
	if ec == nil || annotation(ec, model.AnnotationCAPIPaused) == "true" {
		return 0, nil
	}
	owner := compEtcdadm + "/" + k
	now := s.clock.Now()
	want := str(ec, "spec", "infrastructureTemplate", "name")
	replicas := int(num(ec, "spec", "replicas"))
	var owned, disowned, outdated, current []*unstructured.Unstructured
	for _, m := range byAge(s.list(kinds.Machine, ns, map[string]string{model.LabelEtcdCluster: name})) {
		if m.GetDeletionTimestamp() != nil {
			continue
		}
		if !ownedBy(m, ec) {
			disowned = append(disowned, m)
			continue
		}
		owned = append(owned, m)
		if template(m) != want {
			outdated = append(outdated, m)
		} else {
			current = append(current, m)
		}
	}

	// Health check: a member that has run long enough joins (etcd-ready).
	waiting := ""
	for _, m := range owned {
		if m.GetLabels()[model.LabelEtcdReady] == "true" {
			continue
		}
		if !running(m) {
			waiting = "Waiting for etcd machine " + m.GetName() + " to be provisioned"
			continue
		}
		if left, ok := s.pace.wait(key(ns, m.GetName())+"/etcd-health", s.t.EtcdHealth); !ok {
			waiting = "Waiting for etcd member " + m.GetName() + " to pass the health check"
			s.requeue(s.l.etcd, k, left)
			continue
		}
		if _, err := s.patch(ctx, owner, compEtcdadm, kinds.Machine, ns, m.GetName(), map[string]any{
			"metadata": map[string]any{"labels": map[string]any{model.LabelEtcdReady: "true"}},
		}); err != nil {
			return 0, err
		}
		s.emit(compEtcdadm, ec, false, "MemberReady", "etcd member %s joined the cluster and passed the health check", m.GetName())
		return 0, nil
	}
	ready := func(m *unstructured.Unstructured) bool { return m.GetLabels()[model.LabelEtcdReady] == "true" }

	st := objects.EtcdState{Generation: ec.GetGeneration(), Cluster: s.sc.ClusterName, Waiting: waiting, Disowned: len(disowned)}
	for _, m := range owned {
		if ready(m) {
			st.Replicas++
			st.Endpoints = append(st.Endpoints, address(m))
		}
	}

	switch {
	case len(outdated) > 0:
		st.Rolling, st.Outdated, st.UpToDate = true, len(outdated), len(current)
		if len(owned) > len(outdated)+replicas {
			// etcdadm's safety stop.
			st.MaxReached, st.Total, st.MaxTotal = true, len(owned), len(outdated)+replicas
			break
		}
		if len(owned) <= replicas {
			m, err := s.scaleUpEtcd(ctx, owner, ec, want)
			if err != nil {
				return 0, err
			}
			s.emit(compEtcdadm, ec, false, "ScalingUp", "Creating etcd machine %s to replace outdated members (%d outdated, %d up to date)", m, len(outdated), len(current))
			break
		}
		// The new members must have passed the health check (creation
		// times have a one-second resolution: "the newest" is not
		// reliable, "all of them" is).
		if !allOf(current, ready) {
			break
		}
		old := outdated[0]
		// Disowning keeps the member in the etcd cluster: the API server
		// still lists it as an endpoint until the new control plane is up.
		if _, err := s.patch(ctx, owner, compEtcdadm, kinds.Machine, ns, old.GetName(), map[string]any{
			"metadata": map[string]any{"ownerReferences": []any{}},
		}); err != nil {
			return 0, err
		}
		s.emit(compEtcdadm, ec, false, "MachineDisowned", "Outdated etcd member %s removed from the owned set; it is deleted once the control plane upgrade completes", old.GetName())
	case len(owned) < replicas:
		if _, err := s.scaleUpEtcd(ctx, owner, ec, want); err != nil {
			return 0, err
		}
	default:
		allReady := waiting == ""
		st.Ready = allReady
		if allReady && annotation(ec, model.AnnotationEtcdUpgrading) == "true" {
			if _, err := s.patch(ctx, owner, compEtcdadm, kinds.EtcdadmCluster, ns, name, map[string]any{
				"metadata": map[string]any{"annotations": map[string]any{model.AnnotationEtcdUpgrading: nil}},
			}); err != nil {
				return 0, err
			}
			s.emit(compEtcdadm, ec, false, "UpgradeCompleted", "All %d etcd members are up to date", replicas)
		}
		if annotation(ec, model.AnnotationEtcdUpgradeComplete) == "true" {
			for _, m := range disowned {
				if err := s.delete(ctx, owner, kinds.Machine, ns, m.GetName()); err != nil {
					return 0, err
				}
				s.emit(compEtcdadm, ec, false, "MemberRemoved", "Removed outdated etcd member %s from the cluster and deleted its machine", m.GetName())
			}
			if _, err := s.patch(ctx, owner, compEtcdadm, kinds.EtcdadmCluster, ns, name, map[string]any{
				"metadata": map[string]any{"annotations": map[string]any{model.AnnotationEtcdUpgradeComplete: nil}},
			}); err != nil {
				return 0, err
			}
			st.Disowned = 0
		}
	}
	return 0, s.setStatus(ctx, owner, compEtcdadm, kinds.EtcdadmCluster, ec, objects.EtcdStatus(statusMap(ec), st, now))
}

// scaleUpEtcd creates one etcd machine from the current template.
func (s *Simulator) scaleUpEtcd(ctx context.Context, owner string, ec *unstructured.Unstructured, tmpl string) (string, error) {
	name := s.cfg.Names.Generate(ec.GetName())
	s.mu.Lock()
	s.etcdRollouts++
	if s.sc.FailFirstEtcdMember && s.etcdRollouts == 1 {
		s.stuck[name] = true
	}
	s.mu.Unlock()
	m := objects.Machine(objects.MachineSpec{
		Name: name, Namespace: ec.GetNamespace(), Cluster: s.sc.ClusterName, Role: model.RoleEtcd,
		Owner: objects.OwnerOf(ec), InfraTemplate: tmpl, EtcdCluster: ec.GetName(),
	})
	_, err := s.create(ctx, owner, compEtcdadm, kinds.Machine, m)
	return name, err
}

// requeue asks a loop to look at key again after d.
func (s *Simulator) requeue(l *loop, k string, d time.Duration) { l.queue.AddAfter(k, d) }

func allOf(list []*unstructured.Unstructured, ok func(*unstructured.Unstructured) bool) bool {
	for _, u := range list {
		if !ok(u) {
			return false
		}
	}
	return true
}
