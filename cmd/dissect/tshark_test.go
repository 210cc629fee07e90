package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"github.com/dissect-tools/dissect/internal/longtest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dissect-tools/dissect/output"
)

// The tests of -V, -T and the numeric times check the CLI against its own
// JSON records (decoded with encoding/json) and the capture's first packet
// time, read from the pcap header here; where tshark is installed, also
// against tshark's own frame.time_epoch and frame.time_relative.

// timesPcaps are shipped classic pcap files (their first packet's time is
// read by firstPacketTime).
var timesPcaps = []string{"vrpn_tcp_only.pcap", "deltarobot_session.pcap", "neptune_session.pcap", "roboid_session.pcap"}

// firstPacketTime reads the first packet's timestamp of a classic pcap
// file (microsecond or nanosecond, either byte order).
func firstPacketTime(t *testing.T, path string) time.Time {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 24+16 {
		t.Fatalf("%s: too short for a pcap", path)
	}
	var bo binary.ByteOrder
	nano := false
	switch m := binary.LittleEndian.Uint32(b); m {
	case 0xa1b2c3d4, 0xa1b23c4d:
		bo, nano = binary.LittleEndian, m == 0xa1b23c4d
	case 0xd4c3b2a1, 0x4d3cb2a1:
		bo, nano = binary.BigEndian, m == 0x4d3cb2a1
	default:
		t.Fatalf("%s: not a classic pcap (magic %#x)", path, m)
	}
	sec, frac := int64(bo.Uint32(b[24:])), int64(bo.Uint32(b[28:]))
	if !nano {
		frac *= 1000
	}
	return time.Unix(sec, frac)
}

// seconds writes d (not negative) as seconds with nine decimals.
func seconds(t *testing.T, d time.Duration) string {
	t.Helper()
	if d < 0 {
		t.Fatalf("negative time %v in a shipped capture", d)
	}
	return fmt.Sprintf("%d.%09d", d/time.Second, d%time.Second)
}

func jsonTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("time %q: %v", s, err)
	}
	return tm
}

func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// -e time_epoch and time_relative (and tshark's names) print, for every
// record, the JSON record's time as seconds since 1970 and since the
// first packet of the capture, with nine decimals; -T fields is -o fields.
// Several files are one capture: time_relative counts from the first
// file's first packet.
func TestNumericTimesAgainstJSON(t *testing.T) {
	runs := [][]string{{"deltarobot_session.pcap", "vrpn_tcp_only.pcap"}}
	for _, name := range timesPcaps {
		runs = append(runs, []string{name})
	}
	for _, names := range runs {
		t.Run(strings.Join(names, "+"), func(t *testing.T) {
			var paths []string
			for _, n := range names {
				paths = append(paths, filepath.Join(pcapDir, n))
			}
			first := firstPacketTime(t, paths[0])
			js, _, code := cli(t, append([]string{"-o", "json"}, paths...)...)
			if code != 0 {
				t.Fatalf("-o json: exit %d", code)
			}
			recs := parseJSONL(t, js)
			if len(recs) < 10 {
				t.Fatalf("only %d records", len(recs))
			}
			args := append([]string{"-e", "time_epoch", "-e", "time_relative", "-e", "frame.time_epoch", "-e", "frame.time_relative"}, paths...)
			out, stderr, code := cli(t, append([]string{"-o", "fields"}, args...)...)
			if code != 0 {
				t.Fatalf("-o fields: exit %d: %s", code, stderr)
			}
			got := lines(out)
			if len(got) != len(recs) {
				t.Fatalf("%d lines, %d JSON records", len(got), len(recs))
			}
			for i, r := range recs {
				tm := jsonTime(t, r.Time)
				epoch := seconds(t, time.Duration(tm.UnixNano()))
				rel := seconds(t, tm.Sub(first))
				want := strings.Join([]string{epoch, rel, epoch, rel}, "\t")
				if got[i] != want {
					t.Fatalf("record %d (time %s): %q, want %q", i, r.Time, got[i], want)
				}
			}
			tout, _, code := cli(t, append([]string{"-T", "fields"}, args...)...)
			if code != 0 || tout != out {
				t.Errorf("-T fields (exit %d) differs from -o fields", code)
			}
			tjs, _, code := cli(t, append([]string{"-T", "json"}, paths...)...)
			if code != 0 || tjs != js {
				t.Errorf("-T json (exit %d) differs from -o json", code)
			}
		})
	}
}

// -Y compares the numeric times exactly, to the nanosecond: the records a
// comparison keeps are those whose JSON time says so; the same in
// io,stat's filter.
func TestNumericTimesFilter(t *testing.T) {
	path := filepath.Join(pcapDir, "vrpn_tcp_only.pcap")
	first := firstPacketTime(t, path)
	js, _, _ := cli(t, "-o", "json", path)
	all := lines(js)
	recs := parseJSONL(t, js)
	mid := jsonTime(t, recs[len(recs)/2].Time)
	relMid := seconds(t, mid.Sub(first))
	epochMid := seconds(t, time.Duration(mid.UnixNano()))
	for _, c := range []struct {
		filter string
		keep   func(tm time.Time) bool
	}{
		{"time_relative > " + relMid, func(tm time.Time) bool { return tm.After(mid) }},
		{"frame.time_relative >= " + relMid, func(tm time.Time) bool { return !tm.Before(mid) }},
		{"time_epoch == " + epochMid, func(tm time.Time) bool { return tm.Equal(mid) }},
		{"frame.time_epoch < " + epochMid, func(tm time.Time) bool { return tm.Before(mid) }},
		{"time_relative <= 0.5", func(tm time.Time) bool { return tm.Sub(first) <= 500*time.Millisecond }},
	} {
		var want []string
		for i, r := range recs {
			if c.keep(jsonTime(t, r.Time)) {
				want = append(want, all[i])
			}
		}
		if len(want) == 0 || len(want) == len(recs) {
			t.Fatalf("-Y %q: the test keeps %d of %d records: pick another value", c.filter, len(want), len(recs))
		}
		out, stderr, code := cli(t, "-o", "json", "-Y", c.filter, path)
		if code != 0 {
			t.Fatalf("-Y %q: exit %d: %s", c.filter, code, stderr)
		}
		if got := lines(out); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("-Y %q: %d records, want %d", c.filter, len(got), len(want))
		}
		// io,stat's filter column counts the same records.
		out, _, code = cli(t, "-q", "-o", "json", "-z", "io,stat,1000,"+c.filter, path)
		if code != 0 {
			t.Fatalf("-z io,stat with %q: exit %d", c.filter, code)
		}
		var total struct {
			Interval string `json:"interval"`
			N        *int   `json:"filter_messages"`
		}
		for _, l := range lines(out) {
			if strings.Contains(l, `"interval":"total"`) {
				if err := json.Unmarshal([]byte(l), &total); err != nil {
					t.Fatal(err)
				}
			}
		}
		if total.N == nil || *total.N != len(want) {
			t.Errorf("-z io,stat,1000,%s: total filter_messages %v, want %d (%s)", c.filter, total.N, len(want), out)
		}
	}
	for _, bad := range []string{`time_relative == "2"`, `time_epoch contains "1"`, `time == time_epoch`} {
		if _, stderr, code := cli(t, "-Y", bad, path); code != exitUsage {
			t.Errorf("-Y %s: exit %d, want a usage error: %s", bad, code, stderr)
		}
	}
}

// The numeric times agree with tshark's own frame.time_epoch and
// frame.time_relative of the packet that completed each record.
func TestNumericTimesAgainstTshark(t *testing.T) {
	longtest.Skip(t)
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark is not installed: the times are checked against the pcap header only")
	}
	for _, name := range timesPcaps {
		path := filepath.Join(pcapDir, name)
		ts, err := exec.Command("tshark", "-n", "-r", path, "-T", "fields", "-e", "frame.time_epoch", "-e", "frame.time_relative").Output()
		if err != nil {
			t.Fatalf("tshark on %s: %v", name, err)
		}
		relOf := map[string]string{}
		for _, l := range lines(string(ts)) {
			e, r, ok := strings.Cut(l, "\t")
			if !ok {
				t.Fatalf("tshark line %q", l)
			}
			relOf[e] = r
		}
		out, _, code := cli(t, "-T", "fields", "-e", "frame.time_epoch", "-e", "frame.time_relative", path)
		if code != 0 {
			t.Fatalf("%s: exit %d", name, code)
		}
		for _, l := range lines(out) {
			e, r, _ := strings.Cut(l, "\t")
			want, ok := relOf[e]
			if !ok {
				t.Fatalf("%s: time_epoch %s is no packet's frame.time_epoch in tshark", name, e)
			}
			if r != want {
				t.Fatalf("%s: time_relative %s at %s, tshark's frame.time_relative %s", name, r, e, want)
			}
		}
	}
}

// -T forms that dissect does not write, and -T, -V and -o that say
// different things, are one-line usage errors.
func TestTsharkFormUsage(t *testing.T) {
	path := filepath.Join(pcapDir, "vrpn_tcp_only.pcap")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-T", "pdml"}, "-T pdml: dissect writes -T fields or -T json"},
		{[]string{"-T", "ek"}, "-T ek: dissect writes -T fields or -T json"},
		{[]string{"-T", "psml"}, "-T psml"},
		{[]string{"-T", "text"}, "-T text"},
		{[]string{"-T", "jsonraw"}, "-T jsonraw"},
		{[]string{"-T", "json", "-o", "fields", "-e", "stream"}, "-T json and -o fields"},
		{[]string{"-T", "fields", "-o", "table", "-e", "stream"}, "-T fields and -o table"},
		{[]string{"-V", "-o", "json"}, "-V writes the details as text, and -o json"},
		{[]string{"-V", "-o", "fields", "-e", "stream"}, "-o fields"},
		{[]string{"-V", "-T", "json"}, "-V (the details as text) and -T json"},
		{[]string{"-V", "-e", "stream"}, "-e and -E go with -o fields"},
	} {
		out, stderr, code := cli(t, append(c.args, path)...)
		if code != exitUsage || out != "" {
			t.Errorf("%v: exit %d, stdout %q", c.args, code, out)
		}
		first, _, _ := strings.Cut(stderr, "\n")
		if !strings.Contains(first, c.want) {
			t.Errorf("%v: first line %q lacks %q", c.args, first, c.want)
		}
	}
	// The same form twice is no conflict.
	for _, args := range [][]string{{"-T", "json", "-o", "json"}, {"-T", "json", "-o", "jsonl"}, {"-V", "-o", "table"}} {
		if _, stderr, code := cli(t, append(args, "-c", "5", path)...); code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}

// treeLine is one line the tree of a JSON record must show: its depth
// and its text, or several texts one of which it must be.
type treeLine struct {
	depth int
	texts []string
	re    *regexp.Regexp // else: the text of a string with U+FFFD
}

var (
	hexRE  = regexp.MustCompile(`^([0-9a-f]{2})+$`)
	timeRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$`)
)

// escapes counts the JSON strings expectTree saw that must be escaped
// (a test's own counter: tests of this file do not run in parallel).
var escapes int

// expectTree lists the lines of a record's tree from its JSON: keys in
// order, arrays and objects expanded with indices one level deeper,
// strings escaped in quotes (a hex or RFC 3339 string may be a byte
// string or an instant, written bare; "NaN" may be a float).
func expectTree(t *testing.T, key string, v any, depth int, out []treeLine) []treeLine {
	t.Helper()
	switch x := v.(type) {
	case []jsonKV:
		if len(x) == 0 {
			return append(out, treeLine{depth: depth, texts: []string{key + ": {}"}})
		}
		out = append(out, treeLine{depth: depth, texts: []string{key + ":"}})
		for _, kv := range x {
			out = expectTree(t, output.Escape(kv.k), kv.v, depth+1, out)
		}
		return out
	case []any:
		if len(x) == 0 {
			return append(out, treeLine{depth: depth, texts: []string{key + ": []"}})
		}
		out = append(out, treeLine{depth: depth, texts: []string{key + ":"}})
		for i, it := range x {
			out = expectTree(t, fmt.Sprintf("[%d]", i), it, depth+1, out)
		}
		return out
	case string:
		if output.Escape(x) != x || strings.ContainsRune(x, utf8.RuneError) {
			escapes++
		}
		texts := []string{key + `: "` + output.Escape(x) + `"`}
		if strings.ContainsRune(x, utf8.RuneError) {
			// JSON writes U+FFFD for a byte of invalid UTF-8, the tree
			// the byte itself escaped.
			var re strings.Builder
			for i, part := range strings.Split(output.Escape(x), string(utf8.RuneError)) {
				if i > 0 {
					re.WriteString(`(\x{FFFD}|(\\x[0-9a-f]{2})+)`)
				}
				re.WriteString(regexp.QuoteMeta(part))
			}
			return append(out, treeLine{depth, texts, regexp.MustCompile("^" + regexp.QuoteMeta(key+`: "`) + re.String() + `"$`)})
		}
		switch {
		case x == "NaN" || x == "Inf" || x == "-Inf", hexRE.MatchString(x), timeRE.MatchString(x):
			texts = append(texts, key+": "+x)
		}
		return append(out, treeLine{depth: depth, texts: texts})
	case json.Number:
		return append(out, treeLine{depth: depth, texts: []string{key + ": " + x.String()}})
	case bool:
		return append(out, treeLine{depth: depth, texts: []string{fmt.Sprintf("%s: %t", key, x)}})
	case nil:
		return append(out, treeLine{depth: depth, texts: []string{key + ": null"}})
	}
	t.Fatalf("unexpected JSON value %T", v)
	return nil
}

// takeLine reads one logical line of the tree at depth from ls: its first
// line indented depth×4 columns, then the lines it was wrapped onto,
// joined without their indentation; it checks the width and returns the
// text and the lines left.
func takeLine(t *testing.T, ls []string, depth, width int, want []string, re *regexp.Regexp) (string, []string) {
	t.Helper()
	if len(ls) == 0 {
		t.Fatalf("the tree ends before %q", want[0])
	}
	// Past width-20 columns the indentation gives way (the value keeps
	// 20 columns).
	indent := strings.Repeat(" ", min(depth*4, width-20))
	if !strings.HasPrefix(ls[0], indent) || strings.HasPrefix(ls[0], indent+" ") {
		t.Fatalf("line %q: not at depth %d (want %q)", ls[0], depth, want[0])
	}
	if w := utf8.RuneCountInString(ls[0]); w > width {
		t.Fatalf("line %q is wider than %d", ls[0], width)
	}
	text, ls := ls[0][len(indent):], ls[1:]
	for {
		long := false
		for _, w := range want {
			if len(w) > len(text) && strings.HasPrefix(w, text) {
				long = true
			}
		}
		if re != nil && !re.MatchString(text) && len(ls) > 0 && strings.HasPrefix(ls[0], indent) {
			long = true // not all of the value yet: the next piece
		}
		if !long || len(ls) == 0 {
			return text, ls
		}
		next := ls[0]
		if utf8.RuneCountInString(next) > width {
			t.Fatalf("line %q is wider than %d", next, width)
		}
		ls = ls[1:]
		text += strings.TrimLeft(next, " ")
	}
}

// -V shows every key and field of every JSON record, in order, values as
// JSON has them (strings escaped), each line at most COLUMNS wide and,
// joined again, every character of every value.
func TestDetailsAgainstJSON(t *testing.T) {
	wrapped := map[int]int{}
	defer func() {
		if wrapped[80] == 0 || wrapped[36] == 0 {
			t.Errorf("lines wrapped per width: %v: the test checks no wrapping", wrapped)
		}
		if escapes == 0 {
			t.Error("no string needed escaping: the test checks no escaping")
		}
		t.Logf("lines wrapped per width %v; strings escaped %d", wrapped, escapes)
	}()
	var paths []string
	for _, name := range append(timesPcaps, "deltarobot_garbage.pcap", "handcontrol_serial.pcapng", "vrpn_udp_tcp.pcapng") {
		paths = append(paths, filepath.Join(pcapDir, name))
	}
	// The same captures with payload bytes changed at random: names and
	// strings from the wire with controls and invalid UTF-8.
	dir := t.TempDir()
	for i, p := range paths[:len(paths):len(paths)] {
		m := filepath.Join(dir, "mutated-"+filepath.Base(p)+".pcapng")
		mutateCapture(t, p, m, uint64(i+100))
		paths = append(paths, m)
	}
	escapes = 0
	for _, path := range paths {
		for _, width := range []int{80, 36} {
			t.Run(fmt.Sprintf("%s/%d", filepath.Base(path), width), func(t *testing.T) {
				t.Setenv("COLUMNS", fmt.Sprint(width))
				js, _, code := cli(t, "-o", "json", path)
				if code != 0 {
					t.Fatalf("-o json: exit %d", code)
				}
				tree, stderr, code := cli(t, "-V", path)
				if code != 0 {
					t.Fatalf("-V: exit %d: %s", code, stderr)
				}
				wrapped[width] += checkTree(t, js, tree, width)
			})
		}
	}
}

// checkTree checks a -V output against the JSON records of the same run;
// it returns how many lines were wrapped.
func checkTree(t *testing.T, js, tree string, width int) int {
	t.Helper()
	ls := lines(tree)
	wrapped := 0
	for n, raw := range lines(js) {
		v, err := orderedJSON([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		obj := v.([]jsonKV)
		var rec map[string]any
		if err := json.Unmarshal([]byte(raw), &rec); err != nil {
			t.Fatal(err)
		}
		title := fmt.Sprintf("Record %d: %s", n+1, output.Escape(rec["type"].(string)))
		// The title's wrapped lines start at column 0, as it does.
		text := ls[0]
		for ls = ls[1:]; len(ls) > 0 && ls[0] != "" && ls[0][0] != ' '; ls = ls[1:] {
			text += ls[0]
		}
		if !strings.HasPrefix(text, title) || !strings.Contains(text, fmt.Sprintf("%v bytes, stream %v", rec["length"], rec["stream"])) {
			t.Fatalf("title %q, want %q...", text, title)
		}
		var want []treeLine
		for _, kv := range obj {
			if kv.k == "time" {
				tm := jsonTime(t, kv.v.(string))
				want = append(want, treeLine{depth: 1, texts: []string{"time: " + kv.v.(string)}},
					treeLine{depth: 1, texts: []string{"time_epoch: " + fmt.Sprintf("%d.%09d", tm.Unix(), tm.Nanosecond())}},
					treeLine{depth: 1, texts: []string{"time_relative: "}}) // checked by TestNumericTimesAgainstJSON
				continue
			}
			if s, ok := kv.v.(string); ok {
				want = append(want, treeLine{depth: 1, texts: []string{kv.k + ": " + output.Escape(s)}})
				continue
			}
			if kv.k == "warnings" { // without quotes, as the other keys of the record
				want = append(want, treeLine{depth: 1, texts: []string{"warnings:"}})
				for i, w := range kv.v.([]any) {
					want = append(want, treeLine{depth: 2, texts: []string{fmt.Sprintf("[%d]: %s", i, output.Escape(w.(string)))}})
				}
				continue
			}
			want = expectTree(t, kv.k, kv.v, 1, want)
		}
		for _, w := range want {
			before := len(ls)
			text, ls = takeLine(t, ls, w.depth, width, w.texts, w.re)
			if before-len(ls) > 1 {
				wrapped++
			}
			ok := false
			for _, x := range w.texts {
				ok = ok || text == x || strings.HasSuffix(x, ": ") && strings.HasPrefix(text, x)
			}
			ok = ok || w.re != nil && w.re.MatchString(text)
			if !ok {
				t.Fatalf("record %d: line %q, want %q; next %q", n+1, text, w.texts, ls[:min(3, len(ls))])
			}
		}
		if len(ls) == 0 || ls[0] != "" {
			t.Fatalf("record %d: no empty line after its tree: %q", n+1, ls[:min(len(ls), 1)])
		}
		ls = ls[1:]
	}
	if len(ls) != 0 {
		t.Fatalf("%d lines after the last record: %q", len(ls), ls[0])
	}
	return wrapped
}

// TestTSharkReflexes: tshark's -n and -l are accepted and change nothing;
// -R, -2 and -G are refused (exit 2) with one line naming dissect's way.
func TestTSharkReflexes(t *testing.T) {
	file := filepath.Join("..", "..", "pcaps", "deltarobot_session.pcap")
	plain, _, code := cli(t, "--no-summary", "-o", "json", file)
	if code != 0 || plain == "" {
		t.Fatalf("plain run: exit %d", code)
	}
	for _, f := range []string{"-n", "-l", "-nl"} {
		got, stderr, code := cli(t, f, "--no-summary", "-o", "json", file)
		if code != 0 || got != plain {
			t.Errorf("%s: exit %d, output same %v: %s", f, code, got == plain, stderr)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-R", "tcp"}, "-Y FILTER"},
		{[]string{"-2"}, "leave -2 out"},
		{[]string{"-G", "fields"}, "dissect protocols --fields"},
	} {
		stdout, stderr, code := cli(t, append(c.args, file)...)
		if code != 2 || stdout != "" || !strings.Contains(strings.SplitN(stderr, "\n", 2)[0], c.want) {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr %q; want exit 2 and a line naming %q", c.args, code, len(stdout), stderr, c.want)
		}
	}
}
