package output

import (
	"bytes"
	"io"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dissect-tools/dissect/dissect"
)

func treeOf(t testing.TB, o TreeOptions, rs ...*dissect.Record) string {
	t.Helper()
	var buf bytes.Buffer
	tr := NewTree(&buf, o)
	for _, r := range rs {
		if err := tr.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// A record's tree, written out by hand (date -u -d 2026-11-22T10:11:12Z
// +%s is 1795342272): every key of the JSON record in
// its order with the numeric times after time, every field, nested
// arrays and objects with indices and keys one level deeper, empty ones
// as [] and {}, floats as in JSON but NaN bare, byte strings as hex,
// warnings, then an empty line.
func TestTreeRecord(t *testing.T) {
	r := record()
	r.Epoch = r.Time.Add(-2500 * time.Millisecond)
	r.Add("sensor", dissect.Int(-2))
	r.Add("count", dissect.Uint(math.MaxUint64))
	r.Add("x", dissect.Float32(0.2))
	r.Add("y", dissect.Float(100))
	r.Add("bad", dissect.Float(math.NaN()))
	r.Add("on", dissect.Bool(true))
	r.Add("name", dissect.Str("Tracker0"))
	r.Add("blob", dissect.Bytes([]byte{0xde, 0xad}))
	r.Add("none", dissect.Bytes(nil))
	r.Add("sent", dissect.Time(time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)))
	pos := r.Alloc(2)
	pos[0].Value, pos[1].Value = dissect.Float(0.5), dissect.Int(7)
	r.Add("pos", dissect.Array(pos))
	inner := r.Alloc(1)
	inner[0] = dissect.Field{Key: "w", Value: dissect.Float(1)}
	obj := r.Alloc(2)
	obj[0] = dissect.Field{Key: "quat", Value: dissect.Object(inner)}
	obj[1] = dissect.Field{Key: "empty", Value: dissect.Array(nil)}
	r.Add("pose", dissect.Object(obj))
	r.Add("nothing", dissect.Object(nil))
	r.Warn("length 3 is short")
	gap := &dissect.Record{Time: r.Time, Frame: r.Frame, Epoch: r.Epoch, Transport: dissect.UDP, Stream: 4, Src: "10.0.0.1:1", Dst: "10.0.0.2:2", Offset: 5, Length: 6, Type: dissect.TypeGap}

	want := `Record 1: vrpn_Tracker Pos_Quat (vrpn), 88 bytes, stream 3
    time: 2026-11-22T10:11:12.000005000Z
    time_epoch: 1795342272.000005000
    time_relative: 2.500000000
    frame: 17
    proto: vrpn
    transport: tcp
    stream: 3
    src: 127.0.0.1:3883
    dst: [::1]:40000
    offset: 24
    length: 88
    type: vrpn_Tracker Pos_Quat
    fields:
        sensor: -2
        count: 18446744073709551615
        x: 0.2
        y: 100.0
        bad: NaN
        on: true
        name: "Tracker0"
        blob: dead
        none: ""
        sent: 2026-01-02T03:04:05.000000006Z
        pos:
            [0]: 0.5
            [1]: 7
        pose:
            quat:
                w: 1.0
            empty: []
        nothing: {}
    warnings:
        [0]: length 3 is short

Record 2: gap, 6 bytes, stream 4
    time: 2026-11-22T10:11:12.000005000Z
    time_epoch: 1795342272.000005000
    time_relative: 2.500000000
    frame: 17
    proto: 
    transport: udp
    stream: 4
    src: 10.0.0.1:1
    dst: 10.0.0.2:2
    offset: 5
    length: 6
    type: gap
    fields: {}

`
	if got := treeOf(t, TreeOptions{}, r, gap); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// Every string a record has reaches the tree escaped; ASCII mode writes
// the rest of the non-ASCII text as \u{NNNN}.
func TestTreeEscapes(t *testing.T) {
	for _, s := range hostile {
		r := hostileRecord(s)
		for _, o := range []TreeOptions{{}, {Width: 40}, {Width: 24, ASCII: true}} {
			out := treeOf(t, o, r)
			checkTerminal(t, "tree", out)
			if o.ASCII {
				for i := 0; i < len(out); i++ {
					if out[i] >= utf8.RuneSelf {
						t.Fatalf("ASCII tree has %q", out)
					}
				}
			}
			if o.Width > 0 {
				continue
			}
			e := Escape(s)
			for _, want := range []string{
				"    src: " + e + ":1\n", "    dst: dst" + e + "\n", "    proto: p" + e + "\n", "    type: t" + e + "\n",
				"        k" + e + `: "` + e + "\"\n", "            " + e + `: "` + e + "\"\n", "        [0]: w" + e + "\n",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("tree of %q lacks %q:\n%s", s, want, out)
				}
			}
		}
	}
	r := record()
	r.Add("name", dissect.Str("caméra 日本"))
	if out := treeOf(t, TreeOptions{ASCII: true}, r); !strings.Contains(out, `name: "cam\u{e9}ra \u{65e5}\u{672c}"`) {
		t.Errorf("ASCII tree:\n%s", out)
	}
}

// Long lines wrap to the width, breaking after a space in the second
// half of what fits, else at the width; the pieces go on under the value
// while 20 columns are left there, else 4 columns deeper than the line,
// but never further right than width-20. Worked out by hand.
func TestTreeWraps(t *testing.T) {
	r := record()
	r.Add("reason", dissect.Str("the quick brown fox jumps over the lazy dog"))
	r.Add("data", dissect.Bytes(bytes.Repeat([]byte{0xab}, 20)))
	r.Add("k", dissect.Str(strings.Repeat("日", 12)))
	for _, c := range []struct {
		width int
		want  string
	}{
		// Width 50: "        reason: " ends at column 16, and 34 columns
		// are left there. 42 columns hold `reason: "the quick brown fox
		// jumps over th`: the break is after "over ".
		{50, `        reason: "the quick brown fox jumps over 
                the lazy dog"
        data: abababababababababababababababababab
              abab
        k: "日日日日日日日日日日日日"
`},
		// Width 30: 14 columns after "reason: ", fewer than 20: the
		// pieces go on at 8+4 = 12, capped at 30-20 = 10. Line 1 has 22
		// columns: `reason: "the quick bro`, broken after "quick ";
		// then 20: `brown fox jumps over`, broken after "jumps ". The
		// hex has no space: cut at the width. Wide characters count 2.
		{30, `        reason: "the quick 
          brown fox jumps 
          over the lazy dog"
        data: abababababababab
          abababababababababab
          abab
        k: "日日日日日日日日日
          日日日"
`},
	} {
		out := treeOf(t, TreeOptions{Width: c.width}, r)
		from := strings.Index(out, "        reason:")
		to := strings.Index(out, "\n\n")
		if from < 0 || to < from {
			t.Fatalf("width %d: no fields in\n%s", c.width, out)
		}
		if got := out[from : to+1]; got != c.want {
			t.Errorf("width %d: got\n%s\nwant\n%s", c.width, got, c.want)
		}
		for _, l := range strings.Split(out, "\n") {
			if w := stringWidth(l); w > c.width {
				t.Errorf("width %d: line %q is %d columns wide", c.width, l, w)
			}
		}
	}
}

// With the hex option, the record's bytes follow its tree as the table's
// -x dump does.
func TestTreeHex(t *testing.T) {
	r := record()
	r.Raw = []byte("\x01\x30DeltaRVr")
	out := treeOf(t, TreeOptions{Hex: true}, r)
	// 16 bytes a line: after "72 ", 6 missing bytes of 3 columns and 2
	// spaces before the text.
	want := "    fields: {}\n0000  01 30 44 65 6c 74 61 52  56 72 " + strings.Repeat(" ", 18+2) + ".0DeltaRVr\n\n"
	if !strings.HasSuffix(out, want) {
		t.Errorf("got\n%s\nwant the end\n%s", out, want)
	}
	if strings.Contains(treeOf(t, TreeOptions{}, r), "0000  01") {
		t.Error("bytes dumped without the hex option")
	}
}

func TestSeconds(t *testing.T) {
	for _, c := range []struct {
		t, epoch time.Time
		abs, rel string
	}{
		{time.Unix(1795306099, 477060000), time.Unix(1795306099, 472623000), "1795306099.477060000", "0.004437000"},
		{time.Unix(5, 1), time.Unix(6, 0), "5.000000001", "-0.999999999"},
		{time.Unix(-1, 500000000), time.Unix(-1, 500000000), "-0.500000000", "0.000000000"},
		{time.Unix(0, 0), time.Time{}, "0.000000000", "0.000000000"}, // no epoch: 0
		{time.Unix(1<<40, 999999999), time.Unix(0, 1), "1099511627776.999999999", "1099511627776.999999998"},
	} {
		if got := string(AppendEpochSeconds(nil, c.t)); got != c.abs {
			t.Errorf("epoch of %v: %s, want %s", c.t, got, c.abs)
		}
		r := &dissect.Record{Time: c.t, Epoch: c.epoch}
		if got := string(AppendRelativeSeconds(nil, r)); got != c.rel {
			t.Errorf("relative of %v to %v: %s, want %s", c.t, c.epoch, got, c.rel)
		}
	}
}

// -o fields writes the numeric times with nine decimals, quoted when
// asked, and tshark's names are the same keys.
func TestFieldsNumericTimes(t *testing.T) {
	r := record()
	r.Epoch = r.Time.Add(-1234567891 * time.Nanosecond)
	var buf bytes.Buffer
	f, err := NewFields(&buf, []string{"time_epoch", "frame.time_relative", "time_relative", "frame.time_epoch"}, FieldsOptions{Quote: '"', Header: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Record(r); err != nil {
		t.Fatal(err)
	}
	f.Flush()
	want := `"time_epoch"	"frame.time_relative"	"time_relative"	"frame.time_epoch"` + "\n" +
		`"1795342272.000005000"	"1.234567891"	"1.234567891"	"1795342272.000005000"` + "\n"
	if buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}

func FuzzTree(f *testing.F) {
	addHostileSeeds(f, func(s string) {
		f.Add(s, "10.0.0.1:3883", s, int64(1795306099), int64(5), uint8(0), uint8(30))
		f.Add(s, s, strings.Repeat(s+" ", 9), int64(1<<40), int64(9), uint8(0), uint8(1))
		f.Add("vrpn", s, "x", int64(-1<<62), int64(999999999), uint8(2), uint8(80))
	})
	f.Fuzz(func(t *testing.T, a, b, c string, sec, nsec int64, kind, width uint8) {
		r := fuzzRecord(a, b, c, sec, nsec, kind)
		r.Epoch = time.Unix(1795306099, 0)
		w := int(width)
		out := treeOf(t, TreeOptions{Width: w, ASCII: kind&4 != 0, Hex: true}, r)
		checkTerminal(t, "tree", out)
		if !strings.HasSuffix(out, "\n\n") {
			t.Fatalf("no empty line at the end: %q", out)
		}
		if w >= minTreeRoom {
			for _, l := range strings.Split(out, "\n") {
				if stringWidth(l) > w {
					t.Fatalf("line %q wider than %d", l, w)
				}
			}
		}
		// Unwrapped, the same text: joining each line's continuation
		// lines gives the unwrapped tree's lines.
		flat := treeOf(t, TreeOptions{ASCII: kind&4 != 0}, r)
		if w >= minTreeRoom && strings.ReplaceAll(strings.ReplaceAll(out, "\n", ""), " ", "") != strings.ReplaceAll(strings.ReplaceAll(flat, "\n", ""), " ", "") {
			t.Fatalf("wrapping changed the text:\n%s\nunwrapped:\n%s", out, flat)
		}
	})
}

func BenchmarkTreeRecord(b *testing.B) {
	r := benchRecord()
	r.Epoch = r.Time.Add(-time.Second)
	var buf bytes.Buffer
	tr := NewTree(&buf, TreeOptions{Width: 80})
	_ = tr.Record(r)
	_ = tr.Flush()
	b.SetBytes(int64(buf.Len()))
	tr = NewTree(io.Discard, TreeOptions{Width: 80})
	b.ReportAllocs()
	for b.Loop() {
		_ = tr.Record(r)
	}
}

func TestFieldsNumericTimesAllocateNothing(t *testing.T) {
	r := record()
	r.Epoch = r.Time.Add(-time.Second)
	f, err := NewFields(io.Discard, []string{"time_epoch", "time_relative"}, FieldsOptions{Quote: '"'})
	if err != nil {
		t.Fatal(err)
	}
	_ = f.Record(r)
	if n := testing.AllocsPerRun(100, func() { _ = f.Record(r) }); n != 0 {
		t.Errorf("%v allocations a record", n)
	}
}
