package reassembly

import (
	"reflect"
	"testing"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/pktbuild"
)

func TestOtherAndMalformed(t *testing.T) {
	good := pktbuild.TCPPacket(cli4, srv4, pktbuild.TCP{Seq: 1, Flags: pktbuild.ACK, Payload: []byte("x")}).Encode()
	mod := func(b []byte, f func([]byte)) []byte {
		b = append([]byte(nil), b...)
		f(b)
		return b
	}
	udp := pktbuild.UDPPacket(cli4, srv4, []byte("abc")).Encode()
	v6 := pktbuild.IP{Src: cli6.Addr(), Dst: srv6.Addr(), Proto: pktbuild.ProtoUDP, HopByHop: true,
		Payload: pktbuild.UDP{SrcPort: 1, DstPort: 2}.Encode(cli6.Addr(), srv6.Addr())}.Encode()
	cases := []struct {
		name  string
		lt    capture.LinkType
		data  []byte
		other string // the Stats.Other name; "" for malformed
	}{
		{"short ethernet", capture.LinkEthernet, make([]byte, 13), ""},
		{"ethernet llc", capture.LinkEthernet, append(make([]byte, 12), 0x00, 0x2e), "802.3 LLC frames"},
		{"ethernet empty vlan", capture.LinkEthernet, append(make([]byte, 12), 0x81, 0x00, 0, 1), ""},
		{"too many vlan tags", capture.LinkEthernet, append(make([]byte, 12),
			0x81, 0, 0, 1, 0x81, 0, 0, 1, 0x81, 0, 0, 1, 0x81, 0, 0, 1, 0x81, 0, 0, 1, 0x81, 0, 0, 1, 0x81, 0, 0, 1, 0x81, 0, 0, 1, 0x81, 0, 0, 1, 0x81, 0, 0, 1, 0x08, 0), ""},
		{"short sll", capture.LinkLinuxSLL, make([]byte, 15), ""},
		{"short sll2", capture.LinkLinuxSLL2, make([]byte, 19), ""},
		{"empty raw", capture.LinkRaw, nil, ""},
		{"raw version 5", capture.LinkRaw, mod(good, func(b []byte) { b[0] = 0x55 }), ""},
		{"ipv6 link with ipv4", capture.LinkIPv6, good, ""},
		{"short null", capture.LinkNull, []byte{2, 0}, ""},
		{"null unknown family", capture.LinkNull, append([]byte{7, 0, 0, 0}, good...), "address family 7"},
		{"loop little-endian family", capture.LinkLoop, append([]byte{2, 0, 0, 0}, good...), "address family 33554432"},
		{"unknown link type", 105, good, "link type 105"},
		{"ipv4 ihl 4", capture.LinkRaw, mod(good, func(b []byte) { b[0] = 0x44 }), ""},
		{"ipv4 total < ihl", capture.LinkRaw, mod(good, func(b []byte) { b[2], b[3] = 0, 19 }), ""},
		{"ipv4 header cut", capture.LinkRaw, good[:19], ""},
		{"tcp data offset 4", capture.LinkRaw, mod(good, func(b []byte) { b[20+12] = 0x40 }), ""},
		{"tcp data offset past end", capture.LinkRaw, mod(good, func(b []byte) { b[20+12] = 0xf0 }), ""},
		{"udp length 7", capture.LinkRaw, mod(udp, func(b []byte) { b[25] = 7 }), ""},
		{"udp length beyond ip", capture.LinkRaw, mod(udp, func(b []byte) { b[25] = 12 }), ""},
		{"ipv6 hop-by-hop overrun", capture.LinkRaw, mod(v6, func(b []byte) { b[41] = 9 }), ""},
		{"ipv6 no next header", capture.LinkRaw, mod(v6, func(b []byte) { b[40] = 59 }), "IPv6 no next header"},
		{"ipv6 short", capture.LinkRaw, v6[:39], ""},
		{"icmp", capture.LinkRaw, pktbuild.ICMPEcho(cli4.Addr(), srv4.Addr(), 1, 2).Encode(), "ICMP"},
		// Whole frames (Length = len(Data)) whose IP header declares more
		// than they hold: the length lies.
		{"ipv4 total past a whole frame", capture.LinkRaw, mod(good, func(b []byte) { b[2], b[3] = 0xff, 0xff }), ""},
		{"ipv4 udp total past a whole frame", capture.LinkRaw, mod(udp, func(b []byte) { b[2], b[3] = 0, byte(len(udp)+1) }), ""},
		{"ipv6 payload length past a whole frame", capture.LinkRaw, mod(v6, func(b []byte) { b[4], b[5] = 0xff, 0xff }), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, st := run(t, Config{}, []*capture.Packet{{Time: t0, LinkType: c.lt, Data: c.data, Length: len(c.data)}}, true)
			if len(r.events) != 0 {
				t.Errorf("events %q", r.strings())
			}
			want := Stats{Packets: 1, Bytes: int64(len(c.data))}
			if c.other == "" {
				want.Malformed = 1
			} else {
				want.Other = []NamedCount{{c.other, 1}}
			}
			if !reflect.DeepEqual(st, want) {
				t.Errorf("stats %+v, want %+v", st, want)
			}
		})
	}
	// Sanity: the unmodified packets are streams.
	_, st := run(t, Config{}, []*capture.Packet{
		{Time: t0, LinkType: capture.LinkRaw, Data: good}, {Time: t0, LinkType: capture.LinkRaw, Data: udp},
		{Time: t0, LinkType: capture.LinkRaw, Data: v6},
	}, true)
	if st.Streams != (StreamCounts{TCP: 1, UDP: 2}) {
		t.Errorf("stats %+v", st)
	}
}

// TestIPLengthPastFrame: an IPv4 total length of 65535 in a 100-byte
// frame. When the capture says the frame was cut (Length > len(Data), or
// the packet was dropped), the missing bytes are a snap-length cut: the
// segment is delivered with a gap of 65535 - 40 - 60 bytes. When the frame
// is whole, the length lies: the packet is malformed, no stream, no gap.
func TestIPLengthPastFrame(t *testing.T) {
	ip := pktbuild.TCPPacket(cli4, srv4, pktbuild.TCP{Seq: 1, Flags: pktbuild.ACK, Payload: pattern(60, 0)}).Encode()
	if len(ip) != 100 {
		t.Fatalf("packet of %d bytes", len(ip))
	}
	ip[2], ip[3] = 0xff, 0xff
	for _, c := range []struct {
		name      string
		length    int
		malformed int64
		gap       int64
	}{
		{"whole frame", 100, 1, 0},
		{"snap-cut frame", 65535, 0, 65535 - 40 - 60},
	} {
		_, st := run(t, Config{}, []*capture.Packet{{Time: t0, LinkType: capture.LinkRaw, Data: ip, Length: c.length}}, true)
		if st.Malformed != c.malformed || st.TCPGapBytes != c.gap || st.Streams.TCP != 1-c.malformed {
			t.Errorf("%s: stats %+v", c.name, st)
		}
	}
}
