package output

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

func TestHexDump(t *testing.T) {
	for _, tc := range []struct {
		data string
		per  int
		want string
	}{
		{"", 16, ""},
		{"\x010DeltaRVr", 16, "0000  01 30 44 65 6c 74 61 52  56 72                     .0DeltaRVr\n"},
		{"0123456789abcdef\x7f\x80\xff", 16,
			"0000  30 31 32 33 34 35 36 37  38 39 61 62 63 64 65 66   0123456789abcdef\n" +
				"0010  7f 80 ff                                           ...\n"},
		{"0123456789abcdef\x00", 8,
			"0000  30 31 32 33 34 35 36 37   01234567\n" +
				"0008  38 39 61 62 63 64 65 66   89abcdef\n" +
				"0010  00                        .\n"},
	} {
		got := string(appendHexDump(nil, []byte(tc.data), tc.per))
		if got != tc.want {
			t.Errorf("%q/%d:\n got %q\nwant %q", tc.data, tc.per, got, tc.want)
		}
		for _, l := range strings.SplitAfter(got, "\n") {
			if l != "" && len(l)-1 > hexDumpWidth(tc.per, 4) {
				t.Errorf("line %q wider than %d", l, hexDumpWidth(tc.per, 4))
			}
		}
	}
	if hexDumpWidth(16, 4) != 73 || hexDumpWidth(8, 4) != 40 {
		t.Errorf("widths %d, %d; want 73, 40", hexDumpWidth(16, 4), hexDumpWidth(8, 4))
	}
	// past 64 KiB, offsets have 8 digits
	big := appendHexDump(nil, make([]byte, 1<<16+1), 16)
	if !bytes.HasPrefix(big, []byte("00000000  00")) || !bytes.Contains(big, []byte("\n00010000  00 ")) {
		t.Errorf("8-digit offsets: %q…", big[:40])
	}
	for _, tc := range []struct{ width, n, want int }{{0, 10, 16}, {73, 10, 16}, {72, 10, 8}, {40, 10, 8}, {76, 1 << 17, 8}, {77, 1 << 17, 16}} {
		if got := hexDumpPerLine(tc.width, tc.n); got != tc.want {
			t.Errorf("hexDumpPerLine(%d, %d) = %d, want %d", tc.width, tc.n, got, tc.want)
		}
	}
}

// rawRecord is a Deltarobot message with its bytes.
func rawRecord() *dissect.Record {
	r := record()
	r.Proto, r.Type, r.Length = "deltarobot", "protocol_magic", 10
	r.Add("magic", dissect.Str("DeltaRVr"))
	r.Raw = []byte("\x010DeltaRVr")
	return r
}

func TestTableHex(t *testing.T) {
	gap := record()
	gap.Type, gap.Proto = dissect.TypeGap, ""
	for _, tc := range []struct {
		width int
		dump  string
	}{
		{0, "0000  01 30 44 65 6c 74 61 52  56 72                     .0DeltaRVr\n"},
		{80, "0000  01 30 44 65 6c 74 61 52  56 72                     .0DeltaRVr\n"},
		{60, "0000  01 30 44 65 6c 74 61 52   .0DeltaR\n0008  56 72                     Vr\n"},
	} {
		var buf bytes.Buffer
		tb := NewTable(&buf, TableOptions{Width: tc.width, Hex: true})
		tb.SetEpoch(rawRecord().Time)
		if err := tb.Record(rawRecord()); err != nil {
			t.Fatal(err)
		}
		if err := tb.Record(gap); err != nil {
			t.Fatal(err)
		}
		if err := tb.Flush(); err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(buf.String(), "\n")
		// header, row, dump, empty line, gap row, empty line
		if len(lines) < 4 {
			t.Fatalf("width %d: %q", tc.width, buf.String())
		}
		got := strings.Join(lines[2:], "")
		want := tc.dump + "\n" + lines[len(lines)-3] + "\n"
		if got != want || !strings.Contains(lines[1], "protocol_magic") || !strings.Contains(lines[len(lines)-3], "gap") {
			t.Errorf("width %d:\n got %q\nwant %q", tc.width, got, want)
		}
	}
	// without Hex, no dump
	var buf bytes.Buffer
	tb := NewTable(&buf, TableOptions{})
	_ = tb.Record(rawRecord())
	_ = tb.Flush()
	if strings.Count(buf.String(), "\n") != 2 {
		t.Errorf("without Hex: %q", buf.String())
	}
}

func TestJSONRaw(t *testing.T) {
	var buf bytes.Buffer
	j := NewJSON(&buf, false)
	_ = j.Record(rawRecord())
	j.SetRaw(true)
	_ = j.Record(rawRecord())
	gap := record()
	gap.Type = dissect.TypeGap
	_ = j.Record(gap)
	_ = j.Flush()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%q", buf.String())
	}
	if strings.Contains(lines[0], `"raw"`) {
		t.Errorf("raw written without SetRaw: %s", lines[0])
	}
	if !strings.HasSuffix(lines[1], `,"fields":{"magic":"DeltaRVr"},"raw":"013044656c7461525672"}`) {
		t.Errorf("got %s", lines[1])
	}
	if !strings.HasSuffix(lines[2], `,"raw":""}`) {
		t.Errorf("gap: %s", lines[2])
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Errorf("%s: %v", l, err)
		}
	}
}

func BenchmarkTableRecordHex(b *testing.B) {
	r := rawRecord()
	r.Raw = bytes.Repeat([]byte("0123456789"), 10)
	t := NewTable(io.Discard, TableOptions{Hex: true})
	t.SetEpoch(r.Time.Add(-time.Second))
	b.ReportAllocs()
	for b.Loop() {
		_ = t.Record(r)
	}
}
