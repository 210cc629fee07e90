package output

import (
	"bytes"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Extreme instants: what a pcapng if_tsoffset of ±2^63 or a corrupt
// timestamp gives.
var (
	tMax = time.Unix(math.MaxInt64-62135596800, 999999999) // the latest time.Time
	tMin = time.Unix(math.MinInt64, 0)                     // Unix wraps inside time.Time: beyond the earliest
	t0   = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
)

func TestSince(t *testing.T) {
	yr292 := time.Duration(math.MaxInt64)
	for _, tc := range []struct {
		name     string
		t, epoch time.Time
		want     string
	}{
		{"zero", t0, t0, "0.000000"},
		{"after", t0.Add(1500 * time.Millisecond), t0, "1.500000"},
		{"before", t0.Add(-1500 * time.Millisecond), t0, "-1.500000"},
		{"sub-microsecond before", t0.Add(-1), t0, "0.000000"},
		{"truncated toward zero", t0.Add(-1999 * time.Nanosecond), t0, "-0.000001"},
		// time.Time.Sub saturates here; the difference is exact.
		{"292 years before", t0.Add(-yr292).Add(-yr292), t0, "-18446744073.709551"},
		{"1000 years before", t0.AddDate(-1000, 0, 0), t0, "-31556995200.000000"},
		{"1000 years after", t0.AddDate(1000, 0, 0), t0, "31556908800.000000"},
		{"the shortest Duration", time.Time{}.Add(-1 << 63), time.Time{}, "-9223372036.854775"},
		{"from the latest time.Time", t0, tMax, "-9223371972923837407.999999"},
	} {
		got := string(appendSince(nil, tc.t, tc.epoch))
		if got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestSinceBeyondInt64 covers differences that no int64 of seconds holds
// (tMax − tMin is about 2^64 s): they saturate, with the right sign.
func TestSinceBeyondInt64(t *testing.T) {
	if neg, sec, ns := since(tMax, tMin); neg || sec != math.MaxInt64 || ns != 999999999 {
		t.Errorf("since(max, min) = %v %d %d", neg, sec, ns)
	}
	if neg, sec, ns := since(tMin, tMax); !neg || sec != 1<<63 || ns != 0 {
		t.Errorf("since(min, max) = %v %d %d", neg, sec, ns)
	}
	if got := string(appendSince(nil, tMin, tMax)); got != "-9223372036854775808.000000" {
		t.Errorf("got %s", got)
	}
}

func TestTableTimes(t *testing.T) {
	for _, tc := range []struct {
		format TimeFormat
		t      time.Time
		want   string
	}{
		{TimeRelative, t0.AddDate(-1000, 0, 0), "-31556995200.000000"},
		{TimeEpoch, time.Unix(-2, 500000000), "-1.500000"},
		{TimeEpoch, time.Unix(-2, 0), "-2.000000"},
		{TimeEpoch, time.Unix(1795306099, 479337000), "1795306099.479337"},
		{TimeEpoch, tMax, "253402300799.999999"},
		{TimeAbsoluteDate, tMax, "9999-12-31 23:59:59.999999"},
		{TimeAbsoluteDate, tMin, "0000-01-01 00:00:00.000000"},
		{TimeAbsoluteDate, time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC), "0000-01-01 00:00:00.000000"},
		{TimeAbsolute, tMax, "23:59:59.999999"},
	} {
		var buf bytes.Buffer
		tb := NewTable(&buf, TableOptions{Time: tc.format})
		tb.SetEpoch(t0)
		r := record()
		r.Time = tc.t
		if err := tb.Record(r); err != nil {
			t.Fatal(err)
		}
		tb.Flush()
		line := strings.Split(buf.String(), "\n")[1]
		if got := line[:min(len(tc.want), len(line))]; got != tc.want || line[len(got)] != ' ' {
			t.Errorf("format %d, %v: got %q, want %q", tc.format, tc.t, got, tc.want)
		}
	}
}

var rfc3339Nano = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$`)

// TestJSONTimesClamped: instants outside the years 0000–9999 are written
// as the nearer end, which stays RFC 3339 (four-digit year).
func TestJSONTimesClamped(t *testing.T) {
	for _, tc := range []struct {
		t    time.Time
		want string
	}{
		{tMax, "9999-12-31T23:59:59.999999999Z"},
		{time.Unix(math.MaxInt64/2, 0), "9999-12-31T23:59:59.999999999Z"},
		{tMin, "0000-01-01T00:00:00.000000000Z"},
		{time.Unix(math.MinInt64/2, 0), "0000-01-01T00:00:00.000000000Z"},
		{time.Date(9999, 12, 31, 23, 59, 59, 5, time.UTC), "9999-12-31T23:59:59.000000005Z"},
		{time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), "0000-01-01T00:00:00.000000000Z"},
		{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), "9999-12-31T23:59:59.999999999Z"},
	} {
		r := record()
		r.Time = tc.t
		got := encode(t, r)
		want := `{"time":"` + tc.want + `",`
		if !strings.HasPrefix(got, want) {
			t.Errorf("%v: got %s, want time %s", tc.t, got, tc.want)
		}
		if !rfc3339Nano.MatchString(tc.want) {
			t.Fatalf("bad expectation %s", tc.want)
		}
		if _, err := time.Parse(time.RFC3339Nano, tc.want); err != nil {
			t.Error(err)
		}
	}
}

func TestSpanText(t *testing.T) {
	for _, tc := range []struct {
		first, last time.Time
		want        string
	}{
		{t0, t0.Add(3500 * time.Millisecond), "3.5s"},
		{t0, t0.Add(3500 * time.Microsecond), "3.5ms"},
		{t0, t0.Add(3500 * time.Nanosecond), "4µs"},
		{t0, t0.Add(2*time.Hour + 1400*time.Nanosecond), "2h0m0.000001s"},
		{t0, t0.AddDate(100, 0, 0), "876576h0m0s"},
		{t0, t0.AddDate(1000, 0, 0), "1000 years"},
		{t0.AddDate(1000, 0, 0), t0, "-1000 years"},
		{t0, tMax, "2.923e+11 years"},
		{t0, t0.Add(-time.Second), "-1s"},
	} {
		if got := spanText(tc.first, tc.last); got != tc.want {
			t.Errorf("%v – %v: got %q, want %q", tc.first, tc.last, got, tc.want)
		}
	}
}
