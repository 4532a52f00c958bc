package controlplane_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upgrade-console/upgrade-console/demo/controlplane"
)

func fakeAssets(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestFindAssets(t *testing.T) {
	complete := fakeAssets(t, "kube-apiserver", "etcd")
	partial := fakeAssets(t, "etcd")

	t.Run("flag", func(t *testing.T) {
		t.Setenv("KUBEBUILDER_ASSETS", partial)
		got, err := controlplane.FindAssets(complete)
		if err != nil || got != complete {
			t.Fatalf("FindAssets(%s) = %q, %v", complete, got, err)
		}
	})
	t.Run("a flag naming an incomplete directory is an error, not a fallback", func(t *testing.T) {
		t.Setenv("KUBEBUILDER_ASSETS", complete)
		_, err := controlplane.FindAssets(partial)
		var ae *controlplane.AssetsError
		if !errors.As(err, &ae) {
			t.Fatalf("err = %v, want *AssetsError", err)
		}
		if !strings.Contains(err.Error(), partial) || !strings.Contains(err.Error(), "kube-apiserver") {
			t.Errorf("error does not say where and what: %v", err)
		}
	})
	t.Run("KUBEBUILDER_ASSETS", func(t *testing.T) {
		t.Setenv("KUBEBUILDER_ASSETS", complete)
		got, err := controlplane.FindAssets("")
		if err != nil || got != complete {
			t.Fatalf("FindAssets() = %q, %v", got, err)
		}
	})
	t.Run("./bin", func(t *testing.T) {
		t.Setenv("KUBEBUILDER_ASSETS", partial)
		wd := t.TempDir()
		if err := os.Symlink(complete, filepath.Join(wd, "bin")); err != nil {
			t.Fatal(err)
		}
		t.Chdir(wd)
		got, err := controlplane.FindAssets("")
		if err != nil || got != filepath.Join(wd, "bin") {
			t.Fatalf("FindAssets() = %q, %v", got, err)
		}
	})
	t.Run("user cache", func(t *testing.T) {
		home := t.TempDir()
		t.Setenv("XDG_CACHE_HOME", home)
		t.Setenv("KUBEBUILDER_ASSETS", "")
		t.Chdir(t.TempDir())
		cacheBin := filepath.Join(home, "upgrade-console", "bin")
		if err := os.MkdirAll(filepath.Dir(cacheBin), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(complete, cacheBin); err != nil {
			t.Fatal(err)
		}
		got, err := controlplane.FindAssets("")
		if err != nil || got != cacheBin {
			t.Fatalf("FindAssets() = %q, %v", got, err)
		}
	})
	t.Run("nowhere: the error lists every place and the fix", func(t *testing.T) {
		t.Setenv("XDG_CACHE_HOME", t.TempDir())
		t.Setenv("KUBEBUILDER_ASSETS", partial)
		t.Chdir(t.TempDir())
		_, err := controlplane.FindAssets("")
		if err == nil {
			t.Fatal("found binaries in empty places")
		}
		for _, want := range []string{partial, "$KUBEBUILDER_ASSETS", "./bin", "next to the executable", "user cache", "make controlplane"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error does not mention %q:\n%v", want, err)
			}
		}
	})
}

// Without binaries a test package fails at TestMain with the fix; it never
// skips. Checked in a child process of this test binary.
func TestMainFailsWithoutBinaries(t *testing.T) {
	if os.Getenv("CPTEST_CHILD") == "1" {
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainFailsWithoutBinaries$", "-test.count=1")
	cmd.Env = append(os.Environ(), "CPTEST_CHILD=1", "KUBEBUILDER_ASSETS="+t.TempDir())
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("child exited with %v, want a failure; output:\n%s", err, out)
	}
	for _, want := range []string{"FAIL", "make controlplane"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output does not say %q:\n%s", want, out)
		}
	}
}
