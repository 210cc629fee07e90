package handcontrol

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/pbwalk"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

const userHand = `syntax = "proto3";
package telemetry;
import "common/units.proto";

// The user's own names for the finger positions.
message SetPositions {
  int32 index = 1;
  int32 middle = 2;
  int32 ring = 3;
  int32 little = 4;
  int32 thumb = 5;
  common.Unit unit = 6;
}
`

const userUnits = `syntax = "proto3";
package common;
enum Unit {
  UNIT_PERCENT = 0;
  UNIT_DEGREES = 1;
}
`

// A Telemetry in another package is matched by its short name.
const userOther = `syntax = "proto3";
package com.example.hand;
message Telemetry {
  sint32 temperature = 1;
  repeated int32 samples = 2;
}
`

func TestUserSchema(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "hand.proto"), userHand)
	writeFile(t, filepath.Join(dir, "common", "units.proto"), userUnits)
	writeFile(t, filepath.Join(dir, "other.proto"), userOther)
	opt := Options{ProtoPaths: []string{dir}, ProtoFiles: []string{filepath.Join(dir, "hand.proto"), "other.proto"}}

	setPos := frame(codeSetPositions, cat(setPositionsPayload(10, 20, 30, 40, 50), pvar(6, 1)))
	start := h("fd ba dc 01 50 b4 11 ff 0e 02 00 08 64 ed")
	// temperature -3 (zigzag 5), samples packed [1, 300].
	tel := frame(codeTelemetry, cat(pvar(1, 5), pbytes(2, h("01 ac 02"))))
	reg := registry(t, opt)
	recs, notes := feedStream(t, reg, true, []event{
		{dir: 0, at: t0, data: cat(setPos, start)},
		{dir: 1, at: t0, data: tel},
		{dir: 0, at: t0}, {dir: 1, at: t0},
	}, nil)
	if len(recs) != 3 {
		t.Fatalf("%d records", len(recs))
	}
	checkFields(t, recs[0].Fields[5:], []kv{{"payload", obj(kv{"index", i64(10)}, kv{"middle", i64(20)}, kv{"ring", i64(30)}, kv{"little", i64(40)},
		kv{"thumb", i64(50)}, kv{"unit", str("UNIT_DEGREES")})}, {"schema", str("hand.proto+other.proto")}})
	checkFields(t, recs[1].Fields[5:], []kv{{"payload", obj(kv{"interval_ms", i64(100)})}, {"schema", str("v2")}})
	checkFields(t, recs[2].Fields[5:], []kv{{"payload", obj(kv{"temperature", i64(-3)}, kv{"samples", arr(i64(1), i64(300))})}, {"schema", str("hand.proto+other.proto")}})
	// Besides the schema note, the stream's end notes the two requests the
	// test never answers (the framework's end-of-stream hook).
	if len(notes) != 3 || notes[1] != "handcontrol: stream 2: request SetPositions at offset 0 was never answered" ||
		notes[2] != "handcontrol: stream 2: request StartTelemetry at offset 24 was never answered" {
		t.Errorf("notes %q", notes)
	}
	if len(notes) == 0 || !strings.HasPrefix(notes[0], "handcontrol: the user schema has no message errors.Error, settings.GetSettings, settings.SetSettings, telemetry.GetGestures,") ||
		!strings.HasSuffix(notes[0], "patterns.SetMioPatterns; the built-in v2 messages are used for them") ||
		strings.Contains(notes[0], msgSetPositions) || strings.Contains(notes[0], msgTelemetry+",") {
		t.Errorf("notes %q", notes)
	}
}

func TestUserSchemaErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "broken.proto"), "syntax = \"proto3\";\npackage x;\nmessage A {\n  int32 a = ;\n}\n")
	_, err := New(Options{ProtoPaths: []string{dir}, ProtoFiles: []string{"broken.proto"}})
	if err == nil {
		t.Fatal("no error for a broken .proto")
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "handcontrol: user schema: broken.proto:4:") || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line naming broken.proto:4", msg)
	}
	// Without import paths the file is opened as given.
	_, err = New(Options{ProtoFiles: []string{filepath.Join(dir, "broken.proto")}})
	if err == nil || !strings.Contains(err.Error(), "broken.proto:4:") {
		t.Errorf("error %v", err)
	}
	_, err = New(Options{ProtoPaths: []string{dir}, ProtoFiles: []string{"missing.proto"}})
	if err == nil || !strings.Contains(err.Error(), "missing.proto") {
		t.Errorf("missing file: error %v", err)
	}
}

// TestBuiltinSchema checks the compiled built-in messages against the field
// tables of protocols.md §1.6/§1.7 (a few representative ones).
func TestBuiltinSchema(t *testing.T) {
	v2, v1, err := loadBuiltin()
	if err != nil {
		t.Fatal(err)
	}
	names := func(m *pbwalk.Message) string {
		var b []string
		for _, f := range m.Fields() {
			b = append(b, f.Name)
		}
		return strings.Join(b, ",")
	}
	for _, c := range []struct {
		m    *pbwalk.Message
		want string
	}{
		{v2[msgTelemetry], "emg_status,display_status,gyro_status,driver_status,last_time_sync,emg,executable_gesture,power,pointer_finger_position,middle_finger_position,ring_finger_position,little_finger_position,thumb_finger_position"},
		{v1[msgTelemetry], "telemetry_frequency,emg_status,display_status,gyro_status,driver_status,last_time_sync,emg,executable_gesture,power,pointer_finger_position,middle_finger_position,ring_finger_position,little_finger_position,thumb_finger_position"},
		{v2[msgSetSettings], "enable_emg,enable_display,enable_gyro,enable_driver,power_off"},
		{v1[msgSetSettings], "type_work,telemetry_frequency,enable_emg,enable_display,enable_gyro,enable_driver,power_off"},
		{v2["telemetry.Gesture"], "id,name,last_time_sync,iterable,repetitions,actions"},
		{v2[msgGetMioPatterns], "patterns"},
	} {
		if c.m == nil {
			t.Fatalf("missing message for %q", c.want)
		}
		if got := names(c.m); got != c.want {
			t.Errorf("%s: fields %s, want %s", c.m.Name(), got, c.want)
		}
	}
	for i, f := range v1[msgTelemetry].Fields() {
		if int(f.Number) != i+1 {
			t.Errorf("v1 Telemetry field %s is %d", f.Name, f.Number)
		}
	}
	// driver_status (4) = 5 is DRIVER_STATUS_SETTING_POSITION (§1.6).
	var rec dissect.Record
	var d pbwalk.Decoder
	got, _, _, err := d.Decode(&rec, v2[msgTelemetry], pvar(4, 5), true)
	if err != nil {
		t.Fatal(err)
	}
	checkFields(t, got, []kv{{"driver_status", str("DRIVER_STATUS_SETTING_POSITION")}})
	s, _ := newSchemaSet(Options{})
	if s.req[codeSetPositions].Name() != msgSetPositions || s.resp[codeGetTelemetry].Name() != msgGetTelemetry || s.quirk.Name() != msgGetMioPatterns ||
		s.resp[codeTelemetry].Name() != msgTelemetry || s.respV1[codeTelemetry] != v1[msgTelemetry] || s.req[codeGetSettings] != emptyMsg {
		t.Error("code table")
	}
}
