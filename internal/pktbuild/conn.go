package pktbuild

import (
	"net/netip"
	"time"

	"github.com/dissect-tools/dissect/capture"
)

// Side is one end of a [Conn].
type Side int

// Sides of a conversation.
const (
	Client Side = 0 // the side that opens the connection (sends the SYN)
	Server Side = 1
)

// Other returns the opposite side.
func (s Side) Other() Side { return 1 - s }

// Segment is one TCP segment of a [Conn], not yet framed. Tests may edit
// it (or use [Segment.Slice]) before framing it to build retransmissions
// and overlaps.
type Segment struct {
	From     Side
	Src, Dst netip.AddrPort
	TCP      TCP  // ports equal Src and Dst's
	HopByHop bool // IPv6: add a hop-by-hop options header
}

// IP returns the segment as an IP packet.
func (s Segment) IP() IP {
	ip := TCPPacket(s.Src, s.Dst, s.TCP)
	ip.HopByHop = s.HopByHop
	return ip
}

// Frame returns the segment framed by e.
func (s Segment) Frame(e Encap) Frame { return e.Wrap(s.IP().Encode()) }

// Packet returns the segment framed by e as a captured packet at time t.
func (s Segment) Packet(e Encap, t time.Time) *capture.Packet { return s.Frame(e).Packet(t) }

// Slice returns the part of the segment that carries payload bytes
// [from, to): the sequence number moves forward by from, SYN is kept only
// when from is 0 (a SYN precedes the payload, so the slice then starts at
// the SYN) and FIN only when to is the payload's end. A slice of a SYN
// segment with from > 0 starts one sequence number later than the byte
// offset suggests, as the SYN takes a number.
func (s Segment) Slice(from, to int) Segment {
	p := s.TCP.Payload
	if from < 0 || to > len(p) || from > to {
		panic("pktbuild: Slice out of range")
	}
	t := s.TCP
	t.Payload = p[from:to:to]
	t.Seq += uint32(from)
	if s.TCP.Flags&SYN != 0 && from > 0 {
		t.Seq++
		t.Flags &^= SYN
	}
	if to < len(p) {
		t.Flags &^= FIN
	}
	s.TCP = t
	return s
}

// Conn builds the segments of one TCP conversation and tracks the next
// sequence number of each side. Every segment but the first SYN carries ACK
// with the peer's next sequence number. It does not model windows or
// timers.
type Conn struct {
	Addr     [2]netip.AddrPort // Addr[Client], Addr[Server]
	Next     [2]uint32         // next sequence number each side sends
	HopByHop bool              // IPv6: every segment gets a hop-by-hop header
}

// NewConn returns a conversation between client and server whose next
// sequence numbers are clientSeq and serverSeq. When the conversation
// starts with [Conn.Handshake], these are the initial sequence numbers
// (ISNs) and the first data byte of each side has sequence ISN+1; for a
// conversation joined mid-stream they are the sequence numbers of the
// first bytes sent.
func NewConn(client, server netip.AddrPort, clientSeq, serverSeq uint32) *Conn {
	return &Conn{Addr: [2]netip.AddrPort{client, server}, Next: [2]uint32{clientSeq, serverSeq}}
}

// Segment returns a segment from side with explicit flags, sequence number
// and payload, with ACK (and the peer's next sequence number) added unless
// flags is a bare SYN. It does not advance the conversation.
func (c *Conn) Segment(from Side, flags Flags, seq uint32, payload []byte) Segment {
	t := TCP{
		SrcPort: c.Addr[from].Port(), DstPort: c.Addr[from.Other()].Port(),
		Seq: seq, Flags: flags, Payload: payload,
	}
	if flags != SYN {
		t.Flags |= ACK
		t.Ack = c.Next[from.Other()]
	}
	return Segment{From: from, Src: c.Addr[from], Dst: c.Addr[from.Other()], TCP: t, HopByHop: c.HopByHop}
}

// advance sends a segment from side taking n sequence numbers.
func (c *Conn) advance(from Side, flags Flags, payload []byte, n int) Segment {
	s := c.Segment(from, flags, c.Next[from], payload)
	c.Next[from] += uint32(n)
	return s
}

// SYN returns a bare SYN from side (a SYN-ACK when from is the server).
func (c *Conn) SYN(from Side) Segment {
	if from == Server {
		return c.advance(from, SYN|ACK, nil, 1)
	}
	return c.advance(from, SYN, nil, 1)
}

// Handshake returns the three segments SYN, SYN-ACK and ACK.
func (c *Conn) Handshake() []Segment {
	syn := c.SYN(Client)
	synack := c.SYN(Server)
	ack := c.Ack(Client)
	return []Segment{syn, synack, ack}
}

// Send returns a PSH|ACK segment carrying data from side, and advances
// that side by len(data).
func (c *Conn) Send(from Side, data []byte) Segment {
	return c.advance(from, PSH, data, len(data))
}

// Ack returns a bare ACK from side.
func (c *Conn) Ack(from Side) Segment { return c.advance(from, 0, nil, 0) }

// Fin returns a FIN|ACK from side, which takes one sequence number.
func (c *Conn) Fin(from Side) Segment { return c.advance(from, FIN, nil, 1) }

// FinData returns a FIN|PSH|ACK carrying data from side.
func (c *Conn) FinData(from Side, data []byte) Segment {
	return c.advance(from, FIN|PSH, data, len(data)+1)
}

// Rst returns a RST|ACK from side at its next sequence number.
func (c *Conn) Rst(from Side) Segment { return c.advance(from, RST, nil, 0) }

// Skip advances side by n sequence numbers without producing a segment,
// as if n bytes had been sent and not captured.
func (c *Conn) Skip(from Side, n int) { c.Next[from] += uint32(n) }

// Packets frames segs with e and returns them as captured packets, the
// first at t0 and each next one step later.
func Packets(e Encap, t0 time.Time, step time.Duration, segs ...Segment) []*capture.Packet {
	out := make([]*capture.Packet, len(segs))
	for i, s := range segs {
		out[i] = s.Packet(e, t0.Add(time.Duration(i)*step))
	}
	return out
}

// Serial returns one read of a serial link as a captured packet
// (capture.LinkUser0) on the link named name: dir is
// capture.DirOutbound for bytes the host sent to the device and
// capture.DirInbound for bytes it received.
func Serial(name string, dir capture.Direction, data []byte, t time.Time) *capture.Packet {
	return &capture.Packet{
		Time: t, LinkType: capture.LinkUser0, InterfaceName: name,
		Direction: dir, Data: data, Length: len(data),
	}
}
