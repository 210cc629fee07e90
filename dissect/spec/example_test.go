package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

// The example of docs/your-protocol.md, against the captures and truth
// written by pcaps/acme/gen.py, an encoder written apart from this
// package (Python's struct and binascii.crc_hqx).

const (
	exampleFile = "../../docs/examples/acme-servo.yaml"
	acmeDir     = "../../pcaps/acme"
)

func loadExample(t testing.TB) *Protocol {
	t.Helper()
	p, err := LoadFile(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type expectRec struct {
	Type     string         `json:"type"`
	Offset   int64          `json:"offset"`
	Length   int64          `json:"length"`
	Fields   map[string]any `json:"fields"`
	Warnings []string       `json:"warnings"`
}

type expectCapture struct {
	Host       []expectRec `json:"host"`
	Controller []expectRec `json:"controller"`
	Bytes      [2]int64    `json:"bytes"`
}

func readExpect(t testing.TB) map[string]expectCapture {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(acmeDir, "acme_servo.expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Captures map[string]expectCapture `json:"captures"`
	}
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return e.Captures
}

// TestExampleCaptures decodes both captures with the example file and
// wants exactly the encoder's records: every frame, the garbage and the
// frame with a wrong CRC skipped, the gap and the rest of the frame it cut.
func TestExampleCaptures(t *testing.T) {
	exp := readExpect(t)
	if len(exp) != 2 {
		t.Fatalf("%d captures in the truth file", len(exp))
	}
	for name, want := range exp {
		t.Run(name, func(t *testing.T) {
			reg := dissecttest.Registry(t, nil, loadExample(t))
			recs := dissecttest.Decode(t, reg, filepath.Join(acmeDir, name))
			dissecttest.CheckDeclared(t, reg, recs)
			var got [2][]*dissect.Record
			for _, r := range recs {
				got[r.Dir] = append(got[r.Dir], r)
			}
			for d, w := range [2][]expectRec{want.Host, want.Controller} {
				compareDir(t, fmt.Sprintf("direction %d", d), got[d], w)
			}
		})
	}
}

func compareDir(t *testing.T, where string, got []*dissect.Record, want []expectRec) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d records, want %d", where, len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		g, w := got[i], want[i]
		at := fmt.Sprintf("%s record %d (%s at %d)", where, i, w.Type, w.Offset)
		if g.Type != w.Type || g.Offset != w.Offset || g.Length != w.Length {
			t.Errorf("%s: got %s at %d, %d bytes; want %d bytes", at, g.Type, g.Offset, g.Length, w.Length)
			continue
		}
		if g.Proto != "acme-servo" && w.Type != "skipped" && w.Type != "gap" {
			t.Errorf("%s: proto %q", at, g.Proto)
		}
		if fmt.Sprint(g.Warnings) != fmt.Sprint(w.Warnings) && !(len(g.Warnings) == 0 && len(w.Warnings) == 0) {
			t.Errorf("%s: warnings %q, want %q", at, g.Warnings, w.Warnings)
		}
		if w.Fields == nil {
			continue
		}
		gotFields := map[string]any{}
		for _, f := range g.Fields {
			gotFields[f.Key] = plain(f.Value)
		}
		if !same(gotFields, w.Fields) {
			t.Errorf("%s: fields\n got %v\nwant %v", at, gotFields, w.Fields)
		}
	}
}

// plain turns a value into what encoding/json reads of its JSON.
func plain(v dissect.Value) any {
	switch v.Kind() {
	case dissect.KindInt, dissect.KindUint, dissect.KindFloat, dissect.KindFloat32:
		return v.Float()
	case dissect.KindString:
		return v.Str()
	case dissect.KindArray:
		out := []any{}
		for _, it := range v.Items() {
			out = append(out, plain(it.Value))
		}
		return out
	case dissect.KindObject:
		out := map[string]any{}
		for _, it := range v.Items() {
			out[it.Key] = plain(it.Value)
		}
		return out
	}
	return fmt.Sprintf("%v", v)
}

// same compares decoded JSON, numbers within 1e-9 of each other (the
// encoder's scale products are Python floats).
func same(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && math.Abs(x-y) <= 1e-9*math.Max(1, math.Abs(y))
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !same(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k := range x {
			if !same(x[k], y[k]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// TestGeneratorDrift runs the encoder again and wants the committed files.
func TestGeneratorDrift(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: the committed captures are not regenerated")
	}
	dir := t.TempDir()
	if out, err := exec.Command(py, filepath.Join(acmeDir, "gen.py"), dir).CombinedOutput(); err != nil {
		t.Fatalf("gen.py: %v\n%s", err, out)
	}
	for _, name := range []string{"acme_servo_serial.pcapng", "acme_servo_tcp.pcap", "acme_servo.expect.json"} {
		a, _ := os.ReadFile(filepath.Join(dir, name))
		b, _ := os.ReadFile(filepath.Join(acmeDir, name))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from what pcaps/acme/gen.py writes now: run python3 pcaps/acme/gen.py pcaps/acme", name)
		}
	}
}
