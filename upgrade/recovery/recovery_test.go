package recovery

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// A wait that saw no state (the timeout ran out before the first poll
// answered) says nothing about it, rather than "()".
func TestWaitTimeoutErrorMessage(t *testing.T) {
	for _, tc := range []struct {
		err  WaitTimeoutError
		want string
	}{
		{WaitTimeoutError{What: "etcd not ready", After: time.Millisecond, Hint: "check the etcdadm-controller logs"},
			"etcd not ready after 1ms: check the etcdadm-controller logs; run the action again to keep waiting"},
		{WaitTimeoutError{What: "etcd not ready", After: time.Minute, Last: "members not ready: m1", Hint: "check the etcdadm-controller logs"},
			"etcd not ready after 1m0s (members not ready: m1): check the etcdadm-controller logs; run the action again to keep waiting"},
		{WaitTimeoutError{What: "pod p not recreated", After: time.Second},
			"pod p not recreated after 1s; run the action again to keep waiting"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q\nwant      %q", got, tc.want)
		}
	}
}

// A write the dry run was refused kept what it would have done as its
// message: the audit entry said "2 field(s) restored" beside its error.
func TestDryRunOfARefusedWriteRecordsNoSuccessMessage(t *testing.T) {
	audit, err := upgrade.NewAuditor(filepath.Join(t.TempDir(), "audit.log"), upgrade.WithAuditIdentity("ops", "bastion"))
	if err != nil {
		t.Fatal(err)
	}
	p := &Plan{Action: ActionEtcdRollback, Cluster: "mgmt", Steps: []Step{{
		Name: "restore-etcd-spec", Object: "EtcdadmCluster eksa-system/mgmt-etcd",
		done: func(context.Context) (bool, string, error) { return false, "", nil },
		do: func(context.Context, bool) (string, error) {
			return "2 field(s) restored", errors.New(`spec.etcdadmConfigSpec: must be of type object`)
		},
	}}}
	rep, dryErr := (&Executor{Audit: audit}).DryRun(context.Background(), p)
	if dryErr == nil || rep.Steps[0].Detail != "" {
		t.Errorf("dry run: %v, detail %q", dryErr, rep.Steps[0].Detail)
	}
	res, err := upgrade.ReadAudit(audit.Path(), upgrade.AuditFilter{})
	if err != nil || len(res.Entries) != 1 {
		t.Fatalf("audit: %v, %d entries", err, len(res.Entries))
	}
	if e := res.Entries[0]; e.Result != upgrade.AuditFailed || e.Message != "" || e.Error == "" {
		t.Errorf("entry %+v", e)
	}
	// The attempt ends with a refused entry, as a refused plan's does.
	if err := RecordDryRunRefused(context.Background(), audit, p, dryErr); err != nil {
		t.Fatal(err)
	}
	res, _ = upgrade.ReadAudit(audit.Path(), upgrade.AuditFilter{})
	if e := res.Entries[len(res.Entries)-1]; e.Result != upgrade.AuditRefused || e.Step != "" || !strings.Contains(e.Message, "the dry run failed") {
		t.Errorf("end entry %+v", e)
	}
}

// A step stopped by ctrl+c said "failed: context canceled", as if the step
// had a fault; it says it was interrupted, and is still the cancellation.
func TestInterruptedStepSaysSo(t *testing.T) {
	audit, err := upgrade.NewAuditor(filepath.Join(t.TempDir(), "audit.log"), upgrade.WithAuditIdentity("ops", "bastion"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Plan{Action: ActionEtcdRollback, Cluster: "mgmt", Title: "t", Steps: []Step{{
		Name: "wait-etcd-ready", Title: "Wait until etcd is ready", Wait: true,
		done: func(context.Context) (bool, string, error) { return false, "", nil },
		do: func(ctx context.Context, _ bool) (string, error) {
			cancel()
			<-ctx.Done()
			return "", ctx.Err()
		},
	}}}
	rep, err := (&Executor{Audit: audit}).Run(ctx, p)
	if !errors.Is(err, context.Canceled) || err.Error() != "interrupted during step 1 (Wait until etcd is ready)" {
		t.Errorf("run: %v", err)
	}
	if len(rep.Steps) != 1 || rep.Steps[0].Err == nil || rep.Steps[0].Err.Error() != "stopped before its end (interrupted)" || !errors.Is(rep.Steps[0].Err, context.Canceled) {
		t.Errorf("step: %+v", rep.Steps)
	}
}
