//go:build linux

package controlplane

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// envtest starts etcd and kube-apiserver in process groups of their own, so
// they outlive a console or test binary that is killed, crashes or times out
// without reaching Stop, and keep a shared machine busy. The control plane
// therefore starts them through a shim: a symlink named like the binary,
// pointing at the running executable, which on start (init below) asks the
// kernel to send it SIGTERM when its parent dies and then execs the real
// binary. The death signal survives the exec.

// shimTargetSuffix names the file beside a shim symlink that holds the path
// of the real binary, shimEnvSuffix the one that holds environment
// variables (NAME=value, one a line) set for it alone.
const (
	shimTargetSuffix = ".target"
	shimEnvSuffix    = ".env"
)

func init() {
	base := filepath.Base(os.Args[0])
	if base != "kube-apiserver" && base != "etcd" {
		return
	}
	target, err := os.ReadFile(os.Args[0] + shimTargetSuffix)
	if err != nil {
		return // a real binary of that name, not our shim
	}
	real := strings.TrimSpace(string(target))
	ppid := os.Getppid()
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0); errno != 0 {
		os.Stderr.WriteString("control plane shim: prctl: " + errno.Error() + "\n")
	}
	if os.Getppid() != ppid {
		os.Exit(1) // the parent died before the death signal was armed
	}
	args := append([]string{real}, os.Args[1:]...)
	err = syscall.Exec(real, args, shimEnv(os.Environ(), os.Args[0]+shimEnvSuffix))
	os.Stderr.WriteString("control plane shim: exec " + real + ": " + err.Error() + "\n")
	os.Exit(127)
}

// shimEnv is environ with the variables the file at path sets replacing any
// of the same name (a Go program reads the first of duplicates).
func shimEnv(environ []string, path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return environ
	}
	var set []string
	names := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		if name, _, ok := strings.Cut(l, "="); ok && name != "" {
			set = append(set, l)
			names[name] = true
		}
	}
	out := make([]string, 0, len(environ)+len(set))
	for _, kv := range environ {
		if name, _, _ := strings.Cut(kv, "="); !names[name] {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}

// shim returns the path to start binary name through (see above), creating
// the shim in dir, with env set for that binary alone; on failure it
// returns the real path, which still works but without env.
func shim(dir, assets, name string, env []string) string {
	real := filepath.Join(assets, name)
	self, err := os.Executable()
	if err != nil {
		return real
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return real
	}
	link := filepath.Join(dir, name)
	_ = os.Remove(link)
	if err := os.Symlink(self, link); err != nil {
		return real
	}
	if err := os.WriteFile(link+shimTargetSuffix, []byte(real), 0o600); err != nil {
		return real
	}
	_ = os.Remove(link + shimEnvSuffix)
	if len(env) > 0 {
		if err := os.WriteFile(link+shimEnvSuffix, []byte(strings.Join(env, "\n")+"\n"), 0o600); err != nil {
			return real
		}
	}
	return link
}
