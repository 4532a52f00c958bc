package upgrade

import (
	"context"
	"os"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upgrade-console/upgrade-console/demo/controlplane"
	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
)

// env is the package's shared local control plane (a real kube-apiserver).
var env *controlplane.Env

func TestMain(m *testing.M) {
	if os.Getenv("AUDIT_FSIZE_CHILD") != "" {
		// A child of TestAuditorCutsOffTheLineAFullDiskTookInPart: it
		// needs no API server.
		auditFsizeChild()
		return
	}
	cptest.Main(m, &env)
}

func newTestClient(t *testing.T) *Client {
	t.Helper()
	c, err := NewClient(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// memAudit is an in-memory audit log.
type memAudit struct {
	mu      sync.Mutex
	entries []AuditEntry
}

func (m *memAudit) Record(_ context.Context, e AuditEntry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entries = append(m.entries, e)
	return nil
}

func (m *memAudit) actions() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, e := range m.entries {
		out = append(out, e.Action+":"+e.Result)
	}
	return out
}

func metavOpts() metav1.GetOptions     { return metav1.GetOptions{} }
func updateOpts() metav1.UpdateOptions { return metav1.UpdateOptions{} }
