package neptune_test

import (
	"math"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/neptune"
)

// Wiki test datagrams, written out by hand from the wiki tables and
// protocols.md §2.2-2.4: header type, priority, sequence (u8 each), then
// the body; little-endian; type numbers from NepPacketTypes.h. float32 bit
// patterns worked out by hand: 0.5 = 3f000000, 0.25 = 3e800000,
// 90 = 42b40000, -720 = c4340000, 1 = 3f800000, NaN = 7fc00000,
// +Inf = 7f800000.
var (
	wSpeed     = h("01 02 07" + "03 01 00 00 00 3f 05 00 00 00") // motor 3 forward 0.5, duration 5 (int32)
	wSpeed16   = h("01 02 07" + "03 01 00 00 00 3f 05 00")       // the same with an int16 duration
	wPosition  = h("02 00 01" + "04 00 00 b4 42 00 00 80 3e")    // motor 4, 90 degrees, speed 0.25
	wRelayOn   = h("03 01 02" + "01 01")                         // relay 1 on
	wSensor    = h("04 00 09" + "02 00 00 00 01 00 00 00 de ad be ef")
	wSensor16  = h("04 00 09" + "02 00 01 00 de ad")
	wUnknown   = h("05 01 02 aa bb")
	wReverse   = h("01 ff 00" + "00 00 00 00 80 3f ff ff ff ff") // motor 0 reverse 1.0, duration -1
	wNegDegree = h("02 03 04" + "00 00 00 34 c4 00 00 c0 7f")    // motor 0, -720 degrees, speed NaN
)

func hdr(prio, seq uint64) []kv { return []kv{{"priority", u(prio)}, {"sequence", u(seq)}} }

func with(a []kv, b ...kv) []kv { return append(append([]kv(nil), a...), b...) }

type wikiCase struct {
	parseCase
	int16 bool
}

func speed(id uint64, dir string, sp float32, dur int64) []kv {
	return []kv{{"motor_id", u(id)}, {"direction", s(dir)}, {"speed", f32(sp)}, {"duration", i(dur)}}
}

var wikiCases = []wikiCase{
	// Each type, int32.
	{parseCase: parseCase{name: "speed_motor", in: wSpeed, n: 13, typ: "speed_motor", fields: with(hdr(2, 7), speed(3, "forward", 0.5, 5)...)}},
	{parseCase: parseCase{name: "speed_motor reverse, duration -1", in: wReverse, n: 13, typ: "speed_motor", fields: with(hdr(255, 0), speed(0, "reverse", 1, -1)...)}},
	{parseCase: parseCase{name: "speed_motor +Inf", in: h("01 00 00 01 01 00 00 80 7f 00 00 00 80"), n: 13, typ: "speed_motor", fields: with(hdr(0, 0), speed(1, "forward", float32(math.Inf(1)), math.MinInt32)...)}},
	{parseCase: parseCase{name: "speed_motor direction 2", in: h("01 00 00 01 02 00 00 00 00 00 00 00 00"), n: 13, typ: "speed_motor", fields: with(hdr(0, 0), speed(1, "forward", 0, 0)...), warn: []string{"speed_motor: direction byte 0x02 is not 0 or 1, taken as true"}}},
	{parseCase: parseCase{name: "position_motor", in: wPosition, n: 12, typ: "position_motor", fields: with(hdr(0, 1), kv{"motor_id", u(4)}, kv{"degree", f32(90)}, kv{"speed", f32(0.25)})}},
	{parseCase: parseCase{name: "position_motor -720 NaN", in: wNegDegree, n: 12, typ: "position_motor", fields: with(hdr(3, 4), kv{"motor_id", u(0)}, kv{"degree", f32(-720)}, kv{"speed", f32(float32(math.NaN()))})}},
	{parseCase: parseCase{name: "relay on", in: wRelayOn, n: 5, typ: "relay", fields: with(hdr(1, 2), kv{"relay_id", u(1)}, kv{"enable", bl(true)})}},
	{parseCase: parseCase{name: "relay off", in: h("03 00 00 07 00"), n: 5, typ: "relay", fields: with(hdr(0, 0), kv{"relay_id", u(7)}, kv{"enable", bl(false)})}},
	{parseCase: parseCase{name: "relay enable 5", in: h("03 00 00 07 05"), n: 5, typ: "relay", fields: with(hdr(0, 0), kv{"relay_id", u(7)}, kv{"enable", bl(true)}), warn: []string{"relay: enable byte 0x05 is not 0 or 1, taken as true"}}},
	{parseCase: parseCase{name: "sensor_data", in: wSensor, n: 15, typ: "sensor_data", fields: with(hdr(0, 9), kv{"sensor_type", i(2)}, kv{"sensor_id", i(1)}, kv{"data", hx("deadbeef")})}},
	{parseCase: parseCase{name: "sensor_data empty data", in: h("04 00 09 fe ff ff ff 00 00 00 80"), n: 11, typ: "sensor_data", fields: with(hdr(0, 9), kv{"sensor_type", i(-2)}, kv{"sensor_id", i(math.MinInt32)}, kv{"data", hx("")})}},

	// Int16.
	{int16: true, parseCase: parseCase{name: "int16 speed_motor", in: wSpeed16, n: 11, typ: "speed_motor", fields: with(hdr(2, 7), speed(3, "forward", 0.5, 5)...)}},
	{int16: true, parseCase: parseCase{name: "int16 duration -2", in: h("01 00 00 01 00 00 00 80 3f fe ff"), n: 11, typ: "speed_motor", fields: with(hdr(0, 0), speed(1, "reverse", 1, -2)...)}},
	{int16: true, parseCase: parseCase{name: "int16 sensor_data", in: wSensor16, n: 9, typ: "sensor_data", fields: with(hdr(0, 9), kv{"sensor_type", i(2)}, kv{"sensor_id", i(1)}, kv{"data", hx("dead")})}},
	{int16: true, parseCase: parseCase{name: "int16 sensor_data negative ids", in: h("04 00 00 00 80 ff 7f"), n: 7, typ: "sensor_data", fields: with(hdr(0, 0), kv{"sensor_type", i(-32768)}, kv{"sensor_id", i(32767)}, kv{"data", hx("")})}},
	{int16: true, parseCase: parseCase{name: "int32 datagram read as int16", in: wSpeed, n: 13, typ: "speed_motor", fields: with(hdr(2, 7), append(speed(3, "forward", 0.5, 5), kv{"trailing", hx("0000")})...), warn: []string{"speed_motor: 2 bytes after the 8-byte body"}}},
	{int16: true, parseCase: parseCase{name: "int16 position_motor unchanged", in: wPosition, n: 12, typ: "position_motor", fields: with(hdr(0, 1), kv{"motor_id", u(4)}, kv{"degree", f32(90)}, kv{"speed", f32(0.25)})}},
	{parseCase: parseCase{name: "int16 datagram read as int32", in: wSpeed16, n: 11, typ: "speed_motor", fields: with(hdr(2, 7), kv{"motor_id", u(3)}, kv{"direction", s("forward")}, kv{"speed", f32(0.5)}, kv{"trailing", hx("0500")}), warn: []string{"speed_motor: body is 8 bytes, needs 10 (int = int32): duration cut short"}}},

	// Unknown types.
	{parseCase: parseCase{name: "type 5", in: wUnknown, n: 5, typ: "unknown", fields: with(hdr(1, 2), kv{"data", hx("aabb")}), warn: []string{"type 5 has no number in NepPacketTypes.h"}}},
	{parseCase: parseCase{name: "type 0 header only", in: h("00 00 00"), n: 3, typ: "unknown", fields: with(hdr(0, 0), kv{"data", hx("")}), warn: []string{"type 0 has no number"}}},
	{parseCase: parseCase{name: "type 255", in: h("ff 10 20 01"), n: 4, typ: "unknown", fields: with(hdr(16, 32), kv{"data", hx("01")}), warn: []string{"type 255 has no number"}}},

	// Short headers and bodies, extra bytes.
	{parseCase: parseCase{name: "one byte", in: h("01"), n: 1, typ: "speed_motor", fields: []kv{}, warn: []string{"datagram of 1 bytes is shorter than the 3-byte header"}}},
	{parseCase: parseCase{name: "two bytes", in: h("03 09"), n: 2, typ: "relay", fields: []kv{{"priority", u(9)}}, warn: []string{"datagram of 2 bytes"}}},
	{parseCase: parseCase{name: "two bytes unknown type", in: h("07 09"), n: 2, typ: "unknown", fields: []kv{{"priority", u(9)}}, warn: []string{"shorter than the 3-byte header", "type 7 has no number"}}},
	{parseCase: parseCase{name: "header only", in: h("01 02 03"), n: 3, typ: "speed_motor", fields: hdr(2, 3), warn: []string{"speed_motor: body is 0 bytes, needs 10 (int = int32): motor_id missing"}}},
	{parseCase: parseCase{name: "speed cut short", in: h("01 00 00 03 01 00 00"), n: 7, typ: "speed_motor", fields: with(hdr(0, 0), kv{"motor_id", u(3)}, kv{"direction", s("forward")}, kv{"trailing", hx("0000")}), warn: []string{"speed_motor: body is 4 bytes, needs 10 (int = int32): speed cut short"}}},
	{int16: true, parseCase: parseCase{name: "int16 direction missing", in: h("01 00 00 03"), n: 4, typ: "speed_motor", fields: with(hdr(0, 0), kv{"motor_id", u(3)}), warn: []string{"speed_motor: body is 1 bytes, needs 8 (int = int16): direction missing"}}},
	{parseCase: parseCase{name: "position speed missing", in: h("02 00 00 04 00 00 b4 42"), n: 8, typ: "position_motor", fields: with(hdr(0, 0), kv{"motor_id", u(4)}, kv{"degree", f32(90)}), warn: []string{"position_motor: body is 5 bytes, needs 9 (int = int32): speed missing"}}},
	{parseCase: parseCase{name: "relay enable missing", in: h("03 00 00 04"), n: 4, typ: "relay", fields: with(hdr(0, 0), kv{"relay_id", u(4)}), warn: []string{"relay: body is 1 bytes, needs 2 (int = int32): enable missing"}}},
	{parseCase: parseCase{name: "sensor id cut short", in: h("04 00 00 02 00 00 00 01 00"), n: 9, typ: "sensor_data", fields: with(hdr(0, 0), kv{"sensor_type", i(2)}, kv{"trailing", hx("0100")}), warn: []string{"sensor_data: body is 6 bytes, needs at least 8 (int = int32): sensor_id cut short"}}},
	{parseCase: parseCase{name: "relay extra bytes", in: h("03 00 00 04 01 aa bb cc"), n: 8, typ: "relay", fields: with(hdr(0, 0), kv{"relay_id", u(4)}, kv{"enable", bl(true)}, kv{"trailing", hx("aabbcc")}), warn: []string{"relay: 3 bytes after the 2-byte body"}}},
	{parseCase: parseCase{name: "bad bool and extra byte", in: h("03 00 00 04 02 ee"), n: 6, typ: "relay", fields: with(hdr(0, 0), kv{"relay_id", u(4)}, kv{"enable", bl(true)}, kv{"trailing", hx("ee")}), warn: []string{"enable byte 0x02", "1 bytes after the 2-byte body"}}},

	// Not the end of a datagram: no packet can be framed.
	{parseCase: parseCase{name: "empty", in: nil, n: 0, code: "more"}},
}

func TestParseWiki(t *testing.T) {
	for _, tc := range wikiCases {
		for _, decode := range []bool{true, false} {
			name := tc.name
			if !decode {
				name += "/nodecode"
			}
			t.Run(name, func(t *testing.T) {
				runParseCase(t, wikiSession(tc.int16, decode), tc.parseCase, decode, true, "neptune-wiki")
			})
		}
	}
}

// TestParseWikiNotFinal: a buffer that does not end a datagram is never
// framed.
func TestParseWikiNotFinal(t *testing.T) {
	ss := wikiSession(false, true)
	for _, d := range [][]byte{wSpeed, wRelayOn, wUnknown, h("01")} {
		n, err := ss.parse(d, false)
		if n != 0 || err != dissect.ErrNeedMore || ss.Rec.Type != "" {
			t.Errorf("Parse(%x, not final) = %d, %v, type %q", d, n, err, ss.Rec.Type)
		}
	}
	if k, ok := ss.P.Sync(&ss.Ctx, wSpeed); k != len(wSpeed) || ok {
		t.Errorf("Sync = %d, %v; want %d, false", k, ok, len(wSpeed))
	}
}

func TestInfo(t *testing.T) {
	dev := neptune.New()
	in := dev.Info()
	if in.Name != "neptune" || in.Proto != "neptune" || in.Detection != "" ||
		len(in.Ports) != 1 || in.Ports[0] != (dissect.Port{Transport: dissect.TCP, Port: 1493}) ||
		len(in.Transports) != 2 || in.Transports[0] != dissect.TCP || in.Transports[1] != dissect.Serial {
		t.Errorf("device info %+v", in)
	}
	for _, int16 := range []bool{false, true} {
		w := neptune.NewWiki(neptune.WikiOptions{Int16: int16})
		in := w.Info()
		if in.Name != "neptune-wiki" || in.Proto != "neptune" || in.Detection != "" || len(in.Ports) != 0 ||
			len(in.Transports) != 1 || in.Transports[0] != dissect.UDP {
			t.Errorf("wiki info %+v", in)
		}
	}
	// Neither protocol claims a stream by content.
	for _, p := range []dissect.Protocol{dev, neptune.NewWiki(neptune.WikiOptions{})} {
		for _, b := range [][]byte{vStop, wSpeed, cat(vStop, vTranslate, vRotate, vLamp)} {
			if v := p.Detect(&dissect.StreamInfo{}, 0, b); v != dissect.No {
				t.Errorf("%s: Detect(%x) = %v", p.Info().Name, b, v)
			}
		}
	}
}
