package model

import (
	"slices"
	"testing"
)

func ints(n int) []*int {
	out := make([]*int, n)
	for i := range out {
		v := i
		out[i] = &v
	}
	return out
}

func TestListKeepsOrderAcrossChunks(t *testing.T) {
	for _, n := range []int{0, 1, listChunk - 1, listChunk, listChunk + 1, 3*listChunk + 7} {
		items := ints(n)
		l := ListOf(slices.Clone(items)...)
		if l.Len() != n {
			t.Fatalf("n=%d: Len %d", n, l.Len())
		}
		for i := range n {
			if l.At(i) != items[i] {
				t.Fatalf("n=%d: At(%d) = %d", n, i, *l.At(i))
			}
		}
		var seen []*int
		for i, v := range l.All() {
			if i != len(seen) {
				t.Fatalf("n=%d: All yielded index %d at position %d", n, i, len(seen))
			}
			seen = append(seen, v)
		}
		if !slices.Equal(seen, items) || !slices.Equal(l.Slice(), items) {
			t.Fatalf("n=%d: All/Slice do not give the items in order", n)
		}
	}
}

func TestListAllStopsEarly(t *testing.T) {
	l := ListOf(ints(2*listChunk + 3)...)
	count := 0
	for i := range l.All() {
		count++
		if i == listChunk+1 {
			break
		}
	}
	if count != listChunk+2 {
		t.Errorf("yielded %d after break, want %d", count, listChunk+2)
	}
}

func TestListWithCopiesOnlyTouchedChunks(t *testing.T) {
	items := ints(3*listChunk + 10)
	l := ListOf(slices.Clone(items)...)
	x, y := 1000, 2000
	next := l.With(map[int]*int{5: &x, listChunk + 5: &y})
	if next.At(5) != &x || next.At(listChunk+5) != &y {
		t.Fatalf("replaced elements not set")
	}
	for i := range items {
		if l.At(i) != items[i] {
			t.Fatalf("With modified the original at %d", i)
		}
		if i != 5 && i != listChunk+5 && next.At(i) != items[i] {
			t.Fatalf("With changed element %d", i)
		}
	}
	if &next.chunks[2][0] != &l.chunks[2][0] || &next.chunks[3][0] != &l.chunks[3][0] {
		t.Errorf("untouched chunks were copied")
	}
	if &next.chunks[0][0] == &l.chunks[0][0] || &next.chunks[1][0] == &l.chunks[1][0] {
		t.Errorf("touched chunks are shared with the original")
	}
	if l.Same(next) || !l.Same(l) || next.Same(l) {
		t.Errorf("Same: a changed list must differ from its origin, and equal itself")
	}
	if l.Key() == next.Key() || l.With(nil).Key() != l.Key() || (List[int]{}).Key() != nil {
		t.Errorf("Key must follow Same")
	}
	if !l.With(nil).Same(l) {
		t.Errorf("With nothing must return the same list")
	}
}

func TestListSameIsIdentity(t *testing.T) {
	items := ints(10)
	a, b := ListOf(items...), ListOf(items...)
	if a.Same(b) {
		t.Errorf("separately built lists are not the same publication")
	}
	var z1, z2 List[int]
	if !z1.Same(z2) || !z1.Same(ListOf[int]()) {
		t.Errorf("empty lists are all the same")
	}
}

func TestListIndexOutOfRangePanics(t *testing.T) {
	l := ListOf(ints(3)...)
	for _, f := range []func(){func() { l.At(3) }, func() { l.At(-1) }, func() { l.With(map[int]*int{3: nil}) }} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("no panic")
				}
			}()
			f()
		}()
	}
}
