package main

// suspendWouldHang is why ctrl+z must not suspend this console ("" when it
// may): with no shell job control above it (run by `ssh host cmd`, a tmux
// or screen command, `kubectl exec -it`, a script), its process group is
// orphaned and the kernel discards the SIGTSTP Bubble Tea sends itself; the
// console then waited for a SIGCONT that never came, deaf to keys, Ctrl-C
// and SIGTERM, still renewing the upgrade lock.
const suspendWouldHang = "ctrl+z is off here: no shell with job control started the console (an ssh or tmux command, a script), so nothing would resume it"

// procTable is what orphanedGroup reads of a process: its parent, process
// group and session.
type procTable struct {
	parent  func(pid int) (int, error)
	group   func(pid int) (int, error)
	session func(pid int) (int, error)
}

// orphanedGroup reports whether the process group of pid is orphaned, as
// POSIX defines it for job control, along its line of ancestors: the first
// ancestor in another group must be in the same session (the shell a
// stopped job returns to). ok is false when the table could not tell.
func orphanedGroup(pid int, t procTable) (orphaned, ok bool) {
	group, err := t.group(pid)
	if err != nil {
		return false, false
	}
	session, err := t.session(pid)
	if err != nil {
		return false, false
	}
	for range 64 {
		ppid, err := t.parent(pid)
		if err != nil {
			return false, false
		}
		if ppid <= 0 {
			return true, true
		}
		pg, err := t.group(ppid)
		if err != nil {
			return false, false
		}
		if pg != group {
			ps, err := t.session(ppid)
			if err != nil {
				return false, false
			}
			return ps != session, true
		}
		pid = ppid
	}
	return false, false
}
