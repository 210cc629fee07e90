// Package layout is dissect's wire vocabulary: where each field of a
// message sits on the wire, described once as data. One description,
// compiled into a [Plan], gives the record type's field declarations
// ([dissect.FieldDecl]), its decoder and its encoder, so the three cannot
// disagree.
//
// The words are Kaitai Struct's where they overlap (seq, types, enums,
// size, size-eos, repeat, repeat-expr, repeat-until, contents,
// terminator, pad-right, encoding, valid, enum, switch-on): a field is an
// integer of 1 to 8 bytes in either byte order (u1 … u8, s1 … s8, with
// le or be), a bit field of 1 to 64 bits (b1 … b64), a float (f2, f4,
// f8), bytes or text (fixed size, sized by an earlier field, to the end,
// NUL-terminated or padded), a nested type, or a type chosen by an
// earlier field (switch-on). Any field may repeat: a fixed count, a count
// from an earlier field, to the end, or until an item equals a value.
// Integers may carry a transform to a float (scale and offset, fixed
// point, an angle in a byte) and a valid range.
//
// There is no expression language: a size, a count or a switch names an
// earlier integer field of the same seq, or is a number. What the
// vocabulary cannot say stays a small Go hook in the protocol.
//
// A description is input: [Compile] bounds it ([Limits]) so that a
// hostile one cannot make decoding allocate without bound, loop without
// end or recurse without limit.
package layout

import "github.com/dissect-tools/dissect/dissect"

// Order is a byte order.
type Order uint8

// Byte orders.
const (
	BigEndian Order = iota
	LittleEndian
)

func (o Order) String() string {
	if o == LittleEndian {
		return "le"
	}
	return "be"
}

// Schema is a set of named types and enums, with the default byte order
// of the integers and floats that do not name one.
type Schema struct {
	Endian    Order
	BitEndian Order // the order of bit fields within their bytes (be: most significant bit first)
	Types     []Type
	Enums     []Enum
}

// Type is a named layout: its fields, in wire order.
type Type struct {
	Name string
	Doc  string
	Seq  []Field
	At   string // where it is described ("file:line:col"), for errors; "" when written in Go
}

// Enum names the values of an integer.
type Enum struct {
	Name   string
	Values []EnumValue
	At     string
}

// EnumValue is one named value of an enum.
type EnumValue struct {
	Value int64
	Name  string
}

// Field is one field of a type.
type Field struct {
	// ID is the field's key in records. A field without ID is read (and
	// checked: contents, valid) but not recorded: padding, reserved bits,
	// a magic number.
	ID  string
	Doc string
	At  string
	// Type is the wire type: u1 … u8 and s1 … s8 (optionally followed by
	// le or be), b1 … b64, f2, f4, f8 (optionally le or be), bool (one
	// byte: 0 false, else true; see bool.go), str, strz (text ending in a
	// NUL), the name of a type of the schema, or "" for bytes (Size,
	// SizeEOS or Contents say how many).
	Type string
	// Switch, instead of Type, chooses the type by an earlier integer field.
	Switch *Switch
	// Size is the size in bytes of bytes, text or a nested type; SizeEOS:
	// to the end of the bytes given.
	Size    Ref
	SizeEOS bool
	// Contents is the constant the bytes must hold (a magic number): the
	// field's type is then bytes of its length.
	Contents []byte
	// Encoding of text: "" (UTF-8), "UTF-8" or "ASCII".
	Encoding string
	// Terminator ends text (or bytes) before Size; PadRight is stripped
	// from its end.
	Terminator *byte
	PadRight   *byte
	// Repeat makes the field an array.
	Repeat      Repeat
	RepeatExpr  Ref    // RepeatExpr: how many items
	RepeatUntil *int64 // RepeatUntil: the item value that ends the array (it is kept)
	// Enum names an enum of the schema: the integer is recorded as the
	// name of its value (an unknown value as its number, with a warning).
	Enum string
	// Valid, when set, bounds an integer's raw value: outside it, the
	// message is malformed.
	Valid *Valid
	// Scale and Offset turn an integer into a float: raw*Scale + Offset
	// (Scale 0: no transform). Fixed point with F fraction bits is Scale
	// 2^-F; an angle in a byte is Scale 360/256 with Unit "deg".
	Scale, Offset float64
	Unit          string
	Role          dissect.Role
}

// Ref is a number, or the value of an earlier integer field of the same
// seq (Field set).
type Ref struct {
	N     int64
	Field string
	Set   bool // N or Field was given
}

// Num returns a Ref of the number n.
func Num(n int64) Ref { return Ref{N: n, Set: true} }

// FieldRef returns a Ref of the field named id.
func FieldRef(id string) Ref { return Ref{Field: id, Set: true} }

// Repeat says how a field repeats.
type Repeat uint8

// Repeats.
const (
	Once Repeat = iota
	RepeatExpr
	RepeatEOS
	RepeatUntil
)

// Switch chooses a field's type by the value of an earlier integer field.
type Switch struct {
	On      string
	Cases   []Case
	Default string // the type of the other values; "": another value is malformed
}

// Case is one value of a switch and its type.
type Case struct {
	Value int64
	Type  string
}

// Valid bounds an integer: Min <= v <= Max when set, and v among AnyOf
// when not empty.
type Valid struct {
	Min, Max *int64
	AnyOf    []int64
}

// Limits bound what a compiled schema may cost per message.
type Limits struct {
	MaxTypes  int   // types in a schema
	MaxFields int   // fields in all the types together
	MaxDepth  int   // types nested in one another
	MaxSize   int64 // a fixed size, count or contents length
	MaxValues int   // values one Decode may produce (array items included)
}

// DefaultLimits are generous for any real protocol.
func DefaultLimits() Limits {
	return Limits{MaxTypes: 256, MaxFields: 4096, MaxDepth: 16, MaxSize: 1 << 20, MaxValues: 1 << 16}
}
