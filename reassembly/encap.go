package reassembly

import "encoding/binary"

// Encapsulations: MPLS, PPPoE, PPP link types, Linux NFLOG, GRE, VXLAN and
// IP in IP. Each strips its header and hands the rest to the decoder of
// the inner protocol; a packet belongs to the flow of its innermost
// TCP/UDP header, as tshark's tcp.stream does.

const (
	pppIPv4 = 0x0021
	pppIPv6 = 0x0057

	greChecksum = 0x8000 // C: checksum and reserved1 present (RFC 2784)
	greRouting  = 0x4000 // R: source routing (RFC 1701, deprecated)
	greKey      = 0x2000 // K: key present (RFC 2890)
	greSeq      = 0x1000 // S: sequence number present (RFC 2890)

	vxlanPort  = 4789 // IANA, RFC 7348
	vxlanFlagI = 0x08 // a valid VNI is present

	nflogAFInet  = 2  // Linux AF_INET
	nflogAFInet6 = 10 // Linux AF_INET6
	nflogPayload = 9  // NFULA_PAYLOAD: the packet, from its network header
)

// enter counts one more tunnel; false when too many are nested. A packet
// nested deeper is not malformed: its callers count it as other, under
// its own name (otherTooDeep).
func (pk *packet) enter() bool {
	if pk.tunnels == maxTunnels {
		return false
	}
	pk.tunnels++
	return true
}

// mpls skips an MPLS label stack (RFC 3032: 4 bytes per entry, bit 8 of
// the third byte marks the bottom of the stack); IPv4 or IPv6 follow, told
// apart by their version nibble.
func (pk *packet) mpls(b []byte) outcome {
	for n := 0; ; n++ {
		if n == maxMPLSLabels || len(b) < 4 {
			return outMalformed
		}
		bottom := b[2]&1 != 0
		b = b[4:]
		if bottom {
			break
		}
	}
	if len(b) == 0 {
		return outMalformed
	}
	switch b[0] >> 4 {
	case 4:
		return pk.ipv4(b)
	case 6:
		return pk.ipv6(b)
	}
	return pk.otherIs(otherMPLS, 0) // a pseudowire, or a control word
}

// pppoe decodes a PPPoE session-stage packet (RFC 2516: version and type
// 0x11, code 0, session ID, length, then a PPP protocol field).
func (pk *packet) pppoe(b []byte) outcome {
	if len(b) < 6 || b[0] != 0x11 {
		return outMalformed
	}
	if n := 6 + int(be16(b[4:6])); len(b) > n {
		b = b[:n] // Ethernet padding
	}
	return pk.ppp(b[6:])
}

// ppp decodes a PPP frame: the optional HDLC address and control bytes
// FF 03, then the protocol field (RFC 1661: one byte when compressed,
// recognisable by its odd value).
func (pk *packet) ppp(b []byte) outcome {
	if len(b) >= 2 && b[0] == 0xff && b[1] == 0x03 {
		b = b[2:]
	}
	if len(b) == 0 {
		return outMalformed
	}
	var proto uint16
	if b[0]&1 != 0 {
		proto, b = uint16(b[0]), b[1:]
	} else {
		if len(b) < 2 {
			return outMalformed
		}
		proto, b = be16(b), b[2:]
	}
	switch proto {
	case pppIPv4:
		return pk.ipv4(b)
	case pppIPv6:
		return pk.ipv6(b)
	}
	return pk.otherIs(otherPPP, uint32(proto))
}

// pppHDLC decodes link type 50: PPP in HDLC-like framing (RFC 1662,
// starting FF 03), or Cisco HDLC (address 0x0f or 0x8f, control 0, then
// an EtherType).
func (pk *packet) pppHDLC(b []byte) outcome {
	if len(b) >= 4 && (b[0] == 0x0f || b[0] == 0x8f) && b[1] == 0 {
		return pk.ether(be16(b[2:4]), b[4:])
	}
	return pk.ppp(b)
}

// nflog decodes link type 239, Linux NFLOG: a 4-byte header (address
// family, version, resource ID) then TLVs of a 2-byte length (header
// included) and a 2-byte type, both in the capturing host's byte order,
// each padded to a multiple of 4 bytes. The NFULA_PAYLOAD TLV holds the
// packet from its network header.
func (pk *packet) nflog(b []byte) outcome {
	if len(b) < 4 {
		return outMalformed
	}
	fam := b[0]
	tlvs := b[4:]
	var bo binary.ByteOrder = binary.LittleEndian
	if len(tlvs) >= 4 && binary.BigEndian.Uint16(tlvs[2:4]) < binary.LittleEndian.Uint16(tlvs[2:4]) {
		// Types are small numbers: the reading that gives the smaller
		// one is the host's byte order.
		bo = binary.BigEndian
	}
	for len(tlvs) > 0 {
		if len(tlvs) < 4 {
			return outMalformed
		}
		n := int(bo.Uint16(tlvs[0:2]))
		if n < 4 {
			return outMalformed
		}
		if bo.Uint16(tlvs[2:4])&0x7fff == nflogPayload {
			v := tlvs[4:min(n, len(tlvs))]
			switch fam {
			case nflogAFInet:
				return pk.ipv4(v)
			case nflogAFInet6:
				return pk.ipv6(v)
			}
			return pk.otherIs(otherNFLOGFamily, uint32(fam))
		}
		step := (n + 3) &^ 3
		if step > len(tlvs) {
			return outMalformed // cut before the payload
		}
		tlvs = tlvs[step:]
	}
	return pk.otherIs(otherNFLOGNoPayload, 0)
}

// gre decodes a GRE header (RFC 2784 with the key and sequence number of
// RFC 2890), version 0 only; version 1 is PPTP's enhanced GRE.
func (pk *packet) gre(b []byte) outcome {
	if len(b) < 4 {
		return outMalformed
	}
	fl := be16(b[0:2])
	if v := fl & 7; v != 0 {
		return pk.otherIs(otherGREVersion, uint32(v))
	}
	if fl&greRouting != 0 {
		return pk.otherIs(otherGRERouting, 0)
	}
	hl := 4
	for _, f := range [...]uint16{greChecksum, greKey, greSeq} {
		if fl&f != 0 {
			hl += 4
		}
	}
	if len(b) < hl {
		return outMalformed
	}
	proto := be16(b[2:4])
	switch proto {
	case etherIPv4, etherIPv6, etherMPLS, etherMPLSMulti, etherTEB:
	default:
		return pk.otherIs(otherGREProto, uint32(proto))
	}
	if !pk.enter() {
		return pk.otherIs(otherTooDeep, 0)
	}
	b = b[hl:]
	if proto == etherTEB {
		if len(b) < 14 {
			return outMalformed
		}
		return pk.ether(be16(b[12:14]), b[14:])
	}
	return pk.ether(proto, b)
}

// isVXLAN reports whether a UDP payload starts with a VXLAN header (RFC
// 7348: 8 bytes, flags with the I bit set, VNI) followed by something.
func isVXLAN(b []byte) bool {
	return len(b) > 8 && b[0]&vxlanFlagI != 0
}

// vxlan decodes the Ethernet frame inside a VXLAN datagram (captured
// bytes b, from the VXLAN header).
func (pk *packet) vxlan(b []byte) outcome {
	if len(b) < 8+14 {
		return outMalformed
	}
	if !pk.enter() {
		return pk.otherIs(otherTooDeep, 0)
	}
	b = b[8:]
	return pk.ether(be16(b[12:14]), b[14:])
}
