package reassembly

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/pktbuild"
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
// byte count right; and the bounds on streams: the activity list holds
// exactly the open streams, at most MaxStreams, and all held bytes
// together are within MaxHeldBytes.
func (a *Assembler) checkInternal(t testing.TB) {
	t.Helper()
	total, open := 0, 0
	for _, c := range a.order {
		if c.gone {
			continue
		}
		switch {
		case c.s.Carries != "":
			// A log's stream is kept out of the activity list.
			if a.linked(c) {
				t.Fatalf("log stream %d is in the activity list", c.s.ID)
			}
		case !c.done:
			open++
			if !a.linked(c) {
				t.Fatalf("stream %d is open but not in the activity list", c.s.ID)
			}
		}
		if c.s.Transport != TCP {
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
				n += len(p.data) + pieceOverhead
			}
			if n != h.heldLen || n > a.cfg.MaxBuffered || len(h.held) > maxPieces {
				t.Fatalf("stream %d dir %d: held %d bytes (counted %d) in %d pieces", c.s.ID, d, n, h.heldLen, len(h.held))
			}
			total += n
		}
	}
	listed := 0
	for c := a.lruHead; c != nil; c = c.next {
		listed++
		if c.gone || c.done || (c.next != nil && c.next.prev != c) {
			t.Fatalf("activity list: stream %d gone %v done %v, or badly linked", c.s.ID, c.gone, c.done)
		}
	}
	if listed != open || open != a.nLive || (a.cfg.MaxStreams > 0 && open > a.cfg.MaxStreams) {
		t.Fatalf("%d streams open, %d listed, nLive %d, limit %d", open, listed, a.nLive, a.cfg.MaxStreams)
	}
	if total != a.heldBytes || total > a.cfg.MaxHeldBytes {
		t.Fatalf("%d bytes held, counted %d, limit %d", total, a.heldBytes, a.cfg.MaxHeldBytes)
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
				if st.Streams != (StreamCounts{TCP: 1, UDP: 1}) || st.Malformed != 0 || len(st.Other) != 0 {
					t.Errorf("stats %+v", st)
				}
			})
		}
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
	wantOther := []NamedCount{{"ARP", 2}, {"ICMP", 1}, {"ICMPv6", 1}}
	if !slices.Equal(st.Other, wantOther) || st.Streams != (StreamCounts{TCP: 2, UDP: 2}) || st.Packets != 12 {
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
	// IPv4 fragments: the first carries the UDP header, the second not;
	// the datagram is reassembled and delivered whole.
	ip := pktbuild.UDPPacket(a, b, make([]byte, 40))
	first := ip
	first.Payload = ip.Payload[:24]
	first.MoreFragments = true
	second := ip
	second.Payload = ip.Payload[24:]
	second.FragOffset = 3
	f.frame(eth.Wrap(first.Encode()))
	f.frame(eth.Wrap(second.Encode()))
	// An IPv6 non-first fragment, never completed: counted.
	v6 := pktbuild.UDPPacket(cli6, srv6, []byte("zz"))
	v6.FragOffset, v6.HopByHop = 1, true
	f.frame(eth.Wrap(v6.Encode()))
	r, st := run(t, Config{}, f.pkts, true)
	eventsEqual(t, r.strings(), []string{
		"open 0", "dgram 0/0 first from b", "dgram 0/1 ", "dgram 0/1 x", "dgram 0/0 last",
		"dgram 0/1 " + string(make([]byte, 40)), "close 0/0", "close 0/1",
	})
	if r.streams[0].Addr != [2]netip.AddrPort{b, a} {
		t.Errorf("Addr %v", r.streams[0].Addr)
	}
	if st.TruncatedUDP != 1 || st.Fragments != 3 || st.Streams != (StreamCounts{UDP: 1}) ||
		st.FragmentsReassembled != 1 || st.FragmentsIncomplete != 1 || st.FragmentBytesLost != 18 {
		t.Errorf("stats %+v", st)
	}
	if r.dgrams[[2]int{0, 0}] != 2 || r.dgrams[[2]int{0, 1}] != 3 {
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
