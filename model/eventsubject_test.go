package model

import "testing"

func TestNamesWhole(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{"Created machine mgmt-etcd-h2v8d", true},
		{"Created machine mgmt-etcd-h2v8d.", true},
		{`Machine "mgmt-etcd-h2v8d" is not healthy`, true},
		{"eksa-system/mgmt-etcd-h2v8d: deleted", true},
		{"Created machine mgmt-etcd-h2v8dx", false},
		{"Created machine mgmt-etcd-h2v8d-2", false},
		{"Created machine xmgmt-etcd-h2v8d", false},
		{"Created machine mgmt-etcd-h2v8d.example.com", false},
		{"mgmt-etcd-h2v8dx, then mgmt-etcd-h2v8d", true},
		{"", false},
	} {
		if got := NamesWhole(c.text, "mgmt-etcd-h2v8d"); got != c.want {
			t.Errorf("NamesWhole(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

// TestEventSubjectMatches: an owner's subject takes its events naming the
// machine whole; a MachineDeployment's prefix takes its MachineSets (named
// after it) and not another deployment's whose name begins with its.
func TestEventSubjectMatches(t *testing.T) {
	ms := EventSubject{Kind: "MachineSet", Name: "mgmt-md-0", Prefix: true, Naming: "mgmt-md-0-abc-x2k4q"}
	for _, c := range []struct {
		kind, name, msg string
		want            bool
	}{
		{"MachineSet", "mgmt-md-0-abc", "Created machine: mgmt-md-0-abc-x2k4q", true},
		{"MachineSet", "mgmt-md-0", "Created machine: mgmt-md-0-abc-x2k4q", true},
		{"MachineSet", "mgmt-md-0-abc", "Created machine: mgmt-md-0-abc-x2k4qz", false},
		{"MachineSet", "mgmt-md-00-abc", "Created machine: mgmt-md-0-abc-x2k4q", false},
		{"MachineDeployment", "mgmt-md-0", "Created machine: mgmt-md-0-abc-x2k4q", false},
	} {
		if got := ms.Matches(c.kind, c.name, c.msg); got != c.want {
			t.Errorf("Matches(%s %s, %q) = %v, want %v", c.kind, c.name, c.msg, got, c.want)
		}
	}
	m := EventSubject{Kind: "Machine", Name: "mgmt-cp-a"}
	if !m.Matches("Machine", "mgmt-cp-a", "anything") || m.Matches("Machine", "mgmt-cp-ab", "anything") {
		t.Error("a machine's subject does not take exactly its own events")
	}
}
