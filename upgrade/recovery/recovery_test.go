package recovery

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upgrade-console/upgrade-console/upgrade"
)

// A confirmation that is not given ends the attempt in the audit log, after
// its dry run: not confirmed, nothing changed, naming the object.
func TestRecordNotConfirmed(t *testing.T) {
	audit, err := upgrade.NewAuditor(filepath.Join(t.TempDir(), "audit.log"), upgrade.WithAuditIdentity("ops", "bastion"))
	if err != nil {
		t.Fatal(err)
	}
	p := &Plan{Action: ActionEtcdRollback, Cluster: "mgmt", ConfirmObject: "EtcdadmCluster eksa-system/mgmt-etcd"}
	if err := RecordNotConfirmed(context.Background(), audit, p, errors.New("not confirmed: no terminal to type into")); err != nil {
		t.Fatal(err)
	}
	if err := RecordNotConfirmed(context.Background(), nil, p, nil); err != nil {
		t.Errorf("read-only (no audit log): %v", err)
	}
	res, err := upgrade.ReadAudit(audit.Path(), upgrade.AuditFilter{})
	if err != nil || len(res.Entries) != 1 {
		t.Fatalf("audit log: %v, %+v", err, res)
	}
	e := res.Entries[0]
	if e.Result != upgrade.AuditNotConfirmed || e.Action != ActionEtcdRollback || e.Object != p.ConfirmObject ||
		!strings.Contains(e.Message, "nothing changed: not confirmed: no terminal") {
		t.Errorf("entry = %+v", e)
	}
}
