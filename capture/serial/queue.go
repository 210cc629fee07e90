package serial

import (
	"encoding/binary"
	"time"

	"github.com/dissect-tools/dissect/capture"
)

// hdrSize is the size of a record's header in a [ring]: the read time
// (Unix nanoseconds) and a word holding the length, direction and kind.
const hdrSize = 16

// firstRing is the size a ring is first allocated with; it doubles as
// needed up to its limit.
const firstRing = 64 << 10

// record is one entry of a [ring]: a read (its bytes follow the header) or
// a marker for a run of dropped reads (no bytes follow).
type record struct {
	t      time.Time
	n      int64 // bytes of the read, or bytes dropped
	dir    capture.Direction
	marker bool
}

// ring is the queue of a [Tap]: records, each a header and its bytes, in a
// byte ring buffer. Every byte held counts, headers included, so the memory
// held for a slow consumer is len(buf), which the Tap keeps within its
// limit. Records are addressed by absolute position: the number of bytes
// pushed before them since the ring was made, which growing the buffer
// does not change. Not safe for concurrent use (the Tap's mutex guards
// it).
type ring struct {
	buf    []byte
	limit  int   // the size buf grows to at most (the Tap keeps used within it)
	r      int   // index in buf of the first byte held
	head   int64 // absolute position of the first byte held
	used   int   // bytes held
	count  int   // records held
	pushed int64 // records pushed since the ring was made
	popped int64 // records popped since the ring was made
}

// holds reports whether the record at absolute position pos is still
// queued.
func (q *ring) holds(pos int64) bool { return pos >= q.head }

// push appends rec and its bytes b (nil for a marker) and returns the
// record's absolute position. The buffer grows as needed; the caller
// bounds q.used.
func (q *ring) push(rec record, b []byte) int64 {
	need := q.used + hdrSize + len(b)
	if need > len(q.buf) {
		q.grow(need)
	}
	pos := q.head + int64(q.used)
	var h [hdrSize]byte
	encodeHeader(h[:], rec)
	i := q.index(pos)
	q.put(i, h[:])
	q.put((i+hdrSize)%len(q.buf), b)
	q.used += hdrSize + len(b)
	q.count++
	q.pushed++
	return pos
}

// setLength changes the length of the marker at pos, which must still be
// queued.
func (q *ring) setLength(pos int64, rec record) {
	var h [hdrSize]byte
	encodeHeader(h[:], rec)
	q.put(q.index(pos), h[:])
}

// pop removes the first record; a read's bytes are copied into out, which
// must hold ReadSize bytes, and returned.
func (q *ring) pop(out []byte) (record, []byte) {
	var h [hdrSize]byte
	q.get(q.r, h[:])
	rec := decodeHeader(h[:])
	size := hdrSize
	var data []byte
	if !rec.marker {
		data = out[:rec.n]
		q.get((q.r+hdrSize)%len(q.buf), data)
		size += len(data)
	}
	q.r = (q.r + size) % len(q.buf)
	q.head += int64(size)
	q.used -= size
	q.count--
	q.popped++
	return rec, data
}

// grow reallocates buf to hold at least need bytes, doubling it up to the
// limit, with the bytes held moved to its start.
func (q *ring) grow(need int) {
	size := max(len(q.buf), firstRing)
	for size < need {
		size *= 2
	}
	size = min(size, max(q.limit, need))
	nb := make([]byte, size)
	if q.used > 0 {
		q.get(q.r, nb[:q.used])
	}
	q.buf, q.r = nb, 0
}

// index returns where the byte at absolute position pos is in buf.
func (q *ring) index(pos int64) int {
	return (q.r + int(pos-q.head)) % len(q.buf)
}

// put copies b into buf from index i on, wrapping at the end.
func (q *ring) put(i int, b []byte) {
	n := copy(q.buf[i:], b)
	copy(q.buf, b[n:])
}

// get copies len(b) bytes of buf from index i on into b, wrapping at the
// end.
func (q *ring) get(i int, b []byte) {
	n := copy(b, q.buf[i:])
	copy(b[n:], q.buf)
}

// encodeHeader writes rec's header into h: the time, then
// length<<2 | inbound<<1 | marker.
func encodeHeader(h []byte, rec record) {
	binary.LittleEndian.PutUint64(h, uint64(rec.t.UnixNano()))
	w := uint64(rec.n) << 2
	if rec.dir == capture.DirInbound {
		w |= 2
	}
	if rec.marker {
		w |= 1
	}
	binary.LittleEndian.PutUint64(h[8:], w)
}

// decodeHeader reads a header written by encodeHeader.
func decodeHeader(h []byte) record {
	w := binary.LittleEndian.Uint64(h[8:])
	rec := record{
		t:      time.Unix(0, int64(binary.LittleEndian.Uint64(h))).UTC(),
		n:      int64(w >> 2),
		dir:    capture.DirOutbound,
		marker: w&1 != 0,
	}
	if w&2 != 0 {
		rec.dir = capture.DirInbound
	}
	return rec
}
