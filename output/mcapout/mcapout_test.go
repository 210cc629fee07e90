package mcapout

import (
	"bytes"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/foxglove/mcap/go/mcap"
)

type msg struct {
	topic, schema, data string
	logTime             uint64
}

// write writes recs with o and reads the file back with the library's
// reader.
func write(t testing.TB, o Options, recs ...*dissect.Record) ([]msg, map[uint16]*mcap.Schema) {
	t.Helper()
	var buf bytes.Buffer
	w, err := New(&buf, o)
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
	rd, err := mcap.NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	info, err := rd.Info()
	if err != nil {
		t.Fatal(err)
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
		out = append(out, msg{c.Topic, s.Name, string(m.Data), m.LogTime})
	}
	return out, info.Schemas
}

var t0 = time.Date(2026, 11, 24, 1, 2, 3, 456789000, time.UTC)

func rec(proto, typ string, stream int, fs ...dissect.Field) *dissect.Record {
	return &dissect.Record{Time: t0, Proto: proto, Transport: dissect.TCP, Stream: stream, Src: "a:1", Dst: "b:2", Type: typ, Length: 4, Fields: fs}
}

func f(k string, v dissect.Value) dissect.Field { return dissect.Field{Key: k, Value: v} }

// The schema comes from the first record; later values that do not fit it
// keep their key and value in extra_json, in the JSON of -o json.
func TestMisfitsGoToExtraJSON(t *testing.T) {
	msgs, _ := write(t, Options{},
		rec("p", "t", 0, f("x", dissect.Float(1.5)), f("s", dissect.Str("a"))),
		rec("p", "t", 0, f("x", dissect.Float(math.NaN())), f("s", dissect.Int(3)), f("new", dissect.Bool(true))),
		rec("p", "t", 0, f("x", dissect.Int(2)), f("s", dissect.Str("b"))),
	)
	want := []string{
		`{"time":"2026-11-24T01:02:03.456789000Z","proto":"p","transport":"tcp","stream":0,"src":"a:1","dst":"b:2","offset":0,"length":4,"type":"t","fields":{"x":1.5,"s":"a"}}`,
		`{"time":"2026-11-24T01:02:03.456789000Z","proto":"p","transport":"tcp","stream":0,"src":"a:1","dst":"b:2","offset":0,"length":4,"type":"t","fields":{},"extra_json":"{\"x\":\"NaN\",\"s\":3,\"new\":true}"}`,
		`{"time":"2026-11-24T01:02:03.456789000Z","proto":"p","transport":"tcp","stream":0,"src":"a:1","dst":"b:2","offset":0,"length":4,"type":"t","fields":{"x":2,"s":"b"}}`,
	}
	if len(msgs) != len(want) {
		t.Fatalf("%d messages: %v", len(msgs), msgs)
	}
	for i, m := range msgs {
		if m.topic != "/p/0/t" || m.schema != "dissect.p.t" || m.data != want[i] {
			t.Errorf("message %d: %s %s %s\nwant /p/0/t dissect.p.t %s", i, m.topic, m.schema, m.data, want[i])
		}
		if m.logTime != uint64(t0.UnixNano()) {
			t.Errorf("log time %d", m.logTime)
		}
	}
}

// The documented fields make the schema (checked by hand against the
// FieldInfo rules: int/uint integer, float number, bytes/time string,
// "a[]" arrays, "a[].b" arrays of objects, "*" and arrays of arrays left
// out), and the first record adds the keys the documentation lacks.
func TestSchemaFromDocumentedFields(t *testing.T) {
	infos := []dissect.FieldInfo{
		{Name: "id", Type: "uint"},
		{Name: "pos[]", Type: "array of float", Types: []string{"t"}},
		{Name: "other", Type: "int", Types: []string{"u"}},
		{Name: "values[].raw", Type: "bytes"},
		{Name: "values[].angles[]", Type: "array of float"},
		{Name: "q", Type: "object"},
		{Name: "q.w", Type: "float"},
		{Name: "payload", Type: "object"},
		{Name: "payload.*", Type: "any"},
		{Name: "points[]", Type: "array of array of float"},
		{Name: "at", Type: "time"},
	}
	first := dissect.Fields{
		f("id", dissect.Str("not an int")),
		f("payload", dissect.Object([]dissect.Field{f("emg", dissect.Bool(true))})),
		f("extra", dissect.Array([]dissect.Field{dissect.Elem(dissect.Int(1))})),
	}
	got := string(fieldsNode(infos, "t", first).appendJSON(nil))
	want := `{"type":"object","properties":{` +
		`"id":{"type":"integer"},` +
		`"pos":{"type":"array","items":{"type":"number"}},` +
		`"values":{"type":"array","items":{"type":"object","properties":{"raw":{"type":"string"},"angles":{"type":"array","items":{"type":"number"}}}}},` +
		`"q":{"type":"object","properties":{"w":{"type":"number"}}},` +
		`"payload":{"type":"object","properties":{"emg":{"type":"boolean"}}},` +
		`"at":{"type":"string"},` +
		`"extra":{"type":"array","items":{"type":"integer"}}}}`
	if got != want {
		t.Errorf("schema\n%s\nwant\n%s", got, want)
	}
}

// Past MaxTopics, records go to one overflow topic per protocol, nothing
// is lost, and /dissect/events says so once.
func TestTopicLimit(t *testing.T) {
	var recs []*dissect.Record
	for s := range 5 {
		recs = append(recs, rec("p", "t", s, f("n", dissect.Int(int64(s)))))
	}
	msgs, _ := write(t, Options{MaxTopics: 3}, recs...)
	var topics []string
	events := 0
	for _, m := range msgs {
		if m.topic == "/dissect/events" {
			events++
			if !strings.Contains(m.data, "more than 3 topics") {
				t.Errorf("event %s", m.data)
			}
			continue
		}
		topics = append(topics, m.topic)
	}
	want := "/p/0/t /p/1/t /p/2/t /p/_overflow /p/_overflow"
	if strings.Join(topics, " ") != want || events != 1 {
		t.Errorf("topics %v and %d events, want %s and 1", topics, events, want)
	}
}

// Names from the wire become topic segments of [A-Za-z0-9_.-].
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
	msgs, _ := write(t, Options{}, rec("vrpn", "vrpn_Tracker Velocity", 2,
		f("sender", dissect.Str("../x y")), f("type_id", dissect.Int(5)), f("sensor", dissect.Int(1))))
	if msgs[0].topic != "/vrpn/2/.._x_y/sensor1/vrpn_Tracker_Velocity" {
		t.Errorf("topic %s", msgs[0].topic)
	}
}

// A tracker report with a coordinate that is not finite is kept on its
// record topic, not drawn, and /dissect/events says why.
func TestPoseNotDrawn(t *testing.T) {
	q := dissect.Object([]dissect.Field{f("x", dissect.Float(0)), f("y", dissect.Float(0)), f("z", dissect.Float(0)), f("w", dissect.Float(1))})
	pos := func(x float64) dissect.Value {
		return dissect.Array([]dissect.Field{dissect.Elem(dissect.Float(x)), dissect.Elem(dissect.Float(2)), dissect.Elem(dissect.Float(3))})
	}
	mk := func(x float64) *dissect.Record {
		return rec("vrpn", "vrpn_Tracker Pos_Quat", 1, f("sender", dissect.Str("T")), f("type_id", dissect.Int(4)),
			f("sensor", dissect.Int(0)), f("pos", pos(x)), f("quat", q))
	}
	msgs, _ := write(t, Options{}, mk(1), mk(math.Inf(1)))
	var got []string
	for _, m := range msgs {
		got = append(got, m.topic)
	}
	want := "/vrpn/1/T/sensor0/vrpn_Tracker_Pos_Quat /pose/vrpn/1/T/sensor0 /tf /vrpn/1/T/sensor0/vrpn_Tracker_Pos_Quat /dissect/events"
	if strings.Join(got, " ") != want {
		t.Fatalf("topics %v\nwant %s", got, want)
	}
	if !strings.Contains(msgs[4].data, "pose not drawn") || !strings.Contains(msgs[3].data, `"extra_json":"{\"pos\":[\"Inf\",2.0,3.0]}"`) {
		t.Errorf("event %s, record %s", msgs[4].data, msgs[3].data)
	}
	wantPose := `{"timestamp":{"sec":1795482123,"nsec":456789000},"frame_id":"T","pose":{"position":{"x":1.0,"y":2.0,"z":3.0},"orientation":{"x":0.0,"y":0.0,"z":0.0,"w":1.0}}}`
	if msgs[1].data != wantPose {
		t.Errorf("pose %s\nwant %s", msgs[1].data, wantPose)
	}
}

// BenchmarkWriter writes Deltarobot actuator positions: a record topic, a
// pose topic and zstd chunks.
func BenchmarkWriter(b *testing.B) {
	r := rec("deltarobot", "actuator_position", 0,
		f("x", dissect.Float32(0.1)), f("y", dissect.Float32(-0.02)), f("z", dissect.Float32(-0.35)), f("u", dissect.Float32(0)))
	r.Length = 21
	w, err := New(io.Discard, Options{})
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
}
