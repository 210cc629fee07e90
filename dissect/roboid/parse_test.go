package roboid_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// Every expected value in this file was worked out by hand from the bit
// layout of roboid-message-format.txt and protocols.md §3.3 ("aa ll ssss",
// angle bytes first, then the magnitude), with the conventions documented in
// docs/roboid.md: angle = byte × 360/256 = byte × 1.40625 degrees; magnitudes
// little-endian; float16 and float32 bit patterns from IEEE 754 (binary16:
// 1 sign, 5 exponent bits biased by 15, 10 fraction bits; 0x3c00 = 1,
// 0x3e00 = 1.5; binary32 0x3f800000 = 1, 0x3fc00000 = 1.5).

type parseCase struct {
	name    string
	in      string // the datagram, hex
	typ     string
	fields  []kv     // nil: not checked (only with decode)
	warn    []string // substrings, one per warning
	summary string   // "": not checked
}

func runCases(t *testing.T, cases []parseCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, decode := range []bool{true, false} {
				s := newSession(decode)
				r := s.parse(t, h(tc.in))
				if r.Type != tc.typ {
					t.Fatalf("decode=%v: type %q, want %q", decode, r.Type, tc.typ)
				}
				checkWarnings(t, r.Warnings, tc.warn)
				if !decode {
					if len(r.Fields) != 0 || r.Summary != "" {
						t.Errorf("decode=false: fields %v summary %q", r.Fields, r.Summary)
					}
					continue
				}
				if tc.fields != nil {
					checkFields(t, r.Fields, tc.fields)
				}
				if tc.summary != "" && r.Summary != tc.summary {
					t.Errorf("summary %q, want %q", r.Summary, tc.summary)
				}
			}
		})
	}
}

// TestSpecTables decodes one value of every data type the spec names: the
// "syntax" size examples (high nibbles 0x1, 0x4, 0x5, 0xD, 0x2, 0xB, here
// with semantics 1, position), the one implemented type 0x62 and the
// "typical data types", labelled by the bit layout (protocols.md §3.3), not
// by the spec's own (partly wrong) labels.
func TestSpecTables(t *testing.T) {
	undef := "has undefined semantics 4"
	runCases(t, []parseCase{
		// Syntax examples.
		{name: "0x11 one magnitude byte", in: "10 01 02 11 c8", typ: "Pose",
			fields:  pose(1, 2, val("0x11", "position", 0, 1, "c8", kv{"magnitude_uint", u(200)})),
			summary: "net 1 thing 2: position 200"},
		{name: "0x41 one angle", in: "10 01 02 41 40", typ: "Pose",
			fields:  pose(1, 2, val("0x41", "position", 1, 0, "40", kv{"angles_deg", degs(90)})),
			summary: "net 1 thing 2: position 90°"},
		{name: "0x51 angle and distance (polar)", in: "10 01 02 51 80 0a", typ: "Pose",
			fields: pose(1, 2, val("0x51", "position", 1, 1, "800a", kv{"angles_deg", degs(180)}, kv{"magnitude_uint", u(10)}))},
		{name: "0xd1 three angles and one byte", in: "10 01 02 d1 20 40 60 ff", typ: "Pose",
			fields:  pose(1, 2, val("0xd1", "position", 3, 1, "204060ff", kv{"angles_deg", degs(45, 90, 135)}, kv{"magnitude_uint", u(255)})),
			summary: "net 1 thing 2: position 45°,90°,135° 255"},
		{name: "0x21 16-bit value", in: "10 01 02 21 34 12", typ: "Pose",
			// 0x1234: exponent 0b00100 = 4, fraction 0x234 = 564: (1024+564)/1024 × 2^(4-15) = 1588 × 2^-21.
			fields: pose(1, 2, val("0x21", "position", 0, 2, "3412", kv{"magnitude_uint", u(0x1234)}, kv{"magnitude_f16", fl(1588.0 / (1 << 21))}))},
		{name: "0xb1 spherical, 32-bit distance", in: "10 01 02 b1 40 20 00 00 c0 3f", typ: "Pose",
			fields:  pose(1, 2, val("0xb1", "position", 2, 4, "40200000c03f", kv{"angles_deg", degs(90, 45)}, kv{"magnitude_uint", u(0x3fc00000)}, kv{"magnitude_f32", f32(1.5)})),
			summary: "net 1 thing 2: position 90°,45° 1.5 (f32)"},
		// The implemented type.
		{name: "0x62 polar velocity", in: "10 01 02 62 40 00 3e", typ: "Pose",
			fields:  pose(1, 2, val("0x62", "linear_velocity", 1, 2, "40003e", kv{"angles_deg", degs(90)}, kv{"magnitude_uint", u(0x3e00)}, kv{"magnitude_f16", fl(1.5)})),
			summary: "net 1 thing 2: linear_velocity 90° 1.5 (f16)"},
		// Typical data types.
		{name: "0x48 2D direction", in: "10 01 02 48 80", typ: "Pose",
			fields: pose(1, 2, val("0x48", "direction", 1, 0, "80", kv{"angles_deg", degs(180)}))},
		{name: "0x88 3D direction", in: "10 01 02 88 c0 ff", typ: "Pose",
			fields: pose(1, 2, val("0x88", "direction", 2, 0, "c0ff", kv{"angles_deg", degs(270, 358.59375)}))},
		{name: "0x83 is linear acceleration, no magnitude", in: "10 01 02 83 01 02", typ: "Pose",
			fields: pose(1, 2, val("0x83", "linear_acceleration", 2, 0, "0102", kv{"angles_deg", degs(1.40625, 2.8125)}))},
		{name: "0xd4 has undefined semantics", in: "10 01 02 d4 10 20 30 07", typ: "Pose",
			fields:  pose(1, 2, val("0xd4", "undefined", 3, 1, "10203007", kv{"angles_deg", degs(22.5, 45, 67.5)}, kv{"magnitude_uint", u(7)})),
			warn:    []string{"value 0 (data type 0xd4 at byte 3) " + undef},
			summary: "net 1 thing 2: undefined(0xd4) 22.5°,45°,67.5° 7"},
		{name: "0xe5 is orientation, 5 bytes", in: "10 01 02 e5 00 40 80 00 3c", typ: "Pose",
			fields: pose(1, 2, val("0xe5", "orientation", 3, 2, "004080003c", kv{"angles_deg", degs(0, 90, 180)}, kv{"magnitude_uint", u(0x3c00)}, kv{"magnitude_f16", fl(1)}))},
		{name: "0xf5 is orientation, 7 bytes", in: "10 01 02 f5 00 40 80 00 00 80 3f", typ: "Pose",
			fields:  pose(1, 2, val("0xf5", "orientation", 3, 4, "00408000 00803f", kv{"angles_deg", degs(0, 90, 180)}, kv{"magnitude_uint", u(0x3f800000)}, kv{"magnitude_f32", f32(1)})),
			summary: "net 1 thing 2: orientation 0°,90°,180° 1 (f32)"},
		// Several values in one Pose.
		{name: "three values", in: "10 03 04 62 40 00 3e 48 80 01", typ: "Pose",
			fields: pose(3, 4,
				val("0x62", "linear_velocity", 1, 2, "40003e", kv{"angles_deg", degs(90)}, kv{"magnitude_uint", u(0x3e00)}, kv{"magnitude_f16", fl(1.5)}),
				val("0x48", "direction", 1, 0, "80", kv{"angles_deg", degs(180)}),
				val("0x01", "position", 0, 0, "")),
			summary: "net 3 thing 4: linear_velocity 90° 1.5 (f16); direction 180°; position"},
		{name: "no values", in: "10 ff 00", typ: "Pose", fields: pose(255, 0), summary: "net 255 thing 0: no values"},
		{name: "five values, summary shows four", in: "10 01 02 01 02 03 05 06", typ: "Pose",
			summary: "net 1 thing 2: position; linear_velocity; linear_acceleration; orientation; +1 more"},
	})
}

// TestFloat16 decodes known binary16 patterns as 2-byte magnitudes (data
// type 0x22, linear velocity), sent little-endian. Values from IEEE 754:
// 2^-24 is the smallest subnormal, 2^-14 the smallest normal, 1023 × 2^-24
// the largest subnormal, 65504 the largest finite half.
func TestFloat16(t *testing.T) {
	for _, tc := range []struct {
		bits uint16
		want float64
	}{
		{0x3c00, 1},
		{0xc000, -2},
		{0x7bff, 65504},
		{0x0001, 0x1p-24},
		{0x03ff, 1023 * 0x1p-24},
		{0x0400, 0x1p-14},
		{0x3555, 1365.0 / 4096}, // exponent 13, fraction 341: 1365/1024 × 2^-2
		{0x3800, 0.5},
		{0x3c01, 1 + 1.0/1024},
		{0x0000, 0},
		{0x8000, math.Copysign(0, -1)},
		{0x7c00, math.Inf(1)},
		{0xfc00, math.Inf(-1)},
		{0x7e00, math.NaN()},
		{0x7c01, math.NaN()},
		{0xfe00, math.NaN()},
	} {
		lo, hi := byte(tc.bits), byte(tc.bits>>8)
		in := []byte{0x10, 1, 2, 0x22, lo, hi}
		r := newSession(true).parse(t, in)
		checkFields(t, r.Fields, pose(1, 2, val("0x22", "linear_velocity", 0, 2, string(hexByte(lo)+hexByte(hi)),
			kv{"magnitude_uint", u(uint64(tc.bits))}, kv{"magnitude_f16", fl(tc.want)})))
		if len(r.Warnings) != 0 {
			t.Errorf("%04x: warnings %q", tc.bits, r.Warnings)
		}
	}
}

func hexByte(b byte) string {
	const d = "0123456789abcdef"
	return string([]byte{d[b>>4], d[b&15]})
}

// TestAngles decodes angle bytes as unsigned binary angles (256 steps per
// turn): 0x80 is 180°, not -180°.
func TestAngles(t *testing.T) {
	for _, tc := range []struct {
		b    byte
		want float64
	}{
		{0x00, 0}, {0x01, 1.40625}, {0x20, 45}, {0x40, 90}, {0x7f, 178.59375},
		{0x80, 180}, {0x81, 181.40625}, {0xc0, 270}, {0xff, 358.59375},
	} {
		r := newSession(true).parse(t, []byte{0x10, 1, 2, 0x48, tc.b})
		checkFields(t, r.Fields, pose(1, 2, val("0x48", "direction", 1, 0, hexByte(tc.b), kv{"angles_deg", degs(tc.want)})))
	}
}

// TestMagnitudeByteOrder checks that 4-byte magnitudes are read
// little-endian (an assumption, documented).
func TestMagnitudeByteOrder(t *testing.T) {
	// 0x31: position, 4-byte magnitude. 01 02 03 04 LE = 0x04030201;
	// as float32: exponent 0x08 → 2^-119 × (1 + 0x030201/2^23).
	r := newSession(true).parse(t, h("10 01 02 31 01 02 03 04"))
	want := math.Float32frombits(0x04030201)
	checkFields(t, r.Fields, pose(1, 2, val("0x31", "position", 0, 4, "01020304", kv{"magnitude_uint", u(0x04030201)}, kv{"magnitude_f32", f32(want)})))
	// float32 NaN and -Inf survive as such.
	r = newSession(true).parse(t, h("10 01 02 31 00 00 c0 7f 32 00 00 80 ff"))
	checkFields(t, r.Fields, pose(1, 2,
		val("0x31", "position", 0, 4, "0000c07f", kv{"magnitude_uint", u(0x7fc00000)}, kv{"magnitude_f32", f32(float32(math.NaN()))}),
		val("0x32", "linear_velocity", 0, 4, "000080ff", kv{"magnitude_uint", u(0xff800000)}, kv{"magnitude_f32", f32(float32(math.Inf(-1)))})))
}

// TestPoseErrors covers the extension byte, truncated values, undefined
// semantics and short headers.
func TestPoseErrors(t *testing.T) {
	dir90 := val("0x48", "direction", 1, 0, "40", kv{"angles_deg", degs(90)})
	runCases(t, []parseCase{
		{name: "extension byte stops decoding", in: "10 01 02 48 40 00 05 aa", typ: "Pose",
			fields:  append(pose(1, 2, dir90), kv{"rest", hx("0005aa")}),
			warn:    []string{"data type 0x00 at byte 5 announces an extension byte, which the spec does not define: the 3 bytes from there are shown as rest"},
			summary: "net 1 thing 2: direction 90°; rest 3 bytes"},
		{name: "extension byte first and last", in: "10 01 02 00", typ: "Pose",
			fields: append(pose(1, 2), kv{"rest", hx("00")}),
			warn:   []string{"data type 0x00 at byte 3"}},
		{name: "value cut short", in: "10 01 02 62 40 00", typ: "Pose",
			fields:  pose(1, 2, val("0x62", "linear_velocity", 1, 2, "4000", truncated)),
			warn:    []string{"value 0 (data type 0x62 at byte 3) needs 3 bytes, the datagram ends after 2"},
			summary: "net 1 thing 2: linear_velocity (truncated)"},
		{name: "data type byte alone at the end", in: "10 01 02 48 40 b1", typ: "Pose",
			fields: pose(1, 2, dir90, val("0xb1", "position", 2, 4, "", truncated)),
			warn:   []string{"value 1 (data type 0xb1 at byte 5) needs 6 bytes, the datagram ends after 0"}},
		{name: "undefined and truncated", in: "10 01 02 f4 01", typ: "Pose",
			fields: pose(1, 2, val("0xf4", "undefined", 3, 4, "01", truncated)),
			warn:   []string{"value 0 (data type 0xf4 at byte 3) has undefined semantics 4", "needs 7 bytes, the datagram ends after 1"}},
		{name: "undefined semantics 0, 9 and 15", in: "10 01 02 40 11 09 0f 3f 01 02 03 04", typ: "Pose",
			fields: pose(1, 2,
				val("0x40", "undefined", 1, 0, "11", kv{"angles_deg", degs(23.90625)}),
				val("0x09", "undefined", 0, 0, ""),
				val("0x0f", "undefined", 0, 0, ""),
				val("0x3f", "undefined", 0, 4, "01020304", kv{"magnitude_uint", u(0x04030201)}, kv{"magnitude_f32", f32(math.Float32frombits(0x04030201))})),
			warn: []string{"semantics 0", "value 1 (data type 0x09 at byte 5) has undefined semantics 9", "semantics 15", "semantics 15"}},
		{name: "ten undefined: eight warnings and a count", in: "10 01 02 04 04 04 04 04 04 04 04 04 04", typ: "Pose",
			warn: []string{"value 0 ", "value 1 ", "value 2 ", "value 3 ", "value 4 ", "value 5 ", "value 6 ", "value 7 ", "Pose: 2 more values with undefined semantics"}},
		{name: "only the id", in: "10", typ: "Pose", fields: []kv{},
			warn: []string{"Pose: the datagram ends after 1 bytes, before network_id"}},
		{name: "no thing id", in: "10 07", typ: "Pose", fields: []kv{{"network_id", u(7)}},
			warn: []string{"Pose: the datagram ends after 2 bytes, before thing_id"}, summary: "net 7"},
	})
}

// TestMaxValues: past MaxValues values the rest of the datagram is "rest".
func TestMaxValues(t *testing.T) {
	in := []byte{0x10, 1, 2}
	for range 1030 {
		in = append(in, 0x01) // position, no bytes
	}
	r := newSession(true).parse(t, in)
	checkWarnings(t, r.Warnings, []string{"only the first 1024 values are decoded: the 6 bytes from byte 1027 are shown as rest"})
	v, _ := r.Fields.Get("values")
	rest, _ := r.Fields.Get("rest")
	if len(v.Items()) != 1024 || string(rest.Raw()) != string(in[1027:]) {
		t.Errorf("%d values, rest %x", len(v.Items()), rest.Raw())
	}
}

// TestMessages decodes every message id and an unknown one.
func TestMessages(t *testing.T) {
	url := "http://example.com/r.obj"
	urlHex := "687474703a2f2f6578616d706c652e636f6d2f722e6f626a"
	runCases(t, []parseCase{
		{name: "Client empty", in: "a0", typ: "Client", fields: []kv{{"data", hx("")}}},
		{name: "Client with data", in: "a0 01 02 03", typ: "Client", fields: []kv{{"data", hx("010203")}}, summary: "data=010203"},
		{name: "NetworkId", in: "a1 05", typ: "NetworkId", fields: []kv{{"network_id", u(5)}, {"data", hx("")}}, summary: "net 5"},
		{name: "NetworkId short", in: "a1", typ: "NetworkId", fields: []kv{{"data", hx("")}},
			warn: []string{"NetworkId: the datagram ends after 1 bytes, before network_id"}},
		{name: "NewThing", in: "80 01 02 07", typ: "NewThing",
			fields: []kv{{"network_id", u(1)}, {"thing_id", u(2)}, {"data", hx("07")}}, summary: "net 1 thing 2 data=07"},
		{name: "NewThing short", in: "80 01", typ: "NewThing", fields: []kv{{"network_id", u(1)}, {"data", hx("")}},
			warn: []string{"NewThing: the datagram ends after 2 bytes, before thing_id"}},
		{name: "Investigate", in: "81 01 02", typ: "Investigate",
			fields: []kv{{"network_id", u(1)}, {"thing_id", u(2)}, {"data", hx("")}}, summary: "net 1 thing 2"},
		{name: "ModelURL", in: "90 01 02" + urlHex, typ: "ModelURL",
			fields: []kv{{"network_id", u(1)}, {"thing_id", u(2)}, {"data", hx(urlHex)}}, summary: `net 1 thing 2 "` + url + `"`},
		{name: "ModelURL not text", in: "90 01 02 18 68 74", typ: "ModelURL",
			fields: []kv{{"network_id", u(1)}, {"thing_id", u(2)}, {"data", hx("186874")}}, summary: "net 1 thing 2 data=186874"},
		{name: "long ModelURL in summary", in: "90 01 02" + strings.Repeat("61", 81), typ: "ModelURL",
			summary: `net 1 thing 2 "` + strings.Repeat("a", 80) + `"…`},
		{name: "long data in summary", in: "80 00 00 000102030405060708090a0b0c0d0e0f10", typ: "NewThing",
			summary: "net 0 thing 0 data=000102030405060708090a0b0c0d0e0f…"},
		{name: "unknown id", in: "42 01 02", typ: "unknown",
			fields: []kv{{"message_id", dissect.Int(0x42)}, {"data", hx("0102")}}, warn: []string{"unknown message id 0x42"}, summary: "id=0x42 len=3"},
		{name: "unknown id alone", in: "ff", typ: "unknown",
			fields: []kv{{"message_id", dissect.Int(0xff)}, {"data", hx("")}}, warn: []string{"unknown message id 0xff"}},
	})
}

// TestNotDatagram: without datagram framing there is no message end.
func TestNotDatagram(t *testing.T) {
	s := newSession(true)
	s.Ctx.Final = false
	n, err := s.P.Parse(&s.Ctx, h("10 01 02 48 40"))
	var e *dissect.Error
	if n != 0 || !errors.As(err, &e) || e.Code != "not_datagram" || e.Offset != 0 {
		t.Errorf("Parse = %d, %v", n, err)
	}
	if k, ok := s.P.Sync(&s.Ctx, h("10 01 02")); k != 3 || ok {
		t.Errorf("Sync = %d, %v", k, ok)
	}
}
