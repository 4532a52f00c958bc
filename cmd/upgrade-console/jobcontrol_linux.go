package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// suspendUnavailable is suspendWouldHang when ctrl+z would hang the
// console, "" when a shell resumes it (or when /proc cannot tell: the
// default, Bubble Tea's, stands).
func suspendUnavailable() string {
	orphaned, ok := orphanedGroup(os.Getpid(), procTable{parent: parentPID, group: syscall.Getpgid, session: unix.Getsid})
	if ok && orphaned {
		return suspendWouldHang
	}
	return ""
}

// parentPID reads a process's parent from /proc/<pid>/stat: the field after
// the command name, which is in parentheses and may hold any character.
func parentPID(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	var state string
	var ppid int
	if _, err := fmt.Sscan(s[i+1:], &state, &ppid); err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return ppid, nil
}
