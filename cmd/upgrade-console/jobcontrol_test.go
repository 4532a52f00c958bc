package main

import (
	"errors"
	"testing"
)

// orphanedGroup on process tables of the places a console runs: a job
// started by an interactive shell (through make) can be stopped and
// resumed; one started as the command of tmux or ssh (sh -c, no job
// control, the session's leader) cannot, and ctrl+z hung it.
func TestOrphanedGroup(t *testing.T) {
	type proc struct{ parent, group, session int }
	table := func(ps map[int]proc) procTable {
		get := func(f func(proc) int) func(int) (int, error) {
			return func(pid int) (int, error) {
				p, ok := ps[pid]
				if !ok {
					return 0, errors.New("no such process")
				}
				return f(p), nil
			}
		}
		return procTable{parent: get(func(p proc) int { return p.parent }), group: get(func(p proc) int { return p.group }), session: get(func(p proc) int { return p.session })}
	}
	for _, c := range []struct {
		name         string
		ps           map[int]proc
		orphaned, ok bool
	}{
		{"interactive shell, through make", map[int]proc{300: {200, 200, 50}, 200: {50, 200, 50}, 50: {40, 50, 50}, 40: {1, 40, 40}}, false, true},
		{"interactive shell", map[int]proc{300: {50, 300, 50}, 50: {40, 50, 50}}, false, true},
		{"tmux command (sh -c)", map[int]proc{300: {60, 60, 60}, 60: {10, 60, 60}, 10: {1, 10, 10}}, true, true},
		{"ssh command", map[int]proc{300: {70, 70, 70}, 70: {5, 5, 5}}, true, true},
		{"parent is init", map[int]proc{300: {1, 300, 300}, 1: {0, 1, 1}}, true, true},
		{"parent unreadable", map[int]proc{300: {99, 300, 300}}, false, false},
	} {
		orphaned, ok := orphanedGroup(300, table(c.ps))
		if orphaned != c.orphaned || ok != c.ok {
			t.Errorf("%s: orphaned %v ok %v, want %v %v", c.name, orphaned, ok, c.orphaned, c.ok)
		}
	}
}
