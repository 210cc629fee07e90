package handcontrol

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

// rawItem is an expected item of payload_raw: a field occurrence shown
// raw, in the message at parent, named name ("" for none), with one value
// under key as ("uint", "text" or "bytes").
func rawItem(parent string, num int, name, wire, as string, v dissect.Value) dissect.Value {
	fs := []kv{{"parent", str(parent)}, {"field", i64(int64(num))}}
	if name != "" {
		fs = append(fs, kv{"name", str(name)})
	}
	return obj(append(fs, kv{"wire_type", str(wire)}, kv{as, v})...)
}

// declRegistry returns a registry of the protocol with opt alone, for
// serial links and TCP port 5000 (the bridge capture).
func declRegistry(t testing.TB, opt Options) *dissect.Registry {
	t.Helper()
	p, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	return dissecttest.Registry(t, []string{"serial,handcontrol", "tcp.port==5000,handcontrol"}, p)
}

// declOf returns the declaration of table (TYPE.ROLE) in reg.
func declOf(t testing.TB, reg *dissect.Registry, table string) *dissect.TypeDecl {
	t.Helper()
	for _, d := range reg.Types(protoName) {
		if d.Table() == table {
			return d
		}
	}
	t.Fatalf("no declaration %s", table)
	return nil
}

// declText renders declared fields compactly: "a:int b:[string]
// c:{x:uint}", enums as "string(A|B)", units as "int[ms]".
func declText(fs []dissect.FieldDecl) string {
	var b strings.Builder
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f.Name + ":" + declKind(&f))
	}
	return b.String()
}

func declKind(f *dissect.FieldDecl) string {
	s := f.Kind.String()
	switch f.Kind {
	case dissect.KindArray:
		s = "[" + declKind(f.Elem) + "]"
	case dissect.KindObject:
		s = "{" + declText(f.Fields) + "}"
	}
	if len(f.Enum) > 0 {
		s += "(" + strings.Join(f.Enum, "|") + ")"
	}
	if f.Unit != "" {
		s += "[" + f.Unit + "]"
	}
	return s
}

// The payload shapes of the built-in schemas, written by hand from the
// .proto files (schema/v2, schema/v1) and protocols.md §1.6, §1.7.
const (
	module    = "string(MODULE_STATUS_INITIALIZATION|MODULE_STATUS_WORK|MODULE_STATUS_ERROR|MODULE_STATUS_CONNECTION_ERROR|MODULE_STATUS_DISABLED)"
	driver    = "string(DRIVER_STATUS_INITIALIZATION|DRIVER_STATUS_ERROR|DRIVER_STATUS_CONNECTION_ERROR|DRIVER_STATUS_DISABLED|DRIVER_STATUS_SLEEP|DRIVER_STATUS_SETTING_POSITION)"
	fingers   = "pointer_finger_position:int middle_finger_position:int ring_finger_position:int little_finger_position:int thumb_finger_position:int"
	telemetry = "emg_status:" + module + " display_status:" + module + " gyro_status:" + module + " driver_status:" + driver +
		" last_time_sync:int[s] emg:int executable_gesture:string power:int[%] " + fingers
	modeType    = "string(MODE_MIO|MODE_COMMANDS|MODE_AUTO)"
	gestureDecl = "{id:string name:string last_time_sync:int[s] iterable:bool repetitions:int actions:[{" + fingers + " delay:int}]}"
	patterns    = "patterns:[{pattern:int gesture_id:string}]"
)

// builtinPayloads are the payloads of every table with the built-in
// schemas: the v2 message, then the fields only its v1 alternative has; a
// code that carries nothing from that side declares nothing (its stray
// bytes are shown raw). A side that does not send a code is decoded with
// the other side's message.
var builtinPayloads = map[string]string{
	"Empty.request": "", "Empty.response": "",
	"ACK.request": "", "ACK.response": "",
	"ERR.request": "message:string", "ERR.response": "message:string",
	"Telemetry.request": telemetry + " telemetry_frequency:int", "Telemetry.telemetry": telemetry + " telemetry_frequency:int",
	"GetSettings.request": "", "GetSettings.response": "enable_emg:bool enable_display:bool enable_gyro:bool enable_driver:bool type_work:" + modeType,
	"SetSettings.request":  "enable_emg:bool enable_display:bool enable_gyro:bool enable_driver:bool power_off:bool type_work:" + modeType + " telemetry_frequency:int",
	"SetSettings.response": "enable_emg:bool enable_display:bool enable_gyro:bool enable_driver:bool power_off:bool type_work:" + modeType + " telemetry_frequency:int",
	"GetGestures.request":  "", "GetGestures.response": "last_time_sync:int[s] gestures:[" + gestureDecl + "]",
	"SaveGesture.request": "time_sync:int[s] gesture:" + gestureDecl, "SaveGesture.response": "time_sync:int[s] gesture:" + gestureDecl,
	"DeleteGesture.request": "time_sync:int[s] id:string", "DeleteGesture.response": "time_sync:int[s] id:string",
	"PerformGestureId.request": "id:string", "PerformGestureId.response": "id:string",
	"PerformGestureRaw.request": "gesture:" + gestureDecl, "PerformGestureRaw.response": "gesture:" + gestureDecl,
	"SetPositions.request": fingers, "SetPositions.response": fingers,
	"UpdateLastTimeSync.request": "last_time_sync:int[s]", "UpdateLastTimeSync.response": "last_time_sync:int[s]",
	// The quirk: a type-13 reply may carry patterns.GetMioPatterns.
	"GetTelemetry.request": "", "GetTelemetry.response": "telemetry:{" + telemetry + "} " + patterns,
	"StartTelemetry.request": "interval_ms:int[ms]", "StartTelemetry.response": "interval_ms:int[ms]",
	"StopTelemetry.request": "", "StopTelemetry.response": "",
	"GetMioPatterns.request": "", "GetMioPatterns.response": patterns,
	"SetMioPatterns.request": patterns, "SetMioPatterns.response": patterns,
	"unknown.request": "", "unknown.response": "",
}

// TestDeclBuiltin checks every declaration of the built-in schemas: the
// tables (one per code and role), the payload shapes, the schema names,
// and the roles -z rtt and the typed writers read.
func TestDeclBuiltin(t *testing.T) {
	reg := declRegistry(t, Options{})
	decls := reg.Types(protoName)
	var tables []string
	for _, d := range decls {
		tables = append(tables, d.Table())
	}
	var want []string
	for _, n := range append(typeNames[:], TypeUnknown) {
		if n == TypeTelemetry {
			want = append(want, n+".request", n+".telemetry")
		} else {
			want = append(want, n+".request", n+".response")
		}
	}
	if !slices.Equal(tables, want) {
		t.Fatalf("tables %q\nwant %q", tables, want)
	}
	replies := []string{"ACK.response", "ERR.response", "GetSettings.response", "GetGestures.response", "GetTelemetry.response", "GetMioPatterns.response"}
	for _, d := range decls {
		table := d.Table()
		if got := declText(d.Field("payload").Fields); got != builtinPayloads[table] {
			t.Errorf("%s payload:\n got  %s\n want %s", table, got, builtinPayloads[table])
		}
		keys := "code:int role:string(" + d.Variant.Value + ") crc:int crc_ok:bool crc_scope:string(header+payload|sfd+header+payload) payload:{" +
			builtinPayloads[table] + "} payload_raw:[{parent:string field:int name:string wire_type:string(varint|fixed64|length-delimited|group|fixed32) uint:uint text:string bytes:bytes}] schema:string(" +
			schemaNames(table) + ") payload_hex:bytes"
		request := d.Variant.Value == RoleRequest && d.Type != TypeEmpty && d.Type != TypeUnknown
		reply := slices.Contains(replies, table)
		if reply {
			keys += " request_code:int latency_ms:float64[ms]"
		}
		if got := declText(d.Fields); got != keys {
			t.Errorf("%s:\n got  %s\n want %s", table, got, keys)
		}
		for _, k := range []string{"code", "role", "crc", "crc_ok"} {
			if !d.Field(k).Required {
				t.Errorf("%s.%s not required", table, k)
			}
		}
		switch {
		case request:
			if d.Exchange.Role != dissect.Request || d.Field("code").Role != dissect.RoleRequestKey {
				t.Errorf("%s: not a request", table)
			}
		case reply:
			if d.Exchange.Role != dissect.Reply || d.Exchange.Answers != "" || d.Field("request_code").Role != dissect.RoleRequestKey ||
				d.Field("latency_ms").Role != dissect.RoleLatency || d.Field("code").Role != dissect.RoleNone {
				t.Errorf("%s: not a reply", table)
			}
		default:
			if d.Exchange.Role != dissect.NoExchange || d.Field("code").Role != dissect.RoleNone {
				t.Errorf("%s: in an exchange", table)
			}
		}
	}
	// Raw: no message, every payload empty, every field in payload_raw.
	for _, d := range declRegistry(t, Options{Raw: true}).Types(protoName) {
		if p := d.Field("payload"); len(p.Fields) != 0 || !slices.Equal(d.Field("schema").Enum, []string{"raw"}) {
			t.Errorf("raw %s: payload %s, schema %q", d.Table(), declText(p.Fields), d.Field("schema").Enum)
		}
	}
}

// schemaNames are the schema names a table's records may carry with the
// built-in schemas: "raw" where the message is empty (stray bytes) or
// there is none, "v1" where v1 differs (Telemetry, GetSettings,
// SetSettings).
func schemaNames(table string) string {
	typ, role, _ := strings.Cut(table, ".")
	switch typ {
	case TypeEmpty, TypeUnknown:
		return "raw"
	case TypeTelemetry, TypeSetSettings:
		return "v2|v1"
	case TypeGetSettings:
		if role == RoleRequest {
			return "raw|v2"
		}
		return "v2|v1"
	}
	if builtinPayloads[table] == "" {
		return "raw|v2"
	}
	return "v2"
}

// TestDeclaredCaptures checks every record of the shipped HandControl
// captures against its declaration, with the built-in schemas, raw, and a
// user schema; and that the records the typed writers lost before are
// declared: the GetSettings reply's payload, request_code and
// latency_ms, and Telemetry's executable_gesture.
func TestDeclaredCaptures(t *testing.T) {
	files, _ := filepath.Glob("../../pcaps/handcontrol*.pcap*")
	if len(files) != 2 {
		t.Fatalf("captures %q", files)
	}
	for name, opt := range map[string]Options{"v2": {}, "raw": {Raw: true}, "user": userOptions(t)} {
		reg := declRegistry(t, opt)
		seen := map[string]int{}
		for _, f := range files {
			recs := dissecttest.Decode(t, reg, f)
			if len(recs) < 10 {
				t.Fatalf("%s: %d records", f, len(recs))
			}
			for k, n := range dissecttest.CheckDeclared(t, reg, recs) {
				seen[k] += n
			}
			if name == "v2" {
				checkCaptureKeys(t, reg, recs)
			}
		}
		for _, table := range []string{"GetSettings.request", "GetSettings.response", "Telemetry.telemetry", "ACK.response", "ERR.response",
			"GetTelemetry.response", "SetSettings.request", "GetGestures.response"} {
			if seen["handcontrol "+table] == 0 {
				t.Errorf("%s: no %s record in the captures (%v)", name, table, seen)
			}
		}
	}
}

// checkCaptureKeys finds, in the captures' records, the GetSettings reply
// and a Telemetry with executable_gesture, and checks that their keys are
// declared with their roles.
func checkCaptureKeys(t *testing.T, reg *dissect.Registry, recs []*dissect.Record) {
	for _, r := range recs {
		d := reg.Decl(r)
		switch {
		case r.Type == TypeGetSettings && d.Table() == "GetSettings.response":
			for _, k := range []string{"payload", "request_code", "latency_ms"} {
				if _, ok := r.Fields.Get(k); !ok {
					t.Errorf("GetSettings reply without %s: %s", k, dissecttest.DescribeRecord(r))
				}
			}
			p, _ := r.Fields.Get("payload")
			if len(p.Items()) == 0 || d.Field("payload").Fields[0].Name != "enable_emg" {
				t.Errorf("GetSettings reply payload %s", dissecttest.DescribeValue(p))
			}
			if d.Field("request_code").Role != dissect.RoleRequestKey || d.Field("latency_ms").Role != dissect.RoleLatency || d.Field("latency_ms").Unit != "ms" {
				t.Error("GetSettings reply roles")
			}
		case r.Type == TypeTelemetry:
			p, _ := r.Fields.Get("payload")
			if g, ok := p.Get("executable_gesture"); ok {
				f := findDecl(d.Field("payload").Fields, "executable_gesture")
				if f == nil || f.Kind != dissect.KindString || g.Kind() != dissect.KindString {
					t.Errorf("executable_gesture %v declared %+v", g, f)
				}
			}
		}
	}
}

func findDecl(fs []dissect.FieldDecl, name string) *dissect.FieldDecl {
	for i := range fs {
		if fs[i].Name == name {
			return &fs[i]
		}
	}
	return nil
}
