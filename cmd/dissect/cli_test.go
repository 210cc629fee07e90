package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

const pcapDir = "../../pcaps"

// cli runs the command line in-process and returns stdout, stderr and the
// exit code.
func cli(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

// jsonRecord is a record of the output contract, decoded with the standard
// library (independently of the writer under test).
type jsonRecord struct {
	Time      string          `json:"time"`
	Frame     *int64          `json:"frame"`
	Proto     *string         `json:"proto"`
	Transport string          `json:"transport"`
	Stream    *int            `json:"stream"`
	Src       string          `json:"src"`
	Dst       string          `json:"dst"`
	Offset    *int64          `json:"offset"`
	Length    *int64          `json:"length"`
	Type      string          `json:"type"`
	Fields    json.RawMessage `json:"fields"`
	Warnings  []string        `json:"warnings"`
}

func parseJSONL(t *testing.T, out string) []jsonRecord {
	t.Helper()
	var recs []jsonRecord
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var r jsonRecord
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if r.Frame == nil || *r.Frame < 1 || r.Proto == nil || r.Stream == nil || r.Offset == nil || r.Length == nil || r.Time == "" || r.Type == "" || r.Fields == nil {
			t.Fatalf("line lacks a contract key: %s", sc.Text())
		}
		if !strings.HasSuffix(r.Time, "Z") || len(r.Time) != len("2026-11-22T00:08:19.479337000Z") {
			t.Fatalf("time %q is not RFC 3339 UTC with nanoseconds", r.Time)
		}
		if r.Fields[0] != '{' {
			t.Fatalf("fields is not an object: %s", sc.Text())
		}
		recs = append(recs, r)
	}
	return recs
}

type dirKey struct {
	stream int
	src    string
}

// tiling checks byte accounting: per direction, the records tile [0, n)
// with no hole and no overlap, and returns n per direction.
func tiling(t *testing.T, recs []jsonRecord) map[dirKey]int64 {
	t.Helper()
	next := map[dirKey]int64{}
	for _, r := range recs {
		k := dirKey{*r.Stream, r.Src}
		if *r.Offset != next[k] {
			t.Fatalf("stream %d from %s: %s at offset %d, but the previous record ended at %d", k.stream, k.src, r.Type, *r.Offset, next[k])
		}
		if *r.Length <= 0 {
			t.Fatalf("stream %d from %s: %s at %d has length %d", k.stream, k.src, r.Type, *r.Offset, *r.Length)
		}
		next[k] = *r.Offset + *r.Length
	}
	return next
}

// pcaps lists the shipped captures: pcaps/ and the real VRPN captures
// and logs of pcaps/vrpn.
func pcaps(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pat := range []string{"*.pcap", "*.pcapng", "vrpn/*.pcap", "vrpn/*.vrpnlog"} {
		m, _ := filepath.Glob(filepath.Join(pcapDir, pat))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no captures in pcaps/")
	}
	sort.Strings(files)
	return files
}

// TestEveryPcapAccountsForEveryByte runs every sample capture through the
// CLI and checks the byte-accounting rule on the JSON output.
func TestEveryPcapAccountsForEveryByte(t *testing.T) {
	for _, f := range pcaps(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			out, errOut, code := cli(t, "-o", "json", "-d", "tcp.port==4000,deltarobot", "-d", "udp.port==9000,neptune-wiki", f)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			recs := parseJSONL(t, out)
			if len(recs) == 0 {
				t.Fatal("no records")
			}
			tiling(t, recs)
		})
	}
}

// TestVRPNPayloadBytes compares the bytes covered per TCP direction with the
// payload byte counts in the real captures' truth file.
func TestVRPNPayloadBytes(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(pcapDir, "vrpn_truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	var truth struct {
		Captures map[string]struct {
			TCP []struct {
				Directions []struct {
					From         string `json:"from"`
					PayloadBytes int64  `json:"payload_bytes"`
				} `json:"directions"`
			} `json:"tcp_connections"`
		} `json:"captures"`
	}
	if err := json.Unmarshal(raw, &truth); err != nil {
		t.Fatal(err)
	}
	for file, orig := range map[string]string{
		"vrpn_tcp_only.pcap":     "a_tcp_only.pcap",
		"vrpn_udp_tcp.pcapng":    "b_udp_tcp.pcap", // the truth's pcapng entry says "same_as" the pcap
		"vrpn_multi_device.pcap": "c2_multi_device_analog.pcap",
	} {
		c, ok := truth.Captures[orig]
		if !ok || len(c.TCP) == 0 {
			t.Fatalf("%s: no truth", orig)
		}
		out, errOut, code := cli(t, "-o", "json", filepath.Join(pcapDir, file))
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", file, code, errOut)
		}
		recs := parseJSONL(t, out)
		covered := map[string]int64{}
		for _, r := range recs {
			if r.Transport == "tcp" {
				covered[r.Src] += *r.Length
				if r.Type == "skipped" || r.Type == "gap" {
					t.Errorf("%s: %s record in a clean real capture at %s offset %d", file, r.Type, r.Src, *r.Offset)
				}
			}
			if *r.Proto != "vrpn" {
				t.Errorf("%s: proto %q", file, *r.Proto)
			}
		}
		for _, conn := range c.TCP {
			for _, d := range conn.Directions {
				if covered[d.From] != d.PayloadBytes {
					t.Errorf("%s: direction from %s: records cover %d bytes, truth has %d payload bytes", file, d.From, covered[d.From], d.PayloadBytes)
				}
			}
		}
	}
}

// sampleTruth is what these tests read of the sidecars written by
// internal/testenc/mkpcaps from the spec-based encoders: the records per
// stream and direction (the flags that decode a capture come from
// dissecttest.ReadCapture, as truthFlags gives them).
type sampleTruth struct {
	Streams []struct {
		Stream     int `json:"stream"`
		Directions []struct {
			Src     string     `json:"src"`
			Bytes   int64      `json:"bytes"`
			Gaps    [][2]int64 `json:"gaps"`
			Skipped [][2]int64 `json:"skipped"`
			Records []struct {
				Type    string          `json:"type"`
				Offset  int64           `json:"offset"`
				Length  int64           `json:"length"`
				Fields  json.RawMessage `json:"fields"`
				Warning string          `json:"warning"`
				RTT     string          `json:"rtt_ms"`
				Match   string          `json:"match"`
			} `json:"records"`
		} `json:"directions"`
	} `json:"streams"`
}

// TestSamplesMatchEncoderTruth runs the CLI on each generated sample and
// compares every record with what the encoder wrote.
func TestSamplesMatchEncoderTruth(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(pcapDir, "*.truth.json"))
	if len(files) < 10 {
		t.Fatalf("%d truth files in pcaps/, want the 10 generated samples", len(files))
	}
	for _, tf := range files {
		capFile := strings.TrimSuffix(tf, ".truth.json")
		if _, err := os.Stat(capFile + ".pcap"); err == nil {
			capFile += ".pcap"
		} else {
			capFile += ".pcapng"
		}
		t.Run(filepath.Base(capFile), func(t *testing.T) {
			raw, err := os.ReadFile(tf)
			if err != nil {
				t.Fatal(err)
			}
			var truth sampleTruth
			if err := json.Unmarshal(raw, &truth); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"-o", "json"}, truthFlags(dissecttest.ReadCapture(t, capFile))...)
			out, errOut, code := cli(t, append(args, capFile)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			recs := parseJSONL(t, out)
			got := tiling(t, recs)
			for _, st := range truth.Streams {
				for _, d := range st.Directions {
					k := dirKey{st.Stream, d.Src}
					if got[k] != d.Bytes {
						t.Errorf("stream %d from %s: records cover %d bytes, truth %d", st.Stream, d.Src, got[k], d.Bytes)
					}
					// the truth lists every record of the direction in
					// order, gap and skipped ones included
					var msgs, gaps, skipped []jsonRecord
					for _, r := range recs {
						if *r.Stream != st.Stream || r.Src != d.Src {
							continue
						}
						msgs = append(msgs, r)
						switch r.Type {
						case "gap":
							gaps = append(gaps, r)
						case "skipped":
							skipped = append(skipped, r)
						}
					}
					compareRanges(t, "gap", gaps, d.Gaps)
					compareRanges(t, "skipped", skipped, d.Skipped)
					if len(msgs) != len(d.Records) {
						t.Fatalf("stream %d from %s: %d messages, truth %d", st.Stream, d.Src, len(msgs), len(d.Records))
					}
					for i, w := range d.Records {
						g := msgs[i]
						if g.Type != w.Type || *g.Offset != w.Offset || *g.Length != w.Length {
							t.Fatalf("message %d: got %s [%d,+%d), truth %s [%d,+%d)", i, g.Type, *g.Offset, *g.Length, w.Type, w.Offset, w.Length)
						}
						if w.Type == "gap" || w.Type == "skipped" {
							continue
						}
						gf, err1 := orderedJSON(g.Fields)
						wf, err2 := orderedJSON(w.Fields)
						if err1 != nil || err2 != nil {
							t.Fatalf("message %d: %v %v", i, err1, err2)
						}
						// rtt_ms depends on capture timing; its presence is checked below
						gobj := gf.([]jsonKV)
						hasRTT := false
						for j, kv := range gobj {
							if kv.k == "rtt_ms" {
								hasRTT = true
								gf = append(append([]jsonKV(nil), gobj[:j]...), gobj[j+1:]...)
							}
						}
						// id_hex is not in the truth: checked against its id, then left out
						if gf, err = checkIDHex(gf.([]jsonKV), wf); err != nil {
							t.Errorf("message %d (%s at %d): %v", i, w.Type, w.Offset, err)
						}
						if err := matchJSON(gf, wf, w.Match == "subset"); err != nil {
							t.Errorf("message %d (%s at %d): fields %s: %v", i, w.Type, w.Offset, g.Fields, err)
						}
						if (w.RTT == "yes" && !hasRTT) || (w.RTT == "no" && hasRTT) {
							t.Errorf("message %d (%s at %d): rtt_ms present=%v, truth %q", i, w.Type, w.Offset, hasRTT, w.RTT)
						}
						if (w.Warning == "yes" && len(g.Warnings) == 0) || (w.Warning == "no" && len(g.Warnings) > 0) {
							t.Errorf("message %d (%s at %d): warnings %q, truth %q", i, w.Type, w.Offset, g.Warnings, w.Warning)
						}
					}
				}
			}
		})
	}
}

// jsonKV is one key of a JSON object, kept in order.
type jsonKV struct {
	k string
	v any
}

// orderedJSON decodes JSON keeping the order of object keys: objects become
// []jsonKV, arrays []any, numbers json.Number.
func orderedJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return decodeOrdered(dec)
}

func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch d {
	case '{':
		obj := []jsonKV{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			obj = append(obj, jsonKV{k.(string), v})
		}
		_, err := dec.Token()
		return obj, err
	default:
		arr := []any{}
		for dec.More() {
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := dec.Token()
		return arr, err
	}
}

// matchJSON compares decoded output with a truth value: objects with the
// same keys in the same order (the contract's wire order), or with subset
// every truth key present; arrays element by element; numbers by value (a
// truth number with a fraction or exponent as float32, the precision the
// encoders write); other values exactly.
func matchJSON(got, want any, subset bool) error {
	switch w := want.(type) {
	case []jsonKV:
		g, ok := got.([]jsonKV)
		if !ok {
			return fmt.Errorf("%v is not an object", got)
		}
		if !subset && len(g) != len(w) {
			return fmt.Errorf("keys %v, want %v", jsonKeys(g), jsonKeys(w))
		}
		for i, kv := range w {
			var gv any
			found := false
			for j, gkv := range g {
				if gkv.k == kv.k && (subset || j == i) {
					gv, found = gkv.v, true
					break
				}
			}
			if !found {
				return fmt.Errorf("keys %v, want %v", jsonKeys(g), jsonKeys(w))
			}
			if err := matchJSON(gv, kv.v, subset); err != nil {
				return fmt.Errorf("%s: %w", kv.k, err)
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("%v, want an array of %d", got, len(w))
		}
		for i := range w {
			if err := matchJSON(g[i], w[i], subset); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
	case json.Number:
		g, ok := got.(json.Number)
		if !ok {
			return fmt.Errorf("%v, want %s", got, w)
		}
		// The truth writes a whole float without a fraction (0), the
		// contract with one (0.0): a fraction on either side compares as
		// float32. Types are checked by TestJSONTypesPython.
		if strings.ContainsAny(string(w), ".eE") || strings.ContainsAny(string(g), ".eE") {
			gf, err1 := g.Float64()
			wf, err2 := w.Float64()
			if err1 != nil || err2 != nil || float32(gf) != float32(wf) {
				return fmt.Errorf("%s, want %s", g, w)
			}
		} else if g != w {
			return fmt.Errorf("%s, want %s", g, w)
		}
	default:
		if got != want {
			return fmt.Errorf("%v, want %v", got, want)
		}
	}
	return nil
}

func jsonKeys(o []jsonKV) []string {
	keys := make([]string, len(o))
	for i, kv := range o {
		keys[i] = kv.k
	}
	return keys
}

func compareRanges(t *testing.T, kind string, got []jsonRecord, want [][2]int64) {
	t.Helper()
	var g [][2]int64
	for _, r := range got {
		g = append(g, [2]int64{*r.Offset, *r.Offset + *r.Length})
	}
	if fmt.Sprint(g) != fmt.Sprint(want) && !(len(g) == 0 && len(want) == 0) {
		t.Errorf("%s ranges %v, truth %v", kind, g, want)
	}
}

func TestProtocolsCommand(t *testing.T) {
	out, _, code := cli(t, "protocols")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"vrpn", "tcp/3883", "udp/3883", "deltarobot", "DeltaRVr"} {
		if !strings.Contains(out, want) {
			t.Errorf("protocols output lacks %q:\n%s", want, out)
		}
	}
}

// A capture joined mid-stream (no handshake) is decoded from the first
// place where Deltarobot messages parse again, also without -d: the bytes
// before it are skipped, every byte accounted for, and once the protocol
// is known the skipped record names it (issue 31). With -d the same
// messages are decoded.
func TestDecodeAsMidStream(t *testing.T) {
	f := filepath.Join(pcapDir, "deltarobot_midstream.pcap")
	count := func(args ...string) (positions int, recs []jsonRecord) {
		out, _, code := cli(t, append(append([]string{"-o", "json"}, args...), f)...)
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
		recs = parseJSONL(t, out)
		for _, r := range recs {
			if r.Type == "actuator_position" {
				positions++
			}
		}
		tiling(t, recs)
		return positions, recs
	}
	auto, recs := count()
	if auto == 0 {
		t.Fatal("without -d, no position was decoded after the sync point")
	}
	if recs[0].Type != "skipped" || *recs[0].Proto != "deltarobot" || !strings.Contains(string(recs[0].Fields), `"deltarobot: bytes passed over while resynchronising"`) {
		t.Errorf("the first record is %s/%s %s, want the bytes before the sync point skipped by deltarobot's resync", *recs[0].Proto, recs[0].Type, recs[0].Fields)
	}
	forced, _ := count("-d", "tcp.port==4000,deltarobot")
	if forced < auto {
		t.Errorf("-d decodes %d positions, detection %d", forced, auto)
	}
}

// TestJSONThroughJQ checks that jq reads the output, as scripts do.
func TestJSONThroughJQ(t *testing.T) {
	jq, err := exec.LookPath("jq")
	if err != nil {
		t.Skip("jq is not installed; .ci/run installs it")
	}
	out, _, code := cli(t, "-o", "json", filepath.Join(pcapDir, "vrpn_udp_tcp.pcapng"))
	if code != 0 {
		t.Fatal(code)
	}
	cmd := exec.Command(jq, "-r", `select(.type == "vrpn_Tracker Pos_Quat" and .fields.sensor == 1) | .fields.quat.w`)
	cmd.Stdin = strings.NewReader(out)
	res, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(res))
	// truth.json: 32 Pos_Quat reports alternate sensors 0 and 1; the NULL
	// tracker's identity quaternion has w = 1
	if len(lines) != 16 {
		t.Fatalf("jq selected %d reports of sensor 1, want 16", len(lines))
	}
	for _, l := range lines {
		// the float 1.0: jq 1.6 prints it as 1, jq 1.7 keeps the literal
		if l != "1" && l != "1.0" {
			t.Errorf("w = %s, want 1", l)
		}
	}
}

// TestGolden pins the exact rendering of both output forms for one small
// capture. See the header of each golden file for how it was checked.
func TestGolden(t *testing.T) {
	for _, tc := range []struct{ golden, format string }{
		{"testdata/deltarobot_sll2.golden.txt", "table"},
		{"testdata/deltarobot_sll2.golden.jsonl", "json"},
	} {
		out, errOut, code := cli(t, "-o", tc.format, "--no-summary", "-d", "tcp.port==4000,deltarobot", filepath.Join(pcapDir, "deltarobot_sll2.pcap"))
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		raw, err := os.ReadFile(tc.golden)
		if err != nil {
			t.Fatal(err)
		}
		header, body := splitGolden(string(raw))
		if *update {
			os.WriteFile(tc.golden, []byte(header+out), 0o644)
			continue
		}
		if out != body {
			t.Errorf("%s differs from the output:\n%s", tc.golden, firstDiff(body, out))
		}
	}
}

// splitGolden separates the leading '#' comment lines from the body.
func splitGolden(s string) (string, string) {
	i := 0
	for strings.HasPrefix(s[i:], "#") {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			return s, ""
		}
		i += j + 1
	}
	return s[:i], s[i:]
}

func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d\nwant %s\n got %s", i+1, a, b)
		}
	}
	return ""
}
