package dissect

import (
	"slices"
	"unsafe"
)

// Batch holds copies of records that stay valid after the sink call that
// received them, for writers that format records on other goroutines.
// Adding a record copies only what the record borrows from buffers that
// are reused (its field slices, byte-string values, warnings slice and
// Raw), into arenas the batch keeps for reuse: once the arenas have grown,
// Add allocates nothing. Strings are shared, since Go strings are
// immutable. A Batch is used by one goroutine at a time.
type Batch struct {
	Records  []Record
	fields   []Field
	warnings []string
	bytes    []byte
}

// Len is the number of records in the batch.
func (b *Batch) Len() int { return len(b.Records) }

// Size is about how many bytes the batch holds beyond its records: what
// its field and byte arenas hold.
func (b *Batch) Size() int {
	return len(b.fields)*int(unsafe.Sizeof(Field{})) + len(b.bytes)
}

// Reset empties the batch, keeping its arenas. It does not clear them:
// strings of the records it held stay referenced until overwritten, which
// bounds them by the arenas' size, and clearing cost as much as copying.
func (b *Batch) Reset() {
	b.Records = b.Records[:0]
	b.fields = b.fields[:0]
	b.warnings = b.warnings[:0]
	b.bytes = b.bytes[:0]
}

// Add appends a copy of r.
func (b *Batch) Add(r *Record) {
	n := len(b.Records)
	if n == cap(b.Records) {
		b.Records = slices.Grow(b.Records, 1)
	}
	b.Records = b.Records[:n+1]
	c := &b.Records[n] // copied in place: a Record is large
	*c = *r
	c.arena = nil
	c.Fields = b.copyFields(r.Fields)
	c.Warnings = nil
	if len(r.Warnings) > 0 {
		start := len(b.warnings)
		b.warnings = append(b.warnings, r.Warnings...)
		c.Warnings = b.warnings[start:len(b.warnings):len(b.warnings)]
	}
	if r.Raw != nil {
		c.Raw = b.copyBytes(r.Raw)
	}
}

// copyBytes copies p into the byte arena. When the arena grows, earlier
// copies keep the old array, which stays alive as long as they do. An
// empty p is returned as it is: nil stays nil and empty stays empty (a
// Raw of no bytes is not a missing Raw: the lake writes "", not null).
func (b *Batch) copyBytes(p []byte) []byte {
	if len(p) == 0 {
		return p[:0:0]
	}
	start := len(b.bytes)
	b.bytes = append(b.bytes, p...)
	return b.bytes[start:len(b.bytes):len(b.bytes)]
}

// copyFields copies fs, and the nested arrays and objects and byte strings
// below it, into the arenas.
func (b *Batch) copyFields(fs []Field) []Field {
	if fs == nil {
		return nil
	}
	start := len(b.fields)
	b.fields = append(b.fields, fs...)
	for i := range fs {
		v := &fs[i].Value
		switch v.kind {
		case KindArray, KindObject:
			sub := b.copyFields(v.sub) // may move b.fields: index again below
			b.fields[start+i].Value.sub = sub
		case KindBytes:
			p := b.copyBytes(unsafe.Slice(unsafe.StringData(v.str), len(v.str)))
			b.fields[start+i].Value.str = unsafe.String(unsafe.SliceData(p), len(p))
		}
	}
	return b.fields[start : start+len(fs) : start+len(fs)]
}
