package output

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

func summaryText(s *dissect.Summary) string {
	var buf bytes.Buffer
	WriteSummary(&buf, s)
	return buf.String()
}

// TestSummaryTypeTableBounded: 204,800 distinct VRPN type names (the
// issue's capture) give a summary of a few dozen lines: the 20 most
// frequent types, then one row for the others with their messages.
func TestSummaryTypeTableBounded(t *testing.T) {
	s := &dissect.Summary{Packets: 10, Bytes: 2048, First: t0, Last: t0.Add(2 * time.Second)}
	const n = 204800
	var total int64
	for i := range n {
		c := int64(1)
		if i%10000 == 7 {
			c = int64(1000 + i/10000) // 21 frequent types, "t0000007" … "t0200007"
		}
		s.Messages = append(s.Messages, dissect.TypeCount{Proto: "vrpn", Type: fmt.Sprintf("t%07d", i), Count: c})
		total += c
	}
	s.Messages = append(s.Messages,
		dissect.TypeCount{Proto: "deltarobot", Type: "pong", Count: 5},
		dissect.TypeCount{Proto: "deltarobot", Type: "ping", Count: 5},
		dissect.TypeCount{Proto: "deltarobot", Type: "eot", Count: 9})
	out := summaryText(s)
	if lines := strings.Count(out, "\n"); lines > 40 {
		t.Fatalf("%d lines:\n%s", lines, out)
	}
	for _, want := range []string{
		"packets:  10, 2.0 kB, 2s of capture, read in 0s\n",
		fmt.Sprintf("messages: %d\n", total+19),
		"gaps:     0 (0 bytes never captured)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	// Rows in order: deltarobot by count then name, then vrpn's top 20 by
	// count, then the rest: 204,780 types (one of them frequent, 1000).
	row := regexp.MustCompile(`│ (\S+) +│ (.+?) +│ (\d+) +│`)
	var got []string
	for _, m := range row.FindAllStringSubmatch(out, -1) {
		got = append(got, m[1]+" "+m[2]+" "+m[3])
	}
	want := []string{"deltarobot eot 9", "deltarobot ping 5", "deltarobot pong 5"}
	for i := 20; i >= 1; i-- {
		want = append(want, fmt.Sprintf("vrpn t%07d %d", i*10000+7, 1000+i))
	}
	want = append(want, fmt.Sprintf("vrpn … and %d more types %d", n-20, n-21+1000))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSummaryTypeTableExactlyAtTheBound(t *testing.T) {
	s := &dissect.Summary{}
	for i := range maxTypesPerProto {
		s.Messages = append(s.Messages, dissect.TypeCount{Proto: "vrpn", Type: fmt.Sprintf("type%02d", i), Count: 1})
	}
	out := summaryText(s)
	if strings.Contains(out, "more types") || !strings.Contains(out, "type19") {
		t.Errorf("20 types must all be shown:\n%s", out)
	}
}

func TestSummaryWarningsAndNotesBounded(t *testing.T) {
	s := &dissect.Summary{Warned: 500}
	for i := range 100 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("warning %d", i))
		s.Notes = append(s.Notes, fmt.Sprintf("note %d", i))
	}
	s.Notes[0] = strings.Repeat("long", 1000)
	out := summaryText(s)
	if lines := strings.Count(out, "\n"); lines > 60 {
		t.Fatalf("%d lines:\n%s", lines, out)
	}
	for _, want := range []string{
		"  - warning 19\n",
		"  (the first 20 distinct warnings are shown; every one is in the output)\n",
		"note: note 19\n",
		"note: (80 more notes not shown)\n",
		"note: " + strings.Repeat("long", 50) + "…\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "warning 20") || strings.Contains(out, "note 20") {
		t.Errorf("more than 20 shown:\n%s", out)
	}
}

// TestSummaryLinesUnchanged pins the lines other tools and tests read.
func TestSummaryLinesUnchanged(t *testing.T) {
	s := &dissect.Summary{
		Packets: 3, Bytes: 1500, First: t0, Last: t0.Add(1500 * time.Millisecond),
		Streams:  dissect.StreamCounts{TCP: 1, UDP: 2},
		Messages: []dissect.TypeCount{{Proto: "vrpn", Type: "vrpn_Tracker Pos_Quat", Count: 32}},
		Gaps:     1, GapBytes: 10, Warned: 1, Warnings: []string{"w"},
		Capture: &dissect.CaptureCounts{Source: "lo", Captured: 3, Stopped: "interrupted"},
	}
	out := summaryText(s)
	for _, want := range []string{
		"\n== dissect summary ==\n",
		"packets:  3, 1.5 kB, 1.5s of capture, read in 0s\n",
		"streams:  3 (1 tcp, 2 udp)\n",
		"messages: 32\n",
		"│ vrpn     │ vrpn_Tracker Pos_Quat │ 32       │\n",
		"gaps:     1 (10 bytes never captured)\n",
		"warnings: 1 records\n  - w\n",
		"live:     lo: 3 packets captured\n",
		"          stopped: interrupted\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

// TestSummarySpanNeverNonsense: packets centuries apart.
func TestSummarySpanNeverNonsense(t *testing.T) {
	s := &dissect.Summary{Packets: 2, First: tMin, Last: tMax}
	out := summaryText(s)
	if !strings.Contains(out, "packets:  2, 0 B, 5.846e+11 years of capture,") {
		t.Errorf("got\n%s", out)
	}
}
