package vrpn

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// truthLine is one line of a mainline program's JSON output (see
// testdata/mainline/README.md): what it handed to mainline ("sent") or
// what mainline dispatched to it ("recv_raw").
type truthLine map[string]any

func readTruthLines(t *testing.T, file string) []truthLine {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []truthLine
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if !strings.HasPrefix(sc.Text(), "{") {
			continue // mainline's own notices on stdout ("vrpn: TCP connection request received.")
		}
		var l truthLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s:%d: %v", file, n, err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// f32v is a float32 value as the record's JSON form holds it.
func f32v(x float32) float64 { return float64(x) }

// TestForceRealCapture decodes mainline VRPN's own traffic: a
// vrpn_ForceDevice_Remote (client) sending surfaces, a trimesh and force
// fields to a server (testdata/mainline/force.pcap). Every ForceDevice
// message the server's connection dispatched (its recv_raw lines) is a
// record of that type, at that header time, without warnings, in that
// order; each decodes to the values the client handed to mainline (its
// sent lines) and, for those it did not set, the defaults of mainline's
// vrpn_ForceDevice constructor (SurfaceKdamping 0.001f, SurfaceFstatic
// 0.7f, adhesion 0.0001f/0.0002f, texture amplitude 0.0005f and
// wavelength 0.01f, buzz amplitude 0.0004f and frequency 0.0003f,
// numRecCycles 1) and of the remote (which_plane 0, trimesh object 0).
func TestForceRealCapture(t *testing.T) {
	recs := runCapture(t, "mainline/force.pcap", true)
	var got []*dissect.Record
	for _, r := range recs {
		if len(r.Warnings) > 0 || r.Type == dissect.TypeSkipped || r.Type == dissect.TypeGap || r.Type == TypeUnknown {
			t.Errorf("%s @%d: type %s warnings %q", r.Src, r.Offset, r.Type, r.Warnings)
		}
		if strings.HasPrefix(r.Type, forcePrefix) {
			got = append(got, r)
		}
	}

	// What the server's connection dispatched, in order.
	var raw []truthLine
	for _, l := range readTruthLines(t, "testdata/mainline/force.server.jsonl") {
		if l["dir"] == "recv_raw" && strings.HasPrefix(l["type"].(string), forcePrefix) {
			raw = append(raw, l)
		}
	}
	if len(got) != len(raw) || len(raw) != 10 {
		t.Fatalf("%d ForceDevice records, the server dispatched %d (want 10)", len(got), len(raw))
	}
	for i, l := range raw {
		r := got[i]
		sent, _ := r.Fields.Get("sent")
		want := time.Unix(int64(l["sec"].(float64)), int64(l["usec"].(float64))*1000)
		if r.Type != l["type"] || !sent.Time().Equal(want) {
			t.Errorf("record %d: %s sent %v, server got %s at %v", i, r.Type, sent.Time(), l["type"], want)
		}
		if _, ok := r.Fields.Get("data"); ok {
			t.Errorf("record %d (%s): not decoded", i, r.Type)
		}
		if n := int64(l["payload_len"].(float64)); r.Length < n {
			t.Errorf("record %d (%s): length %d, payload alone is %d", i, r.Type, r.Length, n)
		}
	}

	// The values, by hand from the client's sent lines and mainline's
	// defaults.
	plane := func(p ...float64) map[string]any {
		return map[string]any{"plane": []any{p[0], p[1], p[2], p[3]}, "kspring": 0.75, "kdamp": f32v(0.001),
			"fdynamic": 0.25, "fstatic": f32v(0.7), "plane_index": 0.0, "n_rec_cycles": 1.0}
	}
	vertex := func(n float64, x, y, z float64) map[string]any {
		return map[string]any{"object_id": 0.0, "vertex_num": n, "pos": []any{x, y, z}}
	}
	zeros := func(n int) []any {
		a := make([]any, n)
		for i := range a {
			a[i] = 0.0
		}
		return a
	}
	want := []map[string]any{
		plane(0, 1, 0, -0.5),
		{"k_adhesion_normal": f32v(0.0001), "k_adhesion_lateral": f32v(0.0002), "texture_amplitude": f32v(0.0005),
			"texture_wavelength": f32v(0.01), "buzz_amplitude": f32v(0.0004), "buzz_frequency": f32v(0.0003)},
		vertex(0, 0.125, 0.25, 0.5),
		vertex(1, 1, 0, -0.75),
		vertex(2, 0, 2, 0),
		{"object_id": 0.0, "triangle_num": 0.0, "vertices": []any{0.0, 1.0, 2.0}, "normals": []any{-1.0, -1.0, -1.0}},
		// The remote writes static friction third, dynamic fourth.
		{"object_id": 0.0, "kspring": 0.75, "kdamp": f32v(0.001), "fstatic": f32v(0.7), "fdynamic": 0.25},
		{"origin": []any{0.5, -0.5, 0.25}, "force": []any{1.5, 0.0, -2.0},
			"jacobian": []any{1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 3.0}, "radius": 0.125},
		{"origin": zeros(3), "force": zeros(3), "jacobian": zeros(9), "radius": 0.0}, // stopForceField
		plane(0, 0, 0, 0), // stopSurface
	}
	for i, r := range got {
		g := bodyJSON(r)
		delete(g, "rtt_ms")
		if !reflect.DeepEqual(g, want[i]) {
			gj, _ := json.Marshal(g)
			wj, _ := json.Marshal(want[i])
			t.Errorf("record %d (%s):\n got %s\nwant %s", i, r.Type, gj, wj)
		}
	}

	// The hand-written values are those of the client's sent lines: the
	// sent line k gave record at[k].
	at := []int{0, 2, 3, 4, 5, 6, 7, 8, 9}
	var sentLines []truthLine
	for _, l := range readTruthLines(t, "testdata/mainline/force.client.jsonl") {
		if l["dir"] == "sent" {
			sentLines = append(sentLines, l)
		}
	}
	if len(sentLines) != len(at) {
		t.Fatalf("%d sent lines, want %d", len(sentLines), len(at))
	}
	for k, l := range sentLines {
		w := want[at[k]]
		check := func(key string, v any) {
			if !reflect.DeepEqual(w[key], v) {
				t.Errorf("sent line %d (%s): %s %v, the test expects %v", k, l["type"], key, v, w[key])
			}
		}
		switch typ := l["type"].(string); {
		case strings.HasPrefix(typ, nameForcePlane+" "):
			check("plane", []any{l["a"], l["b"], l["c"], l["d"]})
			check("kspring", l["kspring"])
			check("fdynamic", l["fdynamic"])
		case typ == nameForceVertex:
			check("vertex_num", l["vertNum"])
			check("pos", l["xyz"])
		case typ == nameForceTriangle:
			check("triangle_num", l["triNum"])
			check("vertices", []any{l["v0"], l["v1"], l["v2"]})
			check("normals", []any{l["n0"], l["n1"], l["n2"]})
		case typ == nameForceField:
			check("origin", l["origin"])
			check("force", l["force"])
			check("jacobian", l["jacobian_row_major"])
			check("radius", l["radius"])
		case strings.Contains(typ, "stopForceField"):
			check("radius", 0.0)
		case strings.Contains(typ, "stopSurface"):
			check("plane", zeros(4))
		case typ == nameForceUpdTri:
		default:
			t.Errorf("sent line %d: unexpected type %q", k, typ)
		}
	}
}

// TestForceSamplesMainline: the bodies of forceSamples (written with wbe
// from reading the encoders) are byte for byte what mainline's own
// encode_* functions write for the same values
// (testdata/mainline/force_encoders.jsonl, the output of
// force_encoders.C run against mainline's library). So the samples'
// decoded fields, checked by TestCatalogueSamples, are those of real
// bodies for all the family's types.
func TestForceSamplesMainline(t *testing.T) {
	var samples []sample
	for _, s := range forceSamples() {
		if s.name != nameForceNewID { // no encoder in mainline
			samples = append(samples, s)
		}
	}
	lines := readTruthLines(t, "testdata/mainline/force_encoders.jsonl")
	if len(lines) != len(samples) {
		t.Fatalf("%d lines from mainline's encoders, %d samples", len(lines), len(samples))
	}
	for i, l := range lines {
		s := samples[i]
		if l["type"] != s.name {
			t.Errorf("line %d: type %v, sample %s", i, l["type"], s.name)
		}
		if got := hex.EncodeToString(s.body); got != l["hex"] {
			t.Errorf("%s (line %d): sample body %s, mainline wrote %s", s.name, i, got, l["hex"])
		}
	}
}
