package stats

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dissect-tools/dissect/dissect"
)

// TestBarAndSpark checks the glyphs against values worked out by hand:
// bar(v, most, 20) has v*20*8/most eighths; spark's level of c is
// (c*levels-1)/most.
func TestBarAndSpark(t *testing.T) {
	for _, c := range []struct {
		v, most int64
		ascii   bool
		want    string
	}{
		{10, 20, false, strings.Repeat("█", 10)},
		{1, 160, false, "▏"},  // 1*20*8/160 = 1 eighth
		{1, 1000, false, "▏"}, // less than an eighth still shows
		{3, 4, false, strings.Repeat("█", 15)},
		{7, 16, false, strings.Repeat("█", 8) + "▊"}, // 70 eighths: 8 whole, 6 left
		{0, 16, false, ""},
		{5, 20, true, "#####"},
		{1, 1000, true, "#"},
	} {
		if got := bar(c.v, c.most, 20, c.ascii); got != c.want {
			t.Errorf("bar(%d, %d, ascii %v) = %q, want %q", c.v, c.most, c.ascii, got, c.want)
		}
	}
	if got := spark([]uint32{0, 1, 2, 4, 8}, false); got != " ▁▂▄█" {
		t.Errorf("spark = %q, want %q", got, " ▁▂▄█")
	}
	if got := spark([]uint32{0, 1, 2, 4, 8}, true); got != " ..-#" {
		t.Errorf("ascii spark = %q, want %q", got, " ..-#")
	}
	if got := spark([]uint32{0, 0}, false); got != "  " {
		t.Errorf("empty spark = %q", got)
	}
}

// TestTimeSlices feeds one event a second for 15 s: the slices double from
// 1 µs until 16 of them cover 15 s (2^20 µs each), and each event sits in
// the slice its time divided by that width says, merged counts included.
func TestTimeSlices(t *testing.T) {
	var s timeSlices
	var c [sparkBuckets]uint32
	for k := range 16 {
		c[s.slot(t0.Add(time.Duration(k)*time.Second), func() { mergeSlices(&c) })]++
	}
	w := time.Duration(1<<20) * time.Microsecond
	if s.w != w {
		t.Fatalf("slice width %v, want %v", s.w, w)
	}
	var want [sparkBuckets]uint32
	for k := range 16 {
		want[int(time.Duration(k)*time.Second/w)]++
	}
	if c != want || s.used != int(15*time.Second/w)+1 {
		t.Errorf("slices %v used %d, want %v used %d", c, s.used, want, int(15*time.Second/w)+1)
	}
}

// displayCols counts the columns of the test's own strings: the CJK and
// emoji characters used here take two, every other one.
func displayCols(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case r >= 0x3040 && r <= 0x30ff, r >= 0x4e00 && r <= 0x9fff, r == '😀':
			n += 2
		default:
			n++
		}
	}
	return n
}

// TestWideCharactersAlign: types with wide characters from the wire do
// not misalign the table: with a right-aligned last column every line ends
// at the same column, and none is wider than the width asked.
func TestWideCharactersAlign(t *testing.T) {
	s := NewRate(testDecls(t))
	for i, typ := range []string{"日本語のタイプ", "abc", "😀 smile", "中文"} {
		for k := range 3 {
			s.Record(rec(i, "a", "b", time.Duration(k)*time.Second, "vrpn", typ, 20))
		}
	}
	for _, w := range []int{0, 80, 50} {
		lines := strings.Split(strings.TrimSuffix(tableOf(t, s, TableOptions{Width: w}), "\n"), "\n")
		end := displayCols(lines[1])
		for _, l := range lines[1:6] {
			if n := displayCols(l); n != end {
				t.Errorf("width %d: line %q ends at column %d, the header at %d", w, l, n, end)
			}
			if w > 0 && displayCols(l) > w {
				t.Errorf("width %d: line %q is %d columns", w, l, displayCols(l))
			}
		}
	}
}

// TestRateKeepsStall: at 80 columns rate keeps MAX GAP and STALL AT, and
// a note names exactly the columns it left out that --wide shows.
func TestRateKeepsStall(t *testing.T) {
	s := NewRate(testDecls(t))
	for k := range 5 {
		s.Record(rec(4, "s", "c", time.Duration(k)*250*time.Millisecond, "vrpn", "vrpn_Tracker Pos_Quat", 88, f("sender", dissect.Str("Tracker0")), f("sensor", dissect.Int(int64(k%2)))))
	}
	wide := strings.Split(tableOf(t, s, TableOptions{Graph: true}), "\n")[1]
	out := tableOf(t, s, TableOptions{Width: 80, Hint: "--wide shows every column", Graph: true})
	head := strings.Split(out, "\n")[1]
	for _, c := range []string{"MAX GAP ms", "STALL AT s", "TYPE", "SENDER", "SENSOR", "MSGS"} {
		if !strings.Contains(head, c) {
			t.Errorf("80 columns: header %q lacks %s", head, c)
		}
	}
	var left []string
	for _, c := range strings.Split(wide, "  ") {
		if c = strings.TrimSpace(c); c != "" && !strings.Contains(head, c) {
			left = append(left, c)
		}
	}
	note := "not shown to fit 80 columns: " + strings.Join(left, ", ") + " (--wide shows every column)"
	if len(left) == 0 || !strings.Contains(strings.ReplaceAll(out, "\n", " "), note) {
		t.Errorf("want the note %q in\n%s", note, out)
	}
	for _, l := range strings.Split(out, "\n") {
		if utf8.RuneCountInString(l) > 80 {
			t.Errorf("line of %d columns: %q", utf8.RuneCountInString(l), l)
		}
	}
}

// TestIOStatBars: with Graph each interval has a bar of its messages
// against the busiest interval's (20 columns); without, no bar column.
func TestIOStatBars(t *testing.T) {
	s := NewIOStat(int64(time.Second), "", nil)
	for k := range 4 {
		s.Record(rec(1, "a", "b", 0, "deltarobot", "ping", 8))
		if k < 1 {
			s.Record(rec(1, "a", "b", 2*time.Second, "deltarobot", "ping", 8))
		}
	}
	out := tableOf(t, s, TableOptions{Graph: true})
	lines := strings.Split(out, "\n")
	if !strings.HasSuffix(lines[1], "MESSAGES") || !strings.HasSuffix(lines[2], strings.Repeat("█", 20)) ||
		!strings.HasSuffix(lines[4], "  "+strings.Repeat("█", 5)) {
		t.Errorf("bars (4 and 1 messages: 20 and 5 blocks):\n%s", out)
	}
	if plain := tableOf(t, s, TableOptions{}); strings.Contains(plain, "█") || strings.Contains(plain, "MESSAGES") {
		t.Errorf("bars without Graph:\n%s", plain)
	}
}
