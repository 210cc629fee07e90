package stats

import (
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

func followRecords() []*dissect.Record {
	ms := time.Millisecond
	a, b := "10.20.0.77:50514", "10.20.0.1:4000"
	magic := rec(0, a, b, 100*ms, "deltarobot", "protocol_magic", 10, f("magic", dissect.Str("DeltaRVr")))
	magic.Raw = []byte("\x01\x30DeltaRVr")
	ver := rec(0, b, a, 101500*time.Microsecond, "deltarobot", "protocol_version", 6, f("version", dissect.Int(1)))
	ver.Offset = 10
	ver.Raw = []byte{0x02, 0x20, 1, 0, 0, 0}
	other := rec(1, a, b, 102*ms, "deltarobot", "ping", 10)
	curve := rec(0, b, a, 103*ms, "deltarobot", "curve", 20, f("note", dissect.Str("\x1b[31m")))
	curve.Offset = 16
	curve.Raw = []byte("0123456789abcdefghij")
	curve.Warnings = []string{"odd"}
	gap := rec(0, a, b, 104*ms, "deltarobot", "gap", 22)
	gap.Offset = 10
	return []*dissect.Record{magic, ver, other, curve, gap}
}

// TestFollowHex checks follow's exact text with the hex dump: the header,
// client lines flush left, server lines indented, times from the stream's
// first record, INFO as the table's (escaped), hex offsets within the
// direction; another stream's records left out; the records' buffers not
// kept (they are overwritten after Record).
func TestFollowHex(t *testing.T) {
	s := NewFollow(0)
	for _, r := range followRecords() {
		s.Record(r)
		for i := range r.Raw {
			r.Raw[i] = 'X'
		}
		r.Src, r.Type = "overwritten", "overwritten"
	}
	got := tableOf(t, s, TableOptions{Hex: true})
	want := `follow: stream 0 (tcp)
A: 10.20.0.77:50514 (lines flush left)
B: 10.20.0.1:4000 (lines indented)
0.000000  deltarobot protocol_magic  10 bytes at 0  magic="DeltaRVr"
00000000  01 30 44 65 6c 74 61 52  56 72                    .0DeltaRVr
    0.001500  deltarobot protocol_version  6 bytes at 10  version=1
    0000000a  02 20 01 00 00 00                                 . ....
    0.003000  deltarobot curve  20 bytes at 16  note="\x1b[31m" [warning: odd]
    00000010  30 31 32 33 34 35 36 37  38 39 61 62 63 64 65 66  0123456789abcdef
    00000020  67 68 69 6a                                       ghij
0.004000  deltarobot gap  22 bytes at 10  22 bytes never captured
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if noHex := tableOf(t, s, TableOptions{}); strings.Contains(noHex, "00000000  01") {
		t.Errorf("hex without Hex:\n%s", noHex)
	}
	rows := jsonRows(t, s)
	if len(rows) != 4 || rows[0]["raw"] != "013044656c7461525672" || rows[1]["src"] != "10.20.0.1:4000" ||
		rows[2]["info"] != `note="\x1b[31m" [warning: odd]` || rows[3]["raw"] != nil {
		t.Errorf("rows %v", rows)
	}
	narrow := tableOf(t, s, TableOptions{Hex: true, Width: 40, ASCII: true})
	for _, l := range strings.Split(strings.TrimSuffix(narrow, "\n"), "\n") {
		if width(l) > 40 || strings.ContainsFunc(l, func(r rune) bool { return r > 127 }) {
			t.Errorf("line %q", l)
		}
	}
}

// TestFollowBounded checks the memory bound: past it, records are only
// counted, and the table and JSON say how many were not shown.
func TestFollowBounded(t *testing.T) {
	s := NewFollow(7)
	s.limit = 10_000
	r := rec(7, "a", "b", 0, "vrpn", "vrpn_Tracker Pos_Quat", 100)
	r.Raw = make([]byte, 100)
	for range 1000 {
		s.Record(r)
	}
	if s.size > s.limit {
		t.Fatalf("kept %d bytes, limit %d", s.size, s.limit)
	}
	kept := len(s.entries)
	if kept == 0 || kept >= 1000 || s.dropped != int64(1000-kept) {
		t.Fatalf("kept %d, dropped %d", kept, s.dropped)
	}
	tab := tableOf(t, s, TableOptions{})
	note := itoa(int64(1000-kept)) + " more records not shown (use -Y stream==7)"
	if !strings.HasSuffix(tab, note+"\n") {
		t.Errorf("no note %q at the end:\n%s", note, tab[len(tab)-200:])
	}
	rows := jsonRows(t, s)
	if last := rows[len(rows)-1]; int(num(t, last["not_shown"])) != 1000-kept {
		t.Errorf("last row %v", last)
	}
}

// TestFollowNoRecord checks the header of a stream never seen.
func TestFollowNoRecord(t *testing.T) {
	s := NewFollow(9)
	if got := tableOf(t, s, TableOptions{}); got != "follow: stream 9: no record\n" {
		t.Errorf("%q", got)
	}
	if rows := jsonRows(t, s); len(rows) != 0 {
		t.Errorf("rows %v", rows)
	}
}
