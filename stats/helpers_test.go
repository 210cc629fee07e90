package stats

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/all"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/output"
)

// runCapture decodes the file with dissect's pipeline (one decode-as rule,
// or none) and feeds every record to the stats.
func runCapture(t testing.TB, file, decodeAs string, opt all.Options, ss ...Stat) {
	t.Helper()
	protos, err := all.Protocols(opt)
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	if decodeAs != "" {
		rules = []string{decodeAs}
	}
	reg := dissecttest.Registry(t, rules, protos...)
	for _, r := range dissecttest.Decode(t, reg, file) {
		for _, s := range ss {
			s.Record(r)
		}
	}
}

// runDecls returns the declarations of the protocols runCapture decodes
// with (the Decl of a registry like its own).
func runDecls(t testing.TB, opt all.Options) DeclFunc {
	t.Helper()
	reg, err := all.Registry(opt)
	if err != nil {
		t.Fatal(err)
	}
	return reg.Decl
}

// truthFile is the layout of the generated captures' sidecars
// (pcaps/README.md): per stream and direction, the records the encoder
// wrote, and the gap and skipped ranges.
type truthFile struct {
	File           string `json:"file"`
	DecodeAs       string `json:"decode_as"`
	DecoderOptions string `json:"decoder_options"`
	Streams        []struct {
		Stream     int    `json:"stream"`
		Transport  string `json:"transport"`
		Directions []struct {
			Dir     int        `json:"dir"`
			Src     string     `json:"src"`
			Dst     string     `json:"dst"`
			Bytes   int64      `json:"bytes"`
			Gaps    [][2]int64 `json:"gaps"`
			Skipped [][2]int64 `json:"skipped"`
			Records []struct {
				Type   string                     `json:"type"`
				Offset int64                      `json:"offset"`
				Length int64                      `json:"length"`
				Fields map[string]json.RawMessage `json:"fields"`
				RTT    string                     `json:"rtt_ms"`
			} `json:"records"`
		} `json:"directions"`
	} `json:"streams"`
}

func readTruth(t testing.TB, path string) *truthFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tf truthFile
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&tf); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &tf
}

// truths lists the generated captures with a sidecar.
func truths(t testing.TB) []string {
	t.Helper()
	m, err := filepath.Glob("../pcaps/*.truth.json")
	if err != nil || len(m) == 0 {
		t.Fatalf("no truth sidecars in ../pcaps (%v)", err)
	}
	return m
}

func truthOptions(tf *truthFile) all.Options {
	var o all.Options
	if strings.Contains(tf.DecoderOptions, "Int16: true") {
		o.NeptuneInt16 = true
	}
	return o
}

// rec builds a record by hand.
func rec(stream int, src, dst string, at time.Duration, proto, typ string, length int64, fields ...dissect.Field) *dissect.Record {
	return &dissect.Record{
		Time: t0.Add(at), Proto: proto, Transport: dissect.TCP, Stream: stream, Src: src, Dst: dst,
		Length: length, Type: typ, Fields: fields,
	}
}

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

func f(k string, v dissect.Value) dissect.Field { return dissect.Field{Key: k, Value: v} }

func tableOf(t testing.TB, s Stat, o TableOptions) string {
	t.Helper()
	var b bytes.Buffer
	if err := s.WriteTable(&b, o); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// jsonRows writes s as JSON Lines and reads every row back with
// encoding/json, checking that each has "stat" first with the stat's name
// and that every float is written with a fraction or an exponent.
func jsonRows(t testing.TB, s Stat) []map[string]any {
	t.Helper()
	var b bytes.Buffer
	if err := s.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if line == "" {
			continue
		}
		if want := `{"stat":"` + s.Name() + `"`; !strings.HasPrefix(line, want) {
			t.Fatalf("row does not start with %s: %s", want, line)
		}
		d := json.NewDecoder(strings.NewReader(line))
		d.UseNumber()
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			t.Fatalf("row does not parse: %v: %s", err, line)
		}
		checkFloats(t, line, m)
		rows = append(rows, m)
	}
	return rows
}

// floatKeys are the keys whose values are floats in every row.
func isFloatKey(k string) bool {
	return strings.HasSuffix(k, "_ms") || strings.HasSuffix(k, "_s") || k == "rate_per_s"
}

func checkFloats(t testing.TB, line string, m map[string]any) {
	t.Helper()
	for k, v := range m {
		switch v := v.(type) {
		case json.Number:
			if isFloatKey(k) && !strings.ContainsAny(string(v), ".eE") {
				t.Errorf("%s = %s: a float without a fraction or exponent in %s", k, v, line)
			}
			if !isFloatKey(k) && strings.ContainsAny(string(v), ".eE") {
				t.Errorf("%s = %s: an integer key written as a float in %s", k, v, line)
			}
		case map[string]any:
			checkFloats(t, line, v)
		}
	}
}

func num(t testing.TB, v any) float64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v (%T) is not a number", v, v)
	}
	x, err := n.Float64()
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// declOnly is a protocol that only declares record types, for the
// hand-built records of the tests: the stats see them through a real
// registry's Decl, as they see a run's.
type declOnly struct{ info dissect.Info }

func (p declOnly) Info() dissect.Info                                            { return p.info }
func (declOnly) Detect(*dissect.StreamInfo, dissect.Dir, []byte) dissect.Verdict { return dissect.No }
func (declOnly) NewParser(*dissect.StreamInfo) dissect.Parser                    { return nil }

// testDecls returns the Decl of a registry of protocols declaring the
// types the hand-built records of these tests carry, with the roles the
// stats read. They are written here, not taken from the protocols, so the
// tests of the stats' logic do not depend on the protocols' declarations
// (the tests over shipped captures check those).
func testDecls(t testing.TB, extra ...dissect.Protocol) DeclFunc {
	t.Helper()
	fd := func(name string, k dissect.Kind, ro dissect.Role) dissect.FieldDecl {
		return dissect.FieldDecl{Name: name, Kind: k, Role: ro}
	}
	role := func(v string) *dissect.Variant { return &dissect.Variant{Key: "role", Value: v} }
	request := []dissect.FieldDecl{fd("code", dissect.KindInt, dissect.RoleRequestKey), fd("role", dissect.KindString, 0)}
	reply := []dissect.FieldDecl{fd("code", dissect.KindInt, 0), fd("role", dissect.KindString, 0),
		fd("request_code", dissect.KindInt, dissect.RoleRequestKey), fd("latency_ms", dissect.KindFloat, dissect.RoleLatency)}
	protos := []dissect.Protocol{
		declOnly{dissect.Info{Name: "deltarobot", Proto: "deltarobot", Types: []dissect.TypeDecl{
			{Type: "ping", Fields: []dissect.FieldDecl{fd("id", dissect.KindUint, 0)}, Exchange: dissect.Exchange{Role: dissect.Request}},
			{Type: "pong", Fields: []dissect.FieldDecl{fd("id", dissect.KindUint, 0), fd("rtt_ms", dissect.KindFloat, dissect.RoleLatency)},
				Exchange: dissect.Exchange{Role: dissect.Reply, Answers: "ping"}},
			{Type: "actuator_position"}, {Type: "protocol_magic"}, {Type: "unknown"},
		}}},
		declOnly{dissect.Info{Name: "handcontrol", Proto: "handcontrol", Types: []dissect.TypeDecl{
			{Type: "GetSettings", Variant: role("request"), Fields: request, Exchange: dissect.Exchange{Role: dissect.Request}},
			{Type: "GetSettings", Variant: role("response"), Fields: reply, Exchange: dissect.Exchange{Role: dissect.Reply}},
			{Type: "SetPositions", Variant: role("request"), Fields: request, Exchange: dissect.Exchange{Role: dissect.Request}},
			{Type: "GetMioPatterns", Variant: role("request"), Fields: request, Exchange: dissect.Exchange{Role: dissect.Request}},
			{Type: "GetTelemetry", Variant: role("response"), Fields: reply, Exchange: dissect.Exchange{Role: dissect.Reply}},
			{Type: "ACK", Fields: reply, Exchange: dissect.Exchange{Role: dissect.Reply}},
		}}},
		declOnly{dissect.Info{Name: "vrpn", Proto: "vrpn", Types: []dissect.TypeDecl{
			{Type: "vrpn_Tracker Pos_Quat", Fields: []dissect.FieldDecl{
				fd("sender", dissect.KindString, dissect.RoleSender), fd("sensor", dissect.KindInt, dissect.RoleSensor)}},
			{Type: "vrpn_Base ping_message", Fields: []dissect.FieldDecl{fd("sender", dissect.KindString, dissect.RoleSender)},
				Exchange: dissect.Exchange{Role: dissect.Request}},
			// A system message: its sender is the name it describes,
			// not a sender, so it has no role.
			{Type: "sender_description", Fields: []dissect.FieldDecl{fd("sender", dissect.KindString, 0)}},
		}}},
	}
	reg, err := dissect.NewRegistry(append(protos, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	return reg.Decl
}

// width is the display width of a line, as the tables measure it.
func width(s string) int { return output.DisplayWidth(s) }
