package tui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
	"github.com/upgrade-console/upgrade-console/upgrade/recovery"
)

// The upgrade lock Lease as the watchers see it: another console's, live,
// and the one a console that died three hours ago left behind (the demo's
// stale-lock scenario).

func foreignLock() *model.Lock {
	return &model.Lock{Namespace: model.SystemNamespace, Name: model.LockName("mgmt"), HolderIdentity: "bob@bastion-2/77aa01fe",
		AcquireTime: ago(20 * time.Minute), RenewTime: ago(3 * time.Second), Duration: time.Minute}
}

func staleLock() *model.Lock {
	return &model.Lock{Namespace: model.SystemNamespace, Name: model.LockName("mgmt"), HolderIdentity: "ops@bastion-1/5d0c9e1a",
		AcquireTime: ago(3*time.Hour + 20*time.Minute), RenewTime: ago(3 * time.Hour), Duration: time.Minute}
}

func withLock(s *model.ClusterState, l *model.Lock) *model.ClusterState {
	s.Lock = l
	return s
}

// recoveryDashboard is a dashboard with the recovery action, on the fake
// clock its offers are judged by.
func recoveryDashboard(clk *clocktesting.FakePassiveClock, s *model.ClusterState, w, h int) *Dashboard {
	opts := Options{Theme: themes.Mono, Clock: clk, ClusterName: "mgmt",
		Actions: []Action{RecoveryAction(RecoveryOptions{Now: clk.Now})}}
	d := NewDashboard(opts)
	d.SetSize(w, h)
	d.Update(SnapshotMsg{State: s})
	return d
}

// TestHeaderLockGoldens pins the header with a lock this console does not
// hold: a live one in the muted style, a stale one as a warning.
func TestHeaderLockGoldens(t *testing.T) {
	for _, f := range []struct {
		name string
		lock func() *model.Lock
	}{{"foreign-lock", foreignLock}, {"stale-lock", staleLock}} {
		for _, th := range goldenThemes {
			for _, w := range []int{80, 120} {
				t.Run(fmt.Sprintf("%s/%s/%d", f.name, th, w), func(t *testing.T) {
					d := newTestDashboard(t, withLock(fixtureHealthy(), f.lock()), th, w, 40)
					var b strings.Builder
					d.header.render(&b, d.st, w, d.now)
					requireShape(t, b.String(), w, 2)
					golden.RequireEqual(t, b.String())
				})
			}
		}
	}
}

var k8sTarget = regexp.MustCompile(`  k8s (1\.30 )?(→ )?1\.31 `)

// TestHeaderKeepsTheKubernetesVersionBesideALock: at 80 columns a lock
// badge (another console's, a stale one, this console's own, its renewal
// failing) took the Kubernetes version off the header, the version an
// operator reads first; the EKS-A version gives way before it.
func TestHeaderKeepsTheKubernetesVersionBesideALock(t *testing.T) {
	own := func(renewErr string) func() LockInfo {
		return func() LockInfo {
			return LockInfo{Holder: "alice@laptop (console 3f2a9c1e)", Renewed: ago(2 * time.Second), RenewErr: renewErr}
		}
	}
	for _, tc := range []struct {
		name  string
		lock  *model.Lock
		own   func() LockInfo
		badge string
	}{
		{"foreign", foreignLock(), nil, "lock: bob@bastion-2"},
		{"stale", staleLock(), nil, "⚠ lock: ops@bastion-1 stale 3h00m"},
		{"own", nil, own(""), "lock: this console"},
		{"own-renewal-failing", nil, own("leases.coordination.k8s.io \"upgrade-console-mgmt\" is forbidden"), "lock: this console ⚠ renewal failing"},
		// Unrenewed past its lease: another console may clear or take
		// it, and "renewal failing" read as a lock still held.
		{"own-stale", nil, func() LockInfo {
			return LockInfo{Holder: "alice@laptop (console 3f2a9c1e)", Renewed: ago(2 * time.Minute), Expires: ago(time.Minute),
				RenewErr: "the audit log refuses entries: audit log /var/lib/audit.log: no space left on device"}
		}, "stale"},
	} {
		for _, f := range []struct {
			name  string
			state func() *model.ClusterState
		}{{"at-rest", fixtureHealthy}, {"mid-upgrade", fixtureMidEtcd}} {
			t.Run(tc.name+"/"+f.name, func(t *testing.T) {
				opts := Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0), ClusterName: "mgmt", Lock: tc.own}
				d := NewDashboard(opts)
				d.SetSize(80, 40)
				d.Update(SnapshotMsg{State: withLock(f.state(), tc.lock)})
				var b strings.Builder
				d.header.render(&b, d.st, 80, d.now)
				requireShape(t, b.String(), 80, 2)
				first, _, _ := strings.Cut(ansi.Strip(b.String()), "\n")
				if !k8sTarget.MatchString(first) {
					t.Errorf("at 80 columns the header lacks the Kubernetes version:\n%s", first)
				}
				if !strings.Contains(first, tc.badge) {
					t.Errorf("at 80 columns the header lacks %q:\n%s", tc.badge, first)
				}
			})
		}
	}
}

// TestHeaderOwnLockGoldens pins the header at 80 columns, mid-upgrade, with
// the lock this console holds while it applies: renewed, and its renewal
// failing.
func TestHeaderOwnLockGoldens(t *testing.T) {
	for _, tc := range []struct {
		name     string
		renewErr string
	}{{"held", ""}, {"renewal-failing", "context deadline exceeded"}} {
		for _, th := range goldenThemes {
			t.Run(fmt.Sprintf("%s/%s/80", tc.name, th), func(t *testing.T) {
				lock := func() LockInfo {
					return LockInfo{Holder: "alice@laptop (console 3f2a9c1e)", Renewed: ago(2 * time.Second), RenewErr: tc.renewErr}
				}
				d := NewDashboard(Options{Theme: th, Clock: clocktesting.NewFakePassiveClock(t0), ClusterName: "mgmt", Lock: lock})
				d.SetSize(80, 40)
				d.Update(SnapshotMsg{State: fixtureMidEtcd()})
				var b strings.Builder
				d.header.render(&b, d.st, 80, d.now)
				requireShape(t, b.String(), 80, 2)
				golden.RequireEqual(t, b.String())
			})
		}
	}
}

func TestHeaderShowsTheWatchedLock(t *testing.T) {
	d := newTestDashboard(t, withLock(fixtureHealthy(), foreignLock()), themes.Mono, 120, 40)
	if out := screenOf(d); !strings.Contains(out, "lock: bob@bastion-2 (renewed 3s ago)") {
		t.Errorf("foreign lock not in the header:\n%s", out)
	}
	d = newTestDashboard(t, withLock(fixtureHealthy(), staleLock()), themes.Dark, 120, 40)
	want := d.st.th.BadgeStale.S(d.st.th.Sym.Warn + " lock: ops@bastion-1 stale 3h00m")
	if raw := d.View(); !strings.Contains(raw, want) {
		t.Errorf("stale lock not painted as a warning:\n%s", screenOf(d))
	}
	kept := foreignLock()
	kept.Kept = "upgrade failed: boom"
	if out := screenOf(newTestDashboard(t, withLock(fixtureHealthy(), kept), themes.Mono, 120, 40)); !strings.Contains(out, "lock: bob@bastion-2 kept") {
		t.Errorf("kept lock not in the header:\n%s", out)
	}
	released := foreignLock()
	released.HolderIdentity = ""
	if out := screenOf(newTestDashboard(t, withLock(fixtureHealthy(), released), themes.Mono, 120, 40)); strings.Contains(out, "lock:") {
		t.Errorf("a released lease is shown:\n%s", out)
	}
}

// The lock this console takes for a recovery action (an etcd rollback from
// R) read as another console's: "lock: bob@bastion-2 (renewed 3s ago)".
func TestHeaderKnowsTheLockOfItsOwnRecovery(t *testing.T) {
	opts := Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0), ClusterName: "mgmt", SelfHolder: foreignLock().HolderIdentity}
	d := NewDashboard(opts)
	d.SetSize(120, 40)
	d.Update(SnapshotMsg{State: withLock(fixtureHealthy(), foreignLock())})
	if out := screenOf(d); !strings.Contains(out, "lock: held by this console (renewed 3s ago)") || strings.Contains(out, "bob@bastion-2") {
		t.Errorf("its own lock reads as another console's:\n%s", out)
	}
}

// TestHeaderOwnLockWins: while this console holds the lock the header shows
// its own view of it (renewed by this process), not the watched lease; once
// it lost the lock, the watched lease says who has it now.
func TestHeaderOwnLockWins(t *testing.T) {
	own := LockInfo{Holder: "alice@laptop (console 3f2a9c1e)", Renewed: ago(2 * time.Second)}
	for _, tc := range []struct {
		name      string
		lock      func() LockInfo
		want, not []string
	}{
		{"held", func() LockInfo { return own }, []string{"lock: held by this console (renewed 2s ago)"}, []string{"bob@bastion-2", "alice@laptop"}},
		{"lost", func() LockInfo { return LockInfo{Lost: true} }, []string{"lock lost", "lock: bob@bastion-2 (renewed 3s ago)"}, nil},
		{"not taken yet", func() LockInfo { return LockInfo{} }, []string{"lock: bob@bastion-2 (renewed 3s ago)"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := NewDashboard(Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0), Lock: tc.lock})
			d.SetSize(160, 40)
			d.Update(SnapshotMsg{State: withLock(fixtureHealthy(), foreignLock())})
			out := screenOf(d)
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("header lacks %q:\n%s", w, out)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(out, n) {
					t.Errorf("header shows %q:\n%s", n, out)
				}
			}
		})
	}
}

// TestStaleLeaseAloneOffersRecovery pins the whole screen of a healthy
// cluster whose only leftover is a stale lock: the help offers R.
func TestStaleLeaseAloneOffersRecovery(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(t0)
	if out := screenOf(recoveryDashboard(clk, fixtureHealthy(), 80, 24)); strings.Contains(out, "recover") {
		t.Fatalf("R offered for a healthy cluster:\n%s", out)
	}
	for _, sz := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			d := recoveryDashboard(clk, withLock(fixtureHealthy(), staleLock()), sz[0], sz[1])
			out := screenOf(d)
			requireLines(t, out, sz[0], sz[1])
			if !strings.Contains(out, "R recover") {
				t.Errorf("help lacks R for a stale lease:\n%s", out)
			}
			golden.RequireEqual(t, out)
		})
	}
}

// TestLeaseGoingStaleOffersRecoveryOnTheTick: no snapshot arrives when a
// lease expires (nobody writes it), so the clock tick alone must bring R.
func TestLeaseGoingStaleOffersRecoveryOnTheTick(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(t0)
	lock := foreignLock() // renewed 3s ago, for a minute
	d := recoveryDashboard(clk, withLock(fixtureHealthy(), lock), 120, 40)
	if out := screenOf(d); strings.Contains(out, "R recover") || !strings.Contains(out, "lock: bob@bastion-2 (renewed 3s ago)") {
		t.Fatalf("live lease:\n%s", out)
	}
	clk.SetTime(t0.Add(50 * time.Second))
	d.Update(clockMsg{})
	if out := screenOf(d); strings.Contains(out, "R recover") {
		t.Fatalf("R offered before the lease expired:\n%s", out)
	}
	clk.SetTime(t0.Add(58 * time.Second))
	d.Update(clockMsg{})
	out := screenOf(d)
	if !strings.Contains(out, "R recover") || !strings.Contains(out, "⚠ lock: bob@bastion-2 stale 1m") {
		t.Fatalf("a minute after the last renewal, without a new snapshot:\n%s", out)
	}
}

// TestLeaseNotCalledStaleWhileReconnecting: a console that lost its
// connection to the API server sees no renewal; the holder may be renewing
// all along. It called the lease stale ("⚠ lock: … stale 1m") and offered R
// to clear it; judged when the connection was lost, it is not.
func TestLeaseNotCalledStaleWhileReconnecting(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(t0)
	s := withLock(fixtureHealthy(), foreignLock()) // renewed 3s ago, for a minute
	s.Connection, s.ConnectionSince = model.Reconnecting, t0.Add(20*time.Second)
	d := recoveryDashboard(clk, s, 120, 40)
	clk.SetTime(t0.Add(90 * time.Second))
	d.Update(clockMsg{})
	if out := screenOf(d); strings.Contains(out, "R recover") || strings.Contains(out, "stale") {
		t.Fatalf("reconnecting, the lease renewed when the connection was lost:\n%s", out)
	}
}

// TestLeaseOfAHolderWhoseClockIsBehindIsLiveWhileSeenRenewing: bob's clock
// runs 3 minutes behind; the watchers saw his renewal arrive 3s ago. The
// header called it "stale 3m" and R offered to clear it, by his renewTime;
// it is live until his renewals stop for a minute.
func TestLeaseOfAHolderWhoseClockIsBehindIsLiveWhileSeenRenewing(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(t0)
	l := foreignLock()
	l.RenewTime, l.Seen, l.Arrived = ago(3*time.Minute+3*time.Second), ago(3*time.Second), true
	d := recoveryDashboard(clk, withLock(fixtureHealthy(), l), 120, 40)
	if out := screenOf(d); !strings.Contains(out, "lock: bob@bastion-2 (renewed 3s ago)") || strings.Contains(out, "R recover") {
		t.Fatalf("a lock seen renewed 3s ago, its holder's clock 3m behind:\n%s", out)
	}
	clk.SetTime(t0.Add(time.Minute))
	d.Update(clockMsg{})
	if out := screenOf(d); !strings.Contains(out, "lock: bob@bastion-2 stale 1m") || !strings.Contains(out, "R recover") {
		t.Errorf("no renewal seen for 1m3s:\n%s", out)
	}
}

// TestFlowStaleLeaseOffersRecovery runs the App: the first snapshot holds
// only a stale lock, and the help shows R.
func TestFlowStaleLeaseOffersRecovery(t *testing.T) {
	opts := Options{Actions: []Action{RecoveryAction(RecoveryOptions{Now: func() time.Time { return t0 }})}}
	tm, _ := startApp(t, withLock(fixtureHealthy(), staleLock()), opts)
	_, screen := finish(t, tm)
	for _, want := range []string{"R recover", "lock: ops@bastion-1 stale 3h00m"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
}

// TestLeaseSourceDoesNotHoldUpSync: the lock is informational. A Lease
// source still listing, forbidden or failing must not keep the dashboard
// (and the benchmark's "all panes synced") from counting as synced.
func TestLeaseSourceDoesNotHoldUpSync(t *testing.T) {
	for name, src := range map[string]model.SourceStatus{
		"listing":   {Installed: true},
		"forbidden": {Installed: true, Forbidden: "list leases.coordination.k8s.io in eksa-system"},
		"failing":   {Installed: true, Err: "the server is currently unable to handle the request"},
	} {
		s := fixtureHealthy()
		s.Sources[model.KindNodeKubeadmUpgrade] = model.SourceStatus{Installed: true, Synced: true}
		if !frameSynced(s) {
			t.Fatalf("fixture not synced: %v", s.Sources)
		}
		s.Sources[model.KindLease] = src
		if !frameSynced(s) {
			t.Errorf("%s Lease source holds up sync", name)
		}
		if out := screenOf(newTestDashboard(t, s, themes.Mono, 120, 40)); strings.Contains(out, "forbidden") || strings.Contains(out, "syncing") {
			t.Errorf("%s Lease source shows in a pane:\n%s", name, out)
		}
	}
}

// TestQuitAsksWhileHoldingTheLock: on the dashboard of apply --tui, a q
// while this console holds the lock of an upgrade under way asks once more
// (quitting releases the lock while the cluster goes on); another key keeps
// the console and does its own work. Without a held lock (watch, a lock
// kept after a failure, or lost) q quits at once, and ctrl+c always does.
func TestQuitAsksWhileHoldingTheLock(t *testing.T) {
	held := func() LockInfo {
		return LockInfo{Holder: "alice@laptop (console 3f2a9c1e)", Renewed: ago(2 * time.Second)}
	}
	dash := func(lock func() LockInfo, w, h int) *Dashboard {
		d := NewDashboard(Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0), ClusterName: "mgmt", Lock: lock})
		d.SetSize(w, h)
		d.Update(SnapshotMsg{State: fixtureMidEtcd()})
		return d
	}
	q := tea.KeyPressMsg{Code: 'q', Text: "q"}
	quits := func(cmd tea.Cmd) bool {
		if cmd == nil {
			return false
		}
		_, ok := cmd().(tea.QuitMsg)
		return ok
	}

	for _, sz := range [][2]int{{80, 24}, {120, 40}, {60, 8}} {
		t.Run(fmt.Sprintf("asks/%dx%d", sz[0], sz[1]), func(t *testing.T) {
			d := dash(held, sz[0], sz[1])
			_, cmd := d.Update(q)
			if quits(cmd) {
				t.Fatal("q quit at once while holding the lock of an upgrade under way")
			}
			out := screenOf(d)
			requireLines(t, out, sz[0], sz[1])
			if !strings.Contains(out, "q again quits") {
				t.Fatalf("no quit prompt:\n%s", out)
			}
			if sz[0] == 120 {
				golden.RequireEqual(t, out)
			}
			if _, cmd = d.Update(q); !quits(cmd) {
				t.Fatal("a second q did not quit")
			}
		})
	}

	t.Run("another key stays", func(t *testing.T) {
		d := dash(held, 120, 40)
		d.Update(q)
		_, cmd := d.Update(tea.KeyPressMsg{Code: tea.KeyTab})
		if quits(cmd) || strings.Contains(screenOf(d), "q again quits") {
			t.Fatalf("tab did not dismiss the prompt:\n%s", screenOf(d))
		}
		if d.Focus() == paneNodes.String() {
			t.Error("tab, which dismissed the prompt, did not also move the focus")
		}
		if _, cmd = d.Update(q); quits(cmd) {
			t.Fatal("a q after the prompt was dismissed quit at once")
		}
		d.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
		if strings.Contains(screenOf(d), "q again quits") {
			t.Fatalf("esc did not dismiss the prompt:\n%s", screenOf(d))
		}
	})

	for _, tc := range []struct {
		name string
		lock func() LockInfo
	}{
		{"watch", nil},
		{"kept", func() LockInfo { l := held(); l.Kept = true; return l }},
		{"lost", func() LockInfo { return LockInfo{Lost: true} }},
		{"released", func() LockInfo { return LockInfo{} }},
	} {
		t.Run("at once/"+tc.name, func(t *testing.T) {
			if _, cmd := dash(tc.lock, 120, 40).Update(q); !quits(cmd) {
				t.Error("q did not quit at once")
			}
		})
	}
	t.Run("ctrl+c", func(t *testing.T) {
		if _, cmd := dash(held, 120, 40).Update(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}); !quits(cmd) {
			t.Error("ctrl+c did not quit at once")
		}
	})
	// The demo's world stops with the console: --auto-start's dashboard
	// holds no lock, and one q ended it mid-upgrade without a word. At
	// rest (no upgrade) q quits at once.
	t.Run("demo, no lock", func(t *testing.T) {
		for _, c := range []struct {
			state *model.ClusterState
			asks  bool
		}{{fixtureMidEtcd(), true}, {fixtureHealthy(), false}} {
			d := NewDashboard(Options{Theme: themes.Mono, Clock: clocktesting.NewFakePassiveClock(t0), ClusterName: "mgmt", Demo: true})
			d.SetSize(120, 40)
			d.Update(SnapshotMsg{State: c.state})
			_, cmd := d.Update(q)
			if quits(cmd) == c.asks || strings.Contains(screenOf(d), "the demo's world") != c.asks {
				t.Errorf("under way %v: quit at once %v:\n%s", c.asks, quits(cmd), screenOf(d))
			}
		}
	})
}

// TestQuitFromTheRecoveryDialogAsksToo: q in the R menu, over the dashboard
// of apply --tui, is the dashboard's q: while this console holds the lock of
// an upgrade under way the dialog closes and the footer asks once more;
// without a held lock it quits at once.
func TestQuitFromTheRecoveryDialogAsksToo(t *testing.T) {
	held := func() LockInfo {
		return LockInfo{Holder: "alice@laptop (console 3f2a9c1e)", Renewed: ago(2 * time.Second)}
	}
	q := tea.KeyPressMsg{Code: 'q', Text: "q"}
	// run feeds a command's messages back to the App, as the program
	// would, and reports whether one of them quit.
	var run func(a *App, cmd tea.Cmd) bool
	run = func(a *App, cmd tea.Cmd) bool {
		if cmd == nil {
			return false
		}
		switch msg := cmd().(type) {
		case tea.QuitMsg:
			return true
		case tea.BatchMsg:
			for _, c := range msg {
				if run(a, c) {
					return true
				}
			}
			return false
		default:
			_, next := a.Update(msg)
			return run(a, next)
		}
	}
	for _, tc := range []struct {
		name string
		lock func() LockInfo
		asks bool
	}{{"lock held", held, true}, {"watch", nil, false}} {
		t.Run(tc.name, func(t *testing.T) {
			opts := Options{Theme: themes.Mono, ClusterName: "mgmt", Lock: tc.lock}
			a := newTestApp(opts)
			a.Update(SnapshotMsg{State: fixtureMidEtcd()})
			d := newRecoveryDialog(RecoveryOptions{}, []recovery.Offer{{Action: recovery.ActionEtcdRollback, Title: "Roll back the etcd rollout"}})
			a.Update(OpenDialogMsg{Dialog: d})
			_, cmd := a.Update(q)
			if quit := run(a, cmd); quit == tc.asks {
				t.Fatalf("q in the dialog quit: %t, want %t", quit, !tc.asks)
			}
			if !tc.asks {
				return
			}
			if len(a.dialogs) != 0 {
				t.Fatal("the dialog stayed open over the question")
			}
			if out := ansi.Strip(a.View().Content); !strings.Contains(out, "q again quits") {
				t.Fatalf("no question in the footer:\n%s", out)
			}
			if _, cmd = a.Update(q); !run(a, cmd) {
				t.Fatal("a second q did not quit")
			}
		})
	}
}

// On a shared bastion every lock is root@bastion's: the header names who the
// API server authenticated its console as where it has the room, and keeps
// user@host where it has not.
func TestHeaderNamesWhoTheLockHolderIsAuthenticatedAs(t *testing.T) {
	l := foreignLock()
	l.HolderIdentity, l.AuthenticatedAs = "root@bastion/3f2a9c1e", "system:serviceaccount:ops:alice"
	if out := screenOf(newTestDashboard(t, withLock(fixtureHealthy(), l), themes.Mono, 160, 40)); !strings.Contains(out, "lock: root@bastion as system:serviceaccount:ops:alice (renewed 3s ago)") {
		t.Errorf("wide header:\n%s", out)
	}
	out := screenOf(newTestDashboard(t, withLock(fixtureHealthy(), l), themes.Mono, 80, 24))
	if !strings.Contains(out, "lock: root@bastion") || strings.Contains(out, "serviceaccount") {
		t.Errorf("80 columns:\n%s", out)
	}
	stale := staleLock()
	stale.AuthenticatedAs = "oidc:alice@example.com"
	if out := screenOf(newTestDashboard(t, withLock(fixtureHealthy(), stale), themes.Mono, 160, 40)); !strings.Contains(out, "lock: ops@bastion-1 as oidc:alice@example.com stale 3h00m") {
		t.Errorf("stale lock:\n%s", out)
	}
}
