package filter

import (
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/pktbuild"
)

// TestMatcher: the filter runs on packets read from files, of each link
// type met (Ethernet, raw IP), with libpcap's meaning; a bad expression
// is refused at once, and a link type the compiler has no program for
// is an error, not a silent reject.
func TestMatcher(t *testing.T) {
	if _, err := NewMatcher("tcp port"); err == nil {
		t.Fatal(`"tcp port" accepted`)
	}
	m, err := NewMatcher("udp and port 3883")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(0, 0)
	eth := pktbuild.Encap{Type: capture.LinkEthernet}
	raw := pktbuild.Encap{Type: capture.LinkRaw}
	for _, c := range []struct {
		name string
		p    *capture.Packet
		want bool
	}{
		{"udp 3883, ethernet", eth.Wrap(udp("10.0.0.1:5000", "10.0.0.2:3883", "x")).Packet(now), true},
		{"udp 3883, raw ip", raw.Wrap(udp("10.0.0.2:3883", "10.0.0.1:5000", "x")).Packet(now), true},
		{"udp 3884", eth.Wrap(udp("10.0.0.1:5000", "10.0.0.2:3884", "x")).Packet(now), false},
		{"tcp 3883", eth.Wrap(tcp4("10.0.0.1:5000", "10.0.0.2:3883", pktbuild.ACK)).Packet(now), false},
	} {
		got, err := m.Match(c.p)
		if err != nil || got != c.want {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	if _, err := m.Match(&capture.Packet{LinkType: capture.LinkVRPNLog, Data: []byte("vrpn")}); err == nil {
		t.Errorf("a VRPN log entry matched without an error")
	}
}
