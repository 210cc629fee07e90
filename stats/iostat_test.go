package stats

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// TestIOStatSumsAgainstTruth runs io,stat (and conv) over every generated
// capture with a sidecar: summed over the intervals, the messages and bytes
// of the protocol are the truth's records and the sum of their lengths, the
// gap and skipped bytes the sums of the truth's ranges; conv gives the same
// per stream.
func TestIOStatSumsAgainstTruth(t *testing.T) {
	for _, tpath := range truths(t) {
		tf := readTruth(t, tpath)
		t.Run(tf.File, func(t *testing.T) {
			proto := tf.DecodeAs[strings.LastIndex(tf.DecodeAs, ",")+1:]
			if proto == "neptune-wiki" {
				proto = "neptune"
			}
			type tot struct{ msgs, bytes, gapB, skipB int64 }
			var all tot
			perStream := map[int]*tot{}
			for _, st := range tf.Streams {
				ts := &tot{}
				perStream[st.Stream] = ts
				for _, d := range st.Directions {
					for _, r := range d.Records {
						if r.Type == dissect.TypeGap || r.Type == dissect.TypeSkipped {
							continue
						}
						ts.msgs++
						ts.bytes += r.Length
					}
					for _, g := range d.Gaps {
						ts.gapB += g[1] - g[0]
					}
					for _, g := range d.Skipped {
						ts.skipB += g[1] - g[0]
					}
				}
				all.msgs += ts.msgs
				all.bytes += ts.bytes
				all.gapB += ts.gapB
				all.skipB += ts.skipB
			}
			io := NewIOStat(int64(50*time.Millisecond), "", nil)
			conv := NewConv()
			runCapture(t, filepath.Join("../pcaps", tf.File), tf.DecodeAs, truthOptions(tf), io, conv)
			rows := jsonRows(t, io)
			var sum tot
			for _, row := range rows {
				if row["interval"] == "total" {
					continue
				}
				for name, p := range row["protocols"].(map[string]any) {
					if name != proto {
						t.Errorf("protocol %q in %v", name, row)
						continue
					}
					m := p.(map[string]any)
					sum.msgs += int64(num(t, m["messages"]))
					sum.bytes += int64(num(t, m["bytes"]))
				}
				sum.gapB += int64(num(t, row["gap_bytes"]))
				sum.skipB += int64(num(t, row["skipped_bytes"]))
			}
			if sum != all {
				t.Errorf("sums over the intervals %+v, truth %+v", sum, all)
			}
			if len(rows) < 2 {
				t.Errorf("%d rows", len(rows))
			}
			for _, row := range jsonRows(t, conv) {
				ts := perStream[int(num(t, row["stream"]))]
				if ts == nil {
					t.Errorf("stream not in the truth: %v", row)
					continue
				}
				got := tot{int64(num(t, row["messages"])), int64(num(t, row["bytes"])), int64(num(t, row["gap_bytes"])), int64(num(t, row["skipped_bytes"]))}
				if got != *ts {
					t.Errorf("conv %v: %+v, truth %+v", row["stream"], got, *ts)
				}
				if row["proto"] != proto {
					t.Errorf("conv proto %v, want %s", row["proto"], proto)
				}
			}
		})
	}
}

// TestIOStatIntervals checks interval boundaries on hand-built records:
// an interval is [k·I, (k+1)·I) from the first record's time; a record
// before the first lands in interval 0; events count as gap/skipped bytes,
// not messages; the filter column counts matching messages; empty
// intervals are rows of zeros.
func TestIOStatIntervals(t *testing.T) {
	filter := func(r *dissect.Record) bool { return r.Type == "pong" }
	s := NewIOStat(int64(time.Second), "pong", filter)
	add := func(at time.Duration, proto, typ string, n int64) {
		s.Record(rec(0, "a", "b", time.Hour+at, proto, typ, n))
	}
	add(0, "deltarobot", "ping", 10)
	add(999999999, "deltarobot", "pong", 10)       // last ns of interval 0
	add(time.Second, "deltarobot", "pong", 10)     // first of interval 1
	add(-time.Millisecond, "vrpn", "cookie", 24)   // before the first: interval 0
	add(1500*time.Millisecond, "", "skipped", 7)   // events
	add(1600*time.Millisecond, "vrpn", "gap", 100) // a gap of a vrpn stream
	add(3200*time.Millisecond, "vrpn", "x", 30)    // interval 3; 2 is empty
	var got []string
	for _, row := range jsonRows(t, s) {
		p := row["protocols"].(map[string]any)
		cell := func(name string) string {
			m := p[name].(map[string]any)
			return fmt.Sprintf("%v/%v", m["messages"], m["bytes"])
		}
		got = append(got, fmt.Sprintf("%v-%v %v:%s vrpn:%s gap:%v skip:%v f:%v/%v", row["start_s"], row["end_s"], row["interval"],
			cell("deltarobot"), cell("vrpn"), row["gap_bytes"], row["skipped_bytes"], row["filter_messages"], row["filter_bytes"]))
	}
	want := []string{
		"0.0-1.0 <nil>:2/20 vrpn:1/24 gap:0 skip:0 f:1/10",
		"1.0-2.0 <nil>:1/10 vrpn:0/0 gap:100 skip:7 f:1/10",
		"2.0-3.0 <nil>:0/0 vrpn:0/0 gap:0 skip:0 f:0/0",
		"3.0-4.0 <nil>:0/0 vrpn:1/30 gap:0 skip:0 f:0/0",
		"<nil>-<nil> total:3/30 vrpn:2/54 gap:100 skip:7 f:2/20",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	tab := tableOf(t, s, TableOptions{})
	wantTab := `io,stat: messages and bytes per 1 s interval, from the first record
INTERVAL s  deltarobot msgs  deltarobot bytes  vrpn msgs  vrpn bytes  gap bytes  skipped bytes  filter msgs  filter bytes
0-1                       2                20          1          24          0              0            1            10
1-2                       1                10          0           0        100              7            1            10
2-3                       0                 0          0           0          0              0            0             0
3-4                       0                 0          1          30          0              0            0             0
total                     3                30          2          54        100              7            2            20
filter: pong
`
	if tab != wantTab {
		t.Errorf("table\n%s\nwant\n%s", tab, wantTab)
	}
	narrow := tableOf(t, s, TableOptions{Width: 60})
	for _, l := range strings.Split(strings.TrimSuffix(narrow, "\n"), "\n") {
		if width(l) > 60 {
			t.Errorf("line wider than 60: %q", l)
		}
	}
}

// TestIOStatMerge checks the bound on intervals: past it the interval
// doubles and neighbours are added up, and the table says so.
func TestIOStatMerge(t *testing.T) {
	s := NewIOStat(int64(time.Second), "", nil)
	s.maxIv = 4
	for i := range 10 {
		s.Record(rec(0, "a", "b", time.Duration(i)*time.Second, "roboid", "Pose", int64(i)))
	}
	// 10 s in 4 intervals: 1 s → 2 s → 4 s (3 intervals of 4 s).
	if s.cur != int64(4*time.Second) || s.n != 3 {
		t.Fatalf("interval %v, %d intervals", time.Duration(s.cur), s.n)
	}
	c := s.byName["roboid"]
	if fmt.Sprint(c.msgs, c.bytes) != "[4 4 2] [6 22 17]" {
		t.Errorf("msgs %v bytes %v", c.msgs, c.bytes)
	}
	if tab := tableOf(t, s, TableOptions{}); !strings.Contains(tab, "interval widened from 1 s to 4 s to keep at most 4 intervals") {
		t.Errorf("no note:\n%s", tab)
	}
}

// TestIOStatEmptyRuns: a run of at most 10 empty intervals is a row each;
// a longer run is one row that says how many intervals it spans, so two
// records 136 years apart make 3 rows (and a total), not 262,144.
func TestIOStatEmptyRuns(t *testing.T) {
	for _, c := range []struct {
		name string
		last time.Duration // time of the second record, after the first
		rows []string      // JSON rows: start_s-end_s empty_intervals
	}{
		{"10 empty", 11 * time.Second, []string{"0.0-1.0 <nil>", "1.0-2.0 <nil>", "2.0-3.0 <nil>", "3.0-4.0 <nil>",
			"4.0-5.0 <nil>", "5.0-6.0 <nil>", "6.0-7.0 <nil>", "7.0-8.0 <nil>", "8.0-9.0 <nil>", "9.0-10.0 <nil>",
			"10.0-11.0 <nil>", "11.0-12.0 <nil>", "<nil>-<nil> <nil>"}},
		{"11 empty", 12 * time.Second, []string{"0.0-1.0 <nil>", "1.0-12.0 11", "12.0-13.0 <nil>", "<nil>-<nil> <nil>"}},
	} {
		s := NewIOStat(int64(time.Second), "", nil)
		s.Record(rec(0, "a", "b", time.Hour, "vrpn", "x", 5))
		s.Record(rec(0, "a", "b", time.Hour+c.last, "vrpn", "x", 7))
		var got []string
		for _, row := range jsonRows(t, s) {
			got = append(got, fmt.Sprintf("%v-%v %v", row["start_s"], row["end_s"], row["empty_intervals"]))
		}
		if strings.Join(got, "\n") != strings.Join(c.rows, "\n") {
			t.Errorf("%s: rows\n%s\nwant\n%s", c.name, strings.Join(got, "\n"), strings.Join(c.rows, "\n"))
		}
	}

	// 136 years at 1 s: the interval doubles until the span fits in
	// 262,144 intervals (2^14 s: 4,288,896,000 s / 16,384 s = 261,773
	// whole intervals, the last record in interval 261,773).
	const span = 136 * 365 * 24 * time.Hour
	s := NewIOStat(int64(time.Second), "", nil)
	s.Record(rec(0, "a", "b", time.Hour, "vrpn", "x", 5))
	s.Record(rec(0, "a", "b", time.Hour+span, "vrpn", "x", 7))
	const iv, last = 16384, 4288896000 / 16384
	rows := jsonRows(t, s)
	if len(rows) != 4 {
		t.Fatalf("%d JSON rows, want 4", len(rows))
	}
	got := fmt.Sprintf("%v %v %v", rows[1]["start_s"], rows[1]["end_s"], rows[1]["empty_intervals"])
	if want := fmt.Sprintf("%d.0 %d.0 %d", iv, last*iv, last-1); got != want {
		t.Errorf("run row %s, want %s", got, want)
	}
	tab := tableOf(t, s, TableOptions{})
	lines := strings.Split(strings.TrimSuffix(tab, "\n"), "\n")
	// Title, header, 3 rows, total, 2 notes.
	if len(lines) != 8 || !strings.HasPrefix(lines[3], "16384-4288888832 (261772 empty) ") ||
		!strings.Contains(tab, "a run of more than 10 empty intervals is one row") {
		t.Errorf("table\n%s", tab)
	}
}
