package filter

import (
	"encoding/binary"
	"net/netip"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/pktbuild"
)

// The packet corpus shared by the verdict tests and the tcpdump
// comparison: IP packets of every kind the primitives look at, framed for
// each supported link type, plus Ethernet-only frames (ARP, RARP, VLAN
// tags, 802.3, truncated and runt frames).

// sample is one named frame.
type sample struct {
	name  string
	frame pktbuild.Frame
}

// ipSample is one named IP packet, before framing.
type ipSample struct {
	name string
	ip   []byte
	v6   bool
}

var (
	a4 = netip.MustParseAddr
	ap = netip.MustParseAddrPort
)

func tcp4(src, dst string, flags pktbuild.Flags) []byte {
	s, d := ap(src), ap(dst)
	return pktbuild.TCPPacket(s, d, pktbuild.TCP{Flags: flags, Seq: 1000}).Encode()
}

func udp(src, dst string, payload string) []byte {
	return pktbuild.UDPPacket(ap(src), ap(dst), []byte(payload)).Encode()
}

// sctp builds an SCTP packet: the 12-byte common header (ports,
// verification tag, checksum left 0) and one empty DATA-like chunk.
func sctp(src, dst string) []byte {
	s, d := ap(src), ap(dst)
	b := make([]byte, 16)
	binary.BigEndian.PutUint16(b[0:], s.Port())
	binary.BigEndian.PutUint16(b[2:], d.Port())
	binary.BigEndian.PutUint32(b[4:], 0x01020304)
	b[12] = 0 // chunk type DATA
	binary.BigEndian.PutUint16(b[14:], 4)
	return pktbuild.IP{Src: s.Addr(), Dst: d.Addr(), Proto: 132, Payload: b}.Encode()
}

// fakePorts is a transport payload whose first four bytes read as source
// and destination ports sp and dp: what a port test would see in a
// non-first fragment if it did not check the fragment offset.
func fakePorts(sp, dp uint16) []byte {
	b := make([]byte, 24)
	binary.BigEndian.PutUint16(b[0:], sp)
	binary.BigEndian.PutUint16(b[2:], dp)
	return b
}

// ipSamples are the IP packets of the corpus.
func ipSamples() []ipSample {
	var out []ipSample
	add := func(name string, b []byte) {
		out = append(out, ipSample{name: name, ip: b, v6: b[0]>>4 == 6})
	}
	add("tcp4 10.0.0.1:40000>10.0.0.2:3883 syn", tcp4("10.0.0.1:40000", "10.0.0.2:3883", pktbuild.SYN))
	add("tcp4 10.0.0.2:3883>10.0.0.1:40000 ack", tcp4("10.0.0.2:3883", "10.0.0.1:40000", pktbuild.ACK))
	add("tcp4 192.168.1.10:12345>1.2.3.4:80", tcp4("192.168.1.10:12345", "1.2.3.4:80", pktbuild.ACK|pktbuild.PSH))
	add("tcp4 1.2.3.4:443>192.168.1.20:50000", tcp4("1.2.3.4:443", "192.168.1.20:50000", pktbuild.ACK))
	add("tcp4 10.1.2.3:1023>10.255.0.1:1024", tcp4("10.1.2.3:1023", "10.255.0.1:1024", pktbuild.ACK))
	add("tcp4 192.168.2.1:2000>172.16.5.4:999", tcp4("192.168.2.1:2000", "172.16.5.4:999", pktbuild.ACK))
	add("tcp4 10.0.0.1:65535>10.0.0.3:0", tcp4("10.0.0.1:65535", "10.0.0.3:0", pktbuild.RST))
	add("tcp4 10.0.0.9:22>10.0.0.1:50022", tcp4("10.0.0.9:22", "10.0.0.1:50022", pktbuild.ACK))
	add("udp4 10.0.0.1:5353>10.0.0.2:53", udp("10.0.0.1:5353", "10.0.0.2:53", "query"))
	add("udp4 10.0.0.2:53>10.0.0.1:5353", udp("10.0.0.2:53", "10.0.0.1:5353", "answer"))
	add("udp4 172.16.5.4:3883>10.0.0.1:3884", udp("172.16.5.4:3883", "10.0.0.1:3884", "vrpn"))
	add("udp4 192.168.1.20:1500>192.168.1.10:2001", udp("192.168.1.20:1500", "192.168.1.10:2001", ""))
	add("udp4 10.0.0.2:443>1.2.3.4:80", udp("10.0.0.2:443", "1.2.3.4:80", "quic"))
	add("icmp4 10.0.0.1>1.2.3.4", pktbuild.ICMPEcho(a4("10.0.0.1"), a4("1.2.3.4"), 1, 1).Encode())
	add("icmp4 192.168.1.10>10.0.0.2", pktbuild.ICMPEcho(a4("192.168.1.10"), a4("10.0.0.2"), 2, 7).Encode())

	// IPv4 header options: the transport header starts after 24 or 32 bytes.
	opt := pktbuild.TCPPacket(ap("10.0.0.1:1000"), ap("10.0.0.2:80"), pktbuild.TCP{Flags: pktbuild.SYN})
	opt.Options = []byte{0x94, 0x04, 0, 0} // router alert
	add("tcp4 options ihl=6 10.0.0.1:1000>10.0.0.2:80", opt.Encode())
	uopt := pktbuild.UDPPacket(ap("10.0.0.2:53"), ap("192.168.1.10:2000"), []byte("x"))
	uopt.Options = []byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0}
	add("udp4 options ihl=8 10.0.0.2:53>192.168.1.10:2000", uopt.Encode())
	// Payload that looks like ports 80 and 53 where IHL=5 would put them.
	tricky := pktbuild.TCPPacket(ap("10.0.0.1:7000"), ap("10.0.0.2:7001"), pktbuild.TCP{Flags: pktbuild.ACK})
	tricky.Options = []byte{0x01, 0x01, 0x00, 0x50} // NOP NOP, then bytes 0x0050
	add("tcp4 options ihl=6 10.0.0.1:7000>10.0.0.2:7001 (80 in options)", tricky.Encode())

	// Fragments.
	f1 := pktbuild.TCPPacket(ap("10.0.0.1:40001"), ap("1.2.3.4:80"), pktbuild.TCP{Flags: pktbuild.ACK, Payload: make([]byte, 16)})
	f1.MoreFragments, f1.ID = true, 77
	add("tcp4 first fragment 10.0.0.1:40001>1.2.3.4:80", f1.Encode())
	add("tcp4 later fragment 10.0.0.1>1.2.3.4 (80 in data)", pktbuild.IP{Src: a4("10.0.0.1"), Dst: a4("1.2.3.4"), Proto: pktbuild.ProtoTCP,
		ID: 77, FragOffset: 185, Payload: fakePorts(80, 80)}.Encode())
	add("udp4 last fragment 10.0.0.2>10.0.0.1 (53 in data)", pktbuild.IP{Src: a4("10.0.0.2"), Dst: a4("10.0.0.1"), Proto: pktbuild.ProtoUDP,
		ID: 78, FragOffset: 3, MoreFragments: false, Payload: fakePorts(53, 5353)}.Encode())
	df := pktbuild.TCPPacket(ap("192.168.1.10:33000"), ap("1.2.3.4:80"), pktbuild.TCP{Flags: pktbuild.ACK})
	df.DontFragment = true
	add("tcp4 DF 192.168.1.10:33000>1.2.3.4:80", df.Encode())

	add("sctp4 10.0.0.1:5000>10.0.0.2:5001", sctp("10.0.0.1:5000", "10.0.0.2:5001"))
	add("other4 proto 47 10.0.0.1>10.0.0.2", pktbuild.IP{Src: a4("10.0.0.1"), Dst: a4("10.0.0.2"), Proto: 47, Payload: fakePorts(80, 53)}.Encode())

	add("tcp6 [2001:db8::1]:40000>[2001:db8::2]:3883", pktbuild.TCPPacket(ap("[2001:db8::1]:40000"), ap("[2001:db8::2]:3883"), pktbuild.TCP{Flags: pktbuild.SYN}).Encode())
	add("tcp6 [2001:db8::2]:443>[2001:db8:1::5]:51000", pktbuild.TCPPacket(ap("[2001:db8::2]:443"), ap("[2001:db8:1::5]:51000"), pktbuild.TCP{Flags: pktbuild.ACK}).Encode())
	add("tcp6 [2001:db9::1]:80>[2001:db8:ffff::1]:1024", pktbuild.TCPPacket(ap("[2001:db9::1]:80"), ap("[2001:db8:ffff::1]:1024"), pktbuild.TCP{Flags: pktbuild.ACK}).Encode())
	add("udp6 [fe80::1]:546>[2001:db8::1]:547", udp("[fe80::1]:546", "[2001:db8::1]:547", "dhcp"))
	add("udp6 [2001:db8::1]:53>[2001:db8::2]:33333", udp("[2001:db8::1]:53", "[2001:db8::2]:33333", "answer"))
	add("udp6 [::ffff:1.2.3.4]:3883>[::1]:3883", udp("[::ffff:1.2.3.4]:3883", "[::1]:3883", "mapped"))
	add("icmp6 2001:db8::1>2001:db8::2", pktbuild.ICMPEcho(a4("2001:db8::1"), a4("2001:db8::2"), 3, 1).Encode())
	hbh := pktbuild.TCPPacket(ap("[2001:db8::1]:40002"), ap("[2001:db8::2]:80"), pktbuild.TCP{Flags: pktbuild.SYN})
	hbh.HopByHop = true
	add("tcp6 hop-by-hop [2001:db8::1]:40002>[2001:db8::2]:80", hbh.Encode())
	fr6 := pktbuild.UDPPacket(ap("[2001:db8::2]:53"), ap("[2001:db8::1]:5353"), make([]byte, 32))
	fr6.MoreFragments, fr6.ID = true, 9
	add("udp6 first fragment [2001:db8::2]:53>[2001:db8::1]:5353", fr6.Encode())
	add("tcp6 later fragment 2001:db8::2>2001:db8::1 (80 in data)", pktbuild.IP{Src: a4("2001:db8::2"), Dst: a4("2001:db8::1"), Proto: pktbuild.ProtoTCP,
		ID: 10, FragOffset: 100, Payload: fakePorts(80, 80)}.Encode())
	add("sctp6 [2001:db8::1]:5000>[2001:db8::2]:80", sctp("[2001:db8::1]:5000", "[2001:db8::2]:80"))
	return out
}

// arp returns an ARP request from sender for target; rarp marks it as a
// RARP frame by its EtherType only (libpcap reads the same offsets).
func arpBody(sender, target string) []byte { return pktbuild.ARPRequest(a4(sender), a4(target)) }

// ethernetCorpus is the corpus framed in Ethernet II.
func ethernetCorpus() []sample {
	var out []sample
	eth := pktbuild.Encap{Type: capture.LinkEthernet}
	ips := ipSamples()
	ip := func(prefix string) []byte {
		for _, s := range ips {
			if len(s.name) >= len(prefix) && s.name[:len(prefix)] == prefix {
				return s.ip
			}
		}
		panic("no IP sample " + prefix)
	}
	for _, s := range ips {
		out = append(out, sample{"eth " + s.name, eth.Wrap(s.ip)})
	}
	add := func(name string, f pktbuild.Frame) { out = append(out, sample{name, f}) }
	add("eth arp 10.0.0.1 asks 10.0.0.2", eth.Ether(pktbuild.EtherTypeARP, arpBody("10.0.0.1", "10.0.0.2")))
	add("eth arp 192.168.1.10 asks 1.2.3.4", eth.Ether(pktbuild.EtherTypeARP, arpBody("192.168.1.10", "1.2.3.4")))
	add("eth rarp 10.0.0.3 asks 10.0.0.1", eth.Ether(0x8035, arpBody("10.0.0.3", "10.0.0.1")))
	add("eth padded udp4 10.0.0.1:5353>10.0.0.2:53", pktbuild.Encap{Type: capture.LinkEthernet, Pad: true}.Wrap(udp("10.0.0.1:5353", "10.0.0.2:53", "")))

	// VLAN tags (802.1Q; 802.1ad outside 802.1Q for two tags).
	vl := func(ids ...uint16) pktbuild.Encap { return pktbuild.Encap{Type: capture.LinkEthernet, VLANs: ids} }
	add("vlan100 tcp4 10.0.0.1:40000>10.0.0.2:3883", vl(100).Wrap(ip("tcp4 10.0.0.1:40000>")))
	add("vlan100 udp4 10.0.0.2:53>10.0.0.1:5353", vl(100).Wrap(udp("10.0.0.2:53", "10.0.0.1:5353", "a")))
	add("vlan200 udp4 10.0.0.1:5353>10.0.0.2:53", vl(200).Wrap(udp("10.0.0.1:5353", "10.0.0.2:53", "q")))
	add("vlan200 tcp4 192.168.1.10:12345>1.2.3.4:80", vl(200).Wrap(ip("tcp4 192.168.1.10:12345>")))
	add("vlan100 tcp6 [2001:db8::1]:40000>[2001:db8::2]:3883", vl(100).Wrap(pktbuild.TCPPacket(ap("[2001:db8::1]:40000"), ap("[2001:db8::2]:3883"), pktbuild.TCP{Flags: pktbuild.SYN}).Encode()))
	add("vlan300 arp 10.0.0.1 asks 10.0.0.2", vl(300).Ether(pktbuild.EtherTypeARP, arpBody("10.0.0.1", "10.0.0.2")))
	add("vlan0 icmp4 10.0.0.1>1.2.3.4", vl(0).Wrap(pktbuild.ICMPEcho(a4("10.0.0.1"), a4("1.2.3.4"), 1, 2).Encode()))
	add("vlan4095 udp6 [2001:db8::1]:53>[2001:db8::2]:33333", vl(4095).Wrap(udp("[2001:db8::1]:53", "[2001:db8::2]:33333", "a")))
	add("qinq10/200 tcp4 192.168.1.10:12345>1.2.3.4:80", vl(10, 200).Wrap(ip("tcp4 192.168.1.10:12345>")))
	add("qinq100/100 udp6 [fe80::1]:546>[2001:db8::1]:547", vl(100, 100).Wrap(udp("[fe80::1]:546", "[2001:db8::1]:547", "d")))
	add("qinq200/10 udp4 10.0.0.1:5353>10.0.0.2:53", vl(200, 10).Wrap(udp("10.0.0.1:5353", "10.0.0.2:53", "q")))
	add("vlan100 fragment tcp4 (80 in data)", vl(100).Wrap(pktbuild.IP{Src: a4("10.0.0.1"), Dst: a4("1.2.3.4"), Proto: pktbuild.ProtoTCP,
		ID: 5, FragOffset: 8, Payload: fakePorts(80, 80)}.Encode()))
	// The old 0x9100 QinQ TPID, which libpcap also counts as a tag.
	add("tpid9100 vlan7 tcp4 10.0.0.2:3883>10.0.0.1:40000", tagged(0x9100, 7, pktbuild.EtherTypeIPv4, ip("tcp4 10.0.0.2:3883>")))

	// Frames that are not IP or ARP.
	llc := make([]byte, 46)
	copy(llc, []byte{0x42, 0x42, 0x03, 0, 0, 0})
	add("eth 802.3 llc (length 0x0026)", eth.Ether(0x0026, llc))
	add("eth lldp 0x88cc", eth.Ether(0x88cc, []byte{0x02, 0x07, 0x04, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}))

	// Truncated captures: tests that read past the end reject the packet.
	add("eth trunc34 tcp4 192.168.1.10:12345>1.2.3.4:80", eth.Wrap(ip("tcp4 192.168.1.10:12345>")).Truncate(34))
	add("eth trunc36 tcp4 192.168.1.10:12345>1.2.3.4:80", eth.Wrap(ip("tcp4 192.168.1.10:12345>")).Truncate(36))
	add("eth trunc30 udp4 10.0.0.1:5353>10.0.0.2:53", eth.Wrap(ip("udp4 10.0.0.1:5353>")).Truncate(30))
	add("eth trunc56 tcp6 [2001:db8::1]:40000>[2001:db8::2]:3883", eth.Wrap(ip("tcp6 [2001:db8::1]:40000>")).Truncate(56))
	add("eth trunc40 tcp6 [2001:db8::1]:40000>[2001:db8::2]:3883", eth.Wrap(ip("tcp6 [2001:db8::1]:40000>")).Truncate(40))
	add("eth trunc13", eth.Wrap(ip("tcp4 10.0.0.1:40000>")).Truncate(13))
	add("vlan100 trunc20 tcp4", vl(100).Wrap(ip("tcp4 10.0.0.1:40000>")).Truncate(20))
	return out
}

// tagged frames payload behind one tag with the given TPID.
func tagged(tpid, vid, etherType uint16, payload []byte) pktbuild.Frame {
	b := []byte{0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01}
	b = binary.BigEndian.AppendUint16(b, tpid)
	b = binary.BigEndian.AppendUint16(b, vid)
	b = binary.BigEndian.AppendUint16(b, etherType)
	b = append(b, payload...)
	return pktbuild.Frame{LinkType: capture.LinkEthernet, Data: b, Length: len(b)}
}

// linkCorpus is the IP corpus framed for a non-Ethernet link type (only
// the matching IP version for LinkIPv4 and LinkIPv6), with ARP where the
// link can carry it and a few truncated frames.
func linkCorpus(lt capture.LinkType) []sample {
	var out []sample
	enc := pktbuild.Encap{Type: lt}
	ips := ipSamples()
	for _, s := range ips {
		if lt == capture.LinkIPv4 && s.v6 || lt == capture.LinkIPv6 && !s.v6 {
			continue
		}
		out = append(out, sample{s.name, enc.Wrap(s.ip)})
	}
	switch lt {
	case capture.LinkLinuxSLL:
		b := pktbuild.SLL(pktbuild.EtherTypeARP, arpBody("10.0.0.1", "10.0.0.2"))
		out = append(out, sample{"arp 10.0.0.1 asks 10.0.0.2", pktbuild.Frame{LinkType: lt, Data: b, Length: len(b)}})
	case capture.LinkLinuxSLL2:
		b := pktbuild.SLL2(pktbuild.EtherTypeARP, arpBody("10.0.0.1", "10.0.0.2"))
		out = append(out, sample{"arp 10.0.0.1 asks 10.0.0.2", pktbuild.Frame{LinkType: lt, Data: b, Length: len(b)}})
	}
	for _, s := range out[:3] {
		f := s.frame.Truncate(len(s.frame.Data) - 25)
		out = append(out, sample{"trunc " + s.name, f})
	}
	return out
}
