package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/pktbuild"
)

// A real connection's data, rebuilt with pktbuild (independently of the
// decoder) into captures of what real stacks and capture points give:
// segments that TCP segmentation offload cut only after the capture
// (IPv4 total length 0), a forged reset outside the window.

// tcpData is the data segments of the one TCP connection of a
// little-endian microsecond Ethernet/IPv4 pcap, in order, read here by
// hand: who sent each (the connection's client: the sender of the first
// SYN) and its payload.
type tcpData struct {
	client, server netip.AddrPort
	from           []pktbuild.Side
	data           [][]byte
}

func readTCPData(t *testing.T, path string) *tcpData {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, recs := splitPcap(t, raw)
	d := &tcpData{}
	for _, r := range recs {
		f := r[16:]
		if len(f) < 34 || binary.BigEndian.Uint16(f[12:14]) != 0x0800 || f[23] != 6 {
			t.Fatalf("%s: not Ethernet, IPv4, TCP", path)
		}
		ip := f[14:]
		ihl, total := int(ip[0]&15)*4, int(binary.BigEndian.Uint16(ip[2:4]))
		tcp := ip[ihl:total]
		src := netip.AddrPortFrom(netip.AddrFrom4([4]byte(ip[12:16])), binary.BigEndian.Uint16(tcp[0:2]))
		dst := netip.AddrPortFrom(netip.AddrFrom4([4]byte(ip[16:20])), binary.BigEndian.Uint16(tcp[2:4]))
		if !d.client.IsValid() {
			if tcp[13]&0x12 != 0x02 {
				t.Fatalf("%s: the first packet is not a SYN", path)
			}
			d.client, d.server = src, dst
		}
		payload := tcp[int(tcp[12]>>4)*4:]
		if len(payload) == 0 {
			continue
		}
		side := pktbuild.Client
		if src == d.server {
			side = pktbuild.Server
		}
		d.from = append(d.from, side)
		d.data = append(d.data, payload)
	}
	return d
}

// writePcap writes packets as a pcap (microseconds) to a new file.
func writePcap(t *testing.T, name string, pkts []*capture.Packet) string {
	t.Helper()
	var buf bytes.Buffer
	w, err := capture.NewPcapWriter(&buf, capture.LinkEthernet, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkts {
		if err := w.WritePacket(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// recordsWithoutTime is dissect -o json of path, each record without its
// time, frame and round trip (the rebuilt captures have their own
// packets), keys sorted.
func recordsWithoutTime(t *testing.T, path string) []string {
	t.Helper()
	stdout, stderr, code := cli(t, "-o", "json", "--no-summary", path)
	if code != exitOK {
		t.Fatalf("%s: exit %d: %s", path, code, stderr)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "time")
		delete(m, "frame")
		if f, ok := m["fields"].(map[string]any); ok {
			delete(f, "rtt_ms") // from the capture times too
		}
		b, _ := json.Marshal(m)
		out = append(out, string(b))
	}
	return out
}

// zeroIPv4Length sets the IPv4 total length of an Ethernet frame to 0,
// the header checksum made again, as a capture on the sending host shows
// a segment larger than the MSS that the NIC cuts (TSO, BIG TCP).
func zeroIPv4Length(p *capture.Packet) {
	ip := p.Data[14:]
	ihl := int(ip[0]&15) * 4
	binary.BigEndian.PutUint16(ip[2:4], 0)
	binary.BigEndian.PutUint16(ip[10:12], 0)
	binary.BigEndian.PutUint16(ip[10:12], pktbuild.Checksum(ip[:ihl]))
}

// rebuild makes d's connection again with pktbuild: a handshake, each
// data segment of d (up to merge consecutive ones of the server in one,
// sent with IPv4 total length 0 as TSO does, when merge > 1) acknowledged
// by the peer, after the i-th the segments extra(c, i) gives (nil: none),
// then FINs. It returns the packets and the number of merged segments.
func rebuild(d *tcpData, merge int, extra func(c *pktbuild.Conn, i int) []pktbuild.Segment) ([]*capture.Packet, int) {
	c := pktbuild.NewConn(d.client, d.server, 1000, 5000)
	segs := c.Handshake()
	tso := make([]bool, len(segs)) // per segment: sent with total length 0
	n := 0
	for i := 0; i < len(d.data); {
		from := d.from[i]
		var data []byte
		j := i
		for ; j < len(d.data) && j < i+merge && d.from[j] == from; j++ {
			data = append(data, d.data[j]...)
			if from == pktbuild.Client {
				j++
				break
			}
		}
		segs = append(segs, c.Send(from, data), c.Ack(from.Other()))
		big := j-i > 1
		if big {
			n++
		}
		tso = append(tso, big, false)
		if extra != nil {
			more := extra(c, i)
			segs = append(segs, more...)
			tso = append(tso, make([]bool, len(more))...)
		}
		i = j
	}
	segs = append(segs, c.Fin(pktbuild.Client), c.Fin(pktbuild.Server), c.Ack(pktbuild.Client))
	tso = append(tso, false, false, false)
	pkts := pktbuild.Packets(pktbuild.Encap{Type: capture.LinkEthernet}, time.Unix(1_700_000_000, 0), time.Millisecond, segs...)
	for i, p := range pkts {
		if tso[i] {
			zeroIPv4Length(p)
		}
	}
	return pkts, n
}

// TestTSOCapture: the real VRPN connection of vrpn_tcp_only.pcap, its
// server's data sent in segments of up to four of the original ones with
// IPv4 total length 0 (TSO, captured on the sending host), decodes to
// the records of the original, every message, no gap; the summary counts
// the TSO segments. Before, each such segment was malformed and its
// bytes "never captured".
func TestTSOCapture(t *testing.T) {
	orig := filepath.Join(pcapDir, "vrpn_tcp_only.pcap")
	d := readTCPData(t, orig)
	pkts, n := rebuild(d, 4, nil)
	if n < 3 {
		t.Fatalf("only %d TSO segments: a useless case", n)
	}
	in := writePcap(t, "tso.pcap", pkts)
	want, got := recordsWithoutTime(t, orig), recordsWithoutTime(t, in)
	sameRecords(t, "the TSO capture", got, want)
	_, stderr, _ := cli(t, "-q", in)
	if !regexp.MustCompile(`(?m)^gaps: +0 `).MatchString(stderr) || strings.Contains(stderr, "malformed") ||
		!regexp.MustCompile(`\b`+regexp.QuoteMeta(strconv.Itoa(n))+` TSO segments`).MatchString(stderr) {
		t.Errorf("summary:\n%s\nwant no gap, nothing malformed, %d TSO segments", stderr, n)
	}
}

// sameRecords fails the test at the first record of got that is not
// want's.
func sameRecords(t *testing.T, what string, got, want []string) {
	t.Helper()
	for i := range max(len(got), len(want)) {
		if i >= len(got) || i >= len(want) || got[i] != want[i] {
			g, w := "(none)", "(none)"
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			t.Errorf("%s gives %d records, want %d; record %d:\n%s\nwant\n%s", what, len(got), len(want), i, g, w)
			return
		}
	}
}

// TestResetOutsideWindow: the real VRPN connection of vrpn_tcp_only.pcap
// rebuilt, its client advertising a window of 8192 bytes, and after half
// of its data a reset forged in the server's name, 30,000 past the
// server's next sequence number: within 64 KiB, outside the window the
// client advertised. It is ignored and counted (RFC 5961), and every
// record of the original comes out, every message of the client too.
// Before, the connection ended there.
func TestResetOutsideWindow(t *testing.T) {
	orig := filepath.Join(pcapDir, "vrpn_tcp_only.pcap")
	d := readTCPData(t, orig)
	pkts, _ := rebuild(d, 1, func(c *pktbuild.Conn, i int) []pktbuild.Segment {
		if i != len(d.data)/2 {
			return nil
		}
		return []pktbuild.Segment{c.Segment(pktbuild.Server, pktbuild.RST, c.Next[pktbuild.Server]+30000, nil)}
	})
	for _, p := range pkts {
		// The client's window: 8192 (the TCP header's field, bytes 14-15
		// after the Ethernet and IPv4 headers), checksum made again.
		ip := p.Data[14:]
		tcp := ip[int(ip[0]&15)*4 : binary.BigEndian.Uint16(ip[2:4])]
		if netip.AddrFrom4([4]byte(ip[12:16])) == d.client.Addr() && binary.BigEndian.Uint16(tcp[0:2]) == d.client.Port() {
			binary.BigEndian.PutUint16(tcp[14:16], 8192)
			binary.BigEndian.PutUint16(tcp[16:18], 0)
			binary.BigEndian.PutUint16(tcp[16:18], tcpChecksum(ip, tcp))
		}
	}
	in := writePcap(t, "rst.pcap", pkts)
	want, got := recordsWithoutTime(t, orig), recordsWithoutTime(t, in)
	sameRecords(t, "the capture with a reset outside the window", got, want)
	clientMsgs := 0
	for _, r := range got {
		if strings.Contains(r, `"src":"`+d.client.String()+`"`) {
			clientMsgs++
		}
	}
	_, stderr, _ := cli(t, "-q", in)
	if clientMsgs < 10 || !strings.Contains(stderr, "1 TCP resets outside the window") || strings.Contains(stderr, "after FIN/RST") {
		t.Errorf("%d client messages; summary:\n%s\nwant at least 10, one reset ignored, no bytes after it", clientMsgs, stderr)
	}
}

// tcpChecksum is the TCP checksum of segment tcp in IPv4 packet ip.
func tcpChecksum(ip, tcp []byte) uint16 {
	pseudo := append(append([]byte(nil), ip[12:20]...), 0, 6, byte(len(tcp)>>8), byte(len(tcp)))
	return pktbuild.Checksum(pseudo, tcp)
}
