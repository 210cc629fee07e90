package pbwalk

import (
	"fmt"
	"math"
	"strconv"

	"github.com/dissect-tools/dissect/dissect"

	"google.golang.org/protobuf/encoding/protowire"
)

// maxInput bounds the buffer Decode accepts: offsets are kept in int32.
const maxInput = math.MaxInt32

// Decoder decodes protobuf payloads into dissect fields, with a Message or
// raw (like protoc --decode_raw). It keeps its scratch space, and the
// strings it interns, between calls. The zero value is ready to use; a
// Decoder is not safe for concurrent use.
type Decoder struct {
	// WarnPrefix starts every warning the decoder writes (e.g. "payload: ").
	WarnPrefix string

	rec    *dissect.Record
	strs   map[string]string // interned strings (see intern)
	build  bool              // build values
	warn   bool              // write warnings to rec
	issues int               // signs that the schema does not fit
	nwarn  int
	extra  int // warnings over MaxWarnings
	budget int // output fields left
	slots  []slot
	tags   []tag
}

// slot is one output entry of a message being decoded: a field number
// (negated when the occurrences are shown raw: an unknown number or a wire
// type that does not match the schema), how many values it holds, and
// where they go.
type slot struct {
	key   int64
	count int32
	fill  int32
	item  int32 // first item in the message's item block
	arr   bool  // shown as an array of items
}

// tag is one field occurrence found by scan, kept for fill. It holds no
// pointers, so that the scratch slices cost nothing to the garbage
// collector.
type tag struct {
	v    uint64 // varint or fixed value
	slot int32  // index into Decoder.slots
	cnt  int32  // values it adds to its slot
	off  int32  // length-delimited value or group body: b[off:off+n]
	n    int32
	num  protowire.Number
	fi   int16 // index of the field in the message; -1: shown raw
	typ  protowire.Type
}

// scanned is what scan found: the number of slots and of tags it appended.
type scanned struct{ slots, tags int }

// Decode decodes b as message m, or raw when m is nil. Fields come in the
// order their numbers first appear on the wire; nested values are
// allocated from rec (see dissect.Record.Alloc) and warnings are written to
// rec, prefixed with WarnPrefix. issues counts the signs that m does not
// fit b (each with a warning, up to MaxWarnings). When build is false
// nothing is built (fields is nil) but the checks, issues and warnings are
// the same.
//
// rec may be nil: warnings are then dropped (and, when build is true,
// values are allocated on their own).
//
// err is non-nil, an *Error, when b is not protobuf wire data (or a bound
// was reached); then fields is nil and the warnings of the attempt are
// kept. Byte values in fields alias b; strings are copies.
func (d *Decoder) Decode(rec *dissect.Record, m *Message, b []byte, build bool) (fields []dissect.Field, issues int, err error) {
	d.build, d.warn = build, rec != nil
	if rec == nil && build {
		rec = new(dissect.Record)
	}
	d.rec = rec
	fields, e := d.decode(m, b)
	d.rec = nil
	return fields, d.issues, e.public()
}

// Check reports whether b decodes as m (nil: raw) with no error and no
// issue. It builds nothing and writes no warning.
func (d *Decoder) Check(m *Message, b []byte) bool {
	d.build, d.warn = false, false
	_, e := d.decode(m, b)
	return !e.failed() && d.issues == 0
}

// decode decodes b as m (nil: raw) with the current mode.
func (d *Decoder) decode(m *Message, b []byte) ([]dissect.Field, wireErr) {
	d.reset(len(b))
	if len(b) > maxInput {
		return nil, limit(0, "message over "+strconv.Itoa(maxInput)+" bytes")
	}
	fields, e := d.message(m, b, 0)
	if e.failed() {
		return nil, e
	}
	d.finish()
	return fields, wireErr{}
}

// reset prepares a decode of a payload of n bytes.
func (d *Decoder) reset(n int) {
	d.issues, d.nwarn, d.extra = 0, 0, 0
	d.budget = 2*n + 64
	d.slots, d.tags = d.slots[:0], d.tags[:0]
}

// issue counts a sign that the schema does not fit, with a warning.
func (d *Decoder) issue(format string, args ...any) {
	d.issues++
	if !d.warn {
		return
	}
	if d.nwarn >= MaxWarnings {
		d.extra++
		return
	}
	d.nwarn++
	d.rec.Warn(d.WarnPrefix + fmt.Sprintf(format, args...))
}

// finish writes the count of warnings left out.
func (d *Decoder) finish() {
	if d.warn && d.extra > 0 {
		d.rec.Warn(d.WarnPrefix + strconv.Itoa(d.extra) + " more warnings not shown")
	}
}

// packedCount returns how many values a packed run holds, or 0 when it is
// not a whole number of values.
func packedCount(f *fieldInfo, b []byte) int {
	switch wireOf(f.kind) {
	case protowire.Fixed32Type:
		if len(b)%4 != 0 {
			return 0
		}
		return len(b) / 4
	case protowire.Fixed64Type:
		if len(b)%8 != 0 {
			return 0
		}
		return len(b) / 8
	}
	n := 0
	for i := 0; i < len(b); {
		_, k := protowire.ConsumeVarint(b[i:])
		if k < 0 {
			return 0
		}
		i += k
		n++
	}
	return n
}

// keyOf returns the slot key of a field occurrence, the index of the field
// in m (-1 when it is shown raw) and the number of values it adds.
func keyOf(m *Message, num protowire.Number, typ protowire.Type, data []byte) (int64, int, int) {
	i := m.index(num)
	if i < 0 || !wireOK(&m.fields[i], typ) {
		return -int64(num), -1, 1
	}
	f := &m.fields[i]
	if f.packed && typ == protowire.BytesType {
		if n := packedCount(f, data); n > 0 {
			return int64(num), i, n
		}
		if len(data) == 0 {
			return int64(num), i, 0
		}
		return -int64(num), -1, 1 // a broken packed run is shown raw
	}
	return int64(num), i, 1
}

// findSlot returns the index of the slot with key in d.slots[base:], or -1.
func (d *Decoder) findSlot(base int, key int64) int {
	if n := len(d.slots); n > base && d.slots[n-1].key == key {
		return n - 1
	}
	for i := base; i < len(d.slots); i++ {
		if d.slots[i].key == key {
			return i
		}
	}
	return -1
}

// message decodes b as m (nil: raw) at nesting depth depth.
func (d *Decoder) message(m *Message, b []byte, depth int) ([]dissect.Field, wireErr) {
	if m != nil && m.simple {
		if out, ok := d.fast(m, b, depth); ok {
			return out, wireErr{}
		}
	}
	sc, e := d.scan(m, b, depth)
	if e.failed() {
		return nil, e
	}
	return d.fill(m, b, depth, sc), wireErr{}
}

// fast decodes a message without repeated fields in one pass, as long as
// every field is known, fits its wire type and comes once (the usual
// case). Otherwise it undoes what it did and returns false, and the two
// passes of scan and fill take over.
func (d *Decoder) fast(m *Message, b []byte, depth int) ([]dissect.Field, bool) {
	issues, nwarn, extra, budget := d.issues, d.nwarn, d.extra, d.budget
	nw := 0
	if d.warn {
		nw = len(d.rec.Warnings)
	}
	var out []dissect.Field
	if d.build {
		out = d.rec.Alloc(len(m.fields))
	}
	var seen uint64
	n := 0
	for i := 0; i < len(b); {
		num, typ, v, data, next, e := field(b, i, depth)
		fi := -1
		if !e.failed() {
			fi = m.index(num)
		}
		if fi < 0 || seen&(1<<fi) != 0 || !wireOK(&m.fields[fi], typ) || d.budget < 1 {
			d.issues, d.nwarn, d.extra, d.budget = issues, nwarn, extra, budget
			if d.warn {
				d.rec.Warnings = d.rec.Warnings[:nw]
			}
			return nil, false
		}
		seen |= 1 << fi
		d.budget--
		f := &m.fields[fi]
		val := d.value(m, f, v, data, depth)
		if d.build {
			out[n] = dissect.Field{Key: f.name, Value: val}
		}
		n++
		i = next
	}
	if !d.build {
		return nil, true
	}
	return out[:n:n], true
}

// scan is the first pass over a message: it checks the wire structure and
// appends one slot per output entry and one tag per field occurrence. On
// error it appends nothing.
func (d *Decoder) scan(m *Message, b []byte, depth int) (scanned, wireErr) {
	base, tbase := len(d.slots), len(d.tags)
	fail := func(e wireErr) (scanned, wireErr) {
		d.slots, d.tags = d.slots[:base], d.tags[:tbase]
		return scanned{}, e
	}
	for i := 0; i < len(b); {
		num, typ, v, data, next, e := field(b, i, depth)
		if e.failed() {
			return fail(e)
		}
		key, fi, n := keyOf(m, num, typ, data)
		s := d.findSlot(base, key)
		if s >= 0 {
			d.slots[s].count += int32(n)
		} else {
			if len(d.slots)-base >= MaxFieldNumbers {
				return fail(limit(i, "over "+strconv.Itoa(MaxFieldNumbers)+" distinct field numbers"))
			}
			s = len(d.slots)
			d.slots = append(d.slots, slot{key: key, count: int32(n)})
		}
		off := 0
		if data != nil {
			off = cap(b) - cap(data) // data is a slice of b
		}
		d.tags = append(d.tags, tag{v: v, slot: int32(s), cnt: int32(n), off: int32(off), n: int32(len(data)), num: num, fi: int16(fi), typ: typ})
		i = next
	}
	cost := 0
	for _, s := range d.slots[base:] {
		cost++
		if s.count > 1 || s.key > 0 && m.field(protowire.Number(s.key)).list {
			cost += int(s.count)
		}
	}
	if cost > d.budget {
		return fail(limit(0, "output limit reached"))
	}
	d.budget -= cost
	return scanned{len(d.slots) - base, len(d.tags) - tbase}, wireErr{}
}

// fill is the second pass: it decodes the values of a scanned message b
// into fields, in the order their numbers first appear on the wire. It
// removes the message's slots and tags.
func (d *Decoder) fill(m *Message, b []byte, depth int, sc scanned) []dissect.Field {
	base, tbase := len(d.slots)-sc.slots, len(d.tags)-sc.tags
	n := sc.slots
	var out, items []dissect.Field
	if d.build {
		out = d.rec.Alloc(n)
		// Name every entry; arrays get their items from one block.
		total := 0
		for k := range n {
			s := &d.slots[base+k]
			var f *fieldInfo
			if s.key > 0 {
				f = m.field(protowire.Number(s.key))
				out[k].Key = f.name
			} else {
				out[k].Key = d.numKey(-s.key)
			}
			s.arr = f != nil && f.list || f == nil && s.count > 1
			if s.arr {
				s.item = int32(total)
				total += int(s.count)
			}
		}
		if total > 0 {
			items = d.rec.Alloc(total)
		}
	}
	for ti := tbase; ti < tbase+sc.tags; ti++ {
		t := d.tags[ti]
		if t.cnt == 0 {
			continue
		}
		k := int(t.slot)
		var f *fieldInfo
		if t.fi >= 0 {
			f = &m.fields[t.fi]
		}
		if d.slots[k].fill == 0 {
			d.slotIssues(m, f, t.num, t.typ, d.slots[k].count)
		}
		var data []byte
		if t.typ == protowire.BytesType || t.typ == protowire.StartGroupType {
			data = b[t.off : t.off+t.n]
		}
		if f != nil && f.packed && t.typ == protowire.BytesType {
			s := &d.slots[k]
			for j := 0; j < len(data); {
				var x uint64
				switch wireOf(f.kind) {
				case protowire.Fixed32Type:
					x = uint64(le32(data[j:]))
					j += 4
				case protowire.Fixed64Type:
					x = le64(data[j:])
					j += 8
				default:
					var w int
					x, w = protowire.ConsumeVarint(data[j:])
					j += w
				}
				val := d.scalar(m, f, x)
				if d.build {
					items[s.item+s.fill] = dissect.Elem(val)
				}
				s.fill++
			}
			continue
		}
		var val dissect.Value
		if f != nil {
			val = d.value(m, f, t.v, data, depth)
		} else {
			val = d.raw(t.typ, t.v, data, depth)
		}
		s := &d.slots[k] // after the value: nested messages may grow d.slots
		if d.build {
			if s.arr {
				items[s.item+s.fill] = dissect.Elem(val)
			} else {
				out[k-base].Value = val
			}
		}
		s.fill++
	}
	if d.build {
		for k := range n {
			if s := &d.slots[base+k]; s.arr {
				out[k].Value = dissect.Array(items[s.item : s.item+s.count : s.item+s.count])
			}
		}
	}
	d.slots, d.tags = d.slots[:base], d.tags[:tbase]
	return out
}

// slotIssues reports, at the first occurrence of an output entry, a field
// the schema does not have, a wire type that does not fit it, or a
// singular field sent several times.
func (d *Decoder) slotIssues(m *Message, f *fieldInfo, num protowire.Number, typ protowire.Type, count int32) {
	switch {
	case m == nil:
	case f == nil:
		if fi := m.field(num); fi != nil {
			d.issue("%s.%s (field %d): wire type %s does not fit %s; shown raw as %q", m.name, fi.name, num, wireName(typ), fi.kind, strconv.Itoa(int(num)))
		} else {
			d.issue("%s has no field %d (%s); shown raw", m.name, num, wireName(typ))
		}
	case !f.list && count > 1:
		d.issue("%s.%s appears %d times; the last is shown", m.name, f.name, count)
	}
}
