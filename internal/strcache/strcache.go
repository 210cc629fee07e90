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

// Cache is a direct-mapped cache from strings to values of type V. A slot
// holds a string when both the address and the length of its bytes match;
// since Go strings are immutable and the slot keeps the address (so the
// bytes cannot be freed and reused while it is cached), a match means the
// same contents. Two strings with the same contents at different addresses
// take different slots (or evict each other): the cache only saves work, a
// miss is never wrong.
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

// New returns a cache of 1<<bits slots (bits in 1..16).
func New[V any](bits int) Cache[V] {
	bits = min(max(bits, 1), 16)
	return Cache[V]{slots: make([]entry[V], 1<<bits), shift: uint8(64 - bits)}
}

// Made reports whether c was made by [New].
func (c *Cache[V]) Made() bool { return c.slots != nil }

// Lookup returns the value of the slot for s, and whether that slot holds s.
// On a miss the slot is given to s and keeps the value it had (the previous
// string's), so that the caller can overwrite it in place and reuse its
// buffers. The empty string never hits. c must have been made by [New].
func (c *Cache[V]) Lookup(s string) (v *V, hit bool) {
	if c.slots == nil {
		panic("strcache: Lookup on a Cache not made by New")
	}
	p := unsafe.StringData(s)
	// The top bits of a Fibonacci hash of the address: always < len(slots),
	// which New makes 1<<(64-shift), so the index needs no bounds check.
	i := uintptr(uint64(uintptr(unsafe.Pointer(p))) * 0x9E3779B97F4A7C15 >> c.shift)
	e := (*entry[V])(unsafe.Add(unsafe.Pointer(unsafe.SliceData(c.slots)), i*unsafe.Sizeof(entry[V]{})))
	if e.p == p && e.n == len(s) && len(s) > 0 {
		return &e.v, true
	}
	e.p, e.n = p, len(s)
	return &e.v, false
}
