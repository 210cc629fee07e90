package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tableTimes runs the table with -t format (and more args) and returns
// the TIME column of each row: the line's first width bytes.
func tableTimes(t *testing.T, format string, width int, args ...string) []string {
	t.Helper()
	out, stderr, code := cli(t, append([]string{"--wide", "--no-summary", "-t", format}, args...)...)
	if code != 0 {
		t.Fatalf("-t %s: exit %d: %s", format, code, stderr)
	}
	var times []string
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n")[1:] {
		if len(line) < width {
			t.Fatalf("-t %s: short row %q", format, line)
		}
		times = append(times, line[:width])
	}
	return times
}

// jsonTimes returns the records' times and keys from -o json.
func jsonTimes(t *testing.T, args ...string) ([]time.Time, []string) {
	t.Helper()
	out, stderr, code := cli(t, append([]string{"-o", "json", "--no-summary"}, args...)...)
	if code != 0 {
		t.Fatalf("-o json: exit %d: %s", code, stderr)
	}
	var ts []time.Time
	var keys []string
	for _, r := range parseJSONL(t, out) {
		tm, err := time.Parse(time.RFC3339Nano, r.Time)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tm)
		keys = append(keys, fmt.Sprintf("%d %s %d %s", *r.Stream, r.Src, *r.Offset, r.Type))
	}
	return ts, keys
}

// micros writes d as tshark's deltas: seconds with six fraction digits,
// truncated toward zero, "-" before a negative one.
func micros(d time.Duration) string {
	m := int64(d / time.Microsecond)
	sign := ""
	if m < 0 {
		sign, m = "-", -m
	}
	return fmt.Sprintf("%s%d.%06d", sign, m/1e6, m%1e6)
}

// TestTimeFormatsAll: every -t format tshark has, each row's TIME
// computed from the JSON record's time here: a, ad, adoy in the zone of
// TZ (set to New York, 5 hours behind UTC on these dates), u, ud, udoy in
// UTC, e as epoch seconds, d and dd as the difference to the previous
// record (all records for d, those -Y shows for dd), r differing between
// rows as the records' times do.
func TestTimeFormatsAll(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skipf("no time zone database: %v", err)
	}
	t.Setenv("TZ", "America/New_York")
	in := filepath.Join(pcapDir, "vrpn_multi_device.pcap")
	ts, keys := jsonTimes(t, in)
	if len(ts) < 10 {
		t.Fatalf("%d records", len(ts))
	}
	doy := func(tm time.Time) string {
		return fmt.Sprintf("%04d/%03d %02d:%02d:%02d.%06d", tm.Year(), tm.YearDay(), tm.Hour(), tm.Minute(), tm.Second(), tm.Nanosecond()/1000)
	}
	want := map[string]func(i int) string{
		"a":    func(i int) string { return ts[i].In(ny).Format("15:04:05.000000") },
		"ad":   func(i int) string { return ts[i].In(ny).Format("2006-01-02 15:04:05.000000") },
		"adoy": func(i int) string { return doy(ts[i].In(ny)) },
		"u":    func(i int) string { return ts[i].UTC().Format("15:04:05.000000") },
		"ud":   func(i int) string { return ts[i].UTC().Format("2006-01-02 15:04:05.000000") },
		"udoy": func(i int) string { return doy(ts[i].UTC()) },
		"e":    func(i int) string { return fmt.Sprintf("%d.%06d", ts[i].Unix(), ts[i].Nanosecond()/1000) },
		"d": func(i int) string {
			if i == 0 {
				return "0.000000"
			}
			return micros(ts[i].Sub(ts[i-1]))
		},
	}
	want["dd"] = want["d"] // no filter: every record is shown
	for _, f := range []string{"a", "ad", "adoy", "u", "ud", "udoy", "e", "d", "dd"} {
		w := len(want[f](0))
		if f == "d" || f == "dd" {
			w = len("0.000000")
		}
		got := tableTimes(t, f, len("2026-11-22 00:08:19.477060")+2, in)
		if len(got) != len(ts) {
			t.Fatalf("-t %s: %d rows, %d records", f, len(got), len(ts))
		}
		for i := range got {
			exp := want[f](i)
			if f == "d" || f == "dd" {
				w = len(exp)
			}
			if got[i][:w] != exp || (len(got[i]) > w && got[i][w] != ' ') {
				t.Errorf("-t %s row %d: %q, want %q (JSON time %s)", f, i, got[i], exp, ts[i].Format(time.RFC3339Nano))
				break
			}
		}
	}
	// r: the differences between rows are those of the times (within the
	// microsecond each truncation may take).
	rel := tableTimes(t, "r", len("0.000000"), in)
	r0, _ := strconv.ParseFloat(strings.TrimSpace(rel[0]), 64)
	for i := range rel {
		ri, _ := strconv.ParseFloat(strings.Fields(rel[i])[0], 64)
		d := ts[i].Sub(ts[0]).Seconds()
		if diff := (ri - r0) - d; diff > 1.5e-6 || diff < -1.5e-6 {
			t.Errorf("-t r row %d: %s, %.6f after row 0; the times differ by %.6f", i, rel[i], ri-r0, d)
		}
	}

	// With a display filter, d counts from the previous record of all,
	// dd from the previous one shown.
	filter := []string{"-Y", `type == "vrpn_Tracker Pos_Quat" && vrpn.sensor == 1`, in}
	shown, shownKeys := jsonTimes(t, filter...)
	if len(shown) < 3 || len(shown) == len(ts) {
		t.Fatalf("the filter shows %d of %d records", len(shown), len(ts))
	}
	d := tableTimes(t, "d", len("0.000000"), filter...)
	dd := tableTimes(t, "dd", len("0.000000"), filter...)
	for i := range shown {
		at := slices.Index(keys, shownKeys[i])
		if at < 0 {
			t.Fatalf("shown record %q not among all records", shownKeys[i])
		}
		wantD := "0.000000"
		if at > 0 {
			wantD = micros(shown[i].Sub(ts[at-1]))
		}
		wantDD := "0.000000"
		if i > 0 {
			wantDD = micros(shown[i].Sub(shown[i-1]))
		}
		if strings.Fields(d[i])[0] != wantD {
			t.Errorf("-t d -Y row %d: %q, want %s", i, d[i], wantD)
		}
		if strings.Fields(dd[i])[0] != wantDD {
			t.Errorf("-t dd -Y row %d: %q, want %s", i, dd[i], wantDD)
		}
	}
}

// TestTimeFormatCompletion: completing -t offers every format tshark has.
func TestTimeFormatCompletion(t *testing.T) {
	out, _, code := cli(t, "__complete", "-t", "")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	got := lines[:len(lines)-1] // the last line is the directive
	want := []string{"a", "ad", "adoy", "d", "dd", "e", "r", "u", "ud", "udoy"}
	if !slices.Equal(got, want) {
		t.Errorf("-t completes to %q, want %q", got, want)
	}
}
