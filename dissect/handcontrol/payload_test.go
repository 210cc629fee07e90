package handcontrol

import (
	"strconv"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/pbwalk"
)

// Protobuf-only vectors of protocols.md §1.9, with the values listed there.

// getGestures118 is GetGestures from ProtobufSerializerTest.kt testProtoArray.
var getGestures118 = h("08 c3 e8 ae fd 05 12 36 0a 03 0a 01 31 12 0c 6e 61 6d 65 5f 67 65 73 74 75 72 65 18 9b 01 20 01 28 06 32 0c 08 01 10 01 18 01 20 01 28 01 30 01 32 0c 08 02 10 02 18 02 20 02 28 02 30 01 12 36 0a 03 0a 01 32 12 0c 6e 61 6d 65 5f 67 65 73 74 75 72 65 18 9b 01 20 01 28 06 32 0c 08 01 10 01 18 01 20 01 28 01 30 01 32 0c 08 02 10 02 18 02 20 02 28 02 30 01")

// telemetryV1 is Telemetry in schema v1, from proto_test.py.
var telemetryV1 = h("08 28 10 01 18 04 20 03 28 04 30 c8 85 af fd 05 38 01 42 26 0a 24 39 37 66 37 32 64 38 34 2d 62 38 35 36 2d 34 39 33 34 2d 38 64 38 30 2d 32 62 33 66 66 35 61 64 34 31 64 35 48 01 50 02 58 03 60 04 68 05 70 06")

func action(p, m, r, l, th, delay int64) dissect.Value {
	return obj(kv{"pointer_finger_position", i64(p)}, kv{"middle_finger_position", i64(m)}, kv{"ring_finger_position", i64(r)},
		kv{"little_finger_position", i64(l)}, kv{"thumb_finger_position", i64(th)}, kv{"delay", i64(delay)})
}

func gesture(id string) dissect.Value {
	return obj(kv{"id", str(id)}, kv{"name", str("name_gesture")}, kv{"last_time_sync", i64(155)}, kv{"iterable", dissect.Bool(true)},
		kv{"repetitions", i64(6)}, kv{"actions", arr(action(1, 1, 1, 1, 1, 1), action(2, 2, 2, 2, 2, 1))})
}

func TestGetGestures118(t *testing.T) {
	if len(getGestures118) != 118 {
		t.Fatalf("vector is %d bytes", len(getGestures118))
	}
	s := newSession(t, Options{}, true)
	f := frame(codeGetGestures, getGestures118)
	if n, err := s.parse(1, t0, f); n != len(f) || err != nil {
		t.Fatalf("Parse = %d, %v", n, err)
	}
	checkWarnings(t, s.Rec.Warnings, []string{noRequest})
	checkFields(t, s.Rec.Fields, []kv{{"code", i64(6)}, {"role", str("response")}, {"crc", i64(int64(f[len(f)-1]))}, {"crc_ok", dissect.Bool(true)}, {"crc_scope", str(scopeHeader)},
		{"payload", obj(kv{"last_time_sync", i64(1605088323)}, kv{"gestures", arr(gesture("1"), gesture("2"))})},
		{"schema", str("v2")}})
}

// v1Telemetry is the §1.9 listing of the v1 vector.
func v1Telemetry(lastSync int64) dissect.Value {
	return obj(kv{"telemetry_frequency", i64(40)}, kv{"emg_status", str("MODULE_STATUS_WORK")}, kv{"display_status", str("MODULE_STATUS_DISABLED")},
		kv{"gyro_status", str("MODULE_STATUS_CONNECTION_ERROR")}, kv{"driver_status", str("DRIVER_STATUS_SLEEP")},
		kv{"last_time_sync", i64(lastSync)}, kv{"emg", i64(1)}, kv{"executable_gesture", str("97f72d84-b856-4934-8d80-2b3ff5ad41d5")},
		kv{"power", i64(1)}, kv{"pointer_finger_position", i64(2)}, kv{"middle_finger_position", i64(3)},
		kv{"ring_finger_position", i64(4)}, kv{"little_finger_position", i64(5)}, kv{"thumb_finger_position", i64(6)})
}

func TestTelemetryV1(t *testing.T) {
	// The same bytes with the timestamp 87 cc ae fd 05 (ProtobufSerializerTest.kt).
	other := cat(telemetryV1[:11], h("87 cc ae fd 05"), telemetryV1[16:])
	for _, c := range []struct {
		payload []byte
		sync    int64
	}{{telemetryV1, 1605092040}, {other, 1605084679}} {
		for _, decode := range []bool{true, false} {
			s := newSession(t, Options{}, decode)
			f := frame(codeTelemetry, c.payload)
			if n, err := s.parse(1, t0, f); n != len(f) || err != nil {
				t.Fatalf("Parse = %d, %v", n, err)
			}
			if s.Rec.Type != TypeTelemetry {
				t.Errorf("type %q", s.Rec.Type)
			}
			checkWarnings(t, s.Rec.Warnings, nil) // v1 decodes cleanly: no v2 warning is left
			if decode {
				checkFields(t, s.Rec.Fields, []kv{{"code", i64(3)}, {"role", str("telemetry")}, {"crc", i64(int64(f[len(f)-1]))}, {"crc_ok", dissect.Bool(true)}, {"crc_scope", str(scopeHeader)},
					{"payload", v1Telemetry(c.sync)}, {"schema", str("v1")}})
			}
		}
	}
}

// TestTelemetryV1WithV2 shows why v1 is chosen: under v2 the vector is
// nonsense (emg_status = 40, field 14 unknown, wrong wire types).
func TestTelemetryV1WithV2(t *testing.T) {
	v2, _, err := loadBuiltin()
	if err != nil {
		t.Fatal(err)
	}
	var rec dissect.Record
	var d pbwalk.Decoder
	_, _, issues, err := d.Decode(&rec, v2[msgTelemetry], telemetryV1, true)
	if err != nil {
		t.Fatalf("v2 walk failed: %s", err)
	}
	if issues < 3 {
		t.Fatalf("v2 issues %d, warnings %q", issues, rec.Warnings)
	}
	want := []string{
		"telemetry.Telemetry.emg_status: 40 is not a value of enums.ModuleStatusType",
		"telemetry.Telemetry.executable_gesture (field 7): wire type varint does not fit message",
		"telemetry.Telemetry.power (field 8): wire type length-delimited does not fit int32",
		"telemetry.Telemetry has no field 14 (varint)",
	}
	checkWarnings(t, rec.Warnings, want)
}

// A v2 Telemetry (encoded with protowire from the §1.6 field numbers)
// stays v2.
func TestTelemetryV2(t *testing.T) {
	payload := cat(pvar(1, 1), pvar(2, 4), pvar(3, 0), pvar(4, 5), pvar(5, 1620000000), pvar(6, 512),
		pbytes(7, pstr(1, "97f72d84-b856-4934-8d80-2b3ff5ad41d5")), pvar(8, 87),
		pvar(9, 10), pvar(10, 20), pvar(11, 30), pvar(12, 40), pvar(13, 50))
	s := newSession(t, Options{}, true)
	f := frame(codeTelemetry, payload)
	if n, err := s.parse(1, t0, f); n != len(f) || err != nil {
		t.Fatalf("Parse = %d, %v", n, err)
	}
	checkWarnings(t, s.Rec.Warnings, nil)
	checkFields(t, s.Rec.Fields, []kv{{"code", i64(3)}, {"role", str("telemetry")}, {"crc", i64(int64(f[len(f)-1]))}, {"crc_ok", dissect.Bool(true)}, {"crc_scope", str(scopeHeader)},
		{"payload", obj(kv{"emg_status", str("MODULE_STATUS_WORK")}, kv{"display_status", str("MODULE_STATUS_DISABLED")},
			kv{"gyro_status", str("MODULE_STATUS_INITIALIZATION")}, kv{"driver_status", str("DRIVER_STATUS_SETTING_POSITION")},
			kv{"last_time_sync", i64(1620000000)}, kv{"emg", i64(512)}, kv{"executable_gesture", str("97f72d84-b856-4934-8d80-2b3ff5ad41d5")},
			kv{"power", i64(87)}, kv{"pointer_finger_position", i64(10)}, kv{"middle_finger_position", i64(20)},
			kv{"ring_finger_position", i64(30)}, kv{"little_finger_position", i64(40)}, kv{"thumb_finger_position", i64(50)})},
		{"schema", str("v2")}})
	if s.Rec.Summary != "← Telemetry emg_status=MODULE_STATUS_WORK display_status=MODULE_STATUS_DISABLED gyro_status=MODULE_STATUS_INITIALIZATION driver_status=DRIVER_STATUS_SETTING_POSITION last_time_sync=1620000000 emg=512 …" {
		t.Errorf("summary %q", s.Rec.Summary)
	}
}

// Settings in v1 (type_work first) are recognised; in v2 field 5 of
// GetSettings does not exist.
func TestSettingsV1(t *testing.T) {
	s := newSession(t, Options{}, true)
	payload := cat(pvar(1, 2), pvar(2, 1), pvar(5, 1)) // MODE_AUTO, enable_emg, enable_driver
	f := frame(codeGetSettings, payload)
	if n, err := s.parse(1, t0, f); n != len(f) || err != nil {
		t.Fatalf("Parse = %d, %v", n, err)
	}
	checkWarnings(t, s.Rec.Warnings, []string{noRequest})
	checkFields(t, s.Rec.Fields[5:], []kv{{"payload", obj(kv{"type_work", str("MODE_AUTO")}, kv{"enable_emg", dissect.Bool(true)}, kv{"enable_driver", dissect.Bool(true)})},
		{"schema", str("v1")}})

	// When v1 does not fit either, v2 is kept with its warnings.
	payload = cat(pvar(1, 1), pvar(9, 1))
	f = frame(codeGetSettings, payload)
	if n, err := s.parse(1, t0, f); n != len(f) || err != nil {
		t.Fatalf("Parse = %d, %v", n, err)
	}
	checkWarnings(t, s.Rec.Warnings, []string{noRequest, "settings.GetSettings has no field 9 (varint); shown raw"})
	checkFields(t, s.Rec.Fields[5:], []kv{{"payload", obj(kv{"enable_emg", dissect.Bool(true)})},
		{"payload_raw", arr(rawItem("", 9, "", "varint", "uint", dissect.Uint(1)))}, {"schema", str("v2")}})
}

func TestRawMode(t *testing.T) {
	s := newSession(t, Options{Raw: true}, true)
	f := frame(codeGetGestures, getGestures118)
	if n, err := s.parse(1, t0, f); n != len(f) || err != nil {
		t.Fatalf("Parse = %d, %v", n, err)
	}
	// Every field is an item of payload_raw, in wire order; parent says
	// where: the §1.9 vector holds field 2 twice (gestures), each with
	// field 6 twice (actions {1,1,1,1,1, delay 1} and {2,2,2,2,2, delay 1}).
	u := dissect.Uint
	varint := func(parent string, num int, v uint64) dissect.Value {
		return rawItem(parent, num, "", "varint", "uint", u(v))
	}
	text := func(parent string, num int, s string) dissect.Value {
		return rawItem(parent, num, "", "length-delimited", "text", str(s))
	}
	items := []dissect.Value{varint("", 1, 1605088323)}
	for g, id := range []string{"1", "2"} {
		gp := "2[" + strconv.Itoa(g) + "]"
		items = append(items, text(gp+".1", 1, id), text(gp, 2, "name_gesture"), varint(gp, 3, 155), varint(gp, 4, 1), varint(gp, 5, 6))
		for a, p := range []uint64{1, 2} {
			ap := gp + ".6[" + strconv.Itoa(a) + "]"
			items = append(items, varint(ap, 1, p), varint(ap, 2, p), varint(ap, 3, p), varint(ap, 4, p), varint(ap, 5, p), varint(ap, 6, 1))
		}
	}
	checkWarnings(t, s.Rec.Warnings, []string{noRequest})
	checkFields(t, s.Rec.Fields[5:], []kv{{"payload", obj()}, {"payload_raw", arr(items...)}, {"schema", str("raw")}})

	// Fixed-width values, non-UTF-8 bytes, an empty string, a group, and a
	// group whose start tag is not minimally encoded (ab 00 = field 5, group).
	payload := cat(h("0d 01 00 00 00"), h("11 02 00 00 00 00 00 00 80"), pbytes(3, []byte{0xff, 0xfe}), pbytes(4, nil), h("2b 08 07 2c"), h("ab 00 08 09 2c"))
	f = frame(codeSetPositions, payload)
	if n, err := s.parse(0, t0, f); n != len(f) || err != nil {
		t.Fatalf("Parse = %d, %v", n, err)
	}
	checkFields(t, s.Rec.Fields[5:], []kv{{"payload", obj()}, {"payload_raw", arr(rawItem("", 1, "", "fixed32", "uint", u(1)),
		rawItem("", 2, "", "fixed64", "uint", u(0x8000000000000002)), rawItem("", 3, "", "length-delimited", "bytes", dissect.Bytes([]byte{0xff, 0xfe})),
		text("", 4, ""), varint("5[0]", 1, 7), varint("5[1]", 1, 9))}, {"schema", str("raw")}})
}

// Unknown codes are decoded raw, also in schema mode.
func TestUnknownCode(t *testing.T) {
	s := newSession(t, Options{}, true)
	f := frame(0x20, cat(pvar(1, 5), pstr(2, "hello")))
	if n, err := s.parse(1, t0, f); n != len(f) || err != nil {
		t.Fatalf("Parse = %d, %v", n, err)
	}
	if s.Rec.Type != TypeUnknown {
		t.Errorf("type %q", s.Rec.Type)
	}
	checkWarnings(t, s.Rec.Warnings, []string{"unknown code 32"})
	checkFields(t, s.Rec.Fields, []kv{{"code", i64(32)}, {"role", str("response")}, {"crc", i64(int64(f[len(f)-1]))}, {"crc_ok", dissect.Bool(true)}, {"crc_scope", str(scopeHeader)},
		{"payload", obj()}, {"payload_raw", arr(rawItem("", 1, "", "varint", "uint", dissect.Uint(5)), rawItem("", 2, "", "length-delimited", "text", str("hello")))},
		{"schema", str("raw")}})

	// A payload on a code that carries none is decoded raw too.
	f = frame(codeGetSettings, h("08 01"))
	if n, err := s.parse(0, t0, f); n != len(f) || err != nil {
		t.Fatalf("Parse = %d, %v", n, err)
	}
	checkWarnings(t, s.Rec.Warnings, []string{"code 4 (GetSettings) from the host carries no payload, yet has 2 bytes; decoded raw"})
	checkFields(t, s.Rec.Fields[5:], []kv{{"payload", obj()}, {"payload_raw", arr(rawItem("", 1, "", "varint", "uint", dissect.Uint(1)))}, {"schema", str("raw")}})
}

// Schema decoding details: repeated fields interleaved with others,
// packed values, a repeated singular field, negative int32.
func TestWalkerDetails(t *testing.T) {
	s := newSession(t, Options{}, true)
	// GetMioPatterns reply with patterns interleaved with an unknown field.
	pat := func(p uint64, id string) []byte { return pbytes(1, cat(pvar(1, p), pbytes(2, pstr(1, id)))) }
	payload := cat(pat(7, "a"), pvar(3, 9), pat(8, "b"))
	if n, err := s.parse(0, t0, frame(codeGetMioPatterns, nil)); err != nil {
		t.Fatal(n, err)
	}
	f := frame(codeGetMioPatterns, payload)
	if n, err := s.parse(1, t0, f); n != len(f) || err != nil {
		t.Fatalf("Parse = %d, %v", n, err)
	}
	checkWarnings(t, s.Rec.Warnings, []string{"patterns.GetMioPatterns has no field 3 (varint)"})
	checkFields(t, s.Rec.Fields[5:8], []kv{{"payload", obj(
		kv{"patterns", arr(obj(kv{"pattern", i64(7)}, kv{"gesture_id", str("a")}), obj(kv{"pattern", i64(8)}, kv{"gesture_id", str("b")}))})},
		{"payload_raw", arr(rawItem("", 3, "", "varint", "uint", dissect.Uint(9)))}, {"schema", str("v2")}})

	s = newSession(t, Options{}, true)
	// SetPositions: a negative int32 (10-byte varint) and a field sent twice.
	payload = cat(pvar(1, uint64(0xffffffffffffffff)), pvar(2, 5), pvar(2, 6))
	f = frame(codeSetPositions, payload)
	if n, err := s.parse(0, t0, f); n != len(f) || err != nil {
		t.Fatalf("Parse = %d, %v", n, err)
	}
	checkWarnings(t, s.Rec.Warnings, []string{"telemetry.SetPositions.middle_finger_position appears 2 times; the last is shown"})
	checkFields(t, s.Rec.Fields[5:7], []kv{{"payload", obj(kv{"pointer_finger_position", i64(-1)}, kv{"middle_finger_position", i64(6)})}, {"schema", str("v2")}})

	s = newSession(t, Options{}, true)
	// A UUID message with more than its string is shown raw: its fields,
	// with parent "id".
	payload = pbytes(1, cat(pstr(1, "x"), pvar(2, 3)))
	f = frame(codePerformById, payload)
	if n, err := s.parse(0, t0, f); n != len(f) || err != nil {
		t.Fatalf("Parse = %d, %v", n, err)
	}
	checkWarnings(t, s.Rec.Warnings, []string{"telemetry.PerformGestureById.id: a uuid.UUID holding more than its string (field 1); shown raw"})
	checkFields(t, s.Rec.Fields[5:8], []kv{{"payload", obj()}, {"payload_raw", arr(rawItem("id", 1, "", "length-delimited", "text", str("x")),
		rawItem("id", 2, "", "varint", "uint", dissect.Uint(3)))}, {"schema", str("v2")}})
	if s.Rec.Summary != "→ PerformGestureId id.1=\"x\" id.2=3" {
		t.Errorf("summary %q", s.Rec.Summary)
	}
}
