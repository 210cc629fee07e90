package main

import (
	"bufio"
	"encoding/json"
	"github.com/dissect-tools/dissect/internal/longtest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cutCase is a capture and a display filter whose records a cut must
// give again.
type cutCase struct {
	file, filter string
}

// cutCases cover TCP (a VRPN connection with its cookie and names, a
// request answered with its round trip, a deltarobot connection whose
// messages resynchronise on a chain), UDP, serial and a capture with
// both transports.
var cutCases = []cutCase{
	{"vrpn_tcp_only.pcap", `type == "vrpn_Tracker Velocity" && vrpn.sensor == 1`},
	{"vrpn_tcp_only.pcap", `type == "vrpn_Base pong_message"`},
	{"vrpn/poser.pcap", `type == "vrpn_Base pong_message"`},
	{"vrpn/session.pcap", `type == "vrpn_Tracker Request_Tracker_Workspace"`},
	{"vrpn_udp_tcp.pcapng", `transport == "udp" && type == "vrpn_Tracker Pos_Quat"`},
	{"vrpn_multi_device.pcap", `type == "vrpn_Button Change"`},
	{"deltarobot_session.pcap", `type == "curve"`},
	{"deltarobot_session.pcap", `type == "end_of_transmission"`},
	// Pings come after held-back gaps in the cut: their round trips hold
	// only if the held data keeps its own time (reassembly's lose).
	{"deltarobot_session.pcap", `type == "pong"`},
	{"deltarobot_vlan_ipv6.pcapng", `type == "pong"`},
	{"roboid_session.pcap", `type == "ModelURL"`},
	{"neptune_session.pcap", `type == "abort"`},
	{"handcontrol_serial.pcapng", `type == "GetTelemetry"`},
	{"handcontrol_tcp_bridge.pcap", `type == "StartTelemetry"`},
}

// filteredRecords runs dissect -o json -Y filter on file and returns the
// records decoded by encoding/json, each without its time (compared
// apart) and its frame (a cut's packets are numbered anew), and the
// times.
func filteredRecords(t *testing.T, file, filter string) (recs []string, times []time.Time) {
	t.Helper()
	stdout, stderr, code := cli(t, "-o", "json", "--no-summary", "-Y", filter, file)
	if code != exitOK {
		t.Fatalf("dissect -Y %q %s: exit %d: %s", filter, file, code, stderr)
	}
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		tm, err := time.Parse(time.RFC3339Nano, m["time"].(string))
		if err != nil {
			t.Fatal(err)
		}
		delete(m, "time")
		delete(m, "frame")
		b, _ := json.Marshal(m) // keys sorted
		recs = append(recs, string(b))
		times = append(times, tm)
	}
	return recs, times
}

// summaryPackets reads "packets:  N" from a summary.
func summaryPackets(t *testing.T, stderr string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^packets: +(\d+)`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no packet count in %q", stderr)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestCutGivesTheSameRecords: -r FILE -Y FILTER -w OUT keeps fewer
// packets than FILE, and OUT decoded with the same filter gives the
// same records: every key and field (offsets included) but the time,
// which is never earlier (a record right after a cut-out range waits, on
// reading again, until reassembly knows the range lost).
func TestCutGivesTheSameRecords(t *testing.T) {
	dir := t.TempDir()
	for i, c := range cutCases {
		in := filepath.Join(pcapDir, c.file)
		out := filepath.Join(dir, strconv.Itoa(i)+".pcapng")
		_, stderr, code := cli(t, "-r", in, "-Y", c.filter, "-w", out)
		if code != exitOK {
			t.Errorf("%s -Y %q -w: exit %d: %s", c.file, c.filter, code, stderr)
			continue
		}
		_, all, _ := cli(t, "-q", in)
		written := regexp.MustCompile(`: (\d+) of (\d+) packets written`).FindStringSubmatch(stderr)
		if written == nil {
			t.Fatalf("%s: no count of packets written in %q", c.file, stderr)
		}
		if n, _ := strconv.Atoi(written[1]); n == 0 || n >= summaryPackets(t, all) {
			t.Errorf("%s -Y %q: %s of %d packets written; want some, fewer than all", c.file, c.filter, written[1], summaryPackets(t, all))
		}
		want, wantT := filteredRecords(t, in, c.filter)
		got, gotT := filteredRecords(t, out, c.filter)
		if len(want) == 0 {
			t.Fatalf("%s -Y %q: no record passes: a useless case", c.file, c.filter)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s -Y %q: the cut gives\n%s\nwant\n%s", c.file, c.filter, strings.Join(got, "\n"), strings.Join(want, "\n"))
			continue
		}
		for j := range wantT {
			if !gotT[j].Equal(wantT[j]) {
				t.Errorf("%s -Y %q: record %d at %v in the cut, not %v", c.file, c.filter, j, gotT[j], wantT[j])
			}
		}
	}
}

// TestCutTsharkReads: tshark reads a cut (and a copy) whole; skipped
// without tshark.
func TestCutTsharkReads(t *testing.T) {
	longtest.Skip(t)
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed")
	}
	dir := t.TempDir()
	for i, c := range cutCases[:4] {
		out := filepath.Join(dir, strconv.Itoa(i)+".pcapng")
		if _, stderr, code := cli(t, "-r", filepath.Join(pcapDir, c.file), "-Y", c.filter, "-w", out); code != exitOK {
			t.Fatalf("%s: exit %d: %s", c.file, code, stderr)
		}
		b, err := exec.Command("tshark", "-r", out).CombinedOutput()
		if err != nil || strings.Contains(string(b), "appears to be damaged") || strings.Contains(string(b), "cut short") {
			t.Errorf("tshark -r %s: %v\n%s", out, err, b)
		}
	}
}

// tsharkCount counts the packets tshark reads from file that pass the
// display filter filter ("" for all).
func tsharkCount(t *testing.T, file, filter string) int {
	t.Helper()
	args := []string{"-r", file, "-T", "fields", "-e", "frame.number"}
	if filter != "" {
		args = append(args, "-Y", filter)
	}
	b, err := exec.Command("tshark", args...).Output()
	if err != nil {
		t.Fatalf("tshark %q: %v", args, err)
	}
	return len(strings.Fields(string(b)))
}

// TestCutCopy: without -Y, -w copies every packet, and with -f those the
// capture filter lets through: as many as tshark counts in the input
// (with the display filter of the same meaning), and as many as dissect
// reads back; the copy decodes to the same records.
func TestCutCopy(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(pcapDir, "vrpn_udp_tcp.pcapng")
	tshark := true
	if _, err := exec.LookPath("tshark"); err != nil {
		tshark = false
		t.Log("tshark not installed: its counts are not compared")
	}
	for i, c := range []struct{ capture, display, wantStreams string }{
		{"", "", "(1 tcp, 2 udp)"},
		{"udp", "udp", "(2 udp)"},
		{"tcp and port 56707", "tcp.port == 56707", "(1 tcp)"},
	} {
		out := filepath.Join(dir, strconv.Itoa(i)+".pcapng")
		args := []string{"-r", in, "-w", out}
		if c.capture != "" {
			args = append(args, "-f", c.capture)
		}
		stdout, stderr, code := cli(t, args...)
		if code != exitOK || stdout != "" {
			t.Fatalf("%q: exit %d, stdout %q: %s", args, code, stdout, stderr)
		}
		_, back, _ := cli(t, "-q", out)
		n := summaryPackets(t, back)
		if !strings.Contains(back, c.wantStreams) {
			t.Errorf("-f %q: the copy's streams: %s; want %s", c.capture, back, c.wantStreams)
		}
		if summaryPackets(t, stderr) != n {
			t.Errorf("-f %q: the run counted %d packets, the copy holds %d", c.capture, summaryPackets(t, stderr), n)
		}
		if tshark {
			if want := tsharkCount(t, in, c.display); n != want {
				t.Errorf("-f %q: %d packets copied; tshark counts %d in the input (-Y %q)", c.capture, n, want, c.display)
			}
			if got := tsharkCount(t, out, ""); got != n {
				t.Errorf("-f %q: tshark reads %d packets of the copy, dissect %d", c.capture, got, n)
			}
		}
		if c.capture == "" {
			want, _ := filteredRecords(t, in, "stream >= 0")
			got, _ := filteredRecords(t, out, "stream >= 0")
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("the copy decodes to other records")
			}
		}
	}
}

// TestCutErrors: what cannot be done is one line naming what is wrong.
func TestCutErrors(t *testing.T) {
	in := filepath.Join(pcapDir, "vrpn_tcp_only.pcap")
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"-r", "-", "-Y", "stream == 0", "-w", filepath.Join(dir, "a.pcapng")}, exitUsage, "stdin cannot be read again"},
		{[]string{"-r", in, "-o", "json", "-w", filepath.Join(dir, "b.pcapng")}, exitUsage, "-w writes packets, not records"},
		{[]string{"-r", in, "-f", "tcp port", "-w", filepath.Join(dir, "c.pcapng")}, exitUsage, "-f: "},
		{[]string{"-r", in, "-Y", "stream == 0", "-w", filepath.Join(dir, "no", "such", "d.pcapng")}, exitError, filepath.Join(dir, "no", "such", "d.pcapng")},
		{[]string{"-r", filepath.Join(dir, "missing.pcap"), "-w", filepath.Join(dir, "e.pcapng")}, exitError, "missing.pcap"},
		{[]string{"-r", in, "-w", in}, exitUsage, "is also an input file"},
	} {
		stdout, stderr, code := cli(t, c.args...)
		first, _, _ := strings.Cut(stderr, "\n")
		if c.code == exitError {
			// The summary may come first; the error is the last line.
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			first = lines[len(lines)-1]
		}
		if code != c.code || stdout != "" || !strings.HasPrefix(first, "dissect: ") || !strings.Contains(first, c.msg) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and one line with %q", c.args, code, stderr, c.code, c.msg)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a.pcapng")); err == nil {
		t.Errorf("a refused run created its -w file")
	}
}

// TestCutReadCommand: 'dissect read' cuts as the root command does.
func TestCutReadCommand(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(pcapDir, "vrpn_tcp_only.pcap")
	filter := `type == "vrpn_Base pong_message"`
	a, b := filepath.Join(dir, "a.pcapng"), filepath.Join(dir, "b.pcapng")
	if _, stderr, code := cli(t, "read", "-Y", filter, "-w", a, in); code != exitOK {
		t.Fatalf("read -w: exit %d: %s", code, stderr)
	}
	if _, stderr, code := cli(t, "-r", in, "-Y", filter, "-w", b); code != exitOK {
		t.Fatalf("-r -w: exit %d: %s", code, stderr)
	}
	x, _ := os.ReadFile(a)
	y, _ := os.ReadFile(b)
	if len(x) == 0 || string(x) != string(y) {
		t.Errorf("'dissect read -w' wrote %d bytes, 'dissect -r -w' %d, or they differ", len(x), len(y))
	}
}

// TestCutSeveralFiles: files of different link types (SLL2, Ethernet)
// read as one capture become one pcapng with an interface for each, in
// the order read; a cut over them keeps the records of both.
func TestCutSeveralFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(pcapDir, "deltarobot_sll2.pcap"), filepath.Join(pcapDir, "vrpn_tcp_only.pcap")
	out := filepath.Join(dir, "both.pcapng")
	_, stderr, code := cli(t, "-r", a, "-r", b, "-w", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	_, sa, _ := cli(t, "-q", a)
	_, sb, _ := cli(t, "-q", b)
	_, sout, _ := cli(t, "-q", out)
	if n, want := summaryPackets(t, sout), summaryPackets(t, sa)+summaryPackets(t, sb); n != want {
		t.Errorf("the copy of both holds %d packets; want %d", n, want)
	}
	if _, err := exec.LookPath("tshark"); err == nil {
		if got := tsharkCount(t, out, ""); got != summaryPackets(t, sout) {
			t.Errorf("tshark reads %d packets of the copy", got)
		}
	}
	filter := `type == "end_of_transmission" || type == "vrpn_Base pong_message"`
	cut := filepath.Join(dir, "cut.pcapng")
	if _, stderr, code := cli(t, "-r", a, "-r", b, "-Y", filter, "-w", cut); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// Each file alone, as the two are read one after the other.
	wantA, _ := filteredRecords(t, a, filter)
	wantB, _ := filteredRecords(t, b, filter)
	got, _ := filteredRecords(t, cut, filter)
	if len(got) != len(wantA)+len(wantB) || len(wantA) == 0 || len(wantB) == 0 {
		t.Errorf("the cut of both gives %d records; want %d + %d", len(got), len(wantA), len(wantB))
	}
}
