package reassembly

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"reflect"
	"testing"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/pktbuild"
)

// Frames around an encoded IP packet, built here byte by byte from the
// RFC layouts (the decoder's constants are not used).

var (
	tunA = netip.MustParseAddr("192.0.2.1") // outer (tunnel) addresses
	tunB = netip.MustParseAddr("192.0.2.2")
)

func be16b(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// ipEther is the EtherType of an IP packet, by its version nibble.
func ipEther(ip []byte) uint16 {
	if ip[0]>>4 == 6 {
		return 0x86dd
	}
	return 0x0800
}

// ether frames payload as Ethernet II with the given EtherType.
func ether(et uint16, payload []byte) []byte {
	return pktbuild.Encap{}.Ether(et, payload).Data
}

// mplsStack is an RFC 3032 label stack: label(20) TC(3) S(1) TTL(8).
func mplsStack(labels ...uint32) []byte {
	var b []byte
	for i, l := range labels {
		e := l<<12 | 64
		if i == len(labels)-1 {
			e |= 1 << 8
		}
		b = binary.BigEndian.AppendUint32(b, e)
	}
	return b
}

// pppoe is an RFC 2516 session packet: ver/type 0x11, code 0, session
// 0x1234, length, PPP protocol, payload.
func pppoe(proto uint16, payload []byte) []byte {
	return cat([]byte{0x11, 0}, be16b(0x1234), be16b(uint16(2+len(payload))), be16b(proto), payload)
}

// pppProto is the PPP protocol of an IP packet (RFC 1332, RFC 5072).
func pppProto(ip []byte) uint16 {
	if ip[0]>>4 == 6 {
		return 0x0057
	}
	return 0x0021
}

// gre is an RFC 2784/2890 header: flags and version, protocol, then the
// optional checksum+reserved, key and sequence number words.
func gre(flags, proto uint16, payload []byte) []byte {
	b := cat(be16b(flags), be16b(proto))
	for _, bit := range []uint16{0x8000, 0x2000, 0x1000} {
		if flags&bit != 0 {
			b = append(b, 0xaa, 0xbb, 0xcc, 0xdd)
		}
	}
	return append(b, payload...)
}

// outerIP wraps payload in an IPv4 packet tunA -> tunB of protocol proto.
func outerIP(proto uint8, payload []byte) []byte {
	return pktbuild.IP{Src: tunA, Dst: tunB, Proto: proto, Payload: payload}.Encode()
}

// vxlan is an RFC 7348 datagram to port 4789: flags (I = 0x08), 24
// reserved bits, VNI 0x000042, 8 reserved bits, then the inner frame.
func vxlan(flags byte, inner []byte) []byte {
	u := pktbuild.UDPPacket(netip.AddrPortFrom(tunA, 51234), netip.AddrPortFrom(tunB, 4789),
		cat([]byte{flags, 0, 0, 0, 0, 0, 0x42, 0}, inner))
	return u.Encode()
}

// nflogTLV is one NFLOG TLV in byte order bo: length (header included),
// type, value, padding to 4 bytes.
func nflogTLV(bo binary.AppendByteOrder, typ uint16, v []byte) []byte {
	b := bo.AppendUint16(nil, uint16(4+len(v)))
	b = bo.AppendUint16(b, typ)
	b = append(b, v...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// nflog is a LINKTYPE_NFLOG frame: family, version 0, resource ID 0 (big
// endian), NFULA_PACKET_HDR (1), NFULA_PREFIX (10) and NFULA_PAYLOAD (9).
func nflog(bo binary.AppendByteOrder, family byte, ip []byte) []byte {
	hdr := cat(be16b(ipEther(ip)), []byte{3, 0}) // hw_protocol, hook, pad
	return cat([]byte{family, 0, 0, 0}, nflogTLV(bo, 1, hdr), nflogTLV(bo, 10, []byte("pfx\x00x")), nflogTLV(bo, 9, ip))
}

// encapCase frames an IP packet one way.
type encapCase struct {
	name string
	lt   capture.LinkType
	wrap func(ip []byte) []byte
}

var encapCases = []encapCase{
	{"mpls", capture.LinkEthernet, func(ip []byte) []byte { return ether(0x8847, cat(mplsStack(16, 17, 18), ip)) }},
	{"mpls multicast one label", capture.LinkEthernet, func(ip []byte) []byte { return ether(0x8848, cat(mplsStack(3), ip)) }},
	{"vlan mpls", capture.LinkEthernet, func(ip []byte) []byte {
		return pktbuild.Encap{VLANs: []uint16{7}}.Ether(0x8847, cat(mplsStack(100), ip)).Data
	}},
	{"pppoe", capture.LinkEthernet, func(ip []byte) []byte { return ether(0x8864, pppoe(pppProto(ip), ip)) }},
	{"gre", capture.LinkEthernet, func(ip []byte) []byte { return ether(0x0800, outerIP(47, gre(0, ipEther(ip), ip))) }},
	{"gre key seq csum", capture.LinkRaw, func(ip []byte) []byte { return outerIP(47, gre(0xb000, ipEther(ip), ip)) }},
	{"gre teb", capture.LinkRaw, func(ip []byte) []byte { return outerIP(47, gre(0x2000, 0x6558, ether(ipEther(ip), ip))) }},
	{"gre mpls", capture.LinkRaw, func(ip []byte) []byte { return outerIP(47, gre(0, 0x8847, cat(mplsStack(5), ip))) }},
	{"gre in gre", capture.LinkRaw, func(ip []byte) []byte {
		return outerIP(47, gre(0, 0x0800, outerIP(47, gre(0, ipEther(ip), ip))))
	}},
	{"gre over ipv6", capture.LinkRaw, func(ip []byte) []byte {
		return pktbuild.IP{Src: cli6.Addr(), Dst: srv6.Addr(), Proto: 47, Payload: gre(0, ipEther(ip), ip)}.Encode()
	}},
	{"vxlan", capture.LinkEthernet, func(ip []byte) []byte { return ether(0x0800, vxlan(0x08, ether(ipEther(ip), ip))) }},
	{"vxlan inner vlan", capture.LinkRaw, func(ip []byte) []byte {
		return vxlan(0x08, pktbuild.Encap{VLANs: []uint16{9}}.Ether(ipEther(ip), ip).Data)
	}},
	{"ip in ip", capture.LinkRaw, func(ip []byte) []byte {
		if ip[0]>>4 == 6 {
			return outerIP(41, ip)
		}
		return outerIP(4, ip)
	}},
	{"nflog le", capture.LinkNFLOG, func(ip []byte) []byte {
		return nflog(binary.LittleEndian, map[bool]byte{true: 10, false: 2}[ip[0]>>4 == 6], ip)
	}},
	{"nflog be", capture.LinkNFLOG, func(ip []byte) []byte {
		return nflog(binary.BigEndian, map[bool]byte{true: 10, false: 2}[ip[0]>>4 == 6], ip)
	}},
	{"ppp ff03", capture.LinkPPP, func(ip []byte) []byte { return cat([]byte{0xff, 0x03}, be16b(pppProto(ip)), ip) }},
	{"ppp bare", capture.LinkPPP, func(ip []byte) []byte { return cat(be16b(pppProto(ip)), ip) }},
	{"ppp compressed protocol", capture.LinkPPP, func(ip []byte) []byte { return cat([]byte{byte(pppProto(ip))}, ip) }},
	{"ppp with dir", capture.LinkPPPWithDir, func(ip []byte) []byte { return cat([]byte{1, 0xff, 0x03}, be16b(pppProto(ip)), ip) }},
	{"ppp hdlc", capture.LinkPPPHDLC, func(ip []byte) []byte { return cat([]byte{0xff, 0x03}, be16b(pppProto(ip)), ip) }},
	{"cisco hdlc", capture.LinkPPPHDLC, func(ip []byte) []byte { return cat([]byte{0x0f, 0}, be16b(ipEther(ip)), ip) }},
}

// encapConversation returns the frames of conversation() (a TCP connection
// and a UDP exchange) wrapped by w, and the length of the headers before
// each one's payload, found from where the IP packet sits in the frame.
func encapConversation(w encapCase, cli, srv netip.AddrPort) (pkts []*capture.Packet, hdrs []int) {
	f := &feed{e: pktbuild.Encap{Type: capture.LinkRaw}}
	conversation(f, cli, srv, false)
	payload := []int{0, 0, 0, 5, 6, 0, 0, 0, 4, 4}
	for i, p := range f.pkts {
		d := w.wrap(p.Data)
		pkts = append(pkts, &capture.Packet{Time: p.Time, LinkType: w.lt, Data: d, Length: len(d)})
		hdrs = append(hdrs, bytes.Index(d, p.Data)+len(p.Data)-payload[i])
	}
	return pkts, hdrs
}

func TestEncapsulations(t *testing.T) {
	want := []string{
		"open 0", "data 0/0 hello", "data 0/1 world!", "close 0/0", "close 0/1",
		"open 1", "dgram 1/0 ping", "dgram 1/1 pong", "close 1/0", "close 1/1",
	}
	wantDropped := []string{
		"open 0", "gap 0/0 5", "gap 0/1 6", "close 0/0", "close 0/1",
		"open 1", "gap 1/0 4", "gap 1/1 4", "close 1/0", "close 1/1",
	}
	for _, w := range encapCases {
		for _, fam := range []struct {
			name     string
			cli, srv netip.AddrPort
		}{{"v4", cli4, srv4}, {"v6", cli6, srv6}} {
			t.Run(w.name+"/"+fam.name, func(t *testing.T) {
				pkts, hdrs := encapConversation(w, fam.cli, fam.srv)
				r, st := run(t, Config{}, pkts, true)
				eventsEqual(t, r.strings(), want)
				if len(r.streams) > 0 && r.streams[0].Addr != [2]netip.AddrPort{fam.cli, fam.srv} {
					t.Errorf("tcp addresses %v, want the inner ones", r.streams[0].Addr)
				}
				if st.Malformed != 0 || len(st.Other) != 0 || st.Streams != (StreamCounts{TCP: 1, UDP: 1}) {
					t.Errorf("stats %+v", st)
				}
				// HeaderLen is everything before the payload; cut there
				// and dropped, every payload becomes a gap.
				var cut []*capture.Packet
				for i, p := range pkts {
					if got, want := HeaderLen(p.LinkType, p.Data), hdrs[i]; got != want {
						t.Errorf("packet %d: HeaderLen %d, want %d", i, got, want)
					}
					cut = append(cut, dropped(p))
				}
				r, st = run(t, Config{}, cut, true)
				eventsEqual(t, r.strings(), wantDropped)
				if st.DroppedPackets != int64(len(pkts)) || st.DroppedTCPBytes != 11 || st.DroppedUDPBytes != 8 {
					t.Errorf("dropped stats %+v", st)
				}
			})
		}
	}
}

// dropped returns p as the capture loop keeps it when the decoding queue
// is full: cut at HeaderLen, marked Dropped, Length unchanged.
func dropped(p *capture.Packet) *capture.Packet {
	q := *p
	q.Data = p.Data[:HeaderLen(p.LinkType, p.Data)]
	q.Dropped = true
	return &q
}

func TestEncapsulationOther(t *testing.T) {
	tcp := pktbuild.TCPPacket(cli4, srv4, pktbuild.TCP{Seq: 1, Flags: pktbuild.ACK, Payload: []byte("x")}).Encode()
	nested := tcp
	for range 5 {
		nested = outerIP(47, gre(0, 0x0800, nested))
	}
	nested4 := tcp
	for range 4 {
		nested4 = outerIP(47, gre(0, 0x0800, nested4))
	}
	// Well-formed packets 5 tunnels deep, by IP in IP and by VXLAN: not
	// malformed, counted under their own name.
	ipip5 := tcp
	for range 5 {
		ipip5 = outerIP(4, ipip5)
	}
	vxlan5 := tcp
	for range 5 {
		vxlan5 = vxlan(0x08, ether(0x0800, vxlan5))
	}
	cases := []struct {
		name  string
		lt    capture.LinkType
		data  []byte
		other string // "" for malformed, "stream" for a TCP/UDP packet
	}{
		{"gre version 1", capture.LinkRaw, outerIP(47, gre(0x0001, 0x880b, tcp)), "GRE version 1"},
		{"gre erspan", capture.LinkRaw, outerIP(47, gre(0, 0x88be, tcp)), "GRE protocol 0x88be"},
		{"gre routing", capture.LinkRaw, outerIP(47, gre(0x4000, 0x0800, tcp)), "GRE with source routing"},
		{"gre cut in its header", capture.LinkRaw, outerIP(47, []byte{0x30, 0, 0x08, 0, 1, 2, 3, 4}), ""},
		{"gre 4 deep", capture.LinkRaw, nested4, "stream"},
		{"gre 5 deep", capture.LinkRaw, nested, "tunnels nested deeper than 4"},
		{"ip in ip 5 deep", capture.LinkRaw, ipip5, "tunnels nested deeper than 4"},
		{"vxlan 5 deep", capture.LinkRaw, vxlan5, "tunnels nested deeper than 4"},
		{"vxlan 5 deep cut short", capture.LinkRaw, vxlan(0x08, ether(0x0800, outerIP(4, outerIP(4, outerIP(4, vxlan(0x08, make([]byte, 10))))))), ""},
		{"mpls pseudowire", capture.LinkEthernet, ether(0x8847, cat(mplsStack(16), []byte{0, 0, 0, 0}, ether(0x0800, tcp))), "MPLS payload not IP"},
		{"mpls no bottom", capture.LinkEthernet, ether(0x8847, []byte{0, 1, 0, 64, 0, 1, 0, 64}), ""},
		{"mpls 17 labels", capture.LinkEthernet, ether(0x8847, cat(mplsStack(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17), tcp)), ""},
		{"pppoe discovery", capture.LinkEthernet, ether(0x8863, []byte{0x11, 0x09, 0, 0, 0, 0}), "PPPoE discovery"},
		{"pppoe lcp", capture.LinkEthernet, ether(0x8864, pppoe(0xc021, []byte{1, 1, 0, 4})), "PPP protocol 0xc021"},
		{"pppoe bad version", capture.LinkEthernet, ether(0x8864, append([]byte{0x21}, pppoe(0x0021, tcp)[1:]...)), ""},
		{"ppp ipcp", capture.LinkPPP, []byte{0xff, 0x03, 0x80, 0x21, 1, 1, 0, 4}, "PPP protocol 0x8021"},
		{"ppp empty", capture.LinkPPP, []byte{0xff, 0x03}, ""},
		{"ppp with dir empty", capture.LinkPPPWithDir, nil, ""},
		{"nflog bridge family", capture.LinkNFLOG, nflog(binary.LittleEndian, 7, tcp), "NFLOG address family 7"},
		{"nflog no payload", capture.LinkNFLOG, cat([]byte{2, 0, 0, 0}, nflogTLV(binary.LittleEndian, 10, []byte("p"))), "NFLOG without payload"},
		{"nflog tlv length 2", capture.LinkNFLOG, []byte{2, 0, 0, 0, 2, 0, 9, 0}, ""},
		{"nflog cut tlv", capture.LinkNFLOG, []byte{2, 0, 0, 0, 20, 0, 10, 0, 1, 2}, ""},
		{"nflog short", capture.LinkNFLOG, []byte{2, 0}, ""},
		{"vxlan without I flag is udp", capture.LinkRaw, vxlan(0x00, ether(0x0800, tcp)), "stream"},
		{"vxlan arp", capture.LinkRaw, vxlan(0x08, ether(0x0806, pktbuild.ARPRequest(tunA, tunB))), "ARP"},
		{"vxlan short inner", capture.LinkRaw, vxlan(0x08, make([]byte, 10)), ""},
		{"lldp", capture.LinkEthernet, ether(0x88cc, make([]byte, 20)), "EtherType 0x88cc"},
		{"ospf", capture.LinkRaw, outerIP(89, make([]byte, 20)), "IP protocol 89"},
		{"igmp", capture.LinkRaw, outerIP(2, make([]byte, 8)), "IGMP"},
		{"esp", capture.LinkRaw, outerIP(50, make([]byte, 8)), "ESP (IP protocol 50)"},
		{"icmpv6", capture.LinkEthernet, eth.Wrap(pktbuild.ICMPEcho(cli6.Addr(), srv6.Addr(), 1, 1).Encode()).Data, "ICMPv6"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, st := run(t, Config{}, []*capture.Packet{{Time: t0, LinkType: c.lt, Data: c.data, Length: len(c.data)}}, true)
			want := Stats{Packets: 1, Bytes: int64(len(c.data))}
			switch c.other {
			case "":
				want.Malformed = 1
			case "stream":
				if len(r.streams) != 1 || st.Malformed != 0 || len(st.Other) != 0 {
					t.Errorf("not one stream: %q, stats %+v", r.strings(), st)
				}
				return
			default:
				want.Other = []NamedCount{{c.other, 1}}
			}
			if len(r.events) != 0 {
				t.Errorf("events %q", r.strings())
			}
			if !reflect.DeepEqual(st, want) {
				t.Errorf("stats %+v, want %+v", st, want)
			}
			if n := HeaderLen(c.lt, c.data); n != 0 {
				t.Errorf("HeaderLen %d, want 0", n)
			}
		})
	}
}

func TestOtherBounded(t *testing.T) {
	// 40 unknown link types, the first twice: 32 named, then "other".
	var pkts []*capture.Packet
	for i := range 40 {
		pkts = append(pkts, &capture.Packet{Time: t0, LinkType: capture.LinkType(1000 + i), Data: []byte{1}})
	}
	pkts = append(pkts, pkts[0], pkts[39])
	_, st := run(t, Config{}, pkts, true)
	if len(st.Other) != 33 {
		t.Fatalf("%d entries: %+v", len(st.Other), st.Other)
	}
	if st.Other[0] != (NamedCount{"link type 1000", 2}) || st.Other[31] != (NamedCount{"link type 1031", 1}) ||
		st.Other[32] != (NamedCount{"other", 9}) {
		t.Errorf("entries %+v", st.Other)
	}
	// Stats is a copy: changing it changes nothing inside.
	r := newRecorder()
	a := New(r, Config{})
	a.Packet(pkts[0])
	s1 := a.Stats()
	s1.Other[0].Packets = 99
	if s2 := a.Stats(); s2.Other[0].Packets != 1 {
		t.Errorf("Stats shares its Other slice")
	}
}
