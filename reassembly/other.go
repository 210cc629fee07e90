package reassembly

import "strconv"

// NamedCount is how many packets of one kind that is not TCP, UDP or
// serial data an [Assembler] has seen.
type NamedCount struct {
	What    string // e.g. "ARP", "ICMPv6", "IP protocol 89", "EtherType 0x88cc", "link type 105"
	Packets int64
}

// maxOther is how many kinds [Stats].Other names; later kinds share one
// entry named otherRest.
const (
	maxOther  = 32
	otherRest = "other"
)

// otherKind is the layer at which a packet was found not to be TCP/UDP.
type otherKind uint8

const (
	otherLinkType       otherKind = iota + 1 // num: the link type
	otherFamily                              // num: BSD null/loop address family
	otherEtherType                           // num: the EtherType
	otherARP                                 //
	otherLLC                                 // 802.3 length field instead of an EtherType
	otherPPPoEDiscovery                      //
	otherIPProto                             // num: the IP protocol (IPv6: next header)
	otherPPP                                 // num: the PPP protocol
	otherMPLS                                // MPLS payload that is not IP
	otherGREVersion                          // num: the GRE version
	otherGRERouting                          // GRE with RFC 1701 source routing
	otherGREProto                            // num: the GRE protocol type
	otherNFLOGFamily                         // num: the NFLOG address family
	otherNFLOGNoPayload                      //
	otherDropped                             // dropped (capture.Packet.Dropped) with no header kept
	otherTooDeep                             // well-formed, but tunnels nested deeper than maxTunnels
)

// otherKey identifies a kind of packet that is not TCP/UDP; it is named
// only when first counted, so that decoding does not allocate.
type otherKey struct {
	kind otherKind
	num  uint32
}

func hex4(n uint32) string {
	s := strconv.FormatUint(uint64(n), 16)
	for len(s) < 4 {
		s = "0" + s
	}
	return "0x" + s
}

// String is the key's name in [Stats].Other.
func (k otherKey) String() string {
	n := strconv.FormatUint(uint64(k.num), 10)
	switch k.kind {
	case otherLinkType:
		return "link type " + n
	case otherFamily:
		return "address family " + n
	case otherEtherType:
		return "EtherType " + hex4(k.num)
	case otherARP:
		return "ARP"
	case otherLLC:
		return "802.3 LLC frames"
	case otherPPPoEDiscovery:
		return "PPPoE discovery"
	case otherIPProto:
		switch k.num {
		case ipProtoICMP:
			return "ICMP"
		case ipProtoIGMP:
			return "IGMP"
		case ipProtoICMPv6:
			return "ICMPv6"
		case ipProtoESP:
			return "ESP (IP protocol 50)"
		case ip6NoNext:
			return "IPv6 no next header"
		}
		return "IP protocol " + n
	case otherPPP:
		return "PPP protocol " + hex4(k.num)
	case otherMPLS:
		return "MPLS payload not IP"
	case otherGREVersion:
		return "GRE version " + n
	case otherGRERouting:
		return "GRE with source routing"
	case otherGREProto:
		return "GRE protocol " + hex4(k.num)
	case otherNFLOGFamily:
		return "NFLOG address family " + n
	case otherNFLOGNoPayload:
		return "NFLOG without payload"
	case otherDropped:
		return "dropped (not TCP/UDP, no headers kept)"
	case otherTooDeep:
		return "tunnels nested deeper than " + strconv.Itoa(maxTunnels)
	}
	return otherRest
}

// countOther counts one packet of kind k: a linear search of at most
// maxOther+1 keys, the common kinds (ARP, ICMP) coming first.
func (a *Assembler) countOther(k otherKey) {
	for i, x := range a.otherKeys {
		if x == k {
			a.other[i].Packets++
			return
		}
	}
	if len(a.otherKeys) < maxOther {
		a.otherKeys = append(a.otherKeys, k)
		a.other = append(a.other, NamedCount{What: k.String(), Packets: 1})
		return
	}
	if len(a.otherKeys) == maxOther {
		a.otherKeys = append(a.otherKeys, otherKey{}) // matches no real key
		a.other = append(a.other, NamedCount{What: otherRest})
	}
	a.other[maxOther].Packets++
}
