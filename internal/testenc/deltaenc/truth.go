package deltaenc

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/dissect-tools/dissect/internal/testenc/truth"
)

// Message is one record that a decoder following the output contract should
// emit for one direction of a stream: a decoded message, or a skipped or
// gap event. It holds the values that went into the encoder.
type Message struct {
	Type   string // contract type name (TypeMagic, ..., TypeUnknown, TypeSkipped, TypeGap)
	Offset int64  // offset of the first byte within the direction
	Length int64  // bytes covered, framing included
	ID     uint16 // message id on the wire; 0 for events

	Magic   string     // protocol_magic
	Version uint32     // protocol_version
	Vec     [4]float32 // x, y, z, u of actuator_position, current_direction, desired_direction
	PingID  uint64     // ping, pong
	Reason  string     // end_of_transmission
	Points  [][3]float32
	// Trailing holds the bytes of a curve after its last complete point
	// (only for a curve whose length is not a multiple of 12).
	Trailing []byte
	Data     []byte // unknown: the content bytes (after the id, and after the length for size code 0xF)

	RTT  truth.Want // pong: whether rtt_ms is expected
	Warn truth.Want // whether at least one warning is expected

	// Ready is the offset up to which the direction's bytes must have been
	// seen before the decoder can emit this message: its end, or, for the
	// first messages after a skipped run or a gap, the end of the chain
	// that lets the decoder resynchronise (see [FirstSync]). It says when
	// the record is emitted (a pong is matched only to a ping emitted
	// before it); the record's time is that of the unit holding its own
	// last byte, End()-1, which rtt_ms is computed from. Events have
	// Ready == End().
	Ready int64
}

// End returns the offset just past the record.
func (m *Message) End() int64 { return m.Offset + m.Length }

// IsEvent reports whether m is a skipped or gap event.
func (m *Message) IsEvent() bool { return m.Type == TypeSkipped || m.Type == TypeGap }

// String gives a one-line description for test failures.
func (m *Message) String() string {
	return fmt.Sprintf("%s@%d+%d %s", m.Type, m.Offset, m.Length, m.fieldsJSON())
}

func jstr(b *bytes.Buffer, s string) { b.WriteString(strconv.Quote(s)) }

// fieldsJSON returns the record's fields as a JSON object, keys in the
// contract's order. A pong's rtt_ms is not included (its value depends on
// capture times); see RTT.
func (m *Message) fieldsJSON() string {
	var b bytes.Buffer
	b.WriteByte('{')
	switch m.Type {
	case TypeMagic:
		b.WriteString(`"magic":`)
		jstr(&b, m.Magic)
	case TypeVersion:
		fmt.Fprintf(&b, `"version":%d`, m.Version)
	case TypeActuatorPosition, TypeCurrentDirection, TypeDesiredDirection:
		for i, k := range [4]string{"x", "y", "z", "u"} {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%q:", k)
			truth.F32(&b, m.Vec[i])
		}
	case TypePing, TypePong:
		fmt.Fprintf(&b, `"id":%d`, m.PingID)
	case TypeEndOfTransmission:
		b.WriteString(`"reason":`)
		jstr(&b, m.Reason)
	case TypeCurve:
		b.WriteString(`"points":[`)
		for i, p := range m.Points {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('[')
			for j, f := range p {
				if j > 0 {
					b.WriteByte(',')
				}
				truth.F32(&b, f)
			}
			b.WriteByte(']')
		}
		b.WriteByte(']')
	case TypeUnknown:
		fmt.Fprintf(&b, `"message_id":%d,"data":"%s"`, m.ID, hex.EncodeToString(m.Data))
	}
	b.WriteByte('}')
	return b.String()
}

// MarshalJSON writes the record as in the truth files:
// {"type","offset","length","fields"} in the contract's shape, then
// "warning" ("yes"/"no") and, for pongs, "rtt_ms" ("yes"/"no") when asserted,
// and "trailing" (hex) for a curve with a partial last point.
func (m Message) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	truth.Head(&b, m.Type, m.Offset, m.Length, m.fieldsJSON())
	if m.Warn != truth.Any {
		fmt.Fprintf(&b, `,"warning":%q`, m.Warn.String())
	}
	if m.Type == TypePong && m.RTT != truth.Any {
		fmt.Fprintf(&b, `,"rtt_ms":%q`, m.RTT.String())
	}
	if len(m.Trailing) > 0 {
		fmt.Fprintf(&b, `,"trailing":"%s"`, hex.EncodeToString(m.Trailing))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
