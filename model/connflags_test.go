package model

import (
	"strings"
	"testing"
)

func TestConnFlagsString(t *testing.T) {
	for _, c := range []struct {
		name  string
		flags ConnFlags
		want  string
	}{
		{"none given", nil, ""},
		{"plain values", ConnFlags{{"context", "prod"}, {"as", "system:serviceaccount:ops:upgrader"}},
			" --context prod --as system:serviceaccount:ops:upgrader"},
		{"quoted for the shell", ConnFlags{{"kubeconfig", "/home/ops/my clusters/kc"}, {"context", "it's-prod"}, {"as-group", "$admins"}},
			` --kubeconfig '/home/ops/my clusters/kc' --context 'it'\''s-prod' --as-group '$admins'`},
		{"an empty value stays one argument", ConnFlags{{"context", ""}}, ` --context ''`},
		{"a repeated flag", ConnFlags{{"as-group", "a"}, {"as-group", "b"}}, " --as-group a --as-group b"},
		{"a boolean", ConnFlags{{"insecure-skip-tls-verify", "true"}}, " --insecure-skip-tls-verify"},
		{"a boolean turned off", ConnFlags{{"insecure-skip-tls-verify", "false"}}, " --insecure-skip-tls-verify=false"},
		{"secrets are placeholders", ConnFlags{{"token", "eyJhbGciOi.s3cret"}, {"username", "admin"}, {"password", "hunter2"}},
			" --token '<token>' --username '<username>' --password '<password>'"},
	} {
		if got := c.flags.String(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if got := (ConnFlags{{"token", "eyJhbGciOi.s3cret"}}).String(); strings.Contains(got, "s3cret") {
		t.Errorf("the token printed: %q", got)
	}
}

// Every command the model words for pasting names the connection the
// console was given: the resume of a paused Cluster API Cluster, an
// upgrader container's log, the RBAC check, the lock commands of a pause
// and of the spec status, the retry of a failed in-place step.
func TestModelCommandsCarryTheConnection(t *testing.T) {
	conn := ConnFlags{{"kubeconfig", "/etc/kc"}, {"context", "prod"}}
	const flags = " --kubeconfig /etc/kc --context prod"
	cc := &CAPICluster{Meta: Meta{Name: "mgmt", Namespace: "eksa-system"}}
	if got := cc.ResumeCommand(conn); !strings.HasPrefix(got, "kubectl"+flags+" -n eksa-system patch clusters.cluster.x-k8s.io mgmt ") {
		t.Errorf("resume: %s", got)
	}
	pod := &UpgraderPod{Meta: Meta{Name: "n1-node-upgrader", Namespace: "eksa-system"}}
	if got, want := pod.LogsCommand("kubeadm-upgrader", conn), "kubectl"+flags+" logs -n eksa-system n1-node-upgrader -c kubeadm-upgrader"; got != want {
		t.Errorf("logs: %s, want %s", got, want)
	}
	if got := GrantFor("list nodes (cluster-wide)", conn); !strings.Contains(got, "`kubectl"+flags+" auth can-i list nodes`") {
		t.Errorf("grant: %s", got)
	}

	s := afterEtcdRollback("done")
	s.Conn = conn
	p := DeriveProgress(s, ProgressOptions{}, t0)
	if !strings.Contains(p.Pause, "`upgrade-console lock clear paused --cluster mgmt"+flags+"`") {
		t.Errorf("pause: %s", p.Pause)
	}
	if st := SpecStatusOf(s, t0); !strings.Contains(st.Next, "`upgrade-console lock clear paused --cluster mgmt"+flags+"`") {
		t.Errorf("spec status: %s", st.Next)
	}
	j, outcome := NewJudge().Observe(p, t0)
	if outcome != OutcomeFailed || !strings.Contains(j.Reason(), "`upgrade-console lock clear paused --cluster mgmt"+flags+"`") {
		t.Errorf("outcome: %s", j.Reason())
	}
}

// A printed command names the Cluster's namespace when a command without
// -n would work in another: outside "default", and in "default" too under
// a context whose namespace is another. The context's namespace is no flag
// and is not printed.
func TestClusterArgsNameTheNamespaceOffTheContexts(t *testing.T) {
	conn := ConnFlags{{"context", "prod"}}
	for _, c := range []struct {
		ns, contextNS, want string
	}{
		{"default", "", "--cluster mgmt --context prod"},
		{"ops", "", "--cluster mgmt -n ops --context prod"},
		{"default", "default", "--cluster mgmt --context prod"},
		{"default", "ops", "--cluster mgmt -n default --context prod"},
		{"ops", "ops", "--cluster mgmt --context prod"},
	} {
		if got := ClusterArgs("mgmt", c.ns, conn.WithContextNamespace(c.contextNS)); got != c.want {
			t.Errorf("Cluster in %q, context in %q: %q, want %q", c.ns, c.contextNS, got, c.want)
		}
	}
	twice := conn.WithContextNamespace("ops").WithContextNamespace("")
	if got := twice.ContextNamespace(); got != "default" || len(twice) != 1 {
		t.Errorf("context namespace set then unset: %q, %+v", got, twice)
	}
}
