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
// of the real binary.
const shimTargetSuffix = ".target"

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
	err = syscall.Exec(real, args, os.Environ())
	os.Stderr.WriteString("control plane shim: exec " + real + ": " + err.Error() + "\n")
	os.Exit(127)
}

// shim returns the path to start binary name through (see above), creating
// the shim in dir; on failure it returns the real path, which still works.
func shim(dir, assets, name string) string {
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
	return link
}
