package reassembly

import (
	"net/netip"
	"testing"
	"time"

	"dissect/capture"
	"dissect/internal/pktbuild"
)

// The expected event sequences below were written by hand from the rules
// in the brief (and the Assembler doc comment), not by running the code.

var (
	t0   = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cli4 = netip.MustParseAddrPort("10.0.0.1:40000")
	srv4 = netip.MustParseAddrPort("10.0.0.2:80")
	cli6 = netip.MustParseAddrPort("[2001:db8::1]:40000")
	srv6 = netip.MustParseAddrPort("[2001:db8::2]:80")
	eth  = pktbuild.Encap{Type: capture.LinkEthernet}
)

const (
	C = pktbuild.Client
	S = pktbuild.Server
)

// feed collects packets with increasing timestamps (1 ms apart).
type feed struct {
	e    pktbuild.Encap
	pkts []*capture.Packet
}

func (f *feed) now() time.Time { return t0.Add(time.Duration(len(f.pkts)) * time.Millisecond) }

func (f *feed) seg(ss ...pktbuild.Segment) {
	for _, s := range ss {
		f.pkts = append(f.pkts, s.Packet(f.e, f.now()))
	}
}

func (f *feed) frame(fr pktbuild.Frame) { f.pkts = append(f.pkts, fr.Packet(f.now())) }

func (f *feed) udp(src, dst netip.AddrPort, payload string) {
	f.frame(f.e.Wrap(pktbuild.UDPPacket(src, dst, []byte(payload)).Encode()))
}

func (f *feed) pkt(p *capture.Packet) {
	p.Time = f.now()
	f.pkts = append(f.pkts, p)
}

// run feeds pkts to a new Assembler (then Flush) and returns the recorder
// and the stats; contract violations fail t.
func run(t *testing.T, cfg Config, pkts []*capture.Packet, flush bool) (*recorder, Stats) {
	t.Helper()
	r := newRecorder()
	a := New(r, cfg)
	for _, p := range pkts {
		a.Packet(p)
		a.checkInternal(t)
	}
	if flush {
		a.Flush(t0.Add(time.Hour))
		r.allClosed()
		if len(a.flows) != 0 || len(a.serial) != 0 || len(a.order) != 0 {
			t.Errorf("state left after Flush: %d flows, %d serial, %d ordered", len(a.flows), len(a.serial), len(a.order))
		}
	}
	r.verify(t)
	return r, a.Stats()
}

// checkInternal checks the held-data invariants of every TCP direction:
// sorted, disjoint, after the delivery point, within the limits, with the
// byte count right.
func (a *Assembler) checkInternal(t testing.TB) {
	t.Helper()
	for _, c := range a.order {
		if c.gone || c.s.Transport != TCP {
			continue
		}
		for d := range c.h {
			h := &c.h[d]
			n := 0
			prev := h.off + 1 // the first piece starts after a hole
			for _, p := range h.held {
				if p.start < prev || p.n <= 0 || int64(len(p.data)) > p.n {
					t.Fatalf("stream %d dir %d: bad held piece %d+%d after %d", c.s.ID, d, p.start, p.n, prev)
				}
				prev = p.start + p.n
				n += len(p.data)
			}
			if n != h.heldLen || n > a.cfg.MaxBuffered || len(h.held) > a.cfg.MaxSegments {
				t.Fatalf("stream %d dir %d: held %d bytes (counted %d) in %d pieces", c.s.ID, d, n, h.heldLen, len(h.held))
			}
		}
	}
}

// conversation is the one every link type carries: a TCP connection with
// handshake, data both ways and FINs, and a UDP exchange.
func conversation(f *feed, cli, srv netip.AddrPort, hbh bool) {
	c := pktbuild.NewConn(cli, srv, 1000, 5000)
	c.HopByHop = hbh
	f.seg(c.Handshake()...)
	f.seg(c.Send(C, []byte("hello")), c.Send(S, []byte("world!")), c.Fin(C), c.Fin(S), c.Ack(C))
	ucli := netip.AddrPortFrom(cli.Addr(), 5000)
	usrv := netip.AddrPortFrom(srv.Addr(), 53)
	for _, x := range []struct {
		src, dst netip.AddrPort
		p        string
	}{{ucli, usrv, "ping"}, {usrv, ucli, "pong"}} {
		ip := pktbuild.UDPPacket(x.src, x.dst, []byte(x.p))
		ip.HopByHop = hbh
		f.frame(f.e.Wrap(ip.Encode()))
	}
}

func TestLinkTypes(t *testing.T) {
	encaps := []struct {
		name string
		e    pktbuild.Encap
		only int // 4 or 6: the link type carries one IP version only
	}{
		{"ethernet", pktbuild.Encap{Type: capture.LinkEthernet}, 0},
		{"ethernet padded", pktbuild.Encap{Type: capture.LinkEthernet, Pad: true}, 0},
		{"ethernet vlan", pktbuild.Encap{Type: capture.LinkEthernet, VLANs: []uint16{10}, Pad: true}, 0},
		{"ethernet qinq", pktbuild.Encap{Type: capture.LinkEthernet, VLANs: []uint16{100, 10}}, 0},
		{"sll", pktbuild.Encap{Type: capture.LinkLinuxSLL}, 0},
		{"sll2", pktbuild.Encap{Type: capture.LinkLinuxSLL2}, 0},
		{"raw", pktbuild.Encap{Type: capture.LinkRaw}, 0},
		{"ipv4", pktbuild.Encap{Type: capture.LinkIPv4}, 4},
		{"ipv6", pktbuild.Encap{Type: capture.LinkIPv6}, 6},
		{"null le", pktbuild.Encap{Type: capture.LinkNull}, 0},
		{"null be", pktbuild.Encap{Type: capture.LinkNull, NullBigEndian: true}, 0},
		{"null freebsd", pktbuild.Encap{Type: capture.LinkNull, AF6: pktbuild.AFInet6FreeBSD}, 6},
		{"null darwin be", pktbuild.Encap{Type: capture.LinkNull, AF6: pktbuild.AFInet6Darwin, NullBigEndian: true}, 6},
		{"loop", pktbuild.Encap{Type: capture.LinkLoop}, 0},
	}
	families := []struct {
		name     string
		v        int
		cli, srv netip.AddrPort
		hbh      bool
	}{
		{"v4", 4, cli4, srv4, false},
		{"v6", 6, cli6, srv6, false},
		{"v6 hop-by-hop", 6, cli6, srv6, true},
	}
	want := []string{
		"open 0", "data 0/0 hello", "data 0/1 world!", "close 0/0", "close 0/1",
		"open 1", "dgram 1/0 ping", "dgram 1/1 pong",
		"close 1/0", "close 1/1", // Flush
	}
	for _, en := range encaps {
		for _, fam := range families {
			if en.only != 0 && en.only != fam.v {
				continue
			}
			t.Run(en.name+"/"+fam.name, func(t *testing.T) {
				f := &feed{e: en.e}
				conversation(f, fam.cli, fam.srv, fam.hbh)
				r, st := run(t, Config{}, f.pkts, true)
				eventsEqual(t, r.strings(), want)
				checkSpans(t, r, map[string]int64{"0/0": 5, "0/1": 6, "1/0": 4, "1/1": 4})
				if r.streams[0].Addr != [2]netip.AddrPort{fam.cli, fam.srv} {
					t.Errorf("tcp addresses %v", r.streams[0].Addr)
				}
				if st.Streams != (StreamCounts{TCP: 1, UDP: 1}) || st.Malformed != 0 || st.NonStream != 0 {
					t.Errorf("stats %+v", st)
				}
			})
		}
	}
}

// tcpCase is one TCP scenario on the connection cli4 -> srv4 with client
// ISN 1000 and server ISN 5000.
type tcpCase struct {
	name  string
	cfg   Config
	build func(f *feed, c *pktbuild.Conn)
	want  []string
	spans map[string]int64
	stats func(Stats) bool // extra checks
}

func TestTCP(t *testing.T) {
	cases := []tcpCase{
		{
			name: "in order",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				f.seg(c.Send(C, []byte("abc")), c.Send(C, []byte("def")), c.Send(S, []byte("xyz")))
				f.seg(c.Fin(C), c.Fin(S), c.Ack(C))
			},
			want:  []string{"open 0", "data 0/0 abc", "data 0/0 def", "data 0/1 xyz", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 6, "0/1": 3},
			stats: func(s Stats) bool {
				return s.TCPOutOfOrder == 0 && s.TCPRetransmitted == 0 && s.TCPGapBytes == 0 && s.Packets == 9
			},
		},
		{
			name: "reorder",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a, b, d := c.Send(C, []byte("aa")), c.Send(C, []byte("bbb")), c.Send(C, []byte("cccc"))
				f.seg(a, d, b)
			},
			want:  []string{"open 0", "data 0/0 aa", "data 0/0 bbb", "data 0/0 cccc", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 9},
			stats: func(s Stats) bool { return s.TCPOutOfOrder == 1 && s.TCPGapBytes == 0 },
		},
		{
			name: "reorder, two held",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a, b, d, e := c.Send(C, []byte("aa")), c.Send(C, []byte("bbb")), c.Send(C, []byte("cccc")), c.Send(C, []byte("dd"))
				f.seg(a, e, d, b)
			},
			want:  []string{"open 0", "data 0/0 aa", "data 0/0 bbb", "data 0/0 cccc", "data 0/0 dd", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 11},
			stats: func(s Stats) bool { return s.TCPOutOfOrder == 2 },
		},
		{
			name: "exact duplicate",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a, b := c.Send(C, []byte("aa")), c.Send(C, []byte("bbb"))
				f.seg(a, a, b, b)
			},
			want:  []string{"open 0", "data 0/0 aa", "data 0/0 bbb", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 5},
			stats: func(s Stats) bool { return s.TCPRetransmitted == 5 },
		},
		{
			name: "duplicate of held segment",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a, b, d := c.Send(C, []byte("aa")), c.Send(C, []byte("bbb")), c.Send(C, []byte("cccc"))
				f.seg(a, d, d, b)
			},
			want:  []string{"open 0", "data 0/0 aa", "data 0/0 bbb", "data 0/0 cccc", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 9},
			stats: func(s Stats) bool { return s.TCPRetransmitted == 4 && s.TCPOutOfOrder == 1 },
		},
		{
			name: "overlap with delivered data: first copy wins",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				f.seg(c.Send(C, []byte("hello")))
				// Offsets 3..9: "LO" overlaps the delivered "lo".
				f.seg(c.Segment(C, pktbuild.PSH, 1001+3, []byte("LOworld")))
				c.Next[C] = 1001 + 10
				f.seg(c.Send(C, []byte("!")))
			},
			want:  []string{"open 0", "data 0/0 hello", "data 0/0 world", "data 0/0 !", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 11},
			stats: func(s Stats) bool { return s.TCPRetransmitted == 2 },
		},
		{
			name: "overlap with held data: first copy wins",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				f.seg(c.Send(C, []byte("0123")))
				// Offsets 8..11 arrive first, then 4..9 with different
				// bytes at 8 and 9.
				f.seg(c.Segment(C, pktbuild.PSH, 1001+8, []byte("89AB")))
				f.seg(c.Segment(C, pktbuild.PSH, 1001+4, []byte("4567xy")))
			},
			want:  []string{"open 0", "data 0/0 0123", "data 0/0 4567", "data 0/0 89AB", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 12},
			stats: func(s Stats) bool { return s.TCPRetransmitted == 2 && s.TCPOutOfOrder == 1 },
		},
		{
			name: "segment spanning two held pieces",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				f.seg(c.Send(C, []byte("01")))
				f.seg(c.Segment(C, pktbuild.PSH, 1001+4, []byte("45")))
				f.seg(c.Segment(C, pktbuild.PSH, 1001+8, []byte("89")))
				// Offsets 2..11; the held ranges 4-5 and 8-9 win.
				f.seg(c.Segment(C, pktbuild.PSH, 1001+2, []byte("23xx67yyAB")))
			},
			want: []string{"open 0", "data 0/0 01", "data 0/0 23", "data 0/0 45", "data 0/0 67",
				"data 0/0 89", "data 0/0 AB", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 12},
			stats: func(s Stats) bool { return s.TCPRetransmitted == 4 && s.TCPOutOfOrder == 3 },
		},
		{
			name: "lost segment in the middle, resolved by the FINs",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a := c.Send(C, []byte("aa"))
				c.Send(C, []byte("lost"))
				d := c.Send(C, []byte("dd"))
				f.seg(a, d, c.Fin(C), c.Fin(S))
			},
			want:  []string{"open 0", "data 0/0 aa", "close 0/1", "gap 0/0 4", "data 0/0 dd", "close 0/0"},
			spans: map[string]int64{"0/0": 8},
			stats: func(s Stats) bool { return s.TCPGapBytes == 4 },
		},
		{
			name: "lost segment, resolved by the peer's ACK",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a := c.Send(C, []byte("aa"))
				c.Skip(C, 4)
				d := c.Send(C, []byte("dd"))
				f.seg(a, d)
				// The server acknowledges all of it: the hole was received
				// but not captured, so the gap comes now, not at the FINs.
				f.seg(c.Ack(S), c.Send(S, []byte("x")))
			},
			want:  []string{"open 0", "data 0/0 aa", "gap 0/0 4", "data 0/0 dd", "data 0/1 x", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 8, "0/1": 1},
			stats: func(s Stats) bool { return s.TCPGapBytes == 4 && s.TCPOutOfOrder == 1 },
		},
		{
			name: "an ACK covering part of a hole declares only that part lost",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a := c.Send(C, []byte("aa"))
				c.Send(C, []byte("bb")) // lost
				ack := c.Ack(S)         // acknowledges up to the end of "bb"
				x := c.Send(S, []byte("x"))
				cc := c.Send(C, []byte("cc"))
				d := c.Send(C, []byte("dd"))
				f.seg(a, d, ack, x)
				f.seg(cc) // a retransmission of the rest of the hole
			},
			want:  []string{"open 0", "data 0/0 aa", "gap 0/0 2", "data 0/1 x", "data 0/0 cc", "data 0/0 dd", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 8, "0/1": 1},
			stats: func(s Stats) bool { return s.TCPGapBytes == 2 },
		},
		{
			name: "an ACK past a hole with nothing held behind it declares nothing",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a := c.Send(C, []byte("aa"))
				b := c.Send(C, []byte("bb"))
				// the ACK is captured before the data it acknowledges
				f.seg(a, c.Ack(S), b)
			},
			want:  []string{"open 0", "data 0/0 aa", "data 0/0 bb", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 4},
			stats: func(s Stats) bool { return s.TCPGapBytes == 0 },
		},
		{
			name: "lost segment, data continues after the segment limit",
			cfg:  Config{MaxSegments: 2},
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a := c.Send(C, []byte("aa"))
				c.Skip(C, 5)
				f.seg(a, c.Send(C, []byte("cc")), c.Send(C, []byte("dd")), c.Send(C, []byte("ee")), c.Send(C, []byte("ff")))
			},
			want: []string{"open 0", "data 0/0 aa", "gap 0/0 5", "data 0/0 cc", "data 0/0 dd", "data 0/0 ee",
				"data 0/0 ff", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 15},
			stats: func(s Stats) bool { return s.TCPGapBytes == 5 && s.TCPOutOfOrder == 3 },
		},
		{
			name: "held bytes limit forces a gap",
			cfg:  Config{MaxBuffered: 10},
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a := c.Send(C, []byte("01"))
				c.Skip(C, 2)
				f.seg(a, c.Send(C, []byte("456789")), c.Send(C, []byte("ABCDE")), c.Send(C, []byte("F")))
			},
			want: []string{"open 0", "data 0/0 01", "gap 0/0 2", "data 0/0 456789", "data 0/0 ABCDE",
				"data 0/0 F", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 16},
		},
		{
			name: "loss before FIN",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a := c.Send(C, []byte("aa"))
				c.Skip(C, 3)
				f.seg(a, c.Fin(C), c.Send(S, []byte("ok")), c.Fin(S), c.Ack(C))
			},
			want:  []string{"open 0", "data 0/0 aa", "data 0/1 ok", "close 0/1", "gap 0/0 3", "close 0/0"},
			spans: map[string]int64{"0/0": 5, "0/1": 2},
		},
		{
			name: "loss before FIN, resolved by Flush",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a := c.Send(C, []byte("aa"))
				c.Skip(C, 3)
				f.seg(a, c.Fin(C))
			},
			want:  []string{"open 0", "data 0/0 aa", "gap 0/0 3", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 5},
		},
		{
			name: "FIN with data, data past the FIN dropped",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				fin := c.FinData(C, []byte("bye"))
				f.seg(fin, c.Segment(C, pktbuild.PSH, fin.TCP.Seq+3, []byte("more")))
			},
			want:  []string{"open 0", "data 0/0 bye", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 3},
			stats: func(s Stats) bool { return s.TCPAfterClose == 4 },
		},
		{
			name: "FIN before the data it follows",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a, b := c.Send(C, []byte("aa")), c.Send(C, []byte("bb"))
				fin := c.Fin(C)
				f.seg(a, fin, b)
			},
			want:  []string{"open 0", "data 0/0 aa", "data 0/0 bb", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 4},
		},
		{
			name: "mid-stream join, both directions",
			build: func(f *feed, c *pktbuild.Conn) {
				// No handshake: the server speaks first, so it is dir 0.
				f.seg(c.Send(S, []byte("srv1")), c.Send(C, []byte("cli1")))
				// From before the server's first byte: dropped.
				f.seg(c.Segment(S, pktbuild.PSH, 5000-10, []byte("0123456789")))
				// Client offsets -4..7: 4 before start, 4 retransmitted, 4 new.
				f.seg(c.Segment(C, pktbuild.PSH, 1000-4, []byte("....cli1NEW!")))
				c.Next[C] = 1008
				f.seg(c.Send(C, []byte("x")))
			},
			want: []string{"open 0", "data 0/0 srv1", "data 0/1 cli1", "data 0/1 NEW!", "data 0/1 x",
				"close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 4, "0/1": 9},
			stats: func(s Stats) bool { return s.TCPBeforeStart == 14 && s.TCPRetransmitted == 4 },
		},
		{
			name: "SYN-ACK first",
			build: func(f *feed, c *pktbuild.Conn) {
				hs := c.Handshake()
				f.seg(hs[1], hs[2], c.Send(S, []byte("yo")), c.Send(C, []byte("hi")))
			},
			want:  []string{"open 0", "data 0/1 yo", "data 0/0 hi", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 2, "0/1": 2},
		},
		{
			name: "SYN-ACK first, client's first segment lost",
			build: func(f *feed, c *pktbuild.Conn) {
				hs := c.Handshake()
				c.Skip(C, 2)
				// The SYN-ACK acknowledged ISN+1: the client's stream
				// starts there, so the lost bytes are a gap.
				f.seg(hs[1], c.Send(C, []byte("cd")))
			},
			want:  []string{"open 0", "gap 0/0 2", "data 0/0 cd", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 4},
		},
		{
			name: "SYN captured after the data",
			build: func(f *feed, c *pktbuild.Conn) {
				hs := c.Handshake()
				f.seg(c.Send(C, []byte("ab")), hs[0], hs[1], c.Send(C, []byte("cd")))
			},
			want:  []string{"open 0", "data 0/0 ab", "data 0/0 cd", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 4},
		},
		{
			name: "RST with a hole",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a := c.Send(C, []byte("aa"))
				c.Skip(C, 3)
				f.seg(a, c.Send(C, []byte("cc")), c.Send(S, []byte("s")), c.Rst(S))
				// Trailing segment on the reset connection: no new stream.
				f.seg(c.Send(C, []byte("zz")))
			},
			want: []string{"open 0", "data 0/0 aa", "data 0/1 s", "gap 0/0 3", "data 0/0 cc",
				"close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 7, "0/1": 1},
			stats: func(s Stats) bool { return s.TCPAfterClose == 2 && s.Streams.TCP == 1 },
		},
		{
			name: "connection refused",
			build: func(f *feed, c *pktbuild.Conn) {
				syn := c.SYN(C)
				f.seg(syn, c.Rst(S))
			},
			want: []string{"open 0", "close 0/0", "close 0/1"},
		},
		{
			name: "port reuse after close gives a new stream",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				f.seg(c.Send(C, []byte("one")))
				fin := c.Fin(C)
				f.seg(fin, c.Fin(S), c.Ack(C), fin) // retransmitted FIN after the end
				c2 := pktbuild.NewConn(cli4, srv4, 90000, 70000)
				hs := c2.Handshake()
				f.seg(hs[0], hs[0], hs[1], hs[2], c2.Send(C, []byte("two")))
			},
			want: []string{"open 0", "data 0/0 one", "close 0/0", "close 0/1",
				"open 1", "data 1/0 two", "close 1/0", "close 1/1"},
			spans: map[string]int64{"0/0": 3, "1/0": 3},
		},
		{
			name: "SYN with a new ISN ends a connection still open",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Send(C, []byte("old")))
				c2 := pktbuild.NewConn(cli4, srv4, 90000, 70000)
				f.seg(c2.Handshake()...)
				f.seg(c2.Send(S, []byte("new")))
			},
			want: []string{"open 0", "data 0/0 old", "close 0/0", "close 0/1",
				"open 1", "data 1/1 new", "close 1/0", "close 1/1"},
			spans: map[string]int64{"0/0": 3, "1/1": 3},
		},
		{
			name: "sequence numbers wrap at 2^32",
			build: func(f *feed, c *pktbuild.Conn) {
				c.Next[C] = 0xfffffff8 // ISN; data starts at 0xfffffff9
				f.seg(c.Handshake()...)
				a := c.Send(C, []byte("0123456789")) // crosses 2^32 after 7 bytes
				b := c.Send(C, []byte("abc"))
				d := c.Send(C, []byte("def"))
				f.seg(a, d, b, b.Slice(1, 3))
			},
			want:  []string{"open 0", "data 0/0 0123456789", "data 0/0 abc", "data 0/0 def", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 16},
			stats: func(s Stats) bool { return s.TCPRetransmitted == 2 && s.TCPBeforeStart == 0 },
		},
		{
			name: "mid-stream join across the wrap",
			build: func(f *feed, c *pktbuild.Conn) {
				c.Next[C] = 0xfffffffe
				a, b := c.Send(C, []byte("wxyz")), c.Send(C, []byte("!"))
				f.seg(a, c.Segment(C, pktbuild.PSH, 0xfffffffc, []byte("uvwx")), b)
			},
			want:  []string{"open 0", "data 0/0 wxyz", "data 0/0 !", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 5},
			stats: func(s Stats) bool { return s.TCPBeforeStart == 2 && s.TCPRetransmitted == 2 },
		},
		{
			name: "snaplen-truncated segment gives a gap",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				s := c.Send(C, []byte("0123456789"))
				// Ethernet 14 + IPv4 20 + TCP 20 + 4 payload bytes.
				f.frame(s.Frame(eth).Truncate(14 + 20 + 20 + 4))
				f.seg(c.Send(C, []byte("abc")))
			},
			want:  []string{"open 0", "data 0/0 0123", "gap 0/0 6", "data 0/0 abc", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 13},
			stats: func(s Stats) bool { return s.TCPGapBytes == 6 },
		},
		{
			name: "snaplen-truncated segment held out of order",
			build: func(f *feed, c *pktbuild.Conn) {
				f.seg(c.Handshake()...)
				a, b, d := c.Send(C, []byte("aa")), c.Send(C, []byte("bbb")), c.Send(C, []byte("cc"))
				f.seg(a)
				f.frame(d.Frame(eth).Truncate(14 + 20 + 20 + 1))
				f.seg(b)
			},
			want:  []string{"open 0", "data 0/0 aa", "data 0/0 bbb", "data 0/0 c", "gap 0/0 1", "close 0/0", "close 0/1"},
			spans: map[string]int64{"0/0": 7},
		},
		{
			name: "snaplen cutting the TCP header is malformed",
			build: func(f *feed, c *pktbuild.Conn) {
				f.frame(c.Send(C, []byte("abc")).Frame(eth).Truncate(14 + 20 + 10))
			},
			want:  nil,
			stats: func(s Stats) bool { return s.Malformed == 1 && s.Streams.TCP == 0 },
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

func TestHeaderOptions(t *testing.T) {
	f := &feed{e: eth}
	c := pktbuild.NewConn(cli4, srv4, 1000, 5000)
	// An IPv4 header with options (IHL 6) around a SYN with TCP options
	// (data offset 8), then data with an IPv4 option.
	syn := c.SYN(C)
	syn.TCP.Options = []byte{2, 4, 0x05, 0xb4, 4, 2, 1, 3, 3, 7} // MSS, SACK permitted, window scale
	ip := syn.IP()
	ip.Options = []byte{0x94, 4, 0, 0}
	f.frame(eth.Wrap(ip.Encode()))
	d := c.Send(C, []byte("payload"))
	ip = d.IP()
	ip.Options = []byte{0x94, 4, 0, 0}
	f.frame(pktbuild.Encap{Type: capture.LinkEthernet, Pad: true}.Wrap(ip.Encode()))
	r, _ := run(t, Config{}, f.pkts, true)
	eventsEqual(t, r.strings(), []string{"open 0", "data 0/0 payload", "close 0/0", "close 0/1"})
}

func TestIPv6ExtensionHeaders(t *testing.T) {
	// The 8-byte hop-by-hop header built by pktbuild has the layout of
	// every skipped extension header with length byte 0: routing (43) and
	// destination options (60) count (len+1)*8 bytes, AH (51) (len+2)*4.
	for _, next := range []byte{0, 43, 60, 51} {
		c := pktbuild.NewConn(cli6, srv6, 1, 2)
		c.HopByHop = true
		var pkts []*capture.Packet
		for i, s := range []pktbuild.Segment{c.Send(C, []byte("six")), c.Send(S, []byte("back"))} {
			fr := s.Frame(pktbuild.Encap{Type: capture.LinkRaw})
			fr.Data[6] = next
			pkts = append(pkts, fr.Packet(t0.Add(time.Duration(i))))
		}
		// A non-first fragment behind the extension header.
		fragIP := pktbuild.UDPPacket(cli6, srv6, []byte("frag"))
		fragIP.HopByHop, fragIP.FragOffset = true, 2
		fr := pktbuild.Encap{Type: capture.LinkRaw}.Wrap(fragIP.Encode())
		fr.Data[6] = next
		pkts = append(pkts, fr.Packet(t0))
		r, st := run(t, Config{}, pkts, true)
		eventsEqual(t, r.strings(), []string{"open 0", "data 0/0 six", "data 0/1 back", "close 0/0", "close 0/1"})
		if st.Fragments != 1 {
			t.Errorf("next header %d: stats %+v", next, st)
		}
	}
}

func TestSYNACKFirstDirection(t *testing.T) {
	f := &feed{e: eth}
	c := pktbuild.NewConn(cli4, srv4, 1000, 5000)
	hs := c.Handshake()
	f.seg(hs[1], hs[0], hs[2])
	r, _ := run(t, Config{}, f.pkts, true)
	if got := r.streams[0].Addr; got != [2]netip.AddrPort{cli4, srv4} {
		t.Errorf("Addr = %v, want client as direction 0", got)
	}
}

func TestStreamNumbering(t *testing.T) {
	f := &feed{e: eth}
	a4, b4 := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	arp := pktbuild.Encap{}.Ether(pktbuild.EtherTypeARP, pktbuild.ARPRequest(a4, b4))
	icmp := eth.Wrap(pktbuild.ICMPEcho(a4, b4, 1, 1).Encode())
	icmp6 := eth.Wrap(pktbuild.ICMPEcho(cli6.Addr(), srv6.Addr(), 1, 1).Encode())
	ua, ub := netip.MustParseAddrPort("10.0.0.1:5000"), netip.MustParseAddrPort("10.0.0.2:53")
	uc := netip.MustParseAddrPort("10.0.0.3:6000")
	c1 := pktbuild.NewConn(cli4, srv4, 1000, 5000)
	c2 := pktbuild.NewConn(netip.MustParseAddrPort("10.0.0.3:40001"), srv4, 1, 2)

	f.frame(arp)
	f.udp(ua, ub, "q1")
	f.frame(icmp)
	hs := c1.Handshake()
	f.seg(hs[0]) // a bare SYN opens stream 1
	f.frame(icmp6)
	f.udp(uc, ub, "q2")
	f.seg(hs[1])
	f.udp(ub, ua, "r1")
	f.frame(arp)
	f.seg(c2.Send(C, []byte("mid")))
	f.seg(hs[2], c1.Send(C, []byte("syn'd")))
	r, st := run(t, Config{}, f.pkts, true)
	eventsEqual(t, r.strings(), []string{
		"open 0", "dgram 0/0 q1", "open 1", "open 2", "dgram 2/0 q2", "dgram 0/1 r1",
		"open 3", "data 3/0 mid", "data 1/0 syn'd",
		"close 0/0", "close 0/1", "close 1/0", "close 1/1", "close 2/0", "close 2/1", "close 3/0", "close 3/1",
	})
	if st.NonStream != 4 || st.Streams != (StreamCounts{TCP: 2, UDP: 2}) || st.Packets != 12 {
		t.Errorf("stats %+v", st)
	}
}

func TestUDP(t *testing.T) {
	f := &feed{e: eth}
	a, b := netip.MustParseAddrPort("10.0.0.1:5000"), netip.MustParseAddrPort("10.0.0.2:53")
	f.udp(b, a, "first from b")
	f.udp(a, b, "")
	f.udp(a, b, "x")
	// A datagram cut by the snap length: counted, not delivered.
	f.frame(eth.Wrap(pktbuild.UDPPacket(a, b, []byte("0123456789")).Encode()).Truncate(14 + 20 + 8 + 3))
	f.udp(b, a, "last")
	// IPv4 fragments: the first carries the UDP header, the second not.
	ip := pktbuild.UDPPacket(a, b, make([]byte, 40))
	first := ip
	first.Payload = ip.Payload[:24]
	first.MoreFragments = true
	second := ip
	second.Payload = ip.Payload[24:]
	second.FragOffset = 3
	f.frame(eth.Wrap(first.Encode()))
	f.frame(eth.Wrap(second.Encode()))
	// An IPv6 non-first fragment.
	v6 := pktbuild.UDPPacket(cli6, srv6, []byte("zz"))
	v6.FragOffset, v6.HopByHop = 1, true
	f.frame(eth.Wrap(v6.Encode()))
	r, st := run(t, Config{}, f.pkts, true)
	eventsEqual(t, r.strings(), []string{
		"open 0", "dgram 0/0 first from b", "dgram 0/1 ", "dgram 0/1 x", "dgram 0/0 last",
		"close 0/0", "close 0/1",
	})
	if r.streams[0].Addr != [2]netip.AddrPort{b, a} {
		t.Errorf("Addr %v", r.streams[0].Addr)
	}
	if st.TruncatedUDP != 1 || st.Fragments != 3 || st.Streams != (StreamCounts{UDP: 1}) {
		t.Errorf("stats %+v", st)
	}
	if r.dgrams[[2]int{0, 0}] != 2 || r.dgrams[[2]int{0, 1}] != 2 {
		t.Errorf("datagram counts %v", r.dgrams)
	}
}

func TestSerial(t *testing.T) {
	f := &feed{e: eth}
	f.pkt(pktbuild.Serial("/dev/ttyUSB0", capture.DirOutbound, []byte("cmd"), t0))
	f.pkt(pktbuild.Serial("/dev/ttyUSB0", capture.DirInbound, []byte("rep"), t0))
	f.udp(netip.MustParseAddrPort("10.0.0.1:1"), netip.MustParseAddrPort("10.0.0.2:2"), "u")
	p := pktbuild.Serial("", capture.DirUnknown, []byte("x"), t0)
	p.Interface = 3
	f.pkt(p)
	f.pkt(pktbuild.Serial("/dev/ttyUSB0", capture.DirUnknown, []byte("more"), t0))
	f.pkt(pktbuild.Serial("/dev/ttyUSB0", capture.DirInbound, nil, t0))
	f.pkt(pktbuild.Serial("/dev/ttyUSB0", capture.DirInbound, []byte("!"), t0))
	r, st := run(t, Config{}, f.pkts, true)
	eventsEqual(t, r.strings(), []string{
		"open 0", "data 0/0 cmd", "data 0/1 rep", "open 1", "dgram 1/0 u", "open 2", "data 2/0 x",
		"data 0/0 more", "data 0/1 !",
		"close 0/0", "close 0/1", "close 1/0", "close 1/1", "close 2/0", "close 2/1",
	})
	if r.streams[0].Link != "/dev/ttyUSB0" || r.streams[2].Link != "if3" || r.streams[0].Transport != Serial {
		t.Errorf("links %q %q", r.streams[0].Link, r.streams[2].Link)
	}
	if r.streams[0].Addr != [2]netip.AddrPort{} {
		t.Errorf("serial Addr %v", r.streams[0].Addr)
	}
	if st.Streams != (StreamCounts{UDP: 1, Serial: 2}) {
		t.Errorf("stats %+v", st)
	}
}

func TestFlush(t *testing.T) {
	f := &feed{e: eth}
	c1 := pktbuild.NewConn(cli4, srv4, 1000, 5000)
	f.seg(c1.Handshake()...)
	f.seg(c1.Send(S, []byte("banner")))
	f.pkt(pktbuild.Serial("/dev/ttyS0", capture.DirInbound, []byte("s"), t0))
	c2 := pktbuild.NewConn(netip.MustParseAddrPort("10.0.0.1:40001"), srv4, 1, 2)
	f.seg(c2.SYN(C), c2.SYN(S), c2.Ack(C), c2.Send(C, []byte("ab")))
	c2.Skip(C, 2)
	f.seg(c2.Send(C, []byte("ef")))
	c2.Skip(C, 1)
	f.seg(c2.Send(C, []byte("h")), c2.Fin(C))
	f.udp(netip.MustParseAddrPort("10.0.0.1:1"), netip.MustParseAddrPort("10.0.0.2:2"), "u")

	r := newRecorder()
	a := New(r, Config{})
	for _, p := range f.pkts {
		a.Packet(p)
	}
	eventsEqual(t, r.strings(), []string{
		"open 0", "data 0/1 banner", "open 1", "data 1/1 s", "open 2", "data 2/0 ab", "open 3", "dgram 3/0 u",
	})
	r.events = nil
	a.Flush(t0.Add(time.Minute))
	eventsEqual(t, r.strings(), []string{
		"close 0/0", "close 0/1",
		"close 1/0", "close 1/1",
		"gap 2/0 2", "data 2/0 ef", "gap 2/0 1", "data 2/0 h", "close 2/0", "close 2/1",
		"close 3/0", "close 3/1",
	})
	r.allClosed()
	checkSpans(t, r, map[string]int64{"0/1": 6, "1/1": 1, "2/0": 8, "3/0": 1})
	// After Flush everything is forgotten; numbering continues.
	r.events = nil
	f2 := &feed{e: eth}
	f2.seg(c1.Send(C, []byte("late")))
	a.Packet(f2.pkts[0])
	a.Flush(t0.Add(2 * time.Minute))
	eventsEqual(t, r.strings(), []string{"open 4", "data 4/0 late", "close 4/0", "close 4/1"})
	r.verify(t)
}

func TestExpire(t *testing.T) {
	r := newRecorder()
	a := New(r, Config{})
	e := eth
	cA := pktbuild.NewConn(cli4, srv4, 1000, 5000)
	cB := pktbuild.NewConn(netip.MustParseAddrPort("10.0.0.1:40001"), srv4, 1, 2)
	cF := pktbuild.NewConn(netip.MustParseAddrPort("10.0.0.1:40002"), srv4, 1, 2)
	a.Packet(cA.Send(C, []byte("a")).Packet(e, t0))
	cA.Skip(C, 2)
	a.Packet(cA.Send(C, []byte("held")).Packet(e, t0))
	for _, s := range []pktbuild.Segment{cF.Send(C, []byte("f")), cF.Fin(C), cF.Fin(S)} {
		a.Packet(s.Packet(e, t0))
	}
	a.Packet(cB.Send(C, []byte("b")).Packet(e, t0.Add(10*time.Second)))
	a.Expire(t0.Add(20*time.Second), 15*time.Second)
	eventsEqual(t, r.strings(), []string{
		"open 0", "data 0/0 a", "open 1", "data 1/0 f", "close 1/0", "close 1/1", "open 2", "data 2/0 b",
		"gap 0/0 2", "data 0/0 held", "close 0/0", "close 0/1",
	})
	if len(a.flows) != 1 || len(a.order) != 1 || a.nFinished != 0 {
		t.Errorf("after Expire: %d flows, %d ordered, %d finished", len(a.flows), len(a.order), a.nFinished)
	}
	r.events = nil
	// The expired connection's tuple now starts a new stream; so does the
	// forgotten finished one.
	a.Packet(cA.Send(C, []byte("again")).Packet(e, t0.Add(21*time.Second)))
	a.Packet(cF.Ack(C).Packet(e, t0.Add(21*time.Second)))
	a.Expire(t0.Add(22*time.Second), time.Hour)
	eventsEqual(t, r.strings(), []string{"open 3", "data 3/0 again", "open 4"})
	r.verify(t)
}

func TestMaxFinished(t *testing.T) {
	f := &feed{e: eth}
	var conns []*pktbuild.Conn
	for i := range 3 {
		c := pktbuild.NewConn(netip.AddrPortFrom(cli4.Addr(), uint16(40000+i)), srv4, 1, 2)
		conns = append(conns, c)
		f.seg(c.Handshake()...)
		f.seg(c.Fin(C), c.Fin(S))
	}
	// The oldest finished connection was forgotten: its last ACK opens a
	// stream; the newest's does not.
	f.seg(conns[0].Ack(C), conns[2].Ack(C))
	r, _ := run(t, Config{MaxFinished: 2}, f.pkts, true)
	eventsEqual(t, r.strings(), []string{
		"open 0", "close 0/0", "close 0/1", "open 1", "close 1/0", "close 1/1",
		"open 2", "close 2/0", "close 2/1", "open 3", "close 3/0", "close 3/1",
	})
}

func TestNonStreamAndMalformed(t *testing.T) {
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
		name      string
		lt        capture.LinkType
		data      []byte
		malformed bool // else non-stream
	}{
		{"short ethernet", capture.LinkEthernet, make([]byte, 13), true},
		{"ethernet llc", capture.LinkEthernet, append(make([]byte, 12), 0x00, 0x2e), false},
		{"ethernet empty vlan", capture.LinkEthernet, append(make([]byte, 12), 0x81, 0x00, 0, 1), true},
		{"too many vlan tags", capture.LinkEthernet, append(make([]byte, 12),
			0x81, 0, 0, 1, 0x81, 0, 0, 1, 0x81, 0, 0, 1, 0x81, 0, 0, 1, 0x81, 0, 0, 1, 0x81, 0, 0, 1, 0x81, 0, 0, 1, 0x81, 0, 0, 1, 0x81, 0, 0, 1, 0x81, 0, 0, 1, 0x08, 0), true},
		{"short sll", capture.LinkLinuxSLL, make([]byte, 15), true},
		{"short sll2", capture.LinkLinuxSLL2, make([]byte, 19), true},
		{"empty raw", capture.LinkRaw, nil, true},
		{"raw version 5", capture.LinkRaw, mod(good, func(b []byte) { b[0] = 0x55 }), true},
		{"ipv6 link with ipv4", capture.LinkIPv6, good, true},
		{"short null", capture.LinkNull, []byte{2, 0}, true},
		{"null unknown family", capture.LinkNull, append([]byte{7, 0, 0, 0}, good...), false},
		{"loop little-endian family", capture.LinkLoop, append([]byte{2, 0, 0, 0}, good...), false},
		{"unknown link type", 105, good, false},
		{"ipv4 ihl 4", capture.LinkRaw, mod(good, func(b []byte) { b[0] = 0x44 }), true},
		{"ipv4 total < ihl", capture.LinkRaw, mod(good, func(b []byte) { b[2], b[3] = 0, 19 }), true},
		{"ipv4 header cut", capture.LinkRaw, good[:19], true},
		{"tcp data offset 4", capture.LinkRaw, mod(good, func(b []byte) { b[20+12] = 0x40 }), true},
		{"tcp data offset past end", capture.LinkRaw, mod(good, func(b []byte) { b[20+12] = 0xf0 }), true},
		{"udp length 7", capture.LinkRaw, mod(udp, func(b []byte) { b[25] = 7 }), true},
		{"udp length beyond ip", capture.LinkRaw, mod(udp, func(b []byte) { b[25] = 12 }), true},
		{"ipv6 hop-by-hop overrun", capture.LinkRaw, mod(v6, func(b []byte) { b[41] = 9 }), true},
		{"ipv6 no next header", capture.LinkRaw, mod(v6, func(b []byte) { b[40] = 59 }), false},
		{"ipv6 short", capture.LinkRaw, v6[:39], true},
		{"icmp", capture.LinkRaw, pktbuild.ICMPEcho(cli4.Addr(), srv4.Addr(), 1, 2).Encode(), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, st := run(t, Config{}, []*capture.Packet{{Time: t0, LinkType: c.lt, Data: c.data, Length: len(c.data)}}, true)
			if len(r.events) != 0 {
				t.Errorf("events %q", r.strings())
			}
			want := Stats{Packets: 1, Bytes: int64(len(c.data))}
			if c.malformed {
				want.Malformed = 1
			} else {
				want.NonStream = 1
			}
			if st != want {
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
