// Package strcache finds values derived from strings by the address of the
// strings' bytes instead of by hashing their contents.
//
// Protocols name their message types and field keys with string constants,
// and a stream's address strings live as long as the stream, so on the hot
// paths of dissect (counting messages per type, writing JSON keys and
// header values) the same few strings come back again and again at the same
// addresses. A [Cache] keeps one value per slot, found from the string's
// address alone: no hashing of the contents and no allocation.
package strcache

import "unsafe"

// Cache is a two-way set-associative cache from strings to values of type
// V. A slot holds a string when both the address and the length of its
// bytes match; since Go strings are immutable and the slot keeps the
// address (so the bytes cannot be freed and reused while it is cached), a
// match means the same contents. Two strings with the same contents at
// different addresses take different slots (or evict each other): the
// cache only saves work, a miss is never wrong. Each string may sit in
// either slot of its set, so two hot strings whose addresses hash alike do
// not evict each other on every use.
//
// The zero Cache is not usable: make one with [New]. A Cache is used from
// one goroutine.
type Cache[V any] struct {
	slots []entry[V]
	shift uint8
}

type entry[V any] struct {
	p *byte
	n int
	v V
}

// New returns a cache of 1<<bits slots (bits in 1..16), in sets of two.
func New[V any](bits int) Cache[V] {
	bits = min(max(bits, 1), 16)
	return Cache[V]{slots: make([]entry[V], 1<<bits), shift: uint8(64 - (bits - 1))}
}

// Made reports whether c was made by [New].
func (c *Cache[V]) Made() bool { return c.slots != nil }

// Lookup returns the value of the slot for s, and whether that slot holds s.
// On a miss the older slot of s's set is given to s and keeps the value it
// had (another string's), so that the caller can overwrite it in place and
// reuse its buffers. The empty string never hits. c must have been made by
// [New].
func (c *Cache[V]) Lookup(s string) (v *V, hit bool) {
	if c.slots == nil {
		panic("strcache: Lookup on a Cache not made by New")
	}
	p := unsafe.StringData(s)
	// The set: the top bits of a Fibonacci hash of the address, always
	// < len(slots)/2 (New makes len(slots) 1<<(65-shift)), so the two
	// slots need no bounds check.
	set := uintptr(uint64(uintptr(unsafe.Pointer(p))) * 0x9E3779B97F4A7C15 >> c.shift)
	size := unsafe.Sizeof(entry[V]{})
	e0 := (*entry[V])(unsafe.Add(unsafe.Pointer(unsafe.SliceData(c.slots)), 2*set*size))
	e1 := (*entry[V])(unsafe.Add(unsafe.Pointer(e0), size))
	if len(s) == 0 {
		return &e1.v, false
	}
	if e0.p == p && e0.n == len(s) {
		return &e0.v, true
	}
	if e1.p == p && e1.n == len(s) {
		// Most recently used first: swap, so that a miss replaces the
		// older string.
		*e0, *e1 = *e1, *e0
		return &e0.v, true
	}
	// Miss: the older entry (e1) goes; the newer moves to e1.
	*e0, *e1 = *e1, *e0
	e0.p, e0.n = p, len(s)
	return &e0.v, false
}
