package pbwalk

import (
	"math"
	"unicode/utf8"

	"github.com/dissect-tools/dissect/dissect"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Bounds of string interning.
const (
	// maxInterned bounds the strings a Decoder keeps for reuse.
	maxInterned = 256
	// maxInternLen is the longest string kept for reuse.
	maxInternLen = 64
)

// value decodes one occurrence of a known field whose wire type fits; idx
// is its occurrence on the wire when the field is repeated or comes more
// than once (-1 otherwise), for paths. It returns false when the
// occurrence is shown raw instead (see rawLeaf): the value does not fit
// the kind the field declares.
func (d *Decoder) value(m *Message, f *fieldInfo, typ protowire.Type, v uint64, data []byte, depth int, idx int32) (dissect.Value, bool) {
	switch f.kind {
	case protoreflect.StringKind:
		if !utf8.Valid(data) {
			d.issue("%s.%s: string is not valid UTF-8", m.name, f.name)
		}
		if !d.build {
			return dissect.Value{}, true
		}
		return dissect.Str(d.intern(data)), true
	case protoreflect.BytesKind:
		return dissect.Bytes(data), true
	case protoreflect.MessageKind, protoreflect.GroupKind:
		if f.msg.wrap {
			s, ok := wrappedString(data)
			if !ok {
				d.issue("%s.%s: a %s holding more than its string (field 1); shown raw", m.name, f.name, f.msg.name)
				d.rawLeaf(f.name, f.num, typ, 0, data, depth, idx)
				return dissect.Value{}, false
			}
			if !utf8.Valid(s) {
				d.issue("%s.%s: string is not valid UTF-8", m.name, f.name)
			}
			if !d.build {
				return dissect.Value{}, true
			}
			return dissect.Str(d.intern(s)), true
		}
		if depth+1 > MaxDepth {
			d.issue("%s.%s: messages nested deeper than %d; shown raw", m.name, f.name, MaxDepth)
			d.rawLeaf(f.name, f.num, typ, 0, data, depth, idx)
			return dissect.Value{}, false
		}
		if d.enclosing(f.msg) {
			d.warnf("%s.%s: a %s inside a %s is not decoded with the schema; shown raw", m.name, f.name, f.msg.name, f.msg.name)
			d.rawLeaf(f.name, f.num, typ, 0, data, depth, idx)
			return dissect.Value{}, false
		}
		d.push(seg{name: f.name, idx: idx, msg: f.msg})
		fs, e := d.message(f.msg, data, depth+1)
		d.pop()
		if e.failed() {
			d.issue("%s.%s: not a %s message (%s); shown raw", m.name, f.name, f.msg.name, e)
			d.rawLeaf(f.name, f.num, typ, 0, data, depth, idx)
			return dissect.Value{}, false
		}
		return dissect.Object(fs), true
	}
	return d.scalar(m, f, typ, v)
}

// scalar decodes a number of field f from its varint or fixed bits (typ:
// their wire type). It returns false for an enum value the enum does not
// name, which is shown raw.
func (d *Decoder) scalar(m *Message, f *fieldInfo, typ protowire.Type, v uint64) (dissect.Value, bool) {
	switch f.kind {
	case protoreflect.BoolKind:
		if v > 1 {
			d.issue("%s.%s: bool value %d", m.name, f.name, v)
		}
		return dissect.Bool(v != 0), true
	case protoreflect.EnumKind:
		x := int64(v)
		if x != int64(int32(x)) {
			d.issue("%s.%s: enum value %d out of the int32 range; shown raw", m.name, f.name, v)
			d.rawLeaf(f.name, f.num, typ, v, nil, 0, -1)
			return dissect.Value{}, false
		}
		if name, ok := f.enum.lookup(int32(x)); ok {
			return dissect.Str(name), true
		}
		d.issue("%s.%s: %d is not a value of %s; shown raw", m.name, f.name, x, f.enum.name)
		d.rawLeaf(f.name, f.num, typ, v, nil, 0, -1)
		return dissect.Value{}, false
	case protoreflect.Int32Kind:
		x := int64(v)
		if x != int64(int32(x)) {
			d.issue("%s.%s: %d is out of the int32 range", m.name, f.name, v)
		}
		return dissect.Int(x), true
	case protoreflect.Int64Kind, protoreflect.Sfixed64Kind:
		return dissect.Int(int64(v)), true
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		if v > math.MaxUint32 {
			d.issue("%s.%s: %d is out of the uint32 range", m.name, f.name, v)
		}
		return dissect.Uint(v), true
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return dissect.Uint(v), true
	case protoreflect.Sint32Kind:
		if v > math.MaxUint32 {
			d.issue("%s.%s: %d is out of the sint32 range", m.name, f.name, v)
		}
		return dissect.Int(int64(int32(protowire.DecodeZigZag(v & math.MaxUint32)))), true
	case protoreflect.Sint64Kind:
		return dissect.Int(protowire.DecodeZigZag(v)), true
	case protoreflect.Sfixed32Kind:
		return dissect.Int(int64(int32(uint32(v)))), true
	case protoreflect.FloatKind:
		return dissect.Float32(math.Float32frombits(uint32(v))), true
	case protoreflect.DoubleKind:
		return dissect.Float(math.Float64frombits(v)), true
	}
	return dissect.Uint(v), true
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

// wrappedString returns the value of a string wrapper message that holds
// only its field 1, length-delimited (the last occurrence wins), or
// nothing (""); false for anything else.
func wrappedString(b []byte) ([]byte, bool) {
	var s []byte
	for i := 0; i < len(b); {
		num, typ, _, data, next, e := field(b, i, 0)
		if e.failed() || num != 1 || typ != protowire.BytesType {
			return nil, false
		}
		s = data
		i = next
	}
	return s, true
}

// intern returns b as a string, reusing the string of an earlier equal
// value so that repeated names and UUIDs cost no allocation.
func (d *Decoder) intern(b []byte) string {
	if len(b) > maxInternLen {
		return string(b)
	}
	if s, ok := d.strs[string(b)]; ok {
		return s
	}
	if d.strs == nil {
		d.strs = make(map[string]string)
	}
	if len(d.strs) >= maxInterned {
		clear(d.strs)
	}
	s := string(b)
	d.strs[s] = s
	return s
}
