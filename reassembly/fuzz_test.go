package reassembly

import (
	"encoding/binary"
	"net/netip"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/pktbuild"
)

// fuzzLinks are the link types a raw fuzz record can carry.
var fuzzLinks = []capture.LinkType{
	capture.LinkEthernet, capture.LinkLinuxSLL, capture.LinkLinuxSLL2, capture.LinkRaw,
	capture.LinkIPv4, capture.LinkIPv6, capture.LinkNull, capture.LinkLoop, capture.LinkUser0, 105,
	capture.LinkPPP, capture.LinkPPPWithDir, capture.LinkPPPHDLC, capture.LinkNFLOG,
}

// fuzzEncaps frame the structured segments.
var fuzzEncaps = []pktbuild.Encap{
	{Type: capture.LinkEthernet}, {Type: capture.LinkEthernet, VLANs: []uint16{3}, Pad: true},
	{Type: capture.LinkLinuxSLL}, {Type: capture.LinkLinuxSLL2}, {Type: capture.LinkRaw},
	{Type: capture.LinkNull}, {Type: capture.LinkNull, NullBigEndian: true}, {Type: capture.LinkLoop},
}

// Structured fuzz connections: 10.9.9.1:(50000+i) -> 10.9.9.2:7000, with
// initial sequence numbers near the 2^32 wrap for some.
var fuzzISN = [2][2]uint32{{1000, 0xfffff000}, {0xffffff00, 77}}

func fuzzAddr(i int, side pktbuild.Side) netip.AddrPort {
	if side == pktbuild.Server {
		return netip.MustParseAddrPort("10.9.9.2:7000")
	}
	return netip.AddrPortFrom(netip.MustParseAddr("10.9.9.1"), uint16(50000+i))
}

// Fuzz record kinds (first byte of a record, modulo 8).
const (
	// 0, 1: [kind][link][len lo][len hi][dir] then len bytes, a raw
	// frame (dir bit 7: cut at HeaderLen and marked Dropped; bit 6:
	// marked Dropped as it is, with Length 2*len).
	recRaw    = 0
	recExpire = 7 // [kind][idle ms]: Expire
	// Any other kind: [kind][ctl][off lo][off hi][len][encap], a
	// structured TCP segment. ctl bit 0: connection, bit 1: side, bit 2:
	// SYN, bit 3: FIN, bits 4-5 == 3: RST, bit 6: truncate, bit 7: a SYN
	// with a different ISN; encap bit 7: cut at HeaderLen and marked
	// Dropped, encap bit 6: 0x80 added to each payload byte (a conflicting copy). The segment starts 16 bytes before the
	// side's first data byte plus (off & 0x3fff); its payload byte at
	// sequence number s is byte(s).
)

func rawRecord(link int, dir byte, frame []byte) []byte {
	b := []byte{recRaw, byte(link), 0, 0, dir}
	binary.LittleEndian.PutUint16(b[2:], uint16(len(frame)))
	return append(b, frame...)
}

func segRecord(ctl byte, off uint16, n byte, encap byte) []byte {
	return []byte{2, ctl, byte(off), byte(off >> 8), n, encap}
}

// fuzzSegment builds the structured segment of a record.
func fuzzSegment(ctl byte, off uint16, n int) (pktbuild.Segment, bool) {
	ci := int(ctl & 1)
	side := pktbuild.Side(ctl >> 1 & 1)
	first := fuzzISN[ci][side] + 1
	seq := first + uint32(off&0x3fff) - 16
	var flags pktbuild.Flags
	if ctl&4 != 0 {
		flags |= pktbuild.SYN
		seq = first - 1
		if ctl&0x80 != 0 {
			seq += 0x1000_0000
		}
	}
	if ctl&8 != 0 {
		flags |= pktbuild.FIN
	}
	if ctl>>4&3 == 3 {
		flags |= pktbuild.RST
	}
	if flags != pktbuild.SYN {
		flags |= pktbuild.ACK
	}
	if flags&pktbuild.SYN != 0 && side == pktbuild.Server {
		flags |= pktbuild.ACK
	}
	dseq := seq
	if flags&pktbuild.SYN != 0 {
		dseq++
	}
	payload := make([]byte, n)
	for i := range payload {
		payload[i] = byte(dseq + uint32(i))
	}
	c := pktbuild.NewConn(fuzzAddr(ci, pktbuild.Client), fuzzAddr(ci, pktbuild.Server), fuzzISN[ci][0]+1, fuzzISN[ci][1]+1)
	s := c.Segment(side, flags, seq, payload)
	s.TCP.Flags = flags // no ACK added to a bare SYN
	return s, ctl&0x40 != 0
}

// isFuzzTuple reports whether a frame decodes to a packet of the
// structured connections' hosts (raw records may not forge those, or the
// content check would not hold).
func isFuzzTuple(lt capture.LinkType, b []byte) bool {
	var pk packet
	if decode(lt, b, &pk) != outStream || !pk.v4 {
		return false
	}
	return [3]byte(pk.src[:3]) == [3]byte{10, 9, 9} || [3]byte(pk.dst[:3]) == [3]byte{10, 9, 9}
}

// fuzzChecker follows the bytes of the structured connections: their
// payload byte at sequence number s is byte(s), so within one direction
// the byte at stream offset o is byte(base+o) for a fixed base; any
// misplaced, repeated or skipped byte (not a multiple of 256) breaks that.
type fuzzChecker struct {
	*recorder
	t      *testing.T
	off    map[[2]int]int64
	base   map[[2]int]byte
	gapSum int64 // TCP
	udpGap int64
}

func (c *fuzzChecker) structured(s *Stream) bool {
	return s.Transport == TCP && s.Addr[0].Addr().Is4() && s.Addr[0].Addr().As4()[2] == 9 && s.Addr[0].Addr().As4()[0] == 10
}

func (c *fuzzChecker) Data(s *Stream, dir Dir, t Stamp, data []byte) {
	c.recorder.Data(s, dir, t, data)
	k := [2]int{s.ID, int(dir)}
	if c.structured(s) {
		o := c.off[k]
		b, ok := c.base[k]
		if !ok {
			b = data[0] - byte(o)
			c.base[k] = b
		}
		for i, x := range data {
			// A conflicting copy (+0x80, whichever came first: the
			// base may be off by 0x80 too) may be the first.
			if want := b + byte(o+int64(i)); x != want && x != want^0x80 {
				c.fail("stream %d dir %d: byte %#x at offset %d, want %#x", s.ID, dir, x, o+int64(i), b+byte(o+int64(i)))
				break
			}
		}
	}
	c.off[k] += int64(len(data))
}

func (c *fuzzChecker) Gap(s *Stream, dir Dir, t Stamp, n int64) {
	c.recorder.Gap(s, dir, t, n)
	c.off[[2]int{s.ID, int(dir)}] += n
	switch s.Transport {
	case TCP:
		c.gapSum += n
	case UDP:
		c.udpGap += n
	}
}

// fuzzRun interprets data as a sequence of records (see recRaw) and checks
// the invariants: no panic, the Handler contract (Open first with IDs in
// order, nothing after a direction's Close, every direction closed after
// Flush), contiguous and correctly placed bytes on the structured
// connections, the held-data bounds after every packet, and stats that
// agree with the events.
func fuzzRun(t *testing.T, data []byte) Stats {
	r := newRecorder()
	r.keep = false
	fc := &fuzzChecker{recorder: r, t: t, off: map[[2]int]int64{}, base: map[[2]int]byte{}}
	a := New(fc, Config{MaxBuffered: 2000, MaxHeldBytes: 3000, MaxStreams: 3, IdleTimeout: 40 * time.Millisecond, MaxFinished: 2})
	a.ObserveSegments(func(s *Stream, d Dir, seg Segment) {
		// Told for open connections only, before their bytes.
		if s.Transport != TCP || d > 1 || seg.N < 0 || seg.N > 1<<16 {
			t.Fatalf("observed %+v on stream %d (%v) dir %d", seg, s.ID, s.Transport, d)
		}
	})
	now := t0
	for len(data) > 0 {
		kind := data[0] % 8
		now = now.Add(time.Millisecond)
		switch {
		case kind <= 1:
			if len(data) < 5 {
				data = nil
				continue
			}
			lt := fuzzLinks[int(data[1])%len(fuzzLinks)]
			if data[1] == 0xff {
				// Outside fuzzLinks, whose length maps the seeds.
				lt = capture.LinkVRPNLog
			}
			n := min(int(binary.LittleEndian.Uint16(data[2:])), len(data)-5)
			ctl := data[4]
			dir := capture.Direction((ctl & 0x3f) % 3)
			frame := data[5 : 5+n]
			data = data[5+n:]
			if isFuzzTuple(lt, frame) {
				continue
			}
			p := &capture.Packet{Time: now, LinkType: lt, Data: frame, Length: n,
				Interface: int(dir), Direction: dir}
			switch {
			case ctl&0x80 != 0:
				p.Data, p.Dropped = frame[:HeaderLen(lt, frame)], true
			case ctl&0x40 != 0:
				p.Dropped, p.Length = true, 2*n
			}
			a.Packet(p)
		case kind == recExpire:
			if len(data) < 2 {
				data = nil
				continue
			}
			a.Expire(now, time.Duration(data[1])*time.Millisecond)
			data = data[2:]
		default:
			if len(data) < 6 {
				data = nil
				continue
			}
			seg, trunc := fuzzSegment(data[1], binary.LittleEndian.Uint16(data[2:]), int(data[4]))
			e := fuzzEncaps[int(data[5]&0x7f)%len(fuzzEncaps)]
			drop := data[5]&0x80 != 0
			if data[5]&0x40 != 0 {
				for i := range seg.TCP.Payload {
					seg.TCP.Payload[i] ^= 0x80
				}
			}
			data = data[6:]
			f := seg.Frame(e)
			if trunc {
				f = f.Truncate(len(f.Data) - len(seg.TCP.Payload)/2)
			}
			p := f.Packet(now)
			if drop {
				p.Data, p.Dropped = p.Data[:HeaderLen(p.LinkType, p.Data)], true
			}
			a.Packet(p)
		}
		a.checkInternal(t)
	}
	a.Flush(now.Add(time.Second))
	r.allClosed()
	st := a.Stats()
	var opened StreamCounts
	for _, s := range r.streams {
		switch s.Transport {
		case TCP:
			opened.TCP++
		case UDP:
			opened.UDP++
		case Serial:
			opened.Serial++
		}
	}
	if st.Streams != opened {
		r.fail("stats count %+v streams, %+v opened", st.Streams, opened)
	}
	if st.TCPGapBytes != fc.gapSum {
		r.fail("stats count %d gap bytes, events %d", st.TCPGapBytes, fc.gapSum)
	}
	if st.TCPConflictBytes != r.conflicts {
		r.fail("stats count %d conflicting bytes, events %d", st.TCPConflictBytes, r.conflicts)
	}
	if st.DroppedUDPBytes+st.FragmentUDPGapBytes != fc.udpGap {
		r.fail("stats count %d dropped UDP bytes and %d of incomplete fragmented datagrams, events %d", st.DroppedUDPBytes, st.FragmentUDPGapBytes, fc.udpGap)
	}
	if len(a.flows) != 0 || len(a.order) != 0 || len(a.finished) != 0 {
		r.fail("state left after Flush")
	}
	r.verify(t)
	return st
}

func FuzzAssembler(f *testing.F) {
	// Structured conversations: handshake, data in and out of order, a
	// lost segment, FINs, a reset, a port reuse, a truncated segment.
	var s []byte
	s = append(s, segRecord(0x04, 0, 0, 0)...)     // SYN
	s = append(s, segRecord(0x06, 0, 0, 1)...)     // SYN-ACK
	s = append(s, segRecord(0x00, 16, 10, 2)...)   // client data 0..9
	s = append(s, segRecord(0x00, 36, 10, 3)...)   // 20..29 (held)
	s = append(s, segRecord(0x00, 26, 10, 4)...)   // 10..19 (overlap)
	s = append(s, segRecord(0x02, 16, 200, 5)...)  // server data
	s = append(s, segRecord(0x42, 216, 100, 6)...) // truncated
	s = append(s, segRecord(0x02, 400, 5, 7)...)   // after a hole
	s = append(s, segRecord(0x08, 46, 0, 0)...)    // client FIN
	s = append(s, segRecord(0x0a, 405, 0, 0)...)   // server FIN
	s = append(s, segRecord(0x84, 0, 0, 0)...)     // new ISN: new stream
	s = append(s, segRecord(0x31, 16, 3, 0)...)    // RST on the other connection
	s = append(s, 7, 0)                            // Expire
	f.Add(s)
	// Dropped segments (encap bit 7), a lost tail acknowledged.
	var d []byte
	d = append(d, segRecord(0x00, 16, 10, 0)...)    // client data 0..9
	d = append(d, segRecord(0x00, 26, 10, 0x81)...) // 10..19 dropped
	d = append(d, segRecord(0x02, 16, 0, 2)...)     // server ACK
	d = append(d, segRecord(0x00, 60, 0, 0)...)     // client bare ACK at 44: tail 20..43 lost
	f.Add(d)
	f.Add(append(segRecord(0x01, 5000, 255, 0), segRecord(0x01, 16, 255, 1)...))
	f.Add(limitsSeed())
	// Raw frames of various link types, from the builders and from a real
	// capture.
	var r []byte
	cn := pktbuild.NewConn(netip.MustParseAddrPort("[2001:db8::1]:1"), netip.MustParseAddrPort("[2001:db8::2]:2"), 1, 2)
	cn.HopByHop = true
	for i, e := range fuzzEncaps {
		r = append(r, rawRecord(i%len(fuzzLinks), 0, cn.Send(pktbuild.Client, []byte("v6 data")).Frame(e).Data)...)
	}
	r = append(r, rawRecord(8, 1, []byte("serial read"))...)
	r = append(r, rawRecord(8, 2, []byte("serial write"))...)
	r = append(r, rawRecord(0xff, 1, []byte("vrpn log entry"))...)
	r = append(r, rawRecord(0, 0, pktbuild.Encap{}.Ether(pktbuild.EtherTypeARP, make([]byte, 28)).Data)...)
	f.Add(r)
	// Encapsulations (data segments and the UDP exchange), whole and
	// dropped, and a dropped serial read.
	var en []byte
	for i, w := range encapCases {
		pkts, _ := encapConversation(w, cli6, srv6)
		for _, p := range pkts[3:] {
			en = append(en, rawRecord(slices.Index(fuzzLinks, p.LinkType), byte(i%2)<<7, p.Data)...)
		}
	}
	en = append(en, rawRecord(8, 0x41, []byte("x"))...)
	f.Add(en)
	if pkts, err := readPcap(filepath.Join(vrpnDir, "b_udp_tcp.pcap")); err == nil {
		var v []byte
		for _, p := range pkts[:12] {
			v = append(v, rawRecord(0, 0, p.Data)...)
		}
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRun(t, data) })
}

// limitsSeed exercises the fuzz configuration's limits: a conflicting copy
// of held data, more connections than MaxStreams, more held bytes than
// MaxHeldBytes, and records that outlast the idle timeout.
func limitsSeed() []byte {
	// Conflicting copies of held data; many connections (the limits:
	// 3 streams, 40 ms idle, 3000 bytes held in all).
	var cf []byte
	cf = append(cf, segRecord(0x00, 16, 10, 0)...)
	cf = append(cf, segRecord(0x00, 40, 50, 0)...)
	cf = append(cf, segRecord(0x00, 30, 40, 0x41)...) // overlaps the held copy, altered
	cf = append(cf, segRecord(0x01, 16, 10, 0)...)
	cf = append(cf, segRecord(0x01, 2000, 255, 0)...)
	cf = append(cf, segRecord(0x03, 2000, 255, 0)...)
	for i := range 50 {
		cf = append(cf, segRecord(0x02, uint16(3000+i*200), 190, 0)...)
	}
	for i := range 8 {
		cf = append(cf, rawRecord(0, 0, pktbuild.NewConn(netip.AddrPortFrom(netip.MustParseAddr("10.8.0.1"), uint16(i)),
			netip.MustParseAddrPort("10.8.0.2:1"), 1, 1).Send(pktbuild.Client, []byte("x")).Frame(fuzzEncaps[0]).Data)...)
	}
	return cf
}
