package upgrade

import (
	"context"
	"errors"
	"strings"
	"testing"
)

type refusingRecorder struct{ err error }

func (r refusingRecorder) Record(context.Context, AuditEntry) error { return r.err }

// A log's refusal names the log once: wrapped as other causes are, it read
// "write audit log: audit log audit.log: file too large".
func TestAuditRefusalNamesTheLogOnce(t *testing.T) {
	refused := &AuditWriteError{Path: "audit.log", Err: errors.New("file too large")}
	err := audit(context.Background(), refusingRecorder{refused}, AuditEntry{})
	if !errors.Is(err, refused) {
		t.Fatalf("audit: %v, want the log's refusal", err)
	}
	if got := err.Error(); strings.Count(got, "audit log") != 1 || !strings.HasPrefix(got, "audit log audit.log: file too large") {
		t.Errorf("audit: %q, want the log named once, first", got)
	}
	other := errors.New("encode entry: boom")
	if got := audit(context.Background(), refusingRecorder{other}, AuditEntry{}).Error(); got != "write audit log: encode entry: boom" {
		t.Errorf("audit: %q, want another cause said as the audit log's", got)
	}
}
