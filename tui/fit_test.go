package tui

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
	"github.com/upgrade-console/upgrade-console/upgrade"
	"github.com/upgrade-console/upgrade-console/upgrade/recovery"
)

// fitSizes are the terminals every screen must fit: the smallest split
// panes operators use, the default terminal and a large one; under 14
// rows, a tmux pane split twice, where the App gives a dialog 6 to 9 rows.
var fitSizes = [][2]int{{40, 10}, {40, 11}, {40, 12}, {40, 13}, {80, 10}, {80, 12}, {40, 14}, {40, 24}, {80, 24}, {120, 40}}

// TestEveryScreenFitsTheTerminal is the guard for all screens: every screen
// and dialog the console has, drawn by the App from the test fixtures at
// each of fitSizes, has no row wider than the terminal and no more rows
// than it. A row past the edge is cut by the terminal without a mark (the
// plan's q quit at 40 columns), and a screen taller than the terminal
// scrolls its first rows away (the header) or, for a dialog, has its top
// cut by the App (the recovery dialog's title at 40x14).
//
// Left out: the dashboard's held audit entries' line and the hidden
// recovery run's line, which replace the last row and have tests of their
// own (TestTheAppSaysTheAuditEntriesItHolds, the recovery tests); the
// suspend and resume, which draw nothing of their own.
func TestEveryScreenFitsTheTerminal(t *testing.T) {
	q := tea.KeyPressMsg{Code: 'q', Text: "q"}
	help := tea.KeyPressMsg{Code: '?', Text: "?"}
	tab := tea.KeyPressMsg{Code: tea.KeyTab}
	zoom := tea.KeyPressMsg{Code: 'z', Text: "z"}
	slash := tea.KeyPressMsg{Code: '/', Text: "/"}
	keyR := tea.KeyPressMsg{Code: 'R', Text: "R"}
	up := tea.KeyPressMsg{Code: tea.KeyUp}

	for _, sz := range fitSizes {
		w, h := sz[0], sz[1]
		t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
			// The App crops what it composes to the terminal, and cuts a
			// dialog's top where it is taller: each dialog must fit the
			// room the App gives it, or its title goes unseen.
			check := func(t *testing.T, what string, a *App) {
				t.Helper()
				what += fmt.Sprintf(" at %dx%d", w, h)
				requireFits(t, what, a.View().Content, w, h)
				dw, dh := a.dialogSize()
				for _, d := range a.dialogs {
					requireFits(t, what+" (the dialog alone)", d.View(), dw, dh)
					if rd, ok := d.(*recoveryDialog); ok {
						requireCounted(t, what, rd)
					}
				}
			}

			// The dashboard on each fixture, each pane zoomed in turn
			// (zoomed, tab moves the zoom to the next pane), its help
			// and its filter being typed.
			for _, f := range []struct {
				name  string
				state func() *model.ClusterState
			}{{"healthy", fixtureHealthy}, {"mid-etcd", fixtureMidEtcd}, {"inplace-failed", fixtureInPlaceFailed},
				{"paused-after-rollback", fixturePausedAfterRollback}, {"detail", fixtureDetail}, {"no-snapshot", nil}} {
				t.Run("dashboard/"+f.name, func(t *testing.T) {
					opts := Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0), ClusterName: "mgmt"}
					a := NewApp(opts, NewDashboard(opts))
					a.Update(tea.WindowSizeMsg{Width: w, Height: h})
					a.Update(firstThemeMsg{})
					if f.state != nil {
						a.Update(SnapshotMsg{State: f.state()})
					}
					check(t, "the dashboard", a)
					pressApp(t, a, zoom)
					for i := range paneCount {
						d := dashboardOf(t, a)
						if !d.Zoomed() {
							t.Fatalf("pane %d is not zoomed", i)
						}
						check(t, "the dashboard zoomed on "+d.Focus(), a)
						pressApp(t, a, tab)
					}
					pressApp(t, a, zoom)
					pressApp(t, a, help)
					if d := dashboardOf(t, a); !d.help.ShowAll {
						t.Fatal("? did not open the help")
					}
					check(t, "the dashboard's help", a)
					pressApp(t, a, help, slash)
					pressApp(t, a, typeText("md-0")...)
					if d := dashboardOf(t, a); !d.filtering || d.Filter() != "md-0" {
						t.Fatalf("the filter is not being typed (%q)", d.Filter())
					}
					check(t, "the dashboard's filter", a)
				})
			}

			t.Run("dashboard/quit-prompt", func(t *testing.T) {
				held := func() LockInfo {
					return LockInfo{Holder: "alice@laptop (console 3f2a9c1e)", Renewed: ago(2 * time.Second)}
				}
				opts := Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0), ClusterName: "mgmt", Lock: held}
				a := NewApp(opts, NewDashboard(opts))
				a.Update(tea.WindowSizeMsg{Width: w, Height: h})
				a.Update(firstThemeMsg{})
				a.Update(SnapshotMsg{State: fixtureMidEtcd()})
				pressApp(t, a, q)
				if !strings.Contains(ansi.Strip(a.View().Content), "q again") {
					t.Fatalf("no quit prompt:\n%s", ansi.Strip(a.View().Content))
				}
				check(t, "the quit prompt", a)
			})

			t.Run("node-detail", func(t *testing.T) {
				a := detailApp(t, fixtureDetail(), w, h)
				filterTo(t, a, "b8k4m")
				pressRun(t, a, keyD)
				topDetail(t, a)
				check(t, "the node detail", a)
				pressApp(t, a, tea.KeyPressMsg{Code: 'G', Text: "G"})
				check(t, "the node detail at its end", a)
				pressApp(t, a, help)
				if !topDetail(t, a).help.ShowAll {
					t.Fatal("? did not open the node detail's help")
				}
				check(t, "the node detail's help", a)
			})

			t.Run("etcd-detail", func(t *testing.T) {
				a := detailApp(t, fixtureMidEtcd(), w, h)
				d := dashboardOf(t, a)
				// Where the dashboard does not show the etcd pane
				// (too short for it): zoomed, tab takes the zoom to
				// it, as an operator reaches it there.
				if !d.plan.visible[paneEtcd] {
					pressApp(t, a, zoom)
					for range paneCount {
						if d.Focus() == "ETCD" {
							break
						}
						pressApp(t, a, tab)
					}
					if d.Focus() != "ETCD" {
						t.Fatalf("at %dx%d zoom and tab did not reach the etcd pane (focus %s)", w, h, d.Focus())
					}
				} else {
					focusEtcd(t, d, func(k tea.KeyPressMsg) { pressApp(t, a, k) })
				}
				pressRun(t, a, keyD)
				topDetail(t, a)
				check(t, "the etcd member's detail", a)
			})

			// The recovery dialog over the dashboard at each stage: the
			// menu R opens, the plan, its help, the typed confirmation
			// (a name refused, scrolled up), the run and its end.
			t.Run("recovery", func(t *testing.T) {
				f := &fakeRecovery{p: planFixture()}
				state := stuckEtcdState(t0)
				state.Cluster.Generation, state.Cluster.ObservedGeneration = 2, 2
				opts := Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0), ClusterName: "mgmt",
					Actions: []Action{RecoveryAction(RecoveryOptions{backend: f, Now: func() time.Time { return t0 }})}}
				a := NewApp(opts, NewDashboard(opts))
				a.Update(tea.WindowSizeMsg{Width: w, Height: h})
				a.Update(firstThemeMsg{})
				a.Update(SnapshotMsg{State: state})
				pressRun(t, a, keyR)
				d, ok := a.dialogs[len(a.dialogs)-1].(*recoveryDialog)
				if !ok {
					t.Fatalf("R opened %T", a.dialogs[len(a.dialogs)-1])
				}
				noBlink(d)
				// shows checks that the title and the keys that leave
				// are in view: an operator on a small pane in an
				// emergency reads what the dialog is, and how to go.
				shows := func(t *testing.T, what string, want ...string) {
					t.Helper()
					screen := ansi.Strip(a.View().Content)
					for _, s := range want {
						if !strings.Contains(screen, s) {
							t.Errorf("%s at %dx%d: %q not in view:\n%s", what, w, h, s, screen)
						}
					}
				}
				check(t, "the recovery menu", a)
				shows(t, "the recovery menu", "Recovery", "› Roll back", "enter plan", "esc close")
				press(t, d, enter)
				check(t, "the recovery plan", a)
				press(t, d, help)
				check(t, "the recovery plan's help", a)
				press(t, d, help)
				press(t, d, enter)
				if d.stage != recConfirm {
					t.Fatalf("stage %v, want the typed confirmation", d.Stage())
				}
				check(t, "the typed confirmation", a)
				press(t, d, typeText("mg")...)
				press(t, d, enter)
				check(t, "the typed confirmation, a name refused", a)
				press(t, d, up, up, up)
				check(t, "the typed confirmation, scrolled up", a)
				press(t, d, tea.KeyPressMsg{Code: tea.KeyBackspace}, tea.KeyPressMsg{Code: tea.KeyBackspace})
				press(t, d, typeText("mgmt-etcd")...)
				press(t, d, enter)
				if d.stage != recDone {
					t.Fatalf("stage %v, want the run's end", d.Stage())
				}
				check(t, "the recovery's end", a)
				shows(t, "the recovery's end", "Recovery", "esc close")
				press(t, d, help)
				check(t, "the recovery's end's help", a)
				press(t, d, help)
				// The run under way, as its steps come (the run above was
				// synchronous): drawn from the steps it recorded.
				d.stage, d.follow = recRunning, true
				d.relayout()
				check(t, "the recovery run", a)
				shows(t, "the recovery run", "Recovery", "esc hide", "ctrl+c stop")
				d.stopping = true
				d.relayout()
				check(t, "the recovery run stopping", a)
				shows(t, "the recovery run stopping", "Recovery", "stopping")
			})

			t.Run("recovery/file", func(t *testing.T) {
				noSnapshot := &recovery.RefusedError{Action: recovery.ActionEtcdRollback, Cluster: "mgmt",
					Preconditions: []recovery.Precondition{{Name: "snapshot", Detail: "no snapshot ConfigMap of cluster mgmt in eksa-system; if its local copy is kept, restore from it with --snapshot-file"}}}
				f := &fakeRecovery{planErr: noSnapshot, copies: []string{"snapshots/upgrade-console-snapshot-mgmt-20261122-101500.json"}}
				d := testDialog(RecoveryOptions{}, f)
				a := recoveryOverDashboard(w, h, d)
				press(t, d, enter)
				check(t, "the recovery refused for want of a snapshot", a)
				press(t, d, typeText("f")...)
				if d.stage != recFile {
					t.Fatalf("stage %v, want the file", d.Stage())
				}
				check(t, "the snapshot file's prompt", a)
			})

			// The plan screen (R offered for the stale lock and the
			// leftover pause), its help, and the typed confirmation of
			// the apply over it.
			t.Run("plan", func(t *testing.T) {
				state := fixtureHealthy()
				state.Cluster.Annotations[model.AnnotationEKSAPaused] = "true"
				rec := RecoveryAction(RecoveryOptions{backend: &fakeRecovery{p: planFixture()}, Now: func() time.Time { return t0 }})
				opts := Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0), ClusterName: "mgmt", Actions: []Action{rec}}
				a := NewApp(opts, NewPlanScreen(context.Background(), opts, fixtureStaleLockPlan(), (&fakeActions{}).actions()))
				a.Update(tea.WindowSizeMsg{Width: w, Height: h})
				a.Update(firstThemeMsg{})
				a.Update(SnapshotMsg{State: state})
				check(t, "the plan", a)
				if !strings.Contains(ansi.Strip(a.View().Content), "R recover") {
					t.Fatalf("the plan does not offer R:\n%s", ansi.Strip(a.View().Content))
				}
				pressApp(t, a, help)
				check(t, "the plan's help", a)
			})
			for _, c := range []struct {
				name string
				dry  func() *upgrade.DryRunResult
			}{{"plan/confirm", fixtureDryRun}, {"plan/confirm-conflicts", fixtureManyConflicts}} {
				t.Run(c.name, func(t *testing.T) {
					a, _ := confirmOnApp(t, c.dry(), w, h)
					check(t, "the apply's typed confirmation", a)
					appKeys(a, typeText("mg")...)
					check(t, "the apply's typed confirmation, typed", a)
				})
			}
		})
	}
}

// requireFits checks that a screen has no more than h rows and none wider
// than w cells.
func requireFits(t *testing.T, what, out string, w, h int) {
	t.Helper()
	lines := strings.Split(out, "\n")
	if len(lines) > h {
		t.Errorf("%s: %d rows, more than %d:\n%s", what, len(lines), h, ansi.Strip(out))
	}
	for i, l := range lines {
		if got := ansi.StringWidth(l); got > w {
			t.Errorf("%s: row %d is %d cells wide, more than %d: %q", what, i, got, w, ansi.Strip(l))
		}
	}
}

// outOfView is the count of rows out of view, in any of its forms: "(3
// above, 0 below)", "↑/↓ 3↑ 0↓", "3↑ 0↓".
var outOfView = regexp.MustCompile(`\(\d+ above, \d+ below\)|\d+↑ \d+↓`)

// requireCounted checks that a recovery dialog cut by its room says so: a
// body taller than its rows (the menu, which counts its offers, aside) and
// a full help taller than its rows count the rows out of view. At 40x10 the
// count did not fit beside "enter/esc close · q quit" and was left out: the
// run's end showed its last two rows with no sign of the rest, and the
// help "? help" and "esc close help" alone.
func requireCounted(t *testing.T, what string, d *recoveryDialog) {
	t.Helper()
	screen := ansi.Strip(d.View())
	// The full help takes the keys' line, and the body's count with it.
	helpShown := d.help.ShowAll && !d.typing()
	cut := d.stage != recMenu && d.maxOffset > 0 && !helpShown
	if helpShown {
		for _, r := range strings.Split(fullHelpFitting(d.help, d.FullHelp(), d.innerWidth()), "\n") {
			if r = strings.TrimSpace(ansi.Strip(r)); r != "" && !strings.Contains(screen, r) {
				cut = true
			}
		}
	}
	if cut && !outOfView.MatchString(screen) {
		t.Errorf("%s: cut, and no count of the rows out of view:\n%s", what, screen)
	}
}

// shortSizes are terminals under 14 rows, where the dialogs that read a
// typed confirmation have a few rows: these must fit, and keep in view what
// the operator types and the keys (the guard above checks only the fit).
var shortSizes = [][2]int{{40, 10}, {80, 12}}

// TestTypedConfirmationsFitShortTerminals: the typed confirmations of a
// recovery (etcd rollback, lock clear, node retry), the snapshot file's
// prompt and the apply's confirmation fit the dialog's room on a terminal
// under 14 rows, and keep in view the input, what to type and the keys.
// Taller than the room, the App cut their top, and with it the rows that
// name what to type.
// A typed confirmation whose name was refused at 80x12, the terminal then
// made 40x10: the one plan row kept was the plan's ("mgmt: delete (only if
// not"), not the prompt's first, which names what to type (r3).
func TestTypedConfirmationResizedShorterShowsWhatToType(t *testing.T) {
	p := planFixture()
	p.Action, p.Confirm, p.ConfirmObject = recovery.ActionLockClear, "upgrade-console-lock-mgmt", "Lease eksa-system/upgrade-console-lock-mgmt"
	d := testDialog(RecoveryOptions{}, &fakeRecovery{p: p})
	a := recoveryOverDashboard(80, 12, d)
	press(t, d, enter, enter)
	press(t, d, typeText("mg")...)
	press(t, d, enter)
	a.Update(tea.WindowSizeMsg{Width: 40, Height: 10})
	screen := ansi.Strip(a.View().Content)
	requireFits(t, "resized to 40x10", a.View().Content, 40, 10)
	if !strings.Contains(screen, `"upgrade-console-lock-mgmt"`) || !strings.Contains(screen, "> mg") {
		t.Errorf("resized to 40x10, what to type is not in view:\n%s", screen)
	}
}

func TestTypedConfirmationsFitShortTerminals(t *testing.T) {
	up := tea.KeyPressMsg{Code: tea.KeyUp}
	for _, sz := range shortSizes {
		w, h := sz[0], sz[1]
		t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
			check := func(t *testing.T, what string, a *App, shows ...string) {
				t.Helper()
				requireFits(t, what, a.View().Content, w, h)
				dw, dh := a.dialogSize()
				for _, d := range a.dialogs {
					requireFits(t, what+" (the dialog alone)", d.View(), dw, dh)
				}
				screen := ansi.Strip(a.View().Content)
				// s is in view, or one of its alternatives (a|b).
				for _, s := range shows {
					if !slices.ContainsFunc(strings.Split(s, "|"), func(s string) bool { return strings.Contains(screen, s) }) {
						t.Errorf("%s: %q not in view:\n%s", what, s, screen)
					}
				}
			}
			// pin keeps the top dialog as drawn, to read in review.
			pin := func(t *testing.T, name string, a *App) {
				t.Helper()
				t.Run(name, func(t *testing.T) {
					golden.RequireEqual(t, ansi.Strip(a.dialogs[len(a.dialogs)-1].View()))
				})
			}
			lockClear := planFixture()
			lockClear.Action, lockClear.Confirm, lockClear.ConfirmObject = recovery.ActionLockClear, "upgrade-console-lock-mgmt", "Lease eksa-system/upgrade-console-lock-mgmt"
			nodeRetry, _ := nodeRetryFixture()
			for _, p := range []*recovery.Plan{planFixture(), lockClear, nodeRetry} {
				t.Run("recovery/"+p.Action, func(t *testing.T) {
					f := &fakeRecovery{p: p}
					d := testDialog(RecoveryOptions{}, f)
					a := recoveryOverDashboard(w, h, d)
					press(t, d, enter, enter)
					if d.stage != recConfirm {
						t.Fatalf("stage %v, want the typed confirmation", d.Stage())
					}
					name := `"` + p.Confirm + `"`
					check(t, "the typed confirmation", a, name, "> ", "esc back")
					press(t, d, typeText("mg")...)
					press(t, d, enter)
					check(t, "the typed confirmation, a name refused", a, name, "> mg", "esc back")
					pin(t, "refused", a)
					press(t, d, up, up, up)
					check(t, "the typed confirmation, scrolled up", a, "> mg", "esc back")
				})
			}
			t.Run("recovery/file", func(t *testing.T) {
				noSnapshot := &recovery.RefusedError{Action: recovery.ActionEtcdRollback, Cluster: "mgmt",
					Preconditions: []recovery.Precondition{{Name: "snapshot", Detail: "no snapshot ConfigMap of cluster mgmt in eksa-system"}}}
				d := testDialog(RecoveryOptions{}, &fakeRecovery{planErr: noSnapshot})
				a := recoveryOverDashboard(w, h, d)
				press(t, d, enter)
				press(t, d, typeText("f")...)
				if d.stage != recFile {
					t.Fatalf("stage %v, want the file", d.Stage())
				}
				check(t, "the snapshot file's prompt", a, "> ", "esc back")
				d.input.SetValue("")
				press(t, d, enter)
				check(t, "the snapshot file's prompt, none typed", a, "snapshot file", "> ", "esc back")
			})
			for _, c := range []struct {
				name string
				dry  func() *upgrade.DryRunResult
			}{{"plan/confirm", fixtureDryRun}, {"plan/confirm-conflicts", fixtureManyConflicts}} {
				t.Run(c.name, func(t *testing.T) {
					a, _ := confirmOnApp(t, c.dry(), w, h)
					check(t, "the apply's typed confirmation", a, `(mgmt)|"mgmt"`, "> ", "esc cancel")
					pin(t, "open", a)
					appKeys(a, typeText("mg")...)
					appKeys(a, tea.KeyPressMsg{Code: tea.KeyEnter})
					check(t, "the apply's typed confirmation, a name refused", a, `"mgmt"`, "> mg", "esc cancel")
					pin(t, "refused", a)
				})
			}
		})
	}
}

// recoveryOverDashboard opens d over the dashboard of a stuck etcd rollout
// at w×h, as R does, its cursor kept from blinking (the App's theme, on
// opening, made it blink again).
func recoveryOverDashboard(w, h int, d *recoveryDialog) *App {
	opts := Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0), ClusterName: "mgmt"}
	a := NewApp(opts, NewDashboard(opts))
	a.Update(tea.WindowSizeMsg{Width: w, Height: h})
	a.Update(firstThemeMsg{})
	a.Update(SnapshotMsg{State: stuckEtcdState(t0)})
	a.Update(OpenDialogMsg{Dialog: d})
	noBlink(d)
	return a
}
