package mcapout

import (
	"strconv"
	"strings"
	"time"

	"github.com/dissect-tools/dissect/output"
)

// The Foxglove message types written (https://docs.foxglove.dev/docs/visualization/message-schemas),
// as JSON Schemas of our own in the subset Foxglove and Lichtblick parse
// (see node): the schema's name tells them the type, the fields are
// Foxglove's.
var (
	schemaPoseInFrame     = obj("foxglove.PoseInFrame", "timestamp", timeSchema, "frame_id", str, "pose", pose)
	schemaFrameTransforms = obj("foxglove.FrameTransforms", "transforms", arr(obj("foxglove.FrameTransform",
		"timestamp", timeSchema, "parent_frame_id", str, "child_frame_id", str,
		"translation", vector3, "rotation", quaternion)))
	schemaSceneUpdate = obj("foxglove.SceneUpdate",
		"deletions", arr(obj("foxglove.SceneEntityDeletion", "timestamp", timeSchema,
			"type", `{"type":"integer","description":"0 MATCHING_ID, 1 ALL"}`, "id", str)),
		"entities", arr(obj("foxglove.SceneEntity",
			"timestamp", timeSchema, "frame_id", str, "id", str,
			"lifetime", `{"type":"object","title":"duration","properties":{"sec":{"type":"integer"},"nsec":{"type":"integer","minimum":0,"maximum":999999999}}}`,
			"frame_locked", boolean,
			"metadata", arr(obj("foxglove.KeyValuePair", "key", str, "value", str)),
			"arrows", unused, "cubes", unused, "spheres", unused, "cylinders", unused,
			"lines", arr(obj("foxglove.LinePrimitive",
				"type", `{"type":"integer","description":"0 LINE_STRIP, 1 LINE_LOOP, 2 LINE_LIST"}`,
				"pose", pose, "thickness", num, "scale_invariant", boolean,
				"points", arr(obj("foxglove.Point3", "x", num, "y", num, "z", num)),
				"color", color, "colors", arr(color), "indices", arr(`{"type":"integer","minimum":0}`))),
			"triangles", unused, "texts", unused, "models", unused)))
	schemaLog = obj("foxglove.Log", "timestamp", timeSchema,
		"level", `{"type":"integer","description":"0 UNKNOWN, 1 DEBUG, 2 INFO, 3 WARNING, 4 ERROR, 5 FATAL"}`,
		"message", str, "name", str, "file", str, "line", `{"type":"integer","minimum":0}`)
)

const (
	num        = `{"type":"number"}`
	str        = `{"type":"string"}`
	boolean    = `{"type":"boolean"}`
	timeSchema = `{"type":"object","title":"time","properties":{"sec":{"type":"integer","minimum":0},"nsec":{"type":"integer","minimum":0,"maximum":999999999}}}`
	unused     = `{"type":"array","description":"not written by dissect (always empty)","items":{"type":"object","properties":{}}}`
)

var (
	vector3    = obj("foxglove.Vector3", "x", num, "y", num, "z", num)
	quaternion = obj("foxglove.Quaternion", "x", num, "y", num, "z", num, "w", num)
	pose       = obj("foxglove.Pose", "position", vector3, "orientation", quaternion)
	color      = obj("foxglove.Color", "r", num, "g", num, "b", num, "a", num)
)

// obj returns an object schema; kv are property names and their schemas.
func obj(title string, kv ...string) string {
	var b strings.Builder
	b.WriteString(`{"title":"` + title + `","type":"object","properties":{`)
	for i := 0; i < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + kv[i] + `":` + kv[i+1])
	}
	b.WriteString("}}")
	return b.String()
}

func arr(items string) string { return `{"type":"array","items":` + items + `}` }

// Log levels of foxglove.Log.
const (
	levelInfo    = 2
	levelWarning = 3
)

// appendTime appends a Foxglove time, {"sec":S,"nsec":N}; instants before
// 1970 are written as 0 (a Foxglove time is unsigned).
func appendTime(b []byte, t time.Time) []byte {
	ns := logTime(t)
	b = append(b, `{"sec":`...)
	b = strconv.AppendUint(b, ns/1e9, 10)
	b = append(b, `,"nsec":`...)
	b = strconv.AppendUint(b, ns%1e9, 10)
	return append(b, '}')
}

// logTime is t as MCAP's log time: nanoseconds since 1970, 0 before,
// 2^63-1 after that many (in 2262).
func logTime(t time.Time) uint64 {
	const last, second = 1<<63 - 1, int64(time.Second)
	s, ns := t.Unix(), int64(t.Nanosecond())
	switch {
	case s < 0:
		return 0
	case s > last/second || s == last/second && ns > last%second:
		return last
	}
	return uint64(s*second + ns)
}

// A vec is a position or quaternion with its components as JSON numbers,
// already formatted (the record's values exactly, float32 or float64),
// and as float64 for protobuf: x, y, z, w, in that order.
type vec struct {
	s [4][]byte
	f [4]float64
}

func appendXYZ(b []byte, v vec) []byte {
	b = append(b, `{"x":`...)
	b = append(b, v.s[0]...)
	b = append(b, `,"y":`...)
	b = append(b, v.s[1]...)
	b = append(b, `,"z":`...)
	b = append(b, v.s[2]...)
	return append(b, '}')
}

func appendQuat(b []byte, q vec) []byte {
	b = appendXYZ(b, q)
	b = b[:len(b)-1]
	b = append(b, `,"w":`...)
	b = append(b, q.s[3]...)
	return append(b, '}')
}

var identity = vec{[4][]byte{[]byte("0.0"), []byte("0.0"), []byte("0.0"), []byte("1.0")}, [4]float64{0, 0, 0, 1}}

// The line strips' look (appendLineScene writes the same in JSON).
var lineColor = vec{f: [4]float64{0.2, 0.6, 1, 1}}

const lineThickness = 2.0

// foxgloveJSONSchema is the JSON Schema of Foxglove's message type name.
func foxgloveJSONSchema(name string) string {
	switch name {
	case "foxglove.PoseInFrame":
		return schemaPoseInFrame
	case "foxglove.FrameTransforms":
		return schemaFrameTransforms
	case "foxglove.SceneUpdate":
		return schemaSceneUpdate
	}
	return schemaLog
}

// appendPoseInFrame appends a foxglove.PoseInFrame.
func appendPoseInFrame(b []byte, t time.Time, frame string, pos, q vec) []byte {
	b = append(b, `{"timestamp":`...)
	b = appendTime(b, t)
	b = append(b, `,"frame_id":`...)
	b = output.AppendString(b, frame)
	b = append(b, `,"pose":{"position":`...)
	b = appendXYZ(b, pos)
	b = append(b, `,"orientation":`...)
	b = appendQuat(b, q)
	return append(b, "}}"...)
}

// A transform is one foxglove.FrameTransform.
type transform struct {
	parent, child string
	pos, q        vec
}

// appendFrameTransforms appends a foxglove.FrameTransforms.
func appendFrameTransforms(b []byte, t time.Time, tfs []transform) []byte {
	b = append(b, `{"transforms":[`...)
	for i, tf := range tfs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"timestamp":`...)
		b = appendTime(b, t)
		b = append(b, `,"parent_frame_id":`...)
		b = output.AppendString(b, tf.parent)
		b = append(b, `,"child_frame_id":`...)
		b = output.AppendString(b, tf.child)
		b = append(b, `,"translation":`...)
		b = appendXYZ(b, tf.pos)
		b = append(b, `,"rotation":`...)
		b = appendQuat(b, tf.q)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// appendLineScene appends a foxglove.SceneUpdate with one entity holding
// one line strip through points (each point's x, y, z formatted).
func appendLineScene(b []byte, t time.Time, frame, id string, points []vec) []byte {
	b = append(b, `{"deletions":[],"entities":[{"timestamp":`...)
	b = appendTime(b, t)
	b = append(b, `,"frame_id":`...)
	b = output.AppendString(b, frame)
	b = append(b, `,"id":`...)
	b = output.AppendString(b, id)
	b = append(b, `,"lifetime":{"sec":0,"nsec":0},"frame_locked":true,"metadata":[],"arrows":[],"cubes":[],"spheres":[],"cylinders":[],`...)
	b = append(b, `"lines":[{"type":0,"pose":{"position":{"x":0.0,"y":0.0,"z":0.0},"orientation":{"x":0.0,"y":0.0,"z":0.0,"w":1.0}},`...)
	b = append(b, `"thickness":2.0,"scale_invariant":true,"points":[`...)
	for i, p := range points {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendXYZ(b, p)
	}
	b = append(b, `],"color":{"r":0.2,"g":0.6,"b":1.0,"a":1.0},"colors":[],"indices":[]}],`...)
	return append(b, `"triangles":[],"texts":[],"models":[]}]}`...)
}

// appendLog appends a foxglove.Log from dissect.
func appendLog(b []byte, t time.Time, level int, msg string) []byte {
	b = append(b, `{"timestamp":`...)
	b = appendTime(b, t)
	b = append(b, `,"level":`...)
	b = strconv.AppendInt(b, int64(level), 10)
	b = append(b, `,"message":`...)
	b = output.AppendString(b, msg)
	return append(b, `,"name":"dissect","file":"","line":0}`...)
}
