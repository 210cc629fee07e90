package dissect

import (
	"math"
	"time"
	"unsafe"
)

// Kind is the type of a [Value].
type Kind uint8

// The kinds of value a field can hold. Each has one JSON form, described in
// docs/output.md.
const (
	KindNull    Kind = iota // JSON null
	KindInt                 // signed integer, written in full
	KindUint                // unsigned integer, written in full
	KindFloat               // float64; NaN and infinities as strings
	KindFloat32             // float32, written with the shortest float32 digits
	KindBool                // true or false
	KindString              // UTF-8 text (invalid bytes are replaced when written)
	KindBytes               // byte string, written as lowercase hex
	KindTime                // instant, written as RFC 3339 UTC with nanoseconds
	KindArray               // ordered values (the keys of its fields are empty)
	KindObject              // ordered key/value pairs
)

// Value is one decoded value. The zero Value is null. Values are built with
// the constructors below ([Int], [Float], [Str], ...) and read with the
// accessors; they allocate nothing for scalars.
type Value struct {
	kind Kind
	num  uint64  // int, uint, float bits, bool, unix nanoseconds
	str  string  // KindString; KindBytes: the bytes, aliased (may point into a stream buffer: see package doc)
	sub  []Field // KindArray, KindObject
}

// Field is a named value. Inside an array the name is empty.
type Field struct {
	Key   string
	Value Value
}

// Int returns a signed integer value.
func Int(v int64) Value { return Value{kind: KindInt, num: uint64(v)} }

// Uint returns an unsigned integer value.
func Uint(v uint64) Value { return Value{kind: KindUint, num: v} }

// Float returns a float64 value.
func Float(v float64) Value { return Value{kind: KindFloat, num: math.Float64bits(v)} }

// Float32 returns a float32 value; it is written with the shortest digits
// that read back as the same float32 (0.1, not 0.10000000149011612).
func Float32(v float32) Value { return Value{kind: KindFloat32, num: uint64(math.Float32bits(v))} }

// SetFloat32 makes v the float32 x, as v = Float32(x) does, writing v's
// members in place (faster where v is in a slice: see Record.Extend).
func (v *Value) SetFloat32(x float32) {
	v.kind = KindFloat32
	v.num = uint64(math.Float32bits(x))
	v.str = ""
	v.sub = nil
}

// SetUint, SetInt, SetFloat, SetStr and SetBytes make v the value the
// constructor of the same name returns, in place, as SetFloat32 does.
func (v *Value) SetUint(x uint64) { v.kind, v.num, v.str, v.sub = KindUint, x, "", nil }

// SetInt: see SetUint.
func (v *Value) SetInt(x int64) { v.kind, v.num, v.str, v.sub = KindInt, uint64(x), "", nil }

// SetFloat: see SetUint.
func (v *Value) SetFloat(x float64) {
	v.kind, v.num, v.str, v.sub = KindFloat, math.Float64bits(x), "", nil
}

// SetStr: see SetUint.
func (v *Value) SetStr(s string) { v.kind, v.num, v.str, v.sub = KindString, 0, s, nil }

// SetBytes: see SetUint; v keeps b, as Bytes does.
func (v *Value) SetBytes(b []byte) {
	v.kind, v.num, v.str, v.sub = KindBytes, 0, unsafe.String(unsafe.SliceData(b), len(b)), nil
}

// Bool returns a boolean value.
func Bool(v bool) Value {
	if v {
		return Value{kind: KindBool, num: 1}
	}
	return Value{kind: KindBool}
}

// Str returns a string value.
func Str(s string) Value { return Value{kind: KindString, str: s} }

// Bytes returns a byte-string value, written as hex. It keeps b, which may
// alias the stream buffer: the value is valid while the record is.
func Bytes(b []byte) Value {
	return Value{kind: KindBytes, str: unsafe.String(unsafe.SliceData(b), len(b))}
}

// Time returns an instant value. Instants are kept as nanoseconds since
// 1970, so times outside 1677-09-21 .. 2262-04-11 (a hostile timestamp on
// the wire) saturate at the nearer end instead of wrapping.
func Time(t time.Time) Value {
	var ns int64
	switch {
	case t.Before(time.Unix(0, math.MinInt64)):
		ns = math.MinInt64
	case t.After(time.Unix(0, math.MaxInt64)):
		ns = math.MaxInt64
	default:
		ns = t.UnixNano()
	}
	return Value{kind: KindTime, num: uint64(ns)}
}

// Array returns an array of the values of items (their keys are ignored).
func Array(items []Field) Value { return Value{kind: KindArray, sub: items} }

// Object returns an object with the given fields, in order.
func Object(fields []Field) Value { return Value{kind: KindObject, sub: fields} }

// Elem wraps v as an array element.
func Elem(v Value) Field { return Field{Value: v} }

// Kind reports the value's kind.
func (v Value) Kind() Kind { return v.kind }

// Int returns the value as int64 (KindInt, KindUint, KindBool).
func (v Value) Int() int64 { return int64(v.num) }

// Uint returns the value as uint64 (KindInt, KindUint, KindBool).
func (v Value) Uint() uint64 { return v.num }

// Float returns the value as float64 (KindFloat, KindFloat32, KindInt, KindUint).
func (v Value) Float() float64 {
	switch v.kind {
	case KindFloat:
		return math.Float64frombits(v.num)
	case KindFloat32:
		return float64(math.Float32frombits(uint32(v.num)))
	case KindInt:
		return float64(int64(v.num))
	case KindUint:
		return float64(v.num)
	}
	return 0
}

// Float32 returns the float32 of a KindFloat32 value.
func (v Value) Float32() float32 { return math.Float32frombits(uint32(v.num)) }

// Bool returns the value as bool.
func (v Value) Bool() bool { return v.num != 0 }

// Str returns the string of a KindString value.
func (v Value) Str() string { return v.str }

// Raw returns the bytes of a KindBytes value.
func (v Value) Raw() []byte {
	if v.kind != KindBytes {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(v.str), len(v.str))
}

// Time returns the instant of a KindTime value, in UTC.
func (v Value) Time() time.Time { return time.Unix(0, int64(v.num)).UTC() }

// Items returns the elements of an array or the fields of an object.
func (v Value) Items() []Field { return v.sub }

// Get returns the value of the first field named key in an object, and
// whether it was found.
func (v Value) Get(key string) (Value, bool) { return Fields(v.sub).Get(key) }

// Fields is an ordered list of fields.
type Fields []Field

// Get returns the value of the first field named key, and whether it was
// found.
func (fs Fields) Get(key string) (Value, bool) {
	for i := range fs {
		if fs[i].Key == key {
			return fs[i].Value, true
		}
	}
	return Value{}, false
}

// clone deep-copies v so that it no longer aliases any buffer.
func (v Value) clone() Value {
	switch v.kind {
	case KindBytes:
		v.str = string(v.Raw())
	case KindArray, KindObject:
		v.sub = cloneFields(v.sub)
	}
	return v
}

func cloneFields(fs []Field) []Field {
	if fs == nil {
		return nil
	}
	out := make([]Field, len(fs))
	for i, f := range fs {
		out[i] = Field{Key: f.Key, Value: f.Value.clone()}
	}
	return out
}

// Equal reports whether v and w have the same kind and content: floats by
// value, telling -0 from +0 and taking NaN as equal to NaN; arrays and
// objects item by item, keys and order included.
func (v Value) Equal(w Value) bool {
	if v.kind != w.kind {
		return false
	}
	switch v.kind {
	case KindFloat, KindFloat32:
		x, y := v.Float(), w.Float()
		return x == y && math.Signbit(x) == math.Signbit(y) || math.IsNaN(x) && math.IsNaN(y)
	case KindString, KindBytes:
		return v.str == w.str
	case KindArray, KindObject:
		if len(v.sub) != len(w.sub) {
			return false
		}
		for i := range v.sub {
			if v.sub[i].Key != w.sub[i].Key || !v.sub[i].Value.Equal(w.sub[i].Value) {
				return false
			}
		}
		return true
	}
	return v.num == w.num
}
