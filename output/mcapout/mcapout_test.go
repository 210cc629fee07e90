package mcapout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/internal/mcapcheck"
	"github.com/dissect-tools/dissect/output"
	"github.com/foxglove/mcap/go/mcap"
)

type msg struct {
	topic, schema, data string
	logTime             uint64
	meta                map[string]string
}

// write writes recs with o into a file and reads it back with the
// library's reader: the messages in file order and the schemas by name.
func write(t testing.TB, o Options, recs ...*dissect.Record) ([]msg, map[string]string, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "out.mcap")
	fh, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	w, err := New(fh, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	msgs, schemas := readBack(t, raw)
	return msgs, schemas, file
}

// readBack reads an MCAP file with the library's reader: the messages in
// file order and the schemas by name.
func readBack(t testing.TB, raw []byte) ([]msg, map[string]string) {
	t.Helper()
	rd, err := mcap.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	info, err := rd.Info()
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]string{}
	for _, s := range info.Schemas {
		if old, dup := schemas[s.Name]; dup && old != string(s.Data) {
			t.Errorf("two schemas named %s", s.Name)
		}
		schemas[s.Name] = string(s.Data)
	}
	it, err := rd.Messages(mcap.InOrder(mcap.FileOrder))
	if err != nil {
		t.Fatal(err)
	}
	var out []msg
	for {
		s, c, m, err := it.NextInto(nil)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, msg{c.Topic, s.Name, string(m.Data), m.LogTime, c.Metadata})
	}
	return out, schemas
}

var t0 = time.Date(2026, 11, 24, 1, 2, 3, 456789000, time.UTC)

func rec(proto, typ string, stream int, fs ...dissect.Field) *dissect.Record {
	return &dissect.Record{Time: t0, Frame: 3, Proto: proto, Transport: dissect.TCP, Stream: stream, Src: "a:1", Dst: "b:2", Type: typ, Length: 4, Fields: fs}
}

func f(k string, v dissect.Value) dissect.Field { return dissect.Field{Key: k, Value: v} }

func floats(xs ...float64) dissect.Value {
	var it []dissect.Field
	for _, x := range xs {
		it = append(it, dissect.Elem(dissect.Float(x)))
	}
	return dissect.Array(it)
}

func quat(x, y, z, w float64) dissect.Value {
	return dissect.Object([]dissect.Field{f("x", dissect.Float(x)), f("y", dissect.Float(y)), f("z", dissect.Float(z)), f("w", dissect.Float(w))})
}

// describer is a protocol that only declares its types.
type describer struct{ info dissect.Info }

func (p describer) Info() dissect.Info { return p.info }
func (describer) Detect(*dissect.StreamInfo, dissect.Dir, []byte) dissect.Verdict {
	return dissect.No
}
func (describer) NewParser(*dissect.StreamInfo) dissect.Parser { return nil }

func fd(name string, k dissect.Kind) dissect.FieldDecl {
	return dissect.FieldDecl{Name: name, Kind: k, Required: true}
}

func arrayOf(name string, elem dissect.FieldDecl) dissect.FieldDecl {
	return dissect.FieldDecl{Name: name, Kind: dissect.KindArray, Elem: &elem}
}

// registry declares the synthetic protocol "p": a tracker (sender,
// sensor, pose from pos and quat), an arm (pose from its own x, y, z,
// named), a path (polyline of points [x, y, z]), a trail (polyline of
// {x, y, z}), get (variants request and response), plain (a float and an
// unsigned int), and "*".
func registry(t testing.TB) *dissect.Registry {
	t.Helper()
	xyz := func(k dissect.Kind) []dissect.FieldDecl {
		return []dissect.FieldDecl{fd("x", k), fd("y", k), fd("z", k)}
	}
	f64 := dissect.FieldDecl{Kind: dissect.KindFloat}
	types := []dissect.TypeDecl{
		{Type: "tracker", Fields: []dissect.FieldDecl{
			{Name: "sender", Kind: dissect.KindString, Role: dissect.RoleSender},
			{Name: "sensor", Kind: dissect.KindInt, Role: dissect.RoleSensor},
			arrayOf("pos", f64),
			{Name: "quat", Kind: dissect.KindObject, Fields: append(xyz(dissect.KindFloat), fd("w", dissect.KindFloat))},
		}, Pose: &dissect.Pose{Position: "pos", Orientation: "quat"}},
		{Type: "arm", Fields: append(xyz(dissect.KindFloat32), fd("u", dissect.KindFloat32)), Pose: &dissect.Pose{Name: "arm"}},
		{Type: "path", Fields: []dissect.FieldDecl{arrayOf("points", dissect.FieldDecl{Kind: dissect.KindArray, Elem: &f64})}, Polyline: "points"},
		{Type: "trail", Fields: []dissect.FieldDecl{arrayOf("points", dissect.FieldDecl{Kind: dissect.KindObject, Fields: xyz(dissect.KindFloat)})}, Polyline: "points"},
		{Type: "get", Variant: &dissect.Variant{Key: "role", Value: "request"}, Fields: []dissect.FieldDecl{
			fd("role", dissect.KindString), fd("code", dissect.KindUint)}},
		{Type: "get", Variant: &dissect.Variant{Key: "role", Value: "response"}, Fields: []dissect.FieldDecl{
			fd("role", dissect.KindString), fd("code", dissect.KindUint),
			{Name: "payload", Kind: dissect.KindObject, Fields: []dissect.FieldDecl{
				{Name: "gain", Kind: dissect.KindFloat}, {Name: "names", Kind: dissect.KindArray, Elem: &dissect.FieldDecl{Kind: dissect.KindString}}}}}},
		{Type: "plain", Fields: []dissect.FieldDecl{fd("n", dissect.KindUint), {Name: "v", Kind: dissect.KindFloat}}},
		{Type: "*", Fields: []dissect.FieldDecl{{Name: "data", Kind: dissect.KindBytes}}},
	}
	reg, err := dissect.NewRegistry(describer{dissect.Info{Name: "p", Proto: "p", Types: types}})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// jsonOf is the record as -o json writes it (without its newline).
func jsonOf(r *dissect.Record) string {
	return strings.TrimSuffix(string(output.NewJSONAppender().AppendRecord(nil, r)), "\n")
}

// Every record is its message whole, as -o json writes it: floats that
// are not finite, arrays of arrays, variants, a payload object, an
// undeclared record; one schema per declaration, named after it, shared
// by the topics of its records.
func TestRecordsWhole(t *testing.T) {
	reg := registry(t)
	recs := []*dissect.Record{
		rec("p", "plain", 0, f("n", dissect.Uint(7)), f("v", dissect.Float(1.5))),
		rec("p", "plain", 0, f("n", dissect.Uint(8)), f("v", dissect.Float(math.NaN()))),
		rec("p", "plain", 1, f("n", dissect.Uint(9)), f("v", dissect.Float(math.Inf(-1)))),
		rec("p", "path", 0, f("points", dissect.Array([]dissect.Field{dissect.Elem(floats(1, 2, 3)), dissect.Elem(floats(4, 5, 6))}))),
		rec("p", "get", 0, f("role", dissect.Str("request")), f("code", dissect.Uint(3))),
		rec("p", "get", 0, f("role", dissect.Str("response")), f("code", dissect.Uint(3)),
			f("payload", dissect.Object([]dissect.Field{f("gain", dissect.Float(math.Inf(1))), f("names", dissect.Array([]dissect.Field{dissect.Elem(dissect.Str("a"))}))}))),
		rec("p", "mystery thing", 0, f("data", dissect.Bytes([]byte{0xab}))),
		rec("p", "other thing", 0, f("data", dissect.Bytes([]byte{0xcd}))),
		rec("q", "undeclared", 0, f("anything", dissect.Float(math.NaN()))),
		rec("p", dissect.TypeGap, 0),
		rec("", dissect.TypeGap, 3),
	}
	msgs, schemas, _ := write(t, Options{Decl: reg.Decl, Encoding: EncodingJSON}, recs...)
	want := []struct{ topic, schema string }{
		{"/p/0/plain", "dissect.p.plain"},
		{"/p/0/plain", "dissect.p.plain"},
		{"/p/1/plain", "dissect.p.plain"},
		{"/p/0/path", "dissect.p.path"},
		{"/p/0/get.request", "dissect.p.get.request"},
		{"/p/0/get.response", "dissect.p.get.response"},
		{"/p/0/mystery_thing", "dissect.p.*"},
		{"/p/0/other_thing", "dissect.p.*"},
		{"/q/0/undeclared", "dissect.undeclared"},
		{"/p/0/gap", "dissect.gap"},
		{"/unknown/3/gap", "dissect.gap"},
	}
	var records []msg
	for _, m := range msgs {
		if strings.HasPrefix(m.schema, "dissect.") {
			records = append(records, m)
		}
	}
	if len(records) != len(want) {
		t.Fatalf("%d record messages, want %d: %v", len(records), len(want), records)
	}
	for i, m := range records {
		if m.topic != want[i].topic || m.schema != want[i].schema {
			t.Errorf("record %d on %s (%s), want %s (%s)", i, m.topic, m.schema, want[i].topic, want[i].schema)
		}
		if j := jsonOf(recs[i]); m.data != j {
			t.Errorf("record %d:\n%s\nwant -o json's\n%s", i, m.data, j)
		}
		if m.logTime != uint64(t0.UnixNano()) {
			t.Errorf("log time %d", m.logTime)
		}
	}
	// By hand, from -o json's rules: NaN and infinities as strings.
	if records[1].data != `{"time":"2026-11-24T01:02:03.456789000Z","frame":3,"proto":"p","transport":"tcp","stream":0,"src":"a:1","dst":"b:2","offset":0,"length":4,"type":"plain","fields":{"n":8,"v":"NaN"}}` {
		t.Errorf("NaN record %s", records[1].data)
	}
	if !strings.Contains(records[3].data, `"fields":{"points":[[1.0,2.0,3.0],[4.0,5.0,6.0]]}`) {
		t.Errorf("array of arrays %s", records[3].data)
	}
	for _, name := range []string{"dissect.p.plain", "dissect.p.path", "dissect.p.get.request", "dissect.p.get.response", "dissect.p.*"} {
		proto, table, _ := strings.Cut(strings.TrimPrefix(name, "dissect."), ".")
		var decl *dissect.TypeDecl
		for _, d := range reg.Types(proto) {
			if d.Table() == table {
				decl = d
			}
		}
		if decl == nil || schemas[name] != string(dissect.AppendFoxgloveRecordSchema(nil, proto, decl)) {
			t.Errorf("schema %s is not its declaration's:\n%s", name, schemas[name])
		}
	}
	if schemas["dissect.gap"] != string(dissect.AppendFoxgloveRecordSchema(nil, "*", reg.Types("*")[0])) {
		t.Errorf("gap schema %s", schemas["dissect.gap"])
	}
	if len(schemas) != 10 { // the five above, gap, undeclared, and foxglove.Log, SceneUpdate, FrameTransforms
		t.Errorf("%d schemas: %v", len(schemas), schemas)
	}
}

// The Foxglove form of a declaration's schema, checked by hand against
// dissect.AppendFoxgloveRecordSchema's rules: a float, which may be a
// string, is declared in an allOf, an unsigned int in the properties with
// minimum 0, the record's proto and type pinned with their type.
func TestSchemaForm(t *testing.T) {
	_, schemas, _ := write(t, Options{Decl: registry(t).Decl, Encoding: EncodingJSON}, rec("p", "plain", 0, f("n", dissect.Uint(7))))
	var s struct {
		Properties map[string]json.RawMessage
	}
	if err := json.Unmarshal([]byte(schemas["dissect.p.plain"]), &s); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"fields": `{"type":"object","properties":{"n":{"type":"integer","minimum":0}},"required":["n"],` +
			`"allOf":[{"properties":{"v":{"anyOf":[{"type":"number"},{"enum":["NaN","Inf","-Inf"]}]}},"required":[]}],` +
			`"unevaluatedProperties":false}`,
		"proto":     `{"type":"string","const":"p"}`,
		"type":      `{"type":"string","const":"plain"}`,
		"transport": `{"type":"string","enum":["tcp","udp","serial"]}`,
	}
	for k, v := range want {
		if string(s.Properties[k]) != v {
			t.Errorf("%s: %s\nwant %s", k, s.Properties[k], v)
		}
	}
}

// The independent reader (Foxglove's @mcap/core, Ajv) finds every schema
// in Foxglove's subset and every message, NaN and arrays of arrays
// included, valid against its channel's schema.
func TestFoxgloveReadsEverySchema(t *testing.T) {
	if err := mcapcheck.Available(); err != nil {
		t.Skip(err.Error())
	}
	reg := registry(t)
	_, _, file := write(t, Options{Decl: reg.Decl, Encoding: EncodingJSON},
		rec("p", "plain", 0, f("n", dissect.Uint(8)), f("v", dissect.Float(math.NaN()))),
		rec("p", "tracker", 1, f("sender", dissect.Str("T")), f("sensor", dissect.Int(0)), f("pos", floats(math.Inf(1), 2, 3)), f("quat", quat(0, 0, 0, 1))),
		rec("p", "tracker", 1, f("sender", dissect.Str("T")), f("sensor", dissect.Int(0)), f("pos", floats(1, 2, 3)), f("quat", quat(0, 0, 0, 1))),
		rec("p", "arm", 0, f("x", dissect.Float32(0.5)), f("y", dissect.Float32(-1)), f("z", dissect.Float32(float32(math.NaN()))), f("u", dissect.Float32(0))),
		rec("p", "path", 0, f("points", dissect.Array([]dissect.Field{dissect.Elem(floats(1, 2, 3))}))),
		rec("p", "get", 0, f("role", dissect.Str("response")), f("code", dissect.Uint(3)),
			f("payload", dissect.Object([]dissect.Field{f("gain", dissect.Float(math.Inf(-1)))}))),
		rec("p", "x y", 0, f("data", dissect.Bytes([]byte{1}))),
		rec("q", "undeclared", 0, f("anything", floats(math.NaN()))),
		rec("", dissect.TypeSkipped, 2, f("reason", dissect.Str("why"))),
	)
	res := mcapcheck.Check(t, file)
	for _, p := range res.Problems {
		t.Errorf("problem: %v", p)
	}
	if res.MessagesRead < 9 {
		t.Errorf("%d messages read", res.MessagesRead)
	}
	// A message that departs from its declaration is refused: the check
	// can fail.
	_, _, bad := write(t, Options{Decl: reg.Decl, Encoding: EncodingJSON}, rec("p", "plain", 0, f("n", dissect.Int(-1))))
	if res := mcapcheck.Check(t, bad); len(res.Problems) != 1 || !strings.Contains(fmt.Sprint(res.Problems[0]), "fields/n must be >= 0") {
		t.Errorf("a record against its declaration: problems %v", res.Problems)
	}
}

// Records without a declaration are written whole, counted, and told
// once per topic on /dissect/events.
func TestUndeclared(t *testing.T) {
	var buf bytes.Buffer
	w, err := New(&buf, Options{Decl: registry(t).Decl})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*dissect.Record{rec("q", "a", 0), rec("q", "a", 0), rec("p", "plain", 0, f("n", dissect.Uint(1))), rec("p", "get", 0, f("role", dissect.Str("telemetry")))} {
		if err := w.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	if n := w.Undeclared(); n != 3 {
		t.Errorf("Undeclared() = %d, want 3", n)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	msgs, _, _ := write(t, Options{}, rec("q", "a", 0), rec("q", "a", 0))
	var events []string
	for _, m := range msgs {
		if m.topic == "/dissect/events" {
			events = append(events, m.data)
		} else if m.schema != "dissect.undeclared" || m.topic != "/q/0/a" {
			t.Errorf("%s on %s", m.schema, m.topic)
		}
	}
	if len(events) != 1 || !strings.Contains(events[0], "/q/0/a: q a records have no declaration") {
		t.Errorf("events %v", events)
	}
}

// Past MaxTopics, records go to one overflow topic per protocol, nothing
// is lost, and /dissect/events says so once.
func TestTopicLimit(t *testing.T) {
	var recs []*dissect.Record
	for s := range 5 {
		recs = append(recs, rec("p", "plain", s, f("n", dissect.Uint(uint64(s)))))
	}
	msgs, _, _ := write(t, Options{MaxTopics: 3, Decl: registry(t).Decl, Encoding: EncodingJSON}, recs...)
	var topics []string
	events := 0
	for i, m := range msgs {
		if m.topic == "/dissect/events" {
			events++
			if !strings.Contains(m.data, "more than 3 topics") {
				t.Errorf("event %s", m.data)
			}
			continue
		}
		topics = append(topics, m.topic)
		if m.data != jsonOf(recs[len(topics)-1]) {
			t.Errorf("message %d: %s", i, m.data)
		}
	}
	want := "/p/0/plain /p/1/plain /p/2/plain /p/_overflow /p/_overflow"
	if strings.Join(topics, " ") != want || events != 1 {
		t.Errorf("topics %v and %d events, want %s and 1", topics, events, want)
	}
}

// Names from the wire become topic segments of [A-Za-z0-9_.-]; a record
// of a type with a sender and a sensor has them in its topic; a topic
// name taken by a channel of another schema is not shared.
func TestTopicNamesFromTheWire(t *testing.T) {
	for in, want := range map[string]string{
		"Tracker0":              "Tracker0",
		"vrpn_Tracker Pos_Quat": "vrpn_Tracker_Pos_Quat",
		"a/b\x00c\x1b[31m":      "a_b_c__31m",
		"zé":                    "z_",
		"":                      "_",
		strings.Repeat("x", 70): strings.Repeat("x", 64),
	} {
		if got := seg(in); got != want {
			t.Errorf("seg(%q) = %q, want %q", in, got, want)
		}
	}
	msgs, _, _ := write(t, Options{Decl: registry(t).Decl, Encoding: EncodingJSON},
		rec("p", "tracker", 2, f("sender", dissect.Str("../x y")), f("sensor", dissect.Int(1))),
		rec("p", "tracker", 2, f("sender", dissect.Str("S")), f("sensor", dissect.Str("not a number"))),
		rec("p", "tracker", 2, f("sender", dissect.Str(""))),
		rec("p", "get", 0, f("role", dissect.Str("request")), f("code", dissect.Uint(1))),
		rec("p", "get.request", 0, f("data", dissect.Bytes([]byte{1}))), // a "*" type named like the variant's table
		rec("p", "get request", 0, f("data", dissect.Bytes([]byte{2}))),
		rec("p", "get.request", 0, f("data", dissect.Bytes([]byte{3}))),
	)
	var topics []string
	for _, m := range msgs {
		if strings.HasPrefix(m.schema, "dissect.") {
			topics = append(topics, m.topic+" "+m.schema)
		}
	}
	want := "/p/2/.._x_y/sensor1/tracker dissect.p.tracker,/p/2/S/tracker dissect.p.tracker,/p/2/tracker dissect.p.tracker," +
		"/p/0/get.request dissect.p.get.request,/p/0/get.request~2 dissect.p.*,/p/0/get_request dissect.p.*,/p/0/get.request~2 dissect.p.*"
	if strings.Join(topics, ",") != want {
		t.Errorf("topics %v, want %s", topics, want)
	}
}

// BenchmarkWriter writes a type with a pose from its own x, y, z: a
// record topic and a pose topic, in 4 MiB chunks compressed on the default
// two workers, for each compression. An op is a record (and its pose):
// allocs/op is allocations per record, MB/s of the record's wire bytes.
func BenchmarkWriter(b *testing.B) {
	for _, comp := range []string{CompressionNone, CompressionLZ4, CompressionZstd} {
		b.Run(comp, func(b *testing.B) {
			r := rec("p", "arm", 0,
				f("x", dissect.Float32(0.1)), f("y", dissect.Float32(-0.02)), f("z", dissect.Float32(-0.35)), f("u", dissect.Float32(0)))
			r.Length = 21
			w, err := New(io.Discard, Options{Decl: registry(b).Decl, Compression: comp})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(r.Length)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				r.Time = t0.Add(time.Duration(i) * time.Millisecond)
				if err := w.Record(r); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
