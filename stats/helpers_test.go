package stats

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/all"
	"github.com/dissect-tools/dissect/pipeline"
)

// runCapture decodes the file with dissect's pipeline (one decode-as rule,
// or none) and feeds every record to the stats.
func runCapture(t testing.TB, file, decodeAs string, opt all.Options, ss ...Stat) {
	t.Helper()
	reg, err := all.Registry(opt)
	if err != nil {
		t.Fatal(err)
	}
	if decodeAs != "" {
		ru, err := reg.ParseDecodeAs(decodeAs)
		if err != nil {
			t.Fatal(err)
		}
		reg.AddRule(ru)
	}
	sink := dissect.SinkFunc(func(r *dissect.Record) error {
		for _, s := range ss {
			s.Record(r)
		}
		return nil
	})
	src := pipeline.NewFiles([]string{file}, nil)
	defer src.Close()
	if _, err := pipeline.Run(context.Background(), src, pipeline.Config{Registry: reg, Sink: sink}); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
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
