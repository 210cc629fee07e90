package reassembly

import (
	"testing"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/pktbuild"
)

// TestHeaderLen checks HeaderLen against header sizes added up from the
// layouts: Ethernet 14 (+4 per VLAN tag), SLL 16, SLL2 20, null/loop 4,
// IPv4 20 (+options), IPv6 40 (+8 hop-by-hop), TCP 20 (+options), UDP 8.
func TestHeaderLen(t *testing.T) {
	tcp4 := pktbuild.TCPPacket(cli4, srv4, pktbuild.TCP{Seq: 1, Flags: pktbuild.ACK, Payload: []byte("payload")})
	tcp6 := pktbuild.TCPPacket(cli6, srv6, pktbuild.TCP{Seq: 1, Flags: pktbuild.ACK, Payload: []byte("payload")})
	tcp6.HopByHop = true
	udp4 := pktbuild.UDPPacket(cli4, srv4, []byte("dgram"))
	udp6 := pktbuild.UDPPacket(cli6, srv6, []byte("dgram"))
	opts := pktbuild.TCPPacket(cli4, srv4, pktbuild.TCP{Seq: 1, Flags: pktbuild.ACK, Options: []byte{2, 4, 5, 0xb4}, Payload: []byte("p")})
	opts.Options = []byte{0x94, 4, 0, 0}
	short := pktbuild.TCPPacket(cli4, srv4, pktbuild.TCP{Seq: 1, Flags: pktbuild.ACK, Payload: []byte("a")})
	frag := pktbuild.UDPPacket(cli4, srv4, make([]byte, 40))
	frag.FragOffset = 3
	first := pktbuild.UDPPacket(cli4, srv4, make([]byte, 40))
	first.MoreFragments = true
	first.Payload = first.Payload[:24]
	e := func(vlans ...uint16) pktbuild.Encap {
		return pktbuild.Encap{Type: capture.LinkEthernet, VLANs: vlans, Pad: true}
	}
	cases := []struct {
		name  string
		frame pktbuild.Frame
		want  int
	}{
		{"ethernet ipv4 tcp", e().Wrap(tcp4.Encode()), 14 + 20 + 20},
		{"ethernet vlan ipv4 tcp", e(5).Wrap(tcp4.Encode()), 14 + 4 + 20 + 20},
		{"ethernet qinq ipv6 hbh tcp", e(5, 6).Wrap(tcp6.Encode()), 14 + 8 + 40 + 8 + 20},
		{"ethernet ipv4 udp", e().Wrap(udp4.Encode()), 14 + 20 + 8},
		{"ethernet ipv6 udp", e().Wrap(udp6.Encode()), 14 + 40 + 8},
		{"padded tiny segment", e().Wrap(short.Encode()), 14 + 20 + 20},
		{"ip and tcp options", e().Wrap(opts.Encode()), 14 + 24 + 24},
		{"sll", pktbuild.Encap{Type: capture.LinkLinuxSLL}.Wrap(udp4.Encode()), 16 + 20 + 8},
		{"sll2", pktbuild.Encap{Type: capture.LinkLinuxSLL2}.Wrap(tcp6.Encode()), 20 + 48 + 20},
		{"raw", pktbuild.Encap{Type: capture.LinkRaw}.Wrap(tcp4.Encode()), 20 + 20},
		{"null", pktbuild.Encap{Type: capture.LinkNull}.Wrap(udp6.Encode()), 4 + 40 + 8},
		{"loop", pktbuild.Encap{Type: capture.LinkLoop}.Wrap(tcp4.Encode()), 4 + 20 + 20},
		{"snaplen cut in the payload", e().Wrap(tcp4.Encode()).Truncate(14 + 20 + 20 + 3), 14 + 20 + 20},
		{"udp cut in the payload", e().Wrap(udp4.Encode()).Truncate(14 + 20 + 8 + 1), 14 + 20 + 8},
		{"first fragment", e().Wrap(first.Encode()), 14 + 20 + 8},
		{"non-first fragment", e().Wrap(frag.Encode()), 14 + 20}, // the IP header: which bytes of which datagram
		{"cut in the tcp header", e().Wrap(tcp4.Encode()).Truncate(14 + 20 + 19), 0},
		{"arp", pktbuild.Encap{}.Ether(pktbuild.EtherTypeARP, pktbuild.ARPRequest(cli4.Addr(), srv4.Addr())), 0},
		{"icmp", e().Wrap(pktbuild.ICMPEcho(cli4.Addr(), srv4.Addr(), 1, 1).Encode()), 0},
		{"serial", pktbuild.Frame{LinkType: capture.LinkUser0, Data: []byte("serial bytes")}, 0},
		{"empty", pktbuild.Frame{LinkType: capture.LinkEthernet}, 0},
	}
	for _, c := range cases {
		if got := HeaderLen(c.frame.LinkType, c.frame.Data); got != c.want {
			t.Errorf("%s: HeaderLen %d, want %d", c.name, got, c.want)
		}
	}
	vx := vxlan(0x08, pktbuild.Encap{VLANs: []uint16{9}}.Ether(0x0800, tcp4.Encode()).Data)
	f := e().Wrap(vx)
	if got, want := HeaderLen(f.LinkType, f.Data), 14+20+8+8+18+20+20; got != want {
		t.Errorf("vxlan: HeaderLen %d, want %d", got, want)
	}
	if n := testing.AllocsPerRun(100, func() { HeaderLen(f.LinkType, f.Data) }); n != 0 {
		t.Errorf("HeaderLen allocates %v times", n)
	}
}
