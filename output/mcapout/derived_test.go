package mcapout

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

const stamp = `{"sec":1795482123,"nsec":456789000}` // t0

// Pictures come from the declarations' roles: a pose from a Position
// array and an Orientation object, in its sender's frame with the
// transform to SENDER/sensorN; a named pose from the record's own x, y,
// z in the frame PROTO/STREAM; polylines of [x, y, z] and of {x, y, z}.
// The expected messages are written by hand from Foxglove's schemas.
func TestPictures(t *testing.T) {
	msgs, _, _ := write(t, Options{Decl: registry(t).Decl, Encoding: EncodingJSON},
		rec("p", "tracker", 1, f("sender", dissect.Str("T")), f("sensor", dissect.Int(0)), f("pos", floats(1, 2, 3)), f("quat", quat(0.5, 0.5, 0.5, 0.5))),
		rec("p", "tracker", 1, f("sender", dissect.Str("T")), f("sensor", dissect.Int(1)), f("pos", floats(4, 5, 6)), f("quat", quat(0, 0, 0, 1))),
		rec("p", "arm", 0, f("x", dissect.Float32(0.5)), f("y", dissect.Float32(-1)), f("z", dissect.Float32(0.25)), f("u", dissect.Float32(0))),
		rec("p", "path", 0, f("points", dissect.Array([]dissect.Field{dissect.Elem(floats(1, 2, 3)), dissect.Elem(floats(4, 5, 6))}))),
		rec("p", "trail", 0, f("points", dissect.Array([]dissect.Field{dissect.Elem(dissect.Object([]dissect.Field{
			f("x", dissect.Float(7)), f("y", dissect.Float(8)), f("z", dissect.Float(9))}))}))),
	)
	want := []struct{ topic, schema string }{
		{"/p/1/T/sensor0/tracker", "dissect.p.tracker"},
		{"/pose/p/1/T/sensor0", "foxglove.PoseInFrame"},
		{"/tf", "foxglove.FrameTransforms"},
		{"/p/1/T/sensor1/tracker", "dissect.p.tracker"},
		{"/pose/p/1/T/sensor1", "foxglove.PoseInFrame"},
		{"/tf", "foxglove.FrameTransforms"},
		{"/p/0/arm", "dissect.p.arm"},
		{"/pose/p/0/arm", "foxglove.PoseInFrame"},
		{"/tf", "foxglove.FrameTransforms"},
		{"/p/0/path", "dissect.p.path"},
		{"/scene/p/0/path", "foxglove.SceneUpdate"},
		{"/p/0/trail", "dissect.p.trail"},
		{"/scene/p/0/trail", "foxglove.SceneUpdate"},
	}
	if len(msgs) != len(want) {
		t.Fatalf("%d messages, want %d: %v", len(msgs), len(want), msgs)
	}
	for i, m := range msgs {
		if m.topic != want[i].topic || m.schema != want[i].schema {
			t.Errorf("message %d on %s (%s), want %s (%s)", i, m.topic, m.schema, want[i].topic, want[i].schema)
		}
	}
	exact := map[int]string{
		1: `{"timestamp":` + stamp + `,"frame_id":"T","pose":{"position":{"x":1.0,"y":2.0,"z":3.0},"orientation":{"x":0.5,"y":0.5,"z":0.5,"w":0.5}}}`,
		2: `{"transforms":[{"timestamp":` + stamp + `,"parent_frame_id":"world","child_frame_id":"T","translation":{"x":0.0,"y":0.0,"z":0.0},"rotation":{"x":0.0,"y":0.0,"z":0.0,"w":1.0}},` +
			`{"timestamp":` + stamp + `,"parent_frame_id":"T","child_frame_id":"T/sensor0","translation":{"x":1.0,"y":2.0,"z":3.0},"rotation":{"x":0.5,"y":0.5,"z":0.5,"w":0.5}}]}`,
		5: `{"transforms":[{"timestamp":` + stamp + `,"parent_frame_id":"T","child_frame_id":"T/sensor1","translation":{"x":4.0,"y":5.0,"z":6.0},"rotation":{"x":0.0,"y":0.0,"z":0.0,"w":1.0}}]}`,
		8: `{"transforms":[{"timestamp":` + stamp + `,"parent_frame_id":"world","child_frame_id":"p/0","translation":{"x":0.0,"y":0.0,"z":0.0},"rotation":{"x":0.0,"y":0.0,"z":0.0,"w":1.0}}]}`,
	}
	for i, w := range exact {
		if msgs[i].data != w {
			t.Errorf("message %d (%s):\n%s\nwant\n%s", i, msgs[i].topic, msgs[i].data, w)
		}
	}
	var arm struct {
		FrameID string `json:"frame_id"`
		Pose    struct {
			Position    struct{ X, Y, Z float64 }
			Orientation struct{ X, Y, Z, W float64 }
		}
	}
	if err := json.Unmarshal([]byte(msgs[7].data), &arm); err != nil {
		t.Fatal(err)
	}
	if p, o := arm.Pose.Position, arm.Pose.Orientation; arm.FrameID != "p/0" || p.X != 0.5 || p.Y != -1 || p.Z != 0.25 || o.X != 0 || o.Y != 0 || o.Z != 0 || o.W != 1 {
		t.Errorf("arm pose %s", msgs[7].data)
	}
	for i, pts := range map[int][][3]float64{10: {{1, 2, 3}, {4, 5, 6}}, 12: {{7, 8, 9}}} {
		var s struct {
			Entities []struct {
				FrameID string `json:"frame_id"`
				ID      string
				Lines   []struct {
					Type   int
					Points []struct{ X, Y, Z float64 }
				}
			}
		}
		if err := json.Unmarshal([]byte(msgs[i].data), &s); err != nil || len(s.Entities) != 1 || len(s.Entities[0].Lines) != 1 {
			t.Fatalf("scene %s: %v", msgs[i].data, err)
		}
		var got [][3]float64
		for _, p := range s.Entities[0].Lines[0].Points {
			got = append(got, [3]float64{p.X, p.Y, p.Z})
		}
		e := s.Entities[0]
		if e.FrameID != "p/0" || e.ID != strings.TrimPrefix(msgs[i].topic, "/scene/p/0/") || e.Lines[0].Type != 0 || !slices.Equal(got, pts) {
			t.Errorf("scene %d %s: %s", i, msgs[i].topic, msgs[i].data)
		}
	}
}

// A record whose coordinates are missing or not finite is kept on its
// record topic, not drawn, and /dissect/events says why.
func TestNotDrawn(t *testing.T) {
	msgs, _, _ := write(t, Options{Decl: registry(t).Decl, Encoding: EncodingJSON},
		rec("p", "tracker", 1, f("sender", dissect.Str("T")), f("sensor", dissect.Int(0)), f("pos", floats(math.Inf(1), 2, 3)), f("quat", quat(0, 0, 0, 1))),
		rec("p", "tracker", 1, f("sender", dissect.Str("T")), f("sensor", dissect.Int(0)), f("pos", floats(1, 2, 3))),
		rec("p", "tracker", 1, f("sender", dissect.Str("T")), f("sensor", dissect.Int(0)), f("pos", floats(1, 2)), f("quat", quat(0, 0, 0, 1))),
		rec("p", "arm", 0, f("x", dissect.Float32(0.5)), f("y", dissect.Float32(float32(math.NaN()))), f("z", dissect.Float32(0))),
		rec("p", "path", 0, f("points", dissect.Array([]dissect.Field{dissect.Elem(floats(1, 2))}))),
		rec("p", "trail", 0, f("points", dissect.Str("no"))),
	)
	var topics []string
	for _, m := range msgs {
		topics = append(topics, m.topic)
		if m.topic == "/dissect/events" && !strings.Contains(m.data, "not drawn: a coordinate is missing or not finite") {
			t.Errorf("event %s", m.data)
		}
	}
	want := "/p/1/T/sensor0/tracker /dissect/events /p/1/T/sensor0/tracker /dissect/events /p/1/T/sensor0/tracker /dissect/events " +
		"/p/0/arm /dissect/events /p/0/path /dissect/events /p/0/trail /dissect/events"
	if strings.Join(topics, " ") != want {
		t.Errorf("topics %v\nwant %s", topics, want)
	}
}

// No protocol is named in the package's code: what a record shows comes
// from its declaration.
func TestNoProtocolNamed(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no sources: %v", err)
	}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		low := strings.ToLower(string(src))
		for _, name := range []string{"vrpn", "deltarobot", "handcontrol", "roboid", "neptune", "tracker", "actuator", "\"sender\"", "\"sensor\"", "type_id"} {
			if strings.Contains(low, name) {
				t.Errorf("%s names %s", file, name)
			}
		}
	}
}

// A pose topic draws at most one pose per Options.PoseInterval of capture
// time (10 ms by default): the first record of each, and a record whose
// time goes back; the record topic keeps every record. A negative
// interval draws every record's. (The file has them in time order.)
func TestPoseInterval(t *testing.T) {
	var recs []*dissect.Record
	for _, ms := range []int{0, 3, 9, 10, 12, 25, 5} { // 5: back in time
		r := rec("p", "arm", 0, f("x", dissect.Float32(float32(ms))), f("y", dissect.Float32(0)), f("z", dissect.Float32(0)), f("u", dissect.Float32(0)))
		r.Time = t0.Add(time.Duration(ms) * time.Millisecond)
		recs = append(recs, r)
	}
	for _, c := range []struct {
		every time.Duration
		want  []uint64 // ms after t0 of the poses drawn
	}{{0, []uint64{0, 5, 10, 25}}, {-1, []uint64{0, 3, 5, 9, 10, 12, 25}}, {20 * time.Millisecond, []uint64{0, 5, 25}}} {
		msgs, _, _ := write(t, Options{Decl: registry(t).Decl, PoseInterval: c.every}, recs...)
		var poses []uint64
		records := 0
		for _, m := range msgs {
			switch m.topic {
			case "/pose/p/0/arm":
				poses = append(poses, (m.logTime-uint64(t0.UnixNano()))/1e6)
			case "/p/0/arm":
				records++
			}
		}
		if !slices.Equal(poses, c.want) || records != len(recs) {
			t.Errorf("interval %v: poses at %v ms, want %v; %d records of %d", c.every, poses, c.want, records, len(recs))
		}
	}
}

// A record within PoseInterval of the pose drawn last is not drawn and its
// coordinates are not read: a bad one then is not told on
// /dissect/events; one that would be drawn is, and the next good record
// is drawn.
func TestPoseIntervalUnread(t *testing.T) {
	nan := dissect.Float32(float32(math.NaN()))
	var recs []*dissect.Record
	for _, c := range []struct {
		ms int
		x  dissect.Value
	}{{0, dissect.Float32(1)}, {1, nan}, {10, nan}, {11, dissect.Float32(2)}} {
		r := rec("p", "arm", 0, f("x", c.x), f("y", dissect.Float32(0)), f("z", dissect.Float32(0)), f("u", dissect.Float32(0)))
		r.Time = t0.Add(time.Duration(c.ms) * time.Millisecond)
		recs = append(recs, r)
	}
	msgs, _, _ := write(t, Options{Decl: registry(t).Decl}, recs...)
	var got []string
	for _, m := range msgs {
		if m.topic != "/p/0/arm" {
			got = append(got, fmt.Sprintf("%s@%d", m.topic, (m.logTime-uint64(t0.UnixNano()))/1e6))
		}
	}
	want := "/pose/p/0/arm@0 /tf@0 /dissect/events@10 /pose/p/0/arm@11"
	if strings.Join(got, " ") != want {
		t.Errorf("derived messages %v, want %s", got, want)
	}
}
