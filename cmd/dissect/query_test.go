package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

// truthSamples returns each generated sample capture with its truth and
// the arguments that decode it.
func truthSamples(t *testing.T) map[string]struct {
	truth sampleTruth
	args  []string
} {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(pcapDir, "*.truth.json"))
	if len(files) < 10 {
		t.Fatalf("%d truth files in pcaps/", len(files))
	}
	out := map[string]struct {
		truth sampleTruth
		args  []string
	}{}
	for _, tf := range files {
		capFile := strings.TrimSuffix(tf, ".truth.json") + ".pcap"
		if _, err := os.Stat(capFile); err != nil {
			capFile += "ng"
		}
		raw, err := os.ReadFile(tf)
		if err != nil {
			t.Fatal(err)
		}
		var truth sampleTruth
		if err := json.Unmarshal(raw, &truth); err != nil {
			t.Fatal(err)
		}
		args := append(truthFlags(dissecttest.ReadCapture(t, capFile)), capFile)
		out[filepath.Base(capFile)] = struct {
			truth sampleTruth
			args  []string
		}{truth, args}
	}
	return out
}

// jsonLines decodes JSON Lines output.
func jsonLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		out = append(out, m)
	}
	return out
}

// -Y selects exactly the records the encoder's truth says have that type
// (and, for Deltarobot positions, that value), in every generated sample.
func TestDisplayFilterCountsAgainstTruth(t *testing.T) {
	for name, s := range truthSamples(t) {
		want := map[string]int{}
		xOver := 0 // Deltarobot records with fields.x > 0.1
		for _, st := range s.truth.Streams {
			for _, d := range st.Directions {
				for _, r := range d.Records {
					want[r.Type]++
					var f map[string]any
					if json.Unmarshal(r.Fields, &f) == nil {
						if x, ok := f["x"].(float64); ok && x > 0.1 {
							xOver++
						}
					}
				}
			}
		}
		for typ, n := range want {
			expr := fmt.Sprintf("type == %q", typ)
			stdout, stderr, code := cli(t, append([]string{"-o", "json", "-Y", expr}, s.args...)...)
			if code != 0 {
				t.Fatalf("%s -Y %s: exit %d: %s", name, expr, code, stderr)
			}
			if got := len(jsonLines(t, stdout)); got != n {
				t.Errorf("%s -Y %s: %d records, truth has %d", name, expr, got, n)
			}
			if !strings.Contains(stderr, fmt.Sprintf("display filter: %d of ", n)) {
				t.Errorf("%s -Y %s: stderr lacks the count: %s", name, expr, stderr)
			}
		}
		if strings.HasPrefix(name, "deltarobot") {
			stdout, _, _ := cli(t, append([]string{"-o", "json", "-Y", "deltarobot.x > 0.1"}, s.args...)...)
			if got := len(jsonLines(t, stdout)); got != xOver {
				t.Errorf("%s -Y deltarobot.x > 0.1: %d records, truth has %d", name, got, xOver)
			}
		}
	}
}

// -Y on the real VRPN captures: records of one sender and type equal the
// counts of the independent decoder (pcaps/vrpn_truth.json).
func TestDisplayFilterVRPNTruth(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(pcapDir, "vrpn_truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	var truth struct {
		Captures map[string]struct {
			Expected struct {
				Rows [][]any `json:"rows"`
			} `json:"expected_counts"`
		} `json:"captures"`
	}
	if err := json.Unmarshal(raw, &truth); err != nil {
		t.Fatal(err)
	}
	// pcaps/README.md: the shipped names of the truth's captures.
	// (vrpn_udp_tcp.pcapng is editcap's copy of b_udp_tcp.pcap.)
	files := map[string]string{"a_tcp_only.pcap": "vrpn_tcp_only.pcap", "b_udp_tcp.pcap": "vrpn_udp_tcp.pcapng", "c2_multi_device_analog.pcap": "vrpn_multi_device.pcap"}
	for orig, shipped := range files {
		want := map[[2]string]int{}
		for _, row := range truth.Captures[orig].Expected.Rows {
			sender, typ := row[4].(string), row[5].(string)
			if sender == "(system)" {
				continue
			}
			want[[2]string{sender, typ}] += int(row[6].(float64))
		}
		if len(want) == 0 {
			t.Fatalf("%s: no device messages in the truth", orig)
		}
		for k, n := range want {
			expr := fmt.Sprintf("vrpn.sender == %q && type == %q", k[0], k[1])
			stdout, stderr, code := cli(t, "-o", "json", "-Y", expr, filepath.Join(pcapDir, shipped))
			if code != 0 {
				t.Fatalf("%s: exit %d: %s", expr, code, stderr)
			}
			if got := len(jsonLines(t, stdout)); got != n {
				t.Errorf("%s -Y %s: %d records, truth has %d", shipped, expr, got, n)
			}
		}
	}
}

// -o fields prints the named values of each record, tab-separated, with
// the header and separator options of tshark's -E.
func TestFieldsOutputCLI(t *testing.T) {
	s := truthSamples(t)["deltarobot_session.pcap"]
	var ids []string
	total := 0
	for _, st := range s.truth.Streams {
		for _, d := range st.Directions {
			for _, r := range d.Records {
				total++
				if r.Type == "ping" {
					var f struct {
						ID json.Number `json:"id"`
					}
					if err := json.Unmarshal(r.Fields, &f); err != nil {
						t.Fatal(err)
					}
					id, err := strconv.ParseUint(f.ID.String(), 10, 64)
					if err != nil {
						t.Fatal(err)
					}
					ids = append(ids, fmt.Sprintf("0x%016x", id))
				}
			}
		}
	}
	stdout, stderr, code := cli(t, append([]string{"-o", "fields", "-e", "type", "-e", "deltarobot.id_hex", "-e", "length", "-E", "header=y", "-E", "separator=,"}, s.args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if lines[0] != "type,deltarobot.id_hex,length" || len(lines) != total+1 {
		t.Fatalf("header %q, %d lines; want %d records", lines[0], len(lines), total)
	}
	var got []string
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if len(f) != 3 {
			t.Fatalf("line %q: want 3 values", l)
		}
		if f[0] == "ping" {
			got = append(got, f[1])
		} else if f[0] != "pong" && f[1] != "" {
			t.Errorf("line %q: id_hex on a %s", l, f[0])
		}
	}
	if strings.Join(got, " ") != strings.Join(ids, " ") {
		t.Errorf("ping ids %q, truth %q", got, ids)
	}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-o", "fields", s.args[2]}, "-o fields needs the fields"},
		{[]string{"-e", "type", s.args[2]}, "-e and -E go with -o fields"},
		{[]string{"-o", "fields", "-e", "deltarobot.nosuch", s.args[2]}, "deltarobot.nosuch: no such field"},
		{[]string{"-o", "fields", "-e", "type", "-E", "bogus=1", s.args[2]}, "-E "},
		{[]string{"-Y", "deltarobot.x >", s.args[2]}, "-Y: at column"},
		{[]string{"-Y", "nosuchproto", s.args[2]}, "nosuchproto"},
		{[]string{"-z", "io,stat,x", s.args[2]}, "io,stat,x"},
	} {
		_, stderr, code := cli(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.msg)
		}
	}
}

// A bad display filter is one error line with the column, then the
// expression with a caret under that column.
func TestDisplayFilterErrorCaret(t *testing.T) {
	_, stderr, code := cli(t, "-Y", "stream == 0 &&& type == ping", filepath.Join(pcapDir, "deltarobot_session.pcap"))
	lines := strings.Split(stderr, "\n")
	if code != exitUsage || len(lines) < 3 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if !strings.HasPrefix(lines[0], "dissect: -Y: at column 15: ") {
		t.Errorf("first line %q", lines[0])
	}
	if lines[1] != "  stream == 0 &&& type == ping" || strings.Index(lines[2], "^") != 2+14 {
		t.Errorf("caret lines:\n%s\n%s", lines[1], lines[2])
	}
}

// -z with -q: only the statistics; io,stat sums and the rtt count match
// the truth; JSON rows carry "stat".
func TestStatisticsCLI(t *testing.T) {
	s := truthSamples(t)["deltarobot_session.pcap"]
	msgs, bytes, pongs := 0, 0.0, 0
	for _, st := range s.truth.Streams {
		for _, d := range st.Directions {
			for _, r := range d.Records {
				msgs++
				bytes += float64(r.Length)
				if r.Type == "pong" {
					pongs++
				}
			}
		}
	}
	stdout, stderr, code := cli(t, append([]string{"-q", "-o", "json", "-z", "io,stat,0.1", "-z", "rtt"}, s.args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	gotMsgs, gotBytes, rtt := 0.0, 0.0, 0.0
	totals := 0
	for _, row := range jsonLines(t, stdout) {
		switch row["stat"] {
		case "io,stat":
			p, _ := row["protocols"].(map[string]any)
			d, ok := p["deltarobot"].(map[string]any)
			if row["interval"] == "total" {
				totals++
				if !ok || int(d["messages"].(float64)) != msgs || d["bytes"].(float64) != bytes {
					t.Errorf("io,stat total row %v; truth %d messages, %v bytes", row, msgs, bytes)
				}
				continue
			}
			if ok {
				gotMsgs += d["messages"].(float64)
				gotBytes += d["bytes"].(float64)
			}
		case "rtt":
			rtt += row["count"].(float64)
		default:
			t.Errorf("row without a known stat: %v", row)
		}
	}
	if totals != 1 {
		t.Errorf("%d io,stat total rows, want 1", totals)
	}
	if int(gotMsgs) != msgs || gotBytes != bytes {
		t.Errorf("io,stat sums %v messages, %v bytes; truth %d, %v", gotMsgs, gotBytes, msgs, bytes)
	}
	if int(rtt) != pongs {
		t.Errorf("rtt count %v, truth has %d pongs", rtt, pongs)
	}
	// As a table, after the records.
	stdout, _, _ = cli(t, append([]string{"-z", "conv"}, s.args...)...)
	if !strings.Contains(stdout, "conv:") || strings.Index(stdout, "conv:") < strings.Index(stdout, "protocol_magic") {
		t.Errorf("conv table missing or not after the records:\n%s", stdout)
	}
}

// -x: the bytes of each record, as JSON "raw" and as a dump under each
// table row; the first message is the spec's handshake bytes.
func TestHexCLI(t *testing.T) {
	s := truthSamples(t)["deltarobot_session.pcap"]
	stdout, stderr, code := cli(t, append([]string{"-x", "-o", "json"}, s.args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	recs := jsonLines(t, stdout)
	for _, r := range recs {
		raw, _ := hex.DecodeString(r["raw"].(string))
		if float64(len(raw)) != r["length"].(float64) {
			t.Fatalf("record %v: %d raw bytes", r, len(raw))
		}
	}
	// Deltarobot spec: message 0x3001 "DeltaRVr", little-endian id first.
	if recs[0]["raw"] != "013044656c7461525672" {
		t.Errorf("first record raw %v", recs[0]["raw"])
	}
	stdout, _, _ = cli(t, append([]string{"-x", "-Y", "type == protocol_magic"}, s.args...)...)
	if !strings.Contains(stdout, "0000  01 30 44 65 6c 74 61 52  56 72") || !strings.Contains(stdout, ".0DeltaRVr") {
		t.Errorf("no hex dump:\n%s", stdout)
	}
}
