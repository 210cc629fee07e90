package neptune_test

import (
	"errors"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// Expected values below are worked out by hand from protocols.md §2.3 and
// §2.6 (and the device sketch it describes), not pasted from the decoder's
// output. A length byte L frames 1+L bytes; the data field is the payload
// (type byte included).

type parseCase struct {
	name    string
	in      []byte
	n       int    // bytes consumed, or the total with ErrNeedMore
	code    string // "" success, "more" ErrNeedMore, else the *dissect.Error code
	typ     string
	fields  []kv
	warn    []string
	summary string
}

// relay is a set_motor for ids 5-6 as the co-processor reads it: the
// direction byte switches the relay (0 off, else on).
func relay(id uint64, dir string, mag uint64, on bool) []kv {
	return append(motor(id, dir, mag), kv{"relay_on", bl(on)})
}

func motor(id uint64, dir string, mag uint64) []kv {
	return []kv{{"motor", u(id)}, {"direction", s(dir)}, {"magnitude", u(mag)}}
}

var deviceCases = []parseCase{
	// §2.6 and each type in its well-formed shape.
	{name: "spec vector: motor 0 forward 0", in: vStop, n: 5, typ: "set_motor", fields: motor(0, "forward", 0)},
	{name: "motor 2 reverse 255", in: vMotor2, n: 5, typ: "set_motor", fields: motor(2, "reverse", 255)},
	{name: "motor 4 dir 7 is reverse", in: h("04 01 04 07 10"), n: 5, typ: "set_motor", fields: motor(4, "reverse", 16)},
	{name: "relay 5 on", in: vRelay5On, n: 5, typ: "set_motor", fields: relay(5, "reverse", 0, true), summary: "relay 5 on"},
	{name: "relay 6 off", in: vRelay6Off, n: 5, typ: "set_motor", fields: relay(6, "forward", 128, false), summary: "relay 6 off"},
	{name: "relay 6 on", in: h("04 01 06 02 00"), n: 5, typ: "set_motor", fields: relay(6, "reverse", 0, true), summary: "relay 6 on"},
	{name: "relay 5 off", in: h("04 01 05 00 00"), n: 5, typ: "set_motor", fields: relay(5, "forward", 0, false), summary: "relay 5 off"},
	{name: "id 7 is ignored by the co-processor", in: h("04 01 07 00 10"), n: 5, typ: "set_motor", fields: motor(7, "forward", 16), warn: []string{"set_motor: id 7 is neither a motor (0-4) nor a relay (5-6)"}},
	{name: "id 255", in: h("04 01 ff 01 01"), n: 5, typ: "set_motor", fields: motor(255, "reverse", 1), warn: []string{"id 255"}},
	{name: "abort", in: vAbort, n: 2, typ: "abort", fields: []kv{}},
	{name: "abort with arguments", in: h("03 00 aa bb"), n: 4, typ: "abort", fields: []kv{{"data", hx("00aabb")}}},
	{name: "translate x 1", in: vTranslate, n: 4, typ: "translate", fields: []kv{{"axis", s("x")}, {"sign", u(1)}}},
	{name: "translate z ff", in: h("03 02 02 ff"), n: 4, typ: "translate", fields: []kv{{"axis", s("z")}, {"sign", u(255)}}},
	{name: "rotate y 0", in: vRotate, n: 4, typ: "rotate", fields: []kv{{"axis", s("y")}, {"sign", u(0)}}},
	{name: "rotate axis 3", in: h("03 03 03 01"), n: 4, typ: "rotate", fields: []kv{{"axis", s("3")}, {"sign", u(1)}}, warn: []string{"rotate: axis 3 is not 0 (x), 1 (y) or 2 (z)"}},
	{name: "translate axis 200", in: h("03 02 c8 01"), n: 4, typ: "translate", fields: []kv{{"axis", s("200")}, {"sign", u(1)}}, warn: []string{"translate: axis 200"}},
	{name: "stabilize on", in: vStabilize, n: 3, typ: "stabilize", fields: []kv{{"enable", bl(true)}}},
	{name: "stabilize off", in: h("02 04 00"), n: 3, typ: "stabilize", fields: []kv{{"enable", bl(false)}}},
	{name: "stabilize 7 is true", in: h("02 04 07"), n: 3, typ: "stabilize", fields: []kv{{"enable", bl(true)}}},
	{name: "lamp off", in: vLamp, n: 3, typ: "lamp", fields: []kv{{"on", bl(false)}}},
	{name: "lamp on", in: h("02 05 01"), n: 3, typ: "lamp", fields: []kv{{"on", bl(true)}}},
	{name: "followed by more", in: cat(vTranslate, vStop), n: 4, typ: "translate", fields: []kv{{"axis", s("x")}, {"sign", u(1)}}},

	// Unknown types and the empty message.
	{name: "type 6", in: h("03 06 01 02"), n: 4, typ: "unknown", fields: []kv{{"data", hx("060102")}}, warn: []string{"unknown message type 6"}, summary: "type=6 len=3"},
	{name: "type 255 alone", in: h("01 ff"), n: 2, typ: "unknown", fields: []kv{{"data", hx("ff")}}, warn: []string{"unknown message type 255"}, summary: "type=255 len=1"},
	// A first length 0 of a connection: the device's packet buffer is
	// zeroed, so run_command sees type 0 and aborts (no arguments).
	{name: "length 0 first", in: h("00"), n: 1, typ: "abort", fields: []kv{}, warn: []string{"length 0: the device runs the previous message's type (abort) again"}, summary: "len=0"},
	{name: "length 0 first then a message", in: cat(h("00"), vStop), n: 1, typ: "abort", fields: []kv{}, warn: []string{"length 0"}, summary: "len=0"},
	{name: "length 99", in: cat(h("63 09"), make([]byte, 98)), n: 100, typ: "unknown", fields: []kv{{"data", dissect.Bytes(cat(h("09"), make([]byte, 98)))}}, warn: []string{"unknown message type 9"}, summary: "type=9 len=99"},

	// Lengths that do not fit the type: framed by the length byte anyway.
	{name: "set_motor length 3", in: h("03 01 02 00"), n: 4, typ: "set_motor", fields: []kv{{"motor", u(2)}, {"direction", s("forward")}, {"data", hx("010200")}}, warn: []string{"set_motor needs length 4, got 3"}},
	{name: "set_motor length 5", in: h("05 01 02 00 ff 07"), n: 6, typ: "set_motor", fields: []kv{{"motor", u(2)}, {"direction", s("forward")}, {"magnitude", u(255)}, {"data", hx("010200ff07")}}, warn: []string{"set_motor needs length 4, got 5"}},
	{name: "set_motor length 1", in: h("01 01"), n: 2, typ: "set_motor", fields: []kv{{"data", hx("01")}}, warn: []string{"set_motor needs length 4, got 1"}},
	{name: "set_motor length 2 id 9", in: h("02 01 09"), n: 3, typ: "set_motor", fields: []kv{{"motor", u(9)}, {"data", hx("0109")}}, warn: []string{"set_motor needs length 4, got 2", "id 9 is neither"}},
	{name: "relay with wrong length has no relay summary", in: h("05 01 05 01 00 00"), n: 6, typ: "set_motor", fields: []kv{{"motor", u(5)}, {"direction", s("reverse")}, {"magnitude", u(0)}, {"data", hx("0105010000")}}, warn: []string{"needs length 4, got 5"}},
	{name: "translate length 2", in: h("02 02 01"), n: 3, typ: "translate", fields: []kv{{"axis", s("y")}, {"data", hx("0201")}}, warn: []string{"translate needs length 3, got 2"}},
	{name: "rotate length 4", in: h("04 03 00 01 09"), n: 5, typ: "rotate", fields: []kv{{"axis", s("x")}, {"sign", u(1)}, {"data", hx("03000109")}}, warn: []string{"rotate needs length 3, got 4"}},
	{name: "rotate length 1", in: h("01 03"), n: 2, typ: "rotate", fields: []kv{{"data", hx("03")}}, warn: []string{"rotate needs length 3, got 1"}},
	{name: "stabilize length 1", in: h("01 04"), n: 2, typ: "stabilize", fields: []kv{{"data", hx("04")}}, warn: []string{"stabilize needs length 2, got 1"}},
	{name: "lamp length 3", in: h("03 05 01 00"), n: 4, typ: "lamp", fields: []kv{{"on", bl(true)}, {"data", hx("050100")}}, warn: []string{"lamp needs length 2, got 3"}},

	// Framing errors and incomplete messages.
	{name: "length 100", in: h("64 01 00 00 00"), code: "bad_length"},
	{name: "length 255", in: h("ff"), code: "bad_length"},
	{name: "set_motor cut", in: h("04 01 00"), n: 5, code: "more"},
	{name: "length byte alone", in: h("04"), n: 5, code: "more"},
	{name: "length 99 cut", in: h("63 00"), n: 100, code: "more"},
	{name: "empty", in: nil, n: 0, code: "more"},
}

func runParseCase(t *testing.T, ss *session, tc parseCase, decode bool, final bool, proto string) {
	t.Helper()
	n, err := ss.parse(tc.in, final)
	var de *dissect.Error
	switch tc.code {
	case "":
		if err != nil || n != tc.n {
			t.Fatalf("Parse = %d, %v; want %d, nil", n, err, tc.n)
		}
	case "more":
		if !errors.Is(err, dissect.ErrNeedMore) || n != tc.n {
			t.Fatalf("Parse = %d, %v; want %d, ErrNeedMore", n, err, tc.n)
		}
		return
	default:
		if !errors.As(err, &de) || de.Code != tc.code || n != 0 || !errors.Is(err, dissect.ErrMalformed) {
			t.Fatalf("Parse = %d, %v; want 0 and code %q", n, err, tc.code)
		}
		if de.Proto != proto || de.Offset != 0 {
			t.Errorf("error %+v: want proto %q, offset 0", de, proto)
		}
		return
	}
	if ss.Rec.Type != tc.typ {
		t.Errorf("type %q, want %q", ss.Rec.Type, tc.typ)
	}
	checkWarnings(t, ss.Rec.Warnings, tc.warn)
	if !decode {
		if len(ss.Rec.Fields) != 0 || ss.Rec.Summary != "" {
			t.Errorf("decode off: fields %v, summary %q", ss.Rec.Fields, ss.Rec.Summary)
		}
		return
	}
	checkFields(t, ss.Rec.Fields, tc.fields)
	if ss.Rec.Summary != tc.summary {
		t.Errorf("summary %q, want %q", ss.Rec.Summary, tc.summary)
	}
}

func TestParseDevice(t *testing.T) {
	for _, tc := range deviceCases {
		for _, decode := range []bool{true, false} {
			name := tc.name
			if !decode {
				name += "/nodecode"
			}
			t.Run(name, func(t *testing.T) {
				// One parser for every case: it keeps no state.
				runParseCase(t, deviceSession(decode), tc, decode, false, "neptune")
			})
		}
	}
}

// TestParseDeviceTruncated cuts every vector at every byte: Parse must ask
// for 1+L bytes and describe no message.
func TestParseDeviceTruncated(t *testing.T) {
	for _, v := range [][]byte{vStop, vMotor2, vRelay5On, vRelay6Off, vTranslate, vRotate, vStabilize, vLamp, vAbort, h("03 06 01 02")} {
		ss := deviceSession(true)
		for k := 1; k < len(v); k++ {
			n, err := ss.parse(v[:k], false)
			if !errors.Is(err, dissect.ErrNeedMore) || n != len(v) || ss.Rec.Type != "" || len(ss.Rec.Fields) != 0 {
				t.Errorf("%x[:%d]: Parse = %d, %v, type %q", v, k, n, err, ss.Rec.Type)
			}
		}
	}
}

// TestParseDeviceLengths: every length byte from 0 to 99 frames 1+L bytes;
// 100 to 255 are malformed.
func TestParseDeviceLengths(t *testing.T) {
	buf := make([]byte, 256)
	ss := deviceSession(true)
	for l := range 256 {
		buf[0] = byte(l)
		n, err := ss.parse(buf, false)
		if l < 100 {
			if err != nil || n != 1+l {
				t.Errorf("length %d: Parse = %d, %v", l, n, err)
			}
			continue
		}
		var de *dissect.Error
		if !errors.As(err, &de) || de.Code != "bad_length" || n != 0 {
			t.Errorf("length %d: Parse = %d, %v", l, n, err)
		}
	}
}

// TestParseAllocs: well-formed messages decode without allocating.
func TestParseAllocs(t *testing.T) {
	ss := deviceSession(true)
	body := cat(vStop, vMotor2, vRelay5On, vTranslate, vRotate, vStabilize, vLamp, vAbort)
	allocs := testing.AllocsPerRun(100, func() {
		for p := body; len(p) > 0; {
			n, err := ss.parse(p, false)
			if err != nil {
				t.Fatal(err)
			}
			p = p[n:]
		}
	})
	if allocs != 0 {
		t.Errorf("device: %v allocations per run", allocs)
	}
	for _, int16 := range []bool{false, true} {
		ws := wikiSession(int16, true)
		dgs := [][]byte{wSpeed, wPosition, wRelayOn, wSensor}
		if int16 {
			dgs = [][]byte{wSpeed16, wPosition, wRelayOn, wSensor16}
		}
		allocs := testing.AllocsPerRun(100, func() {
			for _, d := range dgs {
				if n, err := ws.parse(d, true); err != nil || n != len(d) || len(ws.Rec.Warnings) != 0 {
					t.Fatalf("Parse(%x) = %d, %v %q", d, n, err, ws.Rec.Warnings)
				}
			}
		})
		if allocs != 0 {
			t.Errorf("wiki int16=%v: %v allocations per run", int16, allocs)
		}
	}
}
