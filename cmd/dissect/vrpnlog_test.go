package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/dissect-tools/dissect/internal/testenc/vrpnlogenc"
)

// logDir holds real mainline logs and the capture of the same session
// (capture/testdata/README.md).
const logDir = "../../pcaps/vrpn/"

// sampleVRPNLog is a small log written by the test encoder: descriptions,
// one Pos_Quat report, the disconnect an outgoing log ends with.
func sampleVRPNLog(t *testing.T, dir string) (string, []byte) {
	t.Helper()
	t0 := time.Date(2026, 11, 20, 9, 30, 0, 250000000, time.UTC)
	b := vrpnlogenc.File(vrpnlogenc.Cookie("07.38", vrpnlogenc.LogNone),
		vrpnlogenc.Entry{Type: vrpnlogenc.SenderDescription, Sender: 0, Time: t0, Payload: vrpnlogenc.NameBody("Tracker0")},
		vrpnlogenc.Entry{Type: vrpnlogenc.TypeDescription, Sender: 7, Time: t0, Payload: vrpnlogenc.NameBody("vrpn_Tracker Pos_Quat")},
		vrpnlogenc.Entry{Type: 7, Sender: 0, Time: t0.Add(10 * time.Millisecond), Payload: vrpnlogenc.PosQuat(1, [3]float64{0.5, -1, 2}, [4]float64{0, 0, 0, 1})},
		vrpnlogenc.Entry{Type: vrpnlogenc.Disconnect, Sender: 0, Time: t0.Add(time.Second)},
	)
	path := filepath.Join(dir, "session.vrpnlog")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, b
}

// TestVRPNLogCLI: 'dissect x.vrpnlog' decodes a log as a capture: the
// table, the JSON records (times from the entries, every byte of the
// re-framed stream accounted for), the same from a .vrpnlog.gz and from
// stdin.
func TestVRPNLogCLI(t *testing.T) {
	dir := t.TempDir()
	path, raw := sampleVRPNLog(t, dir)

	table, stderr, code := cli(t, "--no-summary", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"cookie 07.38 log_mode=0", "Tracker0", "pos=(0.5,-1,2)", "disconnect"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}

	out, stderr, code := cli(t, "-o", "json", "--no-summary", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	recs := parseJSONL(t, out)
	var types []string
	for _, r := range recs {
		types = append(types, r.Type)
		if r.Src != filepath.Base(path) || r.Dst != "" || *r.Stream != 0 || *r.Proto != "vrpn" {
			t.Errorf("%s: stream %d src %q dst %q proto %q", r.Type, *r.Stream, r.Src, r.Dst, *r.Proto)
		}
	}
	if want := []string{"cookie", "sender_description", "type_description", "vrpn_Tracker Pos_Quat", "disconnect"}; !reflect.DeepEqual(types, want) {
		t.Fatalf("types %q, want %q", types, want)
	}
	// Entry times, by hand: 09:30:00.25 and one second later.
	if recs[3].Time != "2026-11-20T09:30:00.260000000Z" || recs[4].Time != "2026-11-20T09:30:01.250000000Z" {
		t.Errorf("times %s, %s", recs[3].Time, recs[4].Time)
	}
	var pq struct {
		Sensor int64     `json:"sensor"`
		Pos    []float64 `json:"pos"`
		Sent   string    `json:"sent"`
		Seq    *uint64   `json:"sequence"`
	}
	if err := json.Unmarshal(recs[3].Fields, &pq); err != nil {
		t.Fatal(err)
	}
	if pq.Sensor != 1 || !reflect.DeepEqual(pq.Pos, []float64{0.5, -1, 2}) || pq.Sent != recs[3].Time || pq.Seq == nil || *pq.Seq != 0 {
		t.Errorf("Pos_Quat fields %s", recs[3].Fields)
	}
	// The re-framed stream: cookie 24, descriptions 24+13 and 24+26
	// padded to 40 and 56, Pos_Quat 24+64, disconnect 24.
	if n := tiling(t, recs); n[dirKey{0, filepath.Base(path)}] != 24+40+56+88+24 {
		t.Errorf("records tile %d bytes, want %d", n[dirKey{0, filepath.Base(path)}], 24+40+56+88+24)
	}

	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(raw)
	zw.Close()
	gz := path + ".gz"
	if err := os.WriteFile(gz, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, stderr, code := cli(t, "-o", "json", "--no-summary", gz)
	if code != 0 || got != strings.ReplaceAll(out, `"src":"`+filepath.Base(path)+`"`, `"src":"`+filepath.Base(gz)+`"`) {
		t.Errorf("%s: exit %d, output differs from the plain log's; stderr %q\n%s", gz, code, stderr, got)
	}
	var sout, serr bytes.Buffer
	code = run([]string{"-o", "json", "--no-summary", "-"}, bytes.NewReader(raw), &sout, &serr)
	if code != 0 || sout.String() != strings.ReplaceAll(out, `"src":"`+filepath.Base(path)+`"`, `"src":"stdin"`) {
		t.Errorf("stdin: exit %d, output differs; stderr %q\n%s", code, serr.String(), sout.String())
	}
}

// TestVRPNLogTruncatedCLI: a log cut inside an entry prints the records
// before the cut, then one error line naming the file and the entry's
// offset, and exits 1.
func TestVRPNLogTruncatedCLI(t *testing.T) {
	dir := t.TempDir()
	path, raw := sampleVRPNLog(t, dir)
	// Cut inside the Pos_Quat entry: cookie 24, entries 24+13 and 24+26,
	// so it starts at 111.
	if err := os.WriteFile(path, raw[:111+30], 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := cli(t, "-o", "json", "--no-summary", path)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	var types []string
	for _, r := range parseJSONL(t, out) {
		types = append(types, r.Type)
	}
	if want := []string{"cookie", "sender_description", "type_description"}; !reflect.DeepEqual(types, want) {
		t.Errorf("types %q, want %q", types, want)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if want := "dissect: " + path + ": at byte 111: truncated VRPN log entry: header says 64 payload bytes, 6 remain"; lines[len(lines)-1] != want {
		t.Errorf("stderr %q, want last line %q", stderr, want)
	}
}

// TestVRPNLogNotCaptureHint: a file that is none of the formats read says
// which formats are read.
func TestVRPNLogNotCaptureHint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(path, []byte("hello, this is text"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := cli(t, path)
	if code == 0 || !strings.Contains(stderr, "not a pcap, pcapng or VRPN log file") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// logMessage is a decoded message without what a log cannot keep: the
// sequence number (not logged) and a pong's rtt_ms (it needs the ping,
// which went the other way).
type logMessage struct {
	Type   string
	Fields string
}

func logMessages(t *testing.T, out, src string) []logMessage {
	t.Helper()
	var ms []logMessage
	for _, r := range parseJSONL(t, out) {
		if r.Type == "cookie" || src != "" && r.Src != src {
			continue
		}
		var f map[string]any
		if err := json.Unmarshal(r.Fields, &f); err != nil {
			t.Fatal(err)
		}
		delete(f, "sequence")
		delete(f, "rtt_ms")
		b, _ := json.Marshal(f)
		ms = append(ms, logMessage{r.Type, string(b)})
	}
	return ms
}

// TestVRPNLogMatchesCapture decodes mainline's own logs of a session and
// the capture of that session, and compares them message by message, every
// field but the sequence number and a pong's rtt_ms (see logMessage); the
// sent field is the message's time in both. What mainline logs, read from
// these files (and vrpn_Connection.C):
//   - an incoming log holds exactly the messages that came in on the wire,
//     with the sender's ids;
//   - an outgoing log holds the messages its side packed: also those
//     packed before the connection existed (descriptions and pings, which
//     were never sent), then the wire's messages (the server's log without
//     the descriptions sent when its connection was set up), then a
//     disconnect entry that never goes on the wire
//     (vrpn_Endpoint::drop_connection).
func TestVRPNLogMatchesCapture(t *testing.T) {
	const (
		client = "127.0.0.1:36055" // the session's two TCP ends
		server = "127.0.0.1:3902"
	)
	pcap, stderr, code := cli(t, "-o", "json", "--no-summary", logDir+"text_tracker_logged.pcap")
	if code != 0 {
		t.Fatalf("pcap: exit %d: %s", code, stderr)
	}
	wire := map[string][]logMessage{client: logMessages(t, pcap, client), server: logMessages(t, pcap, server)}
	if len(wire[client]) != 30 || len(wire[server]) != 40 {
		t.Fatalf("pcap: %d and %d messages", len(wire[client]), len(wire[server]))
	}
	read := func(name string) []logMessage {
		out, stderr, code := cli(t, "-o", "json", "--no-summary", logDir+name)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		for _, r := range parseJSONL(t, out) {
			var f struct {
				Sent string `json:"sent"`
			}
			json.Unmarshal(r.Fields, &f)
			if r.Type != "cookie" && f.Sent != r.Time {
				t.Errorf("%s: %s at %s sent %s: a log record's time is its entry's", name, r.Type, r.Time, f.Sent)
			}
		}
		return logMessages(t, out, "")
	}

	for _, c := range []struct{ log, from string }{
		{"text_tracker_logged.server_in-1.vrpnlog", client},
		{"text_tracker_logged.client_in.vrpnlog", server},
	} {
		if got := read(c.log); !reflect.DeepEqual(got, wire[c.from]) {
			t.Errorf("%s: %d messages differ from the %d sent by %s:\n%v\n%v", c.log, len(got), len(wire[c.from]), c.from, got, wire[c.from])
		}
	}

	for _, c := range []struct {
		log, from string
		before    int // entries packed before the connection
		setup     int // the wire's first messages, which the log lacks
	}{
		// The client's remotes describe themselves (18) and ping (4) as
		// they are created; then its log holds every message it sent,
		// its setup descriptions included.
		{"text_tracker_logged.client_out.vrpnlog", client, 22, 0},
		// The server's objects describe themselves when created (18
		// entries); its log lacks the 23 descriptions the connection's
		// setup sent (sender 0 "VRPN Control" and the connection's own
		// four types among them), then holds every message it sent.
		{"text_tracker_logged.server_out.vrpnlog", server, 18, 23},
	} {
		got := read(c.log)
		w := wire[c.from]
		if n := len(got) - c.before - 1; n != len(w)-c.setup {
			t.Fatalf("%s: %d entries, %d before the connection: %d on the wire, want %d", c.log, len(got), c.before, n, len(w)-c.setup)
		}
		if last := got[len(got)-1]; last.Type != "disconnect" {
			t.Errorf("%s: last entry %v, want the disconnect", c.log, last)
		}
		for _, m := range got[:c.before] {
			if m.Type != "sender_description" && m.Type != "type_description" && m.Type != "vrpn_Base ping_message" {
				t.Errorf("%s: %v packed before the connection", c.log, m)
			}
		}
		onWire := got[c.before : len(got)-1]
		if !reflect.DeepEqual(onWire, w[c.setup:]) {
			t.Errorf("%s: the messages after the connection differ from the %d sent by %s after its setup:\n%v\n%v", c.log, len(onWire), c.from, onWire, w[c.setup:])
		}
	}
}
