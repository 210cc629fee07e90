package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"github.com/dissect-tools/dissect/internal/longtest"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/all"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/internal/mcapcheck"
	"github.com/dissect-tools/dissect/output/mcapout"
	"github.com/foxglove/mcap/go/mcap"
)

// mcapMessage is a message read back with the MCAP library's own reader.
type mcapMessage struct {
	topic, schema string
	logTime       uint64
	data          []byte
}

// readMCAP reads every message of an MCAP file through its summary and
// indexes, in file order, and the file's info.
func readMCAP(t *testing.T, r io.ReadSeeker) ([]mcapMessage, *mcap.Info) {
	t.Helper()
	rd, err := mcap.NewReader(r)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	info, err := rd.Info()
	if err != nil {
		t.Fatal(err)
	}
	it, err := rd.Messages(mcap.UsingIndex(true), mcap.InOrder(mcap.FileOrder))
	if err != nil {
		t.Fatal(err)
	}
	var out []mcapMessage
	for {
		s, c, m, err := it.NextInto(nil)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, mcapMessage{topic: c.Topic, schema: s.Name, logTime: m.LogTime, data: slices.Clone(m.Data)})
	}
	return out, info
}

// writeMCAP runs -o mcap on a capture, with args (the capture last),
// and returns the file and the run's JSON Lines.
func writeMCAP(t *testing.T, args ...string) (string, string) {
	t.Helper()
	return writeMCAPAs(t, "protobuf", args...)
}

// writeMCAPAs is writeMCAP with --mcap-encoding enc.
func writeMCAPAs(t *testing.T, enc string, args ...string) (string, string) {
	t.Helper()
	capFile := args[len(args)-1]
	out, errOut, code := cli(t, append([]string{"-o", "json", "--no-summary"}, args...)...)
	if code != 0 {
		t.Fatalf("%s: json exit %d: %s", capFile, code, errOut)
	}
	file := filepath.Join(t.TempDir(), filepath.Base(capFile)+".mcap")
	_, errOut, code = cli(t, append([]string{"-o", "mcap", "--mcap-encoding", enc, "--out", file, "--no-summary"}, args...)...)
	if code != 0 {
		t.Fatalf("%s: mcap exit %d: %s", capFile, code, errOut)
	}
	return file, out
}

// shipped returns the arguments of a run on a shipped capture: its
// sidecar's decode-as rule and decoder options, then the capture.
func shipped(t *testing.T, name string) []string {
	capFile := filepath.Join(pcapDir, name)
	return append(truthFlags(dissecttest.ReadCapture(t, capFile)), capFile)
}

func (r schemaRun) name() string {
	return strings.Join(append(slices.Clone(r.protoFlags), filepath.Base(r.args[len(r.args)-1])), " ")
}

func (r schemaRun) all() []string { return append(slices.Clone(r.protoFlags), r.args...) }

// canonicalJSON decodes raw (numbers kept as their text) and encodes it
// again with sorted keys.
func canonicalJSON(t *testing.T, raw []byte) string {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readRecords reads file with the independent reader and fails the test
// unless every message is valid against its schema and the records, as
// JavaScript parses them, are those of jsonl.
func readRecords(t *testing.T, file, jsonl string) *mcapcheck.Result {
	t.Helper()
	res := mcapcheck.CheckRecords(t, file, jsonl)
	for _, p := range res.Problems {
		t.Errorf("problem: %v", p)
	}
	if rs := res.Records; rs.MCAP != rs.JSON || len(rs.Differ) > 0 {
		for _, d := range rs.Differ {
			t.Errorf("records differ:\nmcap %v\njson %v", deref(d.MCAP), deref(d.JSON))
		}
		t.Fatalf("%d records read, %d written", rs.MCAP, rs.JSON)
	}
	return res
}

func deref(s *string) string {
	if s == nil {
		return "(none)"
	}
	return *s
}

// TestMCAPHoldsEveryRecord writes every shipped and real capture as MCAP
// (--mcap-encoding json: the protobuf form is compared by
// TestMCAPIndependentReader) and reads it back with the MCAP library's
// reader: the record topics hold
// exactly the records of -o json, in log-time order, each whole (numbers
// as their text), at its capture time, on a topic named after its
// protocol and stream, with a schema of its declaration (none
// undeclared); the file is zstd-chunked and indexed, and its statistics
// count what was read.
func TestMCAPHoldsEveryRecord(t *testing.T) {
	for _, run := range sampleRuns(t) {
		t.Run(run.name(), func(t *testing.T) {
			file, jsonl := writeMCAPAs(t, "json", run.all()...)
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			msgs, info := readMCAP(t, f)
			// The file has a chunk's messages in log-time order (records
			// of the same time in their order): -o json's records
			// sorted so, a time before 1970 being log time 0.
			type timed struct {
				t    int64
				line string
			}
			var lines []timed
			for _, line := range strings.Split(strings.TrimSpace(jsonl), "\n") {
				var r jsonRecord
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatal(err)
				}
				at, err := time.Parse(time.RFC3339Nano, r.Time)
				if err != nil {
					t.Fatal(err)
				}
				lines = append(lines, timed{max(at.UnixNano(), 0), canonicalJSON(t, []byte(line))})
			}
			slices.SortStableFunc(lines, func(a, b timed) int { return cmp.Compare(a.t, b.t) })
			var want, got []string
			for _, l := range lines {
				want = append(want, l.line)
			}
			for _, m := range msgs {
				if m.topic == "/dissect/events" && strings.Contains(string(m.data), "no declaration") {
					t.Errorf("event %s", m.data)
				}
				if !strings.HasPrefix(m.schema, "dissect.") {
					continue
				}
				if m.schema == "dissect.undeclared" {
					t.Errorf("a record without a declaration on %s: %s", m.topic, m.data)
				}
				got = append(got, canonicalJSON(t, m.data))
				var r jsonRecord
				if err := json.Unmarshal(m.data, &r); err != nil {
					t.Fatal(err)
				}
				proto := *r.Proto
				if proto == "" {
					proto = "unknown"
				}
				if prefix := fmt.Sprintf("/%s/%d/", proto, *r.Stream); !strings.HasPrefix(m.topic, prefix) {
					t.Errorf("%s record on topic %s, want %s...", r.Type, m.topic, prefix)
				}
				if want := "dissect." + *r.Proto + "." + r.Type; m.schema != want && !strings.HasPrefix(m.schema, want+".") &&
					m.schema != "dissect."+r.Type && m.schema != "dissect."+*r.Proto+".*" {
					t.Errorf("%s %s record with schema %s", *r.Proto, r.Type, m.schema)
				}
				at, err := time.Parse(time.RFC3339Nano, r.Time)
				if err != nil || uint64(at.UnixNano()) != m.logTime {
					t.Errorf("%s at %s has log time %d", r.Type, r.Time, m.logTime)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("%d record messages, %d JSON records", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("record %d differs:\nmcap %s\njson %s", i, got[i], want[i])
				}
			}
			if info.Statistics == nil || info.Statistics.MessageCount != uint64(len(msgs)) {
				t.Errorf("statistics count %v messages, %d read", info.Statistics, len(msgs))
			}
			if len(info.ChunkIndexes) == 0 {
				t.Error("no chunk index")
			}
			for _, ci := range info.ChunkIndexes {
				if ci.Compression != mcap.CompressionZSTD {
					t.Errorf("chunk compressed with %q", ci.Compression)
				}
			}
		})
	}
}

// TestMCAPPoses checks the pictures against the records: every VRPN
// tracker report is a PoseInFrame on its sender/sensor topic whose numbers
// are the record's pos and quat bit for bit (and, for the fixed-pose
// tracker Pose0, the values the truth file says VRPN put on the wire), with
// the matching transform on /tf; every Deltarobot actuator_position is a
// pose and every curve a line strip through its points.
func TestMCAPPoses(t *testing.T) {
	pose0 := pose0Truth(t)
	var runs [][]string
	for _, name := range []string{"vrpn_multi_device.pcap", "vrpn_tcp_only.pcap", "vrpn_udp_tcp.pcapng", "deltarobot_session.pcap", "deltarobot_loss.pcap"} {
		runs = append(runs, shipped(t, name))
	}
	real, _ := filepath.Glob("../../../shared/captures/vrpn/*.pcap*")
	if len(real) == 0 {
		t.Log("../../../shared/captures/vrpn not found: the real captures are not drawn")
	}
	for _, f := range real {
		runs = append(runs, []string{f})
	}
	for _, args := range runs {
		t.Run(filepath.Base(args[len(args)-1]), func(t *testing.T) {
			// The pictures read as JSON here; as protobuf, by
			// TestMCAPIndependentReader (the poses' bits) and
			// output/mcapout's TestProtobufPictures.
			file, jsonl := writeMCAPAs(t, "json", args...)
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			msgs, _ := readMCAP(t, f)
			want := map[string][][7]float64{} // pose topic -> poses, from the records
			var curves [][][3]float64
			for _, r := range parseJSONL(t, jsonl) {
				var fl struct {
					Sender string       `json:"sender"`
					Sensor int          `json:"sensor"`
					Pos    [3]float64   `json:"pos"`
					Quat   quat         `json:"quat"`
					Points [][3]float64 `json:"points"`
				}
				if err := json.Unmarshal(r.Fields, &fl); err != nil {
					continue // a record of another shape
				}
				switch r.Type {
				case "vrpn_Tracker Pos_Quat":
					topic := fmt.Sprintf("/pose/vrpn/%d/%s/sensor%d", *r.Stream, fl.Sender, fl.Sensor)
					want[topic] = append(want[topic], [7]float64{fl.Pos[0], fl.Pos[1], fl.Pos[2], fl.Quat.X, fl.Quat.Y, fl.Quat.Z, fl.Quat.W})
				case "actuator_position":
					var xyz struct{ X, Y, Z float64 }
					json.Unmarshal(r.Fields, &xyz)
					topic := fmt.Sprintf("/pose/deltarobot/%d/actuator", *r.Stream)
					want[topic] = append(want[topic], [7]float64{xyz.X, xyz.Y, xyz.Z, 0, 0, 0, 1})
				case "curve":
					curves = append(curves, fl.Points)
				}
			}
			if len(want) == 0 {
				t.Fatal("no poses in the records")
			}
			got := map[string][][7]float64{}
			tfs := map[string][][7]float64{}
			roots := map[string]int{}
			var gotCurves [][][3]float64
			for _, m := range msgs {
				switch m.schema {
				case "foxglove.PoseInFrame":
					var p struct {
						FrameID string `json:"frame_id"`
						Pose    struct {
							Position    struct{ X, Y, Z float64 } `json:"position"`
							Orientation quat                      `json:"orientation"`
						} `json:"pose"`
					}
					if err := json.Unmarshal(m.data, &p); err != nil {
						t.Fatal(err)
					}
					o := p.Pose.Orientation
					got[m.topic] = append(got[m.topic], [7]float64{p.Pose.Position.X, p.Pose.Position.Y, p.Pose.Position.Z, o.X, o.Y, o.Z, o.W})
				case "foxglove.FrameTransforms":
					var tf struct {
						Transforms []struct {
							Parent      string                    `json:"parent_frame_id"`
							Child       string                    `json:"child_frame_id"`
							Translation struct{ X, Y, Z float64 } `json:"translation"`
							Rotation    quat                      `json:"rotation"`
						} `json:"transforms"`
					}
					if err := json.Unmarshal(m.data, &tf); err != nil {
						t.Fatal(err)
					}
					for _, x := range tf.Transforms {
						if x.Parent == "world" {
							roots[x.Child]++
							continue
						}
						v := [7]float64{x.Translation.X, x.Translation.Y, x.Translation.Z, x.Rotation.X, x.Rotation.Y, x.Rotation.Z, x.Rotation.W}
						tfs[x.Parent+">"+x.Child] = append(tfs[x.Parent+">"+x.Child], v)
					}
				case "foxglove.SceneUpdate":
					var s struct {
						Entities []struct {
							Lines []struct {
								Points []struct{ X, Y, Z float64 } `json:"points"`
							} `json:"lines"`
						} `json:"entities"`
					}
					if err := json.Unmarshal(m.data, &s); err != nil {
						t.Fatal(err)
					}
					var pts [][3]float64
					for _, p := range s.Entities[0].Lines[0].Points {
						pts = append(pts, [3]float64{p.X, p.Y, p.Z})
					}
					gotCurves = append(gotCurves, pts)
				}
			}
			for topic, poses := range want {
				if !sameBits(got[topic], poses) {
					t.Errorf("%s: %d poses %v..., want %d %v...", topic, len(got[topic]), first(got[topic]), len(poses), first(poses))
				}
				if rest, ok := strings.CutPrefix(topic, "/pose/vrpn/"); ok {
					parts := strings.Split(rest, "/") // stream, sender, sensorN
					sender, sensor := parts[1], parts[2]
					if !sameBits(tfs[sender+">"+sender+"/"+sensor], poses) {
						t.Errorf("%s: the transforms %s → %s/%s are not the poses", topic, sender, sender, sensor)
					}
					if roots[sender] != 1 {
						t.Errorf("%d transforms world → %s, want 1", roots[sender], sender)
					}
				}
				if strings.Contains(topic, "/Pose0/") {
					for _, p := range got[topic] {
						if p != pose0 {
							t.Errorf("Pose0 at %v, want the truth's %v", p, pose0)
						}
					}
				}
			}
			if len(got) != len(want) {
				t.Errorf("%d pose topics, want %d", len(got), len(want))
			}
			if len(gotCurves) != len(curves) {
				t.Fatalf("%d curves drawn, %d curve records", len(gotCurves), len(curves))
			}
			for i := range curves {
				if !slices.Equal(gotCurves[i], curves[i]) {
					t.Errorf("curve %d drawn through %v, record has %v", i, gotCurves[i], curves[i])
				}
			}
		})
	}
}

type quat struct{ X, Y, Z, W float64 }

func first(p [][7]float64) any {
	if len(p) == 0 {
		return nil
	}
	return p[0]
}

func sameBits(a, b [][7]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		for j := range a[i] {
			if math.Float64bits(a[i][j]) != math.Float64bits(b[i][j]) {
				return false
			}
		}
	}
	return true
}

// pose0Truth is the fixed pose of the tracker Pose0 in the multi-device
// capture, as the truth file gives it: pos (1.5, -2.25, 3.125), and the
// quaternion doubles read off the wire.
func pose0Truth(t *testing.T) [7]float64 {
	raw, err := os.ReadFile(filepath.Join(pcapDir, "vrpn_truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	var truth struct {
		Q struct {
			Pose0 struct {
				First []struct {
					Doubles []float64 `json:"wire_doubles_after_pos"`
				} `json:"first_wire_message"`
			} `json:"pose0_fixed"`
		} `json:"quaternion_order_evidence"`
	}
	if err := json.Unmarshal(raw, &truth); err != nil || len(truth.Q.Pose0.First) == 0 || len(truth.Q.Pose0.First[0].Doubles) != 4 {
		t.Fatalf("truth file: no Pose0 quaternion (%v)", err)
	}
	q := truth.Q.Pose0.First[0].Doubles
	return [7]float64{1.5, -2.25, 3.125, q[0], q[1], q[2], q[3]}
}

// TestMCAPEvents: every gap, skipped run and warning is a foxglove.Log on
// /dissect/events at the record's time.
func TestMCAPEvents(t *testing.T) {
	for _, name := range []string{"deltarobot_loss.pcap", "deltarobot_garbage.pcap", "deltarobot_midstream.pcap", "neptune_session.pcap", "handcontrol_serial.pcapng"} {
		t.Run(name, func(t *testing.T) {
			file, jsonl := writeMCAPAs(t, "json", shipped(t, name)...) // the events as protobuf: TestProtobufPictures
			var want []string
			for _, r := range parseJSONL(t, jsonl) {
				at, _ := time.Parse(time.RFC3339Nano, r.Time)
				ts := strconv.FormatInt(at.UnixNano(), 10)
				switch r.Type {
				case "gap":
					want = append(want, ts+fmt.Sprintf(" gap: %d bytes never captured", *r.Length))
				case "skipped":
					want = append(want, ts+fmt.Sprintf(" skipped: %d bytes not decoded", *r.Length))
				}
				for _, w := range r.Warnings {
					want = append(want, ts+" "+w)
				}
			}
			if len(want) == 0 {
				t.Fatal("the capture has no gap, skipped run or warning")
			}
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			msgs, _ := readMCAP(t, f)
			var got []string
			for _, m := range msgs {
				if m.topic != "/dissect/events" {
					continue
				}
				var l struct {
					Timestamp struct{ Sec, Nsec int64 } `json:"timestamp"`
					Level     int                       `json:"level"`
					Message   string                    `json:"message"`
				}
				if err := json.Unmarshal(m.data, &l); err != nil || m.schema != "foxglove.Log" || l.Level != 3 {
					t.Fatalf("event %s (schema %s): %v", m.data, m.schema, err)
				}
				if l.Timestamp.Sec*1e9+l.Timestamp.Nsec != int64(m.logTime) {
					t.Errorf("event timestamp %v, log time %d", l.Timestamp, m.logTime)
				}
				got = append(got, strconv.FormatUint(m.logTime, 10)+" "+l.Message)
			}
			if len(got) != len(want) {
				t.Fatalf("%d events, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
			}
			for i := range want {
				ts, text, _ := strings.Cut(want[i], " ")
				if !strings.HasPrefix(got[i], ts+" ") || !strings.Contains(got[i], text) {
					t.Errorf("event %d: %q, want at %s one with %q", i, got[i], ts, text)
				}
			}
		})
	}
}

// TestMCAPIndependentReader reads the MCAP of every shipped and real
// capture with Foxglove's TypeScript reader (@mcap/core) and Ajv: every
// schema valid JSON Schema in Foxglove's subset, every message valid
// against its schema, the summary's count right, every record's message,
// as JavaScript parses it, the record's JSON object of -o json as
// JavaScript parses it, and the poses' numbers bit-equal to the records'.
func TestMCAPIndependentReader(t *testing.T) {
	longtest.Skip(t)
	if err := mcapcheck.Available(); err != nil {
		t.Skip(err.Error())
	}
	// The VRPN types declared as poses, each drawn on its own topic.
	reg, err := all.Registry(all.Options{})
	if err != nil {
		t.Fatal(err)
	}
	vrpnPoses := map[string]*dissect.TypeDecl{}
	for _, d := range reg.Types("vrpn") {
		if d.Pose != nil {
			vrpnPoses[d.Type] = d
		}
	}
	if vrpnPoses["vrpn_Tracker Pos_Quat"] == nil || len(vrpnPoses) < 5 {
		t.Fatalf("VRPN pose types %d: the check would be vacuous", len(vrpnPoses))
	}
	for _, run := range sampleRuns(t) {
		t.Run(run.name(), func(t *testing.T) {
			file, jsonl := writeMCAP(t, run.all()...)
			res := readRecords(t, file, jsonl)
			protobuf := 0
			for _, c := range res.Channels {
				if strings.HasPrefix(c.Schema, "dissect.") && c.Encoding == "protobuf" {
					protobuf++
				}
			}
			if protobuf == 0 {
				t.Error("no protobuf record channel")
			}
			if res.StatisticsMessages != strconv.Itoa(res.MessagesRead) || !slices.Equal(res.Compression, []string{"zstd"}) {
				t.Errorf("statistics %s messages, %d read; compression %v", res.StatisticsMessages, res.MessagesRead, res.Compression)
			}
			if !strings.HasPrefix(res.Header.Library, "mcap-go/") || !strings.Contains(res.Header.Library, "dissect") {
				t.Errorf("header library %q", res.Header.Library)
			}
			recs := parseJSONL(t, jsonl)
			poses := map[string][]string{}
			lastPose := map[string]time.Time{}
			for _, m := range res.Messages {
				if m.Schema == "foxglove.PoseInFrame" && strings.HasPrefix(m.Topic, "/pose/vrpn/") {
					poses[m.Topic] = append(poses[m.Topic], strings.Join(m.Bits, " "))
				}
			}
			for _, r := range recs {
				if *r.Proto != "vrpn" {
					continue
				}
				d := vrpnPoses[r.Type]
				if d == nil {
					continue
				}
				var fl map[string]json.RawMessage
				if err := json.Unmarshal(r.Fields, &fl); err != nil {
					t.Fatal(err)
				}
				if _, bad := fl["data"]; bad {
					continue // not decoded: nothing to draw
				}
				var sender string
				var pos [3]float64
				q := quat{W: 1}
				json.Unmarshal(fl["sender"], &sender)
				if err := json.Unmarshal(fl[d.Pose.Position], &pos); err != nil {
					t.Fatalf("%s: %s: %v", r.Type, d.Pose.Position, err)
				}
				if d.Pose.Orientation != "" {
					if err := json.Unmarshal(fl[d.Pose.Orientation], &q); err != nil {
						t.Fatalf("%s: %s: %v", r.Type, d.Pose.Orientation, err)
					}
				}
				// docs/mcap.md: /pose/PROTO/STREAM/SENDER[/sensorN][/NAME]
				topic := fmt.Sprintf("/pose/vrpn/%d/%s", *r.Stream, sender)
				for _, f := range d.Fields {
					if f.Role == dissect.RoleSensor {
						var n int
						json.Unmarshal(fl[f.Name], &n)
						topic += fmt.Sprintf("/sensor%d", n)
					}
				}
				if d.Pose.Name != "" {
					topic += "/" + d.Pose.Name
				}
				// At most one pose per mcapout.DefaultPoseInterval of
				// capture time on a topic (docs/mcap.md).
				at, err := time.Parse(time.RFC3339Nano, r.Time)
				if err != nil {
					t.Fatal(err)
				}
				if l, ok := lastPose[topic]; ok && !at.Before(l) && at.Sub(l) < mcapout.DefaultPoseInterval {
					continue
				}
				lastPose[topic] = at
				var bits []string
				for _, v := range []float64{pos[0], pos[1], pos[2], q.X, q.Y, q.Z, q.W} {
					bits = append(bits, fmt.Sprintf("%016x", math.Float64bits(v)))
				}
				if len(poses[topic]) == 0 {
					t.Fatalf("%s: fewer poses than %s records", topic, r.Type)
				}
				if got := poses[topic][0]; got != strings.Join(bits, " ") {
					t.Errorf("%s: pose bits %s, record %s", topic, got, strings.Join(bits, " "))
				}
				poses[topic] = poses[topic][1:]
			}
			for topic, rest := range poses {
				if len(rest) > 0 {
					t.Errorf("%s: %d poses more than records of pose types", topic, len(rest))
				}
			}
		})
	}
}

// TestMCAPMutatedCaptures writes the MCAP of every capture with bytes of
// its payloads changed at random (as TestSchemaValidatesEveryRecord
// does), so that records carry odd values, warnings and skipped runs:
// every message is still valid against its channel's schema, and every
// record is its -o json object, as the independent reader parses them.
// (The changes seldom make a NaN; output/mcapout's tests write NaN and
// infinities through the same reader.)
func TestMCAPMutatedCaptures(t *testing.T) {
	longtest.Skip(t)
	if err := mcapcheck.Available(); err != nil {
		t.Skip(err.Error())
	}
	dir := t.TempDir()
	nonFinite := 0
	for i, run := range sampleRuns(t) {
		file := run.args[len(run.args)-1]
		m := filepath.Join(dir, "mutated-"+filepath.Base(file)+".pcapng")
		mutateCapture(t, file, m, uint64(i))
		args := append(append(slices.Clone(run.protoFlags), run.args[:len(run.args)-1]...), m)
		t.Run(run.name(), func(t *testing.T) {
			mcapFile, jsonl := writeMCAP(t, args...)
			nonFinite += strings.Count(jsonl, `"NaN"`) + strings.Count(jsonl, `"Inf"`) + strings.Count(jsonl, `"-Inf"`)
			res := readRecords(t, mcapFile, jsonl)
			for _, c := range res.Channels {
				if c.Schema == "dissect.undeclared" {
					t.Errorf("%s: %d records without a declaration", c.Topic, c.Count)
				}
			}
		})
	}
	t.Logf("%d non-finite floats written", nonFinite)
}

// TestMCAPStdout: -o mcap writes a complete file to a redirected stdout,
// refuses a terminal with a usage error, and names a file it cannot
// create.
func TestMCAPStdout(t *testing.T) {
	capFile := filepath.Join(pcapDir, "vrpn_tcp_only.pcap")
	out, errOut, code := cli(t, "-o", "mcap", "--no-summary", capFile)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	msgs, info := readMCAP(t, bytes.NewReader([]byte(out)))
	if len(msgs) == 0 || info.Statistics.MessageCount != uint64(len(msgs)) {
		t.Fatalf("%d messages read, statistics %v", len(msgs), info.Statistics)
	}

	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	var errb bytes.Buffer
	code = run([]string{"-o", "mcap", capFile}, strings.NewReader(""), tty, &errb)
	if code != 2 || !strings.Contains(errb.String(), "-o mcap writes a binary file: give --out FILE") {
		t.Errorf("to a terminal: exit %d, stderr %q", code, errb.String())
	}

	bad := filepath.Join(t.TempDir(), "no", "such", "dir", "x.mcap")
	_, errOut, code = cli(t, "-o", "mcap", "--out", bad, capFile)
	if code == 0 || !strings.Contains(errOut, bad) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("unwritable --out: exit %d, stderr %q", code, errOut)
	}
}

// TestMCAPWireNamesBounded writes captures with more VRPN type names than
// an MCAP file has topics for, and with names of 255 bytes: at most
// 4096 topics besides /vrpn/_overflow, /dissect/events and /tf are made,
// the further
// types' records are on /vrpn/_overflow, no topic segment is longer than
// 64 bytes, and the record messages are the records of -o json, type by
// type.
func TestMCAPWireNamesBounded(t *testing.T) {
	for _, c := range []struct {
		args     []string
		overflow bool
	}{
		{[]string{"wirenames", "4200", "8"}, true},
		{[]string{"wirenames", "50", "300"}, false},
	} {
		t.Run(c.args[1], func(t *testing.T) {
			capture := hostileCapture(t, c.args...)
			file, jsonl := writeMCAPAs(t, "json", "-r", capture)
			want := map[string]int{}
			for _, r := range parseJSONL(t, jsonl) {
				want[r.Type]++
			}
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			msgs, info := readMCAP(t, f)
			topics := 0
			for _, ch := range info.Channels {
				if ch.Topic != "/dissect/events" && ch.Topic != "/tf" && ch.Topic != "/vrpn/_overflow" {
					topics++
				}
				for _, s := range strings.Split(ch.Topic, "/") {
					if len(s) > 64 {
						t.Errorf("topic segment of %d bytes", len(s))
					}
				}
			}
			if topics > 4096 {
				t.Errorf("%d topics", topics)
			}
			got, overflow := map[string]int{}, false
			for _, m := range msgs {
				if m.topic == "/dissect/events" || m.topic == "/tf" {
					continue
				}
				overflow = overflow || m.topic == "/vrpn/_overflow"
				var r jsonRecord
				if err := json.Unmarshal(m.data, &r); err != nil {
					t.Fatal(err)
				}
				got[r.Type]++
			}
			if overflow != c.overflow {
				t.Errorf("records on /vrpn/_overflow: %v, want %v", overflow, c.overflow)
			}
			if len(got) != len(want) {
				t.Errorf("%d types in the file, %d in the JSON records", len(got), len(want))
			}
			for typ, n := range want {
				if got[typ] != n {
					t.Errorf("%.40q: %d messages, %d JSON records", typ, got[typ], n)
				}
			}
		})
	}
}

// TestMCAPCompressionFlag writes a capture with each --mcap-compression:
// each file's chunks have that compression (MCAP names stored chunks
// ""), and the MCAP library's reader and Foxglove's (when node is here)
// read from each the same messages, the records of -o json. A value
// that is not a compression is refused before a file is made, and shell
// completion offers the three.
func TestMCAPCompressionFlag(t *testing.T) {
	args := shipped(t, "vrpn_tcp_only.pcap")
	jsonl, errOut, code := cli(t, append([]string{"-o", "json", "--no-summary"}, args...)...)
	if code != 0 {
		t.Fatalf("json exit %d: %s", code, errOut)
	}
	var want []mcapMessage
	for _, c := range []struct{ flag, chunk string }{{"lz4", "lz4"}, {"zstd", "zstd"}, {"none", ""}} {
		file := filepath.Join(t.TempDir(), c.flag+".mcap")
		_, errOut, code := cli(t, append([]string{"-o", "mcap", "--mcap-compression", c.flag, "--out", file, "--no-summary"}, args...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.flag, code, errOut)
		}
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		msgs, info := readMCAP(t, f)
		f.Close()
		if len(info.ChunkIndexes) == 0 {
			t.Fatalf("%s: no chunks", c.flag)
		}
		for _, ci := range info.ChunkIndexes {
			if string(ci.Compression) != c.chunk {
				t.Errorf("%s: a chunk of compression %q", c.flag, ci.Compression)
			}
		}
		if want == nil {
			want = msgs
			if len(want) < 100 {
				t.Fatalf("%d messages: the comparison would be vacuous", len(want))
			}
		} else if !reflect.DeepEqual(msgs, want) {
			t.Errorf("%s: %d messages, not those of lz4 (%d)", c.flag, len(msgs), len(want))
		}
		if mcapcheck.Available() == nil {
			res := readRecords(t, file, jsonl)
			if res.MessagesRead != len(want) || !slices.Equal(res.Compression, []string{c.chunk}) {
				t.Errorf("%s: Foxglove's reader: %d messages, compression %q", c.flag, res.MessagesRead, res.Compression)
			}
		}
	}
	if err := mcapcheck.Available(); err != nil {
		t.Logf("Foxglove's reader not run: %v", err)
	}

	file := filepath.Join(t.TempDir(), "gzip.mcap")
	_, errOut, code = cli(t, append([]string{"-o", "mcap", "--mcap-compression", "gzip", "--out", file}, args...)...)
	if _, err := os.Stat(file); code != 2 || !strings.Contains(errOut, `--mcap-compression "gzip"`) || err == nil {
		t.Errorf("gzip: exit %d, stderr %q, file made: %v", code, errOut, err == nil)
	}
	out, _, _ := cli(t, "__complete", "--mcap-compression", "")
	if got := strings.Fields(out); !slices.Equal(got, []string{"lz4", "zstd", "none", ":4"}) {
		t.Errorf("completion: %q", out)
	}
}

// --mcap-encoding takes protobuf or json, for -o mcap and -o foxglove
// only: anything else is a usage error before a file is made.
func TestMCAPEncodingFlag(t *testing.T) {
	capFile := filepath.Join(pcapDir, "deltarobot_session.pcap")
	file := filepath.Join(t.TempDir(), "x.mcap")
	_, errOut, code := cli(t, "-r", capFile, "-o", "mcap", "--mcap-encoding", "cbor", "--out", file)
	if _, err := os.Stat(file); code != 2 || !strings.Contains(errOut, `--mcap-encoding "cbor": want protobuf or json`) || err == nil {
		t.Errorf("cbor: exit %d, stderr %q, file made: %v", code, errOut, err == nil)
	}
	_, errOut, code = cli(t, "-r", capFile, "-o", "json", "--mcap-encoding", "json")
	if code != 2 || !strings.Contains(errOut, "--mcap-encoding applies to -o mcap and -o foxglove, not -o json") {
		t.Errorf("-o json: exit %d, stderr %q", code, errOut)
	}
	for _, enc := range []string{"protobuf", "json"} {
		if _, errOut, code := cli(t, "-r", capFile, "-o", "mcap", "--mcap-encoding", enc, "--out", file); code != 0 {
			t.Errorf("%s: exit %d: %s", enc, code, errOut)
		}
	}
}
