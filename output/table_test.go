package output

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/dissect-tools/dissect/dissect"
)

// cols is the display width of s as the tests count it, from the Unicode
// script tables (independently of runeWidth): Han, Hiragana, Katakana and
// Hangul take two columns, combining marks none, anything else one.
func cols(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			n += 2
		case unicode.Is(unicode.Mn, r):
		default:
			n++
		}
	}
	return n
}

// longRecords are records with every column longer than any terminal:
// IPv6 addresses, a long type, a long INFO, wide characters, hostile text.
func longRecords() []*dissect.Record {
	var rs []*dissect.Record
	r := record()
	r.Src, r.Dst = "[2001:db8:d17a:1234:5678:9abc:def0:4d]:50915", "[fe80::1ff:fe23:4567:890a]:4000"
	r.Type = "vrpn_Tracker Acceleration of the left hand controller"
	r.Stream = 123456789
	r.Summary = strings.Repeat("x=0.054449 y=0.03197 ", 20)
	rs = append(rs, r)
	r = record()
	r.Proto, r.Src, r.Dst = "handcontrol", "host", "/dev/serial/by-id/usb-FTDI_FT232R_USB_UART_A50285BI-if00-port0"
	r.Type = "日本語の長いタイプ名前です"
	r.Summary = "→ GetSettings enable_emg=true caméra 日本 … 0°,358.59375°"
	rs = append(rs, r)
	for _, s := range hostile {
		rs = append(rs, hostileRecord(s))
	}
	r = record()
	r.Proto, r.Type, r.Summary = "", dissect.TypeSkipped, ""
	rs = append(rs, r)
	return rs
}

func tableLines(t *testing.T, o TableOptions, rs []*dissect.Record) []string {
	t.Helper()
	var buf bytes.Buffer
	tb := NewTable(&buf, o)
	tb.SetEpoch(rs[0].Time.Add(-12345 * time.Second))
	for _, r := range rs {
		if err := tb.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	tb.Flush()
	out := strings.TrimSuffix(buf.String(), "\n")
	checkTerminal(t, "table", out)
	return strings.Split(out, "\n")
}

var formats = []TimeFormat{TimeRelative, TimeAbsolute, TimeAbsoluteDate, TimeEpoch}

// TestTableFitsWidth: at every width from 1 to 200 columns, in every time
// format, in UTF-8 and in ASCII, no line is wider than the terminal and
// every row's columns start where the header's do.
func TestTableFitsWidth(t *testing.T) {
	rs := longRecords()
	for width := 1; width <= 200; width++ {
		for _, f := range formats {
			for _, ascii := range []bool{false, true} {
				lines := tableLines(t, TableOptions{Time: f, Width: width, ASCII: ascii}, rs)
				for i, l := range lines {
					if n := cols(l); n > width {
						t.Fatalf("width %d, format %d, ascii %v: line %d is %d columns:\n%s", width, f, ascii, i, n, l)
					}
				}
				if width >= 4 { // narrower, even the INFO label is cut
					checkAligned(t, lines)
				}
			}
		}
	}
}

// checkAligned checks that each column of every row starts at the
// header's column and that the column before it ends in a space: nothing
// spills into the next column, nothing shifts. The header labels are
// found by name, since SOURCE → DESTINATION has spaces in it.
func checkAligned(t *testing.T, lines []string) {
	t.Helper()
	starts := labelStarts(lines[0])
	if len(starts) == 0 {
		t.Fatalf("no header labels in %q", lines[0])
	}
	for _, l := range lines[1:] {
		r := []rune(l)
		pos := runeCols(r)
		for _, s := range starts {
			if s == 0 {
				continue
			}
			if s >= cols(l) && s == starts[len(starts)-1] {
				continue // an empty INFO: no trailing spaces
			}
			// The rune that starts at column s, and the one before it.
			i := indexAt(pos, s)
			if i < 0 || r[i-1] != ' ' {
				t.Fatalf("row not aligned with the header at column %d:\n%s\n%s", s, lines[0], l)
			}
		}
	}
}

// labelStarts returns the columns where the header's labels start.
func labelStarts(h string) []int {
	var starts []int
	r := []rune(h)
	pos := runeCols(r)
	for _, label := range []string{"TIME", "STREAM", "SOURCE", "SRC", "PROTO", "TYPE", "INFO"} {
		for i := 0; i+len(label) <= len(r); i++ {
			if string(r[i:i+len(label)]) == label && (i == 0 || r[i-1] == ' ') {
				starts = append(starts, pos[i])
				break
			}
		}
	}
	return starts
}

// runeCols returns the column of each rune of r.
func runeCols(r []rune) []int {
	pos := make([]int, len(r))
	c := 0
	for i, x := range r {
		pos[i] = c
		c += cols(string(x))
	}
	return pos
}

func indexAt(pos []int, c int) int {
	for i, p := range pos {
		if p == c {
			return i
		}
	}
	return -1
}

// TestTableLayout pins the columns shown and their widths at common
// terminal widths.
func TestTableLayout(t *testing.T) {
	for _, tc := range []struct {
		width  int
		f      TimeFormat
		header string
	}{
		{0, TimeRelative, "TIME        STREAM  SOURCE → DESTINATION                     PROTO        TYPE                    INFO"},
		{0, TimeAbsoluteDate, "TIME                        STREAM  SOURCE → DESTINATION                     PROTO        TYPE                    INFO"},
		{120, TimeRelative, "TIME        STREAM  SOURCE → DESTINATION               PROTO        TYPE                INFO"},
		{100, TimeRelative, "TIME       STREAM SOURCE → DESTINATION              TYPE             INFO"},
		{95, TimeRelative, "TIME       STREAM TYPE                   INFO"},
		{80, TimeRelative, "TIME       STREAM TYPE                   INFO"},
		{80, TimeAbsoluteDate, "TIME                       TYPE                INFO"},
		{50, TimeRelative, "TYPE              INFO"},
		{40, TimeRelative, "INFO"},
		{30, TimeRelative, "INFO"},
	} {
		lines := tableLines(t, TableOptions{Time: tc.f, Width: tc.width}, []*dissect.Record{record()})
		if lines[0] != tc.header {
			t.Errorf("width %d, format %d: header\n%q, want\n%q", tc.width, tc.f, lines[0], tc.header)
		}
	}
}

// TestTableTruncates: cut text ends in an ellipsis (three dots in ASCII),
// an address keeps its port, a serial device its end, a relative time its
// whole seconds; a wide table (width 0) cuts nothing.
func TestTableTruncates(t *testing.T) {
	rs := longRecords()
	lines := tableLines(t, TableOptions{Width: 120}, rs[:2])
	for _, want := range []string{"12345.0000  …56789  [2…f0:4d]:50915 → [fe…:890a]:4000  vrpn         vrpn_Tracker Acce…  x=0.054449 y=0.03197 x=0.054449…"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("line lacks %q:\n%s", want, lines[1])
		}
	}
	if !strings.Contains(lines[2], "host → …_UART_A50285BI-if00-port0  handcontrol  日本語の長いタイ…   → GetSettings") {
		t.Errorf("serial line:\n%s", lines[2])
	}
	lines = tableLines(t, TableOptions{Width: 120, ASCII: true}, rs[:2])
	if !strings.Contains(lines[1], "...789  [...:4d]:50915 -> [f...890a]:4000") || !strings.HasSuffix(lines[1], "x=0.0544...") {
		t.Errorf("ASCII line:\n%s", lines[1])
	}
	lines = tableLines(t, TableOptions{}, rs[:2])
	for _, want := range []string{rs[0].Src + " → " + rs[0].Dst, rs[0].Type, "12345.000000  123456789  [", rs[0].Summary} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("wide line lacks %q:\n%s", want, lines[1])
		}
	}
	if strings.Contains(lines[1], "…") {
		t.Errorf("wide line cut:\n%s", lines[1])
	}
}

// TestTableASCII: with ASCII, no byte of the table is outside ASCII,
// whatever the record holds; arrows are ->, <-, ellipses ....
func TestTableASCII(t *testing.T) {
	for _, width := range []int{0, 80} {
		var buf bytes.Buffer
		tb := NewTable(&buf, TableOptions{Width: width, ASCII: true})
		for _, r := range longRecords() {
			tb.Record(r)
		}
		tb.Flush()
		out := buf.String()
		for i := 0; i < len(out); i++ {
			if out[i] >= 0x80 {
				t.Fatalf("width %d: byte %#x at %d:\n%s", width, out[i], i, out)
			}
		}
		for _, want := range []string{"SOURCE -> DESTINATION", "host -> ", "-> GetSettings"} {
			if width == 0 && !strings.Contains(out, want) {
				t.Errorf("lacks %q:\n%s", want, out)
			}
		}
	}
	if got := ASCII("← a … b 0° \u00e9 日"); got != `<- a ... b 0deg \u{e9} \u{65e5}` {
		t.Errorf("ASCII: %q", got)
	}
}

// TestTableWideAligned: without a width limit, values that fit their
// column keep every row aligned; a longer one pushes only its own line.
func TestTableWideAligned(t *testing.T) {
	r := record()
	r.Src, r.Dst = "192.168.0.10:49731", "192.168.0.177:1493"
	long := record()
	long.Type = strings.Repeat("t", 40)
	long.Summary = "x"
	lines := tableLines(t, TableOptions{Time: TimeAbsoluteDate}, []*dissect.Record{r, long, r})
	checkAligned(t, []string{lines[0], lines[1], lines[3]})
	if i := strings.Index(lines[2], long.Type); lines[2][i+len(long.Type):i+len(long.Type)+2] != "  " {
		t.Errorf("a long value is not followed by the gap:\n%s", lines[2])
	}
}

// TestSummaryASCII: the summary in ASCII draws its table with +-| and
// has no byte outside ASCII, even with text from the wire.
func TestSummaryASCII(t *testing.T) {
	s := hostileSummary("caméra 日本 \x1b")
	s.Messages = append(s.Messages, dissect.TypeCount{Proto: "vrpn", Type: "Tracker …", Count: 1})
	s.First, s.Last = t0, t0.Add(3500*time.Nanosecond)
	var buf bytes.Buffer
	WriteSummaryWith(&buf, s, SummaryOptions{ASCII: true})
	out := buf.String()
	for i := 0; i < len(out); i++ {
		if out[i] >= 0x80 {
			t.Fatalf("byte %#x at %d:\n%s", out[i], i, out)
		}
	}
	for _, want := range []string{"+-", "| vrpn", "Tracker ...", `cam\u{e9}ra`, "4us of capture"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if utf := summaryText(s); !strings.Contains(utf, "│") || !strings.Contains(utf, "4µs") {
		t.Errorf("the UTF-8 summary changed:\n%s", utf)
	}
}

// BenchmarkTableRecordFit is BenchmarkTableRecord on an 80-column
// terminal, where every column is cut to its width.
func BenchmarkTableRecordFit(b *testing.B) {
	r := benchRecord()
	r.Src, r.Dst = "[2001:db8:d17a::4d]:50915", "[2001:db8:d17a::1]:4000"
	t := NewTable(io.Discard, TableOptions{Width: 80})
	t.SetEpoch(r.Time.Add(-time.Second))
	b.ReportAllocs()
	for b.Loop() {
		_ = t.Record(r)
	}
}

// FuzzTableFit: whatever the record holds, at any width, no line is wider
// than the terminal and the rows line up with the header, as the package
// measures widths (its width table is checked by TestRuneWidth).
func FuzzTableFit(f *testing.F) {
	addHostileSeeds(f, func(s string) {
		f.Add(s, "[2001:db8::1]:3883", s, uint8(80), uint8(0), false)
		f.Add("日本語のタイプ", s, "x", uint8(120), uint8(2), true)
	})
	f.Fuzz(func(t *testing.T, a, b, c string, width, format uint8, ascii bool) {
		r := fuzzRecord(a, b, c, 1795306099, 5, format%4)
		lines := tableLines(t, TableOptions{Time: TimeFormat(format % 4), Width: int(width), ASCII: ascii}, []*dissect.Record{r, r})
		for i, l := range lines {
			if n := textWidth([]byte(l)); width > 0 && n > int(width) {
				t.Fatalf("width %d: line %d is %d columns:\n%s", width, i, n, l)
			}
		}
		if width >= 4 && cols(strings.Join(lines, "")) == textWidth([]byte(strings.Join(lines, ""))) {
			checkAligned(t, lines) // where the tests' count agrees
		}
	})
}

// TestRuneWidth checks the width rule on characters whose width
// terminals agree on (glibc's wcwidth and xterm's: U+200B takes none, a
// combining acute none; U+200B never reaches a table unescaped anyway).
func TestRuneWidth(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int
	}{
		{"abc", 3}, {"→←…°é", 5}, {"日本語", 6}, {"한국", 4}, {"ひらがな", 8}, {"ｱｲ", 2}, {"ＡＢ", 4},
		{"\u00e9", 1}, {"😀", 2}, {"\u200b", 0}, {"Ω", 1}, {"e\u0301", 1}, {"中文ab", 6},
	} {
		if got := stringWidth(tc.s); got != tc.want {
			t.Errorf("width of %q = %d, want %d", tc.s, got, tc.want)
		}
		if got := textWidth([]byte(tc.s)); got != tc.want {
			t.Errorf("textWidth of %q = %d, want %d", tc.s, got, tc.want)
		}
	}
}

// TestTableWholeInfo: with Whole, a summary that was shortened ("…")
// gives way to every field in full; a whole summary stays; without Whole
// the summary is shown as the protocol wrote it.
func TestTableWholeInfo(t *testing.T) {
	long := make([]byte, 40)
	for i := range long {
		long[i] = byte(i)
	}
	items := make([]dissect.Field, 12)
	for i := range items {
		items[i].Value = dissect.Int(int64(i * 10))
	}
	r := &dissect.Record{Proto: "p", Type: "t", Summary: "t data=0001… n=[12]",
		Fields: dissect.Fields{{Key: "data", Value: dissect.Bytes(long)}, {Key: "n", Value: dissect.Array(items)}, {Key: "f", Value: dissect.Float(0.1234567891)}}}
	wantHex := "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f2021222324252627"
	want := "data=" + wantHex + " n=[0 10 20 30 40 50 60 70 80 90 100 110] f=0.1234567891"
	if got := string(AppendInfoWhole(nil, r)); got != want {
		t.Errorf("whole:\n got %s\nwant %s", got, want)
	}
	if got := Info(r); got != r.Summary {
		t.Errorf("not whole: %q, want the summary %q", got, r.Summary)
	}
	r.Summary = "t n=3"
	if got := string(AppendInfoWhole(nil, r)); got != "t n=3" {
		t.Errorf("whole summary replaced: %q", got)
	}
	var b bytes.Buffer
	tab := NewTable(&b, TableOptions{Whole: true})
	r.Summary = "cut…"
	if err := tab.Record(r); err != nil {
		t.Fatal(err)
	}
	tab.Flush()
	if !strings.Contains(b.String(), want) {
		t.Errorf("table with Whole: %q lacks %q", b.String(), want)
	}
}
