package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/upgrade-console/upgrade-console/demo"
	"github.com/upgrade-console/upgrade-console/demo/scenario"
	"github.com/upgrade-console/upgrade-console/model"
)

// The connection flags a printed command carries are the ones given on the
// command line: not --cluster and -n (the EKS-A Cluster's, which the
// commands name themselves), not --request-timeout, and the token only as
// a placeholder.
func TestConnFlagsAreTheOnesGiven(t *testing.T) {
	root := newRootCmd()
	cmd, _, err := root.Find([]string{"lock", "status"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.ParseFlags([]string{"--cluster", "mgmt", "-n", "ops", "--request-timeout", "5s",
		"--as-group", "g1", "--kubeconfig", "/home/ops/my kc", "--token", "s3cret", "--context", "prod", "--as", "bob", "--as-group", "g2"}); err != nil {
		t.Fatal(err)
	}
	got := connFlags(cmd.Flags())
	want := model.ConnFlags{{Name: "kubeconfig", Value: "/home/ops/my kc"}, {Name: "context", Value: "prod"},
		{Name: "token", Value: "s3cret"}, {Name: "as", Value: "bob"}, {Name: "as-group", Value: "g1"}, {Name: "as-group", Value: "g2"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("connFlags = %+v\nwant %+v", got, want)
	}
	if s, want := got.String(), ` --kubeconfig '/home/ops/my kc' --context prod --token '<token>' --as bob --as-group g1 --as-group g2`; s != want {
		t.Errorf("rendered %q\nwant     %q", s, want)
	}

	// A relative path is made absolute: the command is pasted in another
	// directory.
	cmd, _, _ = newRootCmd().Find([]string{"watch"})
	if err := cmd.ParseFlags([]string{"--kubeconfig", "kc.yaml", "--client-key", filepath.Join("keys", "ops.key")}); err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	want = model.ConnFlags{{Name: "kubeconfig", Value: filepath.Join(wd, "kc.yaml")}, {Name: "client-key", Value: filepath.Join(wd, "keys", "ops.key")}}
	if got := connFlags(cmd.Flags()); !reflect.DeepEqual(got, want) {
		t.Errorf("relative paths: connFlags = %+v\nwant %+v", got, want)
	}

	cmd, _, _ = newRootCmd().Find([]string{"watch"})
	if err := cmd.ParseFlags([]string{"--cluster", "mgmt"}); err != nil {
		t.Fatal(err)
	}
	if got := connFlags(cmd.Flags()); len(got) != 0 {
		t.Errorf("no connection flag given: %+v", got)
	}
}

// The demo's commands name its kubeconfig, absolute: the operator's shell
// knows nothing of it.
func TestDemoConnNamesItsKubeconfig(t *testing.T) {
	got := demoConn(&demo.World{KubeconfigPath: filepath.Join("demo-dir", "kubeconfig")})
	if len(got) != 1 || got[0].Name != "kubeconfig" || !filepath.IsAbs(got[0].Value) || !strings.HasSuffix(got[0].Value, filepath.Join("demo-dir", "kubeconfig")) {
		t.Errorf("demoConn = %+v", got)
	}
}

// Against the stale-lock world, run with --kubeconfig: the plan's fixes and
// lock status's closing line name it, so that pasted in a shell whose
// kubeconfig is another cluster's they clear this one's markers. Given by
// $KUBECONFIG instead, it is the shell's already, and is not repeated.
func TestPrintedCommandsCarryTheConsolesKubeconfig(t *testing.T) {
	w := startDemo(t, scenario.StaleLock)
	kc := model.ShellQuote(w.KubeconfigPath)
	out, errOut, code := runCaptured(t, liveArgs(w, "plan")...)
	if code != ExitPreflight || !strings.Contains(out, "`upgrade-console lock clear lease --cluster "+w.ClusterName+" --kubeconfig "+kc+"`") {
		t.Errorf("plan: exit %d, %s\n%s", code, errOut, out)
	}
	out, errOut, code = runCaptured(t, "lock", "status", "--kubeconfig", w.KubeconfigPath, "--cluster", w.ClusterName)
	if code != ExitOK || !strings.Contains(out, "\n  upgrade-console lock clear --all --cluster "+w.ClusterName+" --kubeconfig "+kc+"\n") {
		t.Errorf("lock status: exit %d, %s\n%s", code, errOut, out)
	}
	t.Setenv("KUBECONFIG", w.KubeconfigPath)
	out, errOut, code = runCaptured(t, "lock", "status", "--cluster", w.ClusterName)
	if code != ExitOK || !strings.Contains(out, "\n  upgrade-console lock clear --all --cluster "+w.ClusterName+"\n") {
		t.Errorf("lock status with $KUBECONFIG: exit %d, %s\n%s", code, errOut, out)
	}

	// Under a context whose namespace is another, the Cluster reached with
	// -n default is printed with it: without, the pasted command would
	// look in the context's.
	kc2 := filepath.Join(t.TempDir(), "kubeconfig")
	cfg, err := clientcmd.LoadFromFile(w.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Contexts[cfg.CurrentContext].Namespace = "ops"
	if err := clientcmd.WriteToFile(*cfg, kc2); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kc2)
	out, errOut, code = runCaptured(t, "lock", "status", "--cluster", w.ClusterName, "-n", w.ClusterNamespace)
	if code != ExitOK || !strings.Contains(out, "\n  upgrade-console lock clear --all --cluster "+w.ClusterName+" -n "+w.ClusterNamespace+"\n") {
		t.Errorf("lock status under a context in another namespace: exit %d, %s\n%s", code, errOut, out)
	}
}
