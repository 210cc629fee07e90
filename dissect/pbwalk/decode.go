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

	top    *Message // the message of the payload (nil: raw)
	path   []seg    // the messages being decoded below the top, outermost first
	leaves []leaf   // the fields shown raw, in the order they were met
	parent string   // the path of path, when parentOK
	// parentOK says that parent is up to date with path.
	parentOK bool
}

// slot is one field number of a message being decoded: the number
// (negated when its occurrences are shown raw: an unknown number or a
// wire type that does not match the schema), how many values it holds,
// and where they go. A slot of a known field is one output entry; a raw
// slot only makes its issue be reported once.
type slot struct {
	key   int64
	count int32
	fill  int32 // values written so far (items of an array)
	occ   int32 // occurrences met so far
	item  int32 // first item in the message's item block
	out   int32 // index of the entry in the message's fields
	arr   bool  // shown as an array of items
	seen  bool  // its issues have been reported
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

// Decode decodes b as message m, or raw when m is nil. fields holds the
// fields of m, in the order their numbers first appear on the wire, each
// of the kind [Message.Decl] declares. Whatever m cannot hold (a field
// number m lacks, a wire type that does not fit, an enum value the enum
// lacks, a nested message that does not parse, ...: with m nil, every
// field) is in raw instead: one item per field occurrence, as
// [RawItemDecl] declares. Nested values are allocated from rec (see
// dissect.Record.Alloc) and warnings are written to rec, prefixed with
// WarnPrefix. issues counts the signs that m does not fit b (each with a
// warning, up to MaxWarnings). When build is false nothing is built
// (fields and raw are nil) but the checks, issues and warnings are the
// same.
//
// rec may be nil: warnings are then dropped (and, when build is true,
// values are allocated on their own).
//
// err is non-nil, an *Error, when b is not protobuf wire data (or a bound
// was reached); then fields and raw are nil and the warnings of the
// attempt are kept. Byte values alias b; strings are copies.
func (d *Decoder) Decode(rec *dissect.Record, m *Message, b []byte, build bool) (fields, raw []dissect.Field, issues int, err error) {
	d.build, d.warn = build, rec != nil
	if rec == nil && build {
		rec = new(dissect.Record)
	}
	d.rec = rec
	fields, e := d.decode(m, b)
	if !e.failed() && build {
		raw = d.buildRaw()
	}
	d.rec = nil
	d.clearPath()
	return fields, raw, d.issues, e.public()
}

// Check reports whether b decodes as m (nil: raw) with no error and no
// issue. It builds nothing and writes no warning.
func (d *Decoder) Check(m *Message, b []byte) bool {
	d.build, d.warn = false, false
	_, e := d.decode(m, b)
	d.clearPath()
	return !e.failed() && d.issues == 0
}

// decode decodes b as m (nil: raw) with the current mode.
func (d *Decoder) decode(m *Message, b []byte) ([]dissect.Field, wireErr) {
	d.reset(len(b))
	d.top = m
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
	d.path, d.leaves, d.parentOK = d.path[:0], d.leaves[:0], false
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

// warnf writes a warning that is not an issue (it says how the schema
// was applied, not that it does not fit), within MaxWarnings.
func (d *Decoder) warnf(format string, args ...any) {
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
	issues, nwarn, extra, budget, leaves := d.issues, d.nwarn, d.extra, d.budget, len(d.leaves)
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
			d.leaves = d.leaves[:leaves]
			if d.warn {
				d.rec.Warnings = d.rec.Warnings[:nw]
			}
			return nil, false
		}
		seen |= 1 << fi
		d.budget--
		f := &m.fields[fi]
		if val, ok := d.value(m, f, typ, v, data, depth, -1); ok {
			if d.build {
				out[n] = dissect.Field{Key: f.name, Value: val}
			}
			n++
		}
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
		switch {
		case s.key < 0:
			cost += int(s.count) // one item of raw per occurrence
		case s.count > 1 || m.field(protowire.Number(s.key)).list:
			cost += 1 + int(s.count)
		default:
			cost++
		}
	}
	if cost > d.budget {
		return fail(limit(0, "output limit reached"))
	}
	d.budget -= cost
	return scanned{len(d.slots) - base, len(d.tags) - tbase}, wireErr{}
}

// fill is the second pass: it decodes the values of a scanned message b
// into fields, in the order their numbers first appear on the wire, and
// the occurrences shown raw into d.leaves. It removes the message's slots
// and tags.
func (d *Decoder) fill(m *Message, b []byte, depth int, sc scanned) []dissect.Field {
	base, tbase := len(d.slots)-sc.slots, len(d.tags)-sc.tags
	// One entry per known field; arrays get their items from one block.
	nout, total := 0, 0
	for k := range sc.slots {
		s := &d.slots[base+k]
		if s.key < 0 {
			continue
		}
		s.out = int32(nout)
		nout++
		if s.arr = m.field(protowire.Number(s.key)).list; s.arr {
			s.item = int32(total)
			total += int(s.count)
		}
	}
	var out, items []dissect.Field
	if d.build && nout > 0 {
		out = d.rec.Alloc(nout)
		for k := range sc.slots {
			if s := &d.slots[base+k]; s.key > 0 {
				out[s.out].Key = m.field(protowire.Number(s.key)).name
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
		if !d.slots[k].seen {
			d.slots[k].seen = true
			d.slotIssues(m, f, t.num, t.typ, d.slots[k].count)
		}
		var data []byte
		if t.typ == protowire.BytesType || t.typ == protowire.StartGroupType {
			data = b[t.off : t.off+t.n]
		}
		// A nested message's place in paths: its occurrence of the field
		// on the wire, when the field is repeated or comes more than once.
		idx := int32(-1)
		if s := &d.slots[k]; s.arr || s.count > 1 {
			idx = s.occ
		}
		d.slots[k].occ++
		if f == nil {
			name := ""
			if fi := m.field(t.num); fi != nil {
				name = fi.name // a wire type that does not fit
			}
			d.rawLeaf(name, t.num, t.typ, t.v, data, depth, idx)
			continue
		}
		if f.packed && t.typ == protowire.BytesType {
			s := &d.slots[k]
			for j := 0; j < len(data); {
				var x uint64
				typ := wireOf(f.kind)
				switch typ {
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
				if val, ok := d.scalar(m, f, typ, x); ok {
					if d.build {
						items[s.item+s.fill] = dissect.Elem(val)
					}
					s.fill++
				}
			}
			continue
		}
		val, ok := d.value(m, f, t.typ, t.v, data, depth, idx)
		if !ok {
			continue
		}
		s := &d.slots[k] // after the value: nested messages may grow d.slots
		if d.build {
			if s.arr {
				items[s.item+s.fill] = dissect.Elem(val)
			} else {
				out[s.out].Value = val
			}
		}
		s.fill++
	}
	if d.build && nout > 0 {
		// Arrays take the items written; an entry all of whose values
		// were shown raw is dropped (an empty packed run stays []).
		n := 0
		for k := range sc.slots {
			s := &d.slots[base+k]
			if s.key < 0 || s.fill == 0 && s.count > 0 {
				continue
			}
			e := out[s.out]
			if s.arr {
				e.Value = dissect.Array(items[s.item : s.item+s.fill : s.item+s.fill])
			}
			out[n] = e
			n++
		}
		out = out[:n:n]
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
			d.issue("%s.%s (field %d): wire type %s does not fit %s; shown raw", m.name, fi.name, num, wireName(typ), fi.kind)
		} else {
			d.issue("%s has no field %d (%s); shown raw", m.name, num, wireName(typ))
		}
	case !f.list && count > 1:
		d.issue("%s.%s appears %d times; the last is shown", m.name, f.name, count)
	}
}
