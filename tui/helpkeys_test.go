package tui

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/upgrade-console/upgrade-console/upgrade/recovery"
)

// keyLabels is how the help writes a key whose name it does not use.
var keyLabels = map[string]string{"up": "↑", "down": "↓", "pgdown": "pgdn"}

// bindingsOf is every binding in a key map struct, those of a slice field
// (the registered actions) included.
func bindingsOf(keys any) map[string]key.Binding {
	out := map[string]key.Binding{}
	v := reflect.ValueOf(keys)
	for i := range v.NumField() {
		if !v.Field(i).CanInterface() {
			continue // state, not a binding
		}
		switch f := v.Field(i).Interface().(type) {
		case key.Binding:
			out[v.Type().Field(i).Name] = f
		case []key.Binding:
			for j, b := range f {
				out[v.Type().Field(i).Name+"/"+b.Help().Key+string(rune('0'+j))] = b
			}
		}
	}
	return out
}

// TestFullHelpNamesEveryKeyOfEveryBinding: each key a screen takes is in its
// full help, under the binding it belongs to: z zoomed, ctrl+d paged and esc
// unzoomed the dashboard, space paged the plan, and pgdn scrolled the
// recovery dialog, with no word of them in any help. A binding added later
// without a help entry, or a key added to one without its name, fails here.
func TestFullHelpNamesEveryKeyOfEveryBinding(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(t0)
	dash := recoveryDashboard(clk, withLock(fixtureHealthy(), staleLock()), 120, 40)
	if len(dash.keys.Actions) == 0 {
		t.Fatal("no action bound: R recover is not covered")
	}
	plan := newTestPlanScreen(t, fixturePlan(false), Options{}, PlanActions{}, 120, 40)
	dialog := newRecoveryDialog(RecoveryOptions{}, nil)
	dialogFull := recoveryHelpOfEveryStage()
	detail := &nodeDetail{keys: defaultNodeDetailKeys()}
	confirm := newConfirmDialog(Options{}, fixturePlan(false), fixtureManyConflicts())
	for _, s := range []struct {
		name string
		keys any
		full [][]key.Binding
	}{
		{"dashboard", dash.keys, dash.FullHelp()},
		{"plan", plan.keys, plan.FullHelp()},
		{"recovery dialog", dialog.keys, dialogFull},
		{"node detail", detail.keys, detail.FullHelp()},
		{"typed confirmation", confirm.keys, confirm.FullHelp()},
	} {
		t.Run(s.name, func(t *testing.T) {
			// The App takes ctrl+z over every screen and dialog.
			if !slices.ContainsFunc(slices.Concat(s.full...), func(h key.Binding) bool { return slices.Equal(h.Keys(), []string{"ctrl+z"}) }) {
				t.Error("ctrl+z (suspend) is not in the full help")
			}
			for field, b := range bindingsOf(s.keys) {
				// The filter's keys are the help of the filter being
				// typed (filterKeys); esc clears an applied one, and the
				// dashboard's help lists it while one is (below).
				if !b.Enabled() || s.name == "dashboard" && (field == "AcceptFilter" || field == "ClearFilter") {
					continue
				}
				if !slices.ContainsFunc(slices.Concat(s.full...), func(h key.Binding) bool {
					// The recovery dialog says each key as its stage
					// uses it ("choose" in the menu, "scroll up" in a plan).
					return slices.Equal(h.Keys(), b.Keys()) && (h.Help() == b.Help() || s.name == "recovery dialog" && h.Help().Key == b.Help().Key)
				}) {
					t.Errorf("%s (%q %q) is not in the full help", field, b.Help().Key, b.Help().Desc)
				}
				named := strings.Split(b.Help().Key, "/")
				for _, k := range b.Keys() {
					label := k
					if l, ok := keyLabels[k]; ok {
						label = l
					}
					if b.Help().Key != label && !slices.Contains(named, label) {
						t.Errorf("%s: key %q is not named in its help %q", field, k, b.Help().Key)
					}
				}
			}
		})
	}
}

// The dashboard's help listed "enter apply filter" and "esc clear filter"
// beside "enter zoom" with no filter to apply or clear; esc clear filter is
// listed, in the footer too, while a filter is applied.
func TestDashboardHelpListsClearFilterWhileAFilterIsOn(t *testing.T) {
	d := newTestDashboard(t, fixtureMidEtcd(), "mono", 120, 40)
	listed := func(bs []key.Binding) bool {
		return slices.ContainsFunc(bs, func(b key.Binding) bool { return b.Help().Desc == "clear filter" })
	}
	accept := func(bs []key.Binding) bool {
		return slices.ContainsFunc(bs, func(b key.Binding) bool { return b.Help().Desc == "apply filter" })
	}
	full := slices.Concat(d.keys.FullHelp()...)
	if listed(full) || accept(full) || listed(d.keys.ShortHelp()) {
		t.Errorf("no filter: the help lists the filter's keys")
	}
	d.setFilter("md-0")
	full = slices.Concat(d.keys.FullHelp()...)
	if !listed(full) || accept(full) || !listed(d.keys.ShortHelp()) {
		t.Errorf("filter on: full help lists clear %v, apply %v; footer lists clear %v", listed(full), accept(full), listed(d.keys.ShortHelp()))
	}
}

// recoveryHelpOfEveryStage is the recovery dialog's full help in each of its
// stages, one after the other: each stage lists only its own keys.
func recoveryHelpOfEveryStage() [][]key.Binding {
	d := newRecoveryDialog(RecoveryOptions{}, []recovery.Offer{{Action: recovery.ActionEtcdRollback, SnapshotFile: "snapshot.json"}})
	var out [][]key.Binding
	for _, st := range []recStage{recMenu, recPlan, recPlanning, recDryRunning, recRunning, recDone} {
		d.stage = st
		out = append(out, d.FullHelp()...)
	}
	// y, where the body shows a command (a refusal's, the closing one's).
	d.cmds = []string{"upgrade-console lock clear lease --cluster mgmt"}
	out = append(out, d.FullHelp()...)
	d.stage = recPlan
	// A plan that runs (enter: dry run), and one refused whose snapshot a
	// local file may give (f).
	d.plan = &recovery.Plan{Steps: []recovery.Step{{Name: "pause"}}}
	out = append(out, d.FullHelp()...)
	d.plan, d.err = nil, errors.New("refused")
	return append(out, d.FullHelp()...)
}
