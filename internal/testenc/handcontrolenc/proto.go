package handcontrolenc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Protobuf wire types used here (varint and length-delimited; the schemas
// have no fixed-width, zigzag or group fields).
const (
	WireVarint = 0
	WireBytes  = 2
)

// AppendVarint appends v as a protobuf base-128 varint: seven bits per
// byte, least significant group first, the high bit set on every byte but
// the last.
func AppendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// AppendTag appends a field's key: (number << 3) | wire type, as a varint.
func AppendTag(b []byte, num int, wire int) []byte {
	return AppendVarint(b, uint64(num)<<3|uint64(wire))
}

// Kind is the kind of an expected payload value.
type Kind uint8

// Kinds of expected payload values.
const (
	KindInt Kind = iota + 1
	KindStr
	KindBool
	KindObj
	KindArr
)

// Value is a value of an expected payload object: an integer, a string, a
// bool, a nested object or an array.
type Value struct {
	Kind Kind
	I    int64
	S    string
	B    bool
	Obj  *Object
	Arr  []Value
}

// Object is an expected JSON object: keys in wire order.
type Object struct {
	Keys []string
	Vals []Value
}

func (o *Object) add(k string, v Value) {
	for i, key := range o.Keys {
		if key == k {
			o.Vals[i] = v // a key set twice keeps its first position
			return
		}
	}
	o.Keys = append(o.Keys, k)
	o.Vals = append(o.Vals, v)
}

// Get returns the value under key k.
func (o *Object) Get(k string) (Value, bool) {
	if o == nil {
		return Value{}, false
	}
	for i, key := range o.Keys {
		if key == k {
			return o.Vals[i], true
		}
	}
	return Value{}, false
}

// Len returns the number of keys.
func (o *Object) Len() int {
	if o == nil {
		return 0
	}
	return len(o.Keys)
}

func writeJSONString(b *bytes.Buffer, s string) {
	j, err := json.Marshal(s)
	if err != nil {
		panic(err) // a Go string always marshals
	}
	b.Write(j)
}

// writeJSON writes v as JSON.
func (v Value) writeJSON(b *bytes.Buffer) {
	switch v.Kind {
	case KindInt:
		b.WriteString(strconv.FormatInt(v.I, 10))
	case KindStr:
		writeJSONString(b, v.S)
	case KindBool:
		b.WriteString(strconv.FormatBool(v.B))
	case KindObj:
		v.Obj.writeJSON(b)
	case KindArr:
		b.WriteByte('[')
		for i, e := range v.Arr {
			if i > 0 {
				b.WriteByte(',')
			}
			e.writeJSON(b)
		}
		b.WriteByte(']')
	default:
		b.WriteString("null")
	}
}

func (o *Object) writeJSON(b *bytes.Buffer) {
	b.WriteByte('{')
	if o != nil {
		for i, k := range o.Keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, k)
			b.WriteByte(':')
			o.Vals[i].writeJSON(b)
		}
	}
	b.WriteByte('}')
}

// JSON returns the object as JSON, keys in order.
func (o *Object) JSON() string {
	var b bytes.Buffer
	o.writeJSON(&b)
	return b.String()
}

// Msg is a protobuf message being written: its wire bytes and the payload
// object a decoder following the output contract shows for it (field names
// from the schema, in wire order; enums as their value names; uuid.UUID as
// its string; nested messages as objects; repeated fields as arrays).
//
// Fields follow proto3's implicit presence, as the real senders' protobuf
// libraries write them: a scalar field with its default value (0, false,
// "") is not written, so it is absent from the payload too. A nil nested
// message is not written; a non-nil one is, even when empty.
type Msg struct {
	name string
	wire []byte
	obj  Object
}

// NewMsg starts an empty message with the given full name (for example
// "telemetry.Telemetry").
func NewMsg(name string) *Msg { return &Msg{name: name} }

// Name returns the message's full name.
func (m *Msg) Name() string {
	if m == nil {
		return ""
	}
	return m.name
}

// Bytes returns the message's wire bytes.
func (m *Msg) Bytes() []byte {
	if m == nil {
		return nil
	}
	return append([]byte(nil), m.wire...)
}

// Payload returns the payload object the message decodes to.
func (m *Msg) Payload() *Object {
	o := &Object{}
	if m != nil {
		o.Keys = append(o.Keys, m.obj.Keys...)
		o.Vals = append(o.Vals, m.obj.Vals...)
	}
	return o
}

func (m *Msg) varint(num int, key string, u uint64, v Value) *Msg {
	m.wire = AppendTag(m.wire, num, WireVarint)
	m.wire = AppendVarint(m.wire, u)
	m.obj.add(key, v)
	return m
}

// Int32 writes an int32 field (a negative value as its 64-bit two's
// complement, ten bytes, as protobuf does); 0 is not written.
func (m *Msg) Int32(num int, key string, v int32) *Msg {
	if v == 0 {
		return m
	}
	return m.varint(num, key, uint64(int64(v)), Value{Kind: KindInt, I: int64(v)})
}

// Int64 writes an int64 field; 0 is not written.
func (m *Msg) Int64(num int, key string, v int64) *Msg {
	if v == 0 {
		return m
	}
	return m.varint(num, key, uint64(v), Value{Kind: KindInt, I: v})
}

// Bool writes a bool field (as the varint 1); false is not written.
func (m *Msg) Bool(num int, key string, v bool) *Msg {
	if !v {
		return m
	}
	return m.varint(num, key, 1, Value{Kind: KindBool, B: true})
}

// Enum writes an enum field with number v, shown as name; 0 (the enum's
// default) is not written.
func (m *Msg) Enum(num int, key string, v int32, name string) *Msg {
	if v == 0 {
		return m
	}
	return m.varint(num, key, uint64(int64(v)), Value{Kind: KindStr, S: name})
}

// Str writes a string field; "" is not written.
func (m *Msg) Str(num int, key string, s string) *Msg {
	if s == "" {
		return m
	}
	m.wire = AppendTag(m.wire, num, WireBytes)
	m.wire = AppendVarint(m.wire, uint64(len(s)))
	m.wire = append(m.wire, s...)
	m.obj.add(key, Value{Kind: KindStr, S: s})
	return m
}

func (m *Msg) embed(num int, sub *Msg) {
	m.wire = AppendTag(m.wire, num, WireBytes)
	m.wire = AppendVarint(m.wire, uint64(len(sub.wire)))
	m.wire = append(m.wire, sub.wire...)
}

// Message writes a nested message field, shown as an object; nil is not
// written.
func (m *Msg) Message(num int, key string, sub *Msg) *Msg {
	if sub == nil {
		return m
	}
	m.embed(num, sub)
	m.obj.add(key, Value{Kind: KindObj, Obj: sub.Payload()})
	return m
}

// UUID writes a uuid.UUID field {1: string value}, shown as the string;
// "" is not written (no UUID message at all).
func (m *Msg) UUID(num int, key string, id string) *Msg {
	if id == "" {
		return m
	}
	m.embed(num, UUID(id))
	m.obj.add(key, Value{Kind: KindStr, S: id})
	return m
}

// Repeated writes a repeated message field, one key-value pair per
// element in order, shown as an array of objects; no elements write
// nothing.
func (m *Msg) Repeated(num int, key string, subs ...*Msg) *Msg {
	if len(subs) == 0 {
		return m
	}
	arr := make([]Value, 0, len(subs))
	for _, s := range subs {
		if s == nil {
			s = &Msg{}
		}
		m.embed(num, s)
		arr = append(arr, Value{Kind: KindObj, Obj: s.Payload()})
	}
	m.obj.add(key, Value{Kind: KindArr, Arr: arr})
	return m
}

// Describe returns the message's name and payload object, for test
// failures.
func (m *Msg) Describe() string {
	return fmt.Sprintf("%s%s", m.Name(), m.Payload().JSON())
}
