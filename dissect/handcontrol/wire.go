package handcontrol

import (
	"math"
	"strconv"
	"unicode/utf8"

	"dissect/dissect"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Bounds of the wire walker.
const (
	// maxDepth bounds message nesting (and group nesting) with a schema.
	maxDepth = 32
	// maxRawDepth bounds how deep raw decoding tries length-delimited
	// values as nested messages.
	maxRawDepth = 8
	// maxSlots bounds the distinct field numbers of one message.
	maxSlots = 256
	// maxPayloadWarnings bounds the payload warnings of one record.
	maxPayloadWarnings = 8
	// maxInterned bounds the strings a parser keeps for reuse.
	maxInterned = 256
	// maxInternLen is the longest string kept for reuse.
	maxInternLen = 64
)

// wireErr says why bytes are not protobuf wire data.
type wireErr struct {
	off  int
	what string
}

func (e wireErr) String() string { return e.what + " at offset " + strconv.Itoa(e.off) }

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

// decoder decodes protobuf payloads into record fields with a msgInfo, or
// raw (msgInfo nil) like protoc --decode_raw. It keeps its scratch space
// between records.
type decoder struct {
	rec    *dissect.Record
	strs   map[string]string // interned strings (see intern)
	build  bool              // build values (Ctx.Decode)
	warn   bool              // write warnings to rec
	issues int               // signs that the schema does not fit
	nwarn  int
	extra  int // warnings over maxPayloadWarnings
	budget int // output fields left
	slots  []slot
	tags   []tag
}

// reset prepares a decode of a payload of n bytes.
func (d *decoder) reset(n int) {
	d.issues, d.nwarn, d.extra = 0, 0, 0
	d.budget = 2*n + 64
	d.slots, d.tags = d.slots[:0], d.tags[:0]
}

// issue counts a sign that the schema does not fit, with a warning.
func (d *decoder) issue(format string, args ...any) {
	d.issues++
	if !d.warn {
		return
	}
	if d.nwarn >= maxPayloadWarnings {
		d.extra++
		return
	}
	d.nwarn++
	d.rec.Warnf("payload: "+format, args...)
}

// finish writes the count of warnings left out.
func (d *decoder) finish() {
	if d.warn && d.extra > 0 {
		d.rec.Warnf("payload: %d more warnings not shown", d.extra)
	}
}

// decode decodes b as message m (nil: raw). ok is false when b is not
// protobuf wire data; e says why.
func (d *decoder) decode(m *msgInfo, b []byte) (fields []dissect.Field, ok bool, e wireErr) {
	d.reset(len(b))
	fields, e = d.message(m, b, 0)
	if e.what != "" {
		return nil, false, e
	}
	d.finish()
	return fields, true, wireErr{}
}

// check reports whether b decodes as m with no issue, building nothing.
func (d *decoder) check(m *msgInfo, b []byte) bool {
	build, warn := d.build, d.warn
	d.build, d.warn = false, false
	_, ok, _ := d.decode(m, b)
	clean := ok && d.issues == 0
	d.build, d.warn = build, warn
	return clean
}

// field reads the field at b[i:]: its number and wire type, its value
// (varint and fixed) or bytes (length-delimited; the body of a group), and
// the offset after it.
func field(b []byte, i, depth int) (num protowire.Number, typ protowire.Type, v uint64, data []byte, next int, e wireErr) {
	num, typ, n := protowire.ConsumeTag(b[i:])
	if n < 0 {
		return 0, 0, 0, nil, 0, wireErr{i, tagError(b[i:], n)}
	}
	j := i + n
	switch typ {
	case protowire.VarintType:
		v, n = protowire.ConsumeVarint(b[j:])
		if n < 0 {
			return 0, 0, 0, nil, 0, wireErr{j, varintError(n)}
		}
		return num, typ, v, nil, j + n, wireErr{}
	case protowire.Fixed32Type:
		if len(b)-j < 4 {
			return 0, 0, 0, nil, 0, wireErr{j, "truncated fixed32"}
		}
		return num, typ, uint64(le32(b[j:])), nil, j + 4, wireErr{}
	case protowire.Fixed64Type:
		if len(b)-j < 8 {
			return 0, 0, 0, nil, 0, wireErr{j, "truncated fixed64"}
		}
		return num, typ, le64(b[j:]), nil, j + 8, wireErr{}
	case protowire.BytesType:
		l, n := protowire.ConsumeVarint(b[j:])
		if n < 0 {
			return 0, 0, 0, nil, 0, wireErr{j, varintError(n)}
		}
		j += n
		if l > uint64(len(b)-j) {
			return 0, 0, 0, nil, 0, wireErr{j - n, "length " + strconv.FormatUint(l, 10) + " runs past the end"}
		}
		return num, typ, 0, b[j : j+int(l)], j + int(l), wireErr{}
	case protowire.StartGroupType:
		body, end, ge := group(b, j, num, depth+1)
		if ge.what != "" {
			return 0, 0, 0, nil, 0, ge
		}
		return num, typ, 0, body, end, wireErr{}
	case protowire.EndGroupType:
		return 0, 0, 0, nil, 0, wireErr{i, "end-group tag without a group"}
	}
	return 0, 0, 0, nil, 0, wireErr{i, "invalid wire type " + strconv.Itoa(int(typ))}
}

// group finds the end of the group with number num whose body starts at
// b[i:]; it returns the body and the offset after the end-group tag.
func group(b []byte, i int, num protowire.Number, depth int) ([]byte, int, wireErr) {
	if depth > maxDepth {
		return nil, 0, wireErr{i, "groups nested too deep"}
	}
	start := i
	for i < len(b) {
		n, typ, k := protowire.ConsumeTag(b[i:])
		if k < 0 {
			return nil, 0, wireErr{i, tagError(b[i:], k)}
		}
		if typ == protowire.EndGroupType {
			if n != num {
				return nil, 0, wireErr{i, "end-group tag of field " + strconv.Itoa(int(n)) + " closes group " + strconv.Itoa(int(num))}
			}
			return b[start:i], i + k, wireErr{}
		}
		_, _, _, _, next, e := field(b, i, depth)
		if e.what != "" {
			return nil, 0, e
		}
		i = next
	}
	return nil, 0, wireErr{i, "group " + strconv.Itoa(int(num)) + " has no end"}
}

func tagError(b []byte, n int) string {
	if v, k := protowire.ConsumeVarint(b); k > 0 && v>>3 == 0 {
		return "field number 0"
	}
	if n == -1 { // truncated
		return "truncated tag"
	}
	return "invalid tag"
}

func varintError(n int) string {
	if n == -1 {
		return "truncated varint"
	}
	return "varint over 64 bits"
}

func le32(b []byte) uint32 {
	_ = b[3]
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func le64(b []byte) uint64 { return uint64(le32(b)) | uint64(le32(b[4:]))<<32 }

// wireOK reports whether wire type typ fits field f.
func wireOK(f *fieldInfo, typ protowire.Type) bool {
	switch f.kind {
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.MessageKind:
		return typ == protowire.BytesType
	case protoreflect.GroupKind:
		return typ == protowire.StartGroupType
	}
	if f.packed && typ == protowire.BytesType {
		return true
	}
	return typ == wireOf(f.kind)
}

// wireOf returns the unpacked wire type of a scalar kind.
func wireOf(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	}
	return protowire.VarintType
}

// packedCount returns how many values a packed run holds, or 0 when it is
// not a whole number of values.
func packedCount(k protoreflect.Kind, b []byte) int {
	switch wireOf(k) {
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
func keyOf(m *msgInfo, num protowire.Number, typ protowire.Type, data []byte) (int64, int, int) {
	i := m.index(num)
	if i < 0 || !wireOK(&m.fields[i], typ) {
		return -int64(num), -1, 1
	}
	f := &m.fields[i]
	if f.packed && typ == protowire.BytesType {
		if n := packedCount(f.kind, data); n > 0 {
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
func (d *decoder) findSlot(base int, key int64) int {
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
func (d *decoder) message(m *msgInfo, b []byte, depth int) ([]dissect.Field, wireErr) {
	if m != nil && m.simple {
		if out, ok := d.fast(m, b, depth); ok {
			return out, wireErr{}
		}
	}
	sc, e := d.scan(m, b, depth)
	if e.what != "" {
		return nil, e
	}
	return d.fill(m, b, depth, sc), wireErr{}
}

// fast decodes a message without repeated fields in one pass, as long as
// every field is known, fits its wire type and comes once (the usual
// case). Otherwise it undoes what it did and returns false, and the two
// passes of scan and fill take over.
func (d *decoder) fast(m *msgInfo, b []byte, depth int) ([]dissect.Field, bool) {
	issues, nwarn, extra, budget := d.issues, d.nwarn, d.extra, d.budget
	nw := len(d.rec.Warnings)
	var out []dissect.Field
	if d.build {
		out = d.rec.Alloc(len(m.fields))
	}
	var seen uint64
	n := 0
	for i := 0; i < len(b); {
		num, typ, v, data, next, e := field(b, i, depth)
		fi := -1
		if e.what == "" {
			fi = m.index(num)
		}
		if fi < 0 || seen&(1<<fi) != 0 || !wireOK(&m.fields[fi], typ) || d.budget < 1 {
			d.issues, d.nwarn, d.extra, d.budget = issues, nwarn, extra, budget
			d.rec.Warnings = d.rec.Warnings[:nw]
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

// tag is one field occurrence found by scan, kept for fill. It holds no
// pointers, so that the scratch slices cost nothing to the garbage
// collector.
type tag struct {
	v    uint64 // varint or fixed value
	slot int32  // index into decoder.slots
	cnt  int32  // values it adds to its slot
	off  int32  // length-delimited value or group body: b[off:off+n]
	n    int32
	num  protowire.Number
	fi   int16 // index of the field in the message; -1: shown raw
	typ  protowire.Type
}

// scanned is what scan found: the number of slots and of tags it appended.
type scanned struct{ slots, tags int }

// scan is the first pass over a message: it checks the wire structure and
// appends one slot per output entry and one tag per field occurrence. On
// error it appends nothing.
func (d *decoder) scan(m *msgInfo, b []byte, depth int) (scanned, wireErr) {
	base, tbase := len(d.slots), len(d.tags)
	fail := func(e wireErr) (scanned, wireErr) {
		d.slots, d.tags = d.slots[:base], d.tags[:tbase]
		return scanned{}, e
	}
	for i := 0; i < len(b); {
		num, typ, v, data, next, e := field(b, i, depth)
		if e.what != "" {
			return fail(e)
		}
		key, fi, n := keyOf(m, num, typ, data)
		s := d.findSlot(base, key)
		if s >= 0 {
			d.slots[s].count += int32(n)
		} else {
			if len(d.slots)-base >= maxSlots {
				return fail(wireErr{i, "over " + strconv.Itoa(maxSlots) + " distinct field numbers"})
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
		return fail(wireErr{0, "output limit reached"})
	}
	d.budget -= cost
	return scanned{len(d.slots) - base, len(d.tags) - tbase}, wireErr{}
}

// fill is the second pass: it decodes the values of a scanned message b
// into fields, in the order their numbers first appear on the wire. It
// removes the message's slots and tags.
func (d *decoder) fill(m *msgInfo, b []byte, depth int, sc scanned) []dissect.Field {
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
func (d *decoder) slotIssues(m *msgInfo, f *fieldInfo, num protowire.Number, typ protowire.Type, count int32) {
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

func wireName(t protowire.Type) string {
	switch t {
	case protowire.VarintType:
		return "varint"
	case protowire.Fixed32Type:
		return "fixed32"
	case protowire.Fixed64Type:
		return "fixed64"
	case protowire.BytesType:
		return "length-delimited"
	case protowire.StartGroupType:
		return "group"
	}
	return "wire type " + strconv.Itoa(int(t))
}

// numKey returns the key of a raw field: its number in decimal.
func (d *decoder) numKey(n int64) string {
	if n < 100 {
		return strconv.FormatInt(n, 10) // no allocation below 100
	}
	var buf [20]byte
	return d.intern(strconv.AppendInt(buf[:0], n, 10))
}

// intern returns b as a string, reusing the string of an earlier equal
// value so that repeated names and UUIDs cost no allocation.
func (d *decoder) intern(b []byte) string {
	if len(b) > maxInternLen {
		return string(b)
	}
	if s, ok := d.strs[string(b)]; ok {
		return s
	}
	if len(d.strs) >= maxInterned {
		clear(d.strs)
	}
	s := string(b)
	d.strs[s] = s
	return s
}

// value decodes one occurrence of a known field whose wire type fits.
func (d *decoder) value(m *msgInfo, f *fieldInfo, v uint64, data []byte, depth int) dissect.Value {
	switch f.kind {
	case protoreflect.StringKind:
		if !utf8.Valid(data) {
			d.issue("%s.%s: string is not valid UTF-8", m.name, f.name)
		}
		if !d.build {
			return dissect.Value{}
		}
		return dissect.Str(d.intern(data))
	case protoreflect.BytesKind:
		return dissect.Bytes(data)
	case protoreflect.MessageKind, protoreflect.GroupKind:
		if f.msg.uuid {
			if s, ok := uuidString(data); ok {
				if !d.build {
					return dissect.Value{}
				}
				return dissect.Str(d.intern(s))
			}
		}
		if depth+1 > maxDepth {
			d.issue("%s.%s: messages nested deeper than %d; shown as bytes", m.name, f.name, maxDepth)
			return dissect.Bytes(data)
		}
		fs, e := d.message(f.msg, data, depth+1)
		if e.what != "" {
			d.issue("%s.%s: not a %s message (%s); shown as bytes", m.name, f.name, f.msg.name, e)
			return dissect.Bytes(data)
		}
		return dissect.Object(fs)
	}
	return d.scalar(m, f, v)
}

// scalar decodes a number of field f from its varint or fixed bits.
func (d *decoder) scalar(m *msgInfo, f *fieldInfo, v uint64) dissect.Value {
	switch f.kind {
	case protoreflect.BoolKind:
		if v > 1 {
			d.issue("%s.%s: bool value %d", m.name, f.name, v)
		}
		return dissect.Bool(v != 0)
	case protoreflect.EnumKind:
		x := int64(v)
		if x != int64(int32(x)) {
			d.issue("%s.%s: enum value %d out of the int32 range", m.name, f.name, v)
			return dissect.Int(x)
		}
		if name, ok := f.enum.lookup(int32(x)); ok {
			return dissect.Str(name)
		}
		d.issue("%s.%s: %d is not a value of %s", m.name, f.name, x, f.enum.name)
		return dissect.Int(x)
	case protoreflect.Int32Kind:
		x := int64(v)
		if x != int64(int32(x)) {
			d.issue("%s.%s: %d is out of the int32 range", m.name, f.name, v)
		}
		return dissect.Int(x)
	case protoreflect.Int64Kind, protoreflect.Sfixed64Kind:
		return dissect.Int(int64(v))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		if v > math.MaxUint32 {
			d.issue("%s.%s: %d is out of the uint32 range", m.name, f.name, v)
		}
		return dissect.Uint(v)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return dissect.Uint(v)
	case protoreflect.Sint32Kind:
		if v > math.MaxUint32 {
			d.issue("%s.%s: %d is out of the sint32 range", m.name, f.name, v)
		}
		return dissect.Int(int64(int32(protowire.DecodeZigZag(v & math.MaxUint32))))
	case protoreflect.Sint64Kind:
		return dissect.Int(protowire.DecodeZigZag(v))
	case protoreflect.Sfixed32Kind:
		return dissect.Int(int64(int32(uint32(v))))
	case protoreflect.FloatKind:
		return dissect.Float32(math.Float32frombits(uint32(v)))
	case protoreflect.DoubleKind:
		return dissect.Float(math.Float64frombits(v))
	}
	return dissect.Uint(v)
}

// raw decodes a field shown without a schema: varints and fixed values as
// unsigned integers; length-delimited values as a nested message when they
// parse as one, else as a string when valid UTF-8, else as hex; groups as
// nested messages.
func (d *decoder) raw(typ protowire.Type, v uint64, data []byte, depth int) dissect.Value {
	switch typ {
	case protowire.BytesType:
		if len(data) == 0 {
			return dissect.Str("")
		}
		if printable(data) {
			if !d.build {
				return dissect.Value{}
			}
			return dissect.Str(d.intern(data))
		}
		if depth+1 < maxRawDepth {
			if n, e := d.scan(nil, data, depth+1); e.what == "" {
				return dissect.Object(d.fill(nil, data, depth+1, n))
			}
		}
		if utf8.Valid(data) {
			if !d.build {
				return dissect.Value{}
			}
			return dissect.Str(d.intern(data))
		}
		return dissect.Bytes(data)
	case protowire.StartGroupType:
		if depth+1 < maxDepth {
			if n, e := d.scan(nil, data, depth+1); e.what == "" {
				return dissect.Object(d.fill(nil, data, depth+1, n))
			}
		}
		return dissect.Bytes(data)
	}
	return dissect.Uint(v)
}

// printable reports whether b is valid UTF-8 without control characters
// other than tab, newline and carriage return: raw decoding shows it as
// text even when it would also parse as a message.
func printable(b []byte) bool {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 || r >= 0x80 && r < 0xa0 {
			return false
		}
		i += n
	}
	return true
}

// uuidString returns the value of a uuid.UUID message that holds only its
// string field 1 (the last occurrence wins), when valid UTF-8.
func uuidString(b []byte) ([]byte, bool) {
	var s []byte
	found := false
	for i := 0; i < len(b); {
		num, typ, _, data, next, e := field(b, i, 0)
		if e.what != "" || num != 1 || typ != protowire.BytesType {
			return nil, false
		}
		s, found = data, true
		i = next
	}
	return s, found && utf8.Valid(s)
}
