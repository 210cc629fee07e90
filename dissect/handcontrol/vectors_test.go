package handcontrol

import (
	"errors"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// The frame vectors of protocols.md §1.9, each with the record it must give.
// Expected values were worked out by hand from §1.3-§1.6: codes from the
// Type byte, crc from the last byte, crc_ok from the §1.4 verification
// list, payloads from the field tables.

func TestCRC(t *testing.T) {
	if got := crc8([]byte("123456789")); got != 0xf4 {
		t.Errorf(`crc8("123456789") = %#02x, want 0xf4`, got)
	}
	if got := crc8(h("04 03 fb ad ff bd")); got != 0xbf {
		t.Errorf("crc8(04 03 fb ad ff bd) = %#02x, want 0xbf", got)
	}
	// §1.4: CRC over type+size+payload of each vector.
	for _, v := range []struct {
		frame string
		crc   byte
	}{
		{"fdbadc0150b411ff090500ffffffffffb6", 0xc6},
		{"fdbadc0150b411ff050200abcd8a", 0x23},
		{"fdbadc0150b411ff060200ba05b1", 0xb1},
		{"fdbadc0150b411ff040000ab", 0xab},
		{"fdbadc0150b411ff050000c0", 0xc0},
		{"fdbadc0150b411ff05010032bb", 0xbb},
		{"fdbadc0150b411ff060200fbaca9", 0xa9},
	} {
		b := h(v.frame)
		if got := crc8(b[8 : len(b)-1]); got != v.crc {
			t.Errorf("%s: crc %#02x, want %#02x", v.frame, got, v.crc)
		}
	}
	// The table against the bitwise reference.
	buf := make([]byte, 300)
	for i := range buf {
		buf[i] = byte(i*131 + 7)
		if got, want := crc8(buf[:i]), refCRC(buf[:i]); got != want {
			t.Fatalf("crc8 of %d bytes = %#02x, bitwise %#02x", i, got, want)
		}
	}
}

// vector is a frame and the record it gives, parsed alone by a new parser.
type vector struct {
	name   string
	dir    dissect.Dir
	hex    string
	typ    string
	fields []kv
	warn   []string
}

const noRequest = "response with no request in flight"

var frameVectors = []vector{
	{
		name: "PerformGestureId, payload ff×5, wire CRC b6 wrong (C#/Py tests)",
		dir:  0, hex: "fd ba dc 01 50 b4 11 ff 09 05 00 ff ff ff ff ff b6",
		typ: TypePerformGestureId,
		fields: []kv{{"code", i64(9)}, {"role", str("request")}, {"crc", i64(0xb6)}, {"crc_ok", dissect.Bool(false)},
			{"payload_hex", dissect.Bytes(h("ff ff ff ff ff"))}},
		warn: []string{"crc 0xb6 on the wire, 0xc6 computed", "payload of 5 bytes does not parse as protobuf (telemetry.PerformGestureById): truncated tag at offset 0"},
	},
	{
		name: "SetSettings, payload ab cd, wire CRC 8a wrong",
		dir:  0, hex: "fd ba dc 01 50 b4 11 ff 05 02 00 ab cd 8a",
		typ: TypeSetSettings,
		fields: []kv{{"code", i64(5)}, {"role", str("request")}, {"crc", i64(0x8a)}, {"crc_ok", dissect.Bool(false)},
			{"payload_hex", dissect.Bytes(h("ab cd"))}},
		warn: []string{"crc 0x8a on the wire, 0x23 computed", "(settings.SetSettings): truncated tag at offset 0"},
	},
	{
		// ba 05 is the tag of field 87, length-delimited, whose length is missing.
		name: "GetGestures, payload ba 05, CRC b1",
		dir:  0, hex: "fd ba dc 01 50 b4 11 ff 06 02 00 ba 05 b1",
		typ: TypeGetGestures,
		fields: []kv{{"code", i64(6)}, {"role", str("request")}, {"crc", i64(0xb1)}, {"crc_ok", dissect.Bool(true)}, {"crc_scope", str(scopeHeader)},
			{"payload_hex", dissect.Bytes(h("ba 05"))}},
		warn: []string{"code 6 (GetGestures) from the host carries no payload, yet has 2 bytes; decoded raw",
			"payload of 2 bytes does not parse as protobuf (raw): truncated varint at offset 2"},
	},
	{
		name: "GetSettings, empty, CRC ab",
		dir:  0, hex: "fd ba dc 01 50 b4 11 ff 04 00 00 ab",
		typ:    TypeGetSettings,
		fields: []kv{{"code", i64(4)}, {"role", str("request")}, {"crc", i64(0xab)}, {"crc_ok", dissect.Bool(true)}, {"crc_scope", str(scopeHeader)}, {"payload", obj()}, {"schema", str("v2")}},
	},
	{
		name: "SetSettings, empty, CRC c0",
		dir:  0, hex: "fd ba dc 01 50 b4 11 ff 05 00 00 c0",
		typ:    TypeSetSettings,
		fields: []kv{{"code", i64(5)}, {"role", str("request")}, {"crc", i64(0xc0)}, {"crc_ok", dissect.Bool(true)}, {"crc_scope", str(scopeHeader)}, {"payload", obj()}, {"schema", str("v2")}},
	},
	{
		// 32 is the tag of field 6, length-delimited, with no length.
		name: "SetSettings, payload 32, CRC bb",
		dir:  0, hex: "fd ba dc 01 50 b4 11 ff 05 01 00 32 bb",
		typ: TypeSetSettings,
		fields: []kv{{"code", i64(5)}, {"role", str("request")}, {"crc", i64(0xbb)}, {"crc_ok", dissect.Bool(true)}, {"crc_scope", str(scopeHeader)},
			{"payload_hex", dissect.Bytes(h("32"))}},
		warn: []string{"truncated varint at offset 1"},
	},
	{
		name: "GetGestures, payload fb ac, CRC a9",
		dir:  0, hex: "fd ba dc 01 50 b4 11 ff 06 02 00 fb ac a9",
		typ: TypeGetGestures,
		fields: []kv{{"code", i64(6)}, {"role", str("request")}, {"crc", i64(0xa9)}, {"crc_ok", dissect.Bool(true)}, {"crc_scope", str(scopeHeader)},
			{"payload_hex", dissect.Bytes(h("fb ac"))}},
		warn: []string{"code 6 (GetGestures) from the host carries no payload, yet has 2 bytes", "(raw): truncated tag at offset 0"},
	},
	{
		name: "ACK",
		dir:  1, hex: "fd ba dc 01 50 b4 11 ff 01 00 00 6b",
		typ:    TypeACK,
		fields: []kv{{"code", i64(1)}, {"role", str("response")}, {"crc", i64(0x6b)}, {"crc_ok", dissect.Bool(true)}, {"crc_scope", str(scopeHeader)}, {"payload", obj()}, {"schema", str("v2")}},
		warn:   []string{noRequest},
	},
	{
		name: "StopTelemetry",
		dir:  0, hex: "fd ba dc 01 50 b4 11 ff 0f 00 00 47",
		typ:    TypeStopTelemetry,
		fields: []kv{{"code", i64(15)}, {"role", str("request")}, {"crc", i64(0x47)}, {"crc_ok", dissect.Bool(true)}, {"crc_scope", str(scopeHeader)}, {"payload", obj()}, {"schema", str("v2")}},
	},
	{
		name: "GetTelemetry request",
		dir:  0, hex: "fd ba dc 01 50 b4 11 ff 0d 00 00 91",
		typ:    TypeGetTelemetry,
		fields: []kv{{"code", i64(13)}, {"role", str("request")}, {"crc", i64(0x91)}, {"crc_ok", dissect.Bool(true)}, {"crc_scope", str(scopeHeader)}, {"payload", obj()}, {"schema", str("v2")}},
	},
	{
		name: "StartTelemetry{interval_ms=100}",
		dir:  0, hex: "fd ba dc 01 50 b4 11 ff 0e 02 00 08 64 ed",
		typ: TypeStartTelemetry,
		fields: []kv{{"code", i64(14)}, {"role", str("request")}, {"crc", i64(0xed)}, {"crc_ok", dissect.Bool(true)}, {"crc_scope", str(scopeHeader)},
			{"payload", obj(kv{"interval_ms", i64(100)})}, {"schema", str("v2")}},
	},
	{
		name: "SetPositions{10,20,30,40,50}",
		dir:  0, hex: "fd ba dc 01 50 b4 11 ff 0b 0a 00 08 0a 10 14 18 1e 20 28 28 32 45",
		typ: TypeSetPositions,
		fields: []kv{{"code", i64(11)}, {"role", str("request")}, {"crc", i64(0x45)}, {"crc_ok", dissect.Bool(true)}, {"crc_scope", str(scopeHeader)},
			{"payload", obj(kv{"pointer_finger_position", i64(10)}, kv{"middle_finger_position", i64(20)}, kv{"ring_finger_position", i64(30)},
				kv{"little_finger_position", i64(40)}, kv{"thumb_finger_position", i64(50)})}, {"schema", str("v2")}},
	},
	{
		name: `PerformGestureId{id=UUID{"1"}}`,
		dir:  0, hex: "fd ba dc 01 50 b4 11 ff 09 05 00 0a 03 0a 01 31 c3",
		typ: TypePerformGestureId,
		fields: []kv{{"code", i64(9)}, {"role", str("request")}, {"crc", i64(0xc3)}, {"crc_ok", dissect.Bool(true)}, {"crc_scope", str(scopeHeader)},
			{"payload", obj(kv{"id", str("1")})}, {"schema", str("v2")}},
	},
	{
		name: "SetSettings{enable_emg=true}",
		dir:  0, hex: "fd ba dc 01 50 b4 11 ff 05 02 00 08 01 6e",
		typ: TypeSetSettings,
		fields: []kv{{"code", i64(5)}, {"role", str("request")}, {"crc", i64(0x6e)}, {"crc_ok", dissect.Bool(true)}, {"crc_scope", str(scopeHeader)},
			{"payload", obj(kv{"enable_emg", dissect.Bool(true)})}, {"schema", str("v2")}},
	},
	{
		name: `ERR Error{"Telemetry already started"}`,
		dir:  1, hex: "fd ba dc 01 50 b4 11 ff 02 1b 00 0a 19 54 65 6c 65 6d 65 74 72 79 20 61 6c 72 65 61 64 79 20 73 74 61 72 74 65 64 dd",
		typ: TypeERR,
		fields: []kv{{"code", i64(2)}, {"role", str("response")}, {"crc", i64(0xdd)}, {"crc_ok", dissect.Bool(true)}, {"crc_scope", str(scopeHeader)},
			{"payload", obj(kv{"message", str("Telemetry already started")})}, {"schema", str("v2")}},
		warn: []string{noRequest},
	},
}

func TestFrameVectors(t *testing.T) {
	for _, v := range frameVectors {
		t.Run(v.name, func(t *testing.T) {
			for _, decode := range []bool{true, false} {
				s := newSession(t, Options{}, decode)
				b := h(v.hex)
				n, err := s.parse(v.dir, t0, b)
				if err != nil || n != len(b) {
					t.Fatalf("Parse = %d, %v; want %d, nil", n, err, len(b))
				}
				if s.Rec.Type != v.typ {
					t.Errorf("type %q, want %q", s.Rec.Type, v.typ)
				}
				checkWarnings(t, s.Rec.Warnings, v.warn)
				if decode {
					checkFields(t, s.Rec.Fields, v.fields)
				} else if len(s.Rec.Fields) != 0 {
					t.Errorf("fields without Decode: %s", showFields(s.Rec.Fields))
				}
			}
		})
	}
}

func TestNeedMore(t *testing.T) {
	s := newSession(t, Options{}, true)
	// §1.9: the header of a size = 315 (0x013b LE) frame.
	hdr := h("fd ba dc 01 50 b4 11 ff 05 3b 01")
	n, err := s.parse(0, t0, hdr)
	if !errors.Is(err, dissect.ErrNeedMore) || n != 327 {
		t.Errorf("Parse(header 315) = %d, %v; want 327, ErrNeedMore", n, err)
	}
	for k := 0; k < len(hdr); k++ {
		n, err := s.parse(0, t0, hdr[:k])
		if !errors.Is(err, dissect.ErrNeedMore) || n != 0 {
			t.Errorf("Parse(%d header bytes) = %d, %v; want 0, ErrNeedMore", k, n, err)
		}
	}
	// A whole frame less its CRC byte.
	f := h("fd ba dc 01 50 b4 11 ff 0e 02 00 08 64 ed")
	if n, err := s.parse(0, t0, f[:len(f)-1]); !errors.Is(err, dissect.ErrNeedMore) || n != len(f) {
		t.Errorf("Parse(frame less CRC) = %d, %v; want %d, ErrNeedMore", n, err, len(f))
	}
}

func TestBadSFD(t *testing.T) {
	s := newSession(t, Options{}, true)
	for _, c := range []struct {
		hex string
		off int64
	}{
		{"fd ba dc 01 50 b4 11 ac", 7}, // §1.9: SFD with its last byte wrong
		{"fb ba dc fa ad bd 23 aa d1 32", 0},
		{"12 db fb aa f4 cb 34 15 fd ba dc 01 50 b4 11 ff", 0},
		{"fd ba", -1}, // a prefix: need more
	} {
		n, err := s.parse(0, t0, h(c.hex))
		if c.off < 0 {
			if !errors.Is(err, dissect.ErrNeedMore) || n != 0 {
				t.Errorf("Parse(%s) = %d, %v; want 0, ErrNeedMore", c.hex, n, err)
			}
			continue
		}
		var e *dissect.Error
		if !errors.As(err, &e) || n != 0 || e.Code != errNoSFD || e.Offset != c.off || e.Proto != "handcontrol" {
			t.Errorf("Parse(%s) = %d, %v; want a no_sfd error at offset %d", c.hex, n, err, c.off)
		}
	}
}

func TestSync(t *testing.T) {
	s := newSession(t, Options{}, true)
	for _, c := range []struct {
		hex string
		k   int
		ok  bool
	}{
		{"12 db fb aa f4 cb 34 15 fd ba dc 01 50 b4 11 ff", 8, true},
		{"fd ba dc 01 50 b4 11 ac fd ba dc 01 50 b4 11 ff 01", 8, true},
		{"ba dc 01 50 b4 11 ff", 7, false},
		{"00 11 fd ba dc", 2, false},
		{"00 11 fd", 2, false},
		{"fd ba dc 01 50 b4 11", 0, false},
		{"", 0, false},
	} {
		k, ok := s.P.Sync(&s.Ctx, h(c.hex))
		if k != c.k || ok != c.ok {
			t.Errorf("Sync(%s) = %d, %v; want %d, %v", c.hex, k, ok, c.k, c.ok)
		}
	}
}
