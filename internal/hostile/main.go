// Command hostile writes the hostile captures of issue 9 that measure how
// memory stays bounded (docs/performance-4-13.md), built from scratch with
// internal/pktbuild:
//
//	go run ./internal/hostile flows 1000000 > flows.pcap   # N bare TCP SYNs, each its own connection
//	go run ./internal/hostile holes 100 4 > holes.pcap     # C connections, each holding MiB behind a hole
//	go run ./internal/hostile reverse 5000 > rev.pcap      # one connection, N segments in reverse order
//	go run ./internal/hostile frags 10000 > frags.pcap     # Deltarobot positions, each segment in 5 IPv4 fragments
//
// and those of issue 21, each in its own file (halfmsg.go, ...):
//
//	go run ./internal/hostile halfmsg 400 > half.pcap      # N VRPN connections, each holding all but 8 bytes of a 1 MiB message ("both": both ways)
//	go run ./internal/hostile widelake 64 500000 1000 > wide.pcap  # TYPES VRPN type names, N messages of SIZE random bytes, the types in turn
package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/pktbuild"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: hostile flows N | holes C MIB | reverse N | frags N | halfmsg N [both] | CASE N ...  (pcap on stdout)")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil || n <= 0 || n > 10_000_000 {
		fmt.Fprintln(os.Stderr, "hostile: bad count")
		os.Exit(2)
	}
	bw := bufio.NewWriterSize(os.Stdout, 1<<20)
	w, err := capture.NewPcapWriter(bw, capture.LinkEthernet, true)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		os.Exit(1)
	}
	g := &gen{w: w, t: time.Unix(1_700_000_000, 0)}
	switch os.Args[1] {
	case "flows":
		g.flows(n)
	case "holes":
		mib := 4
		if len(os.Args) > 3 {
			mib, _ = strconv.Atoi(os.Args[3])
		}
		g.holes(n, min(max(mib, 1), 64))
	case "reverse":
		g.reverse(n)
	case "frags":
		g.frags(n)
	case "widelake": // widelake TYPES N SIZE (lake.go)
		m, size := 100_000, 1000
		if len(os.Args) > 3 {
			m, _ = strconv.Atoi(os.Args[3])
		}
		if len(os.Args) > 4 {
			size, _ = strconv.Atoi(os.Args[4])
		}
		g.widelake(n, min(max(m, 1), 10_000_000), min(max(size, 1), 1<<16))
	case "wirenames": // wirenames N LEN (lake.go)
		ln := 8
		if len(os.Args) > 3 {
			ln, _ = strconv.Atoi(os.Args[3])
		}
		g.wirenames(n, min(max(ln, 1), 4096))
	case "halfmsg": // halfmsg N [both] (halfmsg.go)
		g.halfmsg(n, len(os.Args) > 3 && os.Args[3] == "both")
	case "typenames", "vrpnnames": // typenames|vrpnnames C N [LEN] (names.go)
		per, ln := 4096, namesDefaultLen
		if len(os.Args) > 3 {
			per, _ = strconv.Atoi(os.Args[3])
		}
		if len(os.Args) > 4 {
			ln, _ = strconv.Atoi(os.Args[4])
		}
		per, ln = min(max(per, 1), 1<<20), min(max(ln, 1), 4096)
		if os.Args[1] == "typenames" {
			g.typenames(n, per, ln)
		} else {
			g.vrpnnames(n, per, ln)
		}
	default:
		fmt.Fprintln(os.Stderr, "hostile: unknown case", os.Args[1])
		os.Exit(2)
	}
	if err == nil {
		err = g.err
	}
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		os.Exit(1)
	}
}

type gen struct {
	w   *capture.PcapWriter
	t   time.Time
	err error
}

var enc = pktbuild.Encap{Type: capture.LinkEthernet}

func (g *gen) put(f pktbuild.Frame) {
	if g.err != nil {
		return
	}
	g.t = g.t.Add(time.Microsecond)
	g.err = g.w.WritePacket(f.Packet(g.t))
}

func (g *gen) tcp(src, dst netip.AddrPort, t pktbuild.TCP) {
	g.put(enc.Wrap(pktbuild.TCPPacket(src, dst, t).Encode()))
}

// client returns the i-th client address: 10.x.y.z, port 1024 + i%60000.
func client(i int) netip.AddrPort {
	a := [4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}
	return netip.AddrPortFrom(netip.AddrFrom4(a), uint16(1024+i%60000))
}

var server = netip.MustParseAddrPort("192.0.2.1:4000")

func (g *gen) flows(n int) {
	for i := range n {
		g.tcp(client(i), server, pktbuild.TCP{Seq: uint32(i), Flags: pktbuild.SYN})
	}
}

// holes: c connections, each: handshake, then mib MiB of data in 1400-byte
// segments whose first segment is missing, interleaved across connections.
func (g *gen) holes(c, mib int) {
	const seg = 1400
	payload := make([]byte, seg)
	for i := range c {
		g.tcp(client(i), server, pktbuild.TCP{Seq: 0, Flags: pktbuild.SYN})
		g.tcp(server, client(i), pktbuild.TCP{Seq: 0, Ack: 1, Flags: pktbuild.SYN | pktbuild.ACK})
	}
	segs := mib << 20 / seg
	for k := 1; k <= segs; k++ { // segment 0 is the hole
		for i := range c {
			g.tcp(server, client(i), pktbuild.TCP{Seq: uint32(1 + k*seg), Ack: 1, Flags: pktbuild.ACK, Payload: payload})
		}
	}
}

// reverse: one connection with n 100-byte segments sent last first.
func (g *gen) reverse(n int) {
	const seg = 100
	c := client(1)
	g.tcp(c, server, pktbuild.TCP{Seq: 0, Flags: pktbuild.SYN})
	g.tcp(server, c, pktbuild.TCP{Seq: 0, Ack: 1, Flags: pktbuild.SYN | pktbuild.ACK})
	payload := make([]byte, seg)
	for k := n - 1; k >= 0; k-- {
		binary.BigEndian.PutUint32(payload, uint32(k))
		g.tcp(server, c, pktbuild.TCP{Seq: uint32(1 + k*seg), Ack: 1, Flags: pktbuild.ACK, Payload: payload})
	}
}

// frags: a Deltarobot leader sends its handshake and n actuator positions,
// 50 per segment; each IPv4 packet is split into 5 fragments.
func (g *gen) frags(n int) {
	c := client(2)
	g.tcp(c, server, pktbuild.TCP{Seq: 0, Flags: pktbuild.SYN})
	g.tcp(server, c, pktbuild.TCP{Seq: 0, Ack: 1, Flags: pktbuild.SYN | pktbuild.ACK})
	hs := []byte{0x01, 0x30, 'D', 'e', 'l', 't', 'a', 'R', 'V', 'r', 0x02, 0x20, 1, 0, 0, 0}
	pos := []byte{0x03, 0x40, 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40, 0, 0, 0, 0}
	seq := uint32(1)
	send := func(data []byte) {
		ip := pktbuild.TCPPacket(server, c, pktbuild.TCP{Seq: seq, Ack: 1, Flags: pktbuild.ACK | pktbuild.PSH, Payload: data}).Encode()
		seq += uint32(len(data))
		for _, f := range fragment(ip, 5, uint16(seq)) {
			g.put(enc.Wrap(f))
		}
	}
	send(hs)
	for i := 0; i < n; i += 50 {
		var b []byte
		for range min(50, n-i) {
			b = append(b, pos...)
		}
		send(b)
	}
}

// fragment splits the IPv4 packet ip (20-byte header) into k fragments of
// 8-byte-aligned payload, per RFC 791.
func fragment(ip []byte, k int, id uint16) [][]byte {
	hdr, body := ip[:20], ip[20:]
	step := (len(body)/k + 7) &^ 7
	var out [][]byte
	for off := 0; off < len(body); off += step {
		end := min(off+step, len(body))
		f := make([]byte, 20+end-off)
		copy(f, hdr)
		copy(f[20:], body[off:end])
		binary.BigEndian.PutUint16(f[2:], uint16(len(f)))
		binary.BigEndian.PutUint16(f[4:], id)
		flags := uint16(off / 8)
		if end < len(body) {
			flags |= 0x2000 // more fragments
		}
		binary.BigEndian.PutUint16(f[6:], flags)
		f[10], f[11] = 0, 0
		binary.BigEndian.PutUint16(f[10:], pktbuild.Checksum(f[:20]))
		out = append(out, f)
	}
	return out
}
