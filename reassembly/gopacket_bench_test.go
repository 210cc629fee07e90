package reassembly

import (
	"net/netip"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/pktbuild"
)

// Link/IP/TCP-UDP decoding side by side on the same frames: HeaderLen (the
// capture goroutine's cost per packet when it must drop), decode (the
// Assembler's per-packet decode, without reassembly) and gopacket's
// DecodingLayerParser with preallocated layers (its fastest mode: no
// allocation per packet, no payload copy).

// benchFrames are the frames compared: 1448-byte TCP segments (a full
// Ethernet MSS) and a 200-byte UDP datagram.
func benchFrames() []struct {
	name  string
	frame pktbuild.Frame
} {
	payload := make([]byte, 1448)
	tcp4 := pktbuild.TCPPacket(cli4, srv4, pktbuild.TCP{Seq: 1, Ack: 1, Flags: pktbuild.ACK | pktbuild.PSH, Payload: payload})
	udp6 := pktbuild.UDPPacket(netip.MustParseAddrPort("[2001:db8::1]:5000"), netip.MustParseAddrPort("[2001:db8::2]:7681"), payload[:200])
	return []struct {
		name  string
		frame pktbuild.Frame
	}{
		{"eth-ipv4-tcp", pktbuild.Encap{Type: capture.LinkEthernet}.Wrap(tcp4.Encode())},
		{"eth-ipv6-udp", pktbuild.Encap{Type: capture.LinkEthernet}.Wrap(udp6.Encode())},
		{"eth-vlan-ipv4-tcp", pktbuild.Encap{Type: capture.LinkEthernet, VLANs: []uint16{10}}.Wrap(tcp4.Encode())},
	}
}

func BenchmarkLinkDecode(b *testing.B) {
	for _, f := range benchFrames() {
		data := f.frame.Data
		want := HeaderLen(f.frame.LinkType, data)
		b.Run(f.name+"/headerlen", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n = HeaderLen(capture.LinkEthernet, data)
			}
			if n != want || n == 0 {
				b.Fatalf("HeaderLen %d", n)
			}
		})
		b.Run(f.name+"/decode", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var pk packet
			for b.Loop() {
				pk = packet{}
				if decode(capture.LinkEthernet, data, &pk) != outStream {
					b.Fatal("not a stream packet")
				}
			}
			if cap(data)-cap(pk.payload) != want {
				b.Fatal("payload misplaced")
			}
		})
		b.Run(f.name+"/gopacket", func(b *testing.B) {
			var (
				eth   layers.Ethernet
				dot1q layers.Dot1Q
				ip4   layers.IPv4
				ip6   layers.IPv6
				tcp   layers.TCP
				udp   layers.UDP
				pl    gopacket.Payload
			)
			p := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &dot1q, &ip4, &ip6, &tcp, &udp, &pl)
			decoded := make([]gopacket.LayerType, 0, 8)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := p.DecodeLayers(data, &decoded); err != nil {
					b.Fatal(err)
				}
			}
			var hl int
			switch decoded[len(decoded)-2] {
			case layers.LayerTypeTCP:
				hl = len(data) - len(tcp.Payload)
			case layers.LayerTypeUDP:
				hl = len(data) - len(udp.Payload)
			}
			if hl != want {
				b.Fatalf("gopacket: headers %d bytes, want %d (%v)", hl, want, decoded)
			}
		})
	}
}
