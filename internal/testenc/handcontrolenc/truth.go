package handcontrolenc

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/dissect-tools/dissect/internal/testenc/truth"
)

// Roles of the output contract.
const (
	RoleRequest   = "request"
	RoleResponse  = "response"
	RoleTelemetry = "telemetry"
)

// Host and Device are the two directions: the host (dissect's direction
// 0 on a serial link; the side that opened a TCP connection) and the
// device.
const (
	Host   = 0
	Device = 1
)

// RoleName returns "host" or "device".
func RoleName(dir int) string {
	if dir == Device {
		return "device"
	}
	return "host"
}

// Message is one record that a decoder following the output contract
// should emit for one direction of a stream: a frame, or a skipped or gap
// event.
type Message struct {
	Type   string
	Offset int64 // of the first byte within the direction
	Length int64 // bytes covered, SFD and CRC included
	Wire   []byte

	// Frame fields (output contract "handcontrol"), in this order.
	Code  byte
	Role  string
	CRC   byte // the CRC byte on the wire
	CRCOK bool
	// CRCScope is what a valid CRC covers ([ScopeHeader] or [ScopeSFD]);
	// "" when the CRC is wrong.
	CRCScope string
	// Payload is the decoded payload object; nil when the payload is not
	// protobuf wire data, and then PayloadHex holds its bytes.
	Payload    *Object
	PayloadHex []byte
	// Schema is the dissector's documented "schema" key: "v2" for a
	// payload decoded with the built-in v2 schema. "" leaves it (and any
	// other key) unasserted: the record is then matched as a subset.
	Schema string
	// Matched: the record is a reply matched to the request in flight,
	// with that request's code and the latency (reply time minus request
	// time, each the capture time of the read or packet that completed
	// the frame).
	Matched     bool
	RequestCode byte
	Latency     time.Duration
	// RequestIndex is the index of the matched request among the host
	// direction's records (-1 when not matched).
	RequestIndex int

	Warn truth.Want // whether at least one warning is expected
	// Why says why a warning is expected (free text for the truth file's
	// reader).
	Why string

	// At is when the frame's last byte was handed over: the time of the
	// write that ends with it (see [Write]); 0 for a record that does not
	// end its write.
	At time.Duration
}

// End returns the offset just past the record.
func (m *Message) End() int64 { return m.Offset + m.Length }

// IsEvent reports whether m is a skipped or gap event.
func (m *Message) IsEvent() bool { return m.Type == TypeSkipped || m.Type == TypeGap }

// LatencyMS returns the latency in milliseconds as the truth file writes
// it: the shortest decimal form (the scenarios use whole milliseconds).
func (m *Message) LatencyMS() string {
	return strconv.FormatFloat(float64(m.Latency)/float64(time.Millisecond), 'f', -1, 64)
}

// FieldsJSON returns the expected fields as a JSON object in the
// contract's order: code, role, crc, crc_ok, crc_scope (valid CRCs only),
// payload (or payload_hex), schema, request_code, latency_ms. Events have
// none.
func (m *Message) FieldsJSON() string {
	if m.IsEvent() {
		return "{}"
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"code":%d,"role":%q,"crc":%d,"crc_ok":%t`, m.Code, m.Role, m.CRC, m.CRCOK)
	if m.CRCOK {
		fmt.Fprintf(&b, `,"crc_scope":%q`, m.CRCScope)
	}
	if m.Payload != nil {
		b.WriteString(`,"payload":`)
		m.Payload.writeJSON(&b)
		if m.Schema != "" {
			b.WriteString(`,"schema":`)
			writeJSONString(&b, m.Schema)
		}
	} else {
		fmt.Fprintf(&b, `,"payload_hex":"%s"`, hex.EncodeToString(m.PayloadHex))
	}
	if m.Matched {
		fmt.Fprintf(&b, `,"request_code":%d,"latency_ms":%s`, m.RequestCode, m.LatencyMS())
	}
	b.WriteByte('}')
	return b.String()
}

// Match returns "exact" when the record's fields must be exactly
// FieldsJSON, and "subset" when other keys may be present (Schema not
// modelled).
func (m *Message) Match() string {
	if m.Payload != nil && m.Schema == "" {
		return "subset"
	}
	return "exact"
}

// String gives a one-line description for test failures.
func (m *Message) String() string {
	return fmt.Sprintf("%s@%d+%d %s(%s) warn=%s", m.Type, m.Offset, m.Length, m.FieldsJSON(), m.Match(), m.Warn)
}

// MarshalJSON writes the record as in the truth files: type, offset,
// length, fields; then for frames "match" ("exact" or "subset"),
// "warning" ("yes" or "no"; absent when not asserted), "why" (when a
// warning is expected) and "wire" (hex of the frame). Events have only
// type, offset, length and fields {}.
func (m Message) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	truth.Head(&b, m.Type, m.Offset, m.Length, m.FieldsJSON())
	if !m.IsEvent() {
		fmt.Fprintf(&b, `,"match":%q`, m.Match())
		if m.Warn != truth.Any {
			fmt.Fprintf(&b, `,"warning":%q`, m.Warn.String())
		}
		if m.Why != "" {
			b.WriteString(`,"why":`)
			writeJSONString(&b, m.Why)
		}
		fmt.Fprintf(&b, `,"wire":"%s"`, hex.EncodeToString(m.Wire))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
