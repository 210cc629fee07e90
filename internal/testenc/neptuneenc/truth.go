package neptuneenc

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/dissect-tools/dissect/internal/testenc/truth"
)

// Match says how a record's fields are compared with [Message.Fields].
type Match uint8

// Ways to match fields.
const (
	// Exact: the record has exactly these fields, in this order.
	Exact Match = iota
	// Subset: the record has each of these fields with this value; other
	// fields (and their order) are not asserted.
	Subset
)

// String returns "exact" or "subset".
func (m Match) String() string {
	if m == Subset {
		return "subset"
	}
	return "exact"
}

// Kind is the kind of an expected field value.
type Kind uint8

// Kinds of expected values.
const (
	KindInt   Kind = iota + 1 // an integer (JSON number)
	KindStr                   // a string
	KindBool                  // a bool
	KindBytes                 // a byte string (JSON: lowercase hex)
	KindF32                   // a float32 (JSON: shortest float32 digits)
)

// Value is an expected field value.
type Value struct {
	Kind Kind
	I    int64
	S    string
	B    bool
	X    []byte
	F    float32
}

// Int returns an expected integer.
func Int(v int64) Value { return Value{Kind: KindInt, I: v} }

// Str returns an expected string.
func Str(s string) Value { return Value{Kind: KindStr, S: s} }

// Bool returns an expected bool.
func Bool(v bool) Value { return Value{Kind: KindBool, B: v} }

// Bytes returns an expected byte string.
func Bytes(b []byte) Value { return Value{Kind: KindBytes, X: append([]byte{}, b...)} }

// F32 returns an expected float32.
func F32(f float32) Value { return Value{Kind: KindF32, F: f} }

func field(k string, v Value) Field { return Field{Key: k, Value: v} }

// Field is one expected field.
type Field struct {
	Key   string
	Value Value
}

// Get returns the field with key k.
func (m *Message) Get(k string) (Value, bool) {
	for _, f := range m.Fields {
		if f.Key == k {
			return f.Value, true
		}
	}
	return Value{}, false
}

// writeJSON writes v as the output contract does.
func (v Value) writeJSON(b *bytes.Buffer) {
	switch v.Kind {
	case KindInt:
		b.WriteString(strconv.FormatInt(v.I, 10))
	case KindStr:
		j, _ := json.Marshal(v.S)
		b.Write(j)
	case KindBool:
		b.WriteString(strconv.FormatBool(v.B))
	case KindBytes:
		b.WriteString(`"` + hex.EncodeToString(v.X) + `"`)
	case KindF32:
		truth.F32(b, v.F)
	default:
		b.WriteString("null")
	}
}

// String renders v as in JSON.
func (v Value) String() string {
	var b bytes.Buffer
	v.writeJSON(&b)
	return b.String()
}

// Contract type names of the device framing (output-contract.md,
// "neptune"), and the stream events.
const (
	TypeAbort     = "abort"
	TypeSetMotor  = "set_motor"
	TypeTranslate = "translate"
	TypeRotate    = "rotate"
	TypeStabilize = "stabilize"
	TypeLamp      = "lamp"
	TypeUnknown   = "unknown"
	TypeSkipped   = "skipped"
	TypeGap       = "gap"
)

// Message is one record that a decoder following the output contract
// should emit for one direction of a stream: a decoded message, or a
// skipped or gap event.
type Message struct {
	Type   string
	Offset int64 // of the first byte within the direction
	Length int64 // bytes covered, framing included
	// Wire is the message's bytes as the encoder wrote them (nil for
	// events).
	Wire []byte
	// Fields are the fields the encoder can state; Match says how they
	// are compared.
	Fields []Field
	Match  Match
	// NotAsserted names what a decoder may show but the truth does not
	// fix (free text, for the truth file's reader).
	NotAsserted []string
	Warn        truth.Want // whether at least one warning is expected
}

// End returns the offset just past the record.
func (m *Message) End() int64 { return m.Offset + m.Length }

// IsEvent reports whether m is a skipped or gap event.
func (m *Message) IsEvent() bool { return m.Type == TypeSkipped || m.Type == TypeGap }

// FieldsJSON returns the expected fields as a JSON object, in order.
func (m *Message) FieldsJSON() string {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range m.Fields {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.Key)
		b.Write(k)
		b.WriteByte(':')
		f.Value.writeJSON(&b)
	}
	b.WriteByte('}')
	return b.String()
}

// String gives a one-line description for test failures.
func (m *Message) String() string {
	return fmt.Sprintf("%s@%d+%d %s(%s) warn=%s", m.Type, m.Offset, m.Length, m.FieldsJSON(), m.Match, m.Warn)
}

// MarshalJSON writes the record as in the truth files: type, offset,
// length, fields; then "match" ("exact" or "subset"), "warning" ("yes" or
// "no", absent when not asserted), "not_asserted" (when there is
// something) and "wire" (hex of the message's bytes). Events have only
// type, offset, length and fields {}.
func (m Message) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	truth.Head(&b, m.Type, m.Offset, m.Length, m.FieldsJSON())
	if !m.IsEvent() {
		fmt.Fprintf(&b, `,"match":%q`, m.Match.String())
		if m.Warn != truth.Any {
			fmt.Fprintf(&b, `,"warning":%q`, m.Warn.String())
		}
		if len(m.NotAsserted) > 0 {
			j, err := json.Marshal(m.NotAsserted)
			if err != nil {
				return nil, err
			}
			b.WriteString(`,"not_asserted":`)
			b.Write(j)
		}
		fmt.Fprintf(&b, `,"wire":"%s"`, hex.EncodeToString(m.Wire))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
