package filter

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/net/bpf"

	"github.com/dissect-tools/dissect/capture"
)

// EtherTypes and IP protocol numbers the primitives test.
const (
	etherIPv4   = 0x0800
	etherARP    = 0x0806
	etherRARP   = 0x8035
	etherIPv6   = 0x86dd
	ether8021Q  = 0x8100
	ether8021AD = 0x88a8
	ether9100   = 0x9100 // old QinQ TPID, also matched by libpcap

	ipprotoICMP   = 1
	ipprotoTCP    = 6
	ipprotoUDP    = 17
	ipprotoFrag6  = 44 // IPv6 fragment extension header
	ipprotoICMPv6 = 58
	ipprotoSCTP   = 132
)

// linkKind is how the link layer announces the network protocol.
type linkKind uint8

const (
	linkEtherType linkKind = iota // a 16-bit EtherType at typeOff
	linkRawIP                     // no header: the IP version nibble
	linkOnlyIPv4                  // every packet is IPv4
	linkOnlyIPv6                  // every packet is IPv6
)

// link describes a link type's framing.
type link struct {
	lt       capture.LinkType
	kind     linkKind
	typeOff  uint32 // offset of the EtherType (linkEtherType)
	netOff   uint32 // offset of the network header
	ethernet bool   // VLAN tags possible
}

func linkFor(lt capture.LinkType) (link, bool) {
	switch lt {
	case capture.LinkEthernet:
		return link{lt: lt, kind: linkEtherType, typeOff: 12, netOff: 14, ethernet: true}, true
	case capture.LinkLinuxSLL:
		return link{lt: lt, kind: linkEtherType, typeOff: 14, netOff: 16}, true
	case capture.LinkLinuxSLL2:
		return link{lt: lt, kind: linkEtherType, typeOff: 0, netOff: 20}, true
	case capture.LinkRaw:
		return link{lt: lt, kind: linkRawIP}, true
	case capture.LinkIPv4:
		return link{lt: lt, kind: linkOnlyIPv4}, true
	case capture.LinkIPv6:
		return link{lt: lt, kind: linkOnlyIPv6}, true
	}
	return link{}, false
}

// offsets are the current positions of the EtherType and of the network
// header; "vlan" moves both past a tag for the primitives after it.
type offsets struct {
	typ, net offset
}

func (l link) base() offsets {
	return offsets{typ: offset{k: l.typeOff}, net: offset{k: l.netOff}}
}

func absCmp(off offset, size int, op cmpOp, vals ...uint32) cmpNode {
	return cmpNode{ld: load{kind: ldAbs, size: size, off: off}, op: op, vals: vals}
}

// maskedEq is "the 32-bit word at off, masked, equals v": constant true
// when the mask is 0, as libpcap's optimizer makes it.
func maskedEq(off offset, v, mask uint32) node {
	if mask == 0 {
		return constNode(true)
	}
	n := absCmp(off, 4, opEq, v&mask)
	if mask != 0xffffffff {
		n.hasMask, n.mask = true, mask
	}
	return n
}

// linkProto is libpcap's gen_linktype for an EtherType.
func (p *parser) linkProto(etherType uint32) node {
	switch p.link.kind {
	case linkEtherType:
		return absCmp(p.off.typ, 2, opEq, etherType)
	case linkRawIP:
		var version uint32
		switch etherType {
		case etherIPv4:
			version = 0x40
		case etherIPv6:
			version = 0x60
		default:
			return constNode(false)
		}
		n := absCmp(p.off.net, 1, opEq, version)
		n.hasMask, n.mask = true, 0xf0
		return n
	case linkOnlyIPv4:
		return constNode(etherType == etherIPv4)
	default:
		return constNode(etherType == etherIPv6)
	}
}

// ipProto4 is "IPv4 with protocol v" (no fragment test, as libpcap).
func (p *parser) ipProto4(v uint32) node {
	return and2(p.linkProto(etherIPv4), absCmp(p.off.net.add(9), 1, opEq, v))
}

// ipProto6 is "IPv6 whose next header is v, directly or after a fragment
// header", as libpcap's gen_proto for ip6.
func (p *parser) ipProto6(v uint32) node {
	next := p.off.net.add(6)
	return and2(p.linkProto(etherIPv6), or2(absCmp(next, 1, opEq, v),
		and2(absCmp(next, 1, opEq, ipprotoFrag6), absCmp(p.off.net.add(40), 1, opEq, v))))
}

// protoAbbrev is a protocol name used alone, e.g. "tcp".
func (p *parser) protoAbbrev(pr qproto) node {
	switch pr {
	case qIP:
		return p.linkProto(etherIPv4)
	case qIP6:
		return p.linkProto(etherIPv6)
	case qARP:
		return p.linkProto(etherARP)
	case qRARP:
		return p.linkProto(etherRARP)
	case qTCP:
		return or2(p.ipProto4(ipprotoTCP), p.ipProto6(ipprotoTCP))
	case qUDP:
		return or2(p.ipProto4(ipprotoUDP), p.ipProto6(ipprotoUDP))
	case qSCTP:
		return or2(p.ipProto4(ipprotoSCTP), p.ipProto6(ipprotoSCTP))
	case qICMP:
		return p.ipProto4(ipprotoICMP)
	default: // qICMP6
		return p.ipProto6(ipprotoICMPv6)
	}
}

// direction combines a source and a destination test per the qualifier.
func direction(d qdir, src, dst node) node {
	switch d {
	case qSrc:
		return src
	case qDst:
		return dst
	case qAnd:
		return and2(src, dst)
	default:
		return or2(src, dst)
	}
}

// host4 is host/net for an IPv4 address and mask: IPv4 source/destination
// and, without a protocol qualifier, ARP and RARP sender/target too.
func (p *parser) host4(t token, q qual, addr, mask uint32) (node, error) {
	hostop := func(etherType uint32, srcOff, dstOff uint32) node {
		return and2(p.linkProto(etherType), direction(q.dir,
			maskedEq(p.off.net.add(srcOff), addr, mask), maskedEq(p.off.net.add(dstOff), addr, mask)))
	}
	switch q.proto {
	case qDefault:
		return or2(hostop(etherIPv4, 12, 16), or2(hostop(etherARP, 14, 24), hostop(etherRARP, 14, 24))), nil
	case qIP:
		return hostop(etherIPv4, 12, 16), nil
	case qARP:
		return hostop(etherARP, 14, 24), nil
	case qRARP:
		return hostop(etherRARP, 14, 24), nil
	case qIP6:
		return nil, p.errAt(t, "'ip6' modifier applied to an IPv4 address")
	}
	return nil, p.errAt(t, "'%s' modifier applied to %s", q.proto, q.addrWord())
}

// host6 is host/net for an IPv6 address and mask.
func (p *parser) host6(t token, q qual, addr, mask [16]byte) (node, error) {
	switch q.proto {
	case qDefault, qIP6:
	case qIP:
		return nil, p.errAt(t, "'ip' modifier applied to an IPv6 address")
	default:
		return nil, p.errAt(t, "'%s' modifier applied to an IPv6 address", q.proto)
	}
	words := func(off offset) node {
		var n node
		for i := 0; i < 16; i += 4 {
			m := binary.BigEndian.Uint32(mask[i:])
			if m == 0 {
				continue
			}
			n = and2(n, maskedEq(off.add(uint32(i)), binary.BigEndian.Uint32(addr[i:]), m))
		}
		if n == nil {
			return constNode(true)
		}
		return n
	}
	return and2(p.linkProto(etherIPv6), direction(q.dir, words(p.off.net.add(8)), words(p.off.net.add(24)))), nil
}

// portProtos returns the transport protocols a port qualifier selects.
func (p *parser) portProtos(t token, q qual) ([]uint32, error) {
	switch q.proto {
	case qDefault:
		return []uint32{ipprotoSCTP, ipprotoTCP, ipprotoUDP}, nil
	case qTCP:
		return []uint32{ipprotoTCP}, nil
	case qUDP:
		return []uint32{ipprotoUDP}, nil
	case qSCTP:
		return []uint32{ipprotoSCTP}, nil
	}
	return nil, p.errAt(t, "'%s' modifier applied to %s: only tcp, udp and sctp have ports", q.proto, q.addrWord())
}

// port is port/portrange lo..hi (lo == hi for a port): for IPv6 when the
// next header is directly the transport protocol, for IPv4 on the first
// (or only) fragment with the header length from IHL, as libpcap does.
func (p *parser) port(t token, q qual, lo, hi uint32) (node, error) {
	protos, err := p.portProtos(t, q)
	if err != nil {
		return nil, err
	}
	test := func(ld load) node {
		if lo == hi {
			return cmpNode{ld: ld, op: opEq, vals: []uint32{lo}}
		}
		return cmpNode{ld: ld, op: opRange, vals: []uint32{lo, hi}}
	}
	v6 := and2(p.linkProto(etherIPv6), and2(absCmp(p.off.net.add(6), 1, opEq, protos...),
		direction(q.dir,
			test(load{kind: ldAbs, size: 2, off: p.off.net.add(40)}),
			test(load{kind: ldAbs, size: 2, off: p.off.net.add(42)}))))
	notFrag := not1(absCmp(p.off.net.add(6), 2, opSet, 0x1fff))
	v4 := and2(p.linkProto(etherIPv4), and2(and2(absCmp(p.off.net.add(9), 1, opEq, protos...), notFrag),
		direction(q.dir,
			test(load{kind: ldTransport4, size: 2, off: p.off.net, k: 0}),
			test(load{kind: ldTransport4, size: 2, off: p.off.net, k: 2}))))
	return or2(v6, v4), nil
}

// proto is "[ip|ip6] proto N".
func (p *parser) proto(t token, q qual, v uint32) (node, error) {
	if v > 255 {
		return nil, p.errAt(t, "protocol number %d is greater than 255", v)
	}
	switch q.proto {
	case qDefault:
		return or2(p.ipProto4(v), p.ipProto6(v)), nil
	case qIP:
		return p.ipProto4(v), nil
	case qIP6:
		return p.ipProto6(v), nil
	}
	return nil, p.errAt(t, "'%s proto' is not supported: use ip proto or ip6 proto", q.proto)
}

// vlan is "vlan" or "vlan N"; it moves the offsets of the primitives that
// follow past the tag, as libpcap does.
func (p *parser) vlan(t token, vid uint32, hasVID bool) (node, error) {
	if !p.link.ethernet {
		return nil, p.errAt(t, "\"vlan\" needs Ethernet framing, not link type %d", p.link.lt)
	}
	if hasVID && vid > 4095 {
		return nil, p.errAt(t, "VLAN ID %d is greater than the maximum 4095", vid)
	}
	tpid := absCmp(p.off.typ, 2, opEq, ether8021Q, ether8021AD, ether9100)
	vidAt := func(off offset) node {
		if !hasVID {
			return nil
		}
		n := absCmp(off, 2, opEq, vid)
		n.hasMask, n.mask = true, 0x0fff
		return n
	}
	if p.socket && p.vlanDepth == 0 {
		// Tag in the metadata (offsets unchanged), or in the frame
		// (offsets + 4, held in M[0]).
		p.usesScratch = true
		present := cmpNode{ld: load{kind: ldExt, ext: bpf.ExtVLANTagPresent}, op: opEq, vals: []uint32{1}}
		var meta node = present
		if hasVID {
			meta = and2(meta, cmpNode{ld: load{kind: ldExt, ext: bpf.ExtVLANTag}, hasMask: true, mask: 0x0fff, op: opEq, vals: []uint32{vid}})
		}
		shift := effectNode{ins: []bpf.Instruction{
			bpf.LoadConstant{Dst: bpf.RegA, Val: 4},
			bpf.StoreScratch{Src: bpf.RegA, N: scratchOffset},
		}}
		// Only when no tag is in the metadata: a tag there with another
		// VID must not fall back to an inner tag in the frame.
		inFrame := and2(not1(present), and2(shift, and2(tpid, vidAt(p.off.net))))
		p.vlanDepth++
		p.off.typ.variable, p.off.net.variable = true, true
		return or2(meta, inFrame), nil
	}
	n := and2(tpid, vidAt(p.off.net))
	p.vlanDepth++
	p.off.typ = p.off.typ.add(4)
	p.off.net = p.off.net.add(4)
	return n, nil
}

// hostValue is a host or net value: an IPv4 number or dotted prefix
// promoted as libpcap does ("net 10" is 10.0.0.0/8, "host 10.1" is
// 10.1.0.0/16), or an IPv6 address.
func (p *parser) hostValue(t token, q qual) (node, error) {
	var v uint32
	bits := 32
	switch t.kind {
	case tHID6:
		a := t.addr.As16()
		var mask [16]byte
		for i := range mask {
			mask[i] = 0xff
		}
		return p.host6(t, q, a, mask)
	case tNum:
		v = t.num
	default:
		v, bits, _ = parseDotted(t.text)
	}
	mask := uint32(0xffffffff)
	if q.addr == qNet {
		for v != 0 && v&0xff000000 == 0 {
			v <<= 8
			mask <<= 8
		}
	} else {
		v <<= 32 - bits
		mask <<= 32 - bits
	}
	return p.host4(t, q, v, mask)
}

// netMask is "net A/len" or "net A mask M" for IPv4.
func (p *parser) netMask(t token, q qual, text string, masklen uint32, maskTok *token) (node, error) {
	n, bits, _ := parseDotted(t.text)
	if t.kind == tNum {
		n, bits = t.num, 32
	}
	n <<= 32 - bits
	var m uint32
	var shown string
	if maskTok != nil {
		mv, mbits := maskTok.num, 32
		if maskTok.kind == tHID {
			mv, mbits, _ = parseDotted(maskTok.text)
		}
		m = mv << (32 - mbits)
		shown = t.text + " mask " + maskTok.text
	} else {
		if masklen > 32 {
			return nil, p.errAt(t, "mask length %d is greater than 32", masklen)
		}
		if masklen > 0 {
			m = 0xffffffff << (32 - masklen)
		}
		shown = fmt.Sprintf("%s/%d", text, masklen)
	}
	if n&^m != 0 {
		return nil, p.errAt(t, "non-network bits set in %q", shown)
	}
	if q.addr != qNet {
		return nil, p.errAt(t, "mask syntax is for networks only: use \"net %s\"", shown)
	}
	return p.host4(t, q, n, m)
}

// net6 is "net A/len" (or an IPv6 host, len 128).
func (p *parser) net6(t token, q qual, masklen uint32) (node, error) {
	if masklen > 128 {
		return nil, p.errAt(t, "mask length %d is greater than 128", masklen)
	}
	var mask [16]byte
	for i := 0; i < int(masklen); i++ {
		mask[i/8] |= 0x80 >> (i % 8)
	}
	a := t.addr.As16()
	for i := range a {
		if a[i]&^mask[i] != 0 {
			return nil, p.errAt(t, "non-network bits set in \"%s/%d\"", t.text, masklen)
		}
	}
	if q.addr != qNet && masklen != 128 {
		return nil, p.errAt(t, "mask syntax is for networks only: use \"net %s/%d\"", t.text, masklen)
	}
	return p.host6(t, q, a, mask)
}
