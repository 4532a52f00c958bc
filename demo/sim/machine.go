package sim

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgrade-console/upgrade-console/demo/kinds"
	"github.com/upgrade-console/upgrade-console/demo/objects"
	"github.com/upgrade-console/upgrade-console/demo/release"
	"github.com/upgrade-console/upgrade-console/demo/seed"
	"github.com/upgrade-console/upgrade-console/model"
)

// reconcileMachine is CAPI's Machine controller and the vSphere provider in
// one: a new machine goes Pending → Provisioning (VM cloned) → Provisioned
// (VM up, address) → Running (node joined, nodeRef set).
func (s *Simulator) reconcileMachine(ctx context.Context, k string) (time.Duration, error) {
	ns, name := splitKey(k)
	m := s.get(kinds.Machine, ns, name)
	if m == nil || deleting(m) {
		return 0, nil
	}
	owner := compMachine + "/" + k
	now := s.clock.Now()
	state := objects.MachineState{
		Phase:      phase(m),
		Address:    address(m),
		NodeName:   str(m, "status", "nodeRef", "name"),
		Generation: m.GetGeneration(),
		UpToDate:   true,
	}
	if c, ok := objects.Condition(m.Object, "UpToDate"); ok && c["status"] == "False" {
		state.UpToDate = false
		state.OutdatedMessage, _ = c["message"].(string)
	}
	version := str(m, "spec", "version")
	if kube, ok := release.ByKubeadmVersion(version); ok {
		state.KubeletVersion = kube.KubeletVersion()
	}
	role := roleOf(m)

	switch state.Phase {
	case "":
		state.Phase = objects.PhasePending
		return 0, s.setStatus(ctx, owner, compMachine, kinds.Machine, m, objects.MachineStatus(statusMap(m), state, now))
	case objects.PhasePending:
		if left, ok := s.pace.wait(k+"/boot", s.t.Boot); !ok {
			return left, nil
		}
		state.Phase = objects.PhaseProvisioning
		s.emit(compProvider, m, false, "Provisioning", "Cloning VM %s from template %s", name, template(m))
		return 0, s.setStatus(ctx, owner, compMachine, kinds.Machine, m, objects.MachineStatus(statusMap(m), state, now))
	case objects.PhaseProvisioning:
		if s.isStuck(name) {
			s.emitOnce("stuck/"+k, compProvider, m, true, "WaitingForIPAddress",
				"VM %s is powered on but has not reported an IP address", name)
			st := objects.MachineStatus(statusMap(m), state, now)
			st["conditions"] = objects.SetCondition(st["conditions"].([]any), objects.V1beta2("InfrastructureReady", false, "NotReady",
				"* VSphereMachine: waiting for the VM to report an IP address", m.GetGeneration(), now))
			return 0, s.setStatus(ctx, owner, compMachine, kinds.Machine, m, st)
		}
		if left, ok := s.pace.wait(k+"/provision", s.t.Provision); !ok {
			return left, nil
		}
		subnet := objects.SubnetWorkers
		switch role {
		case model.RoleEtcd:
			subnet = objects.SubnetEtcd
		case model.RoleControlPlane:
			subnet = objects.SubnetControlPlane
		}
		state.Phase = objects.PhaseProvisioned
		state.Address = s.cfg.Names.IP(subnet)
		if _, err := s.patch(ctx, owner, compMachine, kinds.Machine, ns, name, map[string]any{
			"spec": map[string]any{"providerID": objects.ProviderID(s.cfg.Names.UUID())},
		}); err != nil {
			return 0, err
		}
		s.emit(compProvider, m, false, "PoweredOn", "VM %s powered on with IP %s", name, state.Address)
		return 0, s.setStatus(ctx, owner, compMachine, kinds.Machine, m, objects.MachineStatus(statusMap(m), state, now))
	case objects.PhaseProvisioned:
		if left, ok := s.pace.wait(k+"/join", s.t.Join); !ok {
			return left, nil
		}
		state.Phase = objects.PhaseRunning
		if role != model.RoleEtcd {
			state.NodeName = name
			node := objects.Node(name, role, state.KubeletVersion, state.Address, str(m, "spec", "providerID"), now)
			if err := seed.CreateNode(ctx, s.kube, node); err != nil && !isAlreadyExists(err) {
				return 0, err
			}
			s.emit(compMachine, m, false, "SuccessfulSetNodeRef", "%s", name)
		} else {
			s.emit(compProvider, m, false, "EtcdMemberStarted", "etcd started on %s (%s)", name, state.Address)
		}
		return 0, s.setStatus(ctx, owner, compMachine, kinds.Machine, m, objects.MachineStatus(statusMap(m), state, now))
	}
	return 0, nil
}

func (s *Simulator) isStuck(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stuck[name]
}

// retire deletes an old machine the way CAPI does: mark it Deleting, cordon
// and drain its node, then delete the node and the machine. It reports
// whether the machine is gone, and when to look again.
func (s *Simulator) retire(ctx context.Context, owner, comp string, m *unstructured.Unstructured) (time.Duration, bool, error) {
	k := key(m.GetNamespace(), m.GetName())
	node := str(m, "status", "nodeRef", "name")
	if phase(m) != objects.PhaseDeleting {
		st := statusMap(m)
		st = copyStatus(st)
		st["phase"] = objects.PhaseDeleting
		conds, _ := st["conditions"].([]any)
		st["conditions"] = objects.SetCondition(conds, objects.V1beta2("Deleting", true, "Draining", "* Draining Node "+node, m.GetGeneration(), s.clock.Now()))
		if err := s.setStatus(ctx, owner, comp, kinds.Machine, m, st); err != nil {
			return 0, false, err
		}
		if node != "" {
			if _, err := s.kube.CoreV1().Nodes().Patch(ctx, node, "application/merge-patch+json",
				[]byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{FieldManager: comp}); err != nil && !isNotFound(err) {
				return 0, false, err
			}
			s.emit(compMachine, m, false, "MachineDrain", "Draining node %s", node)
		}
		return s.t.Drain, false, nil
	}
	if left, ok := s.pace.wait(k+"/drain", s.t.Drain); !ok {
		return left, false, nil
	}
	if node != "" {
		if err := s.kube.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{}); err != nil && !isNotFound(err) {
			return 0, false, err
		}
	}
	if err := s.delete(ctx, owner, kinds.Machine, m.GetNamespace(), m.GetName()); err != nil {
		return 0, false, err
	}
	return 0, true, nil
}

func copyStatus(st map[string]any) map[string]any {
	out := make(map[string]any, len(st)+1)
	for k, v := range st {
		out[k] = v
	}
	return out
}
