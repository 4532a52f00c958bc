package model

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestDeriverMatchesDeriveProgress drives one Deriver through a run of
// snapshots built the way the watchers build them (changed objects
// replaced, the rest shared, lists kept when nothing in them changed) and
// compares every result with a derivation from scratch.
func TestDeriverMatchesDeriveProgress(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	s := fleetState(60)
	// Some machines without a Ready condition: their readiness comes from
	// their node, so a node change must reach them. (The fixture is not
	// published yet: changing its objects in place is safe.)
	for i, m := range s.Machines.All() {
		if i%3 == 0 {
			m.Conditions = nil
		}
	}
	var d Deriver
	now := t0
	for round := 0; round < 500; round++ {
		next := *s
		now = now.Add(time.Duration(rng.IntN(90)) * time.Second)
		for op := rng.IntN(4); op >= 0; op-- {
			switch rng.IntN(8) {
			case 0, 1: // a machine's status changes
				k := rng.IntN(next.Machines.Len())
				m := *next.Machines.At(k)
				m.Phase = []string{"Running", "Provisioning", "Deleting"}[rng.IntN(3)]
				if rng.IntN(2) == 0 {
					st := []string{"True", "False"}[rng.IntN(2)]
					m.Conditions = Conditions{cond(ConditionReady, st, "", "", now)}
				}
				next.Machines = next.Machines.With(map[int]*Machine{k: &m})
			case 2: // a node's readiness flips
				k := rng.IntN(next.Nodes.Len())
				n := *next.Nodes.At(k)
				n.Ready = !n.Ready
				next.Nodes = next.Nodes.With(map[int]*Node{k: &n})
			case 3: // a machine goes away
				if next.Machines.Len() > 10 {
					k := rng.IntN(next.Machines.Len())
					next.Machines = ListOf(slices.Delete(next.Machines.Slice(), k, k+1)...)
				}
			case 4: // an in-place upgrade completes or starts
				k := rng.IntN(next.NodeUpgrades.Len())
				nu := *next.NodeUpgrades.At(k)
				nu.Completed = !nu.Completed
				next.NodeUpgrades = next.NodeUpgrades.With(map[int]*NodeUpgrade{k: &nu})
			case 5: // a newer NodeUpgrade for a machine
				m := next.Machines.At(rng.IntN(next.Machines.Len()))
				nu := &NodeUpgrade{Meta: Meta{Name: fmt.Sprintf("%s-retry-%d", m.Name, round), CreationTimestamp: now},
					Kind: KindNodeUpgrade, MachineName: m.Name, KubernetesVersion: m.Version}
				next.NodeUpgrades = appended(next.NodeUpgrades, nu)
			case 7: // the target moves
				next.MachineDeployments = slices.Clone(next.MachineDeployments)
				next.MachineDeployments[0].Version = []string{"v1.30.14-eks-1-30-58", "v1.31.9-eks-1-31-40"}[rng.IntN(2)]
			case 6: // the machine informer resyncs
				src := maps(next.Sources)
				st := src[KindMachine]
				st.Synced = rng.IntN(4) != 0
				src[KindMachine] = st
				next.Sources = src
			}
		}
		got := d.Derive(&next, ProgressOptions{}, now)
		want := DeriveProgress(&next, ProgressOptions{}, now)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: the Deriver says\n%+v\nfrom scratch:\n%+v", round, got, want)
		}
		s = &next
	}
}

func maps(m map[Kind]SourceStatus) map[Kind]SourceStatus {
	out := make(map[Kind]SourceStatus, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestDeriverStallSentenceFollows checks the sentences a Deriver keeps
// between derivations against what each one says from scratch, for the
// inputs a kept sentence must follow and the random run above rarely
// brings together: a machine not ready for long whose node flips (the
// Machine unchanged), and a clock that moves within and across the unit
// the duration is said in.
func TestDeriverStallSentenceFollows(t *testing.T) {
	s := fleetState(4)
	k := s.Machines.Len() - 2 // its in-place upgrade completed: no step speaks for it
	m := *s.Machines.At(k)
	m.Conditions = Conditions{cond(ConditionReady, "False", "WaitingForNode", "", t0.Add(-20*time.Minute))}
	s.Machines = s.Machines.With(map[int]*Machine{k: &m})
	nodeAt := -1
	for i, n := range s.Nodes.All() {
		if n.Name == m.NodeName {
			nodeAt = i
		}
	}
	if nodeAt < 0 {
		t.Fatalf("no node named %q in the fixture", m.NodeName)
	}
	var d Deriver
	now := t0
	check := func(step string, s *ClusterState, wantIn string) {
		t.Helper()
		got := d.Derive(s, ProgressOptions{}, now)
		want := DeriveProgress(s, ProgressOptions{}, now)
		if !reflect.DeepEqual(got.Stalls, want.Stalls) {
			t.Fatalf("%s: the Deriver says\n%+v\nfrom scratch:\n%+v", step, got.Stalls, want.Stalls)
		}
		found := false
		for _, st := range got.Stalls {
			if st.Name == m.Name && strings.Contains(st.Sentence, wantIn) {
				found = true
			}
		}
		if !found {
			t.Fatalf("%s: no stall of %s saying %q in %+v", step, m.Name, wantIn, got.Stalls)
		}
	}
	check("first", s, "not ready for 20m")
	now = now.Add(30 * time.Second) // the same minute: the sentence is kept
	check("same minute", s, "not ready for 20m")
	flipped := *s.Nodes.At(nodeAt)
	flipped.Ready = false
	next := *s
	next.Nodes = s.Nodes.With(map[int]*Node{nodeAt: &flipped})
	check("node NotReady", &next, "node "+m.NodeName+" NotReady")
	now = now.Add(40 * time.Second)
	check("next minute", &next, "not ready for 21m")
	check("node Ready again", s, "not ready for 21m: Machine phase")
	for _, st := range d.Derive(s, ProgressOptions{}, now).Stalls {
		if strings.Contains(st.Sentence, "NotReady") {
			t.Fatalf("node Ready again: %q", st.Sentence)
		}
	}
}

// A stall sentence kept from before the Cluster was read is not kept once
// it reads as a workload cluster's: its node is then on another API server,
// not "not found" here.
func TestDeriverStallSentenceOfAWorkloadCluster(t *testing.T) {
	s := fleetState(4)
	k := s.Machines.Len() - 2 // its in-place upgrade completed
	m := *s.Machines.At(k)
	m.Conditions = Conditions{cond(ConditionReady, "False", "WaitingForNode", "", t0.Add(-20*time.Minute))}
	s.Machines = s.Machines.With(map[int]*Machine{k: &m})
	s.Nodes = List[Node]{} // held back until the Cluster is read
	workload := *s.Cluster
	workload.ManagementCluster = "mgmt-other"
	var d Deriver
	for _, c := range []*EKSACluster{nil, &workload} {
		next := *s
		next.Cluster = c
		got := d.Derive(&next, ProgressOptions{}, t0)
		want := DeriveProgress(&next, ProgressOptions{}, t0)
		if !reflect.DeepEqual(got.Stalls, want.Stalls) {
			t.Fatalf("Cluster %v: the Deriver says\n%+v\nfrom scratch:\n%+v", c != nil, got.Stalls, want.Stalls)
		}
	}
}
