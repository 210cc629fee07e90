package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/duckdb"
)

// The example protocol file of docs/your-protocol.md from the command
// line: decoded from both captures (records also checked by
// TestSchemaValidatesEveryRecord and the MCAP tests, which run it),
// checked by 'protocols --check', and tapped live on a serial link.

const exampleProtocol = "../../docs/examples/acme-servo.yaml"

func TestProtocolFileRun(t *testing.T) {
	out, errOut, code := cli(t, "--protocol", exampleProtocol, "-o", "json", "--no-summary", filepath.Join(pcapDir, "acme", "acme_servo_tcp.pcap"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	recs := parseJSONL(t, out)
	tiling(t, recs)
	count := map[string]int{}
	for _, r := range recs {
		count[r.Type]++
	}
	// pcaps/acme/acme_servo.expect.json: 14 messages, one gap, three skipped runs
	if count["gap"] != 1 || count["skipped"] != 3 || len(recs)-4 != 14 || count["heartbeat"] != 4 {
		t.Errorf("records %v", count)
	}
	// without the file, the bytes are not decoded
	out, _, _ = cli(t, "-o", "json", "--no-summary", filepath.Join(pcapDir, "acme", "acme_servo_tcp.pcap"))
	if strings.Contains(out, `"heartbeat"`) {
		t.Error("decoded without --protocol")
	}
}

func TestProtocolsCheck(t *testing.T) {
	out, errOut, code := cli(t, "protocols", "--check", exampleProtocol)
	if code != 0 || !strings.Contains(out, "protocol acme-servo, 6 record types") || !strings.Contains(out, "acme-servo.joints[].position") {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
	_, errOut, code = cli(t, "protocols", "--check", "../../dissect/spec/testdata/hostile/crc_width.yaml")
	if code == 0 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, "crc_width.yaml:6:18: frame.check.crc.width: 4096") {
		t.Errorf("exit %d: %q", code, errOut)
	}
	// a name or a default port already taken, with its place
	dir0 := t.TempDir()
	b0, _ := os.ReadFile(exampleProtocol)
	clash := filepath.Join(dir0, "clash.yaml")
	os.WriteFile(clash, []byte(strings.Replace(string(b0), "ports: [tcp/5600]", "ports: [tcp/3883]", 1)), 0o644)
	for _, args := range [][]string{{"protocols", "--check", clash}, {"--protocol", clash, filepath.Join(pcapDir, "acme", "acme_servo_tcp.pcap")}} {
		_, errOut, code = cli(t, args...)
		if code == 0 || !strings.Contains(errOut, "clash.yaml:16:10: meta.ports: tcp/3883 is already a default port of vrpn") {
			t.Errorf("%v: exit %d: %q", args, code, errOut)
		}
	}
	// the file's protocol in the schema, and the user's directory read
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	os.MkdirAll(filepath.Join(dir, "dissect", "protocols"), 0o755)
	b, _ := os.ReadFile(exampleProtocol)
	os.WriteFile(filepath.Join(dir, "dissect", "protocols", "acme.yaml"), b, 0o644)
	out, errOut, code = cli(t, "protocols", "--schema", "acme-servo")
	if code != 0 || strings.Count(out, `"proto":"acme-servo"`) != 6 {
		t.Errorf("exit %d: %s%s", code, out, errOut)
	}
}

// TestProtocolFileSerialTap taps a pty link with the example file: the
// reads of the serial capture (pcaps/acme/gen.py's), written to the two
// wires, come out as the records its truth file lists for each direction.
func TestProtocolFileSerialTap(t *testing.T) {
	hostWire, devWire := wire(t), wire(t)
	r := startLive(t, "serial", "--protocol", exampleProtocol, "-o", "json", "--no-summary", hostWire.Path, devWire.Path)
	waitFor(t, "the tap to start", func() bool { return strings.Contains(r.stderr.String(), "Ctrl-C to stop") })
	acmeReplay(t, func(host bool, b []byte) {
		w := devWire
		if host {
			w = hostWire
		}
		write(t, w.Master, b)
	})
	want := acmeExpect(t, "acme_servo_serial.pcapng")
	waitLines(t, &r.stdout, len(want[0])+len(want[1]))
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	acmeCompare(t, r.stdout.String(), "host", want)
}

// acmeReplay hands each read of the example's serial capture, in order,
// to write: host, the host's (outbound) reads; else the device's.
func acmeReplay(t *testing.T, write func(host bool, b []byte)) {
	t.Helper()
	src, err := capture.OpenFile(filepath.Join(pcapDir, "acme", "acme_servo_serial.pcapng"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for {
		p, err := src.Next()
		if err != nil {
			break
		}
		write(p.Direction == capture.DirOutbound, p.Data)
	}
}

// acmeCompare checks the JSON records out, which tile their directions,
// against want (acmeExpect): host is the src of the host's records.
func acmeCompare(t *testing.T, out, host string, want [2][]string) {
	t.Helper()
	recs := parseJSONL(t, out)
	tiling(t, recs)
	var got [2][]string
	for _, rec := range recs {
		d := 1
		if rec.Src == host {
			d = 0
		}
		got[d] = append(got[d], fmt.Sprintf("%s@%d+%d", rec.Type, *rec.Offset, *rec.Length))
	}
	for d := range want {
		if strings.Join(got[d], " ") != strings.Join(want[d], " ") {
			t.Errorf("direction %d:\n got %v\nwant %v", d, got[d], want[d])
		}
	}
}

// acmeExpect returns the records pcaps/acme/acme_servo.expect.json lists
// for a capture, per direction, as TYPE@OFFSET+LENGTH.
func acmeExpect(t *testing.T, name string) [2][]string {
	b, err := os.ReadFile(filepath.Join(pcapDir, "acme", "acme_servo.expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	type rec struct {
		Type           string
		Offset, Length int64
	}
	var e struct {
		Captures map[string]struct{ Host, Controller []rec }
	}
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	c := e.Captures[name]
	var out [2][]string
	for d, rs := range [2][]rec{c.Host, c.Controller} {
		for _, r := range rs {
			out[d] = append(out[d], fmt.Sprintf("%s@%d+%d", r.Type, r.Offset, r.Length))
		}
	}
	if len(out[0]) == 0 || len(out[1]) == 0 {
		t.Fatalf("no records for %s in the truth file", name)
	}
	return out
}

// TestProtocolFileParquet writes both captures of the example into a
// lake: every record in its typed table (no extra_json), as many rows as
// -o json records, the scaled fields as doubles and the joints as a list
// of structs.
func TestProtocolFileParquet(t *testing.T) {
	if err := duckdb.Available(); err != nil {
		t.Skip(err.Error())
	}
	var caps []shippedCapture
	for _, f := range []string{"acme_servo_serial.pcapng", "acme_servo_tcp.pcap"} {
		caps = append(caps, shippedCapture{filepath.Join(pcapDir, "acme", f), []string{"--protocol", exampleProtocol}})
	}
	lake := t.TempDir()
	checkLakeMatchesJSON(t, lake, caps)
	pq := filepath.Join(lake, "proto=acme-servo", "type=status", "*.parquet")
	_, rows := duckdb.Query(t, "SELECT typeof(joints), typeof(estop), count(*)::VARCHAR FROM read_parquet("+duckdb.Quote(pq)+", hive_partitioning=true) GROUP BY ALL")
	if len(rows) != 1 || !strings.Contains(fmt.Sprint(rows[0][0]), "\"position\" DOUBLE") || !strings.HasSuffix(fmt.Sprint(rows[0][0]), ")[]") || rows[0][1] != "UBIGINT" || rows[0][2] != "3" {
		t.Errorf("status columns: %v", rows)
	}
}

// TestProtocolFileLive captures the example protocol live on lo: the
// reads of the serial capture, sent over a TCP connection (the host's as
// the client's bytes, the device's as the server's), come out as the
// records the truth file lists for each direction of that capture.
func TestProtocolFileLive(t *testing.T) {
	lvNeedCapture(t)
	ln, port := lvListenTCP(t)
	r := lvStart(t, "-i", "lo", "--protocol", exampleProtocol, "-o", "json", "--no-summary",
		"-f", fmt.Sprintf("tcp port %d", port), "-d", fmt.Sprintf("tcp.port==%d,acme-servo", port))
	client, server := lvTcpPair(t, ln)
	acmeReplay(t, func(host bool, b []byte) {
		c := server
		if host {
			c = client
		}
		lvWriteAll(t, c, b)
	})
	want := acmeExpect(t, "acme_servo_serial.pcapng")
	lvWaitFor(t, r, "the records of both directions", func() bool {
		return strings.Count(r.stdout.String(), "\n") >= len(want[0])+len(want[1])
	})
	lvInterrupt(t)
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit %d after SIGINT\nstderr:\n%s", code, r.stderr.String())
	}
	acmeCompare(t, r.stdout.String(), client.LocalAddr().String(), want)
}
