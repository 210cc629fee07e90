// Package pktbuild builds raw captured frames for tests: a TCP segment or
// UDP datagram, inside IPv4 or IPv6, inside one of the link layers dissect
// reads (Ethernet II with optional 802.1Q tags, Linux SLL and SLL2, raw IP,
// BSD null and OpenBSD loop). Checksums are computed, so the frames are what
// a real capture of a correct stack would hold.
//
// The layers are built inside out and independently:
//
//	seg := pktbuild.TCP{SrcPort: 40000, DstPort: 3883, Seq: 1, Flags: pktbuild.ACK, Payload: data}
//	ip := pktbuild.IP{Src: a, Dst: b, Proto: pktbuild.ProtoTCP, Payload: seg.Encode(a, b)}
//	f := pktbuild.Encap{Type: capture.LinkEthernet}.Wrap(ip.Encode())
//	pkt := f.Packet(t)
//
// [Conn] tracks the sequence numbers of both sides of a TCP conversation so
// that a test can produce a handshake, data, FIN and RST segments, and then
// drop, duplicate, reorder, split or overlap them before framing.
//
// The package is for tests: it panics on impossible requests (mixed address
// families, oversize packets) instead of returning errors.
package pktbuild

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"time"

	"github.com/dissect-tools/dissect/capture"
)

// IP protocol numbers used by the builders.
const (
	ProtoICMP   uint8 = 1
	ProtoTCP    uint8 = 6
	ProtoUDP    uint8 = 17
	ProtoICMPv6 uint8 = 58
)

// EtherTypes used by the builders.
const (
	EtherTypeIPv4  uint16 = 0x0800
	EtherTypeARP   uint16 = 0x0806
	EtherTypeVLAN  uint16 = 0x8100 // 802.1Q customer tag
	EtherTypeQinQ  uint16 = 0x88a8 // 802.1ad service tag
	EtherTypeIPv6  uint16 = 0x86dd
	etherMinLength        = 60 // minimum Ethernet frame without the FCS
)

// Address families written in BSD null / loop headers.
const (
	AFInet         uint32 = 2
	AFInet6BSD     uint32 = 24 // NetBSD, OpenBSD
	AFInet6FreeBSD uint32 = 28
	AFInet6Darwin  uint32 = 30
)

// Flags are TCP header flags.
type Flags uint8

// TCP flag bits.
const (
	FIN Flags = 1 << iota
	SYN
	RST
	PSH
	ACK
	URG
)

// String lists the set flags, e.g. "SYN|ACK".
func (f Flags) String() string {
	names := []string{"FIN", "SYN", "RST", "PSH", "ACK", "URG"}
	s := ""
	for i, n := range names {
		if f&(1<<i) != 0 {
			if s != "" {
				s += "|"
			}
			s += n
		}
	}
	if s == "" {
		return "none"
	}
	return s
}

// Checksum returns the Internet checksum (RFC 1071) of the concatenation of
// parts: the one's complement of the one's complement sum of 16-bit
// big-endian words, an odd trailing byte padded with zero. Parts may have
// odd lengths; they are summed as one byte string.
func Checksum(parts ...[]byte) uint16 {
	var sum uint32
	odd := false // true when the previous part ended in the middle of a word
	for _, p := range parts {
		for _, b := range p {
			if odd {
				sum += uint32(b)
			} else {
				sum += uint32(b) << 8
			}
			odd = !odd
		}
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	return ^uint16(sum)
}

// pseudoHeader returns the TCP/UDP pseudo-header of RFC 793 (IPv4) or
// RFC 8200 section 8.1 (IPv6) for a transport segment of length n.
func pseudoHeader(src, dst netip.Addr, proto uint8, n int) []byte {
	if src.Is4() != dst.Is4() {
		panic("pktbuild: source and destination address families differ")
	}
	if src.Is4() {
		h := make([]byte, 12)
		s, d := src.As4(), dst.As4()
		copy(h[0:4], s[:])
		copy(h[4:8], d[:])
		h[9] = proto
		binary.BigEndian.PutUint16(h[10:12], uint16(n))
		return h
	}
	h := make([]byte, 40)
	s, d := src.As16(), dst.As16()
	copy(h[0:16], s[:])
	copy(h[16:32], d[:])
	binary.BigEndian.PutUint32(h[32:36], uint32(n))
	h[39] = proto
	return h
}

// TCP is a TCP segment. Options are raw option bytes, padded with
// end-of-option-list zeros to a multiple of 4.
type TCP struct {
	SrcPort, DstPort uint16
	Seq, Ack         uint32
	Flags            Flags
	Window           uint16 // 0 means 65535
	Options          []byte
	Payload          []byte
}

// Encode returns the segment with its checksum computed for the given IP
// source and destination.
func (t TCP) Encode(src, dst netip.Addr) []byte {
	opt := len(t.Options)
	if opt%4 != 0 {
		opt += 4 - opt%4
	}
	if opt > 40 {
		panic("pktbuild: more than 40 bytes of TCP options")
	}
	hl := 20 + opt
	b := make([]byte, hl+len(t.Payload))
	binary.BigEndian.PutUint16(b[0:2], t.SrcPort)
	binary.BigEndian.PutUint16(b[2:4], t.DstPort)
	binary.BigEndian.PutUint32(b[4:8], t.Seq)
	binary.BigEndian.PutUint32(b[8:12], t.Ack)
	b[12] = byte(hl/4) << 4
	b[13] = byte(t.Flags)
	w := t.Window
	if w == 0 {
		w = 65535
	}
	binary.BigEndian.PutUint16(b[14:16], w)
	copy(b[20:], t.Options)
	copy(b[hl:], t.Payload)
	binary.BigEndian.PutUint16(b[16:18], Checksum(pseudoHeader(src, dst, ProtoTCP, len(b)), b))
	return b
}

// UDP is a UDP datagram.
type UDP struct {
	SrcPort, DstPort uint16
	Payload          []byte
}

// Encode returns the datagram with its length and checksum computed for
// the given IP source and destination (a computed checksum of 0 is sent as
// 0xffff, RFC 768).
func (u UDP) Encode(src, dst netip.Addr) []byte {
	n := 8 + len(u.Payload)
	if n > 0xffff {
		panic("pktbuild: UDP datagram too long")
	}
	b := make([]byte, n)
	binary.BigEndian.PutUint16(b[0:2], u.SrcPort)
	binary.BigEndian.PutUint16(b[2:4], u.DstPort)
	binary.BigEndian.PutUint16(b[4:6], uint16(n))
	copy(b[8:], u.Payload)
	c := Checksum(pseudoHeader(src, dst, ProtoUDP, n), b)
	if c == 0 {
		c = 0xffff
	}
	binary.BigEndian.PutUint16(b[6:8], c)
	return b
}

// IP is an IPv4 or IPv6 packet; the family is that of Src and Dst, which
// must agree.
type IP struct {
	Src, Dst netip.Addr
	Proto    uint8  // next protocol: ProtoTCP, ProtoUDP, ProtoICMP...
	TTL      uint8  // hop limit; 0 means 64
	TOS      uint8  // IPv4 type of service / IPv6 traffic class
	ID       uint16 // IPv4 identification
	// DontFragment sets the IPv4 DF flag.
	DontFragment bool
	// MoreFragments and FragOffset (in 8-byte units) make an IPv4
	// fragment; for IPv6 a fragment extension header is added when
	// either is set.
	MoreFragments bool
	FragOffset    uint16
	// HopByHop adds an IPv6 hop-by-hop options extension header (8 bytes
	// of PadN) before the payload. Ignored for IPv4.
	HopByHop bool
	// Options are raw IPv4 header options, padded with zeros (end of
	// option list) to a multiple of 4 bytes; at most 40. Ignored for IPv6.
	Options []byte
	Payload []byte // transport header and data, already encoded
}

// Encode returns the packet, with the IPv4 header checksum computed.
func (p IP) Encode() []byte {
	if !p.Src.IsValid() || !p.Dst.IsValid() || p.Src.Is4() != p.Dst.Is4() {
		panic(fmt.Sprintf("pktbuild: bad IP addresses %v, %v", p.Src, p.Dst))
	}
	ttl := p.TTL
	if ttl == 0 {
		ttl = 64
	}
	if p.Src.Is4() {
		hl := 20 + (len(p.Options)+3)/4*4
		if hl > 60 {
			panic("pktbuild: more than 40 bytes of IPv4 options")
		}
		n := hl + len(p.Payload)
		if n > 0xffff {
			panic("pktbuild: IPv4 packet too long")
		}
		b := make([]byte, n)
		b[0] = 0x40 | byte(hl/4)
		b[1] = p.TOS
		binary.BigEndian.PutUint16(b[2:4], uint16(n))
		binary.BigEndian.PutUint16(b[4:6], p.ID)
		ff := p.FragOffset & 0x1fff
		if p.DontFragment {
			ff |= 0x4000
		}
		if p.MoreFragments {
			ff |= 0x2000
		}
		binary.BigEndian.PutUint16(b[6:8], ff)
		b[8] = ttl
		b[9] = p.Proto
		s, d := p.Src.As4(), p.Dst.As4()
		copy(b[12:16], s[:])
		copy(b[16:20], d[:])
		copy(b[20:], p.Options)
		binary.BigEndian.PutUint16(b[10:12], Checksum(b[:hl]))
		copy(b[hl:], p.Payload)
		return b
	}
	var ext []byte
	next := p.Proto
	if p.MoreFragments || p.FragOffset != 0 {
		f := make([]byte, 8)
		f[0] = next
		fo := p.FragOffset << 3
		if p.MoreFragments {
			fo |= 1
		}
		binary.BigEndian.PutUint16(f[2:4], fo)
		binary.BigEndian.PutUint32(f[4:8], uint32(p.ID))
		ext = append(f, ext...)
		next = 44
	}
	if p.HopByHop {
		// Next header, length 0 (8 bytes in all), then a PadN option
		// (type 1) with 4 bytes of padding.
		h := []byte{next, 0, 1, 4, 0, 0, 0, 0}
		ext = append(h, ext...)
		next = 0
	}
	pl := len(ext) + len(p.Payload)
	if pl > 0xffff {
		panic("pktbuild: IPv6 payload too long")
	}
	b := make([]byte, 40+pl)
	b[0] = 0x60 | p.TOS>>4
	b[1] = p.TOS << 4
	binary.BigEndian.PutUint16(b[4:6], uint16(pl))
	b[6] = next
	b[7] = ttl
	s, d := p.Src.As16(), p.Dst.As16()
	copy(b[8:24], s[:])
	copy(b[24:40], d[:])
	copy(b[40:], ext)
	copy(b[40+len(ext):], p.Payload)
	return b
}

// TCPPacket returns an IP packet carrying t from src to dst (ports taken
// from the AddrPorts).
func TCPPacket(src, dst netip.AddrPort, t TCP) IP {
	t.SrcPort, t.DstPort = src.Port(), dst.Port()
	return IP{Src: src.Addr(), Dst: dst.Addr(), Proto: ProtoTCP, Payload: t.Encode(src.Addr(), dst.Addr())}
}

// UDPPacket returns an IP packet carrying payload as one UDP datagram from
// src to dst.
func UDPPacket(src, dst netip.AddrPort, payload []byte) IP {
	u := UDP{SrcPort: src.Port(), DstPort: dst.Port(), Payload: payload}
	return IP{Src: src.Addr(), Dst: dst.Addr(), Proto: ProtoUDP, Payload: u.Encode(src.Addr(), dst.Addr())}
}

// ICMPEcho returns an IP packet carrying an ICMP (IPv4) or ICMPv6 echo
// request with the given identifier and sequence number.
func ICMPEcho(src, dst netip.Addr, id, seq uint16) IP {
	b := make([]byte, 8)
	if src.Is4() {
		b[0] = 8
		binary.BigEndian.PutUint16(b[4:6], id)
		binary.BigEndian.PutUint16(b[6:8], seq)
		binary.BigEndian.PutUint16(b[2:4], Checksum(b))
		return IP{Src: src, Dst: dst, Proto: ProtoICMP, Payload: b}
	}
	b[0] = 128
	binary.BigEndian.PutUint16(b[4:6], id)
	binary.BigEndian.PutUint16(b[6:8], seq)
	binary.BigEndian.PutUint16(b[2:4], Checksum(pseudoHeader(src, dst, ProtoICMPv6, len(b)), b))
	return IP{Src: src, Dst: dst, Proto: ProtoICMPv6, Payload: b}
}

// Frame is one captured frame: its link type, the captured bytes and the
// original length on the wire.
type Frame struct {
	LinkType capture.LinkType
	Data     []byte
	Length   int // original length (>= len(Data))
}

// Packet returns the frame as a captured packet with time t.
func (f Frame) Packet(t time.Time) *capture.Packet {
	return &capture.Packet{Time: t, LinkType: f.LinkType, Data: f.Data, Length: f.Length}
}

// Truncate returns the frame as a capture with snap length n would hold
// it: at most n captured bytes, the original length unchanged.
func (f Frame) Truncate(n int) Frame {
	if n < len(f.Data) {
		f.Data = f.Data[:n:n]
	}
	return f
}

// Encap describes a link layer around IP packets.
type Encap struct {
	// Type is one of capture.LinkEthernet, LinkLinuxSLL, LinkLinuxSLL2,
	// LinkRaw, LinkIPv4, LinkIPv6, LinkNull or LinkLoop. The zero value
	// is LinkNull.
	Type capture.LinkType
	// VLANs are the 802.1Q VLAN IDs of Ethernet tags, outermost first.
	// With more than one tag the outer ones use the 802.1ad TPID 0x88a8.
	VLANs []uint16
	// Pad pads Ethernet frames to the 60-byte minimum with zeros, as a
	// NIC does on the wire.
	Pad bool
	// NullBigEndian writes the LinkNull family in big-endian order (the
	// host order of a big-endian machine); the default is little-endian.
	NullBigEndian bool
	// AF6 is the IPv6 family value for LinkNull and LinkLoop; 0 means
	// AFInet6BSD (24).
	AF6 uint32
}

// Wrap frames an encoded IP packet. The IP version is read from the
// packet's first nibble.
func (e Encap) Wrap(ip []byte) Frame {
	v6 := len(ip) > 0 && ip[0]>>4 == 6
	et := EtherTypeIPv4
	if v6 {
		et = EtherTypeIPv6
	}
	af := AFInet
	if v6 {
		af = e.AF6
		if af == 0 {
			af = AFInet6BSD
		}
	}
	var b []byte
	switch e.Type {
	case capture.LinkEthernet:
		return e.Ether(et, ip)
	case capture.LinkLinuxSLL:
		b = SLL(et, ip)
	case capture.LinkLinuxSLL2:
		b = SLL2(et, ip)
	case capture.LinkRaw, capture.LinkIPv4, capture.LinkIPv6:
		b = append([]byte(nil), ip...)
	case capture.LinkNull:
		b = make([]byte, 4+len(ip))
		if e.NullBigEndian {
			binary.BigEndian.PutUint32(b, af)
		} else {
			binary.LittleEndian.PutUint32(b, af)
		}
		copy(b[4:], ip)
	case capture.LinkLoop:
		b = make([]byte, 4+len(ip))
		binary.BigEndian.PutUint32(b, af)
		copy(b[4:], ip)
	default:
		panic(fmt.Sprintf("pktbuild: link type %d not supported", e.Type))
	}
	return Frame{LinkType: e.Type, Data: b, Length: len(b)}
}

// Ether returns an Ethernet II frame of the given EtherType around payload,
// with e's VLAN tags and padding (e.Type is not consulted). It can frame
// non-IP payloads such as ARP.
func (e Encap) Ether(etherType uint16, payload []byte) Frame {
	b := make([]byte, 0, 14+4*len(e.VLANs)+len(payload)+etherMinLength)
	b = append(b, 0x02, 0, 0, 0, 0, 0x02) // destination: locally administered
	b = append(b, 0x02, 0, 0, 0, 0, 0x01) // source
	for i, id := range e.VLANs {
		tpid := EtherTypeVLAN
		if i < len(e.VLANs)-1 {
			tpid = EtherTypeQinQ
		}
		b = binary.BigEndian.AppendUint16(b, tpid)
		b = binary.BigEndian.AppendUint16(b, id&0x0fff)
	}
	b = binary.BigEndian.AppendUint16(b, etherType)
	b = append(b, payload...)
	if e.Pad {
		for len(b) < etherMinLength {
			b = append(b, 0)
		}
	}
	return Frame{LinkType: capture.LinkEthernet, Data: b, Length: len(b)}
}

// SLL returns a Linux cooked capture v1 header (16 bytes: packet type
// "sent by us", ARPHRD_ETHER, a 6-byte address, protocol) and payload.
func SLL(protocol uint16, payload []byte) []byte {
	b := make([]byte, 16+len(payload))
	binary.BigEndian.PutUint16(b[0:2], 4) // PACKET_OUTGOING
	binary.BigEndian.PutUint16(b[2:4], 1) // ARPHRD_ETHER
	binary.BigEndian.PutUint16(b[4:6], 6)
	copy(b[6:12], []byte{0x02, 0, 0, 0, 0, 0x01})
	binary.BigEndian.PutUint16(b[14:16], protocol)
	copy(b[16:], payload)
	return b
}

// SLL2 returns a Linux cooked capture v2 header (20 bytes: protocol,
// reserved, interface index, ARPHRD_ETHER, packet type, address length, an
// 8-byte address field) and payload.
func SLL2(protocol uint16, payload []byte) []byte {
	b := make([]byte, 20+len(payload))
	binary.BigEndian.PutUint16(b[0:2], protocol)
	binary.BigEndian.PutUint32(b[4:8], 1)  // interface index
	binary.BigEndian.PutUint16(b[8:10], 1) // ARPHRD_ETHER
	b[10] = 0                              // PACKET_HOST
	b[11] = 6
	copy(b[12:18], []byte{0x02, 0, 0, 0, 0, 0x01})
	copy(b[20:], payload)
	return b
}

// ARPRequest returns an ARP request (Ethernet/IPv4) asking for target,
// for framing with [Encap.Ether] and EtherTypeARP.
func ARPRequest(sender, target netip.Addr) []byte {
	b := make([]byte, 28)
	binary.BigEndian.PutUint16(b[0:2], 1)      // hardware type Ethernet
	binary.BigEndian.PutUint16(b[2:4], 0x0800) // protocol IPv4
	b[4], b[5] = 6, 4
	binary.BigEndian.PutUint16(b[6:8], 1) // request
	copy(b[8:14], []byte{0x02, 0, 0, 0, 0, 0x01})
	s, t := sender.As4(), target.As4()
	copy(b[14:18], s[:])
	copy(b[24:28], t[:])
	return b
}
