package pbwalk

import (
	"math"
	"strconv"
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

// value decodes one occurrence of a known field whose wire type fits.
func (d *Decoder) value(m *Message, f *fieldInfo, v uint64, data []byte, depth int) dissect.Value {
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
		if f.msg.wrap {
			if s, ok := wrappedString(data); ok {
				if !d.build {
					return dissect.Value{}
				}
				return dissect.Str(d.intern(s))
			}
		}
		if depth+1 > MaxDepth {
			d.issue("%s.%s: messages nested deeper than %d; shown as bytes", m.name, f.name, MaxDepth)
			return dissect.Bytes(data)
		}
		fs, e := d.message(f.msg, data, depth+1)
		if e.failed() {
			d.issue("%s.%s: not a %s message (%s); shown as bytes", m.name, f.name, f.msg.name, e)
			return dissect.Bytes(data)
		}
		return dissect.Object(fs)
	}
	return d.scalar(m, f, v)
}

// scalar decodes a number of field f from its varint or fixed bits.
func (d *Decoder) scalar(m *Message, f *fieldInfo, v uint64) dissect.Value {
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
// unsigned integers; length-delimited values as text when printable, else
// as a nested message when they parse as one, else as text when valid
// UTF-8, else as bytes; groups as nested messages.
func (d *Decoder) raw(typ protowire.Type, v uint64, data []byte, depth int) dissect.Value {
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
		if depth+1 < MaxRawDepth {
			if n, e := d.scan(nil, data, depth+1); !e.failed() {
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
		if depth+1 < MaxDepth {
			if n, e := d.scan(nil, data, depth+1); !e.failed() {
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

// wrappedString returns the value of a string wrapper message that holds
// only its field 1, length-delimited (the last occurrence wins), when valid
// UTF-8.
func wrappedString(b []byte) ([]byte, bool) {
	var s []byte
	found := false
	for i := 0; i < len(b); {
		num, typ, _, data, next, e := field(b, i, 0)
		if e.failed() || num != 1 || typ != protowire.BytesType {
			return nil, false
		}
		s, found = data, true
		i = next
	}
	return s, found && utf8.Valid(s)
}

// numKey returns the key of a raw field: its number in decimal.
func (d *Decoder) numKey(n int64) string {
	if n < 100 {
		return strconv.FormatInt(n, 10) // no allocation below 100
	}
	var buf [20]byte
	return d.intern(strconv.AppendInt(buf[:0], n, 10))
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
