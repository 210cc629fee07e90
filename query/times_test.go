package query

import (
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// timedRecord is a record 2.5 s + 1 ns after the run's first packet, at
// 1795306099.477060001 s since 1970.
func timedRecord() *dissect.Record {
	r := deltaRecord()
	r.Epoch = time.Unix(1795306096, 977060000)
	r.Time = time.Unix(1795306099, 477060001)
	return r
}

// The numeric times compare exactly with numbers of seconds: to the
// nanosecond, where a float64 of an epoch time is not.
func TestNumericTimesMatch(t *testing.T) {
	r := timedRecord()
	for _, tc := range []struct {
		expr string
		want bool
	}{
		{"time_relative > 2.5", true},
		{"time_relative > 2.500000001", false},
		{"time_relative == 2.500000001", true},
		{"time_relative >= 2.500000002", false},
		{"frame.time_relative < 3", true},
		{"time_relative in {2..3}", true},
		{"time_epoch == 1795306099.477060001", true},
		{"time_epoch == 1795306099.47706", false}, // the same float64, 1 ns apart
		{"frame.time_epoch > 1795306099.47706", true},
		{"time_epoch < 1795306100", true},
		{"time_epoch >= 1795306100", false},
		{"time_relative", true},
		{"time_relative > 1 && time == \"2026-11-22T00:08:19.477060001Z\"", true},
	} {
		f, err := Compile(tc.expr, known)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		if got := f.Match(r); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.expr, got, tc.want)
		}
	}
	// Without an epoch (no timestamped packet), time_relative is 0.
	r.Epoch = time.Time{}
	f, _ := Compile("time_relative == 0", known)
	if !f.Match(r) {
		t.Error("time_relative without an epoch is not 0")
	}
}

func TestNumericTimesErrors(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{`time_relative == "2"`, "time_relative is seconds: compare it with a number"},
		{`frame.time_epoch == "2026-11-22T00:08:19Z"`, "time_epoch is seconds"},
		{`time_epoch contains "1"`, "contains applies to strings"},
		{`time_relative matches "1"`, "matches applies to strings"},
		{`time == time_epoch`, "they never compare"},
		{`frame.time_delta > 1`, "neither a field nor a protocol name"},
	} {
		_, err := Compile(tc.expr, known)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.expr, err, tc.want)
		}
	}
}

// tshark's names are the same record keys; the path keeps the name as
// written (the -e header).
func TestNumericTimePaths(t *testing.T) {
	r := timedRecord()
	for _, c := range [][2]string{{"time_epoch", "time_epoch"}, {"frame.time_epoch", "time_epoch"}, {"time_relative", "time_relative"}, {"frame.time_relative", "time_relative"}} {
		p, err := ParsePath(c[0])
		if err != nil {
			t.Fatal(err)
		}
		if p.RecordKey() != c[1] || p.String() != c[0] || !IsTimeKey(p.RecordKey()) || !IsRecordKey(c[0]) {
			t.Errorf("%s: key %q name %q", c[0], p.RecordKey(), p.String())
		}
		v, ok := p.Lookup(r)
		want := int64(1795306099477060001)
		if c[1] == "time_relative" {
			want = 2500000001
		}
		if !ok || v.Kind() != dissect.KindTime || v.Int() != want {
			t.Errorf("%s: %v %v, want %d ns", c[0], v, ok, want)
		}
	}
	if IsTimeKey("time") || IsRecordKey("frame.time") {
		t.Error("time is not a numeric time; frame.time is no key")
	}
	if Relative(&dissect.Record{Time: time.Unix(5, 0), Epoch: time.Unix(6, 0)}) != -time.Second {
		t.Error("a record before the first packet has a negative time_relative")
	}
}

func TestNumericTimesAllocateNothing(t *testing.T) {
	r := timedRecord()
	f, err := Compile("time_relative > 2.5 && frame.time_epoch < 1795306100", known)
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { f.Match(r) }); n != 0 {
		t.Errorf("%v allocations a match", n)
	}
}
