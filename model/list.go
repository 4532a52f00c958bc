package model

import "iter"

// List is an immutable list of pointers to immutable objects: the form in
// which a snapshot holds its fleet-sized kinds (a Machine, a Node and a
// NodeUpgrade per node).
//
// It is stored in chunks so that a snapshot in which a few objects changed
// shares every other chunk with the snapshot before it: publishing a status
// change of one of 10,000 Machines copies one chunk and the chunk index
// (~2 KB), where a flat slice copied all 10,000 pointers (80 KB). At up to
// ten snapshots a second under load that copy was a tenth of all the console
// allocated (heap profile of a 10,000-node bench/e2e run), and each one was
// a large allocation that could start a collection in the publisher.
//
// The zero List is empty. Never modify what it points to.
type List[T any] struct {
	chunks [][]*T
	n      int
}

const (
	listChunkShift = 8
	listChunk      = 1 << listChunkShift
)

// ListOf returns a List of the given pointers, in order. It shares the
// slice's backing array, which the caller must no longer modify.
func ListOf[T any](items ...*T) List[T] {
	if len(items) == 0 {
		return List[T]{}
	}
	chunks := make([][]*T, 0, (len(items)+listChunk-1)/listChunk)
	for lo := 0; lo < len(items); lo += listChunk {
		hi := min(lo+listChunk, len(items))
		chunks = append(chunks, items[lo:hi:hi])
	}
	return List[T]{chunks: chunks, n: len(items)}
}

// Len is the number of objects.
func (l List[T]) Len() int { return l.n }

// At returns the i-th object; it panics when i is out of range, as a slice
// index does.
func (l List[T]) At(i int) *T {
	if uint(i) >= uint(l.n) {
		panic("model.List: index out of range")
	}
	return l.chunks[i>>listChunkShift][i&(listChunk-1)]
}

// All yields the index and object of each element in order.
func (l List[T]) All() iter.Seq2[int, *T] {
	return func(yield func(int, *T) bool) {
		i := 0
		for _, c := range l.chunks {
			for _, v := range c {
				if !yield(i, v) {
					return
				}
				i++
			}
		}
	}
}

// Slice returns the objects as a new slice.
func (l List[T]) Slice() []*T {
	out := make([]*T, 0, l.n)
	for _, c := range l.chunks {
		out = append(out, c...)
	}
	return out
}

// Same reports whether two lists are the same publication (the watchers
// reuse a list none of whose objects changed), so that whatever was worked
// out from one still holds for the other. Lists built separately are not
// the same, whatever they hold.
func (l List[T]) Same(o List[T]) bool {
	return l.n == o.n && (l.n == 0 || &l.chunks[0] == &o.chunks[0])
}

// Key is a comparable stand-in for the list's identity: two lists have the
// same Key exactly when they are Same (nil for every empty list), for
// memo keys compared with ==.
func (l List[T]) Key() *[]*T {
	if l.n == 0 {
		return nil
	}
	return &l.chunks[0]
}

// With returns the list with the objects at the given indexes replaced
// (set[i] for each i in it), copying only the chunks they fall in. l is
// unchanged. It panics when an index is out of range.
func (l List[T]) With(set map[int]*T) List[T] {
	if len(set) == 0 {
		return l
	}
	chunks := make([][]*T, len(l.chunks))
	copy(chunks, l.chunks)
	copied := make(map[int]bool, len(set))
	for i, v := range set {
		if uint(i) >= uint(l.n) {
			panic("model.List: index out of range")
		}
		c := i >> listChunkShift
		if !copied[c] {
			chunks[c] = append([]*T(nil), chunks[c]...)
			copied[c] = true
		}
		chunks[c][i&(listChunk-1)] = v
	}
	return List[T]{chunks: chunks, n: l.n}
}
