// Package reassembly turns captured packets into stream events: TCP
// connections as two ordered byte streams with gaps, UDP flows as datagrams,
// serial links as reads. It numbers streams in order of first appearance and
// keeps memory bounded. It knows nothing of protocols.
//
// It decodes the link layers and encapsulations found in real captures
// (Ethernet with VLAN tags, Linux SLL/SLL2, raw IP, BSD loopback, PPP,
// PPPoE, MPLS, NFLOG, GRE, VXLAN, IP in IP) down to the innermost TCP or
// UDP header, and names everything else in [Stats].Other. [HeaderLen]
// tells a capture loop how much of a packet to keep when it must drop the
// payload ([dissect/capture.Packet].Dropped): reassembly then reports the lost
// bytes as gaps of the right stream, so that nothing is lost silently.
// A TCP direction whose tail was not captured ends with a gap up to the
// last sequence number seen in any packet of its connection.
package reassembly

import (
	"net/netip"
	"time"
)

// Transport is how a stream's bytes travelled. It is defined here, where
// streams are made, and used as it is by the record model (dissect).
type Transport uint8

// Transports, as written in the output's "transport" key.
const (
	TCP Transport = iota + 1
	UDP
	Serial
)

func (t Transport) String() string {
	switch t {
	case TCP:
		return "tcp"
	case UDP:
		return "udp"
	case Serial:
		return "serial"
	}
	return "unknown"
}

// ParseTransport is the inverse of [Transport.String].
func ParseTransport(s string) (Transport, bool) {
	switch s {
	case "tcp":
		return TCP, true
	case "udp":
		return UDP, true
	case "serial":
		return Serial, true
	}
	return 0, false
}

// Dir is a direction of a stream: 0 is sent by the initiator (TCP: the SYN
// sender, or when no SYN was seen the sender of the first packet; UDP: the
// first sender; serial: the host, i.e. pcapng outbound), 1 by the other side.
type Dir uint8

// Other returns the opposite direction.
func (d Dir) Other() Dir { return d ^ 1 }

// StreamID identifies a stream: what reassembly knows of it, and what the
// record model (dissect.StreamInfo) tells protocols. It is defined here,
// once.
type StreamID struct {
	ID int // 0-based, in order of first appearance
	// Index is 0-based among the streams of its transport, in order of
	// first appearance: tshark's tcp.stream and udp.stream.
	Index     int
	Transport Transport
	// Addr[d] is the sender of direction d (both invalid for serial).
	Addr [2]netip.AddrPort
	// Link is the serial link name (pcapng if_name or device path), or
	// the name of the file a log stream was read from.
	Link string
	// Carries is the decode-as name of the protocol the stream's link type
	// says it carries ("vrpn" for a VRPN log, [capture.LinkVRPNLog]), ""
	// when only its bytes can tell.
	Carries string
}

// Stream is one TCP connection, UDP flow or serial link.
type Stream struct {
	StreamID
	// Joined[d] is set, before direction d's first Data, when the
	// capture joined that direction mid-way: its first bytes came with
	// neither its SYN nor a SYN-ACK that says where it starts, so they
	// need not start a message.
	Joined [2]bool
	// User is for the Handler's own state.
	User any
}

// Stamp says which unit of the input (a packet; a serial read; a log
// entry) brought something: its capture time and its number, 1-based, in
// the order the input gave the units to the [Assembler] (tshark's
// frame.number); 0 when unknown. An event carries the stamp of the unit
// that brought its bytes, which for bytes held out of order is an earlier
// packet's.
type Stamp struct {
	Time  time.Time
	Frame int64
}

// Before reports whether u came before v: an earlier time, or the same
// time and a lower number.
func (u Stamp) Before(v Stamp) bool {
	return u.Time.Before(v.Time) || u.Time.Equal(v.Time) && u.Frame < v.Frame
}

// Handler receives stream events in capture order, each with the [Stamp]
// of the unit that brought it (Open, Close and a Gap found at the end of
// the input: the unit being processed, or the last one). Byte slices are
// valid only during the call.
type Handler interface {
	// Open is called once, before any other event of s.
	Open(s *Stream, t Stamp)
	// Data gives the next contiguous bytes of direction dir (TCP, serial).
	Data(s *Stream, dir Dir, t Stamp, data []byte)
	// Datagram gives one UDP datagram of direction dir.
	Datagram(s *Stream, dir Dir, t Stamp, data []byte)
	// Gap reports n bytes of direction dir that were never captured, or
	// that dissect dropped ([dissect/capture.Packet].Dropped); the next Data
	// continues after them. On a UDP flow it stands for one lost
	// datagram of n bytes.
	Gap(s *Stream, dir Dir, t Stamp, n int64)
	// Conflict reports that retransmitted bytes [off, off+n) of
	// direction dir differ from the first copy, which was kept; off is
	// the stream offset. It is called once per conflicting segment, with
	// the range from its first differing byte to its last, and only for
	// bytes still held out of order when the retransmission came: bytes
	// already delivered are not compared. It comes with the time of the
	// retransmission (no record takes it).
	Conflict(s *Stream, dir Dir, t time.Time, off, n int64)
	// Close reports that direction dir has ended; no event of that
	// direction follows.
	Close(s *Stream, dir Dir, t Stamp)
}
