package output

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// The fuzz targets put arbitrary strings and instants wherever a record or
// a summary holds them, and check the renderings: the terminal ones carry
// no raw control, bidi character or invalid UTF-8 (checkTerminal) and keep
// their line structure; JSON lines parse back to the same strings.

func addHostileSeeds(f *testing.F, add func(s string)) {
	for _, s := range hostile {
		add(s)
	}
	add("")
	add("\\x1b") // already looks escaped
}

// fuzzRecord builds a record from the fuzzer's strings; kind picks the
// INFO form (fields, protocol summary, skipped reason, gap).
func fuzzRecord(a, b, c string, sec int64, nsec int64, kind uint8) *dissect.Record {
	r := &dissect.Record{
		Time: time.Unix(sec, nsec), Proto: a, Transport: dissect.UDP, Stream: 1,
		Src: b, Dst: c, Offset: 7, Length: 9, Type: a + b,
	}
	switch kind % 4 {
	case 0:
		r.Add(a, dissect.Str(b))
		nested := r.Alloc(2)
		nested[0] = dissect.Field{Key: c, Value: dissect.Str(a)}
		nested[1] = dissect.Field{Key: "n", Value: dissect.Int(sec)}
		r.Add(c, dissect.Object(nested))
	case 1:
		r.Summary = c + a
	case 2:
		r.Type = dissect.TypeSkipped
		r.Add("reason", dissect.Str(c))
	case 3:
		r.Type = dissect.TypeGap
	}
	r.Warn(b + c)
	return r
}

func FuzzTable(f *testing.F) {
	addHostileSeeds(f, func(s string) {
		f.Add(s, "10.0.0.1:3883", s, int64(1795306099), int64(5), uint8(0))
		f.Add("vrpn", s, "x", int64(-1<<62), int64(999999999), uint8(1))
		f.Add(s, s, s, int64(1<<62), int64(0), uint8(2))
	})
	f.Fuzz(func(t *testing.T, a, b, c string, sec, nsec int64, kind uint8) {
		for i, name := range TimeFormats {
			format, _ := ParseTimeFormat(name)
			var buf bytes.Buffer
			tb := NewTable(&buf, TableOptions{Time: format, Location: time.FixedZone("x", -(9*3600 + 1800)), Whole: i%2 == 0})
			tb.SetEpoch(time.Unix(1795306099, 0))
			r := fuzzRecord(a, b, c, sec, nsec, kind)
			if err := tb.Record(r); err != nil {
				t.Fatal(err)
			}
			if err := tb.Record(r); err != nil {
				t.Fatal(err)
			}
			tb.Flush()
			out := buf.String()
			checkTerminal(t, "table", out)
			if n := strings.Count(out, "\n"); n != 3 || !strings.HasSuffix(out, "\n") {
				t.Fatalf("%d lines, want the header and two records: %q", n, out)
			}
			// The TIME column is a number, or a date and time.
			tcol, _, _ := strings.Cut(strings.Split(out, "\n")[1], " ")
			if strings.Trim(tcol, "-0123456789.:/") != "" {
				t.Fatalf("TIME column %q", tcol)
			}
			// A time of day or a date (in any zone) has a year of 0000-9999.
			if name[0] == 'a' || name[0] == 'u' {
				if tcol[0] < '0' || tcol[0] > '9' || (len(name) > 1 && strings.IndexAny(tcol, "-/") != 4) {
					t.Fatalf("-t %s: TIME column %q", name, tcol)
				}
			}
		}
	})
}

func FuzzJSON(f *testing.F) {
	addHostileSeeds(f, func(s string) {
		f.Add(s, "10.0.0.1:3883", s, int64(1795306099), int64(5), uint8(0))
		f.Add("vrpn", s, "x", int64(-1<<62), int64(999999999), uint8(1))
		f.Add(s, s, s, int64(1<<62), int64(0), uint8(2))
	})
	f.Fuzz(func(t *testing.T, a, b, c string, sec, nsec int64, kind uint8) {
		var buf bytes.Buffer
		j := NewJSON(&buf, false)
		r := fuzzRecord(a, b, c, sec, nsec, kind)
		if err := j.Record(r); err != nil {
			t.Fatal(err)
		}
		j.Flush()
		out := buf.String()
		checkTerminal(t, "json", out)
		if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
			t.Fatalf("not one line: %q", out)
		}
		checkJSONLine(t, strings.TrimSuffix(out, "\n"), r)
		ts := out[len(`{"time":"`):strings.Index(out, `","frame"`)]
		if !rfc3339Nano.MatchString(ts) {
			t.Fatalf("time %q is not RFC 3339", ts)
		}
		if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzSummary(f *testing.F) {
	addHostileSeeds(f, func(s string) {
		f.Add(s, "vrpn", s, int64(0), int64(1<<62), uint16(3))
		f.Add("deltarobot", s, "lo", int64(-1<<63), int64(1<<63-1), uint16(40))
	})
	f.Fuzz(func(t *testing.T, a, b, c string, first, last int64, n uint16) {
		s := &dissect.Summary{
			Packets: 1, First: time.Unix(first, 0), Last: time.Unix(last, 0), Warned: int64(n),
			Problems: []dissect.Count{{What: a, N: 1}},
			Capture: &dissect.CaptureCounts{
				Source: b, HasKernel: true, Captured: 5, DissectDropped: 1, Untraced: 1,
				WritePath: c, SerialDroppedBytes: 1, Stopped: a + c,
			},
		}
		for i := range int(n % 64) {
			s.Messages = append(s.Messages, dissect.TypeCount{Proto: []string{a, b}[i%2], Type: c + a + string(rune('a'+i)), Count: int64(i)})
			s.Warnings = append(s.Warnings, b)
			s.Notes = append(s.Notes, a+c)
		}
		var buf bytes.Buffer
		WriteSummary(&buf, s)
		out := buf.String()
		checkTerminal(t, "summary", out)
		// At most: 2 protocols × 21 rows and 4 rules in the type table, 21
		// warning and 21 note lines, 20 other lines (the live block takes
		// up to 10: one fact per line).
		if lines := strings.Count(out, "\n"); lines > 108 {
			t.Fatalf("%d lines", lines)
		}
		for _, want := range []string{"\npackets:  1, ", "\nmessages: ", "\ngaps:     ", "\nlive:     "} {
			if !strings.Contains(out, want) {
				t.Fatalf("no %q line:\n%s", want, out)
			}
		}
	})
}

// FuzzJSONFloat: any float64 or float32 bit pattern is written as a number
// Python reads as a float, with the same bits (checkJSONFloat).
func FuzzJSONFloat(f *testing.F) {
	for _, x := range []uint64{0, 1 << 63, math.Float64bits(100), math.Float64bits(-0.5), math.Float64bits(1e300), 0x7ff8000000000001} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x uint64) {
		f64 := math.Float64frombits(x)
		checkJSONFloat(t, string(appendFloat(nil, f64, 64)), f64, 64)
		f32 := float64(math.Float32frombits(uint32(x)))
		checkJSONFloat(t, string(appendFloat(nil, f32, 32)), f32, 32)
		// through a record, as the writer emits it
		r := record()
		r.Add("v", dissect.Float(f64))
		r.Add("w", dissect.Float32(float32(f32)))
		var buf bytes.Buffer
		j := NewJSON(&buf, false)
		if err := j.Record(r); err != nil {
			t.Fatal(err)
		}
		j.Flush()
		out := buf.String()
		i := strings.Index(out, `"fields":{"v":`)
		k := strings.Index(out, `,"w":`)
		if i < 0 || k < 0 {
			t.Fatalf("%s", out)
		}
		checkJSONFloat(t, out[i+len(`"fields":{"v":`):k], f64, 64)
		checkJSONFloat(t, strings.TrimSuffix(out[k+len(`,"w":`):], "}}\n"), f32, 32)
	})
}
