package reassembly

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/pktbuild"
)

// countHandler counts bytes and does nothing else.
type countHandler struct{ bytes, gaps int64 }

func (h *countHandler) Open(*Stream, Stamp)                      {}
func (h *countHandler) Data(_ *Stream, _ Dir, _ Stamp, b []byte) { h.bytes += int64(len(b)) }
func (h *countHandler) Datagram(_ *Stream, _ Dir, _ Stamp, b []byte) {
	h.bytes += int64(len(b))
}
func (h *countHandler) Gap(_ *Stream, _ Dir, _ Stamp, n int64)         { h.gaps += n }
func (h *countHandler) Close(*Stream, Dir, Stamp)                      {}
func (h *countHandler) Conflict(*Stream, Dir, time.Time, int64, int64) {}

// BenchmarkTCPInOrder feeds in-order segments of 1448 bytes (Ethernet,
// IPv4) over 4 interleaved connections. Each iteration is one segment; the
// frames are reused with their sequence numbers advanced so that every
// segment is new data.
func BenchmarkTCPInOrder(b *testing.B) {
	const (
		conns   = 4
		segSize = 1448
		seqOff  = 14 + 20 + 4 // Ethernet + IPv4 + ports
	)
	payload := make([]byte, segSize)
	for i := range payload {
		payload[i] = byte(i)
	}
	var pkts [conns]*capture.Packet
	for i := range pkts {
		c := pktbuild.NewConn(netip.AddrPortFrom(netip.MustParseAddr("10.0.0.1"), uint16(40000+i)),
			netip.MustParseAddrPort("10.0.0.2:80"), uint32(i)<<28, 1)
		pkts[i] = c.Send(pktbuild.Client, payload).Packet(pktbuild.Encap{Type: capture.LinkEthernet}, time.Unix(0, 0))
	}
	h := &countHandler{}
	a := New(h, Config{})
	b.SetBytes(segSize)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		p := pkts[n%conns]
		n++
		seq := binary.BigEndian.Uint32(p.Data[seqOff:])
		a.Packet(p)
		binary.BigEndian.PutUint32(p.Data[seqOff:], seq+segSize)
	}
	b.StopTimer()
	if h.gaps != 0 || h.bytes != int64(n)*segSize {
		b.Fatalf("delivered %d bytes and %d gap bytes for %d segments", h.bytes, h.gaps, n)
	}
}

// BenchmarkTCPReorder is the same with every pair of segments swapped, so
// that half the segments are held and copied.
func BenchmarkTCPReorder(b *testing.B) {
	const segSize = 1448
	c := pktbuild.NewConn(netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:80"), 1, 1)
	payload := make([]byte, segSize)
	const seqOff = 14 + 20 + 4
	first := c.Send(pktbuild.Client, payload).Packet(pktbuild.Encap{Type: capture.LinkEthernet}, time.Unix(0, 0))
	second := c.Send(pktbuild.Client, payload).Packet(pktbuild.Encap{Type: capture.LinkEthernet}, time.Unix(0, 0))
	h := &countHandler{}
	a := New(h, Config{})
	a.Packet(first) // start the stream at the first segment
	binary.BigEndian.PutUint32(first.Data[seqOff:], binary.BigEndian.Uint32(first.Data[seqOff:])+2*segSize)
	b.SetBytes(2 * segSize)
	b.ReportAllocs()
	for b.Loop() {
		a.Packet(first)
		a.Packet(second)
		for _, p := range []*capture.Packet{first, second} {
			binary.BigEndian.PutUint32(p.Data[seqOff:], binary.BigEndian.Uint32(p.Data[seqOff:])+2*segSize)
		}
	}
	b.StopTimer()
	if h.gaps != 0 {
		b.Fatalf("%d gap bytes", h.gaps)
	}
}
