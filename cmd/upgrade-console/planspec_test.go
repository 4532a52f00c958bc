package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
	"github.com/upgrade-console/upgrade-console/upgrade"
)

// The reviewer's run: the target applied, the first new etcd member never
// comes up, the etcd rollback puts etcd back and keeps EKS-A paused. The
// Cluster's spec is the target now, but the cluster never reached it: the
// plan of the target says so, instead of "v0.21.2 → v0.21.2 … it changes
// nothing: the cluster already runs this spec", and the checks' fixes say
// why EKS-A is paused and that the failed member comes first.
func TestPlanAfterAnEtcdRollbackSaysTheSpecIsNotReached(t *testing.T) {
	w := startDemo(t, scenario.EtcdFirstMemberFails)
	// The commands name the kubeconfig the console was given.
	kc := " --kubeconfig " + model.ShellQuote(w.KubeconfigPath)
	state := t.TempDir()
	if out, errOut, code := runCapturedIn(t, state, liveArgs(w, "apply", "--yes", "--force-conflicts")...); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	// The rollback is refused until the new member has been not ready for
	// the threshold.
	rollback := []string{"etcd", "rollback", "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName, "--threshold", "1s", "--yes"}
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(time.Second) {
		out, errOut, code := runCapturedIn(t, state, rollback...)
		if code == ExitOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcd rollback: exit %d\n%s\n%s", code, out, errOut)
		}
	}

	out, errOut, code := runCaptured(t, liveArgs(w, "plan")...)
	if code != ExitPreflight {
		t.Fatalf("plan: exit %d, want %d (EKS-A paused)\n%s\n%s", code, ExitPreflight, out, errOut)
	}
	want := "the cluster has not reached its Cluster's spec (EKS-A v0.21.2, Kubernetes 1.31): upgrade-console's etcd rollback put etcd back on its previous spec and keeps EKS-A reconcile paused\n" +
		"  the plan below compares the target with that spec (CURRENT), not with what the cluster runs\n" +
		"  next: find and fix why the new etcd member did not come up, then `upgrade-console lock clear paused --cluster mgmt" + kc + "`\n\n" +
		"cluster default/mgmt\n"
	if !strings.HasPrefix(out, want) {
		t.Errorf("plan does not open saying the spec is not reached:\n%s\nwant it to begin:\n%s", out, want)
	}
	if n := strings.Count(out, "the cluster has not reached its Cluster's spec"); n != 1 {
		t.Errorf("the note is printed %d times:\n%s", n, out)
	}
	for _, want := range []string{
		"  EKS-A       v0.21.2 → v0.21.2   (left: the Cluster's spec, not reached)\n",
		"  Kubernetes  1.31 → 1.31   (left: the Cluster's spec, not reached)\n",
		"no component changes from the Cluster's spec, which the cluster has not reached\n",
		"it changes nothing: the Cluster's spec is already this spec, but the cluster has not reached it (upgrade-console's etcd rollback put etcd back on its previous spec and keeps EKS-A reconcile paused)",
		"anywhere.eks.amazonaws.com/paused=true on Cluster mgmt: kept by the etcd rollback of ",
		"until the cause of the failed etcd member is fixed; resuming EKS-A reconcile makes it apply the new etcd spec again",
		"fix: first find and fix why the new etcd member (Machine mgmt-etcd-",
		"then `upgrade-console lock clear paused --cluster mgmt" + kc + "` (recorded)",
		"fix: EKS-A will not report the control plane ready while its reconcile is paused, and the etcd rollback keeps it paused: find and fix why the new etcd member did not come up, then `upgrade-console lock clear paused --cluster mgmt" + kc + "`",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"already runs this spec", "a failed eksctl upgrade leaves it behind", "wait for EKS-A to report the control plane ready", "all components are up to date"} {
		if strings.Contains(out, bad) {
			t.Errorf("plan says %q:\n%s", bad, out)
		}
	}

	out, errOut, code = runCaptured(t, liveArgs(w, "plan", "-o", "json")...)
	if code != ExitPreflight {
		t.Fatalf("plan -o json: exit %d\n%s", code, errOut)
	}
	var p struct {
		Versions struct {
			CurrentKubernetes string `json:"currentKubernetesVersion"`
		} `json:"versions"`
		CurrentSpec *model.SpecStatus `json:"currentSpec"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if s := p.CurrentSpec; s == nil || s.Reached || s.Reason != model.SpecEtcdRollback ||
		s.Next != "find and fix why the new etcd member did not come up, then `upgrade-console lock clear paused --cluster mgmt"+kc+"`" {
		t.Errorf("currentSpec %+v", s)
	}
	if p.Versions.CurrentKubernetes != "1.31" {
		t.Errorf("currentKubernetesVersion %q: the field keeps its meaning, the Cluster's spec", p.Versions.CurrentKubernetes)
	}
}

// A failed upgrade: EKS-A refuses a machine config's template
// (MachineConfigInvalid) and reports it in failureMessage, the cluster stays
// on 1.30. Applying the same spec again, the failure skipped, finds nothing
// to apply; it once said "the cluster already runs this spec".
func TestApplyOfAFailedSpecSaysTheClusterHasNotReachedIt(t *testing.T) {
	w := startDemo(t, scenario.Rolling)
	target, err := os.ReadFile(w.TargetSpecPath)
	if err != nil {
		t.Fatal(err)
	}
	// The last worker group's template left on 1.30.
	i := bytes.LastIndex(target, []byte("kube-1.31"))
	bad := append(append(append([]byte(nil), target[:i]...), "kube-1.30"...), target[i+len("kube-1.31"):]...)
	spec := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(spec, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	args := func(cmd string, extra ...string) []string {
		return append([]string{cmd, "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName, "-f", spec}, extra...)
	}
	if out, errOut, code := runCaptured(t, args("apply", "--yes", "--force-conflicts")...); code != ExitOK {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		out, _, _ := runCaptured(t, args("plan")...)
		if strings.Contains(out, "fail   no-failure-message") || strings.Contains(out, "fail      no-failure-message") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no failureMessage:\n%s", out)
		}
	}
	out, errOut, code := runCaptured(t, args("apply", "--yes", "--skip", "no-failure-message")...)
	want := "\nthe Cluster's spec is already this spec: nothing to apply; the cluster has not reached it (EKS-A reports a failure (MachineConfigInvalid): template /SDDC-Datacenter/vm/Templates/ubuntu-2204-kube-1.30 is missing tag eksdRelease:"
	if code != ExitOK || !strings.Contains(out, want) || strings.Contains(out, "already runs this spec") {
		t.Errorf("exit %d, want the nothing to apply of a spec not reached (%q):\n%s\n%s", code, want, out, errOut)
	}
	if !strings.Contains(out, "): see the failure with `upgrade-console watch --cluster mgmt --kubeconfig "+model.ShellQuote(w.KubeconfigPath)+"` and fix what it says\n") {
		t.Errorf("does not say what to do:\n%s", out)
	}
	// With --wait the same finds that the completion rule does not hold,
	// and follows by it: it exited 0 at once, so a CI job run again went
	// green on a cluster that never got there. It applied nothing, so it
	// takes no lock.
	out, errOut, code = runCaptured(t, args("apply", "--yes", "--skip", "no-failure-message", "--wait", "--timeout", "3s")...)
	if code != ExitTimeout || !strings.Contains(out, "this console applied nothing and takes no upgrade lock") || !strings.Contains(errOut, "--timeout 3s passed") {
		t.Errorf("--wait: exit %d, want %d after following for 3s:\n%s\n%s", code, ExitTimeout, out, errOut)
	}
	// Without the skip, no-failure-message blocks a new upgrade, and this
	// spec starts none: a CI job re-run mid-rollout, whose checks find the
	// control plane not ready, follows it too (it exited 3).
	out, errOut, code = runCaptured(t, args("apply", "--yes", "--wait", "--timeout", "3s")...)
	if code != ExitTimeout || !strings.Contains(out, "fail   no-failure-message") ||
		!strings.Contains(out, "this spec starts none, so --wait follows the one under way") || !strings.Contains(errOut, "--timeout 3s passed") {
		t.Errorf("--wait with a failed check: exit %d, want %d after following for 3s:\n%s\n%s", code, ExitTimeout, out, errOut)
	}
	if st, err := upgrade.ReadLock(context.Background(), kubernetes.NewForConfigOrDie(w.Config), "eksa-system", w.ClusterName); err != nil || st != nil {
		t.Errorf("the follow left a lock: %+v %v", st, err)
	}
	// Without --wait it ends as an apply of a spec the Cluster has does:
	// nothing to apply, exit 0, and no refusal recorded (it exited 3 and
	// was recorded as an attempt at a blocked upgrade).
	state := t.TempDir()
	out, errOut, code = runCapturedIn(t, state, args("apply", "--yes")...)
	if code != ExitOK || !strings.Contains(out, want) || !strings.Contains(out, "this spec starts none, and nothing was changed") {
		t.Errorf("without --wait: exit %d, want %d saying nothing to apply:\n%s\n%s", code, ExitOK, out, errOut)
	}
	if res, err := upgrade.ReadAudit(filepath.Join(state, "upgrade-console", upgrade.AuditFileName), upgrade.AuditFilter{}); err == nil && len(res.Entries) > 0 {
		t.Errorf("without --wait, recorded: %+v", res.Entries)
	}
}

// The table of a live plan whose cluster has not reached its spec: no
// component change is not "up to date".
func TestPlanTableOfASpecNotReached(t *testing.T) {
	p := &model.Plan{Components: []model.ComponentDiff{{Key: "eksa", Name: "EKS-A management", OldVersion: "v0.21.2", NewVersion: "v0.21.2", Change: model.ChangeNone}}}
	var b bytes.Buffer
	writePlanTableFor(&b, p, false, &model.SpecStatus{Reason: model.SpecUnderWay, Message: "the upgrade to it is still under way: ControlPlaneReady: Etcd is not ready"})
	if out := b.String(); !strings.HasPrefix(out, "no component changes from the Cluster's spec, which the cluster has not reached\n") {
		t.Errorf("table:\n%s", out)
	}
	b.Reset()
	writePlanTableFor(&b, p, false, &model.SpecStatus{Reached: true})
	if out := b.String(); !strings.HasPrefix(out, "all components are up to date\n") {
		t.Errorf("table at rest:\n%s", out)
	}
}
