package model

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's CPU time (all threads): on a shared machine the
// wall-clock ns/op says more about the neighbours than about the code.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// fleetState is a rollout in flight on n workers: half upgraded in place,
// one NodeUpgrade per worker.
func fleetState(n int) *ClusterState {
	s := readyCluster()
	target := "v1.31.9-eks-1-31-40"
	s.MachineDeployments[0].Version = target
	s.MachineDeployments[0].Replicas = ReplicaCounts{Desired: i32(int32(n)), Ready: i32(int32(n)), UpToDate: i32(int32(n / 2))}
	machines := s.Machines.Slice()[:6]
	var nodes []*Node
	var nus []*NodeUpgrade
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("mgmt-md-0-%06d", i)
		m := machine(name, RoleWorker, "mgmt-md-0", target, true)
		m.Conditions = nil
		machines = append(machines, m)
		nodes = append(nodes, &Node{Meta: Meta{Name: name}, Ready: true, KubeletVersion: target})
		nu := &NodeUpgrade{Meta: Meta{Name: name + "-node-upgrader", CreationTimestamp: t0.Add(-time.Minute)}, Kind: KindNodeUpgrade,
			MachineName: name, KubernetesVersion: target, Completed: i%2 == 0}
		for _, step := range NodeUpgradeSteps[:3] {
			nu.Conditions = append(nu.Conditions, cond(step, "True", "", "", t0.Add(-time.Minute)))
		}
		nus = append(nus, nu)
	}
	s.Machines, s.Nodes, s.NodeUpgrades = ListOf(machines...), ListOf(nodes...), ListOf(nus...)
	return s
}

// BenchmarkDeriveProgress is the cost of deriving progress and stalls from
// one snapshot, which the dashboard and the headless watch do per snapshot.
func BenchmarkDeriveProgress(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s := fleetState(n)
			b.ReportAllocs()
			runtime.GC()
			b.ResetTimer()
			start := cpuTime()
			for i := 0; i < b.N; i++ {
				p := DeriveProgress(s, ProgressOptions{}, t0)
				if p.Current != PhaseWorkers {
					b.Fatalf("current = %s", p.Current)
				}
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkDeriverOneMachineChanged is the dashboard's cost per snapshot
// during a rollout: one machine replaced, every other object shared with
// the snapshot before, as the watchers publish a status change.
func BenchmarkDeriverOneMachineChanged(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s := fleetState(n)
			var d Deriver
			d.Derive(s, ProgressOptions{}, t0)
			b.ReportAllocs()
			runtime.GC()
			b.ResetTimer()
			start := cpuTime()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				next := *s
				k := next.Machines.Len() - 1 - i%n
				m := *next.Machines.At(k)
				m.Phase = map[bool]string{true: "Provisioned", false: "Running"}[m.Phase == "Running"]
				next.Machines = next.Machines.With(map[int]*Machine{k: &m})
				s = &next
				b.StartTimer()
				if p := d.Derive(s, ProgressOptions{}, t0); p.Current != PhaseWorkers {
					b.Fatalf("current = %s", p.Current)
				}
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		})
	}
}
