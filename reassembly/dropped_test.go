package reassembly

import (
	"net/netip"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/pktbuild"
)

// drop returns seg framed by e as the capture loop keeps it when the
// decoding queue is full: its headers only (their length computed here
// from the layout: frame length minus payload), Dropped set, Length the
// original length.
func drop(e pktbuild.Encap, seg pktbuild.Segment, t time.Time) *capture.Packet {
	p := seg.Packet(e, t)
	p.Data = p.Data[:len(p.Data)-len(seg.TCP.Payload)]
	p.Dropped = true
	return p
}

func TestDroppedTCP(t *testing.T) {
	cases := []tcpCase{
		{
			name: "dropped segment in order",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				f.seg(c.Send(C, []byte("abc")))
				f.pkt(drop(eth, c.Send(C, []byte("defg")), t0))
				f.seg(c.Send(C, []byte("hi")), c.Fin(C), c.Fin(S))
			},
			want:  []string{"open 0", "data 0/0 abc", "gap 0/0 4", "data 0/0 hi", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 9},
			stats: func(s Stats) bool {
				return s.DroppedPackets == 1 && s.DroppedTCPBytes == 4 && s.TCPGapBytes == 4 && s.TCPTailGapBytes == 0
			},
		},
		{
			name: "dropped segment after the one behind it",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				d, e := c.Send(C, []byte("defg")), c.Send(C, []byte("hi"))
				f.seg(e)
				f.pkt(drop(eth, d, t0))
				f.seg(c.Fin(C), c.Fin(S))
			},
			want:  []string{"open 0", "gap 0/0 4", "data 0/0 hi", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 6},
		},
		{
			name: "dropped retransmission is no gap",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				s := c.Send(S, []byte("banner"))
				f.seg(s)
				f.pkt(drop(eth, s, t0))
				f.seg(c.Fin(S), c.Fin(C))
			},
			want:  []string{"open 0", "data 0/1 banner", "close 0/1", "close 0/0"},
			spans: map[string]int64{"0/1": 6},
			stats: func(s Stats) bool { return s.TCPGapBytes == 0 && s.TCPRetransmitted == 6 && s.DroppedTCPBytes == 6 },
		},
		{
			name: "dropped FIN segment still closes",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				f.pkt(drop(eth, c.FinData(C, []byte("bye")), t0))
				f.seg(c.Fin(S))
			},
			want:  []string{"open 0", "gap 0/0 3", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 3},
		},
		{
			name: "dropped first packet opens the stream",
			build: func(f *feed, c *pktbuild.Conn) {
				f.pkt(drop(eth, c.Send(C, []byte("12345")), t0))
				f.seg(c.Send(C, []byte("6")))
			},
			want:  []string{"open 0", "gap 0/0 5", "data 0/0 6", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 6},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &feed{e: eth}
			c := pktbuild.NewConn(cli4, srv4, 1000, 5000)
			tc.build(f, c)
			r, st := run(t, tc.cfg, f.pkts, true)
			eventsEqual(t, r.strings(), tc.want)
			checkSpans(t, r, tc.spans)
			if tc.stats != nil && !tc.stats(st) {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

func TestDroppedUDP(t *testing.T) {
	a, b := netip.MustParseAddrPort("10.0.0.1:5000"), netip.MustParseAddrPort("10.0.0.2:53")
	udp := func(src, dst netip.AddrPort, payload string) pktbuild.Frame {
		return eth.Wrap(pktbuild.UDPPacket(src, dst, []byte(payload)).Encode())
	}
	dropUDP := func(fr pktbuild.Frame) *capture.Packet {
		p := fr.Packet(t0)
		p.Data = p.Data[:14+20+8] // Ethernet, IPv4, UDP headers
		p.Dropped = true
		return p
	}
	f := &feed{e: eth}
	f.pkt(dropUDP(udp(b, a, "lost first"))) // opens the flow: b is direction 0
	f.frame(udp(a, b, "q"))
	f.pkt(dropUDP(udp(b, a, "r!")))
	f.pkt(dropUDP(udp(a, b, ""))) // an empty datagram: no gap of 0
	// A snaplen-cut datagram that was not dropped is still only counted.
	f.frame(udp(a, b, "0123456789").Truncate(14 + 20 + 8 + 3))
	f.frame(udp(b, a, "end"))
	r, st := run(t, Config{}, f.pkts, true)
	eventsEqual(t, r.strings(), []string{
		"open 0", "gap 0/0 10", "dgram 0/1 q", "gap 0/0 2", "dgram 0/0 end", "close 0/0", "close 0/1",
	})
	if r.streams[0].Addr != [2]netip.AddrPort{b, a} {
		t.Errorf("Addr %v", r.streams[0].Addr)
	}
	if st.DroppedPackets != 3 || st.DroppedUDPBytes != 12 || st.TruncatedUDP != 1 || st.TCPGapBytes != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestDroppedSerial(t *testing.T) {
	f := &feed{e: eth}
	f.pkt(pktbuild.Serial("/dev/ttyUSB0", capture.DirOutbound, []byte("cmd"), t0))
	lost := pktbuild.Serial("/dev/ttyUSB0", capture.DirInbound, nil, t0)
	lost.Length, lost.Dropped = 7, true
	f.pkt(lost)
	f.pkt(pktbuild.Serial("/dev/ttyUSB0", capture.DirInbound, []byte("ok"), t0))
	// A read cut by the snap length: its data, then the rest as a gap.
	cut := pktbuild.Serial("/dev/ttyUSB0", capture.DirOutbound, []byte("ab"), t0)
	cut.Length = 5
	f.pkt(cut)
	r, st := run(t, Config{}, f.pkts, true)
	eventsEqual(t, r.strings(), []string{
		"open 0", "data 0/0 cmd", "gap 0/1 7", "data 0/1 ok", "data 0/0 ab", "gap 0/0 3", "close 0/0", "close 0/1",
	})
	checkSpans(t, r, map[string]int64{"0/0": 8, "0/1": 9})
	if st.DroppedPackets != 1 || st.DroppedSerialBytes != 7 {
		t.Errorf("stats %+v", st)
	}
}

func TestDroppedNonStream(t *testing.T) {
	// HeaderLen is 0 for ARP: the capture loop keeps nothing.
	arp := pktbuild.Encap{}.Ether(pktbuild.EtherTypeARP, pktbuild.ARPRequest(cli4.Addr(), srv4.Addr()))
	if n := HeaderLen(arp.LinkType, arp.Data); n != 0 {
		t.Fatalf("HeaderLen(ARP) = %d", n)
	}
	p := arp.Packet(t0)
	p.Data, p.Dropped = nil, true
	r, st := run(t, Config{}, []*capture.Packet{p}, true)
	if len(r.events) != 0 || st.DroppedPackets != 1 || len(st.Other) != 1 ||
		st.Other[0] != (NamedCount{"dropped (not TCP/UDP, no headers kept)", 1}) {
		t.Errorf("events %q, stats %+v", r.strings(), st)
	}
}
