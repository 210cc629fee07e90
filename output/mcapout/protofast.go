package mcapout

import (
	"encoding/binary"
	"unicode/utf8"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/output"
	"google.golang.org/protobuf/encoding/protowire"
)

// The fields of most declarations are scalars, and most records carry
// them all, in declared order and of their declared kinds. Such a record's
// Fields message is written here from a plan made once per declaration
// (flatPlan): each field's tag already encoded, a fixed-width number
// written as its bytes, no call per field through the general encoder
// (appendPBFields), whose bytes these are (TestFlatFieldsAgree and
// FuzzFlatFieldsAgree hold the two together). A record that does not fit
// the plan (a field the declaration lacks, out of order, or of another
// kind) is written by the general encoder.

// A flatField is a declared scalar field: its key, kind, and tag with the
// wire type of its kind.
type flatField struct {
	key  string
	kind dissect.Kind
	tag  pbTag
}

// A pbTag is a field's tag (number and wire type), encoded: one byte for
// numbers up to 15, two up to 2047.
type pbTag struct {
	b   [2]byte
	two bool
}

func newTag(num protowire.Number, typ protowire.Type) (pbTag, bool) {
	enc := protowire.AppendTag(nil, num, typ)
	if len(enc) > 2 {
		return pbTag{}, false
	}
	t := pbTag{two: len(enc) == 2}
	copy(t.b[:], enc)
	return t, true
}

func (t pbTag) append(b []byte) []byte {
	if t.two {
		return append(b, t.b[0], t.b[1])
	}
	return append(b, t.b[0])
}

// flatPlan returns the plan of the declared fields fs, numbered as
// addDeclFields numbers them, or nil when one is not a scalar (nor a
// string or bytes) or has a number beyond two bytes of tag.
func flatPlan(fs []dissect.FieldDecl) []flatField {
	out := make([]flatField, len(fs))
	for i := range fs {
		typ := protowire.VarintType
		switch fs[i].Kind {
		case dissect.KindInt, dissect.KindUint, dissect.KindBool:
		case dissect.KindFloat:
			typ = protowire.Fixed64Type
		case dissect.KindFloat32:
			typ = protowire.Fixed32Type
		case dissect.KindString, dissect.KindBytes:
			typ = protowire.BytesType
		default:
			return nil
		}
		tag, ok := newTag(protowire.Number(i+1), typ)
		if !ok {
			return nil
		}
		out[i] = flatField{key: fs[i].Name, kind: fs[i].Kind, tag: tag}
	}
	return out
}

// appendFlatFields appends fs as plan says, if every field of fs is one
// of plan's, in plan's order, of its kind; else it returns b unchanged
// and false.
func appendFlatFields(b []byte, fs []dissect.Field, plan []flatField) ([]byte, bool) {
	start, j := len(b), 0
	for i := range fs {
		f := &fs[i]
		for j < len(plan) && !same(plan[j].key, f.Key) {
			j++
		}
		if j == len(plan) || plan[j].kind != f.Value.Kind() {
			return b[:start], false
		}
		p := &plan[j]
		j++
		b = p.tag.append(b)
		switch p.kind {
		case dissect.KindFloat32:
			b = binary.LittleEndian.AppendUint32(b, uint32(f.Value.Uint()))
		case dissect.KindFloat:
			b = binary.LittleEndian.AppendUint64(b, f.Value.Uint())
		case dissect.KindUint:
			b = appendVarint(b, f.Value.Uint())
		case dissect.KindBool:
			b = append(b, byte(protowire.EncodeBool(f.Value.Bool())))
		case dissect.KindInt:
			b = appendVarint(b, protowire.EncodeZigZag(f.Value.Int()))
		case dissect.KindString:
			b = appendUTF8(b, f.Value.Str())
		case dissect.KindBytes:
			b = protowire.AppendString(b, f.Value.Str())
		}
	}
	return b, true
}

// appendVarint appends v as a varint; one byte without a call.
func appendVarint(b []byte, v uint64) []byte {
	if v < 0x80 {
		return append(b, byte(v))
	}
	return appendVarintLong(b, v)
}

// appendVarintLong appends v, of two bytes or more, as a varint.
func appendVarintLong(b []byte, v uint64) []byte {
	switch {
	case v < 1<<14:
		return append(b, byte(v)|0x80, byte(v>>7))
	case v < 1<<21:
		return append(b, byte(v)|0x80, byte(v>>7)|0x80, byte(v>>14))
	case v < 1<<28:
		return append(b, byte(v)|0x80, byte(v>>7)|0x80, byte(v>>14)|0x80, byte(v>>21))
	case v < 1<<35:
		return append(b, byte(v)|0x80, byte(v>>7)|0x80, byte(v>>14)|0x80, byte(v>>21)|0x80, byte(v>>28))
	}
	return protowire.AppendVarint(b, v)
}

// appendUTF8 appends s as a length-prefixed string, each byte that is
// not UTF-8 replaced by U+FFFD as -o json replaces it.
func appendUTF8(b []byte, s string) []byte {
	if utf8.ValidString(s) {
		return append(appendVarint(b, uint64(len(s))), s...)
	}
	at := len(b) + 1
	return endLen(output.AppendValidUTF8(append(b, 0), s), at)
}
