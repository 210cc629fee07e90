package handcontrol

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/dissect/pbwalk"
	enc "github.com/dissect-tools/dissect/internal/testenc/handcontrolenc"

	"google.golang.org/protobuf/encoding/protowire"
)

// userTelemetry is a user schema with every kind of field: an enum with a
// negative value, floats, 64-bit integers, bytes, a packed repeated field,
// a map, a message nested in itself, and UUIDs (shown as strings).
const userTelemetry = `syntax = "proto3";
package telemetry;
import "uuid.proto";

enum Mode { MODE_IDLE = 0; MODE_GRIP = 1; MODE_NEG = -1; }

message Node {
  string label = 1;
  repeated Node children = 2;
}

message Telemetry {
  Mode mode = 1;
  double temperature = 2;
  float voltage = 3;
  uint64 uptime = 4;
  sint64 offset = 5;
  fixed32 flags = 6;
  sfixed64 delta = 7;
  bytes blob = 8;
  repeated int32 samples = 9;
  map<string, int32> counters = 10;
  Node tree = 11;
  uuid.UUID executable_gesture = 12;
  repeated uuid.UUID ids = 13;
}
`

const userUUID = `syntax = "proto3";
package uuid;
message UUID { string value = 1; }
`

// userTelemetryPayload is the declared payload of userTelemetry, written
// by hand: Node.children (a Node in a Node) is not declared.
const userTelemetryPayload = "mode:string(MODE_NEG|MODE_IDLE|MODE_GRIP) temperature:float64 voltage:float32 uptime:uint offset:int flags:uint delta:int " +
	"blob:bytes samples:[int] counters:[{key:string value:int}] tree:{label:string} executable_gesture:string ids:[string]"

// userOptions writes userTelemetry and returns the options that load it.
func userOptions(t *testing.T) Options {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "hand.proto"), userTelemetry)
	writeFile(t, filepath.Join(dir, "uuid.proto"), userUUID)
	return Options{ProtoPaths: []string{dir}, ProtoFiles: []string{"hand.proto"}}
}

// TestDeclUserSchema: a user's Telemetry declares its own payload (and
// no v1 fields: the v1 fallback is not tried for user messages); the
// codes it does not cover keep the built-in declarations; its frames
// decode as declared.
func TestDeclUserSchema(t *testing.T) {
	reg := declRegistry(t, userOptions(t))
	for table, want := range map[string]string{
		"Telemetry.telemetry":  userTelemetryPayload,
		"Telemetry.request":    userTelemetryPayload,
		"GetSettings.response": builtinPayloads["GetSettings.response"],
		"SetPositions.request": fingers,
	} {
		d := declOf(t, reg, table)
		if got := declText(d.Field("payload").Fields); got != want {
			t.Errorf("%s:\n got  %s\n want %s", table, got, want)
		}
	}
	if e := declOf(t, reg, "Telemetry.telemetry").Field("schema").Enum; !slices.Equal(e, []string{"hand.proto"}) {
		t.Errorf("schema names %q", e)
	}
	if e := declOf(t, reg, "GetSettings.response").Field("schema").Enum; !slices.Equal(e, []string{"v2", "v1"}) {
		t.Errorf("schema names %q", e)
	}
	// A telemetry with every field, the tree two levels deep (its child
	// is shown raw), an enum value the enum lacks and an unknown field.
	node := cat(pstr(1, "root"), pbytes(2, pstr(1, "leaf")))
	payload := cat(pvar(1, 1), h("11 00 00 00 00 00 00 f8 3f"), h("1d 00 00 c0 3f"), pvar(4, 1<<63), pvar(5, 3), h("35 07 00 00 00"),
		h("39 fe ff ff ff ff ff ff ff"), pbytes(8, []byte{0, 0xff}), pbytes(9, h("01 ac 02")), pbytes(10, cat(pstr(1, "k"), pvar(2, 7))),
		pbytes(11, node), pbytes(12, pstr(1, "u-1")), pbytes(13, pstr(1, "a")), pbytes(13, pstr(1, "b")), pvar(1, 9), pvar(20, 1))
	recs, _ := feedStream(t, reg, true, []event{{dir: 1, at: t0, data: frame(codeTelemetry, payload)}, {dir: 1, at: t0}}, nil)
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	dissecttest.CheckDeclared(t, reg, recs)
	checkFields(t, recs[0].Fields[5:], []kv{
		{"payload", obj(kv{"mode", str("MODE_GRIP")}, kv{"temperature", dissect.Float(1.5)}, kv{"voltage", dissect.Float32(1.5)},
			kv{"uptime", dissect.Uint(1 << 63)}, kv{"offset", i64(-2)}, kv{"flags", dissect.Uint(7)}, kv{"delta", i64(-2)},
			kv{"blob", dissect.Bytes([]byte{0, 0xff})}, kv{"samples", arr(i64(1), i64(300))},
			kv{"counters", arr(obj(kv{"key", str("k")}, kv{"value", i64(7)}))}, kv{"tree", obj(kv{"label", str("root")})},
			kv{"executable_gesture", str("u-1")}, kv{"ids", arr(str("a"), str("b"))})},
		{"payload_raw", arr(
			rawItem("tree.children[0]", 1, "", "length-delimited", "text", str("leaf")),
			rawItem("", 1, "mode", "varint", "uint", dissect.Uint(9)),
			rawItem("", 20, "", "varint", "uint", dissect.Uint(1)))},
		{"schema", str("hand.proto")},
	})
	checkWarnings(t, recs[0].Warnings, []string{
		"payload: telemetry.Telemetry.mode appears 2 times; the last is shown",
		"payload: telemetry.Node.children: a telemetry.Node inside a telemetry.Node is not decoded with the schema; shown raw",
		"payload: telemetry.Telemetry.mode: 9 is not a value of telemetry.Mode; shown raw",
		"payload: telemetry.Telemetry has no field 20 (varint); shown raw",
	})
}

// TestDeclQuirkConflict: a user GetMioPatterns whose key "telemetry" is
// not the object of GetTelemetry's cannot share the type-13 reply's
// declaration; such replies are decoded raw, with a note, and everything
// stays declared.
func TestDeclQuirkConflict(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "p.proto"), "syntax = \"proto3\";\npackage patterns;\nmessage GetMioPatterns { string telemetry = 1; }\n")
	reg := declRegistry(t, Options{ProtoPaths: []string{dir}, ProtoFiles: []string{"p.proto"}})
	d := declOf(t, reg, "GetTelemetry.response")
	if got := declText(d.Field("payload").Fields); got != "telemetry:{"+telemetry+"}" || !slices.Equal(d.Field("schema").Enum, []string{"v2", "raw"}) {
		t.Errorf("payload %s, schema %q", got, d.Field("schema").Enum)
	}
	recs, notes := feedStream(t, reg, true, []event{
		{dir: 0, at: t0, data: frame(codeGetMioPatterns, nil)},
		{dir: 1, at: t0.Add(time.Millisecond), data: frame(codeGetTelemetry, pstr(1, "x"))},
		{dir: 0, at: t0}, {dir: 1, at: t0},
	}, nil)
	dissecttest.CheckDeclared(t, reg, recs)
	if len(recs) != 2 || !slices.ContainsFunc(notes, func(n string) bool {
		return strings.HasPrefix(n, "handcontrol: a type-13 reply to GetMioPatterns is decoded raw: payload.telemetry is object in one message and string in another")
	}) {
		t.Fatalf("%d records, notes %q", len(recs), notes)
	}
	checkFields(t, recs[1].Fields[5:8], []kv{{"payload", obj()}, {"payload_raw", arr(rawItem("", 1, "", "length-delimited", "text", str("x")))}, {"schema", str("raw")}})
}

// TestDeclTooLarge: a user message whose declaration would unroll to more
// than maxDeclFields fields (2^13 copies of a leaf) is refused at start.
func TestDeclTooLarge(t *testing.T) {
	var b strings.Builder
	b.WriteString("syntax = \"proto3\";\npackage telemetry;\nmessage M13 { int32 a = 1; }\n")
	for i := 12; i >= 0; i-- {
		fmt.Fprintf(&b, "message M%02d { M%02d l = 1; M%02d r = 2; }\n", i, i+1, i+1)
	}
	b.WriteString("message Telemetry { M00 root = 1; }\n")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "big.proto"), b.String())
	_, err := New(Options{ProtoPaths: []string{dir}, ProtoFiles: []string{"big.proto"}})
	if err == nil || !strings.Contains(err.Error(), "handcontrol: Telemetry request: pbwalk: telemetry.Telemetry declares more than 4096 fields") {
		t.Fatalf("error %v", err)
	}
}

// everyCodeEvents are frames of every code from both sides, built by the
// separate encoder (internal/testenc/handcontrolenc): each request with
// its reply (ACK, ERR, data, the GetMioPatterns quirk), telemetry in v2
// and v1, codes sent by the side that does not send them, codes 0 and
// above 17, stray bytes on codes without payload, a payload that is not
// protobuf, and frames with a wrong CRC.
func everyCodeEvents() []event {
	tele := enc.Telemetry{EMGStatus: 1, DisplayStatus: 4, DriverStatus: 5, LastTimeSync: 1620000000, EMG: 3, ExecutableGesture: "97f72d84-b856-4934-8d80-2b3ff5ad41d5", Power: 80,
		Fingers: enc.Fingers{Pointer: 10, Middle: 20, Ring: 30, Little: 40, Thumb: 50}}
	g := enc.Gesture{ID: "g-1", Name: "fist", LastTimeSync: 1620000001, Iterable: true, Repetitions: 2,
		Actions: []enc.GestureAction{{Fingers: enc.Fingers{Pointer: 1, Thumb: 2}, Delay: 100}, {Delay: 5}}}
	pats := []enc.MioPattern{{Pattern: 7, GestureID: "g-1"}, {Pattern: 8}}
	request := map[byte][]byte{
		enc.CodeSetSettings:        enc.SetSettings(enc.Settings{EnableEMG: true, EnableGyro: true}, false).Bytes(),
		enc.CodeSaveGesture:        enc.SaveGesture(1620000002, g).Bytes(),
		enc.CodeDeleteGesture:      enc.DeleteGesture(1620000003, "g-1").Bytes(),
		enc.CodePerformGestureID:   enc.PerformGestureByID("g-1").Bytes(),
		enc.CodePerformGestureRaw:  enc.PerformGestureRaw(g).Bytes(),
		enc.CodeSetPositions:       enc.SetPositions(enc.Fingers{Pointer: 1, Middle: 2, Ring: 3, Little: 4, Thumb: 5}).Bytes(),
		enc.CodeUpdateLastTimeSync: enc.UpdateLastTimeSync(1620000004).Bytes(),
		enc.CodeStartTelemetry:     enc.StartTelemetry(100).Bytes(),
		enc.CodeSetMioPatterns:     enc.SetMioPatterns(pats...).Bytes(),
	}
	reply := map[byte][2][]byte{ // code, payload
		enc.CodeGetSettings:    {{enc.CodeGetSettings}, enc.GetSettings(enc.Settings{EnableEMG: true, EnableDriver: true}).Bytes()},
		enc.CodeGetGestures:    {{enc.CodeGetGestures}, enc.GetGestures(1620000005, g, enc.Gesture{ID: "g-2"}).Bytes()},
		enc.CodeGetTelemetry:   {{enc.CodeGetTelemetry}, enc.GetTelemetry(tele).Bytes()},
		enc.CodeGetMioPatterns: {{enc.CodeGetTelemetry}, enc.GetMioPatterns(pats...).Bytes()}, // the quirk
		enc.CodeSetSettings:    {{enc.CodeERR}, enc.Error("Incorrect settings").Bytes()},
	}
	var evs []event
	at := t0
	send := func(dir dissect.Dir, code byte, payload []byte, opts ...enc.FrameOption) {
		at = at.Add(3 * time.Millisecond)
		evs = append(evs, event{dir: dir, at: at, data: enc.MustFrame(code, payload, opts...)})
	}
	for code := enc.CodeGetSettings; code <= enc.CodeSetMioPatterns; code++ {
		send(0, code, request[code])
		if r, ok := reply[code]; ok {
			send(1, r[0][0], r[1])
		} else {
			send(1, enc.CodeACK, nil)
		}
	}
	send(0, enc.CodeGetMioPatterns, nil)
	send(1, enc.CodeGetMioPatterns, enc.GetMioPatterns(pats...).Bytes())
	send(1, enc.CodeTelemetry, tele.Msg().Bytes())
	send(1, enc.CodeTelemetry, tele.MsgV1(40).Bytes(), enc.SFDInCRC())
	send(0, enc.CodeGetSettings, nil)
	send(1, enc.CodeGetSettings, cat(pvar(1, 2), pvar(2, 1))) // v1: type_work MODE_AUTO
	// Codes sent by the side that does not send them, and invalid codes.
	send(0, enc.CodeACK, nil)
	send(0, enc.CodeERR, enc.Error("host").Bytes())
	send(0, enc.CodeTelemetry, tele.Msg().Bytes())
	for _, code := range slices.Sorted(maps.Keys(request)) {
		send(1, code, request[code])
	}
	send(1, enc.CodeStopTelemetry, nil)
	for _, dir := range []dissect.Dir{0, 1} {
		send(dir, enc.CodeEmpty, pvar(1, 1))
		send(dir, 0x20, cat(pvar(1, 5), pstr(2, "hello")))
		send(dir, 0xff, nil)
	}
	// Stray bytes, a payload that is not protobuf, wrong CRCs.
	send(0, enc.CodeGetGestures, h("08 01"))
	send(1, enc.CodeACK, h("08 01"))
	send(0, enc.CodeSetSettings, h("ab cd"))
	send(0, enc.CodePerformGestureID, h("ff ff ff ff ff"), enc.CorruptCRC())
	send(1, enc.CodeTelemetry, tele.Msg().Bytes(), enc.CorruptCRC())
	return append(evs, event{dir: 0, at: at}, event{dir: 1, at: at})
}

// TestDeclaredEveryCode: the frames of every code and role decode as
// declared, with the built-in schemas, raw and a user schema, and every
// declared table is met.
func TestDeclaredEveryCode(t *testing.T) {
	for name, opt := range map[string]Options{"v2": {}, "raw": {Raw: true}, "user": userOptions(t)} {
		reg := declRegistry(t, opt)
		recs, _ := feedStream(t, reg, true, everyCodeEvents(), rand.New(rand.NewPCG(1, 2)))
		seen := dissecttest.CheckDeclared(t, reg, recs)
		for _, d := range reg.Types(protoName) {
			if seen["handcontrol "+d.Table()] == 0 {
				t.Errorf("%s: no record of %s", name, d.Table())
			}
		}
		if name != "v2" {
			continue
		}
		// The GetSettings reply is matched: its keys and their roles.
		i := slices.IndexFunc(recs, func(r *dissect.Record) bool { return r.Type == TypeGetSettings && r.Src != "host" })
		if i < 0 {
			t.Fatal("no GetSettings reply")
		}
		checkFields(t, recs[i].Fields[5:], []kv{{"payload", obj(kv{"enable_emg", dissect.Bool(true)}, kv{"enable_driver", dissect.Bool(true)})},
			{"schema", str("v2")}, {"request_code", i64(4)}, {"latency_ms", dissect.Float(3)}})
	}
}

// TestDeclaredHostile: random streams (frames of random codes with random
// and random protobuf payloads, right and wrong CRCs, garbage, cut frames)
// never give an undeclared record.
func TestDeclaredHostile(t *testing.T) {
	opts := map[string]Options{"v2": {}, "raw": {Raw: true}, "user": userOptions(t)}
	for name, opt := range opts {
		reg := declRegistry(t, opt)
		rng := rand.New(rand.NewPCG(7, uint64(len(name))))
		n := 0
		for range 150 {
			recs, _ := feedStream(t, reg, true, hostileEvents(rng), rng)
			n += len(recs)
			dissecttest.CheckDeclared(t, reg, recs)
			if t.Failed() {
				return
			}
		}
		if n < 1000 {
			t.Errorf("%s: only %d records", name, n)
		}
	}
}

// hostileEvents draws one stream.
func hostileEvents(rng *rand.Rand) []event {
	var evs []event
	at := t0
	for range 1 + rng.IntN(30) {
		at = at.Add(time.Duration(rng.IntN(20)) * time.Millisecond)
		dir := dissect.Dir(rng.IntN(2))
		var b []byte
		switch rng.IntN(10) {
		case 0:
			b = randBytes(rng, rng.IntN(40))
		case 1:
			b = frame(byte(rng.IntN(256)), randBytes(rng, rng.IntN(30)))
		default:
			code := byte(rng.IntN(numCodes + 2))
			p := randProto(rng, 0)
			if rng.IntN(4) == 0 && len(p) > 0 {
				p[rng.IntN(len(p))] ^= byte(1 << rng.IntN(8)) // a flipped bit
			}
			b = frame(code, p)
			if rng.IntN(6) == 0 {
				b = badFrame(code, p)
			}
		}
		if rng.IntN(15) == 0 && len(b) > 1 {
			b = b[:rng.IntN(len(b))] // cut
		}
		evs = append(evs, event{dir: dir, at: at, data: b})
	}
	return append(evs, event{dir: 0, at: at}, event{dir: 1, at: at})
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.IntN(256))
	}
	return b
}

// randProto draws a protobuf message with protowire: numbers 1-16 (the
// built-in messages' numbers, so that known fields meet wrong wire types
// and values their enums lack) and a few large ones; varints of every
// size; fixed values; text, bytes and nested messages; groups.
func randProto(rng *rand.Rand, depth int) []byte {
	var b []byte
	for range rng.IntN(8) {
		num := protowire.Number(1 + rng.IntN(16))
		if rng.IntN(10) == 0 {
			num = protowire.Number(1 + rng.IntN(1<<20))
		}
		switch rng.IntN(7) {
		case 0, 1:
			v := rng.Uint64() >> rng.IntN(64)
			b = protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), v)
		case 2:
			b = protowire.AppendFixed32(protowire.AppendTag(b, num, protowire.Fixed32Type), rng.Uint32())
		case 3:
			b = protowire.AppendFixed64(protowire.AppendTag(b, num, protowire.Fixed64Type), rng.Uint64())
		case 4:
			s := []string{"", "97f72d84-b856-4934-8d80-2b3ff5ad41d5", "name", "\xff\xfe"}[rng.IntN(4)]
			b = protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), []byte(s))
		case 5:
			var sub []byte
			if depth < 4 {
				sub = randProto(rng, depth+1)
			}
			b = protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), sub)
		case 6:
			b = protowire.AppendTag(b, num, protowire.StartGroupType)
			if depth < 4 {
				b = append(b, randProto(rng, depth+1)...)
			}
			b = protowire.AppendTag(b, num, protowire.EndGroupType)
		}
	}
	return b
}

// FuzzDeclared: arbitrary bytes decoded with any built-in message give a
// payload and a payload_raw as the message's declaration says; sent as
// frames of any code from both sides (and as a stream of their own), they
// give only declared records.
func FuzzDeclared(f *testing.F) {
	f.Add(getGestures118, uint8(codeGetGestures))
	f.Add(telemetryV1, uint8(codeTelemetry))
	f.Add(h("0a 03 0a 01 31 08 07"), uint8(codePerformById))
	f.Add(h("2b 08 07 2c 0d 01 00 00 00 12 00"), uint8(0x20))
	f.Add(h("08 28 10 09 3a 02 08 01"), uint8(codeTelemetry))
	v2, v1, err := loadBuiltin()
	if err != nil {
		f.Fatal(err)
	}
	var msgs []*pbwalk.Message
	for _, set := range []map[string]*pbwalk.Message{v2, v1} {
		for _, n := range slices.Sorted(maps.Keys(set)) {
			msgs = append(msgs, set[n])
		}
	}
	reg := declRegistry(f, Options{})
	f.Fuzz(func(t *testing.T, data []byte, code uint8) {
		m := msgs[int(code)%len(msgs)]
		var rec dissect.Record
		var d pbwalk.Decoder
		if fields, raw, _, err := d.Decode(&rec, m, data, true); err == nil {
			checkPayloadDecl(t, m, fields, raw)
		}
		evs := []event{
			{dir: 0, at: t0, data: cat(frame(code, data), data)},
			{dir: 1, at: t0.Add(time.Millisecond), data: cat(frame(code, data), data)},
			{dir: 0, at: t0}, {dir: 1, at: t0},
		}
		recs, _ := feedStream(t, reg, true, evs, nil)
		dissecttest.CheckDeclared(t, reg, recs)
	})
}

// checkPayloadDecl checks that a payload decoded with m is as m.Decl and
// pbwalk.RawItemDecl declare it.
func checkPayloadDecl(t *testing.T, m *pbwalk.Message, fields, raw []dissect.Field) {
	t.Helper()
	decl, err := m.Decl(pbwalk.DeclOptions{})
	if err != nil {
		t.Fatal(err)
	}
	item := pbwalk.RawItemDecl()
	td := dissect.TypeDecl{Type: "x", Fields: []dissect.FieldDecl{
		{Name: "payload", Kind: dissect.KindObject, Fields: decl},
		{Name: "payload_raw", Kind: dissect.KindArray, Elem: &item},
	}}
	r := &dissect.Record{Type: "x"}
	r.Add("payload", dissect.Object(fields))
	if raw != nil {
		r.Add("payload_raw", dissect.Array(raw))
	}
	if err := td.Check(r); err != nil {
		t.Fatalf("%s: %v: %s", m.Name(), err, showFields(r.Fields))
	}
}
