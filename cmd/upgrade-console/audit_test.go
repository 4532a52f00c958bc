package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

func TestAuditCommandTableAndJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	now := time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC)
	clock := now.Add(-3 * time.Hour)
	a, err := upgrade.NewAuditor(path, upgrade.WithAuditIdentity("ops", "bastion"),
		upgrade.WithAuditClock(func() time.Time { clock = clock.Add(time.Hour); return clock }))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []upgrade.AuditEntry{
		{Cluster: "old", Action: "apply", Result: upgrade.AuditOK},
		{Cluster: "mgmt", Action: "lock-clear", Step: "lease", Object: "Lease eksa-system/upgrade-console-mgmt", Result: upgrade.AuditOK, Forced: true},
		{Cluster: "mgmt", Action: "etcd-rollback", Step: "delete-new-machine", Result: upgrade.AuditFailed, Error: "machines.cluster.x-k8s.io \"m\" is forbidden"},
	} {
		if err := a.Record(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}

	var out, errOut bytes.Buffer
	if err := runAudit(&out, &errOut, &auditOptions{cluster: "mgmt", since: "150m", output: "table", file: path}, now); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"WHO", "ops@bastion", "lock-clear", "FORCED", "error: machines.cluster.x-k8s.io", "2026-11-21 22:00:00Z"} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "old") || strings.Count(got, "\n") != 3 {
		t.Errorf("filter not applied:\n%s", got)
	}

	out.Reset()
	if err := runAudit(&out, &errOut, &auditOptions{output: "json", file: path}, now); err != nil {
		t.Fatal(err)
	}
	var entries []upgrade.AuditEntry
	if err := json.Unmarshal(out.Bytes(), &entries); err != nil || len(entries) != 3 {
		t.Fatalf("json output: %v, %d entries:\n%s", err, len(entries), out.String())
	}

	out.Reset()
	if err := runAudit(&out, &errOut, &auditOptions{cluster: "none", output: "json", file: path}, now); err != nil || strings.TrimSpace(out.String()) != "[]" {
		t.Errorf("empty json = %q %v, want []", out.String(), err)
	}
}

func TestAuditCommandBadInput(t *testing.T) {
	var out bytes.Buffer
	var ie *model.InputError
	if err := runAudit(&out, &out, &auditOptions{since: "yesterday", output: "table"}, time.Now()); !errors.As(err, &ie) || ie.Source != "--since" {
		t.Errorf("--since yesterday: %v, want an InputError on --since", err)
	}
	if err := runAudit(&out, &out, &auditOptions{output: "yaml"}, time.Now()); !errors.As(err, &ie) || ie.Source != "--output" {
		t.Errorf("-o yaml: %v, want an InputError on --output", err)
	}
	// A log named on purpose that is not there is a mistake, not an empty log.
	missing := filepath.Join(t.TempDir(), "no-such.log")
	if err := runAudit(&out, &out, &auditOptions{file: missing, output: "table"}, time.Now()); !errors.As(err, &ie) || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("--audit-log %s: %v, want an InputError", missing, err)
	}
}
