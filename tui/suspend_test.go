package tui

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/themes"
	"github.com/upgrade-console/upgrade-console/upgrade/recovery"
)

var ctrlZ = tea.KeyPressMsg{Code: 'z', Mod: tea.ModCtrl}

// suspends reports whether cmd is Bubble Tea's suspend.
func suspends(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, ok := cmd().(tea.SuspendMsg)
	return ok
}

// ctrl+z suspends the console on every screen and over any dialog that
// runs nothing: in raw mode the terminal sends it as a key, and it did
// nothing.
func TestCtrlZSuspends(t *testing.T) {
	if ctrlZ.String() != "ctrl+z" {
		t.Fatalf("the test's key reads %q", ctrlZ.String())
	}
	a := newTestApp(Options{Theme: themes.Mono})
	a.Update(SnapshotMsg{State: fixtureMidEtcd()})
	if _, cmd := a.Update(ctrlZ); !suspends(cmd) {
		t.Error("ctrl+z on the dashboard does not suspend")
	}
	a.Update(OpenDialogMsg{Dialog: &stubDialog{}})
	if _, cmd := a.Update(ctrlZ); !suspends(cmd) {
		t.Error("ctrl+z over a dialog does not suspend")
	}
	d := newRecoveryDialog(RecoveryOptions{}, nil)
	a.Update(OpenDialogMsg{Dialog: d})
	if _, cmd := a.Update(ctrlZ); !suspends(cmd) {
		t.Error("ctrl+z over the recovery menu does not suspend")
	}

	p := newTestPlanScreen(t, fixturePlan(false), Options{}, PlanActions{}, 80, 24)
	pa := NewApp(Options{Theme: themes.Mono}, p)
	pa.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if _, cmd := pa.Update(ctrlZ); !suspends(cmd) {
		t.Error("ctrl+z on the plan screen does not suspend")
	}
}

// With no job-control shell to resume it (NoSuspend), ctrl+z is refused
// and says why: the stop never came, and the console hung deaf to every
// key and signal, still renewing its lock.
func TestCtrlZOffWithoutJobControl(t *testing.T) {
	const why = "ctrl+z is off here: no shell with job control started the console"
	a := newTestApp(Options{Theme: themes.Mono, NoSuspend: why})
	a.Update(SnapshotMsg{State: fixtureMidEtcd()})
	if _, cmd := a.Update(ctrlZ); suspends(cmd) {
		t.Fatal("ctrl+z suspended a console nothing would resume")
	}
	if v := ansi.Strip(a.View().Content); !strings.Contains(v, why) {
		t.Errorf("the refusal is not said:\n%s", v)
	}
	// The help does not offer what is off.
	a.Update(tea.KeyPressMsg{Code: '?', Text: "?"})
	if v := ansi.Strip(a.View().Content); !strings.Contains(v, "suspend: off here") || strings.Contains(v, "fg resumes") {
		t.Errorf("the help:\n%s", v)
	}
}

// While a recovery run is under way, shown or set aside, ctrl+z is
// refused, and the last row says why until the next key: stopped mid-run,
// its lock goes unrenewed and another console may act while the step under
// way waits to write. A start writing the spec is refused as well.
func TestCtrlZRefusedWhileARunIsUnderWay(t *testing.T) {
	d := newRecoveryDialog(RecoveryOptions{}, []recovery.Offer{{Action: recovery.ActionEtcdRollback}})
	d.plan, d.stage = &recovery.Plan{Action: recovery.ActionEtcdRollback, Cluster: "mgmt", Title: "t"}, recRunning
	a := newTestApp(Options{Theme: themes.Mono})
	a.Update(OpenDialogMsg{Dialog: d})
	lastRow := func() string {
		rows := strings.Split(ansi.Strip(a.View().Content), "\n")
		return rows[len(rows)-1]
	}
	for _, shown := range []bool{true, false} {
		if !shown {
			a.hidden, a.dialogs = d, nil
		}
		if _, cmd := a.Update(ctrlZ); suspends(cmd) {
			t.Fatalf("shown %t: ctrl+z suspended the console mid-run", shown)
		}
		if last := lastRow(); !strings.Contains(last, "ctrl+z: not while the recovery action runs") {
			t.Errorf("shown %t: the last row does not say why ctrl+z did nothing: %q", shown, last)
		}
		a.Update(tea.KeyPressMsg{Code: tea.KeyDown})
		if last := lastRow(); strings.Contains(last, "ctrl+z") {
			t.Errorf("shown %t: the refusal stays after the next key: %q", shown, last)
		}
	}
	d.stage = recDone
	if _, cmd := a.Update(ctrlZ); !suspends(cmd) {
		t.Error("ctrl+z refused after the run ended")
	}

	p := newTestPlanScreen(t, fixturePlan(false), Options{}, PlanActions{}, 80, 24)
	p.starting = true
	pa := NewApp(Options{Theme: themes.Mono}, p)
	pa.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if _, cmd := pa.Update(ctrlZ); suspends(cmd) || !strings.Contains(pa.notice, "spec is being applied") {
		t.Errorf("ctrl+z while the start writes: suspended %t, notice %q", suspends(cmd), pa.notice)
	}
}

// lockLostOnRenewal is alice's lock, renewed 2 s ago, which the next
// renewal finds lost (taken or cleared meanwhile), the renewals asked, and
// how many of them were asked as back from ctrl+z.
func lockLostOnRenewal() (lock func() LockInfo, renew func(bool), renewals, resumed *atomic.Int32) {
	var lost atomic.Bool
	renewals, resumed = new(atomic.Int32), new(atomic.Int32)
	lock = func() LockInfo {
		return LockInfo{Holder: "alice@laptop (console 3f2a9c1e)", Renewed: ago(2 * time.Second), Lost: lost.Load()}
	}
	renew = func(r bool) {
		renewals.Add(1)
		if r {
			resumed.Add(1)
		}
		lost.Store(true)
	}
	return lock, renew, renewals, resumed
}

// Back from ctrl+z, the dashboard renews the lock it holds at once: the
// process renewed nothing while stopped, and the Lease may have gone stale
// and been taken. What the renewal finds shows as any renewal's does.
func TestResumeRenewsTheLockAtOnce(t *testing.T) {
	lock, renew, renewals, resumed := lockLostOnRenewal()
	a := newTestApp(Options{Theme: themes.Mono, Lock: lock, RenewLock: renew})
	a.Update(SnapshotMsg{State: fixtureMidEtcd()})
	_, cmd := a.Update(tea.ResumeMsg{})
	if cmd == nil {
		t.Fatal("no renewal on resume")
	}
	msg := runBatch(cmd)
	if renewals.Load() != 1 {
		t.Fatalf("%d renewals on resume, want 1", renewals.Load())
	}
	// Asked as a resume: the renewal the lock's ticker made at fg answers
	// it (upgrade.Hold.RenewOnResume), where the two renewed one after
	// the other (R19 #6).
	if resumed.Load() != 1 {
		t.Errorf("the renewal on resume was not asked as one (%d of %d)", resumed.Load(), renewals.Load())
	}
	if msg == nil {
		t.Fatal("the renewal's end is not reported to the dashboard")
	}
	a.Update(msg)
	if out := ansi.Strip(a.View().Content); !strings.Contains(out, "✗ lock lost") {
		t.Errorf("the lost lock is not in the header after the resume:\n%s", out)
	}
	// Lost, kept or not held: nothing to renew.
	if _, cmd := a.Update(tea.ResumeMsg{}); runBatch(cmd) != nil || renewals.Load() != 1 {
		t.Errorf("a lost lock renewed again on resume (%d renewals)", renewals.Load())
	}
	b := newTestApp(Options{Theme: themes.Mono})
	b.Update(SnapshotMsg{State: fixtureMidEtcd()})
	if _, cmd := b.Update(tea.ResumeMsg{}); runBatch(cmd) != nil {
		t.Error("a console that holds no lock renews on resume")
	}
}

// runBatch runs cmd and the commands of a batch it returns, and returns the
// first lockRenewedMsg among their messages (nil when none).
func runBatch(cmd tea.Cmd) tea.Msg {
	if cmd == nil {
		return nil
	}
	switch m := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range m {
			if r := runBatch(c); r != nil {
				return r
			}
		}
	case lockRenewedMsg:
		return m
	}
	return nil
}

// The refusal's reason goes when it no longer holds, not only at the next
// key: left on the last row after the run ended, it said "ctrl+c stops it
// after the step under way" under the run's result, where ctrl+c quits the
// console, and after the start had written the spec it said to wait for
// the start to end in place of the dashboard's key help.
func TestCtrlZRefusalGoesWithItsReason(t *testing.T) {
	d := newRecoveryDialog(RecoveryOptions{}, []recovery.Offer{{Action: recovery.ActionEtcdRollback}})
	d.plan, d.stage = &recovery.Plan{Action: recovery.ActionEtcdRollback, Cluster: "mgmt", Title: "t"}, recRunning
	a := newTestApp(Options{Theme: themes.Mono})
	a.Update(OpenDialogMsg{Dialog: d})
	if _, cmd := a.Update(ctrlZ); suspends(cmd) || a.notice == "" {
		t.Fatalf("ctrl+z mid-run: suspended %t, notice %q", suspends(cmd), a.notice)
	}
	// Another message (a snapshot, the clock) while the run goes on: the
	// reason stands.
	a.Update(SnapshotMsg{State: fixtureMidEtcd()})
	if a.notice == "" {
		t.Fatal("the refusal went while the run was still under way")
	}
	d.stage = recDone // the run's end, as its last message leaves it
	a.Update(SnapshotMsg{State: fixtureMidEtcd()})
	rows := strings.Split(ansi.Strip(a.View().Content), "\n")
	if last := rows[len(rows)-1]; strings.Contains(last, "ctrl+z: not while") {
		t.Errorf("the refusal stays after the run ended: %q", last)
	}

	p := newTestPlanScreen(t, fixturePlan(false), Options{}, PlanActions{}, 80, 24)
	p.starting = true
	pa := NewApp(Options{Theme: themes.Mono}, p)
	pa.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if _, cmd := pa.Update(ctrlZ); suspends(cmd) || pa.notice == "" {
		t.Fatalf("ctrl+z while the start writes: suspended %t, notice %q", suspends(cmd), pa.notice)
	}
	pa.Update(startedMsg{err: errors.New("refused")})
	if pa.notice != "" {
		t.Errorf("the refusal stays after the start ended: %q", pa.notice)
	}
}

// Back from a lost connection after a renewal failed, the dashboard renews
// the lock at once: an outage longer than the Lease left it expired, and
// the next renewal was up to 20 s away, while other consoles called the
// live upgrade's lock stale. Live all along, or with no renewal failing,
// it asks nothing more than its ticker does.
func TestReconnectionAfterAFailedRenewalRenewsAtOnce(t *testing.T) {
	var renewErr atomic.Value
	renewErr.Store("renew upgrade lock: no answer from the API server within 10s")
	var renewals atomic.Int32
	lock := func() LockInfo {
		return LockInfo{Holder: "alice@laptop (console 3f2a9c1e)", Renewed: ago(70 * time.Second), RenewErr: renewErr.Load().(string)}
	}
	renew := func(resumed bool) {
		if resumed {
			t.Error("a reconnection's renewal asked as a resume: one the ticker made before answers it")
		}
		renewals.Add(1)
		renewErr.Store("")
	}
	a := newTestApp(Options{Theme: themes.Mono, Lock: lock, RenewLock: renew})
	live := fixtureMidEtcd()
	live.Connection = model.Live
	blind := fixtureMidEtcd()
	blind.Connection, blind.ConnectionSince = model.Reconnecting, t0
	a.Update(SnapshotMsg{State: live})
	if _, cmd := a.Update(SnapshotMsg{State: blind}); runBatch(cmd) != nil {
		t.Fatal("renewed while reconnecting")
	}
	_, cmd := a.Update(SnapshotMsg{State: live})
	if msg := runBatch(cmd); msg == nil || renewals.Load() != 1 {
		t.Fatalf("back live after a failed renewal: %d renewals, renewal reported %v; want 1", renewals.Load(), msg != nil)
	}
	// Nothing failing: a reconnection renews nothing more.
	a.Update(SnapshotMsg{State: blind})
	if _, cmd := a.Update(SnapshotMsg{State: live}); runBatch(cmd) != nil || renewals.Load() != 1 {
		t.Errorf("renewed again with no renewal failing (%d renewals)", renewals.Load())
	}
}

// The watched Lease no longer names this console (cleared with --force,
// taken by another): the dashboard renews at once, and the header says the
// lock is lost, where it said "held by this console" until the next
// renewal, 20 s away. Asked once per disagreement.
func TestOwnLeaseGoneFromTheWatchRenewsAtOnce(t *testing.T) {
	const self = "alice@laptop/3f2a9c1e"
	lock, renew, renewals, resumed := lockLostOnRenewal()
	a := newTestApp(Options{Theme: themes.Mono, Lock: lock, RenewLock: renew, SelfHolder: self})
	held := fixtureMidEtcd()
	held.Sources[model.KindLease] = model.SourceStatus{Installed: true, Synced: true}
	held.Lock = &model.Lock{HolderIdentity: self, Duration: time.Minute, RenewTime: ago(2 * time.Second)}
	if _, cmd := a.Update(SnapshotMsg{State: held}); runBatch(cmd) != nil || renewals.Load() != 0 {
		t.Fatalf("renewed while the watched Lease is this console's (%d)", renewals.Load())
	}
	gone := fixtureMidEtcd()
	gone.Sources[model.KindLease] = model.SourceStatus{Installed: true, Synced: true}
	_, cmd := a.Update(SnapshotMsg{State: gone})
	msg := runBatch(cmd)
	if renewals.Load() != 1 || msg == nil {
		t.Fatalf("%d renewals once the Lease was gone, want 1", renewals.Load())
	}
	if resumed.Load() != 0 {
		t.Error("asked as a resume: a renewal begun before the Lease was seen gone would answer it")
	}
	a.Update(msg)
	if out := ansi.Strip(a.View().Content); !strings.Contains(out, "✗ lock lost") {
		t.Errorf("the header does not say the lock is lost:\n%s", out)
	}
	if _, cmd := a.Update(SnapshotMsg{State: gone}); runBatch(cmd) != nil || renewals.Load() != 1 {
		t.Errorf("asked again for the same disagreement (%d renewals)", renewals.Load())
	}
}
