package reassembly

import (
	"encoding/binary"

	"dissect/capture"
)

// EtherTypes, IP protocol numbers and address families the decoder knows.
const (
	etherIPv4 = 0x0800
	etherIPv6 = 0x86dd
	etherVLAN = 0x8100 // 802.1Q
	etherQinQ = 0x88a8 // 802.1ad
	etherQ91  = 0x9100 // pre-standard QinQ

	ipProtoTCP = 6
	ipProtoUDP = 17

	ip6HopByHop = 0
	ip6Routing  = 43
	ip6Fragment = 44
	ip6AH       = 51
	ip6NoNext   = 59
	ip6DestOpts = 60

	afInet          = 2
	afInet6BSD      = 24
	afInet6FreeBSD  = 28
	afInet6Darwin   = 30
	maxVLANTags     = 8  // more stacked tags than this is malformed
	maxIP6ExtHeader = 16 // more extension headers than this is malformed
)

// outcome classifies a decoded packet.
type outcome uint8

const (
	outStream    outcome = iota // a TCP segment or UDP datagram to process
	outNonStream                // valid but not TCP/UDP (ARP, ICMP, other EtherTypes)
	outMalformed                // invalid or cut-short headers
	outFragment                 // a non-first IP fragment
)

// packet is a decoded TCP segment or UDP datagram.
type packet struct {
	v4       bool
	src, dst [16]byte // IPv4 addresses in the first 4 bytes
	proto    uint8    // ipProtoTCP or ipProtoUDP
	sport    uint16
	dport    uint16
	seq, ack uint32 // TCP
	flags    uint8  // TCP
	payload  []byte // captured payload bytes
	plen     int    // declared payload length (TCP: >= len(payload))
	trunc    bool   // UDP: the datagram was cut by the snap length
	frag     bool   // first fragment of a fragmented datagram
}

// TCP header flag bits.
const (
	flagFIN = 0x01
	flagSYN = 0x02
	flagRST = 0x04
	flagACK = 0x10
)

func be16(b []byte) uint16 { return binary.BigEndian.Uint16(b) }

// decode parses the link, network and transport headers of one captured
// frame into pk.
func decode(lt capture.LinkType, b []byte, pk *packet) outcome {
	switch lt {
	case capture.LinkEthernet:
		if len(b) < 14 {
			return outMalformed
		}
		return decodeEther(be16(b[12:14]), b[14:], pk)
	case capture.LinkLinuxSLL:
		if len(b) < 16 {
			return outMalformed
		}
		return decodeEther(be16(b[14:16]), b[16:], pk)
	case capture.LinkLinuxSLL2:
		if len(b) < 20 {
			return outMalformed
		}
		return decodeEther(be16(b[0:2]), b[20:], pk)
	case capture.LinkRaw:
		if len(b) == 0 {
			return outMalformed
		}
		switch b[0] >> 4 {
		case 4:
			return decodeIPv4(b, pk)
		case 6:
			return decodeIPv6(b, pk)
		}
		return outMalformed
	case capture.LinkIPv4:
		return decodeIPv4(b, pk)
	case capture.LinkIPv6:
		return decodeIPv6(b, pk)
	case capture.LinkNull:
		// The family is in the capturing host's byte order; the values
		// are small, so only one of the two readings can match.
		if len(b) < 4 {
			return outMalformed
		}
		le, be := binary.LittleEndian.Uint32(b), binary.BigEndian.Uint32(b)
		return decodeFamily(le, be, b[4:], pk)
	case capture.LinkLoop:
		if len(b) < 4 {
			return outMalformed
		}
		be := binary.BigEndian.Uint32(b)
		return decodeFamily(be, be, b[4:], pk)
	}
	return outNonStream
}

func decodeFamily(f1, f2 uint32, b []byte, pk *packet) outcome {
	switch {
	case f1 == afInet || f2 == afInet:
		return decodeIPv4(b, pk)
	case isAFInet6(f1) || isAFInet6(f2):
		return decodeIPv6(b, pk)
	}
	return outNonStream
}

func isAFInet6(f uint32) bool {
	return f == afInet6BSD || f == afInet6FreeBSD || f == afInet6Darwin
}

// decodeEther follows VLAN tags (possibly stacked) to the IP header.
func decodeEther(et uint16, b []byte, pk *packet) outcome {
	for tags := 0; et == etherVLAN || et == etherQinQ || et == etherQ91; tags++ {
		if tags == maxVLANTags || len(b) < 4 {
			return outMalformed
		}
		et = be16(b[2:4])
		b = b[4:]
	}
	switch et {
	case etherIPv4:
		return decodeIPv4(b, pk)
	case etherIPv6:
		return decodeIPv6(b, pk)
	}
	return outNonStream
}

func decodeIPv4(b []byte, pk *packet) outcome {
	if len(b) < 20 || b[0]>>4 != 4 {
		return outMalformed
	}
	ihl := int(b[0]&0x0f) * 4
	total := int(be16(b[2:4]))
	if ihl < 20 || total < ihl || len(b) < ihl {
		return outMalformed
	}
	if len(b) > total {
		b = b[:total] // link-layer padding
	}
	ff := be16(b[6:8])
	if ff&0x1fff != 0 {
		return outFragment
	}
	pk.frag = ff&0x2000 != 0
	pk.v4 = true
	pk.src = [16]byte{}
	pk.dst = [16]byte{}
	copy(pk.src[:4], b[12:16])
	copy(pk.dst[:4], b[16:20])
	return decodeTransport(b[9], b[ihl:], total-ihl, pk)
}

func decodeIPv6(b []byte, pk *packet) outcome {
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
	}
	pk.v4 = false
	copy(pk.src[:], b[8:24])
	copy(pk.dst[:], b[24:40])
	pk.frag = false
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
			if fo>>3 != 0 {
				return outFragment
			}
			if fo&1 != 0 {
				pk.frag = true
			}
			hl = 8
		case ip6NoNext:
			return outNonStream
		default:
			return decodeTransport(next, b[off:], end-off, pk)
		}
		if n == maxIP6ExtHeader || len(b) < off+hl {
			return outMalformed
		}
		next = b[off]
		off += hl
	}
}

// decodeTransport parses a TCP or UDP header; b holds the captured bytes
// of the IP payload and declared its length per the IP header.
func decodeTransport(proto uint8, b []byte, declared int, pk *packet) outcome {
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
		return outStream
	}
	return outNonStream
}
