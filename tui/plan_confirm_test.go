package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/upgrade-console/upgrade-console/themes"
)

// apply --tui --force-conflicts starts the confirmation with the take-over
// ticked, as apply --yes --force-conflicts takes the fields over: the flag
// was dropped in silence, and the apply then refused the conflicts.
func TestConfirmDialogStartsFromForceConflicts(t *testing.T) {
	for _, force := range []bool{false, true} {
		d := newConfirmDialog(Options{Theme: themes.Mono, ForceConflicts: force}, fixturePlan(false), fixtureManyConflicts())
		d.SetSize(120, 40)
		want := "[ ] take over"
		if force {
			want = "[x] take over"
		}
		if d.force != force || !strings.Contains(ansi.Strip(d.View()), want) {
			t.Errorf("--force-conflicts %t: force %t, view lacks %q:\n%s", force, d.force, want, ansi.Strip(d.View()))
		}
	}
	// Nothing to take over: nothing ticked, whatever the flag.
	none := fixtureDryRun()
	none.Conflicts = nil
	if d := newConfirmDialog(Options{Theme: themes.Mono, ForceConflicts: true}, fixturePlan(false), none); d.force {
		t.Error("the take-over is ticked with no conflicts")
	}
}
