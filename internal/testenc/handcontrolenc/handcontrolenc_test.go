package handcontrolenc

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/dissect-tools/dissect/internal/testenc/truth"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCRC8 checks the CRC-8/SMBUS check value and the raw vector that all
// three implementations' unit tests use (protocols.md §1.4, §1.9).
func TestCRC8(t *testing.T) {
	if got := CRC8([]byte("123456789")); got != 0xf4 {
		t.Errorf("check(123456789) = %#02x, want 0xf4", got)
	}
	if got := CRC8(unhex(t, "04 03 fb ad ff bd")); got != 0xbf {
		t.Errorf("CRC8(04 03 fb ad ff bd) = %#02x, want 0xbf", got)
	}
	if got := CRC8(nil); got != 0 {
		t.Errorf("CRC8() = %#02x, want the initial value 0", got)
	}
}

// TestFrameVectors builds every frame of protocols.md §1.9 (from the
// repositories' tests, and the ones synthesized from the spec) with the
// encoder's builders and compares the bytes.
func TestFrameVectors(t *testing.T) {
	for _, v := range []struct {
		name  string
		frame []byte
		want  string
		ok    bool
	}{
		{"PerformGestureId ff*5, wire crc b6", MustFrame(CodePerformGestureID, unhex(t, "ffffffffff"), WithCRC(0xb6)),
			"fd ba dc 01 50 b4 11 ff 09 05 00 ff ff ff ff ff b6", false},
		{"PerformGestureId ff*5, right crc", MustFrame(CodePerformGestureID, unhex(t, "ffffffffff")),
			"fd ba dc 01 50 b4 11 ff 09 05 00 ff ff ff ff ff c6", true},
		{"SetSettings ab cd, wire crc 8a", MustFrame(CodeSetSettings, unhex(t, "abcd"), WithCRC(0x8a)),
			"fd ba dc 01 50 b4 11 ff 05 02 00 ab cd 8a", false},
		{"SetSettings ab cd, right crc", MustFrame(CodeSetSettings, unhex(t, "abcd")),
			"fd ba dc 01 50 b4 11 ff 05 02 00 ab cd 23", true},
		{"GetGestures ba 05", MustFrame(CodeGetGestures, unhex(t, "ba05")), "fd ba dc 01 50 b4 11 ff 06 02 00 ba 05 b1", true},
		{"GetSettings empty", MustFrame(CodeGetSettings, nil), "fd ba dc 01 50 b4 11 ff 04 00 00 ab", true},
		{"type 5 empty", MustFrame(CodeSetSettings, nil), "fd ba dc 01 50 b4 11 ff 05 00 00 c0", true},
		{"type 5, 32", MustFrame(CodeSetSettings, []byte{0x32}), "fd ba dc 01 50 b4 11 ff 05 01 00 32 bb", true},
		{"type 6, fb ac", MustFrame(CodeGetGestures, unhex(t, "fbac")), "fd ba dc 01 50 b4 11 ff 06 02 00 fb ac a9", true},
		{"ACK", MustFrame(CodeACK, nil), "fd ba dc 01 50 b4 11 ff 01 00 00 6b", true},
		{"StopTelemetry", MustFrame(CodeStopTelemetry, nil), "fd ba dc 01 50 b4 11 ff 0f 00 00 47", true},
		{"GetTelemetry request", MustFrame(CodeGetTelemetry, nil), "fd ba dc 01 50 b4 11 ff 0d 00 00 91", true},
		{"StartTelemetry{100}", MustFrame(CodeStartTelemetry, StartTelemetry(100).Bytes()),
			"fd ba dc 01 50 b4 11 ff 0e 02 00 08 64 ed", true},
		{"SetPositions{10,20,30,40,50}", MustFrame(CodeSetPositions, SetPositions(Fingers{10, 20, 30, 40, 50}).Bytes()),
			"fd ba dc 01 50 b4 11 ff 0b 0a 00 08 0a 10 14 18 1e 20 28 28 32 45", true},
		{"PerformGestureId{UUID{1}}", MustFrame(CodePerformGestureID, PerformGestureByID("1").Bytes()),
			"fd ba dc 01 50 b4 11 ff 09 05 00 0a 03 0a 01 31 c3", true},
		{"SetSettings{enable_emg}", MustFrame(CodeSetSettings, SetSettings(Settings{EnableEMG: true}, false).Bytes()),
			"fd ba dc 01 50 b4 11 ff 05 02 00 08 01 6e", true},
		{"ERR Telemetry already started", MustFrame(CodeERR, Error("Telemetry already started").Bytes()),
			"fd ba dc 01 50 b4 11 ff 02 1b 00 0a 19 54 65 6c 65 6d 65 74 72 79 20 61 6c 72 65 61 64 79 20 73 74 61 72 74 65 64 dd", true},
		{"CorruptCRC of ACK", MustFrame(CodeACK, nil, CorruptCRC()), "fd ba dc 01 50 b4 11 ff 01 00 00 94", false},
	} {
		if got := hex.EncodeToString(v.frame); got != strings.ReplaceAll(v.want, " ", "") {
			t.Errorf("%s: %s, want %s", v.name, got, v.want)
		}
		if CRCOK(v.frame) != v.ok {
			t.Errorf("%s: CRCOK %v", v.name, !v.ok)
		}
	}
	if !bytes.Equal(BadCRCSetSettings, MustFrame(CodeSetSettings, unhex(t, "abcd"), WithCRC(0x8a))) {
		t.Error("BadCRCSetSettings is not the §1.9 frame")
	}
	// The size-315 header of the C and Python tests: 0x013b little-endian.
	big := MustFrame(CodeSetSettings, make([]byte, 315))
	if got := hex.EncodeToString(big[:HeaderLen]); got != "fdbadc0150b411ff053b01" || len(big) != 12+315 {
		t.Errorf("size-315 header %s, frame %d bytes", got, len(big))
	}
	if _, err := Frame(CodeACK, make([]byte, MaxPayload+1)); err == nil {
		t.Error("a 65536-byte payload was accepted")
	}
	if b, err := Frame(CodeACK, make([]byte, MaxPayload)); err != nil || binary.LittleEndian.Uint16(b[9:]) != 0xffff {
		t.Errorf("a 65535-byte payload: %v", err)
	}
}

// TestTypeNames checks the contract's names of the codes.
func TestTypeNames(t *testing.T) {
	want := "Empty ACK ERR Telemetry GetSettings SetSettings GetGestures SaveGesture DeleteGesture PerformGestureId " +
		"PerformGestureRaw SetPositions UpdateLastTimeSync GetTelemetry StartTelemetry StopTelemetry GetMioPatterns SetMioPatterns unknown unknown"
	var got []string
	for c := range 20 {
		got = append(got, TypeName(byte(c)))
	}
	if strings.Join(got, " ") != want {
		t.Errorf("names %v", got)
	}
	if TypeName(255) != TypeUnknown {
		t.Error("code 255 has a name")
	}
}

// TestVarint checks the writer against the protobuf encoding guide's
// examples and the two's complement rule for negative int32.
func TestVarint(t *testing.T) {
	for _, v := range []struct {
		v    uint64
		want string
	}{
		{0, "00"}, {1, "01"}, {127, "7f"}, {128, "8001"}, {150, "9601"}, {300, "ac02"},
		{1605088323, "c3e8aefd05"}, {1<<64 - 1, "ffffffffffffffffff01"},
	} {
		if got := hex.EncodeToString(AppendVarint(nil, v.v)); got != v.want {
			t.Errorf("varint %d = %s, want %s", v.v, got, v.want)
		}
	}
	m := NewMsg("t").Int32(1, "a", -1).Int64(2, "b", -2).Int32(3, "c", 0).Bool(4, "d", false).Str(5, "e", "")
	if got := hex.EncodeToString(m.Bytes()); got != "08ffffffffffffffffff01"+"10feffffffffffffffff01" {
		t.Errorf("negative int32/int64: %s", got)
	}
	if got := m.Payload().JSON(); got != `{"a":-1,"b":-2}` {
		t.Errorf("payload %s", got)
	}
	if got := hex.EncodeToString(AppendTag(nil, 16, WireBytes)); got != "8201" {
		t.Errorf("tag of field 16, wire type 2: %s", got)
	}
}

// gesturesVector is the 118-byte GetGestures of protocols.md §1.9
// (hand-control-mqtt's ProtobufSerializerTest).
const gesturesVector = "08 c3 e8 ae fd 05 12 36 0a 03 0a 01 31 12 0c 6e 61 6d 65 5f 67 65 73 74 75 72 65 18 9b 01 20 01 28 06 32 0c 08 01 10 01 18 01 20 01 28 01 30 01 32 0c 08 02 10 02 18 02 20 02 28 02 30 01 12 36 0a 03 0a 01 32 12 0c 6e 61 6d 65 5f 67 65 73 74 75 72 65 18 9b 01 20 01 28 06 32 0c 08 01 10 01 18 01 20 01 28 01 30 01 32 0c 08 02 10 02 18 02 20 02 28 02 30 01"

// TestProtobufVectors builds the protobuf-only vectors of protocols.md
// §1.9 from their decoded values, and checks the payload objects (written
// by hand from the same decoding).
func TestProtobufVectors(t *testing.T) {
	g := func(id string) Gesture {
		return Gesture{ID: id, Name: "name_gesture", LastTimeSync: 155, Iterable: true, Repetitions: 6, Actions: []GestureAction{
			{Fingers: Fingers{1, 1, 1, 1, 1}, Delay: 1}, {Fingers: Fingers{2, 2, 2, 2, 2}, Delay: 1},
		}}
	}
	gg := GetGestures(1605088323, g("1"), g("2"))
	if got, want := hex.EncodeToString(gg.Bytes()), strings.ReplaceAll(gesturesVector, " ", ""); got != want || len(gg.Bytes()) != 118 {
		t.Errorf("GetGestures\n got %s\nwant %s", got, want)
	}
	gj := func(id string) string {
		return `{"id":"` + id + `","name":"name_gesture","last_time_sync":155,"iterable":true,"repetitions":6,"actions":[` +
			`{"pointer_finger_position":1,"middle_finger_position":1,"ring_finger_position":1,"little_finger_position":1,"thumb_finger_position":1,"delay":1},` +
			`{"pointer_finger_position":2,"middle_finger_position":2,"ring_finger_position":2,"little_finger_position":2,"thumb_finger_position":2,"delay":1}]}`
	}
	if got, want := gg.Payload().JSON(), `{"last_time_sync":1605088323,"gestures":[`+gj("1")+","+gj("2")+"]}"; got != want {
		t.Errorf("GetGestures payload\n got %s\nwant %s", got, want)
	}

	// The v1 telemetry of arm_prosthesis_raspberry's proto_test.py.
	tv := Telemetry{EMGStatus: ModuleStatusWork, DisplayStatus: ModuleStatusDisabled, GyroStatus: ModuleStatusConnectionError,
		DriverStatus: DriverStatusSleep, LastTimeSync: 1605092040, EMG: 1, ExecutableGesture: "97f72d84-b856-4934-8d80-2b3ff5ad41d5",
		Power: 1, Fingers: Fingers{2, 3, 4, 5, 6}}
	const v1 = "08 28 10 01 18 04 20 03 28 04 30 c8 85 af fd 05 38 01 42 26 0a 24 39 37 66 37 32 64 38 34 2d 62 38 35 36 2d 34 39 33 34 2d 38 64 38 30 2d 32 62 33 66 66 35 61 64 34 31 64 35 48 01 50 02 58 03 60 04 68 05 70 06"
	if got := hex.EncodeToString(tv.MsgV1(40).Bytes()); got != strings.ReplaceAll(v1, " ", "") {
		t.Errorf("v1 telemetry\n got %s\nwant %s", got, v1)
	}
	tv.LastTimeSync = 1605084679 // ProtobufSerializerTest.kt testProtoDeserializer: 87 cc ae fd 05
	if got := hex.EncodeToString(tv.MsgV1(40).Bytes()); !strings.Contains(got, "3087ccaefd05") {
		t.Errorf("v1 telemetry with 1605084679: %s", got)
	}
	// The same values with the v2 numbers: every field one lower, no
	// frequency.
	want2 := "0801" + "1004" + "1803" + "2004" + "2887ccaefd05" + "3001" + "3a260a24" + hex.EncodeToString([]byte(tv.ExecutableGesture)) +
		"4001" + "4802" + "5003" + "5804" + "6005" + "6806"
	if got := hex.EncodeToString(tv.Msg().Bytes()); got != want2 {
		t.Errorf("v2 telemetry\n got %s\nwant %s", got, want2)
	}
	wantJSON := `{"emg_status":"MODULE_STATUS_WORK","display_status":"MODULE_STATUS_DISABLED","gyro_status":"MODULE_STATUS_CONNECTION_ERROR",` +
		`"driver_status":"DRIVER_STATUS_SLEEP","last_time_sync":1605084679,"emg":1,"executable_gesture":"97f72d84-b856-4934-8d80-2b3ff5ad41d5",` +
		`"power":1,"pointer_finger_position":2,"middle_finger_position":3,"ring_finger_position":4,"little_finger_position":5,"thumb_finger_position":6}`
	if got := tv.Msg().Payload().JSON(); got != wantJSON {
		t.Errorf("v2 telemetry payload\n got %s\nwant %s", got, wantJSON)
	}
	if got := tv.MsgV1(40).Payload().JSON(); got != `{"telemetry_frequency":40,`+wantJSON[1:] {
		t.Errorf("v1 telemetry payload %s", got)
	}
}

// TestMessages checks the other builders' bytes, worked out by hand from
// the field tables of protocols.md §1.6.
func TestMessages(t *testing.T) {
	for _, v := range []struct {
		m        *Msg
		name     string
		wire     string
		wantJSON string
	}{
		{GetSettings(Settings{EnableEMG: true, EnableDisplay: true, EnableDriver: true}), NameGetSettings, "0801 1001 2001",
			`{"enable_emg":true,"enable_display":true,"enable_driver":true}`},
		{SetSettings(Settings{EnableGyro: true}, true), NameSetSettings, "1801 2801", `{"enable_gyro":true,"power_off":true}`},
		{GetSettings(Settings{}), NameGetSettings, "", `{}`},
		{StartTelemetry(172800000), NameStartTelemetry, "08 80 f0 b2 52", `{"interval_ms":172800000}`},
		{GetMioPatterns(MioPattern{1, "a"}, MioPattern{300, "b"}), NameGetMioPatterns, "0a 07 0801 1203 0a0161 0a 08 08ac02 1203 0a0162",
			`{"patterns":[{"pattern":1,"gesture_id":"a"},{"pattern":300,"gesture_id":"b"}]}`},
		{SetMioPatterns(MioPattern{0, "c"}), NameSetMioPatterns, "0a 05 1203 0a0163", `{"patterns":[{"gesture_id":"c"}]}`},
		{GetMioPatterns(), NameGetMioPatterns, "", `{}`},
		{GetTelemetry(Telemetry{Power: 5}), NameGetTelemetry, "0a 02 4005", `{"telemetry":{"power":5}}`},
		{GetTelemetry(Telemetry{}), NameGetTelemetry, "0a 00", `{"telemetry":{}}`},
		{DeleteGesture(7, "x"), NameDeleteGesture, "0807 1203 0a0178", `{"time_sync":7,"id":"x"}`},
		{SaveGesture(7, Gesture{Name: "n", Actions: []GestureAction{{Delay: 9}}}), NameSaveGesture, "0807 12 07 1201 6e 3202 3009",
			`{"time_sync":7,"gesture":{"name":"n","actions":[{"delay":9}]}}`},
		{PerformGestureRaw(Gesture{Repetitions: 2}), NamePerformGestureRaw, "0a02 2802", `{"gesture":{"repetitions":2}}`},
		{UpdateLastTimeSync(SyncTime), NameUpdateLastTimeSync, "08 c0 fa d9 84 06", `{"last_time_sync":1620475200}`},
		{Error(""), NameError, "", `{}`},
		{UUID("1"), NameUUID, "0a0131", `{"value":"1"}`},
	} {
		if got, want := hex.EncodeToString(v.m.Bytes()), strings.ReplaceAll(v.wire, " ", ""); got != want {
			t.Errorf("%s: wire %s, want %s", v.name, got, want)
		}
		if v.m.Name() != v.name || v.m.Payload().JSON() != v.wantJSON {
			t.Errorf("%s: %s, want %s", v.name, v.m.Describe(), v.wantJSON)
		}
	}
	if ModuleStatus(5).String() != "" || DriverStatus(6).String() != "" || DriverStatusSettingPosition.String() != "DRIVER_STATUS_SETTING_POSITION" ||
		ModuleStatusInitialization.String() != "MODULE_STATUS_INITIALIZATION" || DriverStatusConnectionError.String() != "DRIVER_STATUS_CONNECTION_ERROR" {
		t.Error("enum names")
	}
}

// walk parses b with protowire (an implementation independent of this
// package's writer), descending into the length-delimited fields whose
// path (field numbers joined by dots, from the top) is listed as nested,
// and returns the fields as "num:value" strings.
func walk(t *testing.T, b []byte, path string, nested map[string]bool) []string {
	t.Helper()
	var out []string
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatalf("bad tag: %v", protowire.ParseError(n))
		}
		b = b[n:]
		switch typ {
		case protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				t.Fatal("bad varint")
			}
			out = append(out, itoa(int64(num))+":"+strconv.FormatUint(v, 10))
			b = b[n:]
		case protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				t.Fatal("bad bytes")
			}
			if p := path + itoa(int64(num)); nested[p] {
				out = append(out, itoa(int64(num))+":{"+strings.Join(walk(t, v, p+".", nested), " ")+"}")
			} else {
				out = append(out, itoa(int64(num))+":"+string(v))
			}
			b = b[n:]
		default:
			t.Fatalf("wire type %d", typ)
		}
	}
	return out
}

func itoa(v int64) string { j, _ := json.Marshal(v); return string(j) }

// TestWireParsesWithProtowire reads messages back with protowire.
func TestWireParsesWithProtowire(t *testing.T) {
	tm := Telemetry{EMGStatus: ModuleStatusError, DriverStatus: DriverStatusDisabled, LastTimeSync: -5, EMG: -300,
		ExecutableGesture: GesturePinch, Power: 100, Fingers: Fingers{Thumb: 1}}
	got := strings.Join(walk(t, tm.Msg().Bytes(), "", map[string]bool{"7": true}), " ")
	// int32 -300 and int64 -5 are 64-bit two's complement varints.
	want := "1:2 4:3 5:18446744073709551611 6:18446744073709551316 7:{1:" + GesturePinch + "} 8:100 13:1"
	if got != want {
		t.Errorf("telemetry\n got %s\nwant %s", got, want)
	}
	got = strings.Join(walk(t, unhex(t, gesturesVector), "", map[string]bool{"2": true, "2.1": true, "2.6": true}), " ")
	if !strings.HasPrefix(got, "1:1605088323 2:{1:{1:1} 2:name_gesture 3:155 4:1 5:6 6:{1:1 2:1 3:1 4:1 5:1 6:1}") {
		t.Errorf("GetGestures vector: %s", got)
	}
	// The §1.9 payload ab cd is not protobuf: both bytes have the
	// continuation bit, so the first tag's varint is cut short.
	if _, _, n := protowire.ConsumeField(unhex(t, "abcd")); n >= 0 {
		t.Error("ab cd parses as a field")
	}
}

// TestAnswers checks the request/reply rules of protocols.md §1.5.
func TestAnswers(t *testing.T) {
	for _, v := range []struct {
		reply, req byte
		ok         bool
	}{
		{CodeACK, CodeSetPositions, true}, {CodeACK, CodeGetSettings, false}, {CodeACK, CodeStopTelemetry, true},
		{CodeERR, CodeGetSettings, true}, {CodeERR, 18, false}, {CodeERR, CodeTelemetry, false},
		{CodeGetSettings, CodeGetSettings, true}, {CodeGetSettings, CodeGetGestures, false},
		{CodeGetTelemetry, CodeGetMioPatterns, true}, {CodeGetTelemetry, CodeGetTelemetry, true},
		{CodeGetMioPatterns, CodeGetMioPatterns, false}, {CodeTelemetry, CodeGetTelemetry, false},
	} {
		if Answers(v.reply, v.req) != v.ok {
			t.Errorf("Answers(%s, %s) = %v", TypeName(v.reply), TypeName(v.req), !v.ok)
		}
	}
	if ReplyMessage(CodeGetTelemetry, CodeGetMioPatterns) != NameGetMioPatterns || ReplyMessage(CodeGetTelemetry, CodeGetTelemetry) != NameGetTelemetry ||
		ReplyMessage(CodeACK, CodeSetPositions) != "" || ReplyMessage(CodeERR, CodeGetSettings) != NameError {
		t.Error("ReplyMessage")
	}
}

// TestFlowErrors checks that the flow refuses conversations the protocol
// does not have.
func TestFlowErrors(t *testing.T) {
	for name, build := range map[string]func(f *Flow){
		"two requests in flight": func(f *Flow) {
			f.Request(ms(1), CodeGetSettings, nil)
			f.Request(ms(2), CodeGetGestures, nil)
		},
		"reply with no request":  func(f *Flow) { f.Reply(ms(1), CodeACK, nil) },
		"ACK to GetSettings":     func(f *Flow) { f.Request(ms(1), CodeGetSettings, nil); f.Reply(ms(2), CodeACK, nil) },
		"wrong request message":  func(f *Flow) { f.Request(ms(1), CodeSetPositions, StartTelemetry(5)) },
		"payload on GetSettings": func(f *Flow) { f.Request(ms(1), CodeGetSettings, GetSettings(Settings{})) },
		"wrong reply message": func(f *Flow) {
			f.Request(ms(1), CodeGetMioPatterns, nil)
			f.Reply(ms(2), CodeGetTelemetry, GetTelemetry(Telemetry{}))
		},
		"not a request":              func(f *Flow) { f.Request(ms(1), CodeACK, nil) },
		"unanswered":                 func(f *Flow) { f.Request(ms(1), CodeStopTelemetry, nil) },
		"noise with the SFD":         func(f *Flow) { f.Noise(Host, append([]byte{1}, SFD[:]...)) },
		"noise at the end":           func(f *Flow) { f.Noise(Device, []byte{1}) },
		"time going back":            func(f *Flow) { f.Telemetry(ms(5), Telemetry{}); f.Telemetry(ms(5), Telemetry{}) },
		"raw request of GetSettings": func(f *Flow) { f.RequestRaw(ms(1), CodeGetSettings, []byte{1}) },
	} {
		f := NewFlow()
		build(f)
		if _, err := f.Finish(); err == nil {
			t.Errorf("%s: accepted", name)
		} else if !strings.HasPrefix(err.Error(), "handcontrolenc: ") {
			t.Errorf("%s: error %q lacks the package prefix", name, err)
		}
	}
}

// TestFlowRecords checks the records of a small flow, written by hand.
func TestFlowRecords(t *testing.T) {
	f := NewFlow()
	f.Request(ms(10), CodeSetPositions, SetPositions(Fingers{10, 20, 30, 40, 50}))
	f.Noise(Device, []byte{1, 2})
	f.Noise(Device, []byte{3})
	f.QueueTelemetry(Telemetry{Power: 9})
	f.Reply(ms(13), CodeACK, nil)
	f.Request(ms(20), CodeGetMioPatterns, nil)
	f.Reply(ms(24), CodeGetTelemetry, GetMioPatterns(MioPattern{1, "u"}))
	f.RequestRaw(ms(30), CodeSetSettings, []byte{0xab, 0xcd}, WithCRC(0x8a))
	f.Reply(ms(40), CodeERR, Error("e"), CorruptCRC())
	s, err := f.Finish()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for d := range 2 {
		for _, m := range s.Truth[d] {
			j, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(j))
		}
	}
	want := []string{
		`{"type":"SetPositions","offset":0,"length":22,"fields":{"code":11,"role":"request","crc":69,"crc_ok":true,"crc_scope":"header+payload","payload":{"pointer_finger_position":10,"middle_finger_position":20,"ring_finger_position":30,"little_finger_position":40,"thumb_finger_position":50},"schema":"v2"},"match":"exact","warning":"no","wire":"fdbadc0150b411ff0b0a00080a1014181e2028283245"}`,
		`{"type":"GetMioPatterns","offset":22,"length":12,"fields":{"code":16,"role":"request","crc":` + itoa(int64(CRC8([]byte{16, 0, 0}))) + `,"crc_ok":true,"crc_scope":"header+payload","payload":{},"schema":"v2"},"match":"exact","warning":"no","wire":"fdbadc0150b411ff100000` + hex.EncodeToString([]byte{CRC8([]byte{16, 0, 0})}) + `"}`,
		`{"type":"SetSettings","offset":34,"length":14,"fields":{"code":5,"role":"request","crc":138,"crc_ok":false,"payload_hex":"abcd"},"match":"exact","warning":"yes","why":"crc 0x8a on the wire, 0x23 computed; the payload is not protobuf (settings.SetSettings)","wire":"fdbadc0150b411ff050200abcd8a"}`,
		`{"type":"skipped","offset":0,"length":3,"fields":{}}`,
	}
	if len(got) != 8 {
		t.Fatalf("%d records:\n%s", len(got), strings.Join(got, "\n"))
	}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("record %d\n got %s\nwant %s", i, got[i], w)
		}
	}
	tel, ack, quirk, errRec := s.Truth[Device][1], s.Truth[Device][2], s.Truth[Device][3], s.Truth[Device][4]
	if tel.Type != "Telemetry" || tel.Role != RoleTelemetry || tel.Offset != 3 || tel.Matched || tel.FieldsJSON() != `{"code":3,"role":"telemetry","crc":`+itoa(int64(tel.CRC))+`,"crc_ok":true,"crc_scope":"header+payload","payload":{"power":9},"schema":"v2"}` {
		t.Errorf("telemetry %s", tel.String())
	}
	if ack.FieldsJSON() != `{"code":1,"role":"response","crc":107,"crc_ok":true,"crc_scope":"header+payload","payload":{},"schema":"v2","request_code":11,"latency_ms":3}` || ack.Warn != truth.No || ack.At != ms(13) {
		t.Errorf("ACK %s", ack.String())
	}
	if quirk.Type != "GetTelemetry" || quirk.Warn != truth.Yes || !strings.Contains(quirk.FieldsJSON(), `"payload":{"patterns":[{"pattern":1,"gesture_id":"u"}]},"schema":"v2","request_code":16,"latency_ms":4}`) {
		t.Errorf("quirk %s", quirk.String())
	}
	if errRec.CRCOK || errRec.Warn != truth.Yes || !strings.HasSuffix(errRec.FieldsJSON(), `"payload":{"message":"e"},"schema":"v2","request_code":5,"latency_ms":10}`) {
		t.Errorf("ERR %s", errRec.String())
	}
	// Writes: one per frame, the device's first holding the noise and the
	// telemetry before the ACK.
	if len(s.Writes) != 6 || s.Writes[1].Dir != Device || s.Writes[1].Start != 0 || s.Writes[1].End != ack.End() || s.Writes[1].At != ms(13) {
		t.Errorf("writes %+v", s.Writes)
	}
	// A record without a schema is matched as a subset.
	m := ack
	m.Schema = ""
	if m.Match() != "subset" || strings.Contains(m.FieldsJSON(), "schema") {
		t.Errorf("no schema: %s", m.String())
	}
}

func checkSession(t *testing.T, s *Session) {
	t.Helper()
	for d := range 2 {
		var off int64
		for i, m := range s.Truth[d] {
			if m.Offset != off || m.Length <= 0 {
				t.Fatalf("%s record %d at %d, want %d", RoleName(d), i, m.Offset, off)
			}
			off = m.End()
			b := s.Stream[d][m.Offset:m.End()]
			if m.IsEvent() {
				if bytes.Contains(b, SFD[:2]) {
					t.Errorf("%s: skipped bytes %x hold the SFD's start", RoleName(d), b)
				}
				continue
			}
			if !bytes.Equal(b, m.Wire) || !bytes.HasPrefix(b, SFD[:]) || int(binary.LittleEndian.Uint16(b[9:]))+12 != len(b) ||
				b[8] != m.Code || b[len(b)-1] != m.CRC || CRCOK(b) != m.CRCOK || (m.Warn == truth.No) != m.CRCOK && m.Code != CodeGetTelemetry {
				t.Errorf("%s record %d: %s does not describe %x", RoleName(d), i, m.String(), b)
			}
			if m.Matched {
				req := s.Truth[Host][m.RequestIndex]
				if req.Code != m.RequestCode || m.Latency != m.At-req.At || m.Latency <= 0 || m.Latency%time.Millisecond != 0 {
					t.Errorf("reply %s: request %s, latency %v", m.String(), req.String(), m.Latency)
				}
			}
		}
		if off != int64(len(s.Stream[d])) {
			t.Errorf("%s records end at %d of %d", RoleName(d), off, len(s.Stream[d]))
		}
	}
	// Writes tile each direction in time order; each ends with a frame
	// whose At is the write's.
	var end [2]int64
	var last time.Duration
	for _, w := range s.Writes {
		if w.Start != end[w.Dir] || w.End <= w.Start || w.At < last {
			t.Fatalf("write %+v after %d, %v", w, end[w.Dir], last)
		}
		end[w.Dir], last = w.End, w.At
		found := false
		for _, m := range s.Truth[w.Dir] {
			found = found || m.End() == w.End && m.At == w.At && !m.IsEvent()
		}
		if !found {
			t.Errorf("write %+v does not end with a frame", w)
		}
	}
}

// TestSerialSession pins the serial session's design (the table in
// SerialSession's doc): the record sequence, the latencies and the special
// records.
func TestSerialSession(t *testing.T) {
	s, err := SerialSession()
	if err != nil {
		t.Fatal(err)
	}
	checkSession(t, s)
	seq := func(d int) string {
		var out []string
		for _, m := range s.Truth[d] {
			x := m.Type
			if m.Matched {
				x += "<" + TypeName(m.RequestCode) + "@" + m.LatencyMS()
			}
			out = append(out, x)
		}
		return strings.Join(out, " ")
	}
	if got := seq(Host); got != "GetSettings SetPositions StartTelemetry PerformGestureId GetMioPatterns SetSettings StopTelemetry" {
		t.Errorf("host: %s", got)
	}
	if got := seq(Device); got != "GetSettings<GetSettings@15 ACK<SetPositions@12 ACK<StartTelemetry@5 Telemetry ERR<PerformGestureId@18 "+
		"skipped Telemetry GetTelemetry<GetMioPatterns@21 Telemetry Telemetry ERR<SetSettings@12 Telemetry Telemetry ACK<StopTelemetry@8" {
		t.Errorf("device: %s", got)
	}
	bad := s.Truth[Host][5]
	if !bytes.Equal(bad.Wire, BadCRCSetSettings) || bad.CRCOK || bad.Payload != nil || hex.EncodeToString(bad.PayloadHex) != "abcd" || bad.Warn != truth.Yes {
		t.Errorf("bad CRC frame %s", bad.String())
	}
	sk := s.Truth[Device][5]
	if !bytes.Equal(s.Stream[Device][sk.Offset:sk.End()], Garbage) {
		t.Errorf("skipped %s", sk.String())
	}
	warn := 0
	for d := range 2 {
		for _, m := range s.Truth[d] {
			if m.Warn == truth.Yes {
				warn++
			}
		}
	}
	if warn != 2 {
		t.Errorf("%d records with warnings, want 2 (bad CRC, quirk)", warn)
	}
	tel := s.Truth[Device][11]
	if v, _ := tel.Payload.Get("executable_gesture"); tel.Type != "Telemetry" || v.S != GestureFist {
		t.Errorf("telemetry at 705 ms: %s", tel.String())
	}
	if v, _ := s.Truth[Device][3].Payload.Get("emg_status"); v.S != "MODULE_STATUS_WORK" {
		t.Errorf("first telemetry %s", s.Truth[Device][3].String())
	}
}

// TestBridgeSession pins the TCP session's design.
func TestBridgeSession(t *testing.T) {
	s, err := BridgeSession()
	if err != nil {
		t.Fatal(err)
	}
	checkSession(t, s)
	var got []string
	for _, m := range s.Truth[Device] {
		x := m.Type
		if m.Matched {
			x += "<" + TypeName(m.RequestCode) + "@" + m.LatencyMS()
		}
		got = append(got, x)
	}
	if strings.Join(got, " ") != "GetGestures<GetGestures@21 ACK<PerformGestureId@12 ACK<StartTelemetry@4 Telemetry Telemetry Telemetry Telemetry ACK<StopTelemetry@7 GetTelemetry<GetTelemetry@9" {
		t.Errorf("device: %v", got)
	}
	gg := s.Truth[Device][0]
	if v, _ := gg.Payload.Get("gestures"); len(v.Arr) != 2 || len(v.Arr[1].Obj.Vals) != 6 {
		t.Errorf("GetGestures %s", gg.String())
	}
	for d := range 2 {
		for _, m := range s.Truth[d] {
			if m.Warn != truth.No || m.IsEvent() {
				t.Errorf("%s: not a clean session", m.String())
			}
		}
	}
}

// FuzzFrame checks frames of any code and payload: the layout, the size
// field, and that the CRC makes the CRC of everything after the SFD zero
// (a CRC without a final XOR leaves no remainder), unless corrupted.
func FuzzFrame(f *testing.F) {
	f.Add(byte(5), []byte{0xab, 0xcd}, false)
	f.Add(byte(9), []byte{0xff, 0xff, 0xff, 0xff, 0xff}, true)
	f.Add(byte(3), GetMioPatterns(MioPattern{1, GestureFist}).Bytes(), false)
	f.Fuzz(func(t *testing.T, code byte, payload []byte, corrupt bool) {
		var opts []FrameOption
		if corrupt {
			opts = append(opts, CorruptCRC())
		}
		b, err := Frame(code, payload, opts...)
		if err != nil {
			if len(payload) <= MaxPayload {
				t.Fatal(err)
			}
			return
		}
		if len(b) != 12+len(payload) || !bytes.Equal(b[:8], SFD[:]) || b[8] != code ||
			int(binary.LittleEndian.Uint16(b[9:])) != len(payload) || !bytes.Equal(b[11:len(b)-1], payload) {
			t.Fatalf("frame %x", b)
		}
		if (CRC8(b[8:]) == 0) == corrupt || CRCOK(b) == corrupt {
			t.Fatalf("crc of %x: remainder %#02x, corrupt %v", b, CRC8(b[8:]), corrupt)
		}
	})
}

// FuzzVarint checks the varint writer against encoding/binary's reader and
// protowire's size.
func FuzzVarint(f *testing.F) {
	f.Add(uint64(0))
	f.Add(uint64(300))
	f.Add(uint64(1<<64 - 1))
	f.Fuzz(func(t *testing.T, v uint64) {
		b := AppendVarint([]byte{0x55}, v)
		got, n := binary.Uvarint(b[1:])
		if got != v || n != len(b)-1 || n != protowire.SizeVarint(v) {
			t.Fatalf("%d: %x reads back as %d (%d bytes)", v, b[1:], got, n)
		}
	})
}

func BenchmarkFrame(b *testing.B) {
	p := Telemetry{EMGStatus: ModuleStatusWork, LastTimeSync: SyncTime, ExecutableGesture: GestureFist, Power: 80}.Msg().Bytes()
	b.SetBytes(int64(len(p) + 12))
	b.ReportAllocs()
	for b.Loop() {
		_ = MustFrame(CodeTelemetry, p)
	}
}
