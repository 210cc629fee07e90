package reassembly

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/pktbuild"
)

// fragIP splits the encoded IP packet ip into fragments whose data starts
// at the given offsets of its payload (multiples of 8, the first 0), per
// RFC 791 (IPv4) or RFC 8200 section 4.5 (IPv6: the 40-byte header and a
// hop-by-hop header, if ip has one, are the unfragmentable part; a
// fragment header follows it).
func fragIP(ip []byte, id uint32, cuts ...int) [][]byte {
	v6 := ip[0]>>4 == 6
	hl := int(ip[0]&0x0f) * 4
	if v6 {
		hl = 40
		if ip[6] == 0 {
			hl += (int(ip[41]) + 1) * 8
		}
	}
	hdr, body := ip[:hl], ip[hl:]
	var out [][]byte
	for i, off := range cuts {
		end := len(body)
		if i+1 < len(cuts) {
			end = cuts[i+1]
		}
		more := end < len(body)
		f := slices.Clone(hdr)
		if v6 {
			next := ip[6]
			prev := 6 // where the next-header field before the fragment header is
			if ip[6] == 0 {
				next, prev = ip[40], 40
			}
			fh := make([]byte, 8)
			fh[0] = next
			fo := uint16(off/8) << 3
			if more {
				fo |= 1
			}
			binary.BigEndian.PutUint16(fh[2:], fo)
			binary.BigEndian.PutUint32(fh[4:], id)
			f[prev] = ip6Fragment
			f = append(f, fh...)
			f = append(f, body[off:end]...)
			binary.BigEndian.PutUint16(f[4:], uint16(len(f)-40))
		} else {
			f = append(f, body[off:end]...)
			binary.BigEndian.PutUint16(f[2:], uint16(len(f)))
			binary.BigEndian.PutUint16(f[4:], uint16(id))
			ff := uint16(off / 8)
			if more {
				ff |= 0x2000
			}
			binary.BigEndian.PutUint16(f[6:], ff)
			f[10], f[11] = 0, 0
			binary.BigEndian.PutUint16(f[10:], pktbuild.Checksum(f[:hl]))
		}
		out = append(out, f)
	}
	return out
}

// fragFeed frames fragments in the order given by idx (all when nil).
func (f *feed) frags(frs [][]byte, idx ...int) {
	if idx == nil {
		for i := range frs {
			idx = append(idx, i)
		}
	}
	for _, i := range idx {
		f.frame(f.e.Wrap(frs[i]))
	}
}

func pattern(n, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + (i*7+seed)%26)
	}
	return b
}

// joined returns the data of the events of stream id direction d,
// gaps written as "<gap N>".
func joined(r *recorder, id int, d Dir) string {
	var sb strings.Builder
	for _, e := range r.events {
		if e.id != id || e.dir != d {
			continue
		}
		switch e.kind {
		case "data", "dgram":
			sb.WriteString(e.data)
		case "gap":
			fmt.Fprintf(&sb, "<gap %d>", e.n)
		}
	}
	return sb.String()
}

// TestFragTCP sends three 200-byte TCP segments each split into 5
// fragments (TCP header + 200 bytes = 220: data at 0, 48, 96, 144, 192),
// in order, reversed, and with the fragments of the segments interleaved;
// over IPv4 and over IPv6 with a hop-by-hop header before the fragment
// header. Every byte is delivered in order, without gaps, and each
// segment counts one reassembled datagram.
func TestFragTCP(t *testing.T) {
	for _, v6 := range []bool{false, true} {
		for _, order := range []string{"in order", "reversed", "interleaved"} {
			t.Run(fmt.Sprintf("v6=%v/%s", v6, order), func(t *testing.T) {
				cli, srv := cli4, srv4
				if v6 {
					cli, srv = cli6, srv6
				}
				c := pktbuild.NewConn(cli, srv, 100, 200)
				c.HopByHop = v6
				f := &feed{e: eth}
				f.seg(c.Handshake()...)
				var want []byte
				var sets [][][]byte
				for i := range 3 {
					p := pattern(200, i)
					want = append(want, p...)
					sets = append(sets, fragIP(c.Send(C, p).IP().Encode(), uint32(7+i), 0, 48, 96, 144, 192))
				}
				switch order {
				case "in order":
					for _, s := range sets {
						f.frags(s)
					}
				case "reversed":
					for _, s := range sets {
						f.frags(s, 4, 3, 2, 1, 0)
					}
				case "interleaved":
					for k := range 5 {
						for _, s := range sets {
							f.frags(s, (k+2)%5)
						}
					}
				}
				f.seg(c.Ack(S))
				r, st := run(t, Config{}, f.pkts, true)
				if got := joined(r, 0, 0); got != string(want) {
					t.Errorf("direction 0: %q\nwant %q", got, want)
				}
				if st.Fragments != 15 || st.FragmentsReassembled != 3 || st.FragmentsIncomplete != 0 ||
					st.TCPGapBytes != 0 || st.Streams.TCP != 1 {
					t.Errorf("stats %+v", st)
				}
			})
		}
	}
}

// TestFragUDP: a 3000-byte UDP datagram in three fragments, reversed, is
// delivered once, whole; IPv6 too, with a hop-by-hop header first.
func TestFragUDP(t *testing.T) {
	for _, v6 := range []bool{false, true} {
		cli, srv := cli4, srv4
		if v6 {
			cli, srv = cli6, srv6
		}
		p := pattern(3000, 3)
		ip := pktbuild.UDPPacket(cli, srv, p)
		ip.HopByHop = v6
		f := &feed{e: eth}
		f.frags(fragIP(ip.Encode(), 0x10203, 0, 1480, 2960), 2, 1, 0)
		r, st := run(t, Config{}, f.pkts, true)
		eventsEqual(t, r.strings(), []string{"open 0", "dgram 0/0 " + string(p), "close 0/0", "close 0/1"})
		if st.Fragments != 3 || st.FragmentsReassembled != 1 || st.FragmentsIncomplete != 0 {
			t.Errorf("v6=%v: stats %+v", v6, st)
		}
	}
}

// TestFragOverlap: an exact duplicate and a fragment lying inside a held
// one are ignored (the first copy wins); a partial overlap discards the
// whole datagram (Linux since 4.19, RFC 5722), which then becomes a gap
// of the whole segment at its place, reported at Flush. Discarded sets
// are counted as overlaps, and sets whose overlapping bytes differ as
// conflicts.
func TestFragOverlap(t *testing.T) {
	c := pktbuild.NewConn(cli4, srv4, 100, 200)
	f := &feed{e: eth}
	f.seg(c.Handshake()...)
	p0, p1 := pattern(200, 0), pattern(200, 1)
	s0 := fragIP(c.Send(C, p0).IP().Encode(), 1, 0, 48, 96, 144, 192)
	// A fragment inside the third one (data 96..144): bytes 104..120,
	// with other contents.
	inside := fragIP(c.Segment(C, pktbuild.ACK, 101, p1).IP().Encode(), 1, 0, 104, 120)[1]
	f.frags(s0, 0, 2, 2)
	f.frame(eth.Wrap(inside))
	f.frags(s0, 1, 3, 4)
	// The second segment (id 2): a fragment at 40..88 overlaps the
	// first (0..48) partially.
	s1 := fragIP(c.Segment(C, pktbuild.ACK, 301, p1).IP().Encode(), 2, 0, 48, 96, 144, 192)
	over := fragIP(c.Segment(C, pktbuild.ACK, 301, p1).IP().Encode(), 2, 0, 40, 88)[1]
	f.frags(s1, 0)
	f.frame(eth.Wrap(over))
	f.frags(s1, 1, 2, 3, 4)
	// The third segment (id 3): the same partial overlap, with other
	// bytes (p1 over p0).
	s2 := fragIP(c.Segment(C, pktbuild.ACK, 501, p0).IP().Encode(), 3, 0, 48, 96, 144, 192)
	over2 := fragIP(c.Segment(C, pktbuild.ACK, 501, p1).IP().Encode(), 3, 0, 40, 88)[1]
	f.frags(s2, 0)
	f.frame(eth.Wrap(over2))
	f.frags(s2, 1, 2, 3, 4)
	r, st := run(t, Config{}, f.pkts, true)
	if got, want := joined(r, 0, 0), string(p0)+"<gap 200><gap 200>"; got != want {
		t.Errorf("direction 0: %q\nwant %q", got, want)
	}
	// Sets 2 and 3 are discarded for their overlaps (each 200 bytes of
	// data and a 20-byte TCP header lost), not "never all arrived"; sets
	// 1 (a duplicate with other bytes, first copy kept) and 3 had
	// conflicting bytes.
	if st.FragmentsReassembled != 1 || st.FragmentsIncomplete != 0 || st.FragmentOverlaps != 2 ||
		st.FragmentConflicts != 2 || st.FragmentBytesLost != 440 {
		t.Errorf("stats %+v", st)
	}
}

// TestFragMissing: the middle fragment (data 96..144 of the IP payload,
// stream bytes 76..124) of a segment is never captured. Once the set times
// out (60 s of capture time later) or at Flush, the captured runs are
// delivered with a 48-byte gap at stream offset 76; the next segment,
// held meanwhile, follows.
func TestFragMissing(t *testing.T) {
	for _, byTimeout := range []bool{false, true} {
		c := pktbuild.NewConn(cli4, srv4, 100, 200)
		f := &feed{e: eth}
		f.seg(c.Handshake()...)
		p0, p1 := pattern(200, 0), pattern(30, 1)
		f.frags(fragIP(c.Send(C, p0).IP().Encode(), 1, 0, 48, 96, 144, 192), 0, 1, 3, 4)
		f.seg(c.Send(C, p1))
		if byTimeout {
			late := c.Ack(S).Packet(eth, t0.Add(fragTimeout+time.Second))
			f.pkts = append(f.pkts, late)
		}
		r, st := run(t, Config{}, f.pkts, true)
		want := string(p0[:76]) + "<gap 48>" + string(p0[124:]) + string(p1)
		if got := joined(r, 0, 0); got != want {
			t.Errorf("timeout=%v: direction 0: %q\nwant %q", byTimeout, got, want)
		}
		if st.FragmentsIncomplete != 1 || st.FragmentBytesLost != 48 || st.TCPGapBytes != 48 {
			t.Errorf("timeout=%v: stats %+v", byTimeout, st)
		}
	}
}

// TestFragNoFirst: a set without its first fragment cannot be placed in a
// stream: it is counted, its bytes lost.
func TestFragNoFirst(t *testing.T) {
	f := &feed{e: eth}
	frs := fragIP(pktbuild.UDPPacket(cli4, srv4, pattern(100, 0)).Encode(), 9, 0, 56)
	f.frags(frs, 1)
	r, st := run(t, Config{}, f.pkts, true)
	eventsEqual(t, r.strings(), nil)
	if st.Fragments != 1 || st.FragmentsIncomplete != 1 || st.FragmentBytesLost != 108 {
		t.Errorf("stats %+v", st)
	}
}

// TestFragUDPLost: a UDP datagram missing a fragment becomes one Gap of
// its UDP payload length on its flow.
func TestFragUDPLost(t *testing.T) {
	f := &feed{e: eth}
	f.udp(cli4, srv4, "before")
	f.frags(fragIP(pktbuild.UDPPacket(cli4, srv4, pattern(100, 0)).Encode(), 9, 0, 56), 0)
	f.udp(srv4, cli4, "after")
	r, st := run(t, Config{}, f.pkts, true)
	eventsEqual(t, r.strings(), []string{"open 0", "dgram 0/0 before", "dgram 0/1 after", "gap 0/0 100", "close 0/0", "close 0/1"})
	if st.FragmentsIncomplete != 1 || st.FragmentBytesLost != 108 || st.DroppedUDPBytes != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestFragDropped: fragments dissect dropped (capture.Packet.Dropped, cut
// by HeaderLen) complete their set as lost at once: the captured runs
// and a gap where the dropped fragment's data was.
func TestFragDropped(t *testing.T) {
	c := pktbuild.NewConn(cli4, srv4, 100, 200)
	f := &feed{e: eth}
	f.seg(c.Handshake()...)
	p0 := pattern(200, 0)
	frs := fragIP(c.Send(C, p0).IP().Encode(), 1, 0, 48, 96, 144, 192)
	for i, fr := range frs {
		fm := eth.Wrap(fr)
		if i == 2 {
			fm = fm.Truncate(HeaderLen(fm.LinkType, fm.Data))
		}
		p := fm.Packet(f.now())
		p.Dropped = i == 2
		f.pkts = append(f.pkts, p)
	}
	r, st := run(t, Config{}, f.pkts, false)
	want := string(p0[:76]) + "<gap 48>" + string(p0[124:])
	if got := joined(r, 0, 0); got != want {
		t.Errorf("direction 0: %q\nwant %q", got, want)
	}
	if st.FragmentsIncomplete != 1 || st.FragmentBytesLost != 48 {
		t.Errorf("stats %+v", st)
	}
	// A dropped first fragment keeps its TCP header.
	fm := eth.Wrap(frs[0])
	if got := HeaderLen(fm.LinkType, fm.Data); got != 14+20+20 {
		t.Errorf("HeaderLen of a first fragment %d", got)
	}
}

// TestFragBudget: with room for two sets, a third evicts the oldest, whose
// first fragment then becomes a gap of its stream at once; held bytes stay
// within the byte budget, which a single oversized set cannot exceed.
func TestFragBudget(t *testing.T) {
	r := newRecorder()
	a := New(r, Config{})
	a.frags.maxSets = 2
	a.frags.maxBytes = 1400
	var frs [][][]byte
	for i := range 3 {
		src := netip.AddrPortFrom(cli4.Addr(), uint16(1000+i))
		frs = append(frs, fragIP(pktbuild.UDPPacket(src, srv4, pattern(1200, i)).Encode(), uint32(5+i), 0, 400, 800))
	}
	for i, s := range frs {
		a.Packet(eth.Wrap(s[0]).Packet(t0.Add(time.Duration(i))))
		if a.frags.held > a.frags.maxBytes {
			t.Fatalf("held %d", a.frags.held)
		}
	}
	eventsEqual(t, r.strings(), []string{"open 0", "gap 0/0 1200"})
	// Sets 1 and 2 hold 1152 bytes; the rest of set 2 exceeds the
	// budget: set 1 is evicted, then set 2 alone is too large and
	// discarded, keeping only its first fragment until Flush.
	for _, fr := range frs[2][1:] {
		a.Packet(eth.Wrap(fr).Packet(t0.Add(time.Second)))
		a.checkFrags(t)
	}
	a.Flush(t0.Add(time.Hour))
	eventsEqual(t, r.strings(), []string{
		"open 0", "gap 0/0 1200", "open 1", "gap 1/0 1200", "open 2", "gap 2/0 1200",
		"close 0/0", "close 0/1", "close 1/0", "close 1/1", "close 2/0", "close 2/1",
	})
	st := a.Stats()
	if st.FragmentsIncomplete != 3 || st.FragmentsReassembled != 0 || a.frags.held != 0 || len(a.frags.sets) != 0 {
		t.Errorf("stats %+v, held %d", st, a.frags.held)
	}
	r.verify(t)
}

// TestFragAtomic: an IPv6 atomic fragment (fragment header with offset 0
// and M clear, RFC 6946) is decoded as a whole packet.
func TestFragAtomic(t *testing.T) {
	ip := pktbuild.UDPPacket(cli6, srv6, []byte("atomic")).Encode()
	fr := fragIP(ip, 1, 0)[0]
	f := &feed{e: eth}
	f.frame(eth.Wrap(fr))
	r, st := run(t, Config{}, f.pkts, true)
	eventsEqual(t, r.strings(), []string{"open 0", "dgram 0/0 atomic", "close 0/0", "close 0/1"})
	if st.Fragments != 0 || len(st.Other) != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestFragHostile: offsets past 65535 and empty non-last fragments are
// malformed; a fragment with a second, different end is dropped (the
// set kept); an IPv4 total length longer than what was captured makes the set
// lossy; none of it panics or leaves state after Flush.
func TestFragHostile(t *testing.T) {
	ip := pktbuild.UDPPacket(cli4, srv4, pattern(100, 0)).Encode()
	frs := fragIP(ip, 3, 0, 56)
	edit := func(b []byte, fn func(b []byte)) []byte {
		b = slices.Clone(b)
		fn(b)
		return b
	}
	past := edit(frs[1], func(b []byte) { binary.BigEndian.PutUint16(b[6:], 0x1fff) }) // 65528 + 52
	empty := edit(frs[0][:20], func(b []byte) {
		binary.BigEndian.PutUint16(b[2:], 20)
		binary.BigEndian.PutUint16(b[6:], 0x2000|3)
	})
	otherEnd := edit(frs[1], func(b []byte) { binary.BigEndian.PutUint16(b[6:], 8) })              // ends at 116, not 108
	lying := edit(frs[1], func(b []byte) { binary.BigEndian.PutUint16(b[2:], uint16(len(b)+40)) }) // claims 40 more bytes
	cases := []struct {
		name      string
		pkts      [][]byte
		malformed int64
		want      []string
	}{
		{"offset past 65535", [][]byte{past}, 1, nil},
		{"empty non-last", [][]byte{empty}, 1, nil},
		{"two ends", [][]byte{frs[0], frs[1], otherEnd}, 0, []string{"open 0", "dgram 0/0 " + string(pattern(100, 0)), "close 0/0", "close 0/1"}},
		{"other end dropped, set kept", [][]byte{frs[1], otherEnd, frs[0]}, 0, []string{"open 0", "dgram 0/0 " + string(pattern(100, 0)), "close 0/0", "close 0/1"}},
		{"two ends first", [][]byte{otherEnd, frs[1], frs[0]}, 0, []string{"open 0", "gap 0/0 100", "close 0/0", "close 0/1"}},
		{"lying length", [][]byte{frs[0], lying}, 1, []string{"open 0", "gap 0/0 100", "close 0/0", "close 0/1"}},
	}
	for _, c := range cases {
		f := &feed{e: eth}
		for _, b := range c.pkts {
			f.frame(eth.Wrap(b))
		}
		r, st := run(t, Config{}, f.pkts, true)
		eventsEqual(t, r.strings(), c.want)
		if st.Malformed != c.malformed {
			t.Errorf("%s: stats %+v", c.name, st)
		}
	}
}

// TestFragTunnel: an IPv4 packet fragmented inside a GRE tunnel, whose
// outer packet is fragmented too, is decoded as its inner TCP segment.
func TestFragTunnel(t *testing.T) {
	c := pktbuild.NewConn(cli4, srv4, 100, 200)
	p := pattern(100, 0)
	inner := fragIP(c.Send(C, p).IP().Encode(), 4, 0, 64)
	f := &feed{e: pktbuild.Encap{Type: capture.LinkRaw}}
	for i, in := range inner {
		gre := append([]byte{0, 0, 0x08, 0}, in...)
		outer := pktbuild.IP{Src: cli4.Addr(), Dst: srv4.Addr(), Proto: ipProtoGRE, ID: uint16(i), Payload: gre}.Encode()
		f.frags(fragIP(outer, uint32(20+i), 0, 40), 1, 0)
	}
	r, st := run(t, Config{}, f.pkts, true)
	if got := joined(r, 0, 0); got != string(p) {
		t.Errorf("got %q", got)
	}
	if st.FragmentsReassembled != 3 {
		t.Errorf("stats %+v", st)
	}
}

// checkFrags checks the fragment table's accounting.
func (a *Assembler) checkFrags(t testing.TB) {
	ft := &a.frags
	held := 0
	for _, s := range ft.order {
		n := fragSetCost
		for i, p := range s.pieces {
			n += len(p.data) + fragPieceCost
			if len(p.data) > p.n || (i > 0 && s.pieces[i-1].off+s.pieces[i-1].n > p.off) {
				t.Fatalf("bad pieces %+v", s.pieces)
			}
		}
		if n != s.cost || ft.sets[s.key] != s {
			t.Fatalf("set cost %d, counted %d", s.cost, n)
		}
		held += n
	}
	if held != ft.held || held > ft.maxBytes || len(ft.sets) != len(ft.order) || len(ft.order) > ft.maxSets {
		t.Fatalf("held %d, counted %d, budget %d; %d sets", ft.held, held, ft.maxBytes, len(ft.order))
	}
}

// BenchmarkFragTCP feeds 1448-byte TCP segments (Ethernet, IPv4), each
// split into 5 fragments (data at 0, 296, 592, 888, 1184 of its 1468-byte
// IP payload), the last first; each iteration is one segment.
func BenchmarkFragTCP(b *testing.B) {
	const segSize = 1448
	const seqOff = 14 + 20 + 4 // in the first fragment
	c := pktbuild.NewConn(cli4, srv4, 1, 1)
	var pkts []*capture.Packet
	for _, fr := range fragIP(c.Send(C, pattern(segSize, 0)).IP().Encode(), 1, 0, 296, 592, 888, 1184) {
		pkts = append(pkts, eth.Wrap(fr).Packet(t0))
	}
	slices.Reverse(pkts)
	first := pkts[len(pkts)-1]
	h := &countHandler{}
	a := New(h, Config{})
	b.SetBytes(segSize)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		for _, p := range pkts {
			a.Packet(p)
		}
		n++
		seq := binary.BigEndian.Uint32(first.Data[seqOff:])
		binary.BigEndian.PutUint32(first.Data[seqOff:], seq+segSize)
	}
	b.StopTimer()
	if h.gaps != 0 || h.bytes != int64(n)*segSize {
		b.Fatalf("delivered %d bytes and %d gap bytes for %d segments", h.bytes, h.gaps, n)
	}
}
