//go:build linux

package controlplane_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/upgrade-console/upgrade-console/demo/controlplane"
	"github.com/upgrade-console/upgrade-console/demo/controlplane/cptest"
)

// kube-apiserver and etcd die with the process that started them, even when
// it is killed without a chance to call Stop: a crashed or timed-out test
// binary must not leave a control plane running on a shared machine.
func TestControlPlaneDiesWithItsParent(t *testing.T) {
	if os.Getenv("CPTEST_REAPER_CHILD") == "1" {
		// The child: its TestMain started a control plane; report the
		// processes and wait to be killed.
		fmt.Printf("PIDS %s\n", strings.Join(childPIDs(t), " "))
		time.Sleep(time.Hour)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestControlPlaneDiesWithItsParent$", "-test.count=1", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), "CPTEST_REAPER_CHILD=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pids []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "PIDS "); ok {
			pids = strings.Fields(rest)
			break
		}
	}
	if len(pids) != 2 {
		_ = cmd.Process.Kill()
		t.Fatalf("child reported processes %v, want kube-apiserver and etcd", pids)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	err = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		for _, p := range pids {
			if alive(p) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		for _, p := range pids {
			if n, _ := strconv.Atoi(p); n > 0 {
				_ = syscall.Kill(n, syscall.SIGKILL)
			}
		}
		t.Fatalf("control plane processes %v outlived their killed parent", pids)
	}
}

// childPIDs lists the processes whose parent is this one.
func childPIDs(t *testing.T) []string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	self := strconv.Itoa(os.Getpid())
	var pids []string
	for _, e := range entries {
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut at ')'.
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 && fields[1] == self {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

func alive(pid string) bool {
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z"
}

// Options.APIServerEnv reaches kube-apiserver alone, and replaces a
// variable of the same name rather than adding a second one (Go reads the
// first of duplicates, which would be this process's); Options.APIServerArgs
// are on its command line.
func TestAPIServerEnv(t *testing.T) {
	t.Setenv("GOGC", "100")
	dir := t.TempDir()
	env, err := controlplane.Start(context.Background(), controlplane.Options{
		AssetsDir: cptest.AssetsDir(), Dir: dir,
		APIServerEnv:  []string{"UPGRADE_CONSOLE_CPTEST=apiserver-only", "GOGC=150"},
		APIServerArgs: []string{"--watch-cache-sizes=machines.cluster.x-k8s.io#0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	}()
	got := map[string][]string{}
	var args []string
	for _, pid := range childPIDs(t) {
		cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline")
		environ, _ := os.ReadFile("/proc/" + pid + "/environ")
		if !strings.Contains(string(cmdline), dir) {
			continue // the package's shared control plane
		}
		name := "etcd"
		if strings.Contains(string(cmdline), "kube-apiserver") {
			name = "kube-apiserver"
			args = strings.Split(string(cmdline), "\x00")
		}
		for _, kv := range strings.Split(string(environ), "\x00") {
			if strings.HasPrefix(kv, "UPGRADE_CONSOLE_CPTEST=") || strings.HasPrefix(kv, "GOGC=") {
				got[name] = append(got[name], kv)
			}
		}
	}
	if want := []string{"GOGC=100"}; !slices.Equal(got["etcd"], want) {
		t.Errorf("etcd's environment has %q, want %q (this process's, nothing added)", got["etcd"], want)
	}
	if want := []string{"UPGRADE_CONSOLE_CPTEST=apiserver-only", "GOGC=150"}; !slices.Equal(got["kube-apiserver"], want) {
		t.Errorf("kube-apiserver's environment has %q, want %q", got["kube-apiserver"], want)
	}
	if !slices.Contains(args, "--watch-cache-sizes=machines.cluster.x-k8s.io#0") {
		t.Errorf("kube-apiserver's command line %q lacks the extra flag", args)
	}
}
