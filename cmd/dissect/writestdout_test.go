package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteToStdout: -w - writes to stdout exactly the file -w FILE
// writes (a copy, and a cut with -Y), as tshark -w - does; -F pcap writes
// a classic pcap (nanosecond magic) holding the same packets, which
// tcpdump reads when it is installed; -F pcap refuses a second link
// type; -F of another format is a usage error.
func TestWriteToStdout(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ in, filter string }{
		{"deltarobot_session.pcap", ""}, {"deltarobot_session.pcap", `type == "pong"`}, {"vrpn_udp_tcp.pcapng", "udp"},
	} {
		args := []string{"-r", filepath.Join(pcapDir, c.in)}
		if c.filter != "" {
			args = append(args, "-Y", c.filter)
		}
		file := filepath.Join(dir, "cut.pcapng")
		if _, stderr, code := cli(t, append(args, "-w", file)...); code != exitOK {
			t.Fatalf("%v -w FILE: exit %d: %s", args, code, stderr)
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		got, stderr, code := cli(t, append(args, "-w", "-")...)
		if code != exitOK || got != string(want) {
			t.Errorf("%v -w -: exit %d, %d bytes on stdout, the file has %d: %s", args, code, len(got), len(want), stderr)
		}
		_, back, _ := cli(t, "-q", file)
		n := summaryPackets(t, back)

		pcap, stderr, code := cli(t, append(args, "-w", "-", "-F", "pcap")...)
		if code != exitOK || len(pcap) < 24 || binary.LittleEndian.Uint32([]byte(pcap)) != 0xa1b23c4d {
			t.Fatalf("%v -F pcap: exit %d, %d bytes: %s", args, code, len(pcap), stderr)
		}
		pf := filepath.Join(dir, "cut.pcap")
		if err := os.WriteFile(pf, []byte(pcap), 0o644); err != nil {
			t.Fatal(err)
		}
		_, back, _ = cli(t, "-q", pf)
		if m := summaryPackets(t, back); m != n {
			t.Errorf("%v: -F pcap holds %d packets, -F pcapng %d", args, m, n)
		}
		if _, err := exec.LookPath("tcpdump"); err == nil {
			out, err := exec.Command("tcpdump", "-nn", "-r", pf).Output()
			if lines := bytes.Count(out, []byte("\n")); err != nil || lines != n {
				t.Errorf("%v: tcpdump read %d packets of -F pcap (%v), want %d", args, lines, err, n)
			}
		}
	}
	mixed := []string{"-r", filepath.Join(pcapDir, "deltarobot_session.pcap"), "-r", filepath.Join(pcapDir, "deltarobot_sll2.pcap"), "-w", filepath.Join(dir, "mixed.pcap"), "-F", "pcap"}
	if _, stderr, code := cli(t, mixed...); code == exitOK || !strings.Contains(stderr, "-F pcapng") {
		t.Errorf("two link types in -F pcap: exit %d: %s", code, stderr)
	}
	if _, stderr, code := cli(t, "-r", filepath.Join(pcapDir, "deltarobot_session.pcap"), "-w", "-", "-F", "pcapx"); code != 2 || !strings.Contains(stderr, "want pcapng or pcap") {
		t.Errorf("-F pcapx: exit %d: %s", code, stderr)
	}
}
