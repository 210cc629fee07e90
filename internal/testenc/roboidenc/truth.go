package roboidenc

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dissect-tools/dissect/internal/testenc/truth"
)

// ValueTruth is what the encoder knows of one typed value of a Pose, and
// what a decoder must show for it: data_type, semantics, angular_bytes,
// linear_bytes, raw and, for a value cut short, truncated.
type ValueTruth struct {
	Value
	// Truncated: the datagram ends inside the value; Angles and Magnitude
	// hold the bytes that are there (as many of the announced angle bytes
	// as fit, then magnitude bytes).
	Truncated bool
	// Intended is the meaning the encoder gave the bytes (angles in
	// degrees, the magnitude as a number), for tests that check a
	// decoder's documented interpretations. It is not part of the truth:
	// the encodings are unverified guesses.
	Intended Intended
}

// Intended describes how the encoder made a value's bytes.
type Intended struct {
	// AnglesDeg are the degrees each angle byte was made from with Angle8
	// (the byte reads back as Angle8Degrees(b), which is what a decoder can
	// show).
	AnglesDeg []float64
	// MagKind is how the magnitude was written: "u8", "u16", "f16", "u32",
	// "f32", or "" (none, or raw test bytes).
	MagKind string
	// Mag is the magnitude that was encoded (for f16 the nearest half
	// float's exact value).
	Mag float64
}

// AngularBytes returns the number of angle bytes the data type announces.
func (v ValueTruth) AngularBytes() int { a, _ := Syntax(v.DataType); return a }

// LinearBytes returns the number of magnitude bytes the data type
// announces.
func (v ValueTruth) LinearBytes() int { _, l := Syntax(v.DataType); return l }

// Semantics returns the semantics name of the value.
func (v ValueTruth) Semantics() string { s, _ := SemanticsName(v.DataType); return s }

// DataTypeHex returns the data type as the contract writes it, e.g. "0x62".
func (v ValueTruth) DataTypeHex() string { return fmt.Sprintf("0x%02x", v.DataType) }

// Message is one record that a decoder following the output contract (and
// dissect/roboid's documented layout of the message bodies) should emit for
// one direction of a UDP flow: a decoded message or a skipped or gap event.
type Message struct {
	Type   string
	Offset int64 // of the first byte within the direction (datagrams of a direction count as one stream of bytes)
	Length int64
	Wire   []byte // the datagram (nil for events)

	// Fields, by type: Client: data. NetworkId: network_id, data. Pose:
	// network_id, thing_id, values, and rest after a 0x00 data type.
	// NewThing, Investigate, ModelURL: network_id, thing_id, data.
	// unknown: message_id, data. A datagram too short for its ids keeps
	// the ids it has (HasNetworkID, HasThingID).
	MessageID    byte
	NetworkID    byte
	ThingID      byte
	HasNetworkID bool
	HasThingID   bool
	Data         []byte // data (hex) for the types that have it
	Values       []ValueTruth
	Rest         []byte // Pose: the bytes from a 0x00 data type to the end
	HasRest      bool
	// ShortIDs: a Pose datagram too short for its ids. Whether the record
	// also has an (empty) "values" is not asserted.
	ShortIDs bool

	Warn truth.Want // whether at least one warning is expected
}

// End returns the offset just past the record.
func (m *Message) End() int64 { return m.Offset + m.Length }

// IsEvent reports whether m is a skipped or gap event.
func (m *Message) IsEvent() bool { return m.Type == TypeSkipped || m.Type == TypeGap }

// Keys returns the top-level field keys the record must have, in order.
func (m *Message) Keys() []string {
	var k []string
	switch m.Type {
	case TypeSkipped, TypeGap:
		return nil
	case TypeUnknown:
		return []string{"message_id", "data"}
	}
	if m.HasNetworkID {
		k = append(k, "network_id")
	}
	if m.HasThingID {
		k = append(k, "thing_id")
	}
	if m.Type == TypePose {
		if m.ShortIDs {
			return k
		}
		k = append(k, "values")
		if m.HasRest {
			k = append(k, "rest")
		}
		return k
	}
	return append(k, "data")
}

func jq(s string) string { j, _ := json.Marshal(s); return string(j) }

// FieldsJSON returns the asserted fields as a JSON object in the contract's
// shape. Values list only their asserted keys (data_type, semantics,
// angular_bytes, linear_bytes, raw and, when cut short, truncated).
func (m *Message) FieldsJSON() string {
	var parts []string
	for _, k := range m.Keys() {
		var v string
		switch k {
		case "message_id":
			v = fmt.Sprint(m.MessageID)
		case "network_id":
			v = fmt.Sprint(m.NetworkID)
		case "thing_id":
			v = fmt.Sprint(m.ThingID)
		case "data":
			v = jq(hex.EncodeToString(m.Data))
		case "rest":
			v = jq(hex.EncodeToString(m.Rest))
		case "values":
			var vs []string
			for _, x := range m.Values {
				s := fmt.Sprintf(`{"data_type":%s,"semantics":%s,"angular_bytes":%d,"linear_bytes":%d,"raw":%s`,
					jq(x.DataTypeHex()), jq(x.Semantics()), x.AngularBytes(), x.LinearBytes(), jq(hex.EncodeToString(x.Raw())))
				if x.Truncated {
					s += `,"truncated":true`
				}
				vs = append(vs, s+"}")
			}
			v = "[" + strings.Join(vs, ",") + "]"
		}
		parts = append(parts, jq(k)+":"+v)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// String gives a one-line description for test failures.
func (m *Message) String() string {
	return fmt.Sprintf("%s@%d+%d %s warn=%s", m.Type, m.Offset, m.Length, m.FieldsJSON(), m.Warn)
}

// notAsserted is written in the truth of every Pose.
// The byte encodings those interpretations assume are unverified
// (protocols.md §3.4).
const notAsserted = "values[*]: decoded interpretations, other keys"

// MarshalJSON writes the record as in the truth files: type, offset,
// length, fields; then for messages "match" ("exact": the record's fields
// are exactly these; "subset": Pose, each listed key is present with this
// value, recursively, and each value object may have more keys),
// "warning" ("yes"/"no"/absent = not asserted), "not_asserted" and "wire"
// (hex of the datagram). Events have type, offset, length and fields {}.
func (m Message) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	truth.Head(&b, m.Type, m.Offset, m.Length, m.FieldsJSON())
	if !m.IsEvent() {
		if m.Type == TypePose {
			b.WriteString(`,"match":"subset","not_asserted":[` + jq(notAsserted) + `]`)
		} else {
			b.WriteString(`,"match":"exact"`)
		}
		if m.Warn != truth.Any {
			fmt.Fprintf(&b, `,"warning":%q`, m.Warn.String())
		}
		fmt.Fprintf(&b, `,"wire":"%s"`, hex.EncodeToString(m.Wire))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
