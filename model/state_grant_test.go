package model

import "testing"

func TestGrantFor(t *testing.T) {
	for in, want := range map[string]string{
		"list machines.cluster.x-k8s.io in eksa-system": "grant a Role in eksa-system with {apiGroups: [\"cluster.x-k8s.io\"], resources: [machines], verbs: [list, watch]} and a RoleBinding to the identity (check: `kubectl auth can-i list machines.cluster.x-k8s.io -n eksa-system`)",
		"watch nodes (cluster-wide)":                    "grant a ClusterRole with {apiGroups: [\"\"], resources: [nodes], verbs: [list, watch]} and a ClusterRoleBinding to the identity (check: `kubectl auth can-i watch nodes`)",
		"garbage":                                       "",
	} {
		if got := GrantFor(in, nil); got != want {
			t.Errorf("GrantFor(%q) = %q, want %q", in, got, want)
		}
	}
}
