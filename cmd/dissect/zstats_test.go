package main

import (
	"bytes"
	"encoding/json"
	"github.com/dissect-tools/dissect/internal/longtest"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// statRows runs dissect -q -o json with the -z arguments on file and
// returns the statistics' rows, decoded with encoding/json.
func statRows(t *testing.T, file string, z ...string) []map[string]any {
	t.Helper()
	args := []string{"-q", "-o", "json"}
	for _, s := range z {
		args = append(args, "-z", s)
	}
	stdout, stderr, code := cli(t, append(args, file)...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	var rows []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %q: %v", args, line, err)
		}
		rows = append(rows, m)
	}
	return rows
}

// multiDevice is the shipped capture with streams of both transports:
// dissect numbers them 0 (udp 127.0.0.1:48999 → :3883), 1 (tcp
// 127.0.0.1:41219 ↔ :37001), 2 (udp 127.0.0.1:48535 → :40258). tshark
// numbers them tcp.stream 0 (41219 ↔ 37001), udp.stream 0 (48999 → 3883)
// and udp.stream 1 (48535 → 40258): checked by hand with tshark 4.x,
// `tshark -r pcaps/vrpn_multi_device.pcap -T fields -e tcp.stream -e
// udp.stream -e tcp.srcport -e udp.srcport`.
var multiDevice = filepath.Join(pcapDir, "vrpn_multi_device.pcap")

// TestZConvTransport checks -z conv,tcp and -z conv,udp (tshark's syntax):
// only the streams of that transport; plain -z conv has them all.
func TestZConvTransport(t *testing.T) {
	streams := func(z string) []int {
		var got []int
		for _, r := range statRows(t, multiDevice, z) {
			if r["stat"] != "conv" {
				t.Fatalf("%s: row %v", z, r)
			}
			got = append(got, int(r["stream"].(float64)))
		}
		return got
	}
	for z, want := range map[string][]int{"conv": {0, 1, 2}, "conv,tcp": {1}, "conv,udp": {0, 2}} {
		if got := streams(z); !slices.Equal(got, want) {
			t.Errorf("-z %s: streams %v, want %v", z, got, want)
		}
	}
	stdout, _, code := cli(t, "-q", "-z", "conv,tcp", multiDevice)
	if code != 0 || !strings.HasPrefix(stdout, "conv: tcp streams") || strings.Contains(stdout, "48999") {
		t.Errorf("-z conv,tcp table (exit %d):\n%s", code, stdout)
	}
	if _, stderr, code := cli(t, "-q", "-z", "conv,sctp", multiDevice); code != 2 || !strings.Contains(stderr, "-z conv,sctp: want conv, conv,tcp or conv,udp") {
		t.Errorf("-z conv,sctp: exit %d: %s", code, stderr)
	}
}

// TestZFollowTSharkIndex checks that N in -z follow,tcp|udp,MODE,N is
// tshark's tcp.stream (udp.stream) index, against the hand-checked
// numbering of multiDevice, and that follow,STREAM keeps dissect's number.
func TestZFollowTSharkIndex(t *testing.T) {
	for _, c := range []struct {
		z          string
		stream     int
		src0, dst0 string // the endpoints of the stream's first record
	}{
		{"follow,tcp,ascii,0", 1, "127.0.0.1:41219", "127.0.0.1:37001"},
		{"follow,udp,ascii,0", 0, "127.0.0.1:48999", "127.0.0.1:3883"},
		{"follow,udp,hex,1", 2, "127.0.0.1:48535", "127.0.0.1:40258"},
		{"follow,tcp,raw,0", 1, "127.0.0.1:41219", "127.0.0.1:37001"},
		{"follow,1", 1, "127.0.0.1:41219", "127.0.0.1:37001"},
		{"follow,2", 2, "127.0.0.1:48535", "127.0.0.1:40258"},
	} {
		rows := statRows(t, multiDevice, c.z)
		if len(rows) == 0 {
			t.Errorf("-z %s: no rows", c.z)
			continue
		}
		if rows[0]["src"] != c.src0 || rows[0]["dst"] != c.dst0 {
			t.Errorf("-z %s: first record %v → %v, want %s → %s", c.z, rows[0]["src"], rows[0]["dst"], c.src0, c.dst0)
		}
		for _, r := range rows {
			if int(r["stream"].(float64)) != c.stream {
				t.Fatalf("-z %s: row of stream %v, want %d", c.z, r["stream"], c.stream)
			}
			_, hasRaw := r["raw"]
			if want := strings.Contains(c.z, "hex") || strings.Contains(c.z, "raw"); hasRaw != want {
				t.Fatalf("-z %s: raw in the row: %v, want %v", c.z, hasRaw, want)
			}
		}
	}
	stdout, _, code := cli(t, "-q", "-z", "follow,udp,ascii,2", multiDevice)
	if code != 0 || !strings.Contains(stdout, "no udp stream 2 (2 udp streams in all)") {
		t.Errorf("a udp index past the last: exit %d:\n%s", code, stdout)
	}
}

// tsharkFollowsRaw runs tshark twice on file: once for the number of tcp
// and udp streams, once with -z follow,TRANSPORT,raw,N for each of them
// and one past the last. It returns each follow's text by "tcp,N".
func tsharkFollowsRaw(t *testing.T, tshark, file string) map[string]string {
	t.Helper()
	out, err := exec.Command(tshark, "-r", file, "-T", "fields", "-E", "separator=,", "-e", "tcp.stream", "-e", "udp.stream").Output()
	if err != nil {
		t.Fatalf("tshark fields: %v", err)
	}
	count := [2]int{} // tcp, udp: highest index + 1
	for _, line := range strings.Split(string(out), "\n") {
		for i, f := range strings.Split(line, ",") {
			if n, err := strconv.Atoi(f); err == nil && i < 2 {
				count[i] = max(count[i], n+1)
			}
		}
	}
	args := []string{"-r", file, "-q"}
	for i, tr := range []string{"tcp", "udp"} {
		for n := 0; n <= count[i]; n++ {
			args = append(args, "-z", "follow,"+tr+",raw,"+strconv.Itoa(n))
		}
	}
	out, err = exec.Command(tshark, args...).Output()
	if err != nil {
		t.Fatalf("tshark follow: %v", err)
	}
	filter := regexp.MustCompile(`(?m)^Filter: ([a-z]+)\.stream eq ([0-9]+)$`)
	blocks := map[string]string{}
	for _, b := range strings.Split(string(out), "Follow: ")[1:] {
		if m := filter.FindStringSubmatch(b); m != nil {
			blocks[m[1]+","+m[2]] = b
		}
	}
	return blocks
}

// parseFollowRaw reads tshark's raw follow format: "Node 0: ADDR",
// "Node 1: ADDR", then lines of hex, node 1's after a tab.
func parseFollowRaw(t *testing.T, out string) (nodes [2][]byte, ends [2]string, ok bool) {
	t.Helper()
	hexLine := regexp.MustCompile(`^\t?[0-9a-f]+$`)
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "Node 0: "):
			// tshark names no node (":0") for a stream it does not have
			ends[0] = strings.TrimPrefix(line, "Node 0: ")
			ok = ends[0] != ":0"
		case strings.HasPrefix(line, "Node 1: "):
			ends[1] = strings.TrimPrefix(line, "Node 1: ")
		case hexLine.MatchString(line):
			d := 0
			if line[0] == '\t' {
				d = 1
			}
			b := make([]byte, len(line[d:])/2)
			for i := range b {
				v, err := strconv.ParseUint(line[d+2*i:d+2*i+2], 16, 8)
				if err != nil {
					t.Fatalf("hex line %q: %v", line, err)
				}
				b[i] = byte(v)
			}
			nodes[d] = append(nodes[d], b...)
		}
	}
	return nodes, ends, ok
}

// TestZFollowAgainstTShark checks, on every shipped capture, that -z
// follow,tcp|udp,raw,N follows the stream tshark numbers N: the same two
// nodes, and the same bytes in each direction (dissect's records tile the
// stream, so their bytes joined are tshark's segments joined). Every index
// tshark has is tried, and one past the last. Skipped without tshark.
func TestZFollowAgainstTShark(t *testing.T) {
	longtest.Skip(t)
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed: the hand-checked numbering of TestZFollowTSharkIndex stands alone")
	}
	streamOf := regexp.MustCompile(`(?m)^Filter: [a-z]+\.stream eq [0-9]+ \(stream ([0-9]+)\)$`)
	for _, file := range pcaps(t) {
		if strings.HasSuffix(file, ".vrpnlog") {
			continue
		}
		gaps := map[string]bool{} // dissect's streams with bytes never captured
		for _, r := range statRows(t, file, "conv") {
			if r["gaps"].(float64) > 0 {
				gaps[strconv.Itoa(int(r["stream"].(float64)))] = true
			}
		}
		follows := tsharkFollowsRaw(t, tshark, file)
		for _, tr := range []string{"tcp", "udp"} {
			for n := 0; n < 100; n++ {
				block, ok := follows[tr+","+strconv.Itoa(n)]
				if !ok {
					t.Fatalf("%s: tshark gave no follow of %s stream %d", file, tr, n)
				}
				want, wantEnds, ok := parseFollowRaw(t, block)
				z := "follow," + tr + ",raw," + strconv.Itoa(n)
				stdout, stderr, code := cli(t, "-q", "-z", z, file)
				if code != 0 {
					t.Fatalf("%s -z %s: exit %d: %s", file, z, code, stderr)
				}
				if !ok {
					if !strings.Contains(stdout, "no "+tr+" stream "+strconv.Itoa(n)) {
						t.Errorf("%s -z %s: tshark has no such stream; dissect:\n%s", file, z, stdout)
					}
					break
				}
				got, gotEnds, found := parseFollowRaw(t, stdout)
				if !found {
					// A stream without records (a connection refused, say):
					// dissect opened it, so it counts; tshark has no bytes.
					if !strings.Contains(stdout, "\nno record\n") || len(want[0])+len(want[1]) > 0 {
						t.Errorf("%s -z %s: dissect:\n%s\ntshark: %d and %d bytes", file, z, stdout, len(want[0]), len(want[1]))
					}
					continue
				}
				// tshark's node 0 is the first packet's source, dissect's
				// the first record's: they may be swapped.
				if gotEnds != wantEnds {
					gotEnds[0], gotEnds[1] = gotEnds[1], gotEnds[0]
					got[0], got[1] = got[1], got[0]
				}
				if gotEnds != wantEnds {
					t.Errorf("%s -z %s: nodes %v, tshark %v", file, z, gotEnds, wantEnds)
					continue
				}
				m := streamOf.FindStringSubmatch(stdout)
				if m == nil {
					t.Fatalf("%s -z %s: no filter line:\n%s", file, z, stdout)
				}
				if gaps[m[1]] {
					// Bytes were lost: dissect shows a gap record (no
					// bytes), tshark's follow what it has, duplicates of a
					// retransmission included (deltarobot_loss.pcap: 35
					// bytes more). Only the nodes are compared.
					continue
				}
				for d := range 2 {
					if !bytes.Equal(got[d], want[d]) {
						t.Errorf("%s -z %s: node %d: %d bytes, tshark %d (equal: %v)", file, z, d, len(got[d]), len(want[d]), bytes.Equal(got[d], want[d]))
					}
				}
			}
		}
	}
}

// TestZFollowModes checks what ascii, hex and raw write: tshark's frame
// (rules, "Follow:", "Filter:", the nodes); ascii one line per record, hex
// those lines and a dump of the bytes (no -x needed), raw only hex lines.
func TestZFollowModes(t *testing.T) {
	text := func(z string) []string {
		stdout, stderr, code := cli(t, "-q", "-z", z, multiDevice)
		if code != 0 {
			t.Fatalf("-z %s: exit %d: %s", z, code, stderr)
		}
		return strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	}
	rule := strings.Repeat("=", 67)
	head := []string{rule, "", "Filter: tcp.stream eq 0 (stream 1)", "Node 0: 127.0.0.1:41219", "Node 1: 127.0.0.1:37001"}
	records := len(statRows(t, multiDevice, "follow,1"))
	for _, mode := range []string{"ascii", "hex", "raw"} {
		lines := text("follow,tcp," + mode + ",0")
		head[1] = "Follow: tcp," + mode
		if len(lines) < len(head)+1 || !slices.Equal(lines[:len(head)], head) || lines[len(lines)-1] != rule {
			t.Errorf("%s: frame:\n%s", mode, strings.Join(lines, "\n"))
			continue
		}
		body := lines[len(head) : len(lines)-1]
		dump := regexp.MustCompile(`^ *[0-9a-f]{8}  [0-9a-f]{2} `)
		hexOnly := regexp.MustCompile(`^\t?([0-9a-f]{2})+$`)
		var recs, dumps, raws int
		for _, l := range body {
			switch {
			case hexOnly.MatchString(l):
				raws++
			case dump.MatchString(l):
				dumps++
			default:
				recs++
			}
		}
		switch mode {
		case "ascii":
			if recs != records || dumps+raws != 0 {
				t.Errorf("ascii: %d record lines (want %d), %d dump lines", recs, records, dumps+raws)
			}
		case "hex":
			if recs != records || dumps < records {
				t.Errorf("hex: %d record lines (want %d), %d dump lines", recs, records, dumps)
			}
		case "raw":
			if raws != records || recs+dumps != 0 {
				t.Errorf("raw: %d hex lines (want %d), %d others", raws, records, recs+dumps)
			}
		}
	}
}

// TestDecodeAsPortRangeCLI checks -d with a range: a range holding the
// port decodes as the single port does (the same output), one beside it
// decodes nothing, and a reversed range is a usage error.
func TestDecodeAsPortRangeCLI(t *testing.T) {
	file := filepath.Join(pcapDir, "neptune_wiki.pcap")
	run := func(d string) string {
		stdout, stderr, code := cli(t, "-o", "json", "-d", d, file)
		if code != 0 {
			t.Fatalf("-d %s: exit %d: %s", d, code, stderr)
		}
		return stdout
	}
	single := run("udp.port==9000,neptune-wiki")
	if !strings.Contains(single, `"proto":"neptune-wiki"`) && !strings.Contains(single, `"proto":"neptune`) {
		t.Fatalf("-d udp.port==9000: no neptune records:\n%.500s", single)
	}
	if got := run("udp.port==8999-9001,neptune-wiki"); got != single {
		t.Errorf("-d udp.port==8999-9001 differs from udp.port==9000")
	}
	if got := run("udp.port==9001-9010,neptune-wiki"); strings.Contains(got, `"proto":"neptune`) {
		t.Errorf("-d udp.port==9001-9010 decoded port 9000")
	}
	_, stderr, code := cli(t, "-d", "udp.port==9001-9000,neptune-wiki", file)
	if code != 2 || !strings.Contains(stderr, `"9001-9000" is not a range of ports`) {
		t.Errorf("reversed range: exit %d: %s", code, stderr)
	}
}

// TestZJSONRounded checks that the times of the statistics' JSON are
// rounded to the microsecond: read with a typed reader (encoding/json into
// float64) they are numbers, and their literal has at most 3 decimals in
// ms and 6 in s. The two values are checked: deltarobot_session's
// mean round trip (1.4015999999999997 before) and multiDevice's last
// stream's span (3.5032579999999998 before).
func TestZJSONRounded(t *testing.T) {
	literal := regexp.MustCompile(`"([a-z0-9_]+_(ms|s))":(-?[0-9][0-9.eE+-]*)`)
	checked := 0
	for _, file := range pcaps(t) {
		args := []string{"-q", "-o", "json", "-z", "rtt", "-z", "rate", "-z", "conv", file}
		stdout, stderr, code := cli(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", file, code, stderr)
		}
		for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
			var typed map[string]any
			if err := json.Unmarshal([]byte(line), &typed); err != nil {
				t.Fatalf("%s: %q: %v", file, line, err)
			}
			for _, m := range literal.FindAllStringSubmatch(line, -1) {
				key, unit, lit := m[1], m[2], m[3]
				if key == "rate_per_s" {
					continue // a rate, not a time
				}
				if _, ok := typed[key].(float64); !ok {
					t.Errorf("%s: %s = %v: not a float64", file, key, typed[key])
				}
				_, frac, _ := strings.Cut(lit, ".")
				want := 6
				if unit == "ms" {
					want = 3
				}
				if strings.ContainsAny(lit, "eE") || len(frac) > want || frac == "" {
					t.Errorf("%s: %s = %s: want a fraction of 1 to %d digits", file, key, lit, want)
				}
				checked++
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d times checked", checked)
	}
	rtt := statRows(t, filepath.Join(pcapDir, "deltarobot_session.pcap"), "rtt")
	if len(rtt) != 1 || rtt[0]["mean_ms"] != 1.402 {
		t.Errorf("deltarobot_session rtt: %v, want mean_ms 1.402", rtt)
	}
	stdout, _, _ := cli(t, "-q", "-o", "json", "-z", "rate", multiDevice)
	if !strings.Contains(stdout, `"span_s":3.503258,`) || strings.Contains(stdout, "3.50325799") {
		t.Errorf("multiDevice rate: want span_s 3.503258:\n%s", stdout)
	}
}

// TestZTables80 checks every -z table on every shipped capture at 80
// columns: no line is wider, conv shows every stream's endpoints whole
// (ports included), rate keeps MSGS, MAX GAP and STALL AT, and a table
// that left columns out says which (a header word missing from the
// --wide table's header is in the note).
func TestZTables80(t *testing.T) {
	t.Setenv("COLUMNS", "80")
	for _, file := range pcaps(t) {
		var ends []string
		for _, r := range statRows(t, file, "conv") {
			if a, ok := r["a"].(string); ok {
				ends = append(ends, a+" → "+r["b"].(string))
			}
		}
		for _, z := range []string{"conv", "conv,tcp", "conv,udp", "rate", "rtt", "io,stat,1", "follow,0", "follow,tcp,ascii,0", "follow,udp,hex,0"} {
			stdout, stderr, code := cli(t, "-q", "-z", z, file)
			if code != 0 {
				t.Fatalf("%s -z %s: exit %d: %s", file, z, code, stderr)
			}
			for i, l := range strings.Split(stdout, "\n") {
				if n := utf8.RuneCountInString(l); n > 80 {
					t.Errorf("%s -z %s: line %d has %d columns: %q", filepath.Base(file), z, i+1, n, l)
				}
			}
			switch z {
			case "conv":
				for _, e := range ends {
					if !strings.Contains(stdout, e) {
						t.Errorf("%s -z conv: %q not shown whole:\n%s", filepath.Base(file), e, stdout)
					}
				}
			case "rate":
				head := strings.Split(stdout, "\n")[1]
				for _, c := range []string{"MSGS", "msg/s", "MAX GAP ms", "STALL AT s"} {
					if !strings.Contains(head, c) {
						t.Errorf("%s -z rate: header %q lacks %s", filepath.Base(file), head, c)
					}
				}
			}
			if !strings.HasPrefix(z, "follow") {
				wide, _, _ := cli(t, "-q", "--wide", "-z", z, file)
				wideHead, head := strings.Split(wide, "\n")[1], strings.Split(stdout, "\n")[1]
				flat := strings.Join(strings.Fields(stdout), " ")
				for _, c := range strings.Split(wideHead, "  ") {
					if c = strings.TrimSpace(c); c != "" && !strings.Contains(head, c) && !strings.Contains(flat, c) {
						t.Errorf("%s -z %s: column %q left out at 80 columns and not named:\n%s", filepath.Base(file), z, c, stdout)
					}
				}
			}
		}
	}
}

// TestGraphFlag: --graph always draws io,stat's bars and rate's
// sparklines into a pipe, auto (the default) does not, never does not
// on a terminal either; a bad value is a usage error.
func TestGraphFlag(t *testing.T) {
	file := filepath.Join("..", "..", "pcaps", "deltarobot_session.pcap")
	for _, c := range []struct {
		args []string
		bars bool
	}{
		{[]string{"--graph", "always"}, true}, {nil, false}, {[]string{"--graph=never"}, false},
	} {
		stdout, stderr, code := cli(t, append(append([]string{"-q", "-z", "io,stat,0.1", "-z", "rate"}, c.args...), file)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr)
		}
		has := strings.Contains(stdout, "█") && strings.Contains(stdout, "ACTIVITY") && strings.Contains(stdout, "MESSAGES")
		if has != c.bars {
			t.Errorf("%v: bars %v, want %v:\n%s", c.args, has, c.bars, stdout)
		}
	}
	if _, stderr, code := cli(t, "-q", "-z", "rate", "--graph", "sometimes", file); code != 2 || !strings.Contains(stderr, "--graph") {
		t.Errorf("--graph sometimes: exit %d: %s", code, stderr)
	}
}
