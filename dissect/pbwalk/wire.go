package pbwalk

import (
	"errors"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// Bounds of the walker (see the package documentation).
const (
	// MaxDepth bounds message nesting, and group nesting, with a schema.
	MaxDepth = 32
	// MaxRawDepth bounds how deep raw decoding tries length-delimited
	// values as nested messages.
	MaxRawDepth = 8
	// MaxFieldNumbers bounds the distinct field numbers of one message.
	MaxFieldNumbers = 256
	// MaxWarnings bounds the warnings one Decode writes; the rest are
	// counted in one last warning.
	MaxWarnings = 8
)

// Sentinel errors: every *Error unwraps to one of them.
var (
	// ErrTruncated: the bytes end inside a tag, a value or a group, or a
	// length runs past the end.
	ErrTruncated = errors.New("pbwalk: truncated")
	// ErrMalformed: the bytes can never be protobuf wire data (field
	// number 0, wire type 6 or 7, a varint over 64 bits, an end-group tag
	// that closes nothing or the wrong group).
	ErrMalformed = errors.New("pbwalk: malformed")
	// ErrLimit: a bound of the walker was reached (nesting, distinct field
	// numbers, output size).
	ErrLimit = errors.New("pbwalk: limit reached")
)

// Error says why bytes are not protobuf wire data, and where.
type Error struct {
	// Offset is where the problem starts, in [0, len(b)] of the buffer
	// given to Next, Walk or Decoder.Decode.
	Offset int
	// Reason is a short lowercase phrase, e.g. "truncated tag" or
	// "length 9 runs past the end".
	Reason string
	kind   error
}

// Error returns "pbwalk: " + Reason + " at offset " + Offset.
func (e *Error) Error() string { return "pbwalk: " + e.Reason + " at offset " + strconv.Itoa(e.Offset) }

// Unwrap returns ErrTruncated, ErrMalformed or ErrLimit.
func (e *Error) Unwrap() error { return e.kind }

// Kinds of wireErr, mapped to the sentinel errors.
const (
	kindNone uint8 = iota
	kindTruncated
	kindMalformed
	kindLimit
)

// wireErr is the allocation-free form of Error used inside the walker
// (raw decoding tries, and drops, many of them).
type wireErr struct {
	off  int
	what string
	kind uint8
}

func (e wireErr) String() string { return e.what + " at offset " + strconv.Itoa(e.off) }

// failed reports whether e is an error.
func (e wireErr) failed() bool { return e.kind != kindNone }

// public converts e to an *Error, or nil when it is none.
func (e wireErr) public() error {
	var kind error
	switch e.kind {
	case kindNone:
		return nil
	case kindTruncated:
		kind = ErrTruncated
	case kindMalformed:
		kind = ErrMalformed
	default:
		kind = ErrLimit
	}
	return &Error{Offset: e.off, Reason: e.what, kind: kind}
}

func truncated(off int, what string) wireErr { return wireErr{off, what, kindTruncated} }
func malformed(off int, what string) wireErr { return wireErr{off, what, kindMalformed} }
func limit(off int, what string) wireErr     { return wireErr{off, what, kindLimit} }

// Field is one field occurrence on the wire.
type Field struct {
	Num  protowire.Number
	Type protowire.Type
	// Value holds the bits of a varint, fixed32 or fixed64 value.
	Value uint64
	// Bytes is the value of a length-delimited field, or the body of a
	// group (without its end-group tag). It is a sub-slice of the walked
	// buffer, not a copy; nil for the other wire types.
	Bytes []byte
}

// Next reads the field whose tag starts at b[off:]: it returns the field
// and the offset just after it (after the end-group tag, for a group). A
// group's body is checked to be well formed, with nesting bounded by
// MaxDepth. On failure the error is an *Error whose Offset is in
// [0, len(b)].
func Next(b []byte, off int) (Field, int, error) {
	if off < 0 || off > len(b) {
		return Field{}, 0, malformed(min(max(off, 0), len(b)), "offset "+strconv.Itoa(off)+" out of range").public()
	}
	num, typ, v, data, next, e := field(b, off, 0)
	if e.failed() {
		return Field{}, 0, e.public()
	}
	return Field{Num: num, Type: typ, Value: v, Bytes: data}, next, nil
}

// Walk calls fn with the offset and contents of each top-level field of b,
// in wire order, until fn returns false. It returns the first error (an
// *Error): the fields before it have been passed to fn.
func Walk(b []byte, fn func(off int, f Field) bool) error {
	for i := 0; i < len(b); {
		num, typ, v, data, next, e := field(b, i, 0)
		if e.failed() {
			return e.public()
		}
		if !fn(i, Field{Num: num, Type: typ, Value: v, Bytes: data}) {
			return nil
		}
		i = next
	}
	return nil
}

// field reads the field at b[i:]: its number and wire type, its value
// (varint and fixed) or bytes (length-delimited; the body of a group), and
// the offset after it.
func field(b []byte, i, depth int) (num protowire.Number, typ protowire.Type, v uint64, data []byte, next int, e wireErr) {
	num, typ, n := protowire.ConsumeTag(b[i:])
	if n < 0 {
		return 0, 0, 0, nil, 0, tagError(b[i:], i, n)
	}
	j := i + n
	switch typ {
	case protowire.VarintType:
		v, n = protowire.ConsumeVarint(b[j:])
		if n < 0 {
			return 0, 0, 0, nil, 0, varintError(j, n)
		}
		return num, typ, v, nil, j + n, wireErr{}
	case protowire.Fixed32Type:
		if len(b)-j < 4 {
			return 0, 0, 0, nil, 0, truncated(j, "truncated fixed32")
		}
		return num, typ, uint64(le32(b[j:])), nil, j + 4, wireErr{}
	case protowire.Fixed64Type:
		if len(b)-j < 8 {
			return 0, 0, 0, nil, 0, truncated(j, "truncated fixed64")
		}
		return num, typ, le64(b[j:]), nil, j + 8, wireErr{}
	case protowire.BytesType:
		l, n := protowire.ConsumeVarint(b[j:])
		if n < 0 {
			return 0, 0, 0, nil, 0, varintError(j, n)
		}
		j += n
		if l > uint64(len(b)-j) {
			return 0, 0, 0, nil, 0, truncated(j-n, "length "+strconv.FormatUint(l, 10)+" runs past the end")
		}
		return num, typ, 0, b[j : j+int(l)], j + int(l), wireErr{}
	case protowire.StartGroupType:
		body, end, ge := group(b, j, num, depth+1)
		if ge.failed() {
			return 0, 0, 0, nil, 0, ge
		}
		return num, typ, 0, body, end, wireErr{}
	case protowire.EndGroupType:
		return 0, 0, 0, nil, 0, malformed(i, "end-group tag without a group")
	}
	return 0, 0, 0, nil, 0, malformed(i, "invalid wire type "+strconv.Itoa(int(typ)))
}

// group finds the end of the group with number num whose body starts at
// b[i:]; it returns the body and the offset after the end-group tag.
func group(b []byte, i int, num protowire.Number, depth int) ([]byte, int, wireErr) {
	if depth > MaxDepth {
		return nil, 0, limit(i, "groups nested too deep")
	}
	start := i
	for i < len(b) {
		n, typ, k := protowire.ConsumeTag(b[i:])
		if k < 0 {
			return nil, 0, tagError(b[i:], i, k)
		}
		if typ == protowire.EndGroupType {
			if n != num {
				return nil, 0, malformed(i, "end-group tag of field "+strconv.Itoa(int(n))+" closes group "+strconv.Itoa(int(num)))
			}
			return b[start:i], i + k, wireErr{}
		}
		_, _, _, _, next, e := field(b, i, depth)
		if e.failed() {
			return nil, 0, e
		}
		i = next
	}
	return nil, 0, truncated(i, "group "+strconv.Itoa(int(num))+" has no end")
}

// tagError explains protowire's error code n for the tag at b (offset off).
func tagError(b []byte, off, n int) wireErr {
	if v, k := protowire.ConsumeVarint(b); k > 0 && v>>3 == 0 {
		return malformed(off, "field number 0")
	}
	if n == -1 { // truncated
		return truncated(off, "truncated tag")
	}
	return malformed(off, "invalid tag")
}

// varintError explains protowire's error code n for the varint at off.
func varintError(off, n int) wireErr {
	if n == -1 {
		return truncated(off, "truncated varint")
	}
	return malformed(off, "varint over 64 bits")
}

func le32(b []byte) uint32 {
	_ = b[3]
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func le64(b []byte) uint64 { return uint64(le32(b)) | uint64(le32(b[4:]))<<32 }

// wireName names a wire type in warnings.
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
