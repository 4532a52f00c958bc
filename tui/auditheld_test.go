package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/upgrade-console/upgrade-console/themes"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// While the audit log holds entries it refused (a full disk), the App says
// so on the last row, on the screen and under a dialog (a recovery run
// from R): the console prints them at exit, after the screen is gone, and
// a TUI start showed nothing of them meanwhile. A footer that asks or
// takes text keeps its row. Once the log takes them, the row is the key
// help again.
func TestTheAppSaysTheAuditEntriesItHolds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	a, err := upgrade.NewAuditor(path)
	if err != nil {
		t.Fatal(err)
	}
	app := newTestApp(Options{Theme: themes.Mono, ClusterName: "mgmt", AuditHeld: a.Held})
	app.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	app.Update(SnapshotMsg{State: fixtureHealthy()})
	if last := lastRow(app); strings.Contains(last, "audit log") {
		t.Fatalf("nothing refused, the last row says %q", last)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := a.Record(context.Background(), upgrade.AuditEntry{Cluster: "mgmt", Action: "lock-release", Result: upgrade.AuditOK}); err == nil {
		t.Fatal("an entry taken by a directory")
	}
	want := "the audit log refuses entries: 1 held, printed at exit to append to it (is a directory)"
	if last := lastRow(app); !strings.Contains(last, want) {
		t.Errorf("the last row says %q, want %q", last, want)
	}
	// The dashboard's footer taking text (the filter; its quit prompt
	// likewise) is left to it: the warning comes back after it.
	pressApp(t, app, tea.KeyPressMsg{Code: '/', Text: "/"})
	if last := lastRow(app); strings.Contains(last, "audit log") {
		t.Errorf("the filter's row says %q", last)
	}
	pressApp(t, app, tea.KeyPressMsg{Code: tea.KeyEscape})
	if last := lastRow(app); !strings.Contains(last, want) {
		t.Errorf("after the filter the last row says %q, want %q", last, want)
	}
	app.Update(tea.WindowSizeMsg{Width: 40, Height: 24})
	if last := lastRow(app); !strings.Contains(last, "audit log refuses: 1 held till exit") {
		t.Errorf("at 40 columns the last row says %q, want the short form whole", last)
	}
	app.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if last := lastRow(app); !strings.Contains(last, "the audit log refuses entries: 1 held, printed at exit to append to it") {
		t.Errorf("at 80 columns the last row says %q, want the long form without its cause", last)
	}
	app.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	d := testDialog(RecoveryOptions{}, &fakeRecovery{p: planFixture()})
	app.Update(OpenDialogMsg{Dialog: d})
	if last := lastRow(app); !strings.Contains(last, want) {
		t.Errorf("under a dialog the last row says %q, want %q", last, want)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if lines, _, _, err := a.Unwritten(); lines != nil || err != nil {
		t.Fatalf("with space again: %q, %v", lines, err)
	}
	if last := lastRow(app); strings.Contains(last, "audit log") {
		t.Errorf("the log took them, the last row still says %q", last)
	}
}
