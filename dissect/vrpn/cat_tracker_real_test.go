package vrpn

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

// Real captures of mainline VRPN with the values its programs printed:
// BASE.pcap, BASE.client.jsonl and BASE.server.jsonl, BASE a scenario of
// the repository's pcaps/vrpn (README.md there) or of testdata/mainline
// (README.md here). The helpers here serve every cat_*_real_test.go.

// pcapsVRPN is the base of a scenario of the repository's pcaps/vrpn.
func pcapsVRPN(sc string) string { return filepath.Join("..", "..", "pcaps", "vrpn", sc) }

// localMainline is the base of a scenario of testdata/mainline.
func localMainline(sc string) string { return filepath.Join("testdata", "mainline", sc) }

// mlLine is one line of a truth file.
type mlLine map[string]any

// mlTruth reads BASE.SIDE.jsonl.
func mlTruth(t *testing.T, base, side string) []mlLine {
	t.Helper()
	f, err := os.Open(base + "." + side + ".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []mlLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if !strings.HasPrefix(sc.Text(), "{") {
			continue // a notice of mainline's on the same output
		}
		var l mlLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s.%s.jsonl: %v", base, side, err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// mlSelect returns the lines of dir whose type is typ.
func mlSelect(lines []mlLine, dir, typ string) []mlLine {
	var out []mlLine
	for _, l := range lines {
		if l["dir"] == dir && l["type"] == typ {
			out = append(out, l)
		}
	}
	return out
}

// mlDecode decodes BASE.pcap; every record must be VRPN, match its
// declaration and carry no warning.
func mlDecode(t *testing.T, base string) []*dissect.Record {
	t.Helper()
	reg, _ := registry(t)
	recs := dissecttest.Decode(t, reg, base+".pcap")
	if len(recs) == 0 {
		t.Fatalf("%s.pcap: no records", base)
	}
	for _, r := range recs {
		if r.Proto != protoName || len(r.Warnings) > 0 || r.Type == dissect.TypeSkipped || r.Type == dissect.TypeGap || r.Type == TypeUnknown {
			t.Errorf("%s.pcap @%d: proto %q type %q warnings %q", base, r.Offset, r.Proto, r.Type, r.Warnings)
		}
	}
	dissecttest.CheckDeclared(t, reg, recs)
	return recs
}

// mlOfType returns the records of type typ.
func mlOfType(recs []*dissect.Record, typ string) []*dissect.Record {
	var out []*dissect.Record
	for _, r := range recs {
		if r.Type == typ {
			out = append(out, r)
		}
	}
	return out
}

// mlQuat turns mainline's quaternion array [x, y, z, w] into the fields'
// object form.
func mlQuat(v any) map[string]any {
	q, _ := v.([]any)
	if len(q) != 4 {
		return nil
	}
	return map[string]any{"x": q[0], "y": q[1], "z": q[2], "w": q[3]}
}

// mlCheck compares the body fields of r with want, and r's sender and,
// when the line has them, its sent time with the line's header time.
func mlCheck(t *testing.T, what string, r *dissect.Record, line mlLine, want map[string]any) {
	t.Helper()
	if got := bodyJSON(r); !reflect.DeepEqual(got, want) {
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		t.Errorf("%s: fields\n got %s\nwant %s", what, gj, wj)
	}
	if s, _ := r.Fields.Get("sender"); s.Str() != line["sender"] {
		t.Errorf("%s: sender %q, want %q", what, s.Str(), line["sender"])
	}
	sec, ok1 := line["sec"].(float64)
	usec, ok2 := line["usec"].(float64)
	if ok1 && ok2 {
		want := time.Unix(int64(sec), int64(usec)*1000).UTC()
		if s, _ := r.Fields.Get("sent"); !s.Time().Equal(want) {
			t.Errorf("%s: sent %v, want %v", what, s.Time(), want)
		}
	}
}

// TestMainlineTracker decodes the tracker part of text_tracker_logged.pcap:
// the client's three requests and the server's To_Room, Unit_To_Sensor
// (sensors 0 and 1) and Workspace answers, compared with what mainline's
// vrpn_Tracker_Remote delivered to the client's callbacks and with the
// requests the client made.
func TestMainlineTracker(t *testing.T) {
	sc := pcapsVRPN("text_tracker_logged")
	recs := mlDecode(t, sc)
	client := mlTruth(t, sc, "client")
	server := mlTruth(t, sc, "server")

	replies := []struct {
		typ  string
		want func(l mlLine) map[string]any
	}{
		{"vrpn_Tracker To_Room", func(l mlLine) map[string]any {
			return map[string]any{"pos": l["pos"], "quat": mlQuat(l["quat"])}
		}},
		{"vrpn_Tracker Unit_To_Sensor", func(l mlLine) map[string]any {
			// pad: the 0 mainline's encode_unit2sensor_to writes.
			return map[string]any{"sensor": l["sensor"], "pad": 0.0, "pos": l["pos"], "quat": mlQuat(l["quat"])}
		}},
		{"vrpn_Tracker Workspace", func(l mlLine) map[string]any {
			return map[string]any{"min": l["workspace_min"], "max": l["workspace_max"]}
		}},
	}
	for _, c := range replies {
		got, truth := mlOfType(recs, c.typ), mlSelect(client, "recv", c.typ)
		if len(got) != len(truth) || len(got) == 0 {
			t.Fatalf("%s: %d records, %d delivered by mainline", c.typ, len(got), len(truth))
		}
		for i, r := range got {
			mlCheck(t, c.typ, r, truth[i], c.want(truth[i]))
		}
	}
	if n := len(mlOfType(recs, "vrpn_Tracker Unit_To_Sensor")); n != 2 {
		t.Errorf("%d Unit_To_Sensor, want one per sensor of Tracker0 (2)", n)
	}
	for _, typ := range []string{"vrpn_Tracker Request_Tracker_To_Room", "vrpn_Tracker Request_Unit_To_Sensor", "vrpn_Tracker Request_Tracker_Workspace"} {
		got, sent, heard := mlOfType(recs, typ), mlSelect(client, "sent", typ), mlSelect(server, "recv_raw", typ)
		if len(got) != 1 || len(sent) != 1 || len(heard) != 1 {
			t.Fatalf("%s: %d records, %d sent by the client, %d dispatched by the server", typ, len(got), len(sent), len(heard))
		}
		mlCheck(t, typ, got[0], heard[0], map[string]any{})
	}

	// Round trips: each answer's capture time minus its request's; the
	// second Unit_To_Sensor answers a request the first one took.
	for _, c := range []struct {
		req, reply string
		index      int
		timed      bool
	}{
		{"vrpn_Tracker Request_Tracker_To_Room", "vrpn_Tracker To_Room", 0, true},
		{"vrpn_Tracker Request_Unit_To_Sensor", "vrpn_Tracker Unit_To_Sensor", 0, true},
		{"vrpn_Tracker Request_Unit_To_Sensor", "vrpn_Tracker Unit_To_Sensor", 1, false},
		{"vrpn_Tracker Request_Tracker_Workspace", "vrpn_Tracker Workspace", 0, true},
	} {
		req, reply := mlOfType(recs, c.req)[0], mlOfType(recs, c.reply)[c.index]
		rtt, ok := reply.Fields.Get("rtt_ms")
		if ok != c.timed {
			t.Errorf("%s %d: rtt_ms present %v, want %v", c.reply, c.index, ok, c.timed)
			continue
		}
		if want := float64(reply.Time.Sub(req.Time)) / float64(time.Millisecond); ok && (rtt.Float() != want || want <= 0) {
			t.Errorf("%s: rtt_ms %v, want %v (capture times %v, %v)", c.reply, rtt.Float(), want, req.Time, reply.Time)
		}
	}
}

// mustGet returns r's field key.
func mustGet(t *testing.T, r *dissect.Record, key string) dissect.Value {
	t.Helper()
	v, ok := r.Fields.Get(key)
	if !ok {
		t.Fatalf("%s: no field %s", r.Type, key)
	}
	return v
}

// BenchmarkMainlineTracker measures the whole text_tracker_logged.pcap
// (cookies, descriptions, text messages, the Tracker requests and answers)
// through the pipeline, fields decoded.
func BenchmarkMainlineTracker(b *testing.B) {
	reg, _ := registry(b)
	file := pcapsVRPN("text_tracker_logged") + ".pcap"
	st, err := os.Stat(file)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		if recs := dissecttest.Decode(b, reg, file); len(recs) == 0 {
			b.Fatal("no records")
		}
	}
}

// TestMainlineTrackerRate decodes the tracker part of
// tracker_rate_auxlog.pcap (catA_driver.C): vrpn_Tracker_Remote's
// set_update_rate(60.5) and reset_origin(), compared with the values the
// client handed mainline and the header times the server dispatched.
func TestMainlineTrackerRate(t *testing.T) {
	sc := localMainline("tracker_rate_auxlog")
	recs := mlDecode(t, sc)
	client := mlTruth(t, sc, "client")
	server := mlTruth(t, sc, "server")
	for _, c := range []struct {
		typ  string
		want func(mlLine) map[string]any
	}{
		{nameTrackerUpdateRate, func(l mlLine) map[string]any { return map[string]any{"rate": l["rate"]} }},
		{nameTrackerResetOrigin, func(mlLine) map[string]any { return map[string]any{} }},
	} {
		got, sent, heard := mlOfType(recs, c.typ), mlSelect(client, "sent", c.typ), mlSelect(server, "recv_raw", c.typ)
		if len(got) != 1 || len(sent) != 1 || len(heard) != 1 {
			t.Fatalf("%s: %d records, %d sent, %d dispatched; want 1 each", c.typ, len(got), len(sent), len(heard))
		}
		mlCheck(t, c.typ, got[0], heard[0], c.want(sent[0]))
	}
}
