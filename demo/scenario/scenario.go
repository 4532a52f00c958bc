// Package scenario describes the demo worlds: the shape of the management
// cluster (etcd topology, node counts, rollout strategy) and the failure, if
// any, the simulated controllers inject on the way.
package scenario

import (
	"fmt"
	"sort"
	"strings"
)

// Name is a scenario's name as given to --scenario.
type Name string

const (
	// Rolling upgrades a cluster with external etcd with rolling
	// replacement of every machine; it succeeds.
	Rolling Name = "rolling"
	// InPlace upgrades a cluster with stacked etcd node by node through
	// ControlPlaneUpgrade/MachineDeploymentUpgrade/NodeUpgrade; it succeeds.
	InPlace Name = "inplace"
	// EtcdFirstMemberFails is Rolling where the first new etcd machine
	// never becomes ready.
	EtcdFirstMemberFails Name = "etcd-first-member-fails"
	// StaleLock is Rolling where a previous run left an expired upgrade lock
	// and the EKS-A paused annotation behind.
	StaleLock Name = "stale-lock"
	// InPlaceNodeStepFails is InPlace where one node's kubeadm step exits
	// non-zero until the upgrader pod is deleted (the documented retry).
	InPlaceNodeStepFails Name = "inplace-node-step-fails"
	// Large is Rolling on a fleet of many worker nodes.
	Large Name = "large"
)

// Names lists every scenario, for flag help and errors.
func Names() []string {
	out := []string{}
	for n := range builders {
		out = append(out, string(n))
	}
	sort.Strings(out)
	return out
}

// Rollout strategies, as EKS-A spells them.
const (
	RollingUpdate   = "RollingUpdate"
	StrategyInPlace = "InPlace"
)

// WorkerGroup is one worker node group.
type WorkerGroup struct {
	Name  string
	Count int
	// MaxSurge is how many machines the group replaces at once.
	MaxSurge int
}

// Config is one demo world.
type Config struct {
	Name Name
	// ClusterName is the EKS-A cluster's name ("mgmt").
	ClusterName string
	// ClusterNamespace holds the EKS-A Cluster ("default", where operators
	// keep it).
	ClusterNamespace string
	// SystemNamespace holds everything EKS-A generates ("eksa-system").
	SystemNamespace string
	// Strategy is the upgrade rollout strategy of control plane and workers.
	Strategy string
	// EtcdCount is the number of external etcd members; 0 means stacked etcd.
	EtcdCount         int
	ControlPlaneCount int
	Workers           []WorkerGroup

	// FailFirstEtcdMember keeps the first etcd machine of a rollout in
	// Provisioning forever.
	FailFirstEtcdMember bool
	// FailNodeUpgrade is the 1-based position, in upgrade order, of the
	// node whose kubeadm step fails once; 0 means none.
	FailNodeUpgrade int
	// StaleLock seeds an expired upgrade lock and a leftover paused
	// annotation.
	StaleLock bool
}

// Defaults of every world.
const (
	DefaultClusterName = "mgmt"
	DefaultNodes       = 1000
)

// Options are the knobs a caller may turn.
type Options struct {
	// Nodes is the worker count of the large scenario (0: DefaultNodes).
	Nodes int
	// ClusterName overrides DefaultClusterName.
	ClusterName string
	// ClusterNamespace and SystemNamespace override "default" and
	// "eksa-system" (tests isolate worlds this way).
	ClusterNamespace, SystemNamespace string
}

var builders = map[Name]func(o Options) Config{
	Rolling: func(Options) Config { return rolling() },
	InPlace: func(Options) Config { return inplace() },
	EtcdFirstMemberFails: func(Options) Config {
		c := rolling()
		c.FailFirstEtcdMember = true
		return c
	},
	StaleLock: func(Options) Config {
		c := rolling()
		c.StaleLock = true
		return c
	},
	InPlaceNodeStepFails: func(Options) Config {
		c := inplace()
		// The second control-plane node: the first one (which also upgrades
		// etcd) has gone through, so the operator sees partial progress.
		c.FailNodeUpgrade = 2
		return c
	},
	Large: func(o Options) Config {
		c := rolling()
		n := o.Nodes
		if n <= 0 {
			n = DefaultNodes
		}
		a := n / 2
		// A fleet this size is rolled several machines at a time, as an
		// operator would configure it (maxSurge), or it would take days.
		surge := max(1, n/40)
		c.Workers = []WorkerGroup{{Name: "md-0", Count: n - a, MaxSurge: surge}, {Name: "md-1", Count: a, MaxSurge: surge}}
		return c
	},
}

func rolling() Config {
	return Config{
		Strategy:          RollingUpdate,
		EtcdCount:         3,
		ControlPlaneCount: 3,
		Workers:           []WorkerGroup{{Name: "md-0", Count: 2, MaxSurge: 1}, {Name: "md-1", Count: 2, MaxSurge: 1}},
	}
}

// inplace is a stacked-etcd world: EKS-A only allows InPlace with stacked
// etcd (on vSphere behind VSPHERE_IN_PLACE_UPGRADE, and on bare metal).
func inplace() Config {
	return Config{
		Strategy:          StrategyInPlace,
		EtcdCount:         0,
		ControlPlaneCount: 3,
		Workers:           []WorkerGroup{{Name: "md-0", Count: 2, MaxSurge: 1}, {Name: "md-1", Count: 2, MaxSurge: 1}},
	}
}

// For returns the world of a scenario.
func For(name Name, o Options) (Config, error) {
	if name == "" {
		name = Rolling
	}
	b, ok := builders[name]
	if !ok {
		return Config{}, fmt.Errorf("unknown scenario %q: use one of %s", name, strings.Join(Names(), ", "))
	}
	c := b(o)
	c.Name = name
	c.ClusterName = or(o.ClusterName, DefaultClusterName)
	c.ClusterNamespace = or(o.ClusterNamespace, "default")
	c.SystemNamespace = or(o.SystemNamespace, "eksa-system")
	return c, nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// InPlace reports whether the world upgrades in place.
func (c Config) InPlace() bool { return c.Strategy == StrategyInPlace }

// ExternalEtcd reports whether etcd runs on its own machines.
func (c Config) ExternalEtcd() bool { return c.EtcdCount > 0 }

// WorkerCount is the number of worker nodes.
func (c Config) WorkerCount() int {
	n := 0
	for _, w := range c.Workers {
		n += w.Count
	}
	return n
}
