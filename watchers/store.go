package watchers

import (
	"slices"
	"sort"
)

// store keeps the translated values of one kind, keyed by namespace/name, and
// the sorted slice the last snapshot published. Values are immutable once
// stored: an update replaces the pointer, so a published slice stays valid
// while the store moves on.
//
// Building a snapshot costs nothing for a kind that did not change (the
// previous slice is shared), a copy plus one write per changed object when
// only existing objects changed (the common case during a rollout: status
// updates), and a sort only when objects were added or removed.
type store[T any] struct {
	items map[string]*T
	// less orders the published slice; ties are broken by key.
	less func(a, b *T) bool

	sorted  []T
	keys    []string       // key of sorted[i]
	pos     map[string]int // key → index in sorted
	changed map[string]struct{}
	// structural is set when an object was added or removed, or an update
	// moved it in the sort order: the next build sorts again.
	structural bool
	// dirty is set by any change since the last build.
	dirty bool
	// epoch counts the builds that changed the set of keys: a list filtered
	// by membership in this store is stale when it moved.
	epoch uint64
}

func newStore[T any](less func(a, b *T) bool) *store[T] {
	return &store[T]{items: map[string]*T{}, less: less, pos: map[string]int{}, changed: map[string]struct{}{}}
}

func (s *store[T]) put(key string, v *T) {
	old, ok := s.items[key]
	s.items[key] = v
	s.dirty = true
	if !ok || s.less(old, v) || s.less(v, old) {
		s.structural = true
		return
	}
	if _, published := s.pos[key]; !published {
		s.structural = true
		return
	}
	s.changed[key] = struct{}{}
}

func (s *store[T]) remove(key string) bool {
	if _, ok := s.items[key]; !ok {
		return false
	}
	delete(s.items, key)
	s.dirty, s.structural = true, true
	return true
}

// list returns the sorted values, rebuilding only what changed. The returned
// slice must not be modified: later snapshots may share it.
func (s *store[T]) list() []T {
	if !s.dirty {
		return s.sorted
	}
	s.dirty = false
	if !s.structural {
		next := slices.Clone(s.sorted)
		for k := range s.changed {
			next[s.pos[k]] = *s.items[k]
		}
		clear(s.changed)
		s.sorted = next
		return next
	}
	s.structural = false
	s.epoch++
	clear(s.changed)
	keys := make([]string, 0, len(s.items))
	for k := range s.items {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := s.items[keys[i]], s.items[keys[j]]
		if s.less(a, b) {
			return true
		}
		if s.less(b, a) {
			return false
		}
		return keys[i] < keys[j]
	})
	next := make([]T, len(keys))
	clear(s.pos)
	for i, k := range keys {
		next[i] = *s.items[k]
		s.pos[k] = i
	}
	s.keys, s.sorted = keys, next
	return next
}

// truncate forgets every object after the first n of the published order
// (the oldest events): they would only be sorted again and cut off. An
// object that changes later comes back through put.
func (s *store[T]) truncate(n int) {
	if s.dirty || len(s.sorted) <= n {
		return
	}
	for _, k := range s.keys[n:] {
		delete(s.items, k)
		delete(s.pos, k)
	}
	s.sorted, s.keys = s.sorted[:n:n], s.keys[:n:n]
}

// get returns the value stored under key.
func (s *store[T]) get(key string) *T { return s.items[key] }

func (s *store[T]) len() int { return len(s.items) }
