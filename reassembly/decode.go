package reassembly

import (
	"encoding/binary"

	"github.com/dissect-tools/dissect/capture"
)

// EtherTypes, IP protocol numbers, PPP protocols and address families the
// decoder knows.
const (
	etherIPv4      = 0x0800
	etherARP       = 0x0806
	etherTEB       = 0x6558 // transparent Ethernet bridging (GRE)
	etherIPv6      = 0x86dd
	etherVLAN      = 0x8100 // 802.1Q
	etherMPLS      = 0x8847
	etherMPLSMulti = 0x8848
	etherPPPoEDisc = 0x8863
	etherPPPoE     = 0x8864 // PPPoE session stage
	etherQinQ      = 0x88a8 // 802.1ad
	etherQ91       = 0x9100 // pre-standard QinQ

	ipProtoICMP   = 1
	ipProtoIGMP   = 2
	ipProtoIPIP   = 4
	ipProtoTCP    = 6
	ipProtoUDP    = 17
	ipProtoIPv6   = 41
	ipProtoGRE    = 47
	ipProtoESP    = 50
	ipProtoICMPv6 = 58

	ip6HopByHop = 0
	ip6Routing  = 43
	ip6Fragment = 44
	ip6AH       = 51
	ip6NoNext   = 59
	ip6DestOpts = 60

	afInet         = 2
	afInet6BSD     = 24
	afInet6FreeBSD = 28
	afInet6Darwin  = 30

	maxVLANTags     = 8  // more stacked tags than this is malformed
	maxIP6ExtHeader = 16 // more extension headers than this is malformed
	maxMPLSLabels   = 16 // a deeper label stack is malformed
	maxTunnels      = 4  // tunnels (GRE, VXLAN, IP in IP) inside one another; deeper is counted as other
)

// outcome classifies a decoded packet.
type outcome uint8

const (
	outStream    outcome = iota // a TCP segment or UDP datagram to process
	outOther                    // valid but not TCP/UDP: packet.other names it
	outMalformed                // invalid or cut-short headers
	outFragment                 // an IP fragment: packet.fr describes it
)

// packet is a decoded TCP segment or UDP datagram. For an encapsulated
// packet the fields are those of the innermost IP and transport headers.
type packet struct {
	v4       bool
	src, dst [16]byte // IPv4 addresses in the first 4 bytes
	proto    uint8    // ipProtoTCP or ipProtoUDP
	sport    uint16
	dport    uint16
	seq, ack uint32 // TCP
	flags    uint8  // TCP
	win      uint16 // TCP: the window field
	wscale   int8   // TCP SYN: the window scale option's shift (-1: none)
	payload  []byte // captured payload bytes
	plen     int    // declared payload length (TCP: >= len(payload))
	trunc    bool   // UDP: the datagram was cut by the snap length
	frag     bool   // the IP payload is the start of a datagram that was fragmented
	tunnels  int    // tunnels entered so far
	short    bool   // an IP header declares more bytes than were captured (snap-cut, or a lying length)
	tso      bool   // an IPv4 header with total length 0: the captured length was taken
	other    otherKey
	fr       fragInfo // outFragment
}

// fragInfo describes an IP fragment (RFC 791, RFC 8200 section 4.5); the
// packet's v4, src and dst are its addresses.
type fragInfo struct {
	id    uint32 // IPv4 identification (16 bits) or IPv6 fragment identification
	off   int    // byte offset of data in the datagram's payload
	n     int    // declared length of the fragment's data (>= len(data) when cut)
	more  bool   // MF / M flag: more fragments follow
	proto uint8  // protocol of the reassembled payload
	data  []byte // captured fragment data
}

// TCP header flag bits.
const (
	flagFIN = 0x01
	flagSYN = 0x02
	flagRST = 0x04
	flagACK = 0x10
)

func be16(b []byte) uint16 { return binary.BigEndian.Uint16(b) }

// HeaderLen returns how many leading bytes of a captured frame of link
// type lt reassembly needs to place it in its stream: the link layer, any
// encapsulation, the IP header(s) with IPv6 extension headers and the TCP
// or UDP header of the innermost packet. A frame cut there and marked
// [capture.Packet].Dropped is placed in the same stream, at the same
// sequence number, with the same declared payload length, as the whole
// frame. An IP fragment keeps its headers up to the fragment's data, and
// a first fragment also its TCP or UDP header when it holds it whole: a
// dropped fragment then still tells which bytes of which datagram were
// lost. It is 0 for frames that are neither (or cannot be decoded) and
// for serial reads ([capture.LinkUser0]). It does not allocate.
func HeaderLen(lt capture.LinkType, data []byte) int {
	var pk packet
	switch decode(lt, data, &pk) {
	case outStream:
	case outFragment:
		n := cap(data) - cap(pk.fr.data)
		if pk.fr.off == 0 {
			q := packet{frag: true, tunnels: pk.tunnels}
			if q.transport(pk.fr.proto, pk.fr.data, pk.fr.n) == outStream {
				n = cap(data) - cap(q.payload)
			}
		}
		return n
	default:
		return 0
	}
	// Every layer reslices from the front (b = b[n:]) or trims the end
	// (b = b[:n]), which keeps the capacity: the difference of the
	// capacities is the offset of the payload in data.
	return cap(data) - cap(pk.payload)
}

// decode parses the link, network and transport headers of one captured
// frame into pk (which must be zero).
func decode(lt capture.LinkType, b []byte, pk *packet) outcome {
	switch lt {
	case capture.LinkEthernet:
		if len(b) < 14 {
			return outMalformed
		}
		return pk.ether(be16(b[12:14]), b[14:])
	case capture.LinkLinuxSLL:
		if len(b) < 16 {
			return outMalformed
		}
		return pk.ether(be16(b[14:16]), b[16:])
	case capture.LinkLinuxSLL2:
		if len(b) < 20 {
			return outMalformed
		}
		return pk.ether(be16(b[0:2]), b[20:])
	case capture.LinkRaw:
		return pk.ip(b)
	case capture.LinkIPv4:
		return pk.ipv4(b)
	case capture.LinkIPv6:
		return pk.ipv6(b)
	case capture.LinkNull:
		// The family is in the capturing host's byte order; the values
		// are small, so only one of the two readings can match.
		if len(b) < 4 {
			return outMalformed
		}
		le, be := binary.LittleEndian.Uint32(b), binary.BigEndian.Uint32(b)
		return pk.family(le, be, b[4:])
	case capture.LinkLoop:
		if len(b) < 4 {
			return outMalformed
		}
		be := binary.BigEndian.Uint32(b)
		return pk.family(be, be, b[4:])
	case capture.LinkPPP:
		return pk.ppp(b)
	case capture.LinkPPPWithDir:
		if len(b) < 1 {
			return outMalformed
		}
		return pk.ppp(b[1:]) // byte 0: direction
	case capture.LinkPPPHDLC:
		return pk.pppHDLC(b)
	case capture.LinkNFLOG:
		return pk.nflog(b)
	}
	return pk.otherIs(otherLinkType, uint32(lt))
}

// otherIs records what a valid packet that is not TCP or UDP is.
func (pk *packet) otherIs(k otherKind, num uint32) outcome {
	pk.other = otherKey{kind: k, num: num}
	return outOther
}

func (pk *packet) family(f1, f2 uint32, b []byte) outcome {
	switch {
	case f1 == afInet || f2 == afInet:
		return pk.ipv4(b)
	case isAFInet6(f1) || isAFInet6(f2):
		return pk.ipv6(b)
	}
	return pk.otherIs(otherFamily, min(f1, f2))
}

func isAFInet6(f uint32) bool {
	return f == afInet6BSD || f == afInet6FreeBSD || f == afInet6Darwin
}

// ether decodes the payload of an Ethernet frame (or of anything else
// that names its payload by EtherType) of type et, following VLAN tags
// (possibly stacked).
func (pk *packet) ether(et uint16, b []byte) outcome {
	for tags := 0; et == etherVLAN || et == etherQinQ || et == etherQ91; tags++ {
		if tags == maxVLANTags || len(b) < 4 {
			return outMalformed
		}
		et = be16(b[2:4])
		b = b[4:]
	}
	switch et {
	case etherIPv4:
		return pk.ipv4(b)
	case etherIPv6:
		return pk.ipv6(b)
	case etherMPLS, etherMPLSMulti:
		return pk.mpls(b)
	case etherPPPoE:
		return pk.pppoe(b)
	case etherARP:
		return pk.otherIs(otherARP, 0)
	case etherPPPoEDisc:
		return pk.otherIs(otherPPPoEDiscovery, 0)
	}
	if et < 0x0600 {
		// An 802.3 length field (LLC frames: STP, CDP...), or a Linux
		// SLL pseudo-protocol below 0x0600.
		return pk.otherIs(otherLLC, 0)
	}
	return pk.otherIs(otherEtherType, uint32(et))
}

// ip decodes an IPv4 or IPv6 packet, by its version nibble.
func (pk *packet) ip(b []byte) outcome {
	if len(b) == 0 {
		return outMalformed
	}
	switch b[0] >> 4 {
	case 4:
		return pk.ipv4(b)
	case 6:
		return pk.ipv6(b)
	}
	return outMalformed
}

func (pk *packet) ipv4(b []byte) outcome {
	if len(b) < 20 || b[0]>>4 != 4 {
		return outMalformed
	}
	ihl := int(b[0]&0x0f) * 4
	total := int(be16(b[2:4]))
	if total == 0 && len(b) > ihl {
		// A segment given to the NIC whole (TCP segmentation offload,
		// BIG TCP) and captured on the sending host before it was cut
		// says no length; take what was captured, as for IPv6's payload
		// length 0 (and as tshark does). No padding can be told apart.
		total = len(b)
		pk.tso = true
	}
	if ihl < 20 || total < ihl || len(b) < ihl {
		return outMalformed
	}
	if len(b) > total {
		b = b[:total] // link-layer padding
	} else if len(b) < total {
		pk.short = true
	}
	pk.v4 = true
	pk.src = [16]byte{}
	pk.dst = [16]byte{}
	copy(pk.src[:4], b[12:16])
	copy(pk.dst[:4], b[16:20])
	if ff := be16(b[6:8]); ff&0x3fff != 0 {
		// MF set or a non-zero offset: a fragment.
		pk.fr = fragInfo{
			id:    uint32(be16(b[4:6])),
			off:   int(ff&0x1fff) * 8,
			n:     total - ihl,
			more:  ff&0x2000 != 0,
			proto: b[9],
			data:  b[ihl:],
		}
		return outFragment
	}
	return pk.transport(b[9], b[ihl:], total-ihl)
}

func (pk *packet) ipv6(b []byte) outcome {
	if len(b) < 40 || b[0]>>4 != 6 {
		return outMalformed
	}
	end := 40 + int(be16(b[4:6]))
	if end == 40 {
		// Payload length 0: a jumbogram or no payload; take what was
		// captured (no padding can be told apart).
		end = len(b)
	}
	if len(b) > end {
		b = b[:end]
	} else if len(b) < end {
		pk.short = true
	}
	pk.v4 = false
	copy(pk.src[:], b[8:24])
	copy(pk.dst[:], b[24:40])
	next := b[6]
	off := 40
	for n := 0; ; n++ {
		var hl int
		switch next {
		case ip6HopByHop, ip6Routing, ip6DestOpts:
			if len(b) < off+2 {
				return outMalformed
			}
			hl = (int(b[off+1]) + 1) * 8
		case ip6AH:
			if len(b) < off+2 {
				return outMalformed
			}
			hl = (int(b[off+1]) + 2) * 4
		case ip6Fragment:
			if len(b) < off+8 {
				return outMalformed
			}
			fo := be16(b[off+2 : off+4])
			if fo&0xfff9 != 0 {
				// Offset or M set: a fragment. Offset 0 with M clear
				// is an atomic fragment (RFC 6946), decoded as whole.
				pk.fr = fragInfo{
					id:    binary.BigEndian.Uint32(b[off+4 : off+8]),
					off:   int(fo>>3) * 8,
					n:     end - off - 8,
					more:  fo&1 != 0,
					proto: b[off],
					data:  b[off+8:],
				}
				return outFragment
			}
			hl = 8
		default:
			return pk.transport(next, b[off:], end-off)
		}
		if n == maxIP6ExtHeader || len(b) < off+hl {
			return outMalformed
		}
		next = b[off]
		off += hl
	}
}

// windowScale returns the shift of the window scale option (RFC 7323,
// kind 3) among TCP options opts, at most 14; -1 when there is none.
func windowScale(opts []byte) int8 {
	for len(opts) > 0 {
		switch opts[0] {
		case 0: // end of options
			return -1
		case 1: // no-operation
			opts = opts[1:]
			continue
		}
		if len(opts) < 2 || opts[1] < 2 || int(opts[1]) > len(opts) {
			return -1
		}
		if opts[0] == 3 && opts[1] == 3 {
			return int8(min(opts[2], 14))
		}
		opts = opts[opts[1]:]
	}
	return -1
}

// transport parses a TCP or UDP header, or enters a tunnel; b holds the
// captured bytes of the IP payload and declared its length per the IP
// header.
func (pk *packet) transport(proto uint8, b []byte, declared int) outcome {
	pk.proto = proto
	switch proto {
	case ipProtoTCP:
		if len(b) < 20 {
			return outMalformed
		}
		doff := int(b[12]>>4) * 4
		if doff < 20 || len(b) < doff || declared < doff {
			return outMalformed
		}
		pk.sport, pk.dport = be16(b[0:2]), be16(b[2:4])
		pk.seq = binary.BigEndian.Uint32(b[4:8])
		pk.ack = binary.BigEndian.Uint32(b[8:12])
		pk.flags = b[13]
		pk.win = be16(b[14:16])
		pk.wscale = -1
		if pk.flags&flagSYN != 0 {
			pk.wscale = windowScale(b[20:doff])
		}
		pk.payload = b[doff:]
		pk.plen = declared - doff
		pk.trunc = len(b) < declared
		return outStream
	case ipProtoUDP:
		if len(b) < 8 {
			return outMalformed
		}
		ulen := int(be16(b[4:6]))
		if ulen < 8 || (ulen > declared && !pk.frag) {
			// A first fragment declares the whole datagram.
			return outMalformed
		}
		pk.sport, pk.dport = be16(b[0:2]), be16(b[2:4])
		pk.flags, pk.seq, pk.ack = 0, 0, 0
		pk.plen = ulen - 8
		if len(b) < ulen {
			pk.trunc = true
			pk.payload = b[8:]
		} else {
			pk.trunc = false
			pk.payload = b[8:ulen]
		}
		if pk.dport == vxlanPort && isVXLAN(pk.payload) {
			return pk.vxlan(pk.payload)
		}
		return outStream
	case ipProtoGRE:
		return pk.gre(b)
	case ipProtoIPIP, ipProtoIPv6:
		if !pk.enter() {
			return pk.otherIs(otherTooDeep, 0)
		}
		if proto == ipProtoIPIP {
			return pk.ipv4(b)
		}
		return pk.ipv6(b)
	}
	return pk.otherIs(otherIPProto, uint32(proto))
}
