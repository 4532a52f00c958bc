package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/upgrade-console/upgrade-console/demo"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/report"
	"github.com/upgrade-console/upgrade-console/themes"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// The TUI path against the demo world: the plan screen, the dry-run, the
// typed confirmation (with the conflicts taken over explicitly), then the
// dashboard until the upgrade is done and the lock released.
func TestPlanTUIToDone(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	ctx := context.Background()
	w, l, lv := connectDemo(t)
	app, screen, err := newPlanApp(ctx, lv, l, &watchOptions{}, themes.Mono, false)
	if err != nil {
		t.Fatal(err)
	}
	tm := teatest.NewTestModel(t, app, teatest.WithInitialTermSize(120, 50),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ASCII)))
	waitOut := func(text string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(text)) },
			teatest.WithDuration(2*time.Minute), teatest.WithCheckInterval(20*time.Millisecond))
	}
	waitOut("PREFLIGHT")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitOut("type the cluster name")
	tm.Type(w.ClusterName)
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitOut("upgrade complete")

	// The tracker finishes in a command of its own: the lock goes once the
	// completion rule has held.
	kube := kubernetes.NewForConfigOrDie(w.Config)
	var st *upgrade.LockStatus
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		st, err = upgrade.ReadLock(ctx, kube, "eksa-system", w.ClusterName)
		return err == nil && st == nil, nil
	}); err != nil {
		t.Fatalf("lock still held after completion: %+v", st)
	}
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	// As runPlanTUI does after the UI: the tracker's Finish may still be
	// writing the end of the upgrade to the audit log, and Detach waits
	// for it.
	if s := screen.Session(); s != nil {
		if err := s.Detach(context.WithoutCancel(ctx)); err != nil {
			t.Fatal(err)
		}
		var said bytes.Buffer
		sayPlanTUIEnd(&said, s, false, nil)
		if got := said.String(); !strings.Contains(got, "the upgrade completed (recorded in the audit log)") || !strings.Contains(got, "the upgrade lock is released") || s.Detached() {
			t.Errorf("after the upgrade completed, the console says:\n%s", got)
		}
	}
	res, err := upgrade.ReadAudit(state+"/upgrade-console/"+upgrade.AuditFileName, upgrade.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range res.Entries {
		got = append(got, e.Action+":"+e.Result)
		// The fields taken over are eks-a-cli's, on the Cluster and the
		// machine configs; the datacenter config has none to take.
		if forced := e.Object != "VSphereDatacenterConfig default/mgmt"; e.Action == "apply" && e.Forced != forced {
			t.Errorf("apply recorded forced %t, want %t: %+v", e.Forced, forced, e)
		}
	}
	if s := strings.Join(got, " "); !strings.Contains(s, "apply:ok") || !strings.Contains(s, "upgrade:finished") {
		t.Errorf("audit: %s", s)
	}
}

// Quitting the plan screen before any start (ctrl-c as the operator
// confirmed, say) says the cluster was not touched; a read-only console,
// which could not start one, says nothing.
func TestPlanTUIEndWithoutAStart(t *testing.T) {
	var out bytes.Buffer
	sayPlanTUIEnd(&out, nil, false, nil)
	if got := out.String(); got != "no upgrade was started: no document of the spec was applied\n" {
		t.Errorf("quit before a start: %q", got)
	}
	out.Reset()
	sayPlanTUIEnd(&out, nil, true, nil)
	if out.Len() != 0 {
		t.Errorf("read-only: %q", out.String())
	}
}

// Quitting the plan screen on a plan the checks block exits 3, as `apply`
// without --tui does; on a plan that could start, or once started, the
// outcome decides.
func TestPlanTUIQuitOnABlockedPlan(t *testing.T) {
	blocked := &upgrade.Plan{Cluster: "mgmt"}
	blocked.Preflight = []model.CheckResult{{Name: "upgrade-lock", Status: model.CheckFail, Blocking: true, Message: "held by alice", Remediation: "wait"}}
	if code := exitCode(unstartedExit(nil, blocked)); code != ExitPreflight {
		t.Errorf("blocked, not started: exit %d, want %d", code, ExitPreflight)
	}
	if err := unstartedExit(&upgrade.Session{}, blocked); err != nil {
		t.Errorf("started: %v", err)
	}
	if err := unstartedExit(nil, &upgrade.Plan{Cluster: "mgmt"}); err != nil {
		t.Errorf("not blocked: %v", err)
	}
}

// A start that applied nothing says what it left of the lock, read from the
// cluster: released, or, when the release went unanswered, a live Lease that
// blocks the next upgrade, with the way to clear it.
func TestLockAfterStartIsReadFromTheCluster(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ctx := context.Background()
	w, _, lv := connectDemo(t)
	if got := lockAfterStart(ctx, lv, w.ClusterName, nil); got != "this console holds no upgrade lock" {
		t.Errorf("no lock: %q", got)
	}
	audit, err := upgrade.NewAuditor(filepath.Join(t.TempDir(), "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	locker := &upgrade.Locker{Kube: lv.client.Kube, Namespace: lv.client.Sys(), Cluster: w.ClusterName, Holder: lv.holder, Audit: audit}
	if _, err := locker.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if got := lockAfterStart(ctx, lv, w.ClusterName, nil); !strings.Contains(got, "could NOT be released") || !strings.Contains(got, "lock clear lease --cluster "+w.ClusterName) {
		t.Errorf("this console's lock left: %q", got)
	} else if strings.Contains(got, "audit log") {
		t.Errorf("a release refused for no audit reason blames the log: %q", got)
	}
	// Stopped by an audit log that refused an entry: the release was
	// refused too, and that is why the lock stays.
	refused := fmt.Errorf("write audit log: %w", &upgrade.AuditWriteError{Path: "audit.log", Err: errors.New("file too large")})
	if got := lockAfterStart(ctx, lv, w.ClusterName, refused); !strings.Contains(got, "could NOT be released") || !strings.Contains(got, "the audit log does not take") {
		t.Errorf("lock left by a refusing log: %q", got)
	}
}

// connectDemo serves a rolling demo world and connects to it as apply does,
// with its target spec; the connection closes with the test.
func connectDemo(t *testing.T) (*demo.World, *liveOptions, *live) {
	t.Helper()
	w := startDemo(t, scenario.Rolling)
	l := &liveOptions{cluster: w.ClusterName, file: w.TargetSpecPath, syncTimeout: time.Minute}
	lv, err := connectConfig(context.Background(), w.Config, "demo", nil, w.ClusterNamespace, l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lv.close)
	return w, l, lv
}

// A console quit while an in-place step has failed says what holds the
// upgrade and what gets it past, not that it "goes on": nothing in EKS-A
// retries a failed step.
func TestFailedStepsSaidAtQuit(t *testing.T) {
	now := time.Now()
	s := &model.ClusterState{
		Cluster:  &model.EKSACluster{Meta: model.Meta{Name: "mgmt", Namespace: "default", Generation: 2}, ObservedGeneration: 2},
		Machines: model.ListOf(&model.Machine{Meta: model.Meta{Name: "mgmt-cp-b"}, Role: model.RoleControlPlane, NodeName: "mgmt-lvn8n"}),
		NodeUpgrades: model.ListOf(&model.NodeUpgrade{Meta: model.Meta{Name: "mgmt-cp-b-node-upgrader", CreationTimestamp: now.Add(-3 * time.Minute)},
			Kind: model.KindNodeUpgrade, MachineName: "mgmt-cp-b",
			Conditions: model.Conditions{
				{Type: "UpgraderPodCreated", Status: "True", LastTransitionTime: now.Add(-3 * time.Minute)},
				{Type: "BinariesCopied", Status: "True", LastTransitionTime: now.Add(-2 * time.Minute)},
				{Type: "ContainerdUpgraded", Status: "True", LastTransitionTime: now.Add(-2 * time.Minute)},
				{Type: "CNIPluginsUpgraded", Status: "True", LastTransitionTime: now.Add(-2 * time.Minute)},
				{Type: "KubeadmUpgraded", Status: "False", Severity: model.SeverityError,
					Reason: "Container exited with a non-zero exit code, reason: Error", LastTransitionTime: now.Add(-time.Minute)}}}),
	}
	got := failedSteps(s)
	if len(got) != 1 || !strings.Contains(got[0].Sentence, "KubeadmUpgraded") || !strings.Contains(got[0].Resume, "node retry") {
		t.Fatalf("failed steps: %+v", got)
	}
	if failedSteps(nil) != nil || failedSteps(&model.ClusterState{}) != nil {
		t.Error("failed steps of a cluster not seen")
	}
	// The demo's farewell: "under way" alone read as going fine.
	if held := heldUpBy(s); !strings.HasPrefix(held, ", held up by a failed step") || !strings.Contains(held, "KubeadmUpgraded") {
		t.Errorf("demo farewell addition %q", held)
	}
	if held := heldUpBy(&model.ClusterState{Cluster: s.Cluster}); held != "" {
		t.Errorf("nothing failed, yet %q", held)
	}
	// The dashboard of a demo it did not start (--auto-start): how the
	// upgrade stood, from what it last saw.
	gone := &model.ClusterState{ClusterName: "mgmt", Namespace: "default", Connection: model.Live,
		Sources: map[model.Kind]model.SourceStatus{model.KindEKSACluster: {Installed: true, Synced: true}}}
	for _, c := range []struct {
		outcome report.Outcome
		latest  *model.ClusterState
		want    string
	}{
		{report.Running, s, "the upgrade was under way, held up by a failed step"},
		{report.Done, s, "the upgrade completed"},
		{report.Failed, s, "the upgrade failed"},
		{report.Running, nil, "the console quit before it saw the cluster"},
		// A Cluster deleted: "the upgrade completed" was the deleted
		// Cluster's, and "before it saw the cluster" untrue.
		{report.Done, gone, "the console quit after the EKS-A Cluster default/mgmt was deleted: there is no upgrade left to follow"},
		{report.Running, gone, "the console quit after the EKS-A Cluster default/mgmt was deleted"},
		{report.Failed, gone, "the upgrade failed"},
	} {
		if got := demoEndOf(c.outcome, c.latest); !strings.HasPrefix(got, c.want) {
			t.Errorf("%v: %q, want %q", c.outcome, got, c.want)
		}
	}
}

// A console quit after the upgrade it started failed (an etcd rollback in
// it) says so, why, and what holds the cluster now, beside the kept lock:
// it said only that the lock was kept.
func TestFailedUpgradeSaidAtQuit(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ctx := context.Background()
	_, l, lv := connectDemo(t)
	plan, err := lv.plan(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	audit, err := openAuditor(lv.auditTarget())
	if err != nil {
		t.Fatal(err)
	}
	driver := &upgrade.Driver{Client: lv.client, Audit: audit, Holder: lv.holder, Planner: lv.planner, Conn: lv.conn}
	s, err := driver.Start(ctx, plan, upgrade.StartOptions{ForceConflicts: true})
	if err != nil {
		t.Fatal(err)
	}
	const why = "etcd was rolled back by upgrade-console (ops@bastion): EKS-A reconcile stays paused and the upgrade does not go on"
	if err := s.Finish(ctx, upgrade.Outcome{Failed: true, Reason: why}); err != nil {
		t.Fatal(err)
	}
	rolledBack := &model.ClusterState{Cluster: &model.EKSACluster{Meta: model.Meta{Name: "mgmt", Namespace: "default", Generation: 2,
		Annotations: map[string]string{model.AnnotationEKSAPaused: "true", model.AnnotationEtcdRollbackRecord: `{"phase":"done","newMachine":"mgmt-etcd-z"}`}},
		ObservedGeneration: 1}}
	var out bytes.Buffer
	sayPlanTUIEnd(&out, s, false, rolledBack)
	for _, want := range []string{
		"the upgrade failed (recorded in the audit log): " + why + "\n",
		"  next: find and fix why the new etcd member did not come up, then `upgrade-console lock clear paused --cluster mgmt`\n",
		"is kept: it blocks further upgrades",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "goes on") {
		t.Errorf("says the upgrade goes on:\n%s", out.String())
	}
	// The demo's world stops with the console: no command to paste.
	out.Reset()
	sayDemoEnd(&out, demoSessionEnd(s, rolledBack))
	if got := out.String(); !strings.HasPrefix(got, "the upgrade failed (etcd was rolled back by upgrade-console (ops@bastion)); the demo's world") || strings.Contains(got, "--cluster") {
		t.Errorf("demo: %s", got)
	}
	out.Reset()
	sayDemoEnd(&out, demoSessionEnd(nil, nil))
	if got := out.String(); !strings.HasPrefix(got, "no upgrade was started; the demo's world (its control plane and simulated controllers) stops with the console") {
		t.Errorf("demo, no start: %s", got)
	}
}
