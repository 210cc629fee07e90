package main

import (
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/pktbuild"
)

// --max-types sets the summary's cap on distinct types: `hostile
// wirenames 30 8` names 30 VRPN types and sends one message of each, besides
// the declared type_description and cookie: 32 distinct types, none
// folded by default; under --max-types 10, 10 rows stay and the other 22
// types are counted as "(other types)", on every path that counts (records
// to a sink, -q on one goroutine and on two).
func TestMaxTypesFlag(t *testing.T) {
	capture := hostileCapture(t, "wirenames", "30", "8")
	if _, stderr, code := cli(t, "-q", capture); code != 0 || strings.Contains(stderr, "(other types)") {
		t.Fatalf("default: exit %d, types folded:\n%s", code, stderr)
	}
	for _, mode := range [][]string{{"-o", "json"}, {"-q", "--threads", "1"}, {"-q", "--threads", "2"}} {
		_, stderr, code := cli(t, append(mode, "--max-types", "10", capture)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", mode, code, stderr)
		}
		if !strings.Contains(stderr, "(other types) (22 types)") || !strings.Contains(stderr, "22 distinct types past the type table's cap") {
			t.Errorf("%v --max-types 10: want 22 types folded, summary:\n%s", mode, stderr)
		}
	}
	for _, bad := range []string{"0", "-3", "many"} {
		if _, stderr, code := cli(t, "--max-types", bad, capture); code != exitUsage || !strings.Contains(stderr, "max-types") {
			t.Errorf("--max-types %s: exit %d, %q", bad, code, stderr)
		}
	}
}

// --max-vrpn-names sets the VRPN name budget: `hostile vrpnnames 1 30 8`
// describes 30 senders and 30 types of 8 bytes on one connection, 60
// names of 72 bytes each (a name counts 64 more): all fit in the default
// 16 MiB; in 1 KiB, 14 fit (1024/72) and 46 are refused, each with a
// warning and counted in one note.
func TestMaxVRPNNamesFlag(t *testing.T) {
	capture := hostileCapture(t, "vrpnnames", "1", "30", "8")
	if _, stderr, code := cli(t, "-q", capture); code != 0 || strings.Contains(stderr, "not recorded") {
		t.Fatalf("default: exit %d, names refused:\n%s", code, stderr)
	}
	_, stderr, code := cli(t, "-q", "--max-vrpn-names", "1K", capture)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "vrpn: 46 names not recorded: the name tables of all connections held their bound (1 KiB)") {
		t.Errorf("--max-vrpn-names 1K: want 46 names refused, summary:\n%s", stderr)
	}
	for _, bad := range []string{"0", "lots"} {
		if _, stderr, code := cli(t, "--max-vrpn-names", bad, capture); code != exitUsage || !strings.Contains(stderr, "max-vrpn-names") {
			t.Errorf("--max-vrpn-names %s: exit %d, %q", bad, code, stderr)
		}
	}
}

// writeOutOfOrder writes one TCP connection whose first 1,000 bytes of
// data come after the 4,000 that follow them.
func writeOutOfOrder(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := capture.NewPcapWriter(f, capture.LinkEthernet, true)
	if err != nil {
		t.Fatal(err)
	}
	client, server := netip.MustParseAddrPort("192.0.2.2:40000"), netip.MustParseAddrPort("192.0.2.1:4999")
	enc := pktbuild.Encap{Type: capture.LinkEthernet}
	ts := time.Unix(1_700_000_000, 0)
	put := func(src, dst netip.AddrPort, tcp pktbuild.TCP) {
		ts = ts.Add(time.Microsecond)
		if err := w.WritePacket(enc.Wrap(pktbuild.TCPPacket(src, dst, tcp).Encode()).Packet(ts)); err != nil {
			t.Fatal(err)
		}
	}
	data := make([]byte, 5000)
	for i := range data {
		data[i] = byte('a' + i%26)
	}
	put(client, server, pktbuild.TCP{Seq: 0, Flags: pktbuild.SYN})
	put(server, client, pktbuild.TCP{Seq: 0, Ack: 1, Flags: pktbuild.SYN | pktbuild.ACK})
	for off := 1000; off < len(data); off += 1000 {
		put(client, server, pktbuild.TCP{Seq: uint32(1 + off), Ack: 1, Flags: pktbuild.ACK, Payload: data[off : off+1000]})
	}
	put(client, server, pktbuild.TCP{Seq: 1, Ack: 1, Flags: pktbuild.ACK, Payload: data[:1000]})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

// --max-out-of-order sets reassembly's bound on held out-of-order bytes:
// 4,000 bytes waiting for the first 1,000 fit in the default (16 MiB, 4
// per direction) and nothing is lost; under 2K (512 bytes per direction)
// the first held segment (1,000 bytes) is already past it, so the hole
// before it is declared lost: a gap.
func TestMaxOutOfOrderFlag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ooo.pcap")
	writeOutOfOrder(t, path)
	if _, stderr, code := cli(t, "-q", path); code != 0 || !strings.Contains(stderr, "gaps:     0") {
		t.Fatalf("default: exit %d, want no gap:\n%s", code, stderr)
	}
	_, stderr, code := cli(t, "-q", "--max-out-of-order", "2K", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "gaps:     1 (1000 bytes never captured)") {
		t.Errorf("--max-out-of-order 2K: want the 1,000-byte hole lost as one gap, summary:\n%s", stderr)
	}
	if _, stderr, code := cli(t, "--max-out-of-order", "-1", path); code != exitUsage || !strings.Contains(stderr, "max-out-of-order") {
		t.Errorf("--max-out-of-order -1: exit %d, %q", code, stderr)
	}
	out, _, _ := cli(t, "read", "--help")
	for _, f := range []string{"--max-types N", "--max-vrpn-names SIZE", "--max-out-of-order SIZE", "--max-stats-memory SIZE"} {
		if !strings.Contains(out, f) {
			t.Errorf("read --help does not document %s", f)
		}
	}
}

// --max-stats-memory scales -z rate's bounds: `hostile wirenames 30 8`
// makes 32 rate keys on one stream (30 wire types, type_description,
// cookie), all their own rows by default. 4K is 1/7168 of the default
// 28 MiB, so at most 65,536 × 4096 / 28 MiB = 9 keys (and about 2.3 KB of
// their strings, some 9 keys of ~250 bytes): the other 23 messages are
// added up in "(other)".
func TestMaxStatsMemoryFlag(t *testing.T) {
	capture := hostileCapture(t, "wirenames", "30", "8")
	out, stderr, code := cli(t, "-q", "-z", "rate", capture)
	if code != 0 || !strings.Contains(out, "type_description") || strings.Contains(out, "(other)") {
		t.Fatalf("default: exit %d, keys added up:\n%s%s", code, out, stderr)
	}
	out, stderr, code = cli(t, "-q", "-z", "rate", "--max-stats-memory", "4K", capture)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	other := regexp.MustCompile(`\(other\)\s+(\d+)\s`).FindStringSubmatch(out)
	if other == nil || other[1] != "23" {
		t.Errorf("--max-stats-memory 4K: want 23 messages in (other), -z rate:\n%s", out)
	}
	if _, stderr, code := cli(t, "--max-stats-memory", "0", capture); code != exitUsage || !strings.Contains(stderr, "max-stats-memory") {
		t.Errorf("--max-stats-memory 0: exit %d, %q", code, stderr)
	}
}

// Raising a bound raises the run's soft memory limit by twice as much, as
// --max-held-messages does (memlimit.go): 16 MiB more VRPN names and
// 1,024 more type rows (400 bytes each) add 2 × (16 MiB + 400 KiB).
func TestLimitsRaiseMemoryLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	t.Setenv("GOMEMLIMIT", "")
	capture := filepath.Join(pcapDir, "vrpn_tcp_only.pcap")
	if _, errOut, code := cli(t, "-q", "--max-vrpn-names", "32M", "--max-types", "2048", capture); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got, want := debug.SetMemoryLimit(-1), int64(160<<20+2*(16<<20+1024*400)); got != want {
		t.Errorf("limit %d, want %d", got, want)
	}
}
