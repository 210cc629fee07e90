package output

import (
	"bytes"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// fieldsRecord is a VRPN-like record with scalars, an array, an object
// and an array of objects.
func fieldsRecord() *dissect.Record {
	r := record()
	r.Add("sensor", dissect.Int(-1))
	r.Add("big", dissect.Uint(10966887678864641684))
	pos := r.Alloc(3)
	pos[0], pos[1], pos[2] = dissect.Elem(dissect.Float(1)), dissect.Elem(dissect.Float32(0.2)), dissect.Elem(dissect.Float(math.NaN()))
	r.Add("pos", dissect.Array(pos))
	q := r.Alloc(2)
	q[0] = dissect.Field{Key: "w", Value: dissect.Float(0.5)}
	q[1] = dissect.Field{Key: "name", Value: dissect.Str("a\"b")}
	r.Add("quat", dissect.Object(q))
	vals := r.Alloc(2)
	for i, sem := range []string{"x", "y\tz"} {
		o := r.Alloc(1)
		o[0] = dissect.Field{Key: "semantics", Value: dissect.Str(sem)}
		vals[i] = dissect.Elem(dissect.Object(o))
	}
	r.Add("values", dissect.Array(vals))
	r.Add("raw", dissect.Bytes([]byte{0xde, 0xad}))
	r.Add("sent", dissect.Time(time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)))
	r.Add("ok", dissect.Bool(true))
	r.Add("none", dissect.Value{})
	r.Add("text", dissect.Str("a\\b\nc\x1b[2J\u202e\xff"))
	return r
}

func writeFields(t *testing.T, names []string, opts []string, recs ...*dissect.Record) string {
	t.Helper()
	var o FieldsOptions
	for _, s := range opts {
		if err := ParseFieldsOption(s, &o); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	f, err := NewFields(&buf, names, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := f.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestFieldsValues(t *testing.T) {
	r := fieldsRecord()
	for _, tc := range []struct {
		names []string
		opts  []string
		want  string
	}{
		{[]string{"stream", "proto", "type", "transport", "src", "dst", "offset", "length"}, nil,
			"3\tvrpn\tvrpn_Tracker Pos_Quat\ttcp\t127.0.0.1:3883\t[::1]:40000\t24\t88\n"},
		{[]string{"time", "vrpn.sent"}, nil, "2026-11-22T10:11:12.000005000Z\t2026-01-02T03:04:05.000000006Z\n"},
		{[]string{"vrpn.sensor", "vrpn.big", "vrpn.ok", "vrpn.raw", "vrpn.none", "vrpn.missing", "deltarobot.x"}, nil,
			"-1\t10966887678864641684\ttrue\tdead\t\t\t\n"},
		{[]string{"vrpn.pos", "vrpn.pos[1]", "vrpn.quat.w", "vrpn.quat"}, nil,
			"1.0,0.2,NaN\t0.2\t0.5\t{\"w\":0.5,\"name\":\"a\\\"b\"}\n"},
		{[]string{"vrpn.values.semantics", "vrpn.values[1].semantics", "vrpn.values"}, nil,
			"x,y\\tz\ty\\tz\t{\"semantics\":\"x\"},{\"semantics\":\"y\\tz\"}\n"},
		{[]string{"vrpn.text"}, nil, `a\\b\nc\x1b[2J\u{202e}\xff` + "\n"},
		{[]string{"vrpn.values.semantics"}, []string{"occurrence=f"}, "x\n"},
		{[]string{"vrpn.values.semantics"}, []string{"occurrence=l"}, "y\\tz\n"},
		{[]string{"vrpn.values.semantics", "stream"}, []string{"aggregator=;", "separator=,"}, "x;y\\tz,3\n"},
		{[]string{"vrpn.values.semantics", "stream"}, []string{"aggregator=/s", "separator=/s"}, "x y\\tz 3\n"},
		{[]string{"stream", "vrpn"}, []string{"header=y"}, "stream\tvrpn\n3\ttrue\n"},
		{[]string{"stream", "vrpn.quat.name", "vrpn.missing"}, []string{"header=y", "quote=d", "separator=,"},
			"\"stream\",\"vrpn.quat.name\",\"vrpn.missing\"\n\"3\",\"a\"\"b\",\n"},
		{[]string{"vrpn.quat.name"}, []string{"quote=s"}, "'a\"b'\n"},
		{[]string{"stream"}, []string{"bom=y", "quote=n"}, "\ufeff3\n"},
	} {
		got := writeFields(t, tc.names, tc.opts, r)
		if got != tc.want {
			t.Errorf("%v %v:\n got %q\nwant %q", tc.names, tc.opts, got, tc.want)
		}
	}
}

// TestFieldsHeaderWithoutRecords: the header is written even when no
// record comes.
func TestFieldsHeaderWithoutRecords(t *testing.T) {
	if got := writeFields(t, []string{"stream", "deltarobot.x"}, []string{"header=y"}); got != "stream\tdeltarobot.x\n" {
		t.Errorf("got %q", got)
	}
	if got := writeFields(t, []string{"stream"}, nil); got != "" {
		t.Errorf("got %q", got)
	}
}

func TestParseFieldsOption(t *testing.T) {
	var o FieldsOptions
	for _, bad := range []string{"header", "header=x", "quote=q", "occurrence=2", "separator=", "separator=a\nb", "nosuch=y", "escape=n"} {
		if err := ParseFieldsOption(bad, &o); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	for _, good := range []string{"header=y", "header=n", "separator=/t", "separator=|", "aggregator=/s", "quote=d", "occurrence=a", "bom=n", "escape=y"} {
		if err := ParseFieldsOption(good, &o); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
}

func TestNewFieldsBadName(t *testing.T) {
	for _, names := range [][]string{nil, {"stream", "1x"}, {"vrpn."}} {
		if _, err := NewFields(io.Discard, names, FieldsOptions{}); err == nil {
			t.Errorf("%q: no error", names)
		}
	}
}

// TestFieldsOneLineSafe: whatever the strings, a record is one line that
// may reach a terminal.
func TestFieldsOneLineSafe(t *testing.T) {
	for _, s := range append(hostile, "", "\\", "\"", "\t\t") {
		r := record()
		r.Src = s
		r.Add("name", dissect.Str(s))
		for _, q := range []string{"quote=n", "quote=d"} {
			out := writeFields(t, []string{"src", "vrpn.name", "stream"}, []string{q}, r)
			checkTerminal(t, "fields", strings.ReplaceAll(out, "\t", " "))
			if strings.Count(out, "\n") != 1 || strings.Count(out, "\t") != 2 {
				t.Errorf("%q (%s): not one line of three values: %q", s, q, out)
			}
		}
	}
}

func FuzzFields(f *testing.F) {
	addHostileSeeds(f, func(s string) { f.Add(s, s, "") })
	f.Fuzz(func(t *testing.T, a, b, c string) {
		r := fuzzRecord("vrpn", b, c, 1, 2, 0)
		r.Add("s", dissect.Str(a))
		out := writeFields(t, []string{"src", "dst", "type", "vrpn.s", "proto"}, []string{"quote=d"}, r)
		checkTerminal(t, "fields", strings.ReplaceAll(out, "\t", " "))
		if strings.Count(out, "\n") != 1 || strings.Count(out, "\t") != 4 {
			t.Fatalf("not one line of five values: %q", out)
		}
	})
}

func BenchmarkFieldsRecord(b *testing.B) {
	r := fieldsRecord()
	f, err := NewFields(io.Discard, []string{"time", "stream", "src", "type", "vrpn.sensor", "vrpn.pos", "vrpn.quat.w", "vrpn.values.semantics", "vrpn.text"}, FieldsOptions{Quote: '"'})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = f.Record(r)
	}
}
