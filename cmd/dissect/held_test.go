package main

import (
	"encoding/binary"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/pktbuild"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64 // 0: an error
	}{
		{"1", 1}, {"4096", 4096}, {"64M", 64 << 20}, {"64MiB", 64 << 20}, {"64mb", 64 << 20},
		{"512k", 512 << 10}, {"2G", 2 << 30}, {"1KiB", 1024},
		{"", 0}, {"0", 0}, {"-1M", 0}, {"M", 0}, {"1.5M", 0}, {"2T", 0}, {"1025G", 0}, {"64 X", 0},
	} {
		got, err := parseSize(tc.in)
		if (err != nil) != (tc.want == 0) || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for n, want := range map[int64]string{64 << 20: "64M", 1536 << 10: "1536K", 1000: "1000", 3 << 30: "3G"} {
		if got := sizeString(n); got != want {
			t.Errorf("sizeString(%d) = %q, want %q", n, got, want)
		}
	}
}

// writeHalfMessages writes the shape of `hostile halfmsg n`: n VRPN
// connections, each announcing a message of 1 MiB − 64 bytes and sending
// all but its last 8 bytes.
func writeHalfMessages(t *testing.T, path string, n int) {
	t.Helper()
	const length, seg = 1<<20 - 64, 32 << 10
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := capture.NewPcapWriter(f, capture.LinkEthernet, true)
	if err != nil {
		t.Fatal(err)
	}
	server := netip.MustParseAddrPort("192.0.2.1:3883")
	enc := pktbuild.Encap{Type: capture.LinkEthernet}
	ts := time.Unix(1_700_000_000, 0)
	put := func(src, dst netip.AddrPort, tcp pktbuild.TCP) {
		ts = ts.Add(time.Microsecond)
		if err := w.WritePacket(enc.Wrap(pktbuild.TCPPacket(src, dst, tcp).Encode()).Packet(ts)); err != nil {
			t.Fatal(err)
		}
	}
	data := append([]byte("vrpn: ver. 07.38  0\x00\x00\x00\x00\x00"), make([]byte, length-8)...)
	binary.BigEndian.PutUint32(data[24:], length)
	for i := range n {
		c := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(i)}), uint16(1024+i))
		put(c, server, pktbuild.TCP{Seq: 0, Flags: pktbuild.SYN})
		put(server, c, pktbuild.TCP{Seq: 0, Ack: 1, Flags: pktbuild.SYN | pktbuild.ACK})
		for off := 0; off < len(data); off += seg {
			put(c, server, pktbuild.TCP{Seq: uint32(1 + off), Ack: 1, Flags: pktbuild.ACK, Payload: data[off:min(off+seg, len(data))]})
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

// --max-held-messages sets the budget: 3 unfinished messages of 1 MiB fit
// in the default (64 MiB) and nothing is dropped; under 1.5 MiB at most one
// is held at a time, so the older ones are dropped, named and counted.
func TestMaxHeldMessagesFlag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "half.pcap")
	writeHalfMessages(t, path, 3)
	out, stderr, code := cli(t, "-o", "json", path)
	if code != 0 || strings.Contains(out, "held-message budget") || strings.Contains(stderr, "held-message budget") {
		t.Fatalf("default budget: exit %d, a message dropped to the budget:\n%s", code, stderr)
	}
	out, stderr, code = cli(t, "-o", "json", "--max-held-messages", "1536K", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	recs := parseJSONL(t, out)
	tiling(t, recs) // every byte in one record
	dropped := 0
	for _, r := range recs {
		if r.Type == "skipped" && strings.Contains(string(r.Fields), "held-message budget of 1572864 bytes reached") {
			dropped++
		}
	}
	if dropped < 2 || !strings.Contains(stderr, "unfinished messages dropped") {
		t.Errorf("%d skipped records name the budget (want at least 2: at most one message of 1 MiB fits), summary:\n%s", dropped, stderr)
	}
	if _, stderr, code := cli(t, "--max-held-messages", "lots", path); code != exitUsage || !strings.Contains(stderr, "max-held-messages") {
		t.Errorf("--max-held-messages lots: exit %d, %q", code, stderr)
	}
	if out, _, _ := cli(t, "read", "--help"); !strings.Contains(out, "--max-held-messages SIZE") {
		t.Errorf("read --help does not document --max-held-messages SIZE")
	}
}
